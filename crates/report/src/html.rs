//! `report.html`: one self-contained page (inline CSS and SVG; no script, font or request).

use cqlbench_results::{EvidenceSecond, Intervals};

use crate::cells::{Campaign, Cell};
use crate::compare::{comparison_rows, COMPARISON_HEADINGS};
use crate::cost::{cost_heading, cost_headings, cost_rows, cost_tables, COST_NOTE};
use crate::markdown::{percentile_rows, COMPARISON_NOTE, GC_NOTE, PERCENTILE_HEADINGS, TAIL_NOTE};
use crate::probe_table::{probe_machine_line, probe_rows, PROBE_NOTE};
use crate::server::{
    gc_missing_lines, gc_rows, not_offered, server_figures, tail_rows, ServerFigures, GC_HEADINGS,
    TAIL_HEADINGS,
};
use crate::svg::{escape, line_chart, Chart, Series};
use crate::tables::{doubtful_footnotes, formatted_rows, Table};
use crate::tail::node_stops;

const STYLE: &str = "body{font-family:sans-serif;margin:2em;color:#222;max-width:1100px}\
table{border-collapse:collapse;margin:0.5em 0 1.5em}\
th,td{border:1px solid #bbb;padding:4px 10px;text-align:right}\
th:first-child,td:first-child{text-align:left}\
th{background:#eef}\
caption{font-weight:bold;text-align:left;padding:4px 0}\
.charts svg{margin:0 1em 1em 0;border:1px solid #ddd}\
p.note{color:#555;max-width:60em}\
div.wide{overflow-x:auto;max-width:100%}\
div.wide table{font-size:13px}";

fn seed_table_html(table: &Table) -> String {
    let mut out = format!(
        "<table class=\"seed-table\" data-title=\"{}\">\n<caption>{} ({})</caption>\n<tr><th>{}</th>",
        escape(&table.title),
        escape(&table.title),
        table.unit,
        escape(&table.title)
    );
    for column in &table.columns {
        out.push_str(&format!("<th>{}</th>", escape(column)));
    }
    out.push_str("</tr>\n");
    for (config, values) in formatted_rows(table) {
        out.push_str(&format!("<tr><td>{}</td>", escape(&config)));
        for value in values {
            out.push_str(&format!("<td>{}</td>", escape(&value)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></div>\n");
    out
}

/// A figure of each configuration against the numeric rates (mean over repeats).
fn per_rate_series(campaign: &Campaign, figure: impl Fn(&Cell) -> Option<f64>) -> Vec<Series> {
    campaign
        .configs
        .iter()
        .map(|config| {
            let points = campaign
                .rates
                .iter()
                .filter_map(|rate| {
                    let x = rate.ops_per_s()?;
                    let values: Vec<f64> = campaign
                        .cells_at(config, rate)
                        .filter_map(&figure)
                        .collect();
                    (!values.is_empty())
                        .then(|| (x, values.iter().sum::<f64>() / values.len() as f64))
                })
                .collect();
            Series {
                name: config.clone(),
                points,
                dashed: false,
            }
        })
        .filter(|s: &Series| !s.points.is_empty())
        .collect()
}

fn rate_charts(campaign: &Campaign) -> Vec<Chart> {
    let chart = |title: &str, y_label: &str, series: Vec<Series>| Chart {
        title: title.into(),
        x_label: "target rate (ops/s)".into(),
        y_label: y_label.into(),
        series,
        shaded: Vec::new(),
    };
    let mut achieved = per_rate_series(campaign, |c| Some(c.summary.achieved_rate));
    let targets: Vec<(f64, f64)> = campaign
        .rates
        .iter()
        .filter_map(|r| r.ops_per_s())
        .map(|r| (r, r))
        .collect();
    if !targets.is_empty() {
        achieved.push(Series {
            name: "offered".into(),
            points: targets,
            dashed: true,
        });
    }
    let per_op = crate::tables::op_titles(campaign)
        .into_iter()
        .map(|(op, title)| {
            chart(
                &format!("{title} p99 vs rate"),
                "p99 (ms)",
                per_rate_series(campaign, |c| c.summary.of_op(&op, |o| o.latency_ms.p99)),
            )
        });
    per_op
        .chain([
            chart(
                "p99.9 vs rate (worst operation type)",
                "p99.9 (ms)",
                per_rate_series(campaign, |c| c.summary.max_over_ops(|o| o.latency_ms.p999)),
            ),
            chart(
                "Offered vs achieved throughput",
                "successful ops/s",
                achieved,
            ),
        ])
        .filter(|c| !c.series.is_empty())
        .collect()
}

/// Corrected p99 and max of each second of a cell's measured phase, per operation (intervals.csv).
fn latency_series(cell: &Cell) -> Vec<Series> {
    let Ok(intervals) = Intervals::read(&cell.dir) else {
        return Vec::new();
    };
    let mut series: Vec<Series> = Vec::new();
    for row in intervals.rows.iter().filter(|r| r.measured && r.count > 0) {
        for (value, label, dashed) in [
            (row.latency_ms.p99, "p99", false),
            (row.latency_ms.max, "max", true),
        ] {
            let Some(y) = value else { continue };
            let name = format!("{} {label}", row.op);
            match series.iter_mut().find(|s| s.name == name) {
                Some(s) => s.points.push((row.elapsed_s, y)),
                None => series.push(Series {
                    name,
                    points: vec![(row.elapsed_s, y)],
                    dashed,
                }),
            }
        }
    }
    series
}

/// Each node's GC pauses within the measured phase, on the same time axis.
fn gc_pauses_shaded(cell: &Cell) -> Vec<(f64, f64)> {
    let duration = cell.summary.duration_s;
    node_stops(&cell.dir, cell.summary.measured_start_unix_s)
        .iter()
        .flat_map(|n| n.stops.iter())
        .filter(|s| s.gc && s.end > 0.0 && s.start < duration)
        .map(|s| (s.start.max(0.0), s.end.min(duration)))
        .collect()
}

/// A cell's corrected latency per second, with the nodes' GC pauses shaded.
fn latency_over_time(cell: &Cell) -> Option<Chart> {
    let series = latency_series(cell);
    if series.is_empty() {
        return None;
    }
    let shaded = gc_pauses_shaded(cell);
    Some(Chart {
        title: format!(
            "{} at {}{}: corrected latency per second{}",
            cell.config,
            cell.rate.label(),
            cell.repeat
                .as_ref()
                .map_or_else(String::new, |r| format!(" (repeat {r})")),
            if shaded.is_empty() {
                ""
            } else {
                ", GC pauses shaded"
            }
        ),
        x_label: "seconds into the measured phase".into(),
        y_label: "latency (ms)".into(),
        series,
        shaded,
    })
}

/// What the machine did during a cell's measured window (its validity evidence), as shares of all
/// cores per second, on the latency chart's time axis: shown beside it.
fn machine_over_time(cell: &Cell) -> Option<Chart> {
    let validity = cell.summary.validity.as_ref()?;
    let evidence = validity.evidence.as_ref()?;
    if evidence.per_second.is_empty() {
        return None;
    }
    let cores = f64::from(evidence.cores.max(1));
    let line = |name: String, dashed: bool, value: &dyn Fn(&EvidenceSecond) -> f64| Series {
        name,
        points: evidence
            .per_second
            .iter()
            .map(|s| (s.t, value(s) * 100.0))
            .collect(),
        dashed,
    };
    let mut series = vec![
        line("other processes".into(), false, &|s| s.other_cpu),
        line("steal".into(), true, &|s| s.steal),
        line("iowait".into(), true, &|s| s.iowait),
        line("client".into(), false, &|s| s.client_cpu_cores / cores),
    ];
    for (i, node) in evidence.nodes.iter().enumerate() {
        series.push(line(format!("node {}", node.address), false, &|s| {
            s.node_cpu_cores.get(i).copied().unwrap_or(0.0) / cores
        }));
    }
    Some(Chart {
        title: format!(
            "{} at {}{}: the machine during the window{}",
            cell.config,
            cell.rate.label(),
            cell.repeat
                .as_ref()
                .map_or_else(String::new, |r| format!(" (repeat {r})")),
            if validity.doubtful {
                format!(" — doubtful: {}", validity.reasons.join("; "))
            } else {
                " — quiet".to_string()
            }
        ),
        x_label: "seconds into the measured phase".into(),
        y_label: "% of all cores".into(),
        series,
        shaded: gc_pauses_shaded(cell),
    })
}

/// Seed 004's view: the stop remaining at an instant picked uniformly in time, at p99, p99.9 and
/// p99.99, one line per configuration, one chart per rate.
fn time_sampled_charts(campaign: &Campaign) -> Vec<Chart> {
    campaign
        .rates
        .iter()
        .map(|rate| {
            let series = campaign
                .configs
                .iter()
                .filter_map(|config| {
                    let figures: Vec<_> = campaign
                        .cells_at(config, rate)
                        .filter_map(server_figures)
                        .collect();
                    let worst = |f: fn(&ServerFigures) -> Option<f64>| {
                        figures.iter().filter_map(f).reduce(f64::max)
                    };
                    let points: Vec<(f64, f64)> = [
                        (2.0, worst(|f| f.time_sampled_p99_ms)),
                        (3.0, worst(|f| f.time_sampled_p999_ms)),
                        (4.0, worst(|f| f.time_sampled_p9999_ms)),
                    ]
                    .into_iter()
                    .filter_map(|(x, y)| Some((x, y?)))
                    .collect();
                    (!points.is_empty()).then(|| Series {
                        name: config.clone(),
                        points,
                        dashed: false,
                    })
                })
                .collect();
            Chart {
                title: format!("Stop time sampled uniformly in time, at {}", rate.label()),
                x_label: "nines: 2 = p99, 3 = p99.9, 4 = p99.99".into(),
                y_label: "stop remaining (ms)".into(),
                series,
                shaded: Vec::new(),
            }
        })
        .filter(|c| !c.series.is_empty())
        .collect()
}

fn plain_table(class: &str, headings: &[&str], rows: &[Vec<String>]) -> String {
    // Wide tables scroll on their own instead of stretching the page.
    let mut out = format!("<div class=\"wide\"><table class=\"{class}\">\n<tr>");
    for heading in headings {
        out.push_str(&format!("<th>{}</th>", escape(heading)));
    }
    out.push_str("</tr>\n");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            out.push_str(&format!("<td>{}</td>", escape(cell)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></div>\n");
    out
}

/// The page's head, title and opening note.
fn page_head(campaign: &Campaign) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>cqlbench report</title>\
         <style>{STYLE}</style></head><body>\n<h1>cqlbench report</h1>\n<p class=\"note\">{} — {} configuration(s) × {} \
         rate(s), {} cells. Latencies are of successful operations, corrected for coordinated omission \
         (completion − intended start). \"Average p99\" is the mean of the per-window p99s ({}), \
         \"Max p99\" their maximum, as in seed 000's tables.</p>\n<h2 id=\"seed-tables\">Seed tables</h2>\n",
        escape(&campaign.dir.display().to_string()),
        campaign.configs.len(),
        campaign.rates.len(),
        campaign.cells.len(),
        campaign.p99_windows()
    )
}

/// Latency and throughput against rate: the charts, or why there are none.
fn rate_section(campaign: &Campaign) -> String {
    let mut out =
        String::from("<h2 id=\"against-rate\">Latency and throughput against rate</h2>\n");
    let charts = rate_charts(campaign);
    if charts.is_empty() {
        // A sweep's cells are named (max, 0.35-of-max), not placed on a rate axis.
        out.push_str(
            "<p class=\"note\">No chart: no cell has a numeric rate (a sweep's cells are named: max, \
             fractions of max).</p>\n",
        );
    }
    out.push_str("<div class=\"charts\">\n");
    for chart in charts {
        out.push_str(&line_chart(&chart));
    }
    out.push_str("</div>\n");
    out
}

/// Every cell's percentiles.
fn percentile_section(campaign: &Campaign) -> String {
    let mut out = String::from(
        "<h2 id=\"percentiles\">Percentiles per cell</h2>\n<table class=\"percentiles\">\n<tr>",
    );
    for heading in PERCENTILE_HEADINGS {
        out.push_str(&format!("<th>{heading}</th>"));
    }
    out.push_str("</tr>\n");
    for row in percentile_rows(campaign) {
        out.push_str("<tr>");
        for cell in row.cells {
            out.push_str(&format!("<td>{}</td>", escape(&cell)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// A section with a note and a table, or nothing when the table has no rows.
fn table_section(
    id: &str,
    title: &str,
    note: &str,
    class: &str,
    headings: &[&str],
    rows: &[Vec<String>],
) -> String {
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "<h2 id=\"{id}\">{title}</h2>\n<p class=\"note\">{}</p>\n{}",
        escape(note),
        plain_table(class, headings, rows)
    )
}

/// The machine probe and the cost, from the campaign's environment record.
fn environment_sections(campaign: &Campaign) -> String {
    let mut out = String::new();
    let Some(environment) = &campaign.environment else {
        return out;
    };
    if let Some(probe) = &environment.probe {
        out.push_str(&format!(
            "<h2 id=\"probe\">Machine probe</h2>\n<p class=\"note\">{} {}</p>\n",
            escape(PROBE_NOTE),
            escape(&probe_machine_line(probe))
        ));
        out.push_str(&plain_table(
            "probe",
            &["figure", "value"],
            &probe_rows(probe),
        ));
        for note in &probe.notes {
            out.push_str(&format!("<p class=\"note\">{}</p>\n", escape(note)));
        }
    }
    if let Some(cost) = &environment.cost {
        out.push_str(&format!(
            "<h2 id=\"cost\">Cost</h2>\n<p class=\"note\">{}</p>\n",
            escape(COST_NOTE)
        ));
        let headings = cost_headings(cost);
        let headings: Vec<&str> = headings.iter().map(String::as_str).collect();
        for table in cost_tables(campaign, cost) {
            out.push_str(&format!(
                "<h3>{}</h3>\n<p class=\"note\">{}</p>\n",
                escape(&table.config),
                escape(&cost_heading(&table, cost))
            ));
            out.push_str(&plain_table("cost", &headings, &cost_rows(&table)));
        }
    }
    out
}

/// The servers' side (GC table and the time-sampled charts), the tail against GC, the comparisons.
fn server_sections(campaign: &Campaign) -> String {
    let gc = gc_rows(campaign);
    let mut out = table_section(
        "gc",
        "GC and server figures per cell",
        GC_NOTE,
        "gc-table",
        &GC_HEADINGS,
        &gc,
    );
    if !gc.is_empty() {
        for line in not_offered(campaign)
            .into_iter()
            .chain(gc_missing_lines(campaign))
        {
            out.push_str(&format!("<p class=\"note\">{}</p>\n", escape(&line)));
        }
        out.push_str("<div class=\"charts\">\n");
        for chart in time_sampled_charts(campaign) {
            out.push_str(&line_chart(&chart));
        }
        out.push_str("</div>\n");
    }
    out.push_str(&table_section(
        "tail-vs-gc",
        "Client tail against GC pauses",
        TAIL_NOTE,
        "tail-table",
        &TAIL_HEADINGS,
        &tail_rows(campaign),
    ));
    out.push_str(&table_section(
        "compare",
        "Is the difference real?",
        COMPARISON_NOTE,
        "compare-table",
        &COMPARISON_HEADINGS,
        &comparison_rows(campaign),
    ));
    out
}

/// Each cell's latency second by second.
fn over_time_section(campaign: &Campaign) -> String {
    let mut out = String::from(
        "<h2 id=\"over-time\">Latency over time, and the machine beside it</h2>\n<p class=\"note\">\
         Beside each cell's latency: what its validity evidence saw each second (/proc) — other \
         processes' CPU, steal and iowait, the client's and each local node's CPU, as shares of all \
         cores.</p>\n<div class=\"charts\">\n",
    );
    for config in &campaign.configs {
        for rate in &campaign.rates {
            for cell in campaign.cells_at(config, rate) {
                for chart in [latency_over_time(cell), machine_over_time(cell)]
                    .into_iter()
                    .flatten()
                {
                    out.push_str(&line_chart(&chart));
                }
            }
        }
    }
    out.push_str("</div>\n");
    out
}

/// The whole page.
pub fn html(campaign: &Campaign, tables: &[Table]) -> String {
    let mut out = page_head(campaign);
    for table in tables {
        out.push_str(&seed_table_html(table));
    }
    for line in doubtful_footnotes(campaign) {
        out.push_str(&format!(
            "<p class=\"note doubtful\">{}</p>\n",
            escape(&line)
        ));
    }
    out.push_str(&rate_section(campaign));
    out.push_str(&percentile_section(campaign));
    out.push_str(&server_sections(campaign));
    out.push_str(&over_time_section(campaign));
    out.push_str(&environment_sections(campaign));
    out.push_str("</body></html>\n");
    out
}
