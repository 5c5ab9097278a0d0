//! The set's bounded lock hold: timers move to the expired queue at most a budget's worth
//! (the runtime's `max_expiries_per_lock`) per hold of the set's lock, on the driver's firing
//! path and in a user call's catch-up, and a user call waiting for the lock goes before the
//! next budget's worth. So a call made while a million timers of the set expire at once waits
//! for at most one budget of them, as a `start` on a shard waits for at most one step.
//!
//! A user call counts itself in `waiting` while it waits for the lock. Timers are moved only
//! by a holder that found no counted caller waiting when it took the lock: a call that finds
//! callers waiting lets them all take it first, as it does after each budget's worth, and the
//! driver's firing moves nothing then and leaves the re-arming to them (every counted caller
//! catches up and settles). Calls that neither catch up nor settle (a query of the
//! invariants, a callback's installation) take the lock uncounted.
//! So once a caller is counted, no budget begins before it has the lock: it waits for the
//! one in progress at most. (A mutex alone would not do: the thread that releases it may
//! take it again, or another may, before a waiter wakes.)

use std::sync::atomic::Ordering;
use std::sync::MutexGuard;

use super::{lock, Inner, State};

impl Inner {
    /// The lock, for a user call: counted in `waiting` while it waits, so an expiry in
    /// progress lets it in before its next budget's worth.
    pub(super) fn call_lock(&self) -> MutexGuard<'_, State> {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        #[cfg(all(test, not(callwheel_loom)))]
        let before = self.expired.load(Ordering::SeqCst);
        let st = lock(&self.state);
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        #[cfg(all(test, not(callwheel_loom)))]
        super::budget_tests::note_wait(before, st.table.totals().0);
        st
    }

    /// Waits until every caller counted in `waiting` has taken the lock.
    pub(super) fn let_callers_in(&self) {
        while self.waiting.load(Ordering::SeqCst) > 0 {
            std::thread::yield_now();
        }
    }

    /// Moves at most one budget's worth of due timers to the queue; whether the table has
    /// caught up with `now`.
    pub(super) fn expire_once(&self, st: &mut State, now: u64) -> bool {
        let done = st.table.expire(now, self.budget);
        #[cfg(all(test, not(callwheel_loom)))]
        self.expired.store(st.table.totals().0, Ordering::SeqCst);
        done
    }

    /// Catches the table up with `now`, one budget per hold of the lock and only while no
    /// other call waits for it; returns the lock, held again.
    pub(super) fn catch_up<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        now: u64,
    ) -> MutexGuard<'a, State> {
        loop {
            if !self.callers_waiting() && self.expire_once(&mut st, now) {
                return st;
            }
            drop(st);
            self.let_callers_in();
            // Counted again: calls catching up take turns, a budget each.
            st = self.call_lock();
        }
    }

    /// Whether a user call waits for the lock: the driver's firing then moves nothing (the
    /// call catches up with the clock itself and re-arms the set's timer), rather than waiting
    /// for the calls to stop and keeping the shard's other timers waiting.
    pub(super) fn callers_waiting(&self) -> bool {
        self.waiting.load(Ordering::SeqCst) > 0
    }
}
