//! The callout records (`callout[calloutsize]`) and the chained hash on (function, argument)
//! that `untimeout` searches.
//!
//! Records live in one vector; free ones form a list, so allocating and freeing are O(1). A
//! record's generation changes each time it is freed; a record whose generation would wrap is
//! retired instead of reused, so no handle ever matches two lifetimes.

use core::hash::{BuildHasher, Hash};

use callwheel::{Handle, Tick};
use rustc_hash::FxBuildHasher;

use crate::{CalloutHandle, Error};

pub(crate) const NIL: u32 = u32::MAX;

/// The most records allocated up front: a mistyped size fails cleanly instead of touching
/// gigabytes. A growing pool is not limited by it.
pub const MAX_CALLOUTSIZE: usize = 1 << 26;

/// What a live record is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Made by `timeout` or `setcallout`; freed when it fires or is cancelled.
    OneShot,
    /// Made by `callout_init`; lives until `callout_free`, and can be armed again and again.
    Persistent,
}

/// Where a record's next firing is queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sched {
    /// Not armed.
    Idle,
    /// In the backing scheme.
    Pending(Handle),
    /// In the direct-execution queue, under this key.
    Direct(Tick, u64),
    /// Taken from the scheme by `softclock`, waiting in its batch to be run.
    Due,
}

#[derive(Debug)]
pub(crate) struct Record<C> {
    pub(crate) generation: u32,
    /// `None` while the record is free.
    pub(crate) kind: Option<Kind>,
    pub(crate) sched: Sched,
    /// The handler is running now (persistent records only; a one-shot one is freed before).
    pub(crate) running: bool,
    /// FreeBSD's `CALLOUT_ACTIVE`.
    pub(crate) active: bool,
    pub(crate) call: Option<C>,
    /// In the (function, argument) hash: made by `timeout`.
    pub(crate) hashed: bool,
    pub(crate) prev: u32,
    pub(crate) next: u32,
}

impl<C> Record<C> {
    fn free() -> Record<C> {
        Record {
            generation: 0,
            kind: None,
            sched: Sched::Idle,
            running: false,
            active: false,
            call: None,
            hashed: false,
            prev: NIL,
            next: NIL,
        }
    }
}

/// The record pool and the hash chains through it.
#[derive(Debug)]
pub(crate) struct Pool<C> {
    pub(crate) records: Vec<Record<C>>,
    /// Free records, linked through `next`.
    free: u32,
    live: usize,
    /// `Some(n)`: never more than `n` records.
    fixed: Option<usize>,
    /// Chain heads, a power of two of them, at least as many as records.
    buckets: Vec<u32>,
}

impl<C: Copy + Eq + Hash> Pool<C> {
    /// `calloutsize` records allocated now; `fixed` forbids growing past them.
    pub(crate) fn new(calloutsize: usize, fixed: bool) -> Result<Pool<C>, Error> {
        if calloutsize > MAX_CALLOUTSIZE {
            return Err(Error::Config {
                reason: "calloutsize is at most 2^26 records allocated up front (a growing pool may grow past it)",
            });
        }
        if fixed && calloutsize == 0 {
            return Err(Error::Config {
                reason: "a fixed pool needs at least one record",
            });
        }
        let no_memory = |_| Error::Config {
            reason: "cannot allocate calloutsize records",
        };
        let bucket_count = calloutsize.next_power_of_two().max(16);
        let mut buckets = Vec::new();
        buckets.try_reserve_exact(bucket_count).map_err(no_memory)?;
        buckets.resize(bucket_count, NIL);
        let mut pool = Pool {
            records: Vec::new(),
            free: NIL,
            live: 0,
            fixed: fixed.then_some(calloutsize),
            buckets,
        };
        pool.records
            .try_reserve_exact(calloutsize)
            .map_err(no_memory)?;
        // Free list in index order, so a fresh pool hands out 0, 1, 2, ...
        pool.records.resize_with(calloutsize, Record::free);
        for i in (0..calloutsize as u32).rev() {
            pool.records[i as usize].next = pool.free;
            pool.free = i;
        }
        Ok(pool)
    }

    pub(crate) fn live(&self) -> usize {
        self.live
    }

    pub(crate) fn capacity(&self) -> usize {
        self.records.len()
    }

    pub(crate) fn alloc(&mut self, kind: Kind, call: Option<C>) -> Result<u32, Error> {
        if self.free == NIL {
            self.grow()?;
        }
        let idx = self.free;
        let r = &mut self.records[idx as usize];
        self.free = r.next;
        r.next = NIL;
        r.prev = NIL;
        r.kind = Some(kind);
        r.sched = Sched::Idle;
        r.running = false;
        r.active = false;
        r.call = call;
        r.hashed = false;
        self.live += 1;
        Ok(idx)
    }

    fn grow(&mut self) -> Result<(), Error> {
        if let Some(calloutsize) = self.fixed {
            return Err(Error::PoolExhausted { calloutsize });
        }
        let old = self.records.len();
        let new = (old * 2).clamp(16, NIL as usize - 1);
        if new <= old {
            return Err(Error::PoolExhausted { calloutsize: old });
        }
        self.records.reserve_exact(new - old);
        for _ in old..new {
            self.records.push(Record::free());
        }
        for i in (old as u32..new as u32).rev() {
            self.records[i as usize].next = self.free;
            self.free = i;
        }
        if self.buckets.len() < new {
            self.rehash(new.next_power_of_two());
        }
        Ok(())
    }

    /// Frees a live record (already out of every queue and chain).
    pub(crate) fn release(&mut self, idx: u32) {
        let r = &mut self.records[idx as usize];
        debug_assert!(r.kind.is_some() && !r.hashed);
        r.kind = None;
        r.sched = Sched::Idle;
        r.call = None;
        r.running = false;
        r.active = false;
        self.live -= 1;
        if r.generation == u32::MAX {
            // Retired: a further generation would repeat handles already given out.
            r.next = NIL;
            return;
        }
        r.generation += 1;
        r.next = self.free;
        self.free = idx;
    }

    /// The live record `handle` names, if any.
    pub(crate) fn resolve(&self, handle: CalloutHandle) -> Option<u32> {
        let r = self.records.get(handle.index() as usize)?;
        (r.kind.is_some() && r.generation == handle.generation()).then_some(handle.index())
    }

    pub(crate) fn handle(&self, idx: u32) -> CalloutHandle {
        CalloutHandle::new(idx, self.records[idx as usize].generation)
    }

    fn bucket(&self, call: &C) -> usize {
        FxBuildHasher.hash_one(call) as usize & (self.buckets.len() - 1)
    }

    /// Links a record at the head of its (function, argument) chain.
    pub(crate) fn hash_insert(&mut self, idx: u32) {
        let call = self.records[idx as usize]
            .call
            .expect("hashed records carry a call");
        let b = self.bucket(&call);
        let head = self.buckets[b];
        if head != NIL {
            self.records[head as usize].prev = idx;
        }
        let r = &mut self.records[idx as usize];
        r.next = head;
        r.prev = NIL;
        r.hashed = true;
        self.buckets[b] = idx;
    }

    pub(crate) fn hash_remove(&mut self, idx: u32) {
        let (prev, next, call) = {
            let r = &self.records[idx as usize];
            (r.prev, r.next, r.call)
        };
        if prev == NIL {
            let b = self.bucket(&call.expect("hashed records carry a call"));
            self.buckets[b] = next;
        } else {
            self.records[prev as usize].next = next;
        }
        if next != NIL {
            self.records[next as usize].prev = prev;
        }
        let r = &mut self.records[idx as usize];
        r.hashed = false;
        r.prev = NIL;
        r.next = NIL;
    }

    /// The oldest hashed record for `call`. The whole chain is walked whatever is found, so
    /// cancelling a callout that does not exist costs what cancelling one that does costs.
    pub(crate) fn hash_find(&self, call: &C) -> Option<u32> {
        let mut found = None;
        let mut i = self.buckets[self.bucket(call)];
        while i != NIL {
            let r = &self.records[i as usize];
            if r.call.as_ref() == Some(call) {
                // New records go in at the head, so the last match is the oldest.
                found = Some(i);
            }
            i = r.next;
        }
        found
    }

    fn rehash(&mut self, size: usize) {
        let mut members = Vec::new();
        for &head in &self.buckets {
            let mut i = head;
            while i != NIL {
                members.push(i);
                i = self.records[i as usize].next;
            }
        }
        self.buckets = vec![NIL; size];
        // Re-insert oldest last so each chain keeps newest-first order: members were
        // collected head (newest) first per chain, so walking them backwards restores it.
        for &i in members.iter().rev() {
            self.records[i as usize].hashed = false;
            self.hash_insert(i);
        }
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        self.records.capacity() * core::mem::size_of::<Record<C>>()
            + self.buckets.capacity() * core::mem::size_of::<u32>()
    }

    /// Brute-force check of the free list, the live count and the chains.
    pub(crate) fn check(&self) -> Result<(), &'static str> {
        let mut free = 0;
        let mut i = self.free;
        while i != NIL {
            let r = self
                .records
                .get(i as usize)
                .ok_or("free list leaves the pool")?;
            if r.kind.is_some() {
                return Err("a live record is on the free list");
            }
            free += 1;
            if free > self.records.len() {
                return Err("free list has a cycle");
            }
            i = r.next;
        }
        let live = self.records.iter().filter(|r| r.kind.is_some()).count();
        if live != self.live {
            return Err("live count is wrong");
        }
        let mut hashed = 0;
        for (b, &head) in self.buckets.iter().enumerate() {
            let mut prev = NIL;
            let mut i = head;
            while i != NIL {
                let r = &self.records[i as usize];
                if !r.hashed || r.kind.is_none() || r.prev != prev {
                    return Err("hash chain is broken");
                }
                if self.bucket(r.call.as_ref().ok_or("hashed record without call")?) != b {
                    return Err("record in the wrong hash bucket");
                }
                hashed += 1;
                prev = i;
                i = r.next;
            }
        }
        if hashed != self.records.iter().filter(|r| r.hashed).count() {
            return Err("a hashed record is missing from its chain");
        }
        Ok(())
    }
}
