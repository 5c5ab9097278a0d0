//! `Instant`s and `Duration`s as clock nanoseconds, saturating.
//!
//! # `Instant` on `CLOCK_MONOTONIC`, exactly
//!
//! On Linux, `std::time::Instant` is a `CLOCK_MONOTONIC` reading kept as whole seconds (an
//! `i64`) and nanoseconds, which is what the runtime's monotonic [`SystemClock`](crate::SystemClock)
//! reads. std exposes no way to see an `Instant`'s value, only exact differences between two
//! of them, so the runtime finds the `Instant` that stands for reading 0 once: the earliest
//! `Instant` std can represent is `i64::MIN` seconds, which is found exactly by a binary search
//! on how far back `Instant::checked_sub` still succeeds, and reading 0 lies `2^63` seconds
//! after it. Every conversion is then one exact subtraction. The result is checked against a
//! pair of clock readings taken around an `Instant::now()`; should a future std represent
//! `Instant` differently and the check fail, the runtime falls back to that bracket, which is
//! exact to within the few nanoseconds between the readings (the test
//! `monotonic_instants_convert_exactly` would fail first).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::sys;

/// A `CLOCK_MONOTONIC` reading (0 if it cannot be read, which does not happen on Linux).
fn read_monotonic() -> u64 {
    sys::clock_gettime(rustix::time::ClockId::Monotonic).unwrap_or(0)
}

/// `d` in nanoseconds, saturating at `u64::MAX` (about 584 years): how every `Duration` the
/// project takes becomes the clocks' nanoseconds.
pub const fn saturating_ns(d: Duration) -> u64 {
    // `const`, so the tolerance constructors can take a `Duration` in a constant.
    let ns = d.as_nanos();
    if ns > u64::MAX as u128 {
        u64::MAX
    } else {
        ns as u64
    }
}

/// The `CLOCK_MONOTONIC` reading of `at`, exact (see the [module documentation](self));
/// saturating at 0 and `u64::MAX`.
pub(crate) fn monotonic_ns(at: Instant) -> u64 {
    match *ZERO.get_or_init(find_zero) {
        Zero::At(zero) => match at.checked_duration_since(zero) {
            Some(d) => saturating_ns(d),
            None => 0,
        },
        Zero::Bracket { anchor, ns } => by_distance(at, anchor, ns),
    }
}

/// The `Instant` whose `CLOCK_MONOTONIC` reading is `ns`: the exact inverse of the monotonic
/// [`SystemClock`](crate::SystemClock)'s `ns_at` for every `Instant` it does not saturate (one
/// from before the clock's origin reads 0), so that a future can keep its deadline as one
/// `u64` and still give back the very `Instant` it was made with.
pub fn monotonic_instant(ns: u64) -> Instant {
    let (anchor, at) = match *ZERO.get_or_init(find_zero) {
        Zero::At(zero) => (zero, 0),
        Zero::Bracket { anchor, ns } => (anchor, ns),
    };
    let moved = if ns >= at {
        anchor.checked_add(Duration::from_nanos(ns - at))
    } else {
        anchor.checked_sub(Duration::from_nanos(at - ns))
    };
    // Past what `Instant` can hold (not on Linux, where it holds `i64` seconds): the
    // anchor's side of the range is the nearest that exists.
    moved.unwrap_or(anchor)
}

/// `at` on a clock that read `ns` at `anchor`, by their distance (saturating).
pub(crate) fn by_distance(at: Instant, anchor: Instant, ns: u64) -> u64 {
    match at.checked_duration_since(anchor) {
        Some(ahead) => ns.saturating_add(saturating_ns(ahead)),
        None => ns.saturating_sub(saturating_ns(anchor.duration_since(at))),
    }
}

/// Where `CLOCK_MONOTONIC` reads 0, found once.
static ZERO: OnceLock<Zero> = OnceLock::new();

#[derive(Clone, Copy, Debug)]
enum Zero {
    /// The `Instant` of monotonic reading 0.
    At(Instant),
    /// The representation is not the expected one: a reading close to `anchor`.
    Bracket { anchor: Instant, ns: u64 },
}

/// The largest `Duration` (in nanoseconds) that `anchor.checked_sub` accepts.
fn furthest_back(anchor: Instant) -> u128 {
    let dur = |n: u128| -> Option<Duration> {
        let secs = u64::try_from(n / 1_000_000_000).ok()?;
        // The remainder is below 10^9, so it fits.
        Some(Duration::new(secs, (n % 1_000_000_000) as u32))
    };
    let fits = |n: u128| dur(n).is_some_and(|d| anchor.checked_sub(d).is_some());
    let (mut lo, mut hi) = (0u128, u128::from(u64::MAX) * 1_000_000_000 + 999_999_999);
    if fits(hi) {
        return hi;
    }
    // Invariant: fits(lo), !fits(hi).
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

fn find_zero() -> Zero {
    let read = read_monotonic;
    let before = read();
    let anchor = Instant::now();
    let after = read();
    // `anchor` is `i64::MIN` seconds plus `back`; reading 0 is at 2^63 seconds.
    let back = furthest_back(anchor);
    let offset = back.checked_sub((1u128 << 63) * 1_000_000_000);
    let zero = offset.and_then(|ns| u64::try_from(ns).ok()).and_then(|ns| {
        anchor
            .checked_sub(Duration::from_nanos(ns))
            .map(|z| (z, ns))
    });
    match zero {
        Some((zero, ns)) if (before..=after).contains(&ns) => Zero::At(zero),
        _ => Zero::Bracket {
            anchor,
            ns: before + (after - before) / 2,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore)]
    fn monotonic_instants_convert_exactly() {
        for _ in 0..100 {
            let before = read_monotonic();
            let now = Instant::now();
            let after = read_monotonic();
            let ns = monotonic_ns(now);
            assert!(
                (before..=after).contains(&ns),
                "{before} <= {ns} <= {after}"
            );
            // Differences are exact whatever the origin; the origin is exact when the
            // `Instant` is a `CLOCK_MONOTONIC` timespec, which std's `Debug` shows.
            let later = now + Duration::from_nanos(123_456_789);
            assert_eq!(monotonic_ns(later) - ns, 123_456_789);
            let shown = format!("{now:?}");
            if let (Some(s), Some(n)) = (field(&shown, "tv_sec: "), field(&shown, "tv_nsec: ")) {
                assert_eq!(ns, s * 1_000_000_000 + n, "{shown}");
            }
        }
        // And back, to the very `Instant`.
        let now = Instant::now();
        assert_eq!(monotonic_instant(monotonic_ns(now)), now);
        let later = now + Duration::from_secs(3 * 365 * 86_400) + Duration::from_nanos(7);
        assert_eq!(monotonic_instant(monotonic_ns(later)), later);
        assert_eq!(monotonic_ns(monotonic_instant(u64::MAX)), u64::MAX);
        assert_eq!(monotonic_ns(monotonic_instant(0)), 0);
        // The exact origin was found, not the bracket fallback.
        assert!(matches!(find_zero(), Zero::At(_)));
    }

    /// The first run of digits after `key` in `s`.
    fn field(s: &str, key: &str) -> Option<u64> {
        let rest = &s[s.find(key)? + key.len()..];
        let rest = rest.trim_start_matches(|c: char| !c.is_ascii_digit());
        let end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        rest[..end].parse().ok()
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn far_instants_and_durations_saturate() {
        let now = Instant::now();
        assert_eq!(saturating_ns(Duration::MAX), u64::MAX);
        let far_future = now.checked_add(Duration::from_secs(1 << 40)).unwrap();
        assert_eq!(monotonic_ns(far_future), u64::MAX);
        if let Some(far_past) = now.checked_sub(Duration::from_secs(1 << 40)) {
            assert_eq!(monotonic_ns(far_past), 0);
        }
        assert_eq!(by_distance(far_future, now, 5), u64::MAX);
        assert_eq!(by_distance(now, far_future, 5), 0);
        assert_eq!(by_distance(now + Duration::from_nanos(7), now, 5), 12);
    }
}
