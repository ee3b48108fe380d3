//! Line parser: turns one raw log line (JDK 9+ unified logging with any decorators, or JDK 8
//! `-XX:+PrintGCDetails`) into at most one [`Event`]. Pure and allocation-free: it borrows from the line.

use cqlbench_units::time::parse_iso8601;

/// When a line was written. Unified logging can carry both an uptime and a wall-clock time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stamp {
    /// Nanoseconds since JVM start (`uptime`, `uptimemillis`, `uptimenanos`, JDK 8 `PrintGCTimeStamps`).
    pub uptime_ns: Option<i64>,
    /// Nanoseconds since the Unix epoch (`time`, `utctime`, `timemillis`, `timenanos`, `PrintGCDateStamps`).
    pub epoch_ns: Option<i64>,
}

impl Stamp {
    pub fn is_empty(&self) -> bool {
        self.uptime_ns.is_none() && self.epoch_ns.is_none()
    }
}

/// Heap occupancy around a collection, in bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeapChange {
    pub before: f64,
    pub after: f64,
    pub capacity: Option<f64>,
}

/// Where a log line's timestamp sits relative to the event it reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StampAt {
    /// Unified logging and JDK 8 safepoint/concurrent lines: written when the event is over.
    End,
    /// JDK 8 `[GC …` / `[Full GC …` lines: the stamp is printed when the collection begins.
    Start,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Event<'a> {
    /// A stop-the-world collector pause.
    Pause {
        kind: &'a str,
        duration_ns: i64,
        heap: Option<HeapChange>,
        stamp_at: StampAt,
        /// The unified-logging collection number (`GC(12)`): it tells a collection run inside another
        /// (numbered after it, logged before it) from one that follows it.
        gc_id: Option<u64>,
    },
    /// A safepoint: the application threads were stopped for `total_ns`, of which `ttsp_ns` was
    /// spent bringing them to the safepoint.
    Safepoint {
        operation: Option<&'a str>,
        total_ns: i64,
        ttsp_ns: Option<i64>,
    },
    /// A JDK 8 collection whose line is left open: its `, N secs]` comes on a later line, after
    /// output other flags print into the middle of it (tenuring tables, heap dumps, free-list
    /// statistics, adaptive-size decisions, the young collection of a scavenge before remark).
    PauseBegin {
        kind: &'a str,
        /// The state of its text so far: brackets left open, heap transition, old generation.
        progress: CollectionProgress,
    },
    /// A piece of a JDK 8 collection's text on a later line (`: 1000K->100K(2000K), 0.01 secs] …`,
    /// ` (concurrent mode failure): …`, `[Rescan (parallel) …`, `, 0.0115587 secs]`): read with
    /// [`continue_collection`] against the collection it belongs to.
    PauseContinued(&'a [u8]),
    /// JDK 9–16 `Entering safepoint region: OP`, naming the next `Total time …` line.
    SafepointOperation(&'a str),
    /// A concurrent phase or cycle that ran for `duration_ns` of wall time.
    Concurrent {
        duration_ns: i64,
        heap: Option<HeapChange>,
        stamp_at: StampAt,
    },
    /// A heap transition that is not a pause (ZGC cycle summaries, Shenandoah cleanup).
    Heap(HeapChange),
    /// `Using G1`, `Using The Z Garbage Collector`, a JDK 8 `CommandLine flags:` line …
    Collector(&'a str),
    /// `Version: 17.0.15+6-…`, or the JDK 8 VM banner.
    Version(&'a str),
    /// Generational ZGC or Shenandoah detected.
    Generational,
    /// Understood, nothing to record.
    Other,
}

/// The outcome for one line.
#[derive(Debug, Clone, PartialEq)]
pub struct Line<'a> {
    pub stamp: Stamp,
    pub event: Event<'a>,
    pub format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Unified,
    Jdk8,
    /// A blank line or a message without decorators that does not tell.
    Unknown,
}

/// Parses one line (without its newline). `None` means the line was not understood.
pub fn parse_line(raw: &[u8]) -> Option<Line<'_>> {
    parse_line_with(raw, true, &mut None)
}

/// Like [`parse_line`], but reads a unified line's wall-clock decorator only where it matters: for
/// lines with something to record, or when the line has no uptime. Date parsing is a tenth of the
/// work on a typical log, and most lines are phase and heap details.
pub(crate) fn parse_line_lazily(raw: &[u8]) -> Option<Line<'_>> {
    parse_line_with(raw, false, &mut None)
}

/// Like [`parse_line_lazily`], for the lines of one stretch of a log in their order: a line whose
/// decorators are byte for byte the previous line's (a collection's phase and heap lines share one
/// time and tag) takes their reading from `previous` instead of reading them again.
pub(crate) fn parse_next_line_lazily<'a>(
    raw: &'a [u8],
    previous: &mut Option<Decorators<'a>>,
) -> Option<Line<'a>> {
    parse_line_with(raw, false, previous)
}

/// A unified line's decorators as written, and what they say.
#[derive(Clone, Copy)]
pub(crate) struct Decorators<'a> {
    /// Every decorator, with the blanks before the message.
    text: &'a [u8],
    /// How much of `text` runs through the last decorator that may tell a time (the level and tags
    /// after it tell none).
    timed_len: usize,
    stamp: Stamp,
    wall_clock: Option<&'a [u8]>,
}

impl<'a> Decorators<'a> {
    /// The line's decorators, read again only where they differ from these: a line whose time
    /// decorators are the previous line's, byte for byte, starts from their reading (a collection's
    /// lines share one time but change tags, `[gc,phases]` to `[gc,heap]`). The wall-clock time is
    /// returned as text, parsed only if needed. `None` if the first bracket is not a decorator (then
    /// the line may be a JDK 8 line such as `[GC (Allocation Failure) …`).
    fn split(line: &'a [u8], previous: &mut Option<Decorators<'a>>) -> Option<Decorated<'a>> {
        let mut reading = DecoratorReading::default();
        if let Some(known) = *previous {
            let (timed, untimed) = known.text.split_at(known.timed_len);
            let Some(after_time) = line.strip_prefix(timed) else {
                return reading.read_whole(line, previous);
            };
            if let Some(rest) = after_time.strip_prefix(untimed) {
                // A further bracket may be one more decorator: only reading on can tell.
                if rest.first() != Some(&b'[') {
                    return Some(Decorated {
                        stamp: known.stamp,
                        wall_clock: known.wall_clock,
                        message: trim_start(rest),
                    });
                }
            }
            if !timed.is_empty() {
                reading = DecoratorReading {
                    stamp: known.stamp,
                    wall_clock: known.wall_clock,
                    read_to: known.timed_len,
                    timed_len: known.timed_len,
                };
            }
        }
        reading.read_whole(line, previous)
    }
}

fn parse_line_with<'a>(
    raw: &'a [u8],
    always_read_wall_clock: bool,
    previous: &mut Option<Decorators<'a>>,
) -> Option<Line<'a>> {
    let line = trim_end(raw);
    if line.is_empty() {
        return Some(Line {
            stamp: Stamp::default(),
            event: Event::Other,
            format: Format::Unknown,
        });
    }
    if line[0] == b'[' {
        if let Some(Decorated {
            mut stamp,
            wall_clock,
            message,
        }) = Decorators::split(line, previous)
        {
            let event = unified_message(message)?;
            let wanted = always_read_wall_clock
                || stamp.uptime_ns.is_none()
                || !matches!(event, Event::Other);
            if wanted {
                stamp.epoch_ns = stamp.epoch_ns.or(wall_clock.and_then(parse_iso8601));
            }
            return Some(Line {
                stamp,
                event,
                format: Format::Unified,
            });
        }
    }
    if let Some(parsed) = jdk8_line(line) {
        return parsed;
    }
    if find(line, b" GC log file created ").is_some()
        || find(line, b" GC log file has reached the maximum size").is_some()
    {
        // JDK 8 -XX:+UseGCLogFileRotation bookkeeping at the top and bottom of each part.
        return Some(Line {
            stamp: Stamp::default(),
            event: Event::Other,
            format: Format::Jdk8,
        });
    }
    // A unified log written with `none` decorators: the bare message.
    let event = unified_message(line)?;
    let known = !matches!(event, Event::Other) || starts_with(line, b"GC(");
    known.then_some(Line {
        stamp: Stamp::default(),
        event,
        format: Format::Unknown,
    })
}

fn trim_end(mut bytes: &[u8]) -> &[u8] {
    while let [rest @ .., last] = bytes {
        if last.is_ascii_whitespace() {
            bytes = rest;
        } else {
            break;
        }
    }
    bytes
}

fn trim_start(mut bytes: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = bytes {
        if first.is_ascii_whitespace() {
            bytes = rest;
        } else {
            break;
        }
    }
    bytes
}

fn starts_with(bytes: &[u8], prefix: &[u8]) -> bool {
    bytes.len() >= prefix.len() && &bytes[..prefix.len()] == prefix
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    let first = needle[0];
    let last_start = haystack.len() - needle.len();
    let mut index = 0;
    while index <= last_start {
        match haystack[index..=last_start]
            .iter()
            .position(|b| *b == first)
        {
            None => return None,
            Some(offset) => {
                let at = index + offset;
                if &haystack[at..at + needle.len()] == needle {
                    return Some(at);
                }
                index = at + 1;
            }
        }
    }
    None
}

fn rfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    (0..=haystack.len() - needle.len())
        .rev()
        .find(|&at| &haystack[at..at + needle.len()] == needle)
}

/// An unsigned decimal as `str::parse::<u64>` reads it (an optional `+`, digits, no overflow),
/// without checking the bytes as UTF-8 first: it runs for most lines of a G1 log.
fn unsigned(bytes: &[u8]) -> Option<u64> {
    let digits = bytes.strip_prefix(b"+").unwrap_or(bytes);
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |value, digit| {
        let digit = digit.wrapping_sub(b'0');
        (digit < 10)
            .then_some(())
            .and_then(|()| value.checked_mul(10)?.checked_add(u64::from(digit)))
    })
}

fn as_str(bytes: &[u8]) -> Option<&str> {
    std::str::from_utf8(bytes).ok()
}

/// Parses a non-negative decimal number (`4.736`) exactly, without floating point, into nanoseconds
/// when one unit of the number is `scale_ns` nanoseconds (1 000 000 for milliseconds). A JVM under a
/// decimal-comma locale (de_DE, fr_FR, …) writes `4,736`, so a comma is a decimal separator too.
fn decimal_to_ns(text: &[u8], scale_ns: i64) -> Option<i64> {
    // One pass over the text: every line's uptime goes through here.
    let mut bytes = text.iter();
    let mut integer: i64 = 0;
    let mut integer_digits = 0;
    for &byte in bytes.by_ref() {
        if byte.is_ascii_digit() {
            integer_digits += 1;
            if integer_digits > 15 {
                return None;
            }
            integer = integer * 10 + i64::from(byte - b'0');
        } else if is_decimal_separator(byte) {
            break;
        } else {
            return None;
        }
    }
    let mut nanos = integer.checked_mul(scale_ns)?;
    let mut unit = scale_ns;
    let mut fraction_digits = 0;
    for &byte in bytes {
        if !byte.is_ascii_digit() {
            return None;
        }
        fraction_digits += 1;
        // Digits finer than a nanosecond are read past, not added.
        if fraction_digits <= 12 && unit >= 10 {
            unit /= 10;
            nanos = nanos.checked_add(i64::from(byte - b'0') * unit)?;
        }
    }
    if integer_digits == 0 && fraction_digits == 0 {
        return None;
    }
    Some(nanos)
}

fn is_decimal_separator(byte: u8) -> bool {
    byte == b'.' || byte == b','
}

/// Longer than any real pause or phase (11.6 days): a number this large is garbage, not a duration.
const MAX_DURATION_NS: i64 = 1_000_000_000_000_000;
/// Uptimes beyond ~3 years are not uptimes.
const MAX_UPTIME_NS: i64 = 100_000_000_000_000_000;

/// `4.736ms`, `0.018s`, `12us`, `1234ns` → nanoseconds.
fn duration_token(token: &[u8]) -> Option<i64> {
    let (number, scale) = if let Some(number) = token.strip_suffix(b"ms") {
        (number, 1_000_000)
    } else if let Some(number) = token.strip_suffix(b"us") {
        (number, 1_000)
    } else if let Some(number) = token.strip_suffix(b"ns") {
        (number, 1)
    } else if let Some(number) = token.strip_suffix(b"s") {
        (number, 1_000_000_000)
    } else {
        return None;
    };
    decimal_to_ns(number, scale).filter(|ns| *ns <= MAX_DURATION_NS)
}

/// `64M`, `3634.5K`, `0.0B`, `1G` → bytes.
fn size_token(token: &[u8]) -> Option<f64> {
    let (number, unit) = token.split_at(token.len().checked_sub(1)?);
    let multiplier = match unit {
        b"B" => 1.0,
        b"K" => 1024.0,
        b"M" => 1024.0 * 1024.0,
        b"G" => 1024.0 * 1024.0 * 1024.0,
        b"T" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    if number.is_empty()
        || !number
            .iter()
            .all(|b| b.is_ascii_digit() || is_decimal_separator(*b))
    {
        return None;
    }
    let value: f64 = as_str(number)?.replace(',', ".").parse().ok()?;
    let bytes = value * multiplier;
    // More than an exabyte is not a heap.
    (bytes.is_finite() && bytes < 1e18).then_some(bytes)
}

/// `6M->5M(64M)` (all collectors) or `30M(23%)->12M(9%)` (ZGC) or `24.0M(256.0M)->3634.5K(256.0M)` (JDK 8 G1).
fn heap_token(token: &[u8]) -> Option<HeapChange> {
    let arrow = find(token, b"->")?;
    let (left, right) = (&token[..arrow], &token[arrow + 2..]);
    let strip_paren = |part: &[u8]| -> Option<(f64, Option<f64>)> {
        match part.iter().position(|b| *b == b'(') {
            Some(open) => {
                let inner = part[open + 1..].strip_suffix(b")")?;
                let capacity = if inner.ends_with(b"%") {
                    None
                } else {
                    Some(size_token(inner)?)
                };
                Some((size_token(&part[..open])?, capacity))
            }
            None => Some((size_token(part)?, None)),
        }
    };
    let (before, _) = strip_paren(left)?;
    let (after, capacity) = strip_paren(right)?;
    Some(HeapChange {
        before,
        after,
        capacity,
    })
}

// ---------------------------------------------------------------------------------------------
// Unified logging (JDK 9+)
// ---------------------------------------------------------------------------------------------

/// What a line's decorators said, up to where they have been read.
#[derive(Default)]
struct DecoratorReading<'a> {
    stamp: Stamp,
    wall_clock: Option<&'a [u8]>,
    /// Bytes of the line read (decorators end there, or further on); 0 until one decorator is read.
    read_to: usize,
    /// Bytes through the last decorator that may tell a time.
    timed_len: usize,
}

impl<'a> DecoratorReading<'a> {
    /// Reads the line's remaining decorators and keeps what all of them say for the next line.
    fn read_whole(
        mut self,
        line: &'a [u8],
        previous: &mut Option<Decorators<'a>>,
    ) -> Option<Decorated<'a>> {
        self.read_on(line)?;
        if self.read_to == 0 {
            // The first bracket is no decorator.
            return None;
        }
        let message = trim_start(&line[self.read_to..]);
        *previous = Some(Decorators {
            text: &line[..line.len() - message.len()],
            timed_len: self.timed_len,
            stamp: self.stamp,
            wall_clock: self.wall_clock,
        });
        Some(Decorated {
            stamp: self.stamp,
            wall_clock: self.wall_clock,
            message,
        })
    }

    /// Reads decorators from `read_to` on until the message; `None` if a bracket never closes.
    fn read_on(&mut self, line: &'a [u8]) -> Option<()> {
        while line.get(self.read_to) == Some(&b'[') {
            let rest = &line[self.read_to..];
            // One pass finds the decorator's end, or a space first (a padded tag like `[gc,start    ]`,
            // or text in brackets that is no decorator): only then is the content looked at again.
            let inside = &rest[1..];
            let (close, spaced) = match memchr::memchr2(b']', b' ', inside) {
                Some(at) if inside[at] == b']' => (at + 1, false),
                Some(at) => (at + 2 + memchr::memchr(b']', &inside[at + 1..])?, true),
                None => return None,
            };
            let trimmed = trim_end(&rest[1..close]);
            if trimmed.is_empty() || (spaced && trimmed.contains(&b' ')) {
                break;
            }
            self.read_to += close + 1;
            if classify_decorator(trimmed, &mut self.stamp, &mut self.wall_clock) {
                self.timed_len = self.read_to;
            }
        }
        Some(())
    }
}

/// A unified-logging line split into its decorators and its message.
struct Decorated<'a> {
    stamp: Stamp,
    /// The `time`/`utctime` decorator, parsed only when needed.
    wall_clock: Option<&'a [u8]>,
    message: &'a [u8],
}

/// Reads what a decorator tells into `stamp` or `wall_clock`; true if it may tell a time (it starts
/// with a digit).
fn classify_decorator<'a>(
    content: &'a [u8],
    stamp: &mut Stamp,
    wall_clock: &mut Option<&'a [u8]>,
) -> bool {
    let last = content[content.len() - 1];
    if !content[0].is_ascii_digit() {
        // level, tags, hostname: nothing to keep.
        return false;
    }
    if content.len() >= 19 && content[4] == b'-' && content[10] == b'T' {
        *wall_clock = Some(content);
        return true;
    }
    // uptimemillis/uptimenanos below ~3 years, timemillis/timenanos (epoch) above.
    let uptime_or_epoch = |stamp: &mut Stamp, ns: i64| {
        if ns < MAX_UPTIME_NS {
            stamp.uptime_ns = Some(ns);
        } else {
            stamp.epoch_ns = Some(ns);
        }
    };
    if let Some(number) = content.strip_suffix(b"ms") {
        if let Some(ns) = decimal_to_ns(number, 1_000_000) {
            uptime_or_epoch(stamp, ns);
        }
        return true;
    }
    if let Some(number) = content.strip_suffix(b"ns") {
        if let Some(ns) = decimal_to_ns(number, 1) {
            uptime_or_epoch(stamp, ns);
        }
        return true;
    }
    if last == b's' {
        if let Some(nanos) = decimal_to_ns(&content[..content.len() - 1], 1_000_000_000) {
            if nanos < MAX_UPTIME_NS {
                stamp.uptime_ns = Some(nanos);
            }
        }
    }
    // pid, tid: plain numbers, nothing to keep.
    true
}

/// A unified message without its `GC(12) ` and generational ZGC `Y: ` / `O: ` prefixes.
struct GcMessage<'a> {
    body: &'a [u8],
    generational: bool,
    /// The id's digits, read only for the lines that record it (pauses).
    gc_id: Option<&'a [u8]>,
}

/// Strips `GC(12) ` and a generational ZGC `Y: ` / `O: ` prefix.
fn strip_gc_prefix(message: &[u8]) -> GcMessage<'_> {
    let mut rest = message;
    let mut gc_id = None;
    if let Some(after) = rest.strip_prefix(b"GC(") {
        // Nearly always digits and the bracket: found in the pass over the digits.
        let digits = digits_len(after);
        let close = match after.get(digits) {
            Some(b')') => Some(digits),
            _ => after.iter().position(|b| *b == b')'),
        };
        if let Some(close) = close {
            gc_id = Some(&after[..close]);
            rest = trim_start(&after[close + 1..]);
        }
    }
    // Generational ZGC: `Y:`/`O:` in major collections, `y:` in minor ones (JDK 21).
    let generational =
        rest.len() > 3 && matches!(rest[0], b'Y' | b'O' | b'y' | b'o') && rest[1] == b':';
    if generational {
        rest = trim_start(&rest[2..]);
    }
    GcMessage {
        body: rest,
        generational,
        gc_id,
    }
}

fn unified_message(message: &[u8]) -> Option<Event<'_>> {
    let GcMessage {
        body,
        generational,
        gc_id,
    } = strip_gc_prefix(message);
    match body.first() {
        Some(b'P') if starts_with(body, b"Pause ") => pause_message(&body[6..], gc_id),
        Some(b'C') if starts_with(body, b"Concurrent ") => Some(concurrent_message(body)),
        Some(b'S') if starts_with(body, b"Safepoint \"") => safepoint_message(&body[11..]),
        Some(b'T') if starts_with(body, STOPPED_TIME) => stopped_time_message(body),
        Some(b'E') if starts_with(body, b"Entering safepoint region: ") => as_str(&body[27..])
            .map(|op| Event::SafepointOperation(op.trim()))
            .or(Some(Event::Other)),
        Some(b'U') if starts_with(body, b"Using ") => Some(using_message(&body[6..])),
        Some(b'V') if starts_with(body, b"Version: ") => {
            let version = body[9..].split(|b| *b == b' ').next().unwrap_or_default();
            Some(as_str(version).map_or(Event::Other, Event::Version))
        }
        Some(b'M') if body == b"Mode: Generational" => Some(Event::Generational),
        Some(b'G' | b'M') if is_zgc_cycle(body) => {
            if starts_with(body, b"Major") || starts_with(body, b"Minor") {
                // Only generational ZGC names its cycles Major/Minor.
                return Some(zgc_cycle_with_flag(body));
            }
            Some(zgc_cycle(body))
        }
        _ if generational => Some(Event::Generational),
        _ => Some(Event::Other),
    }
}

fn is_zgc_cycle(body: &[u8]) -> bool {
    starts_with(body, b"Garbage Collection (")
        || starts_with(body, b"Major Collection (")
        || starts_with(body, b"Minor Collection (")
}

fn zgc_cycle_with_flag(body: &[u8]) -> Event<'_> {
    match zgc_cycle(body) {
        Event::Other => Event::Generational,
        event => event,
    }
}

/// `Garbage Collection (Warmup) 30M(23%)->12M(9%) [0.018s]`: the cycle's heap change and, from JDK 21,
/// its wall time (the whole cycle runs concurrently apart from its short pauses).
fn zgc_cycle(body: &[u8]) -> Event<'_> {
    let mut tokens = body.rsplit(|b| *b == b' ').filter(|t| !t.is_empty());
    let mut duration = None;
    let mut heap = None;
    if let Some(last) = tokens.next() {
        match duration_token(last) {
            Some(ns) => {
                duration = Some(ns);
                heap = tokens.next().and_then(heap_token);
            }
            None => heap = heap_token(last),
        }
    }
    match (duration, heap) {
        (Some(duration_ns), heap) => Event::Concurrent {
            duration_ns,
            heap,
            stamp_at: StampAt::End,
        },
        (None, Some(heap)) => Event::Heap(heap),
        (None, None) => Event::Other,
    }
}

fn using_message(rest: &[u8]) -> Event<'_> {
    let collector = match rest {
        b"G1" => "G1",
        b"Serial" => "Serial",
        b"Parallel" => "Parallel",
        b"The Z Garbage Collector" => "ZGC",
        b"Shenandoah" => "Shenandoah",
        b"Concurrent Mark Sweep" => "CMS",
        b"Epsilon" => "Epsilon",
        _ => return Event::Other,
    };
    Event::Collector(collector)
}

/// Pause names every JDK prints at its start without a duration; a duration-less pause line with
/// another name is a truncated line.
const KNOWN_PAUSES: &[&str] = &[
    "Young",
    "Mixed",
    "Full",
    "Remark",
    "Cleanup",
    "Initial Mark",
    "Init Mark",
    "Final Mark",
    "Init Update Refs",
    "Final Update Refs",
    "Final Roots",
    "Final Evac",
    "Init Evac",
    "Degenerated GC",
    "Mark Start",
    "Mark End",
    "Relocate Start",
    "Init Mark (unload classes)",
    "Final Mark (unload classes)",
];

/// `Young (Normal) (G1 Evacuation Pause) 6M->6M(64M) 4.736ms` (the text after `Pause `).
fn pause_message<'a>(rest: &'a [u8], gc_id: Option<&[u8]>) -> Option<Event<'a>> {
    let rest = trim_end(rest);
    let (without_duration, duration) = match rest.iter().rposition(|b| *b == b' ') {
        Some(space) => match duration_token(&rest[space + 1..]) {
            Some(ns) => (trim_end(&rest[..space]), Some(ns)),
            None => (rest, None),
        },
        None => (rest, None),
    };
    let Some(duration_ns) = duration else {
        // A start line (`Pause Young (Normal) (G1 Evacuation Pause)`) or a truncated one.
        if find(rest, b" us").is_some() {
            // Shenandoah's per-cycle statistics table (`Pause Init Mark (G)   118 us`), not a pause.
            return Some(Event::Other);
        }
        let name = as_str(rest)?;
        let complete = name.ends_with(')') || KNOWN_PAUSES.contains(&name);
        return complete.then_some(Event::Other);
    };
    let (name, heap) = match without_duration.iter().rposition(|b| *b == b' ') {
        Some(space) => match heap_token(&without_duration[space + 1..]) {
            Some(heap) => (trim_end(&without_duration[..space]), Some(heap)),
            None => (without_duration, None),
        },
        None => (without_duration, None),
    };
    Some(Event::Pause {
        kind: pause_kind(as_str(name)?),
        duration_ns,
        heap,
        stamp_at: StampAt::End,
        gc_id: gc_id.and_then(unsigned),
    })
}

/// Collapses a pause's full name to the kind reported in `by_kind`.
pub(crate) fn pause_kind(name: &str) -> &str {
    let name = name.trim();
    if name.starts_with("Young") {
        // G1: `Young (Mixed)` is a mixed collection; `(Normal)`, `(Concurrent Start)`, `(Prepare Mixed)`
        // and older `(Initial Mark)` are young ones.
        return if name.starts_with("Young (Mixed)") {
            "Mixed"
        } else {
            "Young"
        };
    }
    if name.starts_with("Initial Mark (G1") || name.starts_with("Mixed (G1") {
        // JDK 9/10 G1 spelled its young pauses this way.
        return if name.starts_with("Mixed") {
            "Mixed"
        } else {
            "Young"
        };
    }
    match name.find(" (") {
        Some(paren) => &name[..paren],
        None => name,
    }
}

/// `Concurrent Mark 2.788ms`, `Concurrent cleanup 48M->40M(64M) 0.123ms`; lines without a duration
/// mark a phase's start.
fn concurrent_message(body: &[u8]) -> Event<'_> {
    let body = trim_end(body);
    let Some(space) = body.iter().rposition(|b| *b == b' ') else {
        return Event::Other;
    };
    let Some(duration_ns) = duration_token(&body[space + 1..]) else {
        return Event::Other;
    };
    let before = trim_end(&body[..space]);
    let heap = before
        .iter()
        .rposition(|b| *b == b' ')
        .and_then(|at| heap_token(&before[at + 1..]));
    Event::Concurrent {
        duration_ns,
        heap,
        stamp_at: StampAt::End,
    }
}

/// JDK 17+: `G1CollectForAllocation", Time since last: N ns, Reaching safepoint: N ns, [Cleanup: N ns,]
/// At safepoint: N ns, [Leaving safepoint: N ns,] Total: N ns[, Threads: …]`.
fn safepoint_message(rest: &[u8]) -> Option<Event<'_>> {
    let quote = rest.iter().position(|b| *b == b'"')?;
    let operation = as_str(&rest[..quote])?;
    let fields = &rest[quote + 1..];
    let total_ns = ns_field(fields, b"Total: ")?;
    let ttsp_ns = ns_field(fields, b"Reaching safepoint: ");
    Some(Event::Safepoint {
        operation: Some(operation),
        total_ns,
        ttsp_ns,
    })
}

fn ns_field(fields: &[u8], name: &[u8]) -> Option<i64> {
    let at = find(fields, name)? + name.len();
    let value = &fields[at..];
    let end = value.iter().position(|b| !b.is_ascii_digit())?;
    if !starts_with(&value[end..], b" ns") {
        return None;
    }
    decimal_to_ns(&value[..end], 1).filter(|ns| *ns <= MAX_DURATION_NS)
}

/// JDK 8–16's -XX:+PrintGCApplicationStoppedTime and -XX:+PrintGCApplicationConcurrentTime.
const STOPPED_TIME: &[u8] = b"Total time for which application threads were stopped:";
const RUNNING_TIME: &[u8] = b"Application time:";

/// JDK 8–16: `Total time for which application threads were stopped: 0.0001986 seconds, Stopping
/// threads took: 0.0000483 seconds`. The total already includes the stopping time.
fn stopped_time_message(body: &[u8]) -> Option<Event<'_>> {
    let total_ns = seconds_field(body, b"stopped: ")?;
    let ttsp_ns = if find(body, b"Stopping threads took: ").is_some() {
        Some(seconds_field(body, b"Stopping threads took: ")?)
    } else {
        None
    };
    Some(Event::Safepoint {
        operation: None,
        total_ns,
        ttsp_ns,
    })
}

fn seconds_field(body: &[u8], name: &[u8]) -> Option<i64> {
    let at = find(body, name)? + name.len();
    let value = &body[at..];
    let end = value
        .iter()
        .position(|b| !(b.is_ascii_digit() || is_decimal_separator(*b)))?;
    if !starts_with(&value[end..], b" seconds") {
        return None;
    }
    decimal_to_ns(&value[..end], 1_000_000_000).filter(|ns| *ns <= MAX_DURATION_NS)
}

// ---------------------------------------------------------------------------------------------
// JDK 8 -XX:+PrintGCDetails
// ---------------------------------------------------------------------------------------------

fn starts_with_date_stamp(text: &[u8]) -> bool {
    text.len() >= 19 && text[0].is_ascii_digit() && text[4] == b'-' && text[10] == b'T'
}

/// `2016-02-03T12:34:56.789+0100: 1.234: [GC …`: both stamps optional. Returns `None` when the line
/// is not JDK 8 shaped, `Some(None)` when it is but cannot be read (truncated), `Some(Some(line))` otherwise.
#[allow(clippy::option_option)]
fn jdk8_line(line: &[u8]) -> Option<Option<Line<'_>>> {
    let (stamp, mut rest) = jdk8_stamps(line)?;
    let stamped = !stamp.is_empty();
    if stamped && rest.first() == Some(&b'#') {
        // -XX:+PrintGCID: `#12: [GC …`
        if let Some(colon) = find(rest, b": ") {
            rest = &rest[colon + 2..];
        }
    }
    let event = jdk8_message(rest, stamped)?;
    Some(event.map(|event| Line {
        stamp,
        event,
        format: Format::Jdk8,
    }))
}

/// Reads the stamps that open a JDK 8 line: the date (`-XX:+PrintGCDateStamps`) and the uptime
/// (`-XX:+PrintGCTimeStamps`), each followed by `: `, and returns the first of each with the rest of
/// the line. The JVM writes a stamp and its `: ` separately but a message with its newline at once,
/// so two threads stamping at once interleave their pieces in any order, and a separator may land
/// on the other thread's line: `D1: D2: U1U2: : [Full GC …`, `D1D2: : U1: U2: [GC …`,
/// `D1D2: U2: [GC …` followed by `: U1: [GC …`, or `D1: U1: D2[GC …` followed by `: U2: [GC …`.
/// The stamps are read as a run of pieces that ends with a separator, or that holds one and ends
/// where a message starts (`[`). `None` if the line starts with a stamp but is not such a run.
fn jdk8_stamps(line: &[u8]) -> Option<(Stamp, &[u8])> {
    let mut stamp = Stamp::default();
    let mut rest = line;
    let mut stamps = 0;
    let mut separators = 0;
    let mut ends_with_separator = false;
    loop {
        if let Some(after) = rest.strip_prefix(b": ") {
            rest = after;
            separators += 1;
            ends_with_separator = true;
            continue;
        }
        if starts_with_date_stamp(rest) {
            let len = date_stamp_len(rest)?;
            let epoch_ns = parse_iso8601(&rest[..len])?;
            stamp.epoch_ns = stamp.epoch_ns.or(Some(epoch_ns));
            rest = &rest[len..];
        } else if rest.first().is_some_and(u8::is_ascii_digit) {
            let len = uptime_len(rest);
            let uptime_ns =
                Some(decimal_to_ns(&rest[..len], 1_000_000_000)?).filter(|ns| *ns < MAX_UPTIME_NS);
            stamp.uptime_ns = stamp.uptime_ns.or(uptime_ns);
            rest = &rest[len..];
        } else {
            break;
        }
        stamps += 1;
        ends_with_separator = false;
    }
    let message_follows = separators > 0 && rest.first() == Some(&b'[');
    if stamps > 0 && (ends_with_separator || message_follows) {
        return Some((stamp, rest));
    }
    if stamps == 0 && is_safepoint_report(rest) {
        // Its stamps went to another thread's line, leaving their separators here.
        return Some((Stamp::default(), rest));
    }
    // Unstamped: a collection's piece such as `: 1234K->…`, or no stamp-like start at all.
    (stamps == 0 || starts_with(line, b": ")).then_some((Stamp::default(), line))
}

/// The length of the ISO 8601 time at the start of `text` (`2016-02-03T12:34:56.789+0100`, as
/// [`starts_with_date_stamp`] found it), read without looking for the `: ` after it, which another
/// thread's stamp may have pushed away.
fn date_stamp_len(text: &[u8]) -> Option<usize> {
    let mut len = 19;
    if text.get(len) == Some(&b'.') {
        len += 1 + digits_len(&text[len + 1..]);
    }
    match text.get(len) {
        Some(b'Z') => len += 1,
        Some(b'+' | b'-') => {
            let offset = &text[len + 1..];
            len += 1 + match offset {
                [_, _, b':', _, _, ..] => 5,
                _ => 4,
            };
        }
        _ => {}
    }
    (len <= text.len()).then_some(len)
}

/// The length of the uptime at the start of `text` (digits, a decimal separator, digits). JDK 8
/// prints three decimals, so a fraction run on into a second uptime (`79244.87279244.872`) or a
/// date ends after its third digit.
fn uptime_len(text: &[u8]) -> usize {
    let integer = digits_len(text);
    if !text.get(integer).copied().is_some_and(is_decimal_separator) {
        return integer;
    }
    let fraction = digits_len(&text[integer + 1..]);
    let ends_here = matches!(text.get(integer + 1 + fraction), None | Some(b':'));
    integer + 1 + if ends_here { fraction } else { fraction.min(3) }
}

fn digits_len(text: &[u8]) -> usize {
    text.iter().take_while(|b| b.is_ascii_digit()).count()
}

fn is_safepoint_report(message: &[u8]) -> bool {
    starts_with(message, STOPPED_TIME) || starts_with(message, RUNNING_TIME)
}

#[allow(clippy::option_option)]
fn jdk8_message(message: &[u8], stamped: bool) -> Option<Option<Event<'_>>> {
    if starts_with(message, STOPPED_TIME) {
        return Some(stopped_time_message(message));
    }
    if starts_with(message, RUNNING_TIME) {
        return Some(Some(Event::Other));
    }
    if starts_with(message, b"[GC") || starts_with(message, b"[Full GC") {
        return Some(jdk8_collection(message));
    }
    if starts_with(message, b"[CMS-concurrent-") {
        return Some(Some(cms_concurrent(message)));
    }
    if starts_with(message, b"[Pause ") || starts_with(message, b"[Concurrent ") {
        return Some(jdk8_shenandoah(message));
    }
    if let Some(heap) = jdk8_g1_heap_detail(message) {
        return Some(Some(heap));
    }
    if starts_with(message, b"Java HotSpot(TM)") || starts_with(message, b"OpenJDK") {
        let version = find(message, b"JRE (")
            .and_then(|at| {
                let tail = &message[at + 5..];
                tail.iter()
                    .position(|b| *b == b')')
                    .map(|close| &tail[..close])
            })
            .and_then(as_str);
        return Some(Some(version.map_or(Event::Other, Event::Version)));
    }
    if starts_with(message, b"CommandLine flags:") {
        return Some(Some(jdk8_collector_flags(message)));
    }
    if is_jdk8_detail_line(message) {
        return Some(Some(Event::Other));
    }
    if is_collection_piece(message, stamped) {
        return Some(Some(Event::PauseContinued(message)));
    }
    // A stamped line we have no use for (`[GC concurrent-mark-start]` is handled above).
    stamped.then_some(Some(Event::Other))
}

/// Output that flags print inside a collection's text, on lines of their own: understood, nothing
/// to count. Heap dumps (`-XX:+PrintHeapAtGC`, whose generation lines carry unbalanced
/// `[0x…, 0x…)` address ranges), tenuring tables, free-list and CMS initiation statistics, adaptive
/// size decisions, JVM banners.
fn is_jdk8_detail_line(message: &[u8]) -> bool {
    if message.first().is_some_and(u8::is_ascii_whitespace) {
        return find(message, b"[0x").is_some();
    }
    JDK8_DETAIL_PREFIXES
        .iter()
        .any(|prefix| starts_with(message, prefix))
        || is_free_list_rate_line(message)
        || is_shenandoah_backport_status(message)
}

const JDK8_DETAIL_PREFIXES: [&[u8]; 32] = [
    // -XX:+PrintHeapAtGC
    b"{Heap",
    b"}",
    b"Heap",
    b"Memory: ",
    // -XX:+PrintTenuringDistribution
    b"Desired survivor size ",
    b"- age ",
    // -XX:+PrintAdaptiveSizePolicy with Parallel
    b"AdaptiveSize",
    b"PSAdaptiveSize",
    // -XX:PrintFLSStatistics=1 (CMS free lists, before and after each collection)
    b"Before GC:",
    b"After GC:",
    b"Statistics for BinaryTreeDictionary:",
    b"Statistics for IndexedFreeLists:",
    b"---",
    b"Total Free Space: ",
    b"Max   Chunk Size: ",
    b"Number of Blocks: ",
    b"Av.  Block  Size: ",
    b"Tree      Height: ",
    b"CMS: Large ",
    // -XX:+PrintCMSInitiationStatistics
    b"CMSCollector shouldConcurrentCollect: ",
    b"time_until_cms_gen_full ",
    b"free=",
    b"contiguous_available=",
    b"promotion_rate=",
    b"cms_allocation_rate=",
    b"occupancy=",
    b"initiatingOccupancy=",
    b"initiatingPermOccupancy=",
    b"cms_time_since_begin=",
    b"cms_time_since_end=",
    b"metadata initialized ",
    b" gc0_alpha=",
];

/// -XX:PrintFLSStatistics=2: `size[12] : demand: 8, old_rate: 0.000000, …`.
fn is_free_list_rate_line(message: &[u8]) -> bool {
    starts_with(message, b"size[") && find(message, b"] : demand: ").is_some()
}

/// A line that continues a collection's text: unstamped, starting with `: `, `, `, blanks
/// (` (concurrent mode failure): …`, ` [PSYoungGen: …] …, N secs]`, G1's detail lines) or a
/// bracketed word (`[PSYoungGen: …`); or stamped and starting with a bracket that is not a
/// collection or concurrent phase of its own (`[ParNew`, `[Rescan (parallel) …`, `[SoftReference, …`).
fn is_collection_piece(message: &[u8], stamped: bool) -> bool {
    if stamped {
        return starts_with(message, b"[");
    }
    starts_with(message, b":")
        || starts_with(message, b",")
        || message.first().is_some_and(u8::is_ascii_whitespace)
        || (starts_with(message, b"[") && message.get(1).is_some_and(u8::is_ascii_alphabetic))
}

/// The JDK 8 Shenandoah backport's set-up and heuristics lines (`Trigger: …`, `Free: …`), unstamped.
fn is_shenandoah_backport_status(message: &[u8]) -> bool {
    const PREFIXES: [&[u8]; 15] = [
        b"Regions: ",
        b"Humongous object threshold: ",
        b"Max TLAB size: ",
        b"GC threads: ",
        b"Reference processing: ",
        b"Heuristics ergonomically sets ",
        b"Shenandoah heuristics: ",
        b"Initialize Shenandoah heap: ",
        b"Pacer for ",
        b"Trigger: ",
        b"Free: ",
        b"Evacuation Reserve: ",
        b"Cancelling GC: ",
        b"Cancelling concurrent GC: ",
        b"Failed to allocate ",
    ];
    PREFIXES.iter().any(|prefix| starts_with(message, prefix))
}

/// The text shows the old generation collected: a young collection that fell back to it (CMS
/// concurrent mode failure, Serial's young collection turning into a Tenured one) ran a full
/// collection inside its pause (see [`jdk8_young_kind`]).
fn collected_old_generation(body: &[u8]) -> bool {
    find(body, b"[CMS:").is_some()
        || find(body, b"[Tenured:").is_some()
        || find(body, b"(concurrent mode failure)").is_some()
}

fn jdk8_collector_flags(message: &[u8]) -> Event<'_> {
    for (flag, collector) in [
        (&b"-XX:+UseG1GC"[..], "G1"),
        (b"-XX:+UseConcMarkSweepGC", "CMS"),
        (b"-XX:+UseShenandoahGC", "Shenandoah"),
        (b"-XX:+UseParallelOldGC", "Parallel"),
        (b"-XX:+UseParallelGC", "Parallel"),
        (b"-XX:+UseSerialGC", "Serial"),
    ] {
        if find(message, flag).is_some() {
            return Event::Collector(collector);
        }
    }
    Event::Other
}

/// `   [Eden: 24.0M(24.0M)->0.0B(21.0M) Survivors: 0.0B->3072.0K Heap: 24.0M(256.0M)->3634.5K(256.0M)]`
fn jdk8_g1_heap_detail(message: &[u8]) -> Option<Event<'_>> {
    let trimmed = trim_start(message);
    if !starts_with(trimmed, b"[Eden: ") {
        return None;
    }
    let at = find(trimmed, b"Heap: ")? + 6;
    let token = trimmed[at..].strip_suffix(b"]")?;
    let token = token.split(|b| *b == b' ').next()?;
    Some(heap_token(token).map_or(Event::Other, Event::Heap))
}

/// `[GC (Allocation Failure) [PSYoungGen: …] 33280K->5112K(125952K), 0.0069421 secs] [Times: …]` and
/// its Serial/ParNew/CMS/G1/Full variants; a collection whose bracket stays open on this line
/// begins here and goes on over later lines.
fn jdk8_collection(message: &[u8]) -> Option<Event<'_>> {
    if starts_with(message, b"[GC concurrent-") {
        let body = match find(message, b"[Times:") {
            Some(at) => &message[..at],
            None => message,
        };
        if find(body, b"-start]").is_some() {
            return Some(Event::Other);
        }
        let duration_ns = last_secs(body)?;
        return Some(Event::Concurrent {
            duration_ns,
            heap: None,
            stamp_at: StampAt::End,
        });
    }
    let progress = continue_collection(message, 0);
    let kind = jdk8_kind(message, &progress);
    match progress.closed_after_ns {
        Some(duration_ns) => Some(Event::Pause {
            kind,
            duration_ns,
            heap: progress.heap,
            stamp_at: StampAt::Start,
            gc_id: None,
        }),
        None if progress.open_brackets > 0 => Some(Event::PauseBegin { kind, progress }),
        // Closed without a duration: not a collection line we can read.
        None => None,
    }
}

/// Where a JDK 8 collection's text stands after a piece of it: the collection's bracket is closed
/// by the `]` that brings the depth back to zero, and its duration is the `, N secs` just before it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CollectionProgress {
    /// Brackets still open (the collection's own counts as one); zero once closed.
    pub open_brackets: i32,
    /// The collection's duration, once its bracket has closed.
    pub closed_after_ns: Option<i64>,
    /// The whole-heap transition: the last `A->B(C)` directly inside the collection's bracket.
    pub heap: Option<HeapChange>,
    /// The text shows the old generation collected (`[CMS:`, `[Tenured:`, concurrent mode failure).
    pub old_generation: bool,
    /// The text shows a young collection that failed to promote (`(promotion failed)`).
    pub promotion_failed: bool,
}

/// Reads a piece of a JDK 8 collection's text, starting with `open_brackets` brackets open.
/// Output printed into the middle of the line by other flags is skipped: a `{Heap before GC` dump
/// ends the piece; free-list and initiation statistics words carry no brackets.
pub fn continue_collection(piece: &[u8], open_brackets: i32) -> CollectionProgress {
    let piece = match find(piece, b"{Heap") {
        Some(at) => &piece[..at],
        None => piece,
    };
    let mut progress = CollectionProgress {
        open_brackets,
        closed_after_ns: None,
        heap: None,
        old_generation: collected_old_generation(piece),
        promotion_failed: failed_promotion(piece),
    };
    let mut index = 0;
    while index < piece.len() {
        match piece[index] {
            b'[' => progress.open_brackets += 1,
            b']' => {
                progress.open_brackets -= 1;
                if progress.open_brackets <= 0 {
                    progress.open_brackets = 0;
                    progress.closed_after_ns = secs_before(&piece[..index]);
                    progress.old_generation = collected_old_generation(&piece[..index]);
                    progress.promotion_failed = failed_promotion(&piece[..index]);
                    return progress;
                }
            }
            byte if byte.is_ascii_digit() && progress.open_brackets == 1 => {
                let token = heap_token_at(piece, index);
                if let Some(heap) = heap_token(token) {
                    progress.heap = Some(heap);
                }
                index += token.len().max(1);
                continue;
            }
            _ => {}
        }
        index += 1;
    }
    progress
}

/// The word starting at `start` (a digit), cut after the `)` that closes an `A->B(C)` capacity, so
/// that words glued on by other output (`36167K(4980736K)After GC:`) do not hide the transition.
fn heap_token_at(text: &[u8], start: usize) -> &[u8] {
    let rest = &text[start..];
    let end = rest
        .iter()
        .position(|b| matches!(b, b' ' | b',' | b'[' | b']'))
        .unwrap_or(rest.len());
    let word = &rest[..end];
    let Some(arrow) = find(word, b"->") else {
        return word;
    };
    match word[arrow..].iter().position(|b| *b == b')') {
        Some(close) => &word[..arrow + close + 1],
        None => word,
    }
}

/// The `N` of a `, N secs` that ends `text` (the text before a closing bracket).
fn secs_before(text: &[u8]) -> Option<i64> {
    let number = trim_end(text).strip_suffix(b" secs")?;
    let start = number
        .iter()
        .rposition(|b| !(b.is_ascii_digit() || is_decimal_separator(*b)))
        .map_or(0, |at| at + 1);
    decimal_to_ns(&number[start..], 1_000_000_000).filter(|ns| *ns <= MAX_DURATION_NS)
}

fn jdk8_kind(body: &[u8], progress: &CollectionProgress) -> &'static str {
    let young_inside = contains_young_collection(body);
    if starts_with(body, b"[Full GC") {
        "Full"
    } else if starts_with(body, b"[GC (CMS Initial Mark)")
        || is_jdk7_cms_phase(body, b"CMS-initial-mark")
    {
        "Initial Mark"
    } else if starts_with(body, b"[GC remark")
        || is_jdk7_cms_phase(body, b"CMS-remark")
        // A CMS remark opens with its `[YG occupancy: …]`, whatever cuts it afterwards.
        || find(body, b"[YG occupancy:").is_some()
    {
        if young_inside {
            REMARK_WITH_SCAVENGE
        } else {
            REMARK
        }
    } else if starts_with(body, b"[GC (CMS Final Remark)") && !young_inside {
        REMARK
    } else if starts_with(body, b"[GC cleanup") {
        "Cleanup"
    } else if starts_with(body, b"[GC pause") && find(body, b"(mixed)").is_some() {
        "Mixed"
    } else {
        // Also -XX:+CMSScavengeBeforeRemark's young collection printed on a line of its own, under
        // the remark's cause (`[GC (CMS Final Remark) 20.000: [ParNew: …`).
        jdk8_young_kind(progress.promotion_failed, progress.old_generation)
    }
}

/// A CMS final remark.
pub(crate) const REMARK: &str = "Remark";
/// A CMS final remark that ran the young collection of -XX:+CMSScavengeBeforeRemark inside its
/// pause: one stop, named after both.
pub(crate) const REMARK_WITH_SCAVENGE: &str = "Remark (with scavenge)";

/// The kind of a JDK 8 young collection. One that collected the old generation inside its pause
/// (ParNew or DefNew, then `[CMS:`, `[Tenured:` or a concurrent mode failure) is one stop named
/// after both, as unified logs name the nested case (`Young + Full`); `(promotion failed)` says
/// why the old generation had to be collected, when the log says so.
pub(crate) fn jdk8_young_kind(promotion_failed: bool, old_generation: bool) -> &'static str {
    match (promotion_failed, old_generation) {
        (false, false) => "Young",
        (true, false) => "Young (promotion failed)",
        (false, true) => "Young + Full",
        (true, true) => "Young (promotion failed) + Full",
    }
}

/// Whether a kind from [`jdk8_kind`] is a young collection (of any of [`jdk8_young_kind`]'s names).
pub(crate) fn is_jdk8_young_kind(kind: &str) -> bool {
    kind.starts_with("Young")
}

/// Whether a kind from [`jdk8_kind`] is a CMS final remark, with or without a scavenge inside.
pub(crate) fn is_remark_kind(kind: &str) -> bool {
    kind == REMARK || kind == REMARK_WITH_SCAVENGE
}

/// The text of a young collection of ParNew or Serial (DefNew) inside the collection's text.
fn contains_young_collection(body: &[u8]) -> bool {
    find(body, b"[ParNew").is_some() || find(body, b"[DefNew").is_some()
}

/// `[ParNew (promotion failed): …`, `[ParNew (0: promotion failure size = 11863)  (promotion failed)`.
fn failed_promotion(body: &[u8]) -> bool {
    find(body, b"(promotion failed)").is_some()
}

/// Without PrintGCCause (JDK 7) CMS's pauses read `[GC [1 CMS-initial-mark: …` and
/// `[GC[YG occupancy: …] … [1 CMS-remark: …`.
fn is_jdk7_cms_phase(body: &[u8], phase: &[u8]) -> bool {
    !starts_with(body, b"[GC (") && find(body, phase).is_some()
}

/// The duration at the end of the outermost bracket: the last `, N secs]`.
fn last_secs(body: &[u8]) -> Option<i64> {
    last_secs_unchecked(body).filter(|ns| *ns <= MAX_DURATION_NS)
}

fn last_secs_unchecked(body: &[u8]) -> Option<i64> {
    let end = rfind(body, b" secs]")?;
    let number_start = body[..end]
        .iter()
        .rposition(|b| !(b.is_ascii_digit() || is_decimal_separator(*b)))
        .map_or(0, |at| at + 1);
    decimal_to_ns(&body[number_start..end], 1_000_000_000)
}

/// `[CMS-concurrent-mark: 0.003/0.003 secs]`: CPU time / wall time; `-start]` lines open a phase.
fn cms_concurrent(message: &[u8]) -> Event<'_> {
    let Some(colon) = find(message, b": ") else {
        return Event::Other;
    };
    let figures = &message[colon + 2..];
    let Some(end) = find(figures, b" secs]") else {
        return Event::Other;
    };
    let wall = match figures[..end].iter().position(|b| *b == b'/') {
        Some(slash) => &figures[slash + 1..end],
        None => &figures[..end],
    };
    match decimal_to_ns(wall, 1_000_000_000).filter(|ns| *ns <= MAX_DURATION_NS) {
        Some(duration_ns) => Event::Concurrent {
            duration_ns,
            heap: None,
            stamp_at: StampAt::End,
        },
        None => Event::Other,
    }
}

/// JDK 8 Shenandoah backport: `[Pause Init Mark, 0.543 ms]`, `[Pause Final Mark 1992M->1096M(4096M), 0.993 ms]`,
/// `[Concurrent marking 1990M->1992M(4096M), 7.442 ms]`.
fn jdk8_shenandoah(message: &[u8]) -> Option<Event<'_>> {
    let inner = trim_end(message).strip_prefix(b"[")?;
    let inner = inner.strip_suffix(b"]")?;
    if inner.ends_with(b", start") {
        return Some(Event::Other);
    }
    let comma = rfind(inner, b", ")?;
    let (head, duration) = (&inner[..comma], &inner[comma + 2..]);
    let duration_ns = match duration.strip_suffix(b" ms") {
        Some(number) => decimal_to_ns(number, 1_000_000)?,
        None => decimal_to_ns(duration.strip_suffix(b" secs")?, 1_000_000_000)?,
    };
    if duration_ns > MAX_DURATION_NS {
        return None;
    }
    let (name, heap) = match head.iter().rposition(|b| *b == b' ') {
        Some(space) => match heap_token(&head[space + 1..]) {
            Some(heap) => (&head[..space], Some(heap)),
            None => (head, None),
        },
        None => (head, None),
    };
    if let Some(pause) = name.strip_prefix(b"Pause ") {
        return Some(Event::Pause {
            kind: pause_kind(as_str(pause)?),
            duration_ns,
            heap,
            stamp_at: StampAt::End,
            gc_id: None,
        });
    }
    // Unlike JDK 8's own collection lines, the backport writes a phase's line (and its stamp) when the
    // phase ends: real logs show `0.234: [Pause Init Mark, start]` … `0.236: [Pause Init Mark, 1.983 ms]`.
    Some(Event::Concurrent {
        duration_ns,
        heap,
        stamp_at: StampAt::End,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_read_with_the_previous_lines_decorators_reads_as_alone() {
        let lines: &[&[u8]] = &[
            b"[2026-11-22T00:08:14.294+0000][0.423s][info][gc,phases   ] GC(0)   Other: 1.0ms",
            b"[2026-11-22T00:08:14.294+0000][0.423s][info][gc,phases   ] GC(0)   Merge Heap Roots: 0.1ms",
            b"[2026-11-22T00:08:14.294+0000][0.423s][info][gc          ] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 24M->5M(64M) 5.634ms",
            b"[2026-11-22T00:08:14.294+0000][0.423s][info][gc          ][extra] GC(1) Pause Full (System.gc()) 30M->10M(64M) 12.5ms",
            b"[2026-11-22T00:08:14.294+0000][0.423s][info][gc          ]",
            b"[2026-11-22T00:08:14.294+0000][0.423s][info][gc          ]   GC(2) Pause Remark 20M->20M(64M) 1.2ms",
            b"[2026-11-22T00:08:14.294+0000][0.423s][info][gc          ]x",
            b"[2026-11-22T00:08:14.294+0000][0.423s][info][gc          ][safepoint] GC(6) Pause Young (Normal) (G1 Evacuation Pause) 24M->5M(64M) 2ms",
            b"[2026-11-22T00:08:14.294+0000][0.423s][info][gc          ]x",
            b"[2026-11-22T00:08:14.294+0000][0.423s][info][gc          ] [not a decorator] text",
            b"[2026-11-22T00:08:14.294+0000][0.423s][info][gc          ] GC(3) Pause Cleanup 20M->20M(64M) 0.1ms",
            b"[2026-11-22T00:08:14.294+0000][0.423s]",
            b"[2026-11-22T00:08:14.294+0000][0.4235s][info][gc] GC(4) Pause Young (Normal) (G1 Evacuation Pause) 24M->5M(64M) 2ms",
            b"[0.5s][info][gc] GC(5) Pause Young (Normal) (G1 Evacuation Pause) 24M->5M(64M) 2ms",
            b"[0.5s][info][gc] GC(5) Pause Young (Normal) (G1 Evacuation Pause) 24M->5M(64M) 2ms",
            b"not unified at all",
            b"[0.5s][info][gc] Using G1",
            // The same time with other tags, a pid, a second time, or no decorator after it.
            b"[2026-11-22T00:08:15.001+0000][1.130s][info][gc,heap     ] GC(7) Eden regions: 6->0(3)",
            b"[2026-11-22T00:08:15.001+0000][1.130s][info][gc,metaspace] GC(7) Metaspace: 1K->1K(2K)",
            b"[2026-11-22T00:08:15.001+0000][1.130s][info][gc          ] GC(7) Pause Young (Normal) (G1 Evacuation Pause) 24M->5M(64M) 2ms",
            b"[2026-11-22T00:08:15.001+0000][1.130s][info][gc][4242] GC(8) Pause Remark 20M->20M(64M) 1.2ms",
            b"[2026-11-22T00:08:15.001+0000][1.130s][4242][info][gc] GC(8) Pause Cleanup 20M->20M(64M) 0.1ms",
            b"[2026-11-22T00:08:15.001+0000][1.130s][info][gc] GC(8) Pause Cleanup 20M->20M(64M) 0.1ms",
            b"[2026-11-22T00:08:15.001+0000][1.130s][info][1.140s] GC(9) Pause Young (Normal) (G1 Evacuation Pause) 24M->5M(64M) 2ms",
            b"[2026-11-22T00:08:15.001+0000][1.130s][info][gc] GC(9) Pause Young (Normal) (G1 Evacuation Pause) 24M->5M(64M) 2ms",
            b"[2026-11-22T00:08:15.001+0000][1.130s][2026-11-22T00:08:16.001+0000][gc] GC(9) Pause Full (System.gc()) 30M->10M(64M) 12.5ms",
            b"[2026-11-22T00:08:15.001+0000][1.130s] GC(10) Pause Full (System.gc()) 30M->10M(64M) 12.5ms",
            b"[2026-11-22T00:08:15.001+0000][1.130s][info][gc",
            b"[2026-11-22T00:08:15.001+0000][1.130s][info][gc] GC(11) Pause Full (System.gc()) 30M->10M(64M) 12.5ms",
            b"[2026-11-22T00:08:15.001+0000][1.130s][info][not a tag] text",
            b"[2026-11-22T00:08:15.001+0000][1.1305s][info][gc] GC(12) Pause Full (System.gc()) 30M->10M(64M) 12.5ms",
        ];
        let mut previous = None;
        for line in lines {
            assert_eq!(
                parse_next_line_lazily(line, &mut previous),
                parse_line_lazily(line),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn decimal_parsing_is_exact() {
        let cases: &[(&str, i64, Option<i64>)] = &[
            ("4.736", 1_000_000, Some(4_736_000)),
            ("0.0001986", 1_000_000_000, Some(198_600)),
            ("12", 1, Some(12)),
            ("0.423", 1_000_000_000, Some(423_000_000)),
            ("12,5", 1_000_000, Some(12_500_000)),
            ("7", 1, Some(7)),
            (".5", 1_000_000_000, Some(500_000_000)),
            ("5.", 1_000, Some(5_000)),
            ("1.0000000019", 1_000_000_000, Some(1_000_000_001)),
            ("123456789012345", 1, Some(123_456_789_012_345)),
            ("1234567890123456", 1, None),
            ("99999999999999", 1_000_000_000, None),
            ("", 1, None),
            (".", 1, None),
            ("1.2.3", 1, None),
            ("1a", 1, None),
            ("1.5x", 1, None),
            ("-1", 1, None),
        ];
        for (text, scale, expected) in cases {
            assert_eq!(
                decimal_to_ns(text.as_bytes(), *scale),
                *expected,
                "{text} at scale {scale}"
            );
        }
    }

    #[test]
    fn unsigned_reads_what_str_parse_reads() {
        let cases = [
            "0",
            "12",
            "+7",
            "",
            "+",
            "-1",
            "1a",
            " 1",
            "18446744073709551615",
            "18446744073709551616",
            "007",
            "12 ",
        ];
        for case in cases {
            assert_eq!(
                super::unsigned(case.as_bytes()),
                case.parse::<u64>().ok(),
                "{case:?}"
            );
        }
    }

    fn event(line: &str) -> Event<'_> {
        parse_line(line.as_bytes()).expect("understood").event
    }

    #[test]
    fn unified_pause_with_cassandra_decorators() {
        let line = "[2026-11-22T00:08:40.564+0000][0.433s][15980][15989][info ] GC(0) Pause Young (Concurrent Start) (G1 Humongous Allocation) 34M->33M(64M) 5.328ms";
        let parsed = parse_line(line.as_bytes()).unwrap();
        assert_eq!(parsed.stamp.uptime_ns, Some(433_000_000));
        assert!(parsed.stamp.epoch_ns.is_some());
        match parsed.event {
            Event::Pause {
                kind,
                duration_ns,
                heap,
                gc_id,
                ..
            } => {
                assert_eq!(kind, "Young");
                assert_eq!(gc_id, Some(0));
                assert_eq!(duration_ns, 5_328_000);
                assert_eq!(heap.unwrap().after, 33.0 * 1024.0 * 1024.0);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_gc_id_is_read_whatever_follows_its_digits() {
        fn id_of(message: &str) -> (Option<u64>, &str) {
            match event(message) {
                Event::Pause { gc_id, kind, .. } => (gc_id, kind),
                other => panic!("{message}: {other:?}"),
            }
        }
        assert_eq!(
            id_of("GC(12345) Pause Full 8M->7M(64M) 1.5ms"),
            (Some(12345), "Full")
        );
        assert_eq!(
            id_of("GC(+7) Pause Full 8M->7M(64M) 1.5ms"),
            (Some(7), "Full")
        );
        // Not a number: the prefix still goes, without an id.
        assert_eq!(
            id_of("GC(12a) Pause Full 8M->7M(64M) 1.5ms"),
            (None, "Full")
        );
        assert_eq!(id_of("GC() Pause Full 8M->7M(64M) 1.5ms"), (None, "Full"));
        assert_eq!(
            id_of("GC(99999999999999999999) Pause Full 8M->7M(64M) 1.5ms"),
            (None, "Full")
        );
        // An id without its bracket: the first `)` further on (the heap's) ends the prefix, and
        // what is left is no pause.
        assert!(matches!(
            event("GC(12 Pause Full 8M->7M(64M) 1.5ms"),
            Event::Other
        ));
    }

    #[test]
    fn pause_kinds() {
        assert_eq!(pause_kind("Young (Mixed) (G1 Evacuation Pause)"), "Mixed");
        assert_eq!(
            pause_kind("Young (Normal) (G1 Evacuation Pause) (Evacuation Failure: Allocation)"),
            "Young"
        );
        assert_eq!(pause_kind("Full (System.gc())"), "Full");
        assert_eq!(pause_kind("Mark Start (Major)"), "Mark Start");
        assert_eq!(pause_kind("Init Mark (unload classes)"), "Init Mark");
        assert_eq!(pause_kind("Degenerated GC (Mark)"), "Degenerated GC");
        assert_eq!(pause_kind("Final Roots"), "Final Roots");
    }

    #[test]
    fn safepoint_formats() {
        let new = "[0.156s][info][safepoint   ] Safepoint \"G1CollectForAllocation\", Time since last: 99129529 ns, Reaching safepoint: 4569 ns, Cleanup: 8139 ns, At safepoint: 4795535 ns, Total: 4808243 ns";
        assert_eq!(
            event(new),
            Event::Safepoint {
                operation: Some("G1CollectForAllocation"),
                total_ns: 4_808_243,
                ttsp_ns: Some(4569)
            }
        );
        let old = "[0.078s][info] Total time for which application threads were stopped: 0.0001986 seconds, Stopping threads took: 0.0000483 seconds";
        assert_eq!(
            event(old),
            Event::Safepoint {
                operation: None,
                total_ns: 198_600,
                ttsp_ns: Some(48_300)
            }
        );
        assert!(parse_line(
            b"[0.078s][info] Total time for which application threads were stopped: 0.00019"
        )
        .is_none());
    }

    #[test]
    fn truncated_and_garbage_lines_are_not_understood() {
        assert!(parse_line(b"[0.433s][info][gc] GC(0) Pause Yo").is_none());
        assert!(parse_line(b"[2026-11-22T00:0").is_none());
        assert!(parse_line(b"hello world").is_none());
        assert!(
            parse_line(b"[0.433s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause)")
                .is_some()
        );
    }

    #[test]
    fn a_torn_collection_closes_at_the_bracket_that_opened_it() {
        // -XX:+CMSScavengeBeforeRemark on one line: the young collection's `, 0.0732500 secs]` and
        // its [Times: …] sit inside the remark, which closes with `, 0.2021234 secs]`.
        let remark = b"[GC (CMS Final Remark) [YG occupancy: 240000 K (368640 K)]30.000: [GC (CMS Final Remark) 30.000: [ParNew: 240000K->30000K(368640K), 0.0731000 secs] 2110000K->1900000K(4055040K), 0.0732500 secs] [Times: user=0.25 sys=0.01, real=0.07 secs] 30.073: [Rescan (parallel) , 0.0412000 secs][1 CMS-remark: 1870000K(3686400K)] 1900000K(4055040K), 0.2021234 secs] [Times: user=0.60 sys=0.01, real=0.20 secs]";
        let progress = continue_collection(remark, 0);
        assert_eq!(progress.closed_after_ns, Some(202_123_400));
        assert_eq!(
            progress.heap, None,
            "the scavenge's transition is not the remark's"
        );
        // A promotion failure's closing piece, with initiation statistics glued into it.
        let closing = b": 1098428K->1102189K(1179648K), 0.5939440 secs]7200.594: [CMS: 1682222K->728816K(2359296K), 20.9698110 secs] 2776803K->728816K(3538944K), [Metaspace: 164489K->162299K(1206272K)]CMSCollector shouldConcurrentCollect: , 21.5649460 secs]7221.565";
        let progress = continue_collection(closing, 2);
        assert_eq!(progress.closed_after_ns, Some(21_564_946_000));
        assert!(progress.old_generation);
        assert_eq!(
            progress.heap.map(|heap| heap.before),
            Some(2776803.0 * 1024.0)
        );
        // Free-list statistics glued after the heap transition leave the collection open.
        let open = continue_collection(
            b": 830688K->25255K(1310720K), 0.1302057 secs] 830688K->36167K(4980736K)After GC:",
            2,
        );
        assert_eq!((open.open_brackets, open.closed_after_ns), (1, None));
        assert_eq!(open.heap.map(|heap| heap.after), Some(36167.0 * 1024.0));
    }

    #[test]
    fn jdk8_collections_inside_others_are_named_after_both() {
        let cases = [
            ("30.000: [GC (CMS Final Remark) [YG occupancy: 240000 K (368640 K)]30.000: [Rescan (parallel) , 0.0412000 secs][1 CMS-remark: 1870000K(3686400K)] 1900000K(4055040K), 0.0621234 secs] [Times: user=0.60 sys=0.01, real=0.06 secs]",
                "Remark"),
            ("30.000: [GC (CMS Final Remark) [YG occupancy: 240000 K (368640 K)]30.000: [GC (CMS Final Remark) 30.000: [ParNew: 240000K->30000K(368640K), 0.0731000 secs] 2110000K->1900000K(4055040K), 0.0732500 secs] [Times: user=0.25 sys=0.01, real=0.07 secs] 30.073: [Rescan (parallel) , 0.0412000 secs][1 CMS-remark: 1870000K(3686400K)] 1900000K(4055040K), 0.2021234 secs] [Times: user=0.60 sys=0.01, real=0.20 secs]",
                "Remark (with scavenge)"),
            // The same young collection on a line of its own (PrintHeapAtGC cut the remark).
            ("20.000: [GC (CMS Final Remark) 20.000: [ParNew: 200000K->25000K(368640K), 0.0501000 secs] 218000K->43000K(4055040K), 0.0502000 secs] [Times: user=0.18 sys=0.00, real=0.05 secs]",
                "Young"),
            ("20.000: [GC (Allocation Failure) 20.000: [ParNew (promotion failed): 368640K->368640K(368640K), 0.9000000 secs]20.900: [CMS: 3600000K->1500000K(3686400K), 5.1000000 secs] 3968640K->1500000K(4055040K), [Metaspace: 20480K->20480K(1069056K)], 6.0012345 secs] [Times: user=7.10 sys=0.05, real=6.00 secs]",
                "Young (promotion failed) + Full"),
            // Opened on one line: the old generation's collection is still to come.
            ("20.000: [GC (Allocation Failure) 20.000: [ParNew (0: promotion failure size = 11863)  (promotion failed)",
                "Young (promotion failed)"),
            ("0.900: [GC (Allocation Failure) 0.900: [DefNew: 4928K->4928K(4928K), 0.0000200 secs]0.900: [Tenured: 9000K->6000K(10944K), 0.0200000 secs] 13928K->6000K(15872K), [Metaspace: 2600K->2600K(1056768K)], 0.0202000 secs] [Times: user=0.02 sys=0.00, real=0.02 secs]",
                "Young + Full"),
            ("1.300: [Full GC (System.gc()) 1.300: [Tenured: 6000K->5000K(10944K), 0.0150000 secs] 8000K->5000K(15872K), [Metaspace: 2600K->2600K(1056768K)], 0.0151000 secs] [Times: user=0.01 sys=0.00, real=0.02 secs]",
                "Full"),
        ];
        for (line, expected) in cases {
            match event(line) {
                Event::Pause { kind, .. } | Event::PauseBegin { kind, .. } => {
                    assert_eq!(kind, expected, "{line}");
                }
                other => panic!("{line}: {other:?}"),
            }
        }
    }

    #[test]
    fn jdk8_rotation_bookkeeping_is_understood() {
        let created = "2020-03-01 10:00:00 GC log file created /var/log/cassandra/gc.log.1";
        assert_eq!(event(created), Event::Other);
        let full = "2020-03-01 10:00:00 GC log file has reached the maximum size. Saved as /var/log/cassandra/gc.log.0";
        assert_eq!(event(full), Event::Other);
    }

    #[test]
    fn jdk8_stamps_of_two_threads_read_in_any_interleaving() {
        const DATE: &str = "2026-11-28T03:56:59.271+0000";
        const MESSAGE: &str = "[GC concurrent-root-region-scan-start]";
        let epoch_ns = parse_iso8601(DATE.as_bytes());
        for prefix in [
            format!("{DATE}: 1.690: "),
            format!("{DATE}: {DATE}: 1.6901.690: : "),
            format!("{DATE}{DATE}: : 1.690: 1.690: "),
            format!("{DATE}: 1.690{DATE}: : 1.690: "),
            format!("{DATE}: 1.690: {DATE}: 1.690: "),
            // The second thread's separators went to the next line (seen from a JDK 8 G1 node).
            format!("{DATE}: 1.690: {DATE}"),
            format!("{DATE}: 1.690: 1.690"),
        ] {
            let line = format!("{prefix}{MESSAGE}");
            let (stamp, rest) = jdk8_stamps(line.as_bytes()).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(
                (stamp.epoch_ns, stamp.uptime_ns, rest),
                (epoch_ns, Some(1_690_000_000), MESSAGE.as_bytes()),
                "{line}"
            );
        }
        // The first of each is kept.
        let line = format!("{DATE}: 1.6902.5: : [GC");
        let (stamp, _) = jdk8_stamps(line.as_bytes()).unwrap();
        assert_eq!(stamp.uptime_ns, Some(1_690_000_000));
        // A separator may land on the other thread's line, before its stamps or its message.
        let line = format!("{DATE}{DATE}: 1.690: {MESSAGE}");
        let (stamp, rest) = jdk8_stamps(line.as_bytes()).unwrap();
        assert_eq!((stamp.epoch_ns, rest), (epoch_ns, MESSAGE.as_bytes()));
        let line = format!(": 1.690: {MESSAGE}");
        let (stamp, rest) = jdk8_stamps(line.as_bytes()).unwrap();
        assert_eq!(
            (stamp.uptime_ns, rest),
            (Some(1_690_000_000), MESSAGE.as_bytes())
        );
        let stopped = "Total time for which application threads were stopped: 0.0050000 seconds";
        let line = format!(": : {stopped}");
        let (stamp, rest) = jdk8_stamps(line.as_bytes()).unwrap();
        assert_eq!((stamp.is_empty(), rest), (true, stopped.as_bytes()));
        // Pieces that end in a stamp are not stamps: None where the line starts like one.
        for torn in ["1.690 [GC", "1.690[GC", "0.0123 secs]", "12: 1.5"] {
            assert!(jdk8_stamps(torn.as_bytes()).is_none(), "{torn}");
        }
        // A collection's pieces and other text are unstamped, whole.
        for piece in [
            ", 0.0123 secs]",
            ": 1234K->56K(789K), 0.01 secs]",
            ": [CMS",
            "[ParNew",
        ] {
            let (stamp, rest) = jdk8_stamps(piece.as_bytes()).unwrap();
            assert_eq!(
                (stamp.is_empty(), rest),
                (true, piece.as_bytes()),
                "{piece}"
            );
        }
        // Uptimes without three decimals, as other writers print them.
        let (stamp, _) = jdk8_stamps(b"2.1: [CMS-concurrent-mark").unwrap();
        assert_eq!(stamp.uptime_ns, Some(2_100_000_000));
        let (stamp, _) = jdk8_stamps(b"12: [GC").unwrap();
        assert_eq!(stamp.uptime_ns, Some(12_000_000_000));
    }

    #[test]
    fn jdk8_lines() {
        let ps = "2016-02-03T12:34:56.789+0100: 1.234: [GC (Allocation Failure) [PSYoungGen: 33280K->5104K(38400K)] 33280K->5112K(125952K), 0.0069421 secs] [Times: user=0.01 sys=0.00, real=0.01 secs]";
        let parsed = parse_line(ps.as_bytes()).unwrap();
        assert_eq!(parsed.stamp.uptime_ns, Some(1_234_000_000));
        match parsed.event {
            Event::Pause {
                kind,
                duration_ns,
                heap,
                stamp_at,
                ..
            } => {
                assert_eq!(
                    (kind, duration_ns, stamp_at),
                    ("Young", 6_942_100, StampAt::Start)
                );
                let heap = heap.unwrap();
                assert_eq!(
                    (heap.before, heap.after),
                    (33280.0 * 1024.0, 5112.0 * 1024.0)
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            event("2.1: [CMS-concurrent-mark: 0.010/0.020 secs] [Times: user=0.01 sys=0.00, real=0.02 secs]"),
            Event::Concurrent { duration_ns: 20_000_000, .. }
        ));
    }
}
