//! Node processes: start detached, check by PID (guarding against PID reuse), signal, stop and verify.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::error::{ClusterError, IoContext, Result};

fn exits() -> &'static Mutex<HashMap<i32, ExitStatus>> {
    static EXITS: OnceLock<Mutex<HashMap<i32, ExitStatus>>> = OnceLock::new();
    EXITS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// How a node this process started has ended ("exit code 1", "signal 9"), once it has.
pub fn exit_description(pid: i32) -> Option<String> {
    let exits = exits().lock().unwrap_or_else(|e| e.into_inner());
    exits.get(&pid).map(describe_exit)
}

fn describe_exit(status: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => status.to_string(),
    }
}

/// PIDs of live processes whose command line contains `marker` (e.g. a cluster's directory): finds
/// node JVMs that no state file tracks any more (lost or unreadable state, a crash mid-start).
pub fn find_by_marker(marker: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let own = std::process::id() as i32;
    let mut pids: Vec<i32> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != own)
        .filter(|&pid| state(pid, Path::new(marker)) != ProcessState::Gone)
        .collect();
    pids.sort_unstable();
    pids
}

/// What `/proc` shows for `pid`, for error messages: "no entry", "state S, java …".
pub fn describe_pid(pid: i32) -> String {
    let Some(letter) = state_letter(pid) else {
        return format!("no entry for PID {pid}");
    };
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .unwrap_or_default();
    format!(
        "PID {pid} in state {letter}, command {:?}",
        cmdline.chars().take(80).collect::<String>()
    )
}

/// Like [`exit_description`], giving the reaper thread up to `limit` to record the exit.
pub fn wait_exit_description(pid: i32, limit: Duration) -> Option<String> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(description) = exit_description(pid) {
            return Some(description);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What `/proc` says about a PID we recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessState {
    Running,
    /// SIGSTOPped (by `cluster pause`).
    Stopped,
    Gone,
}

/// Starts `java args…` in its own process group (Ctrl-C on cqlbench leaves nodes alone), output to `stdout_log`.
pub fn spawn(java: &Path, args: &[String], cwd: &Path, stdout_log: &Path) -> Result<i32> {
    let log = File::options()
        .create(true)
        .append(true)
        .open(stdout_log)
        .context(|| format!("opening {}", stdout_log.display()))?;
    let log_err = log
        .try_clone()
        .context(|| format!("opening {}", stdout_log.display()))?;
    let mut command = Command::new(java);
    command
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .process_group(0);
    let mut child = command
        .spawn()
        .context(|| format!("starting {}", java.display()))?;
    let pid = child.id() as i32;
    let log_path = stdout_log.to_path_buf();
    // Reap the child when it exits, so a killed node never lingers as a zombie of a long-lived
    // caller, and remember how it ended for the error message.
    std::thread::Builder::new()
        .name(format!("reap-{pid}"))
        .spawn(move || {
            let outcome = child.wait();
            let line = match &outcome {
                Ok(status) => format!("{EXIT_PREFIX}{}\n", describe_exit(status)),
                Err(err) => format!("{EXIT_PREFIX}unknown ({err})\n"),
            };
            let _ = File::options()
                .append(true)
                .open(&log_path)
                .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
            if let Ok(status) = outcome {
                exits()
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(pid, status);
            }
        })
        .context(|| "starting a reaper thread".to_string())?;
    wait_for_exec(pid);
    Ok(pid)
}

/// `posix_spawn` (vfork) returns once the child has let go of our memory, a moment before the kernel
/// has set up the new program's argument block: until then `/proc/PID/cmdline` reads empty (measured
/// here: 412 of 3000 spawns), and a liveness check by command line would take a starting node for
/// gone. Waits until the command line is there, the process has ended, or 2 s have passed.
fn wait_for_exec(pid: i32) {
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        match std::fs::read(format!("/proc/{pid}/cmdline")) {
            Ok(cmdline)
                if cmdline.is_empty()
                    && !matches!(state_letter(pid), None | Some('Z' | 'X' | 'x')) =>
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            _ => return,
        }
    }
}

/// The state of `pid`, counting it as ours only if its command line mentions `marker` (the node directory).
pub fn state(pid: i32, marker: &Path) -> ProcessState {
    let Some(letter) = state_letter(pid) else {
        return ProcessState::Gone;
    };
    if matches!(letter, 'Z' | 'X' | 'x') {
        return ProcessState::Gone;
    }
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return ProcessState::Gone;
    };
    let marker = marker.to_string_lossy();
    if !String::from_utf8_lossy(&cmdline).contains(marker.as_ref()) {
        return ProcessState::Gone;
    }
    if letter == 'T' {
        ProcessState::Stopped
    } else {
        ProcessState::Running
    }
}

pub fn is_alive(pid: i32, marker: &Path) -> bool {
    state(pid, marker) != ProcessState::Gone
}

pub fn signal(pid: i32, signal: i32) {
    // SAFETY: kill(2) has no memory-safety preconditions; pid was checked to be our node.
    unsafe {
        libc::kill(pid, signal);
    }
}

/// Stops the given node processes: SIGTERM (Cassandra flushes and exits), SIGKILL after `grace`,
/// then verifies that every one is gone.
pub fn stop_all(processes: &[(i32, &Path)], grace: Duration) -> Result<()> {
    let alive: Vec<(i32, &Path)> = processes
        .iter()
        .copied()
        .filter(|(pid, dir)| is_alive(*pid, dir))
        .collect();
    for (pid, _) in &alive {
        signal(*pid, libc::SIGTERM);
        // A paused node only handles SIGTERM once it runs again.
        signal(*pid, libc::SIGCONT);
    }
    if wait_gone(&alive, grace) {
        return Ok(());
    }
    for (pid, dir) in &alive {
        if is_alive(*pid, dir) {
            signal(*pid, libc::SIGKILL);
        }
    }
    // (A zombie that never gets reaped would keep us here; its parent is cqlbench's reaper thread or init.)
    if wait_gone(&alive, Duration::from_secs(10)) {
        return Ok(());
    }
    let stuck = alive
        .iter()
        .find(|(pid, dir)| !fully_gone(*pid, dir))
        .map(|(pid, _)| *pid)
        .unwrap_or(0);
    Err(ClusterError::StopFailed { pid: stuck })
}

/// SIGKILL and wait until the process is gone (a crash, for fault tests).
pub fn kill(pid: i32, marker: &Path) -> Result<()> {
    if !is_alive(pid, marker) {
        return Ok(());
    }
    signal(pid, libc::SIGKILL);
    if wait_gone(&[(pid, marker)], Duration::from_secs(10)) {
        Ok(())
    } else {
        Err(ClusterError::StopFailed { pid })
    }
}

/// Gone for good: reaped, or the PID now belongs to another process. A JVM killed by a signal
/// shows as a zombie leader while its other threads still tear down and hold its sockets, so a
/// zombie does not count until it has been reaped.
fn fully_gone(pid: i32, marker: &Path) -> bool {
    match state_letter(pid) {
        None => true,
        Some('Z') => false,
        // An exiting process releases its memory, and with it its command line, before it becomes a
        // zombie: an empty command line is the killed JVM still tearing down, not another process.
        Some(_) if std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c.is_empty()) => {
            false
        }
        Some(_) => state(pid, marker) == ProcessState::Gone,
    }
}

/// The state letter of `/proc/PID/stat` (R, S, T, Z, …), or `None` when there is no such process.
fn state_letter(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The letter follows the parenthesised command name, which may itself contain spaces.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().next()?.chars().next()
}

fn wait_gone(processes: &[(i32, &Path)], limit: Duration) -> bool {
    let started = Instant::now();
    loop {
        if processes.iter().all(|(pid, dir)| fully_gone(*pid, dir)) {
            return true;
        }
        if started.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The line cqlbench writes into a node's stdout.log before each start.
pub const START_HEADER: &str = "==== cqlbench starting node";
/// The command line cqlbench logs after the header starts with this.
pub const COMMAND_LINE_PREFIX: &str = "==== command: ";

/// The line the reaper appends to stdout.log when a node's JVM ends, e.g. "…exit code 1".
pub const EXIT_PREFIX: &str = "==== cqlbench: the node's JVM ended: ";

/// The last lines of a node's logs that explain a failure: errors first, else the plain tail.
pub fn log_tail(logs: &[&Path], lines: usize) -> String {
    let mut tail: Vec<String> = Vec::new();
    for log in logs {
        let Ok(text) = read_end(log, 64 * 1024) else {
            continue;
        };
        // Only this start's output: what follows cqlbench's last start header (and not the header).
        let this_start = text
            .rfind(START_HEADER)
            .and_then(|i| text[i..].find('\n').map(|nl| i + nl + 1))
            .map(|i| &text[i..])
            .unwrap_or(&text);
        let all: Vec<&str> = this_start
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with(COMMAND_LINE_PREFIX))
            .collect();
        let errors: Vec<&str> = all
            .iter()
            .copied()
            .filter(|l| {
                l.starts_with("ERROR")
                    || l.starts_with(EXIT_PREFIX)
                    || l.contains("Exception")
                    || l.starts_with("Error")
                    || l.contains("Unrecognized VM option")
            })
            .collect();
        let chosen = if errors.is_empty() { &all } else { &errors };
        let start = chosen.len().saturating_sub(lines);
        tail.extend(chosen[start..].iter().map(|l| shorten(l.trim())));
    }
    if tail.is_empty() {
        return "(no log output)".to_string();
    }
    let start = tail.len().saturating_sub(lines);
    tail[start..].join(" | ")
}

fn shorten(line: &str) -> String {
    const LIMIT: usize = 240;
    if line.chars().count() <= LIMIT {
        line.to_string()
    } else {
        format!("{}…", line.chars().take(LIMIT).collect::<String>())
    }
}

fn read_end(path: &Path, max: u64) -> std::io::Result<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(max)))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A free TCP port on loopback, chosen by the kernel (for JMX, the one port Cassandra does not bind per IP).
pub fn free_loopback_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
        .context(|| "finding a free loopback port".to_string())?;
    listener
        .local_addr()
        .map(|a| a.port())
        .context(|| "finding a free loopback port".to_string())
}

/// Whether something already listens on (or holds) `address:port`.
pub fn port_in_use(address: std::net::Ipv4Addr, port: u16) -> bool {
    std::net::TcpListener::bind((address, port)).is_err()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_is_running_only_with_matching_marker() {
        let pid = std::process::id() as i32;
        let exe = std::env::current_exe().unwrap();
        assert_eq!(state(pid, &exe), ProcessState::Running);
        assert_eq!(
            state(pid, Path::new("/no/such/node/dir")),
            ProcessState::Gone
        );
        assert_eq!(state(i32::MAX - 1, &exe), ProcessState::Gone);
    }

    #[test]
    fn stop_all_terminates_and_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("out.log");
        let pid = spawn(
            Path::new("/bin/sleep"),
            &["300".to_string()],
            dir.path(),
            &log,
        )
        .unwrap();
        // `sleep 300` does not mention the directory, so it must not count as ours.
        assert!(!is_alive(pid, dir.path()));
        let marker = Path::new("300");
        assert!(is_alive(pid, marker));
        signal(pid, libc::SIGSTOP);
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(state(pid, marker), ProcessState::Stopped);
        stop_all(&[(pid, marker)], Duration::from_secs(5)).unwrap();
        assert!(!is_alive(pid, marker));
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(
            exit_description(pid).as_deref(),
            Some("killed by signal 15")
        );
    }

    #[test]
    fn a_spawned_process_is_recognised_at_once() {
        // Without waiting for exec, about one spawn in seven read as gone right away.
        let dir = tempfile::tempdir().unwrap();
        let marker = Path::new("271828");
        let mut seen = Vec::new();
        for _ in 0..60 {
            let pid = spawn(
                Path::new("/bin/sleep"),
                &["271828".to_string()],
                dir.path(),
                &dir.path().join("out.log"),
            )
            .unwrap();
            seen.push((pid, state(pid, marker)));
        }
        let processes: Vec<(i32, &Path)> = seen.iter().map(|(pid, _)| (*pid, marker)).collect();
        stop_all(&processes, Duration::from_secs(5)).unwrap();
        let missed: Vec<_> = seen
            .iter()
            .filter(|(_, state)| *state != ProcessState::Running)
            .collect();
        assert!(
            missed.is_empty(),
            "taken for gone right after spawn: {missed:?}"
        );
    }

    #[test]
    fn finds_processes_by_marker() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("node1");
        // A process that never forks: a shell would fork its command, and for a moment that child
        // carries the shell's command line (and the marker) too.
        std::fs::write(&marker, "").unwrap();
        let pid = spawn(
            Path::new("/usr/bin/tail"),
            &["-f".to_string(), marker.display().to_string()],
            dir.path(),
            &dir.path().join("out.log"),
        )
        .unwrap();
        let cluster_marker = format!("{}/node", dir.path().display());
        assert_eq!(find_by_marker(&cluster_marker), vec![pid]);
        assert!(find_by_marker("/no/such/cluster/node").is_empty());
        stop_all(&[(pid, &marker)], Duration::from_secs(5)).unwrap();
        assert!(find_by_marker(&cluster_marker).is_empty());
    }

    #[test]
    fn log_tail_prefers_errors() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("system.log");
        std::fs::write(
            &log,
            "INFO a\nERROR [main] boom: port taken\nINFO b\nINFO c\n",
        )
        .unwrap();
        assert_eq!(log_tail(&[&log], 3), "ERROR [main] boom: port taken");
        let stdout = dir.path().join("stdout.log");
        std::fs::write(
            &stdout,
            format!("{START_HEADER} 1\n{COMMAND_LINE_PREFIX}java -Xbogus\nold run\n\n{START_HEADER} 1\n{COMMAND_LINE_PREFIX}java\nonly this run\n"),
        )
        .unwrap();
        assert_eq!(log_tail(&[&stdout], 3), "only this run");
        let plain = dir.path().join("plain.log");
        std::fs::write(&plain, "one\ntwo\nthree\n").unwrap();
        assert_eq!(log_tail(&[&plain], 2), "two | three");
    }

    #[test]
    fn busy_port_is_detected() {
        let listener = std::net::TcpListener::bind(("127.0.2.250", 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        assert!(port_in_use(std::net::Ipv4Addr::new(127, 0, 2, 250), port));
        // (Whether the port is free again after drop is racy: any process may take it.)
        drop(listener);
    }
}
