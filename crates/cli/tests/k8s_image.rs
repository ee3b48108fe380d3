//! `cqlbench k8s image load`: the archive is checked by a real containerd (Debian's package, unpacked
//! into the cache, run on a socket and directories of the test's own), not by reading it back with
//! cqlbench's code: `ctr images import` takes it under the name a kubelet looks up, and a container of it
//! runs cqlbench as the unprivileged user the Jobs ask for, with the shell, tar and sleep `k8s run` uses.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use cqlbench_debian::{machine_mirror, unpack_all, Apt};

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Debian's containerd and runc (with any shared library this machine lacks), unpacked once into the
/// cache.
fn containerd_root() -> PathBuf {
    let cache = cqlbench_cluster::Home::from_env().root().join("k8s");
    let mirror = machine_mirror().expect("a Debian machine");
    let root = cache.join(format!("containerd-{}", mirror.codename));
    if root.join(".complete").is_file() {
        return root;
    }
    let staging = cache.join("containerd.partial");
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(staging.join("debs")).unwrap();
    let apt = Apt::new(&staging.join("apt"), &mirror, &[mirror.codename.as_str()]).unwrap();
    apt.update().unwrap();
    let packages = apt.with_missing_libraries(&["containerd", "runc"]).unwrap();
    apt.download(&packages, &staging.join("debs")).unwrap();
    unpack_all(&staging.join("debs"), &staging.join("root")).unwrap();
    std::fs::write(staging.join("root/.complete"), packages.join(" ")).unwrap();
    let _ = std::fs::remove_dir_all(&root);
    std::fs::rename(staging.join("root"), &root).unwrap();
    let _ = std::fs::remove_dir_all(&staging);
    root
}

/// containerd with its root, state and sockets under `dir`, stopped by its PID however the test ends;
/// `/run/containerd` (where 1.6 keeps shim sockets and runc's state whatever it is told) is removed
/// when it was not there before.
struct Containerd {
    child: Child,
    dir: PathBuf,
    root: PathBuf,
    run_dir_was_there: bool,
}

impl Containerd {
    fn start(dir: &Path) -> Containerd {
        let root = containerd_root();
        let config = dir.join("config.toml");
        let at = |p: &str| dir.join(p).display().to_string();
        std::fs::write(
            &config,
            format!(
                "version = 2\nroot = {:?}\nstate = {:?}\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n\
                 [grpc]\n  address = {:?}\n[ttrpc]\n  address = {:?}\n",
                at("root"),
                at("state"),
                at("containerd.sock"),
                at("containerd.sock.ttrpc")
            ),
        )
        .unwrap();
        let run_dir_was_there = Path::new("/run/containerd").exists();
        let log = std::fs::File::create(dir.join("containerd.log")).unwrap();
        let child = Command::new(root.join("usr/bin/containerd"))
            .arg("--config")
            .arg(&config)
            .envs(Containerd::env(&root))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("containerd starts");
        let server = Containerd {
            child,
            dir: dir.to_path_buf(),
            root,
            run_dir_was_there,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !server.ctr(&["version"]).status.success() {
            assert!(
                Instant::now() < deadline,
                "containerd not serving after 30 s: {}",
                std::fs::read_to_string(dir.join("containerd.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    /// The unpacked binaries first on PATH (containerd finds its shim and runc there), their
    /// libraries on the loader's path.
    fn env(root: &Path) -> Vec<(String, String)> {
        let path = format!(
            "{}:{}:{}",
            root.join("usr/bin").display(),
            root.join("usr/sbin").display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let libraries = format!(
            "{}:{}",
            root.join("usr/lib/x86_64-linux-gnu").display(),
            root.join("lib/x86_64-linux-gnu").display()
        );
        vec![("PATH".into(), path), ("LD_LIBRARY_PATH".into(), libraries)]
    }

    /// A container of the load image, removed when it ends; `command` empty runs its entry point.
    fn run_load_image(&self, id: &str, command: &[&str]) -> Output {
        let fifo = self.dir.join("fifo");
        std::fs::create_dir_all(&fifo).unwrap();
        let fifo = fifo.display().to_string();
        let mut args = vec![
            "run",
            "--rm",
            "--snapshotter",
            "native",
            "--fifo-dir",
            &fifo,
            "docker.io/cqlbench/cqlbench:0.1.0",
            id,
        ];
        args.extend(command);
        self.ctr(&args)
    }

    fn ctr(&self, args: &[&str]) -> Output {
        Command::new(self.root.join("usr/bin/ctr"))
            .arg("--address")
            .arg(self.dir.join("containerd.sock"))
            .args(["--namespace", "k8s.io"])
            .args(args)
            .envs(Containerd::env(&self.root))
            .output()
            .expect("ctr runs")
    }
}

impl Drop for Containerd {
    fn drop(&mut self) {
        // SIGTERM, as an init system stops it; then wait for it.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
        if !self.run_dir_was_there {
            let _ = std::fs::remove_dir_all("/run/containerd");
        }
    }
}

fn cqlbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cqlbench"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_load_image_imports_into_containerd_and_runs_cqlbench_as_nonroot() {
    let work = tempfile::tempdir().unwrap();
    let archive = work.path().join("cqlbench-load.tar");
    let archive_arg = archive.display().to_string();
    let built = cqlbench(&["k8s", "image", "load", "-o", &archive_arg]);
    assert!(built.status.success(), "{}", text(&built));
    let said = String::from_utf8_lossy(&built.stdout);
    assert!(
        said.contains("image docker.io/cqlbench/cqlbench:0.1.0 (sha256:"),
        "{said}"
    );
    let leftovers: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers,
        ["cqlbench-load.tar"],
        "scratch left beside the archive"
    );

    let containerd_dir = work.path().join("containerd");
    std::fs::create_dir_all(&containerd_dir).unwrap();
    let containerd = Containerd::start(&containerd_dir);
    let imported = containerd.ctr(&["images", "import", "--snapshotter", "native", &archive_arg]);
    assert!(imported.status.success(), "{}", text(&imported));
    let listed = containerd.ctr(&["images", "list", "--quiet"]);
    assert_eq!(
        String::from_utf8_lossy(&listed.stdout).trim(),
        "docker.io/cqlbench/cqlbench:0.1.0",
        "{}",
        text(&listed)
    );
    let ran = containerd.run_load_image(
        "cqlbench-image-test",
        &[
            "sh",
            "-c",
            "id -u; id -g; cqlbench --version; sleep 0.1; tar --version | head -n 1; \
             test -s /etc/ssl/certs/ca-certificates.crt && echo certificates",
        ],
    );
    let output = text(&ran);
    assert!(ran.status.success(), "{output}");
    let lines: Vec<&str> = output.lines().collect();
    assert_eq!(
        lines,
        [
            "65532",
            "65532",
            &format!("cqlbench {}", env!("CARGO_PKG_VERSION")),
            "tar (GNU tar) 1.34",
            "certificates"
        ],
        "{output}"
    );
    // The image's own entry point is cqlbench: the Jobs pass only `run …`.
    let entry = containerd.run_load_image("cqlbench-entry-test", &[]);
    assert!(text(&entry).contains("Usage: cqlbench"), "{}", text(&entry));
}

#[test]
fn bad_archive_paths_and_names_are_refused_in_one_line_before_any_build() {
    let work = tempfile::tempdir().unwrap();
    let cases: [(Vec<String>, &str); 3] = [
        (
            vec!["-o".into(), "/proc/cqlbench-load.tar".into()],
            "error: writing /proc/cqlbench-load.tar: ",
        ),
        (
            vec!["-o".into(), work.path().display().to_string()],
            "is a directory",
        ),
        (
            vec![
                "-o".into(),
                work.path().join("x.tar").display().to_string(),
                "--name".into(),
                "Cqlbench:1".into(),
            ],
            "error: --name: image name \"Cqlbench:1\": a repository is lower-case letters",
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["k8s".to_string(), "image".into(), "load".into()];
        all.extend(args);
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        let output = cqlbench(&refs);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{all:?}");
        assert_eq!(stderr.lines().count(), 1, "{all:?}: {stderr}");
        assert!(stderr.contains(expected), "{all:?}: {stderr}");
        assert!(
            !stderr.contains("fetching"),
            "{all:?}: built before refusing"
        );
    }
    assert_eq!(
        std::fs::read_dir(work.path()).unwrap().count(),
        0,
        "nothing left behind"
    );
}
