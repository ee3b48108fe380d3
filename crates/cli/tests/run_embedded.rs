//! The embedded default: `cqlbench run` without `--host` starts a 1-node cluster on 127.0.0.1 for the run
//! and stops it afterwards, also when Ctrl-C arrives while that node is still starting.
//!
//! Needs 127.0.0.1:9042 free (no `default` cluster of a developer running). The tests use a private
//! CQLBENCH_HOME whose Cassandra and JDK caches are links to the shared ones, so that only the cluster's
//! state is private.

#[path = "common/cluster_support.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cqlbench_cluster::{ClusterState, Home, DEFAULT_CLUSTER_NAME};
use support::process_exists;

fn private_home() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let shared = Home::from_env();
    for cache in ["cassandra", "jdks"] {
        let from = shared.root().join(cache);
        std::fs::create_dir_all(&from).unwrap();
        std::os::unix::fs::symlink(&from, dir.path().join(cache)).unwrap();
    }
    dir
}

fn node_pids(home: &std::path::Path) -> Vec<i32> {
    ClusterState::load(&Home::new(home), DEFAULT_CLUSTER_NAME)
        .unwrap()
        .map(|s| s.nodes.iter().filter_map(|n| n.pid).collect())
        .unwrap_or_default()
}

/// Live processes of the cluster's nodes, found the way cqlbench marks them: by the data directory on
/// their command line.
fn live_node_processes(home: &std::path::Path) -> Vec<i32> {
    let Some(state) = ClusterState::load(&Home::new(home), DEFAULT_CLUSTER_NAME).unwrap() else {
        return Vec::new();
    };
    let markers: Vec<String> = state
        .nodes
        .iter()
        .map(|n| format!("-Dcassandra.storagedir={}", n.dir.join("data").display()))
        .collect();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if markers.iter().any(|m| cmdline.contains(m.as_str())) && process_exists(pid) {
            found.push(pid);
        }
    }
    found
}

fn embedded_run(home: &std::path::Path, out: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cqlbench"));
    cmd.args([
        "run",
        "KeyValue",
        "-d",
        "3s",
        "--rate",
        "300",
        "--keyspace",
        "embedded",
    ])
    .arg("-o")
    .arg(out)
    .env("CQLBENCH_HOME", home);
    cmd
}

fn runs_on_its_own_node_and_stops_it(home: &std::path::Path) {
    let out = home.join("result");
    let output = embedded_run(home, &out).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("starting a 1-node Cassandra cluster"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("p99.9 ms"));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let achieved = summary["achieved_rate"].as_f64().unwrap();
    assert!((achieved - 300.0).abs() <= 3.0, "achieved {achieved}");
    assert_eq!(
        summary["settings"]["hosts"][0], "127.0.0.1:9042",
        "{summary}"
    );
    let state = ClusterState::load(&Home::new(home), DEFAULT_CLUSTER_NAME)
        .unwrap()
        .expect("the run recorded its cluster");
    assert_eq!(state.nodes.len(), 1);
    assert!(!state.is_up(), "the run's node is still up");
    assert_eq!(
        live_node_processes(home),
        Vec::<i32>::new(),
        "node processes outlived the run"
    );
}

fn ctrl_c_during_start_up_stops_the_node(home: &std::path::Path) {
    let mut child = embedded_run(home, &home.join("interrupted"))
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let (lines_tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    // Interrupt once the node's JVM exists but before it answers CQL.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut seen = Vec::new();
    loop {
        assert!(
            Instant::now() < deadline,
            "no node start seen:\n{}",
            seen.join("\n")
        );
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(100)) {
            seen.push(line);
        }
        if !node_pids(home).is_empty() {
            break;
        }
    }
    let pid = node_pids(home)[0];
    let node = support::Proc::of(pid);
    // SAFETY: signals the child this test spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    while let Ok(line) = lines.recv_timeout(Duration::from_secs(1)) {
        seen.push(line);
    }
    let text = seen.join("\n");
    assert!(!status.success(), "an interrupted run must fail:\n{text}");
    assert!(
        text.contains("interrupted while the local node was starting"),
        "{text}"
    );
    assert!(
        node.exited(),
        "node {} kept running after Ctrl-C:\n{text}",
        node.describe()
    );
    assert_eq!(live_node_processes(home), Vec::<i32>::new(), "{text}");
}

#[test]
fn embedded_default_cluster() {
    let home = private_home();
    runs_on_its_own_node_and_stops_it(home.path());
    ctrl_c_during_start_up_stops_the_node(home.path());
}
