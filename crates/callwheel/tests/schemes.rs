//! Runs the conformance suite (tests/conformance/) on every scheme of the family.

#[macro_use]
mod conformance;

use callwheel::scheme::balanced_tree::BalancedTree;
use callwheel::scheme::basic_wheel::BasicWheel;
use callwheel::scheme::binary_heap::BinaryHeap;
use callwheel::scheme::differential_list::DifferentialList;
use callwheel::scheme::hashed_wheel::HashedWheel;
use callwheel::scheme::hashed_wheel_sorted::HashedWheelSorted;
use callwheel::scheme::ordered_list::OrderedList;
use callwheel::scheme::straightforward::Straightforward;
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
