//! Streaming analysis: every accumulator here is bounded, so memory does not grow with the log.

use std::collections::BTreeMap;
use std::io::Write;

use hdrhistogram::Histogram;

use crate::parse::{
    continue_collection, is_jdk8_young_kind, is_remark_kind, jdk8_young_kind, parse_line_lazily,
    CollectionProgress, Event, Format, HeapChange, Line, Stamp, StampAt, REMARK_WITH_SCAVENGE,
};
use crate::report::{
    ConcurrentReport, HeapReport, JvmReport, KindReport, PauseReport, Report, SafepointReport,
    TimeSampledReport,
};
use cqlbench_units::time::format_iso8601;

/// Histograms hold nanoseconds from 1 ns to one hour at three significant digits (≤ 0.1 % error).
const HISTOGRAM_MAX_NS: u64 = 3_600_000_000_000;
/// Distinct pause kinds / safepoint operations kept by name; more are pooled under `other`.
const MAX_NAMES: usize = 200;
/// Concurrent intervals kept open for merging with late, overlapping ones before they are settled.
const MAX_OPEN_INTERVALS: usize = 4096;
const NANOS_PER_MINUTE: i64 = 60_000_000_000;
/// Uptime going back by more than this starts a new JVM run (several logs of one node, appended).
const RESTART_TOLERANCE_NS: i64 = 1_000_000_000;
/// Unified-logging stamps are printed to the millisecond: two intervals read off them may seem to
/// poke out of each other by this much.
const STAMP_RESOLUTION_NS: i64 = 1_000_000;
const MIB: f64 = 1024.0 * 1024.0;

fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HISTOGRAM_MAX_NS, 3).expect("static histogram bounds are valid")
}

fn record(histogram: &mut Histogram<u64>, nanos: i64) {
    let value = nanos.clamp(1, HISTOGRAM_MAX_NS as i64) as u64;
    histogram.saturating_record(value);
}

/// Count, total and maximum of a set of durations.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    count: u64,
    total_ns: i64,
    max_ns: i64,
}

impl Tally {
    fn add(&mut self, nanos: i64) {
        self.count += 1;
        self.total_ns = self.total_ns.saturating_add(nanos);
        self.max_ns = self.max_ns.max(nanos);
    }

    fn report(&self) -> KindReport {
        KindReport {
            count: self.count,
            total_ms: ms(self.total_ns),
            max_ms: ms(self.max_ns),
        }
    }
}

fn ms(nanos: i64) -> f64 {
    nanos as f64 / 1e6
}

/// A tally per name with a bounded number of names.
#[derive(Debug, Default)]
struct NamedTallies(BTreeMap<String, Tally>);

impl NamedTallies {
    fn add(&mut self, name: &str, nanos: i64) {
        if let Some(tally) = self.0.get_mut(name) {
            tally.add(nanos);
            return;
        }
        let key = if self.0.len() < MAX_NAMES {
            name.to_owned()
        } else {
            "other".to_owned()
        };
        self.0.entry(key).or_default().add(nanos);
    }

    fn report(&self) -> BTreeMap<String, KindReport> {
        self.0
            .iter()
            .map(|(name, tally)| (name.clone(), tally.report()))
            .collect()
    }
}

/// Durations of non-overlapping stopped intervals: their tally, a histogram, and per-name tallies.
struct Durations {
    tally: Tally,
    histogram: Histogram<u64>,
    by_name: NamedTallies,
}

impl Durations {
    fn new() -> Self {
        Self {
            tally: Tally::default(),
            histogram: new_histogram(),
            by_name: NamedTallies::default(),
        }
    }

    fn add(&mut self, name: &str, nanos: i64) {
        self.tally.add(nanos);
        record(&mut self.histogram, nanos);
        self.by_name.add(name, nanos);
    }

    fn quantile_ms(&self, quantile: f64) -> f64 {
        if self.tally.count == 0 {
            return 0.0;
        }
        // The middle of the value's bucket (≤ 0.05 % off), never above the exact maximum.
        let value = self
            .histogram
            .median_equivalent(self.histogram.value_at_quantile(quantile));
        ms((value as i64).min(self.tally.max_ns))
    }
}

/// Union of concurrent intervals (phases nest and ZGC's generations overlap), settled into one-minute
/// buckets once no later interval can overlap them.
struct ConcurrentUnion {
    open: Vec<(i64, i64)>,
    settled_ns: i64,
    frontier: i64,
    minute_origin: Option<i64>,
    current_minute: i64,
    current_minute_ns: i64,
    max_minute_ns: i64,
}

impl ConcurrentUnion {
    fn new() -> Self {
        Self {
            open: Vec::new(),
            settled_ns: 0,
            frontier: i64::MIN,
            minute_origin: None,
            current_minute: 0,
            current_minute_ns: 0,
            max_minute_ns: 0,
        }
    }

    fn add(&mut self, start: i64, end: i64, origin: i64) {
        self.minute_origin.get_or_insert(origin);
        let start = start.max(self.frontier);
        if end <= start {
            return;
        }
        // Insert keeping `open` sorted and disjoint.
        let first_overlap = self.open.partition_point(|&(_, e)| e < start);
        let mut merged = (start, end);
        let mut last = first_overlap;
        while last < self.open.len() && self.open[last].0 <= merged.1 {
            merged.0 = merged.0.min(self.open[last].0);
            merged.1 = merged.1.max(self.open[last].1);
            last += 1;
        }
        self.open.splice(first_overlap..last, [merged]);
        if self.open.len() > MAX_OPEN_INTERVALS {
            let settled: Vec<(i64, i64)> = self.open.drain(..MAX_OPEN_INTERVALS / 2).collect();
            for (start, end) in settled {
                self.settle(start, end);
            }
        }
    }

    fn settle(&mut self, start: i64, end: i64) {
        self.settled_ns = self.settled_ns.saturating_add(end - start);
        self.frontier = self.frontier.max(end);
        let origin = self.minute_origin.unwrap_or(start);
        let mut cursor = start;
        while cursor < end {
            let minute = cursor.saturating_sub(origin).div_euclid(NANOS_PER_MINUTE);
            if minute != self.current_minute {
                self.max_minute_ns = self.max_minute_ns.max(self.current_minute_ns);
                self.current_minute = minute;
                self.current_minute_ns = 0;
            }
            let minute_end = origin.saturating_add((minute + 1).saturating_mul(NANOS_PER_MINUTE));
            let piece_end = end.min(minute_end);
            self.current_minute_ns += piece_end - cursor;
            cursor = piece_end;
        }
    }

    /// Total concurrent time and the highest share of a minute. The last minute is usually cut
    /// short by the end of the log: its share is taken over the part covered (but never over less
    /// than a minute when the log is longer than one), so a short tail cannot claim 100 %.
    fn finish(&mut self, log_end: i64, span_ns: i64) -> (i64, f64) {
        for (start, end) in std::mem::take(&mut self.open) {
            self.settle(start, end);
        }
        let minute = NANOS_PER_MINUTE as f64;
        let mut max_share = self.max_minute_ns as f64 / minute;
        if let Some(origin) = self.minute_origin {
            let bucket_start =
                origin.saturating_add(self.current_minute.saturating_mul(NANOS_PER_MINUTE));
            let covered = log_end
                .saturating_sub(bucket_start)
                .clamp(1, NANOS_PER_MINUTE)
                .max(span_ns.min(NANOS_PER_MINUTE)) as f64;
            max_share = max_share.max(self.current_minute_ns as f64 / covered);
        }
        (self.settled_ns, max_share.min(1.0))
    }
}

/// A pause as read, before it is counted.
struct PauseRecord {
    kind: String,
    duration_ns: i64,
    heap: Option<HeapChange>,
    stamp_at: StampAt,
    time: Option<i64>,
    epoch: Option<i64>,
    gc_id: Option<u64>,
}

impl PauseRecord {
    /// Start and end on the log's clock.
    fn interval(&self) -> Option<(i64, i64)> {
        let time = self.time?;
        Some(match self.stamp_at {
            StampAt::End => (time.saturating_sub(self.duration_ns), time),
            StampAt::Start => (time, time.saturating_add(self.duration_ns)),
        })
    }

    /// Start and end on the wall clock.
    fn wall_clock_interval(&self) -> Option<(i64, i64)> {
        let epoch = self.epoch?;
        Some(match self.stamp_at {
            StampAt::End => (epoch.saturating_sub(self.duration_ns), epoch),
            StampAt::Start => (epoch, epoch.saturating_add(self.duration_ns)),
        })
    }

    /// Whether `inner` ran inside this pause. JDK 9–16 Serial and CMS run the full collection that
    /// follows a failed promotion inside the young collection's pause: it is numbered after the
    /// young one (`GC(n+1)`), logged before it, and its time is part of the young pause's time.
    fn encloses(&self, inner: &PauseRecord) -> bool {
        let (Some(outer_id), Some(inner_id)) = (self.gc_id, inner.gc_id) else {
            return false;
        };
        if outer_id >= inner_id || self.duration_ns < inner.duration_ns {
            return false;
        }
        match (self.interval(), inner.interval()) {
            (Some((outer_start, outer_end)), Some((inner_start, inner_end))) => {
                outer_start <= inner_start.saturating_add(STAMP_RESOLUTION_NS)
                    && inner_end <= outer_end.saturating_add(STAMP_RESOLUTION_NS)
            }
            // Without stamps the numbering and the durations are all there is to go by.
            _ => true,
        }
    }
}

/// A JDK 8 collection whose text goes on over later lines.
struct OpenCollection {
    kind: String,
    time: Option<i64>,
    epoch: Option<i64>,
    progress: CollectionProgress,
}

impl OpenCollection {
    /// Takes in a collection that begins while this one is open, if it runs inside this one's
    /// pause: the young collection of -XX:+CMSScavengeBeforeRemark inside a CMS remark, which is
    /// then named after both (`Remark (with scavenge)`).
    fn take_in_scavenge(&mut self, kind: &str) -> bool {
        if !(is_remark_kind(&self.kind) && is_jdk8_young_kind(kind)) {
            return false;
        }
        REMARK_WITH_SCAVENGE.clone_into(&mut self.kind);
        true
    }
}

/// Which clock the log's intervals are measured on, fixed by its first stamped line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clock {
    Uptime,
    Epoch,
}

/// Feeds on log lines one at a time and produces a [`Report`].
pub struct Analyzer<'w> {
    lines: u64,
    unparsed_lines: u64,
    /// Lines that state a GC fact: a collection, a pause, a safepoint, a concurrent phase, a heap
    /// change, or the JVM's and collector's names. A file without one is not a GC log, whatever
    /// else of it parses (a blank line, a `}`, a `1: …` can stand in any text, or in random bytes).
    gc_events: u64,
    format: Option<Format>,
    version: Option<String>,
    collector: Option<String>,
    generational: bool,
    clock: Option<Clock>,
    /// Added to uptimes after a JVM restart so that the time line keeps increasing.
    uptime_offset: i64,
    last_uptime: Option<i64>,
    first_time: Option<i64>,
    last_time: Option<i64>,
    pauses: Durations,
    /// Pauses read off GC safepoint operations, used when the log has no pause lines (e.g. ZGC with
    /// Cassandra's `gc=info`, which leaves the pause lines of `gc+phases` out).
    pauses_from_safepoints: Durations,
    safepoints: Durations,
    ttsp: Durations,
    pending_operation: Option<String>,
    /// A JDK 8 collection whose `, N secs]` comes on a later line.
    open_collection: Option<OpenCollection>,
    /// JDK 8 collections that could not be put back together (see [`Report::unfinished_collections`]).
    unfinished_collections: u64,
    /// A numbered unified pause not counted yet: the next pause line may be the one it ran inside.
    held_pause: Option<PauseRecord>,
    concurrent: ConcurrentUnion,
    heap_max_before: Option<f64>,
    heap_max_after: Option<f64>,
    heap_max_capacity: Option<f64>,
    last_heap_after: Option<f64>,
    allocated_bytes: f64,
    /// When the first and the last heap transitions were logged: the window the allocation covers.
    first_heap_time: Option<i64>,
    last_heap_time: Option<i64>,
    timeline: Option<&'w mut dyn Write>,
    timeline_error: Option<std::io::Error>,
}

impl<'w> Analyzer<'w> {
    pub fn new(timeline: Option<&'w mut dyn Write>) -> Self {
        Self {
            lines: 0,
            unparsed_lines: 0,
            gc_events: 0,
            format: None,
            version: None,
            collector: None,
            generational: false,
            clock: None,
            uptime_offset: 0,
            last_uptime: None,
            first_time: None,
            last_time: None,
            pauses: Durations::new(),
            pauses_from_safepoints: Durations::new(),
            safepoints: Durations::new(),
            ttsp: Durations::new(),
            pending_operation: None,
            open_collection: None,
            unfinished_collections: 0,
            held_pause: None,
            concurrent: ConcurrentUnion::new(),
            heap_max_before: None,
            heap_max_after: None,
            heap_max_capacity: None,
            last_heap_after: None,
            allocated_bytes: 0.0,
            first_heap_time: None,
            last_heap_time: None,
            timeline,
            timeline_error: None,
        }
    }

    /// Lines that state a GC fact so far (see `gc_events`): none means the input is not a GC log.
    pub fn gc_events(&self) -> u64 {
        self.gc_events
    }

    /// Lines read so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Notes a line's format and time; returns its time.
    fn note_line(&mut self, line: &Line<'_>) -> Option<i64> {
        if line.format != Format::Unknown {
            // JDK 8 and unified lines never mix in one JVM's log; the first one decides.
            self.format.get_or_insert(line.format);
        }
        self.note_time(&line.stamp)
    }

    /// A safepoint's stopped time (and time to safepoint), stamped when it ended.
    fn on_safepoint(
        &mut self,
        operation: Option<&str>,
        total_ns: i64,
        ttsp_ns: Option<i64>,
        time: Option<i64>,
        epoch: Option<i64>,
    ) {
        // The stopped time is printed once the collection is over: one still open lost its end.
        self.abandon_open_collection();
        let pending = self.pending_operation.take();
        let operation = operation.or(pending.as_deref()).unwrap_or("unknown");
        let start = time.map(|t| t.saturating_sub(total_ns));
        self.extend_span(start, time);
        self.safepoints.add(operation, total_ns);
        if let Some(ttsp) = ttsp_ns {
            self.ttsp.add(operation, ttsp);
        }
        if let Some(kind) = gc_operation_kind(operation) {
            self.pauses_from_safepoints.add(kind, total_ns);
        }
        let absolute = epoch.map(|epoch| (epoch.saturating_sub(total_ns), epoch));
        let operation = operation.to_owned();
        self.write_timeline(absolute, start.zip(time), "safepoint", &operation);
    }

    /// A concurrent phase: its span counts towards the concurrent share.
    fn on_concurrent(&mut self, duration_ns: i64, stamp_at: StampAt, time: Option<i64>) {
        if let Some(time) = time {
            let (start, end) = match stamp_at {
                StampAt::End => (time.saturating_sub(duration_ns), time),
                StampAt::Start => (time, time.saturating_add(duration_ns)),
            };
            self.extend_span(Some(start), Some(end));
            let origin = self.first_time.unwrap_or(start).min(start);
            self.concurrent.add(start, end, origin);
        }
    }

    /// Feeds one line (with or without its line terminator).
    pub fn feed(&mut self, raw: &[u8]) {
        match parse_line_lazily(raw) {
            Some(line) => self.feed_line(line),
            None => self.note_quiet_lines(1, 1, Format::Unknown),
        }
    }

    /// Lines with nothing to record (no event, or not understood), counted as [`Analyzer::feed`]
    /// would count them one by one; their times come through [`Analyzer::note_time`].
    pub(crate) fn note_quiet_lines(&mut self, lines: u64, unparsed: u64, format: Format) {
        self.lines += lines;
        self.unparsed_lines += unparsed;
        if format != Format::Unknown {
            self.format.get_or_insert(format);
        }
    }

    /// A line's time on the log's clock: it extends the log's span.
    pub(crate) fn note_time(&mut self, stamp: &Stamp) -> Option<i64> {
        let time = self.time_of(stamp);
        if let Some(time) = time {
            self.first_time = Some(self.first_time.map_or(time, |first| first.min(time)));
            self.last_time = Some(self.last_time.map_or(time, |last| last.max(time)));
        }
        time
    }

    /// One line that was understood.
    pub(crate) fn feed_line(&mut self, line: Line<'_>) {
        self.lines += 1;
        let time = self.note_line(&line);
        // Only detail lines of the same collection come between an inner pause and the pause it ran
        // inside; anything else means the held pause stands alone.
        if !matches!(line.event, Event::Pause { .. } | Event::Other) {
            self.release_held_pause();
        }
        if !matches!(line.event, Event::Other | Event::PauseContinued(_)) {
            self.gc_events += 1;
        }
        match line.event {
            Event::Pause {
                kind,
                duration_ns,
                heap,
                stamp_at,
                gc_id,
            } => {
                // A JDK 8 collection stamped inside another's open text is part of it.
                if stamp_at != StampAt::Start || !self.inside_open_collection(kind) {
                    self.on_pause(PauseRecord {
                        kind: kind.to_owned(),
                        duration_ns,
                        heap,
                        stamp_at,
                        time,
                        epoch: line.stamp.epoch_ns,
                        gc_id,
                    });
                }
            }
            Event::PauseBegin { kind, progress } => {
                self.begin_collection(kind, progress, time, line.stamp.epoch_ns);
            }
            Event::PauseContinued(piece) => {
                self.continue_collection(piece);
            }
            Event::Safepoint {
                operation,
                total_ns,
                ttsp_ns,
            } => {
                self.on_safepoint(operation, total_ns, ttsp_ns, time, line.stamp.epoch_ns);
            }
            Event::SafepointOperation(operation) => {
                self.pending_operation = Some(operation.to_owned());
            }
            Event::Concurrent {
                duration_ns,
                heap,
                stamp_at,
            } => {
                self.on_concurrent(duration_ns, stamp_at, time);
                if let Some(heap) = heap {
                    self.heap(heap, time);
                }
            }
            Event::Heap(heap) => {
                self.heap(heap, time);
            }
            Event::Collector(_) | Event::Version(_) | Event::Generational => {
                self.note_jvm(&line.event);
            }
            Event::Other => {}
        }
    }

    /// What the log says of its JVM: the collector, the version, a generational mode.
    fn note_jvm(&mut self, event: &Event<'_>) {
        match *event {
            Event::Collector(name) => {
                self.collector.get_or_insert_with(|| name.to_owned());
            }
            Event::Version(version) => {
                self.version.get_or_insert_with(|| version.to_owned());
            }
            Event::Generational => self.generational = true,
            _ => {}
        }
    }

    /// A JDK 8 collection left open on its line. The young collection of a scavenge before remark
    /// opens inside the remark: its text becomes part of the remark's.
    fn begin_collection(
        &mut self,
        kind: &str,
        progress: CollectionProgress,
        time: Option<i64>,
        epoch: Option<i64>,
    ) {
        if let Some(open) = self.open_collection.as_mut() {
            if open.take_in_scavenge(kind) {
                open.progress.open_brackets += progress.open_brackets;
                return;
            }
        }
        self.abandon_open_collection();
        self.open_collection = Some(OpenCollection {
            kind: kind.to_owned(),
            time,
            epoch,
            progress,
        });
    }

    /// A later piece of the open JDK 8 collection's text; the collection is counted once its
    /// bracket closes. A closing piece with nothing open is a collection whose beginning was lost.
    fn continue_collection(&mut self, piece: &[u8]) {
        let Some(open) = self.open_collection.as_mut() else {
            if continue_collection(piece, 1).closed_after_ns.is_some() {
                self.unfinished_collections += 1;
            }
            return;
        };
        let step = continue_collection(piece, open.progress.open_brackets);
        open.progress.open_brackets = step.open_brackets;
        open.progress.heap = step.heap.or(open.progress.heap);
        open.progress.old_generation |= step.old_generation;
        open.progress.promotion_failed |= step.promotion_failed;
        if step.open_brackets > 0 {
            return;
        }
        let Some(open) = self.open_collection.take() else {
            return;
        };
        let Some(duration_ns) = step.closed_after_ns else {
            self.unfinished_collections += 1;
            return;
        };
        // A young collection that went on to collect the old generation (promotion failure,
        // concurrent mode failure) is one stop named after both: the text that says so may come on
        // any of its lines.
        let kind = if is_jdk8_young_kind(&open.kind) {
            jdk8_young_kind(open.progress.promotion_failed, open.progress.old_generation).to_owned()
        } else {
            open.kind
        };
        self.record_pause(PauseRecord {
            kind,
            duration_ns,
            heap: open.progress.heap,
            stamp_at: StampAt::Start,
            time: open.time,
            epoch: open.epoch,
            gc_id: None,
        });
    }

    /// Whether a complete JDK 8 collection line belongs to the open collection: the young
    /// collection of a scavenge before remark, printed whole on its own line (PrintHeapAtGC).
    /// Any other collection means the open one lost its end.
    fn inside_open_collection(&mut self, kind: &str) -> bool {
        let inside = self
            .open_collection
            .as_mut()
            .is_some_and(|open| open.take_in_scavenge(kind));
        if !inside {
            self.abandon_open_collection();
        }
        inside
    }

    fn abandon_open_collection(&mut self) {
        if self.open_collection.take().is_some() {
            self.unfinished_collections += 1;
        }
    }

    /// A numbered pause is held until the next event shows whether it ran inside another one; a
    /// pause that encloses the held one is counted once, as one stop named after both.
    fn on_pause(&mut self, pause: PauseRecord) {
        match self.held_pause.take() {
            Some(inner) if pause.encloses(&inner) => {
                let kind = format!("{} + {}", pause.kind, inner.kind);
                self.record_pause(PauseRecord { kind, ..pause });
            }
            held => {
                if let Some(held) = held {
                    self.record_pause(held);
                }
                if pause.gc_id.is_some() {
                    self.held_pause = Some(pause);
                } else {
                    self.record_pause(pause);
                }
            }
        }
    }

    /// Counts the pause still held back, if any: the log has ended (called by [`Analyzer::finish`]
    /// too; call it before to see a timeline write error in [`Analyzer::take_timeline_error`]).
    pub fn end_of_log(&mut self) {
        self.release_held_pause();
        self.abandon_open_collection();
    }

    fn release_held_pause(&mut self) {
        if let Some(held) = self.held_pause.take() {
            self.record_pause(held);
        }
    }

    fn record_pause(&mut self, pause: PauseRecord) {
        let interval = pause.interval();
        self.extend_span(
            interval.map(|(start, _)| start),
            interval.map(|(_, end)| end),
        );
        self.pauses.add(&pause.kind, pause.duration_ns);
        if let Some(heap) = pause.heap {
            self.heap(heap, pause.time);
        }
        let absolute = pause.wall_clock_interval();
        self.write_timeline(absolute, interval, "pause", &pause.kind);
    }

    /// The line's time on the log's clock, in nanoseconds.
    fn time_of(&mut self, stamp: &Stamp) -> Option<i64> {
        let clock = *self
            .clock
            .get_or_insert(match (stamp.uptime_ns, stamp.epoch_ns) {
                (Some(_), _) => Clock::Uptime,
                (None, Some(_)) => Clock::Epoch,
                (None, None) => return None,
            });
        match clock {
            Clock::Epoch => stamp.epoch_ns,
            Clock::Uptime => {
                let uptime = stamp.uptime_ns?;
                if let Some(last) = self.last_uptime {
                    if uptime
                        .saturating_add(self.uptime_offset)
                        .saturating_add(RESTART_TOLERANCE_NS)
                        < last
                    {
                        self.uptime_offset = last;
                    }
                }
                let time = uptime.saturating_add(self.uptime_offset);
                self.last_uptime = Some(self.last_uptime.map_or(time, |last| last.max(time)));
                Some(time)
            }
        }
    }

    fn extend_span(&mut self, start: Option<i64>, end: Option<i64>) {
        if let Some(start) = start {
            self.first_time = Some(self.first_time.map_or(start, |first| first.min(start)));
        }
        if let Some(end) = end {
            self.last_time = Some(self.last_time.map_or(end, |last| last.max(end)));
        }
    }

    fn heap(&mut self, heap: HeapChange, time: Option<i64>) {
        if let Some(time) = time {
            self.first_heap_time.get_or_insert(time);
            self.last_heap_time = Some(time);
        }
        self.heap_max_before = Some(
            self.heap_max_before
                .map_or(heap.before, |m| m.max(heap.before)),
        );
        self.heap_max_after = Some(
            self.heap_max_after
                .map_or(heap.after, |m| m.max(heap.after)),
        );
        if let Some(capacity) = heap.capacity {
            self.heap_max_capacity =
                Some(self.heap_max_capacity.map_or(capacity, |m| m.max(capacity)));
        }
        // What the application allocated since the previous collection left the heap at `after`.
        if let Some(previous_after) = self.last_heap_after {
            self.allocated_bytes += (heap.before - previous_after).max(0.0);
        }
        self.last_heap_after = Some(heap.after);
    }

    fn write_timeline(
        &mut self,
        absolute: Option<(i64, i64)>,
        relative: Option<(i64, i64)>,
        what: &str,
        name: &str,
    ) {
        let Some(out) = self.timeline.as_mut() else {
            return;
        };
        if self.timeline_error.is_some() {
            return;
        }
        let (start, end) = match (absolute, relative) {
            (Some((start, end)), _) => (format_iso8601(start), format_iso8601(end)),
            (None, Some((start, end))) => (seconds(start), seconds(end)),
            (None, None) => return,
        };
        let name = name.replace([',', '"', '\n'], " ");
        if let Err(error) = writeln!(out, "{start},{end},{what}:{name}") {
            self.timeline_error = Some(error);
        }
    }

    /// A write error on the timeline, if one happened (writing stops at the first one).
    pub fn take_timeline_error(&mut self) -> Option<std::io::Error> {
        self.timeline_error.take()
    }

    pub fn finish(mut self) -> Report {
        self.release_held_pause();
        let span_ns = match (self.first_time, self.last_time) {
            (Some(first), Some(last)) if last > first => Some(last.saturating_sub(first)),
            _ => None,
        };
        let span_s = span_ns.map(|ns| ns as f64 / 1e9);
        let pauses_from_lines = self.pauses.tally.count > 0;
        let pauses = if pauses_from_lines {
            &self.pauses
        } else {
            &self.pauses_from_safepoints
        };
        let pause_report = PauseReport {
            source: if pauses_from_lines || pauses.tally.count == 0 {
                "pause lines"
            } else {
                "safepoint operations"
            }
            .into(),
            count: pauses.tally.count,
            total_ms: ms(pauses.tally.total_ns),
            max_ms: ms(pauses.tally.max_ns),
            p50_ms: pauses.quantile_ms(0.5),
            p99_ms: pauses.quantile_ms(0.99),
            p999_ms: pauses.quantile_ms(0.999),
            by_kind: pauses.by_name.report(),
        };
        let safepoint_report = (self.safepoints.tally.count > 0).then(|| SafepointReport {
            count: self.safepoints.tally.count,
            stopped_total_ms: ms(self.safepoints.tally.total_ns),
            stopped_max_ms: ms(self.safepoints.tally.max_ns),
            stopped_p50_ms: self.safepoints.quantile_ms(0.5),
            stopped_p99_ms: self.safepoints.quantile_ms(0.99),
            stopped_p999_ms: self.safepoints.quantile_ms(0.999),
            ttsp_total_ms: ms(self.ttsp.tally.total_ns),
            ttsp_max_ms: ms(self.ttsp.tally.max_ns),
            ttsp_p50_ms: self.ttsp.quantile_ms(0.5),
            ttsp_p99_ms: self.ttsp.quantile_ms(0.99),
            ttsp_p999_ms: self.ttsp.quantile_ms(0.999),
            by_operation: self.safepoints.by_name.report(),
        });
        // Safepoints contain the GC pauses: when the log has them they are the stopped intervals,
        // and the pause lines (sub-intervals) must not be counted again.
        let stopped = if self.safepoints.tally.count > 0 {
            ("safepoints", &self.safepoints)
        } else {
            ("pauses", &self.pauses)
        };
        let time_sampled = span_ns.and_then(|span| {
            (stopped.1.tally.count > 0)
                .then(|| time_sampled(stopped.0, &stopped.1.histogram, stopped.1.tally, span))
        });
        let concurrent = span_ns.map(|span| {
            let (concurrent_ns, max_share) = self
                .concurrent
                .finish(self.last_time.unwrap_or_default(), span);
            ConcurrentReport {
                total_s: concurrent_ns as f64 / 1e9,
                share_per_minute_max: max_share,
                share_per_minute_mean: (concurrent_ns as f64 / span as f64).min(1.0),
            }
        });
        let heap = self.heap_max_before.map(|max_before| HeapReport {
            max_before_mb: max_before / MIB,
            max_after_mb: self.heap_max_after.unwrap_or_default() / MIB,
            max_capacity_mb: self.heap_max_capacity.map(|capacity| capacity / MIB),
        });
        let allocation_rate_mb_s = match (self.first_heap_time, self.last_heap_time) {
            (Some(first), Some(last)) if last > first && self.allocated_bytes > 0.0 => {
                Some(self.allocated_bytes / MIB / ((last - first) as f64 / 1e9))
            }
            _ => None,
        };
        Report {
            format: match self.format {
                Some(Format::Jdk8) => "jdk8",
                _ => "unified",
            }
            .into(),
            jvm: JvmReport {
                version: self.version,
                collector: self.collector.or_else(|| infer_collector(&self.pauses)),
                generational: self.generational,
            },
            span_s,
            lines: self.lines,
            unparsed_lines: self.unparsed_lines,
            unfinished_collections: self.unfinished_collections,
            pauses: pause_report,
            safepoints: safepoint_report,
            time_sampled,
            concurrent,
            allocation_rate_mb_s,
            heap,
        }
    }
}

fn seconds(nanos: i64) -> String {
    format!("{:.6}", nanos as f64 / 1e9)
}

/// Names a collector from its pause kinds when the log lacks a `Using …` line.
fn infer_collector(pauses: &Durations) -> Option<String> {
    let has = |kind: &str| pauses.by_name.0.contains_key(kind);
    let collector = if has("Mark Start") || has("Relocate Start") {
        "ZGC"
    } else if has("Init Mark") || has("Final Mark") || has("Final Update Refs") {
        "Shenandoah"
    } else if has("Initial Mark") {
        "CMS"
    } else if has("Mixed") || has("Remark") || has("Cleanup") {
        "G1"
    } else {
        return None;
    };
    Some(collector.to_owned())
}

/// The pause kind of a GC safepoint operation (`ZMarkStart`, `ShenandoahFinalRoots`, …).
pub fn gc_operation_kind(operation: &str) -> Option<&'static str> {
    let kind = match operation {
        "ZMarkStart" | "ZMarkStartYoung" | "ZMarkStartYoungAndOld" | "ZMarkStartOld" => {
            "Mark Start"
        }
        "ZMarkEnd" | "ZMarkEndYoung" | "ZMarkEndOld" => "Mark End",
        "ZRelocateStart" | "ZRelocateStartYoung" | "ZRelocateStartOld" => "Relocate Start",
        "ShenandoahInitMark" => "Init Mark",
        "ShenandoahFinalMarkStartEvac" | "ShenandoahFinalMark" => "Final Mark",
        "ShenandoahInitUpdateRefs" => "Init Update Refs",
        "ShenandoahFinalUpdateRefs" => "Final Update Refs",
        "ShenandoahFinalRoots" => "Final Roots",
        "ShenandoahDegeneratedGC" => "Degenerated GC",
        "ShenandoahFullGC" => "Full",
        "G1CollectForAllocation" | "G1TryInitiateConcMark" | "CollectForMetadataAllocation" => {
            "Young"
        }
        "G1CollectFull" | "ParallelGCSystemGC" | "SerialGCSystemGC" | "GenCollectFull" => "Full",
        "G1PauseRemark" | "CMS_Final_remark" => "Remark",
        "G1PauseCleanup" => "Cleanup",
        "CMS_Initial_Mark" => "Initial Mark",
        "ParallelGCFailedAllocation" | "GenCollectForAllocation" | "SerialCollectForAllocation" => {
            "Young"
        }
        _ => return None,
    };
    Some(kind)
}

/// Seed 004's distribution: pick an instant uniformly over the span; the stop still remaining then is
/// 0 outside stopped intervals and uniform on [0, d] inside one of length d (weight d / span). Its
/// quantiles follow exactly from the durations' histogram: P(remaining > x) = Σ max(0, dᵢ − x) / span.
fn time_sampled(
    source: &'static str,
    histogram: &Histogram<u64>,
    tally: Tally,
    span_ns: i64,
) -> TimeSampledReport {
    let span = span_ns as f64;
    let paused_fraction = (tally.total_ns as f64 / span).min(1.0);
    // Distinct values, largest first, each with its count; bounded by the histogram's bucket count.
    let mut values: Vec<(f64, f64)> = histogram
        .iter_recorded()
        .map(|bucket| {
            let value = (bucket.value_iterated_to() as f64).min(tally.max_ns as f64);
            (value, bucket.count_at_value() as f64)
        })
        .collect();
    values.reverse();
    // Scale the bucketed values so that their sum matches the exact stopped total.
    let bucket_total: f64 = values.iter().map(|(value, count)| value * count).sum();
    let correction = if bucket_total > 0.0 {
        tally.total_ns as f64 / bucket_total
    } else {
        1.0
    };
    let quantile = |q: f64| -> f64 {
        let tail = 1.0 - q;
        if paused_fraction <= tail {
            return 0.0;
        }
        let target = tail * span;
        let (mut count_above, mut sum_above) = (0.0, 0.0);
        for (index, (value, count)) in values.iter().enumerate() {
            let value = value * correction;
            count_above += count;
            sum_above += value * count;
            let next = values
                .get(index + 1)
                .map_or(0.0, |(next, _)| next * correction);
            // On [next, value] the tail mass is (sum_above − count_above · x).
            if sum_above - count_above * next >= target {
                return ms(((sum_above - target) / count_above) as i64);
            }
        }
        0.0
    };
    TimeSampledReport {
        source: source.into(),
        paused_fraction,
        p99_ms: quantile(0.99),
        p999_ms: quantile(0.999),
        p9999_ms: quantile(0.9999),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_sampled_hand_computed() {
        // Span 1000 ms; pauses of 100 ms and 10 ms. P(remaining > x) = ((100 − x) + max(0, 10 − x)) / 1000.
        // p99: tail 0.01 → 10 ms of mass: x in [10, 100] → 100 − x = 10 → x = 90 ms.
        // p999: tail 0.001 → 1 ms: x = 99 ms. Paused fraction 0.11.
        let mut histogram = new_histogram();
        let mut tally = Tally::default();
        for ms in [100i64, 10] {
            record(&mut histogram, ms * 1_000_000);
            tally.add(ms * 1_000_000);
        }
        let report = time_sampled("pauses", &histogram, tally, 1_000_000_000);
        assert!((report.paused_fraction - 0.11).abs() < 1e-9);
        assert!((report.p99_ms - 90.0).abs() < 0.1, "{}", report.p99_ms);
        assert!((report.p999_ms - 99.0).abs() < 0.1, "{}", report.p999_ms);
        assert!((report.p9999_ms - 99.9).abs() < 0.1, "{}", report.p9999_ms);
    }

    #[test]
    fn concurrent_union_merges_nested_and_overlapping() {
        let mut union = ConcurrentUnion::new();
        union.add(10, 20, 0);
        union.add(0, 30, 0); // outer cycle logged after its phase
        union.add(25, 40, 0);
        union.add(100, 110, 0);
        assert_eq!(union.finish(110, 110).0, 50);
    }
}
