//! The checker: every invariant of the wheel verified by brute force, as wahern/timeout's
//! `timeouts_check()` does. The parts check their own first (the storage its lengths, live
//! count and free list; the levels their words); then every list is walked against them (its
//! links both ways, each timer's level, slot and window, the occupancy bits, the slots'
//! minimums), and the periodic schedules and the clock are checked. For tests and debugging:
//! O(n) over the slab and the lists.

use alloc::vec;

use super::geometry::{level_for, slot_for, BASE, DEFERRED, NIL, OVERDUE, SLOTS, SLOT_LISTS};
use super::storage::Entry;
use super::Wheel;
use crate::advance::Phase;

impl<T> Wheel<T> {
    pub(super) fn check_structure(&self) -> Result<(), &'static str> {
        // The pending count is derived from the counters; checked here without the
        // subtraction `len` does, so that counters gone wrong are reported, not a panic.
        let pending = self
            .stats
            .started
            .checked_sub(self.stats.stopped)
            .and_then(|n| n.checked_sub(self.finished))
            .ok_or("live count is wrong")?;
        self.storage.check(pending as usize)?;
        if self.cursor > self.target {
            return Err("cursor is past the target");
        }
        if self.adv.phase == Phase::Idle && self.cursor != self.target {
            return Err("idle with the cursor short of the target");
        }
        if self.adv.phase != Phase::Tick && self.storage.links.next(DEFERRED) != DEFERRED {
            return Err("timers left deferred outside a slot's processing");
        }
        if self.adv.phase != Phase::Tick && self.processing != NIL {
            return Err("a slot marked as processed outside a tick");
        }
        if self.adv.phase != Phase::Drain && self.walk_next != NIL {
            return Err("a drain walk outside a drain");
        }
        // Every list: links agree both ways, every member is live, no cycles.
        let mut seen = vec![false; self.storage.len()];
        let mut on_lists = 0usize;
        for list in 0..BASE {
            let mut prev = list;
            let mut li = self.storage.links.next(list);
            while li != list {
                if li < BASE || (li - BASE) as usize >= self.storage.len() {
                    return Err("a list names a missing timer or another list's sentinel");
                }
                let idx = (li - BASE) as usize;
                if seen[idx] {
                    return Err("a timer on two lists, or a cycle");
                }
                seen[idx] = true;
                let Some(Entry::Live(t)) = self.storage.entry(idx) else {
                    return Err("free slot on a list");
                };
                if self.storage.links.get(li).prev != prev {
                    return Err("prev link broken");
                }
                if list != OVERDUE && t.window.checked_end(t.deadline).is_none() {
                    return Err("a window ends past the end of time");
                }
                if (list as usize) < SLOT_LISTS {
                    let (level, slot) = (list as usize / SLOTS, list as usize % SLOTS);
                    let end = self.end_of(li - BASE);
                    let at = self.instant(t.deadline, end);
                    if list != self.processing
                        && (level_for(self.cursor, at) != level || slot_for(level, at) != slot)
                    {
                        return Err("timer on the wrong level or slot");
                    }
                    if list != self.processing && at <= self.cursor {
                        return Err("a due timer left in a slot");
                    }
                    let m = self.levels.minimum(list);
                    if end < m.end || at < m.at {
                        return Err("a slot's minimum window end or firing instant is too high");
                    }
                }
                // A stamp on the overdue queue is the current drain's epoch or one of the two
                // before it (see `AdvanceState::short_overdue_stamp`).
                let (stamp, adv) = (t.window.payload(), &self.adv);
                if list == OVERDUE
                    && (!adv.fires_in_this_drain_short(stamp.wrapping_sub(1))
                        || adv.fires_in_this_drain_short(stamp.wrapping_add(2)))
                {
                    return Err("an overdue timer's stamp is in the future or too old");
                }
                if list == OVERDUE && self.adv.phase == Phase::Idle && t.deadline > self.cursor {
                    return Err("an overdue timer is not overdue");
                }
                if t.window.periodic() != self.periodic.get(li - BASE).is_some() {
                    return Err("periodic flag and schedule disagree");
                }
                prev = li;
                li = self.storage.links.next(li);
                on_lists += 1;
            }
            if self.storage.links.get(list).prev != prev {
                return Err("list tail is wrong");
            }
            if (list as usize) < SLOT_LISTS {
                let busy = self.levels.is_occupied(list);
                if busy != (prev != list) {
                    return Err("occupancy bit disagrees with its slot");
                }
            }
        }
        self.levels.check()?;
        if on_lists as u64 != pending {
            return Err("a live timer is on no list");
        }
        self.periodic.check()?;
        for idx in self.periodic.keys() {
            match self.storage.entry(idx as usize) {
                Some(Entry::Live(t)) if t.window.periodic() => {}
                _ => return Err("a periodic schedule outlived its timer"),
            }
        }
        Ok(())
    }
}
