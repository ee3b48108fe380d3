//! Cassandra's runtime jars, fetched once per version with the machine's `mvn` into the cache.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::error::{ClusterError, IoContext, Result};
use crate::home::{FileLock, Home};
use crate::version::CassandraVersion;

/// A fetched Cassandra: the directory holding `cassandra-all` and all its runtime dependencies.
#[derive(Debug, Clone)]
pub struct Distribution {
    pub version: CassandraVersion,
    pub lib_dir: PathBuf,
}

const COMPLETE_MARKER: &str = ".complete";

impl Distribution {
    /// The classpath wildcard the JVM expands itself.
    pub fn classpath(&self) -> String {
        format!("{}/*", self.lib_dir.display())
    }

    /// Cassandra refuses to start without the jamm agent (object size measurement).
    pub fn jamm_jar(&self) -> Result<PathBuf> {
        let entries = std::fs::read_dir(&self.lib_dir)
            .context(|| format!("reading {}", self.lib_dir.display()))?;
        entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("jamm-") && n.ends_with(".jar"))
            })
            .ok_or_else(|| ClusterError::MvnFailed {
                version: self.version.raw.clone(),
                detail: format!("no jamm jar in {}", self.lib_dir.display()),
            })
    }
}

/// Returns the cached jars of `version`, fetching them first if needed.
pub fn ensure(
    home: &Home,
    version: &CassandraVersion,
    progress: &mut dyn FnMut(&str),
) -> Result<Distribution> {
    let dir = home.cassandra_dir(&version.raw);
    let lib_dir = dir.join("lib");
    let complete = || dir.join(COMPLETE_MARKER).exists();
    if complete() {
        return Ok(Distribution {
            version: version.clone(),
            lib_dir,
        });
    }
    let lock_path = home
        .root()
        .join("cassandra")
        .join(format!("{}.lock", version.raw));
    let _lock =
        FileLock::acquire(&lock_path).context(|| format!("locking {}", lock_path.display()))?;
    if complete() {
        // Another cqlbench fetched it while we waited for the lock.
        return Ok(Distribution {
            version: version.clone(),
            lib_dir,
        });
    }
    progress(&format!(
        "fetching Cassandra {version} and its dependencies with mvn (once per version) into {}",
        dir.display()
    ));
    let started = Instant::now();
    std::fs::create_dir_all(&dir).context(|| format!("creating {}", dir.display()))?;
    // Fetch into a private directory and rename: a concurrent or interrupted fetch never leaves a
    // half-filled lib/ that looks complete.
    let staging = dir.join(format!(".fetch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).context(|| format!("creating {}", staging.display()))?;
    let outcome = run_mvn(version, &staging);
    if let Err(err) = outcome {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(err);
    }
    let _ = std::fs::remove_dir_all(&lib_dir);
    std::fs::rename(staging.join("lib"), &lib_dir)
        .context(|| format!("moving jars into {}", lib_dir.display()))?;
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::write(dir.join(COMPLETE_MARKER), b"")
        .context(|| format!("writing {}", dir.display()))?;
    let (jars, bytes) = jar_stats(&lib_dir);
    progress(&format!(
        "fetched Cassandra {version}: {jars} jars, {} MB in {:.1} s",
        bytes / 1_000_000,
        started.elapsed().as_secs_f64()
    ));
    Ok(Distribution {
        version: version.clone(),
        lib_dir,
    })
}

fn pom(version: &CassandraVersion) -> String {
    let dependencies: String = version
        .artifacts()
        .iter()
        .map(|artifact| {
            format!(
                r#"    <dependency>
      <groupId>org.apache.cassandra</groupId>
      <artifactId>{artifact}</artifactId>
      <version>{}</version>
    </dependency>
"#,
                version.raw
            )
        })
        .collect();
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>cqlbench</groupId>
  <artifactId>cassandra-fetch</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
{dependencies}  </dependencies>
</project>
"#
    )
}

fn run_mvn(version: &CassandraVersion, staging: &Path) -> Result<()> {
    let pom_path = staging.join("pom.xml");
    std::fs::write(&pom_path, pom(version))
        .context(|| format!("writing {}", pom_path.display()))?;
    let output = Command::new("mvn")
        .arg("-B")
        .arg("-f")
        .arg(&pom_path)
        .arg("dependency:copy-dependencies")
        .arg("-DincludeScope=runtime")
        .arg(format!(
            "-DoutputDirectory={}",
            staging.join("lib").display()
        ))
        .stdin(std::process::Stdio::null())
        .output();
    let output = match output {
        Ok(output) => output,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(ClusterError::MvnMissing)
        }
        Err(err) => {
            return Err(ClusterError::MvnFailed {
                version: version.raw.clone(),
                detail: err.to_string(),
            })
        }
    };
    if output.status.success() && staging.join("lib").is_dir() {
        return Ok(());
    }
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    Err(classify_mvn_failure(version, &text))
}

/// Phrases in Maven's output that mean it could not reach the repository at all.
const OFFLINE_MARKERS: [&str; 7] = [
    "offline mode",
    "unknownhost",
    "unknown host",
    "could not transfer",
    "network is unreachable",
    "connection refused",
    "connect timed out",
];

/// Turns Maven's page of output into the one cause that matters.
fn classify_mvn_failure(version: &CassandraVersion, output: &str) -> ClusterError {
    let error_lines: Vec<&str> = output
        .lines()
        .map(|l| l.trim())
        .filter(|l| l.starts_with("[ERROR]") && l.len() > "[ERROR] ".len())
        .collect();
    let first_error = error_lines
        .first()
        .map(|l| l.trim_start_matches("[ERROR]").trim().to_string())
        .unwrap_or_else(|| "mvn exited with an error and printed no [ERROR] line".to_string());
    let lower = output.to_lowercase();
    let offline = OFFLINE_MARKERS.iter().any(|m| lower.contains(m));
    let missing = lower.contains("could not find artifact org.apache.cassandra:cassandra-all")
        || lower.contains("failure to find org.apache.cassandra:cassandra-all")
        || (lower.contains("cassandra-all") && lower.contains("was not found in"));
    let offline_line = output
        .lines()
        .map(|l| l.trim())
        .find(|l| OFFLINE_MARKERS.iter().any(|m| l.to_lowercase().contains(m)))
        .map(|l| {
            // "… could not be resolved: Cannot access central (…) in offline mode and …": keep the cause.
            let start = l.find("Cannot access").unwrap_or(0);
            l[start..]
                .trim_start_matches("[ERROR]")
                .trim_start_matches("[WARNING]")
                .trim()
                .to_string()
        });
    if missing && !offline {
        ClusterError::VersionNotOnMavenCentral {
            version: version.raw.clone(),
        }
    } else if offline {
        ClusterError::MvnOffline {
            version: version.raw.clone(),
            detail: shorten(&offline_line.unwrap_or(first_error)),
        }
    } else {
        ClusterError::MvnFailed {
            version: version.raw.clone(),
            detail: shorten(&first_error),
        }
    }
}

fn shorten(line: &str) -> String {
    const LIMIT: usize = 300;
    if line.chars().count() <= LIMIT {
        line.to_string()
    } else {
        format!("{}…", line.chars().take(LIMIT).collect::<String>())
    }
}

fn jar_stats(lib_dir: &Path) -> (usize, u64) {
    let Ok(entries) = std::fs::read_dir(lib_dir) else {
        return (0, 0);
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "jar"))
        .fold((0, 0), |(n, b), e| {
            (n + 1, b + e.metadata().map(|m| m.len()).unwrap_or(0))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(raw: &str) -> CassandraVersion {
        CassandraVersion::parse(raw).unwrap()
    }

    #[test]
    fn missing_artifact_is_reported_as_not_on_maven_central() {
        let out = "[ERROR] Failed to execute goal on project cassandra-fetch: Could not resolve dependencies for project cqlbench:cassandra-fetch:pom:1: Could not find artifact org.apache.cassandra:cassandra-all:jar:5.0.99 in central (https://example.invalid/maven2)";
        let err = classify_mvn_failure(&v("5.0.99"), out);
        assert!(
            matches!(err, ClusterError::VersionNotOnMavenCentral { .. }),
            "{err}"
        );
    }

    #[test]
    fn cassandra_3_11_fetches_thrift_beside_all() {
        let text = pom(&v("3.11.19"));
        for artifact in ["cassandra-all", "cassandra-thrift"] {
            assert!(
                text.contains(&format!(
                    "<artifactId>{artifact}</artifactId>\n      <version>3.11.19</version>"
                )),
                "{text}"
            );
        }
        assert!(!pom(&v("5.0.9")).contains("cassandra-thrift"));
    }

    #[test]
    fn offline_mode_is_reported_as_offline() {
        let out = "[ERROR] Failed to execute goal on project cassandra-fetch: Could not resolve dependencies: Cannot access central (https://example.invalid/maven2) in offline mode and the artifact org.apache.cassandra:cassandra-all:jar:5.0.9 has not been downloaded from it before.";
        let err = classify_mvn_failure(&v("5.0.9"), out);
        assert!(matches!(err, ClusterError::MvnOffline { .. }), "{err}");
        assert!(err.to_string().contains("offline mode"));
    }
}
