//! Timer handles: 64 bits that name one timer of one set, once.
//!
//! # Layout
//!
//! | bits | field | range |
//! |---|---|---|
//! | 63..40 | key: owned by one live set at a time (from a global counter, or given back by a dropped set) | `1 ..= 2^24 - 2` |
//! | 39..s | generation: how many timers the slot has held under that key | `0 .. 2^(40 - s)` |
//! | s-1..0 | slot: the index of the timer's record in its set | `0 .. quota` |
//!
//! where `s` is the number of bits the set's quota needs (0 for a quota of 1, 20 for the
//! largest, [`MAX_QUOTA`](crate::MAX_QUOTA)), so a small set keeps more generation bits.
//!
//! Each record stores the whole handle it currently answers to (Costello's `callout_handle`,
//! compared in full, not just its ID), and a set accepts a handle only when the record named by
//! its slot bits is live and stores exactly those 64 bits. A key belongs to one live set at a
//! time, and a later owner of a key issues only handles no earlier owner issued (below), so a
//! handle made by another set can never match; a made-up number matches only if it equals a
//! live handle of this set.
//!
//! A slot whose generation would wrap does not wrap: it is re-keyed. It takes the set's newest
//! key (at the key's first generation) if it has not used it yet, otherwise the set takes
//! another key. So no handle is ever issued twice in the life of the process, and stale copies
//! stay stale.
//!
//! A dropped set gives its keys back (those whose generations no slot used up), each with a
//! floor above the low 40 bits of every handle issued under it; a later set that takes such a
//! key starts its slots at the first generation whose handles are all at or above the floor, so
//! it never issues a handle an earlier owner issued, and a stale handle of a dropped set names
//! nothing in the new one. Keys are reused while at least half their low bits are unissued;
//! fresh keys come from the global counter. So a process that makes and drops sets without end
//! does not run out of keys (the counter alone would be spent after 2^24 - 2 sets). Only when no
//! key is left at all is a slot retired instead.
//!
//! The key is never 0 and never `2^24 - 1`, so a handle is never 0 and never `u64::MAX`: the C
//! API can use `{-1, -1}` and zero as sentinels.

use std::fmt;

// A plain std atomic, also under loom: a static needs a const constructor, and the counter is
// not part of any model.
use std::sync::atomic::{AtomicU64, Ordering};

/// Bits of the key field.
pub(crate) const KEY_BITS: u32 = 24;
/// Bits shared by the generation and the slot index.
pub(crate) const LOW_BITS: u32 = 64 - KEY_BITS;
/// The largest key handed out (all ones is kept out so no handle is `u64::MAX`).
pub(crate) const MAX_KEY: u64 = (1 << KEY_BITS) - 2;
/// The most slot bits a set uses (its quota is at most `2^MAX_SLOT_BITS`).
pub(crate) const MAX_SLOT_BITS: u32 = 20;

/// The next key to hand out.
static NEXT_KEY: AtomicU64 = AtomicU64::new(1);

/// Draws a fresh, never-used key; `None` once the global supply is exhausted.
pub(crate) fn fresh_key() -> Option<u64> {
    NEXT_KEY
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |k| {
            (k <= MAX_KEY).then_some(k + 1)
        })
        .ok()
}

/// A key given back is reused only while at least half of its low-bit space is unissued.
const RECYCLE_FLOOR_LIMIT: u64 = 1 << (LOW_BITS - 1);

/// Keys of dropped sets, each with its floor: every handle issued under the key so far has
/// low 40 bits below the floor. (A std mutex under loom too, for the same reason as the counter.)
static RETURNED: std::sync::Mutex<Vec<(u64, u64)>> = std::sync::Mutex::new(Vec::new());

fn returned() -> std::sync::MutexGuard<'static, Vec<(u64, u64)>> {
    RETURNED.lock().unwrap_or_else(|p| p.into_inner())
}

/// A key for a set with `layout`, and the generation its slots start from: a key a dropped set
/// gave back, whose slots start at a generation above every handle issued under it, or else a
/// fresh one (generation 0). `None` once both supplies are exhausted.
pub(crate) fn take_key(layout: Layout) -> Option<(u64, u64)> {
    let mut pool = returned();
    if let Some(&(key, floor)) = pool.last() {
        // The first generation g with g << slot_bits >= floor: every handle the new owner issues
        // is at or above the floor, so none equals a handle of an earlier owner.
        let base = floor.div_ceil(1u64 << layout.slot_bits);
        if base <= layout.max_generation() {
            pool.pop();
            return Some((key, base));
        }
    }
    drop(pool);
    fresh_key().map(|k| (k, 0))
}

/// Gives `key` back for another set once its owner is gone; `floor` is above the low 40 bits
/// of every handle issued (or about to be) under it. A key with too little room left is dropped.
pub(crate) fn give_back(key: u64, floor: u64) {
    if floor <= RECYCLE_FLOOR_LIMIT {
        returned().push((key, floor));
    }
}

/// The low 40 bits of a handle: generation and slot.
pub(crate) fn low_bits(bits: u64) -> u64 {
    bits & ((1u64 << LOW_BITS) - 1)
}

/// The handle of a timer in a [`TimerSet`](crate::TimerSet): 64 bits, never 0, never
/// `u64::MAX`, never issued twice in the life of the process.
///
/// The layout is fixed at 64 bits on purpose: the C API carries a handle in a `struct timeval`
/// (its two fields), so it cannot grow to hold a wider owner identity as the core's
/// [`callwheel::Handle`] does; the key field plays the owner's part.
///
/// Handles are meant to travel (in a C `struct itimerval`, on the wire): [`TimerHandle::to_bits`]
/// and [`TimerHandle::from_bits`] convert losslessly. Any number is accepted by `from_bits`; a
/// set rejects, touching nothing, every number that is not the handle of one of its own live
/// timers.
///
/// The bits are, from the top: a 24-bit key owned by one live set at a time (never 0, never all
/// ones; a set that takes a dropped set's key issues only handles above that set's), then a
/// generation, then the index of the timer's record in its set (as many bits as the set's quota
/// needs, at most 20). A set compares all 64 bits with those its record stores, so another
/// set's handle, a stale one or a made-up one cannot name its timers. A record whose generation
/// would wrap takes a new key instead, so no handle is issued twice in the life of the process.
///
/// ```
/// use callwheel_rt::TimerHandle;
///
/// let h = TimerHandle::from_bits(0x0000_0100_0000_0007);
/// assert_eq!(TimerHandle::from_bits(h.to_bits()), h);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TimerHandle(u64);

impl TimerHandle {
    /// The handle as one 64-bit number.
    pub const fn to_bits(self) -> u64 {
        self.0
    }

    /// A handle from a number given by [`TimerHandle::to_bits`] (or from anywhere: a number that
    /// names no live timer of a set is rejected by that set with
    /// [`Error::InvalidHandle`](crate::Error::InvalidHandle)).
    pub const fn from_bits(bits: u64) -> TimerHandle {
        TimerHandle(bits)
    }
}

impl fmt::Debug for TimerHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TimerHandle({:#018x})", self.0)
    }
}

/// How one set splits the low 40 bits between generation and slot.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    pub(crate) slot_bits: u32,
    pub(crate) gen_bits: u32,
}

impl Layout {
    /// The layout for a set of `quota` timers (`1 ..= 2^MAX_SLOT_BITS`).
    pub(crate) fn for_quota(quota: usize) -> Layout {
        let slot_bits = usize::BITS - (quota.max(1) - 1).leading_zeros();
        Layout {
            slot_bits,
            gen_bits: LOW_BITS - slot_bits,
        }
    }

    /// The largest generation.
    pub(crate) fn max_generation(self) -> u64 {
        (1u64 << self.gen_bits) - 1
    }

    pub(crate) fn compose(self, key: u64, generation: u64, slot: u32) -> u64 {
        debug_assert!((1..=MAX_KEY).contains(&key));
        debug_assert!(generation <= self.max_generation());
        debug_assert!(u64::from(slot) < 1u64 << self.slot_bits || self.slot_bits == 0);
        (key << LOW_BITS) | (generation << self.slot_bits) | u64::from(slot)
    }

    /// The slot bits of `bits`.
    pub(crate) fn slot(self, bits: u64) -> usize {
        (bits & ((1u64 << self.slot_bits) - 1)) as usize
    }

    pub(crate) fn key(self, bits: u64) -> u64 {
        bits >> LOW_BITS
    }

    pub(crate) fn generation(self, bits: u64) -> u64 {
        (bits & ((1u64 << LOW_BITS) - 1)) >> self.slot_bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_split_forty_bits_by_quota() {
        assert_eq!(Layout::for_quota(1).slot_bits, 0);
        assert_eq!(Layout::for_quota(2).slot_bits, 1);
        assert_eq!(Layout::for_quota(1024).slot_bits, 10);
        assert_eq!(Layout::for_quota(1025).slot_bits, 11);
        assert_eq!(
            Layout::for_quota(1 << MAX_SLOT_BITS).slot_bits,
            MAX_SLOT_BITS
        );
        assert_eq!(Layout::for_quota(1 << MAX_SLOT_BITS).gen_bits, 20);
    }

    #[test]
    fn compose_round_trips_and_is_never_zero_or_all_ones() {
        for quota in [1usize, 2, 7, 1024, 1 << MAX_SLOT_BITS] {
            let l = Layout::for_quota(quota);
            let slot = (quota - 1) as u32;
            for (key, generation) in [(1, 0), (MAX_KEY, l.max_generation()), (77, 3)] {
                let bits = l.compose(key, generation, slot);
                assert_ne!(bits, 0);
                assert_ne!(bits, u64::MAX);
                assert_eq!(l.key(bits), key);
                assert_eq!(l.generation(bits), generation);
                assert_eq!(l.slot(bits), slot as usize);
            }
        }
    }
}
