//! `report.html`: one self-contained page (inline CSS and SVG; no script, font or request).

use crate::cells::{Campaign, Cell};
use crate::markdown::{percentile_rows, PERCENTILE_HEADINGS};
use crate::svg::{escape, line_chart, Chart, Series};
use crate::tables::{format_value, Table};

const STYLE: &str = "body{font-family:sans-serif;margin:2em;color:#222;max-width:1100px}\
table{border-collapse:collapse;margin:0.5em 0 1.5em}\
th,td{border:1px solid #bbb;padding:4px 10px;text-align:right}\
th:first-child,td:first-child{text-align:left}\
th{background:#eef}\
caption{font-weight:bold;text-align:left;padding:4px 0}\
.charts svg{margin:0 1em 1em 0;border:1px solid #ddd}\
p.note{color:#555;max-width:60em}";

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
    for (config, values) in &table.rows {
        out.push_str(&format!("<tr><td>{}</td>", escape(config)));
        for value in values {
            out.push_str(&format!("<td>{}</td>", format_value(*value)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
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

fn max_over_ops(cell: &Cell, path: &str) -> Option<f64> {
    cell.op_types()
        .iter()
        .filter_map(|op| cell.number(&format!("ops.{op}.{path}")))
        .reduce(f64::max)
}

fn rate_charts(campaign: &Campaign) -> Vec<Chart> {
    let chart = |title: &str, y_label: &str, series: Vec<Series>| Chart {
        title: title.into(),
        x_label: "target rate (ops/s)".into(),
        y_label: y_label.into(),
        series,
        shaded: Vec::new(),
    };
    let mut achieved = per_rate_series(campaign, |c| c.number("achieved_rate"));
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
    vec![
        chart(
            "Writes p99 vs rate",
            "p99 (ms)",
            per_rate_series(campaign, |c| c.number("ops.write.latency_ms.p99")),
        ),
        chart(
            "Reads p99 vs rate",
            "p99 (ms)",
            per_rate_series(campaign, |c| c.number("ops.read.latency_ms.p99")),
        ),
        chart(
            "p99.9 vs rate (worst operation type)",
            "p99.9 (ms)",
            per_rate_series(campaign, |c| max_over_ops(c, "latency_ms.p999")),
        ),
        chart(
            "Offered vs achieved throughput",
            "successful ops/s",
            achieved,
        ),
    ]
    .into_iter()
    .filter(|c| !c.series.is_empty())
    .collect()
}

/// Corrected p99 of each second of a cell's measured phase, per operation type (intervals.csv).
fn latency_over_time(cell: &Cell) -> Option<Chart> {
    let csv = std::fs::read_to_string(cell.dir.join("intervals.csv")).ok()?;
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next()?.split(',').collect();
    let column = |name: &str| header.iter().position(|c| *c == name);
    let (elapsed, phase, op, count, p99) = (
        column("elapsed_s")?,
        column("phase")?,
        column("op")?,
        column("count")?,
        column("p99_ms")?,
    );
    let mut series: Vec<Series> = Vec::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        if f.get(phase) != Some(&"measured") || f.get(count).is_none_or(|c| *c == "0") {
            continue;
        }
        let (Some(x), Some(y)) = (
            f.get(elapsed).and_then(|v| v.parse().ok()),
            f.get(p99).and_then(|v| v.parse().ok()),
        ) else {
            continue;
        };
        let name = format!("{} p99", f.get(op)?);
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push((x, y)),
            None => series.push(Series {
                name,
                points: vec![(x, y)],
                dashed: false,
            }),
        }
    }
    (!series.is_empty()).then(|| Chart {
        title: format!(
            "{} at {}{}: corrected p99 per second",
            cell.config,
            cell.rate.label(),
            cell.repeat
                .as_ref()
                .map_or_else(String::new, |r| format!(" (repeat {r})"))
        ),
        x_label: "seconds into the measured phase".into(),
        y_label: "p99 (ms)".into(),
        series,
        shaded: Vec::new(),
    })
}

/// The whole page.
pub fn html(campaign: &Campaign, tables: &[Table]) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>cqlbench report</title>\
         <style>{STYLE}</style></head><body>\n<h1>cqlbench report</h1>\n<p class=\"note\">{} — {} configurations × {} \
         rates, {} cells. Latencies are of successful operations, corrected for coordinated omission \
         (completion − intended start). \"Average p99\" is the mean of the per-window p99s, \"Max p99\" \
         their maximum, as in seed 000's tables.</p>\n<h2 id=\"seed-tables\">Seed tables</h2>\n",
        escape(&campaign.dir.display().to_string()),
        campaign.configs.len(),
        campaign.rates.len(),
        campaign.cells.len()
    );
    for table in tables {
        out.push_str(&seed_table_html(table));
    }
    out.push_str("<h2 id=\"against-rate\">Latency and throughput against rate</h2>\n<div class=\"charts\">\n");
    for chart in rate_charts(campaign) {
        out.push_str(&line_chart(&chart));
    }
    out.push_str("</div>\n<h2 id=\"percentiles\">Percentiles per cell</h2>\n<table class=\"percentiles\">\n<tr>");
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
    out.push_str("</table>\n<h2 id=\"over-time\">Latency over time</h2>\n<div class=\"charts\">\n");
    for config in &campaign.configs {
        for rate in &campaign.rates {
            for chart in campaign
                .cells_at(config, rate)
                .filter_map(latency_over_time)
            {
                out.push_str(&line_chart(&chart));
            }
        }
    }
    out.push_str("</div>\n</body></html>\n");
    out
}
