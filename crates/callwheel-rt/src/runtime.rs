//! The runtime: its configuration, its shards' shared operations (arm, stop, drain, move,
//! and the driver's fire step), and the owner that starts and stops the threads.
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

use callwheel::wheel::Wheel;
use callwheel::{Budget, Expired, Scheme, Timers};

use crate::clock::{Clock, ClockId, SystemClock, Wake};
use crate::pool::{self, Pool};
use crate::shard::{Plan, Shard, ShardState};
use crate::stats::{self, Counters, ShardStats};
use crate::sync::{self, current, AtomicBool, AtomicU64, AtomicUsize, MutexGuard, Ordering};
use crate::timer::{Arm, Callback, Exec, Fire, Stop, Timer, TimerCore, TimerState};
use crate::{Error, Tolerance};

/// The most shards a runtime accepts ([`Config::shards`]).
pub const MAX_SHARDS: usize = 1024;

/// The most deferred-callback workers a runtime accepts ([`Config::workers`]): far more
/// threads than any machine has CPUs, and few enough that asking for them is not a mistake
/// found only when the system refuses a thread.
pub const MAX_WORKERS: usize = 1024;

/// The largest K a runtime accepts ([`Config::max_expiries_per_lock`]): the driver buffers
/// a step's expiries, so K bounds both that buffer and how long the shard's lock is held.
pub const MAX_EXPIRIES_PER_LOCK: u64 = 1 << 16;

/// The largest relative tolerance a configuration accepts ([`Tolerance::ppm`]): 100 % of
/// the interval, as [`Tolerance::percent`] caps it.
pub const MAX_TOLERANCE_PPM: u32 = 1_000_000;

/// How a [`Runtime`] is built.
#[derive(Clone, Debug)]
pub struct Config {
    /// The time source ([`SystemClock`] on `CLOCK_MONOTONIC` by default).
    pub clock: Arc<dyn Clock>,
    /// Number of shards, each with its own driver thread: `0 ..= MAX_SHARDS`; 0 (the default)
    /// means one per CPU (at most [`MAX_SHARDS`]).
    pub shards: usize,
    /// Worker threads for deferred callbacks: `1 ..= MAX_WORKERS` (default 2).
    pub workers: usize,
    /// K: the most timers a driver fires before releasing its shard's lock:
    /// `1 ..= MAX_EXPIRIES_PER_LOCK` (default 64). The bound on how long a `start` from
    /// another thread can wait.
    pub max_expiries_per_lock: u64,
    /// The default tolerance of timers armed without one (default exact): any absolute part,
    /// a relative part of `0 ..= MAX_TOLERANCE_PPM`.
    pub tolerance: Tolerance,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            clock: Arc::new(SystemClock::new(ClockId::Monotonic)),
            shards: 0,
            workers: 2,
            max_expiries_per_lock: 64,
            tolerance: Tolerance::EXACT,
        }
    }
}

impl Config {
    /// The default configuration on `clock`.
    pub fn with_clock(clock: impl Clock) -> Config {
        Config {
            clock: Arc::new(clock),
            ..Config::default()
        }
    }

    /// Checks every numeric field against its documented range, before the runtime does any
    /// work; returns the number of shards to build.
    fn validate(&self) -> Result<usize, Error> {
        if self.shards > MAX_SHARDS {
            return Err(Error::Config {
                reason: "shards must be between 0 (one per CPU) and MAX_SHARDS (1024)",
            });
        }
        if !(1..=MAX_WORKERS).contains(&self.workers) {
            return Err(Error::Config {
                reason: "workers must be between 1 and MAX_WORKERS (1024)",
            });
        }
        if !(1..=MAX_EXPIRIES_PER_LOCK).contains(&self.max_expiries_per_lock) {
            return Err(Error::Config {
                reason: "max_expiries_per_lock must be between 1 and MAX_EXPIRIES_PER_LOCK (65536)",
            });
        }
        check_tolerance(self.tolerance)?;
        Ok(match self.shards {
            0 => std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(MAX_SHARDS),
            n => n,
        })
    }
}

/// Checks a configured tolerance: its relative part must be at most [`MAX_TOLERANCE_PPM`].
pub(crate) fn check_tolerance(tolerance: Tolerance) -> Result<(), Error> {
    if tolerance.ppm > MAX_TOLERANCE_PPM {
        return Err(Error::Config {
            reason: "tolerance.ppm must be between 0 and MAX_TOLERANCE_PPM (1000000, 100 %)",
        });
    }
    Ok(())
}

/// Something that must hear when its runtime goes away: a timer set, whose waiters would
/// otherwise sleep on a queue that can no longer change.
pub(crate) trait OnShutdown: Send + Sync {
    /// The runtime has been dropped (its drivers and workers have stopped).
    fn shut_down(&self);
}

/// What one driver step did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Step {
    /// Timers fired (their callbacks have run or been queued).
    pub(crate) fired: usize,
    /// `Some(until)` when there was nothing to do: the driver may sleep until `until`.
    pub(crate) sleep: Option<Option<u64>>,
}

/// A driver's buffers, kept from one step to the next (empty between steps).
///
/// A step that fires used to allocate two vectors and free them again. The first allocation
/// after a sleep runs on cold caches and TLBs: measured on the 2-CPU VM with a 10 ms periodic
/// timer, it alone cost about 1.5 µs of the time between the driver's wake-up and the
/// callback. A step holds at most `max_expiries_per_lock` expiries, so the buffers stay small.
#[derive(Default)]
pub(crate) struct Scratch {
    due: Vec<Expired<Arc<TimerCore>>>,
    lateness: Vec<u64>,
}

#[cfg(test)]
impl Scratch {
    pub(crate) fn is_empty(&self) -> bool {
        self.due.is_empty() && self.lateness.is_empty()
    }
}

/// The part of the runtime that timers and drivers share.
pub(crate) struct Shared {
    pub(crate) shards: Vec<Shard>,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) tolerance: Tolerance,
    budget: Budget,
    pool: Option<Arc<Pool>>,
    pub(crate) shutdown: AtomicBool,
    /// Timer sets to tell of the shutdown (held weakly: a set does not outlive its owner).
    /// A plain std mutex also under loom: it is not part of any model.
    watchers: std::sync::Mutex<Vec<Weak<dyn OnShutdown>>>,
    /// The latest reading handed out by [`Shared::now`] or seen by a driver (clamped), so it
    /// never goes backwards either and never lags a driver.
    last_now: AtomicU64,
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
        pool: Option<Arc<Pool>>,
    ) -> Result<Shared, Error> {
        let shards = (0..shards)
            .map(|_| Ok(Shard::new(clock.waiter()?, stats::new_histogram()?)))
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Shared {
            shards,
            clock,
            tolerance,
            budget: Budget::steps(k),
            pool,
            shutdown: AtomicBool::new(false),
            watchers: std::sync::Mutex::new(Vec::new()),
            last_now: AtomicU64::new(0),
        })
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
        let mut list = self.watchers.lock().unwrap_or_else(|p| p.into_inner());
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

    fn check_shard(&self, shard: usize) -> Result<(), Error> {
        if shard < self.shards.len() {
            Ok(())
        } else {
            Err(Error::NoSuchShard {
                shard,
                shards: self.shards.len(),
            })
        }
    }

    fn lock_shard(&self, i: usize) -> MutexGuard<'_, ShardState> {
        sync::lock(&self.shards[i].state)
    }

    /// Locks the shard that holds `core` (see the timer module on why the re-check suffices).
    fn lock_home(&self, core: &TimerCore) -> (usize, MutexGuard<'_, ShardState>) {
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
    pub(crate) fn with_state<R>(&self, core: &TimerCore, f: impl FnOnce(&TimerState) -> R) -> R {
        let (_, shard) = self.lock_home(core);
        let mut state = sync::lock(&core.state);
        if shard.closed {
            state.forget_arming();
        }
        f(&state)
    }

    pub(crate) fn new_timer(&self, shard: usize, exec: Exec, callback: Callback) -> Arc<TimerCore> {
        Arc::new(TimerCore {
            exec,
            callback,
            shard: AtomicUsize::new(shard),
            state: sync::Mutex::new(TimerState::default()),
            idle: sync::Condvar::new(),
        })
    }

    /// Places `arm` on the wheel of `dest` (`st`), cancelling the timer's pending arming on
    /// `src` (`None`: the same shard). Returns whether the timer was pending.
    fn place(
        core: &Arc<TimerCore>,
        state: &mut TimerState,
        dest: &mut ShardState,
        src: Option<&mut ShardState>,
        arm: Arm,
    ) -> Result<bool, Error> {
        let was_pending = state.pending.is_some();
        // Same shard, one-shot to one-shot: move the window in place, keeping the handle.
        if let (None, Some(h), None, None) = (&src, state.pending, state.periodic, arm.periodic) {
            if dest.wheel.reset(h, arm.deadline, arm.tolerance) {
                state.deadline = arm.deadline;
                state.tolerance = arm.tolerance;
                return Ok(true);
            }
        }
        let value = Arc::clone(core);
        let handle = match arm.periodic {
            Some((period, missed)) => {
                dest.wheel
                    .start_periodic(arm.deadline, period, arm.tolerance, missed, value)?
            }
            None => dest.wheel.start_with(arm.deadline, arm.tolerance, value)?,
        };
        if let Some(old) = state.pending.replace(handle) {
            match src {
                Some(src) => drop(src.wheel.stop(old)),
                None => drop(dest.wheel.stop(old)),
            }
        }
        state.periodic = arm.periodic;
        state.deadline = arm.deadline;
        state.tolerance = arm.tolerance;
        Ok(was_pending)
    }

    /// Marks the driver of `st` for waking when a window ending at `end` comes before its plan.
    fn needs_wake(st: &mut ShardState, end: u64) -> bool {
        if st.plan.must_wake_for(end) {
            st.plan = Plan::Awake;
            true
        } else {
            false
        }
    }

    /// Locks shards `a != b` in index order; returns the guards as (a, b).
    fn lock_two(
        &self,
        a: usize,
        b: usize,
    ) -> (MutexGuard<'_, ShardState>, MutexGuard<'_, ShardState>) {
        if a < b {
            let ga = self.lock_shard(a);
            (ga, self.lock_shard(b))
        } else {
            let gb = self.lock_shard(b);
            (self.lock_shard(a), gb)
        }
    }

    pub(crate) fn arm(&self, core: &Arc<TimerCore>, arm: Arm) -> Result<bool, Error> {
        if self.shutdown.load(Ordering::Acquire) {
            return Err(Error::ShutDown);
        }
        if let Some(s) = arm.shard {
            self.check_shard(s)?;
        }
        let end = arm.deadline.saturating_add(arm.tolerance);
        loop {
            let cur = core.shard.load(Ordering::Acquire);
            let dest = arm.shard.unwrap_or(cur);
            let (was, wake) = if dest == cur {
                let mut st = self.lock_shard(cur);
                if core.shard.load(Ordering::Acquire) != cur {
                    continue;
                }
                let mut state = sync::lock(&core.state);
                if st.closed {
                    state.forget_arming();
                    return Err(Error::ShutDown);
                }
                let was = Self::place(core, &mut state, &mut st, None, arm)?;
                (was, Self::needs_wake(&mut st, end))
            } else {
                let (mut src, mut dst) = self.lock_two(cur, dest);
                if core.shard.load(Ordering::Acquire) != cur {
                    continue;
                }
                let mut state = sync::lock(&core.state);
                if src.closed || dst.closed {
                    state.forget_arming();
                    return Err(Error::ShutDown);
                }
                let was = Self::place(core, &mut state, &mut dst, Some(&mut src), arm)?;
                core.shard.store(dest, Ordering::Release);
                (was, Self::needs_wake(&mut dst, end))
            };
            if wake {
                self.shards[dest].waiter.wake();
            }
            return Ok(was);
        }
    }

    pub(crate) fn stop(&self, core: &TimerCore) -> Stop {
        let (_, mut st) = self.lock_home(core);
        let mut state = sync::lock(&core.state);
        if st.closed {
            // The shutdown emptied the wheel: the arming was cancelled then, not now.
            state.forget_arming();
        }
        if let Some(h) = state.pending.take() {
            // A stopped arming needs no wake-up: the driver may wake for nothing (its plan can
            // only be early), which costs less than waking it now to re-plan.
            drop(st.wheel.stop(h));
            state.periodic = None;
            Stop::Cancelled
        } else if state.running > 0 {
            Stop::Running
        } else {
            Stop::NotPending
        }
    }

    pub(crate) fn drain(&self, core: &TimerCore) -> Stop {
        let first = self.stop(core);
        let me = current().id();
        loop {
            let mut state = sync::lock(&core.state);
            loop {
                let mine = state.runners.iter().filter(|&&t| t == me).count();
                if state.running <= mine {
                    break;
                }
                // Counted under the timer's lock, which a finishing callback also takes before
                // deciding whether to notify: no notification is lost.
                state.drainers += 1;
                state = sync::wait(&core.idle, state);
                state.drainers -= 1;
            }
            let rearmed = state.pending.is_some();
            drop(state);
            // A callback that re-armed its timer while we waited: cancel that too.
            if !rearmed || self.stop(core) != Stop::Cancelled {
                return first;
            }
        }
    }

    pub(crate) fn move_to(&self, core: &Arc<TimerCore>, dest: usize) -> Result<bool, Error> {
        if self.shutdown.load(Ordering::Acquire) {
            return Err(Error::ShutDown);
        }
        self.check_shard(dest)?;
        loop {
            let cur = core.shard.load(Ordering::Acquire);
            if cur == dest {
                let (_, st) = self.lock_home(core);
                let mut state = sync::lock(&core.state);
                if st.closed {
                    state.forget_arming();
                    return Err(Error::ShutDown);
                }
                return Ok(state.pending.is_some());
            }
            let (mut src, mut dst) = self.lock_two(cur, dest);
            if core.shard.load(Ordering::Acquire) != cur {
                continue;
            }
            let mut state = sync::lock(&core.state);
            if src.closed || dst.closed {
                state.forget_arming();
                return Err(Error::ShutDown);
            }
            let Some(h) = state.pending else {
                core.shard.store(dest, Ordering::Release);
                return Ok(false);
            };
            // Re-arm the same window (and schedule) on the destination before giving up the
            // source, so a full destination leaves the timer where it was.
            let arm = Arm {
                deadline: state.deadline,
                tolerance: state.tolerance,
                shard: Some(dest),
                periodic: state.periodic,
            };
            let end = arm.deadline.saturating_add(arm.tolerance);
            debug_assert!(src.wheel.len() > 0, "{h:?} pending on an empty wheel");
            Self::place(core, &mut state, &mut dst, Some(&mut src), arm)?;
            core.shard.store(dest, Ordering::Release);
            let wake = Self::needs_wake(&mut dst, end);
            drop((state, src, dst));
            if wake {
                self.shards[dest].waiter.wake();
            }
            return Ok(true);
        }
    }

    /// [`Shared::step_with`] with fresh buffers (the tests' and models' step).
    #[cfg(any(test, loom))]
    pub(crate) fn step(self: &Arc<Self>, i: usize) -> Step {
        self.step_with(i, &mut Scratch::default())
    }

    /// One driver step on shard `i`: read the clock, fire what is due (at most the budget),
    /// release the lock, run the direct callbacks and queue the deferred ones. `scratch` is
    /// empty on entry and on return.
    pub(crate) fn step_with(self: &Arc<Self>, i: usize, scratch: &mut Scratch) -> Step {
        let shard = &self.shards[i];
        let due = &mut scratch.due;
        debug_assert!(due.is_empty() && scratch.lateness.is_empty());
        let (now, sleep) = {
            let mut st = self.lock_shard(i);
            let now = {
                let raw = self.clock.now();
                st.clamp.read(raw)
            };
            // `Shared::now` never reads below a driver: a caller that computes a deadline
            // from it (a timer set) would otherwise, after the clock is set back, see its
            // runtime timer fire for a time it does not yet see, re-arm, and fire again.
            self.last_now.fetch_max(now, Ordering::AcqRel);
            let progress = st
                .wheel
                .advance(now, self.budget, |_, expired| due.push(expired));
            if !progress.complete {
                Counters::bump(&shard.counters.budget_yields);
            }
            let me = current().id();
            for e in due.iter() {
                let mut state = sync::lock(&e.value.state);
                if state.pending == Some(e.handle) {
                    match state.periodic {
                        None => state.pending = None,
                        // The wheel re-armed it by the same rule (the core's, the only copy):
                        // its next deadline, or none after its last firing.
                        Some((period, missed)) => {
                            match missed.next(e.deadline, period, now).0 {
                                Some(next) => state.deadline = next,
                                // Its last firing: the wheel has let it go.
                                None => {
                                    state.pending = None;
                                    state.periodic = None;
                                }
                            }
                        }
                    }
                }
                state.running += 1;
                state.fired += 1;
                state.overruns = e.overruns;
                if e.value.exec == Exec::Direct {
                    state.runners.push(me);
                }
            }
            let sleep = if due.is_empty() && progress.complete {
                let next = st.wheel.next_wakeup();
                st.plan = Plan::Asleep(next);
                Some(next)
            } else {
                st.plan = Plan::Awake;
                None
            };
            (now, sleep)
        };
        let fired = due.len();
        // Lateness is recorded after the callbacks are dispatched, so it adds nothing to theirs.
        let lateness = &mut scratch.lateness;
        for e in due.drain(..) {
            lateness.push(now.saturating_sub(e.deadline));
            let fire = Fire {
                deadline: e.deadline,
                now,
                overruns: e.overruns,
                shard: i,
            };
            let timer = Timer {
                core: e.value,
                shared: Arc::clone(self),
            };
            match (timer.core.exec, &self.pool) {
                (Exec::Deferred, Some(pool)) => {
                    self.clock.busy(true);
                    pool.submit(Box::new(move |run| {
                        let shared = Arc::clone(&timer.shared);
                        if run {
                            sync::lock(&timer.core.state).runners.push(current().id());
                            shared.run_callback(&timer, &fire);
                        } else {
                            // The runtime is going away and the pool takes no more work:
                            // the firing is dropped unrun, but no longer counts as running.
                            shared.finish_run(&timer);
                        }
                        shared.release(timer, fire.shard);
                        shared.clock.busy(false);
                    }));
                }
                // Without a pool (model checking), deferred callbacks run here too.
                _ => {
                    self.run_callback(&timer, &fire);
                    self.release(timer, i);
                }
            }
        }
        if fired > 0 {
            let mut h = sync::lock(&shard.lateness);
            for l in lateness.drain(..) {
                h.saturating_record(l);
            }
        }
        Step { fired, sleep }
    }

    /// Runs one callback whose run was registered in the timer's state, then marks it done.
    fn run_callback(&self, timer: &Timer, fire: &Fire) {
        if timer.core.exec == Exec::Deferred && self.pool.is_none() {
            sync::lock(&timer.core.state).runners.push(current().id());
        }
        // A panicking callback must not take the driver or worker down with it (every other
        // timer of the shard would be lost): it is caught here, counted in
        // `ShardStats::panics`, and its payload dropped. The message has already been printed
        // by the process's panic hook, as for any panic. No lock is held here, so none is
        // poisoned; the timer's bookkeeping below runs as if the callback had returned.
        let ran = catch_unwind(AssertUnwindSafe(|| (timer.core.callback)(timer, fire)));
        if let Err(payload) = ran {
            Counters::bump(&self.shards[fire.shard].counters.panics);
            drop_payload(payload);
        }
        self.finish_run(timer);
    }

    /// Marks one registered run of the timer's callback finished (run or dropped unrun), and
    /// wakes a waiting `drain`.
    fn finish_run(&self, timer: &Timer) {
        let mut state = sync::lock(&timer.core.state);
        state.running = state.running.saturating_sub(1);
        let me = current().id();
        if let Some(pos) = state.runners.iter().position(|&t| t == me) {
            state.runners.swap_remove(pos);
        }
        // Notify only a waiting `drain`: `notify_all` is a futex system call even with no
        // waiter, and it used to follow every callback, delaying the next callback of the
        // same batch (measured: 100 direct timers due at once fired over 40 µs, now 15 µs).
        let drainers = state.drainers > 0;
        drop(state);
        if drainers {
            timer.core.idle.notify_all();
        }
    }

    /// Lets go of a fired timer's reference. When it was the last one (its owner dropped every
    /// handle while it was pending), the callback's captured values are dropped here, on the
    /// driver or worker: user code, whose panic is caught and counted like a callback's.
    fn release(&self, timer: Timer, shard: usize) {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(move || drop(timer))) {
            Counters::bump(&self.shards[shard].counters.panics);
            drop_payload(payload);
        }
    }

    /// The driver of shard `i`: steps until there is nothing due, sleeps until the next
    /// wake-up, and counts why it woke.
    pub(crate) fn drive(self: &Arc<Self>, i: usize) {
        let shard = &self.shards[i];
        let c = &shard.counters;
        let mut scratch = Scratch::default();
        while !self.shutdown.load(Ordering::Acquire) {
            let Some(until) = self.step_with(i, &mut scratch).sleep else {
                continue;
            };
            match shard.waiter.wait(until) {
                Ok(Wake::Deadline) => Counters::bump(&c.wakeups),
                Ok(Wake::Early) => {
                    Counters::bump(&c.wakeups);
                    Counters::bump(&c.early_wakeups);
                }
                // The next step re-reads the clock: deadlines now passed fire, others are
                // re-planned against the new time.
                Ok(Wake::ClockSet) => {
                    Counters::bump(&c.wakeups);
                    Counters::bump(&c.clock_sets);
                }
                Err(_) => {
                    Counters::bump(&c.wait_errors);
                    // Do not spin on a failing sleep: fall back to a coarse one.
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
        }
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

/// Drops a caught panic's payload, which is user data and may panic in its own `Drop`: that
/// second payload is leaked rather than dropped, so no unwinding escapes.
fn drop_payload(payload: Box<dyn std::any::Any + Send>) {
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
}

/// A running timer runtime: one driver thread per shard and a pool of workers for deferred
/// callbacks. Dropping it stops the threads (after queued deferred callbacks have run) and
/// cancels every pending timer: from then on its [`Timer`]s are not pending, their `stop` and
/// `drain` report [`Stop::NotPending`] (or [`Stop::Running`] for a callback still running, when
/// the runtime was dropped from a callback), and every call that can fail returns
/// [`Error::ShutDown`]; its [`TimerSet`](crate::TimerSet)s likewise (see the set's
/// documentation).
///
/// ```
/// use std::sync::mpsc;
/// use std::time::Duration;
/// use callwheel_rt::{Config, Exec, Runtime};
///
/// let rt = Runtime::new(Config { shards: 1, ..Config::default() })?;
/// let (tx, rx) = mpsc::channel();
/// let tx = std::sync::Mutex::new(tx);
/// let t = rt.timer(Exec::Direct, move |_timer, fire| {
///     let _ = tx.lock().unwrap().send(fire.lateness());
/// });
/// t.start_after(Duration::from_millis(1))?;
/// let lateness_ns = rx.recv_timeout(Duration::from_secs(10))?;
/// println!("fired {lateness_ns} ns late");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Runtime {
    pub(crate) shared: Arc<Shared>,
    pool: Option<Arc<Pool>>,
    threads: Vec<JoinHandle<()>>,
}

impl Runtime {
    /// Builds the runtime and starts its threads.
    ///
    /// # Errors
    ///
    /// [`Error::Config`], naming the field and its range, for a field outside the range
    /// [`Config`] documents (checked before anything is built); [`Error::Io`] when a waiter or
    /// a thread cannot be created.
    pub fn new(config: Config) -> Result<Runtime, Error> {
        let shards = config.validate()?;
        let pool = Arc::new(Pool::default());
        let shared = Arc::new(Shared::new(
            config.clock,
            shards,
            config.max_expiries_per_lock,
            config.tolerance,
            Some(Arc::clone(&pool)),
        )?);
        let mut rt = Runtime {
            shared,
            pool: Some(Arc::clone(&pool)),
            threads: Vec::new(),
        };
        // On an error below, dropping `rt` stops whatever already started.
        rt.threads = pool::spawn(&pool, config.workers)?;
        for i in 0..shards {
            let shared = Arc::clone(&rt.shared);
            let driver = std::thread::Builder::new()
                .name(format!("callwheel-rt-driver-{i}"))
                .spawn(move || {
                    // Tolerance is the runtime's to apply: ask the kernel for no slack of its
                    // own. A kernel that refuses leaves the default 50 µs, which only makes
                    // timers later, never early.
                    // Miri cannot run prctl; the slack only changes real kernel sleeps.
                    #[cfg(not(miri))]
                    let _ = ClockId::minimise_timer_slack();
                    shared.drive(i);
                })?;
            rt.threads.push(driver);
        }
        Ok(rt)
    }

    /// A new timer that runs `callback` (given the timer itself, so it can re-arm or stop
    /// itself, and the firing) as `exec` says. It belongs to the calling thread's shard.
    pub fn timer<F>(&self, exec: Exec, callback: F) -> Timer
    where
        F: Fn(&Timer, &Fire) + Send + Sync + 'static,
    {
        let shard = self.current_shard();
        Timer {
            core: self.shared.new_timer(shard, exec, Box::new(callback)),
            shared: Arc::clone(&self.shared),
        }
    }

    /// A new timer belonging to `shard` (see [`Runtime::timer`]).
    ///
    /// # Errors
    ///
    /// [`Error::NoSuchShard`].
    pub fn timer_on<F>(&self, shard: usize, exec: Exec, callback: F) -> Result<Timer, Error>
    where
        F: Fn(&Timer, &Fire) + Send + Sync + 'static,
    {
        self.shared.check_shard(shard)?;
        Ok(Timer {
            core: self.shared.new_timer(shard, exec, Box::new(callback)),
            shared: Arc::clone(&self.shared),
        })
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

    /// The clock's reading in nanoseconds, never below an earlier one.
    pub fn now(&self) -> u64 {
        self.shared.now()
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
        // Drop every pending timer: their callbacks may hold timers, which hold the shared
        // state, and would otherwise keep it alive in a cycle. A closed shard takes no new
        // arming, and its timers forget theirs when next asked (they hold the shard's lock
        // then, as the wheel was emptied under it).
        for i in 0..self.shared.shards.len() {
            let old = {
                let mut st = self.shared.lock_shard(i);
                st.closed = true;
                std::mem::replace(&mut st.wheel, Wheel::new())
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
                .watchers
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
