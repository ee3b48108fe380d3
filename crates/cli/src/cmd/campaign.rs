//! `cqlbench campaign PLAN.toml [-o DIR] [--dry-run]`

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use cqlbench_campaign::{live, matrix, CampaignError, CampaignOptions};
use cqlbench_cluster::Home;

const PLAN_HELP: &str = r#"The plan (TOML):

  [cluster]                   # shared by every configuration (all keys optional)
  nodes = 1
  cassandra = "5.0.9"         # any cassandra-all on Maven Central: 3.11.x, 4.0.x, 4.1.x, 5.0.x, 6.0-alpha2
  jdk = 17                    # 8, 11, 17, 21, 25 or a JDK directory [default: the version's;
                              # 3.11 runs on 8 only, JDK 8 has neither Shenandoah nor ZGC]
  heap = "1G"
  gc = "g1"                   # g1, zgc, zgc-generational, shenandoah, shenandoah-generational (JDK 25+), cms, parallel
  gc-threads = 2              # ParallelGCThreads = ConcGCThreads
  gc-profile = "shenandoah-tuned"
  jvm-opts = ["-XX:+AlwaysPreTouch"]
  force-jdk = false           # run a Cassandra/JDK pair outside the verified table
  base-ip = "127.0.0.1"       # node i listens on base-ip + (i-1)
  num-tokens = 16
  start-timeout = "180s"
  name = "seed-004"           # clusters are named <name>-1, <name>-2, ... (one per configuration)
                              # [default: the plan file's name]

  [[config]]                  # one per row of the tables; overrides [cluster]
  name = "Shenandoah jdk17"   # the row label; its directory is the name with spaces as '-'
  gc = "shenandoah"           # also: cassandra, jdk, force-jdk, heap, gc-threads, gc-profile,
                              # jvm-opts (added to the cluster's)

  [load]
  workload = "BasicTimeSeries"
  args = "-c 50 --pg sequence -t 8 -r 0.2 --populate 200000"
                              # any `cqlbench run` options, as on its command line, except
                              # --rate, -d, -n, --warmup, -o and --host (the campaign sets them)
                              # and --clients/--client-id/--start-at (one client per cell);
                              # --populate runs once per configuration, before its first cell
  rates = [25000, 40000]      # ops/s, ascending: one cell per rate (x repeats)
  duration = "30m"            # measured time per cell
  warmup = "1m"               # per cell, excluded from the figures
  repeats = 1                 # > 1 adds a level: <rate>/<repeat>

  Instead of rates, one of:
  [sweep]                     # seed 001: an unthrottled run finds the maximum ...
  fractions = [0.35, 0.7]     # ... then latency runs at these fractions of it
  max-duration = "5m"         # length of the unthrottled run [default: duration]

  [slo]                       # capacity at an SLO: bisection between a good and a bad rate for
  p99-ms = 10                 # the highest rate whose p99 of reads and of writes stays under this,
  low = 1000                  # with the rate kept and nothing failed; each probe is a full cell
  high = 20000
  probes = 5

  [validity]                  # when a cell is doubtful (summary.json validity; `cqlbench run --help`):
  other-cpu = 0.15            # a second is busy when other processes use this share of all cores,
  busy-share = 0.15           # doubtful when busy seconds reach this share of the window; also
  steal = 0.05                # steal time, client-cpu (0.9 of its load threads' cores),
                              # lateness-p99-ms (5) and swap-pages-per-s (1)

  [cost]                      # prices for the report's Cost section (seed 001's price/performance):
  node-hourly = 0.504         # one node for an hour (required in [cost])
  client-hourly = 0.1         # one load client for an hour (default 0)
  cluster-monthly = 73        # a fixed monthly fee, spread over 730 hours (default 0)
  currency = "USD"            # (default USD)

Before the first cell, the quick machine probe (`cqlbench probe --quick`: sysbench and fio, about
20 s) characterises the machine; --no-probe skips it.

Results (DIR, default ./cqlbench-campaign-<plan name>):
  plan.toml, environment.json   the plan, and the machine and software it ran on (with the
                                machine probe and the [cost] prices)
  tables.txt                    the seeds' four tables, the windows their p99s were taken over,
                                then the result in one sentence computed from them (the top
                                rate's write Average p99, worst against best)
  <config>/jvm-flags.json       every node's effective JVM flags (jcmd VM.flags), and the JDK 25
                                Security Manager shim if the nodes run with it (else null)
  <config>/populate/            the populate run
  <config>/<rate>[/<repeat>]/   one cell: summary.json, intervals.csv, *.hlog (see `cqlbench run
                                --help`), and per node node<i>/: gc.log (the lines of the measured
                                window), gc-analysis.json, figures.json (process CPU per successful
                                operation, GC threads' CPU share, flushed and compacted bytes,
                                write amplification)

A cell is written when it completes (built as <config>/.<rate>.partial, then renamed). Running the
same plan into the same directory skips finished cells; Ctrl-C stops the current cell, discards it,
and stops the cluster. A cell whose result is doubtful (taken while other processes used the CPU,
the hypervisor stole time, or the client was saturated: summary.json validity) is marked † in the
report's tables with its reasons in a footnote; --retry-doubtful runs exactly those cells again,
keeping each doubtful result beside as <config>/<rate>.doubtful-<n>.

Examples:
  cqlbench campaign examples/seed-000-one-machine.toml --dry-run
  cqlbench campaign examples/seed-004-g1-vs-shenandoah.toml -o results/seed-004"#;

#[derive(Debug, Args)]
#[command(after_help = PLAN_HELP)]
pub struct CampaignArgs {
    /// The plan (TOML; the format is below)
    #[arg(value_name = "PLAN.toml")]
    plan: PathBuf,

    /// Result directory; the same directory resumes a campaign [default: ./cqlbench-campaign-<plan>]
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    out: Option<PathBuf>,

    /// Print the matrix of cells and the estimated time, start nothing
    #[arg(long)]
    dry_run: bool,

    /// Serve the current cell's live figures for Prometheus at http://ADDR/metrics (labelled
    /// config and rate), with the campaign's progress; e.g. 127.0.0.1:9464 (`cqlbench run --help`
    /// lists the series)
    #[arg(long, value_name = "ADDR")]
    prometheus: Option<String>,

    /// Allow --prometheus on an address other than loopback
    #[arg(long = "prometheus-public")]
    prometheus_public: bool,

    /// How long --prometheus keeps serving after the campaign, so the last scrape sees the final counts
    #[arg(
        long = "prometheus-linger",
        value_name = "DURATION",
        default_value = "5s"
    )]
    prometheus_linger: String,

    /// Skip the quick machine probe (sysbench and fio, about 20 s) taken before the first cell
    #[arg(long = "no-probe")]
    no_probe: bool,

    /// Run again the finished cells whose result is doubtful (summary.json validity: the machine was
    /// not quiet); each doubtful result is kept beside the new one as <cell>.doubtful-<n>
    #[arg(long = "retry-doubtful")]
    retry_doubtful: bool,
}

pub fn execute(args: CampaignArgs) -> Result<()> {
    let plan = cqlbench_campaign::load_plan(&args.plan)?;
    let prometheus = cqlbench_load::args::prometheus_options(
        args.prometheus.as_deref(),
        args.prometheus_public,
        &args.prometheus_linger,
    )?;
    let dir = args.out.clone().unwrap_or_else(|| {
        let stem = args
            .plan
            .file_stem()
            .map_or("plan".into(), |s| s.to_string_lossy().to_string());
        PathBuf::from(format!("cqlbench-campaign-{stem}"))
    });
    if args.dry_run {
        print!("{}", matrix::describe(&plan, &dir));
        return Ok(());
    }
    eprintln!(
        "cqlbench campaign: {} configuration(s), results in {} (estimated {})",
        plan.configs.len(),
        dir.display(),
        matrix::format_duration(matrix::estimate(&plan))
    );
    let home = Home::from_env();
    let mut progress = |line: &str| eprintln!("{line}");
    let exporter = live::start_exporter(prometheus, &mut progress)?;
    let options = CampaignOptions {
        live: exporter.as_ref().map(|e| e.metrics().clone()),
        probe: !args.no_probe,
        retry_doubtful: args.retry_doubtful,
    };
    let outcome = cqlbench_campaign::run(&plan, &dir, &home, &options, &mut progress);
    live::stop_exporter(exporter, prometheus, &mut progress);
    match outcome {
        Ok(outcome) => {
            println!("{}", outcome.tables);
            println!(
                "{} cell(s) run, {} already finished; results: {}",
                outcome.ran,
                outcome.skipped,
                dir.display()
            );
            println!("report: {}", dir.join("report.html").display());
            println!("{}", outcome.wall.describe());
            Ok(())
        }
        Err(CampaignError::Interrupted) => {
            anyhow::bail!(
                "interrupted: finished cells are kept in {}; run the same command again to resume",
                dir.display()
            )
        }
        Err(error) => Err(error.into()),
    }
}
