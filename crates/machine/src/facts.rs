//! What the machine is: CPU model, memory, kernel, and the filesystem a directory is on.

use std::path::Path;

use cqlbench_results::DiskRecord;

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The CPU's model name (`/proc/cpuinfo`).
pub fn cpu_model() -> Option<String> {
    read("/proc/cpuinfo")
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// A `/proc/meminfo` figure in KiB (e.g. `MemTotal:`).
pub fn meminfo_kib(key: &str) -> Option<u64> {
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
pub fn disk_of(path: &Path) -> Option<DiskRecord> {
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
    let (device, mount, fstype) = best?;
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
    Some(DiskRecord {
        path: path.clone(),
        device: device.to_string(),
        mount: mount.to_string(),
        filesystem: fstype.to_string(),
        rotational,
        size_bytes: ok.then(|| stat.f_blocks as u64 * stat.f_frsize as u64),
        free_bytes: ok.then(|| stat.f_bavail as u64 * stat.f_frsize as u64),
    })
}

/// The kernel release (`uname -r`).
pub fn kernel() -> String {
    read("/proc/sys/kernel/osrelease").trim().to_string()
}

/// The kernel's build string (`uname -v`).
pub fn kernel_build() -> String {
    read("/proc/sys/kernel/version").trim().to_string()
}

/// The cores this process may use.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
