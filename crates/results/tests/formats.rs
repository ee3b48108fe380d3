//! Every result format: what the writer writes, the reader reads back equal; and the files of the
//! previous format version (a real campaign cell written by cqlbench before this crate, in
//! `fixtures/v1/`) still read, with what does not exist made absent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use cqlbench_results::hlog::{self, new_histogram, HlogKind, HlogWriter};
use cqlbench_results::*;
use serde_json::Value;

fn v1() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1")
}

fn v1_config() -> PathBuf {
    v1().join("G1-jdk17")
}

fn v1_cell() -> PathBuf {
    v1_config().join("1000/1")
}

/// A fixture's raw JSON (tests may read our files untyped, to compare against the typed reader).
fn raw(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn percentiles(base: f64) -> Percentiles {
    Percentiles {
        p50: Some(base),
        p90: Some(base * 2.0),
        p99: Some(base * 3.0),
        p999: Some(base * 4.0),
        max: Some(base * 5.0),
    }
}

/// A summary with every field set: a write with successes, an operation of a workload's own name
/// (`insert`) that had none — its latencies absent — and the optional sections.
fn full_summary() -> Summary {
    let mut write = OpSummary {
        count: 1000,
        errors: ErrorCounts {
            timeout: 2,
            ..ErrorCounts::default()
        },
        sent: 1002,
        ops_per_s: 100.0,
        latency_ms: percentiles(1.0),
        service_time_ms: percentiles(0.5),
        failed_latency_ms: percentiles(2000.0),
        ..OpSummary::default()
    };
    write.set_windows(&[WindowP99 {
        p99_ms: 3.0,
        seconds: 10.0,
    }]);
    let mut insert = OpSummary {
        count: 0,
        errors: ErrorCounts {
            unsent: 5,
            ..ErrorCounts::default()
        },
        failed_latency_ms: percentiles(10.0),
        ..OpSummary::default()
    };
    insert.set_windows(&[]);
    Summary {
        version: FORMAT_VERSION,
        workload: "KeyValue".into(),
        target_rate: Some(100.0),
        achieved_rate: 100.0,
        rate_kept: false,
        rate_note: "achieved 100.0 of 100 ops/s offered, BUT 7 failed: timeout 2, unsent 5".into(),
        duration_s: 10.0,
        status: RunStatus::Complete,
        failure: None,
        p99_window_s: 10.0,
        ops: BTreeMap::from([("insert".into(), insert), ("write".into(), write)]),
        client: ClientSummary {
            hiccup_ms: percentiles(0.01),
            send_gap_ms: Percentiles::NONE,
            release_lateness_ms: Percentiles::NONE,
            concurrency_limited_ops: 1,
            reprepared_ops: 2,
            scheduled_ops: Some(1007),
            unsent_ops: 5,
            cancelled_ops: 0,
            max_in_flight: 100,
        },
        warmup: Some(PhaseSummary {
            count: 0,
            errors: 3,
            duration_s: 0.0,
            ops_per_s: 0.0,
            latency_p99_ms: None,
        }),
        populate: None,
        settings: Settings {
            hosts: vec!["127.0.13.131".into()],
            port: 9042,
            keyspace: "ks".into(),
            stopping: Some(Stopping::DurationS(10.0)),
            rate_all_clients: Some(300.0),
            workload_parameters: BTreeMap::from([("value_size".into(), 100)]),
            clients: 3,
            ..Settings::default()
        },
        measured_start_unix_s: 1_800_000_000.5,
        clients: 3,
        client_id: Some(1),
        start_at: Some(1_800_000_000.0),
        merged_from: Some(vec![MergedClient {
            client_id: 1,
            dir: "c1".into(),
        }]),
        validity: Some(Validity {
            doubtful: true,
            reasons: vec!["steal time 12 %".into()],
            evidence: Some(Evidence {
                seconds: 2.0,
                cores: 2,
                steal: 0.12,
                top_other: vec![ProcessCpu {
                    pid: 7,
                    name: "stress".into(),
                    cpu_s: 1.5,
                }],
                nodes: vec![NodeProcess {
                    address: "127.0.0.1:9042".into(),
                    pid: 9,
                    cpu_s: 0.8,
                }],
                per_second: vec![EvidenceSecond {
                    t: 1.0,
                    steal: 0.12,
                    node_cpu_cores: vec![0.4],
                    ..EvidenceSecond::default()
                }],
                ..Evidence::default()
            }),
            thresholds: Some(ValidityThresholds::default()),
        }),
    }
}

#[test]
fn summary_round_trip_with_absent_values_as_null() {
    let dir = tempfile::tempdir().unwrap();
    let summary = full_summary();
    summary.write(dir.path()).unwrap();
    assert_eq!(Summary::read(dir.path()).unwrap(), summary);
    let json = raw(&dir.path().join(SUMMARY_FILE));
    assert_eq!(json["version"], FORMAT_VERSION);
    let insert = &json["ops"]["insert"];
    for p in ["p50", "p90", "p99", "p999", "max"] {
        assert!(insert["latency_ms"][p].is_null(), "{insert}");
        assert!(insert["service_time_ms"][p].is_null(), "{insert}");
        assert!(json["ops"]["write"]["latency_ms"][p].as_f64().is_some());
    }
    assert!(insert["avg_p99_ms"].is_null() && insert["max_p99_ms"].is_null());
    assert_eq!(insert["p99_note"], "no successful operation");
    assert!(json["warmup"]["latency_p99_ms"].is_null());
    assert!(json["client"]["send_gap_ms"]["p99"].is_null());
    assert_eq!(
        json["settings"]["stopping"],
        serde_json::json!({"duration_s": 10.0})
    );
    // An older summary.json of a lone run has neither merged_from nor validity: they are left out.
    let mut plain = summary.clone();
    plain.merged_from = None;
    plain.validity = None;
    plain.write(dir.path()).unwrap();
    let json = raw(&dir.path().join(SUMMARY_FILE));
    assert!(json.get("merged_from").is_none() && json.get("validity").is_none());
}

#[test]
fn summary_of_the_previous_version_reads_with_its_values() {
    let path = v1_cell().join(SUMMARY_FILE);
    let json = raw(&path);
    assert!(json.get("version").is_none(), "the fixture is of version 1");
    let summary = Summary::read(&v1_cell()).unwrap();
    assert_eq!(summary.version, FORMAT_VERSION, "upgraded as read");
    assert_eq!(summary.workload, json["workload"]);
    assert_eq!(summary.achieved_rate, json["achieved_rate"]);
    assert_eq!(summary.status, RunStatus::Complete);
    assert_eq!(summary.ops.len(), 2);
    for (name, op) in &summary.ops {
        let j = &json["ops"][name];
        assert_eq!(op.count, j["count"]);
        assert_eq!(op.latency_ms.p99, j["latency_ms"]["p99"].as_f64());
        assert_eq!(op.avg_p99_ms, j["avg_p99_ms"].as_f64());
        assert_eq!(op.max_p99_ms, j["max_p99_ms"].as_f64());
        // Version 1 wrote 0.0 for the failure latency of an operation without failures.
        assert_eq!(j["failed_latency_ms"]["p99"], 0.0);
        assert_eq!(op.failed_latency_ms, Percentiles::NONE);
    }
    assert_eq!(summary.settings.hosts, ["127.0.13.130:9042"]);
    assert_eq!(summary.settings.stopping, Some(Stopping::DurationS(10.0)));
    assert_eq!(summary.measured_start_unix_s, json["measured_start_unix_s"]);
    assert_eq!(summary.client.scheduled_ops, Some(12000));
    // Written again, it is the current version with the same figures, and every field of the
    // previous version is still there under its name and at its place (operators' scripts read them).
    let dir = tempfile::tempdir().unwrap();
    summary.write(dir.path()).unwrap();
    assert_eq!(Summary::read(dir.path()).unwrap(), summary);
    let rewritten = raw(&dir.path().join(SUMMARY_FILE));
    assert_same_fields(&json, &rewritten, "");
}

/// Every key path of `old` exists in `new`; values may have become `null` (absent), nothing moved.
fn assert_same_fields(old: &Value, new: &Value, at: &str) {
    if let Some(fields) = old.as_object() {
        for (key, value) in fields {
            let path = format!("{at}.{key}");
            let Some(there) = new.get(key) else {
                panic!("{path} is gone");
            };
            if !there.is_null() {
                assert_same_fields(value, there, &path);
            }
        }
    }
}

#[test]
fn a_version_1_operation_without_successes_reads_as_absent_not_zero() {
    let mut json = raw(&v1_cell().join(SUMMARY_FILE));
    json["ops"]["read"]["count"] = 0.into();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(SUMMARY_FILE), json.to_string()).unwrap();
    let summary = Summary::read(dir.path()).unwrap();
    assert_eq!(summary.ops["read"].latency_ms, Percentiles::NONE);
    assert_eq!(summary.ops["read"].service_time_ms, Percentiles::NONE);
    assert!(summary.ops["write"].latency_ms.p99.is_some());
}

#[test]
fn a_newer_version_is_refused_in_one_line_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut json = serde_json::to_value(full_summary()).unwrap();
    json["version"] = (FORMAT_VERSION + 1).into();
    std::fs::write(dir.path().join(SUMMARY_FILE), json.to_string()).unwrap();
    let error = Summary::read(dir.path()).unwrap_err().to_string();
    assert_eq!(error.lines().count(), 1, "{error}");
    assert!(
        error.contains(&format!("version {}", FORMAT_VERSION + 1))
            && error.contains("summary.json"),
        "{error}"
    );
    std::fs::write(dir.path().join(SUMMARY_FILE), "{ not json").unwrap();
    let error = Summary::read(dir.path()).unwrap_err().to_string();
    assert!(error.contains("is not a cqlbench summary"), "{error}");
}

#[test]
fn brief_round_trip_and_a_previous_brief_reads() {
    let brief = Brief::of(&full_summary());
    assert_eq!(brief.successful_ops, 1000);
    assert_eq!(brief.failed_ops, 7);
    let line = brief.line();
    assert!(!line.contains('\n') && line.len() < 4096);
    assert_eq!(Brief::parse(&line).unwrap(), brief);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("termination-log");
    brief.write(&path).unwrap();
    assert_eq!(
        Brief::parse(&std::fs::read_to_string(&path).unwrap()).unwrap(),
        brief
    );
    // As cqlbench wrote it before briefs had a version.
    let old = r#"{"status":"failed","failure":"no connection","client_id":2,"clients":3,"target_rate":null,"achieved_rate":0.0,"rate_kept":false,"successful_ops":0,"failed_ops":0,"measured_start_unix_s":0.0,"duration_s":0.0}"#;
    let read = Brief::parse(old).unwrap();
    assert_eq!(read, Brief::failed("no connection", Some(2), 3));
    assert!(Brief::parse("Error: x").is_err());
    let long = "x".repeat(10_000);
    assert!(Brief::failed(&long, None, 1).line().len() < 4096);
}

fn interval_row(measured: bool, op: &str, count: u64) -> IntervalRow {
    IntervalRow {
        elapsed_s: if measured { 1.002 } else { -0.998 },
        measured,
        op: op.into(),
        count,
        errors: 3,
        sent_ops_s: 1003.0,
        achieved_ops_s: count as f64,
        latency_ms: if count > 0 {
            percentiles(0.25)
        } else {
            Percentiles::NONE
        },
        service_p50_ms: (count > 0).then_some(0.1),
        service_p99_ms: (count > 0).then_some(0.2),
        service_max_ms: (count > 0).then_some(0.3),
        failed_p99_ms: Some(2000.0),
        failed_max_ms: Some(2001.0),
        error_kinds: ErrorCounts {
            timeout: 3,
            ..ErrorCounts::default()
        },
        scheduled_all_ops_s: 1000.0,
        client_hiccup_max_ms: Some(0.5),
        percentiles_kept: true,
    }
}

#[test]
fn intervals_round_trip_and_absent_percentiles_are_a_dash() {
    let rows = vec![
        interval_row(false, "write", 900),
        interval_row(true, "write", 1000),
        interval_row(true, "insert", 0),
    ];
    let mut text = format!("{INTERVAL_COLUMNS}\n");
    for row in &rows {
        text.push_str(&row.csv_line());
        text.push('\n');
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(INTERVALS_FILE), &text).unwrap();
    let read = Intervals::read(dir.path()).unwrap();
    assert_eq!(read.header, INTERVAL_COLUMNS);
    assert_eq!(read.rows, rows);
    let insert = text.lines().last().unwrap();
    let cells: Vec<&str> = insert.split(',').collect();
    assert_eq!(&cells[7..15], [ABSENT; 8], "{insert}");
    // A merge's warm-up row keeps no percentiles: empty cells, the maxima kept.
    let warm = IntervalRow {
        percentiles_kept: false,
        ..interval_row(false, "write", 900)
    };
    let line = warm.csv_line();
    let cells: Vec<&str> = line.split(',').collect();
    assert_eq!(&cells[7..11], ["", "", "", ""], "{line}");
    assert_eq!(cells[11], "1.25");
    let reread =
        Intervals::parse(Path::new("x"), &format!("{INTERVAL_COLUMNS}\n{line}\n")).unwrap();
    let kept_only = IntervalRow {
        latency_ms: Percentiles {
            max: warm.latency_ms.max,
            ..Percentiles::NONE
        },
        service_p50_ms: None,
        service_p99_ms: None,
        failed_p99_ms: None,
        ..warm
    };
    assert_eq!(reread.rows, vec![kept_only]);
}

#[test]
fn intervals_of_the_previous_version_read() {
    let path = v1_cell().join(INTERVALS_FILE);
    let text = std::fs::read_to_string(&path).unwrap();
    let intervals = Intervals::read(&v1_cell()).unwrap();
    assert_eq!(intervals.rows.len(), text.lines().count() - 1);
    let first = text.lines().nth(1).unwrap();
    assert!(first.starts_with("-0.999,warmup,read,181,"), "{first}");
    assert_eq!(intervals.rows[0].count, 181);
    assert_eq!(intervals.rows[0].latency_ms.p99, Some(1.297));
    // Version 1 wrote 0 for the failure latency of rows without failures.
    assert!(first.contains(",0,0,0,0,0,0,0,1000.0,"), "{first}");
    assert_eq!(intervals.rows[0].failed_p99_ms, None);
    assert!(intervals.rows.iter().any(|r| r.measured && r.count > 0));
    let bad = Intervals::parse(Path::new("x.csv"), &format!("{INTERVAL_COLUMNS}\n1,2\n"));
    assert!(bad.unwrap_err().to_string().contains("row of 2 fields"));
}

#[test]
fn interval_logs_round_trip_and_the_previous_ones_read() {
    let dir = tempfile::tempdir().unwrap();
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let path = dir.path().join(HlogKind::Latency.file_name("insert"));
    let mut writer = HlogWriter::create(&path, &["insert latency".to_string()], base).unwrap();
    let mut h = new_histogram();
    for v in 1..1000 {
        h.record(v * 13).unwrap();
    }
    writer
        .append(&h, Duration::ZERO, Duration::from_secs(1))
        .unwrap();
    let log = hlog::read(&path).unwrap();
    assert_eq!(log.intervals.len(), 1);
    assert_eq!(log.intervals[0].histogram, h);
    assert_eq!(
        hlog::logs_in(dir.path()),
        [("insert".to_string(), HlogKind::Latency)]
    );
    let kinds = hlog::logs_in(&v1_cell());
    assert_eq!(kinds.len(), 6, "{kinds:?}");
    for (op, kind) in kinds {
        let log = hlog::read(&v1_cell().join(kind.file_name(&op))).unwrap();
        assert!(!log.intervals.is_empty(), "{op} {kind:?}");
        assert!(log.comments.iter().any(|c| c.contains("microseconds")));
    }
}

#[test]
fn slow_ops_round_trip_and_the_previous_ones_read() {
    let ops = vec![
        SlowOp {
            intended_s: -0.25,
            done_s: 0.125,
            op: "insert".into(),
            latency_ms: 375.0,
            node: "127.0.13.131".into(),
        },
        SlowOp {
            intended_s: 1.5,
            done_s: 1.5625,
            op: "write".into(),
            latency_ms: 62.5,
            node: String::new(),
        },
    ];
    let dir = tempfile::tempdir().unwrap();
    let mut text = format!("{SLOW_OP_COLUMNS}\n");
    for op in &ops {
        text.push_str(&op.csv_line());
        text.push('\n');
    }
    std::fs::write(dir.path().join(SLOW_OPS_FILE), text).unwrap();
    assert_eq!(read_slow_ops(dir.path()).unwrap(), ops);
    let old = read_slow_ops(&v1_cell()).unwrap();
    assert_eq!(old.len(), 99);
    assert!(old
        .iter()
        .all(|o| o.done_s > o.intended_s && !o.node.is_empty()));
}

#[test]
fn node_files_round_trip_and_the_previous_ones_read() {
    let dir = tempfile::tempdir().unwrap();
    let figures = NodeFigures {
        version: FORMAT_VERSION,
        node: 2,
        address: "127.0.13.132:9042".into(),
        pid: Some(42),
        collector: Some("UseShenandoahGC".into()),
        window: Window {
            start_unix_s: 10.0,
            end_unix_s: 20.0,
        },
        process_cpu_s: Some(4.0),
        cpu_ms_per_op: Some(0.4),
        gc_threads_cpu_s: None,
        gc_threads_cpu_share: None,
        vm_thread_cpu_s: Some(0.01),
        gc_log_lines: 7,
        flushed_bytes: 0.0,
        compacted_bytes: None,
        write_amplification: None,
        notes: vec!["no CPU".into()],
    };
    figures.write(dir.path()).unwrap();
    assert_eq!(NodeFigures::read(dir.path()).unwrap(), figures);
    assert_eq!(figures.ip(), "127.0.13.132");
    let old = NodeFigures::read(&v1_cell().join("node1")).unwrap();
    let json = raw(&v1_cell().join("node1/figures.json"));
    old.write(dir.path()).unwrap();
    assert_same_fields(&json, &raw(&dir.path().join(FIGURES_FILE)), "");
    assert_eq!(old.address, json["address"]);
    assert_eq!(old.cpu_ms_per_op, json["cpu_ms_per_op"].as_f64());
    assert_eq!(old.window.start_unix_s, json["window"]["start_unix_s"]);

    // gc-analysis.json: the analysis of a real log, and `null` for a window without lines.
    let report =
        cqlbench_gclog::analyze_paths(&[v1_cell().join("node1/gc.log")]).expect("a GC log");
    let analysis = GcAnalysis {
        report: Some(report),
    };
    analysis.write(dir.path()).unwrap();
    assert_eq!(GcAnalysis::read(dir.path()).unwrap(), analysis);
    assert_eq!(
        raw(&dir.path().join(GC_ANALYSIS_FILE))["version"],
        FORMAT_VERSION
    );
    GcAnalysis::default().write(dir.path()).unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join(GC_ANALYSIS_FILE)).unwrap(),
        "null\n"
    );
    assert_eq!(GcAnalysis::read(dir.path()).unwrap(), GcAnalysis::default());
    let old = GcAnalysis::read(&v1_cell().join("node1")).unwrap();
    let json = raw(&v1_cell().join("node1/gc-analysis.json"));
    old.write(dir.path()).unwrap();
    assert_same_fields(&json, &raw(&dir.path().join(GC_ANALYSIS_FILE)), "");
    let old = old.report.expect("an analysis");
    assert_eq!(old.pauses.count, json["pauses"]["count"]);
    assert_eq!(
        old.safepoints.as_ref().map(|s| s.stopped_total_ms),
        json["safepoints"]["stopped_total_ms"].as_f64()
    );

    // timeline.csv, as the GC log analyser writes it.
    let stops = timeline::read(&v1_cell().join("node1")).unwrap();
    let text = std::fs::read_to_string(v1_cell().join("node1/timeline.csv")).unwrap();
    assert_eq!(stops.len(), text.lines().count() - 1);
    assert!(stops
        .iter()
        .all(|s| s.end_unix_s >= s.start_unix_s && s.start_unix_s > 1.7e9));

    // pod.json of a Kubernetes run.
    let pod = PodRecord {
        version: FORMAT_VERSION,
        pod: "k8s-gc-1-dc1-rack1-sts-0".into(),
        ip: "10.0.0.7".into(),
        collector: Some("G1".into()),
    };
    pod.write(dir.path()).unwrap();
    assert_eq!(PodRecord::read(dir.path()).unwrap(), pod);
    std::fs::write(
        dir.path().join(POD_FILE),
        r#"{"pod": "p", "ip": "10.0.0.8", "collector": "Shenandoah"}"#,
    )
    .unwrap();
    assert_eq!(
        PodRecord::read(dir.path()).unwrap().collector.as_deref(),
        Some("Shenandoah")
    );
}

#[test]
fn campaign_records_round_trip_and_the_previous_ones_read() {
    let dir = tempfile::tempdir().unwrap();
    let config = ConfigRecord::read(&v1_config()).unwrap();
    assert_eq!(config.name, "G1 jdk17");
    let spec = config.spec.clone().expect("the spec reads");
    assert_eq!(spec.base_ip.to_string(), "127.0.13.130");
    config.write(dir.path()).unwrap();
    assert_eq!(ConfigRecord::read(dir.path()).unwrap(), config);
    assert_same_fields(
        &raw(&v1_config().join(CONFIG_FILE)),
        &raw(&dir.path().join(CONFIG_FILE)),
        "",
    );
    let k8s = ConfigRecord {
        k8ssandra_cluster: Some("k8s-gc-1".into()),
        ..ConfigRecord::new("G1", &spec)
    };
    k8s.write(dir.path()).unwrap();
    assert_eq!(ConfigRecord::read(dir.path()).unwrap(), k8s);
    // A spec this cqlbench does not know still leaves the name.
    std::fs::write(
        dir.path().join(CONFIG_FILE),
        r#"{"name": "Old", "spec": {"nodes": "three"}}"#,
    )
    .unwrap();
    let odd = ConfigRecord::read(dir.path()).unwrap();
    assert_eq!((odd.name.as_str(), odd.spec), ("Old", None));

    let flags = JvmFlags::read(&v1_config()).unwrap();
    assert_eq!(flags.nodes.len(), 1);
    assert_eq!(
        flags.nodes[0].effective_collector.as_deref(),
        Some("UseG1GC")
    );
    assert_eq!(flags.security_manager_shim, None);
    flags.write(dir.path()).unwrap();
    assert_eq!(JvmFlags::read(dir.path()).unwrap(), flags);
    assert_same_fields(
        &raw(&v1_config().join(JVM_FLAGS_FILE)),
        &raw(&dir.path().join(JVM_FLAGS_FILE)),
        "",
    );

    let environment = Environment::read(&v1()).unwrap();
    let json = raw(&v1().join(ENVIRONMENT_FILE));
    assert_eq!(environment.plan, json["plan"]);
    assert_eq!(environment.cores.map(|c| c as u64), json["cores"].as_u64());
    assert!(environment.disk.results.is_some());
    environment.write(dir.path()).unwrap();
    assert_eq!(Environment::read(dir.path()).unwrap(), environment);
    assert_same_fields(&json, &raw(&dir.path().join(ENVIRONMENT_FILE)), "");

    let briefs = JobBriefs {
        version: FORMAT_VERSION,
        job: "k8s-gc-1-max".into(),
        rate: None,
        achieved_rate: 4600.0,
        briefs: vec![Brief::of(&full_summary())],
    };
    briefs.write(dir.path()).unwrap();
    assert_eq!(JobBriefs::read(dir.path()).unwrap(), briefs);
}
