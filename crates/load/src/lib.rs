//! cqlbench-load: fixed-rate, open-loop load against Cassandra, measured the way users feel it.
//!
//! Every operation has an intended start time on a fixed-rate schedule. Its latency is completion minus
//! intended start, so time spent waiting behind a stalled server or a full in-flight limit counts
//! (no coordinated omission); its service time (completion minus actual send) is recorded too. Both
//! go into per-operation-type HdrHistograms (µs, 3 significant digits). Results are written while the
//! run goes, in the formats of `cqlbench-results`: `summary.json`, `intervals.csv`, `slow-ops.csv` and
//! `.hlog` interval logs per operation type.

pub mod args;
mod bound;
pub mod cqlmap;
mod engine;
mod options;
mod output;
mod poll;
mod recorder;
mod session;
mod state;
mod topology;
mod wire;
pub mod workload;

pub use args::RunArgs;
pub use cqlmap::{parse_replication, parse_table_options, CqlMap, CqlMapError, TableOptions};
pub use engine::{run, RunResult};
pub use options::{Consistency, Credentials, PrometheusOptions, RunOptions, Stopping};
pub use output::format_result_table;
pub use workload::{
    find_workload, OpId, PartitionGen, Workload, WorkloadInfo, BUILT_IN_OPS, WORKLOADS,
};

/// Everything that can stop a run, as one line for the CLI.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("unknown workload '{name}' (known: {known}; see `cqlbench workloads`)")]
    UnknownWorkload { name: String, known: String },
    #[error("{0}")]
    InvalidOption(String),
    #[error(transparent)]
    CqlMap(#[from] CqlMapError),
    /// A workload file that cannot run: `FILE:LINE: what is wrong`.
    #[error(transparent)]
    WorkloadFile(#[from] cqlbench_workload::WorkloadError),
    #[error("cannot connect to {hosts}: {reason}")]
    Connect { hosts: String, reason: String },
    #[error("schema setup failed ({statement}): {reason}")]
    Schema { statement: String, reason: String },
    #[error("cannot prepare '{statement}': {reason}")]
    Prepare { statement: String, reason: String },
    #[error(transparent)]
    Metrics(#[from] cqlbench_metrics::MetricsError),
    #[error(transparent)]
    Results(#[from] cqlbench_results::ResultsError),
    #[error("cannot write {path}: {source}")]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    #[error("TLS setup failed: {0}")]
    Tls(String),
    #[error("interrupted while {0}; nothing was measured")]
    Interrupted(String),
    #[error("{reason}; the run was stopped (results so far in {})", dir.display())]
    ClientFailed {
        reason: String,
        dir: std::path::PathBuf,
    },
}
