//! JDK 8 from Debian's packages, made to run on this machine without installing anything system-wide.
//!
//! No wheel on PyPI ships a JDK 8, and Debian's stable suite has none either; its unstable suite (`sid`)
//! has `openjdk-8-jre-headless` and `openjdk-8-jdk-headless` (with `jcmd`), built against a newer glibc
//! than stable's. So: a private apt configuration (the machine's own sources stay untouched) naming the
//! Debian mirror the machine already uses, `apt-get download` of the two JDK packages and sid's `libc6`,
//! `dpkg-deb -x` of each into one directory, and every ELF file of the JDK pointed at that glibc with
//! `patchelf` (the interpreter of executables; an added rpath everywhere, keeping the JDK's own
//! `$ORIGIN` rpath). `patchelf` is the machine's when it has one recent enough (0.14, for
//! `--add-rpath`), else the stable suite's package unpacked next to the download.
//!
//! The interpreter path is absolute, so the files are patched for their final place: everything is
//! built in a staging directory, renamed into place, checked (`java -version`, `jcmd`), and only then
//! marked complete; a failed check removes it again, and a directory without the mark is never used.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use cqlbench_debian::{files_in, machine_mirror, Apt, DebianError};

use crate::error::{ClusterError, IoContext, Result};

/// The mark of a finished, checked installation (holds the version `java -version` printed).
pub const COMPLETE_MARKER: &str = ".complete";

/// Where the JDK sits inside the unpacked packages.
pub const JDK_SUBDIR: &str = "usr/lib/jvm/java-8-openjdk-amd64";

/// sid's glibc (loader and libraries) inside the unpacked packages.
const LIBC_SUBDIR: &str = "usr/lib/x86_64-linux-gnu";
const LOADER: &str = "ld-linux-x86-64.so.2";

/// The suite that has OpenJDK 8, and what is taken from it.
const JDK_SUITE: &str = "sid";
const JDK_PACKAGES: [&str; 3] = ["openjdk-8-jre-headless", "openjdk-8-jdk-headless", "libc6"];

/// The JDK home of an installation directory (`<cache>/jdks/8`), when it is complete.
pub fn installed_home(install_dir: &Path) -> Option<PathBuf> {
    install_dir
        .join(COMPLETE_MARKER)
        .is_file()
        .then(|| install_dir.join(JDK_SUBDIR))
}

/// Installs JDK 8 into `target` (which must not hold a complete installation). `staging` is a
/// private scratch directory beside it, removed whatever happens.
pub fn install(target: &Path, staging: &Path, progress: &mut dyn FnMut(&str)) -> Result<()> {
    let _ = std::fs::remove_dir_all(staging);
    let outcome = stage_and_move(target, staging, progress);
    let _ = std::fs::remove_dir_all(staging);
    if outcome.is_err() {
        let _ = std::fs::remove_dir_all(target);
    }
    outcome
}

fn failed(detail: impl Into<String>) -> ClusterError {
    ClusterError::JdkInstallFailed {
        major: 8,
        detail: detail.into(),
    }
}

fn stage_and_move(target: &Path, staging: &Path, progress: &mut dyn FnMut(&str)) -> Result<()> {
    let mirror = machine_mirror().map_err(debian)?;
    let patchelf_ok = machine_patchelf();
    // sid, and the machine's own suite too when `patchelf` must come from there.
    let suites: &[&str] = if patchelf_ok.is_some() {
        &[JDK_SUITE]
    } else {
        &[JDK_SUITE, mirror.codename.as_str()]
    };
    let apt = Apt::new(&staging.join("apt"), &mirror, suites).map_err(debian)?;
    progress(&format!(
        "JDK 8 not found: fetching Debian's OpenJDK 8 ({}) and its glibc from the {JDK_SUITE} suite{} with a private apt configuration",
        JDK_PACKAGES[..2].join(", "),
        if patchelf_ok.is_some() {
            String::new()
        } else {
            format!(", and patchelf from {}", mirror.codename)
        }
    ));
    apt.update().map_err(debian)?;
    let debs = staging.join("debs");
    std::fs::create_dir_all(&debs).context(|| format!("creating {}", debs.display()))?;
    let mut wanted: Vec<String> = JDK_PACKAGES.iter().map(|p| p.to_string()).collect();
    if patchelf_ok.is_none() {
        wanted.push(format!("patchelf/{}", mirror.codename));
    }
    apt.download(&wanted, &debs).map_err(debian)?;
    let root = staging.join("root");
    let tools = staging.join("tools");
    for deb in files_in(&debs).map_err(debian)? {
        let name = deb.file_name().unwrap_or_default().to_string_lossy();
        let into = if name.starts_with("patchelf_") {
            &tools
        } else {
            &root
        };
        run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(into))?;
    }
    let patchelf = match patchelf_ok {
        Some(path) => path,
        None => tools.join("usr/bin/patchelf"),
    };
    relink_absolute_symlinks(&root)?;
    let final_libc = target.join(LIBC_SUBDIR);
    let patched = patch_elf_files(&patchelf, &root.join(JDK_SUBDIR), &final_libc)?;
    progress(&format!(
        "pointed {patched} ELF files of the JDK at {}",
        final_libc.display()
    ));
    let _ = std::fs::remove_dir_all(target);
    std::fs::rename(&root, target).context(|| format!("moving JDK 8 into {}", target.display()))?;
    let home = target.join(JDK_SUBDIR);
    let version = check_runs(&home)?;
    std::fs::write(target.join(COMPLETE_MARKER), format!("{version}\n"))
        .context(|| format!("writing {}", target.join(COMPLETE_MARKER).display()))?;
    Ok(())
}

/// A Debian step's failure, as the JDK installation's.
fn debian(error: DebianError) -> ClusterError {
    failed(match error {
        DebianError::Missing(program) => format!(
            "{program} is not installed (JDK 8 comes from Debian's packages: apt-get and dpkg-deb are needed)"
        ),
        other => other.to_string(),
    })
}

/// Runs a command to completion; a failure carries its last meaningful line of output.
fn run(command: &mut Command) -> Result<()> {
    cqlbench_debian::run(command).map(drop).map_err(debian)
}

/// The machine's `patchelf`, if it has `--add-rpath` (0.14 and newer).
fn machine_patchelf() -> Option<PathBuf> {
    let output = Command::new("patchelf").arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let version = text.split_whitespace().nth(1)?;
    let mut parts = version.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next()?, parts.next()?);
    (output.status.success() && (major, minor) >= (0, 14)).then(|| PathBuf::from("patchelf"))
}

/// Debian points the JDK's configuration files at `/etc/java-8-openjdk/…` with absolute links, which
/// would name this machine's /etc (where nothing was installed): each one whose target came with the
/// packages becomes a relative link to the unpacked copy. Others (e.g. the CA certificates) stay.
fn relink_absolute_symlinks(root: &Path) -> Result<usize> {
    let mut relinked = 0;
    walk(root, &mut |path, meta| {
        if !meta.file_type().is_symlink() {
            return Ok(());
        }
        let target = std::fs::read_link(path).context(|| format!("reading {}", path.display()))?;
        let Ok(inside) = target.strip_prefix("/") else {
            return Ok(());
        };
        if std::fs::symlink_metadata(root.join(inside)).is_err() {
            return Ok(());
        }
        let relative = relative_link(root, path, inside);
        std::fs::remove_file(path).context(|| format!("replacing {}", path.display()))?;
        std::os::unix::fs::symlink(&relative, path)
            .context(|| format!("linking {}", path.display()))?;
        relinked += 1;
        Ok(())
    })?;
    Ok(relinked)
}

/// Calls `visit` on every entry below `root` that is not a directory (symbolic links not followed).
fn walk(root: &Path, visit: &mut dyn FnMut(&Path, &std::fs::Metadata) -> Result<()>) -> Result<()> {
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).context(|| format!("reading {}", dir.display()))? {
            let path = entry
                .context(|| format!("reading {}", dir.display()))?
                .path();
            let meta = std::fs::symlink_metadata(&path)
                .context(|| format!("reading {}", path.display()))?;
            if meta.is_dir() {
                pending.push(path);
            } else {
                visit(&path, &meta)?;
            }
        }
    }
    Ok(())
}

/// The relative link from `link` (a path under `root`) to `root/target`.
pub fn relative_link(root: &Path, link: &Path, target: &Path) -> PathBuf {
    let depth = link
        .parent()
        .and_then(|p| p.strip_prefix(root).ok())
        .map_or(0, |p| p.components().count());
    let mut relative = PathBuf::new();
    for _ in 0..depth {
        relative.push("..");
    }
    relative.join(target)
}

/// Points every ELF file under `jdk` at the glibc in `libc_dir`; returns how many were patched.
fn patch_elf_files(patchelf: &Path, jdk: &Path, libc_dir: &Path) -> Result<usize> {
    let loader = libc_dir.join(LOADER);
    let mut patched = 0;
    walk(jdk, &mut |path, meta| {
        if !meta.is_file() || !is_elf(path) {
            return Ok(());
        }
        let has_interpreter = Command::new(patchelf)
            .arg("--print-interpreter")
            .arg(path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if has_interpreter {
            run(Command::new(patchelf)
                .arg("--set-interpreter")
                .arg(&loader)
                .arg(path))?;
        }
        // Added, never set: the JDK's own $ORIGIN/../lib/amd64/jli rpath must stay.
        run(Command::new(patchelf)
            .arg("--add-rpath")
            .arg(libc_dir)
            .arg(path))?;
        patched += 1;
        Ok(())
    })?;
    if patched == 0 {
        return Err(failed(format!("no ELF file under {}", jdk.display())));
    }
    Ok(patched)
}

fn is_elf(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && magic == *b"\x7fELF"
}

/// `java -version` must print a 1.8 version, and `jcmd` (to read the live flags) must be there.
fn check_runs(home: &Path) -> Result<String> {
    let java = home.join("bin/java");
    let output = Command::new(&java)
        .arg("-version")
        .output()
        .map_err(|e| failed(format!("{}: {e}", java.display())))?;
    let text = String::from_utf8_lossy(&output.stderr);
    let version = text
        .split('"')
        .nth(1)
        .filter(|v| v.starts_with("1.8.") && output.status.success())
        .ok_or_else(|| {
            failed(format!(
                "the unpacked JDK does not run: {} -version said {:?}",
                java.display(),
                text.lines().next().unwrap_or("nothing")
            ))
        })?;
    if !home.join("bin/jcmd").is_file() {
        return Err(failed(format!("no jcmd in {}", home.join("bin").display())));
    }
    Ok(version.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_links_into_the_packages_become_relative() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        std::fs::create_dir_all(r.join("etc/java-8-openjdk")).unwrap();
        std::fs::write(
            r.join("etc/java-8-openjdk/jvm-amd64.cfg"),
            "-server KNOWN\n",
        )
        .unwrap();
        let lib = r.join("usr/lib/jvm/java-8-openjdk-amd64/jre/lib/amd64");
        std::fs::create_dir_all(&lib).unwrap();
        std::os::unix::fs::symlink("/etc/java-8-openjdk/jvm-amd64.cfg", lib.join("jvm.cfg"))
            .unwrap();
        std::os::unix::fs::symlink("/nonexistent-cqlbench/cacerts", lib.join("cacerts")).unwrap();
        assert_eq!(relink_absolute_symlinks(r).unwrap(), 1);
        assert_eq!(
            std::fs::read_link(lib.join("jvm.cfg")).unwrap(),
            PathBuf::from("../../../../../../../etc/java-8-openjdk/jvm-amd64.cfg")
        );
        assert_eq!(
            std::fs::read_to_string(lib.join("jvm.cfg")).unwrap(),
            "-server KNOWN\n"
        );
        // A target the packages do not have is left as it was.
        assert_eq!(
            std::fs::read_link(lib.join("cacerts")).unwrap(),
            PathBuf::from("/nonexistent-cqlbench/cacerts")
        );
        // Moving the tree keeps the links working.
        let moved = root.path().with_extension("moved");
        std::fs::rename(r, &moved).unwrap();
        assert_eq!(
            std::fs::read_to_string(
                moved.join("usr/lib/jvm/java-8-openjdk-amd64/jre/lib/amd64/jvm.cfg")
            )
            .unwrap(),
            "-server KNOWN\n"
        );
        std::fs::remove_dir_all(&moved).unwrap();
    }

    #[test]
    fn only_a_marked_installation_counts() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(installed_home(dir.path()), None);
        std::fs::write(dir.path().join(COMPLETE_MARKER), "1.8.0_504\n").unwrap();
        assert_eq!(
            installed_home(dir.path()),
            Some(dir.path().join(JDK_SUBDIR))
        );
    }
}
