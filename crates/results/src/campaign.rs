//! What a campaign directory holds besides its cells: `<config>/config.json` (the configuration's
//! name and cluster), `<config>/jvm-flags.json` (the flags the nodes really ran with),
//! `environment.json` (the machine and software), and a Kubernetes run's `briefs.json` per Job.

use std::path::PathBuf;

use cqlbench_cluster::compat::SecurityManagerShim;
use cqlbench_cluster::{ClusterSpec, Jdk};
use serde::{Deserialize, Deserializer, Serialize};

use crate::summary::Brief;
use crate::version::{json_file, unversioned, FORMAT_VERSION};

pub const CONFIG_FILE: &str = "config.json";
pub const JVM_FLAGS_FILE: &str = "jvm-flags.json";
pub const ENVIRONMENT_FILE: &str = "environment.json";
pub const BRIEFS_FILE: &str = "briefs.json";

/// A cluster spec written by another cqlbench may not fit today's type: the name still reads.
fn lenient_spec<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ClusterSpec>, D::Error> {
    let buffered = serde_json::Value::deserialize(d)?;
    Ok(serde_json::from_value(buffered).ok())
}

/// `<config>/config.json`: the configuration's name as the plan gives it (the report's row label).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfigRecord {
    #[serde(default = "unversioned")]
    pub version: u32,
    pub name: String,
    #[serde(default, deserialize_with = "lenient_spec")]
    pub spec: Option<ClusterSpec>,
    /// The configuration's K8ssandraCluster, on Kubernetes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k8ssandra_cluster: Option<String>,
}

impl ConfigRecord {
    pub fn new(name: &str, spec: &ClusterSpec) -> ConfigRecord {
        ConfigRecord {
            version: FORMAT_VERSION,
            name: name.to_string(),
            spec: Some(spec.clone()),
            k8ssandra_cluster: None,
        }
    }
}

/// One node's flags in `jvm-flags.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeFlags {
    pub node: usize,
    pub address: String,
    pub effective_collector: Option<String>,
    pub effective_jvm_flags: Vec<String>,
    pub jvm_args: Vec<String>,
}

/// `<config>/jvm-flags.json`: the JVM flags every node of a configuration really ran with (from `jcmd
/// VM.flags`), and the Security Manager shim when the nodes ran with it (`null` without).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JvmFlags {
    #[serde(default = "unversioned")]
    pub version: u32,
    pub cluster: String,
    pub spec: ClusterSpec,
    pub jdk: Jdk,
    pub security_manager_shim: Option<SecurityManagerShim>,
    pub nodes: Vec<NodeFlags>,
}

/// The filesystem a directory is on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskRecord {
    pub path: PathBuf,
    pub device: String,
    pub mount: String,
    pub filesystem: String,
    /// What the block device says; `null` when it does not say.
    pub rotational: Option<bool>,
    pub size_bytes: Option<u64>,
    pub free_bytes: Option<u64>,
}

/// Where results and clusters are written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Disks {
    pub results: Option<DiskRecord>,
    pub clusters: Option<DiskRecord>,
}

/// A JDK found on the machine, with `java -version`'s banner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FoundJdk {
    pub major: u32,
    pub version: String,
    pub build: Option<Vec<String>>,
    pub home: PathBuf,
}

/// A configuration of the plan, with its directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvironmentConfig {
    pub name: String,
    pub directory: String,
    pub spec: ClusterSpec,
}

/// `environment.json`: everything about the machine and the software that a reader of a campaign's
/// results needs to reproduce them, or to distrust them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    #[serde(default = "unversioned")]
    pub version: u32,
    pub cqlbench_version: String,
    pub recorded_at_unix_s: f64,
    pub cpu_model: Option<String>,
    pub cores: Option<usize>,
    pub memory_kib: Option<u64>,
    pub kernel: String,
    pub kernel_build: String,
    pub disk: Disks,
    pub jdks_found: Vec<FoundJdk>,
    pub configs: Vec<EnvironmentConfig>,
    pub workload: String,
    pub load_args: Vec<String>,
    /// The plan's text.
    pub plan: String,
    /// The quick machine probe taken before the first cell (`null`: `--no-probe`).
    #[serde(default)]
    pub probe: Option<crate::Probe>,
    /// The plan's `[cost]` prices (`null`: none given).
    #[serde(default)]
    pub cost: Option<Cost>,
}

/// A plan's `[cost]`: the prices that turn throughput into seed 001's price/performance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Cost {
    /// The price of one node for an hour.
    pub node_hourly: f64,
    /// The price of one load client for an hour.
    #[serde(default)]
    pub client_hourly: Option<f64>,
    /// A fixed monthly fee for the cluster (seed 001's managed Kubernetes control plane).
    #[serde(default)]
    pub cluster_monthly: Option<f64>,
    #[serde(default = "usd")]
    pub currency: String,
}

fn usd() -> String {
    "USD".to_string()
}

/// What a doubtful cell set aside by `campaign --retry-doubtful` has after its own directory name
/// (`400.doubtful-1`): kept beside the cell run again, and no cell of the report.
pub const SET_ASIDE: &str = ".doubtful-";

/// Whether a directory name is a set-aside doubtful cell.
pub fn is_set_aside(name: &str) -> bool {
    name.contains(SET_ASIDE)
}

/// The subdirectories of a campaign directory (or of one of its configurations or rates) that hold
/// results, sorted: hidden ones (cells being built), temporary ones and set-aside doubtful cells are
/// left out.
pub fn result_subdirectories(dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(dir)?.flatten() {
        let path = entry.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let hidden = name.starts_with('.') || name.ends_with(".tmp") || name.contains(".tmp-");
        if !hidden && !is_set_aside(&name) && path.is_dir() {
            dirs.push(path);
        }
    }
    dirs.sort();
    Ok(dirs)
}

/// Hours in a month, as cloud price lists count them.
pub const HOURS_PER_MONTH: f64 = 730.0;

impl Cost {
    /// The price of an hour of `nodes` nodes and `clients` clients, the monthly fee spread over
    /// its hours.
    pub fn hourly(&self, nodes: usize, clients: u64) -> f64 {
        nodes as f64 * self.node_hourly
            + clients as f64 * self.client_hourly.unwrap_or(0.0)
            + self.cluster_monthly.unwrap_or(0.0) / HOURS_PER_MONTH
    }

    /// The first price that is negative or not finite, by its key.
    pub fn invalid_price(&self) -> Option<(&'static str, f64)> {
        [
            ("node-hourly", Some(self.node_hourly)),
            ("client-hourly", self.client_hourly),
            ("cluster-monthly", self.cluster_monthly),
        ]
        .into_iter()
        .find_map(|(key, value)| {
            value
                .filter(|v| !v.is_finite() || *v < 0.0)
                .map(|v| (key, v))
        })
    }
}

/// `raw/<cluster>/<cell>/briefs.json` of a Kubernetes run: a load Job's rate and its clients' briefs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobBriefs {
    #[serde(default = "unversioned")]
    pub version: u32,
    pub job: String,
    /// The rate the Job was given (`null`: unthrottled).
    pub rate: Option<f64>,
    /// The clients' successful operations per second, added up.
    pub achieved_rate: f64,
    pub briefs: Vec<Brief>,
}

json_file!(ConfigRecord, CONFIG_FILE, "cqlbench configuration record");
json_file!(JvmFlags, JVM_FLAGS_FILE, "cqlbench JVM flags record");
json_file!(Environment, ENVIRONMENT_FILE, "cqlbench environment record");
json_file!(JobBriefs, BRIEFS_FILE, "cqlbench Job briefs record");
