//! Per-shard counters and the lateness histogram, readable while the runtime runs.

use hdrhistogram::Histogram;

use crate::sync::{AtomicU64, Ordering};

/// The driver's own counters (the wheel keeps the rest), bumped without any lock.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) wakeups: AtomicU64,
    pub(crate) early_wakeups: AtomicU64,
    pub(crate) clock_sets: AtomicU64,
    pub(crate) budget_yields: AtomicU64,
    pub(crate) panics: AtomicU64,
    pub(crate) wait_errors: AtomicU64,
    pub(crate) deferred_inline: AtomicU64,
    pub(crate) spins: AtomicU64,
    pub(crate) spin_ns: AtomicU64,
}

impl Counters {
    pub(crate) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// A snapshot of one shard's counters (more may be added).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ShardStats {
    /// Timers armed on this shard (every start, and the arrival of a moved timer).
    pub started: u64,
    /// Armings cancelled (every stop that found the timer pending, and a moved timer leaving).
    pub stopped: u64,
    /// Pending armings moved to a new window in place.
    pub reset: u64,
    /// Timers fired.
    pub fired: u64,
    /// Timers moved down a level by the wheel.
    pub cascades: u64,
    /// Clock readings that went backwards and were clamped.
    pub clamped: u64,
    /// Returns from the driver's sleep, for any reason.
    pub wakeups: u64,
    /// Of those, the ones caused by a new timer whose window ended before the planned wake-up.
    pub early_wakeups: u64,
    /// Sleeps ended because the clock was set (realtime `ECANCELED`, or a manual clock's
    /// [`set`](crate::ManualClock::set)).
    pub clock_sets: u64,
    /// Times the driver released the shard's lock because it had used its expiry budget.
    pub budget_yields: u64,
    /// Callbacks that panicked (caught; the shard keeps running).
    pub panics: u64,
    /// Sleeps that failed with a system error.
    pub wait_errors: u64,
    /// Deferred callbacks the driver ran itself because the worker pool's queue could not grow
    /// (memory refused): late for the callbacks after them in that batch, but not lost.
    pub deferred_inline: u64,
    /// Planned wake-ups the driver reached awake, spinning, rather than by a sleep's end
    /// ([`Config::spin`](crate::Config::spin); 0 when off).
    pub spins: u64,
    /// Nanoseconds the driver spent waiting in spins, in all: what the spin cost in CPU time
    /// (the steps between its waits, well under a microsecond each, are not included).
    pub spin_ns: u64,
    /// Armings pending on the shard now.
    pub pending: usize,
    /// Lateness of each firing (wake-up reading minus deadline), in nanoseconds, to two
    /// significant digits; a firing more than an hour late is recorded as an hour late.
    ///
    /// An [`hdrhistogram`](crate::hdrhistogram) histogram, by intent: percentiles, merging
    /// shards and serialising are that crate's job, and the crate re-exports it so a caller
    /// needs no matching version of its own. It is the one dependency type in the public API.
    pub lateness: Histogram<u64>,
}

/// The largest lateness the histogram tells apart: an hour, in nanoseconds.
const LATENESS_MAX: u64 = 3_600 * 1_000_000_000;

/// A lateness histogram from 1 ns to an hour, 2 significant digits (about 36 KiB), made at its
/// full size now: a driver records into it with `saturating_record`, which never grows a
/// histogram (it would clamp at whatever bound an auto-resizing one had reached) and never
/// allocates on the firing path.
pub(crate) fn new_histogram() -> Result<Histogram<u64>, crate::Error> {
    Histogram::new_with_bounds(1, LATENESS_MAX, 2).map_err(|_| crate::Error::Config {
        reason: "cannot create the lateness histogram",
    })
}
