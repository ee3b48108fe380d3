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
use hdrhistogram::serialization::{
    Deserializer, Serializer, V2DeflateSerializeError, V2Serializer,
};
use hdrhistogram::{Counter, Histogram};

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

/// Empties a histogram for reuse. A reset zeroes every count (tens of kB once a histogram has grown),
/// so an empty histogram is left as it is: a recorder reporting every second holds many that stay
/// empty (the warm-up's after the warm-up, failures, operation types a workload does not run).
pub fn reset_histogram(h: &mut Histogram<u64>) {
    if !h.is_empty() {
        h.reset();
    }
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

/// HdrHistogram's V2 + DEFLATE encoding (`V2DeflateSerializer`'s bytes) with one compressor kept
/// for every histogram. hdrhistogram's own serializer builds a new one per histogram: a few
/// hundred kB zeroed each time, several times a second while a run reports. A kept compressor still
/// zeroes as much at each reset, so a histogram that encodes as the previous one did (an idle
/// operation's, empty second after second) reuses the previous compressed bytes.
struct ReusedDeflateSerializer {
    v2: V2Serializer,
    compressor: flate2::Compress,
    uncompressed: Vec<u8>,
    /// The V2 encoding that `compressed` holds compressed.
    previous: Vec<u8>,
    compressed: Vec<u8>,
}

/// HdrHistogram's cookie of a V2 histogram compressed with DEFLATE (`V2_COMPRESSED_COOKIE`).
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9304 | 0x10;

impl ReusedDeflateSerializer {
    fn new() -> Self {
        ReusedDeflateSerializer {
            v2: V2Serializer::new(),
            compressor: flate2::Compress::new(flate2::Compression::default(), true),
            uncompressed: Vec::new(),
            previous: Vec::new(),
            compressed: Vec::new(),
        }
    }

    /// `uncompressed` behind HdrHistogram's compressed header, into `compressed`.
    fn compress(&mut self) -> std::io::Result<()> {
        // Until it succeeds, no encoding matches (a V2 encoding is never empty), so the first one and
        // the one after a failure are compressed.
        self.previous.clear();
        self.compressed.clear();
        self.compressed
            .extend_from_slice(&V2_COMPRESSED_COOKIE.to_be_bytes());
        self.compressed.extend_from_slice(&[0; 4]); // the compressed length, below
        self.compressor.reset();
        // DEFLATE can grow incompressible input by a few bytes per block: room for all of it.
        self.compressed
            .reserve(self.uncompressed.len() + self.uncompressed.len() / 100 + 64);
        loop {
            let consumed = self.compressor.total_in() as usize;
            let status = self
                .compressor
                .compress_vec(
                    &self.uncompressed[consumed..],
                    &mut self.compressed,
                    flate2::FlushCompress::Finish,
                )
                .map_err(std::io::Error::other)?;
            if status == flate2::Status::StreamEnd {
                break;
            }
            self.compressed.reserve(self.compressed.capacity().max(64));
        }
        let length = (self.compressed.len() - 8) as u32;
        self.compressed[4..8].copy_from_slice(&length.to_be_bytes());
        std::mem::swap(&mut self.previous, &mut self.uncompressed);
        Ok(())
    }
}

impl Serializer for ReusedDeflateSerializer {
    type SerializeError = V2DeflateSerializeError;

    fn serialize<T: Counter, W: std::io::Write>(
        &mut self,
        h: &Histogram<T>,
        writer: &mut W,
    ) -> Result<usize, V2DeflateSerializeError> {
        self.uncompressed.clear();
        self.v2
            .serialize(h, &mut self.uncompressed)
            .map_err(V2DeflateSerializeError::InternalSerializationError)?;
        if self.uncompressed != self.previous {
            self.compress()?;
        }
        writer.write_all(&self.compressed)?;
        Ok(self.compressed.len())
    }
}

/// Appends intervals to a log as they are measured.
pub struct HlogWriter {
    path: std::path::PathBuf,
    file: File,
    serializer: ReusedDeflateSerializer,
}

impl HlogWriter {
    /// Creates the log with its opening comments; its intervals count from `base`.
    pub fn create(
        path: &Path,
        comments: &[String],
        base: SystemTime,
    ) -> Result<Self, ResultsError> {
        let mut file = File::create(path).map_err(ResultsError::write(path))?;
        let mut serializer = ReusedDeflateSerializer::new();
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
    fn the_reused_compressor_writes_hdrhistogram_s_own_bytes() {
        use hdrhistogram::serialization::V2DeflateSerializer;
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        // An empty one, small ones, and one of values spread over the whole range.
        let mut histograms: Vec<Histogram<u64>> = (0..6u64)
            .map(|k| {
                let mut h = new_histogram();
                for _ in 0..(k * k * 4000) {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    h.record(1 + state % (1 << (10 + 4 * k))).unwrap();
                }
                h
            })
            .collect();
        // One that differs from another by a single count (of a value it holds: same length).
        let mut one_more = histograms[2].clone();
        one_more.record(histograms[2].max()).unwrap();
        histograms.push(one_more);
        let mut ours = ReusedDeflateSerializer::new();
        let mut theirs = V2DeflateSerializer::new();
        // Repeats (which reuse the previous bytes) between changes (which compress anew).
        for k in [0, 0, 1, 1, 1, 0, 2, 6, 6, 2, 3, 4, 5, 5, 0] {
            let h = &histograms[k];
            let (mut a, mut b) = (Vec::new(), Vec::new());
            ours.serialize(h, &mut a).unwrap();
            theirs.serialize(h, &mut b).unwrap();
            assert_eq!(a, b, "histogram {k} of {} values", h.len());
            let back: Histogram<u64> = Deserializer::new().deserialize(&mut a.as_slice()).unwrap();
            assert_eq!(&back, h);
        }
    }

    #[test]
    fn a_reset_histogram_is_as_new_whether_it_was_used_or_not() {
        let mut used = new_histogram();
        used.record(3).unwrap();
        used.record(1 << 30).unwrap(); // grown far past its first range
        let mut idle = new_histogram();
        for h in [&mut used, &mut idle] {
            reset_histogram(h);
            assert!(h.is_empty());
            assert_eq!(
                (h.max(), h.min_nz(), h.value_at_quantile(0.99)),
                (0, u64::MAX, 0)
            );
            h.record(7).unwrap();
            assert_eq!((h.len(), h.max(), h.min()), (1, 7, 7));
        }
    }

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
