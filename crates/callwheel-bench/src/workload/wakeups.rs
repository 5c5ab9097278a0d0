//! W4 (sparse advance) and W5 (coalescing): the workloads that drive a structure by its wake-up
//! query, with the trait W5 needs to know whether a structure takes a tolerance.

use std::hint::black_box;
use std::time::Instant;

use callwheel::{stabbing_optimum, Budget, Error, Scheme, Tick, Timers};

use super::{build, start_failed, SplitMix64, SEED};

/// Whether a structure honours the tolerance of [`Timers::start_with`] (calloutng's precision).
///
/// Only the production wheel does; every other structure fires at the deadline (the trait's
/// default) and runs W5 with tolerance 0 only. Implemented for every structure the registry
/// lists.
pub trait TolerantStart: Timers<u64> {
    /// `true` when [`Timers::start_with`] honours the tolerance; W5 calls it with a non-zero
    /// tolerance only then.
    const TAKES_TOLERANCE: bool = false;

    /// How many times a timer has moved down a level (a cascade) since the structure was
    /// made, for a structure that counts them (the production wheel's `stats().cascades`).
    fn cascades(&self) -> Option<u64> {
        None
    }
}

/// The sizes of one W4 measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct W4Params {
    /// Timers started (1 000 in the full workload).
    pub timers: u64,
    /// Expiries are drawn from `[1, ticks)` (1e9 in the full workload).
    pub ticks: Tick,
    /// Each timer's tolerance in percent of its distance from its start (0: exact, W4 itself).
    pub tolerance_percent: u64,
    /// Repetitions, each with a fresh structure and a re-seeded generator.
    pub reps: u32,
}

impl W4Params {
    /// `Err` for sizes W4 cannot run (no timer, fewer than two ticks, no repetition, a
    /// tolerance above 100 %).
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.timers == 0 || self.ticks < 2 || self.reps == 0 {
            return Err("W4 needs at least one timer, two ticks and one repetition".into());
        }
        super::tolerance_in_range(self.tolerance_percent)
    }
}

/// What a W4 measurement produced.
#[derive(Clone, Debug, PartialEq)]
pub struct W4Outcome {
    /// Nanoseconds per timer (starts plus the whole jump loop, divided by the timers), one
    /// figure per repetition.
    pub ns_per_timer: Vec<f64>,
    /// Timers fired by the loop (first repetition; the counts must agree between repetitions).
    pub fired: u64,
    /// `advance` calls the loop made (first repetition; likewise).
    pub jumps: u64,
    /// Firings after the timer's window ended (the counts must agree between repetitions;
    /// `None`: not counted).
    pub outside: Option<u64>,
    /// Moves of a timer down a level per timer, where counted (first repetition).
    pub cascades_per_timer: Option<f64>,
}

/// W4 and W5 give up after this many `advance` calls in one repetition: a query that never
/// lets the structure empty would otherwise loop for ever.
pub const MAX_WAKEUPS: u64 = 200_000_000;

/// W4, sparse advance: `timers` starts in `[1, ticks)`, then `advance(d)` at every `d` the
/// structure's [`Timers::next_wakeup`] names until it is empty, all timed.
///
/// Fails if the structure cannot be built, a start is refused, an unlimited advance is
/// incomplete, the loop exceeds [`MAX_WAKEUPS`], or the counts differ between repetitions.
pub fn w4<S, F>(p: &W4Params, make: F) -> Result<W4Outcome, String>
where
    S: Scheme<u64> + TolerantStart,
    F: Fn() -> Result<S, Error>,
{
    p.check()?;
    let pct = p.tolerance_percent;
    let mut ns_per_timer = Vec::with_capacity(p.reps as usize);
    let mut counts = None;
    let mut cascades = None;
    for _ in 0..p.reps {
        let mut rng = SplitMix64::new(SEED);
        let mut s = build(&make)?;
        let mut fired = 0u64;
        let mut jumps = 0u64;
        let mut outside_window = 0u64;
        let mut incomplete = false;

        let begin = Instant::now();
        for i in 0..p.timers {
            // Started at 0: a timer's distance is its deadline.
            let d = rng.range(1, p.ticks);
            if let Err(e) = s.start_with(d, super::tolerance(d, pct), i) {
                return Err(start_failed(e));
            }
        }
        while let Some(d) = s.next_wakeup() {
            // Every firing of this call happens at or before `d`: judged at `d` (a driver
            // woken at `d` runs the callbacks then).
            let progress = s.advance(d, Budget::UNLIMITED, |_, e| {
                outside_window += u64::from(super::outside(d, e.deadline, e.deadline, pct));
                black_box(e);
            });
            fired += progress.fired as u64;
            incomplete |= !progress.complete;
            jumps += 1;
            if jumps > MAX_WAKEUPS {
                return Err(format!(
                    "gave up after {MAX_WAKEUPS} jumps with {} timers pending",
                    s.len()
                ));
            }
        }
        let elapsed = begin.elapsed();
        black_box(&mut s);

        if incomplete {
            return Err("an advance with an unlimited budget did not complete".into());
        }
        same_each_repetition(&mut counts, (fired, jumps, outside_window), "fired/jumps")?;
        ns_per_timer.push(elapsed.as_nanos() as f64 / p.timers as f64);
        cascades.get_or_insert(s.cascades().map(|c| c as f64 / p.timers as f64));
        drop(s);
    }
    let (fired, jumps, outside) = counts.unwrap_or((0, 0, 0));
    Ok(W4Outcome {
        ns_per_timer,
        fired,
        jumps,
        outside: Some(outside),
        cascades_per_timer: cascades.flatten(),
    })
}

/// The sizes of one W5 measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct W5Params {
    /// Timers started (100 000 in the full workload).
    pub timers: u64,
    /// Deadlines are drawn from `[1, ticks)` (1 000 000 in the full workload).
    pub ticks: Tick,
    /// The tolerance of the first case, in percent of the deadline (`d * pct / 100`); the
    /// second case is always tolerance 0.
    pub tolerance_percent: u64,
    /// Repetitions, each with a fresh structure and a re-seeded generator.
    pub reps: u32,
}

/// What one tolerance case of W5 produced.
#[derive(Clone, Debug, PartialEq)]
pub struct W5Case {
    /// Nanoseconds per timer (starts plus the whole drive), one figure per repetition.
    pub ns_per_timer: Vec<f64>,
    /// `advance` calls the drive made.
    pub wakeups: u64,
    /// The fewest instants that stab every window (greedy), from the draws alone.
    pub optimum: u64,
    /// Timers that fired outside their window: the wake-up instant or the callback's
    /// `timers.now()` before the deadline or after the window's end.
    pub violations: u64,
}

/// What a W5 measurement produced.
#[derive(Clone, Debug, PartialEq)]
pub struct W5Outcome {
    /// The case with tolerance `d * pct / 100`; `None` for a structure without tolerance
    /// ([`TolerantStart::TAKES_TOLERANCE`] is `false`).
    pub tolerant: Option<W5Case>,
    /// The case with tolerance 0 (every structure).
    pub exact: W5Case,
}

/// W5's windows: `d = range(1, ticks)`, `[d, d + d * pct / 100]`, in draw order.
pub fn w5_windows(timers: u64, ticks: Tick, tolerance_percent: u64) -> Vec<(Tick, Tick)> {
    let mut rng = SplitMix64::new(SEED);
    (0..timers)
        .map(|_| {
            let d = rng.range(1, ticks);
            (d, d + d * tolerance_percent / 100)
        })
        .collect()
}

/// One W5 case: start every timer with its window, then drive the structure by its
/// [`Timers::next_wakeup`] until it is empty, checking every firing against the window.
fn w5_case<S, F>(p: &W5Params, percent: u64, make: &F) -> Result<W5Case, String>
where
    S: Scheme<u64> + TolerantStart,
    F: Fn() -> Result<S, Error>,
{
    let windows = w5_windows(p.timers, p.ticks, percent);
    let optimum = stabbing_optimum(&windows);
    let mut ns_per_timer = Vec::with_capacity(p.reps as usize);
    let mut counts = None;
    for _ in 0..p.reps {
        // The draws are the windows' deadlines, in the same order as `w5_windows` makes them.
        let mut rng = SplitMix64::new(SEED);
        let mut s = build(make)?;
        let mut wakeups = 0u64;
        let mut violations = 0u64;
        let mut fired = 0u64;
        let mut incomplete = false;

        let begin = Instant::now();
        for i in 0..p.timers {
            let d = rng.range(1, p.ticks);
            let tolerance = d * percent / 100;
            let started = if tolerance == 0 {
                s.start(d, i)
            } else {
                s.start_with(d, tolerance, i)
            };
            if let Err(e) = started {
                return Err(start_failed(e));
            }
        }
        while let Some(t) = s.next_wakeup() {
            wakeups += 1;
            let progress = s.advance(t, Budget::UNLIMITED, |timers, e| {
                let (start, end) = windows.get(e.value as usize).copied().unwrap_or((1, 0));
                let at = timers.now();
                if at < start || at > end || t < start || t > end {
                    violations += 1;
                }
                black_box(e);
            });
            fired += progress.fired as u64;
            incomplete |= !progress.complete;
            if wakeups > MAX_WAKEUPS {
                return Err(format!(
                    "gave up after {MAX_WAKEUPS} wake-ups with {} timers pending",
                    s.len()
                ));
            }
        }
        let elapsed = begin.elapsed();
        black_box(&mut s);

        if incomplete {
            return Err("an advance with an unlimited budget did not complete".into());
        }
        if fired != p.timers {
            return Err(format!(
                "fired {fired} timers, expected {} (tolerance {percent} %)",
                p.timers
            ));
        }
        same_each_repetition(&mut counts, (wakeups, violations), "wake-ups/violations")?;
        ns_per_timer.push(elapsed.as_nanos() as f64 / p.timers as f64);
        drop(s);
    }
    let (wakeups, violations) = counts.unwrap_or((0, 0));
    Ok(W5Case {
        ns_per_timer,
        wakeups,
        optimum,
        violations,
    })
}

/// W5, coalescing: `timers` timers at `d = range(1, ticks)`, first with tolerance
/// `d * pct / 100` (only for a structure that [takes one](TolerantStart::TAKES_TOLERANCE)), then
/// with tolerance 0; each case driven by the structure's [`Timers::next_wakeup`] until it is empty.
///
/// Fails if the structure cannot be built, a start is refused, an unlimited advance is
/// incomplete, a case does not fire every timer, the drive exceeds [`MAX_WAKEUPS`], or the
/// counts differ between repetitions. Window violations are reported, not judged here.
pub fn w5<S, F>(p: &W5Params, make: F) -> Result<W5Outcome, String>
where
    S: Scheme<u64> + TolerantStart,
    F: Fn() -> Result<S, Error>,
{
    if p.timers == 0 || p.ticks < 2 || p.reps == 0 {
        return Err("W5 needs at least one timer, two ticks and one repetition".into());
    }
    let tolerant = if S::TAKES_TOLERANCE && p.tolerance_percent > 0 {
        Some(w5_case(p, p.tolerance_percent, &make)?)
    } else {
        None
    };
    let exact = w5_case(p, 0, &make)?;
    Ok(W5Outcome { tolerant, exact })
}

use callwheel::Wheel;
use callwheel_schemes::{
    balanced_tree::BalancedTree, basic_wheel::BasicWheel, binary_heap::BinaryHeap,
    calendar_queue::CalendarQueue, differential_list::DifferentialList, hashed_wheel::HashedWheel,
    hashed_wheel_sorted::HashedWheelSorted, hierarchical_wheel::HierarchicalWheel,
    linux_wheel::LinuxWheel, ordered_list::OrderedList, simulation_wheel::SimulationWheel,
    straightforward::Straightforward,
};

// The tolerance trait for callwheel's own structures: every scheme keeps the default (it takes
// no tolerance); the production wheel starts with `start_with`.

impl TolerantStart for Straightforward<u64> {}
impl TolerantStart for OrderedList<u64> {}
impl TolerantStart for DifferentialList<u64> {}
impl TolerantStart for BinaryHeap<u64> {}
impl TolerantStart for BalancedTree<u64> {}
impl TolerantStart for BasicWheel<u64> {}
impl TolerantStart for HashedWheelSorted<u64> {}
impl TolerantStart for HashedWheel<u64> {}
impl TolerantStart for HierarchicalWheel<u64> {}
impl TolerantStart for CalendarQueue<u64> {}

impl TolerantStart for LinuxWheel<u64> {}
impl TolerantStart for SimulationWheel<u64> {}

impl TolerantStart for Wheel<u64> {
    const TAKES_TOLERANCE: bool = true;

    fn cascades(&self) -> Option<u64> {
        Some(self.stats().cascades)
    }
}

/// Keeps the first repetition's counts in `seen`; `Err` names `what` when a later repetition's
/// differ (the workload is deterministic, so they must not).
pub(crate) fn same_each_repetition<C: PartialEq + Copy + core::fmt::Debug>(
    seen: &mut Option<C>,
    counts: C,
    what: &str,
) -> Result<(), String> {
    match *seen {
        None => {
            *seen = Some(counts);
            Ok(())
        }
        Some(c) if c != counts => Err(format!(
            "{what} differ between repetitions: {c:?}, then {counts:?}"
        )),
        Some(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::same_each_repetition;

    #[test]
    fn counts_must_repeat() {
        let mut seen = None;
        assert_eq!(
            same_each_repetition(&mut seen, (3, 1), "fired/jumps"),
            Ok(())
        );
        assert_eq!(
            same_each_repetition(&mut seen, (3, 1), "fired/jumps"),
            Ok(())
        );
        assert_eq!(
            same_each_repetition(&mut seen, (3, 2), "fired/jumps"),
            Err("fired/jumps differ between repetitions: (3, 1), then (3, 2)".into())
        );
        assert_eq!(seen, Some((3, 1)));
    }
}
