//! An experiment of the tool: one trait for every measurement, so that `callwheel repro` is a
//! loop over the registered experiments (`repro`'s list) and each stand-alone command
//! (`bench`, `table1`, `table2`, `latency`, `sweep`, `stress`, `async`) is the same experiment
//! run alone on the plan its options resolve to ([`alone`]); and what one experiment produces:
//! its Markdown section, its figures for `results.json`, its verdict lines and its count of
//! failed measurements.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use callwheel_bench::plots::{self, Chart};
use callwheel_bench::results::{self, Figures};

use crate::flags::Output;

/// The sizes of a `callwheel repro` run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// Tiny sizes that check the plumbing in seconds; the figures mean little.
    Tiny,
    /// The defaults: every figure meaningful, the whole run in about a minute.
    Default,
    /// The papers' sizes: many minutes.
    Full,
}

impl Size {
    /// The size `--tiny` and `--full` ask for (tiny first), else the default.
    pub fn from_flags(tiny: bool, full: bool) -> Size {
        if tiny {
            Size::Tiny
        } else if full {
            Size::Full
        } else {
            Size::Default
        }
    }

    /// The name in the report's first line.
    pub fn describe(self) -> &'static str {
        match self {
            Size::Tiny => "tiny",
            Size::Default => "default",
            Size::Full => "full (the papers')",
        }
    }
}

/// One measurement of the tool: what it runs (its plan), and the run, which measures, judges,
/// renders and records its figures in one [`Section`].
pub trait Experiment: Sync {
    /// What one run measures, its sizes resolved: made by [`plan`](Experiment::plan) for
    /// `callwheel repro`, or from the options of the experiment's own command.
    type Plan;
    /// The name on the command line (`--only`) and in `results.json`.
    fn name(&self) -> &'static str;
    /// What it shows, in a line (the help of `--only`).
    fn about(&self) -> &'static str;
    /// The plan `callwheel repro` runs at `size`.
    fn plan(&self, size: Size) -> Self::Plan;
    /// Runs `plan`, its plots written to `out`.
    fn run(&self, plan: &Self::Plan, out: &Path) -> Section;
}

/// An experiment as `callwheel repro` lists it: run at one of its sizes. Every
/// [`Experiment`] is one.
pub trait Registered: Sync {
    /// The experiment's name.
    fn name(&self) -> &'static str;
    /// What it shows.
    fn about(&self) -> &'static str;
    /// Runs the experiment's plan for `size`, its plots written to `out`.
    fn run_at(&self, size: Size, out: &Path) -> Section;
}

impl<E: Experiment> Registered for E {
    fn name(&self) -> &'static str {
        Experiment::name(self)
    }

    fn about(&self) -> &'static str {
        Experiment::about(self)
    }

    fn run_at(&self, size: Size, out: &Path) -> Section {
        self.run(&self.plan(size), out)
    }
}

/// A stand-alone command: `experiment` run alone on `plan`. Prints its section, writes its
/// plots (and, with `--json`, its figures in `results.json`) to `--out`. Exit status 2 when
/// the output directory cannot be made or written, 1 when a measurement or a plot failed (or
/// results.json could not be written), else 0.
pub fn alone<E: Experiment>(experiment: &E, plan: &E::Plan, output: &Output) -> ExitCode {
    // A directory that cannot be written fails now, not after the measurements.
    let dir = match output.prepare() {
        Ok(dir) => dir,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(callwheel_bench::plan::USAGE_ERROR);
        }
    };
    warn_if_debug();
    let section = experiment.run(plan, &dir);
    // The section carries its verdicts in its tables (its findings are `repro`'s summary).
    print!("{}", section.markdown);
    if let Some(dir) = output.json_dir() {
        if let Err(code) = results::save(section.figures, false, &dir) {
            return code;
        }
    }
    if section.failures > 0 {
        eprintln!("error: {} measurement(s) failed", section.failures);
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Warns on stderr when this is a debug build, whose figures mean little.
pub fn warn_if_debug() {
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: this is a debug build; its figures are not representative (use --release)"
        );
    }
}

/// One line of the run's summary: what was checked and the verdict.
#[derive(Clone, Debug)]
pub struct Finding {
    /// The experiment's name.
    pub experiment: &'static str,
    /// What was checked.
    pub what: String,
    /// The figure and whether it met its target.
    pub verdict: String,
}

/// What one experiment produced.
#[derive(Default)]
pub struct Section {
    /// Its part of the report.
    pub markdown: String,
    /// Its figures for `results.json`.
    pub figures: Figures,
    /// Its lines of the summary.
    pub findings: Vec<Finding>,
    /// Measurements that failed.
    pub failures: usize,
}

impl Section {
    /// Adds a line to the summary.
    pub fn find(&mut self, experiment: &'static str, what: String, verdict: String) {
        self.findings.push(Finding {
            experiment,
            what,
            verdict,
        });
    }

    /// Records a measurement that failed: `error: {what}: {e}` on stderr, the same in the
    /// section, one more failure.
    pub fn failed(&mut self, what: &str, e: impl std::fmt::Display) {
        eprintln!("error: {what}: {e}");
        let _ = writeln!(self.markdown, "{what} failed: {e}\n");
        self.failures += 1;
    }

    /// Adds another section's content to this one.
    pub fn append(&mut self, other: Section) {
        self.markdown.push_str(&other.markdown);
        self.markdown.push('\n');
        self.figures.0.extend(other.figures.0);
        self.findings.extend(other.findings);
        self.failures += other.failures;
    }

    /// Draws `charts` as panels of one figure and links it from the section.
    pub fn plot_panels(&mut self, title: &str, charts: &[Chart], out: &Path, stem: &str) {
        let drawn = plots::write_panels(title, charts, out, stem);
        self.link(title, drawn, stem);
    }

    /// Draws `chart` and links it from the section.
    pub fn plot(&mut self, chart: &Chart, out: &Path, stem: &str) {
        let drawn = plots::write(chart, out, stem);
        self.link(&chart.title, drawn, stem);
    }

    /// Links a drawn plot (its files named on stderr), or says why it was not drawn: a plot
    /// that was asked for and not written is a failed measurement of the section.
    fn link(&mut self, title: &str, drawn: Result<Vec<PathBuf>, String>, stem: &str) {
        match drawn {
            Ok(paths) => {
                for p in paths {
                    eprintln!("wrote {}", p.display());
                }
                let _ = write!(
                    self.markdown,
                    "\n![{title}]({stem}.png)\n\n[SVG]({stem}.svg)\n"
                );
            }
            Err(e) => {
                eprintln!("error: plot {stem}: {e}");
                let _ = writeln!(self.markdown, "\n(plot not drawn: {e})");
                self.failures += 1;
            }
        }
    }
}
