//! The servers' side of each cell, as the campaign collected it per node (`node*/gc-analysis.json`,
//! `node*/figures.json`): the GC table, and the tail-vs-GC table built from it and the client's
//! slow operations.

use cqlbench_gclog::Report;
use cqlbench_results::{
    node_dirs, GcAnalysis, JvmFlags, NodeFigures, FIGURES_FILE, JVM_FLAGS_FILE, NO_GC_LINES_NOTE,
};

use crate::cells::{Campaign, Cell};
use crate::tail::{tail_vs_gc, TailVsGc};

/// One node's collected files (either may be missing or unreadable).
struct NodeFiles {
    /// The node's directory name in the cell (`node1`).
    name: String,
    gc: Option<Report>,
    figures: Option<NodeFigures>,
}

impl NodeFiles {
    /// Why the node has no GC analysis, when the campaign noted why.
    fn gc_missing(&self) -> Option<String> {
        let why = self.figures.as_ref()?.gc_analysis_missing()?;
        self.gc.is_none().then(|| format!("{}: {why}", self.name))
    }
}

fn node_files(cell: &Cell) -> Vec<NodeFiles> {
    node_dirs(&cell.dir, FIGURES_FILE)
        .into_iter()
        .map(|dir| NodeFiles {
            name: dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            gc: GcAnalysis::read(&dir).ok().and_then(|a| a.report),
            figures: NodeFigures::read(&dir).ok(),
        })
        .collect()
}

/// A cell's GC and server figures over all its nodes: counts and times add up, worst-case figures
/// take the worst node, shares are averaged, CPU per operation adds up (each node's CPU is divided
/// by all the cell's operations), write amplification is total compacted / total flushed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerFigures {
    pub nodes: usize,
    pub collector: Option<String>,
    pub pauses: Option<f64>,
    pub pause_total_ms: Option<f64>,
    pub pause_max_ms: Option<f64>,
    pub stopped_total_ms: Option<f64>,
    pub ttsp_total_ms: Option<f64>,
    pub time_sampled_p99_ms: Option<f64>,
    pub time_sampled_p999_ms: Option<f64>,
    pub time_sampled_p9999_ms: Option<f64>,
    pub concurrent_share: Option<f64>,
    pub allocation_mb_s: Option<f64>,
    pub cpu_ms_per_op: Option<f64>,
    pub gc_threads_cpu_share: Option<f64>,
    pub write_amplification: Option<f64>,
    /// Nodes without a GC analysis and why (`node1: GC analysis: no GC log format recognised …`): a
    /// cell whose GC log was not read says so rather than showing no pauses.
    pub gc_missing: Vec<String>,
}

fn sum(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    values
        .flatten()
        .fold(None, |acc, v| Some(acc.unwrap_or(0.0) + v))
}

fn max(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    values.flatten().reduce(f64::max)
}

fn mean(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = values.flatten().collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

pub fn server_figures(cell: &Cell) -> Option<ServerFigures> {
    let nodes = node_files(cell);
    if nodes.is_empty() {
        return None;
    }
    let gc = |f: fn(&Report) -> Option<f64>| nodes.iter().map(move |n| n.gc.as_ref().and_then(f));
    let fig = |f: fn(&NodeFigures) -> Option<f64>| {
        nodes.iter().map(move |n| n.figures.as_ref().and_then(f))
    };
    let flushed = sum(fig(|f| Some(f.flushed_bytes)));
    let compacted = sum(fig(|f| f.compacted_bytes));
    let mut collectors: Vec<String> = nodes
        .iter()
        .filter_map(|n| {
            let named = n.figures.as_ref().and_then(|f| f.collector.clone());
            named.or_else(|| n.gc.as_ref().and_then(|r| r.jvm.collector.clone()))
        })
        .collect();
    collectors.dedup();
    Some(ServerFigures {
        nodes: nodes.len(),
        collector: (!collectors.is_empty()).then(|| collectors.join(", ")),
        pauses: sum(gc(|r| Some(r.pauses.count as f64))),
        pause_total_ms: sum(gc(|r| Some(r.pauses.total_ms))),
        pause_max_ms: max(gc(|r| Some(r.pauses.max_ms))),
        stopped_total_ms: sum(gc(|r| r.safepoints.as_ref().map(|s| s.stopped_total_ms))),
        ttsp_total_ms: sum(gc(|r| r.safepoints.as_ref().map(|s| s.ttsp_total_ms))),
        time_sampled_p99_ms: max(gc(|r| r.time_sampled.as_ref().map(|t| t.p99_ms))),
        time_sampled_p999_ms: max(gc(|r| r.time_sampled.as_ref().map(|t| t.p999_ms))),
        time_sampled_p9999_ms: max(gc(|r| r.time_sampled.as_ref().map(|t| t.p9999_ms))),
        concurrent_share: mean(gc(|r| {
            r.concurrent.as_ref().map(|c| c.share_per_minute_mean)
        })),
        allocation_mb_s: sum(gc(|r| r.allocation_rate_mb_s)),
        cpu_ms_per_op: sum(fig(|f| f.cpu_ms_per_op)),
        gc_threads_cpu_share: mean(fig(|f| f.gc_threads_cpu_share)),
        write_amplification: compacted
            .zip(flushed)
            .filter(|(_, f)| *f > 0.0)
            .map(|(c, f)| c / f),
        gc_missing: nodes.iter().filter_map(NodeFiles::gc_missing).collect(),
    })
}

/// The pauses column: the count, or why there is none when no node's GC log was analysed.
fn pauses_cell(s: &ServerFigures) -> String {
    match (s.pauses, s.gc_missing.first()) {
        (None, Some(why)) if why.contains(NO_GC_LINES_NOTE) => "no GC log line".to_string(),
        (None, Some(_)) => "not analysed".to_string(),
        (pauses, _) => number(pauses, 0),
    }
}

fn number(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(String::new, |v| {
        crate::cells::group_digits(&format!("{v:.decimals$}"))
    })
}

fn percent(value: Option<f64>) -> String {
    // `+ 0.0` turns a negative zero (a sum of empty overlaps) into 0, which prints without a sign.
    value.map_or_else(String::new, |v| format!("{:.1} %", v * 100.0 + 0.0))
}

fn cell_label(cell: &Cell) -> [String; 3] {
    [
        cell.config.clone(),
        cell.rate_label(),
        cell.repeat.clone().unwrap_or_default(),
    ]
}

pub(crate) const GC_HEADINGS: [&str; 17] = [
    "config",
    "rate",
    "repeat",
    "collector",
    "pauses",
    "pause total ms",
    "pause max ms",
    "stopped ms",
    "TTSP ms",
    "stop p99 ms (time-sampled)",
    "stop p99.9 ms (time-sampled)",
    "stop p99.99 ms (time-sampled)",
    "concurrent GC share",
    "alloc MB/s",
    "CPU ms/op",
    "GC threads CPU",
    "write amp",
];

/// The GC table: one row per cell that has server figures.
pub(crate) fn gc_rows(campaign: &Campaign) -> Vec<Vec<String>> {
    cells_in_order(campaign)
        .filter_map(|cell| {
            let s = server_figures(cell)?;
            let mut row = cell_label(cell).to_vec();
            row.extend([
                s.collector.clone().unwrap_or_default(),
                pauses_cell(&s),
                number(s.pause_total_ms, 1),
                number(s.pause_max_ms, 2),
                number(s.stopped_total_ms, 1),
                number(s.ttsp_total_ms, 2),
                number(s.time_sampled_p99_ms, 2),
                number(s.time_sampled_p999_ms, 2),
                number(s.time_sampled_p9999_ms, 2),
                percent(s.concurrent_share),
                number(s.allocation_mb_s, 1),
                number(s.cpu_ms_per_op, 3),
                percent(s.gc_threads_cpu_share),
                number(s.write_amplification, 2),
            ]);
            Some(row)
        })
        .collect()
}

pub(crate) const TAIL_HEADINGS: [&str; 9] = [
    "config",
    "rate",
    "repeat",
    "slower than",
    "slow ops (recorded / by histogram)",
    "overlapping a GC pause",
    "overlapping any stop",
    "tail time inside GC pauses",
    "cell time inside GC pauses",
];

/// The tail-vs-GC table: per cell, for the p99 and the p99.9.
pub(crate) fn tail_rows(campaign: &Campaign) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for cell in cells_in_order(campaign) {
        let Some(lines) = tail_vs_gc(&cell.dir, &cell.summary) else {
            continue;
        };
        for t in lines {
            rows.push(tail_row(cell, &t));
        }
    }
    rows
}

fn tail_row(cell: &Cell, t: &TailVsGc) -> Vec<String> {
    let mut row = cell_label(cell).to_vec();
    row.extend([
        t.quantile.to_string(),
        format!("{} / {}", t.slow_ops, t.expected),
        percent(t.overlapping_gc_share()),
        percent((t.slow_ops > 0).then(|| t.overlapping_stop as f64 / t.slow_ops as f64)),
        percent(t.tail_in_gc_share()),
        percent(Some(t.gc_time_share)),
    ]);
    row
}

/// Per configuration whose cells lack some server figures in every cell (a Cassandra version or JDK
/// that does not offer them, e.g. no flush lines in its log): one line naming the configuration, its
/// Cassandra version and JDK (from the campaign's `jvm-flags.json`), and the figures it has none of.
pub(crate) fn not_offered(campaign: &Campaign) -> Vec<String> {
    let rows = gc_rows(campaign);
    let mut lines = Vec::new();
    for config in &campaign.configs {
        let own: Vec<&Vec<String>> = rows.iter().filter(|r| &r[0] == config).collect();
        if own.is_empty() {
            continue;
        }
        let missing: Vec<&str> = (4..GC_HEADINGS.len())
            .filter(|&i| own.iter().all(|r| r[i].is_empty()))
            .map(|i| GC_HEADINGS[i])
            .collect();
        if missing.is_empty() {
            continue;
        }
        let software = campaign
            .cells
            .iter()
            .find(|c| &c.config == config)
            .and_then(|c| c.dir.ancestors().find(|d| d.join(JVM_FLAGS_FILE).is_file()))
            .and_then(|d| JvmFlags::read(d).ok())
            .map(|flags| {
                format!(
                    " (Cassandra {} on JDK {})",
                    flags.spec.cassandra_version, flags.jdk.version
                )
            })
            .unwrap_or_default();
        lines.push(format!(
            "{config}{software} offers none of: {}.",
            missing.join(", ")
        ));
    }
    lines
}

/// One line per cell with a node whose GC log was not analysed, saying which and why (shown under the
/// GC table, where the cell's pauses say "not analysed").
pub(crate) fn gc_missing_lines(campaign: &Campaign) -> Vec<String> {
    cells_in_order(campaign)
        .filter_map(|cell| {
            let s = server_figures(cell)?;
            (!s.gc_missing.is_empty()).then(|| {
                let [config, rate, repeat] = cell_label(cell);
                let repeat = if repeat.is_empty() {
                    String::new()
                } else {
                    format!(" (repeat {repeat})")
                };
                format!("{config} at {rate}{repeat}: {}.", s.gc_missing.join("; "))
            })
        })
        .collect()
}

fn cells_in_order(campaign: &Campaign) -> impl Iterator<Item = &Cell> {
    campaign.configs.iter().flat_map(move |config| {
        campaign
            .rates
            .iter()
            .flat_map(move |rate| campaign.cells_at(config, rate))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cells::RateKey;
    use serde_json::Value;

    #[test]
    fn a_share_of_nothing_prints_without_a_sign() {
        assert_eq!(percent(Some(-0.0)), "0.0 %");
        assert_eq!(percent(Some(0.0123)), "1.2 %");
        assert_eq!(percent(None), "");
    }

    fn node(dir: &std::path::Path, name: &str, gc: Value, figures: Value) {
        let d = dir.join(name);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("gc-analysis.json"), gc.to_string()).unwrap();
        std::fs::write(d.join("figures.json"), figures.to_string()).unwrap();
    }

    #[test]
    fn nodes_add_up_worst_cases_take_the_worst_and_shares_average() {
        let dir = tempfile::tempdir().unwrap();
        node(
            dir.path(),
            "node1",
            serde_json::json!({
                "pauses": {"count": 3, "total_ms": 30.0, "max_ms": 15.0},
                "safepoints": {"stopped_total_ms": 40.0, "ttsp_total_ms": 2.0},
                "time_sampled": {"p99_ms": 1.0, "p999_ms": 9.0, "p9999_ms": 14.0},
                "concurrent": {"share_per_minute_mean": 0.1},
                "allocation_rate_mb_s": 50.0
            }),
            serde_json::json!({"collector": "G1", "cpu_ms_per_op": 0.2, "gc_threads_cpu_share": 0.04,
                               "flushed_bytes": 100.0, "compacted_bytes": 150.0}),
        );
        node(
            dir.path(),
            "node2",
            serde_json::json!({
                "pauses": {"count": 2, "total_ms": 50.0, "max_ms": 40.0},
                "safepoints": {"stopped_total_ms": 55.0, "ttsp_total_ms": 1.0},
                "time_sampled": {"p99_ms": 3.0, "p999_ms": 30.0, "p9999_ms": 39.0},
                "concurrent": {"share_per_minute_mean": 0.3},
                "allocation_rate_mb_s": 70.0
            }),
            serde_json::json!({"collector": "G1", "cpu_ms_per_op": 0.3, "gc_threads_cpu_share": 0.06,
                               "flushed_bytes": 300.0, "compacted_bytes": 250.0}),
        );
        let cell = Cell {
            config: "G1".into(),
            rate: RateKey("1000".into()),
            repeat: None,
            dir: dir.path().to_path_buf(),
            summary: cqlbench_results::Summary::default(),
        };
        let s = server_figures(&cell).unwrap();
        assert_eq!(s.nodes, 2);
        assert_eq!(s.collector.as_deref(), Some("G1"));
        assert_eq!(s.pauses, Some(5.0));
        assert_eq!(s.pause_total_ms, Some(80.0));
        assert_eq!(s.pause_max_ms, Some(40.0));
        assert_eq!(s.stopped_total_ms, Some(95.0));
        assert_eq!(s.ttsp_total_ms, Some(3.0));
        assert_eq!(s.time_sampled_p999_ms, Some(30.0));
        assert!((s.concurrent_share.unwrap() - 0.2).abs() < 1e-12);
        assert_eq!(s.allocation_mb_s, Some(120.0));
        assert!((s.cpu_ms_per_op.unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(s.write_amplification, Some(1.0));
        // A cell without node directories (a plain run) has no server figures.
        let empty = tempfile::tempdir().unwrap();
        assert!(server_figures(&Cell {
            dir: empty.path().to_path_buf(),
            ..cell
        })
        .is_none());
    }

    #[test]
    fn a_cell_whose_gc_log_was_not_analysed_says_so_instead_of_no_pauses() {
        let dir = tempfile::tempdir().unwrap();
        let cell_dir = dir.path().join("G1").join("1000");
        let why = "GC analysis: no GC log format recognised in gc.log: 0 of 9 lines are GC events";
        node(
            &cell_dir,
            "node1",
            Value::Null,
            serde_json::json!({"collector": "G1", "notes": [why]}),
        );
        node(
            &cell_dir,
            "node2",
            Value::Null,
            serde_json::json!({"collector": "G1", "notes": ["no GC log line in the window"]}),
        );
        let cell = Cell {
            config: "G1".into(),
            rate: RateKey("1000".into()),
            repeat: None,
            dir: cell_dir,
            summary: cqlbench_results::Summary::default(),
        };
        let campaign = Campaign {
            dir: dir.path().to_path_buf(),
            configs: vec!["G1".into()],
            rates: vec![RateKey("1000".into())],
            cells: vec![cell],
            environment: None,
        };
        let rows = gc_rows(&campaign);
        assert_eq!(rows[0][4], "not analysed");
        let lines = gc_missing_lines(&campaign);
        assert_eq!(
            lines,
            [format!(
                "G1 at 1,000 ops/s: node1: {why}; node2: no GC log line in the window."
            )]
        );
        let tables = crate::tables::seed_tables(&campaign);
        let md = crate::markdown::markdown(&campaign, &tables);
        assert!(
            md.contains("not analysed") && md.contains(&lines[0]),
            "{md}"
        );
    }
}
