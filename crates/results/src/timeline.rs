//! `node<i>/timeline.csv`: every pause and safepoint of a node's GC log with its wall-clock start and
//! end, as `cqlbench gc analyze --timeline` writes it (`start,end,kind`, kinds `pause:<name>` and
//! `safepoint:<operation>`). The rows are written by the GC log analyser; this is their reader.

use std::path::Path;

use crate::ResultsError;

/// The file name in a node directory.
pub const TIMELINE_FILE: &str = "timeline.csv";

/// One stop of the JVM.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimelineStop {
    /// Wall-clock start and end, seconds since the epoch.
    pub start_unix_s: f64,
    pub end_unix_s: f64,
    /// A GC pause, or the safepoint of a GC operation (not any other safepoint).
    pub gc: bool,
}

/// The stops of a timeline's text. Rows with relative times (a log without wall-clock decorators)
/// cannot be placed and are skipped.
pub fn parse(text: &str) -> Vec<TimelineStop> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let mut f = line.splitn(3, ',');
            let start = cqlbench_units::time::parse_iso8601(f.next()?.as_bytes())?;
            let end = cqlbench_units::time::parse_iso8601(f.next()?.as_bytes())?;
            let gc = match f.next()?.split_once(':') {
                Some(("pause", _)) => true,
                Some(("safepoint", op)) => cqlbench_gclog::gc_operation_kind(op).is_some(),
                _ => false,
            };
            Some(TimelineStop {
                start_unix_s: start as f64 / 1e9,
                end_unix_s: end as f64 / 1e9,
                gc,
            })
        })
        .collect()
}

/// Reads `NODE_DIR/timeline.csv`.
pub fn read(node_dir: &Path) -> Result<Vec<TimelineStop>, ResultsError> {
    let path = node_dir.join(TIMELINE_FILE);
    let text = std::fs::read_to_string(&path).map_err(ResultsError::read(&path))?;
    Ok(parse(&text))
}
