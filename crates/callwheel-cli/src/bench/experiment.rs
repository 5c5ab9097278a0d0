//! `bench` as an experiment: the chosen workloads on the chosen structures, each measurement in
//! its own child process under a progress bar, with their tables and figures (under the
//! experiment name `bench`, with the cases `repro` names them by); Table I as its own
//! experiment when asked for. `repro` measures the workloads in its own experiments, at its own
//! sizes: `family` (W1 and W3 on the scheme family) and `peers` (W1–W5 on the wheel and the
//! peers).

use std::fmt::Write as _;
use std::path::Path;

use callwheel_bench::plan::Settings;
use callwheel_bench::structure::{SchemeInfo, Workload};

use crate::registry::SCHEMES;
use callwheel_bench::sections;
use callwheel_bench::tolerant;
use callwheel_bench::workload::SEED;

use crate::experiment::{Experiment, Section, Size};

/// What a bench run measures.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The sizes and repetitions.
    pub settings: Settings,
    /// The structures, in registry order.
    pub schemes: Vec<&'static SchemeInfo>,
    /// The workloads, without repeats.
    pub workloads: Vec<Workload>,
    /// Table I's numbers of outstanding callouts, when [`Workload::Table1`] is among them.
    pub table1: Vec<u64>,
}

/// `bench`: the workloads on the structures.
pub struct Bench;

impl Experiment for Bench {
    type Plan = Plan;

    fn name(&self) -> &'static str {
        "bench"
    }

    fn about(&self) -> &'static str {
        "The workloads W1-W5 on every structure"
    }

    fn plan(&self, size: Size) -> Plan {
        // Full: the O(n)-start schemes also at the larger W1 sizes.
        let (settings, table1) = match size {
            Size::Tiny => (Settings::tiny(), crate::table1::TINY_SIZES.to_vec()),
            Size::Default => (Settings::standard(), crate::table1::SIZES.to_vec()),
            Size::Full => {
                let mut settings = Settings::standard();
                settings.full = true;
                (settings, crate::table1::SIZES.to_vec())
            }
        };
        Plan {
            settings,
            schemes: SCHEMES.iter().collect(),
            workloads: vec![
                Workload::W1,
                Workload::W2,
                Workload::W3,
                Workload::W4,
                Workload::W5,
                Workload::Tolerant,
                Workload::Table1,
            ],
            table1,
        }
    }

    fn run(&self, plan: &Plan, out: &Path) -> Section {
        let mut done = Section::default();
        let settings = &plan.settings;
        let runs = |w: Workload| plan.workloads.contains(&w);
        let plural = |n: u32| if n == 1 { "" } else { "s" };
        let _ = writeln!(
            done.markdown,
            "callwheel bench: {} repetition{} per measurement{}{}, SplitMix64 seed {SEED}, each measurement in its own process",
            settings.reps,
            plural(settings.reps),
            if runs(Workload::W4) && settings.w4_reps != settings.reps {
                format!(" (W4: {})", settings.w4_reps)
            } else {
                String::new()
            },
            if settings.rounds > 1 {
                format!(
                    " in each of {} rounds (the structures' order reversed every other round; the figures pool the rounds)",
                    settings.rounds
                )
            } else {
                String::new()
            }
        );
        let which: Vec<&str> = [
            (Workload::W1, "w1"),
            (Workload::W2, "w2"),
            (Workload::W3, "w3"),
            (Workload::W4, "w4"),
            (Workload::W5, "w5"),
        ]
        .iter()
        .filter(|(w, _)| runs(*w))
        .map(|&(_, name)| name)
        .collect();
        let tolerant_jobs = if runs(Workload::Tolerant) {
            tolerant::jobs(settings, &plan.schemes)
        } else {
            0
        };
        let bar =
            sections::progress_bar(sections::jobs(settings, &plan.schemes, &which) + tolerant_jobs);
        let schemes = &plan.schemes;
        let failures = &mut done.failures;
        let figures = &mut done.figures;
        let markdown = &mut done.markdown;
        if runs(Workload::W1) {
            let (rows, md) = sections::w1(settings, schemes, &bar, failures);
            markdown.push_str(&md);
            for r in &rows {
                figures.outcome("bench", r.scheme.name, &format!("w1 N={}", r.n), &r.outcome);
            }
        }
        if runs(Workload::W2) {
            let (rows, md) = sections::w2(settings, schemes, &bar, failures);
            markdown.push_str(&md);
            for r in &rows {
                figures.outcome("bench", r.scheme.name, "w2", &r.outcome);
            }
        }
        if runs(Workload::W3) {
            let (rows, md) = sections::w3(settings, schemes, &bar, failures);
            markdown.push_str(&md);
            for r in &rows {
                figures.outcome("bench", r.scheme.name, "w3", &r.outcome);
            }
        }
        if runs(Workload::W4) {
            let (rows, md) = sections::w4(settings, schemes, &bar, failures);
            markdown.push_str(&md);
            for r in &rows {
                figures.outcome("bench", r.scheme.name, "w4", &r.outcome);
            }
        }
        if runs(Workload::W5) {
            let (rows, md) = sections::w5(settings, schemes, &bar, failures);
            markdown.push_str(&md);
            for r in &rows {
                figures.outcome("bench", r.scheme.name, "w5", &r.outcome);
            }
        }
        if runs(Workload::Tolerant) {
            let (rows, md, verdicts) = tolerant::tolerant(settings, schemes, &bar, failures);
            markdown.push_str(&md);
            for r in &rows {
                figures.outcome("bench", r.scheme.name, &r.case(), &r.outcome);
            }
            for v in verdicts {
                done.findings.push(crate::experiment::Finding {
                    experiment: "bench",
                    what: v.what,
                    verdict: v.result,
                });
            }
        }
        bar.finish_and_clear();
        if runs(Workload::Table1) {
            let table1 = crate::table1::experiment::Plan {
                sizes: plan.table1.clone(),
                reps: settings.reps,
            };
            done.append(crate::table1::experiment::Table1.run(&table1, out));
        }
        done
    }
}
