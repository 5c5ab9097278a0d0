//! The command line: the subcommands and their options, parsed by clap, each dispatched to the
//! module that runs it. Exit status: 0 on success, 1 when a measurement failed or missed a
//! count check, 2 for bad input.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::bench::{BenchArgs, BenchOneArgs};
use crate::instructions::command::{InstructionsArgs, InstructionsDriverArgs};
use crate::table1::command::{Table1Args, Table1OneArgs};
use crate::table2::command::{Table2Args, Table2DriverArgs};

/// The workloads `bench` runs (defined beside the structures' constructors).
pub use callwheel_bench::structure::Workload;

/// `callwheel`: benchmarks of the callwheel timer schemes.
#[derive(Debug, Parser)]
#[command(
    name = "callwheel",
    version,
    about,
    long_about = None,
    after_help = "The workloads W1-W5 are described in docs/workloads.md of the source tree; results and design notes are in docs/."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Runs the benchmark workloads of docs/workloads.md on every scheme and prints the tables.
    Bench(BenchArgs),
    /// Runs one measurement in this process and prints one result line (what `bench` runs in
    /// each child process).
    #[command(hide = true)]
    BenchOne(BenchOneArgs),
    /// Reproduces Costello & Varghese's Table I and Figure 8: cancel + set one callout with N
    /// others outstanding, old callout against new (hash and handle interfaces).
    Table1(Table1Args),
    /// Reproduces Costello & Varghese's Table II: instructions per call of hardclock,
    /// softclock, timeout, untimeout, setcallout and unsetcallout, old and new, counted by
    /// valgrind's callgrind (skipped when valgrind is not on PATH) and fitted to the paper's
    /// forms.
    Table2(Table2Args),
    /// Runs every Table II point in this process, for callgrind (what `table2` runs under
    /// valgrind).
    #[command(hide = true)]
    Table2Driver(Table2DriverArgs),
    /// W1's cancel + start pair in instructions per call, counted by valgrind's callgrind
    /// (skipped when valgrind is not on PATH): the production wheel with no value and with a
    /// u64, and the C API's cw_wheel_add + cw_wheel_del, at N = 0 to 10^6 outstanding timers.
    Instructions(InstructionsArgs),
    /// Runs every instructions point in this process, for callgrind (what `instructions` runs
    /// under valgrind).
    #[command(hide = true)]
    InstructionsDriver(InstructionsDriverArgs),
    /// Runs the papers' experiments and the peer comparison, writes a report with plots
    /// (default `report/REPORT.md`) and prints a summary.
    Repro(crate::repro::ReproArgs),
    /// Prints the ratio B / A of every figure two results.json files share (from `repro` or any
    /// command's `--json`; figures match by experiment, structure, case and metric).
    Compare {
        /// The first run's results.json.
        a: std::path::PathBuf,
        /// The second run's results.json.
        b: std::path::PathBuf,
    },
    /// Runs one Table I measurement in this process (what `table1` runs in each child).
    #[command(hide = true)]
    Table1One(Table1OneArgs),
    /// The hrtimers latency table: lateness of callwheel-rt timers against a bare
    /// `clock_nanosleep(TIMER_ABSTIME)` loop, interleaved in one run.
    Latency(crate::latency::command::LatencyCommand),
    /// calloutng's Figures 4–7: requested against actual sleep from 1 µs to 10 ms for
    /// callwheel-rt timers (exact and 5 % tolerance), its blocking sleep and condition-variable
    /// timeout (5 %), raw `clock_nanosleep` (1 ns and 5 % slack) and `tokio::time::sleep`,
    /// interleaved; and the runtime's wake-ups at 0 % and 5 % tolerance against the optimum.
    Sweep(crate::sweep::SweepArgs),
    /// callwheel-async against tokio's and async-io's timers: timeout churn (operations per
    /// second with K tasks, the future ready at once or pending once) and a sleep storm (a
    /// million sleeping tasks: time to register, memory per task, last wake-up).
    Async(crate::async_timers::AsyncArgs),
    /// Threads starting and stopping timers while a mass expiry of a million timers runs:
    /// `start` latency p50 / p99 / max, the expiry's duration and the count check (every timer
    /// fired exactly once or was stopped).
    Stress(crate::stress::StressArgs),
}

/// Parses the command line and runs the command.
pub fn run() -> ExitCode {
    match Cli::parse().command {
        Command::Bench(args) => crate::bench::bench(&args),
        Command::BenchOne(args) => crate::bench::bench_one(&args),
        Command::Table1(args) => crate::table1::command::command(&args),
        Command::Table1One(args) => crate::table1::command::one(&args),
        Command::Table2(args) => crate::table2::command::command(&args),
        Command::Table2Driver(args) => crate::table2::command::driver(&args),
        Command::Instructions(args) => crate::instructions::command::command(&args),
        Command::InstructionsDriver(args) => crate::instructions::command::driver(&args),
        Command::Repro(args) => ExitCode::from(crate::repro::run(&args)),
        Command::Compare { a, b } => compare(&a, &b),
        Command::Latency(args) => crate::latency::command::command(&args),
        Command::Sweep(args) => crate::sweep::command(&args),
        Command::Async(args) => crate::async_timers::command(&args),
        Command::Stress(args) => crate::stress::command(&args),
    }
}

/// `callwheel compare`: the ratio B / A of every figure two `results.json` files share.
fn compare(a: &std::path::Path, b: &std::path::Path) -> ExitCode {
    match (crate::compare::load(a), crate::compare::load(b)) {
        (Ok(a), Ok(b)) => {
            print!("{}", crate::compare::table(&a, &b));
            ExitCode::SUCCESS
        }
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(callwheel_bench::plan::USAGE_ERROR)
        }
    }
}
