//! `cqlbench k8s render PLAN.toml -o DIR [--start-at TIME]`, `cqlbench k8s run PLAN.toml -o DIR`,
//! `cqlbench k8s delete PLAN.toml`

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};

const K8S_HELP: &str = r#"The plan is a campaign plan (see `cqlbench campaign --help`: [cluster], [[config]], [load],
rates or [sweep]) plus a [k8s] table:

  [k8s]
  operator = "k8ssandra"              # what runs the Cassandra nodes [default: k8ssandra]:
                                      #   k8ssandra    a K8ssandraCluster (K8ssandra's operators needed)
                                      #   statefulset  a headless Service and a StatefulSet per rack
  cassandra-image = "cassandra:5.0.5" # statefulset only [default: cqlbench/cassandra:<version>-jdk<N>,
                                      #   as `cqlbench k8s image cassandra` builds it]; the official
                                      #   image's conventions are followed (CASSANDRA_SEEDS,
                                      #   MAX_HEAP_SIZE, JVM_EXTRA_OPTS), so it may be named
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
  pod-monitor = true                  # also a Prometheus Operator PodMonitor [default: false]
  metrics-linger = "15s"              # client pods serve their last figures this long, for one
                                      #   scrape [default: 15s]; "0s" where nothing scrapes them

Written to DIR (stable names, sorted keys; the same plan renders the same bytes):
  00-namespace.yaml, 01-results-pvc.yaml
  NN-<cluster>/00-k8ssandracluster.yaml     one K8ssandraCluster per [[config]] (k8ssandra), or
  NN-<cluster>/00-service.yaml              its headless Service <cluster>-<dc>-service and
  NN-<cluster>/00-statefulset-rackN.yaml    one StatefulSet per rack (statefulset)
  NN-<cluster>/NN-job-<cell>.yaml           populate, then one Indexed Job per cell (max, p35 / r<rate>)
  99-podmonitor.yaml                        with pod-monitor = true

Live metrics: every client pod serves `cqlbench run --prometheus` figures on its container port named
`metrics` (9464, /metrics), with the prometheus.io/scrape, port and path annotations that
annotation-based scrape configs read; the series carry client="<completion index>". Jobs' pods have no
Service, so the Prometheus Operator needs the PodMonitor (it selects app.kubernetes.io/managed-by=cqlbench
and cqlbench.io/cell). examples/grafana-dashboard.json charts them.

Client pods start their load at the pod template's cqlbench.io/start-at annotation (set with --start-at).
A sweep's latency cells carry an empty cqlbench.io/rate annotation: their rate is a fraction
(cqlbench.io/rate-fraction) of what the `max` Job measured: `cqlbench k8s run` fills both in; with
the files alone, fill them in before applying them.

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
    /// Write a plan's Kubernetes manifests (datacenters, load Jobs) to a directory
    Render(RenderArgs),
    /// Run a plan's campaign on Kubernetes: per configuration, its datacenter, the load Jobs in
    /// order, the results and GC logs collected, then a report like a local campaign's
    Run(RunArgs),
    /// Build a campaign directory and its report from results collected by hand under DIR/raw (after
    /// `k8s run --collect none`)
    Report(ReportArgs),
    /// Delete what a plan's manifests create (Jobs, datacenters, the results volume) and wait until
    /// it is gone; the namespace is kept
    Delete(DeleteArgs),
    /// Build container images as OCI archives, without a registry or a container daemon
    #[command(subcommand)]
    Image(ImageCommand),
    /// The entry point of `k8s image cassandra`'s image: configure this pod's Cassandra node from the
    /// environment (CASSANDRA_SEEDS, CASSANDRA_DC, MAX_HEAP_SIZE, JVM_EXTRA_OPTS, ...) and run it
    Node,
}

const IMAGE_LOAD_HELP: &str = r#"The image holds this cqlbench binary as /usr/local/bin/cqlbench (the entry point; the Jobs pass
`run ...`) on a root filesystem of Debian's packages of this machine's release: the C runtime and
OpenSSL it links, CA certificates, and the shell, tar and sleep that `k8s run` uses in the pod that
reads the results volume. It runs as 65532:65532, as the Jobs' securityContext asks. The packages
come through a private apt configuration from the mirror this machine already uses, unpacked, never
installed, and are kept in the cache (~/.cache/cqlbench/images) for the next build.

The archive is an OCI image layout with a docker-archive index beside it. Load it with
  ctr -n k8s.io images import FILE        (containerd, as a kubelet uses it)
  docker load -i FILE                     podman load -i FILE
or push it to a registry the cluster pulls from:
  skopeo copy oci-archive:FILE docker://registry.example/cqlbench:0.1.0
  (or docker load, then docker tag and docker push)
and name that in the plan's [k8s] image.

Examples:
  cqlbench k8s image load -o cqlbench-load.tar
  cqlbench k8s image load -o cqlbench-load.tar --name registry.example/team/cqlbench:0.1.0"#;

#[derive(Debug, Subcommand)]
enum ImageCommand {
    /// The load client's image (this cqlbench binary), as an OCI archive
    #[command(after_help = IMAGE_LOAD_HELP)]
    Load(ImageLoadArgs),
    /// A Cassandra node's image (a version's jars and a JDK, as `cluster up` gets them), as an OCI
    /// archive
    #[command(after_help = IMAGE_CASSANDRA_HELP)]
    Cassandra(ImageCassandraArgs),
}

const IMAGE_CASSANDRA_HELP: &str = r#"The image holds Cassandra's jars (from Maven Central with mvn, as `cluster up` fetches them)
in /opt/cassandra/lib, the JDK `cluster up` would start it on in /opt/java, and this cqlbench
binary, whose `cqlbench k8s node` is the entry point: it reads the official cassandra image's
environment (CASSANDRA_CLUSTER_NAME, CASSANDRA_SEEDS, CASSANDRA_DC, CASSANDRA_RACK,
CASSANDRA_LISTEN_ADDRESS, MAX_HEAP_SIZE, JVM_EXTRA_OPTS), writes the node's cassandra.yaml as
`cluster up` writes a local node's, and becomes the JVM. It runs as cassandra (999:999) in
/var/lib/cassandra, the data volume, where the GC log goes too. The StatefulSets of
`operator = "statefulset"` plans name it by default (cqlbench/cassandra:<version>-jdk<N>).

Pairs `cluster up` refuses are refused here too; 5.0 and 6.0 on JDK 25, which need cqlbench's
Security Manager shim, are not in images yet.

Examples:
  cqlbench k8s image cassandra -o cassandra.tar
  cqlbench k8s image cassandra --cassandra 4.1.9 --jdk 11 -o cassandra-4.1.tar"#;

#[derive(Debug, Args)]
struct ImageCassandraArgs {
    /// The archive to write (replaced if it exists)
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    out: PathBuf,

    /// Cassandra version
    #[arg(long, value_name = "VERSION", default_value = cqlbench_cluster::version::DEFAULT_CASSANDRA_VERSION)]
    cassandra: String,

    /// JDK major [default: the version's default, as for `cluster up`]
    #[arg(long, value_name = "N")]
    jdk: Option<u32>,

    /// The image's name [default: cqlbench/cassandra:<version>-jdk<N>]
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
}

#[derive(Debug, Args)]
struct ImageLoadArgs {
    /// The archive to write (replaced if it exists)
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    out: PathBuf,

    /// The image's name: the one the plan's [k8s] image gives
    #[arg(long, value_name = "NAME", default_value = DEFAULT_LOAD_IMAGE)]
    name: String,
}

/// The load image's name by default (examples/k8s-live.toml's `image`).
const DEFAULT_LOAD_IMAGE: &str = concat!("cqlbench/cqlbench:", env!("CARGO_PKG_VERSION"));

const RUN_HELP: &str = r#"What happens, one configuration at a time:
  1. the namespace and the results volume are applied (server-side apply, field manager cqlbench);
  2. the configuration's datacenter is applied: its K8ssandraCluster, cqlbench waiting for the
     datacenter's Ready; or its Service and StatefulSets, one rack after the other, each waited
     for until all its pods serve CQL;
  3. on every Cassandra pod, the JVM's own GC log must say it runs the planned collector and heap
     (`Using Shenandoah`, `Heap Max Capacity: 16G`), or nothing is loaded;
  4. the load Jobs run one after the other (populate, max, then the latency cells); each Job's
     clients start together --start-delay after its creation; a sweep's latency Job gets its
     fraction of what the max Job's clients achieved (their briefs, read from the pods' status);
  5. the clients' results (from the results volume, through a pod that mounts it) and every
     Cassandra pod's GC log are copied to OUT/raw/ with `exec`;
  6. the datacenter is deleted (unless --keep-clusters), with a StatefulSet's pods and data volumes,
     and the next configuration starts.
At the end, OUT holds the same layout as a local campaign (clients merged exactly, per-node GC
analysis of each cell) with report.md and report.html.

A Job that already exists is not created again: a complete one is kept (so a second `k8s run`
resumes), a running one is waited for, a failed one stops the run (delete it to run it again).

--collect none reads nothing from inside pods (for clusters where exec is forbidden): steps 3
and 5 are skipped and results stay on the volume; copy them by hand, then `cqlbench k8s report`
writes the same directory and report (its --help shows the layout).

Examples:
  cqlbench k8s run examples/k8s-gc.toml -o k8s-gc-results
  cqlbench k8s run examples/k8s-gc.toml -o k8s-gc-results --kubeconfig ~/.kube/eks --keep-clusters"#;

#[derive(Debug, Args)]
#[command(after_help = RUN_HELP)]
struct RunArgs {
    /// The plan (TOML): a campaign plan with a [k8s] table
    #[arg(value_name = "PLAN.toml")]
    plan: PathBuf,

    /// Directory for the results and the report (created if missing)
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    out: PathBuf,

    /// Kubeconfig file [default: KUBECONFIG, ~/.kube/config, or the pod's service account]
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,

    /// How results and GC logs are read: exec (into the pods) or none
    #[arg(long, value_name = "HOW", default_value = "exec")]
    collect: String,

    /// Time between a Job's creation and its clients' common start (pod scheduling, image pull)
    #[arg(long = "start-delay", value_name = "DURATION", default_value = "60s")]
    start_delay: String,

    /// How long a datacenter may take to become ready (and to be deleted)
    #[arg(long = "ready-timeout", value_name = "DURATION", default_value = "30m")]
    ready_timeout: String,

    /// How long a load Job may run beyond its start delay, warm-up and duration
    #[arg(long = "job-slack", value_name = "DURATION", default_value = "15m")]
    job_slack: String,

    /// How long the populate Job may take
    #[arg(
        long = "populate-timeout",
        value_name = "DURATION",
        default_value = "6h"
    )]
    populate_timeout: String,

    /// Keep each configuration's datacenter when its Jobs are done
    #[arg(long = "keep-clusters")]
    keep_clusters: bool,

    /// Between two looks at a cluster's or a Job's status
    #[arg(long, value_name = "DURATION", default_value = "2s")]
    poll: String,
}

const REPORT_HELP: &str = r#"DIR/raw must hold what `k8s run` collects, as it was on the pods:
  DIR/raw/<cluster>/<cell>/client-<i>/    each client's result directory, from the results volume
                                          (/results/<cluster>/<cell>/client-<i>)
  DIR/raw/<cluster>/nodes/<pod>/gc.log*   each Cassandra pod's GC log (/var/lib/cassandra/gc.log*)
<cluster> is a configuration's cluster name (k8s-gc-1, ...), <cell> a Job's cell (max, p35).
For example:
  kubectl -n cqlbench cp <a pod mounting cqlbench-results>:/results/k8s-gc-1 DIR/raw/k8s-gc-1
  kubectl -n cqlbench cp k8s-gc-1-dc1-rack1-sts-0:/var/lib/cassandra/gc.log \
      DIR/raw/k8s-gc-1/nodes/k8s-gc-1-dc1-rack1-sts-0/gc.log -c cassandra
Then DIR/<config>/<rate>/ holds the clients merged and each node's GC analysis of the cell, and
DIR/report.md and DIR/report.html the report, as after a local campaign."#;

#[derive(Debug, Args)]
#[command(after_help = REPORT_HELP)]
struct ReportArgs {
    /// The plan (TOML) the results were run with
    #[arg(value_name = "PLAN.toml")]
    plan: PathBuf,

    /// The results directory (with raw/ below it)
    #[arg(value_name = "DIR")]
    dir: PathBuf,
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
        K8sCommand::Run(args) => run(args),
        K8sCommand::Report(args) => report(args),
        K8sCommand::Delete(args) => delete(args),
        K8sCommand::Image(ImageCommand::Load(args)) => image_load(args),
        K8sCommand::Image(ImageCommand::Cassandra(args)) => image_cassandra(args),
        K8sCommand::Node => node(),
    }
}

fn image_cassandra(args: ImageCassandraArgs) -> Result<()> {
    use cqlbench_cluster::{jdk, CassandraVersion, JdkChoice};
    let version = CassandraVersion::parse(&args.cassandra)
        .map_err(|e| anyhow::anyhow!("--cassandra: {e}"))?;
    if version.is_3_11() {
        // As k8s plans refuse it: their GC logging is JDK 9+'s, and 3.11 runs on JDK 8 alone.
        anyhow::bail!(
            "--cassandra {}: Cassandra 3.11 runs on JDK 8 only, and Kubernetes runs render JDK 9+ GC logging: images hold Cassandra 4.0 or newer",
            version.raw
        );
    }
    let major = args.jdk.unwrap_or_else(|| version.default_jdk());
    version.check_jdk(major)?;
    if cqlbench_cluster::compat::needed(&version, major) {
        anyhow::bail!(
            "--jdk {major}: Cassandra {} on JDK {major} needs cqlbench's Security Manager shim, which images do not carry yet (use --jdk {})",
            version.raw,
            version.default_jdk()
        );
    }
    let name_text = args
        .name
        .unwrap_or_else(|| cqlbench_k8s::plan::cassandra_image_name(&version.raw, major));
    let name =
        cqlbench_image::ImageName::parse(&name_text).map_err(|e| anyhow::anyhow!("--name: {e}"))?;
    let out = cqlbench_image::check_writable(&args.out)?;
    let binary = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("finding this cqlbench binary: {e}"))?;
    let home = cqlbench_cluster::Home::from_env();
    let mut progress = |line: &str| eprintln!("{line}");
    let distribution = cqlbench_cluster::distribution::ensure(&home, &version, &mut progress)?;
    let jdk = jdk::resolve(&home, &JdkChoice::Major(major), major, &mut progress)?;
    let parts = cqlbench_image::CassandraParts {
        version: &version.raw,
        jdk_major: major,
        lib_dir: &distribution.lib_dir,
        jdk_home: &jdk.home,
    };
    let cache = home.root().join("images");
    let written =
        cqlbench_image::cassandra_image(&cache, &binary, &parts, &name, &out, &mut progress)?;
    println!("{written}");
    Ok(())
}

/// The Cassandra image's entry point: this pod's node configured from its environment, then the JVM
/// in this process's place.
fn node() -> Result<()> {
    use cqlbench_cluster::pod::{PodNode, JAVA_HOME, NODE_DIR};
    use std::os::unix::process::CommandExt;
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    let env = |name: &str| std::env::var(name).ok();
    let node = PodNode::from_env(&env, &hostname)?;
    let mut progress = |line: &str| eprintln!("{line}");
    let seeds = node.seed_addresses(&hostname, &mut progress)?;
    let args = node.prepare(std::path::Path::new(NODE_DIR), &seeds)?;
    let java = std::path::Path::new(JAVA_HOME).join("bin/java");
    eprintln!(
        "cqlbench k8s node: Cassandra {} on JDK {} at {}, seeds {seeds:?}: {} {}",
        node.version.raw,
        node.jdk_major,
        node.address,
        java.display(),
        args.join(" ")
    );
    let error = std::process::Command::new(&java)
        .args(&args)
        .current_dir(NODE_DIR)
        .exec();
    anyhow::bail!("starting {}: {error}", java.display())
}

fn image_load(args: ImageLoadArgs) -> Result<()> {
    let name =
        cqlbench_image::ImageName::parse(&args.name).map_err(|e| anyhow::anyhow!("--name: {e}"))?;
    let out = cqlbench_image::check_writable(&args.out)?;
    let binary = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("finding this cqlbench binary: {e}"))?;
    let cache = cqlbench_cluster::Home::from_env().root().join("images");
    let mut progress = |line: &str| eprintln!("{line}");
    let written = cqlbench_image::load_image(&cache, &binary, &name, &out, &mut progress)?;
    println!("{written}");
    Ok(())
}

/// A one-thread runtime and a Kubernetes client made on it, for the commands that talk to the API.
fn connect(
    kubeconfig: Option<&std::path::Path>,
) -> Result<(tokio::runtime::Runtime, cqlbench_k8s::Client)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let client = runtime.block_on(cqlbench_k8s::api::client(kubeconfig))?;
    Ok((runtime, client))
}

fn duration_arg(name: &str, text: &str) -> Result<std::time::Duration> {
    cqlbench_units::parse_duration(text).map_err(|e| anyhow::anyhow!("--{name}: {e}"))
}

fn run(args: RunArgs) -> Result<()> {
    use cqlbench_k8s::run::{Collect, RunOptions};
    let collect = match args.collect.as_str() {
        "exec" => Collect::Exec,
        "none" => Collect::None,
        other => anyhow::bail!("--collect {other:?}: expected exec or none"),
    };
    let mut options = RunOptions::new(args.out.clone());
    options.collect = collect;
    options.start_delay = duration_arg("start-delay", &args.start_delay)?;
    options.ready_timeout = duration_arg("ready-timeout", &args.ready_timeout)?;
    options.job_slack = duration_arg("job-slack", &args.job_slack)?;
    options.populate_timeout = duration_arg("populate-timeout", &args.populate_timeout)?;
    options.poll = duration_arg("poll", &args.poll)?;
    options.keep_clusters = args.keep_clusters;
    if options.poll.is_zero() {
        anyhow::bail!("--poll must be longer than 0");
    }
    let plan = cqlbench_k8s::load_plan(&args.plan)?;
    let (runtime, client) = connect(args.kubeconfig.as_deref())?;
    let mut progress = |line: &str| eprintln!("{line}");
    let outcome = runtime.block_on(cqlbench_k8s::run::run(
        &client,
        &plan,
        &options,
        &mut progress,
    ))?;
    let created = outcome.jobs.iter().filter(|j| j.created).count();
    println!(
        "{} Job(s) done ({created} run now, {} kept from an earlier run)",
        outcome.jobs.len(),
        outcome.jobs.len() - created
    );
    for job in &outcome.jobs {
        let rate = job
            .rate
            .map_or("unthrottled".to_string(), |r| format!("at {r} ops/s"));
        println!(
            "  {}: {rate}, achieved {:.1} ops/s over {} client(s)",
            job.job,
            job.achieved_rate,
            job.briefs.len()
        );
    }
    if outcome.collected {
        println!("results and report: {}", args.out.display());
    } else {
        println!(
            "briefs in {}; results are on the volume cqlbench-results (--collect none)",
            args.out.join("raw").display()
        );
    }
    Ok(())
}

fn report(args: ReportArgs) -> Result<()> {
    let plan = cqlbench_k8s::load_plan(&args.plan)?;
    let raw = args.dir.join("raw");
    if !raw.is_dir() {
        anyhow::bail!(
            "{} does not exist: the collected results go there (see `cqlbench k8s report --help`)",
            raw.display()
        );
    }
    let mut progress = |line: &str| eprintln!("{line}");
    cqlbench_k8s::collect::assemble(&plan, &args.dir, &mut progress)?;
    println!("results and report: {}", args.dir.display());
    Ok(())
}

fn delete(args: DeleteArgs) -> Result<()> {
    let timeout = cqlbench_units::parse_duration(&args.timeout)
        .map_err(|e| anyhow::anyhow!("--timeout: {e}"))?;
    let plan = cqlbench_k8s::load_plan(&args.plan)?;
    let (runtime, client) = connect(args.kubeconfig.as_deref())?;
    let mut progress = |line: &str| eprintln!("{line}");
    let outcome = runtime.block_on(cqlbench_k8s::delete::delete(
        &client,
        &plan,
        timeout,
        &mut progress,
    ))?;
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
