//! The peer adapters against the firing rule of docs/workloads.md and the `Timers` contract: exactly
//! the timers with expiry ≤ t fire at `advance(t)`, in deadline order (then start order, except
//! for `DelayQueue`, whose slots are stacks); a stopped or fired timer's handle is rejected;
//! `next_expiry` names the earliest deadline.

use callwheel::{Budget, Scheme, Tick, Timers};
use callwheel_bench::peers::{BTreeMapPeer, DelayQueuePeer, HeapLazy};

fn fire<S: Scheme<u64>>(s: &mut S, t: Tick) -> Vec<(Tick, Tick, u64)> {
    let mut fired = Vec::new();
    let progress = s.advance(t, Budget::UNLIMITED, |timers, e| {
        fired.push((timers.now(), e.deadline, e.value))
    });
    assert!(progress.complete);
    assert_eq!(progress.fired, fired.len());
    fired
}

/// `queue_quirks`: the two ways `DelayQueue` differs: equal deadlines do not fire in start order
/// (compared as a set), and a deadline in the past is reported as the start instant.
fn contract<S: Scheme<u64>>(mut s: S, queue_quirks: bool) {
    assert_eq!(s.now(), 0);
    assert_eq!(s.next_expiry(), None);
    let a = s.start(10, 1).unwrap();
    let b = s.start(12, 2).unwrap();
    s.start(10, 3).unwrap();
    s.start(11, 4).unwrap();
    assert_eq!(s.len(), 4);
    assert_eq!(s.next_expiry(), Some(10));

    // Nothing before its expiry, not even one tick early (the off-by-one check).
    assert!(fire(&mut s, 9).is_empty());
    assert_eq!(s.now(), 9);
    let mut due = fire(&mut s, 10);
    if queue_quirks {
        due.sort_unstable();
    }
    assert_eq!(due, [(10, 10, 1), (10, 10, 3)]);
    assert_eq!(s.stop(a), None, "a fired timer's handle is stale");
    assert_eq!(s.stop(b), Some(2));
    assert_eq!(s.stop(b), None, "a stopped timer's handle is stale");
    assert_eq!(s.len(), 1);
    assert_eq!(s.next_expiry(), Some(11));

    // A jump fires everything due, and the clock never goes back.
    s.start(1_000, 5).unwrap();
    assert_eq!(fire(&mut s, 500), [(500, 11, 4)]);
    assert!(fire(&mut s, 400).is_empty());
    assert_eq!(s.now(), 500);
    // A deadline at or before the clock fires at the next advance.
    s.start(100, 6).unwrap();
    let reported = if queue_quirks { 500 } else { 100 };
    assert_eq!(fire(&mut s, 500), [(500, reported, 6)]);
    assert_eq!(fire(&mut s, 1_000), [(1_000, 1_000, 5)]);
    assert!(s.is_empty());
    assert_eq!(s.next_expiry(), None);
    s.check_invariants().unwrap();
}

#[test]
fn heap_lazy_keeps_the_contract() {
    contract(HeapLazy::new(), false);
}

#[test]
fn btreemap_keeps_the_contract() {
    contract(BTreeMapPeer::new(), false);
}

#[test]
fn delayqueue_keeps_the_contract() {
    // DelayQueue fires equal deadlines last started first (each wheel slot is a stack), and
    // reports a past deadline as the instant the timer was inserted.
    contract(DelayQueuePeer::new().unwrap(), true);
}

#[test]
fn heap_lazy_keeps_tombstones_until_they_reach_the_top() {
    let mut s = HeapLazy::new();
    let h = s.start(50, 1).unwrap();
    s.start(60, 2).unwrap();
    assert_eq!(s.stop(h), Some(1));
    assert_eq!(s.len(), 1);
    assert_eq!(s.entries(), 2, "the cancelled entry stays in the heap");
    assert_eq!(
        s.next_expiry(),
        Some(50),
        "a tombstone on top makes the query early"
    );
    assert!(fire(&mut s, 55).is_empty());
    assert_eq!(s.entries(), 1, "popped at the top");
    assert_eq!(fire(&mut s, 60), [(60, 60, 2)]);
}

#[test]
fn btreemap_refuses_deadlines_its_handles_cannot_carry() {
    let mut s = BTreeMapPeer::new();
    assert!(s.start(BTreeMapPeer::MAX_DEADLINE, 1).is_ok());
    assert!(s.start(BTreeMapPeer::MAX_DEADLINE + 1, 2).is_err());
}

#[test]
fn delayqueue_structures_can_follow_one_another() {
    // Each structure owns its runtime and enter guard; building one after dropping another (as
    // every repetition does) must work.
    for round in 0..3 {
        let mut s = DelayQueuePeer::new().unwrap();
        s.start(5 + round, round).unwrap();
        assert_eq!(fire(&mut s, 5 + round), [(5 + round, 5 + round, round)]);
    }
}

/// `reset` moves a pending timer under the same handle and answers its old deadline; a stale
/// handle is refused; a timer reset twice, then stopped, never fires.
fn reset_contract<S: Scheme<u64>>(mut s: S) {
    let a = s.start(10, 1).unwrap();
    let b = s.start(20, 2).unwrap();
    let c = s.start(30, 3).unwrap();
    assert_eq!((s.deadline(a), s.contains(a)), (Some(10), true));
    assert_eq!(s.reset(a, 25, 0), Some(10));
    assert_eq!(s.deadline(a), Some(25));
    assert_eq!(s.reset(c, 40, 0), Some(30));
    assert_eq!(s.reset(c, 45, 0), Some(40));
    assert_eq!(
        s.stop(c),
        Some(3),
        "a reset timer can be stopped by its handle"
    );
    assert_eq!(s.len(), 2);
    let mut fired = Vec::new();
    let _ = s.advance(100, Budget::UNLIMITED, |_, e| {
        fired.push((e.handle, e.deadline, e.value))
    });
    assert_eq!(fired, [(b, 20, 2), (a, 25, 1)]);
    for h in [a, b, c] {
        assert_eq!((s.deadline(h), s.contains(h)), (None, false));
        assert_eq!(
            s.reset(h, 200, 0),
            None,
            "a fired or stopped timer's handle is stale"
        );
    }
    assert!(s.is_empty());
    s.check_invariants().unwrap();
}

#[test]
fn heap_lazy_resets_under_the_same_handle() {
    reset_contract(HeapLazy::new());
}

#[test]
fn btreemap_resets_under_the_same_handle() {
    reset_contract(BTreeMapPeer::new());
}

#[test]
fn delayqueue_resets_under_the_same_handle() {
    reset_contract(DelayQueuePeer::new().unwrap());
}
