//! FreeBSD's `struct callout` calls on a C table (`cw_callout_init`, `cw_callout_reset`,
//! `cw_callout_reset_on`, calloutng's `cw_callout_reset_sbt_on`, stop, drain, async drain, the
//! pending and active flags, the callout's CPU) and `cw_c_prel`. A callout is bound to one
//! CPU's queue and runs only where that CPU is processed; a reset may move it to another.

use core::ffi::{c_int, c_void};

use callwheel::time::Sbt;
use callwheel_callout::flags;

use super::{cw_callouts, dispatch, drain_code, error_code, table, CCall};
use crate::{cw_func, cw_handle, flag, guard, need, CW_C_PREL_MAX, CW_EINVAL, CW_OK};

/// FreeBSD's `callout_init`, bound to CPU `cpu` (0 to ncpu - 1; -1 for CPU 0, where FreeBSD's
/// `callout_init` puts a callout): a persistent callout, idle and inactive, whose handle is
/// stored in `*handle_out`. It lives until cw_callout_free, and may be armed again and again
/// (cw_callout_reset, cw_callout_reset_on, cw_callout_reset_sbt_on). The handle names the
/// callout wherever it moves.
///
/// Returns 0; CW_ENOMEM when that CPU's fixed pool is exhausted or the table cannot grow;
/// CW_EINVAL (a NULL argument, a CPU outside the table).
///
/// # Safety
///
/// `cw` is NULL or a live table; `handle_out` is NULL or valid for writing a cw_handle.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_init(
    cw: *mut cw_callouts,
    cpu: c_int,
    handle_out: *mut cw_handle,
) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        need(handle_out)?;
        let h = dispatch!(t, s => s.callout_init_on(cpu)).map_err(error_code)?;
        // SAFETY: `handle_out` is non-NULL and valid for writes, by this function's contract.
        unsafe { handle_out.write(h.into()) };
        Ok(CW_OK)
    })
}

/// Returns a cw_callout_init record to the pool, cancelling it if pending; if its handler is
/// running on another thread, waits for it to return first. The handle goes stale.
///
/// Returns 0; CW_EDEADLK from the callout's own handler (nothing changes); CW_ESTALE,
/// CW_EINVAL (NULL table, cw_setcallout handle).
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_free(cw: *mut cw_callouts, handle: cw_handle) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        dispatch!(t, s => s.callout_free(handle.into())).map_err(error_code)?;
        Ok(CW_OK)
    })
}

/// FreeBSD's `callout_reset(c, ticks, func, arg)`: (re)arms the callout to run `func(arg)`
/// `ticks` ticks from now (`ticks` <= 0 counts as 1) and marks it active. A handler may
/// re-arm its own callout. While a cw_callout_async_drain waits for the handler, the reset is
/// ignored and returns 0 (as FreeBSD ignores resets of a callout being drained); so is
/// cw_callout_reset_sbt_on.
///
/// The callout stays on its CPU (a waiting move still goes where it was going).
///
/// Returns 1 if the callout was pending (that arming is cancelled), 0 if not; CW_ESTALE;
/// CW_ERANGE; CW_EINVAL (NULL table or `func`, cw_setcallout handle). On failure the
/// callout keeps its previous arming.
///
/// # Safety
///
/// `cw` is NULL or a live table; `func(arg)` is safe to call from the thread that will run
/// cw_softclock for the callout's CPU.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_reset(
    cw: *mut cw_callouts,
    handle: cw_handle,
    ticks: i64,
    func: cw_func,
    arg: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let call = CCall::new(func, arg)?;
        let was =
            dispatch!(t, s => s.callout_reset(handle.into(), ticks, call)).map_err(error_code)?;
        Ok(flag(was))
    })
}

/// FreeBSD's `callout_reset_on(c, ticks, func, arg, cpu)`: (re)arms the callout to run
/// `func(arg)` `ticks` ticks of CPU `cpu`'s clock from now (`ticks` <= 0 counts as 1), on
/// that CPU's queue (-1: the callout's own CPU), moving it as cw_callout_reset_sbt_on does.
///
/// Returns 1 if the callout was pending, 0 if not; CW_ESTALE; CW_ENOMEM (the new CPU's queue
/// is full); CW_ERANGE; CW_EINVAL (NULL table or `func`, a CPU outside the table,
/// cw_setcallout handle). On failure nothing changes.
///
/// # Safety
///
/// `cw` is NULL or a live table; `func(arg)` is safe to call from the thread that drives the
/// callout's CPU.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_reset_on(
    cw: *mut cw_callouts,
    handle: cw_handle,
    ticks: i64,
    func: cw_func,
    arg: *mut c_void,
    cpu: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let call = CCall::new(func, arg)?;
        let was = dispatch!(t, s => s.callout_reset_on(handle.into(), ticks, call, cpu))
            .map_err(error_code)?;
        Ok(flag(was))
    })
}

/// FreeBSD calloutng's `callout_reset_sbt_on(c, sbt, precision, func, arg, cpu, flags)`.
///
/// - `sbt` (32.32 fixed-point seconds, see CW_SBT_1S) is relative to the current tick's
///   time, or absolute (since tick 0) with CW_C_ABSOLUTE. It is rounded up to a tick at the
///   table's hz (exactly: the ceiling of sbt * hz / 2^32); a relative time of 0 or less, or
///   an absolute time already passed, means the next tick. A deadline after UINT64_MAX is
///   CW_ERANGE.
/// - The callout may run up to `precision` late, or the interval divided by 2^n with
///   CW_C_PREL(n) if that is larger (rounded down to whole ticks). Every backing runs it at
///   its window's firing instant, which callouts with overlapping windows share. Without
///   either, a relative time gets the table's default deviation (cw_callouts_set_deviation;
///   none on a new table: exact).
/// - `flags`: CW_C_DIRECT_EXEC (run from cw_hardclock), CW_C_ABSOLUTE, CW_C_HARDCLOCK
///   (accepted, no effect), CW_C_PREL(n); any other bit is CW_EINVAL.
/// - `cpu`: the CPU whose queue takes the callout (0 to ncpu - 1), or -1 for its own (while
///   a move waits, the CPU it goes to). Times count on the clock of the CPU that takes the
///   callout, from when it takes it (for a deferred move, when the handler returns).
///
/// A callout that is idle or pending moves at once: it is cancelled on its old CPU and armed
/// on the new one, and only the new CPU's processing runs it. If its handler is running, the
/// move is deferred until the handler returns (a handler may move its own callout): until
/// then cw_callout_cpu still names the old CPU and cw_callout_pending says 1; a later reset
/// replaces the arming the move makes, cw_callout_stop cancels it. If the new CPU's queue
/// cannot take the callout when the handler returns (full, or out of range), it is armed on
/// its old CPU instead.
///
/// Returns 1 if the callout was pending (a waiting move counts), 0 if not; CW_ESTALE (a
/// handle this table did not issue, or freed); CW_ENOMEM (the new CPU's queue is full);
/// CW_ERANGE; CW_EINVAL (NULL table or `func`, bad flags, a CPU outside the table,
/// cw_setcallout handle). On failure nothing changes.
///
/// # Safety
///
/// `cw` is NULL or a live table; `func(arg)` is safe to call from the thread that drives the
/// callout's CPU (its cw_softclock, or its cw_hardclock with CW_C_DIRECT_EXEC).
#[no_mangle]
#[allow(clippy::too_many_arguments)] // FreeBSD's signature, plus the table.
pub unsafe extern "C" fn cw_callout_reset_sbt_on(
    cw: *mut cw_callouts,
    handle: cw_handle,
    sbt: i64,
    precision: i64,
    func: cw_func,
    arg: *mut c_void,
    cpu: c_int,
    flags: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let call = CCall::new(func, arg)?;
        let (sbt, precision) = (Sbt::from_raw(sbt), Sbt::from_raw(precision));
        // A negative int has bits no flag uses, so it is refused as unknown flags.
        let flags = flags as u32;
        let was = dispatch!(t, s => s.callout_reset_sbt_on(
            handle.into(), sbt, precision, call, cpu, flags
        ))
        .map_err(error_code)?;
        Ok(flag(was))
    })
}

/// FreeBSD's `callout_stop`: cancels the callout if pending (or waiting to move) and clears
/// its active flag. Does not wait for a running handler (see cw_callout_drain).
///
/// Returns 1 if it was pending, 0 if not; CW_ESTALE; CW_EINVAL (NULL table, cw_setcallout
/// handle).
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_stop(cw: *mut cw_callouts, handle: cw_handle) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let was = dispatch!(t, s => s.callout_stop(handle.into())).map_err(error_code)?;
        Ok(flag(was))
    })
}

/// FreeBSD's `callout_drain`: cw_callout_stop, and if the handler is running on another
/// thread, waits until it returns.
///
/// Returns 1 if the callout was pending, 0 if not; CW_EDEADLK from the callout's own handler
/// (nothing changes); CW_ESTALE; CW_EINVAL (NULL table, cw_setcallout handle).
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_drain(cw: *mut cw_callouts, handle: cw_handle) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let was = dispatch!(t, s => s.callout_drain(handle.into())).map_err(error_code)?;
        Ok(flag(was))
    })
}

/// FreeBSD's `callout_async_drain(c, drain)`: stops the callout without waiting for its
/// handler.
///
/// - If the handler is running (on another thread, or this is called from the handler
///   itself), `drain(arg)` is called once, with the argument the callout was last armed
///   with, on the thread that ran the handler, right after the handler returns (from that
///   cw_softclock or cw_hardclock call). Any pending arming or waiting move is cancelled,
///   and resets are ignored until the handler has returned, so when `drain` runs the
///   callout is neither pending nor running: `drain` may cw_callout_free it.
/// - Otherwise the callout is stopped as by cw_callout_stop and `drain` is never called.
///
/// Returns CW_ASYNC_DRAIN_PENDING (0) when `drain` will be called; CW_ASYNC_DRAIN_CANCELLED
/// (1) when it will not and a pending firing was cancelled; CW_ASYNC_DRAIN_IDLE (2) when it
/// will not and nothing was pending. Errors: CW_EBUSY when a drain already waits for the
/// running handler; CW_ENOMEM; CW_ESTALE; CW_EINVAL (NULL table or `drain`, cw_setcallout
/// handle). On error nothing changes.
///
/// # Safety
///
/// `cw` is NULL or a live table; `drain(arg)` is safe to call from the thread that drives the
/// callout's CPU.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_async_drain(
    cw: *mut cw_callouts,
    handle: cw_handle,
    drain: cw_func,
) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let drain = drain.ok_or(CW_EINVAL)?;
        let done = dispatch!(t, s => s.callout_async_drain(handle.into(), |c| c.drained_by(drain)))
            .map_err(error_code)?;
        Ok(drain_code(done))
    })
}

/// FreeBSD's `callout_pending`: 1 if the callout is armed and its handler has not been
/// started (a move waiting for the handler counts), 0 if not; CW_ESTALE; CW_EINVAL (NULL
/// table, cw_setcallout handle).
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_pending(cw: *const cw_callouts, handle: cw_handle) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let pending = dispatch!(t, s => s.callout_pending(handle.into())).map_err(error_code)?;
        Ok(flag(pending))
    })
}

/// FreeBSD's `callout_active`: 1 if the callout was armed and not since stopped or
/// deactivated, 0 if not (running does not clear it, so a handler can tell whether it was
/// stopped after it was started); CW_ESTALE; CW_EINVAL (NULL table, cw_setcallout handle).
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_active(cw: *const cw_callouts, handle: cw_handle) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let active = dispatch!(t, s => s.callout_active(handle.into())).map_err(error_code)?;
        Ok(flag(active))
    })
}

/// FreeBSD's `callout_deactivate`: clears the active flag (a handler does this first).
///
/// Returns 0; CW_ESTALE; CW_EINVAL (NULL table, cw_setcallout handle).
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_deactivate(cw: *mut cw_callouts, handle: cw_handle) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        dispatch!(t, s => s.callout_deactivate(handle.into())).map_err(error_code)?;
        Ok(CW_OK)
    })
}

/// The CPU whose queue holds the callout now (the only one whose processing can run it): 0 to
/// ncpu - 1. While a move waits for the handler to return, the old CPU.
///
/// Returns the CPU; CW_ESTALE; CW_EINVAL (NULL table, cw_setcallout handle).
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_cpu(cw: *const cw_callouts, handle: cw_handle) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let cpu = dispatch!(t, s => s.callout_cpu(handle.into())).map_err(error_code)?;
        // Below CW_NCPU_MAX: fits.
        Ok(cpu as c_int)
    })
}

/// calloutng's `C_PREL(n)` for cw_callout_reset_sbt_on's flags: the callout may run up to
/// its interval / 2^n late. `n` is 0 to CW_C_PREL_MAX; any other `n` gives CW_EINVAL, which
/// cw_callout_reset_sbt_on refuses as a flag. The macro CW_C_PREL(n) is the same for valid n.
#[no_mangle]
pub extern "C" fn cw_c_prel(n: c_int) -> c_int {
    guard(|| {
        let n = u32::try_from(n)
            .ok()
            .filter(|&n| n <= CW_C_PREL_MAX as u32)
            .ok_or(CW_EINVAL)?;
        // At most 0xfe: fits.
        Ok(flags::c_prel(n) as c_int)
    })
}
