//! A real 1-node cluster with Shenandoah and a 512M heap: it answers CQL, the live JVM runs
//! Shenandoah, the GC log exists and grows, the fault tools work, and `down` leaves no process.

#[path = "common/cluster_support.rs"]
mod support;

use std::time::{Duration, Instant};

use cqlbench_testkit::{Consistency, NONE};
use support::{cqlbench, jcmd, session, statement, status_json, ClusterGuard};

const NAME: &str = "test-one-node";
const BASE_IP: &str = "127.0.1.10";

#[test]
fn one_node_shenandoah_cluster_round_trip() {
    let guard = ClusterGuard::fresh(NAME);
    let up_args = [
        "cluster",
        "up",
        "--name",
        NAME,
        "--base-ip",
        BASE_IP,
        "--gc",
        "shenandoah",
        "--heap",
        "512M",
    ];
    let run = cqlbench(&up_args);
    assert!(run.ok(), "up failed: {}", run.stderr);
    assert!(
        run.stdout
            .contains("cluster test-one-node up: 1 node at 127.0.1.10:9042"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("starting node 1"),
        "no progress shown: {}",
        run.stderr
    );

    let state = guard.state();
    let node = &state.nodes[0];
    let pid = node.pid.expect("node has a PID");
    let proc = support::Proc::of_node(node);
    assert!(!proc.exited());

    // CQL answers: a real write and read back.
    let contact = state.cql_contact_points();
    let value = {
        let session = session(&contact);
        session
            .query(
                "CREATE KEYSPACE IF NOT EXISTS one WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
                NONE,
            )
            .expect("create keyspace");
        session
            .query(
                "CREATE TABLE IF NOT EXISTS one.kv (k int PRIMARY KEY, v text)",
                NONE,
            )
            .expect("create table");
        for k in 0..500 {
            session
                .query(
                    statement("INSERT INTO one.kv (k, v) VALUES (?, ?)", Consistency::One),
                    &(k, format!("value-{k}")),
                )
                .expect("insert");
        }
        let rows = session
            .query("SELECT v FROM one.kv WHERE k = 42", NONE)
            .expect("select")
            .into_rows_result()
            .expect("rows");
        rows.single_row::<(String,)>().expect("one row").0
    };
    assert_eq!(value, "value-42");

    // The live JVM runs Shenandoah with the requested heap, and the state file recorded it.
    let flags = jcmd(&state, pid, "VM.flags");
    assert!(flags.contains("-XX:+UseShenandoahGC"), "{flags}");
    assert!(flags.contains("-XX:MaxHeapSize=536870912"), "{flags}");
    assert_eq!(node.effective_collector.as_deref(), Some("UseShenandoahGC"));
    assert!(node
        .effective_jvm_flags
        .iter()
        .any(|f| f == "-XX:+UseShenandoahGC"));

    // The unified GC log exists, names the collector, has safepoint events, and grows.
    let log_before = std::fs::read_to_string(&node.gc_log).expect("gc.log exists");
    assert!(
        log_before.contains("Using Shenandoah"),
        "gc.log does not name Shenandoah"
    );
    assert!(
        log_before.contains("[safepoint"),
        "gc.log has no safepoint events"
    );
    jcmd(&state, pid, "GC.run");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut grown = false;
    while Instant::now() < deadline && !grown {
        grown = std::fs::metadata(&node.gc_log)
            .map(|m| m.len())
            .unwrap_or(0)
            > log_before.len() as u64;
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(grown, "gc.log did not grow after a GC");

    // Repeating `up` finds the running cluster and starts nothing.
    let again = cqlbench(&up_args);
    assert!(again.ok(), "{}", again.stderr);
    assert!(again.stderr.contains("already up"), "{}", again.stderr);
    assert_eq!(guard.state().nodes[0].pid, Some(pid));

    // Status reads the live cluster.
    let status = status_json(NAME);
    let node_status = &status["nodes"][0];
    assert_eq!(node_status["process"], "up");
    assert_eq!(node_status["answers_cql"], true);
    let owns = node_status["ownership_percent"]
        .as_f64()
        .expect("ownership");
    assert!((owns - 100.0).abs() < 0.01, "{owns}");
    assert_eq!(status["gc"], "shenandoah");

    // The whole log holds the start of CQL; its last line is a line of the file (the node goes on
    // writing, so the file read after it may have more).
    let logs = cqlbench(&[
        "cluster", "logs", "--name", NAME, "--node", "1", "--lines", "1000000",
    ]);
    assert!(logs.ok());
    assert!(
        logs.stdout.contains("Starting listening for CQL clients"),
        "{}",
        logs.stdout
    );
    let last = cqlbench(&[
        "cluster", "logs", "--name", NAME, "--node", "1", "--lines", "1",
    ]);
    assert!(last.ok());
    let printed: Vec<&str> = last.stdout.lines().collect();
    assert_eq!(printed.len(), 2, "a header and one line: {}", last.stdout);
    let system_log = std::fs::read_to_string(&node.system_log).unwrap();
    assert!(
        system_log.lines().any(|l| l == printed[1]),
        "{:?} is not a line of {}",
        printed[1],
        node.system_log.display()
    );

    // Pause: SIGSTOP shows as paused, resume brings CQL back; --for resumes by itself.
    let paused = cqlbench(&["cluster", "pause", "--name", NAME, "--node", "1"]);
    assert!(paused.ok(), "{}", paused.stderr);
    assert_eq!(status_json(NAME)["nodes"][0]["process"], "paused");
    assert!(cqlbench(&["cluster", "resume", "--name", NAME, "--node", "1"]).ok());
    // Stopped for the time asked, from the moment every thread was: as `pause` prints it.
    let timed = cqlbench(&[
        "cluster", "pause", "--name", NAME, "--node", "1", "--for", "1s",
    ]);
    assert!(timed.ok(), "{}", timed.stderr);
    let times: Vec<f64> = timed
        .stdout
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .filter(|t| *t > 1e9)
        .collect();
    assert!(
        times.len() == 2 && times[1] - times[0] >= 1.0,
        "{}",
        timed.stdout
    );
    let after = status_json(NAME);
    assert_eq!(after["nodes"][0]["process"], "up");
    assert_eq!(after["nodes"][0]["answers_cql"], true);

    // Down stops the JVM and verifies it; repeating it is harmless.
    let down = cqlbench(&["cluster", "down", "--name", NAME]);
    assert!(down.ok(), "{}", down.stderr);
    assert!(down.stdout.contains("no process left"));
    support::assert_node_ended(node, proc, "down");
    assert_eq!(guard.state().nodes[0].pid, None);
    assert!(cqlbench(&["cluster", "down", "--name", NAME]).ok());
    assert_eq!(status_json(NAME)["nodes"][0]["process"], "down");

    // A stopped cluster starts again on its data.
    let restarted = cqlbench(&up_args);
    assert!(restarted.ok(), "restart failed: {}", restarted.stderr);
    let restarted = guard.state();
    let restarted_proc = support::Proc::of_node(&restarted.nodes[0]);
    let restarted_pid = restarted_proc.pid;
    assert_ne!(restarted_proc, proc);

    // A lost state file: the running node is found by its directory, `up` refuses to start a
    // second copy, and `destroy` stops it anyway.
    std::fs::write(state.dir.join("cluster.json"), "{ not json").unwrap();
    let status = cqlbench(&["cluster", "status", "--name", NAME]);
    status.assert_one_line_error(&["unreadable"]);
    std::fs::remove_file(state.dir.join("cluster.json")).unwrap();
    let refused = cqlbench(&up_args);
    refused.assert_one_line_error(&[
        "without being in its state file",
        &restarted_pid.to_string(),
    ]);
    let destroyed = cqlbench(&["cluster", "destroy", "--name", NAME]);
    assert!(destroyed.ok(), "{}", destroyed.stderr);
    assert!(
        destroyed.stderr.contains("untracked node process"),
        "{}",
        destroyed.stderr
    );
    support::assert_node_ended(
        &restarted.nodes[0],
        restarted_proc,
        "destroy of an untracked node",
    );
    assert!(!state.dir.exists());
}
