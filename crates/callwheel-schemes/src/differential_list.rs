//! The old BSD callout list, `calltodo` (Costello & Varghese, section 2, Figure 1): Scheme 2
//! with differential times.
//!
//! ```text
//!   calltodo → [c_time 3] → [c_time 0] → [c_time 5] → NIL
//!              due in 3      also in 3     in 8
//! ```
//!
//! Each entry holds the ticks between its predecessor's expiry and its own, the head's counted
//! from now. `hardclock()` therefore decrements only the head while nothing is due. Once the
//! head is due, 4.4BSD's `hardclock()` keeps walking: it decrements every entry already due
//! (an overdue entry's `c_time` goes negative and counts the ticks it is late) and the first
//! one not yet due, so a clock interrupt with `v` callouts waiting for `softclock()` costs
//! `34 + 11v` instructions in Table II. This list does the same:
//!
//! ```text
//!   at tick 11, softclock not yet run:
//!   calltodo → [c_time -1] → [c_time -1] → [c_time 2] → [c_time 4] → NIL
//!              due at 10      due at 10      due at 13    due at 17
//!              └── overdue: counted from now ──┘ └ from now ┘ └ from its predecessor
//! ```
//!
//! An entry after an overdue one (negative `c_time`) counts from now; any other entry counts
//! from its predecessor's expiry, as in the kernel, whose `timeout()` skips the overdue entries
//! without subtracting them and whose `untimeout()` folds only a positive `c_time` into the
//! successor.
//!
//! | operation | cost |
//! |---|---|
//! | start (`timeout`) | O(n): walk from the head summing `c_time` |
//! | stop by handle | O(1): fold the entry's `c_time` into its successor |
//! | [`DifferentialList::search`] (`untimeout(func, arg)`) | O(n): walk from the head to the first match |
//! | per tick ([`DifferentialList::hardclock`]) | O(1) + O(v): the head, and every entry due but not yet run |
//!
//! Stopping by handle is O(1) here; the historical `untimeout(func, arg)` had no handle and
//! searched the list from its head, which is [`DifferentialList::search`]: the callout layer's
//! `untimeout` on this structure is 4.4BSD's. Both walks count the entries they skip (the `t` of
//! Costello & Varghese's Table II): [`DifferentialList::entries_skipped`] and the count `search`
//! returns.

use crate::arena::NIL;
use crate::clock::{tick_driven_scheme, Core, Step, TickDriven, OVERDUE};
use callwheel::Error;
use callwheel::Tick;

const CALLTODO: u32 = 1;

/// The BSD `calltodo` differential list.
#[derive(Debug)]
pub struct DifferentialList<T> {
    core: Core<T>,
    /// The tick the head's `c_time` is counted from (the last `hardclock`).
    synced: Tick,
    /// Entries the starts' walks have skipped, in all.
    skipped: u64,
}

fn c_time<T>(core: &Core<T>, idx: u32) -> i64 {
    core.arena.node(idx).aux as i64
}

fn set_c_time<T>(core: &mut Core<T>, idx: u32, v: i64) {
    core.arena.node_mut(idx).aux = v as u64;
}

impl<T> DifferentialList<T> {
    /// An empty list whose slab grows on demand.
    pub fn new() -> DifferentialList<T> {
        DifferentialList {
            core: Core::growing(1),
            synced: 0,
            skipped: 0,
        }
    }

    /// An empty list holding at most `capacity` timers (the 1995 kernel's fixed callout table).
    pub fn with_capacity(capacity: usize) -> Result<DifferentialList<T>, Error> {
        Ok(DifferentialList {
            core: Core::new(1, Some(capacity))?,
            synced: 0,
            skipped: 0,
        })
    }

    /// Entries that every start so far has skipped in its walk of `calltodo` before finding its
    /// place: the sum of Table II's `t` over the `timeout` calls (a count, never a time).
    pub fn entries_skipped(&self) -> u64 {
        self.skipped
    }

    /// 4.4BSD's `untimeout(func, arg)` search: walks the timers from the one due first (the
    /// overdue queue, then `calltodo` from its head) and returns the first value `matches`
    /// accepts — the one due first, the one started first among equal deadlines — with the
    /// number of entries skipped before it (Table II's `t`; every entry when nothing matches).
    /// Stop the timer found with its handle, which is O(1).
    pub fn search<F: FnMut(&T) -> bool>(&self, mut matches: F) -> (Option<&T>, u64) {
        let arena = &self.core.arena;
        let mut skipped = 0;
        for list in [OVERDUE, CALLTODO] {
            let mut at = arena.first(list);
            while at != NIL {
                let node = arena.node(at);
                if matches(&node.value) {
                    return (Some(&node.value), skipped);
                }
                skipped += 1;
                at = node.next;
            }
        }
        (None, skipped)
    }

    /// 4.4BSD's `hardclock()` on `calltodo`: time has moved to `tick` (a jump of several ticks
    /// is the same as that many interrupts). Decrements the head and, while the entry just
    /// decremented is overdue, the next one, each overdue entry keeping its own lateness: the
    /// walk the kernel made at every clock interrupt, over the `v` entries due but not yet run.
    /// Returns whether any timer is due (the kernel's `needsoft`). A `tick` at or before the
    /// last one changes nothing. `c_time` is a signed 64-bit count, as the kernel's `int` was,
    /// so the list's time moves at most 2^63 − 1 ticks at once and no further than the most
    /// overdue entry (the head) can count its lateness; a later call takes the rest of a longer
    /// jump (a callout layer moved to the end of time with its softclock behind). The timers
    /// still fire by their deadlines, which the list keeps apart.
    ///
    /// The callout layer calls it at every clock interrupt (`Backing::hardclock` there); the
    /// shared tick loop calls it before each tick it processes, where it has nothing left to do.
    pub fn hardclock(&mut self, tick: Tick) -> bool {
        if tick > self.synced {
            // An empty list has nothing to count: its time goes straight to `tick`.
            let head = self.core.arena.first(CALLTODO);
            let reach = if head == NIL {
                tick
            } else {
                let earliest = self.core.arena.node(head).expiry;
                tick.min(self.synced.saturating_add(i64::MAX as u64))
                    .min(earliest.saturating_add(i64::MAX as u64))
            };
            // The ticks still to take off the entry at `at`: all of them while the entries
            // before it were already overdue (it counts from now), those past its
            // predecessor's expiry when that one has just become due (it counted from there).
            let mut elapsed = i64::try_from(reach - self.synced).unwrap_or(i64::MAX);
            let mut at = head;
            while at != NIL {
                let c = c_time(&self.core, at);
                let left = c.saturating_sub(elapsed);
                set_c_time(&mut self.core, at, left);
                if left >= 0 {
                    break;
                }
                elapsed -= c.max(0);
                at = self.core.arena.node(at).next;
            }
            self.synced = reach;
        }
        let head = self.core.arena.first(CALLTODO);
        (head != NIL && c_time(&self.core, head) <= 0) || self.core.pending_now()
    }
}

impl<T> Default for DifferentialList<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> TickDriven<T> for DifferentialList<T> {
    fn core(&self) -> &Core<T> {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core<T> {
        &mut self.core
    }

    fn max_expiry(&self) -> Tick {
        // c_time is a signed 64-bit difference.
        self.core.cursor.saturating_add(i64::MAX as u64)
    }

    fn place(&mut self, idx: u32) {
        // Counted from now; an overdue entry (also counted from now) is skipped without being
        // subtracted, as 4.4BSD's timeout() does.
        let from_now = self.core.arena.node(idx).expiry as i128 - self.synced as i128;
        let mut rest = i64::try_from(from_now).unwrap_or(i64::MIN);
        let mut at = self.core.arena.first(CALLTODO);
        let mut skipped = 0;
        // Skip every entry due at or before the new one (equal deadlines: after them).
        while at != NIL {
            let c = c_time(&self.core, at);
            if c > rest {
                break;
            }
            rest -= c.max(0);
            skipped += 1;
            at = self.core.arena.node(at).next;
        }
        self.skipped += skipped;
        set_c_time(&mut self.core, idx, rest);
        if at == NIL {
            self.core.arena.push_back(CALLTODO, idx);
        } else {
            // The successor now counts from the new entry, unless the new one is overdue
            // (only when time has moved past it since the scheme's cursor: the successor
            // then keeps counting from now).
            if rest >= 0 {
                let c = c_time(&self.core, at);
                set_c_time(&mut self.core, at, c - rest);
            }
            self.core.arena.insert_before(at, idx);
        }
    }

    fn detach(&mut self, idx: u32) {
        let next = self.core.arena.node(idx).next;
        let c = c_time(&self.core, idx);
        // An overdue entry's successor counts from now already.
        if next != NIL && c > 0 {
            let folded = c_time(&self.core, next) + c;
            set_c_time(&mut self.core, next, folded);
        }
        self.core.arena.unlink(idx);
    }

    fn next_work(&self) -> Option<Tick> {
        let head = self.core.arena.first(CALLTODO);
        (head != NIL).then(|| {
            let expiry = self.core.arena.node(head).expiry;
            expiry.max(self.core.cursor.saturating_add(1))
        })
    }

    fn begin_tick(&mut self, tick: Tick) {
        self.hardclock(tick);
    }

    fn step_tick(&mut self, tick: Tick) -> Step {
        // softclock(): take the head while it is due. The callout layer's hardclock may have
        // moved the list's time past the tick being processed, so the head's expiry decides.
        let head = self.core.arena.first(CALLTODO);
        if head != NIL && self.core.arena.node(head).expiry <= tick {
            self.detach(head);
            Step::Fire(head)
        } else {
            Step::TickDone
        }
    }

    fn check_structure(&self) -> Result<(), &'static str> {
        let arena = &self.core.arena;
        let mut i = arena.first(CALLTODO);
        // The expiry the next entry counts from: now after an overdue entry (and at the head),
        // its predecessor's otherwise.
        let mut from = self.synced as i128;
        let mut overdue_run = true;
        while i != NIL {
            let c = c_time(&self.core, i);
            if c < 0 && !overdue_run {
                return Err("an overdue c_time after an entry not yet due");
            }
            let at = from + c as i128;
            if at != arena.node(i).expiry as i128 {
                return Err("c_time sums disagree with the deadline");
            }
            overdue_run = c < 0;
            from = if overdue_run { self.synced as i128 } else { at };
            i = arena.node(i).next;
        }
        Ok(())
    }
}

tick_driven_scheme!(DifferentialList);
