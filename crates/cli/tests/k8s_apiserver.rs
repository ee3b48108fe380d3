//! `cqlbench k8s render` checked by a real Kubernetes API server: etcd and kube-apiserver v1.32.13 on
//! 127.0.0.1 (built and cached once under ~/.cache/cqlbench/k8s by scripts/k8s-apiserver.sh), the
//! K8ssandraCluster CRD of k8ssandra-operator v1.21.0 applied server-side, and every rendered manifest sent
//! as a server-side dry run with strict field validation. No operator or kubelet runs: this proves the
//! manifests are what the API accepts, not what a cluster does with them.

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
    let render = Command::new(env!("CARGO_BIN_EXE_cqlbench"))
        .args(["k8s", "render"])
        .arg(repo().join("examples/k8s-gc.toml"))
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
        14,
        "namespace, results claim, 3 x (cluster + 3 Jobs): {files:?}"
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

    let mut kinds = Vec::new();
    for file in &files {
        let result = server.dry_run(file);
        let said = text(&result);
        assert!(
            result.status.success() && said.contains("(server dry run)"),
            "{} was not accepted: {said}",
            file.display()
        );
        kinds.push(said.split('/').next().unwrap_or("").trim().to_string());
    }
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

    // The same checks refuse what is wrong: each broken copy must be rejected, naming the problem.
    let cluster =
        std::fs::read_to_string(out.join("02-k8s-gc-2/00-k8ssandracluster.yaml")).unwrap();
    let job = std::fs::read_to_string(out.join("02-k8s-gc-2/02-job-max.yaml")).unwrap();
    let broken: [(&str, String, &str); 5] = [
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
    ];
    for (what, manifest, mentioned) in broken {
        let original = if manifest.contains("kind: Job") {
            &job
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
    eprintln!(
        "k8s_apiserver: test done in {:.1} s",
        started.elapsed().as_secs_f64()
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
            "jobs,k8ssandraclusters,pvc",
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
        13,
        "9 Jobs, 3 clusters, 1 claim: {:?}",
        objects()
    );
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

    // Again, and while it waits the "operator" and the "controller" let go.
    let mut second = delete("60s")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
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
    assert!(second.status.success(), "{}", text(&second));
    assert_eq!(
        String::from_utf8_lossy(&second.stdout).trim(),
        "deleted 2 object(s); 11 did not exist (namespace cqlbench kept)"
    );
    assert!(objects().is_empty(), "{:?}", objects());
    let namespace = server.kubectl(&["get", "namespace", "cqlbench", "-o", "name"]);
    assert!(namespace.status.success(), "{}", text(&namespace));
}
