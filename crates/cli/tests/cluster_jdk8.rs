//! Cassandra 3.11.19 and 4.0.19 on JDK 8, with the JDK installed the way a user's machine gets it
//! (`cluster up --jdk 8` from the shared cache: Debian's OpenJDK 8 the first time, then reused).
//!
//! One start of each: 3.11 with CMS in two datacenters of one node each (so several nodes, `--dcs` and
//! `--racks` in one start), loaded with the three workloads and two `--clients`; its JDK 8 GC log read
//! with nothing left not understood, and compared with GCViewer 1.36. Then 4.0 with G1 on JDK 8.
//! The two run one after the other (a lock), so the machine is never asked for both at once.

mod run_support;
#[path = "common/cluster_support.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use run_support::Progress;
use support::{jcmd, release_version, status_json, ClusterGuard};

static ONE_CLUSTER_AT_A_TIME: Mutex<()> = Mutex::new(());

fn up(guard: &ClusterGuard, args: &[&str]) -> cqlbench_cluster::ClusterState {
    let mut full = vec!["cluster", "up", "--name", guard.name.as_str()];
    full.extend_from_slice(args);
    let run = guard.run(&full);
    assert!(run.ok(), "up failed: {}\n{}", run.stdout, run.stderr);
    let state = guard.state();
    assert_eq!(state.jdk.major, 8, "{:?}", state.jdk);
    assert!(state.jdk.version.starts_with("1.8.0_"), "{:?}", state.jdk);
    assert!(state.jdk.jcmd().is_file(), "a full JDK 8 with jcmd");
    state
}

/// `cqlbench run` against the cluster's first node; returns the run's summary.json.
fn run_load(
    state: &cqlbench_cluster::ClusterState,
    out: &Path,
    args: &[&str],
) -> serde_json::Value {
    let host = state.nodes[0].address.to_string();
    let mut full = vec!["run"];
    full.extend_from_slice(args);
    full.extend(["--host", host.as_str(), "-o", out.to_str().expect("UTF-8")]);
    let run = support::cqlbench(&full);
    assert!(run.ok(), "run {args:?} failed: {}", run.stderr);
    let text = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    serde_json::from_str(&text).expect("summary is JSON")
}

/// Checks that the run completed with no failure and some successes; returns how many succeeded.
fn assert_kept(summary: &serde_json::Value, what: &str) -> u64 {
    assert_eq!(summary["status"], "complete", "{what}: {summary}");
    let failed: u64 = summary["ops"]
        .as_object()
        .expect("ops")
        .values()
        .map(|op| {
            op["errors"]
                .as_object()
                .map_or(0, |e| e.values().filter_map(|v| v.as_u64()).sum())
        })
        .sum();
    assert_eq!(failed, 0, "{what}: operations failed: {summary}");
    let ok: u64 = summary["ops"]
        .as_object()
        .expect("ops")
        .values()
        .filter_map(|op| op["count"].as_u64())
        .sum();
    assert!(ok > 0, "{what}: no successful operation: {summary}");
    ok
}

/// The lines of a node's GC log parts that the parser does not understand (shown when a test fails).
fn not_understood(logs: &Path) -> Vec<String> {
    cqlbench_gclog::rotated_parts(&logs.join("gc.log"))
        .expect("GC log parts")
        .iter()
        .flat_map(|part| {
            std::fs::read_to_string(part)
                .expect("GC log")
                .lines()
                .filter(|l| cqlbench_gclog::parse_line(l.as_bytes()).is_none())
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `cqlbench gc analyze DIR --json` on a node's logs directory.
fn analyze(logs: &Path) -> serde_json::Value {
    let run = support::cqlbench(&["gc", "analyze", logs.to_str().expect("UTF-8"), "--json"]);
    assert!(run.ok(), "gc analyze failed: {}", run.stderr);
    serde_json::from_str(&run.stdout).expect("gc analyze --json is JSON")
}

fn live_flags(state: &cqlbench_cluster::ClusterState, node: usize) -> String {
    let pid = state.nodes[node].pid.expect("pid");
    jcmd(state, pid, "VM.flags")
}

#[test]
fn cassandra_311_on_jdk8_with_cms_in_two_datacenters() {
    let _one = ONE_CLUSTER_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let guard = ClusterGuard::fresh("test-c311");
    let state = up(
        &guard,
        &[
            "--cassandra",
            "3.11.19",
            "--jdk",
            "8",
            "--gc",
            "cms",
            "--gc-threads",
            "2",
            "--heap",
            "512M",
            "--dcs",
            "2",
            "--nodes",
            "1",
            "--racks",
            "1",
            "--base-ip",
            "127.0.14.1",
        ],
    );
    assert_eq!(state.nodes.len(), 2);
    assert_eq!(release_version(&state), "3.11.19");

    // The live JVMs run ParNew + CMS with the seed's flags, and log GC as Cassandra 3.11 does.
    for node in 0..2 {
        let flags = live_flags(&state, node);
        for expected in [
            "-XX:+UseConcMarkSweepGC",
            "-XX:+UseParNewGC",
            "-XX:CMSInitiatingOccupancyFraction=75",
            "-XX:ParallelGCThreads=2",
            "-XX:+PrintHeapAtGC",
            "-XX:+PrintTenuringDistribution",
        ] {
            assert!(flags.contains(expected), "{expected} missing from {flags}");
        }
        assert_eq!(
            state.nodes[node].effective_collector.as_deref(),
            Some("UseConcMarkSweepGC")
        );
    }
    let status = status_json(&guard.name);
    assert_eq!(status["jdk_major"], 8, "{status}");
    assert_eq!(status["cassandra_version"], "3.11.19");
    let dcs: Vec<&str> = status["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| n["datacenter"].as_str().unwrap_or("?"))
        .collect();
    assert_eq!(dcs, ["dc1", "dc2"], "{status}");

    // The three workloads over protocol v4, then one schedule sent by two clients.
    let out = tempfile::tempdir().expect("temp dir");
    for workload in ["KeyValue", "BasicTimeSeries", "Tabular"] {
        let summary = run_load(
            &state,
            &out.path().join(workload),
            &[workload, "--rate", "400", "-d", "6s", "--populate", "2000"],
        );
        let ok = assert_kept(&summary, workload);
        // Every operation of the 2400 on the schedule succeeded. Whether the achieved rate is also
        // within 1 % of 400 (rate_kept) depends on the last operation's latency alone (60 ms at 6 s,
        // one ParNew pause), which no test can promise on a shared machine: only that the verdict
        // says what the figures say.
        assert_eq!(ok, 2400, "{workload}: {summary}");
        let achieved = summary["achieved_rate"].as_f64().expect("achieved_rate");
        assert_eq!(
            summary["rate_kept"].as_bool(),
            Some((achieved - 400.0).abs() <= 4.0),
            "{workload}: {summary}"
        );
    }
    // The common start is written once both clients are connected (`--start-at @FILE`), a moment
    // ahead: however long they took to get ready on a two-datacenter 3.11 cluster.
    let start_file = out.path().join("start");
    let start_arg = format!("@{}", start_file.display());
    let host = state.nodes[1].address.to_string();
    let mut clients = run_support::Children(
        (0..2)
            .map(|id| {
                let out = out.path().join(format!("client{id}"));
                run_support::spawn_cqlbench(&[
                    "run",
                    "KeyValue",
                    "--rate",
                    "600",
                    "-d",
                    "5s",
                    "--clients",
                    "2",
                    "--client-id",
                    &id.to_string(),
                    "--start-at",
                    &start_arg,
                    "--host",
                    &host,
                    "-o",
                    out.to_str().expect("UTF-8"),
                ])
            })
            .collect(),
    );
    let mut progress: Vec<Progress> = clients.0.iter_mut().map(Progress::of).collect();
    for p in &mut progress {
        p.wait_for("ready: waiting for the common start in");
    }
    run_support::write_start(
        &start_file,
        &format!("{:.3}", run_support::unix_now() + 1.5),
    );
    for (out, progress) in clients.wait_with_output().into_iter().zip(progress) {
        assert!(
            out.status.success(),
            "client failed\nstdout:\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            progress.rest()
        );
    }
    let merged = out.path().join("merged");
    let merge = support::cqlbench(&[
        "report",
        "merge",
        out.path().join("client0").to_str().expect("UTF-8"),
        out.path().join("client1").to_str().expect("UTF-8"),
        "-o",
        merged.to_str().expect("UTF-8"),
    ]);
    assert!(merge.ok(), "merge failed: {}", merge.stderr);
    let merged: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(merged.join("summary.json")).expect("merged summary"),
    )
    .expect("JSON");
    assert_kept(&merged, "two clients");
    assert_eq!(
        merged["ops"]["write"]["count"].as_u64().unwrap_or(0)
            + merged["ops"]["read"]["count"].as_u64().unwrap_or(0),
        3000,
        "{merged}"
    );

    // 3.11 logs its flushes at DEBUG; the node lets that logger through, so write amplification
    // (flushed bytes from these lines) has its input.
    let system_log = std::fs::read_to_string(&state.nodes[0].system_log).expect("system.log");
    assert!(
        system_log
            .lines()
            .any(|l| l.contains("Completed flushing") && l.contains("Data.db (")),
        "no flush line in {}",
        state.nodes[0].system_log.display()
    );

    // A forced full collection makes sure the log has a stop of each kind to compare.
    let pid = state.nodes[0].pid.expect("pid");
    jcmd(&state, pid, "GC.run");
    std::thread::sleep(std::time::Duration::from_secs(1));

    // Stopped first: a running JVM may be in the middle of writing the log's last line.
    let down = guard.run(&["cluster", "down", "--name", &guard.name]);
    assert!(down.ok(), "{}", down.stderr);

    // Cassandra 3.11's JDK 8 GC log (PrintHeapAtGC, tenuring, rotation): every line understood.
    let logs = state.nodes[0].dir.join("logs");
    let current: Vec<PathBuf> = std::fs::read_dir(&logs)
        .expect("logs")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".current"))
        .collect();
    assert_eq!(current.len(), 1, "one live rotated part: {current:?}");
    let text = std::fs::read_to_string(&current[0]).expect("gc log");
    assert!(text.contains("{Heap before GC"), "PrintHeapAtGC");
    assert!(
        text.contains("Desired survivor size"),
        "PrintTenuringDistribution"
    );
    assert!(text.contains("[ParNew"), "ParNew collections");
    let report = analyze(&logs);
    assert_eq!(
        report["unparsed_lines"],
        0,
        "not understood: {:?}",
        not_understood(&logs)
    );
    assert_eq!(report["unfinished_collections"], 0, "{report}");
    assert_eq!(report["format"], "jdk8", "{report}");
    let pauses = report["pauses"]["count"].as_u64().expect("pause count");
    assert!(pauses > 0, "{report}");

    // GCViewer 1.36 reads the same file to the same pauses (count and total) and stopped-time lines.
    let gcviewer = gcviewer::summary(&current[0]);
    let total_ms = report["pauses"]["total_ms"].as_f64().expect("total");
    println!(
        "GCViewer 1.36 vs cqlbench on {}: pauses {} vs {pauses}, total {:.3} vs {total_ms:.3} ms, stopped-time lines {} vs {}",
        current[0].display(),
        gcviewer.gc_pauses,
        gcviewer.gc_pause_total_ms,
        gcviewer.stopped_events,
        report["safepoints"]["count"]
    );
    assert_eq!(
        gcviewer.gc_pauses, pauses,
        "GCViewer vs cqlbench pause count"
    );
    // GCViewer prints averages to 10 µs: its total is good to 5 µs a pause.
    assert!(
        (gcviewer.gc_pause_total_ms - total_ms).abs() <= 0.005 * pauses as f64 + 1e-6,
        "GCViewer {} ms vs cqlbench {total_ms} ms",
        gcviewer.gc_pause_total_ms
    );
    assert_eq!(
        gcviewer.stopped_events,
        report["safepoints"]["count"].as_u64().expect("safepoints"),
        "GCViewer's VM operation events vs cqlbench's stopped-time lines"
    );
}

#[test]
fn cassandra_40_on_jdk8_with_g1() {
    let _one = ONE_CLUSTER_AT_A_TIME
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let guard = ClusterGuard::fresh("test-c40-jdk8");
    let state = up(
        &guard,
        &[
            "--cassandra",
            "4.0.19",
            "--jdk",
            "8",
            "--gc",
            "g1",
            "--heap",
            "512M",
            "--base-ip",
            "127.0.14.10",
        ],
    );
    assert_eq!(release_version(&state), "4.0.19");
    let flags = live_flags(&state, 0);
    for expected in [
        "-XX:+UseG1GC",
        "-XX:MaxGCPauseMillis=300",
        "-XX:+PrintGCDateStamps",
    ] {
        assert!(flags.contains(expected), "{expected} missing from {flags}");
    }
    assert!(!flags.contains("UseConcMarkSweepGC"), "{flags}");
    let out = tempfile::tempdir().expect("temp dir");
    let summary = run_load(
        &state,
        &out.path().join("kv"),
        &["KeyValue", "--rate", "500", "-d", "6s"],
    );
    assert_kept(&summary, "KeyValue on 4.0/JDK 8");
    // Stopped first: a running JVM may be in the middle of writing the log's last line.
    let down = guard.run(&["cluster", "down", "--name", &guard.name]);
    assert!(down.ok(), "{}", down.stderr);

    let logs = state.nodes[0].dir.join("logs");
    let report = analyze(&logs);
    assert_eq!(
        report["unparsed_lines"],
        0,
        "not understood: {:?}",
        not_understood(&logs)
    );
    assert_eq!(report["unfinished_collections"], 0, "{report}");
    assert_eq!(report["format"], "jdk8", "{report}");
}

/// GCViewer 1.36 (Maven Central, fetched once with mvn into the target directory) on a log file.
mod gcviewer {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    pub struct Summary {
        /// `gcPauseCount + fullGcPauseCount`: GCViewer's `pauseCount` also counts the
        /// `Total time for which application threads were stopped` lines (its VM operations).
        pub gc_pauses: u64,
        pub gc_pause_total_ms: f64,
        /// `pauseCount` minus the GC pauses.
        pub stopped_events: u64,
    }

    fn jar() -> PathBuf {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gcviewer");
        let jar = dir.join("gcviewer-1.36.jar");
        if !jar.is_file() {
            let status = Command::new("mvn")
                .args([
                    "-B",
                    "-q",
                    "dependency:copy",
                    "-Dartifact=com.github.chewiebug:gcviewer:1.36",
                    "-Dmdep.useBaseVersion=true",
                ])
                .arg(format!("-DoutputDirectory={}", dir.display()))
                .status()
                .expect("mvn runs");
            assert!(status.success(), "mvn could not fetch GCViewer 1.36");
        }
        jar
    }

    /// GCViewer's SUMMARY export of `log`.
    pub fn summary(log: &Path) -> Summary {
        let out = tempfile::tempdir().expect("temp dir");
        let csv = out.path().join("summary.csv");
        let output = Command::new(crate::system_java())
            .arg("-Djava.awt.headless=true")
            .arg("-jar")
            .arg(jar())
            .arg(log)
            .arg(&csv)
            .arg("-t")
            .arg("SUMMARY")
            .output()
            .expect("java runs GCViewer");
        assert!(
            output.status.success(),
            "GCViewer failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let text = std::fs::read_to_string(&csv).expect("GCViewer summary");
        let value = |key: &str| -> f64 {
            text.lines()
                .find(|l| l.split(';').next().map(str::trim) == Some(key))
                .and_then(|l| l.split(';').nth(1))
                .and_then(|v| v.trim().replace(',', "").parse().ok())
                .unwrap_or_else(|| panic!("GCViewer's summary has no number {key}: {text}"))
        };
        let optional = |key: &str| -> f64 {
            // A summary without full collections says "n.a." for their averages.
            text.lines()
                .find(|l| l.split(';').next().map(str::trim) == Some(key))
                .and_then(|l| l.split(';').nth(1))
                .and_then(|v| v.trim().replace(',', "").parse().ok())
                .unwrap_or(0.0)
        };
        let young = value("gcPauseCount");
        let full = value("fullGcPauseCount");
        Summary {
            gc_pauses: (young + full) as u64,
            gc_pause_total_ms: (optional("avgGCPause") * young + optional("avgFullGCPause") * full)
                * 1000.0,
            stopped_events: (value("pauseCount") - young - full) as u64,
        }
    }
}

/// The machine's JDK 17 (GCViewer runs on any JDK 8+).
fn system_java() -> PathBuf {
    let home = cqlbench_cluster::Home::from_env();
    cqlbench_cluster::jdk::discover(&home)
        .into_iter()
        .find(|j| j.major == 17)
        .map(|j| j.java())
        .unwrap_or_else(|| PathBuf::from("java"))
}
