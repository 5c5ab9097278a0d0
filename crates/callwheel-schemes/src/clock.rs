//! The tick loop every arena-based scheme shares: PERTICKBOOKKEEPING, the overdue queue, step
//! budgets and exact resumption.
//!
//! A scheme says only where a timer goes ([`TickDriven::place`]), how it leaves
//! ([`TickDriven::detach`]) and what one step of a tick's work is ([`TickDriven::step_tick`]).
//! This loop does the rest, the same way for all of them:
//!
//! ```text
//!            ┌──────────── advance(now) ─────────────┐
//!            ▼                                       │
//!   drain the overdue queue ──(cursor == target)──► done
//!            │
//!            ▼ cursor = next tick with possible work (≤ target)
//!   step the tick's buckets until the tick is done ──┘
//! ```
//!
//! Every box is interruptible after any step; the phase and the arena's walk (Costello's
//! `nextsoftcheck`) are kept in the scheme, so the next call resumes at the same node.
//!
//! The overdue queue holds timers started with a deadline at or before the cursor. Each drain
//! fires only the timers queued before the drain began (they carry the drain's epoch in `aux`), so
//! a callback that keeps re-arming itself in the past makes progress one drain at a time instead
//! of spinning inside one `advance`.

use crate::arena::{Arena, NIL};
use callwheel::advance::{AdvanceState, Phase};
use callwheel::Tick;
use callwheel::{Budget, Error, Expired, Handle, Meter, Progress, Timers};

/// List 0 of every arena-based scheme: timers whose deadline had passed when they started.
pub(crate) const OVERDUE: u32 = 0;

/// The clock state and storage shared by the arena-based schemes.
#[derive(Debug)]
pub(crate) struct Core<T> {
    pub(crate) arena: Arena<T>,
    /// The last tick processed (Costello's `softticks`).
    pub(crate) cursor: Tick,
    /// The latest `now` asked for (Costello's `ticks`).
    target: Tick,
    /// The call's phase (in [`Phase::Tick`], stepping the work of tick `cursor`) and the
    /// drains' epochs.
    adv: AdvanceState,
    /// How many timers are on the overdue list.
    overdue: usize,
    /// How many `advance` calls asked for a time earlier than an earlier call had.
    pub(crate) clamped: u64,
}

impl<T> Core<T> {
    /// A core with the overdue list plus `lists` lists of the scheme's own (numbered from 1),
    /// whose slab grows on demand.
    pub(crate) fn growing(lists: usize) -> Core<T> {
        Self::with_arena(Arena::growing(lists + 1))
    }

    /// The same with an optional fixed capacity (see [`Arena::new`]).
    pub(crate) fn new(lists: usize, capacity: Option<usize>) -> Result<Core<T>, Error> {
        Ok(Self::with_arena(Arena::new(lists + 1, capacity)?))
    }

    fn with_arena(arena: Arena<T>) -> Core<T> {
        Core {
            arena,
            cursor: 0,
            target: 0,
            adv: AdvanceState::new(),
            overdue: 0,
            clamped: 0,
        }
    }

    /// Where a scheme's timers must be sought next: the cursor while work is left at it.
    pub(crate) fn pending_now(&self) -> bool {
        self.adv.phase != Phase::Idle || !self.arena.is_list_empty(OVERDUE)
    }

    /// Queues a live, unlinked node as overdue (it fires in the next drain that began after
    /// it was queued: [`AdvanceState::overdue_stamp`]).
    pub(crate) fn push_overdue(&mut self, idx: u32) {
        self.arena.node_mut(idx).aux = self.adv.overdue_stamp();
        self.arena.push_back(OVERDUE, idx);
        self.overdue += 1;
    }

    /// Takes a node off the overdue queue.
    pub(crate) fn unlink_overdue(&mut self, idx: u32) {
        self.arena.unlink(idx);
        self.overdue -= 1;
    }

    fn begin_drain(&mut self) {
        self.adv.begin_drain();
        self.arena.walk_begin(OVERDUE);
    }

    /// How many timers the scheme's own structure holds (all but the overdue ones).
    #[inline]
    pub(crate) fn structure_len(&self) -> usize {
        self.arena.len() - self.overdue
    }

    /// Memory held, for [`Timers::memory_bytes`].
    pub(crate) fn memory_bytes(&self) -> usize {
        self.arena.memory_bytes()
    }

    /// Checks the arena and the clock's own invariants.
    pub(crate) fn check(&self) -> Result<(), &'static str> {
        self.arena.check()?;
        if self.cursor > self.target {
            return Err("cursor is past the target");
        }
        if self.adv.phase == Phase::Idle && self.cursor != self.target {
            return Err("idle with the cursor short of the target");
        }
        let mut i = self.arena.first(OVERDUE);
        while i != NIL {
            if self.arena.node(i).expiry > self.cursor && self.adv.phase == Phase::Idle {
                return Err("an overdue timer is not overdue");
            }
            i = self.arena.node(i).next;
        }
        Ok(())
    }
}

/// What one step of a tick's work did.
pub(crate) enum Step {
    /// This timer is due: the scheme has already detached it.
    Fire(u32),
    /// One timer was examined and kept, or moved (a cascade).
    Worked,
    /// Nothing more to do at this tick.
    TickDone,
}

/// A scheme driven by the shared tick loop.
pub(crate) trait TickDriven<T>: Timers<T> + Sized {
    fn core(&self) -> &Core<T>;
    fn core_mut(&mut self) -> &mut Core<T>;

    /// The latest deadline `start` accepts now (`u64::MAX` for unbounded schemes).
    fn max_expiry(&self) -> Tick {
        Tick::MAX
    }

    /// Makes room for one more node in the scheme's own index structure (beyond the arena), so
    /// that `place` cannot fail: a refused allocation is `Error::NoMemory` with nothing
    /// changed. Schemes whose index is the arena's lists need nothing.
    fn reserve_one(&mut self) -> Result<(), Error> {
        Ok(())
    }

    /// Links a new node (deadline after the cursor) into the structure.
    fn place(&mut self, idx: u32);

    /// Unlinks a node from the structure (not from the overdue list).
    fn detach(&mut self, idx: u32);

    /// The earliest tick after the cursor at which the structure may have work; `None` when it
    /// holds no timers. Defaults to every tick (PERTICKBOOKKEEPING on each one).
    fn next_work(&self) -> Option<Tick> {
        let core = self.core();
        (core.structure_len() > 0).then(|| core.cursor.saturating_add(1))
    }

    /// [`TickDriven::next_work`] for a walk that goes no further than `target`: a scheme may
    /// spend work here to answer closer to the truth (a hashed wheel skips the rotations in
    /// which nothing is due).
    fn next_work_until(&mut self, target: Tick) -> Option<Tick> {
        let _ = target;
        self.next_work()
    }

    /// Whether a timer in the structure may have its deadline at tick `t` (after the cursor):
    /// `false` only when none does. Defaults to `next_work() <= t`; a hashed wheel answers
    /// from `t`'s busy mark alone.
    fn work_at(&self, t: Tick) -> bool {
        self.next_work().is_some_and(|w| w <= t)
    }

    /// Prepares the work of tick `tick` (the cursor has just moved to it).
    fn begin_tick(&mut self, tick: Tick);

    /// Does one step of tick `tick`'s work.
    fn step_tick(&mut self, tick: Tick) -> Step;

    /// Bytes the scheme holds beyond the arena (bitmaps, index structures).
    fn extra_bytes(&self) -> usize {
        0
    }

    /// The scheme's own invariants, beyond the arena's and the clock's.
    fn check_structure(&self) -> Result<(), &'static str>;
}

/// Implements [`Timers`] and [`Scheme`] for a `TickDriven` scheme `$ty<T>`.
macro_rules! tick_driven_scheme {
    ($ty:ident) => {
        impl<T> ::callwheel::Timers<T> for $ty<T> {
            fn start(
                &mut self,
                expiry: ::callwheel::Tick,
                value: T,
            ) -> Result<::callwheel::Handle, ::callwheel::Error> {
                $crate::clock::start(self, expiry, value)
            }

            fn stop(&mut self, handle: ::callwheel::Handle) -> Option<T> {
                $crate::clock::stop(self, handle)
            }

            fn reset(
                &mut self,
                handle: ::callwheel::Handle,
                deadline: ::callwheel::Tick,
                _tolerance: ::callwheel::Tick,
            ) -> Option<::callwheel::Tick> {
                $crate::clock::reset(self, handle, deadline)
            }

            fn deadline(&self, handle: ::callwheel::Handle) -> Option<::callwheel::Tick> {
                let arena = &$crate::clock::TickDriven::core(self).arena;
                arena.resolve(handle).map(|idx| arena.node(idx).expiry)
            }

            fn now(&self) -> ::callwheel::Tick {
                $crate::clock::TickDriven::core(self).cursor
            }

            fn len(&self) -> usize {
                $crate::clock::TickDriven::core(self).arena.len()
            }

            fn next_expiry(&self) -> Option<::callwheel::Tick> {
                $crate::clock::next_expiry(self)
            }

            fn may_expire_at(&self, t: ::callwheel::Tick) -> bool {
                $crate::clock::may_expire_at(self, t)
            }

            fn memory_bytes(&self) -> usize {
                $crate::clock::TickDriven::core(self).memory_bytes()
                    + $crate::clock::TickDriven::extra_bytes(self)
            }
        }

        impl<T> ::callwheel::Scheme<T> for $ty<T> {
            fn advance<F>(
                &mut self,
                now: ::callwheel::Tick,
                budget: ::callwheel::Budget,
                on_expire: F,
            ) -> ::callwheel::Progress
            where
                F: FnMut(&mut dyn ::callwheel::Timers<T>, ::callwheel::Expired<T>),
            {
                $crate::clock::advance(self, now, budget, on_expire)
            }

            fn check_invariants(&self) -> Result<(), &'static str> {
                $crate::clock::TickDriven::core(self).check()?;
                $crate::clock::TickDriven::check_structure(self)
            }
        }
    };
}
pub(crate) use tick_driven_scheme;

/// STARTTIMER for a [`TickDriven`] scheme.
pub(crate) fn start<T, S: TickDriven<T>>(
    s: &mut S,
    expiry: Tick,
    value: T,
) -> Result<Handle, Error> {
    start_with(s, expiry, 0, value)
}

/// STARTTIMER with the scheme's per-timer word (`aux`) set before the timer is placed; an
/// overdue timer's `aux` is taken over by the drain epoch.
pub(crate) fn start_with<T, S: TickDriven<T>>(
    s: &mut S,
    expiry: Tick,
    aux: u64,
    value: T,
) -> Result<Handle, Error> {
    let overdue = expiry <= s.core().cursor;
    if !overdue {
        let max = s.max_expiry();
        if expiry > max {
            return Err(Error::BeyondRange { expiry, max });
        }
    }
    if !overdue {
        s.reserve_one()?;
    }
    let core = s.core_mut();
    let idx = core.arena.alloc(expiry, value)?;
    let handle = core.arena.handle(idx);
    core.arena.node_mut(idx).aux = aux;
    if overdue {
        core.push_overdue(idx);
    } else {
        s.place(idx);
    }
    Ok(handle)
}

/// STOPTIMER for a [`TickDriven`] scheme.
pub(crate) fn stop<T, S: TickDriven<T>>(s: &mut S, handle: Handle) -> Option<T> {
    let idx = s.core().arena.resolve(handle)?;
    if s.core().arena.node(idx).list == OVERDUE {
        s.core_mut().unlink_overdue(idx);
    } else {
        s.detach(idx);
    }
    Some(s.core_mut().arena.free(idx))
}

/// [`Timers::reset`] for a [`TickDriven`] scheme: the timer leaves the structure (or the
/// overdue queue) and is placed again as a new start would be, in the same arena slot, so its
/// handle stays valid. Placing it again puts it behind the timers already there, which is what
/// "counts as started last" asks.
pub(crate) fn reset<T, S: TickDriven<T>>(
    s: &mut S,
    handle: Handle,
    deadline: Tick,
) -> Option<Tick> {
    let idx = s.core().arena.resolve(handle)?;
    let overdue = deadline <= s.core().cursor;
    if !overdue && deadline > s.max_expiry() {
        return None;
    }
    let previous = s.core().arena.node(idx).expiry;
    if s.core().arena.node(idx).list == OVERDUE {
        s.core_mut().unlink_overdue(idx);
    } else {
        s.detach(idx);
    }
    let core = s.core_mut();
    let node = core.arena.node_mut(idx);
    node.expiry = deadline;
    node.aux = 0;
    if overdue {
        core.push_overdue(idx);
    } else {
        // The structure just gave up this timer's place, so a scheme that reserves room for a
        // start (a heap's vector) has it.
        s.place(idx);
    }
    Some(previous)
}

/// Whether a timer may expire at `t`, for [`Timers::may_expire_at`].
pub(crate) fn may_expire_at<T, S: TickDriven<T>>(s: &S, t: Tick) -> bool {
    if s.core().arena.len() == 0 {
        return false;
    }
    s.core().pending_now() || s.work_at(t)
}

/// The earliest tick at which `advance` has work, for [`Timers::next_expiry`].
pub(crate) fn next_expiry<T, S: TickDriven<T>>(s: &S) -> Option<Tick> {
    if s.core().arena.len() == 0 {
        return None;
    }
    if s.core().pending_now() {
        Some(s.core().cursor)
    } else {
        s.next_work()
    }
}

/// Frees a detached due node and hands it to the callback.
#[inline]
fn fire<T, S, F>(s: &mut S, idx: u32, on_expire: &mut F)
where
    S: TickDriven<T>,
    F: FnMut(&mut dyn Timers<T>, Expired<T>),
{
    let core = s.core_mut();
    let handle = core.arena.handle(idx);
    let deadline = core.arena.node(idx).expiry;
    let value = core.arena.free(idx);
    on_expire(s, Expired::one_shot(handle, deadline, value));
}

/// PERTICKBOOKKEEPING and EXPIRYPROCESSING for a [`TickDriven`] scheme.
pub(crate) fn advance<T, S, F>(s: &mut S, now: Tick, budget: Budget, on_expire: F) -> Progress
where
    S: TickDriven<T>,
    F: FnMut(&mut dyn Timers<T>, Expired<T>),
{
    // A callback may panic and the caller may catch it: the loop's position is already saved
    // as a budget would save it, but the in-advance mark must not outlive the call (the next
    // starts would be stamped as if queued from a callback and wait one call too long).
    struct InAdvance<'a, T, S: TickDriven<T>>(&'a mut S, core::marker::PhantomData<fn(T)>);
    impl<T, S: TickDriven<T>> Drop for InAdvance<'_, T, S> {
        fn drop(&mut self) {
            self.0.core_mut().adv.set_in_advance(false);
        }
    }
    s.core_mut().adv.set_in_advance(true);
    let guard = InAdvance(s, core::marker::PhantomData);
    run(&mut *guard.0, now, budget, on_expire)
}

fn run<T, S, F>(s: &mut S, now: Tick, budget: Budget, mut on_expire: F) -> Progress
where
    S: TickDriven<T>,
    F: FnMut(&mut dyn Timers<T>, Expired<T>),
{
    let mut meter = Meter::new(budget);
    {
        let core = s.core_mut();
        if now > core.target {
            core.target = now;
        } else if now < core.cursor {
            // Time never goes backwards for the structure: the call only finishes work already
            // asked for. Counted (a resume at or after the cursor is not a clamp).
            core.clamped += 1;
        }
        // An interrupted drain resumes where it stopped, with the same epoch.
        if core.adv.phase == Phase::Idle {
            core.begin_drain();
        }
    }
    loop {
        match s.core().adv.phase {
            Phase::Drain => {
                let core = s.core();
                let idx = core.arena.walk_peek();
                if idx != NIL {
                    if !meter.step() {
                        return meter.finish(false);
                    }
                    let core = s.core_mut();
                    core.arena.walk_take();
                    if core.adv.fires_in_this_drain(core.arena.node(idx).aux) {
                        core.arena.unlink(idx);
                        core.overdue -= 1;
                        fire(s, idx, &mut on_expire);
                        meter.fired();
                    }
                    // Otherwise a callback queued it during this drain: it waits for the next.
                    continue;
                }
                if core.cursor >= core.target {
                    let core = s.core_mut();
                    core.arena.walk_end();
                    core.adv.phase = Phase::Idle;
                    return meter.finish(true);
                }
                if !meter.step() {
                    return meter.finish(false);
                }
                let (cursor, target) = (s.core().cursor, s.core().target);
                // A callback re-armed a timer in the past during this drain: it is due at the
                // next tick. Otherwise skip to where the structure has work, or, with nothing
                // left anywhere, straight to the target.
                let next = if s.core().overdue > 0 {
                    cursor + 1
                } else {
                    match s.next_work_until(target) {
                        Some(t) => t.clamp(cursor + 1, target),
                        None => target,
                    }
                };
                let core = s.core_mut();
                core.arena.walk_end();
                core.cursor = next;
                core.adv.phase = Phase::Tick;
                s.begin_tick(next);
            }
            Phase::Tick => {
                if !meter.step() {
                    return meter.finish(false);
                }
                let tick = s.core().cursor;
                match s.step_tick(tick) {
                    Step::Fire(idx) => {
                        fire(s, idx, &mut on_expire);
                        meter.fired();
                    }
                    Step::Worked => {}
                    Step::TickDone => s.core_mut().begin_drain(),
                }
            }
            // Not reached (the call set a phase above); draining again is the safe reading.
            Phase::Idle => s.core_mut().begin_drain(),
        }
    }
}
