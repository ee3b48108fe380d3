//! Result files, written while the run goes (Ctrl-C or a crash loses nothing already measured), and the
//! final terminal table.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;
use serde::Serialize;

use crate::recorder::{ErrorCounts, OpStats};
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

/// `ops.<type>` in summary.json.
#[derive(Debug, Clone, Serialize)]
pub struct OpSummary {
    /// Completed operations, failed ones included.
    pub count: u64,
    /// Completed without error.
    pub ok: u64,
    pub errors: ErrorCounts,
    pub ops_per_s: f64,
    /// Completion minus intended start (coordinated-omission corrected).
    pub latency_ms: Percentiles,
    /// Completion minus actual send.
    pub service_time_ms: Percentiles,
    /// Mean of the corrected p99 over the `p99_window_s` windows ("Average p99" in the seed tables).
    pub avg_p99_ms: f64,
    /// Maximum of the windowed corrected p99s ("Max p99").
    pub max_p99_ms: f64,
    pub p99_windows: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClientSummary {
    /// Lateness of a 1 ms timer on the client's own runtime (jHiccup-style): how long the client itself
    /// could not run. Includes up to 1 ms of timer resolution.
    pub hiccup_ms: Percentiles,
    /// Operations that were due while all in-flight slots were busy (their wait counts in their latency).
    pub concurrency_limited_ops: u64,
    /// Scheduled operations never sent because the run was stopped or the drain deadline passed.
    pub unsent_ops: u64,
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

/// summary.json.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub workload: String,
    /// `null` when unthrottled.
    pub target_rate: Option<f64>,
    pub achieved_rate: f64,
    /// `true` when the achieved rate stayed within 1% of the target.
    pub rate_kept: bool,
    pub rate_note: String,
    pub duration_s: f64,
    /// `running` while the run goes, then `complete` or `interrupted`.
    pub status: String,
    pub p99_window_s: f64,
    pub ops: BTreeMap<String, OpSummary>,
    pub client: ClientSummary,
    pub warmup: Option<PhaseSummary>,
    pub populate: Option<PhaseSummary>,
    pub settings: serde_json::Value,
}

/// The files of one run directory.
pub struct ResultFiles {
    dir: PathBuf,
    intervals: BufWriter<File>,
    hlogs: Vec<(OpType, bool, File)>,
    serializer: V2DeflateSerializer,
}

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
        writeln!(
            intervals,
            "elapsed_s,phase,op,count,errors,offered_ops_s,achieved_ops_s,p50_ms,p90_ms,p99_ms,p999_ms,max_ms,service_p50_ms,service_p99_ms,service_max_ms,client_hiccup_max_ms"
        )
        .map_err(io_error(&csv_path))?;
        intervals.flush().map_err(io_error(&csv_path))?;
        let mut serializer = V2DeflateSerializer::new();
        let mut hlogs = Vec::new();
        for op in OpType::ALL {
            for service in [false, true] {
                let name = if service {
                    format!("{}.service.hlog", op.name())
                } else {
                    format!("{}.hlog", op.name())
                };
                let path = dir.join(name);
                let mut file = File::create(&path).map_err(io_error(&path))?;
                let what = if service {
                    "service time (completion - actual send)"
                } else {
                    "latency corrected for coordinated omission (completion - intended start)"
                };
                IntervalLogWriterBuilder::new()
                    .add_comment(&format!("cqlbench {} {what}", op.name()))
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
                hlogs.push((op, service, file));
            }
        }
        Ok(ResultFiles {
            dir: dir.to_path_buf(),
            intervals,
            hlogs,
            serializer,
        })
    }

    /// Appends one interval: a csv row per operation type (and phase), and the measured histograms to
    /// the interval logs. `since_start` is the interval's start relative to the run's start.
    #[allow(clippy::too_many_arguments)]
    pub fn write_interval(
        &mut self,
        since_start: Duration,
        length: Duration,
        phase: &str,
        stats: &[OpStats; 2],
        offered: f64,
        hiccup_max_ms: f64,
        write_hlog: bool,
    ) -> Result<(), LoadError> {
        let secs = length.as_secs_f64().max(1e-9);
        let csv_path = self.dir.join("intervals.csv");
        for op in OpType::ALL {
            let s = &stats[op.index()];
            if s.count == 0 && offered == 0.0 {
                continue;
            }
            let l = Percentiles::of(&s.latency);
            let sv = Percentiles::of(&s.service);
            writeln!(
                self.intervals,
                "{:.3},{phase},{},{},{},{:.1},{:.1},{},{},{},{},{},{},{},{},{}",
                (since_start + length).as_secs_f64(),
                op.name(),
                s.count,
                s.errors.total(),
                offered,
                s.count as f64 / secs,
                l.p50,
                l.p90,
                l.p99,
                l.p999,
                l.max,
                sv.p50,
                sv.p99,
                sv.max,
                hiccup_max_ms
            )
            .map_err(io_error(&csv_path))?;
        }
        self.intervals.flush().map_err(io_error(&csv_path))?;
        if write_hlog {
            for (op, service, file) in &mut self.hlogs {
                let s = &stats[op.index()];
                let h = if *service { &s.service } else { &s.latency };
                // A builder without headers writes nothing itself: this only appends the interval.
                let mut writer = IntervalLogWriterBuilder::new()
                    .begin_log_with(file, &mut self.serializer)
                    .map_err(|source| LoadError::Io {
                        path: self.dir.clone(),
                        source,
                    })?;
                writer
                    .write_histogram(h, since_start, length, None)
                    .map_err(|e| LoadError::Io {
                        path: self.dir.join(format!("{}.hlog", op.name())),
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

/// The terminal table: throughput and corrected percentiles per operation type, like the seed tables.
pub fn format_result_table(summary: &Summary) -> String {
    let mut out = String::new();
    let target = match summary.target_rate {
        Some(rate) => format!("target {rate:.0} ops/s"),
        None => "unthrottled".to_string(),
    };
    out.push_str(&format!(
        "{} for {:.1} s, {target}, achieved {:.1} ops/s — {}\n",
        summary.workload, summary.duration_s, summary.achieved_rate, summary.rate_note
    ));
    out.push_str(&format!(
        "{:<6} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8}\n",
        "op",
        "count",
        "ops/s",
        "p50 ms",
        "p99 ms",
        "p99.9 ms",
        "max ms",
        "avg p99",
        "max p99",
        "errors"
    ));
    for (name, op) in &summary.ops {
        if op.count == 0 {
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
            fmt_ms(op.avg_p99_ms),
            fmt_ms(op.max_p99_ms),
            op.errors.total()
        ));
    }
    out.push_str("latencies are corrected for coordinated omission (completion - intended start); service time p99:");
    for (name, op) in &summary.ops {
        if op.count > 0 {
            out.push_str(&format!(" {name} {} ms", fmt_ms(op.service_time_ms.p99)));
        }
    }
    out.push('\n');
    out.push_str(&format!(
        "client: own send lateness p99 {} ms, max {} ms; {} ops waited for a free in-flight slot (limit {}){}\n",
        fmt_ms(summary.client.hiccup_ms.p99),
        fmt_ms(summary.client.hiccup_ms.max),
        summary.client.concurrency_limited_ops,
        summary.client.max_in_flight,
        if summary.client.unsent_ops > 0 {
            format!("; {} scheduled ops never sent", summary.client.unsent_ops)
        } else {
            String::new()
        }
    ));
    out
}
