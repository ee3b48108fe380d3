//! The matrix: which cells a plan asks for, where each one's results live, and how long it all takes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::plan::{Plan, RateMode};

/// What decides a cell's rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CellRate {
    /// A fixed rate in ops/s.
    Fixed(f64),
    /// Unthrottled: the sweep's maximum.
    Max,
    /// A fraction of the maximum the sweep found.
    FractionOfMax(f64),
    /// An SLO bisection probe at this rate.
    Probe(f64),
}

impl CellRate {
    /// The directory name of the cell (and its column in the tables).
    pub fn label(self) -> String {
        match self {
            CellRate::Fixed(rate) | CellRate::Probe(rate) => format_rate(rate),
            CellRate::Max => "max".to_string(),
            CellRate::FractionOfMax(f) => format!("{f}-of-max"),
        }
    }
}

/// `25000`, or `2500.5` when the rate is not whole.
pub fn format_rate(rate: f64) -> String {
    if rate.fract() == 0.0 {
        format!("{}", rate as u64)
    } else {
        format!("{rate}")
    }
}

/// One cell: a configuration at one rate, one repeat.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub config: usize,
    pub rate: CellRate,
    /// 1-based; `None` when the plan has a single repeat (no repeat directory level).
    pub repeat: Option<u32>,
    pub duration: Duration,
}

impl Cell {
    /// `DIR/<config>/<rate>[/<repeat>]`.
    pub fn dir(&self, plan: &Plan, campaign_dir: &Path) -> PathBuf {
        let mut dir = campaign_dir
            .join(&plan.configs[self.config].dir_name)
            .join(self.rate.label());
        if let Some(repeat) = self.repeat {
            dir = dir.join(repeat.to_string());
        }
        dir
    }

    pub fn describe(&self, plan: &Plan) -> String {
        let rate = match self.rate {
            CellRate::Fixed(r) => format!("{} ops/s", format_rate(r)),
            CellRate::Max => "unthrottled (maximum)".to_string(),
            CellRate::FractionOfMax(f) => format!("{:.0} % of the maximum", f * 100.0),
            CellRate::Probe(r) => format!("SLO probe at {} ops/s", format_rate(r)),
        };
        let repeat = self
            .repeat
            .map_or(String::new(), |r| format!(", repeat {r}"));
        format!("{} @ {rate}{repeat}", plan.configs[self.config].name)
    }
}

fn repeats(plan: &Plan) -> Vec<Option<u32>> {
    if plan.load.repeats <= 1 {
        vec![None]
    } else {
        (1..=plan.load.repeats).map(Some).collect()
    }
}

/// The cells of one configuration known before any runs (an SLO search's probes depend on the
/// results, so they are listed as its first probe only; see [`probe_count`]).
pub fn config_cells(plan: &Plan, config: usize) -> Vec<Cell> {
    let load = &plan.load;
    let cell = |rate, repeat| Cell {
        config,
        rate,
        repeat,
        duration: load.duration,
    };
    match &load.mode {
        RateMode::Fixed(rates) => rates
            .iter()
            .flat_map(|r| repeats(plan).into_iter().map(move |rep| (*r, rep)))
            .map(|(r, rep)| cell(CellRate::Fixed(r), rep))
            .collect(),
        RateMode::Sweep {
            fractions,
            max_duration,
        } => {
            let mut cells = vec![Cell {
                config,
                rate: CellRate::Max,
                repeat: None,
                duration: *max_duration,
            }];
            for f in fractions {
                for rep in repeats(plan) {
                    cells.push(cell(CellRate::FractionOfMax(*f), rep));
                }
            }
            cells
        }
        RateMode::Slo { low, high, .. } => {
            vec![cell(CellRate::Probe(slo_midpoint(*low, *high)), None)]
        }
    }
}

/// The rate between a passing and a failing one that a bisection probes next (whole ops/s).
pub fn slo_midpoint(low: f64, high: f64) -> f64 {
    ((low + high) / 2.0).round()
}

/// How many cells a configuration runs (SLO: every probe).
pub fn probe_count(plan: &Plan, config: usize) -> usize {
    match plan.load.mode {
        RateMode::Slo { probes, .. } => probes as usize,
        _ => config_cells(plan, config).len(),
    }
}

/// Assumptions of the estimate, printed with it.
pub const CLUSTER_START: Duration = Duration::from_secs(45);
pub const CLUSTER_STOP: Duration = Duration::from_secs(15);
/// Schema check, connections, drain and the server-side figures of one cell.
pub const CELL_OVERHEAD: Duration = Duration::from_secs(5);
/// Rows per second the populate step is assumed to write.
pub const POPULATE_ROWS_PER_S: f64 = 10_000.0;

/// Estimated wall time of the whole campaign.
pub fn estimate(plan: &Plan) -> Duration {
    let populate = Duration::from_secs_f64(plan.load.populate as f64 / POPULATE_ROWS_PER_S);
    let mut total = Duration::ZERO;
    for config in 0..plan.configs.len() {
        total += CLUSTER_START + populate + CLUSTER_STOP;
        let cells = config_cells(plan, config);
        let per_cell = |c: &Cell| c.duration + plan.load.warmup + CELL_OVERHEAD;
        total += cells.iter().map(per_cell).sum::<Duration>();
        if let RateMode::Slo { probes, .. } = plan.load.mode {
            total += per_cell(&cells[0]) * probes.saturating_sub(1);
        }
    }
    total
}

/// `1h 02m 03s`.
pub fn format_duration(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, min, sec) => format!("{min}m {sec:02}s"),
        (h, min, sec) => format!("{h}h {min:02}m {sec:02}s"),
    }
}

/// The `--dry-run` text: every cell with its directory, and the estimate with its assumptions.
pub fn describe(plan: &Plan, campaign_dir: &Path) -> String {
    let mut out = String::new();
    let load = &plan.load;
    out.push_str(&format!(
        "campaign: {} configuration(s), workload {} {}, {} per cell{}\n",
        plan.configs.len(),
        load.workload,
        load.args.join(" "),
        format_duration(load.duration),
        if load.warmup.is_zero() {
            String::new()
        } else {
            format!(" after {} of warm-up", format_duration(load.warmup))
        }
    ));
    let mut count = 0;
    for (index, config) in plan.configs.iter().enumerate() {
        let spec = &config.spec;
        out.push_str(&format!(
            "\n{} — {} node(s), Cassandra {}, JDK {}, {}{}, heap {}{}\n",
            config.name,
            spec.nodes,
            spec.cassandra_version,
            match &spec.jdk {
                cqlbench_cluster::JdkChoice::Auto => "default".to_string(),
                cqlbench_cluster::JdkChoice::Major(m) => m.to_string(),
                cqlbench_cluster::JdkChoice::Path(p) => p.display().to_string(),
            },
            spec.gc,
            match spec.gc_profile {
                cqlbench_cluster::GcProfile::Default => String::new(),
                cqlbench_cluster::GcProfile::ShenandoahTuned => " (shenandoah-tuned)".to_string(),
            },
            cqlbench_units::format_jvm_size(spec.heap_bytes),
            if spec.jvm_opts.is_empty() {
                String::new()
            } else {
                format!(", {}", spec.jvm_opts.join(" "))
            }
        ));
        if load.populate > 0 {
            out.push_str(&format!("  populate {} rows once\n", load.populate));
        }
        for cell in config_cells(plan, index) {
            count += 1;
            out.push_str(&format!(
                "  cell {count}: {} -> {}\n",
                cell.describe(plan),
                cell.dir(plan, campaign_dir).display()
            ));
        }
        if let RateMode::Slo {
            p99_ms,
            low,
            high,
            probes,
        } = load.mode
        {
            count += probes as usize - 1;
            out.push_str(&format!(
                "  then {} more probe(s), bisecting between {} and {} ops/s for p99 <= {p99_ms} ms\n",
                probes - 1,
                format_rate(low),
                format_rate(high)
            ));
        }
    }
    out.push_str(&format!(
        "\n{count} cell(s); estimated total {} (assumes {} to start and {} to stop a cluster, {:.0} rows/s populate, {} per cell beyond warm-up and duration)\n",
        format_duration(estimate(plan)),
        format_duration(CLUSTER_START),
        format_duration(CLUSTER_STOP),
        POPULATE_ROWS_PER_S,
        format_duration(CELL_OVERHEAD),
    ));
    out
}
