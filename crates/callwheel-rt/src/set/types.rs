//! The values a timer set takes and reports: its configuration and quota bounds, a timer's
//! value, a reaped expiry, the set's counts.

use std::time::Duration;

use callwheel::Missed;

use super::handle::{self, TimerHandle};
use crate::Tolerance;

/// The largest quota a set accepts: 2^20 timers.
pub const MAX_QUOTA: usize = 1 << handle::MAX_SLOT_BITS;

/// The quota of [`TimerSetConfig::default`].
pub const DEFAULT_QUOTA: usize = 4096;

/// A timer's value, as in `struct itimerval`: the time until it expires and its interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TimerValue {
    /// Time until the timer expires; zero while it waits on the expired queue.
    pub remaining: Duration,
    /// The period of a periodic timer; zero for a one-shot timer.
    pub interval: Duration,
}

/// One reaped expiry, as [`TimerSet::reap_info`](crate::TimerSet::reap_info) reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reaped {
    /// The timer's handle.
    pub handle: TimerHandle,
    /// The timer's label.
    pub label: u64,
    /// The deadline it expired for, in clock nanoseconds.
    pub deadline: u64,
    /// For a periodic timer, the further periods that had also come due by the reap: `⌊(now −
    /// deadline) / interval⌋`. Under [`Missed::Burst`] they are still delivered (the next reaps
    /// return the timer again); under [`Missed::Delay`] and [`Missed::Skip`] they are dropped.
    /// Always 0 for a one-shot timer.
    pub overruns: u64,
    /// Whether the timer runs again (a periodic timer whose next deadline fits the clock). A
    /// timer that does not is destroyed, and its handle is no longer valid.
    pub restarted: bool,
}

/// How a [`TimerSet`](crate::TimerSet) is built: start from [`TimerSetConfig::default`] and change fields by
/// assignment or with the `with_*` setters (new fields may be added, so it cannot be written
/// as a struct literal). [`TimerSet::with_config`](crate::TimerSet::with_config) checks the ranges.
///
/// ```
/// use callwheel_rt::{Missed, TimerSetConfig};
///
/// let config = TimerSetConfig::default().with_quota(16).with_missed(Missed::Skip);
/// assert_eq!(config.quota, 16);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TimerSetConfig {
    /// The most timers (running plus queued) the set holds: `1 ..= MAX_QUOTA`, default
    /// [`DEFAULT_QUOTA`].
    pub quota: usize,
    /// How late the set may wake up for a timer, to coalesce expiries (`None`, the default: the
    /// runtime's [`Config::tolerance`](crate::Config::tolerance)): any absolute part, a
    /// relative part of `0 ..= MAX_TOLERANCE_PPM`. Reaping never returns a timer before its
    /// deadline.
    pub tolerance: Option<Tolerance>,
    /// The missed-period policy new timers start with (default [`Missed::Burst`]); see
    /// [`TimerSet::set_missed`](crate::TimerSet::set_missed) for one timer.
    pub missed: Missed,
}

impl TimerSetConfig {
    /// The configuration with [`quota`](TimerSetConfig::quota) set.
    #[must_use]
    pub fn with_quota(mut self, quota: usize) -> TimerSetConfig {
        self.quota = quota;
        self
    }

    /// The configuration with [`tolerance`](TimerSetConfig::tolerance) set.
    #[must_use]
    pub fn with_tolerance(mut self, tolerance: Option<Tolerance>) -> TimerSetConfig {
        self.tolerance = tolerance;
        self
    }

    /// The configuration with [`missed`](TimerSetConfig::missed) set.
    #[must_use]
    pub fn with_missed(mut self, missed: Missed) -> TimerSetConfig {
        self.missed = missed;
        self
    }
}

impl Default for TimerSetConfig {
    fn default() -> TimerSetConfig {
        TimerSetConfig {
            quota: DEFAULT_QUOTA,
            tolerance: None,
            missed: Missed::Burst,
        }
    }
}

/// Counts describing a set, from [`TimerSet::stats`](crate::TimerSet::stats) (more may be added).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SetStats {
    /// Timers running (not yet expired).
    pub running: usize,
    /// Timers on the expired queue.
    pub queued: usize,
    /// Expiries since the set was made (each one went to the queue).
    pub expired: u64,
    /// Reaps since the set was made.
    pub reaped: u64,
    /// The set's quota.
    pub quota: usize,
}
