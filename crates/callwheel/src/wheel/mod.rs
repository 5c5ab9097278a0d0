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
//! is processed after the earlier timer has cascaded into it. Each level keeps one 64-bit
//! occupancy word (the "busy" marks of V&L Appendix A), so the next non-empty slot of a level is
//! one bit scan, and `advance` jumps any empty stretch in O(levels).
//!
//! # Tolerance and coalesced wake-ups
//!
//! A timer has a window `[deadline, deadline + tolerance]` (calloutng's precision). The wheel
//! keys timers by deadline, so `advance(now)` fires exactly the timers whose deadline is at or
//! before `now`, in deadline order. What tolerance changes is when to call it:
//! [`Wheel::next_wakeup`] returns the earliest *window end* among the pending timers. A driver
//! that sleeps until then and calls `advance` fires every timer whose window contains that
//! instant — the greedy stabbing of the windows, which is the minimum number of wake-ups.
//!
//! Each slot remembers the smallest window end of the timers placed in it, each level the
//! smallest over its slots, so the query costs O(levels). Stopping a timer does not raise these
//! minimums (that would cost a scan): the answer may then be early, never late, and the slot's
//! minimum is made exact again when the wheel reaches it.
//!
//! # Costs
//!
//! | operation | cost |
//! |---|---|
//! | start, stop | O(1): a digit, a list append or unlink, a bit |
//! | reset | O(1); no relinking when the timer stays the last one of the same slot |
//! | advance | O(levels) per jump + O(1) per cascade step and per fired timer; each timer cascades at most 10 times, in practice 1–3 |
//! | next_wakeup | O(levels) |
//!
//! The wheel implements [`Scheme`], so the conformance suite of the scheme family
//! runs on it unchanged; tolerance, reset, `next_wakeup` and the statistics are its own methods.

mod periodic;

use alloc::collections::BTreeMap;
use core::cell::Cell;

pub use periodic::Missed;
use periodic::Periodic;

use crate::scheme::arena::NIL;
use crate::scheme::clock::{self, Core, Due, Step, TickDriven, OVERDUE};
use crate::scheme::{Budget, Error, Expired, Handle, Progress, Scheme, Timers};
use crate::time::Tick;

const SLOTS: usize = 64;
const LEVELS: usize = 11;
/// The core's lists: 0 is the overdue queue, 1..=704 the slots, then the deferred list.
const DEFERRED: u32 = 1 + (LEVELS * SLOTS) as u32;

#[inline]
fn list_of(level: usize, slot: usize) -> u32 {
    1 + (level * SLOTS + slot) as u32
}

/// The level on which a timer due at `deadline` sits while the wheel's time is `now`: the
/// highest base-64 digit in which the two differ (0 when they are equal).
#[inline]
fn level_for(now: Tick, deadline: Tick) -> usize {
    let differ = 63usize.saturating_sub((now ^ deadline).leading_zeros() as usize);
    differ / 6
}

#[inline]
fn slot_for(level: usize, deadline: Tick) -> usize {
    ((deadline >> (6 * level)) & 63) as usize
}

/// The start of the slot `slot` of level `level` in the current rotation of the levels above.
#[inline]
fn slot_start(now: Tick, level: usize, slot: usize) -> Tick {
    let shift = 6 * level;
    let above = if shift + 6 >= 64 {
        0
    } else {
        (now >> (shift + 6)) << (shift + 6)
    };
    above | ((slot as u64) << shift)
}

/// Counters kept as the wheel works; cheap enough to leave on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
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

/// A lower bound on some per-timer quantity (window end, deadline) for each slot of a level and
/// for the level as a whole. Lowered on insertion; reset when a slot empties; the level's value
/// is recomputed lazily from its occupied slots.
#[derive(Debug)]
struct Minimum {
    slot: [Tick; SLOTS],
    level: Cell<Option<Tick>>,
}

impl Minimum {
    fn new() -> Minimum {
        Minimum {
            slot: [Tick::MAX; SLOTS],
            level: Cell::new(Some(Tick::MAX)),
        }
    }

    #[inline]
    fn lower(&mut self, slot: usize, value: Tick) {
        if value < self.slot[slot] {
            self.slot[slot] = value;
        }
        if let Some(m) = self.level.get() {
            if value < m {
                self.level.set(Some(value));
            }
        }
    }

    #[inline]
    fn clear(&mut self, slot: usize) {
        if self.level.get() == Some(self.slot[slot]) {
            self.level.set(None);
        }
        self.slot[slot] = Tick::MAX;
    }

    fn get(&self, occupied: u64) -> Tick {
        if let Some(m) = self.level.get() {
            return m;
        }
        let mut bits = occupied;
        let mut m = Tick::MAX;
        while bits != 0 {
            m = m.min(self.slot[bits.trailing_zeros() as usize]);
            bits &= bits - 1;
        }
        self.level.set(Some(m));
        m
    }
}

#[derive(Debug)]
struct Level {
    /// Bit `s` set while slot `s` holds a timer.
    occupied: u64,
    /// The smallest window end placed in each slot since it was last emptied.
    end: Minimum,
    /// The smallest deadline, likewise.
    deadline: Minimum,
}

impl Level {
    fn new() -> Level {
        Level {
            occupied: 0,
            end: Minimum::new(),
            deadline: Minimum::new(),
        }
    }
}

/// The production timing wheel. See the [module documentation](self) for its geometry and costs.
///
/// ```
/// use callwheel::wheel::Wheel;
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
    core: Core<T>,
    levels: [Level; LEVELS],
    /// The slot being processed at the current time, as (level, slot).
    processing: Option<(usize, usize)>,
    /// A slot is being processed: starts wait on the deferred list until it is done.
    in_tick: bool,
    /// The schedules of the periodic timers, by slot index.
    periodic: BTreeMap<u32, Periodic<T>>,
    stats: Stats,
}

impl<T> Default for Wheel<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Wheel<T> {
    /// An empty wheel at time 0 whose slab grows on demand.
    pub fn new() -> Wheel<T> {
        Self::build(Core::growing(LEVELS * SLOTS + 1))
    }

    /// An empty wheel holding at most `capacity` timers, all allocated here: `start` and
    /// `start_with` return [`Error::Full`] beyond that and never allocate (`start_periodic` does,
    /// for the schedule). A capacity that cannot be allocated is [`Error::Config`].
    pub fn with_capacity(capacity: usize) -> Result<Wheel<T>, Error> {
        Ok(Self::build(Core::new(LEVELS * SLOTS + 1, Some(capacity))?))
    }

    fn build(core: Core<T>) -> Wheel<T> {
        Wheel {
            core,
            levels: core::array::from_fn(|_| Level::new()),
            processing: None,
            in_tick: false,
            periodic: BTreeMap::new(),
            stats: Stats::default(),
        }
    }

    /// Starts a timer with window `[deadline, deadline + tolerance]`: it fires at the first
    /// `advance` whose time reaches `deadline`, and [`Wheel::next_wakeup`] asks to be woken no
    /// later than the window's end. The end saturates at `u64::MAX`.
    pub fn start_with(
        &mut self,
        deadline: Tick,
        tolerance: Tick,
        value: T,
    ) -> Result<Handle, Error> {
        let end = deadline.saturating_add(tolerance);
        let h = clock::start_with(self, deadline, end, value)?;
        self.stats.started += 1;
        Ok(h)
    }

    /// Starts a periodic timer: first due at `first`, then every `period` after its previous
    /// deadline, each window `tolerance` wide, until stopped. The handle stays valid across
    /// firings; the callback receives a copy of `value` each time. `policy` decides what happens
    /// to periods missed when the wheel is advanced late (see [`Missed`]);
    /// [`Wheel::overruns`] tells how many the latest firing missed. A zero period is
    /// [`Error::ZeroPeriod`]. A timer whose next deadline would pass `u64::MAX` fires its last
    /// time and is gone. The schedules sit in an ordered map, so firing or stopping a periodic
    /// timer costs O(log p) in the number of periodic timers.
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
        let h = self.start_with(first, tolerance, value)?;
        self.periodic.insert(
            h.index(),
            Periodic {
                period,
                tolerance,
                policy,
                copy: T::clone,
                overruns: 0,
            },
        );
        Ok(h)
    }

    /// How many periods the latest firing of a periodic timer missed (`None` for a stale handle
    /// or a one-shot timer).
    pub fn overruns(&self, handle: Handle) -> Option<u64> {
        let idx = self.core.arena.resolve(handle)?;
        self.periodic.get(&idx).map(|p| p.overruns)
    }

    /// Moves a pending timer to a new window. Returns `false`, touching nothing, for a stale
    /// handle. The timer keeps its handle; among equal deadlines it now counts as started last
    /// (when it already is the last of the slot it stays in, it is not even relinked: Linux's
    /// fast path).
    pub fn reset(&mut self, handle: Handle, deadline: Tick, tolerance: Tick) -> bool {
        let Some(idx) = self.core.arena.resolve(handle) else {
            return false;
        };
        self.stats.reset += 1;
        if let Some(p) = self.periodic.get_mut(&idx) {
            p.tolerance = tolerance;
        }
        let end = deadline.saturating_add(tolerance);
        let now = self.core.cursor;
        let node = self.core.arena.node(idx);
        if deadline > now && !self.in_tick && node.next == NIL {
            let level = level_for(now, deadline);
            let slot = slot_for(level, deadline);
            if node.list == list_of(level, slot) {
                let node = self.core.arena.node_mut(idx);
                node.expiry = deadline;
                node.aux = end;
                self.note(level, slot, deadline, end);
                return true;
            }
        }
        if self.core.arena.node(idx).list == OVERDUE {
            self.core.unlink_overdue(idx);
        } else {
            self.detach(idx);
        }
        let node = self.core.arena.node_mut(idx);
        node.expiry = deadline;
        node.aux = end;
        if deadline <= now {
            self.core.push_overdue(idx);
        } else {
            self.place(idx);
        }
        true
    }

    /// The instant a driver should next wake: the earliest window end among the pending timers
    /// (the wheel's own time when timers are already due). Never later than any window's end;
    /// after stops or resets it may be earlier than needed. `None` when nothing is pending.
    pub fn next_wakeup(&self) -> Option<Tick> {
        self.earliest(|level| &level.end)
    }

    /// The earliest deadline among the pending timers (the wheel's own time when timers are
    /// already due): exact while no timer has been stopped or reset since its slot was last
    /// processed, otherwise possibly earlier. `None` when nothing is pending.
    pub fn next_deadline(&self) -> Option<Tick> {
        self.earliest(|level| &level.deadline)
    }

    /// The smallest of one kept minimum over all levels, or the wheel's time when work is due.
    fn earliest(&self, minimum: fn(&Level) -> &Minimum) -> Option<Tick> {
        if self.core.arena.len() == 0 {
            return None;
        }
        if self.core.pending_now() || self.in_tick {
            return Some(self.core.cursor);
        }
        if self.core.structure_len() == 0 {
            return None;
        }
        let m = self
            .levels
            .iter()
            .map(|l| minimum(l).get(l.occupied))
            .min()?;
        Some(m.max(self.core.cursor))
    }

    /// The wheel's counters.
    pub fn stats(&self) -> Stats {
        Stats {
            clamped: self.core.clamped,
            ..self.stats
        }
    }

    #[inline]
    fn note(&mut self, level: usize, slot: usize, deadline: Tick, end: Tick) {
        let lv = &mut self.levels[level];
        lv.end.lower(slot, end);
        lv.deadline.lower(slot, deadline);
    }

    /// Places a timer whose deadline is after `now` on its digit's level.
    fn place_from(&mut self, idx: u32, now: Tick) {
        let node = self.core.arena.node(idx);
        let (deadline, end) = (node.expiry, node.aux);
        let level = level_for(now, deadline);
        let slot = slot_for(level, deadline);
        self.core.arena.push_back(list_of(level, slot), idx);
        self.levels[level].occupied |= 1 << slot;
        self.note(level, slot, deadline, end);
    }

    /// The next occupied slot after the wheel's time on `level`, as (slot, start).
    fn next_slot(&self, level: usize) -> Option<(usize, Tick)> {
        let now = self.core.cursor;
        let current = slot_for(level, now);
        let later = if current == 63 {
            0
        } else {
            self.levels[level].occupied & (!0u64 << (current + 1))
        };
        (later != 0).then(|| {
            let slot = later.trailing_zeros() as usize;
            (slot, slot_start(now, level, slot))
        })
    }

    fn slot_emptied(&mut self, level: usize, slot: usize) {
        let lv = &mut self.levels[level];
        lv.occupied &= !(1 << slot);
        lv.end.clear(slot);
        lv.deadline.clear(slot);
    }
}

impl<T> TickDriven<T> for Wheel<T> {
    fn core(&self) -> &Core<T> {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core<T> {
        &mut self.core
    }

    fn place(&mut self, idx: u32) {
        if self.in_tick {
            // A slot is being cascaded: an older timer with the same deadline may still be in
            // it. Place this one once the slot is done, behind it.
            self.core.arena.push_back(DEFERRED, idx);
        } else {
            let now = self.core.cursor;
            self.place_from(idx, now);
        }
    }

    fn detach(&mut self, idx: u32) {
        let list = self.core.arena.node(idx).list;
        self.core.arena.unlink(idx);
        if list != DEFERRED && list != OVERDUE && self.core.arena.is_list_empty(list) {
            let i = (list - 1) as usize;
            self.slot_emptied(i / SLOTS, i % SLOTS);
        }
    }

    fn next_work(&self) -> Option<Tick> {
        if self.core.structure_len() == 0 {
            return None;
        }
        (0..LEVELS)
            .filter_map(|l| self.next_slot(l).map(|(_, start)| start))
            .min()
    }

    fn begin_tick(&mut self, tick: Tick) {
        self.in_tick = true;
        // At most one level has a slot starting exactly here (see the module docs); process the
        // highest such level first all the same, so cascades run before firing.
        self.processing = (0..LEVELS).rev().find_map(|l| {
            let boundary = l == 0 || tick & ((1u64 << (6 * l)) - 1) == 0;
            let slot = slot_for(l, tick);
            (boundary && self.levels[l].occupied & (1 << slot) != 0).then_some((l, slot))
        });
    }

    fn step_tick(&mut self, tick: Tick) -> Step {
        if let Some((level, slot)) = self.processing {
            let list = list_of(level, slot);
            match self.core.arena.first(list) {
                NIL => {
                    self.processing = None;
                    return Step::Worked;
                }
                idx => {
                    self.detach(idx);
                    if self.core.arena.node(idx).expiry <= tick {
                        return Step::Fire(idx);
                    }
                    self.stats.cascades += 1;
                    self.place_from(idx, tick);
                    return Step::Worked;
                }
            }
        }
        if let Some(idx) = self.core.arena.pop_front(DEFERRED) {
            self.place_from(idx, tick);
            return Step::Worked;
        }
        self.in_tick = false;
        Step::TickDone
    }

    fn on_due(&mut self, idx: u32, now: Tick) -> Due {
        if self.periodic.is_empty() {
            return Due::Free;
        }
        let Some(p) = self.periodic.get_mut(&idx) else {
            return Due::Free;
        };
        let deadline = self.core.arena.node(idx).expiry;
        let Some((next, missed)) = p.next(deadline, now) else {
            // The next period would end after the end of time: this firing is the last.
            self.periodic.remove(&idx);
            return Due::Free;
        };
        p.overruns = missed;
        let end = next.saturating_add(p.tolerance);
        let node = self.core.arena.node_mut(idx);
        node.expiry = next;
        node.aux = end;
        if next <= self.core.cursor {
            // Already due on the cursor (it fired from the overdue queue): the next drain.
            self.core.push_overdue(idx);
        } else {
            // Burst replays the missed deadlines in order, as the cursor reaches them.
            self.place(idx);
        }
        Due::Repeat {
            deadline,
            overruns: missed,
        }
    }

    fn copy_value(&self, idx: u32) -> Option<T> {
        let p = self.periodic.get(&idx)?;
        self.core.arena.node(idx).value.as_ref().map(p.copy)
    }

    fn extra_bytes(&self) -> usize {
        core::mem::size_of::<[Level; LEVELS]>()
            + self.periodic.len() * core::mem::size_of::<(u32, Periodic<T>)>()
    }

    fn check_structure(&self) -> Result<(), &'static str> {
        if !self.in_tick && !self.core.arena.is_list_empty(DEFERRED) {
            return Err("timers left deferred outside a slot's processing");
        }
        for &idx in self.periodic.keys() {
            if self.core.arena.node(idx).value.is_none() {
                return Err("a periodic schedule outlived its timer");
            }
        }
        let now = self.core.cursor;
        for (l, lv) in self.levels.iter().enumerate() {
            let mut level_min = Tick::MAX;
            for s in 0..SLOTS {
                let list = list_of(l, s);
                let busy = lv.occupied & (1 << s) != 0;
                if busy == self.core.arena.is_list_empty(list) {
                    return Err("occupancy bit disagrees with its slot");
                }
                let mut i = self.core.arena.first(list);
                while i != NIL {
                    let node = self.core.arena.node(i);
                    let processing = self.processing == Some((l, s));
                    if !processing
                        && (level_for(now, node.expiry) != l || slot_for(l, node.expiry) != s)
                    {
                        return Err("timer on the wrong level or slot");
                    }
                    if node.aux < lv.end.slot[s] || node.expiry < lv.deadline.slot[s] {
                        return Err("a slot's minimum window end or deadline is too high");
                    }
                    if node.aux < node.expiry {
                        return Err("window ends before its deadline");
                    }
                    level_min = level_min.min(node.aux);
                    i = node.next;
                }
            }
            if lv.end.get(lv.occupied) > level_min {
                return Err("a level's minimum window end is too high");
            }
        }
        Ok(())
    }
}

impl<T> Timers<T> for Wheel<T> {
    /// Starts an exact timer (tolerance 0); see [`Wheel::start_with`].
    fn start(&mut self, expiry: Tick, value: T) -> Result<Handle, Error> {
        self.start_with(expiry, 0, value)
    }

    fn stop(&mut self, handle: Handle) -> Option<T> {
        let value = clock::stop(self, handle);
        if value.is_some() {
            self.stats.stopped += 1;
            if !self.periodic.is_empty() {
                self.periodic.remove(&handle.index());
            }
        }
        value
    }

    fn now(&self) -> Tick {
        self.core.cursor
    }

    fn len(&self) -> usize {
        self.core.arena.len()
    }

    /// The earliest deadline: [`Wheel::next_deadline`].
    fn next_expiry(&self) -> Option<Tick> {
        self.next_deadline()
    }

    fn memory_bytes(&self) -> usize {
        self.core.memory_bytes() + self.extra_bytes()
    }
}

impl<T> Scheme<T> for Wheel<T> {
    fn advance<F>(&mut self, now: Tick, budget: Budget, mut on_expire: F) -> Progress
    where
        F: FnMut(&mut dyn Timers<T>, Expired<T>),
    {
        let mut late = self.stats.max_lateness;
        let progress = clock::advance(self, now, budget, |t: &mut dyn Timers<T>, e: Expired<T>| {
            late = late.max(t.now().saturating_sub(e.deadline));
            on_expire(t, e)
        });
        self.stats.max_lateness = late;
        self.stats.fired += progress.fired as u64;
        progress
    }

    fn check_invariants(&self) -> Result<(), &'static str> {
        self.core.check()?;
        self.check_structure()
    }
}
