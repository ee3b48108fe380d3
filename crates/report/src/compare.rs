//! `compare A B`: is the difference between two runs real or noise?
//!
//! Means (throughput, mean latency) are compared with Welch's t-test on per-second values, with the
//! sample size shrunk for the correlation between neighbouring seconds (a load test's seconds are not
//! independent: a compaction or a GC cycle spans several), as latte's `show -b` does. Percentiles have
//! no such formula: they are compared by a moving-block bootstrap over the runs' one-second
//! histograms (blocks keep neighbouring seconds together), merged exactly as HdrHistograms.

use std::path::{Path, PathBuf};

use cqlbench_results::hlog::{self, new_histogram, HlogKind};
use cqlbench_results::{shown, Intervals, Summary, ABSENT, SUMMARY_FILE};
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

/// One figure of both runs: their difference, or where a run has no value of it (an operation
/// without a successful one), the values there are.
#[derive(Debug, Clone)]
pub enum Comparison {
    Diff(FigureDiff),
    Absent {
        figure: String,
        a: Option<f64>,
        b: Option<f64>,
    },
}

impl Comparison {
    pub fn figure(&self) -> &str {
        match self {
            Comparison::Diff(d) => &d.figure,
            Comparison::Absent { figure, .. } => figure,
        }
    }
}

/// What one run directory contributes.
struct RunData {
    /// Successful operations per second over the measured full seconds.
    throughput: Vec<f64>,
    /// Per operation: the one-second histograms of corrected latency (µs); none for an operation
    /// without a successful one.
    intervals: Vec<(String, Vec<Histogram<u64>>)>,
}

impl RunData {
    /// Whether the run has the operation (in its summary).
    fn has(&self, op: &str) -> bool {
        self.intervals.iter().any(|(o, _)| o == op)
    }

    /// The seconds of an operation that had successes.
    fn seconds(&self, op: &str) -> Option<&[Histogram<u64>]> {
        self.intervals
            .iter()
            .find(|(o, h)| o == op && h.iter().any(|h| !h.is_empty()))
            .map(|(_, h)| h.as_slice())
    }
}

/// The latency figures compared per operation: the mean, then percentiles.
const LATENCY_FIGURES: [(&str, Option<f64>); 4] = [
    ("mean latency", None),
    ("p50", Some(0.5)),
    ("p99", Some(0.99)),
    ("p99.9", Some(0.999)),
];

fn means(h: &[Histogram<u64>]) -> Vec<f64> {
    h.iter()
        .filter(|h| !h.is_empty())
        .map(|h| h.mean() / 1000.0)
        .collect()
}

/// A latency figure over a whole run, from its seconds.
fn whole_run(seconds: &[Histogram<u64>], quantile: Option<f64>) -> f64 {
    let mut merged = new_histogram();
    for h in seconds {
        let _ = merged.add(h);
    }
    match quantile {
        Some(q) => quantile_ms(&merged, q),
        None => merged.mean() / 1000.0,
    }
}

/// One operation's latency figures in both runs.
fn latency_comparisons(
    op: &str,
    a: Option<&[Histogram<u64>]>,
    b: Option<&[Histogram<u64>]>,
) -> Vec<Comparison> {
    LATENCY_FIGURES
        .iter()
        .filter_map(|&(name, quantile)| {
            let figure = format!("{op} {name} (ms)");
            let diff = match (a, b) {
                (Some(ia), Some(ib)) => match quantile {
                    Some(q) => bootstrap_quantile(ia, ib, q, &figure),
                    None => welch(&means(ia), &means(ib), &figure),
                },
                _ => {
                    return Some(Comparison::Absent {
                        a: a.map(|h| whole_run(h, quantile)),
                        b: b.map(|h| whole_run(h, quantile)),
                        figure,
                    })
                }
            };
            diff.map(Comparison::Diff)
        })
        .collect()
}

/// Per-second successful throughput from intervals.csv, of the reporting intervals at least half a
/// second long (the drain at a run's end can be a few milliseconds: its rate says nothing).
fn throughput(dir: &Path) -> Result<Vec<f64>, ReportError> {
    let intervals = Intervals::read(dir)?;
    // (end of the interval, summed rate over the operation types)
    let mut seconds: Vec<(f64, f64)> = Vec::new();
    for row in intervals.rows.iter().filter(|r| r.measured) {
        let (end, value) = (row.elapsed_s, row.achieved_ops_s);
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

fn load(dir: &Path) -> Result<RunData, ReportError> {
    let summary = Summary::read(dir)?;
    let mut intervals = Vec::new();
    for op in summary.ops.keys() {
        let path = dir.join(HlogKind::Latency.file_name(op));
        let h: Vec<Histogram<u64>> = if path.is_file() {
            hlog::read(&path)?
                .intervals
                .into_iter()
                .map(|i| i.histogram)
                .collect()
        } else {
            Vec::new()
        };
        intervals.push((op.clone(), h));
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
            let mut merged = new_histogram();
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
    let mut merged = new_histogram();
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
        let mut merged = new_histogram();
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

/// Compares run directory `b` against run directory `a`: throughput, then every operation of either
/// run (its latency figures absent where it had no successful operation).
pub fn compare_runs(a: &Path, b: &Path) -> Result<Vec<Comparison>, ReportError> {
    for dir in [a, b] {
        if !dir.join(SUMMARY_FILE).is_file() {
            return Err(ReportError::NotARun(PathBuf::from(dir)));
        }
    }
    let (da, db) = (load(a)?, load(b)?);
    let mut rows = Vec::new();
    rows.extend(
        welch(&da.throughput, &db.throughput, "throughput (ok ops/s)").map(Comparison::Diff),
    );
    let ops: std::collections::BTreeSet<&String> = da
        .intervals
        .iter()
        .chain(&db.intervals)
        .map(|(op, _)| op)
        .collect();
    for op in ops {
        let (ia, ib) = (da.seconds(op), db.seconds(op));
        if ia.is_none() && ib.is_none() && !(da.has(op) && db.has(op)) {
            // An operation only one run has, and without successes there: nothing to show.
            continue;
        }
        rows.extend(latency_comparisons(op, ia, ib));
    }
    Ok(rows)
}

fn three(v: f64) -> String {
    format!("{v:.3}")
}

/// The comparison as a terminal table ("–" where a figure does not exist).
pub fn format_comparison(a: &Path, b: &Path, rows: &[Comparison]) -> String {
    let mut out = format!("A: {}\nB: {}\n", a.display(), b.display());
    out.push_str(&format!(
        "{:<26} {:>11} {:>11} {:>10} {:>8} {:>23} {:>8}  {}\n",
        "figure", "A", "B", "B - A", "change", "95% interval of B - A", "p", "verdict"
    ));
    for row in rows {
        let cells = match row {
            Comparison::Diff(r) => [
                three(r.a),
                three(r.b),
                format!("{:+.3}", r.diff),
                shown((r.a != 0.0).then(|| r.diff / r.a * 100.0), |c| {
                    format!("{c:+.1}%")
                }),
                format!("[{:+.3}, {:+.3}]", r.ci.0, r.ci.1),
                shown(r.p_value, |p| format!("{p:.4}")),
                verdict(r.significant).to_string(),
            ],
            Comparison::Absent { a, b, .. } => [
                shown(*a, three),
                shown(*b, three),
                ABSENT.into(),
                ABSENT.into(),
                ABSENT.into(),
                ABSENT.into(),
                ABSENT.into(),
            ],
        };
        out.push_str(&format!(
            "{:<26} {:>11} {:>11} {:>10} {:>8} {:>23} {:>8}  {}\n",
            row.figure(),
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            cells[5],
            cells[6]
        ));
    }
    out.push_str("means: Welch's t-test on per-second values, sample size adjusted for autocorrelation; percentiles: moving-block bootstrap over one-second histograms\n");
    out
}

fn verdict(significant: bool) -> &'static str {
    if significant {
        "significant"
    } else {
        "not significant"
    }
}

/// A comparison's cells in the report: figure, A, B, B − A, interval, verdict.
fn report_cells(row: &Comparison) -> [String; 6] {
    match row {
        Comparison::Diff(d) => [
            d.figure.clone(),
            three(d.a),
            three(d.b),
            format!("{:+.3}", d.diff),
            format!("[{:+.3}, {:+.3}]", d.ci.0, d.ci.1),
            verdict(d.significant).to_string(),
        ],
        Comparison::Absent { figure, a, b } => [
            figure.clone(),
            shown(*a, three),
            shown(*b, three),
            ABSENT.into(),
            ABSENT.into(),
            ABSENT.into(),
        ],
    }
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
            for row in diffs.iter().filter(|d| in_report(d.figure())) {
                let mut cells = vec![rate.label(), label.0.clone(), label.1.clone()];
                cells.extend(report_cells(row));
                rows.push(cells);
            }
        };
    // A doubtful cell's name carries the mark its footnote explains.
    let named = |cell: &crate::Cell| {
        let name = match &cell.repeat {
            Some(r) => format!("{} (repeat {r})", cell.config),
            None => cell.config.clone(),
        };
        if cell.is_doubtful() {
            format!("{name}{}", crate::DOUBTFUL_MARK)
        } else {
            name
        }
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
