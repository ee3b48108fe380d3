//! Rate accuracy against a real Cassandra node: at 1000 and 5000 ops/s for 20 s the achieved rate is
//! within 1% of the target, and every measured operation is in the result files exactly once.

mod run_support;

use run_support::{cqlbench_ok, f64_at, hlog_total, read_summary, TestNode};

fn run_at(node: &TestNode, rate: u32, out: &std::path::Path) -> serde_json::Value {
    let rate_text = rate.to_string();
    let stdout = cqlbench_ok(&[
        "run",
        "KeyValue",
        "--host",
        &node.host,
        "--keyspace",
        "load_rate",
        "-d",
        "20s",
        "--rate",
        &rate_text,
        "-r",
        "0.5",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(stdout.contains("p99.9 ms"), "no result table:\n{stdout}");
    read_summary(out)
}

fn check_rate(summary: &serde_json::Value, rate: f64, out: &std::path::Path) {
    let achieved = f64_at(summary, "achieved_rate");
    let client = &summary["client"];
    eprintln!("target {rate} ops/s: achieved {achieved} ops/s; client {client}");
    assert!(
        (achieved - rate).abs() <= rate * 0.01,
        "achieved {achieved} ops/s for a target of {rate} (client: {client})"
    );
    assert_eq!(summary["rate_kept"], true);
    assert_eq!(summary["status"], "complete");
    assert_eq!(f64_at(summary, "target_rate"), rate);
    let duration = f64_at(summary, "duration_s");
    assert!((19.9..21.0).contains(&duration), "duration_s {duration}");
    // The schedule offers exactly rate x duration operations; all of them completed and were counted.
    let count = f64_at(summary, "ops.read.count") + f64_at(summary, "ops.write.count");
    assert_eq!(count, rate * 20.0, "completed operations");
    // The interval logs hold the same operations as the summary: nothing lost or counted twice.
    for op in ["read", "write"] {
        let from_log = hlog_total(&out.join(format!("{op}.hlog"))).len() as f64;
        assert_eq!(
            from_log,
            f64_at(summary, &format!("ops.{op}.count")),
            "{op}.hlog"
        );
        let service = hlog_total(&out.join(format!("{op}.service.hlog"))).len() as f64;
        assert_eq!(service, from_log, "{op}.service.hlog");
    }
    let csv = std::fs::read_to_string(out.join("intervals.csv")).unwrap();
    let measured_rows = csv
        .lines()
        .filter(|l| l.contains(",measured,write,"))
        .count();
    assert!(
        (20..=22).contains(&measured_rows),
        "{measured_rows} per-second write rows"
    );
}

#[test]
fn achieved_rate_is_within_one_percent_at_1000_and_5000_ops_per_s() {
    let node = TestNode::start("load-rate", "127.0.3.1");
    let dir = tempfile::tempdir().unwrap();
    // A short run first creates the schema, so that the measured runs start on a warm table.
    cqlbench_ok(&[
        "run",
        "KeyValue",
        "--host",
        &node.host,
        "--keyspace",
        "load_rate",
        "--drop",
        "-n",
        "2000",
        "--rate",
        "1000",
        "-o",
        dir.path().join("warm").to_str().unwrap(),
    ]);
    for rate in [1000u32, 5000] {
        let out = dir.path().join(format!("rate{rate}"));
        let summary = run_at(&node, rate, &out);
        check_rate(&summary, rate as f64, &out);
        // The summary has every key the issue lists.
        for key in ["workload", "target_rate", "achieved_rate", "duration_s"] {
            assert!(!summary[key].is_null(), "summary lacks {key}");
        }
        for op in ["read", "write"] {
            let o = &summary["ops"][op];
            for key in ["count", "avg_p99_ms", "max_p99_ms"] {
                assert!(o[key].is_number(), "ops.{op}.{key}");
            }
            for kind in ["timeout", "unavailable", "overloaded", "other"] {
                assert!(o["errors"][kind].is_number(), "ops.{op}.errors.{kind}");
            }
            for metric in ["latency_ms", "service_time_ms"] {
                for p in ["p50", "p90", "p99", "p999", "max"] {
                    assert!(o[metric][p].is_number(), "ops.{op}.{metric}.{p}");
                }
                assert!(o[metric]["p50"].as_f64() <= o[metric]["p99"].as_f64());
            }
            // Two full 10 s windows.
            assert_eq!(o["p99_windows"], 2, "ops.{op}");
            assert!(f64_at(o, "max_p99_ms") >= f64_at(o, "avg_p99_ms"));
        }
    }
}
