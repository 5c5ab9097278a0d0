//! `callwheel sweep`: calloutng's Figures 4–7 (Italiano & Motin, §5) — requested against
//! actual sleep from 1 µs to 10 ms — and the runtime's wake-up counts with and without
//! tolerance.
//!
//! # The sleep sweep
//!
//! For every requested sleep `r` (log-spaced, 1, 2, 5, 10, … 10,000 µs) five sources sleep
//! `r`, one sample each in turn, in a fresh seeded shuffle of the sources every turn, so all
//! of them see the same host noise (the sources are interleaved sample by sample, never run one
//! after another). The shuffle matters for short sleeps: a fixed order, even rotated, always
//! gives a source the same predecessor, and a callwheel timer armed right after tokio's 1 ms
//! sleep must wake a driver that has gone cold on an idle CPU (6–10 µs), while one armed right
//! after another callwheel sample finds it warm (about 3 µs):
//!
//! | source | how it sleeps | actual sleep: clock reading … minus the reading before arming |
//! |---|---|---|
//! | callwheel-rt, exact | a direct timer on a one-shard runtime, window `[t0 + r, t0 + r]` (calloutng's absolute precision, Figure 4) | … at the start of the callback |
//! | callwheel-rt, 5 % | the same timer with tolerance `r × 5 %` (calloutng's `C_PREL`, Figure 5) | … at the start of the callback |
//! | clock_nanosleep, 1 ns slack | `clock_nanosleep(TIMER_ABSTIME)` on this thread, timer slack 1 ns | … right after the sleep returns |
//! | clock_nanosleep, 5 % slack | the same with `PR_SET_TIMERSLACK` = `r × 5 %`: the kernel's own tolerance | … right after the sleep returns |
//! | tokio::time::sleep | `block_on(sleep(r))` on a current-thread tokio runtime (1 ms timer wheel) | … when `block_on` returns |
//!
//! The runtime's driver sleeps until the earliest window *end*, so a lone timer with 5 %
//! tolerance fires near `1.05 r`, as a lone kernel hrtimer with 5 % slack does: tolerance buys
//! coalescing, not promptness.
//!
//! # The wake-up batches
//!
//! A fresh one-shard runtime gets `timers` direct timers with deadlines `d` drawn (SplitMix64)
//! over a span, tolerance `(d - now) × pct / 100`, for each tolerance (0 % and 5 %). Its
//! driver's wake-ups are counted from [`ShardStats`] (every return
//! from its sleep, less the early ones a new, earlier timer caused while they were armed), and
//! compared with the optimum: the fewest instants stabbing every window, computed offline by
//! the greedy algorithm ([`callwheel::stabbing_optimum`]). Each firing's driver reading is checked against
//! its window: never before the deadline; after the window's end only by the kernel's wake-up
//! overshoot (the driver plans its wake-up at the earliest window end, so the timer that sets
//! it fires that overshoot after its window). Every timer must fire exactly once. A last check
//! leaves a runtime with one timer an hour away idle and counts its wake-ups: there must be
//! none.

use std::num::NonZeroU64;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use callwheel_rt::{ClockId, Deadline, Exec, Runtime, ShardStats, Timer};
use clap::Args;
use indicatif::ProgressBar;
use serde::Serialize;

use crate::latency::Row;
use crate::report::{verdict, Verdict};
use crate::repro::plots::{self, Chart, Series};
use crate::workload::{SplitMix64, SEED};
use callwheel::stabbing_optimum;

/// The requested sleeps of the default sweep, in µs: 1-2-5 steps per decade, 1 µs to 10 ms.
pub const REQUESTS_US: [u64; 13] = [
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000,
];

/// The tolerance of the tolerant sources, in per cent of the requested sleep (calloutng's
/// Figure 5).
pub const TOLERANCE_PERCENT: u64 = 5;

/// The tolerances of the wake-up batches, in per cent.
pub const BATCH_TOLERANCES: [u64; 2] = [0, TOLERANCE_PERCENT];

/// How far after arming the first batch deadline may fall, so that arming is over first: at
/// least this, and three times what creating the batch's timers took (arming costs about as
/// much; a million timers take over a second).
const BATCH_LEAD_NS: u64 = 50_000_000;

/// A source of sleeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Source {
    /// A callwheel-rt timer with no tolerance.
    CallwheelExact,
    /// A callwheel-rt timer with 5 % tolerance.
    CallwheelTolerant,
    /// `clock_nanosleep(TIMER_ABSTIME)` with 1 ns timer slack.
    RawExact,
    /// `clock_nanosleep(TIMER_ABSTIME)` with 5 % of the request as timer slack.
    RawSlack,
    /// `tokio::time::sleep` on a current-thread runtime.
    Tokio,
}

impl Source {
    /// Every source, in table order.
    pub const ALL: [Source; 5] = [
        Source::CallwheelExact,
        Source::CallwheelTolerant,
        Source::RawExact,
        Source::RawSlack,
        Source::Tokio,
    ];

    /// The name in tables, legends and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Source::CallwheelExact => "callwheel-rt, exact",
            Source::CallwheelTolerant => "callwheel-rt, 5 %",
            Source::RawExact => "clock_nanosleep, 1 ns slack",
            Source::RawSlack => "clock_nanosleep, 5 % slack",
            Source::Tokio => "tokio::time::sleep",
        }
    }
}

/// The options of `callwheel sweep`.
#[derive(Clone, Debug, Default, Args)]
pub struct SweepArgs {
    /// Samples per source and requested sleep [default: 100; --quick: 20; --tiny: 3].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub samples: Option<u64>,
    /// Requested sleeps in µs, comma-separated [default: 1,2,5,10,20,50,100,200,500,1000,2000,5000,10000; --tiny: 1,100,1000].
    #[arg(long = "requests-us", value_name = "LIST", value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub requests_us: Vec<u64>,
    /// Timers in each wake-up batch [default: 1000; --tiny: 50].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub timers: Option<u64>,
    /// The span the batch deadlines are drawn over, in ms [default: 2000; --quick: 1000; --tiny: 20].
    #[arg(long = "span-ms", value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub span_ms: Option<u64>,
    /// Smaller sizes: 20 samples, batches over 1 s (about 4 s in all).
    #[arg(long)]
    pub quick: bool,
    /// Tiny sizes that check the plumbing in well under a second; the figures mean little.
    #[arg(long, conflicts_with = "quick")]
    pub tiny: bool,
    /// Print the figures as JSON instead of the tables.
    #[arg(long)]
    pub json: bool,
    /// Also draw the log-log figure (requested against actual sleep) as DIR/sweep.svg and
    /// DIR/sweep.png.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<std::path::PathBuf>,
}

/// The sizes of one sweep, defaults resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// Requested sleeps, µs, ascending without repeats.
    pub requests_us: Vec<u64>,
    /// Samples per source and request.
    pub samples: u64,
    /// Timers per wake-up batch.
    pub batch_timers: u64,
    /// The span of the batch deadlines, ms.
    pub span_ms: u64,
    /// How long the idle check watches a runtime with nothing due, ms.
    pub idle_ms: u64,
}

impl SweepArgs {
    /// The plan these options ask for.
    pub fn plan(&self) -> Plan {
        let (samples, requests, timers, span_ms, idle_ms) = if self.tiny {
            (3, vec![1, 100, 1_000], 50, 20, 20)
        } else if self.quick {
            (20, REQUESTS_US.to_vec(), 1_000, 1_000, 200)
        } else {
            (100, REQUESTS_US.to_vec(), 1_000, 2_000, 500)
        };
        let mut requests_us = if self.requests_us.is_empty() {
            requests
        } else {
            self.requests_us.clone()
        };
        requests_us.sort_unstable();
        requests_us.dedup();
        Plan {
            requests_us,
            samples: self.samples.unwrap_or(samples),
            batch_timers: self.timers.unwrap_or(timers),
            span_ms: self.span_ms.unwrap_or(span_ms),
            idle_ms,
        }
    }
}

/// One source's actual sleeps for one request, in nanoseconds.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    /// The source.
    pub source: Source,
    /// The requested sleep, µs.
    pub request_us: u64,
    /// The actual sleeps (min, mean, median, p99, ...), ns.
    pub actual: Row,
}

/// One wake-up batch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Batch {
    /// The tolerance, in per cent of each timer's interval.
    pub tolerance_percent: u64,
    /// Timers armed.
    pub timers: u64,
    /// Firings counted by the callbacks (every timer exactly once: `timers`).
    pub fired: u64,
    /// Timers that never fired.
    pub never: u64,
    /// Timers that fired more than once.
    pub twice: u64,
    /// The driver's wake-ups that could fire timers (its sleep's returns, less early ones).
    pub wakeups: u64,
    /// Early wake-ups (a new timer's window ended before the planned wake-up), while arming.
    pub early_wakeups: u64,
    /// The fewest instants that stab every window (greedy).
    pub optimum: u64,
    /// Timers whose driver reading was before their deadline (must be 0).
    pub before_deadline: u64,
    /// Timers whose driver reading was after their window's end.
    pub after_window: u64,
    /// Of those, the median excess over the window's end, ns.
    pub excess_p50_ns: u64,
    /// Of those, the largest excess, ns.
    pub excess_max_ns: u64,
    /// Whether a timer fired before arming was over (the lead was too short: the batch then
    /// measures arming, not coalescing, and no verdict on it holds).
    pub began_during_arming: bool,
}

/// The idle check: a runtime with one timer an hour away, watched for a while.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Idle {
    /// How long it was watched, ms.
    pub ms: u64,
    /// The driver's wake-ups meanwhile (target 0).
    pub wakeups: u64,
}

/// The result of a sweep.
#[derive(Clone, Debug, Serialize)]
pub struct SweepReport {
    /// The sizes it ran with.
    pub plan: Plan,
    /// One cell per source and request, grouped by request, sources in [`Source::ALL`] order.
    pub cells: Vec<Cell>,
    /// The wake-up batches, in [`BATCH_TOLERANCES`] order.
    pub batches: Vec<Batch>,
    /// The idle check.
    pub idle: Idle,
    /// The raw loop's (1 ns slack) overshoot, actual minus requested sleep, median over this
    /// run's requests of 1 ms or more (every request when there are none), ns: what the kernel
    /// adds to a wake-up after a sleep as long as the batches'.
    pub raw_overshoot_p50_ns: u64,
    /// The same overshoot's p99, ns.
    pub raw_overshoot_p99_ns: u64,
    /// CPU time stolen by the hypervisor during the run, per cent (`None`: unknown).
    pub steal_percent: Option<f64>,
}

impl SweepReport {
    /// The cell of `source` at `request_us`.
    pub fn cell(&self, source: Source, request_us: u64) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.source == source && c.request_us == request_us)
    }

    /// Whether every batch timer fired exactly once and none before its deadline.
    pub fn counts_ok(&self) -> bool {
        self.batches
            .iter()
            .all(|b| b.fired == b.timers && b.never == 0 && b.twice == 0 && b.before_deadline == 0)
    }
}

/// Why a sweep failed.
#[derive(Debug)]
pub struct SweepError(pub String);

impl std::fmt::Display for SweepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SweepError {}

fn fail(what: &str, e: impl std::fmt::Display) -> SweepError {
    SweepError(format!("{what}: {e}"))
}

/// The machine's CPU time so far from /proc/stat, in ticks: (stolen by the hypervisor, all).
/// `None` where there is no /proc/stat.
pub fn cpu_ticks() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal [guest guest_nice, counted in user]
    let all: u64 = v.iter().take(8).sum();
    Some((v.get(7).copied().unwrap_or(0), all))
}

/// The share of CPU time the hypervisor stole between two [`cpu_ticks`] readings, in per
/// cent: the host noise every figure of the run shares.
pub fn steal_percent(before: Option<(u64, u64)>, after: Option<(u64, u64)>) -> Option<f64> {
    let ((s0, a0), (s1, a1)) = (before?, after?);
    let all = a1.checked_sub(a0).filter(|&a| a > 0)?;
    Some(100.0 * s1.saturating_sub(s0) as f64 / all as f64)
}

/// Sets the calling thread's timer slack (`PR_SET_TIMERSLACK`), at least 1 ns.
fn set_slack(ns: u64) -> Result<(), SweepError> {
    rustix::thread::set_current_timer_slack(NonZeroU64::new(ns.max(1)))
        .map_err(|e| fail("setting the timer slack", e))
}

/// Runs `f` with the calling thread's timer slack at its smallest (1 ns), then puts the slack
/// back as it was: the measuring thread's own sleeps then carry no slack of the kernel's.
///
/// # Errors
///
/// When the slack cannot be set (nothing has run then).
pub fn with_least_slack<R>(f: impl FnOnce() -> R) -> std::io::Result<R> {
    let before = rustix::thread::current_timer_slack().ok();
    ClockId::minimise_timer_slack()?;
    let result = f();
    if let Some(ns) = before {
        let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(ns.max(1)));
    }
    Ok(result)
}

/// What the sources need: the runtime and its timer, the slot its callback reports in, and
/// the tokio runtime.
struct Sleepers {
    clock: ClockId,
    _rt: Runtime,
    timer: Timer,
    slot: Arc<(Mutex<Option<u64>>, Condvar)>,
    tokio: tokio::runtime::Runtime,
}

impl Sleepers {
    fn new() -> Result<Sleepers, SweepError> {
        let clock = ClockId::Monotonic;
        let rt = Runtime::builder()
            .shards(1)
            .workers(1)
            .build()
            .map_err(|e| fail("starting the runtime", e))?;
        let slot = Arc::new((Mutex::new(None), Condvar::new()));
        let report = Arc::clone(&slot);
        let timer = rt
            .timer(Exec::Direct, move |_, _| {
                // Read first: everything after is the report's cost, not the timer's.
                let t = clock.read().unwrap_or(0);
                let (m, cv) = &*report;
                *m.lock().unwrap_or_else(|p| p.into_inner()) = Some(t);
                cv.notify_one();
            })
            .map_err(|e| fail("making the timer", e))?;
        let tokio = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .map_err(|e| fail("starting tokio", e))?;
        Ok(Sleepers {
            clock,
            _rt: rt,
            timer,
            slot,
            tokio,
        })
    }

    fn read(&self) -> Result<u64, SweepError> {
        self.clock.read().map_err(|e| fail("reading the clock", e))
    }

    /// One sleep of `request` ns from `source`; returns the actual sleep in ns.
    fn sample(&self, source: Source, request: u64) -> Result<u64, SweepError> {
        let tolerance = request * TOLERANCE_PERCENT / 100;
        match source {
            Source::RawExact | Source::RawSlack => {
                if source == Source::RawSlack {
                    set_slack(tolerance)?;
                }
                let t0 = self.read()?;
                let slept = self.clock.sleep_until(t0 + request);
                let t1 = self.read()?;
                if source == Source::RawSlack {
                    set_slack(1)?;
                }
                slept.map_err(|e| fail("clock_nanosleep", e))?;
                Ok(t1.saturating_sub(t0))
            }
            Source::CallwheelExact | Source::CallwheelTolerant => {
                let tolerance = if source == Source::CallwheelTolerant {
                    tolerance
                } else {
                    0
                };
                let (m, cv) = &*self.slot;
                *m.lock().unwrap_or_else(|p| p.into_inner()) = None;
                let t0 = self.read()?;
                self.timer
                    .start_with(
                        Deadline::from_clock_ns(t0 + request),
                        Duration::from_nanos(tolerance),
                        None,
                    )
                    .map_err(|e| fail("arming the timer", e))?;
                let give_up = Duration::from_secs(10) + Duration::from_nanos(2 * request);
                let (guard, timeout) = cv
                    .wait_timeout_while(m.lock().unwrap_or_else(|p| p.into_inner()), give_up, |t| {
                        t.is_none()
                    })
                    .unwrap_or_else(|p| p.into_inner());
                match *guard {
                    Some(t1) if !timeout.timed_out() => Ok(t1.saturating_sub(t0)),
                    _ => Err(SweepError("the callwheel timer did not fire".into())),
                }
            }
            Source::Tokio => {
                let t0 = self.read()?;
                // The sleep must be made inside the runtime, which owns the timer wheel.
                self.tokio.block_on(async {
                    tokio::time::sleep(Duration::from_nanos(request)).await;
                });
                let t1 = self.read()?;
                Ok(t1.saturating_sub(t0))
            }
        }
    }
}

/// Runs the sleep sweep, the wake-up batches and the idle check. `bar` counts sweep rounds
/// and then batches; its length is set here.
///
/// # Errors
///
/// When a runtime cannot start, a clock cannot be read, a sleep fails or a timer never fires.
pub fn measure(plan: &Plan, bar: &ProgressBar) -> Result<SweepReport, SweepError> {
    bar.set_length(plan.samples + BATCH_TOLERANCES.len() as u64 + 1);
    let ticks = cpu_ticks();
    let cells =
        with_least_slack(|| sweep(plan, bar)).map_err(|e| fail("setting the timer slack", e))??;
    // The batches sleep a millisecond or more between wake-ups: compare them with the raw
    // loop's sleeps of that length (all of them when the sweep has none).
    let long = cells.iter().any(|c| c.request_us >= 1_000);
    let mut overshoot: Vec<u64> = cells
        .iter()
        .filter(|c| c.source == Source::RawExact && (!long || c.request_us >= 1_000))
        .flat_map(|c| {
            let r = c.request_us * 1_000;
            c.actual.sorted.iter().map(move |&a| a.saturating_sub(r))
        })
        .collect();
    overshoot.sort_unstable();
    let overshoot = Row::of("overshoot", overshoot);
    let raw_overshoot_p50_ns = overshoot.as_ref().map_or(0, |r| r.p50);
    let raw_overshoot_p99_ns = overshoot.as_ref().map_or(0, |r| r.p99);
    let mut batches = Vec::new();
    for (i, &pct) in BATCH_TOLERANCES.iter().enumerate() {
        bar.set_message(format!("wake-up batch at {pct} % tolerance"));
        batches.push(batch(plan, pct, SEED + i as u64)?);
        bar.inc(1);
    }
    bar.set_message("idle check");
    let idle = idle(plan.idle_ms)?;
    bar.inc(1);
    Ok(SweepReport {
        plan: plan.clone(),
        cells,
        batches,
        idle,
        raw_overshoot_p50_ns,
        raw_overshoot_p99_ns,
        steal_percent: steal_percent(ticks, cpu_ticks()),
    })
}

fn sweep(plan: &Plan, bar: &ProgressBar) -> Result<Vec<Cell>, SweepError> {
    let s = Sleepers::new()?;
    // One unrecorded round first: thread start-up and tokio's first poll are not samples.
    for source in Source::ALL {
        s.sample(source, 100_000)?;
    }
    let n = Source::ALL.len();
    let requests = &plan.requests_us;
    let mut samples: Vec<Vec<Vec<u64>>> = (0..requests.len())
        .map(|_| vec![Vec::with_capacity(plan.samples as usize); n])
        .collect();
    bar.set_message("sleep sweep");
    let mut rng = SplitMix64::new(SEED);
    let mut order: Vec<usize> = (0..n).collect();
    for _ in 0..plan.samples {
        for (j, &r) in requests.iter().enumerate() {
            rng.shuffle(&mut order);
            for &which in &order {
                let actual = s.sample(Source::ALL[which], r * 1_000)?;
                samples[j][which].push(actual);
            }
        }
        bar.inc(1);
    }
    let mut cells = Vec::with_capacity(requests.len() * n);
    for (j, &request_us) in requests.iter().enumerate() {
        for (k, source) in Source::ALL.into_iter().enumerate() {
            let taken = std::mem::take(&mut samples[j][k]);
            if let Some(actual) = Row::of(source.name(), taken) {
                cells.push(Cell {
                    source,
                    request_us,
                    actual,
                });
            }
        }
    }
    Ok(cells)
}

fn stats(rt: &Runtime) -> Result<ShardStats, SweepError> {
    rt.shard_stats(0)
        .map_err(|e| fail("reading the statistics", e))
}

/// One wake-up batch at `pct` % tolerance.
fn batch(plan: &Plan, pct: u64, seed: u64) -> Result<Batch, SweepError> {
    let rt = Runtime::builder()
        .shards(1)
        .workers(1)
        .build()
        .map_err(|e| fail("starting the runtime", e))?;
    let n = plan.batch_timers as usize;
    let fired_at: Arc<Vec<AtomicU64>> = Arc::new((0..n).map(|_| AtomicU64::new(0)).collect());
    let counts: Arc<Vec<AtomicU32>> = Arc::new((0..n).map(|_| AtomicU32::new(0)).collect());
    let span = plan.span_ms * 1_000_000;
    let before = stats(&rt)?;
    let created = Instant::now();
    let mut timers = Vec::with_capacity(n);
    for i in 0..n {
        let (at, count) = (Arc::clone(&fired_at), Arc::clone(&counts));
        let timer = rt.timer(Exec::Direct, move |_, fire| {
            at[i].store(fire.now, Ordering::Relaxed);
            count[i].fetch_add(1, Ordering::Release);
        });
        timers.push(timer.map_err(|e| fail("making a batch timer", e))?);
    }
    let lead = BATCH_LEAD_NS.max(3 * u64::try_from(created.elapsed().as_nanos()).unwrap_or(0));
    let now = rt.now_ns();
    let mut rng = SplitMix64::new(seed);
    let mut windows = Vec::with_capacity(n);
    for t in &timers {
        let deadline = now + lead + rng.range(0, span);
        let tolerance = (deadline - now) * pct / 100;
        t.start_with(
            Deadline::from_clock_ns(deadline),
            Duration::from_nanos(tolerance),
            None,
        )
        .map_err(|e| fail("arming a batch timer", e))?;
        windows.push((deadline, deadline + tolerance));
    }
    let total = || -> u64 {
        counts
            .iter()
            .map(|c| u64::from(c.load(Ordering::Acquire)))
            .sum()
    };
    let began_during_arming = total() > 0;
    let give_up = Instant::now()
        + Duration::from_nanos(lead + span + span * pct / 100)
        + Duration::from_secs(10);
    while total() < n as u64 && Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(2));
    }
    // A second firing would come at once: every window has ended.
    std::thread::sleep(Duration::from_millis(5));
    let after = stats(&rt)?;
    let early = after.early_wakeups - before.early_wakeups;
    let mut excess = Vec::new();
    let mut before_deadline = 0;
    for (i, &(start, end)) in windows.iter().enumerate() {
        if counts[i].load(Ordering::Acquire) == 0 {
            continue;
        }
        let at = fired_at[i].load(Ordering::Relaxed);
        if at < start {
            before_deadline += 1;
        } else if at > end {
            excess.push(at - end);
        }
    }
    let after_window = excess.len() as u64;
    let excess = Row::of("excess", excess);
    Ok(Batch {
        tolerance_percent: pct,
        timers: n as u64,
        fired: total(),
        never: counts
            .iter()
            .filter(|c| c.load(Ordering::Acquire) == 0)
            .count() as u64,
        twice: counts
            .iter()
            .filter(|c| c.load(Ordering::Acquire) > 1)
            .count() as u64,
        wakeups: (after.wakeups - before.wakeups).saturating_sub(early),
        early_wakeups: early,
        optimum: stabbing_optimum(&windows),
        before_deadline,
        after_window,
        excess_p50_ns: excess.as_ref().map_or(0, |r| r.p50),
        excess_max_ns: excess.as_ref().map_or(0, |r| r.max),
        began_during_arming,
    })
}

/// Watches a runtime whose only timer is an hour away for `ms` milliseconds.
fn idle(ms: u64) -> Result<Idle, SweepError> {
    let rt = Runtime::builder()
        .shards(1)
        .workers(1)
        .build()
        .map_err(|e| fail("starting the runtime", e))?;
    let t = rt
        .timer(Exec::Direct, |_, _| {})
        .map_err(|e| fail("making the idle timer", e))?;
    t.start_after(Duration::from_secs(3_600))
        .map_err(|e| fail("arming the idle timer", e))?;
    // Let the driver take the arming's wake-up and go back to sleep.
    std::thread::sleep(Duration::from_millis(5));
    let before = stats(&rt)?.wakeups;
    std::thread::sleep(Duration::from_millis(ms));
    let after = stats(&rt)?.wakeups;
    let _ = t.stop();
    Ok(Idle {
        ms,
        wakeups: after - before,
    })
}

/// "; the hypervisor stole X % of the CPU time meanwhile", or nothing when unknown.
pub fn steal_note(steal: Option<f64>) -> String {
    steal.map_or(String::new(), |s| {
        format!("; the hypervisor stole {s:.1} % of the machine's CPU time meanwhile")
    })
}

fn us(ns: u64) -> String {
    let v = ns as f64 / 1_000.0;
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The verdicts against the runtime's targets, from the same run's figures.
pub fn verdicts(report: &SweepReport) -> Vec<Verdict> {
    let mut out = Vec::new();
    let requests = &report.plan.requests_us;
    // Exact: callwheel against the raw loop, per request.
    let mut gaps = Vec::new();
    let mut ratios = Vec::new();
    for &r in requests {
        if let (Some(cw), Some(raw)) = (
            report.cell(Source::CallwheelExact, r),
            report.cell(Source::RawExact, r),
        ) {
            gaps.push((r, cw.actual.p50 as i64 - raw.actual.p50 as i64));
            ratios.push((r, cw.actual.p99 as f64 / raw.actual.p99.max(1) as f64));
        }
    }
    if let Some(&(wr, worst)) = gaps.iter().max_by_key(|g| g.1) {
        // Judged on the medians in ns, printed to the ns: 5.004 us is not within 5 us.
        let met = gaps.iter().filter(|g| g.1 <= 5_000).count();
        out.push(Verdict {
            what: "exact: callwheel p50 - raw p50 per request (target <= +5 us)".into(),
            result: format!(
                "{met} of {} requests; worst {:+.3} us at {wr} us: {}",
                gaps.len(),
                worst as f64 / 1_000.0,
                verdict(met == gaps.len())
            ),
        });
    }
    if let Some(&(wr, worst)) = ratios.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
        let met = ratios.iter().filter(|g| g.1 <= 1.2).count();
        out.push(Verdict {
            what: "exact: callwheel p99 / raw p99 per request (target <= 1.2)".into(),
            result: format!(
                "{met} of {} requests; worst {worst:.2}x at {wr} us: {}",
                ratios.len(),
                verdict(met == ratios.len())
            ),
        });
    }
    // 5 %: callwheel's tolerance against the kernel's slack of the same size.
    let mut tol_gaps = Vec::new();
    for &r in requests {
        if let (Some(cw), Some(raw)) = (
            report.cell(Source::CallwheelTolerant, r),
            report.cell(Source::RawSlack, r),
        ) {
            tol_gaps.push((r, (cw.actual.p50 as f64 - raw.actual.p50 as f64) / 1_000.0));
        }
    }
    if let (Some(lo), Some(hi)) = (
        tol_gaps.iter().min_by(|a, b| a.1.total_cmp(&b.1)),
        tol_gaps.iter().max_by(|a, b| a.1.total_cmp(&b.1)),
    ) {
        out.push(Verdict {
            what: "5 %: callwheel p50 - clock_nanosleep with 5 % slack p50 (no target)".into(),
            result: format!(
                "from {:+.2} us (at {} us) to {:+.2} us (at {} us)",
                lo.1, lo.0, hi.1, hi.0
            ),
        });
    }
    // tokio's 1 ms granularity.
    let short: Vec<u64> = requests
        .iter()
        .filter(|&&r| r < 1_000)
        .filter_map(|&r| report.cell(Source::Tokio, r).map(|c| c.actual.p50))
        .collect();
    if let (Some(lo), Some(hi)) = (short.iter().min(), short.iter().max()) {
        out.push(Verdict {
            what: "tokio::time::sleep p50 for requests under 1 ms (peer, no target)".into(),
            result: format!("{} to {} us", us(*lo), us(*hi)),
        });
    }
    let overshoot_of = if report.plan.requests_us.iter().any(|&r| r >= 1_000) {
        "at sleeps >= 1 ms"
    } else {
        "at this run's sleeps, all under 1 ms"
    };
    for b in &report.batches {
        let ratio = b.wakeups as f64 / b.optimum.max(1) as f64;
        // The driver plans its wake-up at a window's end; what it adds beyond the kernel's own
        // overshoot is the runtime's: the latency target's +5 µs on the median.
        let within = !b.began_during_arming
            && b.before_deadline == 0
            && b.excess_p50_ns <= report.raw_overshoot_p50_ns + 5_000;
        let window_ok = within && b.fired == b.timers && b.never == 0 && b.twice == 0;
        let (what, judged) = if b.tolerance_percent > 0 {
            // The 5 % target: fewer wake-ups *while every timer still fires inside its window*.
            (
                format!(
                    "{} timers at {} % tolerance: wake-ups / optimum (target <= 1.05)",
                    b.timers, b.tolerance_percent
                ),
                if ratio <= 1.05 && !window_ok {
                    ": missed (the window check failed)".to_string()
                } else {
                    format!(": {}", verdict(ratio <= 1.05))
                },
            )
        } else {
            (
                format!(
                    "{} timers at 0 % tolerance: wake-ups / optimum (no target)",
                    b.timers
                ),
                String::new(),
            )
        };
        let below = if b.began_during_arming {
            " (timers fired before arming was over: the batch measured arming, not coalescing)"
        } else if ratio < 1.0 {
            " (below the optimum only because late wake-ups fired windows that had ended: see the window check)"
        } else {
            ""
        };
        out.push(Verdict {
            what,
            result: format!("{} / {} = {ratio:.3}{judged}{below}", b.wakeups, b.optimum),
        });
        out.push(Verdict {
            what: format!(
                "{} % tolerance: every timer fired once, never before its deadline, after its window's end by at most the kernel's overshoot (p50 excess <= raw overshoot p50 {} us {overshoot_of}, + 5 us)",
                b.tolerance_percent,
                us(report.raw_overshoot_p50_ns)
            ),
            result: format!(
                "{} of {} fired, {} twice, {} before the deadline, {} after the window's end by p50 {} / max {} us (raw overshoot p99 {} us): {}",
                b.fired,
                b.timers,
                b.twice,
                b.before_deadline,
                b.after_window,
                us(b.excess_p50_ns),
                us(b.excess_max_ns),
                us(report.raw_overshoot_p99_ns),
                if b.began_during_arming {
                    "missed (timers fired before arming was over)"
                } else {
                    verdict(window_ok)
                }
            ),
        });
    }
    out.push(Verdict {
        what: format!(
            "idle runtime (one timer 1 h away) for {} ms: wake-ups (target 0)",
            report.idle.ms
        ),
        result: format!(
            "{}: {}",
            report.idle.wakeups,
            verdict(report.idle.wakeups == 0)
        ),
    });
    out
}

/// The report as Markdown tables (median and p99 of the actual sleep per request and source),
/// the same-run comparison with the raw loop, the wake-up batches and the verdicts.
pub fn render(report: &SweepReport) -> String {
    use std::fmt::Write;
    let p = &report.plan;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "callwheel sweep: {} samples per source and request, interleaved sample by sample; actual sleep in µs (clock reading at the wake-up minus the reading before arming){}\n",
        p.samples,
        steal_note(report.steal_percent)
    );
    let header = {
        let mut h = String::from("| request µs |");
        for s in Source::ALL {
            let _ = write!(h, " {} |", s.name());
        }
        h.push_str("\n|---:|");
        for _ in Source::ALL {
            h.push_str("---:|");
        }
        h
    };
    type Pick = fn(&Row) -> u64;
    let figures: [(&str, Pick); 2] = [("median", |r| r.p50), ("p99", |r| r.p99)];
    for (title, pick) in figures {
        let _ = writeln!(out, "{title} actual sleep, µs:\n\n{header}");
        for &r in &p.requests_us {
            let _ = write!(out, "| {r} |");
            for s in Source::ALL {
                match report.cell(s, r) {
                    Some(c) => {
                        let _ = write!(out, " {} |", us(pick(&c.actual)));
                    }
                    None => out.push_str(" - |"),
                }
            }
            out.push('\n');
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "callwheel-rt against clock_nanosleep, same run (exact: 1 ns slack; 5 %: slack = 5 % of the request):\n"
    );
    let _ = writeln!(
        out,
        "| request µs | exact p50 gap µs | exact p99 ratio | 5 % p50 gap µs | 5 % p99 ratio |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---:|---:|");
    for &r in &p.requests_us {
        let pair = |a: Source, b: Source| match (report.cell(a, r), report.cell(b, r)) {
            (Some(x), Some(y)) => (
                format!(
                    "{:+.2}",
                    (x.actual.p50 as f64 - y.actual.p50 as f64) / 1_000.0
                ),
                format!("{:.2}", x.actual.p99 as f64 / y.actual.p99.max(1) as f64),
            ),
            _ => ("-".into(), "-".into()),
        };
        let (eg, er) = pair(Source::CallwheelExact, Source::RawExact);
        let (tg, tr) = pair(Source::CallwheelTolerant, Source::RawSlack);
        let _ = writeln!(out, "| {r} | {eg} | {er} | {tg} | {tr} |");
    }
    let _ = writeln!(
        out,
        "\nwake-up batches: {} direct timers, deadlines over {} ms, window [d, d + (d - now) × tolerance]; wake-ups from the shard's counters (early ones, caused by arming, left out); optimum by greedy stabbing:\n",
        p.batch_timers, p.span_ms
    );
    let _ = writeln!(
        out,
        "| tolerance | wake-ups | optimum | ratio | early wake-ups | fired | twice | before deadline | after window end | excess p50 µs | excess max µs |"
    );
    let _ = writeln!(
        out,
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for b in &report.batches {
        let _ = writeln!(
            out,
            "| {} % | {} | {} | {:.3} | {} | {} | {} | {} | {} | {} | {} |",
            b.tolerance_percent,
            b.wakeups,
            b.optimum,
            b.wakeups as f64 / b.optimum.max(1) as f64,
            b.early_wakeups,
            b.fired,
            b.twice,
            b.before_deadline,
            b.after_window,
            us(b.excess_p50_ns),
            us(b.excess_max_ns)
        );
    }
    let _ = writeln!(out, "\n| verdict | result |\n|---|---|");
    for v in verdicts(report) {
        let _ = writeln!(out, "| {} | {} |", v.what, v.result);
    }
    out
}

/// The title of the sweep's figure.
pub const CHART_TITLE: &str =
    "Requested against actual sleep (calloutng Figures 4-5), sources interleaved in one run";

/// The sweep's figure as two log-log panels, median and p99: one line per source and the
/// ideal `actual = requested`.
pub fn charts(report: &SweepReport) -> Vec<Chart> {
    let sources: Vec<(&str, Vec<(u64, &Row)>)> = Source::ALL
        .iter()
        .map(|&s| {
            let cells = report.cells.iter().filter(|c| c.source == s);
            (s.name(), cells.map(|c| (c.request_us, &c.actual)).collect())
        })
        .collect();
    sleep_panels(report.plan.samples, &report.plan.requests_us, &sources)
}

/// Requested against actual sleep as two log-log panels, median and p99: one line per source
/// (its name and its (request µs, actual sleeps) points) and the ideal `actual = requested`.
/// The sweep's figure and the async timers' are both drawn this way.
pub fn sleep_panels(
    samples: u64,
    requests_us: &[u64],
    sources: &[(&str, Vec<(u64, &Row)>)],
) -> Vec<Chart> {
    type Pick = fn(&Row) -> u64;
    let picks: [(&str, Pick); 2] = [("median", |r| r.p50), ("99th percentile", |r| r.p99)];
    picks
        .into_iter()
        .map(|(what, pick)| {
            let mut series: Vec<Series> = sources
                .iter()
                .map(|(label, points)| Series {
                    label: label.to_string(),
                    points: points
                        .iter()
                        .map(|&(r, row)| (r as f64, pick(row) as f64 / 1_000.0))
                        .collect(),
                    reference: false,
                })
                .collect();
            series.push(Series {
                label: "ideal: actual = requested".into(),
                points: requests_us.iter().map(|&r| (r as f64, r as f64)).collect(),
                reference: true,
            });
            Chart {
                title: format!("{what} of {samples} samples per point"),
                x_desc: "requested sleep, µs".into(),
                y_desc: format!("actual sleep, µs ({what})"),
                log_x: true,
                log_y: true,
                series,
                legend_right: true,
                legend_bottom: true,
            }
        })
        .collect()
}

/// `callwheel sweep`: measure and print. Exit status 1 when a measurement failed or a batch
/// timer did not fire exactly once (or fired before its deadline).
pub fn command(args: &SweepArgs) -> ExitCode {
    // A plot directory that cannot be made fails now, not after the whole sweep.
    if let Some(dir) = &args.plot {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("error: cannot create {}: {e}", dir.display());
            return ExitCode::from(2);
        }
    }
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: this is a debug build; its figures are not representative (use --release)"
        );
    }
    let plan = args.plan();
    let bar = crate::sections::progress_bar(0);
    let measured = measure(&plan, &bar);
    bar.finish_and_clear();
    match measured {
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
            if let Some(dir) = &args.plot {
                let drawn = std::fs::create_dir_all(dir)
                    .map_err(|e| format!("cannot create {}: {e}", dir.display()))
                    .and_then(|()| {
                        plots::write_panels(CHART_TITLE, &charts(&report), dir, "sweep")
                    });
                match drawn {
                    Ok(paths) => {
                        for p in paths {
                            eprintln!("wrote {}", p.display());
                        }
                    }
                    Err(e) => {
                        eprintln!("error: {e}");
                        return ExitCode::from(2);
                    }
                }
            }
            if report.counts_ok() {
                ExitCode::SUCCESS
            } else {
                eprintln!("error: a batch timer did not fire exactly once inside its window");
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("error: sweep: {e}");
            ExitCode::from(1)
        }
    }
}
