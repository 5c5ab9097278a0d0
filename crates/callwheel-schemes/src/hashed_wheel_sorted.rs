//! Scheme 5: a hashed timing wheel with a sorted list per bucket (Varghese & Lauck, section
//! 6.1.1).
//!
//! ```text
//!   bucket = deadline & (size - 1)
//!   ┌───┬───┬───┬───┐
//!   │ 0 │ 1 │ 2 │ 3 │ …       each bucket sorted by absolute deadline (start order among
//!   └─┬─┴───┴───┴───┘          equals), so a visit looks at the head only
//!     ▼
//!   [4] → [4+size] → [4+3·size]
//! ```
//!
//! | operation | cost |
//! |---|---|
//! | start | O(1) on average when n < size and deadlines hash evenly; O(n) worst case |
//! | stop | O(1) |
//! | per tick | O(1): compare the bucket's head |
//! | range | any deadline |
//!
//! The paper's verdict stands: start "depends too much on the hash distribution". With a
//! size of 1 it is Scheme 2. Busy marks let a sparse wheel skip empty buckets.

use crate::arena::NIL;
use crate::clock::{tick_driven_scheme, Core, Step, TickDriven};
use crate::hashed::{self, Table};
use callwheel::Error;
use callwheel::Tick;

/// Scheme 5: hashed wheel, sorted buckets.
#[derive(Debug)]
pub struct HashedWheelSorted<T> {
    core: Core<T>,
    table: Table,
}

impl<T> HashedWheelSorted<T> {
    /// The largest `bits` accepted: 2^26 buckets.
    pub const MAX_BITS: u32 = hashed::MAX_BITS;

    /// A wheel of `2^bits` buckets whose slab grows on demand.
    pub fn new(bits: u32) -> Result<HashedWheelSorted<T>, Error> {
        Self::build(bits, None)
    }

    /// A wheel of `2^bits` buckets holding at most `capacity` timers.
    pub fn with_capacity(bits: u32, capacity: usize) -> Result<HashedWheelSorted<T>, Error> {
        Self::build(bits, Some(capacity))
    }

    fn build(bits: u32, capacity: Option<usize>) -> Result<HashedWheelSorted<T>, Error> {
        let table = Table::new(bits)?;
        Ok(HashedWheelSorted {
            core: Core::new(table.size(), capacity)?,
            table,
        })
    }

    /// The number of buckets.
    pub fn size(&self) -> usize {
        self.table.size()
    }

    /// The earliest deadline among the pending timers, exactly (or the wheel's own time when
    /// `advance` has work at it), where [`Timers::next_expiry`](callwheel::Timers::next_expiry)
    /// may answer a bucket whose timers belong to a later rotation. O(1) expected when the
    /// next busy bucket holds a timer due this rotation; otherwise one look at every timer,
    /// which also makes later answers O(1) until the earliest one fires. `None` when nothing
    /// is pending.
    pub fn earliest(&mut self) -> Option<Tick> {
        if self.core.arena.len() == 0 {
            return None;
        }
        if self.core.pending_now() {
            return Some(self.core.cursor);
        }
        self.table.earliest(&self.core, |list, t| {
            let head = self.core.arena.first(list);
            head != NIL && self.core.arena.node(head).expiry == t
        })
    }
}

impl<T> TickDriven<T> for HashedWheelSorted<T> {
    fn core(&self) -> &Core<T> {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core<T> {
        &mut self.core
    }

    fn place(&mut self, idx: u32) {
        let expiry = self.core.arena.node(idx).expiry;
        let list = self.table.list_of(expiry);
        self.core.arena.insert_sorted(list, idx);
        self.table.mark(&self.core, list, expiry);
    }

    fn detach(&mut self, idx: u32) {
        let node = self.core.arena.node(idx);
        let list = node.list;
        self.table.leaving(idx, node.expiry, node.next);
        self.core.arena.unlink(idx);
        self.table.unmark_if_empty(&self.core, list);
    }

    fn next_work(&self) -> Option<Tick> {
        self.table.next_busy(&self.core)
    }

    fn next_work_until(&mut self, target: Tick) -> Option<Tick> {
        self.table.next_work_until(&self.core, target)
    }

    fn work_at(&self, t: Tick) -> bool {
        self.table.work_at(&self.core, t)
    }

    fn extra_bytes(&self) -> usize {
        self.table.memory_bytes()
    }

    fn begin_tick(&mut self, _tick: Tick) {}

    fn step_tick(&mut self, tick: Tick) -> Step {
        let head = self.core.arena.first(self.table.list_of(tick));
        if head != NIL && self.core.arena.node(head).expiry == tick {
            self.detach(head);
            self.table.fired_at(tick);
            Step::Fire(head)
        } else {
            Step::TickDone
        }
    }

    fn check_structure(&self) -> Result<(), &'static str> {
        self.table.check(&self.core)?;
        for b in 0..self.table.size() {
            let mut i = self.core.arena.first(b as u32 + 1);
            let mut last = 0;
            while i != NIL {
                let node = self.core.arena.node(i);
                if node.expiry < last {
                    return Err("bucket out of order");
                }
                last = node.expiry;
                i = node.next;
            }
        }
        Ok(())
    }
}

tick_driven_scheme!(HashedWheelSorted);
