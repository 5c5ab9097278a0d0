//! `std::collections::BinaryHeap` with tombstones: a stop marks the entry, the top skips it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use callwheel::{Budget, Error, Expired, Handle, Meter, Progress, Scheme, Tick, Timers};

use crate::workload::TolerantStart;
use callwheel::slab::Slab;

/// A heap entry: `Reverse((deadline, seq, slot))`, so the smallest deadline is on top and equal
/// deadlines fire in start order.
type HeapEntry = Reverse<(Tick, u64, u32)>;

/// A slot of [`HeapLazy`]'s side table: the timer's state, and the deadline and sequence number
/// of its one current heap entry (a reset pushes a new entry; the old one, whose sequence number
/// no longer matches, is discarded when it reaches the top).
#[derive(Debug)]
struct HeapSlot {
    seq: u64,
    deadline: Tick,
    state: HeapState,
}

/// Whether a [`HeapLazy`] timer is pending.
#[derive(Debug)]
enum HeapState {
    /// Pending: the value.
    Live(u64),
    /// Stopped, its heap entry not yet popped (the tombstone).
    Cancelled,
}

/// Measures `std::collections::BinaryHeap` used the way most hand-written timer loops use it:
/// a min-heap of `(deadline, seq, id)` with **lazy cancellation**.
///
/// - `start`: one slot in a side table (value, or the tombstone) plus one `push`, O(log n).
/// - `stop`: marks the slot cancelled (the tombstone) in O(1) and leaves the heap entry where it
///   is; the entry is popped and discarded only when it reaches the top during `advance`. Until
///   then it occupies heap memory and costs a `pop` later, so a workload with many cancels (W1,
///   W2) carries the cancelled entries along: W1's heap grows by one entry per pair.
/// - `advance(t)`: pops every entry with deadline ≤ `t`, firing the live ones, discarding the
///   tombstones.
/// - `reset`: pushes a new entry and records its sequence number in the slot; the old entry is
///   a tombstone from then on (the slot's sequence number no longer matches it).
/// - `next_expiry`: the top entry's deadline, which may be a tombstone's (early, never late).
/// - `memory_bytes`: heap capacity × entry size plus the slot table, tombstones included.
///
/// The table rows call it "heap-lazy (tombstones)".
#[derive(Debug, Default)]
pub struct HeapLazy {
    heap: BinaryHeap<HeapEntry>,
    slots: Slab<HeapSlot>,
    seq: u64,
    live: usize,
    now: Tick,
}

impl HeapLazy {
    /// An empty heap at tick 0.
    pub fn new() -> HeapLazy {
        HeapLazy::default()
    }

    /// Heap entries, tombstones included.
    pub fn entries(&self) -> usize {
        self.heap.len()
    }
}

impl Timers<u64> for HeapLazy {
    fn start(&mut self, expiry: Tick, value: u64) -> Result<Handle, Error> {
        let index = self.slots.insert(HeapSlot {
            seq: self.seq,
            deadline: expiry,
            state: HeapState::Live(value),
        })?;
        let handle = self.slots.handle(index).ok_or(Error::NoMemory)?;
        self.heap.push(Reverse((expiry, self.seq, index)));
        self.seq += 1;
        self.live += 1;
        Ok(handle)
    }

    fn stop(&mut self, handle: Handle) -> Option<u64> {
        let index = self.slots.resolve(handle)?;
        let slot = self.slots.get_mut(index)?;
        match std::mem::replace(&mut slot.state, HeapState::Cancelled) {
            HeapState::Live(value) => {
                self.live -= 1;
                Some(value)
            }
            HeapState::Cancelled => None,
        }
    }

    fn reset(&mut self, handle: Handle, deadline: Tick, _tolerance: Tick) -> Option<Tick> {
        let index = self.slots.resolve(handle)?;
        let seq = self.seq;
        let slot = self.slots.get_mut(index)?;
        if !matches!(slot.state, HeapState::Live(_)) {
            return None;
        }
        let previous = std::mem::replace(&mut slot.deadline, deadline);
        slot.seq = seq;
        self.heap.push(Reverse((deadline, seq, index)));
        self.seq += 1;
        Some(previous)
    }

    fn deadline(&self, handle: Handle) -> Option<Tick> {
        let slot = self.slots.get(self.slots.resolve(handle)?)?;
        matches!(slot.state, HeapState::Live(_)).then_some(slot.deadline)
    }

    fn now(&self) -> Tick {
        self.now
    }

    fn len(&self) -> usize {
        self.live
    }

    fn next_expiry(&self) -> Option<Tick> {
        if self.live == 0 {
            return None;
        }
        self.heap
            .peek()
            .map(|Reverse((d, _, _))| (*d).max(self.now))
    }

    fn memory_bytes(&self) -> usize {
        self.heap.capacity() * std::mem::size_of::<HeapEntry>() + self.slots.memory_bytes()
    }
}

impl Scheme<u64> for HeapLazy {
    fn advance<F>(&mut self, now: Tick, budget: Budget, mut on_expire: F) -> Progress
    where
        F: FnMut(&mut dyn Timers<u64>, Expired<u64>),
    {
        self.now = self.now.max(now);
        let mut meter = Meter::new(budget);
        while let Some(&Reverse((deadline, seq, index))) = self.heap.peek() {
            if deadline > self.now {
                break;
            }
            if !meter.step() {
                return meter.finish(false);
            }
            self.heap.pop();
            if self.slots.get(index).is_none_or(|slot| slot.seq != seq) {
                // An entry a reset left behind: the slot now follows a newer one.
                continue;
            }
            let Some(handle) = self.slots.handle(index) else {
                continue;
            };
            match self.slots.remove(index).map(|slot| slot.state) {
                Some(HeapState::Live(value)) => {
                    self.live -= 1;
                    meter.fired();
                    on_expire(self, Expired::one_shot(handle, deadline, value));
                }
                Some(HeapState::Cancelled) | None => {}
            }
        }
        meter.finish(true)
    }

    fn check_invariants(&self) -> Result<(), &'static str> {
        self.slots.check()?;
        if self.slots.len() > self.heap.len() {
            return Err("an occupied slot has no heap entry");
        }
        let live = self
            .slots
            .iter()
            .filter(|(_, slot)| matches!(slot.state, HeapState::Live(_)))
            .count();
        if live != self.live {
            return Err("live count is wrong");
        }
        Ok(())
    }
}

// A peer takes no tolerance.
impl TolerantStart for HeapLazy {}
