//! The part of a log that falls in a wall-clock window, as a log of its own.
//!
//! A unified-logging line stands alone: it is kept when its wall-clock stamp is in the window. A JDK 8
//! record is not one line: `-XX:+PrintHeapAtGC` wraps a collection in `{Heap before GC …` … `}` (the
//! collection's stamped line inside), and `-XX:+PrintTenuringDistribution`, `[Times: …]` and the heap
//! dumps put unstamped lines after a stamped one. So a JDK 8 log is cut into records — a brace block
//! whole, or a stamped line with the unstamped lines after it — and a record is kept whole when its
//! first stamp is in the window (JDK 8 stamps a collection when it begins). Lines before the first
//! record (the rotation header) belong to no record and are left out.

use std::io::BufRead;
use std::path::PathBuf;

use crate::input::{read_line_bounded, Input};
use crate::parse::{parse_line, Format};
use crate::GcLogError;

/// Writes the lines of `parts` (one JVM's log, in order) whose events fall in `[start_ns, end_ns]`
/// (nanoseconds since the epoch) to `out`, leaving out a last line not ended by a newline (still
/// being written). Returns the number of lines written.
pub fn lines_in_window(
    parts: &[PathBuf],
    start_ns: i64,
    end_ns: i64,
    out: &mut String,
) -> Result<usize, GcLogError> {
    let mut cutter = Cutter {
        start_ns,
        end_ns,
        record: String::new(),
        record_epoch: None,
        depth: 0,
        written: 0,
    };
    for part in parts {
        let input = Input::Path(part.clone());
        let mut reader = input.open()?;
        let mut raw = Vec::new();
        loop {
            let read = read_line_bounded(&mut *reader as &mut dyn BufRead, &mut raw).map_err(
                |source| GcLogError::Read {
                    path: input.display(),
                    source,
                },
            )?;
            if read == 0 {
                break;
            }
            // A running JVM may be writing its last line: without its newline it is not whole yet.
            if raw.last() != Some(&b'\n') && reader.fill_buf().is_ok_and(|rest| rest.is_empty()) {
                break;
            }
            let line = String::from_utf8_lossy(&raw);
            cutter.push(line.trim_end_matches(['\n', '\r']), out);
        }
        // A part ends a record: the next part starts with its own header.
        cutter.flush(out);
        cutter.depth = 0;
    }
    Ok(cutter.written)
}

struct Cutter {
    start_ns: i64,
    end_ns: i64,
    record: String,
    record_epoch: Option<i64>,
    /// Open `{Heap before GC` blocks.
    depth: usize,
    written: usize,
}

impl Cutter {
    fn push(&mut self, line: &str, out: &mut String) {
        let parsed = parse_line(line.as_bytes());
        let epoch = parsed.as_ref().and_then(|p| p.stamp.epoch_ns);
        let unified = parsed.as_ref().is_some_and(|p| p.format == Format::Unified);
        if unified {
            self.flush(out);
            if epoch.is_some_and(|t| self.contains(t)) {
                out.push_str(line);
                out.push('\n');
                self.written += 1;
            }
            return;
        }
        let opens_block = line.starts_with('{');
        let starts_record = self.depth == 0 && (opens_block || epoch.is_some());
        if starts_record {
            self.flush(out);
        }
        if opens_block {
            self.depth += 1;
        } else if line.trim() == "}" {
            self.depth = self.depth.saturating_sub(1);
        }
        if self.record.is_empty() && !starts_record {
            // Before any record: the rotation header, or the tail of a record of an earlier part.
            return;
        }
        if self.record_epoch.is_none() {
            self.record_epoch = epoch;
        }
        self.record.push_str(line);
        self.record.push('\n');
    }

    fn contains(&self, t: i64) -> bool {
        t >= self.start_ns && t <= self.end_ns
    }

    fn flush(&mut self, out: &mut String) {
        if self.record_epoch.is_some_and(|t| self.contains(t)) {
            self.written += self.record.lines().count();
            out.push_str(&self.record);
        }
        self.record.clear();
        self.record_epoch = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const JDK8: &str = "\
2026-11-24 10:00:00 GC log file created /n/logs/gc.log.0
OpenJDK 64-Bit Server VM (25.504-b01) for linux-amd64 JRE (1.8.0_504-8u504-ga-1-b01)
CommandLine flags: -XX:+UseConcMarkSweepGC -XX:+UseParNewGC
{Heap before GC invocations=0 (full 0):
 par new generation   total 471872K, used 419456K [0x00000000c0000000, 0x00000000e0000000, 0x00000000e0000000)
2026-11-24T10:00:01.000+0000: 1.000: [GC (Allocation Failure) 2026-11-24T10:00:01.000+0000: 1.000: [ParNew
Desired survivor size 26836992 bytes, new threshold 1 (max 1)
- age   1:   12345678 bytes,   12345678 total
: 419456K->12109K(471872K), 0.0200000 secs] 419456K->12109K(996160K), 0.0201000 secs] [Times: user=0.03 sys=0.01, real=0.02 secs] 
Heap after GC invocations=1 (full 0):
 par new generation   total 471872K, used 12109K [0x00000000c0000000, 0x00000000e0000000, 0x00000000e0000000)
}
2026-11-24T10:00:01.021+0000: 1.021: Total time for which application threads were stopped: 0.0203000 seconds, Stopping threads took: 0.0000500 seconds
{Heap before GC invocations=1 (full 0):
 par new generation   total 471872K, used 431565K [0x00000000c0000000, 0x00000000e0000000, 0x00000000e0000000)
2026-11-24T10:00:05.000+0000: 5.000: [GC (Allocation Failure) 2026-11-24T10:00:05.000+0000: 5.000: [ParNew
Desired survivor size 26836992 bytes, new threshold 1 (max 1)
: 431565K->13000K(471872K), 0.0300000 secs] 431565K->13000K(996160K), 0.0301000 secs] [Times: user=0.04 sys=0.01, real=0.03 secs] 
Heap after GC invocations=2 (full 0):
 par new generation   total 471872K, used 13000K [0x00000000c0000000, 0x00000000e0000000, 0x00000000e0000000)
}
2026-11-24T10:00:05.031+0000: 5.031: Total time for which application threads were stopped: 0.0305000 seconds, Stopping threads took: 0.0000400 seconds
";

    fn cut(text: &str, start_s: i64, end_s: i64) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gc.log.0.current");
        std::fs::write(&path, text).unwrap();
        let base = 1_795_514_400; // 2026-11-24T10:00:00Z
        let mut out = String::new();
        let written = lines_in_window(
            &[path],
            (base + start_s) * 1_000_000_000,
            (base + end_s) * 1_000_000_000,
            &mut out,
        )
        .unwrap();
        assert_eq!(written, out.lines().count());
        out
    }

    #[test]
    fn a_jdk8_collection_is_kept_whole_with_its_heap_dumps_and_tenuring() {
        let second = cut(JDK8, 3, 10);
        assert!(
            second.starts_with("{Heap before GC invocations=1"),
            "{second}"
        );
        assert_eq!(second.lines().count(), 9, "{second}");
        assert!(second.contains("Desired survivor size"));
        assert!(second.contains("stopped: 0.0305000"));
        assert!(!second.contains("invocations=0"));
        assert!(!second.contains("CommandLine flags"));
        let both = cut(JDK8, 0, 10);
        assert_eq!(both.lines().count(), 19, "{both}");
        assert_eq!(cut(JDK8, 20, 30), "");
    }

    #[test]
    fn a_last_line_without_its_newline_is_left_out() {
        // A running JVM has written the stamp of its next record but not the rest of it.
        let writing = format!("{JDK8}2026-11-24T10:00:06.000+0000: 6.000: [GC (Allocation");
        assert_eq!(cut(&writing, 3, 10), cut(JDK8, 3, 10));
        let unified = "[2026-11-24T10:00:05.000+0000][5.000s][info][gc] GC(1) Pause Young 10M->2M(64M) 3.000ms\n\
                       [2026-11-24T10:00:06.000+0000][6.0";
        assert_eq!(cut(unified, 3, 10).lines().count(), 1);
    }

    #[test]
    fn unified_lines_stand_alone() {
        let text = "[2026-11-24T10:00:01.000+0000][1.000s][info][gc] GC(0) Pause Young 10M->2M(64M) 2.000ms\n\
                    [2026-11-24T10:00:05.000+0000][5.000s][info][gc] GC(1) Pause Young 10M->2M(64M) 3.000ms\n";
        let out = cut(text, 3, 10);
        assert_eq!(out.lines().count(), 1);
        assert!(out.contains("GC(1)"));
    }
}
