//! cqlbench-gclog: a streaming reader and analyser of JVM garbage collector logs.
//!
//! Reads JDK 9+ unified logs (`-Xlog:gc*,safepoint…` with any decorators, or none) and JDK 8
//! `-XX:+PrintGCDetails` logs of every HotSpot collector (Serial, Parallel, CMS, G1, ZGC, generational
//! ZGC, Shenandoah, generational Shenandoah) and both safepoint formats. Memory stays constant whatever
//! the log size: durations go into fixed-size histograms, never into lists.
//!
//! Facts the analysis rests on: a unified-logging line is written when its event ends (start = stamp −
//! duration), while JDK 8 stamps a collection when it begins; HotSpot's `Total time for which application
//! threads were stopped` already includes `Stopping threads took` (never added twice); GC pauses run
//! inside safepoints, so when a log has safepoint lines they are the stopped intervals and pause lines
//! are not counted again; a collection run inside another's pause (JDK 9–16 Serial and CMS log the
//! full collection of a failed promotion as `GC(n+1) Pause Full` just before the `GC(n) Pause Young`
//! that contains it) is one stop, counted once under a kind naming both (`Young + Full`; on JDK 8
//! also `Young (promotion failed) + Full`, and `Remark (with scavenge)` for a CMS remark that runs
//! the young collection of CMSScavengeBeforeRemark inside its pause). A JDK 8
//! collection is one bracketed text that other flags (PrintHeapAtGC, PrintTenuringDistribution,
//! PrintFLSStatistics, PrintCMSInitiationStatistics, CMSScavengeBeforeRemark) may tear over many
//! lines: it is put back together by its brackets, and what cannot be is counted, never dropped silently.
//!
//! ```no_run
//! use cqlbench_gclog::{analyze, Input};
//! let report = analyze(&[Input::Path("gc.log".into())], None, &mut |_| {}).unwrap();
//! println!("{report}");
//! ```

mod analysis;
mod input;
mod parallel;
mod parse;
mod report;
mod window;

pub use analysis::{gc_operation_kind, Analyzer};
pub use input::{order_rotated_parts, parts_in_dir, rotated_parts, Input};
pub use parallel::Parallelism;
pub use parse::{
    continue_collection, parse_line, CollectionProgress, Event, Format, HeapChange, Line, Stamp,
    StampAt,
};
pub use report::{
    ConcurrentReport, HeapReport, JvmReport, KindReport, PauseReport, Report, SafepointReport,
    TimeSampledReport,
};
pub use window::lines_in_window;

use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum GcLogError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write the timeline: {0}")]
    Timeline(#[source] std::io::Error),
    #[error("no GC log format recognised in {what}: 0 of {lines} lines are GC events (a collection, pause, safepoint, concurrent phase or heap change of a JDK 8 or JDK 9+ log)")]
    NothingParseable { what: String, lines: u64 },
    #[error("no input: give at least one GC log file, or - for standard input")]
    NoInput,
}

/// Analyses one JVM's log, given as one or more parts (rotated files, `.gz` parts, or standard input).
/// Parts are ordered by their first timestamp (rotation names as the tie-break) and read as one stream,
/// parsed on every core of the machine.
/// `timeline`, when given, receives `start,end,kind` for every pause and safepoint as it is read.
/// `progress` is called with the number of bytes read so far, every few megabytes.
pub fn analyze(
    inputs: &[Input],
    timeline: Option<&mut dyn Write>,
    progress: &mut dyn FnMut(u64),
) -> Result<Report, GcLogError> {
    analyze_with(inputs, timeline, progress, Some(Parallelism::of_machine()))
}

/// [`analyze`] with the cores given; `None` reads one line at a time on this thread (the reference
/// the parallel reading is held to: both give the same report).
pub fn analyze_with(
    inputs: &[Input],
    timeline: Option<&mut dyn Write>,
    progress: &mut dyn FnMut(u64),
    parallelism: Option<Parallelism>,
) -> Result<Report, GcLogError> {
    if inputs.is_empty() {
        return Err(GcLogError::NoInput);
    }
    let ordered = order_rotated_parts(inputs)?;
    let mut timeline = timeline;
    if let Some(out) = timeline.as_mut() {
        writeln!(out, "start,end,kind").map_err(GcLogError::Timeline)?;
    }
    let mut analyzer = Analyzer::new(timeline);
    let mut bytes_read: u64 = 0;
    let mut next_progress: u64 = PROGRESS_STEP;
    let mut count = |read: u64| {
        bytes_read += read;
        if bytes_read >= next_progress {
            progress(bytes_read);
            next_progress = (bytes_read / PROGRESS_STEP + 1) * PROGRESS_STEP;
        }
    };
    for part in &ordered {
        let read = match parallelism {
            Some(parallelism) => parallel::feed_all(
                &mut analyzer,
                part.open_unbuffered()?,
                parallelism,
                &mut count,
            ),
            None => feed_line_by_line(&mut analyzer, part.open()?, &mut count),
        };
        read.map_err(|source| GcLogError::Read {
            path: part.display(),
            source,
        })?;
        if let Some(error) = analyzer.take_timeline_error() {
            return Err(GcLogError::Timeline(error));
        }
    }
    analyzer.end_of_log();
    if let Some(error) = analyzer.take_timeline_error() {
        return Err(GcLogError::Timeline(error));
    }
    if analyzer.gc_events() == 0 {
        let what = ordered
            .iter()
            .map(Input::display)
            .collect::<Vec<_>>()
            .join(", ");
        return Err(GcLogError::NothingParseable {
            what,
            lines: analyzer.lines(),
        });
    }
    Ok(analyzer.finish())
}

fn feed_line_by_line(
    analyzer: &mut Analyzer<'_>,
    mut reader: Box<dyn std::io::BufRead + Send>,
    count: &mut dyn FnMut(u64),
) -> std::io::Result<()> {
    let mut buffer = Vec::with_capacity(512);
    loop {
        let read = input::read_line_bounded(&mut *reader, &mut buffer)?;
        if read == 0 {
            return Ok(());
        }
        analyzer.feed(&buffer);
        count(read as u64);
    }
}

const PROGRESS_STEP: u64 = 64 << 20;

/// Convenience: analyse files by path (`-` is standard input).
pub fn analyze_paths(paths: &[PathBuf]) -> Result<Report, GcLogError> {
    let inputs: Vec<Input> = paths.iter().map(|path| Input::from_arg(path)).collect();
    analyze(&inputs, None, &mut |_| {})
}
