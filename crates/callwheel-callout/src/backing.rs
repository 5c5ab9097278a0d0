//! The timer schemes a callout table can run on.

use callwheel::scheme::balanced_tree::BalancedTree;
use callwheel::scheme::binary_heap::BinaryHeap;
use callwheel::scheme::calendar_queue::CalendarQueue;
use callwheel::scheme::differential_list::DifferentialList;
use callwheel::scheme::hashed_wheel::HashedWheel;
use callwheel::scheme::hashed_wheel_sorted::HashedWheelSorted;
use callwheel::scheme::hierarchical_wheel::HierarchicalWheel;
use callwheel::scheme::ordered_list::OrderedList;
use callwheel::wheel::Wheel;
use callwheel::{Error, Handle, Scheme, Tick, Timers};

/// A timer scheme holding callout records (by their pool index).
///
/// Every scheme of the `callwheel` crate is one. The only addition to [`Scheme`] is
/// [`Backing::start_within`], which passes calloutng's precision to a scheme that can use it
/// (the production [`Wheel`] coalesces within it) and is a plain `start` elsewhere.
pub trait Backing: Scheme<u32> {
    /// Arms a timer that may fire anywhere in `[deadline, deadline + tolerance]`.
    fn start_within(
        &mut self,
        deadline: Tick,
        tolerance: Tick,
        record: u32,
    ) -> Result<Handle, Error>;
}

macro_rules! exact_backing {
    ($($ty:ty),* $(,)?) => {$(
        impl Backing for $ty {
            #[inline]
            fn start_within(&mut self, deadline: Tick, _: Tick, record: u32) -> Result<Handle, Error> {
                self.start(deadline, record)
            }
        }
    )*};
}

exact_backing!(
    DifferentialList<u32>,
    OrderedList<u32>,
    HashedWheel<u32>,
    HashedWheelSorted<u32>,
    HierarchicalWheel<u32>,
    BinaryHeap<u32>,
    BalancedTree<u32>,
    CalendarQueue<u32>,
);

impl Backing for Wheel<u32> {
    #[inline]
    fn start_within(
        &mut self,
        deadline: Tick,
        tolerance: Tick,
        record: u32,
    ) -> Result<Handle, Error> {
        self.start_with(deadline, tolerance, record)
    }
}
