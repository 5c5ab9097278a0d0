//! Runs the conformance suite (tests/conformance/) on every scheme of the family.

#[macro_use]
mod conformance;

use callwheel::Wheel;
use callwheel_schemes::balanced_tree::BalancedTree;
use callwheel_schemes::basic_wheel::BasicWheel;
use callwheel_schemes::binary_heap::BinaryHeap;
use callwheel_schemes::calendar_queue::CalendarQueue;
use callwheel_schemes::differential_list::DifferentialList;
use callwheel_schemes::hashed_wheel::HashedWheel;
use callwheel_schemes::hashed_wheel_sorted::HashedWheelSorted;
use callwheel_schemes::hierarchical_wheel::{HierarchicalWheel, Migration};
use callwheel_schemes::linux_wheel::{self, LinuxWheel};
use callwheel_schemes::ordered_list::{OrderedList, Search};
use callwheel_schemes::simulation_wheel::SimulationWheel;
use callwheel_schemes::straightforward::Straightforward;
use conformance::Spec;

fn exact(_: u64) -> u64 {
    0
}

conformance!(
    scheme6_hashed_wheel,
    Spec {
        make: || HashedWheel::new(4).unwrap(),
        make_capped: Some(|n| HashedWheel::with_capacity(4, n).unwrap()),
        lateness: exact,
        fifo: true,
        range: None,
        far: 100_000,
        tickless: true,
    }
);

conformance!(
    scheme1_straightforward,
    Spec {
        make: Straightforward::new,
        make_capped: Some(|n| Straightforward::with_capacity(n).unwrap()),
        lateness: exact,
        fifo: true,
        range: None,
        far: 5_000,
        tickless: false,
    }
);

conformance!(
    scheme2_ordered_list,
    Spec {
        make: OrderedList::new,
        make_capped: Some(|n| OrderedList::with_capacity(n).unwrap()),
        lateness: exact,
        fifo: true,
        range: None,
        far: 1 << 40,
        tickless: true,
    }
);

conformance!(
    scheme2_ordered_list_searched_from_the_rear,
    Spec {
        make: || OrderedList::new().searching(Search::FromRear),
        make_capped: Some(|n| {
            OrderedList::with_capacity(n)
                .unwrap()
                .searching(Search::FromRear)
        }),
        lateness: exact,
        fifo: true,
        range: None,
        far: 1 << 40,
        tickless: true,
    }
);

conformance!(
    bsd_calltodo_differential_list,
    Spec {
        make: DifferentialList::new,
        make_capped: Some(|n| DifferentialList::with_capacity(n).unwrap()),
        lateness: exact,
        fifo: true,
        range: Some(i64::MAX as u64),
        far: 1 << 40,
        tickless: true,
    }
);

conformance!(
    scheme3_binary_heap,
    Spec {
        make: BinaryHeap::new,
        make_capped: Some(|n| BinaryHeap::with_capacity(n).unwrap()),
        lateness: exact,
        fifo: true,
        range: None,
        far: 1 << 40,
        tickless: true,
    }
);

conformance!(
    scheme3_balanced_tree,
    Spec {
        make: BalancedTree::new,
        make_capped: Some(|n| BalancedTree::with_capacity(n).unwrap()),
        lateness: exact,
        fifo: true,
        range: None,
        far: 1 << 40,
        tickless: true,
    }
);

conformance!(
    scheme4_basic_wheel,
    Spec {
        make: || BasicWheel::new(8192).unwrap(),
        make_capped: Some(|n| BasicWheel::with_capacity(8192, n).unwrap()),
        lateness: exact,
        fifo: true,
        range: Some(8192),
        far: 8000,
        tickless: false,
    }
);

conformance!(
    scheme5_hashed_wheel_sorted,
    Spec {
        make: || HashedWheelSorted::new(4).unwrap(),
        make_capped: Some(|n| HashedWheelSorted::with_capacity(4, n).unwrap()),
        lateness: exact,
        fifo: true,
        range: None,
        far: 100_000,
        tickless: true,
    }
);

// Scheme 7 on a small hierarchy, so the tests cross every level and cascade often:
// widths 1, 4, 16, 64; guaranteed reach (8 - 1) * 64 = 448 ticks.
const SMALL: [u32; 4] = [4, 4, 4, 8];
const SMALL_RANGE: u64 = 7 * 64;

fn widths(slots: &[u32]) -> Vec<u64> {
    slots
        .iter()
        .scan(1u64, |w, &s| {
            let this = *w;
            *w *= s as u64;
            Some(this)
        })
        .collect()
}

/// Nichols's variant: the timer lands on the lowest level whose slots surely reach its deadline
/// rounded up (`delta + 2w - 2 <= slots * w`) or a lower one, and is at most one slot width
/// minus one late.
fn no_migration_bound(slots: &[u32], delta: u64) -> u64 {
    let w = widths(slots);
    (0..slots.len())
        .find(|&l| delta + 2 * w[l] - 2 <= slots[l] as u64 * w[l])
        .map_or(*w.last().unwrap() - 1, |l| w[l] - 1)
}

/// One migration: placed no higher than the lowest level that surely reaches the deadline
/// (`delta + w - 1 <= slots * w`), then moved once to the level below, rounded up there.
fn one_migration_bound(slots: &[u32], delta: u64) -> u64 {
    let w = widths(slots);
    let l = (0..slots.len())
        .find(|&l| delta + w[l] - 1 <= slots[l] as u64 * w[l])
        .unwrap_or(slots.len() - 1);
    if l == 0 {
        0
    } else {
        w[l - 1] - 1
    }
}

conformance!(
    scheme7_hierarchical_full_migration,
    Spec {
        make: || HierarchicalWheel::new(&SMALL, Migration::Full).unwrap(),
        make_capped: Some(
            |n| HierarchicalWheel::with_capacity(&SMALL, Migration::Full, n).unwrap()
        ),
        lateness: exact,
        fifo: true,
        range: Some(SMALL_RANGE),
        far: 440,
        tickless: true,
    }
);

conformance!(
    linux_non_cascading_wheel,
    Spec {
        make: LinuxWheel::new,
        make_capped: Some(|n| LinuxWheel::with_capacity(n).unwrap()),
        lateness: linux_wheel::lateness,
        fifo: false,
        range: None,
        far: 1 << 40,
        tickless: true,
    }
);

// Section 4.2's simulation wheel on a short cycle, so the tests cross many wraps and keep
// timers on the overflow list (`far` is 1,562 cycles ahead: one scan of the list per cycle).
conformance!(
    simulation_wheel_with_overflow_list,
    Spec {
        make: || SimulationWheel::new(64).unwrap(),
        make_capped: Some(|n| SimulationWheel::with_capacity(64, n).unwrap()),
        lateness: exact,
        fifo: true,
        range: None,
        far: 100_000,
        tickless: true,
    }
);

conformance!(
    scheme7_hierarchical_one_migration,
    Spec {
        make: || HierarchicalWheel::new(&SMALL, Migration::One).unwrap(),
        make_capped: Some(|n| HierarchicalWheel::with_capacity(&SMALL, Migration::One, n).unwrap()),
        lateness: |d| one_migration_bound(&SMALL, d),
        fifo: false,
        range: Some(SMALL_RANGE),
        far: 440,
        tickless: true,
    }
);

conformance!(
    scheme7_hierarchical_no_migration,
    Spec {
        make: || HierarchicalWheel::new(&SMALL, Migration::None).unwrap(),
        make_capped: Some(
            |n| HierarchicalWheel::with_capacity(&SMALL, Migration::None, n).unwrap()
        ),
        lateness: |d| no_migration_bound(&SMALL, d),
        fifo: false,
        range: Some(SMALL_RANGE),
        far: 440,
        tickless: true,
    }
);

// The paper's layout (60 s, 60 min, 24 h, 100 days at one tick a second), exact.
conformance!(
    scheme7_paper_layout_full_migration,
    Spec {
        make: || HierarchicalWheel::paper(Migration::Full),
        make_capped: None,
        lateness: exact,
        fifo: true,
        range: Some(99 * 86_400),
        far: 3 * 86_400 + 3_723,
        tickless: true,
    }
);

// 64-slot levels, the production layout, with Nichols's rounding.
conformance!(
    scheme7_binary_layout_no_migration,
    Spec {
        make: || HierarchicalWheel::binary(4, Migration::None).unwrap(),
        make_capped: None,
        lateness: |d| no_migration_bound(&[64; 4], d),
        fifo: false,
        range: Some(63 * 262_144),
        far: 1_000_000,
        tickless: true,
    }
);

conformance!(
    brown_calendar_queue,
    Spec {
        make: CalendarQueue::new,
        make_capped: Some(|n| CalendarQueue::with_capacity(n).unwrap()),
        lateness: exact,
        fifo: true,
        range: None,
        far: 1 << 40,
        tickless: true,
    }
);

// The production wheel keeps the same contract, exactly, over the whole u64 range.
conformance!(
    production_wheel,
    Spec {
        make: Wheel::new,
        make_capped: Some(|n| Wheel::with_capacity(n).unwrap()),
        lateness: exact,
        fifo: true,
        range: None,
        far: 1 << 40,
        tickless: true,
    }
);

// 4.4BSD's `untimeout(func, arg)` on `calltodo`: a walk from the head to the first match, which
// reports the entries it skipped; the starts report theirs.
#[test]
fn calltodo_search_finds_the_first_due_and_counts_what_it_skips() {
    use callwheel::{Scheme, Timers};
    let mut list = DifferentialList::new();
    for (deadline, value) in [(30, 'c'), (10, 'a'), (20, 'b'), (20, 'x'), (40, 'a')] {
        list.start(deadline, value).unwrap();
    }
    // Starts skip the entries due at or before theirs: 0, 0 (the head moves), 1, 2, 4.
    assert_eq!(list.entries_skipped(), 7);
    assert_eq!(
        list.search(|&v| v == 'a'),
        (Some(&'a'), 0),
        "the head matches"
    );
    assert_eq!(
        list.search(|&v| v == 'x'),
        (Some(&'x'), 2),
        "after (10 a), (20 b)"
    );
    assert_eq!(list.search(|&v| v == 'c'), (Some(&'c'), 3));
    assert_eq!(
        list.search(|&v| v == 'z'),
        (None, 5),
        "a miss walks every entry"
    );
    // An overdue timer (started at or before the cursor) fires first, so it is searched first.
    list.advance_to(5, |_, _| {});
    list.start(3, 'o').unwrap();
    assert_eq!(list.search(|&v| v == 'o'), (Some(&'o'), 0));
    assert_eq!(list.search(|&v| v == 'a'), (Some(&'a'), 1));
    list.check_invariants().unwrap();
}

// 4.4BSD's hardclock on `calltodo`: with `softclock` behind, each interrupt walks the entries
// already due and decrements each of them and the first one not yet due.
#[test]
fn calltodo_hardclock_walks_the_entries_due_but_not_yet_run() {
    use callwheel::{Scheme, Timers};
    let mut list = DifferentialList::new();
    for (deadline, value) in [(10, 'a'), (10, 'b'), (13, 'c'), (17, 'd')] {
        list.start(deadline, value).unwrap();
    }
    assert!(!list.hardclock(9), "nothing is due at 9");
    assert!(list.hardclock(10));
    list.check_invariants().unwrap();
    // Each interrupt while softclock waits: a and b are one tick later, c one tick nearer.
    for tick in 11..=14 {
        assert!(list.hardclock(tick));
        list.check_invariants().unwrap();
    }
    // A start and a stop in the middle of the overdue run keep every deadline.
    let e = list.start(15, 'e').unwrap();
    list.start(16, 'f').unwrap();
    assert_eq!(list.stop(e), Some('e'));
    list.check_invariants().unwrap();
    let mut fired = Vec::new();
    list.advance_to(16, |_, x| fired.push((x.deadline, x.value)));
    assert_eq!(fired, [(10, 'a'), (10, 'b'), (13, 'c'), (16, 'f')]);
    list.check_invariants().unwrap();
    assert_eq!(list.next_expiry(), Some(17));
}

// The same walk against a model: random starts, stops, interrupts that run ahead of the
// softclock and softclocks that catch up part of the way. Every timer fires once, at or after
// its deadline, never before a tick that reaches it, in deadline order (start order among
// equal deadlines).
#[test]
fn calltodo_with_hardclock_ahead_of_softclock_matches_a_model() {
    use callwheel::{Scheme, Timers};
    let mut rng = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    for _ in 0..200 {
        let mut list = DifferentialList::new();
        // (deadline, id) of the timers pending, with their handles.
        let mut model: Vec<(u64, u64, callwheel::Handle)> = Vec::new();
        let mut ticks = 0u64;
        let mut id = 0u64;
        for _ in 0..300 {
            match next(5) {
                0 | 1 => {
                    // Some between the softclock's tick and the interrupt's: overdue to the
                    // list as soon as they are placed.
                    let deadline = list.now() + 1 + next(ticks - list.now() + 40);
                    let h = list.start(deadline, id).unwrap();
                    model.push((deadline, id, h));
                    id += 1;
                }
                2 if !model.is_empty() => {
                    let (_, v, h) = model.swap_remove(next(model.len() as u64) as usize);
                    assert_eq!(list.stop(h), Some(v));
                }
                3 => {
                    ticks += 1 + next(3);
                    let due = model.iter().any(|&(d, _, _)| d <= ticks);
                    assert_eq!(list.hardclock(ticks), due, "needsoft at {ticks}");
                }
                _ => {
                    let to = list.now() + next(ticks - list.now() + 1);
                    let mut fired = Vec::new();
                    list.advance_to(to, |_, x| fired.push((x.deadline, x.value)));
                    let mut expect: Vec<(u64, u64)> = model
                        .iter()
                        .filter(|&&(d, _, _)| d <= to)
                        .map(|&(d, v, _)| (d, v))
                        .collect();
                    expect.sort();
                    assert_eq!(fired, expect, "softclock to {to}, ticks {ticks}");
                    model.retain(|&(d, _, _)| d > to);
                }
            }
            list.check_invariants().unwrap();
        }
    }
}
