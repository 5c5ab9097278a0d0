//! The `setitimer`/`getitimer` compatibility surface: every bullet of Figures 6 and 7 as its
//! own test (`f6_*`, `f7_*`), through `cw_setitimer_on` / `cw_getitimer_on` on sets on a manual
//! clock, then the encoding, the process-wide set and the pass-through to libc.
//!
//! The encoding and argument tests run under Miri; a set needs a runtime, whose threads Miri
//! cannot start (prctl), so the rest does not.

use core::ffi::c_int;
use core::ptr::null_mut;
use std::time::Duration;

use libc::{itimerval, timeval};

use callwheel_rt::{Runtime, TimerSet, TimerSetConfig};

use crate::itimer::{
    bits_to_timeval, duration_to_timeval, timeval_to_bits, timeval_to_duration, tv,
};
use crate::*;

use crate::timerset_tests::{manual, MS};

/// `{sec, usec}`.
fn t(sec: i64, usec: i64) -> timeval {
    tv(sec, usec)
}

fn itv(value: timeval, interval: timeval) -> itimerval {
    itimerval {
        it_interval: interval,
        it_value: value,
    }
}

/// `ms` milliseconds as a timeval.
fn ms(ms: i64) -> timeval {
    t(ms / 1000, ms % 1000 * 1000)
}

const MINUS_ONE: timeval = timeval {
    tv_sec: -1,
    tv_usec: -1,
};
const ZERO: timeval = timeval {
    tv_sec: 0,
    tv_usec: 0,
};

fn eq(a: &timeval, b: &timeval) -> bool {
    a.tv_sec == b.tv_sec && a.tv_usec == b.tv_usec
}

fn same(a: &itimerval, b: &itimerval) -> bool {
    eq(&a.it_value, &b.it_value) && eq(&a.it_interval, &b.it_interval)
}

fn show(v: &itimerval) -> String {
    format!(
        "{{value {{{}, {}}}, interval {{{}, {}}}}}",
        v.it_value.tv_sec, v.it_value.tv_usec, v.it_interval.tv_sec, v.it_interval.tv_usec
    )
}

fn errno() -> c_int {
    std::io::Error::last_os_error().raw_os_error().unwrap()
}

/// A set handed to the C API (freed when dropped), called through the itimer entry points.
struct S(*mut cw_timerset);

impl S {
    fn on(rt: &Runtime, quota: usize) -> S {
        let config = TimerSetConfig::default().with_quota(quota);
        S(cw_timerset::into_raw(
            TimerSet::with_config(rt, config).unwrap(),
        ))
    }

    /// setitimer(ITIMER_MULTIREAL, value, ovalue): Ok, or Err(errno).
    fn set(&self, value: &itimerval, ovalue: &mut itimerval) -> Result<(), c_int> {
        // SAFETY: the set is live until Drop; the structures are locals.
        match unsafe { cw_setitimer_on(self.0, value, ovalue) } {
            0 => Ok(()),
            -1 => Err(errno()),
            rc => panic!("setitimer returned {rc}"),
        }
    }

    /// getitimer(ITIMER_MULTIREAL, value).
    fn get(&self, value: &mut itimerval) -> Result<(), c_int> {
        // SAFETY: as in `set`.
        match unsafe { cw_getitimer_on(self.0, value) } {
            0 => Ok(()),
            -1 => Err(errno()),
            rc => panic!("getitimer returned {rc}"),
        }
    }

    /// Figure 6's create: returns the handle (as the timeval written to ovalue->it_value).
    fn create(&self, value: timeval, interval: timeval, label: u64) -> Result<timeval, c_int> {
        let mut o = itv(MINUS_ONE, bits_to_timeval(label));
        self.set(&itv(value, interval), &mut o)?;
        assert!(
            eq(&o.it_interval, &bits_to_timeval(label)),
            "the label stays"
        );
        Ok(o.it_value)
    }

    /// Figure 7's reap: (handle, label) as timevals.
    fn reap(&self) -> Result<(timeval, timeval), c_int> {
        let mut v = itv(MINUS_ONE, t(123, 456));
        self.get(&mut v)?;
        Ok((v.it_value, v.it_interval))
    }

    /// Figure 7's read of a timer's value.
    fn value_of(&self, handle: timeval) -> Result<itimerval, c_int> {
        let mut v = itv(handle, t(-7, 7)); // it_interval is ignored
        self.get(&mut v)?;
        Ok(v)
    }

    fn queued(&self) -> usize {
        // SAFETY: the set is live until Drop.
        unsafe { &*self.0 }.timer_set().stats().queued
    }
}

impl Drop for S {
    fn drop(&mut self) {
        // SAFETY: the set is live and nothing uses it after this.
        assert_eq!(unsafe { cw_timerset_free(self.0) }, CW_OK);
    }
}

// ---- Encoding (Miri-safe) ----------------------------------------------------------------

#[test]
fn handles_and_labels_travel_in_tv_sec_with_tv_usec_zero() {
    assert_eq!(
        core::mem::size_of::<libc::time_t>(),
        8,
        "this platform's time_t"
    );
    for bits in [1u64, 7, 1 << 40, (1 << 63) | 5, u64::MAX - 1, 0, u64::MAX] {
        let e = bits_to_timeval(bits);
        assert_eq!(e.tv_sec as u64, bits);
        assert_eq!(e.tv_usec, 0);
        assert_eq!(timeval_to_bits(&e), Some(bits));
    }
    // Handles are never 0 nor u64::MAX, so their encodings are never {0, 0} nor {-1, -1}; and
    // nothing with tv_usec != 0 is an encoding.
    assert_eq!(timeval_to_bits(&MINUS_ONE), None);
    assert_eq!(timeval_to_bits(&t(5, 1)), None);
    assert_eq!(timeval_to_bits(&ZERO), Some(0));
}

#[test]
fn times_must_be_non_negative_with_microseconds_below_a_million() {
    assert_eq!(
        timeval_to_duration(&t(2, 500)),
        Some(Duration::new(2, 500_000))
    );
    assert_eq!(timeval_to_duration(&ZERO), Some(Duration::ZERO));
    assert_eq!(timeval_to_duration(&MINUS_ONE), None);
    assert_eq!(timeval_to_duration(&t(-1, 0)), None);
    assert_eq!(timeval_to_duration(&t(0, -1)), None);
    assert_eq!(timeval_to_duration(&t(0, 1_000_000)), None);
}

#[test]
fn values_read_back_are_rounded_up_to_the_microsecond() {
    let r = |ns| {
        let v = duration_to_timeval(Duration::from_nanos(ns));
        (v.tv_sec, v.tv_usec)
    };
    assert_eq!(r(0), (0, 0));
    assert_eq!(r(1), (0, 1), "a running timer never reads as zero");
    assert_eq!(r(1_000), (0, 1));
    assert_eq!(r(1_001), (0, 2));
    assert_eq!(r(999_999_999), (1, 0));
    assert_eq!(r(u64::MAX), (18_446_744_073, 709_552));
}

#[test]
fn timeval_conversions_from_c_check_their_pointers() {
    let mut out = ZERO;
    let mut bits = 0u64;
    // SAFETY: pointers are NULL or locals.
    unsafe {
        assert_eq!(cw_timeval_from_bits(42, null_mut()), CW_EINVAL);
        assert_eq!(cw_timeval_from_bits(42, &mut out), CW_OK);
        assert!(eq(&out, &t(42, 0)));
        assert_eq!(cw_timeval_to_bits(&out, &mut bits), CW_OK);
        assert_eq!(bits, 42);
        assert_eq!(cw_timeval_to_bits(core::ptr::null(), &mut bits), CW_EINVAL);
        assert_eq!(cw_timeval_to_bits(&out, null_mut()), CW_EINVAL);
        assert_eq!(cw_timeval_to_bits(&t(1, 1), &mut bits), CW_EINVAL);
    }
}

#[test]
fn the_on_variants_refuse_a_null_set_with_einval() {
    let v = itv(ms(5), ZERO);
    let mut o = itv(MINUS_ONE, ZERO);
    // SAFETY: NULL set; the structures are locals.
    unsafe {
        assert_eq!(cw_setitimer_on(null_mut(), &v, &mut o), -1);
        assert_eq!(errno(), libc::EINVAL);
        assert_eq!(cw_getitimer_on(null_mut(), &mut o), -1);
        assert_eq!(errno(), libc::EINVAL);
    }
}

#[test]
fn multireal_is_no_kernel_timer_number() {
    assert!(
        ![libc::ITIMER_REAL, libc::ITIMER_VIRTUAL, libc::ITIMER_PROF]
            .contains(&CW_ITIMER_MULTIREAL)
    );
}

// ---- Figure 6: setitimer ----------------------------------------------------------------

#[test]
fn f6_ovalue_must_not_be_null() {
    let (_clock, rt) = manual();
    let s = S::on(&rt, 8);
    let v = itv(ms(5), ZERO);
    // SAFETY: the set is live; `v` is a local, ovalue NULL.
    assert_eq!(unsafe { cw_setitimer_on(s.0, &v, null_mut()) }, -1);
    assert_eq!(errno(), libc::EINVAL);
    let mut o = itv(MINUS_ONE, ZERO);
    // SAFETY: as above, value NULL.
    let rc = unsafe { cw_setitimer_on(s.0, core::ptr::null(), &mut o) };
    assert_eq!(rc, -1);
    assert_eq!(errno(), libc::EINVAL);
    assert!(same(&o, &itv(MINUS_ONE, ZERO)), "ovalue untouched");
    assert_eq!(s.queued(), 0);
}

#[test]
fn f6_create_when_value_is_non_zero_and_ovalue_is_minus_one() {
    let (clock, rt) = manual();
    let s = S::on(&rt, 8);
    let mut o = itv(MINUS_ONE, bits_to_timeval(0xabcd));
    s.set(&itv(ms(30), ms(10)), &mut o).unwrap();
    let handle = o.it_value;
    assert!(!eq(&handle, &MINUS_ONE) && !eq(&handle, &ZERO));
    assert_eq!(handle.tv_usec, 0);
    assert!(
        eq(&o.it_interval, &bits_to_timeval(0xabcd)),
        "the label stays in it_interval"
    );
    // The timer was initialised with `value`.
    let v = s.value_of(handle).unwrap();
    assert!(same(&v, &itv(ms(30), ms(10))), "{}", show(&v));
    clock.advance(30 * MS);
    assert_eq!(
        s.reap()
            .map(|(h, l)| (timeval_to_bits(&h), timeval_to_bits(&l))),
        Ok((timeval_to_bits(&handle), Some(0xabcd)))
    );
}

#[test]
fn f6_reset_overwrites_value_and_label_and_returns_the_former_value() {
    let (clock, rt) = manual();
    let s = S::on(&rt, 8);
    let h = s.create(ms(30), ms(10), 1).unwrap();
    clock.advance(12 * MS);
    let mut o = itv(h, bits_to_timeval(2)); // the new label differs
    s.set(&itv(ms(5), ZERO), &mut o).unwrap();
    assert!(
        same(&o, &itv(ms(18), ms(10))),
        "ovalue holds the former value: {}",
        show(&o)
    );
    let v = s.value_of(h).unwrap();
    assert!(same(&v, &itv(ms(5), ZERO)), "{}", show(&v));
    clock.advance(5 * MS);
    let (rh, rl) = s.reap().unwrap();
    assert!(eq(&rh, &h), "the timer kept its handle");
    assert!(eq(&rl, &bits_to_timeval(2)), "and has its new label");
}

#[test]
fn f6_reset_removes_a_queued_timer_from_the_expired_queue() {
    let (clock, rt) = manual();
    let s = S::on(&rt, 8);
    let h = s.create(ms(1), ZERO, 1).unwrap();
    clock.advance(2 * MS);
    assert_eq!(s.queued(), 1);
    let mut o = itv(h, bits_to_timeval(3));
    s.set(&itv(ms(50), ZERO), &mut o).unwrap();
    assert!(
        same(&o, &itv(ZERO, ZERO)),
        "a queued timer's former value is zero"
    );
    assert_eq!(s.queued(), 0);
    assert_eq!(s.reap().err(), Some(libc::EAGAIN));
    let v = s.value_of(h).unwrap();
    assert!(same(&v, &itv(ms(50), ZERO)), "{}", show(&v));
}

#[test]
fn f6_reset_of_a_handle_that_is_no_timer_is_einval() {
    let (_clock, rt) = manual();
    let s = S::on(&rt, 8);
    let other = S::on(&rt, 8);
    let h = s.create(ms(30), ZERO, 1).unwrap();
    let foreign = other.create(ms(30), ZERO, 1).unwrap();
    let gone = s.create(ms(30), ZERO, 1).unwrap();
    s.set(&itv(ZERO, ZERO), &mut itv(gone, ZERO)).unwrap();
    for bad in [
        foreign,
        gone,
        t(12345, 0),
        t(h.tv_sec, 1),
        t(h.tv_sec ^ 1 << 39, 0),
    ] {
        let mut o = itv(bad, bits_to_timeval(9));
        let before = o;
        assert_eq!(s.set(&itv(ms(5), ZERO), &mut o), Err(libc::EINVAL));
        assert!(same(&o, &before), "ovalue untouched");
    }
    assert!(same(&s.value_of(h).unwrap(), &itv(ms(30), ZERO)));
    assert!(same(&other.value_of(foreign).unwrap(), &itv(ms(30), ZERO)));
}

#[test]
fn f6_cancel_when_value_is_zero_destroys_the_timer_and_returns_its_final_value() {
    let (clock, rt) = manual();
    let s = S::on(&rt, 8);
    let h = s.create(ms(30), ms(10), 1).unwrap();
    clock.advance(10 * MS);
    // value->it_interval and ovalue->it_interval are ignored.
    let mut o = itv(h, t(-5, 77));
    s.set(&itv(ZERO, t(99, 99)), &mut o).unwrap();
    assert!(
        same(&o, &itv(ms(20), ms(10))),
        "the final value: {}",
        show(&o)
    );
    assert_eq!(s.value_of(h).map(|v| show(&v)), Err(libc::EINVAL));
    let mut again = itv(h, ZERO);
    assert_eq!(s.set(&itv(ZERO, ZERO), &mut again), Err(libc::EINVAL));
}

#[test]
fn f6_cancel_works_on_a_queued_timer_because_it_still_exists() {
    let (clock, rt) = manual();
    let s = S::on(&rt, 8);
    let h = s.create(ms(1), ms(4), 1).unwrap();
    clock.advance(2 * MS);
    assert_eq!(s.queued(), 1);
    let mut o = itv(h, ZERO);
    s.set(&itv(ZERO, ZERO), &mut o).unwrap();
    assert!(same(&o, &itv(ZERO, ms(4))), "zero remaining: {}", show(&o));
    assert_eq!(s.queued(), 0);
    assert_eq!(
        s.reap().err(),
        Some(libc::EAGAIN),
        "a cancelled timer is never reaped"
    );
}

#[test]
fn f6_cancel_of_a_handle_that_is_no_timer_is_einval() {
    let (_clock, rt) = manual();
    let s = S::on(&rt, 8);
    let h = s.create(ms(30), ZERO, 1).unwrap();
    for bad in [MINUS_ONE, ZERO, t(h.tv_sec, 3), t(h.tv_sec + 1, 0)] {
        let mut o = itv(bad, ZERO);
        assert_eq!(s.set(&itv(ZERO, ZERO), &mut o), Err(libc::EINVAL));
        assert!(same(&o, &itv(bad, ZERO)));
    }
    assert!(same(&s.value_of(h).unwrap(), &itv(ms(30), ZERO)));
}

#[test]
fn f6_bad_times_labels_and_the_quota_are_errors() {
    let (_clock, rt) = manual();
    let s = S::on(&rt, 1);
    for (value, interval) in [(t(-1, 0), ZERO), (t(0, 1_000_000), ZERO), (ms(1), t(0, -1))] {
        let mut o = itv(MINUS_ONE, ZERO);
        assert_eq!(s.set(&itv(value, interval), &mut o), Err(libc::EINVAL));
    }
    let mut o = itv(MINUS_ONE, t(5, 1)); // a label must have tv_usec == 0
    assert_eq!(s.set(&itv(ms(1), ZERO), &mut o), Err(libc::EINVAL));
    s.create(ms(1), ZERO, 1).unwrap();
    let mut o = itv(MINUS_ONE, ZERO);
    assert_eq!(
        s.set(&itv(ms(1), ZERO), &mut o),
        Err(libc::EAGAIN),
        "past the quota"
    );
    assert!(same(&o, &itv(MINUS_ONE, ZERO)));
}

// ---- Figure 7: getitimer ----------------------------------------------------------------

#[test]
fn f7_value_it_interval_is_ignored() {
    let (_clock, rt) = manual();
    let s = S::on(&rt, 8);
    let h = s.create(ms(30), ms(3), 1).unwrap();
    for garbage in [MINUS_ONE, t(1, 2), t(-9, 1_000_000)] {
        let mut v = itv(h, garbage);
        s.get(&mut v).unwrap();
        assert!(same(&v, &itv(ms(30), ms(3))), "{}", show(&v));
    }
}

#[test]
fn f7_reap_pops_the_queue_head_writing_handle_and_label() {
    let (clock, rt) = manual();
    let s = S::on(&rt, 8);
    let late = s.create(ms(20), ZERO, 200).unwrap();
    let early = s.create(ms(10), ZERO, 100).unwrap();
    clock.advance(25 * MS);
    let (h, l) = s.reap().unwrap();
    assert!(eq(&h, &early) && eq(&l, &bits_to_timeval(100)));
    let (h, l) = s.reap().unwrap();
    assert!(eq(&h, &late) && eq(&l, &bits_to_timeval(200)));
}

#[test]
fn f7_reap_destroys_a_one_shot_timer() {
    let (clock, rt) = manual();
    let s = S::on(&rt, 8);
    let h = s.create(ms(1), ZERO, 1).unwrap();
    clock.advance(MS);
    s.reap().unwrap();
    assert_eq!(s.value_of(h).map(|v| show(&v)), Err(libc::EINVAL));
}

#[test]
fn f7_reap_restarts_a_periodic_timer_from_its_last_expiry_not_the_reap() {
    let (clock, rt) = manual();
    let s = S::on(&rt, 8);
    let h = s.create(ms(10), ms(10), 1).unwrap();
    clock.advance(17 * MS); // expired at 10 ms, reaped at 17 ms
    let (rh, _) = s.reap().unwrap();
    assert!(eq(&rh, &h));
    let v = s.value_of(h).unwrap();
    assert!(same(&v, &itv(ms(3), ms(10))), "next at 20 ms: {}", show(&v));
    clock.advance(3 * MS);
    assert!(s.reap().is_ok(), "and expires again at 20 ms");
}

#[test]
fn f7_reap_of_an_empty_queue_is_eagain_and_leaves_value_untouched() {
    let (_clock, rt) = manual();
    let s = S::on(&rt, 8);
    s.create(ms(10), ZERO, 1).unwrap();
    let mut v = itv(MINUS_ONE, t(4, 4));
    assert_eq!(s.get(&mut v), Err(libc::EAGAIN));
    assert!(same(&v, &itv(MINUS_ONE, t(4, 4))));
}

#[test]
fn f7_a_handle_reads_the_timers_current_value_running_or_queued() {
    let (clock, rt) = manual();
    let s = S::on(&rt, 8);
    let h = s.create(ms(10), ms(5), 1).unwrap();
    clock.advance(4 * MS);
    assert!(same(&s.value_of(h).unwrap(), &itv(ms(6), ms(5))));
    clock.advance(7 * MS);
    assert!(
        same(&s.value_of(h).unwrap(), &itv(ZERO, ms(5))),
        "queued: zero remaining"
    );
}

#[test]
fn f7_a_handle_that_is_no_timer_is_einval_and_leaves_value_untouched() {
    let (_clock, rt) = manual();
    let s = S::on(&rt, 8);
    let other = S::on(&rt, 8);
    let h = s.create(ms(10), ZERO, 1).unwrap();
    let foreign = other.create(ms(10), ZERO, 1).unwrap();
    for bad in [foreign, ZERO, t(h.tv_sec, 1), t(h.tv_sec - 1, 0), t(-1, 0)] {
        let mut v = itv(bad, t(8, 8));
        assert_eq!(s.get(&mut v), Err(libc::EINVAL));
        assert!(same(&v, &itv(bad, t(8, 8))));
    }
}

// ---- Both layers, the process-wide set, libc ------------------------------------------------

#[test]
fn clean_and_itimer_handles_are_the_same_handles() {
    let (clock, rt) = manual();
    let s = S::on(&rt, 8);
    let mut h = 0;
    // SAFETY: the set is live; `h` is a local.
    assert_eq!(unsafe { cw_timer_create(s.0, 1_500, 0, 9, &mut h) }, CW_OK);
    let v = s.value_of(bits_to_timeval(h)).unwrap();
    assert!(
        same(&v, &itv(t(0, 2), ZERO)),
        "1.5 us reads as 2 us: {}",
        show(&v)
    );
    clock.advance(MS);
    let (rh, rl) = s.reap().unwrap();
    assert_eq!(
        (timeval_to_bits(&rh), timeval_to_bits(&rl)),
        (Some(h), Some(9))
    );
}

#[test]
#[cfg_attr(miri, ignore)] // the process-wide runtime and set; libc's setitimer
fn the_process_wide_set_serves_setitimer_and_getitimer() {
    let set = cw_multireal_set();
    assert!(!set.is_null());
    assert_eq!(cw_multireal_set(), set, "one set per process");
    assert_eq!(cw_multireal_init(16), CW_EBUSY);
    // SAFETY: the process-wide set is live for the whole process.
    unsafe {
        assert_eq!(
            cw_timerset_free(set),
            CW_EINVAL,
            "it lives as long as the process"
        );
        assert_eq!(cw_multireal_fd(), cw_timerset_fd(set));
    }
    let v = itv(t(60, 0), ZERO);
    let mut o = itv(MINUS_ONE, bits_to_timeval(77));
    // SAFETY: the structures are locals.
    unsafe {
        assert_eq!(cw_setitimer(CW_ITIMER_MULTIREAL, &v, null_mut()), -1);
        assert_eq!(errno(), libc::EINVAL);
        assert_eq!(cw_setitimer(CW_ITIMER_MULTIREAL, &v, &mut o), 0);
        let handle = o.it_value;
        let mut g = itv(handle, ZERO);
        assert_eq!(cw_getitimer(CW_ITIMER_MULTIREAL, &mut g), 0);
        assert!(g.it_value.tv_sec <= 60 && g.it_value.tv_sec >= 50);
        let mut c = itv(handle, ZERO);
        assert_eq!(
            cw_setitimer(CW_ITIMER_MULTIREAL, &itv(ZERO, ZERO), &mut c),
            0
        );
        let mut g = itv(handle, ZERO);
        assert_eq!(cw_getitimer(CW_ITIMER_MULTIREAL, &mut g), -1);
        assert_eq!(errno(), libc::EINVAL);
        assert_eq!(cw_getitimer(CW_ITIMER_MULTIREAL, null_mut()), -1);
        assert_eq!(errno(), libc::EINVAL);
    }
}

#[test]
#[cfg_attr(miri, ignore)] // libc's getitimer and setitimer
fn other_which_values_go_to_libc() {
    let mut v = itv(MINUS_ONE, MINUS_ONE);
    // SAFETY: the structures are locals. The virtual timer is armed far away, then disarmed.
    unsafe {
        assert_eq!(cw_getitimer(libc::ITIMER_VIRTUAL, &mut v), 0);
        assert!(same(&v, &itv(ZERO, ZERO)), "unarmed: {}", show(&v));
        let far = itv(t(3600, 0), ZERO);
        let mut old = itv(MINUS_ONE, MINUS_ONE);
        assert_eq!(cw_setitimer(libc::ITIMER_VIRTUAL, &far, &mut old), 0);
        assert!(same(&old, &itv(ZERO, ZERO)));
        assert_eq!(cw_getitimer(libc::ITIMER_VIRTUAL, &mut v), 0);
        assert!(v.it_value.tv_sec > 3000);
        assert_eq!(
            cw_setitimer(libc::ITIMER_VIRTUAL, &itv(ZERO, ZERO), null_mut()),
            0
        );
        assert_eq!(cw_getitimer(12345, &mut v), -1);
        assert_eq!(errno(), libc::EINVAL);
    }
}
