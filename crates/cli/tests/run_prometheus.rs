//! `cqlbench run --prometheus ADDR` against a real node, scraped by a real Prometheus (Debian's, from
//! `scripts/prometheus.sh`, on loopback, every second): what Prometheus stored agrees with the run's
//! own summary.json, the exposition text passes the real parsers (Python's prometheus_client and
//! `promtool check metrics`), and every query of the Grafana dashboard under examples/ returns data.
//! Bad addresses are one-line errors before anything starts.

mod run_support;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use run_support::{
    cqlbench_command, http_get, one_line_error, read_summary, spawn_cqlbench, TestNode,
};
use serde_json::Value;

const NODE_ADDRESS: &str = "127.0.15.1";
const EXPORTER: &str = "127.0.15.2:9464";
const PROMETHEUS: &str = "127.0.15.2:9090";
const RATE: f64 = 400.0;
const SECONDS: f64 = 40.0;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Debian's prometheus and python3-prometheus-client, unpacked in the cache.
fn prometheus_packages() -> PathBuf {
    let out = Command::new("bash")
        .arg(repo_root().join("scripts/prometheus.sh"))
        .arg("fetch")
        .output()
        .expect("run scripts/prometheus.sh");
    assert!(
        out.status.success(),
        "scripts/prometheus.sh fetch: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A Prometheus server on loopback scraping the exporter every second; killed (by PID) on drop.
struct Prometheus {
    child: Child,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    fn start(packages: &Path) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: cqlbench\n    static_configs:\n      - targets: ['{EXPORTER}']\n"
            ),
        )
        .unwrap();
        let log = std::fs::File::create(dir.path().join("prometheus.log")).unwrap();
        let child = Command::new(packages.join("usr/bin/prometheus"))
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={PROMETHEUS}"))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start prometheus");
        let prometheus = Prometheus { child, _dir: dir };
        let deadline = Instant::now() + Duration::from_secs(60);
        while !matches!(http_get(PROMETHEUS, "/-/ready"), Ok((200, _))) {
            assert!(Instant::now() < deadline, "Prometheus not ready after 60 s");
            std::thread::sleep(Duration::from_millis(100));
        }
        prometheus
    }

    /// An instant query at Unix time `at`: each series' labels and value.
    fn query(&self, expr: &str, at: f64) -> Vec<(BTreeMap<String, String>, f64)> {
        let target = format!("/api/v1/query?query={}&time={at:.3}", url_encode(expr));
        let (status, body) = http_get(PROMETHEUS, &target).expect("query Prometheus");
        assert_eq!(status, 200, "{expr}: {body}");
        let answer: Value = serde_json::from_str(&body).expect("Prometheus answers JSON");
        answer["data"]["result"]
            .as_array()
            .unwrap_or_else(|| panic!("{expr}: {body}"))
            .iter()
            .map(|series| {
                let labels = serde_json::from_value(series["metric"].clone()).unwrap();
                let value = series["value"][1].as_str().unwrap().parse().unwrap();
                (labels, value)
            })
            .collect()
    }

    /// The value of a query that yields one series.
    fn scalar(&self, expr: &str, at: f64) -> f64 {
        let result = self.query(expr, at);
        assert_eq!(result.len(), 1, "{expr} at {at}: {result:?}");
        result[0].1
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        // Our own child, by PID.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The exposition text while the measured phase runs.
fn scrape_during_the_run(child: &mut Child) -> String {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok((200, text)) = http_get(EXPORTER, "/metrics") {
            let measured = text.contains("cqlbench_phase{client=\"0\",phase=\"measured\"} 1");
            if measured && text.contains("cqlbench_achieved_rate_ops_per_second") {
                return text;
            }
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "cqlbench ended before its measured phase was scraped"
        );
        assert!(
            Instant::now() < deadline,
            "no measured phase at {EXPORTER} in 120 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn output_with_stdin(command: &mut Command, input: &str) -> std::process::Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Python's prometheus_client parses the text: each family's type and sample count.
fn parse_with_prometheus_client(packages: &Path, text: &str) -> Value {
    let script = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
families = {}
for family in text_string_to_metric_families(sys.stdin.read()):
    families[family.name] = {"type": family.type, "samples": len(family.samples),
        "buckets": sorted({s.labels.get("le") for s in family.samples if "le" in s.labels}, key=lambda le: float(le))}
print(json.dumps(families))
"#;
    let mut python = Command::new("python3");
    python
        .args(["-c", script])
        .env("PYTHONPATH", packages.join("usr/lib/python3/dist-packages"));
    let out = output_with_stdin(&mut python, text);
    assert!(
        out.status.success(),
        "prometheus_client refused the exposition: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn promtool_check(packages: &Path, text: &str) {
    let mut promtool = Command::new(packages.join("usr/bin/promtool"));
    promtool.args(["check", "metrics"]);
    let out = output_with_stdin(&mut promtool, text);
    assert!(
        out.status.success(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn check_exposition(packages: &Path, text: &str) {
    promtool_check(packages, text);
    let families = parse_with_prometheus_client(packages, text);
    let expect = [
        ("cqlbench_operations", "counter"),
        ("cqlbench_latency_seconds", "histogram"),
        ("cqlbench_service_time_seconds", "histogram"),
        ("cqlbench_target_rate_ops_per_second", "gauge"),
        ("cqlbench_achieved_rate_ops_per_second", "gauge"),
        ("cqlbench_in_flight_requests", "gauge"),
        ("cqlbench_phase", "gauge"),
        ("cqlbench_client_lateness_seconds", "summary"),
    ];
    for (name, kind) in expect {
        assert_eq!(families[name]["type"], kind, "{name}: {families}");
    }
    let buckets: Vec<f64> = families["cqlbench_latency_seconds"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|le| le.as_str().unwrap().parse().unwrap())
        .collect();
    assert_eq!(buckets.first(), Some(&0.0001));
    assert!(buckets[buckets.len() - 2] >= 10.0 && buckets.last().unwrap().is_infinite());
}

/// The bucket of the exporter's that holds `seconds`.
fn bucket_index(seconds: f64) -> usize {
    let us = (seconds * 1e6).round() as u64;
    cqlbench_metrics::bucket_bounds_us().partition_point(|&bound| bound < us)
}

/// Every expression of the dashboard, with Grafana's interval and variables filled in; but the
/// campaign's progress, which a single run does not have.
fn dashboard_queries() -> Vec<String> {
    let text = std::fs::read_to_string(repo_root().join("examples/grafana-dashboard.json"))
        .expect("examples/grafana-dashboard.json");
    let dashboard: Value = serde_json::from_str(&text).expect("the dashboard is JSON");
    let mut exprs = Vec::new();
    for panel in dashboard["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().into_iter().flatten() {
            if let Some(expr) = target["expr"].as_str().filter(|e| !e.contains("campaign")) {
                exprs.push(
                    expr.replace("$__rate_interval", "20s")
                        .replace("$client", ".*")
                        .replace("$op", ".*"),
                );
            }
        }
    }
    assert!(
        exprs.len() >= 4,
        "the dashboard has too few queries: {exprs:?}"
    );
    exprs
}

#[test]
fn prometheus_scrapes_what_summary_json_says() {
    let packages = prometheus_packages();
    let node = TestNode::start("load-prometheus", NODE_ADDRESS);
    let prometheus = Prometheus::start(&packages);
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("run");
    let mut child = spawn_cqlbench(&[
        "run",
        "KeyValue",
        "--host",
        &node.host,
        "--rate",
        &RATE.to_string(),
        "-d",
        &format!("{SECONDS}s"),
        "--prometheus",
        EXPORTER,
        "--prometheus-linger",
        "4s",
        "-o",
        dir.to_str().unwrap(),
    ]);
    let text = scrape_during_the_run(&mut child);
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    check_exposition(&packages, &text);
    let summary = read_summary(&dir);
    let start = summary["measured_start_unix_s"].as_f64().unwrap();
    let end = start + summary["duration_s"].as_f64().unwrap();
    let now = end + 4.0;
    let whole_run = "[10m]";
    for op in ["write", "read"] {
        let count = summary["ops"][op]["count"].as_f64().unwrap();
        assert!(count > 3000.0, "{op}: {count}");
        let ok = format!("cqlbench_operations_total{{op=\"{op}\",outcome=\"ok\"}}");
        assert_eq!(
            prometheus.scalar(&format!("max_over_time({ok}{whole_run})"), now),
            count,
            "{op}"
        );
        let latency_count =
            format!("max_over_time(cqlbench_latency_seconds_count{{op=\"{op}\"}}{whole_run})");
        assert_eq!(prometheus.scalar(&latency_count, now), count, "{op}");
        let p99_expr = format!(
            "histogram_quantile(0.99, max_over_time(cqlbench_latency_seconds_bucket{{op=\"{op}\"}}{whole_run}))"
        );
        let p99 = prometheus.scalar(&p99_expr, now);
        let summary_p99 = summary["ops"][op]["latency_ms"]["p99"].as_f64().unwrap() / 1000.0;
        let (a, b) = (bucket_index(p99), bucket_index(summary_p99));
        assert!(
            a.abs_diff(b) <= 1,
            "{op}: Prometheus p99 {p99} s (bucket {a}), summary.json {summary_p99} s (bucket {b})"
        );
    }
    // A fixed rate, counted once a second and scraped once a second: over 30 s, the two clocks'
    // phase costs at most one tick of 29, 3.4 %.
    let rate = prometheus.scalar(
        "sum(rate(cqlbench_operations_total{outcome=\"ok\"}[30s]))",
        start + SECONDS - 4.0,
    );
    let achieved = summary["achieved_rate"].as_f64().unwrap();
    assert!(
        (rate / achieved - 1.0).abs() < 0.05,
        "Prometheus {rate} ops/s, summary.json {achieved}"
    );
    assert_eq!(
        prometheus.scalar(
            "max_over_time(cqlbench_target_rate_ops_per_second[10m])",
            now
        ),
        RATE
    );
    assert_eq!(
        prometheus.scalar("last_over_time(cqlbench_phase{phase=\"done\"}[10m])", now),
        1.0
    );
    assert_eq!(
        prometheus.scalar("last_over_time(cqlbench_in_flight_requests[10m])", now),
        0.0,
        "nothing is in flight once the run is over"
    );
    for expr in dashboard_queries() {
        let result = prometheus.query(&expr, start + SECONDS - 4.0);
        assert!(
            !result.is_empty(),
            "the dashboard's query returns nothing: {expr}"
        );
        assert!(
            result.iter().all(|(_, v)| v.is_finite()),
            "{expr}: {result:?}"
        );
    }
}

#[test]
fn bad_addresses_are_refused_before_anything_starts() {
    let home = tempfile::tempdir().unwrap();
    let run = |extra: &[&str], expected: &str| {
        let mut command = cqlbench_command(&["run", "KeyValue"]);
        command.args(extra).env("CQLBENCH_HOME", home.path());
        one_line_error(&mut command, expected);
    };
    run(&["--prometheus", "9464"], "not an address and port");
    run(&["--prometheus", "127.0.0.1:x"], "not an address and port");
    run(&["--prometheus", "0.0.0.0:9464"], "--prometheus-public");
    run(&["--prometheus-public"], "needs --prometheus ADDR");
    let taken = std::net::TcpListener::bind("127.0.15.3:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    run(&["--prometheus", &addr], "in use");
    assert!(
        std::fs::read_dir(home.path()).map_or(true, |mut d| d.next().is_none()),
        "nothing may be started or fetched for a refused run"
    );
    let mut campaign = cqlbench_command(&[
        "campaign",
        repo_root().join("examples/quick.toml").to_str().unwrap(),
        "--prometheus",
        "10.1.2.3:9464",
    ]);
    campaign.env("CQLBENCH_HOME", home.path());
    one_line_error(&mut campaign, "--prometheus-public");
}
