//! `summary.json`: one run's result (a lone client, one client of several, or their merge), and the
//! one-line brief an orchestrator reads (`--brief-to`).

use std::collections::BTreeMap;
use std::path::Path;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::version::{json_file, read_json, unversioned, Upgrade, FORMAT_VERSION};
use crate::ResultsError;

/// The summary's file name in a run directory.
pub const SUMMARY_FILE: &str = "summary.json";

/// Latency percentiles in milliseconds (µs resolution). `None` (`null`) where there is no operation to
/// take them from — never `0.0`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    #[serde(default)]
    pub p50: Option<f64>,
    #[serde(default)]
    pub p90: Option<f64>,
    #[serde(default)]
    pub p99: Option<f64>,
    #[serde(default)]
    pub p999: Option<f64>,
    #[serde(default)]
    pub max: Option<f64>,
}

/// Microseconds to milliseconds, rounded to the microsecond.
pub(crate) fn ms(micros: u64) -> f64 {
    (micros as f64).round() / 1000.0
}

impl Percentiles {
    /// No value: nothing was recorded.
    pub const NONE: Percentiles = Percentiles {
        p50: None,
        p90: None,
        p99: None,
        p999: None,
        max: None,
    };

    /// The percentiles of a histogram of microseconds; [`Percentiles::NONE`] when it is empty.
    pub fn of(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Percentiles::NONE;
        }
        Percentiles {
            p50: Some(ms(h.value_at_quantile(0.50))),
            p90: Some(ms(h.value_at_quantile(0.90))),
            p99: Some(ms(h.value_at_quantile(0.99))),
            p999: Some(ms(h.value_at_quantile(0.999))),
            max: Some(ms(h.max())),
        }
    }

    /// The largest of each percentile over several sets (the worst case where no histogram is kept).
    pub fn worst<'a>(all: impl IntoIterator<Item = &'a Percentiles>) -> Percentiles {
        let max = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        all.into_iter().fold(Percentiles::NONE, |w, p| Percentiles {
            p50: max(w.p50, p.p50),
            p90: max(w.p90, p.p90),
            p99: max(w.p99, p.p99),
            p999: max(w.p999, p.p999),
            max: max(w.max, p.max),
        })
    }
}

/// How an operation failed (the keys of `errors`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// No reply within the request timeout (a late reply counts here too).
    Timeout,
    /// The coordinator had too few replicas alive.
    Unavailable,
    /// The node refused the request as overloaded.
    Overloaded,
    /// Anything else: a refused or lost connection, a server error.
    Other,
    /// Due on the schedule but never sent (the server fell too far behind, or the run stopped).
    Unsent,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 5] = [
        ErrorKind::Timeout,
        ErrorKind::Unavailable,
        ErrorKind::Overloaded,
        ErrorKind::Other,
        ErrorKind::Unsent,
    ];

    /// Its key in `errors` and its column in intervals.csv.
    pub const fn name(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "timeout",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Overloaded => "overloaded",
            ErrorKind::Other => "other",
            ErrorKind::Unsent => "unsent",
        }
    }
}

/// Failed operations by kind (`ops.<op>.errors`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorCounts {
    #[serde(default)]
    pub timeout: u64,
    #[serde(default)]
    pub unavailable: u64,
    #[serde(default)]
    pub overloaded: u64,
    #[serde(default)]
    pub other: u64,
    #[serde(default)]
    pub unsent: u64,
}

impl ErrorCounts {
    pub fn total(&self) -> u64 {
        ErrorKind::ALL.iter().map(|k| self.get(*k)).sum()
    }

    pub fn get(&self, kind: ErrorKind) -> u64 {
        match kind {
            ErrorKind::Timeout => self.timeout,
            ErrorKind::Unavailable => self.unavailable,
            ErrorKind::Overloaded => self.overloaded,
            ErrorKind::Other => self.other,
            ErrorKind::Unsent => self.unsent,
        }
    }

    fn get_mut(&mut self, kind: ErrorKind) -> &mut u64 {
        match kind {
            ErrorKind::Timeout => &mut self.timeout,
            ErrorKind::Unavailable => &mut self.unavailable,
            ErrorKind::Overloaded => &mut self.overloaded,
            ErrorKind::Other => &mut self.other,
            ErrorKind::Unsent => &mut self.unsent,
        }
    }

    /// Counts one failure of `kind`.
    pub fn add(&mut self, kind: ErrorKind) {
        self.add_n(kind, 1);
    }

    /// Counts `n` failures of `kind`.
    pub fn add_n(&mut self, kind: ErrorKind, n: u64) {
        *self.get_mut(kind) += n;
    }

    pub fn merge(&mut self, other: &ErrorCounts) {
        for kind in ErrorKind::ALL {
            *self.get_mut(kind) += other.get(kind);
        }
    }

    /// `"12 failed: timeout 10, unsent 2"`, naming only the kinds that occurred.
    pub fn describe(&self) -> String {
        let named: Vec<String> = ErrorKind::ALL
            .iter()
            .filter(|k| self.get(**k) > 0)
            .map(|k| format!("{} {}", k.name(), self.get(*k)))
            .collect();
        format!("{} failed: {}", self.total(), named.join(", "))
    }
}

/// `ops.<name>` in summary.json, keyed by the operation's name (`write`, `read`, or a workload's own
/// names). Successful operations alone make the latencies, the rate and the windowed p99s; failed
/// ones (unsent included) are counted by kind and have their own latency.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OpSummary {
    /// Successful operations.
    #[serde(default)]
    pub count: u64,
    /// Failed operations by kind (`unsent`: due on the schedule, never sent).
    #[serde(default)]
    pub errors: ErrorCounts,
    /// Operations the client released (sent, or failed at once for want of a connection).
    #[serde(default)]
    pub sent: u64,
    /// Successful conditional (LWT) writes whose condition did not hold: counted in `count` too.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_applied: u64,
    /// Rows the successful operations' answers returned, every page's.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rows: u64,
    /// Pages the successful operations read, for operations that read in pages.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pages: u64,
    /// The server's message of the first failure it answered, when one did (e.g. "Batch for
    /// [ks.t] is of size 55.6KiB, exceeding specified threshold …").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// Successful operations per second.
    #[serde(default)]
    pub ops_per_s: f64,
    /// Successful operations: completion minus intended start (coordinated-omission corrected);
    /// `null` percentiles without a successful operation.
    #[serde(default)]
    pub latency_ms: Percentiles,
    /// Successful operations: completion minus actual send.
    #[serde(default)]
    pub service_time_ms: Percentiles,
    /// Failed operations: the moment the failure was known (a timeout at its deadline, a refused
    /// connection at once, an unsent operation when the run gave up on it) minus intended start;
    /// `null` percentiles without a failure.
    #[serde(default)]
    pub failed_latency_ms: Percentiles,
    /// Mean of the corrected p99 over the `p99_window_s` windows, weighted by window length (a run's
    /// last window may be shorter) — "Average p99" in the seed tables. `null` without windows.
    #[serde(default)]
    pub avg_p99_ms: Option<f64>,
    /// Maximum of the windowed corrected p99s ("Max p99"); `null` without windows.
    #[serde(default)]
    pub max_p99_ms: Option<f64>,
    #[serde(default)]
    pub p99_windows: usize,
    /// Why there is no windowed p99, when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_note: Option<String>,
}

/// The corrected p99 of the successful operations of one `p99_window_s` window, and the window's
/// length (a run's last window may be shorter).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowP99 {
    pub p99_ms: f64,
    pub seconds: f64,
}

/// Rounds to three decimals, as summary.json keeps rates and durations.
pub fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

impl OpSummary {
    /// The note of an operation without windowed p99s.
    pub const NO_SUCCESS: &'static str = "no successful operation";

    /// Sets the seeds' "Average p99" (weighted by window length, so a short last window counts for
    /// its length) and "Max p99" from the windows, or `null` and why there are none.
    pub fn set_windows(&mut self, windows: &[WindowP99]) {
        self.p99_windows = windows.len();
        if windows.is_empty() {
            self.avg_p99_ms = None;
            self.max_p99_ms = None;
            self.p99_note = Some(OpSummary::NO_SUCCESS.to_string());
            return;
        }
        let seconds: f64 = windows.iter().map(|w| w.seconds).sum();
        let average = if seconds > 0.0 {
            windows.iter().map(|w| w.p99_ms * w.seconds).sum::<f64>() / seconds
        } else {
            windows.iter().map(|w| w.p99_ms).sum::<f64>() / windows.len() as f64
        };
        let max = windows.iter().map(|w| w.p99_ms).fold(0.0, f64::max);
        self.avg_p99_ms = Some(round3(average));
        self.max_p99_ms = Some(round3(max));
        self.p99_note = None;
    }

    /// A version-1 file wrote `0.0` for percentiles that do not exist.
    fn drop_invented_zeros(&mut self) {
        if self.count == 0 {
            self.latency_ms = Percentiles::NONE;
            self.service_time_ms = Percentiles::NONE;
        }
        if self.errors.total() == 0 {
            self.failed_latency_ms = Percentiles::NONE;
        }
    }
}

/// Whether a run kept its target rate: the successful rate within 1 % of the target (any rate when
/// unthrottled) and nothing failed.
pub fn rate_kept(target: Option<f64>, achieved: f64, failed: &ErrorCounts) -> bool {
    failed.total() == 0 && target.is_none_or(|t| within_one_percent(achieved, t))
}

fn within_one_percent(achieved: f64, target: f64) -> bool {
    (achieved - target).abs() <= target * 0.01
}

/// `"; 6 failed: timeout 6"`, or nothing when nothing failed.
pub fn failures_suffix(failed: &ErrorCounts) -> String {
    if failed.total() > 0 {
        format!("; {}", failed.describe())
    } else {
        String::new()
    }
}

/// The rate verdict of a run that ran to its end: kept, kept but with failures, or offered vs
/// achieved.
pub fn rate_note(target: Option<f64>, achieved: f64, failed: &ErrorCounts) -> String {
    let failures = failures_suffix(failed);
    match target {
        None => format!("unthrottled (as fast as the in-flight limit allows){failures}"),
        Some(target) if rate_kept(Some(target), achieved, failed) => {
            format!("kept the target rate ({target:.0} ops/s offered)")
        }
        Some(target) if within_one_percent(achieved, target) => format!(
            "achieved {achieved:.1} of {target:.0} ops/s offered, BUT {}",
            failed.describe()
        ),
        Some(target) => format!(
            "OFFERED {target:.0} ops/s BUT ACHIEVED {achieved:.1} successful ops/s{failures}; \
             latencies include the time operations waited"
        ),
    }
}

/// `client` in summary.json: what the load client measured of itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientSummary {
    /// The client's own send lateness (actual send - intended start, for operations that had a free
    /// in-flight slot): how long the client itself could not run.
    #[serde(default)]
    pub hiccup_ms: Percentiles,
    /// Time between consecutive releases of operations on one client thread (rate mode): the real
    /// spacing of the sends, which `--tick` sets.
    #[serde(default)]
    pub send_gap_ms: Percentiles,
    /// How late each release of operations went out after the first of them was due (rate mode):
    /// the client's wake-ups, or a wait for an in-flight slot. When no operation waited for a slot, a
    /// send gap differs from the tick's spacing by at most the lateness of the releases on either
    /// side of it.
    #[serde(default)]
    pub release_lateness_ms: Percentiles,
    /// Operations that were due while all in-flight slots were busy (their wait counts in their latency).
    #[serde(default)]
    pub concurrency_limited_ops: u64,
    /// Operations re-sent after the server had forgotten the prepared statement.
    #[serde(default)]
    pub reprepared_ops: u64,
    /// Operations on the schedule (warm-up and measured), with a rate and a count or duration.
    #[serde(default)]
    pub scheduled_ops: Option<u64>,
    /// Scheduled operations due but never sent; also counted in `ops.<op>.errors.unsent`.
    #[serde(default)]
    pub unsent_ops: u64,
    /// Scheduled operations not yet due when the run was stopped (not part of the result).
    #[serde(default)]
    pub cancelled_ops: u64,
    #[serde(default)]
    pub max_in_flight: usize,
}

/// `warmup` and `populate` in summary.json: phases that are not measured as the result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseSummary {
    #[serde(default)]
    pub count: u64,
    #[serde(default)]
    pub errors: u64,
    #[serde(default)]
    pub duration_s: f64,
    #[serde(default)]
    pub ops_per_s: f64,
    /// `null` without a successful operation.
    #[serde(default)]
    pub latency_p99_ms: Option<f64>,
}

/// How the measured phase ends (`settings.stopping`): `{"duration_s": 60.0}` or `{"ops": 1000}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Stopping {
    #[serde(rename = "duration_s")]
    DurationS(f64),
    #[serde(rename = "ops")]
    Ops(u64),
}

/// `settings` in summary.json: the run's options as it ran with them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    // Alphabetical, as summary.json has always listed them.
    pub clients: u64,
    pub compaction: Option<String>,
    pub concurrency_per_thread: usize,
    pub connections_per_host: usize,
    /// Each client thread has its own connections, at least one per host.
    pub connections_per_host_opened: usize,
    pub consistency: String,
    pub dc: Option<String>,
    pub hosts: Vec<String>,
    pub keyspace: String,
    pub partition_generator: String,
    pub partitions: u64,
    pub populate: u64,
    pub port: u16,
    /// `--rate`: of all clients together; each sends its share.
    pub rate_all_clients: Option<f64>,
    pub read_ratio: f64,
    pub release_group: u64,
    pub replication: String,
    pub request_timeout_s: f64,
    pub seed: u64,
    pub serial_consistency: String,
    pub slow_ops_file: Option<String>,
    pub start_at: Option<f64>,
    pub stopping: Option<Stopping>,
    pub threads: usize,
    pub tick_ms: f64,
    pub warmup_s: f64,
    pub workload_parameters: BTreeMap<String, u64>,
}

/// A run's state: `running` while it goes, then one of the others.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    #[default]
    Complete,
    Interrupted,
    Failed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
        }
    }
}

impl std::str::FromStr for RunStatus {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        [
            RunStatus::Running,
            RunStatus::Complete,
            RunStatus::Interrupted,
            RunStatus::Failed,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
        .ok_or_else(|| format!("unknown run status {text:?}"))
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether the run's conditions make its figures doubtful (filled by the validity checks; absent
/// from results without them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Validity {
    #[serde(default)]
    pub doubtful: bool,
    /// One short sentence per reason for doubt.
    #[serde(default)]
    pub reasons: Vec<String>,
    /// The figures the verdict comes from, sampled over the measured window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Evidence>,
    /// The limits the verdict applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thresholds: Option<ValidityThresholds>,
}

/// When a run is doubtful (`--validity-thresholds`, a plan's `[validity]`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct ValidityThresholds {
    /// A second is busy when processes that are neither the cluster's nodes nor the client used at
    /// least this share of all cores. A busy loop beside a loaded node on 2 cores gets 0.45-0.8 of a
    /// core (0.22-0.4 of all), so the default sits below that; a quiet second reads 0.0-0.02.
    pub other_cpu: f64,
    /// Doubtful when busy seconds are at least this share of the window.
    pub busy_share: f64,
    /// Doubtful when the hypervisor stole at least this share of the CPU over the window.
    pub steal: f64,
    /// Doubtful when the client used at least this share of its load threads' cores over the window.
    pub client_cpu: f64,
    /// Doubtful when the client's own send lateness p99 reaches this (ms).
    pub lateness_p99_ms: f64,
    /// Doubtful when pages were swapped in or out at this rate or more over the window.
    pub swap_pages_per_s: f64,
}

impl Default for ValidityThresholds {
    fn default() -> Self {
        ValidityThresholds {
            other_cpu: 0.15,
            busy_share: 0.15,
            steal: 0.05,
            client_cpu: 0.9,
            lateness_p99_ms: 5.0,
            swap_pages_per_s: 1.0,
        }
    }
}

/// What the machine did during the measured window, second by second (from `/proc`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// Seconds of the window the samples cover.
    pub seconds: f64,
    pub cores: u32,
    /// Busy seconds: other processes at or above the threshold's share of all cores.
    pub busy_seconds: f64,
    /// Means over the window: shares of all cores (other processes, steal, iowait), the client's CPU in
    /// cores, swap pages per second.
    pub other_cpu: f64,
    pub steal: f64,
    pub iowait: f64,
    pub client_cpu_cores: f64,
    pub swap_pages_per_s: f64,
    /// The least memory available during the window (MiB).
    pub min_available_mb: f64,
    /// The other processes that used the most CPU in the window.
    #[serde(default)]
    pub top_other: Vec<ProcessCpu>,
    /// The cluster's nodes found on this machine (processes listening on a node's CQL address).
    #[serde(default)]
    pub nodes: Vec<NodeProcess>,
    #[serde(default)]
    pub per_second: Vec<EvidenceSecond>,
}

/// A process's CPU over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessCpu {
    pub pid: i32,
    pub name: String,
    pub cpu_s: f64,
}

/// A node of the cluster that runs on this machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeProcess {
    pub address: String,
    pub pid: i32,
    /// Its CPU over the window (s).
    pub cpu_s: f64,
}

/// One sampling interval; `t` is its end, in seconds from the measured start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EvidenceSecond {
    pub t: f64,
    pub other_cpu: f64,
    pub steal: f64,
    pub iowait: f64,
    pub client_cpu_cores: f64,
    pub available_mb: f64,
    pub swap_pages_per_s: f64,
    /// Each node's CPU in cores, in the order of `nodes`.
    #[serde(default)]
    pub node_cpu_cores: Vec<f64>,
}

/// One client of a merge (`merged_from`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergedClient {
    pub client_id: u64,
    pub dir: String,
}

fn one() -> u64 {
    1
}

/// summary.json.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// [`FORMAT_VERSION`] when written; 1 for a file written before summaries had versions.
    #[serde(default = "unversioned")]
    pub version: u32,
    #[serde(default)]
    pub workload: String,
    /// `null` when unthrottled.
    #[serde(default)]
    pub target_rate: Option<f64>,
    /// Successful operations per second of the measured phase.
    pub achieved_rate: f64,
    /// `true` when the successful rate stayed within 1% of the target and no operation failed.
    #[serde(default)]
    pub rate_kept: bool,
    #[serde(default)]
    pub rate_note: String,
    #[serde(default)]
    pub duration_s: f64,
    #[serde(default)]
    pub status: RunStatus,
    /// Why the run failed (a client thread died), when it did.
    #[serde(default)]
    pub failure: Option<String>,
    #[serde(default)]
    pub p99_window_s: f64,
    /// Per operation, by its name.
    #[serde(default)]
    pub ops: BTreeMap<String, OpSummary>,
    #[serde(default)]
    pub client: ClientSummary,
    #[serde(default)]
    pub warmup: Option<PhaseSummary>,
    #[serde(default)]
    pub populate: Option<PhaseSummary>,
    #[serde(default)]
    pub settings: Settings,
    /// Wall-clock time the measured phase began (seconds since the epoch, the clock of the GC logs'
    /// decorators): with `duration_s`, the window that server-side figures are lined up with.
    #[serde(default)]
    pub measured_start_unix_s: f64,
    /// Load clients sharing the schedule (`--clients`); 1 for a lone client.
    #[serde(default = "one")]
    pub clients: u64,
    /// This client's number (`--client-id`); `null` in a merge of all clients.
    #[serde(default)]
    pub client_id: Option<u64>,
    /// The common start of the schedule (`--start-at`), seconds since the epoch; `null` without it.
    #[serde(default)]
    pub start_at: Option<f64>,
    /// The clients a merge was made of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged_from: Option<Vec<MergedClient>>,
    /// Evidence on the run's conditions, where it was gathered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validity: Option<Validity>,
}

impl Upgrade for Summary {
    fn upgrade(&mut self, _version: u32) {
        for op in self.ops.values_mut() {
            op.drop_invented_zeros();
        }
        for phase in [&mut self.warmup, &mut self.populate].into_iter().flatten() {
            if phase.count == 0 {
                phase.latency_p99_ms = None;
            }
        }
        self.version = FORMAT_VERSION;
    }
}

json_file!(@io Summary, SUMMARY_FILE, "cqlbench summary");

impl Summary {
    /// Reads a summary.json at any path.
    pub fn read_file(path: &Path) -> Result<Summary, ResultsError> {
        read_json(path, "cqlbench summary")
    }

    pub fn successful_ops(&self) -> u64 {
        self.ops.values().map(|o| o.count).sum()
    }

    /// Failed operations of every kind, unsent ones included.
    pub fn failed_ops(&self) -> u64 {
        self.ops.values().map(|o| o.errors.total()).sum()
    }

    /// The largest of a figure over the operations that have it.
    pub fn max_over_ops(&self, figure: impl Fn(&OpSummary) -> Option<f64>) -> Option<f64> {
        self.ops.values().filter_map(figure).reduce(f64::max)
    }

    /// A figure of one operation, where the operation ran and the figure exists.
    pub fn of_op(&self, op: &str, figure: impl Fn(&OpSummary) -> Option<f64>) -> Option<f64> {
        self.ops.get(op).and_then(figure)
    }
}

/// A run in one line of JSON (`--brief-to`): what an orchestrator needs without the result directory,
/// small enough for a Kubernetes termination message (4 KiB).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Brief {
    #[serde(default = "unversioned")]
    pub version: u32,
    pub status: RunStatus,
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

fn clip_failure(text: &str) -> String {
    match text.char_indices().nth(BRIEF_FAILURE_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

impl Upgrade for Brief {
    fn upgrade(&mut self, _version: u32) {
        self.version = FORMAT_VERSION;
    }
}

impl Brief {
    pub fn of(summary: &Summary) -> Brief {
        Brief {
            version: FORMAT_VERSION,
            status: summary.status,
            failure: summary.failure.as_deref().map(clip_failure),
            client_id: summary.client_id,
            clients: summary.clients,
            target_rate: summary.target_rate,
            achieved_rate: summary.achieved_rate,
            rate_kept: summary.rate_kept,
            successful_ops: summary.successful_ops(),
            failed_ops: summary.failed_ops(),
            measured_start_unix_s: summary.measured_start_unix_s,
            duration_s: summary.duration_s,
        }
    }

    /// A run that ended before it had a summary (bad input, no connection).
    pub fn failed(reason: &str, client_id: Option<u64>, clients: u64) -> Brief {
        Brief {
            version: FORMAT_VERSION,
            status: RunStatus::Failed,
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

    /// The brief as its one line (no newline).
    pub fn line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Writes the brief as one line (`--brief-to`). Not atomic on purpose: the target is often a
    /// special file (`/dev/termination-log`) that cannot be renamed over.
    pub fn write(&self, path: &Path) -> Result<(), ResultsError> {
        std::fs::write(path, self.line() + "\n").map_err(ResultsError::write(path))
    }

    /// Reads a brief from its line (a pod's termination message).
    pub fn parse(line: &str) -> Result<Brief, ResultsError> {
        crate::version::parse_json(Path::new("brief"), "cqlbench brief", line)
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
