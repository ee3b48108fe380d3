//! The open-loop engine: a fixed-rate schedule driven by one task per thread, each keeping at most
//! `concurrency` requests in flight, and a reporter that drains the recorders once a second into the
//! result files and the progress line.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use futures::stream::{FuturesUnordered, StreamExt};
use hdrhistogram::Histogram;
use scylla::client::session::Session;
use scylla::errors::{DbError, ExecutionError, RequestAttemptError};

use crate::options::{RunOptions, Stopping};
use crate::output::{
    format_result_table, ClientSummary, OpSummary, Percentiles, PhaseSummary, ResultFiles, Summary,
};
use crate::recorder::{new_histogram, Completion, ErrorKind, IntervalRecorder, OpStats};
use crate::session::{self, Statements};
use crate::workload::{KeyPlan, OpType, TextPool, Workload, WorkloadKind};
use crate::LoadError;

/// What a finished run produced.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub summary: Summary,
    pub out_dir: PathBuf,
    /// The terminal table (also derivable with [`format_result_table`]).
    pub table: String,
}

/// Shared, read-only state of the scheduler tasks.
struct Ctx {
    session: Session,
    statements: Arc<Statements>,
    workload: Workload,
    plan: KeyPlan,
    text: TextPool,
    stop: AtomicBool,
}

fn classify(error: &ExecutionError) -> ErrorKind {
    match error {
        ExecutionError::RequestTimeout(_) => ErrorKind::Timeout,
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(db, _)) => match db {
            DbError::ReadTimeout { .. } | DbError::WriteTimeout { .. } => ErrorKind::Timeout,
            DbError::Unavailable { .. } => ErrorKind::Unavailable,
            DbError::Overloaded | DbError::RateLimitReached { .. } => ErrorKind::Overloaded,
            _ => ErrorKind::Other,
        },
        _ => ErrorKind::Other,
    }
}

/// Sends operation `index` and reports when it completed.
async fn execute(
    ctx: &Ctx,
    index: u64,
    intended: Option<Instant>,
    slot_limited: bool,
) -> Completion {
    let op = ctx.plan.op_type(index);
    let sent = Instant::now();
    let session = &ctx.session;
    let st = &ctx.statements;
    let result = match (ctx.workload.info.kind, op) {
        (WorkloadKind::Tabular, OpType::Write) => {
            let part = ctx.plan.partition(index).to_string();
            let clust = format!(
                "{:08}",
                ctx.plan.clustering(index, ctx.workload.param("partsize"))
            );
            let size = ctx.workload.param("value_size") as usize;
            let pick = ctx.plan.data_pick(index);
            let v = |i: u64| ctx.text.slice(pick.wrapping_add(i * 7919), size);
            session
                .execute_unpaged(
                    &st.write,
                    (part, clust, v(0), v(1), v(2), v(3), v(4), v(5), v(6), v(7)),
                )
                .await
                .map(|_| ())
        }
        (WorkloadKind::Tabular, OpType::Read) => {
            let part = ctx.plan.read_partition(index).to_string();
            let from = format!(
                "{:08}",
                ctx.plan.clustering(index, ctx.workload.param("partsize"))
            );
            session
                .execute_unpaged(&st.read, (part, from))
                .await
                .map(|_| ())
        }
        (kind, OpType::Write) => {
            let key = ctx.plan.partition(index).to_string();
            let pick = ctx.plan.data_pick(index);
            let len = if kind == WorkloadKind::BasicTimeSeries {
                100 + (pick % 100) as usize // tlp-stress: 100–199 characters
            } else {
                ctx.workload.param("value_size") as usize
            };
            let data = ctx.text.slice(pick >> 8, len);
            session
                .execute_unpaged(&st.write, (key, data))
                .await
                .map(|_| ())
        }
        (_, OpType::Read) => {
            let key = ctx.plan.read_partition(index).to_string();
            session.execute_unpaged(&st.read, (key,)).await.map(|_| ())
        }
    };
    let done = Instant::now();
    Completion {
        op,
        intended: intended.unwrap_or(sent),
        sent,
        done,
        error: result.err().map(|e| classify(&e)),
        slot_limited,
    }
}

/// One thread's share of a phase.
#[derive(Clone)]
struct Plan {
    /// Global index of the phase's first operation.
    base: u64,
    /// Operations in the phase, or `None` to run until `deadline`.
    count: Option<u64>,
    /// Operations per second over all threads; `None` = unthrottled.
    rate: Option<f64>,
    start: Instant,
    /// Unthrottled phases with a duration stop sending here.
    deadline: Option<Instant>,
    /// Scheduled operations not yet sent by this time are given up (and counted).
    drain_deadline: Option<Instant>,
    measure_start: Instant,
    concurrency: usize,
    threads: u64,
}

struct TaskOutcome {
    unsent: u64,
}

/// The scheduler of one thread. With a rate, operation `n` of the phase is due at
/// `start + n / rate`, and this thread owns every `threads`-th `n`; when all its slots are busy the
/// next operation waits, and that wait is part of its latency because `intended` stays fixed.
async fn drive(
    ctx: Arc<Ctx>,
    plan: Plan,
    thread: u64,
    recorder: Arc<Mutex<IntervalRecorder>>,
    claim: Arc<AtomicU64>,
) -> TaskOutcome {
    let mut in_flight = FuturesUnordered::new();
    let record = |c: Completion| {
        if let Ok(mut r) = recorder.lock() {
            r.record(&c, plan.measure_start);
        }
    };
    let interval_nanos = plan.rate.map(|r| 1e9 / r);
    let mut relative = thread;
    let mut unsent = 0;
    loop {
        if ctx.stop.load(Ordering::Relaxed) {
            break;
        }
        let (index, intended) = match interval_nanos {
            Some(nanos) => {
                if plan.count.is_some_and(|c| relative >= c) {
                    break;
                }
                let due = plan.start + Duration::from_nanos((relative as f64 * nanos) as u64);
                relative += plan.threads;
                (plan.base + relative - plan.threads, Some(due))
            }
            None => {
                if plan.deadline.is_some_and(|d| Instant::now() >= d) {
                    break;
                }
                let n = claim.fetch_add(1, Ordering::Relaxed);
                if plan.count.is_some_and(|c| n >= c) {
                    break;
                }
                (plan.base + n, None)
            }
        };
        let mut slot_limited = false;
        if in_flight.len() >= plan.concurrency {
            while in_flight.len() >= plan.concurrency {
                if let Some(c) = in_flight.next().await {
                    record(c);
                }
            }
            if intended.is_some_and(|due| Instant::now() > due) {
                slot_limited = true;
                if let Ok(mut r) = recorder.lock() {
                    r.concurrency_limited += 1;
                }
            }
        }
        if let Some(due) = intended {
            let sleep = tokio::time::sleep_until(due.into());
            tokio::pin!(sleep);
            while Instant::now() < due {
                tokio::select! {
                    biased;
                    Some(c) = in_flight.next(), if !in_flight.is_empty() => record(c),
                    _ = &mut sleep => break,
                }
            }
            if plan.drain_deadline.is_some_and(|d| Instant::now() > d)
                || ctx.stop.load(Ordering::Relaxed)
            {
                relative -= plan.threads;
                break;
            }
        }
        in_flight.push(execute(&ctx, index, intended, slot_limited));
    }
    if let (Some(count), Some(_)) = (plan.count, interval_nanos) {
        if relative < count {
            unsent = (count - relative).div_ceil(plan.threads);
        }
    }
    while let Some(c) = in_flight.next().await {
        record(c);
    }
    TaskOutcome { unsent }
}

/// Per-operation-type totals kept by the reporter.
struct Totals {
    measured: [OpStats; 2],
    window: [Histogram<u64>; 2],
    window_started: Option<Instant>,
    window_p99s: [Vec<f64>; 2],
    warmup: [OpStats; 2],
    hiccup: Histogram<u64>,
    concurrency_limited: u64,
    last_measured_done: Option<Instant>,
}

impl Totals {
    fn new() -> Self {
        Totals {
            measured: Default::default(),
            window: [new_histogram(), new_histogram()],
            window_started: None,
            window_p99s: Default::default(),
            warmup: Default::default(),
            hiccup: new_histogram(),
            concurrency_limited: 0,
            last_measured_done: None,
        }
    }

    fn close_window(&mut self, force: bool, window: Duration, now: Instant) {
        let Some(started) = self.window_started else {
            return;
        };
        let length = now.saturating_duration_since(started);
        // A trailing window shorter than half the window length is too small to give a fair p99.
        if length >= window || (force && length * 2 >= window) {
            for i in 0..2 {
                if !self.window[i].is_empty() {
                    self.window_p99s[i]
                        .push(self.window[i].value_at_quantile(0.99) as f64 / 1000.0);
                }
                self.window[i].reset();
            }
            self.window_started = Some(now);
        }
    }
}

struct PhaseRun {
    recorders: Vec<Arc<Mutex<IntervalRecorder>>>,
    tasks: tokio::task::JoinSet<TaskOutcome>,
}

fn spawn_phase(ctx: &Arc<Ctx>, plan: &Plan) -> PhaseRun {
    let claim = Arc::new(AtomicU64::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    let mut recorders = Vec::new();
    for thread in 0..plan.threads {
        let recorder = Arc::new(Mutex::new(IntervalRecorder::default()));
        recorders.push(recorder.clone());
        tasks.spawn(drive(
            ctx.clone(),
            plan.clone(),
            thread,
            recorder,
            claim.clone(),
        ));
    }
    PhaseRun { recorders, tasks }
}

fn drain(recorders: &[Arc<Mutex<IntervalRecorder>>]) -> IntervalRecorder {
    let mut interval = IntervalRecorder::default();
    for r in recorders {
        if let Ok(mut r) = r.lock() {
            r.drain_into(&mut interval);
        }
    }
    interval
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
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let workers = options.threads.clamp(1, cores);
    // One worker: a current-thread runtime spares the hand-offs between the reporter and the worker.
    let mut builder = if workers == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(workers);
        b
    };
    let runtime = builder.enable_all().build().map_err(LoadError::Runtime)?;
    runtime.block_on(run_async(options, progress))
}

async fn run_async(
    options: &RunOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<RunResult, LoadError> {
    let session = session::connect(options).await?;
    let replication = session::create_schema(&session, options).await?;
    let statements = session::prepare(&session, options).await?;
    let ctx = Arc::new(Ctx {
        session,
        statements,
        workload: options.workload.clone(),
        plan: KeyPlan {
            seed: options.seed,
            partitions: options.partitions,
            generator: options.partition_gen,
            read_ratio: options.read_ratio,
            populate: options.populate,
        },
        text: TextPool::new(options.seed),
        stop: AtomicBool::new(false),
    });
    spawn_stop_on_ctrl_c(&ctx);
    let settings = settings_json(options, &replication);

    let populate = if options.populate > 0 {
        Some(populate(&ctx, options, progress).await)
    } else {
        None
    };

    // A short lead so that the first operations are not already late when the tasks start.
    let start = Instant::now() + Duration::from_millis(20);
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
    let plan = Plan {
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
    };
    let start_wall = SystemTime::now() + options.warmup + Duration::from_millis(20);
    let mut files = ResultFiles::create(&options.out_dir, start_wall)?;
    let mut phase = spawn_phase(&ctx, &plan);

    let mut totals = Totals::new();
    let mut unsent = 0;
    let mut running = plan.threads as usize;
    let mut ticker = tokio::time::interval_at(
        (start + Duration::from_secs(1)).into(),
        Duration::from_secs(1),
    );
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut last_tick = start;
    let summary_base = SummaryBase {
        workload: options.workload.info.name.to_string(),
        target_rate: options.rate,
        p99_window: options.p99_window,
        max_in_flight: options.max_in_flight(),
        settings,
        populate,
    };
    loop {
        let finished = tokio::select! {
            _ = ticker.tick() => false,
            joined = phase.tasks.join_next() => {
                if let Some(Ok(outcome)) = joined {
                    unsent += outcome.unsent;
                }
                running -= 1;
                if running > 0 {
                    continue; // not a reporting moment: other threads are still sending
                }
                true
            }
        };
        let now = Instant::now();
        let interval = drain(&phase.recorders);
        let hiccup_max_ms = interval.lateness.max() as f64 / 1000.0;
        let _ = totals.hiccup.add(&interval.lateness);
        let offered = offered_in(&plan, last_tick, now);
        let length = now.saturating_duration_since(last_tick);
        if interval.warmup.iter().any(|s| s.count > 0) {
            files.write_interval(
                last_tick.saturating_duration_since(measure_start),
                length,
                "warmup",
                &interval.warmup,
                0.0,
                hiccup_max_ms,
                false,
            )?;
        }
        if now > measure_start {
            files.write_interval(
                last_tick.saturating_duration_since(measure_start),
                length,
                "measured",
                &interval.measured,
                offered,
                hiccup_max_ms,
                true,
            )?;
        }
        absorb(&mut totals, &interval, measure_start, now);
        totals.close_window(finished, options.p99_window, now);
        let status = if finished {
            if ctx.stop.load(Ordering::Relaxed) {
                "interrupted"
            } else {
                "complete"
            }
        } else {
            "running"
        };
        let summary = build_summary(&summary_base, &totals, measure_start, unsent, status);
        files.write_summary(&summary)?;
        progress(&progress_line(
            now.saturating_duration_since(start),
            now < measure_start,
            offered / length.as_secs_f64().max(1e-9),
            &interval,
            hiccup_max_ms,
        ));
        last_tick = now;
        if finished {
            let table = format_result_table(&summary);
            return Ok(RunResult {
                summary,
                out_dir: options.out_dir.clone(),
                table,
            });
        }
    }
}

/// Operations the schedule offered between `from` and `to`.
fn offered_in(plan: &Plan, from: Instant, to: Instant) -> f64 {
    let (Some(rate), Some(count)) = (plan.rate, plan.count) else {
        return 0.0;
    };
    let end = plan.start + Duration::from_secs_f64(count as f64 / rate);
    let from = from.max(plan.start).max(plan.measure_start);
    let to = to.min(end);
    if to <= from {
        0.0
    } else {
        (to - from).as_secs_f64() * rate
    }
}

fn absorb(totals: &mut Totals, interval: &IntervalRecorder, measure_start: Instant, now: Instant) {
    for i in 0..2 {
        totals.measured[i].merge_from(&interval.measured[i]);
        totals.warmup[i].merge_from(&interval.warmup[i]);
        let _ = totals.window[i].add(&interval.measured[i].latency);
    }
    totals.concurrency_limited += interval.concurrency_limited;
    if interval.measured.iter().any(|s| s.count > 0) {
        totals.last_measured_done = Some(interval.last_done.unwrap_or(now));
        if totals.window_started.is_none() {
            totals.window_started = Some(measure_start);
        }
    }
}

struct SummaryBase {
    workload: String,
    target_rate: Option<f64>,
    p99_window: Duration,
    max_in_flight: usize,
    settings: serde_json::Value,
    populate: Option<PhaseSummary>,
}

fn build_summary(
    base: &SummaryBase,
    totals: &Totals,
    measure_start: Instant,
    unsent: u64,
    status: &str,
) -> Summary {
    let elapsed = totals.last_measured_done.map_or(0.0, |d| {
        d.saturating_duration_since(measure_start).as_secs_f64()
    });
    let completed: u64 = totals.measured.iter().map(|s| s.count).sum();
    let achieved = if elapsed > 0.0 {
        completed as f64 / elapsed
    } else {
        0.0
    };
    let mut ops = std::collections::BTreeMap::new();
    for op in OpType::ALL {
        let s = &totals.measured[op.index()];
        if s.count == 0 && totals.warmup[op.index()].count == 0 {
            continue;
        }
        let p99s = &totals.window_p99s[op.index()];
        ops.insert(
            op.name().to_string(),
            OpSummary {
                count: s.count,
                ok: s.count - s.errors.total(),
                errors: s.errors,
                ops_per_s: if elapsed > 0.0 {
                    s.count as f64 / elapsed
                } else {
                    0.0
                },
                latency_ms: Percentiles::of(&s.latency),
                service_time_ms: Percentiles::of(&s.service),
                avg_p99_ms: round3(if p99s.is_empty() {
                    0.0
                } else {
                    p99s.iter().sum::<f64>() / p99s.len() as f64
                }),
                max_p99_ms: round3(p99s.iter().cloned().fold(0.0, f64::max)),
                p99_windows: p99s.len(),
            },
        );
    }
    let rate_kept = base
        .target_rate
        .is_none_or(|target| (achieved - target).abs() <= target * 0.01);
    let rate_note = match base.target_rate {
        None => "unthrottled (as fast as the in-flight limit allows)".to_string(),
        Some(_) if status == "running" => "running".to_string(),
        Some(_) if status == "interrupted" => format!(
            "interrupted after {elapsed:.1} s; {unsent} scheduled operations were not sent"
        ),
        Some(target) if rate_kept && unsent == 0 => format!("kept the target rate ({target:.0} ops/s offered)"),
        Some(target) => format!(
            "OFFERED {target:.0} ops/s BUT ACHIEVED {achieved:.1} ops/s: the server could not keep up{}; \
             latencies include the time operations waited",
            if unsent > 0 {
                format!(", {unsent} scheduled operations were never sent")
            } else {
                String::new()
            }
        ),
    };
    let warm_count: u64 = totals.warmup.iter().map(|s| s.count).sum();
    let warmup = (warm_count > 0).then(|| {
        let mut latency = new_histogram();
        for s in &totals.warmup {
            let _ = latency.add(&s.latency);
        }
        PhaseSummary {
            count: warm_count,
            errors: totals.warmup.iter().map(|s| s.errors.total()).sum(),
            duration_s: 0.0,
            ops_per_s: 0.0,
            latency_p99_ms: latency.value_at_quantile(0.99) as f64 / 1000.0,
        }
    });
    Summary {
        workload: base.workload.clone(),
        target_rate: base.target_rate,
        achieved_rate: round3(achieved),
        rate_kept,
        rate_note,
        duration_s: round3(elapsed),
        status: status.to_string(),
        p99_window_s: base.p99_window.as_secs_f64(),
        ops,
        client: ClientSummary {
            hiccup_ms: Percentiles::of(&totals.hiccup),
            concurrency_limited_ops: totals.concurrency_limited,
            unsent_ops: unsent,
            max_in_flight: base.max_in_flight,
        },
        warmup,
        populate: base.populate.clone(),
        settings: base.settings.clone(),
    }
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

fn progress_line(
    elapsed: Duration,
    warming_up: bool,
    offered_per_s: f64,
    interval: &IntervalRecorder,
    hiccup_max_ms: f64,
) -> String {
    let stats = if warming_up {
        &interval.warmup
    } else {
        &interval.measured
    };
    let achieved: u64 = stats.iter().map(|s| s.count).sum();
    let mut line = format!(
        "[{:>6.0}s]{} offered {:>7.0}/s achieved {:>7} /s",
        elapsed.as_secs_f64(),
        if warming_up { " warm-up" } else { "" },
        offered_per_s,
        achieved
    );
    let mut errors = 0;
    for op in OpType::ALL {
        let s = &stats[op.index()];
        errors += s.errors.total();
        if s.count > 0 {
            line.push_str(&format!(
                " | {} p99 {:.2} ms",
                op.name(),
                s.latency.value_at_quantile(0.99) as f64 / 1000.0
            ));
        }
    }
    line.push_str(&format!(
        " | errors {errors} | client lag max {hiccup_max_ms:.1} ms"
    ));
    line
}

/// Writes `options.populate` rows as fast as the in-flight limit allows, with progress; not measured.
async fn populate(
    ctx: &Arc<Ctx>,
    options: &RunOptions,
    progress: &mut dyn FnMut(&str),
) -> PhaseSummary {
    let start = Instant::now();
    let plan = Plan {
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
    };
    let mut phase = spawn_phase(ctx, &plan);
    let mut running = options.threads;
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
            _ = phase.tasks.join_next() => {
                running -= 1;
                if running > 0 {
                    continue;
                }
                true
            }
        };
        let interval = drain(&phase.recorders);
        for s in &interval.warmup {
            done += s.count;
            errors += s.errors.total();
            let _ = latency.add(&s.latency);
        }
        {
            progress(&format!(
                "[populate] {done}/{} rows ({:.0}%), {:.0} rows/s, errors {errors}",
                options.populate,
                done as f64 * 100.0 / options.populate as f64,
                done as f64 / start.elapsed().as_secs_f64().max(1e-9)
            ));
        }
        if finished {
            let seconds = start.elapsed().as_secs_f64();
            return PhaseSummary {
                count: done,
                errors,
                duration_s: round3(seconds),
                ops_per_s: round3(done as f64 / seconds.max(1e-9)),
                latency_p99_ms: latency.value_at_quantile(0.99) as f64 / 1000.0,
            };
        }
    }
}

fn settings_json(o: &RunOptions, replication: &str) -> serde_json::Value {
    serde_json::json!({
        "hosts": o.hosts,
        "port": o.port,
        "dc": o.dc,
        "keyspace": o.keyspace,
        "replication": replication,
        "compaction": o.compaction.as_ref().map(|c| c.to_string()),
        "consistency": format!("{:?}", o.consistency),
        "serial_consistency": format!("{:?}", o.serial_consistency),
        "partitions": o.partitions,
        "partition_generator": format!("{:?}", o.partition_gen).to_lowercase(),
        "concurrency_per_thread": o.concurrency,
        "threads": o.threads,
        "connections_per_host": o.connections_per_host,
        "read_ratio": o.read_ratio,
        "populate": o.populate,
        "warmup_s": o.warmup.as_secs_f64(),
        "request_timeout_s": o.request_timeout.as_secs_f64(),
        "seed": o.seed,
        "workload_parameters": o.workload.params.iter().map(|(k, v)| (k.to_string(), *v)).collect::<std::collections::BTreeMap<_, _>>(),
    })
}
