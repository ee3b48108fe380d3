//! An OCI image layout in one tar archive: `oci-layout`, `index.json` (the image's name in containerd's
//! and the OCI annotations, for `ctr images import` and `docker load` since Docker 25), `manifest.json`
//! (the docker-archive index, for older `docker load` and `podman load`) and the blobs: one gzip layer of
//! a root filesystem, its config, its manifest.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::name::ImageName;
use crate::{io, ImageError};

/// What the image runs, as the OCI image config's `config` holds it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunConfig {
    pub entrypoint: Vec<String>,
    pub cmd: Vec<String>,
    pub env: Vec<String>,
    /// `uid:gid` or a user name of the image.
    pub user: Option<String>,
    pub working_dir: Option<String>,
    pub exposed_ports: Vec<String>,
}

/// A written archive: its path and what a runtime will call the image.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    pub path: PathBuf,
    pub name: ImageName,
    /// `sha256:…` of the image manifest.
    pub digest: String,
    /// Bytes of the archive.
    pub size: u64,
}

/// `cassandra.tar: image docker.io/cqlbench/cassandra:5.0.9-jdk17 (sha256:…), 294.9 MB`
impl std::fmt::Display for Written {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: image {} ({}), {:.1} MB",
            self.path.display(),
            self.name.full,
            self.digest,
            self.size as f64 / 1e6
        )
    }
}

/// Counts and hashes what passes through to the inner writer.
struct Hashing<W> {
    inner: W,
    hash: Sha256,
    bytes: u64,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let written = self.inner.write(data)?;
        self.hash.update(&data[..written]);
        self.bytes += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn hex(hash: Sha256) -> String {
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// A blob in the layout: its digest's hex and size.
struct Blob {
    hex: String,
    size: u64,
}

impl Blob {
    fn digest(&self) -> String {
        format!("sha256:{}", self.hex)
    }
}

fn write_blob(blobs: &Path, bytes: &[u8]) -> Result<Blob, ImageError> {
    let mut hash = Sha256::new();
    hash.update(bytes);
    let hex = hex(hash);
    let path = blobs.join(&hex);
    std::fs::write(&path, bytes).map_err(io(format!("writing {}", path.display())))?;
    Ok(Blob {
        hex,
        size: bytes.len() as u64,
    })
}

fn tar_failed(line: &str) -> ImageError {
    ImageError::Debian(cqlbench_debian::DebianError::Failed {
        program: "tar".into(),
        line: line.into(),
    })
}

/// The root filesystem as one gzip layer: `tar` (numeric owners as they are on disk, names sorted so
/// that the same tree gives the same layer), hashed before and after compression. Returns the layer
/// blob and its `diff_id` (the uncompressed digest).
fn write_layer(rootfs: &Path, blobs: &Path) -> Result<(Blob, String), ImageError> {
    let mut tar = Command::new("tar")
        .args(["--numeric-owner", "--sort=name", "-C"])
        .arg(rootfs)
        .args(["-cf", "-", "."])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io("running tar"))?;
    let staging = blobs.join("layer.partial");
    let file =
        std::fs::File::create(&staging).map_err(io(format!("creating {}", staging.display())))?;
    let compressed = Hashing {
        inner: std::io::BufWriter::new(file),
        hash: Sha256::new(),
        bytes: 0,
    };
    let mut uncompressed = Hashing {
        inner: flate2::write::GzEncoder::new(compressed, flate2::Compression::fast()),
        hash: Sha256::new(),
        bytes: 0,
    };
    let mut stdout = tar.stdout.take().ok_or_else(|| tar_failed("no output"))?;
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = stdout
            .read(&mut buffer)
            .map_err(io("reading the layer from tar"))?;
        if n == 0 {
            break;
        }
        uncompressed
            .write_all(&buffer[..n])
            .map_err(io("writing the layer"))?;
    }
    let output = tar.wait_with_output().map_err(io("running tar"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(tar_failed(&cqlbench_debian::failure_line(
            &stderr,
            "",
            |_| false,
        )));
    }
    let diff_id = format!("sha256:{}", hex(uncompressed.hash));
    let mut compressed = uncompressed
        .inner
        .finish()
        .map_err(io("compressing the layer"))?;
    compressed.flush().map_err(io("writing the layer"))?;
    let (hex, size) = (hex(compressed.hash), compressed.bytes);
    drop(compressed.inner);
    std::fs::rename(&staging, blobs.join(&hex)).map_err(io("naming the layer blob"))?;
    Ok((Blob { hex, size }, diff_id))
}

fn config_json(run: &RunConfig, diff_id: &str) -> Value {
    let mut config = serde_json::Map::new();
    let strings = |v: &[String]| json!(v);
    if !run.entrypoint.is_empty() {
        config.insert("Entrypoint".into(), strings(&run.entrypoint));
    }
    if !run.cmd.is_empty() {
        config.insert("Cmd".into(), strings(&run.cmd));
    }
    if !run.env.is_empty() {
        config.insert("Env".into(), strings(&run.env));
    }
    if let Some(user) = &run.user {
        config.insert("User".into(), json!(user));
    }
    if let Some(dir) = &run.working_dir {
        config.insert("WorkingDir".into(), json!(dir));
    }
    if !run.exposed_ports.is_empty() {
        let ports: serde_json::Map<String, Value> = run
            .exposed_ports
            .iter()
            .map(|p| (p.clone(), json!({})))
            .collect();
        config.insert("ExposedPorts".into(), Value::Object(ports));
    }
    json!({
        "architecture": "amd64",
        "os": "linux",
        "config": config,
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created_by": "cqlbench k8s image"}],
    })
}

/// Writes the image of `rootfs` running `run` as an archive at `out`, named `name`. `out` is written
/// through a temporary file beside it, so a failed build leaves nothing at `out`.
pub fn write_archive(
    rootfs: &Path,
    run: &RunConfig,
    name: &ImageName,
    out: &Path,
) -> Result<Written, ImageError> {
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let layout = scratch_dir(&parent, "layout")?;
    let blobs = layout.path().join("blobs/sha256");
    std::fs::create_dir_all(&blobs).map_err(io(format!("creating {}", blobs.display())))?;
    let (layer, diff_id) = write_layer(rootfs, &blobs)?;
    let config = write_blob(&blobs, config_json(run, &diff_id).to_string().as_bytes())?;
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": config.digest(), "size": config.size},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                    "digest": layer.digest(), "size": layer.size}],
    });
    let manifest = write_blob(&blobs, manifest.to_string().as_bytes())?;
    let index = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": manifest.digest(),
            "size": manifest.size,
            "annotations": {
                "io.containerd.image.name": name.full,
                "org.opencontainers.image.ref.name": name.tag,
            },
        }],
    });
    let docker = json!([{
        "Config": format!("blobs/sha256/{}", config.hex),
        "RepoTags": [name.short],
        "Layers": [format!("blobs/sha256/{}", layer.hex)],
    }]);
    let files = [
        ("oci-layout", json!({"imageLayoutVersion": "1.0.0"})),
        ("index.json", index),
        ("manifest.json", docker),
    ];
    for (file, value) in files {
        let path = layout.path().join(file);
        std::fs::write(&path, value.to_string())
            .map_err(io(format!("writing {}", path.display())))?;
    }
    let partial = parent.join(format!(
        ".{}.partial",
        out.file_name().unwrap_or_default().to_string_lossy()
    ));
    let archived = cqlbench_debian::run(
        Command::new("tar")
            .args(["--numeric-owner", "--sort=name", "-C"])
            .arg(layout.path())
            .arg("-cf")
            .arg(&partial)
            .args(["oci-layout", "index.json", "manifest.json", "blobs"]),
    )
    .map_err(ImageError::from)
    .and_then(|_| std::fs::rename(&partial, out).map_err(io(format!("writing {}", out.display()))));
    if archived.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    archived?;
    let size = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
    Ok(Written {
        path: out.to_path_buf(),
        name: name.clone(),
        digest: manifest.digest(),
        size,
    })
}

/// A scratch directory, removed when dropped however the build ends. The layout's sits beside the
/// archive (the same file system: the blobs are large).
pub(crate) fn scratch_dir(parent: &Path, label: &str) -> Result<tempfile::TempDir, ImageError> {
    tempfile::Builder::new()
        .prefix(&format!(".cqlbench-image-{label}-"))
        .tempdir_in(parent)
        .map_err(io(format!(
            "creating a scratch directory in {}",
            parent.display()
        )))
}
