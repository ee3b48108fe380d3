//! `cqlbench gc analyze …`

use clap::Args;

#[derive(Debug, Args)]
pub struct GcArgs {}

pub fn execute(_args: GcArgs) -> anyhow::Result<()> {
    anyhow::bail!("cqlbench gc is not implemented yet")
}
