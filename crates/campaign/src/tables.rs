//! The campaign's closing text: the seeds' four tables (Throughput; Writes Average p99; Reads Average
//! p99; Max p99 — config × rate) as the report crate builds them from the cells' own summary.json
//! files, and the capacity at SLO.

use std::path::Path;

use crate::matrix;
use crate::plan::{Plan, RateMode};

/// The four seed tables as the report prints them for the terminal (from the cells' summary.json,
/// repeats averaged, the maximum for Max p99), the result in one sentence, then the capacity at SLO
/// in that mode.
pub fn render(plan: &Plan, dir: &Path) -> String {
    let order: Vec<String> = plan.configs.iter().map(|c| c.dir_name.clone()).collect();
    let mut out = cqlbench_report::discover(dir, &order)
        .map(|campaign| {
            let tables = cqlbench_report::seed_tables(&campaign);
            let mut text = cqlbench_report::terminal(&campaign, &tables);
            // The result in one sentence, computed from these tables.
            if let Some(line) = cqlbench_report::verdict(&campaign, &tables) {
                text.push_str(&line);
                text.push_str("\n\n");
            }
            text
        })
        .unwrap_or_default();
    if let RateMode::Slo { p99_ms, .. } = plan.load.mode {
        let name_width = plan
            .configs
            .iter()
            .map(|c| c.name.chars().count())
            .max()
            .unwrap_or(10);
        out.push_str(&format!(
            "Capacity at SLO (p99 of reads and writes <= {p99_ms} ms, rate kept, nothing failed)\n"
        ));
        for (index, config) in plan.configs.iter().enumerate() {
            let capacity = crate::slo::slo_capacity(plan, index, dir)
                .map_or("below the plan's low rate".to_string(), |r| {
                    format!("{} ops/s", matrix::format_rate(r))
                });
            out.push_str(&format!("{:<name_width$}  {capacity}\n", config.name));
        }
    }
    out
}
