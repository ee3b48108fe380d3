//! What a cluster should look like: the input of `up`.

use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::error::{ClusterError, Result};
use crate::gc::{Gc, GcProfile, GcSettings};
use crate::jdk::JdkChoice;
use crate::version::{CassandraVersion, DEFAULT_CASSANDRA_VERSION};

pub const DEFAULT_CLUSTER_NAME: &str = "default";
pub const DEFAULT_HEAP_BYTES: u64 = 1024 * 1024 * 1024;
pub const NATIVE_PORT: u16 = 9042;
pub const STORAGE_PORT: u16 = 7000;
pub const MAX_NODES: usize = 16;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterSpec {
    pub name: String,
    pub nodes: usize,
    pub cassandra_version: String,
    pub jdk: JdkChoice,
    /// Start even if the Cassandra/JDK pair is outside the verified table.
    pub force_jdk: bool,
    pub gc: Gc,
    pub heap_bytes: u64,
    /// ParallelGCThreads = ConcGCThreads (the seed's `--cores`).
    pub gc_threads: Option<u32>,
    pub gc_profile: GcProfile,
    /// Extra JVM flags, appended last.
    pub jvm_opts: Vec<String>,
    /// Node i listens on base_ip + (i − 1).
    pub base_ip: Ipv4Addr,
    /// vnodes per node (tokens are precomputed and balanced).
    pub num_tokens: usize,
    /// How long a node may take to answer CQL before `up` gives up.
    pub start_timeout_secs: u64,
}

impl Default for ClusterSpec {
    fn default() -> Self {
        Self {
            name: DEFAULT_CLUSTER_NAME.to_string(),
            nodes: 1,
            cassandra_version: DEFAULT_CASSANDRA_VERSION.to_string(),
            jdk: JdkChoice::Auto,
            force_jdk: false,
            gc: Gc::G1,
            heap_bytes: DEFAULT_HEAP_BYTES,
            gc_threads: None,
            gc_profile: GcProfile::Default,
            jvm_opts: Vec::new(),
            base_ip: Ipv4Addr::new(127, 0, 0, 1),
            num_tokens: 16,
            start_timeout_secs: 180,
        }
    }
}

impl ClusterSpec {
    pub fn version(&self) -> Result<CassandraVersion> {
        CassandraVersion::parse(&self.cassandra_version)
    }

    pub fn gc_settings(&self) -> GcSettings {
        GcSettings {
            gc: self.gc,
            heap_bytes: self.heap_bytes,
            threads: self.gc_threads,
            profile: self.gc_profile,
        }
    }

    pub fn node_address(&self, index: usize) -> Ipv4Addr {
        let [a, b, c, d] = self.base_ip.octets();
        Ipv4Addr::new(a, b, c, d + (index as u8 - 1))
    }

    /// Checks what can be checked without a JDK or jars.
    pub fn validate(&self) -> Result<()> {
        let invalid = |m: String| Err(ClusterError::InvalidSpec(m));
        let name_ok = !self.name.is_empty()
            && self.name.len() <= 64
            && self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !name_ok {
            return invalid(format!(
                "--name {:?}: use letters, digits, '-' and '_' (at most 64)",
                self.name
            ));
        }
        if self.nodes == 0 || self.nodes > MAX_NODES {
            return invalid(format!("--nodes {}: choose 1 to {MAX_NODES}", self.nodes));
        }
        if !self.base_ip.is_loopback() {
            return invalid(format!(
                "--base-ip {}: nodes listen on loopback only (127.x.y.z)",
                self.base_ip
            ));
        }
        let last = self.base_ip.octets()[3] as usize;
        if last == 0 || last + self.nodes - 1 > 254 {
            return invalid(format!(
                "--base-ip {} with {} nodes runs past 254 in the last octet",
                self.base_ip, self.nodes
            ));
        }
        if self.num_tokens == 0 || self.num_tokens > 256 {
            return invalid(format!("num_tokens {}: choose 1 to 256", self.num_tokens));
        }
        self.version()?;
        crate::gc::check_extra_opts(&self.jvm_opts)
    }

    /// Seed 004's memtable and key-cache sizes for `--gc-profile shenandoah-tuned`: on-heap memtables
    /// at 1/16 of the heap (4 GB → 1 GB of 16 GB there), key cache 10 MB.
    pub fn memtable_heap_mib(&self) -> Option<u64> {
        (self.gc_profile == GcProfile::ShenandoahTuned)
            .then(|| (self.heap_bytes / 16 / (1024 * 1024)).max(16))
    }

    pub fn key_cache_mib(&self) -> Option<u64> {
        (self.gc_profile == GcProfile::ShenandoahTuned).then_some(10)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_count_up_from_base() {
        let spec = ClusterSpec {
            base_ip: Ipv4Addr::new(127, 0, 1, 5),
            nodes: 3,
            ..ClusterSpec::default()
        };
        assert_eq!(spec.node_address(1), Ipv4Addr::new(127, 0, 1, 5));
        assert_eq!(spec.node_address(3), Ipv4Addr::new(127, 0, 1, 7));
        assert!(spec.validate().is_ok());
    }

    #[test]
    fn rejects_bad_names_counts_and_addresses() {
        let bad = [
            ClusterSpec {
                name: "../x".into(),
                ..ClusterSpec::default()
            },
            ClusterSpec {
                nodes: 0,
                ..ClusterSpec::default()
            },
            ClusterSpec {
                base_ip: Ipv4Addr::new(10, 0, 0, 1),
                ..ClusterSpec::default()
            },
            ClusterSpec {
                base_ip: Ipv4Addr::new(127, 0, 0, 253),
                nodes: 3,
                ..ClusterSpec::default()
            },
            ClusterSpec {
                cassandra_version: "3.11.6".into(),
                ..ClusterSpec::default()
            },
        ];
        for spec in bad {
            assert!(spec.validate().is_err(), "{spec:?}");
        }
    }

    #[test]
    fn tuned_profile_shrinks_memtables_and_key_cache() {
        let spec = ClusterSpec {
            gc: Gc::Shenandoah,
            gc_profile: GcProfile::ShenandoahTuned,
            heap_bytes: 16 * 1024 * 1024 * 1024,
            ..ClusterSpec::default()
        };
        assert_eq!(spec.memtable_heap_mib(), Some(1024));
        assert_eq!(spec.key_cache_mib(), Some(10));
        assert_eq!(ClusterSpec::default().memtable_heap_mib(), None);
    }
}
