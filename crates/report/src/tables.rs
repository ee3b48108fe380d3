//! The seeds' tables: one row per configuration, one column per rate.

use crate::cells::Campaign;

/// A config × rate table of one figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub title: String,
    /// What the numbers are: `ops/s` or `ms`.
    pub unit: &'static str,
    pub columns: Vec<String>,
    /// Configuration name and one value per column (`None`: no cell, or nothing measured).
    pub rows: Vec<(String, Vec<Option<f64>>)>,
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
            &["achieved_rate"],
            Combine::Mean,
        ),
        table(
            campaign,
            "Writes Average p99",
            "ms",
            &["ops.write.avg_p99_ms"],
            Combine::Mean,
        ),
        table(
            campaign,
            "Reads Average p99",
            "ms",
            &["ops.read.avg_p99_ms"],
            Combine::Mean,
        ),
        table(
            campaign,
            "Max p99",
            "ms",
            &["ops.write.max_p99_ms", "ops.read.max_p99_ms"],
            Combine::Max,
        ),
    ]
}

/// One figure per cell: the largest of `paths` in each repeat, combined over the repeats.
fn table(
    campaign: &Campaign,
    title: &str,
    unit: &'static str,
    paths: &[&str],
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
                    let per_repeat: Vec<f64> = campaign
                        .cells_at(config, rate)
                        .filter_map(|cell| {
                            paths.iter().filter_map(|p| cell.number(p)).reduce(f64::max)
                        })
                        .collect();
                    combined(&per_repeat, combine)
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
    value.map_or_else(String::new, |v| {
        crate::cells::group_digits(&format!("{v:.2}"))
    })
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
