//! The tolerant workloads: W3 and W4 with a tolerance of 1 % and 5 % of each timer's distance
//! from its start, and W2 with 5 % on the retransmission timeout (`docs/workloads.md`), beside
//! the exact ones, on the production wheel and Linux's non-cascading wheel (with the lazy heap's
//! exact W4 as the yardstick): time, firings outside their window, cascades per timer, and the
//! verdicts on the wheel's targets for tolerant timers.

use std::fmt::Write as _;

use indicatif::ProgressBar;

use crate::plan::Settings;
use crate::report::{self, Outcome};
use crate::runner::Task;
use crate::sections::{heading, measure_tasks};
use crate::structure::SchemeInfo;
use crate::verdict::{verdict, Verdict};

/// The production wheel, by the tool's name for it.
const WHEEL: &str = "wheel";
/// Linux's non-cascading wheel.
const LINUX: &str = "linux-wheel";
/// The exact yardstick of the W4 target.
const HEAP: &str = "heap-lazy";

/// The tolerances W3 runs at, in percent (0: the exact workload).
const W3_TOLERANCES: [u64; 3] = [0, 1, 5];
/// The tolerances W4 runs at.
const W4_TOLERANCES: [u64; 3] = [0, 1, 5];
/// The tolerances W2 runs at.
const W2_TOLERANCES: [u64; 2] = [0, 5];

/// The target for the wheel's W3 at 5 %, as a ratio to its exact W3.
const W3_TIME_TARGET: f64 = 0.5;
/// The target for the wheel's W4 at 5 %, as a ratio to the lazy heap's exact W4.
const W4_HEAP_TARGET: f64 = 0.7;

/// One measurement of the section.
#[derive(Clone, Debug)]
pub struct TolerantRow {
    /// `w2`, `w3` or `w4`.
    pub workload: &'static str,
    /// The structure.
    pub scheme: &'static SchemeInfo,
    /// Each timer's tolerance, in percent of its distance (0: exact).
    pub tolerance_percent: u64,
    /// What the measurement reported.
    pub outcome: Outcome,
}

impl TolerantRow {
    /// The row's case name in `results.json`: `w3 tolerance=5%`.
    pub fn case(&self) -> String {
        format!("{} tolerance={}%", self.workload, self.tolerance_percent)
    }
}

/// The structures of the section among `schemes`: the wheel, Linux's wheel, the lazy heap.
fn chosen(schemes: &[&'static SchemeInfo]) -> Vec<&'static SchemeInfo> {
    schemes
        .iter()
        .copied()
        .filter(|s| [WHEEL, LINUX, HEAP].contains(&s.name))
        .collect()
}

/// The section's measurements: (workload, structure, tolerance, task or why it is skipped).
fn plan(
    settings: &Settings,
    schemes: &[&'static SchemeInfo],
) -> Vec<(
    &'static str,
    &'static SchemeInfo,
    u64,
    Result<Task, &'static str>,
)> {
    let mut tasks = Vec::new();
    // The lazy heap takes no tolerance: it runs exact W4 only, the yardstick of the target.
    let tolerances = |scheme: &SchemeInfo, all: &'static [u64]| -> &'static [u64] {
        if scheme.name == HEAP {
            &all[..1]
        } else {
            all
        }
    };
    for &scheme in &chosen(schemes) {
        if scheme.name == HEAP {
            continue;
        }
        for &pct in &W3_TOLERANCES {
            let mut params = settings.w3(scheme);
            params.tolerance_percent = pct;
            tasks.push(("w3", scheme, pct, Ok(Task::W3 { scheme, params })));
        }
    }
    for &scheme in &chosen(schemes) {
        for &pct in tolerances(scheme, &W4_TOLERANCES) {
            let task = settings.w4(scheme).map(|mut params| {
                params.tolerance_percent = pct;
                Task::W4 { scheme, params }
            });
            tasks.push(("w4", scheme, pct, task));
        }
    }
    for &scheme in &chosen(schemes) {
        if scheme.name == HEAP {
            continue;
        }
        for &pct in &W2_TOLERANCES {
            let task = settings.w2(scheme).map(|mut params| {
                params.tolerance_percent = pct;
                Task::W2 { scheme, params }
            });
            tasks.push(("w2", scheme, pct, task));
        }
    }
    tasks
}

/// How many measurements the section runs, every round counted (for the progress bar).
pub fn jobs(settings: &Settings, schemes: &[&'static SchemeInfo]) -> usize {
    plan(settings, schemes)
        .iter()
        .filter(|t| t.3.is_ok())
        .count()
        * settings.rounds.max(1) as usize
}

/// Runs the section: the tables, and the verdicts on the wheel's targets when the wheel is
/// among `schemes` (against Linux's wheel and the lazy heap when they are too).
pub fn tolerant(
    settings: &Settings,
    schemes: &[&'static SchemeInfo],
    bar: &ProgressBar,
    failures: &mut usize,
) -> (Vec<TolerantRow>, String, Vec<Verdict>) {
    let planned = plan(settings, schemes);
    let tasks: Vec<Result<Task, &'static str>> = planned.iter().map(|t| t.3).collect();
    let outcomes = measure_tasks(bar, &tasks, settings.rounds, failures);
    let rows: Vec<TolerantRow> = planned
        .into_iter()
        .zip(outcomes)
        .map(
            |((workload, scheme, tolerance_percent, _), outcome)| TolerantRow {
                workload,
                scheme,
                tolerance_percent,
                outcome,
            },
        )
        .collect();
    let mut md = String::new();
    if rows.is_empty() {
        return (rows, md, Vec::new());
    }
    heading(
        &mut md,
        "## Tolerant timers: W3 and W4 with 1 % and 5 % of each timer's distance as its tolerance, W2 with 5 % of the retransmission timeout, beside the exact workloads",
    );
    for (workload, unit) in [("w3", "ns/timer"), ("w4", "ns/timer"), ("w2", "ns/step")] {
        let part: Vec<&TolerantRow> = rows.iter().filter(|r| r.workload == workload).collect();
        if part.is_empty() {
            continue;
        }
        let _ = writeln!(
            md,
            "\n### {}\n\n| structure | tolerance | {unit} median | min | max | fired | outside their window | cascades per timer |",
            workload.to_uppercase()
        );
        md.push_str("|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for r in part {
            let [median, min, max] = report::summary_cells(&r.outcome);
            let (fired, outside, cascades) = match &r.outcome {
                Outcome::Done(rep) => (
                    shown(rep.fired),
                    shown(rep.outside),
                    rep.cascades_per_timer
                        .map_or("n/a".into(), |c| format!("{c:.3}")),
                ),
                _ => ("".into(), "".into(), "".into()),
            };
            let _ = writeln!(
                md,
                "| {} | {} % | {median} | {min} | {max} | {fired} | {outside} | {cascades} |",
                r.scheme.row_name(),
                r.tolerance_percent
            );
        }
    }
    md.push_str(
        "\nA tolerance is a percentage of the timer's distance from its start; W3 then advances tick by tick up to the last window's end. \
         outside their window: firings after the timer's window ended (after its deadline for an exact run), judged at the tick (W2, W3) or the wake-up (W4) that fired it. \
         Linux's wheel takes no tolerance: its lateness is its level's, whatever the timer's window. \
         The lazy heap runs exact W4, the yardstick of the wheel's W4 target.\n",
    );
    let verdicts = judge(&rows);
    if !verdicts.is_empty() {
        md.push('\n');
        for v in &verdicts {
            let _ = writeln!(md, "- {}: {}", v.what, v.result);
        }
    }
    (rows, md, verdicts)
}

/// A count, or `n/a` when it was not measured.
fn shown(v: Option<u64>) -> String {
    v.map_or("n/a".into(), |v| v.to_string())
}

/// The report of one measurement of the section, when it ran.
fn find<'a>(
    rows: &'a [TolerantRow],
    workload: &str,
    name: &str,
    pct: u64,
) -> Option<&'a crate::runner::Report> {
    rows.iter()
        .find(|r| r.workload == workload && r.scheme.name == name && r.tolerance_percent == pct)
        .and_then(|r| match &r.outcome {
            Outcome::Done(rep) => Some(&**rep),
            _ => None,
        })
}

/// The median of one measurement of the section.
fn median(rows: &[TolerantRow], workload: &str, name: &str, pct: u64) -> Option<f64> {
    find(rows, workload, name, pct)
        .and_then(|rep| report::Summary::of(&rep.samples))
        .map(|s| s.median)
}

/// The verdicts on the wheel's targets for tolerant timers (those the run has the figures for).
fn judge(rows: &[TolerantRow]) -> Vec<Verdict> {
    let mut out = Vec::new();
    let cascades = |w: &str| find(rows, w, WHEEL, 5).and_then(|r| r.cascades_per_timer);
    if let (Some(w3), Some(w4)) = (cascades("w3"), cascades("w4")) {
        out.push(Verdict {
            what: "Wheel, cascades per timer at 5 % tolerance on W3 and W4 (target 0; exact W3 and W4 beside)".into(),
            result: format!(
                "W3 {w3:.3} (exact {}), W4 {w4:.3} (exact {}): {}",
                find(rows, "w3", WHEEL, 0)
                    .and_then(|r| r.cascades_per_timer)
                    .map_or("n/a".into(), |c| format!("{c:.3}")),
                find(rows, "w4", WHEEL, 0)
                    .and_then(|r| r.cascades_per_timer)
                    .map_or("n/a".into(), |c| format!("{c:.3}")),
                verdict(w3 == 0.0 && w4 == 0.0)
            ),
        });
    }
    if let (Some(t5), Some(t0)) = (median(rows, "w3", WHEEL, 5), median(rows, "w3", WHEEL, 0)) {
        let r = t5 / t0;
        out.push(Verdict {
            what: format!("Wheel, W3 at 5 % tolerance / exact W3 (target <= {W3_TIME_TARGET})"),
            result: format!("{r:.3}: {}", verdict(r <= W3_TIME_TARGET)),
        });
    }
    if let (Some(t5), Some(h)) = (median(rows, "w4", WHEEL, 5), median(rows, "w4", HEAP, 0)) {
        let r = t5 / h;
        out.push(Verdict {
            what: format!(
                "Wheel's W4 at 5 % tolerance / the lazy heap's exact W4 (target <= {W4_HEAP_TARGET})"
            ),
            result: format!("{r:.3}: {}", verdict(r <= W4_HEAP_TARGET)),
        });
    }
    let mut cases = Vec::new();
    let mut all = true;
    for (w, pcts) in [
        ("w3", &W3_TOLERANCES[1..]),
        ("w4", &W4_TOLERANCES[1..]),
        ("w2", &W2_TOLERANCES[1..]),
    ] {
        for &pct in pcts {
            let (Some(mine), Some(linux)) = (find(rows, w, WHEEL, pct), find(rows, w, LINUX, pct))
            else {
                continue;
            };
            let (Some(a), Some(b)) = (median(rows, w, WHEEL, pct), median(rows, w, LINUX, pct))
            else {
                continue;
            };
            let (o1, o2) = (mine.outside.unwrap_or(u64::MAX), linux.outside.unwrap_or(0));
            all &= a < b && o1 <= o2;
            cases.push(format!(
                "{} {pct} %: {:.2}x its time, {} against {} outside their window",
                w.to_uppercase(),
                a / b,
                shown(mine.outside),
                shown(linux.outside)
            ));
        }
    }
    if !cases.is_empty() {
        out.push(Verdict {
            what: "Wheel against Linux's wheel on the tolerant workloads (target: faster, with no more firings outside their window)".into(),
            result: format!("{}: {}", cases.join("; "), verdict(all)),
        });
    }
    out
}
