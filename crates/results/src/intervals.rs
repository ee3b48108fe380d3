//! `intervals.csv`: per reporting interval (about a second), phase and operation, what the client
//! sent and what came back. Written row by row while the run goes; read by column name, so a reader
//! of today's columns reads a file with more.

use std::path::{Path, PathBuf};

use crate::summary::{ErrorCounts, ErrorKind, Percentiles};
use crate::{ResultsError, ABSENT};

/// The file name in a run directory.
pub const INTERVALS_FILE: &str = "intervals.csv";

/// The columns of intervals.csv, in the order they are written.
pub const INTERVAL_COLUMNS: &str = "elapsed_s,phase,op,count,errors,sent_ops_s,achieved_ops_s,\
p50_ms,p90_ms,p99_ms,p999_ms,max_ms,service_p50_ms,service_p99_ms,service_max_ms,\
failed_p99_ms,failed_max_ms,timeout,unavailable,overloaded,other,unsent,\
scheduled_all_ops_s,client_hiccup_max_ms";

/// One row: one phase's operations of one type over one reporting interval.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalRow {
    /// End of the interval, seconds from the start of the measured phase (negative in the warm-up).
    pub elapsed_s: f64,
    /// `warmup` or `measured`.
    pub measured: bool,
    pub op: String,
    /// Successful operations.
    pub count: u64,
    /// Failed operations, by kind in `error_kinds`.
    pub errors: u64,
    /// Operations released per second.
    pub sent_ops_s: f64,
    /// Successful operations per second.
    pub achieved_ops_s: f64,
    /// Corrected latency of the interval's successful operations.
    pub latency_ms: Percentiles,
    pub service_p50_ms: Option<f64>,
    pub service_p99_ms: Option<f64>,
    pub service_max_ms: Option<f64>,
    pub failed_p99_ms: Option<f64>,
    pub failed_max_ms: Option<f64>,
    pub error_kinds: ErrorCounts,
    /// What the schedule put in this interval, over all operation types, per second.
    pub scheduled_all_ops_s: f64,
    pub client_hiccup_max_ms: Option<f64>,
    /// `false` in a merge's warm-up rows: no histograms are kept of the warm-up, so their percentile
    /// cells (but the maxima) are left empty rather than shown as absent.
    pub percentiles_kept: bool,
}

fn number_cell(value: Option<f64>) -> String {
    value.map_or_else(|| ABSENT.to_string(), |v| format!("{v}"))
}

impl IntervalRow {
    pub fn phase(&self) -> &'static str {
        if self.measured {
            "measured"
        } else {
            "warmup"
        }
    }

    /// The row as a line of intervals.csv (without the newline).
    pub fn csv_line(&self) -> String {
        let kept = |value: Option<f64>| {
            if self.percentiles_kept {
                number_cell(value)
            } else {
                String::new()
            }
        };
        let l = &self.latency_ms;
        let e = &self.error_kinds;
        format!(
            "{:.3},{},{},{},{},{:.1},{:.1},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.1},{}",
            self.elapsed_s,
            self.phase(),
            self.op,
            self.count,
            self.errors,
            self.sent_ops_s,
            self.achieved_ops_s,
            kept(l.p50),
            kept(l.p90),
            kept(l.p99),
            kept(l.p999),
            number_cell(l.max),
            kept(self.service_p50_ms),
            kept(self.service_p99_ms),
            number_cell(self.service_max_ms),
            kept(self.failed_p99_ms),
            number_cell(self.failed_max_ms),
            e.timeout,
            e.unavailable,
            e.overloaded,
            e.other,
            e.unsent,
            self.scheduled_all_ops_s,
            number_cell(self.client_hiccup_max_ms),
        )
    }
}

/// A whole intervals.csv, as read.
#[derive(Debug, Clone, PartialEq)]
pub struct Intervals {
    /// The header line as written (a merge refuses clients whose columns differ).
    pub header: String,
    pub rows: Vec<IntervalRow>,
}

/// Where each column is in the file at hand.
struct Columns<'a> {
    names: Vec<&'a str>,
    path: &'a Path,
}

impl Columns<'_> {
    fn at(&self, name: &str) -> Result<usize, ResultsError> {
        self.names.iter().position(|c| *c == name).ok_or_else(|| {
            ResultsError::malformed(
                self.path,
                "cqlbench intervals.csv",
                format!("no column {name}"),
            )
        })
    }
}

/// A row's cells, read by column name.
struct Cells<'a> {
    fields: Vec<&'a str>,
    line: &'a str,
    columns: &'a Columns<'a>,
}

impl Cells<'_> {
    fn text(&self, name: &str) -> Result<&str, ResultsError> {
        Ok(self.fields[self.columns.at(name)?])
    }

    fn number(&self, name: &str) -> Result<f64, ResultsError> {
        let text = self.text(name)?;
        text.parse().map_err(|_| self.bad(name, text))
    }

    fn count(&self, name: &str) -> Result<u64, ResultsError> {
        let text = self.text(name)?;
        text.parse().map_err(|_| self.bad(name, text))
    }

    /// A cell that may hold no value: [`ABSENT`], or empty.
    fn optional(&self, name: &str) -> Result<Option<f64>, ResultsError> {
        match self.text(name)? {
            "" | ABSENT => Ok(None),
            text => text.parse().map(Some).map_err(|_| self.bad(name, text)),
        }
    }

    fn bad(&self, name: &str, text: &str) -> ResultsError {
        ResultsError::malformed(
            self.columns.path,
            "cqlbench intervals.csv",
            format!("{name} is not a number ({text:?}) in: {}", self.line),
        )
    }

    fn row(&self) -> Result<IntervalRow, ResultsError> {
        let mut error_kinds = ErrorCounts::default();
        for kind in ErrorKind::ALL {
            error_kinds.add_n(kind, self.count(kind.name())?);
        }
        let count = self.count("count")?;
        let errors = self.count("errors")?;
        // Cells left empty (not "–"): percentiles a merge keeps no histogram of.
        let percentiles_kept = ["p50_ms", "p90_ms", "p99_ms", "p999_ms"]
            .iter()
            .any(|c| self.text(c).is_ok_and(|t| !t.is_empty()));
        // Without successes (failures) there is no latency (failure latency): files written before
        // absent values were absent have 0 there.
        let successes = |value: Option<f64>| value.filter(|_| count > 0);
        let failures = |value: Option<f64>| value.filter(|_| errors > 0);
        Ok(IntervalRow {
            elapsed_s: self.number("elapsed_s")?,
            measured: self.text("phase")? == "measured",
            op: self.text("op")?.to_string(),
            count,
            errors,
            sent_ops_s: self.number("sent_ops_s")?,
            achieved_ops_s: self.number("achieved_ops_s")?,
            latency_ms: Percentiles {
                p50: successes(self.optional("p50_ms")?),
                p90: successes(self.optional("p90_ms")?),
                p99: successes(self.optional("p99_ms")?),
                p999: successes(self.optional("p999_ms")?),
                max: successes(self.optional("max_ms")?),
            },
            service_p50_ms: successes(self.optional("service_p50_ms")?),
            service_p99_ms: successes(self.optional("service_p99_ms")?),
            service_max_ms: successes(self.optional("service_max_ms")?),
            failed_p99_ms: failures(self.optional("failed_p99_ms")?),
            failed_max_ms: failures(self.optional("failed_max_ms")?),
            error_kinds,
            scheduled_all_ops_s: self.number("scheduled_all_ops_s")?,
            client_hiccup_max_ms: self.optional("client_hiccup_max_ms")?,
            percentiles_kept,
        })
    }
}

impl Intervals {
    /// Reads `DIR/intervals.csv`.
    pub fn read(dir: &Path) -> Result<Intervals, ResultsError> {
        Intervals::read_file(&dir.join(INTERVALS_FILE))
    }

    pub fn read_file(path: &Path) -> Result<Intervals, ResultsError> {
        let text = std::fs::read_to_string(path).map_err(ResultsError::read(path))?;
        Intervals::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Intervals, ResultsError> {
        let mut lines = text.lines();
        let header = lines.next().ok_or_else(|| {
            ResultsError::malformed(path, "cqlbench intervals.csv", "it is empty")
        })?;
        let columns = Columns {
            names: header.split(',').collect(),
            path,
        };
        let rows = lines
            .filter(|l| !l.is_empty())
            .map(|line| {
                let fields: Vec<&str> = line.split(',').collect();
                if fields.len() != columns.names.len() {
                    return Err(ResultsError::malformed(
                        path,
                        "cqlbench intervals.csv",
                        format!("row of {} fields: {line}", fields.len()),
                    ));
                }
                Cells {
                    fields,
                    line,
                    columns: &columns,
                }
                .row()
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Intervals {
            header: header.to_string(),
            rows,
        })
    }

    /// The path of `DIR/intervals.csv`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(INTERVALS_FILE)
    }
}
