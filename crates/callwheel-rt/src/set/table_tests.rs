//! The table's own invariants: generations, keys and slot reuse.

use callwheel::Budget;

use super::*;

fn table(quota: usize) -> Table {
    Table::new(quota, Tolerance::EXACT, Missed::Burst, 1_000).unwrap()
}

#[test]
fn a_slot_whose_generations_run_out_is_rekeyed_not_wrapped() {
    let mut t = table(1);
    // Shrink the generation field so the test reaches its end quickly, on a never-used key
    // (a key given back by another test's table may start above the shrunken field).
    t.layout.gen_bits = 3;
    t.key = super::super::handle::fresh_key().unwrap();
    t.base = 0;
    let first_key = t.key();
    let mut seen = std::collections::HashSet::new();
    for i in 0..40u64 {
        let h = t.create(1_000, 10, 0, i).unwrap();
        assert!(seen.insert(h), "handle {h:#x} issued twice");
        t.cancel(1_000, h).unwrap();
        assert!(t.get(1_000, h).is_err());
        t.check().unwrap();
    }
    assert_ne!(t.key(), first_key);
    assert_eq!(t.records.len(), 1);
}

#[test]
fn stale_handles_stay_stale_after_the_slot_is_reused() {
    let mut t = table(4);
    let a = t.create(1_000, 10, 0, 1).unwrap();
    t.cancel(1_000, a).unwrap();
    let b = t.create(1_000, 10, 0, 2).unwrap();
    assert_eq!(t.layout.slot(a), t.layout.slot(b));
    assert_ne!(a, b);
    assert!(matches!(t.cancel(1_000, a), Err(Error::InvalidHandle)));
    assert_eq!(t.get(1_000, b).unwrap(), (10, 0));
    t.check().unwrap();
}

#[test]
fn a_budgeted_expiry_moves_at_most_its_budget_and_resumes() {
    let mut t = table(64);
    for i in 0..40 {
        t.create(1_000, 10 + i % 3, 0, i).unwrap();
    }
    let mut rounds = 0;
    let mut moved = 0;
    while !t.expire(1_100, Budget::steps(8)) {
        let now_moved = t.totals().0;
        assert!(
            now_moved - moved <= 8,
            "{} moved in one round",
            now_moved - moved
        );
        moved = now_moved;
        rounds += 1;
        t.check().unwrap();
    }
    assert!(rounds >= 40 / 8 - 1, "{rounds} rounds");
    assert_eq!((t.queued(), t.totals().0), (40, 40));
    t.check().unwrap();
}

#[test]
fn expiry_queues_in_deadline_order_and_reap_restarts_from_the_deadline() {
    let mut t = table(8);
    let slow = t.create(1_000, 30, 100, 3).unwrap();
    let fast = t.create(1_000, 10, 0, 1).unwrap();
    assert!(t.expire(1_050, Budget::UNLIMITED));
    assert_eq!((t.queued(), t.totals().0), (2, 2));
    t.check().unwrap();
    assert_eq!(t.reap(1_050).unwrap().handle.to_bits(), fast);
    let r = t.reap(1_050).unwrap();
    assert_eq!(
        (r.handle.to_bits(), r.deadline, r.overruns),
        (slow, 1_030, 0)
    );
    // Next deadline 1_130, not 1_150.
    assert_eq!(t.get(1_050, slow).unwrap(), (80, 100));
    assert!(t.reap(1_050).is_none());
    t.check().unwrap();
}
