//! The verdicts of `callwheel async` against its targets, and the figures they read.

use super::churn::Timer;
use super::measure::AsyncReport;
use super::storm::{StormCase, StormResult};
use crate::async_precision;
use callwheel_bench::verdict::{verdict, Verdict};

fn cell(report: &AsyncReport, variant: char, tasks: u64, timer: Timer) -> f64 {
    report
        .churn
        .iter()
        .find(|c| c.variant == variant && c.tasks == tasks && c.timer == timer)
        .map_or(0.0, |c| c.ops_per_sec)
}

/// The churn figures of (tokio, async-io, callwheel) for one variant and task count.
pub(super) fn cells(report: &AsyncReport, variant: char, tasks: u64) -> (f64, f64, f64) {
    (
        cell(report, variant, tasks, Timer::Tokio),
        cell(report, variant, tasks, Timer::AsyncIo),
        cell(report, variant, tasks, Timer::Callwheel),
    )
}

pub(super) fn storm(report: &AsyncReport, case: StormCase) -> Option<&StormResult> {
    report.storms.iter().find(|s| s.case == case)
}

/// The verdicts against the targets: (what, figures and "met" or "missed").
pub fn verdicts(report: &AsyncReport) -> Vec<Verdict> {
    let mut out: Vec<Verdict> = async_precision::verdicts(&report.precision)
        .into_iter()
        .map(|v| Verdict {
            what: format!("precision: {}", v.what),
            result: v.result,
        })
        .collect();
    for c in &report.coalescing {
        if c.percent == 0 {
            continue;
        }
        out.push(Verdict {
            what: format!(
                "coalescing, {} intervals at {} %: wake-ups <= 1.05 x optimum",
                c.intervals, c.percent
            ),
            result: format!(
                "{} against {} ({:.3}x): {}",
                c.wakeups,
                c.optimum,
                c.ratio(),
                verdict(c.ratio() <= 1.05)
            ),
        });
        out.push(Verdict {
            what: format!(
                "coalescing, {} intervals at {} %: every tick inside its window",
                c.intervals, c.percent
            ),
            result: format!(
                "{} of {} ticks fired early, {} after their window (median {:.1} us, at most {:.1} us after): {}",
                c.early,
                c.ticks,
                c.after_window,
                c.excess_p50_ns as f64 / 1e3,
                c.excess_max_ns as f64 / 1e3,
                verdict(c.early == 0 && c.after_window == 0)
            ),
        });
    }
    for variant in ['A', 'B'] {
        for &tasks in &report.plan.tasks {
            let (t, a, c) = cells(report, variant, tasks);
            let (vt, va) = (c / t.max(1.0), c / a.max(1.0));
            let (target, met) = if variant == 'A' {
                ("no slower than tokio or async-io", vt >= 1.0 && va >= 1.0)
            } else {
                (">= 2x tokio and >= async-io", vt >= 2.0 && va >= 1.0)
            };
            out.push(Verdict {
                what: format!("churn {variant}, {tasks} tasks: {target}"),
                result: format!("{vt:.2}x tokio, {va:.2}x async-io: {}", verdict(met)),
            });
        }
    }
    if let (Some(tt), Some(tc)) = (
        storm(report, StormCase::TokioTokio),
        storm(report, StormCase::TokioCallwheel),
    ) {
        let ratio = tt.register_s / tc.register_s.max(1e-9);
        out.push(Verdict {
            what: "storm on tokio: registration >= 2x faster than tokio's".into(),
            result: format!("{ratio:.2}x: {}", verdict(ratio >= 2.0)),
        });
        if let Some(floor) = storm(report, StormCase::TokioNone) {
            // What spawning and first polls cost with no timer bounds every timer's ratio.
            let timer_share =
                |r: &StormResult| (r.register_s - floor.register_s) / r.sleepers as f64;
            out.push(Verdict {
                what: "storm on tokio: the timers' own registration cost (less the no-timer floor), no target".into(),
                result: format!(
                    "tokio {:.0} ns, callwheel {:.0} ns per task; with a free timer the ratio could reach at most {:.2}x",
                    timer_share(tt) * 1e9,
                    timer_share(tc) * 1e9,
                    tt.register_s / floor.register_s.max(1e-9)
                ),
            });
            out.push(Verdict {
                what: "storm on tokio: the timers' own bytes per task (less the floor), no target"
                    .into(),
                result: format!(
                    "tokio {:.0}, callwheel {:.0}",
                    tt.bytes_per_task - floor.bytes_per_task,
                    tc.bytes_per_task - floor.bytes_per_task
                ),
            });
        }
        out.push(Verdict {
            what: "storm on tokio: bytes per task <= tokio's own timer".into(),
            result: format!(
                "{:.0} against {:.0}: {}",
                tc.bytes_per_task,
                tt.bytes_per_task,
                verdict(tc.bytes_per_task <= tt.bytes_per_task)
            ),
        });
    }
    if let (Some(sa), Some(sc)) = (
        storm(report, StormCase::SmolAsyncIo),
        storm(report, StormCase::SmolCallwheel),
    ) {
        out.push(Verdict {
            what: "storm on smol: bytes per task <= async-io's own timer".into(),
            result: format!(
                "{:.0} against {:.0}: {}",
                sc.bytes_per_task,
                sa.bytes_per_task,
                verdict(sc.bytes_per_task <= sa.bytes_per_task)
            ),
        });
    }
    out
}
