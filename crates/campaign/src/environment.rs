//! The campaign's environment record: enough to reproduce a result, or to distrust it.

use std::path::Path;

use cqlbench_cluster::Home;
use serde_json::{json, Value};

use crate::plan::Plan;

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn cpu_model() -> Option<String> {
    read("/proc/cpuinfo")
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

fn meminfo_kib(key: &str) -> Option<u64> {
    read("/proc/meminfo")
        .lines()
        .find(|l| l.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// The mount holding `path` (longest mount point that prefixes it), with its device and whether the
/// device says it is rotational.
fn disk_of(path: &Path) -> Value {
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mounts = read("/proc/mounts");
    let best = mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some((f.next()?, f.next()?, f.next()?))
        })
        .filter(|(_, mount, _)| path.starts_with(mount))
        .max_by_key(|(_, mount, _)| mount.len());
    let Some((device, mount, fstype)) = best else {
        return Value::Null;
    };
    let block = device.trim_start_matches("/dev/");
    let base: String = block
        .trim_end_matches(|c: char| c.is_ascii_digit())
        .to_string();
    let rotational = [block, base.as_str()]
        .iter()
        .map(|b| read(&format!("/sys/block/{b}/queue/rotational")))
        .find(|v| !v.is_empty())
        .map(|v| v.trim() == "1");
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    let c_path = std::ffi::CString::new(mount).unwrap_or_default();
    // SAFETY: c_path is a valid C string and stat a properly sized output buffer.
    let ok = unsafe { libc::statvfs(c_path.as_ptr(), &mut stat) } == 0;
    json!({
        "path": path,
        "device": device,
        "mount": mount,
        "filesystem": fstype,
        "rotational": rotational,
        "size_bytes": ok.then(|| stat.f_blocks as u64 * stat.f_frsize as u64),
        "free_bytes": ok.then(|| stat.f_bavail as u64 * stat.f_frsize as u64),
    })
}

/// Everything about the machine and the software that a reader of the results needs.
pub fn record(plan: &Plan, dir: &Path, home: &Home) -> Value {
    let jdks: Vec<Value> = cqlbench_cluster::jdk::discover(home)
        .iter()
        .map(|j| json!({"major": j.major, "version": j.version, "home": j.home}))
        .collect();
    let configs: Vec<Value> = plan
        .configs
        .iter()
        .map(|c| json!({"name": c.name, "directory": c.dir_name, "spec": c.spec}))
        .collect();
    json!({
        "cqlbench_version": env!("CARGO_PKG_VERSION"),
        "recorded_at_unix_s": crate::figures::unix_now(),
        "cpu_model": cpu_model(),
        "cores": std::thread::available_parallelism().map(|n| n.get()).ok(),
        "memory_kib": meminfo_kib("MemTotal:"),
        "kernel": read("/proc/sys/kernel/osrelease").trim(),
        "kernel_build": read("/proc/sys/kernel/version").trim(),
        "disk": {
            "results": disk_of(dir),
            "clusters": disk_of(home.root()),
        },
        "jdks_found": jdks,
        "configs": configs,
        "workload": plan.load.workload,
        "load_args": plan.load.args,
        "plan": plan.source,
    })
}
