//! What a sweep found: the sleep cells, the wake-up batches, the idle check, and why a sweep
//! failed.

use super::plan::{Plan, Source};
use callwheel_bench::percentile::Summary;

/// One source's actual sleeps for one request, in nanoseconds.
#[derive(Clone, Debug)]
pub struct Cell {
    /// The source.
    pub source: Source,
    /// The requested sleep, µs.
    pub request_us: u64,
    /// The actual sleeps (min, mean, median, p99, ...), ns.
    pub actual: Summary,
}

/// One wake-up batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    /// The tolerance, in per cent of each timer's interval.
    pub tolerance_percent: u64,
    /// Timers armed.
    pub timers: u64,
    /// Firings counted by the callbacks (every timer exactly once: `timers`).
    pub fired: u64,
    /// Timers that never fired.
    pub never: u64,
    /// Timers that fired more than once.
    pub twice: u64,
    /// The driver's wake-ups that could fire timers (its sleep's returns, less early ones).
    pub wakeups: u64,
    /// Early wake-ups (a new timer's window ended before the planned wake-up), while arming.
    pub early_wakeups: u64,
    /// The fewest instants that stab every window (greedy).
    pub optimum: u64,
    /// Timers whose driver reading was before their deadline (must be 0).
    pub before_deadline: u64,
    /// Timers whose driver reading was after their window's end.
    pub after_window: u64,
    /// Of those, the median excess over the window's end, ns.
    pub excess_p50_ns: u64,
    /// Of those, the 99th percentile of the excess, ns.
    pub excess_p99_ns: u64,
    /// Of those, the largest excess, ns.
    pub excess_max_ns: u64,
    /// The median, over every timer that fired at or after its deadline (its last firing), of
    /// how far past its window's end it fired (0 inside its window), ns: the batch's lateness,
    /// set beside the raw loop's median overshoot.
    pub lateness_p50_ns: u64,
    /// Whether a timer fired before arming was over (the lead was too short: the batch then
    /// measures arming, not coalescing, and no verdict on it holds).
    pub began_during_arming: bool,
}

impl Batch {
    /// Timers that fired exactly once, at or after their deadline and by their window's end.
    pub fn inside(&self) -> u64 {
        self.timers
            .saturating_sub(self.never)
            .saturating_sub(self.twice)
            .saturating_sub(self.before_deadline)
            .saturating_sub(self.after_window)
    }
}

/// The idle check: a runtime with one timer an hour away, watched for a while.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Idle {
    /// How long it was watched, ms.
    pub ms: u64,
    /// The driver's wake-ups meanwhile (target 0).
    pub wakeups: u64,
}

/// The result of a sweep.
#[derive(Clone, Debug)]
pub struct SweepReport {
    /// The sizes it ran with.
    pub plan: Plan,
    /// One cell per source and request, grouped by request, sources in [`Source::ALL`] order.
    pub cells: Vec<Cell>,
    /// The wake-up batches, in [`BATCH_TOLERANCES`](super::plan::BATCH_TOLERANCES) order.
    pub batches: Vec<Batch>,
    /// The idle check.
    pub idle: Idle,
    /// The raw loop's (1 ns slack) overshoot, actual minus requested sleep, median over this
    /// run's requests of 1 ms or more (every request when there are none), ns: what the kernel
    /// adds to a wake-up after a sleep as long as the batches'.
    pub raw_overshoot_p50_ns: u64,
    /// The same overshoot's p99, ns.
    pub raw_overshoot_p99_ns: u64,
    /// CPU time stolen by the hypervisor during the run, per cent (`None`: unknown).
    pub steal_percent: Option<f64>,
}

impl SweepReport {
    /// The cell of `source` at `request_us`.
    pub fn cell(&self, source: Source, request_us: u64) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.source == source && c.request_us == request_us)
    }

    /// Whether every batch timer fired exactly once and none before its deadline.
    pub fn counts_ok(&self) -> bool {
        self.batches
            .iter()
            .all(|b| b.fired == b.timers && b.never == 0 && b.twice == 0 && b.before_deadline == 0)
    }
}
