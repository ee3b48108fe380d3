//! Shared helpers of the `cqlbench run` tests: a real local Cassandra node per test file (started with
//! cqlbench-cluster, stopped on drop), running the binary, and reading its result files.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use cqlbench_cluster::{ClusterSpec, Home};
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;

/// JVM options that set a node's own request timeouts to 20 s, as long as or longer than every
/// test client's: with Cassandra's defaults (write 2 s, CAS contention 1 s) a node starved of CPU
/// for 2 s on a busy machine fails correct operations by itself, and a test asserting that nothing
/// failed would fail by chance.
pub fn long_server_timeouts() -> Vec<String> {
    [
        "read_request_timeout",
        "range_request_timeout",
        "write_request_timeout",
        "counter_write_request_timeout",
        "cas_contention_timeout",
    ]
    .iter()
    .map(|setting| format!("-Dcassandra.settings.{setting}=20s"))
    .collect()
}

/// A 1-node cluster that lives as long as this value (also when the test panics).
pub struct TestNode {
    pub home: Home,
    pub name: String,
    pub host: String,
}

impl TestNode {
    pub fn start(name: &str, address: &str) -> TestNode {
        TestNode::start_with(name, address, &[])
    }

    /// A node started with extra JVM options (e.g. `cassandra.yaml` settings as system properties;
    /// given last, they override the defaults below).
    /// The node's own request timeouts are [`long_server_timeouts`].
    pub fn start_with(name: &str, address: &str, jvm_opts: &[&str]) -> TestNode {
        let home = Home::from_env();
        let spec = ClusterSpec {
            name: name.into(),
            base_ip: address.parse().expect("test address"),
            jvm_opts: long_server_timeouts()
                .into_iter()
                .chain(jvm_opts.iter().map(|o| o.to_string()))
                .collect(),
            ..ClusterSpec::default()
        };
        let state = cqlbench_cluster::up(&home, &spec, &mut |line: &str| eprintln!("{line}"))
            .unwrap_or_else(|e| panic!("cannot start test node {name} on {address}: {e}"));
        let host = state.cql_contact_points()[0].to_string();
        TestNode {
            home,
            name: name.into(),
            host,
        }
    }

    /// SIGSTOPs the node, and SIGCONTs it `duration` after every thread of its JVM stopped (blocking
    /// meanwhile). From `stopped` to `continued` the node surely ran no code.
    pub fn pause(&self, duration: std::time::Duration) -> Frozen {
        let paused = cqlbench_cluster::pause_node(&self.home, &self.name, 1, Some(duration))
            .expect("pause node");
        Frozen {
            signalled: cqlbench_units::time::unix_seconds(paused.signalled),
            stopped: cqlbench_units::time::unix_seconds(paused.stopped),
            continued: cqlbench_units::time::unix_seconds(paused.continued.expect("a timed pause")),
        }
    }
}

/// When a paused node was frozen, in Unix seconds: SIGSTOP sent, every thread seen stopped, SIGCONT
/// about to be sent.
#[derive(Debug, Clone, Copy)]
pub struct Frozen {
    pub signalled: f64,
    pub stopped: f64,
    pub continued: f64,
}

impl Frozen {
    /// How long the node surely ran no code.
    pub fn length(&self) -> f64 {
        self.continued - self.stopped
    }
}

/// The lines a running cqlbench prints on stderr, read as they come (progress lines included).
pub struct Progress {
    lines: std::sync::mpsc::Receiver<String>,
    pub seen: String,
}

impl Progress {
    /// Takes over the child's stderr (spawned with it piped).
    pub fn of(child: &mut Child) -> Progress {
        use std::io::BufRead;
        let stderr = child.stderr.take().expect("stderr piped");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Progress {
            lines,
            seen: String::new(),
        }
    }

    /// Reads until a line that starts with `prefix` and returns it; fails with everything seen if
    /// the output ends first.
    pub fn wait_for(&mut self, prefix: &str) -> String {
        // A bound only against a hung run: every wait here is for a line the run prints in seconds.
        let limit = std::time::Duration::from_secs(600);
        loop {
            match self.lines.recv_timeout(limit) {
                Ok(line) => {
                    self.seen.push_str(&line);
                    self.seen.push('\n');
                    if line.starts_with(prefix) {
                        return line;
                    }
                }
                Err(e) => panic!(
                    "no line starting with {prefix:?} ({e}); output:\n{}",
                    self.seen
                ),
            }
        }
    }

    /// Reads until a line that contains every one of `needles` and returns it.
    pub fn wait_for_all(&mut self, needles: &[&str]) -> String {
        loop {
            let line = self.wait_for("");
            if needles.iter().all(|n| line.contains(n)) {
                return line;
            }
        }
    }

    /// Reads until the progress line of a second `n` or later (`[     n s] …`: seconds since the
    /// run's start, warm-up included, rounded; a late tick prints a later second, so a line for
    /// exactly `n` may never come) and returns it.
    pub fn wait_for_second(&mut self, n: u32) -> String {
        loop {
            let line = self.wait_for("[");
            let second = line
                .strip_prefix('[')
                .and_then(|rest| rest.split_once("s]"))
                .and_then(|(number, _)| number.trim().parse::<u32>().ok());
            if second.is_some_and(|s| s >= n) {
                return line;
            }
        }
    }

    /// Everything the run printed, once it has exited (its stderr is then at its end).
    pub fn rest(mut self) -> String {
        while let Ok(line) = self.lines.recv() {
            self.seen.push_str(&line);
            self.seen.push('\n');
        }
        self.seen
    }
}

/// Sends `signal` to a child this test spawned and has not reaped.
pub fn signal(child: &Child, signal: i32) {
    // SAFETY: kill(2) on the PID of our own unreaped child: it cannot have been reused.
    let sent = unsafe { libc::kill(child.id() as i32, signal) };
    assert_eq!(sent, 0, "kill({}, {signal})", child.id());
}

impl Drop for TestNode {
    fn drop(&mut self) {
        if let Err(e) = cqlbench_cluster::down(&self.home, &self.name, &mut |_: &str| {}) {
            eprintln!("warning: could not stop test node {}: {e}", self.name);
        }
    }
}

/// Creates `keyspace` afresh with its KeyValue table through a short run, so that the measured runs
/// that follow start on a warm table and meet nothing but what they test.
pub fn warm_keyvalue(node: &TestNode, keyspace: &str, dir: &Path) {
    cqlbench_ok(&[
        "run",
        "KeyValue",
        "--host",
        &node.host,
        "--keyspace",
        keyspace,
        "--drop",
        "-n",
        "2000",
        "--rate",
        "1000",
        "-o",
        dir.join("warm").to_str().unwrap(),
    ]);
}

/// The cqlbench binary with these arguments, to adjust (environment, output) before running.
pub fn cqlbench_command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cqlbench"));
    command.args(args);
    command
}

/// Runs the cqlbench binary.
pub fn cqlbench(args: &[&str]) -> Output {
    cqlbench_command(args).output().expect("run cqlbench")
}

/// Writes the common start into `file` as a client expects it: one line, written beside the file
/// and renamed, so that no client reads half of it.
pub fn write_start(file: &Path, start: &str) {
    let temporary = file.with_extension("tmp");
    std::fs::write(&temporary, format!("{start}\n")).unwrap();
    std::fs::rename(&temporary, file).unwrap();
}

/// Now as Unix time in seconds.
pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// Client processes that are killed and reaped if the test ends before it waits for them (an
/// assertion failing while they wait for a start file that will never come), so none is left behind.
pub struct Children(pub Vec<Child>);

impl Children {
    /// Waits for every child, in order.
    pub fn wait_with_output(mut self) -> Vec<Output> {
        std::mem::take(&mut self.0)
            .into_iter()
            .map(|child| child.wait_with_output().expect("wait for cqlbench"))
            .collect()
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Starts cqlbench in the background with its output captured (for `wait_with_output`).
pub fn spawn_cqlbench(args: &[&str]) -> Child {
    cqlbench_command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start cqlbench")
}

/// Runs `command`, which must fail the way bad input should: exit code 1, no panic, and exactly one
/// `error:` line, which mentions `expected`. Returns that line.
pub fn one_line_error(command: &mut Command, expected: &str) -> String {
    let out = command.output().expect("run cqlbench");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{command:?}: {stderr}");
    assert!(
        !stderr.contains("panicked"),
        "{command:?} panicked: {stderr}"
    );
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(
        lines.len(),
        1,
        "{command:?}: expected one error line, got:\n{stderr}"
    );
    assert!(
        lines[0].contains(expected),
        "{command:?}: error should mention '{expected}': {}",
        lines[0]
    );
    lines[0].to_string()
}

/// Runs cqlbench and insists on success, showing its output otherwise.
pub fn cqlbench_ok(args: &[&str]) -> String {
    let out = cqlbench(args);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "cqlbench {args:?} failed\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

pub fn read_summary(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    serde_json::from_str(&text).expect("summary.json is JSON")
}

/// Sums every interval of a `.hlog` file, decoded with HdrHistogram's own log reader.
pub fn hlog_total(path: &Path) -> Histogram<u64> {
    let intervals = hlog_intervals(path);
    assert!(!intervals.is_empty(), "no intervals in {}", path.display());
    let mut total = Histogram::<u64>::new(3).expect("histogram");
    for interval in &intervals {
        total.add(&interval.histogram).expect("add");
    }
    total
}

/// One interval of a `.hlog` file, its times in seconds from the measured start.
pub struct HlogInterval {
    pub start: f64,
    pub end: f64,
    pub histogram: Histogram<u64>,
}

/// The intervals of a `.hlog` file, decoded with HdrHistogram's own log reader.
pub fn hlog_intervals(path: &Path) -> Vec<HlogInterval> {
    let bytes = std::fs::read(path).expect("read hlog");
    let mut deserializer = Deserializer::new();
    let mut intervals = Vec::new();
    for entry in IntervalLogIterator::new(&bytes) {
        if let LogEntry::Interval(interval) = entry.expect("well-formed hlog line") {
            let decoded = base64_decode(interval.encoded_histogram());
            let histogram: Histogram<u64> = deserializer
                .deserialize(&mut decoded.as_slice())
                .expect("decodable histogram");
            let start = interval.start_timestamp().as_secs_f64();
            intervals.push(HlogInterval {
                start,
                end: start + interval.duration().as_secs_f64(),
                histogram,
            });
        }
    }
    intervals
}

pub fn base64_decode(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let mut buffer = 0u32;
    let mut bits = 0;
    for byte in text.bytes().filter(|&b| b != b'=') {
        let value = ALPHABET.iter().position(|&a| a == byte).expect("base64") as u32;
        buffer = (buffer << 6) | value;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
        }
    }
    out
}

pub fn f64_at(v: &serde_json::Value, path: &str) -> f64 {
    let mut cur = v;
    for key in path.split('.') {
        cur = &cur[key];
    }
    cur.as_f64()
        .unwrap_or_else(|| panic!("summary.json has no number at {path}: {v}"))
}

/// Runs one CQL statement on `host` with the scylla driver (outside cqlbench's own code path).
pub fn execute_cql(host: &str, cql: &str) {
    let session = cqlbench_testkit::Driver::connect_to(host)
        .unwrap_or_else(|e| panic!("connect to {host}: {e}"));
    let statement = cqlbench_testkit::timed_statement(cql, std::time::Duration::from_secs(60));
    session
        .query(statement, cqlbench_testkit::NONE)
        .unwrap_or_else(|e| panic!("{cql}: {e}"));
}

/// Sums the successful and failed operations of every op type in summary.json.
pub fn accounted(summary: &serde_json::Value) -> (f64, f64) {
    let mut ok = 0.0;
    let mut failed = 0.0;
    for op in ["read", "write"] {
        if summary["ops"][op].is_null() {
            continue;
        }
        ok += f64_at(summary, &format!("ops.{op}.count"));
        for kind in ["timeout", "unavailable", "overloaded", "other", "unsent"] {
            failed += f64_at(summary, &format!("ops.{op}.errors.{kind}"));
        }
    }
    (ok, failed)
}

/// One row of intervals.csv: where it ends (seconds from the measured start), its phase and
/// operation type, and its numeric columns by name (`None` where the value does not exist: "–").
pub struct IntervalRow {
    pub end: f64,
    pub phase: String,
    pub op: String,
    values: std::collections::HashMap<String, Option<f64>>,
}

impl IntervalRow {
    /// A column's value, which must exist.
    pub fn get(&self, column: &str) -> f64 {
        self.value(column)
            .unwrap_or_else(|| panic!("intervals.csv has no value of {column} at {} s", self.end))
    }

    /// A column's value, `None` where the row shows it does not exist ("–").
    pub fn value(&self, column: &str) -> Option<f64> {
        *self
            .values
            .get(column)
            .unwrap_or_else(|| panic!("intervals.csv has no column {column}"))
    }
}

/// The rows of a run's intervals.csv, in file order.
pub fn interval_rows(dir: &Path) -> Vec<IntervalRow> {
    let csv = std::fs::read_to_string(dir.join("intervals.csv")).expect("intervals.csv");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    lines
        .map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            assert_eq!(fields.len(), header.len(), "{line}");
            let values = header
                .iter()
                .zip(&fields)
                .filter_map(|(name, text)| {
                    let value = match *text {
                        "–" => None,
                        number => Some(number.parse().ok()?),
                    };
                    Some((name.to_string(), value))
                })
                .collect();
            IntervalRow {
                end: fields[0].parse().expect("elapsed_s"),
                phase: fields[1].to_string(),
                op: fields[2].to_string(),
                values,
            }
        })
        .collect()
}

/// The exact facts of a completed fixed-rate run without warm-up whose schedule of `scheduled`
/// operations ends `seconds` after the measured start:
/// - every operation on the schedule succeeded, once (`accounted`);
/// - `achieved_rate` is the successes over `duration_s` (each rounded to 3 decimals);
/// - `duration_s` (the last completion) passes the schedule's end by no more than the largest
///   latency of the rows ending after that end: the last operation was due by the schedule's end,
///   so it completed at most its latency after it, in one of those rows;
/// - `rate_kept` says what the figures say: nothing failed and achieved within 1 % of the target.
///
/// Whether achieved is within 1 % of the target then depends on that last latency alone (0.2 s at
/// 20 s), which no test can promise on a shared machine; these facts hold whatever it is.
pub fn assert_rate_facts(summary: &serde_json::Value, out: &Path, scheduled: f64, seconds: f64) {
    assert_eq!(summary["status"], "complete", "{summary}");
    assert_eq!(
        accounted(summary),
        (scheduled, 0.0),
        "successful and failed operations of a {scheduled}-operation schedule: {}",
        summary["rate_note"]
    );
    let count = scheduled;
    let duration = f64_at(summary, "duration_s");
    let achieved = f64_at(summary, "achieved_rate");
    // Both are rounded to 3 decimals; the rate from the unrounded duration differs by at most this.
    let rounding = 0.0005 + count * 0.0005 / (duration * (duration - 0.0005));
    assert!(
        (achieved - count / duration).abs() <= rounding,
        "achieved_rate {achieved} is not {count} successes / duration_s {duration}"
    );
    let tail_ms = interval_rows(out)
        .iter()
        .filter(|r| r.phase == "measured" && r.end > seconds)
        // A row without a success has no latency ("–").
        .filter_map(|r| r.value("max_ms"))
        .fold(0.0, f64::max);
    assert!(
        duration - seconds <= tail_ms / 1000.0 + 0.0005,
        "duration_s {duration} passes the schedule's end ({seconds} s) by more than the largest \
         latency of the rows after it ({tail_ms} ms)"
    );
    assert!(
        duration > 0.0 && duration >= seconds - 1.0,
        "duration_s {duration}"
    );
    let target = f64_at(summary, "target_rate");
    assert_eq!(
        summary["rate_kept"],
        (achieved - target).abs() <= target * 0.01,
        "rate_kept vs achieved {achieved} of {target} ops/s ({})",
        summary["rate_note"]
    );
    eprintln!(
        "{count} operations in {duration} s: achieved {achieved} of {target} ops/s, the last \
         completion {:.1} ms after the schedule's end",
        (duration - seconds) * 1000.0
    );
}

/// One HTTP/1.0 GET (so that no server answers in chunks): status code and body.
pub fn http_get(addr: &str, target: &str) -> std::io::Result<(u16, String)> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(std::time::Duration::from_secs(10)))?;
    write!(stream, "GET {target} HTTP/1.0\r\nHost: {addr}\r\n\r\n")?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok((status, body.to_string()))
}
