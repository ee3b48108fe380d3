//! `report merge`: the result directories of the load clients of one run (`cqlbench run --clients N
//! --client-id I --start-at T`) added up into one result directory of the same shape as a single
//! client's, so that `report` and `compare` read it like any run.
//!
//! Histograms are added interval by interval (HdrHistogram addition: the merged percentiles are those
//! of all the clients' operations together, never an average of percentiles); counts, errors and
//! rates are summed. The clients' intervals are lined up by time: every client counts its one-second
//! ticks from the common start, so an interval ending `k` seconds (rounded) after the measured start
//! is second `k` of every client.
//!
//! Directories that do not belong together are refused before anything is written: another
//! workload, seed, start, rate or number of clients, a client id given twice, or a client missing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use cqlbench_results::hlog::{self, new_histogram, HlogFile, HlogKind, HlogWriter};
use cqlbench_results::{
    read_slow_ops, round3, write_slow_ops, ClientSummary, ErrorCounts, IntervalRow, Intervals,
    MergedClient, OpSummary, Percentiles, PhaseSummary, ResultsError, RunStatus, Summary, Validity,
    WindowP99, INTERVALS_FILE, INTERVAL_COLUMNS, SUMMARY_FILE,
};
use hdrhistogram::Histogram;

/// Why result directories could not be merged; every message is one line.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("nothing to merge: give the result directories of every client")]
    NoRuns,
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Results(#[from] ResultsError),
    #[error("{path} is not a cqlbench result: {reason}")]
    BadRun { path: PathBuf, reason: String },
    #[error("{path} is still running (status `running`): merge finished runs")]
    StillRunning { path: PathBuf },
    #[error("{a} and {b} are not clients of one run: different {what} ({a_value} vs {b_value})")]
    Differ {
        what: String,
        a: PathBuf,
        b: PathBuf,
        a_value: String,
        b_value: String,
    },
    #[error("client id {id} appears twice: {a} and {b}")]
    DuplicateClient { id: u64, a: PathBuf, b: PathBuf },
    #[error("{path} is client {id}, but the run has only {clients} client(s) (ids 0 to {})", clients.saturating_sub(1))]
    ClientOutOfRange {
        path: PathBuf,
        id: u64,
        clients: u64,
    },
    #[error("missing client(s) {missing} of {clients}: give every client's result directory")]
    MissingClients { missing: String, clients: u64 },
    #[error("the output directory {0} is one of the inputs")]
    OutputIsInput(PathBuf),
    #[error("the output directory {0} is not empty: merge into a new directory")]
    OutputNotEmpty(PathBuf),
}

type Result<T> = std::result::Result<T, MergeError>;

/// What a merge wrote.
#[derive(Debug, Clone)]
pub struct MergedRun {
    pub out: PathBuf,
    pub clients: u64,
    /// The merged summary.json.
    pub summary: Summary,
}

/// A setting as two clients' summaries are compared on it.
enum Setting {
    Number(Option<f64>),
    Text(Option<String>),
}

impl Setting {
    /// Numbers equal within a microsecond (times in seconds); everything else exactly.
    fn same(&self, other: &Setting) -> bool {
        match (self, other) {
            (Setting::Number(Some(x)), Setting::Number(Some(y))) => (x - y).abs() < 1e-6,
            (Setting::Number(a), Setting::Number(b)) => a.is_none() && b.is_none(),
            (Setting::Text(a), Setting::Text(b)) => a == b,
            _ => false,
        }
    }

    fn show(&self) -> String {
        match self {
            Setting::Number(Some(v)) => format!("{v}"),
            Setting::Text(Some(t)) => t.clone(),
            Setting::Number(None) | Setting::Text(None) => "none".into(),
        }
    }
}

fn text(value: &str) -> Setting {
    Setting::Text(Some(value.to_string()))
}

/// A structured setting, shown as its JSON.
fn json(value: &impl serde::Serialize) -> Setting {
    Setting::Text(serde_json::to_string(value).ok().filter(|t| t != "null"))
}

fn number(value: impl Into<Option<f64>>) -> Setting {
    Setting::Number(value.into())
}

/// A setting of a summary, read for comparison.
type SettingOf = fn(&Summary) -> Setting;

/// Settings that must be equal in every client of one run.
const SAME_SETTINGS: [(&str, SettingOf); 17] = [
    ("workload", |s| text(&s.workload)),
    ("number of clients", |s| number(s.clients as f64)),
    ("common start (--start-at)", |s| number(s.start_at)),
    ("measured start", |s| number(s.measured_start_unix_s)),
    ("rate share", |s| number(s.target_rate)),
    ("rate", |s| number(s.settings.rate_all_clients)),
    ("seed", |s| number(s.settings.seed as f64)),
    ("stopping rule (-d/-n)", |s| json(&s.settings.stopping)),
    ("partitions", |s| number(s.settings.partitions as f64)),
    ("partition generator", |s| {
        text(&s.settings.partition_generator)
    }),
    ("read ratio", |s| number(s.settings.read_ratio)),
    ("populate", |s| number(s.settings.populate as f64)),
    ("warm-up", |s| number(s.settings.warmup_s)),
    ("workload parameters", |s| {
        json(&s.settings.workload_parameters)
    }),
    ("keyspace", |s| text(&s.settings.keyspace)),
    ("p99 window", |s| number(s.p99_window_s)),
    ("consistency", |s| text(&s.settings.consistency)),
];

fn bad(path: &Path, reason: impl Into<String>) -> MergeError {
    MergeError::BadRun {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// One client's result directory.
struct ClientRun {
    dir: PathBuf,
    summary: Summary,
    id: u64,
    /// (operation, kind) → its interval log.
    hlogs: BTreeMap<(String, HlogKind), HlogFile>,
    intervals: Intervals,
}

/// The client's number; a run from before `--clients` is a lone client, a merge is none.
fn client_id(summary: &Summary, path: &Path) -> Result<u64> {
    match summary.client_id {
        Some(id) => Ok(id),
        None if summary.merged_from.is_none() && summary.clients <= 1 => Ok(0),
        None => Err(bad(
            path,
            "no `client_id` (a merged result cannot be merged again)",
        )),
    }
}

fn read_client(dir: &Path) -> Result<ClientRun> {
    let summary_path = dir.join(SUMMARY_FILE);
    if !summary_path.is_file() {
        return Err(bad(dir, "it has no summary.json"));
    }
    let summary = Summary::read_file(&summary_path)?;
    if summary.measured_start_unix_s <= 0.0 {
        return Err(bad(&summary_path, "no `ops` or `measured_start_unix_s`"));
    }
    if summary.status == RunStatus::Running {
        return Err(MergeError::StillRunning {
            path: dir.to_path_buf(),
        });
    }
    let id = client_id(&summary, &summary_path)?;
    let mut hlogs = BTreeMap::new();
    for (op, kind) in hlog::logs_in(dir) {
        let path = dir.join(kind.file_name(&op));
        hlogs.insert((op, kind), hlog::read(&path)?);
    }
    Ok(ClientRun {
        dir: dir.to_path_buf(),
        intervals: Intervals::read(dir)?,
        summary,
        id,
        hlogs,
    })
}

/// Refuses clients whose settings or columns differ from the first's.
fn check_same_settings(runs: &[ClientRun]) -> Result<()> {
    let first = &runs[0];
    for run in &runs[1..] {
        for (what, setting) in SAME_SETTINGS {
            let (a, b) = (setting(&first.summary), setting(&run.summary));
            if !a.same(&b) {
                return Err(MergeError::Differ {
                    what: what.to_string(),
                    a: first.dir.clone(),
                    b: run.dir.clone(),
                    a_value: a.show(),
                    b_value: b.show(),
                });
            }
        }
        if run.intervals.header != first.intervals.header {
            return Err(MergeError::Differ {
                what: "intervals.csv columns".into(),
                a: first.dir.clone(),
                b: run.dir.clone(),
                a_value: first.intervals.header.clone(),
                b_value: run.intervals.header.clone(),
            });
        }
    }
    Ok(())
}

/// Refuses clients that are not of one run; returns the number of clients.
fn check_together(runs: &[ClientRun]) -> Result<u64> {
    check_same_settings(runs)?;
    let clients = runs[0].summary.clients.max(1);
    let mut seen: BTreeMap<u64, &Path> = BTreeMap::new();
    for run in runs {
        if run.id >= clients {
            return Err(MergeError::ClientOutOfRange {
                path: run.dir.clone(),
                id: run.id,
                clients,
            });
        }
        if let Some(other) = seen.insert(run.id, &run.dir) {
            return Err(MergeError::DuplicateClient {
                id: run.id,
                a: other.to_path_buf(),
                b: run.dir.clone(),
            });
        }
    }
    let missing: Vec<String> = (0..clients)
        .filter(|id| !seen.contains_key(id))
        .map(|id| id.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(MergeError::MissingClients {
            missing: missing.join(", "),
            clients,
        });
    }
    Ok(clients)
}

/// The second of the measured phase an interval ending at `end` (relative to the measured start)
/// belongs to: ticks fall a few milliseconds after the whole seconds of the common start.
fn second_of(end: f64) -> i64 {
    end.round() as i64
}

/// One second of all clients added up: its span relative to the measured start, and the histogram.
struct MergedSecond {
    start: f64,
    end: f64,
    histogram: Histogram<u64>,
}

/// Intervals of all clients added up by second.
type Seconds = BTreeMap<i64, MergedSecond>;

/// Every interval log of the merge: (operation, kind) → its seconds.
type MergedLogs = BTreeMap<(String, HlogKind), Seconds>;

fn merge_intervals(
    runs: &[ClientRun],
    key: &(String, HlogKind),
    measured_start: f64,
) -> Option<Seconds> {
    let mut seconds: Seconds = BTreeMap::new();
    let mut any = false;
    for log in runs.iter().filter_map(|run| run.hlogs.get(key)) {
        any = true;
        for interval in &log.intervals {
            let (start, end) = (
                interval.start_unix_s - measured_start,
                interval.end_unix_s - measured_start,
            );
            let entry = seconds
                .entry(second_of(end))
                .or_insert_with(|| MergedSecond {
                    start,
                    end,
                    histogram: new_histogram(),
                });
            entry.start = entry.start.min(start);
            entry.end = entry.end.max(end);
            // Auto-resizing: adding never fails for want of range.
            let _ = entry.histogram.add(&interval.histogram);
        }
    }
    any.then_some(seconds)
}

fn merge_logs(runs: &[ClientRun], measured_start: f64) -> MergedLogs {
    let keys: std::collections::BTreeSet<&(String, HlogKind)> =
        runs.iter().flat_map(|r| r.hlogs.keys()).collect();
    keys.into_iter()
        .filter_map(|key| Some((key.clone(), merge_intervals(runs, key, measured_start)?)))
        .collect()
}

/// The windows of `cqlbench run`, from merged seconds: every `window` seconds from the measured
/// start, the last one whatever its length, a remainder under one second joining the window before it.
fn windows(seconds: &Seconds, window: f64) -> Vec<WindowP99> {
    // window index → histogram
    let mut windows: BTreeMap<i64, Histogram<u64>> = BTreeMap::new();
    let mut last_end = 0.0f64;
    for (&second, merged) in seconds {
        last_end = last_end.max(merged.end);
        if merged.histogram.is_empty() {
            continue;
        }
        let index = ((second as f64 - 0.5) / window).floor().max(0.0) as i64;
        let _ = windows
            .entry(index)
            .or_insert_with(new_histogram)
            .add(&merged.histogram);
    }
    let p99 = |h: &Histogram<u64>| Percentiles::of(h).p99.unwrap_or(0.0);
    let mut list: Vec<WindowP99> = Vec::new();
    let mut previous: Option<Histogram<u64>> = None;
    let count = windows.len();
    for (k, (index, h)) in windows.into_iter().enumerate() {
        let window_start = index as f64 * window;
        let is_last = k + 1 == count;
        let length = if is_last {
            (last_end - window_start).max(0.0)
        } else {
            window
        };
        match (previous.as_mut(), list.last_mut()) {
            (Some(before), Some(entry)) if is_last && length < 1.0 && length + 0.5 < window => {
                let _ = before.add(&h);
                entry.p99_ms = p99(before);
                entry.seconds += length;
            }
            _ => {
                list.push(WindowP99 {
                    p99_ms: p99(&h),
                    seconds: length,
                });
                previous = Some(h);
            }
        }
    }
    list
}

/// All the seconds of one log as one histogram (empty without the log).
fn total(seconds: Option<&Seconds>) -> Histogram<u64> {
    let mut h = new_histogram();
    for merged in seconds.into_iter().flat_map(|s| s.values()) {
        let _ = h.add(&merged.histogram);
    }
    h
}

/// Sum of a count over the clients.
fn sum(runs: &[ClientRun], count: impl Fn(&Summary) -> u64) -> u64 {
    runs.iter().map(|r| count(&r.summary)).sum()
}

/// The largest of a figure over the clients (0 when none has it).
fn largest(runs: &[ClientRun], figure: impl Fn(&Summary) -> f64) -> f64 {
    runs.iter().map(|r| figure(&r.summary)).fold(0.0, f64::max)
}

/// One operation of the merge: counts summed, latencies from the merged logs.
fn merged_op(
    runs: &[ClientRun],
    op: &str,
    logs: &MergedLogs,
    duration: f64,
    window: f64,
) -> OpSummary {
    let of = |s: &Summary| s.ops.get(op).cloned().unwrap_or_default();
    let mut errors = ErrorCounts::default();
    for run in runs {
        errors.merge(&of(&run.summary).errors);
    }
    let count = sum(runs, |s| of(s).count);
    let log = |kind| logs.get(&(op.to_string(), kind));
    let mut summary = OpSummary {
        count,
        errors,
        sent: sum(runs, |s| of(s).sent),
        not_applied: sum(runs, |s| of(s).not_applied),
        rows: sum(runs, |s| of(s).rows),
        pages: sum(runs, |s| of(s).pages),
        first_error: runs.iter().find_map(|r| of(&r.summary).first_error),
        ops_per_s: if duration > 0.0 {
            round3(count as f64 / duration)
        } else {
            0.0
        },
        latency_ms: Percentiles::of(&total(log(HlogKind::Latency))),
        service_time_ms: Percentiles::of(&total(log(HlogKind::Service))),
        failed_latency_ms: Percentiles::of(&total(log(HlogKind::Failed))),
        ..OpSummary::default()
    };
    let windows = log(HlogKind::Latency).map_or_else(Vec::new, |s| windows(s, window));
    summary.set_windows(&windows);
    summary
}

/// Client figures without histograms in the results: the worst client's; counts summed.
fn merged_client(runs: &[ClientRun]) -> ClientSummary {
    let clients: Vec<&ClientSummary> = runs.iter().map(|r| &r.summary.client).collect();
    ClientSummary {
        hiccup_ms: Percentiles::worst(clients.iter().map(|c| &c.hiccup_ms)),
        send_gap_ms: Percentiles::worst(clients.iter().map(|c| &c.send_gap_ms)),
        release_lateness_ms: Percentiles::worst(clients.iter().map(|c| &c.release_lateness_ms)),
        concurrency_limited_ops: sum(runs, |s| s.client.concurrency_limited_ops),
        reprepared_ops: sum(runs, |s| s.client.reprepared_ops),
        scheduled_ops: clients.iter().map(|c| c.scheduled_ops).sum::<Option<u64>>(),
        unsent_ops: sum(runs, |s| s.client.unsent_ops),
        cancelled_ops: sum(runs, |s| s.client.cancelled_ops),
        max_in_flight: clients.iter().map(|c| c.max_in_flight).sum(),
    }
}

/// The warm-up or populate phase of all clients: counts summed, the longest duration, the worst p99
/// (no histogram of these phases is kept).
fn merged_phase(
    runs: &[ClientRun],
    phase: fn(&Summary) -> &Option<PhaseSummary>,
) -> Option<PhaseSummary> {
    let phases: Vec<&PhaseSummary> = runs
        .iter()
        .filter_map(|r| phase(&r.summary).as_ref())
        .collect();
    if phases.is_empty() {
        return None;
    }
    let count: u64 = phases.iter().map(|p| p.count).sum();
    let seconds = phases.iter().map(|p| p.duration_s).fold(0.0, f64::max);
    Some(PhaseSummary {
        count,
        errors: phases.iter().map(|p| p.errors).sum(),
        duration_s: seconds,
        ops_per_s: if seconds > 0.0 {
            round3(count as f64 / seconds)
        } else {
            0.0
        },
        latency_p99_ms: phases
            .iter()
            .filter_map(|p| p.latency_p99_ms)
            .reduce(f64::max),
    })
}

/// How the clients ended together: failed if any failed, else interrupted if any was, with every
/// client's failure named.
fn merged_status(runs: &[ClientRun]) -> (RunStatus, Vec<String>) {
    let status = [RunStatus::Failed, RunStatus::Interrupted]
        .into_iter()
        .find(|s| runs.iter().any(|r| r.summary.status == *s))
        .unwrap_or(RunStatus::Complete);
    let failures = runs
        .iter()
        .filter_map(|r| {
            r.summary
                .failure
                .as_ref()
                .map(|f| format!("client {}: {f}", r.id))
        })
        .collect();
    (status, failures)
}

/// The merged summary: the first client's, with every figure of all clients.
/// Doubtful when any client was, with each client's reasons; the evidence stays in the clients'
/// own directories (one machine's figures do not add up with another's).
fn merged_validity(runs: &[ClientRun]) -> Option<Validity> {
    let judged: Vec<(u64, &Validity)> = runs
        .iter()
        .filter_map(|r| Some((r.id, r.summary.validity.as_ref()?)))
        .collect();
    if judged.is_empty() {
        return None;
    }
    let reasons: Vec<String> = judged
        .iter()
        .flat_map(|(id, v)| v.reasons.iter().map(move |r| format!("client {id}: {r}")))
        .collect();
    Some(Validity {
        doubtful: judged.iter().any(|(_, v)| v.doubtful),
        reasons,
        evidence: None,
        thresholds: judged[0].1.thresholds,
    })
}

fn merged_summary(runs: &[ClientRun], clients: u64, logs: &MergedLogs) -> Summary {
    let first = &runs[0].summary;
    let duration = largest(runs, |s| s.duration_s);
    let window = first.p99_window_s.max(1e-3);
    let names: std::collections::BTreeSet<&String> =
        runs.iter().flat_map(|r| r.summary.ops.keys()).collect();
    let ops: BTreeMap<String, OpSummary> = names
        .into_iter()
        .map(|op| (op.clone(), merged_op(runs, op, logs, duration, window)))
        .collect();
    let successful: u64 = ops.values().map(|o| o.count).sum();
    let mut failed = ErrorCounts::default();
    for op in ops.values() {
        failed.merge(&op.errors);
    }
    let shares: Vec<f64> = runs.iter().filter_map(|r| r.summary.target_rate).collect();
    let target = (shares.len() == runs.len()).then(|| shares.iter().sum());
    let achieved = if duration > 0.0 {
        successful as f64 / duration
    } else {
        0.0
    };
    let (status, failures) = merged_status(runs);
    let note = match status {
        RunStatus::Failed => format!(
            "FAILED: {}; the run was stopped{}",
            failures.join("; "),
            cqlbench_results::failures_suffix(&failed)
        ),
        RunStatus::Interrupted => format!(
            "interrupted after {duration:.1} s{}",
            cqlbench_results::failures_suffix(&failed)
        ),
        _ => cqlbench_results::rate_note(target, achieved, &failed),
    };
    let mut summary = first.clone();
    summary.version = cqlbench_results::FORMAT_VERSION;
    summary.target_rate = target;
    summary.achieved_rate = round3(achieved);
    summary.rate_kept = cqlbench_results::rate_kept(target, achieved, &failed);
    summary.rate_note = format!("{clients} clients merged: {note}");
    summary.duration_s = duration;
    summary.status = status;
    summary.failure = (!failures.is_empty()).then(|| failures.join("; "));
    summary.ops = ops;
    summary.client = merged_client(runs);
    summary.validity = merged_validity(runs);
    summary.warmup = merged_phase(runs, |s| &s.warmup);
    summary.populate = merged_phase(runs, |s| &s.populate);
    summary.clients = clients;
    summary.client_id = None;
    summary.settings.hosts = Vec::new();
    for host in runs.iter().flat_map(|r| &r.summary.settings.hosts) {
        if !summary.settings.hosts.contains(host) {
            summary.settings.hosts.push(host.clone());
        }
    }
    summary.merged_from = Some(
        runs.iter()
            .map(|r| MergedClient {
                client_id: r.id,
                dir: r.dir.display().to_string(),
            })
            .collect(),
    );
    summary
}

/// Reads every client and refuses what does not belong together, before anything is written.
fn read_clients(dirs: &[PathBuf], out: &Path) -> Result<(Vec<ClientRun>, u64)> {
    if dirs.is_empty() {
        return Err(MergeError::NoRuns);
    }
    let out_canonical = out.canonicalize().ok();
    let mut runs = Vec::new();
    for dir in dirs {
        if out_canonical.is_some() && dir.canonicalize().ok() == out_canonical {
            return Err(MergeError::OutputIsInput(out.to_path_buf()));
        }
        runs.push(read_client(dir)?);
    }
    let clients = check_together(&runs)?;
    // Files of an earlier result left beside the merge's would read as part of it.
    let occupied = std::fs::read_dir(out).is_ok_and(|mut entries| entries.next().is_some());
    if occupied {
        return Err(MergeError::OutputNotEmpty(out.to_path_buf()));
    }
    runs.sort_by_key(|r| r.id);
    Ok((runs, clients))
}

/// Merges the result directories of every client of one run into `out` (created if needed):
/// summary.json, intervals.csv and the `.hlog` files, of the same shape as one client's.
pub fn merge_runs(dirs: &[PathBuf], out: &Path) -> Result<MergedRun> {
    let (runs, clients) = read_clients(dirs, out)?;
    let measured_start = runs[0].summary.measured_start_unix_s;
    let logs = merge_logs(&runs, measured_start);
    let summary = merged_summary(&runs, clients, &logs);
    // Write: the interval logs, intervals.csv, then summary.json (a reader that sees summary.json
    // sees a finished merge).
    std::fs::create_dir_all(out).map_err(|source| MergeError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs_f64(measured_start.max(0.0));
    for ((op, kind), seconds) in &logs {
        let mut comments = runs
            .iter()
            .find_map(|r| r.hlogs.get(&(op.clone(), *kind)))
            .map(|log| log.comments.clone())
            .unwrap_or_default();
        comments.push(format!(
            "merged from {clients} client(s): their intervals added second by second"
        ));
        let mut writer = HlogWriter::create(&out.join(kind.file_name(op)), &comments, base)?;
        for second in seconds.values() {
            let start = second.start.max(0.0);
            writer.append(
                &second.histogram,
                Duration::from_secs_f64(start),
                Duration::from_secs_f64((second.end - start).max(0.0)),
            )?;
        }
    }
    let csv_path = out.join(INTERVALS_FILE);
    std::fs::write(&csv_path, merged_csv(&runs, &logs)).map_err(|source| MergeError::Io {
        path: csv_path,
        source,
    })?;
    merge_slow_ops(&runs, out)?;
    summary.write(out)?;
    Ok(MergedRun {
        out: out.to_path_buf(),
        clients,
        summary,
    })
}

/// Every client's slow operations in one slow-ops.csv, in order of intended start (the clients share
/// the measured start their times count from); none is written when no client recorded any
/// (`--no-slow-ops`).
fn merge_slow_ops(runs: &[ClientRun], out: &Path) -> Result<()> {
    let mut rows = Vec::new();
    let mut any = false;
    for run in runs {
        if let Ok(slow) = read_slow_ops(&run.dir) {
            any = true;
            rows.extend(slow);
        }
    }
    if any {
        rows.sort_by(|a, b| a.intended_s.total_cmp(&b.intended_s));
        write_slow_ops(out, &rows)?;
    }
    Ok(())
}

/// One merged row of intervals.csv: its span, summed counts, operations (rate × length) and maxima.
struct CsvRow {
    start: f64,
    end: f64,
    count: u64,
    errors: ErrorCounts,
    error_total: u64,
    sent: f64,
    achieved: f64,
    scheduled: f64,
    max_ms: Option<f64>,
    service_max_ms: Option<f64>,
    failed_max_ms: Option<f64>,
    hiccup_max_ms: Option<f64>,
}

fn larger(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

impl CsvRow {
    fn new(start: f64, end: f64) -> CsvRow {
        CsvRow {
            start,
            end,
            count: 0,
            errors: ErrorCounts::default(),
            error_total: 0,
            sent: 0.0,
            achieved: 0.0,
            scheduled: 0.0,
            max_ms: None,
            service_max_ms: None,
            failed_max_ms: None,
            hiccup_max_ms: None,
        }
    }

    /// Adds a client's row spanning `start` to `end`.
    fn add(&mut self, row: &IntervalRow, start: f64, length: f64) {
        self.start = self.start.min(start);
        self.end = self.end.max(row.elapsed_s);
        self.count += row.count;
        self.error_total += row.errors;
        self.errors.merge(&row.error_kinds);
        self.sent += row.sent_ops_s * length;
        self.achieved += row.achieved_ops_s * length;
        self.scheduled += row.scheduled_all_ops_s * length;
        self.max_ms = larger(self.max_ms, row.latency_ms.max);
        self.service_max_ms = larger(self.service_max_ms, row.service_max_ms);
        self.failed_max_ms = larger(self.failed_max_ms, row.failed_max_ms);
        self.hiccup_max_ms = larger(self.hiccup_max_ms, row.client_hiccup_max_ms);
    }
}

/// Where each of a client's rows starts. A client writes its rows at reporting moments (one row per
/// phase and operation, all with the moment's end): a warm-up row spans from the previous moment, a
/// measured row from the previous moment that wrote measured rows (or the measured start).
struct RowSpans {
    moment: f64,
    before_any: f64,
    moment_measured: f64,
    before_measured: f64,
}

impl RowSpans {
    fn new(warmup_s: f64) -> RowSpans {
        RowSpans {
            moment: f64::NAN,
            before_any: -warmup_s,
            moment_measured: f64::NAN,
            before_measured: 0.0,
        }
    }

    /// The start of the next row.
    fn start_of(&mut self, row: &IntervalRow) -> f64 {
        let end = row.elapsed_s;
        if end != self.moment {
            if self.moment.is_finite() {
                self.before_any = self.moment;
            }
            self.moment = end;
        }
        if row.measured && end != self.moment_measured {
            if self.moment_measured.is_finite() {
                self.before_measured = self.moment_measured;
            }
            self.moment_measured = end;
        }
        if row.measured {
            self.before_measured
        } else {
            self.before_any
        }
    }
}

/// Every client's rows added up by (second, phase: warm-up first, operation).
fn summed_rows(runs: &[ClientRun]) -> BTreeMap<(i64, bool, String), CsvRow> {
    let mut rows: BTreeMap<(i64, bool, String), CsvRow> = BTreeMap::new();
    for run in runs {
        let mut spans = RowSpans::new(run.summary.settings.warmup_s);
        for row in &run.intervals.rows {
            let start = spans.start_of(row);
            let length = (row.elapsed_s - start).max(1e-9);
            let key = (second_of(row.elapsed_s), row.measured, row.op.clone());
            rows.entry(key)
                .or_insert_with(|| CsvRow::new(start, row.elapsed_s))
                .add(row, start, length);
        }
    }
    rows
}

/// intervals.csv of the merge: the clients' rows of one phase, operation and second added up.
/// Counts and errors are summed, rates recomputed over the second's span, the measured rows'
/// percentiles read from the merged histograms of that second; warm-up rows (no histograms are kept
/// for the warm-up) carry counts, rates and maxima, their percentile cells empty.
fn merged_csv(runs: &[ClientRun], logs: &MergedLogs) -> String {
    let mut out = format!("{INTERVAL_COLUMNS}\n");
    for ((second, measured, op), row) in summed_rows(runs) {
        let length = (row.end - row.start).max(1e-9);
        let mut line = IntervalRow {
            elapsed_s: row.end,
            measured,
            op: op.clone(),
            count: row.count,
            errors: row.error_total,
            sent_ops_s: row.sent / length,
            achieved_ops_s: row.achieved / length,
            latency_ms: Percentiles {
                max: row.max_ms,
                ..Percentiles::NONE
            },
            service_p50_ms: None,
            service_p99_ms: None,
            service_max_ms: row.service_max_ms,
            failed_p99_ms: None,
            failed_max_ms: row.failed_max_ms,
            error_kinds: row.errors,
            scheduled_all_ops_s: row.scheduled / length,
            client_hiccup_max_ms: row.hiccup_max_ms,
            percentiles_kept: measured,
        };
        if measured {
            let of = |kind| {
                logs.get(&(op.clone(), kind))
                    .and_then(|s| s.get(&second))
                    .map_or_else(|| Percentiles::NONE, |m| Percentiles::of(&m.histogram))
            };
            let (service, failed) = (of(HlogKind::Service), of(HlogKind::Failed));
            line.latency_ms = of(HlogKind::Latency);
            line.service_p50_ms = service.p50;
            line.service_p99_ms = service.p99;
            line.service_max_ms = service.max;
            line.failed_p99_ms = failed.p99;
            line.failed_max_ms = failed.max;
        }
        out.push_str(&line.csv_line());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;

    use cqlbench_results::{SlowOp, SLOW_OPS_FILE};
    use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
    use hdrhistogram::serialization::V2DeflateSerializer;
    use serde_json::{json, Value};

    /// Percentiles as summary.json holds them.
    fn percentiles(h: &Histogram<u64>) -> Value {
        json!(Percentiles::of(h))
    }

    fn ms(micros: u64) -> f64 {
        (micros as f64).round() / 1000.0
    }

    /// One interval of a merged log, its end in seconds since the epoch.
    struct Interval {
        end: f64,
        histogram: Histogram<u64>,
    }

    fn read_hlog(path: &Path) -> Result<(Vec<Interval>, Vec<String>)> {
        let log = hlog::read(path)?;
        let intervals = log
            .intervals
            .into_iter()
            .map(|i| Interval {
                end: i.end_unix_s,
                histogram: i.histogram,
            })
            .collect();
        Ok((intervals, log.comments))
    }

    const COLUMNS: &str = "elapsed_s,phase,op,count,errors,sent_ops_s,achieved_ops_s,\
p50_ms,p90_ms,p99_ms,p999_ms,max_ms,service_p50_ms,service_p99_ms,service_max_ms,\
failed_p99_ms,failed_max_ms,timeout,unavailable,overloaded,other,unsent,\
scheduled_all_ops_s,client_hiccup_max_ms";

    const START: f64 = 1_800_000_000.0;

    /// Latencies (µs) of client `id`'s operations in second `k`: spread over three decades, different
    /// per client, so that a merge by averaging percentiles could not give the right answer.
    fn values(id: u64, k: u64) -> Vec<u64> {
        (0..200u64)
            .map(|i| {
                let x = (i * 7919 + k * 104_729 + id * 15_485_863) % 10_007;
                100 + x * x / (50 + 400 * id)
            })
            .collect()
    }

    /// A client's result directory as `cqlbench run --clients` writes it: 4 measured seconds of
    /// writes (ending a few ms after each whole second, each client differently), 2 timeouts.
    fn write_client(root: &Path, id: u64, edit: impl Fn(&mut Value)) -> PathBuf {
        let dir = root.join(format!("client{id}"));
        std::fs::create_dir_all(&dir).unwrap();
        let base = SystemTime::UNIX_EPOCH + Duration::from_secs_f64(START);
        let mut csv = format!("{COLUMNS}\n");
        let mut total = Histogram::<u64>::new(3).unwrap();
        for (name, with_values) in [
            ("write", true),
            ("write.service", true),
            ("write.failed", false),
        ] {
            let mut file = File::create(dir.join(format!("{name}.hlog"))).unwrap();
            let mut serializer = V2DeflateSerializer::new();
            let mut writer = IntervalLogWriterBuilder::new()
                .add_comment("test log")
                .with_start_time(base)
                .with_base_time(base)
                .begin_log_with(&mut file, &mut serializer)
                .unwrap();
            let mut previous = 0.0;
            for k in 1..=4u64 {
                let end = k as f64 + 0.002 + 0.003 * id as f64;
                let mut h = Histogram::<u64>::new(3).unwrap();
                if with_values {
                    for v in values(id, k) {
                        h.record(v).unwrap();
                    }
                }
                writer
                    .write_histogram(
                        &h,
                        Duration::from_secs_f64(previous),
                        Duration::from_secs_f64(end - previous),
                        None,
                    )
                    .unwrap();
                if name == "write" {
                    total.add(&h).unwrap();
                    let errors = if k == 2 { 2 } else { 0 };
                    csv.push_str(&format!(
                        "{end:.3},measured,write,200,{errors},{:.1},{:.1},1,2,3,4,{},1,2,3,0,0,\
                         {errors},0,0,0,0,{:.1},0.5\n",
                        (200 + errors) as f64 / (end - previous),
                        200.0 / (end - previous),
                        h.max() as f64 / 1000.0,
                        200.0 / (end - previous),
                    ));
                }
                previous = end;
            }
        }
        std::fs::write(dir.join("intervals.csv"), csv).unwrap();
        let mut summary = json!({
            "workload": "KeyValue",
            "target_rate": 200.0,
            "achieved_rate": 200.0,
            "rate_kept": false,
            "rate_note": "",
            "duration_s": 4.002 + 0.003 * id as f64,
            "status": "complete",
            "failure": null,
            "p99_window_s": 2.0,
            "ops": {"write": {
                "count": total.len(),
                "errors": {"timeout": 2, "unavailable": 0, "overloaded": 0, "other": 0, "unsent": 0},
                "sent": total.len() + 2,
                "not_applied": 3,
                "rows": 10 * total.len(),
                "pages": 2 * total.len(),
                "first_error": "Batch too large",
            }},
            "client": {"hiccup_ms": {"p50": 0.1, "p90": 0.2, "p99": 0.3 + id as f64, "p999": 1.0, "max": 2.0},
                       "scheduled_ops": 802, "unsent_ops": 0, "cancelled_ops": 0,
                       "concurrency_limited_ops": 0, "reprepared_ops": 0, "max_in_flight": 100},
            "warmup": null,
            "populate": {"count": 1000, "errors": 0, "duration_s": 1.0 + id as f64,
                         "ops_per_s": 1000.0, "latency_p99_ms": 3.0},
            "settings": {"hosts": ["127.0.0.1"], "seed": 7, "rate_all_clients": 600.0,
                         "stopping": {"duration_s": 4.0}, "partitions": 1000,
                         "partition_generator": "sequence", "read_ratio": 0.0, "populate": 3000,
                         "warmup_s": 0.0, "workload_parameters": {}, "keyspace": "ks",
                         "consistency": "LocalOne"},
            "measured_start_unix_s": START,
            "clients": 3,
            "client_id": id,
            "start_at": START,
        });
        edit(&mut summary);
        std::fs::write(dir.join("summary.json"), summary.to_string()).unwrap();
        dir
    }

    fn three(root: &Path) -> Vec<PathBuf> {
        (0..3).map(|id| write_client(root, id, |_| {})).collect()
    }

    #[test]
    fn a_merge_is_doubtful_when_a_client_was_and_keeps_its_reasons() {
        let root = tempfile::tempdir().unwrap();
        let dirs: Vec<PathBuf> = (0..3)
            .map(|id| {
                write_client(root.path(), id, |s| {
                    s["validity"] = serde_json::json!({"doubtful": id == 1,
                        "reasons": if id == 1 { vec!["steal time 12 %"] } else { vec![] },
                        "evidence": {"seconds": 4.0, "cores": 2, "busy_seconds": 0.0, "other_cpu": 0.0,
                                     "steal": 0.0, "iowait": 0.0, "client_cpu_cores": 0.1,
                                     "swap_pages_per_s": 0.0, "min_available_mb": 100.0}});
                })
            })
            .collect();
        let merged = merge_runs(&dirs, &root.path().join("merged")).unwrap();
        let validity = merged.summary.validity.unwrap();
        assert!(validity.doubtful);
        assert_eq!(validity.reasons, ["client 1: steal time 12 %"]);
        assert!(
            validity.evidence.is_none(),
            "one machine's evidence is not the merge's"
        );
        let quiet = three(&root.path().join("quiet"));
        let merged = merge_runs(&quiet, &root.path().join("quiet-merged")).unwrap();
        assert!(merged.summary.validity.is_none());
    }

    #[test]
    fn histograms_are_added_second_by_second_and_counts_summed() {
        let root = tempfile::tempdir().unwrap();
        let dirs = three(root.path());
        let out = root.path().join("merged");
        let merged = merge_runs(&dirs, &out).unwrap();
        assert_eq!(merged.clients, 3);
        let summary = serde_json::to_value(&merged.summary).unwrap();
        // One histogram of every operation of every client, recorded directly.
        let mut all = Histogram::<u64>::new(3).unwrap();
        for id in 0..3 {
            for k in 1..=4 {
                for v in values(id, k) {
                    all.record(v).unwrap();
                }
            }
        }
        let s = &summary;
        let write = &s["ops"]["write"];
        assert_eq!(write["count"], 2400);
        assert_eq!(write["sent"], 2406);
        assert_eq!(write["not_applied"], 9);
        assert_eq!(write["rows"], 24000);
        assert_eq!(write["pages"], 4800);
        assert_eq!(write["first_error"], "Batch too large");
        assert_eq!(write["errors"]["timeout"], 6);
        assert_eq!(write["latency_ms"], percentiles(&all));
        assert_eq!(s["target_rate"], 600.0);
        assert_eq!(s["duration_s"], 4.008);
        assert_eq!(s["achieved_rate"], round3(2400.0 / 4.008));
        assert_eq!(s["rate_kept"], false, "timeouts: not kept");
        assert!(s["rate_note"]
            .as_str()
            .unwrap()
            .contains("6 failed: timeout 6"));
        assert_eq!(s["clients"], 3);
        assert_eq!(s["client_id"], Value::Null);
        assert_eq!(s["client"]["scheduled_ops"], 2406);
        assert_eq!(s["client"]["hiccup_ms"]["p99"], 2.3);
        assert_eq!(s["populate"]["count"], 3000);
        assert_eq!(s["populate"]["duration_s"], 3.0);
        // Windows of 2 s: seconds 1-2 and 3-4, their p99s from the added histograms.
        let mut windows = Vec::new();
        for pair in [[1, 2], [3, 4]] {
            let mut h = Histogram::<u64>::new(3).unwrap();
            for id in 0..3 {
                for k in pair {
                    for v in values(id, k) {
                        h.record(v).unwrap();
                    }
                }
            }
            windows.push(ms(h.value_at_quantile(0.99)));
        }
        assert_eq!(write["p99_windows"], 2);
        assert_eq!(write["max_p99_ms"], windows[0].max(windows[1]));
        let weighted = (windows[0] * 2.0 + windows[1] * (4.008 - 2.0)) / 4.008;
        assert_eq!(write["avg_p99_ms"], round3(weighted));

        // The merged interval log: one interval per second, each the sum of the clients' seconds.
        let (intervals, _) = read_hlog(&out.join("write.hlog")).unwrap();
        assert_eq!(intervals.len(), 4);
        let mut from_log = Histogram::<u64>::new(3).unwrap();
        for (k, interval) in intervals.iter().enumerate() {
            assert_eq!(interval.histogram.len(), 600, "second {}", k + 1);
            assert!((interval.end - START - (k + 1) as f64).abs() < 0.01);
            from_log.add(&interval.histogram).unwrap();
        }
        assert_eq!(percentiles(&from_log), percentiles(&all));
        assert_eq!(
            read_hlog(&out.join("write.failed.hlog")).unwrap().0.len(),
            4
        );
        // intervals.csv: four measured rows of summed counts, the rate the sum of the clients'.
        let csv = std::fs::read_to_string(out.join("intervals.csv")).unwrap();
        let rows: Vec<Vec<&str>> = csv
            .lines()
            .skip(1)
            .map(|l| l.split(',').collect())
            .collect();
        assert_eq!(rows.len(), 4, "{csv}");
        assert_eq!(csv.lines().next().unwrap(), COLUMNS);
        for row in &rows {
            assert_eq!(row[3], "600");
            let achieved: f64 = row[6].parse().unwrap();
            assert!((achieved - 600.0).abs() < 600.0 * 0.02, "{achieved}\n{csv}");
        }
        assert_eq!(rows[1][4], "6");
        assert_eq!(rows[1][17], "6");
        // What a reader of one run finds in the merge.
        let text = std::fs::read_to_string(out.join("summary.json")).unwrap();
        let reread: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(&reread, s);
    }

    fn refusal(root: &Path, dirs: &[PathBuf]) -> String {
        let e = merge_runs(dirs, &root.join("merged"))
            .unwrap_err()
            .to_string();
        assert_eq!(e.lines().count(), 1, "{e}");
        assert!(!root.join("merged").exists(), "nothing written on refusal");
        e
    }

    #[test]
    fn slow_operations_of_every_client_are_merged_in_time_order() {
        let root = tempfile::tempdir().unwrap();
        let dirs = three(root.path());
        let slow = |intended: f64, latency: f64, node: &str| SlowOp {
            intended_s: intended,
            done_s: intended + latency / 1000.0,
            op: "write".into(),
            latency_ms: latency,
            node: node.into(),
        };
        write_slow_ops(
            &dirs[0],
            &[slow(1.0, 40.0, "10.0.0.1"), slow(3.0, 50.0, "10.0.0.2")],
        )
        .unwrap();
        write_slow_ops(&dirs[1], &[slow(1.0, 60.0, "10.0.0.1")]).unwrap();
        // Client 2 ran with --no-slow-ops: no file.
        let out = root.path().join("merged");
        merge_runs(&dirs, &out).unwrap();
        let merged = read_slow_ops(&out).unwrap();
        assert_eq!(
            merged,
            [
                slow(1.0, 40.0, "10.0.0.1"),
                slow(1.0, 60.0, "10.0.0.1"),
                slow(3.0, 50.0, "10.0.0.2")
            ]
        );
        // No client with the file: none in the merge either.
        let plain = root.path().join("plain");
        let dirs: Vec<PathBuf> = (0..3).map(|id| write_client(&plain, id, |_| {})).collect();
        merge_runs(&dirs, &plain.join("merged")).unwrap();
        assert!(!plain.join("merged").join(SLOW_OPS_FILE).exists());
    }

    #[test]
    fn runs_that_do_not_belong_together_are_refused_naming_the_reason() {
        let root = tempfile::tempdir().unwrap();
        let mut dirs = three(root.path());
        // A client missing.
        let e = refusal(root.path(), &dirs[..2]);
        assert!(e.contains("missing client(s) 2 of 3"), "{e}");
        // The same client twice.
        let e = refusal(
            root.path(),
            &[dirs[0].clone(), dirs[1].clone(), dirs[1].clone()],
        );
        assert!(e.contains("client id 1 appears twice"), "{e}");
        // Each different setting, named.
        for (what, edit) in [
            (
                "seed",
                &(|s: &mut Value| s["settings"]["seed"] = json!(8)) as &dyn Fn(&mut Value),
            ),
            ("workload", &|s: &mut Value| {
                s["workload"] = json!("Tabular")
            }),
            ("number of clients", &|s: &mut Value| {
                s["clients"] = json!(4)
            }),
            ("common start", &|s: &mut Value| {
                s["start_at"] = json!(START + 1.0)
            }),
            ("rate", &|s: &mut Value| {
                s["settings"]["rate_all_clients"] = json!(900.0)
            }),
            ("rate share", &|s: &mut Value| {
                s["target_rate"] = json!(300.0)
            }),
            ("stopping rule", &|s: &mut Value| {
                s["settings"]["stopping"] = json!({"ops": 10})
            }),
        ] {
            let other = root.path().join("other");
            let _ = std::fs::remove_dir_all(&other);
            let changed = write_client(root.path(), 2, edit);
            std::fs::rename(&changed, &other).unwrap();
            dirs[2] = other;
            let e = refusal(root.path(), &dirs);
            assert!(e.contains(&format!("different {what}")), "{what}: {e}");
            assert!(e.contains("not clients of one run"), "{e}");
        }
        // An id beyond the number of clients.
        let _ = std::fs::remove_dir_all(root.path().join("client2"));
        dirs[2] = write_client(root.path(), 2, |s| s["client_id"] = json!(5));
        let e = refusal(root.path(), &dirs);
        assert!(e.contains("client 5") && e.contains("ids 0 to 2"), "{e}");
        // A client still running.
        let _ = std::fs::remove_dir_all(root.path().join("client2"));
        dirs[2] = write_client(root.path(), 2, |s| s["status"] = json!("running"));
        assert!(refusal(root.path(), &dirs).contains("still running"));
        // A merge is not a client.
        dirs[2] = write_client(root.path(), 2, |_| {});
        merge_runs(&dirs, &root.path().join("m1")).unwrap();
        let e = refusal(root.path(), &[root.path().join("m1")]);
        assert!(e.contains("cannot be merged again"), "{e}");
        let e = merge_runs(&dirs, &root.path().join("m1"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not empty"), "{e}");
        assert!(matches!(
            merge_runs(&[], &root.path().join("x")),
            Err(MergeError::NoRuns)
        ));
    }

    #[test]
    fn warm_up_rows_add_counts_and_rates_and_keep_maxima() {
        let root = tempfile::tempdir().unwrap();
        let dirs: Vec<PathBuf> = (0..3u64)
            .map(|id| {
                let dir = write_client(root.path(), id, |s| s["settings"]["warmup_s"] = json!(2.0));
                let path = dir.join("intervals.csv");
                let csv = std::fs::read_to_string(&path).unwrap();
                let (header, rows) = csv.split_once('\n').unwrap();
                // Two warm-up seconds, the second reported a moment after the measured start.
                let warm = |end: f64, max: f64| {
                    format!(
                        "{end:.3},warmup,write,100,0,100.0,100.0,1,2,3,4,{max},1,2,3,0,0,0,0,0,0,0,100.0,0.5\n"
                    )
                };
                let end = 0.002 + 0.003 * id as f64;
                let text = format!(
                    "{header}\n{}{}{rows}",
                    warm(-1.0, 5.0 + id as f64),
                    warm(end, 7.0)
                );
                std::fs::write(&path, text).unwrap();
                dir
            })
            .collect();
        let out = root.path().join("merged");
        merge_runs(&dirs, &out).unwrap();
        let csv = std::fs::read_to_string(out.join("intervals.csv")).unwrap();
        let warm: Vec<Vec<&str>> = csv
            .lines()
            .filter(|l| l.contains(",warmup,"))
            .map(|l| l.split(',').collect())
            .collect();
        assert_eq!(warm.len(), 2, "{csv}");
        for row in &warm {
            assert_eq!(row[3], "300");
            let rate: f64 = row[6].parse().unwrap();
            assert!((rate - 300.0).abs() < 3.0, "{rate}\n{csv}");
            // No warm-up histograms: percentile cells empty, the maximum the largest client's.
            assert_eq!(row[7], "");
            assert_eq!(row[9], "");
        }
        assert_eq!(warm[0][11], "7");
        assert_eq!(warm[1][11], "7");
        assert_eq!(warm[0][0], "-1.000");
        // The measured rows are those of the merge without a warm-up.
        assert_eq!(csv.lines().filter(|l| l.contains(",measured,")).count(), 4);
    }
}
