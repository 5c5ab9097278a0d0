//! Scheme 3, first form: an indexed binary min-heap (Varghese & Lauck, section 4.1.1).
//!
//! The heap array holds `(deadline, sequence, slot)`; each slot remembers its position in the
//! array, so a timer can be removed by handle in O(log n) without a search, and comparisons
//! never leave the array (no pointer chasing into the slab while sifting).
//!
//! | operation | cost |
//! |---|---|
//! | start | O(log n): push and sift up |
//! | stop | O(log n): swap with the last entry and sift it up or down |
//! | per tick | O(1): compare the root; tickless, the root is the next expiry |
//! | range | any deadline |
//!
//! The sequence number, taken at start, orders equal deadlines: they fire in start order.

use alloc::vec::Vec;

use crate::clock::{tick_driven_scheme, Core, Step, TickDriven};
use callwheel::Error;
use callwheel::Tick;

#[derive(Clone, Copy, Debug)]
struct Entry {
    expiry: Tick,
    seq: u64,
    idx: u32,
}

impl Entry {
    #[inline]
    fn key(&self) -> (Tick, u64) {
        (self.expiry, self.seq)
    }
}

/// Scheme 3: an indexed binary heap.
#[derive(Debug)]
pub struct BinaryHeap<T> {
    core: Core<T>,
    heap: Vec<Entry>,
    seq: u64,
}

impl<T> BinaryHeap<T> {
    /// An empty heap whose slab grows on demand.
    pub fn new() -> BinaryHeap<T> {
        BinaryHeap {
            core: Core::growing(0),
            heap: Vec::new(),
            seq: 0,
        }
    }

    /// An empty heap holding at most `capacity` timers.
    pub fn with_capacity(capacity: usize) -> Result<BinaryHeap<T>, Error> {
        let core = Core::new(0, Some(capacity))?;
        let mut heap = Vec::new();
        heap.try_reserve_exact(capacity)
            .map_err(|_| Error::Config {
                reason: "cannot allocate the fixed capacity",
            })?;
        Ok(BinaryHeap { core, heap, seq: 0 })
    }

    #[inline]
    fn put(&mut self, pos: usize, e: Entry) {
        self.heap[pos] = e;
        self.core.arena.node_mut(e.idx).aux = pos as u64;
    }

    fn sift_up(&mut self, mut pos: usize) {
        let e = self.heap[pos];
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if self.heap[parent].key() <= e.key() {
                break;
            }
            let p = self.heap[parent];
            self.put(pos, p);
            pos = parent;
        }
        self.put(pos, e);
    }

    fn sift_down(&mut self, mut pos: usize) {
        let e = self.heap[pos];
        let n = self.heap.len();
        loop {
            let left = 2 * pos + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && self.heap[right].key() < self.heap[left].key() {
                right
            } else {
                left
            };
            if e.key() <= self.heap[child].key() {
                break;
            }
            let c = self.heap[child];
            self.put(pos, c);
            pos = child;
        }
        self.put(pos, e);
    }
}

impl<T> Default for BinaryHeap<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> TickDriven<T> for BinaryHeap<T> {
    fn core(&self) -> &Core<T> {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core<T> {
        &mut self.core
    }

    fn reserve_one(&mut self) -> Result<(), Error> {
        self.heap.try_reserve(1).map_err(|_| Error::NoMemory)
    }

    fn place(&mut self, idx: u32) {
        self.seq += 1;
        let e = Entry {
            expiry: self.core.arena.node(idx).expiry,
            seq: self.seq,
            idx,
        };
        self.heap.push(e);
        self.sift_up(self.heap.len() - 1);
    }

    fn detach(&mut self, idx: u32) {
        let pos = self.core.arena.node(idx).aux as usize;
        let last = self.heap.pop().expect("a placed timer is in the heap");
        if pos < self.heap.len() {
            self.put(pos, last);
            if pos > 0 && self.heap[(pos - 1) / 2].key() > last.key() {
                self.sift_up(pos);
            } else {
                self.sift_down(pos);
            }
        }
    }

    fn next_work(&self) -> Option<Tick> {
        self.heap.first().map(|e| e.expiry)
    }

    fn begin_tick(&mut self, _tick: Tick) {}

    fn step_tick(&mut self, tick: Tick) -> Step {
        match self.heap.first() {
            Some(e) if e.expiry <= tick => {
                let idx = e.idx;
                self.detach(idx);
                Step::Fire(idx)
            }
            _ => Step::TickDone,
        }
    }

    fn extra_bytes(&self) -> usize {
        self.heap.capacity() * core::mem::size_of::<Entry>()
    }

    fn check_structure(&self) -> Result<(), &'static str> {
        if self.heap.len() != self.core.structure_len() {
            return Err("heap size disagrees with the number of timers");
        }
        for (pos, e) in self.heap.iter().enumerate() {
            if pos > 0 && self.heap[(pos - 1) / 2].key() > e.key() {
                return Err("heap order broken");
            }
            let node = self.core.arena.node(e.idx);
            if node.aux != pos as u64 || node.expiry != e.expiry {
                return Err("heap position or deadline disagrees with the slot");
            }
        }
        Ok(())
    }
}

tick_driven_scheme!(BinaryHeap);
