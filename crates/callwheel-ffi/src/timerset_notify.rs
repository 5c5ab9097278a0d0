//! How the owner of a C timer set hears of expired timers: the set's eventfd, a blocking wait,
//! a callback, or a signal (Costello & Varghese's kernel sent SIGALRM). The sets and their
//! timers are in `timerset.rs`.

use core::ffi::{c_int, c_void};
use std::time::Duration;

use callwheel_rt::TimerSet;

use crate::timerset::set_ref;
use crate::{cw_func, cw_timerset, guard, CW_EINVAL, CW_OK};

/// The set's eventfd: readable exactly while the expired queue is non-empty, for poll, select
/// or epoll (level-triggered works without reading it; with EPOLLET, reap until cw_timer_reap
/// returns 0). The set owns the descriptor: do not read, write or close it. It is closed by
/// cw_timerset_free.
///
/// Returns the descriptor (>= 0); CW_EINVAL for a NULL set.
///
/// # Safety
///
/// `set` is NULL or a live set.
#[no_mangle]
pub unsafe extern "C" fn cw_timerset_fd(set: *const cw_timerset) -> c_int {
    guard(|| {
        use std::os::fd::AsRawFd;
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_ref(set) }?;
        Ok(s.timer_set().fd().as_raw_fd())
    })
}

/// Blocks until the expired queue is non-empty or `timeout_ns` nanoseconds (of real time) have
/// passed; a negative `timeout_ns` waits without a limit, 0 only looks. Another thread may reap
/// the timer between the return and the caller's cw_timer_reap.
///
/// Returns 1 if the queue is non-empty, 0 on timeout; CW_EINVAL for a NULL set.
///
/// # Safety
///
/// `set` is NULL or a live set, not freed while the call waits.
#[no_mangle]
pub unsafe extern "C" fn cw_timerset_wait(set: *const cw_timerset, timeout_ns: i64) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_ref(set) }?;
        let timeout = u64::try_from(timeout_ns).ok().map(Duration::from_nanos);
        Ok(c_int::from(s.timer_set().wait(timeout)))
    })
}

/// A C callback and its argument, run as `func(arg)` when a set's queue becomes non-empty.
#[derive(Clone, Copy)]
struct Notify {
    func: unsafe extern "C" fn(*mut c_void),
    arg: *mut c_void,
}

// SAFETY: the set never dereferences `arg`; it only hands it to `func` on the thread that
// found the expiry (the runtime's driver thread, or a thread calling into the set). That this
// is allowed is the contract of cw_timerset_set_callback.
unsafe impl Send for Notify {}
// SAFETY: as for Send: shared copies are only ever passed to `func`.
unsafe impl Sync for Notify {}

impl Notify {
    fn run(self) {
        // SAFETY: the C caller handed us `func` and `arg` to be called as `func(arg)` from any
        // thread that finds an expiry, by cw_timerset_set_callback's contract.
        unsafe { (self.func)(self.arg) }
    }
}

/// Installs `func(arg)`, called each time the set's expired queue goes from empty to
/// non-empty (not once per expiry: reap until cw_timer_reap returns 0). It is called on the
/// thread that finds the expiry — usually the runtime's driver thread, or a thread whose call
/// into the set caught up with the clock — without the set's lock held, so it may call the set
/// (but not cw_timerset_free). Keep it short: it delays the other sets' timers. A NULL `func`
/// removes the callback. Replaces any earlier callback or signal (cw_timerset_set_signal).
///
/// Returns 0; CW_EINVAL for a NULL set.
///
/// # Safety
///
/// `set` is NULL or a live set; `func(arg)` is safe to call from any thread until the callback
/// is replaced or removed and the set freed.
#[no_mangle]
pub unsafe extern "C" fn cw_timerset_set_callback(
    set: *mut cw_timerset,
    func: cw_func,
    arg: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_ref(set) }?;
        match func {
            Some(func) => {
                let notify = Notify { func, arg };
                s.timer_set().set_callback(move || notify.run());
            }
            None => s.timer_set().clear_callback(),
        }
        Ok(CW_OK)
    })
}

/// Sends the signal `signo` to the process (`kill(getpid(), signo)`) each time the set's
/// expired queue goes from empty to non-empty, as the paper's kernel sent SIGALRM; 0 stops
/// the signals. One signal per transition, not per expiry (ordinary signals coalesce anyway):
/// the handler should set a flag, and the main loop reap until cw_timer_reap returns 0 — no
/// function of this library is async-signal-safe. The library's threads block every signal,
/// so the signal goes to a thread of the program, or waits for a program that blocks it to
/// take it (sigwait, sigtimedwait, signalfd). Replaces any callback
/// (cw_timerset_set_callback), and is replaced by one.
///
/// Returns 0; CW_EINVAL for a NULL set or a `signo` outside 0..=SIGRTMAX.
///
/// # Safety
///
/// `set` is NULL or a live set.
#[no_mangle]
pub unsafe extern "C" fn cw_timerset_set_signal(set: *mut cw_timerset, signo: c_int) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_ref(set) }?;
        set_signal(s.timer_set(), signo)?;
        Ok(CW_OK)
    })
}

/// cw_timerset_set_signal on a Rust set.
pub(crate) fn set_signal(set: &TimerSet, signo: c_int) -> Result<(), c_int> {
    if signo == 0 {
        set.clear_callback();
        return Ok(());
    }
    if !(1..=libc::SIGRTMAX()).contains(&signo) {
        return Err(CW_EINVAL);
    }
    set.set_callback(move || {
        // SAFETY: getpid and kill take and return plain integers and touch no memory of ours;
        // the signal number was checked to be one the kernel knows.
        unsafe {
            libc::kill(libc::getpid(), signo);
        }
    });
    Ok(())
}
