//! Finding the files of one JVM's GC log on disk: the live file and its rotated parts.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Whether `name` is a GC log file: `gc.log`, `gc.log.3`, `gc.log.0.current`, `gc-2.log.gz`, ….
fn is_gc_log_name(name: &str) -> bool {
    name.starts_with("gc") && name.contains(".log")
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The GC log files in a directory (a node's `logs/`, a pod's copied logs), by name.
pub fn parts_in_dir(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut parts: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            path.is_file()
                && path
                    .file_name()
                    .is_some_and(|n| is_gc_log_name(&n.to_string_lossy()))
        })
        .collect();
    parts.sort();
    Ok(parts)
}

/// The parts of the log whose live file is `log` (`gc.log`): its numbered rotations beside it
/// (`gc.log.0`, `gc.log.1`, …) oldest first, then `log` itself. HotSpot rotates by a counter that
/// wraps, so the rotations are ordered by modification time, not by number.
pub fn rotated_parts(log: &Path) -> Vec<PathBuf> {
    let mut parts: Vec<PathBuf> = Vec::new();
    if let (Some(dir), Some(name)) = (log.parent(), log.file_name()) {
        let prefix = format!("{}.", name.to_string_lossy());
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            let numbered = file
                .strip_prefix(&prefix)
                .is_some_and(|n| n.parse::<u64>().is_ok());
            if numbered {
                parts.push(entry.path());
            }
        }
    }
    parts.sort_by_key(|p| modified(p));
    parts.push(log.to_path_buf());
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotations_come_oldest_first_and_the_live_file_last() {
        let dir = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        for (name, age_s) in [
            ("gc.log.1", 30),
            ("gc.log.0", 20),
            ("gc.log", 0),
            ("system.log", 5),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, name).unwrap();
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(now - std::time::Duration::from_secs(age_s))
                .unwrap();
        }
        let names = |parts: Vec<PathBuf>| -> Vec<String> {
            parts
                .iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(
            names(rotated_parts(&dir.path().join("gc.log"))),
            ["gc.log.1", "gc.log.0", "gc.log"]
        );
        assert_eq!(
            names(parts_in_dir(dir.path()).unwrap()),
            ["gc.log", "gc.log.0", "gc.log.1"]
        );
    }
}
