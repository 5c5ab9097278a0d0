//! Sleeping with precision for C (calloutng's `pause_sbt` and `cv_timedwait_sbt`): the calling
//! thread blocks until a timer of the process-wide runtime (the one timer sets run on, on
//! CLOCK_MONOTONIC) wakes it, at a wake-up shared with every timer whose window overlaps.

use core::ffi::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use callwheel::time::Sbt;
use callwheel_callout::flags::{tolerance, C_ABSOLUTE, KNOWN};
use callwheel_rt::{Condvar, Deadline, Tolerance, WaitLimit, Woken};
use libc::pthread_mutex_t;

use crate::timerset::{runtime, set_code};
use crate::{guard, need, CW_EBUSY, CW_EINVAL, CW_OK};

/// cw_cv_timedwait_sbt: the timeout came first (FreeBSD's cv_timedwait_sbt says EWOULDBLOCK).
/// Equal to -ETIMEDOUT on Linux.
pub const CW_ETIMEDOUT: c_int = 0 - 110;

/// A condition variable whose timed waits are timers of the process-wide runtime (opaque).
pub struct cw_cv {
    cv: Condvar,
    /// Threads inside a wait call on this condition variable: cw_cv_free waits for those
    /// already woken to leave before the memory goes.
    inside: AtomicUsize,
}

/// Nanoseconds at or after `t` (never early), for a non-negative `t`: the ceiling of
/// `raw · 10⁹ / 2³²`, exact in 128 bits.
pub(crate) fn nanos_ceil(t: Sbt) -> u64 {
    let raw = i128::from(t.as_raw().max(0));
    let ns = (raw * 1_000_000_000 + (1 << 32) - 1) >> 32;
    u64::try_from(ns).unwrap_or(u64::MAX)
}

/// The timeout that `sbt`, `precision` and `flags` describe on the process-wide runtime: a
/// relative time from now, or with CW_C_ABSOLUTE an absolute CLOCK_MONOTONIC time; the window
/// is calloutng's (`precision`, or the interval / 2^n with CW_C_PREL(n), whichever is larger).
pub(crate) fn timeout(sbt: i64, precision: i64, flags: c_int) -> Result<WaitLimit, c_int> {
    // A negative int has bits no flag uses, so it is refused as unknown flags.
    let flags = flags as u32;
    if flags & !KNOWN != 0 || sbt < 0 || precision < 0 {
        return Err(CW_EINVAL);
    }
    let (sbt, precision) = (Sbt::from_raw(sbt), Sbt::from_raw(precision));
    if flags & C_ABSOLUTE != 0 {
        let rt = runtime().map_err(set_code)?;
        let now = Sbt::from_nanos(i64::try_from(rt.now_ns()).unwrap_or(i64::MAX));
        let window = tolerance(sbt.saturating_sub(now), precision, flags);
        Ok(WaitLimit::At(
            Deadline::from_clock_ns(nanos_ceil(sbt)),
            Duration::from_nanos(u64::try_from(window.to_nanos()).unwrap_or(0)),
        ))
    } else {
        let window = tolerance(sbt, precision, flags);
        Ok(WaitLimit::After(
            Duration::from_nanos(nanos_ceil(sbt)),
            Tolerance::absolute(Duration::from_nanos(
                u64::try_from(window.to_nanos()).unwrap_or(0),
            )),
        ))
    }
}

/// calloutng's `pause_sbt`: blocks the calling thread until `sbt` (32.32 fixed-point seconds,
/// see CW_SBT_1S) has passed — relative to now, or with CW_C_ABSOLUTE an absolute
/// CLOCK_MONOTONIC time — never earlier, and up to `precision` later, or the interval divided
/// by 2^n with CW_C_PREL(n) if that is larger: the process-wide runtime wakes the thread at
/// a wake-up it shares with every timer whose window overlaps (cw_timerset timers, other
/// sleepers). A time already passed returns at once. CW_C_DIRECT_EXEC and CW_C_HARDCLOCK are
/// accepted and change nothing.
///
/// Returns 0; CW_EINVAL (a negative `sbt` or `precision`, unknown flags); CW_EDEADLK from a
/// callback of a timer set on the process-wide runtime (its driver would wait for itself);
/// CW_ENOMEM; a negated errno when the runtime's threads cannot start.
#[no_mangle]
pub extern "C" fn cw_sleep_sbt(sbt: i64, precision: i64, flags: c_int) -> c_int {
    guard(|| {
        let timeout = timeout(sbt, precision, flags)?;
        let rt = runtime().map_err(set_code)?;
        rt.sleep_for(timeout).map_err(set_code)?;
        Ok(CW_OK)
    })
}

/// Creates a condition variable; `out` receives it.
///
/// Returns 0; CW_EINVAL for NULL `out`.
///
/// # Safety
///
/// `out` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn cw_cv_new(out: *mut *mut cw_cv) -> c_int {
    guard(|| {
        need(out)?;
        let cv = Box::into_raw(Box::new(cw_cv {
            cv: Condvar::new(),
            inside: AtomicUsize::new(0),
        }));
        // SAFETY: `out` is non-NULL and valid for writes by this function's contract.
        unsafe { out.write(cv) };
        Ok(CW_OK)
    })
}

/// Destroys a condition variable. Threads already woken that have not yet returned from their
/// wait are waited for (briefly: they are on their way out).
///
/// Returns 0 (also for NULL); CW_EBUSY, freeing nothing, while a thread is blocked on it.
///
/// # Safety
///
/// `cv` is NULL or from cw_cv_new, not yet freed; after 0 it must not be used again.
#[no_mangle]
pub unsafe extern "C" fn cw_cv_free(cv: *mut cw_cv) -> c_int {
    guard(|| {
        // SAFETY: NULL or live, by this function's contract.
        let Some(c) = (unsafe { cv.as_ref() }) else {
            return Ok(CW_OK);
        };
        // A thread still blocked makes it busy, also one that blocks while this call waits for
        // the woken ones to leave (a wait begun on a condition variable being freed).
        loop {
            if c.cv.waiters() != 0 {
                return Err(CW_EBUSY);
            }
            if c.inside.load(Ordering::Acquire) == 0 {
                break;
            }
            std::thread::yield_now();
        }
        // SAFETY: from Box::into_raw in cw_cv_new, freed once: no thread waits on it or is
        // still inside a wait call, and the caller uses it no more.
        drop(unsafe { Box::from_raw(cv) });
        Ok(CW_OK)
    })
}

/// The condition variable behind `cv`, or CW_EINVAL for NULL.
///
/// # Safety
///
/// `cv` is NULL or live for `'a`.
unsafe fn cond<'a>(cv: *const cw_cv) -> Result<&'a cw_cv, c_int> {
    // SAFETY: by this function's contract; the reference is shared and the condition variable
    // synchronises inside.
    unsafe { cv.as_ref() }.ok_or(CW_EINVAL)
}

/// Wakes the longest-waiting thread blocked on `cv`.
///
/// Returns 1 if a thread was woken, 0 if none waited; CW_EINVAL for NULL `cv`.
///
/// # Safety
///
/// `cv` is NULL or a live condition variable.
#[no_mangle]
pub unsafe extern "C" fn cw_cv_signal(cv: *mut cw_cv) -> c_int {
    guard(|| {
        // SAFETY: by this function's contract.
        let c = unsafe { cond(cv) }?;
        Ok(c_int::from(c.cv.notify_one()))
    })
}

/// Wakes every thread blocked on `cv`.
///
/// Returns how many were woken (at most INT_MAX is reported); CW_EINVAL for NULL `cv`.
///
/// # Safety
///
/// `cv` is NULL or a live condition variable.
#[no_mangle]
pub unsafe extern "C" fn cw_cv_broadcast(cv: *mut cw_cv) -> c_int {
    guard(|| {
        // SAFETY: by this function's contract.
        let c = unsafe { cond(cv) }?;
        Ok(c_int::try_from(c.cv.notify_all()).unwrap_or(c_int::MAX))
    })
}

/// Releases `m` (which the caller holds), blocks until cw_cv_signal or cw_cv_broadcast wakes
/// the thread, and locks `m` again. Check the condition in a loop, as with
/// pthread_cond_wait; change it under `m` before signalling.
///
/// With no timeout it arms no timer: called on the process-wide runtime's driver (a timer
/// set's callback), it holds that driver until signalled.
///
/// Returns 0; CW_EINVAL (NULL `cv` or `m`, or `m` not locked: nothing happens); CW_ENOMEM.
///
/// # Safety
///
/// `cv` is NULL or a live condition variable; `m` is NULL or an initialised, non-recursive
/// mutex that the calling thread holds, and stays alive until the call returns.
#[no_mangle]
pub unsafe extern "C" fn cw_cv_wait(cv: *mut cw_cv, m: *mut pthread_mutex_t) -> c_int {
    // SAFETY: this function's contract is the helper's.
    guard(|| unsafe { wait(cv, m, None) })
}

/// cw_cv_wait that also gives up at `sbt` — relative to now, or with CW_C_ABSOLUTE an absolute
/// CLOCK_MONOTONIC time — woken then by a timer of the process-wide runtime whose window is
/// `precision` wide, or the interval divided by 2^n with CW_C_PREL(n) if that is larger
/// (FreeBSD's cv_timedwait_sbt). `m` is locked again in every case but an error.
///
/// Returns 0 when woken by cw_cv_signal or cw_cv_broadcast; CW_ETIMEDOUT when the timeout
/// came first; CW_EINVAL (NULL `cv` or `m`, `m` not locked, a negative `sbt` or `precision`,
/// unknown flags: nothing happens); CW_EDEADLK on the process-wide runtime's driver thread
/// (it would wait for itself); CW_ENOMEM; a negated errno when the runtime's threads cannot
/// start.
///
/// # Safety
///
/// As for cw_cv_wait.
#[no_mangle]
pub unsafe extern "C" fn cw_cv_timedwait_sbt(
    cv: *mut cw_cv,
    m: *mut pthread_mutex_t,
    sbt: i64,
    precision: i64,
    flags: c_int,
) -> c_int {
    guard(|| {
        // Bad pointers first: nothing (not even the runtime) is started for them.
        if cv.is_null() || m.is_null() {
            return Err(CW_EINVAL);
        }
        let timeout = timeout(sbt, precision, flags)?;
        // SAFETY: this function's contract is the helper's.
        unsafe { wait(cv, m, Some(timeout)) }
    })
}

/// A thread inside a wait call on a condition variable, counted until it leaves, on every way
/// out (a caught panic included), so that cw_cv_free never waits for a thread that is gone.
struct Inside<'a>(&'a AtomicUsize);

impl<'a> Inside<'a> {
    fn enter(count: &'a AtomicUsize) -> Inside<'a> {
        count.fetch_add(1, Ordering::AcqRel);
        Inside(count)
    }
}

impl Drop for Inside<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// cw_cv_wait and cw_cv_timedwait_sbt, inside their callers' panic guard.
///
/// # Safety
///
/// As for cw_cv_wait.
unsafe fn wait(
    cv: *mut cw_cv,
    m: *mut pthread_mutex_t,
    timeout: Option<WaitLimit>,
) -> Result<c_int, c_int> {
    // SAFETY: by this function's contract.
    let c = unsafe { cond(cv) }?;
    if m.is_null() {
        return Err(CW_EINVAL);
    }
    // SAFETY: `m` is an initialised mutex by this function's contract. If it was unlocked
    // the trylock takes it, and it is released again at once.
    if unsafe { libc::pthread_mutex_trylock(m) } == 0 {
        // SAFETY: this thread has just locked it.
        unsafe { libc::pthread_mutex_unlock(m) };
        return Err(CW_EINVAL);
    }
    let timeout = match timeout {
        Some(t) => Some((runtime().map_err(set_code)?, t)),
        None => None,
    };
    let inside = Inside::enter(&c.inside);
    let woken = c.cv.wait_releasing(
        (),
        // SAFETY: the calling thread holds `m` (checked above, by the contract).
        |()| unsafe {
            libc::pthread_mutex_unlock(m);
        },
        timeout,
    );
    // The last touch of `cv`: cw_cv_free may go ahead once it reads zero.
    drop(inside);
    match woken {
        Ok(woken) => {
            // SAFETY: `m` is alive until this call returns, by the contract.
            unsafe { libc::pthread_mutex_lock(m) };
            Ok(match woken {
                Woken::Notified => CW_OK,
                Woken::TimedOut => CW_ETIMEDOUT,
            })
        }
        // Nothing was released: the caller still holds `m`.
        Err(((), e)) => Err(set_code(e)),
    }
}
