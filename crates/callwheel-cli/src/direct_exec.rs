//! calloutng's direct execution against the deferred path, on a real clock: callouts armed
//! with `C_DIRECT_EXEC` run from the event-timer interrupt itself, the others are handed to
//! the software-interrupt thread that runs `softclock`. Italiano and Motin claim the first
//! cuts latency, since it skips that hand-off; this measures it.
//!
//! One table of nanosecond ticks (`hz` = 10^9, tick 0 the run's start on
//! `CLOCK_MONOTONIC`) behind a lock, [`SharedCallouts`], and two threads as in the kernel: the
//! *interrupt* thread sleeps with `clock_nanosleep(TIMER_ABSTIME)` until the table's next
//! event, calls `process_with` (the direct handlers run there) and, when `softclock` has
//! work, wakes the *softclock* thread, which runs the deferred handlers. Every callout is
//! armed up front at a random absolute time, direct and deferred alternating, exact (no
//! precision, no default deviation), so both kinds meet the same wake-ups. A handler records
//! its lateness: the clock read in the handler less its deadline.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;

use callwheel::time::Sbt;
use callwheel::Wheel;
use callwheel_bench::verdict::verdict;
use callwheel_bench::workload::{SplitMix64, SEED};
use callwheel_callout::flags::{C_ABSOLUTE, C_DIRECT_EXEC};
use callwheel_callout::{Callouts, Config, SharedCallouts};
use callwheel_rt::clock::ClockId;

use crate::experiment::{Experiment, Section, Size};
use callwheel_bench::percentile::Summary;

/// What a run arms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Callouts, half of them direct.
    pub callouts: usize,
    /// Their deadlines spread over this many milliseconds from the start (after the first 5).
    pub span_ms: u64,
}

/// `direct`: the lateness of direct and deferred callouts on a real clock.
pub struct DirectExec;

impl Experiment for DirectExec {
    type Plan = Plan;

    fn name(&self) -> &'static str {
        "direct"
    }

    fn about(&self) -> &'static str {
        "calloutng's direct execution against softclock's deferred path: lateness on a real clock"
    }

    fn plan(&self, size: Size) -> Plan {
        let (callouts, span_ms) = match size {
            Size::Tiny => (40, 40),
            Size::Default => (1_000, 1_000),
            Size::Full => (10_000, 10_000),
        };
        Plan { callouts, span_ms }
    }

    fn run(&self, plan: &Plan, _out: &Path) -> Section {
        let mut done = Section::default();
        let _ = writeln!(
            done.markdown,
            "\n## Direct execution (calloutng's `C_DIRECT_EXEC`) against the deferred softclock path\n"
        );
        match measure(plan) {
            Ok((direct, deferred)) => render(plan, &direct, &deferred, &mut done),
            Err(e) => done.failed("direct execution", e),
        }
        done
    }
}

/// The software-interrupt thread's name.
const SOFTCLOCK: &str = "softclock";

/// Which callouts are direct: every other one.
fn is_direct(i: usize) -> bool {
    i.is_multiple_of(2)
}

/// Runs the plan: the lateness rows of the direct and the deferred callouts, in ns.
fn measure(plan: &Plan) -> Result<(Summary, Summary), String> {
    let clock = ClockId::Monotonic;
    let config = Config {
        hz: 1_000_000_000,
        calloutsize: plan.callouts + 16,
        deviation_percent: 0,
        ..Config::default()
    };
    let table = Callouts::with_config(Wheel::new(), config).map_err(|e| e.to_string())?;
    let table = Arc::new(SharedCallouts::single(table));
    let mut rng = SplitMix64::new(SEED);
    let lead = 5_000_000u64;
    let deadlines: Vec<u64> = (0..plan.callouts)
        .map(|_| lead + rng.range(0, plan.span_ms.max(1) * 1_000_000))
        .collect();
    let lateness: Arc<Vec<AtomicU64>> = Arc::new(
        (0..plan.callouts)
            .map(|_| AtomicU64::new(u64::MAX))
            .collect(),
    );
    let t0 = clock.read().map_err(|e| e.to_string())?;
    for (i, &d) in deadlines.iter().enumerate() {
        let h = table.callout_init().map_err(|e| e.to_string())?;
        let flags = C_ABSOLUTE | if is_direct(i) { C_DIRECT_EXEC } else { 0 };
        let sbt = Sbt::from_nanos(d as i64);
        table
            .callout_reset_sbt_on(h, sbt, Sbt::ZERO, i, -1, flags)
            .map_err(|e| e.to_string())?;
    }
    let deadlines = Arc::new(deadlines);
    // Which path ran each handler: a direct one must run on the interrupt thread, a deferred
    // one on the softclock thread, or the measurement is not of what it says.
    let wrong_path = Arc::new(AtomicU64::new(0));
    let record = {
        let (lateness, deadlines) = (Arc::clone(&lateness), Arc::clone(&deadlines));
        let wrong_path = Arc::clone(&wrong_path);
        move |i: usize| {
            let now = clock.read().unwrap_or(0).saturating_sub(t0);
            lateness[i].store(now.saturating_sub(deadlines[i]), Ordering::Relaxed);
            let on_softclock = std::thread::current().name() == Some(SOFTCLOCK);
            if on_softclock == is_direct(i) {
                wrong_path.fetch_add(1, Ordering::Relaxed);
            }
        }
    };
    // The softclock thread runs when woken and says when it is done: the interrupt waits for
    // that before it asks for the next event, so it never polls work it has handed off.
    let (wake, woken) = mpsc::channel::<bool>();
    let (finished, done) = mpsc::channel::<Result<(), String>>();
    let softclock = {
        let (table, record) = (Arc::clone(&table), record.clone());
        std::thread::Builder::new()
            .name(SOFTCLOCK.into())
            .spawn(move || {
                let _ = ClockId::minimise_timer_slack();
                while let Ok(more) = woken.recv() {
                    let ran = loop {
                        match table.softclock(0, &record) {
                            // The interrupt is running handlers: let it finish.
                            Err(callwheel_callout::Error::SoftclockBusy) => {
                                std::thread::yield_now()
                            }
                            other => break other.map(drop).map_err(|e| e.to_string()),
                        }
                    };
                    if finished.send(ran).is_err() || !more {
                        break;
                    }
                }
            })
            .map_err(|e| e.to_string())?
    };
    // The interrupt: this thread.
    let _ = ClockId::minimise_timer_slack();
    let mut outcome = Ok(());
    while let Ok(Some((first, _))) = table.next_event(0) {
        if let Err(e) = clock.sleep_until(t0 + first) {
            outcome = Err(e.to_string());
            break;
        }
        let now = clock.read().unwrap_or(t0).saturating_sub(t0);
        let handed = match table.process_with(0, now, &record) {
            Ok(more) => more,
            Err(callwheel_callout::Error::SoftclockBusy) => true,
            Err(e) => {
                outcome = Err(e.to_string());
                break;
            }
        };
        if handed {
            let ran = wake
                .send(true)
                .map_err(|_| "the softclock thread is gone".to_string())
                .and_then(|()| {
                    done.recv()
                        .map_err(|_| "the softclock thread is gone".to_string())
                })
                .and_then(|r| r);
            if let Err(e) = ran {
                outcome = Err(e);
                break;
            }
        }
    }
    let _ = wake.send(false);
    let _ = done.recv();
    softclock
        .join()
        .map_err(|_| "the softclock thread panicked".to_string())?;
    outcome?;
    let wrong = wrong_path.load(Ordering::Relaxed);
    if wrong > 0 {
        return Err(format!(
            "{wrong} handlers ran on the other path's thread (a direct one from softclock, or a deferred one from the interrupt)"
        ));
    }
    let mut rows = [Vec::new(), Vec::new()];
    for (i, l) in lateness.iter().enumerate() {
        let l = l.load(Ordering::Relaxed);
        if l == u64::MAX {
            return Err(format!("callout {i} never ran"));
        }
        rows[usize::from(!is_direct(i))].push(l);
    }
    let [direct, deferred] = rows;
    let row = |name, samples| Summary::of(name, samples).ok_or("no callouts".to_string());
    Ok((
        row("direct (C_DIRECT_EXEC)", direct)?,
        row("deferred (softclock thread)", deferred)?,
    ))
}

/// The table, the figures and the verdict beside calloutng's claim.
fn render(plan: &Plan, direct: &Summary, deferred: &Summary, done: &mut Section) {
    let _ = writeln!(
        done.markdown,
        "{} exact callouts over {} ms on `CLOCK_MONOTONIC` (nanosecond ticks), direct and deferred alternating; lateness in µs (the clock read in the handler less the deadline).\n",
        plan.callouts, plan.span_ms
    );
    let _ = writeln!(
        done.markdown,
        "| path | callouts | min | p50 | p99 | max |\n|---|---:|---:|---:|---:|---:|"
    );
    for row in [direct, deferred] {
        let us = |ns: u64| ns as f64 / 1_000.0;
        let _ = writeln!(
            done.markdown,
            "| {} | {} | {:.1} | {:.1} | {:.1} | {:.1} |",
            row.source,
            row.samples,
            us(row.min),
            us(row.p50),
            us(row.p99),
            us(row.max)
        );
        for (metric, v) in [
            ("p50_ns", row.p50),
            ("p99_ns", row.p99),
            ("max_ns", row.max),
        ] {
            done.figures
                .figure("direct", row.source, "lateness", metric, v as f64);
        }
    }
    let cut = deferred.p50 as f64 - direct.p50 as f64;
    done.find(
        "direct",
        "calloutng: direct execution cuts latency (p50 of direct below deferred's)".into(),
        format!(
            "{:.1} against {:.1} µs, {:.1} µs less: {}",
            direct.p50 as f64 / 1_000.0,
            deferred.p50 as f64 / 1_000.0,
            cut / 1_000.0,
            verdict(direct.p50 < deferred.p50)
        ),
    );
}
