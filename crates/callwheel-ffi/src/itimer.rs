//! The paper's compatibility surface: `setitimer`/`getitimer` with `ITIMER_MULTIREAL`
//! (Costello & Varghese, "Multiple user-level timers", Figures 6 and 7), over timer sets.
//!
//! The calls take the libc `struct itimerval` and, like the system calls, return 0 or -1 with
//! `errno` set. With `which` = CW_ITIMER_MULTIREAL they act on the process-wide set (made on
//! first use, see `cw_multireal_set`); any other `which` goes to the libc call unchanged. The
//! `_on` variants act on a set of the caller's.
//!
//! # Handles and labels in a `struct timeval`
//!
//! A 64-bit handle or label travels in one `struct timeval` (it_value for a handle,
//! it_interval for a label). Where `time_t` has 64 bits (every 64-bit Linux target, and
//! 32-bit ones built with 64-bit time), `tv_sec` holds the 64 bits (as a signed number: bit
//! 63 is the sign) and `tv_usec` is 0: `{ (time_t)bits, 0 }`. Where `time_t` has 32 bits,
//! `tv_sec` holds the high 32 bits and `tv_usec` the low 32 bits. Either way no handle is
//! `{0, 0}` or `{-1, -1}` (a handle is never 0 nor all ones), so the paper's zero and `{-1, -1}`
//! conventions never meet a handle. A handle or label whose `tv_usec` is not 0 (64-bit
//! `time_t`) encodes nothing: EINVAL. cw_timeval_from_bits and cw_timeval_to_bits convert.

use core::ffi::c_int;
use core::ptr;
use std::panic::{self, AssertUnwindSafe};
use std::time::Duration;

use libc::{itimerval, suseconds_t, time_t, timeval};

use callwheel_rt::{
    Error as RtError, PerFork, TimerHandle, TimerSet, TimerSetConfig, DEFAULT_QUOTA,
};

use crate::timerset::{cw_timerset, runtime, set_code, set_ref};
use crate::timerset_notify::set_signal;
use crate::{guard, need, CW_EBUSY, CW_EINVAL, CW_OK};

/// The `which` of cw_setitimer and cw_getitimer for the paper's multiple real-time timers.
/// Not a kernel timer number (ITIMER_REAL, ITIMER_VIRTUAL and ITIMER_PROF are 0, 1 and 2, and
/// go to the libc calls).
pub const CW_ITIMER_MULTIREAL: c_int = 0x4d52;

const _: () = {
    assert!(CW_ITIMER_MULTIREAL != libc::ITIMER_REAL);
    assert!(CW_ITIMER_MULTIREAL != libc::ITIMER_VIRTUAL);
    assert!(CW_ITIMER_MULTIREAL != libc::ITIMER_PROF);
};

/// Whether `time_t` holds a whole 64-bit handle.
const WIDE_TIME_T: bool = core::mem::size_of::<time_t>() >= 8;

/// A `struct timeval` with these fields (and zero in any padding the platform has).
pub(crate) fn tv(sec: time_t, usec: suseconds_t) -> timeval {
    // SAFETY: `timeval` is plain integers, for which all-zero bytes are a valid value.
    let mut t: timeval = unsafe { core::mem::zeroed() };
    t.tv_sec = sec;
    t.tv_usec = usec;
    t
}

/// The paper's `{-1, -1}`: "create" in setitimer's ovalue, "reap" in getitimer's value.
fn is_minus_one(t: &timeval) -> bool {
    t.tv_sec == -1 && t.tv_usec == -1
}

/// The zero time: "cancel" in setitimer's value.
fn is_zero(t: &timeval) -> bool {
    t.tv_sec == 0 && t.tv_usec == 0
}

/// A 64-bit handle or label as a timeval (see the module documentation).
#[allow(clippy::unnecessary_cast)] // time_t is i64 or i32, depending on the target
pub(crate) fn bits_to_timeval(bits: u64) -> timeval {
    if WIDE_TIME_T {
        tv(bits as i64 as time_t, 0)
    } else {
        tv(
            (bits >> 32) as u32 as i32 as time_t,
            bits as u32 as i32 as suseconds_t,
        )
    }
}

/// The 64 bits a timeval encodes, or `None` if it encodes none.
#[allow(clippy::unnecessary_cast)] // time_t is i64 or i32, depending on the target
pub(crate) fn timeval_to_bits(t: &timeval) -> Option<u64> {
    if WIDE_TIME_T {
        (t.tv_usec == 0).then_some(t.tv_sec as i64 as u64)
    } else {
        let high = u64::from(t.tv_sec as i32 as u32);
        let low = u64::from(t.tv_usec as i32 as u32);
        Some(high << 32 | low)
    }
}

/// A time a caller gave: `tv_sec >= 0` and `0 <= tv_usec < 1000000`, as setitimer(2) demands.
#[allow(clippy::useless_conversion)] // time_t and suseconds_t are i64 or i32
pub(crate) fn timeval_to_duration(t: &timeval) -> Option<Duration> {
    let sec = u64::try_from(i64::from(t.tv_sec)).ok()?;
    let usec = u32::try_from(i64::from(t.tv_usec))
        .ok()
        .filter(|&u| u < 1_000_000)?;
    Some(Duration::new(sec, usec * 1000))
}

/// A time the set reports, rounded up to the microsecond (so a running timer never reads as
/// zero, which would mean "disarmed"); beyond `time_t`, the largest time.
pub(crate) fn duration_to_timeval(d: Duration) -> timeval {
    let micros = d.as_nanos().div_ceil(1000);
    match time_t::try_from(micros / 1_000_000) {
        // Below 1000000: fits any suseconds_t.
        Ok(sec) => tv(sec, (micros % 1_000_000) as suseconds_t),
        Err(_) => tv(time_t::MAX, 999_999),
    }
}

/// A set's value as an itimerval.
fn to_itimerval(remaining: Duration, interval: Duration) -> itimerval {
    itimerval {
        it_interval: duration_to_timeval(interval),
        it_value: duration_to_timeval(remaining),
    }
}

/// Figure 6 on `set`: setitimer(ITIMER_MULTIREAL, value, ovalue) with the structures read;
/// returns what ovalue must hold afterwards (it keeps its contents on failure), or the errno.
pub(crate) fn multireal_set(
    set: &TimerSet,
    value: &itimerval,
    ovalue: &itimerval,
) -> Result<itimerval, c_int> {
    let errno = |e: RtError| e.errno();
    if is_zero(&value.it_value) {
        // Cancel: ovalue->it_value is the handle; both it_intervals are ignored.
        let handle = timeval_to_bits(&ovalue.it_value).ok_or(libc::EINVAL)?;
        let last = set.cancel(TimerHandle::from_bits(handle)).map_err(errno)?;
        return Ok(to_itimerval(last.remaining, last.interval));
    }
    let first = timeval_to_duration(&value.it_value).ok_or(libc::EINVAL)?;
    let interval = timeval_to_duration(&value.it_interval).ok_or(libc::EINVAL)?;
    let label = timeval_to_bits(&ovalue.it_interval).ok_or(libc::EINVAL)?;
    if is_minus_one(&ovalue.it_value) {
        // Create: the handle goes to ovalue->it_value; the label stays in it_interval.
        let handle = set.create(first, interval, label).map_err(errno)?;
        return Ok(itimerval {
            it_interval: ovalue.it_interval,
            it_value: bits_to_timeval(handle.to_bits()),
        });
    }
    // Reset: ovalue is overwritten with the former value.
    let handle = timeval_to_bits(&ovalue.it_value).ok_or(libc::EINVAL)?;
    let former = set
        .reset(TimerHandle::from_bits(handle), first, interval, label)
        .map_err(errno)?;
    Ok(to_itimerval(former.remaining, former.interval))
}

/// Figure 7 on `set`: getitimer(ITIMER_MULTIREAL, value) with the structure read; returns what
/// value must hold afterwards (it keeps its contents on failure), or the errno.
pub(crate) fn multireal_get(set: &TimerSet, value: &itimerval) -> Result<itimerval, c_int> {
    if is_minus_one(&value.it_value) {
        // Reap: handle to it_value, label to it_interval.
        let (handle, label) = set.reap().ok_or(libc::EAGAIN)?;
        return Ok(itimerval {
            it_interval: bits_to_timeval(label),
            it_value: bits_to_timeval(handle.to_bits()),
        });
    }
    let handle = timeval_to_bits(&value.it_value).ok_or(libc::EINVAL)?;
    let now = set
        .get(TimerHandle::from_bits(handle))
        .map_err(|e| e.errno())?;
    Ok(to_itimerval(now.remaining, now.interval))
}

/// Stores `e` in the calling thread's `errno`.
fn set_errno(e: c_int) {
    // SAFETY: __errno_location returns the calling thread's errno, valid for writes for the
    // thread's whole life.
    unsafe { *libc::__errno_location() = e };
}

/// Runs a compatibility call's body: 0 on success (errno untouched), -1 with errno set on
/// failure; a panic inside the library reads as EIO.
fn posix(body: impl FnOnce() -> Result<(), c_int>) -> c_int {
    let errno = match panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => return 0,
        Ok(Err(e)) => e,
        Err(_) => libc::EIO,
    };
    set_errno(errno);
    -1
}

/// The process-wide ITIMER_MULTIREAL set, once made (a forked child's own, made there: as
/// with setitimer's timers, a child does not inherit its parent's).
static MULTIREAL: PerFork<&'static cw_timerset> = PerFork::new();

/// The process-wide set, made with `quota` (0: the default) if it does not exist yet; the
/// flag says whether this call made it.
fn process_set(quota: usize) -> Result<(&'static cw_timerset, bool), RtError> {
    let (set, made) = MULTIREAL.get_or_try_make(|| {
        let config =
            TimerSetConfig::default().with_quota(if quota == 0 { DEFAULT_QUOTA } else { quota });
        let set = TimerSet::with_config(runtime()?, config)?;
        Ok::<_, RtError>(cw_timerset::leak_process_wide(set))
    })?;
    Ok((*set, made))
}

/// Reads `*p`, or EINVAL for NULL.
///
/// # Safety
///
/// `p` is NULL or valid for reading an itimerval.
unsafe fn read(p: *const itimerval) -> Result<itimerval, c_int> {
    if p.is_null() {
        return Err(libc::EINVAL);
    }
    // SAFETY: non-NULL, and valid for reads by this function's contract.
    Ok(unsafe { p.read() })
}

/// setitimer(2) extended with the paper's ITIMER_MULTIREAL (Figure 6). With any other `which`
/// this is the libc setitimer, unchanged. With CW_ITIMER_MULTIREAL it acts on the process-wide
/// set (cw_multireal_set; made on first use) — and, as in the paper:
///
/// - `ovalue` must not be NULL (EINVAL); nor may `value`.
/// - `value->it_value` non-zero and `ovalue->it_value` == {-1, -1}: create. The label is read
///   from `ovalue->it_interval`; the new timer's handle is written to `ovalue->it_value`
///   (`ovalue->it_interval` keeps the label). The timer expires after `value->it_value`, and
///   with a non-zero `value->it_interval` is periodic. EAGAIN when the set holds its quota.
/// - `value->it_value` non-zero and `ovalue->it_value` any other value: reset. The handle is
///   `ovalue->it_value`, the new label `ovalue->it_interval` (it may differ from the old one).
///   A timer waiting on the expired queue leaves it; its value and label are replaced; `ovalue`
///   is overwritten with its former value. EINVAL if the handle names no timer of the set.
/// - `value->it_value` zero: cancel. `value->it_interval` and `ovalue->it_interval` are
///   ignored; the handle is `ovalue->it_value`. The timer is destroyed, running or queued
///   (queued timers still exist), and its final value is stored in `ovalue` (zero remaining if
///   it was queued). EINVAL if the handle names no timer of the set.
///
/// Handles and labels travel in a struct timeval as cw_timeval_from_bits encodes them.
/// Times must have `tv_sec >= 0` and `0 <= tv_usec < 1000000`, and a deadline must fit the
/// clock's 64-bit nanoseconds (about 584 years): EINVAL otherwise, where Linux's setitimer would
/// clamp. Values read back are rounded up to the microsecond. Returns 0, or -1 with errno set
/// (EINVAL, EAGAIN; or
/// the errno of the failed eventfd or thread creation when the process-wide set cannot be
/// made). On failure `*ovalue` is unchanged.
///
/// # Safety
///
/// As setitimer: `value` is NULL or valid for reading, `ovalue` NULL or valid for reading and
/// writing, a struct itimerval.
#[no_mangle]
pub unsafe extern "C" fn cw_setitimer(
    which: c_int,
    value: *const itimerval,
    ovalue: *mut itimerval,
) -> c_int {
    if which != CW_ITIMER_MULTIREAL {
        // SAFETY: the caller's pointers go to libc's setitimer, whose contract is ours.
        return unsafe { libc::setitimer(which, value, ovalue) };
    }
    posix(|| {
        let (set, _) = process_set(0).map_err(|e| e.errno())?;
        // SAFETY: the pointers are valid (or NULL) by this function's contract.
        unsafe { set_on(set.timer_set(), value, ovalue) }
    })
}

/// getitimer(2) extended with the paper's ITIMER_MULTIREAL (Figure 7). With any other `which`
/// this is the libc getitimer, unchanged. With CW_ITIMER_MULTIREAL it acts on the process-wide
/// set — and, as in the paper, `value->it_value` must be set before the call
/// (`value->it_interval` is ignored):
///
/// - `value->it_value` == {-1, -1}: reap. The timer at the head of the expired queue is
///   removed from it; its handle is written to `value->it_value` and its label to
///   `value->it_interval`. A one-shot timer is destroyed; a periodic one runs again, its next
///   expiry based on the expiry just reaped, not on the reap. EAGAIN if the queue is empty.
/// - Any other `value->it_value` is a handle: `value` is overwritten with the timer's current
///   value (zero remaining while it waits on the expired queue). EINVAL if the handle names no
///   timer of the set.
///
/// Returns 0, or -1 with errno set (EINVAL also for a NULL `value`); on failure `*value` is
/// left untouched.
///
/// # Safety
///
/// As getitimer: `value` is NULL or valid for reading and writing a struct itimerval.
#[no_mangle]
pub unsafe extern "C" fn cw_getitimer(which: c_int, value: *mut itimerval) -> c_int {
    if which != CW_ITIMER_MULTIREAL {
        // SAFETY: the caller's pointer goes to libc's getitimer, whose contract is ours.
        return unsafe { libc::getitimer(which, value) };
    }
    posix(|| {
        let (set, _) = process_set(0).map_err(|e| e.errno())?;
        // SAFETY: the pointer is valid (or NULL) by this function's contract.
        unsafe { get_on(set.timer_set(), value) }
    })
}

/// cw_setitimer(CW_ITIMER_MULTIREAL, value, ovalue) on the set `set` instead of the
/// process-wide one. Returns 0, or -1 with errno set (EINVAL also for a NULL set).
///
/// # Safety
///
/// `set` is NULL or a live set; the other pointers as cw_setitimer's.
#[no_mangle]
pub unsafe extern "C" fn cw_setitimer_on(
    set: *mut cw_timerset,
    value: *const itimerval,
    ovalue: *mut itimerval,
) -> c_int {
    posix(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_ref(set) }.map_err(|_| libc::EINVAL)?;
        // SAFETY: the pointers are valid (or NULL) by this function's contract.
        unsafe { set_on(s.timer_set(), value, ovalue) }
    })
}

/// cw_getitimer(CW_ITIMER_MULTIREAL, value) on the set `set` instead of the process-wide one.
/// Returns 0, or -1 with errno set (EINVAL also for a NULL set).
///
/// # Safety
///
/// `set` is NULL or a live set; `value` as cw_getitimer's.
#[no_mangle]
pub unsafe extern "C" fn cw_getitimer_on(set: *mut cw_timerset, value: *mut itimerval) -> c_int {
    posix(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_ref(set) }.map_err(|_| libc::EINVAL)?;
        // SAFETY: the pointer is valid (or NULL) by this function's contract.
        unsafe { get_on(s.timer_set(), value) }
    })
}

/// Figure 6 through pointers: reads both structures (they may be the same one), then writes
/// `*ovalue` only on success.
///
/// # Safety
///
/// `value` is NULL or valid for reading, `ovalue` NULL or valid for reading and writing, an
/// itimerval.
unsafe fn set_on(
    set: &TimerSet,
    value: *const itimerval,
    ovalue: *mut itimerval,
) -> Result<(), c_int> {
    // SAFETY: by this function's contract.
    let (v, o) = unsafe { (read(value)?, read(ovalue)?) };
    let out = multireal_set(set, &v, &o)?;
    // SAFETY: `ovalue` is non-NULL (it was read) and valid for writes by the contract.
    unsafe { ovalue.write(out) };
    Ok(())
}

/// Figure 7 through a pointer: writes `*value` only on success.
///
/// # Safety
///
/// `value` is NULL or valid for reading and writing an itimerval.
unsafe fn get_on(set: &TimerSet, value: *mut itimerval) -> Result<(), c_int> {
    // SAFETY: by this function's contract.
    let v = unsafe { read(value)? };
    let out = multireal_get(set, &v)?;
    // SAFETY: `value` is non-NULL (it was read) and valid for writes by the contract.
    unsafe { value.write(out) };
    Ok(())
}

/// Makes the process-wide ITIMER_MULTIREAL set with room for `quota` timers, running plus
/// queued (0: CW_TIMERSET_DEFAULT_QUOTA, also the quota when the set is made on first use). Call
/// it before any other use of the process-wide set.
///
/// Returns 0; CW_EBUSY if the set already exists (its quota is unchanged); CW_EINVAL for a
/// quota above CW_TIMERSET_MAX_QUOTA; a negated errno if the set's eventfd or the runtime's
/// threads cannot be created.
#[no_mangle]
pub extern "C" fn cw_multireal_init(quota: usize) -> c_int {
    guard(|| {
        let (_, made) = process_set(quota).map_err(set_code)?;
        if made {
            Ok(CW_OK)
        } else {
            Err(CW_EBUSY)
        }
    })
}

/// The process-wide ITIMER_MULTIREAL set that cw_setitimer and cw_getitimer act on, made on
/// first use (with CW_TIMERSET_DEFAULT_QUOTA unless cw_multireal_init came first) on the
/// process-wide monotonic runtime. Every cw_timer_* and cw_timerset_* function accepts it;
/// cw_timerset_free refuses it (it lives as long as the process; its timers end with it, as
/// the paper's end at exit()). Handles of cw_timer_create on it work with cw_setitimer, and the
/// other way round.
///
/// Returns the set, or NULL with errno set when it cannot be made.
#[no_mangle]
pub extern "C" fn cw_multireal_set() -> *mut cw_timerset {
    let made = panic::catch_unwind(|| process_set(0).map_err(|e| e.errno()));
    match made {
        Ok(Ok((set, _))) => ptr::from_ref(set).cast_mut(),
        Ok(Err(e)) => {
            set_errno(e);
            ptr::null_mut()
        }
        Err(_) => {
            set_errno(libc::EIO);
            ptr::null_mut()
        }
    }
}

/// The process-wide set's eventfd (cw_timerset_fd of cw_multireal_set): readable exactly while
/// its expired queue is non-empty. Returns the descriptor, or a negated errno when the set
/// cannot be made.
#[no_mangle]
pub extern "C" fn cw_multireal_fd() -> c_int {
    guard(|| {
        use std::os::fd::AsRawFd;
        let (set, _) = process_set(0).map_err(set_code)?;
        Ok(set.timer_set().fd().as_raw_fd())
    })
}

/// The paper's SIGALRM: sends `signo` to the process each time the process-wide set's expired
/// queue goes from empty to non-empty (cw_timerset_set_signal on cw_multireal_set); 0 stops
/// the signals. Off by default: use the descriptor (cw_multireal_fd) where you can.
///
/// Returns 0; CW_EINVAL for a `signo` outside 0..=SIGRTMAX; a negated errno when the set
/// cannot be made.
#[no_mangle]
pub extern "C" fn cw_multireal_signal(signo: c_int) -> c_int {
    guard(|| {
        let (set, _) = process_set(0).map_err(set_code)?;
        set_signal(set.timer_set(), signo)?;
        Ok(CW_OK)
    })
}

/// Stores in `*tv` the struct timeval that carries the 64 bits `bits` (a handle or a label):
/// `{ (time_t)bits, 0 }` where time_t has 64 bits, `{ high 32 bits, low 32 bits }` where it
/// has 32.
///
/// Returns 0, or CW_EINVAL for a NULL `tv`.
///
/// # Safety
///
/// `tv` is NULL or valid for writing a struct timeval.
#[no_mangle]
pub unsafe extern "C" fn cw_timeval_from_bits(bits: u64, tv: *mut timeval) -> c_int {
    guard(|| {
        need(tv)?;
        // SAFETY: `tv` is non-NULL and valid for writes, by this function's contract.
        unsafe { tv.write(bits_to_timeval(bits)) };
        Ok(CW_OK)
    })
}

/// Stores in `*bits` the 64 bits (a handle or a label) that `*tv` carries (see
/// cw_timeval_from_bits).
///
/// Returns 0; CW_EINVAL for a NULL pointer or a timeval that carries no 64 bits (`tv_usec` not
/// 0 where time_t has 64 bits).
///
/// # Safety
///
/// `tv` is NULL or valid for reading a struct timeval; `bits` is NULL or valid for writing a
/// uint64_t.
#[no_mangle]
pub unsafe extern "C" fn cw_timeval_to_bits(tv: *const timeval, bits: *mut u64) -> c_int {
    guard(|| {
        if tv.is_null() {
            return Err(CW_EINVAL);
        }
        need(bits)?;
        // SAFETY: `tv` is non-NULL and valid for reads, by this function's contract.
        let t = unsafe { tv.read() };
        let b = timeval_to_bits(&t).ok_or(CW_EINVAL)?;
        // SAFETY: `bits` is non-NULL and valid for writes, by this function's contract.
        unsafe { bits.write(b) };
        Ok(CW_OK)
    })
}
