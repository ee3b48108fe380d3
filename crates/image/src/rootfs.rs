//! Root filesystems from Debian's packages, and the load client's image built on one.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use cqlbench_debian::{machine_mirror, unpack_all, Apt};

use crate::name::ImageName;
use crate::oci::{scratch_dir, write_archive, RunConfig, Written};
use crate::{io, ImageError};

/// What the load client's pods need beside the binary: the C and C++ runtimes and OpenSSL it links,
/// CA certificates (TLS to Cassandra), and the shell, `tar` and `sleep` that `k8s run` execs in the pod
/// reading the results volume. The same as docker/Dockerfile's bookworm-slim with libssl3 and
/// ca-certificates, less what none of them uses (apt, dpkg, login, …).
pub const LOAD_PACKAGES: [&str; 7] = [
    "libc6",
    "libgcc-s1",
    "libssl3",
    "ca-certificates",
    "dash",
    "coreutils",
    "tar",
];

/// What a Cassandra node's container needs beside the load image's packages: the shells and tools
/// `k8s run` and an operator use in it (`sh -c head`, `ps`, `grep`, `hostname`) and the C++ runtime
/// and zlib a JDK links.
pub const CASSANDRA_PACKAGES: [&str; 14] = [
    "libc6",
    "libgcc-s1",
    "libssl3",
    "ca-certificates",
    "dash",
    "coreutils",
    "tar",
    "bash",
    "procps",
    "grep",
    "sed",
    "hostname",
    "zlib1g",
    "libstdc++6",
];

/// The unprivileged user the load pods run as (the Jobs' securityContext says the same).
const NONROOT: u32 = 65532;
/// The user Cassandra runs as, as in the official image (the StatefulSets' fsGroup).
const CASSANDRA: u32 = 999;

/// The `.deb` files of `packages` and everything they depend on, downloaded once into
/// `cache/<codename>-<set>/` and reused.
fn cached_debs(
    cache: &Path,
    set: &str,
    packages: &[&str],
    progress: &mut dyn FnMut(&str),
) -> Result<PathBuf, ImageError> {
    let mirror = machine_mirror()?;
    let debs = cache.join(format!("{}-{set}", mirror.codename));
    let complete = debs.join(".complete");
    let wanted = packages.join(" ");
    if std::fs::read_to_string(&complete).is_ok_and(|text| text.trim() == wanted) {
        return Ok(debs);
    }
    progress(&format!(
        "fetching Debian {} packages for the image: {wanted} and what they depend on",
        mirror.codename
    ));
    let staging = cache.join(format!(".{}-{set}.partial", mirror.codename));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(staging.join("debs"))
        .map_err(io(format!("creating {}", staging.display())))?;
    let apt = Apt::new(&staging.join("apt"), &mirror, &[mirror.codename.as_str()])?;
    apt.update()?;
    let closure = apt.closure(packages)?;
    apt.download(&closure, &staging.join("debs"))?;
    std::fs::write(staging.join("debs/.complete"), &wanted)
        .map_err(io("marking the packages complete"))?;
    let _ = std::fs::remove_dir_all(&debs);
    std::fs::rename(staging.join("debs"), &debs)
        .map_err(io(format!("keeping the packages in {}", debs.display())))?;
    let _ = std::fs::remove_dir_all(&staging);
    progress(&format!(
        "{} Debian packages kept in {}",
        closure.len(),
        debs.display()
    ));
    Ok(debs)
}

fn write_file(root: &Path, path: &str, text: &str, mode: u32) -> Result<(), ImageError> {
    let file = root.join(path);
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).map_err(io(format!("creating {}", parent.display())))?;
    }
    std::fs::write(&file, text).map_err(io(format!("writing {}", file.display())))?;
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode))
        .map_err(io(format!("setting the mode of {}", file.display())))
}

/// What maintainer scripts would have done, for the parts a container uses: `/bin/sh`, the users,
/// a world-writable `/tmp`, the CA bundle, and the dynamic linker's cache.
fn finish_unpacked(root: &Path) -> Result<(), ImageError> {
    let sh = root.join("bin/sh");
    if !sh.exists() && root.join("bin/dash").exists() {
        std::os::unix::fs::symlink("dash", &sh).map_err(io("linking /bin/sh to dash"))?;
    }
    write_file(
        root,
        "etc/passwd",
        &format!(
            "root:x:0:0:root:/root:/bin/sh\n\
             nonroot:x:{NONROOT}:{NONROOT}:nonroot:/home/nonroot:/bin/sh\n\
             cassandra:x:{CASSANDRA}:{CASSANDRA}:cassandra:/var/lib/cassandra:/bin/sh\n"
        ),
        0o644,
    )?;
    write_file(
        root,
        "etc/group",
        &format!("root:x:0:\nnonroot:x:{NONROOT}:\ncassandra:x:{CASSANDRA}:\n"),
        0o644,
    )?;
    for dir in ["tmp", "root", "home/nonroot"] {
        std::fs::create_dir_all(root.join(dir)).map_err(io(format!("creating /{dir}")))?;
    }
    std::fs::set_permissions(root.join("tmp"), std::fs::Permissions::from_mode(0o1777))
        .map_err(io("setting the mode of /tmp"))?;
    let home = root.join("home/nonroot");
    std::os::unix::fs::chown(&home, Some(NONROOT), Some(NONROOT))
        .map_err(io("giving /home/nonroot to its user"))?;
    ca_bundle(root)?;
    cqlbench_debian::run(Command::new("ldconfig").arg("-r").arg(root))?;
    Ok(())
}

/// `update-ca-certificates`' result: every certificate of the package in one bundle.
fn ca_bundle(root: &Path) -> Result<(), ImageError> {
    let certificates = root.join("usr/share/ca-certificates");
    if !certificates.is_dir() {
        return Ok(());
    }
    let mut files = Vec::new();
    let mut stack = vec![certificates];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).map_err(io(format!("reading {}", dir.display())))? {
            let path = entry.map_err(io("reading the certificates"))?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "crt") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut bundle = String::new();
    for file in files {
        let text =
            std::fs::read_to_string(&file).map_err(io(format!("reading {}", file.display())))?;
        bundle.push_str(text.trim_end());
        bundle.push('\n');
    }
    write_file(root, "etc/ssl/certs/ca-certificates.crt", &bundle, 0o644)
}

/// A root filesystem of `packages` (cached as the set `set`) with cqlbench at /usr/local/bin, in a
/// scratch directory under `cache`.
fn base_rootfs(
    cache: &Path,
    set: &str,
    packages: &[&str],
    binary: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<tempfile::TempDir, ImageError> {
    let debs = cached_debs(cache, set, packages, progress)?;
    let scratch = scratch_dir(cache, &format!("{set}-rootfs"))?;
    let root = scratch.path();
    progress("unpacking the root filesystem");
    unpack_all(&debs, root)?;
    finish_unpacked(root)?;
    let target = root.join("usr/local/bin/cqlbench");
    std::fs::create_dir_all(root.join("usr/local/bin")).map_err(io("creating /usr/local/bin"))?;
    std::fs::copy(binary, &target).map_err(io(format!("copying {}", binary.display())))?;
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755))
        .map_err(io("making cqlbench executable"))?;
    Ok(scratch)
}

/// Copies a tree with its symbolic links followed (a JDK's point into /etc); links that lead nowhere
/// are left out.
fn copy_dereferenced(from: &Path, to: &Path) -> Result<(), ImageError> {
    std::fs::create_dir_all(to).map_err(io(format!("creating {}", to.display())))?;
    for entry in std::fs::read_dir(from).map_err(io(format!("reading {}", from.display())))? {
        let path = entry
            .map_err(io(format!("reading {}", from.display())))?
            .path();
        let target = to.join(path.file_name().unwrap_or_default());
        let Ok(metadata) = std::fs::metadata(&path) else {
            continue;
        };
        if metadata.is_dir() {
            copy_dereferenced(&path, &target)?;
        } else {
            std::fs::copy(&path, &target).map_err(io(format!("copying {}", path.display())))?;
        }
    }
    Ok(())
}

/// What goes into a Cassandra image: its version's jars and a JDK, both as `cluster up` gets them.
pub struct CassandraParts<'a> {
    pub version: &'a str,
    pub jdk_major: u32,
    pub lib_dir: &'a Path,
    pub jdk_home: &'a Path,
}

/// A Cassandra node's image: `parts` under /opt/cassandra/lib and /opt/java, on [`CASSANDRA_PACKAGES`],
/// with `binary` (this cqlbench) as the entry point `cqlbench k8s node`, run as the user cassandra
/// (999:999) in /var/lib/cassandra.
pub fn cassandra_image(
    cache: &Path,
    binary: &Path,
    parts: &CassandraParts,
    name: &ImageName,
    out: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Written, ImageError> {
    let scratch = base_rootfs(cache, "cassandra", &CASSANDRA_PACKAGES, binary, progress)?;
    let root = scratch.path();
    progress(&format!(
        "adding Cassandra {}'s jars and JDK {}",
        parts.version, parts.jdk_major
    ));
    copy_dereferenced(parts.lib_dir, &root.join("opt/cassandra/lib"))?;
    copy_dereferenced(parts.jdk_home, &root.join("opt/java"))?;
    let data = root.join("var/lib/cassandra");
    std::fs::create_dir_all(&data).map_err(io("creating /var/lib/cassandra"))?;
    std::os::unix::fs::chown(&data, Some(CASSANDRA), Some(CASSANDRA))
        .map_err(io("giving /var/lib/cassandra to cassandra"))?;
    let run = RunConfig {
        entrypoint: vec!["cqlbench".into(), "k8s".into(), "node".into()],
        env: vec![
            "PATH=/opt/java/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
                .into(),
            "JAVA_HOME=/opt/java".into(),
            format!("CQLBENCH_CASSANDRA_VERSION={}", parts.version),
            format!("CQLBENCH_JDK_MAJOR={}", parts.jdk_major),
        ],
        user: Some(format!("{CASSANDRA}:{CASSANDRA}")),
        working_dir: Some("/var/lib/cassandra".into()),
        exposed_ports: vec!["7000/tcp".into(), "9042/tcp".into()],
        ..RunConfig::default()
    };
    progress(&format!("writing {} as {}", out.display(), name.short));
    write_archive(root, &run, name, out)
}

/// The load client's image: `binary` (this cqlbench) as `/usr/local/bin/cqlbench`, the entry point, on
/// [`LOAD_PACKAGES`], run as 65532:65532. Packages are cached under `cache`.
pub fn load_image(
    cache: &Path,
    binary: &Path,
    name: &ImageName,
    out: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Written, ImageError> {
    let scratch = base_rootfs(cache, "load", &LOAD_PACKAGES, binary, progress)?;
    let root = scratch.path();
    let run = RunConfig {
        entrypoint: vec!["cqlbench".into()],
        env: vec![
            "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into(),
            "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt".into(),
        ],
        user: Some(format!("{NONROOT}:{NONROOT}")),
        working_dir: Some("/".into()),
        exposed_ports: vec!["9464/tcp".into()],
        ..RunConfig::default()
    };
    progress(&format!("writing {} as {}", out.display(), name.short));
    write_archive(root, &run, name, out)
}
