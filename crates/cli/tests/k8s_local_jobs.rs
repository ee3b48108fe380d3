//! The load Jobs that `cqlbench k8s render` writes, run for real: every client pod's command line, as
//! rendered, is run as a local process against a real Cassandra node (127.0.12.1) — the completion index,
//! the common start and the latency cell's rate filled in as Kubernetes and `k8s run` fill them — then
//! the results are laid out as `k8s run` collects them (clients' directories from the results volume,
//! the node's GC log as a pod's) and `cqlbench k8s report` turns them into a campaign directory and its
//! report. The plan's workload is a file, which the pods read from the ConfigMap the manifests carry it
//! in (its data written where the pod mounts it, as kubelet would). What Kubernetes itself does (scheduling, exec, the operator) is not here: see k8s_apiserver.

mod run_support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use run_support::{cqlbench_ok, f64_at, read_summary, Progress, TestNode};
use serde_json::Value;

const CLUSTER: &str = "k8s-jobs-1";
const POD: &str = "k8s-jobs-1-datacenter1-rack1-sts-0";

fn plan_text() -> String {
    format!(
        r#"[cluster]
nodes = 1
cassandra = "{version}"
heap = "1G"

[[config]]
name = "G1 local"
gc = "g1"

[load]
workload = "kv.yaml"
args = "--keyspace k8s_jobs -t 1 -c 16 --populate 2000"
duration = "6s"
warmup = "2s"

[sweep]
fractions = [0.35]
max-duration = "6s"

[k8s]
namespace = "cqlbench"
storage-class = "standard"
storage-size = "10Gi"
cpu = "2"
memory = "4Gi"
datacenter = "datacenter1"
client-pods = 2
image = "registry.example/cqlbench:0.1.0"
"#,
        version = cqlbench_cluster::ClusterSpec::default().cassandra_version
    )
}

/// The plan's workload file: KeyValue's shape, with the same operation names.
const WORKLOAD: &str = r#"
schema:
  - CREATE TABLE IF NOT EXISTS kv (k bigint PRIMARY KEY, v text)
values:
  k: uniform(1..2000)
  v:
    population: uniform(1..1M)
    size: fixed(100)
populate:
  operation: write
  rows: 1000
  values:
    k: seq(1..2000)
operations:
  write:
    cql: INSERT INTO kv (k, v) VALUES (?, ?)
  read:
    cql: SELECT v FROM kv WHERE k = ?
"#;

/// Writes the ConfigMap's files into `dir`, as kubelet fills a configMap volume, after checking
/// that every Job mounts that ConfigMap where its pods' command reads the workload.
fn mount_workload(manifests: &[cqlbench_k8s::Manifest], dir: &Path) {
    let config_map = manifests
        .iter()
        .map(|m| &m.object)
        .find(|o| o["kind"] == "ConfigMap")
        .expect("a ConfigMap carries the workload file");
    let name = config_map["metadata"]["name"].as_str().unwrap();
    std::fs::create_dir_all(dir).unwrap();
    for (file, text) in config_map["data"].as_object().unwrap() {
        assert_eq!(file, "kv.yaml");
        assert_eq!(text.as_str().unwrap(), WORKLOAD);
        std::fs::write(dir.join(file), text.as_str().unwrap()).unwrap();
    }
    for job in manifests
        .iter()
        .map(|m| &m.object)
        .filter(|o| o["kind"] == "Job")
    {
        let spec = &job["spec"]["template"]["spec"];
        let volume = spec["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["configMap"]["name"] == name)
            .expect("the Job's pods have the ConfigMap as a volume");
        let mounts = spec["containers"][0]["volumeMounts"].as_array().unwrap();
        let mount = mounts.iter().find(|m| m["name"] == volume["name"]).unwrap();
        assert_eq!(mount["mountPath"], WORKLOAD_MOUNT);
        assert_eq!(
            spec["containers"][0]["args"][1],
            format!("{WORKLOAD_MOUNT}/kv.yaml")
        );
    }
}

const WORKLOAD_MOUNT: &str = "/etc/cqlbench/workload";

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn rfc3339(unix_s: u64) -> String {
    let out = Command::new("date")
        .args(["-u", "-d", &format!("@{unix_s}"), "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// One client pod's command line as Kubernetes would run it: `$(VAR)` references replaced from the
/// pod's environment, the Cassandra service by the test node, the results volume by `raw`.
fn pod_command(
    job: &Value,
    index: usize,
    env: &[(&str, String)],
    host: &str,
    raw: &Path,
    brief: &Path,
    mounted: &Path,
) -> Command {
    let container = &job["spec"]["template"]["spec"]["containers"][0];
    let mut args: Vec<String> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    for arg in &mut args {
        *arg = arg.replace("$(JOB_COMPLETION_INDEX)", &index.to_string());
        *arg = arg.replace(WORKLOAD_MOUNT, &mounted.display().to_string());
        for (name, value) in env {
            *arg = arg.replace(&format!("$({name})"), value);
        }
        assert!(!arg.contains("$("), "unfilled reference in {arg}");
    }
    let replace_after = |args: &mut Vec<String>, flag: &str, value: String| {
        let at = args
            .iter()
            .position(|a| a == flag)
            .unwrap_or_else(|| panic!("{flag} in {args:?}"));
        args[at + 1] = value;
    };
    let service = args[args.iter().position(|a| a == "--host").unwrap() + 1].clone();
    assert_eq!(service, format!("{CLUSTER}-datacenter1-service"));
    replace_after(&mut args, "--host", host.to_string());
    let out = args[args.iter().position(|a| a == "-o").unwrap() + 1].clone();
    let relative = out
        .strip_prefix("/results/")
        .expect("results on the volume");
    replace_after(&mut args, "-o", raw.join(relative).display().to_string());
    replace_after(&mut args, "--brief-to", brief.display().to_string());
    check_metrics_port(job, &args);
    // Each pod has an address of its own; here each client a loopback address of its own. Nobody
    // scrapes them here, so they need not keep serving their final figures.
    replace_after(
        &mut args,
        "--prometheus",
        format!("127.0.12.{}:9464", 20 + index),
    );
    replace_after(&mut args, "--prometheus-linger", "0s".into());
    let mut command = Command::new(env!("CARGO_BIN_EXE_cqlbench"));
    command
        .args(&args)
        .env_remove("CQLBENCH_USERNAME")
        .env_remove("CQLBENCH_PASSWORD")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

/// The pod serves `--prometheus` on all its addresses, at the port its container names `metrics`
/// and its annotations give to annotation-based scrape configs.
fn check_metrics_port(job: &Value, args: &[String]) {
    let template = &job["spec"]["template"];
    let after = |flag: &str| args[args.iter().position(|a| a == flag).unwrap() + 1].clone();
    assert_eq!(after("--prometheus"), "0.0.0.0:9464");
    assert!(args.iter().any(|a| a == "--prometheus-public"));
    let port = &template["spec"]["containers"][0]["ports"][0];
    assert_eq!(
        (port["name"].as_str(), port["containerPort"].as_u64()),
        (Some("metrics"), Some(9464))
    );
    let annotations = &template["metadata"]["annotations"];
    assert_eq!(annotations["prometheus.io/scrape"], "true");
    assert_eq!(annotations["prometheus.io/port"], "9464");
    assert_eq!(annotations["prometheus.io/path"], "/metrics");
}

/// Runs every pod of a Job at once and returns their briefs. With `start`, the pods take their
/// common start from that file (`--start-at @FILE` through CQLBENCH_START_AT), and it is written
/// once every pod is connected and ready, 2 s ahead in whole seconds, as `k8s run` writes it: as
/// Kubernetes would have them, every pod is started before the time comes, however long each
/// takes to connect.
fn run_job(
    job: &Value,
    env: &[(&str, String)],
    start: Option<&Path>,
    host: &str,
    raw: &Path,
    briefs: &Path,
) -> Vec<Value> {
    let mounted = raw
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("workload-volume");
    let name = job["metadata"]["name"].as_str().unwrap();
    let pods = job["spec"]["completions"].as_u64().unwrap() as usize;
    let mut env = env.to_vec();
    if let Some(file) = start {
        env.push(("CQLBENCH_START_AT", format!("@{}", file.display())));
    }
    let mut children: Vec<(PathBuf, Child, Progress)> = (0..pods)
        .map(|index| {
            let brief = briefs.join(format!("{name}-{index}.json"));
            let mut child = pod_command(job, index, &env, host, raw, &brief, &mounted)
                .spawn()
                .unwrap();
            let progress = Progress::of(&mut child);
            (brief, child, progress)
        })
        .collect();
    if let Some(file) = start {
        for (_, _, progress) in &mut children {
            progress.wait_for("ready: waiting for the common start in");
        }
        let temporary = file.with_extension("tmp");
        std::fs::write(&temporary, format!("{}\n", rfc3339(unix_now() + 2))).unwrap();
        std::fs::rename(&temporary, file).unwrap();
    }
    children
        .into_iter()
        .map(|(brief, mut child, progress)| {
            let status = child.wait().unwrap();
            let stderr = progress.rest();
            assert!(status.success(), "{name}: {stderr}");
            let text = std::fs::read_to_string(&brief).unwrap();
            assert_eq!(text.lines().count(), 1, "a brief is one line: {text}");
            assert!(text.len() < 4096, "a brief fits a termination message");
            serde_json::from_str(&text).unwrap()
        })
        .collect()
}

#[test]
fn rendered_jobs_run_against_a_real_node_and_their_results_make_a_report() {
    // A G1 collection at least every second, even idle: each 6 s cell's window must hold GC-log lines,
    // and a light load may allocate too little for a young collection in 6 s.
    let node = TestNode::start_with("k8s-jobs", "127.0.12.1", &["-XX:G1PeriodicGCInterval=1000"]);
    let work = tempfile::tempdir().unwrap();
    let plan_path = work.path().join("k8s-jobs.toml");
    std::fs::write(&plan_path, plan_text()).unwrap();
    std::fs::write(work.path().join("kv.yaml"), WORKLOAD).unwrap();
    let plan = cqlbench_k8s::load_plan(&plan_path).unwrap();
    let manifests = cqlbench_k8s::render(&plan, &cqlbench_k8s::RenderOptions::default()).unwrap();
    let jobs: Vec<&Value> = manifests
        .iter()
        .map(|m| &m.object)
        .filter(|o| o["kind"] == "Job")
        .collect();
    let names: Vec<&str> = jobs
        .iter()
        .map(|j| j["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["k8s-jobs-1-populate", "k8s-jobs-1-max", "k8s-jobs-1-p35"]
    );

    let out = work.path().join("results");
    let raw = out.join("raw");
    let briefs_dir = work.path().join("briefs");
    std::fs::create_dir_all(&briefs_dir).unwrap();
    mount_workload(&manifests, &work.path().join("workload-volume"));

    let populate = run_job(jobs[0], &[], None, &node.host, &raw, &briefs_dir);
    assert_eq!(populate[0]["status"], "complete");

    let max = run_job(
        jobs[1],
        &[],
        Some(&work.path().join("max-start")),
        &node.host,
        &raw,
        &briefs_dir,
    );
    let max_rate: f64 = max
        .iter()
        .map(|b| b["achieved_rate"].as_f64().unwrap())
        .sum();
    assert!(max_rate > 100.0, "max briefs: {max:?}");
    let rate = (0.35 * max_rate).round();

    let latency = run_job(
        jobs[2],
        &[("CQLBENCH_RATE", format!("{rate}"))],
        Some(&work.path().join("p35-start")),
        &node.host,
        &raw,
        &briefs_dir,
    );
    for (client, brief) in latency.iter().enumerate() {
        assert_eq!(brief["status"], "complete", "{brief}");
        assert_eq!(brief["client_id"], client as u64);
        assert_eq!(brief["clients"], 2);
        assert_eq!(brief["target_rate"].as_f64(), Some(rate / 2.0), "{brief}");
        // The brief says what the client's own summary.json says.
        let summary = read_summary(&raw.join(format!("{CLUSTER}/p35/client-{client}")));
        assert_eq!(brief["achieved_rate"], summary["achieved_rate"]);
        assert_eq!(
            brief["measured_start_unix_s"],
            summary["measured_start_unix_s"]
        );
    }

    // The node's GC log, as `kubectl cp` would copy a pod's (no pod.json: nothing but the log).
    let state = cqlbench_cluster::ClusterState::load(&node.home, &node.name)
        .unwrap()
        .unwrap();
    let pod_dir = raw.join(CLUSTER).join("nodes").join(POD);
    std::fs::create_dir_all(&pod_dir).unwrap();
    // The node is still running and may be writing its last line: copy the whole lines only.
    let live = std::fs::read_to_string(&state.nodes[0].gc_log).unwrap();
    let gc_log = &live[..live.rfind('\n').map_or(0, |i| i + 1)];
    std::fs::write(pod_dir.join("gc.log"), gc_log).unwrap();

    cqlbench_ok(&[
        "k8s",
        "report",
        plan_path.to_str().unwrap(),
        out.to_str().unwrap(),
    ]);

    for (cell, briefs) in [("max", &max), ("0.35-of-max", &latency)] {
        let dir = out.join("G1-local").join(cell);
        let merged = read_summary(&dir);
        assert_eq!(merged["clients"], 2, "{cell}");
        let client_ops: f64 = briefs
            .iter()
            .map(|b| b["successful_ops"].as_f64().unwrap())
            .sum();
        let merged_ops: f64 = ["write", "read"]
            .iter()
            .map(|op| merged["ops"][op]["count"].as_f64().unwrap_or(0.0))
            .sum();
        assert_eq!(merged_ops, client_ops, "{cell}: merged operations");
        if cell != "max" {
            assert_eq!(f64_at(&merged, "target_rate"), rate, "{cell}");
        }
        let figures: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("node1/figures.json")).unwrap())
                .unwrap();
        assert_eq!(figures["collector"], "G1", "{cell}: {figures}");
        assert!(
            figures["gc_log_lines"].as_u64().unwrap() > 0,
            "{cell}: {figures}"
        );
        // The window's lines are the node's lines stamped inside the merged measured phase.
        let window_start = f64_at(&merged, "measured_start_unix_s");
        let window_end = window_start + f64_at(&merged, "duration_s");
        let mut minutes = std::collections::HashMap::new();
        let expected = gc_log
            .lines()
            .filter(|line| {
                let stamp = line.strip_prefix('[').and_then(|l| l.split(']').next());
                stamp
                    .and_then(|s| iso_seconds(s, &mut minutes))
                    .is_some_and(|t| t >= window_start && t <= window_end)
            })
            .count() as u64;
        assert_eq!(
            figures["gc_log_lines"].as_u64().unwrap(),
            expected,
            "{cell}"
        );
        let analysis: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("node1/gc-analysis.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(analysis["unparsed_lines"], 0, "{cell}");
    }
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("G1 local"), "{report}");
    assert!(out.join("report.html").is_file());
    let tables = std::fs::read_to_string(out.join("tables.txt")).unwrap();
    assert!(
        tables.contains("G1 local") && tables.contains("max"),
        "{tables}"
    );
    // The collected files below raw/ are no configuration of the tables.
    assert!(
        !tables.contains("raw") && !tables.contains(CLUSTER),
        "{tables}"
    );
}

/// `2026-11-22T19:35:00.123+0000` → seconds since the epoch; `date` reads each minute once.
fn iso_seconds(text: &str, minutes: &mut std::collections::HashMap<String, f64>) -> Option<f64> {
    let minute = text.get(..16)?;
    let seconds: f64 = text.get(17..23)?.parse().ok()?;
    let zone = text.get(23..)?;
    if !minutes.contains_key(minute) {
        let out = Command::new("date")
            .args(["-u", "-d", &format!("{minute}:00{zone}"), "+%s"])
            .output()
            .ok()?;
        let base: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
        minutes.insert(minute.to_string(), base);
    }
    Some(minutes[minute] + seconds)
}
