//! The caller-driven wheel's entry points (`cw_wheel_*`), called as C would, so that Miri
//! checks their pointer handling: the out-pointers, the message copy of `cw_wheel_check`, and
//! callbacks that call back into the wheel while `cw_wheel_expire` runs.

use super::*;
use core::ptr::{null, null_mut};

fn new_wheel(capacity: usize, now: u64) -> *mut cw_wheel {
    let mut w = null_mut();
    // SAFETY: `w` is a valid out-pointer.
    assert_eq!(unsafe { cw_wheel_new(capacity, now, &mut w) }, CW_OK);
    assert!(!w.is_null());
    w
}

fn add(w: *mut cw_wheel, deadline: u64, value: u64) -> cw_handle {
    let mut h = cw_handle::default();
    // SAFETY: `w` is live and `h` a valid out-pointer.
    let rc = unsafe { cw_wheel_add(w, deadline, 0, value, &mut h) };
    assert_eq!(rc, CW_OK);
    h
}

fn pull_all(w: *mut cw_wheel) -> Vec<u64> {
    let mut out = Vec::new();
    let mut e = cw_expiry::default();
    // SAFETY: `w` is live and `e` a valid out-pointer.
    while unsafe { cw_wheel_get(w, &mut e) } == 1 {
        out.push(e.value);
    }
    out
}

#[test]
fn timers_come_out_in_deadline_order_and_other_wheels_handles_are_refused() {
    let w = new_wheel(0, 100);
    let other = new_wheel(0, 100);
    let a = add(w, 300, 3);
    add(w, 200, 2);
    add(w, 200, 22);
    let foreign = add(other, 300, 9);
    let mut v = 0;
    // SAFETY: live wheels, valid pointers throughout.
    unsafe {
        assert_eq!(cw_wheel_del(w, foreign, &mut v), CW_ESTALE);
        assert_eq!(cw_wheel_reset(w, foreign, 1, 0), CW_ESTALE);
        assert_eq!(cw_wheel_pending(other, foreign, null_mut()), 1);
        let mut t = 0;
        assert_eq!(cw_wheel_timeout(w, &mut t), 1);
        assert_eq!(t, 100);
        assert_eq!(cw_wheel_update(w, 99), CW_ERANGE);
        assert_eq!(cw_wheel_update(w, 300), CW_OK);
    }
    assert_eq!(pull_all(w), [2, 22, 3]);
    // SAFETY: as above.
    unsafe {
        assert_eq!(cw_wheel_del(w, a, &mut v), CW_ESTALE);
        assert_eq!(v, 0);
        cw_wheel_free(w);
        cw_wheel_free(other);
    }
}

#[test]
fn check_copies_nothing_when_the_wheel_is_sound() {
    let w = new_wheel(4, 0);
    add(w, 5, 1);
    let mut buf = [b'x' as c_char; 8];
    // SAFETY: live wheel; `buf` is valid for its length; NULL buffers are allowed.
    unsafe {
        assert_eq!(cw_wheel_check(w, buf.as_mut_ptr(), buf.len()), CW_OK);
        assert_eq!(cw_wheel_check(w, null_mut(), 0), CW_OK);
        assert_eq!(cw_wheel_check(null(), null_mut(), 0), CW_EINVAL);
        cw_wheel_free(w);
    }
    assert!(buf.iter().all(|&c| c == b'x' as c_char));
}

struct Reentry {
    w: *mut cw_wheel,
    seen: Vec<u64>,
    victim: cw_handle,
}

unsafe extern "C" fn reenter(arg: *mut c_void, e: *const cw_expiry) {
    // SAFETY: `arg` is the `Reentry` the test passed, alive for the call; `e` is valid.
    let (r, e) = unsafe { (&mut *arg.cast::<Reentry>(), &*e) };
    r.seen.push(e.value);
    if e.value == 1 {
        let mut h = cw_handle::default();
        // SAFETY: the wheel is live and not borrowed while a callback runs.
        unsafe {
            assert_eq!(cw_wheel_add_in(r.w, 0, 0, 100, &mut h), CW_OK);
            assert_eq!(cw_wheel_del(r.w, r.victim, null_mut()), CW_OK);
        }
    }
}

#[test]
fn expire_callbacks_may_call_back_into_their_wheel() {
    let w = new_wheel(0, 0);
    add(w, 10, 1);
    let victim = add(w, 20, 2);
    add(w, 30, 3);
    let mut r = Reentry {
        w,
        seen: Vec::new(),
        victim,
    };
    let arg: *mut c_void = (&mut r as *mut Reentry).cast();
    // SAFETY: live wheel; `arg` outlives the call; `reenter` follows the contract.
    unsafe {
        assert_eq!(cw_wheel_expire(w, 40, Some(reenter), arg, 0), 3);
        assert_eq!(cw_wheel_expire(w, 39, Some(reenter), arg, 0), CW_ERANGE);
        cw_wheel_free(w);
    }
    assert_eq!(r.seen, [1, 3, 100]);
}

#[test]
fn a_full_fixed_wheel_refuses_and_keeps_its_timers() {
    let w = new_wheel(2, 0);
    add(w, 1, 1);
    add(w, 2, 2);
    let mut h = cw_handle::default();
    let mut info = cw_wheel_info::default();
    // SAFETY: live wheel, valid out-pointers.
    unsafe {
        assert_eq!(cw_wheel_add(w, 0, 0, 3, &mut h), CW_ENOMEM);
        assert_eq!(
            cw_wheel_add_periodic(w, 0, 0, 0, CW_MISSED_BURST, 3, &mut h),
            CW_EINVAL
        );
        assert_eq!(cw_wheel_counts(w, &mut info), CW_OK);
        assert_eq!(info.pending, 2);
        assert_eq!(cw_wheel_update(w, 2), CW_OK);
    }
    assert_eq!(pull_all(w), [1, 2]);
    // SAFETY: live wheel, freed once.
    unsafe { cw_wheel_free(w) };
}

/// After a pull finds nothing due, the wake-up query skips asking again whether a timer is
/// due — until something is armed or time moves. Moving time past a deadline whose window ends
/// later must make the query answer "now" again; so must each way of arming a timer already
/// due (the wheel's own earliest window end already says so for those: an overdue timer's
/// window is its deadline; the flag is cleared for them all the same).
#[test]
fn a_timer_due_after_an_empty_pull_is_woken_for_at_once() {
    // Each case arms (or makes due) one timer on a wheel at time 1,000 holding a timer due at
    // 5,000 with a window to 7,000 (value 1), and names the value that comes out.
    type Case = fn(*mut cw_wheel, cw_handle) -> u64;
    let cases: [Case; 5] = [
        |w, _| {
            let mut h = cw_handle::default();
            // SAFETY: `w` is live and every out-pointer valid.
            assert_eq!(unsafe { cw_wheel_add(w, 900, 500, 2, &mut h) }, CW_OK);
            2
        },
        |w, _| {
            let mut h = cw_handle::default();
            // SAFETY: `w` is live and every out-pointer valid.
            // A window of 50 ticks from now: its first eighth holds no multiple of 64, so it
            // fires at its deadline, now (a window to 1,500 would fire at 1,024).
            assert_eq!(unsafe { cw_wheel_add_in(w, 0, 50, 2, &mut h) }, CW_OK);
            2
        },
        |w, _| {
            let mut h = cw_handle::default();
            // SAFETY: `w` is live and every out-pointer valid.
            let rc = unsafe { cw_wheel_add_periodic(w, 900, 10_000, 500, 0, 2, &mut h) };
            assert_eq!(rc, CW_OK);
            2
        },
        |w, later| {
            // SAFETY: `w` is live and every out-pointer valid.
            assert_eq!(unsafe { cw_wheel_reset(w, later, 900, 500) }, CW_OK);
            1
        },
        |w, _| {
            // SAFETY: `w` is live and every out-pointer valid.
            assert_eq!(unsafe { cw_wheel_update(w, 6_000) }, CW_OK);
            1
        },
    ];
    for (i, case) in cases.into_iter().enumerate() {
        let w = new_wheel(0, 1_000);
        let mut later = cw_handle::default();
        // SAFETY: `w` is live and `later` a valid out-pointer.
        let rc = unsafe { cw_wheel_add(w, 5_000, 2_000, 1, &mut later) };
        assert_eq!(rc, CW_OK);
        assert!(pull_all(w).is_empty(), "nothing due yet: the wheel is dry");
        let mut at = 0;
        // SAFETY: `w` is live and `at` a valid out-pointer.
        assert_eq!(unsafe { cw_wheel_next_wakeup(w, &mut at) }, 1);
        assert_eq!(at, 7_000);
        let value = case(w, later);
        // SAFETY: as above.
        assert_eq!(unsafe { cw_wheel_next_wakeup(w, &mut at) }, 1);
        let now = if i == 4 { 6_000 } else { 1_000 };
        assert_eq!(at, now, "case {i}: due now, though its window ends later");
        assert_eq!(pull_all(w)[0], value, "case {i}");
        // SAFETY: `w` is live and freed once.
        unsafe { cw_wheel_free(w) };
    }
}

#[test]
fn batches_are_written_within_their_bounds_in_pull_order() {
    let w = new_wheel(0, 0);
    let mut sequence = Vec::new();
    for i in 0..10u64 {
        add(w, 10 + (i * 7) % 10, i);
    }
    // SAFETY: `w` is live.
    assert_eq!(unsafe { cw_wheel_update(w, 100) }, CW_OK);
    // A guard expiry after the batch's room: the call never writes past `max`.
    let mut batch = [cw_expiry::default(); 5];
    loop {
        batch[4].value = u64::MAX;
        // SAFETY: `w` is live and `batch` has room for 4 expiries.
        let got = unsafe { cw_wheel_get_many(w, batch.as_mut_ptr(), 4) };
        assert!((0..=4).contains(&got), "{got}");
        assert_eq!(batch[4].value, u64::MAX, "written past the batch");
        sequence.extend(batch[..got as usize].iter().map(|e| e.value));
        if got < 4 {
            break;
        }
    }
    // The same timers as a second wheel pulls one at a time, in the same order.
    let v = new_wheel(0, 0);
    for i in 0..10u64 {
        add(v, 10 + (i * 7) % 10, i);
    }
    // SAFETY: `v` is live.
    assert_eq!(unsafe { cw_wheel_update(v, 100) }, CW_OK);
    assert_eq!(sequence, pull_all(v));
    assert_eq!(sequence.len(), 10);
    // SAFETY: both are live, freed once.
    unsafe {
        cw_wheel_free(w);
        cw_wheel_free(v);
    }
}

#[test]
fn advance_pulls_what_an_update_and_batches_pull_and_refuses_going_back() {
    let (w, v) = (new_wheel(0, 0), new_wheel(0, 0));
    for i in 0..12u64 {
        add(w, 10 + (i * 7) % 12, i);
        add(v, 10 + (i * 7) % 12, i);
    }
    let mut batch = [cw_expiry::default(); 5];
    // SAFETY: `w` is live and `batch` has room for 4 expiries.
    let refused = unsafe { cw_wheel_advance(w, 100, batch.as_mut_ptr(), 0) };
    assert_eq!(refused, CW_EINVAL);
    let mut info = cw_wheel_info::default();
    // SAFETY: `w` is live and `info` a valid out-pointer.
    assert_eq!(unsafe { cw_wheel_counts(w, &mut info) }, CW_OK);
    assert_eq!(info.now, 0, "a refused advance moved the time");
    let (mut by_advance, mut by_update) = (Vec::new(), Vec::new());
    for now in [5, 15, 15, 30, 30, 30] {
        batch[4].value = u64::MAX;
        // SAFETY: as above.
        let got = unsafe { cw_wheel_advance(w, now, batch.as_mut_ptr(), 4) };
        assert!((0..=4).contains(&got), "{got}");
        assert_eq!(batch[4].value, u64::MAX, "written past the batch");
        by_advance.extend(batch[..got as usize].iter().map(|e| (now, e.value)));
        // SAFETY: `v` is live and `batch` has room for 4 expiries.
        let got = unsafe {
            assert_eq!(cw_wheel_update(v, now), CW_OK);
            cw_wheel_get_many(v, batch.as_mut_ptr(), 4)
        };
        by_update.extend(batch[..got as usize].iter().map(|e| (now, e.value)));
    }
    assert_eq!(by_advance, by_update);
    assert_eq!(by_advance.len(), 12);
    // SAFETY: `w` is live and `batch` has room for 4 expiries.
    let back = unsafe { cw_wheel_advance(w, 29, batch.as_mut_ptr(), 4) };
    assert_eq!(back, CW_ERANGE);
    // SAFETY: `w` is live and `info` a valid out-pointer.
    assert_eq!(unsafe { cw_wheel_counts(w, &mut info) }, CW_OK);
    assert_eq!(info.now, 30, "a refused advance moved the time");
    // SAFETY: both are live, freed once.
    unsafe {
        cw_wheel_free(w);
        cw_wheel_free(v);
    }
}

#[test]
fn the_walk_the_period_and_the_step_write_only_through_their_pointers() {
    let w = new_wheel(0, 10);
    add(w, 50, 5);
    let mut p = cw_handle::default();
    let (mut period, mut policy) = (0u64, -1);
    let mut cursor = 0usize;
    let mut e = cw_expiry::default();
    let mut seen = Vec::new();
    // SAFETY: a live wheel; every pointer is a local of the right type, or NULL.
    unsafe {
        assert_eq!(
            cw_wheel_add_periodic(w, 20, 7, 0, crate::CW_MISSED_SKIP, 2, &mut p),
            CW_OK
        );
        assert_eq!(cw_wheel_period(w, p, &mut period, &mut policy), 1);
        assert_eq!((period, policy), (7, crate::CW_MISSED_SKIP));
        assert_eq!(cw_wheel_period(w, p, null_mut(), null_mut()), 1);
        assert_eq!(cw_wheel_set_period(w, p, 9), CW_OK);
        while cw_wheel_next_pending(w, &mut cursor, &mut e) == 1 {
            seen.push((e.value, e.deadline));
        }
        assert_eq!(cw_wheel_next_pending(w, null_mut(), &mut e), CW_EINVAL);
        assert_eq!(cw_wheel_expired(w), 0);
        assert_eq!(cw_wheel_step(w, 10), CW_OK);
        assert_eq!(cw_wheel_expired(w), 1);
        assert_eq!(cw_wheel_get(w, &mut e), 1);
        assert_eq!((e.value, e.deadline), (2, 20));
        let mut next = 0;
        assert_eq!(cw_wheel_pending(w, p, &mut next), 1);
        assert_eq!(next, 29);
        assert_eq!(cw_wheel_step(w, u64::MAX), CW_ERANGE);
        cw_wheel_free(w);
    }
    seen.sort_unstable();
    assert_eq!(seen, [(2, 20), (5, 50)]);
}
