//! `callwheel table1`, the Table I experiment run alone, and its hidden child `table1-one`
//! (one measurement in its own process).

use std::process::ExitCode;

use clap::Args;

use super::experiment::{Plan, Table1};
use super::{measure, Interface, MAX_N, PAIRS, SIZES, TINY_SIZES};
use callwheel_bench::plan::{self, dedup, USAGE_ERROR};

/// The options of `callwheel table1`.
#[derive(Debug, Args)]
pub struct Table1Args {
    /// Numbers of outstanding callouts, comma-separated, each at most 5 * 10^7 [default: 0,200,400,600,800,1000,10000,100000,1000000].
    #[arg(long = "n", value_name = "SIZES", value_delimiter = ',', value_parser = clap::value_parser!(u64).range(0..=plan::MAX_TIMERS_ARG))]
    pub sizes: Vec<u64>,
    /// Repetitions per measurement (1 to 1000), each with a fresh table [default: 5; 1 with --tiny].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=plan::MAX_REPS_ARG))]
    pub reps: Option<u32>,
    /// Tiny sizes that check the plumbing: N in {0, 200, 1000}, 1 repetition.
    #[arg(long)]
    pub tiny: bool,
    /// --out DIR (the plots `table1.*` and `table1_paper.*`, SVG and PNG) and --json.
    #[command(flatten)]
    pub output: crate::flags::Output,
}

impl Table1Args {
    /// The plan these options ask for; `Err` names a size over [`MAX_N`].
    pub fn plan(&self) -> Result<Plan, String> {
        let sizes = if !self.sizes.is_empty() {
            dedup(&self.sizes)
        } else if self.tiny {
            TINY_SIZES.to_vec()
        } else {
            SIZES.to_vec()
        };
        if let Some(&n) = sizes.iter().find(|&&n| n > MAX_N) {
            return Err(format!("N = {n} is too large (at most {MAX_N})"));
        }
        let reps = self
            .reps
            .unwrap_or(if self.tiny { 1 } else { plan::DEFAULT_REPS });
        Ok(Plan { sizes, reps })
    }
}

/// The options of the hidden `callwheel table1-one`.
#[derive(Debug, Args)]
pub struct Table1OneArgs {
    /// The interface.
    #[arg(long, value_enum)]
    pub interface: Interface,
    /// Outstanding callouts (at most 10^8).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=plan::MAX_TIMERS_ARG))]
    pub n: u64,
    /// Timed (cancel + set) pairs per repetition.
    #[arg(long, default_value_t = PAIRS, value_parser = clap::value_parser!(u64).range(1..=plan::MAX_ITERS_ARG))]
    pub pairs: u64,
    /// Repetitions (1 to 1000).
    #[arg(long, default_value_t = plan::DEFAULT_REPS, value_parser = clap::value_parser!(u32).range(1..=plan::MAX_REPS_ARG))]
    pub reps: u32,
}

/// Runs `callwheel table1`: the experiment alone on the plan the options ask for.
pub fn command(args: &Table1Args) -> ExitCode {
    match args.plan() {
        Ok(plan) => crate::experiment::alone(&Table1, &plan, &args.output),
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(USAGE_ERROR)
        }
    }
}

/// Runs `callwheel table1-one`.
pub fn one(args: &Table1OneArgs) -> ExitCode {
    if args.n > MAX_N {
        eprintln!("error: N = {} is too large (at most {})", args.n, MAX_N);
        return ExitCode::from(USAGE_ERROR);
    }
    match measure(args.interface, args.n, args.pairs, args.reps) {
        Ok(m) => {
            println!("{}", m.to_line());
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
