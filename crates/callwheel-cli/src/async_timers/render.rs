//! `callwheel async` as Markdown tables.

use super::churn::Timer;
use super::measure::AsyncReport;
use super::verdicts::cells;
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
        "\n## Timeout churn: timeouts per second ({} per measurement), tokio multi-thread runtime with 2 workers\n",
        report.plan.ops
    );
    let _ = writeln!(
        out,
        "A: the future is ready at once; B: it is pending once before it completes. The timeout is 1 s (it never fires).\n"
    );
    let _ = writeln!(
        out,
        "| variant | tasks | {} | {} | {} | callwheel / tokio | callwheel / async-io |",
        Timer::Tokio.name(),
        Timer::AsyncIo.name(),
        Timer::Callwheel.name()
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    for variant in ['A', 'B'] {
        for &tasks in &report.plan.tasks {
            let (t, a, c) = cells(report, variant, tasks);
            let _ = writeln!(
                out,
                "| {variant} | {tasks} | {:.2} M/s | {:.2} M/s | {:.2} M/s | {:.2} | {:.2} |",
                t / 1e6,
                a / 1e6,
                c / 1e6,
                c / t.max(1.0),
                c / a.max(1.0)
            );
        }
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
