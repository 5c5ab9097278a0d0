//! Deadlines: a `std::time::Instant`, or a reading of the runtime's own clock.
//!
//! Users name time with `Instant` and `Duration`. The runtime's wheel counts nanoseconds of its
//! [`Clock`], which is not always the clock `Instant` reads: a [`ManualClock`](crate::ManualClock)
//! moves only when told, and `CLOCK_REALTIME` / `CLOCK_BOOTTIME` have other epochs. So a
//! [`Deadline`] is either an `Instant` (what almost every caller wants) or a raw reading of
//! the runtime's clock ([`Deadline::from_clock_ns`]: for simulations on a manual clock and for
//! wall-clock deadlines); each clock turns an `Instant` into its own nanoseconds
//! ([`Clock::ns_at`]).
//!
//! How an `Instant` becomes a clock reading, exactly on `CLOCK_MONOTONIC`, is the `instant`
//! module's.

use std::time::Instant;

use crate::clock::Clock;

/// When a timer may fire, earliest: an `Instant`, or a reading of the runtime's own clock.
///
/// Functions that arm a timer take `impl Into<Deadline>`, so an `Instant` is passed as is:
///
/// ```
/// use std::time::{Duration, Instant};
/// use callwheel_rt::Deadline;
///
/// let soon: Deadline = (Instant::now() + Duration::from_millis(5)).into();
/// let simulated = Deadline::from_clock_ns(5_000_000); // 5 ms on a manual clock
/// assert_ne!(soon, simulated);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Deadline(Repr);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Repr {
    Instant(Instant),
    ClockNs(u64),
}

impl Deadline {
    /// The runtime clock's reading `ns` (nanoseconds since that clock's epoch, as
    /// [`Runtime::now_ns`](crate::Runtime::now_ns) reports them): the deadline for a
    /// [`ManualClock`](crate::ManualClock) or a wall-clock (`CLOCK_REALTIME`) runtime.
    pub const fn from_clock_ns(ns: u64) -> Deadline {
        Deadline(Repr::ClockNs(ns))
    }

    /// The deadline in `clock`'s nanoseconds.
    pub(crate) fn resolve(self, clock: &dyn Clock) -> u64 {
        match self.0 {
            Repr::Instant(at) => clock.ns_at(at),
            Repr::ClockNs(ns) => ns,
        }
    }
}

impl From<Instant> for Deadline {
    fn from(at: Instant) -> Deadline {
        Deadline(Repr::Instant(at))
    }
}
