//! Faults in the middle of a run, against a real node. A killed node: the operations it cannot serve
//! are failures, kept apart from the successful latencies (which must not look better than without
//! the outage), none lost, and the load resumes on its own once the node is back. A node that forgot
//! the prepared statements (a schema change invalidates them): operations are re-prepared and re-sent
//! on the same connection instead of failing.

mod run_support;

use std::path::Path;
use std::time::{Duration, Instant};

use run_support::{
    accounted, cqlbench_ok, execute_cql, f64_at, hlog_quantile_ms, hlog_total, read_summary,
    spawn_cqlbench, warm_keyvalue, TestNode,
};

const RATE: f64 = 400.0;
const SECONDS: f64 = 40.0;
const KEYSPACE: &str = "load_faults";

fn run_args<'a>(node: &'a TestNode, seconds: &'a str, out: &'a Path) -> Vec<&'a str> {
    vec![
        "run",
        "KeyValue",
        "--host",
        &node.host,
        "--keyspace",
        KEYSPACE,
        "-r",
        "0.5",
        "-d",
        seconds,
        "--rate",
        "400",
        "--request-timeout",
        "2s",
        "-o",
        out.to_str().unwrap(),
    ]
}

#[test]
fn failures_are_kept_apart_and_the_load_survives_faults() {
    let node = TestNode::start("load-faults", "127.0.4.65");
    let dir = tempfile::tempdir().unwrap();
    warm_keyvalue(&node, KEYSPACE, dir.path());
    let baseline = dir.path().join("baseline");
    cqlbench_ok(&run_args(&node, "10s", &baseline));
    killed_node(&node, dir.path(), &baseline);
    forgotten_prepared_statements(&node, dir.path());
}

fn killed_node(node: &TestNode, dir: &Path, baseline: &Path) {
    // The node also forgets its prepared statements across the restart.
    execute_cql(&node.host, "TRUNCATE system.prepared_statements");
    let out = dir.join("faults");
    let child = spawn_cqlbench(&run_args(node, "40s", &out));
    let launched = Instant::now();
    std::thread::sleep(Duration::from_secs(6));
    cqlbench_cluster::kill_node(&node.home, &node.name, 1).expect("kill the node");
    let killed_at = launched.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_secs(2));
    cqlbench_cluster::start_node(&node.home, &node.name, 1, &mut |l: &str| eprintln!("{l}"))
        .expect("restart the node");
    let back_at = launched.elapsed().as_secs_f64();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        back_at + 8.0 < SECONDS,
        "the node took too long to come back for this test to say anything (back after {back_at:.1} s)"
    );

    let summary = read_summary(&out);
    assert_eq!(summary["status"], "complete", "{stderr}");
    // Every scheduled operation is in the result, successful or failed, and nothing twice.
    let (ok, failed) = accounted(&summary);
    assert_eq!(ok + failed, RATE * SECONDS, "{stderr}");
    // The node was gone for at least the 2 s between the kill and the restart.
    assert!(
        failed >= RATE * 1.5,
        "{failed} failed operations for a node down {:.1} s\n{stderr}",
        back_at - killed_at
    );
    // The rate is of successful operations, and the summary does not claim the target.
    let duration = f64_at(&summary, "duration_s");
    let achieved = f64_at(&summary, "achieved_rate");
    assert!(
        (achieved - ok / duration).abs() < 0.01,
        "achieved {achieved} vs {ok} successes in {duration} s"
    );
    assert!(achieved < RATE * 0.99, "{achieved}");
    assert_eq!(summary["rate_kept"], false);
    let note = summary["rate_note"].as_str().unwrap();
    assert!(
        !note.contains("kept the target rate") && note.contains("failed"),
        "{note}"
    );
    assert!(
        stdout.contains("failed:") && !stdout.contains("kept the target rate"),
        "{stdout}"
    );
    // The failed operations have their own latency; the .failed.hlog files hold exactly them.
    let failed_in_logs: u64 = ["read", "write"]
        .iter()
        .map(|op| hlog_total(&out.join(format!("{op}.failed.hlog"))).len())
        .sum();
    assert_eq!(failed_in_logs as f64, failed);
    assert!(f64_at(&summary, "ops.write.failed_latency_ms.max") > 0.0);
    // Failures at once (a refused connection, a few microseconds) must not make the successful
    // latencies look better than the same load without the outage: compare the low, middle and high
    // percentiles. Counted with them, a tenth or more of instant failures would put p10 two orders
    // of magnitude lower; a node warmer or colder than in the baseline moves it by far less than half.
    for op in ["read", "write"] {
        let path = |dir: &Path| dir.join(format!("{op}.hlog"));
        for q in [0.1, 0.5, 0.9] {
            let with_outage = hlog_quantile_ms(&path(&out), q);
            let without = hlog_quantile_ms(&path(baseline), q);
            assert!(
                with_outage >= without * 0.5,
                "{op} p{}: {with_outage} ms with the outage vs {without} ms without",
                q * 100.0
            );
        }
    }
    // Three seconds after the node answers again, every second is served in full and without errors.
    let csv = std::fs::read_to_string(out.join("intervals.csv")).unwrap();
    let mut healthy_seconds = 0;
    for line in csv.lines().filter(|l| l.contains(",measured,")) {
        let f: Vec<&str> = line.split(',').collect();
        let (end, count, errors): (f64, f64, f64) = (
            f[0].parse().unwrap(),
            f[3].parse().unwrap(),
            f[4].parse().unwrap(),
        );
        // Elapsed times in the file count from the measured start, a little after launch.
        if end > back_at + 3.0 && end <= SECONDS - 1.0 {
            assert_eq!(
                errors, 0.0,
                "errors after the node came back (at {back_at:.1} s):\n{csv}"
            );
            assert!(
                count > RATE / 2.0 * 0.8,
                "load did not resume (node back at {back_at:.1} s):\n{csv}"
            );
            healthy_seconds += 1;
        }
    }
    assert!(
        healthy_seconds >= 5,
        "{healthy_seconds} seconds after recovery\n{csv}"
    );
}

/// Adding a column invalidates the node's prepared statements for the table: the next EXECUTE of
/// every connection is answered UNPREPARED. The client prepares again on that connection and re-sends.
fn forgotten_prepared_statements(node: &TestNode, dir: &Path) {
    let out = dir.join("unprepared");
    let child = spawn_cqlbench(&run_args(node, "10s", &out));
    std::thread::sleep(Duration::from_secs(4));
    execute_cql(
        &node.host,
        &format!("ALTER TABLE {KEYSPACE}.keyvalue ADD added_mid_run text"),
    );
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let summary = read_summary(&out);
    let (ok, failed) = accounted(&summary);
    assert_eq!(
        (ok, failed),
        (RATE * 10.0, 0.0),
        "every operation succeeds across the schema change\n{stderr}"
    );
    let reprepared = f64_at(&summary, "client.reprepared_ops");
    assert!(
        reprepared >= 1.0,
        "no operation was re-prepared: the schema change did not invalidate the statements?\n{stderr}"
    );
    eprintln!("{reprepared} operations re-sent after a re-prepare");
}
