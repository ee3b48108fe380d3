//! A Cassandra node in a container: what `cqlbench k8s node`, the entry point of the image
//! `cqlbench k8s image cassandra` builds, does. It reads the official `cassandra` image's environment
//! (`CASSANDRA_CLUSTER_NAME`, `CASSANDRA_SEEDS`, `CASSANDRA_DC`, `CASSANDRA_RACK`,
//! `CASSANDRA_LISTEN_ADDRESS`, `MAX_HEAP_SIZE`, `JVM_EXTRA_OPTS`), writes the node's configuration the
//! way `cluster up` writes a local node's (the same cassandra.yaml, tokens and JVM arguments), and
//! replaces itself with the JVM, so the container's main process is Cassandra's.

use std::net::{IpAddr, Ipv4Addr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::config::{self, NodeConfig};
use crate::error::{ClusterError, Result};
use crate::jvm::{self, NodeLaunch};
use crate::version::CassandraVersion;

/// Where the image keeps Cassandra's jars and its JDK, and where a node keeps everything it writes (the
/// data volume).
pub const CASSANDRA_LIB: &str = "/opt/cassandra/lib";
pub const JAVA_HOME: &str = "/opt/java";
pub const NODE_DIR: &str = "/var/lib/cassandra";
/// The image's Cassandra version and JDK major, set in its environment when it is built.
pub const VERSION_ENV: &str = "CQLBENCH_CASSANDRA_VERSION";
pub const JDK_ENV: &str = "CQLBENCH_JDK_MAJOR";
/// How many nodes the datacenter has, and the node index of this StatefulSet's pod 0: with the pod's
/// ordinal they give its precomputed tokens (one node alone without them).
pub const NODES_ENV: &str = "CQLBENCH_NODES";
pub const NODE_OFFSET_ENV: &str = "CQLBENCH_NODE_OFFSET";
/// The pod's StatefulSet: its host name is `<statefulset>-<ordinal>`.
pub const STATEFULSET_ENV: &str = "CQLBENCH_STATEFULSET";
/// Vnodes per node, as `cluster up` gives them.
const TOKENS_PER_NODE: usize = 16;
/// How long a seed's name may take to resolve (a headless Service publishes its pods' names as they
/// get addresses).
const SEED_RESOLUTION: Duration = Duration::from_secs(600);

/// Everything a pod's node is, decided from its environment and host name.
#[derive(Debug, Clone, PartialEq)]
pub struct PodNode {
    pub cluster_name: String,
    pub version: CassandraVersion,
    pub jdk_major: u32,
    pub address: Ipv4Addr,
    /// As given: addresses, or names resolved when the node starts.
    pub seeds: Vec<String>,
    pub datacenter: String,
    pub rack: String,
    pub tokens: Vec<i64>,
    /// The JVM options after cqlbench's own: `-Xms`/`-Xmx` from MAX_HEAP_SIZE, then JVM_EXTRA_OPTS.
    pub jvm_opts: Vec<String>,
}

fn invalid(message: String) -> ClusterError {
    ClusterError::InvalidSpec(message)
}

/// `k8s-gc-1-dc1-rack1-sts-2` of StatefulSet `k8s-gc-1-dc1-rack1-sts` → 2: a pod's ordinal.
fn ordinal(hostname: &str, statefulset: &str) -> Option<usize> {
    hostname
        .strip_prefix(statefulset)?
        .strip_prefix('-')?
        .parse()
        .ok()
}

impl PodNode {
    /// Reads the node from `env` (the process environment, or a test's) and its host name. The
    /// address is `CASSANDRA_LISTEN_ADDRESS`, else what the host name resolves to (a pod's own entry
    /// in /etc/hosts).
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>, hostname: &str) -> Result<PodNode> {
        let get = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let version_text = get(VERSION_ENV).ok_or_else(|| {
            invalid(format!(
                "{VERSION_ENV} is not set: this is not a cqlbench Cassandra image"
            ))
        })?;
        let version = CassandraVersion::parse(version_text.trim())?;
        let jdk_major = get(JDK_ENV)
            .and_then(|j| j.trim().parse().ok())
            .ok_or_else(|| invalid(format!("{JDK_ENV} is not a JDK major")))?;
        let address = match get("CASSANDRA_LISTEN_ADDRESS").filter(|a| a != "auto") {
            Some(text) => text.trim().parse().map_err(|_| {
                invalid(format!(
                    "CASSANDRA_LISTEN_ADDRESS {text:?} is not an IPv4 address"
                ))
            })?,
            None => own_address(hostname)?,
        };
        let seeds = match get("CASSANDRA_SEEDS") {
            Some(list) => list
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
            None => vec![address.to_string()],
        };
        let count = |name: &str, default: usize| -> Result<usize> {
            match get(name) {
                None => Ok(default),
                Some(text) => text
                    .trim()
                    .parse()
                    .map_err(|_| invalid(format!("{name} {text:?} is not a number"))),
            }
        };
        let nodes = count(NODES_ENV, 1)?;
        // Outside a StatefulSet (a container run by hand) the node is the first of its rack.
        let ordinal = match get(STATEFULSET_ENV) {
            None => 0,
            Some(statefulset) => ordinal(hostname, &statefulset).ok_or_else(|| {
                invalid(format!(
                    "host name {hostname:?} is not a pod of StatefulSet {statefulset:?} ({STATEFULSET_ENV})"
                ))
            })?,
        };
        let index = count(NODE_OFFSET_ENV, 0)? + ordinal;
        if nodes == 0 || index >= nodes {
            return Err(invalid(format!(
                "node {index} (host {hostname:?}) of {nodes}: {NODES_ENV} counts every node of the datacenter"
            )));
        }
        let mut jvm_opts = Vec::new();
        if let Some(heap) = get("MAX_HEAP_SIZE") {
            let heap = heap.trim();
            jvm_opts.push(format!("-Xms{heap}"));
            jvm_opts.push(format!("-Xmx{heap}"));
        }
        if let Some(extra) = get("JVM_EXTRA_OPTS") {
            jvm_opts.extend(extra.split_whitespace().map(str::to_string));
        }
        Ok(PodNode {
            cluster_name: get("CASSANDRA_CLUSTER_NAME").unwrap_or_else(|| "Test Cluster".into()),
            version,
            jdk_major,
            address,
            seeds,
            datacenter: get("CASSANDRA_DC").unwrap_or_else(|| "dc1".into()),
            rack: get("CASSANDRA_RACK").unwrap_or_else(|| "rack1".into()),
            tokens: crate::tokens::node_tokens(index, nodes, TOKENS_PER_NODE),
            jvm_opts,
        })
    }

    /// Seed addresses: an address as it is, this pod's own name (the first label of a seed's name
    /// is its pod's host name) as its address, any other name resolved, waiting while it does not
    /// resolve yet.
    pub fn seed_addresses(
        &self,
        hostname: &str,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Vec<Ipv4Addr>> {
        self.seeds
            .iter()
            .map(|seed| {
                if let Ok(address) = seed.parse() {
                    return Ok(address);
                }
                if seed.split('.').next() == Some(hostname) {
                    return Ok(self.address);
                }
                resolve_waiting(seed, progress)
            })
            .collect()
    }

    /// Writes the node's configuration under `dir` and returns the JVM's arguments.
    pub fn prepare(&self, dir: &Path, seeds: &[Ipv4Addr]) -> Result<Vec<String>> {
        let node = NodeConfig {
            cluster_name: &self.cluster_name,
            version: &self.version,
            address: self.address,
            seeds,
            gossiping_snitch: true,
            storage_port: 7000,
            native_port: 9042,
            tokens: &self.tokens,
            memtable_heap_mib: None,
            key_cache_mib: None,
        };
        let node_dir = config::write_node_dir(dir, &node, Some((&self.datacenter, &self.rack)))?;
        let distribution = crate::distribution::Distribution {
            version: self.version.clone(),
            lib_dir: PathBuf::from(CASSANDRA_LIB),
        };
        let jamm = distribution.jamm_jar()?;
        let classpath = distribution.classpath();
        let gc_log = dir.join("gc.log");
        let launch = NodeLaunch {
            node_dir: dir,
            conf_dir: &node_dir.conf,
            log_dir: &node_dir.logs,
            data_dir: &node_dir.data,
            gc_log: &gc_log,
            // Local to the container (as on a local node, a port of its own address's).
            jmx_port: crate::spec::jmx_port(self.address),
            jamm_jar: &jamm,
            classpath: &classpath,
        };
        let mut jvm_opts: Vec<String> = node_dir.rackdc_option.into_iter().collect();
        jvm_opts.extend(self.jvm_opts.iter().cloned());
        Ok(jvm::node_args(&launch, self.jdk_major, &[], &jvm_opts))
    }
}

/// What the host name resolves to: the pod's address (kubelet writes it into /etc/hosts).
fn own_address(hostname: &str) -> Result<Ipv4Addr> {
    first_ipv4(hostname).map_err(|why| {
        invalid(format!(
            "the host name {hostname:?} resolves to no IPv4 address ({why}): set CASSANDRA_LISTEN_ADDRESS"
        ))
    })
}

/// The name's first IPv4 address, or why there is none (the resolver's error, or only IPv6 addresses).
fn first_ipv4(name: &str) -> std::result::Result<Ipv4Addr, String> {
    (name, 0)
        .to_socket_addrs()
        .map_err(|e| e.to_string())?
        .find_map(|a| match a.ip() {
            IpAddr::V4(v4) => Some(v4),
            IpAddr::V6(_) => None,
        })
        .ok_or_else(|| "no IPv4 address".to_string())
}

/// Waits for a seed's name to resolve (a StatefulSet's first pod is in DNS only once it runs), saying
/// why each time the answer changes.
fn resolve_waiting(name: &str, progress: &mut dyn FnMut(&str)) -> Result<Ipv4Addr> {
    let started = Instant::now();
    let mut last_error = String::new();
    loop {
        let error = match first_ipv4(name) {
            Ok(address) => return Ok(address),
            Err(error) => error,
        };
        if started.elapsed() >= SEED_RESOLUTION {
            return Err(invalid(format!(
                "seed {name:?} did not resolve in {} s: {error}",
                SEED_RESOLUTION.as_secs()
            )));
        }
        if error != last_error {
            progress(&format!(
                "waiting for the seed {name:?} to resolve: {error}"
            ));
            last_error = error;
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn a_statefulset_pod_is_its_node_of_the_datacenter() {
        let env = env_of(&[
            (VERSION_ENV, "5.0.9"),
            (JDK_ENV, "17"),
            ("CASSANDRA_LISTEN_ADDRESS", "10.1.0.7"),
            ("CASSANDRA_SEEDS", "c-dc1-rack1-sts-0.c-dc1-service"),
            ("CASSANDRA_CLUSTER_NAME", "c"),
            ("CASSANDRA_DC", "east"),
            ("CASSANDRA_RACK", "rack2"),
            ("MAX_HEAP_SIZE", "1G"),
            ("JVM_EXTRA_OPTS", "-XX:-UseG1GC  -XX:+UseZGC"),
            (NODES_ENV, "3"),
            (NODE_OFFSET_ENV, "2"),
            (STATEFULSET_ENV, "c-dc1-rack2-sts"),
        ]);
        let node = PodNode::from_env(&env, "c-dc1-rack2-sts-0").unwrap();
        assert_eq!(node.address, Ipv4Addr::new(10, 1, 0, 7));
        assert_eq!(node.tokens, crate::tokens::node_tokens(2, 3, 16));
        assert_eq!(
            node.jvm_opts,
            ["-Xms1G", "-Xmx1G", "-XX:-UseG1GC", "-XX:+UseZGC"]
        );
        assert_eq!(
            (node.datacenter.as_str(), node.rack.as_str()),
            ("east", "rack2")
        );
        // A seed named after the pod's own host name is its own address (the first rack's pod 0).
        assert_eq!(
            node.seed_addresses("c-dc1-rack1-sts-0", &mut |_| {})
                .unwrap(),
            [Ipv4Addr::new(10, 1, 0, 7)]
        );
        let beyond = PodNode::from_env(&env, "c-dc1-rack2-sts-1");
        assert!(beyond.unwrap_err().to_string().contains("node 3"));
        let stranger = PodNode::from_env(&env, "runner-0").unwrap_err();
        assert!(
            stranger.to_string().contains("is not a pod of StatefulSet"),
            "{stranger}"
        );
        let no_image = PodNode::from_env(&env_of(&[]), "x").unwrap_err();
        assert!(no_image
            .to_string()
            .contains("CQLBENCH_CASSANDRA_VERSION is not set"));
    }
}
