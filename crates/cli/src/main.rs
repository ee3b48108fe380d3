//! `cqlbench`: the thin command-line layer over the capability crates.
//!
//! Data flows one way: plan → cluster → load → results → report. Each subcommand lives in its own
//! module under `cmd/` and only turns arguments into library calls and library results into output.

mod cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "cqlbench",
    version,
    about = "Benchmark Apache Cassandra versions, JDKs and garbage collectors",
    long_about = "Benchmark Apache Cassandra versions, JDKs and garbage collectors.\n\n\
        cqlbench starts real local Cassandra clusters (any version on Maven Central, any JDK, any GC), drives \
        them with open-loop, coordinated-omission-correct load, and analyses the nodes' GC logs.",
    after_help = "Examples:\n  \
        cqlbench cluster up --nodes 3 --gc shenandoah --heap 1G\n  \
        cqlbench run BasicTimeSeries -d 1m --rate 2000\n  \
        cqlbench gc analyze ~/.cache/cqlbench/clusters/default/node1/logs/gc.log\n  \
        cqlbench campaign examples/seed-000-one-machine.toml --dry-run\n  \
        cqlbench k8s render examples/k8s-gc.toml -o k8s-gc\n  \
        cqlbench report results/gc-comparison"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Start, inspect, disturb and stop local Cassandra clusters
    Cluster(cmd::cluster::ClusterArgs),
    /// Run a workload at a fixed rate and measure the latency users feel
    Run(Box<cmd::run::RunArgs>),
    /// List the workloads cqlbench has (built in, and easy-cass-stress's as files); NAME shows one
    Workloads(cmd::run::WorkloadsArgs),
    /// Analyse JVM garbage collector logs
    Gc(cmd::gc::GcArgs),
    /// Run a plan of cluster configurations x rates, cell by cell, resumable; ends with the seed tables
    Campaign(cmd::campaign::CampaignArgs),
    /// Kubernetes: render a plan as datacenters (K8ssandra or StatefulSets) and load Jobs, run it, build images
    K8s(cmd::k8s::K8sArgs),
    /// Tables and charts (Markdown, self-contained HTML) from result directories
    Report(cmd::report::ReportArgs),
    /// Is the difference between two runs real? Figures with confidence intervals (or two probes)
    Compare(cmd::report::CompareArgs),
    /// Measure the machine with sysbench and Cassandra-like fio profiles (probe.json)
    Probe(cmd::probe::ProbeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Cluster(args) => cmd::cluster::execute(args),
        Command::Run(args) => cmd::run::execute(*args),
        Command::Workloads(args) => cmd::run::list_workloads(args),
        Command::Gc(args) => cmd::gc::execute(args),
        Command::Campaign(args) => cmd::campaign::execute(args),
        Command::K8s(args) => cmd::k8s::execute(args),
        Command::Report(args) => cmd::report::execute(args),
        Command::Compare(args) => cmd::report::compare(args),
        Command::Probe(args) => cmd::probe::execute(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // One line, the whole cause chain, no backtrace: what an operator can act on.
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}
