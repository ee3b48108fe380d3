//! `probe.json`: what the machine can do, measured by the real sysbench and fio (`cqlbench probe`,
//! and the quick probe a campaign takes first, kept in its `environment.json`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::campaign::DiskRecord;
use crate::version::{json_file, unversioned};

pub const PROBE_FILE: &str = "probe.json";

/// The machine's figures, named after the tool and its parameters, e.g.
/// `sysbench.cpu.threads_1.events_per_s` or `fio.compaction.read.lat_p99_ms`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    #[serde(default = "unversioned")]
    pub version: u32,
    pub taken_at_unix_s: f64,
    /// The quick probe (`--quick`, a campaign's): shorter runs and a smaller scratch file.
    pub quick: bool,
    /// Wall time of the whole probe (s).
    pub seconds: f64,
    pub cpu_model: Option<String>,
    pub cores: usize,
    pub memory_kib: Option<u64>,
    pub kernel: String,
    /// Where fio's scratch files were (and were removed again), and its filesystem.
    pub data_dir: PathBuf,
    pub disk: Option<DiskRecord>,
    /// Each tool's version line and where it came from (the system's, or Debian's package in the
    /// cache).
    pub tools: BTreeMap<String, ToolRecord>,
    pub figures: BTreeMap<String, f64>,
    /// What a reader must know to compare figures, e.g. that the filesystem refused direct I/O.
    #[serde(default)]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolRecord {
    pub version: String,
    pub path: PathBuf,
    /// The `LD_LIBRARY_PATH` it ran with (Debian's libraries unpacked beside it), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library_path: Option<String>,
}

json_file!(Probe, PROBE_FILE, "probe");
