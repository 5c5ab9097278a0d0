//! smol's executor run by threads of its own until dropped: how the async experiments run
//! tasks on smol (async-executor, with async-io's reactor driven by the runners'
//! `block_on`, as `smol::block_on(ex.run(…))` does).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread::JoinHandle;

use async_executor::Executor;

/// An executor and the threads running it.
pub struct SmolPool {
    ex: Arc<Executor<'static>>,
    stop: Arc<Latch>,
    threads: Vec<JoinHandle<()>>,
}

impl SmolPool {
    /// An executor run by `threads` threads; `setup` runs first on each (its timer slack, for
    /// example).
    ///
    /// # Errors
    ///
    /// When a thread cannot be started.
    pub fn new(threads: usize, setup: fn()) -> std::io::Result<SmolPool> {
        let mut pool = SmolPool {
            ex: Arc::new(Executor::new()),
            stop: Arc::new(Latch::default()),
            threads: Vec::with_capacity(threads),
        };
        for i in 0..threads {
            let ex = Arc::clone(&pool.ex);
            let stop = Arc::clone(&pool.stop);
            let runner = std::thread::Builder::new()
                .name(format!("smol-{i}"))
                .spawn(move || {
                    setup();
                    async_io::block_on(ex.run(Wait(&stop)));
                })?;
            pool.threads.push(runner);
        }
        Ok(pool)
    }

    /// The executor, to spawn on.
    pub fn executor(&self) -> &Arc<Executor<'static>> {
        &self.ex
    }
}

impl Drop for SmolPool {
    fn drop(&mut self) {
        self.stop.open();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A one-way gate the runners wait on: no timer of its own, so nothing but the measured
/// timers wakes async-io's reactor.
#[derive(Default)]
struct Latch {
    open: AtomicBool,
    wakers: Mutex<Vec<Waker>>,
}

impl Latch {
    fn open(&self) {
        self.open.store(true, Ordering::Release);
        let wakers = std::mem::take(&mut *self.wakers.lock().unwrap_or_else(|p| p.into_inner()));
        for w in wakers {
            w.wake();
        }
    }
}

/// A runner's wait for the latch.
struct Wait<'a>(&'a Latch);

impl Future for Wait<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.open.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        let mut wakers = self.0.wakers.lock().unwrap_or_else(|p| p.into_inner());
        // A runner polls its wait at every wake-up with the same waker: keep one per runner.
        if !wakers.iter().any(|w| w.will_wake(cx.waker())) {
            wakers.push(cx.waker().clone());
        }
        drop(wakers);
        // Opened between the check and the registration: do not sleep through it.
        if self.0.open.load(Ordering::Acquire) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}
