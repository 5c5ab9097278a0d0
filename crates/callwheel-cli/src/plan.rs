//! Which measurements one `callwheel bench` run makes: the workload sizes, and the reduced sizes
//! or skips for schemes whose cost is O(n), decided from the registry's [`Complexity`] flags
//! (never from scheme names).
//!
//! [`Complexity`]: crate::registry::Complexity

use crate::registry::SchemeInfo;
use crate::workload::{W1Params, W3Params};

/// W1's default numbers of outstanding timers.
pub const W1_SIZES: [u64; 5] = [0, 1_000, 10_000, 100_000, 1_000_000];
/// W1's timed (cancel + start) pairs per repetition.
pub const W1_ITERS: u64 = 200_000;
/// W3's timers.
pub const W3_TIMERS: u64 = 1_000_000;
/// W3's ticks: expiries in `[1, W3_TICKS)`, advanced over `1..=W3_TICKS`.
pub const W3_TICKS: u64 = 100_000;
/// Repetitions per measurement.
pub const DEFAULT_REPS: u32 = 5;

/// `--quick`: W1 sizes.
pub const QUICK_W1_SIZES: [u64; 2] = [0, 1_000];
/// `--quick`: W1 pairs per repetition.
pub const QUICK_W1_ITERS: u64 = 2_000;
/// `--quick`: W3 timers.
pub const QUICK_W3_TIMERS: u64 = 20_000;
/// `--quick`: W3 ticks.
pub const QUICK_W3_TICKS: u64 = 2_000;
/// `--quick`: repetitions.
pub const QUICK_REPS: u32 = 1;

/// O(n)-start schemes in W1 get `I = clamp(LINEAR_W1_WORK / max(N, 1), ..)` pairs.
pub const LINEAR_W1_WORK: u64 = 20_000_000;
/// The fewest W1 pairs an O(n)-start scheme gets.
pub const LINEAR_W1_MIN_ITERS: u64 = 2_000;
/// The largest W1 size an O(n)-start scheme runs by default (its setup is O(N²)).
pub const LINEAR_W1_MAX_N: u64 = 10_000;
/// The largest W1 size an O(n)-start scheme runs with `--full`.
pub const LINEAR_W1_MAX_N_FULL: u64 = 100_000;
/// The most W3 timers a scheme with an O(n) start or an O(n) tick gets.
pub const LINEAR_W3_TIMERS: u64 = 10_000;

/// The row text of a W1 size an O(n)-start scheme does not run.
pub const SKIPPED_LINEAR_START: &str = "skipped: O(n) start";

/// The sizes of one `bench` run, before the per-scheme reductions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// W1's numbers of outstanding timers, in table order.
    pub w1_sizes: Vec<u64>,
    /// W1's pairs per repetition.
    pub w1_iters: u64,
    /// W3's timers.
    pub w3_timers: u64,
    /// W3's ticks.
    pub w3_ticks: u64,
    /// Repetitions per measurement.
    pub reps: u32,
    /// `--full`: O(n)-start schemes run W1 up to [`LINEAR_W1_MAX_N_FULL`].
    pub full: bool,
}

impl Settings {
    /// The full workloads of `WORKLOADS.md`.
    pub fn standard() -> Settings {
        Settings {
            w1_sizes: W1_SIZES.to_vec(),
            w1_iters: W1_ITERS,
            w3_timers: W3_TIMERS,
            w3_ticks: W3_TICKS,
            reps: DEFAULT_REPS,
            full: false,
        }
    }

    /// Tiny sizes that check the plumbing in a second or two, for tests.
    pub fn quick() -> Settings {
        Settings {
            w1_sizes: QUICK_W1_SIZES.to_vec(),
            w1_iters: QUICK_W1_ITERS,
            w3_timers: QUICK_W3_TIMERS,
            w3_ticks: QUICK_W3_TICKS,
            reps: QUICK_REPS,
            full: false,
        }
    }

    /// The sizes of `scheme`'s W1 measurement at `n` outstanding timers, or the reason it is
    /// skipped (as printed in the table).
    pub fn w1(&self, scheme: &SchemeInfo, n: u64) -> Result<W1Params, &'static str> {
        let mut iters = self.w1_iters;
        if scheme.complexity.linear_start {
            let limit = if self.full {
                LINEAR_W1_MAX_N_FULL
            } else {
                LINEAR_W1_MAX_N
            };
            if n > limit {
                return Err(SKIPPED_LINEAR_START);
            }
            let budget = (LINEAR_W1_WORK / n.max(1)).clamp(LINEAR_W1_MIN_ITERS, W1_ITERS);
            iters = iters.min(budget);
        }
        Ok(W1Params {
            n,
            iters,
            reps: self.reps,
        })
    }

    /// The sizes of `scheme`'s W3 measurement.
    pub fn w3(&self, scheme: &SchemeInfo) -> W3Params {
        let timers = if scheme.complexity.any_linear() {
            self.w3_timers.min(LINEAR_W3_TIMERS)
        } else {
            self.w3_timers
        };
        W3Params {
            timers,
            ticks: self.w3_ticks,
            reps: self.reps,
        }
    }
}
