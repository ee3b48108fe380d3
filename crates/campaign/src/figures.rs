//! Server-side figures of one cell, per node, over exactly the cell's measured window: the GC log
//! lines of the window and their analysis, process CPU per successful operation, the GC threads'
//! share of that CPU, and write amplification (compacted bytes / flushed bytes).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use cqlbench_cluster::NodeState;
use cqlbench_results::{GcAnalysis, NodeFigures, ResultsError, Window};
use cqlbench_units::time::{parse_iso8601, unix_now};

// ---- CPU from /proc ----

/// Names (`/proc/<pid>/task/*/comm`, at most 15 bytes) of HotSpot's collector threads: parallel
/// workers (`GC Thread#N`; JDK 8's `Gang worker#N (Parallel GC Threads)`), G1's refinement and
/// marking threads, Shenandoah's and ZGC's workers and drivers, CMS's threads (JDK 8's
/// `Concurrent Mark-Sweep GC Thread`). The `VM Thread`, which runs safepoint operations, is counted apart.
const GC_THREAD_PREFIXES: &[&str] = &[
    "GC Thread",
    "G1 ",
    "Shenandoah",
    "ZWorker",
    "ZDirector",
    "ZDriver",
    "ZStat",
    "ZUncommit",
    "ZUnmapper",
    "ZRelocat",
    "CMS ",
    "Conc#",
    "Gang worker",
    "Concurrent Mark",
];

/// One reading of a JVM's CPU, in seconds.
#[derive(Debug, Clone, Copy, Default)]
struct CpuReading {
    at_unix_s: f64,
    process_s: f64,
    gc_threads_s: f64,
    vm_thread_s: f64,
}

/// utime + stime (fields 14 and 15) of a `/proc/.../stat` file, in clock ticks.
fn stat_ticks(path: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    // The command name (field 2) may contain spaces; the fields after its closing parenthesis don't.
    let after = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // `after` starts at field 3, so fields 14 and 15 are at 11 and 12.
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

fn read_cpu(pid: i32, ticks_per_s: f64) -> Option<CpuReading> {
    let proc_dir = Path::new("/proc").join(pid.to_string());
    let process = stat_ticks(&proc_dir.join("stat"))?;
    let (mut gc, mut vm) = (0u64, 0u64);
    for task in std::fs::read_dir(proc_dir.join("task")).ok()?.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        let comm = comm.trim_end();
        let is_gc = GC_THREAD_PREFIXES.iter().any(|p| comm.starts_with(p));
        if !is_gc && comm != "VM Thread" {
            continue;
        }
        let ticks = stat_ticks(&task.path().join("stat")).unwrap_or(0);
        if is_gc {
            gc += ticks;
        } else {
            vm += ticks;
        }
    }
    Some(CpuReading {
        at_unix_s: unix_now(),
        process_s: process as f64 / ticks_per_s,
        gc_threads_s: gc as f64 / ticks_per_s,
        vm_thread_s: vm as f64 / ticks_per_s,
    })
}

/// Reads every node's CPU once a second on its own thread, so that the window's CPU can be
/// interpolated at the measured phase's exact edges (which only the load knows, afterwards).
pub struct CpuSampler {
    pids: Vec<i32>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    samples: Arc<Mutex<Vec<Vec<CpuReading>>>>,
}

const SAMPLE_EVERY: Duration = Duration::from_secs(1);

impl CpuSampler {
    pub fn start(pids: Vec<i32>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let samples = Arc::new(Mutex::new(vec![Vec::new(); pids.len()]));
        let (stop_flag, store, sampled) = (stop.clone(), samples.clone(), pids.clone());
        let thread = std::thread::spawn(move || {
            let ticks = cqlbench_machine::clock_ticks_per_s();
            loop {
                let readings: Vec<Option<CpuReading>> =
                    sampled.iter().map(|pid| read_cpu(*pid, ticks)).collect();
                if let Ok(mut store) = store.lock() {
                    for (node, reading) in readings.into_iter().enumerate() {
                        store[node].extend(reading);
                    }
                }
                if stop_flag.load(Ordering::Relaxed) {
                    break;
                }
                // Sleep in short steps so that stopping is quick.
                let until = std::time::Instant::now() + SAMPLE_EVERY;
                while std::time::Instant::now() < until && !stop_flag.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        });
        Self {
            pids,
            stop,
            thread: Some(thread),
            samples,
        }
    }

    /// Stops sampling and returns each node's CPU over `window`, which has ended: a reading taken
    /// here, after the thread's last, is after the window's end, so its end is interpolated, never
    /// missing (the thread's own last reading may have begun just before the window ended).
    pub fn finish(mut self, window: Window) -> Vec<Option<NodeCpu>> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let mut samples = self.samples.lock().map(|s| s.clone()).unwrap_or_default();
        let ticks = cqlbench_machine::clock_ticks_per_s();
        for (node, pid) in samples.iter_mut().zip(&self.pids) {
            node.extend(read_cpu(*pid, ticks));
        }
        samples.iter().map(|node| cpu_over(node, window)).collect()
    }
}

impl Drop for CpuSampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// CPU seconds of one node over a window.
#[derive(Debug, Clone, Copy)]
pub struct NodeCpu {
    pub process_s: f64,
    pub gc_threads_s: f64,
    pub vm_thread_s: f64,
}

/// Linear interpolation of the cumulative counters at the window's edges.
fn cpu_over(samples: &[CpuReading], window: Window) -> Option<NodeCpu> {
    let at = |t: f64| -> Option<CpuReading> {
        let after = samples.iter().position(|s| s.at_unix_s >= t)?;
        if after == 0 {
            return Some(samples[0]);
        }
        let (a, b) = (samples[after - 1], samples[after]);
        let f = (t - a.at_unix_s) / (b.at_unix_s - a.at_unix_s).max(1e-9);
        let lerp = |x: f64, y: f64| x + (y - x) * f;
        Some(CpuReading {
            at_unix_s: t,
            process_s: lerp(a.process_s, b.process_s),
            gc_threads_s: lerp(a.gc_threads_s, b.gc_threads_s),
            vm_thread_s: lerp(a.vm_thread_s, b.vm_thread_s),
        })
    };
    let (start, end) = (at(window.start_unix_s)?, at(window.end_unix_s)?);
    Some(NodeCpu {
        process_s: end.process_s - start.process_s,
        gc_threads_s: end.gc_threads_s - start.gc_threads_s,
        vm_thread_s: end.vm_thread_s - start.vm_thread_s,
    })
}

// ---- GC log of the window ----

/// The wall-clock decorator of a unified log line, `[2026-11-22T12:27:25.726+0000]`, in seconds
/// since the epoch.
pub fn unified_line_time(line: &str) -> Option<f64> {
    let stamp = line.strip_prefix('[')?.split(']').next()?;
    Some(parse_iso8601(stamp.replace(',', ".").as_bytes())? as f64 / 1e9)
}

/// The lines of the node's GC log (every rotated part) whose events fall within the window: unified
/// lines by their stamp (written when the event ends), JDK 8 records whole (see
/// [`cqlbench_gclog::lines_in_window`]).
pub fn gc_lines_in(gc_log: &Path, window: Window) -> String {
    let mut out = String::new();
    let parts = cqlbench_gclog::rotated_parts(gc_log).unwrap_or_default();
    let ns = |s: f64| (s * 1e9).round() as i64;
    // An unreadable part leaves what was read: the analysis then says what it saw.
    let _ = cqlbench_gclog::lines_in_window(
        &parts,
        ns(window.start_unix_s),
        ns(window.end_unix_s),
        &mut out,
    );
    out
}

/// Keeps a node's GC log of one cell's window in `dir`: `gc.log` (the window's lines), their analysis
/// (`gc-analysis.json`, `null` without lines) and `timeline.csv` (every pause and safepoint with its
/// wall-clock start and end: what the client's slow operations are lined up against). Returns the
/// number of lines; what could not be analysed is said in `notes`.
pub fn keep_gc_window(
    gc_log: &Path,
    window: Window,
    dir: &Path,
    notes: &mut Vec<String>,
) -> Result<usize, ResultsError> {
    std::fs::create_dir_all(dir).map_err(|source| ResultsError::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    let lines = gc_lines_in(gc_log, window);
    let gc_path = dir.join("gc.log");
    let write_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ResultsError::Write { path, source }
    };
    std::fs::write(&gc_path, &lines).map_err(write_error(&gc_path))?;
    let mut analysis = GcAnalysis::default();
    if lines.is_empty() {
        notes.push(cqlbench_results::NO_GC_LINES_NOTE.to_string());
    } else {
        let mut timeline = Vec::new();
        let inputs = [cqlbench_gclog::Input::from_arg(&gc_path)];
        match cqlbench_gclog::analyze(&inputs, Some(&mut timeline), &mut |_| {}) {
            Ok(report) => {
                let path = dir.join(cqlbench_results::timeline::TIMELINE_FILE);
                std::fs::write(&path, &timeline).map_err(write_error(&path))?;
                analysis.report = Some(report);
            }
            Err(e) => notes.push(format!("{}{e}", cqlbench_results::GC_ANALYSIS_FAILED_NOTE)),
        }
    }
    analysis.write(dir)?;
    Ok(lines.lines().count())
}

// ---- write amplification ----

/// A `system.log` line's time, `INFO  [thread] 2026-11-22 13:47:33,399 File.java:…` (the node logs
/// in UTC here: its JVM runs without a TZ of its own on a UTC machine).
fn system_log_time(line: &str) -> Option<f64> {
    let after_thread = &line[line.find("] ")? + 2..];
    let mut words = after_thread.split_whitespace();
    let (date, clock) = (words.next()?, words.next()?);
    let stamp = format!("{date}T{}", clock.replace(',', "."));
    Some(parse_iso8601(stamp.as_bytes())? as f64 / 1e9)
}

/// `(6.292MiB)` → bytes.
fn parse_size_in_parens(text: &str) -> Option<f64> {
    let inner = text.strip_prefix('(')?.strip_suffix(')')?;
    let units = [
        ("KiB", 1024.0),
        ("MiB", 1024.0 * 1024.0),
        ("GiB", 1024.0 * 1024.0 * 1024.0),
        ("TiB", 1024.0f64.powi(4)),
        ("B", 1.0),
    ];
    units.iter().find_map(|(unit, factor)| {
        inner
            .strip_suffix(unit)
            .and_then(|n| n.parse::<f64>().ok())
            .map(|n| n * factor)
    })
}

/// Bytes flushed to the keyspace's tables within the window, from the node's `Completed flushing
/// <dir>/<keyspace>/<table>-<id>/…-Data.db (6.292MiB)` lines.
pub fn flushed_bytes(system_log: &Path, keyspace: &str, window: Window) -> f64 {
    let Ok(text) = std::fs::read_to_string(system_log) else {
        return 0.0;
    };
    let in_keyspace = format!("/{keyspace}/");
    text.lines()
        .filter(|line| line.contains("Completed flushing") && line.contains(&in_keyspace))
        .filter(|line| system_log_time(line).is_some_and(|t| window.contains(t)))
        .filter_map(|line| {
            let size = line
                .split_whitespace()
                .find(|w| w.starts_with('(') && w.ends_with(')'))?;
            parse_size_in_parens(size)
        })
        .fold(0.0, |total, bytes| total + bytes)
}

/// Bytes written by compactions of the keyspace's tables that finished within the window, from the
/// node's `system.compaction_history`.
pub fn compacted_bytes(address: SocketAddr, keyspace: &str, window: Window) -> Result<f64, String> {
    let rows = cqlbench_cluster::cql::query_node(
        address,
        Duration::from_secs(10),
        "SELECT keyspace_name, compacted_at, bytes_out FROM system.compaction_history",
    )
    .map_err(|e| e.to_string())?;
    let mut total = 0.0;
    for row in rows
        .rows::<(
            Option<String>,
            Option<scylla::value::CqlTimestamp>,
            Option<i64>,
        )>()
        .map_err(|e| e.to_string())?
    {
        let (ks, at, bytes) = row.map_err(|e| e.to_string())?;
        let at_s = at.map_or(0.0, |t| t.0 as f64 / 1000.0);
        if ks.as_deref() == Some(keyspace) && window.contains(at_s) {
            total += bytes.unwrap_or(0) as f64;
        }
    }
    Ok(total)
}

/// Collects one node's figures and writes `gc.log` (the window's lines), `gc-analysis.json`,
/// `timeline.csv` and `figures.json` into `dir`.
pub fn collect_node(
    node: &NodeState,
    keyspace: &str,
    window: Window,
    cpu: Option<NodeCpu>,
    successful_ops: u64,
    dir: &Path,
) -> Result<NodeFigures, ResultsError> {
    let mut notes = Vec::new();
    let gc_log_lines = keep_gc_window(&node.gc_log, window, dir, &mut notes)?;
    let flushed = flushed_bytes(&node.system_log, keyspace, window);
    let compacted = match compacted_bytes(node.cql_address(), keyspace, window) {
        Ok(bytes) => Some(bytes),
        Err(e) => {
            notes.push(format!("compaction history unreadable: {e}"));
            None
        }
    };
    if cpu.is_none() {
        notes.push("no CPU readings of the process over the window".to_string());
    }
    let figures = NodeFigures {
        version: cqlbench_results::FORMAT_VERSION,
        node: node.index,
        address: node.address.to_string(),
        pid: node.pid,
        collector: node.effective_collector.clone(),
        window,
        process_cpu_s: cpu.map(|c| c.process_s),
        cpu_ms_per_op: cpu
            .filter(|_| successful_ops > 0)
            .map(|c| c.process_s * 1000.0 / successful_ops as f64),
        gc_threads_cpu_s: cpu.map(|c| c.gc_threads_s),
        gc_threads_cpu_share: cpu
            .filter(|c| c.process_s > 0.0)
            .map(|c| c.gc_threads_s / c.process_s),
        vm_thread_cpu_s: cpu.map(|c| c.vm_thread_s),
        gc_log_lines,
        flushed_bytes: flushed,
        compacted_bytes: compacted,
        write_amplification: compacted.filter(|_| flushed > 0.0).map(|c| c / flushed),
        notes,
    };
    figures.write(dir)?;
    Ok(figures)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finish_reads_once_more_so_a_window_that_just_ended_has_its_cpu() {
        // The sampling thread's last reading came before the window ended (here: it took only one,
        // and has stopped); `finish` must not report the window's CPU as missing for want of a
        // reading after its end.
        let pid = std::process::id() as i32;
        let before =
            read_cpu(pid, cqlbench_machine::clock_ticks_per_s()).expect("this process's /proc");
        let busy_until = std::time::Instant::now() + Duration::from_millis(30);
        while std::time::Instant::now() < busy_until {
            std::hint::black_box(0u64);
        }
        let window = Window {
            start_unix_s: before.at_unix_s,
            end_unix_s: unix_now(),
        };
        let sampler = CpuSampler {
            pids: vec![pid],
            stop: Arc::new(AtomicBool::new(true)),
            thread: None,
            samples: Arc::new(Mutex::new(vec![vec![before]])),
        };
        let cpu = sampler.finish(window)[0].expect("the window's CPU");
        assert!(cpu.process_s >= 0.0 && cpu.process_s < 1.0, "{cpu:?}");
    }

    #[test]
    fn unified_decorator_is_utc_seconds() {
        let t =
            unified_line_time("[2026-11-22T12:27:25.726+0000][6.972s][info][gc] Pause").unwrap();
        // 2026-11-22T12:27:25.726Z
        assert!((t - 1_795_350_445.726).abs() < 1e-3, "{t}");
        let shifted = unified_line_time("[2026-11-22T13:27:25.726+0100][6.972s]").unwrap();
        assert!((shifted - t).abs() < 1e-6);
        assert_eq!(unified_line_time("no stamp"), None);
    }

    /// Stamped lines that state no GC fact are not a GC log: the window's analysis is `null` and the
    /// node's notes say why (the report shows that instead of zero pauses); a window without lines says
    /// that instead.
    #[test]
    fn a_window_that_is_not_a_gc_log_is_noted_not_counted_as_zero_pauses() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("gc.log");
        std::fs::write(
            &log,
            "[2026-11-22T12:27:25.726+0000] hello from another program\n\
             [2026-11-22T12:27:26.000+0000] still not a collection\n",
        )
        .unwrap();
        let window = |start: f64| Window {
            start_unix_s: start,
            end_unix_s: start + 10.0,
        };
        let node = dir.path().join("node1");
        let mut notes = Vec::new();
        let kept = keep_gc_window(&log, window(1_795_350_440.0), &node, &mut notes).unwrap();
        assert_eq!(kept, 2);
        assert_eq!(GcAnalysis::read(&node).unwrap().report, None);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with(cqlbench_results::GC_ANALYSIS_FAILED_NOTE));
        assert!(
            notes[0].contains("0 of 2 lines are GC events"),
            "{}",
            notes[0]
        );
        let figures = NodeFigures {
            notes: notes.clone(),
            ..NodeFigures::default()
        };
        assert_eq!(figures.gc_analysis_missing(), Some(notes[0].as_str()));

        let mut notes = Vec::new();
        let empty = dir.path().join("node2");
        assert_eq!(
            keep_gc_window(&log, window(0.0), &empty, &mut notes).unwrap(),
            0
        );
        assert_eq!(notes, [cqlbench_results::NO_GC_LINES_NOTE]);
    }

    #[test]
    fn a_line_still_being_written_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("gc.log");
        let whole =
            "[2026-11-22T12:27:25.726+0000][6.972s][info][gc] GC(1) Pause Young 10M->5M 3.1ms\n";
        // The JVM has written the stamp of its next line but not the rest (nor the newline).
        std::fs::write(&log, format!("{whole}[2026-11-22T12:27:26.001+0000][7.2")).unwrap();
        let window = Window {
            start_unix_s: 1_795_350_445.0,
            end_unix_s: 1_795_350_447.0,
        };
        assert_eq!(gc_lines_in(&log, window), whole);
    }

    #[test]
    fn flush_lines_give_bytes_and_times() {
        let line = "INFO  [PerDiskMemtableFlushWriter_0:1] 2026-11-22 12:27:25,726 Flushing.java:179 - Completed flushing /d/data/ks/t-1/nb-1-big-Data.db (6.292MiB) for commitlog position";
        assert!((system_log_time(line).unwrap() - 1_795_350_445.726).abs() < 1e-3);
        assert_eq!(parse_size_in_parens("(177B)"), Some(177.0));
        assert_eq!(parse_size_in_parens("(2.000KiB)"), Some(2048.0));
    }

    #[test]
    fn cpu_is_interpolated_at_the_window_edges() {
        let reading = |t: f64, cpu: f64| CpuReading {
            at_unix_s: t,
            process_s: cpu,
            gc_threads_s: cpu / 10.0,
            vm_thread_s: 0.0,
        };
        let samples = [reading(0.0, 0.0), reading(10.0, 10.0), reading(20.0, 30.0)];
        let cpu = cpu_over(
            &samples,
            Window {
                start_unix_s: 5.0,
                end_unix_s: 15.0,
            },
        )
        .unwrap();
        assert!((cpu.process_s - 15.0).abs() < 1e-9);
        assert!((cpu.gc_threads_s - 1.5).abs() < 1e-9);
    }
}
