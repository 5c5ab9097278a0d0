//! `callwheel latency`: the hrtimers latency table. Timers due every period (10 ms by
//! default) fire on a callwheel-rt driver while this thread sleeps with a bare
//! `clock_nanosleep(TIMER_ABSTIME)` for the slots in between, so both see the same host noise
//! in the same run: callwheel owns the even slots of a `2 × period` grid, the raw loop the odd
//! ones. Lateness is the clock reading minus the deadline, in µs:
//!
//! - *callwheel-rt (callback)*: read at the start of the callback (wake-up, lock, wheel, and
//!   dispatch to a direct callback);
//! - *callwheel-rt (wake-up)*: the driver's own reading on waking ([`Fire::lateness`]);
//! - *clock_nanosleep (raw)*: read right after the sleep returns.
//!
//! Both the driver and this thread run with 1 ns timer slack. With `--load`, one busy thread
//! per CPU spins for the whole run. The figures are benchmarks, never pass/fail: the verdict
//! lines compare the same run's numbers with the runtime's targets.

// The submodules use this file's measurement: the experiment (its plan, verdicts, the
// lateness histogram) and the command (its options).
pub mod command;
pub mod experiment;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use callwheel_rt::{ClockId, Deadline, Exec, Fire, Missed, Runtime, Stop};

use callwheel_bench::percentile::Summary;
use callwheel_bench::results::Figures;

use crate::failure::{fail, Failure};

/// The targets for the runtime's median lateness over the raw `clock_nanosleep` loop's, in
/// ns, judged in the same run: the runtime's first target (+5 µs), and the tighter one it aims
/// for now (+2 µs, what the wake-up path costs beyond the kernel's). `latency` and `sweep` print
/// a verdict for each.
pub const P50_TARGETS_NS: [u64; 2] = [5_000, 2_000];

/// What one latency run measures.
#[derive(Clone, Debug)]
pub struct LatencyArgs {
    /// Samples per source.
    pub samples: u64,
    /// Period between timers, in µs.
    pub period_us: u64,
    /// Whether every CPU is kept busy by a spinning thread during the run.
    pub load: bool,
    /// The runtime's spin before each wake-up, in µs ([`callwheel_rt::Config::spin`]; 0, the
    /// runtime's default, for none).
    pub spin_us: u64,
}

/// The result of one run.
#[derive(Clone, Debug)]
pub struct Report {
    /// The options it ran with.
    pub args: LatencyArgs,
    /// Callback, wake-up and raw rows, in that order.
    pub rows: Vec<Summary>,
    /// Wake-ups the callwheel driver made.
    pub wakeups: u64,
    /// Of those, the ones it spun before (0 without a spin).
    pub spins: u64,
    /// The time the driver spent spinning, in all: the spin's CPU cost, in ns.
    pub spin_ns: u64,
    /// The run's length, from arming the timer to its last sample, in ns.
    pub elapsed_ns: u64,
}

/// The figures of `report` for `results.json`, under `case` (`idle` or `loaded`): each row's
/// lateness percentiles and the driver's wake-ups.
pub fn figures(report: &Report, case: &str, figures: &mut Figures) {
    for r in &report.rows {
        for (metric, v) in [
            ("min_ns", r.min),
            ("p50_ns", r.p50),
            ("p99_ns", r.p99),
            ("p999_ns", r.p999),
            ("max_ns", r.max),
        ] {
            figures.figure("latency", r.source, case, metric, v as f64);
        }
    }
    figures.figure(
        "latency",
        "callwheel-rt",
        case,
        "wakeups",
        report.wakeups as f64,
    );
    if report.args.spin_us > 0 {
        figures.figure(
            "latency",
            "callwheel-rt",
            case,
            "spin_ns",
            report.spin_ns as f64,
        );
    }
}

/// Spinning threads, one per CPU, stopped on drop.
struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Load {
    fn start(on: bool) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let n = if on {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            0
        };
        let threads = (0..n)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                    }
                })
            })
            .collect();
        Load { stop, threads }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Samples recorded by the callwheel timer's callback.
#[derive(Default)]
struct Samples {
    callback: Vec<u64>,
    wakeup: Vec<u64>,
}

/// Runs the measurement.
///
/// # Errors
///
/// When the runtime cannot start, a clock cannot be read or a sleep fails.
pub fn measure(args: &LatencyArgs) -> Result<Report, Failure> {
    let clock = ClockId::Monotonic;
    let period = args.period_us * 1_000;
    let loops = args.samples;
    let rt = Runtime::builder()
        .shards(1)
        .workers(1)
        .spin(Duration::from_micros(args.spin_us))
        .build()
        .map_err(|e| fail("starting the runtime", e))?;
    ClockId::minimise_timer_slack().map_err(|e| fail("setting the timer slack", e))?;
    let _load = Load::start(args.load);

    let samples = Arc::new(Mutex::new(Samples::default()));
    let recorder = Arc::clone(&samples);
    let timer = rt
        .timer(Exec::Direct, move |timer, fire: &Fire| {
            let read = clock.read().unwrap_or(fire.now);
            let mut s = recorder.lock().unwrap_or_else(|p| p.into_inner());
            s.callback.push(read.saturating_sub(fire.deadline));
            s.wakeup.push(callwheel_rt::saturating_ns(fire.lateness()));
            if s.callback.len() as u64 >= loops {
                let _ = timer.stop();
            }
        })
        .map_err(|e| fail("making the timer", e))?;
    // Start a few periods out, so the first sample is not taken while threads still start.
    let base = clock.read().map_err(|e| fail("reading the clock", e))? + 5 * period;
    timer
        .start_periodic_with(
            Deadline::from_clock_ns(base),
            Duration::from_nanos(2 * period),
            Duration::ZERO,
            Missed::Skip,
            None,
        )
        .map_err(|e| fail("arming the timer", e))?;
    let began = std::time::Instant::now();
    let mut raw = Vec::with_capacity(loops as usize);
    let mut deadline = base + period;
    for _ in 0..loops {
        clock
            .sleep_until(deadline)
            .map_err(|e| fail("clock_nanosleep", e))?;
        let now = clock.read().map_err(|e| fail("reading the clock", e))?;
        raw.push(now.saturating_sub(deadline));
        // The next odd slot after now: a sample more than a slot late is one late sample, as
        // the callwheel timer's Missed::Skip makes it, not a backlog that makes the next ones
        // late too.
        let slots_past = (now - base) / (2 * period);
        deadline = base + (2 * slots_past + 1) * period;
        if deadline <= now {
            deadline += 2 * period;
        }
    }
    // The last callwheel slot is one period after the last raw one; wait for it (bounded: a
    // timer that never fires would be a runtime bug, reported as an error).
    let give_up =
        std::time::Instant::now() + Duration::from_secs(10) + Duration::from_nanos(4 * period);
    while (samples
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .callback
        .len() as u64)
        < loops
    {
        if std::time::Instant::now() > give_up {
            return Err(Failure("the callwheel timer stopped firing".into()));
        }
        std::thread::sleep(Duration::from_nanos(period / 4));
    }
    if timer.drain() == Stop::Cancelled {
        return Err(Failure(
            "the timer was still armed after its last sample".into(),
        ));
    }
    let elapsed_ns = callwheel_rt::saturating_ns(began.elapsed());
    let stats = rt
        .shard_stats(0)
        .map_err(|e| fail("reading the statistics", e))?;
    let s = std::mem::take(&mut *samples.lock().unwrap_or_else(|p| p.into_inner()));
    let rows = [
        Summary::of("callwheel-rt (callback)", s.callback),
        Summary::of("callwheel-rt (wake-up)", s.wakeup),
        Summary::of("clock_nanosleep (raw)", raw),
    ]
    .into_iter()
    .flatten()
    .collect();
    Ok(Report {
        args: args.clone(),
        rows,
        wakeups: stats.wakeups,
        spins: stats.spins,
        spin_ns: stats.spin_ns,
        elapsed_ns,
    })
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1_000.0)
}

fn ratio(a: u64, b: u64) -> String {
    if b == 0 {
        "n/a".into()
    } else {
        format!("{:.2}", a as f64 / b as f64)
    }
}

/// The report as a Markdown table, the ratios to the raw loop, and the target verdicts.
pub fn render(report: &Report) -> String {
    use std::fmt::Write;
    let a = &report.args;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "callwheel latency: {} samples per source, period {} µs, interleaved (callwheel on even slots, raw on odd), load: {}, driver spin: {}\n",
        a.samples,
        a.period_us,
        if a.load { "one spinning thread per CPU" } else { "none" },
        if a.spin_us > 0 { format!("{} µs", a.spin_us) } else { "off".into() }
    );
    let _ = writeln!(
        out,
        "| source | samples | min µs | avg µs | p50 µs | p99 µs | p99.9 µs | max µs |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for r in &report.rows {
        let f = r.figures().map(us);
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            r.source, r.samples, f[0], f[1], f[2], f[3], f[4], f[5]
        );
    }
    let raw = report
        .rows
        .iter()
        .find(|r| r.source.starts_with("clock_nanosleep"));
    if let Some(raw) = raw {
        for r in report.rows.iter().filter(|r| !std::ptr::eq(*r, raw)) {
            let (x, y) = (r.figures(), raw.figures());
            let _ = writeln!(
                out,
                "| ratio {} / raw | | {} | {} | {} | {} | {} | {} |",
                r.source,
                ratio(x[0], y[0]),
                ratio(x[1], y[1]),
                ratio(x[2], y[2]),
                ratio(x[3], y[3]),
                ratio(x[4], y[4]),
                ratio(x[5], y[5])
            );
        }
        if let Some(cb) = report.rows.first() {
            let p50_diff = cb.p50 as f64 / 1_000.0 - raw.p50 as f64 / 1_000.0;
            let p99_ratio = cb.p99 as f64 / raw.p99.max(1) as f64;
            let p50s: Vec<String> = P50_TARGETS_NS
                .iter()
                .map(|&t| {
                    let t = t as f64 / 1_000.0;
                    let met = if p50_diff <= t { "met" } else { "missed" };
                    format!("(target ≤ +{t:.2}): {met}")
                })
                .collect();
            let _ = writeln!(
                out,
                "\ntargets (callback vs raw, same run): p50 {:+.2} µs {}; p99 × {:.2} (target ≤ 1.20): {}",
                p50_diff,
                p50s.join(", "),
                p99_ratio,
                if p99_ratio <= 1.2 { "met" } else { "missed" }
            );
        }
    }
    let _ = writeln!(
        out,
        "driver wake-ups: {} for {} timers",
        report.wakeups, a.samples
    );
    if a.spin_us > 0 {
        let _ = writeln!(
            out,
            "driver spin: {} µs before each wake-up (off by default); {} deadlines reached spinning, {} µs of spin each on average, {:.1} ms spinning in all, {:.2} % of one CPU over the run",
            a.spin_us,
            report.spins,
            us(report.spin_ns.checked_div(report.spins).unwrap_or(0)),
            report.spin_ns as f64 / 1e6,
            100.0 * report.spin_ns as f64 / report.elapsed_ns.max(1) as f64
        );
    }
    out
}
