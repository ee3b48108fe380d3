//! The open-loop engine: a fixed-rate schedule driven by one task per thread, each keeping at most
//! `concurrency` requests in flight, and a reporter that drains the recorders once a second into the
//! result files and the progress line.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use cqlbench_cql::ExecuteFrame;
use cqlbench_metrics::{LiveInterval, LiveOp, RunPhase};
use hdrhistogram::Histogram;

use crate::options::{RunOptions, Stopping};
use cqlbench_results::{
    round3, ClientSummary, ErrorCounts, ErrorKind, OpSummary, Percentiles, PhaseSummary, RunStatus,
    Settings, Summary, WindowP99, FORMAT_VERSION,
};

use crate::bound::Bound;
use crate::output::{format_result_table, Interval, ResultFiles};
use crate::recorder::{new_histogram, reset_histogram, IntervalRecorder, OpStats};
use crate::session;
use crate::topology::Topology;
use crate::wire::{self, Binding, LoopIo, LoopOutcome, Phase, Schedule, ThreadConns, WireConfig};
use crate::workload::{mix, timeuuid, BuiltIn, KeyPlan, OpId, TextPool, Workload, WorkloadKind};
use crate::LoadError;

/// What a finished run produced.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub summary: Summary,
    pub out_dir: PathBuf,
    /// The terminal table (also derivable with [`format_result_table`]).
    pub table: String,
}

/// Shared, read-only state of the client threads.
struct Ctx {
    wire: WireConfig,
    binder: Binder,
    /// The workload's operation names, by [`OpId::index`].
    ops: Vec<String>,
    plan: KeyPlan,
    text: TextPool,
    stop: AtomicBool,
    /// Test hook: `CQLBENCH_FAULT_PANIC_THREAD=<thread>:<operations>` makes that client thread panic
    /// after releasing that many operations of the measured run (how a failed thread is reported is
    /// tested against a real node with it).
    fault_panic: Option<(usize, u64)>,
}

/// How operations are chosen and their values written.
enum Binder {
    BuiltIn(BuiltIn),
    File(Box<Bound>),
}

impl Ctx {
    /// The operation of global index `index`.
    fn op_at(&self, index: u64) -> OpId {
        match &self.binder {
            Binder::BuiltIn(_) => self.plan.op_type(index),
            Binder::File(bound) => bound.op_at(self.plan.seed, index, self.plan.populate),
        }
    }
}

/// Reads the `CQLBENCH_FAULT_PANIC_THREAD` test hook.
fn fault_panic_from_env() -> Result<Option<(usize, u64)>, LoadError> {
    let Ok(text) = std::env::var("CQLBENCH_FAULT_PANIC_THREAD") else {
        return Ok(None);
    };
    let parsed = text
        .split_once(':')
        .and_then(|(t, n)| Some((t.trim().parse().ok()?, n.trim().parse().ok()?)));
    parsed.map(Some).ok_or_else(|| {
        LoadError::InvalidOption(format!(
            "CQLBENCH_FAULT_PANIC_THREAD='{text}': expected <thread>:<operations>"
        ))
    })
}

/// Writes operation `index`'s bound values; returns the partition key's bytes (for routing) and
/// the state the operation sets if it succeeds.
fn bind(ctx: &Ctx, index: u64, op: OpId, frame: &mut ExecuteFrame) -> Binding {
    match &ctx.binder {
        Binder::BuiltIn(built_in) => (bind_built_in(ctx, built_in, index, op, frame), None),
        Binder::File(bound) => bound.bind(
            ctx.plan.seed,
            index,
            ctx.plan.populate,
            op,
            &ctx.text,
            frame,
        ),
    }
}

/// [`bind`] for the built-in workloads.
fn bind_built_in(
    ctx: &Ctx,
    workload: &BuiltIn,
    index: u64,
    op: OpId,
    frame: &mut ExecuteFrame,
) -> Range<usize> {
    use std::io::Write as _;
    let number = |frame: &mut ExecuteFrame, n: u64| {
        frame.value_with(|out| {
            let _ = write!(out, "{n}");
        })
    };
    let clustering = |frame: &mut ExecuteFrame| {
        let c = ctx.plan.clustering(index, workload.param("partsize"));
        frame.value_with(|out| {
            let _ = write!(out, "{c:08}");
        });
    };
    let write = op == OpId::WRITE;
    match (workload.info.kind, write) {
        (WorkloadKind::Tabular, true) => {
            let key = number(frame, ctx.plan.partition(index));
            clustering(frame);
            let size = workload.param("value_size") as usize;
            let pick = ctx.plan.data_pick(index);
            for i in 0..8u64 {
                frame.value(ctx.text.slice(pick.wrapping_add(i * 7919), size));
            }
            key
        }
        (WorkloadKind::Tabular, false) => {
            let key = number(frame, ctx.plan.read_partition(index));
            clustering(frame);
            key
        }
        (kind, true) => {
            let key = number(frame, ctx.plan.partition(index));
            if kind == WorkloadKind::BasicTimeSeries {
                let now = SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .unwrap_or_default();
                frame.value(&timeuuid(now.as_nanos(), mix(ctx.plan.seed, index, 0x7157)));
            }
            let pick = ctx.plan.data_pick(index);
            let len = if kind == WorkloadKind::BasicTimeSeries {
                100 + (pick % 100) as usize // tlp-stress: 100–199 characters
            } else {
                workload.param("value_size") as usize
            };
            frame.value(ctx.text.slice(pick >> 8, len));
            key
        }
        (_, false) => number(frame, ctx.plan.read_partition(index)),
    }
}

/// How late a reporting tick may close a window and still count it as full.
const WINDOW_SLACK: Duration = Duration::from_millis(500);

fn p99_ms(h: &Histogram<u64>) -> f64 {
    h.value_at_quantile(0.99) as f64 / 1000.0
}

/// Per-operation totals kept by the reporter, by [`OpId::index`].
struct Totals {
    measured: Vec<OpStats>,
    window: Vec<Histogram<u64>>,
    /// The window closed last (a short remainder at the end of the run joins it).
    last_window: Vec<Histogram<u64>>,
    window_started: Option<Instant>,
    window_p99s: Vec<Vec<WindowP99>>,
    warmup: Vec<OpStats>,
    hiccup: Histogram<u64>,
    send_gaps: Histogram<u64>,
    release_lateness: Histogram<u64>,
    concurrency_limited: u64,
    reprepared: u64,
    last_measured_done: Option<Instant>,
}

impl Totals {
    /// Totals of a workload of `ops` operations.
    fn new(ops: usize) -> Self {
        Totals {
            measured: vec![OpStats::default(); ops],
            window: vec![new_histogram(); ops],
            last_window: vec![new_histogram(); ops],
            window_started: None,
            window_p99s: vec![Vec::new(); ops],
            warmup: vec![OpStats::default(); ops],
            hiccup: new_histogram(),
            send_gaps: new_histogram(),
            release_lateness: new_histogram(),
            concurrency_limited: 0,
            reprepared: 0,
            last_measured_done: None,
        }
    }

    /// Closes the p99 window when it is full (give or take the half second a reporting tick may be
    /// late), and at the end of the run whatever its length: the last seconds of a run (a stall just
    /// before the end) must show in "Max p99" too. Only a remainder shorter than one reporting
    /// interval (the operations that completed after the last tick) joins the window before it
    /// instead of standing alone as the "p99" of a handful of operations.
    fn close_window(&mut self, at_end: bool, window: Duration, now: Instant) {
        let Some(started) = self.window_started else {
            return;
        };
        let length = now.saturating_duration_since(started);
        let full = length + WINDOW_SLACK >= window;
        if !full && !at_end {
            return;
        }
        let joins_previous = !full && length < Duration::from_secs(1);
        for i in 0..self.window.len() {
            let previous = self.window_p99s[i].last_mut().filter(|_| joins_previous);
            match previous {
                Some(previous) => {
                    let _ = self.last_window[i].add(&self.window[i]);
                    previous.p99_ms = p99_ms(&self.last_window[i]);
                    previous.seconds += length.as_secs_f64();
                }
                None if !self.window[i].is_empty() => {
                    self.window_p99s[i].push(WindowP99 {
                        p99_ms: p99_ms(&self.window[i]),
                        seconds: length.as_secs_f64(),
                    });
                    std::mem::swap(&mut self.last_window[i], &mut self.window[i]);
                }
                None => {}
            }
            reset_histogram(&mut self.window[i]);
        }
        self.window_started = Some(now);
    }
}

struct PhaseRun {
    recorders: Recorders,
    /// Each thread reports its outcome here when its share of the phase is done (a panicking thread
    /// too: the panic is caught and reported as the thread's failure).
    finished: tokio::sync::mpsc::UnboundedReceiver<LoopOutcome>,
    threads: Vec<std::thread::JoinHandle<ThreadConns>>,
}

/// What the threads of a phase reported when they ended.
#[derive(Debug, Default)]
struct PhaseEnd {
    running: usize,
    unsent: u64,
    cancelled: u64,
    /// The first failure of a client thread (the run stops on it).
    failure: Option<String>,
}

impl PhaseEnd {
    /// Takes one thread's outcome (or `None` when no thread is left to report); `true` when every
    /// thread has ended.
    fn absorb(&mut self, outcome: Option<LoopOutcome>, stop: &AtomicBool) -> bool {
        match outcome {
            Some(outcome) => {
                self.unsent += outcome.unsent;
                self.cancelled += outcome.cancelled;
                if let Some(failure) = outcome.failure {
                    // One thread failing stops the whole run: its share is missing from here on.
                    stop.store(true, Ordering::Relaxed);
                    self.failure.get_or_insert(failure);
                }
                self.running = self.running.saturating_sub(1);
            }
            None => self.running = 0,
        }
        self.running == 0
    }
}

/// Names of the client threads.
const CLIENT_THREAD: &str = "cqlbench-client-";

/// A client thread's panic is caught and becomes the run's one-line failure: the default hook's
/// message (and backtrace hint) on stderr would only repeat it. Other threads keep the usual hook.
fn quiet_client_thread_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_client = std::thread::current()
                .name()
                .is_some_and(|name| name.starts_with(CLIENT_THREAD));
            if !in_client {
                previous(info);
            }
        }));
    });
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

impl PhaseRun {
    /// The threads' connections, for the next phase.
    fn join(self) -> Result<Vec<ThreadConns>, LoadError> {
        self.threads
            .into_iter()
            .map(|t| {
                t.join().map_err(|_| {
                    LoadError::Runtime(std::io::Error::other("a client thread failed"))
                })
            })
            .collect()
    }
}

/// Starts one OS thread per client thread; each runs its share of `plan` on its own connections.
/// `faults` says whether the fault-injection test hook applies to this phase.
fn spawn_phase(
    ctx: &Arc<Ctx>,
    plan: &Phase,
    conns: Vec<ThreadConns>,
    faults: bool,
) -> Result<PhaseRun, LoadError> {
    let claim = Arc::new(AtomicU64::new(0));
    let (report, finished) = tokio::sync::mpsc::unbounded_channel();
    let mut recorders = Recorders::default();
    let mut threads = Vec::new();
    for (thread, mut own) in conns.into_iter().enumerate() {
        let recorder = recorders.add(ctx.ops.len());
        let (ctx, plan, claim, report) = (ctx.clone(), plan.clone(), claim.clone(), report.clone());
        let handle = std::thread::Builder::new()
            .name(format!("{CLIENT_THREAD}{thread}"))
            .spawn(move || {
                let schedule = Schedule {
                    phase: &plan,
                    lane: plan.lane(thread as u64),
                    claim: &claim,
                };
                let progress = AtomicU64::new(schedule.lane);
                let io = LoopIo {
                    stop: &ctx.stop,
                    recorder: &recorder,
                    progress: &progress,
                    panic_after: ctx
                        .fault_panic
                        .filter(|(t, _)| faults && *t == thread)
                        .map(|(_, n)| n),
                };
                let op_type = |index| ctx.op_at(index);
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    wire::run_loop(
                        &ctx.wire,
                        &mut own,
                        &schedule,
                        &io,
                        op_type,
                        |index, op, frame| bind(&ctx, index, op, frame),
                    )
                }));
                let outcome = outcome.unwrap_or_else(|panic| {
                    let mut outcome =
                        wire::give_up(&mut own, &schedule, &io, &op_type, Instant::now());
                    outcome.failure = Some(format!(
                        "client thread {thread} failed: {}",
                        panic_message(panic.as_ref())
                    ));
                    outcome
                });
                let _ = report.send(outcome);
                own
            })
            .map_err(LoadError::Runtime)?;
        threads.push(handle);
    }
    Ok(PhaseRun {
        recorders,
        finished,
        threads,
    })
}

/// The client threads' recorders, each with a spare that the reporter keeps: a drain swaps a
/// thread's recorder for its spare under the thread's lock, which takes a moment, and merges the
/// histograms after, so that a thread about to release never waits for the merging.
#[derive(Default)]
struct Recorders {
    shared: Vec<Arc<Mutex<IntervalRecorder>>>,
    spares: Vec<IntervalRecorder>,
}

impl Recorders {
    /// A recorder for one more thread, for a workload of `ops` operations.
    fn add(&mut self, ops: usize) -> Arc<Mutex<IntervalRecorder>> {
        let recorder = Arc::new(Mutex::new(IntervalRecorder::new(ops)));
        self.shared.push(recorder.clone());
        self.spares.push(IntervalRecorder::new(ops));
        recorder
    }

    /// What the threads recorded for the row that ends now, and that end. The end is taken while
    /// every recorder is held: a thread holds its recorder from a release's moment until the release
    /// is recorded, and records a completion only after it happened, so everything the row holds
    /// happened before its end and everything later waits for the next row.
    fn drain(&mut self, ops: usize) -> (IntervalRecorder, Instant) {
        // A thread that panicked while holding its recorder leaves whole counts behind.
        let mut held: Vec<_> = self
            .shared
            .iter()
            .map(|shared| shared.lock().unwrap_or_else(|e| e.into_inner()))
            .collect();
        let cut = Instant::now();
        for (recorder, spare) in held.iter_mut().zip(&mut self.spares) {
            recorder.hand_over(spare, cut);
        }
        drop(held);
        let mut interval = IntervalRecorder::new(ops);
        for spare in &mut self.spares {
            spare.drain_into(&mut interval);
        }
        (interval, cut)
    }

    fn set_slow_thresholds(&self, thresholds: Vec<u64>) {
        for r in &self.shared {
            r.lock()
                .unwrap_or_else(|e| e.into_inner())
                .slow_threshold_us
                .clone_from(&thresholds);
        }
    }
}

/// Connections per node for each client thread: `--connections-per-host` split over the threads,
/// at least one each.
fn open_connections(
    wire: &WireConfig,
    options: &RunOptions,
) -> Result<Vec<ThreadConns>, LoadError> {
    let threads = options.threads.max(1);
    (0..threads)
        .map(|t| {
            let share = options.connections_per_host / threads
                + usize::from(t < options.connections_per_host % threads);
            ThreadConns::open(wire, share.max(1)).map_err(|e| LoadError::Connect {
                hosts: wire
                    .topology
                    .nodes
                    .iter()
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                reason: session::one_line(&e.to_string()),
            })
        })
        .collect()
}

fn spawn_stop_on_ctrl_c(ctx: &Arc<Ctx>) {
    let ctx = ctx.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            ctx.stop.store(true, Ordering::Relaxed);
        }
    });
}

/// Runs the whole benchmark: schema, optional populate, warm-up, measured phase; writes the result
/// files as it goes and calls `progress` with one line per second.
pub fn run(options: &RunOptions, progress: &mut dyn FnMut(&str)) -> Result<RunResult, LoadError> {
    options.validate()?;
    quiet_client_thread_panics();
    // The runtime only sets up the schema and reports once a second; the load runs on its own threads.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(LoadError::Runtime)?;
    runtime.block_on(run_async(options, progress))
}

async fn run_async(
    options: &RunOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<RunResult, LoadError> {
    let (ctx, conns, settings) = prepare(options).await?;
    if let Some(live) = &options.live {
        let names: Vec<&str> = ctx.ops.iter().map(String::as_str).collect();
        live.begin_run(&names, &ERROR_KINDS, options.client_rate());
    }
    let (populate, conns) = if options.populate > 0 {
        set_live_phase(options, RunPhase::Populate);
        let (summary, conns) = populate(&ctx, options, progress, conns).await?;
        (Some(summary), conns)
    } else {
        (None, conns)
    };
    // A short lead so that the first operations are not already late when the tasks start; with
    // --start-at, the common start of all clients (with --start-at @FILE, once written there).
    let start_at = match &options.start_at_file {
        Some(file) => Some(start_from_file(file, &ctx.stop, progress).await?),
        None => options.start_at,
    };
    let (start, start_wall) = match start_at {
        Some(at) => common_start(at, progress)?,
        None => {
            let lead = Duration::from_millis(20);
            (Instant::now() + lead, SystemTime::now() + lead)
        }
    };
    let plan = measured_phase(options, start);
    let measured_start_wall = start_wall + options.warmup;
    let base = SummaryBase {
        workload: options.workload.name().to_string(),
        ops: ctx.ops.clone(),
        // This client's share: what it alone is to achieve.
        target_rate: options.client_rate(),
        p99_window: options.p99_window,
        max_in_flight: options.max_in_flight(),
        scheduled: plan
            .count
            .filter(|_| options.rate.is_some())
            .map(|c| plan.own_count(c)),
        clients: options.clients,
        client_id: options.client_id,
        start_at,
        settings,
        populate,
        measured_start_unix_s: measured_start_wall
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64()),
    };
    let files = ResultFiles::create(&options.out_dir, measured_start_wall, &ctx.ops)?;
    let phase = spawn_phase(&ctx, &plan, conns, true)?;
    set_live_phase(
        options,
        if options.warmup.is_zero() {
            RunPhase::Measured
        } else {
            RunPhase::Warmup
        },
    );
    let mut reporter = Reporter::new(options, plan, files, base);
    // The machine's conditions, read beside the load for summary.json's validity.
    reporter.sampler = Some(cqlbench_machine::Sampler::start(
        &ctx.wire.topology.nodes,
        options.validity.other_cpu,
    ));
    measure(&ctx, phase, &mut reporter, progress).await
}

/// The schema set up through the driver, the topology read, and the load's own connections opened;
/// with the settings summary.json records.
async fn prepare(
    options: &RunOptions,
) -> Result<(Arc<Ctx>, Vec<ThreadConns>, Settings), LoadError> {
    // The driver sets up the schema and reads the topology; the load path then speaks CQL itself.
    let driver = session::connect(options).await?;
    session::check_datacenter(&driver, options)?;
    // A workload file that the server refuses leaves no schema of its own behind.
    let before = match options.workload {
        Workload::File(_) => Some(session::SchemaBefore::take(&driver, &options.keyspace).await),
        Workload::BuiltIn(_) => None,
    };
    let set_up = async {
        let replication = session::create_schema(&driver, options).await?;
        let bound = session::prepare(&driver, options).await?;
        Ok::<_, LoadError>((replication, bound))
    }
    .await;
    let (replication, bound) = match (set_up, before) {
        (Ok(done), _) => done,
        (Err(e), Some(before)) => {
            before.restore(&driver).await;
            return Err(e);
        }
        (Err(e), None) => return Err(e),
    };
    let topology = Topology::from_session(
        &driver,
        &options.keyspace,
        &options.workload.table(),
        options.dc.as_deref(),
    )
    .await;
    drop(driver);
    let wire = session::wire_config(options, topology, bound.as_ref())?;
    let conns = open_connections(&wire, options)?;
    let ctx = Arc::new(Ctx {
        wire,
        binder: match (&options.workload, bound) {
            (_, Some(bound)) => Binder::File(Box::new(bound)),
            (Workload::BuiltIn(built_in), None) => Binder::BuiltIn(built_in.clone()),
            (Workload::File(_), None) => {
                return Err(LoadError::InvalidOption(
                    "a workload file was not bound to the server's statements".into(),
                ))
            }
        },
        ops: options.workload.op_names(),
        plan: KeyPlan {
            seed: options.seed,
            partitions: options.partitions,
            generator: options.partition_gen,
            read_ratio: options.read_ratio,
            populate: options.populate,
        },
        text: TextPool::new(options.seed),
        stop: AtomicBool::new(false),
        fault_panic: fault_panic_from_env()?,
    });
    spawn_stop_on_ctrl_c(&ctx);
    Ok((ctx, conns, settings(options, &replication)))
}

/// The schedule of the warm-up and the measured phase from `start`: how many operations (with a
/// rate) or until when (unthrottled), and how long a server that fell behind may take to catch up.
fn measured_phase(options: &RunOptions, start: Instant) -> Phase {
    let measure_start = start + options.warmup;
    let (count, deadline) = match (options.stopping, options.rate) {
        (Stopping::Ops(n), Some(rate)) => {
            (Some(n + (options.warmup.as_secs_f64() * rate) as u64), None)
        }
        (Stopping::Duration(d), Some(rate)) => (
            Some(((options.warmup + d).as_secs_f64() * rate).round() as u64),
            None,
        ),
        (Stopping::Ops(n), None) => (Some(n), None),
        (Stopping::Duration(d), None) => (None, Some(measure_start + d)),
    };
    let schedule_end = match (count, options.rate) {
        (Some(c), Some(rate)) => start + Duration::from_secs_f64(c as f64 / rate),
        _ => deadline.unwrap_or(start),
    };
    Phase {
        base: options.populate,
        count,
        rate: options.rate,
        start,
        deadline,
        // Give a server that fell behind a bounded chance to catch up; the rest is reported as unsent.
        drain_deadline: options
            .rate
            .map(|_| schedule_end + (options.request_timeout * 2).max(Duration::from_secs(10))),
        measure_start,
        concurrency: options.concurrency,
        threads: options.threads as u64,
        group: options.release_group(),
        clients: options.clients,
        client_id: options.client_id,
    }
}

/// Ticks once a second from the schedule's start. With a common start the ticks stay on its whole
/// seconds (a late tick makes a longer row, the next one is back on the grid), so that the clients'
/// intervals line up second by second.
fn reporting_ticker(start: Instant, common_start: bool) -> tokio::time::Interval {
    let mut ticker = tokio::time::interval_at(
        (start + Duration::from_secs(1)).into(),
        Duration::from_secs(1),
    );
    ticker.set_missed_tick_behavior(if common_start {
        tokio::time::MissedTickBehavior::Skip
    } else {
        tokio::time::MissedTickBehavior::Delay
    });
    ticker
}

/// Runs the measured phase to its end, reporting once a second and when the threads are done.
async fn measure(
    ctx: &Arc<Ctx>,
    mut phase: PhaseRun,
    reporter: &mut Reporter<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<RunResult, LoadError> {
    let mut ended = PhaseEnd {
        running: reporter.plan.threads as usize,
        ..PhaseEnd::default()
    };
    let mut ticker = reporting_ticker(reporter.plan.start, reporter.base.start_at.is_some());
    loop {
        let finished = tokio::select! {
            _ = ticker.tick() => false,
            outcome = phase.finished.recv() => {
                if !ended.absorb(outcome, &ctx.stop) {
                    continue; // not a reporting moment: other threads are still sending
                }
                true
            }
        };
        let status = match (finished, &ended.failure) {
            (false, _) => RunStatus::Running,
            (true, Some(_)) => RunStatus::Failed,
            (true, None) if ctx.stop.load(Ordering::Relaxed) => RunStatus::Interrupted,
            (true, None) => RunStatus::Complete,
        };
        let summary = reporter.report(ctx, &mut phase.recorders, &ended, status, progress)?;
        if finished {
            return reporter.finish(summary, ended);
        }
    }
}

/// Drains the client threads' recorders once a second into intervals.csv, the interval logs,
/// slow-ops.csv, the run's totals, summary.json and the progress line.
struct Reporter<'a> {
    options: &'a RunOptions,
    plan: Phase,
    files: ResultFiles,
    totals: Totals,
    base: SummaryBase,
    last_tick: Instant,
    /// Start of the measured operations not yet written as a row. A tick that falls a moment after
    /// the measured start (the warm-up's last tick, when the warm-up is whole seconds) would otherwise
    /// write a measured row a fraction of a millisecond long; its operations are held for the next row.
    measured_since: Instant,
    held_measured: Option<Vec<OpStats>>,
    /// Reads /proc beside the load; its evidence becomes summary.json's validity at the end.
    sampler: Option<cqlbench_machine::Sampler>,
}

impl<'a> Reporter<'a> {
    fn new(options: &'a RunOptions, plan: Phase, files: ResultFiles, base: SummaryBase) -> Self {
        Reporter {
            options,
            last_tick: plan.start,
            measured_since: plan.measure_start,
            plan,
            files,
            totals: Totals::new(base.ops.len()),
            base,
            held_measured: None,
            sampler: None,
        }
    }

    /// Seconds from the measured start (negative in the warm-up).
    fn since_measure_start(&self, t: Instant) -> f64 {
        let measure_start = self.plan.measure_start;
        t.saturating_duration_since(measure_start).as_secs_f64()
            - measure_start.saturating_duration_since(t).as_secs_f64()
    }

    /// Writes the interval's rows (see [`RowSpans`]): the warm-up's up to the measured start, and the
    /// measured phase's (or holds a measured row that would be a fraction of a millisecond long for
    /// the next one).
    fn write_rows(
        &mut self,
        interval: &mut IntervalRecorder,
        now: Instant,
        finished: bool,
        hiccup_max_ms: f64,
    ) -> Result<(), LoadError> {
        let measure_start = self.plan.measure_start;
        let rows = RowSpans::at(
            self.last_tick,
            now,
            measure_start,
            self.measured_since,
            finished,
        );
        let warm = interval
            .warmup
            .iter()
            .any(|s| s.count + s.errors.total() + s.sent > 0);
        if let (Some((from, to)), true) = (rows.warmup, warm) {
            let span = to.saturating_duration_since(from);
            self.files.write_interval(&Interval {
                elapsed_s: self.since_measure_start(to),
                length: span,
                measured: false,
                stats: &interval.warmup,
                scheduled_ops_s: scheduled_in(&self.plan, from, to) / span.as_secs_f64().max(1e-9),
                hiccup_max_ms,
                write_hlog: false,
            })?;
        }
        match rows.measured {
            MeasuredRow::None => {}
            MeasuredRow::Hold => {
                let empty = vec![OpStats::default(); interval.measured.len()];
                self.held_measured = Some(std::mem::replace(&mut interval.measured, empty));
            }
            MeasuredRow::Write { from } => {
                let measured_length = now.saturating_duration_since(from);
                self.files.write_interval(&Interval {
                    elapsed_s: self.since_measure_start(now),
                    length: measured_length,
                    measured: true,
                    stats: &interval.measured,
                    scheduled_ops_s: scheduled_in(&self.plan, from, now)
                        / measured_length.as_secs_f64().max(1e-9),
                    hiccup_max_ms,
                    write_hlog: true,
                })?;
                self.measured_since = now;
            }
        }
        Ok(())
    }

    /// One reporting moment: everything the threads recorded since the last one, written; returns
    /// the summary as it stands.
    fn report(
        &mut self,
        ctx: &Ctx,
        recorders: &mut Recorders,
        ended: &PhaseEnd,
        status: RunStatus,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Summary, LoadError> {
        let finished = status != RunStatus::Running;
        let (mut interval, now) = recorders.drain(ctx.ops.len());
        self.feed_live(&interval, now, finished);
        if let Some(held) = self.held_measured.take() {
            for (stats, h) in interval.measured.iter_mut().zip(&held) {
                stats.merge_from(h);
            }
        }
        let hiccup_max_ms = interval.lateness.max() as f64 / 1000.0;
        let _ = self.totals.hiccup.add(&interval.lateness);
        let _ = self.totals.send_gaps.add(&interval.send_gaps);
        let _ = self.totals.release_lateness.add(&interval.release_lateness);
        self.write_rows(&mut interval, now, finished, hiccup_max_ms)?;
        let measure_start = self.plan.measure_start;
        absorb(&mut self.totals, &interval, measure_start, now);
        if self.options.record_slow_ops {
            self.files
                .write_slow_ops(&interval.slow, measure_start, &ctx.wire.topology.nodes)?;
            recorders.set_slow_thresholds(slow_thresholds(&self.totals, &interval));
        }
        self.totals
            .close_window(finished, self.options.p99_window, now);
        let mut summary = build_summary(&self.base, &self.totals, measure_start, ended, status);
        for (index, name) in ctx.ops.iter().enumerate() {
            if let (Some(op), Some(message)) =
                (summary.ops.get_mut(name), ctx.wire.first_errors.of(index))
            {
                op.first_error = Some(message.to_string());
            }
        }
        self.files.write_summary(&summary)?;
        let length = now.saturating_duration_since(self.last_tick);
        progress(&progress_line(
            now.saturating_duration_since(self.plan.start),
            // A tick that held its few measured operations for the next row still reports the
            // warm-up it closed, not an empty measured second.
            now < measure_start || self.held_measured.is_some(),
            scheduled_in(&self.plan, self.last_tick, now) / length.as_secs_f64().max(1e-9),
            &interval,
            &ctx.ops,
            length,
            hiccup_max_ms,
        ));
        self.last_tick = now;
        Ok(summary)
    }

    /// The interval, as drained (before a held measured row joins it), into the live figures.
    fn feed_live(&self, interval: &IntervalRecorder, now: Instant, finished: bool) {
        let Some(live) = &self.options.live else {
            return;
        };
        let ops = interval
            .measured
            .iter()
            .zip(&interval.warmup)
            .map(|(measured, warmup)| live_op(measured, warmup))
            .collect();
        let phase = match (finished, now < self.plan.measure_start) {
            (true, _) => RunPhase::Done,
            (false, true) => RunPhase::Warmup,
            (false, false) => RunPhase::Measured,
        };
        live.record_interval(&LiveInterval {
            ops,
            seconds: now.saturating_duration_since(self.last_tick).as_secs_f64(),
            lateness: &interval.lateness,
            phase,
        });
    }

    /// The run's result once every thread has ended, or the failure that stopped it.
    fn finish(&mut self, mut summary: Summary, ended: PhaseEnd) -> Result<RunResult, LoadError> {
        if let Some(reason) = ended.failure {
            return Err(LoadError::ClientFailed {
                reason,
                dir: self.options.out_dir.clone(),
            });
        }
        if let Some(sampler) = self.sampler.take() {
            let from = self.plan.measure_start;
            let to = from + Duration::from_secs_f64(summary.duration_s.max(0.0));
            summary.validity = Some(cqlbench_machine::verdict(
                sampler.finish(from, to),
                self.options.validity,
                summary.client.hiccup_ms.p99,
                self.options.threads,
            ));
            self.files.write_summary(&summary)?;
        }
        let table = format_result_table(&summary);
        Ok(RunResult {
            summary,
            out_dir: self.options.out_dir.clone(),
            table,
        })
    }
}

const ERROR_KINDS: [&str; 5] = [
    ErrorKind::ALL[0].name(),
    ErrorKind::ALL[1].name(),
    ErrorKind::ALL[2].name(),
    ErrorKind::ALL[3].name(),
    ErrorKind::ALL[4].name(),
];

fn set_live_phase(options: &RunOptions, phase: RunPhase) {
    if let Some(live) = &options.live {
        live.set_phase(phase);
    }
}

/// One operation type's interval for the live figures: counts of both phases (what the client did),
/// latency of the measured one only (the .hlog's values).
fn live_op<'a>(measured: &'a OpStats, warmup: &OpStats) -> LiveOp<'a> {
    LiveOp {
        ok: measured.count + warmup.count,
        errors: ErrorKind::ALL
            .iter()
            .map(|k| (k.name(), measured.errors.get(*k) + warmup.errors.get(*k)))
            .collect(),
        released: measured.sent + warmup.sent,
        latency: &measured.latency,
        service: &measured.service,
    }
}

/// The latency from which a successful operation is kept in slow-ops.csv, per operation type: a
/// margin below the lower of the p99 measured so far and the last second's p99 (the warm-up's before
/// the measured phase has enough), so that the operations above the run's final p99 are all there
/// even when the p99 drifts down after a bad start; everything until a p99 is known.
fn slow_thresholds(totals: &Totals, last: &IntervalRecorder) -> Vec<u64> {
    const ENOUGH: u64 = 200;
    let threshold = |i: usize| {
        let measured = &totals.measured[i].latency;
        let warmup = &totals.warmup[i].latency;
        let basis = if measured.len() >= ENOUGH {
            measured
        } else if warmup.len() >= ENOUGH {
            warmup
        } else {
            return 0;
        };
        let mut p99 = basis.value_at_quantile(0.99);
        let recent = &last.measured[i].latency;
        if recent.len() >= ENOUGH {
            p99 = p99.min(recent.value_at_quantile(0.99));
        }
        p99 * 7 / 10
    };
    (0..totals.measured.len()).map(threshold).collect()
}

/// The shortest first measured row: a tick closer than this to the measured start holds its measured
/// operations for the next row.
const MIN_FIRST_MEASURED_ROW: Duration = Duration::from_millis(200);

/// The interval rows one reporting moment (a tick, or the end) writes. An operation belongs to the
/// phase it was scheduled in, and a row lies within its phase's time: the warm-up row covers the
/// part of the interval before the measured start, so the tick that crosses the boundary closes the
/// warm-up at the boundary; warm-up operations that complete later still count in the warm-up's
/// totals (`warmup` in summary.json) but in no row, since no warm-up row comes after the boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct RowSpans {
    /// `(from, to)` of the warm-up row, if the interval began before the measured start.
    warmup: Option<(Instant, Instant)>,
    measured: MeasuredRow,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MeasuredRow {
    /// Still in the warm-up.
    None,
    /// A moment after the measured start: its measured operations join the next row.
    Hold,
    /// The measured row from `from` (the last measured row's end, or the measured start) to now.
    Write { from: Instant },
}

impl RowSpans {
    fn at(
        last_tick: Instant,
        now: Instant,
        measure_start: Instant,
        measured_since: Instant,
        finished: bool,
    ) -> RowSpans {
        let warmup = (last_tick < measure_start).then(|| (last_tick, now.min(measure_start)));
        let measured = if now <= measure_start {
            MeasuredRow::None
        } else if !finished
            && now.saturating_duration_since(measured_since) < MIN_FIRST_MEASURED_ROW
        {
            MeasuredRow::Hold
        } else {
            MeasuredRow::Write {
                from: measured_since,
            }
        };
        RowSpans { warmup, measured }
    }
}

/// Operations the schedule (over all operation types) puts between `from` and `to` for this client.
fn scheduled_in(plan: &Phase, from: Instant, to: Instant) -> f64 {
    let (Some(rate), Some(count)) = (plan.rate, plan.count) else {
        return 0.0;
    };
    let end = plan.start + Duration::from_secs_f64(count as f64 / rate);
    let from = from.max(plan.start);
    let to = to.min(end);
    if to <= from {
        0.0
    } else {
        (to - from).as_secs_f64() * rate / plan.clients as f64
    }
}

/// How often a client waiting for `--start-at @FILE` looks at the file.
const START_FILE_POLL: Duration = Duration::from_millis(10);

/// `--start-at @FILE`: says the client is ready, then waits until `file` holds a whole line (a
/// writer still writing it has not written its newline yet) and returns the time it names.
async fn start_from_file(
    file: &std::path::Path,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> Result<f64, LoadError> {
    progress(&format!(
        "ready: waiting for the common start in {}",
        file.display()
    ));
    let line = loop {
        if stop.load(Ordering::Relaxed) {
            return Err(LoadError::Interrupted(format!(
                "waiting for the common start in {}",
                file.display()
            )));
        }
        match std::fs::read_to_string(file) {
            Ok(text) => {
                if let Some((line, _)) = text.split_once('\n') {
                    break line.to_string();
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(LoadError::Io {
                    path: file.to_path_buf(),
                    source,
                })
            }
        }
        tokio::time::sleep(START_FILE_POLL).await;
    };
    let refused = |why: String| {
        LoadError::InvalidOption(format!(
            "--start-at @{}: the file holds '{}', {why}",
            file.display(),
            line.trim()
        ))
    };
    let at = crate::args::parse_start_at(&line)
        .map_err(|_| refused("not a Unix time in seconds or an RFC 3339 time".into()))?;
    let now = cqlbench_units::time::unix_now();
    if at > now + crate::args::MAX_START_AHEAD_S {
        return Err(refused(format!(
            "{:.1} h ahead: at most 24 h (is it in seconds, not milliseconds?)",
            (at - now) / 3600.0
        )));
    }
    if at < now - MAX_START_LATENESS.as_secs_f64() {
        return Err(refused(format!(
            "{:.1} s in the past when this client read it: write a time a moment ahead",
            now - at
        )));
    }
    Ok(at)
}

/// How late a client may begin the common schedule (after connecting and populating its share).
const MAX_START_LATENESS: Duration = Duration::from_secs(1);

/// The schedule's start for `--start-at` (Unix seconds) on this process's monotonic clock, and as
/// wall-clock time; refused when it has passed by more than [`MAX_START_LATENESS`].
fn common_start(
    at: f64,
    progress: &mut dyn FnMut(&str),
) -> Result<(Instant, SystemTime), LoadError> {
    let wall = SystemTime::UNIX_EPOCH + Duration::from_secs_f64(at);
    let (now, now_wall) = (Instant::now(), SystemTime::now());
    match wall.duration_since(now_wall) {
        Ok(ahead) => {
            progress(&format!(
                "waiting {:.1} s for the common start (--start-at {at:.3})",
                ahead.as_secs_f64()
            ));
            Ok((now + ahead, wall))
        }
        Err(e) if e.duration() <= MAX_START_LATENESS => Ok((now - e.duration(), wall)),
        Err(e) => Err(LoadError::InvalidOption(format!(
            "the common start (--start-at {at:.3}) passed {:.1} s ago while this client was still \
             connecting or populating: give every client a later --start-at",
            e.duration().as_secs_f64()
        ))),
    }
}

fn absorb(totals: &mut Totals, interval: &IntervalRecorder, measure_start: Instant, now: Instant) {
    for i in 0..totals.measured.len() {
        totals.measured[i].merge_from(&interval.measured[i]);
        totals.warmup[i].merge_from(&interval.warmup[i]);
        let _ = totals.window[i].add(&interval.measured[i].latency);
    }
    totals.concurrency_limited += interval.concurrency_limited;
    totals.reprepared += interval.reprepared;
    if interval
        .measured
        .iter()
        .any(|s| s.count + s.errors.total() > 0)
    {
        totals.last_measured_done = Some(interval.last_done.unwrap_or(now));
        if totals.window_started.is_none() {
            totals.window_started = Some(measure_start);
        }
    }
}

struct SummaryBase {
    workload: String,
    /// The workload's operation names, by [`OpId::index`].
    ops: Vec<String>,
    target_rate: Option<f64>,
    p99_window: Duration,
    max_in_flight: usize,
    /// Operations on the schedule (warm-up included), with a rate and a count.
    scheduled: Option<u64>,
    settings: Settings,
    populate: Option<PhaseSummary>,
    /// Wall-clock start of the measured phase, seconds since the epoch.
    measured_start_unix_s: f64,
    clients: u64,
    client_id: u64,
    start_at: Option<f64>,
}

fn op_summary(s: &OpStats, windows: &[WindowP99], elapsed: f64) -> OpSummary {
    let mut summary = OpSummary {
        count: s.count,
        errors: s.errors,
        sent: s.sent,
        not_applied: s.not_applied,
        rows: s.rows,
        pages: s.pages,
        ops_per_s: if elapsed > 0.0 {
            round3(s.count as f64 / elapsed)
        } else {
            0.0
        },
        latency_ms: Percentiles::of(&s.latency),
        service_time_ms: Percentiles::of(&s.service),
        failed_latency_ms: Percentiles::of(&s.failed_latency),
        ..OpSummary::default()
    };
    summary.set_windows(windows);
    summary
}

impl Totals {
    /// Seconds from the measured start to the last measured completion.
    fn measured_elapsed(&self, measure_start: Instant) -> f64 {
        self.last_measured_done.map_or(0.0, |d| {
            d.saturating_duration_since(measure_start).as_secs_f64()
        })
    }

    /// Every operation that did anything, measured or in the warm-up, by its name (`names`, by
    /// operation index).
    fn op_summaries(&self, names: &[String], elapsed: f64) -> BTreeMap<String, OpSummary> {
        names
            .iter()
            .enumerate()
            .filter(|(i, _)| {
                let (s, w) = (&self.measured[*i], &self.warmup[*i]);
                s.count + s.errors.total() + w.count + w.errors.total() > 0
            })
            .map(|(i, name)| {
                let summary = op_summary(&self.measured[i], &self.window_p99s[i], elapsed);
                (name.clone(), summary)
            })
            .collect()
    }

    /// The warm-up's counts and p99, when it had operations.
    fn warmup_summary(&self) -> Option<PhaseSummary> {
        let count: u64 = self.warmup.iter().map(|s| s.count).sum();
        let errors: u64 = self.warmup.iter().map(|s| s.errors.total()).sum();
        (count + errors > 0).then(|| {
            let mut latency = new_histogram();
            for s in &self.warmup {
                let _ = latency.add(&s.latency);
            }
            PhaseSummary {
                count,
                errors,
                duration_s: 0.0,
                ops_per_s: 0.0,
                latency_p99_ms: Percentiles::of(&latency).p99,
            }
        })
    }

    fn client_summary(&self, base: &SummaryBase, ended: &PhaseEnd) -> ClientSummary {
        ClientSummary {
            hiccup_ms: Percentiles::of(&self.hiccup),
            send_gap_ms: Percentiles::of(&self.send_gaps),
            release_lateness_ms: Percentiles::of(&self.release_lateness),
            concurrency_limited_ops: self.concurrency_limited,
            reprepared_ops: self.reprepared,
            scheduled_ops: base.scheduled,
            unsent_ops: ended.unsent,
            cancelled_ops: ended.cancelled,
            max_in_flight: base.max_in_flight,
        }
    }
}

/// What the run's rate and failures come to, in one sentence.
fn rate_note(
    base: &SummaryBase,
    status: RunStatus,
    ended: &PhaseEnd,
    achieved: f64,
    elapsed: f64,
    failed: &ErrorCounts,
) -> String {
    let failures = cqlbench_results::failures_suffix(failed);
    match (status, &ended.failure) {
        (RunStatus::Failed, Some(reason)) => {
            format!("FAILED: {reason}; the run was stopped{failures}")
        }
        (RunStatus::Running, _) => "running".to_string(),
        (RunStatus::Interrupted, _) => format!(
            "interrupted after {elapsed:.1} s{failures}; {} scheduled operations were not due yet",
            ended.cancelled
        ),
        _ => cqlbench_results::rate_note(base.target_rate, achieved, failed),
    }
}

fn build_summary(
    base: &SummaryBase,
    totals: &Totals,
    measure_start: Instant,
    ended: &PhaseEnd,
    status: RunStatus,
) -> Summary {
    let elapsed = totals.measured_elapsed(measure_start);
    let successful: u64 = totals.measured.iter().map(|s| s.count).sum();
    let mut failed = ErrorCounts::default();
    for s in &totals.measured {
        failed.merge(&s.errors);
    }
    let achieved = if elapsed > 0.0 {
        successful as f64 / elapsed
    } else {
        0.0
    };
    Summary {
        version: FORMAT_VERSION,
        workload: base.workload.clone(),
        target_rate: base.target_rate,
        achieved_rate: round3(achieved),
        rate_kept: cqlbench_results::rate_kept(base.target_rate, achieved, &failed),
        rate_note: rate_note(base, status, ended, achieved, elapsed, &failed),
        duration_s: round3(elapsed),
        status,
        failure: ended.failure.clone(),
        p99_window_s: base.p99_window.as_secs_f64(),
        ops: totals.op_summaries(&base.ops, elapsed),
        client: totals.client_summary(base, ended),
        warmup: totals.warmup_summary(),
        populate: base.populate.clone(),
        settings: base.settings.clone(),
        measured_start_unix_s: base.measured_start_unix_s,
        clients: base.clients,
        client_id: Some(base.client_id),
        start_at: base.start_at,
        merged_from: None,
        validity: None,
    }
}

fn progress_line(
    elapsed: Duration,
    warming_up: bool,
    scheduled_per_s: f64,
    interval: &IntervalRecorder,
    names: &[String],
    length: Duration,
    hiccup_max_ms: f64,
) -> String {
    let stats = if warming_up {
        &interval.warmup
    } else {
        &interval.measured
    };
    let per_second = |n: u64| n as f64 / length.as_secs_f64().max(1e-9);
    let sent: u64 = stats.iter().map(|s| s.sent).sum();
    let ok: u64 = stats.iter().map(|s| s.count).sum();
    let mut line = format!(
        "[{:>6.0}s]{} scheduled {:>7.0}/s sent {:>7.0}/s ok {:>7.0}/s",
        elapsed.as_secs_f64(),
        if warming_up { " warm-up" } else { "" },
        scheduled_per_s,
        per_second(sent),
        per_second(ok),
    );
    let mut failed = ErrorCounts::default();
    let mut failed_latency = new_histogram();
    for (s, name) in stats.iter().zip(names) {
        failed.merge(&s.errors);
        let _ = failed_latency.add(&s.failed_latency);
        if s.count > 0 {
            line.push_str(&format!(
                " | {} p99 {:.2} ms",
                name,
                s.latency.value_at_quantile(0.99) as f64 / 1000.0
            ));
        }
    }
    if failed.total() > 0 {
        line.push_str(&format!(
            " | {} (p99 {:.0} ms)",
            failed.describe(),
            failed_latency.value_at_quantile(0.99) as f64 / 1000.0
        ));
    } else {
        line.push_str(" | failed 0");
    }
    line.push_str(&format!(" | client lag max {hiccup_max_ms:.1} ms"));
    line
}

/// Writes `options.populate` rows as fast as the in-flight limit allows, with progress; not measured.
async fn populate(
    ctx: &Arc<Ctx>,
    options: &RunOptions,
    progress: &mut dyn FnMut(&str),
    conns: Vec<ThreadConns>,
) -> Result<(PhaseSummary, Vec<ThreadConns>), LoadError> {
    let start = Instant::now();
    let plan = Phase {
        base: 0,
        count: Some(options.populate),
        rate: None,
        start,
        deadline: None,
        drain_deadline: None,
        // Everything lands in the warm-up slot of the recorders: populate is never part of the result.
        measure_start: start + Duration::from_secs(10 * 365 * 86_400),
        concurrency: options.concurrency,
        threads: options.threads as u64,
        group: 1,
        clients: options.clients,
        client_id: options.client_id,
    };
    // This client's share of the rows: indexes i with i % clients == client_id.
    let rows = plan.own_count(options.populate);
    let mut phase = spawn_phase(ctx, &plan, conns, false)?;
    let mut ended = PhaseEnd {
        running: options.threads,
        ..PhaseEnd::default()
    };
    let mut done = 0u64;
    let mut errors = 0u64;
    let mut latency = new_histogram();
    let mut ticker = tokio::time::interval_at(
        (start + Duration::from_secs(1)).into(),
        Duration::from_secs(1),
    );
    loop {
        let finished = tokio::select! {
            _ = ticker.tick() => false,
            outcome = phase.finished.recv() => {
                if !ended.absorb(outcome, &ctx.stop) {
                    continue;
                }
                true
            }
        };
        let (interval, _) = phase.recorders.drain(ctx.ops.len());
        for s in &interval.warmup {
            done += s.count;
            errors += s.errors.total();
            let _ = latency.add(&s.latency);
        }
        {
            progress(&format!(
                "[populate] {done}/{rows} rows ({:.0}%), {:.0} rows/s, errors {errors}",
                done as f64 * 100.0 / rows.max(1) as f64,
                done as f64 / start.elapsed().as_secs_f64().max(1e-9)
            ));
        }
        if finished {
            if let Some(reason) = ended.failure {
                return Err(LoadError::ClientFailed {
                    reason,
                    dir: options.out_dir.clone(),
                });
            }
            let seconds = start.elapsed().as_secs_f64();
            let summary = PhaseSummary {
                count: done,
                errors,
                duration_s: round3(seconds),
                ops_per_s: round3(done as f64 / seconds.max(1e-9)),
                latency_p99_ms: Percentiles::of(&latency).p99,
            };
            return Ok((summary, phase.join()?));
        }
    }
}

/// The run's options as summary.json records them.
fn settings(o: &RunOptions, replication: &str) -> Settings {
    Settings {
        hosts: o.hosts.clone(),
        port: o.port,
        dc: o.dc.clone(),
        keyspace: o.keyspace.clone(),
        replication: replication.to_string(),
        compaction: o.compaction.as_ref().map(|c| c.to_string()),
        consistency: format!("{:?}", o.consistency),
        serial_consistency: format!("{:?}", o.serial_consistency),
        partitions: o.partitions,
        partition_generator: format!("{:?}", o.partition_gen).to_lowercase(),
        concurrency_per_thread: o.concurrency,
        threads: o.threads,
        connections_per_host: o.connections_per_host,
        // Each client thread has its own connections, at least one per host.
        connections_per_host_opened: o.connections_per_host.max(o.threads),
        read_ratio: o.read_ratio,
        populate: o.populate,
        warmup_s: o.warmup.as_secs_f64(),
        request_timeout_s: o.request_timeout.as_secs_f64(),
        tick_ms: o.group_interval().as_secs_f64() * 1000.0,
        slow_ops_file: o
            .record_slow_ops
            .then(|| cqlbench_results::SLOW_OPS_FILE.to_string()),
        release_group: o.release_group(),
        seed: o.seed,
        // --rate, -n, --populate are of all clients together; each sends its share.
        rate_all_clients: o.rate,
        stopping: Some(match o.stopping {
            Stopping::Duration(d) => cqlbench_results::Stopping::DurationS(d.as_secs_f64()),
            Stopping::Ops(n) => cqlbench_results::Stopping::Ops(n),
        }),
        clients: o.clients,
        start_at: o.start_at,
        workload_parameters: o.workload.numeric_params().into_iter().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The windowed p99s as summary.json gets them.
    fn windowed_p99(windows: &[WindowP99]) -> (Option<f64>, Option<f64>, Option<String>) {
        let mut summary = OpSummary::default();
        summary.set_windows(windows);
        (summary.avg_p99_ms, summary.max_p99_ms, summary.p99_note)
    }

    const WINDOW: Duration = Duration::from_secs(10);

    /// A client thread stamps a completion before it takes its recorder (its loop reads what
    /// epoll returned first), so a row's end taken before the recorders were held could fall
    /// between a completion and its recording, and the row would hold an operation that completed
    /// after the row ended (seen once: `duration_s` 3.001 against a last row ending at 3.000).
    #[test]
    fn a_drained_row_ends_after_every_completion_it_holds() {
        use crate::recorder::tests::completion;
        use std::sync::atomic::AtomicBool;
        let mut recorders = Recorders::default();
        let shared = recorders.add(2);
        let start = Instant::now();
        let stop = Arc::new(AtomicBool::new(false));
        let client = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    // Between two reads, as a loop waiting on epoll would (and a spinning thread
                    // could keep the lock from the drain for good).
                    std::thread::sleep(Duration::from_micros(20));
                    let done = Instant::now();
                    std::thread::yield_now();
                    let completion = completion(OpId::WRITE, done);
                    shared.lock().expect("recorder").record(&completion, start);
                }
            })
        };
        let mut rows = 0;
        while rows < 5_000 {
            let (interval, end) = recorders.drain(2);
            if let Some(last_done) = interval.last_done {
                assert!(
                    last_done <= end,
                    "row {rows} holds a completion after its end"
                );
                rows += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
        client.join().expect("client thread");
    }

    /// Replays the reporting moments of many runs — ticks a second apart, late by up to 300 ms, a
    /// warm-up of any length, the end at any moment — and checks that the rows tile each phase's
    /// time exactly: warm-up rows end at or before the measured start, measured rows start at or
    /// after it, neither overlaps nor leaves a gap, and only the last measured row may be short.
    #[test]
    fn rows_never_cross_the_warmup_boundary() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(18);
        let ms = Duration::from_millis;
        for _ in 0..5000 {
            let start = Instant::now();
            let measure_start = start + ms(rng.random_range(0..4000));
            let end = measure_start + ms(rng.random_range(1..5000));
            let mut moments: Vec<Instant> = (1..)
                .map(|k| start + Duration::from_secs(k) + ms(rng.random_range(0..300)))
                .take_while(|t| *t < end)
                .collect();
            moments.push(end);
            let (mut last_tick, mut measured_since) = (start, measure_start);
            let (mut warmup_end, mut measured_end) = (start, measure_start);
            for (i, &now) in moments.iter().enumerate() {
                let finished = i + 1 == moments.len();
                let rows = RowSpans::at(last_tick, now, measure_start, measured_since, finished);
                if let Some((from, to)) = rows.warmup {
                    assert_eq!(from, warmup_end, "a gap or overlap in the warm-up rows");
                    assert!(to <= measure_start && from < to);
                    warmup_end = to;
                }
                match rows.measured {
                    MeasuredRow::None => assert!(now <= measure_start),
                    MeasuredRow::Hold => assert!(!finished && now > measure_start),
                    MeasuredRow::Write { from } => {
                        assert_eq!(from, measured_end, "a gap or overlap in the measured rows");
                        assert!(from >= measure_start && now > from);
                        assert!(finished || now - from >= MIN_FIRST_MEASURED_ROW);
                        measured_end = now;
                        measured_since = now;
                    }
                }
                last_tick = now;
            }
            assert_eq!(
                warmup_end, measure_start,
                "the warm-up rows end at the boundary"
            );
            assert_eq!(measured_end, end, "the measured rows reach the end");
        }
    }

    #[test]
    fn a_run_shorter_than_half_a_window_reports_the_window_it_has_with_its_last_stall() {
        let start = Instant::now();
        let mut totals = Totals::new(2);
        totals.window_started = Some(start);
        // Two seconds of 1 ms writes, the last 2 % of them held up by a 0.8 s stall at the end.
        for _ in 0..980 {
            totals.window[OpId::WRITE.index()].record(1_000).unwrap();
        }
        for _ in 0..20 {
            totals.window[OpId::WRITE.index()].record(800_000).unwrap();
        }
        totals.close_window(false, WINDOW, start + Duration::from_secs(1));
        assert!(
            totals.window_p99s[OpId::WRITE.index()].is_empty(),
            "not full yet"
        );
        totals.close_window(true, WINDOW, start + Duration::from_secs(2));
        let windows = &totals.window_p99s[OpId::WRITE.index()];
        assert_eq!(windows.len(), 1);
        assert_eq!(windows[0].seconds, 2.0);
        let (avg, max, note) = windowed_p99(windows);
        assert!(max.unwrap() >= 799.0, "{max:?}");
        assert_eq!((avg, note), (max, None));
        // No read was measured: no window, and a reason instead of a number.
        assert!(totals.window_p99s[OpId::READ.index()].is_empty());
    }

    #[test]
    fn no_successful_operation_gives_null_with_a_reason_never_zero() {
        let (avg, max, note) = windowed_p99(&[]);
        assert_eq!((avg, max), (None, None));
        assert_eq!(note.as_deref(), Some("no successful operation"));
        // In summary.json: null and the note, not 0.0.
        let mut failed = OpStats::default();
        failed.errors.timeout = 500;
        failed.failed_latency.record(2_000_000).unwrap();
        let json = serde_json::to_value(op_summary(&failed, &[], 5.0)).unwrap();
        assert!(
            json["avg_p99_ms"].is_null() && json["max_p99_ms"].is_null(),
            "{json}"
        );
        assert_eq!(json["p99_windows"], 0);
        assert_eq!(json["p99_note"], "no successful operation");

        // A window in which nothing succeeded (the node was down) is left out, not read as a 0.0
        // window that would pull the average down; the windows with successes still count.
        let start = Instant::now();
        let mut totals = Totals::new(2);
        totals.window_started = Some(start);
        totals.close_window(false, WINDOW, start + WINDOW);
        assert!(totals.window_p99s[OpId::WRITE.index()].is_empty());
        totals.window[OpId::WRITE.index()].record(2_000).unwrap();
        totals.close_window(true, WINDOW, start + WINDOW * 2);
        let (avg, max, note) = windowed_p99(&totals.window_p99s[OpId::WRITE.index()]);
        assert_eq!((avg, max, note), (Some(2.0), Some(2.0), None));
    }
}
