//! The analysis result: serialised as the `--json` document and rendered for humans.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Report {
    /// `unified` (JDK 9+ `-Xlog`) or `jdk8` (`-XX:+PrintGCDetails`).
    pub format: String,
    pub jvm: JvmReport,
    /// Seconds from the first to the last timestamp; `null` when the log has no timestamps.
    pub span_s: Option<f64>,
    pub lines: u64,
    pub unparsed_lines: u64,
    /// JDK 8 collections whose text could not be put back together: begun and never closed, or
    /// closing text whose beginning was not found. Each may be a pause missing from the figures.
    pub unfinished_collections: u64,
    pub pauses: PauseReport,
    pub safepoints: Option<SafepointReport>,
    pub time_sampled: Option<TimeSampledReport>,
    pub concurrent: Option<ConcurrentReport>,
    /// MiB/s the application allocated, from heap occupancy before each collection minus after the previous one.
    pub allocation_rate_mb_s: Option<f64>,
    pub heap: Option<HeapReport>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JvmReport {
    pub version: Option<String>,
    pub collector: Option<String>,
    pub generational: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KindReport {
    pub count: u64,
    pub total_ms: f64,
    pub max_ms: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PauseReport {
    /// `pause lines`, or `safepoint operations` when the log has no pause lines but names GC safepoints.
    pub source: String,
    pub count: u64,
    pub total_ms: f64,
    pub max_ms: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub by_kind: BTreeMap<String, KindReport>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SafepointReport {
    pub count: u64,
    pub stopped_total_ms: f64,
    pub stopped_max_ms: f64,
    pub stopped_p50_ms: f64,
    pub stopped_p99_ms: f64,
    pub stopped_p999_ms: f64,
    /// Time to safepoint: `Reaching safepoint` (JDK 17+) or `Stopping threads took` (JDK 8–16).
    pub ttsp_total_ms: f64,
    pub ttsp_max_ms: f64,
    pub ttsp_p50_ms: f64,
    pub ttsp_p99_ms: f64,
    pub ttsp_p999_ms: f64,
    pub by_operation: BTreeMap<String, KindReport>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TimeSampledReport {
    /// The stopped intervals used: `safepoints` when the log has them (they contain the pauses), else `pauses`.
    pub source: String,
    pub paused_fraction: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub p9999_ms: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConcurrentReport {
    /// Wall time during which at least one concurrent phase ran.
    pub total_s: f64,
    /// Highest share of a one-minute window (from the log's start) spent in concurrent phases.
    pub share_per_minute_max: f64,
    pub share_per_minute_mean: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HeapReport {
    pub max_before_mb: f64,
    pub max_after_mb: f64,
    pub max_capacity_mb: Option<f64>,
}

fn optional(value: Option<f64>, unit: &str) -> String {
    value.map_or_else(|| "n/a".to_owned(), |v| format!("{v:.3}{unit}"))
}

impl Report {
    /// The JVM line and the warning about collections that could not be put back together.
    fn fmt_jvm(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let jvm = &self.jvm;
        writeln!(
            f,
            "JVM: {} {}{} ({} log), span {}, {} lines ({} not understood)",
            jvm.version.as_deref().unwrap_or("(version not logged)"),
            jvm.collector.as_deref().unwrap_or("(collector unknown)"),
            if jvm.generational {
                " generational"
            } else {
                ""
            },
            self.format,
            optional(self.span_s, " s"),
            self.lines,
            self.unparsed_lines
        )?;
        if self.unfinished_collections > 0 {
            writeln!(
                f,
                "Warning: {} collection(s) could not be put back together from their lines (begun and never closed, or closed without a beginning): pauses may be missing",
                self.unfinished_collections
            )?;
        }
        Ok(())
    }

    /// The pauses, then one line per kind.
    fn fmt_pauses(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pauses = &self.pauses;
        writeln!(
            f,
            "Pauses ({}): {} totalling {:.3} ms; max {:.3} ms, p50 {:.3} ms, p99 {:.3} ms, p99.9 {:.3} ms",
            pauses.source, pauses.count, pauses.total_ms, pauses.max_ms, pauses.p50_ms, pauses.p99_ms, pauses.p999_ms
        )?;
        // Nested collections have long names (`Young (promotion failed) + Full`): the column fits them.
        let width = pauses
            .by_kind
            .keys()
            .map(|kind| kind.chars().count())
            .max()
            .unwrap_or(0)
            .max(24);
        for (kind, stats) in &pauses.by_kind {
            writeln!(
                f,
                "  {kind:<width$} {:>8} × total {:>12.3} ms  max {:>10.3} ms",
                stats.count, stats.total_ms, stats.max_ms
            )?;
        }
        Ok(())
    }

    /// The safepoints with their time to safepoint, then one line per operation.
    fn fmt_safepoints(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(sp) = &self.safepoints else {
            return writeln!(f, "Safepoints: not in this log (add `safepoint` to -Xlog)");
        };
        writeln!(
            f,
            "Safepoints: {} stopping the application {:.3} ms in total; max {:.3} ms, p99 {:.3} ms, p99.9 {:.3} ms",
            sp.count, sp.stopped_total_ms, sp.stopped_max_ms, sp.stopped_p99_ms, sp.stopped_p999_ms
        )?;
        writeln!(
            f,
            "  time to safepoint: total {:.3} ms, max {:.3} ms, p99 {:.3} ms, p99.9 {:.3} ms",
            sp.ttsp_total_ms, sp.ttsp_max_ms, sp.ttsp_p99_ms, sp.ttsp_p999_ms
        )?;
        for (operation, stats) in &sp.by_operation {
            writeln!(
                f,
                "  {operation:<32} {:>8} × total {:>12.3} ms  max {:>10.3} ms",
                stats.count, stats.total_ms, stats.max_ms
            )?;
        }
        Ok(())
    }

    /// The time-sampled stop, the concurrent share, the heap.
    fn fmt_rest(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.time_sampled {
            Some(ts) => writeln!(
                f,
                "At a random instant (from {}): stopped {:.4} % of the time; remaining stop p99 {:.3} ms, p99.9 {:.3} ms, p99.99 {:.3} ms",
                ts.source,
                ts.paused_fraction * 100.0,
                ts.p99_ms,
                ts.p999_ms,
                ts.p9999_ms
            )?,
            None => writeln!(f, "At a random instant: needs timestamps and at least one pause")?,
        }
        if let Some(concurrent) = &self.concurrent {
            writeln!(
                f,
                "Concurrent GC: {:.3} s of wall time; per minute max {:.1} %, mean {:.1} %",
                concurrent.total_s,
                concurrent.share_per_minute_max * 100.0,
                concurrent.share_per_minute_mean * 100.0
            )?;
        }
        if let Some(heap) = &self.heap {
            writeln!(
                f,
                "Heap: max before GC {:.1} MiB, max after GC {:.1} MiB, capacity {}; allocation {}",
                heap.max_before_mb,
                heap.max_after_mb,
                optional(heap.max_capacity_mb, " MiB"),
                optional(self.allocation_rate_mb_s, " MiB/s")
            )?;
        }
        Ok(())
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fmt_jvm(f)?;
        self.fmt_pauses(f)?;
        self.fmt_safepoints(f)?;
        self.fmt_rest(f)
    }
}
