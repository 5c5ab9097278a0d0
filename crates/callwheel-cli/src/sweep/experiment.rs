//! The sweep as an experiment: calloutng's Figures 4–7 (requested against actual sleep) and
//! the wake-ups at 0 % and 5 % tolerance, with their figures, verdicts and plot.

use std::fmt::Write as _;
use std::path::Path;

use callwheel_bench::sections;

use super::chart::{charts, CHART_TITLE};
use super::measure::measure;
use super::plan::{Plan, SweepArgs};
use super::render::render;
use super::verdicts::verdicts;
use crate::experiment::{Experiment, Section, Size};

/// `sweep`: Requested against actual sleep, and the runtime's wake-ups with and without tolerance.
pub struct Sweep;

impl Experiment for Sweep {
    type Plan = Plan;

    fn name(&self) -> &'static str {
        "sweep"
    }

    fn about(&self) -> &'static str {
        "Requested against actual sleep, and the runtime's wake-ups with and without tolerance"
    }

    fn plan(&self, size: Size) -> Plan {
        let mut plan = SweepArgs {
            sizes: crate::flags::Sizes {
                tiny: matches!(size, Size::Tiny),
                quick: matches!(size, Size::Default),
            },
            ..SweepArgs::default()
        }
        .plan();
        if let Size::Default = size {
            // 100 samples: the nearest-rank p99 of fewer is the maximum.
            plan.samples = 100;
        }
        if let Size::Full = size {
            // The idle-runtime check: 1,000 timers spread over 10 s.
            plan.samples = 200;
            plan.span_ms = 10_000;
            plan.idle_ms = 1_000;
        }
        plan
    }

    fn run(&self, plan: &Plan, out: &Path) -> Section {
        sweep(plan, out)
    }
}

fn sweep(plan: &Plan, out: &Path) -> Section {
    let mut done = Section::default();
    let _ = writeln!(
        done.markdown,
        "\n## Sweep: requested against actual sleep (calloutng Figures 4–7), and the runtime's wake-ups\n"
    );
    let bar = sections::progress_bar(0);
    let measured = measure(plan, &bar);
    bar.finish_and_clear();
    let report = match measured {
        Ok(r) => r,
        Err(e) => {
            done.failed("sweep", e);
            return done;
        }
    };
    done.markdown.push_str(&render(&report));
    if !report.counts_ok() {
        eprintln!("error: sweep: a batch timer did not fire exactly once inside its window");
        done.failures += 1;
    }
    for c in &report.cells {
        let case = format!("request {} us", c.request_us);
        for (metric, v) in [
            ("samples", c.actual.samples as u64),
            ("min_ns", c.actual.min),
            ("avg_ns", c.actual.avg),
            ("p50_ns", c.actual.p50),
            ("p99_ns", c.actual.p99),
        ] {
            done.figures
                .figure("sweep", c.source.name(), &case, metric, v as f64);
        }
    }
    for b in &report.batches {
        let case = format!(
            "batch {} timers, tolerance {}%",
            b.timers, b.tolerance_percent
        );
        for (metric, v) in [
            ("wakeups", b.wakeups),
            ("optimum", b.optimum),
            ("early_wakeups", b.early_wakeups),
            ("fired", b.fired),
            ("before_deadline", b.before_deadline),
            ("after_window", b.after_window),
            ("inside", b.inside()),
            ("excess_p50_ns", b.excess_p50_ns),
            ("excess_p99_ns", b.excess_p99_ns),
            ("lateness_p50_ns", b.lateness_p50_ns),
        ] {
            done.figures
                .figure("sweep", "callwheel-rt", &case, metric, v as f64);
        }
    }
    done.figures.figure(
        "sweep",
        "callwheel-rt",
        &format!("idle {} ms", report.idle.ms),
        "wakeups",
        report.idle.wakeups as f64,
    );
    for v in verdicts(&report) {
        done.find("sweep", v.what, v.result);
    }
    let panels = charts(&report);
    done.plot_panels(CHART_TITLE, &panels, out, "sweep");
    done
}
