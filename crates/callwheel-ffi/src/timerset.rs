//! Timer sets from C, under clean names: `cw_timerset_*` and `cw_timer_*` over
//! [`callwheel_rt::TimerSet`] (Costello & Varghese, "Multiple user-level timers").
//!
//! A set owns many labelled real-time timers. Each timer has a set-chosen 64-bit handle and a
//! caller-chosen 64-bit label; when it expires it joins the set's expired queue, where it
//! waits (still existing) until the owner reaps it with [`cw_timer_reap`], resets it or cancels
//! it. The owner hears about a non-empty queue through an eventfd ([`cw_timerset_fd`]), a
//! blocking wait ([`cw_timerset_wait`]), a callback ([`cw_timerset_set_callback`]) or a signal
//! ([`cw_timerset_set_signal`]).
//!
//! Times are `uint64_t` nanoseconds throughout this layer (the `setitimer`-shaped layer in
//! `itimer.rs` uses `struct itimerval`). Every set made by [`cw_timerset_new`] runs on one
//! process-wide runtime on `CLOCK_MONOTONIC`, created by the first call that needs it and never
//! shut down: one driver thread (`callwheel-rt-driver-0`) and one idle worker, whatever the
//! number of sets.

use core::ffi::c_int;
use core::ptr;
use std::time::Duration;

use callwheel_rt::{
    Error as RtError, Missed, PerFork, Runtime, TimerHandle, TimerSet, TimerSetConfig, TimerValue,
    DEFAULT_QUOTA, MAX_QUOTA,
};

use crate::{guard, need, CW_EINVAL, CW_ENOMEM, CW_OK};

/// A set's quota of timers (running plus queued) is full, or the process has no unused handle
/// left (only with about 2^24 sets alive at once: a freed set's key is reused, above every
/// handle it issued). Nothing was created. Equal to -ENOSPC on Linux.
pub const CW_ENOSPC: c_int = 0 - 28;
/// The set's runtime has shut down: a runtime of the embedder's (cw_timerset::into_raw) was
/// dropped, or the set is a copy in a process forked since its runtime started, whose threads
/// stay with the parent. Such a set takes no call that would arm, reap or wait. Sets made in
/// a forked child (and its cw_multireal_set) run on a runtime of the child's own. Equal to
/// -ESHUTDOWN on Linux.
pub const CW_ESHUTDOWN: c_int = 0 - 108;
/// Missed-period policy (the default, and the paper's rule): a periodic timer reaped so late
/// that further periods came due is queued again at once, once per missed period.
pub const CW_MISSED_BURST: c_int = 0;
/// Missed-period policy: the next period starts at the reap; missed periods are dropped and
/// counted (cw_timer_overruns).
pub const CW_MISSED_DELAY: c_int = 1;
/// Missed-period policy: missed periods are dropped and counted (cw_timer_overruns); the timer
/// stays on its grid (the next deadline is the first multiple of the interval, counted from its
/// first deadline, after the reap).
pub const CW_MISSED_SKIP: c_int = 2;

/// The quota cw_timerset_new gives for a quota of 0 (4096 timers).
pub const CW_TIMERSET_DEFAULT_QUOTA: usize = 4096;
/// The largest quota a set accepts (2^20 timers).
pub const CW_TIMERSET_MAX_QUOTA: usize = 1_048_576;

// The header's values are literals (cbindgen copies them); they must be the runtime's.
const _: () = {
    assert!(CW_TIMERSET_DEFAULT_QUOTA == DEFAULT_QUOTA);
    assert!(CW_TIMERSET_MAX_QUOTA == MAX_QUOTA);
};

/// A timer's value: the time until it expires and its interval, in nanoseconds (the
/// nanosecond counterpart of `struct itimerval`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct cw_timer_value {
    /// Nanoseconds until the timer expires; 0 while it waits on the expired queue.
    pub value_ns: u64,
    /// The period of a periodic timer in nanoseconds; 0 for a one-shot timer.
    pub interval_ns: u64,
}

impl From<TimerValue> for cw_timer_value {
    fn from(v: TimerValue) -> cw_timer_value {
        cw_timer_value {
            value_ns: nanos(v.remaining),
            interval_ns: nanos(v.interval),
        }
    }
}

// A set's durations fit 64-bit nanoseconds (they come from them); saturate all the same.
use callwheel_rt::saturating_ns as nanos;

/// A set of labelled timers with an expired queue. Opaque: made by cw_timerset_new, destroyed
/// by cw_timerset_free; the process-wide set of cw_multireal_set lives as long as the process.
#[derive(Debug)]
pub struct cw_timerset {
    set: TimerSet,
    /// The process-wide `ITIMER_MULTIREAL` set, which cw_timerset_free refuses.
    process_wide: bool,
}

// Several C threads share one set.
const _: fn() = || {
    fn shareable<T: Send + Sync>() {}
    shareable::<cw_timerset>();
};

/// For Rust code (tests, fuzzing, embedders with their own [`Runtime`]).
impl cw_timerset {
    /// Hands `set` (on any runtime, a manual clock's included) to the C API: the pointer works
    /// with every `cw_timer*` function and is released by [`cw_timerset_free`]. The set's
    /// runtime must outlive its use (a set whose runtime is gone still answers, but its timers
    /// expire only when a call catches up with the clock).
    pub fn into_raw(set: TimerSet) -> *mut cw_timerset {
        Box::into_raw(Box::new(cw_timerset {
            set,
            process_wide: false,
        }))
    }

    /// Makes `set` the process-wide `ITIMER_MULTIREAL` set (see `cw_multireal_set`): never
    /// freed, refused by [`cw_timerset_free`].
    pub(crate) fn leak_process_wide(set: TimerSet) -> &'static cw_timerset {
        Box::leak(Box::new(cw_timerset {
            set,
            process_wide: true,
        }))
    }

    /// The Rust set behind the pointer.
    pub fn timer_set(&self) -> &TimerSet {
        &self.set
    }
}

/// The process-wide runtime every cw_timerset_new set runs on (a forked child's own, started
/// there: the parent's copy has no thread in the child).
static RUNTIME: PerFork<Runtime> = PerFork::new();

/// The process-wide runtime on `CLOCK_MONOTONIC`, started by the first caller (only one
/// starts). A failed start (no thread could be spawned) is reported and retried by the next
/// caller.
pub(crate) fn runtime() -> Result<&'static Runtime, RtError> {
    RUNTIME
        .get_or_try_make(|| {
            with_signals_blocked(|| Runtime::builder().shards(1).workers(1).build())
        })
        .map(|(rt, _)| rt)
}

/// Runs `f` with every signal blocked in the calling thread, restoring its mask afterwards
/// (a panic included). The runtime's threads, started by `f`, inherit the full mask, so a
/// signal sent to the process (cw_timerset_set_signal's, or any other) is never delivered to
/// them: it goes to a thread of the program, or stays pending for a program that blocked it
/// to wait for it (sigwait, sigtimedwait, signalfd) — instead of running the program's
/// handler, or the default action (the end of the process), on a library thread.
fn with_signals_blocked<R>(f: impl FnOnce() -> R) -> R {
    /// Restores the mask it holds when dropped.
    struct Restore(Option<libc::sigset_t>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(old) = &self.0 {
                // SAFETY: `old` is a mask pthread_sigmask filled in; NULL asks for no old mask.
                unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, old, ptr::null_mut()) };
            }
        }
    }
    // Miri does not model signal masks (and runs no runtime threads that could get signals).
    let _restore = if cfg!(miri) {
        Restore(None)
    } else {
        // SAFETY: sigset_t is plain data, filled in by sigfillset and pthread_sigmask before
        // it is read; the pointers are to these locals.
        unsafe {
            let mut all: libc::sigset_t = core::mem::zeroed();
            let mut old: libc::sigset_t = core::mem::zeroed();
            libc::sigfillset(&mut all);
            let ok = libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old) == 0;
            Restore(ok.then_some(old))
        }
    };
    f()
}

/// The C code of a timer-set error (see [`CW_ENOSPC`]).
pub(crate) fn set_code(e: RtError) -> c_int {
    match e {
        RtError::QuotaExceeded { .. } | RtError::HandlesExhausted => CW_ENOSPC,
        RtError::Io(e) => e.raw_os_error().map_or(CW_ENOMEM, |n| -n),
        RtError::Wheel(_) => CW_ENOMEM,
        RtError::OnDriver => crate::CW_EDEADLK,
        RtError::ShutDown => CW_ESHUTDOWN,
        // InvalidHandle, ZeroValue, ValueOutOfRange, IntervalOutOfRange, Config, and anything
        // added later: the arguments were not accepted.
        _ => CW_EINVAL,
    }
}

/// The missed-period policy named by `policy`, or CW_EINVAL.
pub(crate) fn missed(policy: c_int) -> Result<Missed, c_int> {
    match policy {
        CW_MISSED_BURST => Ok(Missed::Burst),
        CW_MISSED_DELAY => Ok(Missed::Delay),
        CW_MISSED_SKIP => Ok(Missed::Skip),
        _ => Err(CW_EINVAL),
    }
}

/// The set behind `set`, or CW_EINVAL for NULL.
///
/// # Safety
///
/// `set` is NULL or points to a live set (from cw_timerset_new or cw_multireal_set, not freed
/// during `'a`).
pub(crate) unsafe fn set_ref<'a>(set: *const cw_timerset) -> Result<&'a cw_timerset, c_int> {
    // SAFETY: by this function's contract a non-NULL `set` points to a live set; the reference
    // is shared, and the set serialises every change behind its own lock.
    unsafe { set.as_ref() }.ok_or(CW_EINVAL)
}

/// Writes `v` through `out` unless it is NULL (an optional out-pointer).
///
/// # Safety
///
/// `out` is NULL or valid for writing a `T`.
unsafe fn write_opt<T>(out: *mut T, v: T) {
    if !out.is_null() {
        // SAFETY: non-NULL, and valid for writes by this function's contract.
        unsafe { out.write(v) };
    }
}

/// Creates a timer set on the process-wide monotonic runtime (started by the first set).
///
/// - `quota`: the most timers the set holds, running plus queued (0 means
///   CW_TIMERSET_DEFAULT_QUOTA; at most CW_TIMERSET_MAX_QUOTA). Memory grows with the timers
///   actually held, up to the quota, however long the owner goes without reaping.
/// - `missed`: the missed-period policy new timers start with (CW_MISSED_BURST, CW_MISSED_DELAY
///   or CW_MISSED_SKIP; see cw_timer_set_missed).
/// - `out`: receives the set, or NULL on failure.
///
/// Returns 0; CW_EINVAL (NULL `out`, quota above the maximum, unknown policy); a negated errno
/// when the set's eventfd or the runtime's threads cannot be created (e.g. -EMFILE).
///
/// # Safety
///
/// `out` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn cw_timerset_new(
    quota: usize,
    missed_policy: c_int,
    out: *mut *mut cw_timerset,
) -> c_int {
    guard(|| {
        need(out)?;
        // SAFETY: `out` is non-NULL and valid for writes, by this function's contract.
        unsafe { out.write(ptr::null_mut()) };
        let quota = if quota == 0 { DEFAULT_QUOTA } else { quota };
        if quota > MAX_QUOTA {
            return Err(CW_EINVAL);
        }
        let config = TimerSetConfig::default()
            .with_quota(quota)
            .with_missed(missed(missed_policy)?);
        let rt = runtime().map_err(set_code)?;
        let set = TimerSet::with_config(rt, config).map_err(set_code)?;
        // SAFETY: as above.
        unsafe { out.write(cw_timerset::into_raw(set)) };
        Ok(CW_OK)
    })
}

/// Destroys a set and every timer in it, running or queued (no callback or signal of the set
/// starts after this returns; one already running on the driver thread is waited for), and
/// closes its descriptor. NULL is ignored.
///
/// Returns 0; CW_EINVAL for the process-wide set of cw_multireal_set, which lives as long as
/// the process (nothing happens).
///
/// # Safety
///
/// `set` is NULL or a set from cw_timerset_new (or cw_multireal_set), not yet freed, on which
/// no other call is in progress (on any thread, the set's callback included); it must not be
/// used afterwards.
#[no_mangle]
pub unsafe extern "C" fn cw_timerset_free(set: *mut cw_timerset) -> c_int {
    guard(|| {
        if set.is_null() {
            return Ok(CW_OK);
        }
        // SAFETY: non-NULL and live, by this function's contract.
        if unsafe { &*set }.process_wide {
            return Err(CW_EINVAL);
        }
        // SAFETY: a set that is not the process-wide one came from `Box::into_raw` in
        // `cw_timerset::into_raw`, is freed only here, and nothing else is using it.
        drop(unsafe { Box::from_raw(set) });
        Ok(CW_OK)
    })
}

/// Creates a timer that expires `value_ns` nanoseconds from now and carries `label` (any
/// 64-bit value of the caller's choosing); a non-zero `interval_ns` makes it periodic (once
/// reaped, it runs again `interval_ns` after the expiry it was reaped for). The new timer's
/// handle is stored in `*handle`: never 0 and never UINT64_MAX, never issued twice in the life
/// of the process, and accepted by this set only.
///
/// Returns 0; CW_ENOSPC when the set holds its quota (queued timers count); CW_EINVAL for a
/// NULL argument, a `value_ns` of 0, or a deadline or first period beyond the clock's 64-bit
/// nanoseconds. On failure nothing is created and `*handle` is untouched.
///
/// # Safety
///
/// `set` is NULL or a live set; `handle` is NULL or valid for writing a uint64_t.
#[no_mangle]
pub unsafe extern "C" fn cw_timer_create(
    set: *mut cw_timerset,
    value_ns: u64,
    interval_ns: u64,
    label: u64,
    handle: *mut u64,
) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_ref(set) }?;
        need(handle)?;
        let h = s
            .set
            .create(
                Duration::from_nanos(value_ns),
                Duration::from_nanos(interval_ns),
                label,
            )
            .map_err(set_code)?;
        // SAFETY: `handle` is non-NULL and valid for writes, by this function's contract.
        unsafe { handle.write(h.to_bits()) };
        Ok(CW_OK)
    })
}

/// Gives the timer `handle` a new value, interval and label (the label may differ from its
/// current one). A timer waiting on the expired queue leaves the queue first. The timer keeps
/// its handle. Its former value (0 ns remaining if it was queued) is stored in `*old` unless
/// `old` is NULL.
///
/// Returns 0; CW_EINVAL for a NULL set, a handle that names none of this set's timers
/// (another set's, a destroyed timer's, a made-up number), a `value_ns` of 0 (cancel with
/// cw_timer_cancel) or a value out of range. On failure nothing changes.
///
/// # Safety
///
/// `set` is NULL or a live set; `old` is NULL or valid for writing a cw_timer_value.
#[no_mangle]
pub unsafe extern "C" fn cw_timer_reset(
    set: *mut cw_timerset,
    handle: u64,
    value_ns: u64,
    interval_ns: u64,
    label: u64,
    old: *mut cw_timer_value,
) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_ref(set) }?;
        let former = s
            .set
            .reset(
                TimerHandle::from_bits(handle),
                Duration::from_nanos(value_ns),
                Duration::from_nanos(interval_ns),
                label,
            )
            .map_err(set_code)?;
        // SAFETY: `old` is NULL or valid for writes, by this function's contract.
        unsafe { write_opt(old, former.into()) };
        Ok(CW_OK)
    })
}

/// Destroys the timer `handle`, running or waiting on the expired queue (a queued timer still
/// exists until it is reaped or cancelled). Its final value (0 ns remaining if it was queued)
/// is stored in `*final_value` unless it is NULL. The handle is never valid again.
///
/// Returns 0; CW_EINVAL for a NULL set or a handle that names none of this set's timers
/// (nothing changes).
///
/// # Safety
///
/// `set` is NULL or a live set; `final_value` is NULL or valid for writing a cw_timer_value.
#[no_mangle]
pub unsafe extern "C" fn cw_timer_cancel(
    set: *mut cw_timerset,
    handle: u64,
    final_value: *mut cw_timer_value,
) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_ref(set) }?;
        let last = s
            .set
            .cancel(TimerHandle::from_bits(handle))
            .map_err(set_code)?;
        // SAFETY: `final_value` is NULL or valid for writes, by this function's contract.
        unsafe { write_opt(final_value, last.into()) };
        Ok(CW_OK)
    })
}

/// Stores the current value of the timer `handle` in `*value`: the nanoseconds until it
/// expires (0 while it waits on the expired queue) and its interval.
///
/// Returns 0; CW_EINVAL for a NULL argument or a handle that names none of this set's timers
/// (`*value` is untouched).
///
/// # Safety
///
/// `set` is NULL or a live set; `value` is NULL or valid for writing a cw_timer_value.
#[no_mangle]
pub unsafe extern "C" fn cw_timer_get(
    set: *const cw_timerset,
    handle: u64,
    value: *mut cw_timer_value,
) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_ref(set) }?;
        need(value)?;
        let v = s
            .set
            .get(TimerHandle::from_bits(handle))
            .map_err(set_code)?;
        // SAFETY: `value` is non-NULL and valid for writes, by this function's contract.
        unsafe { value.write(v.into()) };
        Ok(CW_OK)
    })
}

/// Pops the head of the expired queue (timers are queued in expiry order): stores its handle
/// in `*handle` and its label in `*label` (unless `label` is NULL). A one-shot timer is
/// destroyed; a periodic one runs again from the deadline it expired for, not from the reap
/// (see cw_timer_set_missed for reaps that come after further periods).
///
/// Returns 1 when a timer was reaped; 0 when the queue is empty (the paper's EAGAIN; nothing
/// is written); CW_EINVAL for a NULL set or `handle`.
///
/// # Safety
///
/// `set` is NULL or a live set; `handle` is NULL or valid for writing a uint64_t; `label` is
/// NULL or valid for writing a uint64_t.
#[no_mangle]
pub unsafe extern "C" fn cw_timer_reap(
    set: *mut cw_timerset,
    handle: *mut u64,
    label: *mut u64,
) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_ref(set) }?;
        need(handle)?;
        let Some((h, l)) = s.set.reap() else {
            return Ok(0);
        };
        // SAFETY: `handle` is non-NULL, and both pointers are valid for writes (or `label` is
        // NULL), by this function's contract.
        unsafe {
            handle.write(h.to_bits());
            write_opt(label, l);
        }
        Ok(1)
    })
}

/// Sets the missed-period policy of the timer `handle` (CW_MISSED_BURST, CW_MISSED_DELAY or
/// CW_MISSED_SKIP), used from its next reap on. When a periodic timer is reaped after `k >= 1`
/// further periods came due: BURST queues it again at once, once per missed period; DELAY
/// restarts the period from the reap; SKIP keeps the timer on its grid. DELAY and SKIP count
/// the `k` dropped periods (cw_timer_overruns).
///
/// Returns 0; CW_EINVAL for a NULL set, an unknown policy or a bad handle (nothing changes).
///
/// # Safety
///
/// `set` is NULL or a live set.
#[no_mangle]
pub unsafe extern "C" fn cw_timer_set_missed(
    set: *mut cw_timerset,
    handle: u64,
    policy: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_ref(set) }?;
        let policy = missed(policy)?;
        s.set
            .set_missed(TimerHandle::from_bits(handle), policy)
            .map_err(set_code)?;
        Ok(CW_OK)
    })
}

/// Stores in `*overruns` the number of further periods that had come due when the timer
/// `handle` was last reaped (0 before its first reap, after a reset, and for one-shot timers).
///
/// Returns 0; CW_EINVAL for a NULL argument or a bad handle.
///
/// # Safety
///
/// `set` is NULL or a live set; `overruns` is NULL or valid for writing a uint64_t.
#[no_mangle]
pub unsafe extern "C" fn cw_timer_overruns(
    set: *const cw_timerset,
    handle: u64,
    overruns: *mut u64,
) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_ref(set) }?;
        need(overruns)?;
        let n = s
            .set
            .overruns(TimerHandle::from_bits(handle))
            .map_err(set_code)?;
        // SAFETY: `overruns` is non-NULL and valid for writes, by this function's contract.
        unsafe { overruns.write(n) };
        Ok(CW_OK)
    })
}

/// Brings the expired queue up to date with the clock and stores the number of running timers
/// in `*running` and of queued timers in `*queued` (either may be NULL).
///
/// Returns 0; CW_EINVAL for a NULL set.
///
/// # Safety
///
/// `set` is NULL or a live set; `running` and `queued` are NULL or valid for writing a size_t.
#[no_mangle]
pub unsafe extern "C" fn cw_timerset_counts(
    set: *const cw_timerset,
    running: *mut usize,
    queued: *mut usize,
) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_ref(set) }?;
        let stats = s.set.stats();
        // SAFETY: both pointers are NULL or valid for writes, by this function's contract.
        unsafe {
            write_opt(running, stats.running);
            write_opt(queued, stats.queued);
        }
        Ok(CW_OK)
    })
}
