//! Instructions per start and stop as an experiment: the counts by callgrind, the table, the
//! verdicts and the figures.

use std::fmt::Write as _;
use std::path::Path;

use callwheel_bench::verdict::{verdict, C_API_WITHIN};

use super::{Counts, Outcome, Structure};
use crate::experiment::{Experiment, Section, Size};

/// What an instructions run measures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The numbers of outstanding timers, one point each for every structure.
    pub ns: Vec<u64>,
}

/// The wheel's target: library instructions per cancel + start pair of `Wheel<()>`.
pub const PAIR_TARGET: f64 = 100.0;

/// Flat means the largest count over N is at most this much the smallest.
pub const FLAT: f64 = 1.1;

/// `instructions`: W1's start and stop in instructions per call, by callgrind.
pub struct Instructions;

impl Experiment for Instructions {
    type Plan = Plan;

    fn name(&self) -> &'static str {
        "instructions"
    }

    fn about(&self) -> &'static str {
        "W1 start and stop in instructions per call (wheel and C API), by callgrind"
    }

    fn plan(&self, size: Size) -> Plan {
        let ns = match size {
            Size::Tiny => vec![0, 1_000],
            Size::Default => vec![0, 1_000, 10_000, 100_000, 1_000_000],
            Size::Full => vec![0, 1_000, 10_000, 100_000, 1_000_000, 10_000_000],
        };
        Plan { ns }
    }

    fn run(&self, plan: &Plan, _out: &Path) -> Section {
        let mut done = Section::default();
        done.markdown
            .push_str("\n## Instructions per start and stop (W1), counted by callgrind\n\n");
        let counts = match super::run(&plan.ns) {
            Ok(Outcome::Measured(c)) => c,
            Ok(Outcome::Skipped(why)) => {
                let _ = writeln!(
                    done.markdown,
                    "Skipped: {why}. Install valgrind (Debian: `apt-get install valgrind`) to count instructions.\n"
                );
                done.find(
                    "instructions",
                    "instruction counts by callgrind".into(),
                    format!("skipped: {why}"),
                );
                return done;
            }
            Err(e) => {
                done.failed("instructions", e);
                return done;
            }
        };
        done.markdown.push_str(&table(&counts));
        for c in &counts {
            let case = format!("N={}", c.n);
            let structure = c.structure.name();
            done.figures
                .figure("instructions", structure, &case, "start", c.start);
            done.figures
                .figure("instructions", structure, &case, "stop", c.stop);
            done.figures
                .figure("instructions", structure, &case, "pair", c.pair());
        }
        for (what, result) in verdicts(&counts) {
            let _ = writeln!(done.markdown, "- {what}: {result}");
            done.find("instructions", what, result);
        }
        done.markdown.push('\n');
        done
    }
}

/// The counts as a Markdown table: a row per structure and N.
fn table(counts: &[Counts]) -> String {
    let mut md = format!(
        "W1's cancel + start pair (`docs/workloads.md`: N timers outstanding, the churned one due in [2·10⁶, 3·10⁶)), {} pairs per point after 100 unmeasured ones, each call through a probe that only calls the library: instructions per call, the probe's call included, the generator not.\n\n",
        super::driver::PAIRS
    );
    md.push_str("| structure | N | start | stop | pair |\n|---|---:|---:|---:|---:|\n");
    for c in counts {
        let _ = writeln!(
            md,
            "| {} | {} | {:.1} | {:.1} | {:.1} |",
            c.structure.label(),
            c.n,
            c.start,
            c.stop,
            c.pair()
        );
    }
    md.push('\n');
    md
}

/// The counts of `structure`, in N's order.
fn of(counts: &[Counts], structure: Structure) -> Vec<Counts> {
    counts
        .iter()
        .copied()
        .filter(|c| c.structure == structure)
        .collect()
}

/// The verdicts: the `Wheel<()>` pair at most [`PAIR_TARGET`] at every N, flat over N, and
/// the C path's pair against `Wheel<u64>`'s.
pub fn verdicts(counts: &[Counts]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let unit = of(counts, Structure::WheelUnit);
    if let (Some(worst), Some(best)) = (
        unit.iter().max_by(|a, b| a.pair().total_cmp(&b.pair())),
        unit.iter().min_by(|a, b| a.pair().total_cmp(&b.pair())),
    ) {
        let (lo, hi) = (unit[0].n, unit[unit.len() - 1].n);
        out.push((
            format!(
                "`Wheel<()>` instructions per cancel + start pair (the library's and the probe's call) at most {PAIR_TARGET:.0}, N = {lo} to {hi}"
            ),
            format!(
                "largest {:.1} at N = {} ({:.1} start + {:.1} stop): {}",
                worst.pair(),
                worst.n,
                worst.start,
                worst.stop,
                verdict(worst.pair() <= PAIR_TARGET)
            ),
        ));
        let ratio = worst.pair() / best.pair();
        out.push((
            format!("`Wheel<()>` pair flat over N (largest / smallest at most {FLAT})"),
            format!(
                "{:.1} / {:.1} = {ratio:.3}: {}",
                worst.pair(),
                best.pair(),
                verdict(ratio <= FLAT)
            ),
        ));
    }
    let rust = of(counts, Structure::WheelU64);
    let c = of(counts, Structure::CWheel);
    let ratios: Vec<(u64, f64)> = rust
        .iter()
        .filter_map(|r| {
            let c = c.iter().find(|c| c.n == r.n)?;
            Some((r.n, c.pair() / r.pair()))
        })
        .collect();
    if let Some(&(n, worst)) = ratios.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
        out.push((
            format!(
                "C API pair within {C_API_WITHIN}× of `Wheel<u64>`'s, in instructions (`bench` judges the time)"
            ),
            format!("largest {worst:.2}× at N = {n}: {}", verdict(worst <= C_API_WITHIN)),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(structure: Structure, n: u64, start: f64, stop: f64) -> Counts {
        Counts {
            structure,
            n,
            start,
            stop,
        }
    }

    #[test]
    fn verdicts_judge_the_worst_n_and_the_spread() {
        let counts = [
            at(Structure::WheelUnit, 0, 50.0, 45.0),
            at(Structure::WheelUnit, 1000, 52.0, 46.0),
            at(Structure::WheelU64, 0, 60.0, 50.0),
            at(Structure::CWheel, 0, 80.0, 60.0),
        ];
        let v = verdicts(&counts);
        assert_eq!(v.len(), 3);
        assert!(v[0].1.starts_with("largest 98.0 at N = 1000") && v[0].1.ends_with("met"));
        assert!(v[1].1.ends_with("met"), "{:?}", v[1]);
        assert!(
            v[2].1.contains("1.27×") && v[2].1.ends_with("missed"),
            "{:?}",
            v[2]
        );
        // One N over the target, and a spread over the flat bound: both missed.
        let counts = [
            at(Structure::WheelUnit, 0, 40.0, 40.0),
            at(Structure::WheelUnit, 1000, 61.0, 40.0),
        ];
        let v = verdicts(&counts);
        assert!(v[0].1.ends_with("missed"), "{:?}", v[0]);
        assert!(
            v[1].1.contains("1.262") && v[1].1.ends_with("missed"),
            "{:?}",
            v[1]
        );
    }
}
