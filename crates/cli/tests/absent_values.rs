//! A value that does not exist is absent everywhere: an operation without a successful one has `null`
//! latencies in summary.json, and "–" in every output that shows them — the run's terminal table,
//! intervals.csv, a merge of clients, the report's seed tables (terminal, Markdown, HTML), its
//! percentile table and comparisons, and `cqlbench compare`.
//!
//! The result directories are written through the result types themselves (what `cqlbench run`
//! writes with), so no Cassandra node is needed: two configurations at one rate, where every read
//! timed out and the writes succeeded.

mod run_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use cqlbench_results::hlog::{new_histogram, HlogKind, HlogWriter};
use cqlbench_results::{
    ConfigRecord, ErrorCounts, IntervalRow, OpSummary, Percentiles, Settings, Stopping, Summary,
    WindowP99, ABSENT, INTERVALS_FILE, INTERVAL_COLUMNS,
};
use hdrhistogram::Histogram;
use serde_json::Value;

const START: f64 = 1_800_000_000.0;
const SECONDS: u64 = 3;

/// One second's write latencies (µs) of client `id`.
fn writes(id: u64, second: u64, base: u64) -> Histogram<u64> {
    let mut h = new_histogram();
    for i in 0..100u64 {
        h.record(base + (i * 37 + second * 11 + id * 7) % 900)
            .unwrap();
    }
    h
}

/// One second's failures: every read timed out at 2 s.
fn timeouts() -> Histogram<u64> {
    let mut h = new_histogram();
    for i in 0..5u64 {
        h.record(2_000_000 + i).unwrap();
    }
    h
}

/// A run directory: `SECONDS` measured seconds of 100 successful writes and 5 timed-out reads.
fn write_run(dir: &Path, client: Option<(u64, u64)>, base: u64) -> Summary {
    std::fs::create_dir_all(dir).unwrap();
    let id = client.map_or(0, |c| c.0);
    let start = SystemTime::UNIX_EPOCH + Duration::from_secs_f64(START);
    let mut logs: BTreeMap<(&str, HlogKind), HlogWriter> = BTreeMap::new();
    for op in ["read", "write"] {
        for kind in HlogKind::ALL {
            let path = dir.join(kind.file_name(op));
            logs.insert((op, kind), HlogWriter::create(&path, &[], start).unwrap());
        }
    }
    let mut csv = format!("{INTERVAL_COLUMNS}\n");
    let (mut write_total, mut failed_total) = (new_histogram(), new_histogram());
    for second in 1..=SECONDS {
        let w = writes(id, second, base);
        let failed = timeouts();
        write_total.add(&w).unwrap();
        failed_total.add(&failed).unwrap();
        let empty = new_histogram();
        for ((op, kind), log) in logs.iter_mut() {
            let h = match (*op, kind) {
                ("write", HlogKind::Latency | HlogKind::Service) => &w,
                ("read", HlogKind::Failed) => &failed,
                _ => &empty,
            };
            log.append(h, Duration::from_secs(second - 1), Duration::from_secs(1))
                .unwrap();
        }
        let end = second as f64 + 0.002;
        for (op, ok, h) in [("read", 0, &empty), ("write", 100, &w)] {
            let service = Percentiles::of(h);
            let failures = Percentiles::of(if op == "read" { &failed } else { &empty });
            let errors = if op == "read" { 5 } else { 0 };
            let row = IntervalRow {
                elapsed_s: end,
                measured: true,
                op: op.into(),
                count: ok,
                errors,
                sent_ops_s: (ok + errors) as f64,
                achieved_ops_s: ok as f64,
                latency_ms: Percentiles::of(h),
                service_p50_ms: service.p50,
                service_p99_ms: service.p99,
                service_max_ms: service.max,
                failed_p99_ms: failures.p99,
                failed_max_ms: failures.max,
                error_kinds: ErrorCounts {
                    timeout: errors,
                    ..ErrorCounts::default()
                },
                scheduled_all_ops_s: 105.0,
                client_hiccup_max_ms: Some(0.3),
                percentiles_kept: true,
            };
            csv.push_str(&row.csv_line());
            csv.push('\n');
        }
    }
    std::fs::write(dir.join(INTERVALS_FILE), csv).unwrap();
    let mut write = OpSummary {
        count: 100 * SECONDS,
        sent: 100 * SECONDS,
        ops_per_s: 100.0,
        latency_ms: Percentiles::of(&write_total),
        service_time_ms: Percentiles::of(&write_total),
        ..OpSummary::default()
    };
    write.set_windows(&[WindowP99 {
        p99_ms: Percentiles::of(&write_total).p99.unwrap(),
        seconds: SECONDS as f64,
    }]);
    let mut read = OpSummary {
        count: 0,
        errors: ErrorCounts {
            timeout: 5 * SECONDS,
            ..ErrorCounts::default()
        },
        sent: 5 * SECONDS,
        failed_latency_ms: Percentiles::of(&failed_total),
        ..OpSummary::default()
    };
    read.set_windows(&[]);
    let clients = client.map_or(1, |c| c.1);
    let summary = Summary {
        version: cqlbench_results::FORMAT_VERSION,
        workload: "KeyValue".into(),
        target_rate: Some(105.0 / clients as f64),
        achieved_rate: 100.0,
        rate_note: "achieved 100.0 of 105 ops/s offered, BUT 15 failed: timeout 15".into(),
        duration_s: SECONDS as f64 + 0.002,
        p99_window_s: 10.0,
        ops: BTreeMap::from([("read".into(), read), ("write".into(), write)]),
        settings: Settings {
            hosts: vec!["127.0.13.140".into()],
            keyspace: "ks".into(),
            seed: 7,
            rate_all_clients: Some(105.0),
            stopping: Some(Stopping::DurationS(SECONDS as f64)),
            clients,
            ..Settings::default()
        },
        measured_start_unix_s: START,
        clients,
        client_id: Some(id),
        start_at: client.map(|_| START),
        ..Summary::default()
    };
    summary.write(dir).unwrap();
    summary
}

fn campaign(root: &Path) -> PathBuf {
    let dir = root.join("campaign");
    for (config, name, base) in [("A", "Config A", 100), ("B", "Config B", 300)] {
        let config_dir = dir.join(config);
        ConfigRecord::new(name, &cqlbench_cluster::ClusterSpec::default())
            .write(&config_dir)
            .unwrap();
        write_run(&config_dir.join("100"), None, base);
    }
    dir
}

/// The read row of a table: its cells, split on `split`.
fn row_of<'a>(text: &'a str, starts: &str, split: &str) -> Vec<&'a str> {
    let line = text
        .lines()
        .find(|l| l.starts_with(starts))
        .unwrap_or_else(|| panic!("no line starting {starts:?} in:\n{text}"));
    line.split(split).map(str::trim).collect()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn assert_read_latency_is_null(summary: &Value) {
    let read = &summary["ops"]["read"];
    for p in ["p50", "p90", "p99", "p999", "max"] {
        assert!(read["latency_ms"][p].is_null(), "latency {p}: {read}");
        assert!(read["service_time_ms"][p].is_null(), "service {p}: {read}");
        assert!(
            read["failed_latency_ms"][p].is_number(),
            "failures {p}: {read}"
        );
    }
    assert!(
        read["avg_p99_ms"].is_null() && read["max_p99_ms"].is_null(),
        "{read}"
    );
}

fn assert_read_rows_show_absent(csv: &str) {
    let rows: Vec<&str> = csv.lines().filter(|l| l.contains(",read,")).collect();
    assert!(!rows.is_empty(), "{csv}");
    for row in rows {
        let cells: Vec<&str> = row.split(',').collect();
        // p50 … max, then the service time's p50, p99, max.
        assert_eq!(&cells[7..15], [ABSENT; 8], "{row}");
        assert_ne!(cells[15], ABSENT, "the failures have a latency: {row}");
    }
}

#[test]
fn an_operation_without_successes_is_null_in_json_and_a_dash_in_every_output() {
    let root = tempfile::tempdir().unwrap();
    let dir = campaign(root.path());
    let cell = dir.join("A/100");

    // summary.json and intervals.csv as the run writes them; the run's own terminal table.
    assert_read_latency_is_null(&read_json(&cell.join("summary.json")));
    assert_read_rows_show_absent(&std::fs::read_to_string(cell.join(INTERVALS_FILE)).unwrap());
    let table = cqlbench_load::format_result_table(&Summary::read(&cell).unwrap());
    let read = row_of(&table, "read ", " ");
    let read: Vec<&str> = read.into_iter().filter(|c| !c.is_empty()).collect();
    // op, ok, ok/s, p50, p99, p99.9, max, avg p99, max p99, failed
    assert_eq!(read[1], "0", "{table}");
    assert_eq!(&read[3..9], [ABSENT; 6], "{table}");
    assert_eq!(read[9], "15", "{table}");

    // The report: seed tables in the terminal, Markdown and HTML; percentiles; comparisons.
    let out = run_support::cqlbench_ok(&["report", dir.to_str().unwrap()]);
    let reads = row_of(&out, "Config A", "  ");
    let reads_table: String = out
        .split("\n\n")
        .find(|s| s.starts_with("Reads Average p99"))
        .unwrap_or_else(|| panic!("{out}"))
        .to_string();
    assert!(
        reads_table.lines().skip(1).all(|l| l.ends_with(ABSENT)),
        "{reads_table}"
    );
    assert!(!reads.is_empty());
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let reads_md = md
        .split("\n## ")
        .find(|s| s.starts_with("Reads Average p99"))
        .unwrap();
    for config in ["Config A", "Config B"] {
        assert!(
            reads_md.contains(&format!("| {config} | {ABSENT} |")),
            "{reads_md}"
        );
    }
    let percentiles = row_of(&md, "| Config A | 100 ops/s |  | read |", "|");
    // | config | rate | repeat | op | ok | failed | p50 … max |
    assert_eq!(&percentiles[5..7], ["0", "15"], "{md}");
    assert_eq!(&percentiles[7..12], [ABSENT; 5], "{md}");
    let compared = row_of(
        &md,
        "| 100 ops/s | Config A | Config B | read p99 (ms) |",
        "|",
    );
    assert_eq!(&compared[5..10], [ABSENT; 5], "{md}");
    let write_compared = row_of(
        &md,
        "| 100 ops/s | Config A | Config B | write p99 (ms) |",
        "|",
    );
    assert!(write_compared[9].contains("significant"), "{md}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let seed = html
        .split("<table")
        .find(|t| t.contains("data-title=\"Reads Average p99\""))
        .unwrap();
    assert_eq!(
        seed.matches(&format!("<td>{ABSENT}</td>")).count(),
        2,
        "{seed}"
    );
    let row = html
        .split("<tr>")
        .find(|r| r.contains("<td>Config A</td><td>100 ops/s</td><td></td><td>read</td>"))
        .unwrap_or_else(|| panic!("{html}"));
    assert_eq!(
        row.matches(&format!("<td>{ABSENT}</td>")).count(),
        5,
        "{row}"
    );
    let row = html
        .split("<tr>")
        .find(|r| r.contains("<td>read p99 (ms)</td>"))
        .unwrap_or_else(|| panic!("{html}"));
    assert_eq!(
        row.matches(&format!("<td>{ABSENT}</td>")).count(),
        5,
        "{row}"
    );

    // `cqlbench compare`.
    let out = run_support::cqlbench_ok(&[
        "compare",
        dir.join("A/100").to_str().unwrap(),
        dir.join("B/100").to_str().unwrap(),
    ]);
    let read: Vec<&str> = row_of(&out, "read p99 (ms)", " ")
        .into_iter()
        .filter(|c| !c.is_empty())
        .collect();
    // read p99 (ms) | A | B | B - A | change | interval | p | verdict
    assert_eq!(&read[3..], [ABSENT; 7], "{out}");

    // A merge of clients: the same, from the added histograms.
    let clients: Vec<PathBuf> = (0..2)
        .map(|id| {
            let dir = root.path().join(format!("client{id}"));
            write_run(&dir, Some((id, 2)), 100);
            dir
        })
        .collect();
    let merged = root.path().join("merged");
    let mut args = vec!["report", "merge"];
    args.extend(clients.iter().map(|c| c.to_str().unwrap()));
    args.extend(["-o", merged.to_str().unwrap()]);
    run_support::cqlbench_ok(&args);
    let summary = read_json(&merged.join("summary.json"));
    assert_read_latency_is_null(&summary);
    assert_eq!(summary["ops"]["read"]["errors"]["timeout"], 30);
    assert_read_rows_show_absent(&std::fs::read_to_string(merged.join(INTERVALS_FILE)).unwrap());
}
