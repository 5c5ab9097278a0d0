//! The clean timer-set entry points (`cw_timerset_*`, `cw_timer_*`), called as C would.
//!
//! Argument checks run everywhere, Miri included. Tests with a set run on a manual clock
//! (time moves only when a test moves it, and every call catches up with it), so they are
//! exact; but a set needs a runtime, whose driver threads call prctl(PR_SET_TIMERSLACK), which
//! Miri does not support, so those tests are not for Miri.

use super::*;
use core::ptr::{null, null_mut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use callwheel_rt::{ManualClock, Runtime, TimerSet, TimerSetConfig};

pub(crate) const MS: u64 = 1_000_000;

/// A manual clock and a one-shard runtime on it (the itimer tests use it too).
pub(crate) fn manual() -> (ManualClock, Runtime) {
    let clock = ManualClock::new(1_000 * MS);
    let rt = Runtime::builder()
        .clock(clock.clone())
        .shards(1)
        .workers(1)
        .build()
        .unwrap();
    (clock, rt)
}

/// A set handed to the C API, freed when dropped. Its methods are the extern functions.
struct S(*mut cw_timerset);

// SAFETY (for every method below): `self.0` came from `cw_timerset::into_raw` and is freed
// only by `Drop`, so it is live; out-pointers are references to locals.
impl S {
    fn on(rt: &Runtime, quota: usize) -> S {
        let config = TimerSetConfig::default().with_quota(quota);
        S(cw_timerset::into_raw(
            TimerSet::with_config(rt, config).unwrap(),
        ))
    }

    fn create(&self, value: u64, interval: u64, label: u64) -> Result<u64, c_int> {
        let mut h = 0;
        // SAFETY: see the impl.
        match unsafe { cw_timer_create(self.0, value, interval, label, &mut h) } {
            CW_OK => Ok(h),
            e => Err(e),
        }
    }

    fn reset(
        &self,
        h: u64,
        value: u64,
        interval: u64,
        label: u64,
    ) -> Result<cw_timer_value, c_int> {
        let mut old = cw_timer_value::default();
        // SAFETY: see the impl.
        match unsafe { cw_timer_reset(self.0, h, value, interval, label, &mut old) } {
            CW_OK => Ok(old),
            e => Err(e),
        }
    }

    fn cancel(&self, h: u64) -> Result<cw_timer_value, c_int> {
        let mut last = cw_timer_value::default();
        // SAFETY: see the impl.
        match unsafe { cw_timer_cancel(self.0, h, &mut last) } {
            CW_OK => Ok(last),
            e => Err(e),
        }
    }

    fn get(&self, h: u64) -> Result<cw_timer_value, c_int> {
        let mut v = cw_timer_value::default();
        // SAFETY: see the impl.
        match unsafe { cw_timer_get(self.0, h, &mut v) } {
            CW_OK => Ok(v),
            e => Err(e),
        }
    }

    fn reap(&self) -> Option<(u64, u64)> {
        let (mut h, mut l) = (0, 0);
        // SAFETY: see the impl.
        match unsafe { cw_timer_reap(self.0, &mut h, &mut l) } {
            1 => Some((h, l)),
            0 => None,
            e => panic!("reap failed: {e}"),
        }
    }

    fn counts(&self) -> (usize, usize) {
        let (mut running, mut queued) = (0, 0);
        // SAFETY: see the impl.
        let rc = unsafe { cw_timerset_counts(self.0, &mut running, &mut queued) };
        assert_eq!(rc, CW_OK);
        (running, queued)
    }

    fn overruns(&self, h: u64) -> Result<u64, c_int> {
        let mut n = 0;
        // SAFETY: see the impl.
        match unsafe { cw_timer_overruns(self.0, h, &mut n) } {
            CW_OK => Ok(n),
            e => Err(e),
        }
    }

    fn wait(&self, timeout_ns: i64) -> c_int {
        // SAFETY: see the impl.
        unsafe { cw_timerset_wait(self.0, timeout_ns) }
    }

    fn check(&self) {
        // SAFETY: see the impl.
        unsafe { &*self.0 }.timer_set().check_invariants().unwrap();
    }
}

impl Drop for S {
    fn drop(&mut self) {
        // SAFETY: see the impl; nothing uses the set after this.
        assert_eq!(unsafe { cw_timerset_free(self.0) }, CW_OK);
    }
}

fn value(value_ns: u64, interval_ns: u64) -> cw_timer_value {
    cw_timer_value {
        value_ns,
        interval_ns,
    }
}

#[test]
fn null_sets_and_null_out_pointers_are_einval() {
    let mut v = cw_timer_value::default();
    let (mut h, mut n) = (0u64, 0usize);
    // SAFETY: every pointer is NULL or a local.
    unsafe {
        assert_eq!(cw_timer_create(null_mut(), MS, 0, 1, &mut h), CW_EINVAL);
        assert_eq!(cw_timer_reset(null_mut(), 1, MS, 0, 1, &mut v), CW_EINVAL);
        assert_eq!(cw_timer_cancel(null_mut(), 1, &mut v), CW_EINVAL);
        assert_eq!(cw_timer_get(null(), 1, &mut v), CW_EINVAL);
        assert_eq!(cw_timer_reap(null_mut(), &mut h, null_mut()), CW_EINVAL);
        assert_eq!(
            cw_timer_set_missed(null_mut(), 1, CW_MISSED_SKIP),
            CW_EINVAL
        );
        assert_eq!(cw_timer_overruns(null(), 1, &mut h), CW_EINVAL);
        assert_eq!(cw_timerset_counts(null(), &mut n, &mut n), CW_EINVAL);
        assert_eq!(cw_timerset_fd(null()), CW_EINVAL);
        assert_eq!(cw_timerset_wait(null(), 0), CW_EINVAL);
        assert_eq!(
            cw_timerset_set_callback(null_mut(), None, null_mut()),
            CW_EINVAL
        );
        assert_eq!(cw_timerset_set_signal(null_mut(), 0), CW_EINVAL);
        assert_eq!(cw_timerset_free(null_mut()), CW_OK);
    }
    assert_eq!(h, 0, "nothing was written");
}

#[test]
fn timerset_new_checks_its_arguments_before_making_anything() {
    let mut out = core::ptr::NonNull::<cw_timerset>::dangling().as_ptr();
    // SAFETY: `out` is a local; NULL is checked.
    unsafe {
        assert_eq!(cw_timerset_new(0, CW_MISSED_BURST, null_mut()), CW_EINVAL);
        assert_eq!(
            cw_timerset_new(CW_TIMERSET_MAX_QUOTA + 1, CW_MISSED_BURST, &mut out),
            CW_EINVAL
        );
        assert!(out.is_null(), "a failed call stores NULL");
        assert_eq!(cw_timerset_new(16, 3, &mut out), CW_EINVAL);
        assert_eq!(cw_timerset_new(16, -1, &mut out), CW_EINVAL);
        assert!(out.is_null());
    }
}

#[test]
fn strerror_describes_the_new_codes() {
    let text = |code| {
        // SAFETY: cw_strerror returns a static NUL-terminated string.
        unsafe { core::ffi::CStr::from_ptr(cw_strerror(code)) }
            .to_str()
            .unwrap()
    };
    assert!(text(CW_ENOSPC).contains("quota"));
    assert!(text(-libc::EMFILE).contains("errno"));
    assert!(text(-5000).contains("unknown"));
}

#[test]
fn create_get_reset_cancel_round_trip_in_nanoseconds() {
    let (clock, rt) = manual();
    let s = S::on(&rt, 16);
    let h = s.create(30 * MS, 10 * MS, 0xfeed).unwrap();
    assert!(h != 0 && h != u64::MAX);
    clock.advance(12 * MS);
    assert_eq!(s.get(h), Ok(value(18 * MS, 10 * MS)));
    assert_eq!(s.reset(h, 50 * MS, 0, 7), Ok(value(18 * MS, 10 * MS)));
    assert_eq!(s.get(h), Ok(value(50 * MS, 0)));
    clock.advance(MS);
    assert_eq!(s.cancel(h), Ok(value(49 * MS, 0)));
    assert_eq!(s.get(h), Err(CW_EINVAL), "a cancelled timer is gone");
    assert_eq!(s.cancel(h), Err(CW_EINVAL));
    assert_eq!(s.counts(), (0, 0));
    s.check();
}

#[test]
fn optional_out_pointers_may_be_null_and_required_ones_may_not() {
    let (_clock, rt) = manual();
    let s = S::on(&rt, 16);
    let h = s.create(MS, 0, 1).unwrap();
    let mut v = cw_timer_value::default();
    // SAFETY: the set is live; pointers are NULL or locals.
    unsafe {
        assert_eq!(cw_timer_create(s.0, MS, 0, 1, null_mut()), CW_EINVAL);
        assert_eq!(cw_timer_get(s.0, h, null_mut()), CW_EINVAL);
        assert_eq!(cw_timer_overruns(s.0, h, null_mut()), CW_EINVAL);
        assert_eq!(cw_timer_reap(s.0, null_mut(), null_mut()), CW_EINVAL);
        assert_eq!(cw_timer_reset(s.0, h, 2 * MS, 0, 2, null_mut()), CW_OK);
        assert_eq!(cw_timerset_counts(s.0, null_mut(), null_mut()), CW_OK);
        assert_eq!(cw_timer_cancel(s.0, h, null_mut()), CW_OK);
        assert_eq!(cw_timer_get(s.0, h, &mut v), CW_EINVAL);
    }
    assert_eq!(s.counts(), (0, 0), "the NULL create made nothing");
}

#[test]
fn zero_and_out_of_range_values_are_einval() {
    let (_clock, rt) = manual();
    let s = S::on(&rt, 16);
    assert_eq!(s.create(0, MS, 1), Err(CW_EINVAL), "zero means cancel");
    assert_eq!(s.create(u64::MAX, 0, 1), Err(CW_EINVAL));
    assert_eq!(s.create(MS, u64::MAX, 1), Err(CW_EINVAL));
    let h = s.create(MS, 0, 1).unwrap();
    assert_eq!(s.reset(h, 0, 0, 2), Err(CW_EINVAL));
    assert_eq!(
        s.get(h),
        Ok(value(MS, 0)),
        "the failed reset changed nothing"
    );
    assert_eq!(s.counts(), (1, 0));
}

#[test]
fn reap_returns_one_per_expiry_in_order_then_zero() {
    let (clock, rt) = manual();
    let s = S::on(&rt, 16);
    assert_eq!(s.reap(), None);
    let a = s.create(20 * MS, 0, 100).unwrap();
    let b = s.create(10 * MS, 0, 200).unwrap();
    clock.advance(25 * MS);
    assert_eq!(s.counts(), (0, 2));
    assert_eq!(s.get(a), Ok(value(0, 0)), "a queued timer still exists");
    assert_eq!(s.reap(), Some((b, 200)));
    assert_eq!(s.reap(), Some((a, 100)));
    assert_eq!(s.reap(), None);
    assert_eq!(
        s.get(a),
        Err(CW_EINVAL),
        "a reaped one-shot timer is destroyed"
    );
    // The label out-pointer is optional.
    let c = s.create(MS, 0, 300).unwrap();
    clock.advance(MS);
    let mut h = 0;
    // SAFETY: the set is live; `h` is a local.
    assert_eq!(unsafe { cw_timer_reap(s.0, &mut h, null_mut()) }, 1);
    assert_eq!(h, c);
    s.check();
}

#[test]
fn a_reaped_periodic_timer_runs_again_from_its_last_expiry() {
    let (clock, rt) = manual();
    let s = S::on(&rt, 16);
    let h = s.create(10 * MS, 10 * MS, 5).unwrap();
    clock.advance(14 * MS); // expired at 10 ms; reaped 4 ms late
    assert_eq!(s.reap(), Some((h, 5)));
    assert_eq!(
        s.get(h),
        Ok(value(6 * MS, 10 * MS)),
        "next at 20 ms, not 24 ms"
    );
    assert_eq!(s.overruns(h), Ok(0));
}

#[test]
fn missed_periods_follow_the_timers_policy() {
    let (clock, rt) = manual();
    let s = S::on(&rt, 16);
    let burst = s.create(10 * MS, 10 * MS, 1).unwrap();
    let skip = s.create(10 * MS, 10 * MS, 2).unwrap();
    // SAFETY: the set is live.
    unsafe {
        assert_eq!(cw_timer_set_missed(s.0, skip, CW_MISSED_SKIP), CW_OK);
        assert_eq!(cw_timer_set_missed(s.0, skip, 7), CW_EINVAL);
        assert_eq!(cw_timer_set_missed(s.0, 12345, CW_MISSED_SKIP), CW_EINVAL);
    }
    clock.advance(35 * MS); // deadlines 10, 20, 30 all passed
    assert_eq!(s.reap(), Some((burst, 1)));
    assert_eq!(s.reap(), Some((skip, 2)));
    assert_eq!(s.overruns(skip), Ok(2));
    assert_eq!(
        s.get(skip),
        Ok(value(5 * MS, 10 * MS)),
        "skip stays on the 10 ms grid"
    );
    // Burst delivers the missed periods one reap each.
    assert_eq!(s.reap(), Some((burst, 1)));
    assert_eq!(s.reap(), Some((burst, 1)));
    assert_eq!(s.reap(), None);
    assert_eq!(s.get(burst), Ok(value(5 * MS, 10 * MS)));
}

#[test]
fn bad_handles_are_einval_and_touch_nothing() {
    let (clock, rt) = manual();
    let s = S::on(&rt, 16);
    let other = S::on(&rt, 16);
    let mine = s.create(10 * MS, 0, 1).unwrap();
    let queued = s.create(MS, 0, 2).unwrap();
    let foreign = other.create(10 * MS, 0, 3).unwrap();
    let gone = s.create(5 * MS, 0, 4).unwrap();
    s.cancel(gone).unwrap();
    clock.advance(2 * MS);
    let before = (s.counts(), s.get(mine), s.get(queued));
    for bad in [
        0,
        u64::MAX,
        foreign,
        gone,
        0x1234_5678,
        mine ^ (1 << 39),
        mine ^ (1 << 40),
        queued + 16,
    ] {
        assert_eq!(s.get(bad), Err(CW_EINVAL), "{bad:#x}");
        assert_eq!(s.reset(bad, MS, 0, 9), Err(CW_EINVAL), "{bad:#x}");
        assert_eq!(s.cancel(bad), Err(CW_EINVAL), "{bad:#x}");
        assert_eq!(s.overruns(bad), Err(CW_EINVAL), "{bad:#x}");
        // SAFETY: the set is live.
        let rc = unsafe { cw_timer_set_missed(s.0, bad, CW_MISSED_DELAY) };
        assert_eq!(rc, CW_EINVAL);
    }
    assert_eq!((s.counts(), s.get(mine), s.get(queued)), before);
    assert_eq!(other.get(foreign), Ok(value(8 * MS, 0)));
    assert_eq!(s.reap(), Some((queued, 2)));
    s.check();
    other.check();
}

#[test]
fn isolation_two_sets_never_see_each_others_timers() {
    let (clock, rt) = manual();
    let a = S::on(&rt, 16);
    let b = S::on(&rt, 16);
    let ha = a.create(5 * MS, 0, 1).unwrap();
    let hb = b.create(5 * MS, 5 * MS, 1).unwrap();
    assert_ne!(ha, hb);
    clock.advance(6 * MS);
    assert_eq!(a.cancel(hb), Err(CW_EINVAL));
    assert_eq!(b.reset(ha, MS, 0, 2), Err(CW_EINVAL));
    assert_eq!(a.reap(), Some((ha, 1)));
    assert_eq!(a.reap(), None);
    assert_eq!(b.reap(), Some((hb, 1)));
    drop(a);
    assert_eq!(
        b.get(hb),
        Ok(value(4 * MS, 5 * MS)),
        "freeing a leaves b alone"
    );
}

#[test]
fn the_quota_is_enospc_and_queued_timers_count() {
    let (clock, rt) = manual();
    let s = S::on(&rt, 2);
    let a = s.create(MS, 0, 1).unwrap();
    s.create(10 * MS, 0, 2).unwrap();
    assert_eq!(s.create(MS, 0, 3), Err(CW_ENOSPC));
    clock.advance(2 * MS);
    assert_eq!(s.counts(), (1, 1));
    assert_eq!(
        s.create(MS, 0, 3),
        Err(CW_ENOSPC),
        "a queued timer still counts"
    );
    assert_eq!(s.reap(), Some((a, 1)));
    assert!(s.create(MS, 0, 3).is_ok(), "reaping made room");
}

#[test]
fn wait_with_a_zero_timeout_only_looks() {
    let (clock, rt) = manual();
    let s = S::on(&rt, 4);
    assert_eq!(s.wait(0), 0);
    s.create(MS, 0, 1).unwrap();
    assert_eq!(s.wait(0), 0);
    clock.advance(MS);
    assert_eq!(s.wait(0), 1);
    assert_eq!(
        s.wait(-1),
        1,
        "no limit, but the queue is already non-empty"
    );
}

/// Counts its calls: `arg` points to an AtomicUsize.
unsafe extern "C" fn bump(arg: *mut c_void) {
    // SAFETY: the tests pass a pointer to an AtomicUsize that outlives the set.
    unsafe { &*arg.cast::<AtomicUsize>() }.fetch_add(1, Ordering::SeqCst);
}

static BUMP: unsafe extern "C" fn(*mut c_void) = bump;

#[test]
fn the_callback_runs_when_the_queue_becomes_non_empty() {
    let (clock, rt) = manual();
    let calls = Arc::new(AtomicUsize::new(0));
    let s = S::on(&rt, 4);
    let arg = Arc::as_ptr(&calls).cast_mut().cast::<c_void>();
    // SAFETY: the set is live; `calls` outlives it (declared before `s`, so dropped after).
    let rc = unsafe { cw_timerset_set_callback(s.0, Some(BUMP), arg) };
    assert_eq!(rc, CW_OK);
    s.create(MS, 0, 1).unwrap();
    s.create(2 * MS, 0, 2).unwrap();
    clock.advance(3 * MS);
    s.counts(); // catches up with the clock (if the driver has not yet)
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "once per empty -> non-empty"
    );
    while s.reap().is_some() {}
    s.create(MS, 0, 3).unwrap();
    // SAFETY: the set is live; removing the callback.
    let rc = unsafe { cw_timerset_set_callback(s.0, None, null_mut()) };
    assert_eq!(rc, CW_OK);
    clock.advance(MS);
    s.counts();
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "removed callbacks do not run"
    );
}

#[test]
fn set_signal_checks_the_signal_number() {
    let (_clock, rt) = manual();
    let s = S::on(&rt, 4);
    // SAFETY: the set is live. No timer expires, so no signal is sent.
    unsafe {
        assert_eq!(cw_timerset_set_signal(s.0, -1), CW_EINVAL);
        assert_eq!(cw_timerset_set_signal(s.0, libc::SIGRTMAX() + 1), CW_EINVAL);
        assert_eq!(cw_timerset_set_signal(s.0, libc::SIGUSR2), CW_OK);
        assert_eq!(cw_timerset_set_signal(s.0, 0), CW_OK);
    }
}

#[test]
#[cfg_attr(miri, ignore)] // a runtime (prctl) and poll(2)
fn the_descriptor_is_readable_exactly_while_the_queue_is_non_empty() {
    let (clock, rt) = manual();
    let s = S::on(&rt, 4);
    // SAFETY: the set is live.
    let fd = unsafe { cw_timerset_fd(s.0) };
    assert!(fd >= 0);
    let readable = || {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, 0) };
        n == 1 && p.revents & libc::POLLIN != 0
    };
    assert!(!readable());
    let h = s.create(MS, 0, 1).unwrap();
    clock.advance(MS);
    s.counts();
    assert!(readable());
    assert_eq!(s.reap(), Some((h, 1)));
    assert!(!readable());
}

#[test]
#[cfg_attr(miri, ignore)] // the process-wide runtime's threads sleep on the real clock
fn sets_on_the_process_wide_runtime_expire_in_real_time() {
    let mut set = null_mut();
    // SAFETY: `set` is a local.
    let rc = unsafe { cw_timerset_new(8, CW_MISSED_BURST, &mut set) };
    assert_eq!(rc, CW_OK);
    let s = S(set);
    let h = s.create(2 * MS, 0, 42).unwrap();
    assert_eq!(s.wait(10_000 * MS as i64), 1);
    assert_eq!(s.reap(), Some((h, 42)));
    assert_eq!(s.wait(MS as i64), 0, "nothing else expires");
}

/// Failures seen inside `reenter` (a panic there would abort: it is an extern "C" fn).
static REENTER_FAILURES: AtomicUsize = AtomicUsize::new(0);
/// Timers `reenter` reaped.
static REENTER_REAPED: AtomicUsize = AtomicUsize::new(0);
/// Set when the run of `reenter` that reaped the last timer returns.
static REENTER_DONE: AtomicUsize = AtomicUsize::new(0);

/// A callback that calls back into its own set (reap, create) and makes, uses and frees
/// another set, as cw_timerset_set_callback allows: it runs without the set's lock.
unsafe extern "C" fn reenter(arg: *mut c_void) {
    let set = arg.cast::<cw_timerset>();
    let fail = || REENTER_FAILURES.fetch_add(1, Ordering::SeqCst);
    let (mut h, mut label, mut last) = (0u64, 0u64, false);
    // SAFETY: `arg` is the live set the callback was installed on (the test frees it only
    // after the last expiry); the out-pointers are locals.
    unsafe {
        while cw_timer_reap(set, &mut h, &mut label) == 1 {
            REENTER_REAPED.fetch_add(1, Ordering::SeqCst);
            if label < 20 {
                if cw_timer_create(set, MS / 2, 0, label + 1, &mut h) != CW_OK {
                    fail();
                }
                continue;
            }
            last = true;
            let mut other = null_mut();
            if cw_timerset_new(0, CW_MISSED_BURST, &mut other) != CW_OK
                || cw_timer_create(other, MS, 0, 1, &mut h) != CW_OK
                || cw_timerset_free(other) != CW_OK
            {
                fail();
            }
        }
    }
    if last {
        REENTER_DONE.store(1, Ordering::SeqCst);
    }
}

#[test]
#[cfg_attr(miri, ignore)] // the process-wide runtime's threads sleep on the real clock
fn a_callback_on_the_driver_thread_may_call_its_set_and_others() {
    let mut set = null_mut();
    // SAFETY: `set` is a local, then the live set; `reenter` may run on any thread.
    unsafe {
        assert_eq!(cw_timerset_new(8, CW_MISSED_BURST, &mut set), CW_OK);
        let rc = cw_timerset_set_callback(set, Some(reenter), set.cast());
        assert_eq!(rc, CW_OK);
    }
    let s = S(set);
    s.create(MS, 0, 0).unwrap();
    // 21 expiries of about 0.5-1 ms each, one creating the next from the callback: no
    // deadlock, none lost. (The set is freed only once the last callback has returned.)
    for _ in 0..10_000 {
        if REENTER_DONE.load(Ordering::SeqCst) == 1 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert_eq!(REENTER_REAPED.load(Ordering::SeqCst), 21);
    assert_eq!(REENTER_FAILURES.load(Ordering::SeqCst), 0);
    assert_eq!(s.counts(), (0, 0));
}
