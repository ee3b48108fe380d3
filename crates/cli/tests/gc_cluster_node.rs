//! `cqlbench gc analyze` on the GC log of a real node started by `cqlbench cluster`, with no options.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const NAME: &str = "test-gclog-node";
const BASE_IP: &str = "127.0.5.10";

fn cqlbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cqlbench"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run cqlbench")
}

/// Destroys the test cluster when the test ends, however it ends.
struct ClusterGuard;

impl Drop for ClusterGuard {
    fn drop(&mut self) {
        let output = cqlbench(&["cluster", "destroy", "--name", NAME]);
        if !output.status.success() {
            eprintln!(
                "destroy failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
}

fn logs_dir() -> PathBuf {
    let home = std::env::var_os("CQLBENCH_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("cqlbench")))
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/cqlbench")
        });
    home.join("clusters").join(NAME).join("node1/logs")
}

#[test]
fn gc_log_of_a_cluster_node_is_analysed_with_no_options() {
    let _ = cqlbench(&["cluster", "destroy", "--name", NAME]);
    let guard = ClusterGuard;
    let up = cqlbench(&[
        "cluster",
        "up",
        "--name",
        NAME,
        "--base-ip",
        BASE_IP,
        "--heap",
        "256M",
    ]);
    assert!(
        up.status.success(),
        "cluster up failed: {}",
        String::from_utf8_lossy(&up.stderr)
    );
    let dir = logs_dir();
    let gc_log = dir.join("gc.log");
    assert!(gc_log.exists(), "no GC log at {}", gc_log.display());
    // A running node may be writing a line right now, and half a line is not understood: the log
    // of a stopped node has only whole lines.
    let down = cqlbench(&["cluster", "down", "--name", NAME]);
    assert!(
        down.status.success(),
        "{}",
        String::from_utf8_lossy(&down.stderr)
    );

    // The node's log as it is, by file and by directory.
    let by_file = cqlbench(&["gc", "analyze", gc_log.to_str().unwrap(), "--json"]);
    assert!(
        by_file.status.success(),
        "{}",
        String::from_utf8_lossy(&by_file.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&by_file.stdout).unwrap();
    assert_eq!(json["jvm"]["collector"], "G1", "{json:#}");
    assert_eq!(json["unparsed_lines"], 0, "{json:#}");
    assert!(json["span_s"].as_f64().unwrap() > 1.0, "{json:#}");
    // Start-up alone brings the JVM to safepoints; their stopped time is the time-sampled source.
    assert!(
        json["safepoints"]["count"].as_u64().unwrap() > 0,
        "{json:#}"
    );
    assert_eq!(json["time_sampled"]["source"], "safepoints", "{json:#}");

    let by_dir = cqlbench(&["gc", "analyze", dir.to_str().unwrap()]);
    assert!(by_dir.status.success());
    let text = String::from_utf8(by_dir.stdout).unwrap();
    assert!(text.contains("G1"), "{text}");
    drop(guard);
}
