//! The seeds' tables: one row per configuration, one column per rate.

use cqlbench_results::{OpSummary, Summary};

use crate::cells::{Campaign, Cell, DOUBTFUL_MARK};

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
    /// Per row and column: whether a cell the entry comes from is doubtful (its `validity`), which
    /// the entry then shows with [`DOUBTFUL_MARK`].
    pub doubtful: Vec<Vec<bool>>,
}

/// A figure of a cell's summary, where it exists.
type Figure<'a> = &'a dyn Fn(&Summary) -> Option<f64>;

fn achieved_rate(s: &Summary) -> Option<f64> {
    Some(s.achieved_rate)
}

/// The largest windowed p99 of every operation.
fn max_p99(s: &Summary) -> Option<f64> {
    s.max_over_ops(|o: &OpSummary| o.max_p99_ms)
}

/// The operation names of a campaign's cells, in order, and what their tables are called: the
/// built-ins' `write` and `read` as the seeds name them ("Writes", "Reads"), a workload file's
/// operations by name.
pub fn op_titles(campaign: &Campaign) -> Vec<(String, String)> {
    let mut names: Vec<String> = Vec::new();
    for cell in &campaign.cells {
        for name in cell.summary.ops.keys() {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    let built_in = names.iter().all(|n| n == "read" || n == "write");
    if built_in {
        return [("write", "Writes"), ("read", "Reads")]
            .into_iter()
            .map(|(op, title)| (op.to_string(), title.to_string()))
            .collect();
    }
    names.into_iter().map(|n| (n.clone(), n)).collect()
}

/// How the repeats of one cell combine into one table entry.
#[derive(Debug, Clone, Copy)]
enum Combine {
    Mean,
    Max,
}

/// Throughput, Writes Average p99, Reads Average p99 and Max p99, as seed 000 lays them out (a
/// workload file's operations each get their Average p99 table in place of Writes and Reads).
/// Repeats of a cell are averaged (the maximum for Max p99).
pub fn seed_tables(campaign: &Campaign) -> Vec<Table> {
    let mut tables = vec![table(
        campaign,
        "Throughput",
        "ops/s",
        &achieved_rate,
        Combine::Mean,
    )];
    for (op, title) in op_titles(campaign) {
        let figure = move |s: &Summary| s.of_op(&op, |o| o.avg_p99_ms);
        tables.push(table(
            campaign,
            &format!("{title} Average p99"),
            "ms",
            &figure,
            Combine::Mean,
        ));
    }
    tables.push(table(campaign, "Max p99", "ms", &max_p99, Combine::Max));
    tables
}

/// One figure per cell, combined over the repeats.
fn table(
    campaign: &Campaign,
    title: &str,
    unit: &'static str,
    figure: Figure,
    combine: Combine,
) -> Table {
    let mut rows = Vec::new();
    let mut doubtful = Vec::new();
    for config in &campaign.configs {
        let mut values = Vec::new();
        let mut marks = Vec::new();
        for rate in &campaign.rates {
            let cells: Vec<&Cell> = campaign.cells_at(config, rate).collect();
            let per_repeat: Vec<f64> = cells.iter().filter_map(|c| figure(&c.summary)).collect();
            values.push(match combined(&per_repeat, combine) {
                Some(value) => Entry::Value(value),
                None if cells.is_empty() => Entry::NoCell,
                None => Entry::Absent,
            });
            marks.push(cells.iter().any(|c| c.is_doubtful()));
        }
        rows.push((config.clone(), values));
        doubtful.push(marks);
    }
    Table {
        title: title.to_string(),
        unit,
        columns: campaign.rates.iter().map(|r| r.label()).collect(),
        rows,
        doubtful,
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

/// The entry, marked when it comes from a doubtful cell.
pub(crate) fn format_marked(entry: Entry, doubtful: bool) -> String {
    let text = format_entry(entry);
    if doubtful && entry != Entry::NoCell {
        format!("{text}{DOUBTFUL_MARK}")
    } else {
        text
    }
}

/// The table's entries as printed, row by row, marks included.
pub(crate) fn formatted_rows(table: &Table) -> Vec<(String, Vec<String>)> {
    table
        .rows
        .iter()
        .enumerate()
        .map(|(r, (config, entries))| {
            let cells = entries
                .iter()
                .enumerate()
                .map(|(c, e)| format_marked(*e, table.doubtful[r][c]))
                .collect();
            (config.clone(), cells)
        })
        .collect()
}

/// One footnote line per doubtful cell: which, and why.
pub fn doubtful_footnotes(campaign: &Campaign) -> Vec<String> {
    campaign
        .cells
        .iter()
        .filter(|c| c.is_doubtful())
        .map(|c| {
            let repeat = c
                .repeat
                .as_ref()
                .map_or(String::new(), |r| format!(" (repeat {r})"));
            let reasons = c
                .summary
                .validity
                .as_ref()
                .map(|v| v.reasons.join("; "))
                .unwrap_or_default();
            format!(
                "{DOUBTFUL_MARK} {} at {}{repeat} is doubtful: {reasons}",
                c.config,
                c.rate.label()
            )
        })
        .collect()
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
    fn a_doubtful_cell_is_marked_in_the_tables_and_its_reasons_footnoted() {
        use crate::cells::RateKey;
        use cqlbench_results::Validity;
        let cell = |config: &str, repeat: Option<&str>, doubtful: bool| Cell {
            config: config.into(),
            rate: RateKey("400".into()),
            repeat: repeat.map(str::to_string),
            dir: std::path::PathBuf::new(),
            summary: Summary {
                achieved_rate: 400.0,
                validity: Some(Validity {
                    doubtful,
                    reasons: if doubtful {
                        vec!["steal time 12 %".into()]
                    } else {
                        vec![]
                    },
                    ..Validity::default()
                }),
                ..Summary::default()
            },
        };
        let campaign = Campaign {
            dir: std::path::PathBuf::new(),
            configs: vec!["G1".into(), "ZGC".into()],
            rates: vec![RateKey("400".into())],
            cells: vec![
                cell("G1", Some("1"), false),
                cell("G1", Some("2"), true),
                cell("ZGC", None, false),
            ],
            environment: None,
        };
        let throughput = &seed_tables(&campaign)[0];
        assert_eq!(throughput.doubtful, [[true], [false]]);
        let rows = formatted_rows(throughput);
        assert_eq!(rows[0].1, ["400.00†"]);
        assert_eq!(rows[1].1, ["400.00"]);
        assert_eq!(
            doubtful_footnotes(&campaign),
            ["† G1 at 400 ops/s (repeat 2) is doubtful: steal time 12 %"]
        );
        let cost = cqlbench_results::Cost {
            node_hourly: 1.0,
            client_hourly: None,
            cluster_monthly: None,
            currency: "USD".into(),
        };
        let costs = crate::cost::cost_tables(&campaign, &cost);
        let labels: Vec<&str> = costs[0].rows.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["400 ops/s†", "max throughput†"]);
        assert_eq!(costs[1].rows[0].label, "400 ops/s");
        let markdown = crate::markdown(&campaign, &seed_tables(&campaign));
        assert!(markdown.contains("| G1 | 400.00† |"), "{markdown}");
        assert!(
            markdown.contains("\n† G1 at 400 ops/s (repeat 2) is doubtful"),
            "{markdown}"
        );
    }

    #[test]
    fn a_workload_file_s_operations_each_get_a_table() {
        use crate::cells::RateKey;
        let op = |p99: f64| OpSummary {
            count: 10,
            avg_p99_ms: Some(p99),
            max_p99_ms: Some(p99 * 2.0),
            ..OpSummary::default()
        };
        let summary = |ops: &[(&str, f64)]| Summary {
            ops: ops.iter().map(|(n, p)| (n.to_string(), op(*p))).collect(),
            ..Summary::default()
        };
        let campaign = |ops: &[(&str, f64)]| Campaign {
            dir: std::path::PathBuf::new(),
            configs: vec!["G1".into()],
            rates: vec![RateKey("400".into())],
            cells: vec![Cell {
                config: "G1".into(),
                rate: RateKey("400".into()),
                repeat: None,
                dir: std::path::PathBuf::new(),
                summary: summary(ops),
            }],
            environment: None,
        };
        let titles =
            |c: &Campaign| -> Vec<String> { seed_tables(c).into_iter().map(|t| t.title).collect() };
        let file = campaign(&[("main_select", 2.0), ("main_write", 3.0)]);
        assert_eq!(
            titles(&file),
            [
                "Throughput",
                "main_select Average p99",
                "main_write Average p99",
                "Max p99"
            ]
        );
        let tables = seed_tables(&file);
        assert_eq!(formatted_rows(&tables[2])[0].1, ["3.00"]);
        assert_eq!(formatted_rows(&tables[3])[0].1, ["6.00"]);
        let built_in = campaign(&[("read", 2.0), ("write", 3.0)]);
        assert_eq!(
            titles(&built_in),
            [
                "Throughput",
                "Writes Average p99",
                "Reads Average p99",
                "Max p99"
            ]
        );
    }

    #[test]
    fn repeats_average_and_max_takes_the_largest() {
        assert_eq!(combined(&[1.0, 3.0], Combine::Mean), Some(2.0));
        assert_eq!(combined(&[1.0, 3.0], Combine::Max), Some(3.0));
        assert_eq!(combined(&[], Combine::Mean), None);
    }
}
