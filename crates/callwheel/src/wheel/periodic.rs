//! Periodic timers: re-armed from their last deadline, never from the moment they were handled,
//! so a period does not drift with the lateness of each firing (hrtimer's `hrtimer_forward`).
//!
//! On time, the next deadline is always the last deadline plus the period. When the wheel is
//! advanced (to the caller's *now*) one period or more past a deadline, the periods missed are the
//! firing's *overruns*, and the [`Missed`] policy decides the next deadline:
//!
//! | policy | next deadline after a miss | fires for each missed period | stays on the grid |
//! |---|---|---|---|
//! | [`Missed::Burst`] | last deadline + period | yes: the wheel replays each one at its own time, one per drain | yes |
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

impl Missed {
    /// The rule every periodic timer of the project follows: for a firing due at `deadline`
    /// that happens when the caller's time is `now`, the next deadline under this policy and
    /// the whole periods the firing missed (its *overruns*).
    ///
    /// The periods missed are `(now - deadline) / period` once `now` has reached
    /// `deadline + period`, else 0, and are reported for every firing, the last one included.
    /// The next deadline is `None` when it would lie past `u64::MAX` (that firing is the
    /// timer's last) or when `period` is 0 (no schedule). All arithmetic is checked: no input
    /// overflows or panics.
    ///
    /// ```
    /// use callwheel::Missed;
    ///
    /// // Due at 100, period 30, handled at 200: three periods (130, 160, 190) were missed.
    /// assert_eq!(Missed::Burst.next(100, 30, 200), (Some(130), 3));
    /// assert_eq!(Missed::Delay.next(100, 30, 200), (Some(230), 3));
    /// assert_eq!(Missed::Skip.next(100, 30, 200), (Some(220), 3));
    /// // The last firing still counts what it missed.
    /// assert_eq!(Missed::Delay.next(u64::MAX - 100, 30, u64::MAX), (None, 3));
    /// ```
    pub fn next(self, deadline: Tick, period: Tick, now: Tick) -> (Option<Tick>, u64) {
        if period == 0 {
            return (None, 0);
        }
        let missed = if now >= deadline.saturating_add(period) {
            (now - deadline) / period
        } else {
            0
        };
        let next = match self {
            _ if missed == 0 => deadline.checked_add(period),
            Missed::Burst => deadline.checked_add(period),
            Missed::Delay => now.checked_add(period),
            Missed::Skip => missed
                .checked_add(1)
                .and_then(|n| n.checked_mul(period))
                .and_then(|d| deadline.checked_add(d)),
        };
        (next, missed)
    }
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
