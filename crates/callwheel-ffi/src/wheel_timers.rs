//! A caller-driven wheel's timers, looked at and changed in place: a periodic timer's period
//! read and changed (libuv's `uv_timer_get_repeat` / `uv_timer_set_repeat`), every pending
//! timer walked (wahern/timeout's `timeouts_next` and `TIMEOUTS_FOREACH`), the wheel's time
//! moved by a step (`timeouts_step`) and whether a timer is due and not yet pulled
//! (`timeouts_expired`).

use core::ffi::c_int;

use callwheel::{Handle, Missed, Timers};

use crate::timerset::{CW_MISSED_BURST, CW_MISSED_DELAY, CW_MISSED_SKIP};
use crate::wheel::{cw_expiry, cw_wheel};
use crate::{cw_handle, guard, need, CW_EINVAL, CW_ESTALE, CW_OK};

/// The period and missed-period policy of a periodic timer.
///
/// Returns 1 with `period` (nanoseconds) and `missed_policy` (CW_MISSED_*) filled, each when
/// not NULL; 0 for a pending one-shot timer (nothing written); CW_ESTALE when `handle` names no
/// pending timer of this wheel; CW_EINVAL for NULL `w`.
///
/// # Safety
///
/// `w` is NULL or a live wheel on which no call that changes it is in progress; `period` and
/// `missed_policy` are NULL or valid for writing.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_period(
    w: *const cw_wheel,
    handle: cw_handle,
    period: *mut u64,
    missed_policy: *mut c_int,
) -> c_int {
    guard(|| {
        // SAFETY: by this function's contract.
        let w = unsafe { crate::wheel::wheel_ref(w) }?;
        let h = Handle::from(handle);
        if w.wheel.deadline(h).is_none() {
            return Err(CW_ESTALE);
        }
        let Some((p, policy)) = w.wheel.schedule(h) else {
            return Ok(0);
        };
        let code = match policy {
            Missed::Delay => CW_MISSED_DELAY,
            Missed::Skip => CW_MISSED_SKIP,
            _ => CW_MISSED_BURST,
        };
        // SAFETY: each NULL or valid for writes by this function's contract.
        unsafe {
            crate::wheel::write_opt(period, p);
            crate::wheel::write_opt(missed_policy, code);
        }
        Ok(1)
    })
}

/// Changes a periodic timer's period, from its next firing on: the deadline it is armed for
/// now stays (libuv's `uv_timer_set_repeat`). A one-shot timer cannot be made periodic here
/// (delete it and add it with cw_wheel_add_periodic): the wheel keeps a schedule only for
/// timers added periodic.
///
/// Returns 0; CW_EINVAL (NULL `w`, a zero period, or `handle` names a one-shot timer; nothing
/// changes); CW_ESTALE when `handle` names no pending timer of this wheel.
///
/// # Safety
///
/// `w` is NULL or a live wheel on which no other call is in progress.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_set_period(
    w: *mut cw_wheel,
    handle: cw_handle,
    period: u64,
) -> c_int {
    guard(|| {
        // SAFETY: by this function's contract.
        let w = unsafe { crate::wheel::wheel_mut(w) }?;
        let h = Handle::from(handle);
        if w.wheel.deadline(h).is_none() {
            return Err(CW_ESTALE);
        }
        match w.wheel.set_period(h, period) {
            Some(_) => Ok(CW_OK),
            None => Err(CW_EINVAL),
        }
    })
}

/// Walks the pending timers: stores the first pending timer at or after position `*cursor`
/// in `out` (its handle, value and deadline; for a periodic timer, the periods its latest
/// firing missed) and moves `*cursor` past it. Start with `*cursor` = 0 and call until it
/// returns 0; or use CW_WHEEL_FOREACH. The walk is in the wheel's storage order, not by
/// deadline. A timer that stays pending throughout the walk is seen exactly once; one added
/// during it may or may not be; one deleted or fired is not seen after that. Timers due but not
/// yet pulled are pending.
///
/// Returns 1 with `out` filled; 0 past the last pending timer; CW_EINVAL for NULL `w`,
/// `cursor` or `out`.
///
/// # Safety
///
/// `w` is NULL or a live wheel on which no call that changes it is in progress; `cursor` is
/// NULL or valid for reading and writing a size_t; `out` is NULL or valid for writing a
/// cw_expiry.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_next_pending(
    w: *const cw_wheel,
    cursor: *mut usize,
    out: *mut cw_expiry,
) -> c_int {
    guard(|| {
        need(cursor)?;
        need(out)?;
        // SAFETY: by this function's contract.
        let w = unsafe { crate::wheel::wheel_ref(w) }?;
        // SAFETY: non-NULL and valid for reads and writes by this function's contract.
        let from = unsafe { cursor.read() };
        let Some((at, handle, deadline, &value)) = w.wheel.pending_from(from) else {
            return Ok(0);
        };
        let overruns = w.wheel.overruns(handle).unwrap_or(0);
        // SAFETY: both non-NULL and valid for writes by this function's contract.
        unsafe {
            cursor.write(at + 1);
            out.write(cw_expiry {
                handle: handle.into(),
                value,
                deadline,
                overruns,
            });
        }
        Ok(1)
    })
}

/// Moves the wheel's time `delta` nanoseconds forward (wahern/timeout's `timeouts_step`):
/// cw_wheel_update to the wheel's time plus `delta`.
///
/// Returns 0; CW_ERANGE when that passes the end of time, UINT64_MAX (nothing changes);
/// CW_EINVAL for NULL `w`.
///
/// # Safety
///
/// `w` is NULL or a live wheel on which no other call is in progress.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_step(w: *mut cw_wheel, delta: u64) -> c_int {
    guard(|| {
        // SAFETY: by this function's contract.
        let w = unsafe { crate::wheel::wheel_mut(w) }?;
        let now = w.after(delta)?;
        w.set_now(now)?;
        Ok(CW_OK)
    })
}

/// Whether a timer is due at the wheel's time and not yet pulled (wahern/timeout's
/// `timeouts_expired`): never 0 while one is, and 0 after a pull that found nothing (until
/// the time moves or a timer is armed). Between those it may answer 1 with nothing left due
/// (after deletes or resets, or before a round of pulls is complete): the next pull then
/// returns 0.
///
/// Returns 1 or 0; CW_EINVAL for NULL `w`.
///
/// # Safety
///
/// `w` is NULL or a live wheel on which no call that changes it is in progress.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_expired(w: *const cw_wheel) -> c_int {
    guard(|| {
        // SAFETY: by this function's contract.
        let w = unsafe { crate::wheel::wheel_ref(w) }?;
        Ok(c_int::from(!w.dry && w.due_now()))
    })
}
