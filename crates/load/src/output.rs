//! Result files, written while the run goes (Ctrl-C or a crash loses nothing already measured), and the
//! final terminal table.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;
use serde::Serialize;

use crate::recorder::{ErrorCounts, OpStats, SlowOp};
use crate::workload::OpType;
use crate::LoadError;

/// Percentiles in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

fn ms(micros: u64) -> f64 {
    (micros as f64 / 1000.0 * 1000.0).round() / 1000.0
}

impl Percentiles {
    pub fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Percentiles::default();
        }
        Percentiles {
            p50: ms(h.value_at_quantile(0.50)),
            p90: ms(h.value_at_quantile(0.90)),
            p99: ms(h.value_at_quantile(0.99)),
            p999: ms(h.value_at_quantile(0.999)),
            max: ms(h.max()),
        }
    }
}

/// `ops.<type>` in summary.json. Successful operations alone make the latencies, the rate and the
/// windowed p99s; failed ones (unsent included) are counted by kind and have their own latency.
#[derive(Debug, Clone, Serialize)]
pub struct OpSummary {
    /// Successful operations.
    pub count: u64,
    /// Failed operations by kind (`unsent`: due on the schedule, never sent).
    pub errors: ErrorCounts,
    /// Operations the client released (sent, or failed at once for want of a connection).
    pub sent: u64,
    /// Successful operations per second.
    pub ops_per_s: f64,
    /// Successful operations: completion minus intended start (coordinated-omission corrected).
    pub latency_ms: Percentiles,
    /// Successful operations: completion minus actual send.
    pub service_time_ms: Percentiles,
    /// Failed operations: the moment the failure was known (a timeout at its deadline, a refused
    /// connection at once, an unsent operation when the run gave up on it) minus intended start.
    pub failed_latency_ms: Percentiles,
    /// Mean of the corrected p99 over the `p99_window_s` windows, weighted by window length (a run's
    /// last window may be shorter) — "Average p99" in the seed tables. `null` without windows.
    pub avg_p99_ms: Option<f64>,
    /// Maximum of the windowed corrected p99s ("Max p99"); `null` without windows.
    pub max_p99_ms: Option<f64>,
    pub p99_windows: usize,
    /// Why there is no windowed p99, when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p99_note: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClientSummary {
    /// The client's own send lateness (actual send - intended start, for operations that had a free
    /// in-flight slot): how long the client itself could not run.
    pub hiccup_ms: Percentiles,
    /// Time between consecutive releases of operations on one client thread (rate mode): the real
    /// spacing of the sends, which `--tick` sets.
    pub send_gap_ms: Percentiles,
    /// Operations that were due while all in-flight slots were busy (their wait counts in their latency).
    pub concurrency_limited_ops: u64,
    /// Operations re-sent after the server had forgotten the prepared statement (re-prepared on the
    /// same connection; the extra round trip counts in their latency).
    pub reprepared_ops: u64,
    /// Operations on the schedule (warm-up and measured), with a rate and a count or duration.
    pub scheduled_ops: Option<u64>,
    /// Scheduled operations due but never sent (the server fell too far behind, the run was stopped
    /// or a client thread failed); also counted in `ops.<type>.errors.unsent`.
    pub unsent_ops: u64,
    /// Scheduled operations not yet due when the run was stopped (not part of the result).
    pub cancelled_ops: u64,
    pub max_in_flight: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct PhaseSummary {
    pub count: u64,
    pub errors: u64,
    pub duration_s: f64,
    pub ops_per_s: f64,
    pub latency_p99_ms: f64,
}

/// A run in one line of JSON (`--brief-to`): what an orchestrator needs without the result directory,
/// small enough for a Kubernetes termination message (4 KiB).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Brief {
    /// `complete`, `interrupted` or `failed`.
    pub status: String,
    pub failure: Option<String>,
    pub client_id: Option<u64>,
    pub clients: u64,
    pub target_rate: Option<f64>,
    /// Successful operations per second of the measured phase.
    pub achieved_rate: f64,
    pub rate_kept: bool,
    pub successful_ops: u64,
    /// Failed operations of every kind, unsent ones included.
    pub failed_ops: u64,
    pub measured_start_unix_s: f64,
    pub duration_s: f64,
}

/// Longest failure text kept in a brief: the whole line must stay under 4 KiB.
const BRIEF_FAILURE_CHARS: usize = 2000;

impl Brief {
    pub fn of(summary: &Summary) -> Brief {
        Brief {
            status: summary.status.clone(),
            failure: summary.failure.as_deref().map(clip_failure),
            client_id: summary.client_id,
            clients: summary.clients,
            target_rate: summary.target_rate,
            achieved_rate: summary.achieved_rate,
            rate_kept: summary.rate_kept,
            successful_ops: summary.ops.values().map(|o| o.count).sum(),
            failed_ops: summary.ops.values().map(|o| o.errors.total()).sum(),
            measured_start_unix_s: summary.measured_start_unix_s,
            duration_s: summary.duration_s,
        }
    }

    /// A run that ended before it had a summary (bad input, no connection).
    pub fn failed(reason: &str, client_id: Option<u64>, clients: u64) -> Brief {
        Brief {
            status: "failed".into(),
            failure: Some(clip_failure(reason)),
            client_id,
            clients,
            target_rate: None,
            achieved_rate: 0.0,
            rate_kept: false,
            successful_ops: 0,
            failed_ops: 0,
            measured_start_unix_s: 0.0,
            duration_s: 0.0,
        }
    }

    /// Writes the brief as one line (`--brief-to`).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let line = serde_json::to_string(self).map_err(std::io::Error::other)?;
        std::fs::write(path, line + "\n")
    }
}

fn clip_failure(text: &str) -> String {
    match text.char_indices().nth(BRIEF_FAILURE_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// summary.json.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub workload: String,
    /// `null` when unthrottled.
    pub target_rate: Option<f64>,
    /// Successful operations per second of the measured phase.
    pub achieved_rate: f64,
    /// `true` when the successful rate stayed within 1% of the target and no operation failed.
    pub rate_kept: bool,
    pub rate_note: String,
    pub duration_s: f64,
    /// `running` while the run goes, then `complete`, `interrupted` or `failed`.
    pub status: String,
    /// Why the run failed (a client thread died), when it did.
    pub failure: Option<String>,
    pub p99_window_s: f64,
    pub ops: BTreeMap<String, OpSummary>,
    pub client: ClientSummary,
    pub warmup: Option<PhaseSummary>,
    pub populate: Option<PhaseSummary>,
    pub settings: serde_json::Value,
    /// Wall-clock time the measured phase began (seconds since the epoch, the clock of the GC logs'
    /// decorators): with `duration_s`, the window that server-side figures are lined up with.
    pub measured_start_unix_s: f64,
    /// Load clients sharing the schedule (`--clients`); 1 for a lone client.
    pub clients: u64,
    /// This client's number (`--client-id`); `null` in a merge of all clients.
    pub client_id: Option<u64>,
    /// The common start of the schedule (`--start-at`), seconds since the epoch; `null` without it.
    pub start_at: Option<f64>,
}

/// One row group of intervals.csv: one phase's operations over one reporting interval.
pub struct IntervalRow<'a> {
    /// End of the interval, seconds from the start of the measured phase (negative in the warm-up).
    pub elapsed_s: f64,
    pub length: Duration,
    pub phase: &'a str,
    pub stats: &'a [OpStats; 2],
    /// What the schedule put in this interval, over all operation types, per second.
    pub scheduled_ops_s: f64,
    pub hiccup_max_ms: f64,
    pub write_hlog: bool,
}

/// Which histogram an interval log holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HlogKind {
    Latency,
    Service,
    Failed,
}

impl HlogKind {
    const ALL: [HlogKind; 3] = [HlogKind::Latency, HlogKind::Service, HlogKind::Failed];

    fn file_name(self, op: OpType) -> String {
        match self {
            HlogKind::Latency => format!("{}.hlog", op.name()),
            HlogKind::Service => format!("{}.service.hlog", op.name()),
            HlogKind::Failed => format!("{}.failed.hlog", op.name()),
        }
    }

    fn description(self) -> &'static str {
        match self {
            HlogKind::Latency => {
                "successful operations: latency corrected for coordinated omission (completion - intended start)"
            }
            HlogKind::Service => "successful operations: service time (completion - actual send)",
            HlogKind::Failed => {
                "failed operations, unsent ones included: failure known - intended start"
            }
        }
    }

    fn of(self, stats: &OpStats) -> &Histogram<u64> {
        match self {
            HlogKind::Latency => &stats.latency,
            HlogKind::Service => &stats.service,
            HlogKind::Failed => &stats.failed_latency,
        }
    }
}

/// The columns of intervals.csv.
pub const INTERVAL_COLUMNS: &str = "elapsed_s,phase,op,count,errors,sent_ops_s,achieved_ops_s,\
p50_ms,p90_ms,p99_ms,p999_ms,max_ms,service_p50_ms,service_p99_ms,service_max_ms,\
failed_p99_ms,failed_max_ms,timeout,unavailable,overloaded,other,unsent,\
scheduled_all_ops_s,client_hiccup_max_ms";

/// The files of one run directory.
pub struct ResultFiles {
    dir: PathBuf,
    intervals: BufWriter<File>,
    hlogs: Vec<(OpType, HlogKind, File)>,
    serializer: V2DeflateSerializer,
    slow_ops: Option<BufWriter<File>>,
}

/// The columns of slow-ops.csv: times in seconds from the measured start (`measured_start_unix_s` in
/// summary.json is its wall-clock time), the node whose connection carried the operation.
pub const SLOW_OP_COLUMNS: &str = "intended_s,done_s,op,latency_ms,node";

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> LoadError + '_ {
    move |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl ResultFiles {
    pub fn create(dir: &Path, start: SystemTime) -> Result<Self, LoadError> {
        std::fs::create_dir_all(dir).map_err(io_error(dir))?;
        let csv_path = dir.join("intervals.csv");
        let mut intervals = BufWriter::new(File::create(&csv_path).map_err(io_error(&csv_path))?);
        writeln!(intervals, "{INTERVAL_COLUMNS}").map_err(io_error(&csv_path))?;
        intervals.flush().map_err(io_error(&csv_path))?;
        let mut serializer = V2DeflateSerializer::new();
        let mut hlogs = Vec::new();
        for op in OpType::ALL {
            for kind in HlogKind::ALL {
                let path = dir.join(kind.file_name(op));
                let mut file = File::create(&path).map_err(io_error(&path))?;
                IntervalLogWriterBuilder::new()
                    .add_comment(&format!("cqlbench {} {}", op.name(), kind.description()))
                    .add_comment("values and Interval_Max in microseconds")
                    .with_start_time(start)
                    .with_base_time(start)
                    .begin_log_with(&mut file, &mut serializer)
                    .and_then(|mut w| {
                        w.write_comment(
                            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"",
                        )
                    })
                    .map_err(io_error(&path))?;
                hlogs.push((op, kind, file));
            }
        }
        Ok(ResultFiles {
            dir: dir.to_path_buf(),
            intervals,
            hlogs,
            serializer,
            slow_ops: None,
        })
    }

    /// Appends successful operations slower than the running threshold to slow-ops.csv (created at
    /// the first call).
    pub fn write_slow_ops(
        &mut self,
        ops: &[SlowOp],
        measure_start: Instant,
        nodes: &[SocketAddr],
    ) -> Result<(), LoadError> {
        let path = self.dir.join("slow-ops.csv");
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
            let node = nodes
                .get(usize::from(op.node))
                .map_or(String::new(), |a| a.ip().to_string());
            writeln!(
                out,
                "{:.6},{:.6},{},{:.3},{node}",
                since(op.intended),
                since(op.done),
                op.op.name(),
                op.done.saturating_duration_since(op.intended).as_secs_f64() * 1000.0
            )
            .map_err(io_error(&path))?;
        }
        out.flush().map_err(io_error(&path))
    }

    /// Appends one interval: a csv row per operation type (and phase), and the measured histograms to
    /// the interval logs.
    pub fn write_interval(&mut self, row: &IntervalRow) -> Result<(), LoadError> {
        let secs = row.length.as_secs_f64().max(1e-9);
        let csv_path = self.dir.join("intervals.csv");
        for op in OpType::ALL {
            let s = &row.stats[op.index()];
            let active = s.count + s.errors.total() + s.sent > 0;
            if !active && row.scheduled_ops_s == 0.0 {
                continue;
            }
            let l = Percentiles::of(&s.latency);
            let sv = Percentiles::of(&s.service);
            let f = Percentiles::of(&s.failed_latency);
            let e = &s.errors;
            writeln!(
                self.intervals,
                "{:.3},{},{},{},{},{:.1},{:.1},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.1},{}",
                row.elapsed_s,
                row.phase,
                op.name(),
                s.count,
                e.total(),
                s.sent as f64 / secs,
                s.count as f64 / secs,
                l.p50,
                l.p90,
                l.p99,
                l.p999,
                l.max,
                sv.p50,
                sv.p99,
                sv.max,
                f.p99,
                f.max,
                e.timeout,
                e.unavailable,
                e.overloaded,
                e.other,
                e.unsent,
                row.scheduled_ops_s,
                row.hiccup_max_ms
            )
            .map_err(io_error(&csv_path))?;
        }
        self.intervals.flush().map_err(io_error(&csv_path))?;
        if row.write_hlog {
            // The interval starts `length` before its end (never before the measured phase).
            let end = Duration::from_secs_f64(row.elapsed_s.max(0.0));
            let since_start = end.saturating_sub(row.length);
            for (op, kind, file) in &mut self.hlogs {
                let h = kind.of(&row.stats[op.index()]);
                // A builder without headers writes nothing itself: this only appends the interval.
                let mut writer = IntervalLogWriterBuilder::new()
                    .begin_log_with(file, &mut self.serializer)
                    .map_err(|source| LoadError::Io {
                        path: self.dir.clone(),
                        source,
                    })?;
                writer
                    .write_histogram(h, since_start, row.length, None)
                    .map_err(|e| LoadError::Io {
                        path: self.dir.join(kind.file_name(*op)),
                        source: std::io::Error::other(e.to_string()),
                    })?;
            }
        }
        Ok(())
    }

    /// Replaces summary.json atomically, so a reader never sees half a file.
    pub fn write_summary(&self, summary: &Summary) -> Result<(), LoadError> {
        let path = self.dir.join("summary.json");
        let tmp = self.dir.join(".summary.json.tmp");
        let text = serde_json::to_string_pretty(summary).map_err(|e| LoadError::Io {
            path: path.clone(),
            source: std::io::Error::other(e),
        })?;
        std::fs::write(&tmp, text + "\n").map_err(io_error(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io_error(&path))
    }
}

fn fmt_ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn fmt_opt_ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), fmt_ms)
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
    out.push_str(&format!(
        "{:<6} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8}\n",
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
            "{:<6} {:>10} {:>10.1} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8}\n",
            name,
            op.count,
            op.ops_per_s,
            fmt_ms(op.latency_ms.p50),
            fmt_ms(op.latency_ms.p99),
            fmt_ms(op.latency_ms.p999),
            fmt_ms(op.latency_ms.max),
            fmt_opt_ms(op.avg_p99_ms),
            fmt_opt_ms(op.max_p99_ms),
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
    for (name, op) in &summary.ops {
        if op.errors.total() > 0 {
            out.push_str(&format!(
                "{name}: {} — failure known after p50 {} ms, p99 {} ms, max {} ms\n",
                op.errors.describe(),
                fmt_ms(op.failed_latency_ms.p50),
                fmt_ms(op.failed_latency_ms.p99),
                fmt_ms(op.failed_latency_ms.max)
            ));
        }
    }
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
    out
}
