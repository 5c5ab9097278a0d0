//! Scheme 2's insertion cost, searched from the head and from the rear, against Varghese &
//! Lauck's averages (section 3.2, after Reeves).
//!
//! The paper models a timer module as a queue with infinitely many servers: timers arrive as a
//! Poisson process at rate λ, each stays its interval (mean T), so `n = λT` are pending on
//! average (Little's law), and the time the pending timers have left, as a new timer sees it,
//! follows the residual-life density `(1 − F(x)) / T` of the interval distribution F. With
//! reads and writes one unit each, it gives the average cost of an insertion searched from the
//! head as `2 + 2n/3` for negative-exponential intervals and `2 + n/2` for uniform ones, and
//! `2 + n/3` for negative-exponential intervals searched from the rear.
//!
//! Here the queue is simulated on the list itself ([`OrderedList`]): Poisson arrivals, each
//! starting a timer with an exponential or a uniform interval (`[0, 2T]`, the same mean) that
//! stays until it fires at its deadline. After a warm-up that brings the population to its
//! steady state, every start is measured: the population it found (`n` as seen by that
//! insertion) and the entries its search passed over ([`OrderedList::entries_skipped`]). The
//! cost in the paper's units is the entries passed plus 2, the part every insertion pays
//! whatever `n`: one read that ends the search (the first entry on the other side of the new
//! timer's place, or the list's end) and one write that links the timer in. The paper does not
//! spell its constant out; any other reading moves every row by the same constant and leaves
//! the slopes, `(cost − 2) / n`, as they are.
//!
//! The same analysis gives the slopes directly: a search from the head passes each pending
//! timer whose remaining time `R` is at most the new interval `X`, so it passes `n · p` entries
//! on average with `p = P(R ≤ X)`, and a search from the rear `n · (1 − p)`. Exponential
//! intervals are memoryless (`R` is exponential with mean T too): `p = 1/2` from either end.
//! Uniform ones on `[0, 2T]`: `p = E[X/T − X²/4T²] = 2/3` from the head, `1/3` from the rear.
//! The paper's three figures are these with the two distributions exchanged; the verdicts judge
//! the measurements against both, so the report shows which the list follows.

use std::fmt::Write as _;
use std::path::Path;

use callwheel::{Budget, Scheme, Timers};
use callwheel_bench::report::verdict;
use callwheel_bench::workload::{SplitMix64, SEED};
use callwheel_schemes::ordered_list::{OrderedList, Search};

use crate::experiment::{Experiment, Section, Size};

/// The mean interval T, in ticks: fine enough that two deadlines rarely share a tick.
pub const MEAN_INTERVAL: u64 = 1 << 20;

/// A measured mean meets a formula within this fraction of the formula's value.
pub const TOLERANCE: f64 = 0.10;

/// The mean population seen by the insertions meets Little's `λT` within this fraction.
pub const LITTLE_TOLERANCE: f64 = 0.05;

/// The insertion's fixed part in the paper's units: one read ending the search, one write.
pub const FIXED_COST: f64 = 2.0;

/// The timer interval distributions of the paper's formulas, both with mean T.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Intervals {
    /// Negative exponential with mean T.
    Exponential,
    /// Uniform on `[0, 2T]`.
    Uniform,
}

impl Intervals {
    /// Both, in table order.
    pub const ALL: [Intervals; 2] = [Intervals::Exponential, Intervals::Uniform];

    /// The name in the tables.
    pub fn name(self) -> &'static str {
        match self {
            Intervals::Exponential => "exponential",
            Intervals::Uniform => "uniform",
        }
    }

    /// One interval of mean `mean` ticks, at least 1 tick (a timer always lies in the future).
    pub fn draw(self, rng: &mut SplitMix64, mean: u64) -> u64 {
        match self {
            Intervals::Exponential => (exponential(rng) * mean as f64).ceil().max(1.0) as u64,
            Intervals::Uniform => rng.range(1, 2 * mean + 1),
        }
    }

    /// Mean intervals after which a population started empty is at its steady state: the
    /// whole support of the uniform; for the exponential, all but `e^-8` (0.03 %).
    fn warm_up(self) -> u64 {
        match self {
            Intervals::Exponential => 8,
            Intervals::Uniform => 2,
        }
    }

    /// `p = P(R ≤ X)`: the share of the pending timers a new one goes behind, from the
    /// residual-life density (see the module documentation).
    pub fn share_due_first(self) -> f64 {
        match self {
            Intervals::Exponential => 0.5,
            Intervals::Uniform => 2.0 / 3.0,
        }
    }
}

/// An exponential draw with mean 1, from the top 53 bits of the generator.
fn exponential(rng: &mut SplitMix64) -> f64 {
    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    -(1.0 - u).ln()
}

/// The end of the list a search starts at, as the tables name it.
fn end_name(search: Search) -> &'static str {
    match search {
        Search::FromHead => "head",
        Search::FromRear => "rear",
    }
}

/// The slope of the residual-life analysis: entries passed per pending timer.
pub fn derived_slope(intervals: Intervals, search: Search) -> f64 {
    let p = intervals.share_due_first();
    match search {
        Search::FromHead => p,
        Search::FromRear => 1.0 - p,
    }
}

/// The paper's slope and its formula as printed; `None` for rear search on uniform intervals,
/// for which the paper gives none.
pub fn paper_slope(intervals: Intervals, search: Search) -> Option<(f64, &'static str)> {
    match (intervals, search) {
        (Intervals::Exponential, Search::FromHead) => Some((2.0 / 3.0, "2 + 2n/3")),
        (Intervals::Uniform, Search::FromHead) => Some((0.5, "2 + n/2")),
        (Intervals::Exponential, Search::FromRear) => Some((1.0 / 3.0, "2 + n/3")),
        (Intervals::Uniform, Search::FromRear) => None,
    }
}

/// A formula `2 + s·n` as the tables print it: the paper's fractions by name.
fn formula_text(slope: f64) -> String {
    let named = [
        (0.5, "2 + n/2"),
        (1.0 / 3.0, "2 + n/3"),
        (2.0 / 3.0, "2 + 2n/3"),
    ];
    match named.iter().find(|(s, _)| (s - slope).abs() < 1e-9) {
        Some((_, text)) => (*text).into(),
        None => format!("2 + {slope:.2}n"),
    }
}

/// What one simulation measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measured {
    /// Insertions measured (after the warm-up).
    pub insertions: u64,
    /// The mean population an insertion found in the list.
    pub mean_seen: f64,
    /// The mean entries an insertion's search passed over.
    pub mean_passed: f64,
}

impl Measured {
    /// The mean cost in the paper's units: the entries passed plus [`FIXED_COST`].
    pub fn cost(&self) -> f64 {
        FIXED_COST + self.mean_passed
    }

    /// `(cost − 2) / n`, with `n` the mean population seen.
    pub fn slope(&self) -> f64 {
        self.mean_passed / self.mean_seen.max(f64::MIN_POSITIVE)
    }
}

/// Runs the timer queue with Poisson arrivals of mean population `load` (`λT`) for `cycles`
/// mean intervals after the warm-up, on a list searched from `search`. The arrivals and the
/// intervals depend on `seed` alone, so runs with the same seed differ only in the search.
pub fn simulate(
    intervals: Intervals,
    search: Search,
    load: f64,
    cycles: u64,
    seed: u64,
) -> Result<Measured, String> {
    if load <= 0.0 || cycles == 0 {
        return Err("the simulation needs a positive load and at least one cycle".into());
    }
    let gap = MEAN_INTERVAL as f64 / load;
    let warm = intervals.warm_up() * MEAN_INTERVAL;
    let end = warm + cycles * MEAN_INTERVAL;
    let mut list = OrderedList::<()>::new().searching(search);
    let mut rng = SplitMix64::new(seed);
    let mut clock = 0.0f64;
    let (mut insertions, mut seen, mut passed) = (0u64, 0u64, 0u64);
    loop {
        clock += exponential(&mut rng) * gap;
        let now = clock as u64;
        if now >= end {
            break;
        }
        // Every timer due by now fires before the arrival looks at the list.
        let _ = list.advance(now, Budget::UNLIMITED, |_, _| {});
        let before = list.entries_skipped();
        let pending = list.len() as u64;
        let deadline = now + intervals.draw(&mut rng, MEAN_INTERVAL);
        list.start(deadline, ())
            .map_err(|e| format!("start: {e}"))?;
        if now >= warm {
            insertions += 1;
            seen += pending;
            passed += list.entries_skipped() - before;
        }
    }
    if insertions == 0 {
        return Err("no insertion after the warm-up".into());
    }
    Ok(Measured {
        insertions,
        mean_seen: seen as f64 / insertions as f64,
        mean_passed: passed as f64 / insertions as f64,
    })
}

/// One row: a load, a distribution, an end.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    /// `λT`, the population asked for.
    pub load: u64,
    /// The interval distribution.
    pub intervals: Intervals,
    /// Where the searches start.
    pub search: Search,
    /// What the simulation measured.
    pub measured: Measured,
}

impl Row {
    /// How far the measured cost is from `2 + slope·n` at the population seen, as a fraction
    /// of the formula.
    pub fn off(&self, slope: f64) -> f64 {
        let formula = FIXED_COST + slope * self.measured.mean_seen;
        (self.measured.cost() - formula).abs() / formula
    }
}

/// Every row of a plan: for each load and distribution, one run from each end on the same
/// arrivals and intervals.
pub fn rows(plan: &Plan) -> Result<Vec<Row>, String> {
    let mut out = Vec::new();
    for &load in &plan.loads {
        let cycles = plan.cycles_for(load);
        for (k, intervals) in Intervals::ALL.into_iter().enumerate() {
            let seed = SEED ^ (load << 8) ^ k as u64;
            for search in [Search::FromHead, Search::FromRear] {
                let measured = simulate(intervals, search, load as f64, cycles, seed)?;
                out.push(Row {
                    load,
                    intervals,
                    search,
                    measured,
                });
            }
        }
    }
    Ok(out)
}

/// What an insertion-cost run measures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The mean populations `λT`.
    pub loads: Vec<u64>,
    /// Mean intervals measured after the warm-up, per run, at least.
    pub cycles: u64,
    /// Insertions measured per run, at least: a small population is run for more cycles. Its
    /// time average wanders by about `sqrt(2 / (λT · cycles))` of itself (the population
    /// renews once per mean interval), so this many insertions keep Little's law checkable.
    pub insertions: u64,
}

impl Plan {
    /// The mean intervals measured at population `load`.
    pub fn cycles_for(&self, load: u64) -> u64 {
        self.cycles.max(self.insertions.div_ceil(load.max(1)))
    }
}

/// `insertion-cost`: Scheme 2's insertion searched from the head and from the rear, in the
/// paper's units, against its averages.
pub struct InsertionCost;

impl Experiment for InsertionCost {
    type Plan = Plan;

    fn name(&self) -> &'static str {
        "insertion-cost"
    }

    fn about(&self) -> &'static str {
        "Scheme 2's insertion cost from the head and the rear on a simulated M/G/inf timer queue, against the paper's 2 + 2n/3, 2 + n/2, 2 + n/3"
    }

    fn plan(&self, size: Size) -> Plan {
        let (loads, cycles, insertions) = match size {
            Size::Tiny => (vec![16, 64], 10, 16_000),
            Size::Default => (vec![16, 64, 256, 1024], 40, 64_000),
            Size::Full => (vec![16, 64, 256, 1024, 4096], 100, 400_000),
        };
        Plan {
            loads,
            cycles,
            insertions,
        }
    }

    fn run(&self, plan: &Plan, _out: &Path) -> Section {
        insertion_cost(plan)
    }
}

/// The experiment: the table, the figures and the verdicts.
fn insertion_cost(plan: &Plan) -> Section {
    let mut done = Section::default();
    let _ = writeln!(
        done.markdown,
        "\n## Scheme 2: insertion cost searched from the head and from the rear (Varghese & Lauck, section 3.2)\n"
    );
    let rows = match rows(plan) {
        Ok(rows) => rows,
        Err(e) => {
            done.failed("insertion cost", e);
            return done;
        }
    };
    let _ = writeln!(
        done.markdown,
        "Poisson arrivals, intervals of mean T = {MEAN_INTERVAL} ticks (exponential, or uniform on [0, 2T]), each timer firing at its deadline; after a warm-up, at least {} mean intervals and {} insertions measured per run, head and rear on the same arrivals. Cost in the paper's units: the entries the search passed over, plus 2 (one read ending the search, one write linking the timer in). Formulas evaluated at n seen, the mean population the insertions found; \"residual life\" is `2 + p·n` with `p = P(R ≤ X)` (module documentation of `insertion_cost`). A formula is met within {:.0} %.\n",
        plan.cycles,
        plan.insertions,
        TOLERANCE * 100.0
    );
    let _ = writeln!(
        done.markdown,
        "| intervals | search | λT | insertions | n seen | cost | (cost − 2) / n | the paper's | off | residual life | off |"
    );
    let _ = writeln!(
        done.markdown,
        "|---|---|---:|---:|---:|---:|---:|---|---:|---|---:|"
    );
    for r in &rows {
        let m = &r.measured;
        let derived = derived_slope(r.intervals, r.search);
        let paper = match paper_slope(r.intervals, r.search) {
            Some((slope, text)) => format!(
                "{text} = {:.1} | {:.1} %",
                FIXED_COST + slope * m.mean_seen,
                r.off(slope) * 100.0
            ),
            None => "not given | ".into(),
        };
        let _ = writeln!(
            done.markdown,
            "| {} | {} | {} | {} | {:.1} | {:.1} | {:.3} | {paper} | {} = {:.1} | {:.1} % |",
            r.intervals.name(),
            end_name(r.search),
            r.load,
            m.insertions,
            m.mean_seen,
            m.cost(),
            m.slope(),
            formula_text(derived),
            FIXED_COST + derived * m.mean_seen,
            r.off(derived) * 100.0
        );
        let structure = format!("ordered-list from the {}", end_name(r.search));
        let case = format!("{} λT={}", r.intervals.name(), r.load);
        for (metric, value) in [
            ("cost", m.cost()),
            ("population_seen", m.mean_seen),
            ("slope", m.slope()),
        ] {
            done.figures
                .figure("insertion-cost", &structure, &case, metric, value);
        }
    }
    let _ = writeln!(
        done.markdown,
        "\nHead and rear searches of one insertion pass over complementary parts of the list (the entries due at or before the new timer, and those due after it), so on the same arrivals their passes add up to n seen. The residual-life slopes are the paper's three numbers with the two distributions exchanged (`2 + n/2` for exponential intervals from either end, memoryless; `2 + 2n/3` from the head and `2 + n/3` from the rear for uniform ones); the findings judge the measurements against the paper's labels, against the residual life, and against the paper's formulas with the labels exchanged."
    );
    for (what, result) in verdicts(&rows) {
        done.find("insertion-cost", what, result);
    }
    done
}

/// The worst `off` over the rows of one distribution and end against `slope`, with the mean
/// measured slope and the loads covered.
fn worst(rows: &[Row], intervals: Intervals, search: Search, slope: f64) -> (f64, f64, String) {
    let chosen: Vec<&Row> = rows
        .iter()
        .filter(|r| r.intervals == intervals && r.search == search)
        .collect();
    let off = chosen.iter().map(|r| r.off(slope)).fold(0.0, f64::max);
    let mean_slope =
        chosen.iter().map(|r| r.measured.slope()).sum::<f64>() / chosen.len().max(1) as f64;
    let loads = match (chosen.first(), chosen.last()) {
        (Some(a), Some(b)) => format!("n = {}–{}", a.load, b.load),
        _ => "no rows".into(),
    };
    (off, mean_slope, loads)
}

/// The paper's formulas, the residual-life ones, Little's law and the ends compared.
fn verdicts(rows: &[Row]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let pct = TOLERANCE * 100.0;
    for intervals in Intervals::ALL {
        for search in [Search::FromHead, Search::FromRear] {
            let Some((slope, text)) = paper_slope(intervals, search) else {
                continue;
            };
            let (off, measured, loads) = worst(rows, intervals, search, slope);
            out.push((
                format!(
                    "{}, searched from the {}: the paper's {text} within {pct:.0} %",
                    intervals.name(),
                    end_name(search)
                ),
                format!(
                    "measured 2 + {measured:.3}n; worst {:.1} % off over {loads}: {}",
                    off * 100.0,
                    verdict(off <= TOLERANCE)
                ),
            ));
        }
    }
    let mut worst_derived = 0.0f64;
    let mut parts = Vec::new();
    for intervals in Intervals::ALL {
        for search in [Search::FromHead, Search::FromRear] {
            let slope = derived_slope(intervals, search);
            let (off, measured, _) = worst(rows, intervals, search, slope);
            worst_derived = worst_derived.max(off);
            parts.push(format!(
                "{} {}: {} (measured {measured:.3}n)",
                intervals.name(),
                end_name(search),
                formula_text(slope)
            ));
        }
    }
    // The paper's formulas, each applied to the other distribution's measurements.
    let exchanged = [
        (Intervals::Uniform, Search::FromHead, Intervals::Exponential),
        (Intervals::Exponential, Search::FromHead, Intervals::Uniform),
        (Intervals::Uniform, Search::FromRear, Intervals::Exponential),
    ];
    let mut worst_exchanged = 0.0f64;
    let mut applied = Vec::new();
    for (measured, search, labelled) in exchanged {
        if let Some((slope, text)) = paper_slope(labelled, search) {
            let (off, _, _) = worst(rows, measured, search, slope);
            worst_exchanged = worst_exchanged.max(off);
            applied.push(format!(
                "{text} on {} from the {}",
                measured.name(),
                end_name(search)
            ));
        }
    }
    out.push((
        format!("the paper's formulas with the two distributions exchanged, within {pct:.0} %"),
        format!(
            "{}; worst {:.1} % off: {}",
            applied.join(", "),
            worst_exchanged * 100.0,
            verdict(worst_exchanged <= TOLERANCE)
        ),
    ));
    out.push((
        format!("every distribution and end within {pct:.0} % of the residual-life 2 + p·n (uniform from the rear: not given by the paper, derived)"),
        format!(
            "{}; worst {:.1} % off: {}",
            parts.join(", "),
            worst_derived * 100.0,
            verdict(worst_derived <= TOLERANCE)
        ),
    ));
    let little = rows
        .iter()
        .map(|r| (r.measured.mean_seen - r.load as f64).abs() / r.load as f64)
        .fold(0.0, f64::max);
    out.push((
        format!(
            "Little's law: the mean population the insertions found = λT within {:.0} %",
            LITTLE_TOLERANCE * 100.0
        ),
        format!(
            "worst {:.1} % off: {}",
            little * 100.0,
            verdict(little <= LITTLE_TOLERANCE)
        ),
    ));
    let ratio = |intervals: Intervals| {
        let cost = |search: Search| {
            rows.iter()
                .filter(|r| r.intervals == intervals && r.search == search)
                .map(|r| r.measured.cost())
                .sum::<f64>()
        };
        cost(Search::FromRear) / cost(Search::FromHead).max(f64::MIN_POSITIVE)
    };
    out.push((
        "rear search against head search, summed over n (no target)".into(),
        format!(
            "exponential {:.2}×, uniform {:.2}×",
            ratio(Intervals::Exponential),
            ratio(Intervals::Uniform)
        ),
    ));
    out
}

#[cfg(test)]
mod tests;
