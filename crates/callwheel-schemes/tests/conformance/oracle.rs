//! Random sequences of start / stop / advance (with random budgets) checked against a simple
//! oracle: a map of pending timers.
//!
//! What the oracle checks at every callback:
//! - the timer was pending (nothing fires twice, nothing stopped fires) with that deadline and
//!   value;
//! - it fires no earlier than its deadline, and no later than the scheme's lateness bound; an
//!   exact scheme fires a timer whose deadline was ahead at start *at* its deadline;
//! - firing times never decrease; for a FIFO scheme, the firing order is sorted by (tick,
//!   overdue-or-not, start order), separately for overdue timers started by callbacks (which
//!   wait for the next drain, so a budget-interrupted drain may first fire an overdue timer
//!   started later, between calls).
//!
//! And after every advance that reports completion: every timer whose deadline plus bound has
//! been reached has fired. `check_invariants` runs after every operation.

use std::collections::BTreeMap;

use callwheel::{Budget, Handle, Scheme, Tick, Timers};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use super::Spec;

#[derive(Clone, Debug)]
pub enum Op {
    /// Start a timer `delta` ticks ahead of the cursor (0: at now; `past`: that many behind).
    Start { delta: u64, past: u64 },
    /// Stop the `pick`-th handle ever issued (live, fired or stopped alike).
    Stop { pick: usize },
    /// Advance by `by` ticks with an optional step budget; with `act`, callbacks start and stop
    /// timers too.
    Advance {
        by: u64,
        budget: Option<u64>,
        act: bool,
    },
}

/// What happened inside one `advance`, in order.
enum Event {
    Fired(Handle, Tick, u64, Tick),
    Started(Handle, Tick, u64, Tick),
    Stopped(Handle, Option<u64>),
}

fn op(range: u64) -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..range, prop_oneof![9 => Just(0u64), 1 => 1..20u64])
            .prop_map(|(delta, past)| Op::Start { delta, past }),
        2 => any::<usize>().prop_map(|pick| Op::Stop { pick }),
        3 => (0..40u64, prop_oneof![1 => Just(None), 1 => (1..12u64).prop_map(Some)], any::<bool>())
            .prop_map(|(by, budget, act)| Op::Advance { by, budget, act }),
    ]
}

struct Pending {
    deadline: Tick,
    value: u64,
    seq: u64,
    /// The deadline was at or before the cursor when it started.
    overdue: bool,
    /// Ticks ahead of the cursor at start.
    delta: Tick,
    /// The cursor when it started.
    started: Tick,
    /// Started by a callback (an overdue one may then fire one tick later).
    from_callback: bool,
}

/// Runs one sequence; panics (with the failing step) on any disagreement.
pub fn check_sequence<S: Scheme<u64>>(spec: &Spec<S>, ops: &[Op]) {
    let mut s = (spec.make)();
    let mut pending: BTreeMap<Handle, Pending> = BTreeMap::new();
    let mut issued: Vec<Handle> = Vec::new();
    let mut seq = 0u64;
    let mut target: Tick = 0;
    let mut last_key = [(0u64, false, 0u64); 2];
    let mut last_at: Tick = 0;
    let exact = spec.exact();
    for (step, op) in ops.iter().enumerate() {
        match *op {
            Op::Start { delta, past } => {
                let now = s.now();
                let deadline = if past > 0 {
                    now.saturating_sub(past)
                } else {
                    now + delta
                };
                seq += 1;
                match s.start(deadline, seq) {
                    Ok(h) => {
                        issued.push(h);
                        let old = pending.insert(
                            h,
                            Pending {
                                deadline,
                                value: seq,
                                seq,
                                overdue: deadline <= now,
                                delta: deadline.saturating_sub(now),
                                started: now,
                                from_callback: false,
                            },
                        );
                        assert!(old.is_none(), "step {step}: a live handle was issued twice");
                    }
                    Err(e) => {
                        let range = spec.range.expect("only bounded schemes refuse a start");
                        assert!(delta > range, "step {step}: refused {delta} ahead: {e}");
                    }
                }
            }
            Op::Stop { pick } => {
                if issued.is_empty() {
                    continue;
                }
                let h = issued[pick % issued.len()];
                let expect = pending.remove(&h).map(|p| p.value);
                assert_eq!(s.stop(h), expect, "step {step}: stop of {h:?}");
            }
            Op::Advance { by, budget, act } => {
                target += by;
                let budget = budget.map_or(Budget::UNLIMITED, Budget::steps);
                let mut events: Vec<Event> = Vec::new();
                let snapshot = issued.clone();
                let mut next_seq = seq;
                let p = s.advance(target, budget, |t: &mut dyn Timers<u64>, e| {
                    let now = t.now();
                    events.push(Event::Fired(e.handle, e.deadline, e.value, now));
                    if act && e.value % 3 == 0 {
                        // A deadline ahead, at now, or in the past.
                        let deadline = match e.value % 4 {
                            0 => now,
                            1 => now.saturating_sub(2),
                            _ => now + e.value % 50 + 1,
                        };
                        next_seq += 1;
                        if let Ok(h) = t.start(deadline, next_seq) {
                            events.push(Event::Started(h, deadline, next_seq, now));
                        }
                    }
                    if act && e.value % 5 == 0 && !snapshot.is_empty() {
                        let h = snapshot[(e.value as usize * 7) % snapshot.len()];
                        events.push(Event::Stopped(h, t.stop(h)));
                    }
                });
                seq = next_seq;
                let fired_count = events
                    .iter()
                    .filter(|e| matches!(e, Event::Fired(..)))
                    .count();
                assert_eq!(p.fired, fired_count);
                for event in events {
                    let (h, deadline, value, at) = match event {
                        Event::Started(h, deadline, value, now) => {
                            issued.push(h);
                            pending.insert(
                                h,
                                Pending {
                                    deadline,
                                    value,
                                    seq: value,
                                    overdue: deadline <= now,
                                    delta: deadline.saturating_sub(now),
                                    started: now,
                                    from_callback: true,
                                },
                            );
                            continue;
                        }
                        Event::Stopped(h, got) => {
                            let expect = pending.remove(&h).map(|p| p.value);
                            assert_eq!(got, expect, "step {step}: stop from a callback");
                            continue;
                        }
                        Event::Fired(h, deadline, value, at) => (h, deadline, value, at),
                    };
                    let p = pending
                        .remove(&h)
                        .unwrap_or_else(|| panic!("step {step}: {h:?} fired but was not pending"));
                    assert_eq!((p.deadline, p.value), (deadline, value), "step {step}");
                    assert!(
                        at >= deadline,
                        "step {step}: fired at {at} before {deadline}"
                    );
                    assert!(at <= target, "step {step}: fired at {at} past the target");
                    assert!(at >= last_at, "step {step}: fired at {at} after {last_at}");
                    last_at = at;
                    if spec.fifo {
                        // An overdue timer a callback started waits for the next drain, while
                        // one started between calls joins the drain a budget interrupted: the
                        // two kinds keep start order each among themselves only.
                        let class = usize::from(p.overdue && p.from_callback);
                        let key = (at, p.overdue, p.seq);
                        assert!(
                            key > last_key[class],
                            "step {step}: order {key:?} after {:?}",
                            last_key[class]
                        );
                        last_key[class] = key;
                    }
                    if p.overdue {
                        // The next drain: at once between calls; from a callback, right after
                        // the tick (or, started during a drain, the one after the next tick).
                        let slack = u64::from(p.from_callback);
                        assert!(
                            at >= p.started && at <= p.started + slack,
                            "step {step}: overdue timer started at {} fired at {at}",
                            p.started
                        );
                        continue;
                    }
                    let late = at - deadline;
                    assert!(
                        late <= (spec.lateness)(p.delta),
                        "step {step}: {late} ticks late for a timer {} ahead",
                        p.delta
                    );
                    if exact {
                        assert_eq!(at, deadline, "step {step}: exact scheme fired late");
                    }
                }
                if p.complete {
                    assert_eq!(
                        s.now(),
                        target,
                        "step {step}: a complete advance reaches now"
                    );
                    for (h, p) in &pending {
                        // Overdue timers started between calls fire in the next call's drain; a
                        // callback's may wait for the next call when it came in the last drain.
                        let due = if p.overdue {
                            !p.from_callback
                        } else {
                            p.deadline.saturating_add((spec.lateness)(p.delta)) <= target
                        };
                        assert!(
                            !due,
                            "step {step}: {h:?} due at {} did not fire",
                            p.deadline
                        );
                    }
                }
            }
        }
        // The wake-up query is never later than the first timer will fire.
        let now = s.now();
        let first = pending
            .values()
            .map(|p| {
                if p.overdue {
                    now
                } else {
                    p.deadline.saturating_add((spec.lateness)(p.delta)).max(now)
                }
            })
            .min();
        match (s.next_expiry(), first) {
            (None, None) => {}
            (Some(n), Some(f)) => assert!(n <= f, "step {step}: next_expiry {n} after {f}"),
            (n, f) => panic!("step {step}: next_expiry {n:?} with first firing {f:?}"),
        }
        s.check_invariants()
            .unwrap_or_else(|e| panic!("step {step} ({op:?}): {e}"));
        assert_eq!(s.len(), pending.len(), "step {step}: len");
    }
}

pub fn random_operations_agree_with_the_oracle<S: Scheme<u64>>(spec: &Spec<S>) {
    // Deadlines up to a few rotations of the small wheels the suite builds.
    let range = spec.range.map_or(3000, |r| r.saturating_add(20).min(3000));
    let cases = std::env::var("CALLWHEEL_PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(96);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&proptest::collection::vec(op(range), 1..300), |ops| {
            check_sequence(spec, &ops);
            Ok(())
        })
        .unwrap();
}

/// Sequences the random test once found failing, kept so they run on every scheme every time.
fn recorded() -> Vec<Vec<Op>> {
    let start = |delta| Op::Start { delta, past: 0 };
    let advance = |budget, act| Op::Advance { by: 0, budget, act };
    // Found at 20 000 cases, then reduced by hand: timer 12's callback starts timer 13 at now
    // (overdue, from a callback) in a drain that a budget of one step interrupts; timer 14 is
    // started at now between the calls; the resumed drain fires 14, and 13 fires after it.
    let mut epoch_order = vec![start(0); 11];
    epoch_order.extend([
        advance(None, false),
        start(0),
        advance(Some(1), true),
        start(0),
        advance(None, false),
        advance(None, false),
    ]);
    vec![epoch_order]
}

pub fn recorded_sequences_agree_with_the_oracle<S: Scheme<u64>>(spec: &Spec<S>) {
    for ops in recorded() {
        check_sequence(spec, &ops);
    }
}
