//! Every public function of the core crate, fed hostile input: the ends of the `u64` and `i64`
//! ranges, zero and maximal durations, budgets, periods and capacities, handles that are stale,
//! foreign or made up from raw bits, callbacks that stop and reset timers under the wheel's
//! feet, and time asked to run backwards.
//!
//! Each test names the function (or the small group of related functions) it covers and checks
//! the result the documentation promises for that input: a value, an error or a `None`, never a
//! panic, an abort or a hang. Loops that a wrong answer could make endless are bounded, and any
//! `advance` that could legitimately run for 2^64 ticks is given a budget.
//!
//! The ordinary behaviour of the same functions is tested elsewhere: the wheel's guarantees in
//! `tests/wheel.rs`, the wheel against a model in `tests/wheel_model.rs`, the time conversions
//! (with properties over the whole range) in `tests/time.rs`. Where one of those already drives
//! the same extreme at length, the test here is short and says where the long one is.

use core::time::Duration;

use callwheel::time::TimeError;
use callwheel::{
    stabbing_optimum, Budget, Error, Expired, Handle, Meter, Missed, Owner, Progress, Sbt, Scheme,
    Tick, Timers, Wheel, WheelStats,
};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Handles no wheel ever issued: the all-zero and all-ones bit patterns, mixes of them, and
/// handles of owners that belong to no wheel.
fn made_up() -> Vec<Handle> {
    vec![
        Handle::from_parts(0, 0),
        Handle::from_parts(u64::MAX, u64::MAX),
        Handle::from_parts(u64::MAX, 0),
        Handle::from_parts(0, u64::MAX),
        Owner::new().handle(0, 0),
        Owner::new().handle(u32::MAX, u32::MAX),
    ]
}

/// Handles carrying the owner of `live` (so they pass the owner check) but naming no live
/// timer, provided `live` is the only timer of its wheel: its slot one generation on and one
/// back, a slot far past the slab, and the largest index at every generation.
fn forged_from(live: Handle) -> Vec<Handle> {
    let owner = live.owner();
    let index = u64::from(live.index());
    let id = |generation: u32, index: u64| (u64::from(generation) << 32) | index;
    vec![
        Handle::from_parts(id(live.generation().wrapping_add(1), index), owner),
        Handle::from_parts(id(live.generation().wrapping_sub(1), index), owner),
        Handle::from_parts(id(live.generation(), index + 1_000), owner),
        Handle::from_parts(id(live.generation(), u64::from(u32::MAX)), owner),
        Handle::from_parts(u64::MAX, owner),
    ]
}

/// Every handle in `handles` is rejected by every call that takes one, touching nothing: the
/// wheel's length, statistics and invariants are unchanged.
fn assert_rejected(w: &mut Wheel<u64>, handles: &[Handle]) {
    let (len, stats) = (w.len(), w.stats());
    for &h in handles {
        assert_eq!(w.stop(h), None, "stop {h:?}");
        assert_eq!(w.reset(h, 0, 0), None, "reset {h:?}");
        assert_eq!(w.reset(h, u64::MAX, u64::MAX), None, "reset {h:?}");
        assert_eq!(w.deadline(h), None, "deadline {h:?}");
        assert!(!w.contains(h), "contains {h:?}");
        assert_eq!(w.overruns(h), None, "overruns {h:?}");
        assert!(w.value_mut(h).is_none(), "value_mut {h:?}");
    }
    assert_eq!(
        (w.len(), w.stats()),
        (len, stats),
        "a rejected handle touched the wheel"
    );
    w.check_invariants().unwrap();
}

/// Advances without a budget and returns `(deadline, value, now at firing)` per firing.
fn fire_all(w: &mut Wheel<u64>, now: Tick) -> Vec<(Tick, u64, Tick)> {
    let mut fired = Vec::new();
    let p = w.advance(now, Budget::UNLIMITED, |t: &mut dyn Timers<u64>, e| {
        fired.push((e.deadline, e.value, t.now()));
    });
    assert!(p.complete, "an unlimited advance completes");
    assert_eq!(p.fired, fired.len());
    w.check_invariants().unwrap();
    fired
}

// ---------------------------------------------------------------------------------------------
// The wheel's constructors
// ---------------------------------------------------------------------------------------------

#[test]
fn wheel_new_and_default_start_empty_at_time_zero() {
    for w in [Wheel::<u64>::new(), Wheel::<u64>::default()] {
        assert_eq!((w.now(), w.len(), w.is_empty()), (0, 0, true));
        assert_eq!((w.next_expiry(), w.next_wakeup()), (None, None));
        assert_eq!(w.stats(), WheelStats::default());
        w.check_invariants().unwrap();
    }
    // Two fresh wheels issue the same index and generation; only the owner tells them apart,
    // and it must.
    let (mut a, mut b) = (Wheel::new(), Wheel::default());
    let (ha, hb) = (a.start(1, 1u64).unwrap(), b.start(1, 2u64).unwrap());
    assert_eq!((ha.index(), ha.generation()), (hb.index(), hb.generation()));
    assert_ne!(ha.owner(), hb.owner());
    assert_ne!(ha, hb);
}

#[test]
fn wheel_with_capacity_zero_one_and_beyond_the_index_space() {
    // Zero: a valid wheel on which every start is Full and changes nothing.
    let mut w: Wheel<u64> = Wheel::with_capacity(0).unwrap();
    let full = Err(Error::Full { capacity: 0 });
    assert_eq!(w.start(0, 1), full);
    assert_eq!(w.start(u64::MAX, 1), full);
    assert_eq!(w.start_with(u64::MAX, u64::MAX, 1), full);
    assert_eq!(w.start_periodic(1, 1, 0, Missed::Burst, 1), full);
    assert!(w.is_empty());
    assert_eq!(w.stats().started, 0);
    assert_eq!(fire_all(&mut w, u64::MAX), []);

    // One: the slot is reused after a stop and after a firing, and starts never allocate
    // (the memory the wheel reports stays what the constructor reserved).
    let mut w: Wheel<u64> = Wheel::with_capacity(1).unwrap();
    let bytes = w.memory_bytes();
    let h = w.start(u64::MAX, 1).unwrap();
    assert_eq!(w.start(0, 2), Err(Error::Full { capacity: 1 }));
    assert_eq!(w.stop(h), Some(1));
    w.start(0, 3).unwrap();
    assert_eq!(fire_all(&mut w, 0), [(0, 3, 0)]);
    // A callback filling the wheel gets Full too, and the wheel stays consistent.
    w.start(5, 4).unwrap();
    let mut answers = Vec::new();
    let _ = w.advance(5, Budget::UNLIMITED, |t, _| {
        answers.push(t.start(6, 5).is_ok());
        answers.push(t.start(7, 6) == Err(Error::Full { capacity: 1 }));
    });
    assert_eq!(answers, [true, true]);
    assert_eq!(w.memory_bytes(), bytes, "a fixed-capacity wheel never grew");
    w.check_invariants().unwrap();

    // 2^40, usize::MAX and the documented limit (2^32 - 707) are Config, refused before any
    // allocation is tried.
    let limit = usize::try_from((1u64 << 32) - 707).unwrap();
    let huge = usize::try_from(1u64 << 40).unwrap_or(usize::MAX);
    for capacity in [limit, limit + 1, huge, usize::MAX] {
        match Wheel::<u64>::with_capacity(capacity) {
            Err(Error::Config { reason }) => assert!(!reason.is_empty()),
            other => panic!("capacity {capacity}: expected Config, got {other:?}"),
        }
    }
    // One below the limit is indexable: whether the allocator grants the ~160 GiB is up to the
    // machine (reserved, never touched), but a refusal must be NoMemory, not an abort.
    match Wheel::<u64>::with_capacity(limit - 1) {
        Ok(w) => assert!(w.is_empty()),
        Err(e) => assert_eq!(e, Error::NoMemory),
    }
}

// ---------------------------------------------------------------------------------------------
// Timers: start, start_with, stop, reset, deadline, contains, now, len, is_empty, next_expiry,
// may_expire_at, next_wakeup, memory_bytes
// ---------------------------------------------------------------------------------------------

/// The u64 edges at length: `far_future_and_u64_edge_deadlines_fire_in_order` in tests/wheel.rs.
#[test]
fn timers_start_at_zero_one_and_the_end_of_time() {
    let mut w = Wheel::new();
    // At time 0 a deadline of 0 is already overdue: pending, due now, fired by the next drain.
    let zero = w.start(0, 0).unwrap();
    assert_eq!((w.deadline(zero), w.next_expiry()), (Some(0), Some(0)));
    w.start(1, 1).unwrap();
    for v in 2..5 {
        w.start(u64::MAX, v).unwrap();
    }
    w.start(u64::MAX - 1, 5).unwrap();
    assert_eq!(w.len(), 6);
    w.check_invariants().unwrap();
    assert_eq!(
        fire_all(&mut w, 0),
        [(0, 0, 0)],
        "only the overdue timer, time unmoved"
    );
    // The rest at their deadlines, equal deadlines in start order.
    assert_eq!(
        fire_all(&mut w, u64::MAX),
        [
            (1, 1, 1),
            (u64::MAX - 1, 5, u64::MAX - 1),
            (u64::MAX, 2, u64::MAX),
            (u64::MAX, 3, u64::MAX),
            (u64::MAX, 4, u64::MAX)
        ]
    );
    // At the end of time every deadline is overdue, u64::MAX included: they fire in start
    // order at the next advance, which cannot move the clock.
    w.start(u64::MAX, 6).unwrap();
    w.start(0, 7).unwrap();
    assert_eq!(
        fire_all(&mut w, u64::MAX),
        [(u64::MAX, 6, u64::MAX), (0, 7, u64::MAX)]
    );
    assert!(w.is_empty());
}

/// The saturation at length: `a_window_end_saturates_at_the_end_of_time` in tests/wheel.rs.
#[test]
fn timers_start_with_tolerances_that_pass_the_end_of_time() {
    let mut w = Wheel::new();
    let a = w.start_with(1, u64::MAX - 1, 1).unwrap();
    // The window [1, u64::MAX] ends exactly at the end of time.
    assert_eq!(w.next_wakeup(), Some(u64::MAX));
    let b = w.start_with(u64::MAX, u64::MAX, 2).unwrap();
    assert_eq!((w.deadline(a), w.deadline(b)), (Some(1), Some(u64::MAX)));
    assert_eq!(
        w.next_wakeup(),
        Some(u64::MAX),
        "the end saturates instead of wrapping"
    );
    // A window fires at the first multiple of its coarsest slot width in its first eighth:
    // for [1, u64::MAX], 2^60 (not at 1, and never after the end).
    assert_eq!(fire_all(&mut w, 1), []);
    assert_eq!(w.next_expiry(), Some(1 << 60));
    assert_eq!(fire_all(&mut w, 1 << 60), [(1, 1, 1 << 60)]);
    assert_eq!(fire_all(&mut w, u64::MAX), [(u64::MAX, 2, u64::MAX)]);
    // Overdue with the widest window: due now, the wake-up is now.
    w.start_with(0, u64::MAX, 3).unwrap();
    assert_eq!(
        (w.next_expiry(), w.next_wakeup()),
        (Some(u64::MAX), Some(u64::MAX))
    );
    let mut fresh = Wheel::new();
    fresh.start_with(0, u64::MAX, 4u64).unwrap();
    assert_eq!(fresh.next_wakeup(), Some(0));
    assert_eq!(fire_all(&mut fresh, 0), [(0, 4, 0)]);
}

#[test]
fn timers_stop_rejects_stale_foreign_and_made_up_handles() {
    let mut w = Wheel::new();
    let mut other = Wheel::new();
    let live = w.start(u64::MAX, 1).unwrap();
    // Another wheel's handle with the very same index and generation.
    let foreign = other.start(u64::MAX, 2).unwrap();
    assert_eq!(
        (foreign.index(), foreign.generation()),
        (live.index(), live.generation())
    );
    let mut bad = made_up();
    bad.extend(forged_from(live));
    bad.push(foreign);
    assert_rejected(&mut w, &bad);
    // Rebuilt from its own parts, the live handle is the same handle and is accepted.
    let (id, owner) = live.to_parts();
    assert_eq!(w.stop(Handle::from_parts(id, owner)), Some(1));
    // Stopped: stale, and stays stale when its slot is reused by a new timer.
    assert_eq!(w.stop(live), None);
    let reused = w.start(5, 3).unwrap();
    assert_eq!(reused.index(), live.index());
    assert_eq!(w.stop(live), None);
    assert!(w.contains(reused));
    // Fired: stale.
    assert_eq!(fire_all(&mut w, 5), [(5, 3, 5)]);
    assert_eq!(w.stop(reused), None);
    // Cleared: stale.
    let cleared = w.start(10, 4).unwrap();
    w.clear();
    assert_eq!(w.stop(cleared), None);
    assert_eq!(
        other.stop(foreign),
        Some(2),
        "the other wheel's timer is untouched"
    );
    w.check_invariants().unwrap();
}

/// Ordinary resets: `reset_keeps_the_handle_and_a_stale_reset_is_rejected` in tests/wheel.rs.
#[test]
fn timers_reset_to_the_ends_of_time_and_with_bad_handles() {
    let mut w = Wheel::new();
    let h = w.start(100, 1).unwrap();
    assert_rejected(&mut w, &made_up());
    assert_rejected(&mut w, &forged_from(h));
    assert_eq!(
        w.deadline(h),
        Some(100),
        "rejected resets left the timer where it was"
    );
    // The whole range is the wheel's: a reset of a live timer is never refused.
    assert_eq!(w.reset(h, u64::MAX, u64::MAX), Some(100));
    assert_eq!(
        (w.deadline(h), w.next_wakeup()),
        (Some(u64::MAX), Some(u64::MAX))
    );
    assert_eq!(w.reset(h, u64::MAX - 1, 1), Some(u64::MAX));
    assert_eq!(w.next_wakeup(), Some(u64::MAX));
    // Into the past (0 at time 0): overdue, fires at the next advance without moving time.
    assert_eq!(w.reset(h, 0, u64::MAX), Some(u64::MAX - 1));
    assert_eq!(w.next_expiry(), Some(0));
    assert_eq!(fire_all(&mut w, 0), [(0, 1, 0)]);
    assert_eq!(w.reset(h, 5, 0), None, "fired: stale");
    // At the end of time, reset to the end of time is overdue too.
    let _ = fire_all(&mut w, u64::MAX);
    let h = w.start(u64::MAX, 2).unwrap();
    assert_eq!(w.reset(h, u64::MAX, 0), Some(u64::MAX));
    assert_eq!(fire_all(&mut w, u64::MAX), [(u64::MAX, 2, u64::MAX)]);
    assert_eq!(w.stats().reset, 4, "only the resets of a live timer count");
}

#[test]
fn timers_deadline_and_contains_follow_a_timer_to_the_end_of_time() {
    let mut w = Wheel::new();
    let mut other = Wheel::new();
    let h = w.start(u64::MAX, 1).unwrap();
    let foreign = other.start(u64::MAX, 1).unwrap();
    assert_eq!((w.deadline(h), w.contains(h)), (Some(u64::MAX), true));
    for bad in made_up().into_iter().chain(forged_from(h)).chain([foreign]) {
        assert_eq!((w.deadline(bad), w.contains(bad)), (None, false), "{bad:?}");
    }
    // Pending until the very last tick, then gone.
    let _ = fire_all(&mut w, u64::MAX - 1);
    assert!(w.contains(h));
    let _ = fire_all(&mut w, u64::MAX);
    assert_eq!((w.deadline(h), w.contains(h)), (None, false));
}

#[test]
fn timers_now_len_and_is_empty_at_the_ends_of_time() {
    let mut w = Wheel::new();
    assert_eq!((w.now(), w.len(), w.is_empty()), (0, 0, true));
    w.start(u64::MAX, 1).unwrap();
    w.start(0, 2).unwrap(); // overdue: still pending, still counted
    assert_eq!((w.len(), w.is_empty()), (2, false));
    let _ = fire_all(&mut w, u64::MAX);
    assert_eq!((w.now(), w.len(), w.is_empty()), (u64::MAX, 0, true));
    // Time never goes backwards.
    let _ = fire_all(&mut w, 0);
    assert_eq!(w.now(), u64::MAX);
}

#[test]
fn timers_next_expiry_and_may_expire_at_on_empty_and_extreme_wheels() {
    let mut w: Wheel<u64> = Wheel::new();
    assert_eq!(w.next_expiry(), None);
    assert!(!w.may_expire_at(0));
    assert!(!w.may_expire_at(u64::MAX));
    // One timer at the end of time, nothing stopped: the answer is exact.
    w.start(u64::MAX, 1).unwrap();
    assert_eq!(w.next_expiry(), Some(u64::MAX));
    assert!(w.may_expire_at(u64::MAX));
    assert!(!w.may_expire_at(u64::MAX - 1));
    // An overdue timer: the wheel has work at its own time, whatever the deadline said.
    let _ = fire_all(&mut w, 100);
    w.start(5, 2).unwrap();
    assert_eq!(w.next_expiry(), Some(100));
    assert!(w.may_expire_at(100));
    assert!(w.may_expire_at(u64::MAX));
}

/// `may_expire_at` is "`false` only when none has its deadline at `t` and none is overdue":
/// asked about a tick before the cursor while a timer is overdue, it must say `true` (the
/// next `advance`, whatever time it asks for, drains the overdue timer).
#[test]
fn timers_may_expire_at_a_tick_before_the_cursor_while_a_timer_is_overdue() {
    let mut w = Wheel::new();
    let _ = fire_all(&mut w, 100);
    w.start(5, 1).unwrap();
    for t in [0, 5, 99] {
        assert!(
            w.may_expire_at(t),
            "a timer is overdue, yet may_expire_at({t}) is false"
        );
    }
}

/// Early-after-stop at length: `after_stops_next_wakeup_may_come_early_but_never_late` in
/// tests/wheel.rs.
#[test]
fn wheel_next_wakeup_when_empty_overdue_interrupted_and_inside_a_callback() {
    let mut w = Wheel::new();
    assert_eq!(w.next_wakeup(), None);
    // Stops may leave it early, never late, and never before the wheel's time.
    let first = w.start(10, 1).unwrap();
    w.start(u64::MAX, 2).unwrap();
    assert_eq!(w.stop(first), Some(1));
    assert!(w.next_wakeup().is_some());
    // Left unfinished by a budget: the wake-up is now.
    for v in 0..10 {
        w.start(50, 10 + v).unwrap();
    }
    let p = w.advance(60, Budget::steps(3), |_, _| {});
    assert!(!p.complete);
    assert_eq!(w.next_wakeup(), Some(w.now()));
    let _ = fire_all(&mut w, 60);
    assert_eq!(w.next_wakeup(), Some(u64::MAX));
    // Inside a callback: the wheel's time while something else is pending, None when the
    // firing timer was the last one.
    w.start(70, 20).unwrap();
    let mut seen = Vec::new();
    let _ = w.advance(u64::MAX, Budget::UNLIMITED, |t, e| {
        seen.push((e.value, t.next_wakeup(), t.now()));
    });
    assert_eq!(seen, [(20, Some(70), 70), (2, None, u64::MAX)]);
    assert_eq!(w.next_wakeup(), None);
}

#[test]
fn timers_memory_bytes_counts_capacity_and_survives_clear() {
    let base = Wheel::<u64>::new().memory_bytes();
    assert!(
        base > 0,
        "the slot lists' sentinels and minimums are held from the start"
    );
    assert_eq!(Wheel::<u64>::with_capacity(0).unwrap().memory_bytes(), base);
    // A 24-byte entry and an 8-byte pair of links per timer of capacity.
    let w = Wheel::<u64>::with_capacity(1_000).unwrap();
    assert!(
        w.memory_bytes() >= base + 1_000 * 32,
        "{}",
        w.memory_bytes()
    );
    let mut w = Wheel::new();
    for i in 0..1_000u64 {
        w.start(i.wrapping_mul(0x9E37_79B9_7F4A_7C15), i).unwrap();
    }
    w.start_periodic(u64::MAX, u64::MAX, u64::MAX, Missed::Skip, 0)
        .unwrap();
    let held = w.memory_bytes();
    assert!(held >= base + 1_001 * 32);
    w.clear();
    assert_eq!(w.memory_bytes(), held, "clear keeps the slab's memory");
}

// ---------------------------------------------------------------------------------------------
// Scheme: advance, advance_to, check_invariants
// ---------------------------------------------------------------------------------------------

#[test]
fn scheme_advance_to_an_earlier_time_is_ignored_and_counted() {
    let mut w: Wheel<u64> = Wheel::new();
    // An empty stretch of the whole range is jumped in a handful of steps.
    let p = w.advance(u64::MAX - 1, Budget::steps(64), |_, _| {});
    assert!(p.complete);
    assert_eq!((p.fired, w.now()), (0, u64::MAX - 1));
    for (earlier, clamps) in [(0, 1), (1, 2), (u64::MAX - 2, 3)] {
        let p = w.advance(earlier, Budget::UNLIMITED, |_, _| {});
        assert_eq!(
            (p.fired, p.complete, w.now()),
            (0, true, u64::MAX - 1),
            "{earlier}"
        );
        assert_eq!(w.stats().clamped, clamps);
    }
    // The same time again, and the end of time, are not clamps.
    let _ = fire_all(&mut w, u64::MAX - 1);
    let _ = fire_all(&mut w, u64::MAX);
    assert_eq!((w.now(), w.stats().clamped), (u64::MAX, 3));

    // An earlier time given to resume a budgeted call finishes the work already asked for.
    let mut w = Wheel::new();
    for d in [10, 20, 30] {
        w.start(d, d).unwrap();
    }
    let mut fired = Vec::new();
    let p = w.advance(30, Budget::steps(2), |_, e| fired.push(e.value));
    assert!(!p.complete);
    assert!(
        w.now() > 0,
        "the call moved the clock before its budget ran out"
    );
    let p = w.advance(0, Budget::UNLIMITED, |_, e| fired.push(e.value));
    assert!(p.complete);
    assert_eq!(
        (fired, w.now(), w.stats().clamped),
        (vec![10, 20, 30], 30, 1)
    );
}

#[test]
fn scheme_advance_with_budgets_of_zero_one_and_u64_max() {
    let load = || {
        let mut w = Wheel::new();
        for v in 0..5u64 {
            w.start(10 + v % 2, v).unwrap();
        }
        w.start(u64::MAX, 5).unwrap();
        w
    };
    let mut expect = Vec::new();
    let mut w = load();
    let _ = w.advance(u64::MAX, Budget::UNLIMITED, |_, e| expect.push(e.value));
    assert_eq!(expect, [0, 2, 4, 1, 3, 5]);
    for budget in [Budget::steps(0), Budget::steps(1), Budget::steps(u64::MAX)] {
        let mut w = load();
        let mut fired = Vec::new();
        let mut calls = 0;
        loop {
            let p = w.advance(u64::MAX, budget, |_, e| fired.push(e.value));
            assert!(p.steps <= budget.get(), "{budget:?}: {p:?}");
            w.check_invariants().unwrap();
            calls += 1;
            assert!(
                calls < 1_000,
                "{budget:?}: a budgeted advance makes progress"
            );
            if p.complete {
                break;
            }
            assert_eq!(
                p.steps,
                budget.get(),
                "an interrupted call spent its whole budget"
            );
        }
        assert_eq!(fired, expect, "{budget:?}");
        assert_eq!(w.now(), u64::MAX);
    }
}

#[test]
fn scheme_advance_callbacks_stop_and_reset_their_own_and_other_timers() {
    let mut w = Wheel::new();
    let a = w.start(10, "a").unwrap();
    let b = w.start(10, "b").unwrap();
    let c = w.start(10, "c").unwrap();
    w.start(10, "d").unwrap();
    let far = w.start(1_000, "far").unwrap();
    let mut fired = Vec::new();
    let mut answers = Vec::new();
    let p = w.advance(10, Budget::UNLIMITED, |t, e| {
        fired.push((e.value, t.now()));
        match e.value {
            "a" => {
                // The firing one-shot timer is already gone: its own handle is stale.
                assert_eq!(e.handle, a);
                answers.push(t.stop(e.handle).is_none());
                answers.push(t.reset(e.handle, 0, 0).is_none());
                answers.push(!t.contains(e.handle) && t.deadline(e.handle).is_none());
                // The next timer of the same slot, stopped before its turn.
                answers.push(t.stop(b) == Some("b"));
                // Another one of the slot, moved to the end of time.
                answers.push(t.reset(c, u64::MAX, u64::MAX) == Some(10));
                answers.push(t.len() == 3);
            }
            "d" => {
                // A far timer moved into the past fires right after this tick, at this tick.
                answers.push(t.reset(far, 0, 0) == Some(1_000));
            }
            _ => {}
        }
    });
    assert!(p.complete);
    assert_eq!(answers, [true; 7]);
    assert_eq!(fired, [("a", 10), ("d", 10), ("far", 10)]);
    assert_eq!((w.len(), w.deadline(c)), (1, Some(u64::MAX)));
    w.check_invariants().unwrap();
    let mut last = Vec::new();
    let _ = w.advance_to(u64::MAX, |_, e| last.push(e.value));
    assert_eq!(last, ["c"]);
}

/// A callback that re-arms itself in the past on every firing fires once per drain (once per
/// tick), so `advance(u64::MAX)` would take 2^64 ticks: a budget bounds it, and each firing
/// happens one tick after the previous one, never twice in one drain.
#[test]
fn scheme_advance_with_a_callback_that_rearms_in_the_past_forever() {
    let mut w = Wheel::new();
    w.start(0, 0u64).unwrap();
    let mut times = Vec::new();
    let p = w.advance(u64::MAX, Budget::steps(1_000), |t, e| {
        times.push(t.now());
        t.start(0, e.value + 1).unwrap();
    });
    assert!(!p.complete);
    assert_eq!(p.steps, 1_000);
    assert_eq!(p.fired, times.len());
    assert!(p.fired > 10, "it made progress: {p:?}");
    let first: Vec<Tick> = times.iter().copied().take(8).collect();
    assert_eq!(
        first,
        [0, 1, 2, 3, 4, 5, 6, 7],
        "one firing per tick, from tick 0"
    );
    assert!(
        times.iter().zip(0..).all(|(&t, i): (&Tick, Tick)| t == i),
        "a drain fired a timer its own callback queued"
    );
    assert_eq!(w.len(), 1);
    w.check_invariants().unwrap();
    // A second, earlier request resumes with the same budget rules and stays bounded.
    let p = w.advance(0, Budget::steps(10), |t, e| {
        t.start(0, e.value + 1).unwrap();
    });
    assert_eq!((p.complete, p.steps), (false, 10));
}

#[test]
fn scheme_advance_to_counts_firings_to_the_end_of_time() {
    let mut w = Wheel::new();
    assert_eq!(w.advance_to(u64::MAX - 1, |_, _| {}), 0);
    assert_eq!(w.now(), u64::MAX - 1);
    w.start(u64::MAX, 1u64).unwrap();
    w.start(u64::MAX - 1, 2).unwrap(); // overdue
    w.start(0, 3).unwrap(); // overdue
    let mut order = Vec::new();
    assert_eq!(w.advance_to(u64::MAX, |_, e| order.push(e.value)), 3);
    assert_eq!(order, [2, 3, 1]);
    assert_eq!(w.advance_to(0, |_, _| {}), 0);
    assert_eq!(w.now(), u64::MAX);
}

#[test]
fn scheme_check_invariants_holds_through_a_hostile_session() {
    let mut w = Wheel::new();
    w.check_invariants().unwrap();
    let h = w
        .start_periodic(0, 1, u64::MAX, Missed::Burst, 1u64)
        .unwrap();
    w.start(u64::MAX, 2).unwrap();
    assert_rejected(&mut w, &made_up());
    let _ = w.advance(u64::MAX, Budget::steps(7), |_, _| {});
    w.check_invariants().unwrap();
    assert!(
        w.reset(h, u64::MAX, 0).is_some(),
        "the periodic timer is still live"
    );
    let _ = w.advance(5, Budget::steps(0), |_, _| {});
    w.check_invariants().unwrap();
    w.clear();
    w.check_invariants().unwrap();
    assert_eq!(w.advance_to(u64::MAX, |_, _| {}), 0);
    assert_eq!(w.check_invariants(), Ok(()));
}

// ---------------------------------------------------------------------------------------------
// The wheel's own methods: start_periodic, clear, poll_expired, stats, overruns, value_mut
// ---------------------------------------------------------------------------------------------

/// More end-of-time schedules: `a_periodic_timer_whose_next_deadline_passes_the_end_of_time_
/// fires_its_last`, `skip_with_period_one_at_the_end_of_time_fires_once_and_ends` and
/// `the_last_firing_of_a_periodic_timer_reports_its_overruns` in tests/wheel.rs.
#[test]
fn wheel_start_periodic_with_zero_and_maximal_periods() {
    let mut w: Wheel<u64> = Wheel::new();
    for first in [0, u64::MAX] {
        assert_eq!(
            w.start_periodic(first, 0, u64::MAX, Missed::Delay, 1),
            Err(Error::ZeroPeriod)
        );
    }
    assert!(w.is_empty());
    assert_eq!(w.stats().started, 0, "a refused start changes nothing");

    // Period 1 from u64::MAX - 1, advanced on time: fires at MAX - 1 and MAX, then its next
    // deadline would pass the end of time, so it is gone.
    for policy in [Missed::Burst, Missed::Delay, Missed::Skip] {
        let mut w = Wheel::new();
        let h = w.start_periodic(u64::MAX - 1, 1, 0, policy, 7).unwrap();
        let fired = fire_all(&mut w, u64::MAX - 1);
        assert_eq!(fired, [(u64::MAX - 1, 7, u64::MAX - 1)], "{policy:?}");
        assert_eq!(w.deadline(h), Some(u64::MAX), "{policy:?}");
        let fired = fire_all(&mut w, u64::MAX);
        assert_eq!(fired, [(u64::MAX, 7, u64::MAX)], "{policy:?}");
        assert!(w.is_empty());
        assert_eq!(w.stop(h), None);
    }
    // Advanced straight to u64::MAX, the firing at MAX - 1 is one period late (judged against
    // the time asked for): Burst replays MAX, Delay and Skip would land past the end of time.
    for (policy, expect) in [
        (Missed::Burst, vec![(u64::MAX - 1, 1), (u64::MAX, 0)]),
        (Missed::Delay, vec![(u64::MAX - 1, 1)]),
        (Missed::Skip, vec![(u64::MAX - 1, 1)]),
    ] {
        let mut w = Wheel::new();
        w.start_periodic(u64::MAX - 1, 1, 0, policy, ()).unwrap();
        let mut fired = Vec::new();
        let _ = w.advance_to(u64::MAX, |_, e| fired.push((e.deadline, e.overruns)));
        assert_eq!(fired, expect, "{policy:?}");
        assert!(w.is_empty(), "{policy:?}");
    }

    // Period u64::MAX from 0, advanced straight to the end of time: one period missed; only
    // Burst has a next deadline left (u64::MAX itself).
    for (policy, expect) in [
        (Missed::Burst, vec![(0, 1), (u64::MAX, 0)]),
        (Missed::Delay, vec![(0, 1)]),
        (Missed::Skip, vec![(0, 1)]),
    ] {
        let mut w = Wheel::new();
        w.start_periodic(0, u64::MAX, 0, policy, ()).unwrap();
        let mut fired = Vec::new();
        let _ = w.advance_to(u64::MAX, |_, e| fired.push((e.deadline, e.overruns)));
        assert_eq!(fired, expect, "{policy:?}");
        assert!(w.is_empty(), "{policy:?}");
    }

    // A tolerance of u64::MAX: every window ends at the end of time, the period still holds.
    let mut w = Wheel::new();
    let h = w
        .start_periodic(10, 10, u64::MAX, Missed::Skip, 1u64)
        .unwrap();
    assert_eq!(w.next_wakeup(), Some(u64::MAX));
    // Its window [10, u64::MAX] fires at 2^60 (the first multiple of 2^60 in the window's
    // first eighth); Skip then moves to the first period after that.
    assert_eq!(fire_all(&mut w, 10), []);
    assert_eq!(fire_all(&mut w, 1 << 60), [(10, 1, 1 << 60)]);
    let next = Missed::Skip.next(10, 10, 1 << 60).0.unwrap();
    assert!(next > 1 << 60 && (next - 10).is_multiple_of(10));
    assert_eq!(
        (w.deadline(h), w.next_wakeup()),
        (Some(next), Some(u64::MAX))
    );

    // A periodic callback that stops its own timer at its first firing ends it.
    let mut w = Wheel::new();
    let h = w.start_periodic(0, 1, 0, Missed::Burst, 3u64).unwrap();
    let mut stopped = Vec::new();
    let p = w.advance(u64::MAX, Budget::UNLIMITED, |t, e| {
        stopped.push(t.stop(e.handle))
    });
    assert_eq!((p.fired, stopped), (1, vec![Some(3)]));
    assert!(!w.contains(h));
}

/// At length: `clear_drops_every_timer_keeps_the_time_and_makes_handles_stale` and
/// `clear_in_the_middle_of_a_budgeted_advance_leaves_nothing_to_resume` in tests/wheel.rs.
#[test]
fn wheel_clear_on_empty_full_and_end_of_time_wheels() {
    let mut w: Wheel<u64> = Wheel::new();
    w.clear();
    w.clear();
    assert_eq!((w.now(), w.len(), w.stats()), (0, 0, WheelStats::default()));
    let _ = fire_all(&mut w, u64::MAX);
    let overdue = w.start(0, 1).unwrap();
    let at_end = w.start(u64::MAX, 2).unwrap();
    let periodic = w
        .start_periodic(0, u64::MAX, u64::MAX, Missed::Burst, 3)
        .unwrap();
    w.clear();
    w.check_invariants().unwrap();
    assert_eq!((w.now(), w.len()), (u64::MAX, 0));
    assert_eq!((w.next_expiry(), w.next_wakeup()), (None, None));
    assert_eq!(w.stats().stopped, 3);
    assert_rejected(&mut w, &[overdue, at_end, periodic]);
    assert_eq!(fire_all(&mut w, u64::MAX), []);
    // A new timer in a cleared slot is not named by the old handle.
    let fresh = w.start(0, 4).unwrap();
    assert_eq!(w.stop(overdue), None);
    assert_eq!(w.stop(fresh), Some(4));
}

/// Ordinary polling: the `poll_expired_*` tests in tests/wheel.rs.
#[test]
fn wheel_poll_expired_on_an_empty_wheel_and_at_the_end_of_time() {
    let mut w: Wheel<u64> = Wheel::new();
    assert!(w.poll_expired(0).is_none());
    assert_eq!(w.now(), 0);
    assert!(w.poll_expired(u64::MAX).is_none());
    assert_eq!(w.now(), u64::MAX, "None leaves the wheel's time at `now`");
    assert!(w.poll_expired(0).is_none());
    assert_eq!(w.now(), u64::MAX, "time never goes backwards");

    let mut w = Wheel::new();
    w.start(u64::MAX, 2).unwrap();
    w.start(u64::MAX - 1, 1).unwrap();
    w.start(0, 0).unwrap();
    let h = w
        .start_periodic(u64::MAX - 4, 2, 0, Missed::Burst, 9)
        .unwrap();
    let mut fired = Vec::new();
    while let Some(e) = w.poll_expired(u64::MAX) {
        fired.push((e.deadline, e.value, e.overruns, w.now()));
        assert!(fired.len() < 100, "poll_expired stops once nothing is due");
    }
    assert_eq!(
        fired,
        [
            (0, 0, 0, 0),
            (u64::MAX - 4, 9, 2, u64::MAX - 4),
            (u64::MAX - 2, 9, 1, u64::MAX - 2),
            (u64::MAX - 1, 1, 0, u64::MAX - 1),
            (u64::MAX, 2, 0, u64::MAX),
            (u64::MAX, 9, 0, u64::MAX),
        ]
    );
    assert!(w.is_empty());
    assert!(!w.contains(h), "the periodic timer's last firing ended it");
    assert!(w.poll_expired(u64::MAX).is_none());
    w.check_invariants().unwrap();
}

/// The ordinary counts: `stats_count_every_kind_of_event` in tests/wheel.rs.
#[test]
fn wheel_stats_at_the_extremes() {
    let mut w = Wheel::new();
    let h = w.start(u64::MAX, 1u64).unwrap();
    assert_rejected(&mut w, &made_up());
    assert_eq!(w.reset(h, 0, u64::MAX), Some(u64::MAX));
    let _ = fire_all(&mut w, u64::MAX);
    // A timer due at 0 handled at the end of time is as late as a timer can be.
    w.start(0, 2).unwrap();
    let _ = fire_all(&mut w, u64::MAX);
    let _ = fire_all(&mut w, 0);
    let s = w.stats();
    assert_eq!(
        (
            s.started,
            s.stopped,
            s.reset,
            s.fired,
            s.clamped,
            s.max_lateness
        ),
        (2, 0, 1, 2, 1, u64::MAX)
    );
}

#[test]
fn wheel_overruns_for_bad_one_shot_periodic_and_ended_handles() {
    let mut w = Wheel::new();
    let one_shot = w.start(5, 1u64).unwrap();
    assert_eq!(
        w.overruns(one_shot),
        None,
        "a one-shot timer has no schedule"
    );
    let h = w.start_periodic(10, 10, 0, Missed::Skip, 2).unwrap();
    for bad in made_up() {
        assert_eq!(w.overruns(bad), None);
    }
    assert_eq!(w.overruns(h), Some(0));
    // Handled at 55: periods 20, 30, 40 and 50 were missed.
    let _ = fire_all(&mut w, 55);
    assert_eq!((w.overruns(h), w.deadline(h)), (Some(4), Some(60)));
    // Its last firing, at the end of time: the handle goes stale.
    let _ = fire_all(&mut w, u64::MAX);
    assert_eq!(w.overruns(h), None);
}

#[test]
fn wheel_value_mut_rejects_bad_handles_and_replaces_in_place() {
    let mut w = Wheel::new();
    let mut other = Wheel::new();
    let h = w.start(u64::MAX, 1u64).unwrap();
    let foreign = other.start(u64::MAX, 1u64).unwrap();
    for bad in made_up().into_iter().chain(forged_from(h)).chain([foreign]) {
        assert!(w.value_mut(bad).is_none(), "{bad:?}");
    }
    *w.value_mut(h).unwrap() = u64::MAX;
    assert_eq!(w.deadline(h), Some(u64::MAX), "the timer did not move");
    assert_eq!(w.stop(h), Some(u64::MAX));
    assert!(w.value_mut(h).is_none(), "stopped: stale");
    // A periodic timer's later copies are of the replaced value.
    let p = w.start_periodic(1, 1, 0, Missed::Burst, 0).unwrap();
    let _ = fire_all(&mut w, 1);
    *w.value_mut(p).unwrap() = 42;
    assert_eq!(fire_all(&mut w, 2), [(2, 42, 2)]);
    assert_eq!(other.stop(foreign), Some(1));
}

// ---------------------------------------------------------------------------------------------
// Handles and owners
// ---------------------------------------------------------------------------------------------

#[test]
fn handle_index_generation_owner_and_parts_of_any_bits() {
    for (id, owner) in [
        (0, 0),
        (u64::MAX, u64::MAX),
        (u64::MAX, 0),
        (1 << 32, 7),
        (u64::from(u32::MAX), 1),
    ] {
        let h = Handle::from_parts(id, owner);
        assert_eq!(h.to_parts(), (id, owner));
        assert_eq!(h.index(), id as u32, "the index is the low 32 bits");
        assert_eq!(
            h.generation(),
            (id >> 32) as u32,
            "the generation the high 32"
        );
        assert_eq!(h.owner(), owner);
    }
    // A real handle survives the trip through its parts and is accepted again.
    let mut w = Wheel::new();
    let h = w.start(3, 1u64).unwrap();
    let (id, owner) = h.to_parts();
    let back = Handle::from_parts(id, owner);
    assert_eq!(back, h);
    assert_eq!(w.deadline(back), Some(3));
}

#[test]
fn owner_new_default_get_handle_and_slot() {
    let (a, b, c) = (Owner::new(), Owner::new(), Owner::default());
    assert_ne!(a, b);
    assert_ne!(a, c);
    assert_ne!(b, c);
    for o in [a, b, c] {
        assert_ne!(o.get(), 0, "0 is never an owner");
        // An owner never accepts a handle whose owner part is zero.
        assert_eq!(o.slot(Handle::from_parts(0, 0)), None);
        assert_eq!(o.slot(Handle::from_parts(u64::MAX, 0)), None);
    }
    let h = a.handle(u32::MAX, u32::MAX);
    assert_eq!(h.to_parts(), (u64::MAX, a.get()));
    assert_eq!(a.slot(h), Some((u32::MAX, u32::MAX)));
    assert_eq!(b.slot(h), None);
    assert_eq!(a.slot(a.handle(0, 0)), Some((0, 0)));
    // A wheel's handles carry its owner, which no made-up owner matches.
    let mut w = Wheel::new();
    let issued = w.start(1, 1u64).unwrap();
    assert_eq!(a.slot(issued), None);
    assert!(!w.contains(a.handle(issued.index(), issued.generation())));
}

// ---------------------------------------------------------------------------------------------
// Budget, Meter, Progress
// ---------------------------------------------------------------------------------------------

#[test]
fn budget_steps_and_get_at_zero_one_and_u64_max() {
    assert_eq!(Budget::steps(0).get(), 1, "zero is taken as one");
    assert_eq!(Budget::steps(1).get(), 1);
    assert_eq!(Budget::steps(u64::MAX - 1).get(), u64::MAX - 1);
    assert_eq!(Budget::steps(u64::MAX), Budget::UNLIMITED);
    assert_eq!(Budget::UNLIMITED.get(), u64::MAX);
}

#[test]
fn meter_new_step_fired_progress_and_finish_at_the_budget_edges() {
    // A zero budget still allows one step.
    let mut m = Meter::new(Budget::steps(0));
    assert!(m.step());
    assert!(!m.step());
    assert!(!m.step(), "a spent meter stays spent");
    assert_eq!(m.progress().steps, 1);
    let p = m.finish(false);
    assert_eq!(
        p,
        Progress {
            fired: 0,
            steps: 1,
            complete: false
        }
    );

    let mut m = Meter::new(Budget::UNLIMITED);
    for _ in 0..10_000 {
        assert!(m.step());
    }
    for _ in 0..3 {
        m.fired();
    }
    assert_eq!(
        m.progress(),
        Progress {
            fired: 3,
            steps: 10_000,
            complete: false
        }
    );
    assert_eq!(
        m.finish(true),
        Progress {
            fired: 3,
            steps: 10_000,
            complete: true
        }
    );
    // Finishing an untouched meter reports nothing done.
    assert_eq!(
        Meter::new(Budget::steps(u64::MAX - 1)).finish(true),
        Progress {
            fired: 0,
            steps: 0,
            complete: true
        }
    );
}

// ---------------------------------------------------------------------------------------------
// Missed, stabbing_optimum, Error
// ---------------------------------------------------------------------------------------------

/// Properties over the whole range: `the_missed_period_rule_holds_over_the_whole_u64_range`
/// in tests/wheel.rs.
#[test]
fn missed_next_at_the_ends_of_time_and_with_a_zero_period() {
    use Missed::{Burst, Delay, Skip};
    for policy in [Burst, Delay, Skip] {
        // No period, no schedule.
        assert_eq!(policy.next(10, 0, 100), (None, 0), "{policy:?}");
        assert_eq!(policy.next(0, 0, u64::MAX), (None, 0), "{policy:?}");
        // Due at the end of time: there is no next deadline.
        assert_eq!(policy.next(u64::MAX, 1, u64::MAX), (None, 0), "{policy:?}");
        assert_eq!(
            policy.next(u64::MAX, u64::MAX, u64::MAX),
            (None, 0),
            "{policy:?}"
        );
        // A caller's time before the deadline: nothing missed.
        assert_eq!(policy.next(100, 10, 0), (Some(110), 0), "{policy:?}");
        assert_eq!(
            policy.next(u64::MAX - 1, 1, 0),
            (Some(u64::MAX), 0),
            "{policy:?}"
        );
        assert_eq!(
            policy.next(0, u64::MAX, 0),
            (Some(u64::MAX), 0),
            "{policy:?}"
        );
    }
    // Period 1 from 0, handled at the end of time: u64::MAX periods missed.
    assert_eq!(Burst.next(0, 1, u64::MAX), (Some(1), u64::MAX));
    assert_eq!(Delay.next(0, 1, u64::MAX), (None, u64::MAX));
    assert_eq!(Skip.next(0, 1, u64::MAX), (None, u64::MAX));
    // Period u64::MAX from 0, handled at the end of time: exactly one.
    assert_eq!(Burst.next(0, u64::MAX, u64::MAX), (Some(u64::MAX), 1));
    assert_eq!(Delay.next(0, u64::MAX, u64::MAX), (None, 1));
    assert_eq!(Skip.next(0, u64::MAX, u64::MAX), (None, 1));
    // Period u64::MAX - 1 from 1: the grid's next point is u64::MAX itself.
    assert_eq!(
        Skip.next(1, u64::MAX - 1, u64::MAX - 1),
        (Some(u64::MAX), 0)
    );
    // Handled at u64::MAX that point is missed: only Burst still has it to replay.
    assert_eq!(Burst.next(1, u64::MAX - 1, u64::MAX), (Some(u64::MAX), 1));
    assert_eq!(Delay.next(1, u64::MAX - 1, u64::MAX), (None, 1));
    assert_eq!(Skip.next(1, u64::MAX - 1, u64::MAX), (None, 1));
}

/// Ordinary windows: `the_stabbing_optimum_is_the_fewest_instants_that_stab_every_window` in
/// tests/wheel.rs.
#[test]
fn stabbing_optimum_on_empty_extreme_and_inverted_windows() {
    assert_eq!(stabbing_optimum(&[]), 0);
    assert_eq!(stabbing_optimum(&[(u64::MAX, u64::MAX)]), 1);
    assert_eq!(stabbing_optimum(&[(0, u64::MAX); 1_000]), 1);
    assert_eq!(
        stabbing_optimum(&[
            (0, u64::MAX),
            (u64::MAX, u64::MAX),
            (u64::MAX - 1, u64::MAX - 1)
        ]),
        2
    );
    // An inverted window is a point at its end.
    assert_eq!(stabbing_optimum(&[(u64::MAX, 0)]), 1);
    assert_eq!(
        stabbing_optimum(&[(u64::MAX, 0), (1, 1)]),
        2,
        "0 does not stab [1, 1]"
    );
    assert_eq!(stabbing_optimum(&[(10, 5), (3, 7)]), 1, "5 stabs both");
    assert_eq!(stabbing_optimum(&[(10, 5), (6, 8)]), 2);
}

/// An inverted window "is taken as stabbed by its end alone": one whose end is also the end of
/// another window needs no instant of its own.
#[test]
fn stabbing_optimum_inverted_window_sharing_its_end_with_another() {
    assert_eq!(stabbing_optimum(&[(0, 0), (u64::MAX, 0)]), 1);
    assert_eq!(stabbing_optimum(&[(5, 8), (10, 8)]), 1);
}

#[test]
fn wheel_window_and_schedule_at_the_ends_of_time_and_with_bad_handles() {
    let mut w = Wheel::new();
    let exact = w.start(u64::MAX, 1u64).unwrap();
    assert_eq!(w.window(exact), Some((u64::MAX, u64::MAX)));
    let wide = w.start_with(0, u64::MAX, 2).unwrap();
    // Due at once (the wheel's time is 0): the end reported is the deadline.
    assert_eq!(w.window(wide), Some((0, 0)));
    let p = w
        .start_periodic(u64::MAX - 1, u64::MAX, u64::MAX, Missed::Delay, 3)
        .unwrap();
    assert_eq!(w.window(p), Some((u64::MAX - 1, u64::MAX)));
    assert_eq!(w.schedule(p), Some((u64::MAX, Missed::Delay)));
    assert_eq!(w.schedule(exact), None);
    for h in made_up() {
        assert_eq!((w.window(h), w.schedule(h)), (None, None));
    }
    let other = Wheel::<u64>::new();
    assert_eq!((other.window(exact), other.schedule(p)), (None, None));
    w.clear();
    assert_eq!((w.window(exact), w.schedule(p)), (None, None));
}

#[test]
fn advance_state_epochs_at_their_limits() {
    use callwheel::advance::{AdvanceState, Phase};
    let mut s = AdvanceState::default();
    assert_eq!(s.phase, Phase::Idle);
    // Before any drain the stamp saturates at 0 rather than wrapping.
    assert_eq!(s.overdue_stamp(), 0);
    assert!(!s.fires_in_this_drain(0));
    s.begin_drain();
    assert!(s.fires_in_this_drain(0));
    assert!(!s.fires_in_this_drain(u64::MAX));
    s.set_in_advance(true);
    assert!(s.in_advance());
    assert!(!s.fires_in_this_drain(s.overdue_stamp()));
}

#[test]
fn error_display_with_extreme_fields() {
    let all = [
        Error::BeyondRange {
            expiry: u64::MAX,
            max: 0,
        },
        Error::Config { reason: "" },
        Error::ZeroPeriod,
        Error::Full {
            capacity: usize::MAX,
        },
        Error::NoMemory,
    ];
    let messages: Vec<String> = all.iter().map(ToString::to_string).collect();
    assert!(messages[0].contains(&u64::MAX.to_string()));
    assert!(messages[3].contains(&usize::MAX.to_string()));
    for (i, m) in messages.iter().enumerate() {
        assert!(!m.is_empty());
        for other in &messages[i + 1..] {
            assert_ne!(m, other);
        }
    }
    let boxed: Box<dyn core::error::Error> = Box::new(Error::NoMemory);
    assert!(boxed.source().is_none());
}

// ---------------------------------------------------------------------------------------------
// The default methods of Timers and Scheme
// ---------------------------------------------------------------------------------------------

/// An exact structure that implements only the required methods, so `start_with`, `contains`,
/// `is_empty`, `may_expire_at`, `next_wakeup` and `advance_to` run the traits' default bodies
/// (the wheel overrides some of them).
struct Exact(Wheel<u64>);

impl Timers<u64> for Exact {
    fn start(&mut self, expiry: Tick, value: u64) -> Result<Handle, Error> {
        self.0.start(expiry, value)
    }
    fn stop(&mut self, handle: Handle) -> Option<u64> {
        self.0.stop(handle)
    }
    fn reset(&mut self, handle: Handle, deadline: Tick, _tolerance: Tick) -> Option<Tick> {
        self.0.reset(handle, deadline, 0)
    }
    fn deadline(&self, handle: Handle) -> Option<Tick> {
        self.0.deadline(handle)
    }
    fn now(&self) -> Tick {
        self.0.now()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn next_expiry(&self) -> Option<Tick> {
        self.0.next_expiry()
    }
    fn memory_bytes(&self) -> usize {
        self.0.memory_bytes()
    }
}

impl Scheme<u64> for Exact {
    fn advance<F>(&mut self, now: Tick, budget: Budget, on_expire: F) -> Progress
    where
        F: FnMut(&mut dyn Timers<u64>, Expired<u64>),
    {
        self.0.advance(now, budget, on_expire)
    }
    fn check_invariants(&self) -> Result<(), &'static str> {
        self.0.check_invariants()
    }
}

#[test]
fn timers_and_scheme_default_methods_with_extreme_values() {
    let mut s = Exact(Wheel::new());
    assert!(s.is_empty());
    assert_eq!(s.next_wakeup(), None);
    assert!(!s.may_expire_at(u64::MAX));
    // The default start_with ignores the tolerance: the wake-up is the deadline, not the
    // window's (saturated) end.
    let h = s.start_with(10, u64::MAX, 1).unwrap();
    assert_eq!((s.deadline(h), s.next_wakeup()), (Some(10), Some(10)));
    let end = s.start_with(u64::MAX, u64::MAX, 2).unwrap();
    assert_eq!(s.deadline(end), Some(u64::MAX));
    assert!(s.contains(h) && s.contains(end) && !s.is_empty());
    for bad in made_up() {
        assert!(!s.contains(bad));
    }
    assert!(s.may_expire_at(10));
    assert!(!s.may_expire_at(9));
    assert_eq!(s.advance_to(0, |_, _| {}), 0);
    assert_eq!(s.advance_to(u64::MAX, |_, _| {}), 2);
    assert!(!s.contains(h) && s.is_empty());
    assert_eq!((s.now(), s.advance_to(0, |_, _| {})), (u64::MAX, 0));
    assert_eq!(s.check_invariants(), Ok(()));
}

// ---------------------------------------------------------------------------------------------
// Sbt and TimeError (properties over the whole range are in tests/time.rs)
// ---------------------------------------------------------------------------------------------

/// 2^31 seconds in nanoseconds: the first time past `Sbt::MAX`.
const NS_2_31: i64 = 2_147_483_648_000_000_000;

#[test]
fn sbt_from_raw_as_raw_is_negative_abs_and_negation() {
    for raw in [i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX - 1, i64::MAX] {
        let t = Sbt::from_raw(raw);
        assert_eq!((t.as_raw(), t.is_negative()), (raw, raw < 0));
    }
    assert_eq!(Sbt::default(), Sbt::ZERO);
    assert_eq!(Sbt::MIN.abs(), Sbt::MAX, "saturates one unit short");
    assert_eq!(Sbt::MAX.abs(), Sbt::MAX);
    assert_eq!(Sbt::from_raw(-1).abs(), Sbt::from_raw(1));
    assert_eq!(Sbt::MIN.checked_neg(), None);
    assert_eq!(Sbt::MAX.checked_neg(), Some(Sbt::from_raw(i64::MIN + 1)));
    assert_eq!(Sbt::ZERO.checked_neg(), Some(Sbt::ZERO));
    assert_eq!(Sbt::MIN.saturating_neg(), Sbt::MAX);
    assert_eq!(-Sbt::MIN, Sbt::MAX);
    assert_eq!(-Sbt::MAX, Sbt::from_raw(i64::MIN + 1));
}

#[test]
fn sbt_checked_and_saturating_add_sub_and_their_operators() {
    let unit = Sbt::from_raw(1);
    assert_eq!(Sbt::MAX.checked_add(unit), None);
    assert_eq!(Sbt::MIN.checked_sub(unit), None);
    assert_eq!(Sbt::MAX.checked_sub(Sbt::MIN), None);
    assert_eq!(Sbt::MAX.checked_add(Sbt::MIN), Some(Sbt::from_raw(-1)));
    assert_eq!(Sbt::MIN.checked_sub(Sbt::MIN), Some(Sbt::ZERO));
    assert_eq!(Sbt::MAX.saturating_add(Sbt::MAX), Sbt::MAX);
    assert_eq!(Sbt::MIN.saturating_add(Sbt::MIN), Sbt::MIN);
    assert_eq!(Sbt::MIN.saturating_sub(Sbt::MAX), Sbt::MIN);
    assert_eq!(Sbt::MAX.saturating_sub(Sbt::MIN), Sbt::MAX);
    assert_eq!(Sbt::MAX + Sbt::MAX, Sbt::MAX);
    assert_eq!(Sbt::MIN + Sbt::MIN, Sbt::MIN);
    assert_eq!(Sbt::MIN - Sbt::MAX, Sbt::MIN);
    assert_eq!(Sbt::MAX - Sbt::MIN, Sbt::MAX);
    // `+=` and `-=` at the ends: `operators_saturate_instead_of_wrapping` in tests/time.rs.
}

#[test]
fn sbt_checked_and_saturating_mul_and_checked_div() {
    assert_eq!(Sbt::MAX.checked_mul(2), None);
    assert_eq!(Sbt::MIN.checked_mul(-1), None);
    assert_eq!(Sbt::MAX.checked_mul(-1), Some(Sbt::from_raw(i64::MIN + 1)));
    assert_eq!(Sbt::MIN.checked_mul(1), Some(Sbt::MIN));
    for t in [Sbt::MIN, Sbt::MAX] {
        assert_eq!(t.checked_mul(0), Some(Sbt::ZERO));
        assert_eq!(t.saturating_mul(0), Sbt::ZERO);
        assert_eq!(t.checked_div(0), None, "division by zero is None");
    }
    assert_eq!(Sbt::ZERO.checked_div(0), None);
    assert_eq!(Sbt::MIN.saturating_mul(-1), Sbt::MAX);
    assert_eq!(Sbt::MAX.saturating_mul(i64::MIN), Sbt::MIN);
    assert_eq!(Sbt::MAX.saturating_mul(i64::MAX), Sbt::MAX);
    assert_eq!(Sbt::MIN.saturating_mul(i64::MIN), Sbt::MAX);
    assert_eq!(
        Sbt::MIN.checked_div(-1),
        None,
        "the one quotient out of range"
    );
    assert_eq!(Sbt::MIN.checked_div(1), Some(Sbt::MIN));
    assert_eq!(Sbt::MIN.checked_div(i64::MIN), Some(Sbt::from_raw(1)));
    assert_eq!(Sbt::MAX.checked_div(i64::MIN), Some(Sbt::ZERO));
    assert_eq!(
        Sbt::from_raw(-7).checked_div(2),
        Some(Sbt::from_raw(-3)),
        "toward zero"
    );
}

#[test]
fn sbt_from_nanos_and_try_from_nanos_at_the_range_limits() {
    assert_eq!(Sbt::from_nanos(i64::MAX), Sbt::MAX);
    assert_eq!(Sbt::from_nanos(i64::MIN), Sbt::MIN);
    assert_eq!(Sbt::try_from_nanos(i64::MAX), Err(TimeError::Overflow));
    assert_eq!(Sbt::try_from_nanos(i64::MIN), Err(TimeError::Overflow));
    assert_eq!(Sbt::from_nanos(0), Sbt::ZERO);
    // One nanosecond is 4.29 units: up to 5, and -4.29 up to -4.
    assert_eq!(Sbt::from_nanos(1), Sbt::from_raw(5));
    assert_eq!(Sbt::from_nanos(-1), Sbt::from_raw(-4));
    // 2^31 s is just out of range; one nanosecond less is 2^63 - 4.29 units, up to MAX - 3.
    assert_eq!(Sbt::try_from_nanos(NS_2_31), Err(TimeError::Overflow));
    assert_eq!(Sbt::from_nanos(NS_2_31), Sbt::MAX);
    assert_eq!(
        Sbt::try_from_nanos(NS_2_31 - 1),
        Ok(Sbt::from_raw(i64::MAX - 3))
    );
    // -2^31 s is MIN exactly; one nanosecond below is out of range.
    assert_eq!(Sbt::try_from_nanos(-NS_2_31), Ok(Sbt::MIN));
    assert_eq!(Sbt::try_from_nanos(-NS_2_31 - 1), Err(TimeError::Overflow));
    assert_eq!(Sbt::from_nanos(-NS_2_31 - 1), Sbt::MIN);
}

#[test]
fn sbt_from_micros_millis_and_secs_at_the_range_limits() {
    assert_eq!(Sbt::from_micros(i64::MAX), Sbt::MAX);
    assert_eq!(Sbt::from_micros(i64::MIN), Sbt::MIN);
    assert_eq!(Sbt::from_micros(0), Sbt::ZERO);
    assert_eq!(
        Sbt::from_micros(1),
        Sbt::from_raw(4_295),
        "4294.97 units, up"
    );
    assert_eq!(Sbt::from_micros(-1), Sbt::from_raw(-4_294));
    assert_eq!(Sbt::from_millis(i64::MAX), Sbt::MAX);
    assert_eq!(Sbt::from_millis(i64::MIN), Sbt::MIN);
    assert_eq!(
        Sbt::from_millis(1),
        Sbt::from_raw(4_294_968),
        "4294967.3 units, up"
    );
    assert_eq!(Sbt::from_millis(-1), Sbt::from_raw(-4_294_967));
    assert_eq!(Sbt::from_secs(i64::MAX), Sbt::MAX);
    assert_eq!(Sbt::from_secs(i64::MIN), Sbt::MIN);
    assert_eq!(Sbt::from_secs(0), Sbt::ZERO);
    assert_eq!(Sbt::from_secs(-1), Sbt::from_raw(-1 << 32));
    let (lo, hi) = (i64::from(i32::MIN), i64::from(i32::MAX));
    assert_eq!(
        Sbt::from_secs(hi),
        Sbt::from_raw(hi << 32),
        "exact within range"
    );
    assert_eq!(Sbt::from_secs(lo), Sbt::MIN, "exact: -2^31 s is MIN");
    assert_eq!(Sbt::from_secs(hi + 1), Sbt::MAX);
    assert_eq!(Sbt::from_secs(lo - 1), Sbt::MIN);
}

#[test]
fn sbt_from_secs_nanos_with_invalid_nanos_and_out_of_range_seconds() {
    let (lo, hi) = (i64::from(i32::MIN), i64::from(i32::MAX));
    // Nanoseconds of a second or more alone: `invalid_nanos_is_an_error` in tests/time.rs.
    // Both wrong: either error is what the docs allow.
    assert!(matches!(
        Sbt::from_secs_nanos(i64::MAX, u32::MAX),
        Err(TimeError::InvalidNanos | TimeError::Overflow)
    ));
    assert_eq!(Sbt::from_secs_nanos(i64::MAX, 0), Err(TimeError::Overflow));
    assert_eq!(Sbt::from_secs_nanos(i64::MIN, 0), Err(TimeError::Overflow));
    assert_eq!(Sbt::from_secs_nanos(hi + 1, 0), Err(TimeError::Overflow));
    assert_eq!(Sbt::from_secs_nanos(lo, 0), Ok(Sbt::MIN));
    assert_eq!(
        Sbt::from_secs_nanos(hi, 999_999_999),
        Ok(Sbt::from_raw(i64::MAX - 3))
    );
    // -2^31 s - 1 ns: below MIN.
    assert_eq!(
        Sbt::from_secs_nanos(lo - 1, 999_999_999),
        Err(TimeError::Overflow)
    );
    // -1 s + 999 999 999 ns is -1 ns.
    assert_eq!(
        Sbt::from_secs_nanos(-1, 999_999_999),
        Ok(Sbt::from_nanos(-1))
    );
}

#[test]
fn sbt_from_duration_saturating_and_try_from_at_zero_and_max() {
    assert_eq!(Sbt::from_duration(Duration::MAX), Err(TimeError::Overflow));
    assert_eq!(Sbt::try_from(Duration::MAX), Err(TimeError::Overflow));
    assert_eq!(Sbt::from_duration_saturating(Duration::MAX), Sbt::MAX);
    assert_eq!(Sbt::from_duration(Duration::ZERO), Ok(Sbt::ZERO));
    assert_eq!(Sbt::try_from(Duration::ZERO), Ok(Sbt::ZERO));
    assert_eq!(Sbt::from_duration_saturating(Duration::ZERO), Sbt::ZERO);
    assert_eq!(
        Sbt::from_duration(Duration::from_nanos(1)),
        Ok(Sbt::from_raw(5))
    );
    // The longest Duration that fits, and the first that does not (2^31 s).
    let longest = Duration::new((1 << 31) - 1, 999_999_999);
    assert_eq!(Sbt::from_duration(longest), Ok(Sbt::from_raw(i64::MAX - 3)));
    assert_eq!(
        Sbt::from_duration(longest).unwrap().to_duration(),
        Ok(longest)
    );
    let first_out = Duration::from_secs(1 << 31);
    assert_eq!(Sbt::from_duration(first_out), Err(TimeError::Overflow));
    assert_eq!(Sbt::from_duration_saturating(first_out), Sbt::MAX);
    assert_eq!(
        Sbt::from_duration(Duration::new(u64::MAX, 0)),
        Err(TimeError::Overflow)
    );
}

#[test]
fn sbt_to_nanos_to_secs_nanos_and_display_at_the_range_limits() {
    assert_eq!(Sbt::MAX.to_nanos(), NS_2_31 - 1);
    assert_eq!(Sbt::MIN.to_nanos(), -NS_2_31);
    assert_eq!(Sbt::from_raw(1).to_nanos(), 0, "down");
    assert_eq!(Sbt::from_raw(-1).to_nanos(), -1, "down, toward -inf");
    assert_eq!(Sbt::MAX.to_secs_nanos(), (i64::from(i32::MAX), 999_999_999));
    assert_eq!(Sbt::MIN.to_secs_nanos(), (i64::from(i32::MIN), 0));
    assert_eq!(Sbt::from_raw(-1).to_secs_nanos(), (-1, 999_999_999));
    assert_eq!(Sbt::ZERO.to_secs_nanos(), (0, 0));
    assert_eq!(Sbt::MAX.to_string(), "2147483647.999999999s");
    assert_eq!(Sbt::MIN.to_string(), "-2147483648.000000000s");
    assert_eq!(Sbt::from_raw(-1).to_string(), "-0.000000001s");
    assert_eq!(Sbt::ZERO.to_string(), "0.000000000s");
}

#[test]
fn sbt_to_duration_and_try_from_for_negative_zero_and_max() {
    assert_eq!(Sbt::MIN.to_duration(), Err(TimeError::Negative));
    assert_eq!(Sbt::from_raw(-1).to_duration(), Err(TimeError::Negative));
    assert_eq!(Duration::try_from(Sbt::MIN), Err(TimeError::Negative));
    assert_eq!(Sbt::ZERO.to_duration(), Ok(Duration::ZERO));
    assert_eq!(Sbt::from_raw(1).to_duration(), Ok(Duration::ZERO), "down");
    let max = Ok(Duration::new((1 << 31) - 1, 999_999_999));
    assert_eq!(Sbt::MAX.to_duration(), max);
    assert_eq!(Duration::try_from(Sbt::MAX), max);
}

#[test]
fn sbt_as_secs_f64_at_the_range_limits() {
    // These are exact in f64, so equality is the right test.
    let two = 2f64;
    assert_eq!(Sbt::MIN.as_secs_f64().to_bits(), (-two.powi(31)).to_bits());
    assert_eq!(
        Sbt::MAX.as_secs_f64().to_bits(),
        two.powi(31).to_bits(),
        "nearest f64"
    );
    assert_eq!(Sbt::ZERO.as_secs_f64().to_bits(), 0f64.to_bits());
    assert_eq!(
        Sbt::from_raw(1).as_secs_f64().to_bits(),
        two.powi(-32).to_bits()
    );
    assert_eq!(
        Sbt::from_raw(-1).as_secs_f64().to_bits(),
        (-two.powi(-32)).to_bits()
    );
}

#[test]
fn sbt_to_ticks_ceil_with_zero_rate_negative_and_max() {
    // The zero rate is checked first, before the sign.
    for t in [Sbt::MIN, Sbt::ZERO, Sbt::MAX] {
        assert_eq!(t.to_ticks_ceil(0), Err(TimeError::ZeroRate));
    }
    assert_eq!(Sbt::MIN.to_ticks_ceil(1), Err(TimeError::Negative));
    assert_eq!(
        Sbt::from_raw(-1).to_ticks_ceil(u32::MAX),
        Err(TimeError::Negative)
    );
    assert_eq!(Sbt::ZERO.to_ticks_ceil(u32::MAX), Ok(0));
    // Any positive time takes at least one tick.
    assert_eq!(Sbt::from_raw(1).to_ticks_ceil(1), Ok(1));
    assert_eq!(Sbt::from_raw(1).to_ticks_ceil(u32::MAX), Ok(1));
    // (2^63 - 1) / 2^32 = 2^31 - 2^-32, up to 2^31.
    assert_eq!(Sbt::MAX.to_ticks_ceil(1), Ok(1 << 31));
    // (2^63 - 1)(2^32 - 1) / 2^32 = 2^63 - 2^31 - 1 + 2^-32, up to 2^63 - 2^31: it fits.
    assert_eq!(Sbt::MAX.to_ticks_ceil(u32::MAX), Ok((1 << 63) - (1 << 31)));
}

#[test]
fn sbt_from_ticks_with_zero_rate_and_tick_counts_past_the_range() {
    for ticks in [0, 5, u64::MAX] {
        assert_eq!(Sbt::from_ticks(ticks, 0), Err(TimeError::ZeroRate));
    }
    assert_eq!(Sbt::from_ticks(0, 1), Ok(Sbt::ZERO));
    assert_eq!(Sbt::from_ticks(0, u32::MAX), Ok(Sbt::ZERO));
    assert_eq!(Sbt::from_ticks(u64::MAX, 1), Err(TimeError::Overflow));
    assert_eq!(
        Sbt::from_ticks(u64::MAX, u32::MAX),
        Err(TimeError::Overflow)
    );
    assert_eq!(
        Sbt::from_ticks(1 << 31, 1),
        Err(TimeError::Overflow),
        "2^31 s"
    );
    assert_eq!(
        Sbt::from_ticks((1 << 31) - 1, 1),
        Ok(Sbt::from_secs((1 << 31) - 1))
    );
    assert_eq!(Sbt::from_ticks(1, u32::MAX), Ok(Sbt::from_raw(1)), "down");
    // The round trip is exact, also at the edges.
    for (ticks, hz) in [
        (0, 1),
        ((1 << 31) - 1, 1),
        (1, u32::MAX),
        (1 << 62, u32::MAX),
    ] {
        let t = Sbt::from_ticks(ticks, hz).unwrap();
        assert_eq!(t.to_ticks_ceil(hz), Ok(ticks), "{ticks} at {hz} Hz");
    }
}

/// Distinctness of all four: `errors_display_distinct_messages` in tests/time.rs.
#[test]
fn time_error_display() {
    for e in [
        TimeError::Overflow,
        TimeError::Negative,
        TimeError::InvalidNanos,
        TimeError::ZeroRate,
    ] {
        assert!(!e.to_string().is_empty(), "{e:?}");
    }
    let boxed: Box<dyn core::error::Error> = Box::new(TimeError::ZeroRate);
    assert!(boxed.source().is_none());
}
