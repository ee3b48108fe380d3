//! `cqlbench run WORKLOAD …` and `cqlbench workloads`

use anyhow::{bail, Context};
use clap::Args;
use cqlbench_cluster::ClusterError;
use cqlbench_load::WORKLOADS;

pub use cqlbench_load::RunArgs;

#[derive(Debug, Args)]
pub struct WorkloadsArgs {}

/// clap has no pattern for `--workload.NAME=VALUE` flags, so they are collected by a catch-all positional,
/// which also swallows every flag after the first of them. When that happened, parse the command line
/// again without the workload parameters.
fn separate_workload_params(args: RunArgs) -> anyhow::Result<RunArgs> {
    if args
        .workload_params
        .iter()
        .all(|a| a.starts_with("--workload."))
    {
        return Ok(args);
    }
    let argv: Vec<String> = std::env::args().collect();
    let Some(run_at) = argv.iter().skip(1).position(|a| a == "run") else {
        return Ok(args);
    };
    Ok(RunArgs::parse_from(&argv[run_at + 2..])?)
}

/// Set once the run's own brief (from its summary) is written; a later error must not replace it.
static BRIEF_WRITTEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub fn execute(args: RunArgs) -> anyhow::Result<()> {
    let args = separate_workload_params(args)?;
    let outcome = execute_parsed(&args);
    let written = BRIEF_WRITTEN.load(std::sync::atomic::Ordering::Relaxed);
    if let (Some(path), Err(error), false) = (&args.brief_to, &outcome, written) {
        // A run that failed still leaves its brief: an orchestrator must see why, not an empty file.
        let client_id = args.client_id.parse().ok();
        let clients = args.clients.parse().unwrap_or(1);
        let brief = cqlbench_results::Brief::failed(&format!("{error:#}"), client_id, clients);
        brief
            .write(path)
            .with_context(|| format!("--brief-to {}", path.display()))?;
    }
    outcome
}

fn execute_parsed(args: &RunArgs) -> anyhow::Result<()> {
    let explicit_hosts = args.explicit_hosts();
    // Validate everything before touching any cluster, so bad input fails fast and alone.
    let placeholder = vec!["127.0.0.1".to_string()];
    let checked = args.to_options(if explicit_hosts.is_empty() {
        placeholder
    } else {
        explicit_hosts.clone()
    })?;
    if explicit_hosts.is_empty() {
        return run_on_embedded_cluster(args, checked.clients);
    }
    run_with_hosts(args, explicit_hosts, None)
}

/// With `cluster`, the local cqlbench cluster the run measures: its state (version, JDK, collector flags
/// the live JVMs reported, the JDK 25 shim if any) is kept beside the results as `cluster.json`.
fn run_with_hosts(
    args: &RunArgs,
    hosts: Vec<String>,
    cluster: Option<&cqlbench_cluster::ClusterState>,
) -> anyhow::Result<()> {
    let options = args.to_options(hosts)?;
    eprintln!(
        "cqlbench: {} on {} — results in {}",
        options.workload.info.name,
        options.hosts.join(", "),
        options.out_dir.display()
    );
    let mut print = |line: &str| eprintln!("{line}");
    let result = cqlbench_load::run(&options, &mut print)?;
    if let Some(state) = cluster {
        let path = result.out_dir.join(cqlbench_cluster::state::STATE_FILE);
        cqlbench_results::write_json(&path, state)?;
    }
    if let Some(path) = &args.brief_to {
        cqlbench_results::Brief::of(&result.summary)
            .write(path)
            .with_context(|| format!("--brief-to {}", path.display()))?;
        BRIEF_WRITTEN.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    println!("{}", result.table);
    println!("results: {}", result.out_dir.display());
    if result.summary.status == cqlbench_results::RunStatus::Interrupted {
        bail!(
            "interrupted; results so far are in {}",
            result.out_dir.display()
        );
    }
    Ok(())
}

/// No --host: the local cluster from `cqlbench cluster` if one is up, else a 1-node cluster for this run,
/// stopped afterwards (also after a failed or interrupted run).
fn run_on_embedded_cluster(args: &RunArgs, clients: u64) -> anyhow::Result<()> {
    use cqlbench_cluster::{ClusterSpec, ClusterState, Home, DEFAULT_CLUSTER_NAME};
    let home = Home::from_env();
    let contact_points = |state: &ClusterState| -> Vec<String> {
        state
            .running_contact_points()
            .iter()
            .map(|a| a.to_string())
            .collect()
    };
    if let Some(state) = ClusterState::load(&home, DEFAULT_CLUSTER_NAME)?.filter(|s| s.is_up()) {
        eprintln!(
            "cqlbench: using the local cluster '{DEFAULT_CLUSTER_NAME}' ({} node(s))",
            state.nodes.len()
        );
        return run_with_hosts(args, contact_points(&state), Some(&state));
    }
    if clients > 1 {
        bail!(
            "--clients {clients} needs --host, or a local cluster that is up (`cqlbench cluster up`): \
             each client would otherwise start a node of its own"
        );
    }
    eprintln!(
        "cqlbench: no --host and no local cluster is up: starting a 1-node Cassandra cluster for this run \
         (stopped afterwards; `cqlbench cluster up` keeps one running between runs)"
    );
    let spec = ClusterSpec {
        name: DEFAULT_CLUSTER_NAME.into(),
        ..ClusterSpec::default()
    };
    let mut print = |line: &str| eprintln!("{line}");
    // A Ctrl-C while the node starts must not leave it running: note it, let start-up finish, stop it.
    cqlbench_cluster::interrupt::defer();
    let outcome = cqlbench_cluster::with_cluster(&home, &spec, &mut print, |state, _| {
        run_with_hosts(args, contact_points(state), Some(state))
    });
    outcome.map_err(|error| match error.downcast_ref::<ClusterError>() {
        Some(ClusterError::InterruptedStart { .. }) => anyhow::anyhow!(
            "interrupted while the local node was starting; it has been stopped again"
        ),
        Some(_) => error.context("the local cluster for the run"),
        None => error,
    })
}

pub fn list_workloads(_args: WorkloadsArgs) -> anyhow::Result<()> {
    for w in WORKLOADS.iter() {
        println!("{}", w.name);
        println!("  {}", w.description);
        println!("  schema:  {}", w.schema);
        println!("  write:   {}", w.write);
        println!("  read:    {}", w.read);
        println!(
            "  defaults: read ratio {} (-r), consistency {} (--cl)",
            w.default_read_ratio, w.default_consistency
        );
        if w.params.is_empty() {
            println!("  parameters: none");
        } else {
            println!("  parameters (--workload.NAME=VALUE):");
            for p in w.params {
                println!("    {:<12} {:>6}  {}", p.name, p.default, p.help);
            }
        }
        println!();
    }
    Ok(())
}
