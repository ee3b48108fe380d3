//! The report as Markdown (`report.md`) and as plain text for the terminal.

use crate::cells::Campaign;
use crate::compare::{comparison_rows, COMPARISON_HEADINGS};
use crate::cost::{cost_heading, cost_headings, cost_rows, cost_tables, COST_NOTE};
use crate::probe_table::{probe_machine_line, probe_rows, PROBE_NOTE};
use crate::server::{
    gc_missing_lines, gc_rows, not_offered, tail_rows, GC_HEADINGS, TAIL_HEADINGS,
};
use cqlbench_results::Percentiles;

use crate::tables::{doubtful_footnotes, format_figure, formatted_rows, Table};

/// The percentile columns of the per-cell table: the corrected latency's p50, p90, p99, p99.9, max.
fn percentiles(p: &Percentiles) -> [Option<f64>; 5] {
    [p.p50, p.p90, p.p99, p.p999, p.max]
}

/// One row of the per-cell percentile table.
pub(crate) struct PercentileRow {
    pub cells: Vec<String>,
}

/// Config, rate, repeat, operation, successful and failed counts, then the corrected percentiles of
/// the successful operations (ms; "–" without a successful operation).
pub(crate) fn percentile_rows(campaign: &Campaign) -> Vec<PercentileRow> {
    let mut rows = Vec::new();
    for config in &campaign.configs {
        for rate in &campaign.rates {
            for cell in campaign.cells_at(config, rate) {
                for (op, stats) in &cell.summary.ops {
                    let mut cells = vec![
                        config.clone(),
                        cell.rate_label(),
                        cell.repeat.clone().unwrap_or_default(),
                        op.clone(),
                        stats.count.to_string(),
                        stats.errors.total().to_string(),
                    ];
                    cells.extend(percentiles(&stats.latency_ms).map(format_figure));
                    rows.push(PercentileRow { cells });
                }
            }
        }
    }
    rows
}

pub(crate) const PERCENTILE_HEADINGS: [&str; 11] = [
    "config", "rate", "repeat", "op", "ok", "failed", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms",
    "max ms",
];

fn markdown_table(out: &mut String, headings: &[String], rows: &[Vec<String>]) {
    out.push_str(&format!("| {} |\n", headings.join(" | ")));
    let rule: Vec<&str> = headings
        .iter()
        .enumerate()
        .map(|(i, _)| if i == 0 { "---" } else { "---:" })
        .collect();
    out.push_str(&format!("| {} |\n", rule.join(" | ")));
    for row in rows {
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
}

fn seed_table_rows(table: &Table) -> (Vec<String>, Vec<Vec<String>>) {
    let mut headings = vec![format!("{} ({})", table.title, table.unit)];
    headings.extend(table.columns.iter().cloned());
    let rows = formatted_rows(table)
        .into_iter()
        .map(|(config, values)| {
            let mut row = vec![config];
            row.extend(values);
            row
        })
        .collect();
    (headings, rows)
}

/// `report.md`: the four seed tables, then every cell's percentiles.
pub fn markdown(campaign: &Campaign, tables: &[Table]) -> String {
    let mut out = format!(
        "# cqlbench report: {}\n\n{} configuration(s) × {} rate(s), {} cells. Latencies are corrected for \
         coordinated omission (completion − intended start) and are of successful operations; \
         \"Average p99\" is the mean of the per-window p99s ({}), \"Max p99\" their maximum (seed 000's \
         tables).\n",
        campaign.dir.display(),
        campaign.configs.len(),
        campaign.rates.len(),
        campaign.cells.len(),
        campaign.p99_windows()
    );
    for table in tables {
        out.push_str(&format!("\n## {}\n\n", table.title));
        let (headings, rows) = seed_table_rows(table);
        markdown_table(&mut out, &headings, &rows);
    }
    for line in doubtful_footnotes(campaign) {
        out.push_str(&format!("\n{line}\n"));
    }
    out.push_str("\n## Percentiles per cell\n\n");
    let headings: Vec<String> = PERCENTILE_HEADINGS.iter().map(|h| h.to_string()).collect();
    let rows: Vec<Vec<String>> = percentile_rows(campaign)
        .into_iter()
        .map(|r| r.cells)
        .collect();
    markdown_table(&mut out, &headings, &rows);
    let gc = gc_rows(campaign);
    if !gc.is_empty() {
        out.push_str(&format!(
            "\n## GC and server figures per cell\n\n{GC_NOTE}\n\n"
        ));
        markdown_table(&mut out, &strings(&GC_HEADINGS), &gc);
        for line in not_offered(campaign)
            .into_iter()
            .chain(gc_missing_lines(campaign))
        {
            out.push_str(&format!("\n{line}\n"));
        }
    }
    let tail = tail_rows(campaign);
    if !tail.is_empty() {
        out.push_str(&format!(
            "\n## Client tail against GC pauses\n\n{TAIL_NOTE}\n\n"
        ));
        markdown_table(&mut out, &strings(&TAIL_HEADINGS), &tail);
    }
    let comparisons = comparison_rows(campaign);
    if !comparisons.is_empty() {
        out.push_str(&format!(
            "\n## Is the difference real?\n\n{COMPARISON_NOTE}\n\n"
        ));
        markdown_table(&mut out, &strings(&COMPARISON_HEADINGS), &comparisons);
    }
    environment_sections(campaign, &mut out);
    out
}

/// The machine probe and the cost, from the campaign's environment record.
fn environment_sections(campaign: &Campaign, out: &mut String) {
    let Some(environment) = &campaign.environment else {
        return;
    };
    if let Some(probe) = &environment.probe {
        out.push_str(&format!(
            "\n## Machine probe\n\n{PROBE_NOTE}\n\n{}\n\n",
            probe_machine_line(probe)
        ));
        markdown_table(out, &strings(&["figure", "value"]), &probe_rows(probe));
        for note in &probe.notes {
            out.push_str(&format!("\nNote: {note}\n"));
        }
    }
    if let Some(cost) = &environment.cost {
        out.push_str(&format!("\n## Cost\n\n{COST_NOTE}\n"));
        for table in cost_tables(campaign, cost) {
            out.push_str(&format!(
                "\n### {}\n\n{}\n\n",
                table.config,
                cost_heading(&table, cost)
            ));
            markdown_table(out, &cost_headings(cost), &cost_rows(&table));
        }
    }
}

pub(crate) const COMPARISON_NOTE: &str = "Each configuration against the first (the baseline) at \
the same rate, and each repeat against the configuration's first, as `cqlbench compare A B` does: \
throughput by Welch's t-test on per-second values with the sample size adjusted for \
autocorrelation, percentiles by a moving-block bootstrap over the one-second histograms; \
\"significant\" when the 95 % interval of B − A excludes 0.";

fn strings(headings: &[&str]) -> Vec<String> {
    headings.iter().map(|h| h.to_string()).collect()
}

pub(crate) const GC_NOTE: &str = "From each node's GC log over exactly the cell's measured window, \
and its process and GC-thread CPU from /proc. Over several nodes, counts and times add up, the \
maxima and time-sampled stops are the worst node's, shares are averaged. Stopped time is the whole \
time at safepoints, time to safepoint (TTSP) included; the time-sampled percentiles are seed 004's: \
the stop remaining at an instant picked uniformly in time. CPU per operation is the nodes' CPU over \
the cell's successful operations; write amplification is compacted / flushed bytes in the window.";

pub(crate) const TAIL_NOTE: &str = "Successful operations slower than their type's p99 (p99.9) in the \
cell, from the client's slow-ops.csv, lined up on the wall clock with every node's stops from its GC \
log. An operation overlaps a pause when its time from intended start to completion meets a GC pause \
(or a GC safepoint) on any node; \"any stop\" also counts non-GC safepoints. \"Tail time inside GC \
pauses\" is the part of those operations' latency spent while a node was in a GC pause; the last \
column is how much of the cell a GC pause covered, what chance alone would give. A stop no GC log \
sees (a frozen process, the network, the disk) is not attributed.";

/// The four seed tables as aligned plain text, then which windows their p99s were taken over (a plan
/// may set `--p99-window`, and the window is part of the figure).
pub fn terminal(campaign: &Campaign, tables: &[Table]) -> String {
    let mut out = String::new();
    for table in tables {
        let (headings, rows) = seed_table_rows(table);
        let widths: Vec<usize> = (0..headings.len())
            .map(|i| {
                rows.iter()
                    .map(|r| r[i].chars().count())
                    .chain([headings[i].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| -> String {
            let padded: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    if i == 0 {
                        format!("{c:<w$}", w = widths[i])
                    } else {
                        format!("{c:>w$}", w = widths[i])
                    }
                })
                .collect();
            padded.join("  ").trim_end().to_string() + "\n"
        };
        out.push_str(&line(&headings));
        for row in &rows {
            out.push_str(&line(row));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "Average p99: the mean of the per-window p99s ({}); Max p99: their maximum.\n\n",
        campaign.p99_windows()
    ));
    for line in doubtful_footnotes(campaign) {
        out.push_str(&format!("{line}\n"));
    }
    out
}
