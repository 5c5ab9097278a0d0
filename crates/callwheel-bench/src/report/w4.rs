//! W4, sparse advance: its rows with the fired count checked, and its table.

use super::outcome::{summary_cells, Outcome};
use super::table::{Align, Table};
use crate::structure::SchemeInfo;

/// One row of the W4 table.
#[derive(Clone, Debug)]
pub struct W4Row {
    /// The structure.
    pub scheme: &'static SchemeInfo,
    /// Timers started.
    pub timers: u64,
    /// The result.
    pub outcome: Outcome,
}

impl W4Row {
    /// `false` when the loop fired other than every timer.
    pub fn fired_ok(&self) -> bool {
        match &self.outcome {
            Outcome::Done(report) => report.fired == Some(self.timers),
            Outcome::Skipped(_) | Outcome::Failed(_) => true,
        }
    }
}

/// The W4 table: `scheme | timers | ns/timer median | min | max | fired | jumps`.
pub fn w4_table(rows: &[W4Row]) -> String {
    let mut table = Table::new(&[
        ("scheme", Align::Left),
        ("timers", Align::Right),
        ("ns/timer median", Align::Right),
        ("min", Align::Right),
        ("max", Align::Right),
        ("fired", Align::Right),
        ("jumps", Align::Right),
    ]);
    for row in rows {
        let [median, min, max] = summary_cells(&row.outcome);
        let (fired, jumps) = match &row.outcome {
            Outcome::Done(report) => {
                let fired = match report.fired {
                    Some(f) if row.fired_ok() => f.to_string(),
                    Some(f) => format!("{f} MISMATCH"),
                    None => "missing".into(),
                };
                (
                    fired,
                    report.jumps.map_or("missing".into(), |j| j.to_string()),
                )
            }
            _ => (String::new(), String::new()),
        };
        table.push(vec![
            row.scheme.row_name(),
            row.timers.to_string(),
            median,
            min,
            max,
            fired,
            jumps,
        ]);
    }
    table.render()
}
