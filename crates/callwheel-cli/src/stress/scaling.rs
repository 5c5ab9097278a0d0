//! Throughput of timer operations from one and from two threads on a two-shard runtime: each
//! thread owns `timers` timers of its own shard and, for `duration_ms`, picks one at random
//! and starts it (when idle), or stops or re-arms it (when pending, one or the other at
//! random). Deadlines are an hour away, so nothing fires and only the calls are measured. With
//! a shard per thread, two threads share no lock: the ratio of the two runs' operations per
//! second is how the runtime's start/stop path scales, as far as the machine's cores allow.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use callwheel_rt::{Exec, Runtime, Stop, Timer};

use crate::failure::{fail, Failure};
use callwheel_bench::workload::{SplitMix64, SEED};

/// The shards of the runtime the throughput is measured on.
pub const SCALING_SHARDS: usize = 2;

/// One run: `threads` threads, each on its own timers.
#[derive(Clone, Debug, PartialEq)]
pub struct Throughput {
    /// Threads calling.
    pub threads: u64,
    /// Calls made, all threads together.
    pub ops: u64,
    /// Of those, starts of an idle timer.
    pub starts: u64,
    /// Stops of a pending timer.
    pub stops: u64,
    /// Re-arms of a pending timer (a start that moves its window).
    pub resets: u64,
    /// From the threads' common start to the last one's end, ns.
    pub elapsed_ns: u64,
}

impl Throughput {
    /// Calls per second, all threads together.
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 * 1e9 / self.elapsed_ns.max(1) as f64
    }
}

/// The one-thread and two-thread runs and their ratio.
#[derive(Clone, Debug, PartialEq)]
pub struct Scaling {
    /// Timers per thread.
    pub timers: u64,
    /// How long each thread calls, ms.
    pub duration_ms: u64,
    /// One thread, then two.
    pub runs: Vec<Throughput>,
    /// Two threads' operations per second over one thread's.
    pub speedup: f64,
}

/// Measures one thread, then two, each run on a fresh two-shard runtime.
///
/// # Errors
///
/// When a runtime or a timer cannot be made, or a thread panics.
pub fn measure_scaling(timers: u64, duration_ms: u64) -> Result<Scaling, Failure> {
    let runs = [1u64, 2]
        .iter()
        .map(|&threads| run(threads, timers, duration_ms))
        .collect::<Result<Vec<_>, _>>()?;
    let speedup = runs[1].ops_per_sec() / runs[0].ops_per_sec().max(f64::MIN_POSITIVE);
    Ok(Scaling {
        timers,
        duration_ms,
        runs,
        speedup,
    })
}

fn run(threads: u64, timers: u64, duration_ms: u64) -> Result<Throughput, Failure> {
    let rt = Runtime::builder()
        .shards(SCALING_SHARDS)
        .build()
        .map_err(|e| fail("starting the runtime", e))?;
    // Every thread's timers are made before any thread starts calling.
    let mut pools = Vec::new();
    for t in 0..threads {
        let shard = t as usize % SCALING_SHARDS;
        let pool = (0..timers)
            .map(|_| rt.timer_on(shard, Exec::Direct, |_, _| {}))
            .collect::<Result<Vec<Timer>, _>>()
            .map_err(|e| fail("creating a timer", e))?;
        pools.push(pool);
    }
    let barrier = Arc::new(Barrier::new(threads as usize + 1));
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = pools
        .into_iter()
        .enumerate()
        .map(|(t, pool)| {
            let (barrier, stop) = (Arc::clone(&barrier), Arc::clone(&stop));
            std::thread::spawn(move || calls(t as u64, &pool, &barrier, &stop))
        })
        .collect();
    barrier.wait();
    let started = Instant::now();
    std::thread::sleep(Duration::from_millis(duration_ms));
    stop.store(true, Ordering::Relaxed);
    let mut total = Throughput {
        threads,
        ops: 0,
        starts: 0,
        stops: 0,
        resets: 0,
        elapsed_ns: 0,
    };
    for h in handles {
        let (starts, stops, resets) = h
            .join()
            .map_err(|_| Failure("a throughput thread panicked".into()))??;
        total.starts += starts;
        total.stops += stops;
        total.resets += resets;
    }
    total.ops = total.starts + total.stops + total.resets;
    total.elapsed_ns = callwheel_rt::saturating_ns(started.elapsed());
    Ok(total)
}

/// One thread's calls until `stop`: (starts, stops, resets).
fn calls(
    thread: u64,
    pool: &[Timer],
    barrier: &Barrier,
    stop: &AtomicBool,
) -> Result<(u64, u64, u64), Failure> {
    let mut rng = SplitMix64::new(SEED ^ (thread + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut pending = vec![false; pool.len()];
    let (mut starts, mut stops, mut resets) = (0u64, 0u64, 0u64);
    let hour = Duration::from_secs(3_600);
    barrier.wait();
    loop {
        // The flag is read once per 256 calls: a load per call would be measured too.
        for _ in 0..256 {
            let r = rng.next_u64();
            let i = (r % pool.len() as u64) as usize;
            let t = &pool[i];
            let after = hour + Duration::from_nanos(r >> 40);
            if !pending[i] {
                t.start_after(after)
                    .map_err(|e| fail("starting a timer", e))?;
                pending[i] = true;
                starts += 1;
            } else if r & (1 << 32) == 0 {
                if t.stop() != Stop::Cancelled {
                    return Err(Failure("a pending timer was not cancelled".into()));
                }
                pending[i] = false;
                stops += 1;
            } else {
                t.start_after(after)
                    .map_err(|e| fail("re-arming a timer", e))?;
                resets += 1;
            }
        }
        if stop.load(Ordering::Relaxed) {
            return Ok((starts, stops, resets));
        }
    }
}
