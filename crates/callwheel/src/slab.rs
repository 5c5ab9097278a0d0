//! Generation-checked storage: a slab whose slots are named by [`Handle`]s.
//!
//! Costello's callouts live in one array linked through a free list, and a handle is an index
//! plus an ID bumped whenever the callout is freed. [`Slab`] is that design with fallible growth
//! and an [`Owner`]: a slot's generation moves on each time it is freed, so a stale handle never
//! acts on the slot's next value; a slot whose generation is exhausted is retired, never handed
//! out again; a handle of another slab names nothing. The scheme family's arena and the callout
//! pool keep their timers here. The production wheel keeps its own slab, with the generation
//! inside its entry of 16 bytes plus the value (here a slot's generation sits beside the value,
//! which for the wheel's entry would cost a word per timer), and so does a timer set, whose
//! handles have the 64-bit layout the C interface fixes.

use alloc::vec::Vec;
use core::ops::{Index, IndexMut};

use crate::handle::{Handle, Owner};
use crate::timers::Error;

/// The most slots a slab holds: every `u32` index but `u32::MAX`, which its users keep free to
/// mark the end of their lists.
pub const MAX_SLOTS: usize = u32::MAX as usize;

#[derive(Debug)]
enum Slot<T> {
    Live {
        generation: u32,
        value: T,
    },
    /// On the free list (`next`, or `u32::MAX` at its end), or retired and on no list.
    Free {
        generation: u32,
        next: u32,
    },
}

/// Values in numbered slots, each named by a [`Handle`] that stops working when its value is
/// removed.
///
/// ```
/// use callwheel::slab::Slab;
///
/// let mut slab = Slab::new();
/// let a = slab.insert("a")?;
/// let h = slab.handle(a).unwrap();
/// assert_eq!(slab.resolve(h), Some(a));
/// assert_eq!(slab.remove(a), Some("a"));
/// let b = slab.insert("b")?; // reuses the slot, with a new generation
/// assert_eq!(a, b);
/// assert_eq!(slab.resolve(h), None); // the old handle is stale
/// assert_eq!(Slab::<&str>::new().resolve(slab.handle(b).unwrap()), None); // and foreign here
/// # Ok::<(), callwheel::Error>(())
/// ```
#[derive(Debug)]
pub struct Slab<T> {
    slots: Vec<Slot<T>>,
    /// The first free slot, or `u32::MAX`.
    free: u32,
    len: usize,
    /// `Some(n)`: never more than `n` slots (reserved at construction, never grown).
    fixed: Option<usize>,
    retired: usize,
    owner: Owner,
}

const NONE: u32 = u32::MAX;

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab::new()
    }
}

impl<T> Slab<T> {
    /// An empty slab that grows on demand, with a new [`Owner`].
    pub fn new() -> Slab<T> {
        Slab {
            slots: Vec::new(),
            free: NONE,
            len: 0,
            fixed: None,
            retired: 0,
            owner: Owner::new(),
        }
    }

    /// An empty slab with room for `capacity` values reserved now; with `fixed`, it never holds
    /// more slots than that and never allocates again (a slot retired after 2^32 uses is then
    /// lost to it).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a capacity above [`MAX_SLOTS`]; [`Error::NoMemory`] when the
    /// reservation is refused. (A fixed capacity of 0 is a slab that refuses every insert.)
    pub fn with_capacity(capacity: usize, fixed: bool) -> Result<Slab<T>, Error> {
        if capacity > MAX_SLOTS {
            return Err(Error::Config {
                reason: "a slab holds at most 2^32 - 1 slots",
            });
        }
        let mut slab = Slab::new();
        slab.slots
            .try_reserve_exact(capacity)
            .map_err(|_| Error::NoMemory)?;
        slab.fixed = fixed.then_some(capacity);
        Ok(slab)
    }

    /// Stores `value` in a free slot (or a new one) and returns the slot's index.
    ///
    /// # Errors
    ///
    /// [`Error::Full`] when a fixed slab has no free slot, or every index is in use;
    /// [`Error::NoMemory`] when growth is refused. The slab is unchanged then.
    pub fn insert(&mut self, value: T) -> Result<u32, Error> {
        self.reserve()?;
        self.len += 1;
        if self.free == NONE {
            self.slots.push(Slot::Live {
                generation: 0,
                value,
            });
            return Ok((self.slots.len() - 1) as u32);
        }
        let idx = self.free;
        let slot = &mut self.slots[idx as usize];
        let Slot::Free { generation, next } = *slot else {
            unreachable!("the free list holds free slots only");
        };
        *slot = Slot::Live { generation, value };
        self.free = next;
        Ok(idx)
    }

    /// Makes sure the next [`Slab::insert`] succeeds without allocating, for callers that must
    /// not fail once they have started a change.
    ///
    /// # Errors
    ///
    /// As [`Slab::insert`]; the slab is unchanged then.
    pub fn reserve(&mut self) -> Result<(), Error> {
        if self.free != NONE {
            return Ok(());
        }
        let limit = self.fixed.unwrap_or(MAX_SLOTS);
        if self.slots.len() >= limit {
            return Err(Error::Full { capacity: limit });
        }
        // Growth follows the caller's input: a refused allocation is an error to return, not
        // an abort.
        self.slots.try_reserve(1).map_err(|_| Error::NoMemory)
    }

    /// Takes the value out of slot `idx`; `None` (touching nothing) when the slot holds none.
    /// The slot's generation moves on, so every handle to it goes stale; a slot whose
    /// generation is exhausted is retired instead of reused, so no handle ever names two
    /// values.
    pub fn remove(&mut self, idx: u32) -> Option<T> {
        let slot = self.slots.get_mut(idx as usize)?;
        let Slot::Live { generation, .. } = *slot else {
            return None;
        };
        let freed = match generation.checked_add(1) {
            Some(generation) => {
                let freed = Slot::Free {
                    generation,
                    next: self.free,
                };
                self.free = idx;
                freed
            }
            None => {
                self.retired += 1;
                Slot::Free {
                    generation,
                    next: NONE,
                }
            }
        };
        self.len -= 1;
        match core::mem::replace(slot, freed) {
            Slot::Live { value, .. } => Some(value),
            Slot::Free { .. } => None,
        }
    }

    /// The handle of the value in slot `idx`; `None` when the slot holds none.
    #[inline]
    pub fn handle(&self, idx: u32) -> Option<Handle> {
        match self.slots.get(idx as usize)? {
            Slot::Live { generation, .. } => Some(self.owner.handle(idx, *generation)),
            Slot::Free { .. } => None,
        }
    }

    /// The slot whose value `handle` names: `None` for a stale handle, another slab's, or one
    /// made up.
    #[inline]
    pub fn resolve(&self, handle: Handle) -> Option<u32> {
        let (idx, generation) = self.owner.slot(handle)?;
        match self.slots.get(idx as usize)? {
            Slot::Live { generation: g, .. } if *g == generation => Some(idx),
            _ => None,
        }
    }

    /// The value in slot `idx`, if any.
    #[inline]
    pub fn get(&self, idx: u32) -> Option<&T> {
        match self.slots.get(idx as usize)? {
            Slot::Live { value, .. } => Some(value),
            Slot::Free { .. } => None,
        }
    }

    /// The value in slot `idx`, if any, to change.
    #[inline]
    pub fn get_mut(&mut self, idx: u32) -> Option<&mut T> {
        match self.slots.get_mut(idx as usize)? {
            Slot::Live { value, .. } => Some(value),
            Slot::Free { .. } => None,
        }
    }

    /// How many values the slab holds.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the slab holds no value.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many slots exist (live, free and retired): one past the largest index used.
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// The slots a fixed slab may hold, or those a growing one holds without allocating.
    pub fn capacity(&self) -> usize {
        self.fixed.unwrap_or(self.slots.capacity())
    }

    /// Slots retired because their generation was exhausted.
    pub fn retired(&self) -> usize {
        self.retired
    }

    /// Bytes held by the slots (the reservation included).
    pub fn memory_bytes(&self) -> usize {
        self.slots.capacity() * core::mem::size_of::<Slot<T>>()
    }

    /// The identity this slab's handles carry.
    pub fn owner(&self) -> Owner {
        self.owner
    }

    /// The values with their slot indices, in index order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        self.slots.iter().enumerate().filter_map(|(i, s)| match s {
            Slot::Live { value, .. } => Some((i as u32, value)),
            Slot::Free { .. } => None,
        })
    }

    /// Verifies the slab's invariants by brute force (the count of values, the free list:
    /// free slots only, no cycle, every free slot but the retired ones on it); `Err` names the
    /// first one broken.
    pub fn check(&self) -> Result<(), &'static str> {
        if self.iter().count() != self.len {
            return Err("slab: live count is wrong");
        }
        let mut on_list = 0usize;
        let mut i = self.free;
        while i != NONE {
            match self.slots.get(i as usize) {
                Some(Slot::Free { next, .. }) => i = *next,
                Some(Slot::Live { .. }) => return Err("slab: live slot on the free list"),
                None => return Err("slab: free list names a missing slot"),
            }
            on_list += 1;
            if on_list > self.slots.len() {
                return Err("slab: cycle in the free list");
            }
        }
        if on_list + self.retired + self.len != self.slots.len() {
            return Err("slab: a free slot is neither on the free list nor retired");
        }
        Ok(())
    }
}

impl<T> Index<u32> for Slab<T> {
    type Output = T;

    /// The value in slot `idx`, for callers that know it holds one (a slot on their own lists).
    ///
    /// # Panics
    ///
    /// When slot `idx` holds no value: the caller's own bookkeeping is broken.
    #[inline]
    fn index(&self, idx: u32) -> &T {
        match self.get(idx) {
            Some(v) => v,
            None => panic!("slab slot {idx} holds no value"),
        }
    }
}

impl<T> IndexMut<u32> for Slab<T> {
    /// As [`Index::index`].
    #[inline]
    fn index_mut(&mut self, idx: u32) -> &mut T {
        match self.get_mut(idx) {
            Some(v) => v,
            None => panic!("slab slot {idx} holds no value"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_whose_generation_is_exhausted_is_retired_and_never_reused() {
        let mut slab: Slab<u32> = Slab::with_capacity(2, true).unwrap();
        let idx = slab.insert(1).unwrap();
        let first = slab.handle(idx).unwrap();
        assert_eq!(slab.remove(idx), Some(1));
        // As 2^32 - 1 insert/remove cycles would leave it: the slot's next life is its last.
        slab.slots[idx as usize] = Slot::Free {
            generation: u32::MAX,
            next: NONE,
        };
        assert_eq!(slab.insert(2).unwrap(), idx);
        let last = slab.handle(idx).unwrap();
        assert_eq!(last.generation(), u32::MAX);
        assert_eq!(slab.remove(idx), Some(2));
        assert_eq!((slab.retired(), slab.len()), (1, 0));
        slab.check().unwrap();
        // Retired: the next insert takes the other slot; a fixed slab of two then has none
        // left (the retired one is lost to it), and no old handle resolves.
        let other = slab.insert(3).unwrap();
        assert_ne!(other, idx);
        assert_eq!(slab.insert(4), Err(Error::Full { capacity: 2 }));
        for stale in [first, last] {
            assert_eq!(slab.resolve(stale), None);
        }
        slab.check().unwrap();
    }

    #[test]
    fn a_reservation_makes_the_next_insert_allocation_free() {
        let mut slab: Slab<u8> = Slab::with_capacity(1, true).unwrap();
        slab.reserve().unwrap();
        let a = slab.insert(1).unwrap();
        assert_eq!(slab.reserve(), Err(Error::Full { capacity: 1 }));
        slab.remove(a);
        slab.reserve().unwrap();
        let mut growing: Slab<u8> = Slab::new();
        growing.reserve().unwrap();
        assert!(growing.capacity() >= 1);
    }

    #[test]
    fn removing_a_free_or_missing_slot_touches_nothing() {
        let mut slab: Slab<u8> = Slab::new();
        let a = slab.insert(7).unwrap();
        assert_eq!(slab.remove(a), Some(7));
        assert_eq!(slab.remove(a), None);
        assert_eq!(slab.remove(u32::MAX), None);
        assert_eq!((slab.get(a), slab.handle(a), slab.len()), (None, None, 0));
        slab.check().unwrap();
    }

    #[test]
    fn capacities_out_of_range_are_refused_up_front() {
        assert!(matches!(
            Slab::<u8>::with_capacity(MAX_SLOTS + 1, false),
            Err(Error::Config { .. })
        ));
        let mut empty = Slab::<u8>::with_capacity(0, true).unwrap();
        assert_eq!(empty.insert(1), Err(Error::Full { capacity: 0 }));
        // 2^52 bytes: past any address space, so the reservation is refused, not attempted.
        // The result goes through `black_box`: a reservation never used is one the optimizer
        // may remove, and with it the refusal (a release build would then see `Ok`).
        let huge = core::hint::black_box(Slab::<[u8; 1 << 20]>::with_capacity(MAX_SLOTS, true));
        assert!(matches!(huge, Err(Error::NoMemory)));
    }
}
