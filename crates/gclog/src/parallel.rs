//! Reading a log on every core, with the numbers of one sequential pass.
//!
//! A reader thread fills batches of whole lines (decompressing a gzip part as it goes) and deals
//! them out in turn to one worker per core; each worker parses its batch on its own, and the
//! analyser takes the parsed batches back in the same turn, so in the log's order. Parsing a line
//! needs nothing from the lines before it, so it is the part spread over the cores; everything that
//! does (restarts, collections open across lines, held pauses, the time-sampled distribution) stays
//! in the one analyser, so the result is the same as one pass by construction. The stages overlap:
//! while the analyser applies one batch, the workers parse the next ones and the reader fills more.
//!
//! Most lines record nothing (phase details, region counts): a batch hands those over as runs, their
//! count and the few times that matter, so that the analyser's sequential share stays small. Within
//! a run of times that never go down (a JVM's uptime), only the first and the last can change what
//! the analyser keeps (its span, and a restart, which a drop in uptime shows), so a run is cut where
//! a time goes down and each part passes on its two ends.

use std::io::{self, Read};
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};

use crate::analysis::Analyzer;
use crate::input::MAX_LINE_BYTES;
use crate::parse::{parse_next_line_lazily, Event, Format, Line, Stamp};

/// How the work is spread: `threads` cores, each parsing batches of about `batch_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parallelism {
    pub threads: usize,
    /// Bytes the reader hands over at a time (it grows past this only to finish a line).
    pub batch_bytes: usize,
}

/// Batches held at once, whatever the cores: memory stays flat on large machines.
const MAX_BATCHES_IN_FLIGHT: usize = 18;

impl Parallelism {
    /// Every core of this machine, in 1 MiB batches (a batch and what it parses to stay in a core's
    /// cache until the analyser reads them; larger ones measured slower here).
    pub fn of_machine() -> Self {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        Self::with_threads(threads)
    }

    /// `threads` cores (at least one), in 1 MiB batches.
    pub fn with_threads(threads: usize) -> Self {
        Parallelism {
            threads: threads.max(1),
            batch_bytes: 1 << 20,
        }
    }

    /// Buffers the reader fills in turn: one being read, and per worker one waiting, one being
    /// parsed and one parsed, waiting for the analyser.
    fn batches_in_flight(&self) -> usize {
        (3 * self.threads.max(1) + 1).min(MAX_BATCHES_IN_FLIGHT)
    }
}

/// What a batch passes to the analyser, in the log's order.
enum Item<'a> {
    /// A line with something to record.
    Line(Line<'a>),
    /// Lines with nothing to record.
    Quiet {
        lines: u64,
        unparsed: u64,
        format: Format,
    },
    /// The time of a quiet line that may change the analyser's span or clock.
    Time(Stamp),
}

type Items<'a> = Vec<Item<'a>>;

self_cell::self_cell!(
    /// A batch's lines and what they parse to, which borrows from them: handed from a worker to
    /// the analyser without copying a line.
    struct ParsedLines {
        owner: Vec<u8>,
        #[covariant]
        dependent: Items,
    }
);

struct ParsedBatch {
    lines: ParsedLines,
    consumed: u64,
}

/// Feeds everything `reader` holds to `analyzer`, parsing on `parallelism.threads` cores.
/// `progress` gets the bytes consumed after each batch.
pub(crate) fn feed_all(
    analyzer: &mut Analyzer<'_>,
    reader: Box<dyn Read + Send>,
    parallelism: Parallelism,
    progress: &mut dyn FnMut(u64),
) -> io::Result<()> {
    let workers = parallelism.threads.max(1);
    let batch_bytes = parallelism.batch_bytes.max(1);
    std::thread::scope(|scope| {
        let (empty, empty_receiver) = channel::<Vec<u8>>();
        for _ in 0..parallelism.batches_in_flight() {
            let _ = empty.send(Vec::with_capacity(batch_bytes));
        }
        let (dealt, to_parse): (Vec<_>, Vec<_>) = (0..workers)
            .map(|_| sync_channel::<io::Result<Batch>>(1))
            .unzip();
        scope.spawn(move || read_batches(reader, batch_bytes, dealt, empty_receiver));
        if workers == 1 {
            // One core: this thread parses too, with no hand-over.
            let batches = to_parse.into_iter().flatten();
            return parse_and_apply(analyzer, batches, &empty, progress);
        }
        let workers: Vec<Worker> = to_parse
            .into_iter()
            .map(|batches| {
                let (sender, parsed) = channel();
                let (spares, spare_receiver) = channel();
                scope.spawn(move || parse_batches(batches, sender, spare_receiver));
                Worker { parsed, spares }
            })
            .collect();
        apply_in_turn(analyzer, &workers, &empty, progress)
    })
}

/// The analyser's ends of a worker's channels.
struct Worker {
    parsed: Receiver<io::Result<ParsedBatch>>,
    spares: Sender<SpareItems>,
}

/// Takes the workers' batches back in the turn they were dealt in, so in the log's order; a
/// worker's channel closes once the reader has dealt everything.
fn apply_in_turn(
    analyzer: &mut Analyzer<'_>,
    workers: &[Worker],
    empty: &Sender<Vec<u8>>,
    progress: &mut dyn FnMut(u64),
) -> io::Result<()> {
    for worker in workers.iter().cycle() {
        let Ok(batch) = worker.parsed.recv() else {
            return Ok(());
        };
        let ParsedBatch {
            mut lines,
            consumed,
        } = batch?;
        let spare = lines.with_dependent_mut(|_, items| {
            apply(analyzer, items.drain(..));
            recycle(std::mem::take(items))
        });
        progress(consumed);
        let _ = worker.spares.send(spare);
        let _ = empty.send(lines.into_owner());
    }
    Ok(())
}

/// One core: parses and applies each batch in turn.
fn parse_and_apply(
    analyzer: &mut Analyzer<'_>,
    batches: impl Iterator<Item = io::Result<Batch>>,
    empty: &Sender<Vec<u8>>,
    progress: &mut dyn FnMut(u64),
) -> io::Result<()> {
    let mut spare: SpareItems = Vec::new();
    for batch in batches {
        let batch = batch?;
        let mut items = recycle(std::mem::take(&mut spare));
        classify(&batch.data, &mut items);
        apply(analyzer, items.drain(..));
        spare = recycle(items);
        progress(batch.consumed);
        // The reader may have stopped at an error: nothing waits for the buffer then.
        let _ = empty.send(batch.data);
    }
    Ok(())
}

/// A worker: parses each batch dealt to it and passes it on, an error as it came. Item lists come
/// back from the analyser emptied, so that their memory is reused rather than cleared anew.
fn parse_batches(
    batches: Receiver<io::Result<Batch>>,
    parsed: Sender<io::Result<ParsedBatch>>,
    spares: Receiver<SpareItems>,
) {
    for batch in batches {
        let spare = spares.try_recv().unwrap_or_default();
        let batch = batch.map(|batch| ParsedBatch {
            consumed: batch.consumed,
            lines: ParsedLines::new(batch.data, |data| {
                let mut items = recycle(spare);
                classify(data, &mut items);
                items
            }),
        });
        if parsed.send(batch).is_err() {
            return;
        }
    }
}

/// An empty item list kept between batches.
type SpareItems = Vec<Item<'static>>;

/// The same list, emptied, for lines that live elsewhere: an empty vector only changes its
/// lifetime, and collecting it in place keeps its allocation.
fn recycle<'a, 'b>(mut items: Vec<Item<'a>>) -> Vec<Item<'b>> {
    items.clear();
    items
        .into_iter()
        .map(|_| -> Item<'b> { unreachable!("the list is empty") })
        .collect()
}

fn apply<'a>(analyzer: &mut Analyzer<'_>, items: impl IntoIterator<Item = Item<'a>>) {
    for item in items {
        match item {
            Item::Line(line) => analyzer.feed_line(line),
            Item::Quiet {
                lines,
                unparsed,
                format,
            } => analyzer.note_quiet_lines(lines, unparsed, format),
            Item::Time(stamp) => {
                analyzer.note_time(&stamp);
            }
        }
    }
}

/// Parses every line of a batch: the lines to record, and the quiet runs between them.
fn classify<'a>(batch: &'a [u8], items: &mut Vec<Item<'a>>) {
    let mut run = QuietRun::default();
    let mut decorators = None;
    let mut start = 0;
    while start < batch.len() {
        let end = memchr::memchr(b'\n', &batch[start..]).map_or(batch.len(), |at| start + at + 1);
        // As the sequential reader keeps it: at most MAX_LINE_BYTES of a longer line.
        let raw = &batch[start..end.min(start + MAX_LINE_BYTES)];
        start = end;
        match parse_next_line_lazily(raw, &mut decorators) {
            None => run.unparsed(),
            Some(line) if matches!(line.event, Event::Other) => run.quiet(&line, items),
            Some(line) => {
                run.flush(items);
                items.push(Item::Line(line));
            }
        }
    }
    run.flush(items);
}

/// Quiet lines since the last line to record.
#[derive(Default)]
struct QuietRun {
    lines: u64,
    unparsed: u64,
    format: Option<Format>,
    /// The first and the latest time of the part of the run whose times never went down.
    first: Option<Stamp>,
    last: Option<Stamp>,
}

impl QuietRun {
    fn unparsed(&mut self) {
        self.lines += 1;
        self.unparsed += 1;
    }

    fn quiet(&mut self, line: &Line<'_>, items: &mut Vec<Item<'_>>) {
        self.lines += 1;
        if line.format != Format::Unknown && self.format.is_none() {
            self.format = Some(line.format);
        }
        let stamp = line.stamp;
        if stamp.is_empty() {
            return;
        }
        match self.last {
            Some(last) if never_down(&last, &stamp) => self.last = Some(stamp),
            _ => {
                self.pass_times(items);
                self.first = Some(stamp);
                self.last = Some(stamp);
            }
        }
    }

    fn pass_times(&mut self, items: &mut Vec<Item<'_>>) {
        if let Some(first) = self.first.take() {
            items.push(Item::Time(first));
            if let Some(last) = self.last.take().filter(|last| *last != first) {
                items.push(Item::Time(last));
            }
        }
    }

    fn flush(&mut self, items: &mut Vec<Item<'_>>) {
        if self.lines == 0 {
            return;
        }
        items.push(Item::Quiet {
            lines: self.lines,
            unparsed: self.unparsed,
            format: self.format.unwrap_or(Format::Unknown),
        });
        self.pass_times(items);
        *self = QuietRun::default();
    }
}

/// `next` carries the same clocks as `last`, and none of them went down.
fn never_down(last: &Stamp, next: &Stamp) -> bool {
    fn same_clock_not_down(last: Option<i64>, next: Option<i64>) -> bool {
        match (last, next) {
            (None, None) => true,
            (Some(last), Some(next)) => next >= last,
            _ => false,
        }
    }
    same_clock_not_down(last.uptime_ns, next.uptime_ns)
        && same_clock_not_down(last.epoch_ns, next.epoch_ns)
}

/// Whole lines of the input, and how many input bytes they stand for (a line longer than
/// MAX_LINE_BYTES is kept shortened, as the sequential reader keeps it).
struct Batch {
    data: Vec<u8>,
    consumed: u64,
}

/// The reader thread: fills the buffers that come back through `empty` with whole lines and deals
/// them to the workers in turn.
fn read_batches(
    mut reader: Box<dyn Read + Send>,
    batch_bytes: usize,
    workers: Vec<SyncSender<io::Result<Batch>>>,
    empty: Receiver<Vec<u8>>,
) {
    let mut carry: Vec<u8> = Vec::new();
    let mut turns = workers.iter().cycle();
    let mut deal = |batch| {
        turns
            .next()
            .is_some_and(|worker| worker.send(batch).is_ok())
    };
    while let Ok(mut data) = empty.recv() {
        data.clear();
        data.append(&mut carry);
        match fill(&mut *reader, &mut data, batch_bytes, &mut carry) {
            Ok(filled) => {
                let end = filled.end;
                let batch = Batch {
                    data,
                    consumed: filled.consumed,
                };
                if !deal(Ok(batch)) || end {
                    return;
                }
            }
            Err(error) => {
                // The whole lines read before the error count, as they do in one pass.
                let whole = memchr::memrchr(b'\n', &data).map_or(0, |at| at + 1);
                data.truncate(whole);
                let batch = Batch {
                    consumed: data.len() as u64,
                    data,
                };
                if deal(Ok(batch)) {
                    deal(Err(error));
                }
                return;
            }
        }
    }
}

struct Filled {
    /// Input bytes the batch stands for (the carried-over start of a line counted when it was read).
    consumed: u64,
    /// The input has ended.
    end: bool,
}

/// Reads into `data` (which may already hold the start of a line, carried over from the last batch)
/// until it holds `batch_bytes` and ends at a line break; moves the unfinished last line to `carry`.
/// Reads go straight into `data`: a log is copied once, from the page cache.
fn fill(
    reader: &mut dyn Read,
    data: &mut Vec<u8>,
    batch_bytes: usize,
    carry: &mut Vec<u8>,
) -> io::Result<Filled> {
    // Carried bytes are counted here, where their line is handed over.
    let mut consumed = data.len() as u64;
    let mut target = batch_bytes.max(data.len() + 1);
    loop {
        let wanted = target.saturating_sub(data.len()) as u64;
        let read = reader.take(wanted).read_to_end(data)? as u64;
        consumed += read;
        if read < wanted {
            return Ok(Filled {
                consumed,
                end: true,
            });
        }
        if let Some(last_break) = memchr::memrchr(b'\n', data) {
            carry.extend_from_slice(&data[last_break + 1..]);
            data.truncate(last_break + 1);
            consumed -= carry.len() as u64;
            return Ok(Filled {
                consumed,
                end: false,
            });
        }
        // No line break at all: the batch is the start of one long line.
        if data.len() >= MAX_LINE_BYTES {
            data.truncate(MAX_LINE_BYTES);
            consumed += skip_line(reader, carry)?;
            data.push(b'\n');
            return Ok(Filled {
                consumed,
                end: false,
            });
        }
        target = (data.len() * 2).min(MAX_LINE_BYTES);
    }
}

/// Reads past the rest of a line; what follows its break goes to `carry`. Returns the bytes read
/// up to and including the break.
fn skip_line(reader: &mut dyn Read, carry: &mut Vec<u8>) -> io::Result<u64> {
    let mut scratch = [0u8; 8192];
    let mut skipped = 0u64;
    loop {
        let read = match reader.read(&mut scratch) {
            Ok(0) => return Ok(skipped),
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if let Some(at) = memchr::memchr(b'\n', &scratch[..read]) {
            carry.extend_from_slice(&scratch[at + 1..read]);
            return Ok(skipped + at as u64 + 1);
        }
        skipped += read as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batches(input: &[u8], batch_bytes: usize) -> Vec<(Vec<u8>, u64)> {
        let reader: Box<dyn Read + Send> = Box::new(io::Cursor::new(input.to_vec()));
        let (full_sender, full) = sync_channel(1);
        let (empty, empty_receiver) = channel();
        for _ in 0..2 {
            empty.send(Vec::new()).unwrap();
        }
        let reader = std::thread::spawn(move || {
            read_batches(reader, batch_bytes, vec![full_sender], empty_receiver)
        });
        let mut out = Vec::new();
        for batch in full {
            let batch: Batch = batch.unwrap();
            out.push((batch.data.clone(), batch.consumed));
            let _ = empty.send(batch.data);
        }
        reader.join().unwrap();
        out
    }

    #[test]
    fn batches_hold_whole_lines_and_account_for_every_byte() {
        let input = b"one\ntwo two\nthree three three\nfour\nno break at the end";
        for batch_bytes in [1, 2, 5, 7, 13, 100] {
            let got = batches(input, batch_bytes);
            let joined: Vec<u8> = got.iter().flat_map(|(data, _)| data.clone()).collect();
            assert_eq!(joined, input.to_vec(), "batch_bytes {batch_bytes}");
            let consumed: u64 = got.iter().map(|(_, consumed)| consumed).sum();
            assert_eq!(consumed, input.len() as u64, "batch_bytes {batch_bytes}");
            for (data, _) in &got[..got.len() - 1] {
                assert_eq!(data.last(), Some(&b'\n'), "batch_bytes {batch_bytes}");
            }
        }
    }

    #[test]
    fn a_line_longer_than_the_limit_is_kept_shortened_and_counted_whole() {
        let mut input = b"short\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES * 3));
        input.extend(b"\nafter\n");
        let got = batches(&input, 1000);
        let joined: Vec<u8> = got.iter().flat_map(|(data, _)| data.clone()).collect();
        let mut expected = b"short\n".to_vec();
        expected.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES));
        expected.extend(b"\nafter\n");
        assert_eq!(joined.len(), expected.len());
        assert!(joined == expected);
        let consumed: u64 = got.iter().map(|(_, consumed)| consumed).sum();
        assert_eq!(consumed, input.len() as u64);
    }

    #[test]
    fn a_recycled_item_list_keeps_its_memory_and_holds_nothing() {
        let data = b"[0.5s] x".to_vec();
        let mut items = Vec::with_capacity(1000);
        classify(&data, &mut items);
        assert!(!items.is_empty());
        let spare: SpareItems = recycle(items);
        assert!(spare.is_empty());
        assert!(spare.capacity() >= 1000, "capacity {}", spare.capacity());
        let again: Vec<Item<'_>> = recycle(spare);
        assert!(again.capacity() >= 1000, "capacity {}", again.capacity());
    }

    #[test]
    fn a_run_passes_the_ends_of_each_part_whose_times_never_go_down() {
        let uptime = |s: i64| Stamp {
            uptime_ns: Some(s),
            epoch_ns: None,
        };
        let times = [5, 6, 7, 3, 4, 4, 9];
        let mut run = QuietRun::default();
        let mut items = Vec::new();
        for t in times {
            let line = Line {
                stamp: uptime(t),
                event: Event::Other,
                format: Format::Unified,
            };
            run.quiet(&line, &mut items);
        }
        run.unparsed();
        run.flush(&mut items);
        let passed: Vec<i64> = items
            .iter()
            .filter_map(|item| match item {
                Item::Time(stamp) => stamp.uptime_ns,
                _ => None,
            })
            .collect();
        assert_eq!(passed, vec![5, 7, 3, 9]);
        let counts: Vec<(u64, u64)> = items
            .iter()
            .filter_map(|item| match item {
                Item::Quiet {
                    lines, unparsed, ..
                } => Some((*lines, *unparsed)),
                _ => None,
            })
            .collect();
        assert_eq!(counts, vec![(8, 1)]);
    }
}
