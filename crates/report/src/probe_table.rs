//! A probe as a person reads it: the machine in one line, then one row per figure; two probes side
//! by side with their ratio.

use cqlbench_results::{shown, Probe};

/// One line about the machine and where the disk figures were taken.
pub fn probe_machine_line(probe: &Probe) -> String {
    let memory = probe.memory_kib.map_or(String::new(), |kib| {
        format!(", {:.1} GiB", kib as f64 / 1048576.0)
    });
    let disk = probe.disk.as_ref().map_or(String::new(), |d| {
        format!(" ({} on {})", d.filesystem, d.device)
    });
    format!(
        "{}, {} cores{memory}, kernel {}; disk figures in {}{disk}{}",
        probe.cpu_model.as_deref().unwrap_or("unknown CPU"),
        probe.cores,
        probe.kernel,
        probe.data_dir.display(),
        if probe.quick { "; quick probe" } else { "" }
    )
}

fn value(v: f64) -> String {
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.3}")
    }
}

/// The probe's figures as rows of (figure, value).
pub(crate) fn probe_rows(probe: &Probe) -> Vec<Vec<String>> {
    probe
        .figures
        .iter()
        .map(|(name, v)| vec![name.clone(), value(*v)])
        .collect()
}

pub(crate) const PROBE_NOTE: &str = "The quick machine probe the campaign took before its first \
cell (`cqlbench probe --quick`): sysbench's CPU and memory tests and fio's Cassandra-like profiles, \
from the tools' own reports; `cqlbench compare` puts two probes side by side.";

/// The probe's table.
pub fn probe_table(probe: &Probe) -> String {
    let width = probe
        .figures
        .keys()
        .map(String::len)
        .max()
        .unwrap_or(6)
        .max(6);
    let mut out = format!("{}\n", probe_machine_line(probe));
    out.push_str(&format!("{:<width$}  {:>12}\n", "figure", "value"));
    for (name, v) in &probe.figures {
        out.push_str(&format!("{name:<width$}  {:>12}\n", value(*v)));
    }
    for note in &probe.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

/// Two probes side by side: every figure either has, and B / A.
pub fn probe_comparison(a: &Probe, b: &Probe, a_name: &str, b_name: &str) -> String {
    let mut names: Vec<&String> = a.figures.keys().chain(b.figures.keys()).collect();
    names.sort();
    names.dedup();
    let width = names.iter().map(|n| n.len()).max().unwrap_or(6).max(6);
    let mut out = format!(
        "A: {a_name}: {}\nB: {b_name}: {}\n",
        probe_machine_line(a),
        probe_machine_line(b)
    );
    out.push_str(&format!(
        "{:<width$}  {:>12}  {:>12}  {:>7}\n",
        "figure", "A", "B", "B / A"
    ));
    for name in names {
        let (x, y) = (a.figures.get(name).copied(), b.figures.get(name).copied());
        let ratio = x.zip(y).filter(|(x, _)| *x != 0.0).map(|(x, y)| y / x);
        out.push_str(&format!(
            "{name:<width$}  {:>12}  {:>12}  {:>7}\n",
            shown(x, value),
            shown(y, value),
            shown(ratio, |r| format!("{r:.2}x"))
        ));
    }
    for (label, probe) in [("A", a), ("B", b)] {
        for note in &probe.notes {
            out.push_str(&format!("note ({label}): {note}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn probe(figures: &[(&str, f64)]) -> Probe {
        Probe {
            version: 2,
            taken_at_unix_s: 0.0,
            quick: true,
            seconds: 20.0,
            cpu_model: Some("Test CPU".into()),
            cores: 2,
            memory_kib: Some(2 * 1048576),
            kernel: "6.1".into(),
            data_dir: "/data".into(),
            disk: None,
            tools: BTreeMap::new(),
            figures: figures.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
            notes: vec![],
        }
    }

    #[test]
    fn two_probes_side_by_side_with_their_ratio_and_absent_figures_shown_as_such() {
        let a = probe(&[
            ("sysbench.cpu.threads_1.events_per_s", 4000.0),
            ("fio.x.read.iops", 10.0),
        ]);
        let b = probe(&[("sysbench.cpu.threads_1.events_per_s", 5000.0)]);
        let text = probe_comparison(&a, &b, "a", "b");
        assert!(
            text.contains(
                "A: a: Test CPU, 2 cores, 2.0 GiB, kernel 6.1; disk figures in /data; quick probe"
            ),
            "{text}"
        );
        let row = text
            .lines()
            .find(|l| l.starts_with("sysbench.cpu"))
            .unwrap();
        assert_eq!(
            row.split_whitespace().collect::<Vec<_>>(),
            [
                "sysbench.cpu.threads_1.events_per_s",
                "4000",
                "5000",
                "1.25x"
            ]
        );
        let row = text.lines().find(|l| l.starts_with("fio.x")).unwrap();
        assert_eq!(
            row.split_whitespace().collect::<Vec<_>>(),
            ["fio.x.read.iops", "10.000", "–", "–"]
        );
    }
}
