//! The timeout churn: tasks looping `timeout(1 s, f).await`, f ready at once (variant A) or
//! pending once (variant B), on each timer that runs on each executor, and with no timer at
//! all (the executor's floor).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::smol_pool::SmolPool;

/// The executors the churn runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Executor {
    /// tokio's multi-thread runtime with 2 workers.
    Tokio,
    /// smol's executor (async-executor) run by 2 threads, with async-io's reactor.
    Smol,
}

impl Executor {
    /// The name in tables and figures.
    pub fn name(self) -> &'static str {
        match self {
            Executor::Tokio => "tokio (2 workers)",
            Executor::Smol => "smol (2 threads)",
        }
    }
}

/// The timers compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// No timer: `f` awaited alone, the executor's floor for the loop.
    None,
    /// tokio's timer.
    Tokio,
    /// pingora-timeout's `fast_timeout` (Cloudflare's per-thread wheels for tokio).
    Pingora,
    /// async-io's `Timer`.
    AsyncIo,
    /// callwheel-async.
    Callwheel,
}

impl Timer {
    /// The name in tables and figures.
    pub fn name(self) -> &'static str {
        match self {
            Timer::None => "no timer (the floor)",
            Timer::Tokio => "tokio::time::timeout",
            Timer::Pingora => "pingora fast_timeout",
            Timer::AsyncIo => "async-io Timer (raced)",
            Timer::Callwheel => "callwheel_async::timeout",
        }
    }
}

/// What the churn measures: each executor with the timers that run on it (pingora-timeout and
/// tokio's timer need a tokio runtime; async-io's runs anywhere).
pub(super) const CASES: [(Executor, Timer); 8] = [
    (Executor::Tokio, Timer::None),
    (Executor::Tokio, Timer::Tokio),
    (Executor::Tokio, Timer::Pingora),
    (Executor::Tokio, Timer::AsyncIo),
    (Executor::Tokio, Timer::Callwheel),
    (Executor::Smol, Timer::None),
    (Executor::Smol, Timer::AsyncIo),
    (Executor::Smol, Timer::Callwheel),
];

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
        Timer::None => {
            f.await;
            true
        }
        Timer::Tokio => tokio::time::timeout(LONG, f).await.is_ok(),
        Timer::Pingora => pingora_timeout::fast_timeout::fast_timeout(LONG, f)
            .await
            .is_ok(),
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
#[derive(Clone, Debug, PartialEq)]
pub struct ChurnCell {
    /// The executor.
    pub executor: Executor,
    /// `A` (ready at once) or `B` (pending once).
    pub variant: char,
    /// Tasks.
    pub tasks: u64,
    /// The timer.
    pub timer: Timer,
    /// Timeouts per second.
    pub ops_per_sec: f64,
}

/// The loop of one task: `per_task` timeouts of `timer` around `f`; how many `f` won.
async fn task_loop(timer: Timer, variant: char, per_task: u64) -> u64 {
    let mut n = 0;
    for _ in 0..per_task {
        let ok = if variant == 'A' {
            one_timeout(timer, std::future::ready(())).await
        } else {
            one_timeout(timer, YieldOnce(false)).await
        };
        n += u64::from(ok);
    }
    n
}

/// Timeouts per second of `timer` around variant `variant`'s future, `tasks` tasks sharing
/// `ops` timeouts, on tokio's `runtime` or on smol's `pool`.
pub(super) fn churn(
    on: (&tokio::runtime::Runtime, &SmolPool),
    executor: Executor,
    timer: Timer,
    variant: char,
    tasks: u64,
    ops: u64,
) -> f64 {
    let per_task = ops.div_ceil(tasks);
    let start = Instant::now();
    let won: u64 = match executor {
        Executor::Tokio => on.0.block_on(async {
            let handles: Vec<_> = (0..tasks)
                .map(|_| tokio::spawn(task_loop(timer, variant, per_task)))
                .collect();
            let mut won = 0;
            for h in handles {
                won += h.await.unwrap_or(0);
            }
            won
        }),
        Executor::Smol => {
            // Each task reports its count on a channel this thread blocks on: it takes no part
            // in the executor or in async-io's reactor.
            let (tx, rx) = std::sync::mpsc::channel();
            for _ in 0..tasks {
                let tx = tx.clone();
                on.1.executor()
                    .spawn(async move {
                        let _ = tx.send(task_loop(timer, variant, per_task).await);
                    })
                    .detach();
            }
            drop(tx);
            rx.iter().sum()
        }
    };
    let elapsed = start.elapsed().as_secs_f64();
    won as f64 / elapsed.max(1e-9)
}
