//! `cqlbench run` as one library call: a run on the given hosts, on the local cluster that is up, or
//! on a 1-node cluster started for it and stopped afterwards (also after a failed or interrupted
//! run). A run on a local cqlbench cluster keeps that cluster's `cluster.json` beside its results, and
//! `--brief-to` gets the run's brief — also when the run fails before it has a summary.

use cqlbench_cluster::{ClusterError, ClusterSpec, ClusterState, Home, DEFAULT_CLUSTER_NAME};
use cqlbench_load::{RunArgs, RunResult};
use cqlbench_metrics::LiveMetrics;
use cqlbench_results::Brief;

use crate::error::CampaignError;

/// Runs `cqlbench run`'s command line; the brief is written either way.
pub fn run(args: &RunArgs, progress: &mut dyn FnMut(&str)) -> Result<RunResult, CampaignError> {
    let outcome = run_checked(args, progress);
    if let Some(path) = &args.brief_to {
        let brief = match &outcome {
            Ok(result) => Brief::of(&result.summary),
            // A run that failed still leaves its brief: an orchestrator must see why, not an
            // empty file.
            Err(error) => Brief::failed(
                &error.to_string(),
                args.client_id.parse().ok(),
                args.clients.parse().unwrap_or(1),
            ),
        };
        brief
            .write(path)
            .map_err(|e| CampaignError::Run(format!("--brief-to {}: {e}", path.display())))?;
    }
    outcome
}

/// Checks every option before touching any cluster, so that bad input fails fast and alone.
fn run_checked(args: &RunArgs, progress: &mut dyn FnMut(&str)) -> Result<RunResult, CampaignError> {
    let explicit_hosts = args.explicit_hosts();
    let placeholder = vec!["127.0.0.1".to_string()];
    let checked = args.to_options(if explicit_hosts.is_empty() {
        placeholder
    } else {
        explicit_hosts.clone()
    })?;
    if let cqlbench_load::Workload::File(file) = &checked.workload {
        for note in &file.notes {
            progress(note);
        }
    }
    // Listening before anything starts: a port in use is refused with nothing left behind.
    let exporter = crate::live::start_exporter(checked.prometheus, progress)?;
    let live = exporter.as_ref().map(|e| e.metrics().clone());
    if let Some(live) = &live {
        live.set_labels(&[("client", checked.client_id.to_string())]);
    }
    let outcome = if explicit_hosts.is_empty() {
        run_on_local_cluster(args, checked.clients, live, progress)
    } else {
        run_with_hosts(args, explicit_hosts, None, live, progress)
    };
    crate::live::stop_exporter(exporter, checked.prometheus, progress);
    outcome
}

/// With `cluster`, the local cqlbench cluster the run measures: its state (version, JDK, collector
/// flags the live JVMs reported, the JDK 25 shim if any) is kept beside the results.
fn run_with_hosts(
    args: &RunArgs,
    hosts: Vec<String>,
    cluster: Option<&ClusterState>,
    live: Option<LiveMetrics>,
    progress: &mut dyn FnMut(&str),
) -> Result<RunResult, CampaignError> {
    let mut options = args.to_options(hosts)?;
    options.live = live;
    progress(&format!(
        "cqlbench: {} on {} — results in {}",
        options.workload.name(),
        options.hosts.join(", "),
        options.out_dir.display()
    ));
    let result = cqlbench_load::run(&options, progress)?;
    if let Some(state) = cluster {
        let path = result.out_dir.join(cqlbench_cluster::state::STATE_FILE);
        cqlbench_results::write_json(&path, state)?;
    }
    Ok(result)
}

fn running_contact_points(state: &ClusterState) -> Vec<String> {
    state
        .running_contact_points()
        .iter()
        .map(|a| a.to_string())
        .collect()
}

/// No --host: the local cluster from `cqlbench cluster` if one is up, else a 1-node cluster for this
/// run, stopped afterwards (also after a failed or interrupted run).
fn run_on_local_cluster(
    args: &RunArgs,
    clients: u64,
    live: Option<LiveMetrics>,
    progress: &mut dyn FnMut(&str),
) -> Result<RunResult, CampaignError> {
    let home = Home::from_env();
    if let Some(state) = ClusterState::load(&home, DEFAULT_CLUSTER_NAME)?.filter(|s| s.is_up()) {
        progress(&format!(
            "cqlbench: using the local cluster '{DEFAULT_CLUSTER_NAME}' ({} node(s))",
            state.nodes.len()
        ));
        return run_with_hosts(
            args,
            running_contact_points(&state),
            Some(&state),
            live,
            progress,
        );
    }
    if clients > 1 {
        return Err(CampaignError::Run(format!(
            "--clients {clients} needs --host, or a local cluster that is up (`cqlbench cluster up`): \
             each client would otherwise start a node of its own"
        )));
    }
    progress(
        "cqlbench: no --host and no local cluster is up: starting a 1-node Cassandra cluster for this run \
         (stopped afterwards; `cqlbench cluster up` keeps one running between runs)",
    );
    let spec = ClusterSpec {
        name: DEFAULT_CLUSTER_NAME.into(),
        ..ClusterSpec::default()
    };
    // A Ctrl-C while the node starts must not leave it running: note it, let start-up finish, stop it.
    cqlbench_cluster::interrupt::defer();
    let outcome = cqlbench_cluster::with_cluster(&home, &spec, progress, |state, progress| {
        run_with_hosts(
            args,
            running_contact_points(state),
            Some(state),
            live.clone(),
            progress,
        )
    });
    outcome.map_err(|error| match error {
        CampaignError::Cluster(ClusterError::InterruptedStart { .. }) => CampaignError::Run(
            "interrupted while the local node was starting; it has been stopped again".into(),
        ),
        CampaignError::Cluster(error) => CampaignError::LocalCluster(error),
        other => other,
    })
}
