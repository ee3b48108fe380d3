use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("{tool} is not installed and Debian's package could not be fetched: {reason}")]
    ToolUnavailable { tool: &'static str, reason: String },
    #[error("{tool} does not run: {line}")]
    ToolBroken { tool: String, line: String },
    #[error("{tool}: {line}")]
    ToolFailed { tool: String, line: String },
    #[error("{tool} printed no {what}")]
    Unreadable { tool: String, what: &'static str },
    #[error("probe directory {}: {source}", path.display())]
    OutDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("data directory {}: {source}", path.display())]
    DataDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Results(#[from] cqlbench_results::ResultsError),
}

pub type Result<T> = std::result::Result<T, ProbeError>;
