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
//! A deadline may also be an absolute reading of another kernel clock than the runtime's, a
//! clock base in hrtimers' terms ([`Deadline::on`], [`Deadline::wall`]): a wall-clock deadline
//! on a monotonic runtime waits on the monotonic clock and moves when the wall clock is set,
//! as absolute `CLOCK_REALTIME` timers do; relative arming (`start_after`) is never on another
//! base, so it never moves with a set.
//!
//! How an `Instant` becomes a clock reading, exactly on `CLOCK_MONOTONIC`, is the `instant`
//! module's.

use std::time::{Instant, SystemTime};

use crate::clock::{Clock, ClockId};
use crate::instant::saturating_ns;

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
    Base(ClockId, u64),
}

/// A deadline resolved for arming: on the runtime clock's own base, or on another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resolved {
    /// A reading of the runtime's clock.
    Own(u64),
    /// A reading of another clock base.
    Base(ClockId, u64),
}

impl Deadline {
    /// The runtime clock's reading `ns` (nanoseconds since that clock's epoch, as
    /// [`Runtime::now_ns`](crate::Runtime::now_ns) reports them): the deadline for a
    /// [`ManualClock`](crate::ManualClock) or a wall-clock (`CLOCK_REALTIME`) runtime.
    pub const fn from_clock_ns(ns: u64) -> Deadline {
        Deadline(Repr::ClockNs(ns))
    }

    /// The reading `ns` of kernel clock `base` (nanoseconds since its epoch): an absolute
    /// deadline on that clock base. On a runtime whose clock is another base, the timer waits
    /// on the runtime's clock for the distance between the two clocks' readings, and is
    /// re-evaluated whenever a clock is set: an absolute wall-clock deadline
    /// ([`ClockId::Realtime`]) fires at once when the wall clock is set past it, and later when
    /// it is set back (hrtimers' clock bases). A runtime clock that cannot read `base` refuses
    /// it with [`Error::NoClockBase`](crate::Error::NoClockBase).
    pub const fn on(base: ClockId, ns: u64) -> Deadline {
        Deadline(Repr::Base(base, ns))
    }

    /// A wall-clock deadline: [`Deadline::on`] the realtime clock at `at` (a time before the
    /// Unix epoch is the epoch; one past `u64::MAX` nanoseconds after it saturates).
    pub fn wall(at: SystemTime) -> Deadline {
        let ns = at
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, saturating_ns);
        Deadline::on(ClockId::Realtime, ns)
    }

    /// The deadline for `clock`, whose readings a runtime configured with a clock of base
    /// `own` takes as its own: a reading of `clock`, or of another of its bases.
    pub(crate) fn resolve(self, clock: &dyn Clock, own: Option<ClockId>) -> Resolved {
        match self.0 {
            Repr::Instant(at) => Resolved::Own(clock.ns_at(at)),
            // A runtime on the wall clock runs its shards on the monotonic base (the `steady`
            // module): its own readings are then wall-clock deadlines.
            Repr::ClockNs(ns) => match own {
                Some(own) if clock.base() != Some(own) => Resolved::Base(own, ns),
                _ => Resolved::Own(ns),
            },
            Repr::Base(base, ns) if clock.base() == Some(base) => Resolved::Own(ns),
            Repr::Base(base, ns) => Resolved::Base(base, ns),
        }
    }
}

impl From<Instant> for Deadline {
    fn from(at: Instant) -> Deadline {
        Deadline(Repr::Instant(at))
    }
}
