//! Queries: the wake-up instant (the earliest window end), the earliest deadline, and what a
//! handle names. None of them changes the wheel.

use super::geometry::{slot_start, BASE, DEFERRED, NIL, OVERDUE, SLOTS};
use super::{Missed, Wheel};
use crate::handle::Handle;
use crate::time::Tick;
use crate::timers::Timers;

impl<T> Wheel<T> {
    /// The identity every handle of this wheel carries ([`Handle::owner`]): with it a caller
    /// short of space can keep only a handle's id and make the handle again with
    /// [`Handle::from_parts`].
    pub fn owner(&self) -> crate::handle::Owner {
        self.storage.owner()
    }

    /// How many periods the latest firing of a periodic timer missed (`None` for a stale handle
    /// or a one-shot timer).
    pub fn overruns(&self, handle: Handle) -> Option<u64> {
        let idx = self.storage.resolve(handle)?;
        self.periodic.get(idx).map(|p| p.overruns)
    }

    /// The window of the live timer `handle` names, as `(deadline, end)` with the end the wheel
    /// keeps, [`window_end`](crate::window_end)`(deadline, tolerance)`: `deadline + tolerance`
    /// (saturating at the end of time), rounded down for a tolerance of 2^30 or more; `None`
    /// for a stale handle. Once the wheel's time has reached a one-shot timer's deadline the
    /// end reported is the deadline (an overdue timer's room holds its drain stamp, not its
    /// end): a window inside the one asked for, so a caller re-arming it elsewhere never makes
    /// it later. The timer itself still fires at its firing instant, which may lie ahead, and
    /// [`Wheel::next_wakeup`] still reports the end kept. A periodic timer's window is always
    /// whole (its tolerance is kept with its schedule).
    pub fn window(&self, handle: Handle) -> Option<(Tick, Tick)> {
        let idx = self.storage.resolve(handle)?;
        let t = self.storage.timer(idx);
        let end = match self.periodic.get(idx).filter(|_| t.window.periodic()) {
            Some(p) => super::window_end(t.deadline, p.tolerance),
            None if t.deadline > self.cursor => self.end_of(idx),
            None => t.deadline,
        };
        Some((t.deadline, end))
    }

    /// The period and missed-period policy of the live periodic timer `handle` names; `None`
    /// for a one-shot timer or a stale handle.
    pub fn schedule(&self, handle: Handle) -> Option<(Tick, Missed)> {
        let idx = self.storage.resolve(handle)?;
        if !self.storage.timer(idx).window.periodic() {
            return None;
        }
        self.periodic.get(idx).map(|p| (p.period, p.policy))
    }

    /// Changes the period of the live periodic timer `handle` names, from its next firing on
    /// (the pending deadline stays); returns the previous period. `None` for a one-shot
    /// timer, a stale handle or a zero period, and nothing changes: a one-shot timer becomes
    /// periodic only by starting it again with [`Wheel::start_periodic`] (its slot keeps no
    /// schedule).
    ///
    /// ```
    /// use callwheel::{Missed, Wheel};
    ///
    /// let mut wheel = Wheel::new();
    /// let h = wheel.start_periodic(10, 10, 0, Missed::Burst, "tick")?;
    /// assert_eq!(wheel.set_period(h, 25), Some(10));
    /// assert_eq!(wheel.schedule(h), Some((25, Missed::Burst)));
    /// # Ok::<(), callwheel::Error>(())
    /// ```
    pub fn set_period(&mut self, handle: Handle, period: Tick) -> Option<Tick> {
        let idx = self.storage.resolve(handle)?;
        if period == 0 || !self.storage.timer(idx).window.periodic() {
            return None;
        }
        let p = self.periodic.get_mut(idx)?;
        Some(core::mem::replace(&mut p.period, period))
    }

    /// The first pending timer at or after position `from` of the wheel's storage, with its
    /// position: `(position, handle, deadline, value)`. Pass `position + 1` to get the next;
    /// `None` past the last. Positions are the storage's order, not the deadlines'. A walk
    /// sees every timer that stays pending throughout it exactly once; one started during
    /// the walk may or may not be seen. A timer due but not yet taken by `advance` or
    /// `poll_expired` is still pending. [`Wheel::iter`] is the same walk as an iterator.
    pub fn pending_from(&self, from: usize) -> Option<(usize, Handle, Tick, &T)> {
        let at = from.min(self.storage.len());
        self.storage
            .entries_from(at)
            .iter()
            .enumerate()
            .find_map(|(i, e)| match e {
                super::storage::Entry::Live(t) => {
                    let idx = at + i;
                    let handle = self.storage.handle(idx as u32, t.generation.get());
                    Some((idx, handle, t.deadline, &t.value))
                }
                super::storage::Entry::Free { .. } => None,
            })
    }

    /// Every pending timer, as `(handle, deadline, value)`, in storage order (not by
    /// deadline): wahern/timeout's `TIMEOUTS_FOREACH`.
    ///
    /// ```
    /// use callwheel::{Timers, Wheel};
    ///
    /// let mut wheel = Wheel::new();
    /// wheel.start(30, 'b')?;
    /// wheel.start(10, 'a')?;
    /// let mut seen: Vec<_> = wheel.iter().map(|(_, deadline, &v)| (deadline, v)).collect();
    /// seen.sort();
    /// assert_eq!(seen, [(10, 'a'), (30, 'b')]);
    /// # Ok::<(), callwheel::Error>(())
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (Handle, Tick, &T)> + '_ {
        let mut from = 0;
        core::iter::from_fn(move || {
            let (at, handle, deadline, value) = self.pending_from(from)?;
            from = at + 1;
            Some((handle, deadline, value))
        })
    }

    /// The value of the live timer `handle` names, to read or replace in place (an async
    /// driver keeps a future's waker there and swaps it when the future moves to another
    /// task). `None` for a stale handle. The timer's place in the wheel does not change.
    pub fn value_mut(&mut self, handle: Handle) -> Option<&mut T> {
        let idx = self.storage.resolve(handle)?;
        Some(&mut self.storage.timer_mut(idx).value)
    }

    /// The instant a driver should next wake: the earliest window end among the pending timers,
    /// or the wheel's own time when `advance` has work at it (timers already due, or an
    /// `advance` still in progress — inside a callback — or left unfinished by a budget or a
    /// panicking callback). Never later than any window's end; after stops or resets it may be
    /// earlier than needed. `None` when nothing is pending.
    // Inlined into its callers, an event loop's query each turn: a call of its own cost the C
    // API's wake-up query 9 instructions more.
    #[inline(always)]
    pub fn next_wakeup(&self) -> Option<Tick> {
        if Timers::len(self) == 0 {
            return None;
        }
        if self.pending_now() {
            return Some(self.cursor);
        }
        if self.levels.is_empty() {
            return None;
        }
        let mut best = Tick::MAX;
        let mut levels = self.levels.busy_levels();
        while levels != 0 {
            let level = levels.trailing_zeros() as usize;
            let mut bits = self.levels.occupied(level);
            while bits != 0 {
                let slot = bits.trailing_zeros() as usize;
                // Slots come in time order: once one starts at or after the best end, every
                // window from here on ends later.
                if slot_start(self.cursor, level, slot) >= best {
                    return Some(best.max(self.cursor));
                }
                best = best.min(self.levels.minimum((level * SLOTS + slot) as u32).end);
                bits &= bits - 1;
            }
            levels &= levels - 1;
        }
        Some(best.max(self.cursor))
    }

    /// The timer that `advance` or [`Wheel::poll_expired`] fires next once time reaches it,
    /// without firing it: the one due soonest (by its [`firing_instant`](crate::firing_instant);
    /// among equal instants, the one started first), or, while timers wait at the wheel's own
    /// time (overdue, or an `advance` left unfinished), the first of those. `None` when nothing
    /// is pending. O(1) plus a walk of the earliest occupied slot.
    ///
    /// ```
    /// use callwheel::{Timers, Wheel};
    ///
    /// let mut wheel = Wheel::new();
    /// wheel.start(30, "b")?;
    /// let a = wheel.start(10, "a")?;
    /// assert_eq!(wheel.peek(), Some(a));
    /// assert_eq!(wheel.poll_expired(100).map(|e| e.handle), Some(a));
    /// # Ok::<(), callwheel::Error>(())
    /// ```
    pub fn peek(&self) -> Option<Handle> {
        if Timers::len(self) == 0 {
            return None;
        }
        // An unfinished drain fires from where its walk stands, the timers queued for it.
        let mut li = self.walk_next;
        while li != NIL && li != OVERDUE {
            if self
                .adv
                .fires_in_this_drain_short(self.storage.timer(li - BASE).window.payload())
            {
                return Some(self.handle_of(li - BASE));
            }
            li = self.storage.links.next(li);
        }
        // A slot being processed at the cursor fires its due timers first, in list order.
        if self.processing != NIL {
            let mut li = self.storage.links.next(self.processing);
            while li != self.processing {
                let t = self.storage.timer(li - BASE);
                if self.instant(t.deadline, self.end_of(li - BASE)) <= self.cursor {
                    return Some(self.handle_of(li - BASE));
                }
                li = self.storage.links.next(li);
            }
        }
        let overdue = self.storage.links.next(OVERDUE);
        if overdue != OVERDUE {
            return Some(self.handle_of(overdue - BASE));
        }
        // The earliest slot holds the earliest instant among the placed timers, and the
        // first of its timers with the smallest instant fires first (list order is start
        // order among equals).
        let mut best: Option<(Tick, u32)> = None;
        if !self.levels.is_empty() {
            let (list, _) = self.levels.first_slot(self.cursor);
            self.earliest_in(list, &mut best);
        }
        // The rest of a slot being processed moves down behind the timers already there, and
        // so do the timers started meanwhile.
        if self.processing != NIL {
            self.earliest_in(self.processing, &mut best);
        }
        self.earliest_in(DEFERRED, &mut best);
        best.map(|(_, idx)| self.handle_of(idx))
    }

    /// Lowers `best` to the first timer of `list` with the smallest firing instant, when it is
    /// below `best`'s.
    fn earliest_in(&self, list: u32, best: &mut Option<(Tick, u32)>) {
        let mut li = self.storage.links.next(list);
        while li != list {
            let t = self.storage.timer(li - BASE);
            let at = self.instant(t.deadline, self.end_of(li - BASE));
            if best.is_none_or(|(b, _)| at < b) {
                *best = Some((at, li - BASE));
            }
            li = self.storage.links.next(li);
        }
    }

    /// The handle of the live timer at `idx`.
    fn handle_of(&self, idx: u32) -> Handle {
        self.storage
            .handle(idx, self.storage.timer(idx).generation.get())
    }

    /// The earliest deadline, as [`Timers::next_expiry`] documents
    /// it for the wheel.
    #[inline]
    pub(super) fn earliest_deadline(&self) -> Option<Tick> {
        if Timers::len(self) == 0 {
            return None;
        }
        if self.pending_now() {
            return Some(self.cursor);
        }
        if self.levels.is_empty() {
            return None;
        }
        let (list, _) = self.levels.first_slot(self.cursor);
        Some(self.levels.minimum(list).at.max(self.cursor))
    }

    /// The deadline of the live timer `handle` names.
    #[inline]
    pub(super) fn deadline_of(&self, handle: Handle) -> Option<Tick> {
        self.storage
            .resolve(handle)
            .map(|idx| self.storage.timer(idx).deadline)
    }
}
