//! The manifests: a Namespace, the results volume, a workload file's ConfigMap, and per configuration its
//! datacenter (a K8ssandraCluster, or a headless Service and a StatefulSet per rack) and one Indexed Job
//! per cell. Files have stable names and sorted keys, so a plan always renders to the same bytes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use cqlbench_campaign::RateMode;
use cqlbench_cluster::{ClusterSpec, Gc};
use serde_json::{json, Value};

use crate::error::K8sError;
use crate::plan::{Backend, K8sPlan};
use crate::quantity::heap_quantity;
use crate::statefulset;

/// Where every client pod mounts the results volume.
pub const RESULTS_MOUNT: &str = "/results";
/// The results volume's PersistentVolumeClaim.
pub const RESULTS_CLAIM: &str = "cqlbench-results";
/// The GC log of every Cassandra node: on the data volume (mounted at /var/lib/cassandra by cass-operator),
/// so it survives restarts; a directory the JVM would have to create would stop it from starting.
pub const GC_LOG: &str = "/var/lib/cassandra/gc.log";
/// Pod-template annotation holding the wall-clock time all client pods of a Job start their load.
pub const START_AT_ANNOTATION: &str = "cqlbench.io/start-at";
/// Pod-template annotation holding a sweep cell's rate, known only once the unthrottled cell has run.
pub const RATE_ANNOTATION: &str = "cqlbench.io/rate";
/// The client pods' named container port for `--prometheus`.
pub const METRICS_PORT: u16 = 9464;
pub const METRICS_PORT_NAME: &str = "metrics";

/// Where the client pods find the plan's workload file (from its ConfigMap).
pub const WORKLOAD_MOUNT: &str = "/etc/cqlbench/workload";
/// A ConfigMap holds 1 MiB at most.
const CONFIG_MAP_MAX: usize = 1 << 20;

/// Kubernetes' default `terminationMessagePath`: a client writes its brief there (`--brief-to`).
pub const TERMINATION_LOG: &str = "/dev/termination-log";

#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// When the client pods of every load Job start (RFC 3339, e.g. 2026-11-23T09:00:00Z); written to the
    /// pod template's `cqlbench.io/start-at` annotation. `None` leaves it empty, to be set before applying.
    pub start_at: Option<String>,
}

/// One rendered file: its path under the output directory and its object.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub path: PathBuf,
    pub object: Value,
}

impl Manifest {
    pub fn yaml(&self) -> String {
        crate::yaml::to_yaml(&self.object)
    }
}

/// One load Job of a configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Part of the Job's name and of the results path: `populate`, `max`, `p35`, `r25000`, `r25000-2`.
    pub name: String,
    pub rate: CellRate,
    /// `None` for the populate step (which measures one operation).
    pub duration: Option<Duration>,
    pub warmup: Duration,
    /// The cell's directory in a campaign's layout (`max`, `0.35-of-max`, `25000`), as a local campaign
    /// names it; `None` for the populate step, which is no cell of the tables.
    pub label: Option<String>,
    /// 1-based repeat when the plan repeats its cells.
    pub repeat: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CellRate {
    Unthrottled,
    Fixed(f64),
    /// A fraction of the maximum found by the configuration's `max` cell.
    OfMax(f64),
}

/// Renders every manifest of the plan, in file order.
pub fn render(plan: &K8sPlan, options: &RenderOptions) -> Result<Vec<Manifest>, K8sError> {
    if let Some(start_at) = &options.start_at {
        check_start_at(start_at)?;
    }
    let k8s = &plan.k8s;
    let mut out = vec![
        Manifest {
            path: "00-namespace.yaml".into(),
            object: json!({
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": k8s.namespace, "labels": labels(None, None)},
            }),
        },
        Manifest {
            path: "01-results-pvc.yaml".into(),
            object: results_claim(plan),
        },
    ];
    if let Some(config_map) = workload_config_map(plan)? {
        out.push(Manifest {
            path: "02-workload-configmap.yaml".into(),
            object: config_map,
        });
    }
    let cells = cells(plan);
    for (index, config) in plan.plan.configs.iter().enumerate() {
        let cluster = &plan.cluster_names[index];
        let dir = PathBuf::from(format!("{:02}-{cluster}", index + 1));
        out.extend(
            datacenter(plan, index)?
                .into_iter()
                .map(|(file, object)| Manifest {
                    path: dir.join(file),
                    object,
                }),
        );
        for (number, cell) in cells.iter().enumerate() {
            out.push(Manifest {
                path: dir.join(format!("{:02}-job-{}.yaml", number + 1, cell.name)),
                object: job(plan, cluster, &config.name, cell, options),
            });
        }
    }
    if k8s.pod_monitor {
        out.push(Manifest {
            path: "99-podmonitor.yaml".into(),
            object: pod_monitor(plan),
        });
    }
    Ok(out)
}

/// A configuration's datacenter, as its backend runs it: the objects `k8s run` applies before the
/// configuration's Jobs (in that order) and deletes after them, each with its file name.
fn datacenter(plan: &K8sPlan, index: usize) -> Result<Vec<(String, Value)>, K8sError> {
    match plan.k8s.backend {
        Backend::K8ssandra => Ok(vec![(
            "00-k8ssandracluster.yaml".into(),
            k8ssandra_cluster(plan, index)?,
        )]),
        Backend::StatefulSet => {
            let mut objects = vec![(
                "00-service.yaml".to_string(),
                statefulset::service(plan, index),
            )];
            let image = &plan.cassandra_images[index];
            let nodes = plan.plan.configs[index].spec.nodes;
            for rack in statefulset::racks(&plan.k8s.zones, nodes) {
                objects.push((
                    format!("00-statefulset-{}.yaml", rack.name),
                    statefulset::statefulset(plan, index, &rack, image)?,
                ));
            }
            Ok(objects)
        }
    }
}

/// Kinds that make up a configuration's datacenter, on either backend.
pub const DATACENTER_KINDS: [&str; 3] = ["K8ssandraCluster", "Service", "StatefulSet"];

/// Writes the manifests under `dir` (created if missing; files of the same names are replaced).
pub fn write(manifests: &[Manifest], dir: &Path) -> Result<(), K8sError> {
    for manifest in manifests {
        let path = dir.join(&manifest.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| K8sError::Io {
                context: format!("creating {}", parent.display()),
                source,
            })?;
        }
        std::fs::write(&path, manifest.yaml()).map_err(|source| K8sError::Io {
            context: format!("writing {}", path.display()),
            source,
        })?;
    }
    Ok(())
}

fn check_start_at(text: &str) -> Result<(), K8sError> {
    // 2026-11-23T09:00:00Z, 2026-11-23T09:00:00.5+01:00
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        b.get(range)
            .is_some_and(|s| s.iter().all(u8::is_ascii_digit))
    };
    let mut ok = b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && matches!(b[10], b'T' | b't')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    if ok {
        let mut rest = &text[19..];
        if let Some(fraction) = rest.strip_prefix('.') {
            let end = fraction
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(fraction.len());
            ok = end > 0;
            rest = &fraction[end..];
        }
        let zone = rest.as_bytes();
        ok = ok
            && (rest == "Z"
                || rest == "z"
                || (zone.len() == 6
                    && matches!(zone[0], b'+' | b'-')
                    && zone[1..3].iter().all(u8::is_ascii_digit)
                    && zone[3] == b':'
                    && zone[4..6].iter().all(u8::is_ascii_digit)));
    }
    if ok {
        Ok(())
    } else {
        Err(K8sError::Invalid(format!(
            "--start-at {text:?}: expected an RFC 3339 time such as 2026-11-23T09:00:00Z"
        )))
    }
}

fn labels(cluster: Option<&str>, cell: Option<&str>) -> Value {
    let mut map = serde_json::Map::new();
    map.insert("app.kubernetes.io/managed-by".into(), json!("cqlbench"));
    if let Some(cluster) = cluster {
        map.insert("cqlbench.io/cluster".into(), json!(cluster));
    }
    if let Some(cell) = cell {
        map.insert("cqlbench.io/cell".into(), json!(cell));
    }
    Value::Object(map)
}

/// A Prometheus Operator PodMonitor for every load pod of the plan (a Job's pods have no Service for
/// a ServiceMonitor to select).
fn pod_monitor(plan: &K8sPlan) -> Value {
    let k8s = &plan.k8s;
    json!({
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PodMonitor",
        "metadata": {"name": "cqlbench-load", "namespace": k8s.namespace, "labels": labels(None, None)},
        "spec": {
            "selector": {
                "matchLabels": {"app.kubernetes.io/managed-by": "cqlbench"},
                "matchExpressions": [{"key": "cqlbench.io/cell", "operator": "Exists"}],
            },
            "podMetricsEndpoints": [{
                "port": METRICS_PORT_NAME,
                "path": "/metrics",
                "interval": "5s",
                // The pods' own labels say which configuration and cell a series belongs to.
                "relabelings": [
                    {"sourceLabels": ["__meta_kubernetes_pod_label_cqlbench_io_cluster"], "targetLabel": "cluster"},
                    {"sourceLabels": ["__meta_kubernetes_pod_label_cqlbench_io_cell"], "targetLabel": "cell"},
                ],
            }],
        },
    })
}

fn results_claim(plan: &K8sPlan) -> Value {
    let k8s = &plan.k8s;
    let mut spec = json!({
        // Every client pod of a Job writes here at once, from whichever node it runs on.
        "accessModes": ["ReadWriteMany"],
        "resources": {"requests": {"storage": k8s.results_size}},
    });
    if let Some(class) = &k8s.results_storage_class {
        spec["storageClassName"] = json!(class);
    }
    json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": RESULTS_CLAIM, "namespace": k8s.namespace, "labels": labels(None, None)},
        "spec": spec,
    })
}

/// K8ssandra's name for a collector in `jvmOptions.gc`, where it has one (it writes that collector's
/// defaults into the JDK-specific options file on Cassandra 4.x; 5.0 ignores the field).
/// The plan's workload file and its name in the pods, when the workload is a file (a built-in or
/// shipped one is in the image).
fn workload_file(plan: &K8sPlan) -> Option<(&Path, String)> {
    let workload = &plan.plan.load.workload;
    if !cqlbench_workload::is_file_argument(workload) {
        return None;
    }
    let path = Path::new(workload);
    let name = path.file_name()?.to_string_lossy().into_owned();
    Some((path, name))
}

/// The ConfigMap that carries the plan's workload file to the client pods.
fn workload_config_map_name(plan: &K8sPlan) -> String {
    let first = plan
        .cluster_names
        .first()
        .map_or("cqlbench", String::as_str);
    format!("{first}-workload")
}

fn workload_config_map(plan: &K8sPlan) -> Result<Option<Value>, K8sError> {
    let Some((path, name)) = workload_file(plan) else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(path).map_err(|source| K8sError::Io {
        context: format!("reading the workload file {}", path.display()),
        source,
    })?;
    if text.len() > CONFIG_MAP_MAX {
        return Err(K8sError::Io {
            context: format!("the workload file {}", path.display()),
            source: std::io::Error::other("is larger than a ConfigMap holds (1 MiB)"),
        });
    }
    Ok(Some(json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": workload_config_map_name(plan),
            "namespace": plan.k8s.namespace,
            "labels": labels(None, None),
        },
        "data": {name: text},
    })))
}

fn k8ssandra_gc(gc: Gc) -> &'static str {
    match gc {
        Gc::G1 => "G1GC",
        Gc::Zgc | Gc::ZgcGenerational => "ZGC",
        Gc::Shenandoah | Gc::ShenandoahGenerational => "Shenandoah",
        Gc::Cms => "CMS",
        Gc::Parallel => "Custom",
    }
}

/// The JVM options that decide heap and collector on every Cassandra version, for
/// `jvmOptions.additionalOptions` (cassandra-env.sh, read after jvm-server.options and the
/// jvm<N>-server.options of the running JDK).
///
/// Cassandra 5.0's jvm17-server.options selects G1 and K8ssandra's `gc` field does not change that there; a
/// second collector flag would stop the JVM ("Multiple garbage collectors selected"), so any other collector
/// starts by switching G1 off (`-XX:-UseG1GC`; the last setting of a flag wins). On JDK 11 the same is done
/// for CMS. Then cqlbench's own flag set for the collector (the one `cqlbench cluster up` uses), the GC log
/// with safepoints on the data volume, and the plan's `jvm-opts`.
pub fn server_jvm_options(spec: &ClusterSpec, jdk_major: u32) -> Result<Vec<String>, K8sError> {
    let mut options = Vec::new();
    if spec.gc != Gc::G1 {
        options.push("-XX:-UseG1GC".to_string());
    }
    if spec.gc != Gc::Cms && jdk_major < 14 {
        options.push("-XX:-UseConcMarkSweepGC".to_string());
    }
    let flags = cqlbench_cluster::gc::render(&spec.gc_settings(), jdk_major)
        .map_err(|e| K8sError::Invalid(e.to_string()))?;
    options.extend(flags);
    options.push(cqlbench_cluster::jvm::gc_log_flag(Path::new(GC_LOG)));
    options.extend(spec.jvm_opts.iter().cloned());
    Ok(options)
}

fn k8ssandra_cluster(plan: &K8sPlan, index: usize) -> Result<Value, K8sError> {
    let k8s = &plan.k8s;
    let config = &plan.plan.configs[index];
    let spec = &config.spec;
    let cluster = &plan.cluster_names[index];
    let heap = heap_quantity(spec.heap_bytes);
    let resources = json!({
        "requests": {"cpu": k8s.cpu, "memory": k8s.memory},
        "limits": {"cpu": k8s.cpu, "memory": k8s.memory},
    });
    let racks: Vec<Value> = statefulset::racks(&k8s.zones, spec.nodes)
        .into_iter()
        .map(|rack| match rack.zone {
            None => json!({"name": rack.name}),
            Some(zone) => json!({
                "name": rack.name,
                "nodeAffinityLabels": {"topology.kubernetes.io/zone": zone},
            }),
        })
        .collect();
    let jvm = json!({
        "heap_initial_size": heap,
        "heap_max_size": heap,
        "gc": k8ssandra_gc(spec.gc),
        "additionalOptions": server_jvm_options(spec, plan.jdk_majors[index])?,
    });
    let version = spec
        .version()
        .map_err(|e| K8sError::Invalid(e.to_string()))?;
    Ok(json!({
        "apiVersion": "k8ssandra.io/v1alpha1",
        "kind": "K8ssandraCluster",
        "metadata": {
            "name": cluster,
            "namespace": k8s.namespace,
            "labels": labels(Some(cluster), None),
            "annotations": {"cqlbench.io/config": config.name},
        },
        "spec": {
            "cassandra": {
                "serverVersion": version.raw,
                "datacenters": [{
                    "metadata": {"name": k8s.datacenter},
                    "size": spec.nodes,
                    "racks": racks,
                    "resources": resources,
                    "storageConfig": {
                        "cassandraDataVolumeClaimSpec": {
                            "storageClassName": k8s.storage_class,
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": k8s.storage_size}},
                        },
                    },
                    "config": {"jvmOptions": jvm},
                }],
            },
        },
    }))
}

/// The load Jobs of every configuration, in the order they run.
pub fn cells(plan: &K8sPlan) -> Vec<Cell> {
    let load = &plan.plan.load;
    let mut cells = Vec::new();
    if load.populate > 0 {
        cells.push(Cell {
            name: "populate".into(),
            rate: CellRate::Unthrottled,
            duration: None,
            warmup: Duration::ZERO,
            label: None,
            repeat: None,
        });
    }
    let repeat_of = |repeat: u32| (load.repeats > 1).then_some(repeat);
    let repeat_suffix = |repeat: u32| {
        if load.repeats > 1 {
            format!("-{repeat}")
        } else {
            String::new()
        }
    };
    match &load.mode {
        RateMode::Fixed(rates) => {
            for rate in rates {
                for repeat in 1..=load.repeats {
                    cells.push(Cell {
                        name: format!("r{}{}", number_name(*rate), repeat_suffix(repeat)),
                        rate: CellRate::Fixed(*rate),
                        duration: Some(load.duration),
                        warmup: load.warmup,
                        label: Some(cqlbench_campaign::matrix::CellRate::Fixed(*rate).label()),
                        repeat: repeat_of(repeat),
                    });
                }
            }
        }
        RateMode::Sweep {
            fractions,
            max_duration,
        } => {
            for repeat in 1..=load.repeats {
                cells.push(Cell {
                    name: format!("max{}", repeat_suffix(repeat)),
                    rate: CellRate::Unthrottled,
                    duration: Some(*max_duration),
                    warmup: load.warmup,
                    label: Some(cqlbench_campaign::matrix::CellRate::Max.label()),
                    repeat: repeat_of(repeat),
                });
            }
            for fraction in fractions {
                for repeat in 1..=load.repeats {
                    cells.push(Cell {
                        name: format!(
                            "p{}{}",
                            number_name(fraction * 100.0),
                            repeat_suffix(repeat)
                        ),
                        rate: CellRate::OfMax(*fraction),
                        duration: Some(load.duration),
                        warmup: load.warmup,
                        label: Some(
                            cqlbench_campaign::matrix::CellRate::FractionOfMax(*fraction).label(),
                        ),
                        repeat: repeat_of(repeat),
                    });
                }
            }
        }
        // Refused when the plan was checked.
        RateMode::Slo { .. } => {}
    }
    cells
}

/// 25000 → "25000", 35.0 → "35", 2.5 → "2p5": a name part.
fn number_name(value: f64) -> String {
    let rounded = (value * 1000.0).round() / 1000.0;
    if rounded.fract() == 0.0 {
        format!("{}", rounded as u64)
    } else {
        format!("{rounded}").replace('.', "p")
    }
}

fn duration_arg(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{}s", duration.as_secs())
    } else {
        format!("{}ms", duration.as_millis())
    }
}

/// The plan's `cqlbench run` options without `--populate` (a configuration populates once, in its own Job).
fn args_without_populate(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip_next = false;
    for arg in args {
        if skip_next {
            skip_next = false;
        } else if arg == "--populate" {
            skip_next = true;
        } else if !arg.starts_with("--populate=") {
            out.push(arg.clone());
        }
    }
    out
}

fn secret_env(name: &str, secret: &str, key: &str) -> Value {
    json!({"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}})
}

fn annotation_env(name: &str, annotation: &str) -> Value {
    json!({"name": name, "valueFrom": {"fieldRef": {"fieldPath": format!("metadata.annotations['{annotation}']")}}})
}

/// The command line, environment and pod annotations of a Job's client pods.
#[derive(Default)]
struct PodCommand {
    args: Vec<String>,
    env: Vec<Value>,
    annotations: serde_json::Map<String, Value>,
}

impl PodCommand {
    fn annotate(&mut self, key: &str, value: impl Into<Value>) {
        self.annotations.insert(key.into(), value.into());
    }

    /// A latency cell's options: duration, warm-up, rate, and the clients' common start. Returns
    /// where each client writes its results.
    fn cell(&mut self, cluster: &str, cell: &Cell, pods: u32, options: &RenderOptions) -> String {
        if let Some(duration) = cell.duration {
            self.args.extend(["-d".into(), duration_arg(duration)]);
        }
        if !cell.warmup.is_zero() {
            self.args
                .extend(["--warmup".into(), duration_arg(cell.warmup)]);
        }
        match cell.rate {
            CellRate::Unthrottled => {}
            CellRate::Fixed(rate) => self.args.extend(["--rate".into(), number_arg(rate)]),
            CellRate::OfMax(fraction) => {
                // The rate is a fraction of what the `max` Job measured: unknown when rendering.
                self.annotate(RATE_ANNOTATION, "");
                self.annotate("cqlbench.io/rate-fraction", number_arg(fraction));
                self.annotate("cqlbench.io/rate-of", format!("{cluster}-max"));
                self.env
                    .push(annotation_env("CQLBENCH_RATE", RATE_ANNOTATION));
                self.args
                    .extend(["--rate".into(), "$(CQLBENCH_RATE)".into()]);
            }
        }
        self.annotate(
            START_AT_ANNOTATION,
            options.start_at.clone().unwrap_or_default(),
        );
        self.env
            .push(annotation_env("CQLBENCH_START_AT", START_AT_ANNOTATION));
        self.args.extend([
            "--clients".into(),
            pods.to_string(),
            "--client-id".into(),
            "$(JOB_COMPLETION_INDEX)".into(),
            "--start-at".into(),
            "$(CQLBENCH_START_AT)".into(),
        ]);
        format!(
            "{RESULTS_MOUNT}/{cluster}/{}/client-$(JOB_COMPLETION_INDEX)",
            cell.name
        )
    }
}

/// What a Job's pods run: `cqlbench run` with the plan's options and the cell's, their brief to the
/// termination log, against the datacenter's service.
fn pod_command(
    plan: &K8sPlan,
    cluster: &str,
    config_name: &str,
    cell: &Cell,
    pods: u32,
    options: &RenderOptions,
) -> PodCommand {
    let (k8s, load) = (&plan.k8s, &plan.plan.load);
    let workload = match workload_file(plan) {
        Some((_, name)) => format!("{WORKLOAD_MOUNT}/{name}"),
        None => load.workload.clone(),
    };
    // K8ssandra turns authentication on and keeps the superuser's credentials in a Secret; the
    // StatefulSets run Cassandra's default, no authentication.
    let env = match k8s.backend {
        Backend::K8ssandra => {
            let secret = format!("{cluster}-superuser");
            vec![
                secret_env("CQLBENCH_USERNAME", &secret, "username"),
                secret_env("CQLBENCH_PASSWORD", &secret, "password"),
            ]
        }
        Backend::StatefulSet => Vec::new(),
    };
    let mut command = PodCommand {
        args: vec!["run".into(), workload],
        env,
        ..PodCommand::default()
    };
    command.annotate("cqlbench.io/config", config_name);
    let out_dir = if cell.duration.is_none() {
        command.args.extend(load.args.iter().cloned());
        // The campaign's populate step: the rows, then a one-operation measured phase.
        command.args.extend(["-n".into(), "1".into()]);
        format!("{RESULTS_MOUNT}/{cluster}/populate")
    } else {
        command.args.extend(args_without_populate(&load.args));
        command.cell(cluster, cell, pods, options)
    };
    command.args.extend([
        // The run's brief lands in the pod's status, where `k8s run` reads the max Job's throughput.
        "--brief-to".into(),
        TERMINATION_LOG.into(),
        "--host".into(),
        statefulset::service_name(cluster, &k8s.datacenter),
        "--dc".into(),
        k8s.datacenter.clone(),
        "--prometheus".into(),
        format!("0.0.0.0:{METRICS_PORT}"),
        "--prometheus-public".into(),
        "--prometheus-linger".into(),
        k8s.metrics_linger.clone(),
        "-o".into(),
        out_dir,
    ]);
    // What annotation-based scrape configs (Prometheus' kubernetes-pods example) read.
    command.annotate("prometheus.io/scrape", "true");
    command.annotate("prometheus.io/port", METRICS_PORT.to_string());
    command.annotate("prometheus.io/path", "/metrics");
    command
}

fn job(
    plan: &K8sPlan,
    cluster: &str,
    config_name: &str,
    cell: &Cell,
    options: &RenderOptions,
) -> Value {
    let k8s = &plan.k8s;
    let job_name = format!("{cluster}-{}", cell.name);
    let pods = if cell.duration.is_none() {
        1
    } else {
        k8s.client_pods
    };
    let PodCommand {
        args,
        env,
        annotations,
    } = pod_command(plan, cluster, config_name, cell, pods, options);
    let mut mounts = vec![json!({"name": "results", "mountPath": RESULTS_MOUNT})];
    let mut volumes =
        vec![json!({"name": "results", "persistentVolumeClaim": {"claimName": RESULTS_CLAIM}})];
    if workload_file(plan).is_some() {
        mounts.push(json!({"name": "workload", "mountPath": WORKLOAD_MOUNT, "readOnly": true}));
        volumes.push(
            json!({"name": "workload", "configMap": {"name": workload_config_map_name(plan)}}),
        );
    }
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": job_name,
            "namespace": k8s.namespace,
            "labels": labels(Some(cluster), Some(&cell.name)),
        },
        "spec": {
            "completionMode": "Indexed",
            "completions": pods,
            "parallelism": pods,
            // A failed client invalidates the cell; nothing is retried behind the measurement's back.
            "backoffLimit": 0,
            "template": {
                "metadata": {
                    "labels": labels(Some(cluster), Some(&cell.name)),
                    "annotations": Value::Object(annotations),
                },
                "spec": {
                    "restartPolicy": "Never",
                    // The image runs as 65532; fsGroup makes the results volume writable for it.
                    "securityContext": {
                        "runAsNonRoot": true,
                        "runAsUser": 65532,
                        "runAsGroup": 65532,
                        "fsGroup": 65532,
                    },
                    "containers": [{
                        "name": "cqlbench",
                        "image": k8s.image,
                        "args": args,
                        "env": env,
                        "ports": [{"name": METRICS_PORT_NAME, "containerPort": METRICS_PORT, "protocol": "TCP"}],
                        "resources": {
                            "requests": {"cpu": k8s.client_cpu, "memory": k8s.client_memory},
                            "limits": {"cpu": k8s.client_cpu, "memory": k8s.client_memory},
                        },
                        "volumeMounts": mounts,
                    }],
                    "volumes": volumes,
                },
            },
        },
    })
}

pub(crate) fn number_arg(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        format!("{value}")
    }
}
