//! Real GC logs (see tests/fixtures/README.md for how each was produced) checked against figures
//! derived from the raw lines with awk (tests/fixtures/expected-*.awk), independently of the parser.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use cqlbench_gclog::{analyze, GcLogError, Input, Report};
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn run(paths: &[PathBuf]) -> Report {
    let inputs: Vec<Input> = paths.iter().map(|p| Input::Path(p.clone())).collect();
    analyze(&inputs, None, &mut |_| {}).unwrap_or_else(|e| panic!("{paths:?}: {e}"))
}

fn run_with_timeline(paths: &[PathBuf]) -> (Report, String) {
    let inputs: Vec<Input> = paths.iter().map(|p| Input::Path(p.clone())).collect();
    let mut timeline = Vec::new();
    let report = analyze(&inputs, Some(&mut timeline), &mut |_| {}).unwrap();
    (report, String::from_utf8(timeline).unwrap())
}

/// The log parts a `.expected` file describes: `NAME.log`, or every part in the directory `NAME/`.
fn parts_of(expected: &Path) -> Vec<PathBuf> {
    let name = expected.to_string_lossy();
    let stem = PathBuf::from(name.strip_suffix(".expected").expect(".expected file"));
    if stem.is_dir() {
        let mut parts: Vec<PathBuf> = fs::read_dir(&stem)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        // Reverse name order on purpose: the reader must restore time order itself.
        parts.sort();
        parts.reverse();
        parts
    } else {
        vec![PathBuf::from(format!("{}.log", stem.display()))]
    }
}

/// The files named `*.EXTENSION` directly in `root`'s subdirectories `dirs`, in name order.
fn files_in(root: &Path, dirs: &[&str], extension: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in dirs {
        for entry in fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == extension) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

const EXPECTED_DIRS: [&str; 3] = ["unified", "jdk8", "cassandra"];

fn expected_files() -> Vec<PathBuf> {
    let files = files_in(&fixtures(), &EXPECTED_DIRS, "expected");
    assert!(files.len() >= 30, "fixtures missing: {files:?}");
    files
}

fn close(actual: f64, expected: f64) -> bool {
    // awk prints 6 decimals; logs print durations to the microsecond or nanosecond.
    (actual - expected).abs() <= 1e-5 + expected.abs() * 1e-9
}

#[test]
fn every_fixture_matches_its_awk_derived_figures() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for expected_path in expected_files() {
        let report = run(&parts_of(&expected_path));
        let json = serde_json::to_value(&report).unwrap();
        let expected = fs::read_to_string(&expected_path).unwrap();
        let mut expected_kinds = 0;
        for line in expected.lines() {
            let (key, value) = line.split_once('\t').expect("key<TAB>value");
            let value: f64 = value.parse().unwrap();
            if key.starts_with("pauses/by_kind/") && key.ends_with("/count") {
                expected_kinds += 1;
            }
            let pointer = format!("/{key}");
            match json.pointer(&pointer).and_then(Value::as_f64) {
                Some(actual) if close(actual, value) => checked += 1,
                actual => failures.push(format!(
                    "{}: {key}: expected {value}, got {actual:?}",
                    expected_path.display()
                )),
            }
        }
        let kinds = json["pauses"]["by_kind"].as_object().unwrap().len();
        if kinds != expected_kinds {
            failures.push(format!(
                "{}: {kinds} pause kinds, expected {expected_kinds}",
                expected_path.display()
            ));
        }
        if report.unparsed_lines != 0 || report.unfinished_collections != 0 {
            failures.push(format!(
                "{}: {} lines not understood, {} collections not put back together",
                expected_path.display(),
                report.unparsed_lines,
                report.unfinished_collections
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 500, "only {checked} figures checked");
}

/// Copies a directory tree (the fixtures are plain files and directories).
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A `.expected` file's lines in order: awk lists the pause kinds in its own hash order, which
/// another awk may change without changing any figure.
fn sorted_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    lines
}

#[test]
fn committed_expected_files_are_what_the_awk_scripts_derive_from_the_logs() {
    // The .expected files are only as independent as the awk scripts that wrote them: re-run
    // regenerate-expected.sh on a copy of the fixtures and require the same figures, so that a
    // hand-edited .expected file, a log changed without re-deriving, or a script changed without
    // regenerating fails here. Needs sh, awk and gzip (Debian has them): missing ones fail.
    let awk = Command::new("awk").args(["BEGIN { exit 0 }"]).status();
    assert!(
        awk.as_ref().is_ok_and(|status| status.success()),
        "awk is needed to re-derive the expected figures: {awk:?}"
    );
    let copy = tempfile::tempdir().unwrap();
    copy_tree(&fixtures(), copy.path());
    let output = Command::new("sh")
        .arg("regenerate-expected.sh")
        .current_dir(copy.path())
        .output()
        .expect("sh runs regenerate-expected.sh");
    assert!(
        output.status.success(),
        "regenerate-expected.sh failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let derived_files = files_in(copy.path(), &EXPECTED_DIRS, "expected");
    let mut failures = Vec::new();
    for derived_path in &derived_files {
        let name = derived_path.strip_prefix(copy.path()).unwrap();
        let derived = fs::read_to_string(derived_path).unwrap();
        let Ok(committed) = fs::read_to_string(fixtures().join(name)) else {
            failures.push(format!("{}: not committed", name.display()));
            continue;
        };
        let (derived, committed) = (sorted_lines(&derived), sorted_lines(&committed));
        if derived != committed {
            let only_derived: Vec<_> = derived.iter().filter(|l| !committed.contains(l)).collect();
            let only_committed: Vec<_> =
                committed.iter().filter(|l| !derived.contains(l)).collect();
            failures.push(format!(
                "{}: awk derives {only_derived:?}, the committed file says {only_committed:?}",
                name.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(derived_files.len(), expected_files().len());
    // Every JDK 8 log was re-derived.
    let jdk8_logs = files_in(&fixtures(), &["jdk8"], "log");
    let jdk8_derived = files_in(copy.path(), &["jdk8"], "expected");
    assert!(jdk8_logs.len() >= 12, "only {} JDK 8 logs", jdk8_logs.len());
    assert_eq!(jdk8_derived.len(), jdk8_logs.len());
}

fn unified(name: &str) -> PathBuf {
    fixtures().join("unified").join(name)
}

/// Counts raw lines containing all of `needles` and ending in a duration (a finished event).
fn count_lines(path: &Path, needles: &[&str]) -> u64 {
    fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|line| {
            line.contains("GC(") && needles.iter().all(|n| line.contains(n)) && line.ends_with("ms")
        })
        .count() as u64
}

fn real_logs() -> Vec<PathBuf> {
    files_in(&fixtures(), &["unified", "cassandra"], "log")
}

#[test]
fn collectors_are_detected() {
    for path in real_logs() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let words: Vec<&str> = name.split(['-', '.']).collect();
        let expected = [
            ("g1", "G1"),
            ("cms", "CMS"),
            ("zgc", "ZGC"),
            ("zgcgen", "ZGC"),
            ("shenandoah", "Shenandoah"),
            ("parallel", "Parallel"),
            ("serial", "Serial"),
        ]
        .iter()
        .find(|(marker, _)| words.contains(marker))
        .map(|(_, collector)| *collector)
        .unwrap_or_else(|| panic!("{name}: no collector in the name"));
        let report = run(std::slice::from_ref(&path));
        assert_eq!(report.jvm.collector.as_deref(), Some(expected), "{name}");
        let generational = name.contains("zgcgen")
            || name.starts_with("j25-zgc")
            || name.contains("shenandoah-gen");
        assert_eq!(report.jvm.generational, generational, "{name}");
    }
    for (name, collector) in [
        ("cms", "CMS"),
        ("g1", "G1"),
        ("parallel", "Parallel"),
        ("shenandoah", "Shenandoah"),
    ] {
        let report = run(&[fixtures().join("jdk8").join(format!("{name}.log"))]);
        assert_eq!(
            report.jvm.collector.as_deref(),
            Some(collector),
            "jdk8 {name}"
        );
        assert_eq!(report.format, "jdk8");
    }
}

#[test]
fn zgc_counts_each_of_its_three_pauses() {
    for name in [
        "j11-zgc-default.log",
        "j17-zgc-default.log",
        "j21-zgc-cqlbench.log",
    ] {
        let path = unified(name);
        let report = run(std::slice::from_ref(&path));
        for kind in ["Mark Start", "Mark End", "Relocate Start"] {
            let expected = count_lines(&path, &[&format!("Pause {kind} ")]);
            assert!(expected > 0, "{name} {kind}");
            assert_eq!(report.pauses.by_kind[kind].count, expected, "{name} {kind}");
        }
    }
}

#[test]
fn generational_zgc_young_and_old_pauses() {
    for name in ["j21-zgcgen-cqlbench.log", "j25-zgc-cqlbench.log"] {
        let path = unified(name);
        let report = run(std::slice::from_ref(&path));
        let mark_end = count_lines(&path, &["Pause Mark End"]);
        assert!(
            count_lines(&path, &["O: Pause Mark End"]) > 0,
            "{name}: no old-generation pause"
        );
        assert_eq!(report.pauses.by_kind["Mark End"].count, mark_end, "{name}");
        assert_eq!(
            report.pauses.by_kind["Mark Start"].count,
            count_lines(&path, &["Pause Mark Start"]),
            "{name}"
        );
    }
}

#[test]
fn zgc_with_cassandra_default_logging_reads_pauses_off_safepoints() {
    // Cassandra's `gc=info` leaves ZGC's pause lines (gc+phases) out; the safepoints name them.
    let path = unified("j25-zgc-cassandra.log");
    let text = fs::read_to_string(&path).unwrap();
    assert!(!text.contains("Pause Mark"));
    let report = run(std::slice::from_ref(&path));
    assert_eq!(report.pauses.source, "safepoint operations");
    let relocate = text.matches("Safepoint \"ZRelocateStart").count() as u64;
    assert!(relocate > 0);
    assert_eq!(report.pauses.by_kind["Relocate Start"].count, relocate);
}

#[test]
fn shenandoah_final_roots_degenerated_and_full_pauses() {
    let roots = unified("j17-shenandoah-roots.log");
    let expected = count_lines(&roots, &["Pause Final Roots"]);
    assert!(expected > 0);
    assert_eq!(
        run(std::slice::from_ref(&roots)).pauses.by_kind["Final Roots"].count,
        expected
    );

    let degenerated = unified("j17-shenandoah-degenerated.log");
    let report = run(std::slice::from_ref(&degenerated));
    let degenerated_lines = count_lines(&degenerated, &["Pause Degenerated GC"]);
    let full_lines = count_lines(&degenerated, &["Pause Full"]);
    assert!(degenerated_lines + full_lines > 0);
    let count = |kind: &str| report.pauses.by_kind.get(kind).map_or(0, |k| k.count);
    assert_eq!(count("Degenerated GC"), degenerated_lines);
    assert_eq!(count("Full"), full_lines);

    let generational = run(&[unified("j25-shenandoah-gen.log")]);
    for kind in [
        "Init Mark",
        "Final Mark",
        "Init Update Refs",
        "Final Update Refs",
    ] {
        assert!(generational.pauses.by_kind.contains_key(kind), "{kind}");
    }
}

#[test]
fn g1_evacuation_failures_are_pauses_and_to_space_exhausted_is_not() {
    let jdk25 = unified("j25-g1-evacfail.log");
    let failures = count_lines(&jdk25, &["(Evacuation Failure: Allocation)"]);
    assert!(failures > 0);
    let report = run(std::slice::from_ref(&jdk25));
    assert_eq!(report.pauses.count, count_lines(&jdk25, &["Pause "]));

    let jdk17 = unified("j17-g1-exhausted.log");
    let text = fs::read_to_string(&jdk17).unwrap();
    assert!(text.contains("To-space exhausted"));
    let report = run(std::slice::from_ref(&jdk17));
    assert_eq!(report.pauses.count, count_lines(&jdk17, &["Pause "]));
}

#[test]
fn safepoints_define_stopped_time_and_ttsp_is_not_counted_twice() {
    // JDK 11 format: the total already includes "Stopping threads took".
    let report = run(&[unified("j11-g1-cassandra.log")]);
    let safepoints = report.safepoints.expect("safepoints");
    let text = fs::read_to_string(unified("j11-g1-cassandra.log")).unwrap();
    let total: f64 = text
        .lines()
        .filter_map(|l| l.split("stopped: ").nth(1))
        .map(|rest| rest.split(' ').next().unwrap().parse::<f64>().unwrap() * 1000.0)
        .sum();
    assert!((safepoints.stopped_total_ms - total).abs() < 1e-6);
    let span = report.span_s.unwrap();
    let fraction = report.time_sampled.unwrap().paused_fraction;
    assert!((fraction - total / 1000.0 / span).abs() < 1e-9);
    // The operations are named from the preceding "Entering safepoint region" line.
    assert!(safepoints
        .by_operation
        .keys()
        .any(|op| op == "G1CollectForAllocation"));
}

#[test]
fn rotated_parts_are_ordered_by_time_and_gzip_parts_are_read() {
    let dir = unified("j17-g1-rotated");
    let mut parts: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    parts.sort();
    assert!(parts
        .iter()
        .any(|p| p.extension().is_some_and(|e| e == "gz")));
    let (report, timeline) = run_with_timeline(&parts);
    let mut reversed = parts.clone();
    reversed.reverse();
    let (_, timeline_reversed) = run_with_timeline(&reversed);
    assert_eq!(
        timeline, timeline_reversed,
        "order of the arguments must not matter"
    );
    // The ring wrapped: gc.log.0 is not the oldest part. Time must still only go forward.
    let ends: Vec<&str> = timeline
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap())
        .collect();
    assert!(ends.len() as u64 >= report.pauses.count + report.safepoints.unwrap().count);
    let mut sorted = ends.clone();
    sorted.sort();
    assert_eq!(ends, sorted);
}

#[test]
fn timeline_has_every_pause_and_safepoint_with_absolute_times() {
    let path = unified("j17-g1-cqlbench.log");
    let (report, timeline) = run_with_timeline(std::slice::from_ref(&path));
    let mut lines = timeline.lines();
    assert_eq!(lines.next(), Some("start,end,kind"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let pauses = rows.iter().filter(|r| r[2].starts_with("pause:")).count() as u64;
    let safepoints = rows
        .iter()
        .filter(|r| r[2].starts_with("safepoint:"))
        .count() as u64;
    assert_eq!(pauses, report.pauses.count);
    assert_eq!(safepoints, report.safepoints.unwrap().count);
    // First pause in the raw log: end = its `time` decorator, start = end − duration.
    let text = fs::read_to_string(&path).unwrap();
    let first = text
        .lines()
        .find(|l| l.contains("Pause Young") && l.ends_with("ms"))
        .unwrap();
    let end = &first[1..24]; // 2026-11-22T00:08:14.294
    assert!(rows[0][1].starts_with(end), "{:?} vs {end}", rows[0]);
    assert!(rows[0][0] < rows[0][1]);
}

#[test]
fn garbage_and_truncated_lines_are_counted_not_fatal() {
    let clean_path = unified("j17-g1-cqlbench.log");
    let clean = fs::read_to_string(&clean_path).unwrap();
    let mut dirty = String::new();
    for (index, line) in clean.lines().enumerate() {
        dirty.push_str(line);
        dirty.push('\n');
        if index % 50 == 10 {
            dirty.push_str("\u{1}\u{2} garbage ### not a log line\n");
        }
    }
    let garbage = clean
        .lines()
        .enumerate()
        .filter(|(i, _)| i % 50 == 10)
        .count() as u64;
    // Truncated: a pause line cut in the middle of its name, and a decorator cut short.
    dirty.push_str("[2026-11-22T00:08:17.500+0000][3.200s][info][gc          ] GC(99) Pause Yo\n");
    dirty.push_str("[2026-11-22T00:08:1");
    let dir = tempfile::tempdir().unwrap();
    let dirty_path = dir.path().join("gc.log");
    fs::write(&dirty_path, dirty).unwrap();
    let clean_report = run(&[clean_path]);
    let dirty_report = run(&[dirty_path]);
    assert_eq!(dirty_report.unparsed_lines, garbage + 2);
    assert_eq!(dirty_report.pauses.count, clean_report.pauses.count);
    assert_eq!(dirty_report.pauses.total_ms, clean_report.pauses.total_ms);
}

#[test]
fn empty_and_unparseable_inputs_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.log");
    fs::write(&empty, "").unwrap();
    let garbage = dir.path().join("garbage.log");
    fs::write(&garbage, "hello\nworld\n\u{0}\u{1}\n").unwrap();
    for path in [empty, garbage] {
        let error = analyze(&[Input::Path(path.clone())], None, &mut |_| {}).unwrap_err();
        assert!(
            matches!(error, GcLogError::NothingParseable { .. }),
            "{error}"
        );
        assert!(!error.to_string().contains('\n'));
    }
    let missing = analyze(
        &[Input::Path(dir.path().join("missing.log"))],
        None,
        &mut |_| {},
    )
    .unwrap_err();
    assert!(matches!(missing, GcLogError::Read { .. }));
}

#[test]
fn time_sampled_distribution_on_a_hand_computable_log() {
    // Span 0.0 s … 1.0 s (first and last line). Pauses: 100 ms ending at 0.5 s, 10 ms ending at 0.8 s.
    // P(remaining stop > x) = (max(0, 100 − x) + max(0, 10 − x)) / 1000 ms.
    // p99 → tail 0.01 = 10 ms of mass → 100 − x = 10 → 90 ms; p99.9 → 99 ms; p99.99 → 99.9 ms.
    // Paused fraction 110 / 1000 = 0.11.
    let log = "[0.000s][info][gc] Using G1\n\
        [0.500s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 20M->5M(64M) 100.000ms\n\
        [0.800s][info][gc] GC(1) Pause Young (Normal) (G1 Evacuation Pause) 25M->6M(64M) 10.000ms\n\
        [1.000s][info][gc] GC(2) Concurrent Mark Cycle 30.000ms\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gc.log");
    fs::write(&path, log).unwrap();
    let report = run(&[path]);
    assert_eq!(report.span_s, Some(1.0));
    let sampled = report.time_sampled.unwrap();
    assert_eq!(sampled.source, "pauses");
    assert!((sampled.paused_fraction - 0.11).abs() < 1e-12);
    assert!((sampled.p99_ms - 90.0).abs() < 0.1, "{}", sampled.p99_ms);
    assert!((sampled.p999_ms - 99.0).abs() < 0.1, "{}", sampled.p999_ms);
    assert!(
        (sampled.p9999_ms - 99.9).abs() < 0.1,
        "{}",
        sampled.p9999_ms
    );
    // Allocation: 20 MiB before the second GC minus 5 MiB after the first, over the 0.3 s between them.
    assert!((report.allocation_rate_mb_s.unwrap() - 20.0 / 0.3).abs() < 1e-9);
    let concurrent = report.concurrent.unwrap();
    assert!((concurrent.total_s - 0.03).abs() < 1e-12);
    assert!((concurrent.share_per_minute_max - 0.03).abs() < 1e-9);
    let heap = report.heap.unwrap();
    assert_eq!((heap.max_before_mb, heap.max_after_mb), (25.0, 6.0));
}

#[test]
fn jdk8_pause_stamps_mark_the_start_and_multi_line_pauses_complete() {
    // JDK 8 prints "12.000: [GC pause …" when the pause begins; with PrintAdaptiveSizePolicy the
    // duration follows lines later as ", 0.0300000 secs]".
    let path = fixtures().join("jdk8/g1.log");
    let (report, timeline) = run_with_timeline(std::slice::from_ref(&path));
    assert_eq!(report.pauses.by_kind["Young"].count, 3);
    let row = timeline
        .lines()
        .find(|l| l.starts_with("12.000000,"))
        .expect("initial-mark pause starting at 12.000 s");
    assert_eq!(row, "12.000000,12.030000,pause:Young");
}

#[test]
fn pause_percentiles_match_nearest_rank_of_the_raw_durations() {
    for name in [
        "j17-g1-exhausted.log",
        "j25-shenandoah-utc.log",
        "j11-cms-cqlbench.log",
    ] {
        let path = unified(name);
        let mut durations: Vec<f64> = fs::read_to_string(&path)
            .unwrap()
            .lines()
            .filter(|l| l.contains(" Pause ") && l.contains("GC(") && l.ends_with("ms"))
            .map(|l| {
                let last = l.rsplit(' ').next().unwrap();
                last.trim_end_matches("ms").parse::<f64>().unwrap()
            })
            .collect();
        durations.sort_by(f64::total_cmp);
        let nearest_rank =
            |q: f64| durations[((q * durations.len() as f64).ceil() as usize).max(1) - 1];
        let report = run(std::slice::from_ref(&path));
        for (q, actual) in [
            (0.5, report.pauses.p50_ms),
            (0.99, report.pauses.p99_ms),
            (0.999, report.pauses.p999_ms),
        ] {
            let expected = nearest_rank(q);
            assert!(
                (actual - expected).abs() <= expected * 0.001 + 1e-6,
                "{name} p{q}: {actual} vs {expected}"
            );
        }
    }
}

/// One row of a `--timeline` file: start and end in seconds (on whichever clock the log gives), and
/// whether it is a pause or a safepoint.
struct TimelineRow {
    start_s: f64,
    end_s: f64,
    is_pause: bool,
}

/// `2026-11-22T00:08:14.294000Z` (the timeline's wall-clock form) or `12.030000` (seconds of uptime).
fn timeline_seconds(text: &str) -> f64 {
    let Some((date, time)) = text.trim_end_matches('Z').split_once('T') else {
        return text.parse().unwrap();
    };
    let [year, month, day]: [i64; 3] = date
        .split('-')
        .map(|part| part.parse().unwrap())
        .collect::<Vec<_>>()
        .try_into()
        .unwrap();
    // Days from the civil date (Howard Hinnant's algorithm).
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    let seconds: f64 = time.split(':').fold(0.0, |total, part| {
        total * 60.0 + part.parse::<f64>().unwrap()
    });
    days as f64 * 86_400.0 + seconds
}

fn timeline_rows(timeline: &str) -> Vec<TimelineRow> {
    timeline
        .lines()
        .skip(1)
        .map(|row| {
            let fields: Vec<&str> = row.splitn(3, ',').collect();
            TimelineRow {
                start_s: timeline_seconds(fields[0]),
                end_s: timeline_seconds(fields[1]),
                is_pause: fields[2].starts_with("pause:"),
            }
        })
        .collect()
}

/// Stamps are printed to the millisecond, so an interval read off them may poke out by that much.
const STAMP_TOLERANCE_S: f64 = 0.001;
/// The timeline prints times to the microsecond: a duration read off a row is off by up to 2 µs.
const ROW_ROUNDING_MS: f64 = 0.002;

#[test]
fn every_pause_lies_within_a_stop_and_pauses_never_exceed_the_stopped_time() {
    // GC pauses run inside safepoints: each pause line is followed by the stopped-time line of the
    // safepoint it ran in. A collection run inside another (a full collection inside a young one that
    // failed promotion) is one stop; counted twice, the pauses of one safepoint would outlast it.
    let mut failures = Vec::new();
    let mut logs_checked = 0;
    for expected_path in expected_files() {
        let name = expected_path.display().to_string();
        let (report, timeline) = run_with_timeline(&parts_of(&expected_path));
        let Some(safepoints) = report.safepoints else {
            continue;
        };
        logs_checked += 1;
        let rows = timeline_rows(&timeline);
        let mut waiting: Vec<&TimelineRow> = Vec::new();
        let mut counted_pause_ms = 0.0;
        for row in &rows {
            if row.is_pause {
                waiting.push(row);
                continue;
            }
            let in_this_stop_ms: f64 = waiting
                .iter()
                .map(|pause| (pause.end_s - pause.start_s) * 1000.0)
                .sum();
            let stop_ms = (row.end_s - row.start_s) * 1000.0;
            if in_this_stop_ms > stop_ms + ROW_ROUNDING_MS * (waiting.len() + 1) as f64 {
                failures.push(format!(
                    "{name}: pauses of {in_this_stop_ms:.3} ms in a stop of {stop_ms:.3} ms ending at {}",
                    row.end_s
                ));
            }
            for pause in waiting.drain(..) {
                let inside = pause.start_s >= row.start_s - STAMP_TOLERANCE_S
                    && pause.end_s <= row.end_s + STAMP_TOLERANCE_S;
                if !inside {
                    failures.push(format!(
                        "{name}: pause {}..{} outside the stop {}..{} that follows it",
                        pause.start_s, pause.end_s, row.start_s, row.end_s
                    ));
                }
                counted_pause_ms += (pause.end_s - pause.start_s) * 1000.0;
            }
        }
        // Pauses still waiting ran in a safepoint whose line was cut off with the end of the log.
        let cut_off_ms: f64 = waiting
            .iter()
            .map(|pause| (pause.end_s - pause.start_s) * 1000.0)
            .sum();
        if report.pauses.total_ms - cut_off_ms > safepoints.stopped_total_ms + 1e-6 {
            failures.push(format!(
                "{name}: pause total {:.3} ms (of which {cut_off_ms:.3} ms after the last stop) exceeds the stopped total {:.3} ms",
                report.pauses.total_ms, safepoints.stopped_total_ms
            ));
        }
        let rounding_ms = ROW_ROUNDING_MS * report.pauses.count as f64;
        if report.pauses.source == "pause lines"
            && (counted_pause_ms + cut_off_ms - report.pauses.total_ms).abs() > rounding_ms
        {
            failures.push(format!(
                "{name}: the timeline's pauses make {:.3} ms, the report {:.3} ms",
                counted_pause_ms + cut_off_ms,
                report.pauses.total_ms
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        logs_checked >= 25,
        "only {logs_checked} logs with safepoints"
    );
}

#[test]
fn a_full_collection_inside_a_young_one_is_one_stop() {
    // JDK 11 Serial and CMS, real logs: `GC(n+1) Pause Full …` is logged just before the
    // `GC(n) Pause Young …` it ran inside, with the same heap transition.
    for name in ["j11-serial-nested.log", "j11-cms-nested.log"] {
        let path = unified(name);
        let text = fs::read_to_string(&path).unwrap();
        let pauses: Vec<&str> = text
            .lines()
            .filter(|l| l.contains(" Pause ") && l.ends_with("ms"))
            .collect();
        let nested = pauses
            .windows(2)
            .filter(|pair| pair[0].contains("Pause Full") && pair[1].contains("Pause Young"))
            .count() as u64;
        assert!(nested > 0, "{name}: no nested collection");
        let (report, timeline) = run_with_timeline(std::slice::from_ref(&path));
        assert_eq!(report.pauses.count, pauses.len() as u64 - nested, "{name}");
        assert_eq!(
            report.pauses.by_kind["Young + Full"].count, nested,
            "{name}"
        );
        let rows = timeline_rows(&timeline);
        assert_eq!(
            rows.iter().filter(|row| row.is_pause).count() as u64,
            report.pauses.count,
            "{name}: the timeline shows each stop once"
        );
    }
    // Parallel runs its full collection after the young one, in the same safepoint: two pauses.
    let report = run(&[unified("j11-parallel-sequential.log")]);
    assert!(!report.pauses.by_kind.keys().any(|kind| kind.contains('+')));
}
