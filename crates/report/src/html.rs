//! `report.html`: one self-contained page (inline CSS and SVG; no script, font or request).

use crate::cells::{Campaign, Cell};
use crate::compare::{comparison_rows, COMPARISON_HEADINGS};
use crate::markdown::{percentile_rows, COMPARISON_NOTE, GC_NOTE, PERCENTILE_HEADINGS, TAIL_NOTE};
use crate::server::{
    gc_rows, not_offered, server_figures, tail_rows, ServerFigures, GC_HEADINGS, TAIL_HEADINGS,
};
use crate::svg::{escape, line_chart, Chart, Series};
use crate::tables::{format_value, Table};
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
    for (config, values) in &table.rows {
        out.push_str(&format!("<tr><td>{}</td>", escape(config)));
        for value in values {
            out.push_str(&format!("<td>{}</td>", format_value(*value)));
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
    let (elapsed, phase, op, count) = (
        column("elapsed_s")?,
        column("phase")?,
        column("op")?,
        column("count")?,
    );
    let figures = [
        (column("p99_ms")?, "p99", false),
        (column("max_ms")?, "max", true),
    ];
    let mut series: Vec<Series> = Vec::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        if f.get(phase) != Some(&"measured") || f.get(count).is_none_or(|c| *c == "0") {
            continue;
        }
        let Some(x) = f.get(elapsed).and_then(|v| v.parse::<f64>().ok()) else {
            continue;
        };
        for &(index, label, dashed) in &figures {
            let Some(y) = f.get(index).and_then(|v| v.parse::<f64>().ok()) else {
                continue;
            };
            let name = format!("{} {label}", f.get(op)?);
            match series.iter_mut().find(|s| s.name == name) {
                Some(s) => s.points.push((x, y)),
                None => series.push(Series {
                    name,
                    points: vec![(x, y)],
                    dashed,
                }),
            }
        }
    }
    // Each node's GC pauses, on the same (wall-clock) time axis, within the measured phase.
    let duration = cell.number("duration_s").unwrap_or(0.0);
    let shaded: Vec<(f64, f64)> = cell
        .number("measured_start_unix_s")
        .map(|start| node_stops(&cell.dir, start))
        .unwrap_or_default()
        .iter()
        .flat_map(|n| n.stops.iter())
        .filter(|s| s.gc && s.end > 0.0 && s.start < duration)
        .map(|s| (s.start.max(0.0), s.end.min(duration)))
        .collect();
    (!series.is_empty()).then(|| Chart {
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

/// The whole page.
pub fn html(campaign: &Campaign, tables: &[Table]) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>cqlbench report</title>\
         <style>{STYLE}</style></head><body>\n<h1>cqlbench report</h1>\n<p class=\"note\">{} — {} configuration(s) × {} \
         rate(s), {} cells. Latencies are of successful operations, corrected for coordinated omission \
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
    out.push_str("<h2 id=\"against-rate\">Latency and throughput against rate</h2>\n");
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
    out.push_str("</table>\n");
    let gc = gc_rows(campaign);
    if !gc.is_empty() {
        out.push_str(&format!(
            "<h2 id=\"gc\">GC and server figures per cell</h2>\n<p class=\"note\">{}</p>\n",
            escape(GC_NOTE)
        ));
        out.push_str(&plain_table("gc-table", &GC_HEADINGS, &gc));
        for line in not_offered(campaign) {
            out.push_str(&format!("<p class=\"note\">{}</p>\n", escape(&line)));
        }
        out.push_str("<div class=\"charts\">\n");
        for chart in time_sampled_charts(campaign) {
            out.push_str(&line_chart(&chart));
        }
        out.push_str("</div>\n");
    }
    let tail = tail_rows(campaign);
    if !tail.is_empty() {
        out.push_str(&format!(
            "<h2 id=\"tail-vs-gc\">Client tail against GC pauses</h2>\n<p class=\"note\">{}</p>\n",
            escape(TAIL_NOTE)
        ));
        out.push_str(&plain_table("tail-table", &TAIL_HEADINGS, &tail));
    }
    let comparisons = comparison_rows(campaign);
    if !comparisons.is_empty() {
        out.push_str(&format!(
            "<h2 id=\"compare\">Is the difference real?</h2>\n<p class=\"note\">{}</p>\n",
            escape(COMPARISON_NOTE)
        ));
        out.push_str(&plain_table(
            "compare-table",
            &COMPARISON_HEADINGS,
            &comparisons,
        ));
    }
    out.push_str("<h2 id=\"over-time\">Latency over time</h2>\n<div class=\"charts\">\n");
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
