//! The levels: which slots hold timers (an occupancy word per level, and a word marking the
//! non-empty levels) and, per slot, lower bounds on its timers' window ends and firing
//! instants. What `advance` and the wake-up queries read to find the next slot with work
//! without visiting a list; the lists themselves are the storage's (`storage.rs`).

use alloc::boxed::Box;

use super::geometry::{slot_start, LEVELS, SLOTS, SLOT_LISTS};
use crate::time::Tick;

/// Lower bounds on the window ends and the firing instants ([`fire_at`](super::geometry::fire_at)) of the timers in
/// one slot.
#[derive(Clone, Copy, Debug)]
pub(super) struct SlotMin {
    pub(super) end: Tick,
    pub(super) at: Tick,
}

pub(super) const NO_MIN: SlotMin = SlotMin {
    end: Tick::MAX,
    at: Tick::MAX,
};

/// The occupancy bits and the slots' minimums.
#[derive(Debug)]
pub(super) struct Levels {
    /// Bit `s` of word `l` is set while slot `s` of level `l` holds a timer. The extra last
    /// word stands for the overdue queue and the deferred list (lists 704 and 705, "level 11"):
    /// its bits are never set, so clearing one when either empties changes nothing, and
    /// unlinking need not ask which kind of list it left.
    occupied: [u64; LEVELS + 1],
    /// Bit `l` is set while `occupied[l]` is not zero.
    busy: u16,
    /// Each slot's minimums, kept from the timers placed in it since it was last emptied
    /// (stale while it is empty).
    minimum: Box<[SlotMin; SLOT_LISTS]>,
}

impl Levels {
    pub(super) fn new() -> Levels {
        Levels {
            occupied: [0; LEVELS + 1],
            busy: 0,
            minimum: Box::new([NO_MIN; SLOT_LISTS]),
        }
    }

    /// Whether no slot holds a timer.
    #[inline(always)]
    pub(super) fn is_empty(&self) -> bool {
        self.busy == 0
    }

    /// The bits of the levels that hold timers.
    #[inline(always)]
    pub(super) fn busy_levels(&self) -> u16 {
        self.busy
    }

    /// The occupancy word of level `level`.
    #[inline(always)]
    pub(super) fn occupied(&self, level: usize) -> u64 {
        self.occupied[level]
    }

    /// Whether slot `list` holds a timer.
    #[inline(always)]
    pub(super) fn is_occupied(&self, list: u32) -> bool {
        self.occupied[list as usize / SLOTS] & (1 << (list as usize % SLOTS)) != 0
    }

    /// The minimums of slot `list` (meaningful while it holds a timer).
    #[inline(always)]
    pub(super) fn minimum(&self, list: u32) -> SlotMin {
        self.minimum[list as usize]
    }

    /// A timer with firing instant `at` and window end `end` has joined slot `slot` of level
    /// `level` (list `list`): the slot is occupied, and its minimums start from this timer
    /// when it was empty, or come down to it.
    #[inline(always)]
    pub(super) fn occupy(&mut self, level: usize, slot: usize, list: u32, at: Tick, end: Tick) {
        let word = self.occupied[level];
        let bit = 1u64 << slot;
        // The occupancy first: the words are then no longer needed while the minimums are
        // updated (measured: 2 instructions fewer on a start).
        self.occupied[level] = word | bit;
        self.busy |= 1u16 << level;
        if word & bit == 0 {
            // The first timer of an empty slot: its minimums start from this one (emptying a
            // slot leaves them stale rather than pay a store for it).
            self.minimum[list as usize] = SlotMin { end, at };
        } else {
            self.lower(list, at, end);
        }
    }

    /// Slot `list`'s minimums come down to `at` and `end` (a timer in it moved within it).
    #[inline(always)]
    pub(super) fn lower(&mut self, list: u32, at: Tick, end: Tick) {
        let m = &mut self.minimum[list as usize];
        m.end = m.end.min(end);
        m.at = m.at.min(at);
    }

    /// List `list` has become empty: its occupancy bit goes (nothing, for the overdue queue
    /// and the deferred list, whose bits are never set).
    #[inline(always)]
    pub(super) fn emptied(&mut self, list: u32) {
        let (level, slot) = (list as usize / SLOTS, list as usize % SLOTS);
        let word = &mut self.occupied[level];
        *word &= !(1u64 << slot);
        if *word == 0 {
            self.busy &= !(1u16 << level);
        }
    }

    /// The lowest occupied slot of the lowest occupied level, as (list, start) for a wheel at
    /// `cursor`: the next slot with work. Some slot must be occupied.
    #[inline(always)]
    pub(super) fn first_slot(&self, cursor: Tick) -> (u32, Tick) {
        let level = self.busy.trailing_zeros() as usize;
        let slot = self.occupied[level].trailing_zeros() as usize;
        (
            (level * SLOTS + slot) as u32,
            slot_start(cursor, level, slot),
        )
    }

    /// Every slot empty (the minimums are left stale, as emptying leaves them).
    pub(super) fn clear(&mut self) {
        self.occupied = [0; LEVELS + 1];
        self.busy = 0;
    }

    /// The bytes the levels take.
    pub(super) const fn memory_bytes() -> usize {
        core::mem::size_of::<[SlotMin; SLOT_LISTS]>() + core::mem::size_of::<[u64; LEVELS + 1]>()
    }

    /// The levels' own invariants: no bit for the overdue queue or the deferred list, and the
    /// level word in step with the occupancy words. (That each bit agrees with its list, and
    /// each minimum with its timers, the wheel's checker verifies against the lists.)
    pub(super) fn check(&self) -> Result<(), &'static str> {
        if self.occupied[LEVELS] != 0 {
            return Err("an occupancy bit set for the overdue queue or the deferred list");
        }
        for (level, &word) in self.occupied.iter().enumerate() {
            if (self.busy & (1 << level) != 0) != (word != 0) {
                return Err("level summary disagrees with the occupancy words");
            }
        }
        if self.busy >> LEVELS != 0 {
            return Err("level summary names a level that does not exist");
        }
        Ok(())
    }
}
