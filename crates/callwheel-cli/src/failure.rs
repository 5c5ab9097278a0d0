//! Why a measurement failed: one error type for every experiment's run (a thread that could
//! not start, a clock that could not be read, a count that came out wrong), as a sentence.

/// A measurement that failed, and why.
#[derive(Debug)]
pub struct Failure(pub String);

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Failure {}

/// A [`Failure`] saying what failed and the error it failed with.
pub fn fail(what: &str, e: impl std::fmt::Display) -> Failure {
    Failure(format!("{what}: {e}"))
}
