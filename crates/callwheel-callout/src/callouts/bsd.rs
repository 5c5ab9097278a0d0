//! The BSD interfaces on the table: 4.4BSD's `timeout` / `untimeout` (by function and
//! argument) and Costello and Varghese's `setcallout` / `unsetcallout` (by handle).

use core::hash::Hash;

use callwheel::Handle;

use crate::backing::Backing;
use crate::pool::{Kind, Sched};
use crate::Error;

use super::Callouts;

impl<S: Backing, C: Copy + Eq + Hash> Callouts<S, C> {
    /// `timeout(func, arg, ticks)`: runs `call` `ticks` ticks from now (`ticks <= 0` counts as
    /// 1), or up to the table's default deviation of `ticks` later
    /// ([`Config::deviation_percent`](crate::Config::deviation_percent): calloutng's rule for
    /// the old calls, a sixteenth at the default 5 %; 0 % arms it exactly, as 4.4BSD did). The callout can be cancelled only by `untimeout(call)`. On a hashing backing it goes
    /// on the (function, argument) hash too (O(1)); on the old `calltodo` it is only placed in
    /// the list, by a walk from the head.
    ///
    /// # Errors
    ///
    /// [`Error::PoolExhausted`] when a fixed pool is full; [`Error::NoMemory`] when the table
    /// needed to grow and the allocator refused; [`Error::Scheme`] when the backing scheme
    /// cannot hold the deadline. Nothing changes on error.
    pub fn timeout(&mut self, call: C, ticks: i64) -> Result<(), Error> {
        let idx = self.oneshot(call, ticks)?;
        self.pool.records[idx].by_timeout = true;
        if !S::SEARCHED_BY_UNTIMEOUT {
            self.pool.hash_insert(idx);
        }
        Ok(())
    }

    /// `untimeout(func, arg)`: cancels one pending `timeout` of `call`. Returns whether one was
    /// pending. Callouts set by `setcallout` are not found here (cancel them by handle).
    ///
    /// On a hashing backing (Costello & Varghese's) the callout is found through the
    /// (function, argument) hash, in O(1) expected, and it is the oldest: the one set first.
    /// On the old `calltodo` ([`Backing::SEARCHED_BY_UNTIMEOUT`]) it is 4.4BSD's search, a walk
    /// from the head of the list that stops at the first match, in O(n): the one due first
    /// (set first among equal deadlines). The two differ only when one `call` is pending twice
    /// with different deadlines.
    pub fn untimeout(&mut self, call: C) -> bool {
        let found = if S::SEARCHED_BY_UNTIMEOUT {
            self.search_calltodo(&call)
        } else {
            let (found, compared) = self.pool.hash_find(&call);
            self.stats.traversed += compared;
            found
        };
        let Some(idx) = found else {
            return false;
        };
        self.disarm(idx);
        if self.pool.records[idx].hashed {
            self.pool.hash_remove(idx);
        }
        self.pool.release(idx);
        true
    }

    /// 4.4BSD's `untimeout` search for the `timeout` record of `call`: first the callouts
    /// `softclock` has taken off the list and not yet handed out (they were the list's head,
    /// where the kernel's `softclock` leaves the next one until it runs), then the scheme's
    /// list from its head. Counts the entries skipped.
    pub(super) fn search_calltodo(&mut self, call: &C) -> Option<u32> {
        let Callouts {
            scheme,
            pool,
            batch,
            stats,
            ..
        } = self;
        let records = &pool.records;
        let matches = |idx: u32| {
            let r = &records[idx];
            r.by_timeout && r.call.as_ref() == Some(call)
        };
        let mut skipped = 0;
        for &idx in batch.iter() {
            // Entries cancelled since the batch was taken are no longer there.
            if records.get(idx).is_none_or(|r| r.sched != Sched::Due) {
                continue;
            }
            if matches(idx) {
                stats.traversed += skipped;
                return Some(idx);
            }
            skipped += 1;
        }
        let (found, walked) = scheme.search(matches);
        stats.traversed += skipped + walked;
        found
    }

    /// `setcallout(func, arg, ticks)`: like `timeout`, but returns a handle that cancels this
    /// callout and no other, in O(1) without hashing.
    ///
    /// # Errors
    ///
    /// As [`Callouts::timeout`].
    pub fn setcallout(&mut self, call: C, ticks: i64) -> Result<Handle, Error> {
        let idx = self.oneshot(call, ticks)?;
        Ok(self.pool.handle(idx))
    }

    /// `unsetcallout(handle)`: cancels the callout `setcallout` returned `handle` for. Returns
    /// `Ok(true)` when it was pending (it will not run).
    ///
    /// # Errors
    ///
    /// [`Error::StaleHandle`] when the callout already ran or was cancelled, or the handle was
    /// never issued by this table; [`Error::WrongKind`] for a `callout_init` handle. Nothing
    /// changes.
    pub fn unsetcallout(&mut self, handle: Handle) -> Result<bool, Error> {
        let idx = self.resolve(handle, Kind::OneShot)?;
        let was = self.disarm(idx);
        if self.pool.records[idx].hashed {
            self.pool.hash_remove(idx);
        }
        self.pool.release(idx);
        Ok(was)
    }

    pub(super) fn oneshot(&mut self, call: C, ticks: i64) -> Result<u32, Error> {
        let deadline = self.deadline_in(ticks)?;
        let idx = self.pool.alloc(Kind::OneShot, Some(call))?;
        let tolerance = self.default_tolerance(deadline);
        match self.schedule(idx, deadline, tolerance, false) {
            Ok(sched) => {
                self.pool.records[idx].sched = sched;
                self.after_arm();
                Ok(idx)
            }
            Err(e) => {
                self.pool.release(idx);
                Err(e)
            }
        }
    }
}
