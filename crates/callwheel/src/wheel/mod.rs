//! The production timing wheel: hierarchical, bitmap-indexed, tickless, with a tolerance per
//! timer and a wake-up query that coalesces.
//!
//! # Geometry
//!
//! Eleven levels of 64 slots cover the whole `u64` range in the caller's unit (nanoseconds by
//! default, but the wheel never reads a clock):
//!
//! | level | slot width | level span  | at 1 ns per unit: width / span |
//! |-------|------------|-------------|--------------------------------|
//! | 0     | 1          | 64          | 1 ns / 64 ns                   |
//! | 1     | 2^6        | 2^12        | 64 ns / 4.1 µs                 |
//! | 2     | 2^12       | 2^18        | 4.1 µs / 262 µs                |
//! | 3     | 2^18       | 2^24        | 262 µs / 16.8 ms               |
//! | 4     | 2^24       | 2^30        | 16.8 ms / 1.07 s               |
//! | 5     | 2^30       | 2^36        | 1.07 s / 68.7 s                |
//! | 6     | 2^36       | 2^42        | 68.7 s / 73.3 min              |
//! | 7     | 2^42       | 2^48        | 73.3 min / 3.26 days           |
//! | 8     | 2^48       | 2^54        | 3.26 days / 208 days           |
//! | 9     | 2^54       | 2^60        | 208 days / 36.5 years          |
//! | 10    | 2^60       | 2^64 (16 slots used) | 36.5 years / 585 years |
//!
//! A timer sits on the level of the highest 6-bit digit in which its deadline differs from the
//! wheel's time (Varghese & Lauck's Figure 7 in base 64). A slot is processed when the wheel's
//! time reaches its start: its timers move down (cascade) or, on level 0, fire. Placing by digit
//! is what keeps equal deadlines in start order: a later start can only land on a level whose slot
//! is processed after the earlier timer has cascaded into it.
//!
//! Placing by digit also orders the whole structure in time: every timer of level `l` is due
//! before every timer of level `l + 1`, and within a level the slots are in time order with no
//! wrap-around (a level only holds digits above the wheel's own). So the next slot with work is
//! the lowest occupied slot of the lowest occupied level: two bit scans, one over a word that
//! marks the non-empty levels and one over that level's occupancy word (the "busy" marks of V&L
//! Appendix A). `advance` jumps any empty stretch in O(1) per slot it processes.
//!
//! That slot need not be processed at its own start: nothing else is due before it ends, and
//! nothing in it before its smallest deadline. The wheel processes it as late as the start of
//! that deadline's level-0 window (or the time asked for, if earlier), so a sparse timer moves
//! down in one cascade instead of one per level, and a jump from one deadline to the next
//! costs two slot visits whatever the gap.
//!
//! # Tolerance and coalesced wake-ups
//!
//! A timer has a window `[deadline, deadline + tolerance]` (calloutng's precision). An exact
//! timer is keyed by its deadline; a timer with a window by its *firing instant*
//! ([`firing_instant`]): the first multiple of the coarsest slot width (64^l ticks) in the
//! first eighth of its window, or the deadline when that part holds no multiple of 64. So
//! `advance(now)` fires exactly the timers whose firing instant is at or before `now`, in the
//! order of those instants. [`Wheel::next_wakeup`] returns the earliest *window end* among the
//! pending timers: a driver that sleeps until then and calls `advance` fires every timer whose
//! instant has come, never one outside its window.
//!
//! Keying by that instant is what saves the cascades. An instant that is a multiple of 64^l has
//! zero digits below level `l`: placed on level `l` (as it is once the wheel's time is in that
//! level's rotation), its slot starts exactly at the instant, and processing the slot fires the
//! timer where it stands. A tolerant timer moves down only to its instant's level (not at all when
//! it starts within that level's rotation), where an exact one moves on down to level 0 (in W3 at a
//! 5 % tolerance: 0.93 moves per timer against 1.93). Linux's wheel (4.8 on) gets the same saving
//! by letting every timer on a coarse level fire up to an eighth of its distance late, whatever it
//! asked for; here each timer states its own window and only a window that holds a coarse boundary
//! uses it.
//!
//! The price is in coalescing: a wake-up at the earliest window end serves the windows whose
//! instant has come, not every window that contains it, so the wake-ups can exceed the fewest
//! possible ([`stabbing_optimum`](crate::stabbing_optimum)). Using only a window's first eighth
//! keeps that within a few per cent (2,000 random sets pooled: 1.017 times the optimum, where
//! the whole window gives 1.114; 10^5 windows of 5 %: 1.02 against 1.20); exact timers and
//! windows narrower than 8 ticks fire at their deadlines, with exactly the optimum.
//!
//! Each slot remembers the smallest window end (and firing instant) of the timers placed in it since
//! it was last emptied. The query visits the occupied slots in time order and stops at the first
//! one that starts at or after the best end found so far: every window there ends later still.
//! With exact timers that is the first slot; with tolerances it is the slots a window's width
//! reaches. Stopping a timer does not raise a slot's minimum (that would cost a scan): the answer
//! may then be early, never late, and the slot's minimum is made exact again when it empties.
//!
//! # Storage
//!
//! Timers live in a slab of entries (deadline, value, the window's width past the deadline in
//! 31 bits, generation: 16 bytes for `Wheel<()>`, 24 with a `u64` value; no `Option` around the
//! value, the entry's live/free variants make it unnecessary; a width of 2^30 ticks or more is
//! kept to 25 significant bits, rounded down: [`window_end`]), and their list links in a
//! parallel array of 8-byte (prev, next) pairs (`links.rs`). The links array starts with one sentinel per list (704
//! slots, the overdue queue, the deferred list), so unlinking needs no branch on list ends and
//! no record of which list a timer is on: a list became empty exactly when the unlinked timer's
//! neighbours are both its sentinel, whose index names the list. A timer touches only its own
//! entry, its own links and its neighbours' links. The links keep an invariant of their own
//! (every index they store names one of their entries) so that neighbours are read and written
//! without bounds checks: one of the crate's two places with `unsafe` code.
//!
//! Processing a slot walks its list and asks the processor for each next timer's entry as soon
//! as the list names it (a prefetch hint, the other `unsafe` call, in `prefetch.rs`), so that
//! cache miss overlaps the work on the current timer.
//!
//! Start and stop are the hot path (W1: a cancel + start pair), so what is optional stays off
//! it: growing the slab and dropping a periodic timer's schedule are out-of-line calls, the
//! number of pending timers is derived from the counters rather than kept, and a stop frees the
//! entry with the one match that checked its handle.
//!
//! # Costs
//!
//! | operation | cost |
//! |---|---|
//! | start, stop | O(1): a digit, a list append or unlink, a bit |
//! | reset | O(1); no relinking when the timer stays the last one of the same slot |
//! | advance | O(1) per slot processed + O(1) per cascade step and per fired timer; each timer cascades at most 10 times, in practice 1–3 |
//! | next_expiry | O(1) |
//! | next_wakeup | O(1) with exact timers; with tolerances, the occupied slots that start before the earliest window end |
//!
//! The wheel implements [`Scheme`], so the conformance suite of the scheme family
//! runs on it unchanged; periodic timers, `next_wakeup`, `clear`, `poll_expired` and the statistics are its own methods.
//! It runs its own loop rather than the scheme family's shared one (`callwheel-schemes`'s
//! `clock.rs`) with the same
//! semantics (overdue queue and drain epochs, exact resumption of a budgeted call), specialised
//! so that the common paths are a handful of instructions.
//!
//! # Files
//!
//! | file | concept |
//! |---|---|
//! | `mod.rs` | the wheel's state (its parts, the clock, the advance's phase), its public operations, the `Timers` and `Scheme` impls |
//! | `geometry.rs` | levels, slots, list numbering, digit arithmetic |
//! | `storage.rs` | `Storage`: the slab, its free list and generations, and the links; its own check |
//! | `levels.rs` | `Levels`: the occupancy words, the level word and the slots' minimums; its own check |
//! | `placing.rs` | where a timer goes and how it leaves: the list operations that keep the storage, the levels and the drain's walk in step |
//! | `links.rs` | the lists' links: sentinels, append, unlink, pop, without bounds checks on neighbours |
//! | `advance.rs` | the advance loop: drains, slot jumps, cascades, firing, periodic re-arm |
//! | `queries.rs` | the wake-up instant, the earliest deadline, what a handle names |
//! | `check.rs` | `check_invariants`: the parts' own checks, then every list against the parts by brute force |
//! | `windows.rs` | how a window's end is kept in 31 bits of the entry |
//! | `periodic.rs`, `schedules.rs`, `prefetch.rs` | the missed-period rule; the periodic timers' schedules (a fallibly growing hash table); the prefetch hint |

mod advance;
mod check;
mod clear;
mod geometry;
mod levels;
mod links;
mod periodic;
mod placing;
mod prefetch;
mod queries;
mod schedules;
mod storage;
mod windows;

pub use periodic::Missed;
use periodic::Periodic;
use schedules::Schedules;

use geometry::{level_for, list_for, BASE, MAX_TIMERS, NIL};
use levels::Levels;
use storage::Storage;
use windows::Window;
pub use windows::{firing_instant, window_end};

use crate::advance::{AdvanceState, Phase};
use crate::handle::Handle;
use crate::time::Tick;
use crate::timers::{Budget, Error, Expired, Progress, Scheme, Timers};

/// Counters kept as the wheel works; cheap enough to leave on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WheelStats {
    /// Timers started (resets not included).
    pub started: u64,
    /// Timers stopped before they fired.
    pub stopped: u64,
    /// Timers reset to a new deadline.
    pub reset: u64,
    /// Timers fired.
    pub fired: u64,
    /// Moves of a timer from one level down to a lower one.
    pub cascades: u64,
    /// `advance` calls that asked for a time earlier than the wheel's (ignored, never a panic).
    pub clamped: u64,
    /// The largest lateness seen: the wheel's time at firing minus the deadline.
    pub max_lateness: Tick,
}

/// The production timing wheel: eleven levels of 64 slots over the whole `u64` range, one
/// occupancy bitmap per level, a tolerance window per timer and a wake-up query that coalesces.
/// The geometry, the storage and the reasoning behind them are laid out at the top of its source
/// (`src/wheel/mod.rs`); the costs:
///
/// | operation | cost |
/// |---|---|
/// | start, stop, reset, `deadline`, `contains` | O(1) |
/// | advance, `poll_expired` | O(1) per slot processed, per cascade step and per fired timer |
/// | `next_expiry` | O(1) |
/// | `next_wakeup` | O(1) with exact timers; with tolerances, the occupied slots that start before the earliest window end |
/// | `clear` | O(slab size) |
///
/// Its operations are the family's [`Timers`] and [`Scheme`] traits (`start_with` and `reset`
/// there honour the tolerance), plus periodic timers, the wake-up query, [`Wheel::clear`], the
/// pull-style [`Wheel::poll_expired`] and the statistics here.
///
/// ```
/// use callwheel::Wheel;
/// use callwheel::{Budget, Scheme, Timers};
///
/// let mut wheel = Wheel::new();
/// // Two timeouts a driver may coalesce: [1000, 1100] and [1050, 1050].
/// wheel.start_with(1_000, 100, "idle timeout")?;
/// wheel.start(1_050, "retransmit")?;
/// assert_eq!(wheel.next_wakeup(), Some(1_050)); // one wake-up serves both windows
/// let mut fired = Vec::new();
/// let _ = wheel.advance(1_050, Budget::UNLIMITED, |_, e| fired.push(e.value));
/// assert_eq!(fired, ["idle timeout", "retransmit"]);
/// # Ok::<(), callwheel::Error>(())
/// ```
#[derive(Debug)]
pub struct Wheel<T> {
    /// The timers and the links of their lists.
    storage: Storage<T>,
    /// Which slots hold timers, and their minimums.
    levels: Levels,
    /// Timers gone by firing (one-shot timers and the last period of periodic ones). The
    /// number pending is `started - stopped - finished`: counting it apart would cost every
    /// start and stop one more store.
    finished: u64,
    /// The last tick processed (Costello's `softticks`).
    cursor: Tick,
    /// The latest `now` asked for (Costello's `ticks`).
    target: Tick,
    /// The call's phase (in [`Phase::Tick`], the slot that starts at the cursor, then the
    /// deferred starts) and the drains' epochs.
    adv: AdvanceState,
    /// The list being processed at the cursor, or NIL.
    processing: u32,
    /// The overdue timer the drain visits next (Costello's `nextsoftcheck`), or NIL.
    walk_next: u32,
    /// The schedules of the periodic timers, by slot index.
    periodic: Schedules<T>,
    stats: WheelStats,
    /// Every timer is keyed by its deadline, whatever its window ([`Wheel::at_deadlines`]).
    at_deadlines: bool,
}

impl<T> Default for Wheel<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Wheel<T> {
    /// An empty wheel at time 0 whose slab grows on demand.
    pub fn new() -> Wheel<T> {
        Wheel {
            storage: Storage::new(),
            levels: Levels::new(),
            finished: 0,
            cursor: 0,
            target: 0,
            adv: AdvanceState::new(),
            processing: NIL,
            walk_next: NIL,
            periodic: Schedules::new(),
            stats: WheelStats::default(),
            at_deadlines: false,
        }
    }

    /// An empty wheel that fires every timer at the first `advance` reaching its deadline,
    /// whatever its window: `advance(now)` fires exactly the timers whose deadline is at or
    /// before `now`, in deadline order, and a window only sets how late
    /// [`Wheel::next_wakeup`] may be. Tolerant timers then cascade as exact ones do. For a
    /// caller whose every call must see the timers due by their deadlines (the runtime's timer
    /// sets, whose calls report what is due now); [`Wheel::new`] fires a tolerant timer at its
    /// [`firing_instant`] instead, which spares it the cascades.
    pub fn at_deadlines() -> Wheel<T> {
        Wheel {
            at_deadlines: true,
            ..Self::new()
        }
    }

    /// An empty wheel holding at most `capacity` timers, all allocated here: `start` and
    /// `start_with` return [`Error::Full`] beyond that and never allocate (`start_periodic` does,
    /// for the schedule). A capacity that cannot be indexed (2^32 - 707 timers or more) is
    /// [`Error::Config`]; one the allocator refuses is [`Error::NoMemory`].
    pub fn with_capacity(capacity: usize) -> Result<Wheel<T>, Error> {
        if capacity >= MAX_TIMERS {
            return Err(Error::Config {
                reason: "a fixed capacity must be below 2^32 - 707 timers",
            });
        }
        Ok(Wheel {
            storage: Storage::with_capacity(capacity)?,
            ..Self::new()
        })
    }

    /// Starts a periodic timer: first due at `first`, then every `period` after its previous
    /// deadline, each window `tolerance` wide, until stopped. The handle stays valid across
    /// firings; the callback receives a copy of `value` each time. Each window's end is kept as
    /// for [`Timers::start_with`] (rounded down for a tolerance of 2^30 or more). `policy`
    /// decides what happens to periods missed when the wheel is advanced late (see [`Missed`]);
    /// [`Wheel::overruns`] tells how many the latest firing missed. A zero period is
    /// [`Error::ZeroPeriod`]. A timer whose next deadline would pass `u64::MAX` fires its last
    /// time and is gone. The schedules sit in a hash table beside the slab, so firing or
    /// stopping a periodic timer costs O(1) expected (one-shot timers never look at it). Room
    /// for the schedule is reserved before the timer is started: when memory runs out the call
    /// returns [`Error::NoMemory`] and nothing changes, as for [`Wheel::start`].
    pub fn start_periodic(
        &mut self,
        first: Tick,
        period: Tick,
        tolerance: Tick,
        policy: Missed,
        value: T,
    ) -> Result<Handle, Error>
    where
        T: Clone,
    {
        if period == 0 {
            return Err(Error::ZeroPeriod);
        }
        self.periodic.reserve()?;
        let h = self.start_with(first, tolerance, value)?;
        let t = self.storage.timer_mut(h.index());
        t.window = t.window.with_periodic(true);
        let schedule = Periodic {
            period,
            tolerance,
            policy,
            copy: T::clone,
            overruns: 0,
        };
        // Room was reserved above, so this cannot be refused; were it refused anyway, the
        // timer is taken back rather than left periodic without a schedule.
        if let Err(e) = self.periodic.insert(h.index(), schedule) {
            let t = self.storage.timer_mut(h.index());
            t.window = t.window.with_periodic(false);
            drop(self.stop(h));
            return Err(e);
        }
        Ok(h)
    }

    /// Pull-style expiry: fires at most one due timer and hands it back, instead of calling a
    /// callback. `None` once nothing is due at or before `now`; the wheel's time is then `now`,
    /// exactly as after `advance(now, ..)` completes (and, as there, a `now` before the target
    /// of an advance a budget left unfinished is ignored: the pulls finish that work first).
    ///
    /// The order and the rules are `advance`'s: deadline order, start order among equal
    /// deadlines, a periodic timer re-armed for its next period before it is returned (its
    /// handle stays valid), time never going backwards. One call is `advance(now, budget, ..)`
    /// with a budget that runs out right after the first firing, so the two interleave
    /// freely: either resumes exactly where the other stopped, and a timer started or reset
    /// between calls is placed as it would be between two budgeted `advance` calls (an
    /// overdue one fires within the current round of overdue timers).
    ///
    /// ```
    /// use callwheel::Wheel;
    /// use callwheel::Timers;
    ///
    /// let mut wheel = Wheel::new();
    /// wheel.start(20, "b")?;
    /// wheel.start(10, "a")?;
    /// let mut fired = Vec::new();
    /// while let Some(e) = wheel.poll_expired(30) {
    ///     fired.push((e.deadline, e.value));
    /// }
    /// assert_eq!(fired, [(10, "a"), (20, "b")]);
    /// assert_eq!(wheel.now(), 30);
    /// # Ok::<(), callwheel::Error>(())
    /// ```
    pub fn poll_expired(&mut self, now: Tick) -> Option<Expired<T>> {
        let mut out = None;
        let _ = self.advance_guarded::<true, _>(now, Budget::UNLIMITED, |_, e| out = Some(e));
        out
    }

    /// The wheel's counters.
    pub fn stats(&self) -> WheelStats {
        self.stats
    }

    /// Drops a stopped periodic timer's schedule and hands back its value; out of line (and
    /// called last), as one-shot timers never need it.
    #[cold]
    #[inline(never)]
    fn forget_schedule(&mut self, idx: u32, value: T) -> Option<T> {
        self.periodic.remove(idx);
        Some(value)
    }

    /// [`Timers::start_with`] when no freed slot is left: the slab grows by one.
    #[cold]
    #[inline(never)]
    fn start_in_new_slot(
        &mut self,
        deadline: Tick,
        window: Window,
        end: Tick,
        value: T,
    ) -> Result<Handle, Error> {
        let idx = self.storage.grow(deadline, window, value)?;
        Ok(self.started(idx, 1, deadline, end))
    }

    /// A slot just taken for a new timer becomes a pending one: counted, armed, and named by a
    /// handle (the fast and the growing start share this).
    #[inline(always)]
    fn started(&mut self, idx: u32, generation: u32, deadline: Tick, end: Tick) -> Handle {
        self.stats.started += 1;
        self.arm(idx, deadline, end);
        self.storage.handle(idx, generation)
    }
}

impl<T> Timers<T> for Wheel<T> {
    /// Starts an exact timer (tolerance 0); see [`Timers::start_with`].
    #[inline]
    fn start(&mut self, expiry: Tick, value: T) -> Result<Handle, Error> {
        self.start_with(expiry, 0, value)
    }

    /// Starts a timer with window `[deadline, deadline + tolerance]`: it fires at the first
    /// `advance` whose time reaches its [`firing_instant`] (the deadline for an exact timer, a
    /// coarse slot boundary in the window's first eighth otherwise), and
    /// [`Wheel::next_wakeup`] asks to be woken no later than the window's end. A firing
    /// instant at or before the wheel's time queues the timer as overdue. The end saturates at `u64::MAX`; otherwise a tolerance of
    /// 2^30 ticks or more (about 1.07 s of nanoseconds) is kept to 25 significant bits, rounded
    /// down, so the end kept may be earlier than asked by less than 2^-24 of the tolerance,
    /// never later ([`window_end`] says which end).
    #[inline(always)]
    fn start_with(&mut self, deadline: Tick, tolerance: Tick, value: T) -> Result<Handle, Error> {
        let (window, end) = Window::keep(deadline, tolerance);
        // The free list is empty exactly when its head is NIL, which no slab reaches: one
        // comparison against the length says both "a slot is free" and "its index is good".
        if !self.storage.has_free() {
            // Out of line and last: a start that reuses a freed slot (the common case once the
            // slab is warm) then keeps nothing across a call and saves no registers.
            return self.start_in_new_slot(deadline, window, end, value);
        }
        let (idx, generation) = self.storage.reuse(deadline, window, value);
        Ok(self.started(idx, generation, deadline, end))
    }

    /// Moves a pending timer to a new window and returns its previous deadline; `None`,
    /// touching nothing, for a stale or foreign handle (every deadline is in the wheel's
    /// range). The timer keeps its handle, its value and, when periodic, its period (the new
    /// tolerance applies to its later periods too); among equal deadlines it now counts as
    /// started last (when it already is the last of the slot it stays in, it is not even
    /// relinked: Linux's fast path). Safe from a callback, on any timer, the firing periodic
    /// one included. The new window's end is kept as for [`Timers::start_with`].
    #[inline]
    fn reset(&mut self, handle: Handle, deadline: Tick, tolerance: Tick) -> Option<Tick> {
        let idx = self.storage.resolve(handle)?;
        self.stats.reset += 1;
        let previous = self.storage.timer(idx).deadline;
        if self.storage.timer(idx).window.periodic() {
            if let Some(p) = self.periodic.get_mut(idx) {
                p.tolerance = tolerance;
            }
        }
        let now = self.cursor;
        let li = BASE + idx;
        let (window, end) = Window::keep(deadline, tolerance);
        let at = self.instant(deadline, end);
        if at > now && self.adv.phase != Phase::Tick {
            let level = level_for(now, at);
            let list = list_for(level, at);
            // Only the last timer of a list has that list's sentinel as its successor.
            if self.storage.links.next(li) == list {
                self.retarget(idx, deadline, window);
                self.levels.lower(list, at, end);
                return Some(previous);
            }
        }
        self.unlink(li);
        self.retarget(idx, deadline, window);
        self.arm(idx, deadline, end);
        Some(previous)
    }

    fn deadline(&self, handle: Handle) -> Option<Tick> {
        self.deadline_of(handle)
    }

    fn contains(&self, handle: Handle) -> bool {
        self.storage.resolve(handle).is_some()
    }

    #[inline(always)]
    fn stop(&mut self, handle: Handle) -> Option<T> {
        let idx = self.storage.resolve(handle)?;
        // The handle matched the slot's generation; free the slot first, then take it off its
        // list (unlinking reads only the links).
        let (value, periodic) = self.storage.vacate(idx, handle.generation());
        self.unlink(BASE + idx);
        self.stats.stopped += 1;
        if periodic {
            // Last and out of line, as for a start that grows the slab.
            return self.forget_schedule(idx, value);
        }
        Some(value)
    }

    fn now(&self) -> Tick {
        self.cursor
    }

    fn len(&self) -> usize {
        (self.stats.started - self.stats.stopped - self.finished) as usize
    }

    /// The earliest firing instant among the pending timers ([`firing_instant`]: the deadline
    /// of an exact timer), or the wheel's own time when `advance` has work at it (as for
    /// [`Wheel::next_wakeup`]): otherwise exact while no timer has been
    /// stopped or reset since its slot was last emptied, and possibly earlier after that. O(1).
    /// `None` when nothing is pending.
    fn next_expiry(&self) -> Option<Tick> {
        self.earliest_deadline()
    }

    /// As the trait says; at or before the wheel's own time it is exact and looks at no slot:
    /// every timer due by then waits on the overdue queue (or in an `advance` left
    /// unfinished), which is how a pull loop asks cheaply whether another round has work.
    #[inline]
    fn may_expire_at(&self, t: Tick) -> bool {
        if t <= self.cursor {
            // The cheap test first: a wheel with nothing at its cursor (a pull loop's last
            // question) answers without counting its timers.
            return self.pending_now() && Timers::len(self) != 0;
        }
        self.earliest_deadline().is_some_and(|e| e <= t)
    }

    /// [`Wheel::next_wakeup`]: the earliest window end.
    fn next_wakeup(&self) -> Option<Tick> {
        Wheel::next_wakeup(self)
    }

    fn memory_bytes(&self) -> usize {
        self.storage.memory_bytes() + Levels::memory_bytes() + self.periodic.bytes()
    }
}

impl<T> Scheme<T> for Wheel<T> {
    fn advance<F>(&mut self, now: Tick, budget: Budget, on_expire: F) -> Progress
    where
        F: FnMut(&mut dyn Timers<T>, Expired<T>),
    {
        self.advance_guarded::<false, F>(now, budget, on_expire)
    }

    fn check_invariants(&self) -> Result<(), &'static str> {
        self.check_structure()
    }
}
