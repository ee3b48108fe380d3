use std::path::PathBuf;

/// Why a result file could not be read or written; every message is one line naming the file.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is there but is not what it should be (not JSON, a field of the wrong type, …).
    #[error("{path} is not a {what}: {reason}")]
    Malformed {
        path: PathBuf,
        what: &'static str,
        reason: String,
    },
    #[error(
        "{path} is of result format version {found}, newer than this cqlbench reads (up to {supported}): use a newer cqlbench"
    )]
    NewerVersion {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
}

impl ResultsError {
    pub(crate) fn read(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| ResultsError::Read {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn write(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| ResultsError::Write {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn malformed(
        path: &std::path::Path,
        what: &'static str,
        reason: impl std::fmt::Display,
    ) -> Self {
        ResultsError::Malformed {
            path: path.to_path_buf(),
            what,
            reason: reason.to_string().replace('\n', " "),
        }
    }

    /// What is wrong, without the file's name (for a caller that names the source itself).
    pub fn reason(&self) -> String {
        match self {
            ResultsError::Malformed { reason, .. } => reason.clone(),
            other => other.to_string(),
        }
    }

    /// The file was not there.
    pub fn is_missing(&self) -> bool {
        matches!(self, ResultsError::Read { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}
