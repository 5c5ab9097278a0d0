//! Timer handles: 64 bits that name one timer of one set, once.
//!
//! # Layout
//!
//! | bits | field | range |
//! |---|---|---|
//! | 63..40 | key: a process-unique number from a global counter, never reused | `1 ..= 2^24 - 2` |
//! | 39..s | generation: how many timers the slot has held under that key | `0 .. 2^(40 - s)` |
//! | s-1..0 | slot: the index of the timer's record in its set | `0 .. quota` |
//!
//! where `s` is the number of bits the set's quota needs (0 for a quota of 1, 20 for the
//! largest, [`MAX_QUOTA`](crate::MAX_QUOTA)), so a small set keeps more generation bits.
//!
//! Each record stores the whole handle it currently answers to (Costello's `callout_handle`,
//! compared in full, not just its ID), and a set accepts a handle only when the record named by
//! its slot bits is live and stores exactly those 64 bits. Keys are handed out to one set only,
//! so a handle made by another set can never match; a made-up number matches only if it equals
//! a live handle of this set.
//!
//! A slot whose generation would wrap does not wrap: it is re-keyed. It takes the set's newest
//! key (generation 0) if it has not used it yet, otherwise the set draws a fresh key from the
//! global counter. So no handle is ever issued twice in the life of the process, and stale
//! copies stay stale. Only when the global counter runs out (after 2^24 - 2 keys) is a slot
//! retired instead.
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

/// The handle of a timer in a [`TimerSet`](crate::TimerSet): 64 bits, never 0, never
/// `u64::MAX`, never issued twice in the life of the process.
///
/// Handles are meant to travel (in a C `struct itimerval`, on the wire): [`TimerHandle::to_bits`]
/// and [`TimerHandle::from_bits`] convert losslessly. Any number is accepted by `from_bits`; a
/// set rejects, touching nothing, every number that is not the handle of one of its own live
/// timers.
///
/// The bits are, from the top: a 24-bit key drawn from a process-wide counter and owned by one
/// set only (never 0, never all ones, never reused), then a generation, then the index of the
/// timer's record in its set (as many bits as the set's quota needs, at most 20). A set compares
/// all 64 bits with those its record stores, so another set's handle, a stale one or a made-up
/// one cannot name its timers. A record whose generation would wrap takes a new key instead, so
/// no handle is issued twice in the life of the process.
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
