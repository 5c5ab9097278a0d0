//! `callwheel sweep`: calloutng's Figures 4–7 (Italiano & Motin, §5) — requested against
//! actual sleep from 1 µs to 10 ms — and the runtime's wake-up counts with and without
//! tolerance.
//!
//! # The sleep sweep
//!
//! For every requested sleep `r` (log-spaced, 1, 2, 5, 10, … 10,000 µs) seven sources sleep
//! `r`, one sample each in turn, in a fresh seeded shuffle of the sources every turn, so all
//! of them see the same host noise (the sources are interleaved sample by sample, never run one
//! after another). The shuffle matters for short sleeps: a fixed order, even rotated, always
//! gives a source the same predecessor, and a callwheel timer armed right after tokio's 1 ms
//! sleep must wake a driver that has gone cold on an idle CPU (6–10 µs), while one armed right
//! after another callwheel sample finds it warm (about 3 µs):
//!
//! | source | how it sleeps | actual sleep: clock reading … minus the reading before arming |
//! |---|---|---|
//! | callwheel-rt, exact | a direct timer on a one-shard runtime, window `[t0 + r, t0 + r]` (calloutng's absolute precision, Figure 4) | … at the start of the callback |
//! | callwheel-rt, 5 % | the same timer with tolerance `r × 5 %` (calloutng's `C_PREL`, Figure 5) | … at the start of the callback |
//! | clock_nanosleep, 1 ns slack | `clock_nanosleep(TIMER_ABSTIME)` on this thread, timer slack 1 ns | … right after the sleep returns |
//! | clock_nanosleep, 5 % slack | the same with `PR_SET_TIMERSLACK` = `r × 5 %`: the kernel's own tolerance | … right after the sleep returns |
//! | tokio::time::sleep | `block_on(sleep(r))` on a current-thread tokio runtime (1 ms timer wheel) | … when `block_on` returns |
//! | callwheel-rt sleep, 5 % | `Runtime::sleep(r, 5 %)`: this thread parked until a runtime timer wakes it (calloutng's `pause_sbt`) | … when the sleep returns |
//! | callwheel-rt condvar wait, 5 % | `Condvar::wait_timeout(r, 5 %)` on a runtime condition variable nobody notifies (`cv_timedwait_sbt`) | … when the wait returns |
//!
//! The runtime's driver sleeps until (its estimate of the kernel's overshoot before) the
//! earliest window *end*, so a lone timer with 5 % tolerance fires near `1.05 r`, as a lone
//! kernel hrtimer with 5 % slack does: tolerance buys coalescing, not promptness.
//!
//! # The wake-up batches
//!
//! A fresh one-shard runtime gets `timers` direct timers with deadlines `d` drawn (SplitMix64)
//! over a span, tolerance `(d - now) × pct / 100`, for each tolerance (0 % and 5 %). Its
//! driver's wake-ups are counted from [`ShardStats`](callwheel_rt::ShardStats) (every return
//! from its sleep, less the early ones a new, earlier timer caused while they were armed), and
//! compared with the optimum: the fewest instants stabbing every window, computed offline by
//! the greedy algorithm ([`callwheel::stabbing_optimum`]). Each firing's driver reading is checked against
//! its window: never before the deadline; the share that fired inside its window (the
//! target); and the batch's median lateness past the window's end (0 inside), and the late
//! timers' 99th percentile, against the raw loop's overshoot of the same run (the driver aims a tolerant window's end early by
//! its estimate of that overshoot, never before the deadline, so an exact timer fires the
//! overshoot late). Every timer must fire exactly once. A last check
//! leaves a runtime with one timer an hour away idle and counts its wake-ups: there must be
//! none.

// The submodules depend on one another in one direction only (plan, report, host, then the
// measurements, verdicts, tables and chart, then the experiment); this file only gathers them
// and runs the command.
mod chart;
mod experiment;
mod host;
mod measure;
mod plan;
mod render;
mod report;
mod verdicts;
mod wakeups;

use std::process::ExitCode;

pub use chart::sleep_panels;
pub use experiment::Sweep;
pub use host::{cpu_ticks, steal_note, steal_percent, with_least_slack};
pub use measure::measure;
pub use plan::{Plan, Source, SweepArgs, BATCH_TOLERANCES, REQUESTS_US, TOLERANCE_PERCENT};
pub use render::render;
pub use report::{Batch, Cell, Idle, SweepReport};
pub use verdicts::verdicts;

/// `callwheel sweep`: the experiment run alone on the plan the options ask for. Exit status 1
/// when a measurement failed or a batch timer did not fire exactly once (or fired before its
/// deadline).
pub fn command(args: &SweepArgs) -> ExitCode {
    crate::experiment::alone(&Sweep, &args.plan(), &args.output)
}
