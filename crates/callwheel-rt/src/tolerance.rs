//! How late a timer may fire: calloutng's precision, an absolute amount and a share of the
//! interval (`C_PREL`), whichever is larger.

use std::time::Duration;

use crate::instant::saturating_ns;

/// The default or per-timer tolerance: the window of a timer due in `interval` nanoseconds is
/// `[deadline, deadline + max(absolute, interval × ppm / 10^6)]`.
///
/// ```
/// use callwheel_rt::Tolerance;
///
/// use std::time::Duration;
///
/// let t = Tolerance::percent(5).with_absolute(Duration::from_micros(1));
/// assert_eq!(t.for_interval(10_000_000), 500_000); // 5 % of 10 ms
/// assert_eq!(t.for_interval(10_000), 1_000); // the absolute floor
/// assert_eq!(Tolerance::EXACT.for_interval(u64::MAX), 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Tolerance {
    /// The absolute part, in nanoseconds (the constructors take a `Duration`).
    pub absolute: u64,
    /// The relative part, in millionths of the interval.
    pub ppm: u32,
}

impl Tolerance {
    /// No tolerance: every timer fires as close to its deadline as the clock allows.
    pub const EXACT: Tolerance = Tolerance {
        absolute: 0,
        ppm: 0,
    };

    /// An absolute tolerance of `d` (saturating at `u64::MAX` nanoseconds, about 584 years).
    pub const fn absolute(d: Duration) -> Tolerance {
        Tolerance {
            absolute: saturating_ns(d),
            ppm: 0,
        }
    }

    /// A tolerance of `percent` per cent of the interval (values above 100 read as 100: a
    /// window longer than the wait itself buys nothing a coarser clock would not).
    pub const fn percent(percent: u32) -> Tolerance {
        let p = if percent > 100 { 100 } else { percent };
        Tolerance {
            absolute: 0,
            ppm: p * 10_000,
        }
    }

    /// This tolerance with its absolute part set to `d` (saturating as [`Tolerance::absolute`]).
    pub const fn with_absolute(self, d: Duration) -> Tolerance {
        Tolerance {
            absolute: saturating_ns(d),
            ppm: self.ppm,
        }
    }

    /// The tolerance in nanoseconds for a timer due `interval` nanoseconds from now:
    /// `max(absolute, interval × ppm / 10^6)`, saturating at `u64::MAX` (the fields are public,
    /// so `ppm` may exceed 10^6 and the product may pass 64 bits).
    pub fn for_interval(self, interval: u64) -> u64 {
        // 128-bit product: u64::MAX × u32::MAX fits in 128 bits; the quotient may not fit in 64.
        let relative = u128::from(interval) * u128::from(self.ppm) / 1_000_000;
        self.absolute
            .max(u64::try_from(relative).unwrap_or(u64::MAX))
    }

    /// The tolerance for a timer due at `deadline` on a clock that `now` reads: the interval
    /// from now to the deadline (none for a deadline already passed) through
    /// [`Tolerance::for_interval`], the clock read only when the tolerance has a relative
    /// part. The one rule of every driver's default tolerance.
    pub fn until(self, deadline: u64, now: impl FnOnce() -> u64) -> u64 {
        if self.ppm == 0 {
            return self.absolute;
        }
        self.for_interval(deadline.saturating_sub(now()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_become_saturated_nanoseconds() {
        assert_eq!(
            Tolerance::absolute(Duration::from_millis(2)).absolute,
            2_000_000
        );
        assert_eq!(Tolerance::absolute(Duration::MAX).absolute, u64::MAX);
        assert_eq!(Tolerance::absolute(Duration::ZERO), Tolerance::EXACT);
        let t = Tolerance::percent(5).with_absolute(Duration::from_nanos(u64::MAX) * 2);
        assert_eq!((t.absolute, t.ppm), (u64::MAX, 50_000));
    }

    #[test]
    fn the_larger_of_absolute_and_relative_wins() {
        let t = Tolerance {
            absolute: 300,
            ppm: 100_000,
        };
        assert_eq!(t.for_interval(1_000), 300);
        assert_eq!(t.for_interval(10_000), 1_000);
    }

    #[test]
    fn percent_is_capped_and_huge_intervals_do_not_overflow() {
        assert_eq!(Tolerance::percent(250), Tolerance::percent(100));
        assert_eq!(Tolerance::percent(100).for_interval(u64::MAX), u64::MAX);
        assert_eq!(Tolerance::percent(1).for_interval(u64::MAX), u64::MAX / 100);
    }

    #[test]
    fn a_relative_part_above_the_interval_saturates_instead_of_wrapping() {
        let t = Tolerance {
            absolute: 0,
            ppm: 2_000_000,
        };
        assert_eq!(t.for_interval(1 << 63), u64::MAX);
        assert_eq!(t.for_interval(1 << 62), 1 << 63);
        let widest = Tolerance {
            absolute: 7,
            ppm: u32::MAX,
        };
        assert_eq!(widest.for_interval(u64::MAX), u64::MAX);
        assert_eq!(widest.for_interval(0), 7);
    }

    #[test]
    fn until_reads_the_clock_only_for_a_relative_part() {
        let absolute = Tolerance::absolute(Duration::from_micros(3));
        assert_eq!(absolute.until(5_000, || panic!("no clock read")), 3_000);
        let relative = Tolerance {
            absolute: 0,
            ppm: 10_000,
        };
        assert_eq!(relative.until(1_000_000, || 0), 10_000);
        assert_eq!(relative.until(1_000_000, || 2_000_000), 0, "already passed");
    }

    proptest::proptest! {
        // Thousands of cases: far too slow for the interpreter, and there is no unsafe here.
        #[cfg_attr(miri, ignore)]
        #[test]
        fn for_interval_is_the_saturated_larger_part(
            interval in proptest::num::u64::ANY,
            ppm in proptest::num::u32::ANY,
            absolute in proptest::num::u64::ANY,
        ) {
            let t = Tolerance { absolute, ppm };
            let relative = u128::from(interval) * u128::from(ppm) / 1_000_000;
            let expect = u128::from(absolute).max(relative).min(u128::from(u64::MAX)) as u64;
            proptest::prop_assert_eq!(t.for_interval(interval), expect);
        }
    }
}
