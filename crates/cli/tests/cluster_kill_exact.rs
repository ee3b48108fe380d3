//! `cluster kill` and `down` are exact (#18): a real node on 127.0.13.10 is killed and restarted 20
//! times with busy processes beside it, and at the instant each `kill` returns its JVM has ended (no
//! entry, or a zombie leader of one thread) and its CQL, storage and JMX ports can be bound. A PID
//! the kernel has given to another process is never taken for the node.

#[path = "common/cluster_support.rs"]
mod support;

use std::process::{Child, Command, Stdio};
use std::time::Instant;

use support::{assert_node_ended, cqlbench, status_json, ClusterGuard, Proc};

const NAME: &str = "test-kill-exact";
const BASE_IP: &str = "127.0.13.10";
const ROUNDS: usize = 20;

/// One busy loop per core, stopped when dropped: the kill lands on a machine with no idle CPU,
/// where a JVM's threads take longest to tear down.
struct Busy(Vec<Child>);

impl Busy {
    fn start() -> Busy {
        let spin = || {
            Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .stdin(Stdio::null())
                .spawn()
                .expect("sh runs")
        };
        Busy(vec![spin(), spin()])
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn kill_returns_only_when_the_jvm_and_its_ports_are_gone() {
    let guard = ClusterGuard::fresh(NAME);
    let up = cqlbench(&[
        "cluster",
        "up",
        "--name",
        NAME,
        "--base-ip",
        BASE_IP,
        "--heap",
        "384M",
        "--gc",
        "g1",
    ]);
    assert!(up.ok(), "up failed: {}", up.stderr);
    let started = Instant::now();
    for round in 1..=ROUNDS {
        let state = guard.state();
        let node = &state.nodes[0];
        let proc = Proc::of_node(node);
        assert!(!proc.exited(), "round {round}: the node is not running");
        let killed = {
            let _busy = Busy::start();
            let killed = cqlbench(&["cluster", "kill", "--name", NAME, "--node", "1"]);
            // Checked the instant `kill` returns, while the machine is still busy.
            assert!(killed.ok(), "round {round}: {}", killed.stderr);
            assert_node_ended(node, proc, &format!("round {round}"));
            killed
        };
        assert!(killed.stdout.contains("killed"), "{}", killed.stdout);
        assert_eq!(status_json(NAME)["nodes"][0]["process"], "down");
        let start = cqlbench(&["cluster", "start", "--name", NAME, "--node", "1"]);
        assert!(start.ok(), "round {round}: start failed: {}", start.stderr);
        eprintln!(
            "round {round}: killed and restarted ({:.0} s so far)",
            started.elapsed().as_secs_f64()
        );
    }

    // A state file whose PID now belongs to another process: never taken for the node, neither
    // with the start time it records nor (a file of an earlier version) without one.
    let state = guard.state();
    let node_proc = Proc::of_node(&state.nodes[0]);
    let mut stranger = Command::new("sleep")
        .arg("600")
        .stdin(Stdio::null())
        .spawn()
        .expect("sleep runs");
    let stranger_pid = stranger.id() as i32;
    let path = state.dir.join("cluster.json");
    let original = std::fs::read_to_string(&path).unwrap();
    let with_pid = |start_ticks: Option<u64>| {
        let mut json: serde_json::Value = serde_json::from_str(&original).unwrap();
        json["nodes"][0]["pid"] = stranger_pid.into();
        match start_ticks {
            Some(ticks) => json["nodes"][0]["pid_start_ticks"] = ticks.into(),
            None => {
                json["nodes"][0]
                    .as_object_mut()
                    .unwrap()
                    .remove("pid_start_ticks");
            }
        }
        std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap()).unwrap();
    };
    for recorded in [Some(node_proc.start_ticks), None] {
        with_pid(recorded);
        assert_eq!(
            status_json(NAME)["nodes"][0]["process"],
            "down",
            "recorded start time {recorded:?}"
        );
        let refused = cqlbench(&["cluster", "kill", "--name", NAME, "--node", "1"]);
        refused.assert_one_line_error(&["is not running"]);
        assert!(
            !Proc::of(stranger_pid).exited(),
            "the other process was hit"
        );
    }
    let _ = stranger.kill();
    let _ = stranger.wait();
    std::fs::write(&path, &original).unwrap();

    // `down` is as exact as `kill`, under load too.
    let _busy = Busy::start();
    let down = cqlbench(&["cluster", "down", "--name", NAME]);
    assert!(down.ok(), "{}", down.stderr);
    assert_node_ended(&state.nodes[0], node_proc, "down");
}
