//! Measurement truth against a real Cassandra node: a 2 s SIGSTOP shows up in the corrected latency as
//! the schedule implies (and far less in the service time), and nothing is lost or counted twice.

mod run_support;

use std::time::{Duration, Instant};

use run_support::{cqlbench_ok, f64_at, hlog_total, read_summary, TestNode};

#[test]
fn stall_truth_and_unique_keys() {
    let node = TestNode::start("load-truth", "127.0.4.1");
    let dir = tempfile::tempdir().unwrap();
    cqlbench_ok(&[
        "run",
        "KeyValue",
        "--host",
        &node.host,
        "--keyspace",
        "load_truth",
        "--drop",
        "-n",
        "1000",
        "--rate",
        "1000",
        "-o",
        dir.path().join("warm").to_str().unwrap(),
    ]);
    stall_shows_in_corrected_latency(&node, dir.path());
    rows_equal_successful_writes(&node, dir.path());
}

fn stall_shows_in_corrected_latency(node: &TestNode, dir: &std::path::Path) {
    const RATE: f64 = 2000.0;
    const SECONDS: f64 = 14.0;
    let (concurrency, threads) = (50.0, 2.0);
    let out = dir.join("stall");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_cqlbench"))
        .args([
            "run",
            "KeyValue",
            "--host",
            &node.host,
            "--keyspace",
            "load_truth",
            "-d",
            "14s",
            "--rate",
            "2000",
            "-c",
            "50",
            "-t",
            "2",
            "-o",
            out.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(6));
    let paused_at = Instant::now();
    node.pause(Duration::from_secs(2));
    let pause = paused_at.elapsed().as_secs_f64();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let summary = read_summary(&out);
    let total = RATE * SECONDS;
    assert_eq!(
        f64_at(&summary, "ops.read.count") + f64_at(&summary, "ops.write.count"),
        total
    );
    let mut corrected = hlog_total(&out.join("read.hlog"));
    corrected.add(hlog_total(&out.join("write.hlog"))).unwrap();
    let mut service = hlog_total(&out.join("read.service.hlog"));
    service
        .add(hlog_total(&out.join("write.service.hlog")))
        .unwrap();
    let above_1s = |h: &hdrhistogram::Histogram<u64>| {
        h.count_between(1_000_000, h.max().max(1_000_000)) as f64 / h.len() as f64
    };

    // The schedule's truth: an operation due x seconds into a stall of length `pause` completes when the
    // node resumes, after pause - x; it exceeds 1 s exactly when it was due in the first (pause - 1) s.
    // The node then needs a moment to work off the backlog, which can only add, by less than a second.
    let lower = RATE * (pause - 1.0) / total;
    let upper = RATE * pause / total;
    let corrected_share = above_1s(&corrected);
    let service_share = above_1s(&service);
    eprintln!(
        "stall of {pause:.3} s: share above 1 s corrected {corrected_share:.4} (schedule: {lower:.4}..{upper:.4}), \
         service time {service_share:.4}"
    );
    assert!(
        corrected_share >= lower * 0.95 && corrected_share <= upper,
        "corrected share above 1 s = {corrected_share:.4}, schedule implies {lower:.4}..{upper:.4}"
    );
    // Service time starts at the actual send: only the requests already in flight when the node stopped
    // (at most the in-flight limit) can have waited through the stall.
    let in_flight_bound = concurrency * threads / total;
    assert!(
        service_share <= in_flight_bound,
        "service-time share above 1 s = {service_share:.4} exceeds the in-flight bound {in_flight_bound:.4}"
    );
    assert!(service_share * 5.0 < corrected_share);
    // The summary tells the same story.
    assert!(f64_at(&summary, "ops.write.latency_ms.max") >= (pause - 0.1) * 1000.0);
    assert!(f64_at(&summary, "ops.write.max_p99_ms") > 1000.0);
}

fn rows_equal_successful_writes(node: &TestNode, dir: &std::path::Path) {
    let out = dir.join("unique");
    cqlbench_ok(&[
        "run",
        "KeyValue",
        "--host",
        &node.host,
        "--keyspace",
        "load_unique",
        "--drop",
        "--pg",
        "sequence",
        "-p",
        "1B",
        "-r",
        "0.3",
        "-n",
        "15000",
        "--rate",
        "3000",
        "-o",
        out.to_str().unwrap(),
    ]);
    let summary = read_summary(&out);
    let ok_writes = f64_at(&summary, "ops.write.ok") as u64;
    let writes = f64_at(&summary, "ops.write.count") as u64;
    let reads = f64_at(&summary, "ops.read.count") as u64;
    assert_eq!(writes + reads, 15_000);
    assert!((3800..5200).contains(&reads), "{reads} reads at -r 0.3");

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let rows: i64 = runtime.block_on(async {
        let session = scylla::client::session_builder::SessionBuilder::new()
            .known_node(&node.host)
            .build()
            .await
            .unwrap();
        let mut statement = scylla::statement::unprepared::Statement::new(
            "SELECT COUNT(*) FROM load_unique.keyvalue",
        );
        statement.set_request_timeout(Some(Duration::from_secs(60)));
        let result = session.query_unpaged(statement, &[]).await.unwrap();
        let (count,): (i64,) = result.into_rows_result().unwrap().single_row().unwrap();
        count
    });
    assert_eq!(
        rows as u64, ok_writes,
        "rows in the table vs successful writes reported"
    );

    // Interrupting a run keeps what was measured: summary.json says so and holds the counts.
    let interrupted = dir.join("interrupted");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_cqlbench"))
        .args([
            "run",
            "KeyValue",
            "--host",
            &node.host,
            "--keyspace",
            "load_unique",
            "-d",
            "60s",
            "--rate",
            "500",
            "-o",
            interrupted.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(5));
    send_sigint(child.id());
    let output = child.wait_with_output().unwrap();
    assert!(
        !output.status.success(),
        "an interrupted run exits non-zero"
    );
    let summary = read_summary(&interrupted);
    assert_eq!(summary["status"], "interrupted");
    let count = f64_at(&summary, "ops.write.count") + f64_at(&summary, "ops.read.count");
    assert!(count >= 1000.0, "{count} ops kept after Ctrl-C");
    assert!(String::from_utf8_lossy(&output.stdout).contains("p99.9 ms"));
}

fn send_sigint(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}
