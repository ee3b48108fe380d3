//! Prints the JSON report of one JVM's GC log parts (a development aid, like `cqlbench gc analyze
//! --json` without building the CLI): `cargo run --release -p cqlbench-gclog --example report -- gc.log`.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let paths: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    let report = cqlbench_gclog::analyze_paths(&paths)?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}
