//! `cqlbench cluster …`

use clap::Args;

#[derive(Debug, Args)]
pub struct ClusterArgs {}

pub fn execute(_args: ClusterArgs) -> anyhow::Result<()> {
    anyhow::bail!("cqlbench cluster is not implemented yet")
}
