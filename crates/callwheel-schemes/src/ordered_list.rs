//! Scheme 2: an ordered list of absolute deadlines (Varghese & Lauck, section 3.2; the VMS and
//! UNIX timer queues).
//!
//! ```text
//!   head → [10] ⇄ [10] ⇄ [17] ⇄ [40] ⇄ [40] → NIL      sorted by deadline, start order
//!                                                       among equals (insert after them)
//! ```
//!
//! | operation | cost |
//! |---|---|
//! | start | O(n): search from the head for the insertion point |
//! | stop | O(1): unlink by handle |
//! | per tick | O(1): compare the head; tickless, since the head *is* the next expiry |
//! | range | any deadline |
//!
//! The search starts at the head, as in the paper; this is what makes Table I's old callout
//! grow linearly with the number of outstanding timers.

use crate::arena::NIL;
use crate::clock::{tick_driven_scheme, Core, Step, TickDriven};
use callwheel::Error;
use callwheel::Tick;

const QUEUE: u32 = 1;

/// Scheme 2: one list sorted by absolute deadline.
#[derive(Debug)]
pub struct OrderedList<T> {
    core: Core<T>,
}

impl<T> OrderedList<T> {
    /// An empty list whose slab grows on demand.
    pub fn new() -> OrderedList<T> {
        OrderedList {
            core: Core::growing(1),
        }
    }

    /// An empty list holding at most `capacity` timers.
    pub fn with_capacity(capacity: usize) -> Result<OrderedList<T>, Error> {
        Ok(OrderedList {
            core: Core::new(1, Some(capacity))?,
        })
    }
}

impl<T> Default for OrderedList<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> TickDriven<T> for OrderedList<T> {
    fn core(&self) -> &Core<T> {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core<T> {
        &mut self.core
    }

    fn place(&mut self, idx: u32) {
        self.core.arena.insert_sorted(QUEUE, idx);
    }

    fn detach(&mut self, idx: u32) {
        self.core.arena.unlink(idx);
    }

    fn next_work(&self) -> Option<Tick> {
        let head = self.core.arena.first(QUEUE);
        (head != NIL).then(|| self.core.arena.node(head).expiry)
    }

    fn begin_tick(&mut self, _tick: Tick) {}

    fn step_tick(&mut self, tick: Tick) -> Step {
        let head = self.core.arena.first(QUEUE);
        if head != NIL && self.core.arena.node(head).expiry <= tick {
            self.detach(head);
            Step::Fire(head)
        } else {
            Step::TickDone
        }
    }

    fn check_structure(&self) -> Result<(), &'static str> {
        let arena = &self.core.arena;
        let mut i = arena.first(QUEUE);
        let mut last = 0;
        while i != NIL {
            let node = arena.node(i);
            if node.expiry < last {
                return Err("queue out of order");
            }
            if node.expiry <= self.core.cursor && !self.core.pending_now() {
                return Err("a due timer is still queued");
            }
            last = node.expiry;
            i = node.next;
        }
        Ok(())
    }
}

tick_driven_scheme!(OrderedList);
