//! Scheme 1: straightforward (Varghese & Lauck, section 3.1).
//!
//! Every timer keeps the ticks remaining before it expires; each tick decrements every one of
//! them and fires those that reach zero. Starting and stopping are O(1) (append to, unlink
//! from, one list), but PERTICKBOOKKEEPING is O(n). The paper recommends it where n is small and
//! memory is tight; here it is the yardstick the other schemes are measured against.
//!
//! | operation | cost |
//! |---|---|
//! | start | O(1) |
//! | stop | O(1) |
//! | per tick | O(n): one decrement per outstanding timer |
//! | range | any deadline (ticks are visited one by one, so far ones cost time, not memory) |
//!
//! The list is kept in start order and walked front to back, so equal deadlines fire in the
//! order they were started.

use crate::arena::NIL;
use crate::clock::{tick_driven_scheme, Core, Step, TickDriven};
use callwheel::Error;
use callwheel::Tick;

const ALL: u32 = 1;

/// Scheme 1: one unsorted list, decremented every tick.
#[derive(Debug)]
pub struct Straightforward<T> {
    core: Core<T>,
}

impl<T> Straightforward<T> {
    /// An empty structure whose slab grows on demand.
    pub fn new() -> Straightforward<T> {
        Straightforward {
            core: Core::growing(1),
        }
    }

    /// An empty structure holding at most `capacity` timers.
    pub fn with_capacity(capacity: usize) -> Result<Straightforward<T>, Error> {
        Ok(Straightforward {
            core: Core::new(1, Some(capacity))?,
        })
    }
}

impl<T> Default for Straightforward<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> TickDriven<T> for Straightforward<T> {
    fn core(&self) -> &Core<T> {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core<T> {
        &mut self.core
    }

    fn place(&mut self, idx: u32) {
        let mut remaining = self.core.arena.node(idx).expiry - self.core.cursor;
        if self.core.arena.walking(ALL) {
            // Started while this tick's decrements are under way (from a callback, or between
            // budgeted calls): the walk will reach it and decrement it once for this tick.
            remaining += 1;
        }
        self.core.arena.node_mut(idx).aux = remaining;
        self.core.arena.push_back(ALL, idx);
    }

    fn detach(&mut self, idx: u32) {
        self.core.arena.unlink(idx);
    }

    fn begin_tick(&mut self, _tick: Tick) {
        self.core.arena.walk_begin(ALL);
    }

    fn step_tick(&mut self, _tick: Tick) -> Step {
        let idx = self.core.arena.walk_take();
        if idx == NIL {
            return Step::TickDone;
        }
        let node = self.core.arena.node_mut(idx);
        node.aux -= 1;
        if node.aux == 0 {
            self.detach(idx);
            Step::Fire(idx)
        } else {
            Step::Worked
        }
    }

    fn check_structure(&self) -> Result<(), &'static str> {
        let mut i = self.core.arena.first(ALL);
        while i != NIL {
            let node = self.core.arena.node(i);
            if node.aux == 0 {
                return Err("a timer with no ticks remaining is still listed");
            }
            i = node.next;
        }
        Ok(())
    }
}

tick_driven_scheme!(Straightforward);
