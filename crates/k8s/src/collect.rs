//! What `k8s run` reads from inside pods (through `exec`, which the API server hands to the node's
//! kubelet), and how the collected files become a campaign directory like a local campaign's, with its
//! report.
//!
//! Collected as they were on the pods, under `OUT/raw/<cluster>/`:
//! - `<cell>/client-<i>/` every client's result directory (from the results volume);
//! - `nodes/<pod>/gc.log*` every Cassandra pod's GC log, and `nodes/<pod>/pod.json` (its IP, collector).
//!
//! Assembled as `OUT/<config>/<rate>[/<repeat>]/`: the clients merged (`cqlbench report merge`), and per
//! node `node<i>/` with the cell's GC log lines, `gc-analysis.json`, `timeline.csv` and `figures.json`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cqlbench_campaign::figures::keep_gc_window;
use cqlbench_cluster::Gc;
use cqlbench_results::{ConfigRecord, NodeFigures, PodRecord, Window, FORMAT_VERSION};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, AttachParams, DeleteParams, ListParams, PostParams};
use kube::Client;
use serde_json::json;
use tokio::io::AsyncReadExt;

use crate::error::K8sError;
use crate::plan::{Backend, K8sPlan};
use crate::render::{cells, GC_LOG, RESULTS_CLAIM, RESULTS_MOUNT};
use crate::statefulset::CASSANDRA_CONTAINER;

/// The pod that reads the results volume for `exec`.
pub const FETCH_POD: &str = "cqlbench-fetch";
/// Written into `OUT/raw/<cluster>/` once all of a configuration's results and GC logs are there.
const COLLECTED_MARKER: &str = "collected";

/// A configuration an earlier `k8s run` into `out` carried to the end: its Jobs done and their results
/// and its nodes' GC logs collected (so a new cluster's logs, which never saw its cells, must not replace
/// them).
pub fn is_collected(out: &Path, cluster: &str) -> bool {
    out.join("raw")
        .join(cluster)
        .join(COLLECTED_MARKER)
        .is_file()
}

/// How much of a GC log's start is read to find its `Using …` and heap lines.
const GC_LOG_HEAD_BYTES: usize = 1 << 20;

/// One Cassandra pod, as checked before the load.
#[derive(Debug, Clone)]
pub struct NodePod {
    pub name: String,
    pub ip: String,
    /// The collector its GC log's `Using …` line names (`G1`, `Shenandoah`, …).
    pub collector: String,
}

fn io_error(context: String) -> impl FnOnce(std::io::Error) -> K8sError {
    move |source| K8sError::Io { context, source }
}

/// Runs `command` in a container and returns its standard output; a non-zero exit is an error with
/// its standard error.
async fn exec_output(
    pods: &Api<Pod>,
    pod: &str,
    container: &str,
    command: &[&str],
) -> Result<Vec<u8>, K8sError> {
    let what = format!("exec `{}` in pod {pod}", command.join(" "));
    let params = AttachParams::default()
        .container(container)
        .stdin(false)
        .stdout(true)
        .stderr(true);
    let mut process = pods
        .exec(pod, command.iter().copied(), &params)
        .await
        .map_err(|e| K8sError::kube(&what, &e))?;
    let mut stdout = process
        .stdout()
        .ok_or_else(|| K8sError::Kube(format!("{what}: no stdout")))?;
    let mut stderr = process
        .stderr()
        .ok_or_else(|| K8sError::Kube(format!("{what}: no stderr")))?;
    let status = process.take_status();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let (read_out, read_err) =
        tokio::join!(stdout.read_to_end(&mut out), stderr.read_to_end(&mut err));
    read_out.map_err(|e| K8sError::Kube(format!("{what}: reading its output: {e}")))?;
    read_err.map_err(|e| K8sError::Kube(format!("{what}: reading its errors: {e}")))?;
    let status = match status {
        Some(status) => status.await,
        None => None,
    };
    process
        .join()
        .await
        .map_err(|e| K8sError::Kube(format!("{what}: {e}").replace('\n', " ")))?;
    match status {
        Some(status) if status.status.as_deref() == Some("Success") => Ok(out),
        Some(status) => Err(K8sError::Kube(format!(
            "{what}: {}{}",
            status.message.unwrap_or_else(|| "failed".into()),
            first_line(&err)
        ))),
        None => Err(K8sError::Kube(format!(
            "{what}: no exit status{}",
            first_line(&err)
        ))),
    }
}

fn first_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .next()
        .map(|l| format!(" ({l})"))
        .unwrap_or_default()
}

/// Unpacks a tar stream into `dir` with the system's tar.
fn untar(bytes: &[u8], dir: &Path) -> Result<(), K8sError> {
    std::fs::create_dir_all(dir).map_err(io_error(format!("creating {}", dir.display())))?;
    let mut child = Command::new("tar")
        .arg("-xf")
        .arg("-")
        .arg("-C")
        .arg(dir)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io_error("running tar".into()))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(bytes)
            .map_err(io_error("writing to tar".into()))?;
    }
    let output = child
        .wait_with_output()
        .map_err(io_error("running tar".into()))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(K8sError::Invalid(format!(
            "unpacking into {}: tar {}{}",
            dir.display(),
            output.status,
            first_line(&output.stderr)
        )))
    }
}

/// `16G`, `16384M`, `17179869184B` (as `Heap Max Capacity:` prints it) → bytes.
fn capacity_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let (number, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit())?);
    let number: u64 = number.parse().ok()?;
    let scale = match unit {
        "B" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        "T" => 1 << 40,
        _ => return None,
    };
    number.checked_mul(scale)
}

/// Checks the start of a JVM's GC log against the plan: the JVM's own `Using …` line must name the
/// planned collector, and the maximum heap it states at start (JDK 15+) the planned heap. Returns the
/// `Using` line.
pub fn check_gc_log_head(head: &str, gc: Gc, heap_bytes: u64) -> Result<String, String> {
    let using = using_line(head).ok_or("its GC log names no collector (no `Using …` line)")?;
    let expected = format!("Using {}", gc.jvm_log_name());
    if using != expected {
        return Err(format!(
            "the JVM says `{using}`, the plan asks for `{expected}`"
        ));
    }
    if let Some(heap) = max_heap_line(head) {
        match capacity_bytes(&heap) {
            Some(bytes) if bytes == heap_bytes => {}
            _ => {
                return Err(format!(
                    "the JVM's maximum heap is {heap}, the plan asks for {heap_bytes} bytes"
                ))
            }
        }
    }
    Ok(using.to_string())
}

/// The maximum heap a unified GC log states at start: `Heap Max Capacity: 1G` (G1, Shenandoah, Parallel,
/// Serial) or, under `gc,init`, ZGC's `Max Capacity: 1024M` (not its `Soft Max Capacity`, nor the
/// per-collection `GC(3) Max Capacity: 1024M(100%)`).
fn max_heap_line(head: &str) -> Option<String> {
    head.lines().find_map(|line| {
        let value = |at: usize, label: &str| line[at + label.len()..].trim().to_string();
        if let Some(at) = line.find("Heap Max Capacity: ") {
            return Some(value(at, "Heap Max Capacity: "));
        }
        let at = line.find("] Max Capacity: ")?;
        line.contains("[gc,init]")
            .then(|| value(at, "] Max Capacity: "))
    })
}

/// `Using G1` from a unified GC log's start (not a collection's `Using 2 workers of 2`).
fn using_line(head: &str) -> Option<&str> {
    head.lines()
        .filter_map(|line| line.find("] Using ").map(|at| line[at + 2..].trim()))
        .find(|text| !text.contains("workers"))
}

fn pods_api(client: &Client, plan: &K8sPlan) -> Api<Pod> {
    Api::namespaced(client.clone(), &plan.k8s.namespace)
}

/// The Cassandra pods of one cluster (by cass-operator's labels, or the StatefulSets'), by name.
async fn cassandra_pods(
    client: &Client,
    plan: &K8sPlan,
    cluster: &str,
) -> Result<Vec<Pod>, K8sError> {
    let selector = match plan.k8s.backend {
        Backend::K8ssandra => format!(
            "cassandra.datastax.com/cluster={cluster},cassandra.datastax.com/datacenter={}",
            plan.k8s.datacenter
        ),
        Backend::StatefulSet => crate::statefulset::pod_selector(cluster),
    };
    let mut pods = pods_api(client, plan)
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| K8sError::kube(&format!("listing the Cassandra pods ({selector})"), &e))?
        .items;
    pods.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    Ok(pods)
}

/// Before any load: every Cassandra pod's JVM must run the planned collector and heap, as its own GC
/// log states at start-up.
pub async fn check_collectors(
    client: &Client,
    plan: &K8sPlan,
    cluster: &str,
    gc: Gc,
    heap_bytes: u64,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<NodePod>, K8sError> {
    let pods = cassandra_pods(client, plan, cluster).await?;
    if pods.is_empty() {
        return Err(K8sError::Kube(format!(
            "{cluster}: the datacenter is ready but no pod carries its Cassandra pods' labels"
        )));
    }
    let api = pods_api(client, plan);
    let mut nodes = Vec::new();
    for pod in pods {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let head_command = format!("head -c {GC_LOG_HEAD_BYTES} {GC_LOG}");
        let head = exec_output(
            &api,
            &name,
            CASSANDRA_CONTAINER,
            &["sh", "-c", &head_command],
        )
        .await?;
        let collector = check_gc_log_head(&String::from_utf8_lossy(&head), gc, heap_bytes)
            .map_err(|why| K8sError::Kube(format!("pod {name}: {why}")))?;
        // `Using G1` → `G1`, as the report's collector column shows it.
        let collector = collector.trim_start_matches("Using ").to_string();
        progress(&format!(
            "pod {name}: the JVM runs {collector}, heap as planned"
        ));
        let ip = pod
            .status
            .as_ref()
            .and_then(|s| s.pod_ip.clone())
            .unwrap_or_default();
        nodes.push(NodePod {
            name,
            ip,
            collector,
        });
    }
    Ok(nodes)
}

/// A pod that mounts the results volume, to read it with `exec`; the image's tar and sleep are used.
fn fetch_pod(plan: &K8sPlan) -> Result<Pod, K8sError> {
    serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": FETCH_POD, "namespace": plan.k8s.namespace,
                     "labels": {"app.kubernetes.io/managed-by": "cqlbench"}},
        "spec": {
            "restartPolicy": "Never",
            "securityContext": {"runAsNonRoot": true, "runAsUser": 65532, "runAsGroup": 65532, "fsGroup": 65532},
            "containers": [{"name": "fetch", "image": plan.k8s.image, "command": ["sleep", "86400"],
                            "volumeMounts": [{"name": "results", "mountPath": RESULTS_MOUNT}]}],
            "volumes": [{"name": "results", "persistentVolumeClaim": {"claimName": RESULTS_CLAIM}}],
        },
    }))
    .map_err(|e| K8sError::Invalid(format!("fetch pod: {e}")))
}

async fn running_fetch_pod(
    client: &Client,
    plan: &K8sPlan,
    timeout: Duration,
) -> Result<(), K8sError> {
    let api = pods_api(client, plan);
    let read_error = |e: kube::Error| K8sError::kube(&format!("reading pod {FETCH_POD}"), &e);
    let deadline = Instant::now() + timeout;
    loop {
        let phase = match api.get_opt(FETCH_POD).await.map_err(read_error)? {
            None => {
                api.create(&PostParams::default(), &fetch_pod(plan)?)
                    .await
                    .map_err(|e| K8sError::kube(&format!("creating pod {FETCH_POD}"), &e))?;
                "Pending".to_string()
            }
            // One of an earlier run, going away: wait for it, then make a new one.
            Some(pod) if pod.metadata.deletion_timestamp.is_some() => "Terminating".to_string(),
            Some(pod) => pod.status.and_then(|s| s.phase).unwrap_or_default(),
        };
        if phase == "Running" {
            return Ok(());
        }
        if Instant::now() >= deadline || phase == "Failed" || phase == "Succeeded" {
            return Err(K8sError::Kube(format!(
                "pod {FETCH_POD} (reads the results volume) is {phase:?}, not Running"
            )));
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// Removes the pod that read the results volume (it would hold the claim); not waited for.
pub async fn remove_fetch_pod(client: &Client, plan: &K8sPlan) {
    let _ = pods_api(client, plan)
        .delete(FETCH_POD, &DeleteParams::default())
        .await;
}

/// Copies one configuration's results (all its Jobs' client directories) and every Cassandra pod's
/// GC log into `OUT/raw/<cluster>/`.
pub async fn collect_config(
    client: &Client,
    plan: &K8sPlan,
    index: usize,
    nodes: &[NodePod],
    out: &Path,
    timeout: Duration,
    progress: &mut dyn FnMut(&str),
) -> Result<(), K8sError> {
    let cluster = &plan.cluster_names[index];
    let raw = out.join("raw");
    let api = pods_api(client, plan);
    running_fetch_pod(client, plan, timeout).await?;
    let results = exec_output(
        &api,
        FETCH_POD,
        "fetch",
        &["tar", "-cf", "-", "-C", RESULTS_MOUNT, cluster],
    )
    .await?;
    untar(&results, &raw)?;
    progress(&format!(
        "{cluster}: collected the clients' results ({} KiB)",
        results.len() / 1024
    ));
    for node in nodes {
        let dir = raw.join(cluster).join("nodes").join(&node.name);
        let command = format!("cd $(dirname {GC_LOG}) && tar -cf - $(basename {GC_LOG})*");
        let logs = exec_output(
            &api,
            &node.name,
            CASSANDRA_CONTAINER,
            &["sh", "-c", &command],
        )
        .await?;
        untar(&logs, &dir)?;
        PodRecord {
            version: FORMAT_VERSION,
            pod: node.name.clone(),
            ip: node.ip.clone(),
            collector: Some(node.collector.clone()),
        }
        .write(&dir)?;
        progress(&format!(
            "{cluster}: collected pod {}'s GC log ({} KiB)",
            node.name,
            logs.len() / 1024
        ));
    }
    let marker = raw.join(cluster).join(COLLECTED_MARKER);
    std::fs::write(&marker, "results and GC logs collected\n")
        .map_err(io_error(format!("writing {}", marker.display())))?;
    Ok(())
}

fn subdirs(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(prefix))
        })
        .collect();
    dirs.sort();
    dirs
}

/// Builds the campaign directory from `OUT/raw` and writes its report: the layout and files of a local
/// campaign, so that `cqlbench report` and `cqlbench compare` read it the same way.
pub fn assemble(
    plan: &K8sPlan,
    out: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<(), K8sError> {
    let mut order = Vec::new();
    for (index, config) in plan.plan.configs.iter().enumerate() {
        order.push(config.dir_name.clone());
        assemble_config(plan, index, out, progress)?;
    }
    // The plan, its [cost] prices and the machine cqlbench ran on, as a local campaign keeps them.
    let home = cqlbench_cluster::Home::from_env();
    cqlbench_campaign::record_environment(&plan.plan, out, &home)
        .write(out)
        .map_err(|e| K8sError::Invalid(e.to_string()))?;
    let tables = cqlbench_campaign::tables::render(&plan.plan, out);
    let path = out.join("tables.txt");
    std::fs::write(&path, &tables).map_err(io_error(format!("writing {}", path.display())))?;
    let campaign =
        cqlbench_report::discover(out, &order).map_err(|e| K8sError::Invalid(e.to_string()))?;
    let (markdown, html) = cqlbench_report::write_report(&campaign, out)
        .map_err(|e| K8sError::Invalid(e.to_string()))?;
    progress(&format!(
        "report: {} and {}",
        markdown.display(),
        html.display()
    ));
    Ok(())
}

/// One configuration's cells: each Job's clients merged, each node's GC log of the cell's window.
fn assemble_config(
    plan: &K8sPlan,
    index: usize,
    out: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<(), K8sError> {
    let config = &plan.plan.configs[index];
    let cluster = &plan.cluster_names[index];
    let raw = out.join("raw").join(cluster);
    let config_dir = out.join(&config.dir_name);
    ConfigRecord {
        k8ssandra_cluster: Some(cluster.clone()),
        ..ConfigRecord::new(&config.name, &config.spec)
    }
    .write(&config_dir)?;
    let nodes = subdirs(&raw.join("nodes"), "");
    for cell in cells(plan) {
        let Some(label) = &cell.label else { continue };
        let clients = subdirs(&raw.join(&cell.name), "client-");
        if clients.is_empty() {
            progress(&format!(
                "{cluster}/{}: no client results, left out",
                cell.name
            ));
            continue;
        }
        let mut cell_dir = config_dir.join(label);
        if let Some(repeat) = cell.repeat {
            cell_dir = cell_dir.join(repeat.to_string());
        }
        let _ = std::fs::remove_dir_all(&cell_dir);
        std::fs::create_dir_all(&cell_dir)
            .map_err(io_error(format!("creating {}", cell_dir.display())))?;
        let merged = cqlbench_report::merge_runs(&clients, &cell_dir)
            .map_err(|e| K8sError::Invalid(format!("{cluster}/{}: {e}", cell.name)))?;
        let start = merged.summary.measured_start_unix_s;
        let window = Window {
            start_unix_s: start,
            end_unix_s: start + merged.summary.duration_s,
        };
        for (node, pod_dir) in nodes.iter().enumerate() {
            node_figures(
                pod_dir,
                node + 1,
                window,
                &cell_dir.join(format!("node{}", node + 1)),
            )?;
        }
        progress(&format!(
            "{}/{}: {} client(s) merged, {} node GC log(s)",
            config.dir_name,
            label,
            merged.clients,
            nodes.len()
        ));
    }
    Ok(())
}

/// The collector a pod's JVM runs: as `k8s run` recorded it, or (logs copied by hand have no
/// pod.json) as its GC log's own `Using …` line names it.
fn pod_collector(pod: Option<&PodRecord>, pod_dir: &Path) -> Option<String> {
    pod.and_then(|p| p.collector.clone()).or_else(|| {
        let head = std::fs::read(pod_dir.join("gc.log")).unwrap_or_default();
        let head = String::from_utf8_lossy(&head[..head.len().min(GC_LOG_HEAD_BYTES)]).into_owned();
        using_line(&head).map(|using| using.trim_start_matches("Using ").to_string())
    })
}

/// One node's share of a cell, as a local campaign writes it: the window's GC log lines and their
/// analysis and timeline, and figures.json (what only a local node gives — CPU, flushes — is left null).
fn node_figures(pod_dir: &Path, node: usize, window: Window, dir: &Path) -> Result<(), K8sError> {
    let pod = PodRecord::read(pod_dir).ok();
    let pod_name = pod
        .as_ref()
        .map(|p| p.pod.clone())
        .or_else(|| {
            pod_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "?".into());
    let mut notes = vec![format!(
        "pod {pod_name}: CPU, flushes and compactions are not collected from Kubernetes pods"
    )];
    let gc_log_lines = keep_gc_window(&pod_dir.join("gc.log"), window, dir, &mut notes)?;
    let figures = NodeFigures {
        version: FORMAT_VERSION,
        node,
        address: pod.as_ref().map(|p| p.ip.clone()).unwrap_or_default(),
        collector: pod_collector(pod.as_ref(), pod_dir),
        window,
        gc_log_lines,
        notes,
        ..NodeFigures::default()
    };
    Ok(figures.write(dir)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../gclog/tests/fixtures/cassandra")
            .join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn the_gc_log_of_a_real_node_proves_its_collector_and_heap() {
        // Logs of real Cassandra 5.0.9 nodes started by `cqlbench cluster up` (heap as in their fixture).
        for (name, gc) in [
            ("c5.0.9-jdk17-g1.log", Gc::G1),
            ("c5.0.9-jdk17-shenandoah.log", Gc::Shenandoah),
            ("c5.0.9-jdk25-g1.log", Gc::G1),
            ("c5.0.9-jdk17-zgc.log", Gc::Zgc),
        ] {
            let head = fixture(name);
            // Each of these nodes ran with a 512 MB heap (the fixtures' cluster up).
            let heap = 512 << 20;
            let using = check_gc_log_head(&head, gc, heap).unwrap();
            assert_eq!(using, format!("Using {}", gc.jvm_log_name()), "{name}");
            let wrong = if gc == Gc::G1 { Gc::Zgc } else { Gc::G1 };
            let error = check_gc_log_head(&head, wrong, heap).unwrap_err();
            assert!(error.contains("the plan asks for"), "{error}");
            let error = check_gc_log_head(&head, gc, heap * 2).unwrap_err();
            assert!(error.contains("maximum heap is"), "{error}");
        }
        assert!(check_gc_log_head("", Gc::G1, 1)
            .unwrap_err()
            .contains("no collector"));
    }

    #[test]
    fn capacities_read_as_the_jvm_prints_them() {
        assert_eq!(capacity_bytes("16G"), Some(16 << 30));
        assert_eq!(capacity_bytes("512M"), Some(512 << 20));
        assert_eq!(capacity_bytes("123B"), Some(123));
        assert_eq!(capacity_bytes("1.5G"), None);
        assert_eq!(capacity_bytes("G"), None);
    }
}
