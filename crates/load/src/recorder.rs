//! Recording of completed operations into per-operation-type histograms and error counters.

use std::time::Instant;

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::workload::OpType;

/// Histograms hold microseconds with 3 significant digits. They start small and grow on demand, so an
/// idle operation type costs a few kilobytes.
pub fn new_histogram() -> Histogram<u64> {
    let mut h =
        Histogram::new_with_bounds(1, 16_384, 3).expect("static histogram bounds are valid");
    h.auto(true);
    h
}

/// How an operation failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    Timeout,
    Unavailable,
    Overloaded,
    Other,
}

/// Errors by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ErrorCounts {
    pub timeout: u64,
    pub unavailable: u64,
    pub overloaded: u64,
    pub other: u64,
}

impl ErrorCounts {
    pub fn total(&self) -> u64 {
        self.timeout + self.unavailable + self.overloaded + self.other
    }

    pub fn add(&mut self, kind: ErrorKind) {
        match kind {
            ErrorKind::Timeout => self.timeout += 1,
            ErrorKind::Unavailable => self.unavailable += 1,
            ErrorKind::Overloaded => self.overloaded += 1,
            ErrorKind::Other => self.other += 1,
        }
    }

    pub fn merge(&mut self, other: &ErrorCounts) {
        self.timeout += other.timeout;
        self.unavailable += other.unavailable;
        self.overloaded += other.overloaded;
        self.other += other.other;
    }
}

/// One finished operation.
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    pub op: OpType,
    pub intended: Instant,
    pub sent: Instant,
    pub done: Instant,
    pub error: Option<ErrorKind>,
    /// The operation had to wait for a free in-flight slot (so its send lateness is not the client's).
    pub slot_limited: bool,
}

/// Measurements of one operation type.
#[derive(Debug, Clone)]
pub struct OpStats {
    /// Completion minus intended start (what the user feels).
    pub latency: Histogram<u64>,
    /// Completion minus actual send (what the server took, plus the client's own delays after sending).
    pub service: Histogram<u64>,
    pub count: u64,
    pub errors: ErrorCounts,
}

impl Default for OpStats {
    fn default() -> Self {
        OpStats {
            latency: new_histogram(),
            service: new_histogram(),
            count: 0,
            errors: ErrorCounts::default(),
        }
    }
}

impl OpStats {
    pub fn merge_from(&mut self, other: &OpStats) {
        // Both histograms auto-resize, so adding cannot fail on range.
        let _ = self.latency.add(&other.latency);
        let _ = self.service.add(&other.service);
        self.count += other.count;
        self.errors.merge(&other.errors);
    }

    pub fn reset(&mut self) {
        self.latency.reset();
        self.service.reset();
        self.count = 0;
        self.errors = ErrorCounts::default();
    }
}

fn micros(from: Instant, to: Instant) -> u64 {
    to.saturating_duration_since(from).as_micros().max(1) as u64
}

/// What one scheduler thread records between two reporter ticks; the reporter drains it each second.
#[derive(Debug)]
pub struct IntervalRecorder {
    pub measured: [OpStats; 2],
    pub warmup: [OpStats; 2],
    /// Operations that found all of this thread's in-flight slots busy when they were due.
    pub concurrency_limited: u64,
    /// Completion time of the latest measured operation.
    pub last_done: Option<Instant>,
    /// Send lateness (actual send - intended start) of operations that had a free slot: the client's own
    /// scheduling lateness, like jHiccup's, measured on every operation instead of a probe.
    pub lateness: Histogram<u64>,
}

impl Default for IntervalRecorder {
    fn default() -> Self {
        IntervalRecorder {
            measured: Default::default(),
            warmup: Default::default(),
            concurrency_limited: 0,
            last_done: None,
            lateness: new_histogram(),
        }
    }
}

impl IntervalRecorder {
    /// Records one completion; operations intended before `measure_start` belong to the warm-up.
    pub fn record(&mut self, completion: &Completion, measure_start: Instant) {
        let set = if completion.intended < measure_start {
            &mut self.warmup
        } else {
            &mut self.measured
        };
        if completion.intended >= measure_start {
            self.last_done = self.last_done.max(Some(completion.done));
        }
        let stats = &mut set[completion.op.index()];
        // Auto-resizing histograms accept any value; a timed-out operation is recorded like any other.
        let _ = stats
            .latency
            .record(micros(completion.intended, completion.done));
        let _ = stats
            .service
            .record(micros(completion.sent, completion.done));
        stats.count += 1;
        if let Some(kind) = completion.error {
            stats.errors.add(kind);
        }
        if !completion.slot_limited {
            let _ = self
                .lateness
                .record(micros(completion.intended, completion.sent));
        }
    }

    /// Moves everything recorded so far into `into` and starts afresh.
    pub fn drain_into(&mut self, into: &mut IntervalRecorder) {
        for i in 0..2 {
            into.measured[i].merge_from(&self.measured[i]);
            self.measured[i].reset();
            into.warmup[i].merge_from(&self.warmup[i]);
            self.warmup[i].reset();
        }
        into.concurrency_limited += self.concurrency_limited;
        self.concurrency_limited = 0;
        into.last_done = into.last_done.max(self.last_done.take());
        let _ = into.lateness.add(&self.lateness);
        self.lateness.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn latency_counts_from_the_intended_start_and_service_from_the_send() {
        let t0 = Instant::now();
        let mut rec = IntervalRecorder::default();
        let c = Completion {
            op: OpType::Write,
            intended: t0,
            sent: t0 + Duration::from_millis(900),
            done: t0 + Duration::from_millis(1000),
            error: Some(ErrorKind::Timeout),
            slot_limited: false,
        };
        rec.record(&c, t0);
        let w = &rec.measured[OpType::Write.index()];
        assert!((w.latency.max() as i64 - 1_000_000).abs() < 1000);
        assert!((w.service.max() as i64 - 100_000).abs() < 100);
        // Sent 900 ms late with a free slot: that lateness is the client's own.
        assert!((rec.lateness.max() as i64 - 900_000).abs() < 1000);
        assert_eq!(w.errors.timeout, 1);
        assert_eq!(rec.measured[OpType::Read.index()].count, 0);
        // An operation intended before the measured phase belongs to the warm-up.
        rec.record(&c, t0 + Duration::from_millis(1));
        assert_eq!(rec.warmup[OpType::Write.index()].count, 1);
        let mut total = IntervalRecorder::default();
        rec.drain_into(&mut total);
        assert_eq!(total.measured[1].count, 1);
        assert_eq!(rec.measured[1].count, 0);
    }
}
