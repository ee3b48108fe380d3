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
    /// A tool that failed (`tar`, `ldconfig`, `apt-get`, `dpkg-deb`) says why in its own words.
    #[error(transparent)]
    Debian(#[from] cqlbench_debian::DebianError),
}

/// Maps an I/O error to what was being done.
fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ImageError {
    let what = what.into();
    move |source| ImageError::Io { what, source }
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
