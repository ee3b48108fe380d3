//! Several load clients, one exact result, against a real Cassandra node (127.0.10.1): three cqlbench
//! processes share one schedule (`--clients 3 --client-id I --start-at @FILE`, 1500 ops/s in all,
//! 500 each, the common start written into FILE once all three are ready), `cqlbench report merge`
//! adds them up, and the merge is checked against the truth:
//! its percentiles against one histogram of the three clients' interval logs built by an independent
//! reader (the `hdrhistogram` package from PyPI, in Python), its rate against the target, the keys
//! in the table against the keys one client would have written for the whole schedule, and runs that
//! do not belong together are refused.

mod run_support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use cqlbench_testkit::{timed_statement, Driver, NONE};

use run_support::{
    accounted, assert_rate_facts, cqlbench_command, cqlbench_ok, f64_at, one_line_error,
    read_summary, spawn_cqlbench, unix_now, warm_keyvalue, write_start, Children, Progress,
    TestNode,
};

const RATE: f64 = 1500.0;
const SECONDS: f64 = 10.0;
const POPULATE: u64 = 3000;
const KEYSPACE: &str = "load_clients";

/// Where the Python `hdrhistogram` package is installed for the tests (once, with pip).
fn python_path() -> PathBuf {
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    home.join(".cache/cqlbench/py")
}

fn python() -> Command {
    let mut command = Command::new("python3");
    command.env("PYTHONPATH", python_path());
    command
}

/// Installs the `hdrhistogram` package from PyPI under `~/.cache/cqlbench/py` unless it is there.
fn ensure_python_hdrhistogram() {
    let present = python()
        .args(["-c", "import hdrh.histogram"])
        .output()
        .is_ok_and(|o| o.status.success());
    if present {
        return;
    }
    let target = python_path();
    std::fs::create_dir_all(&target).unwrap();
    let out = Command::new("python3")
        .args(["-m", "pip", "install", "--quiet", "--target"])
        .arg(&target)
        .arg("hdrhistogram")
        .output()
        .expect("run pip");
    assert!(
        out.status.success(),
        "pip could not install hdrhistogram into {}: {}",
        target.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The union of these interval logs as the Python reader sees it.
fn python_union(logs: &[PathBuf]) -> serde_json::Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/hlog_union.py");
    let out = python()
        .arg(script)
        .arg("0.5,0.9,0.99")
        .args(logs)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "python reader failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the reader prints JSON")
}

/// Within one HdrHistogram bucket (3 significant digits: a bucket is at most value/1024 wide) and the
/// microsecond the summary rounds to.
fn same_bucket(merged_ms: f64, python_us: f64) -> bool {
    let merged_us = merged_ms * 1000.0;
    (merged_us - python_us).abs() <= python_us / 1024.0 + 1.0
}

/// Every key of the table (the driver, outside cqlbench's own code path).
fn keys_in_table(host: &str) -> BTreeSet<u64> {
    let session = Driver::connect_to(host).unwrap_or_else(|e| panic!("connect to {host}: {e}"));
    let cql = format!("SELECT key FROM {KEYSPACE}.keyvalue");
    let result = session
        .query(timed_statement(&cql, Duration::from_secs(60)), NONE)
        .unwrap();
    let rows = result.into_rows_result().unwrap();
    rows.rows::<(String,)>()
        .unwrap()
        .map(|row| row.unwrap().0.parse::<u64>().expect("numeric key"))
        .collect()
}

#[test]
fn three_clients_on_one_schedule_merge_into_one_exact_result() {
    ensure_python_hdrhistogram();
    let node = TestNode::start("load-clients", "127.0.10.1");
    let dir = tempfile::tempdir().unwrap();
    // The schema exists before the clients start (they must not race to create it), and is empty.
    warm_keyvalue(&node, KEYSPACE, dir.path());
    run_support::execute_cql(&node.host, &format!("TRUNCATE {KEYSPACE}.keyvalue"));

    // The common start is written once all three are connected and populated (`--start-at @FILE`),
    // a moment ahead: however long they took to get ready.
    let start_file = dir.path().join("start");
    let start_arg = format!("@{}", start_file.display());
    let rate = RATE.to_string();
    let duration = format!("{SECONDS}s");
    let populate = POPULATE.to_string();
    let client_dirs: Vec<PathBuf> = (0..3)
        .map(|i| dir.path().join(format!("client{i}")))
        .collect();
    let mut children = Children(
        (0..3)
            .map(|i| {
                let id = i.to_string();
                spawn_cqlbench(&[
                    "run",
                    "KeyValue",
                    "--host",
                    &node.host,
                    "--keyspace",
                    KEYSPACE,
                    // Every write its own row: key = operation index.
                    "--pg",
                    "sequence",
                    "-p",
                    "1B",
                    "-r",
                    "0.3",
                    "--rate",
                    &rate,
                    "-d",
                    &duration,
                    "--populate",
                    &populate,
                    // The default in-flight limit (100 per client, on its one thread), as the single-client
                    // populate test uses: populate runs unthrottled, and 3 x 400 writes in flight
                    // overloaded the node on this shared machine.
                    "--clients",
                    "3",
                    "--client-id",
                    &id,
                    "--start-at",
                    &start_arg,
                    "-o",
                    client_dirs[i].to_str().unwrap(),
                ])
            })
            .collect(),
    );
    let mut progress: Vec<Progress> = children.0.iter_mut().map(Progress::of).collect();
    for p in &mut progress {
        p.wait_for("ready: waiting for the common start in");
    }
    let start = unix_now() + 1.5;
    write_start(&start_file, &format!("{start:.3}"));
    let start: f64 = format!("{start:.3}").parse().unwrap();
    for (i, (out, progress)) in children
        .wait_with_output()
        .into_iter()
        .zip(progress)
        .enumerate()
    {
        let stderr = progress.rest();
        assert!(
            out.status.success(),
            "client {i} failed\nstdout:\n{}\nstderr:\n{stderr}",
            String::from_utf8_lossy(&out.stdout),
        );
    }

    // Each client: its share of the schedule, on the common start.
    for (i, client) in client_dirs.iter().enumerate() {
        let s = read_summary(client);
        assert_eq!(s["clients"], 3);
        assert_eq!(s["client_id"], i as u64);
        assert!((f64_at(&s, "start_at") - start).abs() < 1e-6);
        assert!((f64_at(&s, "measured_start_unix_s") - start).abs() < 1e-3);
        assert_eq!(f64_at(&s, "target_rate"), RATE / 3.0);
        assert_eq!(f64_at(&s, "settings.rate_all_clients"), RATE);
        assert_eq!(
            f64_at(&s, "populate.count") + f64_at(&s, "populate.errors"),
            POPULATE as f64 / 3.0,
            "client {i}'s share of the populate rows: {}",
            s["populate"]
        );
        assert_eq!(
            f64_at(&s, "client.scheduled_ops"),
            RATE * SECONDS / 3.0,
            "client {i}"
        );
        assert_eq!(s["status"], "complete");
    }

    let merged = dir.path().join("merged");
    let mut merge_args = vec!["report", "merge"];
    merge_args.extend(client_dirs.iter().map(|d| d.to_str().unwrap()));
    merge_args.extend(["-o", merged.to_str().unwrap()]);
    cqlbench_ok(&merge_args);
    let summary = read_summary(&merged);
    eprintln!(
        "merged: achieved {} of {} ops/s; write {}; read {}",
        summary["achieved_rate"],
        summary["target_rate"],
        summary["ops"]["write"]["latency_ms"],
        summary["ops"]["read"]["latency_ms"]
    );

    // The whole schedule, every operation once (successful or failed), whatever the machine's load.
    let (ok, failed) = accounted(&summary);
    assert_eq!(ok + failed, RATE * SECONDS, "operations accounted for");
    assert_eq!(f64_at(&summary, "target_rate"), RATE);
    assert_eq!(summary["clients"], 3);

    // Percentiles: the merge's, against one histogram of the three clients' logs read in Python.
    for op in ["write", "read"] {
        let logs: Vec<PathBuf> = client_dirs
            .iter()
            .map(|d| d.join(format!("{op}.hlog")))
            .collect();
        let union = python_union(&logs);
        let from_merged_log = python_union(&[merged.join(format!("{op}.hlog"))]);
        eprintln!("{op}: python union of the clients {union}; of the merged log {from_merged_log}");
        assert_eq!(
            union["count"].as_f64().unwrap(),
            f64_at(&summary, &format!("ops.{op}.count")),
            "{op} count"
        );
        assert_eq!(union["count"], from_merged_log["count"]);
        let latency = &summary["ops"][op]["latency_ms"];
        for (p, q) in [("p50", "0.5"), ("p90", "0.9"), ("p99", "0.99")] {
            let python_us = union["quantiles"][q].as_f64().unwrap();
            let merged_ms = f64_at(latency, p);
            assert!(
                same_bucket(merged_ms, python_us),
                "{op} {p}: merged {merged_ms} ms, python {python_us} us"
            );
            assert_eq!(union["quantiles"][q], from_merged_log["quantiles"][q]);
        }
        let python_max = union["max"].as_f64().unwrap();
        assert!(
            same_bucket(f64_at(latency, "max"), python_max),
            "{op} max: merged {}, python {python_max} us",
            latency["max"]
        );
        // The clients' seconds line up: the merge has as many intervals as one client, not three
        // times as many.
        let most = logs
            .iter()
            .map(|l| {
                python_union(std::slice::from_ref(l))["intervals"]
                    .as_u64()
                    .unwrap()
            })
            .max()
            .unwrap();
        let intervals = from_merged_log["intervals"].as_u64().unwrap();
        assert!(
            intervals <= most + 1,
            "{op}: {intervals} merged intervals for clients of at most {most}"
        );
    }
    // intervals.csv of the merge holds the same operations: successful (count) and failed (errors).
    let csv = std::fs::read_to_string(merged.join("intervals.csv")).unwrap();
    let column_sum = |column: usize| -> f64 {
        csv.lines()
            .filter(|l| l.contains(",measured,"))
            .map(|l| l.split(',').nth(column).unwrap().parse::<f64>().unwrap())
            .sum()
    };
    assert_eq!(
        (column_sum(3), column_sum(4)),
        (ok, failed),
        "measured count and errors in intervals.csv"
    );

    // The merge reads like one run.
    let compared = cqlbench_ok(&[
        "compare",
        client_dirs[0].to_str().unwrap(),
        merged.to_str().unwrap(),
    ]);
    assert!(compared.contains("p99"), "{compared}");

    // Runs that do not belong together are refused, naming the reason.
    let out = dir.path().join("refused");
    let refuse = |dirs: &[&Path], expected: &str| {
        let mut command = cqlbench_command(&["report", "merge"]);
        command.args(dirs).arg("-o").arg(&out);
        one_line_error(&mut command, expected);
        assert!(!out.exists(), "a refused merge wrote {}", out.display());
    };
    let (c0, c1) = (client_dirs[0].as_path(), client_dirs[1].as_path());
    refuse(&[c0, c1], "missing client(s) 2 of 3");
    refuse(&[c0, c1, c1], "client id 1 appears twice");
    let lone = dir.path().join("warm");
    refuse(
        &[c0, c1, lone.as_path()],
        "different number of clients (3 vs 1)",
    );

    // What depends on the node keeping up on this shared machine comes last, so that the exactness
    // of the merge above is checked whatever the load: nothing failed, and the merged rate is the
    // successes over the longest client's duration, which passes the schedule's end by no more
    // than its last operations' latency.
    assert_rate_facts(&summary, &merged, RATE * SECONDS, SECONDS);
    assert_eq!(f64_at(&summary, "populate.count"), POPULATE as f64);

    // The rows really written: exactly the keys one client would have written for the whole
    // schedule (populate rows 0..3000, then the schedule's writes), nothing twice, nothing missing.
    let plan = cqlbench_load::workload::KeyPlan {
        seed: 0,
        partitions: 1_000_000_000,
        generator: cqlbench_load::PartitionGen::Sequence,
        read_ratio: 0.3,
        populate: POPULATE,
    };
    let total = POPULATE + (RATE * SECONDS) as u64;
    let expected: BTreeSet<u64> = (0..total)
        .filter(|&i| plan.op_type(i) == cqlbench_load::OpId::WRITE)
        .map(|i| plan.partition(i))
        .collect();
    let keys = keys_in_table(&node.host);
    assert_eq!(
        keys.len() as f64,
        POPULATE as f64 + f64_at(&summary, "ops.write.count"),
        "rows vs populate + successful writes of the merge"
    );
    assert!(
        keys == expected,
        "the table's keys differ from one client's"
    );

    // What a client reads from its start file must be a time, and not one already past.
    for (content, expected) in [
        ("soon", "holds 'soon', not a Unix time"),
        ("1000", "in the past when this client read it"),
    ] {
        let file = dir.path().join(format!("start-{content}"));
        write_start(&file, content);
        let start_arg = format!("@{}", file.display());
        let out = dir.path().join(format!("bad-start-{content}"));
        one_line_error(
            &mut cqlbench_command(&[
                "run",
                "KeyValue",
                "--host",
                &node.host,
                "--keyspace",
                KEYSPACE,
                "-d",
                "1s",
                "--rate",
                "100",
                "--start-at",
                &start_arg,
                "-o",
                out.to_str().unwrap(),
            ]),
            expected,
        );
    }
}
