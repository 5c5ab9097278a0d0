//! The callout records (`callout[calloutsize]`) and the chained hash on (function, argument)
//! that `untimeout` searches.
//!
//! Records live in the core's generation-checked [`Slab`]: allocating and freeing are O(1); a
//! record's generation changes each time it is freed, and one whose generation would wrap is
//! retired instead of reused, so no handle ever matches two lifetimes; every handle carries the
//! pool's owner, so a handle of another table names nothing here.
//!
//! Memory: `calloutsize` records are reserved up front but written only when first used, so
//! a large reservation costs address space, not touched pages. Every growth — the records
//! past the reservation, the hash buckets — asks the allocator with `try_reserve*`: a refusal
//! is [`Error::NoMemory`] for the call that needed it (or, for the hash buckets, longer chains),
//! never an abort, and leaves the pool as it was.

use core::hash::{BuildHasher, Hash};

use callwheel::slab::Slab;
use callwheel::{Handle, Tick};
use rustc_hash::FxBuildHasher;

use crate::Error;

pub(crate) const NIL: u32 = u32::MAX;

/// The largest `calloutsize`: 2^26 records reserved up front. A mistyped size (a negative
/// number read as unsigned, a byte count for a record count) then fails cleanly with
/// [`Error::Config`] instead of reserving tens of gigabytes of address space; a growing pool
/// still grows past it on demand, up to 2^32 - 2 records.
pub const MAX_CALLOUTSIZE: usize = 1 << 26;

/// Hash buckets made up front at most: more are added as timeouts are set.
const INITIAL_BUCKETS_MAX: usize = 1 << 12;
/// Hash buckets at least.
const MIN_BUCKETS: usize = 16;

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
    /// In the backing scheme, for `deadline`; `seq` orders the callouts armed for one deadline
    /// (so they can be moved to a larger scheme in the order they were armed).
    Pending {
        handle: Handle,
        deadline: Tick,
        seq: u64,
    },
    /// In the direct-execution queue, under this key.
    Direct(Tick, u64),
    /// Taken from the scheme by `softclock`, waiting in its batch to be run.
    Due,
}

#[derive(Debug)]
pub(crate) struct Record<C> {
    pub(crate) kind: Kind,
    pub(crate) sched: Sched,
    /// The handler is running now (persistent records only; a one-shot one is freed before).
    pub(crate) running: bool,
    /// FreeBSD's `CALLOUT_ACTIVE`.
    pub(crate) active: bool,
    pub(crate) call: Option<C>,
    /// Made by `timeout`: `untimeout` may cancel it.
    pub(crate) by_timeout: bool,
    /// In the (function, argument) hash (a `timeout` record of a table that hashes).
    pub(crate) hashed: bool,
    pub(crate) prev: u32,
    pub(crate) next: u32,
}

/// The record pool and the hash chains through it.
#[derive(Debug)]
pub(crate) struct Pool<C> {
    /// The records (the slab's reservation is `calloutsize`).
    pub(crate) records: Slab<Record<C>>,
    /// Chain heads, a power of two of them.
    buckets: Vec<u32>,
    /// Records on the chains.
    hashed: usize,
}

impl<C: Copy + Eq + Hash> Pool<C> {
    /// `calloutsize` records reserved now; `fixed` forbids growing past them.
    pub(crate) fn new(calloutsize: usize, fixed: bool) -> Result<Pool<C>, Error> {
        if calloutsize > MAX_CALLOUTSIZE {
            return Err(Error::Config {
                reason: "calloutsize is at most 2^26 records reserved up front (a growing pool may grow past it)",
            });
        }
        if fixed && calloutsize == 0 {
            return Err(Error::Config {
                reason: "a fixed pool needs at least one record",
            });
        }
        let bucket_count = calloutsize
            .next_power_of_two()
            .clamp(MIN_BUCKETS, INITIAL_BUCKETS_MAX);
        let mut buckets = Vec::new();
        buckets
            .try_reserve_exact(bucket_count)
            .map_err(|_| Error::NoMemory)?;
        buckets.resize(bucket_count, NIL);
        let records = Slab::with_capacity(calloutsize, fixed)?;
        Ok(Pool {
            records,
            buckets,
            hashed: 0,
        })
    }

    pub(crate) fn live(&self) -> usize {
        self.records.len()
    }

    /// Records the pool holds without allocating again (a fixed pool: exactly its size).
    pub(crate) fn capacity(&self) -> usize {
        self.records.capacity()
    }

    /// A new record of `kind` for `call`, idle.
    ///
    /// # Errors
    ///
    /// [`Error::PoolExhausted`] when a fixed pool (or every index) is used up;
    /// [`Error::NoMemory`] when growth is refused.
    pub(crate) fn alloc(&mut self, kind: Kind, call: Option<C>) -> Result<u32, Error> {
        let idx = self.records.insert(Record {
            kind,
            sched: Sched::Idle,
            running: false,
            active: false,
            call,
            by_timeout: false,
            hashed: false,
            prev: NIL,
            next: NIL,
        })?;
        Ok(idx)
    }

    /// Frees a live record (already out of every queue and chain).
    pub(crate) fn release(&mut self, idx: u32) {
        debug_assert!(!self.records[idx].hashed);
        let _ = self.records.remove(idx);
    }

    /// The live record `handle` names, if any: `None` for another pool's handle.
    pub(crate) fn resolve(&self, handle: Handle) -> Option<u32> {
        self.records.resolve(handle)
    }

    /// The handle of live record `idx`.
    pub(crate) fn handle(&self, idx: u32) -> Handle {
        self.records
            .handle(idx)
            .expect("the handle of a free record")
    }

    /// The generation of live record `idx` (`None` once it is freed): with the index, what
    /// names one lifetime of a persistent callout in the table's own bookkeeping.
    pub(crate) fn generation(&self, idx: u32) -> Option<u32> {
        self.records.handle(idx).map(Handle::generation)
    }

    fn bucket(&self, call: &C) -> usize {
        FxBuildHasher.hash_one(call) as usize & (self.buckets.len() - 1)
    }

    /// Links a record at the head of its (function, argument) chain.
    pub(crate) fn hash_insert(&mut self, idx: u32) {
        if self.hashed >= self.buckets.len() {
            // Keep chains short on average. If the allocator refuses, the chains get longer
            // and every lookup is still correct.
            self.grow_buckets();
        }
        let call = self.records[idx].call.expect("hashed records carry a call");
        let b = self.bucket(&call);
        self.link_head(b, idx);
        self.hashed += 1;
    }

    fn link_head(&mut self, b: usize, idx: u32) {
        let head = self.buckets[b];
        if head != NIL {
            self.records[head].prev = idx;
        }
        let r = &mut self.records[idx];
        r.next = head;
        r.prev = NIL;
        r.hashed = true;
        self.buckets[b] = idx;
    }

    pub(crate) fn hash_remove(&mut self, idx: u32) {
        let (prev, next, call) = {
            let r = &self.records[idx];
            (r.prev, r.next, r.call)
        };
        if prev == NIL {
            let b = self.bucket(&call.expect("hashed records carry a call"));
            self.buckets[b] = next;
        } else {
            self.records[prev].next = next;
        }
        if next != NIL {
            self.records[next].prev = prev;
        }
        let r = &mut self.records[idx];
        r.hashed = false;
        r.prev = NIL;
        r.next = NIL;
        self.hashed -= 1;
    }

    /// The oldest hashed record for `call`, and the chain entries compared (the whole chain:
    /// cancelling a callout that does not exist costs what cancelling one that does costs).
    pub(crate) fn hash_find(&self, call: &C) -> (Option<u32>, u64) {
        let mut found = None;
        let mut compared = 0;
        let mut i = self.buckets[self.bucket(call)];
        while i != NIL {
            let r = &self.records[i];
            if r.call.as_ref() == Some(call) {
                // New records go in at the head, so the last match is the oldest.
                found = Some(i);
            }
            compared += 1;
            i = r.next;
        }
        (found, compared)
    }

    /// Doubles the buckets and splits every chain in place, keeping each chain newest first.
    fn grow_buckets(&mut self) {
        let old = self.buckets.len();
        let Some(new) = old.checked_mul(2) else {
            return;
        };
        if self.buckets.try_reserve_exact(new - old).is_err() {
            return;
        }
        self.buckets.resize(new, NIL);
        // A chain of old bucket b splits into buckets b and b + old (the hash's next bit).
        // Walking it from its tail (oldest) and linking each record at the head of its new
        // chain leaves every new chain newest first, as `hash_find` needs.
        for b in 0..old {
            let mut tail = self.buckets[b];
            if tail == NIL {
                continue;
            }
            self.buckets[b] = NIL;
            while self.records[tail].next != NIL {
                tail = self.records[tail].next;
            }
            let mut i = tail;
            while i != NIL {
                let prev = self.records[i].prev;
                let call = self.records[i].call.expect("hashed records carry a call");
                let nb = self.bucket(&call);
                self.link_head(nb, i);
                i = prev;
            }
        }
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        self.records.memory_bytes() + self.buckets.capacity() * core::mem::size_of::<u32>()
    }

    /// Brute-force check of the slab and the chains.
    pub(crate) fn check(&self) -> Result<(), &'static str> {
        self.records.check()?;
        let mut hashed = 0;
        for (b, &head) in self.buckets.iter().enumerate() {
            let mut prev = NIL;
            let mut i = head;
            while i != NIL {
                let r = self
                    .records
                    .get(i)
                    .ok_or("a hash chain names a free record")?;
                if !r.hashed || r.prev != prev {
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
        if hashed != self.hashed || hashed != self.records.iter().filter(|(_, r)| r.hashed).count()
        {
            return Err("a hashed record is missing from its chain");
        }
        Ok(())
    }
}
