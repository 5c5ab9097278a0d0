//! [`Interval`]: ticks every period, by the project's one missed-period rule
//! ([`Missed::next`]): a tick handled late is caught up ([`Missed::Burst`]), restarts the
//! grid from that moment ([`Missed::Delay`]) or skips to the next grid point ([`Missed::Skip`]),
//! as tokio's `MissedTickBehavior` does.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use callwheel::Missed;

use crate::driver::Driver;
use crate::due::Due;
use crate::sleep::{nanos, Sleep};

/// Ticks at `start`, `start + period`, …: see [`interval`].
#[derive(Debug)]
#[must_use = "an interval does nothing unless ticked"]
pub struct Interval {
    /// Sleeps until the next tick's scheduled time.
    sleep: Sleep,
    period: Duration,
    missed: Missed,
    /// The periods the latest tick missed.
    overruns: u64,
    /// No tick after the end of the clock's range.
    finished: bool,
}

/// The smallest period: a zero period is taken as one nanosecond.
const MIN_PERIOD: Duration = Duration::from_nanos(1);

/// Ticks now and then every `period` (a zero period is taken as 1 ns), missed ticks caught up
/// ([`Missed::Burst`]), on the process-wide driver.
///
/// ```
/// # futures::executor::block_on(async {
/// use std::time::Duration;
/// let mut every = callwheel_async::interval(Duration::from_millis(1));
/// let first = every.tick().await;
/// let second = every.tick().await;
/// assert_eq!(second - first, Duration::from_millis(1));
/// # });
/// ```
pub fn interval(period: Duration) -> Interval {
    match crate::sleep::made_on() {
        // On a paused clock: its first tick now there.
        Some(link) => Interval::new(Sleep::after(Some(link), Duration::ZERO), period),
        None => interval_at(Instant::now(), period),
    }
}

/// Ticks at `start` and then every `period` after it.
pub fn interval_at(start: Instant, period: Duration) -> Interval {
    Interval::new(crate::sleep::sleep_until(start), period)
}

impl Driver {
    /// [`interval`] on this driver (first tick now on its clock).
    pub fn interval(&self, period: Duration) -> Interval {
        Interval::new(self.sleep(Duration::ZERO), period)
    }

    /// [`interval_at`] on this driver.
    pub fn interval_at(&self, start: Instant, period: Duration) -> Interval {
        Interval::new(self.sleep_until(start), period)
    }
}

impl Interval {
    fn new(sleep: Sleep, period: Duration) -> Interval {
        Interval {
            sleep,
            period: period.max(MIN_PERIOD),
            missed: Missed::Burst,
            overruns: 0,
            finished: false,
        }
    }

    /// Completes at the next tick and returns its scheduled time.
    pub async fn tick(&mut self) -> Instant {
        std::future::poll_fn(|cx| self.poll_tick(cx)).await
    }

    /// Polls for the next tick: `Ready(scheduled time)` once it is due. The next tick is then
    /// scheduled by the [`Missed`] policy against the time of this poll.
    pub fn poll_tick(&mut self, cx: &mut Context<'_>) -> Poll<Instant> {
        if self.finished {
            // The clock's range is used up: no tick will ever come.
            return Poll::Pending;
        }
        if self.sleep.poll_sleep(cx).is_pending() {
            return Poll::Pending;
        }
        let due = self.sleep.due();
        let scheduled = due.as_instant();
        let deadline = due.clock;
        // Judged against the driver's clock now (the deadline itself without a driver).
        let now = self.sleep.driver_now().unwrap_or(deadline).max(deadline);
        let (next, missed) = self.missed.next(deadline, nanos(self.period), now);
        self.overruns = missed;
        match next {
            // The next tick's Instant moves by exactly as many nanoseconds as its reading.
            Some(next) => match due.instant.checked_add(next - deadline) {
                Some(instant) => self.sleep.set_deadline(Due {
                    instant,
                    clock: next,
                }),
                None => self.finished = true,
            },
            None => self.finished = true,
        }
        Poll::Ready(scheduled)
    }

    /// The next tick one period from now (the grid moves).
    pub fn reset(&mut self) {
        self.finished = false;
        self.sleep.reset_after(self.period);
    }

    /// The next tick now: the following ones one period apart from it.
    pub fn reset_immediately(&mut self) {
        self.finished = false;
        self.sleep.reset_after(Duration::ZERO);
    }

    /// The next tick `after` from now, the following ones one period apart from it
    /// (`Duration::MAX`: no tick ever comes).
    pub fn reset_after(&mut self, after: Duration) {
        self.finished = false;
        self.sleep.reset_after(after);
    }

    /// The next tick at `deadline` (at once if it has passed), the following ones one period
    /// apart from it.
    pub fn reset_at(&mut self, deadline: Instant) {
        self.finished = false;
        self.sleep.reset(deadline);
    }

    /// The period.
    pub fn period(&self) -> Duration {
        self.period
    }

    /// What a late tick does to the ones after it.
    pub fn missed_tick_behavior(&self) -> Missed {
        self.missed
    }

    /// Sets what a late tick does to the ones after it (default [`Missed::Burst`]).
    pub fn set_missed_tick_behavior(&mut self, missed: Missed) {
        self.missed = missed;
    }

    /// The whole periods the latest tick missed (0 when it was on time).
    pub fn overruns(&self) -> u64 {
        self.overruns
    }

    /// Ticks may come up to `tolerance` after their scheduled time (see
    /// [`Sleep::tolerance`]): intervals whose windows overlap share wake-ups.
    pub fn tolerance(mut self, tolerance: Duration) -> Interval {
        self.sleep = self.sleep.tolerance(tolerance);
        self
    }
}

impl futures_core::Stream for Interval {
    type Item = Instant;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Instant>> {
        self.get_mut().poll_tick(cx).map(Some)
    }
}
