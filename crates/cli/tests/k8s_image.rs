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

static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

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
    /// One containerd at a time: both keep shim sockets and runc's state in /run/containerd.
    _serial: std::sync::MutexGuard<'static, ()>,
    child: Child,
    dir: PathBuf,
    root: PathBuf,
    run_dir_was_there: bool,
}

impl Containerd {
    fn start(dir: &Path) -> Containerd {
        let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
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
            _serial: serial,
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
        let mut args = vec!["--rm", "docker.io/cqlbench/cqlbench:0.1.0", id];
        args.extend(command);
        self.run(&args)
    }

    /// `ctr run` with the test's snapshotter and FIFO directory, then `args`.
    fn run(&self, args: &[&str]) -> Output {
        let fifo = self.dir.join("fifo");
        std::fs::create_dir_all(&fifo).unwrap();
        let fifo = fifo.display().to_string();
        let mut all = vec!["run", "--snapshotter", "native", "--fifo-dir", &fifo];
        all.extend(args);
        self.ctr(&all)
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
        // Containers' shims outlive containerd: every task is killed and removed first.
        let tasks = self.ctr(&["tasks", "list", "--quiet"]);
        for task in String::from_utf8_lossy(&tasks.stdout).split_whitespace() {
            let _ = self.ctr(&["tasks", "kill", "--signal", "SIGKILL", task]);
            let deadline = Instant::now() + Duration::from_secs(30);
            while !self.ctr(&["tasks", "delete", task]).status.success()
                && Instant::now() < deadline
            {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = self.ctr(&["containers", "delete", task]);
        }
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
    let tar = work.path().join("x.tar").display().to_string();
    let cases: [(Vec<String>, &str); 6] = [
        (
            vec!["load".into(), "-o".into(), "/proc/cqlbench-load.tar".into()],
            "error: writing /proc/cqlbench-load.tar: ",
        ),
        (
            vec![
                "load".into(),
                "-o".into(),
                work.path().display().to_string(),
            ],
            "is a directory",
        ),
        (
            vec![
                "load".into(),
                "-o".into(),
                tar.clone(),
                "--name".into(),
                "Cqlbench:1".into(),
            ],
            "error: --name: image name \"Cqlbench:1\": a repository is lower-case letters",
        ),
        (
            vec![
                "cassandra".into(),
                "-o".into(),
                tar.clone(),
                "--jdk".into(),
                "11".into(),
            ],
            "error: Cassandra 5.0.9 is not supported on JDK 11: use JDK 17 or JDK 21 or JDK 25",
        ),
        (
            vec![
                "cassandra".into(),
                "-o".into(),
                tar.clone(),
                "--jdk".into(),
                "25".into(),
            ],
            "needs cqlbench's Security Manager shim, which images do not carry yet",
        ),
        (
            vec![
                "cassandra".into(),
                "-o".into(),
                tar,
                "--cassandra".into(),
                "3.11.19".into(),
            ],
            "error: --cassandra 3.11.19: Cassandra 3.11 runs on JDK 8 only",
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["k8s".to_string(), "image".into()];
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

/// Where the test's Cassandra container listens (on the host's network, loopback only).
const NODE_ADDRESS: &str = "127.0.77.1";

/// The environment `k8s render` gives the Cassandra container of examples/k8s-live.toml's ZGC
/// configuration, as `ctr run --env` takes it: the listen address and the seed set to `address` (the
/// pod's own name does not resolve outside Kubernetes) and no StatefulSet (the container's host name is
/// not its pod's), everything else as rendered.
fn rendered_node_env(address: &str) -> Vec<String> {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/k8s-live.toml");
    let plan = cqlbench_k8s::load_plan(&example).unwrap();
    let manifests = cqlbench_k8s::render(&plan, &cqlbench_k8s::RenderOptions::default()).unwrap();
    let sts = manifests
        .iter()
        .map(|m| &m.object)
        .find(|o| o["kind"] == "StatefulSet" && o["metadata"]["name"] == "k8s-live-2-dc1-rack1-sts")
        .expect("the ZGC configuration's StatefulSet");
    let container = &sts["spec"]["template"]["spec"]["containers"][0];
    let mut env: Vec<String> = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{}={}",
                e["name"].as_str().unwrap(),
                e["value"].as_str().unwrap()
            )
        })
        .filter(|e| !e.starts_with("CASSANDRA_SEEDS=") && !e.starts_with("CQLBENCH_STATEFULSET="))
        .collect();
    env.push(format!("CASSANDRA_SEEDS={address}"));
    env.push(format!("CASSANDRA_LISTEN_ADDRESS={address}"));
    env
}

/// `cqlbench k8s image cassandra` (5.0.9 on JDK 17, the defaults): imported into containerd, its entry
/// point starts a node from the environment `k8s render` gives the pods of examples/k8s-live.toml's
/// ZGC configuration, in the official image's terms; the node serves a `cqlbench run`, with the
/// collector and heap that JVM_EXTRA_OPTS and MAX_HEAP_SIZE ask for, as its own GC log on the data
/// volume says.
#[test]
fn the_cassandra_image_runs_a_node_from_the_official_images_environment() {
    let work = tempfile::tempdir().unwrap();
    let archive = work.path().join("cassandra.tar");
    let archive_arg = archive.display().to_string();
    let built = cqlbench(&["k8s", "image", "cassandra", "-o", &archive_arg]);
    assert!(built.status.success(), "{}", text(&built));
    let image = "docker.io/cqlbench/cassandra:5.0.9-jdk17";
    assert!(
        String::from_utf8_lossy(&built.stdout).contains(image),
        "{}",
        text(&built)
    );

    let containerd_dir = work.path().join("containerd");
    std::fs::create_dir_all(&containerd_dir).unwrap();
    let containerd = Containerd::start(&containerd_dir);
    let imported = containerd.ctr(&["images", "import", "--snapshotter", "native", &archive_arg]);
    assert!(imported.status.success(), "{}", text(&imported));
    // The data volume: the image's user cassandra (999) owns it, as fsGroup makes it in a pod.
    let data = work.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::os::unix::fs::chown(&data, Some(999), Some(999)).unwrap();
    let mount = format!(
        "type=bind,src={},dst=/var/lib/cassandra,options=rbind:rw",
        data.display()
    );
    let env = rendered_node_env(NODE_ADDRESS);
    let mut args = vec!["--detach", "--net-host", "--mount", &mount];
    for variable in &env {
        args.extend(["--env", variable.as_str()]);
    }
    args.extend([image, "cqlbench-node-test"]);
    let started = containerd.run(&args);
    assert!(started.status.success(), "{}", text(&started));
    let address: std::net::SocketAddr = format!("{NODE_ADDRESS}:9042").parse().unwrap();
    let deadline = Instant::now() + Duration::from_secs(240);
    while std::net::TcpStream::connect_timeout(&address, Duration::from_secs(1)).is_err() {
        let tasks = containerd.ctr(&["tasks", "list"]);
        assert!(
            String::from_utf8_lossy(&tasks.stdout).contains("RUNNING"),
            "the node's container stopped: {}\n{}",
            text(&tasks),
            std::fs::read_to_string(data.join("logs/system.log")).unwrap_or_default()
        );
        assert!(Instant::now() < deadline, "no CQL on {address} after 240 s");
        std::thread::sleep(Duration::from_millis(500));
    }
    let out = work.path().join("run");
    let run = cqlbench(&[
        "run",
        "KeyValue",
        "--host",
        NODE_ADDRESS,
        "-d",
        "3s",
        "--rate",
        "100",
        "-o",
        &out.display().to_string(),
    ]);
    assert!(run.status.success(), "{}", text(&run));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "complete", "{summary}");
    let mut served = 0;
    for (op, stats) in summary["ops"].as_object().expect("ops") {
        for (kind, count) in stats["errors"].as_object().expect("errors") {
            assert_eq!(count, 0, "{op}: {kind} errors: {summary}");
        }
        served += stats["count"].as_u64().expect("count");
    }
    assert!(
        served >= 200,
        "{served} operations in 3 s at 100/s: {summary}"
    );
    let gc_log = std::fs::read_to_string(data.join("gc.log")).unwrap();
    assert!(
        gc_log.contains("Using The Z Garbage Collector"),
        "{gc_log:.2000}"
    );
    // examples/k8s-live.toml's heap, 1G.
    assert!(gc_log.contains("Max Capacity: 1024M"), "{gc_log:.2000}");
}
