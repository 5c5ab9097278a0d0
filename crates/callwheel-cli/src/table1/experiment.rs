//! Table I as an experiment: the measurement at the plan's sizes, its table, verdicts, plots
//! and figures.

use std::path::Path;

use super::{figures, section, verdicts, SIZES, TINY_SIZES};
use crate::experiment::{Experiment, Section, Size};

/// What a Table I run measures.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The numbers of outstanding callouts, each at most [`MAX_N`](super::MAX_N).
    pub sizes: Vec<u64>,
    /// Repetitions per measurement.
    pub reps: u32,
}

/// `table1`: Table I and Figure 8, old callout against new.
pub struct Table1;

impl Experiment for Table1 {
    type Plan = Plan;

    fn name(&self) -> &'static str {
        "table1"
    }

    fn about(&self) -> &'static str {
        "Table I / Figure 8 through the callout interfaces"
    }

    fn plan(&self, size: Size) -> Plan {
        let (sizes, reps) = match size {
            Size::Tiny => (TINY_SIZES.to_vec(), 1),
            Size::Default => (vec![0, 200, 400, 600, 800, 1000, 10_000, 100_000], 3),
            Size::Full => (SIZES.to_vec(), 5),
        };
        Plan { sizes, reps }
    }

    fn run(&self, plan: &Plan, out: &Path) -> Section {
        let mut done = Section::default();
        let (rows, md) = section(&plan.sizes, plan.reps, out, &mut done.failures);
        done.markdown.push_str(&md);
        figures(&rows, &mut done.figures);
        for line in verdicts(&rows) {
            let (what, verdict) = line.split_once(": ").unwrap_or((line.as_str(), ""));
            done.find("table1", what.to_string(), verdict.to_string());
        }
        done
    }
}
