//! `callwheel bench`: plans the measurements of the chosen workloads and structures, runs each
//! in a child process (`callwheel bench-one`, the hidden command that runs one measurement in
//! its own process) under a progress bar, and prints the tables.
//!
//! Exit status: 0 when every measurement succeeded, 1 when one failed or its counts were wrong
//! (W2's expiries, W3's and W4's fired timers, W5's windows, for an exact structure), 2 for bad
//! input.

use std::process::ExitCode;

use clap::Args;

use callwheel_bench::plan::{self, dedup, USAGE_ERROR};
use callwheel_bench::structure::{SchemeInfo, Workload};

use crate::registry::{self, SCHEMES};
use callwheel_bench::runner::{self, Task};
use callwheel_bench::workload::{W1Params, W2Params, W3Params, W4Params, W5Params};

// The experiment (the measurements and their tables) is the command's; this file holds the
// options, the plan they resolve to and the hidden child.
mod experiment;

pub use experiment::{Bench, Plan};

use crate::experiment::{Experiment, Size};

/// The options of `callwheel bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Workloads to run, comma-separated.
    #[arg(long = "workload", value_name = "LIST", value_delimiter = ',', default_values = ["w1", "w2", "w3", "w4", "w5", "tolerant", "table1"])]
    pub workloads: Vec<Workload>,
    /// Structures to run (repeatable or comma-separated, by name or label; default: all).
    #[arg(long = "scheme", value_name = "NAME", value_delimiter = ',', ignore_case = true, value_parser = scheme_names())]
    pub schemes: Vec<String>,
    /// W1 numbers of outstanding timers, comma-separated, each at most 10^8 [default: 0,1000,10000,100000,1000000].
    #[arg(long = "n", value_name = "SIZES", value_delimiter = ',', value_parser = clap::value_parser!(u64).range(0..=plan::MAX_TIMERS_ARG))]
    pub sizes: Vec<u64>,
    /// Repetitions per measurement (1 to 1000), each with a fresh structure [default: 5, W4 15; 1 with
    /// --tiny].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=plan::MAX_REPS_ARG))]
    pub reps: Option<u32>,
    /// Rounds (1 to 100): each measurement runs this many times, in its own process each time,
    /// the structures' order reversed every other round; the tables pool the rounds'
    /// repetitions, the ratio tables pair them (the median of the rounds' ratios). On a noisy
    /// machine, rounds keep a passing disturbance from landing on one structure only. The C
    /// API's verdict against the Rust wheel is given from 3 rounds; an odd number gives a true
    /// median.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=plan::MAX_ROUNDS_ARG))]
    pub rounds: u32,
    /// Tiny sizes that check the plumbing: W1 N in {0, 1000} with I = 2000, W2 with N = 1000 and
    /// 20000 steps, W3 with 20000 timers over 2000 ticks, W4 with 100 timers, W5 with 2000
    /// timers, 1 repetition; the figures mean little.
    #[arg(long)]
    pub tiny: bool,
    /// Run the O(n)-start schemes in W1 up to N = 100000 instead of 10000.
    #[arg(long)]
    pub full: bool,
    /// --out DIR (Table I's plots) and --json.
    #[command(flatten)]
    pub output: crate::flags::Output,
}

/// The structures `--scheme` accepts: each registry name, its label as a hidden alias.
fn scheme_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        SCHEMES
            .iter()
            .map(|s| clap::builder::PossibleValue::new(s.name).alias(s.label)),
    )
}

/// The options of the hidden `callwheel bench-one`.
#[derive(Debug, Args)]
pub struct BenchOneArgs {
    /// The structure.
    #[arg(long)]
    pub scheme: String,
    /// The workload.
    #[arg(long)]
    pub workload: Workload,
    /// W1: outstanding timers; W2: timers in flight (at most 10^8) [W2 default: 100000].
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=plan::MAX_TIMERS_ARG))]
    pub n: Option<u64>,
    /// W1: timed pairs per repetition.
    #[arg(long, default_value_t = plan::W1_ITERS, value_parser = clap::value_parser!(u64).range(1..=plan::MAX_ITERS_ARG))]
    pub iters: u64,
    /// W2: timed steps per repetition.
    #[arg(long, default_value_t = plan::W2_STEPS, value_parser = clap::value_parser!(u64).range(1..=plan::MAX_ITERS_ARG))]
    pub steps: u64,
    /// W3, W4, W5: timers, at most 10^8 [defaults 1000000, 1000, 100000].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=plan::MAX_TIMERS_ARG))]
    pub timers: Option<u64>,
    /// W3: ticks; W4, W5: deadlines are drawn from [1, ticks), at most 2^40 [defaults 100000,
    /// 1e9, 1e6].
    #[arg(long, value_parser = clap::value_parser!(u64).range(2..=plan::MAX_TICKS_ARG))]
    pub ticks: Option<u64>,
    /// W2, W3, W4: each timer's tolerance, in percent of its distance from its start (0 to 100)
    /// [default: 0, the exact workload]; W5: the tolerant case's tolerance [default: 5].
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=100))]
    pub tolerance: Option<u64>,
    /// Repetitions, 1 to 1000 [default: 5, W4 15].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=plan::MAX_REPS_ARG))]
    pub reps: Option<u32>,
}

/// The structures `--scheme` names, in registry order without repeats; all of them when none
/// is named. `Err` is the one-line message for an unknown name.
pub fn select_schemes(names: &[String]) -> Result<Vec<&'static SchemeInfo>, String> {
    if names.is_empty() {
        return Ok(SCHEMES.iter().collect());
    }
    let mut chosen = Vec::new();
    for name in names {
        chosen.push(registry::scheme_by_name(name.trim())?.name);
    }
    Ok(SCHEMES
        .iter()
        .filter(|s| chosen.contains(&s.name))
        .collect())
}

/// Runs `callwheel bench`: the experiment alone on the plan the options ask for.
pub fn bench(args: &BenchArgs) -> ExitCode {
    let schemes = match select_schemes(&args.schemes) {
        Ok(schemes) => schemes,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(USAGE_ERROR);
        }
    };
    // The plan of the size asked for, then what the options change in it.
    let mut plan = Bench.plan(Size::from_flags(args.tiny, args.full));
    plan.schemes = schemes;
    plan.workloads = dedup(&args.workloads);
    if !args.sizes.is_empty() {
        plan.settings.w1_sizes = dedup(&args.sizes);
    }
    if let Some(reps) = args.reps {
        plan.settings.set_reps(reps);
    }
    plan.settings.rounds = args.rounds;
    // With --tiny too.
    plan.settings.full = args.full;
    crate::experiment::alone(&Bench, &plan, &args.output)
}

/// Runs `callwheel bench-one`.
pub fn bench_one(args: &BenchOneArgs) -> ExitCode {
    let scheme = match registry::scheme_by_name(&args.scheme) {
        Ok(scheme) => scheme,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(USAGE_ERROR);
        }
    };
    let reps = args.reps.unwrap_or(plan::DEFAULT_REPS);
    let task = match args.workload {
        Workload::W1 => {
            let Some(n) = args.n else {
                eprintln!("error: bench-one --workload w1 needs --n");
                return ExitCode::from(USAGE_ERROR);
            };
            Task::W1 {
                scheme,
                params: W1Params {
                    n,
                    iters: args.iters,
                    reps,
                },
            }
        }
        Workload::W2 => Task::W2 {
            scheme,
            params: W2Params {
                n: args.n.unwrap_or(plan::W2_N),
                steps: args.steps,
                tolerance_percent: args.tolerance.unwrap_or(0),
                reps,
            },
        },
        Workload::W3 => Task::W3 {
            scheme,
            params: W3Params {
                timers: args.timers.unwrap_or(plan::W3_TIMERS),
                ticks: args.ticks.unwrap_or(plan::W3_TICKS),
                tolerance_percent: args.tolerance.unwrap_or(0),
                reps,
            },
        },
        Workload::W4 => Task::W4 {
            scheme,
            params: W4Params {
                timers: args.timers.unwrap_or(plan::W4_TIMERS),
                ticks: args.ticks.unwrap_or(plan::W4_TICKS),
                tolerance_percent: args.tolerance.unwrap_or(0),
                reps: args.reps.unwrap_or(plan::W4_REPS),
            },
        },
        Workload::Table1 => {
            eprintln!("error: bench-one does not run table1 (use table1-one)");
            return ExitCode::from(USAGE_ERROR);
        }
        Workload::Tolerant => {
            eprintln!("error: bench-one runs a tolerant workload as w2, w3 or w4 with --tolerance");
            return ExitCode::from(USAGE_ERROR);
        }
        Workload::W5 => Task::W5 {
            scheme,
            params: W5Params {
                timers: args.timers.unwrap_or(plan::W5_TIMERS),
                ticks: args.ticks.unwrap_or(plan::W5_TICKS),
                tolerance_percent: args.tolerance.unwrap_or(plan::W5_TOLERANCE_PERCENT),
                reps,
            },
        },
    };
    match runner::run_here(&task) {
        Ok(report) => {
            println!("{}", report.to_line());
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
