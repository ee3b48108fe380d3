//! cassandra.yaml and logback.xml, written per node and per version (the jars ship no `conf/`).

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use crate::error::{IoContext, Result};
use crate::version::CassandraVersion;

/// What differs between nodes and clusters in cassandra.yaml.
#[derive(Debug, Clone)]
pub struct NodeConfig<'a> {
    pub cluster_name: &'a str,
    pub version: &'a CassandraVersion,
    pub address: Ipv4Addr,
    /// Seed nodes (all on `storage_port`): node 1, or the first node of every datacenter.
    pub seeds: &'a [Ipv4Addr],
    /// GossipingPropertyFileSnitch, which reads the node's datacenter and rack from its
    /// `cassandra-rackdc.properties` (a cluster with `--dcs`/`--racks`, a pod); else SimpleSnitch.
    pub gossiping_snitch: bool,
    pub storage_port: u16,
    pub native_port: u16,
    pub tokens: &'a [i64],
    /// Seed 004's profile: small on-heap memtables, off-heap objects, tiny key cache.
    pub memtable_heap_mib: Option<u64>,
    pub key_cache_mib: Option<u64>,
}

/// A node's directories, its configuration written into `conf/`.
pub struct NodeDir {
    pub conf: PathBuf,
    pub logs: PathBuf,
    pub data: PathBuf,
    /// The JVM option that points the node at its `cassandra-rackdc.properties`, when it has one (no
    /// `conf/` directory is on the classpath).
    pub rackdc_option: Option<String>,
}

/// Makes a node's directories under `dir` (conf, logs, data, triggers) and writes its cassandra.yaml,
/// logback.xml and, with a `(datacenter, rack)` placement (which GossipingPropertyFileSnitch reads),
/// cassandra-rackdc.properties: the same for a local node and a pod.
pub fn write_node_dir(
    dir: &Path,
    node: &NodeConfig,
    placement: Option<(&str, &str)>,
) -> Result<NodeDir> {
    let node_dir = NodeDir {
        conf: dir.join("conf"),
        logs: dir.join("logs"),
        data: dir.join("data"),
        rackdc_option: None,
    };
    for d in [
        &node_dir.conf,
        &node_dir.logs,
        &node_dir.data,
        &dir.join("triggers"),
    ] {
        std::fs::create_dir_all(d).context(|| format!("creating {}", d.display()))?;
    }
    let write = |path: PathBuf, text: String| {
        std::fs::write(&path, text).context(|| format!("writing {}", path.display()))
    };
    write(node_dir.conf.join("cassandra.yaml"), cassandra_yaml(node))?;
    write(
        node_dir.conf.join("logback.xml"),
        logback_xml(&node_dir.logs, node.version),
    )?;
    let Some((datacenter, rack)) = placement else {
        return Ok(node_dir);
    };
    let rackdc = node_dir.conf.join("cassandra-rackdc.properties");
    write(rackdc.clone(), rackdc_properties(datacenter, rack))?;
    Ok(NodeDir {
        rackdc_option: Some(format!(
            "-Dcassandra-rackdc.properties=file://{}",
            rackdc.display()
        )),
        ..node_dir
    })
}

/// Renders cassandra.yaml with the version's key names (4.0 only understands `*_in_ms`, `*_in_mb`).
pub fn cassandra_yaml(config: &NodeConfig) -> String {
    let old_keys = config.version.uses_old_yaml_keys();
    let tokens = config
        .tokens
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let mut yaml = format!(
        r#"# Written by cqlbench for Cassandra {version}; regenerated on every start.
cluster_name: '{cluster}'
num_tokens: {num_tokens}
initial_token: {tokens}
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
endpoint_snitch: {snitch}
# A fresh cluster holds no data: nothing to stream, so nodes join without bootstrapping.
auto_bootstrap: false
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "{seeds}"
listen_address: {address}
rpc_address: {address}
storage_port: {storage_port}
native_transport_port: {native_port}
start_native_transport: true
concurrent_reads: 32
concurrent_writes: 32
concurrent_counter_writes: 32
commitlog_sync: periodic
"#,
        version = config.version,
        cluster = config.cluster_name.replace('\'', "''"),
        num_tokens = config.tokens.len(),
        snitch = if config.gossiping_snitch {
            "GossipingPropertyFileSnitch"
        } else {
            "SimpleSnitch"
        },
        seeds = config
            .seeds
            .iter()
            // 3.11 reads a seed as a bare address (every node has the same storage_port).
            .map(|seed| if config.version.is_3_11() {
                seed.to_string()
            } else {
                format!("{seed}:{}", config.storage_port)
            })
            .collect::<Vec<_>>()
            .join(","),
        address = config.address,
        storage_port = config.storage_port,
        native_port = config.native_port,
    );
    if config.version.is_3_11() {
        // 3.11 starts a Thrift server unless told not to; the load speaks CQL only.
        yaml.push_str("start_rpc: false\n");
    }
    yaml.push_str(if old_keys {
        "commitlog_sync_period_in_ms: 10000\n"
    } else {
        "commitlog_sync_period: 10000ms\n"
    });
    // Benchmarks of materialized views (easy-cass-stress's MaterializedViews) need them on; a
    // node without them refuses CREATE MATERIALIZED VIEW.
    yaml.push_str(if old_keys {
        "enable_materialized_views: true\n"
    } else {
        "materialized_views_enabled: true\n"
    });
    if let Some(mib) = config.memtable_heap_mib {
        yaml.push_str(&if old_keys {
            format!("memtable_heap_space_in_mb: {mib}\n")
        } else {
            format!("memtable_heap_space: {mib}MiB\n")
        });
        yaml.push_str("memtable_allocation_type: offheap_objects\n");
    }
    if let Some(mib) = config.key_cache_mib {
        yaml.push_str(&if old_keys {
            format!("key_cache_size_in_mb: {mib}\n")
        } else {
            format!("key_cache_size: {mib}MiB\n")
        });
    }
    yaml
}

/// The node's `cassandra-rackdc.properties`, read by GossipingPropertyFileSnitch (the JVM is
/// pointed at it with `-Dcassandra-rackdc.properties=file://…`).
pub fn rackdc_properties(dc: &str, rack: &str) -> String {
    format!(
        "# Written by cqlbench: this node's place in the cluster (GossipingPropertyFileSnitch).\n\
         dc={dc}\nrack={rack}\nprefer_local=false\n"
    )
}

/// A plain file appender: system.log in the node's log directory, INFO and up. 3.11 logs its
/// flushes (`Completed flushing … (6.292MiB)`, what write amplification is computed from) at DEBUG,
/// where 4.0+ log them at INFO: for 3.11 that one logger is let through at DEBUG.
pub fn logback_xml(log_dir: &Path, version: &CassandraVersion) -> String {
    let flushes = if version.is_3_11() {
        "  <logger name=\"org.apache.cassandra.db.Memtable\" level=\"DEBUG\" />\n"
    } else {
        ""
    };
    format!(
        r#"<configuration scan="false">
  <appender name="SYSTEMLOG" class="ch.qos.logback.core.FileAppender">
    <file>{}/system.log</file>
    <encoder>
      <pattern>%-5level [%thread] %date{{ISO8601}} %F:%L - %msg%n</pattern>
    </encoder>
  </appender>
{flushes}  <root level="INFO">
    <appender-ref ref="SYSTEMLOG" />
  </root>
</configuration>
"#,
        log_dir.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Placement;

    fn render(version: &str, profile: bool) -> String {
        let version = CassandraVersion::parse(version).unwrap();
        cassandra_yaml(&NodeConfig {
            cluster_name: "it's",
            version: &version,
            address: Ipv4Addr::new(127, 0, 1, 2),
            seeds: &[Ipv4Addr::new(127, 0, 1, 1)],
            gossiping_snitch: false,
            storage_port: 7000,
            native_port: 9042,
            tokens: &[-9, 5],
            memtable_heap_mib: profile.then_some(64),
            key_cache_mib: profile.then_some(10),
        })
    }

    #[test]
    fn cassandra_40_gets_old_key_names() {
        let yaml = render("4.0.19", true);
        assert!(yaml.contains("commitlog_sync_period_in_ms: 10000\n"));
        assert!(yaml.contains("memtable_heap_space_in_mb: 64\n"));
        assert!(yaml.contains("key_cache_size_in_mb: 10\n"));
        assert!(yaml.contains("enable_materialized_views: true\n"));
        assert!(!yaml.contains("commitlog_sync_period: "));
    }

    #[test]
    fn cassandra_3_11_gets_old_keys_bare_seeds_and_no_thrift_server() {
        let yaml = render("3.11.19", true);
        assert!(yaml.contains("commitlog_sync_period_in_ms: 10000\n"));
        assert!(yaml.contains("memtable_heap_space_in_mb: 64\n"));
        assert!(yaml.contains("      - seeds: \"127.0.1.1\"\n"), "{yaml}");
        assert!(yaml.contains("start_rpc: false\n"));
        assert!(yaml.contains("start_native_transport: true\n"));
        assert!(!render("4.0.19", false).contains("start_rpc"));
    }

    #[test]
    fn newer_versions_get_units_in_values() {
        for version in ["4.1.10", "5.0.9", "6.0-alpha2"] {
            let yaml = render(version, true);
            assert!(
                yaml.contains("commitlog_sync_period: 10000ms\n"),
                "{version}"
            );
            assert!(yaml.contains("memtable_heap_space: 64MiB\n"), "{version}");
            assert!(
                yaml.contains("materialized_views_enabled: true\n"),
                "{version}"
            );
            assert!(yaml.contains("key_cache_size: 10MiB\n"), "{version}");
        }
    }

    #[test]
    fn node_identity_and_tokens() {
        let yaml = render("5.0.9", false);
        assert!(yaml.contains("cluster_name: 'it''s'\n"));
        assert!(yaml.contains("num_tokens: 2\ninitial_token: -9,5\n"));
        assert!(yaml.contains("  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n    parameters:\n      - seeds: \"127.0.1.1:7000\"\n"));
        assert!(yaml.contains("listen_address: 127.0.1.2\nrpc_address: 127.0.1.2\n"));
        assert!(!yaml.contains("memtable_heap_space"));
        assert!(yaml.contains("endpoint_snitch: SimpleSnitch\n"));
    }

    #[test]
    fn datacenters_use_the_gossiping_snitch_and_several_seeds() {
        let version = CassandraVersion::parse("5.0.9").unwrap();
        let seeds = [Ipv4Addr::new(127, 0, 11, 1), Ipv4Addr::new(127, 0, 11, 3)];
        let placement = Placement { dc: 2, rack: 1 };
        let yaml = cassandra_yaml(&NodeConfig {
            cluster_name: "dcs",
            version: &version,
            address: Ipv4Addr::new(127, 0, 11, 3),
            seeds: &seeds,
            gossiping_snitch: true,
            storage_port: 7000,
            native_port: 9042,
            tokens: &[1],
            memtable_heap_mib: None,
            key_cache_mib: None,
        });
        assert!(yaml.contains("endpoint_snitch: GossipingPropertyFileSnitch\n"));
        assert!(yaml.contains("      - seeds: \"127.0.11.1:7000,127.0.11.3:7000\"\n"));
        let properties = rackdc_properties(&placement.dc_name(), &placement.rack_name());
        let lines: Vec<&str> = properties.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(lines, ["dc=dc2", "rack=rack1", "prefer_local=false"]);
    }
}
