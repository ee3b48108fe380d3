//! An `[slo]` search's verdicts, read from its finished probes: does a probe meet the SLO, and the
//! highest rate that did (the capacity the campaign's closing table prints).

use std::path::Path;

use cqlbench_results::{RunStatus, Summary};

use crate::plan::{Plan, RateMode};

/// A finished cell's summary, if it has one that reads.
pub(crate) fn read_summary(cell_dir: &Path) -> Option<Summary> {
    Summary::read(cell_dir).ok()
}

/// A probe passes when the run completed at its rate with nothing failed, and the p99 of every
/// operation that ran (reads and writes) stayed within the bound.
pub fn meets_slo(summary: &Summary, p99_ms: f64) -> bool {
    let kept = summary.rate_kept && summary.status == RunStatus::Complete;
    let within = summary
        .ops
        .values()
        .all(|op| op.count == 0 || op.latency_ms.p99.is_some_and(|p| p <= p99_ms));
    kept && within
}

/// The highest passing probe of an SLO search (`None` when none passed).
pub fn slo_capacity(plan: &Plan, config: usize, dir: &Path) -> Option<f64> {
    let RateMode::Slo { p99_ms, .. } = plan.load.mode else {
        return None;
    };
    let config_dir = dir.join(&plan.configs[config].dir_name);
    std::fs::read_dir(config_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let rate = e.file_name().to_string_lossy().parse::<f64>().ok()?;
            let summary = read_summary(&e.path())?;
            meets_slo(&summary, p99_ms).then_some(rate)
        })
        .reduce(f64::max)
}
