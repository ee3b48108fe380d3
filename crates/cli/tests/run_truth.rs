//! Measurement truth against a real Cassandra node: a 2 s SIGSTOP shows up in the corrected latency as
//! the schedule implies (and far less in the service time), and nothing is lost or counted twice.

mod run_support;

use std::time::{Duration, Instant};

use cqlbench_testkit::{timed_statement, DeserializeRow, Driver, NONE};

use run_support::{
    accounted, cqlbench_command, cqlbench_ok, f64_at, hlog_intervals, hlog_total, interval_rows,
    one_line_error, read_summary, signal, spawn_cqlbench, warm_keyvalue, Frozen, Progress,
    TestNode,
};

#[test]
fn stall_truth_and_unique_keys() {
    // The node's own timeouts (20 s, see `TestNode::start_with`) are well past the longest stall
    // below: a request held through a stall is answered, never failed by the node itself.
    let node = TestNode::start_with(
        "load-truth",
        "127.0.4.1",
        &[
            // This node alone has materialized views off, as a cluster an operator did not set up
            // for them (cqlbench's own clusters turn them on).
            "-Dcassandra.settings.materialized_views_enabled=false",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    warm_keyvalue(&node, "load_truth", dir.path());
    a_failed_client_thread_stops_the_run(&node, dir.path());
    unsent_operations_are_in_the_result(&node, dir.path());
    windows_include_the_last_seconds(&node, dir.path());
    late_replies_are_timeouts(&node, dir.path());
    no_success_has_no_p99(&node, dir.path());
    seed_options_and_other_workloads(&node, dir.path());
    overload_is_reported_not_hidden(&node, dir.path());
    rows_equal_successful_writes(&node, dir.path());
    rows_stay_in_their_phase(&node, dir.path());
    stall_shows_in_corrected_latency(&node, dir.path());
    datacenter_must_exist(&node, dir.path());
    disabled_views_are_refused_naming_the_setting(&node, dir.path());
}

/// A workload with a materialized view, against a node where views are disabled: refused in one
/// line that names the cassandra.yaml setting, and the keyspace it began is gone.
fn disabled_views_are_refused_naming_the_setting(node: &TestNode, dir: &std::path::Path) {
    let out = dir.join("views");
    let error = one_line_error(
        &mut cqlbench_command(&[
            "run",
            "MaterializedViews",
            "--host",
            &node.host,
            "--keyspace",
            "views_refused",
            "-n",
            "100",
            "-o",
            out.to_str().unwrap(),
        ]),
        "materialized_views_enabled",
    );
    assert!(error.contains("MaterializedViews.yaml:"), "{error}");
    let (keyspaces,): (i64,) = first_row(
        &node.host,
        "SELECT count(*) FROM system_schema.keyspaces WHERE keyspace_name = 'views_refused'",
    );
    assert_eq!(keyspaces, 0, "the keyspace the run began is dropped");
}

/// A server that cannot keep up with the schedule before the drain deadline: the operations never
/// sent are failures of kind `unsent`, with their age when the run gave up as their latency, so that
/// successful + failed accounts for the whole schedule and the worst tail is not cut off.
fn unsent_operations_are_in_the_result(node: &TestNode, dir: &std::path::Path) {
    const SCHEDULED: f64 = 200_000.0;
    let out = dir.join("unsent");
    // One request in flight cannot do 100,000 ops/s: the 2 s schedule ends long before the client is
    // through it, and 10 s later (the drain deadline) the rest is given up.
    let stdout = cqlbench_ok(&[
        "run",
        "KeyValue",
        "--host",
        &node.host,
        "--keyspace",
        "load_truth",
        "-n",
        "200k",
        "--rate",
        "100k",
        "-c",
        "1",
        "-t",
        "1",
        "--request-timeout",
        "1s",
        "-o",
        out.to_str().unwrap(),
    ]);
    let summary = read_summary(&out);
    let (ok, failed) = accounted(&summary);
    assert_eq!(ok + failed, SCHEDULED, "successful + failed = the schedule");
    let unsent = f64_at(&summary, "client.unsent_ops");
    let unsent_by_kind =
        f64_at(&summary, "ops.read.errors.unsent") + f64_at(&summary, "ops.write.errors.unsent");
    assert!(unsent > 10_000.0, "{unsent} unsent: the server kept up?");
    assert_eq!(unsent_by_kind, unsent);
    assert_eq!(f64_at(&summary, "client.scheduled_ops"), SCHEDULED);
    // Every unsent operation was due by the end of the 2 s schedule and given up at the drain deadline,
    // at least 10 s later: that is the least latency each of them had, so the worst reported latency
    // and even the failed operations' median are at least that.
    let worst = ["read", "write"]
        .iter()
        .flat_map(|op| ["latency_ms.max", "failed_latency_ms.max"].map(|m| format!("ops.{op}.{m}")))
        .map(|path| f64_at(&summary, &path))
        .fold(0.0, f64::max);
    assert!(worst >= 9_990.0, "worst latency {worst} ms");
    for op in ["read", "write"] {
        let failed_p50 = f64_at(&summary, &format!("ops.{op}.failed_latency_ms.p50"));
        assert!(failed_p50 >= 9_990.0, "{op} failed p50 {failed_p50} ms");
        let in_log = hlog_total(&out.join(format!("{op}.failed.hlog"))).len() as f64;
        assert_eq!(in_log, f64_at(&summary, &format!("ops.{op}.errors.unsent")));
    }
    assert_eq!(summary["rate_kept"], false);
    assert!(stdout.contains("unsent"), "{stdout}");
}

/// Short runs that cross the warm-up → measured boundary again and again, at a rate that keeps
/// operations in flight across it: every warm-up row ends at or before the measured start, every
/// measured row after it, and each phase's rows add up to that phase's totals in summary.json
/// except for the warm-up operations completed after the boundary, which are in the warm-up's
/// totals and in no row (#18).
fn rows_stay_in_their_phase(node: &TestNode, dir: &std::path::Path) {
    const RUNS: usize = 50;
    let mut late_warmup_ops = 0.0;
    let started = Instant::now();
    for run in 0..RUNS {
        let out = dir.join(format!("boundary-{run}"));
        // Warm-ups of 0.5, 1 and 1.5 s: the boundary falls between ticks, on one, and after two.
        let warmup = format!("{}ms", 500 * (1 + run % 3));
        cqlbench_ok(&keyvalue_run(
            node,
            &out,
            &[
                "--rate",
                "4000",
                "-d",
                "500ms",
                "--warmup",
                &warmup,
                "-t",
                "1",
                "--no-slow-ops",
            ],
        ));
        let summary = read_summary(&out);
        let rows = interval_rows(&out);
        let sum = |phase: &str, column: &str| -> f64 {
            rows.iter()
                .filter(|r| r.phase == phase)
                .map(|r| r.get(column))
                .sum()
        };
        for row in &rows {
            match row.phase.as_str() {
                "warmup" => assert!(row.end <= 0.0, "run {run}: warm-up row at {}", row.end),
                "measured" => assert!(row.end > 0.0, "run {run}: measured row at {}", row.end),
                other => panic!("run {run}: phase {other}"),
            }
        }
        let measured = f64_at(&summary, "ops.read.count") + f64_at(&summary, "ops.write.count");
        assert_eq!(sum("measured", "count"), measured, "run {run}");
        let warm_total = f64_at(&summary, "warmup.count");
        let warm_in_rows = sum("warmup", "count");
        assert!(
            warm_in_rows <= warm_total,
            "run {run}: {warm_in_rows} > {warm_total}"
        );
        late_warmup_ops += warm_total - warm_in_rows;
    }
    eprintln!(
        "{RUNS} boundary runs in {:.0} s: {late_warmup_ops} warm-up operations completed after the boundary",
        started.elapsed().as_secs_f64()
    );
}

/// `cqlbench run KeyValue` on the test node's `load_truth` keyspace with `options`, results in `out`.
fn keyvalue_run<'a>(
    node: &'a TestNode,
    out: &'a std::path::Path,
    options: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "KeyValue",
        "--host",
        &node.host,
        "--keyspace",
        "load_truth",
    ];
    args.extend_from_slice(options);
    args.extend(["-o", out.to_str().unwrap()]);
    args
}

/// "Max p99" must see a stall in the last seconds of a run, in a last window shorter than the others,
/// and a run shorter than half a window, stalled near its end, reports the one window it has, stall
/// included.
fn windows_include_the_last_seconds(node: &TestNode, dir: &std::path::Path) {
    let out = dir.join("late-stall");
    let mut child = spawn_cqlbench(&keyvalue_run(
        node,
        &out,
        &["-d", "12s", "--rate", "1000", "--p99-window", "5s"],
    ));
    // Windows close at 5 s and 10 s; stop the node as soon as the 10th second has been reported, so
    // that the stall falls in the last window (10 s to 12 s), shorter than half a window.
    let (progress, frozen) = pause_at_second(&mut child, 10, node, Duration::from_millis(1200));
    let status = child.wait().unwrap();
    let seen = progress.rest();
    assert!(status.success(), "{seen}");
    let summary = read_summary(&out);
    let stopped = frozen.stopped - f64_at(&summary, "measured_start_unix_s");
    // The operations due in the stall's first 0.3 s waited at least 0.9 s each: 300 of the last
    // window's 2000, far more than its slowest 1 %, if the stall began that long before the end.
    assert!(
        (10.0..11.7).contains(&stopped),
        "the node was stopped {stopped:.3} s into the run, not early in its last window\n{seen}"
    );
    for op in ["read", "write"] {
        assert_eq!(summary["ops"][op]["p99_windows"], 3, "{op}: {seen}");
        let max_p99 = f64_at(&summary, &format!("ops.{op}.max_p99_ms"));
        assert!(
            max_p99 >= 900.0,
            "{op}: max p99 {max_p99} ms after a {:.3} s stall\n{seen}",
            frozen.length()
        );
    }

    // A run shorter than half a window (3 s against 10 s) with a stall in its last second: its one
    // window is reported, and holds the stall.
    let short = dir.join("short");
    let mut child = spawn_cqlbench(&keyvalue_run(node, &short, &["-d", "3s", "--rate", "500"]));
    let (progress, frozen) = pause_at_second(&mut child, 2, node, Duration::from_millis(800));
    let status = child.wait().unwrap();
    let seen = progress.rest();
    assert!(status.success(), "{seen}");
    let summary = read_summary(&short);
    let stopped = frozen.stopped - f64_at(&summary, "measured_start_unix_s");
    assert!(
        stopped < 2.97,
        "the node was stopped {stopped:.3} s into a 3 s run\n{seen}"
    );
    for op in ["read", "write"] {
        assert_eq!(summary["ops"][op]["p99_windows"], 1, "{op}: {seen}");
        // The one window holds the whole run: its p99 is the run's p99.
        let window = f64_at(&summary, &format!("ops.{op}.max_p99_ms"));
        let whole = f64_at(&summary, &format!("ops.{op}.latency_ms.p99"));
        assert!(
            (window - whole).abs() <= whole * 0.01,
            "{window} vs {whole}"
        );
        assert_eq!(f64_at(&summary, &format!("ops.{op}.avg_p99_ms")), window);
        // 1500 operations, in pairs 4 ms apart, reads and writes mixed at random (half each): this type's p99
        // is its 8th or 9th slowest of about 750, the 8th or 9th of this type due after the node
        // stopped. The 50 operations due in 0.1 s hold fewer than 9 of one type with a chance under
        // 1e-6 (a binomial tail), so that one was due less than 0.1 s after the stop and waited for
        // the node to go on. In 30 ms, the old margin, the odds were about even, and only the node's
        // delay in replying after it went on made up the rest.
        let implied = (frozen.length() - 0.1) * 1000.0;
        assert!(
            window >= implied,
            "{op}: p99 {window} ms of a run stalled {:.3} s before its end\n{seen}",
            frozen.length()
        );
        assert!(summary["ops"][op]["p99_note"].is_null(), "{op}");
        eprintln!(
            "short run stalled {:.3} s: {op} p99 {window} ms in its one window",
            frozen.length()
        );
    }
}

/// Reads the run's progress lines until second `n` (or a later one) is reported, then SIGSTOPs the
/// node and SIGCONTs it `pause` after every thread of it stopped (blocking meanwhile); returns the
/// progress reader and when the node was frozen.
fn pause_at_second(
    child: &mut std::process::Child,
    n: u32,
    node: &TestNode,
    pause: Duration,
) -> (Progress, Frozen) {
    let mut progress = Progress::of(child);
    progress.wait_for_second(n);
    let frozen = node.pause(pause);
    (progress, frozen)
}

/// A node stopped longer than `--request-timeout`: the operations it answers late are timeouts, each
/// recorded at its deadline (its failed latency is the timeout for an operation sent on time), and no
/// successful operation took longer than the timeout from its send. A reply that arrives after the
/// deadline but is read before the loop's expiry pass (both wake the client at once) meets the same
/// rule in the reply path: as the node works off its backlog, some replies land just past their
/// deadlines (with that check taken out of wire.rs this test failed in both of two runs, on successes
/// 302 and 311 ms after their send); the unit test in wire.rs shows it deterministically.
fn late_replies_are_timeouts(node: &TestNode, dir: &std::path::Path) {
    const TIMEOUT_MS: f64 = 300.0;
    let out = dir.join("late-replies");
    let mut child = spawn_cqlbench(&keyvalue_run(
        node,
        &out,
        &[
            "-d",
            "8s",
            "--rate",
            "1000",
            "-c",
            "500",
            "--request-timeout",
            "300ms",
        ],
    ));
    let (mut progress, first) = pause_at_second(&mut child, 2, node, Duration::from_millis(1000));
    progress.wait_for_second(5);
    let second = node.pause(Duration::from_millis(1000));
    let status = child.wait().unwrap();
    let seen = progress.rest();
    assert!(status.success(), "{seen}");
    let summary = read_summary(&out);
    let lateness_ms = f64_at(&summary, "client.hiccup_ms.max");
    let (ok, failed) = accounted(&summary);
    assert_eq!(ok + failed, 8000.0, "{seen}");
    let mut timeouts = 0.0;
    for op in ["read", "write"] {
        let at = |path: &str| f64_at(&summary, &format!("ops.{op}.{path}"));
        timeouts += at("errors.timeout");
        // Nothing but timeouts: the connections stayed open through the stops.
        assert_eq!(
            at("errors.timeout"),
            failed_of(&summary, op),
            "{op}: {seen}"
        );
        // Every timeout is recorded at its deadline, request timeout after its send; sent on time,
        // its latency is the timeout (plus the client's own lateness, well under 50 ms here).
        let failed_log = hlog_total(&out.join(format!("{op}.failed.hlog")));
        let timeout_us = (TIMEOUT_MS * 1000.0) as u64;
        assert!(
            failed_log.min() >= failed_log.lowest_equivalent(timeout_us),
            "{op}: a timeout recorded {} us after its intended start",
            failed_log.min()
        );
        // Sent at most the client's lateness after its intended start (1 ms for the histogram's
        // precision).
        let failed_p50 = at("failed_latency_ms.p50");
        assert!(
            (TIMEOUT_MS..=TIMEOUT_MS + lateness_ms + 1.0).contains(&failed_p50),
            "{op}: failed p50 {failed_p50} ms for a {TIMEOUT_MS} ms timeout (client lateness up to \
             {lateness_ms} ms)"
        );
        // No successful operation waited longer than the timeout for its answer.
        let service = hlog_total(&out.join(format!("{op}.service.hlog")));
        assert!(
            service.max() <= service.highest_equivalent(timeout_us),
            "{op}: a success {} us after its send, past the {TIMEOUT_MS} ms timeout\n{seen}",
            service.max()
        );
        assert!(at("service_time_ms.max") <= TIMEOUT_MS * 1.001, "{op}");
        eprintln!(
            "late replies, {op}: {} ok, {} timeouts (failed p50 {failed_p50} ms, min {} us), \
             service max {} us",
            at("count"),
            at("errors.timeout"),
            failed_log.min(),
            service.max()
        );
    }
    // Two stops of a second with a 300 ms timeout: an operation due while the node was stopped,
    // sent at most the client's lateness later, whose deadline came before the node went on,
    // could not be answered in time (one operation each 1 ms; one either side of each stop for the
    // rounding of its edges).
    let implied: f64 = [first, second]
        .iter()
        .map(|f| ((f.length() - (TIMEOUT_MS + lateness_ms) / 1000.0) * 1000.0).floor() - 2.0)
        .sum();
    assert!(
        timeouts >= implied,
        "{timeouts} timeouts, at least {implied} implied by the stops {first:?} and {second:?} \
         (client lateness up to {lateness_ms} ms)\n{seen}"
    );
    // Second by second as well: wherever an operation timed out, the failed percentiles are the
    // timeout's, and the progress line said so.
    let rows = interval_rows(&out);
    for row in rows.iter().filter(|r| r.get("timeout") > 0.0) {
        assert!(
            row.get("failed_p99_ms") >= TIMEOUT_MS * 0.999,
            "{} s, {}: failed p99 {} ms",
            row.end,
            row.op,
            row.get("failed_p99_ms")
        );
    }
    assert!(rows.iter().filter(|r| r.get("timeout") > 0.0).count() >= 2);
    assert!(seen.contains("failed: timeout"), "{seen}");
}

/// Failed operations of any kind of `op` in summary.json.
fn failed_of(summary: &serde_json::Value, op: &str) -> f64 {
    ["timeout", "unavailable", "overloaded", "other", "unsent"]
        .iter()
        .map(|kind| f64_at(summary, &format!("ops.{op}.errors.{kind}")))
        .sum()
}

/// A measured phase in which nothing succeeds (the node is stopped throughout): no window has a p99,
/// so the summary says why instead of reporting 0.0, and the table shows none.
fn no_success_has_no_p99(node: &TestNode, dir: &std::path::Path) {
    let out = dir.join("no-success");
    let mut child = spawn_cqlbench(&keyvalue_run(
        node,
        &out,
        &[
            "--warmup",
            "3s",
            "-d",
            "2s",
            "--rate",
            "200",
            "--request-timeout",
            "500ms",
        ],
    ));
    // Stopped from the first second of the warm-up until after the last measured operation's
    // deadline (5.5 s from the start, and the client's lateness).
    let stdout = child.stdout.take().unwrap();
    let (progress, frozen) = pause_at_second(&mut child, 1, node, Duration::from_secs(6));
    let status = child.wait().unwrap();
    let seen = progress.rest();
    let table = std::io::read_to_string(stdout).unwrap();
    assert!(status.success(), "{seen}");
    let summary = read_summary(&out);
    let measured_start = f64_at(&summary, "measured_start_unix_s");
    let lateness = f64_at(&summary, "client.hiccup_ms.max") / 1000.0;
    assert!(
        frozen.stopped < measured_start && frozen.continued > measured_start + 2.5 + lateness,
        "the node was not stopped through the whole measured phase: {frozen:?}, measured from \
         {measured_start}, client lateness up to {lateness} s\n{seen}"
    );
    assert_eq!(accounted(&summary), (0.0, 400.0), "{seen}");
    for op in ["read", "write"] {
        let o = &summary["ops"][op];
        assert_eq!(o["count"], 0, "{op}");
        assert_eq!(f64_at(o, "errors.timeout"), failed_of(&summary, op), "{op}");
        assert_eq!(o["p99_windows"], 0, "{op}");
        assert!(
            o["avg_p99_ms"].is_null() && o["max_p99_ms"].is_null(),
            "{op}: {o}"
        );
        assert_eq!(o["p99_note"], "no successful operation", "{op}");
        let failed_p50 = f64_at(o, "failed_latency_ms.p50");
        assert!(
            (500.0..=500.0 + lateness * 1000.0 + 1.0).contains(&failed_p50),
            "{op}: {failed_p50}"
        );
    }
    assert_eq!(summary["rate_kept"], false);
    assert_eq!(f64_at(&summary, "achieved_rate"), 0.0);
    // The table's "avg p99" and "max p99" columns show none ("–", as every reader shows a value
    // that does not exist).
    for op in ["read", "write"] {
        let row = table
            .lines()
            .find(|l| l.starts_with(&format!("{op} ")))
            .unwrap_or_else(|| panic!("no {op} row:\n{table}"));
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(&cells[7..9], ["–", "–"], "{row}");
    }
}

/// A client thread that dies (a panic, injected through the test hook) stops the run: exit code 1
/// with one error line, summary.json says `failed` and why, and the schedule is still accounted for.
fn a_failed_client_thread_stops_the_run(node: &TestNode, dir: &std::path::Path) {
    let out = dir.join("thread-failure");
    let mut command = cqlbench_command(&[
        "run",
        "KeyValue",
        "--host",
        &node.host,
        "--keyspace",
        "load_truth",
        "-d",
        "20s",
        "--rate",
        "1000",
        "-t",
        "2",
        "-o",
        out.to_str().unwrap(),
    ]);
    // Thread 1 releases every other operation: 1500 of them take about 3 s.
    command.env("CQLBENCH_FAULT_PANIC_THREAD", "1:1500");
    let error = one_line_error(&mut command, "client thread 1 failed");
    let summary = read_summary(&out);
    assert_eq!(summary["status"], "failed");
    assert!(
        summary["failure"]
            .as_str()
            .unwrap()
            .contains("client thread 1 failed"),
        "{summary}"
    );
    let (ok, failed) = accounted(&summary);
    let cancelled = f64_at(&summary, "client.cancelled_ops");
    assert_eq!(ok + failed + cancelled, 20_000.0, "{summary}");
    // Stopped before the schedule's end: the other thread did not go on alone.
    assert!(
        cancelled > 0.0 && f64_at(&summary, "duration_s") < 20.0,
        "the run went on: {error}"
    );
}

/// `--dc` keeps the load in one datacenter; one the cluster does not have is a one-line error.
fn datacenter_must_exist(node: &TestNode, dir: &std::path::Path) {
    let run = |dc: &str, out: &std::path::Path| {
        cqlbench_command(&[
            "run",
            "KeyValue",
            "--host",
            &node.host,
            "--keyspace",
            "load_truth",
            "-n",
            "200",
            "--rate",
            "200",
            "--dc",
            dc,
            "-o",
            out.to_str().unwrap(),
        ])
    };
    let out = dir.join("dc");
    let output = run("datacenter1", &out).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let summary = read_summary(&out);
    assert_eq!(
        f64_at(&summary, "ops.read.count") + f64_at(&summary, "ops.write.count"),
        200.0
    );
    let error = one_line_error(&mut run("nowhere", &dir.join("dc-bad")), "--dc nowhere");
    assert!(error.contains("datacenter1"), "{error}");
}

/// With one request in flight the client cannot reach 20000 ops/s; the output must say so, and the
/// operations' waits must show in their latency instead of the load being quietly lowered.
fn overload_is_reported_not_hidden(node: &TestNode, dir: &std::path::Path) {
    let out = dir.join("overload");
    let stdout = cqlbench_ok(&[
        "run",
        "KeyValue",
        "--host",
        &node.host,
        "--keyspace",
        "load_truth",
        "-n",
        "4000",
        "--rate",
        "20000",
        "-c",
        "1",
        "-t",
        "1",
        "-o",
        out.to_str().unwrap(),
    ]);
    let summary = read_summary(&out);
    assert_eq!(summary["rate_kept"], false);
    let achieved = f64_at(&summary, "achieved_rate");
    assert!(achieved < 19_000.0, "{achieved}");
    assert!(
        stdout.contains("OFFERED 20000 ops/s BUT ACHIEVED"),
        "{stdout}"
    );
    // All 4000 scheduled operations were still sent and measured, and succeeded.
    assert_eq!(accounted(&summary), (4000.0, 0.0));
    // The schedule ends after 0.2 s but the last operations completed much later; their latency includes
    // that wait (the corrected max is at least the schedule overrun), their service time does not.
    let overrun_ms = (4000.0 / achieved - 4000.0 / 20000.0) * 1000.0;
    let max_latency = f64_at(&summary, "ops.write.latency_ms.max")
        .max(f64_at(&summary, "ops.read.latency_ms.max"));
    assert!(
        max_latency >= overrun_ms * 0.9,
        "max latency {max_latency} ms, overrun {overrun_ms} ms"
    );
    assert!(
        f64_at(&summary, "ops.write.service_time_ms.p50")
            < f64_at(&summary, "ops.write.latency_ms.p50")
    );
    assert!(f64_at(&summary, "client.concurrency_limited_ops") > 3000.0);
}

/// The first row of a query, as the given tuple type.
fn first_row<T>(host: &str, cql: &str) -> T
where
    T: for<'f, 'm> DeserializeRow<'f, 'm>,
{
    let result = Driver::connect_to(host).unwrap().query(cql, NONE).unwrap();
    result.into_rows_result().unwrap().first_row::<T>().unwrap()
}

/// The seed's table options (compaction map with a trailing table option), populate with progress,
/// a separately reported warm-up, and the Tabular workload's reads and writes against a real node.
fn seed_options_and_other_workloads(node: &TestNode, dir: &std::path::Path) {
    let out = dir.join("bts");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_cqlbench"))
        .args([
            "run", "BasicTimeSeries", "--host", &node.host, "--keyspace", "load_bts", "--drop", "-d", "3s", "-p",
            "100M", "-c", "50", "--pg", "sequence", "-t", "2", "-r", "0.2", "--rate", "1000", "--populate", "3000",
            "--warmup", "2s", "--compaction",
            "{'class': 'SizeTieredCompactionStrategy', 'min_threshold' : '2'} AND speculative_retry = 'NONE'",
            "-o", out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("[populate] 3000/3000 rows"),
        "populate progress:\n{stderr}"
    );
    assert!(stderr.contains("warm-up"), "warm-up progress:\n{stderr}");
    let summary = read_summary(&out);
    assert_eq!(f64_at(&summary, "populate.count"), 3000.0);
    assert_eq!(f64_at(&summary, "populate.errors"), 0.0);
    // The warm-up ran the schedule for 2 s and is reported apart from the 3 s measured phase.
    assert_eq!(f64_at(&summary, "warmup.count"), 2000.0);
    // intervals.csv: warm-up rows end before the measured phase starts (elapsed_s <= 0), measured
    // rows after it, both in order, and the warm-up's schedule is filled in too.
    let csv = std::fs::read_to_string(out.join("intervals.csv")).unwrap();
    let rows = |phase: &str| -> Vec<(f64, f64)> {
        csv.lines()
            .filter(|l| l.contains(&format!(",{phase},write,")))
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                (f[0].parse().unwrap(), f[22].parse().unwrap())
            })
            .collect()
    };
    let (warm, measured) = (rows("warmup"), rows("measured"));
    assert!(warm.len() >= 2 && measured.len() >= 3, "{csv}");
    // The tick that crosses the measured start closes the warm-up at the boundary: no warm-up row
    // ends after it.
    assert!(warm.iter().all(|(end, _)| *end <= 0.0), "{csv}");
    assert!(warm.windows(2).all(|w| w[0].0 < w[1].0), "{csv}");
    // The first tick comes a second after the start, never early (and late by whatever it was late).
    assert!(
        (-1.0..0.0).contains(&warm[0].0),
        "first warm-up second ends a second after the start\n{csv}"
    );
    assert!(
        warm.iter()
            .any(|(_, scheduled)| (scheduled - 1000.0).abs() < 1.0),
        "{csv}"
    );
    assert!(measured.iter().all(|(end, _)| *end > 0.0), "{csv}");
    assert!(measured.windows(2).all(|w| w[0].0 < w[1].0), "{csv}");
    let measured = f64_at(&summary, "ops.read.count") + f64_at(&summary, "ops.write.count");
    assert_eq!(measured, 3000.0);
    let reads = f64_at(&summary, "ops.read.count");
    assert!((450.0..750.0).contains(&reads), "{reads} reads at -r 0.2");
    let (speculative_retry, compaction): (String, std::collections::HashMap<String, String>) =
        first_row(
            &node.host,
            "SELECT speculative_retry, compaction FROM system_schema.tables \
             WHERE keyspace_name = 'load_bts' AND table_name = 'sensor_data'",
        );
    // Cassandra 5 stores speculative_retry = 'NONE' as 'NEVER'.
    assert!(
        matches!(speculative_retry.to_uppercase().as_str(), "NONE" | "NEVER"),
        "speculative_retry = {speculative_retry}"
    );
    assert!(
        compaction["class"].ends_with("SizeTieredCompactionStrategy"),
        "{compaction:?}"
    );
    assert_eq!(compaction["min_threshold"], "2");
    let (data,): (String,) = first_row(&node.host, "SELECT data FROM load_bts.sensor_data LIMIT 1");
    assert!(
        (100..200).contains(&data.len()),
        "data length {}",
        data.len()
    );

    let tabular = dir.join("tabular");
    cqlbench_ok(&[
        "run",
        "Tabular",
        "--host",
        &node.host,
        "--keyspace",
        "load_tab",
        "--drop",
        "-n",
        "3000",
        "--rate",
        "1000",
        "-p",
        "20",
        "--workload.partsize=100",
        "--workload.slice=5",
        "--dc",
        "datacenter1",
        "--connections-per-host",
        "3",
        "-o",
        tabular.to_str().unwrap(),
    ]);
    let summary = read_summary(&tabular);
    assert_eq!(summary["settings"]["consistency"], "LocalQuorum");
    assert_eq!(summary["settings"]["dc"], "datacenter1");
    assert_eq!(summary["settings"]["connections_per_host"], 3);
    for op in ["read", "write"] {
        let count = f64_at(&summary, &format!("ops.{op}.count"));
        assert!(
            (1200.0..1800.0).contains(&count),
            "Tabular {op}s: {count} of 3000 at 50/50"
        );
        assert_eq!(f64_at(&summary, &format!("ops.{op}.errors.other")), 0.0);
    }
}

/// A 2 s SIGSTOP in the middle of a 14 s run at 2000 ops/s, as the schedule says it must show: every
/// operation succeeds (the node's own timeouts are longer than the stall), each operation due in the
/// stall's first second waits for its end (over 1 s of corrected latency), and service time, which
/// starts at the real send, exceeds 1 s only for the requests in flight during the stall.
fn stall_shows_in_corrected_latency(node: &TestNode, dir: &std::path::Path) {
    const RATE: f64 = 2000.0;
    const SECONDS: f64 = 14.0;
    let (concurrency, threads) = (50.0, 2.0);
    let out = dir.join("stall");
    let mut child = spawn_cqlbench(&[
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
    ]);
    let (progress, frozen) = pause_at_second(&mut child, 4, node, Duration::from_secs(2));
    let status = child.wait().unwrap();
    let seen = progress.rest();
    assert!(status.success(), "{seen}");

    let summary = read_summary(&out);
    let total = RATE * SECONDS;
    assert_eq!(
        accounted(&summary),
        (total, 0.0),
        "every operation succeeds through the stall: read {}, write {}",
        summary["ops"]["read"]["errors"],
        summary["ops"]["write"]["errors"]
    );
    // The stall in measured time: surely stopped from `stopped` to `continued`; SIGSTOP was sent at
    // `signalled`.
    let measured_start = f64_at(&summary, "measured_start_unix_s");
    let signalled = frozen.signalled - measured_start;
    let (stopped, continued) = (
        frozen.stopped - measured_start,
        frozen.continued - measured_start,
    );
    let length = frozen.length();
    assert!(
        stopped > 3.0 && continued < 10.0,
        "the stall ({stopped:.3} to {continued:.3} s) is not inside the first p99 window\n{seen}"
    );

    // Operations above 1 s in the interval logs, over the whole run and around the stall (the
    // intervals that end after SIGSTOP and begin before 2 s after SIGCONT).
    let above_1s = |log: &str, near: bool| -> u64 {
        ["read", "write"]
            .iter()
            .flat_map(|op| hlog_intervals(&out.join(format!("{op}{log}.hlog"))))
            .filter(|i| !near || (i.end > signalled && i.start < continued + 2.0))
            .map(|i| {
                let h = &i.histogram;
                h.count_between(1_000_000, h.max().max(1_000_000))
            })
            .sum()
    };
    let corrected = above_1s("", false);
    let corrected_near = above_1s("", true);
    let service_near = above_1s(".service", true);
    // The schedule's truth: an operation due x seconds into the stall completes after the node
    // goes on, over 1 s late when x < length - 1 (each thread's release groups, 4 operations
    // every 4 ms at this rate, can move the first and last of them by a group).
    let group = f64_at(&summary, "settings.release_group");
    let lower = (RATE * (length - 1.0)).floor() - 2.0 * group * threads;
    // Near the stall, only the operations due between SIGSTOP and SIGCONT, and those already in
    // flight when it came, can have waited that long for it.
    let upper = (RATE * (continued - signalled)).ceil() + concurrency * threads;
    eprintln!(
        "stall of {length:.3} s ({:.2} ms from SIGSTOP to every thread stopped): {corrected} \
         operations above 1 s corrected ({corrected_near} near the stall; schedule: {lower}..{upper}), \
         service time {service_near}",
        (stopped - signalled) * 1000.0
    );
    let intervals = std::fs::read_to_string(out.join("intervals.csv")).unwrap();
    assert!(
        corrected as f64 >= lower && corrected_near as f64 <= upper,
        "{corrected} operations above 1 s ({corrected_near} near the stall), the schedule implies \
         {lower}..{upper}; stall from {stopped:.3} to {continued:.3} s\n{intervals}"
    );
    // Service time starts at the actual send: only the requests in flight while the node was
    // stopped (at most the in-flight limit) can have waited through the stall.
    assert!(
        service_near as f64 <= concurrency * threads,
        "{service_near} operations of service time above 1 s near the stall exceed the in-flight \
         bound {}",
        concurrency * threads
    );
    assert!(service_near * 5 < corrected_near);
    // The summary tells the same story: the operation due as the node stopped waited it all.
    assert!(f64_at(&summary, "ops.write.latency_ms.max") >= (length - 0.003) * 1000.0);
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
    assert_eq!(accounted(&summary), (15_000.0, 0.0));
    let ok_writes = f64_at(&summary, "ops.write.count") as u64;
    let reads = f64_at(&summary, "ops.read.count") as u64;
    assert!((3800..5200).contains(&reads), "{reads} reads at -r 0.3");

    let statement = timed_statement(
        "SELECT COUNT(*) FROM load_unique.keyvalue",
        Duration::from_secs(60),
    );
    let result = Driver::connect_to(&node.host)
        .unwrap()
        .query(statement, NONE)
        .unwrap();
    let (rows,): (i64,) = result.into_rows_result().unwrap().single_row().unwrap();
    assert_eq!(
        rows as u64, ok_writes,
        "rows in the table vs successful writes reported"
    );

    // Interrupting a run keeps what was measured: summary.json says so and holds the counts.
    let interrupted = dir.join("interrupted");
    let mut child = spawn_cqlbench(&[
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
    ]);
    // Ctrl-C once the third second is reported: 2.5 s or more into the schedule.
    let mut progress = Progress::of(&mut child);
    progress.wait_for_second(3);
    signal(&child, libc::SIGINT);
    let output = child.wait_with_output().unwrap();
    let seen = progress.rest();
    assert!(
        !output.status.success(),
        "an interrupted run exits non-zero"
    );
    let summary = read_summary(&interrupted);
    assert_eq!(summary["status"], "interrupted");
    // Everything due before the interrupt is kept, successful or failed; the rest was never due.
    let (ok, failed) = accounted(&summary);
    let cancelled = f64_at(&summary, "client.cancelled_ops");
    assert_eq!(ok + failed + cancelled, 30_000.0, "{seen}");
    assert!(
        ok + failed >= 1250.0,
        "{ok} + {failed} ops kept after Ctrl-C\n{seen}"
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("p99.9 ms"));
}
