//! The tail-vs-GC join on two constructed cases whose answer is known, in a real campaign (one G1 node
//! on 127.0.7.129, two 12 s cells):
//! - during the first cell the test forces a stop-the-world collection (`jcmd <pid> GC.run`, a G1
//!   Full collection that the GC log records): the operations slowed at that moment must be
//!   attributed to a GC pause;
//! - during the second it freezes the node with `cqlbench cluster pause` (SIGSTOP, which no GC log
//!   sees): the operations slowed by the freeze must not be.
//!
//! The attribution is recomputed here from the cell's raw files (slow-ops.csv, the node's
//! timeline.csv) by code that does not share the report's, and compared with report.md's table.

#[path = "common/campaign_support.rs"]
mod campaign_support;
#[path = "common/cluster_support.rs"]
mod support;

use std::path::Path;
use std::process::Command;

use campaign_support::{private_home, spawn_with, wait_for, Reaper};
use serde_json::Value;

const PLAN: &str = r#"
[cluster]
nodes = 1
cassandra = "5.0.9"
jdk = 17
heap = "512M"
base-ip = "127.0.7.129"
name = "tailgc"

[[config]]
name = "G1"
gc = "g1"

[load]
workload = "KeyValue"
args = "-t 1 -c 50 -p 10k --populate 2000"
rates = [800, 1000]
duration = "12s"
warmup = "3s"
"#;

/// `node 1 of tailgc was stopped from 1795350445.123456 to 1795350445.723456 (Unix time; …)`
/// → the two times.
fn frozen_interval(said: &str) -> (f64, f64) {
    let rest = said
        .split_once("stopped from ")
        .unwrap_or_else(|| panic!("`cluster pause` said {said:?}"))
        .1;
    let (from, rest) = rest.split_once(" to ").unwrap();
    let to = rest.split_whitespace().next().unwrap();
    (from.parse().unwrap(), to.parse().unwrap())
}

/// `2026-11-22T16:21:13.123456Z` → seconds since the epoch (days from the civil date, as in
/// Howard Hinnant's algorithm; written here apart from the crates' own parser).
fn iso_to_unix(text: &str) -> f64 {
    let (date, time) = text.trim_end_matches('Z').split_once('T').unwrap();
    let d: Vec<i64> = date.split('-').map(|p| p.parse().unwrap()).collect();
    let (y, m, day) = (if d[1] <= 2 { d[0] - 1 } else { d[0] }, d[1], d[2]);
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let t: Vec<f64> = time.split(':').map(|p| p.parse().unwrap()).collect();
    days as f64 * 86_400.0 + t[0] * 3600.0 + t[1] * 60.0 + t[2]
}

/// A node's GC stops from its timeline.csv, in seconds from the measured start: pause lines, and
/// safepoints of G1's collection operations.
fn gc_stops(cell: &Path, start: f64) -> Vec<(f64, f64, String)> {
    let text = std::fs::read_to_string(cell.join("node1/timeline.csv")).unwrap();
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.splitn(3, ',').collect();
            let kind = f[2].to_string();
            let gc = kind.starts_with("pause:")
                || kind.starts_with("safepoint:G1")
                || kind == "safepoint:CollectForMetadataAllocation";
            (gc && f[0].contains('T'))
                .then(|| (iso_to_unix(f[0]) - start, iso_to_unix(f[1]) - start, kind))
        })
        .collect()
}

/// Successful operations above their type's p99: (intended, done) in seconds from the measured start.
fn above_p99(cell: &Path, summary: &Value) -> Vec<(f64, f64)> {
    let text = std::fs::read_to_string(cell.join("slow-ops.csv")).unwrap();
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            let (intended, done): (f64, f64) = (f[0].parse().unwrap(), f[1].parse().unwrap());
            let p99 = summary["ops"][f[2]]["latency_ms"]["p99"].as_f64().unwrap();
            ((done - intended) * 1000.0 > p99).then_some((intended, done))
        })
        .collect()
}

fn overlaps(op: (f64, f64), stops: &[(f64, f64, String)]) -> bool {
    stops.iter().any(|(s, e, _)| op.0 < *e && op.1 > *s)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The report.md tail table's row for a cell: (recorded slow ops, "overlapping a GC pause" text).
fn report_row(report: &str, rate: &str) -> (u64, String) {
    let line = report
        .lines()
        .find(|l| l.starts_with(&format!("| G1 | {rate} |  | p99 |")))
        .unwrap_or_else(|| panic!("no tail row for {rate} in\n{report}"));
    let f: Vec<&str> = line.split('|').map(str::trim).collect();
    let recorded = f[5].split('/').next().unwrap().trim().parse().unwrap();
    (recorded, f[6].to_string())
}

/// The first measured row at or after `seconds` in a running cell's intervals.csv.
fn cell_reached(partial: &Path, seconds: f64) -> bool {
    std::fs::read_to_string(partial.join("intervals.csv"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(",measured,"))
        .any(|l| {
            l.split(',')
                .next()
                .and_then(|v| v.parse::<f64>().ok())
                .is_some_and(|t| t >= seconds)
        })
}

fn node_pid(home: &Path) -> (String, i32) {
    for entry in std::fs::read_dir(home.join("clusters")).unwrap().flatten() {
        let state = entry.path().join("cluster.json");
        if state.is_file() {
            let value = read_json(&state);
            if let Some(pid) = value["nodes"][0]["pid"].as_i64() {
                return (entry.file_name().to_string_lossy().into_owned(), pid as i32);
            }
        }
    }
    panic!("no running campaign node under {}", home.display());
}

#[test]
fn the_tail_is_put_on_gc_pauses_and_not_on_a_frozen_node() {
    let home = private_home();
    let plan = home.path().join("tail.toml");
    std::fs::write(&plan, PLAN).unwrap();
    let out = home.path().join("results");
    let log = home.path().join("campaign.log");
    let mut reaper = Reaper {
        home: home.path().to_path_buf(),
        campaign: None,
    };
    // The machine probe is campaign.rs's to check; here it would only add time.
    let child = reaper
        .campaign
        .insert(spawn_with(home.path(), &plan, &out, &log, &["--no-probe"]));

    // 1. A forced stop-the-world collection 5 s into the first cell.
    wait_for(child, "5 s into the first cell", || {
        cell_reached(&out.join("G1/.800.partial"), 5.0)
    });
    let (cluster, pid) = node_pid(home.path());
    let gc = Command::new("jcmd")
        .args([&pid.to_string(), "GC.run"])
        .output()
        .unwrap();
    assert!(
        gc.status.success(),
        "{}",
        String::from_utf8_lossy(&gc.stderr)
    );

    // 2. The node frozen for 600 ms, 5 s into the second cell.
    wait_for(child, "5 s into the second cell", || {
        cell_reached(&out.join("G1/.1000.partial"), 5.0)
    });
    let pause = Command::new(env!("CARGO_BIN_EXE_cqlbench"))
        .args([
            "cluster", "pause", "--name", &cluster, "--node", "1", "--for", "600ms",
        ])
        .env("CQLBENCH_HOME", home.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&pause.stdout);
    assert!(
        pause.status.success(),
        "{}",
        String::from_utf8_lossy(&pause.stderr)
    );
    // When every thread of the node was stopped, and when SIGCONT was sent, as `pause` says.
    let (freeze_from, freeze_to) = frozen_interval(&said);
    let status = child.wait().unwrap();
    let log_text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(status.success(), "{log_text}");
    let report = std::fs::read_to_string(out.join("report.md"))
        .unwrap()
        // A cell taken while the machine was busy is marked (campaign.rs checks the marks).
        .replace('†', "");
    assert!(
        report.contains("## Client tail against GC pauses"),
        "{report}"
    );
    assert!(
        report.contains("## GC and server figures per cell"),
        "{report}"
    );

    // The collection: the GC log has it, the client felt it at that moment, and the report puts
    // the operations it slowed on it.
    let cell = out.join("G1/800");
    let summary = read_json(&cell.join("summary.json"));
    let start = summary["measured_start_unix_s"].as_f64().unwrap();
    let stops = gc_stops(&cell, start);
    let full: Vec<_> = stops
        .iter()
        .filter(|(_, _, kind)| kind.starts_with("pause:Full"))
        .cloned()
        .collect();
    assert!(!full.is_empty(), "no Full pause in the GC log: {stops:?}");
    let slow = above_p99(&cell, &summary);
    let slowed_by_full = slow.iter().filter(|op| overlaps(**op, &full)).count();
    assert!(
        slowed_by_full >= 1,
        "no operation above the p99 met the Full collection {full:?}"
    );
    let on_gc = slow.iter().filter(|op| overlaps(**op, &stops)).count();
    let (recorded, share) = report_row(&report, "800 ops/s");
    assert_eq!(recorded as usize, slow.len(), "{report}");
    assert_eq!(
        share,
        format!("{:.1} %", on_gc as f64 * 100.0 / slow.len() as f64),
        "{report}"
    );
    assert!(on_gc >= slowed_by_full);
    eprintln!(
        "forced collection {full:?}: {} operations above the p99, {on_gc} on GC stops, {slowed_by_full} met the Full pause",
        slow.len()
    );

    // The freeze: it slowed many operations, and none of them is put on a GC pause.
    let cell = out.join("G1/1000");
    let summary = read_json(&cell.join("summary.json"));
    let start = summary["measured_start_unix_s"].as_f64().unwrap();
    let stops = gc_stops(&cell, start);
    let slow = above_p99(&cell, &summary);
    let (from, to) = (freeze_from - start, freeze_to - start);
    let frozen: Vec<(f64, f64)> = slow
        .iter()
        .filter(|(intended, _)| *intended >= from && *intended <= to)
        .cloned()
        .collect();
    assert!(
        frozen.len() >= 20,
        "the 600 ms freeze slowed only {} operations above the p99",
        frozen.len()
    );
    // The frozen JVM ran no code: no GC stop begins or ends while it was stopped. (A collection
    // the SIGSTOP caught in its pause spans the freeze, begun before it: the GC log then says that
    // pause lasted the freeze, and the report rightly follows the log.)
    let inside = |t: f64| t > from && t < to;
    let in_freeze: Vec<_> = stops
        .iter()
        .filter(|(s, e, _)| inside(*s) || inside(*e))
        .collect();
    assert!(
        in_freeze.is_empty(),
        "GC stops within the freeze {from:.3}..{to:.3}: {in_freeze:?}"
    );
    // So a frozen operation is put on GC only through a real stop outside the freeze: one the
    // freeze caught, or one after it (the node working off the requests queued meanwhile).
    let frozen_on_gc = frozen.iter().filter(|op| overlaps(**op, &stops)).count();
    for op in frozen.iter().filter(|op| overlaps(**op, &stops)) {
        assert!(
            stops
                .iter()
                .any(|(s, e, _)| op.0 < *e && op.1 > *s && (*s >= to || *s <= from)),
            "frozen operation {op:?} put on a GC stop inside the freeze: {stops:?}"
        );
    }
    let on_gc = slow.iter().filter(|op| overlaps(**op, &stops)).count();
    let (recorded, share) = report_row(&report, "1,000 ops/s");
    assert_eq!(recorded as usize, slow.len(), "{report}");
    assert_eq!(
        share,
        format!("{:.1} %", on_gc as f64 * 100.0 / slow.len() as f64),
        "{report}"
    );
    eprintln!(
        "freeze: {} operations above the p99, {} of them intended in the freeze, {frozen_on_gc} of those and {on_gc} in all on GC stops",
        slow.len(),
        frozen.len()
    );
}
