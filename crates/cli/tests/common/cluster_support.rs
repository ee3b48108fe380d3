//! Helpers shared by the `cqlbench cluster` integration tests: run the real binary, keep test
//! clusters on the cluster helper's loopback block (127.0.1.x / 127.0.2.x), and always clean up.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

use cqlbench_cluster::{ClusterState, Home};
use cqlbench_testkit::{Consistency, Driver, Statement, NONE};

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

/// Live processes whose command line contains one of `markers` (e.g. a node's data directory),
/// each with its start time; a process counts until it has ended as [`Proc::exited`] says.
pub fn processes_with_any(markers: &[String]) -> Vec<Proc> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Some(stat) = read_stat(pid) else { continue };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let process = Proc {
            pid,
            start_ticks: stat.start_ticks,
        };
        // Read the command line between two looks at the start time: both were this process's.
        let same = read_stat(pid).is_some_and(|s| s.start_ticks == stat.start_ticks);
        if same && markers.iter().any(|m| cmdline.contains(m.as_str())) && !process.exited() {
            found.push(process);
        }
    }
    found
}

/// The fields of `/proc/PID/stat` the tests judge a process by, read here independently of the
/// product's own reader.
#[derive(Debug, Clone, Copy)]
pub struct StatFields {
    pub state: char,
    pub threads: u64,
    pub start_ticks: u64,
}

pub fn read_stat(pid: i32) -> Option<StatFields> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    Some(StatFields {
        state: fields.first()?.chars().next()?,
        threads: fields.get(17)?.parse().ok()?,
        start_ticks: fields.get(19)?.parse().ok()?,
    })
}

/// A process as a test knows it: its PID and when it started, so a reused PID is not taken for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proc {
    pub pid: i32,
    pub start_ticks: u64,
}

impl Proc {
    /// The process that runs as `pid` now.
    pub fn of(pid: i32) -> Proc {
        let stat = read_stat(pid).unwrap_or_else(|| panic!("no process {pid}"));
        Proc {
            pid,
            start_ticks: stat.start_ticks,
        }
    }

    /// The node's JVM as its state file records it.
    pub fn of_node(node: &cqlbench_cluster::NodeState) -> Proc {
        Proc {
            pid: node.pid.expect("the node has a PID"),
            start_ticks: node
                .pid_start_ticks
                .expect("the state records its start time"),
        }
    }

    /// Ended: no entry, the PID now another process's, or a zombie leader left alone — every
    /// other thread gone, and with them the process's sockets (a zombie leader with threads left
    /// still holds them: measured for #18).
    pub fn exited(&self) -> bool {
        match read_stat(self.pid) {
            None => true,
            Some(stat) if stat.start_ticks != self.start_ticks => true,
            Some(stat) => matches!(stat.state, 'Z' | 'X') && stat.threads <= 1,
        }
    }

    /// Sends `signal` to exactly this process: through a pidfd (which pins the process it was
    /// opened for), checked against the start time after opening, so a reused PID is never hit.
    /// False when the process has ended.
    pub fn signal(&self, signal: i32) -> bool {
        // SAFETY: pidfd_open(2) takes a PID and flags and returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, self.pid, 0) };
        if fd < 0 {
            return false;
        }
        let ours = read_stat(self.pid).is_some_and(|s| s.start_ticks == self.start_ticks);
        // SAFETY: pidfd_send_signal(2) on the descriptor just opened, then close(2) it.
        let sent = ours
            && unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    fd as i32,
                    signal,
                    std::ptr::null::<libc::siginfo_t>(),
                    0,
                )
            } == 0;
        unsafe { libc::close(fd as i32) };
        sent
    }

    /// What /proc shows, for failure messages.
    pub fn describe(&self) -> String {
        format!(
            "PID {} (started at {}): {:?}",
            self.pid,
            self.start_ticks,
            read_stat(self.pid)
        )
    }
}

/// Whether `address:port` can be bound now, i.e. nothing listens on it.
pub fn port_free(address: std::net::Ipv4Addr, port: u16) -> bool {
    std::net::TcpListener::bind((address, port)).is_ok()
}

/// Asserts that the node's JVM has ended and its CQL, storage and JMX ports are free.
pub fn assert_node_ended(node: &cqlbench_cluster::NodeState, proc: Proc, context: &str) {
    assert!(
        proc.exited(),
        "{context}: the JVM has not ended: {}",
        proc.describe()
    );
    for (address, port, what) in [
        (node.address, node.native_port, "CQL"),
        (node.address, node.storage_port, "storage"),
        (std::net::Ipv4Addr::LOCALHOST, node.jmx_port, "JMX"),
    ] {
        assert!(
            port_free(address, port),
            "{context}: the {what} port {address}:{port} is still taken ({})",
            proc.describe()
        );
    }
}

/// A CQL statement at a chosen consistency level with a bounded request timeout.
pub fn statement(cql: &str, consistency: Consistency) -> Statement {
    cqlbench_testkit::statement(cql, consistency, std::time::Duration::from_secs(10))
}

/// A driver session over the given contact points.
pub fn session(contact_points: &[std::net::SocketAddr]) -> Driver {
    Driver::connect(contact_points).expect("CQL session")
}

/// A session that only ever coordinates through `coordinators` (e.g. all but a paused node, which
/// the driver cannot tell from a slow one), while replicas still include every node.
pub fn session_through(coordinators: &[std::net::SocketAddr]) -> Driver {
    Driver::connect_through(coordinators).expect("CQL session")
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

/// How many requests node `address` counted for table `keyspace.keyvalue` in one of its own latency
/// tables (`system_views.coordinator_write_latency`, `local_write_latency`, …); 0 before the first.
pub fn keyvalue_requests(address: std::net::SocketAddr, keyspace: &str, view: &str) -> i64 {
    let cql = format!(
        "SELECT count FROM system_views.{view} \
         WHERE keyspace_name = '{keyspace}' AND table_name = 'keyvalue'"
    );
    Driver::connect_single(address, std::time::Duration::from_secs(20))
        .expect("session")
        .query(cql, NONE)
        .expect("metrics query")
        .into_rows_result()
        .expect("rows")
        .maybe_first_row::<(i64,)>()
        .expect("count row")
        .map_or(0, |(count,)| count)
}

/// `release_version` of `system.local`, as the cluster's first contact point reports it.
pub fn release_version(state: &ClusterState) -> String {
    session(&state.cql_contact_points())
        .query("SELECT release_version FROM system.local", NONE)
        .expect("version")
        .into_rows_result()
        .expect("rows")
        .single_row::<(String,)>()
        .expect("row")
        .0
}
