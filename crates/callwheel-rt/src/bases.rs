//! Clock bases: timers armed on another kernel clock than the runtime's, on the same shards.
//!
//! hrtimers keep one tree per clock base (monotonic, realtime, boottime, …) and program the
//! next event at the earliest expiry over the bases, each converted to the monotonic clock by
//! the base's offset; when the wall clock is set (or the machine resumes), the offsets change
//! and the next event is programmed again. Here a timer armed on another base waits in its
//! shard's wheel under a *key*: the runtime clock's reading at which its base will read the
//! deadline, by the two clocks' readings when the key was computed. So the shard's next
//! wake-up is the minimum over every base with no second structure to look at. The shard also
//! lists those timers, and when a clock is set ([`Clock::sets`], or the runtime's watcher in
//! the `clock_sets` module, see [`Clock::set_watcher`]) its driver computes every listed key
//! again before it fires anything: an absolute wall-clock deadline set past fires at once, one
//! set back waits longer. Relative timers are never on another base, so they never move.
//!
//! [`Clock::sets`]: crate::Clock::sets
//! [`Clock::set_watcher`]: crate::Clock::set_watcher

use callwheel::Timers;

use crate::clock::{Clock, ClockId};
use crate::counted::Counted;
use crate::shard::ShardState;
use crate::sync::{self, Ordering};
use crate::timer_core::TimerCore;
use crate::timer_core::UNLISTED;
use crate::Error;

/// The runtime clock's reading at which a base reading `base_now` now becomes `ns`, given the
/// runtime clock reads `now` at the same moment: `ns - base_now + now`, saturating at both
/// ends of `u64` (a deadline before the runtime clock's epoch is due at once).
pub(crate) fn key(ns: u64, base_now: u64, now: u64) -> u64 {
    let key = i128::from(ns) - i128::from(base_now) + i128::from(now);
    u64::try_from(key.max(0)).unwrap_or(u64::MAX)
}

/// The key for reading `ns` of `base` on `clock`, whose (clamped) reading is `now`.
///
/// # Errors
///
/// [`Error::NoClockBase`] when the clock cannot read `base`.
pub(crate) fn key_on(clock: &dyn Clock, base: ClockId, ns: u64, now: u64) -> Result<u64, Error> {
    let base_now = clock.base_now(base).ok_or(Error::NoClockBase(base))?;
    Ok(key(ns, base_now, now))
}

impl<F: ?Sized> ShardState<F> {
    /// Room for one more listed timer (reserved before an arming changes anything, so that a
    /// refusal leaves everything as it was).
    ///
    /// # Errors
    ///
    /// [`Error::Wheel`] with [`callwheel::Error::NoMemory`].
    pub(crate) fn reserve_based(&mut self) -> Result<(), Error> {
        self.based
            .try_reserve(1)
            .map_err(|_| Error::Wheel(callwheel::Error::NoMemory))
    }

    /// Lists `core` (armed on another base) on this shard, if it is not listed already.
    /// Room must have been reserved ([`ShardState::reserve_based`]).
    pub(crate) fn list(&mut self, core: &Counted<TimerCore<F>>) {
        if core.based_at.load(Ordering::Relaxed) != UNLISTED {
            return;
        }
        core.based_at.store(self.based.len(), Ordering::Relaxed);
        self.based.push(core.clone());
    }

    /// Takes `core` off this shard's list, if it is on it.
    pub(crate) fn unlist(&mut self, core: &TimerCore<F>) {
        let at = core.based_at.swap(UNLISTED, Ordering::Relaxed);
        if at == UNLISTED || at >= self.based.len() {
            return;
        }
        drop(self.based.swap_remove(at));
        if let Some(moved) = self.based.get(at) {
            moved.based_at.store(at, Ordering::Relaxed);
        }
    }

    /// Computes every listed timer's key again after a clock was set, the runtime clock
    /// reading `now`, and moves each whose key changed. Returns how many moved.
    pub(crate) fn rekey(&mut self, clock: &dyn Clock, now: u64) -> usize {
        // One reading per base for the whole list (`None` until read; `Some(None)`: the clock
        // cannot read it), so the keys stay consistent with each other and a long list costs
        // no more clock reads than a short one.
        let mut readings: [Option<Option<u64>>; 3] = [None; 3];
        let mut moved = 0;
        for core in &self.based {
            let state = sync::lock(&core.state);
            let (Some(h), Some((base, ns))) = (state.pending, state.base) else {
                continue;
            };
            let Some(reading) =
                *readings[base as usize].get_or_insert_with(|| clock.base_now(base))
            else {
                continue;
            };
            let new = key(ns, reading, now);
            let Some((deadline, end)) = self.wheel.window(h) else {
                continue;
            };
            if new != deadline && self.wheel.reset(h, new, end - deadline).is_some() {
                moved += 1;
            }
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::key;

    #[test]
    fn keys_are_the_distance_between_the_clocks_and_saturate() {
        assert_eq!(key(1_500, 1_000, 40), 540);
        assert_eq!(
            key(900, 1_000, 40),
            0,
            "due before the runtime clock's epoch"
        );
        assert_eq!(key(900, 1_000, 400), 300);
        assert_eq!(key(u64::MAX, 0, 1), u64::MAX);
        assert_eq!(key(0, u64::MAX, u64::MAX), 0);
        assert_eq!(key(u64::MAX, u64::MAX, 7), 7);
    }
}
