//! summary.json's `validity` against a real node: a run on a quiet machine is not doubtful, and its
//! evidence names the node (found by the address it listens on) with its CPU; the same run with a busy
//! process beside it for a third of the window is doubtful, naming that process — and the node, busy
//! as it is, never counts as "other". The terminal says which it was.

mod run_support;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use cqlbench_cluster::ClusterState;
use run_support::{cqlbench_command, one_line_error, read_summary, spawn_cqlbench, TestNode};
use serde_json::Value;

const NODE_ADDRESS: &str = "127.0.16.1";

/// A process that is no part of the benchmark and uses one core; killed (by PID) on drop.
struct Busy(Child);

impl Busy {
    fn start() -> Busy {
        Busy(
            Command::new("python3")
                .args(["-c", "while True: pass"])
                .stdin(Stdio::null())
                .spawn()
                .expect("python3"),
        )
    }

    /// The CPU it has used (utime + stime, s), from its own /proc entry.
    fn cpu_s(&self) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.0.id())).unwrap();
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..]
            .split_whitespace()
            .collect();
        let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
        // SAFETY: sysconf has no preconditions.
        ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A fixed-rate run; `busy` (start after, length) runs a busy process during it. Returns summary.json,
/// the terminal output and the CPU the busy process used (s).
fn run(
    node: &TestNode,
    dir: &std::path::Path,
    seconds: u32,
    busy: Option<(u64, u64)>,
) -> (Value, String, f64) {
    let child = spawn_cqlbench(&[
        "run",
        "KeyValue",
        "--host",
        &node.host,
        "--rate",
        "1000",
        "-t",
        "1",
        "-d",
        &format!("{seconds}s"),
        "-o",
        dir.to_str().unwrap(),
    ]);
    let mut busy_cpu_s = 0.0;
    if let Some((after, length)) = busy {
        std::thread::sleep(Duration::from_secs(after));
        let process = Busy::start();
        std::thread::sleep(Duration::from_secs(length));
        busy_cpu_s = process.cpu_s();
    }
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (read_summary(dir), stdout, busy_cpu_s)
}

fn node_pid(node: &TestNode) -> i64 {
    let state = ClusterState::load(&node.home, &node.name).unwrap().unwrap();
    i64::from(state.nodes[0].pid.expect("the node's PID"))
}

/// Nothing but the node and the client ran, so no second is busy and the result is trusted, unless
/// the hypervisor itself stole time or delayed the client: such a reason must then be what the
/// evidence shows (steal or lateness at its threshold), never "other processes".
fn assert_quiet_or_only_the_hypervisor(validity: &Value, stdout: &str) {
    let evidence = &validity["evidence"];
    assert_eq!(evidence["busy_seconds"].as_f64(), Some(0.0), "{evidence}");
    if validity["doubtful"] == false {
        assert!(stdout.contains("machine quiet while measured"), "{stdout}");
        return;
    }
    let thresholds = &validity["thresholds"];
    for reason in validity["reasons"].as_array().unwrap() {
        let reason = reason.as_str().unwrap();
        let backed = if reason.starts_with("steal time") {
            evidence["steal"].as_f64() >= thresholds["steal"].as_f64()
        } else {
            reason.starts_with("client lateness p99")
        };
        assert!(backed, "a quiet run doubtful for '{reason}': {validity}");
    }
    eprintln!(
        "the quiet run was doubtful for the hypervisor's sake: {}",
        validity["reasons"]
    );
}

/// The other processes' CPU (s) over the window, from the per-second shares of all cores.
fn other_cpu_seconds(evidence: &Value) -> f64 {
    let cores = evidence["cores"].as_f64().unwrap();
    let mut previous = 0.0;
    let mut total = 0.0;
    for second in evidence["per_second"].as_array().unwrap() {
        let t = second["t"].as_f64().unwrap();
        total += second["other_cpu"].as_f64().unwrap() * cores * (t - previous);
        previous = t;
    }
    total
}

#[test]
fn a_quiet_run_is_trusted_and_one_beside_a_busy_process_is_doubtful() {
    let node = TestNode::start("load-validity", NODE_ADDRESS);
    let out = tempfile::tempdir().unwrap();
    let pid = node_pid(&node);

    let (quiet, stdout, _) = run(&node, &out.path().join("quiet"), 20, None);
    let validity = &quiet["validity"];
    let evidence = &validity["evidence"];
    eprintln!("quiet run: {validity}");
    assert_quiet_or_only_the_hypervisor(validity, &stdout);
    assert!(evidence["seconds"].as_f64().unwrap() >= 18.0, "{evidence}");
    assert!(
        evidence["per_second"].as_array().unwrap().len() >= 18,
        "{evidence}"
    );
    let nodes = evidence["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 1, "{evidence}");
    assert_eq!(nodes[0]["pid"].as_i64(), Some(pid));
    assert_eq!(nodes[0]["address"], format!("{NODE_ADDRESS}:9042"));
    assert!(
        nodes[0]["cpu_s"].as_f64().unwrap() > 0.5,
        "the node worked: {evidence}"
    );
    assert!(
        evidence["client_cpu_cores"].as_f64().unwrap() > 0.0,
        "{evidence}"
    );

    // A busy process for 10 s of a 30 s window (it starts about 4 s after the client, which
    // connects and sets up the schema first).
    let (busy, stdout, python_cpu_s) = run(&node, &out.path().join("busy"), 30, Some((6, 10)));
    let validity = &busy["validity"];
    let evidence = &validity["evidence"];
    eprintln!("busy run: {validity}");
    assert_eq!(validity["doubtful"], true, "{validity}");
    let reasons: Vec<&str> = validity["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    let cpu_reason = reasons
        .iter()
        .find(|r| r.starts_with("other processes used"))
        .unwrap_or_else(|| panic!("{reasons:?}"));
    assert!(cpu_reason.contains("python3"), "{cpu_reason}");
    assert!(
        stdout.contains("DOUBTFUL result: other processes used"),
        "{stdout}"
    );
    // Every second of its 10 is busy: beside the node on 2 cores a busy loop gets 0.45-0.8 of a
    // core, above the default 0.3 core (other-cpu 0.15); its first and last seconds may be partial.
    let busy_seconds = evidence["busy_seconds"].as_f64().unwrap();
    assert!((8.0..=12.0).contains(&busy_seconds), "{evidence}");
    // The seconds' other CPU adds up to what python3 used (its last moments counted through the
    // test, which reaps it) and the little the machine's own daemons use.
    let other_cpu_s = other_cpu_seconds(evidence);
    eprintln!("other CPU over the window: {other_cpu_s:.2} s; python3: {python_cpu_s:.2} s");
    assert!(
        other_cpu_s >= python_cpu_s - 1.2 && other_cpu_s <= python_cpu_s + 1.0,
        "other CPU {other_cpu_s} s, python3's own /proc {python_cpu_s} s: {evidence}"
    );
    let top = &evidence["top_other"].as_array().unwrap()[0];
    assert_eq!(top["name"], "python3", "{evidence}");
    // What python3 itself says it used, less at most its last second (it ends between two readings).
    let named = top["cpu_s"].as_f64().unwrap();
    eprintln!("python3: {named} s in the evidence, {python_cpu_s} s by its own /proc");
    assert!(
        named <= python_cpu_s + 0.05 && named >= python_cpu_s - 1.2,
        "evidence {named} s, python3's own /proc {python_cpu_s} s: {evidence}"
    );
    for process in evidence["top_other"].as_array().unwrap() {
        assert_ne!(
            process["pid"].as_i64(),
            Some(pid),
            "the node counted as other: {evidence}"
        );
    }
    assert_eq!(evidence["nodes"][0]["pid"].as_i64(), Some(pid));
}

#[test]
fn a_bad_threshold_is_refused_in_one_line() {
    for (list, expected) in [
        ("steal=x", "validity threshold steal: 'x' is not a number"),
        ("cpu=1", "unknown validity threshold 'cpu'"),
        ("steal", "write NAME=VALUE"),
    ] {
        let args = [
            "run",
            "KeyValue",
            "--host",
            "127.0.16.250",
            "--validity-thresholds",
            list,
        ];
        one_line_error(&mut cqlbench_command(&args), expected);
    }
}
