//! Running a plan: a fresh cluster per configuration, populate once, then every cell, each written
//! atomically (built in a hidden sibling directory, renamed when complete), so that running the same
//! plan into the same directory again skips what is finished.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cqlbench_cluster::{ClusterState, Home};
use cqlbench_metrics::LiveMetrics;
use cqlbench_probe::ProbeOptions;
use cqlbench_results::{
    ConfigRecord, JvmFlags, NodeFlags, Probe, RunStatus, Window, FORMAT_VERSION, SUMMARY_FILE,
};

use crate::error::{CampaignError, IoContext};
use crate::figures::{self, CpuSampler};
use crate::matrix::{self, Cell, CellRate};
use crate::plan::{Plan, RateMode};
use crate::slo::{meets_slo, read_summary};
use crate::wall_time::{self, WallTime};

/// The copy of the plan a campaign directory belongs to.
pub const PLAN_FILE: &str = "plan.toml";

/// What a finished campaign did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Cells run now.
    pub ran: usize,
    /// Cells found finished from an earlier run.
    pub skipped: usize,
    /// The seed tables, as printed.
    pub tables: String,
    /// Where the wall time went, measured windows first.
    pub wall: WallTime,
}

/// Runs `plan` into `dir`. `progress` gets one line per event and, during a cell, one per second.
/// With `live`, each cell's figures (labelled with its configuration and rate) and the campaign's
/// progress go there as they are measured.
pub fn run(
    plan: &Plan,
    dir: &Path,
    home: &Home,
    options: &CampaignOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<Outcome, CampaignError> {
    let started = Instant::now();
    let live = options.live.as_ref();
    let mut probe_time = Duration::ZERO;
    prepare_directory(plan, dir, home, options.probe, &mut probe_time, progress)?;
    if options.retry_doubtful {
        let moved = crate::doubtful::set_aside(plan, dir)?;
        progress(&format!(
            "--retry-doubtful: {} doubtful cell(s) set aside to run again{}",
            moved.len(),
            moved
                .iter()
                .map(|p| format!("\n  {}", p.display()))
                .collect::<String>()
        ));
    }
    // Ctrl-C is noted, never fatal: the current cell stops (the load sees it too) and the cluster
    // is stopped before the campaign returns.
    cqlbench_cluster::interrupt::defer();
    remove_leftover_clusters(plan, home, progress)?;
    let mut tracker = Tracker::new(plan, live.cloned());
    tracker.wall.probe = probe_time;
    for (index, config) in plan.configs.iter().enumerate() {
        let config_dir = dir.join(&config.dir_name);
        tracker.skipped += count_finished(plan, index, dir);
        if next_cell(plan, index, dir)?.is_none() {
            progress(&format!(
                "{}: every cell is finished in {} (skipped)",
                config.name,
                config_dir.display()
            ));
            tracker.configs_left -= 1;
            continue;
        }
        if cqlbench_cluster::interrupt::received() {
            return Err(CampaignError::Interrupted);
        }
        progress(&format!(
            "{}: starting a fresh cluster ({})",
            config.name,
            cqlbench_cluster::lifecycle::describe_spec(&config.spec)
        ));
        let cluster_started = Instant::now();
        let mut inside = Duration::ZERO;
        cqlbench_cluster::with_cluster(home, &config.spec, progress, |state, progress| {
            wall_time::timed(&mut inside, || {
                run_config(plan, index, dir, state, &mut tracker, progress)
            })
        })?;
        // Its data is of no further use: the next run of this configuration starts fresh.
        cqlbench_cluster::destroy(home, &config.spec.name, progress)?;
        tracker.wall.clusters += cluster_started.elapsed().saturating_sub(inside);
        tracker.configs_left -= 1;
    }
    let tables = crate::tables::render(plan, dir);
    std::fs::write(dir.join("tables.txt"), &tables)
        .context(|| format!("writing {}", dir.join("tables.txt").display()))?;
    // report.md and report.html: the same tables with every cell's percentiles and the charts.
    let order: Vec<String> = plan.configs.iter().map(|c| c.dir_name.clone()).collect();
    cqlbench_report::write_report(&cqlbench_report::discover(dir, &order)?, dir)?;
    tracker.wall.total = started.elapsed();
    Ok(Outcome {
        ran: tracker.ran,
        skipped: tracker.skipped,
        tables,
        wall: tracker.wall,
    })
}

/// Clusters of this plan that still exist belong to a campaign that was killed: their nodes may
/// still run (and hold the addresses the next cluster needs). Every configuration starts fresh anyway.
fn remove_leftover_clusters(
    plan: &Plan,
    home: &Home,
    progress: &mut dyn FnMut(&str),
) -> Result<(), CampaignError> {
    for config in &plan.configs {
        if home.cluster_dir(&config.spec.name).exists() {
            progress(&format!(
                "removing cluster {} left by an earlier run of this plan",
                config.spec.name
            ));
            cqlbench_cluster::destroy(home, &config.spec.name, progress)?;
        }
    }
    Ok(())
}

/// Where the campaign is: for the progress display.
struct Tracker {
    started: Instant,
    total: usize,
    ran: usize,
    skipped: usize,
    configs_left: usize,
    per_cell: Duration,
    live: Option<LiveMetrics>,
    wall: WallTime,
}

impl Tracker {
    fn new(plan: &Plan, live: Option<LiveMetrics>) -> Self {
        let total = (0..plan.configs.len())
            .map(|c| matrix::probe_count(plan, c))
            .sum();
        Tracker {
            started: Instant::now(),
            total,
            ran: 0,
            skipped: 0,
            configs_left: plan.configs.len(),
            per_cell: plan.load.duration + plan.load.warmup + matrix::CELL_OVERHEAD,
            live,
            wall: WallTime::default(),
        }
    }

    /// The live figures for the cell about to run (its labels, the cells finished so far).
    fn live_for(&self, plan: &Plan, cell: &Cell) -> Option<LiveMetrics> {
        let live = self.live.as_ref()?;
        live.set_labels(&[
            ("client", "0".to_string()),
            ("config", plan.configs[cell.config].name.clone()),
            ("rate", cell.rate.label()),
        ]);
        live.set_campaign_progress(self.ran + self.skipped, self.total);
        Some(live.clone())
    }

    /// `[cell 2/4] G1 jdk17 @ 70 % (7,123 ops/s) — elapsed 3m 10s, about 2m 05s left`
    fn announcement(&self, place: &str, plan: &Plan, cell: &Cell, rate: Option<f64>) -> String {
        format!(
            "{place} {}{} — elapsed {}, about {} left",
            cell.describe(plan),
            rate.map_or(String::new(), |r| format!(
                " ({} ops/s)",
                matrix::format_rate(r)
            )),
            matrix::format_duration(self.started.elapsed()),
            matrix::format_duration(self.time_left())
        )
    }

    fn position(&self) -> usize {
        self.ran + self.skipped + 1
    }

    /// Remaining cells at the plan's cell length, plus the clusters still to start and stop.
    fn time_left(&self) -> Duration {
        let cells_left = self.total.saturating_sub(self.ran + self.skipped) as u32;
        self.per_cell * cells_left
            + (matrix::CLUSTER_START + matrix::CLUSTER_STOP)
                * self.configs_left.saturating_sub(1) as u32
    }
}

/// The quick probe (about 20 s), its scratch files where the clusters keep their data.
fn quick_probe(home: &Home, progress: &mut dyn FnMut(&str)) -> Result<Probe, CampaignError> {
    progress("machine probe (quick; --no-probe skips it)");
    let options = ProbeOptions {
        quick: true,
        data_dir: home.clusters_dir(),
        cache: home.root().to_path_buf(),
    };
    let probe = cqlbench_probe::probe(&options, &mut |step| progress(&format!("probe: {step}")))?;
    progress(&format!(
        "machine probe done in {:.0} s: {}",
        probe.seconds,
        cqlbench_report::probe_machine_line(&probe)
    ));
    Ok(probe)
}

/// How a campaign runs beyond its plan.
#[derive(Default)]
pub struct CampaignOptions {
    /// Serve the cells' live figures (`--prometheus`).
    pub live: Option<LiveMetrics>,
    /// Take the quick machine probe before the first cell (not `--no-probe`).
    pub probe: bool,
    /// Run the doubtful cells again, their results kept beside (`--retry-doubtful`).
    pub retry_doubtful: bool,
}

/// A plan's workload file, copied beside the plan's copy so that the campaign directory holds all
/// it ran (a copy that differs from the file is refused, as a different plan is).
fn keep_workload_file(plan: &Plan, dir: &Path) -> Result<(), CampaignError> {
    let workload = Path::new(&plan.load.workload);
    let (true, Some(name)) = (
        cqlbench_workload::is_file_argument(&plan.load.workload),
        workload.file_name(),
    ) else {
        return Ok(());
    };
    let text = std::fs::read(workload).context(|| format!("reading {}", workload.display()))?;
    let copy = dir.join(name);
    match std::fs::read(&copy) {
        Ok(existing) if existing != text => Err(CampaignError::Directory(format!(
            "{} holds the results of another workload file ({} differs): choose another -o DIR",
            dir.display(),
            copy.display()
        ))),
        Ok(_) => Ok(()),
        Err(_) => std::fs::write(&copy, &text).context(|| format!("writing {}", copy.display())),
    }
}

fn prepare_directory(
    plan: &Plan,
    dir: &Path,
    home: &Home,
    probe: bool,
    probe_time: &mut Duration,
    progress: &mut dyn FnMut(&str),
) -> Result<(), CampaignError> {
    std::fs::create_dir_all(dir).context(|| format!("creating {}", dir.display()))?;
    let plan_copy = dir.join(PLAN_FILE);
    match std::fs::read_to_string(&plan_copy) {
        Ok(existing) if existing != plan.source => {
            return Err(CampaignError::Directory(format!(
                "{} holds the results of another plan ({} differs): choose another -o DIR",
                dir.display(),
                plan_copy.display()
            )))
        }
        Ok(_) => {}
        Err(_) => std::fs::write(&plan_copy, &plan.source)
            .context(|| format!("writing {}", plan_copy.display()))?,
    }
    keep_workload_file(plan, dir)?;
    if !dir.join(cqlbench_results::ENVIRONMENT_FILE).exists() {
        let mut record = crate::environment::record(plan, dir, home);
        if probe {
            record.probe = Some(wall_time::timed(probe_time, || {
                quick_probe(home, progress)
            })?);
        }
        record.write(dir)?;
    }
    // Cells that were being built when a previous run died.
    for config in &plan.configs {
        let config_dir = dir.join(&config.dir_name);
        for entry in std::fs::read_dir(&config_dir)
            .into_iter()
            .flatten()
            .flatten()
        {
            if entry.file_name().to_string_lossy().ends_with(".partial") {
                std::fs::remove_dir_all(entry.path())
                    .context(|| format!("removing {}", entry.path().display()))?;
            }
        }
    }
    Ok(())
}

fn is_finished(cell_dir: &Path) -> bool {
    cell_dir.join(SUMMARY_FILE).is_file()
}

/// Finished cells of a configuration (not its `populate` run, nor anything else in its directory).
fn count_finished(plan: &Plan, config: usize, dir: &Path) -> usize {
    if let RateMode::Slo { .. } = plan.load.mode {
        // Probes are named by their rate.
        let config_dir = dir.join(&plan.configs[config].dir_name);
        return std::fs::read_dir(config_dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().parse::<f64>().is_ok())
            .filter(|e| is_finished(&e.path()))
            .count();
    }
    matrix::config_cells(plan, config)
        .iter()
        .filter(|c| is_finished(&c.dir(plan, dir)))
        .count()
}

/// The configuration's next unfinished cell, decided from the finished ones (a sweep's fractions
/// need its maximum, an SLO search's next probe the verdicts so far); `None` when all are done.
pub fn next_cell(plan: &Plan, config: usize, dir: &Path) -> Result<Option<Cell>, CampaignError> {
    let cells = matrix::config_cells(plan, config);
    match &plan.load.mode {
        RateMode::Fixed(_) | RateMode::Sweep { .. } => {
            Ok(cells.into_iter().find(|c| !is_finished(&c.dir(plan, dir))))
        }
        RateMode::Slo {
            p99_ms,
            low,
            high,
            probes,
        } => {
            let (mut good, mut bad) = (*low, *high);
            for _ in 0..*probes {
                let rate = matrix::slo_midpoint(good, bad);
                if rate <= good || rate >= bad {
                    return Ok(None); // the bracket is as narrow as whole rates go
                }
                let cell = Cell {
                    rate: CellRate::Probe(rate),
                    ..cells[0].clone()
                };
                let Some(summary) = read_summary(&cell.dir(plan, dir)) else {
                    return Ok(Some(cell));
                };
                if meets_slo(&summary, *p99_ms) {
                    good = rate;
                } else {
                    bad = rate;
                }
            }
            Ok(None)
        }
    }
}

/// The rate a cell runs at (`None` = unthrottled).
fn cell_rate(plan: &Plan, cell: &Cell, dir: &Path) -> Result<Option<f64>, CampaignError> {
    Ok(match cell.rate {
        CellRate::Fixed(rate) | CellRate::Probe(rate) => Some(rate),
        CellRate::Max => None,
        CellRate::FractionOfMax(fraction) => {
            let max_dir = Cell {
                rate: CellRate::Max,
                repeat: None,
                ..cell.clone()
            }
            .dir(plan, dir);
            let max = read_summary(&max_dir)
                .map(|s| s.achieved_rate)
                .filter(|r| *r > 0.0)
                .ok_or_else(|| {
                    CampaignError::Directory(format!(
                        "{}: the unthrottled run found no maximum (no successful operation)",
                        max_dir.display()
                    ))
                })?;
            Some((max * fraction).round().max(1.0))
        }
    })
}

fn run_config(
    plan: &Plan,
    config: usize,
    dir: &Path,
    state: &ClusterState,
    tracker: &mut Tracker,
    progress: &mut dyn FnMut(&str),
) -> Result<(), CampaignError> {
    let config_dir = dir.join(&plan.configs[config].dir_name);
    std::fs::create_dir_all(&config_dir)
        .context(|| format!("creating {}", config_dir.display()))?;
    write_jvm_flags(state, &config_dir)?;
    // The report labels the configuration's rows with its name from the plan.
    let config_plan = &plan.configs[config];
    ConfigRecord::new(&config_plan.name, &config_plan.spec).write(&config_dir)?;
    let hosts: Vec<String> = state
        .cql_contact_points()
        .iter()
        .map(|a| a.to_string())
        .collect();
    if plan.load.populate > 0 {
        wall_time::timed(&mut tracker.wall.populate, || {
            populate(plan, &config_dir, hosts.clone(), progress)
        })?;
    }
    while let Some(cell) = next_cell(plan, config, dir)? {
        if cqlbench_cluster::interrupt::received() {
            return Err(CampaignError::Interrupted);
        }
        run_cell(plan, &cell, dir, state, hosts.clone(), tracker, progress)?;
        tracker.ran += 1;
        if let Some(live) = &tracker.live {
            live.set_campaign_progress(tracker.ran + tracker.skipped, tracker.total);
        }
    }
    Ok(())
}

/// The JVM flags every node really runs with (from `jcmd VM.flags`, recorded by `cluster up`), and
/// the Security Manager shim when the nodes run with it (as `cluster status` shows it; `null` without).
fn write_jvm_flags(state: &ClusterState, config_dir: &Path) -> Result<(), CampaignError> {
    let nodes = state
        .nodes
        .iter()
        .map(|n| NodeFlags {
            node: n.index,
            address: n.address.to_string(),
            effective_collector: n.effective_collector.clone(),
            effective_jvm_flags: n.effective_jvm_flags.clone(),
            jvm_args: n.jvm_args.clone(),
        })
        .collect();
    let record = JvmFlags {
        version: FORMAT_VERSION,
        cluster: state.name.clone(),
        spec: state.spec.clone(),
        jdk: state.jdk.clone(),
        security_manager_shim: state.security_manager_shim.clone(),
        nodes,
    };
    Ok(record.write(config_dir)?)
}

/// Writes the plan's `--populate` rows once into the fresh cluster (results in `<config>/populate`).
fn populate(
    plan: &Plan,
    config_dir: &Path,
    hosts: Vec<String>,
    progress: &mut dyn FnMut(&str),
) -> Result<(), CampaignError> {
    let out = config_dir.join("populate");
    let _ = std::fs::remove_dir_all(&out);
    progress(&format!("populating {} rows", plan.load.populate));
    let options = plan.load.populate_options(hosts, &out)?;
    let result = cqlbench_load::run(&options, &mut |line| progress(&format!("  {line}")))?;
    if result.summary.status == RunStatus::Interrupted || cqlbench_cluster::interrupt::received() {
        return Err(CampaignError::Interrupted);
    }
    Ok(())
}

/// `<config>/.25000.partial` (or `.25000-2.partial` for repeat 2): the cell being built, renamed
/// to its place when complete. Every partial directory lives in the configuration's directory, so
/// that leftovers of a killed run are found and removed in one place.
fn partial_dir(plan: &Plan, cell: &Cell, dir: &Path) -> PathBuf {
    let config_dir = dir.join(&plan.configs[cell.config].dir_name);
    let label = cell.rate.label();
    match cell.repeat {
        Some(repeat) => config_dir.join(format!(".{label}-{repeat}.partial")),
        None => config_dir.join(format!(".{label}.partial")),
    }
}

fn run_cell(
    plan: &Plan,
    cell: &Cell,
    dir: &Path,
    state: &ClusterState,
    hosts: Vec<String>,
    tracker: &mut Tracker,
    progress: &mut dyn FnMut(&str),
) -> Result<(), CampaignError> {
    let final_dir = cell.dir(plan, dir);
    let partial = partial_dir(plan, cell, dir);
    let _ = std::fs::remove_dir_all(&partial);
    std::fs::create_dir_all(&partial).context(|| format!("creating {}", partial.display()))?;
    let rate = cell_rate(plan, cell, dir)?;
    let place = format!("[cell {}/{}]", tracker.position(), tracker.total);
    progress(&tracker.announcement(&place, plan, cell, rate));
    let mut options = plan
        .load
        .cell_options(rate, cell.duration, hosts, &partial)?;
    options.live = tracker.live_for(plan, cell);
    let sampler = CpuSampler::start(state.nodes.iter().filter_map(|n| n.pid).collect());
    let load_started = Instant::now();
    let result = cqlbench_load::run(&options, &mut |line| progress(&format!("{place} {line}")));
    let load_time = load_started.elapsed();
    let result = match result {
        Ok(result) => result,
        Err(error) => {
            drop(sampler);
            let _ = std::fs::remove_dir_all(&partial);
            return Err(error.into());
        }
    };
    let summary = &result.summary;
    let window = Window {
        start_unix_s: summary.measured_start_unix_s,
        end_unix_s: summary.measured_start_unix_s + summary.duration_s,
    };
    let cpu = sampler.finish(window);
    if summary.status == RunStatus::Interrupted || cqlbench_cluster::interrupt::received() {
        let _ = std::fs::remove_dir_all(&partial);
        return Err(CampaignError::Interrupted);
    }
    tracker.wall.add_load_run(summary.duration_s, load_time);
    let successful = summary.successful_ops();
    let figures_started = Instant::now();
    for (node, cpu) in state.nodes.iter().zip(cpu) {
        let node_dir = partial.join(format!("node{}", node.index));
        figures::collect_node(node, &options.keyspace, window, cpu, successful, &node_dir)?;
    }
    tracker.wall.cell_figures += figures_started.elapsed();
    if let Some(parent) = final_dir.parent() {
        std::fs::create_dir_all(parent).context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::rename(&partial, &final_dir).context(|| {
        format!(
            "moving the finished cell {} to {}",
            partial.display(),
            final_dir.display()
        )
    })?;
    progress(&format!(
        "{place} done: {:.0} ops/s achieved{} -> {}",
        summary.achieved_rate,
        if summary.status == RunStatus::Complete {
            String::new()
        } else {
            format!(" (status {})", summary.status)
        },
        final_dir.display()
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::parse_plan;
    use crate::slo::slo_capacity;
    use serde_json::Value;

    /// The SLO verdict of a summary given as JSON.
    fn passes(summary: &Value, p99_ms: f64) -> bool {
        meets_slo(&serde_json::from_value(summary.clone()).unwrap(), p99_ms)
    }

    const BASE: &str =
        "[[config]]\nname = \"G1\"\n[load]\nworkload = \"KeyValue\"\nduration = \"10s\"\n";

    fn finish(dir: &Path, summary: Value) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("summary.json"), summary.to_string()).unwrap();
    }

    fn probe_summary(p99_ms: f64) -> Value {
        serde_json::json!({"status": "complete", "rate_kept": true, "achieved_rate": 1.0,
            "ops": {"read": {"count": 10, "latency_ms": {"p99": p99_ms}},
                    "write": {"count": 10, "latency_ms": {"p99": 1.0}}}})
    }

    #[test]
    fn slo_probes_bisect_on_the_finished_verdicts() {
        let plan = parse_plan(
            "p.toml",
            &format!("{BASE}[slo]\np99-ms = 10\nlow = 1000\nhigh = 9000\nprobes = 3\n"),
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let next = || next_cell(&plan, 0, dir.path()).unwrap().map(|c| c.rate);
        assert_eq!(next(), Some(CellRate::Probe(5000.0)));
        finish(&dir.path().join("G1/5000"), probe_summary(3.0)); // passes: go up
        assert_eq!(next(), Some(CellRate::Probe(7000.0)));
        finish(&dir.path().join("G1/7000"), probe_summary(30.0)); // misses: go down
        assert_eq!(next(), Some(CellRate::Probe(6000.0)));
        finish(&dir.path().join("G1/6000"), probe_summary(9.0));
        assert_eq!(next(), None, "three probes");
        assert_eq!(slo_capacity(&plan, 0, dir.path()), Some(6000.0));
        let tables = crate::tables::render(&plan, dir.path());
        assert!(tables.contains("Capacity at SLO"), "{tables}");
        let capacity = tables.lines().last().unwrap();
        assert!(
            capacity.starts_with("G1") && capacity.ends_with(" 6000 ops/s"),
            "{tables}"
        );
    }

    #[test]
    fn a_probe_with_failures_or_a_missed_rate_does_not_pass() {
        let mut failed = probe_summary(1.0);
        failed["rate_kept"] = Value::Bool(false);
        assert!(!passes(&failed, 10.0));
        assert!(passes(&probe_summary(10.0), 10.0));
        assert!(!passes(&probe_summary(10.5), 10.0));
    }

    fn cluster_state(
        dir: &Path,
        jdk_major: u32,
        shim: Option<cqlbench_cluster::compat::SecurityManagerShim>,
    ) -> ClusterState {
        let node_dir = dir.join("node1");
        ClusterState {
            name: "p-1".to_string(),
            dir: dir.to_path_buf(),
            spec: cqlbench_cluster::ClusterSpec::default(),
            jdk: cqlbench_cluster::Jdk {
                home: PathBuf::from(format!("/usr/lib/jvm/jdk-{jdk_major}")),
                major: jdk_major,
                version: format!("{jdk_major}.0.3"),
            },
            security_manager_shim: shim,
            nodes: vec![cqlbench_cluster::NodeState {
                index: 1,
                address: std::net::Ipv4Addr::new(127, 0, 0, 1),
                native_port: 9042,
                storage_port: 7000,
                jmx_port: 7199,
                pid: None,
                pid_start_ticks: None,
                system_log: node_dir.join("logs/system.log"),
                stdout_log: node_dir.join("logs/stdout.log"),
                gc_log: node_dir.join("logs/gc.log"),
                dir: node_dir,
                tokens: vec![0],
                datacenter: None,
                rack: None,
                jvm_args: vec!["-Xmx512M".to_string()],
                effective_jvm_flags: vec!["-XX:+UseG1GC".to_string()],
                effective_collector: Some("UseG1GC".to_string()),
            }],
        }
    }

    #[test]
    fn jvm_flags_json_records_the_security_manager_shim_of_the_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let shim = cqlbench_cluster::compat::SecurityManagerShim {
            replaced_class: cqlbench_cluster::compat::REPLACED_CLASS.to_string(),
            reason: "JDK 25 cannot install a Security Manager; …".to_string(),
            source_fnv64: "fda9dde4a7563fee".to_string(),
            classes_dir: dir
                .path()
                .join("compat/5.0.9/jdk25-fda9dde4a7563fee/classes"),
            javac: PathBuf::from("/usr/lib/jvm/temurin-25-jdk-amd64/bin/javac"),
        };
        let read = |config_dir: &Path| -> Value {
            let text = std::fs::read_to_string(config_dir.join("jvm-flags.json")).unwrap();
            serde_json::from_str(&text).unwrap()
        };

        let with = dir.path().join("G1-jdk25");
        std::fs::create_dir_all(&with).unwrap();
        write_jvm_flags(&cluster_state(dir.path(), 25, Some(shim.clone())), &with).unwrap();
        let record = read(&with);
        // The same facts as `cluster status --json` (the same record, read back whole).
        let recorded: cqlbench_cluster::compat::SecurityManagerShim =
            serde_json::from_value(record["security_manager_shim"].clone())
                .unwrap_or_else(|e| panic!("{e}: {record}"));
        assert_eq!(recorded, shim);
        assert_eq!(
            record["security_manager_shim"]["replaced_class"],
            "org.apache.cassandra.security.ThreadAwareSecurityManager"
        );
        assert_eq!(record["jdk"]["major"], 25);
        assert_eq!(record["nodes"][0]["effective_collector"], "UseG1GC");

        // Without the shim the key is there and null: absence is recorded too.
        let without = dir.path().join("G1-jdk17");
        std::fs::create_dir_all(&without).unwrap();
        write_jvm_flags(&cluster_state(dir.path(), 17, None), &without).unwrap();
        let record = read(&without);
        assert_eq!(
            record.get("security_manager_shim"),
            Some(&Value::Null),
            "{record}"
        );
    }

    #[test]
    fn sweep_fractions_run_at_a_share_of_the_maximum_found() {
        let plan = parse_plan(
            "p.toml",
            &format!("{BASE}repeats = 2\n[sweep]\nfractions = [0.35]\nmax-duration = \"20s\"\n"),
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let first = next_cell(&plan, 0, dir.path()).unwrap().unwrap();
        assert_eq!(
            (first.rate, first.repeat, first.duration),
            (CellRate::Max, None, Duration::from_secs(20))
        );
        finish(
            &dir.path().join("G1/max"),
            serde_json::json!({"achieved_rate": 10_000.0}),
        );
        let second = next_cell(&plan, 0, dir.path()).unwrap().unwrap();
        assert_eq!(second.rate, CellRate::FractionOfMax(0.35));
        assert_eq!(second.repeat, Some(1));
        assert_eq!(
            second.dir(&plan, dir.path()),
            dir.path().join("G1/0.35-of-max/1")
        );
        assert_eq!(cell_rate(&plan, &second, dir.path()).unwrap(), Some(3500.0));
        assert_eq!(
            partial_dir(&plan, &second, dir.path()),
            dir.path().join("G1/.0.35-of-max-1.partial")
        );
        finish(&dir.path().join("G1/populate"), serde_json::json!({}));
        assert_eq!(
            count_finished(&plan, 0, dir.path()),
            1,
            "populate is not a cell"
        );
    }
}
