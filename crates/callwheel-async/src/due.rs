//! [`Due`]: a future's deadline both ways, as the `Instant` it was given and on its driver's
//! clock, and the `CLOCK_MONOTONIC` readings every driver it may go to can convert.

use std::time::{Duration, Instant};

use callwheel_rt::{Clock, ClockId, SystemClock};

/// A deadline both ways: as an `Instant`, kept as that `Instant`'s `CLOCK_MONOTONIC` reading
/// (exact both ways: [`callwheel_rt::monotonic_instant`]), and on the driver's clock. On the
/// monotonic clock the two are one number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Due {
    /// The `Instant`, as its `CLOCK_MONOTONIC` reading.
    pub(crate) instant: u64,
    /// The driver's clock reading.
    pub(crate) clock: u64,
}

impl Due {
    /// A deadline on the monotonic clock.
    pub(crate) fn monotonic(ns: u64) -> Due {
        Due {
            instant: ns,
            clock: ns,
        }
    }

    /// The deadline as an `Instant`.
    pub(crate) fn as_instant(self) -> Instant {
        callwheel_rt::monotonic_instant(self.instant)
    }
}

/// The deadline `duration` from now on `CLOCK_MONOTONIC` (one clock read); `Duration::MAX`, or
/// any duration past the clock's range, never comes (`u64::MAX`).
pub(crate) fn monotonic_deadline_after(duration: Duration) -> Due {
    Due::monotonic(monotonic_now().saturating_add(callwheel_rt::saturating_ns(duration)))
}

/// `at` in `CLOCK_MONOTONIC` nanoseconds (exact, no clock read).
pub(crate) fn monotonic_ns(at: Instant) -> u64 {
    SystemClock::new(ClockId::Monotonic).ns_at(at)
}

/// The `CLOCK_MONOTONIC` reading now.
pub(crate) fn monotonic_now() -> u64 {
    SystemClock::new(ClockId::Monotonic).now()
}
