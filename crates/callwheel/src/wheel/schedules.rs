//! The periodic timers' schedules, by slot index: an open-addressing hash table with linear
//! probing that grows by fallible reservation.
//!
//! A schedule is needed only for the few periodic timers, so it is kept beside the slab rather
//! than in every entry (which would grow each timer's 16 or 24 bytes). The standard ordered map
//! that held them had no fallible insert, so a `start_periodic` could abort when memory ran out;
//! here a start first reserves room ([`Schedules::reserve`]) and is refused with
//! [`Error::NoMemory`] before anything changes. Lookups cost O(1) expected instead of O(log p).
//!
//! Keys are slab indices, which are dense small integers: a multiplicative hash spreads them
//! over the table, whose load is kept at most 3/4 so probe runs stay short. Removal shifts the
//! following entries of the run back (no tombstones), so a long-lived wheel that starts and
//! stops periodic timers forever never degrades.

use alloc::vec::Vec;

use super::periodic::Periodic;
use crate::timers::Error;

/// Slot index → schedule.
#[derive(Debug)]
pub(super) struct Schedules<T> {
    /// A power-of-two number of buckets (or none before the first insert).
    buckets: Vec<Option<(u32, Periodic<T>)>>,
    len: usize,
}

impl<T> Schedules<T> {
    /// An empty table; allocates nothing.
    pub(super) const fn new() -> Self {
        Schedules {
            buckets: Vec::new(),
            len: 0,
        }
    }

    /// The number of schedules.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Bytes held by the table.
    pub(super) fn bytes(&self) -> usize {
        self.buckets.capacity() * core::mem::size_of::<Option<(u32, Periodic<T>)>>()
    }

    /// The home bucket of `key` in a table of `buckets` (a power of two) buckets: Fibonacci
    /// hashing, whose top bits spread consecutive indices evenly.
    fn home(key: u32, buckets: usize) -> usize {
        let bits = buckets.trailing_zeros();
        if bits == 0 {
            return 0;
        }
        ((u64::from(key).wrapping_mul(0x9E37_79B9_7F4A_7C15)) >> (64 - bits)) as usize
    }

    /// The bucket holding `key`, if present.
    fn find(&self, key: u32) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let mask = self.buckets.len() - 1;
        let mut i = Self::home(key, self.buckets.len());
        // The load is below 1, so an empty bucket ends every run.
        loop {
            match &self.buckets[i] {
                None => return None,
                Some((k, _)) if *k == key => return Some(i),
                Some(_) => i = (i + 1) & mask,
            }
        }
    }

    /// Makes room for one more schedule, so that the next [`Schedules::insert`] cannot fail.
    /// A refused allocation is [`Error::NoMemory`] with the table unchanged.
    pub(super) fn reserve(&mut self) -> Result<(), Error> {
        let buckets = self.buckets.len();
        if (self.len + 1) * 4 <= buckets * 3 {
            return Ok(());
        }
        let grown = buckets.checked_mul(2).ok_or(Error::NoMemory)?.max(8);
        let mut fresh: Vec<Option<(u32, Periodic<T>)>> = Vec::new();
        fresh
            .try_reserve_exact(grown)
            .map_err(|_| Error::NoMemory)?;
        fresh.resize_with(grown, || None);
        let old = core::mem::replace(&mut self.buckets, fresh);
        let mask = grown - 1;
        for (key, schedule) in old.into_iter().flatten() {
            let mut i = Self::home(key, grown);
            while self.buckets[i].is_some() {
                i = (i + 1) & mask;
            }
            self.buckets[i] = Some((key, schedule));
        }
        Ok(())
    }

    /// Adds (or replaces) the schedule of slot `key`. Call [`Schedules::reserve`] first: without
    /// room this returns [`Error::NoMemory`] and keeps the table as it was.
    pub(super) fn insert(&mut self, key: u32, schedule: Periodic<T>) -> Result<(), Error> {
        if let Some(i) = self.find(key) {
            self.buckets[i] = Some((key, schedule));
            return Ok(());
        }
        self.reserve()?;
        let mask = self.buckets.len() - 1;
        let mut i = Self::home(key, self.buckets.len());
        while self.buckets[i].is_some() {
            i = (i + 1) & mask;
        }
        self.buckets[i] = Some((key, schedule));
        self.len += 1;
        Ok(())
    }

    /// The schedule of slot `key`.
    pub(super) fn get(&self, key: u32) -> Option<&Periodic<T>> {
        let i = self.find(key)?;
        self.buckets[i].as_ref().map(|(_, p)| p)
    }

    /// The schedule of slot `key`, to change.
    pub(super) fn get_mut(&mut self, key: u32) -> Option<&mut Periodic<T>> {
        let i = self.find(key)?;
        self.buckets[i].as_mut().map(|(_, p)| p)
    }

    /// Removes and returns the schedule of slot `key`.
    pub(super) fn remove(&mut self, key: u32) -> Option<Periodic<T>> {
        let mut hole = self.find(key)?;
        let (_, removed) = self.buckets[hole].take()?;
        self.len -= 1;
        // Backward shift: move each later entry of the run whose home does not lie cyclically
        // in (hole, j] into the hole, so every entry stays reachable from its home without
        // tombstones.
        let mask = self.buckets.len() - 1;
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            let Some((k, _)) = &self.buckets[j] else {
                break;
            };
            let home = Self::home(*k, self.buckets.len());
            let stays = if hole <= j {
                hole < home && home <= j
            } else {
                hole < home || home <= j
            };
            if !stays {
                self.buckets[hole] = self.buckets[j].take();
                hole = j;
            }
        }
        Some(removed)
    }

    /// The slot indices that have a schedule, in no particular order.
    pub(super) fn keys(&self) -> impl Iterator<Item = u32> + '_ {
        self.buckets.iter().flatten().map(|(k, _)| *k)
    }

    /// Drops every schedule; keeps the table's memory.
    pub(super) fn clear(&mut self) {
        for b in &mut self.buckets {
            *b = None;
        }
        self.len = 0;
    }

    /// Every schedule is reachable from its home bucket and the count agrees.
    pub(super) fn check(&self) -> Result<(), &'static str> {
        let mut n = 0;
        for (key, _) in self.buckets.iter().flatten() {
            n += 1;
            if self.find(*key).is_none() {
                return Err("a periodic schedule is unreachable from its home bucket");
            }
        }
        if n != self.len {
            return Err("the schedule count disagrees with the table");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wheel::Missed;
    use alloc::collections::BTreeMap;

    fn schedule(period: u64) -> Periodic<()> {
        Periodic {
            period,
            tolerance: 0,
            policy: Missed::Burst,
            copy: |_| (),
            overruns: 0,
        }
    }

    /// Random inserts and removes agree with an ordered map, and every key stays reachable
    /// after the backward shifts (which a wrong "stays" test would break).
    #[test]
    fn agrees_with_a_map_under_random_inserts_and_removes() {
        let mut table = Schedules::new();
        let mut model = BTreeMap::new();
        let mut x: u64 = 0x1234_5678_9abc_def1;
        for step in 0..200_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = (x % 512) as u32;
            if x.is_multiple_of(3) {
                assert_eq!(
                    table.remove(key).map(|p| p.period),
                    model.remove(&key),
                    "remove {key} at step {step}"
                );
            } else {
                table.insert(key, schedule(step)).unwrap();
                model.insert(key, step);
            }
            assert_eq!(table.len(), model.len());
            if step % 997 == 0 {
                table.check().unwrap();
                for (k, v) in &model {
                    assert_eq!(table.get(*k).map(|p| p.period), Some(*v));
                }
            }
        }
        let mut keys: alloc::vec::Vec<u32> = table.keys().collect();
        keys.sort_unstable();
        assert_eq!(keys, model.keys().copied().collect::<alloc::vec::Vec<_>>());
        table.clear();
        assert_eq!(table.len(), 0);
        assert!(table.get(1).is_none());
    }
}
