//! The old BSD callout list, `calltodo` (Costello & Varghese, section 2, Figure 1): Scheme 2
//! with differential times.
//!
//! ```text
//!   calltodo → [c_time 3] → [c_time 0] → [c_time 5] → NIL
//!              due in 3      also in 3     in 8
//! ```
//!
//! Each entry holds the ticks between its predecessor's expiry and its own, the head's counted
//! from now. `hardclock()` therefore only decrements the head; an entry whose `c_time` reaches
//! zero (or below, if the softclock fell behind) is due, and so is every zero after it.
//!
//! | operation | cost |
//! |---|---|
//! | start (`timeout`) | O(n): walk from the head summing `c_time` |
//! | stop by handle | O(1): fold the entry's `c_time` into its successor |
//! | [`DifferentialList::search`] (`untimeout(func, arg)`) | O(n): walk from the head to the first match |
//! | per tick (`hardclock`) | O(1): decrement the head (tickless here: jump by the head's `c_time`) |
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

    /// `hardclock()`: time has moved to `tick`; decrement the head by the elapsed ticks.
    fn hardclock(&mut self, tick: Tick) {
        let head = self.core.arena.first(CALLTODO);
        if head != NIL {
            let elapsed = (tick - self.synced) as i64;
            let c = c_time(&self.core, head);
            set_c_time(&mut self.core, head, c.saturating_sub(elapsed));
        }
        self.synced = tick;
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
        let mut rest = (self.core.arena.node(idx).expiry - self.synced) as i64;
        let mut at = self.core.arena.first(CALLTODO);
        let mut skipped = 0;
        // Skip every entry due at or before the new one (equal deadlines: after them).
        while at != NIL {
            let c = c_time(&self.core, at);
            if c > rest {
                break;
            }
            rest -= c;
            skipped += 1;
            at = self.core.arena.node(at).next;
        }
        self.skipped += skipped;
        set_c_time(&mut self.core, idx, rest);
        if at == NIL {
            self.core.arena.push_back(CALLTODO, idx);
        } else {
            let c = c_time(&self.core, at);
            set_c_time(&mut self.core, at, c - rest);
            self.core.arena.insert_before(at, idx);
        }
    }

    fn detach(&mut self, idx: u32) {
        let next = self.core.arena.node(idx).next;
        if next != NIL {
            let folded = c_time(&self.core, next) + c_time(&self.core, idx);
            set_c_time(&mut self.core, next, folded);
        }
        self.core.arena.unlink(idx);
    }

    fn next_work(&self) -> Option<Tick> {
        let head = self.core.arena.first(CALLTODO);
        (head != NIL).then(|| {
            let c = c_time(&self.core, head).max(1) as u64;
            self.synced.saturating_add(c)
        })
    }

    fn begin_tick(&mut self, tick: Tick) {
        self.hardclock(tick);
    }

    fn step_tick(&mut self, _tick: Tick) -> Step {
        // softclock(): take the head while it is due.
        let head = self.core.arena.first(CALLTODO);
        if head != NIL && c_time(&self.core, head) <= 0 {
            self.detach(head);
            Step::Fire(head)
        } else {
            Step::TickDone
        }
    }

    fn check_structure(&self) -> Result<(), &'static str> {
        let arena = &self.core.arena;
        let mut i = arena.first(CALLTODO);
        let mut at = self.synced as i128;
        let mut first = true;
        while i != NIL {
            let c = c_time(&self.core, i);
            if !first && c < 0 {
                return Err("a negative c_time after the head");
            }
            at += c as i128;
            if at != arena.node(i).expiry as i128 {
                return Err("c_time sums disagree with the deadline");
            }
            first = false;
            i = arena.node(i).next;
        }
        Ok(())
    }
}

tick_driven_scheme!(DifferentialList);
