//! The wheel's wake-ups against the optimal stabbing number as tolerance grows (W5).

use std::fmt::Write as _;
use std::path::Path;

use callwheel_bench::report::Outcome;
use callwheel_bench::runner::Task;
use callwheel_bench::sections;
use callwheel_bench::workload::W5Params;

use crate::experiment::{Experiment, Section, Size};
use crate::registry;
use callwheel_bench::plots::{Chart, Series};

/// What a coalescing run measures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Timers per W5 run.
    pub timers: u64,
    /// The tolerances, in per cent of each deadline: one W5 run each.
    pub tolerances: Vec<u64>,
}

/// `coalescing`: Wake-ups against the optimum as tolerance grows.
pub struct Coalescing;

impl Experiment for Coalescing {
    type Plan = Plan;

    fn name(&self) -> &'static str {
        "coalescing"
    }

    fn about(&self) -> &'static str {
        "Wake-ups against the optimum as tolerance grows"
    }

    fn plan(&self, size: Size) -> Plan {
        let (timers, tolerances) = match size {
            Size::Tiny => (2_000, vec![1, 5]),
            Size::Default => (100_000, vec![1, 2, 5, 10, 20, 50]),
            Size::Full => (100_000, vec![1, 2, 5, 10, 20, 50, 100]),
        };
        Plan { timers, tolerances }
    }

    fn run(&self, plan: &Plan, out: &Path) -> Section {
        coalescing(plan, out)
    }
}

fn coalescing(plan: &Plan, out: &Path) -> Section {
    let mut done = Section::default();
    let Some(wheel) = registry::find("wheel") else {
        done.failures = 1;
        return done;
    };
    let Plan { timers, tolerances } = plan;
    let timers = *timers;
    let bar = sections::progress_bar(tolerances.len());
    let mut rows = Vec::new();
    for &pct in tolerances {
        let task = Task::W5 {
            scheme: wheel,
            params: W5Params {
                timers,
                ticks: callwheel_bench::plan::W5_TICKS,
                tolerance_percent: pct,
                reps: 1,
            },
        };
        let outcome = sections::measure(&bar, &task, &mut done.failures);
        if let Outcome::Done(r) = &outcome {
            if let Some(t) = &r.tolerant {
                rows.push((
                    pct,
                    t.wakeups,
                    t.optimum,
                    t.violations,
                    r.wakeups,
                    r.optimum,
                ));
            }
        }
    }
    bar.finish_and_clear();
    let md = &mut done.markdown;
    let _ = writeln!(
        md,
        "\n## Coalescing: the wheel's wake-ups against the optimum\n"
    );
    let _ = writeln!(
        md,
        "{timers} timers with deadlines d in [1, {}), window [d, d + d * tolerance / 100]; the driver wakes at `next_wakeup()` and advances there until the wheel is empty. Optimum: the fewest instants stabbing every window (greedy by window end).\n",
        callwheel_bench::plan::W5_TICKS
    );
    let _ = writeln!(
        md,
        "| tolerance | wake-ups | optimum | ratio | outside window |"
    );
    let _ = writeln!(md, "|---:|---:|---:|---:|---:|");
    if let Some(&(_, _, _, _, Some(w0), Some(o0))) = rows.first() {
        let _ = writeln!(
            md,
            "| 0 % | {w0} | {o0} | {:.3} | 0 |",
            w0 as f64 / o0.max(1) as f64
        );
    }
    for &(pct, w, o, v, _, _) in &rows {
        let _ = writeln!(
            md,
            "| {pct} % | {w} | {o} | {:.3} | {v} |",
            w as f64 / o.max(1) as f64
        );
    }
    let mut wake = Vec::new();
    let mut opt = Vec::new();
    for &(pct, w, o, _, _, _) in &rows {
        wake.push((pct as f64, w as f64));
        opt.push((pct as f64, o as f64));
        done.figures.figure(
            "coalescing",
            "wheel",
            &format!("tolerance {pct}%"),
            "wakeups",
            w as f64,
        );
        done.figures.figure(
            "coalescing",
            "wheel",
            &format!("tolerance {pct}%"),
            "optimum",
            o as f64,
        );
    }
    if let Some(&(pct, w, o, v, _, _)) = rows.iter().find(|r| r.0 == 5) {
        let ratio = w as f64 / o.max(1) as f64;
        done.find(
            "coalescing",
            format!("wake-ups / optimum at {pct} % tolerance"),
            format!(
                "{w} / {o} = {ratio:.3}, {v} outside their window: {}",
                if ratio <= 1.05 && v == 0 {
                    "met (<= 1.05)"
                } else {
                    "missed"
                }
            ),
        );
    }
    done.plot(
        &Chart {
            title: "Coalescing: wake-ups against tolerance".into(),
            x_desc: "tolerance, % of the timer's interval".into(),
            y_desc: "wake-ups (advance calls)".into(),
            log_x: true,
            log_y: true,
            series: vec![
                Series {
                    label: "wheel, driven by next_wakeup()".into(),
                    points: wake,
                    reference: false,
                },
                Series {
                    label: "optimum (minimum stabbing)".into(),
                    points: opt,
                    reference: true,
                },
            ],
            legend_right: true,
            legend_bottom: false,
        },
        out,
        "coalescing",
    );
    done
}
