//! callwheel-async's [`DelayQueue`] behind the benchmark traits, beside tokio-util's
//! (`peers::DelayQueuePeer`) and on the same terms: 1 tick = 1 ms of a simulated clock that
//! only the benchmark moves (tokio's is its paused clock), and `advance` moves the clock and
//! drains `poll_expired` with a no-op waker until it is pending.
//!
//! The simulated clock is [`BenchClock`], not the crate's `ManualClock`: a `ManualClock` wakes
//! the driver thread at every move (so that, in tests, the driver fires what became due), and
//! that thread's wake-ups, not the queue, would be what W3 measures. Here nothing needs the
//! driver to fire: the queue is polled at every tick, exactly as tokio's is, and a paused tokio
//! clock involves no thread either.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use callwheel::{Budget, Error, Expired, Handle, Meter, Progress, Scheme, Tick, Timers};
use callwheel_async::{Clock, DelayQueue, Driver};
use callwheel_async::{Waiter, Wake};

use crate::workload::TolerantStart;

/// A clock the benchmark moves by hand, whose driver sleeps until a registration wakes it.
#[derive(Clone, Debug, Default)]
pub struct BenchClock(Arc<AtomicU64>);

impl BenchClock {
    fn advance(&self, ns: u64) {
        self.0.fetch_add(ns, Ordering::Relaxed);
    }
}

/// Sleeps until woken; the deadline is ignored (time moves only by the benchmark).
#[derive(Debug, Default)]
struct BenchWaiter {
    woken: Mutex<bool>,
    cv: Condvar,
}

impl Waiter for BenchWaiter {
    fn wait(&self, _until: Option<u64>) -> io::Result<Wake> {
        let mut woken = self.woken.lock().unwrap_or_else(|p| p.into_inner());
        while !*woken {
            woken = self.cv.wait(woken).unwrap_or_else(|p| p.into_inner());
        }
        *woken = false;
        Ok(Wake::Early)
    }

    fn wake(&self) {
        *self.woken.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.cv.notify_one();
    }
}

impl Clock for BenchClock {
    fn simulated(&self) -> bool {
        true
    }

    fn now(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    fn waiter(&self) -> io::Result<Box<dyn Waiter>> {
        Ok(Box::new(BenchWaiter::default()))
    }
}

/// Nanoseconds per tick.
const TICK_NS: u64 = 1_000_000;

/// A [`DelayQueue`] on a [`BenchClock`] driver; values carry their deadline tick.
#[derive(Debug)]
pub struct AsyncQueue {
    queue: DelayQueue<(Tick, u64)>,
    clock: BenchClock,
    now: Tick,
    // Declared last: the queue's sleep is dropped before the driver's last handle.
    _driver: Driver,
}

impl AsyncQueue {
    /// The latest deadline in ticks whose nanoseconds fit the clock's 64 bits.
    pub const MAX_DEADLINE: Tick = u64::MAX / TICK_NS;

    /// An empty queue at tick 0 on a fresh driver.
    pub fn new() -> Result<AsyncQueue, Error> {
        let clock = BenchClock::default();
        let driver = Driver::builder()
            .clock(clock.clone())
            .build()
            .map_err(|_| Error::Config {
                reason: "cannot start an async timer driver",
            })?;
        Ok(AsyncQueue {
            queue: driver.delay_queue(),
            clock,
            now: 0,
            _driver: driver,
        })
    }

    fn delay(&self, tick: Tick) -> Duration {
        Duration::from_nanos(tick.saturating_sub(self.now).saturating_mul(TICK_NS))
    }
}

impl Timers<u64> for AsyncQueue {
    fn start(&mut self, expiry: Tick, value: u64) -> Result<Handle, Error> {
        let delay = self.delay(expiry);
        Ok(self.queue.try_insert((expiry, value), delay)?.into())
    }

    fn stop(&mut self, handle: Handle) -> Option<u64> {
        self.queue.remove(&handle.into()).map(|(_, v)| v)
    }

    fn reset(&mut self, handle: Handle, deadline: Tick, _tolerance: Tick) -> Option<Tick> {
        // The value carries its deadline tick: take it out, and back in with the new one.
        let key = handle.into();
        let (previous, value) = self.queue.remove(&key)?;
        let delay = self.delay(deadline);
        let again = self.queue.try_insert((deadline, value), delay).ok()?;
        debug_assert_ne!(Handle::from(again), handle);
        Some(previous)
    }

    fn deadline(&self, _handle: Handle) -> Option<Tick> {
        // Not needed by any workload; the queue answers in `Instant`s.
        None
    }

    fn now(&self) -> Tick {
        self.now
    }

    fn len(&self) -> usize {
        self.queue.len()
    }

    fn next_expiry(&self) -> Option<Tick> {
        // The queue has no tick-valued query; the workloads that need one (W4, W5) do not run
        // the peers' queues.
        (!self.queue.is_empty()).then_some(self.now)
    }

    fn memory_bytes(&self) -> usize {
        self.queue.memory_bytes()
    }
}

impl Scheme<u64> for AsyncQueue {
    fn advance<F>(&mut self, now: Tick, budget: Budget, mut on_expire: F) -> Progress
    where
        F: FnMut(&mut dyn Timers<u64>, Expired<u64>),
    {
        if now > self.now {
            self.clock.advance((now - self.now).saturating_mul(TICK_NS));
            self.now = now;
        }
        let mut meter = Meter::new(budget);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if !meter.step() {
                return meter.finish(false);
            }
            match self.queue.poll_expired(&mut cx) {
                Poll::Ready(Some(e)) => {
                    let handle = e.key().into();
                    let (deadline, value) = e.into_inner();
                    meter.fired();
                    on_expire(self, Expired::one_shot(handle, deadline, value));
                }
                Poll::Ready(None) | Poll::Pending => return meter.finish(true),
            }
        }
    }

    fn check_invariants(&self) -> Result<(), &'static str> {
        Ok(())
    }
}

impl TolerantStart for AsyncQueue {}
