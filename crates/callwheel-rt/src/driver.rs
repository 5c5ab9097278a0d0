//! The runtime's driver: one thread per shard, running the loop every driver runs
//! ([`DriveLoop`]), whose turn is the step here.
//!
//! A step takes its shard's lock once, fires at most `max_expiries_per_lock` timers (the
//! wheel's budget, the papers' bounded lock-out), records their running state, and releases
//! the lock before any callback runs: direct callbacks run here, deferred ones are queued on
//! the worker pool. Lock order and placement are the shard operations' (`runtime`).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Duration;

use callwheel::{Expired, Scheme, Timers};

use crate::clock::{Clock, ClockId};
use crate::counted::Counted;
use crate::drive_loop::{DriveLoop, Event, Next, Turn, Waited};
use crate::fire::Fire;
use crate::lead::{Margin, Plan};
use crate::runs;
use crate::runtime::drop_payload;
use crate::shared::{Core, Deferred, Shared, Timer};
use crate::stats::Counters;
use crate::sync::{self, Ordering};
use crate::timer::Exec;
use crate::workers::Refused;
use crate::Error;

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
/// Kept so that a step that fires allocates nothing: the first allocation after a sleep runs
/// on cold caches and TLBs, and on the 2-CPU VM with a 10 ms periodic timer it alone cost about
/// 1.5 µs of the time between the driver's wake-up and the callback. A step holds at most `max_expiries_per_lock` expiries, so the buffers stay small.
#[derive(Default)]
pub(crate) struct Scratch {
    due: Vec<Expired<Counted<Core>>>,
    lateness: Vec<u64>,
    /// For each expiry in `due`, the clock base and its reading its deadline stood for, when
    /// it was armed on another base: its [`Fire`] speaks of that clock.
    bases: Vec<Option<(ClockId, u64)>>,
    /// Room for the driver thread's record of the runs it holds (the `runs` module), adopted
    /// by the thread when it starts.
    runs: Vec<usize>,
    /// How late, after the instant it was planned for, the last planned wake-up delivered
    /// its firings: the next step trains the shard's lead with it.
    pub(crate) late: Option<u64>,
}

impl Scratch {
    /// Buffers for steps of at most `budget` expiries, reserved up front. A driver has no
    /// caller to hand an out-of-memory error to, so what its steps need is taken when the
    /// runtime is built, where a refusal can be returned: a step then never allocates for them
    /// (a firing costs the wheel at least one step of its budget, so no step holds more).
    pub(crate) fn reserved(budget: u64) -> Result<Scratch, Error> {
        let n = usize::try_from(budget).map_err(|_| Error::Wheel(callwheel::Error::NoMemory))?;
        let mut scratch = Scratch::default();
        let refused = |_| Error::Wheel(callwheel::Error::NoMemory);
        scratch.due.try_reserve_exact(n).map_err(refused)?;
        scratch.lateness.try_reserve_exact(n).map_err(refused)?;
        scratch.bases.try_reserve_exact(n).map_err(refused)?;
        scratch.runs = runs::reserved(n)?;
        Ok(scratch)
    }
}

// For step_tests, which the loom build leaves out.
#[cfg(all(test, not(callwheel_loom)))]
impl Scratch {
    pub(crate) fn is_empty(&self) -> bool {
        self.due.is_empty() && self.lateness.is_empty() && self.bases.is_empty()
    }
}

impl Shared {
    /// [`Shared::step_with`] with fresh buffers (the tests' and models' step).
    #[cfg(test)]
    pub(crate) fn step(self: &Arc<Self>, i: usize) -> Step {
        self.step_with(i, &mut Scratch::default())
    }

    /// One driver step on shard `i`: read the clock, fire what is due (at most the budget),
    /// release the lock, run the direct callbacks and queue the deferred ones. `scratch` is
    /// empty on entry and on return.
    pub(crate) fn step_with(self: &Arc<Self>, i: usize, scratch: &mut Scratch) -> Step {
        let shard = &self.shards[i];
        let late = scratch.late.take();
        let (due, bases) = (&mut scratch.due, &mut scratch.bases);
        debug_assert!(due.is_empty() && scratch.lateness.is_empty() && bases.is_empty());
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
            // A clock was set since this shard last looked: timers armed on another clock base
            // get their keys again before anything fires (see the `bases` module).
            let sets = self.set_count();
            if sets != st.sets_seen {
                st.sets_seen = sets;
                if !st.based.is_empty() {
                    st.rekey(&*self.clock, now);
                }
            }
            let progress = st
                .wheel
                .advance(now, self.budget, |_, expired| due.push(expired));
            if !progress.complete {
                Counters::bump(&shard.counters.budget_yields);
            }
            for e in due.iter() {
                let mut state = sync::lock(&e.value.state);
                bases.push(state.base.filter(|_| state.pending == Some(e.handle)));
                if state.pending == Some(e.handle) {
                    // The wheel re-armed a periodic timer by the missed-period rule (the
                    // core's, the only copy) under the same handle; a one-shot timer, or a
                    // periodic one's last firing, it has let go.
                    match st.wheel.deadline(e.handle) {
                        Some(next) => {
                            // On another clock base, the base's deadline moves by the period.
                            if let Some((_, ns)) = &mut state.base {
                                *ns = ns.saturating_add(next.saturating_sub(e.deadline));
                            }
                        }
                        None => {
                            state.forget_arming();
                            st.unlist(&e.value);
                        }
                    }
                }
                state.running += 1;
                state.fired += 1;
                state.overruns = e.overruns;
                if e.value.exec == Exec::Direct {
                    runs::begin(e.value.id());
                }
            }
            if let (Some(late), false) = (late, self.clock.simulated()) {
                st.lead = st.lead.after(late, Margin::Inside);
            }
            let sleep = if due.is_empty() && progress.complete {
                let next = st.lead.aim(&st.wheel, now);
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
        // One reading per clock base for the whole batch, as for the shard's own clock.
        let mut readings: [Option<u64>; 3] = [None; 3];
        for (e, base) in due.drain(..).zip(bases.drain(..)) {
            lateness.push(now.saturating_sub(e.deadline));
            let (deadline, at) = match base {
                // Armed on another clock base: its deadline and the time in that clock's
                // readings (the key's distance when the base cannot be read again).
                Some((b, ns)) => {
                    let reading = *readings[b as usize].get_or_insert_with(|| {
                        self.clock
                            .base_now(b)
                            .unwrap_or(ns.saturating_add(now.saturating_sub(e.deadline)))
                    });
                    (ns, reading)
                }
                None => (e.deadline, now),
            };
            let fire = Fire {
                deadline,
                now: at,
                overruns: e.overruns,
                shard: i,
            };
            let timer = Timer::runtime_ref(e.value, Arc::<Shared>::clone(self));
            match (timer.core.exec, &self.pool) {
                (Exec::Deferred, Some(pool)) => {
                    self.clock.busy(true);
                    match pool.submit(Deferred { timer, fire }) {
                        Ok(()) => {}
                        // The runtime is going away and the pool takes no more work: the
                        // firing is dropped unrun, but no longer counts as running.
                        Err(Refused::ShutDown(job)) => self.settle_deferred(job, false),
                        // The queue could not grow: the callback runs here, after the ones
                        // before it, rather than being lost or aborting the process.
                        Err(Refused::NoMemory(job)) => {
                            Counters::bump(&shard.counters.deferred_inline);
                            self.settle_deferred(job, true);
                        }
                    }
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

    /// A worker's job: runs a deferred callback.
    pub(crate) fn run_deferred(&self, job: Deferred) {
        self.settle_deferred(job, true);
    }

    /// Runs a deferred callback (`run`) or drops it unrun, and lets go of its timer.
    fn settle_deferred(&self, job: Deferred, run: bool) {
        let Deferred { timer, fire } = job;
        if run {
            runs::begin(timer.core.id());
            self.run_callback(&timer, &fire);
        } else {
            self.finish_run(&timer);
        }
        self.release(timer, fire.shard);
        self.clock.busy(false);
    }

    /// Runs one callback whose run was registered in the timer's state, then marks it done.
    fn run_callback(&self, timer: &Timer, fire: &Fire) {
        if timer.core.abandoned() {
            // Every handle was dropped after this firing was taken for running: the drop
            // cancelled the timer, so its callback does not run (as a `stop` before the
            // expiry would have prevented it).
            self.finish_run(timer);
            return;
        }
        if timer.core.exec == Exec::Deferred && self.pool.is_none() {
            runs::begin(timer.core.id());
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
        runs::end(timer.core.id());
        let mut state = sync::lock(&timer.core.state);
        state.running = state.running.saturating_sub(1);
        // Notify only a waiting `drain`: `notify_all` is a futex system call even with no
        // waiter, and after every callback it delays the next callback of the same batch (100
        // direct timers due at once fired over 40 µs with it, 15 µs without).
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

    /// Starts the driver thread of shard `i`, with its buffers for steps of at most `budget`
    /// expiries reserved first, spinning `spin` before each wake-up ([`Config::spin`](crate::Config::spin)).
    pub(crate) fn start_driver(
        self: &Arc<Self>,
        i: usize,
        budget: u64,
        spin: Duration,
    ) -> Result<std::thread::JoinHandle<()>, Error> {
        let mut scratch = Scratch::reserved(budget)?;
        let shared = Arc::clone(self);
        let driver = std::thread::Builder::new()
            .name(format!("callwheel-rt-driver-{i}"))
            .spawn(move || {
                runs::adopt(std::mem::take(&mut scratch.runs));
                runs::mark_driver(shared.owner_id());
                let waiting = Arc::clone(&shared);
                let mut driver = ShardDriver { shared, i, scratch };
                DriveLoop::new().on_thread(&mut driver, &*waiting.shards[i].waiter, spin);
            })?;
        Ok(driver)
    }
}

/// A driver thread's view of its shard for the loop ([`DriveLoop`]): a turn is a step, and
/// what the loop does is counted in the shard's statistics.
struct ShardDriver {
    shared: Arc<Shared>,
    i: usize,
    scratch: Scratch,
}

impl Turn for ShardDriver {
    fn turn(&mut self, late: Option<u64>) -> Next {
        if self.stopping() {
            return Next::Exit;
        }
        self.scratch.late = late;
        match self.shared.step_with(self.i, &mut self.scratch).sleep {
            None => Next::Again,
            Some(until) => Next::Sleep(until),
        }
    }

    fn clock(&self) -> &dyn Clock {
        &*self.shared.clock
    }

    fn stopping(&self) -> bool {
        self.shared.shutdown.begun()
    }

    fn count(&mut self, event: Event) {
        let c = &self.shared.shards[self.i].counters;
        match event {
            Event::Spun { reached, spent } => {
                c.spin_ns
                    .fetch_add(crate::saturating_ns(spent), Ordering::Relaxed);
                if reached {
                    Counters::bump(&c.spins);
                }
            }
            Event::Waited(Waited::Failed) => Counters::bump(&c.wait_errors),
            Event::Waited(Waited::Gone) => {}
            // The runtime's drivers ask for no warm-up.
            Event::WarmedUp(_) => {}
            Event::Waited(how) => {
                Counters::bump(&c.wakeups);
                match how {
                    Waited::Early => Counters::bump(&c.early_wakeups),
                    // The next step re-reads the clock: deadlines now passed fire, others are
                    // re-planned against the new time.
                    Waited::ClockSet => {
                        Counters::bump(&c.clock_sets);
                        self.shared.clock_sets.heard_one();
                    }
                    _ => {}
                }
            }
        }
    }
}
