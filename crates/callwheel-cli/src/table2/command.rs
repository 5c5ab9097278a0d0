//! `callwheel table2`, the Table II experiment run alone, and its hidden child `table2-driver`
//! (every point, run under callgrind).

use std::process::ExitCode;

use clap::Args;

use super::experiment::{Plan, Table2};

/// The options of `callwheel table2`.
#[derive(Debug, Args)]
pub struct Table2Args {
    /// Tiny sizes that check the plumbing: three points per line instead of five.
    #[arg(long)]
    pub tiny: bool,
    /// --out DIR (the plot `table2.svg`, `table2.png`) and --json.
    #[command(flatten)]
    pub output: crate::flags::Output,
}

/// The options of the hidden `callwheel table2-driver`.
#[derive(Debug, Args)]
pub struct Table2DriverArgs {
    /// Three points per line instead of five.
    #[arg(long)]
    pub tiny: bool,
}

/// Runs `callwheel table2`: the experiment alone on the plan the options ask for.
pub fn command(args: &Table2Args) -> ExitCode {
    crate::experiment::alone(&Table2, &Plan { tiny: args.tiny }, &args.output)
}

/// Runs `callwheel table2-driver`.
pub fn driver(args: &Table2DriverArgs) -> ExitCode {
    match super::driver::run(args.tiny) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
