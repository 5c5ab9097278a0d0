//! The timer schemes a callout table can run on.

use callwheel::Wheel;
use callwheel::{Error, Handle, Scheme, Tick};
use callwheel_schemes::balanced_tree::BalancedTree;
use callwheel_schemes::binary_heap::BinaryHeap;
use callwheel_schemes::calendar_queue::CalendarQueue;
use callwheel_schemes::differential_list::DifferentialList;
use callwheel_schemes::hashed_wheel::HashedWheel;
use callwheel_schemes::hashed_wheel_sorted::HashedWheelSorted;
use callwheel_schemes::hierarchical_wheel::HierarchicalWheel;
use callwheel_schemes::ordered_list::OrderedList;

/// A timer scheme holding callout records (by their pool index).
///
/// Every scheme of the `callwheel` crate is one. calloutng's precision is honoured by every
/// backing ([`Backing::start_within`]): a callout runs at its window's firing instant, which
/// callouts with overlapping windows share. The addition to [`Scheme`] is the pair
/// [`Backing::load_limit`] / [`Backing::resized`], by which a scheme of fixed shape (a hashed
/// wheel's bucket count) grows with the table's pool, and the old callout's search
/// ([`Backing::SEARCHED_BY_UNTIMEOUT`]).
pub trait Backing: Scheme<u32> + Sized {
    /// `true` for 4.4BSD's `calltodo` ([`DifferentialList`]): the table keeps no hash of
    /// (function, argument), and `untimeout(func, arg)` searches the scheme's list from its
    /// head with [`Backing::search`], as the kernel did before Costello & Varghese. `false`,
    /// the default: `untimeout` finds its callout through the table's chained hash, in O(1)
    /// expected.
    const SEARCHED_BY_UNTIMEOUT: bool = false;

    /// When [`Backing::SEARCHED_BY_UNTIMEOUT`]: the first pending record, in firing order,
    /// that `matches` accepts, and how many entries the walk skipped before it (all of them
    /// when none matches). The default finds nothing.
    fn search<F: FnMut(u32) -> bool>(&self, matches: F) -> (Option<u32>, u64) {
        let _ = matches;
        (None, 0)
    }

    /// Entries this scheme's starts have skipped, in all, walking a list to find their place
    /// (the old `calltodo`'s insert); 0 for a scheme whose start walks nothing.
    fn entries_skipped(&self) -> u64 {
        0
    }

    /// The earliest deadline among the scheme's timers, exactly (or the scheme's own time when
    /// its `advance` has work there): what the table reports as its next event. (Whether
    /// `softclock` has work is decided by the cheaper
    /// [`Timers::next_expiry`](callwheel::Timers::next_expiry), never later.) The default is
    /// [`Timers::next_expiry`](callwheel::Timers::next_expiry), exact on every scheme but the
    /// hashed wheels, whose busy buckets may hold only later rotations' timers, and the
    /// production wheel after stops (earlier than needed, never later).
    fn earliest(&mut self) -> Option<Tick> {
        self.next_expiry()
    }

    /// Starts record `idx` to run anywhere in `[deadline, deadline + tolerance]` (calloutng's
    /// precision). The default starts it at the window's firing instant,
    /// [`callwheel::firing_instant`]: the instant the production wheel fires such a timer at,
    /// inside the window and aligned so that callouts whose windows overlap share a tick, and
    /// so one interrupt, on every backing; an exact callout's instant is its deadline. The
    /// production wheel takes the window itself, and reports its end as the latest wake-up.
    ///
    /// # Errors
    ///
    /// As [`Timers::start_with`](callwheel::Timers::start_with).
    fn start_within(&mut self, deadline: Tick, tolerance: Tick, idx: u32) -> Result<Handle, Error> {
        let at = callwheel::firing_instant(deadline, tolerance);
        match self.start_with(at, 0, idx) {
            // A bounded scheme (a hierarchy) whose range ends inside the window: the deadline
            // itself may still fit.
            Err(Error::BeyondRange { .. }) if at != deadline => self.start_with(deadline, 0, idx),
            started => started,
        }
    }

    /// The scheme's own work at a clock interrupt that moves the table's time to `tick`, and
    /// whether a timer may be due then (whether `softclock` has work). The default does no
    /// work: it asks [`Timers::may_expire_at`](callwheel::Timers::may_expire_at). 4.4BSD's
    /// `calltodo` decrements its head and every entry due but not yet run
    /// ([`DifferentialList::hardclock`]), as the kernel's clock interrupt did.
    fn hardclock(&mut self, tick: Tick) -> bool {
        self.may_expire_at(tick)
    }

    /// How many pending timers this scheme holds before its costs start to grow with their
    /// number (a hashed wheel: a small multiple of its buckets). When the table holds more,
    /// it asks [`Backing::resized`] for a larger scheme and moves its callouts there.
    /// `usize::MAX`, the default: never.
    fn load_limit(&self) -> usize {
        usize::MAX
    }

    /// An empty scheme of the same kind, its clock at tick 0, shaped for `timers` pending
    /// timers; `None` when it cannot be made larger than this one. The table moves the
    /// callouts with [`Timers::start_with`](callwheel::Timers::start_with) and a tolerance of 0, so only schemes that do
    /// not coalesce should offer this.
    ///
    /// # Errors
    ///
    /// [`Error::NoMemory`] when the allocator refuses; the table then keeps this scheme.
    fn resized(&self, timers: usize) -> Option<Result<Self, Error>> {
        let _ = timers;
        None
    }
}

macro_rules! exact_backing {
    ($($ty:ty),* $(,)?) => {$(
        impl Backing for $ty {}
    )*};
}

/// The old callout: `untimeout` walks `calltodo` from its head, and the starts count what
/// they skip.
impl Backing for DifferentialList<u32> {
    const SEARCHED_BY_UNTIMEOUT: bool = true;

    fn search<F: FnMut(u32) -> bool>(&self, mut matches: F) -> (Option<u32>, u64) {
        let (found, skipped) = DifferentialList::search(self, |&idx| matches(idx));
        (found.copied(), skipped)
    }

    fn entries_skipped(&self) -> u64 {
        DifferentialList::entries_skipped(self)
    }

    fn hardclock(&mut self, tick: Tick) -> bool {
        DifferentialList::hardclock(self, tick)
    }
}

exact_backing!(
    OrderedList<u32>,
    HierarchicalWheel<u32>,
    BinaryHeap<u32>,
    BalancedTree<u32>,
    CalendarQueue<u32>,
);

impl Backing for Wheel<u32> {
    fn start_within(&mut self, deadline: Tick, tolerance: Tick, idx: u32) -> Result<Handle, Error> {
        callwheel::Timers::start_with(self, deadline, tolerance, idx)
    }
}

/// Pending timers per bucket above which a hashed wheel is rebuilt with more buckets: per tick,
/// Scheme 6 examines one bucket (n / size timers on average), and Scheme 5's start walks one.
const HASHED_LOAD: usize = 2;

/// The buckets (as a power of two) for `timers` pending timers: one per timer, within the
/// wheel's bounds.
fn hashed_bits(timers: usize, max_bits: u32) -> u32 {
    timers
        .checked_next_power_of_two()
        .map_or(max_bits, usize::trailing_zeros)
        .min(max_bits)
}

macro_rules! hashed_backing {
    ($($ty:ident),* $(,)?) => {$(
        /// Grows with the table: rebuilt with one bucket per pending timer when the timers
        /// exceed twice the buckets, so a tick's bucket holds O(1) timers on average however
        /// far the pool grows (up to `2^MAX_BITS` buckets). A wheel made `with_capacity` is
        /// replaced by a growing one: the table's pool is what bounds the callouts.
        impl Backing for $ty<u32> {
            fn earliest(&mut self) -> Option<Tick> {
                $ty::earliest(self)
            }

            fn load_limit(&self) -> usize {
                if self.size() >= 1usize << $ty::<u32>::MAX_BITS {
                    usize::MAX
                } else {
                    self.size().saturating_mul(HASHED_LOAD)
                }
            }

            fn resized(&self, timers: usize) -> Option<Result<Self, Error>> {
                let bits = hashed_bits(timers, $ty::<u32>::MAX_BITS);
                if 1usize << bits <= self.size() {
                    return None;
                }
                // The constructor reserves its bucket heads and busy marks fallibly: a refusal
                // is `Error::NoMemory`, and the table keeps its current wheel.
                Some($ty::new(bits))
            }
        }
    )*};
}

hashed_backing!(HashedWheel, HashedWheelSorted);
