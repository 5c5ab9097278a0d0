//! Registration scaling: start + cancel of a timer from 1 and 2 tokio workers, measured, and
//! what 16 and 64 workers would do, modelled from figures measured here.
//!
//! Measured: each of W tasks on a multi-thread runtime with W workers loops making a 1 s sleep,
//! polling it once (which registers it) and dropping it (which cancels it), for
//! `tokio::time::sleep` and `callwheel_async::sleep` (whose registrations go to the wheel of the
//! worker's own thread). Two costs are measured on one thread and on two: the critical section
//! of a registration and its cancellation on a shared wheel (`Wheel` start + stop under an
//! uncontended mutex), and the cost of one acquisition of a mutex that two threads on two cores
//! take in turn (the cache-line hand-off a shared lock pays whenever the next registration
//! comes from another core).
//!
//! The model, for N workers each on its own core:
//!
//! - per-worker wheels (no lock shared on the path): X(N) = N · X(1), X(1) as measured;
//! - one lock shared by all workers (tokio's timer driver, or a single shared wheel):
//!   X(N) = min(N · X(1), 1 / (c + h)), with c the critical section and h the hand-off, since
//!   under contention every operation holds the lock for c and moves it between cores. With
//!   callwheel's own c, a lower bound of any shared design's; tokio's critical section is
//!   larger;
//! - per-worker wheels found through `tokio::runtime::Handle::try_current()` at every
//!   registration, which clones and drops the runtime's handle, two atomic operations on one
//!   cache line every worker shares: X(N) = min(N · X(1), 1 / (2 h)). The lookup alone is
//!   measured from 1 and 2 workers too. callwheel-async pays it only at a task's first
//!   registration on a thread (it remembers the wheel the task found), so its line is the
//!   first; the second shows what that cache saves.
//!
//! Two cores cannot show the knee of the shared lock: the model is what this machine's figures
//! imply for larger ones, not a measurement of them.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::{Arc, Barrier, Mutex};
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use callwheel::{Timers, Wheel};

/// What the scaling section measured, and the model's inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Scaling {
    /// (workers, tokio start + cancel per second, callwheel start + cancel per second).
    pub measured: Vec<(u64, f64, f64)>,
    /// The critical section of a start + stop on a shared wheel, ns.
    pub critical_ns: f64,
    /// One acquisition of a mutex two cores take in turn, ns.
    pub handoff_ns: f64,
    /// (workers, `Handle::try_current()` lookups per second over all workers).
    pub lookups: Vec<(u64, f64)>,
}

/// The worker counts the model is shown for.
pub const MODEL_WORKERS: [u64; 4] = [1, 2, 16, 64];

impl Scaling {
    /// callwheel's measured one-worker rate.
    fn one_worker(&self) -> f64 {
        self.measured.first().map_or(0.0, |m| m.2)
    }

    /// The model's rate with per-worker wheels at `n` workers.
    pub fn per_worker(&self, n: u64) -> f64 {
        n as f64 * self.one_worker()
    }

    /// The model's rate with per-worker wheels found through tokio's shared handle.
    pub fn per_worker_with_lookup(&self, n: u64) -> f64 {
        let cap = 1e9 / (2.0 * self.handoff_ns).max(1e-3);
        if n <= 1 {
            return self.one_worker();
        }
        self.per_worker(n).min(cap)
    }

    /// The model's rate with one lock shared by `n` workers.
    pub fn shared_lock(&self, n: u64) -> f64 {
        let cap = 1e9 / (self.critical_ns + self.handoff_ns).max(1e-3);
        if n <= 1 {
            return self.one_worker().min(cap);
        }
        (n as f64 * self.one_worker()).min(cap)
    }
}

/// One start + cancel of `callwheel` or tokio's sleep, polled inside the task.
async fn start_cancel(callwheel: bool) {
    const LONG: Duration = Duration::from_secs(1);
    if callwheel {
        let mut s = pin!(callwheel_async::sleep(LONG));
        std::future::poll_fn(|cx| {
            let _ = s.as_mut().poll(cx);
            Poll::Ready(())
        })
        .await;
    } else {
        let mut s = pin!(tokio::time::sleep(LONG));
        std::future::poll_fn(|cx| {
            let _ = s.as_mut().poll(cx);
            Poll::Ready(())
        })
        .await;
    }
}

/// A multi-thread runtime with `workers` workers, its I/O and time drivers on.
fn runtime(workers: u64) -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers as usize)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start tokio: {e}"))
}

/// Start + cancel per second from `workers` tasks on as many workers.
fn rate(workers: u64, callwheel: bool, ops: u64) -> Result<f64, String> {
    let runtime = runtime(workers)?;
    let per_task = ops.div_ceil(workers);
    // One warm-up round: each worker's wheel and tokio's timer are made before the clock runs.
    let run = |n: u64| {
        runtime.block_on(async {
            let tasks: Vec<_> = (0..workers)
                .map(|_| {
                    tokio::spawn(async move {
                        for _ in 0..n {
                            start_cancel(callwheel).await;
                        }
                    })
                })
                .collect();
            for t in tasks {
                let _ = t.await;
            }
        })
    };
    run(per_task.min(1_000));
    let start = Instant::now();
    run(per_task);
    Ok((per_task * workers) as f64 / start.elapsed().as_secs_f64().max(1e-9))
}

/// `tokio::runtime::Handle::try_current()` lookups per second from `workers` tasks on as many
/// workers.
fn lookup_rate(workers: u64, ops: u64) -> Result<f64, String> {
    let runtime = runtime(workers)?;
    let per_task = ops.div_ceil(workers);
    let start = Instant::now();
    runtime.block_on(async {
        let tasks: Vec<_> = (0..workers)
            .map(|_| {
                tokio::spawn(async move {
                    for _ in 0..per_task {
                        if let Ok(h) = tokio::runtime::Handle::try_current() {
                            black_box(h.id());
                        }
                    }
                })
            })
            .collect();
        for t in tasks {
            let _ = t.await;
        }
    });
    Ok((per_task * workers) as f64 / start.elapsed().as_secs_f64().max(1e-9))
}

/// ns per start + stop on a wheel of wakers under an uncontended mutex (one thread).
fn critical_section_ns(ops: u64) -> f64 {
    let wheel: Mutex<Wheel<Waker>> = Mutex::new(Wheel::new());
    let waker = Waker::noop().clone();
    let mut t = 1_000u64;
    let start = Instant::now();
    for _ in 0..ops {
        let mut w = wheel.lock().unwrap_or_else(|p| p.into_inner());
        t += 1;
        if let Ok(h) = w.start(t + 1_000_000_000, waker.clone()) {
            black_box(w.stop(h));
        }
    }
    start.elapsed().as_nanos() as f64 / ops as f64
}

/// ns per acquisition of a mutex that two threads take in turn (each increments a counter under
/// it, then the other takes it).
fn handoff_ns(ops: u64) -> f64 {
    let counter = Arc::new(Mutex::new(0u64));
    let barrier = Arc::new(Barrier::new(2));
    let spawn = |counter: Arc<Mutex<u64>>, barrier: Arc<Barrier>| {
        std::thread::spawn(move || {
            barrier.wait();
            let start = Instant::now();
            for _ in 0..ops {
                *counter.lock().unwrap_or_else(|p| p.into_inner()) += 1;
            }
            start.elapsed()
        })
    };
    let a = spawn(Arc::clone(&counter), Arc::clone(&barrier));
    let b = spawn(counter, barrier);
    let longest = a
        .join()
        .unwrap_or_default()
        .max(b.join().unwrap_or_default());
    longest.as_nanos() as f64 / (2 * ops) as f64
}

/// Runs the measurements: `ops` start + cancel pairs per rate.
///
/// # Errors
///
/// When a runtime cannot start.
pub fn measure(ops: u64) -> Result<Scaling, String> {
    let mut measured = Vec::new();
    let mut lookups = Vec::new();
    for workers in [1, 2] {
        let tokio = rate(workers, false, ops)?;
        let callwheel = rate(workers, true, ops)?;
        measured.push((workers, tokio, callwheel));
        lookups.push((workers, lookup_rate(workers, 4 * ops)?));
    }
    Ok(Scaling {
        measured,
        critical_ns: critical_section_ns(ops),
        handoff_ns: handoff_ns(ops),
        lookups,
    })
}

/// The section as Markdown.
pub fn render(s: &Scaling) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n## Registration scaling: start + cancel of a 1 s sleep per second, measured on 1 and 2 workers, modelled beyond\n"
    );
    let _ = writeln!(
        out,
        "| workers | tokio::time::sleep | callwheel_async::sleep | callwheel / tokio |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---:|");
    for &(w, t, c) in &s.measured {
        let _ = writeln!(
            out,
            "| {w} | {:.2} M/s | {:.2} M/s | {:.2} |",
            t / 1e6,
            c / 1e6,
            c / t.max(1e-9)
        );
    }
    let lookups: Vec<String> = s
        .lookups
        .iter()
        .map(|(w, r)| format!("{:.1} M/s from {w}", r / 1e6))
        .collect();
    let _ = writeln!(
        out,
        "\nModel inputs, measured: a start + stop on a shared wheel holds its lock {:.1} ns; one acquisition of a mutex two cores take in turn costs {:.1} ns; tokio's context lookup alone runs {}.\n",
        s.critical_ns,
        s.handoff_ns,
        lookups.join(", ")
    );
    let _ = writeln!(
        out,
        "| workers | per-worker wheels (model) | per-worker wheels, the handle looked up at every registration (model) | one shared lock (model) |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---:|");
    for n in MODEL_WORKERS {
        let _ = writeln!(
            out,
            "| {n} | {:.1} M/s | {:.1} M/s | {:.1} M/s |",
            s.per_worker(n) / 1e6,
            s.per_worker_with_lookup(n) / 1e6,
            s.shared_lock(n) / 1e6
        );
    }
    out
}
