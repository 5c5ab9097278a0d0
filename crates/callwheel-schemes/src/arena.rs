//! Timer storage shared by the schemes: a slab of nodes addressed by index, with a generation per
//! slot, and doubly-linked lists threaded through the nodes by index.
//!
//! Costello's callouts live in one array allocated at boot, linked into the wheel's buckets and
//! the free list through members of the callout itself; handles are an index plus an ID that is
//! bumped whenever the callout is freed. This is the same design with a slab that can grow.
//!
//! Invariants (checked by [`Arena::check`]):
//! - a node is *live* (holds a value) or *free* (on the free list, `value == None`);
//! - every live node is on exactly one list, named by its `list` field, or on none (`list == NIL`)
//!   when the scheme keeps it elsewhere (the heap and the tree);
//! - `prev`/`next` of the nodes on a list and the list's `first`/`last` agree;
//! - a slot whose generation is exhausted is retired and never handed out again, so a stale
//!   handle can never match a newer timer.

use alloc::vec::Vec;

use callwheel::Tick;
use callwheel::{Error, Handle, Owner};

/// The null index.
pub(crate) const NIL: u32 = u32::MAX;

/// One timer's storage. `aux` is the scheme's own per-timer word (remaining ticks, a differential
/// time, a heap position, a sequence number).
#[derive(Debug)]
pub(crate) struct Node<T> {
    pub(crate) expiry: Tick,
    pub(crate) aux: u64,
    pub(crate) prev: u32,
    pub(crate) next: u32,
    pub(crate) list: u32,
    generation: u32,
    pub(crate) value: Option<T>,
}

#[derive(Clone, Copy, Debug)]
struct Head {
    first: u32,
    last: u32,
}

const EMPTY: Head = Head {
    first: NIL,
    last: NIL,
};

/// The slab and the list heads of one scheme.
#[derive(Debug)]
pub(crate) struct Arena<T> {
    nodes: Vec<Node<T>>,
    heads: Vec<Head>,
    free: u32,
    len: usize,
    capacity: Option<usize>,
    /// Slots retired because their generation was exhausted (they do not count against a fixed
    /// capacity).
    retired: usize,
    /// The list being walked, or NIL (see [`Arena::walk_begin`]).
    walk_list: u32,
    /// The next node the walk will visit: Costello's `nextsoftcheck`.
    walk_next: u32,
    /// The identity every handle of this arena carries.
    owner: Owner,
}

impl<T> Arena<T> {
    /// An arena with `lists` list heads whose slab grows on demand.
    pub(crate) fn growing(lists: usize) -> Arena<T> {
        Arena {
            nodes: Vec::new(),
            heads: alloc::vec![EMPTY; lists],
            free: NIL,
            len: 0,
            capacity: None,
            retired: 0,
            walk_list: NIL,
            walk_next: NIL,
            owner: Owner::new(),
        }
    }

    /// An arena with `lists` list heads; `capacity` fixes the number of slots, allocated here
    /// once (`None`: the slab grows on demand). A capacity that cannot be indexed or allocated
    /// is an error.
    pub(crate) fn new(lists: usize, capacity: Option<usize>) -> Result<Arena<T>, Error> {
        // The list heads are sized by the caller (a hashed wheel's bucket count): a refused
        // allocation is an error, not an abort.
        let mut heads = Vec::new();
        heads
            .try_reserve_exact(lists)
            .map_err(|_| Error::NoMemory)?;
        heads.resize(lists, EMPTY);
        let mut arena = Arena {
            heads,
            ..Self::growing(0)
        };
        if let Some(cap) = capacity {
            if cap >= NIL as usize {
                return Err(Error::Config {
                    reason: "a fixed capacity must be below 2^32 - 1 timers",
                });
            }
            arena
                .nodes
                .try_reserve_exact(cap)
                .map_err(|_| Error::Config {
                    reason: "cannot allocate the fixed capacity",
                })?;
            arena.capacity = Some(cap);
        }
        Ok(arena)
    }

    /// Number of live nodes.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Makes room for `lists` list heads, so that [`Arena::set_lists`] up to that count does not
    /// allocate; a refusal is `Error::NoMemory` with nothing changed.
    pub(crate) fn reserve_lists(&mut self, lists: usize) -> Result<(), Error> {
        let more = lists.saturating_sub(self.heads.len());
        self.heads
            .try_reserve_exact(more)
            .map_err(|_| Error::NoMemory)
    }

    /// Sets the number of list heads to `lists`; every list at or past the new count, and every
    /// new one, must be (and is) empty.
    pub(crate) fn set_lists(&mut self, lists: usize) {
        debug_assert!(self.heads[lists.min(self.heads.len())..]
            .iter()
            .all(|h| h.first == NIL));
        self.heads.resize(lists, EMPTY);
    }

    /// Bytes held by the slab and the list heads.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.nodes.capacity() * core::mem::size_of::<Node<T>>()
            + self.heads.capacity() * core::mem::size_of::<Head>()
    }

    /// Takes a free slot (or grows the slab) for a new timer, on no list.
    pub(crate) fn alloc(&mut self, expiry: Tick, value: T) -> Result<u32, Error> {
        let idx = if self.free != NIL {
            let idx = self.free;
            let node = &mut self.nodes[idx as usize];
            self.free = node.next;
            node.expiry = expiry;
            node.aux = 0;
            node.prev = NIL;
            node.next = NIL;
            node.list = NIL;
            node.value = Some(value);
            idx
        } else {
            let full = match self.capacity {
                Some(cap) => self.nodes.len() >= cap + self.retired,
                // Index NIL is reserved; a slab never grows that far in practice.
                None => self.nodes.len() >= NIL as usize,
            };
            if full {
                return Err(Error::Full {
                    capacity: self.capacity.unwrap_or(NIL as usize),
                });
            }
            // Growth follows the caller's input: a refused allocation is an error to return,
            // not an abort.
            self.nodes.try_reserve(1).map_err(|_| Error::NoMemory)?;
            self.nodes.push(Node {
                expiry,
                aux: 0,
                prev: NIL,
                next: NIL,
                list: NIL,
                generation: 0,
                value: Some(value),
            });
            (self.nodes.len() - 1) as u32
        };
        self.len += 1;
        Ok(idx)
    }

    /// Frees a live node that is on no list and returns its value. The slot's generation moves
    /// on, so every handle to it goes stale.
    pub(crate) fn free(&mut self, idx: u32) -> T {
        let node = &mut self.nodes[idx as usize];
        debug_assert_eq!(node.list, NIL, "freeing a node that is still linked");
        let value = node.value.take().expect("freeing a free node");
        self.len -= 1;
        if node.generation == u32::MAX {
            // Retire the slot: reusing it would let a 2^32-old handle match again.
            node.next = NIL;
            self.retired += 1;
        } else {
            node.generation += 1;
            node.next = self.free;
            self.free = idx;
        }
        value
    }

    /// The handle of a live node.
    #[inline]
    pub(crate) fn handle(&self, idx: u32) -> Handle {
        self.owner.handle(idx, self.nodes[idx as usize].generation)
    }

    /// The index of the live node `handle` names, or `None` for a stale or made-up handle.
    #[inline]
    pub(crate) fn resolve(&self, handle: Handle) -> Option<u32> {
        let (index, generation) = self.owner.slot(handle)?;
        let node = self.nodes.get(index as usize)?;
        (node.value.is_some() && node.generation == generation).then_some(index)
    }

    #[inline]
    pub(crate) fn node(&self, idx: u32) -> &Node<T> {
        &self.nodes[idx as usize]
    }

    #[inline]
    pub(crate) fn node_mut(&mut self, idx: u32) -> &mut Node<T> {
        &mut self.nodes[idx as usize]
    }

    // ----- lists -------------------------------------------------------------------------

    #[inline]
    pub(crate) fn first(&self, list: u32) -> u32 {
        self.heads[list as usize].first
    }

    #[inline]
    pub(crate) fn is_list_empty(&self, list: u32) -> bool {
        self.heads[list as usize].first == NIL
    }

    /// Appends an unlinked node at the tail of `list` (FIFO: Costello's footnote).
    #[inline]
    pub(crate) fn push_back(&mut self, list: u32, idx: u32) {
        let last = self.heads[list as usize].last;
        {
            let node = &mut self.nodes[idx as usize];
            debug_assert_eq!(node.list, NIL);
            node.list = list;
            node.prev = last;
            node.next = NIL;
        }
        if last == NIL {
            self.heads[list as usize].first = idx;
        } else {
            self.nodes[last as usize].next = idx;
        }
        self.heads[list as usize].last = idx;
        // Costello's footnote: an insert at the tail extends a list the walk may think it has
        // finished; point the walk at the newcomer so it is not skipped.
        if list == self.walk_list && self.walk_next == NIL {
            self.walk_next = idx;
        }
    }

    /// Links an unlinked node just before `before`, which is on some list.
    pub(crate) fn insert_before(&mut self, before: u32, idx: u32) {
        let (list, prev) = {
            let b = &self.nodes[before as usize];
            (b.list, b.prev)
        };
        {
            let node = &mut self.nodes[idx as usize];
            debug_assert_eq!(node.list, NIL);
            node.list = list;
            node.prev = prev;
            node.next = before;
        }
        self.nodes[before as usize].prev = idx;
        if prev == NIL {
            self.heads[list as usize].first = idx;
        } else {
            self.nodes[prev as usize].next = idx;
        }
    }

    /// Links an unlinked node into `list`, kept sorted by deadline, after every node with the
    /// same deadline (so equal deadlines stay in start order). O(position): searched from the
    /// head, as the paper's Scheme 2 does.
    pub(crate) fn insert_sorted(&mut self, list: u32, idx: u32) {
        let expiry = self.nodes[idx as usize].expiry;
        let mut at = self.first(list);
        while at != NIL && self.nodes[at as usize].expiry <= expiry {
            at = self.nodes[at as usize].next;
        }
        if at == NIL {
            self.push_back(list, idx);
        } else {
            self.insert_before(at, idx);
        }
    }

    /// Removes a node from whatever list it is on (no-op when on none).
    #[inline]
    pub(crate) fn unlink(&mut self, idx: u32) {
        let (list, prev, next) = {
            let n = &self.nodes[idx as usize];
            (n.list, n.prev, n.next)
        };
        if list == NIL {
            return;
        }
        if idx == self.walk_next {
            // `nextsoftcheck`: the node the walk would visit next is going away.
            self.walk_next = next;
        }
        if prev == NIL {
            self.heads[list as usize].first = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NIL {
            self.heads[list as usize].last = prev;
        } else {
            self.nodes[next as usize].prev = prev;
        }
        let n = &mut self.nodes[idx as usize];
        n.list = NIL;
        n.prev = NIL;
        n.next = NIL;
    }

    /// Unlinks and returns the first node of `list`.
    #[inline]
    pub(crate) fn pop_front(&mut self, list: u32) -> Option<u32> {
        let first = self.heads[list as usize].first;
        if first == NIL {
            return None;
        }
        self.unlink(first);
        Some(first)
    }

    // ----- the walk (nextsoftcheck) ---------------------------------------------------------

    /// Starts walking `list` from its head. Only one walk exists at a time; unlinking the node
    /// the walk would visit next moves the walk on, and appending to the walked list after the
    /// walk reached its end makes the walk visit the new node.
    pub(crate) fn walk_begin(&mut self, list: u32) {
        self.walk_list = list;
        self.walk_next = self.heads[list as usize].first;
    }

    /// Whether a walk of `list` is in progress (a node appended to it now will be visited).
    #[inline]
    pub(crate) fn walking(&self, list: u32) -> bool {
        self.walk_list == list
    }

    /// The node the walk visits next (NIL at the end), without moving the walk.
    #[inline]
    pub(crate) fn walk_peek(&self) -> u32 {
        self.walk_next
    }

    /// Returns the next node of the walk and moves the walk past it; NIL at the end.
    #[inline]
    pub(crate) fn walk_take(&mut self) -> u32 {
        let idx = self.walk_next;
        if idx != NIL {
            self.walk_next = self.nodes[idx as usize].next;
        }
        idx
    }

    /// Ends the walk.
    pub(crate) fn walk_end(&mut self) {
        self.walk_list = NIL;
        self.walk_next = NIL;
    }

    /// Verifies every invariant by brute force; `Err` names the first one broken.
    pub(crate) fn check(&self) -> Result<(), &'static str> {
        let mut on_lists = 0usize;
        for (l, head) in self.heads.iter().enumerate() {
            let mut prev = NIL;
            let mut i = head.first;
            let mut steps = 0usize;
            while i != NIL {
                let n = self
                    .nodes
                    .get(i as usize)
                    .ok_or("list names a missing node")?;
                if n.value.is_none() {
                    return Err("free node on a list");
                }
                if n.list != l as u32 {
                    return Err("node's list field disagrees with the list it is on");
                }
                if n.prev != prev {
                    return Err("prev link broken");
                }
                prev = i;
                i = n.next;
                steps += 1;
                if steps > self.nodes.len() {
                    return Err("cycle in a list");
                }
            }
            if head.last != prev {
                return Err("list tail is wrong");
            }
            on_lists += steps;
        }
        let live = self.nodes.iter().filter(|n| n.value.is_some()).count();
        if live != self.len {
            return Err("live count is wrong");
        }
        let unlisted = self
            .nodes
            .iter()
            .filter(|n| n.value.is_some() && n.list == NIL)
            .count();
        if on_lists + unlisted != live {
            return Err("a live node is on a list that does not hold it");
        }
        let mut free = 0usize;
        let mut i = self.free;
        while i != NIL {
            let n = self
                .nodes
                .get(i as usize)
                .ok_or("free list names a missing node")?;
            if n.value.is_some() {
                return Err("live node on the free list");
            }
            i = n.next;
            free += 1;
            if free > self.nodes.len() {
                return Err("cycle in the free list");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_whose_generation_is_exhausted_is_retired_and_never_reused() {
        let mut arena: Arena<u32> = Arena::new(1, Some(2)).unwrap();
        let idx = arena.alloc(10, 1).unwrap();
        let first = arena.handle(idx);
        assert_eq!(arena.free(idx), 1);
        // As 2^32 - 1 start/stop cycles would leave it: the slot's next life is its last.
        arena.nodes[idx as usize].generation = u32::MAX;
        assert_eq!(arena.alloc(10, 2).unwrap(), idx);
        let last = arena.handle(idx);
        assert_eq!(last.generation(), u32::MAX);
        assert_eq!(arena.free(idx), 2);
        // Retired: the next two allocations take new slots (a retired one does not count
        // against the fixed capacity of 2), a third is refused, no old handle resolves.
        let a = arena.alloc(20, 3).unwrap();
        let b = arena.alloc(30, 4).unwrap();
        assert!(a != idx && b != idx && a != b);
        assert!(matches!(
            arena.alloc(40, 5),
            Err(Error::Full { capacity: 2 })
        ));
        for stale in [first, last] {
            assert_eq!(arena.resolve(stale), None);
        }
    }
}
