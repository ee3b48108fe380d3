//! Faults in the middle of a run, against a real node. A killed node: the operations it cannot serve
//! are failures, each known when it happened (at once, not at a deadline), kept apart from the
//! successful latencies (the successes' interval logs hold the successes alone), none lost, shown
//! second by second and in the progress line, and the load resumes on its own once the node is
//! back. A node that forgot the prepared statements (a schema change invalidates them): operations
//! are re-prepared and re-sent on the same connection instead of failing.

mod run_support;

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use run_support::{
    accounted, execute_cql, f64_at, hlog_total, interval_rows, read_summary, spawn_cqlbench,
    warm_keyvalue, Progress, TestNode,
};

const RATE: f64 = 400.0;
/// Long enough for a node restart that takes 20 s on a busy machine to leave 10 s after recovery.
const SECONDS: f64 = 50.0;
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
    killed_node(&node, dir.path());
    forgotten_prepared_statements(&node, dir.path());
}

/// The ends of the measured seconds intervals.csv holds so far, in order (whole lines only: the
/// run may be writing one).
fn measured_row_ends(out: &Path) -> Vec<f64> {
    let text = std::fs::read_to_string(out.join("intervals.csv")).unwrap_or_default();
    let whole = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
    let mut ends: Vec<f64> = whole
        .lines()
        .filter(|l| l.contains(",measured,"))
        .filter_map(|l| l.split(',').next()?.parse().ok())
        .collect();
    ends.dedup();
    ends
}

/// Waits until the run's measured seconds so far satisfy `ready`.
fn wait_for_rows(
    child: &mut std::process::Child,
    out: &Path,
    what: &str,
    ready: impl Fn(&[f64]) -> bool,
) {
    while !ready(&measured_row_ends(out)) {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the run ended ({status}) before {what}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Seconds since the Unix epoch.
fn unix_s(t: SystemTime) -> f64 {
    t.duration_since(UNIX_EPOCH).unwrap().as_secs_f64()
}

/// One reporting second of intervals.csv, read and write rows together.
#[derive(Debug, Default)]
struct Second {
    start: f64,
    end: f64,
    ok: f64,
    errors: f64,
    timeout: f64,
    other: f64,
    failed_p99_ms: f64,
    failed_max_ms: f64,
    hiccup_max_ms: f64,
}

fn measured_seconds(out: &Path) -> Vec<Second> {
    let mut seconds: Vec<Second> = Vec::new();
    for row in interval_rows(out).iter().filter(|r| r.phase == "measured") {
        if seconds.last().is_none_or(|s| s.end != row.end) {
            let start = seconds.last().map_or(0.0, |s| s.end);
            seconds.push(Second {
                start,
                end: row.end,
                ..Second::default()
            });
        }
        let second = seconds.last_mut().unwrap();
        second.ok += row.get("count");
        second.errors += row.get("errors");
        second.timeout += row.get("timeout");
        second.other += row.get("other");
        // A row without failures has no failure latency ("–").
        let failed = |column: &str| row.value(column).unwrap_or(0.0);
        second.failed_p99_ms = second.failed_p99_ms.max(failed("failed_p99_ms"));
        second.failed_max_ms = second.failed_max_ms.max(failed("failed_max_ms"));
        second.hiccup_max_ms = row.get("client_hiccup_max_ms");
    }
    seconds
}

fn killed_node(node: &TestNode, dir: &Path) {
    // The node also forgets its prepared statements across the restart.
    execute_cql(&node.host, "TRUNCATE system.prepared_statements");
    let out = dir.join("faults");
    let mut child = spawn_cqlbench(&run_args(node, &format!("{SECONDS}s"), &out));
    let launched = Instant::now();
    let progress = Progress::of(&mut child);
    // The kill once three measured seconds are written.
    wait_for_rows(&mut child, &out, "three measured seconds", |ends| {
        ends.len() >= 3
    });
    let kill_called = SystemTime::now();
    cqlbench_cluster::kill_node(&node.home, &node.name, 1).expect("kill the node");
    let killed = SystemTime::now();
    let killed_at = launched.elapsed().as_secs_f64();
    // The restart once a whole second is written that began a second after the kill returned (the
    // node gone, its sockets closed): more than the client takes to read a closed connection
    // (asserted below), so it holds only failures known at once.
    let measured_start = f64_at(&read_summary(&out), "measured_start_unix_s");
    let down = unix_s(killed) - measured_start;
    wait_for_rows(&mut child, &out, "a whole second of the outage", |ends| {
        ends.windows(2).any(|w| w[0] >= down + 1.0)
    });
    let restart_called = SystemTime::now();
    cqlbench_cluster::start_node(&node.home, &node.name, 1, &mut |l: &str| eprintln!("{l}"))
        .expect("restart the node");
    let back_at = launched.elapsed().as_secs_f64();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = progress.rest();
    assert!(
        back_at + 8.0 < SECONDS,
        "the node took too long to come back for this test to say anything (back after {back_at:.1} s)"
    );

    let summary = read_summary(&out);
    assert_eq!(summary["status"], "complete", "{stderr}");
    // Every scheduled operation is in the result, successful or failed, and nothing twice.
    let (ok, failed) = accounted(&summary);
    assert_eq!(ok + failed, RATE * SECONDS, "{stderr}");
    // The node was gone for at least the 3 s between the kill and the restart.
    assert!(
        failed >= RATE * 2.5,
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

    // When each failure is known. A timeout fails at its deadline, 2 s after its send. A connection
    // broken by the kill fails the requests in flight on it when the client reads its end, before
    // any deadline (SIGKILL closes a JVM's sockets only once its threads have torn down, and a
    // request may have been in flight a while already). An operation due while no connection is up
    // fails at once: its failed latency is its own send lateness, which the client measures on
    // every operation. Those are nearly all of them here (the few in flight at the kill aside).
    let timeouts =
        f64_at(&summary, "ops.read.errors.timeout") + f64_at(&summary, "ops.write.errors.timeout");
    let hiccup_max = f64_at(&summary, "client.hiccup_ms.max");
    for op in ["read", "write"] {
        let p90 = f64_at(&summary, &format!("ops.{op}.failed_latency_ms.p90"));
        let max = f64_at(&summary, &format!("ops.{op}.failed_latency_ms.max"));
        assert!(max > 0.0, "ops.{op}.failed_latency_ms.max");
        assert!(
            p90 <= hiccup_max,
            "{op}: failed p90 {p90} ms, client lateness at most {hiccup_max} ms: not failed at once"
        );
        if timeouts == 0.0 {
            assert!(max < 2000.0, "{op}: failed max {max} ms without a timeout");
        }
    }

    // Second by second (intervals.csv counts from the measured start): no failure before the kill,
    // only failures while the node was surely down (killed, not yet restarted), each at once.
    let kill = unix_s(kill_called) - measured_start;
    let restart = unix_s(restart_called) - measured_start;
    let seconds = measured_seconds(&out);
    let csv = std::fs::read_to_string(out.join("intervals.csv")).unwrap();
    let before: Vec<&Second> = seconds.iter().filter(|s| s.end < kill).collect();
    assert!(before.len() >= 3, "kill at {kill:.2} s\n{csv}");
    for s in &before {
        assert_eq!(
            (s.errors, s.failed_p99_ms, s.failed_max_ms),
            (0.0, 0.0, 0.0),
            "failures before the kill at {kill:.2} s: {s:?}\n{csv}"
        );
    }
    // The requests in flight at the kill fail when the client reads their connection's end, which
    // the kill closed before it returned: a client thread wakes for it at once, or, if it was not
    // running then, no later than it is due to send again (every 5 ms here), and that lateness is
    // measured. The outage's seconds proper start after that.
    let reaction = hiccup_max / 1000.0 + 0.005;
    assert!(
        reaction < 1.0,
        "the client was {hiccup_max} ms late: the second awaited before the restart is no outage second"
    );
    let outage: Vec<&Second> = seconds
        .iter()
        .filter(|s| s.start >= down + reaction && s.end <= restart)
        .collect();
    assert!(
        !outage.is_empty(),
        "no whole second between {down:.3} + {reaction:.3} and {restart:.3} s\n{csv}"
    );
    for s in &outage {
        assert!(
            s.ok == 0.0 && s.errors >= RATE * 0.9 && s.other == s.errors,
            "node down from {down:.2} s to {restart:.2} s: {s:?}\n{csv}"
        );
        assert!(
            s.failed_max_ms > 0.0 && s.failed_p99_ms > 0.0,
            "failed columns empty in the outage: {s:?}\n{csv}"
        );
        // No connection could be up: every failure was known at its send.
        assert!(
            s.failed_max_ms <= s.hiccup_max_ms,
            "a failure not known at once (client lateness up to {} ms): {s:?}\n{csv}",
            s.hiccup_max_ms
        );
    }
    for s in &seconds {
        if s.timeout > 0.0 {
            assert!(
                s.failed_max_ms >= 1998.0,
                "a timeout before its deadline: {s:?}\n{csv}"
            );
        } else if s.errors > 0.0 {
            assert!(
                s.failed_max_ms < 1998.0,
                "a failure at a deadline: {s:?}\n{csv}"
            );
        }
    }
    // The progress line says the same as it goes: nothing failed before the kill, and every second
    // of the outage shows its failures.
    let progress: Vec<(f64, &str)> = stderr
        .lines()
        .filter(|l| l.starts_with('[') && l.contains("s] scheduled"))
        .map(|l| (l[1..l.find("s]").unwrap()].trim().parse().unwrap(), l))
        .collect();
    for (at, line) in &progress {
        // The printed second is rounded: the line closes a second ending within half a second of it.
        if at + 0.5 < kill {
            assert!(line.contains("| failed 0 |"), "{line}");
        }
        if at - 1.5 >= down && at + 0.5 <= restart {
            assert!(
                line.contains(" ok       0/s") && line.contains("failed: other"),
                "{line}"
            );
        }
    }
    assert!(
        progress
            .iter()
            .any(|(at, l)| *at > kill && l.contains("failed: other")),
        "{stderr}"
    );

    // Nothing is re-prepared here, and nothing can be: the kill closes every connection to the node
    // (the client fails what was in flight on each when it reads its end), and a connection is only
    // reopened by `open` in wire.rs, which PREPAREs both statements on it before it carries an
    // EXECUTE, and takes the ids the restarted node gives. UNPREPARED needs a node to forget a
    // statement while the connection that prepared it stays open (a schema change, or eviction from
    // its prepared-statement cache); the truncated system.prepared_statements only means the
    // restarted node does not preload them. The schema change below is what makes a live
    // connection meet UNPREPARED.
    assert_eq!(f64_at(&summary, "client.reprepared_ops"), 0.0, "{stderr}");

    let back = back_at - killed_at + down;
    successes_are_only_successes(&out, ok);
    // Three seconds after the node answers again, every second is served in full and without errors.
    let healthy: Vec<&Second> = seconds
        .iter()
        .filter(|s| s.start > back + 3.0 && s.end <= SECONDS - 1.0)
        .collect();
    for s in &healthy {
        assert_eq!(
            s.errors, 0.0,
            "errors after the node came back (at {back:.1} s):\n{csv}"
        );
        assert!(
            s.ok > RATE * 0.8,
            "load did not resume (node back at {back:.1} s):\n{csv}"
        );
    }
    assert!(
        healthy.len() >= 5,
        "{} seconds after recovery\n{csv}",
        healthy.len()
    );
}

/// Failures at once must not make the successful latencies look better than they are: counted as
/// successes, the operations refused while the node was down (a few microseconds each) would pull
/// every percentile down. They are not: the successful interval logs hold exactly the successful
/// operations (and the failed logs the failed ones, checked above), and no second of the outage has a
/// success.
fn successes_are_only_successes(out: &Path, ok: f64) {
    let in_logs: u64 = ["read", "write"]
        .iter()
        .map(|op| hlog_total(&out.join(format!("{op}.hlog"))).len())
        .sum();
    assert_eq!(in_logs as f64, ok);
}

/// Adding a column invalidates the node's prepared statements for the table: the next EXECUTE of
/// every connection is answered UNPREPARED. The client prepares again on that connection and re-sends.
/// (That a re-sent operation's latency and service time hold all three round trips, from its
/// intended start and its first send, and that it keeps its first deadline, is shown on the reply
/// path itself in wire.rs: the few re-sent operations of a run cannot be told apart in its output.)
fn forgotten_prepared_statements(node: &TestNode, dir: &Path) {
    let out = dir.join("unprepared");
    let mut child = spawn_cqlbench(&run_args(node, "10s", &out));
    // Mid-run, once two measured seconds are written: the statements are prepared on every
    // connection, and eight seconds of the schedule remain.
    wait_for_rows(&mut child, &out, "two measured seconds", |ends| {
        ends.len() >= 2
    });
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
