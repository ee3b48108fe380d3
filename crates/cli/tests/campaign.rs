//! `cqlbench campaign` against real nodes: bad plans refused before anything starts, `--dry-run`,
//! and a tiny campaign (G1 and Shenandoah on JDK 17, 2 rates, 8 s cells, one node on 127.0.7.1)
//! interrupted with SIGINT and killed with SIGKILL mid-cell, then resumed to completion: finished
//! cells keep their bytes, the tables show the cells' own summary.json numbers, each collector's
//! pauses are its own, and no node process is left.
//!
//! The tests use a private CQLBENCH_HOME whose Cassandra and JDK caches link to the shared ones.

#[path = "common/campaign_support.rs"]
mod campaign_support;
mod run_support;
#[path = "common/cluster_support.rs"]
mod support;

use campaign_support::{
    campaign, node_processes, private_home, signal, spawn, spawn_with, wait_for, Reaper,
};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

fn output(mut cmd: Command) -> support::Run {
    let out = cmd.output().unwrap();
    support::Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

const TINY: &str = r#"
[cluster]
nodes = 1
cassandra = "5.0.9"
jdk = 17
heap = "512M"
base-ip = "127.0.7.1"
name = "tinycampaign"

[[config]]
name = "G1 jdk17"
gc = "g1"
# A G1 collection at least every second (even idle), so that an 8 s cell surely has G1's pauses.
jvm-opts = ["-XX:G1PeriodicGCInterval=1000"]

[[config]]
name = "Shenandoah jdk17"
gc = "shenandoah"
# A Shenandoah cycle at least every second, so that an 8 s cell surely has Shenandoah's pauses.
jvm-opts = ["-XX:ShenandoahGuaranteedGCInterval=1000"]

[load]
workload = "KeyValue"
args = "-t 1 -c 20 -p 10k --populate 2000"
rates = [200, 400]
duration = "8s"
warmup = "2s"

[cost]
node-hourly = 0.504
client-hourly = 0.1
cluster-monthly = 73
"#;

#[test]
fn bad_plans_are_one_line_errors_before_anything_starts() {
    let home = private_home();
    let cases = [
        (
            "heap = \"512M\"",
            "heap = \"512M\"\ncolour = \"red\"",
            "line 7, `colour`",
        ),
        ("gc = \"shenandoah\"", "gc = \"shenandoa\"", "line 18, `gc`"),
        (
            "rates = [200, 400]",
            "rates = [\"2k\", \"4k\"]",
            "line 25, `rates`",
        ),
        (
            "gc = \"shenandoah\"",
            "gc = \"zgc-generational\"",
            "line 18, `gc`",
        ),
        ("heap = \"512M\"", "heap = \"512M\"\njdk = 11", "`jdk`"),
        ("--populate 2000", "--rate 300", "line 24, `args`"),
    ];
    for (from, to, expected) in cases {
        assert!(TINY.contains(from));
        let plan = home.path().join("bad.toml");
        std::fs::write(&plan, TINY.replacen(from, to, 1)).unwrap();
        let out = home.path().join("never");
        let run = output(campaign(
            home.path(),
            &[plan.to_str().unwrap(), "-o", out.to_str().unwrap()],
        ));
        run.assert_one_line_error(&[expected, "bad.toml"]);
        assert!(!out.exists(), "{to}: the result directory was created");
        assert!(
            !home.path().join("clusters").exists(),
            "{to}: a cluster was started"
        );
    }
    let empty = home.path().join("empty.toml");
    std::fs::write(
        &empty,
        "config = []\n[load]\nworkload = \"KeyValue\"\nrates = [1]\nduration = \"1s\"\n",
    )
    .unwrap();
    output(campaign(home.path(), &[empty.to_str().unwrap()]))
        .assert_one_line_error(&["line 1, `config`", "empty"]);
    // A directory holding another plan's campaign is not resumed with this one.
    let plan = home.path().join("tiny.toml");
    std::fs::write(&plan, TINY).unwrap();
    let other = home.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("plan.toml"), TINY.replace("8s", "9s")).unwrap();
    output(campaign(
        home.path(),
        &[plan.to_str().unwrap(), "-o", other.to_str().unwrap()],
    ))
    .assert_one_line_error(&["holds the results of another plan"]);
    assert!(!home.path().join("clusters").exists());
}

#[test]
fn dry_run_prints_the_matrix_and_starts_nothing() {
    let home = private_home();
    let plan = home.path().join("tiny.toml");
    std::fs::write(&plan, TINY).unwrap();
    let out = home.path().join("results");
    let run = output(campaign(
        home.path(),
        &[
            plan.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--dry-run",
        ],
    ));
    assert!(run.ok(), "{}", run.stderr);
    for needle in [
        "cell 1: G1 jdk17 @ 200 ops/s",
        "cell 4: Shenandoah jdk17 @ 400 ops/s",
        "results/Shenandoah-jdk17/400",
        "4 cell(s); estimated total",
    ] {
        assert!(run.stdout.contains(needle), "{needle:?} in {}", run.stdout);
    }
    assert!(!out.exists());
    assert!(!home.path().join("clusters").exists());
    // --help teaches the plan format.
    let help = output(campaign(home.path(), &["--help"]));
    for key in [
        "[[config]]",
        "[load]",
        "args = ",
        "rates = ",
        "[sweep]",
        "[slo]",
        "--dry-run",
    ] {
        assert!(help.stdout.contains(key), "{key:?} in {}", help.stdout);
    }
    // Every example plan of the repository is valid; Kubernetes plans (k8s-*.toml, checked by the k8s
    // crate's tests) are refused by a local campaign, in one line.
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let (mut seen, mut k8s) = (0, 0);
    let plans = std::fs::read_dir(examples).unwrap().flatten();
    // (examples/ also holds the Grafana dashboard, which is no plan.)
    for entry in plans.filter(|e| e.path().extension().is_some_and(|x| x == "toml")) {
        let run = output(campaign(
            home.path(),
            &[entry.path().to_str().unwrap(), "--dry-run"],
        ));
        if entry.file_name().to_string_lossy().starts_with("k8s-") {
            run.assert_one_line_error(&["`[k8s]`", "cqlbench k8s render"]);
            k8s += 1;
        } else {
            assert!(run.ok(), "{}: {}", entry.path().display(), run.stderr);
            seen += 1;
        }
    }
    assert_eq!(
        (seen, k8s),
        (4, 2),
        "examples/ has the quick plan, the three seed plans and two Kubernetes plans (K8ssandra, StatefulSets)"
    );
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

fn kept_cells(out: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut cells = BTreeMap::new();
    for config in ["G1-jdk17", "Shenandoah-jdk17"] {
        for rate in ["200", "400"] {
            let dir = out.join(config).join(rate);
            if dir.is_dir() {
                cells.extend(snapshot(&dir));
            }
        }
    }
    cells
}

/// The Cost section against the cells' own summaries: 1 node at 0.504, 1 client at 0.1 and 73 a
/// month over 730 hours make 0.704 an hour.
fn check_cost(report: &str, out: &Path) {
    let hourly = 0.504 + 0.1 + 73.0 / 730.0;
    let number = |cell: &str| -> f64 { cell.trim().replace(',', "").parse().unwrap() };
    for (config, dir) in [
        ("G1 jdk17", "G1-jdk17"),
        ("Shenandoah jdk17", "Shenandoah-jdk17"),
    ] {
        let section: Vec<&str> = report
            .lines()
            .skip_while(|l| *l != format!("### {config}"))
            .skip(1)
            .take_while(|l| !l.starts_with('#'))
            .collect();
        assert!(
            section.iter().any(|l| l.starts_with("1 node(s) × 0.5040 + 1 client(s) × 0.1000 + 73 / 730 h = 0.7040 USD per hour, 513.92 USD per month")),
            "{config}: {section:?}"
        );
        let rows: Vec<Vec<&str>> = section
            .iter()
            .filter(|l| l.starts_with("| ") && !l.starts_with("| ---") && !l.starts_with("| rate"))
            .map(|l| l.trim_matches('|').split('|').collect())
            .collect();
        let achieved: Vec<f64> = ["200", "400"]
            .iter()
            .map(|r| {
                summary(&out.join(dir).join(r))["achieved_rate"]
                    .as_f64()
                    .unwrap()
            })
            .collect();
        let max = achieved.iter().copied().fold(0.0, f64::max);
        let expected = [
            ("200 ops/s", achieved[0]),
            ("400 ops/s", achieved[1]),
            ("max throughput", max),
        ];
        assert_eq!(rows.len(), expected.len(), "{config}: {rows:?}");
        for (row, (label, rate)) in rows.iter().zip(expected) {
            // A doubtful cell's row is marked (its footnote says why).
            assert_eq!(row[0].trim().trim_end_matches('†'), label, "{row:?}");
            assert!(
                (number(row[1]) - rate).abs() <= 0.05 + 1e-9,
                "{row:?}: {rate}"
            );
            assert!(
                (number(row[2]) - rate / hourly).abs() <= 0.05 + 1e-9,
                "{row:?}: {rate}"
            );
        }
    }
}

fn summary(cell: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(cell.join("summary.json")).unwrap()).unwrap()
}

fn pause_kinds(cell: &Path) -> Vec<String> {
    let analysis: Value = serde_json::from_str(
        &std::fs::read_to_string(cell.join("node1/gc-analysis.json")).unwrap(),
    )
    .unwrap();
    let mut kinds: Vec<String> = analysis["pauses"]["by_kind"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    if let Some(ops) = analysis["safepoints"]["by_operation"].as_object() {
        kinds.extend(ops.keys().cloned());
    }
    kinds
}

fn shown(value: Option<f64>) -> String {
    // Two decimals, thousands grouped (the seeds' layout), written apart from the report's code.
    value.map_or("-".into(), |v| group(&format!("{v:.2}")))
}

/// Thousands separators in the whole part of a formatted number: `1234.5` → `1,234.5`.
fn group(text: &str) -> String {
    let (whole, fraction) = text
        .split_once('.')
        .map_or((text, None), |(w, f)| (w, Some(f)));
    let digits: Vec<char> = whole.chars().collect();
    let mut grouped = String::new();
    for (i, c) in digits.iter().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(*c);
    }
    match fraction {
        Some(f) => format!("{grouped}.{f}"),
        None => grouped,
    }
}

/// Whether a running cell has written a measured row: its load is under way.
fn measured_row_written(partial: &Path) -> bool {
    std::fs::read_to_string(partial.join("intervals.csv"))
        .unwrap_or_default()
        .lines()
        .any(|l| l.contains(",measured,"))
}

/// Where the resumed campaign serves its live figures.
const EXPORTER: &str = "127.0.7.250:9464";

/// While the resumed campaign measures one of the two cells left (Shenandoah's; G1's two are
/// finished), its exporter labels the cell and counts the cells done: 2 before the first of them, 3
/// before the second.
fn check_live_cell(child: &mut std::process::Child) {
    let measured = "phase=\"measured\"} 1";
    let mut text = String::new();
    wait_for(child, "a measured cell at the exporter", || {
        text = run_support::http_get(EXPORTER, "/metrics").map_or(String::new(), |(_, body)| body);
        text.contains(measured)
    });
    let cell = text
        .lines()
        .find(|l| l.starts_with("cqlbench_phase{") && l.ends_with(measured))
        .unwrap();
    let done = if cell.contains("rate=\"200\"") { 2 } else { 3 };
    let labels = format!(
        "client=\"0\",config=\"Shenandoah jdk17\",rate=\"{}\"",
        if done == 2 { 200 } else { 400 }
    );
    assert!(cell.contains(&labels), "{cell}");
    for line in [
        format!("cqlbench_campaign_cells_done{{{labels}}} {done}"),
        format!("cqlbench_campaign_cells_total{{{labels}}} 4"),
        format!("cqlbench_operations_total{{{labels},op=\"write\",outcome=\"ok\"}}"),
    ] {
        assert!(text.contains(&line), "{line} in\n{text}");
    }
}

#[test]
fn tiny_campaign_survives_sigint_and_sigkill_and_resumes() {
    let home = private_home();
    let plan = home.path().join("tiny.toml");
    std::fs::write(&plan, TINY).unwrap();
    let out = home.path().join("results");
    let log = home.path().join("campaign.log");
    let log_text = || std::fs::read_to_string(&log).unwrap_or_default();
    let started = Instant::now();
    let mut reaper = Reaper {
        home: home.path().to_path_buf(),
        campaign: None,
    };

    // 1. SIGINT while the second cell of the first configuration runs.
    let child = reaper
        .campaign
        .insert(spawn(home.path(), &plan, &out, &log));
    wait_for(child, "the first cell and the second's load", || {
        out.join("G1-jdk17/200/summary.json").is_file()
            && measured_row_written(&out.join("G1-jdk17/.400.partial"))
    });
    signal(child, libc::SIGINT);
    let status = child.wait().unwrap();
    assert!(
        !status.success(),
        "an interrupted campaign must fail:\n{}",
        log_text()
    );
    assert!(log_text().contains("interrupted"), "{}", log_text());
    assert!(!log_text().contains("panicked"), "{}", log_text());
    assert_eq!(
        node_processes(home.path()),
        Vec::<i32>::new(),
        "{}",
        log_text()
    );
    assert!(
        !out.join("G1-jdk17/.400.partial").exists(),
        "the stopped cell was kept"
    );
    assert!(
        !out.join("G1-jdk17/400").exists(),
        "the stopped cell was kept"
    );
    let after_sigint = kept_cells(&out);
    assert!(!after_sigint.is_empty());
    eprintln!("SIGINT step done after {:?}", started.elapsed());

    // 2. SIGKILL while the first cell of the second configuration runs: its node is orphaned.
    let child = reaper
        .campaign
        .insert(spawn(home.path(), &plan, &out, &log));
    wait_for(
        child,
        "the second configuration's first cell's load",
        || measured_row_written(&out.join("Shenandoah-jdk17/.200.partial")),
    );
    signal(child, libc::SIGKILL);
    let _ = child.wait();
    let after_sigkill = kept_cells(&out);
    for (path, bytes) in &after_sigint {
        assert_eq!(
            after_sigkill.get(path),
            Some(bytes),
            "{} changed",
            path.display()
        );
    }
    eprintln!("SIGKILL step done after {:?}", started.elapsed());

    // 3. The same plan into the same directory finishes the rest, with live figures for Prometheus.
    let child = reaper.campaign.insert(spawn_with(
        home.path(),
        &plan,
        &out,
        &log,
        &["--prometheus", EXPORTER, "--prometheus-linger", "0s"],
    ));
    check_live_cell(child);
    let status = child.wait().unwrap();
    let text = log_text();
    assert!(status.success(), "{text}");
    assert!(text.contains("already finished"), "{text}");
    let report_line = format!("report: {}", out.join("report.html").display());
    assert!(text.contains(&report_line), "{report_line} in {text}");
    // The progress display: the cell, its place in the matrix, the time left.
    assert!(
        text.contains("[cell 4/4] Shenandoah jdk17 @ 400 ops/s") && text.contains("left"),
        "{text}"
    );
    assert_eq!(node_processes(home.path()), Vec::<i32>::new(), "{text}");
    let finished = kept_cells(&out);
    for (path, bytes) in &after_sigkill {
        assert_eq!(
            finished.get(path),
            Some(bytes),
            "{} changed",
            path.display()
        );
    }
    let leftovers: Vec<_> = snapshot(&out)
        .into_keys()
        .filter(|p| p.to_string_lossy().contains(".partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    eprintln!("resumed campaign done after {:?}", started.elapsed());

    // Layout: per campaign, per configuration, per cell, per node.
    for file in [
        "plan.toml",
        "environment.json",
        "tables.txt",
        "report.md",
        "report.html",
    ] {
        assert!(out.join(file).is_file(), "{file}");
    }
    // The report's throughput row of each configuration holds its cells' achieved rates, in the
    // plan's order (the populate run is no column).
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let rows: Vec<&str> = report
        .lines()
        .skip_while(|l| !l.starts_with("## Throughput"))
        .filter(|l| l.starts_with("| ") && !l.starts_with("| ---"))
        .take(3)
        .collect();
    assert_eq!(
        rows[0], "| Throughput (ops/s) | 200 ops/s | 400 ops/s |",
        "{report}"
    );
    for (row, config) in rows[1..].iter().zip(["G1-jdk17", "Shenandoah-jdk17"]) {
        let rates: Vec<String> = ["200", "400"]
            .iter()
            .map(|r| {
                // A cell taken while the machine was busy carries the doubtful mark.
                let cell = summary(&out.join(config).join(r));
                let mark = if cell["validity"]["doubtful"] == true {
                    "†"
                } else {
                    ""
                };
                format!("{:.2}{mark}", cell["achieved_rate"].as_f64().unwrap())
            })
            .collect();
        assert_eq!(
            *row,
            format!("| {} | {} |", config.replace('-', " "), rates.join(" | ")),
            "{report}"
        );
    }
    // The GC table: each configuration's own collector and pauses, as its cells' gc-analysis.json
    // has them.
    let gc_rows: Vec<Vec<String>> = report
        .lines()
        .skip_while(|l| !l.starts_with("## GC and server figures per cell"))
        .filter(|l| l.starts_with("| ") && !l.starts_with("| ---") && !l.starts_with("| config"))
        .take_while(|l| !l.starts_with("## "))
        .map(|l| l.split('|').map(|c| c.trim().to_string()).collect())
        .take(4)
        .collect();
    assert_eq!(gc_rows.len(), 4, "{report}");
    for row in &gc_rows {
        // | config | rate | repeat | collector | pauses | pause total ms | pause max ms | …
        let (config, rate) = (
            row[1].replace(' ', "-"),
            row[2].trim_end_matches('†').trim_end_matches(" ops/s"),
        );
        let analysis: Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(&config).join(rate).join("node1/gc-analysis.json"))
                .unwrap(),
        )
        .unwrap();
        let collector = if config.starts_with("G1") {
            "G1"
        } else {
            "Shenandoah"
        };
        assert!(row[4].contains(collector), "{row:?}");
        assert_eq!(
            row[5],
            format!("{}", analysis["pauses"]["count"].as_u64().unwrap()),
            "{row:?}"
        );
        assert_eq!(
            row[7],
            format!("{:.2}", analysis["pauses"]["max_ms"].as_f64().unwrap()),
            "{row:?}"
        );
        // One node: every other column is that node's own figure.
        let figures: Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(&config).join(rate).join("node1/figures.json"))
                .unwrap(),
        )
        .unwrap();
        let number = |v: Option<f64>, decimals: usize| {
            v.map_or(String::new(), |v| group(&format!("{v:.decimals$}")))
        };
        let percent = |v: Option<f64>| v.map_or(String::new(), |v| format!("{:.1} %", v * 100.0));
        let write_amp = figures["compacted_bytes"]
            .as_f64()
            .zip(figures["flushed_bytes"].as_f64())
            .filter(|(_, f)| *f > 0.0)
            .map(|(c, f)| c / f);
        let expected = [
            (6, number(analysis["pauses"]["total_ms"].as_f64(), 1)),
            (
                8,
                number(analysis["safepoints"]["stopped_total_ms"].as_f64(), 1),
            ),
            (
                9,
                number(analysis["safepoints"]["ttsp_total_ms"].as_f64(), 2),
            ),
            (10, number(analysis["time_sampled"]["p99_ms"].as_f64(), 2)),
            (11, number(analysis["time_sampled"]["p999_ms"].as_f64(), 2)),
            (12, number(analysis["time_sampled"]["p9999_ms"].as_f64(), 2)),
            (
                13,
                percent(analysis["concurrent"]["share_per_minute_mean"].as_f64()),
            ),
            (14, number(analysis["allocation_rate_mb_s"].as_f64(), 1)),
            (15, number(figures["cpu_ms_per_op"].as_f64(), 3)),
            (16, percent(figures["gc_threads_cpu_share"].as_f64())),
            (17, number(write_amp, 2)),
        ];
        for (column, value) in expected {
            assert_eq!(row[column], value, "column {column} of {row:?}");
        }
        assert!(
            pause_kinds(&out.join(&config).join(rate))
                .iter()
                .all(|k| !k.contains(if collector == "G1" {
                    "Shenandoah"
                } else {
                    "G1"
                })),
            "{row:?}"
        );
    }
    let environment: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("environment.json")).unwrap())
            .unwrap();
    for key in [
        "cpu_model",
        "cores",
        "memory_kib",
        "kernel",
        "disk",
        "jdks_found",
        "plan",
    ] {
        assert!(!environment[key].is_null(), "environment.json lacks {key}");
    }
    // The quick machine probe, taken before the first cell, and the report's sections from it and
    // from the plan's [cost].
    let environment = cqlbench_results::Environment::read(&out).unwrap();
    let probe = environment.probe.expect("the campaign's quick probe");
    assert!(probe.quick, "{probe:?}");
    assert!(
        probe.figures["sysbench.cpu.threads_1.events_per_s"] > 0.0
            && probe.figures["fio.compaction.read.iops"] > 0.0,
        "{probe:?}"
    );
    assert!(report.contains("## Machine probe"), "{report}");
    check_cost(&report, &out);
    for (config, collector) in [("G1-jdk17", "G1"), ("Shenandoah-jdk17", "Shenandoah")] {
        let flags: Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(config).join("jvm-flags.json")).unwrap(),
        )
        .unwrap();
        assert!(
            flags["nodes"][0]["effective_collector"]
                .as_str()
                .unwrap_or("")
                .contains(collector),
            "{config}: {flags}"
        );
        for rate in ["200", "400"] {
            let cell = out.join(config).join(rate);
            for file in [
                "summary.json",
                "intervals.csv",
                "write.hlog",
                "read.hlog",
                "node1/gc.log",
                "node1/gc-analysis.json",
                "node1/figures.json",
            ] {
                assert!(cell.join(file).is_file(), "{}", cell.join(file).display());
            }
            let figures: Value = serde_json::from_str(
                &std::fs::read_to_string(cell.join("node1/figures.json")).unwrap(),
            )
            .unwrap();
            let per_op = figures["cpu_ms_per_op"].as_f64().unwrap_or(0.0);
            assert!(per_op > 0.0 && per_op < 1000.0, "{figures}");
            let share = figures["gc_threads_cpu_share"].as_f64().unwrap_or(-1.0);
            assert!((0.0..=1.0).contains(&share), "{figures}");
            // The window's GC lines are all inside the measured window.
            let window = &figures["window"];
            let (start, end) = (
                window["start_unix_s"].as_f64().unwrap(),
                window["end_unix_s"].as_f64().unwrap(),
            );
            let s = summary(&cell);
            assert!((s["measured_start_unix_s"].as_f64().unwrap() - start).abs() < 1e-6);
            assert!((end - start - s["duration_s"].as_f64().unwrap()).abs() < 1e-6);
            let gc_log = std::fs::read_to_string(cell.join("node1/gc.log")).unwrap();
            assert!(!gc_log.is_empty(), "{}", cell.display());
            for line in gc_log.lines() {
                let t = cqlbench_campaign::figures::unified_line_time(line).unwrap();
                assert!(t >= start && t <= end, "{line} outside {start}..{end}");
            }
        }
    }

    // The collectors' own pauses in their cells' GC analyses.
    let g1: Vec<String> = ["200", "400"]
        .iter()
        .flat_map(|r| pause_kinds(&out.join("G1-jdk17").join(r)))
        .collect();
    let shenandoah: Vec<String> = ["200", "400"]
        .iter()
        .flat_map(|r| pause_kinds(&out.join("Shenandoah-jdk17").join(r)))
        .collect();
    assert!(
        g1.iter().any(|k| k == "Young" || k.starts_with("G1")),
        "G1 cells: {g1:?}"
    );
    assert!(
        !g1.iter()
            .any(|k| k == "Init Mark" || k == "Final Mark" || k.starts_with("Shenandoah")),
        "{g1:?}"
    );
    assert!(
        shenandoah
            .iter()
            .any(|k| k == "Init Mark" || k == "Final Mark" || k.starts_with("Shenandoah")),
        "Shenandoah cells: {shenandoah:?}"
    );
    assert!(
        !shenandoah
            .iter()
            .any(|k| k == "Young" || k.starts_with("G1")),
        "{shenandoah:?}"
    );

    // The final table shows the cells' own summary.json numbers.
    let tables = std::fs::read_to_string(out.join("tables.txt")).unwrap();
    assert!(
        text.contains(tables.trim()),
        "the table printed is tables.txt"
    );
    // Under the tables: the windows their p99s were taken over (the plan keeps the default).
    assert!(
        tables.contains("Average p99: the mean of the per-window p99s (10 s windows)"),
        "{tables}"
    );
    let sections: Vec<&str> = tables.split("\n\n").collect();
    assert!(sections[0].starts_with("Throughput"), "{tables}");
    for (row, (name, config)) in [
        ("G1 jdk17", "G1-jdk17"),
        ("Shenandoah jdk17", "Shenandoah-jdk17"),
    ]
    .into_iter()
    .enumerate()
    {
        let cells: Vec<Value> = ["200", "400"]
            .iter()
            .map(|r| summary(&out.join(config).join(r)))
            .collect();
        // A figure of a cell taken while the machine was busy carries the doubtful mark.
        let mark = |s: &Value| {
            if s["validity"]["doubtful"] == true {
                "†"
            } else {
                ""
            }
        };
        let expected: [Vec<String>; 4] = [
            cells
                .iter()
                .map(|s| shown(s["achieved_rate"].as_f64()) + mark(s))
                .collect(),
            cells
                .iter()
                .map(|s| shown(s["ops"]["write"]["avg_p99_ms"].as_f64()) + mark(s))
                .collect(),
            cells
                .iter()
                .map(|s| shown(s["ops"]["read"]["avg_p99_ms"].as_f64()) + mark(s))
                .collect(),
            cells
                .iter()
                .map(|s| {
                    shown(
                        ["read", "write"]
                            .iter()
                            .filter_map(|op| s["ops"][op]["max_p99_ms"].as_f64())
                            .reduce(f64::max),
                    ) + mark(s)
                })
                .collect(),
        ];
        for (section, values) in sections.iter().zip(expected) {
            let line = section.lines().nth(row + 1).unwrap();
            assert!(line.starts_with(name), "{line}");
            let shown_values: Vec<&str> = line[name.len()..].split_whitespace().collect();
            assert_eq!(shown_values, values, "{section}");
        }
    }
    retry_a_doubtful_cell(home.path(), &plan, &out, &log);
    eprintln!("whole test {:?}", started.elapsed());
}

/// Step 4: `--retry-doubtful` runs exactly the doubtful cells again and keeps each doubtful
/// result beside the new one; the report reads the new one.
fn retry_a_doubtful_cell(home: &Path, plan: &Path, out: &Path, log: &Path) {
    use cqlbench_results::{Summary, Validity};
    let doubtful = out.join("G1-jdk17/400");
    let mut marked = Summary::read(&doubtful).unwrap();
    marked.validity = Some(Validity {
        doubtful: true,
        reasons: vec!["marked doubtful by the test".into()],
        ..marked.validity.clone().unwrap_or_default()
    });
    marked.write(&doubtful).unwrap();
    // Whatever the machine did during the other cells, only this one is doubtful now.
    for other in [
        "G1-jdk17/200",
        "Shenandoah-jdk17/200",
        "Shenandoah-jdk17/400",
    ] {
        let mut quiet = Summary::read(&out.join(other)).unwrap();
        if let Some(validity) = quiet.validity.as_mut() {
            validity.doubtful = false;
        }
        quiet.write(&out.join(other)).unwrap();
    }
    let before = kept_cells(out);
    let started = std::time::Instant::now();
    let mut child = spawn_with(home, plan, out, log, &["--retry-doubtful"]);
    let status = child.wait().unwrap();
    let text = std::fs::read_to_string(log).unwrap();
    assert!(status.success(), "{text}");
    assert!(text.contains("1 doubtful cell(s) set aside"), "{text}");
    assert!(text.contains("[cell 2/4] G1 jdk17 @ 400 ops/s"), "{text}");
    for other in ["[cell 1/4]", "[cell 3/4]", "[cell 4/4]"] {
        assert!(!text.contains(other), "only the doubtful cell runs: {text}");
    }
    let set_aside = out.join("G1-jdk17/400.doubtful-1");
    let mut after = kept_cells(out);
    after.extend(snapshot(&set_aside));
    for (path, bytes) in &before {
        let kept = match path.strip_prefix(&doubtful) {
            Ok(inside) => set_aside.join(inside),
            Err(_) => path.clone(),
        };
        assert_eq!(after.get(&kept), Some(bytes), "{} changed", kept.display());
    }
    let rerun = Summary::read(&doubtful).unwrap();
    assert!(
        rerun.measured_start_unix_s > marked.measured_start_unix_s,
        "a new run"
    );
    check_wall_time_line(&text, rerun.duration_s, started.elapsed());
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        !report.contains("doubtful-1") && !report.contains("marked doubtful by the test"),
        "{report}"
    );
    assert_eq!(node_processes(home), Vec::<i32>::new(), "{text}");
}

/// The campaign's last line: the one cell run had `measured_s` in its window, out of a whole that
/// the test saw take at most `elapsed`.
fn check_wall_time_line(text: &str, measured_s: f64, elapsed: std::time::Duration) {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("time in measured windows: "))
        .unwrap_or_else(|| panic!("no wall time line in {text}"));
    let (measured, rest) = line.split_once(" of ").expect(line);
    let measured_whole = std::time::Duration::from_secs_f64(measured_s);
    assert_eq!(
        measured,
        cqlbench_campaign::matrix::format_duration(measured_whole),
        "{line}"
    );
    let (total, rest) = rest.split_once(" (").expect(line);
    let share: f64 = rest.split_once(" %)").expect(line).0.parse().expect(line);
    let total_s = parse_duration_s(total);
    assert!(
        total_s <= elapsed.as_secs_f64() + 1.0,
        "{line} within {elapsed:?}"
    );
    let expected = 100.0 * measured_s / total_s;
    // The printed total is whole seconds: the share agrees within that rounding.
    let rounding = 100.0 * measured_s / (total_s * total_s);
    assert!(
        (share - expected).abs() <= rounding + 0.1 && share > 0.0 && share < 100.0,
        "{line}: expected about {expected:.1} %"
    );
    for part in ["warm-ups", "clusters", "cell figures"] {
        assert!(line.contains(part), "{part:?} in {line}");
    }
}

/// `1m 02s` → 62.
fn parse_duration_s(text: &str) -> f64 {
    text.split(' ')
        .map(|part| {
            let (number, unit) = part.split_at(part.len() - 1);
            let number: f64 = number.parse().expect(text);
            match unit {
                "h" => number * 3600.0,
                "m" => number * 60.0,
                "s" => number,
                _ => panic!("unit of {text}"),
            }
        })
        .sum()
}
