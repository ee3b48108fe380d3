//! sysbench and fio: the machine's own when on `PATH`, else Debian's packages unpacked into
//! cqlbench's cache (`<cache>/tools/debian`) with the shared libraries the machine lacks — no root
//! needed beyond what `apt-get download` needs, nothing installed, nothing outside the cache.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cqlbench_debian::{machine_mirror, unpack_all, Apt};
use cqlbench_results::ToolRecord;

use crate::error::{ProbeError, Result};

pub const TOOL_NAMES: [&str; 2] = ["sysbench", "fio"];

/// Marks a finished unpack in the cache.
const COMPLETE_MARKER: &str = ".complete";

/// A tool, ready to run.
#[derive(Debug, Clone)]
pub struct Tool {
    pub name: &'static str,
    pub program: PathBuf,
    /// Where the unpacked libraries are (empty for the machine's own tool).
    pub lib_dirs: Vec<PathBuf>,
    pub version: String,
}

impl Tool {
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        if let Some(path) = self.library_path() {
            command.env("LD_LIBRARY_PATH", path);
        }
        command.stdin(Stdio::null());
        command
    }

    fn library_path(&self) -> Option<String> {
        let joined = std::env::join_paths(&self.lib_dirs).ok()?;
        (!self.lib_dirs.is_empty()).then(|| joined.to_string_lossy().into_owned())
    }

    pub fn record(&self) -> ToolRecord {
        ToolRecord {
            version: self.version.clone(),
            path: self.program.clone(),
            library_path: self.library_path(),
        }
    }
}

/// Both tools, fetched once into `cache` when the machine lacks either.
pub fn find_or_fetch(cache: &Path, progress: &mut dyn FnMut(&str)) -> Result<Vec<Tool>> {
    let unpacked = cache.join("tools").join("debian");
    let mut tools = Vec::new();
    for name in TOOL_NAMES {
        let tool = match on_path(name) {
            Some(program) => ready(name, program, Vec::new())?,
            None => {
                if !unpacked.join(COMPLETE_MARKER).is_file() {
                    fetch(&unpacked, progress)
                        .map_err(|reason| ProbeError::ToolUnavailable { tool: name, reason })?;
                }
                ready(
                    name,
                    unpacked.join("usr/bin").join(name),
                    library_dirs(&unpacked),
                )?
            }
        };
        tools.push(tool);
    }
    Ok(tools)
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// The tool with its version line; one that does not start (a missing library) is refused.
fn ready(name: &'static str, program: PathBuf, lib_dirs: Vec<PathBuf>) -> Result<Tool> {
    let mut tool = Tool {
        name,
        program,
        lib_dirs,
        version: String::new(),
    };
    let output = tool
        .command()
        .arg("--version")
        .output()
        .map_err(|e| ProbeError::ToolBroken {
            tool: tool.program.display().to_string(),
            line: e.to_string(),
        })?;
    let text = String::from_utf8_lossy(&output.stdout).to_string()
        + &String::from_utf8_lossy(&output.stderr);
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if !output.status.success() {
        return Err(ProbeError::ToolBroken {
            tool: tool.program.display().to_string(),
            line: line.to_string(),
        });
    }
    tool.version = line.trim().to_string();
    Ok(tool)
}

/// Downloads sysbench, fio and the library packages the machine lacks with a private apt
/// configuration, unpacks them beside each other and moves the result into place.
fn fetch(unpacked: &Path, progress: &mut dyn FnMut(&str)) -> std::result::Result<(), String> {
    let staging = unpacked.with_file_name(format!(".staging-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let outcome = stage(&staging, unpacked, progress);
    let _ = std::fs::remove_dir_all(&staging);
    outcome
}

fn stage(
    staging: &Path,
    unpacked: &Path,
    progress: &mut dyn FnMut(&str),
) -> std::result::Result<(), String> {
    let mirror = machine_mirror().map_err(|e| e.to_string())?;
    progress(&format!(
        "sysbench or fio not on PATH: fetching Debian's packages ({}) into {}",
        mirror.codename,
        unpacked.display()
    ));
    let apt = Apt::new(&staging.join("apt"), &mirror, &[mirror.codename.as_str()])
        .map_err(|e| e.to_string())?;
    apt.update().map_err(|e| e.to_string())?;
    let packages = apt
        .with_missing_libraries(&TOOL_NAMES)
        .map_err(|e| e.to_string())?;
    let debs = staging.join("debs");
    std::fs::create_dir_all(&debs).map_err(|e| format!("creating {}: {e}", debs.display()))?;
    apt.download(&packages, &debs).map_err(|e| e.to_string())?;
    let root = staging.join("root");
    unpack_all(&debs, &root).map_err(|e| e.to_string())?;
    std::fs::write(root.join(COMPLETE_MARKER), packages.join("\n") + "\n")
        .map_err(|e| format!("writing {}: {e}", root.display()))?;
    progress(&format!("unpacked {} packages", packages.len()));
    let _ = std::fs::remove_dir_all(unpacked);
    if let Some(parent) = unpacked.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("creating {}: {e}", parent.display()))?;
    }
    std::fs::rename(&root, unpacked).map_err(|e| format!("moving into {}: {e}", unpacked.display()))
}

/// Every directory under `root` that holds a shared library (Debian keeps some in private
/// subdirectories, e.g. `…/ceph`).
fn library_dirs(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut has_library = false;
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                pending.push(path);
            } else if entry.file_name().to_string_lossy().contains(".so") {
                has_library = true;
            }
        }
        if has_library {
            found.push(dir);
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_directories_are_those_that_hold_shared_objects() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        for (dir, file) in [
            ("usr/lib/x86_64-linux-gnu", "libaio.so.1"),
            ("usr/lib/x86_64-linux-gnu/ceph", "libceph-common.so.2"),
            ("usr/bin", "fio"),
        ] {
            std::fs::create_dir_all(r.join(dir)).unwrap();
            std::fs::write(r.join(dir).join(file), "").unwrap();
        }
        assert_eq!(
            library_dirs(r),
            [
                r.join("usr/lib/x86_64-linux-gnu"),
                r.join("usr/lib/x86_64-linux-gnu/ceph")
            ]
        );
    }
}
