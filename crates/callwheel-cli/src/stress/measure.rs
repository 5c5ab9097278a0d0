//! One stress run: arm the mass timers, run the churn threads across the mass expiry, and
//! gather the latencies, the counts and the memory.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use callwheel_rt::saturating_ns as nanos;
use callwheel_rt::{ClockId, Config, Deadline, Exec, Runtime, Stop};
use indicatif::ProgressBar;

use super::churn::{churn, histogram, Mass};
use super::plan::Plan;
use super::report::{Counts, Latency, StressReport};
use crate::failure::{fail, Failure};

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

/// Runs the stress test. `bar` counts mass firings; its length is set here.
///
/// # Errors
///
/// When the runtime cannot start, a timer cannot be armed, or the mass expiry does not end
/// within a minute of its deadline.
pub fn measure(plan: &Plan, bar: &ProgressBar) -> Result<StressReport, Failure> {
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
            Err(_) => return Err(Failure("a churn thread panicked".into())),
        }
    }
    if timed_out {
        return Err(Failure(format!(
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
    let steal_percent = crate::sweep::steal_percent(ticks, crate::sweep::cpu_ticks());
    // Free a million timers before the throughput runs (the runtime's drop joins its threads).
    drop(churns);
    drop(timers);
    drop(rt);
    bar.set_message("measuring start/stop throughput from 1 and 2 threads");
    let scaling = super::scaling::measure_scaling(plan.scaling_timers, plan.scaling_ms)?;
    Ok(StressReport {
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
        steal_percent,
        scaling,
    })
}
