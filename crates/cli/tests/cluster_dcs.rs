//! Two local datacenters of two nodes (`cluster up --dcs 2 --nodes 2 --racks 2`): every node runs
//! GossipingPropertyFileSnitch with its own rackdc file and reports its DC and rack; `cqlbench run`
//! creates its keyspace with NetworkTopologyStrategy and RF 2 per DC; `run --dc dc2 --cl
//! LOCAL_QUORUM` is coordinated by dc2's nodes only (each node's own request counts, before and
//! after), and keeps working with both dc1 nodes frozen. Impossible layouts are refused before
//! anything starts.
//!
//! Nodes live on 127.0.11.1–4 with 512M heaps (a shared 2-core machine).

#[path = "common/cluster_support.rs"]
mod support;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use cqlbench_testkit::{Driver, NONE};
use support::{cqlbench, cqlbench_with, keyvalue_requests, status_json, ClusterGuard};

const NAME: &str = "test-dcs";
const UP: [&str; 19] = [
    "cluster",
    "up",
    "--name",
    NAME,
    "--dcs",
    "2",
    "--nodes",
    "2",
    "--racks",
    "2",
    "--base-ip",
    "127.0.11.1",
    "--heap",
    "512M",
    "--start-timeout",
    "300s",
    // The nodes' own read and write timeouts as long as the client's (20 s, not 2 s): on this
    // shared machine a replica can be slow for a while, and an operation is then late, not failed.
    "--jvm-opt=-Dcassandra.config.allow_system_properties=true",
    "--jvm-opt=-Dcassandra.settings.write_request_timeout=20s",
    "--jvm-opt=-Dcassandra.settings.read_request_timeout=20s",
];
/// (address, datacenter, rack) of nodes 1–4.
const LAYOUT: [(&str, &str, &str); 4] = [
    ("127.0.11.1", "dc1", "rack1"),
    ("127.0.11.2", "dc1", "rack2"),
    ("127.0.11.3", "dc2", "rack1"),
    ("127.0.11.4", "dc2", "rack2"),
];

fn step(what: &str) {
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let start = START.get_or_init(Instant::now);
    eprintln!("[{:6.1} s] {what}", start.elapsed().as_secs_f64());
}

/// Requests node `address` itself coordinated for `dcs.keyvalue` (reads + writes), and the writes
/// it stored as a replica, from its own per-table metrics.
fn node_counts(address: SocketAddr) -> (i64, i64) {
    let count = |view| keyvalue_requests(address, "dcs", view);
    (
        count("coordinator_read_latency") + count("coordinator_write_latency"),
        count("local_write_latency"),
    )
}

/// The replication map of keyspace `dcs`, as node `address` stores it in system_schema.
fn replication(address: SocketAddr) -> BTreeMap<String, String> {
    let session = Driver::connect_single(address, Duration::from_secs(20)).expect("session");
    let rows = session
        .query(
            "SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = 'dcs'",
            NONE,
        )
        .expect("schema query")
        .into_rows_result()
        .expect("rows");
    let (map,) = rows
        .single_row::<(BTreeMap<String, String>,)>()
        .expect("keyspace dcs exists");
    map
}

/// `cqlbench run KeyValue` on keyspace `dcs` through `host`, routed to `dc`; returns the summary.
fn run_in_dc(host: &str, dc: &str, ops: &str, rate: &str, out: &Path) -> serde_json::Value {
    let run = cqlbench(&[
        "run",
        "KeyValue",
        "--host",
        host,
        "--keyspace",
        "dcs",
        "--dc",
        dc,
        "--cl",
        "LOCAL_QUORUM",
        "-r",
        "0.5",
        "--rate",
        rate,
        "-n",
        ops,
        "--request-timeout",
        "20s",
        "-o",
        out.to_str().expect("path"),
    ]);
    assert!(run.ok(), "run --dc {dc} failed: {}", run.stderr);
    let text = std::fs::read_to_string(out.join("summary.json")).expect("summary.json");
    serde_json::from_str(&text).expect("summary is JSON")
}

/// `(successful, sent)` operations of a run of `scheduled` operations: every one was sent and
/// succeeded (the nodes wait as long as the client for a replica), none failed of any kind
/// (`unavailable` would mean too few live replicas for the level).
fn checked_ops(summary: &serde_json::Value, scheduled: i64) -> (i64, i64) {
    let (mut ok, mut sent) = (0, 0);
    for op in ["read", "write"] {
        let stats = &summary["ops"][op];
        for (kind, count) in stats["errors"].as_object().expect("errors") {
            assert_eq!(count, 0, "{op}: {kind} errors: {summary}");
        }
        ok += stats["count"].as_i64().expect("count");
        sent += stats["sent"].as_i64().expect("sent");
    }
    assert_eq!(sent, scheduled, "operations left unsent: {summary}");
    assert_eq!(ok, scheduled, "operations that did not succeed: {summary}");
    (ok, sent)
}

#[test]
fn two_datacenters_keep_local_quorum_load_in_its_datacenter() {
    step("start");
    let guard = ClusterGuard::fresh(NAME);
    let up = cqlbench(&UP);
    assert!(up.ok(), "up failed: {}", up.stderr);
    step(&format!(
        "2 DCs × 2 nodes up: {}",
        up.stdout.lines().next().unwrap_or("")
    ));
    assert!(
        up.stdout.contains("4 nodes at 127.0.11.1–127.0.11.4:9042"),
        "{}",
        up.stdout
    );
    assert!(
        up.stdout
            .contains("dc2: 127.0.11.3 rack1, 127.0.11.4 rack2"),
        "{}",
        up.stdout
    );
    let state = guard.state();
    assert_eq!(state.nodes.len(), 4);

    // What cqlbench wrote: the gossiping snitch, a seed in each DC, each node's rackdc file.
    for (node, (address, dc, rack)) in state.nodes.iter().zip(LAYOUT) {
        assert_eq!(node.address.to_string(), address);
        let conf = node.dir.join("conf");
        let yaml = std::fs::read_to_string(conf.join("cassandra.yaml")).expect("yaml");
        assert!(
            yaml.contains("endpoint_snitch: GossipingPropertyFileSnitch\n"),
            "{yaml}"
        );
        assert!(
            yaml.contains("seeds: \"127.0.11.1:7000,127.0.11.3:7000\""),
            "{yaml}"
        );
        let rackdc =
            std::fs::read_to_string(conf.join("cassandra-rackdc.properties")).expect("rackdc");
        assert!(
            rackdc.contains(&format!("dc={dc}\nrack={rack}\n")),
            "{rackdc}"
        );
    }

    // Status asks every node for its own DC and rack; ownership is balanced inside each DC.
    let status = status_json(NAME);
    let nodes = status["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 4);
    for (node, (address, dc, rack)) in nodes.iter().zip(LAYOUT) {
        assert_eq!(node["address"], address);
        assert_eq!(node["answers_cql"], true, "{node}");
        assert_eq!(node["datacenter"], dc, "{node}");
        assert_eq!(node["rack"], rack, "{node}");
        let owns = node["ownership_percent"].as_f64().expect("ownership");
        assert!((owns - 50.0).abs() < 0.5, "{address} owns {owns} % of {dc}");
    }
    let text = cqlbench(&["cluster", "status", "--name", NAME]);
    assert!(text.ok(), "{}", text.stderr);
    assert!(
        text.stdout
            .lines()
            .any(|l| l.contains("127.0.11.4") && l.contains("dc2") && l.contains("rack2")),
        "{}",
        text.stdout
    );
    step("status shows DCs and racks");

    let addresses: Vec<SocketAddr> = state.nodes.iter().map(|n| n.cql_address()).collect();
    let results = tempfile::tempdir().expect("temp dir");

    // Through a dc1 contact point, --dc dc2 at LOCAL_QUORUM: the keyspace is created with NTS and
    // RF 2 in each DC (no --replication), and only dc2's nodes coordinate.
    let summary = run_in_dc(
        "127.0.11.1",
        "dc2",
        "800",
        "200",
        &results.path().join("dc2"),
    );
    let (ok, sent) = checked_ops(&summary, 800);
    assert_eq!(
        summary["settings"]["replication"],
        "{'class': 'NetworkTopologyStrategy', 'dc1': 2, 'dc2': 2}"
    );
    let expected: BTreeMap<String, String> = [
        (
            "class",
            "org.apache.cassandra.locator.NetworkTopologyStrategy",
        ),
        ("dc1", "2"),
        ("dc2", "2"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for address in &addresses {
        assert_eq!(replication(*address), expected, "schema on {address}");
    }
    let after_dc2: Vec<(i64, i64)> = addresses.iter().map(|a| node_counts(*a)).collect();
    step(&format!(
        "run --dc dc2: (coordinated, stored writes) per node {after_dc2:?}"
    ));
    for (i, (coordinated, stored)) in after_dc2.iter().enumerate() {
        if i < 2 {
            assert_eq!(*coordinated, 0, "dc1 node {} coordinated", i + 1);
            // NTS still replicated the writes to dc1: the routing, not the data, kept dc1 idle.
            assert!(*stored > 0, "dc1 node {} holds no replica", i + 1);
        } else {
            assert!(*coordinated > 0, "dc2 node {} coordinated nothing", i + 1);
        }
    }
    // Every operation was coordinated in dc2 (timed-out ones count there too).
    let dc2_coordinated = after_dc2[2].0 + after_dc2[3].0;
    assert!(
        (ok..=sent).contains(&dc2_coordinated),
        "dc2 coordinated {dc2_coordinated}; {ok} succeeded of {sent} sent"
    );

    // The other way round, through a dc2 contact point: dc1's counts grow by the run, dc2's stay.
    let summary = run_in_dc(
        "127.0.11.3",
        "dc1",
        "600",
        "200",
        &results.path().join("dc1"),
    );
    let (ok, sent) = checked_ops(&summary, 600);
    let after_dc1: Vec<(i64, i64)> = addresses.iter().map(|a| node_counts(*a)).collect();
    step(&format!(
        "run --dc dc1: (coordinated, stored writes) per node {after_dc1:?}"
    ));
    let grown: Vec<i64> = after_dc1
        .iter()
        .zip(&after_dc2)
        .map(|(after, before)| after.0 - before.0)
        .collect();
    assert!(grown[0] > 0 && grown[1] > 0, "dc1 coordination: {grown:?}");
    assert!(
        (ok..=sent).contains(&(grown[0] + grown[1])),
        "dc1 coordination {grown:?}; {ok} succeeded of {sent} sent"
    );
    assert_eq!(
        (grown[2], grown[3]),
        (0, 0),
        "dc2 coordinated a dc1 run: {grown:?}"
    );

    // LOCAL_QUORUM means dc2's replicas: with both dc1 nodes frozen (SIGSTOP), QUORUM (3 of 4
    // replicas) could not be met and every operation would fail, but a --dc dc2 LOCAL_QUORUM run
    // succeeds (the driver first waits about a minute for the frozen nodes' schema versions).
    for node in ["1", "2"] {
        let paused = cqlbench(&["cluster", "pause", "--name", NAME, "--node", node]);
        assert!(paused.ok(), "{}", paused.stderr);
    }
    let frozen = Instant::now();
    let summary = run_in_dc(
        "127.0.11.3",
        "dc2",
        "400",
        "200",
        &results.path().join("dc2-frozen-dc1"),
    );
    checked_ops(&summary, 400);
    step(&format!(
        "run --dc dc2 with dc1 frozen: ok after {:.1} s",
        frozen.elapsed().as_secs_f64()
    ));
    for node in ["1", "2"] {
        let resumed = cqlbench(&["cluster", "resume", "--name", NAME, "--node", node]);
        assert!(resumed.ok(), "{}", resumed.stderr);
    }

    let before = guard.state();
    let down = cqlbench(&["cluster", "down", "--name", NAME]);
    assert!(down.ok(), "{}", down.stderr);
    for node in &before.nodes {
        support::assert_node_ended(node, support::Proc::of_node(node), "down");
    }
    step("down");
}

/// Runs `cqlbench cluster up ARGS` against an empty cache: a refusal must come before anything
/// is fetched, written or started.
fn refused(args: &[&str], needles: &[&str]) {
    let home = tempfile::tempdir().expect("temp dir");
    let mut full = vec!["cluster", "up", "--name", "dcs-refusal"];
    full.extend_from_slice(args);
    let home_str = home.path().to_str().expect("UTF-8 temp path");
    let run = cqlbench_with(&full, &[("CQLBENCH_HOME", home_str)], None);
    run.assert_one_line_error(needles);
    assert!(!home.path().join("cassandra").exists(), "jars were fetched");
    assert!(
        !home.path().join("clusters").join("dcs-refusal").exists(),
        "a cluster directory was created for {args:?}"
    );
}

#[test]
fn impossible_datacenter_layouts_are_refused_before_anything_starts() {
    refused(&["--dcs", "0"], &["--dcs 0"]);
    refused(&["--racks", "0"], &["--racks 0"]);
    refused(&["--dcs", "2", "--nodes", "0"], &["--nodes 0"]);
    refused(
        &["--dcs", "2", "--nodes", "2", "--racks", "3"],
        &["--racks 3", "more racks than the 2 node(s) per datacenter"],
    );
    refused(
        &["--dcs", "3", "--nodes", "6"],
        &["--dcs 3 × --nodes 6 = 18 nodes", "at most 16"],
    );
    refused(
        &["--dcs", "2", "--nodes", "4", "--base-ip", "127.0.11.250"],
        &["127.0.11.250", "8 nodes (2 datacenters of 4)", "past 254"],
    );
    refused(
        &["--dcs", "18446744073709551615", "--nodes", "2"],
        &["far too many nodes"],
    );
    refused(&["--dcs", "two"], &["--dcs"]);
}

#[test]
fn up_help_teaches_datacenters_with_an_example() {
    let help = cqlbench(&["cluster", "up", "--help"]);
    assert!(help.ok(), "{}", help.stderr);
    for needle in [
        "--dcs <D>",
        "--racks <R>",
        "GossipingPropertyFileSnitch",
        "cassandra-rackdc.properties",
        "NetworkTopologyStrategy",
        "cqlbench cluster up --dcs 2 --nodes 2 --racks 2 --base-ip 127.0.11.1",
        "--dc dc2 --cl LOCAL_QUORUM",
    ] {
        assert!(
            help.stdout.contains(needle),
            "{needle:?} missing from --help"
        );
    }
}
