//! Scheme 4: the basic timing wheel for intervals within a fixed range (Varghese & Lauck,
//! section 5, Figure 5).
//!
//! ```text
//!   MaxInterval slots, one per tick of the range; the pointer moves one slot per tick
//!   ┌───┬───┬───┬───┬───┬───┐
//!   │   │ ● │   │ ● │   │   │   slot of a timer = deadline mod MaxInterval
//!   └───┴───┴─▲─┴───┴───┴───┘   every timer in the slot the pointer reaches is due
//!            now
//! ```
//!
//! | operation | cost |
//! |---|---|
//! | start | O(1) |
//! | stop | O(1) |
//! | per tick | O(1) plus the timers that fire |
//! | range | deadlines at most MaxInterval ticks ahead; further is [`Error::BeyondRange`] |
//!
//! Because no slot ever holds timers of two different rotations, a visit fires the whole slot
//! and examines nothing else; that is the scheme's whole point, paid for with one slot per tick
//! of range. A longer interval is refused rather than wrapped into a wrong slot.

use crate::arena::NIL;
use crate::clock::{tick_driven_scheme, Core, Step, TickDriven};
use callwheel::Error;
use callwheel::Tick;

/// Scheme 4: one slot per tick of the range.
#[derive(Debug)]
pub struct BasicWheel<T> {
    core: Core<T>,
    slots: u64,
}

impl<T> BasicWheel<T> {
    /// The largest MaxInterval accepted: 2^26 slots.
    pub const MAX_SLOTS: u64 = 1 << 26;

    /// A wheel accepting deadlines up to `max_interval` ticks ahead of the cursor.
    pub fn new(max_interval: u64) -> Result<BasicWheel<T>, Error> {
        Self::build(max_interval, None)
    }

    /// The same, holding at most `capacity` timers.
    pub fn with_capacity(max_interval: u64, capacity: usize) -> Result<BasicWheel<T>, Error> {
        Self::build(max_interval, Some(capacity))
    }

    fn build(max_interval: u64, capacity: Option<usize>) -> Result<BasicWheel<T>, Error> {
        if max_interval == 0 || max_interval > Self::MAX_SLOTS {
            return Err(Error::Config {
                reason: "a basic wheel's MaxInterval must be between 1 and 2^26 ticks",
            });
        }
        Ok(BasicWheel {
            core: Core::new(max_interval as usize, capacity)?,
            slots: max_interval,
        })
    }

    /// MaxInterval: how far ahead a deadline may be.
    pub fn max_interval(&self) -> u64 {
        self.slots
    }

    #[inline]
    fn slot_list(&self, tick: Tick) -> u32 {
        (tick % self.slots) as u32 + 1
    }
}

impl<T> TickDriven<T> for BasicWheel<T> {
    fn core(&self) -> &Core<T> {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core<T> {
        &mut self.core
    }

    fn max_expiry(&self) -> Tick {
        self.core.cursor.saturating_add(self.slots)
    }

    #[inline]
    fn place(&mut self, idx: u32) {
        let list = self.slot_list(self.core.arena.node(idx).expiry);
        self.core.arena.push_back(list, idx);
    }

    #[inline]
    fn detach(&mut self, idx: u32) {
        self.core.arena.unlink(idx);
    }

    fn begin_tick(&mut self, _tick: Tick) {}

    #[inline]
    fn step_tick(&mut self, tick: Tick) -> Step {
        // A timer started during this tick for a full MaxInterval ahead shares the slot; it sits
        // behind the due ones (insertion at the tail) and must wait for the next rotation.
        let head = self.core.arena.first(self.slot_list(tick));
        if head != NIL && self.core.arena.node(head).expiry == tick {
            self.detach(head);
            Step::Fire(head)
        } else {
            Step::TickDone
        }
    }

    fn check_structure(&self) -> Result<(), &'static str> {
        for slot in 0..self.slots {
            let mut i = self.core.arena.first(slot as u32 + 1);
            while i != NIL {
                let node = self.core.arena.node(i);
                if node.expiry % self.slots != slot {
                    return Err("timer in the wrong slot");
                }
                if node.expiry <= self.core.cursor && !self.core.pending_now() {
                    return Err("a due timer was left in its slot");
                }
                if node.expiry > self.core.cursor.saturating_add(self.slots) {
                    return Err("a timer beyond MaxInterval");
                }
                i = node.next;
            }
        }
        Ok(())
    }
}

tick_driven_scheme!(BasicWheel);
