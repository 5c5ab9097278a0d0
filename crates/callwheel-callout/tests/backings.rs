//! The callout suite (tests/suite/) on every backing scheme: the old BSD list, the hashed
//! wheels, the hierarchy, the heap and tree, the calendar queue and the production wheel.

#[macro_use]
mod suite;

use callwheel::Wheel;
use callwheel_schemes::balanced_tree::BalancedTree;
use callwheel_schemes::binary_heap::BinaryHeap;
use callwheel_schemes::calendar_queue::CalendarQueue;
use callwheel_schemes::differential_list::DifferentialList;
use callwheel_schemes::hashed_wheel::HashedWheel;
use callwheel_schemes::hashed_wheel_sorted::HashedWheelSorted;
use callwheel_schemes::hierarchical_wheel::{HierarchicalWheel, Migration};
use callwheel_schemes::ordered_list::OrderedList;

callout_suite!(old_callout_differential_list, DifferentialList::new);
callout_suite!(ordered_list, OrderedList::new);
// Four buckets: most callouts wrap around the wheel several times.
callout_suite!(callwheel_scheme6, || HashedWheel::new(2).unwrap());
callout_suite!(callwheel_scheme5_sorted, || HashedWheelSorted::new(2)
    .unwrap());
callout_suite!(hierarchical_full_migration, || {
    HierarchicalWheel::binary(4, Migration::Full).unwrap()
});
callout_suite!(binary_heap, BinaryHeap::new);
callout_suite!(balanced_tree, BalancedTree::new);
callout_suite!(calendar_queue, CalendarQueue::new);
callout_suite!(production_wheel, Wheel::new);
