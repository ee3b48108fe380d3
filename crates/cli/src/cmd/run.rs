//! `cqlbench run WORKLOAD …` and `cqlbench workloads`

use clap::Args;

#[derive(Debug, Args)]
pub struct RunArgs {}

#[derive(Debug, Args)]
pub struct WorkloadsArgs {}

pub fn execute(_args: RunArgs) -> anyhow::Result<()> {
    anyhow::bail!("cqlbench run is not implemented yet")
}

pub fn list_workloads(_args: WorkloadsArgs) -> anyhow::Result<()> {
    anyhow::bail!("cqlbench workloads is not implemented yet")
}
