//! `callwheel instructions`, the experiment run alone, and its hidden child
//! `instructions-driver` (every point, run under callgrind).

use std::process::ExitCode;

use clap::Args;

use super::experiment::{Instructions, Plan};
use crate::experiment::{Experiment, Size};

/// The options of `callwheel instructions`.
#[derive(Debug, Args)]
pub struct InstructionsArgs {
    /// Tiny sizes that check the plumbing: N = 0 and 1,000 only.
    #[arg(long)]
    pub tiny: bool,
    /// Up to N = 10^7 (about 0.5 GB of memory and 15 s under callgrind).
    #[arg(long, conflicts_with = "tiny")]
    pub full: bool,
    /// --out DIR and --json.
    #[command(flatten)]
    pub output: crate::flags::Output,
}

/// The options of the hidden `callwheel instructions-driver`.
#[derive(Debug, Args)]
pub struct InstructionsDriverArgs {
    /// The numbers of outstanding timers, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    pub n: Vec<u64>,
}

/// Runs `callwheel instructions`: the experiment alone on the plan the options ask for.
pub fn command(args: &InstructionsArgs) -> ExitCode {
    let plan: Plan = Instructions.plan(Size::from_flags(args.tiny, args.full));
    crate::experiment::alone(&Instructions, &plan, &args.output)
}

/// Runs `callwheel instructions-driver`.
pub fn driver(args: &InstructionsDriverArgs) -> ExitCode {
    match super::driver::run(&args.n) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
