//! `callwheel stress`: the runtime's bounded lock hold under a mass expiry. `M` timers (a
//! million by default) are armed for one deadline `T` on every shard; from just after arming
//! until the mass expiry is over (and at least `--duration-ms`), `N` threads start and stop
//! timers of their own on the same shards as fast as they can, and during the expiry also stop
//! mass timers, racing the drivers for them.
//!
//! | measured | how |
//! |---|---|
//! | `start` latency | the time one `Timer::start_with` call takes, one hdrhistogram per thread, merged; kept apart for the calls made while the mass expiry was under way |
//! | `stop` latency | the same for `Timer::stop` |
//! | mass expiry | from the first mass callback to the last (their clock readings), and how late the first one ran after `T` |
//! | counts | every mass timer fired exactly once or was cancelled by a stop (never both, never twice); every churn arming fired exactly once unless a stop cancelled it (a start on a pending timer moves its window and is not a new arming) |
//! | memory | the process's resident set before creating the timers, after arming them, and its peak |
//!
//! The driver holds a shard's lock for at most `max_expiries_per_lock` expiries (64 by
//! default) at a time, so a `start` waits at most for one such batch: the target is `start`
//! p99 under 50 µs during the mass expiry. On a machine with fewer cores than threads
//! (drivers, workers, starters), a call can also be descheduled mid-way; that shows in the
//! tail too, and the report says how many threads share how many cores.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use callwheel_rt::hdrhistogram::Histogram;
use callwheel_rt::{ClockId, Config, Deadline, Exec, Runtime, Stop, Timer};
use clap::Args;
use indicatif::ProgressBar;
use serde::Serialize;

use crate::workload::{SplitMix64, SEED};

/// The `start` latency target during a mass expiry, ns (the runtime's target): p99 under this.
pub const START_P99_TARGET_NS: u64 = 50_000;

/// The size of the mass expiry the target is set for (the runtime's target: 1e6 timers).
pub const TARGET_TIMERS: u64 = 1_000_000;

/// Timers each churn thread starts and stops, over and over.
const CHURN_POOL: usize = 256;

/// The options of `callwheel stress`.
#[derive(Clone, Debug, Default, Args)]
pub struct StressArgs {
    /// Threads starting and stopping timers during the mass expiry.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub threads: u64,
    /// Timers in the mass expiry [default: 1000000; --quick: 100000; --tiny: 2000].
    #[arg(long, value_name = "M", value_parser = clap::value_parser!(u64).range(1..=20_000_000))]
    pub timers: Option<u64>,
    /// The least time the churn threads run, ms; they always run until the mass expiry is over
    /// [default: 1000; --tiny: 20].
    #[arg(long = "duration-ms", value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub duration_ms: Option<u64>,
    /// A tenth of the timers (1e5).
    #[arg(long)]
    pub quick: bool,
    /// Tiny sizes that check the plumbing in well under a second; the figures mean little.
    #[arg(long, conflicts_with = "quick")]
    pub tiny: bool,
    /// Print the figures as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// The sizes of one run, defaults resolved.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// Churn threads.
    pub threads: u64,
    /// Mass-expiry timers.
    pub timers: u64,
    /// The least churn time, ms.
    pub duration_ms: u64,
}

impl StressArgs {
    /// The plan these options ask for.
    pub fn plan(&self) -> Plan {
        let (timers, duration_ms) = if self.tiny {
            (2_000, 20)
        } else if self.quick {
            (100_000, 1_000)
        } else {
            (1_000_000, 1_000)
        };
        Plan {
            threads: self.threads,
            timers: self.timers.unwrap_or(timers),
            duration_ms: self.duration_ms.unwrap_or(duration_ms),
        }
    }
}

/// Percentiles of one latency histogram, ns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Latency {
    /// Calls recorded.
    pub calls: u64,
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest.
    pub max: u64,
}

impl Latency {
    fn of(h: &Histogram<u64>) -> Latency {
        Latency {
            calls: h.len(),
            p50: h.value_at_quantile(0.5),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
        }
    }
}

/// The counts the check is made of.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Mass timers that fired exactly once and were not cancelled.
    pub mass_fired: u64,
    /// Mass timers a stop cancelled (and that never fired).
    pub mass_cancelled: u64,
    /// Mass timers that did neither (lost).
    pub mass_lost: u64,
    /// Mass timers that fired twice, or fired after a stop said it cancelled them.
    pub mass_wrong: u64,
    /// Churn armings (starts of a timer that was not pending).
    pub churn_armings: u64,
    /// Of those, cancelled by a stop.
    pub churn_cancelled: u64,
    /// Churn firings counted by the callbacks.
    pub churn_fired: u64,
    /// Churn timers whose firings differ from their armings less their cancellations.
    pub churn_wrong: u64,
}

impl Counts {
    /// Whether every timer fired exactly once or was stopped.
    pub fn ok(&self) -> bool {
        self.mass_lost == 0
            && self.mass_wrong == 0
            && self.churn_wrong == 0
            && self.churn_fired + self.churn_cancelled == self.churn_armings
    }
}

/// The result of a run.
#[derive(Clone, Debug, Serialize)]
pub struct StressReport {
    /// The sizes it ran with.
    pub plan: Plan,
    /// Shards (driver threads) of the runtime.
    pub shards: usize,
    /// CPUs available.
    pub cpus: usize,
    /// The drivers' expiry budget per lock hold.
    pub max_expiries_per_lock: u64,
    /// How long creating and arming the mass timers took, ns.
    pub arm_ns: u64,
    /// Whether the mass expiry had begun before arming was over (the deadline was guessed
    /// too short; the expiry is then spread over the end of arming).
    pub began_during_arming: bool,
    /// How late the first mass callback ran after the deadline, ns.
    pub first_late_ns: u64,
    /// From the first mass callback to the last, ns.
    pub expiry_ns: u64,
    /// Every `start` call.
    pub start_all: Latency,
    /// The `start` calls made while the mass expiry was under way.
    pub start_during: Latency,
    /// Every `stop` call.
    pub stop_all: Latency,
    /// The count check.
    pub counts: Counts,
    /// Times a driver released its lock having used its expiry budget.
    pub budget_yields: u64,
    /// Resident set before creating the timers, KiB.
    pub rss_before_kib: u64,
    /// Resident set with every mass timer armed, KiB.
    pub rss_armed_kib: u64,
    /// The process's peak resident set, KiB.
    pub rss_peak_kib: u64,
    /// CPU time stolen by the hypervisor during the run, per cent (`None`: unknown).
    pub steal_percent: Option<f64>,
}

impl StressReport {
    /// Resident bytes per mass timer (armed minus before, over M).
    pub fn bytes_per_timer(&self) -> f64 {
        (self.rss_armed_kib.saturating_sub(self.rss_before_kib) * 1024) as f64
            / self.plan.timers.max(1) as f64
    }
}

/// Why a run failed.
#[derive(Debug)]
pub struct StressError(pub String);

impl std::fmt::Display for StressError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StressError {}

fn fail(what: &str, e: impl std::fmt::Display) -> StressError {
    StressError(format!("{what}: {e}"))
}

/// A `VmRSS` / `VmHWM` figure of /proc/self/status, KiB (0 when unreadable).
fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// What the mass timers' callbacks and the churn threads share.
struct Mass {
    /// Firings per mass timer.
    fired: Vec<AtomicU8>,
    /// Set when a stop cancelled the mass timer.
    cancelled: Vec<AtomicU8>,
    /// Mass firings so far.
    total: AtomicU64,
    /// Mass timers cancelled so far.
    cancelled_total: AtomicU64,
    /// Clock reading at the first and at the latest mass firing.
    first: AtomicU64,
    last: AtomicU64,
    /// M.
    m: u64,
}

impl Mass {
    /// Whether the mass expiry is under way: it has begun, and not every mass timer has fired
    /// or been cancelled.
    fn in_progress(&self) -> bool {
        let n = self.total.load(Ordering::Relaxed);
        n > 0 && n + self.cancelled_total.load(Ordering::Relaxed) < self.m
    }
}

/// One churn thread's findings.
struct Churn {
    start: Histogram<u64>,
    start_during: Histogram<u64>,
    stop: Histogram<u64>,
    armings: u64,
    cancelled: u64,
    /// Per churn timer: armings less cancellations, and its firing counter.
    expected: Vec<(u64, Arc<AtomicU64>)>,
    timers: Vec<Timer>,
}

/// A latency histogram from 1 ns to 100 s, 3 significant digits (fixed bounds: a
/// saturating record into an auto-resizing histogram would clamp at its first bound).
fn histogram() -> Result<Histogram<u64>, StressError> {
    Histogram::new_with_bounds(1, 100_000_000_000, 3).map_err(|e| fail("creating a histogram", e))
}

use callwheel_rt::saturating_ns as nanos;

/// One churn thread: until `stop` is up, start and stop its own timers on every shard (and,
/// while the mass expiry runs, stop mass timers too), timing each call.
fn churn(
    rt: &Runtime,
    index: u64,
    mass: &Mass,
    mass_timers: &[Timer],
    stop: &AtomicBool,
) -> Result<Churn, StressError> {
    let mut c = Churn {
        start: histogram()?,
        start_during: histogram()?,
        stop: histogram()?,
        armings: 0,
        cancelled: 0,
        expected: Vec::with_capacity(CHURN_POOL),
        timers: Vec::with_capacity(CHURN_POOL),
    };
    let shards = rt.shards();
    for j in 0..CHURN_POOL {
        let count = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&count);
        let t = rt
            .timer_on(j % shards, Exec::Direct, move |_, _| {
                counter.fetch_add(1, Ordering::Relaxed);
            })
            .map_err(|e| fail("creating a churn timer", e))?;
        c.timers.push(t);
        c.expected.push((0, count));
    }
    let mut rng = SplitMix64::new(SEED ^ (index + 1).wrapping_mul(0x9E37_79B9));
    while !stop.load(Ordering::Relaxed) {
        let draw = rng.next_u64();
        let j = (draw >> 8) as usize % CHURN_POOL;
        if draw % 2 == 0 {
            let during = mass.in_progress();
            let deadline = rt.now_ns() + 100_000 + (draw >> 40) % 2_000_000;
            let t0 = Instant::now();
            let was_pending = c.timers[j]
                .start_with(Deadline::from_clock_ns(deadline), Duration::ZERO, None)
                .map_err(|e| fail("starting a churn timer", e))?;
            let ns = nanos(t0.elapsed());
            c.start.saturating_record(ns);
            if during && mass.in_progress() {
                c.start_during.saturating_record(ns);
            }
            if !was_pending {
                c.armings += 1;
                c.expected[j].0 += 1;
            }
        } else if draw % 16 == 1 && mass.in_progress() {
            // Race a driver for a mass timer.
            let k = (draw >> 16) as usize % mass_timers.len();
            let t0 = Instant::now();
            let outcome = mass_timers[k].stop();
            c.stop.saturating_record(nanos(t0.elapsed()));
            if outcome == Stop::Cancelled {
                mass.cancelled[k].fetch_add(1, Ordering::Relaxed);
                mass.cancelled_total.fetch_add(1, Ordering::Relaxed);
            }
        } else {
            let t0 = Instant::now();
            let outcome = c.timers[j].stop();
            c.stop.saturating_record(nanos(t0.elapsed()));
            if outcome == Stop::Cancelled {
                c.cancelled += 1;
                c.expected[j].0 -= 1;
            }
        }
    }
    Ok(c)
}

/// Runs the stress test. `bar` counts mass firings; its length is set here.
///
/// # Errors
///
/// When the runtime cannot start, a timer cannot be armed, or the mass expiry does not end
/// within a minute of its deadline.
pub fn measure(plan: &Plan, bar: &ProgressBar) -> Result<StressReport, StressError> {
    let rt = Arc::new(
        Runtime::builder()
            .workers(1)
            .build()
            .map_err(|e| fail("starting the runtime", e))?,
    );
    let k = Config::default().max_expiries_per_lock;
    let shards = rt.shards();
    let m = plan.timers as usize;
    let ticks = crate::sweep::cpu_ticks();
    bar.set_length(plan.timers);
    bar.set_message("creating the mass timers");
    let rss_before_kib = status_kib("VmRSS:");
    let mass = Arc::new(Mass {
        fired: (0..m).map(|_| AtomicU8::new(0)).collect(),
        cancelled: (0..m).map(|_| AtomicU8::new(0)).collect(),
        total: AtomicU64::new(0),
        cancelled_total: AtomicU64::new(0),
        first: AtomicU64::new(0),
        last: AtomicU64::new(0),
        m: plan.timers,
    });
    let clock = ClockId::Monotonic;
    let t_create = Instant::now();
    let mut timers = Vec::with_capacity(m);
    for i in 0..m {
        let mass_cb = Arc::clone(&mass);
        let t = rt
            .timer_on(i % shards, Exec::Direct, move |_, _| {
                mass_cb.fired[i].fetch_add(1, Ordering::Relaxed);
                let before = mass_cb.total.fetch_add(1, Ordering::AcqRel);
                if before == 0 {
                    mass_cb
                        .first
                        .store(clock.read().unwrap_or(0), Ordering::Release);
                }
                // Stops may cancel some of them, so the last firing is not the M-th: keep the
                // latest reading.
                mass_cb
                    .last
                    .fetch_max(clock.read().unwrap_or(0), Ordering::AcqRel);
            })
            .map_err(|e| fail("creating a mass timer", e))?;
        timers.push(t);
    }
    // Arming costs about what creating did (a lock and a wheel insert against an allocation);
    // leave three times that, and at least 100 ms, before the deadline.
    let created = nanos(t_create.elapsed());
    let deadline = rt.now_ns() + (3 * created).max(100_000_000);
    bar.set_message("arming the mass timers");
    for t in &timers {
        t.start_with(Deadline::from_clock_ns(deadline), Duration::ZERO, None)
            .map_err(|e| fail("arming a mass timer", e))?;
    }
    let arm_ns = nanos(t_create.elapsed());
    let began_during_arming = mass.total.load(Ordering::Acquire) > 0;
    let rss_armed_kib = status_kib("VmRSS:");
    let budget_before: u64 = rt.stats().iter().map(|s| s.budget_yields).sum();

    bar.set_message("churning during the mass expiry");
    let timers = Arc::new(timers);
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..plan.threads)
        .map(|index| {
            let (rt, mass, timers, stop) = (
                Arc::clone(&rt),
                Arc::clone(&mass),
                Arc::clone(&timers),
                Arc::clone(&stop),
            );
            std::thread::spawn(move || churn(&rt, index, &mass, &timers, &stop))
        })
        .collect();
    let started = Instant::now();
    let give_up =
        Duration::from_nanos(deadline.saturating_sub(rt.now_ns())) + Duration::from_secs(60);
    let least = Duration::from_millis(plan.duration_ms);
    let mut timed_out = false;
    loop {
        let done = mass.total.load(Ordering::Acquire)
            + mass.cancelled_total.load(Ordering::Relaxed)
            >= plan.timers;
        bar.set_position(mass.total.load(Ordering::Relaxed));
        if done && started.elapsed() >= least {
            break;
        }
        if started.elapsed() > give_up {
            timed_out = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(if done { 1 } else { 5 }));
    }
    stop.store(true, Ordering::Relaxed);
    let mut churns = Vec::new();
    for t in threads {
        match t.join() {
            Ok(r) => churns.push(r?),
            Err(_) => return Err(StressError("a churn thread panicked".into())),
        }
    }
    if timed_out {
        return Err(StressError(format!(
            "the mass expiry did not end within a minute of its deadline ({} of {} fired)",
            mass.total.load(Ordering::Acquire),
            plan.timers
        )));
    }
    // Cancel what the churn left armed; a running or queued callback has been counted by the
    // time drain returns.
    for c in &mut churns {
        for (j, t) in c.timers.iter().enumerate() {
            if t.drain() == Stop::Cancelled {
                c.cancelled += 1;
                c.expected[j].0 -= 1;
            }
        }
    }
    // A late double firing would show by now.
    std::thread::sleep(Duration::from_millis(5));
    let budget_after: u64 = rt.stats().iter().map(|s| s.budget_yields).sum();

    let mut start_all = histogram()?;
    let mut start_during = histogram()?;
    let mut stop_all = histogram()?;
    let mut counts = Counts::default();
    for c in &churns {
        let _ = start_all.add(&c.start);
        let _ = start_during.add(&c.start_during);
        let _ = stop_all.add(&c.stop);
        counts.churn_armings += c.armings;
        counts.churn_cancelled += c.cancelled;
        for (expect, fired) in &c.expected {
            let f = fired.load(Ordering::Relaxed);
            counts.churn_fired += f;
            if f != *expect {
                counts.churn_wrong += 1;
            }
        }
    }
    for i in 0..m {
        let f = mass.fired[i].load(Ordering::Relaxed);
        let c = mass.cancelled[i].load(Ordering::Relaxed);
        match (f, c) {
            (1, 0) => counts.mass_fired += 1,
            (0, 1) => counts.mass_cancelled += 1,
            (0, 0) => counts.mass_lost += 1,
            _ => counts.mass_wrong += 1,
        }
    }
    let first = mass.first.load(Ordering::Acquire);
    let last = mass.last.load(Ordering::Acquire);
    bar.set_position(plan.timers);
    let report = StressReport {
        plan: plan.clone(),
        shards,
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        max_expiries_per_lock: k,
        arm_ns,
        began_during_arming,
        first_late_ns: first.saturating_sub(deadline),
        expiry_ns: last.saturating_sub(first),
        start_all: Latency::of(&start_all),
        start_during: Latency::of(&start_during),
        stop_all: Latency::of(&stop_all),
        counts,
        budget_yields: budget_after - budget_before,
        rss_before_kib,
        rss_armed_kib,
        rss_peak_kib: status_kib("VmHWM:"),
        steal_percent: crate::sweep::steal_percent(ticks, crate::sweep::cpu_ticks()),
    };
    // Free a million timers before returning (the runtime's drop joins its threads).
    drop(churns);
    drop(timers);
    drop(rt);
    Ok(report)
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1_000.0)
}

/// The `start` p99 verdict during the mass expiry: the figure, the target and met / missed.
/// A mass expiry smaller than the target's 1e6 timers is not judged met: it is not the
/// target's test (a miss there still counts).
pub fn start_verdict(report: &StressReport) -> String {
    let l = &report.start_during;
    if l.calls == 0 {
        return "no start landed during the mass expiry".into();
    }
    format!(
        "{} us over {} starts: {}",
        us(l.p99),
        l.calls,
        if l.p99 < START_P99_TARGET_NS && report.plan.timers < TARGET_TIMERS {
            format!(
                "under the target, but with {} timers, not the target's 1e6: not judged",
                report.plan.timers
            )
        } else if l.p99 < START_P99_TARGET_NS {
            "met".to_string()
        } else {
            format!(
                "missed by {} us",
                us(l.p99.saturating_sub(START_P99_TARGET_NS))
            )
        }
    )
}

/// The count check's one-line result.
pub fn count_verdict(report: &StressReport) -> String {
    let c = &report.counts;
    format!(
        "mass: {} fired once, {} stopped, {} lost, {} wrong; churn: {} armings, {} stopped, {} fired, {} timers wrong: {}",
        c.mass_fired,
        c.mass_cancelled,
        c.mass_lost,
        c.mass_wrong,
        c.churn_armings,
        c.churn_cancelled,
        c.churn_fired,
        c.churn_wrong,
        if c.ok() { "ok" } else { "FAILED" }
    )
}

/// The report as Markdown: the latency table, the mass expiry, the counts and memory.
pub fn render(report: &StressReport) -> String {
    use std::fmt::Write;
    let p = &report.plan;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "callwheel stress: {} timers due at once on {} shards (K = {} expiries per lock hold), {} churn threads starting and stopping timers, {} CPUs{}\n",
        p.timers,
        report.shards,
        report.max_expiries_per_lock,
        p.threads,
        report.cpus,
        crate::sweep::steal_note(report.steal_percent)
    );
    let _ = writeln!(
        out,
        "| call | calls | p50 µs | p99 µs | p99.9 µs | max µs |\n|---|---:|---:|---:|---:|---:|"
    );
    for (name, l) in [
        ("start, during the mass expiry", &report.start_during),
        ("start, whole run", &report.start_all),
        ("stop, whole run", &report.stop_all),
    ] {
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {} |",
            l.calls,
            us(l.p50),
            us(l.p99),
            us(l.p999),
            us(l.max)
        );
    }
    let _ = writeln!(
        out,
        "\nmass expiry: {} timers in {:.1} ms (first callback {} µs after the deadline){}; {} lock releases on the expiry budget; creating and arming took {:.1} ms",
        p.timers,
        report.expiry_ns as f64 / 1e6,
        us(report.first_late_ns),
        if report.began_during_arming {
            " — it began before arming was over"
        } else {
            ""
        },
        report.budget_yields,
        report.arm_ns as f64 / 1e6
    );
    let _ = writeln!(
        out,
        "memory: resident {:.0} MiB before, {:.0} MiB armed ({:.0} bytes per timer), peak {:.0} MiB",
        report.rss_before_kib as f64 / 1024.0,
        report.rss_armed_kib as f64 / 1024.0,
        report.bytes_per_timer(),
        report.rss_peak_kib as f64 / 1024.0
    );
    let _ = writeln!(out, "counts: {}", count_verdict(report));
    let _ = writeln!(
        out,
        "target: start p99 during the mass expiry < {} µs: {}",
        START_P99_TARGET_NS / 1_000,
        start_verdict(report)
    );
    out
}

/// `callwheel stress`: measure and print. Exit status 1 when the count check fails or the run
/// could not be made.
pub fn command(args: &StressArgs) -> ExitCode {
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: this is a debug build; its figures are not representative (use --release)"
        );
    }
    let bar = crate::sections::progress_bar(0);
    let measured = measure(&args.plan(), &bar);
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
            if report.counts.ok() {
                ExitCode::SUCCESS
            } else {
                eprintln!("error: count check failed: {}", count_verdict(&report));
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("error: stress: {e}");
            ExitCode::from(1)
        }
    }
}
