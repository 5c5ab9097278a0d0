//! The stress run as an experiment: `start` latency while a mass expiry runs, the count check
//! and the throughput from one and two threads, with their figures and verdicts.

use std::fmt::Write as _;
use std::path::Path;

use callwheel_bench::sections;

use super::measure::measure;
use super::plan::{Plan, StressArgs};
use super::render::{count_verdict, render, start_verdict};
use crate::experiment::{Experiment, Section, Size};

/// `stress`: `start` latency during a mass expiry, and the count check.
pub struct Stress;

impl Experiment for Stress {
    type Plan = Plan;

    fn name(&self) -> &'static str {
        "stress"
    }

    fn about(&self) -> &'static str {
        "`start` latency during a mass expiry, and the count check"
    }

    fn plan(&self, size: Size) -> Plan {
        let mut plan = StressArgs {
            threads: 2,
            sizes: crate::flags::Sizes {
                tiny: matches!(size, Size::Tiny),
                quick: matches!(size, Size::Default),
            },
            ..StressArgs::default()
        }
        .plan();
        if let Size::Default = size {
            plan.duration_ms = 300;
        }
        plan
    }

    fn run(&self, plan: &Plan, _out: &Path) -> Section {
        stress(plan)
    }
}

fn stress(plan: &Plan) -> Section {
    let mut done = Section::default();
    let _ = writeln!(
        done.markdown,
        "\n## Stress: `start` latency while a mass expiry runs\n"
    );
    let bar = sections::progress_bar(0);
    let measured = measure(plan, &bar);
    bar.finish_and_clear();
    let report = match measured {
        Ok(r) => r,
        Err(e) => {
            done.failed("stress", e);
            return done;
        }
    };
    done.markdown.push_str(&render(&report));
    if !report.counts.ok() {
        eprintln!(
            "error: stress: count check failed: {}",
            count_verdict(&report)
        );
        done.failures += 1;
    }
    for (case, l) in [
        ("start during mass expiry", &report.start_during),
        ("start whole run", &report.start_all),
        ("stop whole run", &report.stop_all),
    ] {
        for (metric, v) in [
            ("calls", l.calls),
            ("p50_ns", l.p50),
            ("p99_ns", l.p99),
            ("p999_ns", l.p999),
            ("max_ns", l.max),
        ] {
            done.figures
                .figure("stress", "callwheel-rt", case, metric, v as f64);
        }
    }
    let mass = format!("mass expiry of {} timers", report.plan.timers);
    let c = &report.counts;
    for (metric, v) in [
        ("expiry_ns", report.expiry_ns as f64),
        ("first_late_ns", report.first_late_ns as f64),
        ("budget_yields", report.budget_yields as f64),
        ("bytes_per_timer", report.bytes_per_timer()),
        ("rss_peak_kib", report.rss_peak_kib as f64),
        ("mass_fired", c.mass_fired as f64),
        ("mass_cancelled", c.mass_cancelled as f64),
        ("mass_lost", c.mass_lost as f64),
        ("mass_wrong", c.mass_wrong as f64),
        ("churn_armings", c.churn_armings as f64),
        ("churn_wrong", c.churn_wrong as f64),
    ] {
        done.figures
            .figure("stress", "callwheel-rt", &mass, metric, v);
    }
    done.find(
        "stress",
        format!(
            "start p99 during a mass expiry of {} timers, {} threads (target < 50 us at 1e6)",
            report.plan.timers, report.plan.threads
        ),
        start_verdict(&report),
    );
    for r in &report.scaling.runs {
        let case = format!("{} threads, start/stop/re-arm", r.threads);
        done.figures.figure(
            "stress",
            "callwheel-rt",
            &case,
            "ops_per_sec",
            r.ops_per_sec(),
        );
    }
    done.figures.figure(
        "stress",
        "callwheel-rt",
        "start/stop/re-arm, 2 threads over 1",
        "speedup",
        report.scaling.speedup,
    );
    done.find(
        "stress",
        "start/stop/re-arm calls per second, 1 to 2 threads on a 2-shard runtime".into(),
        format!(
            "{:.2} M/s from 1 thread, {:.2} M/s from 2: {:.2}x ({} CPUs)",
            report.scaling.runs[0].ops_per_sec() / 1e6,
            report.scaling.runs[1].ops_per_sec() / 1e6,
            report.scaling.speedup,
            report.cpus
        ),
    );
    done.find(
        "stress",
        "every timer fired exactly once or was stopped".into(),
        count_verdict(&report),
    );
    done.find(
        "stress",
        format!("mass expiry of {} timers", report.plan.timers),
        format!(
            "{:.1} ms, first callback {:.1} us late; {:.0} bytes resident per timer",
            report.expiry_ns as f64 / 1e6,
            report.first_late_ns as f64 / 1e3,
            report.bytes_per_timer()
        ),
    );
    done
}
