//! Runs each measurement in its own child process, so that one measurement's heap and caches do
//! not affect the next.
//!
//! The parent re-executes its own binary as `callwheel bench-one --scheme NAME --workload wK`
//! with the sizes of the workload (`--n N --iters I` for W1, `--n N --steps S` for W2,
//! `--timers M --ticks T` for W3 and W4, plus `--tolerance P` for W2 to W5) and `--reps R`.
//! The child runs the workload ([`run_here`]) and prints exactly one line on stdout, the tag
//! and a [`Report`] as JSON ([`child_line`]):
//!
//! ```text
//! callwheel-result {"samples":[12.5,12.1,13.0],"bytes_per_timer":48.2,"fired":null,...}
//! ```
//!
//! `samples` holds the per-operation figure of each repetition in nanoseconds; `bytes_per_timer`
//! the bytes per outstanding timer (W1); `fired` the timers fired (W2's expiries, W3, W4);
//! `late` the timers a lossy scheme fired after W3's last tick; `jumps` W4's `advance` calls;
//! `outside` the firings after their window (W2 to W4) and `cascades_per_timer` the moves down
//! a level, where counted; `wakeups`, `optimum` and `violations` W5's tolerance-0 case, and
//! `tolerant` W5's tolerant case. `null` means not measured; an unknown field is an error. On failure the child prints
//! one error line on stderr and exits non-zero.

use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::child_line;
use crate::percentile::median;
use crate::structure::SchemeInfo;
use crate::workload::{W1Params, W2Params, W3Params, W4Params, W5Params};

/// The word that starts the child's result line.
pub const RESULT_TAG: &str = "callwheel-result";

/// One measurement: a workload, its sizes and the structure it runs on.
#[derive(Clone, Copy, Debug)]
pub enum Task {
    /// W1, set/cancel.
    W1 {
        /// The structure.
        scheme: &'static SchemeInfo,
        /// The sizes.
        params: W1Params,
    },
    /// W2, churn.
    W2 {
        /// The structure.
        scheme: &'static SchemeInfo,
        /// The sizes.
        params: W2Params,
    },
    /// W3, expire.
    W3 {
        /// The structure.
        scheme: &'static SchemeInfo,
        /// The sizes.
        params: W3Params,
    },
    /// W4, sparse advance.
    W4 {
        /// The structure.
        scheme: &'static SchemeInfo,
        /// The sizes.
        params: W4Params,
    },
    /// W5, coalescing.
    W5 {
        /// The structure.
        scheme: &'static SchemeInfo,
        /// The sizes.
        params: W5Params,
    },
}

impl Task {
    /// The structure the task runs on.
    pub fn scheme(&self) -> &'static SchemeInfo {
        match *self {
            Task::W1 { scheme, .. }
            | Task::W2 { scheme, .. }
            | Task::W3 { scheme, .. }
            | Task::W4 { scheme, .. }
            | Task::W5 { scheme, .. } => scheme,
        }
    }

    /// A short description for the progress bar and error messages.
    pub fn describe(&self) -> String {
        match self {
            Task::W1 { scheme, params } => format!("w1 {} N={}", scheme.name, params.n),
            Task::W2 { scheme, params } => format!(
                "w2 {} N={} steps={}{}",
                scheme.name,
                params.n,
                params.steps,
                tolerance_note(params.tolerance_percent)
            ),
            Task::W3 { scheme, params } => format!(
                "w3 {} timers={}{}",
                scheme.name,
                params.timers,
                tolerance_note(params.tolerance_percent)
            ),
            Task::W4 { scheme, params } => format!(
                "w4 {} timers={}{}",
                scheme.name,
                params.timers,
                tolerance_note(params.tolerance_percent)
            ),
            Task::W5 { scheme, params } => {
                format!("w5 {} timers={}", scheme.name, params.timers)
            }
        }
    }

    /// The arguments of the `bench-one` child command that runs this task.
    pub fn child_args(&self) -> Vec<String> {
        let scheme = self.scheme().name;
        let mut args: Vec<String> = vec!["bench-one".into(), "--scheme".into(), scheme.into()];
        let mut add = |key: &str, value: String| {
            args.push(format!("--{key}"));
            args.push(value);
        };
        let reps = match self {
            Task::W1 { params, .. } => {
                add("workload", "w1".into());
                add("n", params.n.to_string());
                add("iters", params.iters.to_string());
                params.reps
            }
            Task::W2 { params, .. } => {
                add("workload", "w2".into());
                add("n", params.n.to_string());
                add("steps", params.steps.to_string());
                add("tolerance", params.tolerance_percent.to_string());
                params.reps
            }
            Task::W3 { params, .. } => {
                add("workload", "w3".into());
                add("timers", params.timers.to_string());
                add("ticks", params.ticks.to_string());
                add("tolerance", params.tolerance_percent.to_string());
                params.reps
            }
            Task::W4 { params, .. } => {
                add("workload", "w4".into());
                add("timers", params.timers.to_string());
                add("ticks", params.ticks.to_string());
                add("tolerance", params.tolerance_percent.to_string());
                params.reps
            }
            Task::W5 { params, .. } => {
                add("workload", "w5".into());
                add("timers", params.timers.to_string());
                add("ticks", params.ticks.to_string());
                add("tolerance", params.tolerance_percent.to_string());
                params.reps
            }
        };
        add("reps", reps.to_string());
        args
    }
}

/// ` tolerance=P%` for a tolerant variant, nothing for the exact workload.
fn tolerance_note(percent: u64) -> String {
    if percent == 0 {
        String::new()
    } else {
        format!(" tolerance={percent}%")
    }
}

/// W5's tolerant case, as the result line carries it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TolerantReport {
    /// Nanoseconds per timer, one figure per repetition.
    pub samples: Vec<f64>,
    /// `advance` calls.
    pub wakeups: u64,
    /// The greedy stabbing number of the windows.
    pub optimum: u64,
    /// Timers fired outside their window.
    pub violations: u64,
}

/// What one measurement reported.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    /// Nanoseconds per operation, one figure per repetition (W5: the tolerance-0 case).
    pub samples: Vec<f64>,
    /// W1: bytes per outstanding timer, when measured.
    pub bytes_per_timer: Option<f64>,
    /// W2: expiries in the timed region; W3: timers fired within the ticks; W4: timers fired.
    pub fired: Option<u64>,
    /// W3: timers that fired only after the last tick (lossy schemes).
    pub late: Option<u64>,
    /// W4: `advance` calls (jumps).
    pub jumps: Option<u64>,
    /// W2, W3, W4: firings after the timer's window ended (its deadline when exact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside: Option<u64>,
    /// W2, W3, W4: moves of a timer down a level per timer, for a structure that counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cascades_per_timer: Option<f64>,
    /// W5, tolerance 0: `advance` calls (wake-ups).
    pub wakeups: Option<u64>,
    /// W5, tolerance 0: the number of distinct deadlines (the greedy optimum).
    pub optimum: Option<u64>,
    /// W5, tolerance 0: timers fired outside their window.
    pub violations: Option<u64>,
    /// W5's tolerant case, for a structure that takes a tolerance.
    pub tolerant: Option<TolerantReport>,
    /// The median of each round's samples, in round order, once a later round was merged in
    /// ([`Report::merge_round`]); a child never sends it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<f64>,
}

impl Report {
    /// The result line the child prints (see [`child_line`]).
    pub fn to_line(&self) -> String {
        child_line::write(RESULT_TAG, self)
    }

    /// Adds a later round of the same measurement: its samples join this report's (W5's
    /// tolerant case's too) and its median joins [`Report::rounds`]. Every other field is a
    /// count the workload's seed decides, so the rounds must agree on it; `Err` names the first
    /// that differs (nothing is changed then).
    pub fn merge_round(&mut self, later: Report) -> Result<(), String> {
        let counts = |r: &Report| {
            [
                ("fired", r.fired),
                ("late", r.late),
                ("jumps", r.jumps),
                ("firings outside their window", r.outside),
                ("wake-ups", r.wakeups),
                ("optimum", r.optimum),
                ("violations", r.violations),
            ]
        };
        for ((what, a), (_, b)) in counts(self).into_iter().zip(counts(&later)) {
            if a != b {
                return Err(format!(
                    "the rounds disagree on {what}: {}, then {}",
                    shown(a),
                    shown(b)
                ));
            }
        }
        if self.cascades_per_timer != later.cascades_per_timer {
            return Err(format!(
                "the rounds disagree on cascades per timer: {}, then {}",
                shown(self.cascades_per_timer),
                shown(later.cascades_per_timer)
            ));
        }
        if self.bytes_per_timer != later.bytes_per_timer {
            return Err(format!(
                "the rounds disagree on bytes per timer: {}, then {}",
                shown(self.bytes_per_timer),
                shown(later.bytes_per_timer)
            ));
        }
        let tolerant_counts =
            |t: &Option<TolerantReport>| t.as_ref().map(|t| (t.wakeups, t.optimum, t.violations));
        if tolerant_counts(&self.tolerant) != tolerant_counts(&later.tolerant) {
            return Err("the rounds disagree on the tolerant case's counts".into());
        }
        if let (Some(mine), Some(theirs)) = (self.tolerant.as_mut(), later.tolerant) {
            mine.samples.extend(theirs.samples);
        }
        // The rounds' medians, for ratios paired by round: the first round's is taken at the
        // first merge.
        if self.rounds.is_empty() {
            self.rounds.extend(median(&self.samples));
        }
        self.rounds.extend(median(&later.samples));
        self.samples.extend(later.samples);
        Ok(())
    }

    /// Parses a result line; `Err` says what is wrong with it (also a report without samples).
    pub fn parse_line(line: &str) -> Result<Report, String> {
        let report: Report = child_line::read(RESULT_TAG, line.trim())?;
        if report.samples.is_empty() {
            return Err("the result line has no samples".into());
        }
        Ok(report)
    }
}

/// A count as a message shows it: the number, or `none`.
fn shown<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "none".into(), |v| v.to_string())
}

/// Runs `task` in this process (the child side of `bench-one`).
pub fn run_here(task: &Task) -> Result<Report, String> {
    match task {
        Task::W1 { scheme, params } => {
            let out = (scheme.w1)(params)?;
            Ok(Report {
                samples: out.ns_per_pair,
                bytes_per_timer: out.bytes_per_timer,
                ..Report::default()
            })
        }
        Task::W2 { scheme, params } => {
            let out = (scheme.w2)(params)?;
            Ok(Report {
                samples: out.ns_per_step,
                fired: Some(out.expiries),
                outside: out.outside,
                cascades_per_timer: out.cascades_per_timer,
                ..Report::default()
            })
        }
        Task::W3 { scheme, params } => {
            let out = (scheme.w3)(params)?;
            Ok(Report {
                samples: out.ns_per_timer,
                fired: Some(out.fired),
                late: Some(out.late),
                outside: out.outside,
                cascades_per_timer: out.cascades_per_timer,
                ..Report::default()
            })
        }
        Task::W4 { scheme, params } => {
            let out = (scheme.w4)(params)?;
            Ok(Report {
                samples: out.ns_per_timer,
                fired: Some(out.fired),
                jumps: Some(out.jumps),
                outside: out.outside,
                cascades_per_timer: out.cascades_per_timer,
                ..Report::default()
            })
        }
        Task::W5 { scheme, params } => {
            let out = (scheme.w5)(params)?;
            Ok(Report {
                samples: out.exact.ns_per_timer,
                wakeups: Some(out.exact.wakeups),
                optimum: Some(out.exact.optimum),
                violations: Some(out.exact.violations),
                tolerant: out.tolerant.map(|t| TolerantReport {
                    samples: t.ns_per_timer,
                    wakeups: t.wakeups,
                    optimum: t.optimum,
                    violations: t.violations,
                }),
                ..Report::default()
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

/// One line out of a failed child's stderr: its message lines joined, minus `error: ` prefixes,
/// the backtrace hint and any backtrace (a panic or an allocation failure under
/// `RUST_BACKTRACE` prints dozens of frames, which squashed onto one line say nothing), and how
/// the child ended when a signal ended it.
fn summarize_failure(stderr: &str, status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    let mut text: Vec<&str> = stderr
        .lines()
        .take_while(|l| !l.trim_start().starts_with("stack backtrace:"))
        .map(|l| l.trim().strip_prefix("error: ").unwrap_or(l.trim()))
        .filter(|l| !l.is_empty() && !l.starts_with("note: run with `RUST_BACKTRACE"))
        .take(4)
        .collect();
    let signal = status
        .signal()
        .map(|s| format!("the child was killed by signal {s}"));
    if let Some(signal) = &signal {
        text.push(signal);
    }
    if text.is_empty() {
        format!("the child failed ({status})")
    } else {
        text.join(" / ")
    }
}

#[cfg(test)]
mod tests {
    use super::{summarize_failure, Report, TolerantReport};
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    #[test]
    fn a_failed_childs_backtrace_is_left_out_and_its_signal_named() {
        let stderr = "memory allocation of 939524096 bytes failed\nstack backtrace:\n   0: std::backtrace\n   1: alloc::alloc::handle_alloc_error\n";
        // SIGABRT (6) as a wait status: the signal number in the low bits.
        let summary = summarize_failure(stderr, ExitStatus::from_raw(6));
        assert_eq!(
            summary,
            "memory allocation of 939524096 bytes failed / the child was killed by signal 6"
        );
    }

    #[test]
    fn a_failed_childs_error_lines_are_joined_without_prefixes() {
        let stderr =
            "error: bad scheme\nnote: run with `RUST_BACKTRACE=1` to display a backtrace\n";
        assert_eq!(
            summarize_failure(stderr, ExitStatus::from_raw(2 << 8)),
            "bad scheme"
        );
    }

    fn w4_report(samples: &[f64], fired: u64) -> Report {
        Report {
            samples: samples.to_vec(),
            fired: Some(fired),
            jumps: Some(7),
            ..Report::default()
        }
    }

    #[test]
    fn rounds_pool_their_samples() {
        let mut first = w4_report(&[1.0, 2.0], 100);
        first
            .merge_round(w4_report(&[3.0], 100))
            .expect("the counts agree");
        assert_eq!(first.samples, [1.0, 2.0, 3.0]);
        assert_eq!((first.fired, first.jumps), (Some(100), Some(7)));
        // The rounds' medians (nearest rank: the lower middle of an even count).
        assert_eq!(first.rounds, [1.0, 3.0]);
        first
            .merge_round(w4_report(&[5.0, 4.0, 6.0], 100))
            .expect("the counts agree");
        assert_eq!(first.rounds, [1.0, 3.0, 5.0]);

        let tolerant = |samples: &[f64]| TolerantReport {
            samples: samples.to_vec(),
            wakeups: 5,
            optimum: 4,
            violations: 0,
        };
        let mut w5 = Report {
            samples: vec![1.0],
            tolerant: Some(tolerant(&[10.0])),
            ..Report::default()
        };
        let later = Report {
            samples: vec![2.0],
            tolerant: Some(tolerant(&[20.0])),
            ..Report::default()
        };
        w5.merge_round(later).expect("the counts agree");
        assert_eq!(w5.samples, [1.0, 2.0]);
        assert_eq!(w5.tolerant.map(|t| t.samples), Some(vec![10.0, 20.0]));
    }

    #[test]
    fn rounds_that_disagree_on_a_count_are_refused_and_change_nothing() {
        let mut first = w4_report(&[1.0], 100);
        let err = first
            .merge_round(w4_report(&[2.0], 99))
            .expect_err("fired differs");
        assert_eq!(err, "the rounds disagree on fired: 100, then 99");
        assert_eq!(first, w4_report(&[1.0], 100));

        let mut with_bytes = Report {
            samples: vec![1.0],
            bytes_per_timer: Some(24.0),
            ..Report::default()
        };
        let other = Report {
            samples: vec![1.0],
            bytes_per_timer: Some(32.0),
            ..Report::default()
        };
        assert!(with_bytes.merge_round(other).is_err());
        assert_eq!(with_bytes.samples, [1.0]);

        let tolerant = |wakeups| {
            Some(TolerantReport {
                samples: vec![1.0],
                wakeups,
                optimum: 4,
                violations: 0,
            })
        };
        let mut a = Report {
            samples: vec![1.0],
            tolerant: tolerant(5),
            ..Report::default()
        };
        let b = Report {
            samples: vec![1.0],
            tolerant: tolerant(6),
            ..Report::default()
        };
        assert!(a.merge_round(b).is_err());
        assert_eq!(a.samples, [1.0]);
    }
}
