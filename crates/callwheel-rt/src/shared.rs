//! The state a runtime's drivers and its timers share ([`Shared`]: the shards, the clock, the
//! pool, the shutdown), and the types that hold it back: a timer's handle ([`Timer`]), whose
//! callback type names the handle and sits in the core ([`Core`]) that the shards' wheels
//! hold, and a firing queued for the pool ([`Deferred`]). They form one recursive structure,
//! defined here together so that no module needs one that needs it back; what each does lives
//! by concept: a timer's handle in `timer`, arming and stopping in `placement`, the drivers in
//! `driver`, clock sets in `clock_sets`, the owner that starts and stops the threads in
//! `runtime`.
//!
//! # Locking
//!
//! Lock order: shard locks in index order, then a timer's lock; a thread holding a timer's
//! lock takes no shard lock. The driver takes its shard's lock once per step, and a step fires
//! at most `max_expiries_per_lock` timers (the wheel's [`Budget`]); callbacks run with no lock
//! held. So a `start` from another thread waits for at most one bounded step.

use std::sync::{Arc, Weak};
use std::thread::JoinHandle;

use callwheel::{Budget, Timers};

use crate::clock::{Clock, ClockId, Waiter};
use crate::counted::Counted;
use crate::fire::Fire;
use crate::shard;
use crate::shutdown::Shutdown;
use crate::stats::{self, ShardStats};
use crate::sync::{self, AtomicBool, AtomicU64, AtomicUsize, Condvar, Mutex, MutexGuard, Ordering};
use crate::timer_core::{Exec, TimerCore, TimerState, UNLISTED};
use crate::workers::Workers;
use crate::{Error, Tolerance};

/// A shard of this runtime: its wheel holds the timers' cores.
pub(crate) type Shard = shard::Shard<Callback>;

/// The state behind a shard's lock, for this runtime's timers.
pub(crate) type ShardState = shard::ShardState<Callback>;

/// A fired timer whose deferred callback waits in the worker pool's queue.
#[derive(Debug)]
pub(crate) struct Deferred {
    pub(crate) timer: Timer,
    pub(crate) fire: Fire,
}

/// A timer's callback, as its core stores it.
pub(crate) type Callback = dyn Fn(&Timer, &Fire) + Send + Sync;

/// A timer's core with its callback's type fixed: what the shards' wheels and the handles
/// hold.
pub(crate) type Core = TimerCore<Callback>;

impl Core {
    /// A new core on `shard` holding `callback`, with one user handle counted (the one the
    /// caller is about to make).
    ///
    /// # Errors
    ///
    /// [`Error::Wheel`] with [`callwheel::Error::NoMemory`] when the allocator refuses.
    pub(crate) fn new<F>(shard: usize, exec: Exec, callback: F) -> Result<Counted<Core>, Error>
    where
        F: Fn(&Timer, &Fire) + Send + Sync + 'static,
    {
        let core = TimerCore {
            exec,
            shard: AtomicUsize::new(shard),
            state: Mutex::new(TimerState::default()),
            idle: Condvar::new(),
            handles: AtomicUsize::new(1),
            detached: AtomicBool::new(false),
            based_at: AtomicUsize::new(UNLISTED),
            callback,
        };
        Counted::<Core>::try_new(core, |p| p).ok_or(Error::Wheel(callwheel::Error::NoMemory))
    }
}

/// A timer of a [`Runtime`](crate::Runtime): cheap to clone (all clones are the same timer),
/// usable from any thread, including from its own callback.
///
/// Arming a pending timer again moves its window (FreeBSD's `callout_reset`); every `start`
/// returns whether the timer was pending. Deadlines are [`Deadline`](crate::Deadline)s: an
/// `Instant`, passed as is, or a reading of the runtime's own clock
/// ([`Deadline::from_clock_ns`](crate::Deadline::from_clock_ns)); periods and tolerances are
/// `Duration`s (saturating at `u64::MAX` nanoseconds, about 584 years).
///
/// # Dropping
///
/// Dropping the last handle cancels the timer, as dropping a future cancels it: its pending
/// arming is stopped and a firing already taken for running but not yet started (a deferred
/// callback waiting for a worker, or a direct one later in the same batch) is dropped unrun.
/// A callback already running finishes; dropping never waits for it, so the last handle may be
/// dropped from inside the timer's own callback. The `&Timer` a callback is given is the
/// runtime's, not a handle: cloning it makes a new handle, which keeps the timer alive like
/// any other; without one, an arming asked through it after the last handle went is ignored
/// (the `start` reports whether the timer was pending and arms nothing), so no timer is left
/// pending that no one can stop. [`Timer::detach`] gives the timer up instead: it keeps firing
/// (a periodic one until the runtime is dropped) with no handle left.
///
/// A timer outlives its runtime harmlessly: once the [`Runtime`](crate::Runtime) is dropped
/// the timer is not pending, `start*` and [`Timer::move_to`] return [`Error::ShutDown`],
/// [`Timer::stop`] and [`Timer::drain`] return
/// [`Stop::NotPending`](crate::Stop::NotPending) (or [`Stop::Running`](crate::Stop::Running)
/// while a callback still runs), and [`Timer::fired`] and [`Timer::overruns`] keep their last
/// values.
pub struct Timer {
    pub(crate) core: Counted<Core>,
    pub(crate) shared: Arc<Shared>,
    /// A user's handle, counted in `core.handles`; `false` for the runtime's own reference,
    /// lent to the callback, which must not keep the timer from being cancelled.
    pub(crate) owned: bool,
}

/// The clock sets a runtime has heard, and its watcher thread.
#[derive(Debug, Default)]
pub(crate) struct ClockSets {
    /// Clock sets heard by the runtime (its set watcher, its drivers' waiters): with the
    /// clock's own count, what makes the shards re-evaluate timers on other clock bases.
    pub(crate) heard: AtomicU64,
    /// The thread watching for clock sets and its waiter, once a timer was armed on another
    /// clock base (see the `bases` module). A plain std mutex also under loom.
    pub(crate) watcher: std::sync::Mutex<Option<SetWatcher>>,
}

/// The running clock-set watcher: its waiter (to wake it at shutdown) and its thread.
type SetWatcher = (Arc<dyn Waiter>, JoinHandle<()>);

/// The part of the runtime that timers and drivers share.
pub(crate) struct Shared {
    /// The shards: a wheel each behind its lock, with its driver's plan and waiter.
    pub(crate) shards: Vec<Shard>,
    /// The clock the shards run on: the configured one, or its monotonic base for a wall
    /// clock (the `steady` module).
    pub(crate) clock: Arc<dyn Clock>,
    /// The configured clock's base: whose readings `Deadline::from_clock_ns` and
    /// `Runtime::now_ns` speak of.
    pub(crate) own_base: Option<ClockId>,
    /// The default tolerance of a timer armed without one.
    pub(crate) tolerance: Tolerance,
    /// The steps a driver takes under its shard's lock before letting it go.
    pub(crate) budget: Budget,
    /// The workers that run deferred callbacks (`None`: they run on the driver, as in the
    /// unit tests that step a shard by hand).
    pub(crate) pool: Option<Arc<Workers<Deferred>>>,
    /// Whether the runtime is shutting down, and the timer sets to tell.
    pub(crate) shutdown: Shutdown,
    /// The latest reading handed out by [`Shared::now`] or seen by a driver (clamped), so it
    /// never goes backwards either and never lags a driver.
    pub(crate) last_now: AtomicU64,
    /// The clock sets heard, and the thread that hears them.
    pub(crate) clock_sets: ClockSets,
    /// The runtime's own counted reference, for the threads it starts on demand (the set
    /// watcher) from calls that have only `&Shared`.
    pub(crate) me: Weak<Shared>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("shards", &self.shards.len())
            .field("clock", &self.clock)
            .finish_non_exhaustive()
    }
}

impl Shared {
    pub(crate) fn new(
        clock: Arc<dyn Clock>,
        shards: usize,
        k: u64,
        tolerance: Tolerance,
        pool: Option<Arc<Workers<Deferred>>>,
    ) -> Result<Arc<Shared>, Error> {
        let own_base = clock.base();
        let clock = crate::steady::steady(clock);
        let shards = (0..shards)
            .map(|_| Ok(Shard::new(clock.waiter()?, stats::new_histogram()?)))
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Arc::new_cyclic(|me| Shared {
            shards,
            clock,
            own_base,
            tolerance,
            budget: Budget::steps(k),
            pool,
            shutdown: Shutdown::default(),
            last_now: AtomicU64::new(0),
            clock_sets: ClockSets::default(),
            me: Weak::clone(me),
        }))
    }

    /// This runtime's identity for the thread-local records of the `runs` module: the address
    /// of its shared state, never 0, unique while the state lives.
    pub(crate) fn owner_id(&self) -> usize {
        core::ptr::from_ref(self) as usize
    }

    /// The clock's reading, never below one handed out before.
    pub(crate) fn now(&self) -> u64 {
        let raw = self.clock.now();
        let prev = self.last_now.fetch_max(raw, Ordering::AcqRel);
        prev.max(raw)
    }

    pub(crate) fn check_shard(&self, shard: usize) -> Result<(), Error> {
        if shard < self.shards.len() {
            Ok(())
        } else {
            Err(Error::NoSuchShard {
                shard,
                shards: self.shards.len(),
            })
        }
    }

    pub(crate) fn lock_shard(&self, i: usize) -> MutexGuard<'_, ShardState> {
        sync::lock(&self.shards[i].state)
    }

    /// Locks the shard that holds `core` (see the `timer_core` module on why the re-check
    /// suffices).
    pub(crate) fn lock_home(&self, core: &Core) -> (usize, MutexGuard<'_, ShardState>) {
        loop {
            let i = core.shard.load(Ordering::Acquire);
            let guard = self.lock_shard(i);
            if core.shard.load(Ordering::Acquire) == i {
                return (i, guard);
            }
        }
    }

    /// Runs `f` on a timer's state under its shard's lock (once the runtime is gone, the
    /// state first forgets the arming the shutdown cancelled).
    pub(crate) fn with_state<R>(&self, core: &Core, f: impl FnOnce(&TimerState) -> R) -> R {
        let (_, shard) = self.lock_home(core);
        let mut state = sync::lock(&core.state);
        if shard.closed {
            state.forget_arming();
        }
        f(&state)
    }

    /// A new timer core on `shard` (see [`Core::new`]).
    ///
    /// # Errors
    ///
    /// [`Error::Wheel`] with [`callwheel::Error::NoMemory`] when its allocation is refused.
    pub(crate) fn new_timer<F>(
        &self,
        shard: usize,
        exec: Exec,
        callback: F,
    ) -> Result<Counted<Core>, Error>
    where
        F: Fn(&Timer, &Fire) + Send + Sync + 'static,
    {
        Core::new(shard, exec, callback)
    }

    pub(crate) fn stats(&self, i: usize) -> ShardStats {
        let shard = &self.shards[i];
        let (w, pending, clamped) = {
            let st = self.lock_shard(i);
            (st.wheel.stats(), st.wheel.len(), st.clamp.clamped())
        };
        let c = &shard.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        ShardStats {
            started: w.started,
            stopped: w.stopped,
            reset: w.reset,
            fired: w.fired,
            cascades: w.cascades,
            clamped,
            wakeups: get(&c.wakeups),
            early_wakeups: get(&c.early_wakeups),
            clock_sets: get(&c.clock_sets),
            budget_yields: get(&c.budget_yields),
            panics: get(&c.panics),
            wait_errors: get(&c.wait_errors),
            deferred_inline: get(&c.deferred_inline),
            spins: get(&c.spins),
            spin_ns: get(&c.spin_ns),
            pending,
            lateness: sync::lock(&shard.lateness).clone(),
        }
    }

    /// Stops the drivers: raise the flag, then wake each (a wake-up is never lost).
    pub(crate) fn begin_shutdown(&self) {
        self.shutdown.begin();
        for s in &self.shards {
            s.waiter.wake();
        }
    }

    /// The runtime's default tolerance ([`Config::tolerance`](crate::Config::tolerance)).
    pub(crate) fn tolerance(&self) -> Tolerance {
        self.tolerance
    }

    /// Whether the runtime has been dropped.
    pub(crate) fn is_shut_down(&self) -> bool {
        self.shutdown.begun()
    }
}
