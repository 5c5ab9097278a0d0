//! A timer's core: what its handles, the wheel slot of its pending arming and its queued
//! firings share.
//!
//! A timer is created once with its callback and execution mode and then armed, re-armed,
//! stopped, drained and moved as often as needed (a FreeBSD `struct callout`, not a one-shot
//! future). Its state — the wheel handle of its pending arming, how many of its callbacks are
//! running — lives in the timer's core, behind its own lock, and is only changed
//! while the lock of the shard that holds it is also held (shard lock first, then timer lock).
//! The index of that shard is an atomic in the timer that changes only while both the old and
//! the new shard are locked, so a caller that locks the shard it read and finds the index
//! unchanged has the right one.
//!
//! Because the running state is the timer's own, not the shard's, a timer moves at once even
//! while its callback runs: that callback finishes where it started, and every later firing
//! (including a re-arm made by the callback itself) happens on the new shard.
//!
//! The core is generic over its callback, whose type names the handle ([`Timer`](crate::Timer)):
//! the runtime's shared state fixes it (`shared::Core`), so this module needs nothing from
//! the handle's.

use std::fmt;

use callwheel::{Handle, Missed};

use crate::clock::ClockId;
use crate::sync::{AtomicBool, AtomicUsize, Condvar, Mutex, Ordering};

/// Where a timer's callback runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exec {
    /// On the shard's driver thread, between wake-up and sleep (calloutng's `C_DIRECT_EXEC`):
    /// the lowest latency, but a slow callback delays the shard's other timers.
    Direct,
    /// On the runtime's worker pool (the software-interrupt thread): the driver only queues it,
    /// so a slow callback delays no other timer's firing.
    Deferred,
}

/// `TimerCore::based_at` of a timer in no shard's list of timers on other clock bases.
pub(crate) const UNLISTED: usize = usize::MAX;

/// The state of one timer, behind its lock; see the [module documentation](self) for who may
/// change it.
#[derive(Debug, Default)]
pub(crate) struct TimerState {
    /// The wheel handle of the pending arming, on the timer's shard.
    pub(crate) pending: Option<Handle>,
    /// The clock base and its reading the pending arming's deadline stands for, when on
    /// another base than the runtime clock's (its deadline in the wheel is then the key the
    /// `bases` module computed, re-evaluated when a clock is set). The wheel holds the
    /// arming's window and schedule (`Wheel::window`, `Wheel::schedule`); this it cannot.
    pub(crate) base: Option<(ClockId, u64)>,
    /// Callbacks taken for running (queued or running) and not yet finished. Which of them a
    /// given thread holds is that thread's own record (the `runs` module).
    pub(crate) running: usize,
    /// Threads waiting in `drain` for a callback to finish (a finishing callback notifies
    /// `idle` only when there is one).
    pub(crate) drainers: usize,
    /// Times fired.
    pub(crate) fired: u64,
    /// Overruns reported by the latest firing.
    pub(crate) overruns: u64,
}

impl TimerState {
    /// Forgets the pending arming: the runtime's shutdown emptied the wheel that held it.
    pub(crate) fn forget_arming(&mut self) {
        self.pending = None;
        self.base = None;
    }
}

/// A timer's core, shared by its handles, the wheel slot of its pending arming and its queued
/// firings: generic over its callback so that it is built with the callback in place (one
/// allocation), then used through the unsized form `shared::Core`.
pub(crate) struct TimerCore<F: ?Sized> {
    pub(crate) exec: Exec,
    /// The shard whose lock guards `state`.
    pub(crate) shard: AtomicUsize,
    pub(crate) state: Mutex<TimerState>,
    /// Signalled when a callback finishes (for `drain`).
    pub(crate) idle: Condvar,
    /// The user's handles ([`Timer`](crate::Timer)s that own a count): the last one to go cancels the timer.
    pub(crate) handles: AtomicUsize,
    /// [`Timer::detach`](crate::Timer::detach) was called: dropping the handles cancels nothing.
    pub(crate) detached: AtomicBool,
    /// The timer's place in its shard's list of timers armed on other clock bases, or
    /// [`UNLISTED`]; changed only under that shard's lock.
    pub(crate) based_at: AtomicUsize,
    /// Last, so that the sized core coerces to the unsized one.
    pub(crate) callback: F,
}

impl<F: ?Sized> TimerCore<F> {
    /// Every handle is gone and none detached the timer: a firing taken for running but not
    /// yet started is dropped unrun.
    pub(crate) fn abandoned(&self) -> bool {
        self.handles.load(Ordering::Acquire) == 0 && !self.detached.load(Ordering::Acquire)
    }

    /// The core's identity while it lives (its address): how a thread's record of the runs it
    /// holds names the timer (the `runs` module).
    pub(crate) fn id(&self) -> usize {
        (self as *const Self).cast::<u8>() as usize
    }
}

impl<F: ?Sized> fmt::Debug for TimerCore<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimerCore")
            .field("exec", &self.exec)
            .field("shard", &self.shard)
            .finish_non_exhaustive()
    }
}

/// What to arm: one window, optionally periodic, optionally on a chosen shard.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Arm {
    /// The deadline on the runtime's clock (for a deadline on another base, its key: see the
    /// `bases` module).
    pub(crate) deadline: u64,
    pub(crate) tolerance: u64,
    pub(crate) shard: Option<usize>,
    pub(crate) periodic: Option<(u64, Missed)>,
    /// The clock base and its reading the deadline stands for, when on another base.
    pub(crate) base: Option<(ClockId, u64)>,
}
