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
//! A timer has a window `[deadline, deadline + tolerance]` (calloutng's precision). The wheel
//! keys timers by deadline, so `advance(now)` fires exactly the timers whose deadline is at or
//! before `now`, in deadline order. What tolerance changes is when to call it:
//! [`Wheel::next_wakeup`] returns the earliest *window end* among the pending timers. A driver
//! that sleeps until then and calls `advance` fires every timer whose window contains that
//! instant — the greedy stabbing of the windows, which is the minimum number of wake-ups.
//!
//! Each slot remembers the smallest window end (and deadline) of the timers placed in it since
//! it was last emptied. The query visits the occupied slots in time order and stops at the first
//! one that starts at or after the best end found so far: every window there ends later still.
//! With exact timers that is the first slot; with tolerances it is the slots a window's width
//! reaches. Stopping a timer does not raise a slot's minimum (that would cost a scan): the answer
//! may then be early, never late, and the slot's minimum is made exact again when it empties.
//!
//! # Storage
//!
//! Timers live in a slab of 32-byte entries (deadline, window end, value, generation; 40 bytes
//! with a `u64` value would be the case with an `Option` around the value, which the entry's
//! live/free variants make unnecessary), and their list links in a parallel array of 8-byte
//! (prev, next) pairs. The links array starts with one sentinel per list (704 slots, the overdue
//! queue, the deferred list), so unlinking needs no branch on list ends and no record of which
//! list a timer is on: a list became empty exactly when the unlinked timer's neighbours are both
//! its sentinel, whose index names the slot. A timer touches only its own entry, its own links
//! and its neighbours' links.
//!
//! Processing a slot walks its list and asks the processor for each next timer's entry as soon
//! as the list names it (a prefetch hint, the crate's one `unsafe` call, in `prefetch.rs`), so
//! that cache miss overlaps the work on the current timer.
//!
//! # Costs
//!
//! | operation | cost |
//! |---|---|
//! | start, stop | O(1): a digit, a list append or unlink, a bit |
//! | reset | O(1); no relinking when the timer stays the last one of the same slot |
//! | advance | O(1) per slot processed + O(1) per cascade step and per fired timer; each timer cascades at most 10 times, in practice 1–3 |
//! | next_deadline | O(1) |
//! | next_wakeup | O(1) with exact timers; with tolerances, the occupied slots that start before the earliest window end |
//!
//! The wheel implements [`Scheme`], so the conformance suite of the scheme family
//! runs on it unchanged; tolerance, reset, `next_wakeup` and the statistics are its own methods.
//! It runs its own loop rather than the family's shared one (`scheme::clock`) with the same
//! semantics (overdue queue and drain epochs, exact resumption of a budgeted call), specialised
//! so that the common paths are a handful of instructions.

mod periodic;
mod prefetch;

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;

pub use periodic::Missed;
use periodic::Periodic;

use crate::handle::{Handle, Owner};
use crate::scheme::{Budget, Error, Expired, Progress, Scheme, Timers};
use crate::time::Tick;

const SLOTS: usize = 64;
const LEVELS: usize = 11;
/// Lists `0..SLOT_LISTS` are the slots, `level * 64 + slot`.
const SLOT_LISTS: usize = LEVELS * SLOTS;
/// The list of timers whose deadline had passed when they were (re)armed.
const OVERDUE: u32 = SLOT_LISTS as u32;
/// Timers started while a slot is processed wait here until it is done.
const DEFERRED: u32 = OVERDUE + 1;
/// The links index of timer 0: the lists' sentinels come first.
const BASE: u32 = DEFERRED + 1;
/// The null index (no free slot, no walk).
const NIL: u32 = u32::MAX;
/// Timer indices stay below this, so that `BASE + index` never reaches `NIL`.
const MAX_TIMERS: usize = (NIL - BASE) as usize;

/// The level of a timer by the leading zeros of `now ^ deadline`: the highest differing base-64
/// digit (level 0 when they are equal, at index 64).
const LEVEL_BY_ZEROS: [u8; 65] = {
    let mut table = [0u8; 65];
    let mut zeros = 0;
    while zeros < 64 {
        table[zeros] = ((63 - zeros) / 6) as u8;
        zeros += 1;
    }
    table
};

/// The level on which a timer due at `deadline` sits while the wheel's time is `now`.
#[inline(always)]
fn level_for(now: Tick, deadline: Tick) -> usize {
    LEVEL_BY_ZEROS[(now ^ deadline).leading_zeros() as usize] as usize
}

#[inline(always)]
fn slot_for(level: usize, deadline: Tick) -> usize {
    ((deadline >> (6 * level)) & 63) as usize
}

/// The list of the slot `deadline` falls in on `level`.
#[inline(always)]
fn list_for(level: usize, deadline: Tick) -> u32 {
    (level * SLOTS + slot_for(level, deadline)) as u32
}

/// The bits of the wheel's time above level `l`'s digit: the current rotation of the levels
/// above (none above the top level).
const ABOVE: [u64; LEVELS] = {
    let mut masks = [0u64; LEVELS];
    let mut level = 0;
    while level < LEVELS - 1 {
        masks[level] = u64::MAX << (6 * level + 6);
        level += 1;
    }
    masks
};

/// The start of the slot `slot` of level `level` in the current rotation of the levels above.
#[inline(always)]
fn slot_start(now: Tick, level: usize, slot: usize) -> Tick {
    (now & ABOVE[level]) | ((slot as u64) << (6 * level))
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

/// A pending timer.
#[derive(Debug)]
struct Timer<T> {
    deadline: Tick,
    /// The window's end; while the timer is on the overdue list, the drain epoch it was queued
    /// in instead (an overdue timer's window no longer matters: the wheel asks to be woken now).
    end: Tick,
    value: T,
    generation: u32,
    /// A schedule for it is in `Wheel::periodic` (only then is the map looked at).
    periodic: bool,
}

/// One slot of the slab. The two variants share 32 bytes for a `u64` value: the free variant
/// fits beside the `bool`, whose spare bit patterns tell the variants apart, so no tag (and no
/// `Option` around the value) costs a word.
#[derive(Debug)]
enum Entry<T> {
    Live(Timer<T>),
    /// A free slot on the free list (`next`), or retired (generation exhausted) and on no list.
    Free {
        generation: u32,
        next: u32,
    },
}

/// A timer's (or a sentinel's) neighbours on its circular list, as links indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Link {
    prev: u32,
    next: u32,
}

/// Lower bounds on the window ends and deadlines of the timers in one slot.
#[derive(Clone, Copy, Debug)]
struct SlotMin {
    end: Tick,
    deadline: Tick,
}

const NO_MIN: SlotMin = SlotMin {
    end: Tick::MAX,
    deadline: Tick::MAX,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// No advance in progress.
    Idle,
    /// Firing the overdue timers queued before the current epoch.
    Drain,
    /// Processing the slot that starts at the cursor, then the deferred starts.
    Tick,
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
    nodes: Vec<Entry<T>>,
    /// The lists' sentinels (`0..BASE`), then the links of timer `i` at `BASE + i`.
    links: Vec<Link>,
    /// Head of the free list of `nodes`, or NIL.
    free: u32,
    len: usize,
    capacity: Option<usize>,
    /// Slots retired because their generation was exhausted (they do not count against a fixed
    /// capacity).
    retired: usize,
    /// Bit `s` of word `l` is set while slot `s` of level `l` holds a timer.
    occupied: [u64; LEVELS],
    /// Bit `l` is set while `occupied[l]` is not zero.
    levels: u16,
    minimum: Box<[SlotMin; SLOT_LISTS]>,
    /// The last tick processed (Costello's `softticks`).
    cursor: Tick,
    /// The latest `now` asked for (Costello's `ticks`).
    target: Tick,
    phase: Phase,
    epoch: u64,
    /// An `advance` call is running (a start now comes from a callback).
    in_advance: bool,
    /// The list being processed at the cursor, or NIL.
    processing: u32,
    /// The overdue timer the drain visits next (Costello's `nextsoftcheck`), or NIL.
    walk_next: u32,
    /// The schedules of the periodic timers, by slot index.
    periodic: BTreeMap<u32, Periodic<T>>,
    stats: Stats,
    /// The identity every handle of this wheel carries.
    owner: Owner,
}

impl<T> Default for Wheel<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Wheel<T> {
    /// An empty wheel at time 0 whose slab grows on demand.
    pub fn new() -> Wheel<T> {
        let links = (0..BASE).map(|s| Link { prev: s, next: s }).collect();
        Wheel {
            nodes: Vec::new(),
            links,
            free: NIL,
            len: 0,
            capacity: None,
            retired: 0,
            occupied: [0; LEVELS],
            levels: 0,
            minimum: Box::new([NO_MIN; SLOT_LISTS]),
            cursor: 0,
            target: 0,
            phase: Phase::Idle,
            epoch: 0,
            in_advance: false,
            processing: NIL,
            walk_next: NIL,
            periodic: BTreeMap::new(),
            stats: Stats::default(),
            owner: Owner::new(),
        }
    }

    /// An empty wheel holding at most `capacity` timers, all allocated here: `start` and
    /// `start_with` return [`Error::Full`] beyond that and never allocate (`start_periodic` does,
    /// for the schedule). A capacity that cannot be indexed (2^32 - 707 timers or more) or
    /// allocated is [`Error::Config`].
    pub fn with_capacity(capacity: usize) -> Result<Wheel<T>, Error> {
        if capacity >= MAX_TIMERS {
            return Err(Error::Config {
                reason: "a fixed capacity must be below 2^32 - 707 timers",
            });
        }
        let mut w = Self::new();
        let fail = |_| Error::Config {
            reason: "cannot allocate the fixed capacity",
        };
        w.nodes.try_reserve_exact(capacity).map_err(fail)?;
        w.links.try_reserve_exact(capacity).map_err(fail)?;
        w.capacity = Some(capacity);
        Ok(w)
    }

    /// Starts a timer with window `[deadline, deadline + tolerance]`: it fires at the first
    /// `advance` whose time reaches `deadline`, and [`Wheel::next_wakeup`] asks to be woken no
    /// later than the window's end. The end saturates at `u64::MAX`.
    #[inline]
    pub fn start_with(
        &mut self,
        deadline: Tick,
        tolerance: Tick,
        value: T,
    ) -> Result<Handle, Error> {
        let end = deadline.saturating_add(tolerance);
        let (idx, generation) = self.alloc(deadline, end, value)?;
        self.stats.started += 1;
        self.arm(idx, deadline, end);
        Ok(self.owner.handle(idx, generation))
    }

    /// Starts a periodic timer: first due at `first`, then every `period` after its previous
    /// deadline, each window `tolerance` wide, until stopped. The handle stays valid across
    /// firings; the callback receives a copy of `value` each time. `policy` decides what happens
    /// to periods missed when the wheel is advanced late (see [`Missed`]);
    /// [`Wheel::overruns`] tells how many the latest firing missed. A zero period is
    /// [`Error::ZeroPeriod`]. A timer whose next deadline would pass `u64::MAX` fires its last
    /// time and is gone. The schedules sit in an ordered map, so firing or stopping a periodic
    /// timer costs O(log p) in the number of periodic timers (one-shot timers never look at it).
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
        self.timer_mut(h.index()).periodic = true;
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
        let idx = self.resolve(handle)?;
        self.periodic.get(&idx).map(|p| p.overruns)
    }

    /// Moves a pending timer to a new window. Returns `false`, touching nothing, for a stale
    /// handle. The timer keeps its handle; among equal deadlines it now counts as started last
    /// (when it already is the last of the slot it stays in, it is not even relinked: Linux's
    /// fast path).
    pub fn reset(&mut self, handle: Handle, deadline: Tick, tolerance: Tick) -> bool {
        let Some(idx) = self.resolve(handle) else {
            return false;
        };
        self.stats.reset += 1;
        if self.timer(idx).periodic {
            if let Some(p) = self.periodic.get_mut(&idx) {
                p.tolerance = tolerance;
            }
        }
        let end = deadline.saturating_add(tolerance);
        let now = self.cursor;
        let li = BASE + idx;
        if deadline > now && self.phase != Phase::Tick {
            let level = level_for(now, deadline);
            let list = list_for(level, deadline);
            // Only the last timer of a list has that list's sentinel as its successor.
            if self.links[li as usize].next == list {
                let t = self.timer_mut(idx);
                t.deadline = deadline;
                t.end = end;
                self.lower(list, deadline, end);
                return true;
            }
        }
        self.unlink(li);
        let t = self.timer_mut(idx);
        t.deadline = deadline;
        t.end = end;
        self.arm(idx, deadline, end);
        true
    }

    /// The instant a driver should next wake: the earliest window end among the pending timers,
    /// or the wheel's own time when `advance` has work at it (timers already due, or an
    /// `advance` still in progress — inside a callback — or left unfinished by a budget or a
    /// panicking callback). Never later than any window's end; after stops or resets it may be
    /// earlier than needed. `None` when nothing is pending.
    pub fn next_wakeup(&self) -> Option<Tick> {
        if self.len == 0 {
            return None;
        }
        if self.pending_now() {
            return Some(self.cursor);
        }
        if self.levels == 0 {
            return None;
        }
        let mut best = Tick::MAX;
        let mut levels = self.levels;
        while levels != 0 {
            let level = levels.trailing_zeros() as usize;
            let mut bits = self.occupied[level];
            while bits != 0 {
                let slot = bits.trailing_zeros() as usize;
                // Slots come in time order: once one starts at or after the best end, every
                // window from here on ends later.
                if slot_start(self.cursor, level, slot) >= best {
                    return Some(best.max(self.cursor));
                }
                best = best.min(self.minimum[level * SLOTS + slot].end);
                bits &= bits - 1;
            }
            levels &= levels - 1;
        }
        Some(best.max(self.cursor))
    }

    /// The earliest deadline among the pending timers, or the wheel's own time when `advance`
    /// has work at it (as for [`Wheel::next_wakeup`]): otherwise exact while no timer has been
    /// stopped or reset since its slot was last emptied, and possibly earlier after that.
    /// `None` when nothing is pending.
    pub fn next_deadline(&self) -> Option<Tick> {
        if self.len == 0 {
            return None;
        }
        if self.pending_now() {
            return Some(self.cursor);
        }
        if self.levels == 0 {
            return None;
        }
        let (list, _) = self.first_slot();
        Some(self.minimum[list as usize].deadline.max(self.cursor))
    }

    /// The wheel's counters.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    // ----- the slab ------------------------------------------------------------------------

    /// Takes a free slot (or grows the slab) for a new timer, on no list; returns its index and
    /// generation.
    #[inline(always)]
    fn alloc(&mut self, deadline: Tick, end: Tick, value: T) -> Result<(u32, u32), Error> {
        let slot = if self.free != NIL {
            let idx = self.free;
            let entry = &mut self.nodes[idx as usize];
            let Entry::Free { generation, next } = *entry else {
                unreachable!("a live timer on the free list")
            };
            self.free = next;
            *entry = Entry::Live(Timer {
                deadline,
                end,
                value,
                generation,
                periodic: false,
            });
            (idx, generation)
        } else {
            (self.grow(deadline, end, value)?, 0)
        };
        self.len += 1;
        Ok(slot)
    }

    /// Appends a new slot to the slab, unless a fixed capacity (or the index space) is used up.
    fn grow(&mut self, deadline: Tick, end: Tick, value: T) -> Result<u32, Error> {
        let full = match self.capacity {
            Some(cap) => self.nodes.len() >= cap + self.retired,
            None => self.nodes.len() >= MAX_TIMERS,
        };
        if full {
            return Err(Error::Full {
                capacity: self.capacity.unwrap_or(MAX_TIMERS),
            });
        }
        // Growth follows the caller's input: a refused allocation is returned as an error (with
        // nothing changed), never an abort. Both arrays are reserved before either is touched.
        self.nodes.try_reserve(1).map_err(|_| Error::NoMemory)?;
        // Keep the links in step with the slab's capacity: left to grow by doubling on its own
        // from the sentinels' length, the links array would reserve up to twice what it needs.
        let want = BASE as usize + self.nodes.capacity();
        if self.links.capacity() < want {
            self.links
                .try_reserve_exact(want - self.links.len())
                .map_err(|_| Error::NoMemory)?;
        }
        self.nodes.push(Entry::Live(Timer {
            deadline,
            end,
            value,
            generation: 0,
            periodic: false,
        }));
        self.links.push(Link {
            prev: NIL,
            next: NIL,
        });
        Ok((self.nodes.len() - 1) as u32)
    }

    /// Frees a live timer that is on no list and returns its value. The slot's generation moves
    /// on, so every handle to it goes stale; a slot whose generation is exhausted is retired,
    /// since reusing it would let a 2^32-old handle match again.
    #[inline(always)]
    fn release(&mut self, idx: u32) -> T {
        let entry = &mut self.nodes[idx as usize];
        let generation = match entry {
            Entry::Live(t) => t.generation,
            Entry::Free { .. } => unreachable!("freeing a free slot"),
        };
        let old = if generation == u32::MAX {
            self.retired += 1;
            core::mem::replace(
                entry,
                Entry::Free {
                    generation,
                    next: NIL,
                },
            )
        } else {
            let old = core::mem::replace(
                entry,
                Entry::Free {
                    generation: generation + 1,
                    next: self.free,
                },
            );
            self.free = idx;
            old
        };
        self.len -= 1;
        match old {
            Entry::Live(t) => t.value,
            Entry::Free { .. } => unreachable!("freeing a free slot"),
        }
    }

    /// The index of the live timer `handle` names, or `None` for a stale or made-up handle.
    #[inline(always)]
    fn resolve(&self, handle: Handle) -> Option<u32> {
        let (index, generation) = self.owner.slot(handle)?;
        match self.nodes.get(index as usize) {
            Some(Entry::Live(t)) if t.generation == generation => Some(index),
            _ => None,
        }
    }

    #[inline(always)]
    fn timer(&self, idx: u32) -> &Timer<T> {
        match &self.nodes[idx as usize] {
            Entry::Live(t) => t,
            Entry::Free { .. } => unreachable!("a free slot used as a timer"),
        }
    }

    #[inline(always)]
    fn timer_mut(&mut self, idx: u32) -> &mut Timer<T> {
        match &mut self.nodes[idx as usize] {
            Entry::Live(t) => t,
            Entry::Free { .. } => unreachable!("a free slot used as a timer"),
        }
    }

    // ----- the lists -----------------------------------------------------------------------

    /// Appends links entry `li` (unlinked) at the tail of `list` (FIFO: Costello's footnote).
    #[inline(always)]
    fn push_back(&mut self, list: u32, li: u32) {
        let tail = self.links[list as usize].prev;
        self.links[li as usize] = Link {
            prev: tail,
            next: list,
        };
        self.links[tail as usize].next = li;
        self.links[list as usize].prev = li;
    }

    /// Takes links entry `li` off its list. When that empties a slot, its occupancy bit and
    /// minimums are cleared; when the drain was about to visit it, the drain moves on.
    #[inline(always)]
    fn unlink(&mut self, li: u32) {
        let Link { prev, next } = self.links[li as usize];
        self.links[prev as usize].next = next;
        self.links[next as usize].prev = prev;
        if li == self.walk_next {
            // `nextsoftcheck`: the timer the drain would visit next is going away.
            self.walk_next = if next == OVERDUE { NIL } else { next };
        }
        // Both neighbours are the same only when they are the list's sentinel: it is empty now.
        if prev == next && (prev as usize) < SLOT_LISTS {
            self.slot_emptied(prev);
        }
    }

    /// Takes `li`, the first timer of slot `list`, off it (a slot is never walked); returns the
    /// new first (the sentinel `list` when the slot is now empty).
    #[inline(always)]
    fn pop_front(&mut self, list: u32, li: u32) -> u32 {
        let next = self.links[li as usize].next;
        self.links[list as usize].next = next;
        self.links[next as usize].prev = list;
        if next == list {
            self.slot_emptied(list);
        }
        next
    }

    #[inline(always)]
    fn slot_emptied(&mut self, list: u32) {
        let (level, slot) = (list as usize / SLOTS, list as usize % SLOTS);
        let word = &mut self.occupied[level];
        *word &= !(1u64 << slot);
        if *word == 0 {
            self.levels &= !(1u16 << level);
        }
    }

    #[inline(always)]
    fn lower(&mut self, list: u32, deadline: Tick, end: Tick) {
        let m = &mut self.minimum[list as usize];
        m.end = m.end.min(end);
        m.deadline = m.deadline.min(deadline);
    }

    /// Links a timer (on no list) where its deadline says: overdue, deferred while a slot is
    /// processed, or its digit's slot.
    #[inline(always)]
    fn arm(&mut self, idx: u32, deadline: Tick, end: Tick) {
        if deadline <= self.cursor {
            self.push_overdue(idx);
        } else if self.phase == Phase::Tick {
            // A slot is being processed: an older timer with the same deadline may still be in
            // it. Place this one once the slot is done, behind it.
            self.push_back(DEFERRED, BASE + idx);
        } else {
            self.place_at(idx, self.cursor, deadline, end);
        }
    }

    /// Places a timer whose deadline is after `now` on its digit's level.
    #[inline(always)]
    fn place(&mut self, idx: u32, now: Tick) {
        let t = self.timer(idx);
        let (deadline, end) = (t.deadline, t.end);
        self.place_at(idx, now, deadline, end);
    }

    /// [`Wheel::place`] with the timer's deadline and window end already at hand.
    #[inline(always)]
    fn place_at(&mut self, idx: u32, now: Tick, deadline: Tick, end: Tick) {
        let level = level_for(now, deadline);
        let slot = slot_for(level, deadline);
        let list = (level * SLOTS + slot) as u32;
        self.push_back(list, BASE + idx);
        let word = self.occupied[level];
        let bit = 1u64 << slot;
        if word & bit == 0 {
            // The first timer of an empty slot: its minimums start from this one (emptying a
            // slot leaves them stale rather than pay a store for it).
            self.minimum[list as usize] = SlotMin { end, deadline };
        } else {
            self.lower(list, deadline, end);
        }
        self.occupied[level] = word | bit;
        self.levels |= 1u16 << level;
    }

    /// Queues a live, unlinked timer as overdue (it fires in the next drain).
    ///
    /// A timer queued from a callback carries the current drain's epoch, so that drain (which
    /// fires only older epochs) leaves it for the next one: a callback re-arming itself in the
    /// past cannot keep a drain going. One queued between calls carries an older epoch, so the
    /// next call's drain fires it — also when that call resumes a drain a budget interrupted.
    fn push_overdue(&mut self, idx: u32) {
        let stamp = if self.in_advance {
            self.epoch
        } else {
            self.epoch.saturating_sub(1)
        };
        self.timer_mut(idx).end = stamp;
        let li = BASE + idx;
        self.push_back(OVERDUE, li);
        // An append to the list being walked after the walk reached its end: visit it too.
        if self.phase == Phase::Drain && self.walk_next == NIL {
            self.walk_next = li;
        }
    }

    #[inline(always)]
    fn overdue_pending(&self) -> bool {
        self.links[OVERDUE as usize].next != OVERDUE
    }

    /// Whether `advance` has work at the cursor itself.
    #[inline(always)]
    fn pending_now(&self) -> bool {
        self.phase != Phase::Idle || self.overdue_pending()
    }

    /// The lowest occupied slot of the lowest occupied level, as (list, start): the next slot
    /// with work. The wheel must hold a timer in some slot.
    #[inline(always)]
    fn first_slot(&self) -> (u32, Tick) {
        let level = self.levels.trailing_zeros() as usize;
        let slot = self.occupied[level].trailing_zeros() as usize;
        (
            (level * SLOTS + slot) as u32,
            slot_start(self.cursor, level, slot),
        )
    }

    // ----- advance -------------------------------------------------------------------------

    fn begin_drain(&mut self) {
        self.epoch += 1;
        self.phase = Phase::Drain;
        let first = self.links[OVERDUE as usize].next;
        self.walk_next = if first == OVERDUE { NIL } else { first };
    }

    /// Hands a due timer (already unlinked) to the callback: freed, or re-armed when periodic.
    #[inline]
    fn fire<F>(&mut self, idx: u32, on_expire: &mut F)
    where
        F: FnMut(&mut dyn Timers<T>, Expired<T>),
    {
        let t = self.timer(idx);
        let (deadline, periodic) = (t.deadline, t.periodic);
        let handle = self.owner.handle(idx, t.generation);
        self.stats.fired += 1;
        self.stats.max_lateness = self
            .stats
            .max_lateness
            .max(self.cursor.saturating_sub(deadline));
        let mut overruns = 0;
        if periodic {
            match self.rearm(idx, deadline) {
                Ok((value, missed)) => {
                    on_expire(
                        self,
                        Expired {
                            handle,
                            deadline,
                            value,
                            overruns: missed,
                        },
                    );
                    return;
                }
                // The last firing of the schedule still reports the periods it missed.
                Err(missed) => overruns = missed,
            }
        }
        let value = self.release(idx);
        on_expire(
            self,
            Expired {
                handle,
                deadline,
                value,
                overruns,
            },
        );
    }

    /// Re-arms a due periodic timer for its next period and returns a copy of its value and the
    /// periods missed; `Err(periods missed)` when the next deadline would pass the end of time
    /// (the schedule is dropped: this firing is the last).
    fn rearm(&mut self, idx: u32, deadline: Tick) -> Result<(T, u64), u64> {
        // Periodic timers judge missed periods against the time the caller asked for, not the
        // cursor, which replays the past slot by slot.
        let now = self.target;
        let Some(p) = self.periodic.get_mut(&idx) else {
            return Err(0);
        };
        let (next, missed) = p.policy.next(deadline, p.period, now);
        let Some(next) = next else {
            self.periodic.remove(&idx);
            self.timer_mut(idx).periodic = false;
            return Err(missed);
        };
        p.overruns = missed;
        let (tolerance, copy) = (p.tolerance, p.copy);
        let t = self.timer_mut(idx);
        t.deadline = next;
        t.end = next.saturating_add(tolerance);
        let end = t.end;
        // Already due on the cursor (it fired from the overdue queue): the next drain. Burst
        // replays the missed deadlines in order, as the cursor reaches them.
        self.arm(idx, next, end);
        // The copy is the caller's code (`T::clone`) and may panic: taken once the timer is
        // armed again, so a panic leaves it scheduled for its next period, not lost.
        let value = copy(&self.timer(idx).value);
        Ok((value, missed))
    }

    fn run<F>(&mut self, now: Tick, budget: Budget, on_expire: &mut F) -> Progress
    where
        F: FnMut(&mut dyn Timers<T>, Expired<T>),
    {
        let mut left = budget.get();
        let mut progress = Progress::default();
        // One step of the budget, or return with the position saved.
        macro_rules! step {
            () => {
                if left == 0 {
                    return progress;
                }
                left -= 1;
                progress.steps += 1;
            };
        }
        if now > self.target {
            self.target = now;
        } else if now < self.cursor {
            // Time never goes backwards for the structure: the call only finishes work already
            // asked for. Counted (a resume at or after the cursor is not a clamp).
            self.stats.clamped += 1;
        }
        // An interrupted drain resumes where it stopped, with the same epoch.
        if self.phase == Phase::Idle {
            self.begin_drain();
        }
        loop {
            if self.phase == Phase::Drain {
                let li = self.walk_next;
                if li != NIL {
                    step!();
                    let next = self.links[li as usize].next;
                    self.walk_next = if next == OVERDUE { NIL } else { next };
                    let idx = li - BASE;
                    if self.timer(idx).end < self.epoch {
                        self.unlink(li);
                        self.fire(idx, on_expire);
                        progress.fired += 1;
                    }
                    // Otherwise a callback queued it during this drain: it waits for the next.
                    continue;
                }
                if self.cursor >= self.target {
                    self.phase = Phase::Idle;
                    progress.complete = true;
                    return progress;
                }
                step!();
                // A callback re-armed a timer in the past during this drain: it is due at the
                // next tick. Otherwise skip to the next slot with work, or, with nothing left
                // anywhere, straight to the target.
                let (cursor, target) = (self.cursor, self.target);
                let forced = self.overdue_pending();
                let mut next = if forced { cursor + 1 } else { target };
                self.processing = NIL;
                if self.levels != 0 {
                    let (list, start) = self.first_slot();
                    // The slot at the cursor was emptied by its own tick: the next one starts
                    // later.
                    debug_assert!(start > cursor);
                    if start <= next {
                        self.processing = list;
                        next = start;
                        if !forced && list as usize >= SLOTS {
                            // Nothing else is due before this slot ends, and nothing in it
                            // before its smallest deadline `m`: processing it as late as the
                            // start of `m`'s level-0 window (or at the target) moves its timers
                            // down in one cascade instead of one level per tick. A timer
                            // placed from there on is placed exactly as it would have been
                            // after the slot-by-slot descent, so the order is the same.
                            //
                            // When `m` itself is due by the target, the slot is processed at
                            // `m`: its timers due at `m` fire from this one visit instead of
                            // being cascaded to level 0 and visited again, and the others are
                            // placed exactly as from the start of `m`'s level-0 window, since
                            // the two instants share every digit above level 0.
                            let m = self.minimum[list as usize].deadline;
                            next = if m <= target {
                                m.max(start)
                            } else {
                                (m & !(SLOTS as u64 - 1)).clamp(start, target)
                            };
                        }
                    }
                }
                self.cursor = next;
                self.phase = Phase::Tick;
                continue;
            }
            // Phase::Tick: the slot processed at the cursor, one timer per step.
            let list = self.processing;
            if list != NIL {
                loop {
                    let li = self.links[list as usize].next;
                    if li == list {
                        break;
                    }
                    step!();
                    // The slot is a linked list: the next timer's index is known only now. Ask
                    // for its entry while this one is handled (see `prefetch`).
                    let next = self.pop_front(list, li);
                    if let Some(entry) = self.nodes.get(next.wrapping_sub(BASE) as usize) {
                        prefetch::prefetch(entry);
                    }
                    let idx = li - BASE;
                    let t = self.timer(idx);
                    let (deadline, end) = (t.deadline, t.end);
                    if deadline <= self.cursor {
                        self.fire(idx, on_expire);
                        progress.fired += 1;
                    } else {
                        self.stats.cascades += 1;
                        self.place_at(idx, self.cursor, deadline, end);
                    }
                }
                self.processing = NIL;
            }
            let li = self.links[DEFERRED as usize].next;
            if li != DEFERRED {
                step!();
                self.unlink(li);
                self.place(li - BASE, self.cursor);
                continue;
            }
            self.begin_drain();
        }
    }

    fn check_structure(&self) -> Result<(), &'static str> {
        if self.links.len() != BASE as usize + self.nodes.len() {
            return Err("links and slab disagree in length");
        }
        if self.cursor > self.target {
            return Err("cursor is past the target");
        }
        if self.phase == Phase::Idle && self.cursor != self.target {
            return Err("idle with the cursor short of the target");
        }
        if self.phase != Phase::Tick && self.links[DEFERRED as usize].next != DEFERRED {
            return Err("timers left deferred outside a slot's processing");
        }
        if self.phase != Phase::Tick && self.processing != NIL {
            return Err("a slot marked as processed outside a tick");
        }
        if self.phase != Phase::Drain && self.walk_next != NIL {
            return Err("a drain walk outside a drain");
        }
        // Every list: links agree both ways, every member is live, no cycles.
        let mut seen = alloc::vec![false; self.nodes.len()];
        let mut on_lists = 0usize;
        for list in 0..BASE {
            let mut prev = list;
            let mut li = self.links[list as usize].next;
            while li != list {
                if li < BASE || li as usize >= self.links.len() {
                    return Err("a list names a missing timer or another list's sentinel");
                }
                let idx = (li - BASE) as usize;
                if seen[idx] {
                    return Err("a timer on two lists, or a cycle");
                }
                seen[idx] = true;
                let Entry::Live(t) = &self.nodes[idx] else {
                    return Err("free slot on a list");
                };
                if self.links[li as usize].prev != prev {
                    return Err("prev link broken");
                }
                if (list as usize) < SLOT_LISTS {
                    let (level, slot) = (list as usize / SLOTS, list as usize % SLOTS);
                    if list != self.processing
                        && (level_for(self.cursor, t.deadline) != level
                            || slot_for(level, t.deadline) != slot)
                    {
                        return Err("timer on the wrong level or slot");
                    }
                    if list != self.processing && t.deadline <= self.cursor {
                        return Err("a due timer left in a slot");
                    }
                    let m = self.minimum[list as usize];
                    if t.end < m.end || t.deadline < m.deadline {
                        return Err("a slot's minimum window end or deadline is too high");
                    }
                    if t.end < t.deadline {
                        return Err("window ends before its deadline");
                    }
                }
                if list == OVERDUE && self.phase == Phase::Idle && t.deadline > self.cursor {
                    return Err("an overdue timer is not overdue");
                }
                if t.periodic != self.periodic.contains_key(&(li - BASE)) {
                    return Err("periodic flag and schedule disagree");
                }
                prev = li;
                li = self.links[li as usize].next;
                on_lists += 1;
            }
            if self.links[list as usize].prev != prev {
                return Err("list tail is wrong");
            }
            if (list as usize) < SLOT_LISTS {
                let (level, slot) = (list as usize / SLOTS, list as usize % SLOTS);
                let busy = self.occupied[level] & (1 << slot) != 0;
                if busy != (prev != list) {
                    return Err("occupancy bit disagrees with its slot");
                }
            }
        }
        for (level, &word) in self.occupied.iter().enumerate() {
            if (self.levels & (1 << level) != 0) != (word != 0) {
                return Err("level summary disagrees with the occupancy words");
            }
        }
        if self.levels >> LEVELS != 0 {
            return Err("level summary names a level that does not exist");
        }
        let live = self
            .nodes
            .iter()
            .filter(|e| matches!(e, Entry::Live(_)))
            .count();
        if live != self.len {
            return Err("live count is wrong");
        }
        if on_lists != live {
            return Err("a live timer is on no list");
        }
        let mut free = 0usize;
        let mut i = self.free;
        while i != NIL {
            match self.nodes.get(i as usize) {
                Some(Entry::Free { next, .. }) => i = *next,
                Some(Entry::Live(_)) => return Err("live timer on the free list"),
                None => return Err("free list names a missing slot"),
            }
            free += 1;
            if free > self.nodes.len() {
                return Err("cycle in the free list");
            }
        }
        if free + self.retired + live != self.nodes.len() {
            return Err("a free slot is neither on the free list nor retired");
        }
        for &idx in self.periodic.keys() {
            match self.nodes.get(idx as usize) {
                Some(Entry::Live(t)) if t.periodic => {}
                _ => return Err("a periodic schedule outlived its timer"),
            }
        }
        Ok(())
    }
}

impl<T> Timers<T> for Wheel<T> {
    /// Starts an exact timer (tolerance 0); see [`Wheel::start_with`].
    #[inline]
    fn start(&mut self, expiry: Tick, value: T) -> Result<Handle, Error> {
        self.start_with(expiry, 0, value)
    }

    #[inline]
    fn stop(&mut self, handle: Handle) -> Option<T> {
        let idx = self.resolve(handle)?;
        self.unlink(BASE + idx);
        if self.timer(idx).periodic {
            self.periodic.remove(&idx);
        }
        self.stats.stopped += 1;
        Some(self.release(idx))
    }

    fn now(&self) -> Tick {
        self.cursor
    }

    fn len(&self) -> usize {
        self.len
    }

    /// The earliest deadline: [`Wheel::next_deadline`].
    fn next_expiry(&self) -> Option<Tick> {
        self.next_deadline()
    }

    fn memory_bytes(&self) -> usize {
        self.nodes.capacity() * core::mem::size_of::<Entry<T>>()
            + self.links.capacity() * core::mem::size_of::<Link>()
            + core::mem::size_of::<[SlotMin; SLOT_LISTS]>()
            + core::mem::size_of::<[u64; LEVELS]>()
            + self.periodic.len() * core::mem::size_of::<(u32, Periodic<T>)>()
    }
}

impl<T> Scheme<T> for Wheel<T> {
    fn advance<F>(&mut self, now: Tick, budget: Budget, mut on_expire: F) -> Progress
    where
        F: FnMut(&mut dyn Timers<T>, Expired<T>),
    {
        // A callback may panic and the caller may catch it. Everything the loop changes before
        // calling back is already consistent (the timer fired, the walk's position saved as a
        // budget would save it); only the in-advance mark must not outlive the call, or the
        // next starts would be stamped as if queued from a callback and wait one call too long.
        struct InAdvance<'a, T>(&'a mut Wheel<T>);
        impl<T> Drop for InAdvance<'_, T> {
            fn drop(&mut self) {
                self.0.in_advance = false;
            }
        }
        self.in_advance = true;
        let guard = InAdvance(self);
        guard.0.run(now, budget, &mut on_expire)
    }

    fn check_invariants(&self) -> Result<(), &'static str> {
        self.check_structure()
    }
}
