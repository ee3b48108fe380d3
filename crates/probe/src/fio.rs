//! fio profiles modelled on Cassandra's I/O, read from fio's own JSON report.
//!
//! - `commitlog`: the commit log — one sequential writer of 32 KiB blocks through the page cache,
//!   synced every 32 writes (as the periodic sync flushes segments).
//! - `compaction`: reads and compaction at once — random 4 KiB reads of SSTable data (8 in flight,
//!   direct, so the disk and not the page cache answers) beside a sequential writer of 256 KiB
//!   blocks (the compaction's output).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::error::{ProbeError, Result};
use crate::tools::Tool;

/// One fio job of a profile, and the direction whose figures are kept from it.
struct Job {
    name: &'static str,
    direction: Direction,
    args: &'static [&'static str],
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Read,
    Write,
}

impl Direction {
    fn name(self) -> &'static str {
        match self {
            Direction::Read => "read",
            Direction::Write => "write",
        }
    }
}

pub struct Profile {
    pub name: &'static str,
    jobs: &'static [Job],
    /// Whether the jobs ask for direct I/O (refused by some filesystems, e.g. tmpfs).
    direct: bool,
}

pub const PROFILES: [Profile; 2] = [
    Profile {
        name: "commitlog",
        direct: false,
        jobs: &[Job {
            name: "commitlog",
            direction: Direction::Write,
            args: &[
                "--rw=write",
                "--bs=32k",
                "--ioengine=psync",
                "--fdatasync=32",
            ],
        }],
    },
    Profile {
        name: "compaction",
        direct: true,
        jobs: &[
            Job {
                name: "reads",
                direction: Direction::Read,
                args: &[
                    "--rw=randread",
                    "--bs=4k",
                    "--ioengine=libaio",
                    "--iodepth=8",
                ],
            },
            Job {
                name: "writes",
                direction: Direction::Write,
                args: &[
                    "--rw=write",
                    "--bs=256k",
                    "--ioengine=libaio",
                    "--iodepth=2",
                ],
            },
        ],
    },
];

/// What one profile run gave: its figures (`fio.<profile>.<direction>.<figure>`) and whether it
/// had to fall back to buffered I/O.
pub struct ProfileResult {
    pub figures: BTreeMap<String, f64>,
    pub buffered_fallback: bool,
}

/// Runs `profile` for `seconds` on scratch files of `size_mib` in `dir` (fio unlinks them).
pub fn run(
    tool: &Tool,
    profile: &Profile,
    dir: &Path,
    seconds: u32,
    size_mib: u32,
) -> Result<ProfileResult> {
    let first = run_once(tool, profile, dir, seconds, size_mib, profile.direct);
    let (report, buffered_fallback) = match first {
        Err(ProbeError::ToolFailed { line, .. }) if profile.direct && refuses_direct(&line) => (
            run_once(tool, profile, dir, seconds, size_mib, false)?,
            true,
        ),
        other => (other?, false),
    };
    let mut figures = BTreeMap::new();
    for job in profile.jobs {
        let stats = report
            .job(job.name, job.direction)
            .ok_or(ProbeError::Unreadable {
                tool: "fio".into(),
                what: "figures for a job of its profile",
            })?;
        let key = |figure: &str| format!("fio.{}.{}.{figure}", profile.name, job.direction.name());
        figures.insert(key("iops"), round(stats.iops, 1));
        figures.insert(key("bw_mb_s"), round(stats.bw_bytes as f64 / 1e6, 2));
        let percentile = |p: &str| stats.clat_ns.percentile.get(p).map(|ns| round(ns / 1e6, 3));
        if let Some(p50) = percentile("50.000000") {
            figures.insert(key("lat_p50_ms"), p50);
        }
        if let Some(p99) = percentile("99.000000") {
            figures.insert(key("lat_p99_ms"), p99);
        }
    }
    Ok(ProfileResult {
        figures,
        buffered_fallback,
    })
}

fn round(value: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (value * scale).round() / scale
}

/// fio's words when a filesystem refuses `O_DIRECT` (EINVAL, errno 22).
fn refuses_direct(line: &str) -> bool {
    line.contains("direct") || line.contains("Invalid argument") || line.contains("error 22")
}

fn run_once(
    tool: &Tool,
    profile: &Profile,
    dir: &Path,
    seconds: u32,
    size_mib: u32,
    direct: bool,
) -> Result<FioReport> {
    let mut command = tool.command();
    command
        .arg("--output-format=json")
        .arg(format!("--directory={}", dir.display()))
        .arg(format!("--runtime={seconds}"))
        .arg("--time_based")
        .arg("--unlink=1");
    for job in profile.jobs {
        command
            .arg(format!("--name={}", job.name))
            .arg(format!("--filename=cqlbench-probe-{}", job.name))
            .arg(format!("--size={size_mib}m"))
            .args(job.args.iter().map(|a| {
                if direct {
                    a.to_string()
                } else {
                    a.replace("--ioengine=libaio", "--ioengine=psync")
                }
            }))
            .arg(format!("--direct={}", u8::from(direct)));
    }
    let output = command.output().map_err(|e| ProbeError::ToolFailed {
        tool: "fio".into(),
        line: e.to_string(),
    })?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(ProbeError::ToolFailed {
            tool: format!("fio profile {}", profile.name),
            line: cqlbench_debian::failure_line(&stderr, &stdout, |l| {
                l.starts_with("fio:") || l.contains("error")
            }),
        });
    }
    let report = parse(&stdout)?;
    if let Some(job) = report.jobs.iter().find(|j| j.error != 0) {
        return Err(ProbeError::ToolFailed {
            tool: format!("fio profile {}", profile.name),
            line: format!("job {} stopped with error {}", job.jobname, job.error),
        });
    }
    Ok(report)
}

/// fio's JSON report, as far as it is read here.
#[derive(Debug, Deserialize)]
pub struct FioReport {
    jobs: Vec<FioJob>,
}

#[derive(Debug, Deserialize)]
struct FioJob {
    jobname: String,
    /// The errno a job stopped with (0: none).
    #[serde(default)]
    error: i64,
    read: FioStats,
    write: FioStats,
}

#[derive(Debug, Deserialize)]
struct FioStats {
    iops: f64,
    bw_bytes: u64,
    clat_ns: Clat,
}

#[derive(Debug, Deserialize)]
struct Clat {
    /// Absent when the direction did nothing.
    #[serde(default)]
    percentile: BTreeMap<String, f64>,
}

impl FioReport {
    fn job(&self, name: &str, direction: Direction) -> Option<&FioStats> {
        let job = self.jobs.iter().find(|j| j.jobname == name)?;
        Some(match direction {
            Direction::Read => &job.read,
            Direction::Write => &job.write,
        })
    }
}

/// The JSON report; fio may print notes before it.
pub fn parse(stdout: &str) -> Result<FioReport> {
    let start = stdout.find('{').unwrap_or(0);
    serde_json::from_str(&stdout[start..]).map_err(|_| ProbeError::Unreadable {
        tool: "fio".into(),
        what: "JSON report",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_figures_come_from_fio_3_33s_own_json() {
        let report = parse(include_str!("../tests/data/fio-3.33-compaction.json")).unwrap();
        let reads = report.job("reads", Direction::Read).unwrap();
        assert_eq!(reads.iops, 25592.407592);
        assert_eq!(reads.bw_bytes, 104826501);
        assert!(reads.clat_ns.percentile.contains_key("99.000000"));
        let writes = report.job("writes", Direction::Write).unwrap();
        assert_eq!(writes.clat_ns.percentile.get("1.000000"), Some(&168960.0));
        assert!(report
            .job("writes", Direction::Read)
            .unwrap()
            .clat_ns
            .percentile
            .is_empty());
        assert!(report.job("other", Direction::Read).is_none());
    }

    #[test]
    fn notes_before_the_report_are_skipped_and_no_report_is_an_error() {
        let text = format!(
            "fio: note\n{}",
            include_str!("../tests/data/fio-3.33-compaction.json")
        );
        assert_eq!(parse(&text).unwrap().jobs.len(), 2);
        assert!(parse("fio: nothing").is_err());
    }
}
