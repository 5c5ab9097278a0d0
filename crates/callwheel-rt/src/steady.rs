//! The steady time a runtime on the wall clock keeps its wheels in.
//!
//! A wheel's time never goes backwards, and the wall clock does whenever it is set. So a
//! runtime given the wall clock (a [`Clock`] whose [`Clock::base`] is
//! [`ClockId::Realtime`] and which can read and wait on the monotonic base) runs its shards on
//! that clock's monotonic base, as hrtimers program every base's timers on the monotonic
//! clock: relative timers and `Instant` deadlines are monotonic and never move, and the
//! runtime clock's own readings ([`Deadline::from_clock_ns`](crate::Deadline::from_clock_ns),
//! [`Runtime::now_ns`](crate::Runtime::now_ns)) are wall-clock deadlines on the realtime base
//! (the `bases` module), which a set of the wall clock moves, forwards or back.

use std::io;
use std::sync::Arc;
use std::time::Instant;

use crate::clock::{Clock, ClockId, Waiter};

/// A wall clock seen through its monotonic base.
#[derive(Debug)]
pub(crate) struct Steady {
    wall: Arc<dyn Clock>,
}

/// The clock a runtime's shards run on: `clock` itself, or its monotonic base when `clock`
/// is a wall clock that can read and wait on it.
pub(crate) fn steady(clock: Arc<dyn Clock>) -> Arc<dyn Clock> {
    let wall = clock.base() == Some(ClockId::Realtime)
        && clock.base_now(ClockId::Monotonic).is_some()
        && clock.waiter_on(ClockId::Monotonic).is_some();
    if wall {
        Arc::new(Steady { wall: clock })
    } else {
        clock
    }
}

impl Clock for Steady {
    fn now(&self) -> u64 {
        // Checked readable when the view was made; a read that fails later is 0, which the
        // shards clamp as they clamp any backwards reading.
        self.wall.base_now(ClockId::Monotonic).unwrap_or(0)
    }

    fn waiter(&self) -> io::Result<Box<dyn Waiter>> {
        self.wall
            .waiter_on(ClockId::Monotonic)
            .unwrap_or_else(|| Err(io::Error::from(io::ErrorKind::Unsupported)))
    }

    fn ns_at(&self, at: Instant) -> u64 {
        if self.wall.simulated() {
            crate::instant::by_distance(at, Instant::now(), self.now())
        } else {
            // `Instant` is a `CLOCK_MONOTONIC` reading on Linux.
            crate::instant::monotonic_ns(at)
        }
    }

    fn busy(&self, started: bool) {
        self.wall.busy(started);
    }

    fn simulated(&self) -> bool {
        self.wall.simulated()
    }

    fn base(&self) -> Option<ClockId> {
        Some(ClockId::Monotonic)
    }

    fn base_now(&self, base: ClockId) -> Option<u64> {
        self.wall.base_now(base)
    }

    fn sets(&self) -> u64 {
        self.wall.sets()
    }

    fn waiter_on(&self, base: ClockId) -> Option<io::Result<Box<dyn Waiter>>> {
        self.wall.waiter_on(base)
    }

    fn set_watcher(&self) -> io::Result<Option<Box<dyn Waiter>>> {
        // A simulated wall clock counts its own sets (`sets`); a real one is heard by the
        // watcher, since the shards now sleep on the monotonic clock.
        if self.wall.simulated() {
            return Ok(None);
        }
        self.wall.set_watcher()
    }
}
