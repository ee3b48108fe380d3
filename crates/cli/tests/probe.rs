//! `cqlbench probe` with the real sysbench and fio (Debian's packages unpacked into the cache when
//! the machine has none): probe.json holds every figure, its single-thread CPU figure agrees with
//! sysbench run directly with the same parameters, the scratch files are gone, two probes compare
//! side by side, and bad directories are refused in one line before anything runs.

mod run_support;

use std::path::Path;
use std::process::Command;

use cqlbench_results::{Probe, ToolRecord};
use run_support::{cqlbench_command, cqlbench_ok, one_line_error};

/// sysbench's own `cpu --threads=1 --time=3` figure, run as the probe ran it.
fn sysbench_directly(tool: &ToolRecord) -> f64 {
    let mut command = Command::new(&tool.path);
    if let Some(path) = &tool.library_path {
        command.env("LD_LIBRARY_PATH", path);
    }
    let output = command
        .args(["cpu", "--threads=1", "--time=3", "run"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .find_map(|l| l.trim().strip_prefix("events per second:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

fn figure(probe: &Probe, name: &str) -> f64 {
    *probe
        .figures
        .get(name)
        .unwrap_or_else(|| panic!("{name} missing: {:?}", probe.figures))
}

#[test]
fn the_quick_probe_measures_what_sysbench_and_fio_say() {
    let out = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let a = out.path().join("a");
    let stdout = cqlbench_ok(&[
        "probe",
        "--quick",
        "-o",
        a.to_str().unwrap(),
        "--data-dir",
        data.path().to_str().unwrap(),
    ]);
    let probe = Probe::read(&a).unwrap();
    eprintln!("{stdout}");
    let cores = std::thread::available_parallelism().unwrap().get();
    let mut names = vec![
        "sysbench.cpu.threads_1.events_per_s".to_string(),
        "sysbench.memory.block_1m.threads_1.mib_per_s".to_string(),
    ];
    if cores > 1 {
        names.push(format!("sysbench.cpu.threads_{cores}.events_per_s"));
    }
    for (profile, direction) in [
        ("commitlog", "write"),
        ("compaction", "read"),
        ("compaction", "write"),
    ] {
        for what in ["iops", "bw_mb_s", "lat_p50_ms", "lat_p99_ms"] {
            names.push(format!("fio.{profile}.{direction}.{what}"));
        }
        let p50 = figure(&probe, &format!("fio.{profile}.{direction}.lat_p50_ms"));
        let p99 = figure(&probe, &format!("fio.{profile}.{direction}.lat_p99_ms"));
        assert!(p50 <= p99, "{profile} {direction}: p50 {p50} > p99 {p99}");
    }
    for name in &names {
        assert!(figure(&probe, name) > 0.0, "{name}: {:?}", probe.figures);
        assert!(
            stdout.contains(name.as_str()),
            "{name} not in the table:\n{stdout}"
        );
    }
    assert_eq!(probe.figures.len(), names.len(), "{:?}", probe.figures);
    assert!(probe.quick && probe.cores == cores);
    assert_eq!(probe.data_dir, data.path());
    assert!(probe.disk.is_some());
    assert_eq!(
        std::fs::read_dir(data.path()).unwrap().count(),
        0,
        "fio's scratch files are removed"
    );

    // The same sysbench with the same parameters, run directly before and after: the probe's figure
    // lies within what they span (with a margin for a shared machine).
    let sysbench = &probe.tools["sysbench"];
    assert!(sysbench.version.starts_with("sysbench "), "{sysbench:?}");
    let direct = [sysbench_directly(sysbench), sysbench_directly(sysbench)];
    let probed = figure(&probe, "sysbench.cpu.threads_1.events_per_s");
    let (low, high) = (direct[0].min(direct[1]), direct[0].max(direct[1]));
    eprintln!("sysbench cpu, 1 thread: probe {probed}, directly {direct:?}");
    assert!(
        probed >= low * 0.85 && probed <= high * 1.15,
        "probe {probed} events/s, sysbench directly {direct:?}"
    );

    // Two probes side by side: the same figures, one of them doubled.
    let b = out.path().join("b");
    let mut doubled = probe.clone();
    doubled
        .figures
        .insert("sysbench.cpu.threads_1.events_per_s".into(), probed * 2.0);
    doubled.write(&b).unwrap();
    let compared = cqlbench_ok(&[
        "compare",
        a.join("probe.json").to_str().unwrap(),
        b.to_str().unwrap(),
    ]);
    let row = compared
        .lines()
        .find(|l| l.starts_with("sysbench.cpu.threads_1.events_per_s"))
        .unwrap_or_else(|| panic!("{compared}"));
    assert!(row.ends_with("2.00x"), "{row}");
    let same = compared
        .lines()
        .find(|l| l.starts_with("fio.compaction.read.iops"))
        .unwrap();
    assert!(same.ends_with("1.00x"), "{same}");
}

#[test]
fn directories_that_cannot_be_written_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let under_file = file.join("probe");
    let line = one_line_error(
        &mut cqlbench_command(&["probe", "--quick", "-o", under_file.to_str().unwrap()]),
        "probe directory",
    );
    assert!(line.contains("is not writable"), "{line}");
    let out = dir.path().join("out");
    let line = one_line_error(
        &mut cqlbench_command(&[
            "probe",
            "--quick",
            "-o",
            out.to_str().unwrap(),
            "--data-dir",
            under_file.to_str().unwrap(),
        ]),
        "data directory",
    );
    assert!(line.contains("Not a directory"), "{line}");
    assert!(!Path::new(&out).exists(), "nothing is left behind");
}
