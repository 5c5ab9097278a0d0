//! Each workload's measurements and its Markdown section: what `callwheel bench` prints and
//! what `callwheel repro` writes into its report.

use std::fmt::Write as _;

use indicatif::ProgressBar;

use crate::measure::{complain, measure_rows};
pub use crate::measure::{measure, measure_tasks, progress_bar};
use crate::plan::{self, Settings};
use crate::report::{self, Outcome, RatioEntry, W1Row, W2Row, W3Row, W4Row, W5Row};
use crate::runner::Task;
use crate::structure::{Role, SchemeInfo};
use crate::verdict::{verdict, C_API_WITHIN};
use crate::workload;

/// Where a command writes its files when `--out` is not given (`results.json`, figures).
pub const DEFAULT_OUT: &str = "report";

/// The tool's name of the C API's wheel, run from the C driver: the structure the C API's
/// target ([`C_API_WITHIN`]) applies to.
const C_API: &str = "c-wheel";

/// The tool's name of the Rust wheel, the structure the facility's other interfaces are
/// compared with.
const RUST_WHEEL: &str = "wheel";

/// The fewest rounds from which the C API's verdict is given: a single run moves by up to 2×
/// on a shared machine, and the median of two ratios is the smaller one.
const ROUNDS_FOR_VERDICT: u32 = 3;

/// How a workload's ratio tables are read.
#[derive(Clone, Copy)]
struct Reading {
    /// The run's rounds: with two or more, the ratios are paired by round.
    rounds: u32,
    /// Whether the C API's figures come from its C driver (W1–W4), so that its target is
    /// judged; W5 runs it through an adapter of the benchmark traits.
    c_driver: bool,
}

impl Reading {
    /// The reading of a run with `settings`.
    fn of(settings: &Settings, c_driver: bool) -> Reading {
        Reading {
            rounds: settings.rounds,
            c_driver,
        }
    }
}

/// Appends the ratio tables under a workload's table, when the run holds the facility and a
/// peer (the peers against it), or the Rust wheel and the facility's other interfaces (the C
/// API, the async queue), with the C API's verdict when `reading` allows one.
fn ratios(md: &mut String, entries: &[RatioEntry], columns: &[String], reading: Reading) {
    let paired = if reading.rounds >= 2 {
        " (paired by round: the median of the rounds' ratios)"
    } else {
        ""
    };
    if let Some(table) = report::ratio_table(entries, columns, Role::Peer) {
        md.push('\n');
        let _ = writeln!(md, "Peers against the facility: each peer's median divided by the wheel's median, from this run{paired} (above 1: the wheel is faster)\n");
        md.push_str(&table);
    }
    if report::reference(entries).map(|r| r.name) != Some(RUST_WHEEL) {
        return;
    }
    if let Some(table) = report::ratio_table(entries, columns, Role::Facility) {
        md.push('\n');
        let _ = writeln!(md, "The facility's other interfaces against the Rust wheel: each one's median divided by the wheel's, from this run{paired}\n");
        md.push_str(&table);
        let judged = reading.c_driver && reading.rounds >= ROUNDS_FOR_VERDICT;
        let worst = judged
            .then(|| report::largest_ratio(entries, columns, C_API))
            .flatten();
        if let Some((worst, column)) = worst {
            md.push('\n');
            let _ = writeln!(
                md,
                "- The C API ({C_API}) within {C_API_WITHIN}× of the Rust wheel per operation, over {} rounds: largest {worst:.3}× ({column}): {}",
                reading.rounds,
                verdict(worst <= C_API_WITHIN)
            );
        }
    }
}

/// [`ratios`] for a workload with one figure per structure, in the column `column`.
fn one_column_ratios<'a>(
    md: &mut String,
    column: &str,
    rows: impl Iterator<Item = (&'static SchemeInfo, &'a Outcome)>,
    reading: Reading,
) {
    let entries: Vec<RatioEntry> = rows
        .map(|(scheme, outcome)| (scheme, column.to_string(), outcome))
        .collect();
    ratios(md, &entries, &[column.to_string()], reading);
}

/// Appends a heading with a blank line on each side.
pub fn heading(md: &mut String, text: &str) {
    let _ = write!(md, "\n{text}\n\n");
}

/// The number of measurements a section will run, every round counted (for the progress bar).
pub fn jobs(settings: &Settings, schemes: &[&'static SchemeInfo], which: &[&str]) -> usize {
    let has = |w: &str| which.contains(&w);
    let mut total = 0;
    if has("w1") {
        total += schemes
            .iter()
            .flat_map(|&s| settings.w1_sizes.iter().map(move |&n| (s, n)))
            .filter(|&(s, n)| settings.w1(s, n).is_ok())
            .count();
    }
    if has("w2") {
        total += schemes.iter().filter(|s| settings.w2(s).is_ok()).count();
    }
    if has("w3") {
        total += schemes.len();
    }
    if has("w4") {
        total += schemes.iter().filter(|s| settings.w4(s).is_ok()).count();
    }
    if has("w5") {
        total += schemes.iter().filter(|s| settings.w5(s).is_ok()).count();
    }
    total * settings.rounds.max(1) as usize
}

/// W1, set/cancel: the table, the matrix (schemes by N) and the ratios.
pub fn w1(
    settings: &Settings,
    schemes: &[&'static SchemeInfo],
    bar: &ProgressBar,
    failures: &mut usize,
) -> (Vec<W1Row>, String) {
    let mut md = String::new();
    let schemes_n: Vec<(&'static SchemeInfo, u64)> = schemes
        .iter()
        .flat_map(|&s| settings.w1_sizes.iter().map(move |&n| (s, n)))
        .collect();

    let params: Vec<_> = schemes_n
        .iter()
        .map(|&(scheme, n)| settings.w1(scheme, n))
        .collect();
    // Measured size by size, so that in every round the structures compared at one N run one
    // after another; tabled structure by structure.
    let per_scheme = settings.w1_sizes.len();
    let order: Vec<usize> = (0..per_scheme)
        .flat_map(|k| (0..schemes.len()).map(move |s| s * per_scheme + k))
        .collect();
    let planned: Vec<_> = order
        .iter()
        .map(|&i| {
            params[i].map(|params| Task::W1 {
                scheme: schemes_n[i].0,
                params,
            })
        })
        .collect();
    let mut measured: Vec<(usize, Outcome)> = order
        .into_iter()
        .zip(measure_tasks(bar, &planned, settings.rounds, failures))
        .collect();
    measured.sort_by_key(|&(i, _)| i);
    let outcomes = measured.into_iter().map(|(_, outcome)| outcome);
    let rows: Vec<W1Row> = schemes_n
        .iter()
        .zip(params)
        .zip(outcomes)
        .map(|((&(scheme, n), params), outcome)| W1Row {
            scheme,
            n,
            iters: params.ok().map(|p| p.iters),
            outcome,
        })
        .collect();
    let linear_note = schemes.iter().any(|s| s.complexity.linear_start);
    let unmeasured = schemes.iter().any(|s| !s.caps.memory);
    {
        heading(
            &mut md,
            "## W1 set/cancel: ns per (cancel + start) pair, I timed pairs after N untimed starts",
        );
        md.push_str(&report::w1_table(&rows));
        if linear_note {
            let limit = if settings.full {
                plan::LINEAR_W1_MAX_N_FULL
            } else {
                plan::LINEAR_W1_MAX_N
            };
            md.push('\n');
            let _ = writeln!(
                md,
                "O(n)-start schemes: I = clamp({} / max(N, 1), {}, {}); N > {limit} skipped{}.",
                plan::LINEAR_W1_WORK,
                plan::LINEAR_W1_MIN_ITERS,
                plan::W1_ITERS,
                if settings.full {
                    ""
                } else {
                    " (--full raises the limit to 100000)"
                },
            );
        }
        if unmeasured {
            md.push('\n');
            let _ = writeln!(md,
                    "bytes/timer n/a: the peer's memory is not observable from outside, and is not guessed."
                );
        }
        heading(
            &mut md,
            "W1 matrix: median ns per (cancel + start) pair (rows = schemes, columns = N)",
        );
        md.push_str(&report::w1_matrix(&rows, &settings.w1_sizes));
        let entries: Vec<RatioEntry> = rows
            .iter()
            .map(|r| (r.scheme, format!("N={}", r.n), &r.outcome))
            .collect();
        let columns: Vec<String> = settings.w1_sizes.iter().map(|n| format!("N={n}")).collect();
        ratios(&mut md, &entries, &columns, Reading::of(settings, true));
    }

    (rows, md)
}

/// W2, churn: the table with expiry counts checked against the replay, and the ratios.
pub fn w2(
    settings: &Settings,
    schemes: &[&'static SchemeInfo],
    bar: &ProgressBar,
    failures: &mut usize,
) -> (Vec<W2Row>, String) {
    let mut md = String::new();

    // The expected count at each N, replayed once from the draws alone.
    let mut expected: Vec<(u64, u64)> = Vec::new();
    for params in schemes.iter().filter_map(|&s| settings.w2(s).ok()) {
        if expected.iter().all(|e| e.0 != params.n) {
            let count = workload::w2_expected(params.n, params.steps);
            let standard = (params.n, params.steps) == (plan::W2_N, plan::W2_STEPS);
            if standard && count != plan::W2_EXPECTED {
                complain(
                    bar,
                    failures,
                    format!(
                        "the W2 replay gives {count} expiries, docs/workloads.md says {}",
                        plan::W2_EXPECTED
                    ),
                );
            }
            expected.push((params.n, count));
        }
    }
    let rows: Vec<W2Row> = measure_rows(
        bar,
        schemes,
        settings.rounds,
        failures,
        |scheme| settings.w2(scheme),
        |scheme, params| Task::W2 { scheme, params },
        |scheme, params, outcome| {
            let want = params.map_or(0, |p| {
                expected.iter().find(|e| e.0 == p.n).map_or(0, |e| e.1)
            });
            let row = W2Row {
                scheme,
                n: params.map(|p| p.n),
                steps: params.map_or(settings.w2_steps, |p| p.steps),
                expected: want,
                outcome,
            };
            let problem = (!row.count_ok()).then(|| {
                let got = match &row.outcome {
                    Outcome::Done(r) => r.fired.map_or("no".into(), |f| f.to_string()),
                    _ => "no".into(),
                };
                format!("{got} expiries, expected {want}")
            });
            (row, problem)
        },
    );
    let reduced_n =
        settings.w2_n > plan::LINEAR_W2_N && schemes.iter().any(|s| s.complexity.any_linear());
    let skipped = schemes.iter().any(|s| settings.w2(s).is_err());
    {
        heading(&mut md, &format!(
                "## W2 churn: ns per step (start, pop the oldest, cancel it 95 % of the time; 1 tick per {} steps), N timers in flight",
                workload::W2_STEPS_PER_TICK
            ));
        md.push_str(&report::w2_table(&rows));
        md.push('\n');
        let counts: Vec<String> = expected
            .iter()
            .map(|(n, c)| format!("{c} at N = {n}"))
            .collect();
        if !counts.is_empty() {
            let _ = writeln!(md,
                    "Expected expiries for every exact structure (replayed from the draws alone, no timer structure): {}.",
                    counts.join(", ")
                );
        }
        let _ = writeln!(md,
                "A lossy structure (Scheme 7 with one or no migration) fires timers late: its count is reported, flagged, not checked."
            );
        if reduced_n {
            let _ = writeln!(md,
                    "Structures with an O(n) tick or an O(n) start run W2 with N = {} in flight instead of {} (the N column says which).",
                    plan::LINEAR_W2_N,
                    settings.w2_n,
                );
        }
        if skipped {
            let _ = writeln!(md,
                    "O(n)-start structures are skipped above {} steps: even at N = {} they hold about 12 000 timers (the 5 % left to expire stay some 200 ticks) and every start walks them: 70-80 us per step, some 2.5 minutes per repetition.",
                    plan::LINEAR_START_W2_MAX_STEPS,
                    plan::LINEAR_W2_N,
                );
        }
        one_column_ratios(
            &mut md,
            "ns/step",
            rows.iter().map(|r| (r.scheme, &r.outcome)),
            Reading::of(settings, true),
        );
    }

    (rows, md)
}

/// W3, expire: the table with fired counts checked, and the ratios.
pub fn w3(
    settings: &Settings,
    schemes: &[&'static SchemeInfo],
    bar: &ProgressBar,
    failures: &mut usize,
) -> (Vec<W3Row>, String) {
    let mut md = String::new();

    let rows: Vec<W3Row> = measure_rows(
        bar,
        schemes,
        settings.rounds,
        failures,
        |scheme| Ok(settings.w3(scheme)),
        |scheme, params| Task::W3 { scheme, params },
        |scheme, _, outcome| {
            let params = settings.w3(scheme);
            let row = W3Row {
                scheme,
                timers: params.timers,
                ticks: params.ticks,
                outcome,
            };
            let problem = (!row.fired_ok()).then(|| {
                let fired = match &row.outcome {
                    Outcome::Done(r) => r.fired.map_or("no".into(), |f| f.to_string()),
                    _ => "no".into(),
                };
                format!("fired {fired} timers, expected {}", params.timers)
            });
            (row, problem)
        },
    );
    let reduced = schemes.iter().any(|s| s.complexity.any_linear());
    {
        heading(&mut md,
                "## W3 expire: ns per timer, starts plus a tick-by-tick advance over every tick, all timed",
            );
        md.push_str(&report::w3_table(&rows));
        if reduced {
            md.push('\n');
            let _ = writeln!(
                md,
                "Schemes with an O(n) start or an O(n) tick run at most {} timers (same ticks).",
                plan::LINEAR_W3_TIMERS
            );
        }
        one_column_ratios(
            &mut md,
            "ns/timer",
            rows.iter().map(|r| (r.scheme, &r.outcome)),
            Reading::of(settings, true),
        );
    }

    (rows, md)
}

/// W4, sparse advance: the table with jump counts, and the ratios.
pub fn w4(
    settings: &Settings,
    schemes: &[&'static SchemeInfo],
    bar: &ProgressBar,
    failures: &mut usize,
) -> (Vec<W4Row>, String) {
    let mut md = String::new();

    let rows: Vec<W4Row> = measure_rows(
        bar,
        schemes,
        settings.rounds,
        failures,
        |scheme| settings.w4(scheme),
        |scheme, params| Task::W4 { scheme, params },
        |scheme, params, outcome| {
            let timers = params.map_or(settings.w4_timers, |p| p.timers);
            let row = W4Row {
                scheme,
                timers,
                outcome,
            };
            let problem = (!row.fired_ok()).then(|| format!("did not fire all {timers} timers"));
            (row, problem)
        },
    );
    {
        heading(&mut md, &format!(
                "## W4 sparse advance: ns per timer, {} starts in [1, {}) then advance(d) at every d the structure's wake-up query names, all timed",
                settings.w4_timers, settings.w4_ticks
            ));
        md.push_str(&report::w4_table(&rows));
        md.push('\n');
        let _ = writeln!(md,
                "Wake-up query: next_wakeup() for the wheel, next_expiry() for every other structure; a coarse answer (a slot or cascade boundary) only adds jumps. Scheme 7's binary layouts run W4 with 5 levels of 64 slots (4 levels span 2^24 ticks)."
            );
        one_column_ratios(
            &mut md,
            "ns/timer",
            rows.iter().map(|r| (r.scheme, &r.outcome)),
            Reading::of(settings, true),
        );
    }

    (rows, md)
}

/// W5, coalescing: wake-ups against the optimum, window violations, and the ratios.
pub fn w5(
    settings: &Settings,
    schemes: &[&'static SchemeInfo],
    bar: &ProgressBar,
    failures: &mut usize,
) -> (Vec<W5Row>, String) {
    let mut md = String::new();

    let rows: Vec<W5Row> = measure_rows(
        bar,
        schemes,
        settings.rounds,
        failures,
        |scheme| settings.w5(scheme),
        |scheme, params| Task::W5 { scheme, params },
        |scheme, params, outcome| {
            let row = W5Row {
                scheme,
                timers: params.map_or(settings.w5_timers, |p| p.timers),
                tolerance_percent: params
                    .map_or(settings.w5_tolerance_percent, |p| p.tolerance_percent),
                outcome,
            };
            let problem = row.problem();
            (row, problem)
        },
    );
    let reduced = settings.w5_timers > plan::LINEAR_W5_TIMERS
        && schemes
            .iter()
            .any(|s| s.complexity.linear_start && settings.w5(s).is_ok());
    {
        heading(&mut md, &format!(
                "## W5 coalescing: {} timers at d in [1, {}), window [d, d + tol]; wake repeatedly at the structure's wake-up query and advance there until empty",
                settings.w5_timers, settings.w5_ticks
            ));
        md.push_str(&report::w5_table(&rows));
        md.push('\n');
        let _ = writeln!(md,
                "wake-ups: advance calls. optimum: the fewest instants stabbing every window (greedy: sort by end, take the end of the first unstabbed window); at tolerance 0, the distinct deadlines. ratio = wake-ups / optimum."
            );
        let _ = writeln!(md,
                "violations: timers whose wake-up instant or callback time (timers.now()) fell outside [d, d + tol]; an error for an exact structure, reported for a lossy one."
            );
        let _ = writeln!(md,
                "Tolerance {} % (tol = d * {} / 100) needs start_with: only the wheel takes it, every other structure runs tolerance 0 only. ns/timer covers the starts and the whole drive; the counts are what W5 is about.",
                settings.w5_tolerance_percent, settings.w5_tolerance_percent
            );
        if reduced {
            let _ = writeln!(md,
                    "O(n)-start structures run W5 with at most {} timers (the timers column says which): at 100000 their sorted inserts take about two minutes per repetition.",
                    plan::LINEAR_W5_TIMERS
                );
        }
        one_column_ratios(
            &mut md,
            "ns/timer, tol 0",
            rows.iter().map(|r| (r.scheme, &r.outcome)),
            Reading::of(settings, false),
        );
    }

    (rows, md)
}
