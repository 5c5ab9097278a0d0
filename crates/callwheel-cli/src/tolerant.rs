//! Tolerant timers: W3 and W4 with 1 % and 5 % of each timer's distance as its tolerance, W2
//! with 5 %, beside the exact workloads, on the production wheel, Linux's non-cascading wheel
//! and the lazy heap, with the wheel's targets for tolerant timers.

use std::path::Path;

use callwheel_bench::plan::Settings;
use callwheel_bench::structure::SchemeInfo;

use crate::registry;
use callwheel_bench::{sections, tolerant};

use crate::experiment::{Experiment, Section, Size};

/// `tolerant`: the tolerant workloads beside the exact ones.
pub struct Tolerant;

impl Experiment for Tolerant {
    type Plan = Settings;

    fn name(&self) -> &'static str {
        "tolerant"
    }

    fn about(&self) -> &'static str {
        "Tolerant timers: W2–W4 with tolerances beside the exact ones, the wheel against Linux's wheel"
    }

    /// The sizes of the `peers` experiment, whose W2–W4 these are with tolerances.
    fn plan(&self, size: Size) -> Settings {
        crate::peers::Peers.plan(size)
    }

    fn run(&self, settings: &Settings, _out: &Path) -> Section {
        let mut done = Section::default();
        let schemes: Vec<&'static SchemeInfo> = ["wheel", "linux-wheel", "heap-lazy"]
            .iter()
            .filter_map(|n| registry::find(n))
            .collect();
        let bar = sections::progress_bar(tolerant::jobs(settings, &schemes));
        let (rows, md, verdicts) = tolerant::tolerant(settings, &schemes, &bar, &mut done.failures);
        bar.finish_and_clear();
        done.markdown.push_str(&md);
        for r in &rows {
            done.figures
                .outcome("tolerant", r.scheme.name, &r.case(), &r.outcome);
        }
        for v in verdicts {
            done.find("tolerant", v.what, v.result);
        }
        done
    }
}
