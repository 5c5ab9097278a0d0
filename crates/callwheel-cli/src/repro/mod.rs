//! `callwheel repro`: the papers' experiments and the peer comparison in one run, with a
//! Markdown report, plots (SVG and PNG) and, with `--json`, every figure in machine-readable
//! form for `callwheel compare`.
//!
//! | experiment | what it shows |
//! |---|---|
//! | `family` | every scheme of Varghese & Lauck on W1 (cost vs N, the paper's Table I shape) and W3 |
//! | `table1` | Costello & Varghese's Table I / Figure 8 through the callout interfaces |
//! | `table2` | Costello & Varghese's Table II: instructions per call of each timer function, counted by callgrind (skipped without valgrind) |
//! | `cost-model` | Varghese & Lauck's cost model: Scheme 6 against Scheme 7 as the wheel's size M and the timers' interval T vary |
//! | `peers` | the production wheel against BinaryHeap, BTreeMap and tokio-util's DelayQueue on W1–W5 |
//! | `coalescing` | the wheel's wake-ups against the optimal stabbing number as tolerance grows |
//! | `latency` | callwheel-rt timers' lateness against a bare `clock_nanosleep(TIMER_ABSTIME)` loop, idle and loaded |
//! | `sweep` | requested against actual sleep from 1 µs to 10 ms (calloutng Figures 4–7) for callwheel-rt, raw `clock_nanosleep` and tokio, and the runtime's wake-ups at 0 % and 5 % tolerance |
//! | `stress` | `start` latency while a mass expiry runs, and the count check (every timer fired once or was stopped) |
//! | `async` | callwheel-async's sleep precision on three executors (log-log figure), timeout churn and a sleep storm, against tokio's and async-io's timers |

mod async_timers;
mod coalescing;
mod cost_model;
mod latency;
mod papers;
mod peers;
pub mod plots;
mod stress;
mod sweep;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use crate::machine::Machine;
use crate::registry::{SchemeInfo, SCHEMES};
use crate::report::Outcome;
use crate::results::{self, Figures};
use plots::Chart;

/// The experiments, in report order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Experiment {
    /// The scheme family on W1 and W3.
    Family,
    /// Table I / Figure 8 through the callout interfaces.
    Table1,
    /// Table II: instructions per timer function, by callgrind.
    Table2,
    /// Scheme 6 against Scheme 7 as M and T vary (Varghese & Lauck's cost model).
    CostModel,
    /// The production wheel against the in-process peers on W1–W5.
    Peers,
    /// Wake-ups against the optimum as tolerance grows.
    Coalescing,
    /// Timer lateness on real clocks: callwheel-rt against a bare `clock_nanosleep` loop.
    Latency,
    /// Requested against actual sleep, and the runtime's wake-ups with and without tolerance.
    Sweep,
    /// `start` latency during a mass expiry, and the count check.
    Stress,
    /// callwheel-async against tokio's and async-io's timers.
    Async,
}

impl Experiment {
    /// Every experiment, in report order.
    pub const ALL: [Experiment; 10] = [
        Experiment::Family,
        Experiment::Table1,
        Experiment::Table2,
        Experiment::CostModel,
        Experiment::Peers,
        Experiment::Coalescing,
        Experiment::Latency,
        Experiment::Sweep,
        Experiment::Stress,
        Experiment::Async,
    ];

    /// The name on the command line and in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Experiment::Family => "family",
            Experiment::Table1 => "table1",
            Experiment::Table2 => "table2",
            Experiment::CostModel => "cost-model",
            Experiment::Peers => "peers",
            Experiment::Coalescing => "coalescing",
            Experiment::Latency => "latency",
            Experiment::Sweep => "sweep",
            Experiment::Stress => "stress",
            Experiment::Async => "async",
        }
    }

    /// Why the experiment cannot run in this build, if it cannot (every experiment runs in
    /// this one; the report's "Not run" section stays for experiments still to come).
    pub fn unavailable(self) -> Option<&'static str> {
        let _ = self;
        None
    }
}

/// The options of `callwheel repro`.
#[derive(Debug, Args)]
pub struct ReproArgs {
    /// Run only this experiment (repeatable or comma-separated).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub only: Vec<Experiment>,
    /// The papers' sizes (W1 to N = 1e6 and beyond, 5 repetitions): many minutes.
    #[arg(long)]
    pub full: bool,
    /// Tiny sizes that check the plumbing in seconds (for tests); the figures mean little.
    #[arg(long, conflicts_with = "full")]
    pub tiny: bool,
    /// Where the report goes.
    #[arg(long, value_name = "DIR", default_value = crate::sections::DEFAULT_OUT)]
    pub out: PathBuf,
    /// Also write every figure to `DIR/results.json`.
    #[arg(long)]
    pub json: bool,
}

/// One line of the final summary.
#[derive(Clone, Debug)]
struct Finding {
    experiment: &'static str,
    what: String,
    verdict: String,
}

/// What one experiment produced.
#[derive(Default)]
struct Done {
    markdown: String,
    figures: Figures,
    findings: Vec<Finding>,
    failures: usize,
}

impl Done {
    fn figure(&mut self, experiment: &str, structure: &str, case: &str, metric: &str, value: f64) {
        self.figures
            .figure(experiment, structure, case, metric, value);
    }

    /// Records the median and every count an outcome carries.
    fn outcome(&mut self, experiment: &str, structure: &str, case: &str, outcome: &Outcome) {
        self.figures.outcome(experiment, structure, case, outcome);
    }

    /// Draws `charts` as panels of one figure and links it from the report.
    fn plot_panels(&mut self, title: &str, charts: &[Chart], out: &Path, stem: &str) {
        match plots::write_panels(title, charts, out, stem) {
            Ok(_) => {
                let _ = write!(
                    self.markdown,
                    "\n![{title}]({stem}.png)\n\n[SVG]({stem}.svg)\n"
                );
            }
            Err(e) => {
                let _ = writeln!(self.markdown, "\n(plot not drawn: {e})");
            }
        }
    }

    fn find(&mut self, experiment: &'static str, what: String, verdict: String) {
        self.findings.push(Finding {
            experiment,
            what,
            verdict,
        });
    }

    fn plot(&mut self, chart: &Chart, out: &Path, stem: &str) {
        match plots::write(chart, out, stem) {
            Ok(_) => {
                let _ = write!(
                    self.markdown,
                    "\n![{}]({stem}.png)\n\n[SVG]({stem}.svg)\n",
                    chart.title
                );
            }
            Err(e) => {
                let _ = writeln!(self.markdown, "\n(plot not drawn: {e})");
            }
        }
    }
}

/// The sizes of a run.
#[derive(Clone, Copy, Debug)]
enum Size {
    Tiny,
    Default,
    Full,
}

fn scheme(name: &str) -> Option<&'static SchemeInfo> {
    SCHEMES.iter().find(|s| s.name == name)
}

/// Runs `callwheel repro`. Returns the process exit code: 0, 1 when a measurement failed,
/// 2 for bad input (an unavailable experiment, an unwritable output directory).
pub fn run(args: &ReproArgs) -> u8 {
    let selected: Vec<Experiment> = if args.only.is_empty() {
        Experiment::ALL.to_vec()
    } else {
        let mut v = Vec::new();
        for &e in &args.only {
            if let Some(why) = e.unavailable() {
                eprintln!("error: experiment {} {why}", e.name());
                return 2;
            }
            if !v.contains(&e) {
                v.push(e);
            }
        }
        v
    };
    if let Err(e) = std::fs::create_dir_all(&args.out).and_then(|()| {
        let probe = args.out.join(".write-test");
        std::fs::write(&probe, b"")?;
        std::fs::remove_file(probe)
    }) {
        eprintln!(
            "error: cannot write the report to {}: {e}",
            args.out.display()
        );
        return 2;
    }
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: this is a debug build; its figures are not representative (use --release)"
        );
    }
    let size = if args.tiny {
        Size::Tiny
    } else if args.full {
        Size::Full
    } else {
        Size::Default
    };
    let machine = Machine::read();
    let started = std::time::Instant::now();
    let mut all = Done::default();
    let mut pending = Vec::new();
    for e in Experiment::ALL.into_iter().filter(|e| selected.contains(e)) {
        if let Some(why) = e.unavailable() {
            pending.push((e, why));
            continue;
        }
        eprintln!("repro: {} ...", e.name());
        let done = match e {
            Experiment::Family => papers::family(size, &args.out),
            Experiment::Table1 => papers::table1_experiment(size, &args.out),
            Experiment::Table2 => papers::table2_experiment(size, &args.out),
            Experiment::CostModel => cost_model::cost_model(size, &args.out),
            Experiment::Peers => peers::peers(size),
            Experiment::Coalescing => coalescing::coalescing(size, &args.out),
            Experiment::Latency => latency::latency(size, &args.out),
            Experiment::Sweep => sweep::sweep(size, &args.out),
            Experiment::Stress => stress::stress(size),
            Experiment::Async => async_timers::async_timers(size, &args.out),
        };
        all.markdown.push_str(&done.markdown);
        all.markdown.push('\n');
        all.figures.0.extend(done.figures.0);
        all.findings.extend(done.findings);
        all.failures += done.failures;
    }
    let elapsed = started.elapsed().as_secs_f64();

    let mut summary = String::from("| experiment | finding | result |\n|---|---|---|\n");
    for f in &all.findings {
        let _ = writeln!(summary, "| {} | {} | {} |", f.experiment, f.what, f.verdict);
    }
    for (e, why) in &pending {
        let _ = writeln!(summary, "| {} | not run | {why} |", e.name());
    }

    let mut report = String::new();
    let _ = writeln!(report, "# callwheel repro\n");
    let _ = writeln!(
        report,
        "Run on {} UTC in {elapsed:.0} s ({} sizes), callwheel {}.\n",
        machine.date,
        match size {
            Size::Tiny => "tiny",
            Size::Default => "default",
            Size::Full => "full (the papers')",
        },
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
    if !pending.is_empty() {
        let _ = writeln!(report, "\n## Not run\n");
        for (e, why) in &pending {
            let _ = writeln!(report, "- `{}`: {why}.", e.name());
        }
    }
    let report_path = args.out.join("REPORT.md");
    if let Err(e) = std::fs::write(&report_path, report) {
        eprintln!("error: cannot write {}: {e}", report_path.display());
        return 2;
    }
    if args.json {
        let results = all.figures.clone().into_results(machine.clone(), args.full);
        if let Err(e) = results::write(&args.out, &results) {
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
