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

/// The C API's target against the Rust wheel: the C path costs at most this many times the
/// Rust wheel per operation (`callwheel bench` judges the time, W1–W4; `callwheel
/// instructions` the instructions of a W1 pair).
pub const C_API_WITHIN: f64 = 1.2;
