//! cqlbench-probe: what the machine can do, before any Cassandra figure is trusted (seed 001
//! measured its machines with sysbench and Cassandra-like fio profiles first).
//!
//! The real sysbench and fio run (the machine's own, else Debian's packages unpacked into the
//! cache: [`tools`]); their own reports give the figures of `probe.json` ([`cqlbench_results::Probe`]),
//! named after the tool and its parameters. `cqlbench_report` prints one probe or two side by side.

mod error;
pub mod fio;
pub mod sysbench;
pub mod tools;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use cqlbench_machine::facts;
use cqlbench_results::Probe;

pub use error::{ProbeError, Result};

/// How long each part runs (s), and the scratch file size (MiB).
#[derive(Debug, Clone, Copy)]
pub struct Durations {
    pub cpu_s: u32,
    pub memory_s: u32,
    pub fio_s: u32,
    pub fio_size_mib: u32,
}

impl Durations {
    /// The full probe: about 75 s.
    pub const FULL: Durations = Durations {
        cpu_s: 10,
        memory_s: 5,
        fio_s: 20,
        fio_size_mib: 512,
    };
    /// The quick probe (a campaign's): about 20 s.
    pub const QUICK: Durations = Durations {
        cpu_s: 3,
        memory_s: 2,
        fio_s: 5,
        fio_size_mib: 64,
    };
}

pub struct ProbeOptions {
    pub quick: bool,
    /// Where fio writes its scratch files (the clusters' data directory by default).
    pub data_dir: PathBuf,
    /// cqlbench's cache, where fetched tools are kept.
    pub cache: PathBuf,
}

/// Checks that `dir` can take files, before anything runs.
pub fn check_writable(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".cqlbench-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"")?;
    std::fs::remove_file(&probe)
}

/// Characterises the machine; `progress` hears each step.
pub fn probe(options: &ProbeOptions, progress: &mut dyn FnMut(&str)) -> Result<Probe> {
    check_writable(&options.data_dir).map_err(|source| ProbeError::DataDir {
        path: options.data_dir.clone(),
        source,
    })?;
    let started = Instant::now();
    let tools = tools::find_or_fetch(&options.cache, progress)?;
    let (sysbench, fio) = (&tools[0], &tools[1]);
    let d = if options.quick {
        Durations::QUICK
    } else {
        Durations::FULL
    };
    let cores = facts::cores();
    let mut figures = BTreeMap::new();
    let thread_counts = if cores > 1 { vec![1, cores] } else { vec![1] };
    for threads in thread_counts {
        progress(&format!("sysbench cpu, {threads} thread(s), {} s", d.cpu_s));
        let events = sysbench::cpu(sysbench, threads, d.cpu_s)?;
        figures.insert(
            format!("sysbench.cpu.threads_{threads}.events_per_s"),
            events,
        );
    }
    progress(&format!("sysbench memory, 1 MiB blocks, {} s", d.memory_s));
    let mib_s = sysbench::memory(sysbench, 1, d.memory_s)?;
    figures.insert("sysbench.memory.block_1m.threads_1.mib_per_s".into(), mib_s);
    let mut notes = Vec::new();
    for profile in &fio::PROFILES {
        progress(&format!(
            "fio {}, {} s on {} MiB in {}",
            profile.name,
            d.fio_s,
            d.fio_size_mib,
            options.data_dir.display()
        ));
        let result = fio::run(fio, profile, &options.data_dir, d.fio_s, d.fio_size_mib)?;
        if result.buffered_fallback {
            notes.push(format!(
                "fio {}: the filesystem refused direct I/O, so it ran through the page cache",
                profile.name
            ));
        }
        figures.extend(result.figures);
    }
    Ok(Probe {
        version: cqlbench_results::FORMAT_VERSION,
        taken_at_unix_s: cqlbench_units::time::unix_now(),
        quick: options.quick,
        seconds: (started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
        cpu_model: facts::cpu_model(),
        cores,
        memory_kib: facts::meminfo_kib("MemTotal:"),
        kernel: facts::kernel(),
        data_dir: options.data_dir.clone(),
        disk: facts::disk_of(&options.data_dir),
        tools: tools
            .iter()
            .map(|t| (t.name.to_string(), t.record()))
            .collect(),
        figures,
        notes,
    })
}
