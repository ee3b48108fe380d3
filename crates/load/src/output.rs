//! Result files, written while the run goes (Ctrl-C or a crash loses nothing already measured), and the
//! final terminal table.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use cqlbench_results::hlog::{HlogKind, HlogWriter};
use cqlbench_results::{
    IntervalRow, Percentiles, SlowOp, Summary, INTERVALS_FILE, INTERVAL_COLUMNS, SLOW_OPS_FILE,
    SLOW_OP_COLUMNS,
};

use crate::recorder::{OpStats, SlowOp as RecordedSlowOp};
use crate::LoadError;

/// One reporting interval of one phase, as the engine hands it over.
pub struct Interval<'a> {
    /// End of the interval, seconds from the start of the measured phase (negative in the warm-up).
    pub elapsed_s: f64,
    pub length: Duration,
    pub measured: bool,
    /// By operation index.
    pub stats: &'a [OpStats],
    /// What the schedule put in this interval, over all operation types, per second.
    pub scheduled_ops_s: f64,
    pub hiccup_max_ms: f64,
    pub write_hlog: bool,
}

impl Interval<'_> {
    /// The intervals.csv row of operation `op`, named `name`.
    fn row(&self, op: usize, name: &str) -> IntervalRow {
        let s = &self.stats[op];
        let secs = self.length.as_secs_f64().max(1e-9);
        let service = Percentiles::of(&s.service);
        let failed = Percentiles::of(&s.failed_latency);
        IntervalRow {
            elapsed_s: self.elapsed_s,
            measured: self.measured,
            op: name.to_string(),
            count: s.count,
            errors: s.errors.total(),
            sent_ops_s: s.sent as f64 / secs,
            achieved_ops_s: s.count as f64 / secs,
            latency_ms: Percentiles::of(&s.latency),
            service_p50_ms: service.p50,
            service_p99_ms: service.p99,
            service_max_ms: service.max,
            failed_p99_ms: failed.p99,
            failed_max_ms: failed.max,
            error_kinds: s.errors,
            scheduled_all_ops_s: self.scheduled_ops_s,
            client_hiccup_max_ms: Some(self.hiccup_max_ms),
            percentiles_kept: true,
        }
    }
}

/// The files of one run directory.
pub struct ResultFiles {
    dir: PathBuf,
    intervals: BufWriter<File>,
    /// The workload's operation names, by operation index.
    ops: Vec<String>,
    /// (operation index, kind, log).
    hlogs: Vec<(usize, HlogKind, HlogWriter)>,
    slow_ops: Option<BufWriter<File>>,
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> LoadError + '_ {
    move |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl ResultFiles {
    /// Creates the files of a run of the operations named `ops` (by operation index).
    pub fn create(dir: &Path, start: SystemTime, ops: &[String]) -> Result<Self, LoadError> {
        std::fs::create_dir_all(dir).map_err(io_error(dir))?;
        let csv_path = dir.join(INTERVALS_FILE);
        let mut intervals = BufWriter::new(File::create(&csv_path).map_err(io_error(&csv_path))?);
        writeln!(intervals, "{INTERVAL_COLUMNS}").map_err(io_error(&csv_path))?;
        intervals.flush().map_err(io_error(&csv_path))?;
        let mut hlogs = Vec::new();
        for (op, name) in ops.iter().enumerate() {
            for kind in HlogKind::ALL {
                let comments = [
                    format!("cqlbench {name} {}", kind.description()),
                    "values and Interval_Max in microseconds".to_string(),
                ];
                let path = dir.join(kind.file_name(name));
                hlogs.push((op, kind, HlogWriter::create(&path, &comments, start)?));
            }
        }
        Ok(ResultFiles {
            dir: dir.to_path_buf(),
            intervals,
            ops: ops.to_vec(),
            hlogs,
            slow_ops: None,
        })
    }

    /// Appends successful operations slower than the running threshold to slow-ops.csv (created at
    /// the first call).
    pub fn write_slow_ops(
        &mut self,
        ops: &[RecordedSlowOp],
        measure_start: Instant,
        nodes: &[SocketAddr],
    ) -> Result<(), LoadError> {
        let path = self.dir.join(SLOW_OPS_FILE);
        if self.slow_ops.is_none() {
            let mut file = BufWriter::new(File::create(&path).map_err(io_error(&path))?);
            writeln!(file, "{SLOW_OP_COLUMNS}").map_err(io_error(&path))?;
            self.slow_ops = Some(file);
        }
        let Some(out) = self.slow_ops.as_mut() else {
            return Ok(());
        };
        let since = |t: Instant| {
            t.saturating_duration_since(measure_start).as_secs_f64()
                - measure_start.saturating_duration_since(t).as_secs_f64()
        };
        for op in ops {
            let row = SlowOp {
                intended_s: since(op.intended),
                done_s: since(op.done),
                op: self.ops[op.op.index()].clone(),
                latency_ms: op.done.saturating_duration_since(op.intended).as_secs_f64() * 1000.0,
                node: nodes
                    .get(usize::from(op.node))
                    .map_or(String::new(), |a| a.ip().to_string()),
            };
            writeln!(out, "{}", row.csv_line()).map_err(io_error(&path))?;
        }
        out.flush().map_err(io_error(&path))
    }

    /// Appends one interval: a csv row per operation type (and phase), and the measured histograms to
    /// the interval logs.
    pub fn write_interval(&mut self, interval: &Interval) -> Result<(), LoadError> {
        let csv_path = self.dir.join(INTERVALS_FILE);
        for (op, name) in self.ops.iter().enumerate() {
            let s = &interval.stats[op];
            let active = s.count + s.errors.total() + s.sent > 0;
            if !active && interval.scheduled_ops_s == 0.0 {
                continue;
            }
            writeln!(self.intervals, "{}", interval.row(op, name).csv_line())
                .map_err(io_error(&csv_path))?;
        }
        self.intervals.flush().map_err(io_error(&csv_path))?;
        if interval.write_hlog {
            // The interval starts `length` before its end (never before the measured phase).
            let end = Duration::from_secs_f64(interval.elapsed_s.max(0.0));
            let since_start = end.saturating_sub(interval.length);
            for (op, kind, log) in &mut self.hlogs {
                let stats = &interval.stats[*op];
                let h = match kind {
                    HlogKind::Latency => &stats.latency,
                    HlogKind::Service => &stats.service,
                    HlogKind::Failed => &stats.failed_latency,
                };
                log.append(h, since_start, interval.length)?;
            }
        }
        Ok(())
    }

    /// Replaces summary.json atomically, so a reader never sees half a file.
    pub fn write_summary(&self, summary: &Summary) -> Result<(), LoadError> {
        Ok(summary.write(&self.dir)?)
    }
}

/// Milliseconds with as many decimals as matter at their size; "–" where there is no value.
fn fmt_ms(v: Option<f64>) -> String {
    cqlbench_results::shown(v, |v| {
        if v >= 100.0 {
            format!("{v:.0}")
        } else if v >= 10.0 {
            format!("{v:.1}")
        } else {
            format!("{v:.2}")
        }
    })
}

/// The terminal table: throughput and corrected percentiles of the successful operations per
/// operation type, like the seed tables, and the failed ones apart.
pub fn format_result_table(summary: &Summary) -> String {
    let mut out = String::new();
    let target = match summary.target_rate {
        Some(rate) => format!("target {rate:.0} ops/s"),
        None => "unthrottled".to_string(),
    };
    out.push_str(&format!(
        "{} for {:.1} s, {target}, achieved {:.1} successful ops/s — {}\n",
        summary.workload, summary.duration_s, summary.achieved_rate, summary.rate_note
    ));
    // Operation names come from the workload; the column is as wide as the longest.
    let width = summary
        .ops
        .keys()
        .map(String::len)
        .max()
        .unwrap_or(0)
        .max(6);
    out.push_str(&format!(
        "{:<width$} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8}\n",
        "op",
        "ok",
        "ok/s",
        "p50 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
        "avg p99",
        "max p99",
        "failed"
    ));
    for (name, op) in &summary.ops {
        if op.count + op.errors.total() == 0 {
            continue;
        }
        out.push_str(&format!(
            "{:<width$} {:>10} {:>10.1} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8}\n",
            name,
            op.count,
            op.ops_per_s,
            fmt_ms(op.latency_ms.p50),
            fmt_ms(op.latency_ms.p99),
            fmt_ms(op.latency_ms.p999),
            fmt_ms(op.latency_ms.max),
            fmt_ms(op.avg_p99_ms),
            fmt_ms(op.max_p99_ms),
            op.errors.total()
        ));
    }
    out.push_str("latencies of successful operations, corrected for coordinated omission (completion - intended start); service time p99:");
    for (name, op) in &summary.ops {
        if op.count > 0 {
            out.push_str(&format!(" {name} {} ms", fmt_ms(op.service_time_ms.p99)));
        }
    }
    out.push('\n');
    out.push_str(&outcome_lines(summary));
    out.push_str(&format!(
        "client: own send lateness p99 {} ms, max {} ms; {} ops waited for a free in-flight slot (limit {}){}{}\n",
        fmt_ms(summary.client.hiccup_ms.p99),
        fmt_ms(summary.client.hiccup_ms.max),
        summary.client.concurrency_limited_ops,
        summary.client.max_in_flight,
        if summary.client.unsent_ops > 0 {
            format!("; {} scheduled ops were due but never sent", summary.client.unsent_ops)
        } else {
            String::new()
        },
        if summary.client.reprepared_ops > 0 {
            format!("; {} ops re-sent after a re-prepare", summary.client.reprepared_ops)
        } else {
            String::new()
        }
    ));
    if let Some(validity) = &summary.validity {
        out.push_str(&validity_line(validity));
    }
    out
}

/// A line per operation with conditional writes not applied, per operation that read in pages, and
/// per operation with failures.
fn outcome_lines(summary: &Summary) -> String {
    let mut out = String::new();
    for (name, op) in &summary.ops {
        if op.pages > 0 && op.count > 0 {
            let per_op = |n: u64| n as f64 / op.count as f64;
            out.push_str(&format!(
                "{name}: {:.1} pages and {:.1} rows per operation ({} pages, {} rows)\n",
                per_op(op.pages),
                per_op(op.rows),
                op.pages,
                op.rows
            ));
        }
    }
    for (name, op) in &summary.ops {
        if op.not_applied > 0 {
            out.push_str(&format!(
                "{name}: {} of the successful operations were not applied (their IF condition did not hold)\n",
                op.not_applied
            ));
        }
    }
    for (name, op) in &summary.ops {
        if op.errors.total() > 0 {
            out.push_str(&format!(
                "{name}: {} — failure known after p50 {} ms, p99 {} ms, max {} ms\n",
                op.errors.describe(),
                fmt_ms(op.failed_latency_ms.p50),
                fmt_ms(op.failed_latency_ms.p99),
                fmt_ms(op.failed_latency_ms.max)
            ));
            if let Some(message) = &op.first_error {
                let hint = crate::session::setting_hint(message);
                out.push_str(&format!(
                    "{name}: the server's first refusal: {message}{hint}\n"
                ));
            }
        }
    }
    out
}

/// The verdict on the machine's conditions, as the last line of the table.
fn validity_line(validity: &cqlbench_results::Validity) -> String {
    if validity.doubtful {
        return format!("DOUBTFUL result: {}\n", validity.reasons.join("; "));
    }
    match &validity.evidence {
        Some(e) => format!(
            "machine quiet while measured: other processes {:.0} % of the CPU, steal {:.0} %, client {:.0} % of a core (summary.json: validity)\n",
            e.other_cpu * 100.0,
            e.steal * 100.0,
            e.client_cpu_cores * 100.0
        ),
        None => String::new(),
    }
}
