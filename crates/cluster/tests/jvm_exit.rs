//! `process::end` against real JVMs shaped like a node (a listening socket, 60 busy threads), with
//! busy processes beside them: at the instant `end` returns, the JVM is gone or a zombie of one
//! thread, and its port is free — every time. The JVMs listen on 127.0.13.2.

use std::net::{Ipv4Addr, SocketAddrV4, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cqlbench_cluster::process::{self, Ending, ProcessId, ProcessState, StopTarget};

const ADDRESS: Ipv4Addr = Ipv4Addr::new(127, 0, 13, 2);

fn java() -> PathBuf {
    let from_home = std::env::var_os("JAVA_HOME").map(|home| Path::new(&home).join("bin/java"));
    from_home
        .filter(|java| java.is_file())
        .unwrap_or_else(|| PathBuf::from("java"))
}

/// Busy loops on every core, killed when dropped.
struct Busy(Vec<Child>);

impl Busy {
    fn start() -> Busy {
        Busy(
            (0..2)
                .map(|_| {
                    Command::new("sh")
                        .args(["-c", "while :; do :; done"])
                        .stdin(Stdio::null())
                        .spawn()
                        .expect("sh runs")
                })
                .collect(),
        )
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

/// Ends the JVM if the test fails before `end` did.
struct Holder(ProcessId);

impl Drop for Holder {
    fn drop(&mut self) {
        if !self.0.is_gone() {
            let target = StopTarget {
                process: self.0,
                ports: Vec::new(),
            };
            let _ = process::end(&[target], Ending::Kill);
        }
    }
}

/// Starts a HoldPort JVM on a port the kernel picks when the JVM binds it (one chosen earlier and
/// released could be taken by another process meanwhile), and returns it with that address.
fn start_holder(dir: &Path, round: usize) -> (Holder, SocketAddrV4) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/HoldPort.java");
    let log = dir.join(format!("holder-{round}.log"));
    let args = [
        "-Xmx64m".to_string(),
        "-Djava.net.preferIPv4Stack=true".to_string(),
        fixture.display().to_string(),
        ADDRESS.to_string(),
        "0".to_string(),
    ];
    let holder = Holder(process::spawn(&java(), &args, dir, &log).expect("java starts"));
    let process = holder.0;
    let deadline = Instant::now() + Duration::from_secs(120);
    let port = loop {
        // Only whole lines: the JVM may be writing this one right now.
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let complete = &text[..text.rfind('\n').map_or(0, |i| i + 1)];
        if let Some(port) = complete
            .lines()
            .find_map(|l| l.strip_prefix("listening on "))
        {
            break port.parse::<u16>().expect("a port number");
        }
        assert!(Instant::now() < deadline, "the JVM never listened: {text}");
        assert_ne!(process.state(), ProcessState::Gone, "the JVM died: {text}");
        std::thread::sleep(Duration::from_millis(20));
    };
    let address = SocketAddrV4::new(ADDRESS, port);
    assert!(
        process::listens_on(&process::listening_sockets(), address),
        "the JVM says it listens on {address}"
    );
    (holder, address)
}

/// The state letter of every thread of `pid`, read from /proc apart from the product's reader.
fn thread_states(pid: i32) -> Vec<char> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("stat")).ok())
        .filter_map(|stat| {
            let after = &stat[stat.rfind(')')? + 1..];
            after.split_whitespace().next()?.chars().next()
        })
        .collect()
}

#[test]
fn a_killed_or_stopped_jvm_is_gone_with_its_port_free_when_end_returns() {
    let dir = tempfile::tempdir().unwrap();
    let _busy = Busy::start();
    for round in 0..16 {
        let (holder, address) = start_holder(dir.path(), round);
        let process = holder.0;
        let ending = if round % 3 == 2 {
            Ending::Terminate {
                grace: Duration::from_secs(10),
            }
        } else {
            Ending::Kill
        };
        // Half the rounds without the port: the process condition alone must free it.
        let ports = if round % 2 == 0 {
            vec![address]
        } else {
            Vec::new()
        };
        let target = StopTarget { process, ports };
        process::end(&[target], ending).expect("end returns Ok");
        // The instant `end` returns: no thread of the JVM but a zombie leader, and the port free.
        let proc_view = process::describe_pid(process.pid);
        assert_eq!(
            process.state(),
            ProcessState::Gone,
            "round {round}: {proc_view}"
        );
        assert!(
            proc_view.starts_with("no entry")
                || proc_view.contains("state Z, 1 thread(s)")
                || ProcessId::current(process.pid) != Some(process),
            "round {round}: {proc_view}"
        );
        assert!(
            !process::listens_on(&process::listening_sockets(), address),
            "round {round}: {address} still listened on ({proc_view})"
        );
        TcpListener::bind(address)
            .unwrap_or_else(|e| panic!("round {round}: {address} not bindable: {e}"));
    }
}

#[test]
fn a_stopped_jvm_has_every_thread_stopped_when_stop_returns() {
    let dir = tempfile::tempdir().unwrap();
    let _busy = Busy::start();
    let (holder, _) = start_holder(dir.path(), 0);
    let process = holder.0;
    for round in 0..20 {
        process
            .stop_all_threads(Duration::from_secs(30))
            .expect("stop returns Ok");
        let states = thread_states(process.pid);
        assert!(
            states.len() > 60 && states.iter().all(|s| *s == 'T'),
            "round {round}: threads not all stopped: {states:?}"
        );
        assert!(process.signal(libc::SIGCONT));
        // Running again: the busy threads leave the stopped state.
        let deadline = Instant::now() + Duration::from_secs(30);
        while thread_states(process.pid).iter().all(|s| *s == 'T') {
            assert!(Instant::now() < deadline, "round {round}: never resumed");
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
