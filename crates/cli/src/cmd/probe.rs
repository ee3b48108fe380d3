//! `cqlbench probe`: what the machine can do, measured by the real sysbench and fio.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use cqlbench_cluster::Home;
use cqlbench_probe::{check_writable, ProbeOptions};

const PROBE_HELP: &str = "\
Characterises the machine before a benchmark is trusted, as seed 001 did before comparing clouds:

  sysbench cpu (1 thread, then all cores)      sysbench.cpu.threads_<N>.events_per_s
  sysbench memory (1 MiB blocks, 1 thread)     sysbench.memory.block_1m.threads_1.mib_per_s
  fio commitlog: one sequential writer of 32 KiB blocks through the page cache, synced every
    32 writes (Cassandra's commit log)         fio.commitlog.write.{iops,bw_mb_s,lat_p50_ms,lat_p99_ms}
  fio compaction: random 4 KiB direct reads, 8 in flight (SSTable reads), beside a sequential
    writer of 256 KiB blocks (compaction output)
                                               fio.compaction.{read,write}.{iops,bw_mb_s,lat_p50_ms,lat_p99_ms}

Latencies are fio's completion latency percentiles; bandwidth is in MB/s (10^6 bytes/s). The
figures come from the tools' own reports (fio's JSON). Also recorded: CPU model, cores, memory,
kernel, and the filesystem and device of the data directory, where fio's scratch files go (and
are removed). A filesystem that refuses direct I/O (tmpfs) runs the direct jobs buffered, noted.

sysbench and fio are the machine's own when on PATH; else Debian's packages (and the libraries
the machine lacks) are downloaded with a private apt configuration and unpacked into cqlbench's
cache, never installed. The full probe takes about 75 s, --quick about 20 s (a campaign takes
the quick one first unless --no-probe).

Results (DIR): probe.json, and the table on the terminal. Compare two machines with
  cqlbench compare DIR_A/probe.json DIR_B/probe.json

Examples:
  cqlbench probe -o probe-here
  cqlbench probe --quick --data-dir /mnt/nvme -o probe-nvme";

#[derive(Debug, Args)]
#[command(after_help = PROBE_HELP)]
pub struct ProbeArgs {
    /// Where probe.json is written
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: PathBuf,
    /// The quick probe: about 20 s instead of about 75 s, smaller scratch files
    #[arg(long)]
    pub quick: bool,
    /// Where fio's scratch files go [default: the local clusters' directory in cqlbench's cache]
    #[arg(long = "data-dir", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
}

pub fn execute(args: ProbeArgs) -> anyhow::Result<()> {
    let home = Home::from_env();
    let data_dir = args.data_dir.unwrap_or_else(|| home.clusters_dir());
    check_writable(&data_dir)
        .with_context(|| format!("data directory {} is not writable", data_dir.display()))?;
    check_writable(&args.out)
        .with_context(|| format!("probe directory {} is not writable", args.out.display()))?;
    let options = ProbeOptions {
        quick: args.quick,
        data_dir,
        cache: home.root().to_path_buf(),
    };
    let probe = cqlbench_probe::probe(&options, &mut |step| eprintln!("probe: {step}"))?;
    probe.write(&args.out)?;
    print!("{}", cqlbench_report::probe_table(&probe));
    println!(
        "probe.json written to {} ({:.0} s)",
        args.out.display(),
        probe.seconds
    );
    Ok(())
}
