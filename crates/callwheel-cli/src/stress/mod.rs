//! `callwheel stress`: the runtime's bounded lock hold under a mass expiry. `M` timers (a
//! million by default) are armed for one deadline `T` on every shard; from just after arming
//! until the mass expiry is over (and at least `--duration-ms`), `N` threads start and stop
//! timers of their own on the same shards as fast as they can, and during the expiry also stop
//! mass timers, racing the drivers for them.
//!
//! | measured | how |
//! |---|---|
//! | `start` latency | the time one `Timer::start_with` call takes, one hdrhistogram per thread, merged; kept apart for the calls made while the mass expiry was under way |
//! | `stop` latency | the same for `Timer::stop` |
//! | mass expiry | from the first mass callback to the last (their clock readings), and how late the first one ran after `T` |
//! | counts | every mass timer fired exactly once or was cancelled by a stop (never both, never twice); every churn arming fired exactly once unless a stop cancelled it (a start on a pending timer moves its window and is not a new arming) |
//! | memory | the process's resident set before creating the timers, after arming them, and its peak |
//! | throughput | start, stop and re-arm calls per second from one thread and from two on a two-shard runtime (a shard per thread, nothing firing), and the ratio |
//!
//! The driver holds a shard's lock for at most `max_expiries_per_lock` expiries (64 by
//! default) at a time, so a `start` waits at most for one such batch: the target is `start`
//! p99 under 50 µs during the mass expiry. On a machine with fewer cores than threads
//! (drivers, workers, starters), a call can also be descheduled mid-way; that shows in the
//! tail too, and the report says how many threads share how many cores.

// The submodules depend on one another in one direction only (plan, scaling, report, churn,
// measure, render, then the experiment); this file only gathers them and runs the command.
mod churn;
mod experiment;
mod measure;
mod plan;
mod render;
mod report;
mod scaling;

use std::process::ExitCode;

pub use experiment::Stress;
pub use measure::measure;
pub use plan::{Plan, StressArgs, START_P99_TARGET_NS, TARGET_TIMERS};
pub use render::{render, start_verdict};
pub use report::{Counts, Latency, StressReport};
pub use scaling::{measure_scaling, Scaling, Throughput, SCALING_SHARDS};

/// `callwheel stress`: the experiment run alone on the plan the options ask for. Exit status 1
/// when the count check fails or the run could not be made.
pub fn command(args: &StressArgs) -> ExitCode {
    crate::experiment::alone(&Stress, &args.plan(), &args.output)
}
