//! The runtime: the state its timers and drivers share (the shards, the clock, the pool) and
//! the owner that starts and stops the threads. The operations on one timer are in
//! `placement`, the driver's loop and step in `driver`, the configuration in `config`.
//!
//! # Locking
//!
//! Lock order: shard locks in index order, then a timer's lock; a thread holding a timer's
//! lock takes no shard lock. The driver takes its shard's lock once per step, and a step fires
//! at most `max_expiries_per_lock` timers (the wheel's [`Budget`]); callbacks run with no lock
//! held. So a `start` from another thread waits for at most one bounded step.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;

use callwheel::Wheel;
use callwheel::{Budget, Timers};

use crate::clock::{Clock, ClockId, Waiter};
use crate::config::{Builder, Config};
use crate::counted::Counted;
use crate::deadline::{Deadline, Resolved};
use crate::shard::{Shard, ShardState};
use crate::stats::{self, ShardStats};
use crate::sync::{self, AtomicBool, AtomicU64, MutexGuard, Ordering};
use crate::timer::{Control, Core, Deferred, Exec, Fire, Status, Stop, Timer};
use crate::timer_core::{Arm, TimerState, UNLISTED};
use crate::workers::{self, Workers};
use crate::{Error, Tolerance};

/// Something that must hear when its runtime goes away: a timer set, whose waiters would
/// otherwise sleep on a queue that can no longer change.
pub(crate) trait OnShutdown: Send + Sync {
    /// The runtime has been dropped (its drivers and workers have stopped).
    fn shut_down(&self);
}

/// The part of the runtime that timers and drivers share.
pub(crate) struct Shared {
    pub(crate) shards: Vec<Shard>,
    /// The clock the shards run on: the configured one, or its monotonic base for a wall
    /// clock (the `steady` module).
    pub(crate) clock: Arc<dyn Clock>,
    /// The configured clock's base: whose readings `Deadline::from_clock_ns` and
    /// `Runtime::now_ns` speak of.
    pub(crate) own_base: Option<ClockId>,
    pub(crate) tolerance: Tolerance,
    pub(crate) budget: Budget,
    pub(crate) pool: Option<Arc<Workers<Deferred>>>,
    pub(crate) shutdown: AtomicBool,
    /// Timer sets to tell of the shutdown (held weakly: a set does not outlive its owner).
    /// A plain std mutex also under loom: it is not part of any model.
    timer_sets: std::sync::Mutex<Vec<Weak<dyn OnShutdown>>>,
    /// The latest reading handed out by [`Shared::now`] or seen by a driver (clamped), so it
    /// never goes backwards either and never lags a driver.
    pub(crate) last_now: AtomicU64,
    /// Clock sets heard by the runtime (its set watcher, its drivers' waiters): with the
    /// clock's own count, what makes the shards re-evaluate timers on other clock bases.
    pub(crate) clock_sets_heard: AtomicU64,
    /// The thread watching for clock sets and its waiter, once a timer was armed on another
    /// clock base (see the `bases` module). A plain std mutex also under loom.
    pub(crate) clock_set_watcher: std::sync::Mutex<Option<SetWatcher>>,
    /// The runtime's own counted reference, for the threads it starts on demand (the set
    /// watcher) from calls that have only `&Shared`.
    pub(crate) me: Weak<Shared>,
}

/// The running clock-set watcher: its waiter (to wake it at shutdown) and its thread.
pub(crate) type SetWatcher = (Arc<dyn Waiter>, JoinHandle<()>);

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
            shutdown: AtomicBool::new(false),
            timer_sets: std::sync::Mutex::new(Vec::new()),
            last_now: AtomicU64::new(0),
            clock_sets_heard: AtomicU64::new(0),
            clock_set_watcher: std::sync::Mutex::new(None),
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

    /// Registers `w` to hear of the shutdown. Refused memory is [`callwheel::Error::NoMemory`];
    /// after the shutdown, [`Error::ShutDown`].
    pub(crate) fn watch(&self, w: Weak<dyn OnShutdown>) -> Result<(), Error> {
        let mut list = self.timer_sets.lock().unwrap_or_else(|p| p.into_inner());
        if self.shutdown.load(Ordering::Acquire) {
            return Err(Error::ShutDown);
        }
        if list.len() == list.capacity() {
            // Forget dropped sets before growing, so making and dropping sets without end
            // keeps the list as long as the sets alive (amortised: at most once per doubling).
            list.retain(|w| w.strong_count() > 0);
        }
        list.try_reserve(1)
            .map_err(|_| Error::Wheel(callwheel::Error::NoMemory))?;
        list.push(w);
        Ok(())
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

    /// Locks the shard that holds `core` (see the timer module on why the re-check suffices).
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
    fn begin_shutdown(&self) {
        self.shutdown.store(true, Ordering::Release);
        for s in &self.shards {
            s.waiter.wake();
        }
    }
}

impl Control for Shared {
    fn arm(&self, core: &Counted<Core>, arm: Arm) -> Result<bool, Error> {
        Shared::arm(self, core, arm)
    }

    fn stop(&self, core: &Core) -> Stop {
        Shared::stop(self, core)
    }

    fn drain(&self, core: &Core) -> Stop {
        Shared::drain(self, core)
    }

    fn move_to(&self, core: &Counted<Core>, dest: usize) -> Result<bool, Error> {
        Shared::move_to(self, core, dest)
    }

    fn status(&self, core: &Core) -> Status {
        self.with_state(core, Status::of)
    }

    fn now(&self) -> u64 {
        Shared::now(self)
    }

    fn tolerance(&self) -> crate::Tolerance {
        self.tolerance
    }

    fn resolve(&self, deadline: Deadline) -> Result<(u64, Option<(ClockId, u64)>), Error> {
        match deadline.resolve(&*self.clock, self.own_base) {
            Resolved::Own(ns) => Ok((ns, None)),
            Resolved::Base(base, ns) => Ok((self.key_for(base, ns)?, Some((base, ns)))),
        }
    }

    fn is_shut_down(&self) -> bool {
        self.shutdown.load(Ordering::Acquire)
    }
}

/// Drops a caught panic's payload, which is user data and may panic in its own `Drop`: that
/// second payload is leaked rather than dropped, so no unwinding escapes.
pub(crate) fn drop_payload(payload: Box<dyn std::any::Any + Send>) {
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
}

/// A running timer runtime: one driver thread per shard and a pool of workers for deferred
/// callbacks. Dropping it stops the threads (after queued deferred callbacks have run) and
/// cancels every pending timer: from then on its [`Timer`]s are not pending, their `stop` and
/// `drain` report [`Stop::NotPending`](crate::Stop::NotPending) (or [`Stop::Running`](crate::Stop::Running) for a callback still running, when
/// the runtime was dropped from a callback), and every call that can fail returns
/// [`Error::ShutDown`]; its [`TimerSet`](crate::TimerSet)s likewise (see the set's
/// documentation).
///
/// ```
/// use std::sync::mpsc;
/// use std::time::Duration;
/// use callwheel_rt::{Exec, Runtime};
///
/// let rt = Runtime::builder().shards(1).build()?;
/// let (tx, rx) = mpsc::channel();
/// let tx = std::sync::Mutex::new(tx);
/// let t = rt.timer(Exec::Direct, move |_timer, fire| {
///     let _ = tx.lock().unwrap().send(fire.lateness());
/// })?;
/// t.start_after(Duration::from_millis(1))?;
/// let lateness = rx.recv_timeout(Duration::from_secs(10))?;
/// println!("fired {lateness:?} late");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Runtime {
    pub(crate) shared: Arc<Shared>,
    pool: Option<Arc<Workers<Deferred>>>,
    threads: Vec<JoinHandle<()>>,
}

impl Runtime {
    /// A [`Builder`] on the default configuration: set the fields, then
    /// [`build`](Builder::build).
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// Builds the runtime and starts its threads.
    ///
    /// # Errors
    ///
    /// [`Error::Config`], naming the field and its range, for a field outside the range
    /// [`Config`] documents (checked before anything is built); [`Error::Io`] when a waiter or
    /// a thread cannot be created; [`Error::Wheel`] with [`callwheel::Error::NoMemory`] when a
    /// driver's buffers (room for `max_expiries_per_lock` expiries, reserved here so that a
    /// driver never allocates for them) are refused.
    pub fn new(config: Config) -> Result<Runtime, Error> {
        let shards = config.validate()?;
        let pool = Arc::new(Workers::default());
        let shared = Shared::new(
            config.clock,
            shards,
            config.max_expiries_per_lock,
            config.tolerance,
            Some(Arc::clone(&pool)),
        )?;
        let mut rt = Runtime {
            shared,
            pool: Some(Arc::clone(&pool)),
            threads: Vec::new(),
        };
        // On an error below, dropping `rt` stops whatever already started.
        let shared = Arc::clone(&rt.shared);
        rt.threads = workers::spawn(&pool, config.workers, move |job| shared.run_deferred(job))?;
        for i in 0..shards {
            let driver = rt
                .shared
                .start_driver(i, config.max_expiries_per_lock, config.spin)?;
            rt.threads.push(driver);
        }
        Ok(rt)
    }

    /// A new timer that runs `callback` (given the timer itself, so it can re-arm or stop
    /// itself, and the firing) as `exec` says. It belongs to the calling thread's shard.
    ///
    /// The timer, its callback included, is one allocation, made fallibly: creating timers
    /// when memory runs out returns an error, never aborts the process.
    ///
    /// # Errors
    ///
    /// [`Error::Wheel`] with [`callwheel::Error::NoMemory`] when the allocation is refused.
    pub fn timer<F>(&self, exec: Exec, callback: F) -> Result<Timer, Error>
    where
        F: Fn(&Timer, &Fire) + Send + Sync + 'static,
    {
        self.timer_on(self.current_shard(), exec, callback)
    }

    /// A new timer belonging to `shard` (see [`Runtime::timer`]).
    ///
    /// # Errors
    ///
    /// [`Error::NoSuchShard`], and as [`Runtime::timer`].
    pub fn timer_on<F>(&self, shard: usize, exec: Exec, callback: F) -> Result<Timer, Error>
    where
        F: Fn(&Timer, &Fire) + Send + Sync + 'static,
    {
        self.shared.check_shard(shard)?;
        Ok(Timer::owned(
            self.shared.new_timer(shard, exec, callback)?,
            Arc::<Shared>::clone(&self.shared),
        ))
    }

    /// The shard of the CPU the calling thread runs on.
    pub fn current_shard(&self) -> usize {
        #[cfg(not(miri))]
        let cpu = crate::sys::current_cpu().unwrap_or(0);
        #[cfg(miri)]
        let cpu = 0;
        cpu % self.shared.shards.len()
    }

    /// The number of shards.
    pub fn shards(&self) -> usize {
        self.shared.shards.len()
    }

    /// The clock's reading in nanoseconds since its epoch: the unit of
    /// [`Deadline::from_clock_ns`](crate::Deadline::from_clock_ns) and of [`Fire`]'s fields
    /// for timers armed with it. Never below an earlier reading, except on a runtime given
    /// the wall clock, whose readings go back when the wall clock is set back (its shards run
    /// on the monotonic clock, and its readings are wall-clock deadlines).
    pub fn now_ns(&self) -> u64 {
        match self.shared.own_base {
            Some(own) if self.shared.clock.base() != Some(own) => self
                .shared
                .clock
                .base_now(own)
                .unwrap_or_else(|| self.shared.now()),
            _ => self.shared.now(),
        }
    }

    /// The shards' clock's reading at `at` ([`Clock::ns_at`]): exact on the monotonic clock
    /// (which a runtime given the wall clock runs on), by distance from now on the others.
    /// For comparing an `Instant` with [`Fire`]'s fields of a timer armed with one.
    pub fn ns_at(&self, at: std::time::Instant) -> u64 {
        self.shared.clock.ns_at(at)
    }

    /// A snapshot of shard `shard`'s counters and lateness histogram.
    ///
    /// # Errors
    ///
    /// [`Error::NoSuchShard`].
    pub fn shard_stats(&self, shard: usize) -> Result<ShardStats, Error> {
        self.shared.check_shard(shard)?;
        Ok(self.shared.stats(shard))
    }

    /// Snapshots of every shard.
    pub fn stats(&self) -> Vec<ShardStats> {
        (0..self.shards()).map(|i| self.shared.stats(i)).collect()
    }
}

impl Builder {
    /// Checks the configuration and starts the runtime ([`Runtime::new`]).
    ///
    /// # Errors
    ///
    /// As [`Runtime::new`]: [`Error::Config`] naming the field out of range, checked before
    /// anything is built; [`Error::Io`].
    pub fn build(self) -> Result<Runtime, Error> {
        Runtime::new(self.into_config())
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.shared.begin_shutdown();
        if let Some(pool) = &self.pool {
            pool.shutdown();
        }
        let me = std::thread::current().id();
        for t in self.threads.drain(..) {
            // Dropped from one of its own callbacks: that thread cannot wait for itself; it
            // leaves its loop on its own once the callback returns (the flag is up).
            if t.thread().id() == me {
                continue;
            }
            // A driver or worker that panicked has nothing left to clean up.
            let _ = t.join();
        }
        // The clock-set watcher, if one was started, leaves its loop when woken after the
        // shutdown flag went up.
        let watcher = self
            .shared
            .clock_set_watcher
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some((waiter, thread)) = watcher {
            waiter.wake();
            let _ = thread.join();
        }
        // Drop every pending timer: their callbacks may hold timers, which hold the shared
        // state, and would otherwise keep it alive in a cycle. A closed shard takes no new
        // arming, and its timers forget theirs when next asked (they hold the shard's lock
        // then, as the wheel was emptied under it).
        for i in 0..self.shared.shards.len() {
            let old = {
                let mut st = self.shared.lock_shard(i);
                st.closed = true;
                for core in &st.based {
                    core.based_at.store(UNLISTED, Ordering::Relaxed);
                }
                let based = std::mem::take(&mut st.based);
                (std::mem::replace(&mut st.wheel, Wheel::new()), based)
            };
            // Outside the lock: dropping the timers' callbacks runs user code (`Drop`), which
            // may use a timer of this shard, or panic.
            if let Err(payload) = catch_unwind(AssertUnwindSafe(move || drop(old))) {
                drop_payload(payload);
            }
        }
        // Tell the timer sets, so a thread waiting on one does not wait for ever.
        let watchers = std::mem::take(
            &mut *self
                .shared
                .timer_sets
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        );
        for w in watchers {
            if let Some(w) = w.upgrade() {
                w.shut_down();
            }
        }
    }
}
