//! The interval logs of a run directory (HdrHistogram's `.hlog` format): per operation, one histogram
//! of microseconds per reporting interval of the measured phase — `<op>.hlog` (corrected latency of
//! the successful operations), `<op>.service.hlog` (their service time), `<op>.failed.hlog` (the
//! failed operations' latency).

use std::fs::File;
use std::path::Path;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{
    IntervalLogIterator, IntervalLogWriterBuilder, LogEntry,
};
use hdrhistogram::serialization::{Deserializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

use crate::ResultsError;

/// Which histogram an interval log holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum HlogKind {
    Latency,
    Service,
    Failed,
}

impl HlogKind {
    pub const ALL: [HlogKind; 3] = [HlogKind::Latency, HlogKind::Service, HlogKind::Failed];

    /// `write.hlog`, `write.service.hlog`, `write.failed.hlog`.
    pub fn file_name(self, op: &str) -> String {
        match self {
            HlogKind::Latency => format!("{op}.hlog"),
            HlogKind::Service => format!("{op}.service.hlog"),
            HlogKind::Failed => format!("{op}.failed.hlog"),
        }
    }

    /// What the log holds, for its opening comment.
    pub fn description(self) -> &'static str {
        match self {
            HlogKind::Latency => {
                "successful operations: latency corrected for coordinated omission (completion - intended start)"
            }
            HlogKind::Service => "successful operations: service time (completion - actual send)",
            HlogKind::Failed => {
                "failed operations, unsent ones included: failure known - intended start"
            }
        }
    }
}

/// The interval logs in a run directory: (operation, kind) of every `*.hlog` file, sorted.
pub fn logs_in(dir: &Path) -> Vec<(String, HlogKind)> {
    let mut logs: Vec<(String, HlogKind)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".hlog")?;
            let (op, kind) = match stem.rsplit_once('.') {
                Some((op, "service")) => (op, HlogKind::Service),
                Some((op, "failed")) => (op, HlogKind::Failed),
                _ => (stem, HlogKind::Latency),
            };
            Some((op.to_string(), kind))
        })
        .collect();
    logs.sort();
    logs
}

/// A histogram of microseconds as cqlbench keeps them: 3 significant digits, resizing itself (so
/// adding and recording never fail for want of range). It starts small and grows on demand, so an
/// idle operation costs a few kilobytes.
pub fn new_histogram() -> Histogram<u64> {
    let mut h =
        Histogram::new_with_bounds(1, 16_384, 3).expect("static histogram bounds are valid");
    h.auto(true);
    h
}

/// One interval of an interval log, in seconds since the epoch.
#[derive(Debug, Clone)]
pub struct HlogInterval {
    pub start_unix_s: f64,
    pub end_unix_s: f64,
    pub histogram: Histogram<u64>,
}

/// An interval log as read.
#[derive(Debug, Clone, Default)]
pub struct HlogFile {
    pub intervals: Vec<HlogInterval>,
    /// The comment lines that open it (what it holds, in which unit), without the `#`.
    pub comments: Vec<String>,
}

fn malformed(path: &Path, reason: impl std::fmt::Display) -> ResultsError {
    ResultsError::malformed(path, "HdrHistogram interval log", reason)
}

/// Reads an interval log.
pub fn read(path: &Path) -> Result<HlogFile, ResultsError> {
    let bytes = std::fs::read(path).map_err(ResultsError::read(path))?;
    let comments = String::from_utf8_lossy(&bytes)
        .lines()
        .take_while(|l| l.starts_with('#'))
        .filter(|l| !l.starts_with("#[") && !l.starts_with("#\""))
        .map(|l| l.trim_start_matches('#').to_string())
        .collect();
    let mut deserializer = Deserializer::new();
    let mut base = 0.0;
    let mut intervals = Vec::new();
    for entry in IntervalLogIterator::new(&bytes) {
        match entry.map_err(|e| malformed(path, format!("unreadable interval log: {e:?}")))? {
            LogEntry::BaseTime(t) => base = t.as_secs_f64(),
            LogEntry::StartTime(_) => {}
            LogEntry::Interval(interval) => {
                let raw = base64::engine::general_purpose::STANDARD
                    .decode(interval.encoded_histogram())
                    .map_err(|e| malformed(path, format!("bad histogram encoding: {e}")))?;
                let histogram: Histogram<u64> = deserializer
                    .deserialize(&mut raw.as_slice())
                    .map_err(|e| malformed(path, format!("bad histogram: {e:?}")))?;
                let start = base + interval.start_timestamp().as_secs_f64();
                intervals.push(HlogInterval {
                    start_unix_s: start,
                    end_unix_s: start + interval.duration().as_secs_f64(),
                    histogram,
                });
            }
        }
    }
    Ok(HlogFile {
        intervals,
        comments,
    })
}

/// Appends intervals to a log as they are measured.
pub struct HlogWriter {
    path: std::path::PathBuf,
    file: File,
    serializer: V2DeflateSerializer,
}

impl HlogWriter {
    /// Creates the log with its opening comments; its intervals count from `base`.
    pub fn create(
        path: &Path,
        comments: &[String],
        base: SystemTime,
    ) -> Result<Self, ResultsError> {
        let mut file = File::create(path).map_err(ResultsError::write(path))?;
        let mut serializer = V2DeflateSerializer::new();
        let mut builder = IntervalLogWriterBuilder::new();
        for comment in comments {
            builder.add_comment(comment);
        }
        builder
            .with_start_time(base)
            .with_base_time(base)
            .begin_log_with(&mut file, &mut serializer)
            .and_then(|mut w| {
                w.write_comment(
                    "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"",
                )
            })
            .map_err(ResultsError::write(path))?;
        Ok(HlogWriter {
            path: path.to_path_buf(),
            file,
            serializer,
        })
    }

    /// Appends one interval starting `since_base` after the log's base time.
    pub fn append(
        &mut self,
        histogram: &Histogram<u64>,
        since_base: Duration,
        length: Duration,
    ) -> Result<(), ResultsError> {
        // A builder without headers writes nothing itself: this only appends the interval.
        let mut writer = IntervalLogWriterBuilder::new()
            .begin_log_with(&mut self.file, &mut self.serializer)
            .map_err(ResultsError::write(&self.path))?;
        writer
            .write_histogram(histogram, since_base, length, None)
            .map_err(|e| ResultsError::write(&self.path)(std::io::Error::other(format!("{e:?}"))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_read_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(HlogKind::Service.file_name("insert"));
        assert!(path.ends_with("insert.service.hlog"));
        let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let comments = vec!["what it holds".to_string()];
        let mut writer = HlogWriter::create(&path, &comments, base).unwrap();
        let mut written = Vec::new();
        for k in 0..3u64 {
            let mut h = new_histogram();
            for v in 1..=100 * (k + 1) {
                h.record(v * 37).unwrap();
            }
            writer
                .append(&h, Duration::from_secs(k), Duration::from_secs(1))
                .unwrap();
            written.push(h);
        }
        let log = read(&path).unwrap();
        assert_eq!(log.comments, comments);
        assert_eq!(log.intervals.len(), 3);
        for (k, (interval, h)) in log.intervals.iter().zip(&written).enumerate() {
            assert_eq!(&interval.histogram, h);
            assert!((interval.start_unix_s - 1_800_000_000.0 - k as f64).abs() < 1e-3);
            assert!((interval.end_unix_s - interval.start_unix_s - 1.0).abs() < 1e-3);
        }
        std::fs::write(&path, "not a log\n").unwrap();
        assert!(read(&path).is_err());
    }
}
