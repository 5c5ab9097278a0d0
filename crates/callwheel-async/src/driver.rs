//! The driver: what wakes sleeping futures (threads of its own here; an executor's reactor
//! in `reactor.rs`, `tokio_reactor.rs` and `async_io_reactor.rs`). Each shard is one
//! production wheel whose values are the futures' wakers, behind a mutex, with one thread that fires what is
//! due, wakes the wakers with the lock released, and sleeps until the wheel's next wake-up
//! (the earliest window end), woken early only by a registration whose window ends before
//! that. Every form runs the runtime's one driver loop
//! ([`DriveLoop`](callwheel_rt::drive_loop::DriveLoop)); a turn of it here wakes wakers
//! ([`Turning`], in `driver_turning.rs`).
//!
//! Why not one `callwheel_rt::Timer` per future: a runtime timer carries a callback, its own
//! state and drain machinery, and costs allocations of its own; a future needs only its waker
//! woken. Keeping the waker as the wheel's value makes a registration one slab slot and a
//! list link (no allocation in steady state) and a cancellation O(1). The clocks, the
//! sleeping and the test clock are the runtime's ([`Clock`], [`Waiter`], [`ManualClock`](callwheel_rt::ManualClock)).

use std::io;
use std::sync::Arc;
use std::task::Waker;
use std::time::{Duration, Instant};

use callwheel::{Budget, Handle, Scheme, Timers, Wheel};
use callwheel_rt::drive_loop::Next;
use callwheel_rt::{Clock, ClockId, Lead, Margin, Plan, SystemClock, Tolerance, Waiter};

use crate::due::{monotonic_deadline_after, monotonic_now, monotonic_ns, Due};
use crate::reactor::ReactorAlarm;
use crate::sync::{AtomicBool, AtomicU64, AtomicUsize, Mutex, MutexGuard, Ordering};

/// Expiries a driver takes per hold of its shard's lock: the bound on how long a registration
/// can wait for the lock behind a mass expiry (the papers' bounded lock-out).
pub(crate) const BUDGET: u64 = 256;

/// The most shards a driver accepts.
pub const MAX_SHARDS: usize = 256;

#[derive(Debug)]
struct State {
    wheel: Wheel<Waker>,
    plan: Plan,
    /// How long before a window's end the thread aims its sleep (see [`Lead`]): so that a
    /// tolerant timer fires inside its window rather than a wake-up latency after it.
    lead: Lead,
}

/// How a shard's driver is woken early (a registration whose window ends before its plan, or
/// the shutdown).
#[derive(Debug)]
pub(crate) enum Wakeup {
    /// A thread of the driver's own sleeps on this waiter.
    Thread(Box<dyn Waiter>),
    /// A task of an executor awaits this alarm's readiness in the executor's reactor.
    #[cfg_attr(not(any(feature = "tokio", feature = "async-io")), allow(dead_code))]
    Reactor(Arc<ReactorAlarm>),
    /// A task on tokio's paused clock waits for this (or for its next wake-up there).
    #[cfg(feature = "test-util")]
    Notify(Arc<tokio::sync::Notify>),
}

impl Wakeup {
    /// Wakes the driver for a registration whose aim is `aim` (a reading of the driver's clock):
    /// a reactor's driver may look on this thread when the aim is near.
    fn wake_for(&self, aim: u64) {
        match self {
            Wakeup::Reactor(a) => a.wake_for(aim),
            w => w.wake(),
        }
    }

    fn wake(&self) {
        match self {
            Wakeup::Thread(w) => w.wake(),
            Wakeup::Reactor(a) => a.wake_now(),
            #[cfg(feature = "test-util")]
            Wakeup::Notify(n) => n.notify_one(),
        }
    }
}

#[derive(Debug)]
struct Shard {
    state: Mutex<State>,
    /// The owner part of every handle its wheel issues: an [`Entry`] keeps only the id.
    owner: u64,
    waiter: Wakeup,
    /// Sleeps that ended at their planned instant (not early for a registration).
    wakeups: AtomicU64,
    /// Warm-up sleeps that ended at their instant.
    warm_ups: AtomicU64,
    /// Futures woken because their deadline passed.
    fired: AtomicU64,
}

impl Shard {
    fn new(waiter: Wakeup) -> Shard {
        let wheel = Wheel::new();
        Shard {
            owner: wheel.owner().get(),
            state: Mutex::new(State {
                wheel,
                plan: Plan::Awake,
                lead: Lead::ZERO,
            }),
            waiter,
            wakeups: AtomicU64::new(0),
            warm_ups: AtomicU64::new(0),
            fired: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A waker that panicked is caught outside the lock: a poisoned lock can only come from
        // a bug here, and the wheel is consistent at every unlock, so carry on with it.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// How a future refers to its driver: the process-wide one by a plain reference (no reference
/// count to move per future), others by a counted one.
#[derive(Clone, Debug)]
pub(crate) enum Link {
    Global(&'static Inner),
    Own(Arc<Inner>),
}

impl std::ops::Deref for Link {
    type Target = Inner;

    fn deref(&self) -> &Inner {
        match self {
            Link::Global(inner) => inner,
            Link::Own(inner) => inner,
        }
    }
}

/// The state the driver's threads and every future registered on it share.
#[derive(Debug)]
pub(crate) struct Inner {
    clock: Arc<dyn Clock>,
    /// The clock is the monotonic one, on which an `Instant` converts exactly with no clock
    /// read: a sleep's deadline then costs one `Instant::now()`.
    monotonic: bool,
    shards: Box<[Shard]>,
    tolerance: Tolerance,
    shutdown: AtomicBool,
    /// User handles ([`Driver`] values) alive: the last one dropped shuts the driver down.
    handles: AtomicUsize,
    /// The process's fork generation when the driver was made: in a child forked since, the
    /// driver is a copy whose threads and alarm stay with the parent
    /// ([`callwheel_rt::fork_generation`]).
    generation: u64,
}

/// Why a registration was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The driver has shut down: the future completes at once rather than wait for ever.
    ShutDown,
    /// The wheel could not grow: the future polls itself again until its deadline.
    NoMemory,
}

/// Which timer of its shard a registered future's is (the handle's id: the shard knows the
/// owner part), and what a re-poll needs to answer without the shard's lock: the shard's
/// firing count when the timer was last seen pending, and the waker it holds (its data and
/// vtable addresses: `Waker::will_wake`'s test). The shard's number is kept by the future.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    id: u64,
    fired: u64,
    waker: (usize, usize),
}

impl Entry {
    /// What a future keeps while it is not registered.
    pub(crate) const NONE: Entry = Entry {
        id: 0,
        fired: 0,
        waker: (0, 0),
    };
}

/// A waker's identity, as `Waker::will_wake` compares it.
fn identity(waker: &Waker) -> (usize, usize) {
    (
        waker.data() as usize,
        std::ptr::from_ref(waker.vtable()) as usize,
    )
}

/// The process's fork generation, for a driver made now; with the `tokio` feature, every later
/// fork first notes the runtime the forking thread is inside, for the child to leave alone.
fn fork_generation() -> u64 {
    #[cfg(feature = "tokio")]
    crate::tokio_reactor::note_runtimes_at_fork();
    callwheel_rt::fork_generation()
}

/// Threads take shards by a number drawn once per thread, so one thread's futures share a
/// shard (and its cache lines) and threads spread over the shards.
fn thread_number() -> usize {
    // A plain counter, outside any model: it only spreads threads over shards.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    thread_local! {
        static NUMBER: usize = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    NUMBER.try_with(|n| *n).unwrap_or(0)
}

impl Inner {
    /// The clock's reading.
    pub(crate) fn now(&self) -> u64 {
        self.clock.now()
    }

    /// The deadline `duration` from now (one clock read on the monotonic clock; a reading of
    /// the driver's own clock too otherwise, so that a simulated clock's deadlines are exact).
    pub(crate) fn deadline_after(&self, duration: Duration) -> Due {
        let monotonic = monotonic_deadline_after(duration);
        if self.monotonic {
            return monotonic;
        }
        let clock = self
            .clock
            .now()
            .saturating_add(callwheel_rt::saturating_ns(duration));
        Due { clock, ..monotonic }
    }

    /// A reading `ns` of the clock both ways: exact on the monotonic clock, its `Instant` by
    /// its distance from now on others.
    pub(crate) fn due_of(&self, ns: u64) -> Due {
        if self.monotonic {
            return Due::monotonic(ns);
        }
        let ahead = ns.saturating_sub(self.clock.now());
        Due {
            instant: monotonic_now().saturating_add(ahead),
            clock: ns,
        }
    }

    /// `at` both ways.
    pub(crate) fn due_at(&self, at: Instant) -> Due {
        let instant = monotonic_ns(at);
        if self.monotonic {
            return Due::monotonic(instant);
        }
        Due {
            instant,
            clock: self.clock.ns_at(at),
        }
    }

    /// The driver's default tolerance for a wait until `deadline` (no clock read when it is
    /// exact, the default).
    pub(crate) fn default_tolerance(&self, deadline: u64) -> u64 {
        self.tolerance.until(deadline, || self.clock.now())
    }

    /// Whether the driver has shut down, or is a copy in a child forked since it was made.
    pub(crate) fn is_shut_down(&self) -> bool {
        self.shutdown.load(Ordering::Acquire) || self.forked()
    }

    /// Whether this is a copy in a child forked since the driver was made: no thread of the
    /// child turns it, a parent thread may have held its locks at the fork, and its alarm's
    /// descriptor is the parent's too. Checked before every lock: such a copy is never locked,
    /// turned or set, only let go of.
    pub(crate) fn forked(&self) -> bool {
        self.generation != callwheel_rt::fork_generation()
    }

    /// Registers `waker` to be woken once the clock reaches `deadline`, within
    /// `[deadline, deadline + tolerance]`.
    pub(crate) fn register(
        &self,
        deadline: u64,
        tolerance: u64,
        waker: &Waker,
    ) -> Result<(usize, Entry), Refused> {
        // A driver of one shard (each executor's own) needs no thread number.
        let shard = match self.shards.len() {
            1 => 0,
            n => thread_number() % n,
        };
        let s = &self.shards[shard];
        let end = callwheel::window_end(deadline, tolerance);
        if self.forked() {
            return Err(Refused::ShutDown);
        }
        let mut st = s.lock();
        if self.shutdown.load(Ordering::Acquire) {
            return Err(Refused::ShutDown);
        }
        let handle = st
            .wheel
            .start_with(deadline, tolerance, waker.clone())
            .map_err(|_| Refused::NoMemory)?;
        let lead = st.lead;
        let wake = st.plan.wake_for(lead, deadline, end);
        let fired = s.fired.load(Ordering::Acquire);
        drop(st);
        if wake {
            s.waiter.wake_for(lead.aim_for(deadline, end));
        }
        let (id, _) = handle.to_parts();
        Ok((
            shard,
            Entry {
                id,
                fired,
                waker: identity(waker),
            },
        ))
    }

    /// The handle of `entry`'s timer on shard `shard`.
    fn handle(&self, shard: usize, entry: Entry) -> Handle {
        Handle::from_parts(entry.id, self.shards[shard].owner)
    }

    /// Whether the registered timer is still pending; if so, `waker` replaces its waker
    /// (unless it would wake the same task). `false` once it fired, or the driver shut down.
    ///
    /// The common re-poll — the same task, and nothing fired on the shard since the timer was
    /// last seen pending — answers from two atomic loads, without the lock: a timer that fired
    /// since has moved the shard's count (the driver counts its firings before it wakes them),
    /// so a re-poll that misses a firing in progress is followed by that firing's wake-up.
    pub(crate) fn still_pending(&self, shard: usize, entry: &mut Entry, waker: &Waker) -> bool {
        let s = &self.shards[shard];
        if entry.waker == identity(waker)
            && s.fired.load(Ordering::Acquire) == entry.fired
            && !self.is_shut_down()
        {
            return true;
        }
        if self.forked() {
            return false;
        }
        let mut st = s.lock();
        if self.shutdown.load(Ordering::Acquire) {
            return false;
        }
        match st.wheel.value_mut(self.handle(shard, *entry)) {
            Some(stored) => {
                if !stored.will_wake(waker) {
                    stored.clone_from(waker);
                }
                entry.fired = s.fired.load(Ordering::Acquire);
                entry.waker = identity(waker);
                true
            }
            None => false,
        }
    }

    /// Moves a registered timer to a new window; `false` when it had already fired.
    pub(crate) fn reset(&self, shard: usize, entry: Entry, deadline: u64, tolerance: u64) -> bool {
        let handle = self.handle(shard, entry);
        let s = &self.shards[shard];
        let end = callwheel::window_end(deadline, tolerance);
        if self.forked() {
            return false;
        }
        let mut st = s.lock();
        if st.wheel.reset(handle, deadline, tolerance).is_none() {
            return false;
        }
        let lead = st.lead;
        let wake = st.plan.wake_for(lead, deadline, end);
        drop(st);
        if wake {
            s.waiter.wake_for(lead.aim_for(deadline, end));
        }
        true
    }

    /// Cancels a registered timer (nothing when it already fired). Its waker is dropped after
    /// the lock is released: dropping a waker is the executor's code.
    pub(crate) fn cancel(&self, shard: usize, entry: Entry) {
        if self.forked() {
            // A copy in a forked child: its entry is left where it is.
            return;
        }
        let handle = self.handle(shard, entry);
        let waker = self.shards[shard].lock().wheel.stop(handle);
        drop(waker);
    }

    /// Pending registrations and the bytes the shards' wheels hold.
    pub(crate) fn counts(&self) -> (usize, usize) {
        if self.forked() {
            // A copy in a forked child holds nothing that will fire there.
            return (0, 0);
        }
        self.shards.iter().fold((0, 0), |(n, b), s| {
            let st = s.lock();
            (n + st.wheel.len(), b + st.wheel.memory_bytes())
        })
    }

    /// The waiter of shard `i`'s thread (a thread driver's shards all have one).
    fn thread_waiter(&self, i: usize) -> &dyn Waiter {
        match &self.shards[i].waiter {
            Wakeup::Thread(w) => w.as_ref(),
            Wakeup::Reactor(_) => unreachable!("a reactor's shard has no thread"),
            #[cfg(feature = "test-util")]
            Wakeup::Notify(_) => unreachable!("a paused clock's shard has no thread"),
        }
    }

    /// One look of shard `i`'s driver at its wheel (the turn of its
    /// [`DriveLoop`](callwheel_rt::drive_loop::DriveLoop)): takes what is due (at most [`BUDGET`]
    /// expiries per hold of the lock), wakes it with the lock released, and says what the
    /// thread does next. The plan it leaves in the shard is what a registration reads to
    /// decide whether the thread must be woken early. `late` is how long after a planned
    /// wake-up's instant the turn it served had woken its futures: it trains the lead. With a
    /// planned sleep comes, for a long one until an exact deadline, the instant of its
    /// warm-up ([`Lead::warm_up`](callwheel_rt::Lead::warm_up)), which the plan then is.
    pub(crate) fn turn(
        &self,
        i: usize,
        due: &mut Vec<Waker>,
        late: Option<u64>,
    ) -> (Next, Option<u64>) {
        let shard = &self.shards[i];
        if self.forked() {
            // A copy in a forked child: what it holds is the parent's to fire.
            return (Next::Exit, None);
        }
        let next = {
            let mut st = shard.lock();
            if self.shutdown.load(Ordering::Acquire) {
                // Wake every future still registered: each then sees the shutdown and
                // completes, so nothing waits for ever on a driver that is gone.
                while let Some(e) = st.wheel.poll_expired(u64::MAX) {
                    due.push(e.value);
                }
                drop(st);
                wake_all(due);
                return (Next::Exit, None);
            }
            let now = self.clock.now();
            if let (Some(late), false) = (late, self.clock.simulated()) {
                st.lead = st.lead.after(late, Margin::Lean);
            }
            let progress = st
                .wheel
                .advance(now, Budget::steps(BUDGET), |_, e| due.push(e.value));
            if progress.complete && due.is_empty() {
                let aim = st.lead.aim(&st.wheel, now);
                // The end of the clock's range never comes (a `Duration::MAX` sleep, or a window
                // whose end saturates): the driver sleeps until woken rather than until then,
                // so a simulated clock's auto-advance never jumps there. The plan keeps it, so
                // that another such registration does not wake the driver.
                let next = aim.filter(|&t| t != u64::MAX);
                // A simulated clock's jumps wake no CPU: nothing to warm up.
                let warm = next
                    .filter(|_| !self.clock.simulated())
                    .and_then(|aim| Lead::warm_up(&st.wheel, aim, now));
                st.plan = Plan::Asleep(warm.or(aim));
                (Next::Sleep(next), warm)
            } else {
                st.plan = Plan::Awake;
                (Next::Again, None)
            }
        };
        // Counted before the wake-ups: a re-poll that reads the old count is woken after.
        shard.fired.fetch_add(due.len() as u64, Ordering::Release);
        wake_all(due);
        next
    }

    /// The shared state of a driver with `shards` shards on `clock` (no thread started).
    pub(crate) fn new(
        clock: Arc<dyn Clock>,
        monotonic: bool,
        shards: usize,
        tolerance: Tolerance,
    ) -> io::Result<Inner> {
        let shards = (0..shards)
            .map(|_| Ok(Shard::new(Wakeup::Thread(clock.waiter()?))))
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Inner {
            clock,
            monotonic,
            shards: shards.into_boxed_slice(),
            tolerance,
            shutdown: AtomicBool::new(false),
            handles: AtomicUsize::new(1),
            generation: fork_generation(),
        })
    }

    /// The shared state of a driver with one shard on the monotonic clock, woken through
    /// `alarm` by an executor's reactor (exact timers by default, as the process-wide one).
    #[cfg_attr(not(any(feature = "tokio", feature = "async-io")), allow(dead_code))]
    pub(crate) fn reactor(alarm: Arc<ReactorAlarm>) -> Inner {
        Inner {
            clock: Arc::new(SystemClock::new(ClockId::Monotonic)),
            monotonic: true,
            shards: vec![Shard::new(Wakeup::Reactor(alarm))].into_boxed_slice(),
            tolerance: Tolerance::EXACT,
            shutdown: AtomicBool::new(false),
            handles: AtomicUsize::new(1),
            generation: fork_generation(),
        }
    }

    /// The shared state of a driver with one shard on tokio's paused `clock`, whose task waits
    /// on `notify` (exact timers by default).
    #[cfg(feature = "test-util")]
    pub(crate) fn paused(clock: Arc<dyn Clock>, notify: Arc<tokio::sync::Notify>) -> Inner {
        Inner {
            clock,
            monotonic: false,
            shards: vec![Shard::new(Wakeup::Notify(notify))].into_boxed_slice(),
            tolerance: Tolerance::EXACT,
            shutdown: AtomicBool::new(false),
            handles: AtomicUsize::new(1),
            generation: fork_generation(),
        }
    }

    /// Whether this driver counts on tokio's paused clock.
    #[cfg(feature = "test-util")]
    pub(crate) fn is_paused_clock(&self) -> bool {
        self.shards
            .iter()
            .any(|s| matches!(s.waiter, Wakeup::Notify(_)))
    }

    /// Makes every shard's driver look at its wheel now.
    #[cfg(feature = "test-util")]
    pub(crate) fn nudge(&self) {
        for s in self.shards.iter() {
            s.waiter.wake();
        }
    }

    pub(crate) fn shut_down(&self) {
        self.shutdown.store(true, Ordering::Release);
        if self.forked() {
            // No thread of this copy runs in the child, and its waiters may be the parent's.
            return;
        }
        for s in self.shards.iter() {
            // Taking the lock orders the flag before the drivers' next look at their wheel.
            drop(s.lock());
            s.waiter.wake();
        }
    }

    /// Shuts the driver down where its driving will not turn the wheel again (its task was
    /// dropped with its runtime, its thread ended, its reactor refused the alarm): the last
    /// turn is taken here, waking every future still registered, so that each one, polled
    /// again, registers elsewhere or completes — none waits on a wheel nobody turns.
    #[cfg_attr(not(any(feature = "tokio", feature = "async-io")), allow(dead_code))]
    pub(crate) fn shut_down_and_hand_back(&self) {
        self.shut_down();
        let mut due = Vec::new();
        for i in 0..self.shards.len() {
            self.turn(i, &mut due, None);
        }
    }
}

/// Wakes each waker, with no lock held; a waker that panics (executor code) is caught so the
/// driver and the other wakers go on.
fn wake_all(due: &mut Vec<Waker>) {
    for w in due.drain(..) {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || w.wake()));
    }
}

#[path = "driver_builder.rs"]
mod builder;
pub use builder::{Builder, Driver, DriverStats};

#[path = "driver_turning.rs"]
mod turning;
pub(crate) use turning::drive_thread;
// The executors' own drivers turn a shard as a driver thread does.
#[cfg(any(feature = "tokio", feature = "async-io"))]
pub(crate) use turning::Turning;

#[cfg(all(test, not(callwheel_loom)))]
#[path = "driver_tests.rs"]
mod tests;
