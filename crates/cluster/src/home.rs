//! Where cqlbench keeps Cassandra jars, JDKs and clusters: `$CQLBENCH_HOME`, else `~/.cache/cqlbench`.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// `$CQLBENCH_HOME`, else `$XDG_CACHE_HOME/cqlbench`, else `$HOME/.cache/cqlbench`.
    pub fn from_env() -> Self {
        if let Some(dir) = std::env::var_os("CQLBENCH_HOME").filter(|d| !d.is_empty()) {
            return Self::new(dir);
        }
        if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
            return Self::new(PathBuf::from(dir).join("cqlbench"));
        }
        let home = std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into());
        Self::new(PathBuf::from(home).join(".cache").join("cqlbench"))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn cassandra_dir(&self, version: &str) -> PathBuf {
        self.root.join("cassandra").join(version)
    }

    pub fn jdks_dir(&self) -> PathBuf {
        self.root.join("jdks")
    }

    pub fn clusters_dir(&self) -> PathBuf {
        self.root.join("clusters")
    }

    pub fn cluster_dir(&self, name: &str) -> PathBuf {
        self.clusters_dir().join(name)
    }
}

/// An exclusive advisory lock on a file, held until dropped: two cqlbench processes never fetch
/// the same Cassandra version or install the same JDK at once.
pub struct FileLock {
    _file: std::fs::File,
}

impl FileLock {
    pub fn acquire(path: &Path) -> std::io::Result<Self> {
        use std::os::fd::AsRawFd;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let file = std::fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        // SAFETY: flock on a file descriptor we own; blocks until the lock is ours.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Self { _file: file })
    }
}
