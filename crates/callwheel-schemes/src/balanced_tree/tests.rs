//! The red-black tree against a model under random starts, stops, resets and advances, with
//! its invariants checked after every step.

extern crate std;
use super::BalancedTree;
use crate::clock::TickDriven;
use callwheel::{Budget, Expired, Handle, Scheme, Tick, Timers};
use proptest::prelude::*;
use std::vec::Vec;

/// One operation of a random run.
#[derive(Clone, Debug)]
enum Op {
    /// Start a timer `delta` ticks ahead (at least one, so it goes into the tree).
    Start(Tick),
    /// Stop the pending timer at this position of the model (modulo its length).
    Stop(usize),
    /// Reset the pending timer at this position to `delta` ticks ahead.
    Reset(usize, Tick),
    /// Advance by this many ticks, in calls of at most this many steps (0: unlimited).
    Advance(Tick, u64),
}

/// Deadlines from a narrow window (many equal ones) or a wide one (a deep, varied tree).
fn delta() -> impl Strategy<Value = Tick> {
    prop_oneof![3 => 1..6u64, 1 => 1..10_000u64]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => delta().prop_map(Op::Start),
        3 => any::<usize>().prop_map(Op::Stop),
        1 => (any::<usize>(), delta()).prop_map(|(i, d)| Op::Reset(i, d)),
        2 => (0..8u64, 0..4u64).prop_map(|(d, b)| Op::Advance(d, b)),
    ]
}

/// The model: pending timers as (deadline, start order, value, handle), kept sorted by
/// (deadline, start order), which is the order they must fire in.
struct Model {
    pending: Vec<(Tick, u64, u64, Handle)>,
    seq: u64,
}

impl Model {
    fn add(&mut self, expiry: Tick, value: u64, handle: Handle) {
        self.seq += 1;
        let key = (expiry, self.seq);
        let at = self.pending.partition_point(|e| (e.0, e.1) < key);
        self.pending.insert(at, (expiry, self.seq, value, handle));
    }
}

fn check(s: &BalancedTree<u64>, model: &Model) -> Result<(), TestCaseError> {
    if let Err(e) = TickDriven::check_structure(s) {
        return Err(TestCaseError::fail(e));
    }
    if let Err(e) = s.check_invariants() {
        return Err(TestCaseError::fail(e));
    }
    prop_assert_eq!(s.len(), model.pending.len());
    prop_assert_eq!(s.next_expiry(), model.pending.first().map(|e| e.0));
    Ok(())
}

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let mut s = BalancedTree::<u64>::new();
    let mut model = Model {
        pending: Vec::new(),
        seq: 0,
    };
    let mut value = 0u64;
    for op in ops {
        match *op {
            Op::Start(d) => {
                value += 1;
                let expiry = s.now() + d;
                let h = s.start(expiry, value).unwrap();
                model.add(expiry, value, h);
            }
            Op::Stop(i) if !model.pending.is_empty() => {
                let (_, _, v, h) = model.pending.remove(i % model.pending.len());
                prop_assert_eq!(s.stop(h), Some(v));
                prop_assert_eq!(s.stop(h), None);
            }
            Op::Reset(i, d) if !model.pending.is_empty() => {
                let (old, _, v, h) = model.pending.remove(i % model.pending.len());
                let expiry = s.now() + d;
                prop_assert_eq!(s.reset(h, expiry, 0), Some(old));
                model.add(expiry, v, h);
            }
            Op::Stop(_) | Op::Reset(..) => {}
            Op::Advance(d, steps) => {
                let now = s.now() + d;
                let budget = if steps == 0 {
                    Budget::UNLIMITED
                } else {
                    Budget::steps(steps)
                };
                let mut fired = Vec::new();
                loop {
                    let p = s.advance(now, budget, |_: &mut dyn Timers<u64>, e: Expired<u64>| {
                        fired.push((e.deadline, e.value))
                    });
                    if let Err(e) = TickDriven::check_structure(&s) {
                        return Err(TestCaseError::fail(e));
                    }
                    if p.complete {
                        break;
                    }
                }
                let due = model.pending.partition_point(|e| e.0 <= now);
                let expect: Vec<(Tick, u64)> =
                    model.pending.drain(..due).map(|e| (e.0, e.2)).collect();
                prop_assert_eq!(fired, expect);
            }
        }
        check(&s, &model)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Random starts, stops, resets and (budgeted) advances against a sorted vector: the
    /// structure check holds after every operation, and timers fire in deadline order, in
    /// start order among equal deadlines.
    #[test]
    fn random_operations_keep_the_red_black_invariants_and_fire_in_order(
        ops in proptest::collection::vec(op(), 0..400),
    ) {
        run(&ops)?;
    }
}

/// A large tree built in ascending, descending and equal-deadline order (each a worst case
/// for an unbalanced tree), then emptied from the middle outwards, checked as it goes.
#[test]
fn sorted_and_equal_insertions_stay_balanced() {
    for shape in 0..3u64 {
        let mut s = BalancedTree::<u64>::new();
        let mut handles = Vec::new();
        for i in 0..2_000u64 {
            let expiry = match shape {
                0 => 1 + i,
                1 => 10_000 - i,
                _ => 7,
            };
            handles.push(s.start(expiry, i).unwrap());
            if i % 97 == 0 {
                TickDriven::check_structure(&s).unwrap();
            }
        }
        TickDriven::check_structure(&s).unwrap();
        let mid = handles.len() / 2;
        for k in 0..handles.len() {
            let i = if k % 2 == 0 {
                mid + k / 2
            } else {
                mid - 1 - k / 2
            };
            assert_eq!(s.stop(handles[i]), Some(i as u64));
            if k % 89 == 0 {
                TickDriven::check_structure(&s).unwrap();
            }
        }
        TickDriven::check_structure(&s).unwrap();
        assert_eq!(s.len(), 0);
    }
}
