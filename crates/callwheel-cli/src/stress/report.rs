//! What a stress run found: the latency percentiles, the count check, the memory and the
//! throughput.

use callwheel_bench::percentile::nearest_rank_recorded;
use callwheel_rt::hdrhistogram::Histogram;

use super::plan::Plan;
use super::scaling::Scaling;

/// Percentiles of one latency histogram, ns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Latency {
    /// Calls recorded.
    pub calls: u64,
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest.
    pub max: u64,
}

impl Latency {
    /// The percentiles of `h`, by the tool's one rule (nearest rank); zeros when empty.
    pub(super) fn of(h: &Histogram<u64>) -> Latency {
        Latency {
            calls: h.len(),
            p50: nearest_rank_recorded(h, 500).unwrap_or(0),
            p99: nearest_rank_recorded(h, 990).unwrap_or(0),
            p999: nearest_rank_recorded(h, 999).unwrap_or(0),
            max: h.max(),
        }
    }
}

/// The counts the check is made of.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Mass timers that fired exactly once and were not cancelled.
    pub mass_fired: u64,
    /// Mass timers a stop cancelled (and that never fired).
    pub mass_cancelled: u64,
    /// Mass timers that did neither (lost).
    pub mass_lost: u64,
    /// Mass timers that fired twice, or fired after a stop said it cancelled them.
    pub mass_wrong: u64,
    /// Churn armings (starts of a timer that was not pending).
    pub churn_armings: u64,
    /// Of those, cancelled by a stop.
    pub churn_cancelled: u64,
    /// Churn firings counted by the callbacks.
    pub churn_fired: u64,
    /// Churn timers whose firings differ from their armings less their cancellations.
    pub churn_wrong: u64,
}

impl Counts {
    /// Whether every timer fired exactly once or was stopped.
    pub fn ok(&self) -> bool {
        self.mass_lost == 0
            && self.mass_wrong == 0
            && self.churn_wrong == 0
            && self.churn_fired + self.churn_cancelled == self.churn_armings
    }
}

/// The result of a run.
#[derive(Clone, Debug)]
pub struct StressReport {
    /// The sizes it ran with.
    pub plan: Plan,
    /// Shards (driver threads) of the runtime.
    pub shards: usize,
    /// CPUs available.
    pub cpus: usize,
    /// The drivers' expiry budget per lock hold.
    pub max_expiries_per_lock: u64,
    /// How long creating and arming the mass timers took, ns.
    pub arm_ns: u64,
    /// Whether the mass expiry had begun before arming was over (the deadline was guessed
    /// too short; the expiry is then spread over the end of arming).
    pub began_during_arming: bool,
    /// How late the first mass callback ran after the deadline, ns.
    pub first_late_ns: u64,
    /// From the first mass callback to the last, ns.
    pub expiry_ns: u64,
    /// Every `start` call.
    pub start_all: Latency,
    /// The `start` calls made while the mass expiry was under way.
    pub start_during: Latency,
    /// Every `stop` call.
    pub stop_all: Latency,
    /// The count check.
    pub counts: Counts,
    /// Times a driver released its lock having used its expiry budget.
    pub budget_yields: u64,
    /// Resident set before creating the timers, KiB.
    pub rss_before_kib: u64,
    /// Resident set with every mass timer armed, KiB.
    pub rss_armed_kib: u64,
    /// The process's peak resident set, KiB.
    pub rss_peak_kib: u64,
    /// CPU time stolen by the hypervisor during the run, per cent (`None`: unknown).
    pub steal_percent: Option<f64>,
    /// Start/stop/reset throughput from one and two threads, measured after the mass expiry.
    pub scaling: Scaling,
}

impl StressReport {
    /// Resident bytes per mass timer (armed minus before, over M).
    pub fn bytes_per_timer(&self) -> f64 {
        (self.rss_armed_kib.saturating_sub(self.rss_before_kib) * 1024) as f64
            / self.plan.timers.max(1) as f64
    }
}
