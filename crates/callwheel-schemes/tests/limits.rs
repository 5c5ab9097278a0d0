//! Configurations and values at the limits: each gets an error or works, never a panic.
//! (Regression tests for defects found in review.)

use callwheel::Wheel;
use callwheel::{Budget, Error, Scheme, Tick, Timers};
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

/// A hashed wheel moved to a far tick in one call costs steps per timer fired, not per
/// rotation of the jump: two timers due 2^40 ticks apart, far past the wheel's 256 buckets,
/// fire in a handful of steps from any starting tick (walked rotation by rotation, the second
/// would take 2^32 steps).
#[test]
fn hashed_wheels_jump_any_distance_in_steps_per_timer() {
    fn jump<S: Scheme<u32>>(mut s: S, base: Tick) {
        let far = 1u64 << 40;
        let _ = s.advance(base, Budget::UNLIMITED, |_, _| panic!("nothing is due"));
        s.start(base + 5, 1).unwrap();
        s.start(base + far, 2).unwrap();
        let mut fired = Vec::new();
        let p = s.advance(base + far + 1, Budget::steps(64), |_, e| {
            fired.push(e.value)
        });
        assert!(p.complete, "{} steps were not enough", p.steps);
        assert_eq!(fired, [1, 2]);
        s.check_invariants().unwrap();
    }
    for base in [0, 1 << 32, 1 << 62] {
        jump(HashedWheel::new(8).unwrap(), base);
        jump(HashedWheelSorted::new(8).unwrap(), base);
    }
}

/// `earliest` is the earliest deadline exactly, where `next_expiry` may name a bucket whose
/// timers belong to a later rotation; after the earliest timer is stopped too.
#[test]
fn hashed_wheels_know_their_earliest_deadline() {
    let mut s = HashedWheel::new(8).unwrap();
    let a = s.start(300, 'a').unwrap(); // bucket 44
    s.start(10_044, 'b').unwrap(); // bucket 60, a later rotation than 300
    s.start(2 * 256 + 50, 'c').unwrap(); // bucket 50
    assert_eq!(s.earliest(), Some(300));
    s.stop(a);
    // The next busy bucket (50, tick 50) holds only a later rotation's timer.
    assert_eq!(s.earliest(), Some(562));
    let mut t = HashedWheelSorted::new(8).unwrap();
    t.start(1_000_000, 'x').unwrap();
    let y = t.start(7, 'y').unwrap();
    t.stop(y);
    assert_eq!(t.earliest(), Some(1_000_000));
    assert_eq!(HashedWheel::<u8>::new(8).unwrap().earliest(), None);
}
