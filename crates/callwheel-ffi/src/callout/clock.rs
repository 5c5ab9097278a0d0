//! Each CPU's clock on a C table: its interrupt (tick-driven, cw_hardclock, and tickless,
//! cw_callout_process), its software interrupt (cw_softclock), its event window and its
//! ticks. `cpu` is 0 on a table of one CPU; every call names the CPU it drives, and only
//! callouts bound to that CPU run there.

use core::ffi::c_int;

use super::{cpu_index, cw_callouts, dispatch, error_code, table, CCall};
use crate::{flag, guard, need, CW_OK};

/// The clock interrupt of CPU `cpu`: advances that CPU's tick by one, then runs its due
/// CW_C_DIRECT_EXEC handlers (and ready drain calls) on this thread.
///
/// Returns 1 if cw_softclock may have work on that CPU (always when a callout is due; on
/// CW_BACKING_HASHED also when the next busy bucket holds only later turns' callouts, and
/// cw_softclock then runs none), 0 if not (when nothing is due, the tick is processed right
/// here: the paper's fast path); CW_EBUSY if another thread (or this one, from a handler) is
/// running that CPU's handlers — the tick still advanced, and the direct handlers run at that
/// thread's next cw_softclock; CW_EINVAL (NULL table, a CPU outside the table).
///
/// # Safety
///
/// `cw` is NULL or a live table (see the crate documentation).
#[no_mangle]
pub unsafe extern "C" fn cw_hardclock(cw: *mut cw_callouts, cpu: c_int) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let cpu = cpu_index(cpu)?;
        let needed = dispatch!(t, s => s.hardclock_with(cpu, CCall::run)).map_err(error_code)?;
        Ok(flag(needed))
    })
}

/// The tickless interrupt of CPU `cpu` (calloutng's callout_process): moves that CPU's tick
/// to `now` in one step (a `now` at or before the current tick moves nothing), as the
/// one-shot event timer armed from cw_callout_next_event fires, then runs its due
/// CW_C_DIRECT_EXEC handlers (and ready drain calls) on this thread. With hz = 1000000000 a
/// tick is a nanosecond, and the precision given to cw_callout_reset_sbt_on decides, on a
/// CW_BACKING_WHEEL table, which callouts share an interrupt.
///
/// Returns 1 if cw_softclock may have work on that CPU (as for cw_hardclock), 0 if not;
/// CW_EBUSY as for cw_hardclock (the clock still moved); CW_EINVAL (NULL table, a CPU outside
/// the table).
///
/// # Safety
///
/// `cw` is NULL or a live table (see the crate documentation).
#[no_mangle]
pub unsafe extern "C" fn cw_callout_process(cw: *mut cw_callouts, cpu: c_int, now: u64) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let cpu = cpu_index(cpu)?;
        let needed = dispatch!(t, s => s.process_with(cpu, now, CCall::run)).map_err(error_code)?;
        Ok(flag(needed))
    })
}

/// The event window of the callouts pending on CPU `cpu` (calloutng arms that CPU's one-shot
/// event timer inside it): `first` is the earliest tick a pending callout runs at (its
/// deadline, or for a callout with a window its firing instant, which callouts with
/// overlapping windows share), `last` the earliest end of a window on CW_BACKING_WHEEL and
/// `first` on the other backings; an interrupt anywhere in [first, last] runs each callout
/// inside its window, and one at `last` coalesces the most. Both in that CPU's ticks;
/// (current tick, current tick) when work is due now.
///
/// Returns 1 with `first` and `last` filled; 0 when nothing is pending there; CW_EINVAL (a
/// NULL argument, a CPU outside the table).
///
/// # Safety
///
/// `cw` is NULL or a live table; `first` and `last` are NULL or valid for writing a uint64_t.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_next_event(
    cw: *const cw_callouts,
    cpu: c_int,
    first: *mut u64,
    last: *mut u64,
) -> c_int {
    guard(|| {
        need(first)?;
        need(last)?;
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let cpu = cpu_index(cpu)?;
        match dispatch!(t, s => s.next_event(cpu)).map_err(error_code)? {
            Some((a, b)) => {
                // SAFETY: both non-NULL and valid for writes by this function's contract.
                unsafe {
                    first.write(a);
                    last.write(b);
                }
                Ok(1)
            }
            None => Ok(0),
        }
    })
}

/// The software interrupt of CPU `cpu`: runs every due handler of that CPU (and no other's),
/// in expiry order (set order among equal expiries), until it has caught up with its clock,
/// then makes each move to another CPU that waited for a handler to return.
///
/// Handlers run with the table unlocked and may set or cancel any callout, the next due one
/// included (a cancelled callout that has not started never runs).
///
/// Returns the number of handlers and drain calls run (at most INT_MAX is reported);
/// CW_EBUSY if another thread (or this one, from a handler) is already running that CPU's
/// handlers; CW_EINVAL (NULL table, a CPU outside the table).
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_softclock(cw: *mut cw_callouts, cpu: c_int) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let cpu = cpu_index(cpu)?;
        let ran = dispatch!(t, s => s.softclock(cpu, CCall::run)).map_err(error_code)?;
        Ok(c_int::try_from(ran).unwrap_or(c_int::MAX))
    })
}

/// Stores CPU `cpu`'s current tick (the kernel's `ticks`, advanced by cw_hardclock and
/// cw_callout_process) in `*out`.
///
/// Returns 0; CW_EINVAL (a NULL argument, a CPU outside the table).
///
/// # Safety
///
/// `cw` is NULL or a live table; `out` is NULL or valid for writing a uint64_t.
#[no_mangle]
pub unsafe extern "C" fn cw_ticks(cw: *const cw_callouts, cpu: c_int, out: *mut u64) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        need(out)?;
        let cpu = cpu_index(cpu)?;
        let ticks = dispatch!(t, s => s.ticks(cpu)).map_err(error_code)?;
        // SAFETY: `out` is non-NULL and valid for writes, by this function's contract.
        unsafe { out.write(ticks) };
        Ok(CW_OK)
    })
}

/// Stores the tick CPU `cpu`'s cw_softclock has processed up to (the kernel's `softticks`;
/// equal to cw_ticks when caught up) in `*out`.
///
/// Returns 0; CW_EINVAL (a NULL argument, a CPU outside the table).
///
/// # Safety
///
/// `cw` is NULL or a live table; `out` is NULL or valid for writing a uint64_t.
#[no_mangle]
pub unsafe extern "C" fn cw_softticks(cw: *const cw_callouts, cpu: c_int, out: *mut u64) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        need(out)?;
        let cpu = cpu_index(cpu)?;
        let softticks = dispatch!(t, s => s.softticks(cpu)).map_err(error_code)?;
        // SAFETY: `out` is non-NULL and valid for writes, by this function's contract.
        unsafe { out.write(softticks) };
        Ok(CW_OK)
    })
}
