//! A campaign plan plus its `[k8s]` table, checked as a whole before anything is written. Every error is
//! one line naming the file, the line and the key.

use std::ops::Range;
use std::path::Path;

use cqlbench_campaign::{ConfigPlan, Plan};
use cqlbench_cluster::JdkChoice;
use serde::Deserialize;
use toml::Spanned;

use crate::error::K8sError;
use crate::names::{is_dns1123_label, is_dns1123_subdomain, is_label_value, to_label};
use crate::quantity::{parse_bytes, parse_millicores};

/// The plan's `[k8s]` table, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct K8sSettings {
    /// Namespace of every rendered object (a DNS-1123 label).
    pub namespace: String,
    /// StorageClass of the Cassandra data volumes (a DNS-1123 subdomain).
    pub storage_class: String,
    /// Size of each node's data volume, e.g. "100Gi".
    pub storage_size: String,
    /// CPU of each Cassandra pod (requests = limits), e.g. "4".
    pub cpu: String,
    /// Memory of each Cassandra pod (requests = limits), e.g. "16Gi".
    pub memory: String,
    pub memory_bytes: u64,
    /// One rack per zone, pinned with `topology.kubernetes.io/zone` (empty: one rack, no pinning).
    pub zones: Vec<String>,
    /// The datacenter's name [default: dc1].
    pub datacenter: String,
    /// Load-generator pods per cell (the Indexed Job's completions and parallelism).
    pub client_pods: u32,
    pub client_cpu: String,
    pub client_memory: String,
    /// The cqlbench container image the Jobs run (see the repository's Dockerfile).
    pub image: String,
    /// StorageClass of the results volume, which every client pod mounts (ReadWriteMany)
    /// [default: the cluster's default class].
    pub results_storage_class: Option<String>,
    pub results_size: String,
    /// Also render a Prometheus Operator `PodMonitor` selecting the load pods' `metrics` port.
    pub pod_monitor: bool,
    /// How long each client pod keeps serving its final figures after its cell, so that one scrape
    /// sees them (`--prometheus-linger`) [default: 15s, Prometheus' default interval]; "0s" where
    /// nothing scrapes the pods.
    pub metrics_linger: String,
    /// What runs the Cassandra nodes.
    pub backend: Backend,
    /// The Cassandra image of every configuration (`statefulset` only) [default: per configuration,
    /// the one `cqlbench k8s image cassandra` builds for its version and JDK].
    pub cassandra_image: Option<String>,
}

/// What runs a configuration's Cassandra nodes on Kubernetes (the plan's `[k8s] operator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A K8ssandraCluster, which K8ssandra's operators turn into a datacenter.
    K8ssandra,
    /// A headless Service and one StatefulSet per rack, rendered by cqlbench: no operator needed.
    StatefulSet,
}

impl Backend {
    pub const NAMES: &'static str = "\"k8ssandra\" or \"statefulset\"";

    pub fn parse(text: &str) -> Option<Backend> {
        match text {
            "k8ssandra" => Some(Backend::K8ssandra),
            "statefulset" => Some(Backend::StatefulSet),
            _ => None,
        }
    }
}

/// The name `cqlbench k8s image cassandra` gives the image of a Cassandra version on a JDK.
pub fn cassandra_image_name(version: &str, jdk_major: u32) -> String {
    format!("cqlbench/cassandra:{version}-jdk{jdk_major}")
}

/// A checked plan ready to render.
#[derive(Debug, Clone)]
pub struct K8sPlan {
    pub plan: Plan,
    pub k8s: K8sSettings,
    /// Per configuration (same order as `plan.configs`): the K8ssandraCluster's name.
    pub cluster_names: Vec<String>,
    /// Per configuration: the JDK major its Cassandra pods run (the operator's image decides it for
    /// K8ssandra; the plan's `jdk`, or the version's default, for StatefulSets).
    pub jdk_majors: Vec<u32>,
    /// Per configuration: the Cassandra image of its StatefulSets (empty for K8ssandra, whose
    /// operator chooses the image).
    pub cassandra_images: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct OnlyK8s {
    k8s: Option<Spanned<RawK8s>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawK8s {
    namespace: Spanned<String>,
    storage_class: Spanned<String>,
    storage_size: Spanned<String>,
    cpu: Spanned<String>,
    memory: Spanned<String>,
    #[serde(default)]
    zones: Option<Spanned<Vec<String>>>,
    datacenter: Option<Spanned<String>>,
    client_pods: Spanned<u32>,
    client_cpu: Option<Spanned<String>>,
    client_memory: Option<Spanned<String>>,
    image: Spanned<String>,
    results_storage_class: Option<Spanned<String>>,
    results_size: Option<Spanned<String>>,
    #[serde(default)]
    pod_monitor: bool,
    metrics_linger: Option<Spanned<String>>,
    operator: Option<Spanned<String>>,
    cassandra_image: Option<Spanned<String>>,
}

struct Locator<'a> {
    path: &'a str,
    text: &'a str,
}

impl Locator<'_> {
    fn error(&self, span: Range<usize>, key: &str, message: impl Into<String>) -> K8sError {
        let line = self.text[..span.start.min(self.text.len())]
            .bytes()
            .filter(|b| *b == b'\n')
            .count()
            + 1;
        K8sError::Plan {
            path: self.path.to_string(),
            line,
            key: key.to_string(),
            message: message
                .into()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

/// Reads and checks a plan file.
pub fn load_plan(path: &Path) -> Result<K8sPlan, K8sError> {
    let text = std::fs::read_to_string(path).map_err(|source| K8sError::Io {
        context: format!("reading plan {}", path.display()),
        source,
    })?;
    parse_plan(&path.display().to_string(), &text)
}

/// Parses and checks plan text; `path` labels the errors and names the clusters (as for a campaign).
pub fn parse_plan(path: &str, text: &str) -> Result<K8sPlan, K8sError> {
    let plan = cqlbench_campaign::parse_plan_with_k8s(path, text)?;
    let at = Locator { path, text };
    let raw: OnlyK8s = toml::from_str(text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        let key = e
            .message()
            .strip_prefix("unknown field `")
            .and_then(|rest| rest.split('`').next())
            .unwrap_or("[k8s]")
            .to_string();
        at.error(span, &key, format!("in [k8s]: {}", e.message()))
    })?;
    let Some(raw) = raw.k8s else {
        return Err(at.error(
            0..0,
            "[k8s]",
            "the plan has no [k8s] table (namespace, storage-class, storage-size, cpu, memory, client-pods, image)",
        ));
    };
    let k8s = check_k8s(&at, raw.into_inner())?;
    if let cqlbench_campaign::RateMode::Slo { .. } = plan.load.mode {
        return Err(at.error(
            0..0,
            "[slo]",
            "an [slo] bisection chooses each probe from the last one's result, which fixed manifests cannot hold: use rates or [sweep]",
        ));
    }
    let mut cluster_names = Vec::new();
    let mut jdk_majors = Vec::new();
    let mut cassandra_images = Vec::new();
    for config in &plan.configs {
        let name = cluster_name(&at, config)?;
        if let Some(index) = cluster_names.iter().position(|n| n == &name) {
            return Err(at.error(
                0..0,
                "name",
                format!(
                    "configurations {:?} and {:?} both become K8ssandraCluster {name:?}",
                    plan.configs[index].name, config.name
                ),
            ));
        }
        let jdk = check_config(&at, text, config, &k8s)?;
        if k8s.backend == Backend::StatefulSet {
            cassandra_images.push(
                k8s.cassandra_image
                    .clone()
                    .unwrap_or_else(|| cassandra_image_name(&config.spec.cassandra_version, jdk)),
            );
        }
        jdk_majors.push(jdk);
        cluster_names.push(name);
    }
    Ok(K8sPlan {
        plan,
        k8s,
        cluster_names,
        jdk_majors,
        cassandra_images,
    })
}

/// The namespace, the data volumes' storage class and the results volume's: Kubernetes names.
fn check_names(at: &Locator, raw: &RawK8s) -> Result<(String, String, Option<String>), K8sError> {
    let namespace = raw.namespace.get_ref().clone();
    if !is_dns1123_label(&namespace) {
        return Err(at.error(
            raw.namespace.span(),
            "namespace",
            format!("{namespace:?} is not a DNS-1123 label (at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit)"),
        ));
    }
    let storage_class = raw.storage_class.get_ref().clone();
    if !is_dns1123_subdomain(&storage_class) {
        return Err(at.error(
            raw.storage_class.span(),
            "storage-class",
            format!("{storage_class:?} is not a DNS-1123 subdomain (lower-case letters, digits, '-' and '.')"),
        ));
    }
    let results_storage_class = match &raw.results_storage_class {
        Some(class) if !is_dns1123_subdomain(class.get_ref()) => {
            return Err(at.error(
                class.span(),
                "results-storage-class",
                format!(
                    "{:?} is not a DNS-1123 subdomain (lower-case letters, digits, '-' and '.')",
                    class.get_ref()
                ),
            ))
        }
        other => other.as_ref().map(|c| c.get_ref().clone()),
    };
    Ok((namespace, storage_class, results_storage_class))
}

/// Zones become racks: label values, each once.
fn check_zones(at: &Locator, raw: &RawK8s) -> Result<Vec<String>, K8sError> {
    let zones = raw
        .zones
        .as_ref()
        .map_or_else(Vec::new, |z| z.get_ref().clone());
    if let Some(spanned) = &raw.zones {
        if let Some(bad) = zones.iter().find(|z| z.is_empty() || !is_label_value(z)) {
            return Err(at.error(
                spanned.span(),
                "zones",
                format!(
                    "zone {bad:?} is not a Kubernetes label value (letters, digits, '-', '_', '.')"
                ),
            ));
        }
        if let Some(dup) = zones
            .iter()
            .enumerate()
            .find(|(i, z)| zones[..*i].contains(*z))
        {
            return Err(at.error(
                spanned.span(),
                "zones",
                format!("zone {:?} is listed twice", dup.1),
            ));
        }
    }
    Ok(zones)
}

/// The datacenter's name is part of the pods' names.
fn check_datacenter(at: &Locator, raw: &RawK8s) -> Result<String, K8sError> {
    let datacenter = raw
        .datacenter
        .as_ref()
        .map_or("dc1".to_string(), |d| d.get_ref().clone());
    if !is_dns1123_label(&datacenter) || datacenter.len() > 20 {
        let span = raw.datacenter.as_ref().map_or(0..0, Spanned::span);
        return Err(at.error(
            span,
            "datacenter",
            format!("{datacenter:?} is not a DNS-1123 label of at most 20 characters (it is part of the pods' names)"),
        ));
    }
    Ok(datacenter)
}

fn check_k8s(at: &Locator, raw: RawK8s) -> Result<K8sSettings, K8sError> {
    let (namespace, storage_class, results_storage_class) = check_names(at, &raw)?;
    let size = |value: &Spanned<String>, key: &str| -> Result<u64, K8sError> {
        parse_bytes(value.get_ref()).map_err(|e| at.error(value.span(), key, e))
    };
    let cpu = |value: &Spanned<String>, key: &str| -> Result<u64, K8sError> {
        parse_millicores(value.get_ref()).map_err(|e| at.error(value.span(), key, e))
    };
    size(&raw.storage_size, "storage-size")?;
    let memory_bytes = size(&raw.memory, "memory")?;
    cpu(&raw.cpu, "cpu")?;
    let client_cpu = match &raw.client_cpu {
        Some(value) => cpu(value, "client-cpu").map(|_| value.get_ref().clone())?,
        None => "1".to_string(),
    };
    let client_memory = match &raw.client_memory {
        Some(value) => size(value, "client-memory").map(|_| value.get_ref().clone())?,
        None => "1Gi".to_string(),
    };
    let results_size = match &raw.results_size {
        Some(value) => size(value, "results-size").map(|_| value.get_ref().clone())?,
        None => "10Gi".to_string(),
    };
    let metrics_linger = match &raw.metrics_linger {
        Some(value) => cqlbench_units::parse_duration(value.get_ref())
            .map(|_| value.get_ref().clone())
            .map_err(|e| at.error(value.span(), "metrics-linger", e.to_string()))?,
        None => "15s".to_string(),
    };
    let zones = check_zones(at, &raw)?;
    let datacenter = check_datacenter(at, &raw)?;
    let client_pods = *raw.client_pods.get_ref();
    if client_pods == 0 || client_pods > 1000 {
        return Err(at.error(
            raw.client_pods.span(),
            "client-pods",
            format!("{client_pods} client pods: choose 1 to 1000"),
        ));
    }
    let image = raw.image.get_ref().trim().to_string();
    if image.is_empty() || image.chars().any(|c| c.is_whitespace()) {
        return Err(at.error(raw.image.span(), "image", "the cqlbench image needs a name without spaces, e.g. \"registry.example/cqlbench:0.1.0\""));
    }
    let backend = check_backend(at, &raw)?;
    Ok(K8sSettings {
        namespace,
        storage_class,
        storage_size: raw.storage_size.into_inner(),
        cpu: raw.cpu.into_inner(),
        memory: raw.memory.get_ref().clone(),
        memory_bytes,
        zones,
        datacenter,
        client_pods,
        client_cpu,
        client_memory,
        image,
        results_storage_class,
        results_size,
        pod_monitor: raw.pod_monitor,
        metrics_linger,
        backend,
        cassandra_image: raw.cassandra_image.map(Spanned::into_inner),
    })
}

/// `operator` names the backend; `cassandra-image` only means something to StatefulSets.
fn check_backend(at: &Locator, raw: &RawK8s) -> Result<Backend, K8sError> {
    let backend = match &raw.operator {
        None => Backend::K8ssandra,
        Some(operator) => Backend::parse(operator.get_ref()).ok_or_else(|| {
            at.error(
                operator.span(),
                "operator",
                format!(
                    "unknown backend {:?}: choose {}",
                    operator.get_ref(),
                    Backend::NAMES
                ),
            )
        })?,
    };
    if let Some(image) = &raw.cassandra_image {
        let name = image.get_ref();
        if backend == Backend::K8ssandra {
            return Err(at.error(
                image.span(),
                "cassandra-image",
                "K8ssandra's operator chooses the Cassandra image: cassandra-image needs operator = \"statefulset\"",
            ));
        }
        if name.trim().is_empty() || name.chars().any(char::is_whitespace) {
            return Err(at.error(
                image.span(),
                "cassandra-image",
                "the Cassandra image needs a name without spaces, e.g. \"cassandra:5.0.5\"",
            ));
        }
    }
    Ok(backend)
}

/// The K8ssandraCluster's name: the configuration's cluster name (`<plan>-<n>`) as a DNS-1123 label, short
/// enough for the operator's derived names (`<cluster>-<dc>-<rack>-sts-<n>`, `<cluster>-<dc>-service`).
fn cluster_name(at: &Locator, config: &ConfigPlan) -> Result<String, K8sError> {
    let name = to_label(&config.spec.name);
    if name.is_empty() || name.len() > 30 || !is_dns1123_label(&name) {
        return Err(at.error(
            0..0,
            "name",
            format!(
                "configuration {:?}: cluster name {:?} cannot become a Kubernetes name of at most 30 characters: set [cluster] name = \"…\" (letters, digits, '-')",
                config.name, config.spec.name
            ),
        ));
    }
    Ok(name)
}

/// The operator's image for a Cassandra version decides the JDK; cqlbench cannot choose another there.
fn operator_jdk(
    at: &Locator,
    line: Range<usize>,
    config: &ConfigPlan,
    version: &cqlbench_cluster::CassandraVersion,
) -> Result<u32, K8sError> {
    let image_jdk = version.default_jdk();
    let asked = match &config.spec.jdk {
        JdkChoice::Auto => return Ok(image_jdk),
        JdkChoice::Major(major) if *major == image_jdk => return Ok(image_jdk),
        JdkChoice::Major(major) => major.to_string(),
        JdkChoice::Path(path) => format!("{:?}", path.display().to_string()),
    };
    Err(at.error(
        line,
        "jdk",
        format!(
            "configuration {:?}: K8ssandra's image for Cassandra {} runs JDK {image_jdk}; jdk = {asked} cannot be honoured there (leave jdk out, or use operator = \"statefulset\")",
            config.name, version.raw
        ),
    ))
}

/// A StatefulSet's image is built for the configuration's JDK: any pair `cluster up` starts, named by
/// its major (a JDK directory of this machine means nothing in a pod).
fn statefulset_jdk(
    at: &Locator,
    line: Range<usize>,
    config: &ConfigPlan,
    version: &cqlbench_cluster::CassandraVersion,
) -> Result<u32, K8sError> {
    let major = match &config.spec.jdk {
        JdkChoice::Auto => return Ok(version.default_jdk()),
        JdkChoice::Major(major) => *major,
        JdkChoice::Path(path) => {
            return Err(at.error(
                line,
                "jdk",
                format!(
                    "configuration {:?}: jdk = {:?} is a directory of this machine; a pod's image names its JDK by major (jdk = 17)",
                    config.name,
                    path.display().to_string()
                ),
            ))
        }
    };
    // As `cluster up` decides: force-jdk lets an unverified pair through, never an impossible one.
    let checked = if config.spec.force_jdk {
        version.check_possible(major)
    } else {
        version.check_jdk(major)
    };
    checked.map_err(|e| at.error(line, "jdk", format!("configuration {:?}: {e}", config.name)))?;
    Ok(major)
}

/// Checks what depends on both a configuration and `[k8s]`; returns the JDK major its pods run.
fn check_config(
    at: &Locator,
    text: &str,
    config: &ConfigPlan,
    k8s: &K8sSettings,
) -> Result<u32, K8sError> {
    let spec = &config.spec;
    let line_of = |key: &str| -> Range<usize> {
        // The [k8s] key's own line when it is there, else the top of the file.
        let needle = format!("\n{key}");
        text.find(&needle).map_or(0..0, |i| i + 1..i + 1)
    };
    let version = spec
        .version()
        .map_err(|e| at.error(0..0, "cassandra", e.to_string()))?;
    if version.is_3_11() {
        // The rendered GC logging and collector options are JDK 9+'s; 3.11's images run JDK 8.
        return Err(at.error(
            line_of("cassandra"),
            "cassandra",
            format!(
                "configuration {:?}: Cassandra {} runs on JDK 8, and k8s runs render JDK 9+ GC logging: use Cassandra 4.0 or newer on Kubernetes (3.11 runs locally with `cqlbench campaign`)",
                config.name, version.raw
            ),
        ));
    }
    let image_jdk = match k8s.backend {
        Backend::K8ssandra => operator_jdk(at, line_of("jdk"), config, &version)?,
        Backend::StatefulSet => statefulset_jdk(at, line_of("jdk"), config, &version)?,
    };
    if k8s.backend == Backend::StatefulSet {
        // The official image's cassandra-env.sh splits JVM_EXTRA_OPTS at spaces.
        if let Some(option) = spec
            .jvm_opts
            .iter()
            .find(|o| o.contains(char::is_whitespace))
        {
            return Err(at.error(
                line_of("jvm-opts"),
                "jvm-opts",
                format!(
                    "configuration {:?}: JVM option {option:?} holds a space, which JVM_EXTRA_OPTS cannot carry",
                    config.name
                ),
            ));
        }
    }
    if spec.heap_bytes >= k8s.memory_bytes {
        return Err(at.error(
            line_of("memory"),
            "memory",
            format!(
                "configuration {:?}: heap {} does not fit the Cassandra pod's memory limit {} (the JVM needs memory beyond its heap too): raise memory or lower heap",
                config.name,
                cqlbench_units::format_jvm_size(spec.heap_bytes),
                k8s.memory
            ),
        ));
    }
    if !k8s.zones.is_empty() && k8s.zones.len() > spec.nodes {
        return Err(at.error(
            line_of("zones"),
            "zones",
            format!(
                "{} zones (one rack each) for {} nodes would leave racks empty",
                k8s.zones.len(),
                spec.nodes
            ),
        ));
    }
    cqlbench_cluster::gc::render(&spec.gc_settings(), image_jdk).map_err(|e| {
        at.error(
            line_of("gc"),
            "gc",
            format!("configuration {:?}: {e}", config.name),
        )
    })?;
    Ok(image_jdk)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) const GOOD: &str = r#"
[cluster]
nodes = 3
cassandra = "5.0.9"
heap = "8G"

[[config]]
name = "G1 jdk17"
gc = "g1"

[[config]]
name = "ZGC jdk17"
gc = "zgc"

[load]
workload = "Tabular"
args = "-r 0.5 -t 4 -c 75 --populate 1000"
duration = "10m"

[sweep]
fractions = [0.35]

[k8s]
namespace = "bench"
storage-class = "premium-rwo"
storage-size = "100Gi"
cpu = "4"
memory = "16Gi"
zones = ["z1", "z2", "z3"]
client-pods = 2
image = "registry.example/cqlbench:0.1.0"
"#;

    fn error_of(text: &str) -> String {
        let error = parse_plan("p.toml", text).unwrap_err().to_string();
        assert!(!error.contains('\n'), "{error}");
        error
    }

    #[test]
    fn a_good_plan_names_clusters_after_the_file() {
        let plan = parse_plan("k8s-gc.toml", GOOD).unwrap();
        assert_eq!(plan.cluster_names, ["k8s-gc-1", "k8s-gc-2"]);
        assert_eq!(
            plan.jdk_majors,
            [17, 17],
            "K8ssandra's 5.0 image runs JDK 17"
        );
        assert_eq!(plan.k8s.memory_bytes, 16 << 30);
        assert_eq!(
            plan.k8s.metrics_linger, "15s",
            "one scrape at Prometheus' default interval"
        );
        assert_eq!(plan.k8s.zones, ["z1", "z2", "z3"]);
        assert_eq!(
            (plan.k8s.datacenter.as_str(), plan.k8s.client_cpu.as_str()),
            ("dc1", "1")
        );
    }

    /// Each bad plan is refused with one line naming the line and the key.
    #[test]
    fn bad_plans_name_key_and_line() {
        let cases: &[(&str, &str, &str, &str)] = &[
            ("unknown GC", "gc = \"zgc\"", "gc = \"zgcc\"", "line 13, `gc`: unknown collector \"zgcc\""),
            (
                "heap above the memory limit",
                "memory = \"16Gi\"",
                "memory = \"8Gi\"",
                "line 28, `memory`: configuration \"G1 jdk17\": heap 8G does not fit the Cassandra pod's memory limit 8Gi",
            ),
            (
                "heap far above the memory limit",
                "heap = \"8G\"",
                "heap = \"32G\"",
                "`memory`: configuration \"G1 jdk17\": heap 32G does not fit",
            ),
            (
                "namespace not DNS-1123",
                "namespace = \"bench\"",
                "namespace = \"Bench_1\"",
                "line 24, `namespace`: \"Bench_1\" is not a DNS-1123 label",
            ),
            (
                "namespace too long",
                "namespace = \"bench\"",
                &format!("namespace = \"{}\"", "b".repeat(64)),
                "line 24, `namespace`",
            ),
            (
                "storage class not DNS-1123",
                "storage-class = \"premium-rwo\"",
                "storage-class = \"Premium RWO\"",
                "line 25, `storage-class`: \"Premium RWO\" is not a DNS-1123 subdomain",
            ),
            (
                "unknown key in [k8s]",
                "cpu = \"4\"",
                "cpu = \"4\"\nnode-pool = \"big\"",
                "line 28, `node-pool`: in [k8s]: unknown field `node-pool`",
            ),
            ("bad memory quantity", "memory = \"16Gi\"", "memory = \"16GB\"", "line 28, `memory`"),
            ("bad cpu", "cpu = \"4\"", "cpu = \"four\"", "line 27, `cpu`"),
            ("zero client pods", "client-pods = 2", "client-pods = 0", "line 30, `client-pods`"),
            (
                "a linger that is no duration",
                "cpu = \"4\"",
                "cpu = \"4\"\nmetrics-linger = \"soon\"",
                "line 28, `metrics-linger`",
            ),
            ("zone not a label value", "\"z3\"", "\"z 3\"", "line 29, `zones`"),
            ("more zones than nodes", "\"z3\"]", "\"z3\", \"z4\"]", "`zones`: 4 zones"),
            (
                "a JDK the image does not run",
                "heap = \"8G\"",
                "heap = \"8G\"\njdk = 21",
                "`jdk`: configuration \"G1 jdk17\": K8ssandra's image for Cassandra 5.0.9 runs JDK 17",
            ),
            ("missing key", "image = \"registry.example/cqlbench:0.1.0\"\n", "", "missing field `image`"),
        ];
        for (what, from, to, expected) in cases {
            assert!(GOOD.contains(from), "{what}");
            let error = error_of(&GOOD.replacen(from, to, 1));
            assert!(error.contains(expected), "{what}: {error}");
        }
    }

    /// A JDK of this machine (the campaign checks a `jdk` directory before the backend sees it).
    fn a_jdk_home() -> std::path::PathBuf {
        std::fs::read_dir("/usr/lib/jvm")
            .expect("/usr/lib/jvm")
            .map(|entry| entry.unwrap().path())
            .find(|path| path.join("bin/java").is_file())
            .expect("a JDK in /usr/lib/jvm")
    }

    fn statefulset(extra: &str) -> String {
        GOOD.replace(
            "[k8s]\n",
            &format!("[k8s]\noperator = \"statefulset\"\n{extra}"),
        )
    }

    #[test]
    fn the_statefulset_backend_takes_the_plans_jdk_and_names_its_image() {
        let plan = parse_plan("k8s-gc.toml", &statefulset("")).unwrap();
        assert_eq!(plan.k8s.backend, Backend::StatefulSet);
        assert_eq!(
            plan.cassandra_images,
            [
                "cqlbench/cassandra:5.0.9-jdk17",
                "cqlbench/cassandra:5.0.9-jdk17"
            ]
        );
        let on_21 = statefulset("").replace("heap = \"8G\"", "heap = \"8G\"\njdk = 21");
        let plan = parse_plan("k8s-gc.toml", &on_21).unwrap();
        assert_eq!(plan.jdk_majors, [21, 21]);
        assert_eq!(plan.cassandra_images[0], "cqlbench/cassandra:5.0.9-jdk21");
        let official = statefulset("cassandra-image = \"cassandra:5.0.5\"\n");
        let plan = parse_plan("k8s-gc.toml", &official).unwrap();
        assert_eq!(
            plan.cassandra_images,
            ["cassandra:5.0.5", "cassandra:5.0.5"]
        );
        let k8ssandra = parse_plan("k8s-gc.toml", GOOD).unwrap();
        assert_eq!(k8ssandra.k8s.backend, Backend::K8ssandra);
        assert!(k8ssandra.cassandra_images.is_empty());
    }

    #[test]
    fn backend_refusals_name_key_and_line() {
        let cases: &[(&str, String, &str)] = &[
            (
                "unknown backend",
                GOOD.replace("[k8s]\n", "[k8s]\noperator = \"helm\"\n"),
                "line 24, `operator`: unknown backend \"helm\": choose \"k8ssandra\" or \"statefulset\"",
            ),
            (
                "an image K8ssandra would ignore",
                GOOD.replace("[k8s]\n", "[k8s]\ncassandra-image = \"cassandra:5.0.5\"\n"),
                "line 24, `cassandra-image`: K8ssandra's operator chooses the Cassandra image",
            ),
            (
                "a pair cluster up refuses",
                statefulset("").replace("heap = \"8G\"", "heap = \"8G\"\njdk = 11"),
                "line 6, `jdk`: configuration \"G1 jdk17\": Cassandra 5.0.9 is not supported on JDK 11: use JDK 17 or JDK 21 or JDK 25",
            ),
            (
                "K8ssandra's image JDK",
                GOOD.replace("heap = \"8G\"", "heap = \"8G\"\njdk = 21"),
                "(leave jdk out, or use operator = \"statefulset\")",
            ),
            (
                "a JDK directory",
                statefulset("").replace(
                    "heap = \"8G\"",
                    &format!("heap = \"8G\"\njdk = {:?}", a_jdk_home().display().to_string()),
                ),
                "is a directory of this machine; a pod's image names its JDK by major",
            ),
            (
                "a JVM option with a space",
                statefulset("").replace(
                    "heap = \"8G\"",
                    "heap = \"8G\"\njvm-opts = [\"-XX:OnError=echo a\"]",
                ),
                "`jvm-opts`: configuration \"G1 jdk17\": JVM option \"-XX:OnError=echo a\" holds a space",
            ),
            (
                "Cassandra 3.11",
                statefulset("")
                    .replace("5.0.9", "3.11.19")
                    .replace("gc = \"zgc\"", "gc = \"cms\""),
                "`cassandra`: configuration \"G1 jdk17\": Cassandra 3.11.19 runs on JDK 8",
            ),
        ];
        for (what, text, expected) in cases {
            let error = error_of(text);
            assert!(error.contains(expected), "{what}: {error}");
        }
    }

    #[test]
    fn a_plan_without_k8s_or_with_slo_is_refused() {
        let start = GOOD.find("[k8s]").unwrap();
        assert!(error_of(&GOOD[..start]).contains("no [k8s] table"));
        let slo = GOOD.replace(
            "[sweep]\nfractions = [0.35]\n",
            "[slo]\np99-ms = 10\nlow = 1000\nhigh = 9000\n",
        );
        assert!(error_of(&slo).contains("`[slo]`"), "{}", error_of(&slo));
    }
}
