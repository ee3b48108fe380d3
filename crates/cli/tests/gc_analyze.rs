//! `cqlbench gc analyze` end to end: the real binary on real GC logs (crates/gclog/tests/fixtures).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn fixture(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../gclog/tests/fixtures")
        .join(relative)
}

fn cqlbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cqlbench"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run cqlbench")
}

fn json_of(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("one JSON document")
}

fn assert_one_line_error(output: &Output, needle: &str) {
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains(needle), "{stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("backtrace"));
}

#[test]
fn json_has_every_key_of_the_issue() {
    let log = fixture("unified/j17-g1-cqlbench.log");
    let json = json_of(&cqlbench(&[
        "gc",
        "analyze",
        log.to_str().unwrap(),
        "--json",
    ]));
    for pointer in [
        "/jvm/version",
        "/jvm/collector",
        "/span_s",
        "/unparsed_lines",
        "/pauses/count",
        "/pauses/total_ms",
        "/pauses/max_ms",
        "/pauses/p50_ms",
        "/pauses/p99_ms",
        "/pauses/p999_ms",
        "/pauses/by_kind/Young/count",
        "/pauses/by_kind/Young/total_ms",
        "/pauses/by_kind/Young/max_ms",
        "/pauses/by_kind/Mixed/count",
        "/pauses/by_kind/Remark/count",
        "/pauses/by_kind/Cleanup/count",
        "/safepoints/count",
        "/safepoints/stopped_total_ms",
        "/safepoints/stopped_max_ms",
        "/safepoints/ttsp_total_ms",
        "/safepoints/ttsp_max_ms",
        "/safepoints/stopped_p99_ms",
        "/safepoints/ttsp_p99_ms",
        "/safepoints/by_operation/G1CollectForAllocation/count",
        "/time_sampled/paused_fraction",
        "/time_sampled/p99_ms",
        "/time_sampled/p999_ms",
        "/time_sampled/p9999_ms",
        "/concurrent/total_s",
        "/concurrent/share_per_minute_max",
        "/concurrent/share_per_minute_mean",
        "/allocation_rate_mb_s",
        "/heap/max_before_mb",
        "/heap/max_after_mb",
    ] {
        assert!(
            json.pointer(pointer).is_some_and(|v| !v.is_null()),
            "missing {pointer} in {json:#}"
        );
    }
    assert_eq!(json["jvm"]["collector"], "G1");
    assert_eq!(json["unparsed_lines"], 0);
    // Percentiles are ordered and bounded by the maximum.
    let pauses = &json["pauses"];
    let p = |key: &str| pauses[key].as_f64().unwrap();
    assert!(
        p("p50_ms") <= p("p99_ms") && p("p99_ms") <= p("p999_ms") && p("p999_ms") <= p("max_ms")
    );
}

#[test]
fn human_output_names_collector_and_pause_kinds() {
    let log = fixture("unified/j25-shenandoah-gen.log");
    let output = cqlbench(&["gc", "analyze", log.to_str().unwrap()]);
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("Shenandoah generational"), "{text}");
    assert!(text.contains("Final Update Refs"), "{text}");
    assert!(text.contains("At a random instant"), "{text}");
}

#[test]
fn timeline_file_and_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let timeline = dir.path().join("timeline.csv");
    let log = fixture("unified/j11-cms-cqlbench.log");
    let from_file = json_of(&cqlbench(&[
        "gc",
        "analyze",
        log.to_str().unwrap(),
        "--json",
        "--timeline",
        timeline.to_str().unwrap(),
    ]));
    let csv = std::fs::read_to_string(&timeline).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows[0], "start,end,kind");
    let expected_rows = from_file["pauses"]["count"].as_u64().unwrap()
        + from_file["safepoints"]["count"].as_u64().unwrap();
    assert_eq!(rows.len() as u64 - 1, expected_rows);
    assert!(
        rows[1].starts_with("20"),
        "absolute timestamps: {}",
        rows[1]
    );

    // The same log on standard input gives the same figures.
    let mut child = Command::new(env!("CARGO_BIN_EXE_cqlbench"))
        .args(["gc", "analyze", "-", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&std::fs::read(&log).unwrap())
        .unwrap();
    let from_stdin = json_of(&child.wait_with_output().unwrap());
    assert_eq!(from_stdin["pauses"], from_file["pauses"]);
    assert_eq!(from_stdin["time_sampled"], from_file["time_sampled"]);
}

#[test]
fn rotated_gzip_parts_in_any_order() {
    let dir = fixture("unified/j17-g1-rotated");
    let mut parts: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .collect();
    parts.sort();
    let mut args = vec!["gc", "analyze", "--json"];
    args.extend(parts.iter().map(String::as_str));
    let json = json_of(&cqlbench(&args));
    assert_eq!(json["unparsed_lines"], 0);
    assert!(json["pauses"]["count"].as_u64().unwrap() > 0);
    // The directory stands for its parts.
    let from_dir = json_of(&cqlbench(&[
        "gc",
        "analyze",
        "--json",
        dir.to_str().unwrap(),
    ]));
    assert_eq!(from_dir["pauses"], json["pauses"]);
    assert_eq!(from_dir["lines"], json["lines"]);
    let empty_dir = tempfile::tempdir().unwrap();
    assert_one_line_error(
        &cqlbench(&["gc", "analyze", empty_dir.path().to_str().unwrap()]),
        "no gc*.log* file",
    );
}

#[test]
fn bad_input_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.log");
    std::fs::write(&empty, "").unwrap();
    assert_one_line_error(
        &cqlbench(&["gc", "analyze", empty.to_str().unwrap()]),
        "no GC log format recognised",
    );
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "just some text\nnothing from a JVM\n").unwrap();
    assert_one_line_error(
        &cqlbench(&["gc", "analyze", text.to_str().unwrap()]),
        "no GC log format recognised",
    );
    let missing = dir.path().join("missing.log");
    assert_one_line_error(
        &cqlbench(&["gc", "analyze", missing.to_str().unwrap()]),
        "missing.log",
    );
    let log = fixture("unified/j17-g1-cqlbench.log");
    let unwritable = dir.path().join("no/such/dir/t.csv");
    assert_one_line_error(
        &cqlbench(&[
            "gc",
            "analyze",
            log.to_str().unwrap(),
            "--timeline",
            unwritable.to_str().unwrap(),
        ]),
        "timeline",
    );
    // No file at all: clap's usage error, not a panic.
    let output = cqlbench(&["gc", "analyze"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("FILE"));
}

/// Bytes from a fixed-seed xorshift generator: the same "random" file on every run.
fn pseudo_random_bytes(len: usize) -> Vec<u8> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

#[test]
fn junk_is_not_a_gc_log() {
    let dir = tempfile::tempdir().unwrap();
    let random = dir.path().join("random.bin");
    std::fs::write(&random, pseudo_random_bytes(200 * 1024)).unwrap();
    // Text with the words of a log and lines a JDK 8 parser reads as its own (a `1.5: …` stamp, a
    // `}` of a heap dump), but no collection.
    let text = dir.path().join("notes.txt");
    std::fs::write(
        &text,
        "GC tuning notes\n1.5: try G1 with a 300 ms pause target\n}\n---\n\nFull GC is bad\n",
    )
    .unwrap();
    let gzipped = dir.path().join("random.log.gz");
    let gzip = Command::new("gzip")
        .arg("-c")
        .arg(&random)
        .output()
        .expect("gzip runs");
    std::fs::write(&gzipped, gzip.stdout).unwrap();
    for junk in [&random, &text, &gzipped] {
        let output = cqlbench(&["gc", "analyze", junk.to_str().unwrap()]);
        assert_one_line_error(&output, "no GC log format recognised");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(junk.to_str().unwrap()), "{stderr}");
        assert!(stderr.contains(": 0 of "), "{stderr}");
        assert!(output.stdout.is_empty(), "nothing on stdout for junk");
    }
    // A real log with a foreign line and a truncated last line still parses, and says so.
    let real = std::fs::read_to_string(fixture("unified/j17-g1-cqlbench.log")).unwrap();
    let dirty = dir.path().join("dirty.log");
    std::fs::write(
        &dirty,
        format!("{real}some other program wrote this\n[2026-11-22T00:08:1"),
    )
    .unwrap();
    let clean = json_of(&cqlbench(&[
        "gc",
        "analyze",
        fixture("unified/j17-g1-cqlbench.log").to_str().unwrap(),
        "--json",
    ]));
    let json = json_of(&cqlbench(&[
        "gc",
        "analyze",
        dirty.to_str().unwrap(),
        "--json",
    ]));
    let unparsed = |j: &Value| j["unparsed_lines"].as_u64().unwrap();
    assert_eq!(unparsed(&json), unparsed(&clean) + 2, "{json}");
    assert_eq!(json["pauses"], clean["pauses"]);
}

#[test]
fn help_teaches() {
    let output = cqlbench(&["gc", "analyze", "--help"]);
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for needle in ["--json", "--timeline", "rotated", "Shenandoah", "Examples"] {
        assert!(help.contains(needle), "{needle} not in help:\n{help}");
    }
}

#[test]
fn threads_change_the_speed_never_the_figures() {
    let log = fixture("cassandra/c5.0.9-jdk17-g1.log");
    let log = log.to_str().unwrap();
    let all_cores = json_of(&cqlbench(&["gc", "analyze", log, "--json"]));
    for threads in ["1", "3"] {
        let cut = json_of(&cqlbench(&[
            "gc",
            "analyze",
            log,
            "--json",
            "--threads",
            threads,
        ]));
        assert_eq!(cut, all_cores, "--threads {threads}");
    }
    assert!(all_cores["pauses"]["count"].as_u64().unwrap() > 0);
    let refused = cqlbench(&["gc", "analyze", log, "--threads", "0"]);
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("--threads"), "{stderr}");
}
