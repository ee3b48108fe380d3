//! The embedded default: `cqlbench run` without `--host` starts a 1-node cluster on 127.0.0.1 for the run
//! and stops it afterwards, also when Ctrl-C arrives while that node is still starting.
//!
//! Needs 127.0.0.1:9042 free (no `default` cluster of a developer running). The tests use a private
//! CQLBENCH_HOME whose Cassandra and JDK caches are links to the shared ones, so that only the cluster's
//! state is private.

mod run_support;
#[path = "common/cluster_support.rs"]
mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cqlbench_cluster::{ClusterState, Home, DEFAULT_CLUSTER_NAME};

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

/// The recorded node JVMs (PID and start time) of the run's cluster.
fn node_procs(home: &std::path::Path) -> Vec<support::Proc> {
    ClusterState::load(&Home::new(home), DEFAULT_CLUSTER_NAME)
        .unwrap()
        .map(|s| {
            s.nodes
                .iter()
                .filter(|n| n.pid.is_some())
                .map(support::Proc::of_node)
                .collect()
        })
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
    support::processes_with_any(&markers)
        .into_iter()
        .map(|p| p.pid)
        .collect()
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
    let summary = run_support::read_summary(&out);
    // Every operation of the 3 s schedule at 300 ops/s, and the rate they make.
    run_support::assert_rate_facts(&summary, &out, 900.0, 3.0);
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
    // Interrupt once the node's JVM exists but before it answers CQL (it takes seconds to get
    // there; the run goes on waiting for it, then stops it).
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut seen = Vec::new();
    let node = loop {
        assert!(
            Instant::now() < deadline,
            "no node start seen:\n{}",
            seen.join("\n")
        );
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(100)) {
            seen.push(line);
        }
        if let Some(node) = node_procs(home).first() {
            break *node;
        }
    };
    let cql = "127.0.0.1:9042".parse().unwrap();
    assert!(
        !cqlbench_cluster::process::listens_on(
            &cqlbench_cluster::process::listening_sockets(),
            cql
        ),
        "the node listened for CQL before the interrupt: the run is past its start-up"
    );
    // SAFETY: signals the child this test spawned and has not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    // The run has exited and no node holds its stderr (a node inherits no descriptor): the
    // channel ends with the run's last line.
    while let Ok(line) = lines.recv() {
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
