//! The figures a scrape sees, and their text exposition (format version 0.0.4).

use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard};

use hdrhistogram::Histogram;

use crate::buckets::BucketCounts;

/// Where the run is; exposed as `cqlbench_phase{phase="…"} 1` (0 for the others).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RunPhase {
    /// Connecting, setting up the schema, or between a campaign's cells.
    #[default]
    Starting,
    Populate,
    Warmup,
    Measured,
    Done,
}

impl RunPhase {
    const ALL: [RunPhase; 5] = [
        RunPhase::Starting,
        RunPhase::Populate,
        RunPhase::Warmup,
        RunPhase::Measured,
        RunPhase::Done,
    ];

    fn name(self) -> &'static str {
        match self {
            RunPhase::Starting => "starting",
            RunPhase::Populate => "populate",
            RunPhase::Warmup => "warmup",
            RunPhase::Measured => "measured",
            RunPhase::Done => "done",
        }
    }
}

/// One operation name's share of a reporting interval.
#[derive(Debug)]
pub struct LiveOp<'a> {
    pub ok: u64,
    /// Failed operations by error kind (each kind becomes an `outcome`).
    pub errors: Vec<(&'static str, u64)>,
    /// Operations the client released (sent, or failed at once for want of a connection).
    pub released: u64,
    /// Successful operations' latency from the intended start (µs), as in the `.hlog`.
    pub latency: &'a Histogram<u64>,
    /// Successful operations' service time from the actual send (µs).
    pub service: &'a Histogram<u64>,
}

/// What the reporter drained at one tick: operations in the order given to [`LiveMetrics::begin_run`].
#[derive(Debug)]
pub struct LiveInterval<'a> {
    pub ops: Vec<LiveOp<'a>>,
    pub seconds: f64,
    /// The client's send lateness (µs) in the interval.
    pub lateness: &'a Histogram<u64>,
    pub phase: RunPhase,
}

/// The error kind of operations that came due but were never sent: not in flight, not achieved.
const UNSENT: &str = "unsent";

#[derive(Debug, Default)]
struct OpSeries {
    name: String,
    ok: u64,
    errors: Vec<(&'static str, u64)>,
    released: u64,
    latency: BucketCounts,
    service: BucketCounts,
}

impl OpSeries {
    fn completed_after_release(&self) -> u64 {
        self.ok
            + self
                .errors
                .iter()
                .filter(|(kind, _)| *kind != UNSENT)
                .map(|(_, n)| n)
                .sum::<u64>()
    }
}

#[derive(Debug, Default)]
struct State {
    labels: Vec<(String, String)>,
    phase: RunPhase,
    ops: Vec<OpSeries>,
    target_rate: Option<f64>,
    achieved_rate: Option<f64>,
    /// Last interval's lateness quantiles (µs): p50, p99, max.
    lateness_last: Option<[u64; 3]>,
    lateness_sum_us: f64,
    lateness_count: u64,
    campaign_cells: Option<(usize, usize)>,
}

/// The figures shared between the reporter (writer, once a second) and the exporter thread (reader,
/// once a scrape).
#[derive(Debug, Clone, Default)]
pub struct LiveMetrics(Arc<Mutex<State>>);

impl LiveMetrics {
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere while holding the lock leaves figures that are still worth serving.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Labels every series carries (`client`, and a campaign's `config` and `rate`).
    pub fn set_labels(&self, labels: &[(&str, String)]) {
        self.state().labels = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
    }

    /// A run starts: its operation names (in the order of [`LiveInterval::ops`]) with every error
    /// kind at 0, so that each series exists from the first scrape; the previous run's are gone.
    pub fn begin_run(&self, ops: &[&str], error_kinds: &[&'static str], target_rate: Option<f64>) {
        let mut state = self.state();
        state.ops = ops
            .iter()
            .map(|name| OpSeries {
                name: name.to_string(),
                errors: error_kinds.iter().map(|k| (*k, 0)).collect(),
                ..OpSeries::default()
            })
            .collect();
        state.target_rate = target_rate;
        state.achieved_rate = None;
        state.lateness_last = None;
        state.lateness_sum_us = 0.0;
        state.lateness_count = 0;
        state.phase = RunPhase::Starting;
    }

    pub fn set_phase(&self, phase: RunPhase) {
        self.state().phase = phase;
    }

    /// A campaign's progress: cells finished (run now or earlier) of all.
    pub fn set_campaign_progress(&self, done: usize, total: usize) {
        self.state().campaign_cells = Some((done, total));
    }

    /// Adds one reporting interval.
    pub fn record_interval(&self, interval: &LiveInterval) {
        let mut state = self.state();
        let mut completed = 0;
        for (series, op) in state.ops.iter_mut().zip(&interval.ops) {
            let before = series.completed_after_release();
            series.ok += op.ok;
            for (kind, n) in &op.errors {
                match series.errors.iter_mut().find(|(k, _)| k == kind) {
                    Some((_, total)) => *total += n,
                    None => series.errors.push((kind, *n)),
                }
            }
            series.released += op.released;
            series.latency.add(op.latency);
            series.service.add(op.service);
            completed += series.completed_after_release() - before;
        }
        if interval.seconds > 0.0 {
            state.achieved_rate = Some(completed as f64 / interval.seconds);
        }
        let lateness = interval.lateness;
        if !lateness.is_empty() {
            state.lateness_last = Some([
                lateness.value_at_quantile(0.5),
                lateness.value_at_quantile(0.99),
                lateness.max(),
            ]);
            state.lateness_sum_us += lateness.mean() * lateness.len() as f64;
            state.lateness_count += lateness.len();
        }
        state.phase = interval.phase;
    }

    /// The exposition text of the figures as they stand.
    pub fn render(&self) -> String {
        let state = self.state();
        let mut out = Exposition {
            text: String::with_capacity(64 * 1024),
            labels: label_text(&state.labels),
        };
        out.operations(&state.ops);
        out.histograms(&state.ops);
        out.rates_and_phase(&state);
        out.lateness(&state);
        if let Some((done, total)) = state.campaign_cells {
            out.family(
                "cqlbench_campaign_cells_done",
                "gauge",
                "Campaign cells finished (run now or found finished).",
            );
            out.sample("cqlbench_campaign_cells_done", "", done as f64);
            out.family(
                "cqlbench_campaign_cells_total",
                "gauge",
                "Cells in the campaign's plan.",
            );
            out.sample("cqlbench_campaign_cells_total", "", total as f64);
        }
        out.text
    }
}

/// `name="value"` pairs, escaped as the format wants (backslash, double quote, newline).
fn label_text(labels: &[(String, String)]) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect::<Vec<_>>()
        .join(",")
}

fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

struct Exposition {
    text: String,
    /// The labels every series carries, already formatted.
    labels: String,
}

impl Exposition {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.text, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }

    /// One sample; `labels` are the series' own (formatted), joined to the common ones.
    fn sample(&mut self, name: &str, labels: &str, value: f64) {
        let joined = match (self.labels.is_empty(), labels.is_empty()) {
            (true, true) => String::new(),
            (false, true) => format!("{{{}}}", self.labels),
            (true, false) => format!("{{{labels}}}"),
            (false, false) => format!("{{{},{labels}}}", self.labels),
        };
        let _ = writeln!(self.text, "{name}{joined} {}", number(value));
    }

    fn operations(&mut self, ops: &[OpSeries]) {
        const NAME: &str = "cqlbench_operations_total";
        self.family(
            NAME,
            "counter",
            "Finished operations by name and outcome (ok, or the error kind).",
        );
        for op in ops {
            let name = escape(&op.name);
            self.sample(NAME, &format!("op=\"{name}\",outcome=\"ok\""), op.ok as f64);
            for (kind, n) in &op.errors {
                self.sample(
                    NAME,
                    &format!("op=\"{name}\",outcome=\"{kind}\""),
                    *n as f64,
                );
            }
        }
    }

    fn histograms(&mut self, ops: &[OpSeries]) {
        const LATENCY: &str = "cqlbench_latency_seconds";
        const SERVICE: &str = "cqlbench_service_time_seconds";
        self.family(LATENCY, "histogram", "Successful operations' latency from their intended start (coordinated-omission corrected; the .hlog's values: measured phase only).");
        for op in ops {
            self.histogram(LATENCY, &escape(&op.name), &op.latency);
        }
        self.family(
            SERVICE,
            "histogram",
            "Successful operations' service time from the actual send (measured phase only).",
        );
        for op in ops {
            self.histogram(SERVICE, &escape(&op.name), &op.service);
        }
    }

    fn histogram(&mut self, family: &str, op: &str, counts: &BucketCounts) {
        let bucket = format!("{family}_bucket");
        for (le, total) in counts.cumulative() {
            let le = le.map_or("+Inf".to_string(), number);
            self.sample(&bucket, &format!("op=\"{op}\",le=\"{le}\""), total as f64);
        }
        let op_label = format!("op=\"{op}\"");
        self.sample(&format!("{family}_sum"), &op_label, counts.sum_us / 1e6);
        self.sample(&format!("{family}_count"), &op_label, counts.count as f64);
    }

    fn rates_and_phase(&mut self, state: &State) {
        if let Some(target) = state.target_rate {
            self.family(
                "cqlbench_target_rate_ops_per_second",
                "gauge",
                "The rate this client is to send (absent when unthrottled).",
            );
            self.sample("cqlbench_target_rate_ops_per_second", "", target);
        }
        if let Some(achieved) = state.achieved_rate {
            self.family(
                "cqlbench_achieved_rate_ops_per_second",
                "gauge",
                "Operations answered per second in the last reporting interval.",
            );
            self.sample("cqlbench_achieved_rate_ops_per_second", "", achieved);
        }
        let released: u64 = state.ops.iter().map(|op| op.released).sum();
        let completed: u64 = state
            .ops
            .iter()
            .map(OpSeries::completed_after_release)
            .sum();
        self.family(
            "cqlbench_in_flight_requests",
            "gauge",
            "Requests sent and not yet answered, as of the last reporting tick.",
        );
        self.sample(
            "cqlbench_in_flight_requests",
            "",
            released.saturating_sub(completed) as f64,
        );
        self.family(
            "cqlbench_phase",
            "gauge",
            "1 for the phase the run is in, 0 for the others.",
        );
        for phase in RunPhase::ALL {
            let value = if phase == state.phase { 1.0 } else { 0.0 };
            self.sample(
                "cqlbench_phase",
                &format!("phase=\"{}\"", phase.name()),
                value,
            );
        }
    }

    fn lateness(&mut self, state: &State) {
        const NAME: &str = "cqlbench_client_lateness_seconds";
        self.family(NAME, "summary", "The client's own send lateness (actual send minus intended start): quantiles of the last reporting interval; sum and count of the whole run.");
        if let Some(quantiles) = state.lateness_last {
            for (q, us) in ["0.5", "0.99", "1"].iter().zip(quantiles) {
                self.sample(NAME, &format!("quantile=\"{q}\""), us as f64 / 1e6);
            }
        }
        self.sample(&format!("{NAME}_sum"), "", state.lateness_sum_us / 1e6);
        self.sample(&format!("{NAME}_count"), "", state.lateness_count as f64);
    }
}

/// A sample value as Go's strconv would print it closely enough for every parser: integers without a
/// fraction, others in the shortest form that reads back exactly.
fn number(value: f64) -> String {
    if value.is_finite() && value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buckets::tests::histogram_of;

    fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no line {prefix} in\n{text}"))
    }

    #[test]
    fn intervals_add_up_and_every_series_carries_the_common_labels() {
        let live = LiveMetrics::new();
        live.set_labels(&[("client", "0".into()), ("config", "G1 \"big\"".into())]);
        live.begin_run(&["write", "read"], &["timeout", "unsent"], Some(100.0));
        let latency = histogram_of(&[1000, 2000]);
        let service = histogram_of(&[500, 600]);
        let empty = histogram_of(&[]);
        for _ in 0..2 {
            live.record_interval(&LiveInterval {
                ops: vec![
                    LiveOp {
                        ok: 2,
                        errors: vec![("timeout", 1), ("unsent", 3)],
                        released: 4,
                        latency: &latency,
                        service: &service,
                    },
                    LiveOp {
                        ok: 0,
                        errors: vec![],
                        released: 0,
                        latency: &empty,
                        service: &empty,
                    },
                ],
                seconds: 0.5,
                lateness: &latency,
                phase: RunPhase::Measured,
            });
        }
        let text = live.render();
        let common = "client=\"0\",config=\"G1 \\\"big\\\"\"";
        assert_eq!(
            line(
                &text,
                &format!("cqlbench_operations_total{{{common},op=\"write\",outcome=\"ok\"}}")
            )
            .rsplit(' ')
            .next(),
            Some("4")
        );
        assert!(text.contains(&format!(
            "cqlbench_operations_total{{{common},op=\"write\",outcome=\"unsent\"}} 6"
        )));
        assert!(text.contains(&format!(
            "cqlbench_operations_total{{{common},op=\"read\",outcome=\"timeout\"}} 0"
        )));
        assert!(text.contains(&format!(
            "cqlbench_latency_seconds_count{{{common},op=\"write\"}} 4"
        )));
        assert!(text.contains(&format!(
            "cqlbench_latency_seconds_bucket{{{common},op=\"write\",le=\"+Inf\"}} 4"
        )));
        // 2 ok + 1 timeout per 0.5 s; the unsent ones were never in flight.
        assert!(text.contains(&format!(
            "cqlbench_achieved_rate_ops_per_second{{{common}}} 6"
        )));
        assert!(text.contains(&format!("cqlbench_in_flight_requests{{{common}}} 2")));
        assert!(text.contains(&format!("cqlbench_phase{{{common},phase=\"measured\"}} 1")));
        assert!(text.contains(&format!("cqlbench_phase{{{common},phase=\"warmup\"}} 0")));
        assert!(text.contains(&format!(
            "cqlbench_target_rate_ops_per_second{{{common}}} 100"
        )));
        assert!(!text.contains("campaign"));
    }

    #[test]
    fn a_new_run_replaces_the_last_runs_series() {
        let live = LiveMetrics::new();
        live.begin_run(&["write"], &[], None);
        live.begin_run(&["insert"], &[], None);
        live.set_campaign_progress(3, 8);
        let text = live.render();
        assert!(!text.contains("op=\"write\""));
        assert!(text.contains("cqlbench_operations_total{op=\"insert\",outcome=\"ok\"} 0"));
        assert!(text.contains("cqlbench_campaign_cells_done 3"));
        assert!(text.contains("cqlbench_campaign_cells_total 8"));
        assert!(
            !text.contains("target_rate"),
            "an unthrottled run has no target"
        );
    }
}
