//! Who used the CPU between two process scans, from each process's own counters.
//!
//! The machine's `/proc/stat` cannot say it: on a virtual machine its tick-sampled totals drift from
//! the processes' own (precise) CPU times by a fifth of a core within a second, both ways (measured
//! here: 141 to 239 ticks per wall second on 2 cores). So the CPU of "other processes" is summed
//! from the processes themselves: what each used since the last scan, all of it for one started
//! since, and, through its parent's reaped-children counters (`cutime`/`cstime`), what a process
//! used that started and ended between two scans. A reaped child's CPU that was already counted
//! while it lived is owed back by its parent, so nothing is counted twice.

use std::collections::HashMap;

use crate::procfs::ProcessTicks;

/// One scan: every process by PID.
pub type Scan = HashMap<i32, ProcessTicks>;

/// CPU (ticks) between two scans: the other processes' total and each one's part.
#[derive(Debug, Default, PartialEq)]
pub struct Usage {
    pub other: u64,
    /// Other processes that used CPU (pid, name, ticks), the most first.
    pub by_process: Vec<(i32, String, u64)>,
    /// Per PID asked for with `own_of` (the client, the nodes): their own CPU.
    pub own: HashMap<i32, u64>,
}

/// Reaped children's CPU that a parent's `cutime`/`cstime` will bring again: counted while those
/// children lived, owed back when the parent's counters grow.
#[derive(Debug, Default)]
pub struct Debts(HashMap<i32, u64>);

/// The CPU used from `before` to `now`. Processes for which `excluded` holds (the client, the
/// nodes) are not "other"; their own CPU is returned in `Usage::own`.
pub fn usage(
    before: &Scan,
    now: &Scan,
    debts: &mut Debts,
    excluded: impl Fn(i32) -> bool,
) -> Usage {
    owe_for_the_gone(before, now, debts);
    let mut usage = Usage::default();
    for p in now.values() {
        let earlier = before.get(&p.pid).filter(|b| b.start == p.start);
        let own = p.cpu - earlier.map_or(0, |b| b.cpu.min(p.cpu));
        let reaped = p.children - earlier.map_or(0, |b| b.children.min(p.children));
        let reaped = debts.pay(p.pid, reaped);
        if excluded(p.pid) {
            usage.own.insert(p.pid, own);
            continue;
        }
        let used = own + reaped;
        if used > 0 {
            usage.other += used;
            usage.by_process.push((p.pid, p.name.clone(), used));
        }
    }
    usage.by_process.sort_by_key(|p| std::cmp::Reverse(p.2));
    usage
}

/// A process gone since `before` was reaped by its parent, whose children's counters now hold all
/// its CPU: what was seen of it before is owed back.
fn owe_for_the_gone(before: &Scan, now: &Scan, debts: &mut Debts) {
    for gone in before.values() {
        let still_here = now.get(&gone.pid).is_some_and(|p| p.start == gone.start);
        if !still_here {
            *debts.0.entry(gone.ppid).or_default() += gone.cpu + gone.children;
        }
    }
}

impl Debts {
    /// What is left of `reaped` once the debt of `pid` is paid from it.
    fn pay(&mut self, pid: i32, reaped: u64) -> u64 {
        let Some(debt) = self.0.get_mut(&pid) else {
            return reaped;
        };
        let paid = reaped.min(*debt);
        *debt -= paid;
        if *debt == 0 {
            self.0.remove(&pid);
        }
        reaped - paid
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(pid: i32, ppid: i32, cpu: u64, children: u64) -> ProcessTicks {
        ProcessTicks {
            pid,
            name: format!("p{pid}"),
            ppid,
            cpu,
            children,
            start: 100 + pid as u64,
        }
    }

    fn scan(processes: &[ProcessTicks]) -> Scan {
        processes.iter().map(|p| (p.pid, p.clone())).collect()
    }

    const NOBODY: fn(i32) -> bool = |_| false;

    #[test]
    fn a_process_counts_what_it_used_since_the_last_scan_or_all_if_new() {
        let before = scan(&[process(10, 1, 50, 0)]);
        let now = scan(&[process(10, 1, 80, 0), process(11, 1, 7, 0)]);
        let used = usage(&before, &now, &mut Debts::default(), NOBODY);
        assert_eq!(used.other, 37);
        assert_eq!(
            used.by_process,
            [(10, "p10".to_string(), 30), (11, "p11".to_string(), 7)]
        );
    }

    #[test]
    fn a_child_that_lived_between_two_scans_is_counted_through_its_parent() {
        let before = scan(&[process(10, 1, 50, 0)]);
        let now = scan(&[process(10, 1, 51, 40)]);
        let used = usage(&before, &now, &mut Debts::default(), NOBODY);
        assert_eq!(used.other, 41);
    }

    #[test]
    fn a_reaped_child_is_counted_once() {
        let mut debts = Debts::default();
        let first = scan(&[process(10, 1, 0, 0), process(20, 10, 30, 0)]);
        let second = scan(&[process(10, 1, 0, 0), process(20, 10, 90, 0)]);
        assert_eq!(usage(&first, &second, &mut debts, NOBODY).other, 60);
        // Gone, reaped by 10 with 95 ticks in all: only its last 5 are new.
        let third = scan(&[process(10, 1, 0, 95)]);
        assert_eq!(usage(&second, &third, &mut debts, NOBODY).other, 5);
    }

    #[test]
    fn a_debt_is_paid_when_the_parent_reaps_after_the_scan() {
        let mut debts = Debts::default();
        let first = scan(&[process(10, 1, 0, 0), process(20, 10, 90, 0)]);
        // The child left /proc but its parent was read before it reaped it.
        let second = scan(&[process(10, 1, 0, 0)]);
        assert_eq!(usage(&first, &second, &mut debts, NOBODY).other, 0);
        let third = scan(&[process(10, 1, 0, 92)]);
        assert_eq!(usage(&second, &third, &mut debts, NOBODY).other, 2);
    }

    #[test]
    fn a_reused_pid_is_a_new_process() {
        let before = scan(&[process(10, 1, 500, 0)]);
        let mut reused = process(10, 1, 20, 0);
        reused.start += 1;
        let used = usage(&before, &scan(&[reused]), &mut Debts::default(), NOBODY);
        assert_eq!(used.other, 20);
    }

    #[test]
    fn excluded_processes_are_not_other_and_their_own_cpu_is_returned() {
        let before = scan(&[process(10, 1, 50, 0), process(30, 1, 0, 0)]);
        let now = scan(&[process(10, 1, 150, 0), process(30, 1, 4, 0)]);
        let used = usage(&before, &now, &mut Debts::default(), |pid| pid == 10);
        assert_eq!(used.other, 4);
        assert_eq!(used.own.get(&10), Some(&100));
        // An excluded node reaped by another process leaves only its last unseen part there.
        let mut debts = Debts::default();
        let gone = scan(&[process(30, 1, 4, 0)]);
        let reaper = scan(&[process(30, 1, 4, 0), process(40, 30, 700, 0)]);
        let reaped = scan(&[process(30, 1, 4, 703)]);
        assert_eq!(usage(&gone, &reaper, &mut debts, |pid| pid == 40).other, 0);
        assert_eq!(
            usage(&reaper, &reaped, &mut debts, |pid| pid == 40).other,
            3
        );
    }
}
