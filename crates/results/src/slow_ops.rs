//! `slow-ops.csv`: every successful measured operation slower than a running threshold near the p99,
//! with its times, so that the client's tail can be lined up with the nodes' pauses.

use std::path::Path;

use crate::ResultsError;

/// The file name in a run directory.
pub const SLOW_OPS_FILE: &str = "slow-ops.csv";

/// The columns: times in seconds from the measured start (`measured_start_unix_s` in summary.json is
/// its wall-clock time), the node whose connection carried the operation.
pub const SLOW_OP_COLUMNS: &str = "intended_s,done_s,op,latency_ms,node";

/// One slow operation.
#[derive(Debug, Clone, PartialEq)]
pub struct SlowOp {
    /// Intended start, seconds from the measured start.
    pub intended_s: f64,
    /// Completion, seconds from the measured start.
    pub done_s: f64,
    pub op: String,
    pub latency_ms: f64,
    /// The address of the node whose connection carried it (empty when unknown).
    pub node: String,
}

impl SlowOp {
    /// The row as a line of slow-ops.csv (without the newline).
    pub fn csv_line(&self) -> String {
        format!(
            "{:.6},{:.6},{},{:.3},{}",
            self.intended_s, self.done_s, self.op, self.latency_ms, self.node
        )
    }

    fn parse(line: &str) -> Option<SlowOp> {
        let mut f = line.split(',');
        Some(SlowOp {
            intended_s: f.next()?.parse().ok()?,
            done_s: f.next()?.parse().ok()?,
            op: f.next()?.to_string(),
            latency_ms: f.next().and_then(|v| v.parse().ok()).unwrap_or_default(),
            node: f.next().unwrap_or_default().to_string(),
        })
    }
}

/// Writes `DIR/slow-ops.csv` with these rows (a merge of several clients' files).
pub fn write_slow_ops(dir: &Path, rows: &[SlowOp]) -> Result<(), ResultsError> {
    let path = dir.join(SLOW_OPS_FILE);
    let mut text = format!("{SLOW_OP_COLUMNS}\n");
    for row in rows {
        text.push_str(&row.csv_line());
        text.push('\n');
    }
    std::fs::write(&path, text).map_err(ResultsError::write(&path))
}

/// Reads `DIR/slow-ops.csv`; rows that do not parse (a line cut short by a stopped run) are skipped.
pub fn read_slow_ops(dir: &Path) -> Result<Vec<SlowOp>, ResultsError> {
    let path = dir.join(SLOW_OPS_FILE);
    let text = std::fs::read_to_string(&path).map_err(ResultsError::read(&path))?;
    let mut lines = text.lines();
    if lines.next().is_none() {
        return Err(ResultsError::malformed(
            &path,
            "cqlbench slow-ops.csv",
            "it is empty",
        ));
    }
    Ok(lines.filter_map(SlowOp::parse).collect())
}
