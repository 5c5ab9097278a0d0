//! The churn threads: what they share with the mass timers' callbacks, and one thread's loop of
//! timed `start` and `stop` calls.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use callwheel_rt::hdrhistogram::Histogram;
use callwheel_rt::saturating_ns as nanos;
use callwheel_rt::{Deadline, Exec, Runtime, Stop, Timer};

use crate::failure::{fail, Failure};
use callwheel_bench::workload::{SplitMix64, SEED};

/// Timers each churn thread starts and stops, over and over.
pub(super) const CHURN_POOL: usize = 256;

/// What the mass timers' callbacks and the churn threads share.
pub(super) struct Mass {
    /// Firings per mass timer.
    pub(super) fired: Vec<AtomicU8>,
    /// Set when a stop cancelled the mass timer.
    pub(super) cancelled: Vec<AtomicU8>,
    /// Mass firings so far.
    pub(super) total: AtomicU64,
    /// Mass timers cancelled so far.
    pub(super) cancelled_total: AtomicU64,
    /// Clock reading at the first and at the latest mass firing.
    pub(super) first: AtomicU64,
    pub(super) last: AtomicU64,
    /// M.
    pub(super) m: u64,
}

impl Mass {
    /// Whether the mass expiry is under way: it has begun, and not every mass timer has fired
    /// or been cancelled.
    pub(super) fn in_progress(&self) -> bool {
        let n = self.total.load(Ordering::Relaxed);
        n > 0 && n + self.cancelled_total.load(Ordering::Relaxed) < self.m
    }
}

/// One churn thread's findings.
pub(super) struct Churn {
    pub(super) start: Histogram<u64>,
    pub(super) start_during: Histogram<u64>,
    pub(super) stop: Histogram<u64>,
    pub(super) armings: u64,
    pub(super) cancelled: u64,
    /// Per churn timer: armings less cancellations, and its firing counter.
    pub(super) expected: Vec<(u64, Arc<AtomicU64>)>,
    pub(super) timers: Vec<Timer>,
}

/// A latency histogram from 1 ns to 100 s, 3 significant digits (fixed bounds: a
/// saturating record into an auto-resizing histogram would clamp at its first bound).
pub(super) fn histogram() -> Result<Histogram<u64>, Failure> {
    Histogram::new_with_bounds(1, 100_000_000_000, 3).map_err(|e| fail("creating a histogram", e))
}

/// One churn thread: until `stop` is up, start and stop its own timers on every shard (and,
/// while the mass expiry runs, stop mass timers too), timing each call.
pub(super) fn churn(
    rt: &Runtime,
    index: u64,
    mass: &Mass,
    mass_timers: &[Timer],
    stop: &AtomicBool,
) -> Result<Churn, Failure> {
    let mut c = Churn {
        start: histogram()?,
        start_during: histogram()?,
        stop: histogram()?,
        armings: 0,
        cancelled: 0,
        expected: Vec::with_capacity(CHURN_POOL),
        timers: Vec::with_capacity(CHURN_POOL),
    };
    let shards = rt.shards();
    for j in 0..CHURN_POOL {
        let count = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&count);
        let t = rt
            .timer_on(j % shards, Exec::Direct, move |_, _| {
                counter.fetch_add(1, Ordering::Relaxed);
            })
            .map_err(|e| fail("creating a churn timer", e))?;
        c.timers.push(t);
        c.expected.push((0, count));
    }
    let mut rng = SplitMix64::new(SEED ^ (index + 1).wrapping_mul(0x9E37_79B9));
    while !stop.load(Ordering::Relaxed) {
        let draw = rng.next_u64();
        let j = (draw >> 8) as usize % CHURN_POOL;
        if draw.is_multiple_of(2) {
            let during = mass.in_progress();
            let deadline = rt.now_ns() + 100_000 + (draw >> 40) % 2_000_000;
            let t0 = Instant::now();
            let was_pending = c.timers[j]
                .start_with(Deadline::from_clock_ns(deadline), Duration::ZERO, None)
                .map_err(|e| fail("starting a churn timer", e))?;
            let ns = nanos(t0.elapsed());
            c.start.saturating_record(ns);
            if during && mass.in_progress() {
                c.start_during.saturating_record(ns);
            }
            if !was_pending {
                c.armings += 1;
                c.expected[j].0 += 1;
            }
        } else if draw % 16 == 1 && mass.in_progress() {
            // Race a driver for a mass timer.
            let k = (draw >> 16) as usize % mass_timers.len();
            let t0 = Instant::now();
            let outcome = mass_timers[k].stop();
            c.stop.saturating_record(nanos(t0.elapsed()));
            if outcome == Stop::Cancelled {
                mass.cancelled[k].fetch_add(1, Ordering::Relaxed);
                mass.cancelled_total.fetch_add(1, Ordering::Relaxed);
            }
        } else {
            let t0 = Instant::now();
            let outcome = c.timers[j].stop();
            c.stop.saturating_record(nanos(t0.elapsed()));
            if outcome == Stop::Cancelled {
                c.cancelled += 1;
                c.expected[j].0 -= 1;
            }
        }
    }
    Ok(c)
}
