//! The command line: the clap definitions and the `bench` driver, which plans the measurements,
//! runs each in a child process under a progress bar and prints the tables.
//!
//! Exit status: 0 when every measurement succeeded, 1 when one failed or W3 fired the wrong
//! number of timers, 2 for bad input.

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

use crate::plan::{self, Settings};
use crate::registry::{SchemeInfo, SCHEMES};
use crate::report::{self, Outcome, W1Row, W3Row};
use crate::runner::{self, Task};
use crate::workload::{W1Params, W3Params, SEED};

/// `callwheel`: benchmarks of the callwheel timer schemes.
#[derive(Debug, Parser)]
#[command(name = "callwheel", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Runs the benchmark workloads of WORKLOADS.md on every scheme and prints the tables.
    Bench(BenchArgs),
    /// Runs one measurement in this process and prints one result line (what `bench` runs in
    /// each child process).
    #[command(hide = true)]
    BenchOne(BenchOneArgs),
}

/// A workload of WORKLOADS.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Workload {
    /// W1, set/cancel: ns per (cancel + start) pair with N timers outstanding.
    W1,
    /// W3, expire: ns per timer to start and fire them all, tick by tick.
    W3,
}

/// The options of `callwheel bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Workloads to run, comma-separated.
    #[arg(long = "workload", value_name = "LIST", value_delimiter = ',', default_values = ["w1", "w3"])]
    pub workloads: Vec<Workload>,
    /// Schemes to run (repeatable or comma-separated; default: all).
    #[arg(long = "scheme", value_name = "NAME", value_delimiter = ',')]
    pub schemes: Vec<String>,
    /// W1 numbers of outstanding timers, comma-separated [default: 0,1000,10000,100000,1000000].
    #[arg(long = "n", value_name = "SIZES", value_delimiter = ',')]
    pub sizes: Vec<u64>,
    /// Repetitions per measurement, each with a fresh structure [default: 5, or 1 with --quick].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: Option<u32>,
    /// Tiny sizes for a smoke test: W1 N in {0, 1000} with I = 2000, W3 with 20000 timers over
    /// 2000 ticks, 1 repetition.
    #[arg(long)]
    pub quick: bool,
    /// Run the O(n)-start schemes in W1 up to N = 100000 instead of 10000.
    #[arg(long)]
    pub full: bool,
}

/// The options of the hidden `callwheel bench-one`.
#[derive(Debug, Args)]
pub struct BenchOneArgs {
    /// The scheme.
    #[arg(long)]
    pub scheme: String,
    /// The workload.
    #[arg(long)]
    pub workload: Workload,
    /// W1: outstanding timers.
    #[arg(long)]
    pub n: Option<u64>,
    /// W1: timed pairs per repetition.
    #[arg(long, default_value_t = plan::W1_ITERS, value_parser = clap::value_parser!(u64).range(1..))]
    pub iters: u64,
    /// W3: timers.
    #[arg(long, default_value_t = plan::W3_TIMERS, value_parser = clap::value_parser!(u64).range(1..))]
    pub timers: u64,
    /// W3: ticks.
    #[arg(long, default_value_t = plan::W3_TICKS, value_parser = clap::value_parser!(u64).range(2..))]
    pub ticks: u64,
    /// Repetitions.
    #[arg(long, default_value_t = plan::DEFAULT_REPS, value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: u32,
}

/// Parses the command line and runs the command.
pub fn run() -> ExitCode {
    match Cli::parse().command {
        Command::Bench(args) => bench(&args),
        Command::BenchOne(args) => bench_one(&args),
    }
}

const USAGE_ERROR: u8 = 2;

/// The schemes `--scheme` names, in registry order without repeats; all of them when none is
/// named. `Err` is the one-line message for an unknown name.
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

fn progress_bar(total: usize) -> ProgressBar {
    let bar = ProgressBar::new(total as u64);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:30} {pos}/{len} [{elapsed_precise}] {wide_msg}")
    {
        bar.set_style(style);
    }
    if !bar.is_hidden() {
        bar.enable_steady_tick(Duration::from_secs(1));
    }
    bar
}

/// Runs one planned task in a child process under the progress bar, reporting a failure on
/// stderr as it happens.
fn measure(bar: &ProgressBar, task: &Task, failures: &mut usize) -> Outcome {
    bar.set_message(task.describe());
    let outcome = match runner::run_in_child(task) {
        Ok(report) => Outcome::Done(report),
        Err(message) => {
            *failures += 1;
            bar.suspend(|| eprintln!("error: {}: {message}", task.describe()));
            Outcome::Failed(message)
        }
    };
    bar.inc(1);
    outcome
}

fn bench(args: &BenchArgs) -> ExitCode {
    let schemes = match select_schemes(&args.schemes) {
        Ok(schemes) => schemes,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(USAGE_ERROR);
        }
    };
    let mut settings = if args.quick {
        Settings::quick()
    } else {
        Settings::standard()
    };
    if !args.sizes.is_empty() {
        settings.w1_sizes = dedup(&args.sizes);
    }
    if let Some(reps) = args.reps {
        settings.reps = reps;
    }
    settings.full = args.full;
    let workloads = dedup(&args.workloads);
    let run_w1 = workloads.contains(&Workload::W1);
    let run_w3 = workloads.contains(&Workload::W3);

    let w1_plan: Vec<(&'static SchemeInfo, u64)> = if run_w1 {
        schemes
            .iter()
            .flat_map(|&s| settings.w1_sizes.iter().map(move |&n| (s, n)))
            .collect()
    } else {
        Vec::new()
    };
    let w3_plan: Vec<&'static SchemeInfo> = if run_w3 { schemes.clone() } else { Vec::new() };
    let jobs = w1_plan
        .iter()
        .filter(|&&(s, n)| settings.w1(s, n).is_ok())
        .count()
        + w3_plan.len();

    if cfg!(debug_assertions) {
        eprintln!(
            "warning: this is a debug build; its figures are not representative (use --release)"
        );
    }
    println!(
        "callwheel bench: {} repetition{} per measurement, SplitMix64 seed {SEED}, each measurement in its own process",
        settings.reps,
        if settings.reps == 1 { "" } else { "s" }
    );

    let bar = progress_bar(jobs);
    let mut failures = 0usize;

    if run_w1 {
        let rows: Vec<W1Row> = w1_plan
            .iter()
            .map(|&(scheme, n)| match settings.w1(scheme, n) {
                Ok(params) => W1Row {
                    scheme,
                    n,
                    iters: Some(params.iters),
                    outcome: measure(&bar, &Task::W1 { scheme, params }, &mut failures),
                },
                Err(reason) => W1Row {
                    scheme,
                    n,
                    iters: None,
                    outcome: Outcome::Skipped(reason),
                },
            })
            .collect();
        let linear_note = schemes.iter().any(|s| s.complexity.linear_start);
        bar.suspend(|| {
            println!();
            println!(
                "## W1 set/cancel: ns per (cancel + start) pair, I timed pairs after N untimed starts"
            );
            println!();
            print!("{}", report::w1_table(&rows));
            if linear_note {
                let limit = if settings.full {
                    plan::LINEAR_W1_MAX_N_FULL
                } else {
                    plan::LINEAR_W1_MAX_N
                };
                println!();
                println!(
                    "O(n)-start schemes: I = clamp({} / max(N, 1), {}, {}); N > {limit} skipped{}.",
                    plan::LINEAR_W1_WORK,
                    plan::LINEAR_W1_MIN_ITERS,
                    plan::W1_ITERS,
                    if settings.full { "" } else { " (--full raises the limit to 100000)" },
                );
            }
            println!();
            println!("W1 matrix: median ns per (cancel + start) pair (rows = schemes, columns = N)");
            println!();
            print!("{}", report::w1_matrix(&rows, &settings.w1_sizes));
        });
    }

    if run_w3 {
        let rows: Vec<W3Row> = w3_plan
            .iter()
            .map(|&scheme| {
                let params = settings.w3(scheme);
                let task = Task::W3 { scheme, params };
                let row = W3Row {
                    scheme,
                    timers: params.timers,
                    ticks: params.ticks,
                    outcome: measure(&bar, &task, &mut failures),
                };
                if !row.fired_ok() {
                    failures += 1;
                    let fired = match &row.outcome {
                        Outcome::Done(r) => r.fired.map_or("no".into(), |f| f.to_string()),
                        _ => "no".into(),
                    };
                    bar.suspend(|| {
                        eprintln!(
                            "error: {}: fired {fired} timers, expected {}",
                            task.describe(),
                            params.timers
                        )
                    });
                }
                row
            })
            .collect();
        let reduced = schemes.iter().any(|s| s.complexity.any_linear());
        bar.suspend(|| {
            println!();
            println!(
                "## W3 expire: ns per timer, starts plus a tick-by-tick advance over every tick, all timed"
            );
            println!();
            print!("{}", report::w3_table(&rows));
            if reduced {
                println!();
                println!(
                    "Schemes with an O(n) start or an O(n) tick run at most {} timers (same ticks).",
                    plan::LINEAR_W3_TIMERS
                );
            }
        });
    }

    bar.finish_and_clear();
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
                    reps: args.reps,
                },
            }
        }
        Workload::W3 => Task::W3 {
            scheme,
            params: W3Params {
                timers: args.timers,
                ticks: args.ticks,
                reps: args.reps,
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
