//! `callwheel async`: callwheel-async's timers against tokio's and async-io's, in one run.
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
//! long after the latest deadline the last task woke.

use std::future::Future;
use std::pin::Pin;
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::workload::SplitMix64;

/// The options of `callwheel async`.
#[derive(Clone, Debug, Default, Args)]
pub struct AsyncArgs {
    /// Task counts of the timeout churn, comma-separated [default: 1,64,1024].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub tasks: Vec<u64>,
    /// Timeouts per churn measurement, over all tasks [default: 2000000; --quick: 200000; --tiny: 2000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub ops: Option<u64>,
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
    /// Run one storm case in this process and print its result line (the parent's child).
    #[arg(long, hide = true, value_name = "CASE")]
    pub storm_child: Option<String>,
}

/// The sizes of one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AsyncPlan {
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
        let (ops, sleepers) = if self.tiny {
            (2_000, 1_000)
        } else if self.quick {
            (200_000, 100_000)
        } else {
            (2_000_000, 1_000_000)
        };
        AsyncPlan {
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

    fn name(self) -> &'static str {
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
}

impl StormCase {
    const ALL: [StormCase; 4] = [
        StormCase::TokioTokio,
        StormCase::TokioCallwheel,
        StormCase::SmolAsyncIo,
        StormCase::SmolCallwheel,
    ];

    fn key(self) -> &'static str {
        match self {
            StormCase::TokioTokio => "tokio-tokio",
            StormCase::TokioCallwheel => "tokio-callwheel",
            StormCase::SmolAsyncIo => "smol-async-io",
            StormCase::SmolCallwheel => "smol-callwheel",
        }
    }

    fn labels(self) -> (&'static str, &'static str) {
        match self {
            StormCase::TokioTokio => ("tokio (2 workers)", "tokio::time::sleep"),
            StormCase::TokioCallwheel => ("tokio (2 workers)", "callwheel_async::sleep"),
            StormCase::SmolAsyncIo => ("smol", "async_io::Timer"),
            StormCase::SmolCallwheel => ("smol", "callwheel_async::sleep"),
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
    /// Milliseconds from the latest deadline to the last wake-up.
    pub last_wake_after_ms: f64,
}

fn resident_bytes() -> u64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .unwrap_or(0);
    pages * 4096
}

/// Runs one storm in this process.
fn storm_here(case: StormCase, n: u64, span_ms: u64) -> StormResult {
    let mut rng = SplitMix64::new(crate::workload::SEED);
    // The deadlines start after registering can be over (3 µs a task is generous on this
    // kind of machine), so the last wake-up is measured against deadlines still ahead.
    let base = Instant::now() + Duration::from_millis(span_ms / 5) + Duration::from_micros(3 * n);
    let span_ns = span_ms * 1_000_000;
    let delays: Vec<Duration> = (0..n)
        .map(|_| Duration::from_nanos(rng.next_u64() % span_ns))
        .collect();
    let latest = base + delays.iter().copied().max().unwrap_or_default();
    let polled = Arc::new(AtomicU64::new(0));
    let woke = Arc::new(AtomicU64::new(0));
    // Nanoseconds after `origin` of the latest wake-up: one atomic, not a lock a million
    // tasks would queue on.
    let origin = Instant::now();
    let last_wake = Arc::new(AtomicU64::new(0));
    let before = resident_bytes();
    let start = Instant::now();
    let task = {
        let polled = Arc::clone(&polled);
        let woke = Arc::clone(&woke);
        let last_wake = Arc::clone(&last_wake);
        move |d: Duration| {
            let polled = Arc::clone(&polled);
            let woke = Arc::clone(&woke);
            let last_wake = Arc::clone(&last_wake);
            async move {
                let at = base + d;
                polled.fetch_add(1, Ordering::Relaxed);
                match case {
                    StormCase::TokioTokio => tokio::time::sleep_until(at.into()).await,
                    StormCase::SmolAsyncIo => {
                        async_io::Timer::at(at).await;
                    }
                    StormCase::TokioCallwheel | StormCase::SmolCallwheel => {
                        callwheel_async::sleep_until(at).await
                    }
                }
                let after = u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX);
                last_wake.fetch_max(after, Ordering::Relaxed);
                woke.fetch_add(1, Ordering::Relaxed);
            }
        }
    };
    let (register_s, bytes) = match case {
        StormCase::TokioTokio | StormCase::TokioCallwheel => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_time()
                .build()
                .expect("a tokio runtime starts");
            for &d in &delays {
                rt.spawn(task(d));
            }
            while polled.load(Ordering::Relaxed) < n {
                std::thread::yield_now();
            }
            let register_s = start.elapsed().as_secs_f64();
            let bytes = resident_bytes().saturating_sub(before);
            while woke.load(Ordering::Relaxed) < n {
                std::thread::sleep(Duration::from_millis(2));
            }
            drop(rt);
            (register_s, bytes)
        }
        StormCase::SmolAsyncIo | StormCase::SmolCallwheel => {
            let ex = Arc::new(async_executor::Executor::new());
            let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
            // Two threads run the executor (as tokio has two workers), until told to stop.
            let runners: Vec<_> = (0..2)
                .map(|_| {
                    let ex = Arc::clone(&ex);
                    let stop = Arc::clone(&stop);
                    std::thread::spawn(move || {
                        async_io::block_on(ex.run(async move {
                            while !stop.load(Ordering::Acquire) {
                                async_io::Timer::after(Duration::from_millis(5)).await;
                            }
                        }));
                    })
                })
                .collect();
            let tasks: Vec<_> = delays.iter().map(|&d| ex.spawn(task(d))).collect();
            while polled.load(Ordering::Relaxed) < n {
                std::thread::yield_now();
            }
            let register_s = start.elapsed().as_secs_f64();
            let bytes = resident_bytes().saturating_sub(before);
            while woke.load(Ordering::Relaxed) < n {
                std::thread::sleep(Duration::from_millis(2));
            }
            drop(tasks);
            stop.store(true, Ordering::Release);
            for r in runners {
                let _ = r.join();
            }
            (register_s, bytes)
        }
    };
    let last = origin + Duration::from_nanos(last_wake.load(Ordering::Relaxed));
    StormResult {
        case,
        sleepers: n,
        register_s,
        bytes_per_task: bytes as f64 / n as f64,
        last_wake_after_ms: last.saturating_duration_since(latest).as_secs_f64() * 1e3,
    }
}

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct AsyncReport {
    /// The sizes.
    pub plan: AsyncPlan,
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
pub fn measure(plan: &AsyncPlan) -> Result<AsyncReport, String> {
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

fn storm(report: &AsyncReport, case: StormCase) -> Option<&StormResult> {
    report.storms.iter().find(|s| s.case == case)
}

/// The report as Markdown, with the verdicts against the targets.
pub fn render(report: &AsyncReport) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## Timeout churn: timeouts per second ({} per measurement), tokio multi-thread runtime with 2 workers\n",
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
    let mut verdicts = Vec::new();
    for variant in ['A', 'B'] {
        for &tasks in &report.plan.tasks {
            let (t, a, c) = (
                cell(report, variant, tasks, Timer::Tokio),
                cell(report, variant, tasks, Timer::AsyncIo),
                cell(report, variant, tasks, Timer::Callwheel),
            );
            let _ = writeln!(
                out,
                "| {variant} | {tasks} | {:.2} M/s | {:.2} M/s | {:.2} M/s | {:.2} | {:.2} |",
                t / 1e6,
                a / 1e6,
                c / 1e6,
                c / t.max(1.0),
                c / a.max(1.0)
            );
            let met = if variant == 'A' {
                c >= t && c >= a
            } else {
                c >= 2.0 * t && c >= a
            };
            verdicts.push((variant, tasks, c / t.max(1.0), c / a.max(1.0), met));
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
            "| {ex} | {timer} | {:.3} | {:.0} | {:.2} |",
            s.register_s, s.bytes_per_task, s.last_wake_after_ms
        );
    }
    let _ = writeln!(out, "\n| verdict | result |\n|---|---|");
    for (variant, tasks, vt, va, met) in verdicts {
        let target = if variant == 'A' {
            "no slower than tokio or async-io"
        } else {
            ">= 2x tokio and >= async-io"
        };
        let _ = writeln!(
            out,
            "| churn {variant}, {tasks} tasks: {target} | {vt:.2}x tokio, {va:.2}x async-io: {} |",
            if met { "met" } else { "missed" }
        );
    }
    if let (Some(tt), Some(tc)) = (
        storm(report, StormCase::TokioTokio),
        storm(report, StormCase::TokioCallwheel),
    ) {
        let ratio = tt.register_s / tc.register_s.max(1e-9);
        let _ = writeln!(
            out,
            "| storm on tokio: registration >= 2x faster than tokio's | {ratio:.2}x: {} |",
            if ratio >= 2.0 { "met" } else { "missed" }
        );
        let _ = writeln!(
            out,
            "| storm on tokio: bytes per task <= tokio's own timer | {:.0} against {:.0}: {} |",
            tc.bytes_per_task,
            tt.bytes_per_task,
            if tc.bytes_per_task <= tt.bytes_per_task {
                "met"
            } else {
                "missed"
            }
        );
    }
    if let (Some(sa), Some(sc)) = (
        storm(report, StormCase::SmolAsyncIo),
        storm(report, StormCase::SmolCallwheel),
    ) {
        let _ = writeln!(
            out,
            "| storm on smol: bytes per task <= async-io's own timer | {:.0} against {:.0}: {} |",
            sc.bytes_per_task,
            sa.bytes_per_task,
            if sc.bytes_per_task <= sa.bytes_per_task {
                "met"
            } else {
                "missed"
            }
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
    match measure(&args.plan()) {
        Ok(report) => {
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
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
