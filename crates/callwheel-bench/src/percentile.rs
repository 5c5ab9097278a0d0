//! Percentiles, with one definition for every table of the tool: the nearest rank. The q-th
//! percentile of n sorted samples is the sample at rank ⌈q·n⌉ (1-based, at least 1): a value
//! that was measured, never an interpolation, so the median of an even count is the lower of
//! the middle two. (`callwheel stress` summarises its millions of calls in an hdrhistogram,
//! whose quantiles follow the same rule within the histogram's three significant digits.)

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
    let rank = (n * per_mille.min(1000) as usize)
        .div_ceil(1000)
        .clamp(1, n);
    Some(sorted[rank - 1])
}

/// The median of `samples` (any order) by nearest rank; `None` for no samples.
pub fn median(samples: &[f64]) -> Option<f64> {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    nearest_rank(&sorted, 500)
}
