//! `callwheel async`: callwheel-async's timers against tokio's and async-io's, in one run.
//!
//! # Precision
//!
//! Requested against actual sleep on three executors: see [`crate::async_precision`].
//!
//! # Coalescing
//!
//! Intervals with tolerance on the real clock: see [`crate::async_coalescing`].
//!
//! # Timeout churn
//!
//! K tasks (by default 1, 64 and 1,024) on a tokio multi-thread runtime with 2 workers each
//! loop `timeout(1 s, f).await` until the run's operations are done, f being ready at once
//! (variant A) or pending once before it completes (variant B, a future that wakes itself and
//! yields); operations per second for `tokio::time::timeout`, for async-io's `Timer` raced
//! against f (async-io has no timeout of its own; this is how smol code writes one) and for
//! `callwheel_async::timeout`. The three run alternately, each over the same task counts.
//!
//! # Sleep storm
//!
//! In a child process per case (so that each measures its own memory), N tasks (by default
//! 1,000,000) each sleep until a deadline drawn over one second: on tokio's multi-thread
//! runtime with `tokio::time::sleep` and with `callwheel_async::sleep`, and on smol's executor
//! with async-io's `Timer` and with `callwheel_async::sleep`. Reported: the time to spawn every
//! task and have it registered (each task signals its first poll), the resident memory per
//! sleeping task (resident set after registration less before spawning, divided by N), and how
//! long after the latest deadline the last task woke. Two floor cases spawn the same tasks with
//! no timer (each counts its first poll and waits for ever): what spawning and polling cost on
//! each executor, which bounds how much faster any timer can make the storm.

use std::future::Future;
use std::pin::Pin;
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::async_coalescing::{self, Coalescing};
use crate::async_precision::{self, Precision};
use crate::report::{verdict, Verdict};
use crate::repro::plots;
use crate::smol_pool::SmolPool;
use crate::workload::SplitMix64;

/// The tolerance of the tolerant coalescing run, in per cent of each interval's period.
pub const COALESCING_PERCENT: u64 = 5;

/// The options of `callwheel async`.
#[derive(Clone, Debug, Default, Args)]
pub struct AsyncArgs {
    /// Task counts of the timeout churn, comma-separated [default: 1,64,1024].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub tasks: Vec<u64>,
    /// Timeouts per churn measurement, over all tasks [default: 2000000; --quick: 200000; --tiny: 2000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub ops: Option<u64>,
    /// Samples per source and requested sleep in the precision sweep [default: 100; --quick: 20; --tiny: 3].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub samples: Option<u64>,
    /// Sleeping tasks in each storm [default: 1000000; --quick: 100000; --tiny: 1000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub sleepers: Option<u64>,
    /// Smaller sizes (a few seconds in all).
    #[arg(long)]
    pub quick: bool,
    /// Tiny sizes that check the plumbing; the figures mean little.
    #[arg(long, conflicts_with = "quick")]
    pub tiny: bool,
    /// Print the figures as JSON instead of the tables.
    #[arg(long)]
    pub json: bool,
    /// Also draw the precision sweep's log-log figure as DIR/async-precision.svg and .png.
    #[arg(long, value_name = "DIR")]
    pub out: Option<std::path::PathBuf>,
    /// Run one storm case in this process and print its result line (the parent's child).
    #[arg(long, hide = true, value_name = "CASE")]
    pub storm_child: Option<String>,
}

/// The sizes of one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AsyncPlan {
    /// Samples per source and request of the precision sweep.
    pub samples: u64,
    /// The precision sweep's requests, µs.
    pub requests_us: Vec<u64>,
    /// Intervals in the coalescing runs.
    pub intervals: u64,
    /// How long each coalescing run lasts, ms.
    pub coalescing_ms: u64,
    /// Task counts of the churn.
    pub tasks: Vec<u64>,
    /// Timeouts per churn measurement.
    pub ops: u64,
    /// Sleeping tasks per storm.
    pub sleepers: u64,
    /// The span the storm's deadlines are drawn over, in ms (they start a fifth of it, plus 3 µs
    /// per task, after the first spawn, so that registering does not run into them).
    pub span_ms: u64,
}

impl AsyncArgs {
    /// The sizes these options ask for.
    pub fn plan(&self) -> AsyncPlan {
        let (ops, sleepers, samples, intervals, coalescing_ms) = if self.tiny {
            (2_000, 1_000, 3, 50, 100)
        } else if self.quick {
            (200_000, 100_000, 20, 1_000, 1_000)
        } else {
            (2_000_000, 1_000_000, 100, 1_000, 2_000)
        };
        AsyncPlan {
            intervals,
            coalescing_ms,
            samples: self.samples.unwrap_or(samples),
            requests_us: if self.tiny {
                vec![10, 1_000]
            } else {
                crate::async_precision::REQUESTS_US.to_vec()
            },
            tasks: if self.tasks.is_empty() {
                vec![1, 64, 1_024]
            } else {
                self.tasks.clone()
            },
            ops: self.ops.unwrap_or(ops),
            sleepers: self.sleepers.unwrap_or(sleepers),
            span_ms: if self.tiny { 50 } else { 1_000 },
        }
    }
}

/// The timers compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Timer {
    /// tokio's timer.
    Tokio,
    /// async-io's `Timer`.
    AsyncIo,
    /// callwheel-async.
    Callwheel,
}

impl Timer {
    const ALL: [Timer; 3] = [Timer::Tokio, Timer::AsyncIo, Timer::Callwheel];

    /// The name in tables and figures.
    pub fn name(self) -> &'static str {
        match self {
            Timer::Tokio => "tokio::time::timeout",
            Timer::AsyncIo => "async-io Timer (raced)",
            Timer::Callwheel => "callwheel_async::timeout",
        }
    }
}

/// A future that is pending once (waking itself) and then ready: variant B's `f`.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// One timeout of `timer` around `f`; whether `f` won.
async fn one_timeout<F: Future<Output = ()>>(timer: Timer, f: F) -> bool {
    const LONG: Duration = Duration::from_secs(1);
    match timer {
        Timer::Tokio => tokio::time::timeout(LONG, f).await.is_ok(),
        Timer::Callwheel => callwheel_async::timeout(LONG, f).await.is_ok(),
        Timer::AsyncIo => {
            let f = std::pin::pin!(f);
            let t = async_io::Timer::after(LONG);
            matches!(futures_race(f, t).await, Race::First)
        }
    }
}

enum Race {
    First,
    Second,
}

/// Polls `a` then `b` until one completes (smol's `or`, written out to keep the dependency
/// list short).
async fn futures_race<A: Future<Output = ()>, B: Future>(mut a: Pin<&mut A>, b: B) -> Race {
    let mut b = std::pin::pin!(b);
    std::future::poll_fn(|cx| {
        if a.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Race::First);
        }
        if b.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Race::Second);
        }
        Poll::Pending
    })
    .await
}

/// One churn cell.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChurnCell {
    /// `A` (ready at once) or `B` (pending once).
    pub variant: char,
    /// Tasks.
    pub tasks: u64,
    /// The timer.
    pub timer: Timer,
    /// Timeouts per second.
    pub ops_per_sec: f64,
}

fn churn(
    runtime: &tokio::runtime::Runtime,
    timer: Timer,
    variant: char,
    tasks: u64,
    ops: u64,
) -> f64 {
    let per_task = ops.div_ceil(tasks);
    let won = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    runtime.block_on(async {
        let handles: Vec<_> = (0..tasks)
            .map(|_| {
                let won = Arc::clone(&won);
                tokio::spawn(async move {
                    let mut n = 0;
                    for _ in 0..per_task {
                        let ok = if variant == 'A' {
                            one_timeout(timer, std::future::ready(())).await
                        } else {
                            one_timeout(timer, YieldOnce(false)).await
                        };
                        n += u64::from(ok);
                    }
                    won.fetch_add(n, Ordering::Relaxed);
                })
            })
            .collect();
        for h in handles {
            let _ = h.await;
        }
    });
    let elapsed = start.elapsed().as_secs_f64();
    let done = won.load(Ordering::Relaxed);
    done as f64 / elapsed.max(1e-9)
}

/// One storm case: an executor and a timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum StormCase {
    /// tokio multi-thread, `tokio::time::sleep`.
    TokioTokio,
    /// tokio multi-thread, `callwheel_async::sleep`.
    TokioCallwheel,
    /// smol's executor, async-io's `Timer`.
    SmolAsyncIo,
    /// smol's executor, `callwheel_async::sleep`.
    SmolCallwheel,
    /// tokio multi-thread, no timer: each task signals its first poll and waits for ever (the
    /// floor of spawning and first polls, and of a task's own memory).
    TokioNone,
    /// smol's executor, no timer: the same floor.
    SmolNone,
}

impl StormCase {
    const ALL: [StormCase; 6] = [
        StormCase::TokioNone,
        StormCase::TokioTokio,
        StormCase::TokioCallwheel,
        StormCase::SmolNone,
        StormCase::SmolAsyncIo,
        StormCase::SmolCallwheel,
    ];

    /// Whether the tasks sleep (the floor cases do not).
    fn sleeps(self) -> bool {
        !matches!(self, StormCase::TokioNone | StormCase::SmolNone)
    }

    fn key(self) -> &'static str {
        match self {
            StormCase::TokioTokio => "tokio-tokio",
            StormCase::TokioCallwheel => "tokio-callwheel",
            StormCase::SmolAsyncIo => "smol-async-io",
            StormCase::SmolCallwheel => "smol-callwheel",
            StormCase::TokioNone => "tokio-none",
            StormCase::SmolNone => "smol-none",
        }
    }

    /// (executor, timer) as tables name them.
    pub fn labels(self) -> (&'static str, &'static str) {
        match self {
            StormCase::TokioTokio => ("tokio (2 workers)", "tokio::time::sleep"),
            StormCase::TokioCallwheel => ("tokio (2 workers)", "callwheel_async::sleep"),
            StormCase::SmolAsyncIo => ("smol", "async_io::Timer"),
            StormCase::SmolCallwheel => ("smol", "callwheel_async::sleep"),
            StormCase::TokioNone => ("tokio (2 workers)", "no timer (the floor)"),
            StormCase::SmolNone => ("smol", "no timer (the floor)"),
        }
    }
}

/// One storm's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StormResult {
    /// The case.
    pub case: StormCase,
    /// Sleeping tasks.
    pub sleepers: u64,
    /// Seconds to spawn every task and see each polled once (registered).
    pub register_s: f64,
    /// Resident bytes per sleeping task.
    pub bytes_per_task: f64,
    /// Milliseconds from the latest deadline to the last wake-up; `None` for the no-timer
    /// floor cases, whose tasks never wake.
    pub last_wake_after_ms: Option<f64>,
}

fn resident_bytes() -> u64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .unwrap_or(0);
    pages * 4096
}

/// What every task of a storm reports to the parent, in one allocation shared by all.
struct Counters {
    /// Tasks polled once (registered).
    polled: AtomicU64,
    /// Tasks woken after their sleep.
    woke: AtomicU64,
    /// Nanoseconds after `origin` of the latest wake-up: one atomic, not a lock a million
    /// tasks would queue on.
    last_wake: AtomicU64,
    origin: Instant,
}

/// One storm task: counts its first poll, awaits `wait` (a timer, or nothing for ever), counts
/// its wake-up. Generic, so each case's task holds its own timer's future and nothing else
/// (one async block matching on the case would size every task for the largest timer).
async fn sleeper<F: Future<Output = ()>>(wait: F, counters: Arc<Counters>) {
    counters.polled.fetch_add(1, Ordering::Relaxed);
    wait.await;
    let after = callwheel_rt::saturating_ns(counters.origin.elapsed());
    counters.last_wake.fetch_max(after, Ordering::Relaxed);
    counters.woke.fetch_add(1, Ordering::Relaxed);
}

/// Runs one storm case in this process (a child of `callwheel async`).
fn storm_here(case: StormCase, n: u64, span_ms: u64) -> StormResult {
    let mut rng = SplitMix64::new(crate::workload::SEED);
    // The deadlines start after registering can be over (3 µs a task is generous on this
    // kind of machine), so the last wake-up is measured against deadlines still ahead.
    let base = Instant::now() + Duration::from_millis(span_ms / 5) + Duration::from_micros(3 * n);
    let span_ns = span_ms * 1_000_000;
    let deadlines: Vec<Instant> = (0..n)
        .map(|_| base + Duration::from_nanos(rng.next_u64() % span_ns))
        .collect();
    let latest = deadlines.iter().copied().max().unwrap_or(base);
    let counters = Arc::new(Counters {
        polled: AtomicU64::new(0),
        woke: AtomicU64::new(0),
        last_wake: AtomicU64::new(0),
        origin: Instant::now(),
    });
    let c = || Arc::clone(&counters);
    // Registered, then every sleeper woke (the floor cases never wake: their tasks are
    // cancelled with the executor).
    let registered = || {
        while counters.polled.load(Ordering::Relaxed) < n {
            std::thread::yield_now();
        }
    };
    let all_woke = || {
        while case.sleeps() && counters.woke.load(Ordering::Relaxed) < n {
            std::thread::sleep(Duration::from_millis(2));
        }
    };
    let before = resident_bytes();
    let start = Instant::now();
    let (register_s, bytes) = match case {
        StormCase::TokioTokio | StormCase::TokioCallwheel | StormCase::TokioNone => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_time()
                .build()
                .expect("a tokio runtime starts");
            // tokio's sleeps are made inside the runtime, which owns their wheel.
            let _inside = rt.enter();
            for &at in &deadlines {
                match case {
                    StormCase::TokioTokio => {
                        rt.spawn(sleeper(tokio::time::sleep_until(at.into()), c()))
                    }
                    StormCase::TokioCallwheel => {
                        rt.spawn(sleeper(callwheel_async::sleep_until(at), c()))
                    }
                    _ => rt.spawn(sleeper(std::future::pending(), c())),
                };
            }
            registered();
            let register_s = start.elapsed().as_secs_f64();
            let bytes = resident_bytes().saturating_sub(before);
            all_woke();
            drop(_inside);
            drop(rt);
            (register_s, bytes)
        }
        StormCase::SmolAsyncIo | StormCase::SmolCallwheel | StormCase::SmolNone => {
            // Two threads run the executor (as tokio has two workers).
            let pool = SmolPool::new(2, || {}).expect("smol's runner threads start");
            let ex = pool.executor();
            let tasks: Vec<_> = deadlines
                .iter()
                .map(|&at| match case {
                    StormCase::SmolAsyncIo => ex.spawn(sleeper(
                        async move {
                            async_io::Timer::at(at).await;
                        },
                        c(),
                    )),
                    StormCase::SmolCallwheel => {
                        ex.spawn(sleeper(callwheel_async::sleep_until(at), c()))
                    }
                    _ => ex.spawn(sleeper(std::future::pending(), c())),
                })
                .collect();
            registered();
            let register_s = start.elapsed().as_secs_f64();
            let bytes = resident_bytes().saturating_sub(before);
            all_woke();
            drop(tasks);
            drop(pool);
            (register_s, bytes)
        }
    };
    let last = counters.origin + Duration::from_nanos(counters.last_wake.load(Ordering::Relaxed));
    StormResult {
        case,
        sleepers: n,
        register_s,
        bytes_per_task: bytes as f64 / n as f64,
        last_wake_after_ms: case
            .sleeps()
            .then(|| last.saturating_duration_since(latest).as_secs_f64() * 1e3),
    }
}

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct AsyncReport {
    /// The sizes.
    pub plan: AsyncPlan,
    /// The precision sweep.
    pub precision: Precision,
    /// The coalescing runs, at 0 % and at [`COALESCING_PERCENT`] tolerance.
    pub coalescing: Vec<Coalescing>,
    /// The churn cells.
    pub churn: Vec<ChurnCell>,
    /// The storms.
    pub storms: Vec<StormResult>,
}

/// Runs every measurement.
///
/// # Errors
///
/// When a runtime cannot start or a storm child fails.
pub fn measure(plan: &AsyncPlan, tick: &dyn Fn()) -> Result<AsyncReport, String> {
    // First, while nothing else of this run loads the CPUs.
    let precision = async_precision::measure(plan.samples, &plan.requests_us, tick)?;
    let coalescing = [0, COALESCING_PERCENT]
        .into_iter()
        .map(|pct| async_coalescing::measure(plan.intervals, pct, plan.coalescing_ms))
        .collect::<Result<Vec<_>, _>>()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .map_err(|e| format!("cannot start tokio: {e}"))?;
    let mut churn_cells = Vec::new();
    for variant in ['A', 'B'] {
        for &tasks in &plan.tasks {
            for timer in Timer::ALL {
                churn_cells.push(ChurnCell {
                    variant,
                    tasks,
                    timer,
                    ops_per_sec: churn(&runtime, timer, variant, tasks, plan.ops),
                });
            }
        }
    }
    drop(runtime);
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let mut storms = Vec::new();
    for case in StormCase::ALL {
        let out = Command::new(&exe)
            .args(["async", "--storm-child", case.key(), "--sleepers"])
            .arg(plan.sleepers.to_string())
            .args(if plan.span_ms < 1_000 {
                &["--tiny"][..]
            } else {
                &[]
            })
            .output()
            .map_err(|e| format!("cannot run the storm child: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "the {} storm failed: {}",
                case.key(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let line = String::from_utf8_lossy(&out.stdout);
        let result: StormResult = serde_json::from_str(line.trim())
            .map_err(|e| format!("the {} storm's result: {e}", case.key()))?;
        storms.push(result);
    }
    Ok(AsyncReport {
        plan: plan.clone(),
        precision,
        coalescing,
        churn: churn_cells,
        storms,
    })
}

fn cell(report: &AsyncReport, variant: char, tasks: u64, timer: Timer) -> f64 {
    report
        .churn
        .iter()
        .find(|c| c.variant == variant && c.tasks == tasks && c.timer == timer)
        .map_or(0.0, |c| c.ops_per_sec)
}

/// The churn figures of (tokio, async-io, callwheel) for one variant and task count.
fn cells(report: &AsyncReport, variant: char, tasks: u64) -> (f64, f64, f64) {
    (
        cell(report, variant, tasks, Timer::Tokio),
        cell(report, variant, tasks, Timer::AsyncIo),
        cell(report, variant, tasks, Timer::Callwheel),
    )
}

fn storm(report: &AsyncReport, case: StormCase) -> Option<&StormResult> {
    report.storms.iter().find(|s| s.case == case)
}

/// The verdicts against the targets: (what, figures and "met" or "missed").
pub fn verdicts(report: &AsyncReport) -> Vec<Verdict> {
    let mut out: Vec<Verdict> = async_precision::verdicts(&report.precision)
        .into_iter()
        .map(|v| Verdict {
            what: format!("precision: {}", v.what),
            result: v.result,
        })
        .collect();
    for c in &report.coalescing {
        if c.percent == 0 {
            continue;
        }
        out.push(Verdict {
            what: format!(
                "coalescing, {} intervals at {} %: wake-ups <= 1.05 x optimum",
                c.intervals, c.percent
            ),
            result: format!(
                "{} against {} ({:.3}x): {}",
                c.wakeups,
                c.optimum,
                c.ratio(),
                verdict(c.ratio() <= 1.05)
            ),
        });
        out.push(Verdict {
            what: format!(
                "coalescing, {} intervals at {} %: every tick inside its window",
                c.intervals, c.percent
            ),
            result: format!(
                "{} of {} ticks fired early, {} after their window (median {:.1} us, at most {:.1} us after): {}",
                c.early,
                c.ticks,
                c.after_window,
                c.excess_p50_ns as f64 / 1e3,
                c.excess_max_ns as f64 / 1e3,
                verdict(c.early == 0 && c.after_window == 0)
            ),
        });
    }
    for variant in ['A', 'B'] {
        for &tasks in &report.plan.tasks {
            let (t, a, c) = cells(report, variant, tasks);
            let (vt, va) = (c / t.max(1.0), c / a.max(1.0));
            let (target, met) = if variant == 'A' {
                ("no slower than tokio or async-io", vt >= 1.0 && va >= 1.0)
            } else {
                (">= 2x tokio and >= async-io", vt >= 2.0 && va >= 1.0)
            };
            out.push(Verdict {
                what: format!("churn {variant}, {tasks} tasks: {target}"),
                result: format!("{vt:.2}x tokio, {va:.2}x async-io: {}", verdict(met)),
            });
        }
    }
    if let (Some(tt), Some(tc)) = (
        storm(report, StormCase::TokioTokio),
        storm(report, StormCase::TokioCallwheel),
    ) {
        let ratio = tt.register_s / tc.register_s.max(1e-9);
        out.push(Verdict {
            what: "storm on tokio: registration >= 2x faster than tokio's".into(),
            result: format!("{ratio:.2}x: {}", verdict(ratio >= 2.0)),
        });
        if let Some(floor) = storm(report, StormCase::TokioNone) {
            // What spawning and first polls cost with no timer bounds every timer's ratio.
            let timer_share =
                |r: &StormResult| (r.register_s - floor.register_s) / r.sleepers as f64;
            out.push(Verdict {
                what: "storm on tokio: the timers' own registration cost (less the no-timer floor), no target".into(),
                result: format!(
                    "tokio {:.0} ns, callwheel {:.0} ns per task; with a free timer the ratio could reach at most {:.2}x",
                    timer_share(tt) * 1e9,
                    timer_share(tc) * 1e9,
                    tt.register_s / floor.register_s.max(1e-9)
                ),
            });
            out.push(Verdict {
                what: "storm on tokio: the timers' own bytes per task (less the floor), no target"
                    .into(),
                result: format!(
                    "tokio {:.0}, callwheel {:.0}",
                    tt.bytes_per_task - floor.bytes_per_task,
                    tc.bytes_per_task - floor.bytes_per_task
                ),
            });
        }
        out.push(Verdict {
            what: "storm on tokio: bytes per task <= tokio's own timer".into(),
            result: format!(
                "{:.0} against {:.0}: {}",
                tc.bytes_per_task,
                tt.bytes_per_task,
                verdict(tc.bytes_per_task <= tt.bytes_per_task)
            ),
        });
    }
    if let (Some(sa), Some(sc)) = (
        storm(report, StormCase::SmolAsyncIo),
        storm(report, StormCase::SmolCallwheel),
    ) {
        out.push(Verdict {
            what: "storm on smol: bytes per task <= async-io's own timer".into(),
            result: format!(
                "{:.0} against {:.0}: {}",
                sc.bytes_per_task,
                sa.bytes_per_task,
                verdict(sc.bytes_per_task <= sa.bytes_per_task)
            ),
        });
    }
    out
}

/// The report as Markdown (without the verdicts: see [`verdicts`]).
pub fn render(report: &AsyncReport) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Precision: requested against actual sleep on three executors"
    );
    out.push_str(&async_precision::render(&report.precision));
    let _ = writeln!(
        out,
        "\n## Coalescing: intervals on the real clock, one driver, their wake-ups against the optimum\n"
    );
    let _ = writeln!(
        out,
        "| intervals | tolerance | run ms | ticks | wake-ups | optimum | wake-ups / optimum | fired early | fired after window | median excess us | max excess us | task ran after window | its median excess us |"
    );
    let _ = writeln!(
        out,
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for c in &report.coalescing {
        let _ = writeln!(
            out,
            "| {} | {} % | {} | {} | {} | {} | {:.3} | {} | {} | {:.1} | {:.1} | {} | {:.1} |",
            c.intervals,
            c.percent,
            c.run_ms,
            c.ticks,
            c.wakeups,
            c.optimum,
            c.ratio(),
            c.early,
            c.after_window,
            c.excess_p50_ns as f64 / 1e3,
            c.excess_max_ns as f64 / 1e3,
            c.seen_after_window,
            c.seen_excess_p50_ns as f64 / 1e3
        );
    }
    let _ = writeln!(
        out,
        "\n## Timeout churn: timeouts per second ({} per measurement), tokio multi-thread runtime with 2 workers\n",
        report.plan.ops
    );
    let _ = writeln!(
        out,
        "A: the future is ready at once; B: it is pending once before it completes. The timeout is 1 s (it never fires).\n"
    );
    let _ = writeln!(
        out,
        "| variant | tasks | {} | {} | {} | callwheel / tokio | callwheel / async-io |",
        Timer::Tokio.name(),
        Timer::AsyncIo.name(),
        Timer::Callwheel.name()
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    for variant in ['A', 'B'] {
        for &tasks in &report.plan.tasks {
            let (t, a, c) = cells(report, variant, tasks);
            let _ = writeln!(
                out,
                "| {variant} | {tasks} | {:.2} M/s | {:.2} M/s | {:.2} M/s | {:.2} | {:.2} |",
                t / 1e6,
                a / 1e6,
                c / 1e6,
                c / t.max(1.0),
                c / a.max(1.0)
            );
        }
    }
    let _ = writeln!(
        out,
        "\n## Sleep storm: {} tasks each sleeping until a deadline drawn over {} ms\n",
        report.plan.sleepers, report.plan.span_ms
    );
    let _ = writeln!(
        out,
        "| executor | timer | spawn + register s | resident bytes per task | last wake-up after the last deadline ms |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|");
    for s in &report.storms {
        let (ex, timer) = s.case.labels();
        let _ = writeln!(
            out,
            "| {ex} | {timer} | {:.3} | {:.0} | {} |",
            s.register_s,
            s.bytes_per_task,
            s.last_wake_after_ms
                .map_or_else(|| "–".to_string(), |ms| format!("{ms:.2}"))
        );
    }
    out
}

/// `callwheel async`.
pub fn command(args: &AsyncArgs) -> ExitCode {
    if let Some(key) = &args.storm_child {
        let Some(case) = StormCase::ALL.into_iter().find(|c| c.key() == key) else {
            eprintln!("error: unknown storm case {key}");
            return ExitCode::from(2);
        };
        let plan = args.plan();
        let result = storm_here(case, plan.sleepers, plan.span_ms);
        match serde_json::to_string(&result) {
            Ok(line) => {
                println!("{line}");
                return ExitCode::SUCCESS;
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(1);
            }
        }
    }
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: this is a debug build; its figures are not representative (use --release)"
        );
    }
    // A figure directory that cannot be made is refused before the measurements, not after.
    if let Some(dir) = &args.out {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("error: cannot create {}: {e}", dir.display());
            return ExitCode::from(2);
        }
    }
    let plan = args.plan();
    let bar = crate::sections::progress_bar(plan.samples as usize);
    bar.set_message("precision sweep");
    let measured = measure(&plan, &|| bar.inc(1));
    bar.finish_and_clear();
    match measured {
        Ok(report) => {
            if let Some(dir) = &args.out {
                let charts = async_precision::charts(&report.precision);
                match plots::write_panels(
                    async_precision::CHART_TITLE,
                    &charts,
                    dir,
                    "async-precision",
                ) {
                    Ok(paths) => {
                        for p in paths {
                            eprintln!("wrote {}", p.display());
                        }
                    }
                    Err(e) => eprintln!("warning: the figure was not drawn: {e}"),
                }
            }
            if args.json {
                match serde_json::to_string_pretty(&report) {
                    Ok(text) => println!("{text}"),
                    Err(e) => {
                        eprintln!("error: cannot encode the results: {e}");
                        return ExitCode::from(1);
                    }
                }
            } else {
                print!("{}", render(&report));
                println!("\n| verdict | result |\n|---|---|");
                for v in verdicts(&report) {
                    println!("| {} | {} |", v.what, v.result);
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
