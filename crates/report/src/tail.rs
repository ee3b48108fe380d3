//! The client's tail lined up against the servers' stops: of the operations slower than a cell's p99
//! (and p99.9), how many overlapped a GC pause on a node, and how much of their time the pauses
//! account for.
//!
//! The client side is `slow-ops.csv` (intended start and completion of every successful operation
//! near and above the p99, in seconds from `measured_start_unix_s`); the server side is each node's
//! `node*/timeline.csv` (every pause and safepoint with wall-clock start and end, from the GC log's
//! `time` decorator). Both are wall-clock times of the same machine.

use std::path::Path;

use cqlbench_results::{node_dirs, read_slow_ops, timeline, NodeFigures, SlowOp, Summary};

/// One quantile's line of the tail-vs-GC table.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TailVsGc {
    /// `p99` or `p99.9`.
    pub quantile: &'static str,
    /// Successful operations slower than their operation type's quantile, as recorded.
    pub slow_ops: u64,
    /// How many the histograms say are slower than the quantile (the recording's completeness).
    pub expected: u64,
    /// Slow operations whose time (intended start → completion) overlapped a GC pause (the pause
    /// itself, or the safepoint of a GC operation) on any node: the replicas that served an
    /// operation are not known to the client.
    pub overlapping_gc: u64,
    /// … overlapped any stop: a GC pause or a safepoint of any kind.
    pub overlapping_stop: u64,
    /// Sum of the slow operations' latencies, ms.
    pub tail_ms: f64,
    /// The part of that time spent inside GC pauses, ms.
    pub tail_in_gc_ms: f64,
    /// Share of the cell's measured time inside GC pauses on any node: what chance alone would
    /// give an operation of zero length.
    pub gc_time_share: f64,
}

impl TailVsGc {
    pub fn overlapping_gc_share(&self) -> Option<f64> {
        (self.slow_ops > 0).then(|| self.overlapping_gc as f64 / self.slow_ops as f64)
    }

    pub fn tail_in_gc_share(&self) -> Option<f64> {
        (self.tail_ms > 0.0).then(|| self.tail_in_gc_ms / self.tail_ms)
    }
}

/// A stop on one node, in seconds from the cell's measured start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stop {
    pub start: f64,
    pub end: f64,
    pub gc: bool,
}

/// One node's stops, by its address.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeStops {
    pub address: String,
    pub stops: Vec<Stop>,
}

/// One percentile of a set.
type PercentileOf = fn(&cqlbench_results::Percentiles) -> Option<f64>;

/// The table for one cell directory, or `None` when the cell has no slow-ops.csv or no node timeline.
pub fn tail_vs_gc(cell_dir: &Path, summary: &Summary) -> Option<Vec<TailVsGc>> {
    let start = Some(summary.measured_start_unix_s).filter(|s| *s > 0.0)?;
    let slow = read_slow_ops(cell_dir).ok()?;
    let nodes = node_stops(cell_dir, start);
    if nodes.is_empty() {
        return None;
    }
    let quantiles: [(&str, f64, PercentileOf); 2] =
        [("p99", 0.99, |p| p.p99), ("p99.9", 0.999, |p| p.p999)];
    Some(
        quantiles
            .into_iter()
            .map(|(label, q, percentile)| {
                let bound = |op: &str| summary.of_op(op, |o| percentile(&o.latency_ms));
                let expected = expected_above(summary, q);
                line(label, &slow, &nodes, bound, expected, summary.duration_s)
            })
            .collect(),
    )
}

/// Operations above the quantile by the definition of the quantile: `(1 - q) × count`, per type.
fn expected_above(summary: &Summary, q: f64) -> u64 {
    summary
        .ops
        .values()
        .map(|o| ((1.0 - q) * o.count as f64).floor() as u64)
        .sum()
}

fn line(
    quantile: &'static str,
    slow: &[SlowOp],
    nodes: &[NodeStops],
    bound: impl Fn(&str) -> Option<f64>,
    expected: u64,
    duration: f64,
) -> TailVsGc {
    let mut result = TailVsGc {
        quantile,
        slow_ops: 0,
        expected,
        overlapping_gc: 0,
        overlapping_stop: 0,
        tail_ms: 0.0,
        tail_in_gc_ms: 0.0,
        gc_time_share: gc_time_share(nodes, duration),
    };
    // The client knows the coordinator of an operation, not the replicas that served it: any node's
    // stop can explain it.
    let gc = merged(nodes.iter().flat_map(|n| n.stops.iter().filter(|s| s.gc)));
    let all = merged(nodes.iter().flat_map(|n| n.stops.iter()));
    for op in slow {
        let Some(limit) = bound(&op.op) else { continue };
        let latency_ms = (op.done_s - op.intended_s) * 1000.0;
        if latency_ms <= limit {
            continue;
        }
        result.slow_ops += 1;
        result.tail_ms += latency_ms;
        let in_gc = overlap(&gc, op.intended_s, op.done_s);
        if in_gc > 0.0 {
            result.overlapping_gc += 1;
        }
        if overlap(&all, op.intended_s, op.done_s) > 0.0 {
            result.overlapping_stop += 1;
        }
        result.tail_in_gc_ms += in_gc * 1000.0;
    }
    result
}

/// Share of `[0, duration]` inside a GC pause on any node.
fn gc_time_share(nodes: &[NodeStops], duration: f64) -> f64 {
    if duration <= 0.0 {
        return 0.0;
    }
    let gc = merged(nodes.iter().flat_map(|n| n.stops.iter().filter(|s| s.gc)));
    overlap(&gc, 0.0, duration) / duration
}

/// Union of intervals, sorted.
fn merged<'a>(stops: impl Iterator<Item = &'a Stop>) -> Vec<(f64, f64)> {
    let mut spans: Vec<(f64, f64)> = stops.map(|s| (s.start, s.end)).collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match out.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => out.push((start, end)),
        }
    }
    out
}

/// Seconds of `[from, to]` covered by the sorted, disjoint spans.
fn overlap(spans: &[(f64, f64)], from: f64, to: f64) -> f64 {
    let first = spans.partition_point(|s| s.1 <= from);
    spans[first..]
        .iter()
        .take_while(|s| s.0 < to)
        .map(|s| (s.1.min(to) - s.0.max(from)).max(0.0))
        .sum()
}

/// Every node's stops from `node*/timeline.csv`, in seconds from `start_unix_s`.
pub fn node_stops(cell_dir: &Path, start_unix_s: f64) -> Vec<NodeStops> {
    node_dirs(cell_dir, timeline::TIMELINE_FILE)
        .iter()
        .filter_map(|dir| {
            let stops = timeline::read(dir).ok()?;
            let address = NodeFigures::read(dir).map(|f| f.ip()).unwrap_or_default();
            Some(NodeStops {
                address,
                stops: relative(&stops, start_unix_s),
            })
        })
        .collect()
}

/// Stops placed on the cell's time axis: seconds from `start_unix_s`.
fn relative(stops: &[timeline::TimelineStop], start_unix_s: f64) -> Vec<Stop> {
    stops
        .iter()
        .map(|s| Stop {
            start: s.start_unix_s - start_unix_s,
            end: s.end_unix_s - start_unix_s,
            gc: s.gc,
        })
        .collect()
}

/// `start,end,kind` rows with ISO 8601 times; kinds `pause:<name>` and `safepoint:<operation>`.
/// Rows with relative times (a log without wall-clock decorators) cannot be placed and are skipped.
pub fn parse_timeline(text: &str, start_unix_s: f64) -> Vec<Stop> {
    relative(&timeline::parse(text), start_unix_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(intended: f64, done: f64) -> SlowOp {
        SlowOp {
            op: "write".into(),
            intended_s: intended,
            done_s: done,
            latency_ms: (done - intended) * 1000.0,
            node: String::new(),
        }
    }

    fn node(stops: &[(f64, f64, bool)]) -> NodeStops {
        NodeStops {
            address: "127.0.0.1".into(),
            stops: stops
                .iter()
                .map(|&(start, end, gc)| Stop { start, end, gc })
                .collect(),
        }
    }

    #[test]
    fn slow_operations_are_attributed_by_overlap_with_gc_pauses() {
        // A 100 ms GC pause at 5.0 s and a 50 ms non-GC safepoint at 8.0 s, in a 10 s cell.
        let nodes = [node(&[(5.0, 5.1, true), (8.0, 8.05, false)])];
        let slow = [
            op(4.95, 5.1),  // 150 ms, 100 ms of it in the pause
            op(5.05, 5.12), // 70 ms, 50 ms in the pause
            op(7.99, 8.06), // 70 ms across the safepoint only
            op(2.0, 2.08),  // 80 ms, no stop
            op(1.0, 1.002), // 2 ms: under the bound
        ];
        let t = line("p99", &slow, &nodes, |_| Some(10.0), 4, 10.0);
        assert_eq!(t.slow_ops, 4);
        assert_eq!(t.overlapping_gc, 2);
        assert_eq!(t.overlapping_stop, 3);
        assert!((t.tail_ms - 370.0).abs() < 1e-6, "{}", t.tail_ms);
        assert!(
            (t.tail_in_gc_ms - 150.0).abs() < 1e-6,
            "{}",
            t.tail_in_gc_ms
        );
        assert!((t.gc_time_share - 0.01).abs() < 1e-9);
        assert_eq!(t.overlapping_gc_share(), Some(0.5));
    }

    #[test]
    fn overlapping_stops_are_counted_once() {
        let spans = merged(
            [
                Stop {
                    start: 1.0,
                    end: 2.0,
                    gc: true,
                },
                Stop {
                    start: 1.5,
                    end: 2.5,
                    gc: true,
                },
                Stop {
                    start: 3.0,
                    end: 3.5,
                    gc: true,
                },
            ]
            .iter(),
        );
        assert_eq!(spans, vec![(1.0, 2.5), (3.0, 3.5)]);
        assert!((overlap(&spans, 0.0, 10.0) - 2.0).abs() < 1e-9);
        assert!((overlap(&spans, 2.0, 3.25) - 0.75).abs() < 1e-9);
        assert_eq!(overlap(&spans, 2.6, 2.9), 0.0);
    }

    #[test]
    fn timeline_rows_become_stops_relative_to_the_measured_start() {
        let text = "start,end,kind\n\
            2026-11-22T10:00:01.000000Z,2026-11-22T10:00:01.250000Z,pause:Full\n\
            2026-11-22T10:00:02.000000Z,2026-11-22T10:00:02.010000Z,safepoint:G1CollectFull\n\
            2026-11-22T10:00:03.000000Z,2026-11-22T10:00:03.001000Z,safepoint:RevokeBias\n\
            1.000,1.010,pause:Young\n";
        let start = 1_795_341_600.0; // 2026-11-22T10:00:00Z
        let stops = parse_timeline(text, start);
        assert_eq!(stops.len(), 3);
        assert!((stops[0].start - 1.0).abs() < 1e-6 && (stops[0].end - 1.25).abs() < 1e-6);
        assert_eq!(
            stops.iter().map(|s| s.gc).collect::<Vec<_>>(),
            [true, true, false]
        );
    }

    #[test]
    fn addresses_lose_their_port() {
        let address_ip = |address: &str| {
            NodeFigures {
                address: address.into(),
                ..NodeFigures::default()
            }
            .ip()
        };
        assert_eq!(address_ip("127.0.0.1:9042"), "127.0.0.1");
        assert_eq!(address_ip("127.0.0.1"), "127.0.0.1");
    }
}
