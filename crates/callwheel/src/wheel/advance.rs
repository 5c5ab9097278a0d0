//! The advance loop: drains of the overdue queue, jumps to the next slot with work, the
//! processing of one slot (cascade or fire, one timer per step) and the re-arming of periodic
//! timers, with a budget that can stop it after any step and a position saved so that the next
//! call resumes exactly there.

use super::geometry::{BASE, DEFERRED, NIL, OVERDUE, SLOTS};
use super::{prefetch, Wheel};
use crate::advance::Phase;
use crate::time::Tick;
use crate::timers::{Budget, Expired, Meter, Progress, Timers};

impl<T> Wheel<T> {
    fn begin_drain(&mut self) {
        self.adv.begin_drain();
        let first = self.storage.links.next(OVERDUE);
        self.walk_next = if first == OVERDUE { NIL } else { first };
    }

    /// Hands a due timer (already unlinked) to the callback: freed, or re-armed when periodic.
    #[inline]
    fn fire<F>(&mut self, idx: u32, on_expire: &mut F)
    where
        F: FnMut(&mut dyn Timers<T>, Expired<T>),
    {
        let t = self.storage.timer(idx);
        let (deadline, periodic) = (t.deadline, t.window.periodic());
        let handle = self.storage.handle(idx, t.generation.get());
        self.stats.fired += 1;
        self.stats.max_lateness = self
            .stats
            .max_lateness
            .max(self.cursor.saturating_sub(deadline));
        let mut overruns = 0;
        if periodic {
            match self.rearm(idx, deadline) {
                Ok((value, missed)) => {
                    on_expire(
                        self,
                        Expired {
                            handle,
                            deadline,
                            value,
                            overruns: missed,
                        },
                    );
                    return;
                }
                // The last firing of the schedule still reports the periods it missed.
                Err(missed) => overruns = missed,
            }
        }
        let value = self.storage.release(idx);
        self.finished += 1;
        on_expire(
            self,
            Expired {
                handle,
                deadline,
                value,
                overruns,
            },
        );
    }

    /// Re-arms a due periodic timer for its next period and returns a copy of its value and the
    /// periods missed; `Err(periods missed)` when the next deadline would pass the end of time
    /// (the schedule is dropped: this firing is the last).
    fn rearm(&mut self, idx: u32, deadline: Tick) -> Result<(T, u64), u64> {
        // Periodic timers judge missed periods against the time the caller asked for, not the
        // cursor, which replays the past slot by slot.
        let now = self.target;
        let Some(p) = self.periodic.get_mut(idx) else {
            return Err(0);
        };
        let (next, missed) = p.policy.next(deadline, p.period, now);
        let Some(next) = next else {
            self.periodic.remove(idx);
            let t = self.storage.timer_mut(idx);
            t.window = t.window.with_periodic(false);
            return Err(missed);
        };
        p.overruns = missed;
        let (tolerance, copy) = (p.tolerance, p.copy);
        self.storage.timer_mut(idx).deadline = next;
        let end = self.set_window(idx, next, tolerance);
        // Already due on the cursor (it fired from the overdue queue): the next drain. Burst
        // replays the missed deadlines in order, as the cursor reaches them.
        self.arm(idx, next, end);
        // The copy is the caller's code (`T::clone`) and may panic: taken once the timer is
        // armed again, so a panic leaves it scheduled for its next period, not lost.
        let value = copy(&self.storage.timer(idx).value);
        Ok((value, missed))
    }

    /// The advance loop. With `ONE`, it returns right after the first firing, with the
    /// position saved exactly as a budget running out at the next step would save it.
    fn run<const ONE: bool, F>(&mut self, now: Tick, budget: Budget, on_expire: &mut F) -> Progress
    where
        F: FnMut(&mut dyn Timers<T>, Expired<T>),
    {
        let mut meter = Meter::new(budget);
        // One step of the budget (the meter's), or return with the position saved.
        macro_rules! step {
            () => {
                if !meter.step() {
                    return meter.progress();
                }
            };
        }
        if now > self.target {
            self.target = now;
        } else if now < self.cursor {
            // Time never goes backwards for the structure: the call only finishes work already
            // asked for. Counted (a resume at or after the cursor is not a clamp).
            self.stats.clamped += 1;
        }
        // An interrupted drain resumes where it stopped, with the same epoch.
        if self.adv.phase == Phase::Idle {
            self.begin_drain();
        }
        loop {
            if self.adv.phase == Phase::Drain {
                let li = self.walk_next;
                if li != NIL {
                    step!();
                    let next = self.storage.links.next(li);
                    self.walk_next = if next == OVERDUE { NIL } else { next };
                    let idx = li - BASE;
                    if self
                        .adv
                        .fires_in_this_drain_short(self.storage.timer(idx).window.payload())
                    {
                        self.unlink(li);
                        self.fire(idx, on_expire);
                        meter.fired();
                        if ONE {
                            return meter.progress();
                        }
                    }
                    // Otherwise a callback queued it during this drain: it waits for the next.
                    continue;
                }
                if self.cursor >= self.target {
                    self.adv.phase = Phase::Idle;
                    return meter.finish(true);
                }
                step!();
                // A callback re-armed a timer in the past during this drain: it is due at the
                // next tick. Otherwise skip to the next slot with work, or, with nothing left
                // anywhere, straight to the target.
                let (cursor, target) = (self.cursor, self.target);
                let forced = self.overdue_pending();
                let mut next = if forced { cursor + 1 } else { target };
                self.processing = NIL;
                if !self.levels.is_empty() {
                    let (list, start) = self.levels.first_slot(self.cursor);
                    // The slot at the cursor was emptied by its own tick: the next one starts
                    // later.
                    debug_assert!(start > cursor);
                    if start <= next {
                        self.processing = list;
                        next = start;
                        if !forced && list as usize >= SLOTS {
                            // Nothing else is due before this slot ends, and nothing in it
                            // before its smallest deadline `m`: processing it as late as the
                            // start of `m`'s level-0 window (or at the target) moves its timers
                            // down in one cascade instead of one level per tick. A timer
                            // placed from there on is placed exactly as it would have been
                            // after the slot-by-slot descent, so the order is the same.
                            //
                            // When `m` itself is due by the target, the slot is processed at
                            // `m`: its timers due at `m` fire from this one visit instead of
                            // being cascaded to level 0 and visited again, and the others are
                            // placed exactly as from the start of `m`'s level-0 window, since
                            // the two instants share every digit above level 0.
                            let m = self.levels.minimum(list).at;
                            next = if m <= target {
                                m.max(start)
                            } else {
                                (m & !(SLOTS as u64 - 1)).clamp(start, target)
                            };
                        }
                    }
                }
                self.cursor = next;
                self.adv.phase = Phase::Tick;
                continue;
            }
            // Phase::Tick: the slot processed at the cursor, one timer per step.
            let list = self.processing;
            if list != NIL {
                loop {
                    let li = self.storage.links.next(list);
                    if li == list {
                        break;
                    }
                    step!();
                    // The slot is a linked list: the next timer's index is known only now. Ask
                    // for its entry while this one is handled (see `prefetch`).
                    let next = self.pop_front(list, li);
                    if let Some(entry) = self.storage.entry(next.wrapping_sub(BASE) as usize) {
                        prefetch::prefetch(entry);
                    }
                    let idx = li - BASE;
                    let deadline = self.storage.timer(idx).deadline;
                    let end = self.end_of(idx);
                    let at = self.instant(deadline, end);
                    if at <= self.cursor {
                        self.fire(idx, on_expire);
                        meter.fired();
                        if ONE {
                            return meter.progress();
                        }
                    } else {
                        self.stats.cascades += 1;
                        self.place_at(idx, self.cursor, at, end);
                    }
                }
                self.processing = NIL;
            }
            let li = self.storage.links.next(DEFERRED);
            if li != DEFERRED {
                step!();
                self.unlink(li);
                self.place(li - BASE, self.cursor);
                continue;
            }
            self.begin_drain();
        }
    }

    /// Runs the advance loop (all of it, or up to the first firing with `ONE`) with the
    /// in-advance mark set, so that starts from a callback or a periodic re-arm are stamped as
    /// made during the drain.
    #[inline]
    pub(super) fn advance_guarded<const ONE: bool, F>(
        &mut self,
        now: Tick,
        budget: Budget,
        mut on_expire: F,
    ) -> Progress
    where
        F: FnMut(&mut dyn Timers<T>, Expired<T>),
    {
        // A callback may panic and the caller may catch it. Everything the loop changes before
        // calling back is already consistent (the timer fired, the walk's position saved as a
        // budget would save it); only the in-advance mark must not outlive the call, or the
        // next starts would be stamped as if queued from a callback and wait one call too long.
        struct InAdvance<'a, T>(&'a mut Wheel<T>);
        impl<T> Drop for InAdvance<'_, T> {
            fn drop(&mut self) {
                self.0.adv.set_in_advance(false);
            }
        }
        self.adv.set_in_advance(true);
        let guard = InAdvance(self);
        guard.0.run::<ONE, F>(now, budget, &mut on_expire)
    }
}
