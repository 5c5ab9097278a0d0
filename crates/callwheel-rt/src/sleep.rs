//! Sleeping with precision (calloutng's `pause_sbt`): the calling thread blocks until a
//! runtime timer with the window `[deadline, deadline + precision]` wakes it. Its wake-up is
//! one of the runtime's coalesced wake-ups, shared with every other timer whose window
//! overlaps, where `std::thread::sleep` costs a wake-up of its own every time.

use std::sync::Arc;
use std::time::Duration;

use crate::instant::saturating_ns;
use crate::runs;
use crate::sleeper::{Sleeper, Woken};
use crate::timer::{Exec, Timer};
use crate::{Deadline, Error, Runtime, Tolerance};

/// When a blocking wait gives up: after a duration, or at a deadline, each with its precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitLimit {
    /// `duration` from now (one reading of the runtime's clock), with the window's width
    /// given by `precision` for that interval ([`Tolerance::for_interval`]): calloutng's
    /// relative time with `C_PREL` and an absolute precision.
    After(Duration, Tolerance),
    /// At `deadline`, with a window `precision` wide.
    At(Deadline, Duration),
}

impl Runtime {
    /// Blocks the calling thread for `duration`, woken by a timer of this runtime whose window
    /// is `[now + duration, now + duration + precision.for_interval(duration)]`: never
    /// earlier than `duration`, and as late as the precision allows when that lets the wake-up
    /// coincide with other timers'.
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use callwheel_rt::{Runtime, Tolerance};
    ///
    /// let rt = Runtime::builder().shards(1).build()?;
    /// let start = Instant::now();
    /// rt.sleep(Duration::from_millis(2), Tolerance::percent(5))?;
    /// assert!(start.elapsed() >= Duration::from_millis(2));
    /// # Ok::<(), callwheel_rt::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::OnDriver`] on one of this runtime's driver threads (a direct callback), where
    /// the sleep would wait for itself; [`Error::ShutDown`]; [`Error::Wheel`] when memory for
    /// the timer is refused. Nothing is left armed after an error.
    pub fn sleep(&self, duration: Duration, precision: Tolerance) -> Result<(), Error> {
        self.sleep_for(WaitLimit::After(duration, precision))
    }

    /// Blocks the calling thread until `deadline`, woken by a timer of this runtime with the
    /// window `[deadline, deadline + precision]`. A deadline already passed returns at once
    /// (after one firing of the timer).
    ///
    /// # Errors
    ///
    /// As [`Runtime::sleep`], and [`Error::NoClockBase`] for a deadline on a clock base the
    /// runtime's clock cannot read.
    pub fn sleep_until(
        &self,
        deadline: impl Into<Deadline>,
        precision: Duration,
    ) -> Result<(), Error> {
        self.sleep_for(WaitLimit::At(deadline.into(), precision))
    }

    /// Blocks the calling thread until `timeout` passes ([`Runtime::sleep`],
    /// [`Runtime::sleep_until`]).
    ///
    /// # Errors
    ///
    /// As [`Runtime::sleep_until`].
    pub fn sleep_for(&self, timeout: WaitLimit) -> Result<(), Error> {
        let sleeper = Arc::new(Sleeper::current());
        let _alarm = self.alarm(&sleeper, timeout)?;
        // Only the alarm knows this sleeper: nothing can notify it.
        let woken = sleeper.park();
        debug_assert_eq!(woken, Woken::TimedOut);
        Ok(())
    }

    /// A timer of this runtime, armed for `timeout`, that wakes `sleeper` as timed out. The
    /// sleeper's thread must not be one of this runtime's drivers. Dropping the timer cancels
    /// it; a firing that comes too late to matter finds the sleeper woken already.
    pub(crate) fn alarm(&self, sleeper: &Arc<Sleeper>, timeout: WaitLimit) -> Result<Timer, Error> {
        if runs::drives(self.shared.owner_id()) {
            return Err(Error::OnDriver);
        }
        let wake = Arc::clone(sleeper);
        // Direct: waking a thread is an atomic and an unpark, cheaper than a hand-off to the
        // pool, and it must not wait behind deferred callbacks.
        let timer = self.timer(Exec::Direct, move |_, _| {
            wake.wake(Woken::TimedOut);
        })?;
        match timeout {
            WaitLimit::After(duration, precision) => {
                let after = saturating_ns(duration);
                timer.start_after_within(after, precision.for_interval(after))?;
            }
            WaitLimit::At(deadline, precision) => {
                timer.start_with(deadline, precision, None)?;
            }
        }
        Ok(timer)
    }
}
