//! W2, churn: its rows with the expiry count checked, and its table.

use super::outcome::{summary_cells, Outcome};
use super::table::{Align, Table};
use crate::structure::SchemeInfo;

/// One row of the W2 table.
#[derive(Clone, Debug)]
pub struct W2Row {
    /// The structure.
    pub scheme: &'static SchemeInfo,
    /// Timers in flight actually used (`None` when skipped).
    pub n: Option<u64>,
    /// Timed steps.
    pub steps: u64,
    /// The expiry count every exact structure must report at this `N` ([`w2_expected`]).
    ///
    /// [`w2_expected`]: crate::workload::w2_expected
    pub expected: u64,
    /// The result.
    pub outcome: Outcome,
}

impl W2Row {
    /// `false` when an exact structure reported an expiry count other than the expected one (a
    /// lossy structure's count is reported, not judged).
    pub fn count_ok(&self) -> bool {
        match &self.outcome {
            Outcome::Done(report) => self.scheme.caps.lossy || report.fired == Some(self.expected),
            Outcome::Skipped(_) | Outcome::Failed(_) => true,
        }
    }
}

/// The W2 table: `scheme | N | steps | ns/step median | min | max | expiries`.
pub fn w2_table(rows: &[W2Row]) -> String {
    let mut table = Table::new(&[
        ("scheme", Align::Left),
        ("N", Align::Right),
        ("steps", Align::Right),
        ("ns/step median", Align::Right),
        ("min", Align::Right),
        ("max", Align::Right),
        ("expiries", Align::Right),
    ]);
    for row in rows {
        let [median, min, max] = summary_cells(&row.outcome);
        let expiries = match &row.outcome {
            Outcome::Done(report) => match report.fired {
                Some(f) if row.scheme.caps.lossy => format!("{f} (lossy)"),
                Some(f) if row.count_ok() => f.to_string(),
                Some(f) => format!("{f} MISMATCH (expected {})", row.expected),
                None => "missing".into(),
            },
            _ => String::new(),
        };
        table.push(vec![
            row.scheme.row_name(),
            row.n.map_or_else(|| "-".into(), |n| n.to_string()),
            row.steps.to_string(),
            median,
            min,
            max,
            expiries,
        ]);
    }
    table.render()
}
