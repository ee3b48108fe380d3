//! Log parts: files (plain or gzip), standard input, and the order of rotated parts.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;

use crate::parse::parse_line;
use crate::GcLogError;

const READ_BUFFER: usize = 256 * 1024;
/// How far into a part to look for its first timestamp when ordering rotated parts.
const LINES_TO_FIND_FIRST_STAMP: usize = 5000;
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Longest line kept; the rest of a longer line is skipped, so that a file without line breaks
/// cannot make memory grow with its size. Real GC log lines are well under 1 KiB.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Reads one line (with its `\n`) into `line`, keeping at most [`MAX_LINE_BYTES`] of it. Returns the
/// number of bytes consumed from the reader (0 at the end).
pub fn read_line_bounded(reader: &mut dyn BufRead, line: &mut Vec<u8>) -> io::Result<usize> {
    line.clear();
    let kept = (&mut *reader)
        .take(MAX_LINE_BYTES as u64)
        .read_until(b'\n', line)?;
    if kept == MAX_LINE_BYTES && line.last() != Some(&b'\n') {
        return Ok(kept + reader.skip_until(b'\n')?);
    }
    Ok(kept)
}

/// One part of a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Path(PathBuf),
    Stdin,
}

impl Input {
    /// `-` means standard input.
    pub fn from_arg(arg: &Path) -> Self {
        if arg.as_os_str() == "-" {
            Input::Stdin
        } else {
            Input::Path(arg.to_path_buf())
        }
    }

    pub fn display(&self) -> String {
        match self {
            Input::Path(path) => path.display().to_string(),
            Input::Stdin => "standard input".to_owned(),
        }
    }

    fn read_error(&self, source: io::Error) -> GcLogError {
        GcLogError::Read {
            path: self.display(),
            source,
        }
    }

    /// The part's raw bytes, as stored.
    fn open_raw(&self) -> Result<Box<dyn Read + Send>, GcLogError> {
        Ok(match self {
            Input::Path(path) => Box::new(File::open(path).map_err(|e| self.read_error(e))?),
            Input::Stdin => Box::new(io::stdin()),
        })
    }

    /// A buffered line reader over the part, decompressing gzip (detected by content, not name).
    pub fn open(&self) -> Result<Box<dyn BufRead + Send>, GcLogError> {
        let mut reader = BufReader::with_capacity(READ_BUFFER, self.open_raw()?);
        let head = reader.fill_buf().map_err(|e| self.read_error(e))?;
        if head.starts_with(&GZIP_MAGIC) {
            Ok(Box::new(BufReader::with_capacity(
                READ_BUFFER,
                MultiGzDecoder::new(reader),
            )))
        } else {
            Ok(Box::new(reader))
        }
    }

    /// The part's bytes, decompressed when gzip, without a buffer of their own: for readers that
    /// read large blocks into their own memory.
    pub fn open_unbuffered(&self) -> Result<Box<dyn Read + Send>, GcLogError> {
        let mut raw = self.open_raw()?;
        let mut head = Vec::with_capacity(GZIP_MAGIC.len());
        (&mut raw)
            .take(GZIP_MAGIC.len() as u64)
            .read_to_end(&mut head)
            .map_err(|e| self.read_error(e))?;
        let gzip = head == GZIP_MAGIC;
        let whole = io::Cursor::new(head).chain(raw);
        if gzip {
            Ok(Box::new(MultiGzDecoder::new(BufReader::with_capacity(
                READ_BUFFER,
                whole,
            ))))
        } else {
            Ok(Box::new(whole))
        }
    }
}

/// The rotation number in a part's name: `gc.log.3` → 3, `gc.log.2.current` → 2, `gc.log.0.gz` → 0; the
/// live file of JDK 9+ rotation (`gc.log`) comes after all numbered parts.
fn rotation_rank(path: &Path) -> (String, u64) {
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut stem = name.as_str();
    stem = stem.strip_suffix(".gz").unwrap_or(stem);
    stem = stem.strip_suffix(".current").unwrap_or(stem);
    if let Some((base, number)) = stem.rsplit_once('.') {
        if let Ok(number) = number.parse::<u64>() {
            return (base.to_owned(), number);
        }
    }
    (stem.to_owned(), u64::MAX)
}

/// The first (epoch, uptime) stamp in a part, if any in its first lines.
fn first_stamp(input: &Input) -> Result<(Option<i64>, Option<i64>), GcLogError> {
    let mut reader = input.open()?;
    let mut line = Vec::new();
    for _ in 0..LINES_TO_FIND_FIRST_STAMP {
        let read =
            read_line_bounded(&mut *reader, &mut line).map_err(|source| GcLogError::Read {
                path: input.display(),
                source,
            })?;
        if read == 0 {
            break;
        }
        if let Some(parsed) = parse_line(&line) {
            if !parsed.stamp.is_empty() {
                return Ok((parsed.stamp.epoch_ns, parsed.stamp.uptime_ns));
            }
        }
    }
    Ok((None, None))
}

/// Orders the parts of one rotated log: by wall-clock time of their first line when every part has
/// one, else by uptime, else by rotation number. A ring of rotated files that wrapped around is put
/// back in order this way. Standard input is never reordered (it cannot be read twice).
pub fn order_rotated_parts(inputs: &[Input]) -> Result<Vec<Input>, GcLogError> {
    if inputs.len() < 2 || inputs.contains(&Input::Stdin) {
        return Ok(inputs.to_vec());
    }
    let mut keyed = Vec::with_capacity(inputs.len());
    for input in inputs {
        let Input::Path(path) = input else {
            unreachable!("standard input returned above")
        };
        keyed.push((first_stamp(input)?, rotation_rank(path), input.clone()));
    }
    if keyed.iter().all(|((epoch, _), _, _)| epoch.is_some()) {
        keyed.sort_by_key(|((epoch, _), rank, _)| (*epoch, rank.clone()));
    } else if keyed.iter().all(|((_, uptime), _, _)| uptime.is_some()) {
        keyed.sort_by_key(|((_, uptime), rank, _)| (*uptime, rank.clone()));
    } else {
        keyed.sort_by_key(|(_, rank, _)| rank.clone());
    }
    Ok(keyed.into_iter().map(|(_, _, input)| input).collect())
}

/// Every existing part of the log whose live file is (or would be) `base`, in time order: `base`
/// itself (JDK 9+ rotation's live file), `base.N` and `base.N.gz` (rotated parts), and `base.N.current`
/// (JDK 8's `-XX:+UseGCLogFileRotation` writes there, never to `base`).
pub fn rotated_parts(base: &Path) -> Result<Vec<PathBuf>, GcLogError> {
    let (Some(dir), Some(name)) = (base.parent(), base.file_name()) else {
        return Ok(Vec::new());
    };
    let name = name.to_string_lossy().into_owned();
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut parts: Vec<Input> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.is_file())
        .filter(|path| {
            let (stem, rank) = rotation_rank(path);
            stem == name && (rank != u64::MAX || path.file_name() == base.file_name())
        })
        .map(Input::Path)
        .collect();
    parts.sort_by_key(|input| match input {
        Input::Path(path) => rotation_rank(path),
        Input::Stdin => (String::new(), 0),
    });
    Ok(order_rotated_parts(&parts)?
        .into_iter()
        .filter_map(|input| match input {
            Input::Path(path) => Some(path),
            Input::Stdin => None,
        })
        .collect())
}

/// The GC log files in a directory (a node's `logs/`, a pod's copied logs), by name: `gc.log`,
/// `gc.log.3`, `gc.log.0.current`, `gc-2.log.gz`, …
pub fn parts_in_dir(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut parts: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            path.is_file() && name.starts_with("gc") && name.contains(".log")
        })
        .collect();
    parts.sort();
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotated_parts_of_jdk8_and_unified_logs() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.path().join(name), text).unwrap();
        // JDK 8 rotation: the live part is gc.log.1.current, gc.log itself never exists.
        write(
            "gc.log.0",
            "2026-11-24T10:00:01.000+0000: 1.000: [GC (Allocation Failure) 1K->1K(2K), 0.001 secs]\n",
        );
        write(
            "gc.log.1.current",
            "2026-11-24T10:00:02.000+0000: 2.000: [GC (Allocation Failure) 1K->1K(2K), 0.001 secs]\n",
        );
        write("gc.log.lock", "");
        write("gcx.log.0", "");
        write("system.log", "");
        let base = dir.path().join("gc.log");
        let names = |parts: Vec<PathBuf>| -> Vec<String> {
            parts
                .iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(
            names(rotated_parts(&base).unwrap()),
            ["gc.log.0", "gc.log.1.current"]
        );
        write(
            "gc.log",
            "[2026-11-24T10:00:03.000+0000][3.000s][info][gc] GC(0) Pause Young 1M->1M(2M) 1.000ms\n",
        );
        assert_eq!(
            names(rotated_parts(&base).unwrap()),
            ["gc.log.0", "gc.log.1.current", "gc.log"]
        );
        assert!(rotated_parts(&dir.path().join("none.log"))
            .unwrap()
            .is_empty());
        assert_eq!(
            names(parts_in_dir(dir.path()).unwrap()),
            [
                "gc.log",
                "gc.log.0",
                "gc.log.1.current",
                "gc.log.lock",
                "gcx.log.0"
            ]
        );
    }

    #[test]
    fn long_lines_are_cut_and_consumed_whole() {
        let mut text = vec![b'x'; MAX_LINE_BYTES * 3];
        text.extend_from_slice(b"\nnext\n");
        let mut reader = io::BufReader::with_capacity(1000, &text[..]);
        let mut line = Vec::new();
        assert_eq!(
            read_line_bounded(&mut reader, &mut line).unwrap(),
            MAX_LINE_BYTES * 3 + 1
        );
        assert_eq!(line.len(), MAX_LINE_BYTES);
        assert_eq!(read_line_bounded(&mut reader, &mut line).unwrap(), 5);
        assert_eq!(line, b"next\n");
        assert_eq!(read_line_bounded(&mut reader, &mut line).unwrap(), 0);
    }

    #[test]
    fn rotation_ranks() {
        assert_eq!(
            rotation_rank(Path::new("/x/gc.log.3")),
            ("gc.log".into(), 3)
        );
        assert_eq!(
            rotation_rank(Path::new("gc.log.2.current")),
            ("gc.log".into(), 2)
        );
        assert_eq!(
            rotation_rank(Path::new("gc.log.0.gz")),
            ("gc.log".into(), 0)
        );
        assert_eq!(
            rotation_rank(Path::new("gc.log")),
            ("gc.log".into(), u64::MAX)
        );
    }
}
