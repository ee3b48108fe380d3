//! The sampling thread: one reading of `/proc` a second, kept as per-interval figures (a few hundred
//! bytes each, so a long run stays small).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cqlbench_results::{Evidence, EvidenceSecond, NodeProcess, ProcessCpu};

use crate::accounting::{self, Debts, Scan};
use crate::procfs::{self, MachineCpu};

const SAMPLE_EVERY: Duration = Duration::from_secs(1);
/// Processes named per interval (the window's top ones are summed from these).
const TOP_PER_INTERVAL: usize = 8;
/// Processes named in the evidence.
const TOP_IN_EVIDENCE: usize = 5;

/// One reading: the machine's counters and every process's.
#[derive(Debug, Clone)]
struct Reading {
    at: Instant,
    machine: MachineCpu,
    processes: Scan,
    available_mb: f64,
    swap_pages: u64,
}

/// What happened between two readings.
#[derive(Debug, Clone)]
struct Interval {
    end: Instant,
    seconds: f64,
    /// Shares of all cores.
    other: f64,
    steal: f64,
    iowait: f64,
    client_cores: f64,
    node_cores: Vec<f64>,
    available_mb: f64,
    swap_pages_per_s: f64,
    /// The other processes that used the most CPU (pid, name, seconds).
    top: Vec<(i32, String, f64)>,
}

struct Shared {
    intervals: Vec<Interval>,
}

/// Samples the machine until [`Sampler::finish`].
pub struct Sampler {
    nodes: Vec<(SocketAddr, i32)>,
    cores: u32,
    busy_from: f64,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    shared: Arc<Mutex<Shared>>,
}

struct State {
    ticks_per_s: f64,
    cores: u32,
    client_pid: i32,
    node_pids: Vec<i32>,
    last: Option<Reading>,
    debts: Debts,
}

impl State {
    fn read(&self) -> Option<Reading> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let vmstat = std::fs::read_to_string("/proc/vmstat").unwrap_or_default();
        Some(Reading {
            at: Instant::now(),
            machine: procfs::parse_machine_cpu(&stat)?,
            processes: procfs::processes()
                .into_iter()
                .map(|p| (p.pid, p))
                .collect(),
            available_mb: procfs::parse_available_mb(&meminfo).unwrap_or(0.0),
            swap_pages: procfs::parse_swap_pages(&vmstat).unwrap_or(0),
        })
    }

    /// Takes a reading and, from the second on, returns the interval since the one before.
    fn step(&mut self) -> Option<Interval> {
        let now = self.read()?;
        let last = self.last.replace(now.clone())?;
        let seconds = now.at.saturating_duration_since(last.at).as_secs_f64();
        let ticks_per_s = self.ticks_per_s;
        let cores_of = |ticks: u64| ticks as f64 / ticks_per_s / seconds.max(1e-3);
        let (client_pid, node_pids) = (self.client_pid, &self.node_pids);
        let usage = accounting::usage(&last.processes, &now.processes, &mut self.debts, |pid| {
            pid == client_pid || node_pids.contains(&pid)
        });
        let own = |pid: &i32| usage.own.get(pid).copied().unwrap_or(0);
        // Steal and iowait are the machine's alone: shares of its own tick totals.
        let total = now.machine.total.saturating_sub(last.machine.total).max(1) as f64;
        let share = |a: u64, b: u64| a.saturating_sub(b) as f64 / total;
        Some(Interval {
            end: now.at,
            seconds,
            other: cores_of(usage.other) / f64::from(self.cores),
            steal: share(now.machine.steal, last.machine.steal),
            iowait: share(now.machine.iowait, last.machine.iowait),
            client_cores: cores_of(own(&client_pid)),
            node_cores: node_pids.iter().map(|pid| cores_of(own(pid))).collect(),
            available_mb: now.available_mb,
            swap_pages_per_s: now.swap_pages.saturating_sub(last.swap_pages) as f64
                / seconds.max(1e-3),
            top: usage
                .by_process
                .into_iter()
                .take(TOP_PER_INTERVAL)
                .map(|(pid, name, ticks)| (pid, name, ticks as f64 / ticks_per_s))
                .collect(),
        })
    }
}

impl Sampler {
    /// Starts sampling. The processes listening on `node_addrs` are the cluster's nodes; an interval
    /// in which other processes use `busy_from` of all cores or more is busy.
    pub fn start(node_addrs: &[SocketAddr], busy_from: f64) -> Sampler {
        let nodes = procfs::pids_listening_on(node_addrs);
        let cores = crate::facts::cores() as u32;
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Mutex::new(Shared {
            intervals: Vec::new(),
        }));
        let mut state = State {
            ticks_per_s: procfs::clock_ticks_per_s(),
            cores,
            client_pid: std::process::id() as i32,
            node_pids: nodes.iter().map(|(_, pid)| *pid).collect(),
            last: None,
            debts: Debts::default(),
        };
        let (stop_flag, store) = (stop.clone(), shared.clone());
        let thread = std::thread::Builder::new()
            .name("cqlbench-machine".into())
            .spawn(move || {
                while !stop_flag.load(Ordering::Relaxed) {
                    if let Some(interval) = state.step() {
                        if let Ok(mut store) = store.lock() {
                            store.intervals.push(interval);
                        }
                    }
                    std::thread::park_timeout(SAMPLE_EVERY);
                }
                // One last reading at the stop, so that the window's end is covered.
                if let Some(interval) = state.step() {
                    if let Ok(mut store) = store.lock() {
                        store.intervals.push(interval);
                    }
                }
            })
            .ok();
        Sampler {
            nodes,
            cores,
            busy_from,
            stop,
            thread,
            shared,
        }
    }

    /// Stops sampling; the evidence of the intervals that lie (mostly) in `from..to`, with times
    /// counted from `from`.
    pub fn finish(mut self, from: Instant, to: Instant) -> Evidence {
        self.stop_thread();
        let intervals = self
            .shared
            .lock()
            .map(|mut s| std::mem::take(&mut s.intervals))
            .unwrap_or_default();
        let inside: Vec<&Interval> = intervals
            .iter()
            .filter(|i| {
                let middle = i.end - Duration::from_secs_f64(i.seconds / 2.0);
                middle >= from && middle <= to
            })
            .collect();
        evidence(&inside, &self.nodes, self.cores, from, self.busy_from)
    }
}

impl Sampler {
    /// Wakes the thread to take its last reading, and waits for it.
    fn stop_thread(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

fn mean(intervals: &[&Interval], value: impl Fn(&Interval) -> f64) -> f64 {
    let seconds: f64 = intervals.iter().map(|i| i.seconds).sum();
    if seconds <= 0.0 {
        return 0.0;
    }
    intervals.iter().map(|i| value(i) * i.seconds).sum::<f64>() / seconds
}

fn round(value: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    // + 0.0: an empty sum is -0.0, which would print as such.
    (value * scale).round() / scale + 0.0
}

fn evidence(
    inside: &[&Interval],
    nodes: &[(SocketAddr, i32)],
    cores: u32,
    from: Instant,
    busy_from: f64,
) -> Evidence {
    let mut top: HashMap<(i32, String), f64> = HashMap::new();
    for interval in inside {
        for (pid, name, cpu_s) in &interval.top {
            *top.entry((*pid, name.clone())).or_default() += cpu_s;
        }
    }
    let mut top: Vec<ProcessCpu> = top
        .into_iter()
        .map(|((pid, name), cpu_s)| ProcessCpu {
            pid,
            name,
            cpu_s: round(cpu_s, 2),
        })
        .collect();
    top.sort_by(|a, b| b.cpu_s.total_cmp(&a.cpu_s));
    top.truncate(TOP_IN_EVIDENCE);
    let node_cpu = |n: usize| -> f64 {
        inside
            .iter()
            .map(|i| i.node_cores.get(n).copied().unwrap_or(0.0) * i.seconds)
            .sum()
    };
    Evidence {
        seconds: round(inside.iter().map(|i| i.seconds).sum(), 3),
        cores,
        busy_seconds: round(
            inside
                .iter()
                .filter(|i| i.other >= busy_from)
                .map(|i| i.seconds)
                .sum(),
            3,
        ),
        other_cpu: round(mean(inside, |i| i.other), 4),
        steal: round(mean(inside, |i| i.steal), 4),
        iowait: round(mean(inside, |i| i.iowait), 4),
        client_cpu_cores: round(mean(inside, |i| i.client_cores), 4),
        swap_pages_per_s: round(mean(inside, |i| i.swap_pages_per_s), 2),
        min_available_mb: inside
            .iter()
            .map(|i| round(i.available_mb, 1))
            .reduce(f64::min)
            .unwrap_or(0.0),
        top_other: top,
        nodes: nodes
            .iter()
            .enumerate()
            .map(|(n, (addr, pid))| NodeProcess {
                address: addr.to_string(),
                pid: *pid,
                cpu_s: round(node_cpu(n), 2),
            })
            .collect(),
        per_second: inside
            .iter()
            .map(|i| EvidenceSecond {
                t: round(i.end.saturating_duration_since(from).as_secs_f64(), 3),
                other_cpu: round(i.other, 4),
                steal: round(i.steal, 4),
                iowait: round(i.iowait, 4),
                client_cpu_cores: round(i.client_cores, 4),
                available_mb: round(i.available_mb, 1),
                swap_pages_per_s: round(i.swap_pages_per_s, 2),
                node_cpu_cores: i.node_cores.iter().map(|c| round(*c, 4)).collect(),
            })
            .collect(),
    }
}
