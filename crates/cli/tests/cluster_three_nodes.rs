//! A real 3-node cluster: every node sees the others, ownership is balanced, an RF=3 keyspace takes
//! QUORUM writes and reads back at ALL, and QUORUM writes go on while one node is paused, killed,
//! or crashed behind cqlbench's back; `up` recovers the crashed node and `down` leaves no process.

#[path = "common/cluster_support.rs"]
mod support;

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use cqlbench_cluster::cql::node_view;
use cqlbench_testkit::{Consistency, NONE};
use support::{
    cqlbench, keyvalue_requests, session, session_through, statement, status_json, ClusterGuard,
    Proc,
};

const NAME: &str = "test-three-nodes";
const UP: [&str; 10] = [
    "cluster",
    "up",
    "--name",
    NAME,
    "--nodes",
    "3",
    "--base-ip",
    "127.0.2.1",
    "--heap",
    "512M",
];

/// Writes rows `range` at QUORUM, coordinated by `contact` only; returns how many succeeded.
fn write_quorum(contact: Vec<SocketAddr>, range: std::ops::Range<i32>) -> usize {
    let session = session_through(&contact);
    let mut written = 0;
    for k in range {
        let insert = statement(
            "INSERT INTO three.kv (k, v) VALUES (?, ?)",
            Consistency::Quorum,
        );
        if session.query(insert, &(k, k * 10)).is_ok() {
            written += 1;
        }
    }
    written
}

/// Reads rows `range` at ALL; returns how many came back with the written value.
fn read_all(contact: Vec<SocketAddr>, range: std::ops::Range<i32>) -> usize {
    let session = session(&contact);
    let mut found = 0;
    for k in range {
        let select = statement("SELECT v FROM three.kv WHERE k = ?", Consistency::All);
        let Ok(result) = session.query(select, &(k,)) else {
            continue;
        };
        let Ok(rows) = result.into_rows_result() else {
            continue;
        };
        if rows.maybe_first_row::<(i32,)>().ok().flatten() == Some((k * 10,)) {
            found += 1;
        }
    }
    found
}

/// Waits until every node, as the only coordinator, answers a read at ALL: each sees every replica
/// alive (gossip marks a peer alive a moment after it answers CQL, and again after a freeze), which
/// is what QUORUM writes through any of them need when one node is then taken away.
fn wait_all_see_all(contact: &[SocketAddr]) {
    for &node in contact {
        wait_until(
            &format!("{node} coordinates a read at ALL"),
            Duration::from_secs(60),
            || {
                let select = statement("SELECT v FROM three.kv WHERE k = ?", Consistency::All);
                session_through(&[node]).query(select, &(0,)).is_ok()
            },
        );
    }
}

/// Prints how long the test has run at each step (visible with --nocapture), to keep it fast.
fn step(what: &str) {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let start = START.get_or_init(Instant::now);
    eprintln!("[{:6.1} s] {what}", start.elapsed().as_secs_f64());
}

fn wait_until(what: &str, limit: Duration, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn three_node_cluster_survives_pauses_kills_and_crashes() {
    step("start");
    let guard = ClusterGuard::fresh(NAME);
    let run = cqlbench(&UP);
    assert!(run.ok(), "up failed: {}", run.stderr);
    assert!(
        run.stdout.contains("3 nodes at 127.0.2.1–127.0.2.3:9042"),
        "{}",
        run.stdout
    );
    step("3 nodes up");
    let state = guard.state();
    let contact = state.cql_contact_points();

    // Every node lists the two others, with tokens, in system.peers.
    for node in &state.nodes {
        let view = node_view(node.cql_address(), Duration::from_secs(10)).expect("node view");
        assert_eq!(view.local_tokens.len(), 16);
        for other in state.nodes.iter().filter(|o| o.index != node.index) {
            assert!(
                view.peers
                    .iter()
                    .any(|(peer, tokens)| *peer == IpAddr::V4(other.address) && tokens.len() == 16),
                "node {} does not see node {}",
                node.index,
                other.index
            );
        }
    }

    // Balanced precomputed tokens: each node owns a third of the ring.
    let status = status_json(NAME);
    for node in status["nodes"].as_array().expect("nodes") {
        let owns = node["ownership_percent"].as_f64().expect("ownership");
        assert!(
            (owns - 100.0 / 3.0).abs() < 0.5,
            "unbalanced ownership {owns}"
        );
        assert_eq!(node["process"], "up");
    }

    // Token-aware load: with RF=1, every write `cqlbench run` sends goes to the node that owns its key,
    // so each node coordinated exactly the writes it stored itself (per-table metrics in system_views).
    let results = tempfile::tempdir().expect("temp dir");
    let load = cqlbench(&[
        "run",
        "KeyValue",
        "--host",
        "127.0.2.1",
        "--keyspace",
        "routing",
        "--replication",
        "{'class': 'SimpleStrategy', 'replication_factor': 1}",
        "-r",
        "0",
        "--rate",
        "500",
        "-n",
        "1500",
        "-o",
        results.path().join("routing").to_str().expect("path"),
    ]);
    assert!(load.ok(), "routing run failed: {}", load.stderr);
    let mut stored = 0;
    for node in &state.nodes {
        let address = node.cql_address();
        let coordinated = keyvalue_requests(address, "routing", "coordinator_write_latency");
        let local = keyvalue_requests(address, "routing", "local_write_latency");
        assert!(local > 0, "node {} stored none of the writes", node.index);
        assert_eq!(
            coordinated, local,
            "node {} coordinated {coordinated} writes but stored {local}: not routed to the owner",
            node.index
        );
        stored += local;
    }
    assert_eq!(stored, 1500, "writes stored over the three nodes");

    // RF=3: QUORUM writes, read back at ALL.
    let schema = session(&contact);
    schema
        .query(
            "CREATE KEYSPACE three WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}",
            NONE,
        )
        .expect("create keyspace");
    schema
        .query("CREATE TABLE three.kv (k int PRIMARY KEY, v int)", NONE)
        .expect("create table");
    schema.await_schema_agreement().expect("schema agreement");
    wait_all_see_all(&contact);
    assert_eq!(write_quorum(contact.clone(), 0..100), 100);
    assert_eq!(read_all(contact.clone(), 0..100), 100);
    step("RF=3 QUORUM writes read back at ALL");

    // A paused (SIGSTOPped) replica does not stop QUORUM writes. The driver cannot tell a frozen
    // node from a slow one, so the writes are coordinated by the two live nodes; every row still
    // has all three nodes as replicas.
    let paused = cqlbench(&["cluster", "pause", "--name", NAME, "--node", "3"]);
    assert!(paused.ok(), "{}", paused.stderr);
    assert_eq!(status_json(NAME)["nodes"][2]["process"], "paused");
    assert_eq!(write_quorum(contact[..2].to_vec(), 100..150), 50);
    step("QUORUM writes with node 3 paused");
    assert!(cqlbench(&["cluster", "resume", "--name", NAME, "--node", "3"]).ok());
    wait_all_see_all(&contact);

    // A killed node does not either; `start` brings it back and ALL reads work again.
    let killed = cqlbench(&["cluster", "kill", "--name", NAME, "--node", "2"]);
    assert!(killed.ok(), "{}", killed.stderr);
    support::assert_node_ended(&state.nodes[1], Proc::of_node(&state.nodes[1]), "kill");
    assert_eq!(status_json(NAME)["nodes"][1]["process"], "down");
    assert_eq!(write_quorum(vec![contact[0], contact[2]], 150..200), 50);
    step("QUORUM writes with node 2 killed");
    let started = cqlbench(&["cluster", "start", "--name", NAME, "--node", "2"]);
    assert!(started.ok(), "start failed: {}", started.stderr);
    wait_until(
        "node 2 serves reads at ALL",
        Duration::from_secs(60),
        || read_all(contact.clone(), 0..200) == 200,
    );

    // A crash behind cqlbench's back leaves a stale PID; `up` notices and restarts only that node.
    let before = guard.state();
    let crashed = Proc::of_node(&before.nodes[2]);
    let crashed_pid = crashed.pid;
    assert!(!crashed.exited());
    assert!(crashed.signal(libc::SIGKILL), "{}", crashed.describe());
    wait_until("the crashed node is gone", Duration::from_secs(10), || {
        crashed.exited()
    });
    assert_eq!(status_json(NAME)["nodes"][2]["process"], "down");
    let recovered = cqlbench(&UP);
    assert!(recovered.ok(), "recovery failed: {}", recovered.stderr);
    let after = guard.state();
    assert_eq!(
        after.nodes[0].pid, before.nodes[0].pid,
        "a healthy node was restarted"
    );
    assert_eq!(
        after.nodes[1].pid, before.nodes[1].pid,
        "a healthy node was restarted"
    );
    assert_ne!(after.nodes[2].pid, Some(crashed_pid));
    assert!(after.is_up());
    step("crashed node recovered by up");
    wait_all_see_all(&contact);
    assert_eq!(write_quorum(contact.clone(), 200..220), 20);

    // Down stops everything and proves it.
    let down = cqlbench(&["cluster", "down", "--name", NAME]);
    assert!(down.ok(), "{}", down.stderr);
    for node in &after.nodes {
        support::assert_node_ended(node, Proc::of_node(node), "down");
    }
}
