//! Pulling what is due from a caller-driven wheel: one timer at a time (`cw_wheel_get`), a
//! batch (`cw_wheel_get_many`, `cw_wheel_advance`) or a callback per timer
//! (`cw_wheel_expire`), with the rounds of overdue timers that keep every call bounded; and
//! when to come back (`cw_wheel_next_wakeup`, `cw_wheel_timeout`).

use core::ffi::{c_int, c_void};

use callwheel::Scheme;

use crate::wheel::{cw_expiry, cw_wheel, cw_wheel_fn, wheel_mut, wheel_ref};
use crate::{guard, need, CW_EINVAL};

/// The checks of a batch pull's arguments: the wheel behind `w` and the batch's room, at most
/// INT_MAX (what the count returned can say); CW_EINVAL for NULL `w` or `out`, or no room.
///
/// # Safety
///
/// As for [`wheel_mut`].
#[inline(always)]
unsafe fn batch_args<'a>(
    w: *mut cw_wheel,
    out: *mut cw_expiry,
    max: usize,
) -> Result<(&'a mut cw_wheel, usize), c_int> {
    need(out)?;
    // SAFETY: by this function's contract.
    let w = unsafe { wheel_mut(w) }?;
    let max = max.min(c_int::MAX as usize);
    if max == 0 {
        return Err(CW_EINVAL);
    }
    Ok((w, max))
}

/// Counts to an int result: at most INT_MAX is reported.
fn count(n: u64) -> c_int {
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

impl cw_wheel {
    /// The next due timer, up to the wheel's time.
    fn pull(&mut self) -> Option<cw_expiry> {
        let e = match self.wheel.poll_expired(self.now) {
            Some(e) => e,
            // The core fires timers made overdue during a round of pulls (added or reset with
            // their deadline passed, or a periodic timer re-armed into the past) in the next
            // round, so that no round runs for ever. Start it now: 0 then means that nothing
            // is due. At most one retry: a new round fires what it finds overdue first.
            None if self.due_now() => match self.wheel.poll_expired(self.now) {
                Some(e) => e,
                None => {
                    self.dry = true;
                    return None;
                }
            },
            None => {
                self.dry = true;
                return None;
            }
        };
        Some(expiry(e))
    }

    /// Up to `max` (at least 1) due timers, up to the wheel's time, handed to `put` with their
    /// place in the batch: what as many [`cw_wheel::pull`]s would return, in their order, from
    /// budgeted advances. Returns how many; fewer than `max` only when nothing else is due.
    fn pull_many(&mut self, max: usize, mut put: impl FnMut(usize, cw_expiry)) -> usize {
        let mut got = 0;
        // Where the current round of overdue timers began, and whether it is a round this
        // call started after one completed.
        let (mut round_start, mut next_round) = (0, false);
        loop {
            // Every firing is a step of the budget, so the batch never overflows; a budget
            // spent on cascades alone only means the next advance goes on from there.
            let budget = callwheel::Budget::steps((max - got) as u64);
            let progress = self.wheel.advance(self.now, budget, |_, e| {
                put(got, expiry(e));
                got += 1;
            });
            if got == max {
                return got;
            }
            if !progress.complete {
                continue;
            }
            // The round is complete. Timers made overdue during it (re-armed into the past, or
            // armed between calls) wait for the next: start it, as `pull` does, while rounds
            // keep firing (each fires what it finds overdue first, so this ends by `max`). The
            // wheel is asked first: when nothing is due, a pull then returns without reading
            // the round's counters.
            if self.due_now() && (!next_round || got > round_start) {
                (round_start, next_round) = (got, true);
                continue;
            }
            // Nothing else is due: the wake-up query need not ask again.
            self.dry = true;
            return got;
        }
    }
}

/// An expiry of the core wheel as the C API reports it.
fn expiry(e: callwheel::Expired<u64>) -> cw_expiry {
    cw_expiry {
        handle: e.handle.into(),
        value: e.value,
        deadline: e.deadline,
        overruns: e.overruns,
    }
}

/// Pulls the next timer due by the wheel's time. A one-shot timer is removed; a periodic one
/// is re-armed for its next period before it is returned.
///
/// A timer is due once the wheel's time reaches its firing instant: its deadline when its
/// tolerance is 0; with a window, the first multiple of the coarsest slot width (64^l ns) in
/// the window's first eighth, or the deadline when that part holds no multiple of 64 (placed
/// there, the timer fires without cascading down the wheel; never before its deadline, never
/// after its window).
///
/// Order: by firing instant, timers with equal instants in the order they were armed (added or
/// reset) — except for *overdue* timers: those armed, or re-armed (a periodic timer catching
/// up missed periods with CW_MISSED_BURST, one period per pull), with an instant at or before
/// the point the pulls have reached (the deadline of the latest timer pulled, or the wheel's
/// time after a pull that found nothing; never later than the wheel's time). Overdue timers
/// armed by add or reset come out in the order they were armed; where overdue timers come out
/// among the other due timers is not specified, only that each comes out within a bounded
/// number of pulls and never before its deadline. This keeps every call bounded, whatever the
/// callers add meanwhile.
///
/// Returns 1 with `out` filled; 0 when nothing is due (no timer's firing instant is at or
/// before the wheel's time); CW_EINVAL for NULL `w` or `out`.
///
/// # Safety
///
/// `w` is NULL or a live wheel on which no other call is in progress; `out` is NULL or valid
/// for writing a cw_expiry.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_get(w: *mut cw_wheel, out: *mut cw_expiry) -> c_int {
    guard(|| {
        need(out)?;
        // SAFETY: by this function's contract.
        let w = unsafe { wheel_mut(w) }?;
        match w.pull() {
            Some(e) => {
                // SAFETY: `out` is non-NULL and valid for writes by this function's contract.
                unsafe { out.write(e) };
                Ok(1)
            }
            None => Ok(0),
        }
    })
}

/// Pulls up to `max` due timers in one call into `out[0]`, `out[1]`, …: the timers that many
/// cw_wheel_get calls would return, in the same order, each one-shot timer removed and each
/// periodic one re-armed as cw_wheel_get does. For an event loop that fires many timers per
/// turn, it saves a call per timer; every timer it returns has fired, so deleting one of them
/// while handling another is CW_ESTALE (for a one-shot timer) and changes nothing.
///
/// Returns the number of timers written, from 1 to `max` (at most INT_MAX per call): fewer
/// than `max` only when no other timer is due, so a loop may stop at a short batch without a
/// last call that finds nothing. Returns 0 when nothing is due, as cw_wheel_get; CW_EINVAL for
/// NULL `w` or `out`, or a `max` of 0.
///
/// # Safety
///
/// `w` is NULL or a live wheel on which no other call is in progress; `out` is NULL or valid
/// for writing `max` cw_expiry.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_get_many(
    w: *mut cw_wheel,
    out: *mut cw_expiry,
    max: usize,
) -> c_int {
    guard(|| {
        // SAFETY: by this function's contract.
        let (w, max) = unsafe { batch_args(w, out, max) }?;
        // The closure owns copies of `out` and `max` (`move`): the firing, out of line, reads
        // them from the closure instead of through references to this frame.
        let got = w.pull_many(max, move |i, e| {
            // The core charges a step of the budget for every firing, so `i < max` always; the
            // write is guarded here all the same, as the caller's memory depends on it.
            debug_assert!(i < max);
            if i < max {
                // SAFETY: `i < max`, and `out` is valid for writing `max` expiries by this
                // function's contract.
                unsafe { out.add(i).write(e) }
            }
        });
        // At most `max`, itself at most INT_MAX: the cast is exact.
        Ok(got as c_int)
    })
}

/// cw_wheel_update to `now`, then cw_wheel_get_many: an event loop's turn in one call. Every
/// argument is checked before the wheel's time moves, so a refused call changes nothing.
///
/// Returns as cw_wheel_get_many; CW_ERANGE for a `now` earlier than the wheel's time; CW_EINVAL
/// for NULL `w` or `out`, or a `max` of 0.
///
/// # Safety
///
/// As for cw_wheel_get_many.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_advance(
    w: *mut cw_wheel,
    now: u64,
    out: *mut cw_expiry,
    max: usize,
) -> c_int {
    guard(|| {
        // SAFETY: by this function's contract.
        let (w, max) = unsafe { batch_args(w, out, max) }?;
        w.set_now(now)?;
        // cw_wheel_get_many's writes again, in a closure of its own: one closure shared by both
        // lets the compiler keep a single pull loop out of line for the two, which costs a W4
        // repetition through C 754 k instructions against this form's 737 k.
        let got = w.pull_many(max, move |i, e| {
            debug_assert!(i < max);
            if i < max {
                // SAFETY: `i < max`, and `out` is valid for writing `max` expiries by this
                // function's contract.
                unsafe { out.add(i).write(e) }
            }
        });
        // At most `max`, itself at most INT_MAX: the cast is exact.
        Ok(got as c_int)
    })
}

/// cw_wheel_update to `now`, then calls `fn(arg, expiry)` for each timer due, in the order
/// cw_wheel_get would return them, until none is due or `max` calls were made (0: no limit —
/// but a callback that keeps adding timers already due, or a CW_MISSED_BURST timer catching
/// up many missed periods, then keeps the call going). The wheel is not borrowed while a
/// callback runs: it may call any function on this wheel but cw_wheel_free.
///
/// Returns the number of callbacks made (at most INT_MAX is reported); CW_ERANGE for a `now`
/// earlier than the wheel's time (nothing fires); CW_EINVAL for NULL `w` or `fn`.
///
/// # Safety
///
/// `w` is NULL or a live wheel on which no other call is in progress (but those its callbacks
/// make); `fn(arg, …)` must be safe to call on this thread and return normally.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_expire(
    w: *mut cw_wheel,
    now: u64,
    func: cw_wheel_fn,
    arg: *mut c_void,
    max: u64,
) -> c_int {
    guard(|| {
        let func = func.ok_or(CW_EINVAL)?;
        // SAFETY: by this function's contract; the reference ends before any callback.
        unsafe { wheel_mut(w) }?.set_now(now)?;
        let mut calls = 0u64;
        while max == 0 || calls < max {
            // SAFETY: as above; each borrow ends before the callback, which may call into the
            // wheel itself.
            let next = unsafe { wheel_mut(w) }?.pull();
            let Some(e) = next else { break };
            calls += 1;
            // SAFETY: the caller promises `func(arg, …)` is safe to call here; `e` outlives
            // the call.
            unsafe { func(arg, &e) };
        }
        Ok(count(calls))
    })
}

/// The absolute time the caller should next wake: the earliest window end among the pending
/// timers, or the wheel's time when timers are already due (pull them now). Never later than
/// any window's end; it may be earlier than needed after deletes or resets, and is the
/// wheel's time while a run of pulls is unfinished (until a cw_wheel_get returns 0 or a
/// cw_wheel_get_many batch comes back short): a wake-up that finds nothing due costs one empty
/// pull.
///
/// Returns 1 with `deadline` filled; 0 when no timer is pending (sleep as long as you like);
/// CW_EINVAL for NULL `w` or `deadline`.
///
/// # Safety
///
/// `w` is NULL or a live wheel on which no call that changes it is in progress; `deadline` is
/// NULL or valid for writing a uint64_t.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_next_wakeup(w: *const cw_wheel, deadline: *mut u64) -> c_int {
    guard(|| {
        need(deadline)?;
        // SAFETY: by this function's contract.
        let w = unsafe { wheel_ref(w) }?;
        match w.wakeup() {
            Some(d) => {
                // SAFETY: non-NULL and valid for writes by this function's contract.
                unsafe { deadline.write(d) };
                Ok(1)
            }
            None => Ok(0),
        }
    })
}

/// cw_wheel_next_wakeup relative to the wheel's time: the nanoseconds to sleep (0 when timers
/// are due), to hand to epoll_wait, poll or a timerfd after rounding up to their unit.
///
/// Returns 1 with `ns` filled; 0 when no timer is pending; CW_EINVAL for NULL `w` or `ns`.
///
/// # Safety
///
/// As for cw_wheel_next_wakeup, with `ns` for `deadline`.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_timeout(w: *const cw_wheel, ns: *mut u64) -> c_int {
    guard(|| {
        need(ns)?;
        // SAFETY: by this function's contract.
        let w = unsafe { wheel_ref(w) }?;
        match w.wakeup() {
            Some(d) => {
                // SAFETY: non-NULL and valid for writes by this function's contract.
                unsafe { ns.write(d - w.now) };
                Ok(1)
            }
            None => Ok(0),
        }
    })
}
