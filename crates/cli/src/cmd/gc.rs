//! `cqlbench gc analyze FILE... [--json] [--timeline FILE]`

use std::fs::File;
use std::io::{LineWriter, Write};
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand};
use cqlbench_gclog::{analyze_with, Input, Parallelism};

#[derive(Debug, Args)]
pub struct GcArgs {
    #[command(subcommand)]
    command: GcCommand,
}

#[derive(Debug, Subcommand)]
enum GcCommand {
    /// Summarise pauses, safepoints, stop-time distribution and concurrent GC of one JVM's GC log
    #[command(
        long_about = "Summarise one JVM's GC log: pauses by kind, safepoints with time to safepoint, the \
            distribution of the stop still remaining at a uniformly random instant, concurrent GC share, \
            allocation rate and heap occupancy.\n\n\
            Reads JDK 9+ unified logs (-Xlog:gc*,safepoint with any decorators, including Cassandra's \
            default `time,uptime,pid,tid,level`) and JDK 8 -XX:+PrintGCDetails logs, for Serial, Parallel, \
            CMS, G1, ZGC (also generational) and Shenandoah (also generational). Give every rotated part of \
            the log (gc.log, gc.log.0 … gc.log.N, *.current, *.gz): they are put in time order and read as \
            one log. Lines that are not understood are counted and skipped. Memory use does not grow with \
            the size of the log.\n\n\
            When the log has safepoint lines, the stopped time is the safepoints' (they include time to \
            safepoint and the GC pauses inside them); otherwise it is the pauses'.",
        after_help = "Examples:\n  \
            cqlbench gc analyze ~/.cache/cqlbench/clusters/default/node1/logs/gc.log*\n  \
            cqlbench gc analyze gc.log --json | jq .time_sampled\n  \
            cqlbench gc analyze gc.log --timeline pauses.csv\n  \
            cqlbench gc analyze big-gc.log --threads 1      # leave the other cores to a running node\n  \
            zcat old-gc.log.gz | cqlbench gc analyze -"
    )]
    Analyze(AnalyzeArgs),
}

#[derive(Debug, Args)]
struct AnalyzeArgs {
    /// GC log files of one JVM (rotated parts and .gz allowed); `-` reads standard input; a directory
    /// stands for the gc*.log* files in it (e.g. a node's logs directory)
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Print one JSON document instead of the human-readable summary
    #[arg(long)]
    json: bool,
    /// Write every pause and safepoint as `start,end,kind` CSV (ISO-8601 UTC when the log has wall-clock
    /// time, else seconds of JVM uptime)
    #[arg(long, value_name = "FILE")]
    timeline: Option<PathBuf>,
    /// Cores to parse on (default: all of them). The log is cut at line boundaries, the parts are
    /// parsed at once and analysed in order: the figures are those of one sequential pass
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
}

pub fn execute(args: GcArgs) -> anyhow::Result<()> {
    match args.command {
        GcCommand::Analyze(args) => analyze_command(args),
    }
}

/// Expands directories into the GC log parts they hold (`gc.log`, `gc.log.3`, `gc.log.0.current`, `gc-2.log.gz` …).
fn expand_inputs(files: &[PathBuf]) -> anyhow::Result<Vec<Input>> {
    let mut inputs = Vec::new();
    for file in files {
        if !file.is_dir() {
            inputs.push(Input::from_arg(file));
            continue;
        }
        let parts = cqlbench_gclog::parts_in_dir(file)
            .with_context(|| format!("cannot list {}", file.display()))?;
        if parts.is_empty() {
            anyhow::bail!("no gc*.log* file in directory {}", file.display());
        }
        inputs.extend(parts.into_iter().map(Input::Path));
    }
    Ok(inputs)
}

fn analyze_command(args: AnalyzeArgs) -> anyhow::Result<()> {
    let inputs = expand_inputs(&args.files)?;
    let mut timeline = match &args.timeline {
        // Line by line, so that an interrupted analysis leaves every row written so far.
        Some(path) => Some(LineWriter::new(File::create(path).with_context(|| {
            format!("cannot create timeline file {}", path.display())
        })?)),
        None => None,
    };
    let mut progress = |bytes: u64| {
        eprintln!("read {} MiB …", bytes >> 20);
    };
    let parallelism = match args.threads {
        Some(threads) => Parallelism::with_threads(usize::from(threads)),
        None => Parallelism::of_machine(),
    };
    let report = analyze_with(
        &inputs,
        timeline.as_mut().map(|w| w as &mut dyn Write),
        &mut progress,
        Some(parallelism),
    )?;
    if let (Some(mut writer), Some(path)) = (timeline, &args.timeline) {
        writer
            .flush()
            .with_context(|| format!("cannot write timeline file {}", path.display()))?;
    }
    let rendered = if args.json {
        format!("{}\n", serde_json::to_string_pretty(&report)?)
    } else {
        report.to_string()
    };
    match std::io::stdout().lock().write_all(rendered.as_bytes()) {
        // `cqlbench gc analyze … | head` closing the pipe early is not an error.
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        result => result.context("cannot write to standard output"),
    }
}
