//! Storage: the slab of timers (with its free list and generations) and the links of the
//! lists they are on (`links.rs`). A timer touches only its own entry, its own links and its
//! neighbours' links.
//!
//! The slab is the wheel's own rather than the crate's [`Slab`](crate::slab::Slab), which
//! keeps a slot's generation beside its value: here an entry is 16 bytes with no value and 24
//! with a `u64` (with its 8 bytes of links, 24 and 32 per timer). Its deadline takes 8; the
//! window's width past the deadline and the periodic flag 4 (`windows.rs`); the generation the
//! last 4, and the free variant fits beside them, told apart by the generation never being 0.
//! The rules are the crate's (generation bumped on free, a slot retired when its generation is
//! exhausted, the owner checked on every handle).

use alloc::vec::Vec;
use core::num::NonZeroU32;

use super::geometry::{BASE, MAX_TIMERS, NIL};
use super::links::{Link, Links};
use super::windows::Window;
use super::Wheel;
use crate::handle::{Handle, Owner};
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

/// The slab, its free list and the links.
#[derive(Debug)]
pub(super) struct Storage<T> {
    nodes: Vec<Entry<T>>,
    /// The lists' sentinels (`0..BASE`), then the links of timer `i` at `BASE + i`.
    pub(super) links: Links,
    /// Head of the free list of `nodes`, or NIL.
    free: u32,
    capacity: Option<usize>,
    /// Slots retired because their generation was exhausted (they do not count against a fixed
    /// capacity).
    retired: usize,
    /// The identity every handle of this wheel carries.
    owner: Owner,
}

impl<T> Storage<T> {
    pub(super) fn new() -> Storage<T> {
        Storage {
            nodes: Vec::new(),
            links: Links::new(),
            free: NIL,
            capacity: None,
            retired: 0,
            owner: Owner::new(),
        }
    }

    /// Storage for at most `capacity` timers, all allocated here (the caller has checked that
    /// they can be indexed).
    pub(super) fn with_capacity(capacity: usize) -> Result<Storage<T>, Error> {
        let mut s = Self::new();
        let fail = |_| Error::NoMemory;
        s.nodes.try_reserve_exact(capacity).map_err(fail)?;
        s.links.try_reserve_exact(capacity).map_err(fail)?;
        s.capacity = Some(capacity);
        Ok(s)
    }

    /// Room for `additional` timers beyond the `pending` ones: see [`Wheel::reserve`].
    pub(super) fn reserve(&mut self, pending: usize, additional: usize) -> Result<(), Error> {
        let limit = self.capacity.unwrap_or(MAX_TIMERS);
        let full = Error::Full { capacity: limit };
        let wanted = pending
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

    /// See [`Wheel::capacity`].
    pub(super) fn capacity(&self) -> usize {
        match self.capacity {
            Some(capacity) => capacity,
            None => self.nodes.capacity() - self.retired,
        }
    }

    /// See [`Wheel::shrink_to_fit`].
    pub(super) fn shrink_to_fit(&mut self) {
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

    /// Whether a freed slot waits for a new timer. The free list is empty exactly when its
    /// head is NIL, which no slab reaches: one comparison against the length says both "a slot
    /// is free" and "its index is good".
    #[inline(always)]
    pub(super) fn has_free(&self) -> bool {
        (self.free as usize) < self.nodes.len()
    }

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

    /// The identity every handle of this storage carries.
    pub(super) fn owner(&self) -> Owner {
        self.owner
    }

    /// The handle of slot `idx` in generation `generation`.
    #[inline(always)]
    pub(super) fn handle(&self, idx: u32, generation: u32) -> Handle {
        self.owner.handle(idx, generation)
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

    /// The entry of slot `idx`, if the slab has one.
    #[inline(always)]
    pub(super) fn entry(&self, idx: usize) -> Option<&Entry<T>> {
        self.nodes.get(idx)
    }

    /// The slab's entries from slot `from` on (none past its end).
    pub(super) fn entries_from(&self, from: usize) -> &[Entry<T>] {
        &self.nodes[from.min(self.nodes.len())..]
    }

    /// The number of slots in the slab (live, free and retired).
    #[inline(always)]
    pub(super) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The bytes the slab and the links take.
    pub(super) fn memory_bytes(&self) -> usize {
        self.nodes.capacity() * core::mem::size_of::<Entry<T>>()
            + self.links.capacity() * core::mem::size_of::<Link>()
    }

    /// The slab's entries, for tests that age a slot.
    #[cfg(test)]
    pub(super) fn entries_mut(&mut self) -> &mut [Entry<T>] {
        &mut self.nodes
    }

    /// The storage's own invariants: the links as long as the sentinels and the slab, and
    /// every slot live (`live` of them, as the wheel counts them), on the free list or retired.
    pub(super) fn check(&self, live: usize) -> Result<(), &'static str> {
        if self.links.len() != BASE as usize + self.nodes.len() {
            return Err("links and slab disagree in length");
        }
        let counted = self
            .nodes
            .iter()
            .filter(|e| matches!(e, Entry::Live(_)))
            .count();
        if counted != live {
            return Err("live count is wrong");
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
        Ok(())
    }
}

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
        let pending = Timers::len(self);
        self.storage.reserve(pending, additional)
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
        self.storage.capacity()
    }

    /// Gives back the slab's spare capacity (room never used). The slots of stopped and fired
    /// timers stay, free for the next starts: each keeps its generation, which is what keeps
    /// a stale handle from naming a later timer in the same slot. O(1) plus the reallocation.
    pub fn shrink_to_fit(&mut self) {
        self.storage.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Scheme, Timers};
    use alloc::vec::Vec;

    /// Moves the free slot `idx` to `generation`, as 2^32 start/stop cycles would.
    fn age(wheel: &mut Wheel<u32>, idx: u32, generation: u32) {
        match &mut wheel.storage.entries_mut()[idx as usize] {
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
