//! Table II as an experiment: the counts by callgrind, their fits, verdicts, plot and figures.

use std::path::Path;

use super::report::{section, verdicts};
use super::{figures, Outcome};
use crate::experiment::{Experiment, Section, Size};

/// What a Table II run measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Three points per line instead of five.
    pub tiny: bool,
}

/// `table2`: Table II, instructions per timer function, by callgrind.
pub struct Table2;

impl Experiment for Table2 {
    type Plan = Plan;

    fn name(&self) -> &'static str {
        "table2"
    }

    fn about(&self) -> &'static str {
        "Table II: instructions per timer function, by callgrind"
    }

    fn plan(&self, size: Size) -> Plan {
        Plan {
            tiny: matches!(size, Size::Tiny),
        }
    }

    fn run(&self, plan: &Plan, out: &Path) -> Section {
        let mut done = Section::default();
        let (outcome, md) = section(plan.tiny, out, &mut done.failures);
        done.markdown.push_str(&md);
        let measured = match outcome {
            Outcome::Measured(m) => m,
            Outcome::Skipped(why) => {
                done.find(
                    "table2",
                    "instruction counts by callgrind".into(),
                    format!("skipped: {why}"),
                );
                return done;
            }
        };
        figures(&measured, &mut done.figures);
        for (what, verdict) in verdicts(&measured) {
            done.find("table2", what, verdict);
        }
        done
    }
}
