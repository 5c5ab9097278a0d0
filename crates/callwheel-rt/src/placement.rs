//! The shard operations on one timer: arm, stop, drain and move, and where an arming is placed.
//!
//! # Locking
//!
//! Lock order: shard locks in index order, then a timer's lock; a thread holding a timer's
//! lock takes no shard lock. A timer's shard index changes only while both the old and the
//! new shard are locked, so an operation locks the shard it read and re-checks the index
//! (`Shared::lock_home`). An arming that ends before the sleeping driver's planned wake-up
//! wakes it; any other leaves it asleep.

use callwheel::Timers;

use crate::counted::Counted;
use crate::runs;
use crate::shared::ShardState;
use crate::shared::{Core, Shared};
use crate::sync::{self, MutexGuard, Ordering};
use crate::timer::Stop;
use crate::timer_core::{Arm, TimerState};
use crate::Error;

impl Shared {
    /// Places `arm` on the wheel of `dest` (`st`), cancelling the timer's pending arming on
    /// `src` (`None`: the same shard). Returns whether the timer was pending.
    fn place(
        core: &Counted<Core>,
        state: &mut TimerState,
        dest: &mut ShardState,
        mut src: Option<&mut ShardState>,
        arm: Arm,
    ) -> Result<bool, Error> {
        let was_pending = state.pending.is_some();
        if arm.base.is_some() {
            // Before anything changes: a refusal leaves the timer as it was.
            dest.reserve_based()?;
        }
        // Same shard, one-shot to one-shot: move the window in place, keeping the handle.
        let mut moved_in_place = false;
        if let (None, Some(h), None) = (&src, state.pending, arm.periodic) {
            if dest.wheel.schedule(h).is_none() {
                moved_in_place = dest.wheel.reset(h, arm.deadline, arm.tolerance).is_some();
            }
        }
        if !moved_in_place {
            let value = core.clone();
            let handle = match arm.periodic {
                Some((period, missed)) => {
                    dest.wheel
                        .start_periodic(arm.deadline, period, arm.tolerance, missed, value)?
                }
                None => dest.wheel.start_with(arm.deadline, arm.tolerance, value)?,
            };
            if let Some(old) = state.pending.replace(handle) {
                match &mut src {
                    Some(src) => drop(src.wheel.stop(old)),
                    None => drop(dest.wheel.stop(old)),
                }
            }
        }
        state.base = arm.base;
        // The list of timers on other clock bases follows the arming: off the shard it left,
        // onto the one it is on when its deadline is on another base.
        match src {
            Some(src) => src.unlist(core),
            None if arm.base.is_none() => dest.unlist(core),
            None => {}
        }
        if arm.base.is_some() {
            dest.list(core);
        }
        Ok(was_pending)
    }

    /// `arm` with the key of a deadline on another clock base computed again, under the lock
    /// of the shard it goes to: a clock set after the caller's computation, whose
    /// re-evaluation that shard may already have made, cannot leave it with a stale key.
    fn fresh(&self, mut arm: Arm) -> Arm {
        if let Some((base, ns)) = arm.base {
            if let Ok(key) = crate::bases::key_on(&*self.clock, base, ns, self.now()) {
                arm.deadline = key;
            }
        }
        arm
    }

    /// Marks the driver of `st` for waking when the window `[deadline, end]`'s aim comes
    /// before its plan.
    fn needs_wake(st: &mut ShardState, deadline: u64, end: u64) -> bool {
        st.plan.wake_for(st.lead, deadline, end)
    }

    /// Locks shards `a != b` in index order; returns the guards as (a, b).
    fn lock_two(
        &self,
        a: usize,
        b: usize,
    ) -> (MutexGuard<'_, ShardState>, MutexGuard<'_, ShardState>) {
        if a < b {
            let ga = self.lock_shard(a);
            (ga, self.lock_shard(b))
        } else {
            let gb = self.lock_shard(b);
            (self.lock_shard(a), gb)
        }
    }

    /// Arms `core` as `arm` says; returns whether it was pending.
    ///
    /// A timer whose last handle is gone (and which is not detached) takes no new arming: only
    /// its callback's `&Timer` can still ask, and an arming made after the dropping handle's
    /// `stop` would fire with no handle left to stop it. The check is made under the shard's
    /// lock, which that `stop` also takes after the count reached zero, so either this arming
    /// comes first (and the `stop` cancels it) or it sees the count at zero.
    pub(crate) fn arm(&self, core: &Counted<Core>, arm: Arm) -> Result<bool, Error> {
        if self.shutdown.begun() {
            return Err(Error::ShutDown);
        }
        if let Some(s) = arm.shard {
            self.check_shard(s)?;
        }
        let (deadline, end) = (
            arm.deadline,
            callwheel::window_end(arm.deadline, arm.tolerance),
        );
        loop {
            let cur = core.shard.load(Ordering::Acquire);
            let dest = arm.shard.unwrap_or(cur);
            let (was, wake) = if dest == cur {
                let mut st = self.lock_shard(cur);
                if core.shard.load(Ordering::Acquire) != cur {
                    continue;
                }
                let mut state = sync::lock(&core.state);
                if st.closed {
                    state.forget_arming();
                    return Err(Error::ShutDown);
                }
                if core.abandoned() {
                    return Ok(state.pending.is_some());
                }
                let was = Self::place(core, &mut state, &mut st, None, self.fresh(arm))?;
                (was, Self::needs_wake(&mut st, deadline, end))
            } else {
                let (mut src, mut dst) = self.lock_two(cur, dest);
                if core.shard.load(Ordering::Acquire) != cur {
                    continue;
                }
                let mut state = sync::lock(&core.state);
                if src.closed || dst.closed {
                    state.forget_arming();
                    return Err(Error::ShutDown);
                }
                if core.abandoned() {
                    return Ok(state.pending.is_some());
                }
                let was = Self::place(core, &mut state, &mut dst, Some(&mut src), self.fresh(arm))?;
                core.shard.store(dest, Ordering::Release);
                (was, Self::needs_wake(&mut dst, deadline, end))
            };
            if wake {
                self.shards[dest].waiter.wake();
            }
            return Ok(was);
        }
    }

    pub(crate) fn stop(&self, core: &Core) -> Stop {
        if self.shutdown.forked() {
            // A copy in a forked child: nothing of it fires here, and a parent thread may
            // have held the shard's lock at the fork.
            return Stop::NotPending;
        }
        let (_, mut st) = self.lock_home(core);
        let mut state = sync::lock(&core.state);
        if st.closed {
            // The shutdown emptied the wheel: the arming was cancelled then, not now.
            state.forget_arming();
        }
        if let Some(h) = state.pending.take() {
            // A stopped arming needs no wake-up: the driver may wake for nothing (its plan can
            // only be early), which costs less than waking it now to re-plan.
            drop(st.wheel.stop(h));
            state.base = None;
            st.unlist(core);
            Stop::Cancelled
        } else if state.running > 0 {
            Stop::Running
        } else {
            Stop::NotPending
        }
    }

    pub(crate) fn drain(&self, core: &Core) -> Stop {
        if self.shutdown.forked() {
            // A callback the parent was running at the fork never returns here.
            return Stop::NotPending;
        }
        let first = self.stop(core);
        let mine = runs::mine(core.id());
        loop {
            let mut state = sync::lock(&core.state);
            loop {
                if state.running <= mine {
                    break;
                }
                // Counted under the timer's lock, which a finishing callback also takes before
                // deciding whether to notify: no notification is lost.
                state.drainers += 1;
                state = sync::wait(&core.idle, state);
                state.drainers -= 1;
            }
            let rearmed = state.pending.is_some();
            drop(state);
            // A callback that re-armed its timer while we waited: cancel that too.
            if !rearmed || self.stop(core) != Stop::Cancelled {
                return first;
            }
        }
    }

    pub(crate) fn move_to(&self, core: &Counted<Core>, dest: usize) -> Result<bool, Error> {
        if self.shutdown.begun() {
            return Err(Error::ShutDown);
        }
        self.check_shard(dest)?;
        loop {
            let cur = core.shard.load(Ordering::Acquire);
            if cur == dest {
                let (_, st) = self.lock_home(core);
                let mut state = sync::lock(&core.state);
                if st.closed {
                    state.forget_arming();
                    return Err(Error::ShutDown);
                }
                return Ok(state.pending.is_some());
            }
            let (mut src, mut dst) = self.lock_two(cur, dest);
            if core.shard.load(Ordering::Acquire) != cur {
                continue;
            }
            let mut state = sync::lock(&core.state);
            if src.closed || dst.closed {
                state.forget_arming();
                return Err(Error::ShutDown);
            }
            let Some(h) = state.pending else {
                core.shard.store(dest, Ordering::Release);
                return Ok(false);
            };
            // Re-arm the same window (and schedule) on the destination before giving up the
            // source, so a full destination leaves the timer where it was.
            let Some((deadline, end)) = src.wheel.window(h) else {
                // Never: a pending arming is in its shard's wheel under that shard's lock.
                state.forget_arming();
                core.shard.store(dest, Ordering::Release);
                return Ok(false);
            };
            let arm = Arm {
                deadline,
                tolerance: end - deadline,
                shard: Some(dest),
                periodic: src.wheel.schedule(h),
                base: state.base,
            };
            let (deadline, end) = (
                arm.deadline,
                callwheel::window_end(arm.deadline, arm.tolerance),
            );
            debug_assert!(src.wheel.len() > 0, "{h:?} pending on an empty wheel");
            Self::place(core, &mut state, &mut dst, Some(&mut src), self.fresh(arm))?;
            core.shard.store(dest, Ordering::Release);
            let wake = Self::needs_wake(&mut dst, deadline, end);
            drop((state, src, dst));
            if wake {
                self.shards[dest].waiter.wake();
            }
            return Ok(true);
        }
    }
}
