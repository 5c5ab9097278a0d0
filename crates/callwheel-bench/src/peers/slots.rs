//! The slot table the BinaryHeap and BTreeMap peers share: generation handles that reject a
//! fired or stopped timer even after its slot is reused.

use callwheel::{Handle, Owner};

/// A slot table: handles are `(generation << 32) | index`, so a handle whose timer has fired or
/// been stopped is rejected even after its slot is reused.
#[derive(Debug)]
pub(super) struct Slots<V> {
    pub(super) slots: Vec<(u32, Option<V>)>,
    free: Vec<u32>,
    owner: Owner,
}

impl<V> Default for Slots<V> {
    fn default() -> Self {
        Slots {
            slots: Vec::new(),
            free: Vec::new(),
            owner: Owner::new(),
        }
    }
}

impl<V> Slots<V> {
    pub(super) fn insert(&mut self, value: V) -> (u32, Handle) {
        let index = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize].1 = Some(value);
                i
            }
            None => {
                self.slots.push((0, Some(value)));
                (self.slots.len() - 1) as u32
            }
        };
        let generation = self.slots[index as usize].0;
        (index, self.owner.handle(index, generation))
    }

    /// The index a handle names, if its slot is occupied by the same generation.
    pub(super) fn resolve(&self, handle: Handle) -> Option<u32> {
        let (index, generation) = self.owner.slot(handle)?;
        match self.slots.get(index as usize) {
            Some((g, Some(_))) if *g == generation => Some(index),
            _ => None,
        }
    }

    pub(super) fn get(&self, index: u32) -> Option<&V> {
        self.slots.get(index as usize)?.1.as_ref()
    }

    pub(super) fn get_mut(&mut self, index: u32) -> Option<&mut V> {
        self.slots.get_mut(index as usize)?.1.as_mut()
    }

    pub(super) fn handle(&self, index: u32) -> Handle {
        self.owner.handle(index, self.slots[index as usize].0)
    }

    /// Empties a slot and bumps its generation; returns what it held.
    pub(super) fn remove(&mut self, index: u32) -> Option<V> {
        let slot = self.slots.get_mut(index as usize)?;
        let value = slot.1.take()?;
        slot.0 = slot.0.wrapping_add(1);
        self.free.push(index);
        Some(value)
    }

    pub(super) fn memory_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<(u32, Option<V>)>()
            + self.free.capacity() * std::mem::size_of::<u32>()
    }
}
