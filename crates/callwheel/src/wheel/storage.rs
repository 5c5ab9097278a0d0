//! Storage: the slab of timers (with its free list and generations), and the list operations
//! over the links (`links.rs`) that keep the occupancy bits and the slots' minimums in step. A
//! timer touches only its own entry, its own links and its neighbours' links.
//!
//! The slab is the wheel's own rather than the crate's [`Slab`](crate::slab::Slab), which
//! keeps a slot's generation beside its value: here an entry is 16 bytes with no value and 24
//! with a `u64` (with its 8 bytes of links, 24 and 32 per timer). Its deadline takes 8; the
//! window's width past the deadline and the periodic flag 4 (`windows.rs`); the generation the
//! last 4, and the free variant fits beside them, told apart by the generation never being 0.
//! The rules are the crate's (generation bumped on free, a slot retired when its generation is
//! exhausted, the owner checked on every handle).

use core::num::NonZeroU32;

use super::geometry::{
    fire_inside, level_for, slot_for, slot_start, BASE, DEFERRED, MAX_TIMERS, NIL, OVERDUE, SLOTS,
};
use super::links::Link;
use super::windows::Window;
use super::Wheel;
use crate::advance::Phase;
use crate::handle::Handle;
use crate::time::Tick;
use crate::timers::{Error, Timers};

/// A pending timer.
#[derive(Debug)]
pub(super) struct Timer<T> {
    pub(super) deadline: Tick,
    pub(super) value: T,
    pub(super) window: Window,
    /// Never 0: the free variant of [`Entry`] is the 0.
    pub(super) generation: NonZeroU32,
}

/// One slot of the slab. The free variant fits beside the live one's generation, whose 0 it
/// is, so no separate tag (and no `Option` around the value) costs a word.
#[derive(Debug)]
pub(super) enum Entry<T> {
    Live(Timer<T>),
    /// A free slot on the free list (`next`), or retired (generation exhausted) and on no list.
    /// `generation` is the one its next timer gets.
    Free {
        generation: NonZeroU32,
        next: u32,
    },
}

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

impl<T> Wheel<T> {
    /// Makes room for `additional` more timers than are pending, so that starting that many
    /// allocates nothing. Exact: a start that finds no free slot grows the slab by doubling,
    /// which can leave up to half of it spare; this grows it to what is asked and no further
    /// (a wheel that will hold a million timers then costs 24 bytes per timer plus the value,
    /// and 17 KiB for its slots). On a wheel with a fixed capacity, room was allocated when it
    /// was made; this checks that they fit (and allocates only to replace retired slots).
    ///
    /// [`Error::Full`] when they would not fit (in the fixed capacity, or in the 2^32 - 707
    /// timers a wheel indexes); [`Error::NoMemory`] when the allocator refuses. Either way no
    /// timer changes.
    ///
    /// ```
    /// use callwheel::{Timers, Wheel};
    ///
    /// let mut wheel: Wheel<()> = Wheel::new();
    /// wheel.reserve(1_000)?;
    /// let held = wheel.memory_bytes();
    /// for i in 0..1_000 {
    ///     wheel.start(i, ())?;
    /// }
    /// assert_eq!(wheel.memory_bytes(), held);
    /// # Ok::<(), callwheel::Error>(())
    /// ```
    pub fn reserve(&mut self, additional: usize) -> Result<(), Error> {
        let limit = self.capacity.unwrap_or(MAX_TIMERS);
        let full = Error::Full { capacity: limit };
        let wanted = Timers::len(self)
            .checked_add(additional)
            .filter(|&n| n <= limit)
            .ok_or(full)?;
        // Every slot that is not retired is pending or free: the free ones count as room.
        let usable = self.nodes.len() - self.retired;
        let more = wanted.saturating_sub(usable);
        if self.nodes.len() + more > MAX_TIMERS {
            return Err(full);
        }
        self.nodes
            .try_reserve_exact(more)
            .map_err(|_| Error::NoMemory)?;
        self.reserve_links()
    }

    /// How many timers the wheel holds without allocating: a fixed capacity's own figure, or
    /// the slab's room (pending timers, freed slots and spare capacity, less the retired
    /// slots).
    ///
    /// ```
    /// use callwheel::Wheel;
    ///
    /// let mut wheel: Wheel<()> = Wheel::new();
    /// wheel.reserve(100)?;
    /// assert!(wheel.capacity() >= 100);
    /// # Ok::<(), callwheel::Error>(())
    /// ```
    pub fn capacity(&self) -> usize {
        match self.capacity {
            Some(capacity) => capacity,
            None => self.nodes.capacity() - self.retired,
        }
    }

    /// Gives back the slab's spare capacity (room never used). The slots of stopped and fired
    /// timers stay, free for the next starts: each keeps its generation, which is what keeps
    /// a stale handle from naming a later timer in the same slot. O(1) plus the reallocation.
    pub fn shrink_to_fit(&mut self) {
        if self.capacity.is_none() {
            self.nodes.shrink_to_fit();
            self.links.shrink_to_fit();
        }
    }

    /// Reserves the links for the slab's capacity: left to grow by doubling on its own from
    /// the sentinels' length, the links array would reserve up to twice what it needs.
    #[inline(always)]
    fn reserve_links(&mut self) -> Result<(), Error> {
        let want = BASE as usize + self.nodes.capacity();
        if self.links.capacity() < want {
            self.links
                .try_reserve_exact(want - self.links.len())
                .map_err(|_| Error::NoMemory)?;
        }
        Ok(())
    }

    // ----- the slab ------------------------------------------------------------------------

    /// Takes the free list's first slot (there must be one) for a new timer, on no list;
    /// returns its index and generation.
    #[inline(always)]
    pub(super) fn reuse(&mut self, deadline: Tick, window: Window, value: T) -> (u32, u32) {
        let idx = self.free;
        let entry = &mut self.nodes[idx as usize];
        let Entry::Free { generation, next } = *entry else {
            unreachable!("a live timer on the free list")
        };
        self.free = next;
        *entry = Entry::Live(Timer {
            deadline,
            value,
            window,
            generation,
        });
        (idx, generation.get())
    }

    /// Appends a new slot to the slab for a new timer (on no list), unless a fixed capacity (or
    /// the index space) is used up; returns its index (its generation is 1). Inlined into the
    /// start that grows the slab, itself out of line (measured: called, it cost a filling start
    /// 26 instructions).
    #[inline(always)]
    pub(super) fn grow(&mut self, deadline: Tick, window: Window, value: T) -> Result<u32, Error> {
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
        self.reserve_links()?;
        self.nodes.push(Entry::Live(Timer {
            deadline,
            value,
            window,
            generation: NonZeroU32::MIN,
        }));
        self.links.push_unlinked();
        Ok((self.nodes.len() - 1) as u32)
    }

    /// Frees a live timer that is on no list and returns its value. The slot's generation moves
    /// on, so every handle to it goes stale; a slot whose generation is exhausted is retired,
    /// since reusing it would let a 2^32-old handle match again.
    #[inline(always)]
    pub(super) fn release(&mut self, idx: u32) -> T {
        let generation = self.timer(idx).generation.get();
        self.vacate(idx, generation).0
    }

    /// Frees the live timer at `idx`, whose generation the caller has read, whatever list it is
    /// on (the caller unlinks it after); returns its value and whether it was periodic. One
    /// match on the entry does it all: `stop` calls this right after checking the handle, so
    /// the entry is neither looked up nor checked twice.
    #[inline(always)]
    pub(super) fn vacate(&mut self, idx: u32, generation: u32) -> (T, bool) {
        let (next, new_generation) = match NonZeroU32::new(generation.wrapping_add(1)) {
            Some(following) => {
                let next = self.free;
                self.free = idx;
                (next, following)
            }
            // Past the last generation: retired (its generation no longer matters).
            None => {
                self.retired += 1;
                (NIL, NonZeroU32::MIN)
            }
        };
        let old = core::mem::replace(
            &mut self.nodes[idx as usize],
            Entry::Free {
                generation: new_generation,
                next,
            },
        );
        match old {
            Entry::Live(t) => (t.value, t.window.periodic()),
            Entry::Free { .. } => unreachable!("freeing a free slot"),
        }
    }

    /// The index of the live timer `handle` names, or `None` for a stale or made-up handle.
    #[inline(always)]
    pub(super) fn resolve(&self, handle: Handle) -> Option<u32> {
        let (index, generation) = self.owner.slot(handle)?;
        let Some(Entry::Live(t)) = self.nodes.get(index as usize) else {
            return None;
        };
        if t.generation.get() != generation {
            return None;
        }
        Some(index)
    }

    #[inline(always)]
    pub(super) fn timer(&self, idx: u32) -> &Timer<T> {
        match &self.nodes[idx as usize] {
            Entry::Live(t) => t,
            Entry::Free { .. } => unreachable!("a free slot used as a timer"),
        }
    }

    #[inline(always)]
    pub(super) fn timer_mut(&mut self, idx: u32) -> &mut Timer<T> {
        match &mut self.nodes[idx as usize] {
            Entry::Live(t) => t,
            Entry::Free { .. } => unreachable!("a free slot used as a timer"),
        }
    }

    // ----- the lists -----------------------------------------------------------------------

    /// Takes links entry `li` off its list. When that empties a slot, its occupancy bit and
    /// minimums are cleared; when the drain was about to visit it, the drain moves on.
    #[inline(always)]
    pub(super) fn unlink(&mut self, li: u32) {
        let Link { prev, next } = self.links.unlink(li);
        if li == self.walk_next {
            // `nextsoftcheck`: the timer the drain would visit next is going away.
            self.walk_next = if next == OVERDUE { NIL } else { next };
        }
        // Both neighbours are the same only when they are the list's sentinel: it is empty now
        // (the overdue queue's and deferred list's bits are never set: see `occupied`).
        if prev == next {
            self.slot_emptied(prev);
        }
    }

    /// Takes `li`, the first timer of slot `list`, off it (a slot is never walked); returns the
    /// new first (the sentinel `list` when the slot is now empty).
    #[inline(always)]
    pub(super) fn pop_front(&mut self, list: u32, li: u32) -> u32 {
        let next = self.links.pop_front(list, li);
        if next == list {
            self.slot_emptied(list);
        }
        next
    }

    #[inline(always)]
    pub(super) fn slot_emptied(&mut self, list: u32) {
        let (level, slot) = (list as usize / SLOTS, list as usize % SLOTS);
        let word = &mut self.occupied[level];
        *word &= !(1u64 << slot);
        if *word == 0 {
            self.levels &= !(1u16 << level);
        }
    }

    #[inline(always)]
    pub(super) fn lower(&mut self, list: u32, at: Tick, end: Tick) {
        let m = &mut self.minimum[list as usize];
        m.end = m.end.min(end);
        m.at = m.at.min(at);
    }

    /// The instant this wheel fires a timer with the window `[deadline, end]`: [`fire_at`],
    /// or the deadline on a wheel made by [`Wheel::at_deadlines`].
    #[inline(always)]
    pub(super) fn instant(&self, deadline: Tick, end: Tick) -> Tick {
        // The exact timer's test first: with a tolerance of 0 known where the timer starts,
        // it folds away together with this one.
        if end <= deadline || self.at_deadlines {
            return deadline;
        }
        fire_inside(deadline, end)
    }

    /// Links a timer (on no list) where its firing instant ([`fire_at`](super::geometry::fire_at)) says: overdue,
    /// deferred while a slot is processed, or its digit's slot.
    #[inline(always)]
    pub(super) fn arm(&mut self, idx: u32, deadline: Tick, end: Tick) {
        let at = self.instant(deadline, end);
        if at <= self.cursor {
            self.push_overdue(idx);
        } else if self.adv.phase == Phase::Tick {
            // A slot is being processed: an older timer with the same deadline may still be in
            // it. Place this one once the slot is done, behind it.
            self.links.push_back(DEFERRED, BASE + idx);
        } else {
            self.place_at(idx, self.cursor, at, end);
        }
    }

    /// Places a timer whose firing instant is after `now` on its digit's level.
    #[inline(always)]
    pub(super) fn place(&mut self, idx: u32, now: Tick) {
        let deadline = self.timer(idx).deadline;
        let end = self.end_of(idx);
        self.place_at(idx, now, self.instant(deadline, end), end);
    }

    /// [`Wheel::place`] with the timer's firing instant ([`fire_at`](super::geometry::fire_at)) and window end already
    /// at hand.
    #[inline(always)]
    pub(super) fn place_at(&mut self, idx: u32, now: Tick, at: Tick, end: Tick) {
        let level = level_for(now, at);
        let slot = slot_for(level, at);
        let list = (level * SLOTS + slot) as u32;
        self.links.push_back(list, BASE + idx);
        let word = self.occupied[level];
        let bit = 1u64 << slot;
        // The occupancy first: the words are then no longer needed while the minimums are
        // updated (measured: 2 instructions fewer on a start).
        self.occupied[level] = word | bit;
        self.levels |= 1u16 << level;
        if word & bit == 0 {
            // The first timer of an empty slot: its minimums start from this one (emptying a
            // slot leaves them stale rather than pay a store for it).
            self.minimum[list as usize] = SlotMin { end, at };
        } else {
            self.lower(list, at, end);
        }
    }

    /// Queues a live, unlinked timer as overdue (it fires in the next drain that began after
    /// it was queued: [`AdvanceState::overdue_stamp`](crate::advance::AdvanceState::overdue_stamp)).
    #[inline(always)]
    pub(super) fn push_overdue(&mut self, idx: u32) {
        let stamp = self.adv.short_overdue_stamp();
        let t = self.timer_mut(idx);
        t.window = t.window.with_payload(stamp);
        let li = BASE + idx;
        self.links.push_back(OVERDUE, li);
        // An append to the list being walked after the walk reached its end: visit it too.
        if self.adv.phase == Phase::Drain && self.walk_next == NIL {
            self.walk_next = li;
        }
    }

    #[inline(always)]
    pub(super) fn overdue_pending(&self) -> bool {
        self.links.next(OVERDUE) != OVERDUE
    }

    /// Whether `advance` has work at the cursor itself.
    #[inline(always)]
    pub(super) fn pending_now(&self) -> bool {
        self.adv.phase != Phase::Idle || self.overdue_pending()
    }

    /// The lowest occupied slot of the lowest occupied level, as (list, start): the next slot
    /// with work. The wheel must hold a timer in some slot.
    #[inline(always)]
    pub(super) fn first_slot(&self) -> (u32, Tick) {
        let level = self.levels.trailing_zeros() as usize;
        let slot = self.occupied[level].trailing_zeros() as usize;
        (
            (level * SLOTS + slot) as u32,
            slot_start(self.cursor, level, slot),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Scheme, Timers};
    use alloc::vec::Vec;

    /// Moves the free slot `idx` to `generation`, as 2^32 start/stop cycles would.
    fn age(wheel: &mut Wheel<u32>, idx: u32, generation: u32) {
        match &mut wheel.nodes[idx as usize] {
            Entry::Free { generation: g, .. } => *g = NonZeroU32::new(generation).unwrap(),
            Entry::Live(_) => panic!("slot {idx} is live"),
        }
    }

    #[test]
    fn an_entry_is_16_bytes_with_no_value_and_24_with_a_u64() {
        // What the module's docs and the memory figures rely on: the free variant is the live
        // one's generation 0, so no tag word is added.
        assert_eq!(core::mem::size_of::<Entry<()>>(), 16);
        assert_eq!(core::mem::size_of::<Entry<u64>>(), 24);
        assert_eq!(core::mem::size_of::<super::super::links::Link>(), 8);
    }

    #[test]
    fn a_slot_whose_generation_is_exhausted_is_retired_and_never_reused() {
        let mut wheel: Wheel<u32> = Wheel::with_capacity(2).unwrap();
        let first = wheel.start(10, 1).unwrap();
        let idx = first.index();
        assert_eq!(wheel.stop(first), Some(1));
        // The slot's next life is its last.
        age(&mut wheel, idx, u32::MAX);
        let last = wheel.start(10, 2).unwrap();
        assert_eq!((last.index(), last.generation()), (idx, u32::MAX));
        assert_eq!(wheel.stop(last), Some(2));
        wheel.check_invariants().unwrap();
        // Retired: the next start takes a new slot, and no handle of any generation of the
        // old one names anything.
        let next = wheel.start(10, 3).unwrap();
        assert_ne!(next.index(), idx);
        for stale in [first, last] {
            assert_eq!(wheel.stop(stale), None);
            assert!(!wheel.contains(stale));
        }
        // A retired slot does not count against the fixed capacity: one more timer fits.
        let another = wheel.start(20, 4).unwrap();
        assert_ne!(another.index(), idx);
        assert!(matches!(
            wheel.start(30, 5),
            Err(Error::Full { capacity: 2 })
        ));
        wheel.check_invariants().unwrap();
        let mut fired = Vec::new();
        wheel.advance_to(100, |_, e| fired.push(e.value));
        assert_eq!(fired, [3, 4]);
    }
}
