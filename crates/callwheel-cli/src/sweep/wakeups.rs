//! The wake-up batches (many direct timers with windows, the driver's wake-ups against the
//! stabbing optimum) and the idle check (no wake-up while nothing is due).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use callwheel::stabbing_optimum;
use callwheel_rt::{Deadline, Exec, Runtime, ShardStats};

use super::plan::Plan;
use super::report::{Batch, Idle};
use crate::failure::{fail, Failure};
use callwheel_bench::percentile::nearest_rank;
use callwheel_bench::percentile::Summary;
use callwheel_bench::workload::SplitMix64;

/// How far after arming the first batch deadline may fall, so that arming is over first: at
/// least this, and three times what creating the batch's timers took (arming costs about as
/// much; a million timers take over a second).
const BATCH_LEAD_NS: u64 = 50_000_000;

fn stats(rt: &Runtime) -> Result<ShardStats, Failure> {
    rt.shard_stats(0)
        .map_err(|e| fail("reading the statistics", e))
}

/// One wake-up batch at `pct` % tolerance.
pub(super) fn batch(plan: &Plan, pct: u64, seed: u64) -> Result<Batch, Failure> {
    let rt = Runtime::builder()
        .shards(1)
        .workers(1)
        .build()
        .map_err(|e| fail("starting the runtime", e))?;
    let n = plan.batch_timers as usize;
    let fired_at: Arc<Vec<AtomicU64>> = Arc::new((0..n).map(|_| AtomicU64::new(0)).collect());
    let counts: Arc<Vec<AtomicU32>> = Arc::new((0..n).map(|_| AtomicU32::new(0)).collect());
    let span = plan.span_ms * 1_000_000;
    let before = stats(&rt)?;
    let created = Instant::now();
    let mut timers = Vec::with_capacity(n);
    for i in 0..n {
        let (at, count) = (Arc::clone(&fired_at), Arc::clone(&counts));
        let timer = rt.timer(Exec::Direct, move |_, fire| {
            at[i].store(fire.now, Ordering::Relaxed);
            count[i].fetch_add(1, Ordering::Release);
        });
        timers.push(timer.map_err(|e| fail("making a batch timer", e))?);
    }
    let lead = BATCH_LEAD_NS.max(3 * u64::try_from(created.elapsed().as_nanos()).unwrap_or(0));
    let now = rt.now_ns();
    let mut rng = SplitMix64::new(seed);
    let mut windows = Vec::with_capacity(n);
    for t in &timers {
        let deadline = now + lead + rng.range(0, span);
        let tolerance = (deadline - now) * pct / 100;
        t.start_with(
            Deadline::from_clock_ns(deadline),
            Duration::from_nanos(tolerance),
            None,
        )
        .map_err(|e| fail("arming a batch timer", e))?;
        windows.push((deadline, deadline + tolerance));
    }
    let total = || -> u64 {
        counts
            .iter()
            .map(|c| u64::from(c.load(Ordering::Acquire)))
            .sum()
    };
    let began_during_arming = total() > 0;
    let give_up = Instant::now()
        + Duration::from_nanos(lead + span + span * pct / 100)
        + Duration::from_secs(10);
    while total() < n as u64 && Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(2));
    }
    // A second firing would come at once: every window has ended.
    std::thread::sleep(Duration::from_millis(5));
    let after = stats(&rt)?;
    let early = after.early_wakeups - before.early_wakeups;
    let firings: Vec<Option<u64>> = counts
        .iter()
        .zip(fired_at.iter())
        .map(|(c, at)| (c.load(Ordering::Acquire) > 0).then(|| at.load(Ordering::Relaxed)))
        .collect();
    let Placed {
        before_deadline,
        excess,
        lateness_p50_ns,
    } = place(&windows, &firings);
    let after_window = excess.len() as u64;
    let excess = Summary::of("excess", excess);
    Ok(Batch {
        tolerance_percent: pct,
        timers: n as u64,
        fired: total(),
        never: counts
            .iter()
            .filter(|c| c.load(Ordering::Acquire) == 0)
            .count() as u64,
        twice: counts
            .iter()
            .filter(|c| c.load(Ordering::Acquire) > 1)
            .count() as u64,
        wakeups: (after.wakeups - before.wakeups).saturating_sub(early),
        early_wakeups: early,
        optimum: stabbing_optimum(&windows),
        before_deadline,
        after_window,
        excess_p50_ns: excess.as_ref().map_or(0, |r| r.p50),
        excess_p99_ns: excess.as_ref().map_or(0, |r| r.p99),
        excess_max_ns: excess.as_ref().map_or(0, |r| r.max),
        lateness_p50_ns,
        began_during_arming,
    })
}

/// Where a batch's firings fell against their windows.
#[derive(Debug, PartialEq, Eq)]
struct Placed {
    /// Firings before their window's start.
    before_deadline: u64,
    /// How far past its window's end each late firing came, ns, in window order.
    excess: Vec<u64>,
    /// The median, over every firing at or after its deadline, of how far past its window's end
    /// it came (0 inside the window), ns; 0 when there is none.
    lateness_p50_ns: u64,
}

/// Places each timer's (last) firing, `None` for one that never fired, against its window
/// `[start, end]`.
fn place(windows: &[(u64, u64)], firings: &[Option<u64>]) -> Placed {
    let mut excess = Vec::new();
    let mut lateness = Vec::new();
    let mut before_deadline = 0;
    for (&(start, end), &at) in windows.iter().zip(firings) {
        let Some(at) = at else { continue };
        if at < start {
            before_deadline += 1;
            continue;
        }
        lateness.push(at.saturating_sub(end));
        if at > end {
            excess.push(at - end);
        }
    }
    lateness.sort_unstable();
    Placed {
        before_deadline,
        excess,
        lateness_p50_ns: nearest_rank(&lateness, 500).unwrap_or(0),
    }
}

/// Watches a runtime whose only timer is an hour away for `ms` milliseconds.
pub(super) fn idle(ms: u64) -> Result<Idle, Failure> {
    let rt = Runtime::builder()
        .shards(1)
        .workers(1)
        .build()
        .map_err(|e| fail("starting the runtime", e))?;
    let t = rt
        .timer(Exec::Direct, |_, _| {})
        .map_err(|e| fail("making the idle timer", e))?;
    t.start_after(Duration::from_secs(3_600))
        .map_err(|e| fail("arming the idle timer", e))?;
    // Let the driver take the arming's wake-up and go back to sleep.
    std::thread::sleep(Duration::from_millis(5));
    let before = stats(&rt)?.wakeups;
    std::thread::sleep(Duration::from_millis(ms));
    let after = stats(&rt)?.wakeups;
    let _ = t.stop();
    Ok(Idle {
        ms,
        wakeups: after - before,
    })
}

#[cfg(test)]
mod tests {
    use super::{place, Placed};

    #[test]
    fn firings_are_placed_against_their_windows() {
        let windows = [(100, 110); 5];
        // Never fired, early, at the deadline, at the window's end, 7 past it.
        let firings = [None, Some(99), Some(100), Some(110), Some(117)];
        assert_eq!(
            place(&windows, &firings),
            Placed {
                before_deadline: 1,
                excess: vec![7],
                // 0, 0, 7: the median timer is inside.
                lateness_p50_ns: 0,
            }
        );
        // Mostly late: the median is the middle lateness (0, 1, 10, 15, 20).
        let firings = [Some(105), Some(120), Some(111), Some(130), Some(125)];
        assert_eq!(place(&windows, &firings).lateness_p50_ns, 10);
        assert_eq!(place(&windows, &[None; 5]).lateness_p50_ns, 0);
    }
}
