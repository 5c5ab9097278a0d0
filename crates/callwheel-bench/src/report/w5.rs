//! W5, coalescing: its rows with the windows checked, and its table (two rows per structure).

use super::outcome::{summary_cells, Outcome};
use super::table::{Align, Table};
use crate::runner::Report;
use crate::structure::SchemeInfo;

/// One structure's W5 result (it prints as two rows: the tolerant case and tolerance 0).
#[derive(Clone, Debug)]
pub struct W5Row {
    /// The structure.
    pub scheme: &'static SchemeInfo,
    /// Timers started.
    pub timers: u64,
    /// The tolerant case's tolerance, in percent.
    pub tolerance_percent: u64,
    /// The result.
    pub outcome: Outcome,
}

impl W5Row {
    /// What is wrong with the counts of an exact structure: a timer fired outside its window,
    /// fewer wake-ups than the optimum (impossible without a violation), or a missing case.
    /// `None` when they are right, for a lossy structure (reported, not judged), and for a skip
    /// or failure.
    pub fn problem(&self) -> Option<String> {
        let Outcome::Done(report) = &self.outcome else {
            return None;
        };
        if self.scheme.caps.lossy {
            return None;
        }
        let (Some(wakeups), Some(optimum), Some(violations)) =
            (report.wakeups, report.optimum, report.violations)
        else {
            return Some("the result has no tolerance-0 counts".into());
        };
        let mut cases = vec![("0", wakeups, optimum, violations)];
        if let Some(t) = &report.tolerant {
            cases.insert(0, ("tolerant", t.wakeups, t.optimum, t.violations));
        }
        for (case, wakeups, optimum, violations) in cases {
            if violations > 0 {
                return Some(format!(
                    "{violations} timers fired outside their window (tolerance {case})"
                ));
            }
            if wakeups < optimum {
                return Some(format!(
                    "{wakeups} wake-ups, below the optimum {optimum} (tolerance {case})"
                ));
            }
        }
        None
    }
}

/// The cells `wake-ups | optimum | ratio | violations` of one W5 case.
fn w5_counts(wakeups: u64, optimum: u64, violations: u64, lossy: bool) -> [String; 4] {
    let ratio = if optimum == 0 {
        "-".into()
    } else {
        format!("{:.3}", wakeups as f64 / optimum as f64)
    };
    let violations = if lossy && violations > 0 {
        format!("{violations} (lossy)")
    } else {
        violations.to_string()
    };
    [wakeups.to_string(), optimum.to_string(), ratio, violations]
}

/// The W5 table, two rows per structure (the tolerant case, then tolerance 0): `scheme |
/// tolerance | timers | wake-ups | optimum | ratio | violations | ns/timer median | min | max`.
pub fn w5_table(rows: &[W5Row]) -> String {
    let mut table = Table::new(&[
        ("scheme", Align::Left),
        ("tolerance", Align::Right),
        ("timers", Align::Right),
        ("wake-ups", Align::Right),
        ("optimum", Align::Right),
        ("ratio", Align::Right),
        ("violations", Align::Right),
        ("ns/timer median", Align::Right),
        ("min", Align::Right),
        ("max", Align::Right),
    ]);
    for row in rows {
        let name = row.scheme.row_name();
        let lossy = row.scheme.caps.lossy;
        let tolerant = format!("{} %", row.tolerance_percent);
        let lead = |tol: &str| vec![name.clone(), tol.to_string(), row.timers.to_string()];
        match &row.outcome {
            Outcome::Done(report) => {
                let mut first = lead(&tolerant);
                match &report.tolerant {
                    Some(t) => {
                        first.extend(w5_counts(t.wakeups, t.optimum, t.violations, lossy));
                        first.extend(summary_cells(&Outcome::Done(Box::new(Report {
                            samples: t.samples.clone(),
                            ..Report::default()
                        }))));
                    }
                    None => first.push("n/a: takes no tolerance".into()),
                }
                table.push(first);
                let mut second = lead("0");
                match (report.wakeups, report.optimum, report.violations) {
                    (Some(w), Some(o), Some(v)) => second.extend(w5_counts(w, o, v, lossy)),
                    _ => second.extend([
                        "missing".to_string(),
                        String::new(),
                        String::new(),
                        String::new(),
                    ]),
                }
                second.extend(summary_cells(&row.outcome));
                table.push(second);
            }
            Outcome::Skipped(reason) => {
                for tol in [tolerant.as_str(), "0"] {
                    let mut cells = lead(tol);
                    cells.push(reason.to_string());
                    table.push(cells);
                }
            }
            Outcome::Failed(_) => {
                for tol in [tolerant.as_str(), "0"] {
                    let mut cells = lead(tol);
                    cells.push("error".into());
                    table.push(cells);
                }
            }
        }
    }
    table.render()
}
