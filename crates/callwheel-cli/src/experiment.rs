//! An experiment of the tool: one trait for every measurement `callwheel repro` runs, so that
//! the report is a loop over the registered experiments (`repro`'s list), and
//! what one experiment produces: its Markdown section, its figures for `results.json`, its
//! verdict lines for the summary and its count of failed measurements.

use std::fmt::Write as _;
use std::path::Path;

use callwheel_bench::plots::{self, Chart};
use callwheel_bench::results::Figures;

/// The sizes of a run.
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
    /// The name in the report's first line.
    pub fn describe(self) -> &'static str {
        match self {
            Size::Tiny => "tiny",
            Size::Default => "default",
            Size::Full => "full (the papers')",
        }
    }
}

/// One measurement of the tool, as `callwheel repro` runs it.
pub trait Experiment: Sync {
    /// The name on the command line (`--only`) and in `results.json`.
    fn name(&self) -> &'static str;
    /// What it shows, in a line (the help of `--only`).
    fn about(&self) -> &'static str;
    /// Runs it at `size`, its plots written to `out`.
    fn run(&self, size: Size, out: &Path) -> Section;
    /// Why it cannot run in this build, if it cannot.
    fn unavailable(&self) -> Option<&'static str> {
        None
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
        self.link(title, drawn.map(|_| ()), stem);
    }

    /// Draws `chart` and links it from the section.
    pub fn plot(&mut self, chart: &Chart, out: &Path, stem: &str) {
        let drawn = plots::write(chart, out, stem);
        self.link(&chart.title, drawn.map(|_| ()), stem);
    }

    fn link(&mut self, title: &str, drawn: Result<(), String>, stem: &str) {
        match drawn {
            Ok(()) => {
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
}
