//! `cqlbench run WORKLOAD …` and `cqlbench workloads`

use anyhow::bail;
use clap::Args;
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
        .all(|a| a.starts_with("--workload.") || !a.starts_with('-'))
    {
        return Ok(args);
    }
    let argv: Vec<String> = std::env::args().collect();
    let Some(run_at) = argv.iter().skip(1).position(|a| a == "run") else {
        return Ok(args);
    };
    Ok(RunArgs::parse_from(&argv[run_at + 2..])?)
}

pub fn execute(args: RunArgs) -> anyhow::Result<()> {
    let args = separate_workload_params(args)?;
    let mut progress = |line: &str| eprintln!("{line}");
    let result = cqlbench_campaign::one_run::run(&args, &mut progress)?;
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
