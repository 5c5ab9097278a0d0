//! `callwheel repro`: the papers' experiments and the peer comparison in one run, with a
//! Markdown report, plots (SVG and PNG) and, with `--json`, every figure in machine-readable
//! form for `callwheel compare`.
//!
//! | experiment | what it shows |
//! |---|---|
//! | `family` | every scheme of Varghese & Lauck on W1 (cost vs N, the paper's Table I shape) and W3 |
//! | `table1` | Costello & Varghese's Table I / Figure 8 through the callout interfaces |
//! | `table2` | Costello & Varghese's Table II: instructions per call of each timer function, counted by callgrind (skipped without valgrind) |
//! | `instructions` | W1's start and stop in instructions per call: the production wheel (no value, `u64`) and the C API, N = 0 to 10⁶, counted by callgrind (skipped without valgrind) |
//! | `cost-model` | Varghese & Lauck's cost model: Scheme 6 against Scheme 7 as the wheel's size M and the timers' interval T vary |
//! | `insertion-cost` | Scheme 2's insertion searched from the head and from the rear on a simulated M/G/∞ timer queue, in the paper's units, against its `2 + 2n/3`, `2 + n/2` and `2 + n/3` |
//! | `callout-memory` | bytes per callout of the new callout table (Scheme 6 with the hash) and the original (`calltodo`), against Costello & Varghese's 9n + n–2n + 2n–4n and 4n longwords |
//! | `peers` | the production wheel against BinaryHeap, BTreeMap and tokio-util's DelayQueue on W1–W5 |
//! | `tolerant` | W2–W4 with tolerances of 1 % and 5 % beside the exact ones: the wheel (tolerant timers placed where they fire without cascading) against Linux's non-cascading wheel |
//! | `coalescing` | the wheel's wake-ups against the optimal stabbing number as tolerance grows |
//! | `latency` | callwheel-rt timers' lateness against a bare `clock_nanosleep(TIMER_ABSTIME)` loop, idle and loaded |
//! | `direct` | calloutng's direct execution (`C_DIRECT_EXEC`, run from the interrupt) against the deferred path (handed to the softclock thread): lateness of each on a real clock, in one run |
//! | `sweep` | requested against actual sleep from 1 µs to 10 ms (calloutng Figures 4–7) for callwheel-rt, raw `clock_nanosleep` and tokio, and the runtime's wake-ups at 0 % and 5 % tolerance |
//! | `stress` | `start` latency while a mass expiry runs, and the count check (every timer fired once or was stopped) |
//! | `async` | callwheel-async's sleep precision on three executors (log-log figure), timeout churn and a sleep storm, against tokio's and async-io's timers |

use std::fmt::Write as _;

use clap::Args;

use crate::experiment::{Registered, Section, Size};
use callwheel_bench::machine::Machine;
use callwheel_bench::results;

/// Every experiment, in report order: `callwheel repro` runs them one after another.
pub static EXPERIMENTS: [&dyn Registered; 15] = [
    &crate::family::Family,
    &crate::table1::experiment::Table1,
    &crate::table2::experiment::Table2,
    &crate::instructions::experiment::Instructions,
    &crate::cost_model::CostModel,
    &crate::insertion_cost::InsertionCost,
    &crate::callout_memory::CalloutMemory,
    &crate::peers::Peers,
    &crate::tolerant::Tolerant,
    &crate::coalescing::Coalescing,
    &crate::latency::experiment::Latency,
    &crate::direct_exec::DirectExec,
    &crate::sweep::Sweep,
    &crate::stress::Stress,
    &crate::async_timers::Async,
];

/// The experiments `--only` accepts: each one's name, with what it shows as its help.
fn experiment_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        EXPERIMENTS
            .iter()
            .map(|e| clap::builder::PossibleValue::new(e.name()).help(e.about())),
    )
}

/// The registered experiment called `name`.
fn experiment(name: &str) -> Option<&'static dyn Registered> {
    EXPERIMENTS.iter().copied().find(|e| e.name() == name)
}

/// The options of `callwheel repro`.
#[derive(Debug, Args)]
pub struct ReproArgs {
    /// Run only this experiment (repeatable or comma-separated).
    #[arg(long, value_delimiter = ',', value_parser = experiment_names())]
    pub only: Vec<String>,
    /// The papers' sizes (W1 to N = 1e6 and beyond, 5 repetitions): many minutes.
    #[arg(long)]
    pub full: bool,
    /// Tiny sizes that check the plumbing in seconds (for tests); the figures mean little.
    #[arg(long, conflicts_with = "full")]
    pub tiny: bool,
    /// --out DIR (the report, its plots and, with --json, every figure in results.json) and
    /// --json.
    #[command(flatten)]
    pub output: crate::flags::Output,
}

/// Runs `callwheel repro`. Returns the process exit code: 0, 1 when a measurement failed,
/// 2 for bad input (an unknown experiment, an unwritable output directory).
pub fn run(args: &ReproArgs) -> u8 {
    let out = args.output.dir();
    // The names `--only` gave, checked: an unknown name is bad input.
    let mut selected: Vec<&'static str> = Vec::new();
    for name in &args.only {
        let Some(e) = experiment(name) else {
            eprintln!("error: no experiment {name}");
            return 2;
        };
        if !selected.contains(&e.name()) {
            selected.push(e.name());
        }
    }
    if let Err(message) = args.output.prepare() {
        eprintln!("error: {message}");
        return 2;
    }
    crate::experiment::warn_if_debug();
    let size = Size::from_flags(args.tiny, args.full);
    let machine = Machine::read();
    let started = std::time::Instant::now();
    let mut all = Section::default();
    let chosen = EXPERIMENTS
        .iter()
        .filter(|e| selected.is_empty() || selected.contains(&e.name()));
    for e in chosen {
        eprintln!("repro: {} ...", e.name());
        all.append(e.run_at(size, &out));
    }
    let elapsed = started.elapsed().as_secs_f64();

    let mut summary = String::from("| experiment | finding | result |\n|---|---|---|\n");
    for f in &all.findings {
        let _ = writeln!(summary, "| {} | {} | {} |", f.experiment, f.what, f.verdict);
    }

    let mut report = String::new();
    let _ = writeln!(report, "# callwheel repro\n");
    let _ = writeln!(
        report,
        "Run on {} UTC in {elapsed:.0} s ({} sizes), callwheel {}.\n",
        machine.date,
        size.describe(),
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(report, "| machine | |\n|---|---|");
    let _ = writeln!(report, "| CPU | {} |", machine.cpu);
    let _ = writeln!(report, "| cores | {} |", machine.cores);
    let _ = writeln!(report, "| kernel | {} |", machine.kernel);
    let _ = writeln!(report, "| clocksource | {} |", machine.clocksource);
    let _ = writeln!(report, "| timer slack | {} ns |", machine.timer_slack_ns);
    let _ = writeln!(report, "\n## Summary\n\n{summary}");
    let _ = writeln!(
        report,
        "Figures are medians over repetitions, each measurement in its own process; compare within this run (ratios), not across machines or runs.\n"
    );
    report.push_str(&all.markdown);
    let report_path = out.join("REPORT.md");
    if let Err(e) = std::fs::write(&report_path, report) {
        eprintln!("error: cannot write {}: {e}", report_path.display());
        return 2;
    }
    if args.output.json {
        let results = all.figures.clone().into_results(machine.clone(), args.full);
        if let Err(e) = results::write(&out, &results) {
            eprintln!("error: {e}");
            return 2;
        }
    }
    println!("# callwheel repro: summary ({elapsed:.0} s)\n");
    print!("{summary}");
    println!("\nReport: {}", report_path.display());
    if all.failures > 0 {
        eprintln!("error: {} measurement(s) failed", all.failures);
        1
    } else {
        0
    }
}
