//! `compare A B`: is the difference between two runs real or noise?
//!
//! Means (throughput, mean latency) are compared with Welch's t-test on per-second values, with the
//! sample size shrunk for the correlation between neighbouring seconds (a load test's seconds are not
//! independent: a compaction or a GC cycle spans several), as latte's `show -b` does. Percentiles have
//! no such formula: they are compared by a moving-block bootstrap over the runs' one-second
//! histograms (blocks keep neighbouring seconds together), merged exactly as HdrHistograms.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use rand::{Rng, SeedableRng};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::ReportError;

/// Bootstrap resamples per percentile.
const RESAMPLES: usize = 400;
/// Seconds are merged into at most this many blocks' worth of histograms before resampling, which
/// bounds the work for long runs.
const MAX_INTERVALS: usize = 240;
/// Confidence level of the intervals.
const CONFIDENCE: f64 = 0.95;

/// One figure of both runs and what their difference is worth.
#[derive(Debug, Clone)]
pub struct FigureDiff {
    pub figure: String,
    pub a: f64,
    pub b: f64,
    /// `b - a` and its confidence interval.
    pub diff: f64,
    pub ci: (f64, f64),
    /// Welch's p-value, for means.
    pub p_value: Option<f64>,
    pub significant: bool,
    pub method: &'static str,
}

/// What one run directory contributes.
struct RunData {
    /// Successful operations per second over the measured full seconds.
    throughput: Vec<f64>,
    /// Per operation type: the one-second histograms of corrected latency (µs).
    intervals: Vec<(String, Vec<Histogram<u64>>)>,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn bad(path: &Path, reason: impl Into<String>) -> ReportError {
    ReportError::BadSummary {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// Per-second successful throughput from intervals.csv, of the reporting intervals at least half a
/// second long (the drain at a run's end can be a few milliseconds: its rate says nothing).
fn throughput(dir: &Path) -> Result<Vec<f64>, ReportError> {
    let path = dir.join("intervals.csv");
    let text = std::fs::read_to_string(&path).map_err(io(&path))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|c| *c == name)
            .ok_or_else(|| bad(&path, format!("no column {name}")))
    };
    let (elapsed, phase, achieved) = (
        column("elapsed_s")?,
        column("phase")?,
        column("achieved_ops_s")?,
    );
    // (end of the interval, summed rate over the operation types)
    let mut seconds: Vec<(f64, f64)> = Vec::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        if f.get(phase) != Some(&"measured") {
            continue;
        }
        let number = |i: usize| -> Result<f64, ReportError> {
            f.get(i)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| bad(&path, format!("bad row: {line}")))
        };
        let (end, value) = (number(elapsed)?, number(achieved)?);
        match seconds.iter_mut().find(|(e, _)| *e == end) {
            Some((_, total)) => *total += value,
            None => seconds.push((end, value)),
        }
    }
    let mut previous_end = 0.0;
    let mut values = Vec::new();
    for (end, value) in seconds {
        if end - previous_end >= 0.5 {
            values.push(value);
        }
        previous_end = end;
    }
    Ok(values)
}

fn hlog_intervals(path: &Path) -> Result<Vec<Histogram<u64>>, ReportError> {
    let bytes = std::fs::read(path).map_err(io(path))?;
    let mut deserializer = Deserializer::new();
    let mut out = Vec::new();
    for entry in IntervalLogIterator::new(&bytes) {
        let entry = entry.map_err(|e| bad(path, format!("{e:?}")))?;
        if let LogEntry::Interval(interval) = entry {
            let raw = base64::engine::general_purpose::STANDARD
                .decode(interval.encoded_histogram())
                .map_err(|e| bad(path, e.to_string()))?;
            let h: Histogram<u64> = deserializer
                .deserialize(&mut raw.as_slice())
                .map_err(|e| bad(path, format!("{e:?}")))?;
            out.push(h);
        }
    }
    Ok(out)
}

fn load(dir: &Path) -> Result<RunData, ReportError> {
    let mut intervals = Vec::new();
    for op in ["read", "write"] {
        let path = dir.join(format!("{op}.hlog"));
        if path.is_file() {
            let h = hlog_intervals(&path)?;
            if h.iter().any(|h| !h.is_empty()) {
                intervals.push((op.to_string(), h));
            }
        }
    }
    Ok(RunData {
        throughput: throughput(dir)?,
        intervals,
    })
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

fn variance(values: &[f64]) -> f64 {
    let m = mean(values);
    values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (values.len().max(2) - 1) as f64
}

/// The sample size worth as many independent values: `n (1 - r) / (1 + r)` with `r` the lag-1
/// autocorrelation (only a positive one shrinks it).
fn effective_size(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let m = mean(values);
    let denominator: f64 = values.iter().map(|v| (v - m).powi(2)).sum();
    if denominator == 0.0 || values.len() < 3 {
        return n;
    }
    let r = values
        .windows(2)
        .map(|w| (w[0] - m) * (w[1] - m))
        .sum::<f64>()
        / denominator;
    let r = r.clamp(0.0, 0.99);
    (n * (1.0 - r) / (1.0 + r)).max(2.0)
}

/// Welch's t-test of the means of two autocorrelated series.
pub fn welch(a: &[f64], b: &[f64], figure: &str) -> Option<FigureDiff> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (ma, mb) = (mean(a), mean(b));
    let (na, nb) = (effective_size(a), effective_size(b));
    let (va, vb) = (variance(a) / na, variance(b) / nb);
    let se = (va + vb).sqrt();
    let diff = mb - ma;
    let (p_value, half_width) = if se == 0.0 {
        (if diff == 0.0 { 1.0 } else { 0.0 }, 0.0)
    } else {
        let df = (va + vb).powi(2) / (va.powi(2) / (na - 1.0) + vb.powi(2) / (nb - 1.0));
        let t = StudentsT::new(0.0, 1.0, df.max(1.0)).ok()?;
        let p = 2.0 * (1.0 - t.cdf((diff / se).abs()));
        (p, t.inverse_cdf(1.0 - (1.0 - CONFIDENCE) / 2.0) * se)
    };
    Some(FigureDiff {
        figure: figure.to_string(),
        a: ma,
        b: mb,
        diff,
        ci: (diff - half_width, diff + half_width),
        p_value: Some(p_value),
        significant: p_value < 1.0 - CONFIDENCE,
        method: "Welch t (autocorrelation-adjusted)",
    })
}

/// Merges neighbouring seconds so that at most `MAX_INTERVALS` histograms remain.
fn coarsen(intervals: &[Histogram<u64>]) -> Vec<Histogram<u64>> {
    let group = intervals.len().div_ceil(MAX_INTERVALS).max(1);
    intervals
        .chunks(group)
        .map(|chunk| {
            let mut merged = Histogram::<u64>::new(3).expect("3 significant digits are valid");
            for h in chunk {
                let _ = merged.add(h);
            }
            merged
        })
        .collect()
}

fn quantile_ms(h: &Histogram<u64>, q: f64) -> f64 {
    h.value_at_quantile(q) as f64 / 1000.0
}

/// One moving-block bootstrap resample of `intervals` (circular blocks of `block` intervals).
fn resample(intervals: &[Histogram<u64>], block: usize, rng: &mut impl Rng) -> Histogram<u64> {
    let n = intervals.len();
    let mut merged = Histogram::<u64>::new(3).expect("3 significant digits are valid");
    let mut taken = 0;
    while taken < n {
        let start = rng.random_range(0..n);
        for k in 0..block.min(n - taken) {
            let _ = merged.add(&intervals[(start + k) % n]);
        }
        taken += block;
    }
    merged
}

/// The difference of a percentile between two runs, with a bootstrap confidence interval.
pub fn bootstrap_quantile(
    a: &[Histogram<u64>],
    b: &[Histogram<u64>],
    q: f64,
    figure: &str,
) -> Option<FigureDiff> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (a, b) = (coarsen(a), coarsen(b));
    let whole = |h: &[Histogram<u64>]| {
        let mut merged = Histogram::<u64>::new(3).expect("3 significant digits are valid");
        for x in h {
            let _ = merged.add(x);
        }
        quantile_ms(&merged, q)
    };
    let (qa, qb) = (whole(&a), whole(&b));
    let block = |n: usize| ((n as f64).sqrt().round() as usize).max(1);
    // A fixed seed: the same two runs always give the same interval.
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x0c9b_e7c4);
    let mut diffs: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            quantile_ms(&resample(&b, block(b.len()), &mut rng), q)
                - quantile_ms(&resample(&a, block(a.len()), &mut rng), q)
        })
        .collect();
    diffs.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    let at = |p: f64| diffs[((p * (RESAMPLES - 1) as f64).round() as usize).min(RESAMPLES - 1)];
    let ci = (at(tail), at(1.0 - tail));
    Some(FigureDiff {
        figure: figure.to_string(),
        a: qa,
        b: qb,
        diff: qb - qa,
        ci,
        p_value: None,
        significant: ci.0 > 0.0 || ci.1 < 0.0,
        method: "block bootstrap over seconds",
    })
}

/// Compares run directory `b` against run directory `a`.
pub fn compare_runs(a: &Path, b: &Path) -> Result<Vec<FigureDiff>, ReportError> {
    for dir in [a, b] {
        if !dir.join("summary.json").is_file() {
            return Err(ReportError::NotARun(PathBuf::from(dir)));
        }
    }
    let (da, db) = (load(a)?, load(b)?);
    let mut rows = Vec::new();
    rows.extend(welch(
        &da.throughput,
        &db.throughput,
        "throughput (ok ops/s)",
    ));
    for (op, ia) in &da.intervals {
        let Some((_, ib)) = db.intervals.iter().find(|(o, _)| o == op) else {
            continue;
        };
        let means = |h: &[Histogram<u64>]| -> Vec<f64> {
            h.iter()
                .filter(|h| !h.is_empty())
                .map(|h| h.mean() / 1000.0)
                .collect()
        };
        rows.extend(welch(
            &means(ia),
            &means(ib),
            &format!("{op} mean latency (ms)"),
        ));
        for (name, q) in [("p50", 0.5), ("p99", 0.99), ("p99.9", 0.999)] {
            rows.extend(bootstrap_quantile(ia, ib, q, &format!("{op} {name} (ms)")));
        }
    }
    Ok(rows)
}

/// The comparison as a terminal table.
pub fn format_comparison(a: &Path, b: &Path, rows: &[FigureDiff]) -> String {
    let mut out = format!("A: {}\nB: {}\n", a.display(), b.display());
    out.push_str(&format!(
        "{:<26} {:>11} {:>11} {:>10} {:>8} {:>23} {:>8}  {}\n",
        "figure", "A", "B", "B - A", "change", "95% interval of B - A", "p", "verdict"
    ));
    for r in rows {
        let change = if r.a != 0.0 {
            format!("{:+.1}%", r.diff / r.a * 100.0)
        } else {
            "-".into()
        };
        out.push_str(&format!(
            "{:<26} {:>11.3} {:>11.3} {:>+10.3} {:>8} {:>23} {:>8}  {}\n",
            r.figure,
            r.a,
            r.b,
            r.diff,
            change,
            format!("[{:+.3}, {:+.3}]", r.ci.0, r.ci.1),
            r.p_value.map_or_else(|| "-".into(), |p| format!("{p:.4}")),
            if r.significant {
                "significant"
            } else {
                "not significant"
            }
        ));
    }
    out.push_str("means: Welch's t-test on per-second values, sample size adjusted for autocorrelation; percentiles: moving-block bootstrap over one-second histograms\n");
    out
}

/// Figures the report compares between cells (the rest stays for `cqlbench compare`).
fn in_report(figure: &str) -> bool {
    figure.starts_with("throughput")
        || figure.ends_with(" p99 (ms)")
        || figure.ends_with(" p99.9 (ms)")
}

pub(crate) const COMPARISON_HEADINGS: [&str; 9] = [
    "rate",
    "A",
    "B",
    "figure",
    "A value",
    "B value",
    "B - A",
    "95 % interval",
    "verdict",
];

/// The report's comparisons: every configuration against the first one (the baseline) at each rate,
/// and, where a plan has repeats, each configuration's later repeats against its first (how far
/// a configuration differs from itself). First repeats stand for a cell.
pub(crate) fn comparison_rows(campaign: &crate::Campaign) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut add =
        |rate: &crate::RateKey, a: &crate::Cell, b: &crate::Cell, label: (String, String)| {
            let Ok(diffs) = compare_runs(&a.dir, &b.dir) else {
                return;
            };
            for d in diffs.iter().filter(|d| in_report(&d.figure)) {
                rows.push(vec![
                    rate.label(),
                    label.0.clone(),
                    label.1.clone(),
                    d.figure.clone(),
                    format!("{:.3}", d.a),
                    format!("{:.3}", d.b),
                    format!("{:+.3}", d.diff),
                    format!("[{:+.3}, {:+.3}]", d.ci.0, d.ci.1),
                    if d.significant {
                        "significant"
                    } else {
                        "not significant"
                    }
                    .to_string(),
                ]);
            }
        };
    let named = |cell: &crate::Cell| match &cell.repeat {
        Some(r) => format!("{} (repeat {r})", cell.config),
        None => cell.config.clone(),
    };
    let Some(baseline) = campaign.configs.first() else {
        return rows;
    };
    for rate in &campaign.rates {
        let Some(base) = campaign.cells_at(baseline, rate).next() else {
            continue;
        };
        for config in campaign.configs.iter().skip(1) {
            if let Some(cell) = campaign.cells_at(config, rate).next() {
                add(rate, base, cell, (named(base), named(cell)));
            }
        }
        for config in &campaign.configs {
            let mut repeats = campaign.cells_at(config, rate);
            let Some(first) = repeats.next() else {
                continue;
            };
            for later in repeats {
                add(rate, first, later, (named(first), named(later)));
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_finds_a_real_shift_and_not_noise() {
        // Two noisy series around 100 and 110 (deterministic noise).
        let noise = |i: usize| ((i * 7919) % 13) as f64 - 6.0;
        let a: Vec<f64> = (0..60).map(|i| 100.0 + noise(i)).collect();
        let b: Vec<f64> = (0..60).map(|i| 110.0 + noise(i + 3)).collect();
        let d = welch(&a, &b, "x").unwrap();
        assert!(d.significant && d.p_value.unwrap() < 0.001, "{d:?}");
        assert!(d.ci.0 < 10.0 && d.ci.1 > 10.0, "{d:?}");
        let same = welch(&a, &a.iter().rev().cloned().collect::<Vec<_>>(), "x").unwrap();
        assert!(!same.significant, "{same:?}");
    }

    #[test]
    fn autocorrelation_shrinks_the_sample() {
        let smooth: Vec<f64> = (0..100).map(|i| (i as f64 / 10.0).sin()).collect();
        assert!(effective_size(&smooth) < 10.0);
        let alternating: Vec<f64> = (0..100)
            .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        assert_eq!(effective_size(&alternating), 100.0);
    }

    #[test]
    fn bootstrap_sees_a_shifted_tail() {
        let histograms = |base: u64| -> Vec<Histogram<u64>> {
            (0..30)
                .map(|i| {
                    let mut h = Histogram::<u64>::new(3).unwrap();
                    for k in 0..1000u64 {
                        h.record(base + (k * 37 + i * 11) % 1000).unwrap();
                    }
                    h
                })
                .collect()
        };
        let (a, b) = (histograms(1000), histograms(3000));
        let d = bootstrap_quantile(&a, &b, 0.99, "p99").unwrap();
        assert!(d.significant && (d.diff - 2.0).abs() < 0.05, "{d:?}");
        let same = bootstrap_quantile(&a, &a, 0.99, "p99").unwrap();
        assert!(!same.significant && same.diff == 0.0, "{same:?}");
    }
}
