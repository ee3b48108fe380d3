//! Helpers shared by the `cqlbench campaign` integration tests: a private CQLBENCH_HOME, the campaign
//! process, and a reaper that leaves no campaign or node process behind. Needs `support`
//! (common/cluster_support.rs) beside it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cqlbench_cluster::Home;

pub fn private_home() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let shared = Home::from_env();
    for cache in ["cassandra", "jdks", "tools"] {
        let from = shared.root().join(cache);
        std::fs::create_dir_all(&from).unwrap();
        std::os::unix::fs::symlink(&from, dir.path().join(cache)).unwrap();
    }
    dir
}

pub fn campaign(home: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cqlbench"));
    cmd.arg("campaign").args(args).env("CQLBENCH_HOME", home);
    cmd
}

/// Live JVMs of clusters under `home`, found by the data directory on their command line.
pub fn node_processes(home: &Path) -> Vec<i32> {
    node_procs(home).into_iter().map(|p| p.pid).collect()
}

/// The same, each with its start time.
pub fn node_procs(home: &Path) -> Vec<crate::support::Proc> {
    let marker = format!("-Dcassandra.storagedir={}", home.join("clusters").display());
    crate::support::processes_with_any(&[marker])
}

/// Waits until `ready` holds (or the campaign ends, or a limit passes).
pub fn wait_for(child: &mut Child, what: &str, mut ready: impl FnMut() -> bool) {
    let limit = Instant::now() + Duration::from_secs(240);
    while !ready() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the campaign ended ({status}) before {what}");
        }
        assert!(Instant::now() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

pub fn spawn(home: &Path, plan: &Path, out: &Path, log: &Path) -> Child {
    spawn_with(home, plan, out, log, &[])
}

/// [`spawn`] with more options.
pub fn spawn_with(home: &Path, plan: &Path, out: &Path, log: &Path, extra: &[&str]) -> Child {
    let log = std::fs::File::create(log).unwrap();
    let mut args = vec![plan.to_str().unwrap(), "-o", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    campaign(home, &args)
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .stdin(Stdio::null())
        .spawn()
        .unwrap()
}

/// Whatever happens in the test (a failed assertion mid-campaign included), no campaign process and
/// no node it started outlives it: both are killed by PID when this is dropped.
pub struct Reaper {
    pub home: PathBuf,
    pub campaign: Option<Child>,
}

impl Drop for Reaper {
    fn drop(&mut self) {
        if let Some(child) = self.campaign.as_mut() {
            // std only signals a child it has not reaped yet.
            let _ = child.kill();
            let _ = child.wait();
        }
        for node in node_procs(&self.home) {
            // A node JVM of this test's private home, found by its command line, signalled by
            // PID and start time.
            node.signal(libc::SIGKILL);
        }
    }
}

pub fn signal(child: &Child, signal: i32) {
    // SAFETY: kill(2) on the PID of a child this test spawned and has not reaped.
    unsafe { libc::kill(child.id() as i32, signal) };
}
