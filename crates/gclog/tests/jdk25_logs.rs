//! JDK 25 logs of every collector cqlbench runs there, from real Cassandra 5.0.9 nodes started with
//! `cqlbench cluster up --jdk 25` (tests/fixtures/README.md): read completely, generational Shenandoah's
//! young, global and old cycles and generational ZGC's young and old collections counted, and the
//! concurrent time checked against the union of the raw lines' intervals, derived here without the parser.

use std::io::Read;
use std::path::{Path, PathBuf};

use cqlbench_gclog::{analyze, Input, Report};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A fixture log: `NAME.log`, or the gzipped single part `NAME/gc.log.gz`.
fn log(dir: &str, name: &str) -> PathBuf {
    let plain = fixtures().join(dir).join(format!("{name}.log"));
    if plain.exists() {
        plain
    } else {
        fixtures().join(dir).join(name).join("gc.log.gz")
    }
}

fn raw(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    if path.extension().is_some_and(|e| e == "gz") {
        let mut text = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut text)
            .unwrap();
        text
    } else {
        String::from_utf8(bytes).unwrap()
    }
}

fn report(path: &Path) -> Report {
    analyze(&[Input::Path(path.to_path_buf())], None, &mut |_| {})
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `[time][12.345s][info][gc] message` → (12.345, "message"): the uptime decorator and the message.
fn uptime_and_message(line: &str) -> Option<(f64, &str)> {
    let mut rest = line;
    let mut uptime = None;
    while let Some(stripped) = rest.strip_prefix('[') {
        let end = stripped.find(']')?;
        let token = stripped[..end].trim();
        if let Some(seconds) = token.strip_suffix('s') {
            if let Ok(value) = seconds.parse::<f64>() {
                uptime = Some(value);
            }
        }
        rest = &stripped[end + 1..];
    }
    Some((uptime?, rest.trim_start()))
}

/// Concurrent wall time from the raw lines: the union of [stamp − duration, stamp] over every
/// `Concurrent … N.NNNms` phase line and every ZGC `Major|Minor Collection … N.NNNs` cycle line.
fn concurrent_union_s(text: &str) -> f64 {
    let mut intervals: Vec<(f64, f64)> = Vec::new();
    for line in text.lines() {
        let Some((stamp, message)) = uptime_and_message(line) else {
            continue;
        };
        let message = match message.strip_prefix("GC(") {
            Some(rest) => rest.split_once(") ").map_or(message, |(_, m)| m),
            None => message,
        };
        let message = message
            .strip_prefix("Y: ")
            .or_else(|| message.strip_prefix("O: "))
            .unwrap_or(message);
        let last = message.rsplit(' ').next().unwrap_or("");
        let duration_s = if message.starts_with("Concurrent ") {
            last.strip_suffix("ms")
                .and_then(|v| v.parse::<f64>().ok())
                .map(|ms| ms / 1000.0)
        } else if message.starts_with("Major Collection ")
            || message.starts_with("Minor Collection ")
        {
            last.strip_suffix('s').and_then(|v| v.parse::<f64>().ok())
        } else {
            None
        };
        if let Some(d) = duration_s {
            intervals.push((stamp - d, stamp));
        }
    }
    intervals.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let mut total = 0.0;
    let mut current: Option<(f64, f64)> = None;
    for (start, end) in intervals {
        current = match current {
            Some((s, e)) if start <= e => Some((s, e.max(end))),
            Some((s, e)) => {
                total += e - s;
                Some((start, end))
            }
            None => Some((start, end)),
        };
    }
    if let Some((s, e)) = current {
        total += e - s;
    }
    total
}

/// Finished pause lines of a collection (`… GC(N) … Pause NAME … N.NNNms`, not the statistics tables)
/// whose message contains every needle.
fn pause_lines(text: &str, needles: &[&str]) -> u64 {
    text.lines()
        .filter(|l| l.contains("] GC(") && l.contains(" Pause ") && l.ends_with("ms"))
        .filter(|l| needles.iter().all(|n| l.contains(n)))
        .count() as u64
}

const CASSANDRA_JDK25: [(&str, &str, bool); 3] = [
    ("c5.0.9-jdk25-g1", "G1", false),
    ("c5.0.9-jdk25-zgcgen", "ZGC", true),
    ("c5.0.9-jdk25-shenandoah-gen", "Shenandoah", true),
];

#[test]
fn cassandra_nodes_on_jdk25_are_read_completely() {
    for (name, collector, generational) in CASSANDRA_JDK25 {
        let path = log("cassandra", name);
        let text = raw(&path);
        let report = report(&path);
        assert_eq!(report.unparsed_lines, 0, "{name}");
        assert_eq!(report.lines, text.lines().count() as u64, "{name}");
        assert_eq!(report.jvm.collector.as_deref(), Some(collector), "{name}");
        assert_eq!(report.jvm.generational, generational, "{name}");
        assert!(
            report.jvm.version.as_deref().unwrap().starts_with("25."),
            "{name}"
        );
        assert!(report.pauses.count > 0, "{name}");
    }
}

#[test]
fn generational_shenandoah_counts_young_global_and_old_cycles() {
    for path in [
        log("cassandra", "c5.0.9-jdk25-shenandoah-gen"),
        log("unified", "j25-shenandoah-gen"),
    ] {
        let text = raw(&path);
        let report = report(&path);
        let name = path.display();
        // Both fixtures have young cycles and old marking; the Cassandra node also global cycles.
        assert!(pause_lines(&text, &["(Young)"]) > 0, "{name}");
        assert!(
            pause_lines(&text, &["Pause Final Mark (Old)"]) > 0,
            "{name}"
        );
        assert!(text.contains("Concurrent marking (Old)"), "{name}");
        for kind in ["Init Mark", "Final Mark"] {
            let lines: u64 = ["(Young)", "(Global)", "(Old)"]
                .iter()
                .map(|generation| pause_lines(&text, &[&format!("Pause {kind} {generation}")]))
                .sum();
            assert_eq!(lines, pause_lines(&text, &[&format!("Pause {kind} ")]));
            assert_eq!(report.pauses.by_kind[kind].count, lines, "{name} {kind}");
        }
        for kind in ["Init Update Refs", "Final Update Refs"] {
            assert_eq!(
                report.pauses.by_kind[kind].count,
                pause_lines(&text, &[&format!("Pause {kind} ")]),
                "{name} {kind}"
            );
        }
    }
    let node = raw(&log("cassandra", "c5.0.9-jdk25-shenandoah-gen"));
    assert!(pause_lines(&node, &["Pause Init Mark (Global)"]) > 0);
}

#[test]
fn generational_zgc_counts_young_and_old_collections() {
    let path = log("cassandra", "c5.0.9-jdk25-zgcgen");
    let text = raw(&path);
    let report = report(&path);
    assert!(text.lines().any(|l| l.contains(") Minor Collection (")));
    assert!(text.lines().any(|l| l.contains(") Major Collection (")));
    // `y:` is the young generation of a minor collection, `Y:` that of a major one, `O:` the old.
    for kind in ["Mark Start", "Mark End", "Relocate Start"] {
        let minor = pause_lines(&text, &[&format!("y: Pause {kind} ")]);
        let major_young = pause_lines(&text, &[&format!("Y: Pause {kind} ")]);
        let old = pause_lines(&text, &[&format!("O: Pause {kind} ")]);
        assert!(minor > 0 && major_young > 0, "{kind}");
        assert!(old > 0 || kind == "Mark Start", "{kind}");
        assert_eq!(
            pause_lines(&text, &[&format!("Pause {kind} ")]),
            minor + major_young + old,
            "{kind}"
        );
        assert_eq!(
            report.pauses.by_kind[kind].count,
            minor + major_young + old,
            "{kind}"
        );
    }
}

#[test]
fn concurrent_time_is_the_union_of_the_raw_intervals() {
    let logs = [
        log("cassandra", "c5.0.9-jdk25-g1"),
        log("cassandra", "c5.0.9-jdk25-zgcgen"),
        log("cassandra", "c5.0.9-jdk25-shenandoah-gen"),
        log("unified", "j25-shenandoah-gen"),
        log("unified", "j25-zgc-cqlbench"),
    ];
    for path in logs {
        let expected = concurrent_union_s(&raw(&path));
        assert!(expected > 0.0, "{}", path.display());
        let actual = report(&path).concurrent.expect("concurrent report").total_s;
        assert!(
            (actual - expected).abs() < 1e-6,
            "{}: parser {actual} s, raw lines {expected} s",
            path.display()
        );
    }
}
