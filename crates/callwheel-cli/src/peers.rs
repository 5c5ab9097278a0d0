//! The peers: timer structures from outside callwheel, behind the same [`Scheme<u64>`] trait, so
//! the same monomorphized workload code runs them.
//!
//! | adapter | what it wraps | cancel | `memory_bytes` |
//! |---|---|---|---|
//! | [`HeapLazy`] | `std::collections::BinaryHeap` of `(deadline, seq, id)` | lazy: a tombstone, skipped at the top | heap capacity × entry + the slot table |
//! | [`BTreeMapPeer`] | `std::collections::BTreeMap<(deadline, seq), value>` | eager: `remove` | 0 (printed n/a) |
//! | [`DelayQueuePeer`] | `tokio_util::time::DelayQueue` on a paused tokio clock | eager: `try_remove` | 0 (printed n/a) |
//!
//! Each adapter keeps the firing rule of `docs/workloads.md`: `advance(t)` moves the clock to `t` and
//! fires every pending timer whose expiry is at or before `t`, and no other. What the adapters
//! do *not* copy from callwheel's structures: a timer started from inside an expiry callback with
//! a deadline at or before the clock fires in the same `advance` call rather than the next one
//! (no workload does that), `DelayQueue` fires equal deadlines in reverse start order, and
//! `check_invariants` checks only the adapter's own bookkeeping.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use callwheel::{Budget, Error, Expired, Handle, Meter, Owner, Progress, Scheme, Tick, Timers};
use tokio::runtime::{EnterGuard, Runtime};
use tokio_util::time::delay_queue::{DelayQueue, Key};

use crate::workload::TolerantStart;

/// A slot table: handles are `(generation << 32) | index`, so a handle whose timer has fired or
/// been stopped is rejected even after its slot is reused.
#[derive(Debug)]
struct Slots<V> {
    slots: Vec<(u32, Option<V>)>,
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
    fn insert(&mut self, value: V) -> (u32, Handle) {
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
    fn resolve(&self, handle: Handle) -> Option<u32> {
        let (index, generation) = self.owner.slot(handle)?;
        match self.slots.get(index as usize) {
            Some((g, Some(_))) if *g == generation => Some(index),
            _ => None,
        }
    }

    fn get(&self, index: u32) -> Option<&V> {
        self.slots.get(index as usize)?.1.as_ref()
    }

    fn get_mut(&mut self, index: u32) -> Option<&mut V> {
        self.slots.get_mut(index as usize)?.1.as_mut()
    }

    fn handle(&self, index: u32) -> Handle {
        self.owner.handle(index, self.slots[index as usize].0)
    }

    /// Empties a slot and bumps its generation; returns what it held.
    fn remove(&mut self, index: u32) -> Option<V> {
        let slot = self.slots.get_mut(index as usize)?;
        let value = slot.1.take()?;
        slot.0 = slot.0.wrapping_add(1);
        self.free.push(index);
        Some(value)
    }

    fn memory_bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<(u32, Option<V>)>()
            + self.free.capacity() * std::mem::size_of::<u32>()
    }
}

// ---------------------------------------------------------------------------------------------
// BinaryHeap with tombstones

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
    slots: Slots<HeapSlot>,
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
        let (index, handle) = self.slots.insert(HeapSlot {
            seq: self.seq,
            deadline: expiry,
            state: HeapState::Live(value),
        });
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
            let handle = self.slots.handle(index);
            match self.slots.remove(index).map(|slot| slot.state) {
                Some(HeapState::Live(value)) => {
                    self.live -= 1;
                    meter.fired();
                    on_expire(
                        self,
                        Expired {
                            handle,
                            deadline,
                            value,
                            overruns: 0,
                        },
                    );
                }
                Some(HeapState::Cancelled) | None => {}
            }
        }
        meter.finish(true)
    }

    fn check_invariants(&self) -> Result<(), &'static str> {
        let occupied = self.slots.slots.iter().filter(|s| s.1.is_some()).count();
        if occupied > self.heap.len() {
            return Err("an occupied slot has no heap entry");
        }
        let live = self
            .slots
            .slots
            .iter()
            .filter(|s| {
                matches!(
                    s.1,
                    Some(HeapSlot {
                        state: HeapState::Live(_),
                        ..
                    })
                )
            })
            .count();
        if live != self.live {
            return Err("live count is wrong");
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// BTreeMap

/// Bits of a [`BTreeMapPeer`] handle that hold the sequence number; the rest hold the deadline.
const SEQ_BITS: u32 = 30;

/// Measures `std::collections::BTreeMap<(deadline, seq), value>` as an ordered timer set with
/// **eager** insert and remove.
///
/// - `start`: one `insert` of the key `(deadline, seq)`, O(log n); `seq` counts starts, so keys
///   are unique and equal deadlines fire in start order.
/// - `stop`: one `remove` of the key, O(log n). The handle *is* the key, packed as
///   `deadline << 30 | seq`: nothing else is looked up. Packing limits deadlines to below
///   2^34 ticks ([`Error::BeyondRange`] beyond) and a structure to 2^30 starts
///   ([`Error::Full`] after that); every workload is far inside both.
/// - `advance(t)`: `first_entry` / `remove_entry` while the first deadline is ≤ `t`.
/// - `reset`: the timer gets a new key (new deadline, next `seq`, so it counts as started
///   last); since its handle still names the old key, the two side maps below translate. They
///   stay empty, and cost one emptiness test per operation, unless a caller resets.
/// - `next_expiry`: the first key's deadline (exact).
/// - `memory_bytes`: 0, printed "n/a": the map's node memory is not observable from outside and
///   is not guessed.
#[derive(Debug, Default)]
pub struct BTreeMapPeer {
    map: BTreeMap<(Tick, u64), u64>,
    seq: u64,
    now: Tick,
    /// For a timer that was reset: its handle's `seq` to its current key.
    moved: HashMap<u64, (Tick, u64)>,
    /// The reverse: a reset timer's current `seq` to the key its handle names.
    origin: HashMap<u64, (Tick, u64)>,
}

impl BTreeMapPeer {
    /// The largest deadline a handle can carry.
    pub const MAX_DEADLINE: Tick = (1 << (64 - SEQ_BITS)) - 1;

    /// An empty map at tick 0.
    pub fn new() -> BTreeMapPeer {
        BTreeMapPeer::default()
    }

    fn key_of(handle: Handle) -> (Tick, u64) {
        // The map's key is the whole handle: no owner is kept (a benchmark peer).
        let (bits, _) = handle.to_parts();
        (bits >> SEQ_BITS, bits & ((1 << SEQ_BITS) - 1))
    }

    /// The key the timer `handle` names sits under now (its handle's own, unless it was reset).
    fn current_key(&self, handle: Handle) -> (Tick, u64) {
        let key = Self::key_of(handle);
        if self.moved.is_empty() {
            return key;
        }
        match self.moved.get(&key.1) {
            Some(&now) if self.origin.get(&now.1) == Some(&key) => now,
            _ => key,
        }
    }

    /// The handle of the timer under `key`, and forgets its translation if it was reset.
    fn release_key(&mut self, key: (Tick, u64)) -> Handle {
        let named = if self.origin.is_empty() {
            key
        } else {
            match self.origin.remove(&key.1) {
                Some(named) => {
                    self.moved.remove(&named.1);
                    named
                }
                None => key,
            }
        };
        Handle::from_parts((named.0 << SEQ_BITS) | named.1, 0)
    }
}

impl Timers<u64> for BTreeMapPeer {
    fn start(&mut self, expiry: Tick, value: u64) -> Result<Handle, Error> {
        if expiry > Self::MAX_DEADLINE {
            return Err(Error::BeyondRange {
                expiry,
                max: Self::MAX_DEADLINE,
            });
        }
        if self.seq >= 1 << SEQ_BITS {
            return Err(Error::Full {
                capacity: 1 << SEQ_BITS,
            });
        }
        let seq = self.seq;
        self.seq += 1;
        self.map.insert((expiry, seq), value);
        Ok(Handle::from_parts((expiry << SEQ_BITS) | seq, 0))
    }

    fn stop(&mut self, handle: Handle) -> Option<u64> {
        let key = self.current_key(handle);
        let value = self.map.remove(&key)?;
        self.release_key(key);
        Some(value)
    }

    fn reset(&mut self, handle: Handle, deadline: Tick, _tolerance: Tick) -> Option<Tick> {
        let key = self.current_key(handle);
        if deadline > Self::MAX_DEADLINE
            || self.seq >= 1 << SEQ_BITS
            || !self.map.contains_key(&key)
        {
            return None;
        }
        let value = self.map.remove(&key)?;
        let named = Self::key_of(handle);
        self.origin.remove(&key.1);
        let new = (deadline, self.seq);
        self.seq += 1;
        self.map.insert(new, value);
        self.moved.insert(named.1, new);
        self.origin.insert(new.1, named);
        Some(key.0)
    }

    fn deadline(&self, handle: Handle) -> Option<Tick> {
        let key = self.current_key(handle);
        self.map.contains_key(&key).then_some(key.0)
    }

    fn now(&self) -> Tick {
        self.now
    }

    fn len(&self) -> usize {
        self.map.len()
    }

    fn next_expiry(&self) -> Option<Tick> {
        self.map
            .first_key_value()
            .map(|(&(d, _), _)| d.max(self.now))
    }

    fn memory_bytes(&self) -> usize {
        0
    }
}

impl Scheme<u64> for BTreeMapPeer {
    fn advance<F>(&mut self, now: Tick, budget: Budget, mut on_expire: F) -> Progress
    where
        F: FnMut(&mut dyn Timers<u64>, Expired<u64>),
    {
        self.now = self.now.max(now);
        let mut meter = Meter::new(budget);
        while let Some(entry) = self.map.first_entry() {
            if entry.key().0 > self.now {
                break;
            }
            if !meter.step() {
                return meter.finish(false);
            }
            let ((deadline, seq), value) = entry.remove_entry();
            let handle = self.release_key((deadline, seq));
            meter.fired();
            on_expire(
                self,
                Expired {
                    handle,
                    deadline,
                    value,
                    overruns: 0,
                },
            );
        }
        meter.finish(true)
    }

    fn check_invariants(&self) -> Result<(), &'static str> {
        if self.map.keys().any(|&(_, seq)| seq >= self.seq) {
            return Err("a key's sequence number was never issued");
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// tokio-util DelayQueue

/// Measures `tokio_util::time::DelayQueue` (a hierarchical timing wheel of 6 × 64 slots at 1 ms
/// over a slab) driven by a **paused** tokio clock, 1 tick = 1 ms.
///
/// Each structure owns a current-thread runtime built with `start_paused(true)`; the runtime is
/// leaked (a few kilobytes per structure, never freed, so that the enter guard can live as long
/// as the structure) and entered for the structure's whole life by an `EnterGuard`, which
/// `DelayQueue::insert` needs (`Instant::now()` on the paused clock, and the runtime's timer
/// driver for the queue's `Sleep`). Building it is untimed like every constructor.
///
/// - `start(expiry)`: `insert(value, (expiry - now) ms)` (0 ms for an expiry at or before the
///   clock), plus a write to a small slot table, because `DelayQueue::Key` has no public
///   conversion to an integer: the handle is our slot's `(generation, index)` and the slot
///   holds the `Key`. The queue normalizes a deadline to whole milliseconds rounding up, and the
///   deadline here is always a whole number of milliseconds after the queue's start, so the
///   timer is due at exactly `expiry`.
/// - `stop`: the slot lookup plus `DelayQueue::try_remove`.
/// - `advance(t)`: `runtime.block_on(tokio::time::advance((t - now) ms))` — the paused clock
///   jumps and the runtime's timer driver fires the queue's `Sleep` — then `poll_expired` with
///   a no-op waker until it returns `Pending` (or `Ready(None)`), firing each timer returned.
///   The queue fires an entry when its deadline is at or before the clock, so `advance(t)` fires
///   exactly the timers with expiry ≤ `t` (W2's expiry count checks it).
/// - Order: timers with equal deadlines fire last started first (the queue's wheel slots are
///   stacks), unlike callwheel's structures and the other two peers. `Expired::deadline` is the
///   queue's own deadline, which for a timer started at or before the clock is the clock at its
///   start. No workload depends on either.
/// - `next_expiry`: `peek()` and `deadline(key)`, converted back to ticks.
/// - `memory_bytes`: 0, printed "n/a" (the slab and the wheel's memory are not observable).
///
/// Why a persistent enter guard rather than `block_on` around every operation: measured on the
/// same machine, release build, the guard cost W1 (N = 1 000) about 275 ns per pair against
/// about 630 with `block_on` around each `insert` / `try_remove`, W2 about 390 ns per step
/// against 820, and W3 about 1 090 ns per timer against 1 410 (`block_on` around each
/// `poll_expired` as well). `advance` still needs one `block_on`, for the clock to move and the
/// runtime's timer driver to fire the queue's `Sleep`.
pub struct DelayQueuePeer {
    queue: DelayQueue<(u32, u64)>,
    slots: Slots<Option<Key>>,
    base: tokio::time::Instant,
    now: Tick,
    runtime: &'static Runtime,
    // Declared last so it is dropped after the queue (fields drop in declaration order).
    _entered: EnterGuard<'static>,
}

impl std::fmt::Debug for DelayQueuePeer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DelayQueuePeer")
            .field("len", &self.queue.len())
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

impl DelayQueuePeer {
    /// The largest deadline the queue accepts: 2^36 - 1 ms after its start.
    pub const MAX_DEADLINE: Tick = (1 << 36) - 1;

    /// An empty queue at tick 0 on a fresh paused runtime.
    pub fn new() -> Result<DelayQueuePeer, Error> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .map_err(|_| Error::Config {
                reason: "cannot build a tokio runtime",
            })?;
        let runtime: &'static Runtime = Box::leak(Box::new(runtime));
        let entered = runtime.enter();
        let base = tokio::time::Instant::now();
        let queue = DelayQueue::new();
        Ok(DelayQueuePeer {
            queue,
            slots: Slots::default(),
            base,
            now: 0,
            runtime,
            _entered: entered,
        })
    }

    fn tick_of(&self, instant: tokio::time::Instant) -> Tick {
        instant.saturating_duration_since(self.base).as_millis() as Tick
    }
}

impl Timers<u64> for DelayQueuePeer {
    fn start(&mut self, expiry: Tick, value: u64) -> Result<Handle, Error> {
        if expiry > Self::MAX_DEADLINE {
            return Err(Error::BeyondRange {
                expiry,
                max: Self::MAX_DEADLINE,
            });
        }
        let (index, handle) = self.slots.insert(None);
        let delay = Duration::from_millis(expiry.saturating_sub(self.now));
        let key = self.queue.insert((index, value), delay);
        if let Some(slot) = self.slots.get_mut(index) {
            *slot = Some(key);
        }
        Ok(handle)
    }

    fn stop(&mut self, handle: Handle) -> Option<u64> {
        let index = self.slots.resolve(handle)?;
        let key = (*self.slots.get(index)?)?;
        let expired = self.queue.try_remove(&key)?;
        self.slots.remove(index);
        Some(expired.into_inner().1)
    }

    /// `DelayQueue::reset`, which keeps the key (and so the handle).
    fn reset(&mut self, handle: Handle, deadline: Tick, _tolerance: Tick) -> Option<Tick> {
        if deadline > Self::MAX_DEADLINE {
            return None;
        }
        let key = (*self.slots.get(self.slots.resolve(handle)?)?)?;
        let previous = self.tick_of(self.queue.deadline(&key));
        let delay = Duration::from_millis(deadline.saturating_sub(self.now));
        self.queue.reset(&key, delay);
        Some(previous)
    }

    fn deadline(&self, handle: Handle) -> Option<Tick> {
        let key = (*self.slots.get(self.slots.resolve(handle)?)?)?;
        Some(self.tick_of(self.queue.deadline(&key)))
    }

    fn now(&self) -> Tick {
        self.now
    }

    fn len(&self) -> usize {
        self.queue.len()
    }

    fn next_expiry(&self) -> Option<Tick> {
        let key = self.queue.peek()?;
        Some(self.tick_of(self.queue.deadline(&key)).max(self.now))
    }

    fn memory_bytes(&self) -> usize {
        0
    }
}

impl Scheme<u64> for DelayQueuePeer {
    fn advance<F>(&mut self, now: Tick, budget: Budget, mut on_expire: F) -> Progress
    where
        F: FnMut(&mut dyn Timers<u64>, Expired<u64>),
    {
        if now > self.now {
            let by = Duration::from_millis(now - self.now);
            self.runtime.block_on(tokio::time::advance(by));
            self.now = now;
        }
        let mut meter = Meter::new(budget);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if !meter.step() {
                return meter.finish(false);
            }
            match self.queue.poll_expired(&mut cx) {
                Poll::Ready(Some(expired)) => {
                    let deadline = self.tick_of(expired.deadline());
                    let (index, value) = expired.into_inner();
                    let handle = self.slots.handle(index);
                    self.slots.remove(index);
                    meter.fired();
                    on_expire(
                        self,
                        Expired {
                            handle,
                            deadline,
                            value,
                            overruns: 0,
                        },
                    );
                }
                Poll::Ready(None) | Poll::Pending => break,
            }
        }
        meter.finish(true)
    }

    fn check_invariants(&self) -> Result<(), &'static str> {
        let occupied = self.slots.slots.iter().filter(|s| s.1.is_some()).count();
        if occupied != self.queue.len() {
            return Err("slot table and queue disagree");
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The peers take no tolerance.

impl TolerantStart for HeapLazy {}
impl TolerantStart for BTreeMapPeer {}
impl TolerantStart for DelayQueuePeer {}
