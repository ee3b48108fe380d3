//! Histogram buckets for latencies from 100 µs to 10 s, dense enough that Prometheus'
//! `histogram_quantile` (linear inside a bucket) lands within a few percent of the true quantile.

use std::sync::OnceLock;

use hdrhistogram::Histogram;

/// Buckets per doubling: neighbouring bounds differ by 2^(1/16) - 1 = 4.4 %, the most an
/// interpolated quantile can be off by.
const PER_DOUBLING: u32 = 16;
const LOWEST_US: f64 = 100.0;
/// 16 × log2(10 s / 100 µs) = 265.8: the last bound is the first one at or above 10 s.
const BOUNDS: u32 = 267;

/// The buckets' upper bounds in µs (inclusive, as Prometheus' `le`), increasing; `+Inf` follows.
pub fn bucket_bounds_us() -> &'static [u64] {
    static BOUNDS_US: OnceLock<Vec<u64>> = OnceLock::new();
    BOUNDS_US.get_or_init(|| {
        (0..BOUNDS)
            .map(|k| (LOWEST_US * 2f64.powf(f64::from(k) / f64::from(PER_DOUBLING))).round() as u64)
            .collect()
    })
}

/// Cumulative counts of a latency histogram in the exposition's buckets.
#[derive(Debug, Clone, PartialEq)]
pub struct BucketCounts {
    /// Per bucket (not cumulative), the last one being `+Inf`.
    pub per_bucket: Vec<u64>,
    pub count: u64,
    /// Sum of the values in µs.
    pub sum_us: f64,
}

impl Default for BucketCounts {
    fn default() -> Self {
        BucketCounts {
            per_bucket: vec![0; bucket_bounds_us().len() + 1],
            count: 0,
            sum_us: 0.0,
        }
    }
}

impl BucketCounts {
    /// Adds every value of `h` (µs, as the recorders keep them). A value is taken at the top of its
    /// HdrHistogram bucket, as `value_at_quantile` reports it, so that a quantile computed from
    /// these buckets brackets the one in summary.json.
    pub fn add(&mut self, h: &Histogram<u64>) {
        let bounds = bucket_bounds_us();
        for v in h.iter_recorded() {
            let value = v.value_iterated_to();
            let n = v.count_at_value();
            let bucket = bounds.partition_point(|&bound| bound < value);
            self.per_bucket[bucket] += n;
            self.count += n;
            self.sum_us += value as f64 * n as f64;
        }
    }

    /// `(le in seconds or None for +Inf, cumulative count)` for every bucket.
    pub fn cumulative(&self) -> impl Iterator<Item = (Option<f64>, u64)> + '_ {
        let bounds = bucket_bounds_us();
        self.per_bucket
            .iter()
            .scan(0u64, |total, n| {
                *total += n;
                Some(*total)
            })
            .enumerate()
            .map(move |(i, total)| (bounds.get(i).map(|&us| us as f64 / 1e6), total))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn histogram_of(values: &[u64]) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for &v in values {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn bounds_run_from_100_us_past_10_s_with_at_most_5_percent_between_neighbours_after_rounding_to_us(
    ) {
        let bounds = bucket_bounds_us();
        assert_eq!(bounds[0], 100);
        assert!(bounds[bounds.len() - 2] < 10_000_000);
        assert!(*bounds.last().unwrap() >= 10_000_000);
        for pair in bounds.windows(2) {
            assert!(pair[1] > pair[0]);
            assert!(pair[1] as f64 / pair[0] as f64 <= 1.05, "{pair:?}");
        }
    }

    #[test]
    fn values_fall_in_the_first_bucket_whose_bound_is_not_below_them() {
        let mut counts = BucketCounts::default();
        counts.add(&histogram_of(&[50, 100, 101, 104, 20_000_000]));
        let cumulative: Vec<_> = counts.cumulative().collect();
        assert_eq!(
            cumulative[0],
            (Some(0.0001), 2),
            "50 and 100 µs are ≤ 100 µs"
        );
        assert_eq!(
            cumulative[1],
            (Some(0.000104), 4),
            "101 and 104 µs are ≤ 104 µs"
        );
        assert_eq!(cumulative[cumulative.len() - 2].1, 4, "20 s is above 10 s");
        assert_eq!(cumulative.last().unwrap(), &(None, 5));
        assert_eq!(counts.count, 5);
    }

    #[test]
    fn the_sum_counts_each_value_at_the_top_of_its_hdr_bucket() {
        let mut counts = BucketCounts::default();
        let h = histogram_of(&[1000, 1000, 123_456]);
        counts.add(&h);
        let expected =
            2.0 * h.highest_equivalent(1000) as f64 + h.highest_equivalent(123_456) as f64;
        assert_eq!(counts.sum_us, expected);
    }
}
