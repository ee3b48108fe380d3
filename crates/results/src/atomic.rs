//! The one way cqlbench replaces a file: write a hidden sibling, then rename it over the target, so a
//! reader (or a crash) sees the old file or the new one, never half of one.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::ResultsError;

/// The hidden sibling a file is written to before the rename: `.NAME.tmp-PID` (per process, so two
/// writers of one directory never share it).
fn staging(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Replaces `path` with `bytes` atomically; its directory must exist.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ResultsError> {
    let tmp = staging(path);
    std::fs::write(&tmp, bytes).map_err(ResultsError::write(&tmp))?;
    std::fs::rename(&tmp, path).map_err(|source| {
        let _ = std::fs::remove_file(&tmp);
        ResultsError::Write {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// Replaces `path` with `value` as pretty JSON and a final newline, atomically; creates its directory.
pub fn write_json(path: &Path, value: &impl Serialize) -> Result<(), ResultsError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(ResultsError::write(parent))?;
    }
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| ResultsError::write(path)(std::io::Error::other(e)))?;
    write_atomically(path, (text + "\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replaced_file_is_whole_and_no_staging_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep/x.json");
        write_json(&path, &serde_json::json!({"a": 1})).unwrap();
        write_json(&path, &serde_json::json!({"a": 2})).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\n  \"a\": 2\n}\n"
        );
        let names: Vec<_> = std::fs::read_dir(dir.path().join("deep"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["x.json"]);
        // A directory that cannot be written to names the file.
        let error = write_atomically(&dir.path().join("missing/y"), b"y").unwrap_err();
        assert!(error.to_string().contains("missing"), "{error}");
    }
}
