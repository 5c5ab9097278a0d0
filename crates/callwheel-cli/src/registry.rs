//! The one list of structures the benchmarks run, in the order the tables print them: the
//! schemes of the papers, the production wheel (the *facility*, from Rust, through the C API
//! and as callwheel-async's queue) and the peers from outside callwheel. Each is described
//! by [`scheme!`](callwheel_bench::scheme) (see [`callwheel_bench::structure`]); adding a
//! structure is one line of [`SCHEMES`].

use callwheel::Tick;
use callwheel::Wheel;
use callwheel_bench::async_queue::AsyncQueue;
use callwheel_bench::c_driver;
use callwheel_bench::c_wheel::CWheel;
use callwheel_bench::peers::{BTreeMapPeer, DelayQueuePeer, HeapLazy};
use callwheel_bench::scheme;
use callwheel_bench::structure::{Caps, Complexity, Role, SchemeInfo, Workload};
use callwheel_schemes::balanced_tree::BalancedTree;
use callwheel_schemes::basic_wheel::BasicWheel;
use callwheel_schemes::binary_heap::BinaryHeap;
use callwheel_schemes::calendar_queue::CalendarQueue;
use callwheel_schemes::differential_list::DifferentialList;
use callwheel_schemes::hashed_wheel::HashedWheel;
use callwheel_schemes::hashed_wheel_sorted::HashedWheelSorted;
use callwheel_schemes::hierarchical_wheel::{HierarchicalWheel, Migration};
use callwheel_schemes::linux_wheel::LinuxWheel;
use callwheel_schemes::ordered_list::OrderedList;
use callwheel_schemes::simulation_wheel::SimulationWheel;
use callwheel_schemes::straightforward::Straightforward;

/// Scheme 7 with 64-slot levels: 4 levels span 2^24 ticks, enough for every workload but W4,
/// whose deadlines reach 1e9; W4 gets 5 levels (2^30 ticks).
fn binary_levels(w: Workload) -> usize {
    if w == Workload::W4 {
        5
    } else {
        4
    }
}

/// The paper's layout (60 s, 60 min, 24 h, 100 days at one tick a second) accepts deadlines up
/// to 99 days ahead.
const PAPER_RANGE: Tick = 99 * 86_400;

/// A peer whose memory is not observable.
const PEER_NO_MEMORY: Caps = Caps {
    memory: false,
    ..Caps::EXACT
};

/// Every structure the benchmarks run, in table order. One line per structure (kept so by
/// `rustfmt::skip`): name, label, role, complexity class, caps, constructor.
#[rustfmt::skip]
pub const SCHEMES: &[SchemeInfo] = &[
    scheme!("straightforward", "S1", Role::Scheme, Complexity::LINEAR_TICK, Caps::TICKING, Straightforward::new()),
    scheme!("ordered-list", "S2", Role::Scheme, Complexity::LINEAR_START, Caps::EXACT, OrderedList::new()),
    scheme!("differential-list", "S2-BSD", Role::Scheme, Complexity::LINEAR_START, Caps::EXACT, DifferentialList::new()),
    scheme!("binary-heap", "S3-heap", Role::Scheme, Complexity::LOGARITHMIC, Caps::EXACT, BinaryHeap::new()),
    scheme!("balanced-tree", "S3-tree", Role::Scheme, Complexity::LOGARITHMIC, Caps::EXACT, BalancedTree::new()),
    scheme!("basic-wheel", "S4", Role::Scheme, Complexity::CONSTANT, Caps::TICKING, |w| match w { Workload::W1 => BasicWheel::new(1 << 22)?, Workload::W2 => BasicWheel::new(1 << 10)?, Workload::W5 => BasicWheel::new(1 << 20)?, _ => BasicWheel::new(100_000)? }),
    scheme!("hashed-wheel-sorted", "S5", Role::Scheme, Complexity::CONSTANT, Caps::EXACT, HashedWheelSorted::new(16)?),
    scheme!("hashed-wheel", "S6", Role::Scheme, Complexity::CONSTANT, Caps::EXACT, HashedWheel::new(16)?),
    scheme!("hierarchical-full", "S7-full", Role::Scheme, Complexity::CONSTANT, Caps::EXACT, |w| HierarchicalWheel::binary(binary_levels(w), Migration::Full)?),
    scheme!("hierarchical-one", "S7-one", Role::Scheme, Complexity::CONSTANT, Caps::LOSSY, |w| HierarchicalWheel::binary(binary_levels(w), Migration::One)?),
    scheme!("hierarchical-none", "S7-none", Role::Scheme, Complexity::CONSTANT, Caps::LOSSY, |w| HierarchicalWheel::binary(binary_levels(w), Migration::None)?),
    scheme!("hierarchical-paper", "S7-paper", Role::Scheme, Complexity::CONSTANT, Caps { max_ahead: PAPER_RANGE, ..Caps::EXACT }, HierarchicalWheel::paper(Migration::Full)),
    scheme!("calendar-queue", "Brown", Role::Scheme, Complexity::CONSTANT, Caps::EXACT, CalendarQueue::new()),
    scheme!("linux-wheel", "Linux", Role::Scheme, Complexity::CONSTANT, Caps { note: "up to one bucket late", ..Caps::LOSSY }, LinuxWheel::new()),
    scheme!("simulation-wheel", "TEGAS", Role::Scheme, Complexity::CONSTANT, Caps::EXACT, |w| match w { Workload::W2 => SimulationWheel::new(1 << 10)?, _ => SimulationWheel::new(1 << 20)? }),
    scheme!("wheel", "facility", Role::Facility, Complexity::CONSTANT, Caps::EXACT, Wheel::new()),
    SchemeInfo { w1: c_driver::w1, w2: c_driver::w2, w3: c_driver::w3, w4: c_driver::w4, ..scheme!("c-wheel", "facility-C", Role::Facility, Complexity::CONSTANT, Caps { note: "cw_wheel_* from C", ..Caps::EXACT }, CWheel::new()?) },
    scheme!("async-queue", "facility-async", Role::Facility, Complexity::CONSTANT, Caps { note: "callwheel-async DelayQueue, 1 ms ticks", max_ahead: AsyncQueue::MAX_DEADLINE, ..Caps::TICKING }, AsyncQueue::new()?),
    scheme!("heap-lazy", "peer-heap", Role::Peer, Complexity::LOGARITHMIC, Caps { note: "tombstones", ..Caps::EXACT }, HeapLazy::new()),
    scheme!("btreemap", "peer-btree", Role::Peer, Complexity::LOGARITHMIC, Caps { max_ahead: BTreeMapPeer::MAX_DEADLINE, ..PEER_NO_MEMORY }, BTreeMapPeer::new()),
    scheme!("delayqueue", "peer-tokio", Role::Peer, Complexity::CONSTANT, Caps { max_ahead: DelayQueuePeer::MAX_DEADLINE, ..PEER_NO_MEMORY }, DelayQueuePeer::new()?),
];

// `TolerantStart` for callwheel's own structures is implemented beside the trait, in the
// benchmark library (the orphan rule puts it there).

/// The scheme called `name`, matched case-insensitively against names and labels.
pub fn find(name: &str) -> Option<&'static SchemeInfo> {
    SCHEMES
        .iter()
        .find(|s| s.name.eq_ignore_ascii_case(name) || s.label.eq_ignore_ascii_case(name))
}

/// Every scheme name, comma-separated, for error messages.
pub fn names() -> String {
    SCHEMES
        .iter()
        .map(|s| s.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The scheme called `name` (see [`find`]), with the one-line error the commands print.
pub fn scheme_by_name(name: &str) -> Result<&'static SchemeInfo, String> {
    find(name).ok_or_else(|| format!("unknown scheme `{name}` (known: {})", names()))
}
