//! The seeds' four tables (Throughput; Writes Average p99; Reads Average p99; Max p99 — config ×
//! rate), read back from the cells' own summary.json files.

use std::path::Path;

use serde_json::Value;

use crate::matrix;
use crate::plan::{Plan, RateMode};

/// The four figures of one cell, as the tables show them (`None`: nothing succeeded, shown `-`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CellFigures {
    pub throughput: Option<f64>,
    pub write_avg_p99_ms: Option<f64>,
    pub read_avg_p99_ms: Option<f64>,
    pub max_p99_ms: Option<f64>,
}

/// The figures of one summary.json (its `achieved_rate`, `ops.write.avg_p99_ms`,
/// `ops.read.avg_p99_ms` and the largest `ops.*.max_p99_ms`).
pub fn cell_figures(summary: &Value) -> CellFigures {
    let max_p99 = summary["ops"]
        .as_object()
        .map(|ops| {
            ops.values()
                .filter_map(|o| o["max_p99_ms"].as_f64())
                .reduce(f64::max)
        })
        .unwrap_or(None);
    CellFigures {
        throughput: summary["achieved_rate"].as_f64(),
        write_avg_p99_ms: summary["ops"]["write"]["avg_p99_ms"].as_f64(),
        read_avg_p99_ms: summary["ops"]["read"]["avg_p99_ms"].as_f64(),
        max_p99_ms: max_p99,
    }
}

fn mean(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let present: Vec<f64> = values.flatten().collect();
    (!present.is_empty()).then(|| present.iter().sum::<f64>() / present.len() as f64)
}

/// The columns: the plan's rates, the sweep's max and fractions, or the SLO probes that ran.
fn columns(plan: &Plan, dir: &Path) -> Vec<String> {
    match &plan.load.mode {
        RateMode::Fixed(rates) => rates.iter().map(|r| matrix::format_rate(*r)).collect(),
        RateMode::Sweep { fractions, .. } => std::iter::once("max".to_string())
            .chain(
                fractions
                    .iter()
                    .map(|f| matrix::CellRate::FractionOfMax(*f).label()),
            )
            .collect(),
        RateMode::Slo { .. } => {
            let mut rates: Vec<f64> = plan
                .configs
                .iter()
                .flat_map(|c| {
                    std::fs::read_dir(dir.join(&c.dir_name))
                        .into_iter()
                        .flatten()
                        .flatten()
                })
                .filter_map(|e| e.file_name().to_string_lossy().parse::<f64>().ok())
                .collect();
            rates.sort_by(f64::total_cmp);
            rates.dedup();
            rates.into_iter().map(matrix::format_rate).collect()
        }
    }
}

/// A cell's figures (the mean over its repeats), or `None` when it has not run.
pub fn figures_of(plan: &Plan, dir: &Path, config: usize, column: &str) -> Option<CellFigures> {
    let cell_dir = dir.join(&plan.configs[config].dir_name).join(column);
    let read = |path: &Path| -> Option<Value> {
        serde_json::from_str(&std::fs::read_to_string(path.join("summary.json")).ok()?).ok()
    };
    let summaries: Vec<Value> = match read(&cell_dir) {
        Some(summary) => vec![summary],
        None => (1..=plan.load.repeats)
            .filter_map(|r| read(&cell_dir.join(r.to_string())))
            .collect(),
    };
    if summaries.is_empty() {
        return None;
    }
    let all: Vec<CellFigures> = summaries.iter().map(cell_figures).collect();
    Some(CellFigures {
        throughput: mean(all.iter().map(|f| f.throughput)),
        write_avg_p99_ms: mean(all.iter().map(|f| f.write_avg_p99_ms)),
        read_avg_p99_ms: mean(all.iter().map(|f| f.read_avg_p99_ms)),
        max_p99_ms: mean(all.iter().map(|f| f.max_p99_ms)),
    })
}

/// `24,222.80`.
pub fn format_number(value: f64) -> String {
    let text = format!("{value:.2}");
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, "00"));
    let (sign, digits) = whole.strip_prefix('-').map_or(("", whole), |d| ("-", d));
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{sign}{grouped}.{fraction}")
}

/// The four tables as plain text, blank where a cell has not run and `-` where it has no value.
pub fn render(plan: &Plan, dir: &Path) -> String {
    let columns = columns(plan, dir);
    type Pick = fn(&CellFigures) -> Option<f64>;
    let tables: [(&str, Pick); 4] = [
        ("Throughput", |f| f.throughput),
        ("Writes Average p99", |f| f.write_avg_p99_ms),
        ("Reads Average p99", |f| f.read_avg_p99_ms),
        ("Max p99", |f| f.max_p99_ms),
    ];
    let name_width = plan
        .configs
        .iter()
        .map(|c| c.name.chars().count())
        .chain(tables.iter().map(|(t, _)| t.len()))
        .max()
        .unwrap_or(10);
    let unit = |c: &str| {
        if c.parse::<f64>().is_ok() {
            format!("{c} ops/s")
        } else {
            c.to_string()
        }
    };
    let width = columns
        .iter()
        .map(|c| unit(c).len())
        .max()
        .unwrap_or(0)
        .max(10);
    let mut out = String::new();
    for (title, pick) in tables {
        out.push_str(&format!("{title:<name_width$}"));
        for column in &columns {
            out.push_str(&format!("  {:>width$}", unit(column)));
        }
        out.push('\n');
        for (index, config) in plan.configs.iter().enumerate() {
            out.push_str(&format!("{:<name_width$}", config.name));
            for column in &columns {
                let text = match figures_of(plan, dir, index, column) {
                    None => String::new(),
                    Some(figures) => pick(&figures).map_or("-".to_string(), format_number),
                };
                out.push_str(&format!("  {text:>width$}"));
            }
            out.push('\n');
        }
        out.push('\n');
    }
    if let RateMode::Slo { p99_ms, .. } = plan.load.mode {
        out.push_str(&format!(
            "Capacity at SLO (p99 of reads and writes <= {p99_ms} ms, rate kept, nothing failed)\n"
        ));
        for (index, config) in plan.configs.iter().enumerate() {
            let capacity = crate::runner::slo_capacity(plan, index, dir)
                .map_or("below the plan's low rate".to_string(), |r| {
                    format!("{} ops/s", matrix::format_rate(r))
                });
            out.push_str(&format!("{:<name_width$}  {capacity}\n", config.name));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_like_the_seeds() {
        assert_eq!(format_number(24222.8), "24,222.80");
        assert_eq!(format_number(14.744), "14.74");
        assert_eq!(format_number(1234567.0), "1,234,567.00");
        assert_eq!(format_number(-1000.0), "-1,000.00");
    }

    #[test]
    fn null_p99s_stay_missing() {
        let summary: Value = serde_json::json!({
            "achieved_rate": 0.0,
            "ops": {"read": {"avg_p99_ms": null, "max_p99_ms": null},
                    "write": {"avg_p99_ms": 2.5, "max_p99_ms": 7.0}}
        });
        let f = cell_figures(&summary);
        assert_eq!(f.read_avg_p99_ms, None);
        assert_eq!(f.write_avg_p99_ms, Some(2.5));
        assert_eq!(f.max_p99_ms, Some(7.0));
    }
}
