//! Workload files. Each format is a small front end that lowers a file into one compiled
//! [`Workload`] (schema, named statements with their value generators, the mix, populate,
//! parameters); the load engine runs that and knows nothing of where it came from.
//!
//! Formats: cqlbench's own (`native`). cassandra-stress profiles and nosqlbench workloads are to
//! follow as front ends of the same type (issue #21; `docs/peer-formats/`).

pub mod dist;
pub mod keys;
pub mod model;
pub mod native;
pub mod value;
pub mod yaml;

pub use dist::{mix, unit_float, Distribution};
pub use model::{is_conditional, Located, Operation, Populate, Workload};
pub use value::{timeuuid, CqlType, TextPool, ValueSpec};

use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    /// Something wrong at a line of the file: `FILE:LINE: what is wrong`.
    #[error("{file}:{line}: {message}")]
    At {
        file: String,
        line: usize,
        message: String,
    },
    #[error("cannot read workload file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
}

/// Whether a run's workload argument names a file rather than a built-in workload.
pub fn is_file_argument(argument: &str) -> bool {
    let lower = argument.to_ascii_lowercase();
    lower.ends_with(".yaml") || lower.ends_with(".yml") || argument.contains('/')
}

/// Reads and compiles a workload file; `settings` are `--workload.NAME=VALUE`.
pub fn load(path: &Path, settings: &[(String, String)]) -> Result<Workload, WorkloadError> {
    let shown = path.display().to_string();
    let source = std::fs::read_to_string(path).map_err(|source| WorkloadError::Read {
        path: shown.clone(),
        source,
    })?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "workload".into());
    native::compile(&name, &shown, &source, settings)
}
