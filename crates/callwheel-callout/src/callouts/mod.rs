//! The callout table: `ticks`, `softticks`, `hardclock`, `softclock`, and the historical
//! `timeout`/`untimeout` and `setcallout`/`unsetcallout` interfaces, on any [`Backing`] scheme.

use core::cmp::Reverse;
use core::hash::Hash;
use std::collections::{BinaryHeap, VecDeque};

use callwheel::{Budget, Handle, Tick};

use crate::backing::Backing;
use crate::moves::Moving;
use crate::pool::{Kind, Pool, Sched};
use crate::Error;

mod bsd;
mod check;
mod records;

/// Costello & Varghese's bound on the work `softclock` does between points where other calls
/// may enter (in a threaded table: between releases of the lock).
pub const MAX_SOFTCLOCK_STEPS: u64 = 100;

/// The most handlers one stretch of `softclock` work takes from the scheme at a time: the
/// batch they wait in is allocated once, when the table is made, so running handlers never
/// allocates (and never fails for want of memory). A larger `max_softclock_steps` is cut to
/// this per stretch.
const MAX_BATCH: u64 = 1024;

/// How a table is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Callout records allocated up front (the kernel's `calloutsize`).
    pub calloutsize: usize,
    /// `true`: never allocate more records than `calloutsize`; a call that needs one more
    /// fails with [`Error::PoolExhausted`]. `false`: the pool doubles when it runs out.
    pub fixed: bool,
    /// Ticks per second (the kernel's `hz`): converts `callout_reset_sbt_on`'s times to ticks.
    pub hz: u32,
    /// Steps of the backing scheme per stretch of `softclock` work ([`MAX_SOFTCLOCK_STEPS`]).
    pub max_softclock_steps: u64,
    /// FreeBSD's `kern.timecounter.alldeviation`: the precision, in percent of the interval,
    /// that a callout armed by a relative time gets at least (`timeout`, `setcallout`,
    /// `callout_reset`, and `callout_reset_sbt_on` without `C_PREL` or `C_ABSOLUTE`), as
    /// calloutng derives one for its old calls ([`deviation_shift`](crate::flags::deviation_shift):
    /// 5 %, the default, allows a sixteenth). 0 arms them exactly, as 4.4BSD and NetBSD did:
    /// the reproductions of Costello & Varghese's tables use 0.
    pub deviation_percent: u32,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            calloutsize: 256,
            fixed: false,
            hz: 1000,
            max_softclock_steps: MAX_SOFTCLOCK_STEPS,
            deviation_percent: crate::flags::DEFAULT_DEVIATION_PERCENT,
        }
    }
}

/// Counters, cheap enough to leave on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Calls to `hardclock`.
    pub hardclocks: u64,
    /// `hardclock` calls that found nothing due and advanced `softticks` themselves (the
    /// paper's fast path: no software interrupt scheduled).
    pub fast_path: u64,
    /// Handlers handed out to run (by `softclock` and by `hardclock_with`).
    pub fired: u64,
    /// Of those, direct-execution handlers run from `hardclock_with`.
    pub direct: u64,
    /// Times `softclock` used up its step budget without finding a handler to run, and let
    /// other calls in before going on.
    pub yields: u64,
    /// Steps the backing scheme took in `softclock` (ticks moved over and timers examined,
    /// moved or fired): the work that catching up cost.
    pub steps: u64,
    /// Times the backing scheme was rebuilt larger because the pending callouts outgrew it
    /// ([`Backing::load_limit`]).
    pub resizes: u64,
    /// Calls to [`Callouts::callout_process`]: the tickless mode's event-timer interrupts.
    pub events: u64,
    /// Entries that setting and cancelling callouts traversed to find a place or a callout
    /// (Costello & Varghese's Table II counts them as `t` and `h`). On the old `calltodo`
    /// ([`Backing::SEARCHED_BY_UNTIMEOUT`]): the entries each insert into the list (`timeout`,
    /// `setcallout`, ...) skipped before its place, and those each `untimeout` skipped before
    /// its match (every entry on a miss). Through the hash: the chain entries each
    /// `untimeout` compared. Cancelling by handle: none.
    pub traversed: u64,
}

/// A handler ready to run, taken out of the table.
#[derive(Debug)]
pub(crate) struct Ready<C> {
    pub(crate) call: C,
    /// A persistent callout's record and generation: its `running` flag is cleared by
    /// [`Callouts::finish`]. One-shot records are already free.
    pub(crate) persistent: Option<(u32, u32)>,
}

/// What the next piece of `softclock` work is.
#[derive(Debug)]
pub(crate) enum Next<C> {
    /// Run this handler, then call [`Callouts::finish`].
    Run(Ready<C>),
    /// The step budget ran out: let other calls in, then ask again.
    Yield,
    /// Caught up: nothing is due.
    Idle,
}

/// A callout table: the BSD kernel's callout facility, generic over the timer scheme `S` and
/// the callback `C`.
///
/// `C` is whatever the caller runs: in the kernel a (function, argument) pair, here any `Copy +
/// Eq + Hash` value — `timeout`/`untimeout` hash and compare it, the table never calls it.
/// `softclock` hands each due `C` to the caller's runner. If `C` holds Rust `fn` pointers, note
/// that Rust does not promise one address per function (codegen units may duplicate it), so
/// `untimeout` could miss a callout set through another copy; name handlers by an enum or an
/// id, or take the pointer from one place. C function pointers do not have this problem.
///
/// A record is reused with a new generation each time it is freed; one whose generation would
/// wrap (after 2^32 - 1 reuses) is retired for good, so a fixed pool can, after billions of
/// reuses of one record, hold one record fewer than `calloutsize`.
///
/// Time moves only by [`Callouts::hardclock`], one tick per call. A timeout of `n` ticks set at
/// tick `t` runs in the first `softclock` after the `hardclock` that reaches tick `t + n`;
/// `n <= 0` counts as 1, as in BSD.
///
/// ```
/// use callwheel_schemes::hashed_wheel::HashedWheel;
/// use callwheel_callout::{Callouts, Config};
///
/// // Scheme 6 under the callout interface: Costello & Varghese's callwheel.
/// let mut table = Callouts::with_config(HashedWheel::new(8)?, Config::default())?;
/// table.timeout(("retransmit", 7), 3)?;
/// let handle = table.setcallout(("keepalive", 1), 2)?;
/// assert_eq!(table.unsetcallout(handle), Ok(true));
///
/// let mut ran = Vec::new();
/// for _ in 0..3 {
///     if table.hardclock() {
///         table.softclock(|_, call| ran.push(call));
///     }
/// }
/// assert_eq!(ran, [("retransmit", 7)]);
/// assert!(!table.untimeout(("retransmit", 7))); // already ran
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Callouts<S, C> {
    scheme: S,
    pub(crate) pool: Pool<C>,
    /// Records the scheme has fired, in firing order, not yet handed out. Entries whose
    /// record was cancelled meanwhile (no longer `Due`) are skipped. Its capacity is fixed
    /// when the table is made; a scheme advance never fires more than it holds.
    batch: VecDeque<u32>,
    /// `C_DIRECT_EXEC` callouts by (deadline, sequence), earliest on top. A cancelled one
    /// stays until it reaches the top or the heap is compacted; an entry counts only while
    /// its record is still `Direct` with the same key.
    direct: BinaryHeap<Reverse<(Tick, u64, u32)>>,
    /// Records armed in `direct`.
    direct_live: usize,
    /// Orders armings: direct ones among themselves, scheme ones with equal deadlines.
    seq: u64,
    /// `callout_async_drain` calls arranged for running handlers: (record, generation, the
    /// call to hand out once the handler returns).
    pub(crate) drains: Vec<(u32, u32, C)>,
    /// Drain calls whose handler has returned, to be handed out next (before any handler).
    /// Its capacity always covers every arranged drain as well, so moving one here when a
    /// handler returns never allocates.
    drains_ready: VecDeque<C>,
    /// Moves to another table waiting for a running handler to return.
    pub(crate) moves: Vec<Moving<C>>,
    /// Pending callouts in the scheme above which it is rebuilt larger.
    resize_at: usize,
    ticks: Tick,
    softticks: Tick,
    pub(crate) hz: u32,
    /// The default precision's shift for FreeBSD's calls ([`Config::deviation_percent`]).
    pub(crate) deviation: Option<u32>,
    max_steps: u64,
    stats: Stats,
}

impl<S: Backing, C: Copy + Eq + Hash> Callouts<S, C> {
    /// A table on `scheme` with the default [`Config`] (a growing pool of 256 records, 1000 Hz).
    pub fn new(scheme: S) -> Callouts<S, C> {
        Callouts::with_config(scheme, Config::default())
            .expect("the default configuration is valid")
    }

    /// A table on `scheme` (which should be empty, its clock at 0).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for `hz == 0`, `max_softclock_steps == 0`, a fixed pool of 0 records,
    /// a `calloutsize` above [`MAX_CALLOUTSIZE`](crate::MAX_CALLOUTSIZE), or a non-empty
    /// scheme; [`Error::NoMemory`] when the records cannot be reserved.
    pub fn with_config(scheme: S, config: Config) -> Result<Callouts<S, C>, Error> {
        if config.hz == 0 {
            return Err(Error::Config {
                reason: "hz must be at least 1",
            });
        }
        if config.max_softclock_steps == 0 {
            return Err(Error::Config {
                reason: "max_softclock_steps must be at least 1",
            });
        }
        if !scheme.is_empty() {
            return Err(Error::Config {
                reason: "the backing scheme must start empty",
            });
        }
        let mut batch = VecDeque::new();
        batch
            .try_reserve_exact(config.max_softclock_steps.min(MAX_BATCH) as usize)
            .map_err(|_| Error::NoMemory)?;
        Ok(Callouts {
            ticks: scheme.now(),
            softticks: scheme.now(),
            resize_at: scheme.load_limit(),
            scheme,
            pool: Pool::new(config.calloutsize, config.fixed)?,
            batch,
            direct: BinaryHeap::new(),
            direct_live: 0,
            seq: 0,
            drains: Vec::new(),
            drains_ready: VecDeque::new(),
            moves: Vec::new(),
            hz: config.hz,
            deviation: crate::flags::deviation_shift(config.deviation_percent),
            max_steps: config.max_softclock_steps,
            stats: Stats::default(),
        })
    }

    /// Sets [`Config::deviation_percent`] for the callouts armed from now on (those pending
    /// keep their windows); above 100 counts as 100.
    pub fn set_deviation_percent(&mut self, percent: u32) {
        self.deviation = crate::flags::deviation_shift(percent);
    }

    /// `ticks`: the current tick, advanced by `hardclock`.
    pub fn ticks(&self) -> Tick {
        self.ticks
    }

    /// `softticks`: the tick `softclock` has processed up to. Equal to `ticks` when caught up.
    pub fn softticks(&self) -> Tick {
        self.softticks
    }

    /// Callouts armed and not yet handed to a runner (persistent idle ones not counted; one
    /// whose move to another CPU's table waits for its handler to return is counted).
    pub fn pending(&self) -> usize {
        self.scheme.len() + self.direct_live + self.due_in_batch() + self.moves.len()
    }

    /// The records of the batch still due (the rest were stopped while it waited).
    fn due_in_batch(&self) -> usize {
        self.batch
            .iter()
            .filter(|&&i| {
                self.pool
                    .records
                    .get(i)
                    .is_some_and(|r| r.sched == Sched::Due)
            })
            .count()
    }

    /// Records in use (armed one-shot callouts, and every initialised persistent one).
    pub fn records_in_use(&self) -> usize {
        self.pool.live()
    }

    /// Records allocated (in use or free).
    pub fn records_allocated(&self) -> usize {
        self.pool.capacity()
    }

    /// The counters.
    pub fn stats(&self) -> Stats {
        let mut stats = self.stats;
        stats.traversed += self.scheme.entries_skipped();
        stats
    }

    /// The backing scheme, for inspection.
    pub fn scheme(&self) -> &S {
        &self.scheme
    }

    /// Bytes held by the table: records, hash buckets and the backing scheme.
    pub fn memory_bytes(&self) -> usize {
        self.pool.memory_bytes()
            + self.scheme.memory_bytes()
            + self.batch.capacity() * core::mem::size_of::<u32>()
            + self.direct.capacity() * core::mem::size_of::<Reverse<(Tick, u64, u32)>>()
            + self.drains.capacity() * core::mem::size_of::<(u32, u32, C)>()
            + self.drains_ready.capacity() * core::mem::size_of::<C>()
            + self.moves.capacity() * core::mem::size_of::<Moving<C>>()
    }

    /// The clock interrupt: advances `ticks` by one, with the backing's own interrupt work
    /// ([`Backing::hardclock`]: none but on 4.4BSD's `calltodo`, whose walk over the callouts
    /// due but not yet run Table II counts).
    ///
    /// Returns `true` when `softclock` may have work (the kernel's `setsoftclock()`; on a
    /// hashed wheel also for a bucket of later rotations only, as 4.4BSD's). When the next
    /// tick holds nothing and `softclock` is caught up, `hardclock` advances `softticks` itself
    /// and returns `false`: an idle system never schedules the software interrupt.
    pub fn hardclock(&mut self) -> bool {
        self.stats.hardclocks += 1;
        let Some(next) = self.ticks.checked_add(1) else {
            // The end of time: the clock stops; everything due has its tick already.
            return self.softticks < self.ticks
                || !self.batch.is_empty()
                || !self.drains_ready.is_empty();
        };
        self.ticks = next;
        // The scheme's own interrupt work first: it runs whatever else is due.
        let scheme_due = self.scheme.hardclock(next);
        let nothing_due = self.batch.is_empty()
            && self.drains_ready.is_empty()
            && !scheme_due
            && self
                .direct_front()
                .is_none_or(|(deadline, _)| deadline > next);
        if self.softticks + 1 == next && nothing_due {
            self.softticks = next;
            self.stats.fast_path += 1;
            false
        } else {
            true
        }
    }

    /// The tickless mode's query, calloutng's event window: `Some((first, last))` where
    /// `first` is the earliest tick at which a pending callout runs (its deadline, or for a
    /// callout with a window its firing instant, [`Backing::start_within`]) and `last` the
    /// earliest end of a window (the production wheel's; the other backings answer their
    /// instant for both). A one-shot event timer armed anywhere in `[first, last]`, then
    /// [`Callouts::callout_process`] at the time it fires, runs every callout whose instant it
    /// reaches inside its window, so callouts with overlapping windows share one interrupt;
    /// arming at `last` coalesces the most. Both are the table's ticks (`hz` of them a second:
    /// with `hz` = 10^9 a tick is a nanosecond). `(ticks, ticks)` when work is due now; `None`
    /// when nothing is pending. Never later than any window's end; after stops, and on a
    /// coarse scheme (a hierarchy's slot boundary), it may be earlier than needed.
    pub fn next_event(&mut self) -> Option<(Tick, Tick)> {
        if !self.drains_ready.is_empty()
            || self.batch.iter().any(|&i| {
                self.pool
                    .records
                    .get(i)
                    .is_some_and(|r| r.sched == Sched::Due)
            })
        {
            return Some((self.ticks, self.ticks));
        }
        let direct = self.direct_front().map(|(deadline, _)| deadline);
        let first = match (self.scheme.earliest(), direct) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }?;
        let last = match (self.scheme.next_wakeup(), direct) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).unwrap_or(first),
        };
        // A callout due at a tick already passed (its interrupt came, its softclock has not)
        // is due now: never name a tick in the past.
        let first = first.max(self.ticks);
        Some((first, last.max(first)))
    }

    /// The tickless mode's interrupt, calloutng's `callout_process(now)`: moves `ticks` to `now` in
    /// one step (any number of ticks; a `now` at or before `ticks` moves nothing), as the one-shot
    /// event timer armed from [`Callouts::next_event`] fires. Returns `true` when
    /// [`Callouts::softclock`] may have work (due direct callouts run from
    /// [`Callouts::process_with`] or at the start of that `softclock`): always when a callout is
    /// due, and also when the scheme's cheap bound ([`callwheel::Timers::next_expiry`]) is at or
    /// before `now` with nothing due (a hashed wheel's bucket of later rotations only; the
    /// `softclock` then runs nothing). When it returns `false`, `softticks` follows `ticks` here
    /// and no software interrupt is needed.
    ///
    /// The tick-driven mode ([`Callouts::hardclock`] once per tick) stays for the
    /// reproductions of Costello and Varghese; the two may be mixed (a `hardclock` is a
    /// `callout_process(ticks + 1)` that is counted apart).
    pub fn callout_process(&mut self, now: Tick) -> bool {
        self.stats.events += 1;
        let target = now.max(self.ticks);
        self.ticks = target;
        let nothing_due = self.batch.is_empty()
            && self.drains_ready.is_empty()
            // A bound that is never later than the earliest deadline, found in O(1) steps (the
            // hashed backings' exact answer may take a pass over every callout): a bound at or
            // before `target` with nothing due only costs a `softclock` that runs nothing.
            && self.scheme.next_expiry().is_none_or(|e| e > target)
            && self
                .direct_front()
                .is_none_or(|(deadline, _)| deadline > target);
        if nothing_due {
            // Nothing is due up to `target` (a scheme with work left over from a budgeted
            // advance answers its cursor): no `softclock` is needed. The scheme's clock is
            // brought along (a few steps, firing nothing), so that its range and its searches
            // count from the table's tick rather than from wherever it last stopped.
            self.softticks = target;
            self.advance_scheme();
            return !self.batch.is_empty();
        }
        true
    }

    /// [`Callouts::callout_process`], then runs every due `C_DIRECT_EXEC` callout through
    /// `run` right away (calloutng runs them from the event-timer interrupt itself).
    pub fn process_with<F>(&mut self, now: Tick, mut run: F) -> bool
    where
        F: FnMut(&mut Self, C),
    {
        let needed = self.callout_process(now);
        while let Some(ready) = self.pop_immediate() {
            self.run_ready(ready, &mut run);
        }
        needed
    }

    /// [`Callouts::hardclock`], then runs every due `C_DIRECT_EXEC` callout through `run` right
    /// away, before any deferred handler (calloutng's direct execution from the interrupt).
    /// Without it, direct callouts run at the start of the next `softclock`.
    pub fn hardclock_with<F>(&mut self, mut run: F) -> bool
    where
        F: FnMut(&mut Self, C),
    {
        let needed = self.hardclock();
        while let Some(ready) = self.pop_immediate() {
            self.run_ready(ready, &mut run);
        }
        needed
    }

    /// The software interrupt: catches `softticks` up with `ticks`, handing every due callout to
    /// `run` in expiry order (set order among equal expiries, where the scheme is FIFO), the
    /// `C_DIRECT_EXEC` ones that [`Callouts::hardclock`] left for it first, as they would have
    /// run in the interrupt.
    ///
    /// `run` gets the table, so a handler may set or cancel any callout, the next one due
    /// included; a cancelled callout that has not yet been handed out never runs. The scheme is
    /// advanced at most `max_softclock_steps` steps at a time. The drain call of a
    /// [`Callouts::callout_async_drain`] goes to `run` too, right after its handler returns.
    /// Returns how many calls `run` got.
    ///
    /// If `run` panics, the panic propagates to the caller with the table consistent: the
    /// handler's callout is no longer marked running, and the callouts due after it stay
    /// queued for the next `softclock`.
    pub fn softclock<F>(&mut self, mut run: F) -> usize
    where
        F: FnMut(&mut Self, C),
    {
        let mut ran = 0;
        loop {
            match self.next_due() {
                Next::Run(ready) => {
                    self.run_ready(ready, &mut run);
                    ran += 1;
                }
                Next::Yield => {}
                Next::Idle => return ran,
            }
        }
    }

    /// Runs one handed-out handler, marking it finished on return or unwind.
    fn run_ready<F>(&mut self, ready: Ready<C>, run: &mut F)
    where
        F: FnMut(&mut Self, C),
    {
        /// Clears the running mark of a persistent callout when dropped, so a handler that
        /// panics does not leave its callout "running" (undrainable, unfreeable) for ever.
        struct Finish<'a, S: Backing, C: Copy + Eq + Hash> {
            table: &'a mut Callouts<S, C>,
            persistent: Option<(u32, u32)>,
        }
        impl<S: Backing, C: Copy + Eq + Hash> Drop for Finish<'_, S, C> {
            fn drop(&mut self) {
                self.table.finish(Ready {
                    call: (),
                    persistent: self.persistent,
                });
            }
        }
        let call = ready.call;
        let guard = Finish {
            table: self,
            persistent: ready.persistent,
        };
        run(&mut *guard.table, call);
        drop(guard);
    }

    /// One bounded piece of `softclock`: at most one scheme advance of `max_softclock_steps`.
    /// Ready drain calls come first, then due direct-execution callouts.
    pub(crate) fn next_due(&mut self) -> Next<C> {
        if let Some(call) = self.drains_ready.pop_front() {
            return Next::Run(Ready {
                call,
                persistent: None,
            });
        }
        if let Some(ready) = self.pop_direct() {
            return Next::Run(ready);
        }
        loop {
            while let Some(idx) = self.batch.pop_front() {
                if self
                    .pool
                    .records
                    .get(idx)
                    .is_some_and(|r| r.sched == Sched::Due)
                {
                    return Next::Run(self.take_ready(idx));
                }
            }
            if self.softticks >= self.ticks {
                return Next::Idle;
            }
            let complete = self.advance_scheme();
            if complete {
                self.softticks = self.ticks;
            } else {
                // The scheme may stop inside its cursor's tick, so only the tick before it is
                // known to be finished.
                let finished = self.scheme.now().saturating_sub(1).min(self.ticks - 1);
                self.softticks = self.softticks.max(finished);
                if self.batch.is_empty() {
                    self.stats.yields += 1;
                    return Next::Yield;
                }
            }
        }
    }

    /// One scheme advance towards `ticks`, of at most `max_softclock_steps` steps, queueing
    /// what fires in the batch; whether it reached `ticks`.
    fn advance_scheme(&mut self) -> bool {
        let Callouts {
            scheme,
            pool,
            batch,
            ticks,
            max_steps,
            ..
        } = self;
        // Every step fires at most one timer: a budget no larger than the batch's room
        // never makes it allocate.
        let room = (batch.capacity() - batch.len()).max(1) as u64;
        let budget = Budget::steps((*max_steps).min(room));
        let progress = scheme.advance(*ticks, budget, |_, expired| {
            pool.records[expired.value].sched = Sched::Due;
            batch.push_back(expired.value);
        });
        self.stats.steps += progress.steps;
        progress.complete
    }

    /// The live record of kind `kind` that `handle` names.
    pub(crate) fn resolve(&self, handle: Handle, kind: Kind) -> Result<u32, Error> {
        let idx = self.pool.resolve(handle).ok_or(Error::StaleHandle)?;
        if self.pool.records[idx].kind == kind {
            Ok(idx)
        } else {
            Err(Error::WrongKind)
        }
    }
}
