//! Node processes: start detached, check by PID (guarding against PID reuse), signal, stop and verify.

use std::collections::HashMap;
use std::fs::File;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use crate::error::{ClusterError, IoContext, Result};

fn exits() -> &'static Mutex<HashMap<ProcessId, ExitStatus>> {
    static EXITS: OnceLock<Mutex<HashMap<ProcessId, ExitStatus>>> = OnceLock::new();
    EXITS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// How a node this process started has ended ("exit code 1", "signal 9"), once it has.
pub fn exit_description(process: &ProcessId) -> Option<String> {
    let exits = exits().lock().unwrap_or_else(|e| e.into_inner());
    exits.get(process).map(describe_exit)
}

fn describe_exit(status: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => status.to_string(),
    }
}

/// Live processes whose command line contains `marker` (e.g. a cluster's directory): finds node
/// JVMs that no state file tracks any more (lost or unreadable state, a crash mid-start).
pub fn find_by_marker(marker: &str) -> Vec<ProcessId> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let own = std::process::id() as i32;
    let mut found: Vec<ProcessId> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != own)
        .filter_map(|pid| ProcessId::with_marker(pid, marker))
        .filter(|process| !process.is_gone())
        .collect();
    found.sort_unstable_by_key(|p| p.pid);
    found
}

/// What `/proc` shows for `pid`, for error messages: "PID 12 in state Z, 3 thread(s), exiting, command …".
pub fn describe_pid(pid: i32) -> String {
    let Some(stat) = Stat::read(pid) else {
        return format!("no entry for PID {pid}");
    };
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .unwrap_or_default();
    format!(
        "PID {pid} in state {}, {} thread(s){}, command {:?}",
        stat.state,
        stat.threads,
        if stat.flags & PF_EXITING != 0 {
            ", exiting"
        } else {
            ""
        },
        cmdline.chars().take(80).collect::<String>()
    )
}

/// The states of a process's threads, for error messages: "PID 12: 80 thread(s), 79 in T, 1 in D".
pub fn describe_threads(pid: i32) -> String {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return format!("no entry for PID {pid}");
    };
    let mut states: std::collections::BTreeMap<char, usize> = Default::default();
    for task in tasks.flatten() {
        if let Some(stat) = std::fs::read_to_string(task.path().join("stat"))
            .ok()
            .and_then(|t| Stat::parse(&t))
        {
            *states.entry(stat.state).or_default() += 1;
        }
    }
    let total: usize = states.values().sum();
    let by_state: Vec<String> = states.iter().map(|(s, n)| format!("{n} in {s}")).collect();
    format!("PID {pid}: {total} thread(s), {}", by_state.join(", "))
}

/// How often [`ProcessId::stop_all_threads`] looks at the threads (a stop takes well under a
/// millisecond per thread when they run).
const STOP_POLL: Duration = Duration::from_micros(200);

/// Like [`exit_description`], giving the reaper thread up to `limit` to record the exit.
pub fn wait_exit_description(process: &ProcessId, limit: Duration) -> Option<String> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(description) = exit_description(process) {
            return Some(description);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `java args…` in its own process group (Ctrl-C on cqlbench leaves nodes alone), output to `stdout_log`.
pub fn spawn(java: &Path, args: &[String], cwd: &Path, stdout_log: &Path) -> Result<ProcessId> {
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
    // SAFETY: close_range(2) is async-signal-safe; it only marks descriptors close-on-exec.
    unsafe {
        command.pre_exec(|| {
            // A node outlives cqlbench: it must not keep descriptors cqlbench inherited (a caller's
            // pipe, a lock file), or the caller waits on it for as long as the node runs.
            libc::syscall(
                libc::SYS_close_range,
                3u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            );
            Ok(())
        });
    }
    let mut child = command
        .spawn()
        .context(|| format!("starting {}", java.display()))?;
    let pid = child.id() as i32;
    // Read before the reaper may wait for it: an unreaped child keeps its PID, so this is its start time.
    let identity = ProcessId::current(pid).unwrap_or(ProcessId {
        pid,
        start_ticks: 0,
    });
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
                    .insert(identity, status);
            }
        })
        .context(|| "starting a reaper thread".to_string())?;
    Ok(identity)
}

/// A process as the kernel knows it: its PID and the moment it started (clock ticks after boot,
/// `/proc/PID/stat` field 22). The kernel hands a freed PID to the next process that asks (this
/// machine's `pid_max` is 32768, and a build spawns thousands), so a PID alone can name someone
/// else's process; with its start time it names exactly one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProcessId {
    pub pid: i32,
    pub start_ticks: u64,
}

/// What `/proc` says about a process we recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessState {
    Running,
    /// SIGSTOPped (by `cluster pause`).
    Stopped,
    /// Killed or exiting, but not done: some of its threads still run and may hold its sockets.
    Exiting,
    /// Reaped, its PID now someone else's, or a zombie of one thread: every other thread has
    /// ended and with them the process's files and sockets are released.
    Gone,
}

/// The fields of `/proc/PID/stat` that tell how far a process is from gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    /// R, S, D, T, Z, X …
    state: char,
    /// The kernel's `PF_*` task flags of the thread-group leader.
    flags: u64,
    /// Threads still counted in the thread group (`Threads:` in `/proc/PID/status`).
    threads: u64,
    start_ticks: u64,
}

/// `PF_EXITING`: the leader has begun `do_exit` (set at the first moment of a SIGKILL's delivery).
const PF_EXITING: u64 = 0x4;

impl Stat {
    fn read(pid: i32) -> Option<Stat> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        Stat::parse(&text)
    }

    fn parse(text: &str) -> Option<Stat> {
        // The fields follow the parenthesised command name, which may itself hold spaces and ')'.
        let fields: Vec<&str> = text[text.rfind(')')? + 1..].split_whitespace().collect();
        // Field numbers of proc(5) minus 3: state is field 3, flags 9, num_threads 20, starttime 22.
        Some(Stat {
            state: fields.first()?.chars().next()?,
            flags: fields.get(6)?.parse().ok()?,
            threads: fields.get(17)?.parse().ok()?,
            start_ticks: fields.get(19)?.parse().ok()?,
        })
    }

    /// Measured on this machine's kernel (a JVM with 80 threads and a listening socket, SIGKILLed,
    /// /proc sampled every few µs): the leader first shows PF_EXITING in state R with its threads
    /// counting down; its command line reads empty once it has let go of its memory; it becomes a
    /// zombie (Z) while other threads still run — and still hold the listening socket — for
    /// 100–250 ms; the socket is closed before the thread count reaches 1; the zombie of one thread
    /// then waits for its parent (PID 1 here reaps orphans every ~2 s).
    fn state(&self) -> ProcessState {
        match self.state {
            'Z' | 'X' | 'x' if self.threads <= 1 => ProcessState::Gone,
            'Z' | 'X' | 'x' => ProcessState::Exiting,
            _ if self.flags & PF_EXITING != 0 => ProcessState::Exiting,
            'T' | 't' => ProcessState::Stopped,
            _ => ProcessState::Running,
        }
    }
}

impl ProcessId {
    /// The process that has `pid` now, if any.
    pub fn current(pid: i32) -> Option<ProcessId> {
        Stat::read(pid).map(|stat| ProcessId {
            pid,
            start_ticks: stat.start_ticks,
        })
    }

    /// The process that has `pid` now if its command line mentions `marker` (e.g. a node's
    /// directory): how a PID recorded without its start time, or found by a scan, is identified.
    pub fn with_marker(pid: i32, marker: &str) -> Option<ProcessId> {
        let id = ProcessId::current(pid)?;
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        String::from_utf8_lossy(&cmdline)
            .contains(marker)
            .then_some(id)
    }

    pub fn state(&self) -> ProcessState {
        match Stat::read(self.pid) {
            Some(stat) if stat.start_ticks == self.start_ticks => stat.state(),
            _ => ProcessState::Gone,
        }
    }

    pub fn is_gone(&self) -> bool {
        self.state() == ProcessState::Gone
    }

    /// Whether every thread of this process is stopped (state `T` in `/proc/PID/task/*/stat`):
    /// a SIGSTOP takes effect thread by thread, each when the kernel next schedules it, so the
    /// leader alone in `T` does not mean the JVM is frozen. `None` when the process is gone.
    pub fn all_threads_stopped(&self) -> Option<bool> {
        let ours = || Stat::read(self.pid).is_some_and(|s| s.start_ticks == self.start_ticks);
        if !ours() {
            return None;
        }
        let tasks = std::fs::read_dir(format!("/proc/{}/task", self.pid)).ok()?;
        let mut all = true;
        for task in tasks.flatten() {
            // A thread that ended after the listing has no stat any more: it runs no code either.
            let Ok(text) = std::fs::read_to_string(task.path().join("stat")) else {
                continue;
            };
            let state = Stat::parse(&text).map(|s| s.state);
            all &= matches!(state, Some('T'));
        }
        // Read again: the listing above must have been of this process, not of a PID reused meanwhile.
        ours().then_some(all)
    }

    /// Sends SIGSTOP and returns once every thread is stopped, with the moment that was seen (the
    /// process is surely frozen from then until a SIGCONT); fails if the process ends or a thread
    /// does not stop within `limit` (e.g. stuck in the kernel on a hung disk).
    pub fn stop_all_threads(&self, limit: Duration) -> Result<SystemTime> {
        if !self.signal(libc::SIGSTOP) {
            return Err(ClusterError::NotStopped {
                pid: self.pid,
                proc: describe_pid(self.pid),
            });
        }
        let deadline = Instant::now() + limit;
        loop {
            match self.all_threads_stopped() {
                Some(true) => return Ok(SystemTime::now()),
                Some(false) if Instant::now() < deadline => std::thread::sleep(STOP_POLL),
                _ => {
                    return Err(ClusterError::NotStopped {
                        pid: self.pid,
                        proc: describe_threads(self.pid),
                    })
                }
            }
        }
    }

    /// Sends `signal` to exactly this process: through a pidfd, which pins the process it was
    /// opened for, checked against the start time after opening, so a reused PID is never hit.
    /// Returns false when the process is gone.
    pub fn signal(&self, signal: i32) -> bool {
        // SAFETY: pidfd_open(2) takes a PID and flags and returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, self.pid, 0) };
        if fd < 0 {
            return false;
        }
        let fd = fd as i32;
        let ours = Stat::read(self.pid).is_some_and(|stat| stat.start_ticks == self.start_ticks);
        // SAFETY: pidfd_send_signal(2) on the descriptor just opened, with no siginfo; then close(2) it.
        let sent = ours
            && unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    fd,
                    signal,
                    std::ptr::null::<libc::siginfo_t>(),
                    0,
                )
            } == 0;
        unsafe { libc::close(fd) };
        sent
    }
}

/// A node process to end, with the TCP addresses it listens on: CQL, storage, JMX.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopTarget {
    pub process: ProcessId,
    pub ports: Vec<SocketAddrV4>,
}

/// How a node's JVM is ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// SIGTERM (Cassandra drains and exits), SIGKILL after `grace`.
    Terminate { grace: Duration },
    /// SIGKILL at once (a crash, for fault tests).
    Kill,
}

/// How long a SIGKILLed JVM may take to tear down before `end` gives up (it takes 0.1–0.3 s here).
const KILL_WAIT: Duration = Duration::from_secs(30);
const EXIT_POLL: Duration = Duration::from_millis(10);

/// The one way cqlbench ends node processes (`cluster down`, `destroy`, `kill`, a failed start, a
/// campaign's cells, `run`'s embedded node): it returns once every target is [`ProcessState::Gone`]
/// and no socket listens on any of its ports any more, or fails naming the process or port.
pub fn end(targets: &[StopTarget], ending: Ending) -> Result<()> {
    let processes: Vec<ProcessId> = targets.iter().map(|t| t.process).collect();
    if let Ending::Terminate { grace } = ending {
        for process in &processes {
            process.signal(libc::SIGTERM);
            // A paused node only handles SIGTERM once it runs again.
            process.signal(libc::SIGCONT);
        }
        if wait_gone(&processes, grace).is_ok() {
            return wait_ports_free(targets);
        }
    }
    for process in &processes {
        process.signal(libc::SIGKILL);
    }
    wait_gone(&processes, KILL_WAIT).map_err(|stuck| ClusterError::StopFailed {
        pid: stuck.pid,
        proc: describe_pid(stuck.pid),
    })?;
    wait_ports_free(targets)
}

/// Waits until every process is gone; on timeout returns the first that is not.
fn wait_gone(processes: &[ProcessId], limit: Duration) -> std::result::Result<(), ProcessId> {
    let deadline = Instant::now() + limit;
    loop {
        let Some(left) = processes.iter().find(|p| !p.is_gone()) else {
            return Ok(());
        };
        if Instant::now() >= deadline {
            return Err(*left);
        }
        std::thread::sleep(EXIT_POLL);
    }
}

/// A gone process has closed its sockets, so its ports are free at once; a listener that stays
/// is another process's, which the caller must hear about rather than start a node against.
fn wait_ports_free(targets: &[StopTarget]) -> Result<()> {
    const PORT_WAIT: Duration = Duration::from_secs(5);
    let deadline = Instant::now() + PORT_WAIT;
    loop {
        let listening = listening_sockets();
        let busy = targets
            .iter()
            .flat_map(|t| &t.ports)
            .find(|address| listens_on(&listening, **address));
        match busy {
            None => return Ok(()),
            Some(address) if Instant::now() >= deadline => {
                return Err(ClusterError::PortStillBusy {
                    address: address.to_string(),
                })
            }
            Some(_) => std::thread::sleep(EXIT_POLL),
        }
    }
}

/// Local addresses of every listening TCP socket of this network namespace (`/proc/net/tcp` and
/// `tcp6`, where an IPv4 address appears v4-mapped).
pub fn listening_sockets() -> Vec<SocketAddr> {
    let mut sockets = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        sockets.extend(text.lines().skip(1).filter_map(parse_listen_line));
    }
    sockets
}

/// `  0: 0100007F:1F90 00000000:0000 0A …`: the local address of a socket in state LISTEN (0A).
fn parse_listen_line(line: &str) -> Option<SocketAddr> {
    let mut fields = line.split_whitespace();
    let local = fields.nth(1)?;
    if fields.nth(1)? != "0A" {
        return None;
    }
    parse_address(local)
}

/// `0100007F:1F90` as a socket address.
pub fn parse_address(local: &str) -> Option<SocketAddr> {
    let (address, port) = local.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    // The kernel prints each 32-bit word of the address in host (little-endian) order.
    let words: Vec<u32> = (0..address.len() / 8)
        .map(|i| u32::from_str_radix(&address[i * 8..i * 8 + 8], 16))
        .collect::<std::result::Result<_, _>>()
        .ok()?;
    let ip = match words.as_slice() {
        [v4] => IpAddr::V4(Ipv4Addr::from(v4.to_ne_bytes())),
        [a, b, c, d] => {
            let mut bytes = [0u8; 16];
            for (chunk, word) in bytes.chunks_mut(4).zip([a, b, c, d]) {
                chunk.copy_from_slice(&word.to_ne_bytes());
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

/// The TCP sockets bound to `address:port` or to the wildcard address with that port, as
/// `/proc/net/tcp{,6}` lists them: `a LISTEN socket of pid 12 (java)`, `a TIME_WAIT socket`.
pub fn port_holders(address: Ipv4Addr, port: u16) -> Vec<String> {
    let mut holders = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state), Some(inode)) =
                (fields.get(1), fields.get(3), fields.get(9))
            else {
                continue;
            };
            let Some(bound) = parse_address(local) else {
                continue;
            };
            let ip = match bound.ip() {
                IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
                v4 => v4,
            };
            if bound.port() != port || !(ip == IpAddr::V4(address) || ip.is_unspecified()) {
                continue;
            }
            let owner = inode
                .parse::<u64>()
                .ok()
                .filter(|i| *i != 0)
                .and_then(socket_owner)
                .map_or(String::new(), |(pid, name)| {
                    format!(" of pid {pid} ({name})")
                });
            holders.push(format!("a {} socket on {bound}{owner}", tcp_state(state)));
        }
    }
    holders
}

/// The kernel's TCP state codes (`include/net/tcp_states.h`).
fn tcp_state(code: &str) -> &'static str {
    match code {
        "01" => "ESTABLISHED",
        "02" => "SYN_SENT",
        "03" => "SYN_RECV",
        "04" => "FIN_WAIT1",
        "05" => "FIN_WAIT2",
        "06" => "TIME_WAIT",
        "07" => "CLOSE",
        "08" => "CLOSE_WAIT",
        "09" => "LAST_ACK",
        "0A" => "LISTEN",
        "0B" => "CLOSING",
        _ => "unknown-state",
    }
}

/// The process holding socket `inode` open, with its name.
fn socket_owner(inode: u64) -> Option<(i32, String)> {
    let (_, pid) = socket_holders(&[inode]).into_iter().next()?;
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    Some((pid, name.trim().to_string()))
}

/// Every process holding one of the socket `inodes` open, as (inode, pid), in the order found:
/// one walk over the file descriptors of every process this user may read.
pub fn socket_holders(inodes: &[u64]) -> Vec<(u64, i32)> {
    let mut found = Vec::new();
    let Ok(processes) = std::fs::read_dir("/proc") else {
        return found;
    };
    for pid in processes
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
    {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let Ok(target) = std::fs::read_link(fd.path()) else {
                continue;
            };
            let inode = target
                .to_str()
                .and_then(|t| t.strip_prefix("socket:["))
                .and_then(|t| t.strip_suffix(']'))
                .and_then(|t| t.parse::<u64>().ok());
            if let Some(inode) = inode.filter(|i| inodes.contains(i)) {
                found.push((inode, pid));
            }
        }
    }
    found
}

/// Whether a listener takes connections to `address`: bound to it, v4-mapped, or to a wildcard.
pub fn listens_on(listening: &[SocketAddr], address: SocketAddrV4) -> bool {
    listening.iter().any(|socket| {
        socket.port() == address.port()
            && match socket.ip() {
                IpAddr::V4(ip) => ip == *address.ip() || ip.is_unspecified(),
                IpAddr::V6(ip) => ip.is_unspecified() || ip.to_ipv4_mapped() == Some(*address.ip()),
            }
    })
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

/// Whether something already listens on (or holds) `address:port`.
pub fn port_in_use(address: std::net::Ipv4Addr, port: u16) -> bool {
    std::net::TcpListener::bind((address, port)).is_err()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn sleeper(dir: &Path, seconds: &str) -> ProcessId {
        spawn(
            Path::new("/bin/sleep"),
            &[seconds.to_string()],
            dir,
            &dir.join("out.log"),
        )
        .unwrap()
    }

    #[test]
    fn own_process_is_identified_by_start_time_and_marker() {
        let pid = std::process::id() as i32;
        let own = ProcessId::current(pid).unwrap();
        assert_eq!(own.state(), ProcessState::Running);
        let exe = std::env::current_exe().unwrap();
        assert_eq!(
            ProcessId::with_marker(pid, &exe.to_string_lossy()),
            Some(own)
        );
        assert_eq!(ProcessId::with_marker(pid, "/no/such/node/dir"), None);
        // The same PID with another start time is another process: gone, and never signalled.
        let earlier = ProcessId {
            pid,
            start_ticks: own.start_ticks.wrapping_sub(1),
        };
        assert_eq!(earlier.state(), ProcessState::Gone);
        assert!(!earlier.signal(0));
        assert!(own.signal(0));
        assert_eq!(ProcessId::current(i32::MAX - 1), None);
    }

    #[test]
    fn stat_lines_read_as_the_kernel_writes_them() {
        // A command name with spaces and a ')' of its own; flags with PF_EXITING; 2 threads.
        let line =
            "4242 (java) x (y)) R 1 4242 4242 0 -1 4194308 10 0 0 0 5 6 0 0 20 0 2 0 987654 1 2 3";
        let stat = Stat::parse(line).unwrap();
        assert_eq!(
            stat,
            Stat {
                state: 'R',
                flags: 4194308,
                threads: 2,
                start_ticks: 987654
            }
        );
        assert_eq!(stat.state(), ProcessState::Exiting);
        let zombie = |threads| Stat {
            state: 'Z',
            flags: PF_EXITING,
            threads,
            start_ticks: 1,
        };
        assert_eq!(zombie(3).state(), ProcessState::Exiting);
        assert_eq!(zombie(1).state(), ProcessState::Gone);
        let running = Stat {
            state: 'S',
            flags: 0,
            threads: 80,
            start_ticks: 1,
        };
        assert_eq!(running.state(), ProcessState::Running);
        assert_eq!(
            Stat {
                state: 'T',
                ..running
            }
            .state(),
            ProcessState::Stopped
        );
        assert_eq!(Stat::parse("12 (cut"), None);
    }

    #[test]
    fn listening_sockets_are_read_from_proc() {
        let v4 = "   0: 010D007F:9CBB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0";
        assert_eq!(
            parse_listen_line(v4),
            Some("127.0.13.1:40123".parse().unwrap())
        );
        let established = v4.replace(" 0A ", " 01 ");
        assert_eq!(parse_listen_line(&established), None);
        let mapped = "   1: 0000000000000000FFFF0000010D007F:1F90 00000000000000000000000000000000:0000 0A 0 0 0";
        assert_eq!(
            parse_listen_line(mapped),
            Some("[::ffff:127.0.13.1]:8080".parse().unwrap())
        );
        let listener = std::net::TcpListener::bind(("127.0.13.250", 0)).unwrap();
        let SocketAddr::V4(address) = listener.local_addr().unwrap() else {
            unreachable!()
        };
        assert!(listens_on(&listening_sockets(), address));
        // Who holds a port in use is named: here, this very test.
        let holders = port_holders(*address.ip(), address.port());
        let own = format!("a LISTEN socket on {address} of pid {}", std::process::id());
        assert!(holders.iter().any(|h| h.starts_with(&own)), "{holders:?}");
        drop(listener);
        assert!(!listens_on(&listening_sockets(), address));
        let wildcard = [SocketAddr::from(([0, 0, 0, 0], 7000))];
        assert!(listens_on(&wildcard, "127.0.13.9:7000".parse().unwrap()));
        assert!(!listens_on(&wildcard, "127.0.13.9:7001".parse().unwrap()));
    }

    #[test]
    fn end_terminates_stopped_processes_and_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let process = sleeper(dir.path(), "300");
        assert_eq!(process.state(), ProcessState::Running);
        process.signal(libc::SIGSTOP);
        let deadline = Instant::now() + Duration::from_secs(5);
        while process.state() != ProcessState::Stopped {
            assert!(Instant::now() < deadline, "{}", describe_pid(process.pid));
            std::thread::sleep(Duration::from_millis(5));
        }
        let target = StopTarget {
            process,
            ports: Vec::new(),
        };
        end(
            &[target],
            Ending::Terminate {
                grace: Duration::from_secs(5),
            },
        )
        .unwrap();
        assert!(process.is_gone());
        assert_eq!(
            wait_exit_description(&process, Duration::from_secs(5)).as_deref(),
            Some("killed by signal 15")
        );
    }

    #[test]
    fn a_node_keeps_no_descriptor_of_its_caller() {
        let dir = tempfile::tempdir().unwrap();
        let held = dir.path().join("lock");
        let file = File::create(&held).unwrap();
        // dup(2) gives a descriptor without close-on-exec, as a caller's `flock 3>lock` would.
        // SAFETY: dup of a descriptor this test owns; closed below.
        let inherited = unsafe { libc::dup(std::os::fd::AsRawFd::as_raw_fd(&file)) };
        assert!(inherited >= 3);
        let process = sleeper(dir.path(), "300");
        // Once the child has exec'd (its command line is there), its descriptors are final.
        let deadline = Instant::now() + Duration::from_secs(5);
        while std::fs::read(format!("/proc/{}/cmdline", process.pid)).map_or(true, |c| c.is_empty())
        {
            assert!(Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(1));
        }
        let open: Vec<PathBuf> = std::fs::read_dir(format!("/proc/{}/fd", process.pid))
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .collect();
        // SAFETY: the descriptor dup'ed above.
        unsafe { libc::close(inherited) };
        let target = StopTarget {
            process,
            ports: Vec::new(),
        };
        end(&[target], Ending::Kill).unwrap();
        assert!(
            !open.contains(&held),
            "the node inherited {held:?}: {open:?}"
        );
    }

    #[test]
    fn a_spawned_process_is_recognised_at_once() {
        // Identity is the start time, which exec does not change: a child read before its exec
        // (its command line still empty) is the same process.
        let dir = tempfile::tempdir().unwrap();
        let spawned: Vec<ProcessId> = (0..60).map(|_| sleeper(dir.path(), "271828")).collect();
        let states: Vec<ProcessState> = spawned.iter().map(ProcessId::state).collect();
        let targets: Vec<StopTarget> = spawned
            .iter()
            .map(|&process| StopTarget {
                process,
                ports: Vec::new(),
            })
            .collect();
        end(&targets, Ending::Kill).unwrap();
        assert!(spawned.iter().all(ProcessId::is_gone));
        let missed: Vec<_> = states
            .iter()
            .filter(|state| **state != ProcessState::Running)
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
        let process = spawn(
            Path::new("/usr/bin/tail"),
            &["-f".to_string(), marker.display().to_string()],
            dir.path(),
            &dir.path().join("out.log"),
        )
        .unwrap();
        let cluster_marker = format!("{}/node", dir.path().display());
        // tail may not have exec'd yet: its command line is there once it has.
        let deadline = Instant::now() + Duration::from_secs(5);
        while find_by_marker(&cluster_marker).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(find_by_marker(&cluster_marker), vec![process]);
        assert!(find_by_marker("/no/such/cluster/node").is_empty());
        let target = StopTarget {
            process,
            ports: Vec::new(),
        };
        end(&[target], Ending::Kill).unwrap();
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
