//! The command line: the clap definitions and the `bench` driver, which plans the measurements,
//! runs each in a child process under a progress bar and prints the tables.
//!
//! Exit status: 0 when every measurement succeeded, 1 when one failed or its counts were wrong
//! (W2's expiries, W3's and W4's fired timers, W5's windows, for an exact structure), 2 for bad
//! input.

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::plan::{self, Settings};
use crate::registry::{SchemeInfo, SCHEMES};
use crate::results::{self, Figures};
use crate::runner::{self, Task};
use crate::sections;
use crate::table1;
use crate::workload::{W1Params, W2Params, W3Params, W4Params, W5Params, SEED};

/// The workloads `bench` runs (defined beside the structures' constructors).
pub use crate::registry::Workload;

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
    /// Runs the papers' experiments and the peer comparison, writes a report with plots
    /// (default `report/REPORT.md`) and prints a summary.
    Repro(crate::repro::ReproArgs),
    /// Prints the ratio B / A of every figure two `repro --json` runs share.
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
    Latency(crate::latency::LatencyCommand),
    /// calloutng's Figures 4–7: requested against actual sleep from 1 µs to 10 ms for
    /// callwheel-rt (exact and 5 % tolerance), raw `clock_nanosleep`, `tokio::time::sleep`, `callwheel_async::sleep` and `async_io::Timer`,
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

/// The options of `callwheel table1`.
#[derive(Debug, Args)]
pub struct Table1Args {
    /// Numbers of outstanding callouts, comma-separated, each at most 10^8 [default: 0,200,400,600,800,1000,10000,100000,1000000].
    #[arg(long = "n", value_name = "SIZES", value_delimiter = ',', value_parser = clap::value_parser!(u64).range(0..=plan::MAX_TIMERS_ARG))]
    pub sizes: Vec<u64>,
    /// Repetitions per measurement (1 to 1000), each with a fresh table [default: 5; 1 with --tiny].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=plan::MAX_REPS_ARG))]
    pub reps: Option<u32>,
    /// Tiny sizes that check the plumbing: N in {0, 200, 1000}, 1 repetition.
    #[arg(long)]
    pub tiny: bool,
    /// Where files go: the plot (`table1.svg`, `table1.png`), and `results.json` with --json.
    #[arg(long, value_name = "DIR", default_value = crate::sections::DEFAULT_OUT)]
    pub out: std::path::PathBuf,
    /// Also write the figures as JSON to DIR/results.json.
    #[arg(long)]
    pub json: bool,
}

/// The options of `callwheel table2`.
#[derive(Debug, Args)]
pub struct Table2Args {
    /// Tiny sizes that check the plumbing: three points per line instead of five.
    #[arg(long)]
    pub tiny: bool,
    /// Where files go: the plot (`table2.svg`, `table2.png`), and `results.json` with --json.
    #[arg(long, value_name = "DIR", default_value = crate::sections::DEFAULT_OUT)]
    pub out: std::path::PathBuf,
    /// Also write the figures as JSON to DIR/results.json.
    #[arg(long)]
    pub json: bool,
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

/// The options of `callwheel bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Workloads to run, comma-separated.
    #[arg(long = "workload", value_name = "LIST", value_delimiter = ',', default_values = ["w1", "w2", "w3", "w4", "w5", "table1"])]
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
    /// Tiny sizes that check the plumbing: W1 N in {0, 1000} with I = 2000, W2 with N = 1000 and
    /// 20000 steps, W3 with 20000 timers over 2000 ticks, W4 with 100 timers, W5 with 2000
    /// timers, 1 repetition; the figures mean little.
    #[arg(long)]
    pub tiny: bool,
    /// Run the O(n)-start schemes in W1 up to N = 100000 instead of 10000.
    #[arg(long)]
    pub full: bool,
    /// Where files go: Table I's plot, and `results.json` with --json.
    #[arg(long, value_name = "DIR", default_value = crate::sections::DEFAULT_OUT)]
    pub out: std::path::PathBuf,
    /// Also write the figures as JSON to DIR/results.json.
    #[arg(long)]
    pub json: bool,
}

/// The structures `--scheme` accepts: each registry name, its label as a hidden alias.
fn scheme_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        crate::registry::SCHEMES
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
    /// W5: the tolerant case's tolerance, in percent of the deadline (0 to 100).
    #[arg(long, default_value_t = plan::W5_TOLERANCE_PERCENT, value_parser = clap::value_parser!(u64).range(0..=100))]
    pub tolerance: u64,
    /// Repetitions, 1 to 1000 [default: 5, W4 15].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=plan::MAX_REPS_ARG))]
    pub reps: Option<u32>,
}

/// Parses the command line and runs the command.
pub fn run() -> ExitCode {
    match Cli::parse().command {
        Command::Bench(args) => bench(&args),
        Command::BenchOne(args) => bench_one(&args),
        Command::Table1(args) => table1_command(&args),
        Command::Table1One(args) => table1_one(&args),
        Command::Table2(args) => table2_command(&args),
        Command::Table2Driver(args) => match crate::table2::driver::run(args.tiny) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("error: {message}");
                ExitCode::FAILURE
            }
        },
        Command::Repro(args) => ExitCode::from(crate::repro::run(&args)),
        Command::Compare { a, b } => compare(&a, &b),
        Command::Latency(args) => crate::latency::command(&args),
        Command::Sweep(args) => crate::sweep::command(&args),
        Command::Async(args) => crate::async_timers::command(&args),
        Command::Stress(args) => crate::stress::command(&args),
    }
}

const USAGE_ERROR: u8 = 2;

/// The structures `--scheme` names, in registry order without repeats; all of them when none
/// is named. `Err` is the one-line message for an unknown name.
pub fn select_schemes(names: &[String]) -> Result<Vec<&'static SchemeInfo>, String> {
    if names.is_empty() {
        return Ok(SCHEMES.iter().collect());
    }
    let mut chosen = Vec::new();
    for name in names {
        chosen.push(runner::scheme_by_name(name.trim())?.name);
    }
    Ok(SCHEMES
        .iter()
        .filter(|s| chosen.contains(&s.name))
        .collect())
}

fn dedup<T: PartialEq + Copy>(items: &[T]) -> Vec<T> {
    let mut out = Vec::new();
    for &item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

fn bench(args: &BenchArgs) -> ExitCode {
    let schemes = match select_schemes(&args.schemes) {
        Ok(schemes) => schemes,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(USAGE_ERROR);
        }
    };
    let mut settings = if args.tiny {
        Settings::tiny()
    } else {
        Settings::standard()
    };
    if !args.sizes.is_empty() {
        settings.w1_sizes = dedup(&args.sizes);
    }
    if let Some(reps) = args.reps {
        settings.set_reps(reps);
    }
    settings.full = args.full;
    let workloads = dedup(&args.workloads);
    let runs = |w: Workload| workloads.contains(&w);

    let which: Vec<&str> = [
        (Workload::W1, "w1"),
        (Workload::W2, "w2"),
        (Workload::W3, "w3"),
        (Workload::W4, "w4"),
        (Workload::W5, "w5"),
    ]
    .iter()
    .filter(|(w, _)| runs(*w))
    .map(|&(_, name)| name)
    .collect();
    let jobs = sections::jobs(&settings, &schemes, &which);

    if cfg!(debug_assertions) {
        eprintln!(
            "warning: this is a debug build; its figures are not representative (use --release)"
        );
    }
    let plural = |n: u32| if n == 1 { "" } else { "s" };
    println!(
        "callwheel bench: {} repetition{} per measurement{}, SplitMix64 seed {SEED}, each measurement in its own process",
        settings.reps,
        plural(settings.reps),
        if runs(Workload::W4) && settings.w4_reps != settings.reps {
            format!(" (W4: {})", settings.w4_reps)
        } else {
            String::new()
        }
    );

    let bar = sections::progress_bar(jobs);
    let mut failures = 0usize;
    // The figures for --json, under the experiment name `bench` (and `table1`), with the cases
    // `repro` names them by.
    let mut figures = Figures::default();

    if runs(Workload::W1) {
        let (rows, md) = sections::w1(&settings, &schemes, &bar, &mut failures);
        bar.suspend(|| print!("{md}"));
        for r in &rows {
            figures.outcome("bench", r.scheme.name, &format!("w1 N={}", r.n), &r.outcome);
        }
    }

    if runs(Workload::W2) {
        let (rows, md) = sections::w2(&settings, &schemes, &bar, &mut failures);
        bar.suspend(|| print!("{md}"));
        for r in &rows {
            figures.outcome("bench", r.scheme.name, "w2", &r.outcome);
        }
    }

    if runs(Workload::W3) {
        let (rows, md) = sections::w3(&settings, &schemes, &bar, &mut failures);
        bar.suspend(|| print!("{md}"));
        for r in &rows {
            figures.outcome("bench", r.scheme.name, "w3", &r.outcome);
        }
    }

    if runs(Workload::W4) {
        let (rows, md) = sections::w4(&settings, &schemes, &bar, &mut failures);
        bar.suspend(|| print!("{md}"));
        for r in &rows {
            figures.outcome("bench", r.scheme.name, "w4", &r.outcome);
        }
    }

    if runs(Workload::W5) {
        let (rows, md) = sections::w5(&settings, &schemes, &bar, &mut failures);
        bar.suspend(|| print!("{md}"));
        for r in &rows {
            figures.outcome("bench", r.scheme.name, "w5", &r.outcome);
        }
    }

    bar.finish_and_clear();
    if runs(Workload::Table1) {
        let sizes: &[u64] = if args.tiny {
            &table1::TINY_SIZES
        } else {
            &table1::SIZES
        };
        failures += run_table1(sizes, settings.reps, &args.out, &mut figures);
    }
    if args.json {
        if let Err(code) = results::save(figures, args.full, &args.out) {
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

fn bench_one(args: &BenchOneArgs) -> ExitCode {
    let scheme = match runner::scheme_by_name(&args.scheme) {
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
                reps,
            },
        },
        Workload::W3 => Task::W3 {
            scheme,
            params: W3Params {
                timers: args.timers.unwrap_or(plan::W3_TIMERS),
                ticks: args.ticks.unwrap_or(plan::W3_TICKS),
                reps,
            },
        },
        Workload::W4 => Task::W4 {
            scheme,
            params: W4Params {
                timers: args.timers.unwrap_or(plan::W4_TIMERS),
                ticks: args.ticks.unwrap_or(plan::W4_TICKS),
                reps: args.reps.unwrap_or(plan::W4_REPS),
            },
        },
        Workload::Table1 => {
            eprintln!("error: bench-one does not run table1 (use table1-one)");
            return ExitCode::from(USAGE_ERROR);
        }
        Workload::W5 => Task::W5 {
            scheme,
            params: W5Params {
                timers: args.timers.unwrap_or(plan::W5_TIMERS),
                ticks: args.ticks.unwrap_or(plan::W5_TICKS),
                tolerance_percent: args.tolerance,
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

/// Runs Table I at `sizes`, prints it with its verdicts, writes `out/table1.svg` and adds its
/// figures to `figures`. Returns the number of failures.
fn run_table1(sizes: &[u64], reps: u32, out: &std::path::Path, figures: &mut Figures) -> usize {
    let mut failures = 0;
    let (rows, md) = table1::section(sizes, reps, out, &mut failures);
    print!("{md}");
    table1::figures(&rows, figures);
    failures
}

fn table1_command(args: &Table1Args) -> ExitCode {
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
    let failures = run_table1(&sizes, reps, &args.out, &mut figures);
    if args.json {
        if let Err(code) = results::save(figures, false, &args.out) {
            return code;
        }
    }
    if failures > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn table2_command(args: &Table2Args) -> ExitCode {
    let mut failures = 0;
    let (outcome, md) = crate::table2::section(args.tiny, &args.out, &mut failures);
    print!("{md}");
    if args.json {
        let mut figures = Figures::default();
        if let crate::table2::Outcome::Measured(measured) = &outcome {
            crate::table2::figures(measured, &mut figures);
        }
        if let Err(code) = results::save(figures, false, &args.out) {
            return code;
        }
    }
    if failures > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn table1_one(args: &Table1OneArgs) -> ExitCode {
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

fn compare(a: &std::path::Path, b: &std::path::Path) -> ExitCode {
    match (crate::compare::load(a), crate::compare::load(b)) {
        (Ok(a), Ok(b)) => {
            print!("{}", crate::compare::table(&a, &b));
            ExitCode::SUCCESS
        }
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(USAGE_ERROR)
        }
    }
}
