//! The conformance suite: the contract every timer scheme keeps, written once.
//!
//! Each scheme is described by a [`Spec`] (how to build it, whether it is exact, its range) and
//! `conformance!` instantiates every test below for it. Test names state the guarantee checked.

#![allow(dead_code)]

pub mod oracle;

use callwheel::{Budget, Error, Expired, Handle, Scheme, Tick, Timers};

/// What a scheme promises, for the tests to check.
pub struct Spec<S> {
    /// A fresh, empty structure with a growing slab.
    pub make: fn() -> S,
    /// The same with a fixed capacity of `n` timers, where the scheme offers one.
    pub make_capped: Option<fn(usize) -> S>,
    /// How late a timer started `delta` ticks ahead may fire (0 for an exact scheme).
    pub lateness: fn(delta: Tick) -> Tick,
    /// Whether equal deadlines fire in start order.
    pub fifo: bool,
    /// The furthest deadline ahead of the cursor that `start` accepts (`None`: any).
    pub range: Option<Tick>,
    /// A deadline far ahead that the scheme can reach in a test's time (beyond one rotation).
    pub far: Tick,
    /// Whether `advance` may jump a long empty gap cheaply.
    pub tickless: bool,
}

impl<S> Spec<S> {
    pub fn exact(&self) -> bool {
        (self.lateness)(1 << 40) == 0
    }

    /// The tick by which a timer started at 0 for `deadline` has surely fired.
    pub fn due(&self, deadline: Tick) -> Tick {
        deadline + (self.lateness)(deadline)
    }

    /// Whether a deadline `delta` ahead of the cursor is within the scheme's guaranteed reach.
    pub fn reaches(&self, delta: Tick) -> bool {
        self.range.is_none_or(|r| delta <= r)
    }
}

pub type Fired = (Handle, Tick, u64, Tick);

/// Advances to `now` with no budget and returns (handle, deadline, value, now at firing).
pub fn run<S: Scheme<u64>>(s: &mut S, now: Tick) -> Vec<Fired> {
    let mut out = Vec::new();
    let p = s.advance(
        now,
        Budget::UNLIMITED,
        |t: &mut dyn Timers<u64>, e: Expired<u64>| {
            out.push((e.handle, e.deadline, e.value, t.now()))
        },
    );
    assert!(p.complete, "an unlimited advance must complete");
    assert_eq!(p.fired, out.len(), "Progress::fired counts the callbacks");
    s.check_invariants().unwrap();
    out
}

/// Advances tick by tick (or in one jump for a tickless scheme) until `now`.
pub fn run_to<S: Scheme<u64>>(spec: &Spec<S>, s: &mut S, now: Tick) -> Vec<Fired> {
    if spec.tickless {
        return run(s, now);
    }
    let mut out = Vec::new();
    while s.now() < now {
        let t = s.now() + 1;
        out.extend(run(s, t));
    }
    out
}

fn values(fired: &[Fired]) -> Vec<u64> {
    fired.iter().map(|f| f.2).collect()
}

// ----- the guarantees ---------------------------------------------------------------------------

/// The spec's lateness is the scheme's real behaviour, both ways: an exact scheme fires every
/// timer at its deadline, and a scheme declared lossy (Scheme 7 with one or no migration)
/// fires some timer late — so a lossy mode that silently became exact fails here, as an exact
/// one that became late fails everywhere else.
pub fn declared_lateness_is_what_happens<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    // Every deadline from 1 to `far` in steps that cross every level's slot boundaries.
    let deadlines: Vec<u64> = (1..=spec.far)
        .step_by((spec.far / 997).max(1) as usize)
        .filter(|&d| spec.reaches(d))
        .collect();
    for (i, &d) in deadlines.iter().enumerate() {
        s.start(d, i as u64).unwrap();
    }
    let last = deadlines.iter().copied().max().unwrap_or(0);
    let fired = run_to(spec, &mut s, spec.due(last));
    assert_eq!(
        fired.len(),
        deadlines.len(),
        "every timer fires by its bound"
    );
    let late = fired.iter().filter(|f| f.3 > f.1).count();
    if spec.exact() {
        assert_eq!(late, 0, "an exact scheme fired {late} timers late");
    } else {
        assert!(
            late > 0,
            "a scheme declared lossy fired all {} timers exactly at their deadline",
            fired.len()
        );
    }
}

pub fn timers_fire_at_their_deadline_and_never_before<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    let deadlines: Vec<u64> = [
        1u64, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987,
    ]
    .into_iter()
    .filter(|&d| spec.reaches(d))
    .collect();
    for (i, &d) in deadlines.iter().enumerate() {
        s.start(d, i as u64).unwrap();
    }
    assert_eq!(s.len(), deadlines.len());
    let mut fired = Vec::new();
    for t in 1..=2000u64 {
        for f in run(&mut s, t) {
            assert!(f.3 >= f.1, "fired at {} before its deadline {}", f.3, f.1);
            assert!(
                f.3 - f.1 <= (spec.lateness)(f.1),
                "fired at {} for deadline {}: later than the scheme's bound",
                f.3,
                f.1
            );
            assert_eq!(
                f.3, t,
                "now() inside the callback is the tick being processed"
            );
            fired.push(f);
        }
    }
    assert_eq!(
        fired.len(),
        deadlines.len(),
        "every timer fired exactly once"
    );
    assert!(s.is_empty());
    if spec.exact() {
        let at: Vec<Tick> = fired.iter().map(|f| f.3).collect();
        assert_eq!(at, deadlines);
    }
}

pub fn equal_deadlines_fire_in_start_order<S: Scheme<u64>>(spec: &Spec<S>) {
    if !spec.fifo {
        return;
    }
    let mut s = (spec.make)();
    // Interleave two deadlines so the equal ones are not started back to back.
    for i in 0..40u64 {
        s.start(if i % 2 == 0 { 70 } else { 300 }, i).unwrap();
    }
    let fired = run_to(spec, &mut s, 400);
    let evens: Vec<u64> = (0..40).filter(|i| i % 2 == 0).collect();
    let odds: Vec<u64> = (0..40).filter(|i| i % 2 == 1).collect();
    assert_eq!(values(&fired), [evens, odds].concat());
}

pub fn stop_returns_the_value_and_the_timer_never_fires<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    let a = s.start(10, 1).unwrap();
    let b = s.start(10, 2).unwrap();
    let c = s.start(20, 3).unwrap();
    assert_eq!(s.stop(b), Some(2));
    assert_eq!(s.len(), 2);
    let fired = run_to(spec, &mut s, 100);
    assert_eq!(values(&fired), vec![1, 3]);
    assert_eq!(fired[0].0, a);
    assert_eq!(fired[1].0, c);
}

pub fn stopping_a_fired_stopped_or_unknown_handle_is_rejected<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    let fired = s.start(5, 1).unwrap();
    let stopped = s.start(6, 2).unwrap();
    let live = s.start(50, 3).unwrap();
    assert_eq!(s.stop(stopped), Some(2));
    run_to(spec, &mut s, 10);
    assert_eq!(s.stop(fired), None, "a fired timer's handle is stale");
    assert_eq!(s.stop(stopped), None, "a stopped timer's handle is stale");
    assert_eq!(
        s.stop(Handle::from_parts(u64::MAX, u64::MAX)),
        None,
        "a made-up handle"
    );
    assert_eq!(
        s.stop(Handle::from_parts(12345 << 32 | 9999, live.owner())),
        None
    );
    let (id, _) = live.to_parts();
    assert_eq!(
        s.stop(Handle::from_parts(id, 0)),
        None,
        "the live timer's index and generation under a forged owner"
    );
    assert_eq!(s.len(), 1, "rejected stops touch nothing");
    assert_eq!(s.stop(live), Some(3));
    assert!(s.is_empty());
}

pub fn another_structures_handle_never_acts<S: Scheme<u64>>(spec: &Spec<S>) {
    // Two fresh structures issue the same slot and generation for their first timers; only
    // the owner tells the handles apart.
    let mut a = (spec.make)();
    let mut b = (spec.make)();
    let ha = a.start(10, 1).unwrap();
    let hb = b.start(10, 2).unwrap();
    assert_ne!(ha, hb, "two structures never issue equal handles");
    assert_eq!(a.stop(hb), None, "b's handle names nothing in a");
    assert_eq!(b.stop(ha), None, "a's handle names nothing in b");
    assert_eq!((a.len(), b.len()), (1, 1), "rejected stops touch nothing");
    assert_eq!(a.stop(ha), Some(1));
    assert_eq!(b.stop(hb), Some(2));
}

pub fn a_panicking_callback_leaves_the_structure_consistent<S: Scheme<u64>>(spec: &Spec<S>) {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    let mut s = (spec.make)();
    s.start(0, 1).unwrap();
    s.start(0, 2).unwrap();
    s.start(3, 4).unwrap();
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let _ = s.advance(0, Budget::UNLIMITED, |_, e| {
            assert_ne!(e.value, 1, "the caller's callback fails on timer 1");
        });
    }));
    assert!(caught.is_err(), "the panic reaches the caller");
    s.check_invariants().unwrap();
    assert_eq!(
        s.len(),
        2,
        "the timer whose callback panicked has fired; the others wait"
    );
    // A timer started after the panic fires at the very next call, behind the one the
    // interrupted call had not reached yet.
    s.start(0, 3).unwrap();
    assert_eq!(values(&run(&mut s, 0)), [2, 3]);
    assert_eq!(values(&run_to(spec, &mut s, spec.due(3))), [4]);
    assert!(s.is_empty());
}

pub fn stale_handle_never_stops_a_new_timer<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    let old = s.start(10, 1).unwrap();
    assert_eq!(s.stop(old), Some(1));
    // The freed slot is reused (same index, new generation).
    let new = s.start(10, 2).unwrap();
    assert_eq!(new.index(), old.index(), "the slab reuses the freed slot");
    assert_ne!(new, old);
    assert_eq!(
        s.stop(old),
        None,
        "the old handle must not stop the new timer"
    );
    assert_eq!(s.len(), 1);
    let fired = run_to(spec, &mut s, 20);
    assert_eq!(values(&fired), vec![2]);
    // And after a timer fires, its slot's next tenant is safe from the fired handle too.
    let next = s.start(30, 3).unwrap();
    assert_eq!(s.stop(new), None);
    assert_eq!(s.stop(next), Some(3));
}

pub fn a_callback_may_stop_the_next_timer_in_its_bucket<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    let _a = s.start(10, 1).unwrap();
    let b = s.start(10, 2).unwrap();
    let _c = s.start(10, 3).unwrap();
    let mut got = Vec::new();
    let mut stopped = None;
    for t in 1..=spec.due(10) {
        let _ = s.advance(
            t,
            Budget::UNLIMITED,
            |tm: &mut dyn Timers<u64>, e: Expired<u64>| {
                got.push(e.value);
                if e.value == 1 {
                    stopped = tm.stop(b);
                }
            },
        );
        s.check_invariants().unwrap();
    }
    assert_eq!(
        stopped,
        Some(2),
        "the next timer in the bucket could be stopped"
    );
    assert_eq!(got, vec![1, 3]);
    assert!(s.is_empty());
}

pub fn a_callback_may_stop_itself_any_other_timer_or_one_already_fired<S: Scheme<u64>>(
    spec: &Spec<S>,
) {
    let mut s = (spec.make)();
    let a = s.start(10, 1).unwrap();
    let far = s.start(40, 2).unwrap();
    let _c = s.start(10, 3).unwrap();
    let mut results = Vec::new();
    let fired = {
        let mut got = Vec::new();
        for t in 1..=50 {
            let _ = s.advance(
                t,
                Budget::UNLIMITED,
                |tm: &mut dyn Timers<u64>, e: Expired<u64>| {
                    got.push(e.value);
                    if e.value == 1 {
                        results.push(tm.stop(e.handle)); // itself: already gone
                        results.push(tm.stop(far).map(|v| v + 100)); // another bucket
                    }
                    if e.value == 3 {
                        results.push(tm.stop(a)); // one that fired just before
                    }
                },
            );
            s.check_invariants().unwrap();
        }
        got
    };
    assert_eq!(results, vec![None, Some(102), None]);
    assert_eq!(fired, vec![1, 3]);
    assert!(s.is_empty());
}

pub fn a_callback_may_start_timers_that_fire_on_time<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    s.start(10, 1).unwrap();
    s.start(10, 2).unwrap();
    let mut got: Vec<(u64, Tick)> = Vec::new();
    let mut first = None;
    for t in 1..=3000 {
        let _ = s.advance(
            t,
            Budget::UNLIMITED,
            |tm: &mut dyn Timers<u64>, e: Expired<u64>| {
                got.push((e.value, tm.now()));
                if e.value == 1 {
                    let now = tm.now();
                    first = Some(now);
                    tm.start(now, 10).unwrap(); // at now: overdue
                    tm.start(now - 5, 11).unwrap(); // in the past: overdue too, in start order
                    tm.start(now + 20, 12).unwrap(); // a normal future tick
                                                     // Later rotations of the bucket being processed, for the wheels of 16, 64,
                                                     // 512 and 1024 buckets or slots the suite builds (where the range allows).
                    for (k, ahead) in [16u64, 64, 512, 1024].into_iter().enumerate() {
                        if spec.reaches(ahead) {
                            tm.start(now + ahead, 20 + k as u64).unwrap();
                        }
                    }
                }
            },
        );
        s.check_invariants().unwrap();
    }
    let first = first.expect("timer 1 fired");
    let at = |v: u64| got.iter().find(|g| g.0 == v).map(|g| g.1);
    let order: Vec<u64> = got.iter().map(|g| g.0).take(4).collect();
    assert_eq!(
        order,
        vec![1, 2, 10, 11],
        "the bucket first, then the overdue in start order"
    );
    // Overdue timers started by a callback fire right after the tick, at that same tick.
    assert_eq!(at(10), Some(first), "overdue from a callback: same tick");
    assert_eq!(at(11), Some(first));
    let late = |ahead: u64| (spec.lateness)(ahead);
    let t12 = at(12).unwrap();
    assert!(t12 >= first + 20 && t12 - (first + 20) <= late(20));
    for (k, ahead) in [16u64, 64, 512, 1024].into_iter().enumerate() {
        if spec.reaches(ahead) {
            let t = at(20 + k as u64).expect("a later rotation fires");
            assert!(
                t >= first + ahead && t - (first + ahead) <= late(ahead),
                "a timer {ahead} ahead fired at {t}"
            );
        }
    }
    assert!(s.is_empty());
}

pub fn a_callback_rearming_itself_in_the_past_does_not_livelock<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    s.start(3, 0).unwrap();
    let mut count = 0u64;
    // One advance covering 50 ticks: the re-armed timer fires once per tick, not forever.
    let p = s.advance(
        50,
        Budget::UNLIMITED,
        |tm: &mut dyn Timers<u64>, e: Expired<u64>| {
            count += 1;
            tm.start(0, e.value + 1).unwrap();
        },
    );
    assert!(p.complete);
    assert!(count <= 51, "re-armed {count} times in 50 ticks");
    assert_eq!(s.len(), 1);
    s.check_invariants().unwrap();
}

pub fn deadlines_in_the_past_or_at_now_fire_on_the_next_advance<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    run_to(spec, &mut s, 100);
    assert_eq!(s.now(), 100);
    s.start(100, 1).unwrap(); // exactly now
    s.start(3, 2).unwrap(); // long past
    s.start(0, 3).unwrap();
    s.start(101, 4).unwrap(); // next tick
    assert_eq!(s.next_expiry(), Some(100), "overdue work is due now");
    // Advancing to the same `now` fires the overdue ones, in start order, and nothing else.
    let fired = run(&mut s, 100);
    assert_eq!(values(&fired), vec![1, 2, 3]);
    assert!(fired.iter().all(|f| f.3 == 100));
    let fired = run(&mut s, 101);
    assert_eq!(values(&fired), vec![4]);
}

pub fn deadlines_beyond_one_rotation_fire_on_time<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    let far = spec.far;
    let near = 7u64;
    s.start(far, 1).unwrap();
    s.start(near, 2).unwrap();
    s.start(far / 2 + 3, 3).unwrap();
    let fired = run_to(spec, &mut s, far + (spec.lateness)(far));
    assert_eq!(values(&fired), vec![2, 3, 1]);
    for f in &fired {
        assert!(f.3 >= f.1 && f.3 - f.1 <= (spec.lateness)(f.1));
    }
}

pub fn deadlines_beyond_the_range_are_a_clear_error<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    match spec.range {
        Some(range) => {
            run_to(spec, &mut s, 5);
            assert!(
                s.start(5 + range, 1).is_ok(),
                "the guaranteed reach is accepted"
            );
            let max = match s.start(u64::MAX - 1, 2) {
                Err(Error::BeyondRange { expiry, max }) => {
                    assert_eq!(expiry, u64::MAX - 1);
                    max
                }
                other => panic!("expected BeyondRange, got {other:?}"),
            };
            assert!(
                max >= 5 + range,
                "the error's max is at least the guaranteed reach"
            );
            assert_eq!(
                s.start(max + 1, 3),
                Err(Error::BeyondRange {
                    expiry: max + 1,
                    max
                }),
                "one past the reported max is refused"
            );
            assert!(
                s.start(max, 4).is_ok(),
                "the reported max itself is accepted"
            );
            assert_eq!(s.len(), 2, "a refused start leaves nothing behind");
        }
        None => {
            // An unbounded scheme takes the largest deadline there is.
            let h = s.start(u64::MAX, 1).unwrap();
            assert_eq!(s.len(), 1);
            assert_eq!(s.stop(h), Some(1));
        }
    }
}

pub fn a_fixed_capacity_is_an_error_when_full_and_reusable_after<S: Scheme<u64>>(spec: &Spec<S>) {
    let Some(make) = spec.make_capped else { return };
    let mut s = make(3);
    let a = s.start(10, 1).unwrap();
    s.start(11, 2).unwrap();
    s.start(12, 3).unwrap();
    assert_eq!(s.start(13, 4), Err(Error::Full { capacity: 3 }));
    assert_eq!(s.len(), 3);
    assert_eq!(s.stop(a), Some(1));
    s.start(13, 4).unwrap();
    let fired = run_to(spec, &mut s, 20);
    assert_eq!(values(&fired), vec![2, 3, 4]);
}

pub fn time_never_goes_backwards<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    run_to(spec, &mut s, 50);
    s.start(60, 1).unwrap();
    let fired = run(&mut s, 10);
    assert!(fired.is_empty());
    assert_eq!(s.now(), 50, "an earlier now is ignored");
    assert_eq!(values(&run_to(spec, &mut s, 60)), vec![1]);
}

pub fn len_and_next_expiry_track_pending_timers<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    assert_eq!(s.next_expiry(), None);
    assert!(s.is_empty());
    let h = s.start(40, 1).unwrap();
    s.start(90, 2).unwrap();
    let n = s.next_expiry().expect("two timers pending");
    assert!(
        n > 0 && n <= spec.due(40),
        "next_expiry {n} must not be after the first timer fires"
    );
    assert_eq!(s.stop(h), Some(1));
    let n = s.next_expiry().unwrap();
    assert!(n <= spec.due(90));
    let fired = run_to(spec, &mut s, spec.due(90));
    assert_eq!(values(&fired), vec![2]);
    assert_eq!(s.next_expiry(), None);
    assert!(s.memory_bytes() > 0);
}

pub fn driving_by_next_expiry_fires_everything<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    let deadlines: Vec<u64> = [3u64, 3, 17, 64, 65, 200, 4000, 4001, spec.far]
        .into_iter()
        .filter(|&d| spec.reaches(d))
        .collect();
    for (i, &d) in deadlines.iter().enumerate() {
        s.start(d, i as u64).unwrap();
    }
    let mut fired = 0;
    let mut jumps = 0;
    while let Some(t) = s.next_expiry() {
        assert!(t >= s.now());
        for f in run(&mut s, t) {
            assert!(f.3 >= f.1 && f.3 - f.1 <= (spec.lateness)(f.1));
            fired += 1;
        }
        jumps += 1;
        assert!(jumps < 1_000_000, "next_expiry makes progress");
    }
    assert_eq!(fired, deadlines.len());
}

/// A clock interrupt that advances only at the ticks where `may_expire_at` says a timer may
/// expire (4.4BSD's `hardclock`, which skips the software interrupt otherwise) fires exactly
/// what advancing at every tick fires, and each answer is `true` where a timer expires.
pub fn advancing_only_when_may_expire_at_says_so_fires_everything<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut every = (spec.make)();
    let mut asked = (spec.make)();
    for i in 0..200u64 {
        let d = 1 + (i * 7919) % 3000;
        if spec.reaches(d) {
            every.start(d, i).unwrap();
            asked.start(d, i).unwrap();
        }
    }
    let (mut all, mut got) = (Vec::new(), Vec::new());
    let mut skipped = 0u32;
    for t in 1..=3100u64 {
        let may = asked.may_expire_at(t);
        let fired = values(&run(&mut every, t));
        if may {
            got.extend(values(&run(&mut asked, t)));
        } else {
            assert!(
                fired.is_empty(),
                "tick {t} fired {fired:?} where may_expire_at said none"
            );
            skipped += 1;
        }
        all.extend(fired);
    }
    // Whatever is left fires at the end, as a lagging interrupt catches up.
    got.extend(values(&run(&mut asked, 3100)));
    assert_eq!(got, all);
    assert!(skipped > 0 || spec.tickless, "some ticks had no work");
}

pub fn a_budgeted_advance_resumes_exactly_and_loses_nothing<S: Scheme<u64>>(spec: &Spec<S>) {
    for budget in [1u64, 2, 3, 7] {
        let mut whole = (spec.make)();
        let mut parts = (spec.make)();
        for i in 0..300u64 {
            let d = 1 + (i * 7919) % 250;
            whole.start(d, i).unwrap();
            parts.start(d, i).unwrap();
        }
        let expect = run_to(spec, &mut whole, 260);
        let mut got = Vec::new();
        let mut calls = 0;
        let mut t = 0;
        while t < 260 {
            t = if spec.tickless { 260 } else { t + 1 };
            loop {
                calls += 1;
                let p = parts.advance(t, Budget::steps(budget), |tm: &mut dyn Timers<u64>, e| {
                    got.push((e.handle, e.deadline, e.value, tm.now()))
                });
                parts.check_invariants().unwrap();
                assert!(
                    p.steps <= budget,
                    "a call took {} steps on a budget of {budget}",
                    p.steps
                );
                if p.complete {
                    break;
                }
            }
        }
        assert!(
            calls > 300 / budget as usize,
            "the budget actually interrupted"
        );
        // The two structures issue different handles (each has its own owner): compare the
        // rest of each firing.
        let strip = |f: &[Fired]| f.iter().map(|x| (x.1, x.2, x.3)).collect::<Vec<_>>();
        assert_eq!(
            strip(&got),
            strip(&expect),
            "budget {budget}: same timers, same order, same ticks"
        );
    }
}

pub fn a_budgeted_advance_tolerates_stops_and_starts_between_calls<S: Scheme<u64>>(spec: &Spec<S>) {
    // 60 timers due at 20 and 40 due at 30. A budget of 3 stops the walk of tick 20's bucket
    // part-way; between calls we stop the next ones due, start more for the same tick (placed
    // into the structure mid-walk, not overdue) and for later.
    let mut s = (spec.make)();
    let mut handles = Vec::new();
    for i in 0..100u64 {
        handles.push(s.start(if i < 60 { 20 } else { 30 }, i).unwrap());
    }
    let mut got: Vec<(u64, Tick)> = Vec::new();
    let mut stopped = Vec::new();
    let mut extra = 1000u64;
    let end = spec.due(60);
    let mut t = 0;
    while t < end {
        t = if spec.tickless { end } else { t + 1 };
        loop {
            let p = s.advance(t, Budget::steps(3), |tm: &mut dyn Timers<u64>, e| {
                got.push((e.value, tm.now()))
            });
            s.check_invariants().unwrap();
            let fired_20 = got.iter().filter(|g| g.0 < 60).count();
            if !p.complete && (1..50).contains(&fired_20) && s.now() < 30 && extra < 1020 {
                // Stop the next two still pending at 20 (whatever order the scheme fires in).
                for (i, h) in handles.iter().enumerate().take(60) {
                    if stopped.len() < 20
                        && !got.iter().any(|g| g.0 == i as u64)
                        && !stopped.contains(&(i as u64))
                    {
                        assert_eq!(s.stop(*h), Some(i as u64), "a pending timer stops");
                        stopped.push(i as u64);
                        break;
                    }
                }
                // A start for later, and one for 30 that must fire after the 30s already there.
                let now = s.now();
                s.start(now + 7, extra).unwrap();
                s.start(30.max(now + 1), extra + 1).unwrap();
                extra += 2;
            }
            if p.complete {
                break;
            }
        }
    }
    assert_eq!(s.len(), 0, "every started timer fired or was stopped");
    let mut values: Vec<u64> = got.iter().map(|g| g.0).collect();
    values.sort();
    values.dedup();
    assert_eq!(values.len(), got.len(), "nothing fired twice");
    assert!(
        stopped.iter().all(|v| !values.contains(v)),
        "nothing stopped fired"
    );
    assert_eq!(got.len() + stopped.len(), 100 + (extra - 1000) as usize);
    for &(v, at) in &got {
        let deadline = if v < 60 {
            20
        } else if v < 100 {
            30
        } else {
            at
        };
        assert!(at >= deadline && at - deadline <= (spec.lateness)(deadline));
    }
    if spec.fifo {
        let thirties: Vec<u64> = got.iter().filter(|g| g.1 == 30).map(|g| g.0).collect();
        let first_extra = thirties.iter().position(|&v| v >= 1000);
        if let Some(k) = first_extra {
            assert!(
                thirties[..k].iter().all(|&v| (60..100).contains(&v)) && thirties[..k].len() == 40,
                "timers started later for 30 fire after the forty started first: {thirties:?}"
            );
        }
    }
}

/// Three timers at 0 whose callbacks re-arm them in the past until tick `until`: the sequence of
/// (value, tick) firings an advance to `until` produces under `budget`, and the calls it took.
fn rearming_run<S: Scheme<u64>>(
    spec: &Spec<S>,
    budget: Budget,
    until: Tick,
) -> (Vec<(u64, Tick)>, usize) {
    let mut s = (spec.make)();
    for v in 0..3 {
        s.start(0, v).unwrap();
    }
    let mut log = Vec::new();
    let mut calls = 0;
    let mut t = 0;
    while t < until {
        t = if spec.tickless { until } else { t + 1 };
        loop {
            calls += 1;
            assert!(calls < 100_000, "a budgeted advance makes progress");
            let p = s.advance(t, budget, |tm: &mut dyn Timers<u64>, e| {
                let now = tm.now();
                log.push((e.value, now));
                if now < until {
                    tm.start(now.saturating_sub(e.value), e.value).unwrap();
                }
            });
            s.check_invariants().unwrap();
            if p.complete {
                break;
            }
        }
    }
    (log, calls)
}

pub fn a_budgeted_advance_with_rearming_callbacks_matches_the_unlimited_one<S: Scheme<u64>>(
    spec: &Spec<S>,
) {
    let (expect, _) = rearming_run(spec, Budget::UNLIMITED, 6);
    if spec.tickless {
        // One call: each re-armed timer fires once per drain, one drain per tick, ticks 0 to 6.
        assert_eq!(expect.len(), 3 * 7, "{expect:?}");
    }
    for budget in [1, 2, 3, 5] {
        let (got, calls) = rearming_run(spec, Budget::steps(budget), 6);
        assert_eq!(got, expect, "budget {budget}: same firings, same ticks");
        assert!(calls > 1);
    }
}

pub fn deadlines_at_the_end_of_time_fire<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    // With nothing pending, every scheme jumps straight there.
    run(&mut s, u64::MAX - 1000);
    let mut deadlines = vec![u64::MAX - 999, u64::MAX - 3];
    if spec.reaches(1000) {
        deadlines.push(u64::MAX);
    }
    for (i, &d) in deadlines.iter().enumerate() {
        if s.start(d, i as u64).is_err() {
            // A bounded scheme may refuse, clearly; it must not panic or wrap.
            assert!(spec.range.is_some());
        }
    }
    s.check_invariants().unwrap();
    let expect = s.len();
    let mut fired = Vec::new();
    let mut t = u64::MAX - 1000;
    while t < u64::MAX {
        t = if spec.tickless { u64::MAX } else { t + 1 };
        fired.extend(run(&mut s, t));
    }
    assert_eq!(
        fired.len(),
        expect,
        "every accepted timer fires by the end of time"
    );
    for f in &fired {
        assert!(f.3 >= f.1);
    }
    assert!(s.is_empty());
    assert_eq!(s.next_expiry(), None);
}

pub fn reset_moves_a_timer_keeps_its_handle_and_returns_its_old_deadline<S: Scheme<u64>>(
    spec: &Spec<S>,
) {
    let mut s = (spec.make)();
    let a = s.start(10, 1).unwrap();
    let b = s.start(20, 2).unwrap();
    let c = s.start(30, 3).unwrap();
    assert_eq!(s.deadline(a), Some(10));
    assert!(s.contains(a));
    assert_eq!(s.reset(a, 25, 0), Some(10), "the old deadline comes back");
    assert_eq!(s.deadline(a), Some(25));
    assert_eq!(s.len(), 3, "a reset neither adds nor removes a timer");
    s.check_invariants().unwrap();
    if spec.exact() {
        let fired = run_to(spec, &mut s, 24);
        assert_eq!(values(&fired), [2], "the reset timer left its old place");
    }
    let fired = run_to(spec, &mut s, spec.due(30));
    let mut got: Vec<(Handle, Tick, u64)> = fired.iter().map(|f| (f.0, f.1, f.2)).collect();
    got.sort_by_key(|f| f.2);
    let mut expect = vec![(a, 25, 1), (b, 20, 2), (c, 30, 3)];
    if spec.exact() {
        expect.remove(1);
    }
    assert_eq!(got, expect, "the reset timer fires under its own handle");
    assert!(
        fired.iter().all(|f| f.3 >= f.1),
        "never before the deadline"
    );
    for h in [a, b, c] {
        assert!(!s.contains(h), "a fired timer is not pending");
        assert_eq!(s.deadline(h), None);
        assert_eq!(s.reset(h, 100, 0), None, "a fired timer's handle is stale");
    }
    let other = (spec.make)().start(10, 9).unwrap();
    assert_eq!(s.reset(other, 100, 0), None, "another structure's handle");
    assert!(!s.contains(other));
    assert_eq!(
        s.reset(Handle::from_parts(u64::MAX, u64::MAX), 100, 0),
        None
    );
    assert!(s.is_empty());
}

pub fn a_reset_timer_counts_as_started_last<S: Scheme<u64>>(spec: &Spec<S>) {
    if !spec.fifo {
        return;
    }
    let mut s = (spec.make)();
    let x = s.start(40, 1).unwrap();
    s.start(40, 2).unwrap();
    let z = s.start(60, 3).unwrap();
    assert_eq!(s.reset(x, 40, 0), Some(40));
    assert_eq!(s.reset(z, 40, 0), Some(60));
    let fired = run_to(spec, &mut s, 50);
    assert_eq!(values(&fired), [2, 1, 3]);
}

pub fn reset_into_the_past_fires_on_the_next_advance<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    run_to(spec, &mut s, 20);
    let h = s.start(500, 1).unwrap();
    assert_eq!(s.reset(h, 5, 0), Some(500));
    assert_eq!(s.deadline(h), Some(5));
    let fired = run(&mut s, 20);
    assert_eq!(fired, [(h, 5, 1, 20)]);
}

pub fn reset_beyond_the_range_touches_nothing<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    let h = s.start(10, 1).unwrap();
    let got = s.reset(h, u64::MAX, 0);
    assert_eq!(
        got.is_none(),
        spec.range.is_some(),
        "refused exactly where start would be"
    );
    match got {
        None => {
            assert_eq!(
                s.deadline(h),
                Some(10),
                "a refused reset leaves the timer as it was"
            );
            let fired = run_to(spec, &mut s, spec.due(10));
            assert_eq!(values(&fired), [1]);
        }
        Some(previous) => {
            assert_eq!(previous, 10);
            assert_eq!(s.deadline(h), Some(u64::MAX));
            assert_eq!(s.stop(h), Some(1));
        }
    }
    s.check_invariants().unwrap();
}

pub fn a_callback_may_reset_any_timer_and_its_handle_stays_valid<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    let a = s.start(10, 1).unwrap();
    let b = s.start(10, 2).unwrap();
    let c = s.start(30, 3).unwrap();
    let mut answers = Vec::new();
    let mut fired = Vec::new();
    for t in 1..=spec.due(60).max(60) {
        let _ = s.advance(
            t,
            Budget::UNLIMITED,
            |tm: &mut dyn Timers<u64>, e: Expired<u64>| {
                fired.push((e.handle, e.value));
                if e.value == 1 {
                    // The firing timer (stale: it fired), the next one in its bucket, a later one.
                    answers.push(tm.reset(a, 50, 0));
                    answers.push(tm.reset(b, 40, 0));
                    answers.push(tm.reset(c, 20, 0));
                }
            },
        );
        s.check_invariants().unwrap();
    }
    assert_eq!(answers, [None, Some(10), Some(30)]);
    assert_eq!(fired, [(a, 1), (c, 3), (b, 2)]);
    assert!(s.is_empty());
}

pub fn start_with_fires_inside_the_window<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    let h = s.start_with(100, 50, 1).unwrap();
    s.start(120, 2).unwrap();
    let mut fired = Vec::new();
    while let Some(t) = s.next_expiry() {
        for f in run(&mut s, t) {
            fired.push((f.0, f.2, f.3));
        }
    }
    assert_eq!(fired.len(), 2);
    assert_eq!((fired[0].0, fired[0].1), (h, 1));
    let at = fired[0].2;
    assert!(
        (100..=150 + (spec.lateness)(100)).contains(&at),
        "fired at {at}"
    );
}

pub fn advance_to_is_advance_without_a_budget<S: Scheme<u64>>(spec: &Spec<S>) {
    let mut s = (spec.make)();
    for i in 0..50u64 {
        s.start(1 + i % 7, i).unwrap();
    }
    let until = spec.due(7);
    // Due one tick after the call's time: it must not fire (never before its deadline).
    s.start(until + 1, 99).unwrap();
    let mut seen = 0usize;
    let fired = s.advance_to(until, |_, _| seen += 1);
    assert_eq!((fired, seen), (50, 50));
    assert_eq!(s.len(), 1);
    assert_eq!(s.advance_to(until, |_, _| {}), 0, "nothing due twice");
}

/// Instantiates the suite for one scheme: `conformance!(module_name, spec_expression)`.
/// (The suite lives in the test crate's `conformance` module, hence `crate::` below.)
#[allow(clippy::crate_in_macro_def)]
#[macro_export]
macro_rules! conformance {
    ($name:ident, $spec:expr) => {
        mod $name {
            use super::*;
            conformance!(@tests $spec;
                timers_fire_at_their_deadline_and_never_before,
                declared_lateness_is_what_happens,
                equal_deadlines_fire_in_start_order,
                stop_returns_the_value_and_the_timer_never_fires,
                stopping_a_fired_stopped_or_unknown_handle_is_rejected,
                stale_handle_never_stops_a_new_timer,
                another_structures_handle_never_acts,
                a_panicking_callback_leaves_the_structure_consistent,
                a_callback_may_stop_the_next_timer_in_its_bucket,
                a_callback_may_stop_itself_any_other_timer_or_one_already_fired,
                a_callback_may_start_timers_that_fire_on_time,
                a_callback_rearming_itself_in_the_past_does_not_livelock,
                deadlines_in_the_past_or_at_now_fire_on_the_next_advance,
                deadlines_beyond_one_rotation_fire_on_time,
                deadlines_beyond_the_range_are_a_clear_error,
                a_fixed_capacity_is_an_error_when_full_and_reusable_after,
                time_never_goes_backwards,
                len_and_next_expiry_track_pending_timers,
                driving_by_next_expiry_fires_everything,
                advancing_only_when_may_expire_at_says_so_fires_everything,
                a_budgeted_advance_resumes_exactly_and_loses_nothing,
                a_budgeted_advance_tolerates_stops_and_starts_between_calls,
                deadlines_at_the_end_of_time_fire,
                a_budgeted_advance_with_rearming_callbacks_matches_the_unlimited_one,
                random_operations_agree_with_the_oracle,
                recorded_sequences_agree_with_the_oracle,
                reset_moves_a_timer_keeps_its_handle_and_returns_its_old_deadline,
                a_reset_timer_counts_as_started_last,
                reset_into_the_past_fires_on_the_next_advance,
                reset_beyond_the_range_touches_nothing,
                a_callback_may_reset_any_timer_and_its_handle_stays_valid,
                start_with_fires_inside_the_window,
                advance_to_is_advance_without_a_budget,
            );
        }
    };
    (@tests $spec:expr; $($test:ident,)*) => {
        $(
            #[test]
            fn $test() {
                crate::conformance::$test(&$spec);
            }
        )*
    };
}

pub use oracle::{
    random_operations_agree_with_the_oracle, recorded_sequences_agree_with_the_oracle,
};
