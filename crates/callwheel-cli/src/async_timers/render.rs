//! `callwheel async` as Markdown tables.

use super::churn::{Executor, Timer};
use super::measure::AsyncReport;
use super::verdicts::cell;
use crate::async_precision;

/// The report as Markdown (without the verdicts: see [`verdicts`](super::verdicts::verdicts)).
pub fn render(report: &AsyncReport) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Precision: requested against actual sleep on three executors"
    );
    out.push_str(&async_precision::render(&report.precision));
    let _ = writeln!(
        out,
        "\n## Coalescing: intervals on the real clock, one driver, their wake-ups against the optimum\n"
    );
    let _ = writeln!(
        out,
        "| intervals | tolerance | run ms | ticks | wake-ups | optimum | wake-ups / optimum | fired early | fired after window | median excess us | max excess us | task ran after window | its median excess us |"
    );
    let _ = writeln!(
        out,
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for c in &report.coalescing {
        let _ = writeln!(
            out,
            "| {} | {} % | {} | {} | {} | {} | {:.3} | {} | {} | {:.1} | {:.1} | {} | {:.1} |",
            c.intervals,
            c.percent,
            c.run_ms,
            c.ticks,
            c.wakeups,
            c.optimum,
            c.ratio(),
            c.early,
            c.after_window,
            c.excess_p50_ns as f64 / 1e3,
            c.excess_max_ns as f64 / 1e3,
            c.seen_after_window,
            c.seen_excess_p50_ns as f64 / 1e3
        );
    }
    let _ = writeln!(
        out,
        "\n## Timeout churn: timeouts per second ({} per measurement)\n",
        report.plan.ops
    );
    let _ = writeln!(
        out,
        "A: the future is ready at once; B: it is pending once before it completes. The timeout is 1 s (it never fires). The floor is the same loop awaiting the future with no timer.\n"
    );
    for (executor, timers) in [
        (
            Executor::Tokio,
            &[
                Timer::None,
                Timer::Tokio,
                Timer::Pingora,
                Timer::AsyncIo,
                Timer::Callwheel,
            ][..],
        ),
        (
            Executor::Smol,
            &[Timer::None, Timer::AsyncIo, Timer::Callwheel][..],
        ),
    ] {
        let _ = writeln!(out, "On {}:\n", executor.name());
        let names: Vec<&str> = timers.iter().map(|t| t.name()).collect();
        let _ = writeln!(
            out,
            "| variant | tasks | {} | callwheel / each timer | callwheel / floor |",
            names.join(" | ")
        );
        let _ = writeln!(out, "|---|---:|{}---|---:|", "---:|".repeat(timers.len()));
        for variant in ['A', 'B'] {
            for &tasks in &report.plan.tasks {
                let at = |t| cell(report, executor, variant, tasks, t);
                let cw = at(Timer::Callwheel);
                let figures: Vec<String> = timers
                    .iter()
                    .map(|&t| format!("{:.2} M/s", at(t) / 1e6))
                    .collect();
                let ratios: Vec<String> = timers
                    .iter()
                    .filter(|&&t| t != Timer::None && t != Timer::Callwheel)
                    .map(|&t| format!("{:.2}", cw / at(t).max(1.0)))
                    .collect();
                let _ = writeln!(
                    out,
                    "| {variant} | {tasks} | {} | {} | {:.2} |",
                    figures.join(" | "),
                    ratios.join(" / "),
                    cw / at(Timer::None).max(1.0)
                );
            }
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "\n## Sleep storm: {} tasks each sleeping until a deadline drawn over {} ms\n",
        report.plan.sleepers, report.plan.span_ms
    );
    let _ = writeln!(
        out,
        "| executor | timer | spawn + register s | resident bytes per task | last wake-up after the last deadline ms |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|");
    for s in &report.storms {
        let (ex, timer) = s.case.labels();
        let _ = writeln!(
            out,
            "| {ex} | {timer} | {:.3} | {:.0} | {} |",
            s.register_s,
            s.bytes_per_task,
            s.last_wake_after_ms
                .map_or_else(|| "–".to_string(), |ms| format!("{ms:.2}"))
        );
    }
    out.push_str(&super::scaling::render(&report.scaling));
    out
}
