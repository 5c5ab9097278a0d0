//! The C sleep and condition-variable functions' argument checks and their conversion of
//! calloutng's times, precisions and flags (run under Miri too: every pointer path).

use core::ptr;

use callwheel_rt::{Tolerance, WaitLimit};

use super::sleep::*;
use crate::{CW_C_ABSOLUTE, CW_C_DIRECT_EXEC, CW_EINVAL, CW_OK, CW_SBT_1MS};

#[test]
fn a_condition_variable_without_waiters() {
    let mut cv = ptr::null_mut();
    // SAFETY: `cv` is a local out-pointer; NULL is what the checks are for.
    unsafe {
        assert_eq!(cw_cv_new(ptr::null_mut()), CW_EINVAL);
        assert_eq!(cw_cv_new(&mut cv), CW_OK);
        assert_eq!(cw_cv_signal(cv), 0);
        assert_eq!(cw_cv_broadcast(cv), 0);
        assert_eq!(cw_cv_signal(ptr::null_mut()), CW_EINVAL);
        assert_eq!(cw_cv_broadcast(ptr::null_mut()), CW_EINVAL);
        assert_eq!(cw_cv_free(cv), CW_OK);
        assert_eq!(cw_cv_free(ptr::null_mut()), CW_OK);
    }
}

#[test]
fn a_wait_needs_a_locked_mutex_and_good_arguments() {
    let mut cv = ptr::null_mut();
    let mut m = libc::PTHREAD_MUTEX_INITIALIZER;
    // SAFETY: `cv` comes from cw_cv_new and `m` is an initialised mutex, both locals that
    // outlive every call; each error returns before anything blocks.
    unsafe {
        assert_eq!(cw_cv_new(&mut cv), CW_OK);
        assert_eq!(cw_cv_wait(ptr::null_mut(), &mut m), CW_EINVAL);
        assert_eq!(cw_cv_wait(cv, ptr::null_mut()), CW_EINVAL);
        assert_eq!(cw_cv_wait(cv, &mut m), CW_EINVAL, "not locked");
        assert_eq!(libc::pthread_mutex_trylock(&mut m), 0, "left unlocked");
        assert_eq!(cw_cv_timedwait_sbt(cv, &mut m, -1, 0, 0), CW_EINVAL);
        assert_eq!(
            cw_cv_timedwait_sbt(cv, &mut m, CW_SBT_1MS, -1, 0),
            CW_EINVAL
        );
        assert_eq!(
            cw_cv_timedwait_sbt(cv, &mut m, CW_SBT_1MS, 0, 0x4000),
            CW_EINVAL
        );
        assert_eq!(
            libc::pthread_mutex_trylock(&mut m),
            libc::EBUSY,
            "still held"
        );
        assert_eq!(libc::pthread_mutex_unlock(&mut m), 0);
        assert_eq!(cw_cv_free(cv), CW_OK);
    }
    assert_eq!(cw_sleep_sbt(-CW_SBT_1MS, 0, 0), CW_EINVAL);
    assert_eq!(cw_sleep_sbt(CW_SBT_1MS, i64::MIN, 0), CW_EINVAL);
    assert_eq!(cw_sleep_sbt(CW_SBT_1MS, 0, -1), CW_EINVAL);
}

#[test]
fn a_relative_time_becomes_a_duration_and_calloutngs_precision() {
    // 10 ms with C_PREL(1): half of it, 5 ms (as nanoseconds, rounded down); the time itself
    // rounds up (never early).
    let t = timeout(10 * CW_SBT_1MS, 0, crate::cw_c_prel(1) | CW_C_DIRECT_EXEC).unwrap();
    let WaitLimit::After(d, Tolerance { absolute, ppm: 0 }) = t else {
        panic!("{t:?}");
    };
    assert!(
        d.as_nanos() >= 9_999_999 && d.as_nanos() <= 10_000_000,
        "{d:?}"
    );
    assert!((4_999_000..=5_000_000).contains(&absolute), "{absolute}");
    // An explicit precision wider than the relative one wins.
    let t = timeout(10 * CW_SBT_1MS, 7 * CW_SBT_1MS, crate::cw_c_prel(1)).unwrap();
    let WaitLimit::After(_, Tolerance { absolute, .. }) = t else {
        panic!("{t:?}");
    };
    assert!((6_999_000..=7_000_000).contains(&absolute), "{absolute}");
    assert_eq!(timeout(0, 0, 0x4000), Err(CW_EINVAL));
}

#[test]
fn times_round_up_to_the_next_nanosecond() {
    use callwheel::time::Sbt;
    // Raw 5 is 1.16 ns: 2 ns, never 1 (early).
    assert_eq!(nanos_ceil(Sbt::from_raw(5)), 2);
    assert_eq!(nanos_ceil(Sbt::from_raw(0)), 0);
    assert_eq!(nanos_ceil(Sbt::from_secs(3)), 3_000_000_000);
    assert_eq!(nanos_ceil(Sbt::from_raw(-7)), 0);
    // FreeBSD's SBT_1NS (raw 4) is 0.93 ns: 1 ns.
    assert_eq!(nanos_ceil(Sbt::from_raw(crate::CW_SBT_1NS)), 1);
    // An Sbt made from n ns is at least n ns (rounded up on the way in), never less.
    for n in [1_i64, 999, 1_000_000_007] {
        let ns = nanos_ceil(Sbt::from_nanos(n));
        assert!(ns == n as u64 || ns == n as u64 + 1, "{n} ns gave {ns}");
    }
}

#[test]
#[cfg_attr(miri, ignore)] // the process-wide runtime's threads sleep on the real clock
fn an_absolute_time_is_a_monotonic_deadline() {
    let t = timeout(5 * crate::CW_SBT_1S, 0, CW_C_ABSOLUTE).unwrap();
    assert!(matches!(t, WaitLimit::At(_, d) if d.is_zero()), "{t:?}");
    assert_eq!(cw_sleep_sbt(0, 0, CW_C_ABSOLUTE), CW_OK, "long passed");
}
