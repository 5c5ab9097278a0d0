//! Configurations and values at the limits: each gets an error or works, never a panic.
//! (Regression tests for defects found in review.)

use callwheel::Wheel;
use callwheel::{Budget, Error, Scheme, Timers};
use callwheel_schemes::balanced_tree::BalancedTree;
use callwheel_schemes::basic_wheel::BasicWheel;
use callwheel_schemes::binary_heap::BinaryHeap;
use callwheel_schemes::calendar_queue::CalendarQueue;
use callwheel_schemes::differential_list::DifferentialList;
use callwheel_schemes::hashed_wheel::HashedWheel;
use callwheel_schemes::hashed_wheel_sorted::HashedWheelSorted;
use callwheel_schemes::hierarchical_wheel::{HierarchicalWheel, Migration};
use callwheel_schemes::ordered_list::OrderedList;
use callwheel_schemes::straightforward::Straightforward;

fn is_config<T>(r: Result<T, Error>) -> bool {
    matches!(r, Err(Error::Config { .. }))
}

#[test]
fn impossible_capacities_are_configuration_errors() {
    assert!(is_config(Straightforward::<u64>::with_capacity(usize::MAX)));
    assert!(is_config(OrderedList::<u64>::with_capacity(usize::MAX)));
    assert!(is_config(DifferentialList::<u64>::with_capacity(
        usize::MAX
    )));
    assert!(is_config(BinaryHeap::<u64>::with_capacity(usize::MAX)));
    assert!(is_config(BalancedTree::<u64>::with_capacity(usize::MAX)));
    assert!(is_config(CalendarQueue::<u64>::with_capacity(usize::MAX)));
    assert!(is_config(BasicWheel::<u64>::with_capacity(10, usize::MAX)));
    assert!(is_config(HashedWheel::<u64>::with_capacity(4, usize::MAX)));
    assert!(is_config(HashedWheelSorted::<u64>::with_capacity(
        4,
        usize::MAX
    )));
    assert!(is_config(HierarchicalWheel::<u64>::with_capacity(
        &[4, 4],
        Migration::Full,
        usize::MAX
    )));
    assert!(is_config(Wheel::<u64>::with_capacity(usize::MAX)));
    // 2^32 - 1 is the null index; one below is the most that can be asked for.
    assert!(is_config(Wheel::<u64>::with_capacity(u32::MAX as usize)));
}

#[test]
fn impossible_layouts_are_configuration_errors() {
    assert!(is_config(HierarchicalWheel::<u64>::new(
        &[1 << 31, 1 << 31],
        Migration::Full
    )));
    assert!(is_config(HierarchicalWheel::<u64>::new(
        &[u32::MAX],
        Migration::Full
    )));
    assert!(is_config(HierarchicalWheel::<u64>::binary(
        usize::MAX,
        Migration::Full
    )));
    assert!(is_config(HierarchicalWheel::<u64>::binary(
        0,
        Migration::Full
    )));
    assert!(is_config(HierarchicalWheel::<u64>::new(
        &[],
        Migration::Full
    )));
    assert!(is_config(HierarchicalWheel::<u64>::new(
        &[64, 1],
        Migration::Full
    )));
    assert!(is_config(HierarchicalWheel::<u64>::new(
        &[1 << 16; 8],
        Migration::Full
    )));
    assert!(is_config(HashedWheel::<u64>::new(27)));
    assert!(is_config(BasicWheel::<u64>::new(0)));
    assert!(is_config(BasicWheel::<u64>::new((1 << 26) + 1)));
}

#[test]
fn calendar_resize_with_deadlines_far_apart_does_not_overflow() {
    let mut q = CalendarQueue::new();
    for (i, d) in [1, 2, 3, 4, u64::MAX, u64::MAX - 1].into_iter().enumerate() {
        q.start(d, i as u64).unwrap();
    }
    q.check_invariants().unwrap();
    let mut fired = 0;
    let _ = q.advance(u64::MAX, Budget::UNLIMITED, |_, _| fired += 1);
    assert_eq!(fired, 6);
}

#[test]
fn calendar_near_the_end_of_time_answers_without_overflow() {
    let mut q = CalendarQueue::new();
    let _ = q.advance(
        u64::MAX - 1,
        Budget::UNLIMITED,
        |_, _: callwheel::Expired<u64>| {},
    );
    q.start(u64::MAX, 1).unwrap();
    assert_eq!(q.next_expiry(), Some(u64::MAX));
}

#[test]
fn lossy_hierarchies_keep_timers_rounded_up_across_2_to_the_63() {
    for mode in [Migration::None, Migration::One] {
        let mut w = HierarchicalWheel::binary(4, mode).unwrap();
        let _ = w.advance(
            (1 << 63) - 6000,
            Budget::UNLIMITED,
            |_, _: callwheel::Expired<u64>| {},
        );
        w.start((1 << 63) - 1, 1).unwrap();
        w.start((1 << 63) - 5000, 2).unwrap();
        w.check_invariants().unwrap();
        let mut fired = Vec::new();
        let _ = w.advance((1 << 63) + 300_000, Budget::UNLIMITED, |_, e| {
            fired.push(e.value)
        });
        fired.sort();
        assert_eq!(fired, [1, 2], "{mode:?}");
    }
}

#[test]
fn hierarchies_accept_timers_after_the_cursor_passes_2_to_the_63() {
    let mut w = HierarchicalWheel::binary(4, Migration::Full).unwrap();
    let _ = w.advance(
        1 << 63,
        Budget::UNLIMITED,
        |_, _: callwheel::Expired<u64>| {},
    );
    w.start((1 << 63) + 1, 1).unwrap();
    let mut fired = Vec::new();
    let _ = w.advance((1 << 63) + 1, Budget::UNLIMITED, |_, e| fired.push(e.value));
    assert_eq!(fired, [1]);
}

#[test]
fn basic_wheel_checks_its_invariants_at_the_end_of_time() {
    let mut w = BasicWheel::new(10).unwrap();
    let _ = w.advance(
        u64::MAX - 5,
        Budget::UNLIMITED,
        |_, _: callwheel::Expired<u64>| {},
    );
    w.start(u64::MAX, 1).unwrap();
    w.check_invariants().unwrap();
}
