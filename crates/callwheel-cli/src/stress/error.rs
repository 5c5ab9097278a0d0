//! Why a stress run failed: one error type for every part of the run.

/// Why a run failed.
#[derive(Debug)]
pub struct StressError(pub String);

impl std::fmt::Display for StressError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StressError {}

pub(super) fn fail(what: &str, e: impl std::fmt::Display) -> StressError {
    StressError(format!("{what}: {e}"))
}
