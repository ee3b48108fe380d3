//! `cqlbench report`: the seeds' tables and charts from result directories.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

const REPORT_HELP: &str = "\
A campaign directory holds one result directory (as `cqlbench run -o` writes it) per configuration
and rate:

  DIR/<config>/<rate>/summary.json            e.g. DIR/G1-jdk17/25000/summary.json
  DIR/<config>/<rate>/<repeat>/summary.json   with repeats (averaged; Max p99 takes the largest)

The report has seed 000's four tables (Throughput; Writes Average p99; Reads Average p99; Max p99,
config x rate), the percentiles of every cell, and charts: p99 and p99.9 against rate, offered vs
achieved throughput, and each cell's corrected p99 second by second. report.html is self-contained
(inline SVG, no script, no network).

Examples:
  cqlbench report results/gc-comparison
  cqlbench report results/gc-comparison -o /tmp/report";

#[derive(Debug, Args)]
#[command(after_help = REPORT_HELP)]
pub struct ReportArgs {
    /// The campaign directory (DIR/<config>/<rate>/summary.json)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Where to write report.md and report.html [default: DIR]
    #[arg(short = 'o', long, value_name = "OUT")]
    pub out: Option<PathBuf>,

    /// Configuration order of the tables' rows (comma-separated names; others follow by name)
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub order: Vec<String>,
}

pub fn execute(args: ReportArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.dir.is_dir(),
        "{} is not a directory",
        args.dir.display()
    );
    let campaign = cqlbench_report::discover(&args.dir, &args.order)?;
    let out = args.out.clone().unwrap_or_else(|| args.dir.clone());
    let (md, html) = cqlbench_report::write_report(&campaign, &out)
        .with_context(|| format!("writing the report into {}", out.display()))?;
    print!(
        "{}",
        cqlbench_report::terminal(&cqlbench_report::seed_tables(&campaign))
    );
    println!("report: {}\n        {}", md.display(), html.display());
    Ok(())
}

const COMPARE_HELP: &str = "\
Compares two result directories (as `cqlbench run -o` writes them, e.g. two cells of a campaign):
for every figure, A, B, the difference B - A with its 95% confidence interval, and whether it is
significant. Means (throughput, mean latency) use Welch's t-test on per-second values with the
sample size adjusted for the correlation between neighbouring seconds (as latte's `show -b`);
percentiles (p50, p99, p99.9) a moving-block bootstrap over the one-second HdrHistograms.

Example:
  cqlbench compare results/gc/G1-jdk17/25000 results/gc/Shenandoah-jdk17/25000";

#[derive(Debug, Args)]
#[command(after_help = COMPARE_HELP)]
pub struct CompareArgs {
    /// The baseline run directory
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// The run directory compared with it
    #[arg(value_name = "B")]
    pub b: PathBuf,
}

pub fn compare(args: CompareArgs) -> anyhow::Result<()> {
    let rows = cqlbench_report::compare_runs(&args.a, &args.b)?;
    print!(
        "{}",
        cqlbench_report::format_comparison(&args.a, &args.b, &rows)
    );
    Ok(())
}
