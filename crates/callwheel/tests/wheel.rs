//! The production wheel's own guarantees, beyond the shared conformance suite: tolerance
//! windows, optimal coalescing, reset, the whole u64 range, statistics.

use std::collections::BTreeMap;

use callwheel::{stabbing_optimum, Budget, Handle, Scheme, Tick, Timers};
use callwheel::{Missed, Wheel};
use proptest::prelude::*;

mod oracle;
use oracle::fires_at;

/// Drives the wheel as a tickless driver would: sleep until `next_wakeup`, advance there.
/// Returns the wake-up count and, per fired value, the time it fired.
fn drive(w: &mut Wheel<u64>) -> (usize, BTreeMap<u64, Tick>) {
    let mut fired = BTreeMap::new();
    let mut wakeups = 0;
    while let Some(t) = w.next_wakeup() {
        wakeups += 1;
        let p = w.advance(t, Budget::UNLIMITED, |tm: &mut dyn Timers<u64>, e| {
            assert!(fired.insert(e.value, tm.now()).is_none(), "fired twice");
        });
        assert!(p.complete);
        w.check_invariants().unwrap();
        assert!(wakeups < 1_000_000, "the driver makes progress");
    }
    (wakeups, fired)
}

/// Driven by `next_wakeup`, tolerant timers need at most 1.05 times the fewest wake-ups
/// ([`stabbing_optimum`]) over many workloads pooled: 2,000 sets of 1 to 400 windows, deadlines
/// in [1, 10^6), tolerances in [0, 5·10^4) (one set alone may need more: a wake-up serves only
/// the windows whose firing instant has come).
#[test]
fn tolerant_wakeups_stay_within_5_percent_of_the_optimum_pooled() {
    let mut x = 0x5EED_0000_0000_0007u64;
    let mut next = move || {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let (mut wakeups, mut optimum) = (0u64, 0u64);
    for _ in 0..2_000 {
        let mut w = Wheel::new();
        let mut windows = Vec::new();
        for i in 0..1 + next() % 400 {
            let (d, tol) = (1 + next() % 999_999, next() % 50_000);
            w.start_with(d, tol, i).unwrap();
            windows.push((d, d + tol));
        }
        wakeups += drive(&mut w).0 as u64;
        optimum += stabbing_optimum(&windows);
    }
    println!("{wakeups} wake-ups against an optimum of {optimum}");
    assert!(
        wakeups * 100 <= optimum * 105,
        "{wakeups} wake-ups against an optimum of {optimum}"
    );
}

proptest! {
    #[test]
    fn tolerant_timers_fire_at_their_instants_inside_their_windows(
        timers in proptest::collection::vec((1u64..1_000_000, 0u64..50_000), 1..400),
    ) {
        let mut w = Wheel::new();
        for (i, &(d, tol)) in timers.iter().enumerate() {
            w.start_with(d, tol, i as u64).unwrap();
        }
        let (wakeups, fired) = drive(&mut w);
        prop_assert_eq!(fired.len(), timers.len());
        for (i, &(d, tol)) in timers.iter().enumerate() {
            let t = fired[&(i as u64)];
            prop_assert!(d <= t && t <= d + tol, "timer {i}: fired at {t} outside [{d}, {}]", d + tol);
        }
        for (i, &(d, tol)) in timers.iter().enumerate() {
            prop_assert_eq!(fired[&(i as u64)], fires_at(d, tol), "timer {}: its firing instant", i);
        }
        // Each timer fires at its instant, so a wake-up serves the windows whose instant has
        // come: at least the optimum, and close to it in the pooled count below.
        let windows: Vec<(Tick, Tick)> = timers.iter().map(|&(d, tol)| (d, d + tol)).collect();
        let optimum = stabbing_optimum(&windows);
        prop_assert!(wakeups as u64 >= optimum);
        prop_assert!(wakeups as u64 <= 2 * optimum, "{} wake-ups, optimum {}", wakeups, optimum);
        // Windows narrower than 8 ticks fire at their deadlines: exactly the optimum.
        let narrow: Vec<(Tick, Tick)> = timers.iter().map(|&(d, tol)| (d, d + tol % 8)).collect();
        let mut w = Wheel::new();
        for (i, &(d, tol)) in narrow.iter().enumerate() {
            w.start_with(d, tol - d, i as u64).unwrap();
        }
        prop_assert_eq!(drive(&mut w).0 as u64, stabbing_optimum(&narrow));
    }

    #[test]
    fn after_stops_next_wakeup_may_come_early_but_never_late(
        timers in proptest::collection::vec((1u64..100_000, 0u64..5_000, any::<bool>()), 1..300),
    ) {
        let mut w = Wheel::new();
        let mut kept = Vec::new();
        let mut handles = Vec::new();
        for (i, &(d, tol, _)) in timers.iter().enumerate() {
            handles.push(w.start_with(d, tol, i as u64).unwrap());
        }
        for (i, &(d, tol, stop)) in timers.iter().enumerate() {
            if stop {
                prop_assert_eq!(w.stop(handles[i]), Some(i as u64));
            } else {
                kept.push((i as u64, d, d + tol));
            }
        }
        let (_, fired) = drive(&mut w);
        prop_assert_eq!(fired.len(), kept.len());
        for (i, d, end) in kept {
            let t = fired[&i];
            prop_assert!(d <= t && t <= end, "timer {i}: fired at {t} outside [{d}, {end}]");
        }
    }

    #[test]
    fn reset_agrees_with_an_oracle(
        ops in proptest::collection::vec((0u8..4, 0u64..5_000, 0u64..300, any::<usize>()), 1..300),
    ) {
        // Oracle: pending timers by handle, with their firing instant, the sequence number of
        // their last start or reset and whether they were overdue then; and their deadlines.
        let mut w: Wheel<u64> = Wheel::new();
        let mut deadlines: BTreeMap<Handle, Tick> = BTreeMap::new();
        let mut pending: BTreeMap<Handle, (Tick, u64, bool)> = BTreeMap::new();
        let mut issued: Vec<Handle> = Vec::new();
        let mut seq = 0u64;
        for (kind, a, b, pick) in ops {
            let now = w.now();
            match kind {
                0 => {
                    seq += 1;
                    let d = now + a;
                    let h = w.start_with(d, b, seq).unwrap();
                    issued.push(h);
                    deadlines.insert(h, d);
                    let at = fires_at(d, b);
                    pending.insert(h, (at, seq, at <= now));
                }
                1 if !issued.is_empty() => {
                    let h = issued[pick % issued.len()];
                    seq += 1;
                    let d = now + a;
                    let before = pending.get(&h).map(|_| deadlines[&h]);
                    prop_assert_eq!(w.reset(h, d, b), before);
                    if before.is_some() {
                        deadlines.insert(h, d);
                        let at = fires_at(d, b);
                        pending.insert(h, (at, seq, at <= now));
                    }
                }
                2 if !issued.is_empty() => {
                    let h = issued[pick % issued.len()];
                    let expect = pending.remove(&h).is_some();
                    prop_assert_eq!(w.stop(h).is_some(), expect);
                }
                _ => {
                    let target = now + b;
                    let mut due: Vec<(bool, Tick, u64, Handle)> = pending
                        .iter()
                        .filter(|(_, &(d, _, overdue))| overdue || d <= target)
                        .map(|(&h, &(d, s, overdue))| (!overdue, if overdue { 0 } else { d }, s, h))
                        .collect();
                    due.sort();
                    let mut got = Vec::new();
                    let _ = w.advance(target, Budget::UNLIMITED, |_, e| got.push(e.handle));
                    let expect: Vec<Handle> = due.iter().map(|x| x.3).collect();
                    prop_assert_eq!(&got, &expect, "fired set and order at {}", target);
                    for h in got {
                        pending.remove(&h);
                    }
                }
            }
            w.check_invariants().map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(w.len(), pending.len());
        }
    }
}

proptest! {
    #[test]
    fn periodic_policies_hold_under_any_advance_pattern(
        first in 1u64..500,
        period in 1u64..200,
        policy in prop_oneof![Just(Missed::Burst), Just(Missed::Delay), Just(Missed::Skip)],
        steps in proptest::collection::vec(0u64..700, 1..40),
    ) {
        let mut w = Wheel::new();
        let h = w.start_periodic(first, period, 0, policy, 0).unwrap();
        let mut expected_next = first;
        let mut target = 0;
        for step in steps {
            target += step;
            let log = fire_log(&mut w, target);
            for &(deadline, at) in &log {
                prop_assert_eq!(deadline, expected_next, "deadlines follow the schedule");
                prop_assert_eq!(at, deadline, "each fires at its own deadline");
                expected_next = match policy {
                    Missed::Burst => deadline + period,
                    Missed::Delay if target >= deadline + period => target + period,
                    Missed::Skip if target >= deadline + period => {
                        deadline + ((target - deadline) / period + 1) * period
                    }
                    _ => deadline + period,
                };
            }
            if policy != Missed::Burst {
                prop_assert!(log.len() <= 1, "delay and skip fire at most once per advance");
            }
            prop_assert!(expected_next > target, "nothing due is left behind");
            if let Some(&(deadline, _)) = log.last() {
                let missed = if target >= deadline + period { (target - deadline) / period } else { 0 };
                prop_assert_eq!(w.overruns(h), Some(missed));
            }
        }
        prop_assert_eq!(w.len(), 1);
    }
}

#[test]
fn far_future_and_u64_edge_deadlines_fire_in_order() {
    let mut w = Wheel::new();
    let deadlines = [
        u64::MAX,
        u64::MAX - 1,
        1 << 63,
        (1 << 60) - 1,
        1 << 60,
        1 << 40,
        12345,
        u64::MAX - 64,
    ];
    for (i, &d) in deadlines.iter().enumerate() {
        w.start(d, i as u64).unwrap();
    }
    let mut fired = Vec::new();
    while let Some(t) = w.next_wakeup() {
        let _ = w.advance(t, Budget::UNLIMITED, |tm: &mut dyn Timers<u64>, e| {
            assert_eq!(tm.now(), e.deadline, "exact timers fire at their deadline");
            fired.push(e.deadline);
        });
        w.check_invariants().unwrap();
    }
    let mut sorted = deadlines.to_vec();
    sorted.sort();
    assert_eq!(fired, sorted);
    assert_eq!(w.now(), u64::MAX);
    // At the end of time a new timer is overdue and still fires.
    w.start(5, 99).unwrap();
    let mut late = Vec::new();
    let _ = w.advance(u64::MAX, Budget::UNLIMITED, |_, e| late.push(e.value));
    assert_eq!(late, [99]);
}

#[test]
fn a_window_end_saturates_at_the_end_of_time() {
    let mut w = Wheel::new();
    w.start_with(u64::MAX - 10, u64::MAX, 1).unwrap();
    assert_eq!(w.next_wakeup(), Some(u64::MAX));
    let mut fired = Vec::new();
    let _ = w.advance(u64::MAX, Budget::UNLIMITED, |t: &mut dyn Timers<u64>, e| {
        fired.push((t.now(), e.value))
    });
    assert_eq!(fired, [(u64::MAX - 10, 1)]);
}

#[test]
fn one_jump_per_distinct_deadline_when_driven_by_next_wakeup() {
    let mut w = Wheel::new();
    let mut x = 7u64;
    let mut deadlines = std::collections::BTreeSet::new();
    for i in 0..1000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let d = 1 + (x >> 11) % 1_000_000_000;
        deadlines.insert(d);
        w.start(d, i).unwrap();
    }
    let (wakeups, fired) = drive(&mut w);
    assert_eq!(fired.len(), 1000);
    assert_eq!(
        wakeups,
        deadlines.len(),
        "the wake-up query is exact, not a slot boundary"
    );
}

#[test]
fn reset_keeps_the_handle_and_a_stale_reset_is_rejected() {
    let mut w = Wheel::new();
    let h = w.start(100, 1).unwrap();
    assert_eq!(w.reset(h, 50, 0), Some(100));
    assert_eq!(
        w.reset(h, 60, 0),
        Some(50),
        "reset to the same slot (fast path)"
    );
    let mut fired = Vec::new();
    let _ = w.advance(59, Budget::UNLIMITED, |_, e| {
        fired.push((e.handle, e.deadline))
    });
    assert!(fired.is_empty());
    let _ = w.advance(60, Budget::UNLIMITED, |_, e| {
        fired.push((e.handle, e.deadline))
    });
    assert_eq!(fired, [(h, 60)]);
    assert_eq!(
        w.reset(h, 200, 0),
        None,
        "the timer fired: its handle is stale"
    );
    assert_eq!(
        w.reset(Handle::from_parts(u64::MAX, u64::MAX), 200, 0),
        None
    );
    assert!(w.is_empty());
}

#[test]
fn reset_into_the_past_fires_on_the_next_advance() {
    let mut w = Wheel::new();
    let _ = w.advance(1000, Budget::UNLIMITED, |_, _: callwheel::Expired<u64>| {});
    let h = w.start(5000, 1).unwrap();
    assert_eq!(w.reset(h, 10, 0), Some(5000));
    let mut fired = Vec::new();
    let _ = w.advance(1000, Budget::UNLIMITED, |t: &mut dyn Timers<u64>, e| {
        fired.push((t.now(), e.value))
    });
    assert_eq!(fired, [(1000, 1)]);
}

#[test]
fn stats_count_every_kind_of_event() {
    let mut w = Wheel::new();
    let a = w.start(10, 1).unwrap();
    let b = w.start(100_000, 2).unwrap();
    w.start(7, 3).unwrap();
    // Shares the 5000 timer's level-2 slot and is not due when that slot is processed.
    w.start(5001, 4).unwrap();
    assert_eq!(w.stop(a), Some(1));
    assert_eq!(w.reset(b, 5000, 0), Some(100_000));
    let _ = w.advance(6000, Budget::UNLIMITED, |_, _| {});
    let _ = w.advance(10, Budget::UNLIMITED, |_, _| {}); // earlier: clamped
    let s = w.stats();
    assert_eq!(
        (s.started, s.stopped, s.reset, s.fired, s.clamped),
        (4, 1, 1, 3, 1)
    );
    assert!(s.cascades >= 1, "the 5001 timer cascaded from level 2");
    assert_eq!(
        s.max_lateness, 0,
        "advanced straight to 6000 fires at the slots' times"
    );
    assert_eq!(w.now(), 6000);
}

#[test]
fn lateness_is_measured_from_the_deadline() {
    let mut w = Wheel::new();
    w.start(10, 1).unwrap();
    let _ = w.advance(5, Budget::UNLIMITED, |_, _| {});
    w.start(3, 2).unwrap(); // overdue: fires at the next advance, at time 5
    let _ = w.advance(5, Budget::UNLIMITED, |_, _| {});
    assert_eq!(w.stats().max_lateness, 2);
}

fn fire_log(w: &mut Wheel<u64>, now: Tick) -> Vec<(Tick, Tick)> {
    let mut log = Vec::new();
    let p = w.advance(now, Budget::UNLIMITED, |t: &mut dyn Timers<u64>, e| {
        log.push((e.deadline, t.now()))
    });
    assert!(p.complete);
    w.check_invariants().unwrap();
    log
}

#[test]
fn periodic_timers_rearm_from_their_last_deadline_without_drift() {
    let mut w = Wheel::new();
    let h = w.start_periodic(5, 10, 0, Missed::Skip, 7).unwrap();
    let mut log = Vec::new();
    for t in 1..=100 {
        log.extend(fire_log(&mut w, t));
    }
    let expect: Vec<(Tick, Tick)> = (0..10).map(|k| (5 + 10 * k, 5 + 10 * k)).collect();
    assert_eq!(log, expect);
    assert_eq!(w.overruns(h), Some(0));
    assert_eq!(w.len(), 1, "a periodic timer stays until stopped");
    assert_eq!(w.stop(h), Some(7));
    assert!(w.is_empty());
    assert_eq!(w.overruns(h), None);
    w.check_invariants().unwrap();
}

#[test]
fn missed_periods_follow_the_policy_and_are_counted() {
    // First due at 5, every 10; the wheel is next advanced at 57, five periods late.
    let mut burst = Wheel::new();
    let b = burst.start_periodic(5, 10, 0, Missed::Burst, 1).unwrap();
    let log = fire_log(&mut burst, 57);
    let deadlines: Vec<Tick> = log.iter().map(|l| l.0).collect();
    assert_eq!(
        deadlines,
        [5, 15, 25, 35, 45, 55],
        "burst fires once for every period"
    );
    assert_eq!(burst.overruns(b), Some(0), "caught up by the last firing");

    let mut skip = Wheel::new();
    let s = skip.start_periodic(5, 10, 0, Missed::Skip, 1).unwrap();
    assert_eq!(fire_log(&mut skip, 57), [(5, 5)]);
    assert_eq!(skip.overruns(s), Some(5));
    assert_eq!(
        fire_log(&mut skip, 70),
        [(65, 65)],
        "skip stays on the grid"
    );
    assert_eq!(skip.overruns(s), Some(0));

    let mut delay = Wheel::new();
    let d = delay.start_periodic(5, 10, 0, Missed::Delay, 1).unwrap();
    assert_eq!(fire_log(&mut delay, 57), [(5, 5)]);
    assert_eq!(delay.overruns(d), Some(5));
    assert_eq!(
        fire_log(&mut delay, 70),
        [(67, 67)],
        "delay restarts the period from now"
    );
}

#[test]
fn a_periodic_timer_started_in_the_past_fires_once_then_follows_its_policy() {
    let mut w = Wheel::new();
    let _ = fire_log(&mut w, 100);
    let h = w.start_periodic(20, 30, 0, Missed::Skip, 1).unwrap();
    // Overdue: it fires in the next drain, at the wheel's time, having missed two periods.
    assert_eq!(fire_log(&mut w, 100), [(20, 100)]);
    assert_eq!(w.overruns(h), Some(2));
    assert_eq!(fire_log(&mut w, 110), [(110, 110)]);
}

#[test]
fn a_periodic_callback_can_stop_its_own_timer() {
    let mut w = Wheel::new();
    let h = w.start_periodic(10, 10, 0, Missed::Burst, 1).unwrap();
    let mut n = 0;
    let _ = w.advance(1000, Budget::UNLIMITED, |t: &mut dyn Timers<u64>, e| {
        n += 1;
        assert_eq!(e.handle, h, "the handle stays valid across firings");
        if n == 3 {
            assert_eq!(t.stop(e.handle), Some(1));
        }
    });
    assert_eq!(n, 3);
    assert!(w.is_empty());
    w.check_invariants().unwrap();
}

#[test]
fn a_zero_period_is_an_error() {
    let mut w: Wheel<u64> = Wheel::new();
    assert_eq!(
        w.start_periodic(10, 0, 0, Missed::Skip, 1),
        Err(callwheel::Error::ZeroPeriod)
    );
    assert!(w.is_empty());
}

#[test]
fn periodic_tolerance_windows_coalesce_like_one_shots() {
    let mut w = Wheel::new();
    w.start_periodic(100, 100, 40, Missed::Skip, 1).unwrap();
    w.start_periodic(130, 100, 0, Missed::Skip, 2).unwrap();
    // Windows [100,140] and [130,130]: one wake-up at 130 serves both, every period.
    for k in 0..5u64 {
        assert_eq!(w.next_wakeup(), Some(130 + 100 * k));
        let t = w.next_wakeup().unwrap();
        assert_eq!(fire_log(&mut w, t).len(), 2);
    }
}

#[test]
fn the_callback_sees_the_overruns_of_a_late_periodic_firing() {
    let mut w = Wheel::new();
    w.start_periodic(5, 10, 0, Missed::Skip, 1).unwrap();
    w.start(5, 2).unwrap();
    let mut seen = Vec::new();
    let _ = w.advance(57, Budget::UNLIMITED, |_, e| {
        seen.push((e.value, e.overruns))
    });
    assert_eq!(seen, [(1, 5), (2, 0)]);
}

#[test]
fn a_periodic_timer_whose_next_deadline_passes_the_end_of_time_fires_its_last() {
    for policy in [Missed::Burst, Missed::Delay, Missed::Skip] {
        let mut w = Wheel::new();
        w.start_periodic(u64::MAX - 3, 10, 0, policy, 7).unwrap();
        w.start_periodic(5, u64::MAX, 0, policy, 8).unwrap();
        let (wakeups, fired) = drive(&mut w);
        assert_eq!(fired.len(), 2, "{policy:?}: each fires once, then is gone");
        assert_eq!(fired[&7], u64::MAX - 3);
        assert_eq!(fired[&8], 5);
        assert!(wakeups <= 2);
        assert!(w.is_empty());
        assert_eq!(w.next_wakeup(), None);
    }
}

#[test]
fn resuming_a_budgeted_advance_is_not_a_clamp() {
    let mut w = Wheel::new();
    for i in 0..10 {
        w.start(100 + i, i).unwrap();
    }
    let _ = w.advance(1000, Budget::steps(3), |_, _| {});
    let mut calls = 0;
    while let Some(t) = w.next_wakeup() {
        let _ = w.advance(t, Budget::steps(3), |_, _| {});
        calls += 1;
        assert!(calls < 1000);
    }
    assert_eq!(w.stats().fired, 10);
    assert_eq!(
        w.stats().clamped,
        0,
        "only a time before the wheel's own is a clamp"
    );
    let _ = w.advance(5, Budget::UNLIMITED, |_, _| {});
    assert_eq!(w.stats().clamped, 1);
}

#[test]
fn a_budgeted_periodic_drive_matches_the_unlimited_one() {
    let run = |budget: Budget| {
        let mut w = Wheel::new();
        w.start_periodic(3, 7, 2, Missed::Burst, 1).unwrap();
        w.start_periodic(1, 5, 0, Missed::Skip, 2).unwrap();
        w.start_with(20, 4, 3).unwrap();
        let mut log = Vec::new();
        for target in [10u64, 11, 40, 41, 100] {
            loop {
                let p = w.advance(target, budget, |t: &mut dyn Timers<u64>, e| {
                    log.push((e.value, e.deadline, t.now(), e.overruns))
                });
                w.check_invariants().unwrap();
                if p.complete {
                    break;
                }
            }
        }
        (log, w.stats().fired)
    };
    let expect = run(Budget::UNLIMITED);
    // Burst replays 3, 10, .., 94 (14); Skip fires at 1, 11, 16, 41, 46 (5); one one-shot.
    assert_eq!(expect.0.len(), 20);
    for budget in [1, 2, 5] {
        assert_eq!(run(Budget::steps(budget)), expect, "budget {budget}");
    }
}

proptest! {
    /// Deadlines spread over every level (up to 2^48 ahead), advances by jumps of any size with
    /// random budgets, stops and resets: the wheel fires exactly what a sorted map says, in its
    /// order (overdue first in arming order, then by deadline and arming order), each at its
    /// deadline; and the wake-up queries are never late.
    #[test]
    fn wide_jumps_with_budgets_agree_with_an_ordered_map(
        ops in proptest::collection::vec(
            (0u8..5, 0u32..48, any::<u64>(), 0u64..1_000, prop_oneof![Just(0u64), 1u64..8], any::<usize>()),
            1..200,
        ),
    ) {
        let mut w: Wheel<u64> = Wheel::new();
        // handle bits -> (deadline, arming sequence, window end, overdue when armed, firing
        // instant)
        let mut pending: BTreeMap<Handle, (Tick, u64, Tick, bool, Tick)> = BTreeMap::new();
        let mut issued: Vec<Handle> = Vec::new();
        let mut seq = 0u64;
        for (kind, bits, r, tol, budget, pick) in ops {
            let now = w.now();
            let ahead = if bits == 0 { 0 } else { r % (1u64 << bits) };
            let deadline = now.saturating_add(ahead);
            match kind {
                0 | 1 => {
                    seq += 1;
                    let h = w.start_with(deadline, tol, seq).unwrap();
                    issued.push(h);
                    let at = fires_at(deadline, tol);
                    pending.insert(h, (deadline, seq, deadline.saturating_add(tol), at <= now, at));
                }
                2 if !issued.is_empty() => {
                    let h = issued[pick % issued.len()];
                    let expect = pending.remove(&h).is_some();
                    prop_assert_eq!(w.stop(h).is_some(), expect);
                }
                3 if !issued.is_empty() => {
                    let h = issued[pick % issued.len()];
                    seq += 1;
                    let before = pending.get(&h).map(|p| p.0);
                    prop_assert_eq!(w.reset(h, deadline, tol), before);
                    if before.is_some() {
                        let at = fires_at(deadline, tol);
                        pending.insert(h, (deadline, seq, deadline.saturating_add(tol), at <= now, at));
                    }
                }
                _ => {
                    if let Some(min_end) = pending.values().map(|p| if p.3 { now } else { p.2 }).min() {
                        let wake = w.next_wakeup().unwrap();
                        prop_assert!(wake >= now && wake <= min_end, "wake-up {} after a window ends at {}", wake, min_end);
                        let first = pending.values().map(|p| if p.3 { now } else { p.4 }).min().unwrap();
                        let next = w.next_expiry().unwrap();
                        prop_assert!(next >= now && next <= first, "next firing {} after {}", next, first);
                    } else {
                        prop_assert_eq!(w.next_wakeup(), None);
                    }
                    let target = now.saturating_add(r % (1u64 << bits.max(1)));
                    let mut due: Vec<(bool, Tick, u64, Handle)> = pending
                        .iter()
                        .filter(|(_, p)| p.3 || p.4 <= target)
                        .map(|(&h, p)| (!p.3, if p.3 { 0 } else { p.4 }, p.1, h))
                        .collect();
                    due.sort();
                    let mut got = Vec::new();
                    let mut calls = 0;
                    loop {
                        let b = if budget == 0 { Budget::UNLIMITED } else { Budget::steps(budget) };
                        let p = w.advance(target, b, |t: &mut dyn Timers<u64>, e| {
                            got.push((e.handle, e.deadline, t.now()))
                        });
                        w.check_invariants().map_err(|e| TestCaseError::fail(e.to_string()))?;
                        calls += 1;
                        prop_assert!(calls < 100_000, "a budgeted advance makes progress");
                        if p.complete {
                            break;
                        }
                    }
                    let expect: Vec<Handle> = due.iter().map(|x| x.3).collect();
                    let fired: Vec<Handle> = got.iter().map(|g| g.0).collect();
                    prop_assert_eq!(&fired, &expect, "fired set and order at {}", target);
                    for &(h, d, at) in &got {
                        let p = pending.remove(&h).unwrap();
                        prop_assert_eq!(d, p.0);
                        if !p.3 {
                            prop_assert_eq!(at, p.4, "a timer fires at its firing instant");
                        }
                    }
                    prop_assert_eq!(w.now(), target);
                }
            }
            w.check_invariants().map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(w.len(), pending.len());
        }
    }
}

#[test]
fn memory_per_outstanding_timer_is_24_bytes_plus_the_value_and_the_growth_margin() {
    // An entry is 16 bytes plus the value, its links 8. Stated at N = 1e6, where a growing slab
    // holds 2^20 slots (4.9 % spare); N = 125 000 sits at the same ratio below 2^17 and keeps
    // the test quick. A wheel with a fixed capacity has no spare slots: only the slots' fixed
    // sentinels and minimums (17 KiB, 0.14 bytes per timer here) come on top.
    fn fill<T>(w: &mut Wheel<T>, n: u64, value: impl Fn(u64) -> T) -> f64 {
        let mut x = 42u64;
        for i in 0..n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            w.start(1_000_000 + (x >> 11) % 1_000_000, value(i))
                .unwrap();
        }
        w.memory_bytes() as f64 / n as f64
    }
    let n = 125_000u64;
    let growing = fill(&mut Wheel::new(), n, |i| i);
    assert!(growing <= 32.0 * 1.05 + 0.2, "growing, u64: {growing}");
    let fixed = fill(&mut Wheel::with_capacity(n as usize).unwrap(), n, |i| i);
    assert!(fixed <= 32.2, "fixed capacity, u64: {fixed}");
    let growing = fill(&mut Wheel::new(), n, |_| ());
    assert!(growing <= 24.0 * 1.05 + 0.2, "growing, no value: {growing}");
    let fixed = fill(&mut Wheel::with_capacity(n as usize).unwrap(), n, |_| ());
    assert!(fixed <= 24.2, "fixed capacity, no value: {fixed}");
}

#[test]
fn reserve_makes_exact_room_and_refuses_what_cannot_fit() {
    let mut w: Wheel<u64> = Wheel::new();
    let empty = w.memory_bytes();
    w.reserve(1_000).unwrap();
    let held = w.memory_bytes();
    // Exactly 1 000 entries of 24 bytes and their 8 bytes of links, no doubling margin.
    assert_eq!(held - empty, 1_000 * 32);
    let handles: Vec<Handle> = (0..1_000).map(|i| w.start(10 + i, i).unwrap()).collect();
    assert_eq!(w.memory_bytes(), held, "the starts allocated nothing");
    // Freed slots count as room: stopping 300 and reserving 300 allocates nothing either.
    for h in &handles[..300] {
        w.stop(*h).unwrap();
    }
    w.reserve(300).unwrap();
    assert_eq!(w.memory_bytes(), held);
    w.reserve(301).unwrap();
    assert!(w.memory_bytes() > held);
    w.check_invariants().unwrap();
    // What cannot fit is refused, and nothing changes.
    assert!(matches!(
        w.reserve(usize::MAX),
        Err(callwheel::Error::Full { .. })
    ));
    assert!(matches!(
        w.reserve(1 << 33),
        Err(callwheel::Error::Full { .. })
    ));
    assert_eq!(w.len(), 700);
    let mut fixed: Wheel<u64> = Wheel::with_capacity(10).unwrap();
    let held = fixed.memory_bytes();
    fixed.start(5, 0).unwrap();
    fixed.reserve(9).unwrap();
    assert!(matches!(
        fixed.reserve(10),
        Err(callwheel::Error::Full { capacity: 10 })
    ));
    assert_eq!(fixed.memory_bytes(), held);
}

/// Processing a slot prefetches the next timer's entry (an `unsafe` call, as are the links'
/// unchecked neighbours); this
/// test walks crowded slots on levels 0 to 2, with stops from inside the callbacks, a third of
/// them unlinking the very timer the walk asked for next (same deadline, started right after),
/// and is small enough for Miri (CI runs it there). Every timer fires at its deadline, in
/// deadline then start order, unless stopped first.
#[test]
fn slot_walks_fire_every_timer_in_deadline_then_start_order() {
    let mut w = Wheel::new();
    let mut x = 7u64;
    // (handle, deadline, value): timer `i` has value `i`.
    let mut timers: Vec<(Handle, Tick, u64)> = Vec::new();
    for i in 0..300u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        // Deadlines share slots on levels 0 to 2; many are equal.
        let mut deadline = 1 + (x >> 33) % 5_000 / 7 * 7;
        if i % 9 == 2 {
            // Right behind its killer (below) in the same slot: the walk's next timer.
            deadline = timers[i as usize - 1].1;
        }
        timers.push((w.start(deadline, i).unwrap(), deadline, i));
    }
    // Timer i (i % 3 == 2) is stopped by the callback of timer i - 1, which is never stopped.
    let killer_of = |i: u64| (i % 3 == 2).then(|| i - 1);
    let victims: BTreeMap<u64, (Handle, u64)> = timers
        .iter()
        .filter_map(|&(h, _, i)| killer_of(i).map(|k| (k, (h, i))))
        .collect();
    // A victim escapes only when it fires before its killer: an earlier deadline (with an equal
    // one, the killer was started first and fires first).
    let escapes = |i: u64| timers[i as usize].1 < timers[i as usize - 1].1;
    let mut fired = Vec::new();
    let mut stops = Vec::new();
    let mut now = 0;
    while w.len() > 0 {
        // Tick by tick, so that every slot on the way is processed.
        now += 1;
        let p = w.advance(now, Budget::UNLIMITED, |t, e| {
            fired.push((t.now(), e.deadline, e.value));
            if let Some(&(victim, i)) = victims.get(&e.value) {
                stops.push((i, t.stop(victim)));
            }
        });
        assert!(p.complete);
        if now % 500 == 0 {
            w.check_invariants().unwrap();
        }
    }
    w.check_invariants().unwrap();
    for (i, stopped) in stops {
        let expected = if escapes(i) { None } else { Some(i) };
        assert_eq!(stopped, expected, "stop of timer {i}");
    }
    let mut expected: Vec<(Tick, Tick, u64)> = timers
        .iter()
        .filter(|&&(_, _, i)| killer_of(i).is_none() || escapes(i))
        .map(|&(_, deadline, i)| (deadline, deadline, i))
        .collect();
    expected.sort();
    assert_eq!(fired, expected);
}

#[test]
fn skip_with_period_one_at_the_end_of_time_fires_once_and_ends() {
    let mut w = Wheel::new();
    let h = w.start_periodic(0, 1, 0, Missed::Skip, ()).unwrap();
    let mut fired = Vec::new();
    let p = w.advance(u64::MAX, Budget::UNLIMITED, |_, e| {
        fired.push((e.deadline, e.overruns))
    });
    assert!(p.complete);
    // Every grid point up to u64::MAX was missed, and the next one lies past the end of time.
    assert_eq!(fired, [(0, u64::MAX)]);
    assert!(w.is_empty());
    assert_eq!(w.stop(h), None, "the schedule ended with its last firing");
    w.check_invariants().unwrap();
}

#[test]
fn the_last_firing_of_a_periodic_timer_reports_its_overruns() {
    for policy in [Missed::Burst, Missed::Delay, Missed::Skip] {
        let mut w = Wheel::new();
        w.start_periodic(u64::MAX - 100, 30, 0, policy, ()).unwrap();
        let mut fired = Vec::new();
        let _ = w.advance(u64::MAX, Budget::UNLIMITED, |_, e| {
            fired.push((e.deadline, e.overruns))
        });
        // Burst replays the grid (MAX-100, -70, -40, -10): each firing there sees the same
        // target, so the first reports 3 missed periods, and so on down to the last (0).
        let expect: &[(Tick, u64)] = match policy {
            Missed::Burst => &[
                (u64::MAX - 100, 3),
                (u64::MAX - 70, 2),
                (u64::MAX - 40, 1),
                (u64::MAX - 10, 0),
            ],
            _ => &[(u64::MAX - 100, 3)],
        };
        assert_eq!(fired, expect, "{policy:?}");
        assert!(w.is_empty());
    }
}

#[test]
fn another_wheels_handle_is_rejected_by_every_call() {
    let mut a: Wheel<u64> = Wheel::new();
    let mut b: Wheel<u64> = Wheel::new();
    let ha = a.start_periodic(10, 5, 0, Missed::Burst, 1).unwrap();
    let hb = b.start_periodic(10, 5, 0, Missed::Burst, 2).unwrap();
    assert_eq!((ha.index(), ha.generation()), (hb.index(), hb.generation()));
    assert_eq!(a.reset(hb, 99, 0), None, "reset with b's handle");
    assert_eq!(a.overruns(hb), None);
    assert_eq!(a.stop(hb), None);
    let mut fired = Vec::new();
    let _ = a.advance(10, Budget::UNLIMITED, |_, e| fired.push(e.value));
    assert_eq!(fired, [1], "a's timer kept its deadline");
    assert_eq!(a.overruns(ha), Some(0));
    assert_eq!(b.stop(hb), Some(2));
}

#[test]
fn a_panicking_periodic_callback_keeps_the_timer_scheduled() {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    let mut w: Wheel<u32> = Wheel::new();
    let h = w.start_periodic(10, 10, 0, Missed::Burst, 7).unwrap();
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let _ = w.advance(10, Budget::UNLIMITED, |_, _| panic!("callback fails"));
    }));
    assert!(caught.is_err());
    w.check_invariants().unwrap();
    let mut fired = Vec::new();
    let _ = w.advance(20, Budget::UNLIMITED, |_, e| {
        fired.push((e.deadline, e.value))
    });
    assert_eq!(fired, [(20, 7)]);
    assert!(w.stop(h).is_some());
}

proptest! {
    #[test]
    fn the_missed_period_rule_holds_over_the_whole_u64_range(
        deadline in prop_oneof![any::<u64>(), (0u64..1000).prop_map(|x| u64::MAX - x), 0u64..1000],
        period in prop_oneof![Just(1u64), any::<u64>(), 1u64..1000, Just(u64::MAX)],
        lateness in prop_oneof![any::<u64>(), 0u64..5000, Just(u64::MAX)],
    ) {
        let now = deadline.saturating_add(lateness);
        for policy in [Missed::Burst, Missed::Delay, Missed::Skip] {
            let (next, missed) = policy.next(deadline, period, now);
            let expect_missed = if (now - deadline) >= period { (now - deadline) / period } else { 0 };
            prop_assert_eq!(missed, expect_missed);
            let expect_next = match policy {
                _ if missed == 0 => deadline.checked_add(period),
                Missed::Burst => deadline.checked_add(period),
                Missed::Delay => now.checked_add(period),
                Missed::Skip => (u128::from(deadline) + (u128::from(missed) + 1) * u128::from(period))
                    .try_into()
                    .ok(),
            };
            prop_assert_eq!(next, expect_next, "{:?}", policy);
            if let Some(n) = next {
                prop_assert!(n > deadline, "the schedule moves forward");
                if policy != Missed::Burst {
                    prop_assert!(n > now, "{:?} lands after now", policy);
                }
            }
        }
    }
}

#[test]
fn deadline_and_contains_follow_a_periodic_timer_until_it_is_stopped() {
    let mut w = Wheel::new();
    let h = w.start_periodic(10, 5, 0, Missed::Burst, 1u64).unwrap();
    assert_eq!((w.deadline(h), w.contains(h)), (Some(10), true));
    let _ = w.advance_to(12, |_, _| {});
    assert_eq!(w.deadline(h), Some(15), "re-armed from its last deadline");
    assert_eq!(w.reset(h, 40, 0), Some(15));
    assert_eq!(w.deadline(h), Some(40));
    assert_eq!(w.stop(h), Some(1));
    assert_eq!((w.deadline(h), w.contains(h)), (None, false));
    let huge = w.start(u64::MAX, 2).unwrap();
    assert_eq!(w.deadline(huge), Some(u64::MAX));
    assert_eq!(w.reset(huge, u64::MAX, u64::MAX), Some(u64::MAX));
    assert_eq!(w.deadline(Handle::from_parts(u64::MAX, u64::MAX)), None);
}

#[test]
fn window_and_schedule_report_what_the_timer_was_armed_with() {
    let mut w = Wheel::new();
    let _ = w.advance_to(100, |_, _: callwheel::Expired<u64>| {});
    let a = w.start_with(150, 30, 1u64).unwrap();
    assert_eq!((w.window(a), w.schedule(a)), (Some((150, 180)), None));
    assert_eq!(w.reset(a, 400, 7), Some(150));
    assert_eq!(w.window(a), Some((400, 407)));
    // Saturates at the end of time.
    let far = w.start_with(u64::MAX - 1, u64::MAX, 2).unwrap();
    assert_eq!(w.window(far), Some((u64::MAX - 1, u64::MAX)));
    // Already due when started: it fires at the next advance, and its end is its deadline.
    let due = w.start_with(60, 1_000, 3).unwrap();
    assert_eq!(w.window(due), Some((60, 60)));
    // A periodic timer keeps its whole window and its schedule, also across firings.
    let p = w.start_periodic(120, 50, 9, Missed::Skip, 4).unwrap();
    assert_eq!(w.window(p), Some((120, 129)));
    assert_eq!(w.schedule(p), Some((50, Missed::Skip)));
    let _ = w.advance_to(125, |_, _| {});
    assert_eq!(w.window(p), Some((170, 179)));
    assert_eq!(w.schedule(p), Some((50, Missed::Skip)));
    // Stale and forged handles name nothing.
    assert_eq!(w.stop(a), Some(1));
    assert_eq!((w.window(a), w.schedule(a)), (None, None));
    assert_eq!(w.stop(p), Some(4));
    assert_eq!((w.window(p), w.schedule(p)), (None, None));
    let forged = Handle::from_parts(u64::MAX, u64::MAX);
    assert_eq!((w.window(forged), w.schedule(forged)), (None, None));
}

/// A tolerance of 2^30 ticks or more is kept to 25 significant bits, rounded down: the end a
/// timer is woken by is never later than asked, earlier by less than 2^-24 of the tolerance,
/// and the same through starts, resets, periodic re-arms and queries, with no allocation.
#[test]
fn wide_windows_keep_an_end_rounded_down_by_less_than_a_part_in_2_24() {
    const EXACT_BELOW: u64 = 1 << 30;
    let mut w: Wheel<u64> = Wheel::new();
    let exact = w.start_with(1_000, EXACT_BELOW - 1, 1).unwrap();
    assert_eq!(w.window(exact), Some((1_000, 1_000 + EXACT_BELOW - 1)));
    // A power of two times up to 2^25 is kept exactly; a tolerance with more significant bits
    // loses the low ones.
    let round = w.start_with(2_000, 1 << 50, 2).unwrap();
    assert_eq!(w.window(round), Some((2_000, 2_000 + (1 << 50))));
    let odd = (1u64 << 40) + 12_345;
    let cut = w.start_with(3_000, odd, 3).unwrap();
    let (_, end) = w.window(cut).unwrap();
    assert_eq!(end, callwheel::window_end(3_000, odd));
    assert!(end <= 3_000 + odd && 3_000 + odd - end < odd >> 24);
    assert_eq!(end, 3_000 + (odd & !((1 << 16) - 1)));
    assert_eq!(w.next_wakeup(), Some(1_000 + EXACT_BELOW - 1));
    w.check_invariants().unwrap();
    // Resets keep ends the same way, on the fast path (last of its slot) and off it.
    assert_eq!(w.reset(cut, 3_000, 5), Some(3_000));
    assert_eq!(w.window(cut), Some((3_000, 3_005)));
    assert_eq!(w.reset(cut, 1 << 40, odd), Some(3_000));
    assert_eq!(
        w.window(cut),
        Some((1 << 40, callwheel::window_end(1 << 40, odd)))
    );
    w.check_invariants().unwrap();
    // A periodic timer keeps its rounded window across firings.
    let p = w
        .start_periodic(5_000, 10_000, odd, Missed::Skip, 4)
        .unwrap();
    // Each fires at its firing instant, inside its window: 1 at 2^24, 4 at 2^36 (2 and 3
    // later still).
    let mut fired = Vec::new();
    let at = callwheel::firing_instant(5_000, odd);
    assert_eq!((fires_at(1_000, EXACT_BELOW - 1), at), (1 << 24, 1 << 36));
    let _ = w.advance_to(at, |_, e| fired.push(e.value));
    assert_eq!(fired, [1, 4]);
    let next = Missed::Skip.next(5_000, 10_000, at).0.unwrap();
    assert_eq!(w.window(p), Some((next, callwheel::window_end(next, odd))));
    w.check_invariants().unwrap();
    // An end at the end of time (a tolerance that saturates there) is kept exactly.
    let last = w.start_with(u64::MAX - odd / 2, u64::MAX, 5).unwrap();
    assert_eq!(w.window(last), Some((u64::MAX - odd / 2, u64::MAX)));
    assert_eq!(
        callwheel::window_end(u64::MAX - odd / 2, u64::MAX),
        u64::MAX
    );
    w.check_invariants().unwrap();
}

#[test]
fn clear_drops_every_timer_keeps_the_time_and_makes_handles_stale() {
    let mut w = Wheel::new();
    let _ = w.advance_to(1_000, |_, _: callwheel::Expired<u64>| {});
    let mut handles = Vec::new();
    for i in 0..200u64 {
        handles.push(w.start(900 + i * 37, i).unwrap());
    }
    handles.push(w.start_periodic(2_000, 10, 5, Missed::Skip, 999).unwrap());
    let stopped = w.stats().stopped;
    w.clear();
    w.check_invariants().unwrap();
    assert!(w.is_empty());
    assert_eq!(w.now(), 1_000);
    assert_eq!((w.next_expiry(), w.next_wakeup()), (None, None));
    assert_eq!(
        w.stats().stopped,
        stopped + 201,
        "cleared timers count as stopped"
    );
    for &h in &handles {
        assert!(!w.contains(h));
        assert_eq!(w.stop(h), None);
        assert_eq!(w.reset(h, 5_000, 0), None);
    }
    assert_eq!(w.advance_to(u64::MAX, |_, _| {}), 0, "nothing left to fire");
    // The wheel is usable afterwards, and new handles are not the old ones.
    let h = w.start(u64::MAX, 7).unwrap();
    assert!(!handles.contains(&h));
    assert_eq!(w.stop(h), Some(7));
}

/// Drops of [`Grenade`]s that ran (only the test below makes them). A static, not an `Rc`: the
/// values a panicking clear leaks must hold no memory, or Miri (CI runs this test) reports it.
static GRENADE_DROPS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// A value whose drop panics when armed.
struct Grenade {
    armed: bool,
}

impl Drop for Grenade {
    fn drop(&mut self) {
        GRENADE_DROPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if self.armed {
            panic!("a value's drop panicked");
        }
    }
}

#[test]
fn clear_whose_value_panics_in_drop_still_leaves_an_empty_consistent_wheel() {
    let mut w = Wheel::new();
    let mut handles = Vec::new();
    for i in 0..50u64 {
        let value = Grenade { armed: i == 20 };
        handles.push(w.start(100 + i * 1_000, value).unwrap());
    }
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.clear()));
    assert!(caught.is_err(), "the drop's panic goes on");
    // The 21 drops up to the panicking one ran; the rest were freed without dropping.
    assert_eq!(GRENADE_DROPS.load(std::sync::atomic::Ordering::Relaxed), 21);
    w.check_invariants().unwrap();
    assert!(w.is_empty());
    assert_eq!(
        w.stats().stopped,
        50,
        "every cleared timer counts as stopped"
    );
    for &h in &handles {
        assert!(!w.contains(h));
    }
    assert_eq!(w.advance_to(u64::MAX, |_, _| {}), 0, "nothing left to fire");
    let h = w.start(u64::MAX, Grenade { armed: false }).unwrap();
    assert!(!handles.contains(&h));
}

#[test]
fn clear_in_the_middle_of_a_budgeted_advance_leaves_nothing_to_resume() {
    let mut w = Wheel::new();
    for i in 0..100u64 {
        w.start(10 + i % 3, i).unwrap();
    }
    let p = w.advance(20, Budget::steps(10), |_, _| {});
    assert!(!p.complete);
    w.clear();
    w.check_invariants().unwrap();
    let p = w.advance(20, Budget::UNLIMITED, |_, _| {
        panic!("a cleared timer fired")
    });
    assert!(p.complete);
    assert_eq!(w.now(), 20);
    w.start(25, 1).unwrap();
    assert_eq!(w.advance_to(30, |_, _| {}), 1);
}

#[test]
fn poll_expired_fires_one_timer_per_call_in_deadline_then_start_order() {
    let mut w = Wheel::new();
    let b = w.start(20, "b").unwrap();
    let a1 = w.start(10, "a1").unwrap();
    let a2 = w.start(10, "a2").unwrap();
    w.start(31, "late").unwrap();
    let mut fired = Vec::new();
    while let Some(e) = w.poll_expired(30) {
        fired.push((e.handle, e.deadline, e.value, w.now()));
        w.check_invariants().unwrap();
    }
    assert_eq!(
        fired,
        [(a1, 10, "a1", 10), (a2, 10, "a2", 10), (b, 20, "b", 20)]
    );
    assert_eq!(w.now(), 30, "None once nothing is due: the time is `now`");
    assert_eq!(w.len(), 1);
    assert!(w.poll_expired(30).is_none());
    assert!(w.poll_expired(5).is_none(), "time never goes backwards");
    assert_eq!(w.now(), 30);
}

#[test]
fn poll_expired_re_arms_periodic_timers_and_keeps_their_handles() {
    let mut w = Wheel::new();
    let h = w.start_periodic(10, 10, 0, Missed::Burst, 5u64).unwrap();
    let mut deadlines = Vec::new();
    while let Some(e) = w.poll_expired(45) {
        assert_eq!((e.handle, e.value), (h, 5));
        deadlines.push(e.deadline);
    }
    assert_eq!(deadlines, [10, 20, 30, 40]);
    assert_eq!(w.deadline(h), Some(50));
    assert_eq!(w.overruns(h), Some(0));
}

#[test]
fn poll_expired_and_advance_interleave_without_losing_or_repeating() {
    // The same timers, fired by advance alone and by a mix of poll_expired and budgeted
    // advances: the same firings in the same order.
    fn load(w: &mut Wheel<u64>) {
        for i in 0..300u64 {
            w.start((i * 7919) % 5_000, i).unwrap();
        }
        w.start_periodic(100, 700, 0, Missed::Burst, 1_000).unwrap();
    }
    let mut alone = Wheel::new();
    load(&mut alone);
    let mut expect = Vec::new();
    let _ = alone.advance_to(6_000, |_, e| expect.push((e.deadline, e.value)));
    let mut mixed = Wheel::new();
    load(&mut mixed);
    let mut got = Vec::new();
    let mut round = 0u64;
    loop {
        round += 1;
        if round.is_multiple_of(3) {
            let p = mixed.advance(6_000, Budget::steps(round % 17), |_, e| {
                got.push((e.deadline, e.value))
            });
            if p.complete {
                break;
            }
        } else {
            match mixed.poll_expired(6_000) {
                Some(e) => got.push((e.deadline, e.value)),
                None => break,
            }
        }
        mixed.check_invariants().unwrap();
    }
    assert_eq!(got, expect);
    assert_eq!(mixed.now(), 6_000);
}

#[test]
fn a_timer_started_between_polls_in_the_past_fires_in_the_same_round() {
    let mut w = Wheel::new();
    let _ = w.advance_to(100, |_, _: callwheel::Expired<u64>| {});
    w.start(50, 1).unwrap();
    w.start(60, 2).unwrap();
    let first = w.poll_expired(100).unwrap();
    assert_eq!(first.value, 1);
    w.start(10, 3).unwrap();
    let rest: Vec<u64> = core::iter::from_fn(|| w.poll_expired(100))
        .map(|e| e.value)
        .collect();
    assert_eq!(
        rest,
        [2, 3],
        "queued behind the overdue timers already waiting"
    );
    assert_eq!(w.now(), 100);
}

#[test]
fn a_callback_reset_keeps_the_firing_periodic_timer_and_moves_it() {
    let mut w = Wheel::new();
    let h = w.start_periodic(10, 10, 0, Missed::Burst, 1u64).unwrap();
    let mut fired = Vec::new();
    let mut answer = None;
    let _ = w.advance_to(100, |t, e| {
        fired.push(e.deadline);
        if e.deadline == 20 {
            answer = t.reset(e.handle, 55, 0);
        }
    });
    assert_eq!(
        answer,
        Some(30),
        "the firing periodic timer was already re-armed for 30"
    );
    assert_eq!(fired, [10, 20, 55, 65, 75, 85, 95]);
    assert!(w.contains(h));
}

#[test]
fn the_stabbing_optimum_is_the_fewest_instants_that_stab_every_window() {
    assert_eq!(stabbing_optimum(&[]), 0);
    // Zero-width windows: the distinct deadlines.
    assert_eq!(stabbing_optimum(&[(5, 5), (5, 5), (7, 7), (1, 1)]), 3);
    // 4 stabs [1,4] and [3,6]; [5,8] needs a second point.
    assert_eq!(stabbing_optimum(&[(1, 4), (3, 6), (5, 8)]), 2);
    // Nested windows: one point.
    assert_eq!(stabbing_optimum(&[(1, 10), (2, 3), (3, 9)]), 1);
    // Disjoint windows: one each; shared ends count once.
    assert_eq!(stabbing_optimum(&[(1, 2), (4, 5), (7, 8)]), 3);
    assert_eq!(stabbing_optimum(&[(1, 5), (5, 9)]), 1);
    // The end of time.
    assert_eq!(stabbing_optimum(&[(u64::MAX, u64::MAX), (0, u64::MAX)]), 1);
}

/// `Wheel::at_deadlines` keys every timer by its deadline: a window only bounds the wake-up.
/// `Wheel::new` fires the same window at its firing instant.
#[test]
fn a_wheel_at_deadlines_fires_windows_at_their_deadlines() {
    for (mut w, first) in [(Wheel::at_deadlines(), 1_000), (Wheel::new(), 1_024)] {
        assert_eq!(fires_at(1_000, 1_000), 1_024);
        w.start_with(1_000, 1_000, 1).unwrap();
        w.start_with(1_030, 0, 2).unwrap();
        assert_eq!(w.next_expiry(), Some(first));
        assert_eq!(w.next_wakeup(), Some(1_030));
        let mut fired = Vec::new();
        let _ = w.advance_to(1_000, |_, e| fired.push(e.value));
        let _ = w.advance_to(1_030, |_, e| fired.push(e.value));
        w.check_invariants().unwrap();
        assert_eq!(fired, [1, 2], "first due at {first}");
        // Started after its deadline but before its instant: overdue on the one, placed by
        // its instant on the other.
        w.start_with(1_025, 1_000, 3).unwrap();
        let late = w.next_expiry().unwrap();
        assert_eq!(late, if first == 1_000 { 1_030 } else { 1_088 });
        let _ = w.advance_to(1_088, |_, e| fired.push(e.value));
        assert_eq!(fired, [1, 2, 3]);
    }
}

proptest! {
    /// `peek` names the timer the next pull fires, whatever the mix of exact and tolerant
    /// timers, stops, overdue starts and pulls left mid-call: checked against `poll_expired`
    /// at the wheel's next expiry.
    #[test]
    fn peek_names_the_timer_the_next_pull_fires(
        ops in proptest::collection::vec((0u8..4, 0u64..20_000, 0u64..3_000, any::<usize>()), 1..200),
    ) {
        let mut w: Wheel<u64> = Wheel::new();
        let mut live: Vec<Handle> = Vec::new();
        for (i, (kind, a, b, pick)) in ops.into_iter().enumerate() {
            let now = w.now();
            match kind {
                0 | 1 => {
                    // Some in the past (overdue), most ahead, about half with a window.
                    let d = (now + a).saturating_sub(2_000);
                    let tol = if b % 2 == 0 { 0 } else { b };
                    live.push(w.start_with(d, tol, i as u64).unwrap());
                }
                2 if !live.is_empty() => {
                    let h = live.swap_remove(pick % live.len());
                    let _ = w.stop(h);
                }
                _ => {
                    let expected = w.peek();
                    // Pull at the wheel's own next-expiry answers until something fires (an
                    // answer may be early after stops, never late).
                    let mut got = None;
                    for _ in 0..1_000 {
                        let Some(t) = w.next_expiry() else { break };
                        if let Some(e) = w.poll_expired(t) {
                            got = Some(e.handle);
                            break;
                        }
                    }
                    prop_assert_eq!(got, expected, "peek against the next pull at step {}", i);
                    if let Some(h) = got {
                        live.retain(|&x| x != h);
                    }
                    // A short pull, which may leave the call mid-way.
                    let _ = w.poll_expired(now + b);
                    live.retain(|&h| w.contains(h));
                }
            }
            w.check_invariants().map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
    }
}
