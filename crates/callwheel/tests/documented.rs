//! The core crate checked against its documentation, call by call: each test quotes the
//! promise it checks (the item, and a few words of its doc comment or of `docs/wheel.md`) and
//! asserts exactly that. The other suites test the wheel against a model, with properties and
//! with hostile input; this one aims at the exact values, orders and rounding rules a user reads
//! in the docs: tolerant timers and their firing instants, the queries' exact answers, reset
//! order, periodic policies at exact multiples of the period, the memory calls, the pull and
//! budgeted interfaces, and the generic slab.
//!
//! Every test is deterministic and fast.

use callwheel::slab::{Slab, MAX_SLOTS};
use callwheel::time::{TimeError, SBT_1S};
use callwheel::{
    firing_instant, window_end, Budget, Error, Expired, Handle, Missed, Sbt, Scheme, Tick, Timers,
    Wheel,
};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// One firing as a callback saw it: the value, the deadline it fired for, the wheel's time
/// inside the callback and the overruns.
type Fired<V> = (V, Tick, Tick, u64);

/// Advances `w` to `now` without a budget and records every firing.
fn run<V: Copy>(w: &mut Wheel<V>, now: Tick) -> Vec<Fired<V>> {
    let mut log = Vec::new();
    let p = w.advance(now, Budget::UNLIMITED, |t, e| {
        log.push((e.value, e.deadline, t.now(), e.overruns))
    });
    assert!(p.complete, "an unlimited advance completes");
    assert_eq!(p.fired, log.len(), "Progress::fired counts the firings");
    log
}

/// The values of a firing log, in order.
fn values<V: Copy>(log: &[Fired<V>]) -> Vec<V> {
    log.iter().map(|f| f.0).collect()
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The firing instant as `firing_instant`'s doc states it, found by search: the first multiple
/// of the coarsest width 64^l (l >= 1) in the first eighth of the kept window, else the
/// deadline.
fn instant_by_search(deadline: Tick, tolerance: Tick) -> Tick {
    let end = window_end(deadline, tolerance);
    let reach = u128::from(deadline) + (u128::from(end) - u128::from(deadline)) / 8;
    for level in (1..=10u32).rev() {
        let width = 1u128 << (6 * level);
        let first = u128::from(deadline).div_ceil(width) * width;
        if first <= reach {
            return first as Tick;
        }
    }
    deadline
}

// ---------------------------------------------------------------------------------------------
// window_end and firing_instant
// ---------------------------------------------------------------------------------------------

/// `window_end`: "`deadline + tolerance` when the tolerance is below 2^30 ticks, `u64::MAX`
/// when the sum reaches it, otherwise that end with the window's width rounded down to 25
/// significant bits."
#[test]
fn window_end_rounds_exactly_as_stated_at_each_boundary() {
    let e30 = 1u64 << 30;
    for deadline in [0u64, 7, 1 << 40, u64::MAX - (1 << 36)] {
        // Below 2^30: exact.
        assert_eq!(window_end(deadline, e30 - 1), deadline + e30 - 1);
        // 2^30 itself and 2^30 + 64 have at most 25 significant bits: kept exactly.
        assert_eq!(window_end(deadline, e30), deadline + e30);
        assert_eq!(window_end(deadline, e30 + 64), deadline + e30 + 64);
        // 2^30 + 1 ..= 2^30 + 63 need 31 bits: rounded down to 2^30.
        assert_eq!(window_end(deadline, e30 + 1), deadline + e30);
        assert_eq!(window_end(deadline, e30 + 63), deadline + e30);
        // 2^31 + 127 keeps bits 31..7: 2^31.
        assert_eq!(
            window_end(deadline, (e30 << 1) + 127),
            deadline + (e30 << 1)
        );
        assert_eq!(
            window_end(deadline, (e30 << 1) + 128),
            deadline + (e30 << 1) + 128
        );
        // A width of 25 ones is exact; one more low bit is dropped.
        let ones25 = ((1u64 << 25) - 1) << 10;
        assert_eq!(window_end(deadline, ones25), deadline + ones25);
        assert_eq!(window_end(deadline, ones25 | 1), deadline + ones25);
    }
    // The sum reaching the end of time saturates there, narrow or wide.
    assert_eq!(window_end(u64::MAX - 10, 10), u64::MAX);
    assert_eq!(window_end(u64::MAX - 10, 9), u64::MAX - 1);
    assert_eq!(window_end(u64::MAX - 10, 11), u64::MAX);
    let wide = (1u64 << 40) + 1;
    assert_eq!(window_end(u64::MAX - wide, wide), u64::MAX);
    // One short of reaching it: rounded like any wide width (2^40 + 1 -> 2^40).
    assert_eq!(window_end(u64::MAX - wide - 1, wide), u64::MAX - 2);
    assert_eq!(window_end(u64::MAX, 0), u64::MAX);
    assert_eq!(window_end(u64::MAX, u64::MAX), u64::MAX);
}

/// `window_end`: "Never later than the end asked for, earlier by less than 2^-24 of the
/// tolerance."
#[test]
fn window_end_is_never_late_and_loses_less_than_a_part_in_2_24() {
    let mut rng = Rng(0x1234_5678_9ABC_DEF1);
    for _ in 0..20_000 {
        let deadline = rng.next() >> rng.below(64);
        let tolerance = rng.next() >> rng.below(64);
        let asked = deadline.saturating_add(tolerance);
        let end = window_end(deadline, tolerance);
        assert!(end <= asked && end >= deadline, "{deadline} + {tolerance}");
        if tolerance > 0 {
            assert!(
                u128::from(asked - end) << 24 < u128::from(tolerance),
                "{deadline} + {tolerance}: kept {end}"
            );
        }
    }
}

/// `firing_instant`: "the first multiple of the coarsest slot width (64^l ticks, l >= 1) that
/// lies in the first eighth of the window kept ([`window_end`]), or the deadline when that part
/// holds no multiple of 64. Always within `[deadline, window_end(deadline, tolerance)]`."
#[test]
fn firing_instant_is_the_first_coarse_multiple_in_the_first_eighth_of_the_kept_window() {
    let mut rng = Rng(0xDEAD_BEEF_0BAD_F00D);
    let mut cases = vec![
        (0, 0),
        (0, 1 << 20),
        (1, 511),
        (1, 512),
        (64, 8 * 4096),
        (65, 8 * 63),
        (65, 8 * 64),
        (1_000, 1_000),
        (100_000, 100_000),
        (u64::MAX, 0),
        (u64::MAX - 1, u64::MAX),
        ((1 << 63) + 1, u64::MAX),
        (1 << 60, (1 << 63) + 12345),
    ];
    for _ in 0..20_000 {
        let deadline = rng.next() >> rng.below(64);
        let tolerance = rng.next() >> rng.below(64);
        cases.push((deadline, tolerance));
    }
    for (deadline, tolerance) in cases {
        let got = firing_instant(deadline, tolerance);
        assert_eq!(
            got,
            instant_by_search(deadline, tolerance),
            "deadline {deadline} tolerance {tolerance}"
        );
        assert!(got >= deadline && got <= window_end(deadline, tolerance));
    }
}

// ---------------------------------------------------------------------------------------------
// Tolerant timers on the wheel
// ---------------------------------------------------------------------------------------------

/// `firing_instant`: "The instant a [`Wheel`] fires a timer due at `deadline` with `tolerance`
/// (driven past it)"; `Wheel` docs: "`advance(now)` fires exactly the timers whose firing
/// instant is at or before `now`, in the order of those instants"; `Wheel::peek`: "among equal
/// instants, the one started first"; `Expired::deadline`: "The deadline the timer fired for".
#[test]
fn tolerant_timers_fire_at_their_instants_in_instant_then_start_order() {
    let mut w = Wheel::new();
    // (deadline, tolerance) with instants 1024, 1024, 1010, 1024, 4096, 1100.
    let specs: [(Tick, Tick); 6] = [
        (1_000, 1_000),
        (1_024, 0),
        (1_010, 100),
        (1_001, 200),
        (4_000, 1_000),
        (1_100, 7),
    ];
    for (i, &(d, tol)) in specs.iter().enumerate() {
        w.start_with(d, tol, i).unwrap();
    }
    let instants: Vec<Tick> = specs.iter().map(|&(d, t)| firing_instant(d, t)).collect();
    assert_eq!(instants, [1_024, 1_024, 1_010, 1_024, 4_096, 1_100]);
    // Nothing fires before its instant, even with every deadline but one passed.
    assert_eq!(values(&run(&mut w, 1_009)), Vec::<usize>::new());
    assert_eq!(values(&run(&mut w, 1_023)), [2]);
    let log = run(&mut w, 10_000);
    assert_eq!(values(&log), [0, 1, 3, 5, 4]);
    for &(i, deadline, now, overruns) in &log {
        assert_eq!(deadline, specs[i].0, "Expired::deadline is the deadline");
        assert_eq!(now, instants[i], "timer {i} fires at its instant");
        assert_eq!(overruns, 0);
    }
}

/// `Wheel::next_wakeup`: "the earliest window end among the pending timers ... after stops or
/// resets it may be earlier than needed" (so exact without them); `firing_instant`:
/// "`next_expiry` reports the earliest of them".
#[test]
fn without_stops_next_wakeup_and_next_expiry_are_the_earliest_end_and_instant() {
    let mut rng = Rng(0x0F0F_1234_5555_AAAA);
    for round in 0..40 {
        let mut w: Wheel<(Tick, Tick)> = Wheel::new();
        let mut now = 0;
        for _ in 0..(1 + rng.below(40)) {
            let deadline = now + 1 + (rng.next() >> rng.below(64)) % (1 << (6 * (1 + round % 5)));
            let tolerance = match rng.below(3) {
                0 => 0,
                1 => rng.below(deadline / 4 + 1),
                _ => rng.next() >> rng.below(64),
            };
            w.start_with(deadline, tolerance, (deadline, tolerance))
                .unwrap();
        }
        for _ in 0..6 {
            let pending: Vec<(Tick, Tick)> = w.iter().map(|(_, _, &v)| v).collect();
            let end = pending.iter().map(|&(d, t)| window_end(d, t)).min();
            let at = pending.iter().map(|&(d, t)| firing_instant(d, t)).min();
            assert_eq!(w.next_wakeup(), end, "round {round} at {now}: {pending:?}");
            assert_eq!(w.next_expiry(), at, "round {round} at {now}: {pending:?}");
            let Some(at) = at else { break };
            // Advance to somewhere before or at the next instant: nothing fires early.
            now = now.max(at - rng.below(at - now + 1).min(3));
            let fired = run(&mut w, now);
            for &(_, d, when, _) in &fired {
                assert!(when >= d);
            }
        }
    }
}

/// `Timers::next_expiry` as the wheel documents it: "The earliest firing instant among the
/// pending timers (`firing_instant`: the deadline of an exact timer) ... exact while no timer
/// has been stopped or reset".
#[test]
fn next_expiry_is_the_earliest_firing_instant_of_a_tolerant_timer() {
    let mut w = Wheel::new();
    w.start_with(1_000, 1_000, ()).unwrap();
    assert_eq!(w.next_expiry(), Some(firing_instant(1_000, 1_000)));
    assert_eq!(w.next_expiry(), Some(1_024));
}

/// `Timers::next_expiry` (the trait): "never later than the tick at which the first pending
/// timer fires"; and `next_wakeup` "never later than the end of any pending timer's window".
#[test]
fn next_expiry_is_never_later_than_the_first_firing_of_a_tolerant_timer() {
    let mut w = Wheel::new();
    w.start_with(1_000, 1_000, 'a').unwrap();
    w.start_with(2_000, 10, 'b').unwrap();
    let e = w.next_expiry().unwrap();
    let first = run(&mut w, 5_000)[0].2;
    assert!(e <= first, "next_expiry {e}, first firing at {first}");
    let mut w = Wheel::new();
    w.start_with(1_000, 1_000, 'a').unwrap();
    w.start_with(2_000, 10, 'b').unwrap();
    assert_eq!(w.next_wakeup(), Some(2_000));
}

/// `Timers::may_expire_at`: "`false` only when none has its deadline at `t` (on the
/// production wheel, a timer with a window its firing instant) and none is overdue".
#[test]
fn may_expire_at_answers_by_a_tolerant_timers_firing_instant() {
    let mut w = Wheel::new();
    w.start_with(1_000, 1_000, ()).unwrap();
    assert!(!w.may_expire_at(1_000));
    assert!(w.may_expire_at(1_024));
}

/// `Timers::may_expire_at`: "`false` only when none has its deadline at `t` and none is
/// overdue"; "an overdue timer makes it `true` for any `t`, a `t` before the cursor included".
#[test]
fn may_expire_at_answers_for_exact_deadlines_and_overdue_timers() {
    let mut w = Wheel::new();
    let _ = run(&mut w, 100);
    w.start(300, ()).unwrap();
    w.start(5_000, ()).unwrap();
    assert!(w.may_expire_at(300));
    assert!(w.may_expire_at(5_000));
    assert!(!w.may_expire_at(299), "nothing due at or before 299");
    assert!(!w.may_expire_at(100), "nothing overdue at the cursor");
    assert!(
        !w.may_expire_at(0),
        "a t before the cursor, nothing overdue"
    );
    w.start(50, ()).unwrap();
    for t in [0, 50, 100, 299, u64::MAX] {
        assert!(w.may_expire_at(t), "overdue timer, t = {t}");
    }
}

/// Crate docs, "Time and the cursor": "A deadline at or before the cursor is *overdue*: such a
/// timer is queued in start order and fires in the next *drain* of that queue, before the
/// cursor moves on." `Timers::start`: "A deadline at or before [`Timers::now`] is overdue: it
/// fires in the next drain ... without the clock moving."
/// `Timers::start_with`: "a deadline already passed whose instant is still ahead waits for
/// that instant, inside its window".
#[test]
fn a_tolerant_timer_started_after_its_deadline_waits_for_its_instant() {
    let mut w = Wheel::new();
    let _ = run(&mut w, 1_010);
    w.start_with(1_000, 1_000, 'a').unwrap();
    assert!(run(&mut w, 1_023).is_empty());
    assert_eq!(run(&mut w, 1_024), [('a', 1_000, 1_024, 0)]);
}

/// `Timers::reset`: "A deadline at or before [`Timers::now`] makes it overdue, as for `start`
/// (a window: its firing instant, as for `start_with`)."
#[test]
fn a_tolerant_reset_to_a_passed_deadline_waits_for_its_instant() {
    let mut w = Wheel::new();
    let h = w.start(50_000, 'a').unwrap();
    let _ = run(&mut w, 1_010);
    assert_eq!(w.reset(h, 1_000, 1_000), Some(50_000));
    assert!(run(&mut w, 1_023).is_empty());
    assert_eq!(run(&mut w, 1_024), [('a', 1_000, 1_024, 0)]);
    let h = w.start(50_000, 'b').unwrap();
    assert_eq!(w.reset(h, 1_000, 10), Some(50_000));
    assert_eq!(
        run(&mut w, 1_024),
        [('b', 1_000, 1_024, 0)],
        "its instant passed: overdue"
    );
}

/// The same two promises for exact timers, and for tolerant timers on a wheel made by
/// `Wheel::at_deadlines` ("fires every timer at the first `advance` reaching its deadline,
/// whatever its window").
#[test]
fn exact_and_at_deadlines_timers_started_or_reset_in_the_past_are_overdue() {
    let mut w = Wheel::new();
    let _ = run(&mut w, 1_010);
    w.start(1_010, 'a').unwrap();
    let h = w.start(2_000, 'b').unwrap();
    w.start(3, 'c').unwrap();
    assert_eq!(w.reset(h, 0, 0), Some(2_000));
    assert_eq!(
        run(&mut w, 1_010),
        [
            ('a', 1_010, 1_010, 0),
            ('c', 3, 1_010, 0),
            ('b', 0, 1_010, 0)
        ]
    );
    let mut w = Wheel::at_deadlines();
    let _ = run(&mut w, 1_010);
    w.start_with(1_000, 1_000, 'a').unwrap();
    let h = w.start(5_000, 'b').unwrap();
    assert_eq!(w.reset(h, 1_005, 1_000_000), Some(5_000));
    assert_eq!(
        run(&mut w, 1_010),
        [('a', 1_000, 1_010, 0), ('b', 1_005, 1_010, 0)]
    );
}

/// `window_end`: "[`Wheel::next_wakeup`] reports this end, and [`Wheel::window`] until the
/// wheel's time reaches the deadline"; `Wheel::window`: once there "the end reported is the
/// deadline ... The timer itself still fires at its firing instant".
#[test]
fn window_reports_the_deadline_once_passed_while_the_timer_waits_for_its_instant() {
    let mut w = Wheel::new();
    let h = w.start_with(1_000, 1_000, 'a').unwrap();
    assert_eq!(w.window(h), Some((1_000, 2_000)));
    let _ = run(&mut w, 1_010);
    assert_eq!(w.window(h), Some((1_000, 1_000)));
    assert_eq!(w.next_wakeup(), Some(2_000));
    assert!(run(&mut w, 1_023).is_empty());
    assert_eq!(values(&run(&mut w, 1_024)), ['a']);
}

/// `Wheel::window`: "`(deadline, end)` with the end the wheel keeps, `window_end(deadline,
/// tolerance)`"; "A periodic timer's window is always whole".
#[test]
fn window_reports_the_kept_end_before_the_deadline_and_for_periodic_timers() {
    let mut w = Wheel::new();
    let wide = (1u64 << 33) + 12_345;
    let a = w.start_with(10_000, wide, 1).unwrap();
    let b = w.start_with(u64::MAX - 5, 100, 2).unwrap();
    let p = w.start_periodic(64, 64, 30, Missed::Burst, 3).unwrap();
    assert_eq!(w.window(a), Some((10_000, window_end(10_000, wide))));
    assert_eq!(w.window(b), Some((u64::MAX - 5, u64::MAX)));
    assert_eq!(w.window(p), Some((64, 94)));
    // Late by two periods: Burst replays 128 and 192; the window stays whole.
    let mut seen = Vec::new();
    let _ = w.advance(200, Budget::UNLIMITED, |t, e| {
        if e.value == 3 {
            seen.push(e.deadline);
            assert_eq!(t.deadline(e.handle), Some(e.deadline + 64));
        }
    });
    assert_eq!(seen, [64, 128, 192]);
    assert_eq!(w.window(p), Some((256, 286)));
}

/// `Wheel::at_deadlines`: "`advance(now)` fires exactly the timers whose deadline is at or
/// before `now`, in deadline order, and a window only sets how late [`Wheel::next_wakeup`] may
/// be."
#[test]
fn a_wheel_at_deadlines_fires_by_deadline_and_wakes_by_window_end() {
    let mut w = Wheel::at_deadlines();
    w.start_with(1_000, 5_000, 'a').unwrap();
    w.start(1_001, 'b').unwrap();
    w.start_with(999, 1, 'c').unwrap();
    assert_eq!(w.next_expiry(), Some(999));
    assert_eq!(w.next_wakeup(), Some(1_000));
    assert!(run(&mut w, 998).is_empty());
    assert_eq!(values(&run(&mut w, 999)), ['c']);
    assert_eq!(w.next_wakeup(), Some(1_001));
    assert_eq!(
        run(&mut w, 1_001),
        [('a', 1_000, 1_000, 0), ('b', 1_001, 1_001, 0)]
    );
}

/// Wheel docs: "Driving the wheel by `next_wakeup` fires every timer inside its window"
/// (`docs/wheel.md`: "Never before the deadline, never after the window's end").
#[test]
fn a_driver_that_sleeps_until_next_wakeup_fires_every_timer_inside_its_window() {
    let mut rng = Rng(0xACE0_FBA5_E000_0001);
    let mut w: Wheel<(Tick, Tick)> = Wheel::new();
    for _ in 0..3_000 {
        let deadline = 1 + rng.below(1 << 22);
        let tolerance = match rng.below(4) {
            0 => 0,
            1 => deadline / 20,
            2 => rng.below(1 << 16),
            _ => rng.below(1 << 24),
        };
        w.start_with(deadline, tolerance, (deadline, tolerance))
            .unwrap();
    }
    let mut fired = 0;
    while let Some(wake) = w.next_wakeup() {
        assert!(wake >= w.now());
        let _ = w.advance(wake, Budget::UNLIMITED, |t, e| {
            let (d, tol) = e.value;
            let now = t.now();
            assert!(
                now >= d && now <= window_end(d, tol),
                "[{d}, {}] fired at {now}",
                window_end(d, tol)
            );
            fired += 1;
        });
    }
    assert_eq!(fired, 3_000);
}

/// `Wheel::start_periodic`: "then every `period` after its previous deadline, each window
/// `tolerance` wide"; driven by `next_wakeup`, every firing lies in its window ("Never before
/// the deadline, never after the window's end"), for every policy with a tolerance below the
/// period.
#[test]
fn periodic_windows_driven_by_next_wakeup_hold_every_firing() {
    let mut rng = Rng(0x5EED_0000_0000_0042);
    let mut w: Wheel<Tick> = Wheel::new();
    let policies = [Missed::Burst, Missed::Delay, Missed::Skip];
    for i in 0..200 {
        let period = 1 + rng.below(1 << 20);
        let tolerance = rng.below(period);
        let first = rng.below(1 << 20);
        w.start_periodic(first, period, tolerance, policies[i % 3], tolerance)
            .unwrap();
    }
    let mut fired = 0u64;
    while let Some(wake) = w.next_wakeup() {
        if wake > 1 << 26 {
            break;
        }
        let _ = w.advance(wake, Budget::UNLIMITED, |t, e| {
            let end = window_end(e.deadline, e.value);
            let now = t.now();
            assert!(
                now >= e.deadline && now <= end,
                "[{}, {end}] fired at {now}",
                e.deadline
            );
            assert_eq!(e.overruns, 0, "driven on time, nothing is missed");
            fired += 1;
        });
    }
    assert!(fired > 200);
    assert_eq!(w.len(), 200);
}

// ---------------------------------------------------------------------------------------------
// Reset order
// ---------------------------------------------------------------------------------------------

/// `Timers::reset`: "among equal deadlines it now counts as started last"; `Wheel::reset`:
/// "when it already is the last of the slot it stays in, it is not even relinked".
#[test]
fn a_reset_timer_counts_as_started_last_among_equal_deadlines() {
    let mut w = Wheel::new();
    let a = w.start(100, 'a').unwrap();
    let _b = w.start(100, 'b').unwrap();
    let c = w.start(100, 'c').unwrap();
    let d = w.start(101, 'd').unwrap();
    // d is the last of the slot: its reset to 100 takes the fast path and counts last.
    assert_eq!(w.reset(d, 100, 0), Some(101));
    assert_eq!(w.reset(a, 100, 0), Some(100));
    assert_eq!(w.reset(c, 100, 0), Some(100));
    assert_eq!(w.stats().reset, 3);
    assert_eq!(values(&run(&mut w, 200)), ['b', 'd', 'a', 'c']);

    // The same with the wheel's time inside the level-1 slot and tolerant resets.
    let mut w = Wheel::new();
    let _ = run(&mut w, 70);
    let x = w.start_with(1_000, 1_000, 'x').unwrap();
    let y = w.start(1_024, 'y').unwrap();
    let _z = w.start(1_024, 'z').unwrap();
    assert_eq!(w.reset(x, 1_000, 1_000), Some(1_000));
    assert_eq!(w.reset(y, 1_000, 1_000), Some(1_024));
    assert_eq!(values(&run(&mut w, 2_000)), ['z', 'x', 'y']);
}

/// `Wheel::reset`: "The timer keeps its handle, its value and, when periodic, its period (the
/// new tolerance applies to its later periods too)".
#[test]
fn a_periodic_reset_keeps_the_period_and_takes_the_new_tolerance() {
    let mut w = Wheel::new();
    let h = w.start_periodic(100, 1_000, 0, Missed::Skip, 'p').unwrap();
    assert_eq!(w.reset(h, 150, 200), Some(100));
    assert_eq!(w.schedule(h), Some((1_000, Missed::Skip)));
    assert_eq!(w.window(h), Some((150, 350)));
    let log = run(&mut w, 1_000);
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].1, 150);
    assert_eq!(w.window(h), Some((1_150, 1_350)));
    assert_eq!(w.deadline(h), Some(1_150));
}

// ---------------------------------------------------------------------------------------------
// Periodic timers
// ---------------------------------------------------------------------------------------------

/// `Missed` table: Burst "last deadline + period ... the wheel replays each one at its own
/// time"; `Expired::overruns`: "the whole periods this firing missed"; `Missed::next`: "The
/// periods missed are `(now - deadline) / period` once `now` has reached `deadline + period`".
#[test]
fn burst_replays_each_missed_period_at_its_own_time_with_its_own_overruns() {
    let mut w = Wheel::new();
    let h = w.start_periodic(100, 30, 0, Missed::Burst, 'p').unwrap();
    let log = run(&mut w, 190);
    let seen: Vec<(Tick, Tick, u64)> = log.iter().map(|f| (f.1, f.2, f.3)).collect();
    assert_eq!(
        seen,
        [(100, 100, 3), (130, 130, 2), (160, 160, 1), (190, 190, 0)]
    );
    assert_eq!(w.deadline(h), Some(220));
    assert_eq!(w.overruns(h), Some(0));
}

/// `Missed::Skip`: "the next deadline is the first point of the grid after now" (strictly
/// after: a `now` on the grid is not the next deadline); `Missed::Delay`: "Restart the period
/// from the caller's time of the late firing"; late by less than a period, every policy stays
/// on the grid ("On time, the next deadline is always the last deadline plus the period").
#[test]
fn skip_and_delay_at_an_exact_multiple_of_the_period_and_within_one_period() {
    for (policy, next_after_160, overruns) in [
        (Missed::Skip, 190, 2),
        (Missed::Delay, 190, 2),
        (Missed::Burst, 130, 2),
    ] {
        let mut w = Wheel::new();
        w.start_periodic(100, 30, 0, policy, 'p').unwrap();
        let mut first = None;
        let _ = w.advance(160, Budget::UNLIMITED, |t, e| {
            if first.is_none() {
                first = Some((e.deadline, e.overruns, t.deadline(e.handle)));
            }
        });
        assert_eq!(
            first,
            Some((100, overruns, Some(next_after_160))),
            "{policy:?}"
        );
        assert_eq!(
            Missed::next(policy, 100, 30, 160),
            (Some(next_after_160), 2)
        );
        // Within one period late: back on the grid.
        let mut w = Wheel::new();
        let h2 = w.start_periodic(100, 30, 0, policy, 'q').unwrap();
        let log = run(&mut w, 129);
        assert_eq!(log, [('q', 100, 100, 0)], "{policy:?}");
        assert_eq!(w.deadline(h2), Some(130), "{policy:?}");
        assert_eq!(w.overruns(h2), Some(0));
    }
    // Delay off the grid: late by 75 with a period of 30.
    let mut w = Wheel::new();
    let h = w.start_periodic(100, 30, 0, Missed::Delay, 'd').unwrap();
    let _ = run(&mut w, 175);
    assert_eq!((w.deadline(h), w.overruns(h)), (Some(205), Some(2)));
    let mut w = Wheel::new();
    let h = w.start_periodic(100, 30, 0, Missed::Skip, 's').unwrap();
    let _ = run(&mut w, 175);
    assert_eq!((w.deadline(h), w.overruns(h)), (Some(190), Some(2)));
}

/// `Expired::handle`: "A one-shot timer's is already stale when the callback runs; a periodic
/// timer's stays valid (it has been re-armed), so the callback can stop it"; `Timers` docs:
/// "The callback's own handle is stale for a one-shot timer (a reset answers `None`)".
#[test]
fn inside_the_callback_a_one_shot_handle_is_stale_and_a_periodic_one_is_rearmed() {
    let mut w = Wheel::new();
    let one = w.start(10, 1u8).unwrap();
    let per = w.start_periodic(10, 7, 0, Missed::Burst, 2u8).unwrap();
    let mut checked = 0;
    let _ = w.advance(10, Budget::UNLIMITED, |t, e| {
        if e.value == 1 {
            assert_eq!(e.handle, one);
            assert!(!t.contains(e.handle));
            assert_eq!(t.deadline(e.handle), None);
            assert_eq!(t.reset(e.handle, 50, 0), None);
            assert_eq!(t.stop(e.handle), None);
        } else {
            assert_eq!(e.handle, per);
            assert!(t.contains(e.handle));
            assert_eq!(t.deadline(e.handle), Some(17));
            assert_eq!(t.stop(e.handle), Some(2));
        }
        checked += 1;
    });
    assert_eq!(checked, 2);
    assert!(w.is_empty());
}

/// `Wheel::set_period`: "Changes the period ... from its next firing on (the pending deadline
/// stays); returns the previous period. `None` for a one-shot timer, a stale handle or a zero
/// period, and nothing changes".
#[test]
fn set_period_applies_from_the_next_firing_and_refuses_what_it_documents() {
    let mut w = Wheel::new();
    let h = w.start_periodic(10, 10, 0, Missed::Burst, 'p').unwrap();
    let one = w.start(1_000, 'o').unwrap();
    assert_eq!(w.set_period(h, 0), None);
    assert_eq!(w.schedule(h), Some((10, Missed::Burst)));
    assert_eq!(w.set_period(one, 5), None);
    assert_eq!(w.schedule(one), None);
    assert_eq!(w.set_period(h, 25), Some(10));
    assert_eq!(w.deadline(h), Some(10), "the pending deadline stays");
    assert_eq!(w.schedule(h), Some((25, Missed::Burst)));
    let log = run(&mut w, 10);
    assert_eq!(log, [('p', 10, 10, 0)]);
    assert_eq!(w.deadline(h), Some(35));
    // From inside its own callback: the timer is already re-armed with the old period.
    let _ = w.advance(35, Budget::UNLIMITED, |t, e| {
        assert_eq!(t.deadline(e.handle), Some(60));
    });
    assert_eq!(w.set_period(h, 100), Some(25));
    assert_eq!(w.deadline(h), Some(60));
    let _ = run(&mut w, 60);
    assert_eq!(w.deadline(h), Some(160));
    // A stale handle.
    assert_eq!(w.stop(h), Some('p'));
    assert_eq!(w.set_period(h, 5), None);
    assert_eq!(w.schedule(h), None);
}

/// `Wheel::start_periodic`: "A zero period is [`Error::ZeroPeriod`]" (nothing started); with a
/// fixed capacity, `with_capacity`: "`start` and `start_with` return [`Error::Full`] beyond
/// that" and the periodic start is refused the same way.
#[test]
fn start_periodic_refusals_leave_the_wheel_unchanged() {
    let mut w: Wheel<u8> = Wheel::with_capacity(1).unwrap();
    assert_eq!(
        w.start_periodic(5, 0, 0, Missed::Skip, 1),
        Err(Error::ZeroPeriod)
    );
    assert!(w.is_empty());
    assert_eq!(w.stats().started, 0);
    w.start(5, 1).unwrap();
    assert_eq!(
        w.start_periodic(5, 5, 0, Missed::Skip, 2),
        Err(Error::Full { capacity: 1 })
    );
    assert_eq!(w.len(), 1);
    assert_eq!(w.stats().started, 1);
    w.check_invariants().unwrap();
}

// ---------------------------------------------------------------------------------------------
// Drains, budgets, panics and the pull interface
// ---------------------------------------------------------------------------------------------

/// Crate docs: "a timer started between calls fires at the start of the next call; one a
/// callback starts while a tick is processed fires right after that tick, at the same tick."
#[test]
fn overdue_starts_fire_at_the_start_of_the_next_call_or_right_after_the_tick() {
    let mut w = Wheel::new();
    w.start(50, 'a').unwrap();
    w.start(51, 'b').unwrap();
    let _ = run(&mut w, 40);
    w.start(10, 'z').unwrap();
    let mut log = Vec::new();
    let _ = w.advance(60, Budget::UNLIMITED, |t, e| {
        log.push((e.value, t.now()));
        if e.value == 'a' {
            t.start(20, 'c').unwrap();
            t.start(50, 'd').unwrap();
        }
    });
    assert_eq!(log, [('z', 40), ('a', 50), ('c', 50), ('d', 50), ('b', 51)]);
}

/// Crate docs, "Budgets": "When the budget runs out, `advance` returns with
/// [`Progress::complete`] false and the exact position saved; the next call resumes there";
/// `Budget::steps`: "At most `steps` steps"; "Zero is taken as one, so every call makes
/// progress".
#[test]
fn budgeted_advances_of_every_small_size_match_the_unlimited_one() {
    fn load(w: &mut Wheel<u32>) {
        let mut rng = Rng(77);
        for i in 0..300u32 {
            let deadline = rng.below(1 << (6 * (1 + i % 4)));
            let tolerance = if i % 3 == 0 { rng.below(5_000) } else { 0 };
            w.start_with(deadline, tolerance, i).unwrap();
        }
        w.start_periodic(3, 1_000, 0, Missed::Burst, 1_000).unwrap();
    }
    let react = |t: &mut dyn Timers<u32>, e: &Expired<u32>| {
        // Every seventh firing starts an overdue timer and a near one.
        if e.value.is_multiple_of(7) && e.value < 1_000 {
            t.start(0, 2_000 + e.value).unwrap();
            t.start(t.now() + 1, 3_000 + e.value).unwrap();
        }
    };
    let mut whole = Wheel::new();
    load(&mut whole);
    let mut expected = Vec::new();
    let p = whole.advance(20_000, Budget::UNLIMITED, |t, e| {
        expected.push((e.value, e.deadline, t.now(), e.overruns));
        react(t, &e);
    });
    assert!(p.complete);
    for steps in [0u64, 1, 2, 3, 5, 64] {
        let mut w = Wheel::new();
        load(&mut w);
        let mut got = Vec::new();
        let mut calls = 0;
        loop {
            calls += 1;
            assert!(calls < 100_000, "budget {steps}: no end");
            let before = got.len();
            let p = w.advance(20_000, Budget::steps(steps), |t, e| {
                got.push((e.value, e.deadline, t.now(), e.overruns));
                react(t, &e);
            });
            assert!(
                p.steps >= 1 && p.steps <= steps.max(1),
                "budget {steps}: {p:?}"
            );
            assert_eq!(p.fired, got.len() - before);
            if p.complete {
                break;
            }
        }
        assert_eq!(got, expected, "budget {steps}");
        assert_eq!(w.now(), 20_000);
    }
}

/// `Progress::complete`: "`true` when the cursor reached the target and every due timer fired;
/// `false` when the budget ran out first": a budget of exactly the steps the work takes
/// completes.
#[test]
fn a_budget_of_exactly_the_steps_needed_completes() {
    fn load(w: &mut Wheel<u32>) {
        for i in 0..50u32 {
            w.start(u64::from(i) * 97 % 5_000, i).unwrap();
        }
    }
    let mut w = Wheel::new();
    load(&mut w);
    let need = w.advance(6_000, Budget::UNLIMITED, |_, _| {}).steps;
    let mut w = Wheel::new();
    load(&mut w);
    let p = w.advance(6_000, Budget::steps(need), |_, _| {});
    assert_eq!((p.complete, p.steps, p.fired), (true, need, 50));
    let mut w = Wheel::new();
    load(&mut w);
    let p = w.advance(6_000, Budget::steps(need - 1), |_, _| {});
    assert!(!p.complete);
}

/// `Progress::complete`: "every timer due when the call's last drain began fired (a periodic
/// timer whose firing re-arms it in the past, as a Burst timer started periods late is, waits
/// for the next call's drain)"; `Missed::Burst`: "catching up one firing per drain".
#[test]
fn a_burst_timer_started_late_catches_up_one_period_per_call() {
    let mut w = Wheel::new();
    let _ = run(&mut w, 100);
    let h = w.start_periodic(20, 30, 0, Missed::Burst, 'p').unwrap();
    let mut fired = Vec::new();
    for _ in 0..3 {
        let p = w.advance(100, Budget::UNLIMITED, |_, e| fired.push(e.deadline));
        assert!(p.complete);
    }
    assert_eq!(fired, [20, 50, 80]);
    assert_eq!(w.deadline(h), Some(110));
    assert!(!w.may_expire_at(100), "nothing due any more");
}

/// `Scheme::advance`: "A callback that panics ends the call ... the timer whose callback
/// panicked has fired ..., and the next call resumes exactly as after a budget ran out at that
/// timer"; `Wheel::next_wakeup`: "the wheel's own time when `advance` has work at it (... or
/// left unfinished by a budget or a panicking callback)".
#[test]
fn a_panicking_one_shot_callback_leaves_a_call_that_resumes_like_a_budgeted_one() {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    fn load(w: &mut Wheel<u8>) {
        for (i, d) in [10u64, 10, 10, 20, 4_000].into_iter().enumerate() {
            w.start(d, i as u8).unwrap();
        }
    }
    let mut w = Wheel::new();
    load(&mut w);
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let _ = w.advance(5_000, Budget::UNLIMITED, |_, e| {
            if e.value == 1 {
                panic!("deliberate");
            }
        });
    }));
    std::panic::set_hook(hook);
    assert!(caught.is_err());
    assert_eq!(w.len(), 3, "the panicking timer has fired");
    let at = w.now();
    assert_eq!(w.next_wakeup(), Some(at));
    let rest = run(&mut w, 5_000);
    // The same position as a budget that ran out right after timer 1 fired.
    let mut b = Wheel::new();
    load(&mut b);
    let mut first = Vec::new();
    loop {
        let p = b.advance(5_000, Budget::steps(1), |_, e| first.push(e.value));
        if first.len() == 2 {
            assert!(!p.complete);
            break;
        }
    }
    assert_eq!(b.now(), at, "the same cursor");
    assert_eq!(values(&rest), values(&run(&mut b, 5_000)));
    assert_eq!(values(&rest), [2, 3, 4]);
    w.check_invariants().unwrap();
}

/// `Wheel::poll_expired`: "`None` once nothing is due at or before `now`; the wheel's time is
/// then `now`"; "time never going backwards".
#[test]
fn poll_expired_ends_at_now_and_never_moves_time_back() {
    let mut w = Wheel::new();
    w.start(10, 'a').unwrap();
    w.start_with(20, 1_000, 'b').unwrap();
    w.start(200, 'c').unwrap();
    let e = w.poll_expired(100).unwrap();
    assert_eq!((e.value, e.deadline), ('a', 10));
    assert!(w.poll_expired(100).is_some());
    assert!(w.poll_expired(100).is_none());
    assert_eq!(w.now(), 100);
    assert!(w.poll_expired(50).is_none());
    assert_eq!(w.now(), 100);
    assert_eq!(w.len(), 1);
    assert_eq!(w.next_expiry(), Some(200));
}

/// `Wheel::poll_expired`: "a `now` before the target of an advance a budget left unfinished is
/// ignored: the pulls finish that work first"; `Scheme::advance`: "A `now` earlier than a
/// previous target is ignored".
#[test]
fn poll_expired_after_an_unfinished_advance_finishes_that_advance() {
    let mut w = Wheel::new();
    for d in [10u64, 20, 80, 90] {
        w.start(d, d).unwrap();
    }
    let p = w.advance(100, Budget::steps(2), |_, _| {});
    assert!(!p.complete);
    let mut pulled = Vec::new();
    while let Some(e) = w.poll_expired(60) {
        pulled.push(e.deadline);
    }
    assert_eq!(pulled, [20, 80, 90]);
    assert_eq!(w.now(), 100);
}

/// Crate docs: "a timer started between calls fires at the start of the next call (after what
/// remains of a tick a budget interrupted)"; `Wheel::poll_expired`: "a timer started or reset
/// between calls is placed as it would be between two budgeted `advance` calls".
#[test]
fn a_timer_started_between_pulls_of_one_tick_fires_after_the_rest_of_that_tick() {
    let mut w = Wheel::new();
    for v in ['a', 'b', 'c'] {
        w.start(10, v).unwrap();
    }
    assert_eq!(w.poll_expired(10).map(|e| e.value), Some('a'));
    w.start(5, 'z').unwrap();
    let order: Vec<char> = std::iter::from_fn(|| w.poll_expired(10).map(|e| e.value)).collect();
    assert_eq!(order, ['b', 'c', 'z']);
}

/// `Wheel::peek`: "The timer that `advance` or [`Wheel::poll_expired`] fires next once time
/// reaches it", in the same situation as above.
#[test]
fn peek_names_the_timer_the_next_pull_fires_between_pulls_of_one_tick() {
    let mut w = Wheel::new();
    for v in ['a', 'b', 'c'] {
        w.start(10, v).unwrap();
    }
    assert_eq!(w.poll_expired(10).map(|e| e.value), Some('a'));
    w.start(5, 'z').unwrap();
    while let Some(h) = w.peek() {
        let e = w.poll_expired(10).unwrap();
        assert_eq!(e.handle, h, "peek named {h:?}, the pull fired {}", e.value);
    }
    assert!(w.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Handles
// ---------------------------------------------------------------------------------------------

/// `Handle::generation`: "counted ... from 1 in the production wheel"; `Wheel::owner`: "with it
/// a caller short of space can keep only a handle's id and make the handle again with
/// [`Handle::from_parts`]"; `Handle`: "the old handle is rejected: it never acts on someone
/// else's timer".
#[test]
fn wheel_handles_start_at_generation_one_and_rebuild_from_their_id_and_owner() {
    let mut w = Wheel::new();
    let h = w.start(10, 1).unwrap();
    assert_eq!((h.index(), h.generation()), (0, 1));
    assert_eq!(h.owner(), w.owner().get());
    let (id, _) = h.to_parts();
    let again = Handle::from_parts(id, w.owner().get());
    assert_eq!(again, h);
    assert_eq!(w.deadline(again), Some(10));
    assert_eq!(w.owner().slot(h), Some((0, 1)));
    assert_eq!(w.stop(again), Some(1));
    let next = w.start(20, 2).unwrap();
    assert_eq!((next.index(), next.generation()), (0, 2));
    for stale in [h, again] {
        assert_eq!(w.stop(stale), None);
        assert_eq!(w.reset(stale, 5, 0), None);
        assert_eq!(w.window(stale), None);
        assert_eq!(w.value_mut(stale), None);
    }
    // The right id with another owner, and the next generation made up: rejected.
    assert_eq!(w.deadline(Handle::from_parts(next.to_parts().0, 0)), None);
    assert_eq!(w.deadline(w.owner().handle(0, 3)), None);
    assert_eq!(w.deadline(next), Some(20));
}

// ---------------------------------------------------------------------------------------------
// Walks: iter and pending_from
// ---------------------------------------------------------------------------------------------

/// `Wheel::pending_from`: "The first pending timer at or after position `from` ... Pass
/// `position + 1` to get the next; `None` past the last"; "A walk sees every timer that stays
/// pending throughout it exactly once"; "A timer due but not yet taken by `advance` or
/// `poll_expired` is still pending"; `Timers::deadline`: "a periodic timer's next one".
#[test]
fn pending_from_walks_every_steady_timer_once_while_others_come_and_go() {
    let mut w = Wheel::new();
    let mut steady = Vec::new();
    let mut churn = Vec::new();
    for i in 0..60u32 {
        let h = w.start(100 + u64::from(i % 7), i).unwrap();
        if i % 3 == 0 {
            churn.push(h);
        } else {
            steady.push((h, 100 + u64::from(i % 7), i));
        }
    }
    let mut seen = Vec::new();
    let mut from = 0;
    let mut extra = 1_000;
    while let Some((at, h, deadline, &v)) = w.pending_from(from) {
        assert!(at >= from);
        seen.push((h, deadline, v));
        from = at + 1;
        // Between steps: stop a churning timer and start another.
        if let Some(c) = churn.pop() {
            w.stop(c).unwrap();
            w.start(5, extra).unwrap();
            extra += 1;
        }
    }
    for s in &steady {
        assert_eq!(seen.iter().filter(|x| *x == s).count(), 1, "{s:?}");
    }
    assert_eq!(w.pending_from(usize::MAX), None);
    assert_eq!(w.pending_from(from), None);
    // Due but not yet taken: still walked, with its deadline.
    let mut w = Wheel::new();
    w.start(5, 'a').unwrap();
    w.start(5, 'b').unwrap();
    let p = w.start_periodic(3, 10, 0, Missed::Burst, 'p').unwrap();
    assert_eq!(w.poll_expired(10).map(|e| e.value), Some('p'));
    assert_eq!(w.poll_expired(10).map(|e| e.value), Some('a'));
    let mut left: Vec<(Tick, char)> = w.iter().map(|(_, d, &v)| (d, v)).collect();
    left.sort();
    assert_eq!(left, [(5, 'b'), (13, 'p')]);
    assert_eq!(w.deadline(p), Some(13));
}

// ---------------------------------------------------------------------------------------------
// Memory: reserve, capacity, shrink_to_fit, with_capacity
// ---------------------------------------------------------------------------------------------

/// `Wheel::capacity`: "How many timers the wheel holds without allocating"; `Wheel::reserve`:
/// "Exact: ... grows it to what is asked and no further"; `docs/wheel.md`: "a start that finds
/// no free slot still grows the slab by doubling"; `Wheel::shrink_to_fit`: "Gives back the
/// slab's spare capacity ... The slots of stopped and fired timers stay, free for the next
/// starts: each keeps its generation".
#[test]
fn capacity_reserve_and_shrink_to_fit_do_what_they_say() {
    let mut w: Wheel<u64> = Wheel::new();
    assert_eq!(w.capacity(), 0);
    w.reserve(100).unwrap();
    assert_eq!(w.capacity(), 100);
    let held = w.memory_bytes();
    let hs: Vec<Handle> = (0..100).map(|i| w.start(i + 1, i).unwrap()).collect();
    assert_eq!((w.capacity(), w.memory_bytes()), (100, held));
    // Room for 10 more than are pending, counted past the pending ones.
    w.reserve(10).unwrap();
    assert_eq!(w.capacity(), 110);
    for i in 0..10 {
        w.start(1_000 + i, i).unwrap();
    }
    assert_eq!(w.capacity(), 110);
    // The next start doubles.
    w.start(5_000, 0).unwrap();
    assert_eq!(w.capacity(), 220);
    // Stop the first hundred, shrink: the slots stay (111 of them), the spare room goes.
    for &h in &hs {
        w.stop(h).unwrap();
    }
    let before = w.memory_bytes();
    w.shrink_to_fit();
    assert_eq!(w.capacity(), 111);
    assert!(w.memory_bytes() < before);
    let shrunk = w.memory_bytes();
    let again: Vec<Handle> = (0..100).map(|i| w.start(i + 1, i).unwrap()).collect();
    assert_eq!(w.memory_bytes(), shrunk, "the freed slots took the starts");
    for (old, new) in hs.iter().zip(&again) {
        assert_eq!(w.deadline(*old), None, "a stale handle stays stale");
        assert!(new.generation() > old.generation() || new.index() != old.index());
    }
    w.check_invariants().unwrap();
}

/// `Wheel::with_capacity`: "An empty wheel holding at most `capacity` timers, all allocated
/// here: `start` and `start_with` return [`Error::Full`] beyond that and never allocate";
/// `Wheel::capacity`: "a fixed capacity's own figure"; `Wheel::reserve` on such a wheel: "this
/// checks that they fit"; `shrink_to_fit` gives back only room "never used".
#[test]
fn a_fixed_capacity_holds_exactly_that_many_and_never_allocates() {
    let mut w: Wheel<u64> = Wheel::with_capacity(8).unwrap();
    let held = w.memory_bytes();
    assert_eq!(w.capacity(), 8);
    w.shrink_to_fit();
    assert_eq!((w.capacity(), w.memory_bytes()), (8, held));
    let hs: Vec<Handle> = (0..8).map(|i| w.start_with(i, i, i).unwrap()).collect();
    assert_eq!(w.start(100, 8), Err(Error::Full { capacity: 8 }));
    assert_eq!(w.start_with(100, 5, 8), Err(Error::Full { capacity: 8 }));
    assert_eq!(w.reserve(1), Err(Error::Full { capacity: 8 }));
    assert_eq!(w.reserve(0), Ok(()));
    assert_eq!(w.len(), 8);
    assert_eq!(w.memory_bytes(), held);
    w.stop(hs[3]).unwrap();
    assert_eq!(w.reserve(1), Ok(()));
    w.start(100, 8).unwrap();
    assert_eq!(w.memory_bytes(), held);
    assert_eq!(w.capacity(), 8);
}

/// `docs/wheel.md`: "33.6 bytes per timer at N = 10^6 with `u64` values (32.0 with `reserve` or
/// a fixed capacity)"; "the slots' sentinels and minimums are 17 KiB".
#[test]
fn a_reserved_or_fixed_wheel_of_u64_values_costs_32_bytes_a_timer_plus_17_kib() {
    let n = 50_000usize;
    let mut r: Wheel<u64> = Wheel::new();
    r.reserve(n).unwrap();
    let f: Wheel<u64> = Wheel::with_capacity(n).unwrap();
    let u: Wheel<()> = Wheel::with_capacity(n).unwrap();
    for (bytes, per) in [
        (r.memory_bytes(), 32),
        (f.memory_bytes(), 32),
        (u.memory_bytes(), 24),
    ] {
        let fixed = bytes - per * n;
        assert!(
            bytes >= per * n && fixed <= 17 * 1024 + 512,
            "{bytes} bytes: {fixed} beyond {per} a timer"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------------------------

/// `WheelStats`: "started: Timers started (resets not included)", "stopped: Timers stopped
/// before they fired", "fired: Timers fired", "clamped: `advance` calls that asked for a time
/// earlier than the wheel's", "max_lateness: ... the wheel's time at firing minus the
/// deadline"; `Wheel::clear`: "the dropped timers count as stopped".
#[test]
fn stats_count_what_their_fields_say() {
    let mut w = Wheel::new();
    let a = w.start(10, 'a').unwrap();
    w.start_with(1_000, 1_000, 'b').unwrap();
    let p = w.start_periodic(5, 5, 0, Missed::Skip, 'p').unwrap();
    w.reset(a, 11, 0).unwrap();
    let _ = run(&mut w, 1_100);
    let s = w.stats();
    assert_eq!((s.started, s.reset, s.stopped), (3, 1, 0));
    // p at 5 (Skip: next 1_105), a at 11, b at its instant 1_024, 24 ticks after its deadline.
    assert_eq!(s.fired, 3);
    assert_eq!(s.max_lateness, 24);
    assert_eq!(w.deadline(p), Some(1_105));
    let _ = run(&mut w, 1_000);
    assert_eq!(w.stats().clamped, 1);
    w.start(5_000, 'c').unwrap();
    w.clear();
    assert_eq!(w.stats().stopped, 2);
    assert_eq!(w.deadline(p), None);
}

// ---------------------------------------------------------------------------------------------
// The generic slab
// ---------------------------------------------------------------------------------------------

/// `Slab::with_capacity`: "with `fixed`, it never holds more slots than that and never
/// allocates again"; `Slab::insert`: "[`Error::Full`] when a fixed slab has no free slot ...
/// The slab is unchanged then"; `Slab::remove`: "The slot's generation moves on, so every
/// handle to it goes stale"; `Slab::capacity`: "The slots a fixed slab may hold"; `Slab::slots`:
/// "one past the largest index used"; `Slab::iter`: "in index order".
#[test]
fn a_fixed_slab_refuses_past_its_capacity_and_moves_generations_on() {
    let mut s: Slab<char> = Slab::with_capacity(3, true).unwrap();
    let held = s.memory_bytes();
    assert_eq!(s.capacity(), 3);
    let idx: Vec<u32> = ['a', 'b', 'c']
        .iter()
        .map(|&v| s.insert(v).unwrap())
        .collect();
    assert_eq!(idx, [0, 1, 2]);
    assert_eq!(s.insert('d'), Err(Error::Full { capacity: 3 }));
    assert_eq!(s.reserve(), Err(Error::Full { capacity: 3 }));
    assert_eq!((s.len(), s.slots(), s.memory_bytes()), (3, 3, held));
    let hb = s.handle(1).unwrap();
    assert_eq!(hb.generation(), 0, "a slab's generations count from 0");
    assert_eq!(s.remove(1), Some('b'));
    assert_eq!(s.remove(1), None);
    assert_eq!(s.resolve(hb), None);
    assert_eq!(s.insert('e'), Ok(1));
    let he = s.handle(1).unwrap();
    assert_eq!(he.generation(), 1);
    assert_eq!(s.resolve(he), Some(1));
    assert_eq!(s.resolve(hb), None);
    assert_eq!(s[1], 'e');
    *s.get_mut(1).unwrap() = 'f';
    let all: Vec<(u32, char)> = s.iter().map(|(i, &v)| (i, v)).collect();
    assert_eq!(all, [(0, 'a'), (1, 'f'), (2, 'c')]);
    assert_eq!(s.memory_bytes(), held);
    assert_eq!(
        Slab::<char>::new().resolve(he),
        None,
        "another slab's handle"
    );
    assert_eq!(s.owner().slot(he), Some((1, 1)));
    s.check().unwrap();
}

/// `Slab::reserve`: "Makes sure the next [`Slab::insert`] succeeds without allocating";
/// `Slab::with_capacity`: "[`Error::Config`] for a capacity above [`MAX_SLOTS`]"; `Slab::get`
/// and `Slab::handle`: `None` when the slot holds none.
#[test]
fn a_growing_slab_reserves_ahead_and_answers_none_for_empty_slots() {
    assert!(matches!(
        Slab::<u8>::with_capacity(MAX_SLOTS + 1, false),
        Err(Error::Config { .. })
    ));
    let mut s: Slab<u32> = Slab::with_capacity(2, false).unwrap();
    assert!(s.capacity() >= 2);
    for i in 0..40 {
        s.reserve().unwrap();
        let bytes = s.memory_bytes();
        s.insert(i).unwrap();
        assert_eq!(
            s.memory_bytes(),
            bytes,
            "insert {i} allocated after reserve"
        );
    }
    assert_eq!((s.len(), s.is_empty(), s.slots()), (40, false, 40));
    assert_eq!(
        (s.get(40), s.handle(40), s.get(u32::MAX)),
        (None, None, None)
    );
    s.remove(7).unwrap();
    assert_eq!((s.get(7), s.handle(7)), (None, None));
    assert_eq!(s.slots(), 40);
    s.check().unwrap();
}

/// `Slab`'s `Index`: "# Panics When slot `idx` holds no value".
#[test]
#[should_panic(expected = "holds no value")]
fn indexing_an_empty_slab_slot_panics() {
    let mut s: Slab<u8> = Slab::new();
    let i = s.insert(1).unwrap();
    s.remove(i);
    let _ = s[i];
}

// ---------------------------------------------------------------------------------------------
// Time conversions
// ---------------------------------------------------------------------------------------------

/// `Sbt::from_ticks`: "For one tick it is FreeBSD's `tick_sbt`, `SBT_1S / hz` truncated";
/// "[`TimeError::Overflow`] if the time is 2^31 s or longer"; the round trip "is `t`";
/// `Sbt::to_ticks_ceil`: "Zero takes zero ticks; any positive value takes at least one";
/// "[`TimeError::ZeroRate`] if `hz` is zero (checked first)".
#[test]
fn tick_conversions_at_their_documented_edges() {
    for hz in [1u32, 3, 7, 100, 1_000, 1_024, 1_000_000_007, u32::MAX] {
        assert_eq!(
            Sbt::from_ticks(1, hz),
            Ok(Sbt::from_raw(SBT_1S.as_raw() / i64::from(hz))),
            "hz {hz}"
        );
        assert_eq!(Sbt::ZERO.to_ticks_ceil(hz), Ok(0));
        assert_eq!(Sbt::from_raw(1).to_ticks_ceil(hz), Ok(1));
        let limit = (1u64 << 31) * u64::from(hz);
        assert_eq!(
            Sbt::from_ticks(limit, hz),
            Err(TimeError::Overflow),
            "hz {hz}"
        );
        let last = Sbt::from_ticks(limit - 1, hz).unwrap();
        assert_eq!(last.to_ticks_ceil(hz), Ok(limit - 1), "hz {hz}");
        assert_eq!(Sbt::MAX.to_ticks_ceil(hz), Ok(limit), "hz {hz}");
    }
    assert_eq!(Sbt::from_raw(-1).to_ticks_ceil(0), Err(TimeError::ZeroRate));
    assert_eq!(Sbt::from_raw(-1).to_ticks_ceil(1), Err(TimeError::Negative));
}

/// Module docs of `time`, "Rounding": `from_nanos`/`from_micros`/`from_millis` round "up
/// (toward +inf)" and saturate; `to_secs_nanos` and `Display` round "down (toward -inf)";
/// `Sbt::from_secs_nanos`: "`(-1, 500_000_000)` is -0.5 s"; `Display`: "`1.500000000s`,
/// `-0.000000001s`".
#[test]
fn sbt_rounding_directions_and_display_examples() {
    assert_eq!(Sbt::from_nanos(1).as_raw(), 5);
    assert_eq!(Sbt::from_nanos(-1).as_raw(), -4);
    assert_eq!(Sbt::from_micros(-1).as_raw(), -4_294);
    assert_eq!(Sbt::from_millis(1).as_raw(), 4_294_968);
    assert_eq!(Sbt::from_nanos(-1).to_secs_nanos(), (-1, 999_999_999));
    assert_eq!(Sbt::from_nanos(-1).to_string(), "-0.000000001s");
    assert_eq!(Sbt::from_millis(1_500).to_string(), "1.500000000s");
    assert_eq!(
        Sbt::from_secs_nanos(-1, 500_000_000),
        Ok(Sbt::from_raw(-(1 << 31)))
    );
    assert_eq!(Sbt::from_raw(-(1 << 31)).to_string(), "-0.500000000s");
    assert_eq!(Sbt::from_secs(i64::from(i32::MAX) + 1), Sbt::MAX);
    assert_eq!(Sbt::from_secs(i64::from(i32::MIN)), Sbt::MIN);
    assert_eq!(Sbt::from_secs(i64::from(i32::MIN) - 1), Sbt::MIN);
    assert_eq!(Sbt::from_millis(i64::MAX), Sbt::MAX);
    assert_eq!(Sbt::from_micros(i64::MIN), Sbt::MIN);
    assert_eq!(-Sbt::MIN, Sbt::MAX);
    assert_eq!(Sbt::MIN.abs(), Sbt::MAX);
}
