//! Varghese & Lauck's cost model of Schemes 6 and 7: a timer that lives `T` ticks costs about
//! `c6 · T / M` in a hashed wheel of `M` buckets (its bucket is visited once per revolution)
//! and at most `c7 · m` in a hierarchy of `m` levels (one migration per level), so "for small
//! values of T and large values of M, Scheme 6 can be better than Scheme 7 … for large values
//! of T and small values of M, Scheme 7 will have a better average cost".
//!
//! Each cell starts `n` timers with intervals drawn uniformly from `[T/2, 3T/2]` on a fresh
//! structure and advances it past the last deadline in one call: the per-timer cost over the
//! timers' whole lives, start included. Counted: the structure's own steps per timer (node
//! visits, migrations and firings, plus the ticks it works through; deterministic) beside the
//! model's `T / M` revolutions (Scheme 6) and the levels a timer of interval `T` crosses
//! (Scheme 7, four levels of 64 slots as the production wheel has); timed: nanoseconds per
//! timer, the median of the repetitions.
//!
//! Scheme 7 is run twice: at equal M (the fixed 4 × 64 hierarchy beside each M) and at equal
//! memory (a hierarchy of M slots in all, the fewest levels of equal power-of-two size that
//! reach every deadline: 8 × 8 beside M = 64, 2 × 512 beside 1,024, 2 × 8,192 beside 16,384).
//!
//! The verdicts check the model's shapes and the paper's two corners on the counts, at equal M
//! and at equal memory, which `cargo test` asserts at the tiny run's sizes (a missed one fails
//! it), and the corners again on the times, which are printed only: the machine is shared and
//! noisy.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use callwheel::{Budget, Scheme};
use callwheel_schemes::hashed_wheel::HashedWheel;
use callwheel_schemes::hierarchical_wheel::{HierarchicalWheel, Migration};

use callwheel_bench::report::verdict;
use callwheel_bench::workload::{SplitMix64, SEED};

use crate::experiment::{Experiment, Section, Size};
use callwheel_bench::plots::{Chart, Series};

/// Buckets of the hashed wheel, as powers of two: M = 64, 1,024 and 16,384.
const BITS: [u32; 3] = [6, 10, 14];

/// Average timer intervals T, in ticks.
const INTERVALS: [u64; 4] = [100, 1_000, 10_000, 100_000];

/// The hierarchy: levels of 64 slots.
const LEVELS: usize = 4;
const LEVEL_SLOTS: u64 = 64;

/// One cell's figures for one scheme.
#[derive(Clone, Copy, Debug, Default)]
struct Cost {
    /// Steps of the structure per timer.
    steps: f64,
    /// Nanoseconds per timer (median of the repetitions).
    ns: f64,
}

/// One (M, T) cell.
struct Cell {
    buckets: u64,
    interval: u64,
    scheme6: Cost,
    /// Scheme 6's steps per timer by the model (see [`scheme6_steps`]).
    model6: f64,
    /// The 4 × 64 hierarchy.
    scheme7: Cost,
    /// A hierarchy of M slots in all ([`equal_memory`]).
    scheme7_equal: Cost,
}

/// The largest deadline any cell draws: 3T/2 at the largest T.
const REACH: u64 = INTERVALS[INTERVALS.len() - 1] * 3 / 2 + 1;

/// A hierarchy with as many slots as a hashed wheel of `buckets` (a power of two of at least
/// 4): the fewest levels, each of `buckets / levels` slots, whose span reaches [`REACH`].
fn equal_memory(buckets: u64) -> Vec<u32> {
    let mut levels = 2u64;
    while levels < buckets / 2 && (buckets / levels).saturating_pow(levels as u32) < REACH {
        levels *= 2;
    }
    vec![(buckets / levels) as u32; levels as usize]
}

/// Scheme 6's steps on `deadlines` (all started at tick 0) by the model, counted offline: each
/// timer is visited once per revolution of the wheel until it fires, the last visit firing it
/// (the model's `T / M`), and each tick whose bucket holds a timer costs two more steps
/// (reaching the tick, finishing it: the per-tick bookkeeping, shared by the timers). A tick
/// `t` has work when some timer with `d ≥ t` and `d ≡ t (mod M)` is pending.
///
/// One departure from the paper's wheel is counted too: ours keeps a floor, a tick before
/// which no timer is due (here the earliest deadline, since every timer starts at tick 0),
/// and its walk starts there, so a timer due at `d` is visited `⌊(d − floor) / M⌋ + 1` times,
/// not `⌈d / M⌉`. That is what lets a clock of nanosecond ticks jump without visiting every
/// rotation; the paper's wheel, stepped from tick 0, pays the revolutions before the floor.
fn scheme6_steps(deadlines: &[u64], buckets: u64) -> u64 {
    let Some(floor) = deadlines.iter().copied().min() else {
        return 0;
    };
    let visits: u64 = deadlines.iter().map(|&d| (d - floor) / buckets + 1).sum();
    let mut latest = vec![0u64; buckets as usize];
    for &d in deadlines {
        let r = (d % buckets) as usize;
        latest[r] = latest[r].max(d);
    }
    let until = deadlines.iter().copied().max().unwrap_or(0);
    let worked = (floor..=until)
        .filter(|&t| t <= latest[(t % buckets) as usize])
        .count() as u64;
    visits + 2 * worked
}

/// The levels of the hierarchy a timer of interval `t` is placed on and migrates through: 1
/// below 64 ticks, 2 below 4,096, and so on.
fn levels_crossed(t: u64) -> u64 {
    let mut levels = 1;
    let mut span = LEVEL_SLOTS;
    while t >= span && levels < LEVELS as u64 {
        levels += 1;
        span *= LEVEL_SLOTS;
    }
    levels
}

/// Starts every deadline and advances past the last: (steps, fired, ns).
fn run<S: Scheme<()>>(mut s: S, deadlines: &[u64]) -> Result<(u64, usize, f64), String> {
    let until = deadlines.iter().copied().max().unwrap_or(0) + 1;
    let t0 = Instant::now();
    for &d in deadlines {
        s.start(d, ()).map_err(|e| format!("start: {e}"))?;
    }
    let p = s.advance(until, Budget::UNLIMITED, |_, _| {});
    let ns = t0.elapsed().as_nanos() as f64;
    Ok((p.steps, p.fired, ns))
}

/// The cost of one scheme on `deadlines`: steps per timer and the median time per timer over
/// `reps` fresh structures from `make`.
fn measure<S: Scheme<()>>(
    reps: usize,
    make: impl Fn() -> Result<S, callwheel::Error>,
    deadlines: &[u64],
) -> Result<Cost, String> {
    let n = deadlines.len();
    let mut times = Vec::with_capacity(reps);
    let mut steps = 0;
    for _ in 0..reps.max(1) {
        let structure = make().map_err(|e| format!("building the structure: {e}"))?;
        let (s, fired, ns) = run(structure, deadlines)?;
        if fired != n {
            return Err(format!("{fired} of {n} timers fired"));
        }
        steps = s;
        times.push(ns);
    }
    let median = callwheel_bench::percentile::median(&times).ok_or("no repetitions")?;
    Ok(Cost {
        steps: steps as f64 / n.max(1) as f64,
        ns: median / n.max(1) as f64,
    })
}

/// Every cell: for each M and T, both schemes on the same deadlines.
fn cells(n: usize, reps: usize, intervals: &[u64]) -> Result<Vec<Cell>, String> {
    let mut out = Vec::new();
    for &bits in &BITS {
        for &t in intervals {
            let mut rng = SplitMix64::new(SEED ^ t);
            let deadlines: Vec<u64> = (0..n).map(|_| rng.range(t / 2, t + t / 2 + 1)).collect();
            let scheme6 = measure(reps, || HashedWheel::<()>::new(bits), &deadlines)?;
            let scheme7 = measure(
                reps,
                || HierarchicalWheel::<()>::binary(LEVELS, Migration::Full),
                &deadlines,
            )?;
            let layout = equal_memory(1 << bits);
            let scheme7_equal = measure(
                reps,
                || HierarchicalWheel::<()>::new(&layout, Migration::Full),
                &deadlines,
            )?;
            out.push(Cell {
                buckets: 1 << bits,
                interval: t,
                scheme6,
                model6: scheme6_steps(&deadlines, 1 << bits) as f64 / n as f64,
                scheme7,
                scheme7_equal,
            });
        }
    }
    Ok(out)
}

/// What a cost-model run measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Timers per run.
    pub n: usize,
    /// Repetitions per cell.
    pub reps: usize,
    /// The intervals T, the first this many of the model's.
    pub intervals: usize,
}

/// `cost-model`: Scheme 6 against Scheme 7 as M and T vary (Varghese & Lauck's cost model).
pub struct CostModel;

impl Experiment for CostModel {
    type Plan = Plan;

    fn name(&self) -> &'static str {
        "cost-model"
    }

    fn about(&self) -> &'static str {
        "Scheme 6 against Scheme 7 as M and T vary (Varghese & Lauck's cost model)"
    }

    fn plan(&self, size: Size) -> Plan {
        let (n, reps, intervals) = match size {
            Size::Tiny => (500, 1, 2),
            Size::Default => (10_000, 3, INTERVALS.len()),
            Size::Full => (100_000, 5, INTERVALS.len()),
        };
        Plan { n, reps, intervals }
    }

    fn run(&self, plan: &Plan, out: &Path) -> Section {
        cost_model(plan, out)
    }
}

/// The experiment: the table in the paper's terms, the verdicts, the figure.
fn cost_model(plan: &Plan, out: &Path) -> Section {
    let mut done = Section::default();
    let (n, reps) = (plan.n, plan.reps);
    let intervals = &INTERVALS[..plan.intervals.min(INTERVALS.len())];
    let _ = writeln!(
        done.markdown,
        "\n## Cost model: Scheme 6 (hashed wheel, M buckets) against Scheme 7 (hierarchy of {LEVELS} levels of {LEVEL_SLOTS} slots)\n"
    );
    let cells = match cells(n, reps, intervals) {
        Ok(c) => c,
        Err(e) => {
            done.failed("cost model", e);
            return done;
        }
    };
    let _ = writeln!(
        done.markdown,
        "{n} timers per cell, intervals uniform in [T/2, 3T/2] ticks, started at tick 0 and advanced past the last deadline; steps are the structure's own (deterministic), ns the median of {reps} per timer over its life.\n"
    );
    let _ = writeln!(
        done.markdown,
        "| M | T | T / M | Scheme 6 steps / timer | Scheme 6 by the model | Scheme 6 ns / timer | m (levels crossed) | Scheme 7 steps / timer | Scheme 7 ns / timer | cheaper | Scheme 7 of M slots | its steps / timer | its ns / timer |"
    );
    let _ = writeln!(
        done.markdown,
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|"
    );
    for c in &cells {
        let cheaper = if c.scheme6.ns <= c.scheme7.ns {
            "6"
        } else {
            "7"
        };
        let _ = writeln!(
            done.markdown,
            "| {} | {} | {:.2} | {:.2} | {:.2} | {:.1} | {} | {:.2} | {:.1} | Scheme {cheaper} | {} | {:.2} | {:.1} |",
            c.buckets,
            c.interval,
            c.interval as f64 / c.buckets as f64,
            c.scheme6.steps,
            c.model6,
            c.scheme6.ns,
            levels_crossed(c.interval),
            c.scheme7.steps,
            c.scheme7.ns,
            layout_name(c.buckets),
            c.scheme7_equal.steps,
            c.scheme7_equal.ns
        );
        let case = format!("M={} T={}", c.buckets, c.interval);
        for (structure, cost) in [
            ("scheme 6", c.scheme6),
            ("scheme 7", c.scheme7),
            ("scheme 7 of M slots", c.scheme7_equal),
        ] {
            done.figures.figure(
                "cost-model",
                structure,
                &case,
                "steps_per_timer",
                cost.steps,
            );
            done.figures
                .figure("cost-model", structure, &case, "ns_per_timer", cost.ns);
        }
    }
    for (what, result) in count_verdicts(&cells)
        .into_iter()
        .chain(time_verdicts(&cells))
    {
        done.find("cost-model", what, result);
    }
    done.plot(&chart(&cells), out, "cost_model");
    done
}

/// `8 × 8` for the hierarchy of [`equal_memory`].
fn layout_name(buckets: u64) -> String {
    let layout = equal_memory(buckets);
    format!("{} × {}", layout.len(), layout[0])
}

/// The cells at the paper's two corners: (small T at the largest M, large T at the smallest M).
fn corners(cells: &[Cell]) -> Option<(&Cell, &Cell)> {
    let big_m = cells.iter().map(|c| c.buckets).max()?;
    let small_m = cells.iter().map(|c| c.buckets).min()?;
    let small_t = cells.iter().map(|c| c.interval).min()?;
    let big_t = cells.iter().map(|c| c.interval).max()?;
    let at = |m: u64, t: u64| cells.iter().find(|c| c.buckets == m && c.interval == t);
    Some((at(big_m, small_t)?, at(small_m, big_t)?))
}

/// The verdicts on the counts, which do not depend on the machine: the model's shapes, and the
/// paper's two corners at equal M and at equal memory.
fn count_verdicts(cells: &[Cell]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    // Scheme 6: a timer's bucket comes up once per revolution until it fires (T / M visits)
    // and every tick with work costs the same two steps: the model, counted offline, must
    // account for every step the structure took.
    let worst = cells
        .iter()
        .map(|c| (c.scheme6.steps - c.model6).abs() / c.model6.max(1e-9))
        .fold(0.0, f64::max);
    out.push((
        "Scheme 6 steps = one visit per revolution from the floor + the ticks with work, counted offline"
            .into(),
        format!(
            "largest difference {:.3} % of the model, over T/M from {:.3} to {:.0}: {}",
            worst * 100.0,
            cells
                .iter()
                .map(|c| c.interval as f64 / c.buckets as f64)
                .fold(f64::MAX, f64::min),
            cells
                .iter()
                .map(|c| c.interval as f64 / c.buckets as f64)
                .fold(0.0, f64::max),
            verdict(worst <= 0.005)
        ),
    ));
    // Scheme 7: at most one migration per level crossed, plus a constant.
    let worst = cells
        .iter()
        .map(|c| c.scheme7.steps - levels_crossed(c.interval) as f64)
        .fold(f64::MIN, f64::max);
    out.push((
        "Scheme 7 steps per timer <= m + a constant, whatever T and M (the model's c7 · m)".into(),
        format!("steps - m at most {worst:.2}: {}", verdict(worst <= 4.0)),
    ));
    if let Some((a, b)) = corners(cells) {
        for (name, of) in [
            (
                "Scheme 7 (4 × 64)",
                (|c: &Cell| c.scheme7) as fn(&Cell) -> Cost,
            ),
            ("Scheme 7 of M slots", |c: &Cell| c.scheme7_equal),
        ] {
            out.push((
                format!(
                    "small T, large M (T={}, M={}), steps: Scheme 6 no costlier than {name}",
                    a.interval, a.buckets
                ),
                format!(
                    "{:.2} against {:.2} steps per timer: {}",
                    a.scheme6.steps,
                    of(a).steps,
                    verdict(a.scheme6.steps <= of(a).steps)
                ),
            ));
            out.push((
                format!(
                    "large T, small M (T={}, M={}), steps: {name} cheaper than Scheme 6",
                    b.interval, b.buckets
                ),
                format!(
                    "{:.2} against {:.2} steps per timer: {}",
                    of(b).steps,
                    b.scheme6.steps,
                    verdict(of(b).steps < b.scheme6.steps)
                ),
            ));
        }
    }
    out
}

/// The verdicts on the times: where Scheme 7 becomes the cheaper, and the paper's corners.
fn time_verdicts(cells: &[Cell]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    // Where Scheme 7 becomes the cheaper, per M, beside the paper's T* = M · m · c7 / c6 with
    // c6 (ns per visit) and c7 (ns per level) fitted to this run.
    let fit6: Vec<(f64, f64)> = cells
        .iter()
        .map(|c| (c.interval as f64 / c.buckets as f64, c.scheme6.ns))
        .collect();
    let c6 = slope(&fit6);
    let c7 = cells
        .iter()
        .map(|c| c.scheme7.ns / levels_crossed(c.interval) as f64)
        .sum::<f64>()
        / cells.len().max(1) as f64;
    let mut crossovers = Vec::new();
    for &bits in &BITS {
        let m_buckets = 1u64 << bits;
        let first = cells
            .iter()
            .filter(|c| c.buckets == m_buckets && c.scheme7.ns < c.scheme6.ns)
            .map(|c| c.interval)
            .min();
        let (m, predicted) = crossover(m_buckets, c6, c7);
        crossovers.push(format!(
            "M = {m_buckets}: {} (model {predicted:.0}, m = {m})",
            first.map_or_else(|| "none measured".to_string(), |t| format!("from T = {t}"))
        ));
    }
    out.push((
        "where Scheme 7 becomes cheaper (no target): measured, and the paper's T* = M · m · c7 / c6"
            .into(),
        format!(
            "c6 = {c6:.2} ns per visit, c7 = {c7:.1} ns per level; {}",
            crossovers.join("; ")
        ),
    ));
    // The paper's corners, on the times.
    if let Some((a, b)) = corners(cells) {
        let (small_t, big_m, big_t, small_m) = (a.interval, a.buckets, b.interval, b.buckets);
        out.push((
            format!("small T, large M (T={small_t}, M={big_m}): Scheme 6 cheaper"),
            format!(
                "{:.1} against {:.1} ns per timer: {}",
                a.scheme6.ns,
                a.scheme7.ns,
                verdict(a.scheme6.ns <= a.scheme7.ns)
            ),
        ));
        out.push((
            format!("large T, small M (T={big_t}, M={small_m}): Scheme 7 cheaper"),
            format!(
                "{:.1} against {:.1} ns per timer: {}",
                b.scheme7.ns,
                b.scheme6.ns,
                verdict(b.scheme7.ns < b.scheme6.ns)
            ),
        ));
    }
    out
}

/// The paper's crossover for a wheel of `buckets`: the interval `T*` at which `c6 · T / M`
/// meets `c7 · m`, where `m` is itself the number of levels a timer of `T*` crosses (the
/// first `m` whose `T*` falls in its own range; the hierarchy's depth if none does).
fn crossover(buckets: u64, c6: f64, c7: f64) -> (u64, f64) {
    let at = |m: u64| buckets as f64 * m as f64 * c7 / c6.max(1e-9);
    (1..=LEVELS as u64)
        .map(|m| (m, at(m)))
        .find(|&(m, t)| levels_crossed(t as u64) == m)
        .unwrap_or((LEVELS as u64, at(LEVELS as u64)))
}

/// The least-squares slope of `y` on `x`.
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let (mx, my) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x / n, b + y / n));
    let (sxy, sxx) = points.iter().fold((0.0, 0.0), |(sxy, sxx), &(x, y)| {
        (sxy + (x - mx) * (y - my), sxx + (x - mx) * (x - mx))
    });
    if sxx > 0.0 {
        sxy / sxx
    } else {
        0.0
    }
}

/// Nanoseconds per timer against T, one line per M for Scheme 6 and one for Scheme 7 (the
/// same at every M: the hierarchy does not depend on it; its line is the M = 1,024 run).
fn chart(cells: &[Cell]) -> Chart {
    let mut series: Vec<Series> = BITS
        .iter()
        .map(|&bits| Series {
            label: format!("Scheme 6, M = {}", 1u64 << bits),
            points: cells
                .iter()
                .filter(|c| c.buckets == 1 << bits)
                .map(|c| (c.interval as f64, c.scheme6.ns))
                .collect(),
            reference: false,
        })
        .collect();
    series.push(Series {
        label: format!("Scheme 7, {LEVELS} levels of {LEVEL_SLOTS}"),
        points: cells
            .iter()
            .filter(|c| c.buckets == 1 << BITS[1])
            .map(|c| (c.interval as f64, c.scheme7.ns))
            .collect(),
        reference: false,
    });
    Chart {
        title: "Schemes 6 and 7: cost per timer over its life against its interval".into(),
        x_desc: "average timer interval T, ticks".into(),
        y_desc: "ns per timer (start, bookkeeping, expiry)".into(),
        log_x: true,
        log_y: true,
        series,
        legend_right: false,
        legend_bottom: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The model's verdicts on the counts, at the tiny run's sizes: a missed one fails here.
    #[test]
    fn every_verdict_on_the_counts_is_met() {
        let plan = CostModel.plan(Size::Tiny);
        let cells = cells(plan.n, 1, &INTERVALS[..plan.intervals]).unwrap();
        let verdicts = count_verdicts(&cells);
        assert_eq!(verdicts.len(), 6, "{verdicts:?}");
        for (what, result) in &verdicts {
            assert!(result.ends_with(verdict(true)), "{what}: {result}");
        }
    }

    #[test]
    fn the_equal_memory_hierarchy_has_m_slots_and_reaches_every_deadline() {
        for bits in BITS {
            let layout = equal_memory(1 << bits);
            let slots: u64 = layout.iter().map(|&s| u64::from(s)).sum();
            assert_eq!(slots, 1 << bits, "{layout:?}");
            let span = layout.iter().map(|&s| u64::from(s)).product::<u64>();
            assert!(span >= REACH, "{layout:?} spans {span}");
        }
        assert_eq!(equal_memory(64), [8; 8]);
        assert_eq!(equal_memory(1024), [512; 2]);
    }
}
