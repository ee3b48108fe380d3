//! Reading a log on several cores gives the report and timeline of one sequential pass, on every
//! log of the corpus, however the log is cut: batches of one line, of a few hundred bytes and of a
//! few KiB (a batch grows past its size only to finish a line), more workers than batches held at
//! once, and the machine's own defaults.

use std::path::{Path, PathBuf};

use cqlbench_gclog::{analyze_with, Input, Parallelism};

fn corpus() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if !matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("expected" | "awk" | "sh" | "md" | "java")
            ) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The report (or the error) as text, and the timeline.
fn outcome(inputs: &[Input], parallelism: Option<Parallelism>) -> (String, String) {
    let mut timeline = Vec::new();
    let report = analyze_with(inputs, Some(&mut timeline), &mut |_| {}, parallelism);
    let report = match report {
        Ok(report) => format!("{report:?}"),
        Err(error) => format!("error: {error}"),
    };
    (report, String::from_utf8(timeline).unwrap())
}

fn assert_every_cut_reads_as(inputs: &[Input], sequential: &(String, String)) {
    for parallelism in cuts() {
        assert_eq!(
            &outcome(inputs, Some(parallelism)),
            sequential,
            "{parallelism:?}"
        );
    }
}

fn cuts() -> Vec<Parallelism> {
    let cut = |threads, batch_bytes| Parallelism {
        threads,
        batch_bytes,
    };
    vec![
        cut(2, 1),
        cut(3, 97),
        cut(3, 1000),
        cut(2, 4096),
        cut(2, 64 << 10),
        // More workers than batches held at once.
        cut(20, 97),
        cut(20, 1000),
        cut(4, 300),
        Parallelism::with_threads(1),
        Parallelism::of_machine(),
    ]
}

#[test]
fn every_log_of_the_corpus_reads_the_same_on_several_cores() {
    let files = corpus();
    assert!(files.len() >= 45, "corpus missing: {files:?}");
    let mut reports = 0;
    for file in &files {
        let inputs = [Input::Path(file.clone())];
        let sequential = outcome(&inputs, None);
        if !sequential.0.starts_with("error") {
            reports += 1;
        }
        for parallelism in cuts() {
            let parallel = outcome(&inputs, Some(parallelism));
            assert!(
                parallel == sequential,
                "{} with {parallelism:?}:\n{}\n{}\nagainst one pass:\n{}\n{}",
                file.display(),
                parallel.0,
                parallel.1,
                sequential.0,
                sequential.1
            );
        }
    }
    assert!(reports >= 40, "{reports} logs gave a report");
}

#[test]
fn a_restarted_jvm_and_rotated_parts_read_the_same_on_several_cores() {
    // Uptime drops inside runs of quiet lines (a JVM restarted into the same file), a line too long
    // to keep whole, and two parts read as one stream.
    let dir = tempfile::tempdir().unwrap();
    let mut first = String::new();
    for restart in 0..3 {
        for i in 0..40 {
            let uptime = 1.0 + f64::from(i) * 0.25;
            first.push_str(&format!(
                "[{uptime:.3}s][info][gc,phases] GC({i})   Pre Evacuate Collection Set: 0.1ms\n"
            ));
            if i % 7 == restart {
                first.push_str(&format!(
                    "[{uptime:.3}s][info][gc] GC({i}) Pause Young (Normal) (G1 Evacuation Pause) 24M->5M(64M) {}.{:03}ms\n",
                    i % 5 + 1,
                    i * 37 % 1000
                ));
            }
        }
        first.push_str(&"x".repeat(70 * 1024));
        first.push('\n');
    }
    let second = "[20.000s][info][gc] GC(99) Pause Full (System.gc()) 30M->10M(64M) 12.500ms\n\
                  [20.100s][info][gc,heap] GC(99) Eden regions: 0->0(3)";
    let paths = [dir.path().join("gc.log.0"), dir.path().join("gc.log.1")];
    std::fs::write(&paths[0], first).unwrap();
    std::fs::write(&paths[1], second).unwrap();
    let inputs: Vec<Input> = paths.iter().cloned().map(Input::Path).collect();
    let sequential = outcome(&inputs, None);
    assert!(sequential.0.contains("Young"), "{}", sequential.0);
    assert_every_cut_reads_as(&inputs, &sequential);
}

#[test]
fn a_gzip_log_cut_short_fails_alike_on_several_cores() {
    // The read fails after many batches were dealt: the error comes back in the log's order, and
    // every worker and the reader stop.
    use std::io::Write;
    let log = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/unified/j17-g1-cqlbench.log"),
    )
    .unwrap();
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    for _ in 0..40 {
        encoder.write_all(&log).unwrap();
    }
    let gzip = encoder.finish().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gc.log.gz");
    std::fs::write(&path, &gzip[..gzip.len() * 3 / 5]).unwrap();
    let inputs = [Input::Path(path)];
    let sequential = outcome(&inputs, None);
    assert!(sequential.0.starts_with("error"), "{}", sequential.0);
    assert_every_cut_reads_as(&inputs, &sequential);
}
