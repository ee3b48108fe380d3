//! The command line of `cqlbench run` as a library: the same parser turns `cqlbench run …` and a
//! campaign plan's `args = "…"` line into [`RunOptions`], so a seed's tlp-stress line means the same
//! thing in both places.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, FromArgMatches};
use cqlbench_units::{parse_count, parse_duration, parse_rate};

use crate::{
    find_workload, parse_replication, parse_table_options, Consistency, Credentials, LoadError,
    PartitionGen, PrometheusOptions, RunOptions, Stopping, Workload,
};

pub const RUN_EXAMPLES: &str = "\
Examples:
  cqlbench run BasicTimeSeries -d 1m --rate 2000
      a one-minute benchmark on the local cluster (started for the run if none is up)
  cqlbench run BasicTimeSeries -d 30m -p 100M -c 50 --pg sequence -t 8 -r 0.2 \\
      --rate 25000 --populate 200000
      the seed benchmark (tlp-stress command line, unchanged)
  cqlbench run Tabular --host 10.0.0.1 --host 10.0.0.2 --dc dc1 --rate 8000 -n 50M \\
      --workload.partsize=5000
  cqlbench run examples/workloads/kv-hotset.yaml --rate 2000 -d 1m --workload.keys=1M
      your own data model: schema, value generators, named operations with weights
      (results carry one entry per operation name: insert, read, ...)
  cqlbench run cqlstress-example.yaml --mix \"ops(insert=1,simple1=9)\" --rate 5000 -d 10m
      a cassandra-stress user profile, unchanged
  cqlbench run cql_tabular2.yaml rampup-cycles=1M main-cycles=100M rf=3 partsize=5000
      a nosqlbench workload, unchanged: its default scenario, NAME=VALUE parameters
  cqlbench run LWT --rate 2000 -d 5m
      one of easy-cass-stress's workloads, shipped as files (`cqlbench workloads` lists them)

How latency is measured:
  Every operation has an intended start on the fixed-rate schedule (--rate). Its latency
  is completion minus intended start, so waiting behind a stalled server or a full
  in-flight limit (-c per thread x -t threads) counts: this is what a user of the database
  feels (no coordinated omission). Service time (completion minus actual send) is recorded
  too. If the server cannot keep up, the output says so (offered vs achieved); the load
  is never quietly lowered.

Successful and failed operations are kept apart:
  count, latencies, achieved rate and the windowed p99s are of SUCCESSFUL operations only.
  Failed ones are counted by kind (errors.timeout, unavailable, overloaded, other, unsent)
  and have their own latency (failed_latency_ms: intended start to the moment the failure
  was known: a timeout at its deadline, a refused connection at once). An operation due on
  the schedule but never sent (the server fell too far behind, or the run was stopped) is
  a failure of kind `unsent`, its latency its age when the run gave up on it: nothing on
  the schedule is left out. 'kept the target rate' means the successful rate is within 1 %
  of the target AND nothing failed. Operations are never retried; one that meets a server
  that forgot the prepared statement is re-prepared and re-sent once (the extra round trip
  counts in its latency).

Output (in -o DIR, written as the run goes; Ctrl-C keeps everything measured so far):
  summary.json      ops.TYPE.count (successful), ops.TYPE.errors.KIND (failed), latency,
                    service-time and failed-latency percentiles, average (weighted by window
                    length) and max of the per-window p99 (--p99-window, 10 s; the last
                    window counts whatever its length; null when nothing succeeded), rate
                    offered/achieved, status (complete, interrupted, failed + failure)
  intervals.csv     one row per second per phase and op type; elapsed_s counts from the
                    measured start (negative in the warm-up); sent_ops_s is what the client
                    really released, scheduled_all_ops_s what the schedule asked for
  OP.hlog           HdrHistogram interval log of corrected latency of successful ops (us)
  OP.service.hlog   the same for service time
  OP.failed.hlog    the same for failed operations (unsent included)

A client thread that fails stops the run: summary.json says why, exit code is 1.

Several load clients (--clients N --client-id I --start-at T):
  One schedule, sent by N separate cqlbench processes (on one machine or several). Give every
  client the same command line except --client-id (0 to N-1) and -o. --rate, -n and --populate
  are of all clients together: client I sends rate/N, and takes the operation indexes i with
  i % N == I (populate rows too), so the clients' keys together are exactly the keys one client
  would use at the whole rate. Operation i is intended at T + i/rate on every client: T, the
  common start (--start-at, required with N > 1), is a Unix time in seconds (fractions allowed)
  or an RFC 3339 time (2026-11-22T17:30:00Z, 2026-11-22T18:30:00.5+01:00), at most 24 h ahead;
  the warm-up, if any, begins at T and the measured phase at T + warm-up. Each client waits for
  T after connecting (and populating its share), and refuses to start more than 1 s after it:
  choose T far enough ahead for every client to be ready. Or give every client --start-at @FILE
  (FILE need not exist yet): each, once connected and populated, prints 'ready: waiting for the
  common start in FILE' and waits until FILE holds T as one line ending in a newline, so T can
  be chosen a moment ahead once all are ready (echo $(( $(date +%s) + 2 )) > FILE.tmp && mv
  FILE.tmp FILE: written elsewhere and renamed, a reader never sees half a line). Its one-second
  intervals are counted from T, so the clients' intervals line up; clocks must agree (NTP) across
  machines (with @FILE, FILE too: one shared file system, or the same line written to each). Each
  client writes its own result directory (summary.json says clients, client_id, start_at);
  `cqlbench report merge DIR... -o OUT` adds them up into one result:
    T=$(( $(date +%s) + 20 ))
    for I in 0 1 2; do cqlbench run KeyValue --host 10.0.0.1 --rate 30k -d 5m \
        --clients 3 --client-id $I --start-at $T -o res/client$I & done; wait
    cqlbench report merge res/client0 res/client1 res/client2 -o res/all

Is the result trustworthy? (summary.json's validity):
  While the load runs, /proc is read once a second: the CPU of processes that are neither the
  cluster's nodes (found by the CQL address they listen on) nor the client, steal and iowait, the
  client's own CPU, available memory and swap traffic. Over the measured window they become
  validity.evidence (means, the busiest other processes, each local node's CPU, and the figures
  second by second); validity.doubtful is true, with one sentence per reason, when other
  processes used >= 15 % of all cores for >= 15 % of the window, steal reached 5 %, the client
  used >= 90 % of its load threads' cores, its send lateness p99 reached 5 ms, or pages were
  swapped (--validity-thresholds changes the limits). The terminal says so after the table.

Live metrics for Prometheus (--prometheus ADDR):
  http://ADDR/metrics serves, from the start of the run to --prometheus-linger after its end,
  the text format Prometheus scrapes, updated once a second (all series carry client=\"ID\"):
    cqlbench_operations_total{op,outcome}   ok, or the error kind; warm-up included
    cqlbench_latency_seconds{op}            histogram of corrected latency (the .hlog's values:
                                            measured phase, successful operations), 100 us to
                                            10 s in buckets 4.4 % apart
    cqlbench_service_time_seconds{op}       the same for service time
    cqlbench_target_rate_ops_per_second, cqlbench_achieved_rate_ops_per_second,
    cqlbench_in_flight_requests, cqlbench_phase{phase}, cqlbench_client_lateness_seconds
  e.g. p99 per operation over 1 minute in PromQL:
    histogram_quantile(0.99, sum by (op, le) (rate(cqlbench_latency_seconds_bucket[1m])))
  examples/grafana-dashboard.json is a Grafana dashboard of these series. Only a loopback
  address is accepted unless --prometheus-public is given (e.g. 0.0.0.0:9464 in a pod).

Credentials come from CQLBENCH_USERNAME / CQLBENCH_PASSWORD or --credentials-file,
never the command line.";

#[derive(Debug, Args)]
#[command(after_help = RUN_EXAMPLES)]
pub struct RunArgs {
    /// Workload: a built-in one (BasicTimeSeries, KeyValue, Tabular), a shipped one (LWT, SAI, …;
    /// `cqlbench workloads` lists them all), or a workload file: cqlbench's format, a
    /// cassandra-stress user profile or a nosqlbench workload (README "Workload files")
    #[arg(value_name = "WORKLOAD")]
    pub workload: String,

    /// How long the measured phase runs: 30s, 30m, 2h (a bare number is seconds) [default: 1m]
    #[arg(short = 'd', long, value_name = "DURATION", conflicts_with = "ops")]
    pub duration: Option<String>,

    /// Number of measured operations instead of a duration: 1M, 50M
    #[arg(short = 'n', long, value_name = "COUNT")]
    pub ops: Option<String>,

    /// Number of distinct partitions (keys): 1000, 10k, 100M
    #[arg(short = 'p', long, value_name = "COUNT", default_value = "1M")]
    pub partitions: String,

    /// Requests in flight per thread (the in-flight limit is this times --threads) [default: 50,
    /// or 100 on the one default thread under --rate: 100 in flight either way]
    #[arg(short = 'c', long, value_name = "N", allow_hyphen_values = true)]
    pub concurrency: Option<String>,

    /// Scheduler threads; each sends its share of the schedule [default: 1 under --rate, where
    /// one thread keeps tens of thousands of operations a second and each more thread adds its
    /// own wake-ups; 2 unthrottled]
    #[arg(short = 't', long, value_name = "N", allow_hyphen_values = true)]
    pub threads: Option<String>,

    /// Share of reads, 0 to 1 [default: the workload's, e.g. 0.01 for BasicTimeSeries like tlp-stress]
    #[arg(
        short = 'r',
        long = "read-ratio",
        value_name = "RATIO",
        allow_hyphen_values = true
    )]
    pub read_ratio: Option<String>,

    /// Fixed request rate in operations per second (25000, 25k); without it the load is unthrottled
    #[arg(long, value_name = "OPS_PER_S", allow_hyphen_values = true)]
    pub rate: Option<String>,

    /// Partition key generator: sequence, random or normal
    #[arg(long = "pg", value_name = "GENERATOR", default_value = "random")]
    pub partition_generator: String,

    /// Rows written before the measured phase (not measured; progress is shown)
    #[arg(long, value_name = "ROWS")]
    pub populate: Option<String>,

    /// Run the schedule this long before measuring; reported separately, excluded from the result
    #[arg(long, value_name = "DURATION")]
    pub warmup: Option<String>,

    /// With --rate, release each thread's operations in groups at most this often (e.g. 3000 ops/s
    /// on one thread with 2ms: 6 every 2 ms). Latency counts from the group's release. 0 releases
    /// every operation at its own time, at the cost of a timer wake-up per operation [default:
    /// 4ms, shorter where a group would take more than a quarter of a thread's in-flight slots:
    /// 1000 ops/s on one thread with 100 slots, 4 every 4 ms; 10000 ops/s, 25 every 2.5 ms]
    #[arg(long, value_name = "DURATION")]
    pub tick: Option<String>,

    /// Do not write slow-ops.csv. By default every successful measured operation slower than 0.7x
    /// the p99 so far (or the last second's, if lower) is written there with its intended start, completion and node, so that the
    /// tail can be lined up with the servers' GC pauses (`cqlbench report` does)
    #[arg(long)]
    pub no_slow_ops: bool,

    /// Consistency level [default: the workload's: LOCAL_ONE, or LOCAL_QUORUM for Tabular]
    #[arg(long = "cl", value_name = "LEVEL")]
    pub consistency: Option<String>,

    /// Serial consistency level: SERIAL or LOCAL_SERIAL
    #[arg(
        long = "serial-cl",
        value_name = "LEVEL",
        default_value = "LOCAL_SERIAL"
    )]
    pub serial_consistency: String,

    /// Keyspace replication map, used as given [default: NetworkTopologyStrategy over the cluster's
    /// datacenters: with several, RF 3 in each (its node count if fewer); with one, RF 3 from 3 nodes, else 1]
    #[arg(long, value_name = "MAP")]
    pub replication: Option<String>,

    /// Table compaction map, e.g. "{'class': 'SizeTieredCompactionStrategy', 'min_threshold': '2'}"
    /// (table options may follow: "... AND speculative_retry = 'NONE'")
    #[arg(long, value_name = "MAP")]
    pub compaction: Option<String>,

    /// Keyspace for the workload's tables [default: a cassandra-stress profile's own, else cqlbench]
    #[arg(long, value_name = "NAME")]
    pub keyspace: Option<String>,

    /// A workload file's operations and their weights: insert=1,simple1=9 (cassandra-stress's
    /// ops(insert=1,simple1=9) too) [default: the file's weights; insert=1 for a profile]
    #[arg(long, value_name = "NAME=WEIGHT,...")]
    pub mix: Option<String>,

    /// Drop the keyspace first, so the run starts from empty tables
    #[arg(long)]
    pub drop: bool,

    /// Connections the driver opens to each node
    #[arg(long = "connections-per-host", value_name = "N", default_value = "2")]
    pub connections_per_host: String,

    /// Contact point (repeatable, or comma-separated). Without it, the local cluster from `cqlbench cluster`
    /// is used, or a 1-node cluster is started for the run and stopped afterwards
    #[arg(long = "host", value_name = "HOST")]
    pub hosts: Vec<String>,

    /// CQL native port
    #[arg(long, value_name = "PORT", default_value = "9042")]
    pub port: String,

    /// Route requests only to this datacenter's nodes (DC-aware load balancing); LOCAL_QUORUM and
    /// LOCAL_ONE then count replicas in this datacenter
    #[arg(long, value_name = "DC")]
    pub dc: Option<String>,

    /// Client-side timeout per request; a timed-out operation is counted and recorded with its latency
    #[arg(
        long = "request-timeout",
        value_name = "DURATION",
        default_value = "12s"
    )]
    pub request_timeout: String,

    /// Result directory [default: ./cqlbench-results/WORKLOAD-YYYYMMDD-HHMMSS]
    #[arg(short = 'o', long = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// When the run ends (also when it fails), write a one-line JSON brief of it to FILE (status,
    /// successful and failed operations, achieved rate; under 4 KiB). In a Kubernetes pod,
    /// /dev/termination-log puts it in the pod's status, where `cqlbench k8s run` reads it
    #[arg(long = "brief-to", value_name = "FILE")]
    pub brief_to: Option<PathBuf>,

    /// Seed for keys and values: the same seed gives the same keys
    #[arg(long, value_name = "N", default_value = "0")]
    pub seed: String,

    /// File with `username=...` and `password=...` lines
    #[arg(long = "credentials-file", value_name = "FILE")]
    pub credentials_file: Option<PathBuf>,

    /// Connect with TLS, trusting this CA certificate (PEM)
    #[arg(long, value_name = "CA_FILE")]
    pub tls: Option<PathBuf>,

    /// Window length for the average and maximum p99 (the seed tables' "Average p99"/"Max p99")
    #[arg(long = "p99-window", value_name = "DURATION", default_value = "10s")]
    pub p99_window: String,

    /// Serve live figures for Prometheus at http://ADDR/metrics during the run, e.g. 127.0.0.1:9464
    /// (see below)
    #[arg(long, value_name = "ADDR")]
    pub prometheus: Option<String>,

    /// Allow --prometheus on an address other than loopback (everyone who reaches it can read it)
    #[arg(long = "prometheus-public")]
    pub prometheus_public: bool,

    /// How long --prometheus keeps serving after the run, so the last scrape sees the final counts
    #[arg(
        long = "prometheus-linger",
        value_name = "DURATION",
        default_value = "5s"
    )]
    pub prometheus_linger: String,

    /// When the result is doubtful, as NAME=VALUE,...: other-cpu (share of all cores that makes a second
    /// busy, 0.15), busy-share (of the window, 0.15), steal (0.05), client-cpu (of the load threads'
    /// cores, 0.9), lateness-p99-ms (5), swap-pages-per-s (1)
    #[arg(long = "validity-thresholds", value_name = "LIST")]
    pub validity_thresholds: Option<String>,

    /// Load clients (separate processes) sharing one schedule; --rate, -n and --populate are their total
    #[arg(
        long,
        value_name = "N",
        default_value = "1",
        allow_hyphen_values = true
    )]
    pub clients: String,

    /// This client's number, 0 to N-1: it takes the operations i with i % N == ID
    #[arg(
        long = "client-id",
        value_name = "ID",
        default_value = "0",
        allow_hyphen_values = true
    )]
    pub client_id: String,

    /// Common start of the schedule: Unix time in seconds (fractions allowed) or RFC 3339
    /// (2026-11-22T17:30:00Z), or @FILE to wait for it to be written into FILE; required with
    /// --clients > 1 (see below)
    #[arg(long = "start-at", value_name = "TIME", allow_hyphen_values = true)]
    pub start_at: Option<String>,

    /// Workload parameters as --workload.NAME=VALUE (e.g. --workload.partsize=5000)
    #[arg(value_name = "--workload.NAME=VALUE", allow_hyphen_values = true, num_args = 0.., hide = true)]
    pub workload_params: Vec<String>,
}

type Result<T> = std::result::Result<T, LoadError>;

fn invalid(message: String) -> LoadError {
    LoadError::InvalidOption(message)
}

/// A quantity parser's error (`30x`, `1.5.2M`) as a run option error, with its own words.
fn unit<T, E: std::fmt::Display>(result: std::result::Result<T, E>) -> Result<T> {
    result.map_err(|e| invalid(e.to_string()))
}

fn parse_number<T>(flag: &str, text: &str, min: T) -> Result<T>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display,
{
    let value: T = text
        .trim()
        .parse()
        .ok()
        .ok_or_else(|| invalid(format!("invalid {flag} '{text}': expected a whole number")))?;
    if value < min {
        return Err(invalid(format!(
            "invalid {flag} '{text}': must be at least {min}"
        )));
    }
    Ok(value)
}

/// Separates the workload parameters from the options: `--workload.NAME=VALUE` anywhere, and
/// nosqlbench's bare `NAME=VALUE` anywhere an option's value cannot be (`--mix a=1` keeps its
/// value).
fn split_workload_params(command: &clap::Command, argv: Vec<String>) -> (Vec<String>, Vec<String>) {
    let mut params = Vec::new();
    let mut rest: Vec<String> = Vec::new();
    let mut value_expected = false;
    let mut workload_seen = false;
    for arg in argv {
        // After the workload, a word that is no option's value is a parameter (NAME=VALUE) or
        // nosqlbench's scenario.
        let bare = !arg.starts_with('-') && !value_expected;
        if arg.starts_with("--workload.") || (bare && workload_seen) {
            params.push(arg);
            value_expected = false;
            continue;
        }
        workload_seen |= bare;
        value_expected = !arg.contains('=') && takes_value(command, &arg);
        rest.push(arg);
    }
    (params, rest)
}

/// Whether `arg` is an option of `command` whose value follows as the next argument.
fn takes_value(command: &clap::Command, arg: &str) -> bool {
    let found = if let Some(long) = arg.strip_prefix("--") {
        command.get_arguments().find(|a| a.get_long() == Some(long))
    } else if let Some(short) = arg.strip_prefix('-').filter(|s| s.chars().count() == 1) {
        let short = short.chars().next();
        command.get_arguments().find(|a| a.get_short() == short)
    } else {
        None
    };
    found.is_some_and(|a| a.get_action().takes_values())
}

fn parse_workload_params(raw: &[String]) -> Result<Vec<(String, String)>> {
    raw.iter()
        .map(|arg| {
            if !arg.starts_with('-') && arg.contains('=') {
                return bare_param(arg);
            }
            if !arg.starts_with('-') {
                // nosqlbench's `WORKLOAD SCENARIO`.
                return Ok(("scenario".to_string(), arg.clone()));
            }
            let setting = arg.strip_prefix("--workload.").ok_or_else(|| {
                invalid(format!("unexpected argument '{arg}' (workload parameters are written --workload.NAME=VALUE or NAME=VALUE)"))
            })?;
            let (name, value) = setting
                .split_once('=')
                .ok_or_else(|| invalid(format!("'{arg}' has no value: write --workload.NAME=VALUE")))?;
            Ok((name.to_string(), value.to_string()))
        })
        .collect()
}

/// nosqlbench's `NAME=VALUE`; a password is refused (credentials never on the command line).
fn bare_param(arg: &str) -> Result<(String, String)> {
    let (name, value) = arg.split_once('=').unwrap_or((arg, ""));
    if name.eq_ignore_ascii_case("password") {
        return Err(invalid(format!(
            "'{name}=' on the command line is refused: credentials never go in arguments; set CQLBENCH_USERNAME and CQLBENCH_PASSWORD or use --credentials-file"
        )));
    }
    Ok((name.to_string(), value.to_string()))
}

fn read_credentials(file: Option<&Path>) -> Result<Option<Credentials>> {
    if let Some(path) = file {
        let text = std::fs::read_to_string(path).map_err(|e| {
            invalid(format!(
                "cannot read credentials file {}: {e}",
                path.display()
            ))
        })?;
        let mut username = None;
        let mut password = None;
        for line in text.lines() {
            let line = line.trim();
            let Some((key, value)) = line.split_once('=').or_else(|| line.split_once(':')) else {
                continue;
            };
            match key.trim() {
                "username" | "user" => username = Some(value.trim().to_string()),
                "password" => password = Some(value.trim().to_string()),
                _ => {}
            }
        }
        return match (username, password) {
            (Some(username), Some(password)) => Ok(Some(Credentials { username, password })),
            _ => Err(invalid(format!(
                "credentials file {} needs 'username=...' and 'password=...' lines",
                path.display()
            ))),
        };
    }
    Credentials::from_env().map_err(invalid)
}

/// `YYYYMMDD-HHMMSS` in UTC: the time part of a result directory's default name.
pub fn timestamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    cqlbench_units::time::compact_utc(secs)
}

/// How far ahead `--start-at` may lie.
pub const MAX_START_AHEAD_S: f64 = 86_400.0;

/// `--start-at @FILE`: the file the common start will be written to. It need not exist yet (it is
/// written once every client is ready), but its directory must.
fn start_at_file(path: &str) -> Result<std::path::PathBuf> {
    if path.trim().is_empty() {
        return Err(invalid(
            "invalid --start-at '@': expected @ and the file the common start will be written to \
             (e.g. --start-at @/tmp/start)"
                .into(),
        ));
    }
    let file = std::path::PathBuf::from(path);
    if file.is_dir() {
        return Err(invalid(format!(
            "--start-at @{path}: {path} is a directory; name the file the common start will be \
             written to"
        )));
    }
    let dir = match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    if !dir.is_dir() {
        return Err(invalid(format!(
            "--start-at @{path}: the directory {} does not exist",
            dir.display()
        )));
    }
    Ok(file)
}

/// `--start-at`: Unix seconds (`1763832600`, `1763832600.25`) or an RFC 3339 time
/// (`2026-11-22T17:30:00Z`, `2026-11-22 18:30:00.5+01:00`), as seconds since the epoch.
pub fn parse_start_at(text: &str) -> Result<f64> {
    let t = text.trim();
    let err = || {
        invalid(format!(
            "invalid --start-at '{text}': expected Unix seconds (e.g. 1763832600.5) or an RFC 3339 \
             time (e.g. 2026-11-22T17:30:00Z)"
        ))
    };
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return t
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(err);
    }
    cqlbench_units::time::parse_rfc3339(t).ok_or_else(err)
}

impl RunArgs {
    /// Parses a `cqlbench run` command line after the subcommand (`WORKLOAD [OPTIONS]`), as the CLI
    /// does, `--workload.NAME=VALUE` parameters anywhere among the options. Errors are one line.
    pub fn parse_from<S: AsRef<str>>(argv: &[S]) -> Result<RunArgs> {
        let command =
            RunArgs::augment_args(clap::Command::new("cqlbench run").no_binary_name(true));
        let argv: Vec<String> = argv.iter().map(|a| a.as_ref().to_string()).collect();
        let (params, rest) = split_workload_params(&command, argv);
        let one_line = |e: clap::Error| {
            let text = e.to_string();
            invalid(
                text.lines()
                    .next()
                    .unwrap_or("invalid arguments")
                    .trim_start_matches("error: ")
                    .to_string(),
            )
        };
        let matches = command.try_get_matches_from(rest).map_err(one_line)?;
        let mut parsed = RunArgs::from_arg_matches(&matches).map_err(one_line)?;
        parsed.workload_params.extend(params);
        Ok(parsed)
    }

    /// Contact points given with `--host` (repeatable or comma-separated).
    pub fn explicit_hosts(&self) -> Vec<String> {
        // nosqlbench's hosts=A,B when no --host is given.
        let bare = self
            .workload_params
            .iter()
            .rev()
            .find_map(|p| p.strip_prefix("hosts=").or_else(|| p.strip_prefix("host=")));
        let given = match bare {
            Some(list) if self.hosts.is_empty() => vec![list.to_string()],
            _ => self.hosts.clone(),
        };
        given
            .iter()
            .flat_map(|h| h.split(','))
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .collect()
    }

    /// Turns the command line into validated run options (everything except where to connect).
    pub fn to_options(&self, hosts: Vec<String>) -> Result<RunOptions> {
        build_options(self, hosts)
    }
}

/// `-r`: a share between 0 and 1.
fn parse_read_ratio(text: &str) -> Result<f64> {
    text.trim()
        .parse()
        .ok()
        .filter(|v: &f64| (0.0..=1.0).contains(v))
        .ok_or_else(|| {
            invalid(format!(
                "invalid read ratio '{text}': must be between 0 and 1 (e.g. -r 0.2 for 20% reads)"
            ))
        })
}

/// Requests in flight per thread when `-c` is not given but a thread count is.
const DEFAULT_CONCURRENCY_PER_THREAD: usize = 50;

/// Threads and in-flight requests per thread: `-t` and `-c`, else a nosqlbench workload's
/// `threads` and `async` (requests in flight in all), else the defaults. Those are 100 in flight
/// either way: on one thread under a fixed rate (each thread wakes for its own release groups, and
/// one keeps tens of thousands of operations a second), on two unthrottled; a thread count given
/// without an in-flight limit has 50 per thread.
fn threads_and_in_flight(
    args: &RunArgs,
    hints: Option<&cqlbench_workload::RunHints>,
    o: &mut RunOptions,
) -> Result<()> {
    let hinted_threads = hints.and_then(|h| h.threads.as_deref());
    let hinted_in_flight = hints.and_then(|h| h.in_flight.as_deref());
    o.threads = match (&args.threads, hinted_threads) {
        (Some(threads), _) => parse_number("--threads", threads, 1usize)?,
        (None, Some(threads)) => parse_number("threads", threads, 1usize)?,
        (None, None) if o.rate.is_some() => 1,
        (None, None) => 2,
    };
    o.concurrency = match (&args.concurrency, hinted_in_flight) {
        (Some(concurrency), _) => parse_number("--concurrency", concurrency, 1usize)?,
        (None, Some(in_flight)) => {
            let total = parse_number("async", in_flight, 1usize)?;
            total.div_ceil(o.threads).max(1)
        }
        (None, None) if args.threads.is_none() && hinted_threads.is_none() => {
            2 * DEFAULT_CONCURRENCY_PER_THREAD / o.threads
        }
        (None, None) => DEFAULT_CONCURRENCY_PER_THREAD,
    };
    Ok(())
}

/// What is sent and how fast: stopping rule, partitions, threads, rate, populate, warm-up, tick.
fn load_options(args: &RunArgs, o: &mut RunOptions) -> Result<()> {
    o.stopping = match (&args.duration, &args.ops) {
        (_, Some(n)) => Stopping::Ops(unit(parse_count(n))?),
        (Some(d), None) => Stopping::Duration(unit(parse_duration(d))?),
        (None, None) => Stopping::Duration(Duration::from_secs(60)),
    };
    o.partitions = unit(parse_count(&args.partitions))?;
    o.rate = unit(args.rate.as_deref().map(parse_rate).transpose())?;
    if let Some(r) = &args.read_ratio {
        o.read_ratio = parse_read_ratio(r)?;
    }
    o.partition_gen = args.partition_generator.parse::<PartitionGen>()?;
    o.populate = unit(args.populate.as_deref().map(parse_count).transpose())?.unwrap_or(0);
    o.warmup =
        unit(args.warmup.as_deref().map(parse_duration).transpose())?.unwrap_or(Duration::ZERO);
    o.tick = unit(args.tick.as_deref().map(parse_duration).transpose())?;
    o.record_slow_ops = !args.no_slow_ops;
    Ok(())
}

/// A nosqlbench workload's `cycles` and `cyclerate`, for what the command line leaves unset (its
/// options win); its `threads` and `async` are read with the defaults by `threads_and_in_flight`.
fn apply_hints(
    args: &RunArgs,
    hints: &cqlbench_workload::RunHints,
    o: &mut RunOptions,
) -> Result<()> {
    let from = |name: &str, value: &str| invalid(format!("{name}={value}: not a valid value"));
    if let (None, None, Some(ops)) = (&args.duration, &args.ops, &hints.ops) {
        let count = cqlbench_workload::nb::count(ops).ok_or_else(|| from("cycles", ops))?;
        o.stopping = Stopping::Ops(count);
    }
    if let (None, Some(rate)) = (&args.rate, &hints.rate) {
        o.rate = Some(parse_rate(rate).map_err(|_| from("cyclerate", rate))?);
    }
    Ok(())
}

/// Consistency levels, keyspace and table options.
fn schema_options(args: &RunArgs, o: &mut RunOptions) -> Result<()> {
    if let Some(cl) = &args.consistency {
        o.consistency = cl.parse::<Consistency>()?;
    }
    o.serial_consistency = args.serial_consistency.parse::<Consistency>()?;
    if !matches!(
        o.serial_consistency,
        Consistency::Serial | Consistency::LocalSerial
    ) {
        return Err(invalid("--serial-cl must be SERIAL or LOCAL_SERIAL".into()));
    }
    o.replication = args
        .replication
        .as_deref()
        .map(parse_replication)
        .transpose()?;
    o.compaction = args
        .compaction
        .as_deref()
        .map(|c| parse_table_options("compaction", c))
        .transpose()?;
    o.keyspace = args.keyspace.clone().unwrap_or_else(|| {
        let named = match &o.workload {
            Workload::File(file) => file.keyspace.as_ref().map(|k| k.name.clone()),
            Workload::BuiltIn(_) => None,
        };
        named.unwrap_or_else(|| "cqlbench".into())
    });
    o.drop_keyspace = args.drop;
    Ok(())
}

/// How the client connects: connections, port, datacenter, timeout, seed, credentials, TLS.
fn connection_options(args: &RunArgs, o: &mut RunOptions) -> Result<()> {
    o.connections_per_host =
        parse_number("--connections-per-host", &args.connections_per_host, 1usize)?;
    o.port = parse_number("--port", &args.port, 1u16)?;
    o.dc = args.dc.clone();
    o.request_timeout = unit(parse_duration(&args.request_timeout))?;
    o.seed = parse_number("--seed", &args.seed, 0u64)?;
    o.credentials = read_credentials(args.credentials_file.as_deref())?;
    o.tls_ca = args.tls.clone();
    if let Some(ca) = &o.tls_ca {
        if !ca.is_file() {
            return Err(invalid(format!(
                "--tls CA file {} does not exist",
                ca.display()
            )));
        }
    }
    Ok(())
}

/// `--start-at`: ahead of now, by at most 24 h.
fn check_start_at(text: &str) -> Result<f64> {
    let at = parse_start_at(text)?;
    let now = cqlbench_units::time::unix_now();
    if at < now {
        return Err(invalid(format!(
            "--start-at {text} is {:.1} s in the past: choose a time ahead, the same for every client",
            now - at
        )));
    }
    if at > now + MAX_START_AHEAD_S {
        return Err(invalid(format!(
            "--start-at {text} is {:.1} h ahead: at most 24 h (is it in seconds, not milliseconds?)",
            (at - now) / 3600.0
        )));
    }
    Ok(at)
}

/// `--prometheus ADDR [--prometheus-public] [--prometheus-linger D]`, checked (the address is not
/// listened on yet). Shared with `cqlbench campaign`.
pub fn prometheus_options(
    addr: Option<&str>,
    public: bool,
    linger: &str,
) -> Result<Option<PrometheusOptions>> {
    let linger = unit(parse_duration(linger))?;
    let Some(addr) = addr else {
        if public {
            return Err(invalid(
                "--prometheus-public needs --prometheus ADDR (e.g. --prometheus 0.0.0.0:9464)"
                    .into(),
            ));
        }
        return Ok(None);
    };
    let addr = cqlbench_metrics::parse_listen_address(addr, public)?;
    Ok(Some(PrometheusOptions { addr, linger }))
}

/// The built-in workload named, or the workload file given, with its `--workload.NAME=VALUE`.
fn workload(args: &RunArgs) -> Result<Workload> {
    let settings = parse_workload_params(&args.workload_params)?;
    let is_file = cqlbench_workload::is_file_argument(&args.workload);
    let shipped = if is_file {
        None
    } else {
        cqlbench_workload::catalog::find(&args.workload)
    };
    if !is_file && shipped.is_none() {
        if args.mix.is_some() {
            return Err(invalid(
                "--mix applies to workload files; a built-in workload's mix is -r/--read-ratio"
                    .into(),
            ));
        }
        return Workload::new(find_workload(&args.workload)?, &settings);
    }
    let invocation = cqlbench_workload::Invocation {
        settings,
        mix: args
            .mix
            .as_deref()
            .map(cqlbench_workload::stress::parse_mix)
            .transpose()
            .map_err(invalid)?,
    };
    let file = match shipped {
        Some(w) => {
            cqlbench_workload::load_text(w.name, &format!("{}.yaml", w.name), w.text, &invocation)?
        }
        None => cqlbench_workload::load(std::path::Path::new(&args.workload), &invocation)?,
    };
    let refused = [
        (
            args.read_ratio.is_some(),
            "-r/--read-ratio",
            "its operations' weights",
        ),
        (
            args.compaction.is_some(),
            "--compaction",
            "its CREATE TABLE's WITH clause",
        ),
    ];
    if let Some((_, option, instead)) = refused.iter().find(|(given, _, _)| *given) {
        return Err(invalid(format!(
            "{option} applies to the built-in workloads; a workload file sets it in {instead}"
        )));
    }
    Ok(Workload::File(std::sync::Arc::new(file)))
}

fn build_options(args: &RunArgs, hosts: Vec<String>) -> Result<RunOptions> {
    let workload = workload(args)?;
    let out = args.out.clone().unwrap_or_else(|| {
        PathBuf::from("cqlbench-results").join(format!("{}-{}", workload.name(), timestamp()))
    });
    let mut o = RunOptions::new(workload, hosts, out);
    load_options(args, &mut o)?;
    let mut hints = None;
    if let Workload::File(file) = &o.workload {
        if args.populate.is_none() {
            o.populate = file.populate.as_ref().map_or(0, |p| p.rows);
        }
        let file = file.clone();
        apply_hints(args, &file.hints, &mut o)?;
        hints = Some(file);
    }
    threads_and_in_flight(args, hints.as_ref().map(|f| &f.hints), &mut o)?;
    schema_options(args, &mut o)?;
    connection_options(args, &mut o)?;
    o.clients = parse_number("--clients", &args.clients, 1u64)?;
    o.client_id = parse_number("--client-id", &args.client_id, 0u64)?;
    if let Some(file) = args.start_at.as_deref().and_then(|t| t.strip_prefix('@')) {
        o.start_at_file = Some(start_at_file(file)?);
    } else {
        o.start_at = args.start_at.as_deref().map(check_start_at).transpose()?;
    }
    o.p99_window = unit(parse_duration(&args.p99_window))?;
    if o.p99_window.is_zero() {
        return Err(invalid("--p99-window must be greater than zero".into()));
    }
    if let Some(list) = &args.validity_thresholds {
        o.validity =
            cqlbench_machine::parse_thresholds(list).map_err(|e| invalid(e.to_string()))?;
    }
    o.prometheus = prometheus_options(
        args.prometheus.as_deref(),
        args.prometheus_public,
        &args.prometheus_linger,
    )?;
    o.validate()?;
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_at_reads_unix_seconds_and_rfc3339() {
        assert_eq!(parse_start_at("1763832600").unwrap(), 1_763_832_600.0);
        assert_eq!(parse_start_at("1763832600.25").unwrap(), 1_763_832_600.25);
        // 2025-11-22T17:30:00Z is 1763832600 (date -d 2025-11-22T17:30:00Z +%s).
        assert_eq!(
            parse_start_at("2025-11-22T17:30:00Z").unwrap(),
            1_763_832_600.0
        );
        assert_eq!(
            parse_start_at("2025-11-22 18:30:00.5+01:00").unwrap(),
            1_763_832_600.5
        );
        assert_eq!(parse_start_at("1970-01-01T00:00:00Z").unwrap(), 0.0);
        assert_eq!(
            parse_start_at("2024-02-29T00:00:00-00:30").unwrap(),
            1_709_166_600.0
        );
        for bad in [
            "",
            "soon",
            "12:00",
            "2025-11-22T17:30:00",
            "2025-13-01T00:00:00Z",
            "2025-02-29T00:00:00Z",
            "2025-11-22T17:30:00.Z",
            "2025-11-22T17:30:00+1:00",
            "1.2.3",
        ] {
            let e = parse_start_at(bad).unwrap_err().to_string();
            assert!(e.contains("--start-at"), "{bad}: {e}");
        }
    }

    #[test]
    fn nosqlbench_parameters_come_anywhere_and_an_option_keeps_its_value() {
        let argv = [
            "--host",
            "127.0.0.1",
            "w.yaml",
            "rampup-cycles=1M",
            "--mix",
            "a=1,b=2",
            "-d",
            "10s",
            "astra",
            "rf=3",
            "--workload.partsize=50",
        ];
        let args = RunArgs::parse_from(&argv).unwrap();
        assert_eq!(args.mix.as_deref(), Some("a=1,b=2"));
        assert_eq!(args.duration.as_deref(), Some("10s"));
        let params = parse_workload_params(&args.workload_params).unwrap();
        let mut names: Vec<&str> = params.iter().map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        assert_eq!(names, ["partsize", "rampup-cycles", "rf", "scenario"]);
        let refused = parse_workload_params(&["password=secret".to_string()]).unwrap_err();
        assert!(
            refused.to_string().contains("CQLBENCH_PASSWORD"),
            "{refused}"
        );
    }

    #[test]
    fn one_thread_with_100_in_flight_by_default_under_a_rate_two_of_50_unthrottled() {
        let options = |argv: &[&str]| {
            let mut all = vec!["KeyValue"];
            all.extend_from_slice(argv);
            let o = RunArgs::parse_from(&all)
                .and_then(|a| a.to_options(vec!["127.0.0.1".into()]))
                .unwrap();
            (o.threads, o.concurrency)
        };
        assert_eq!(options(&["--rate", "1000"]), (1, 100));
        assert_eq!(options(&[]), (2, 50));
        assert_eq!(options(&["--rate", "1000", "-t", "4"]), (4, 50));
        assert_eq!(options(&["--rate", "1000", "-c", "10"]), (1, 10));
        assert_eq!(options(&["-t", "3", "-c", "7"]), (3, 7));
        // A nosqlbench workload's cyclerate is a rate too; its threads and async win.
        let hinted = |hints: cqlbench_workload::RunHints| {
            let args = RunArgs::parse_from(&["w.yaml"]).unwrap();
            let mut o = RunOptions::new(
                workload(&RunArgs::parse_from(&["KeyValue"]).unwrap()).unwrap(),
                vec![],
                "out".into(),
            );
            load_options(&args, &mut o).unwrap();
            apply_hints(&args, &hints, &mut o).unwrap();
            threads_and_in_flight(&args, Some(&hints), &mut o).unwrap();
            (o.threads, o.concurrency)
        };
        let rate = |threads: Option<&str>, in_flight: Option<&str>| cqlbench_workload::RunHints {
            rate: Some("500".into()),
            threads: threads.map(Into::into),
            in_flight: in_flight.map(Into::into),
            ..Default::default()
        };
        assert_eq!(hinted(rate(None, None)), (1, 100));
        assert_eq!(hinted(rate(Some("4"), None)), (4, 50));
        assert_eq!(hinted(rate(Some("4"), Some("40"))), (4, 10));
        assert_eq!(hinted(Default::default()), (2, 50));
    }

    #[test]
    fn clients_options_are_parsed_and_refused_in_one_line() {
        let at = format!("{:.3}", cqlbench_units::time::unix_now() + 60.0);
        let args = |extra: &[&str]| {
            let mut argv = vec!["KeyValue", "--rate", "1500"];
            argv.extend_from_slice(extra);
            RunArgs::parse_from(&argv).and_then(|a| a.to_options(vec!["127.0.0.1".into()]))
        };
        let o = args(&["--clients", "3", "--client-id", "2", "--start-at", &at]).unwrap();
        assert_eq!((o.clients, o.client_id), (3, 2));
        assert_eq!(o.client_rate(), Some(500.0));
        // A file the start will be written to: it need not exist yet.
        let o = args(&[
            "--clients",
            "3",
            "--start-at",
            "@/tmp/cqlbench-start-not-yet",
        ])
        .unwrap();
        assert_eq!(
            o.start_at_file.as_deref(),
            Some(std::path::Path::new("/tmp/cqlbench-start-not-yet"))
        );
        assert_eq!(o.start_at, None);
        for (extra, expected) in [
            (vec!["--clients", "3"], "needs --start-at"),
            (vec!["--clients", "0"], "--clients"),
            (vec!["--clients", "x"], "--clients"),
            (
                vec!["--clients", "2", "--client-id", "2", "--start-at", &at],
                "--client-id 2",
            ),
            (vec!["--client-id", "-1"], "--client-id"),
            (vec!["--start-at", "1000"], "in the past"),
            (vec!["--start-at", "@"], "expected @ and the file"),
            (vec!["--start-at", "@/"], "is a directory"),
            (
                vec!["--start-at", "@/no/such/dir/start"],
                "/no/such/dir does not exist",
            ),
            (vec!["--start-at", "99999999999"], "at most 24 h"),
        ] {
            let e = args(&extra).unwrap_err().to_string();
            assert!(e.contains(expected), "{extra:?}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }
}
