//! `cqlbench k8s render PLAN.toml -o DIR [--start-at TIME]`

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};

const K8S_HELP: &str = r#"The plan is a campaign plan (see `cqlbench campaign --help`: [cluster], [[config]], [load],
rates or [sweep]) plus a [k8s] table:

  [k8s]
  namespace = "cqlbench"              # DNS-1123 label; every object goes here
  storage-class = "premium-rwo"       # DNS-1123 subdomain, for the Cassandra data volumes
  storage-size = "100Gi"              # per node
  cpu = "4"                           # per Cassandra pod (requests = limits)
  memory = "16Gi"                     # per Cassandra pod; must exceed the heap
  zones = ["us-east1-b", "us-east1-c", "us-east1-d"]   # one rack per zone [default: one rack]
  datacenter = "dc1"                  # [default: dc1]
  client-pods = 3                     # load pods per cell (Indexed Job completions = parallelism)
  client-cpu = "2"                    # per client pod [default: 1]
  client-memory = "2Gi"               # per client pod [default: 1Gi]
  image = "registry.example/cqlbench:0.1.0"   # built from the repository's Dockerfile
  results-storage-class = "nfs"       # ReadWriteMany class of the results volume [default: the cluster's]
  results-size = "10Gi"               # [default: 10Gi]

Written to DIR (stable names, sorted keys; the same plan renders the same bytes):
  00-namespace.yaml, 01-results-pvc.yaml
  NN-<cluster>/00-k8ssandracluster.yaml     one K8ssandraCluster per [[config]]
  NN-<cluster>/NN-job-<cell>.yaml           populate, then one Indexed Job per cell (max, p35 / r<rate>)

Client pods start their load at the pod template's cqlbench.io/start-at annotation (set with --start-at).
A sweep's latency cells carry an empty cqlbench.io/rate annotation: their rate is a fraction
(cqlbench.io/rate-fraction) of what the `max` Job measured, so fill it in before applying them.

Examples:
  cqlbench k8s render examples/k8s-gc.toml -o k8s-gc --start-at 2026-11-23T09:00:00Z
  kubectl apply --server-side -f k8s-gc/00-namespace.yaml -f k8s-gc/01-results-pvc.yaml"#;

#[derive(Debug, Args)]
pub struct K8sArgs {
    #[command(subcommand)]
    command: K8sCommand,
}

#[derive(Debug, Subcommand)]
enum K8sCommand {
    /// Write a plan's Kubernetes manifests (K8ssandraClusters, load Jobs) to a directory
    Render(RenderArgs),
    /// Delete what a plan's manifests create (Jobs, K8ssandraClusters, the results volume) and wait until
    /// it is gone; the namespace is kept
    Delete(DeleteArgs),
}

#[derive(Debug, Args)]
struct DeleteArgs {
    /// The plan (TOML) whose objects to delete
    #[arg(value_name = "PLAN.toml")]
    plan: PathBuf,

    /// Kubeconfig file [default: KUBECONFIG, ~/.kube/config, or the pod's service account]
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,

    /// How long to wait for everything to be gone (the operator tears a cluster down first)
    #[arg(long, value_name = "DURATION", default_value = "10m")]
    timeout: String,
}

#[derive(Debug, Args)]
#[command(after_help = K8S_HELP)]
struct RenderArgs {
    /// The plan (TOML): a campaign plan with a [k8s] table
    #[arg(value_name = "PLAN.toml")]
    plan: PathBuf,

    /// Directory for the manifests (created if missing)
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    out: PathBuf,

    /// When the client pods start their load (RFC 3339, e.g. 2026-11-23T09:00:00Z) [default: left empty]
    #[arg(long = "start-at", value_name = "TIME")]
    start_at: Option<String>,
}

pub fn execute(args: K8sArgs) -> Result<()> {
    match args.command {
        K8sCommand::Render(args) => render(args),
        K8sCommand::Delete(args) => delete(args),
    }
}

fn delete(args: DeleteArgs) -> Result<()> {
    let timeout = cqlbench_units::parse_duration(&args.timeout)
        .map_err(|e| anyhow::anyhow!("--timeout: {e}"))?;
    let plan = cqlbench_k8s::load_plan(&args.plan)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let outcome = runtime.block_on(async {
        let client = cqlbench_k8s::delete::client(args.kubeconfig.as_deref()).await?;
        let mut progress = |line: &str| eprintln!("{line}");
        cqlbench_k8s::delete::delete(&client, &plan, timeout, &mut progress).await
    })?;
    println!(
        "deleted {} object(s); {} did not exist (namespace {} kept)",
        outcome.deleted.len(),
        outcome.absent.len(),
        plan.k8s.namespace
    );
    Ok(())
}

fn render(args: RenderArgs) -> Result<()> {
    let plan = cqlbench_k8s::load_plan(&args.plan)?;
    let options = cqlbench_k8s::RenderOptions {
        start_at: args.start_at,
    };
    let manifests = cqlbench_k8s::render(&plan, &options)?;
    cqlbench_k8s::write(&manifests, &args.out)?;
    for manifest in &manifests {
        println!("{}", args.out.join(&manifest.path).display());
    }
    if options.start_at.is_none() {
        eprintln!(
            "note: the load Jobs' cqlbench.io/start-at annotation is empty; render with --start-at TIME"
        );
    }
    Ok(())
}
