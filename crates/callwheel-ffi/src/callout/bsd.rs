//! The BSD calls on a C table: Costello and Varghese's `timeout` / `untimeout` and
//! `setcallout` / `unsetcallout`. They work on CPU 0's queue (BSD had one callwheel), whose
//! cw_softclock runs them.

use core::ffi::{c_int, c_void};

use super::{cw_callouts, dispatch, error_code, table, CCall};
use crate::{cw_func, cw_handle, flag, guard, need, CW_OK};

/// BSD's `timeout(func, arg, ticks)`: runs `func(arg)` `ticks` ticks from now (`ticks` <= 0
/// counts as 1), on CPU 0. Only cw_untimeout with the same (func, arg) cancels it.
///
/// Returns 0; CW_ENOMEM when a fixed pool is exhausted or the table cannot grow; CW_ERANGE if
/// the scheme refuses the deadline; CW_EINVAL for a NULL table or `func`.
///
/// # Safety
///
/// `cw` is NULL or a live table; `func(arg)` is safe to call from the thread that will run
/// cw_softclock for CPU 0.
#[no_mangle]
pub unsafe extern "C" fn cw_timeout(
    cw: *mut cw_callouts,
    func: cw_func,
    arg: *mut c_void,
    ticks: i64,
) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let call = CCall::new(func, arg)?;
        dispatch!(t, s => s.timeout(call, ticks)).map_err(error_code)?;
        Ok(CW_OK)
    })
}

/// BSD's `untimeout(func, arg)`: cancels one pending cw_timeout of (func, arg). On
/// CW_BACKING_HASHED and CW_BACKING_WHEEL it is found through a hash of (func, arg), and it is
/// the oldest (set first); cancelling one that does not exist costs the same as one that
/// does. On CW_BACKING_LIST it is 4.4BSD's search of the list from its head, which stops at
/// the first match: the one due first (set first among equal deadlines).
///
/// Returns 1 if one was cancelled (it will not run), 0 if none was pending; CW_EINVAL for a
/// NULL table or `func`.
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_untimeout(
    cw: *mut cw_callouts,
    func: cw_func,
    arg: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let call = CCall::new(func, arg)?;
        Ok(flag(dispatch!(t, s => s.untimeout(call))))
    })
}

/// Costello and Varghese's `setcallout(func, arg, ticks)`: like cw_timeout, and stores in
/// `*handle_out` a handle that cancels this callout and no other (cw_unsetcallout).
///
/// The handle goes stale when the callout fires (before its handler runs) or is cancelled.
///
/// Returns 0; CW_ENOMEM when a fixed pool is exhausted or the table cannot grow; CW_ERANGE if
/// the scheme refuses the deadline; CW_EINVAL for a NULL table, `func` or `handle_out`
/// (nothing is set).
///
/// # Safety
///
/// `cw` is NULL or a live table; `handle_out` is NULL or valid for writing a cw_handle;
/// `func(arg)` is safe to call from the thread that will run cw_softclock for CPU 0.
#[no_mangle]
pub unsafe extern "C" fn cw_setcallout(
    cw: *mut cw_callouts,
    func: cw_func,
    arg: *mut c_void,
    ticks: i64,
    handle_out: *mut cw_handle,
) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let call = CCall::new(func, arg)?;
        need(handle_out)?;
        let h = dispatch!(t, s => s.setcallout(call, ticks)).map_err(error_code)?;
        // SAFETY: `handle_out` is non-NULL and valid for writes, by this function's contract.
        unsafe { handle_out.write(h.into()) };
        Ok(CW_OK)
    })
}

/// Costello and Varghese's `unsetcallout(handle)`: cancels the callout cw_setcallout
/// returned `handle` for.
///
/// Returns 1 if it was pending (it will not run); CW_ESTALE if it already fired or was
/// cancelled, or the handle was never issued by this table; CW_EINVAL for a NULL table or a
/// cw_callout_init handle.
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_unsetcallout(cw: *mut cw_callouts, handle: cw_handle) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let was = dispatch!(t, s => s.unsetcallout(handle.into())).map_err(error_code)?;
        Ok(flag(was))
    })
}
