//! `cqlbench run WORKLOAD …` and `cqlbench workloads`

use anyhow::bail;
use clap::Args;
use cqlbench_load::WORKLOADS;
use cqlbench_workload::catalog;

pub use cqlbench_load::RunArgs;

#[derive(Debug, Args)]
pub struct WorkloadsArgs {
    /// Show this workload: a built-in one's schema, statements and parameters, a shipped one's file
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
}

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

/// `cqlbench workloads`: one line per workload; `cqlbench workloads NAME`: its schema, statements
/// and parameters (a built-in one) or its file (a shipped one).
pub fn list_workloads(args: WorkloadsArgs) -> anyhow::Result<()> {
    let Some(name) = args.name else {
        print!("{}", workload_lines());
        return Ok(());
    };
    if let Some(w) = WORKLOADS
        .iter()
        .find(|w| w.name.eq_ignore_ascii_case(&name))
    {
        print!("{}", built_in_details(w));
    } else if let Some(w) = catalog::find(&name) {
        print!("{}", w.text);
    } else if let Some((n, why)) = catalog::NOT_SHIPPED
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(&name))
    {
        bail!("{n} is not shipped: it {why}");
    } else {
        bail!("unknown workload '{name}' (`cqlbench workloads` lists them)");
    }
    Ok(())
}

fn workload_lines() -> String {
    let mut out = String::new();
    let line = |out: &mut String, name: &str, text: &str| {
        out.push_str(&format!("{name:<22} {text}\n"));
    };
    for w in WORKLOADS.iter() {
        line(&mut out, w.name, &format!("{} (built in)", w.description));
    }
    for w in catalog::SHIPPED {
        line(&mut out, w.name, w.description());
    }
    for (name, why) in catalog::NOT_SHIPPED {
        line(&mut out, name, &format!("not shipped: it {why}"));
    }
    out.push_str(
        "\n`cqlbench workloads NAME` shows one; `cqlbench run NAME` runs it; a file of your own: `cqlbench run FILE.yaml`\n",
    );
    out
}

fn built_in_details(w: &cqlbench_load::WorkloadInfo) -> String {
    let mut out = format!(
        "{}\n  {}\n  schema:  {}\n  write:   {}\n  read:    {}\n  defaults: read ratio {} (-r), consistency {} (--cl)\n",
        w.name, w.description, w.schema, w.write, w.read, w.default_read_ratio, w.default_consistency
    );
    if w.params.is_empty() {
        out.push_str("  parameters: none\n");
    } else {
        out.push_str("  parameters (--workload.NAME=VALUE):\n");
        for p in w.params {
            out.push_str(&format!(
                "    {:<12} {:>6}  {}\n",
                p.name, p.default, p.help
            ));
        }
    }
    out
}
