//! The cluster state file: one JSON document in the cluster's directory, rewritten after every change.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::compat::SecurityManagerShim;
use crate::error::{ClusterError, IoContext, Result};
use crate::home::Home;
use crate::jdk::Jdk;
use crate::process::{ProcessId, ProcessState, StopTarget};
use crate::spec::ClusterSpec;

pub const STATE_FILE: &str = "cluster.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterState {
    pub name: String,
    pub dir: PathBuf,
    /// What the cluster was started with (version, JDK choice, GC, heap, options).
    pub spec: ClusterSpec,
    /// The JDK actually used.
    pub jdk: Jdk,
    /// Set when the nodes run with cqlbench's Security Manager shim (Cassandra 5.0/6.0 on JDK 24+).
    #[serde(default)]
    pub security_manager_shim: Option<SecurityManagerShim>,
    pub nodes: Vec<NodeState>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeState {
    /// 1-based, as in `--node N`.
    pub index: usize,
    pub address: Ipv4Addr,
    pub native_port: u16,
    pub storage_port: u16,
    pub jmx_port: u16,
    /// The PID of the node's JVM while cqlbench believes it runs.
    pub pid: Option<i32>,
    /// When that process started (clock ticks after boot), so a reused PID is never taken for the
    /// node. Absent in state files of earlier versions: the PID is then identified by its command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid_start_ticks: Option<u64>,
    pub dir: PathBuf,
    pub system_log: PathBuf,
    pub stdout_log: PathBuf,
    pub gc_log: PathBuf,
    pub tokens: Vec<i64>,
    /// The datacenter and rack cqlbench configured for the node (`--dcs`/`--racks`); absent without them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datacenter: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rack: Option<String>,
    /// The `java` arguments the node was started with.
    pub jvm_args: Vec<String>,
    /// Flags the live JVM reported (`jcmd PID VM.flags`): proof of the collector and heap that ran.
    pub effective_jvm_flags: Vec<String>,
    /// The collector named by the effective flags, e.g. `UseShenandoahGC`.
    pub effective_collector: Option<String>,
}

impl NodeState {
    pub fn cql_address(&self) -> SocketAddr {
        SocketAddr::from((self.address, self.native_port))
    }

    /// The node's JVM, if cqlbench recorded one and it is still that process.
    pub fn process(&self) -> Option<ProcessId> {
        let pid = self.pid?;
        match self.pid_start_ticks {
            Some(start_ticks) => Some(ProcessId { pid, start_ticks }),
            None => ProcessId::with_marker(pid, &self.dir.to_string_lossy()),
        }
    }

    pub fn set_process(&mut self, process: Option<ProcessId>) {
        self.pid = process.map(|p| p.pid);
        self.pid_start_ticks = process.map(|p| p.start_ticks);
    }

    pub fn process_state(&self) -> ProcessState {
        self.process()
            .map_or(ProcessState::Gone, |process| process.state())
    }

    /// Whether the node's JVM is still there: running, paused, or exiting but not yet gone.
    pub fn is_running(&self) -> bool {
        self.process_state() != ProcessState::Gone
    }

    /// Where the node listens: CQL and storage on its address, JMX on loopback.
    pub fn listen_addresses(&self) -> Vec<SocketAddrV4> {
        let mut addresses = vec![
            SocketAddrV4::new(self.address, self.native_port),
            SocketAddrV4::new(self.address, self.storage_port),
        ];
        if self.jmx_port != 0 {
            addresses.push(SocketAddrV4::new(Ipv4Addr::LOCALHOST, self.jmx_port));
        }
        addresses
    }

    /// What ending this node's JVM must wait for, if it has one.
    pub fn stop_target(&self) -> Option<StopTarget> {
        Some(StopTarget {
            process: self.process()?,
            ports: self.listen_addresses(),
        })
    }
}

impl ClusterState {
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(STATE_FILE)
    }

    /// The state of cluster `name`, or `None` if it was never created (or was destroyed).
    pub fn load(home: &Home, name: &str) -> Result<Option<Self>> {
        let path = Self::path(&home.cluster_dir(name));
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => {
                return Err(ClusterError::Io {
                    context: format!("reading {}", path.display()),
                    source: err,
                })
            }
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| ClusterError::BadState {
                path,
                detail: e.to_string(),
            })
    }

    /// Like [`ClusterState::load`], but a missing cluster is an error.
    pub fn load_existing(home: &Home, name: &str) -> Result<Self> {
        Self::load(home, name)?.ok_or_else(|| ClusterError::NoSuchCluster(name.to_string()))
    }

    /// Writes atomically (temp file + rename), so a crash never leaves half a state file.
    pub fn save(&self) -> Result<()> {
        let path = Self::path(&self.dir);
        let temp = self
            .dir
            .join(format!(".{STATE_FILE}.{}", std::process::id()));
        let json = serde_json::to_string_pretty(self).expect("cluster state always serialises");
        std::fs::write(&temp, json).context(|| format!("writing {}", temp.display()))?;
        std::fs::rename(&temp, &path).context(|| format!("writing {}", path.display()))
    }

    /// `address:port` of every node, for a driver's contact points.
    pub fn cql_contact_points(&self) -> Vec<SocketAddr> {
        self.nodes.iter().map(NodeState::cql_address).collect()
    }

    /// Contact points of the nodes whose process is alive.
    pub fn running_contact_points(&self) -> Vec<SocketAddr> {
        self.nodes
            .iter()
            .filter(|n| n.is_running())
            .map(NodeState::cql_address)
            .collect()
    }

    pub fn pids(&self) -> Vec<i32> {
        self.nodes.iter().filter_map(|n| n.pid).collect()
    }

    /// The node JVMs cqlbench recorded that are still those processes.
    pub fn processes(&self) -> Vec<ProcessId> {
        self.nodes.iter().filter_map(NodeState::process).collect()
    }

    /// True when every node's process is alive (possibly paused).
    pub fn is_up(&self) -> bool {
        !self.nodes.is_empty() && self.nodes.iter().all(NodeState::is_running)
    }

    pub fn node(&self, index: usize) -> Result<&NodeState> {
        self.nodes
            .iter()
            .find(|n| n.index == index)
            .ok_or_else(|| ClusterError::NoSuchNode {
                name: self.name.clone(),
                node: index,
                count: self.nodes.len(),
            })
    }

    pub fn node_mut(&mut self, index: usize) -> Result<&mut NodeState> {
        let (name, count) = (self.name.clone(), self.nodes.len());
        self.nodes
            .iter_mut()
            .find(|n| n.index == index)
            .ok_or(ClusterError::NoSuchNode {
                name,
                node: index,
                count,
            })
    }

    /// Forgets PIDs whose process is gone (crashed node, reboot, stale file).
    pub fn forget_dead_pids(&mut self) {
        for node in &mut self.nodes {
            if node.pid.is_some() && !node.is_running() {
                node.set_process(None);
            }
        }
    }
}
