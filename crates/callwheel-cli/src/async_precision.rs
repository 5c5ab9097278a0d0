//! Async sleep precision: requested against actual sleep for `callwheel_async::sleep` on
//! three executors, beside each executor's own timer and a raw `clock_nanosleep`.
//!
//! For every requested sleep `r` (10 µs to 10 ms, 1-2-5 steps) eight sources sleep `r`, one
//! sample each in turn, in a fresh seeded shuffle every turn (interleaved sample by sample, so
//! every source sees the same host noise):
//!
//! | source | executor | how |
//! |---|---|---|
//! | clock_nanosleep | none | `clock_nanosleep(TIMER_ABSTIME)` on the measuring thread |
//! | clock_nanosleep + hand-off | none | a helper thread sleeps with `clock_nanosleep`, then unparks the measuring thread: the two hops any timer thread separate from the executor's threads makes (the kernel wakes the timer thread, which wakes the task's thread) |
//! | tokio::time::sleep | tokio current-thread | `block_on` of a future that reads the clock, sleeps, reads it again |
//! | callwheel_async::sleep | tokio current-thread | the same future with callwheel's sleep |
//! | tokio::time::sleep | tokio multi-thread, 2 workers | the future spawned on the runtime; the figure comes back over a channel |
//! | callwheel_async::sleep | tokio multi-thread, 2 workers | the same |
//! | async_io::Timer | smol (async-executor, 2 runner threads) | the future spawned on the executor |
//! | callwheel_async::sleep | smol | the same |
//!
//! The actual sleep is read inside the future (after the sleep's first poll is made, when it
//! is polled again and complete), so the executor's own wake-up of its task counts and the
//! trip back to the measuring thread does not. Every thread involved runs with the smallest
//! timer slack (1 ns), the raw sleep's too, so each timer is compared with the others at its
//! best rather than at the kernel's default 50 µs of slack.
//!
//! The hand-off row is the reference for what such a design can reach on the machine: on a
//! virtual machine whose idle CPUs wake slowly the second hop costs tens of microseconds that
//! an executor sleeping in its own `epoll_wait` (async-io's reactor, tokio's driver) does not
//! pay.
//!
//! Targets: `callwheel_async::sleep`'s median at most the raw sleep's + 10 µs on the
//! current-thread executors (+ 20 µs on tokio's multi-thread runtime: [`target_over_raw_ns`]),
//! and no later than async-io's, for every request and executor.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::{JoinHandle, Thread};
use std::time::Duration;

use callwheel_rt::ClockId;

use crate::smol_pool::SmolPool;
use callwheel_bench::percentile::Summary;
use callwheel_bench::plots::Chart;
use callwheel_bench::verdict::{verdict, Verdict};
use callwheel_bench::workload::{SplitMix64, SEED};

/// The requested sleeps, in µs: 1-2-5 steps from 10 µs to 10 ms.
pub const REQUESTS_US: [u64; 10] = [10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000];

/// How far callwheel's median may lie after the raw sleep's, ns, on `source`: 10 µs on a
/// current-thread executor (tokio's, smol's), 20 µs on tokio's multi-thread runtime, whose
/// woken task may wait for a worker to be unparked.
pub fn target_over_raw_ns(source: Source) -> u64 {
    if source == Source::CallwheelMulti {
        20_000
    } else {
        10_000
    }
}

/// A source of sleeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// `clock_nanosleep(TIMER_ABSTIME)`.
    Raw,
    /// `clock_nanosleep` on a helper thread, which then unparks the measuring thread.
    Handoff,
    /// `tokio::time::sleep` on a current-thread runtime.
    TokioCurrent,
    /// `callwheel_async::sleep` on the same runtime.
    CallwheelCurrent,
    /// `tokio::time::sleep` on a multi-thread runtime with 2 workers.
    TokioMulti,
    /// `callwheel_async::sleep` on the same runtime.
    CallwheelMulti,
    /// async-io's `Timer` on smol's executor.
    AsyncIoSmol,
    /// `callwheel_async::sleep` on smol's executor.
    CallwheelSmol,
}

impl Source {
    /// Every source, in table order.
    pub const ALL: [Source; 8] = [
        Source::Raw,
        Source::Handoff,
        Source::TokioCurrent,
        Source::CallwheelCurrent,
        Source::TokioMulti,
        Source::CallwheelMulti,
        Source::AsyncIoSmol,
        Source::CallwheelSmol,
    ];

    /// The name in tables and legends.
    pub fn name(self) -> &'static str {
        match self {
            Source::Raw => "clock_nanosleep",
            Source::Handoff => "clock_nanosleep + hand-off",
            Source::TokioCurrent => "tokio sleep, tokio current-thread",
            Source::CallwheelCurrent => "callwheel sleep, tokio current-thread",
            Source::TokioMulti => "tokio sleep, tokio multi-thread",
            Source::CallwheelMulti => "callwheel sleep, tokio multi-thread",
            Source::AsyncIoSmol => "async-io Timer, smol",
            Source::CallwheelSmol => "callwheel sleep, smol",
        }
    }

    /// callwheel's sleeps, with the executor's own timer beside each.
    pub const CALLWHEEL: [(Source, Source); 3] = [
        (Source::CallwheelCurrent, Source::TokioCurrent),
        (Source::CallwheelMulti, Source::TokioMulti),
        (Source::CallwheelSmol, Source::AsyncIoSmol),
    ];
}

/// One source's actual sleeps for one request, ns.
#[derive(Clone, Debug)]
pub struct Cell {
    /// The source.
    pub source: Source,
    /// The requested sleep, µs.
    pub request_us: u64,
    /// The actual sleeps.
    pub actual: Summary,
}

/// The result of a precision run.
#[derive(Clone, Debug)]
pub struct Precision {
    /// Samples per source and request.
    pub samples: u64,
    /// The requests, µs.
    pub requests_us: Vec<u64>,
    /// One cell per source and request.
    pub cells: Vec<Cell>,
}

impl Precision {
    /// The cell of `source` at `request_us`.
    pub fn cell(&self, source: Source, request_us: u64) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.source == source && c.request_us == request_us)
    }
}

/// Sets the calling thread's timer slack to its smallest (1 ns); a refusal leaves the
/// default, which only makes that thread's sleeps later.
fn least_slack() {
    let _ = ClockId::minimise_timer_slack();
}

/// The clock reading, ns (0 if it cannot be read: the sample is then absurd and visible).
fn now() -> u64 {
    ClockId::Monotonic.read().unwrap_or(0)
}

/// A helper thread that sleeps until a deadline and then unparks the thread that asked.
struct Handoff {
    requests: Option<mpsc::Sender<(u64, Thread, Arc<AtomicBool>)>>,
    helper: Option<JoinHandle<()>>,
}

impl Handoff {
    fn new() -> Result<Handoff, String> {
        let (tx, rx) = mpsc::channel::<(u64, Thread, Arc<AtomicBool>)>();
        let helper = std::thread::Builder::new()
            .name("hand-off".into())
            .spawn(move || {
                least_slack();
                for (deadline, asker, done) in rx {
                    let _ = ClockId::Monotonic.sleep_until(deadline);
                    done.store(true, Ordering::Release);
                    asker.unpark();
                }
            })
            .map_err(|e| format!("cannot start the hand-off thread: {e}"))?;
        Ok(Handoff {
            requests: Some(tx),
            helper: Some(helper),
        })
    }

    /// Sleeps `request` ns through the helper; the actual sleep in ns.
    fn sample(&self, request: u64) -> Result<u64, String> {
        let done = Arc::new(AtomicBool::new(false));
        let t0 = now();
        self.requests
            .as_ref()
            .and_then(|r| {
                r.send((t0 + request, std::thread::current(), Arc::clone(&done)))
                    .ok()
            })
            .ok_or("the hand-off thread is gone")?;
        while !done.load(Ordering::Acquire) {
            std::thread::park();
        }
        Ok(now().saturating_sub(t0))
    }
}

impl Drop for Handoff {
    fn drop(&mut self) {
        // Closing the channel ends the helper's loop.
        drop(self.requests.take());
        if let Some(h) = self.helper.take() {
            let _ = h.join();
        }
    }
}

/// The executors the sources run on.
struct Executors {
    handoff: Handoff,
    current: tokio::runtime::Runtime,
    multi: tokio::runtime::Runtime,
    smol: SmolPool,
}

/// One measured sleep, as a future: the actual sleep in ns.
async fn timed(source: Source, d: Duration) -> u64 {
    let t0 = now();
    match source {
        Source::TokioCurrent | Source::TokioMulti => tokio::time::sleep(d).await,
        Source::AsyncIoSmol => {
            async_io::Timer::after(d).await;
        }
        _ => callwheel_async::sleep(d).await,
    }
    now().saturating_sub(t0)
}

impl Executors {
    fn new() -> Result<Executors, String> {
        let current = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start tokio: {e}"))?;
        let multi = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .on_thread_start(least_slack)
            .build()
            .map_err(|e| format!("cannot start tokio: {e}"))?;
        let smol = SmolPool::new(2, least_slack).map_err(|e| format!("cannot start smol: {e}"))?;
        Ok(Executors {
            handoff: Handoff::new()?,
            current,
            multi,
            smol,
        })
    }

    /// One sleep of `request` ns from `source`; the actual sleep in ns.
    fn sample(&self, source: Source, request: u64) -> Result<u64, String> {
        let d = Duration::from_nanos(request);
        let (tx, rx) = mpsc::sync_channel(1);
        let report = async move {
            let _ = tx.send(timed(source, d).await);
        };
        match source {
            Source::Raw => {
                let t0 = now();
                ClockId::Monotonic
                    .sleep_until(t0 + request)
                    .map_err(|e| format!("clock_nanosleep: {e}"))?;
                return Ok(now().saturating_sub(t0));
            }
            Source::Handoff => return self.handoff.sample(request),
            Source::TokioCurrent | Source::CallwheelCurrent => self.current.block_on(report),
            Source::TokioMulti | Source::CallwheelMulti => drop(self.multi.spawn(report)),
            Source::AsyncIoSmol | Source::CallwheelSmol => {
                self.smol.executor().spawn(report).detach()
            }
        }
        let give_up = Duration::from_secs(10) + 2 * d;
        rx.recv_timeout(give_up)
            .map_err(|_| format!("{} did not complete", source.name()))
    }
}

/// Runs the sweep: `samples` per source and request; `tick` after each round.
///
/// # Errors
///
/// When an executor cannot start, a sleep fails or a future never completes.
pub fn measure(samples: u64, requests_us: &[u64], tick: &dyn Fn()) -> Result<Precision, String> {
    crate::sweep::with_least_slack(|| sweep(samples, requests_us, tick))
        .map_err(|e| format!("setting the timer slack: {e}"))?
}

fn sweep(samples: u64, requests_us: &[u64], tick: &dyn Fn()) -> Result<Precision, String> {
    let ex = Executors::new()?;
    // One unrecorded round: thread start-up, the global driver's start and first polls are
    // not samples.
    for source in Source::ALL {
        ex.sample(source, 100_000)?;
    }
    let n = Source::ALL.len();
    let mut taken: Vec<Vec<Vec<u64>>> = (0..requests_us.len())
        .map(|_| vec![Vec::with_capacity(samples as usize); n])
        .collect();
    let mut rng = SplitMix64::new(SEED);
    let mut order: Vec<usize> = (0..n).collect();
    for _ in 0..samples {
        for (j, &r) in requests_us.iter().enumerate() {
            rng.shuffle(&mut order);
            for &which in &order {
                taken[j][which].push(ex.sample(Source::ALL[which], r * 1_000)?);
            }
        }
        tick();
    }
    let mut cells = Vec::new();
    for (j, &request_us) in requests_us.iter().enumerate() {
        for (k, source) in Source::ALL.into_iter().enumerate() {
            if let Some(actual) = Summary::of(source.name(), std::mem::take(&mut taken[j][k])) {
                cells.push(Cell {
                    source,
                    request_us,
                    actual,
                });
            }
        }
    }
    Ok(Precision {
        samples,
        requests_us: requests_us.to_vec(),
        cells,
    })
}

/// The verdicts: per executor, callwheel's median against the raw sleep's plus
/// [`target_over_raw_ns`] and against async-io's, over every request.
pub fn verdicts(p: &Precision) -> Vec<Verdict> {
    let mut out = Vec::new();
    for (cw, own) in Source::CALLWHEEL {
        let mut over_raw = Vec::new();
        let mut over_io = Vec::new();
        for &r in &p.requests_us {
            let (Some(c), Some(raw), Some(io)) = (
                p.cell(cw, r),
                p.cell(Source::Raw, r),
                p.cell(Source::AsyncIoSmol, r),
            ) else {
                continue;
            };
            over_raw.push((r, c.actual.p50 as i64 - raw.actual.p50 as i64));
            over_io.push((r, c.actual.p50 as i64 - io.actual.p50 as i64));
        }
        let judge = |gaps: &[(u64, i64)], limit: i64| {
            let missed: Vec<String> = gaps
                .iter()
                .filter(|g| g.1 > limit)
                .map(|g| format!("{} us (+{:.1} us)", g.0, g.1 as f64 / 1e3))
                .collect();
            let worst = gaps.iter().map(|g| g.1).max().unwrap_or(0);
            format!(
                "{} of {} requests within; worst {:+.1} us{}: {}",
                gaps.len() - missed.len(),
                gaps.len(),
                worst as f64 / 1e3,
                if missed.is_empty() {
                    String::new()
                } else {
                    format!("; over at {}", missed.join(", "))
                },
                verdict(missed.is_empty() && !gaps.is_empty())
            )
        };
        out.push(Verdict {
            what: format!(
                "{}: p50 <= clock_nanosleep p50 + {} us",
                cw.name(),
                target_over_raw_ns(cw) / 1_000
            ),
            result: judge(&over_raw, target_over_raw_ns(cw) as i64),
        });
        out.push(Verdict {
            what: format!("{}: p50 <= async-io Timer's p50 (on smol)", cw.name()),
            result: judge(&over_io, 0),
        });
        if own != Source::AsyncIoSmol {
            // Beside the executor's own timer (tokio's): an observation, no target.
            let gaps: Vec<i64> = p
                .requests_us
                .iter()
                .filter_map(|&r| {
                    let (c, o) = (p.cell(cw, r)?, p.cell(own, r)?);
                    Some(o.actual.p50 as i64 - c.actual.p50 as i64)
                })
                .collect();
            if let (Some(lo), Some(hi)) = (gaps.iter().min(), gaps.iter().max()) {
                out.push(Verdict {
                    what: format!(
                        "{}: p50 earlier than {}'s (no target)",
                        cw.name(),
                        own.name()
                    ),
                    result: format!(
                        "earlier at {} of {} requests, by {:.1} to {:.1} us",
                        gaps.iter().filter(|&&g| g > 0).count(),
                        gaps.len(),
                        *lo as f64 / 1e3,
                        *hi as f64 / 1e3
                    ),
                });
            }
        }
        let over_handoff: Vec<i64> = p
            .requests_us
            .iter()
            .filter_map(|&r| {
                let (c, h) = (p.cell(cw, r)?, p.cell(Source::Handoff, r)?);
                Some(c.actual.p50 as i64 - h.actual.p50 as i64)
            })
            .collect();
        if let (Some(lo), Some(hi)) = (over_handoff.iter().min(), over_handoff.iter().max()) {
            out.push(Verdict {
                what: format!(
                    "{}: p50 - the hand-off reference's p50 (the design's own cost; no target)",
                    cw.name()
                ),
                result: format!("{:+.1} to {:+.1} us", *lo as f64 / 1e3, *hi as f64 / 1e3),
            });
        }
    }
    out
}

/// The tables: median and p99 actual sleep per request, µs.
pub fn render(p: &Precision) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for (what, pick) in [
        ("median", (|r: &Summary| r.p50) as fn(&Summary) -> u64),
        ("99th percentile", |r: &Summary| r.p99),
    ] {
        let _ = writeln!(
            out,
            "\nActual sleep, {what} of {} samples, µs (every thread at 1 ns timer slack):\n",
            p.samples
        );
        let _ = write!(out, "| requested µs |");
        for s in Source::ALL {
            let _ = write!(out, " {} |", s.name());
        }
        let _ = write!(out, "\n|---:|");
        for _ in Source::ALL {
            let _ = write!(out, "---:|");
        }
        out.push('\n');
        for &r in &p.requests_us {
            let _ = write!(out, "| {r} |");
            for s in Source::ALL {
                match p.cell(s, r) {
                    Some(c) => {
                        let _ = write!(out, " {:.1} |", pick(&c.actual) as f64 / 1e3);
                    }
                    None => out.push_str(" – |"),
                }
            }
            out.push('\n');
        }
    }
    out
}

/// The log-log figure: requested against actual sleep (median and p99 panels).
pub fn charts(p: &Precision) -> Vec<Chart> {
    let sources: Vec<(&str, Vec<(u64, &Summary)>)> = Source::ALL
        .iter()
        .map(|&s| {
            let cells = p.cells.iter().filter(|c| c.source == s);
            (s.name(), cells.map(|c| (c.request_us, &c.actual)).collect())
        })
        .collect();
    crate::sweep::sleep_panels(p.samples, &p.requests_us, &sources)
}

/// The figure's title.
pub const CHART_TITLE: &str =
    "Async sleeps: requested against actual sleep on three executors (log-log)";
