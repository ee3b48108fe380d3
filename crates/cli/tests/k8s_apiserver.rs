//! `cqlbench k8s render` checked by a real Kubernetes API server: etcd and kube-apiserver v1.32.13 on
//! 127.0.0.1 (built and cached once under ~/.cache/cqlbench/k8s by scripts/k8s-apiserver.sh), the
//! K8ssandraCluster CRD of k8ssandra-operator v1.21.0 applied server-side, and every rendered manifest sent
//! as a server-side dry run with strict field validation. No operator or kubelet runs: this proves the
//! manifests are what the API accepts, not what a cluster does with them.

mod run_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Each test starts its own API server on the same ports: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn script() -> PathBuf {
    repo().join("scripts/k8s-apiserver.sh")
}

/// Stops the API server and etcd (by the PIDs the script recorded) however the test ends.
struct Server {
    dir: PathBuf,
    kubectl: PathBuf,
}

impl Server {
    fn start(dir: &Path) -> Server {
        let started = Instant::now();
        let server = Server {
            dir: dir.to_path_buf(),
            kubectl: PathBuf::new(),
        };
        // Progress (downloads, the Go build on a fresh machine) goes straight to the test's stderr.
        let status = Command::new(script())
            .arg("start")
            .arg(dir)
            .status()
            .expect("scripts/k8s-apiserver.sh runs");
        assert!(
            status.success(),
            "scripts/k8s-apiserver.sh start failed: {status}"
        );
        eprintln!(
            "k8s_apiserver: API server with the CRD ready after {:.1} s (including any build)",
            started.elapsed().as_secs_f64()
        );
        let paths = Command::new(script()).arg("paths").output().unwrap();
        let kubectl = PathBuf::from(String::from_utf8_lossy(&paths.stdout).trim());
        assert!(kubectl.is_file(), "kubectl at {}", kubectl.display());
        let mut server = server;
        server.kubectl = kubectl;
        server
    }

    fn kubectl(&self, args: &[&str]) -> Output {
        Command::new(&self.kubectl)
            .arg("--kubeconfig")
            .arg(self.dir.join("kubeconfig"))
            .args(args)
            .output()
            .expect("kubectl runs")
    }

    /// A server-side dry run with strict field validation.
    fn dry_run(&self, file: &Path) -> Output {
        let file = file.display().to_string();
        self.kubectl(&[
            "apply",
            "--server-side",
            "--dry-run=server",
            "--validate=strict",
            "--field-manager=cqlbench-test",
            "-f",
            &file,
        ])
    }
}

impl Server {
    /// Every file accepted by a strict server-side dry run; the kind of each, as kubectl names it.
    fn dry_run_all(&self, files: &[PathBuf]) -> Vec<String> {
        files
            .iter()
            .map(|file| {
                let result = self.dry_run(file);
                let said = text(&result);
                assert!(
                    result.status.success() && said.contains("(server dry run)"),
                    "{} was not accepted: {said}",
                    file.display()
                );
                said.split('/').next().unwrap_or("").trim().to_string()
            })
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new(script()).arg("stop").arg(&self.dir).status();
    }
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn render_example(out: &Path) {
    render_plan("examples/k8s-gc.toml", out);
}

/// `cqlbench k8s render` of one of the repository's example plans into `out`.
fn render_plan(example: &str, out: &Path) {
    let render = Command::new(env!("CARGO_BIN_EXE_cqlbench"))
        .args(["k8s", "render"])
        .arg(repo().join(example))
        .arg("-o")
        .arg(out)
        .args(["--start-at", "2026-11-23T09:00:00Z"])
        .output()
        .unwrap();
    assert!(render.status.success(), "render: {}", text(&render));
}

#[test]
fn rendered_manifests_pass_server_side_dry_run_and_broken_ones_do_not() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let started = Instant::now();
    let work = tempfile::tempdir().unwrap();
    let server = Server::start(&work.path().join("apiserver"));

    let out = work.path().join("manifests");
    render_example(&out);
    let files = yaml_files(&out);
    assert_eq!(
        files.len(),
        15,
        "namespace, results claim, PodMonitor, 3 x (cluster + 3 Jobs): {files:?}"
    );

    // The namespace for real (dry-run objects cannot live in a namespace that does not exist).
    let namespace = out.join("00-namespace.yaml");
    let applied = server.kubectl(&[
        "apply",
        "--server-side",
        "-f",
        &namespace.display().to_string(),
    ]);
    assert!(applied.status.success(), "namespace: {}", text(&applied));

    let kinds = server.dry_run_all(&files);
    assert_eq!(
        kinds
            .iter()
            .filter(|k| k.contains("k8ssandracluster"))
            .count(),
        3,
        "{kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| k.starts_with("job")).count(),
        9,
        "{kinds:?}"
    );
    assert!(
        kinds.iter().any(|k| k.starts_with("podmonitor")),
        "{kinds:?}"
    );

    // The same checks refuse what is wrong: each broken copy must be rejected, naming the problem.
    let cluster =
        std::fs::read_to_string(out.join("02-k8s-gc-2/00-k8ssandracluster.yaml")).unwrap();
    let job = std::fs::read_to_string(out.join("02-k8s-gc-2/02-job-max.yaml")).unwrap();
    let monitor = std::fs::read_to_string(out.join("99-podmonitor.yaml")).unwrap();
    let broken: [(&str, String, &str); 7] = [
        (
            "unknown field in jvmOptions",
            cluster.replacen("heap_max_size:", "heap_max_sise:", 1),
            "jvmOptions.heap_max_sise: field not declared in schema",
        ),
        (
            "collector outside the CRD's enum",
            cluster.replacen("gc: Shenandoah", "gc: Shenandoa", 1),
            "Unsupported value: \"Shenandoa\"",
        ),
        (
            "datacenter without size",
            cluster.replacen("      size: 3\n", "", 1),
            "datacenters[0].size: Required value",
        ),
        (
            "secretKeyRef without key",
            job.replacen("key: password\n", "", 1),
            "secretKeyRef.key: Required value",
        ),
        (
            "unknown field in a Job",
            job.replacen(
                "completionMode: Indexed",
                "completionMode: Indexed\n  completionModes: Indexed",
                1,
            ),
            ".spec.completionModes: field not declared in schema",
        ),
        (
            "a metrics port name longer than a port name may be",
            job.replacen("name: metrics", "name: metrics-of-the-load-client", 1),
            "must be no more than 15 characters",
        ),
        (
            "unknown field in a PodMonitor",
            monitor.replacen("podMetricsEndpoints:", "podMetricEndpoints:", 1),
            ".spec.podMetricEndpoints: field not declared in schema",
        ),
    ];
    for (what, manifest, mentioned) in broken {
        let original = if manifest.contains("kind: Job") {
            &job
        } else if manifest.contains("kind: PodMonitor") {
            &monitor
        } else {
            &cluster
        };
        assert_ne!(
            &manifest, original,
            "{what}: the replacement changed nothing"
        );
        let file = work.path().join("broken.yaml");
        std::fs::write(&file, &manifest).unwrap();
        let result = server.dry_run(&file);
        let said = text(&result);
        assert!(!result.status.success(), "{what} was accepted: {said}");
        assert!(
            said.contains(mentioned),
            "{what}: the refusal does not name {mentioned:?}: {said}"
        );
    }
    check_statefulset_backend(&server, work.path());
    eprintln!(
        "k8s_apiserver: test done in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// examples/k8s-live.toml (the StatefulSet backend): every file passes the same dry run, and the API
/// server's own StatefulSet validation refuses a copy whose selector misses its pods.
fn check_statefulset_backend(server: &Server, work: &Path) {
    let out = work.join("live-manifests");
    render_plan("examples/k8s-live.toml", &out);
    let mut kinds = server.dry_run_all(&yaml_files(&out));
    kinds.sort();
    kinds.dedup();
    assert_eq!(
        kinds,
        [
            "job.batch",
            "namespace",
            "persistentvolumeclaim",
            "service",
            "statefulset.apps"
        ]
    );
    let sts = std::fs::read_to_string(out.join("02-k8s-live-2/00-statefulset-rack1.yaml")).unwrap();
    let broken = sts.replacen(
        "      cqlbench.io/rack: rack1\n",
        "      cqlbench.io/rack: rack2\n",
        1,
    );
    assert_ne!(
        broken, sts,
        "the selector's rack label is where the test expects it"
    );
    let file = work.join("broken-sts.yaml");
    std::fs::write(&file, &broken).unwrap();
    let result = server.dry_run(&file);
    let said = text(&result);
    assert!(
        !result.status.success(),
        "a selector missing its pods was accepted: {said}"
    );
    assert!(
        said.contains("`selector` does not match template `labels`"),
        "{said}"
    );
}

/// `cqlbench k8s delete` through kube-rs: every object of the plan goes, Jobs and clusters and the results
/// claim; objects held by finalizers are waited for, and named when the wait runs out. The test plays the
/// operator (its finalizer on a K8ssandraCluster) and kube-controller-manager (the claim's pvc-protection),
/// neither of which runs here.
#[test]
fn delete_removes_every_object_and_waits_for_finalizers() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let work = tempfile::tempdir().unwrap();
    let server = Server::start(&work.path().join("apiserver"));
    let kubeconfig = server.dir.join("kubeconfig").display().to_string();
    let out = work.path().join("manifests");
    render_example(&out);
    let namespace = out.join("00-namespace.yaml").display().to_string();
    let applied = server.kubectl(&["apply", "--server-side", "-f", &namespace]);
    assert!(applied.status.success(), "{}", text(&applied));
    let all = out.display().to_string();
    let applied = server.kubectl(&["apply", "--server-side", "-R", "-f", &all]);
    assert!(applied.status.success(), "{}", text(&applied));
    let objects = || {
        let listed = server.kubectl(&[
            "get",
            "jobs,k8ssandraclusters,pvc,podmonitors",
            "-n",
            "cqlbench",
            "-o",
            "name",
        ]);
        assert!(listed.status.success(), "{}", text(&listed));
        let mut names: Vec<String> = String::from_utf8_lossy(&listed.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        objects().len(),
        14,
        "9 Jobs, 3 clusters, 1 claim, 1 PodMonitor: {:?}",
        objects()
    );
    // The pod `k8s run` reads the results volume through, as a stopped run would leave it.
    server.kubectl_ok(&["create", "serviceaccount", "default", "-n", NAMESPACE]);
    server.kubectl_ok(&[
        "run",
        "cqlbench-fetch",
        "-n",
        NAMESPACE,
        "--image=registry.example/cqlbench:0.1.0",
        "--restart=Never",
    ]);
    let patched = server.kubectl(&[
        "patch",
        "k8ssandracluster",
        "k8s-gc-2",
        "-n",
        "cqlbench",
        "--type=merge",
        "-p",
        r#"{"metadata":{"finalizers":["cqlbench.io/test-operator"]}}"#,
    ]);
    assert!(patched.status.success(), "{}", text(&patched));
    let delete = |timeout: &str| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_cqlbench"));
        command
            .args(["k8s", "delete"])
            .arg(repo().join("examples/k8s-gc.toml"))
            .args(["--kubeconfig", &kubeconfig, "--timeout", timeout]);
        command
    };

    // Nobody removes the finalizers: delete gives up after its timeout, naming what is left and why.
    let first = delete("2s").output().unwrap();
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(!first.status.success(), "{}", text(&first));
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        stderr.contains("deleted Pod cqlbench/cqlbench-fetch"),
        "{stderr}"
    );
    assert!(server.get_json("pod", "cqlbench-fetch").is_none());
    assert!(
        errors[0].contains("still there after 2 s")
            && errors[0].contains(
                "K8ssandraCluster cqlbench/k8s-gc-2 (finalizers: cqlbench.io/test-operator)"
            )
            && errors[0].contains(
                "PersistentVolumeClaim cqlbench/cqlbench-results (finalizers: kubernetes.io/pvc-protection)"
            ),
        "{stderr}"
    );
    assert_eq!(
        objects(),
        [
            "k8ssandracluster.k8ssandra.io/k8s-gc-2",
            "persistentvolumeclaim/cqlbench-results"
        ]
    );

    // Again, and while it waits the "operator" and the "controller" let go: once it has asked for
    // both held objects to be deleted, it is waiting for them.
    let mut second = delete("60s")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut progress = run_support::Progress::of(&mut second);
    progress.wait_for("deleting K8ssandraCluster cqlbench/k8s-gc-2");
    progress.wait_for("deleting PersistentVolumeClaim cqlbench/cqlbench-results");
    assert!(
        second.try_wait().unwrap().is_none(),
        "delete stopped waiting while finalizers held"
    );
    for (kind, name) in [
        ("k8ssandracluster", "k8s-gc-2"),
        ("pvc", "cqlbench-results"),
    ] {
        let released = server.kubectl(&[
            "patch",
            kind,
            name,
            "-n",
            "cqlbench",
            "--type=json",
            "-p",
            r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
        ]);
        assert!(released.status.success(), "{}", text(&released));
    }
    let second = second.wait_with_output().unwrap();
    let stderr = progress.rest();
    assert!(second.status.success(), "{}{stderr}", text(&second));
    assert_eq!(
        String::from_utf8_lossy(&second.stdout).trim(),
        "deleted 2 object(s); 13 did not exist (namespace cqlbench kept)"
    );
    assert!(objects().is_empty(), "{:?}", objects());
    let namespace = server.kubectl(&["get", "namespace", "cqlbench", "-o", "name"]);
    assert!(namespace.status.success(), "{}", text(&namespace));
}

// ---- `cqlbench k8s run`: the control flow against the API server ----

const NAMESPACE: &str = "cqlbench";

impl Server {
    fn kubectl_ok(&self, args: &[&str]) -> String {
        let output = self.kubectl(args);
        assert!(
            output.status.success(),
            "kubectl {args:?}: {}",
            text(&output)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// An object as JSON, or `None` while it does not exist.
    fn get_json(&self, kind: &str, name: &str) -> Option<serde_json::Value> {
        let output = self.kubectl(&["get", kind, name, "-n", NAMESPACE, "-o", "json"]);
        if !output.status.success() {
            assert!(text(&output).contains("NotFound"), "{}", text(&output));
            return None;
        }
        Some(serde_json::from_slice(&output.stdout).unwrap())
    }

    fn patch_status(&self, kind: &str, name: &str, status: serde_json::Value) {
        let patch = serde_json::json!({ "status": status }).to_string();
        self.kubectl_ok(&[
            "patch",
            kind,
            name,
            "-n",
            NAMESPACE,
            "--subresource=status",
            "--type=merge",
            "-p",
            &patch,
        ]);
    }

    /// Plays cass-operator: the datacenter's progress and Ready condition.
    fn set_datacenter(&self, cluster: &str, progress: &str, ready: bool) {
        let condition = serde_json::json!({
            "type": "Ready", "status": if ready { "True" } else { "False" },
            "reason": "", "message": "", "lastTransitionTime": "2026-11-22T20:00:00Z",
        });
        self.patch_status(
            "k8ssandracluster",
            cluster,
            serde_json::json!({"datacenters": {"dc1": {"cassandra": {
                "cassandraOperatorProgress": progress, "conditions": [condition]}}}}),
        );
    }

    /// Plays the Job controller and the kubelets: one finished pod per completion index, each with
    /// `briefs[i]` as its termination message, then the Job's final condition.
    fn finish_job(&self, job: &str, briefs: &[serde_json::Value], failed: bool) {
        for (index, brief) in briefs.iter().enumerate() {
            let pod = format!("{job}-{index}-x{}", briefs.len());
            let manifest = serde_json::json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": pod, "namespace": NAMESPACE,
                    "labels": {"job-name": job, "batch.kubernetes.io/job-name": job},
                    "annotations": {"batch.kubernetes.io/job-completion-index": index.to_string()}},
                "spec": {"restartPolicy": "Never",
                    "containers": [{"name": "cqlbench", "image": "registry.example/cqlbench:0.1.0"}]},
            });
            let file = self.dir.join(format!("{pod}.json"));
            std::fs::write(&file, manifest.to_string()).unwrap();
            self.kubectl_ok(&["create", "-f", &file.display().to_string()]);
            let exit = i64::from(brief["status"] != "complete");
            self.patch_status(
                "pod",
                &pod,
                serde_json::json!({"phase": if exit == 0 { "Succeeded" } else { "Failed" },
                    "containerStatuses": [{"name": "cqlbench", "ready": false, "restartCount": 0,
                        "image": "registry.example/cqlbench:0.1.0", "imageID": "",
                        "state": {"terminated": {"exitCode": exit, "message": brief.to_string(),
                            "startedAt": "2026-11-22T20:00:00Z", "finishedAt": "2026-11-22T20:01:00Z"}}}]}),
            );
        }
        let at = "2026-11-22T20:01:00Z";
        let status = if failed {
            serde_json::json!({"startTime": "2026-11-22T20:00:00Z", "failed": 1,
                "conditions": [
                    {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded",
                     "message": "Job has reached the specified backoff limit", "lastTransitionTime": at},
                    {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                     "message": "Job has reached the specified backoff limit", "lastTransitionTime": at}]})
        } else {
            let indexes = match briefs.len() {
                1 => "0".to_string(),
                n => format!("0-{}", n - 1),
            };
            serde_json::json!({"startTime": "2026-11-22T20:00:00Z", "completionTime": at,
                "succeeded": briefs.len(), "completedIndexes": indexes,
                "conditions": [
                    {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": at},
                    {"type": "Complete", "status": "True", "lastTransitionTime": at}]})
        };
        self.patch_status("job", job, status);
    }
}

fn wait_until<T>(what: &str, mut found: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(value) = found() {
            return value;
        }
        assert!(Instant::now() < deadline, "waited 60 s for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A client's brief as `cqlbench run --brief-to` writes it.
fn brief(client: u64, clients: u64, achieved: f64, failure: Option<&str>) -> serde_json::Value {
    serde_json::json!({
        "status": if failure.is_some() { "failed" } else { "complete" },
        "failure": failure, "client_id": client, "clients": clients, "target_rate": null,
        "achieved_rate": achieved, "rate_kept": false, "successful_ops": (achieved * 10.0) as u64,
        "failed_ops": 0, "measured_start_unix_s": 1_795_300_000.0, "duration_s": 10.0,
    })
}

/// `2026-11-22T20:00:05Z` → seconds since the epoch (whole seconds, UTC, as `k8s run` writes them).
fn rfc3339_seconds(text: &str) -> f64 {
    let out = Command::new("date")
        .args(["-u", "-d", text, "+%s"])
        .output()
        .unwrap();
    assert!(out.status.success(), "date cannot read {text:?}");
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// `cqlbench k8s run PLAN` against the test's API server, quick to start Jobs and to poll.
fn spawn_k8s_run(plan: &Path, out: &Path, kubeconfig: &str, collect: &str) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_cqlbench"))
        .args(["k8s", "run"])
        .arg(plan)
        .arg("-o")
        .arg(out)
        .args(["--kubeconfig", kubeconfig, "--collect", collect])
        .args([
            "--start-delay",
            "2s",
            "--poll",
            "200ms",
            "--ready-timeout",
            "90s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

impl Server {
    /// Pods need the namespace's default service account, which kube-controller-manager would create
    /// once `k8s run` has applied the namespace.
    fn default_service_account(&self) {
        wait_until("namespace cqlbench", || {
            self.kubectl(&["get", "namespace", NAMESPACE])
                .status
                .success()
                .then_some(())
        });
        self.kubectl_ok(&["create", "serviceaccount", "default", "-n", NAMESPACE]);
    }
}

fn jobs_of(server: &Server, cluster: &str) -> Vec<String> {
    let selector = format!("cqlbench.io/cluster={cluster}");
    server
        .kubectl_ok(&[
            "get", "jobs", "-n", NAMESPACE, "-l", &selector, "-o", "name",
        ])
        .lines()
        .map(str::to_string)
        .collect()
}

/// Plays one configuration through a `k8s run`: the datacenter becomes ready only when the test says
/// so, then each Job is finished with the given clients' throughputs. Returns the latency Job's rate
/// annotation.
fn play_configuration(
    server: &Server,
    cluster: &str,
    max_rates: &[f64],
    run: &mut run_support::Progress,
) -> String {
    wait_until(&format!("K8ssandraCluster {cluster}"), || {
        server.get_json("k8ssandracluster", cluster)
    });
    server.set_datacenter(cluster, "Updating", false);
    // Once the run has read the Updating status (it says so), it must not have created a Job.
    let waiting = format!("K8ssandraCluster {cluster}: waiting for datacenter");
    run.wait_for_all(&[waiting.as_str(), "progress Updating"]);
    assert!(
        jobs_of(server, cluster).is_empty(),
        "a Job of {cluster} was created before its datacenter was ready"
    );
    server.set_datacenter(cluster, "Ready", true);

    let populate = format!("{cluster}-populate");
    wait_until(&populate, || server.get_json("job", &populate));
    // The max Job comes after the populate Job finished: `k8s run` decides its start after this.
    let populate_done = run_support::unix_now();
    server.finish_job(&populate, &[brief(0, 1, 50_000.0, None)], false);

    let max = format!("{cluster}-max");
    let job = wait_until(&max, || server.get_json("job", &max));
    let created = rfc3339_seconds(job["metadata"]["creationTimestamp"].as_str().unwrap());
    let annotations = &job["spec"]["template"]["metadata"]["annotations"];
    let start_at = rfc3339_seconds(annotations["cqlbench.io/start-at"].as_str().unwrap());
    // `k8s run` sets the start to its clock's next whole second 2 s ahead, just before it creates
    // the Job, which the API server stamps in whole seconds (rounded down).
    assert!(
        start_at >= populate_done + 2.0 && start_at <= created + 3.0,
        "{max} starts at {start_at}, created at {created} (whole seconds), its populate Job \
         finished at {populate_done}, with --start-delay 2s"
    );
    let clients = max_rates.len() as u64;
    let briefs: Vec<_> = (0..clients)
        .map(|i| brief(i, clients, max_rates[i as usize], None))
        .collect();
    server.finish_job(&max, &briefs, false);

    let latency = format!("{cluster}-p35");
    let job = wait_until(&latency, || server.get_json("job", &latency));
    let rate = job["spec"]["template"]["metadata"]["annotations"]["cqlbench.io/rate"]
        .as_str()
        .unwrap()
        .to_string();
    let briefs: Vec<_> = (0..clients)
        .map(|i| brief(i, clients, 100.0, None))
        .collect();
    server.finish_job(&latency, &briefs, false);
    wait_until(&format!("{cluster} deleted"), || {
        server
            .get_json("k8ssandracluster", cluster)
            .is_none()
            .then_some(())
    });
    rate
}

/// `cqlbench k8s run` with `--collect none` against a real API server, the test playing cass-operator,
/// the Job controller and the kubelets: no Job before the datacenter is ready, Jobs one after the other,
/// each Job's common start a little after its creation, the latency Job's rate 35 % of what the max
/// Job's clients achieved together, each cluster deleted before the next, a failed client stopping the
/// run with one line, and a second run keeping what the first finished.
#[test]
fn run_follows_datacenters_and_jobs_and_fills_the_latency_rate() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let work = tempfile::tempdir().unwrap();
    let server = Server::start(&work.path().join("apiserver"));
    let kubeconfig = server.dir.join("kubeconfig").display().to_string();
    let out = work.path().join("results");
    // `k8s run` on the example, collecting with `collect` (none: nothing read from inside pods).
    let example = repo().join("examples/k8s-gc.toml");
    let run = |collect: &str| spawn_k8s_run(&example, &out, &kubeconfig, collect);
    let mut first = run("none");
    let mut first_progress = run_support::Progress::of(&mut first);
    server.default_service_account();

    // 4 client pods (examples/k8s-gc.toml): 35 % of 1000 + 1100 + 1200 + 1300 = 1610.
    let rate = play_configuration(
        &server,
        "k8s-gc-1",
        &[1000.0, 1100.0, 1200.0, 1300.0],
        &mut first_progress,
    );
    assert_eq!(rate, "1610");
    let rate = play_configuration(
        &server,
        "k8s-gc-2",
        &[2000.0, 2000.5, 2001.0, 1999.0],
        &mut first_progress,
    );
    assert_eq!(rate, "2800", "35 % of 8000.5, whole ops/s");
    assert_eq!(
        jobs_of(&server, "k8s-gc-3"),
        Vec::<String>::new(),
        "configuration 3 waits for its datacenter"
    );

    // Configuration 3: one client of the max Job fails; the run stops there, saying who and why.
    wait_until("K8ssandraCluster k8s-gc-3", || {
        server.get_json("k8ssandracluster", "k8s-gc-3")
    });
    server.set_datacenter("k8s-gc-3", "Ready", true);
    wait_until("k8s-gc-3-populate", || {
        server.get_json("job", "k8s-gc-3-populate")
    });
    server.finish_job("k8s-gc-3-populate", &[brief(0, 1, 50_000.0, None)], false);
    wait_until("k8s-gc-3-max", || server.get_json("job", "k8s-gc-3-max"));
    let briefs = [
        brief(0, 4, 900.0, None),
        brief(1, 4, 900.0, None),
        brief(2, 4, 0.0, Some("client thread 1 failed: connection reset")),
        brief(3, 4, 900.0, None),
    ];
    server.finish_job("k8s-gc-3-max", &briefs, true);
    let first = first.wait_with_output().unwrap();
    let stderr = first_progress.rest();
    assert!(!first.status.success(), "{}{stderr}", text(&first));
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].contains("Job k8s-gc-3-max failed: BackoffLimitExceeded")
            && errors[0].contains("client 2 failed: client thread 1 failed: connection reset"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("k8s-gc-3-p35"),
        "no latency Job after a failed max: {stderr}"
    );
    let briefs: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("raw/k8s-gc-1/p35/briefs.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(briefs["rate"], 1610.0);
    assert_eq!(briefs["briefs"].as_array().unwrap().len(), 4);
    let max: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("raw/k8s-gc-2/max/briefs.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(max["achieved_rate"], 8000.5);

    // A second run keeps the finished Jobs of configurations 1 and 2 and refuses to go past the
    // failed one until it is deleted.
    let second = run("none");
    for cluster in ["k8s-gc-1", "k8s-gc-2", "k8s-gc-3"] {
        wait_until(&format!("K8ssandraCluster {cluster} again"), || {
            server.get_json("k8ssandracluster", cluster)
        });
        server.set_datacenter(cluster, "Ready", true);
    }
    let second = second.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "{}", text(&second));
    for job in [
        "k8s-gc-1-populate",
        "k8s-gc-1-max",
        "k8s-gc-1-p35",
        "k8s-gc-2-p35",
    ] {
        assert!(
            stderr.contains(&format!("Job {job}: complete from an earlier run, kept")),
            "{job}: {stderr}"
        );
    }
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("error: Job k8s-gc-3-max exists from an earlier run and failed")),
        "{stderr}"
    );
    assert_eq!(
        jobs_of(&server, "k8s-gc-1").len() + jobs_of(&server, "k8s-gc-2").len(),
        6,
        "no Job created twice"
    );

    // With exec (the default), the collector is checked on the datacenter's pods before any Job: the
    // pods are found by cass-operator's labels, and an exec that cannot happen (no kubelet here) stops
    // the run in one line naming the pod.
    server.kubectl_ok(&["delete", "jobs", "--all", "-n", NAMESPACE]);
    let pod = serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "k8s-gc-1-dc1-rack1-sts-0", "namespace": NAMESPACE,
            "labels": {"cassandra.datastax.com/cluster": "k8s-gc-1",
                       "cassandra.datastax.com/datacenter": "dc1"}},
        "spec": {"containers": [{"name": "cassandra", "image": "k8ssandra/cass-management-api:5.0.5"}]},
    });
    let file = server.dir.join("cassandra-pod.json");
    std::fs::write(&file, pod.to_string()).unwrap();
    server.kubectl_ok(&["create", "-f", &file.display().to_string()]);
    let exec_run = run("exec");
    wait_until("K8ssandraCluster k8s-gc-1 for the exec run", || {
        server.get_json("k8ssandracluster", "k8s-gc-1")
    });
    server.set_datacenter("k8s-gc-1", "Ready", true);
    let exec_run = exec_run.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&exec_run.stderr);
    assert!(!exec_run.status.success(), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].ends_with(
            "exec `sh -c head -c 1048576 /var/lib/cassandra/gc.log` in pod k8s-gc-1-dc1-rack1-sts-0: \
             pod k8s-gc-1-dc1-rack1-sts-0 does not have a host assigned (400)"
        ),
        "{stderr}"
    );
    assert!(
        jobs_of(&server, "k8s-gc-1").is_empty(),
        "no Job before the collector is checked"
    );
    eprintln!("k8s_apiserver: the exec run ended with: {}", errors[0]);
}

// ---- `cqlbench k8s run` with the StatefulSet backend ----

impl Server {
    /// Plays the StatefulSet controller: all of a StatefulSet's replicas ready (`ready` false: none).
    fn set_statefulset(&self, name: &str, ready: bool) {
        let sts = self.get_json("statefulset", name).unwrap();
        let replicas = sts["spec"]["replicas"].as_u64().unwrap();
        let ready = if ready { replicas } else { 0 };
        self.patch_status(
            "statefulset",
            name,
            serde_json::json!({"observedGeneration": sts["metadata"]["generation"],
                "replicas": replicas, "readyReplicas": ready, "availableReplicas": ready,
                "currentReplicas": replicas, "updatedReplicas": replicas}),
        );
    }

    /// A pod as a StatefulSet's would be labelled, left behind for `k8s run` to wait on.
    fn create_cassandra_pod(&self, cluster: &str, name: &str) {
        let pod = serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NAMESPACE,
                "labels": {"cqlbench.io/cluster": cluster, "app.kubernetes.io/name": "cassandra"}},
            "spec": {"containers": [{"name": "cassandra", "image": "cqlbench/cassandra:5.0.9-jdk17"}]},
        });
        let file = self.dir.join(format!("{name}.json"));
        std::fs::write(&file, pod.to_string()).unwrap();
        self.kubectl_ok(&["create", "-f", &file.display().to_string()]);
    }
}

/// `cqlbench k8s run` of examples/k8s-live.toml with 3 nodes over 2 zones, `--collect none`, the test
/// playing the StatefulSet and Job controllers: a configuration's racks are applied one after the
/// other, each only once the one before is ready, no Job starts before the last rack is ready, the Jobs
/// reach the Service, and the next configuration starts only after the last one's StatefulSets,
/// Service, pods and volumes are gone.
#[test]
fn statefulset_run_starts_racks_in_order_and_waits_for_their_pods_to_go() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let work = tempfile::tempdir().unwrap();
    let server = Server::start(&work.path().join("apiserver"));
    let kubeconfig = server.dir.join("kubeconfig").display().to_string();
    let plan = work.path().join("k8s-live.toml");
    let example = std::fs::read_to_string(repo().join("examples/k8s-live.toml")).unwrap();
    std::fs::write(
        &plan,
        example
            .replace("nodes = 1", "nodes = 3")
            .replace("[k8s]\n", "[k8s]\nzones = [\"z1\", \"z2\"]\n"),
    )
    .unwrap();
    let mut child = spawn_k8s_run(&plan, &work.path().join("results"), &kubeconfig, "none");
    let mut progress = run_support::Progress::of(&mut child);
    server.default_service_account();

    for cluster in ["k8s-live-1", "k8s-live-2"] {
        let (rack1, rack2) = (
            format!("{cluster}-dc1-rack1-sts"),
            format!("{cluster}-dc1-rack2-sts"),
        );
        wait_until(&rack1, || server.get_json("statefulset", &rack1));
        let service = format!("{cluster}-dc1-service");
        assert!(
            server.get_json("service", &service).is_some(),
            "the Service comes first"
        );
        server.set_statefulset(&rack1, false);
        progress.wait_for_all(&[
            &format!("StatefulSet {rack1}: waiting"),
            "0 of 2 pod(s) ready",
        ]);
        assert!(
            server.get_json("statefulset", &rack2).is_none(),
            "rack2 applied before rack1 was ready"
        );
        server.set_statefulset(&rack1, true);
        wait_until(&rack2, || server.get_json("statefulset", &rack2));
        server.set_statefulset(&rack2, false);
        progress.wait_for_all(&[
            &format!("StatefulSet {rack2}: waiting"),
            "0 of 1 pod(s) ready",
        ]);
        assert!(
            jobs_of(&server, cluster).is_empty(),
            "a Job before every rack was ready"
        );
        server.set_statefulset(&rack2, true);

        for (job, clients) in [("populate", 1), ("max", 2), ("p50", 2)] {
            let name = format!("{cluster}-{job}");
            let manifest = wait_until(&name, || server.get_json("job", &name));
            let args = manifest["spec"]["template"]["spec"]["containers"][0]["args"].to_string();
            assert!(
                args.contains(&format!("\"--host\",\"{service}\"")),
                "{args}"
            );
            let briefs: Vec<_> = (0..clients)
                .map(|i| brief(i, clients, 400.0, None))
                .collect();
            if job == "p50" {
                // A node's pod still there when the StatefulSets go: the next configuration waits.
                server.create_cassandra_pod(cluster, &format!("{rack1}-0"));
            }
            server.finish_job(&name, &briefs, false);
        }
        progress.wait_for(&format!("{cluster}: waiting for Pod {rack1}-0 to go"));
        for (kind, name) in [
            ("statefulset", &rack1),
            ("statefulset", &rack2),
            ("service", &service),
        ] {
            assert!(server.get_json(kind, name).is_none(), "{kind} {name} left");
        }
        if cluster == "k8s-live-1" {
            assert!(
                server
                    .get_json("service", "k8s-live-2-dc1-service")
                    .is_none(),
                "configuration 2 started before configuration 1's pods were gone"
            );
        }
        server.kubectl_ok(&["delete", "pod", &format!("{rack1}-0"), "-n", NAMESPACE]);
    }
    let output = child.wait_with_output().unwrap();
    let rest = progress.rest();
    assert!(output.status.success(), "{}{rest}", text(&output));
}
