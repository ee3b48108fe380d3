//! Recording of completed operations into per-operation-type histograms and error counters.

use std::time::Instant;

use hdrhistogram::Histogram;

use crate::workload::OpId;

pub use cqlbench_results::hlog::{new_histogram, reset_histogram};
pub use cqlbench_results::{ErrorCounts, ErrorKind};

/// One finished operation.
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    pub op: OpId,
    pub intended: Instant,
    pub sent: Instant,
    /// When the answer arrived or the failure became known (a timeout at its deadline).
    pub done: Instant,
    pub error: Option<ErrorKind>,
    /// The operation had to wait for a free in-flight slot (so its send lateness is not the client's).
    pub slot_limited: bool,
    /// Index of the node whose connection carried it ([`NO_NODE`] when it was never sent).
    pub node: u16,
    /// A conditional (LWT) write whose condition did not hold: still a success.
    pub not_applied: bool,
    /// Rows its answers returned (every page's).
    pub rows: u32,
    /// Pages it read (0 for an operation that does not read in pages).
    pub pages: u32,
}

/// [`Completion::node`] of an operation that no connection carried.
pub const NO_NODE: u16 = u16::MAX;

/// A successful measured operation slower than the recorder's threshold: kept with its times so
/// that the tail can be lined up with the servers' pauses afterwards.
#[derive(Debug, Clone, Copy)]
pub struct SlowOp {
    pub op: OpId,
    pub intended: Instant,
    pub done: Instant,
    pub node: u16,
}

/// Measurements of one operation type.
#[derive(Debug, Clone)]
pub struct OpStats {
    /// Successful operations: completion minus intended start (what the user feels).
    pub latency: Histogram<u64>,
    /// Successful operations: completion minus actual send (what the server took, plus the client's
    /// own delays after sending).
    pub service: Histogram<u64>,
    /// Failed operations (unsent ones included): failure known minus intended start.
    pub failed_latency: Histogram<u64>,
    /// Successful operations.
    pub count: u64,
    pub errors: ErrorCounts,
    /// Operations released by the client (sent, or failed at once for want of a connection). A
    /// thread's recorder holds its releases in [`IntervalRecorder::releases`] instead, with their
    /// moments, until a drain counts them here.
    pub sent: u64,
    /// Successful conditional writes whose condition did not hold (also in `count`).
    pub not_applied: u64,
    /// Rows returned to successful operations.
    pub rows: u64,
    /// Pages read by successful operations that read in pages.
    pub pages: u64,
}

impl Default for OpStats {
    fn default() -> Self {
        OpStats {
            latency: new_histogram(),
            service: new_histogram(),
            failed_latency: new_histogram(),
            count: 0,
            errors: ErrorCounts::default(),
            sent: 0,
            not_applied: 0,
            rows: 0,
            pages: 0,
        }
    }
}

impl OpStats {
    pub fn merge_from(&mut self, other: &OpStats) {
        // All histograms auto-resize, so adding cannot fail on range.
        let _ = self.latency.add(&other.latency);
        let _ = self.service.add(&other.service);
        let _ = self.failed_latency.add(&other.failed_latency);
        self.count += other.count;
        self.errors.merge(&other.errors);
        self.sent += other.sent;
        self.not_applied += other.not_applied;
        self.rows += other.rows;
        self.pages += other.pages;
    }

    pub fn reset(&mut self) {
        reset_histogram(&mut self.latency);
        reset_histogram(&mut self.service);
        reset_histogram(&mut self.failed_latency);
        self.count = 0;
        self.errors = ErrorCounts::default();
        self.sent = 0;
        self.not_applied = 0;
        self.rows = 0;
        self.pages = 0;
    }
}

fn micros(from: Instant, to: Instant) -> u64 {
    to.saturating_duration_since(from).as_micros().max(1) as u64
}

/// What one scheduler thread records between two reporter ticks; the reporter drains it each second.
#[derive(Debug)]
pub struct IntervalRecorder {
    /// By [`OpId::index`].
    pub measured: Vec<OpStats>,
    pub warmup: Vec<OpStats>,
    /// Operations that found all of this thread's in-flight slots busy when they were due.
    pub concurrency_limited: u64,
    /// Operations re-sent after the server answered that it did not know the prepared statement.
    pub reprepared: u64,
    /// Completion time of the latest measured operation (failed or not).
    pub last_done: Option<Instant>,
    /// Send lateness (actual send - intended start) of operations that had a free slot: the client's own
    /// scheduling lateness, like jHiccup's, measured on every operation instead of a probe.
    pub lateness: Histogram<u64>,
    /// Time between one release of operations and the next on the same thread (rate mode): how the
    /// sends are really spaced (`--tick`).
    pub send_gaps: Histogram<u64>,
    /// How late each of those releases went out after its first operation was due: when no
    /// operation waited for an in-flight slot, a send gap differs from the spacing the tick sets by
    /// at most the lateness of the releases around it.
    pub release_lateness: Histogram<u64>,
    /// Successful measured operations at or above this latency (µs, per operation type) are kept in
    /// `slow`; `u64::MAX` keeps none. The engine lowers it below the running p99 at every tick.
    pub slow_threshold_us: Vec<u64>,
    pub slow: Vec<SlowOp>,
    /// Releases not yet drained, in the order (so the time order) the thread made them: a drain
    /// counts those made before its cut and leaves the later ones for the next, so that a second's
    /// row holds the sends of that second however late the reporter drains it.
    pub releases: Vec<Release>,
}

/// Operations of one type that a thread released at one moment.
#[derive(Debug, Clone, Copy)]
pub struct Release {
    pub at: Instant,
    /// Intended in the measured phase (else in the warm-up).
    pub measured: bool,
    /// [`OpId::index`].
    pub op: usize,
    pub count: u64,
}

impl IntervalRecorder {
    /// A recorder for a workload of `ops` operations.
    pub fn new(ops: usize) -> Self {
        IntervalRecorder {
            measured: vec![OpStats::default(); ops],
            warmup: vec![OpStats::default(); ops],
            concurrency_limited: 0,
            reprepared: 0,
            last_done: None,
            lateness: new_histogram(),
            send_gaps: new_histogram(),
            release_lateness: new_histogram(),
            slow_threshold_us: vec![u64::MAX; ops],
            slow: Vec::new(),
            releases: Vec::new(),
        }
    }

    /// The stats an operation intended at `intended` belongs to.
    pub fn stats_for(
        &mut self,
        op: OpId,
        intended: Instant,
        measure_start: Instant,
    ) -> &mut OpStats {
        let set = if intended < measure_start {
            &mut self.warmup
        } else {
            &mut self.measured
        };
        &mut set[op.index()]
    }

    /// Records one completion; operations intended before `measure_start` belong to the warm-up.
    pub fn record(&mut self, completion: &Completion, measure_start: Instant) {
        if completion.intended >= measure_start {
            self.last_done = self.last_done.max(Some(completion.done));
        }
        let stats = self.stats_for(completion.op, completion.intended, measure_start);
        // Auto-resizing histograms accept any value.
        match completion.error {
            None => {
                let latency = micros(completion.intended, completion.done);
                let _ = stats.latency.record(latency);
                let _ = stats
                    .service
                    .record(micros(completion.sent, completion.done));
                stats.count += 1;
                stats.not_applied += u64::from(completion.not_applied);
                stats.rows += u64::from(completion.rows);
                stats.pages += u64::from(completion.pages);
                let op = completion.op.index();
                if latency >= self.slow_threshold_us[op] && completion.intended >= measure_start {
                    self.slow.push(SlowOp {
                        op: completion.op,
                        intended: completion.intended,
                        done: completion.done,
                        node: completion.node,
                    });
                }
            }
            Some(kind) => {
                let _ = stats
                    .failed_latency
                    .record(micros(completion.intended, completion.done));
                stats.errors.add(kind);
            }
        }
        let was_sent = completion.error != Some(ErrorKind::Unsent);
        if was_sent && !completion.slot_limited {
            let _ = self
                .lateness
                .record(micros(completion.intended, completion.sent));
        }
    }

    /// Counts `count` operations of type `op` released at `at`; a thread's releases come in time order.
    pub fn record_release(&mut self, at: Instant, measured: bool, op: usize, count: u64) {
        self.releases.push(Release {
            at,
            measured,
            op,
            count,
        });
    }

    /// Under a thread's lock, a moment's work: what the thread recorded goes to `spare` (a drained
    /// recorder) and the thread goes on with the spare, keeping its slow thresholds and the releases
    /// it made at or after `cut` (the end of the row being drained), which belong to the next row.
    pub fn hand_over(&mut self, spare: &mut IntervalRecorder, cut: Instant) {
        std::mem::swap(self, spare);
        std::mem::swap(&mut self.slow_threshold_us, &mut spare.slow_threshold_us);
        let before_cut = spare.releases.partition_point(|r| r.at < cut);
        self.releases.extend(spare.releases.drain(before_cut..));
    }

    /// Moves everything recorded so far into `into` and starts afresh (keeping its memory).
    pub fn drain_into(&mut self, into: &mut IntervalRecorder) {
        for r in self.releases.drain(..) {
            let set = if r.measured {
                &mut into.measured
            } else {
                &mut into.warmup
            };
            set[r.op].sent += r.count;
        }
        for i in 0..self.measured.len() {
            into.measured[i].merge_from(&self.measured[i]);
            self.measured[i].reset();
            into.warmup[i].merge_from(&self.warmup[i]);
            self.warmup[i].reset();
        }
        into.concurrency_limited += std::mem::take(&mut self.concurrency_limited);
        into.reprepared += std::mem::take(&mut self.reprepared);
        into.last_done = into.last_done.max(self.last_done.take());
        let _ = into.lateness.add(&self.lateness);
        reset_histogram(&mut self.lateness);
        let _ = into.send_gaps.add(&self.send_gaps);
        reset_histogram(&mut self.send_gaps);
        let _ = into.release_lateness.add(&self.release_lateness);
        reset_histogram(&mut self.release_lateness);
        into.slow.append(&mut self.slow);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn latency_counts_from_the_intended_start_and_service_from_the_send() {
        let t0 = Instant::now();
        let mut rec = IntervalRecorder::new(2);
        let c = Completion {
            op: OpId::WRITE,
            intended: t0,
            sent: t0 + Duration::from_millis(900),
            done: t0 + Duration::from_millis(1000),
            error: Some(ErrorKind::Timeout),
            slot_limited: false,
            node: 0,
            not_applied: false,
            rows: 0,
            pages: 0,
        };
        rec.record(&c, t0);
        let w = &rec.measured[OpId::WRITE.index()];
        // A failed operation is not a successful latency: it has its own histogram.
        assert_eq!((w.count, w.latency.len(), w.service.len()), (0, 0, 0));
        assert!((w.failed_latency.max() as i64 - 1_000_000).abs() < 1000);
        // Sent 900 ms late with a free slot: that lateness is the client's own.
        assert!((rec.lateness.max() as i64 - 900_000).abs() < 1000);
        assert_eq!(w.errors.timeout, 1);
        let ok = Completion { error: None, ..c };
        rec.record(&ok, t0);
        let w = &rec.measured[OpId::WRITE.index()];
        assert_eq!((w.count, w.errors.total()), (1, 1));
        assert!((w.latency.max() as i64 - 1_000_000).abs() < 1000);
        assert!((w.service.max() as i64 - 100_000).abs() < 100);
        assert_eq!(rec.measured[OpId::READ.index()].count, 0);
        // An operation intended before the measured phase belongs to the warm-up.
        rec.record(&c, t0 + Duration::from_millis(1));
        assert_eq!(rec.warmup[OpId::WRITE.index()].errors.timeout, 1);
        let mut total = IntervalRecorder::new(2);
        rec.drain_into(&mut total);
        assert_eq!(total.measured[1].count, 1);
        assert_eq!(rec.measured[1].count, 0);
    }

    #[test]
    fn a_hand_over_takes_the_releases_before_its_cut_and_keeps_the_later_ones() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let (read, write) = (OpId::READ.index(), OpId::WRITE.index());
        let mut rec = IntervalRecorder::new(2);
        rec.record_release(t0, false, write, 5);
        rec.record_release(t0 + ms(999), true, write, 3);
        rec.record_release(t0 + ms(999), true, read, 2);
        // Released at the cut itself and after it: recorded before the reporter took its lock.
        rec.record_release(t0 + ms(1000), true, write, 7);
        rec.record_release(t0 + ms(1005), true, read, 11);
        rec.slow_threshold_us = vec![40, 50];
        rec.record(&completion(OpId::WRITE, t0 + ms(998)), t0);
        let sent = |r: &IntervalRecorder| {
            [&r.warmup, &r.measured].map(|set| [set[read].sent, set[write].sent])
        };
        // The reporter's drain at the cut: the hand-over under the lock, the counting after it.
        let mut spare = IntervalRecorder::new(2);
        let mut first = IntervalRecorder::new(2);
        rec.hand_over(&mut spare, t0 + ms(1000));
        spare.drain_into(&mut first);
        assert_eq!(sent(&first), [[0, 5], [2, 3]]);
        assert_eq!(first.measured[write].count, 1);
        assert_eq!(
            sent(&rec),
            [[0, 0], [0, 0]],
            "a thread's recorder counts only at drains"
        );
        assert_eq!(rec.measured[write].count, 0);
        assert_eq!(
            rec.slow_threshold_us,
            [40, 50],
            "the thread keeps its thresholds"
        );
        assert_eq!(rec.releases.len(), 2);
        let mut second = IntervalRecorder::new(2);
        rec.hand_over(&mut spare, t0 + ms(2000));
        spare.drain_into(&mut second);
        assert_eq!(sent(&second), [[0, 0], [11, 7]]);
        assert!(rec.releases.is_empty() && spare.releases.is_empty());
    }

    /// A successful operation intended, sent and done at `at`.
    pub(crate) fn completion(op: OpId, at: Instant) -> Completion {
        Completion {
            op,
            intended: at,
            sent: at,
            done: at,
            error: None,
            slot_limited: false,
            node: 0,
            not_applied: false,
            rows: 0,
            pages: 0,
        }
    }

    #[test]
    fn unsent_operations_are_failures_without_client_lateness() {
        let t0 = Instant::now();
        let mut rec = IntervalRecorder::new(2);
        let gave_up = t0 + Duration::from_secs(12);
        rec.record(
            &Completion {
                op: OpId::READ,
                intended: t0,
                sent: gave_up,
                done: gave_up,
                error: Some(ErrorKind::Unsent),
                slot_limited: false,
                node: NO_NODE,
                not_applied: false,
                rows: 0,
                pages: 0,
            },
            t0,
        );
        let r = &rec.measured[OpId::READ.index()];
        assert_eq!(r.errors.unsent, 1);
        assert!(r.failed_latency.max() >= 12_000_000 - 12_000);
        assert!(rec.lateness.is_empty());
        assert_eq!(r.errors.describe(), "1 failed: unsent 1");
    }
}
