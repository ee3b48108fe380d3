//! The result format's version, and reading a versioned JSON file.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::ResultsError;

/// The version of every JSON file cqlbench writes now. Version 1 is what cqlbench wrote before files
/// carried a version (no `version` field): it reads, upgraded (see [`Upgrade`]). Version 2 added the
/// field and `null` for values that do not exist (latency percentiles of an operation without
/// successes, failure latency without failures, a phase's p99 without operations).
pub const FORMAT_VERSION: u32 = 2;

/// The version a file without the field is of.
pub(crate) const UNVERSIONED: u32 = 1;

pub(crate) fn unversioned() -> u32 {
    UNVERSIONED
}

/// What a file of an older version needs to read as the current one.
pub(crate) trait Upgrade {
    /// Turns a file of `version` (older than [`FORMAT_VERSION`]) into the current shape.
    fn upgrade(&mut self, version: u32);
}

#[derive(Deserialize)]
struct VersionOnly {
    #[serde(default = "unversioned")]
    version: u32,
}

/// The version a JSON text declares; `None` when it is not a JSON object at all.
fn declared_version(text: &str) -> Option<u32> {
    serde_json::from_str::<VersionOnly>(text)
        .ok()
        .map(|v| v.version)
}

/// Reads a JSON file of type `T`, refusing a newer version in one line and upgrading an older one.
pub(crate) fn read_json<T: DeserializeOwned + Upgrade>(
    path: &Path,
    what: &'static str,
) -> Result<T, ResultsError> {
    let text = std::fs::read_to_string(path).map_err(ResultsError::read(path))?;
    parse_json(path, what, &text)
}

pub(crate) fn parse_json<T: DeserializeOwned + Upgrade>(
    path: &Path,
    what: &'static str,
    text: &str,
) -> Result<T, ResultsError> {
    let version = declared_version(text).unwrap_or(UNVERSIONED);
    if version > FORMAT_VERSION {
        return Err(ResultsError::NewerVersion {
            path: path.to_path_buf(),
            found: version,
            supported: FORMAT_VERSION,
        });
    }
    let mut value: T =
        serde_json::from_str(text).map_err(|e| ResultsError::malformed(path, what, e))?;
    if version < FORMAT_VERSION {
        value.upgrade(version);
    }
    Ok(value)
}

/// The reader and writer of a versioned JSON file type kept at `$file` in a directory: `read(dir)`
/// (a newer version refused, an older one upgraded) and `write(&self, dir)` (atomically, as the
/// current version). Types whose older versions need more than the version number bumped implement
/// [`Upgrade`] themselves and use `json_file!(@io …)`.
macro_rules! json_file {
    ($type:ty, $file:expr, $what:expr) => {
        impl $crate::version::Upgrade for $type {
            fn upgrade(&mut self, _version: u32) {
                self.version = $crate::FORMAT_VERSION;
            }
        }
        json_file!(@io $type, $file, $what);
    };
    (@io $type:ty, $file:expr, $what:expr) => {
        impl $type {
            /// Reads the file from `dir`.
            pub fn read(dir: &std::path::Path) -> Result<$type, $crate::ResultsError> {
                $crate::version::read_json(&dir.join($file), $what)
            }

            /// Replaces the file in `dir` atomically, as the current format version.
            pub fn write(&self, dir: &std::path::Path) -> Result<(), $crate::ResultsError> {
                let mut current = self.clone();
                current.version = $crate::FORMAT_VERSION;
                $crate::write_json(&dir.join($file), &current)
            }
        }
    };
}

pub(crate) use json_file;
