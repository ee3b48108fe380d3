//! Finding the cells of a campaign directory and reading their summaries.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use cqlbench_results::{ConfigRecord, Environment, Summary, SUMMARY_FILE};

use crate::ReportError;

/// A cell's rate, as its directory names it: a number of operations per second, or a word such as
/// `max` (an unthrottled run).
#[derive(Debug, Clone, PartialEq)]
pub struct RateKey(pub String);

impl RateKey {
    pub fn ops_per_s(&self) -> Option<f64> {
        self.0.parse().ok()
    }

    /// Column heading: `25000 ops/s`, or the word itself.
    pub fn label(&self) -> String {
        match self.ops_per_s() {
            Some(rate) => format!("{} ops/s", group_thousands(rate)),
            None => self.0.clone(),
        }
    }

    /// `0.35` for a sweep's `0.35-of-max` cell.
    fn fraction_of_max(&self) -> Option<f64> {
        self.0.strip_suffix("-of-max")?.parse().ok()
    }

    /// Numbers ascending; then a sweep as seed 001 reads it: `max` first, its fractions ascending;
    /// then other words alphabetically.
    fn order(&self, other: &RateKey) -> Ordering {
        let rank = |key: &RateKey| match (key.ops_per_s(), key.0.as_str(), key.fraction_of_max()) {
            (Some(_), _, _) => 0,
            (None, "max", _) => 1,
            (None, _, Some(_)) => 2,
            _ => 3,
        };
        rank(self)
            .cmp(&rank(other))
            .then_with(|| match (self.ops_per_s(), other.ops_per_s()) {
                (Some(a), Some(b)) => a.total_cmp(&b),
                _ => match (self.fraction_of_max(), other.fraction_of_max()) {
                    (Some(a), Some(b)) => a.total_cmp(&b),
                    _ => self.0.cmp(&other.0),
                },
            })
    }
}

/// `25000` → `25,000`; fractions keep two decimals.
pub(crate) fn group_thousands(value: f64) -> String {
    if value.fract() == 0.0 {
        group_digits(&format!("{value:.0}"))
    } else {
        group_digits(&format!("{value:.2}"))
    }
}

/// Puts thousands separators into the whole part of a formatted number: `24222.80` → `24,222.80`.
pub(crate) fn group_digits(text: &str) -> String {
    let (whole, fraction) = text
        .split_once('.')
        .map_or((text, None), |(w, f)| (w, Some(f)));
    let (sign, digits) = whole.strip_prefix('-').map_or(("", whole), |d| ("-", d));
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    match fraction {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// One run: a configuration at one rate (one repeat of it).
#[derive(Debug, Clone)]
pub struct Cell {
    pub config: String,
    pub rate: RateKey,
    pub repeat: Option<String>,
    pub dir: PathBuf,
    pub summary: Summary,
}

/// The mark after a figure from a doubtful cell; its footnote gives the reasons.
pub const DOUBTFUL_MARK: char = '†';

impl Cell {
    /// Its result was taken while the machine was not quiet (`summary.json`'s `validity`).
    pub fn is_doubtful(&self) -> bool {
        self.summary.validity.as_ref().is_some_and(|v| v.doubtful)
    }

    /// The rate as per-cell tables print it, marked when the cell is doubtful.
    pub(crate) fn rate_label(&self) -> String {
        if self.is_doubtful() {
            format!("{}{DOUBTFUL_MARK}", self.rate.label())
        } else {
            self.rate.label()
        }
    }
}

/// Every cell of one campaign directory, with its configurations and rates in order.
#[derive(Debug, Clone)]
pub struct Campaign {
    pub dir: PathBuf,
    pub configs: Vec<String>,
    pub rates: Vec<RateKey>,
    pub cells: Vec<Cell>,
    /// The campaign's `environment.json` (its machine probe and `[cost]`), when it has one.
    pub environment: Option<Environment>,
}

impl Campaign {
    /// The cells (repeats) of one configuration at one rate.
    pub fn cells_at<'a>(
        &'a self,
        config: &'a str,
        rate: &'a RateKey,
    ) -> impl Iterator<Item = &'a Cell> {
        self.cells
            .iter()
            .filter(move |c| c.config == config && &c.rate == rate)
    }

    /// The window lengths "Average p99" and "Max p99" were taken over, as the reports' notes say them:
    /// `10 s windows`, or `2 s and 10 s windows` when cells differ (a plan can set `--p99-window`).
    pub fn p99_windows(&self) -> String {
        let mut seconds: Vec<f64> = self.cells.iter().map(|c| c.summary.p99_window_s).collect();
        seconds.sort_by(f64::total_cmp);
        seconds.dedup();
        let named: Vec<String> = seconds
            .iter()
            .map(|s| format!("{} s", trim_zeros(*s)))
            .collect();
        match named.split_last() {
            None => "windows".into(),
            Some((last, [])) => format!("{last} windows"),
            Some((last, rest)) => format!("{} and {last} windows", rest.join(", ")),
        }
    }
}

/// `10` → `10`, `0.5` → `0.5`, `2.250` → `2.25`.
fn trim_zeros(value: f64) -> String {
    let text = format!("{value:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Reads the cells below `dir`: `<config>/<rate>/summary.json` or `<config>/<rate>/<repeat>/summary.json`.
/// Configurations come in `config_order` where given (the plan's order), the others after them by
/// name; hidden and temporary directories (an unfinished cell) are skipped.
pub fn discover(dir: &Path, config_order: &[String]) -> Result<Campaign, ReportError> {
    let mut cells = Vec::new();
    // (directory name, label) of each configuration.
    let mut labels: Vec<(String, String)> = Vec::new();
    for config in subdirectories(dir)? {
        let label = config_label(&config);
        labels.push((name_of(&config), label.clone()));
        // A campaign's populate run is part of a configuration's set-up, not a cell.
        for rate in subdirectories(&config)?
            .into_iter()
            .filter(|r| name_of(r) != "populate")
        {
            let summary = rate.join(SUMMARY_FILE);
            if summary.is_file() {
                cells.push(read_cell(&label, &rate, None, &summary)?);
                continue;
            }
            // Repeats are numbered; other directories below a rate (a Kubernetes run's collected
            // `client-<i>` results, for one) are no cells.
            for repeat in subdirectories(&rate)?
                .into_iter()
                .filter(|r| name_of(r).bytes().all(|b| b.is_ascii_digit()))
            {
                let summary = repeat.join(SUMMARY_FILE);
                if summary.is_file() {
                    cells.push(read_cell(&label, &rate, Some(&repeat), &summary)?);
                }
            }
        }
    }
    if cells.is_empty() {
        return Err(ReportError::NoCells(dir.to_path_buf()));
    }
    let mut configs: Vec<String> = config_order
        .iter()
        .filter_map(|wanted| {
            labels
                .iter()
                .find(|(dir_name, label)| dir_name == wanted || label == wanted)
                .map(|(_, label)| label.clone())
        })
        .filter(|label| cells.iter().any(|c| &c.config == label))
        .collect();
    configs.dedup();
    let mut others: Vec<String> = cells
        .iter()
        .map(|c| c.config.clone())
        .filter(|name| !configs.contains(name))
        .collect();
    others.sort();
    others.dedup();
    configs.extend(others);
    let mut rates: Vec<RateKey> = Vec::new();
    for cell in &cells {
        if !rates.contains(&cell.rate) {
            rates.push(cell.rate.clone());
        }
    }
    rates.sort_by(RateKey::order);
    Ok(Campaign {
        dir: dir.to_path_buf(),
        configs,
        rates,
        cells,
        environment: Environment::read(dir).ok(),
    })
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn subdirectories(dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    cqlbench_results::result_subdirectories(dir).map_err(|source| ReportError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

/// A configuration's name as its plan gave it (`config.json`, written by a campaign), else its
/// directory's name.
fn config_label(config: &Path) -> String {
    ConfigRecord::read(config)
        .ok()
        .map(|record| record.name)
        .filter(|name| !name.trim().is_empty())
        .unwrap_or_else(|| name_of(config))
}

fn read_cell(
    config: &str,
    rate: &Path,
    repeat: Option<&Path>,
    summary: &Path,
) -> Result<Cell, ReportError> {
    Ok(Cell {
        config: config.to_string(),
        rate: RateKey(name_of(rate)),
        repeat: repeat.map(name_of),
        dir: summary.parent().unwrap_or(rate).to_path_buf(),
        summary: Summary::read_file(summary)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_sort_as_numbers_then_the_sweep_then_words() {
        let mut rates: Vec<RateKey> = ["40000", "max", "5000", "25000"]
            .iter()
            .map(|r| RateKey(r.to_string()))
            .collect();
        rates.sort_by(RateKey::order);
        let names: Vec<&str> = rates.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(names, ["5000", "25000", "40000", "max"]);
        let mut sweep: Vec<RateKey> = ["0.7-of-max", "probe", "max", "0.35-of-max", "0.05-of-max"]
            .iter()
            .map(|r| RateKey(r.to_string()))
            .collect();
        sweep.sort_by(RateKey::order);
        let names: Vec<&str> = sweep.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(
            names,
            ["max", "0.05-of-max", "0.35-of-max", "0.7-of-max", "probe"]
        );
        assert_eq!(RateKey("25000".into()).label(), "25,000 ops/s");
        assert_eq!(group_thousands(24222.8), "24,222.80");
        assert_eq!(group_thousands(999.0), "999");
        assert_eq!(group_thousands(1234567.0), "1,234,567");
    }

    #[test]
    fn the_notes_name_every_p99_window_of_the_cells() {
        let cell = |window: f64| Cell {
            config: "G1".into(),
            rate: RateKey("max".into()),
            repeat: None,
            dir: PathBuf::new(),
            summary: Summary {
                p99_window_s: window,
                ..Summary::default()
            },
        };
        let campaign = |windows: &[f64]| Campaign {
            dir: PathBuf::new(),
            configs: vec!["G1".into()],
            rates: vec![RateKey("max".into())],
            cells: windows.iter().map(|w| cell(*w)).collect(),
            environment: None,
        };
        assert_eq!(campaign(&[2.0, 2.0]).p99_windows(), "2 s windows");
        assert_eq!(
            campaign(&[10.0, 0.5, 2.0, 10.0]).p99_windows(),
            "0.5 s, 2 s and 10 s windows"
        );
        assert_eq!(campaign(&[]).p99_windows(), "windows");
    }
}
