//! A node that dies in the middle of a run: the operations it cannot serve are counted as errors (none
//! lost, none hanging), the schedule goes on, and the load resumes on its own once the node is back.

mod run_support;

use std::time::{Duration, Instant};

use run_support::{cqlbench_ok, f64_at, read_summary, spawn_cqlbench, TestNode};

const RATE: f64 = 400.0;
const SECONDS: f64 = 30.0;

#[test]
fn killed_node_costs_errors_and_load_resumes_when_it_returns() {
    let node = TestNode::start("load-faults", "127.0.4.65");
    let dir = tempfile::tempdir().unwrap();
    // Create the schema first, so that the measured run only meets the fault.
    cqlbench_ok(&[
        "run",
        "KeyValue",
        "--host",
        &node.host,
        "--keyspace",
        "load_faults",
        "-n",
        "500",
        "--rate",
        "500",
        "-o",
        dir.path().join("warm").to_str().unwrap(),
    ]);
    let out = dir.path().join("faults");
    let child = spawn_cqlbench(&[
        "run",
        "KeyValue",
        "--host",
        &node.host,
        "--keyspace",
        "load_faults",
        "-r",
        "0.5",
        "-d",
        "30s",
        "--rate",
        "400",
        "--request-timeout",
        "2s",
        "-o",
        out.to_str().unwrap(),
    ]);
    let launched = Instant::now();
    std::thread::sleep(Duration::from_secs(6));
    cqlbench_cluster::kill_node(&node.home, &node.name, 1).expect("kill the node");
    let killed_at = launched.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_secs(2));
    cqlbench_cluster::start_node(&node.home, &node.name, 1, &mut |l: &str| eprintln!("{l}"))
        .expect("restart the node");
    let back_at = launched.elapsed().as_secs_f64();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        back_at + 8.0 < SECONDS,
        "the node took too long to come back for this test to say anything (back after {back_at:.1} s)"
    );

    let summary = read_summary(&out);
    assert_eq!(summary["status"], "complete", "{stderr}");
    // Every scheduled operation is in the result, failed or not.
    let count = f64_at(&summary, "ops.read.count") + f64_at(&summary, "ops.write.count");
    assert_eq!(count, RATE * SECONDS, "{stderr}");
    let failed: f64 = ["read", "write"]
        .iter()
        .map(|op| {
            f64_at(&summary, &format!("ops.{op}.errors.other"))
                + f64_at(&summary, &format!("ops.{op}.errors.timeout"))
        })
        .sum();
    // The node was gone for at least the 2 s between the kill and the restart.
    assert!(
        failed >= RATE * 1.5,
        "{failed} failed operations for a node down {:.1} s\n{stderr}",
        back_at - killed_at
    );
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
