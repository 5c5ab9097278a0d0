//! Where a timer goes and how it leaves: the list operations that keep the storage's lists
//! (`storage.rs`), the levels' occupancy and minimums (`levels.rs`) and the drain's walk in
//! step.

use super::geometry::{fire_inside, level_for, slot_for, BASE, DEFERRED, NIL, OVERDUE, SLOTS};
use super::links::Link;
use super::Wheel;
use crate::advance::Phase;
use crate::time::Tick;

impl<T> Wheel<T> {
    /// Takes links entry `li` off its list. When that empties a slot, its occupancy bit goes;
    /// when the drain was about to visit it, the drain moves on.
    #[inline(always)]
    pub(super) fn unlink(&mut self, li: u32) {
        let Link { prev, next } = self.storage.links.unlink(li);
        if li == self.walk_next {
            // `nextsoftcheck`: the timer the drain would visit next is going away.
            self.walk_next = if next == OVERDUE { NIL } else { next };
        }
        // Both neighbours are the same only when they are the list's sentinel: it is empty now
        // (the overdue queue's and deferred list's bits are never set: see `Levels`).
        if prev == next {
            self.levels.emptied(prev);
        }
    }

    /// Takes `li`, the first timer of slot `list`, off it (a slot is never walked); returns the
    /// new first (the sentinel `list` when the slot is now empty).
    #[inline(always)]
    pub(super) fn pop_front(&mut self, list: u32, li: u32) -> u32 {
        let next = self.storage.links.pop_front(list, li);
        if next == list {
            self.levels.emptied(list);
        }
        next
    }

    /// The instant this wheel fires a timer with the window `[deadline, end]`: [`fire_at`](super::geometry::fire_at),
    /// or the deadline on a wheel made by [`Wheel::at_deadlines`].
    #[inline(always)]
    pub(super) fn instant(&self, deadline: Tick, end: Tick) -> Tick {
        // The exact timer's test first: with a tolerance of 0 known where the timer starts,
        // it folds away together with this one.
        if end <= deadline || self.at_deadlines {
            return deadline;
        }
        fire_inside(deadline, end)
    }

    /// Links a timer (on no list) where its firing instant ([`fire_at`](super::geometry::fire_at)) says: overdue,
    /// deferred while a slot is processed, or its digit's slot.
    #[inline(always)]
    pub(super) fn arm(&mut self, idx: u32, deadline: Tick, end: Tick) {
        let at = self.instant(deadline, end);
        if at <= self.cursor {
            self.push_overdue(idx);
        } else if self.adv.phase == Phase::Tick {
            // A slot is being processed: an older timer with the same deadline may still be in
            // it. Place this one once the slot is done, behind it.
            self.storage.links.push_back(DEFERRED, BASE + idx);
        } else {
            self.place_at(idx, self.cursor, at, end);
        }
    }

    /// Places a timer whose firing instant is after `now` on its digit's level.
    #[inline(always)]
    pub(super) fn place(&mut self, idx: u32, now: Tick) {
        let deadline = self.storage.timer(idx).deadline;
        let end = self.end_of(idx);
        self.place_at(idx, now, self.instant(deadline, end), end);
    }

    /// [`Wheel::place`] with the timer's firing instant ([`fire_at`](super::geometry::fire_at)) and window end already
    /// at hand.
    #[inline(always)]
    pub(super) fn place_at(&mut self, idx: u32, now: Tick, at: Tick, end: Tick) {
        let level = level_for(now, at);
        let slot = slot_for(level, at);
        let list = (level * SLOTS + slot) as u32;
        self.storage.links.push_back(list, BASE + idx);
        self.levels.occupy(level, slot, list, at, end);
    }

    /// Queues a live, unlinked timer as overdue (it fires in the next drain that began after
    /// it was queued: [`AdvanceState::overdue_stamp`](crate::advance::AdvanceState::overdue_stamp)).
    #[inline(always)]
    pub(super) fn push_overdue(&mut self, idx: u32) {
        let stamp = self.adv.short_overdue_stamp();
        let t = self.storage.timer_mut(idx);
        t.window = t.window.with_payload(stamp);
        let li = BASE + idx;
        self.storage.links.push_back(OVERDUE, li);
        // An append to the list being walked after the walk reached its end: visit it too.
        if self.adv.phase == Phase::Drain && self.walk_next == NIL {
            self.walk_next = li;
        }
    }

    #[inline(always)]
    pub(super) fn overdue_pending(&self) -> bool {
        self.storage.links.next(OVERDUE) != OVERDUE
    }

    /// Whether `advance` has work at the cursor itself.
    #[inline(always)]
    pub(super) fn pending_now(&self) -> bool {
        self.adv.phase != Phase::Idle || self.overdue_pending()
    }
}
