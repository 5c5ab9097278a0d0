//! What a timer's handle ([`Timer`]) does, what a callback is told ([`Fire`]) and what a stop
//! found ([`Stop`]). The handle itself is defined with the runtime's shared state it reaches
//! (the `shared` module), the state the shards keep for a timer is its core (the
//! `timer_core` module); the handle's calls go to the shared state's operations (arming and
//! stopping in the `placement` module).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use callwheel::Missed;

use crate::clock::ClockId;
use crate::counted::Counted;
use crate::deadline::Deadline;
use crate::instant::saturating_ns;
use crate::shared::{Core, Shared};
use crate::sync::Ordering;
use crate::timer_core::{Arm, TimerState};
use crate::Error;

pub use crate::fire::Fire;
pub use crate::shared::Timer;
pub use crate::timer_core::Exec;

/// What [`Timer::stop`] or [`Timer::drain`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The timer was pending and will not fire for that arming.
    Cancelled,
    /// The timer was not pending, but its callback had been taken for running (and, for
    /// `drain`, has now finished — unless `drain` was called from that callback itself).
    Running,
    /// The timer was neither pending nor running.
    NotPending,
}

/// A timer's state as its handle reports it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Status {
    pub(crate) pending: bool,
    pub(crate) fired: u64,
    pub(crate) overruns: u64,
}

impl Status {
    pub(crate) fn of(state: &TimerState) -> Status {
        Status {
            pending: state.pending.is_some(),
            fired: state.fired,
            overruns: state.overruns,
        }
    }
}

impl fmt::Debug for Timer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timer").field("core", &self.core).finish()
    }
}

impl Clone for Timer {
    fn clone(&self) -> Timer {
        // A new handle is made from an existing one (or from the callback's view, while the
        // runtime holds the core), so the count cannot be racing towards a final drop that
        // this clone would miss: the drop that takes it to zero happens-before or after.
        self.core.handles.fetch_add(1, Ordering::Relaxed);
        Timer {
            core: self.core.clone(),
            shared: Arc::clone(&self.shared),
            owned: true,
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        // AcqRel: the last handle's drop sees every earlier handle's work (and `detach`).
        if self.core.handles.fetch_sub(1, Ordering::AcqRel) == 1
            && !self.core.detached.load(Ordering::Acquire)
        {
            // `stop`, not `drain`: it never waits, so dropping from the timer's own callback
            // (or a callback of its batch) cannot deadlock.
            let _ = self.shared.stop(&self.core);
        }
    }
}

impl Timer {
    /// The first user handle of a new core (whose count starts at one).
    pub(crate) fn owned(core: Counted<Core>, shared: Arc<Shared>) -> Timer {
        Timer {
            core,
            shared,
            owned: true,
        }
    }

    /// The runtime's own reference, lent to a callback: not counted as a handle.
    pub(crate) fn runtime_ref(core: Counted<Core>, shared: Arc<Shared>) -> Timer {
        Timer {
            core,
            shared,
            owned: false,
        }
    }

    /// Arms the timer for `deadline`, with the runtime's default tolerance for the interval
    /// from now, on the timer's current shard. A deadline already past fires at once.
    ///
    /// ```
    /// # use std::time::{Duration, Instant};
    /// # use callwheel_rt::{Exec, Runtime, Stop};
    /// let rt = Runtime::builder().shards(1).build()?;
    /// let t = rt.timer(Exec::Direct, |_, _| {})?;
    /// assert!(!t.start_at(Instant::now() + Duration::from_secs(60))?);
    /// assert_eq!(t.stop(), Stop::Cancelled);
    /// # Ok::<(), callwheel_rt::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Wheel`] when the shard's wheel refuses it, [`Error::ShutDown`] after the runtime
    /// is gone, [`Error::NoClockBase`] for a deadline on a clock base the runtime's clock
    /// cannot read ([`Deadline::on`]), [`Error::Io`] when the thread that hears clock sets
    /// cannot be started (the first arming on another base starts it).
    pub fn start_at(&self, deadline: impl Into<Deadline>) -> Result<bool, Error> {
        let (deadline, base) = self.shared.resolve(deadline.into())?;
        // One clock reading at most, shared by the default tolerance and the passed check.
        let now = std::cell::OnceCell::new();
        let now = || *now.get_or_init(|| self.shared.now());
        let tolerance = window_kept(deadline, self.shared.tolerance().until(deadline, now), now);
        self.arm(deadline, tolerance, None, None, base)
    }

    /// Arms the timer `after` from now (see [`Timer::start_at`]).
    ///
    /// # Errors
    ///
    /// As [`Timer::start_at`].
    pub fn start_after(&self, after: Duration) -> Result<bool, Error> {
        let after = saturating_ns(after);
        // The interval is `after` itself: one clock reading per call, not two (a reading is
        // most of a start's cost on a machine whose clock is slow to read).
        self.start_after_within(after, self.shared.tolerance().for_interval(after))
    }

    /// Arms the timer with window `[deadline, deadline + tolerance]`, on `shard` (`None`: the
    /// timer's current shard; [`Runtime::current_shard`](crate::Runtime::current_shard) for
    /// the caller's). A pending arming on another shard moves there. A deadline already past
    /// fires at once, whatever the tolerance.
    ///
    /// # Errors
    ///
    /// [`Error::NoSuchShard`], and as [`Timer::start_at`].
    pub fn start_with(
        &self,
        deadline: impl Into<Deadline>,
        tolerance: Duration,
        shard: Option<usize>,
    ) -> Result<bool, Error> {
        let (deadline, base) = self.shared.resolve(deadline.into())?;
        let tolerance = window_kept(deadline, saturating_ns(tolerance), || self.shared.now());
        self.arm(deadline, tolerance, shard, None, base)
    }

    /// Arms the timer periodically: first at `first`, then every `period` after the previous
    /// deadline (no drift), with the runtime's default tolerance for the period (for
    /// [`Missed::Burst`], capped below the period: a wider window would replay periods at
    /// once). `missed` decides what happens to periods missed by a late wake-up; each firing's
    /// [`Fire::overruns`] counts them.
    ///
    /// # Errors
    ///
    /// [`Error::Wheel`] with [`callwheel::Error::ZeroPeriod`] for a period under one
    /// nanosecond; as [`Timer::start_at`].
    pub fn start_periodic(
        &self,
        first: impl Into<Deadline>,
        period: Duration,
        missed: Missed,
    ) -> Result<bool, Error> {
        let tolerance = self.shared.tolerance().for_interval(saturating_ns(period));
        self.start_periodic_with(first, period, Duration::from_nanos(tolerance), missed, None)
    }

    /// [`Timer::start_periodic`] with an explicit tolerance and shard.
    ///
    /// # Errors
    ///
    /// As [`Timer::start_periodic`] and [`Timer::start_with`].
    pub fn start_periodic_with(
        &self,
        first: impl Into<Deadline>,
        period: Duration,
        tolerance: Duration,
        missed: Missed,
        shard: Option<usize>,
    ) -> Result<bool, Error> {
        let period = saturating_ns(period);
        if period == 0 {
            return Err(Error::Wheel(callwheel::Error::ZeroPeriod));
        }
        let tolerance = saturating_ns(tolerance);
        let tolerance = if missed == Missed::Burst {
            tolerance.min(period - 1)
        } else {
            tolerance
        };
        let (first, base) = self.shared.resolve(first.into())?;
        self.arm(first, tolerance, shard, Some((period, missed)), base)
    }

    /// Arms the timer, exactly, for `at` on the clock the runtime's shards run on (for the
    /// runtime's own users of that clock: timer sets).
    pub(crate) fn start_on_shards_clock(&self, at: u64) -> Result<bool, Error> {
        self.arm(at, 0, None, None, None)
    }

    /// Arms the timer `after` nanoseconds from now with window `[deadline, deadline +
    /// tolerance]`, on the shards' clock (one reading, as [`Timer::start_after`]).
    pub(crate) fn start_after_within(&self, after: u64, tolerance: u64) -> Result<bool, Error> {
        let deadline = self.shared.now().saturating_add(after);
        // No time to wait: due now, whatever the window (a window would wait for its firing
        // instant, up to an eighth of it later).
        let tolerance = if after == 0 { 0 } else { tolerance };
        self.arm(deadline, tolerance, None, None, None)
    }

    /// Gives the timer up: it is no longer cancelled when its last handle is dropped, so it
    /// fires as armed (a one-shot timer once, a periodic one until the runtime is dropped).
    /// Fire-and-forget. The callback's `&Timer` can still stop it.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use callwheel_rt::{Exec, Missed, Runtime};
    /// let rt = Runtime::builder().shards(1).build()?;
    /// let t = rt.timer(Exec::Direct, |_, _| {})?;
    /// t.start_after(Duration::from_millis(1))?;
    /// t.detach(); // still fires
    /// # Ok::<(), callwheel_rt::Error>(())
    /// ```
    pub fn detach(self) {
        self.core.detached.store(true, Ordering::Release);
    }

    fn arm(
        &self,
        deadline: u64,
        tolerance: u64,
        shard: Option<usize>,
        periodic: Option<(u64, Missed)>,
        base: Option<(ClockId, u64)>,
    ) -> Result<bool, Error> {
        self.shared.arm(
            &self.core,
            Arm {
                deadline,
                tolerance,
                shard,
                periodic,
                base,
            },
        )
    }

    /// Cancels the pending arming, if any. Never waits. After the runtime is dropped there is
    /// none (the drop cancelled it).
    pub fn stop(&self) -> Stop {
        self.shared.stop(&self.core)
    }

    /// Cancels the pending arming and waits until no callback of this timer runs on another
    /// thread. A thread cannot wait for itself: from inside the timer's own callback — or from
    /// a direct callback fired in the same batch as this timer on the same driver, whose run
    /// is then still to come — it does not wait, and returns [`Stop::Running`] (or
    /// [`Stop::Cancelled`] when it cancelled an arming: one the callback made, or a periodic
    /// timer's next period). A callback that
    /// re-arms the timer while `drain` waits has that arming cancelled too.
    pub fn drain(&self) -> Stop {
        self.shared.drain(&self.core)
    }

    /// Moves the timer to `shard`: its pending arming (if any) now fires there, and so do
    /// later armings that name no shard. Returns whether it was pending.
    ///
    /// # Errors
    ///
    /// [`Error::NoSuchShard`]; [`Error::Wheel`] when the destination's wheel is full or its
    /// growth is refused (the timer then stays where it was); [`Error::ShutDown`] after the
    /// runtime is gone.
    pub fn move_to(&self, shard: usize) -> Result<bool, Error> {
        self.shared.move_to(&self.core, shard)
    }

    /// Whether an arming is pending (never, once the runtime is gone).
    pub fn is_pending(&self) -> bool {
        self.shared.with_state(&self.core, Status::of).pending
    }

    /// The shard the timer belongs to.
    pub fn shard(&self) -> usize {
        self.core.shard.load(Ordering::Acquire)
    }

    /// How many times the timer has fired.
    pub fn fired(&self) -> u64 {
        self.shared.with_state(&self.core, Status::of).fired
    }

    /// The overruns of the latest firing (see [`Fire::overruns`]).
    pub fn overruns(&self) -> u64 {
        self.shared.with_state(&self.core, Status::of).overruns
    }

    /// The execution mode chosen at creation.
    pub fn exec(&self) -> Exec {
        self.core.exec
    }
}

/// The tolerance a one-shot arming for `deadline` keeps: none once the deadline has passed (on
/// the shards' clock; a deadline on another base is compared by its key there), so that it
/// fires at once, as documented, where a window left open would wait for its firing instant,
/// up to an eighth of the window later. `now` is read only for a window.
fn window_kept(deadline: u64, tolerance: u64, now: impl FnOnce() -> u64) -> u64 {
    if tolerance != 0 && deadline <= now() {
        0
    } else {
        tolerance
    }
}
