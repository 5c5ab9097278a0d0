//! `std::collections::BTreeMap` as an ordered timer set: a stop removes the entry at once.

use std::collections::{BTreeMap, HashMap};

use callwheel::{Budget, Error, Expired, Handle, Meter, Progress, Scheme, Tick, Timers};

use crate::workload::TolerantStart;

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
            on_expire(self, Expired::one_shot(handle, deadline, value));
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

// A peer takes no tolerance.
impl TolerantStart for BTreeMapPeer {}
