//! Runs each measurement in its own child process, so that one measurement's heap and caches do
//! not affect the next.
//!
//! The parent re-executes its own binary as `callwheel bench-one --scheme NAME --workload w1
//! --n N --iters I --reps R` (or `--workload w3 --timers M --ticks T`). The child runs the
//! workload ([`run_here`]) and prints exactly one line on stdout:
//!
//! ```text
//! callwheel-result samples=12.5,12.1,13.0 bytes=48.2 fired=-
//! ```
//!
//! `samples` holds the per-operation figure of each repetition in nanoseconds, `bytes` the
//! bytes per outstanding timer (W1, `-` when not measured) and `fired` the timers fired (W3,
//! `-` for W1). On failure the child prints one error line on stderr and exits non-zero.

use std::process::Command;

use crate::registry::{self, SchemeInfo};
use crate::workload::{W1Params, W3Params};

/// The word that starts the child's result line.
pub const RESULT_TAG: &str = "callwheel-result";

/// One measurement: a workload, its sizes and the scheme it runs on.
#[derive(Clone, Copy, Debug)]
pub enum Task {
    /// W1, set/cancel.
    W1 {
        /// The scheme.
        scheme: &'static SchemeInfo,
        /// The sizes.
        params: W1Params,
    },
    /// W3, expire.
    W3 {
        /// The scheme.
        scheme: &'static SchemeInfo,
        /// The sizes.
        params: W3Params,
    },
}

impl Task {
    /// The scheme the task runs on.
    pub fn scheme(&self) -> &'static SchemeInfo {
        match *self {
            Task::W1 { scheme, .. } | Task::W3 { scheme, .. } => scheme,
        }
    }

    /// A short description for the progress bar and error messages.
    pub fn describe(&self) -> String {
        match self {
            Task::W1 { scheme, params } => format!("w1 {} N={}", scheme.name, params.n),
            Task::W3 { scheme, params } => {
                format!("w3 {} timers={}", scheme.name, params.timers)
            }
        }
    }

    /// The arguments of the `bench-one` child command that runs this task.
    pub fn child_args(&self) -> Vec<String> {
        let mut args = vec!["bench-one".to_string(), "--scheme".into()];
        match self {
            Task::W1 { scheme, params } => {
                args.push(scheme.name.into());
                args.extend(["--workload".into(), "w1".into()]);
                args.extend(["--n".into(), params.n.to_string()]);
                args.extend(["--iters".into(), params.iters.to_string()]);
                args.extend(["--reps".into(), params.reps.to_string()]);
            }
            Task::W3 { scheme, params } => {
                args.push(scheme.name.into());
                args.extend(["--workload".into(), "w3".into()]);
                args.extend(["--timers".into(), params.timers.to_string()]);
                args.extend(["--ticks".into(), params.ticks.to_string()]);
                args.extend(["--reps".into(), params.reps.to_string()]);
            }
        }
        args
    }
}

/// What one measurement reported.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// Nanoseconds per operation, one figure per repetition.
    pub samples: Vec<f64>,
    /// W1: bytes per outstanding timer, when measured.
    pub bytes_per_timer: Option<f64>,
    /// W3: timers fired within the ticks.
    pub fired: Option<u64>,
    /// W3: timers that fired only after the last tick (lossy schemes).
    pub late: Option<u64>,
}

impl Report {
    /// The result line the child prints.
    pub fn to_line(&self) -> String {
        let samples: Vec<String> = self.samples.iter().map(|s| s.to_string()).collect();
        let bytes = self
            .bytes_per_timer
            .map_or_else(|| "-".to_string(), |b| b.to_string());
        let fired = self
            .fired
            .map_or_else(|| "-".to_string(), |f| f.to_string());
        let late = self.late.map_or_else(|| "-".to_string(), |f| f.to_string());
        format!(
            "{RESULT_TAG} samples={} bytes={bytes} fired={fired} late={late}",
            samples.join(",")
        )
    }

    /// Parses a result line; `Err` says what is wrong with it.
    pub fn parse_line(line: &str) -> Result<Report, String> {
        let mut words = line.split_whitespace();
        if words.next() != Some(RESULT_TAG) {
            return Err(format!("not a result line: {line:?}"));
        }
        let mut samples = None;
        let mut bytes_per_timer = None;
        let mut fired = None;
        let mut late = None;
        for word in words {
            let (key, value) = word
                .split_once('=')
                .ok_or_else(|| format!("malformed field {word:?}"))?;
            let bad = || format!("malformed value in {word:?}");
            match key {
                "samples" => {
                    let parsed: Result<Vec<f64>, _> =
                        value.split(',').map(str::parse::<f64>).collect();
                    samples = Some(parsed.map_err(|_| bad())?);
                }
                "bytes" if value != "-" => {
                    bytes_per_timer = Some(value.parse::<f64>().map_err(|_| bad())?);
                }
                "fired" if value != "-" => fired = Some(value.parse::<u64>().map_err(|_| bad())?),
                "late" if value != "-" => late = Some(value.parse::<u64>().map_err(|_| bad())?),
                "bytes" | "fired" | "late" => {}
                _ => return Err(format!("unknown field {key:?}")),
            }
        }
        let samples = samples.ok_or("the result line has no samples")?;
        if samples.is_empty() {
            return Err("the result line has no samples".into());
        }
        Ok(Report {
            samples,
            bytes_per_timer,
            fired,
            late,
        })
    }
}

/// Runs `task` in this process (the child side of `bench-one`).
pub fn run_here(task: &Task) -> Result<Report, String> {
    match task {
        Task::W1 { scheme, params } => {
            let out = (scheme.w1)(params)?;
            Ok(Report {
                samples: out.ns_per_pair,
                bytes_per_timer: out.bytes_per_timer,
                fired: None,
                late: None,
            })
        }
        Task::W3 { scheme, params } => {
            let out = (scheme.w3)(params)?;
            Ok(Report {
                samples: out.ns_per_timer,
                bytes_per_timer: None,
                fired: Some(out.fired),
                late: Some(out.late),
            })
        }
    }
}

/// Runs `task` in a child process of this same binary and returns what it reported.
pub fn run_in_child(task: &Task) -> Result<Report, String> {
    let exe =
        std::env::current_exe().map_err(|e| format!("cannot find this program's own path: {e}"))?;
    let output = Command::new(&exe)
        .args(task.child_args())
        .output()
        .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(summarize_failure(&stderr, output.status));
    }
    let line = stdout
        .lines()
        .find(|l| l.starts_with(RESULT_TAG))
        .ok_or("the child printed no result line")?;
    Report::parse_line(line)
}

/// One line out of a failed child's stderr: its lines joined, minus `error: ` prefixes and the
/// backtrace hint.
fn summarize_failure(stderr: &str, status: std::process::ExitStatus) -> String {
    let text: Vec<&str> = stderr
        .lines()
        .map(|l| l.trim().strip_prefix("error: ").unwrap_or(l.trim()))
        .filter(|l| !l.is_empty() && !l.starts_with("note: run with `RUST_BACKTRACE"))
        .collect();
    if text.is_empty() {
        format!("the child failed ({status})")
    } else {
        text.join(" / ")
    }
}

/// Looks a scheme up for the child, with the one-line error the command prints.
pub fn scheme_by_name(name: &str) -> Result<&'static SchemeInfo, String> {
    registry::find(name)
        .ok_or_else(|| format!("unknown scheme `{name}` (known: {})", registry::names()))
}
