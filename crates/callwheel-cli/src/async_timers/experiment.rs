//! The async timers as an experiment: callwheel-async against tokio's and async-io's timers,
//! sleep precision on three executors (with the log-log figure), coalescing on the real clock,
//! timeout churn and the sleep storm, with their figures and verdicts.

use std::fmt::Write as _;
use std::path::Path;

use super::measure::measure;
use super::plan::{AsyncArgs, AsyncPlan};
use super::render::render;
use super::verdicts::verdicts;
use crate::async_precision;
use callwheel_bench::sections;

use crate::experiment::{Experiment, Section, Size};

/// `async`: callwheel-async against tokio's and async-io's timers.
pub struct Async;

impl Experiment for Async {
    type Plan = AsyncPlan;

    fn name(&self) -> &'static str {
        "async"
    }

    fn about(&self) -> &'static str {
        "callwheel-async against tokio's and async-io's timers"
    }

    fn plan(&self, size: Size) -> AsyncPlan {
        let mut plan = AsyncArgs {
            sizes: crate::flags::Sizes {
                tiny: matches!(size, Size::Tiny),
                quick: matches!(size, Size::Default),
            },
            ..AsyncArgs::default()
        }
        .plan();
        if let Size::Default = size {
            // 50 samples: a p99 that is not simply the maximum, in about 8 s.
            plan.samples = 50;
        }
        plan
    }

    fn run(&self, plan: &AsyncPlan, out: &Path) -> Section {
        async_timers(plan, out)
    }
}

fn async_timers(plan: &AsyncPlan, out: &Path) -> Section {
    let mut done = Section::default();
    let _ = writeln!(
        done.markdown,
        "\n# Async timers: callwheel-async against tokio and async-io\n"
    );
    let bar = sections::progress_bar(plan.samples as usize);
    bar.set_message("async precision sweep, then churn and storms");
    let measured = measure(plan, &|| bar.inc(1));
    bar.finish_and_clear();
    let report = match measured {
        Ok(r) => r,
        Err(e) => {
            done.failed("async timers", e);
            return done;
        }
    };
    done.markdown.push_str(&render(&report));
    for c in &report.precision.cells {
        let case = format!("sleep {} us", c.request_us);
        for (metric, v) in [
            ("samples", c.actual.samples as u64),
            ("min_ns", c.actual.min),
            ("p50_ns", c.actual.p50),
            ("p99_ns", c.actual.p99),
        ] {
            done.figures
                .figure("async", c.source.name(), &case, metric, v as f64);
        }
    }
    for c in &report.coalescing {
        let case = format!("{} intervals at {} %", c.intervals, c.percent);
        for (metric, v) in [
            ("ticks", c.ticks),
            ("wakeups", c.wakeups),
            ("optimum", c.optimum),
            ("early", c.early),
            ("after_window", c.after_window),
            ("excess_p50_ns", c.excess_p50_ns),
        ] {
            done.figures.figure(
                "async",
                "callwheel_async::Interval",
                &case,
                metric,
                v as f64,
            );
        }
    }
    for c in &report.churn {
        let case = format!("churn {}, {} tasks", c.variant, c.tasks);
        let structure = format!("{} on {}", c.timer.name(), c.executor.name());
        done.figures
            .figure("async", &structure, &case, "ops_per_sec", c.ops_per_sec);
    }
    for s in &report.storms {
        let (ex, timer) = s.case.labels();
        let structure = format!("{timer} on {ex}");
        let case = format!("storm of {}", s.sleepers);
        done.figures
            .figure("async", &structure, &case, "register_s", s.register_s);
        done.figures.figure(
            "async",
            &structure,
            &case,
            "bytes_per_task",
            s.bytes_per_task,
        );
        if let Some(ms) = s.last_wake_after_ms {
            done.figures
                .figure("async", &structure, &case, "last_wake_after_ms", ms);
        }
    }
    for &(workers, tokio, callwheel) in &report.scaling.measured {
        let case = format!("start + cancel, {workers} workers");
        done.figures.figure(
            "async",
            "tokio::time::sleep",
            &case,
            "start_cancel_per_sec",
            tokio,
        );
        done.figures.figure(
            "async",
            "callwheel_async::sleep",
            &case,
            "start_cancel_per_sec",
            callwheel,
        );
    }
    done.markdown
        .push_str("\n| verdict | result |\n|---|---|\n");
    for v in verdicts(&report) {
        let _ = writeln!(done.markdown, "| {} | {} |", v.what, v.result);
        done.find("async", v.what, v.result);
    }
    let panels = async_precision::charts(&report.precision);
    done.plot_panels(
        async_precision::CHART_TITLE,
        &panels,
        out,
        "async-precision",
    );
    done
}
