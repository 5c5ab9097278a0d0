//! The sleep storm: one case (an executor and a timer, or no timer for the floor) run in this
//! process, which is a child of the measuring one so that it measures its own memory.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::smol_pool::SmolPool;
use callwheel_bench::workload::SplitMix64;

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
    pub(super) const ALL: [StormCase; 6] = [
        StormCase::TokioNone,
        StormCase::TokioTokio,
        StormCase::TokioCallwheel,
        StormCase::SmolNone,
        StormCase::SmolAsyncIo,
        StormCase::SmolCallwheel,
    ];

    /// Whether the tasks sleep (the floor cases do not).
    pub(super) fn sleeps(self) -> bool {
        !matches!(self, StormCase::TokioNone | StormCase::SmolNone)
    }

    pub(super) fn key(self) -> &'static str {
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
pub(super) fn storm_here(case: StormCase, n: u64, span_ms: u64) -> StormResult {
    let mut rng = SplitMix64::new(callwheel_bench::workload::SEED);
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
                .enable_all()
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
