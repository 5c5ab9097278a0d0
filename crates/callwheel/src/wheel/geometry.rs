//! The wheel's geometry: eleven levels of 64 slots, the list numbering (slots, then the overdue
//! queue and the deferred list, then the timers' own links) and the digit arithmetic that puts
//! a deadline on its level and slot. See the table at the top of `mod.rs`.

use crate::time::Tick;

pub(super) const SLOTS: usize = 64;
pub(super) const LEVELS: usize = 11;
/// Lists `0..SLOT_LISTS` are the slots, `level * 64 + slot`.
pub(super) const SLOT_LISTS: usize = LEVELS * SLOTS;
/// The list of timers whose deadline had passed when they were (re)armed.
pub(super) const OVERDUE: u32 = SLOT_LISTS as u32;
/// Timers started while a slot is processed wait here until it is done.
pub(super) const DEFERRED: u32 = OVERDUE + 1;
/// The links index of timer 0: the lists' sentinels come first.
pub(super) const BASE: u32 = DEFERRED + 1;
/// The null index (no free slot, no walk).
pub(super) const NIL: u32 = u32::MAX;
/// Timer indices stay below this, so that `BASE + index` never reaches `NIL`.
pub(super) const MAX_TIMERS: usize = (NIL - BASE) as usize;

/// The level on which a timer due at `deadline` sits while the wheel's time is `now`: the
/// highest base-64 digit in which they differ (level 0 when they are equal). That digit is the
/// highest differing bit divided by 6, computed as `bit * 43 >> 8` (exact for every bit 0..=63)
/// so that the compiler sees a level of at most 10, and hence a list below `BASE`: the lists'
/// bounds checks fold away.
#[inline(always)]
pub(super) fn level_for(now: Tick, deadline: Tick) -> usize {
    let bit = ((now ^ deadline) | 1).ilog2() as usize;
    (bit * 43) >> 8
}

#[inline(always)]
pub(super) fn slot_for(level: usize, deadline: Tick) -> usize {
    ((deadline >> (6 * level)) & 63) as usize
}

/// The list of the slot `deadline` falls in on `level`.
#[inline(always)]
pub(super) fn list_for(level: usize, deadline: Tick) -> u32 {
    (level * SLOTS + slot_for(level, deadline)) as u32
}

/// The bits of the wheel's time above level `l`'s digit: the current rotation of the levels
/// above (none above the top level).
pub(super) const ABOVE: [u64; LEVELS] = {
    let mut masks = [0u64; LEVELS];
    let mut level = 0;
    while level < LEVELS - 1 {
        masks[level] = u64::MAX << (6 * level + 6);
        level += 1;
    }
    masks
};

/// The start of the slot `slot` of level `level` in the current rotation of the levels above.
#[inline(always)]
pub(super) fn slot_start(now: Tick, level: usize, slot: usize) -> Tick {
    (now & ABOVE[level]) | ((slot as u64) << (6 * level))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_level_is_the_highest_differing_digit() {
        assert_eq!(level_for(5, 5), 0);
        for bit in 0..64 {
            let deadline = 1u64 << bit;
            assert_eq!(level_for(0, deadline), bit / 6, "bit {bit}");
            assert_eq!(
                level_for(deadline, deadline | (deadline - 1)),
                bit.saturating_sub(1) / 6
            );
        }
        assert_eq!(level_for(0, u64::MAX), LEVELS - 1);
    }
}
