//! Periodic timers: re-armed from their last deadline, never from the moment they were handled,
//! so a period does not drift with the lateness of each firing (hrtimer's `hrtimer_forward`).
//!
//! On time, the next deadline is always the last deadline plus the period. When the wheel is
//! advanced (to the caller's *now*) one period or more past a deadline, the periods missed are the
//! firing's *overruns*, and the [`Missed`] policy decides the next deadline:
//!
//! | policy | next deadline after a miss | fires for each missed period | stays on the grid |
//! |---|---|---|---|
//! | [`Missed::Burst`] | last deadline + period | yes: the wheel replays each one at its own time | yes |
//! | [`Missed::Delay`] | now + period | no | no: the grid moves to now |
//! | [`Missed::Skip`] | the first grid point after now | no | yes |

//!
//! With Burst, a tolerance wider than the period means the wake-up at the end of the first
//! window finds several periods due, and replays them all then; keep it below the period.

use crate::time::Tick;

/// What a periodic timer does about periods it missed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Missed {
    /// Fire once for every period, catching up one firing per drain.
    Burst,
    /// Restart the period from the caller's time of the late firing.
    Delay,
    /// Skip the missed periods: the next deadline is the first point of the grid after now.
    Skip,
}

/// A periodic timer's schedule, kept beside its slot.
#[derive(Debug)]
pub(crate) struct Periodic<T> {
    pub(crate) period: Tick,
    pub(crate) tolerance: Tick,
    pub(crate) policy: Missed,
    /// `T::clone`, captured where `T: Clone` was known, so the wheel itself needs no bound.
    pub(crate) copy: fn(&T) -> T,
    /// Periods missed at the latest firing.
    pub(crate) overruns: u64,
}

impl<T> Periodic<T> {
    /// The deadline after `deadline` for a firing at `now`, and the periods missed; `None` when
    /// the next deadline would lie past the end of time (this firing is then the last).
    pub(crate) fn next(&self, deadline: Tick, now: Tick) -> Option<(Tick, u64)> {
        let p = self.period;
        let missed = if now >= deadline.saturating_add(p) {
            (now - deadline) / p
        } else {
            0
        };
        let next = match self.policy {
            _ if missed == 0 => deadline.checked_add(p),
            Missed::Burst => deadline.checked_add(p),
            Missed::Delay => now.checked_add(p),
            Missed::Skip => (missed + 1)
                .checked_mul(p)
                .and_then(|d| deadline.checked_add(d)),
        }?;
        Some((next, missed))
    }
}
