//! The verdicts of `callwheel async` against its targets, and the figures they read.

use super::churn::{Executor, Timer};
use super::measure::AsyncReport;
use super::storm::{StormCase, StormResult};
use crate::async_precision;
use callwheel_bench::verdict::{verdict, Verdict};

/// Timeouts per second of one churn cell (0 when it was not measured).
pub(super) fn cell(
    report: &AsyncReport,
    executor: Executor,
    variant: char,
    tasks: u64,
    timer: Timer,
) -> f64 {
    report
        .churn
        .iter()
        .find(|c| {
            c.executor == executor && c.variant == variant && c.tasks == tasks && c.timer == timer
        })
        .map_or(0.0, |c| c.ops_per_sec)
}

/// How close to its executor's floor a timer's churn comes, at which the timer costs (almost)
/// nothing: within 10 %.
const NEAR_FLOOR: f64 = 0.9;

/// The churn verdicts of one variant and task count: on tokio against tokio's timer,
/// pingora-timeout's and async-io's; on smol against async-io's; or near the executor's floor,
/// where the executor itself cannot go faster.
fn churn_verdicts(report: &AsyncReport, variant: char, tasks: u64, out: &mut Vec<Verdict>) {
    let on = |executor, timer| cell(report, executor, variant, tasks, timer).max(1.0);
    let cw_t = on(Executor::Tokio, Timer::Callwheel);
    let cw_s = on(Executor::Smol, Timer::Callwheel);
    let (floor_t, floor_s) = (
        on(Executor::Tokio, Timer::None),
        on(Executor::Smol, Timer::None),
    );
    let tokio = cw_t / on(Executor::Tokio, Timer::Tokio);
    let pingora = cw_t / on(Executor::Tokio, Timer::Pingora);
    let io_t = cw_t / on(Executor::Tokio, Timer::AsyncIo);
    let io_s = cw_s / on(Executor::Smol, Timer::AsyncIo);
    let (of_floor_t, of_floor_s) = (cw_t / floor_t, cw_s / floor_s);
    if variant == 'A' {
        let best = tokio.min(io_t);
        out.push(Verdict {
            what: format!("churn A, {tasks} tasks, on tokio: >= 1.8x the better of tokio's timer and async-io's"),
            result: format!("{tokio:.2}x tokio, {io_t:.2}x async-io ({pingora:.2}x pingora; {of_floor_t:.2} of the floor): {}", verdict(best >= 1.8)),
        });
        out.push(Verdict {
            what: format!("churn A, {tasks} tasks, on smol: >= 1.8x async-io's timer"),
            result: format!(
                "{io_s:.2}x async-io ({of_floor_s:.2} of the floor): {}",
                verdict(io_s >= 1.8)
            ),
        });
    } else {
        let ahead = tokio >= 2.0 && pingora >= 1.5;
        out.push(Verdict {
            what: format!("churn B, {tasks} tasks, on tokio: >= 2x tokio's timer and >= 1.5x pingora's, or within 10 % of the floor"),
            result: format!("{tokio:.2}x tokio, {pingora:.2}x pingora, {of_floor_t:.2} of the floor: {}", verdict(ahead || of_floor_t >= NEAR_FLOOR)),
        });
        out.push(Verdict {
            what: format!("churn B, {tasks} tasks, on smol: >= 2x async-io's timer, or within 10 % of the floor"),
            result: format!("{io_s:.2}x async-io, {of_floor_s:.2} of the floor: {}", verdict(io_s >= 2.0 || of_floor_s >= NEAR_FLOOR)),
        });
    }
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
                "coalescing, {} intervals at {} %: no tick early, >= 99.5 % of ticks inside their window",
                c.intervals, c.percent
            ),
            result: format!(
                "{} of {} ticks fired early, {} after their window ({:.2} % inside; median {:.1} us, at most {:.1} us after): {}",
                c.early,
                c.ticks,
                c.after_window,
                100.0 * c.ticks.saturating_sub(c.early + c.after_window) as f64
                    / c.ticks.max(1) as f64,
                c.excess_p50_ns as f64 / 1e3,
                c.excess_max_ns as f64 / 1e3,
                verdict(c.early == 0 && c.after_window * 1_000 <= c.ticks * 5)
            ),
        });
    }
    for variant in ['A', 'B'] {
        for &tasks in &report.plan.tasks {
            churn_verdicts(report, variant, tasks, &mut out);
        }
    }
    for (own, cw, floor, executor) in [
        (
            StormCase::TokioTokio,
            StormCase::TokioCallwheel,
            StormCase::TokioNone,
            "tokio",
        ),
        (
            StormCase::SmolAsyncIo,
            StormCase::SmolCallwheel,
            StormCase::SmolNone,
            "smol",
        ),
    ] {
        let (Some(own), Some(cw)) = (storm(report, own), storm(report, cw)) else {
            continue;
        };
        let ratio = own.register_s / cw.register_s.max(1e-9);
        // A timer cannot make spawning cheaper than spawning with no timer: a case that ran
        // faster than its floor measured the machine's noise, and judges nothing.
        let below_floor = storm(report, floor).filter(|f| cw.register_s < f.register_s);
        out.push(Verdict {
            what: format!(
                "storm on {executor}: registration >= 1.5x faster than the executor's own timer"
            ),
            result: match below_floor {
                Some(f) => format!(
                    "{ratio:.2}x, but faster than the no-timer floor ({:.3} s against {:.3} s): noise, inconclusive",
                    cw.register_s, f.register_s
                ),
                None => format!("{ratio:.2}x: {}", verdict(ratio >= 1.5)),
            },
        });
        let bytes = cw.bytes_per_task / own.bytes_per_task.max(1.0);
        out.push(Verdict {
            what: format!("storm on {executor}: bytes per task <= 0.9x the executor's own timer's"),
            result: if cw.bytes_per_task <= 0.0 || own.bytes_per_task <= 0.0 {
                // A storm too small to move the resident set measures nothing.
                format!(
                    "{:.0} against {:.0}: no memory measured, inconclusive",
                    cw.bytes_per_task, own.bytes_per_task
                )
            } else {
                format!(
                    "{:.0} against {:.0} ({bytes:.2}x): {}",
                    cw.bytes_per_task,
                    own.bytes_per_task,
                    verdict(bytes <= 0.9)
                )
            },
        });
        if let Some(floor) = storm(report, floor) {
            // What spawning and first polls cost with no timer bounds every timer's ratio.
            let timer_share =
                |r: &StormResult| (r.register_s - floor.register_s) / r.sleepers as f64;
            out.push(Verdict {
                what: format!("storm on {executor}: the timers' own cost (less the no-timer floor), no target"),
                result: format!(
                    "registration: the executor's timer {:.0} ns, callwheel {:.0} ns per task (a free timer could reach at most {:.2}x); bytes: the executor's timer {:.0}, callwheel {:.0} per task",
                    timer_share(own) * 1e9,
                    timer_share(cw) * 1e9,
                    own.register_s / floor.register_s.max(1e-9),
                    own.bytes_per_task - floor.bytes_per_task,
                    cw.bytes_per_task - floor.bytes_per_task
                ),
            });
        }
    }
    out
}
