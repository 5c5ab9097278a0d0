//! The per-CPU sets' clocks for C: each CPU's interrupt (tick-driven and tickless), its
//! software interrupt, its event window and its ticks. The sets and their callouts are in
//! `percpu.rs`.

use core::ffi::c_int;

use crate::callout::{error_code, CCall};
use crate::percpu::{cpu_index, each, set_of};
use crate::{cw_percpu, flag, guard, need, CW_OK};

/// The clock interrupt of CPU `cpu`: cw_hardclock on that CPU's table (its tick advances by
/// one, then its due CW_C_DIRECT_EXEC handlers and ready drains run on this thread).
///
/// Returns 1 if cw_percpu_softclock may have work on that CPU (as for cw_hardclock), 0 if
/// not; CW_EBUSY if another
/// thread (or this one, from a handler) is running that CPU's handlers (the tick still
/// advanced); CW_EINVAL (NULL set, a CPU outside the set).
///
/// # Safety
///
/// `set` is NULL or a live set.
#[no_mangle]
pub unsafe extern "C" fn cw_percpu_hardclock(set: *mut cw_percpu, cpu: c_int) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_of(set) }?;
        let cpu = cpu_index(cpu)?;
        let needed = each!(s, s => s.hardclock_with(cpu, CCall::run)).map_err(error_code)?;
        Ok(flag(needed))
    })
}

/// The software interrupt of CPU `cpu`: cw_softclock on that CPU's table. Runs the due
/// handlers of the callouts bound to that CPU (no other CPU's) on this thread, then makes the
/// moves that waited for them.
///
/// Returns how many handlers (and drain calls) ran; CW_EBUSY if another thread (or this one,
/// from a handler) is running that CPU's handlers; CW_EINVAL (NULL set, a CPU outside the
/// set).
///
/// # Safety
///
/// `set` is NULL or a live set.
#[no_mangle]
pub unsafe extern "C" fn cw_percpu_softclock(set: *mut cw_percpu, cpu: c_int) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_of(set) }?;
        let cpu = cpu_index(cpu)?;
        let ran = each!(s, s => s.softclock(cpu, CCall::run)).map_err(error_code)?;
        Ok(c_int::try_from(ran).unwrap_or(c_int::MAX))
    })
}

/// The tickless interrupt of CPU `cpu` (cw_callout_process on that CPU's table): moves its
/// tick to `now` in one step, then runs its due CW_C_DIRECT_EXEC handlers and ready drains.
///
/// Returns 1 if cw_percpu_softclock may have work on that CPU (as for cw_callout_process),
/// 0 if not; CW_EBUSY as for
/// cw_percpu_hardclock (the clock still moved); CW_EINVAL (NULL set, a CPU outside the set).
///
/// # Safety
///
/// `set` is NULL or a live set.
#[no_mangle]
pub unsafe extern "C" fn cw_percpu_callout_process(
    set: *mut cw_percpu,
    cpu: c_int,
    now: u64,
) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_of(set) }?;
        let cpu = cpu_index(cpu)?;
        let needed = each!(s, s => s.process_with(cpu, now, CCall::run)).map_err(error_code)?;
        Ok(flag(needed))
    })
}

/// The event window of CPU `cpu`'s pending callouts, as cw_callout_next_event, in that
/// table's ticks.
///
/// Returns 1 with `first` and `last` filled; 0 when nothing is pending on that CPU;
/// CW_EINVAL (NULL argument, a CPU outside the set).
///
/// # Safety
///
/// `set` is NULL or a live set; `first` and `last` are NULL or valid for writing a uint64_t.
#[no_mangle]
pub unsafe extern "C" fn cw_percpu_callout_next_event(
    set: *const cw_percpu,
    cpu: c_int,
    first: *mut u64,
    last: *mut u64,
) -> c_int {
    guard(|| {
        need(first)?;
        need(last)?;
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_of(set) }?;
        let cpu = cpu_index(cpu)?;
        match each!(s, s => s.next_event(cpu)).map_err(error_code)? {
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

/// Stores CPU `cpu`'s current tick (its table's `ticks`) in `*out`.
///
/// Returns 0; CW_EINVAL (NULL argument, a CPU outside the set).
///
/// # Safety
///
/// `set` is NULL or a live set; `out` is NULL or valid for writing a uint64_t.
#[no_mangle]
pub unsafe extern "C" fn cw_percpu_ticks(
    set: *const cw_percpu,
    cpu: c_int,
    out: *mut u64,
) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_of(set) }?;
        need(out)?;
        let cpu = cpu_index(cpu)?;
        let ticks = each!(s, s => s.ticks(cpu)).map_err(error_code)?;
        // SAFETY: `out` is non-NULL and valid for writes, by this function's contract.
        unsafe { out.write(ticks) };
        Ok(CW_OK)
    })
}
