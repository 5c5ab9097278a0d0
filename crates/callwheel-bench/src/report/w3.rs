//! W3, expire: its rows with the fired count checked, and its table.

use super::outcome::{summary_cells, Outcome};
use super::table::{Align, Table};
use crate::structure::SchemeInfo;

/// One row of the W3 table.
#[derive(Clone, Debug)]
pub struct W3Row {
    /// The scheme.
    pub scheme: &'static SchemeInfo,
    /// Timers started.
    pub timers: u64,
    /// Ticks advanced over.
    pub ticks: u64,
    /// The result.
    pub outcome: Outcome,
}

impl W3Row {
    /// `true` unless the child reported fired counts (in time plus late) that do not add up to
    /// the timers started.
    pub fn fired_ok(&self) -> bool {
        match &self.outcome {
            Outcome::Done(report) => {
                report.fired.map(|f| f + report.late.unwrap_or(0)) == Some(self.timers)
            }
            Outcome::Skipped(_) | Outcome::Failed(_) => true,
        }
    }
}

/// The W3 table: `scheme | timers | ticks | ns/timer median | min | max | fired`.
pub fn w3_table(rows: &[W3Row]) -> String {
    let mut table = Table::new(&[
        ("scheme", Align::Left),
        ("timers", Align::Right),
        ("ticks", Align::Right),
        ("ns/timer median", Align::Right),
        ("min", Align::Right),
        ("max", Align::Right),
        ("fired", Align::Right),
    ]);
    for row in rows {
        let [median, min, max] = summary_cells(&row.outcome);
        let fired = match &row.outcome {
            Outcome::Done(report) => match (report.fired, report.late.unwrap_or(0)) {
                (Some(f), 0) if row.fired_ok() => f.to_string(),
                (Some(f), late) if row.fired_ok() => format!("{f} + {late} late"),
                (Some(f), late) => format!("{f} + {late} late MISMATCH"),
                (None, _) => "missing".into(),
            },
            _ => String::new(),
        };
        table.push(vec![
            row.scheme.row_name(),
            row.timers.to_string(),
            row.ticks.to_string(),
            median,
            min,
            max,
            fired,
        ]);
    }
    table.render()
}
