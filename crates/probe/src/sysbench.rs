//! sysbench's CPU and memory tests, read from its own report.

use crate::error::{ProbeError, Result};
use crate::tools::Tool;

/// `sysbench cpu --threads=N --time=S run` (prime numbers up to 10000, sysbench's default):
/// events per second.
pub fn cpu(tool: &Tool, threads: usize, seconds: u32) -> Result<f64> {
    let text = run(
        tool,
        &[
            "cpu".to_string(),
            format!("--threads={threads}"),
            format!("--time={seconds}"),
            "run".to_string(),
        ],
    )?;
    events_per_s(&text).ok_or_else(|| unreadable(tool, "events per second"))
}

/// `sysbench memory --memory-block-size=1M` over `seconds`: MiB per second.
pub fn memory(tool: &Tool, threads: usize, seconds: u32) -> Result<f64> {
    let text = run(
        tool,
        &[
            "memory".to_string(),
            format!("--threads={threads}"),
            format!("--time={seconds}"),
            "--memory-block-size=1M".to_string(),
            // Large enough that the time, not the size, ends the test.
            "--memory-total-size=100000G".to_string(),
            "run".to_string(),
        ],
    )?;
    mib_per_s(&text).ok_or_else(|| unreadable(tool, "MiB/sec"))
}

fn unreadable(tool: &Tool, what: &'static str) -> ProbeError {
    ProbeError::Unreadable {
        tool: tool.program.display().to_string(),
        what,
    }
}

fn run(tool: &Tool, args: &[String]) -> Result<String> {
    let output = tool
        .command()
        .args(args)
        .output()
        .map_err(|e| ProbeError::ToolFailed {
            tool: "sysbench".into(),
            line: e.to_string(),
        })?;
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(ProbeError::ToolFailed {
            tool: format!("sysbench {}", args.join(" ")),
            // sysbench prints its errors (`FATAL: …`) to standard output.
            line: cqlbench_debian::failure_line(&stderr, &stdout, |l| l.starts_with("FATAL")),
        });
    }
    Ok(stdout)
}

/// `    events per second:  4204.39`
pub fn events_per_s(text: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("events per second:"))?
        .trim()
        .parse()
        .ok()
}

/// `30653.00 MiB transferred (30630.99 MiB/sec)`
pub fn mib_per_s(text: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.contains("MiB transferred"))?;
    let inside = line.split_once('(')?.1;
    inside.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_figures_come_from_sysbench_1_0_20s_own_report() {
        let cpu = include_str!("../tests/data/sysbench-1.0.20-cpu.txt");
        assert_eq!(events_per_s(cpu), Some(4204.39));
        let memory = include_str!("../tests/data/sysbench-1.0.20-memory.txt");
        assert_eq!(mib_per_s(memory), Some(30630.99));
        assert_eq!(events_per_s(memory), None);
    }
}
