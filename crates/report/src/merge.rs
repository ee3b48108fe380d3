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
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde_json::{json, Value};

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
    pub summary: Value,
}

/// The interval logs of a result directory: per operation type, latency, service time, failures.
const HLOG_KINDS: [&str; 3] = ["", ".service", ".failed"];
const OP_TYPES: [&str; 2] = ["read", "write"];

/// Settings that must be equal in every client of one run (dotted paths in summary.json).
const SAME_SETTINGS: [(&str, &str); 14] = [
    ("workload", "workload"),
    ("number of clients", "clients"),
    ("common start (--start-at)", "start_at"),
    ("measured start", "measured_start_unix_s"),
    ("rate share", "target_rate"),
    ("rate", "settings.rate_all_clients"),
    ("seed", "settings.seed"),
    ("stopping rule (-d/-n)", "settings.stopping"),
    ("partitions", "settings.partitions"),
    ("partition generator", "settings.partition_generator"),
    ("read ratio", "settings.read_ratio"),
    ("populate", "settings.populate"),
    ("warm-up", "settings.warmup_s"),
    ("workload parameters", "settings.workload_parameters"),
];

/// More settings that must agree.
const SAME_SETTINGS_MORE: [(&str, &str); 3] = [
    ("keyspace", "settings.keyspace"),
    ("p99 window", "p99_window_s"),
    ("consistency", "settings.consistency"),
];

fn at<'a>(value: &'a Value, path: &str) -> &'a Value {
    path.split('.').fold(value, |v, key| &v[key])
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> MergeError + '_ {
    move |source| MergeError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn bad(path: &Path, reason: impl Into<String>) -> MergeError {
    MergeError::BadRun {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// One interval of an interval log, in seconds since the epoch.
struct Interval {
    start: f64,
    end: f64,
    histogram: Histogram<u64>,
}

/// One client's result directory.
struct ClientRun {
    dir: PathBuf,
    summary: Value,
    id: u64,
    /// `op + kind` (`write`, `write.service`, …) → its intervals.
    hlogs: BTreeMap<String, Vec<Interval>>,
    /// The comment lines that open each interval log (what it holds, in which unit).
    hlog_comments: BTreeMap<String, Vec<String>>,
    header: String,
    rows: Vec<Vec<String>>,
}

fn new_histogram() -> Histogram<u64> {
    // Auto-resizing, 3 significant digits, like the clients' own.
    let mut h = Histogram::new(3).expect("3 significant digits is a valid precision");
    h.auto(true);
    h
}

fn read_hlog(path: &Path) -> Result<(Vec<Interval>, Vec<String>)> {
    let bytes = std::fs::read(path).map_err(io(path))?;
    let comments = String::from_utf8_lossy(&bytes)
        .lines()
        .take_while(|l| l.starts_with('#'))
        .filter(|l| !l.starts_with("#[") && !l.starts_with("#\""))
        .map(|l| l.trim_start_matches('#').to_string())
        .collect();
    let mut deserializer = Deserializer::new();
    let mut base = 0.0;
    let mut out = Vec::new();
    for entry in IntervalLogIterator::new(&bytes) {
        match entry.map_err(|e| bad(path, format!("unreadable interval log: {e:?}")))? {
            LogEntry::BaseTime(t) => base = t.as_secs_f64(),
            LogEntry::StartTime(_) => {}
            LogEntry::Interval(interval) => {
                let raw = base64::engine::general_purpose::STANDARD
                    .decode(interval.encoded_histogram())
                    .map_err(|e| bad(path, format!("bad histogram encoding: {e}")))?;
                let histogram: Histogram<u64> = deserializer
                    .deserialize(&mut raw.as_slice())
                    .map_err(|e| bad(path, format!("bad histogram: {e:?}")))?;
                let start = base + interval.start_timestamp().as_secs_f64();
                out.push(Interval {
                    start,
                    end: start + interval.duration().as_secs_f64(),
                    histogram,
                });
            }
        }
    }
    Ok((out, comments))
}

fn read_client(dir: &Path) -> Result<ClientRun> {
    let summary_path = dir.join("summary.json");
    if !summary_path.is_file() {
        return Err(bad(dir, "it has no summary.json"));
    }
    let text = std::fs::read_to_string(&summary_path).map_err(io(&summary_path))?;
    let summary: Value =
        serde_json::from_str(&text).map_err(|e| bad(&summary_path, e.to_string()))?;
    if !summary["ops"].is_object() || !summary["measured_start_unix_s"].is_number() {
        return Err(bad(&summary_path, "no `ops` or `measured_start_unix_s`"));
    }
    if summary["status"] == "running" {
        return Err(MergeError::StillRunning {
            path: dir.to_path_buf(),
        });
    }
    // A run from before --clients is a lone client.
    let id = match &summary["client_id"] {
        Value::Null if summary["clients"].is_null() => 0,
        v => v.as_u64().ok_or_else(|| {
            bad(
                &summary_path,
                "no `client_id` (a merged result cannot be merged again)",
            )
        })?,
    };
    let mut hlogs = BTreeMap::new();
    let mut hlog_comments = BTreeMap::new();
    for op in OP_TYPES {
        for kind in HLOG_KINDS {
            let name = format!("{op}{kind}");
            let path = dir.join(format!("{name}.hlog"));
            if path.is_file() {
                let (intervals, comments) = read_hlog(&path)?;
                hlogs.insert(name.clone(), intervals);
                hlog_comments.insert(name, comments);
            }
        }
    }
    let csv_path = dir.join("intervals.csv");
    let csv = std::fs::read_to_string(&csv_path).map_err(io(&csv_path))?;
    let mut lines = csv.lines();
    let header = lines
        .next()
        .ok_or_else(|| bad(&csv_path, "empty intervals.csv"))?
        .to_string();
    let width = header.split(',').count();
    let rows = lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let row: Vec<String> = l.split(',').map(str::to_string).collect();
            if row.len() == width {
                Ok(row)
            } else {
                Err(bad(&csv_path, format!("row of {} fields: {l}", row.len())))
            }
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(ClientRun {
        dir: dir.to_path_buf(),
        summary,
        id,
        hlogs,
        hlog_comments,
        header,
        rows,
    })
}

/// Numbers equal within a microsecond (times in seconds); everything else exactly.
fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() < 1e-6,
        _ => a == b,
    }
}

fn show(v: &Value) -> String {
    match v {
        Value::Null => "none".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Refuses clients that are not of one run; returns the number of clients.
fn check_together(runs: &[ClientRun]) -> Result<u64> {
    let first = &runs[0];
    for run in &runs[1..] {
        for (what, path) in SAME_SETTINGS.iter().chain(SAME_SETTINGS_MORE.iter()) {
            let (a, b) = (at(&first.summary, path), at(&run.summary, path));
            if !same(a, b) {
                return Err(MergeError::Differ {
                    what: what.to_string(),
                    a: first.dir.clone(),
                    b: run.dir.clone(),
                    a_value: show(a),
                    b_value: show(b),
                });
            }
        }
        if run.header != first.header {
            return Err(MergeError::Differ {
                what: "intervals.csv columns".into(),
                a: first.dir.clone(),
                b: run.dir.clone(),
                a_value: first.header.clone(),
                b_value: run.header.clone(),
            });
        }
    }
    let clients = first.summary["clients"].as_u64().unwrap_or(1).max(1);
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

/// Intervals of all clients added up by second: (start, end, histogram) relative to the measured start.
type Seconds = BTreeMap<i64, (f64, f64, Histogram<u64>)>;

fn merge_intervals(runs: &[ClientRun], name: &str, measured_start: f64) -> Option<Seconds> {
    let mut seconds: Seconds = BTreeMap::new();
    let mut any = false;
    for run in runs {
        let Some(intervals) = run.hlogs.get(name) else {
            continue;
        };
        any = true;
        for interval in intervals {
            let (start, end) = (
                interval.start - measured_start,
                interval.end - measured_start,
            );
            let entry = seconds
                .entry(second_of(end))
                .or_insert_with(|| (start, end, new_histogram()));
            entry.0 = entry.0.min(start);
            entry.1 = entry.1.max(end);
            // Auto-resizing: adding never fails for want of range.
            let _ = entry.2.add(&interval.histogram);
        }
    }
    any.then_some(seconds)
}

fn ms(micros: u64) -> f64 {
    (micros as f64).round() / 1000.0
}

/// Percentiles in milliseconds as `cqlbench run` writes them (all zero without operations).
fn percentiles(h: &Histogram<u64>) -> Value {
    if h.is_empty() {
        return json!({"p50": 0.0, "p90": 0.0, "p99": 0.0, "p999": 0.0, "max": 0.0});
    }
    json!({
        "p50": ms(h.value_at_quantile(0.50)),
        "p90": ms(h.value_at_quantile(0.90)),
        "p99": ms(h.value_at_quantile(0.99)),
        "p999": ms(h.value_at_quantile(0.999)),
        "max": ms(h.max()),
    })
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

fn sum_u64(runs: &[ClientRun], path: &str) -> u64 {
    runs.iter()
        .filter_map(|r| at(&r.summary, path).as_u64())
        .sum()
}

fn max_f64(runs: &[ClientRun], path: &str) -> f64 {
    runs.iter()
        .filter_map(|r| at(&r.summary, path).as_f64())
        .fold(0.0, f64::max)
}

/// "Average p99" (weighted by window length) and "Max p99" of the merged latency intervals, windows
/// closed as `cqlbench run` closes them: every `window` seconds from the measured start, the last one
/// whatever its length, a remainder under one second joining the window before it.
fn windowed_p99(seconds: &Seconds, window: f64) -> (Value, Value, usize, Option<String>) {
    // window index → (histogram, end)
    let mut windows: BTreeMap<i64, (Histogram<u64>, f64)> = BTreeMap::new();
    let mut last_end = 0.0f64;
    for (&second, (_, end, h)) in seconds {
        last_end = last_end.max(*end);
        if h.is_empty() {
            continue;
        }
        let index = ((second as f64 - 0.5) / window).floor().max(0.0) as i64;
        let entry = windows
            .entry(index)
            .or_insert_with(|| (new_histogram(), 0.0));
        let _ = entry.0.add(h);
        entry.1 = entry.1.max(*end);
    }
    let mut list: Vec<(f64, f64)> = Vec::new(); // (p99 ms, seconds)
    let mut previous: Option<Histogram<u64>> = None;
    let count = windows.len();
    for (k, (index, (h, _))) in windows.into_iter().enumerate() {
        let window_start = index as f64 * window;
        let is_last = k + 1 == count;
        let length = if is_last {
            (last_end - window_start).max(0.0)
        } else {
            window
        };
        match previous.as_mut() {
            Some(before) if is_last && length < 1.0 && length + 0.5 < window => {
                let _ = before.add(&h);
                if let Some(entry) = list.last_mut() {
                    entry.0 = ms(before.value_at_quantile(0.99));
                    entry.1 += length;
                }
            }
            _ => {
                list.push((ms(h.value_at_quantile(0.99)), length));
                previous = Some(h);
            }
        }
    }
    if list.is_empty() {
        return (
            Value::Null,
            Value::Null,
            0,
            Some("no successful operation".into()),
        );
    }
    let total: f64 = list.iter().map(|w| w.1).sum();
    let average = if total > 0.0 {
        list.iter().map(|w| w.0 * w.1).sum::<f64>() / total
    } else {
        list.iter().map(|w| w.0).sum::<f64>() / list.len() as f64
    };
    let max = list.iter().map(|w| w.0).fold(0.0, f64::max);
    (json!(round3(average)), json!(round3(max)), list.len(), None)
}

fn total(seconds: Option<&Seconds>) -> Histogram<u64> {
    let mut h = new_histogram();
    for (_, _, interval) in seconds.into_iter().flat_map(|s| s.values()) {
        let _ = h.add(interval);
    }
    h
}

const ERROR_KINDS: [&str; 5] = ["timeout", "unavailable", "overloaded", "other", "unsent"];

fn describe_errors(errors: &Value) -> String {
    let named: Vec<String> = ERROR_KINDS
        .iter()
        .filter_map(|k| {
            let n = errors[*k].as_u64().unwrap_or(0);
            (n > 0).then(|| format!("{k} {n}"))
        })
        .collect();
    let total: u64 = ERROR_KINDS
        .iter()
        .map(|k| errors[*k].as_u64().unwrap_or(0))
        .sum();
    format!("{total} failed: {}", named.join(", "))
}

/// Merges the result directories of every client of one run into `out` (created if needed):
/// summary.json, intervals.csv and the `.hlog` files, of the same shape as one client's.
pub fn merge_runs(dirs: &[PathBuf], out: &Path) -> Result<MergedRun> {
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
    let first = &runs[0].summary;
    let measured_start = first["measured_start_unix_s"].as_f64().unwrap_or(0.0);

    let mut merged: BTreeMap<String, Seconds> = BTreeMap::new();
    for op in OP_TYPES {
        for kind in HLOG_KINDS {
            let name = format!("{op}{kind}");
            if let Some(seconds) = merge_intervals(&runs, &name, measured_start) {
                merged.insert(name, seconds);
            }
        }
    }

    // summary.json
    let duration = max_f64(&runs, "duration_s");
    let window = first["p99_window_s"].as_f64().unwrap_or(10.0).max(1e-3);
    let mut ops = serde_json::Map::new();
    let mut successful = 0u64;
    let mut failed = json!({});
    for kind in ERROR_KINDS {
        failed[kind] = json!(0);
    }
    for op in OP_TYPES {
        if runs.iter().all(|r| r.summary["ops"][op].is_null()) {
            continue;
        }
        let count = sum_u64(&runs, &format!("ops.{op}.count"));
        successful += count;
        let mut errors = json!({});
        for kind in ERROR_KINDS {
            let n = sum_u64(&runs, &format!("ops.{op}.errors.{kind}"));
            errors[kind] = json!(n);
            failed[kind] = json!(failed[kind].as_u64().unwrap_or(0) + n);
        }
        let latency = merged.get(op);
        let (avg_p99, max_p99, windows, note) = match latency {
            Some(seconds) => windowed_p99(seconds, window),
            None => (
                Value::Null,
                Value::Null,
                0,
                Some("no successful operation".into()),
            ),
        };
        let mut summary = json!({
            "count": count,
            "errors": errors,
            "sent": sum_u64(&runs, &format!("ops.{op}.sent")),
            "ops_per_s": if duration > 0.0 { round3(count as f64 / duration) } else { 0.0 },
            "latency_ms": percentiles(&total(latency)),
            "service_time_ms": percentiles(&total(merged.get(&format!("{op}.service")))),
            "failed_latency_ms": percentiles(&total(merged.get(&format!("{op}.failed")))),
            "avg_p99_ms": avg_p99,
            "max_p99_ms": max_p99,
            "p99_windows": windows,
        });
        if let Some(note) = note {
            summary["p99_note"] = json!(note);
        }
        ops.insert(op.to_string(), summary);
    }
    let failed_total: u64 = ERROR_KINDS
        .iter()
        .map(|k| failed[*k].as_u64().unwrap_or(0))
        .sum();
    let target: Option<f64> = {
        let shares: Vec<f64> = runs
            .iter()
            .filter_map(|r| r.summary["target_rate"].as_f64())
            .collect();
        (shares.len() == runs.len()).then(|| shares.iter().sum())
    };
    let achieved = if duration > 0.0 {
        successful as f64 / duration
    } else {
        0.0
    };
    let within = |t: f64| (achieved - t).abs() <= t * 0.01;
    let rate_kept = failed_total == 0 && target.is_none_or(within);
    let statuses: Vec<&str> = runs
        .iter()
        .map(|r| r.summary["status"].as_str().unwrap_or("complete"))
        .collect();
    let status = ["failed", "interrupted"]
        .into_iter()
        .find(|s| statuses.contains(s))
        .unwrap_or("complete");
    let failures: Vec<String> = runs
        .iter()
        .filter_map(|r| {
            r.summary["failure"]
                .as_str()
                .map(|f| format!("client {}: {f}", r.id))
        })
        .collect();
    let failures_text = if failed_total > 0 {
        format!("; {}", describe_errors(&failed))
    } else {
        String::new()
    };
    let note = match (target, status) {
        (_, "failed") => format!(
            "FAILED: {}; the run was stopped{failures_text}",
            failures.join("; ")
        ),
        (_, "interrupted") => format!("interrupted after {duration:.1} s{failures_text}"),
        (None, _) => format!("unthrottled (as fast as the in-flight limit allows){failures_text}"),
        (Some(t), _) if rate_kept => format!("kept the target rate ({t:.0} ops/s offered)"),
        (Some(t), _) if within(t) => format!(
            "achieved {achieved:.1} of {t:.0} ops/s offered, BUT {}",
            describe_errors(&failed)
        ),
        (Some(t), _) => format!(
            "OFFERED {t:.0} ops/s BUT ACHIEVED {achieved:.1} successful ops/s{failures_text}; \
             latencies include the time operations waited"
        ),
    };
    let client = json!({
        // Per-client figures without histograms in the results: the worst client's.
        "hiccup_ms": worst_percentiles(&runs, "client.hiccup_ms"),
        "send_gap_ms": worst_percentiles(&runs, "client.send_gap_ms"),
        "concurrency_limited_ops": sum_u64(&runs, "client.concurrency_limited_ops"),
        "reprepared_ops": sum_u64(&runs, "client.reprepared_ops"),
        "scheduled_ops": runs.iter().all(|r| r.summary["client"]["scheduled_ops"].is_u64())
            .then(|| sum_u64(&runs, "client.scheduled_ops")),
        "unsent_ops": sum_u64(&runs, "client.unsent_ops"),
        "cancelled_ops": sum_u64(&runs, "client.cancelled_ops"),
        "max_in_flight": sum_u64(&runs, "client.max_in_flight"),
    });
    let phase = |name: &str| -> Value {
        if runs.iter().all(|r| r.summary[name].is_null()) {
            return Value::Null;
        }
        let count = sum_u64(&runs, &format!("{name}.count"));
        let seconds = max_f64(&runs, &format!("{name}.duration_s"));
        json!({
            "count": count,
            "errors": sum_u64(&runs, &format!("{name}.errors")),
            "duration_s": seconds,
            "ops_per_s": if seconds > 0.0 { round3(count as f64 / seconds) } else { 0.0 },
            // No histogram of these phases is kept: the worst client's p99.
            "latency_p99_ms": max_f64(&runs, &format!("{name}.latency_p99_ms")),
        })
    };
    let mut summary = first.clone();
    summary["target_rate"] = json!(target);
    summary["achieved_rate"] = json!(round3(achieved));
    summary["rate_kept"] = json!(rate_kept);
    summary["rate_note"] = json!(format!("{clients} clients merged: {note}"));
    summary["duration_s"] = json!(duration);
    summary["status"] = json!(status);
    summary["failure"] = if failures.is_empty() {
        Value::Null
    } else {
        json!(failures.join("; "))
    };
    summary["ops"] = Value::Object(ops);
    summary["client"] = client;
    summary["warmup"] = phase("warmup");
    summary["populate"] = phase("populate");
    summary["clients"] = json!(clients);
    summary["client_id"] = Value::Null;
    let mut hosts: Vec<Value> = Vec::new();
    for run in &runs {
        for host in run.summary["settings"]["hosts"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if !hosts.contains(host) {
                hosts.push(host.clone());
            }
        }
    }
    summary["settings"]["hosts"] = json!(hosts);
    summary["merged_from"] = json!(runs
        .iter()
        .map(|r| json!({"client_id": r.id, "dir": r.dir.display().to_string()}))
        .collect::<Vec<_>>());

    // Write: the interval logs, intervals.csv, then summary.json (a reader that sees summary.json
    // sees a finished merge).
    std::fs::create_dir_all(out).map_err(io(out))?;
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs_f64(measured_start.max(0.0));
    for (name, seconds) in &merged {
        let comments = runs
            .iter()
            .find_map(|r| r.hlog_comments.get(name))
            .cloned()
            .unwrap_or_default();
        write_hlog(
            &out.join(format!("{name}.hlog")),
            seconds,
            &comments,
            base,
            clients,
        )?;
    }
    let csv = merged_csv(&runs, &merged)?;
    let csv_path = out.join("intervals.csv");
    std::fs::write(&csv_path, csv).map_err(io(&csv_path))?;
    let path = out.join("summary.json");
    let tmp = out.join(".summary.json.tmp");
    let text = serde_json::to_string_pretty(&summary).map_err(|e| MergeError::Io {
        path: path.clone(),
        source: std::io::Error::other(e),
    })?;
    std::fs::write(&tmp, text + "\n").map_err(io(&tmp))?;
    std::fs::rename(&tmp, &path).map_err(io(&path))?;
    Ok(MergedRun {
        out: out.to_path_buf(),
        clients,
        summary,
    })
}

fn worst_percentiles(runs: &[ClientRun], path: &str) -> Value {
    let mut worst = json!({});
    for p in ["p50", "p90", "p99", "p999", "max"] {
        worst[p] = json!(max_f64(runs, &format!("{path}.{p}")));
    }
    worst
}

fn write_hlog(
    path: &Path,
    seconds: &Seconds,
    comments: &[String],
    base: SystemTime,
    clients: u64,
) -> Result<()> {
    let mut file = File::create(path).map_err(io(path))?;
    let mut serializer = V2DeflateSerializer::new();
    let mut builder = IntervalLogWriterBuilder::new();
    for comment in comments {
        builder.add_comment(comment);
    }
    builder.add_comment(&format!(
        "merged from {clients} client(s): their intervals added second by second"
    ));
    let mut writer = builder
        .with_start_time(base)
        .with_base_time(base)
        .begin_log_with(&mut file, &mut serializer)
        .map_err(io(path))?;
    writer
        .write_comment(
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"",
        )
        .map_err(io(path))?;
    for (start, end, h) in seconds.values() {
        let start = start.max(0.0);
        writer
            .write_histogram(
                h,
                Duration::from_secs_f64(start),
                Duration::from_secs_f64((end - start).max(0.0)),
                None,
            )
            .map_err(|e| MergeError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::other(format!("{e:?}")),
            })?;
    }
    Ok(())
}

/// intervals.csv of the merge: the clients' rows of one phase, operation type and second added up.
/// Counts and errors are summed, rates recomputed over the second's span, the measured rows'
/// percentiles read from the merged histograms of that second; warm-up rows (no histograms are kept
/// for the warm-up) carry counts, rates and maxima, their percentile cells empty.
fn merged_csv(runs: &[ClientRun], merged: &BTreeMap<String, Seconds>) -> Result<String> {
    let header: Vec<&str> = runs[0].header.split(',').collect();
    let column = |name: &str| {
        header.iter().position(|c| *c == name).ok_or_else(|| {
            bad(
                &runs[0].dir.join("intervals.csv"),
                format!("no column {name}"),
            )
        })
    };
    let (elapsed, phase, op) = (column("elapsed_s")?, column("phase")?, column("op")?);
    let sums: Vec<usize> = [
        "count",
        "errors",
        "timeout",
        "unavailable",
        "overloaded",
        "other",
        "unsent",
    ]
    .iter()
    .map(|c| column(c))
    .collect::<Result<_>>()?;
    let (sent, achieved, scheduled) = (
        column("sent_ops_s")?,
        column("achieved_ops_s")?,
        column("scheduled_all_ops_s")?,
    );
    let maxima: Vec<usize> = [
        "max_ms",
        "service_max_ms",
        "failed_max_ms",
        "client_hiccup_max_ms",
    ]
    .iter()
    .map(|c| column(c))
    .collect::<Result<_>>()?;

    /// One merged row: its span, summed counts, operations (rate × length) and maxima.
    struct Row {
        start: f64,
        end: f64,
        sums: Vec<u64>,
        sent: f64,
        achieved: f64,
        scheduled: f64,
        maxima: Vec<f64>,
    }
    // (second, phase order: warm-up first, op) → row
    let mut rows: BTreeMap<(i64, u8, String), Row> = BTreeMap::new();
    for run in runs {
        let path = run.dir.join("intervals.csv");
        let number = |row: &[String], i: usize| -> Result<f64> {
            row[i]
                .parse::<f64>()
                .map_err(|_| bad(&path, format!("not a number: {}", row.join(","))))
        };
        // A client writes its rows at reporting moments (one row per phase and operation type, all
        // with the moment's end). A warm-up row spans from the previous moment; a measured row from
        // the previous moment that wrote measured rows (or the measured start).
        let warmup_s = run.summary["settings"]["warmup_s"].as_f64().unwrap_or(0.0);
        let (mut moment, mut before_any) = (f64::NAN, -warmup_s);
        let (mut moment_measured, mut before_measured) = (f64::NAN, 0.0f64);
        for row in &run.rows {
            let end = number(row, elapsed)?;
            let measured = row[phase] == "measured";
            if end != moment {
                if moment.is_finite() {
                    before_any = moment;
                }
                moment = end;
            }
            if measured && end != moment_measured {
                if moment_measured.is_finite() {
                    before_measured = moment_measured;
                }
                moment_measured = end;
            }
            let start = if measured {
                before_measured
            } else {
                before_any
            };
            let length = (end - start).max(1e-9);
            let key = (second_of(end), u8::from(measured), row[op].clone());
            let entry = rows.entry(key).or_insert_with(|| Row {
                start,
                end,
                sums: vec![0; sums.len()],
                sent: 0.0,
                achieved: 0.0,
                scheduled: 0.0,
                maxima: vec![0.0; maxima.len()],
            });
            entry.start = entry.start.min(start);
            entry.end = entry.end.max(end);
            for (k, &i) in sums.iter().enumerate() {
                entry.sums[k] += number(row, i)?.round() as u64;
            }
            entry.sent += number(row, sent)? * length;
            entry.achieved += number(row, achieved)? * length;
            entry.scheduled += number(row, scheduled)? * length;
            for (k, &i) in maxima.iter().enumerate() {
                if let Ok(v) = row[i].parse::<f64>() {
                    entry.maxima[k] = entry.maxima[k].max(v);
                }
            }
        }
    }
    let mut out = runs[0].header.clone();
    out.push('\n');
    let empty = new_histogram();
    for ((second, measured, op_name), row) in &rows {
        let length = (row.end - row.start).max(1e-9);
        let mut cells = vec![String::new(); header.len()];
        cells[elapsed] = format!("{:.3}", row.end);
        cells[phase] = if *measured == 1 { "measured" } else { "warmup" }.to_string();
        cells[op] = op_name.clone();
        for (k, &i) in sums.iter().enumerate() {
            cells[i] = row.sums[k].to_string();
        }
        cells[sent] = format!("{:.1}", row.sent / length);
        cells[achieved] = format!("{:.1}", row.achieved / length);
        cells[scheduled] = format!("{:.1}", row.scheduled / length);
        for (k, &i) in maxima.iter().enumerate() {
            cells[i] = format!("{}", row.maxima[k]);
        }
        if *measured == 1 {
            let of = |kind: &str| {
                merged
                    .get(&format!("{op_name}{kind}"))
                    .and_then(|s| s.get(second))
                    .map_or(&empty, |(_, _, h)| h)
            };
            let (latency, service, failed) = (of(""), of(".service"), of(".failed"));
            let q = |h: &Histogram<u64>, q: f64| {
                if h.is_empty() {
                    "0".to_string()
                } else if q >= 1.0 {
                    format!("{}", ms(h.max()))
                } else {
                    format!("{}", ms(h.value_at_quantile(q)))
                }
            };
            for (name, h, quantile) in [
                ("p50_ms", latency, 0.5),
                ("p90_ms", latency, 0.9),
                ("p99_ms", latency, 0.99),
                ("p999_ms", latency, 0.999),
                ("max_ms", latency, 1.0),
                ("service_p50_ms", service, 0.5),
                ("service_p99_ms", service, 0.99),
                ("service_max_ms", service, 1.0),
                ("failed_p99_ms", failed, 0.99),
                ("failed_max_ms", failed, 1.0),
            ] {
                cells[column(name)?] = q(h, quantile);
            }
        }
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn histograms_are_added_second_by_second_and_counts_summed() {
        let root = tempfile::tempdir().unwrap();
        let dirs = three(root.path());
        let out = root.path().join("merged");
        let merged = merge_runs(&dirs, &out).unwrap();
        assert_eq!(merged.clients, 3);
        // One histogram of every operation of every client, recorded directly.
        let mut all = Histogram::<u64>::new(3).unwrap();
        for id in 0..3 {
            for k in 1..=4 {
                for v in values(id, k) {
                    all.record(v).unwrap();
                }
            }
        }
        let s = &merged.summary;
        let write = &s["ops"]["write"];
        assert_eq!(write["count"], 2400);
        assert_eq!(write["sent"], 2406);
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
