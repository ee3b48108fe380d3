//! The few `/proc` files the evidence comes from.

use std::collections::HashSet;
use std::net::SocketAddr;

/// Clock ticks per second of `/proc`'s CPU times.
pub fn clock_ticks_per_s() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        ticks as f64
    } else {
        100.0
    }
}

/// The machine's CPU times (all cores), in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MachineCpu {
    pub total: u64,
    /// user + nice + system: time processes ran (interrupts, mostly the benchmark's own network
    /// traffic, are left out).
    pub busy: u64,
    pub iowait: u64,
    pub steal: u64,
}

/// The `cpu` line of `/proc/stat`: user nice system idle iowait irq softirq steal (guest time is
/// already inside user).
pub fn parse_machine_cpu(stat: &str) -> Option<MachineCpu> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    (fields.len() == 8).then(|| MachineCpu {
        total: fields.iter().sum(),
        busy: fields[0] + fields[1] + fields[2],
        iowait: fields[4],
        steal: fields[7],
    })
}

/// One process: its name, parent, CPU (utime + stime), its reaped children's CPU (cutime + cstime)
/// and start (ticks since boot).
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessTicks {
    pub pid: i32,
    pub name: String,
    pub ppid: i32,
    pub cpu: u64,
    pub children: u64,
    pub start: u64,
}

/// `/proc/PID/stat`. The name (field 2) may hold spaces and parentheses: it ends at the last `)`.
pub fn parse_process(pid: i32, stat: &str) -> Option<ProcessTicks> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?.to_string();
    let fields: Vec<&str> = stat.get(close + 2..)?.split_whitespace().collect();
    // Fields from 3 (state) on: ppid 4, utime 14, stime 15, cutime 16, cstime 17, starttime 22.
    let field = |n: usize| fields.get(n - 3)?.parse::<u64>().ok();
    Some(ProcessTicks {
        pid,
        name,
        ppid: fields.get(1)?.parse().ok()?,
        cpu: field(14)? + field(15)?,
        children: field(16)? + field(17)?,
        start: field(22)?,
    })
}

/// Every process now.
pub fn processes() -> Vec<ProcessTicks> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            parse_process(pid, &stat)
        })
        .collect()
}

/// `MemAvailable` of `/proc/meminfo`, in MiB.
pub fn parse_available_mb(meminfo: &str) -> Option<f64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Pages swapped in and out so far (`pswpin` + `pswpout` of `/proc/vmstat`).
pub fn parse_swap_pages(vmstat: &str) -> Option<u64> {
    let value = |key: &str| -> Option<u64> {
        let line = vmstat
            .lines()
            .find(|l| l.split_whitespace().next() == Some(key))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    Some(value("pswpin")? + value("pswpout")?)
}

/// Socket inodes listening on one of `addrs` (`/proc/net/tcp{,6}`, state 0A), with the address.
fn listening_inodes(addrs: &[SocketAddr]) -> Vec<(u64, SocketAddr)> {
    let mut found = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() < 10 || fields[3] != "0A" {
                continue;
            }
            let (Some(local), Ok(inode)) = (listening_address(fields[1]), fields[9].parse()) else {
                continue;
            };
            if let Some(addr) = addrs.iter().find(|a| **a == local) {
                found.push((inode, *addr));
            }
        }
    }
    found
}

/// `0100007F:2352` as a socket address, an IPv4-mapped IPv6 address as its IPv4 one (a node bound to
/// `127.0.0.1` may show in `/proc/net/tcp6`).
fn listening_address(text: &str) -> Option<SocketAddr> {
    let address = cqlbench_cluster::process::parse_address(text)?;
    let ip = match address.ip() {
        std::net::IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(v6.into(), Into::into),
        v4 => v4,
    };
    Some(SocketAddr::new(ip, address.port()))
}

/// The processes of this machine listening on each of `addrs` (a cluster's nodes, whoever started
/// them), found through their sockets' inodes; addresses nobody here listens on are left out.
pub fn pids_listening_on(addrs: &[SocketAddr]) -> Vec<(SocketAddr, i32)> {
    let inodes = listening_inodes(addrs);
    if inodes.is_empty() {
        return Vec::new();
    }
    let wanted: Vec<u64> = inodes.iter().map(|(inode, _)| *inode).collect();
    let mut found = Vec::new();
    let mut seen = HashSet::new();
    for (inode, pid) in cqlbench_cluster::process::socket_holders(&wanted) {
        if let Some((_, addr)) = inodes.iter().find(|(i, _)| *i == inode) {
            if seen.insert((*addr, pid)) {
                found.push((*addr, pid));
            }
        }
    }
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn machine_cpu_comes_from_the_cpu_line() {
        let stat = "cpu  100 5 30 800 20 0 5 40 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n";
        let cpu = parse_machine_cpu(stat).unwrap();
        assert_eq!(
            cpu,
            MachineCpu {
                total: 1000,
                busy: 135,
                iowait: 20,
                steal: 40
            }
        );
        assert!(parse_machine_cpu("cpu0 1 2\n").is_none());
    }

    #[test]
    fn a_process_name_may_hold_spaces_and_parentheses() {
        let stat = "4242 (my (odd) name) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 3 0 12345 0 0";
        let p = parse_process(4242, stat).unwrap();
        assert_eq!(
            (p.name.as_str(), p.ppid, p.cpu, p.children, p.start),
            ("my (odd) name", 17, 300, 10, 12345)
        );
    }

    #[test]
    fn memory_swap_and_addresses_are_read() {
        assert_eq!(
            parse_available_mb("MemTotal: 1 kB\nMemAvailable:    2048 kB\n"),
            Some(2.0)
        );
        assert_eq!(parse_swap_pages("pswpin 3\npswpout 4\n"), Some(7));
        assert_eq!(
            listening_address("0100007F:2352"),
            Some("127.0.0.1:9042".parse().unwrap())
        );
        assert_eq!(
            listening_address("0000000000000000FFFF00000100007F:2352"),
            Some("127.0.0.1:9042".parse().unwrap())
        );
    }

    #[test]
    fn the_process_listening_on_an_address_is_found() {
        let listener = std::net::TcpListener::bind("127.0.16.9:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let found = pids_listening_on(&[addr]);
        assert_eq!(found, vec![(addr, std::process::id() as i32)]);
        drop(listener);
        assert!(pids_listening_on(&[addr]).is_empty());
    }

    #[test]
    fn every_process_is_read_with_its_name_parent_and_cpu() {
        // Some CPU of our own first, so that the counters have something to show.
        let spin_until = std::time::Instant::now() + std::time::Duration::from_millis(50);
        while std::time::Instant::now() < spin_until {}
        let all = processes();
        let own = std::process::id() as i32;
        let me = all
            .iter()
            .find(|p| p.pid == own)
            .expect("this process is listed");
        let comm = std::fs::read_to_string("/proc/self/comm").unwrap();
        assert_eq!(me.name, comm.trim_end());
        assert_eq!(me.ppid, std::os::unix::process::parent_id() as i32);
        assert!(me.cpu > 0 && me.start > 0, "{me:?}");
        assert!(all.iter().any(|p| p.pid == 1), "init is listed");
        let listed = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.parse::<i32>().is_ok())
            })
            .count();
        // Processes may come and go between the two listings, not most of them.
        assert!(all.len() * 2 > listed, "{} of {listed}", all.len());
    }
}
