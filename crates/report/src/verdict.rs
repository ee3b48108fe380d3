//! The campaign's result in one sentence, computed from its tables: at the plan's top rate, how far
//! apart the configurations' write "Average p99" are, and their longest GC pauses there.

use crate::cells::{Campaign, RateKey};
use crate::server::server_figures;
use crate::tables::{Entry, Table};

/// Below this ratio of the worst to the best write Average p99, the configurations are called alike.
pub const ALIKE_BELOW: f64 = 1.5;

const WRITES_TITLE: &str = "Writes Average p99";

/// "At 85 % of capacity G1 jdk17's write Average p99 is 3.1× Shenandoah jdk17's (…); its longest GC
/// pause 84 ms vs 4 ms." — or that the configurations are alike. `None` with fewer than two
/// configurations measured at the top rate.
pub fn verdict(campaign: &Campaign, tables: &[Table]) -> Option<String> {
    let writes = tables.iter().find(|t| t.title == WRITES_TITLE)?;
    // The top rate: the last column that is a rate (an unthrottled `max` run is queueing, not a rate).
    let column = campaign.rates.iter().rposition(|r| r.0 != "max")?;
    let rate = &campaign.rates[column];
    let measured: Vec<(&str, f64)> = writes
        .rows
        .iter()
        .filter_map(|(config, values)| match values.get(column)? {
            Entry::Value(v) => Some((config.as_str(), *v)),
            Entry::NoCell | Entry::Absent => None,
        })
        .collect();
    if measured.len() < 2 {
        return None;
    }
    let worst = measured
        .iter()
        .cloned()
        .reduce(|a, b| if b.1 > a.1 { b } else { a })?;
    let best = measured
        .iter()
        .cloned()
        .reduce(|a, b| if b.1 < a.1 { b } else { a })?;
    let ratio = worst.1 / best.1.max(1e-9);
    let pause = |config: &str| longest_pause_ms(campaign, config, rate);
    let pauses = match (pause(worst.0), pause(best.0)) {
        (Some(w), Some(b)) => format!(
            "; longest GC pause {} ms ({}) vs {} ms ({})",
            short(w),
            worst.0,
            short(b),
            best.0
        ),
        _ => String::new(),
    };
    let at = describe_rate(campaign, rate);
    if ratio < ALIKE_BELOW {
        return Some(format!(
            "{at} the configurations are alike: write Average p99 from {} ms ({}) to {} ms ({}), {ratio:.1}× apart (under {ALIKE_BELOW}×){pauses}.",
            short(best.1),
            best.0,
            short(worst.1),
            worst.0,
        ));
    }
    let others: Vec<String> = measured
        .iter()
        .filter(|(c, _)| *c != worst.0 && *c != best.0)
        .map(|(c, v)| format!("{c} {} ms", short(*v)))
        .collect();
    let others = if others.is_empty() {
        String::new()
    } else {
        format!("; {}", others.join(", "))
    };
    Some(format!(
        "{at} {}'s write Average p99 is {ratio:.1}× {}'s ({} vs {} ms{others}){pauses}.",
        worst.0,
        best.0,
        short(worst.1),
        short(best.1),
    ))
}

/// "At 8,000 ops/s,", or for a sweep's fraction "At 85 % of capacity (6,050–7,120 ops/s achieved)".
fn describe_rate(campaign: &Campaign, rate: &RateKey) -> String {
    let Some(fraction) = rate
        .0
        .strip_suffix("-of-max")
        .and_then(|f| f.parse::<f64>().ok())
    else {
        return format!("At {},", rate.label());
    };
    let achieved: Vec<f64> = campaign
        .cells
        .iter()
        .filter(|c| &c.rate == rate)
        .map(|c| c.summary.achieved_rate)
        .collect();
    let range = match (
        achieved.iter().cloned().reduce(f64::min),
        achieved.iter().cloned().reduce(f64::max),
    ) {
        (Some(low), Some(high)) => format!(
            " ({}–{} ops/s achieved)",
            crate::cells::group_thousands(low.round()),
            crate::cells::group_thousands(high.round())
        ),
        _ => String::new(),
    };
    format!(
        "At {:.0} % of each configuration's measured capacity{range},",
        fraction * 100.0
    )
}

fn longest_pause_ms(campaign: &Campaign, config: &str, rate: &RateKey) -> Option<f64> {
    campaign
        .cells_at(config, rate)
        .filter_map(|cell| server_figures(cell)?.pause_max_ms)
        .reduce(f64::max)
}

/// Two significant decimals below 10, one below 100, none above.
fn short(value: f64) -> String {
    if value < 10.0 {
        format!("{value:.2}")
    } else if value < 100.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cells::Cell;
    use cqlbench_results::{OpSummary, Summary};

    fn campaign(rates: &[&str], rows: &[(&str, &[f64])]) -> (Campaign, Vec<Table>) {
        let mut cells = Vec::new();
        for (config, values) in rows {
            for (rate, value) in rates.iter().zip(values.iter()) {
                cells.push(Cell {
                    config: config.to_string(),
                    rate: RateKey(rate.to_string()),
                    repeat: None,
                    dir: std::path::PathBuf::from("/nonexistent-cqlbench"),
                    summary: Summary {
                        achieved_rate: 1000.0 * value,
                        ops: [(
                            "write".to_string(),
                            OpSummary {
                                avg_p99_ms: Some(*value),
                                ..OpSummary::default()
                            },
                        )]
                        .into(),
                        ..Summary::default()
                    },
                });
            }
        }
        let campaign = Campaign {
            dir: std::path::PathBuf::from("/nonexistent-cqlbench"),
            configs: rows.iter().map(|(c, _)| c.to_string()).collect(),
            rates: rates.iter().map(|r| RateKey(r.to_string())).collect(),
            cells,
            environment: None,
        };
        let tables = crate::tables::seed_tables(&campaign);
        (campaign, tables)
    }

    #[test]
    fn names_the_worst_against_the_best_at_the_top_rate() {
        let (c, t) = campaign(
            &["2000", "8000"],
            &[
                ("G1", &[1.2, 84.0]),
                ("ZGC", &[1.1, 4.4]),
                ("Shenandoah", &[1.0, 3.4]),
            ],
        );
        let line = verdict(&c, &t).unwrap();
        assert_eq!(
            line,
            "At 8,000 ops/s, G1's write Average p99 is 24.7× Shenandoah's (84.0 vs 3.40 ms; ZGC 4.40 ms)."
        );
    }

    #[test]
    fn says_when_the_configurations_are_alike() {
        let (c, t) = campaign(
            &["max", "0.5-of-max", "0.85-of-max"],
            &[
                ("G1", &[90.0, 1.0, 1.23]),
                ("ZGC", &[80.0, 1.0, 1.19]),
                ("Shenandoah", &[70.0, 1.0, 1.03]),
            ],
        );
        let line = verdict(&c, &t).unwrap();
        assert!(
            line.starts_with("At 85 % of each configuration's measured capacity (1,030–1,230 ops/s achieved), the configurations are alike: write Average p99 from 1.03 ms (Shenandoah) to 1.23 ms (G1), 1.2× apart"),
            "{line}"
        );
    }

    #[test]
    fn nothing_to_say_about_one_configuration() {
        let (c, t) = campaign(&["1000"], &[("G1", &[1.0])]);
        assert_eq!(verdict(&c, &t), None);
    }
}
