//! The one list of schemes the benchmarks know, in the order the tables print them.
//!
//! # Adding a scheme
//!
//! Add one line to [`SCHEMES`]:
//!
//! ```text
//! scheme!("binary-heap", "S3 heap", Complexity::LOGARITHMIC, BinaryHeap::new()),
//! ```
//!
//! The arguments are the name used on the command line (`--scheme binary-heap`), a short label
//! for the compact matrix, the [`Complexity`] flags (which decide the reduced sizes, see
//! `plan`), and an expression that builds a fresh structure. The expression may use `?` on a
//! `Result<_, callwheel::Error>`, as in `HashedWheel::new(16)?`. A scheme that needs a different
//! configuration per workload gives one expression for each:
//!
//! ```text
//! scheme!("basic-wheel", "S4", Complexity::CONSTANT,
//!         w1: BasicWheel::new(4_000_000)?, w3: BasicWheel::new(100_000)?),
//! ```
//!
//! The macro turns each expression into a runner per workload: a plain function pointer that
//! calls the generic, monomorphized workload code, so the timed loops never go through `dyn`.

use callwheel::scheme::balanced_tree::BalancedTree;
use callwheel::scheme::basic_wheel::BasicWheel;
use callwheel::scheme::binary_heap::BinaryHeap;
use callwheel::scheme::calendar_queue::CalendarQueue;
use callwheel::scheme::differential_list::DifferentialList;
use callwheel::scheme::hashed_wheel::HashedWheel;
use callwheel::scheme::hashed_wheel_sorted::HashedWheelSorted;
use callwheel::scheme::hierarchical_wheel::{HierarchicalWheel, Migration};
use callwheel::scheme::ordered_list::OrderedList;
use callwheel::scheme::straightforward::Straightforward;

use crate::workload::{W1Outcome, W1Params, W3Outcome, W3Params};

/// The cost classes the benchmark plan cares about: which operations grow with the number of
/// pending timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Complexity {
    /// `start` is O(n) (a sorted list): W1's setup is O(N²), so large N are skipped or given
    /// fewer iterations, and W3 runs with fewer timers.
    pub linear_start: bool,
    /// Each tick costs O(n) (Scheme 1 scans every timer): W3 runs with fewer timers.
    pub linear_tick: bool,
}

impl Complexity {
    /// Nothing grows linearly with the number of pending timers (O(1), O(log n), amortized).
    pub const CONSTANT: Complexity = Complexity {
        linear_start: false,
        linear_tick: false,
    };
    /// An alias of [`Complexity::CONSTANT`] for O(log n) schemes, to keep the list readable.
    pub const LOGARITHMIC: Complexity = Complexity::CONSTANT;
    /// `start` is O(n).
    pub const LINEAR_START: Complexity = Complexity {
        linear_start: true,
        linear_tick: false,
    };
    /// Each tick is O(n).
    pub const LINEAR_TICK: Complexity = Complexity {
        linear_start: false,
        linear_tick: true,
    };

    /// `true` when either operation is O(n).
    pub const fn any_linear(self) -> bool {
        self.linear_start || self.linear_tick
    }
}

/// Runs every repetition of one W1 measurement on one scheme.
pub type W1Runner = fn(&W1Params) -> Result<W1Outcome, String>;

/// Runs every repetition of one W3 measurement on one scheme.
pub type W3Runner = fn(&W3Params) -> Result<W3Outcome, String>;

/// One scheme as the benchmarks see it.
#[derive(Clone, Copy, Debug)]
pub struct SchemeInfo {
    /// The name used on the command line and in the tables.
    pub name: &'static str,
    /// A short label (the paper's scheme number) for the compact matrix.
    pub label: &'static str,
    /// Which operations are O(n); decides the reduced sizes.
    pub complexity: Complexity,
    /// Runs W1 on a fresh structure per repetition.
    pub w1: W1Runner,
    /// Runs W3 on a fresh structure per repetition.
    pub w3: W3Runner,
}

/// Builds a [`SchemeInfo`] from a name, a label, the complexity flags and a constructor
/// expression (one for all workloads, or `w1: ..., w3: ...`). See the module docs.
macro_rules! scheme {
    ($name:literal, $label:literal, $complexity:expr, $make:expr $(,)?) => {
        scheme!($name, $label, $complexity, w1: $make, w3: $make)
    };
    ($name:literal, $label:literal, $complexity:expr, w1: $w1:expr, w3: $w3:expr $(,)?) => {
        SchemeInfo {
            name: $name,
            label: $label,
            complexity: $complexity,
            w1: |p| {
                crate::workload::w1(p, || -> Result<_, callwheel::Error> {
                    Ok($w1)
                })
            },
            w3: |p| {
                crate::workload::w3(p, || -> Result<_, callwheel::Error> {
                    Ok($w3)
                })
            },
        }
    };
}

/// Every scheme the benchmarks run, in table order. One line per scheme (kept so by
/// `rustfmt::skip`): name, label, complexity class, constructor(s).
#[rustfmt::skip]
pub const SCHEMES: &[SchemeInfo] = &[
    scheme!("straightforward", "S1", Complexity::LINEAR_TICK, Straightforward::new()),
    scheme!("ordered-list", "S2", Complexity::LINEAR_START, OrderedList::new()),
    scheme!("differential-list", "S2-BSD", Complexity::LINEAR_START, DifferentialList::new()),
    scheme!("binary-heap", "S3-heap", Complexity::LOGARITHMIC, BinaryHeap::new()),
    scheme!("balanced-tree", "S3-tree", Complexity::LOGARITHMIC, BalancedTree::new()),
    scheme!("basic-wheel", "S4", Complexity::CONSTANT, w1: BasicWheel::new(1 << 22)?, w3: BasicWheel::new(100_000)?),
    scheme!("hashed-wheel-sorted", "S5", Complexity::CONSTANT, HashedWheelSorted::new(16)?),
    scheme!("hashed-wheel", "S6", Complexity::CONSTANT, HashedWheel::new(16)?),
    scheme!("hierarchical-full", "S7-full", Complexity::CONSTANT, HierarchicalWheel::binary(4, Migration::Full)?),
    scheme!("hierarchical-one", "S7-one", Complexity::CONSTANT, HierarchicalWheel::binary(4, Migration::One)?),
    scheme!("hierarchical-none", "S7-none", Complexity::CONSTANT, HierarchicalWheel::binary(4, Migration::None)?),
    scheme!("hierarchical-paper", "S7-paper", Complexity::CONSTANT, HierarchicalWheel::paper(Migration::Full)),
    scheme!("calendar-queue", "Brown", Complexity::CONSTANT, CalendarQueue::new()),
];

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
