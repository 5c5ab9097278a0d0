//! Which measurements one `callwheel bench` run makes: the workload sizes, the reduced sizes or
//! skips for schemes whose cost is O(n), and the n/a rows of W4 and W5, decided from the
//! structures' [`Complexity`] flags and [`Caps`] (never from scheme names).
//!
//! [`Complexity`]: crate::structure::Complexity
//! [`Caps`]: crate::structure::Caps

use crate::structure::SchemeInfo;
use crate::workload::{W1Params, W2Params, W3Params, W4Params, W5Params};

/// W1's default numbers of outstanding timers.
pub const W1_SIZES: [u64; 5] = [0, 1_000, 10_000, 100_000, 1_000_000];
/// W1's timed (cancel + start) pairs per repetition.
pub const W1_ITERS: u64 = 200_000;
/// W3's timers.
pub const W3_TIMERS: u64 = 1_000_000;
/// W3's ticks: expiries in `[1, W3_TICKS)`, advanced over `1..=W3_TICKS`.
pub const W3_TICKS: u64 = 100_000;
/// W2's timers in flight.
pub const W2_N: u64 = 100_000;
/// W2's timed steps.
pub const W2_STEPS: u64 = 2_000_000;
/// W2's expiry count for every exact structure at `N = 100 000` and 2 000 000 steps.
pub const W2_EXPECTED: u64 = 93_769;
/// W4's timers.
pub const W4_TIMERS: u64 = 1_000;
/// W4's deadlines are drawn from `[1, W4_TICKS)`.
pub const W4_TICKS: u64 = 1_000_000_000;
/// W4's repetitions (the workload is short, so it gets more).
pub const W4_REPS: u32 = 15;
/// W5's timers.
pub const W5_TIMERS: u64 = 100_000;
/// W5's deadlines are drawn from `[1, W5_TICKS)`.
pub const W5_TICKS: u64 = 1_000_000;
/// W5's tolerance, in percent of the deadline.
pub const W5_TOLERANCE_PERCENT: u64 = 5;
/// Repetitions per measurement.
pub const DEFAULT_REPS: u32 = 5;

/// `--tiny`: W1 sizes.
pub const TINY_W1_SIZES: [u64; 2] = [0, 1_000];
/// `--tiny`: W1 pairs per repetition.
pub const TINY_W1_ITERS: u64 = 2_000;
/// `--tiny`: W3 timers.
pub const TINY_W3_TIMERS: u64 = 20_000;
/// `--tiny`: W3 ticks.
pub const TINY_W3_TICKS: u64 = 2_000;
/// `--tiny`: W2 timers in flight.
pub const TINY_W2_N: u64 = 1_000;
/// `--tiny`: W2 steps.
pub const TINY_W2_STEPS: u64 = 20_000;
/// `--tiny`: W4 timers.
pub const TINY_W4_TIMERS: u64 = 100;
/// `--tiny`: W5 timers.
pub const TINY_W5_TIMERS: u64 = 2_000;
/// `--tiny`: repetitions.
pub const TINY_REPS: u32 = 1;

/// The most timers any size option accepts (`--n`, `--timers`): 10^8, a few GB of nodes at the
/// largest structure's bytes per timer, checked before any work (a larger count would end in
/// an allocation failure minutes later).
pub const MAX_TIMERS_ARG: u64 = 100_000_000;
/// The most ticks `--ticks` accepts (2^40: W3 visits every tick).
pub const MAX_TICKS_ARG: u64 = 1 << 40;
/// The most timed pairs or steps per repetition (`--iters`, `--steps`, `--pairs`).
pub const MAX_ITERS_ARG: u64 = 1_000_000_000;
/// The most repetitions `--reps` accepts.
pub const MAX_REPS_ARG: i64 = 1_000;
/// The most rounds `--rounds` accepts.
pub const MAX_ROUNDS_ARG: i64 = 100;

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

/// The most W2 timers in flight a scheme with an O(n) start or an O(n) tick gets.
pub const LINEAR_W2_N: u64 = 1_000;
/// The most W2 steps an O(n)-start scheme runs. Even at `N = 1 000` it holds about 12 000
/// timers (the 5 % left to expire stay for some 200 ticks), and each start walks nearly all of
/// them: measured at 67–79 µs per step (release build), so the full 2 000 000 steps would take
/// some 2.5 minutes per repetition.
pub const LINEAR_START_W2_MAX_STEPS: u64 = 100_000;
/// The most W5 timers an O(n)-start scheme gets: at 100 000 its sorted inserts took 121–131 s
/// per repetition (release build).
pub const LINEAR_W5_TIMERS: u64 = 10_000;

/// The row text of a W1 size an O(n)-start scheme does not run.
pub const SKIPPED_LINEAR_START: &str = "skipped: O(n) start";
/// The row text of W4 and W5 for a structure without a next-deadline query.
pub const NA_NO_QUERY: &str = "n/a: no next-deadline query (visits every tick)";
/// The row text of W4 for a structure whose range is shorter than W4's deadlines.
pub const NA_RANGE: &str = "n/a: deadlines beyond its range";

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
    /// W2's timers in flight.
    pub w2_n: u64,
    /// W2's timed steps.
    pub w2_steps: u64,
    /// W4's timers.
    pub w4_timers: u64,
    /// W4's deadline range `[1, w4_ticks)`.
    pub w4_ticks: u64,
    /// W4's repetitions.
    pub w4_reps: u32,
    /// W5's timers.
    pub w5_timers: u64,
    /// W5's deadline range `[1, w5_ticks)`.
    pub w5_ticks: u64,
    /// W5's tolerance in percent.
    pub w5_tolerance_percent: u64,
    /// Repetitions per measurement (all workloads but W4).
    pub reps: u32,
    /// Rounds: each measurement runs this many times in its own process, the structures'
    /// order reversed every other round, and the rounds' repetitions are pooled (1: one run
    /// each).
    pub rounds: u32,
    /// `--full`: O(n)-start schemes run W1 up to [`LINEAR_W1_MAX_N_FULL`].
    pub full: bool,
}

impl Settings {
    /// The full workloads of `docs/workloads.md`.
    pub fn standard() -> Settings {
        Settings {
            w1_sizes: W1_SIZES.to_vec(),
            w1_iters: W1_ITERS,
            w3_timers: W3_TIMERS,
            w3_ticks: W3_TICKS,
            w2_n: W2_N,
            w2_steps: W2_STEPS,
            w4_timers: W4_TIMERS,
            w4_ticks: W4_TICKS,
            w4_reps: W4_REPS,
            w5_timers: W5_TIMERS,
            w5_ticks: W5_TICKS,
            w5_tolerance_percent: W5_TOLERANCE_PERCENT,
            reps: DEFAULT_REPS,
            rounds: 1,
            full: false,
        }
    }

    /// Tiny sizes that check the plumbing in a second or two, for tests.
    pub fn tiny() -> Settings {
        Settings {
            w1_sizes: TINY_W1_SIZES.to_vec(),
            w1_iters: TINY_W1_ITERS,
            w3_timers: TINY_W3_TIMERS,
            w3_ticks: TINY_W3_TICKS,
            w2_n: TINY_W2_N,
            w2_steps: TINY_W2_STEPS,
            w4_timers: TINY_W4_TIMERS,
            w4_ticks: W4_TICKS,
            w4_reps: TINY_REPS,
            w5_timers: TINY_W5_TIMERS,
            w5_ticks: W5_TICKS,
            w5_tolerance_percent: W5_TOLERANCE_PERCENT,
            reps: TINY_REPS,
            rounds: 1,
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
            tolerance_percent: 0,
            reps: self.reps,
        }
    }

    /// Sets the repetitions of every workload (`--reps`), W4's included.
    pub fn set_reps(&mut self, reps: u32) {
        self.reps = reps;
        self.w4_reps = reps;
    }

    /// The sizes of `scheme`'s W2 measurement, or the reason it is skipped. A scheme with an
    /// O(n) start or an O(n) tick runs with at most [`LINEAR_W2_N`] timers in flight; an
    /// O(n)-start scheme is skipped above [`LINEAR_START_W2_MAX_STEPS`] steps.
    pub fn w2(&self, scheme: &SchemeInfo) -> Result<W2Params, &'static str> {
        if scheme.complexity.linear_start && self.w2_steps > LINEAR_START_W2_MAX_STEPS {
            return Err(SKIPPED_LINEAR_START);
        }
        let n = if scheme.complexity.any_linear() {
            self.w2_n.min(LINEAR_W2_N)
        } else {
            self.w2_n
        };
        Ok(W2Params {
            n,
            steps: self.w2_steps,
            tolerance_percent: 0,
            reps: self.reps,
        })
    }

    /// The sizes of `scheme`'s W4 measurement, or why it is n/a: no next-deadline query, or a
    /// range shorter than the deadlines.
    pub fn w4(&self, scheme: &SchemeInfo) -> Result<W4Params, &'static str> {
        if !scheme.caps.jumps {
            return Err(NA_NO_QUERY);
        }
        if scheme.caps.max_ahead < self.w4_ticks.saturating_sub(1) {
            return Err(NA_RANGE);
        }
        Ok(W4Params {
            timers: self.w4_timers,
            ticks: self.w4_ticks,
            tolerance_percent: 0,
            reps: self.w4_reps,
        })
    }

    /// The sizes of `scheme`'s W5 measurement, or why it is n/a (no next-deadline query: the
    /// drive would wake at every tick). An O(n)-start scheme gets at most [`LINEAR_W5_TIMERS`].
    pub fn w5(&self, scheme: &SchemeInfo) -> Result<W5Params, &'static str> {
        if !scheme.caps.jumps {
            return Err(NA_NO_QUERY);
        }
        if scheme.caps.max_ahead < self.w5_ticks.saturating_sub(1) {
            return Err(NA_RANGE);
        }
        let timers = if scheme.complexity.linear_start {
            self.w5_timers.min(LINEAR_W5_TIMERS)
        } else {
            self.w5_timers
        };
        Ok(W5Params {
            timers,
            ticks: self.w5_ticks,
            tolerance_percent: self.w5_tolerance_percent,
            reps: self.reps,
        })
    }
}

/// The exit status of every command given bad input (clap's own for a usage error).
pub const USAGE_ERROR: u8 = 2;

/// The items of `items` without repeats, in their first order.
pub fn dedup<T: PartialEq + Copy>(items: &[T]) -> Vec<T> {
    let mut out = Vec::new();
    for &item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}
