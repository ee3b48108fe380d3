//! Workload files. Each format is a small front end that lowers a file into one compiled
//! [`Workload`] (schema, named statements with their value generators, the mix, populate,
//! parameters); the load engine runs that and knows nothing of where it came from.
//!
//! Formats: cqlbench's own (`native`), cassandra-stress user profiles (`stress`) and nosqlbench
//! CQL workloads (`nb`).

pub mod catalog;
pub mod dist;
pub mod keys;
pub mod model;
pub mod native;
pub mod nb;
pub mod rows;
pub mod stress;
pub mod value;
pub mod yaml;

pub use dist::{mix, unit_float, Distribution};
pub use model::{
    is_conditional, replication_in, Batch, BatchType, ColumnGen, Fields, KeyspaceSpec, Located,
    OpKind, Operation, Paging, Populate, RowModel, RunHints, Workload,
};
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

/// What a run says about a workload file besides the file itself.
#[derive(Debug, Clone, Default)]
pub struct Invocation {
    /// `--workload.NAME=VALUE`.
    pub settings: Vec<(String, String)>,
    /// `--mix NAME=WEIGHT,…` (cassandra-stress's `ops(…)` spelling too).
    pub mix: Option<Vec<(String, f64)>>,
}

/// Reads and compiles a workload file, whichever format it is in.
pub fn load(path: &Path, invocation: &Invocation) -> Result<Workload, WorkloadError> {
    let shown = path.display().to_string();
    let source = std::fs::read_to_string(path).map_err(|source| WorkloadError::Read {
        path: shown.clone(),
        source,
    })?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "workload".into());
    compile_source(&name, path, &source, invocation)
}

/// Compiles a workload's text (a shipped one, `cqlbench run LWT`); `file` names it in messages.
pub fn load_text(
    name: &str,
    file: &str,
    source: &str,
    invocation: &Invocation,
) -> Result<Workload, WorkloadError> {
    compile_source(name, Path::new(file), source, invocation)
}

fn compile_source(
    name: &str,
    path: &Path,
    source: &str,
    invocation: &Invocation,
) -> Result<Workload, WorkloadError> {
    let shown = path.display().to_string();
    let name = name.to_string();
    if nb::looks_like(source) {
        if invocation.mix.is_some() {
            return Err(WorkloadError::At {
                file: shown,
                line: 1,
                message: "--mix: a nosqlbench workload's mix is its ops' ratios (change them with its template parameters)".into(),
            });
        }
        return nb::compile(&name, path, source, invocation);
    }
    let doc = parse_yaml(&shown, source)?;
    if stress::looks_like_profile(&doc) {
        if let Some((name, _)) = invocation.settings.first() {
            return Err(WorkloadError::At {
                file: shown,
                line: 1,
                message: format!("--workload.{name}: a cassandra-stress profile has no parameters"),
            });
        }
        return stress::compile(&name, &shown, &doc, invocation.mix.as_deref());
    }
    let mut workload = native::compile_document(&name, &shown, &doc, &invocation.settings)?;
    if let Some(mix) = &invocation.mix {
        apply_mix(&mut workload, mix)?;
    }
    Ok(workload)
}

/// `--mix` on a native file: the weights it gives replace the file's (operations it leaves out
/// weigh 0).
fn apply_mix(workload: &mut Workload, mix: &[(String, f64)]) -> Result<(), WorkloadError> {
    for (name, _) in mix {
        if !workload.ops.iter().any(|op| op.name == *name) {
            let names = workload.op_names();
            return Err(WorkloadError::At {
                file: workload.file.clone(),
                line: 1,
                message: format!(
                    "--mix names '{name}', which is not an operation of the file (it has: {})",
                    names.join(", ")
                ),
            });
        }
    }
    for op in &mut workload.ops {
        op.weight = mix
            .iter()
            .find(|(n, _)| *n == op.name)
            .map_or(0.0, |(_, w)| *w);
    }
    Ok(())
}

/// A YAML document, or `FILE:LINE: not valid YAML: …`.
pub fn parse_yaml(file: &str, source: &str) -> Result<yaml::Node, WorkloadError> {
    yaml::parse(source).map_err(|e| WorkloadError::At {
        file: file.to_string(),
        line: e.line,
        message: format!("not valid YAML: {}", e.message),
    })
}
