//! Coalescing on the real clock: intervals with tolerance on a fresh one-shard callwheel-async
//! driver, their driver's wake-ups against the optimum, and every tick against its window.
//!
//! `intervals` tasks on a current-thread tokio runtime each tick an `Interval` with a period drawn (SplitMix64) from 10 to 100 ms and a tolerance of `percent`
//! of it, first tick one period after the start, until `run_ms` have passed. Each tick's
//! window is `[scheduled, scheduled + tolerance]`. Each tick is read twice: when the driver
//! fires it (the task polls through a waker that reads the clock when it is woken, then wakes
//! the executor's) and when the task runs again after it (the executor's wake-up and its
//! turn among the other tasks woken at that instant come on top). Reported: the driver's
//! wake-ups ([`callwheel_async::DriverStats`]: sleeps that ended at their planned instant)
//! against the fewest instants stabbing every tick's window ([`callwheel::stabbing_optimum`]),
//! ticks before their scheduled time (must be none), and ticks after their window's end, with
//! how far after, both as fired and as seen by the task.
//!
//! The driver aims each sleep a little before the earliest window end (its running estimate
//! of how late the kernel wakes it), so that the timer whose window ends first still fires
//! inside it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Wake, Waker};
use std::time::{Duration, Instant};

use callwheel::stabbing_optimum;
use callwheel_rt::saturating_ns;

use callwheel_bench::percentile::Summary;
use callwheel_bench::workload::{SplitMix64, SEED};

/// The result of one coalescing run.
#[derive(Clone, Debug, PartialEq)]
pub struct Coalescing {
    /// Intervals running.
    pub intervals: u64,
    /// Their tolerance, in per cent of the period.
    pub percent: u64,
    /// How long they ran, ms.
    pub run_ms: u64,
    /// Ticks completed.
    pub ticks: u64,
    /// The driver's planned wake-ups.
    pub wakeups: u64,
    /// The fewest instants stabbing every tick's window.
    pub optimum: u64,
    /// Ticks fired before their scheduled time (must be 0).
    pub early: u64,
    /// Ticks fired after their window's end.
    pub after_window: u64,
    /// Of those, the median excess over the window's end, ns (0 when none).
    pub excess_p50_ns: u64,
    /// Of those, the largest excess, ns.
    pub excess_max_ns: u64,
    /// Ticks whose task ran again after their window's end.
    pub seen_after_window: u64,
    /// Of those, the median excess, ns.
    pub seen_excess_p50_ns: u64,
}

/// A waker that reads the clock when woken, then wakes the task's own waker.
struct Stamp {
    inner: Waker,
    base: Instant,
    at: AtomicU64,
}

impl Wake for Stamp {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.at
            .store(ns_since(self.base, Instant::now()), Ordering::Relaxed);
        self.inner.wake_by_ref();
    }
}

/// How far each (window end, reading) pair's reading lies past its end, for the pairs past
/// it, as a [`Summary`] (nearest-rank percentiles, as every other table); `None` when none is.
fn excesses(pairs: impl Iterator<Item = (u64, u64)>) -> Option<Summary> {
    Summary::of(
        "excess",
        pairs.filter(|&(e, t)| t > e).map(|(e, t)| t - e).collect(),
    )
}

impl Coalescing {
    /// Wake-ups over the optimum.
    pub fn ratio(&self) -> f64 {
        self.wakeups as f64 / self.optimum.max(1) as f64
    }
}

/// Nanoseconds from `base` to `t` (0 before it).
fn ns_since(base: Instant, t: Instant) -> u64 {
    saturating_ns(t.saturating_duration_since(base))
}

/// Runs `intervals` intervals at `percent` tolerance for `run_ms`.
///
/// # Errors
///
/// When the driver or the executor cannot start.
pub fn measure(intervals: u64, percent: u64, run_ms: u64) -> Result<Coalescing, String> {
    let driver = callwheel_async::Driver::builder()
        .build()
        .map_err(|e| format!("cannot start a driver: {e}"))?;
    let executor = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start tokio: {e}"))?;
    let mut rng = SplitMix64::new(SEED);
    let periods: Vec<Duration> = (0..intervals)
        .map(|_| Duration::from_micros(rng.range(10_000, 100_001)))
        .collect();
    // Every tick as (scheduled, window end, fired, task ran), ns after `base`.
    type Tick = (u64, u64, u64, u64);
    let ticks: Arc<Mutex<Vec<Tick>>> = Arc::new(Mutex::new(Vec::new()));
    let before = driver.stats();
    let base = Instant::now() + Duration::from_millis(20);
    let stop = base
        .checked_add(Duration::from_millis(run_ms))
        .ok_or_else(|| format!("a run of {run_ms} ms is past the clock's range"))?;
    executor.block_on(async {
        let tasks: Vec<_> = periods
            .iter()
            .map(|&period| {
                let tolerance = period * percent as u32 / 100;
                let mut every = driver
                    .interval_at(base + period, period)
                    .tolerance(tolerance);
                let ticks = Arc::clone(&ticks);
                tokio::spawn(async move {
                    let mut mine = Vec::new();
                    loop {
                        // One stamp per tick, made at its first poll: the task's waker does not
                        // change between polls of the same task.
                        let mut stamp: Option<(Arc<Stamp>, Waker)> = None;
                        let scheduled = std::future::poll_fn(|cx| {
                            let (_, waker) = stamp.get_or_insert_with(|| {
                                let st = Arc::new(Stamp {
                                    inner: cx.waker().clone(),
                                    base,
                                    at: AtomicU64::new(u64::MAX),
                                });
                                let waker = Waker::from(Arc::clone(&st));
                                (st, waker)
                            });
                            every.poll_tick(&mut Context::from_waker(waker))
                        })
                        .await;
                        let ran = ns_since(base, Instant::now());
                        // Ready at its first poll (not woken): fired when polled.
                        let fired = stamp
                            .map(|(st, _)| st.at.load(Ordering::Relaxed))
                            .filter(|&at| at != u64::MAX)
                            .unwrap_or(ran);
                        let s = ns_since(base, scheduled);
                        let end = s.saturating_add(saturating_ns(tolerance));
                        // The tick after the stop still cost the driver its wake-up: it counts
                        // among the windows the optimum must stab.
                        mine.push((s, end, fired.min(ran), ran));
                        if scheduled > stop {
                            break;
                        }
                    }
                    ticks.lock().unwrap_or_else(|p| p.into_inner()).extend(mine);
                })
            })
            .collect();
        for t in tasks {
            let _ = t.await;
        }
    });
    let after = driver.stats();
    let ticks = std::mem::take(&mut *ticks.lock().unwrap_or_else(|p| p.into_inner()));
    let windows: Vec<(u64, u64)> = ticks.iter().map(|&(s, e, _, _)| (s, e)).collect();
    let excess = excesses(ticks.iter().map(|&(_, e, fired, _)| (e, fired)));
    let seen = excesses(ticks.iter().map(|&(_, e, _, ran)| (e, ran)));
    let count = |r: &Option<Summary>| r.as_ref().map_or(0, |r| r.samples as u64);
    Ok(Coalescing {
        intervals,
        percent,
        run_ms,
        ticks: ticks.len() as u64,
        wakeups: after.wakeups - before.wakeups,
        optimum: stabbing_optimum(&windows),
        early: ticks.iter().filter(|&&(s, _, fired, _)| fired < s).count() as u64,
        after_window: count(&excess),
        excess_p50_ns: excess.as_ref().map_or(0, |r| r.p50),
        excess_max_ns: excess.as_ref().map_or(0, |r| r.max),
        seen_after_window: count(&seen),
        seen_excess_p50_ns: seen.as_ref().map_or(0, |r| r.p50),
    })
}
