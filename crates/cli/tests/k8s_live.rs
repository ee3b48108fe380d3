//! `cqlbench k8s run` on a live single-node Kubernetes (scripts/k8s-live.sh: the control plane, a kubelet
//! on Debian's containerd and runc, CoreDNS and local-path-provisioner, built and cached once), with the
//! images cqlbench builds itself loaded into the cluster's containerd: examples/k8s-live.toml end to end
//! (a run killed during a Job and run again), `k8s delete`, and a teardown that leaves the machine as it
//! found it.

mod run_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use run_support::{signal, Progress};

const NAMESPACE: &str = "cqlbench";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// What a live cluster may change on this machine, read without the script's help: kernel settings,
/// network interfaces, mount points, the directories kubelet and containerd make, the pods' cgroups,
/// and processes that name the cluster's directory.
#[derive(Debug, PartialEq)]
struct HostState {
    sysctls: BTreeMap<String, String>,
    interfaces: Vec<String>,
    mounts: Vec<String>,
    host_dirs: Vec<String>,
    cgroups: Vec<String>,
    processes: Vec<String>,
}

impl HostState {
    fn now(cluster_dir: &Path) -> HostState {
        let sysctls = [
            "vm/overcommit_memory",
            "vm/panic_on_oom",
            "kernel/panic",
            "kernel/panic_on_oops",
            "kernel/keys/root_maxkeys",
            "kernel/keys/root_maxbytes",
            "net/ipv4/ip_forward",
        ]
        .iter()
        .map(|key| {
            let value = std::fs::read_to_string(Path::new("/proc/sys").join(key)).unwrap();
            (key.to_string(), value.trim().to_string())
        })
        .collect();
        let mut interfaces: Vec<String> = std::fs::read_dir("/sys/class/net")
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        interfaces.sort();
        let mut mounts: Vec<String> = std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap()
            .lines()
            .map(|l| l.split(' ').nth(4).unwrap_or_default().to_string())
            .collect();
        mounts.sort();
        let host_dirs = [
            "/var/lib/kubelet",
            "/var/log/pods",
            "/var/log/containers",
            "/run/containerd",
            "/var/lib/cni",
            "/opt/containerd",
            "/var/run/netns",
        ]
        .iter()
        .filter(|d| Path::new(d).exists())
        .map(|d| d.to_string())
        .collect();
        let mut cgroups: Vec<String> = std::fs::read_dir("/sys/fs/cgroup")
            .unwrap()
            .map(|e| e.unwrap().path().join("kubepods"))
            .filter(|p| p.exists())
            .map(|p| p.display().to_string())
            .collect();
        cgroups.sort();
        let needle = cluster_dir.display().to_string();
        let mut processes: Vec<String> = std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| {
                let path = e.ok()?.path();
                let cmdline = std::fs::read(path.join("cmdline")).ok()?;
                let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                cmdline.contains(&needle).then_some(cmdline)
            })
            .collect();
        processes.sort();
        HostState {
            sysctls,
            interfaces,
            mounts,
            host_dirs,
            cgroups,
            processes,
        }
    }
}

/// The live cluster, stopped by the script however the test ends.
struct Live {
    dir: PathBuf,
    stopped: bool,
}

impl Live {
    fn script() -> PathBuf {
        repo().join("scripts/k8s-live.sh")
    }

    fn start(dir: &Path) -> Live {
        let started = std::time::Instant::now();
        let live = Live {
            dir: dir.to_path_buf(),
            stopped: false,
        };
        // Progress (downloads, the Go builds on a fresh machine) goes straight to the test's stderr.
        let status = Command::new(Live::script())
            .arg("start")
            .arg(dir)
            .status()
            .unwrap();
        assert!(
            status.success(),
            "scripts/k8s-live.sh start failed: {status}"
        );
        eprintln!(
            "k8s_live: cluster ready after {:.1} s (including any build)",
            started.elapsed().as_secs_f64()
        );
        live
    }

    fn kubeconfig(&self) -> String {
        self.dir.join("kubeconfig").display().to_string()
    }

    fn load(&self, archives: &[&Path]) {
        let status = Command::new(Live::script())
            .arg("load")
            .arg(&self.dir)
            .args(archives)
            .status()
            .unwrap();
        assert!(
            status.success(),
            "scripts/k8s-live.sh load failed: {status}"
        );
    }

    /// `scripts/k8s-live.sh COMMAND DIR ARGS...`, which must succeed; its stdout.
    fn script_ok(&self, command: &str, args: &[&str]) -> String {
        let out = Command::new(Live::script())
            .arg(command)
            .arg(&self.dir)
            .args(args)
            .stderr(Stdio::inherit())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "scripts/k8s-live.sh {command} failed: {}",
            text(&out)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// kubectl, which must succeed; its stdout.
    fn kubectl_ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args);
        assert!(out.status.success(), "kubectl {args:?}: {}", text(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn kubectl_json(&self, args: &[&str]) -> serde_json::Value {
        let json = self.kubectl_ok(&[args, &["-o", "json"]].concat());
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("kubectl {args:?}: {e}: {json}"))
    }

    fn kubectl(&self, args: &[&str]) -> Output {
        let kubectl = cqlbench_cluster::Home::from_env()
            .root()
            .join("k8s/bin/kubectl");
        Command::new(kubectl)
            .args(["--kubeconfig", &self.kubeconfig()])
            .args(args)
            .output()
            .unwrap()
    }

    fn stop(&mut self) -> std::io::Result<Output> {
        self.stopped = true;
        Command::new(Live::script())
            .arg("stop")
            .arg(&self.dir)
            .output()
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if !self.stopped {
            match self.stop() {
                Ok(out) => eprintln!("k8s_live: stopped after a failure: {}", text(&out)),
                Err(e) => eprintln!("k8s_live: could not run scripts/k8s-live.sh stop: {e}"),
            }
        }
    }
}

/// Prints how long the test has run at each step, beside the script's own lines: written to stderr
/// itself, which the test harness does not capture (it captures `eprintln!`), so CI's log shows where
/// the target's minutes go.
fn step(what: &str) {
    use std::io::Write;
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let start = START.get_or_init(std::time::Instant::now);
    let line = format!(
        "k8s_live [{:6.1} s] {what}\n",
        start.elapsed().as_secs_f64()
    );
    let _ = std::io::stderr().write_all(line.as_bytes());
}

fn cqlbench_ok(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_cqlbench"))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "cqlbench {args:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn k8s_run(plan: &Path, out: &Path, kubeconfig: &str) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_cqlbench"))
        .args(["k8s", "run"])
        .arg(plan)
        .arg("-o")
        .arg(out)
        // Pods start in seconds here; the default minute is for clusters that pull images.
        .args([
            "--kubeconfig",
            kubeconfig,
            "--start-delay",
            "10s",
            "--poll",
            "1s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Every GC log collected for a configuration, with its contents.
fn collected_gc_logs(out: &Path, cluster: &str) -> BTreeMap<PathBuf, Vec<u8>> {
    let nodes = out.join("raw").join(cluster).join("nodes");
    let mut logs = BTreeMap::new();
    for pod in std::fs::read_dir(&nodes).unwrap() {
        for file in std::fs::read_dir(pod.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            if path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("gc.log")
            {
                logs.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    assert!(
        !logs.is_empty(),
        "no GC log collected in {}",
        nodes.display()
    );
    logs
}

#[test]
fn k8s_run_carries_the_live_example_end_to_end_and_the_cluster_leaves_nothing_behind() {
    let work = tempfile::tempdir().unwrap();
    let cluster_dir = work.path().join("cluster");
    step("start");
    let before = HostState::now(&cluster_dir);

    // Both images as the README builds them (the defaults carry examples/k8s-live.toml's names), built
    // while the cluster starts (neither needs the other), then loaded into the cluster's containerd.
    let load_image = work.path().join("cqlbench-load.tar");
    let cassandra_image = work.path().join("cassandra.tar");
    let mut live = std::thread::scope(|scope| {
        let images = scope.spawn(|| {
            cqlbench_ok(&["k8s", "image", "load", "-o", load_image.to_str().unwrap()]);
            cqlbench_ok(&[
                "k8s",
                "image",
                "cassandra",
                "-o",
                cassandra_image.to_str().unwrap(),
            ]);
            step("both images built");
        });
        let live = Live::start(&cluster_dir);
        step("live cluster ready");
        // A failed build has printed its own message; `live` is stopped by its drop.
        images.join().expect("building the images failed");
        live
    });
    live.load(&[&load_image, &cassandra_image]);
    step("both images loaded");

    let plan = repo().join("examples/k8s-live.toml");
    let out = work.path().join("results");
    let kubeconfig = live.kubeconfig();

    // Killed while the second configuration's first Job runs...
    let mut first = k8s_run(&plan, &out, &kubeconfig);
    let mut progress = Progress::of(&mut first);
    progress.wait_for("configuration 2 of 2");
    step("first configuration done");
    progress.wait_for_all(&["Job ", ": created"]);
    step("second configuration's Job created; killing the first k8s run");
    signal(&first, libc::SIGKILL);
    first.wait().unwrap();
    let seen = progress.rest();
    let collected = collected_clusters(&out);
    assert_eq!(collected.len(), 1, "{seen}");
    let first_cluster = &collected[0];
    let first_logs = collected_gc_logs(&out, first_cluster);
    for needle in ["the JVM runs G1, heap as planned", "collected pod"] {
        assert!(seen.contains(needle), "{needle} not in\n{seen}");
    }

    // ... and run again: the first configuration is not run again (its GC logs stay those of the JVM that
    // served its cells), the second goes on from its running Job.
    let mut second = k8s_run(&plan, &out, &kubeconfig);
    let mut progress = Progress::of(&mut second);
    let skipped = progress.wait_for("configuration 1 of 2");
    assert!(
        skipped.contains("done and collected by an earlier run, skipped"),
        "{skipped}"
    );
    let status = second.wait().unwrap();
    step("the second k8s run ended");
    let mut stdout = String::new();
    std::io::Read::read_to_string(second.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    let seen = progress.rest();
    assert!(status.success(), "{seen}\n{stdout}");
    assert!(
        seen.contains("already running, waiting for it")
            || seen.contains("complete from an earlier run, kept"),
        "the killed run's Job was not taken over:\n{seen}"
    );
    assert!(
        seen.contains("the JVM runs The Z Garbage Collector, heap as planned"),
        "{seen}"
    );
    assert_eq!(collected_gc_logs(&out, first_cluster), first_logs);

    // The report is a local campaign's: the seed tables, the GC table, client tails against GC pauses.
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    for heading in ["## Throughput", "## Writes Average p99", "## Max p99"] {
        assert!(report.contains(heading), "{heading} not in\n{report}");
    }
    for config in ["G1 jdk17", "ZGC jdk17"] {
        assert!(report.contains(config), "{config} not in\n{report}");
    }
    assert!(out.join("report.html").is_file());

    // `k8s delete` leaves no object of the plan.
    cqlbench_ok(&[
        "k8s",
        "delete",
        plan.to_str().unwrap(),
        "--kubeconfig",
        &kubeconfig,
    ]);
    let left = live.kubectl(&["get", "all,pvc,configmap", "-n", NAMESPACE, "-o", "name"]);
    let left = String::from_utf8_lossy(&left.stdout).into_owned();
    assert!(
        left.lines().all(|l| l == "configmap/kube-root-ca.crt"),
        "left by k8s delete: {left}"
    );

    step("k8s delete left nothing");
    k8ssandra_carries_the_jvm_options_into_the_statefulset(&live, work.path());
    step("K8ssandra part done");

    let stopped = live.stop().unwrap();
    assert!(stopped.status.success(), "{}", text(&stopped));
    assert_eq!(HostState::now(&cluster_dir), before);
    step("live cluster stopped, nothing left");
}

/// The K8ssandra path as far as it goes here (`scripts/k8s-live.sh k8ssandra`): the example rendered for
/// `operator = "k8ssandra"`, each configuration's K8ssandraCluster applied in turn as `k8s run` applies
/// them, k8ssandra-operator's own code makes its CassandraDatacenter, and cass-operator reconciles that
/// into a StatefulSet whose config-init container carries exactly the configuration's JVM options and
/// heap. Its pods go no further: no registry here holds the Management API's images.
fn k8ssandra_carries_the_jvm_options_into_the_statefulset(live: &Live, work: &Path) {
    let example = std::fs::read_to_string(repo().join("examples/k8s-live.toml")).unwrap();
    assert!(example.contains("heap = \"1G\""), "{example}");
    let k8ssandra = example.replace("operator = \"statefulset\"", "operator = \"k8ssandra\"");
    assert_ne!(
        k8ssandra, example,
        "the example names no statefulset operator"
    );
    let plan = work.join("k8ssandra-live.toml");
    std::fs::write(&plan, k8ssandra).unwrap();
    let manifests = work.join("k8ssandra-manifests");
    cqlbench_ok(&[
        "k8s",
        "render",
        plan.to_str().unwrap(),
        "-o",
        manifests.to_str().unwrap(),
    ]);
    live.script_ok("k8ssandra", &[]);
    let mut configurations: Vec<PathBuf> = std::fs::read_dir(&manifests)
        .unwrap()
        .map(|e| e.unwrap().path().join("00-k8ssandracluster.yaml"))
        .filter(|file| file.is_file())
        .collect();
    configurations.sort();
    assert_eq!(configurations.len(), 2, "{}", manifests.display());
    let mut collectors = Vec::new();
    for manifest in &configurations {
        live.kubectl_ok(&["apply", "-f", manifest.to_str().unwrap()]);
        let name = live.kubectl_ok(&["get", "-f", manifest.to_str().unwrap(), "-o", "name"]);
        let name = name.trim().rsplit('/').next().unwrap().to_string();
        let stored = live.kubectl_json(&["get", "k8ssandracluster", &name, "-n", NAMESPACE]);
        let jvm = &stored["spec"]["cassandra"]["datacenters"][0]["config"]["jvmOptions"];
        let planned: Vec<serde_json::Value> = jvm["additionalOptions"].as_array().unwrap().clone();
        // What the API server stored is what cqlbench rendered.
        let rendered = std::fs::read_to_string(manifest).unwrap();
        for option in &planned {
            assert!(
                rendered.contains(&format!("- {option}")),
                "{option} stored, not rendered in {}",
                manifest.display()
            );
        }
        let datacenters = live.script_ok("k8ssandra-dc", &[NAMESPACE, &name]);
        assert!(
            datacenters.contains("kind: CassandraDatacenter"),
            "{datacenters}"
        );
        let config = reconciled_server_config(live, &name);
        let options = config["cassandra-env-sh"]["additional-jvm-opts"]
            .as_array()
            .unwrap_or_else(|| panic!("{config}"));
        assert!(
            options.ends_with(&planned),
            "{name}: the JVM options cass-operator hands the config builder end with\n{options:?}\nnot \
             the plan's\n{planned:?}"
        );
        for size in ["initial_heap_size", "max_heap_size"] {
            assert_eq!(
                config["jvm-server-options"][size],
                1u64 << 30,
                "{name}: {config}"
            );
        }
        assert_eq!(config["cluster-info"]["name"], name.as_str(), "{config}");
        cassandra_pod_as_k8s_run_finds_it(live, &name);
        let collector = options
            .iter()
            .filter_map(|o| o.as_str())
            .rfind(|o| o.starts_with("-XX:+Use") && o.ends_with("GC"))
            .unwrap_or_else(|| panic!("{name}: no collector flag in {options:?}"));
        collectors.push(collector.to_string());
        // As `k8s run` does between configurations: this datacenter goes before the next comes.
        live.kubectl_ok(&[
            "delete",
            "cassandradatacenter",
            "-n",
            NAMESPACE,
            "-l",
            &format!("k8ssandra.io/cluster-name={name}"),
            "--wait",
            "--timeout",
            "120s",
        ]);
        live.kubectl_ok(&["delete", "-f", manifest.to_str().unwrap(), "--wait"]);
    }
    assert_eq!(collectors, ["-XX:+UseG1GC", "-XX:+UseZGC"]);
}

/// The datacenter's pod, found by the labels `k8s run` selects cass-operator's pods by, has the container
/// `k8s run` reads GC logs from.
fn cassandra_pod_as_k8s_run_finds_it(live: &Live, cluster: &str) {
    let selector =
        format!("cassandra.datastax.com/cluster={cluster},cassandra.datastax.com/datacenter=dc1");
    let pod = first_labelled(live, "pods", &selector);
    let containers = pod["spec"]["containers"].as_array().unwrap();
    assert!(
        containers
            .iter()
            .any(|c| c["name"] == cqlbench_k8s::statefulset::CASSANDRA_CONTAINER),
        "{pod}"
    );
    eprintln!(
        "k8s_live: K8ssandra pod {} as far as it goes here: {}",
        pod["metadata"]["name"], pod["status"]["initContainerStatuses"]
    );
}

/// CONFIG_FILE_DATA of the config-init container of the StatefulSet cass-operator made for `cluster`:
/// the configuration it hands the config builder (JSON), once the StatefulSet exists.
fn reconciled_server_config(live: &Live, cluster: &str) -> serde_json::Value {
    let set = first_labelled(
        live,
        "statefulsets",
        &format!("cassandra.datastax.com/cluster={cluster}"),
    );
    let init = set["spec"]["template"]["spec"]["initContainers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "server-config-init")
        .unwrap_or_else(|| panic!("no server-config-init container: {set}"));
    let data = init["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "CONFIG_FILE_DATA")
        .unwrap_or_else(|| panic!("no CONFIG_FILE_DATA: {init}"));
    serde_json::from_str(data["value"].as_str().unwrap()).unwrap()
}

/// The first object of `kind` in the namespace with the labels `selector`, once there is one. The
/// 180 s limit guards against a hang only: the operators and controllers make them within seconds.
fn first_labelled(live: &Live, kind: &str, selector: &str) -> serde_json::Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
    loop {
        let list = live.kubectl_json(&["get", kind, "-n", NAMESPACE, "-l", selector]);
        if let Some(first) = list["items"].as_array().and_then(|items| items.first()) {
            return first.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no {kind} {selector} after 180 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// The configurations an earlier run carried to the end (their results and GC logs collected).
fn collected_clusters(out: &Path) -> Vec<String> {
    let mut clusters: Vec<String> = std::fs::read_dir(out.join("raw"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|dir| dir.join("collected").is_file())
        .map(|dir| dir.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    clusters.sort();
    clusters
}
