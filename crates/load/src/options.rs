//! The validated settings of one run.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use cqlbench_metrics::LiveMetrics;
use cqlbench_results::ValidityThresholds;

use crate::cqlmap::{CqlMap, TableOptions};
use crate::workload::{PartitionGen, Workload};
use crate::LoadError;

/// The longest interval between a thread's release groups when `--tick` is not given: at 1000
/// ops/s on one thread, groups of 4. Measured on the 2-core VM (`bench/load/README.md`), each
/// group costs the client thread about 48 µs (its timer wake-up, the write, the response
/// wake-ups) and each operation about 4 µs more, so at 1000 ops/s 2 ms groups cost about 28 µs
/// per operation and 4 ms groups about 16 µs.
pub const LONGEST_AUTO_TICK: Duration = Duration::from_millis(4);

/// When the measured phase ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stopping {
    /// After this long (`-d`).
    Duration(Duration),
    /// After this many operations (`-n`).
    Ops(u64),
}

/// Consistency levels accepted by `--cl` / `--serial-cl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consistency {
    Any,
    One,
    Two,
    Three,
    Quorum,
    All,
    LocalQuorum,
    EachQuorum,
    LocalOne,
    Serial,
    LocalSerial,
}

impl std::str::FromStr for Consistency {
    type Err = LoadError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        use Consistency::*;
        Ok(match s.to_ascii_uppercase().replace('-', "_").as_str() {
            "ANY" => Any,
            "ONE" => One,
            "TWO" => Two,
            "THREE" => Three,
            "QUORUM" => Quorum,
            "ALL" => All,
            "LOCAL_QUORUM" => LocalQuorum,
            "EACH_QUORUM" => EachQuorum,
            "LOCAL_ONE" => LocalOne,
            "SERIAL" => Serial,
            "LOCAL_SERIAL" => LocalSerial,
            _ => {
                return Err(LoadError::InvalidOption(format!(
                    "unknown consistency level '{s}' (use e.g. LOCAL_ONE, LOCAL_QUORUM, QUORUM, ONE, ALL)"
                )))
            }
        })
    }
}

/// Username and password for PasswordAuthenticator (the CQL client's own type).
pub use cqlbench_cql::Credentials;

/// Everything `cqlbench run` needs, already parsed. Build it with [`RunOptions::new`] and adjust fields.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub workload: Workload,
    pub stopping: Stopping,
    pub partitions: u64,
    /// Requests in flight per thread.
    pub concurrency: usize,
    pub threads: usize,
    pub read_ratio: f64,
    /// Operations per second; `None` = unthrottled (as fast as the in-flight limit allows).
    pub rate: Option<f64>,
    pub partition_gen: PartitionGen,
    pub populate: u64,
    pub warmup: Duration,
    pub consistency: Consistency,
    pub serial_consistency: Consistency,
    pub replication: Option<CqlMap>,
    pub compaction: Option<TableOptions>,
    pub keyspace: String,
    /// Drop the keyspace before the run (fresh tables).
    pub drop_keyspace: bool,
    pub connections_per_host: usize,
    pub hosts: Vec<String>,
    pub port: u16,
    pub dc: Option<String>,
    pub request_timeout: Duration,
    pub out_dir: PathBuf,
    pub seed: u64,
    pub credentials: Option<Credentials>,
    pub tls_ca: Option<PathBuf>,
    /// Length of the windows whose p99s give `avg_p99_ms` / `max_p99_ms`.
    pub p99_window: Duration,
    /// With a rate, each thread releases its operations in groups at most this often; zero releases
    /// every operation at its own time (one timer wake-up per operation); `None` chooses it
    /// ([`RunOptions::group_interval`]).
    pub tick: Option<Duration>,
    /// Write slow-ops.csv (successful operations near and above the p99, with their times).
    pub record_slow_ops: bool,
    /// Load clients (separate processes) that share the schedule (`--clients`); `rate`, `stopping`
    /// (`-n`) and `populate` are of all clients together.
    pub clients: u64,
    /// This client's number, `0..clients` (`--client-id`): it takes the operation indexes `i` with
    /// `i % clients == client_id`.
    pub client_id: u64,
    /// The common start of the schedule, seconds since the Unix epoch (`--start-at`): operation `i`
    /// of the schedule (warm-up included) is intended at `start_at + i / rate`. Required with more
    /// than one client.
    pub start_at: Option<f64>,
    /// `--start-at @FILE`: the common start is written into this file once every client is ready;
    /// the client waits for it after connecting and populating (one line: Unix seconds or RFC 3339).
    pub start_at_file: Option<PathBuf>,
    /// `--prometheus`: where to serve the live figures, checked but not yet listening (whoever runs
    /// the load starts the exporter, so that a campaign keeps one across its cells).
    pub prometheus: Option<PrometheusOptions>,
    /// The live figures the reporter adds each interval to, when an exporter serves them.
    pub live: Option<LiveMetrics>,
    /// When the machine's conditions make the result doubtful (`--validity-thresholds`).
    pub validity: ValidityThresholds,
}

/// `--prometheus ADDR` with `--prometheus-public` and `--prometheus-linger`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrometheusOptions {
    pub addr: SocketAddr,
    /// How long the exporter keeps serving after the run, so that the last scrape sees the final counts.
    pub linger: Duration,
}

impl RunOptions {
    /// Defaults modelled on tlp-stress, for the given workload and hosts.
    pub fn new(workload: Workload, hosts: Vec<String>, out_dir: PathBuf) -> Self {
        let (consistency, read_ratio) = match workload.built_in() {
            Some(b) => (
                b.info
                    .default_consistency
                    .parse()
                    .unwrap_or(Consistency::LocalOne),
                b.info.default_read_ratio,
            ),
            // A workload file's mix and levels are its own; LOCAL_ONE where it names none.
            None => (Consistency::LocalOne, 0.0),
        };
        RunOptions {
            read_ratio,
            workload,
            stopping: Stopping::Duration(Duration::from_secs(60)),
            partitions: 1_000_000,
            concurrency: 50,
            threads: 2,
            rate: None,
            partition_gen: PartitionGen::Random,
            populate: 0,
            warmup: Duration::ZERO,
            consistency,
            serial_consistency: Consistency::LocalSerial,
            replication: None,
            compaction: None,
            keyspace: "cqlbench".into(),
            drop_keyspace: false,
            connections_per_host: 2,
            hosts,
            port: 9042,
            dc: None,
            request_timeout: Duration::from_secs(12),
            out_dir,
            seed: 0,
            credentials: None,
            tls_ca: None,
            p99_window: Duration::from_secs(10),
            tick: None,
            record_slow_ops: true,
            clients: 1,
            client_id: 0,
            start_at: None,
            start_at_file: None,
            prometheus: None,
            live: None,
            validity: ValidityThresholds::default(),
        }
    }

    /// This client's share of the rate (`rate / clients`).
    pub fn client_rate(&self) -> Option<f64> {
        self.rate.map(|rate| rate / self.clients.max(1) as f64)
    }

    /// `--clients`, `--client-id` and `--start-at` together.
    fn validate_clients(&self) -> Result<(), LoadError> {
        let bad = |m: String| Err(LoadError::InvalidOption(m));
        if self.clients == 0 {
            return bad("--clients must be at least 1".into());
        }
        if self.client_id >= self.clients {
            return bad(format!(
                "invalid --client-id {}: must be below --clients {} (ids are 0-based: 0 to {})",
                self.client_id,
                self.clients,
                self.clients - 1
            ));
        }
        if self.clients > 1 && self.start_at.is_none() && self.start_at_file.is_none() {
            return bad(format!(
                "--clients {} needs --start-at: separate client processes share one schedule only \
                 from a common start (e.g. --start-at $(( $(date +%s) + 30 )) given to every client, \
                 or --start-at @FILE and the time written into FILE once all are ready)",
                self.clients
            ));
        }
        if self.clients > 1 && self.drop_keyspace {
            return bad(
                "--drop cannot be used with --clients > 1: every client would drop the others' \
                 tables; drop the keyspace once before starting the clients"
                    .into(),
            );
        }
        if let Some(at) = self.start_at {
            if !at.is_finite() || at <= 0.0 {
                return bad(format!("invalid --start-at {at}: not a time"));
            }
        }
        Ok(())
    }

    /// Rejects settings that cannot make a meaningful run, with one line saying which and why.
    pub fn validate(&self) -> Result<(), LoadError> {
        let bad = |m: String| Err(LoadError::InvalidOption(m));
        if !(0.0..=1.0).contains(&self.read_ratio) || self.read_ratio.is_nan() {
            return bad(format!(
                "invalid read ratio {}: must be between 0 and 1 (e.g. -r 0.2 for 20% reads)",
                self.read_ratio
            ));
        }
        if let Some(rate) = self.rate {
            if !(rate > 0.0 && rate.is_finite()) {
                return bad(format!("invalid rate {rate}: must be greater than zero"));
            }
        }
        if self.concurrency == 0 || self.threads == 0 || self.connections_per_host == 0 {
            return bad(
                "--concurrency, --threads and --connections-per-host must be at least 1".into(),
            );
        }
        if self.partitions == 0 {
            return bad("--partitions must be at least 1".into());
        }
        match self.stopping {
            Stopping::Duration(d) if d.is_zero() => {
                return bad("--duration must be greater than zero".into())
            }
            Stopping::Ops(0) => return bad("--ops must be at least 1".into()),
            _ => {}
        }
        if self.hosts.is_empty() {
            return bad("no host to connect to".into());
        }
        if self.keyspace.is_empty()
            || !self
                .keyspace
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
            || self.keyspace.len() > 48
        {
            return bad(format!(
                "invalid keyspace name '{}': use letters, digits and underscores (at most 48)",
                self.keyspace
            ));
        }
        if self.request_timeout.is_zero() {
            return bad("--request-timeout must be greater than zero".into());
        }
        self.validate_clients()?;
        if let Some(tick) = self.tick.filter(|t| *t > Duration::from_secs(1)) {
            return bad(format!(
                "--tick {tick:?} is too coarse: at most 1s (0 releases every operation at its own time)"
            ));
        }
        Ok(())
    }

    /// With a rate: how many of a thread's consecutive operations share one release time, so that
    /// groups are released at most every [`RunOptions::group_interval`] (1 when operations are
    /// further apart than that).
    pub fn release_group(&self) -> u64 {
        let Some(interval) = self.thread_interval() else {
            return 1;
        };
        ((self.group_interval().as_secs_f64() / interval + 1e-9).floor() as u64).max(1)
    }

    /// How often at most a thread releases a group: `--tick`, or else [`LONGEST_AUTO_TICK`],
    /// shortened so that a group takes at most a quarter of the thread's in-flight slots. Each
    /// release costs the client a timer wake-up, tens of µs of CPU on a VM, which a group shares;
    /// a group that filled the slots would make its own operations wait for one another.
    pub fn group_interval(&self) -> Duration {
        if let Some(tick) = self.tick {
            return tick;
        }
        let quarter_of_slots = self
            .thread_interval()
            .map_or(f64::INFINITY, |i| i * self.concurrency as f64 / 4.0);
        LONGEST_AUTO_TICK.min(Duration::from_secs_f64(quarter_of_slots.min(1.0)))
    }

    /// With a rate: seconds between one thread's consecutive operations (every thread of every
    /// client is one lane of the global schedule).
    fn thread_interval(&self) -> Option<f64> {
        let rate = self.rate?;
        Some((self.threads as u64 * self.clients.max(1)) as f64 / rate)
    }

    /// Requests allowed in flight at once over all threads.
    pub fn max_in_flight(&self) -> usize {
        self.concurrency * self.threads
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::find_workload;

    fn options(rate: Option<f64>, threads: usize, tick: Duration) -> RunOptions {
        let mut o = auto_tick(rate, threads, 50);
        o.tick = Some(tick);
        o
    }

    fn auto_tick(rate: Option<f64>, threads: usize, concurrency: usize) -> RunOptions {
        let workload = Workload::new(find_workload("KeyValue").unwrap(), &[]).unwrap();
        let mut o = RunOptions::new(workload, vec!["127.0.0.1".into()], "out".into());
        o.rate = rate;
        o.threads = threads;
        o.concurrency = concurrency;
        o
    }

    #[test]
    fn release_groups_keep_ticks_at_most_the_tick_apart() {
        let ms = Duration::from_millis;
        // 3000 ops/s on one thread: 333 µs apart, so 6 per 2 ms tick.
        assert_eq!(options(Some(3000.0), 1, ms(2)).release_group(), 6);
        // Over 8 threads each thread's operations are 2.67 ms apart: released one by one.
        assert_eq!(options(Some(3000.0), 8, ms(2)).release_group(), 1);
        // 25k ops/s on 8 threads: 320 µs apart per thread, 6 fit in 2 ms (6 x 320 = 1.92 ms).
        assert_eq!(options(Some(25_000.0), 8, ms(2)).release_group(), 6);
        // Tick 0, or no rate: every operation on its own.
        assert_eq!(options(Some(3000.0), 1, Duration::ZERO).release_group(), 1);
        assert_eq!(options(None, 1, ms(2)).release_group(), 1);
    }

    #[test]
    fn the_chosen_tick_is_4ms_unless_a_group_would_take_over_a_quarter_of_the_slots() {
        let ms = |o: RunOptions| o.group_interval().as_secs_f64() * 1000.0;
        // 1000 ops/s on one thread with 100 slots: 4 ms, groups of 4.
        assert_eq!(ms(auto_tick(Some(1000.0), 1, 100)), 4.0);
        assert_eq!(auto_tick(Some(1000.0), 1, 100).release_group(), 4);
        // 10000 ops/s: a quarter of 100 slots falls due in 2.5 ms, groups of 25.
        assert!((ms(auto_tick(Some(10_000.0), 1, 100)) - 2.5).abs() < 1e-9);
        assert_eq!(auto_tick(Some(10_000.0), 1, 100).release_group(), 25);
        // The same rate over 4 threads: each thread's share is 2500 ops/s, 4 ms, groups of 10.
        assert_eq!(auto_tick(Some(10_000.0), 4, 100).release_group(), 10);
        // Few slots: 4 of them at 1000 ops/s leave one per group, released one by one.
        assert_eq!(auto_tick(Some(1000.0), 1, 4).release_group(), 1);
        // --tick wins, 0 included; without a rate there are no groups.
        assert_eq!(
            options(Some(1000.0), 1, Duration::from_millis(2)).release_group(),
            2
        );
        assert_eq!(options(Some(1000.0), 1, Duration::ZERO).release_group(), 1);
        assert_eq!(auto_tick(None, 1, 100).release_group(), 1);
    }

    #[test]
    fn client_settings_are_checked() {
        let mut o = options(Some(1500.0), 1, Duration::from_millis(2));
        o.clients = 3;
        o.client_id = 3;
        o.start_at = Some(2e9);
        let e = o.validate().unwrap_err().to_string();
        assert!(e.contains("--client-id 3") && e.contains("0 to 2"), "{e}");
        o.client_id = 2;
        assert!(o.validate().is_ok());
        o.start_at = None;
        let e = o.validate().unwrap_err().to_string();
        assert!(e.contains("needs --start-at"), "{e}");
        o.clients = 0;
        o.client_id = 0;
        assert!(o.validate().unwrap_err().to_string().contains("--clients"));
        // 1500 ops/s over 3 clients of one thread: each thread's operations 2 ms apart, one per tick.
        o.clients = 3;
        o.start_at = Some(2e9);
        assert_eq!(o.release_group(), 1);
        assert_eq!(o.client_rate(), Some(500.0));
    }

    #[test]
    fn a_tick_over_a_second_is_refused() {
        let o = options(Some(100.0), 1, Duration::from_secs(2));
        assert!(o.validate().unwrap_err().to_string().contains("--tick"));
        assert!(options(Some(100.0), 1, Duration::from_secs(1))
            .validate()
            .is_ok());
    }
}
