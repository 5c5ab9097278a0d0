//! Percentiles, with one definition for every table of the tool: the nearest rank. The q-th
//! percentile of n sorted samples is the sample at rank ⌈q·n⌉ (1-based, at least 1): a value
//! that was measured, never an interpolation, so the median of an even count is the lower of
//! the middle two. The same rank picks the point of a histogram of millions of calls
//! ([`nearest_rank_recorded`], what `callwheel stress` uses), there to the histogram's
//! precision.

use hdrhistogram::Histogram;

/// The 1-based nearest rank of the `per_mille`-th point among `n` (> 0) samples.
fn rank(n: u64, per_mille: u32) -> u64 {
    (n * u64::from(per_mille.min(1000)))
        .div_ceil(1000)
        .clamp(1, n)
}

/// The `per_mille`-th per-mille point of `sorted` (ascending) by nearest rank: 500 is the
/// median, 990 the 99th percentile; `None` for no samples.
///
/// ```
/// use callwheel_bench::percentile::nearest_rank;
///
/// assert_eq!(nearest_rank(&[1, 2, 3, 4], 500), Some(2));
/// assert_eq!(nearest_rank(&[1, 2, 3, 4], 990), Some(4));
/// assert_eq!(nearest_rank::<u64>(&[], 500), None);
/// ```
pub fn nearest_rank<T: Copy>(sorted: &[T], per_mille: u32) -> Option<T> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let rank = rank(n as u64, per_mille) as usize;
    Some(sorted[rank - 1])
}

/// The median of `samples` (any order) by nearest rank; `None` for no samples.
pub fn median(samples: &[f64]) -> Option<f64> {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    nearest_rank(&sorted, 500)
}

/// The `per_mille`-th per-mille point of the values recorded in `histogram`, by the same
/// nearest rank as [`nearest_rank`]: the largest value equivalent to the recorded value at that
/// rank (exact below 2^11 with three significant digits, within 0.1 % above); `None` when
/// nothing was recorded.
///
/// ```
/// use callwheel_bench::percentile::nearest_rank_recorded;
/// use hdrhistogram::Histogram;
///
/// let mut h = Histogram::<u64>::new(3).unwrap();
/// for v in [4, 1, 3, 2] {
///     h.record(v).unwrap();
/// }
/// assert_eq!(nearest_rank_recorded(&h, 500), Some(2));
/// assert_eq!(nearest_rank_recorded(&h, 990), Some(4));
/// ```
pub fn nearest_rank_recorded(histogram: &Histogram<u64>, per_mille: u32) -> Option<u64> {
    let n = histogram.len();
    if n == 0 {
        return None;
    }
    let rank = rank(n, per_mille);
    let mut seen = 0;
    for v in histogram.iter_recorded() {
        seen += v.count_at_value();
        if seen >= rank {
            return Some(histogram.highest_equivalent(v.value_iterated_to()));
        }
    }
    Some(histogram.max())
}

#[cfg(test)]
mod tests {
    use super::{nearest_rank, nearest_rank_recorded};
    use crate::workload::SplitMix64;
    use hdrhistogram::Histogram;

    /// Below 2^11 a three-digit histogram keeps every value exactly, so both forms of the rule
    /// must pick the same sample, at every rank the tables use and at the ends.
    #[test]
    fn the_histogram_picks_the_sorted_samples_point() {
        let mut rng = SplitMix64::new(7);
        for n in [1usize, 2, 3, 10, 999, 1000, 1001, 4321] {
            let mut samples: Vec<u64> = (0..n).map(|_| rng.next_u64() % 2048).collect();
            let mut h = Histogram::<u64>::new(3).unwrap();
            for &v in &samples {
                h.record(v).unwrap();
            }
            samples.sort_unstable();
            for per_mille in [0, 1, 10, 250, 500, 501, 900, 990, 999, 1000] {
                assert_eq!(
                    nearest_rank_recorded(&h, per_mille),
                    nearest_rank(&samples, per_mille),
                    "n = {n}, per mille = {per_mille}"
                );
            }
        }
        assert_eq!(
            nearest_rank_recorded(&Histogram::<u64>::new(3).unwrap(), 500),
            None
        );
    }
}

/// A set of samples (lateness in nanoseconds, as a rule) summarised by nearest-rank
/// percentiles: the one summary every latency table of the tool prints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// What was measured.
    pub source: &'static str,
    /// Number of samples.
    pub samples: usize,
    /// Smallest sample.
    pub min: u64,
    /// Mean, rounded down.
    pub avg: u64,
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest sample.
    pub max: u64,
    /// Every sample, ascending (for histograms).
    pub sorted: Vec<u64>,
}

impl Summary {
    /// The summary of `samples` (any order); `None` when there are none.
    ///
    /// ```
    /// use callwheel_bench::percentile::Summary;
    ///
    /// let s = Summary::of("x", vec![4, 1, 3, 2]).unwrap();
    /// assert_eq!((s.min, s.p50, s.max, s.avg), (1, 2, 4, 2));
    /// assert!(Summary::of("y", Vec::new()).is_none());
    /// ```
    pub fn of(source: &'static str, mut samples: Vec<u64>) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        samples.sort_unstable();
        let n = samples.len();
        let rank = |per_mille| nearest_rank(&samples, per_mille).unwrap_or(0);
        let sum: u128 = samples.iter().map(|&s| u128::from(s)).sum();
        Some(Summary {
            source,
            samples: n,
            min: samples[0],
            avg: (sum / n as u128) as u64,
            p50: rank(500),
            p99: rank(990),
            p999: rank(999),
            max: samples[n - 1],
            sorted: samples,
        })
    }

    /// Minimum, mean, median, 99th and 99.9th percentiles and maximum, in that order.
    pub fn figures(&self) -> [u64; 6] {
        [self.min, self.avg, self.p50, self.p99, self.p999, self.max]
    }
}
