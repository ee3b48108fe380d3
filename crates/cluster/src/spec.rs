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

/// The JMX port of the node at `address` (127.X.A.B): `10000 + (X·65536 + A·256 + B) mod 20000`.
/// Cassandra binds JMX on 127.0.0.1 whatever the node's address, so every node of the machine needs
/// its own port. Derived from the address, it is the same at every start and below the kernel's
/// ephemeral range (32768 and up), where no `bind(0)` or outgoing connection takes it; a port asked
/// of the kernel and released again could be handed to another process before the JVM binds it.
pub fn jmx_port(address: Ipv4Addr) -> u16 {
    let [_, x, a, b] = address.octets();
    let index = (u32::from(x) << 16) | (u32::from(a) << 8) | u32::from(b);
    // Below 10000 + 20000 = 30000, so the cast cannot truncate.
    (10_000 + index % 20_000) as u16
}

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
    /// Datacenters and racks (`--dcs`, `--racks`). `None` is the classic single-datacenter cluster
    /// with SimpleSnitch, exactly as before these options existed (and absent from cluster.json).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datacenters: Option<Datacenters>,
}

/// `count` datacenters (dc1…dcD) of `nodes / count` nodes each, spread round-robin over `racks`
/// racks (rack1…rackR) per datacenter; nodes run GossipingPropertyFileSnitch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Datacenters {
    pub count: usize,
    pub racks: usize,
}

/// Where one node sits: 1-based datacenter and rack numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    pub dc: usize,
    pub rack: usize,
}

impl Placement {
    pub fn dc_name(&self) -> String {
        format!("dc{}", self.dc)
    }

    pub fn rack_name(&self) -> String {
        format!("rack{}", self.rack)
    }
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
            datacenters: None,
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

    /// Number of datacenters (1 without `--dcs`).
    pub fn dc_count(&self) -> usize {
        self.datacenters.map_or(1, |d| d.count.max(1))
    }

    /// Nodes per datacenter (all nodes without `--dcs`).
    pub fn nodes_per_dc(&self) -> usize {
        self.nodes / self.dc_count()
    }

    /// The datacenter and rack of node `index` (1-based): datacenters take consecutive nodes
    /// (dc1 gets nodes 1…n, dc2 n+1…2n, …), racks are dealt round-robin inside each datacenter.
    /// `None` without `--dcs`/`--racks`.
    pub fn placement(&self, index: usize) -> Option<Placement> {
        let layout = self.datacenters?;
        let per_dc = self.nodes_per_dc().max(1);
        let local = (index - 1) % per_dc;
        Some(Placement {
            dc: (index - 1) / per_dc + 1,
            rack: local % layout.racks.max(1) + 1,
        })
    }

    /// Seed nodes: the first node of every datacenter (just node 1 without `--dcs`).
    pub fn seeds(&self) -> Vec<Ipv4Addr> {
        let per_dc = self.nodes_per_dc().max(1);
        (0..self.dc_count())
            .map(|dc| self.node_address(dc * per_dc + 1))
            .collect()
    }

    /// The precomputed tokens of node `index` (1-based): one balanced ring per datacenter, each
    /// datacenter's ring shifted by a fraction of a slice so that no two tokens collide.
    pub fn node_tokens(&self, index: usize) -> Vec<i64> {
        match self.placement(index) {
            None => crate::tokens::node_tokens(index - 1, self.nodes, self.num_tokens),
            Some(placement) => crate::tokens::dc_node_tokens(
                placement.dc - 1,
                self.dc_count(),
                (index - 1) % self.nodes_per_dc().max(1),
                self.nodes_per_dc(),
                self.num_tokens,
            ),
        }
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
        if let Some(layout) = self.datacenters {
            if layout.count == 0 || layout.count > MAX_NODES {
                return invalid(format!("--dcs {}: choose 1 to {MAX_NODES}", layout.count));
            }
            if layout.racks == 0 {
                return invalid("--racks 0: a datacenter needs at least one rack".into());
            }
            if self.nodes == 0 {
                return invalid("--nodes 0: a datacenter needs at least one node".into());
            }
            if !self.nodes.is_multiple_of(layout.count) {
                return invalid(format!(
                    "{} nodes cannot be split evenly over {} datacenters",
                    self.nodes, layout.count
                ));
            }
            let per_dc = self.nodes / layout.count;
            if layout.racks > per_dc {
                return invalid(format!(
                    "--racks {}: more racks than the {per_dc} node(s) per datacenter (--nodes); \
                     every rack needs a node",
                    layout.racks
                ));
            }
            if self.nodes > MAX_NODES {
                return invalid(format!(
                    "--dcs {} × --nodes {per_dc} = {} nodes: at most {MAX_NODES} in all",
                    layout.count, self.nodes
                ));
            }
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
                "--base-ip {} with {} nodes{} runs past 254 in the last octet",
                self.base_ip,
                self.nodes,
                if self.dc_count() > 1 {
                    format!(
                        " ({} datacenters of {})",
                        self.dc_count(),
                        self.nodes_per_dc()
                    )
                } else {
                    String::new()
                }
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
    fn jmx_ports_follow_the_address_below_the_ephemeral_range() {
        let at = |text: &str| jmx_port(text.parse().unwrap());
        assert_eq!(at("127.0.0.1"), 10_001);
        assert_eq!(at("127.0.13.2"), 10_000 + 13 * 256 + 2);
        assert_eq!(at("127.0.2.3"), at("127.0.2.1") + 2);
        // 127.1.0.1: 10000 + 65537 mod 20000.
        assert_eq!(at("127.1.0.1"), 15_537);
        // Every address of a /16 that tests and users pick from gets its own port…
        let ports: std::collections::HashSet<u16> = (0..=77u8)
            .flat_map(|a| (0..=255u8).map(move |b| jmx_port(Ipv4Addr::new(127, 0, a, b))))
            .collect();
        assert_eq!(ports.len(), 78 * 256);
        // …and none reaches the ephemeral ports.
        assert!(ports.iter().all(|&p| (10_000..30_000).contains(&p)));
    }

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
                cassandra_version: "3.0.29".into(),
                ..ClusterSpec::default()
            },
        ];
        for spec in bad {
            assert!(spec.validate().is_err(), "{spec:?}");
        }
    }

    fn dcs(count: usize, per_dc: usize, racks: usize) -> ClusterSpec {
        ClusterSpec {
            nodes: count * per_dc,
            datacenters: Some(Datacenters { count, racks }),
            base_ip: Ipv4Addr::new(127, 0, 11, 1),
            ..ClusterSpec::default()
        }
    }

    #[test]
    fn datacenters_take_consecutive_nodes_and_racks_go_round_robin() {
        let spec = dcs(2, 3, 2);
        assert!(spec.validate().is_ok());
        let placed: Vec<(String, String)> = (1..=6)
            .map(|i| {
                let p = spec.placement(i).expect("placed");
                (p.dc_name(), p.rack_name())
            })
            .collect();
        let expected = [
            ("dc1", "rack1"),
            ("dc1", "rack2"),
            ("dc1", "rack1"),
            ("dc2", "rack1"),
            ("dc2", "rack2"),
            ("dc2", "rack1"),
        ];
        for (got, want) in placed.iter().zip(expected) {
            assert_eq!((got.0.as_str(), got.1.as_str()), want);
        }
        assert_eq!(spec.node_address(4), Ipv4Addr::new(127, 0, 11, 4));
        assert_eq!(ClusterSpec::default().placement(1), None);
    }

    #[test]
    fn every_datacenter_has_a_seed() {
        assert_eq!(
            dcs(3, 2, 1).seeds(),
            [
                Ipv4Addr::new(127, 0, 11, 1),
                Ipv4Addr::new(127, 0, 11, 3),
                Ipv4Addr::new(127, 0, 11, 5)
            ]
        );
        let single = ClusterSpec {
            nodes: 3,
            ..ClusterSpec::default()
        };
        assert_eq!(single.seeds(), [Ipv4Addr::new(127, 0, 0, 1)]);
    }

    #[test]
    fn tokens_form_one_balanced_ring_per_datacenter() {
        let spec = dcs(2, 2, 1);
        let ring: Vec<(i64, usize)> = (1..=4)
            .flat_map(|i| spec.node_tokens(i).into_iter().map(move |t| (t, i - 1)))
            .collect();
        assert_eq!(ring.len(), 4 * 16);
        let shares = crate::tokens::ownership_by_group(&ring, &[1, 1, 2, 2]);
        for share in shares {
            assert!((share - 0.5).abs() < 1e-9, "{share}");
        }
        // dc1 is laid out exactly like a 2-node single-datacenter cluster; dc2 is shifted.
        let two = ClusterSpec {
            nodes: 2,
            ..ClusterSpec::default()
        };
        assert_eq!(spec.node_tokens(1), two.node_tokens(1));
        assert_eq!(spec.node_tokens(2), two.node_tokens(2));
        assert!(spec
            .node_tokens(3)
            .iter()
            .all(|t| !two.node_tokens(1).contains(t)));
        // Without datacenters, nothing changes.
        let three = ClusterSpec {
            nodes: 3,
            ..ClusterSpec::default()
        };
        assert_eq!(three.node_tokens(2), crate::tokens::node_tokens(1, 3, 16));
    }

    #[test]
    fn refuses_impossible_datacenter_layouts() {
        let message = |spec: ClusterSpec| match spec.validate() {
            Err(ClusterError::InvalidSpec(m)) => m,
            other => panic!("expected a refusal, got {other:?}"),
        };
        assert!(message(dcs(0, 2, 1)).contains("--dcs 0"));
        assert!(message(dcs(2, 2, 0)).contains("--racks 0"));
        assert!(message(dcs(2, 2, 3)).contains("--racks 3: more racks than the 2 node(s)"));
        assert!(message(dcs(3, 6, 1)).contains("--dcs 3 × --nodes 6 = 18 nodes"));
        let past_254 = ClusterSpec {
            base_ip: Ipv4Addr::new(127, 0, 11, 250),
            ..dcs(2, 4, 1)
        };
        assert!(message(past_254).contains("8 nodes (2 datacenters of 4) runs past 254"));
        let uneven = ClusterSpec {
            nodes: 5,
            ..dcs(2, 2, 1)
        };
        assert!(message(uneven).contains("cannot be split evenly"));
        let no_nodes = ClusterSpec {
            nodes: 0,
            ..dcs(2, 2, 1)
        };
        assert!(message(no_nodes).contains("--nodes 0"));
        assert!(dcs(1, 1, 1).validate().is_ok());
        assert!(dcs(4, 4, 4).validate().is_ok());
    }

    #[test]
    fn a_spec_without_datacenters_serialises_as_before() {
        let json = serde_json::to_string(&ClusterSpec::default()).unwrap();
        assert!(!json.contains("datacenters"), "{json}");
        let back: ClusterSpec = serde_json::from_str(&json).unwrap();
        assert_eq!(back, ClusterSpec::default());
        let with = serde_json::to_string(&dcs(2, 2, 2)).unwrap();
        assert!(
            with.contains(r#""datacenters":{"count":2,"racks":2}"#),
            "{with}"
        );
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
