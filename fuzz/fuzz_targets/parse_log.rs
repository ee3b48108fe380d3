//! Feeds arbitrary bytes, as lines, to the GC log parser and the streaming analysis: neither may panic,
//! whatever the input, and the report must serialise.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut timeline = Vec::new();
    let mut analyzer =
        cqlbench_gclog::Analyzer::new(Some(&mut timeline as &mut dyn std::io::Write));
    for line in data.split(|byte| *byte == b'\n') {
        let _ = cqlbench_gclog::parse_line(line);
        analyzer.feed(line);
    }
    let report = analyzer.finish();
    let _ = report.to_string();
    assert_finite(&report);
});

/// The report's numbers must stay finite or absent (JSON has no NaN).
fn assert_finite(report: &cqlbench_gclog::Report) {
    let numbers = [
        report.pauses.total_ms,
        report.pauses.max_ms,
        report.pauses.p50_ms,
        report.pauses.p99_ms,
        report.pauses.p999_ms,
    ];
    assert!(numbers.iter().all(|n| n.is_finite()), "{report:?}");
    if let Some(sampled) = &report.time_sampled {
        assert!(
            sampled.paused_fraction.is_finite() && sampled.p9999_ms.is_finite(),
            "{report:?}"
        );
    }
}
