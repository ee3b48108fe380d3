//! The seeds' tables: one row per configuration, one column per rate.

use cqlbench_results::{OpSummary, Summary};

use crate::cells::Campaign;

/// One entry of a seed table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Entry {
    /// No cell of this configuration at this rate: blank.
    NoCell,
    /// The cells exist but the figure does not (no successful operation): "–".
    Absent,
    Value(f64),
}

/// A config × rate table of one figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub title: String,
    /// What the numbers are: `ops/s` or `ms`.
    pub unit: &'static str,
    pub columns: Vec<String>,
    /// Configuration name and one entry per column.
    pub rows: Vec<(String, Vec<Entry>)>,
}

/// A figure of a cell's summary, where it exists.
type Figure = fn(&Summary) -> Option<f64>;

fn achieved_rate(s: &Summary) -> Option<f64> {
    Some(s.achieved_rate)
}

fn writes_avg_p99(s: &Summary) -> Option<f64> {
    s.of_op("write", |o| o.avg_p99_ms)
}

fn reads_avg_p99(s: &Summary) -> Option<f64> {
    s.of_op("read", |o| o.avg_p99_ms)
}

/// The largest windowed p99 of the writes and the reads.
fn max_p99(s: &Summary) -> Option<f64> {
    let max = |o: &OpSummary| o.max_p99_ms;
    [s.of_op("write", max), s.of_op("read", max)]
        .into_iter()
        .flatten()
        .reduce(f64::max)
}

/// How the repeats of one cell combine into one table entry.
#[derive(Debug, Clone, Copy)]
enum Combine {
    Mean,
    Max,
}

/// Throughput, Writes Average p99, Reads Average p99 and Max p99, as seed 000 lays them out.
/// Repeats of a cell are averaged (the maximum for Max p99).
pub fn seed_tables(campaign: &Campaign) -> Vec<Table> {
    vec![
        table(
            campaign,
            "Throughput",
            "ops/s",
            achieved_rate,
            Combine::Mean,
        ),
        table(
            campaign,
            "Writes Average p99",
            "ms",
            writes_avg_p99,
            Combine::Mean,
        ),
        table(
            campaign,
            "Reads Average p99",
            "ms",
            reads_avg_p99,
            Combine::Mean,
        ),
        table(campaign, "Max p99", "ms", max_p99, Combine::Max),
    ]
}

/// One figure per cell, combined over the repeats.
fn table(
    campaign: &Campaign,
    title: &str,
    unit: &'static str,
    figure: Figure,
    combine: Combine,
) -> Table {
    let rows = campaign
        .configs
        .iter()
        .map(|config| {
            let values = campaign
                .rates
                .iter()
                .map(|rate| {
                    let cells: Vec<Option<f64>> = campaign
                        .cells_at(config, rate)
                        .map(|cell| figure(&cell.summary))
                        .collect();
                    let per_repeat: Vec<f64> = cells.iter().flatten().copied().collect();
                    match combined(&per_repeat, combine) {
                        Some(value) => Entry::Value(value),
                        None if cells.is_empty() => Entry::NoCell,
                        None => Entry::Absent,
                    }
                })
                .collect();
            (config.clone(), values)
        })
        .collect();
    Table {
        title: title.to_string(),
        unit,
        columns: campaign.rates.iter().map(|r| r.label()).collect(),
        rows,
    }
}

fn combined(values: &[f64], combine: Combine) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(match combine {
        Combine::Mean => values.iter().sum::<f64>() / values.len() as f64,
        Combine::Max => values.iter().cloned().fold(f64::MIN, f64::max),
    })
}

/// A table entry as the seeds print it: two decimals, thousands grouped, blank where nothing was
/// measured.
pub(crate) fn format_value(value: Option<f64>) -> String {
    value.map_or_else(String::new, two_decimals)
}

fn two_decimals(v: f64) -> String {
    crate::cells::group_digits(&format!("{v:.2}"))
}

/// A figure of a cell as the tables print it: two decimals, thousands grouped, "–" where it does
/// not exist.
pub(crate) fn format_figure(value: Option<f64>) -> String {
    cqlbench_results::shown(value, two_decimals)
}

/// An entry of a seed table: blank without a cell, "–" without a value.
pub(crate) fn format_entry(entry: Entry) -> String {
    match entry {
        Entry::NoCell => format_value(None),
        Entry::Absent => cqlbench_results::ABSENT.to_string(),
        Entry::Value(v) => format_value(Some(v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_print_like_the_seed_tables() {
        assert_eq!(format_value(Some(24222.8)), "24,222.80");
        assert_eq!(format_value(Some(2.646)), "2.65");
        assert_eq!(format_value(Some(600.109)), "600.11");
        assert_eq!(format_value(Some(0.004)), "0.00");
        assert_eq!(format_value(None), "");
    }

    #[test]
    fn repeats_average_and_max_takes_the_largest() {
        assert_eq!(combined(&[1.0, 3.0], Combine::Mean), Some(2.0));
        assert_eq!(combined(&[1.0, 3.0], Combine::Max), Some(3.0));
        assert_eq!(combined(&[], Combine::Mean), None);
    }
}
