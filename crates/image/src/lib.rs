//! cqlbench-image: container images as OCI archives, built without a registry or a container daemon.
//!
//! A root filesystem is assembled from Debian's packages (the release and mirror this machine uses,
//! through a private apt configuration, unpacked with `dpkg-deb`, never installed) plus cqlbench's own
//! files, and written as a one-layer OCI image layout in a tar archive that `ctr images import`,
//! `docker load` and `podman load` read ([`oci`]). [`load_image`] is the load client's image.

pub mod name;
pub mod oci;
mod rootfs;

use std::path::{Path, PathBuf};
use std::process::Command;

pub use name::ImageName;
pub use oci::{RunConfig, Written};
pub use rootfs::{cassandra_image, load_image, CassandraParts, CASSANDRA_PACKAGES, LOAD_PACKAGES};

#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    #[error("image name {0}")]
    BadName(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("{program}: {line}")]
    Tool { program: String, line: String },
    #[error("Debian packages: {0}")]
    Debian(#[from] cqlbench_debian::DebianError),
}

/// Runs a tool to completion; a failure carries its last line of output.
fn run_tool(command: &mut Command) -> Result<(), ImageError> {
    let program = command.get_program().to_string_lossy().to_string();
    let output = command.output().map_err(|source| ImageError::Io {
        what: format!("running {program}"),
        source,
    })?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = stderr
        .lines()
        .rfind(|l| !l.trim().is_empty())
        .unwrap_or("failed")
        .to_string();
    Err(ImageError::Tool { program, line })
}

/// Refuses an archive path that cannot be written before anything is built: the file is created and
/// removed again.
pub fn check_writable(out: &Path) -> Result<PathBuf, ImageError> {
    if out.is_dir() {
        return Err(ImageError::Io {
            what: format!("writing {}", out.display()),
            source: std::io::Error::other("is a directory"),
        });
    }
    let existed = out.exists();
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(out)
        .map_err(|source| ImageError::Io {
            what: format!("writing {}", out.display()),
            source,
        })?;
    if !existed {
        let _ = std::fs::remove_file(out);
    }
    Ok(out.to_path_buf())
}
