//! Timer storage shared by the schemes: a slab of nodes addressed by index, with a generation per
//! slot, and doubly-linked lists threaded through the nodes by index.
//!
//! Costello's callouts live in one array allocated at boot, linked into the wheel's buckets
//! through members of the callout itself; handles are an index plus an ID that is bumped
//! whenever the callout is freed. The nodes here live in the core's generation-checked
//! [`Slab`], which owns the free list, the generations and the handles.
//!
//! Invariants (checked by [`Arena::check`], beyond the slab's own):
//! - every live node is on exactly one list, named by its `list` field, or on none (`list == NIL`)
//!   when the scheme keeps it elsewhere (the heap and the tree);
//! - `prev`/`next` of the nodes on a list and the list's `first`/`last` agree.

use alloc::vec::Vec;

use callwheel::slab::Slab;
use callwheel::Tick;
use callwheel::{Error, Handle};

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
    pub(crate) value: T,
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
    nodes: Slab<Node<T>>,
    heads: Vec<Head>,
    /// The list being walked, or NIL (see [`Arena::walk_begin`]).
    walk_list: u32,
    /// The next node the walk will visit: Costello's `nextsoftcheck`.
    walk_next: u32,
}

impl<T> Arena<T> {
    /// An arena with `lists` list heads whose slab grows on demand.
    pub(crate) fn growing(lists: usize) -> Arena<T> {
        Arena {
            nodes: Slab::new(),
            heads: alloc::vec![EMPTY; lists],
            walk_list: NIL,
            walk_next: NIL,
        }
    }

    /// An arena with `lists` list heads; `capacity` fixes the number of slots, allocated here
    /// once (`None`: the slab grows on demand). A capacity that cannot be indexed is
    /// [`Error::Config`], one that cannot be allocated [`Error::NoMemory`].
    pub(crate) fn new(lists: usize, capacity: Option<usize>) -> Result<Arena<T>, Error> {
        // The list heads are sized by the caller (a hashed wheel's bucket count): a refused
        // allocation is an error, not an abort.
        let mut heads = Vec::new();
        heads
            .try_reserve_exact(lists)
            .map_err(|_| Error::NoMemory)?;
        heads.resize(lists, EMPTY);
        let nodes = match capacity {
            Some(cap) => Slab::with_capacity(cap, true)?,
            None => Slab::new(),
        };
        Ok(Arena {
            nodes,
            heads,
            walk_list: NIL,
            walk_next: NIL,
        })
    }

    /// Number of live nodes.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
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
        self.nodes.memory_bytes() + self.heads.capacity() * core::mem::size_of::<Head>()
    }

    /// Takes a free slot (or grows the slab) for a new timer, on no list.
    pub(crate) fn alloc(&mut self, expiry: Tick, value: T) -> Result<u32, Error> {
        self.nodes.insert(Node {
            expiry,
            aux: 0,
            prev: NIL,
            next: NIL,
            list: NIL,
            value,
        })
    }

    /// Frees a live node that is on no list and returns its value. The slot's generation moves
    /// on, so every handle to it goes stale.
    pub(crate) fn free(&mut self, idx: u32) -> T {
        debug_assert_eq!(
            self.nodes[idx].list, NIL,
            "freeing a node that is still linked"
        );
        self.nodes.remove(idx).expect("freeing a free node").value
    }

    /// The handle of a live node.
    #[inline]
    pub(crate) fn handle(&self, idx: u32) -> Handle {
        self.nodes.handle(idx).expect("the handle of a free node")
    }

    /// The index of the live node `handle` names, or `None` for a stale or made-up handle.
    #[inline]
    pub(crate) fn resolve(&self, handle: Handle) -> Option<u32> {
        self.nodes.resolve(handle)
    }

    /// The node in slot `idx`, if it is live (for checks that must not trust the links).
    pub(crate) fn get(&self, idx: u32) -> Option<&Node<T>> {
        self.nodes.get(idx)
    }

    #[inline]
    pub(crate) fn node(&self, idx: u32) -> &Node<T> {
        &self.nodes[idx]
    }

    #[inline]
    pub(crate) fn node_mut(&mut self, idx: u32) -> &mut Node<T> {
        &mut self.nodes[idx]
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
            let node = &mut self.nodes[idx];
            debug_assert_eq!(node.list, NIL);
            node.list = list;
            node.prev = last;
            node.next = NIL;
        }
        if last == NIL {
            self.heads[list as usize].first = idx;
        } else {
            self.nodes[last].next = idx;
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
            let b = &self.nodes[before];
            (b.list, b.prev)
        };
        {
            let node = &mut self.nodes[idx];
            debug_assert_eq!(node.list, NIL);
            node.list = list;
            node.prev = prev;
            node.next = before;
        }
        self.nodes[before].prev = idx;
        if prev == NIL {
            self.heads[list as usize].first = idx;
        } else {
            self.nodes[prev].next = idx;
        }
    }

    /// Links an unlinked node into `list`, kept sorted by deadline, after every node with the
    /// same deadline (so equal deadlines stay in start order). O(position): searched from the
    /// head, as the paper's Scheme 2 does.
    pub(crate) fn insert_sorted(&mut self, list: u32, idx: u32) {
        self.insert_sorted_from(list, idx, false);
    }

    /// [`Arena::insert_sorted`], the search starting at the head (`from_rear == false`) or at
    /// the tail. Both find the same place, after every node with the same deadline. Returns the
    /// nodes the search passed over: from the head, those due at or before the new node; from
    /// the tail, those due after it. The node at which the search stops, if any, is not counted.
    pub(crate) fn insert_sorted_from(&mut self, list: u32, idx: u32, from_rear: bool) -> u64 {
        let expiry = self.nodes[idx].expiry;
        let mut passed = 0;
        if from_rear {
            let mut at = self.heads[list as usize].last;
            while at != NIL && self.nodes[at].expiry > expiry {
                at = self.nodes[at].prev;
                passed += 1;
            }
            // `at` is the last node due at or before the new one: link after it.
            let after = if at == NIL {
                self.first(list)
            } else {
                self.nodes[at].next
            };
            if after == NIL {
                self.push_back(list, idx);
            } else {
                self.insert_before(after, idx);
            }
        } else {
            let mut at = self.first(list);
            while at != NIL && self.nodes[at].expiry <= expiry {
                at = self.nodes[at].next;
                passed += 1;
            }
            if at == NIL {
                self.push_back(list, idx);
            } else {
                self.insert_before(at, idx);
            }
        }
        passed
    }

    /// Removes a node from whatever list it is on (no-op when on none).
    #[inline]
    pub(crate) fn unlink(&mut self, idx: u32) {
        let (list, prev, next) = {
            let n = &self.nodes[idx];
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
            self.nodes[prev].next = next;
        }
        if next == NIL {
            self.heads[list as usize].last = prev;
        } else {
            self.nodes[next].prev = prev;
        }
        let n = &mut self.nodes[idx];
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
            self.walk_next = self.nodes[idx].next;
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
        self.nodes.check()?;
        let mut on_lists = 0usize;
        for (l, head) in self.heads.iter().enumerate() {
            let mut prev = NIL;
            let mut i = head.first;
            let mut steps = 0usize;
            while i != NIL {
                let n = self
                    .nodes
                    .get(i)
                    .ok_or("list names a free or missing node")?;
                if n.list != l as u32 {
                    return Err("node's list field disagrees with the list it is on");
                }
                if n.prev != prev {
                    return Err("prev link broken");
                }
                prev = i;
                i = n.next;
                steps += 1;
                if steps > self.nodes.slots() {
                    return Err("cycle in a list");
                }
            }
            if head.last != prev {
                return Err("list tail is wrong");
            }
            on_lists += steps;
        }
        let unlisted = self.nodes.iter().filter(|(_, n)| n.list == NIL).count();
        if on_lists + unlisted != self.nodes.len() {
            return Err("a live node is on a list that does not hold it");
        }
        Ok(())
    }
}
