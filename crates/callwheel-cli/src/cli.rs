//! The command line: the clap definitions and the `bench` driver, which plans the measurements,
//! runs each in a child process under a progress bar and prints the tables.
//!
//! Exit status: 0 when every measurement succeeded, 1 when one failed or its counts were wrong
//! (W2's expiries, W3's and W4's fired timers, W5's windows, for an exact structure), 2 for bad
//! input.

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};

use crate::plan::{self, Settings};
use crate::registry::{SchemeInfo, SCHEMES};
use crate::report::{self, Outcome, RatioEntry, W1Row, W2Row, W3Row, W4Row, W5Row};
use crate::runner::{self, Task};
use crate::table1;
use crate::workload::{self, W1Params, W2Params, W3Params, W4Params, W5Params, SEED};

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
    /// Reproduces Costello & Varghese's Table I and Figure 8: cancel + set one callout with N
    /// others outstanding, old callout against new (hash and handle interfaces).
    Table1(Table1Args),
    /// Runs one Table I measurement in this process (what `table1` runs in each child).
    #[command(hide = true)]
    Table1One(Table1OneArgs),
    /// The hrtimers latency table: lateness of callwheel-rt timers against a bare
    /// `clock_nanosleep(TIMER_ABSTIME)` loop, interleaved in one run.
    Latency(crate::latency::LatencyArgs),
}

/// The options of `callwheel table1`.
#[derive(Debug, Args)]
pub struct Table1Args {
    /// Numbers of outstanding callouts, comma-separated [default: 0,200,400,600,800,1000,10000,100000,1000000].
    #[arg(long = "n", value_name = "SIZES", value_delimiter = ',')]
    pub sizes: Vec<u64>,
    /// Repetitions per measurement, each with a fresh table [default: 5; 1 with --quick].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: Option<u32>,
    /// Tiny sizes for a smoke test: N in {0, 200, 1000}, 1 repetition.
    #[arg(long)]
    pub quick: bool,
    /// Directory for the plot (`table1.svg`).
    #[arg(long, value_name = "DIR", default_value = "report")]
    pub out: std::path::PathBuf,
}

/// The options of the hidden `callwheel table1-one`.
#[derive(Debug, Args)]
pub struct Table1OneArgs {
    /// The interface.
    #[arg(long, value_enum)]
    pub interface: table1::Interface,
    /// Outstanding callouts.
    #[arg(long)]
    pub n: u64,
    /// Timed (cancel + set) pairs per repetition.
    #[arg(long, default_value_t = table1::PAIRS, value_parser = clap::value_parser!(u64).range(1..))]
    pub pairs: u64,
    /// Repetitions.
    #[arg(long, default_value_t = plan::DEFAULT_REPS, value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: u32,
}

/// A workload of WORKLOADS.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Workload {
    /// W1, set/cancel: ns per (cancel + start) pair with N timers outstanding.
    W1,
    /// W2, churn: ns per step of start / pop the oldest / cancel it 95 % of the time, with the
    /// expiry count.
    W2,
    /// W3, expire: ns per timer to start and fire them all, tick by tick.
    W3,
    /// W4, sparse advance: ns per timer to start 1000 far-apart timers and jump from one
    /// deadline to the next, with the jump count.
    W4,
    /// W5, coalescing: wake-ups against the optimum for windows of 5 % and of 0.
    W5,
    /// Table I: Costello & Varghese's experiment through the callout interfaces (see
    /// `callwheel table1`).
    Table1,
}

/// The options of `callwheel bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Workloads to run, comma-separated.
    #[arg(long = "workload", value_name = "LIST", value_delimiter = ',', default_values = ["w1", "w2", "w3", "w4", "w5", "table1"])]
    pub workloads: Vec<Workload>,
    /// Structures to run (repeatable or comma-separated; default: all).
    #[arg(long = "scheme", value_name = "NAME", value_delimiter = ',')]
    pub schemes: Vec<String>,
    /// W1 numbers of outstanding timers, comma-separated [default: 0,1000,10000,100000,1000000].
    #[arg(long = "n", value_name = "SIZES", value_delimiter = ',')]
    pub sizes: Vec<u64>,
    /// Repetitions per measurement, each with a fresh structure [default: 5, W4 15; 1 with
    /// --quick].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: Option<u32>,
    /// Tiny sizes for a smoke test: W1 N in {0, 1000} with I = 2000, W2 with N = 1000 and 20000
    /// steps, W3 with 20000 timers over 2000 ticks, W4 with 100 timers, W5 with 2000 timers,
    /// 1 repetition.
    #[arg(long)]
    pub quick: bool,
    /// Run the O(n)-start schemes in W1 up to N = 100000 instead of 10000.
    #[arg(long)]
    pub full: bool,
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
    /// W1: outstanding timers; W2: timers in flight [W2 default: 100000].
    #[arg(long)]
    pub n: Option<u64>,
    /// W1: timed pairs per repetition.
    #[arg(long, default_value_t = plan::W1_ITERS, value_parser = clap::value_parser!(u64).range(1..))]
    pub iters: u64,
    /// W2: timed steps per repetition.
    #[arg(long, default_value_t = plan::W2_STEPS, value_parser = clap::value_parser!(u64).range(1..))]
    pub steps: u64,
    /// W3, W4, W5: timers [defaults 1000000, 1000, 100000].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub timers: Option<u64>,
    /// W3: ticks; W4, W5: deadlines are drawn from [1, ticks) [defaults 100000, 1e9, 1e6].
    #[arg(long, value_parser = clap::value_parser!(u64).range(2..))]
    pub ticks: Option<u64>,
    /// W5: the tolerant case's tolerance, in percent of the deadline.
    #[arg(long, default_value_t = plan::W5_TOLERANCE_PERCENT)]
    pub tolerance: u64,
    /// Repetitions [default: 5, W4 15].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: Option<u32>,
}

/// Parses the command line and runs the command.
pub fn run() -> ExitCode {
    match Cli::parse().command {
        Command::Bench(args) => bench(&args),
        Command::BenchOne(args) => bench_one(&args),
        Command::Table1(args) => table1_command(&args),
        Command::Table1One(args) => table1_one(&args),
        Command::Latency(args) => crate::latency::command(&args),
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

/// Counts a wrong result as a failure and says so on stderr.
fn complain(bar: &ProgressBar, failures: &mut usize, what: String) {
    *failures += 1;
    bar.suspend(|| eprintln!("error: {what}"));
}

/// Prints the ratio table under a workload's table, when the run holds the facility and a peer.
fn print_ratios(entries: &[RatioEntry], columns: &[String]) {
    if let Some(table) = report::ratio_table(entries, columns) {
        println!();
        println!(
            "Peers against the facility: each peer's median divided by the wheel's median, from this run (above 1: the wheel is faster)"
        );
        println!();
        print!("{table}");
    }
}

fn heading(text: &str) {
    println!();
    println!("{text}");
    println!();
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
        settings.set_reps(reps);
    }
    settings.full = args.full;
    let workloads = dedup(&args.workloads);
    let runs = |w: Workload| workloads.contains(&w);

    let w1_plan: Vec<(&'static SchemeInfo, u64)> = if runs(Workload::W1) {
        schemes
            .iter()
            .flat_map(|&s| settings.w1_sizes.iter().map(move |&n| (s, n)))
            .collect()
    } else {
        Vec::new()
    };
    let only = |w: Workload| if runs(w) { schemes.clone() } else { Vec::new() };
    let (w2_plan, w3_plan, w4_plan, w5_plan) = (
        only(Workload::W2),
        only(Workload::W3),
        only(Workload::W4),
        only(Workload::W5),
    );
    let jobs = w1_plan
        .iter()
        .filter(|&&(s, n)| settings.w1(s, n).is_ok())
        .count()
        + w2_plan.iter().filter(|s| settings.w2(s).is_ok()).count()
        + w3_plan.len()
        + w4_plan.iter().filter(|s| settings.w4(s).is_ok()).count()
        + w5_plan.iter().filter(|s| settings.w5(s).is_ok()).count();

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

    let bar = progress_bar(jobs);
    let mut failures = 0usize;

    if runs(Workload::W1) {
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
        let unmeasured = schemes.iter().any(|s| !s.caps.memory);
        bar.suspend(|| {
            heading(
                "## W1 set/cancel: ns per (cancel + start) pair, I timed pairs after N untimed starts",
            );
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
            if unmeasured {
                println!();
                println!(
                    "bytes/timer n/a: the peer's memory is not observable from outside, and is not guessed."
                );
            }
            heading("W1 matrix: median ns per (cancel + start) pair (rows = schemes, columns = N)");
            print!("{}", report::w1_matrix(&rows, &settings.w1_sizes));
            let entries: Vec<RatioEntry> = rows
                .iter()
                .map(|r| (r.scheme, format!("N={}", r.n), report::median_of(&r.outcome)))
                .collect();
            let columns: Vec<String> = settings.w1_sizes.iter().map(|n| format!("N={n}")).collect();
            print_ratios(&entries, &columns);
        });
    }

    if runs(Workload::W2) {
        let mut expected: Vec<(u64, u64)> = Vec::new();
        let rows: Vec<W2Row> = w2_plan
            .iter()
            .map(|&scheme| match settings.w2(scheme) {
                Ok(params) => {
                    let want = match expected.iter().find(|e| e.0 == params.n) {
                        Some(&(_, count)) => count,
                        None => {
                            let count = workload::w2_expected(params.n, params.steps);
                            expected.push((params.n, count));
                            let standard = (params.n, params.steps) == (plan::W2_N, plan::W2_STEPS);
                            if standard && count != plan::W2_EXPECTED {
                                complain(
                                    &bar,
                                    &mut failures,
                                    format!(
                                        "the W2 replay gives {count} expiries, WORKLOADS.md says {}",
                                        plan::W2_EXPECTED
                                    ),
                                );
                            }
                            count
                        }
                    };
                    let task = Task::W2 { scheme, params };
                    let row = W2Row {
                        scheme,
                        n: Some(params.n),
                        steps: params.steps,
                        expected: want,
                        outcome: measure(&bar, &task, &mut failures),
                    };
                    if !row.count_ok() {
                        let got = match &row.outcome {
                            Outcome::Done(r) => r.fired.map_or("no".into(), |f| f.to_string()),
                            _ => "no".into(),
                        };
                        complain(
                            &bar,
                            &mut failures,
                            format!("{}: {got} expiries, expected {want}", task.describe()),
                        );
                    }
                    row
                }
                Err(reason) => W2Row {
                    scheme,
                    n: None,
                    steps: settings.w2_steps,
                    expected: 0,
                    outcome: Outcome::Skipped(reason),
                },
            })
            .collect();
        let reduced_n =
            settings.w2_n > plan::LINEAR_W2_N && schemes.iter().any(|s| s.complexity.any_linear());
        let skipped = schemes.iter().any(|s| settings.w2(s).is_err());
        bar.suspend(|| {
            heading(&format!(
                "## W2 churn: ns per step (start, pop the oldest, cancel it 95 % of the time; 1 tick per {} steps), N timers in flight",
                workload::W2_STEPS_PER_TICK
            ));
            print!("{}", report::w2_table(&rows));
            println!();
            let counts: Vec<String> = expected
                .iter()
                .map(|(n, c)| format!("{c} at N = {n}"))
                .collect();
            if !counts.is_empty() {
                println!(
                    "Expected expiries for every exact structure (replayed from the draws alone, no timer structure): {}.",
                    counts.join(", ")
                );
            }
            println!(
                "A lossy structure (Scheme 7 with one or no migration) fires timers late: its count is reported, flagged, not checked."
            );
            if reduced_n {
                println!(
                    "Structures with an O(n) tick or an O(n) start run W2 with N = {} in flight instead of {} (the N column says which).",
                    plan::LINEAR_W2_N,
                    settings.w2_n,
                );
            }
            if skipped {
                println!(
                    "O(n)-start structures are skipped above {} steps: even at N = {} they hold about 12 000 timers (the 5 % left to expire stay some 200 ticks) and every start walks them: 70-80 us per step, some 2.5 minutes per repetition.",
                    plan::LINEAR_START_W2_MAX_STEPS,
                    plan::LINEAR_W2_N,
                );
            }
            let entries: Vec<RatioEntry> = rows
                .iter()
                .map(|r| (r.scheme, "ns/step".to_string(), report::median_of(&r.outcome)))
                .collect();
            print_ratios(&entries, &["ns/step".to_string()]);
        });
    }

    if runs(Workload::W3) {
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
                    let fired = match &row.outcome {
                        Outcome::Done(r) => r.fired.map_or("no".into(), |f| f.to_string()),
                        _ => "no".into(),
                    };
                    complain(
                        &bar,
                        &mut failures,
                        format!(
                            "{}: fired {fired} timers, expected {}",
                            task.describe(),
                            params.timers
                        ),
                    );
                }
                row
            })
            .collect();
        let reduced = schemes.iter().any(|s| s.complexity.any_linear());
        bar.suspend(|| {
            heading(
                "## W3 expire: ns per timer, starts plus a tick-by-tick advance over every tick, all timed",
            );
            print!("{}", report::w3_table(&rows));
            if reduced {
                println!();
                println!(
                    "Schemes with an O(n) start or an O(n) tick run at most {} timers (same ticks).",
                    plan::LINEAR_W3_TIMERS
                );
            }
            let entries: Vec<RatioEntry> = rows
                .iter()
                .map(|r| (r.scheme, "ns/timer".to_string(), report::median_of(&r.outcome)))
                .collect();
            print_ratios(&entries, &["ns/timer".to_string()]);
        });
    }

    if runs(Workload::W4) {
        let rows: Vec<W4Row> = w4_plan
            .iter()
            .map(|&scheme| match settings.w4(scheme) {
                Ok(params) => {
                    let task = Task::W4 { scheme, params };
                    let row = W4Row {
                        scheme,
                        timers: params.timers,
                        outcome: measure(&bar, &task, &mut failures),
                    };
                    if !row.fired_ok() {
                        complain(
                            &bar,
                            &mut failures,
                            format!(
                                "{}: did not fire all {} timers",
                                task.describe(),
                                params.timers
                            ),
                        );
                    }
                    row
                }
                Err(reason) => W4Row {
                    scheme,
                    timers: settings.w4_timers,
                    outcome: Outcome::Skipped(reason),
                },
            })
            .collect();
        bar.suspend(|| {
            heading(&format!(
                "## W4 sparse advance: ns per timer, {} starts in [1, {}) then advance(d) at every d the structure's wake-up query names, all timed",
                settings.w4_timers, settings.w4_ticks
            ));
            print!("{}", report::w4_table(&rows));
            println!();
            println!(
                "Wake-up query: next_wakeup() for the wheel, next_expiry() for every other structure; a coarse answer (a slot or cascade boundary) only adds jumps. Scheme 7's binary layouts run W4 with 5 levels of 64 slots (4 levels span 2^24 ticks)."
            );
            let entries: Vec<RatioEntry> = rows
                .iter()
                .map(|r| (r.scheme, "ns/timer".to_string(), report::median_of(&r.outcome)))
                .collect();
            print_ratios(&entries, &["ns/timer".to_string()]);
        });
    }

    if runs(Workload::W5) {
        let rows: Vec<W5Row> = w5_plan
            .iter()
            .map(|&scheme| match settings.w5(scheme) {
                Ok(params) => {
                    let task = Task::W5 { scheme, params };
                    let row = W5Row {
                        scheme,
                        timers: params.timers,
                        tolerance_percent: params.tolerance_percent,
                        outcome: measure(&bar, &task, &mut failures),
                    };
                    if let Some(problem) = row.problem() {
                        complain(
                            &bar,
                            &mut failures,
                            format!("{}: {problem}", task.describe()),
                        );
                    }
                    row
                }
                Err(reason) => W5Row {
                    scheme,
                    timers: settings.w5_timers,
                    tolerance_percent: settings.w5_tolerance_percent,
                    outcome: Outcome::Skipped(reason),
                },
            })
            .collect();
        let reduced = settings.w5_timers > plan::LINEAR_W5_TIMERS
            && schemes
                .iter()
                .any(|s| s.complexity.linear_start && settings.w5(s).is_ok());
        bar.suspend(|| {
            heading(&format!(
                "## W5 coalescing: {} timers at d in [1, {}), window [d, d + tol]; wake repeatedly at the structure's wake-up query and advance there until empty",
                settings.w5_timers, settings.w5_ticks
            ));
            print!("{}", report::w5_table(&rows));
            println!();
            println!(
                "wake-ups: advance calls. optimum: the fewest instants stabbing every window (greedy: sort by end, take the end of the first unstabbed window); at tolerance 0, the distinct deadlines. ratio = wake-ups / optimum."
            );
            println!(
                "violations: timers whose wake-up instant or callback time (timers.now()) fell outside [d, d + tol]; an error for an exact structure, reported for a lossy one."
            );
            println!(
                "Tolerance {} % (tol = d * {} / 100) needs start_with: only the wheel takes it, every other structure runs tolerance 0 only. ns/timer covers the starts and the whole drive; the counts are what W5 is about.",
                settings.w5_tolerance_percent, settings.w5_tolerance_percent
            );
            if reduced {
                println!(
                    "O(n)-start structures run W5 with at most {} timers (the timers column says which): at 100000 their sorted inserts take about two minutes per repetition.",
                    plan::LINEAR_W5_TIMERS
                );
            }
            let entries: Vec<RatioEntry> = rows
                .iter()
                .map(|r| (r.scheme, "ns/timer, tol 0".to_string(), report::median_of(&r.outcome)))
                .collect();
            print_ratios(&entries, &["ns/timer, tol 0".to_string()]);
        });
    }

    bar.finish_and_clear();
    if runs(Workload::Table1) {
        let sizes: &[u64] = if args.quick {
            &table1::QUICK_SIZES
        } else {
            &table1::SIZES
        };
        failures += run_table1(sizes, settings.reps, std::path::Path::new("report"));
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

/// Runs Table I at `sizes`, prints it with its verdicts and writes `out/table1.svg`. Returns
/// the number of failures.
fn run_table1(sizes: &[u64], reps: u32, out: &std::path::Path) -> usize {
    let interfaces = table1::Interface::ALL;
    let bar = progress_bar(sizes.len() * interfaces.len());
    let mut failures = 0;
    let rows: Vec<table1::Row> = sizes
        .iter()
        .map(|&n| table1::Row {
            n,
            cells: interfaces
                .iter()
                .map(|&iface| {
                    bar.set_message(format!("table1 {} N={n}", iface.name()));
                    let cell = table1::run_in_child(iface, n, reps);
                    if let Err(e) = &cell {
                        failures += 1;
                        bar.suspend(|| eprintln!("error: table1 {} N={n}: {e}", iface.name()));
                    }
                    bar.inc(1);
                    cell
                })
                .collect(),
        })
        .collect();
    bar.finish_and_clear();
    heading(&format!(
        "## Table I (Costello & Varghese): ns per (cancel + set) of one callout, N others outstanding; median of {reps} repetition{}, each table in its own process",
        if reps == 1 { "" } else { "s" }
    ));
    print!("{}", table1::table(&rows));
    println!();
    println!(
        "Timed pairs: {} per repetition; the old list {} / N, clamped to [{}, {}] (its insert walks all N). Outstanding callouts are due in [2^30, 2^31) ticks, the timed one after all of them.",
        table1::PAIRS,
        table1::OLD_WORK,
        table1::OLD_MIN_PAIRS,
        table1::PAIRS
    );
    for line in table1::verdicts(&rows) {
        println!("- {line}");
    }
    let written = std::fs::create_dir_all(out)
        .map_err(|e| format!("cannot create {}: {e}", out.display()))
        .and_then(|()| table1::plot(&rows, &out.join("table1.svg")));
    match written {
        Ok(()) => println!("Figure 8: {}", out.join("table1.svg").display()),
        Err(e) => {
            eprintln!("error: {e}");
            failures += 1;
        }
    }
    failures
}

fn table1_command(args: &Table1Args) -> ExitCode {
    let sizes = if !args.sizes.is_empty() {
        dedup(&args.sizes)
    } else if args.quick {
        table1::QUICK_SIZES.to_vec()
    } else {
        table1::SIZES.to_vec()
    };
    if let Some(&n) = sizes.iter().find(|&&n| n > table1::MAX_N) {
        eprintln!("error: N = {n} is too large (at most {})", table1::MAX_N);
        return ExitCode::from(USAGE_ERROR);
    }
    let reps = args
        .reps
        .unwrap_or(if args.quick { 1 } else { plan::DEFAULT_REPS });
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: this is a debug build; its figures are not representative (use --release)"
        );
    }
    if run_table1(&sizes, reps, &args.out) > 0 {
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
