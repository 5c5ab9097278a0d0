//! An experiment's verdicts: what was checked against which target, and whether it was met.
//! Kept apart from the tables so that the experiments that judge their figures need nothing of
//! the benchmark's rows and runner.

use serde::Serialize;

/// One line of an experiment's verdicts: what was checked and the outcome.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// What was compared, with its target.
    pub what: String,
    /// The figure and `met` / `missed` (or a plain observation).
    pub result: String,
}

/// A verdict word: `met` or `missed`.
pub fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "missed"
    }
}
