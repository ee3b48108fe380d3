//! cqlbench-results: every file cqlbench writes and reads back, as Rust types — the one place a
//! field is named.
//!
//! A run directory (`cqlbench run -o DIR`, a campaign cell, a merge of clients) holds:
//!
//! | file | type | writer | readers |
//! |---|---|---|---|
//! | `summary.json` | [`Summary`] | load, `report merge` | report, campaign, k8s |
//! | `--brief-to` line, `briefs.json` | [`Brief`], [`JobBriefs`] | load (CLI), k8s | k8s |
//! | `intervals.csv` | [`IntervalRow`] | load, `report merge` | report (compare, charts, merge) |
//! | `<op>.hlog`, `<op>.service.hlog`, `<op>.failed.hlog` | [`hlog`] | load, `report merge` | report |
//! | `slow-ops.csv` | [`SlowOp`] | load | report (tail vs GC) |
//! | `node<i>/figures.json` | [`NodeFigures`] | campaign, k8s | report |
//! | `node<i>/gc-analysis.json` | [`GcAnalysis`] | campaign, k8s | report |
//! | `node<i>/timeline.csv` | [`timeline`] (rows written by gclog) | campaign, k8s | report |
//! | `node<i>/pod.json` (k8s raw) | [`PodRecord`] | k8s | k8s |
//! | `<config>/config.json` | [`ConfigRecord`] | campaign, k8s | report |
//! | `<config>/jvm-flags.json` | [`JvmFlags`] | campaign | people |
//! | `environment.json` | [`Environment`] | campaign | people |
//! | `probe.json` | [`Probe`] | probe, campaign (in `environment.json`) | compare, report |
//!
//! Every JSON file carries `version` ([`FORMAT_VERSION`]); a file without it is of version 1 (written
//! before this crate) and still reads, its absent values made absent (see [`Summary`]). A newer
//! version is refused in one line naming it. CSV files are read by column name, so columns may be
//! added. JSON is written atomically ([`write_json`]): a reader never sees half a file.
//!
//! A value that does not exist is `None` in the types, `null` in JSON and [`ABSENT`] ("–") wherever a
//! person reads it (tables, Markdown, HTML, CSV cells).

mod atomic;
mod campaign;
mod error;
pub mod hlog;
mod intervals;
mod node;
mod probe;
mod slow_ops;
mod summary;
pub mod timeline;
mod version;

pub use atomic::{write_atomically, write_json};
pub use campaign::{
    is_set_aside, result_subdirectories, ConfigRecord, Cost, DiskRecord, Disks, Environment,
    EnvironmentConfig, FoundJdk, JobBriefs, JvmFlags, NodeFlags, BRIEFS_FILE, CONFIG_FILE,
    ENVIRONMENT_FILE, HOURS_PER_MONTH, JVM_FLAGS_FILE, SET_ASIDE,
};
pub use error::ResultsError;
pub use intervals::{IntervalRow, Intervals, INTERVALS_FILE, INTERVAL_COLUMNS};
pub use node::{
    node_dirs, GcAnalysis, NodeFigures, PodRecord, Window, FIGURES_FILE, GC_ANALYSIS_FAILED_NOTE,
    GC_ANALYSIS_FILE, NO_GC_LINES_NOTE, POD_FILE,
};
pub use probe::{Probe, ToolRecord, PROBE_FILE};
pub use slow_ops::{read_slow_ops, write_slow_ops, SlowOp, SLOW_OPS_FILE, SLOW_OP_COLUMNS};
pub use summary::{
    failures_suffix, rate_kept, rate_note, round3, Brief, ClientSummary, ErrorCounts, ErrorKind,
    Evidence, EvidenceSecond, MergedClient, NodeProcess, OpSummary, Percentiles, PhaseSummary,
    ProcessCpu, RunStatus, Settings, Stopping, Summary, Validity, ValidityThresholds, WindowP99,
    SUMMARY_FILE,
};
pub use version::FORMAT_VERSION;

/// How a value that does not exist is shown to a person: an en dash, never `0`.
pub const ABSENT: &str = "–";

/// `value` formatted by `format`, or [`ABSENT`].
pub fn shown(value: Option<f64>, format: impl Fn(f64) -> String) -> String {
    value.map_or_else(|| ABSENT.to_string(), format)
}
