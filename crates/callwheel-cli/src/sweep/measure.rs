//! The sleep sweep: every source sleeps every request, interleaved sample by sample in a fresh
//! shuffle each turn; then the wake-up batches and the idle check.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use callwheel_rt::{ClockId, Deadline, Exec, Runtime, Timer, Tolerance, Woken};
use indicatif::ProgressBar;

use super::host::{cpu_ticks, set_slack, steal_percent, with_least_slack};
use super::plan::{Plan, Source, BATCH_TOLERANCES, TOLERANCE_PERCENT};
use super::report::{Cell, SweepReport};
use super::wakeups::{batch, idle};
use crate::failure::{fail, Failure};
use callwheel_bench::percentile::Summary;
use callwheel_bench::workload::{SplitMix64, SEED};

/// The tolerant sources' precision: [`TOLERANCE_PERCENT`] of the request.
const PRECISION: Tolerance = Tolerance::percent(TOLERANCE_PERCENT as u32);

/// What the sources need: the runtime and its timer, the slot its callback reports in, the
/// runtime's condition variable and its mutex, and the tokio runtime.
struct Sleepers {
    clock: ClockId,
    rt: Runtime,
    timer: Timer,
    slot: Arc<(Mutex<Option<u64>>, Condvar)>,
    waits: (Mutex<()>, callwheel_rt::Condvar),
    tokio: tokio::runtime::Runtime,
}

impl Sleepers {
    fn new() -> Result<Sleepers, Failure> {
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
            .enable_all()
            .build()
            .map_err(|e| fail("starting tokio", e))?;
        Ok(Sleepers {
            clock,
            rt,
            timer,
            slot,
            waits: (Mutex::new(()), callwheel_rt::Condvar::new()),
            tokio,
        })
    }

    fn read(&self) -> Result<u64, Failure> {
        self.clock.read().map_err(|e| fail("reading the clock", e))
    }

    /// One sleep of `request` ns from `source`; returns the actual sleep in ns.
    fn sample(&self, source: Source, request: u64) -> Result<u64, Failure> {
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
                    _ => Err(Failure("the callwheel timer did not fire".into())),
                }
            }
            Source::SleepTolerant => {
                let t0 = self.read()?;
                self.rt
                    .sleep(Duration::from_nanos(request), PRECISION)
                    .map_err(|e| fail("sleeping on the runtime", e))?;
                let t1 = self.read()?;
                Ok(t1.saturating_sub(t0))
            }
            Source::CondvarTolerant => {
                let (m, cv) = &self.waits;
                let mut guard = m.lock().unwrap_or_else(|p| p.into_inner());
                let t0 = self.read()?;
                // Nothing notifies it: the wait ends at its timeout (a spurious return cannot
                // happen, but would only wait again).
                loop {
                    let (g, woken) = cv.wait_timeout(
                        &self.rt,
                        m,
                        guard,
                        Duration::from_nanos(request),
                        PRECISION,
                    );
                    guard = g;
                    if woken.map_err(|e| fail("waiting on the runtime's condvar", e))?
                        == Woken::TimedOut
                    {
                        break;
                    }
                }
                let t1 = self.read()?;
                drop(guard);
                Ok(t1.saturating_sub(t0))
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
pub fn measure(plan: &Plan, bar: &ProgressBar) -> Result<SweepReport, Failure> {
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
    let overshoot = Summary::of("overshoot", overshoot);
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

fn sweep(plan: &Plan, bar: &ProgressBar) -> Result<Vec<Cell>, Failure> {
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
            if let Some(actual) = Summary::of(source.name(), taken) {
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
