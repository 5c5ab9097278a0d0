//! `callwheel table1` and `callwheel table2` (Costello & Varghese's Tables I and II), with their
//! hidden children: `table1-one` (one Table I measurement in its own process) and
//! `table2-driver` (every Table II point, run under callgrind).

use std::process::ExitCode;

use clap::Args;

use crate::table1;
use callwheel_bench::plan::{self, dedup, USAGE_ERROR};
use callwheel_bench::results::{self, Figures};

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

/// The options of the hidden `callwheel table1-one`.
#[derive(Debug, Args)]
pub struct Table1OneArgs {
    /// The interface.
    #[arg(long, value_enum)]
    pub interface: table1::Interface,
    /// Outstanding callouts (at most 10^8).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=plan::MAX_TIMERS_ARG))]
    pub n: u64,
    /// Timed (cancel + set) pairs per repetition.
    #[arg(long, default_value_t = table1::PAIRS, value_parser = clap::value_parser!(u64).range(1..=plan::MAX_ITERS_ARG))]
    pub pairs: u64,
    /// Repetitions (1 to 1000).
    #[arg(long, default_value_t = plan::DEFAULT_REPS, value_parser = clap::value_parser!(u32).range(1..=plan::MAX_REPS_ARG))]
    pub reps: u32,
}

/// Runs Table I at `sizes`, prints it with its verdicts, writes `out/table1.svg` and adds its
/// figures to `figures`. Returns the number of failures.
pub fn run_table1(sizes: &[u64], reps: u32, out: &std::path::Path, figures: &mut Figures) -> usize {
    let mut failures = 0;
    let (rows, md) = table1::section(sizes, reps, out, &mut failures);
    print!("{md}");
    table1::figures(&rows, figures);
    failures
}

/// Runs `callwheel table1`.
pub fn table1_command(args: &Table1Args) -> ExitCode {
    let sizes = if !args.sizes.is_empty() {
        dedup(&args.sizes)
    } else if args.tiny {
        table1::TINY_SIZES.to_vec()
    } else {
        table1::SIZES.to_vec()
    };
    if let Some(&n) = sizes.iter().find(|&&n| n > table1::MAX_N) {
        eprintln!("error: N = {n} is too large (at most {})", table1::MAX_N);
        return ExitCode::from(USAGE_ERROR);
    }
    let reps = args
        .reps
        .unwrap_or(if args.tiny { 1 } else { plan::DEFAULT_REPS });
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: this is a debug build; its figures are not representative (use --release)"
        );
    }
    let mut figures = Figures::default();
    let failures = run_table1(&sizes, reps, &args.output.dir(), &mut figures);
    finish(args.output.json_dir().as_deref(), figures, false, failures)
}

/// A command's end: with `--json`, its figures written to `DIR/results.json` (a failure to
/// write is the exit status), then success unless a measurement failed.
pub fn finish(
    json_dir: Option<&std::path::Path>,
    figures: Figures,
    full: bool,
    failures: usize,
) -> ExitCode {
    if let Some(dir) = json_dir {
        if let Err(code) = results::save(figures, full, dir) {
            return code;
        }
    }
    if failures > 0 {
        eprintln!("error: {failures} measurement(s) failed");
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Runs `callwheel table2`.
pub fn table2_command(args: &Table2Args) -> ExitCode {
    let mut failures = 0;
    let (outcome, md) = crate::table2::section(args.tiny, &args.output.dir(), &mut failures);
    print!("{md}");
    let mut figures = Figures::default();
    if let crate::table2::Outcome::Measured(measured) = &outcome {
        crate::table2::figures(measured, &mut figures);
    }
    finish(args.output.json_dir().as_deref(), figures, false, failures)
}

/// Runs `callwheel table1-one`.
pub fn table1_one(args: &Table1OneArgs) -> ExitCode {
    if args.n > table1::MAX_N {
        eprintln!(
            "error: N = {} is too large (at most {})",
            args.n,
            table1::MAX_N
        );
        return ExitCode::from(USAGE_ERROR);
    }
    match table1::measure(args.interface, args.n, args.pairs, args.reps) {
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

/// Runs `callwheel table2-driver`.
pub fn table2_driver(args: &Table2DriverArgs) -> ExitCode {
    match crate::table2::driver::run(args.tiny) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
