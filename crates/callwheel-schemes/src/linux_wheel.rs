//! Linux's timer wheel since 4.8: levels of 64 buckets whose granularity grows eightfold per
//! level, a timer placed once by how far ahead it is and never cascaded, firing up to one
//! bucket late (Gleixner's rework of `kernel/time/timer.c`, 2016).
//!
//! ```text
//!   level 0: 64 buckets of 1 tick      deltas below 63
//!   level 1: 64 buckets of 8 ticks     deltas below 63 × 8
//!   level l: 64 buckets of 8^l ticks   deltas below 63 × 8^l
//!   a timer goes to the first level whose reach covers its delta, into the bucket of its
//!   deadline rounded up to that level's granularity, and fires there: never early, at most
//!   8^l - 1 ticks late
//! ```
//!
//! | operation | cost |
//! |---|---|
//! | start | O(1): the level from the delta, a bit, an append |
//! | stop | O(1) |
//! | advance | O(levels) to find the next bucket with work, O(1) per timer fired; no cascades |
//! | lateness | below one bucket of the level the delta chose: 8^l - 1 ticks, about an eighth of the delta |
//!
//! Each level's buckets form a ring over the next 64 of its granules, so a bucket only ever
//! holds timers due at one instant (a delta below `63 × 8^l`, rounded up by less than one
//! granule, stays within 64 granules of the clock). The kernel caps the levels at 8 or 9 and
//! fires anything further ahead at the cap, early; here 21 levels cover every `u64` deadline,
//! and a deadline whose rounded bucket would pass the end of time waits on a list that fires at
//! `u64::MAX`.
//!
//! The lateness is the level's, the same for every timer on it, whatever each timer could
//! accept: [`callwheel::Wheel`] keeps a window per timer and spares only the timers whose own
//! window holds a coarse boundary. Windows given to `start_with` are ignored here, as the
//! kernel's `timer_list` has none.

use crate::clock::{tick_driven_scheme, Core, Step, TickDriven};
use callwheel::Error;
use callwheel::Tick;

/// Buckets per level (the kernel's `LVL_SIZE`).
const BUCKETS: u32 = 64;
/// Bits of granularity added per level (the kernel's `LVL_CLK_SHIFT`): ×8.
const SHIFT: u32 = 3;
/// Levels enough for every delta: level 20's reach, 63 × 8^20, passes 2^64.
pub const LEVELS: u32 = 21;
/// The list of the timers whose rounded bucket would pass `u64::MAX`; they fire at `u64::MAX`.
const LAST: u32 = LEVELS * BUCKETS + 1;

/// The level a timer `delta` ticks ahead goes to: the first whose reach, `63 × 8^l` ticks,
/// covers it.
fn level_for(delta: Tick) -> u32 {
    let mut level = 0;
    while level + 1 < LEVELS && delta >= u64::from(BUCKETS - 1) << (SHIFT * level) {
        level += 1;
    }
    level
}

/// How late a timer started `delta` ticks ahead may fire: one granule of its level, less one.
pub fn lateness(delta: Tick) -> Tick {
    (1u64 << (SHIFT * level_for(delta))) - 1
}

/// Linux's non-cascading wheel.
#[derive(Debug)]
pub struct LinuxWheel<T> {
    core: Core<T>,
    /// Bit `b` of word `l` is set while bucket `b` of level `l` holds a timer.
    occupied: [u64; LEVELS as usize],
}

impl<T> Default for LinuxWheel<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> LinuxWheel<T> {
    /// An empty wheel at time 0 whose slab grows on demand.
    pub fn new() -> LinuxWheel<T> {
        LinuxWheel {
            core: Core::growing(LAST as usize),
            occupied: [0; LEVELS as usize],
        }
    }

    /// The same, holding at most `capacity` timers.
    pub fn with_capacity(capacity: usize) -> Result<LinuxWheel<T>, Error> {
        Ok(LinuxWheel {
            core: Core::new(LAST as usize, Some(capacity))?,
            occupied: [0; LEVELS as usize],
        })
    }

    /// The list (1-based, after the overdue list) of bucket `bucket` of `level`.
    fn list(level: u32, bucket: u32) -> u32 {
        level * BUCKETS + bucket + 1
    }

    /// Where a timer due at `expiry` goes while the clock reads `now` (< `expiry`): its list
    /// and the instant the bucket fires, or [`LAST`] and `u64::MAX`.
    fn bucket_of(now: Tick, expiry: Tick) -> (u32, Tick) {
        let level = level_for(expiry - now);
        let granule = SHIFT * level;
        let below = (1u64 << granule) - 1;
        match expiry.checked_add(below) {
            Some(up) => {
                let at = up & !below;
                let bucket = ((at >> granule) % u64::from(BUCKETS)) as u32;
                (Self::list(level, bucket), at)
            }
            None => (LAST, Tick::MAX),
        }
    }

    /// The first instant after the cursor at which `level`'s buckets have work, if any.
    fn next_on_level(&self, level: u32) -> Option<Tick> {
        let bits = self.occupied[level as usize];
        if bits == 0 {
            return None;
        }
        let granule = SHIFT * level;
        // Every bucket's instant is in the next 64 granules after the cursor's: rotate the
        // ring so that the first of them comes first.
        let first = (self.core.cursor >> granule) + 1;
        let k = bits
            .rotate_right((first % u64::from(BUCKETS)) as u32)
            .trailing_zeros();
        let at = first + u64::from(k);
        // No bucket is placed past the end of time (those wait on `LAST`).
        (at <= Tick::MAX >> granule).then(|| at << granule)
    }
}

impl<T> TickDriven<T> for LinuxWheel<T> {
    fn core(&self) -> &Core<T> {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core<T> {
        &mut self.core
    }

    fn place(&mut self, idx: u32) {
        let (list, _) = Self::bucket_of(self.core.cursor, self.core.arena.node(idx).expiry);
        self.core.arena.push_back(list, idx);
        if list != LAST {
            let (level, bucket) = ((list - 1) / BUCKETS, (list - 1) % BUCKETS);
            self.occupied[level as usize] |= 1 << bucket;
        }
    }

    fn detach(&mut self, idx: u32) {
        let list = self.core.arena.node(idx).list;
        self.core.arena.unlink(idx);
        if list != LAST && self.core.arena.is_list_empty(list) {
            let (level, bucket) = ((list - 1) / BUCKETS, (list - 1) % BUCKETS);
            self.occupied[level as usize] &= !(1 << bucket);
        }
    }

    fn next_work(&self) -> Option<Tick> {
        let next = (0..LEVELS).filter_map(|l| self.next_on_level(l)).min();
        if self.core.arena.is_list_empty(LAST) {
            return next;
        }
        next.or(Some(Tick::MAX))
    }

    fn begin_tick(&mut self, _tick: Tick) {}

    fn step_tick(&mut self, tick: Tick) -> Step {
        // The buckets due at `tick`: one per level whose granularity divides it, finest first
        // (the kernel's collection order).
        for level in 0..LEVELS {
            let granule = SHIFT * level;
            if level > 0 && tick & ((1 << granule) - 1) != 0 {
                break;
            }
            let bucket = ((tick >> granule) % u64::from(BUCKETS)) as u32;
            if self.occupied[level as usize] & (1 << bucket) == 0 {
                continue;
            }
            let head = self.core.arena.first(Self::list(level, bucket));
            self.detach(head);
            return Step::Fire(head);
        }
        if tick == Tick::MAX && !self.core.arena.is_list_empty(LAST) {
            let head = self.core.arena.first(LAST);
            self.detach(head);
            return Step::Fire(head);
        }
        Step::TickDone
    }

    fn extra_bytes(&self) -> usize {
        core::mem::size_of_val(&self.occupied)
    }

    fn check_structure(&self) -> Result<(), &'static str> {
        for list in 1..=LAST {
            let busy = !self.core.arena.is_list_empty(list);
            if list != LAST {
                let (level, bucket) = ((list - 1) / BUCKETS, (list - 1) % BUCKETS);
                if busy != (self.occupied[level as usize] & (1 << bucket) != 0) {
                    return Err("an occupancy bit disagrees with its bucket");
                }
            }
            let mut i = self.core.arena.first(list);
            while i != crate::arena::NIL {
                let node = self.core.arena.node(i);
                i = node.next;
                if list == LAST {
                    // Only a deadline within one top-level granule of the end of time rounds
                    // past it.
                    if node.expiry <= Tick::MAX - (1 << (SHIFT * (LEVELS - 1))) {
                        return Err("a timer on the end-of-time list far from the end of time");
                    }
                    continue;
                }
                let (level, bucket) = ((list - 1) / BUCKETS, (list - 1) % BUCKETS);
                let below = (1u64 << (SHIFT * level)) - 1;
                let Some(at) = node.expiry.checked_add(below).map(|up| up & !below) else {
                    return Err("a timer in a bucket past the end of time");
                };
                if ((at >> (SHIFT * level)) % u64::from(BUCKETS)) as u32 != bucket {
                    return Err("a timer in the wrong bucket");
                }
                if at <= self.core.cursor && !self.core.pending_now() {
                    return Err("a due bucket was left unprocessed");
                }
                if at.saturating_sub(self.core.cursor) > u64::from(BUCKETS) << (SHIFT * level) {
                    return Err("a bucket beyond its level's ring");
                }
            }
        }
        Ok(())
    }
}

tick_driven_scheme!(LinuxWheel);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_the_kernels_reach() {
        assert_eq!(level_for(0), 0);
        assert_eq!(level_for(62), 0);
        assert_eq!(level_for(63), 1);
        assert_eq!(level_for(63 * 8 - 1), 1);
        assert_eq!(level_for(63 * 8), 2);
        assert_eq!(level_for(u64::MAX), LEVELS - 1);
        assert_eq!(lateness(10), 0);
        assert_eq!(lateness(100), 7);
        assert_eq!(lateness(1_000), 63);
    }

    #[test]
    fn buckets_fire_at_their_rounded_instant() {
        // 1_000 ahead: level 2 (granule 64), rounded up to 1_024.
        assert_eq!(LinuxWheel::<()>::bucket_of(0, 1_000).1, 1_024);
        assert_eq!(LinuxWheel::<()>::bucket_of(0, 1_024).1, 1_024);
        assert_eq!(
            LinuxWheel::<()>::bucket_of(0, u64::MAX - 3),
            (LAST, u64::MAX)
        );
    }
}
