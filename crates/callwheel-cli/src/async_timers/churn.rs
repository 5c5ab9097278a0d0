//! The timeout churn: tasks looping `timeout(1 s, f).await`, f ready at once (variant A) or
//! pending once (variant B), on each of the three timers.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// The timers compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// tokio's timer.
    Tokio,
    /// async-io's `Timer`.
    AsyncIo,
    /// callwheel-async.
    Callwheel,
}

impl Timer {
    pub(super) const ALL: [Timer; 3] = [Timer::Tokio, Timer::AsyncIo, Timer::Callwheel];

    /// The name in tables and figures.
    pub fn name(self) -> &'static str {
        match self {
            Timer::Tokio => "tokio::time::timeout",
            Timer::AsyncIo => "async-io Timer (raced)",
            Timer::Callwheel => "callwheel_async::timeout",
        }
    }
}

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
        Timer::Tokio => tokio::time::timeout(LONG, f).await.is_ok(),
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
    /// `A` (ready at once) or `B` (pending once).
    pub variant: char,
    /// Tasks.
    pub tasks: u64,
    /// The timer.
    pub timer: Timer,
    /// Timeouts per second.
    pub ops_per_sec: f64,
}

pub(super) fn churn(
    runtime: &tokio::runtime::Runtime,
    timer: Timer,
    variant: char,
    tasks: u64,
    ops: u64,
) -> f64 {
    let per_task = ops.div_ceil(tasks);
    let won = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    runtime.block_on(async {
        let handles: Vec<_> = (0..tasks)
            .map(|_| {
                let won = Arc::clone(&won);
                tokio::spawn(async move {
                    let mut n = 0;
                    for _ in 0..per_task {
                        let ok = if variant == 'A' {
                            one_timeout(timer, std::future::ready(())).await
                        } else {
                            one_timeout(timer, YieldOnce(false)).await
                        };
                        n += u64::from(ok);
                    }
                    won.fetch_add(n, Ordering::Relaxed);
                })
            })
            .collect();
        for h in handles {
            let _ = h.await;
        }
    });
    let elapsed = start.elapsed().as_secs_f64();
    let done = won.load(Ordering::Relaxed);
    done as f64 / elapsed.max(1e-9)
}
