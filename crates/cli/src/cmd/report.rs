//! `cqlbench report`: the seeds' tables and charts from result directories.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use cqlbench_results::{Probe, PROBE_FILE, SUMMARY_FILE};

const REPORT_HELP: &str = "\
A campaign directory holds one result directory (as `cqlbench run -o` writes it) per configuration
and rate:

  DIR/<config>/<rate>/summary.json            e.g. DIR/G1-jdk17/25000/summary.json
  DIR/<config>/<rate>/<repeat>/summary.json   with repeats (averaged; Max p99 takes the largest)

The report has seed 000's four tables (Throughput; Writes Average p99; Reads Average p99; Max p99,
config x rate), the percentiles of every cell, and charts: p99 and p99.9 against rate, offered vs
achieved throughput, and each cell's corrected p99 second by second. report.html is self-contained
(inline SVG, no script, no network).

`cqlbench report merge DIR... -o OUT` adds up the result directories of the load clients of one
run (`cqlbench run --clients N --client-id I --start-at T`) into one result directory that reads
like a single run (see `cqlbench report merge --help`).

Examples:
  cqlbench report results/gc-comparison
  cqlbench report results/gc-comparison -o /tmp/report
  cqlbench report merge res/client0 res/client1 res/client2 -o res/all";

#[derive(Debug, Args)]
#[command(
    after_help = REPORT_HELP,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct ReportArgs {
    #[command(subcommand)]
    pub command: Option<ReportCommand>,

    /// The campaign directory (DIR/<config>/<rate>/summary.json)
    #[arg(value_name = "DIR", required = true)]
    pub dir: Option<PathBuf>,

    /// Where to write report.md and report.html [default: DIR]
    #[arg(short = 'o', long, value_name = "OUT")]
    pub out: Option<PathBuf>,

    /// Configuration order of the tables' rows (comma-separated names; others follow by name)
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub order: Vec<String>,
}

#[derive(Debug, clap::Subcommand)]
pub enum ReportCommand {
    /// Add up the result directories of the clients of one run (--clients) into one result
    Merge(MergeArgs),
}

const MERGE_HELP: &str = "\
The clients of one run (`cqlbench run --clients N --client-id I --start-at T`, same command line
but for --client-id and -o) each write a result directory. merge adds them up into OUT, with the
same files as one client's (summary.json, intervals.csv, OP.hlog, OP.service.hlog, OP.failed.hlog),
so `cqlbench report` and `cqlbench compare` read it like a single run:

  - histograms are added (HdrHistogram addition) second by second, the seconds counted from the
    common start: the merged percentiles, per second and over the run, are those of all the
    clients' operations together, never an average of the clients' percentiles;
  - counts, errors by kind and rates are summed; the duration is the longest client's (all count
    from the same measured start); the windowed p99s are recomputed from the merged seconds;
  - the client figures (send lateness, gaps) and the warm-up/populate p99 are the worst client's:
    no histogram of them is kept.

Directories that do not belong together are refused in one line naming the reason: another
workload, seed, --start-at, rate, number of clients, stopping rule or key settings, a client id
given twice, or a client missing.

Example:
  cqlbench report merge res/client0 res/client1 res/client2 -o res/all";

#[derive(Debug, Args)]
#[command(after_help = MERGE_HELP)]
pub struct MergeArgs {
    /// The clients' result directories, one per client id
    #[arg(value_name = "DIR", required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,

    /// The merged result directory (created)
    #[arg(short = 'o', long, value_name = "OUT", required = true)]
    pub out: PathBuf,
}

pub fn execute(args: ReportArgs) -> anyhow::Result<()> {
    if let Some(ReportCommand::Merge(merge)) = args.command {
        return execute_merge(merge);
    }
    let Some(dir) = args.dir else {
        anyhow::bail!("give a campaign directory, or `merge DIR... -o OUT`");
    };
    anyhow::ensure!(dir.is_dir(), "{} is not a directory", dir.display());
    let campaign = cqlbench_report::discover(&dir, &args.order)?;
    let out = args.out.clone().unwrap_or_else(|| dir.clone());
    let (md, html) = cqlbench_report::write_report(&campaign, &out)
        .with_context(|| format!("writing the report into {}", out.display()))?;
    let tables = cqlbench_report::seed_tables(&campaign);
    print!("{}", cqlbench_report::terminal(&campaign, &tables));
    println!("report: {}\n        {}", md.display(), html.display());
    Ok(())
}

fn execute_merge(args: MergeArgs) -> anyhow::Result<()> {
    for dir in &args.dirs {
        anyhow::ensure!(dir.is_dir(), "{} is not a directory", dir.display());
    }
    let merged = cqlbench_report::merge_runs(&args.dirs, &args.out)?;
    let s = &merged.summary;
    println!(
        "merged {} client(s) into {}: {} successful ops/s of {} offered — {}",
        merged.clients,
        merged.out.display(),
        serde_json::json!(s.achieved_rate),
        serde_json::json!(s.target_rate),
        s.rate_note
    );
    Ok(())
}

const COMPARE_HELP: &str = "\
Compares two result directories (as `cqlbench run -o` writes them, e.g. two cells of a campaign):
for every figure, A, B, the difference B - A with its 95% confidence interval, and whether it is
significant. Means (throughput, mean latency) use Welch's t-test on per-second values with the
sample size adjusted for the correlation between neighbouring seconds (as latte's `show -b`);
percentiles (p50, p99, p99.9) a moving-block bootstrap over the one-second HdrHistograms.

Two machine probes (`cqlbench probe -o DIR`; a campaign's is in its environment.json) are shown
side by side instead: every figure of either, and B / A.

Examples:
  cqlbench compare results/gc/G1-jdk17/25000 results/gc/Shenandoah-jdk17/25000
  cqlbench compare probe-aws/probe.json probe-gcp/probe.json";

#[derive(Debug, Args)]
#[command(after_help = COMPARE_HELP)]
pub struct CompareArgs {
    /// The baseline run directory (or probe.json, or a directory holding one)
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// The run directory compared with it (or a second probe)
    #[arg(value_name = "B")]
    pub b: PathBuf,
}

pub fn compare(args: CompareArgs) -> anyhow::Result<()> {
    if let (Some(a), Some(b)) = (probe_dir(&args.a), probe_dir(&args.b)) {
        let (pa, pb) = (Probe::read(&a)?, Probe::read(&b)?);
        let (na, nb) = (args.a.display().to_string(), args.b.display().to_string());
        print!("{}", cqlbench_report::probe_comparison(&pa, &pb, &na, &nb));
        return Ok(());
    }
    let rows = cqlbench_report::compare_runs(&args.a, &args.b)?;
    print!(
        "{}",
        cqlbench_report::format_comparison(&args.a, &args.b, &rows)
    );
    Ok(())
}

/// The directory of a probe given as `probe.json` or as a directory holding one (and no run).
fn probe_dir(path: &std::path::Path) -> Option<PathBuf> {
    if path.file_name().is_some_and(|n| n == PROBE_FILE) && path.is_file() {
        return path.parent().map(|p| p.to_path_buf());
    }
    (path.join(PROBE_FILE).is_file() && !path.join(SUMMARY_FILE).is_file())
        .then(|| path.to_path_buf())
}
