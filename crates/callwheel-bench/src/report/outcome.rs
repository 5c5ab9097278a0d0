//! How a measurement ended, and the median/min/max summary of its repetitions.

use super::table::format_ns;
use crate::percentile::nearest_rank;
use crate::runner::Report;

/// Median, minimum and maximum of a measurement's repetitions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// The median, by nearest rank (the lower of the middle two for an even count).
    pub median: f64,
    /// The smallest figure.
    pub min: f64,
    /// The largest figure.
    pub max: f64,
}

impl Summary {
    /// Summarizes `samples`; `None` when there are none.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        Some(Summary {
            median: nearest_rank(&sorted, 500)?,
            min: *sorted.first()?,
            max: *sorted.last()?,
        })
    }
}

/// How a measurement ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The child reported figures (boxed: a report is large, the other variants small).
    Done(Box<Report>),
    /// The plan left it out, for the reason given.
    Skipped(&'static str),
    /// The child failed; the message says why.
    Failed(String),
}

/// The cells `median | min | max` of an outcome (a skip or failure fills the median cell).
pub fn summary_cells(outcome: &Outcome) -> [String; 3] {
    match outcome {
        Outcome::Done(report) => match Summary::of(&report.samples) {
            Some(s) => [format_ns(s.median), format_ns(s.min), format_ns(s.max)],
            None => ["no samples".into(), String::new(), String::new()],
        },
        Outcome::Skipped(reason) => [reason.to_string(), String::new(), String::new()],
        Outcome::Failed(_) => ["error".into(), String::new(), String::new()],
    }
}

/// The median of an outcome, when it has one.
pub fn median_of(outcome: &Outcome) -> Option<f64> {
    match outcome {
        Outcome::Done(report) => Summary::of(&report.samples).map(|s| s.median),
        Outcome::Skipped(_) | Outcome::Failed(_) => None,
    }
}
