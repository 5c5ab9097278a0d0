//! Running planned measurements: each in a child process of this binary, under a progress bar,
//! in rounds that alternate the order of the tasks and pool their samples; a failure is
//! counted and said on stderr as it happens.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::report::Outcome;
use crate::runner::{self, Task};
use crate::structure::SchemeInfo;

/// A progress bar for `total` measurements (hidden when stderr is not a terminal).
pub fn progress_bar(total: usize) -> ProgressBar {
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
pub fn measure(bar: &ProgressBar, task: &Task, failures: &mut usize) -> Outcome {
    bar.set_message(task.describe());
    let outcome = match runner::run_in_child(task) {
        Ok(report) => Outcome::Done(Box::new(report)),
        Err(message) => {
            *failures += 1;
            bar.suspend(|| eprintln!("error: {}: {message}", task.describe()));
            Outcome::Failed(message)
        }
    };
    bar.inc(1);
    outcome
}

/// Runs the planned tasks of one section `rounds` times each, interleaved: every round runs
/// each task once, in planned order in even rounds and in reverse in odd ones, so that a
/// change in the machine's load between rounds falls on every structure alike and none always
/// runs first (plan the tasks so that those to be compared are neighbours). A task's rounds
/// pool their samples ([`Report::merge_round`]); a round that fails, or disagrees on a count,
/// makes the task's outcome a failure (the later rounds of that task are not run). A planned
/// `Err` is skipped for its reason. The outcomes come back in planned order.
///
/// [`Report::merge_round`]: crate::runner::Report::merge_round
pub fn measure_tasks(
    bar: &ProgressBar,
    planned: &[Result<Task, &'static str>],
    rounds: u32,
    failures: &mut usize,
) -> Vec<Outcome> {
    run_rounds(bar, planned, rounds, failures, measure)
}

/// [`measure_tasks`] with the measurement of one task given (`run`: it advances the bar and
/// counts its own failures, as [`measure`] does).
fn run_rounds(
    bar: &ProgressBar,
    planned: &[Result<Task, &'static str>],
    rounds: u32,
    failures: &mut usize,
    mut run: impl FnMut(&ProgressBar, &Task, &mut usize) -> Outcome,
) -> Vec<Outcome> {
    let mut outcomes: Vec<Option<Outcome>> = planned
        .iter()
        .map(|p| p.as_ref().err().map(|&reason| Outcome::Skipped(reason)))
        .collect();
    for round in 0..rounds.max(1) {
        for i in round_order(planned.len(), round) {
            let Ok(task) = &planned[i] else { continue };
            let merged = match outcomes[i].take() {
                None => run(bar, task, failures),
                Some(Outcome::Done(mut report)) => match run(bar, task, failures) {
                    Outcome::Done(later) => match report.merge_round(*later) {
                        Ok(()) => Outcome::Done(report),
                        Err(message) => {
                            let message = format!("round {}: {message}", round + 1);
                            complain(bar, failures, format!("{}: {message}", task.describe()));
                            Outcome::Failed(message)
                        }
                    },
                    failed => failed,
                },
                // Failed already: its later rounds are not run.
                Some(other) => {
                    bar.inc(1);
                    other
                }
            };
            outcomes[i] = Some(merged);
        }
    }
    outcomes
        .into_iter()
        .map(|o| o.unwrap_or(Outcome::Skipped("not run")))
        .collect()
}

/// [`measure_tasks`] for a workload with one task per structure, and a row for each structure:
/// `params` gives a structure's parameters or the reason it is skipped, `task` the task they
/// make, and `row` the structure's row from its parameters (`None`: skipped) and its outcome,
/// with what is wrong with it, which is counted as a failure under the task's name. The rows
/// come back in the structures' order.
pub(crate) fn measure_rows<P: Copy, R>(
    bar: &ProgressBar,
    schemes: &[&'static SchemeInfo],
    rounds: u32,
    failures: &mut usize,
    params: impl Fn(&'static SchemeInfo) -> Result<P, &'static str>,
    task: impl Fn(&'static SchemeInfo, P) -> Task,
    row: impl Fn(&'static SchemeInfo, Option<P>, Outcome) -> (R, Option<String>),
) -> Vec<R> {
    let planned: Vec<_> = schemes
        .iter()
        .map(|&scheme| params(scheme).map(|p| task(scheme, p)))
        .collect();
    let outcomes = measure_tasks(bar, &planned, rounds, failures);
    schemes
        .iter()
        .zip(outcomes)
        .map(|(&scheme, outcome)| {
            let p = params(scheme).ok();
            let (made, problem) = row(scheme, p, outcome);
            if let (Some(problem), Some(p)) = (problem, p) {
                let name = task(scheme, p).describe();
                complain(bar, failures, format!("{name}: {problem}"));
            }
            made
        })
        .collect()
}

/// The order in which round `round` visits `len` planned tasks: forward in even rounds,
/// backward in odd ones.
fn round_order(len: usize, round: u32) -> impl Iterator<Item = usize> {
    let forward = round.is_multiple_of(2);
    (0..len).map(move |k| if forward { k } else { len - 1 - k })
}

/// Counts a wrong result as a failure and says so on stderr.
pub(crate) fn complain(bar: &ProgressBar, failures: &mut usize, what: String) {
    *failures += 1;
    bar.suspend(|| eprintln!("error: {what}"));
}

#[cfg(test)]
mod tests {
    use super::{round_order, run_rounds};
    use crate::report::Outcome;
    use crate::runner::Report;
    use crate::runner::Task;
    use crate::structure::{Caps, Complexity, Role, SchemeInfo};
    use crate::workload::W4Params;
    use indicatif::ProgressBar;

    /// Two structures, by the names the rounds are checked with (nothing here runs them).
    #[rustfmt::skip]
    static SCHEMES: [SchemeInfo; 2] = [
        crate::scheme!("wheel", "facility", Role::Facility, Complexity::CONSTANT, Caps::EXACT, callwheel::Wheel::new()),
        crate::scheme!("c-wheel", "facility-C", Role::Facility, Complexity::CONSTANT, Caps::EXACT, callwheel::Wheel::new()),
    ];

    fn w4(name: &str) -> Result<Task, &'static str> {
        Ok(Task::W4 {
            scheme: SCHEMES
                .iter()
                .find(|s| s.name == name)
                .expect("a scheme of the test"),
            params: W4Params {
                tolerance_percent: 0,
                timers: 10,
                ticks: 100,
                reps: 1,
            },
        })
    }

    fn report(sample: f64, fired: u64) -> Outcome {
        Outcome::Done(Box::new(Report {
            samples: vec![sample],
            fired: Some(fired),
            ..Report::default()
        }))
    }

    /// Three rounds of two tasks and a skip: the order alternates, the samples and rounds'
    /// medians pool, the skip is never run.
    #[test]
    fn rounds_run_every_task_in_alternating_order_and_pool_them() {
        let planned = [w4("wheel"), Err("n/a"), w4("c-wheel")];
        let mut seen = Vec::new();
        let mut failures = 0;
        let outcomes = run_rounds(
            &ProgressBar::hidden(),
            &planned,
            3,
            &mut failures,
            |_, task, _| {
                seen.push(task.scheme().name);
                report(seen.len() as f64, 10)
            },
        );
        assert_eq!(
            seen,
            ["wheel", "c-wheel", "c-wheel", "wheel", "wheel", "c-wheel"]
        );
        assert_eq!(failures, 0);
        let Outcome::Done(wheel) = &outcomes[0] else {
            panic!("{:?}", outcomes[0])
        };
        assert_eq!(wheel.samples, [1.0, 4.0, 5.0]);
        assert_eq!(wheel.rounds, [1.0, 4.0, 5.0]);
        assert!(matches!(outcomes[1], Outcome::Skipped("n/a")));
        let Outcome::Done(c) = &outcomes[2] else {
            panic!("{:?}", outcomes[2])
        };
        assert_eq!(c.samples, [2.0, 3.0, 6.0]);
    }

    /// A round that disagrees on a count fails the task once, names the round, and its later
    /// rounds are not run; a task that failed in a round stays failed.
    #[test]
    fn a_round_that_disagrees_or_fails_fails_its_task() {
        let planned = [w4("wheel"), w4("c-wheel")];
        let mut calls = Vec::new();
        let mut failures = 0;
        let outcomes = run_rounds(
            &ProgressBar::hidden(),
            &planned,
            3,
            &mut failures,
            |_, task, failures| {
                let name = task.scheme().name;
                calls.push(name);
                match (name, calls.len()) {
                    // wheel's second round fires one timer fewer.
                    ("wheel", 3) => report(1.0, 9),
                    // c-wheel's first round fails.
                    ("c-wheel", 2) => {
                        *failures += 1;
                        Outcome::Failed("the child failed".into())
                    }
                    _ => report(1.0, 10),
                }
            },
        );
        // Round 1: wheel, c-wheel (fails); round 2: wheel (disagrees); round 3: neither.
        assert_eq!(calls, ["wheel", "c-wheel", "wheel"]);
        assert_eq!(failures, 2);
        match &outcomes[0] {
            Outcome::Failed(message) => {
                assert!(
                    message.starts_with("round 2:") && message.contains("fired"),
                    "{message}"
                )
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(&outcomes[1], Outcome::Failed(m) if m == "the child failed"));
    }

    #[test]
    fn rounds_alternate_the_order_and_visit_every_task_once() {
        let order = |round| round_order(3, round).collect::<Vec<_>>();
        assert_eq!(order(0), [0, 1, 2]);
        assert_eq!(order(1), [2, 1, 0]);
        assert_eq!(order(2), [0, 1, 2]);
        assert_eq!(round_order(0, 1).count(), 0);
    }
}
