//! The figures a run writes to `results.json`: one flat list of (experiment, structure, case,
//! metric, value) with the tool's version and the machine, the same for `repro` and for every
//! command run alone with `--json`, so that `callwheel compare` reads any of them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::machine::Machine;
use crate::report::{self, Outcome};

/// One figure of a run, as `results.json` holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// The experiment.
    pub experiment: String,
    /// The structure or interface measured.
    pub structure: String,
    /// The case: workload and size.
    pub case: String,
    /// What the value is (`median_ns`, `wakeups`, ...).
    pub metric: String,
    /// The value.
    pub value: f64,
}

/// `results.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// The tool's version.
    pub version: String,
    /// The machine and date.
    pub machine: Machine,
    /// Whether `repro --full` (the papers' sizes) made it; false for any other run.
    pub full: bool,
    /// Every figure.
    pub figures: Vec<Figure>,
}

/// The figures of a run, as it collects them.
#[derive(Clone, Debug, Default)]
pub struct Figures(pub Vec<Figure>);

impl Figures {
    /// Records one figure.
    pub fn figure(
        &mut self,
        experiment: &str,
        structure: &str,
        case: &str,
        metric: &str,
        value: f64,
    ) {
        self.0.push(Figure {
            experiment: experiment.into(),
            structure: structure.into(),
            case: case.into(),
            metric: metric.into(),
            value,
        });
    }

    /// Records the median, the number of samples it is over, and every count a benchmark
    /// outcome carries (nothing for a failed or skipped one).
    pub fn outcome(&mut self, experiment: &str, structure: &str, case: &str, outcome: &Outcome) {
        let Outcome::Done(r) = outcome else { return };
        if let Some(m) = report::median_of(outcome) {
            self.figure(experiment, structure, case, "median_ns", m);
            // What the median is over: the repetitions of every round.
            self.figure(
                experiment,
                structure,
                case,
                "samples",
                r.samples.len() as f64,
            );
        }
        let counts = [
            ("bytes_per_timer", r.bytes_per_timer),
            ("fired", r.fired.map(|v| v as f64)),
            ("jumps", r.jumps.map(|v| v as f64)),
            ("wakeups", r.wakeups.map(|v| v as f64)),
            ("optimum", r.optimum.map(|v| v as f64)),
            ("violations", r.violations.map(|v| v as f64)),
        ];
        for (metric, value) in counts {
            if let Some(v) = value {
                self.figure(experiment, structure, case, metric, v);
            }
        }
        if let Some(t) = &r.tolerant {
            if let Some(s) = report::Summary::of(&t.samples) {
                self.figure(experiment, structure, case, "tolerant_median_ns", s.median);
            }
            let counts = [
                ("tolerant_wakeups", t.wakeups),
                ("tolerant_optimum", t.optimum),
                ("tolerant_violations", t.violations),
            ];
            for (metric, value) in counts {
                self.figure(experiment, structure, case, metric, value as f64);
            }
        }
    }

    /// The figures with the version and this machine, as `results.json` holds them.
    pub fn into_results(self, machine: Machine, full: bool) -> Results {
        Results {
            version: env!("CARGO_PKG_VERSION").to_string(),
            machine,
            full,
            figures: self.0,
        }
    }
}

impl Results {
    /// The value of the figure `metric` of `structure` in `case` of `experiment`, if recorded.
    pub fn value(
        &self,
        experiment: &str,
        structure: &str,
        case: &str,
        metric: &str,
    ) -> Option<f64> {
        self.figures
            .iter()
            .find(|f| {
                f.experiment == experiment
                    && f.structure == structure
                    && f.case == case
                    && f.metric == metric
            })
            .map(|f| f.value)
    }

    /// The figures `metric` of `experiment`, in the order recorded.
    pub fn metric<'a>(
        &'a self,
        experiment: &'a str,
        metric: &'a str,
    ) -> impl Iterator<Item = &'a Figure> + 'a {
        self.figures
            .iter()
            .filter(move |f| f.experiment == experiment && f.metric == metric)
    }
}

/// Writes `results` to `DIR/results.json` (the directory made if missing) and returns the path.
///
/// # Errors
///
/// A message naming what could not be encoded or written.
pub fn write(dir: &Path, results: &Results) -> Result<PathBuf, String> {
    let path = dir.join("results.json");
    let text = serde_json::to_string_pretty(results)
        .map_err(|e| format!("cannot encode the results: {e}"))?;
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&path, text + "\n"))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// [`write()`] for a command's `--json`: the figures with this machine, the path written on
/// stderr; a failure is reported there and is the command's exit status.
///
/// # Errors
///
/// Exit status 1 when the file cannot be encoded or written.
pub fn save(figures: Figures, full: bool, dir: &Path) -> Result<(), std::process::ExitCode> {
    let results = figures.into_results(Machine::read(), full);
    match write(dir, &results) {
        Ok(path) => {
            eprintln!("wrote {}", path.display());
            Ok(())
        }
        Err(e) => {
            eprintln!("error: {e}");
            Err(std::process::ExitCode::from(1))
        }
    }
}
