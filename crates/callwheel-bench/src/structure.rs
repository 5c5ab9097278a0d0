//! What the benchmarks know of a structure ([`SchemeInfo`]: its name, role, complexity class,
//! capabilities and a runner per workload) and the workload selector ([`Workload`]). The
//! structures themselves are chosen where they are run: the `callwheel` tool keeps the one
//! list of them.
//!
//! # Describing a structure
//!
//! [`scheme!`](crate::scheme) builds a [`SchemeInfo`] from one line:
//!
//! ```text
//! scheme!("binary-heap", "S3-heap", Role::Scheme, Complexity::LOGARITHMIC, Caps::EXACT, BinaryHeap::new()),
//! ```
//!
//! The arguments are the name used on the command line (`--scheme binary-heap`), a short label
//! for the compact matrix, the [`Role`] (which decides the ratio lines), the [`Complexity`] flags
//! (which decide the reduced sizes, see `plan`), the [`Caps`] (lossy, has a next-deadline
//! query, reports its memory, how far ahead it accepts deadlines), and an expression that builds
//! a fresh structure. The expression may use `?` on a `Result<_, callwheel::Error>`, as in
//! `HashedWheel::new(16)?`. A structure that needs a different configuration per workload
//! names the workload and matches on it:
//!
//! ```text
//! scheme!("basic-wheel", "S4", Role::Scheme, Complexity::CONSTANT, Caps::TICKING,
//!         |w| match w { Workload::W1 => BasicWheel::new(1 << 22)?, _ => BasicWheel::new(100_000)? }),
//! ```
//!
//! The macro turns the expression into a runner per workload: a plain function pointer that
//! calls the generic, monomorphized workload code, so the timed loops never go through `dyn`.
//! The structure's type must implement [`TolerantStart`](crate::workload::TolerantStart) (one
//! line where the default fits; the benchmark library implements it for callwheel's own
//! structures).

use callwheel::Tick;
use clap::ValueEnum;

use crate::workload::{
    W1Outcome, W1Params, W2Outcome, W2Params, W3Outcome, W3Params, W4Outcome, W4Params, W5Outcome,
    W5Params,
};

// The workload selector lives beside the runners that take it, so that the structures'
// descriptions need nothing of the command line.
/// A workload of docs/workloads.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Workload {
    /// W1, set/cancel: ns per (cancel + start) pair with N timers outstanding.
    W1,
    /// W2, churn: ns per step of start / pop the oldest / cancel it 95 % of the time, with the
    /// expiry count.
    W2,
    /// W3, expire: ns per timer to start and fire them all, tick by tick.
    W3,
    /// W4, sparse advance: ns per timer to start 1000 far-apart timers and jump from one
    /// deadline to the next, with the jump count.
    W4,
    /// W5, coalescing: wake-ups against the optimum for windows of 5 % and of 0.
    W5,
    /// W3 and W4 with a tolerance of 1 % and 5 % of each timer's distance, W2 with 5 %, beside
    /// the exact ones, on the wheel, Linux's wheel and the lazy heap: time, firings outside
    /// their window, cascades per timer.
    Tolerant,
    /// Table I: Costello & Varghese's experiment through the callout interfaces (see
    /// `callwheel table1`).
    Table1,
}

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

/// What a structure is in the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// One of the papers' schemes (callwheel's `scheme` module).
    Scheme,
    /// The production wheel, `callwheel::Wheel`: the ratio lines compare every peer
    /// with it.
    Facility,
    /// A structure from outside callwheel, run through an adapter (`peers`).
    Peer,
}

/// What a structure can do, as far as the plan and the tables need to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// It may fire a timer after its deadline (Scheme 7 with one or no migration): its W2
    /// count, W3 late timers and W5 violations are reported, flagged lossy, not errors.
    pub lossy: bool,
    /// Its next-expiry query skips empty ticks. `false` for the structures that answer "the next
    /// tick" (Scheme 1, Scheme 4): W4 and W5 are n/a for them.
    pub jumps: bool,
    /// `memory_bytes` reports what it holds. `false` for peers whose memory is not observable:
    /// the W1 bytes column prints n/a instead of a guess.
    pub memory: bool,
    /// The latest deadline it accepts, counted from tick 0 (in the configuration W4 uses).
    pub max_ahead: Tick,
    /// Printed in parentheses after the name in the tables (how to read the row).
    pub note: &'static str,
}

impl Caps {
    /// Exact, with a next-deadline query, its memory reported, any deadline.
    pub const EXACT: Caps = Caps {
        lossy: false,
        jumps: true,
        memory: true,
        max_ahead: Tick::MAX,
        note: "",
    };
    /// As [`Caps::EXACT`] but lossy.
    pub const LOSSY: Caps = Caps {
        lossy: true,
        ..Caps::EXACT
    };
    /// As [`Caps::EXACT`] but without a next-deadline query (it visits every tick).
    pub const TICKING: Caps = Caps {
        jumps: false,
        ..Caps::EXACT
    };
}

/// Runs every repetition of one W1 measurement on one structure.
pub type W1Runner = fn(&W1Params) -> Result<W1Outcome, String>;

/// Runs every repetition of one W2 measurement on one structure.
pub type W2Runner = fn(&W2Params) -> Result<W2Outcome, String>;

/// Runs every repetition of one W3 measurement on one structure.
pub type W3Runner = fn(&W3Params) -> Result<W3Outcome, String>;

/// Runs every repetition of one W4 measurement on one structure.
pub type W4Runner = fn(&W4Params) -> Result<W4Outcome, String>;

/// Runs every repetition of one W5 measurement on one structure.
pub type W5Runner = fn(&W5Params) -> Result<W5Outcome, String>;

/// One structure as the benchmarks see it.
#[derive(Clone, Copy, Debug)]
pub struct SchemeInfo {
    /// The name used on the command line and in the tables.
    pub name: &'static str,
    /// A short label (the paper's scheme number, `facility`, `peer-…`) for the compact matrix.
    pub label: &'static str,
    /// Scheme, facility or peer.
    pub role: Role,
    /// Which operations are O(n); decides the reduced sizes.
    pub complexity: Complexity,
    /// Lossy, next-deadline query, memory, range.
    pub caps: Caps,
    /// Runs W1 on a fresh structure per repetition.
    pub w1: W1Runner,
    /// Runs W2 on a fresh structure per repetition.
    pub w2: W2Runner,
    /// Runs W3 on a fresh structure per repetition.
    pub w3: W3Runner,
    /// Runs W4 on a fresh structure per repetition.
    pub w4: W4Runner,
    /// Runs W5 on a fresh structure per repetition.
    pub w5: W5Runner,
}

impl SchemeInfo {
    /// The name as the tables print it: `name (note)` when the caps carry a note.
    pub fn row_name(&self) -> String {
        if self.caps.note.is_empty() {
            self.name.to_string()
        } else {
            format!("{} ({})", self.name, self.caps.note)
        }
    }
}

/// Builds a [`SchemeInfo`] from a name, a label, the role, the complexity flags, the caps and a
/// constructor expression (optionally `|w| ...` to see the workload). See the
/// [`structure`](crate::structure) module.
#[macro_export]
macro_rules! scheme {
    ($name:literal, $label:literal, $role:expr, $complexity:expr, $caps:expr, |$w:ident| $make:expr $(,)?) => {
        $crate::structure::SchemeInfo {
            name: $name,
            label: $label,
            role: $role,
            complexity: $complexity,
            caps: $caps,
            w1: |p| {
                let $w = $crate::structure::Workload::W1;
                $crate::workload::w1(p, move || -> Result<_, ::callwheel::Error> { Ok($make) })
            },
            w2: |p| {
                let $w = $crate::structure::Workload::W2;
                $crate::workload::w2(p, move || -> Result<_, ::callwheel::Error> { Ok($make) })
            },
            w3: |p| {
                let $w = $crate::structure::Workload::W3;
                $crate::workload::w3(p, move || -> Result<_, ::callwheel::Error> { Ok($make) })
            },
            w4: |p| {
                let $w = $crate::structure::Workload::W4;
                $crate::workload::w4(p, move || -> Result<_, ::callwheel::Error> { Ok($make) })
            },
            w5: |p| {
                let $w = $crate::structure::Workload::W5;
                $crate::workload::w5(p, move || -> Result<_, ::callwheel::Error> { Ok($make) })
            },
        }
    };
    ($name:literal, $label:literal, $role:expr, $complexity:expr, $caps:expr, $make:expr $(,)?) => {
        $crate::scheme!($name, $label, $role, $complexity, $caps, |_w| $make)
    };
}
