//! Helpers shared by the `cqlbench cluster` integration tests: run the real binary, keep test
//! clusters on the cluster helper's loopback block (127.0.1.x / 127.0.2.x), and always clean up.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

use cqlbench_cluster::{ClusterState, Home};

/// The result of one `cqlbench` invocation.
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }

    /// Asserts failure with exactly one `error: …` line that contains every `needle`.
    pub fn assert_one_line_error(&self, needles: &[&str]) {
        assert_ne!(
            self.code,
            Some(0),
            "expected failure, got success: {}",
            self.stdout
        );
        let error_lines: Vec<&str> = self
            .stderr
            .lines()
            .filter(|l| l.starts_with("error:"))
            .collect();
        assert_eq!(error_lines.len(), 1, "stderr: {}", self.stderr);
        for needle in needles {
            assert!(
                error_lines[0].contains(needle),
                "{needle:?} missing from {:?}",
                error_lines[0]
            );
        }
        assert!(!self.stderr.contains("panicked"), "{}", self.stderr);
        assert!(!self.stderr.contains("RUST_BACKTRACE"), "{}", self.stderr);
    }
}

pub fn cqlbench(args: &[&str]) -> Run {
    cqlbench_with(args, &[], None)
}

/// Runs the binary with extra environment variables and, optionally, a replaced PATH.
pub fn cqlbench_with(args: &[&str], env: &[(&str, &str)], path: Option<&Path>) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cqlbench"));
    command.args(args);
    for (key, value) in env {
        command.env(key, value);
    }
    if let Some(path) = path {
        command.env("PATH", path);
    }
    let Output {
        status,
        stdout,
        stderr,
    } = command.output().expect("the cqlbench binary runs");
    Run {
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// Destroys the named test cluster when dropped, even if the test panicked.
pub struct ClusterGuard {
    pub name: String,
    /// A private `CQLBENCH_HOME`, or `None` for the shared cache.
    pub home: Option<String>,
}

impl ClusterGuard {
    /// Starts from a clean slate: a leftover cluster of a crashed earlier run is destroyed first.
    pub fn fresh(name: &str) -> Self {
        Self::fresh_in(name, None)
    }

    pub fn fresh_in(name: &str, home: Option<&str>) -> Self {
        let guard = Self {
            name: name.to_string(),
            home: home.map(str::to_string),
        };
        guard.destroy();
        guard
    }

    fn destroy(&self) {
        let _ = self.run(&["cluster", "destroy", "--name", &self.name]);
    }

    /// Runs `cqlbench` against this guard's cache.
    pub fn run(&self, args: &[&str]) -> Run {
        match &self.home {
            Some(home) => cqlbench_with(args, &[("CQLBENCH_HOME", home)], None),
            None => cqlbench(args),
        }
    }

    pub fn state(&self) -> ClusterState {
        let home = match &self.home {
            Some(home) => Home::new(home),
            None => Home::from_env(),
        };
        ClusterState::load_existing(&home, &self.name).expect("cluster state")
    }
}

impl Drop for ClusterGuard {
    fn drop(&mut self) {
        self.destroy();
    }
}

/// Whether the process still exists and has not exited (an exited process awaiting its parent's
/// reaping, state `Z`, no longer runs and holds no memory or ports).
pub fn process_exists(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().next())
                .unwrap_or("");
            state != "Z" && state != "X"
        }
        Err(_) => false,
    }
}

/// A CQL statement at a chosen consistency level with a bounded request timeout.
pub fn statement(
    cql: &str,
    consistency: scylla::statement::Consistency,
) -> scylla::statement::Statement {
    let mut statement = scylla::statement::Statement::new(cql);
    statement.set_consistency(consistency);
    statement.set_request_timeout(Some(std::time::Duration::from_secs(10)));
    statement
}

/// A driver session over the given contact points.
pub async fn session(contact_points: &[std::net::SocketAddr]) -> scylla::client::session::Session {
    let mut builder = scylla::client::session_builder::SessionBuilder::new();
    for point in contact_points {
        builder = builder.known_node_addr(*point);
    }
    builder.build().await.expect("CQL session")
}

/// A session that only ever coordinates through `coordinators` (e.g. all but a paused node, which
/// the driver cannot tell from a slow one), while replicas still include every node.
pub async fn session_through(
    coordinators: &[std::net::SocketAddr],
) -> scylla::client::session::Session {
    let filter =
        scylla::policies::host_filter::AllowListHostFilter::new(coordinators.iter().copied())
            .expect("allow list");
    let mut builder = scylla::client::session_builder::SessionBuilder::new()
        .host_filter(std::sync::Arc::new(filter));
    for point in coordinators {
        builder = builder.known_node_addr(*point);
    }
    builder.build().await.expect("CQL session")
}

/// `jcmd PID COMMAND` with the cluster's own JDK; returns stdout.
pub fn jcmd(state: &ClusterState, pid: i32, command: &str) -> String {
    let output = Command::new(state.jdk.jcmd())
        .arg(pid.to_string())
        .arg(command)
        .output()
        .expect("jcmd runs");
    assert!(output.status.success(), "jcmd {command} failed");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn status_json(name: &str) -> serde_json::Value {
    let run = cqlbench(&["cluster", "status", "--name", name, "--json"]);
    assert!(run.ok(), "{}", run.stderr);
    serde_json::from_str(&run.stdout).expect("status --json is JSON")
}

/// `release_version` of `system.local`, as the cluster's first contact point reports it.
pub fn release_version(state: &ClusterState) -> String {
    let contact = state.cql_contact_points();
    cqlbench_cluster::cql::block_on(async move {
        session(&contact)
            .await
            .query_unpaged("SELECT release_version FROM system.local", &[])
            .await
            .expect("version")
            .into_rows_result()
            .expect("rows")
            .single_row::<(String,)>()
            .expect("row")
            .0
    })
}
