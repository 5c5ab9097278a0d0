//! `callwheel async`: callwheel-async's timers against tokio's and async-io's, in one run.
//!
//! # Precision
//!
//! Requested against actual sleep on three executors: see [`crate::async_precision`].
//!
//! # Coalescing
//!
//! Intervals with tolerance on the real clock: see [`crate::async_coalescing`].
//!
//! # Timeout churn
//!
//! K tasks (by default 1, 64 and 1,024) each loop `timeout(1 s, f).await` until the run's
//! operations are done, f being ready at once (variant A) or pending once before it completes
//! (variant B, a future that wakes itself and yields). On tokio's multi-thread runtime with 2
//! workers: `tokio::time::timeout`, pingora-timeout's `fast_timeout`, async-io's `Timer` raced
//! against f (async-io has no timeout of its own; this is how smol code writes one) and
//! `callwheel_async::timeout`; on smol's executor run by 2 threads: async-io's and callwheel's.
//! On each, the floor: the same loop awaiting f with no timer, the most any timer could reach.
//! Operations per second; the cases run one after another over the same task counts.
//!
//! # Sleep storm
//!
//! In a child process per case (so that each measures its own memory), N tasks (by default
//! 1,000,000) each sleep until a deadline drawn over one second: on tokio's multi-thread
//! runtime with `tokio::time::sleep` and with `callwheel_async::sleep`, and on smol's executor
//! with async-io's `Timer` and with `callwheel_async::sleep`. Reported: the time to spawn every
//! task and have it registered (each task signals its first poll), the resident memory per
//! sleeping task (resident set after registration less before spawning, divided by N), and how
//! long after the latest deadline the last task woke. Two floor cases spawn the same tasks with
//! no timer (each counts its first poll and waits for ever): what spawning and polling cost on
//! each executor, which bounds how much faster any timer can make the storm.

// The submodules depend on one another in one direction only (plan, churn, scaling and storm, measure,
// verdicts, render, then the experiment); this file only gathers them and runs the command,
// which is also the storm child's entry.
mod churn;
mod experiment;
mod measure;
mod plan;
mod render;
mod scaling;
mod storm;
mod verdicts;

use std::process::ExitCode;

pub use churn::{ChurnCell, Executor, Timer};
pub use experiment::Async;
pub use plan::{AsyncArgs, AsyncPlan, COALESCING_PERCENT};
pub use storm::{StormCase, StormResult};

use storm::storm_here;

/// `callwheel async`: the experiment run alone on the plan the options ask for, or, with the
/// hidden `--storm-child`, one storm case measured in this process.
pub fn command(args: &AsyncArgs) -> ExitCode {
    if let Some(key) = &args.storm_child {
        let Some(case) = StormCase::ALL.into_iter().find(|c| c.key() == key) else {
            eprintln!("error: unknown storm case {key}");
            return ExitCode::from(2);
        };
        let plan = args.plan();
        let result = storm_here(case, plan.sleepers, plan.span_ms);
        return match serde_json::to_string(&result) {
            Ok(line) => {
                println!("{line}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(1)
            }
        };
    }
    crate::experiment::alone(&Async, &args.plan(), &args.output)
}
