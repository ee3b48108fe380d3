//! What a campaign keeps of each node for one cell, in `<cell>/node<i>/`: `figures.json`
//! ([`NodeFigures`]), `gc-analysis.json` ([`GcAnalysis`]), `gc.log` (the window's lines) and
//! `timeline.csv` (see [`crate::timeline`]); and `pod.json`, what `k8s run` records of a pod.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::version::{json_file, read_json, unversioned, Upgrade, FORMAT_VERSION};
use crate::ResultsError;

pub const FIGURES_FILE: &str = "figures.json";
pub const GC_ANALYSIS_FILE: &str = "gc-analysis.json";
pub const POD_FILE: &str = "pod.json";

/// A time window in seconds since the epoch (the clock of the GC log decorators).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Window {
    pub start_unix_s: f64,
    pub end_unix_s: f64,
}

impl Window {
    pub fn contains(&self, t: f64) -> bool {
        t >= self.start_unix_s && t <= self.end_unix_s
    }

    pub fn length_s(&self) -> f64 {
        self.end_unix_s - self.start_unix_s
    }
}

/// Everything measured on one node for one cell (`node<i>/figures.json`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeFigures {
    #[serde(default = "unversioned")]
    pub version: u32,
    #[serde(default)]
    pub node: usize,
    /// The node's address (a pod's IP on Kubernetes).
    #[serde(default)]
    pub address: String,
    #[serde(default)]
    pub pid: Option<i32>,
    /// The collector the live JVM reported at start-up (`jcmd VM.flags`), or that its GC log names:
    /// a window's GC log lines rarely include the `Using …` line that names it.
    #[serde(default)]
    pub collector: Option<String>,
    #[serde(default)]
    pub window: Window,
    /// CPU seconds of the whole JVM process over the window.
    #[serde(default)]
    pub process_cpu_s: Option<f64>,
    /// Process CPU per successful operation of the cell (all nodes' operations: each node's share of
    /// the cluster's work is not known to the client), in milliseconds.
    #[serde(default)]
    pub cpu_ms_per_op: Option<f64>,
    #[serde(default)]
    pub gc_threads_cpu_s: Option<f64>,
    /// GC threads' CPU / process CPU.
    #[serde(default)]
    pub gc_threads_cpu_share: Option<f64>,
    /// CPU of the `VM Thread` (safepoint operations, including GC's serial parts).
    #[serde(default)]
    pub vm_thread_cpu_s: Option<f64>,
    #[serde(default)]
    pub gc_log_lines: usize,
    #[serde(default)]
    pub flushed_bytes: f64,
    #[serde(default)]
    pub compacted_bytes: Option<f64>,
    /// compacted / flushed; `null` when nothing was flushed in the window or the history was unreadable.
    #[serde(default)]
    pub write_amplification: Option<f64>,
    #[serde(default)]
    pub notes: Vec<String>,
}

/// The start of a node's note that its window's GC log lines could not be analysed (the rest is the
/// analysis' one-line error).
pub const GC_ANALYSIS_FAILED_NOTE: &str = "GC analysis: ";
/// A node's note that its GC log had no line in the cell's window.
pub const NO_GC_LINES_NOTE: &str = "no GC log line in the window";

impl NodeFigures {
    /// Why this node's window has no GC analysis, when the campaign noted a reason: its GC log had no
    /// line in the window, or the lines were not a GC log it could read.
    pub fn gc_analysis_missing(&self) -> Option<&str> {
        self.notes
            .iter()
            .find(|n| n.starts_with(GC_ANALYSIS_FAILED_NOTE) || n.as_str() == NO_GC_LINES_NOTE)
            .map(String::as_str)
    }

    /// The address without its port: `127.0.0.1:9042` → `127.0.0.1`.
    pub fn ip(&self) -> String {
        let address = self.address.as_str();
        address
            .rsplit_once(':')
            .filter(|(host, _)| !host.contains(':') || host.starts_with('['))
            .map_or(address, |(host, _)| host)
            .to_string()
    }
}

/// `node<i>/gc-analysis.json`: the analysis of the node's GC log lines of the cell's window, as
/// `cqlbench gc analyze --json` prints it plus `version`; `null` when the window had no GC log line
/// or the analysis failed (the node's `figures.json` notes say why).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GcAnalysis {
    pub report: Option<cqlbench_gclog::Report>,
}

#[derive(Serialize)]
struct StoredRef<'a> {
    version: u32,
    #[serde(flatten)]
    report: &'a cqlbench_gclog::Report,
}

#[derive(Deserialize)]
struct Stored {
    #[serde(flatten)]
    report: cqlbench_gclog::Report,
}

impl Serialize for GcAnalysis {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.report {
            None => serializer.serialize_none(),
            Some(report) => StoredRef {
                version: FORMAT_VERSION,
                report,
            }
            .serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for GcAnalysis {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(GcAnalysis {
            report: Option::<Stored>::deserialize(deserializer)?.map(|s| s.report),
        })
    }
}

impl Upgrade for GcAnalysis {
    fn upgrade(&mut self, _version: u32) {}
}

impl GcAnalysis {
    /// Reads `NODE_DIR/gc-analysis.json`.
    pub fn read(node_dir: &Path) -> Result<GcAnalysis, ResultsError> {
        read_json(&node_dir.join(GC_ANALYSIS_FILE), "GC analysis")
    }

    pub fn write(&self, node_dir: &Path) -> Result<(), ResultsError> {
        crate::write_json(&node_dir.join(GC_ANALYSIS_FILE), self)
    }
}

/// `pod.json`: what `k8s run` learnt of a Cassandra pod while collecting its GC log.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PodRecord {
    #[serde(default = "unversioned")]
    pub version: u32,
    pub pod: String,
    #[serde(default)]
    pub ip: String,
    /// The collector its GC log's `Using …` line names.
    #[serde(default)]
    pub collector: Option<String>,
}

json_file!(NodeFigures, FIGURES_FILE, "cqlbench node figures file");
json_file!(PodRecord, POD_FILE, "cqlbench pod record");

/// A cell's `node*` directories that hold `file` (what a campaign collected per node), in order.
pub fn node_dirs(cell_dir: &Path, file: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(cell_dir) else {
        return Vec::new();
    };
    let mut dirs: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("node"))
                && p.join(file).is_file()
        })
        .collect();
    dirs.sort();
    dirs
}
