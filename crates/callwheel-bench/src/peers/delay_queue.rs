//! tokio-util's `DelayQueue` on a paused tokio clock, 1 tick = 1 ms.

use std::task::{Context, Poll, Waker};
use std::time::Duration;

use callwheel::{Budget, Error, Expired, Handle, Meter, Progress, Scheme, Tick, Timers};
use tokio::runtime::{EnterGuard, Runtime};
use tokio_util::time::delay_queue::{DelayQueue, Key};

use crate::workload::TolerantStart;
use callwheel::slab::Slab;

/// Measures `tokio_util::time::DelayQueue` (a hierarchical timing wheel of 6 × 64 slots at 1 ms
/// over a slab) driven by a **paused** tokio clock, 1 tick = 1 ms.
///
/// Each structure owns a current-thread runtime built with `start_paused(true)`; the runtime is
/// leaked (a few kilobytes per structure, never freed, so that the enter guard can live as long
/// as the structure) and entered for the structure's whole life by an `EnterGuard`, which
/// `DelayQueue::insert` needs (`Instant::now()` on the paused clock, and the runtime's timer
/// driver for the queue's `Sleep`). Building it is untimed like every constructor.
///
/// - `start(expiry)`: `insert(value, (expiry - now) ms)` (0 ms for an expiry at or before the
///   clock), plus a write to a small slot table, because `DelayQueue::Key` has no public
///   conversion to an integer: the handle is our slot's `(generation, index)` and the slot
///   holds the `Key`. The queue normalizes a deadline to whole milliseconds rounding up, and the
///   deadline here is always a whole number of milliseconds after the queue's start, so the
///   timer is due at exactly `expiry`.
/// - `stop`: the slot lookup plus `DelayQueue::try_remove`.
/// - `advance(t)`: `runtime.block_on(tokio::time::advance((t - now) ms))` — the paused clock
///   jumps and the runtime's timer driver fires the queue's `Sleep` — then `poll_expired` with
///   a no-op waker until it returns `Pending` (or `Ready(None)`), firing each timer returned.
///   The queue fires an entry when its deadline is at or before the clock, so `advance(t)` fires
///   exactly the timers with expiry ≤ `t` (W2's expiry count checks it).
/// - Order: timers with equal deadlines fire last started first (the queue's wheel slots are
///   stacks), unlike callwheel's structures and the other two peers. `Expired::deadline` is the
///   queue's own deadline, which for a timer started at or before the clock is the clock at its
///   start. No workload depends on either.
/// - `next_expiry`: `peek()` and `deadline(key)`, converted back to ticks.
/// - `memory_bytes`: 0, printed "n/a" (the slab and the wheel's memory are not observable).
///
/// Why a persistent enter guard rather than `block_on` around every operation: measured on the
/// same machine, release build, the guard cost W1 (N = 1 000) about 275 ns per pair against
/// about 630 with `block_on` around each `insert` / `try_remove`, W2 about 390 ns per step
/// against 820, and W3 about 1 090 ns per timer against 1 410 (`block_on` around each
/// `poll_expired` as well). `advance` still needs one `block_on`, for the clock to move and the
/// runtime's timer driver to fire the queue's `Sleep`.
pub struct DelayQueuePeer {
    queue: DelayQueue<(u32, u64)>,
    slots: Slab<Option<Key>>,
    base: tokio::time::Instant,
    now: Tick,
    runtime: &'static Runtime,
    // Declared last so it is dropped after the queue (fields drop in declaration order).
    _entered: EnterGuard<'static>,
}

impl std::fmt::Debug for DelayQueuePeer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DelayQueuePeer")
            .field("len", &self.queue.len())
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

impl DelayQueuePeer {
    /// The largest deadline the queue accepts: 2^36 - 1 ms after its start.
    pub const MAX_DEADLINE: Tick = (1 << 36) - 1;

    /// An empty queue at tick 0 on a fresh paused runtime.
    pub fn new() -> Result<DelayQueuePeer, Error> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .map_err(|_| Error::Config {
                reason: "cannot build a tokio runtime",
            })?;
        let runtime: &'static Runtime = Box::leak(Box::new(runtime));
        let entered = runtime.enter();
        let base = tokio::time::Instant::now();
        let queue = DelayQueue::new();
        Ok(DelayQueuePeer {
            queue,
            slots: Slab::new(),
            base,
            now: 0,
            runtime,
            _entered: entered,
        })
    }

    fn tick_of(&self, instant: tokio::time::Instant) -> Tick {
        instant.saturating_duration_since(self.base).as_millis() as Tick
    }
}

impl Timers<u64> for DelayQueuePeer {
    fn start(&mut self, expiry: Tick, value: u64) -> Result<Handle, Error> {
        if expiry > Self::MAX_DEADLINE {
            return Err(Error::BeyondRange {
                expiry,
                max: Self::MAX_DEADLINE,
            });
        }
        let index = self.slots.insert(None)?;
        let handle = self.slots.handle(index).ok_or(Error::NoMemory)?;
        let delay = Duration::from_millis(expiry.saturating_sub(self.now));
        let key = self.queue.insert((index, value), delay);
        if let Some(slot) = self.slots.get_mut(index) {
            *slot = Some(key);
        }
        Ok(handle)
    }

    fn stop(&mut self, handle: Handle) -> Option<u64> {
        let index = self.slots.resolve(handle)?;
        let key = (*self.slots.get(index)?)?;
        let expired = self.queue.try_remove(&key)?;
        self.slots.remove(index);
        Some(expired.into_inner().1)
    }

    /// `DelayQueue::reset`, which keeps the key (and so the handle).
    fn reset(&mut self, handle: Handle, deadline: Tick, _tolerance: Tick) -> Option<Tick> {
        if deadline > Self::MAX_DEADLINE {
            return None;
        }
        let key = (*self.slots.get(self.slots.resolve(handle)?)?)?;
        let previous = self.tick_of(self.queue.deadline(&key));
        let delay = Duration::from_millis(deadline.saturating_sub(self.now));
        self.queue.reset(&key, delay);
        Some(previous)
    }

    fn deadline(&self, handle: Handle) -> Option<Tick> {
        let key = (*self.slots.get(self.slots.resolve(handle)?)?)?;
        Some(self.tick_of(self.queue.deadline(&key)))
    }

    fn now(&self) -> Tick {
        self.now
    }

    fn len(&self) -> usize {
        self.queue.len()
    }

    fn next_expiry(&self) -> Option<Tick> {
        let key = self.queue.peek()?;
        Some(self.tick_of(self.queue.deadline(&key)).max(self.now))
    }

    fn memory_bytes(&self) -> usize {
        0
    }
}

impl Scheme<u64> for DelayQueuePeer {
    fn advance<F>(&mut self, now: Tick, budget: Budget, mut on_expire: F) -> Progress
    where
        F: FnMut(&mut dyn Timers<u64>, Expired<u64>),
    {
        if now > self.now {
            let by = Duration::from_millis(now - self.now);
            self.runtime.block_on(tokio::time::advance(by));
            self.now = now;
        }
        let mut meter = Meter::new(budget);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if !meter.step() {
                return meter.finish(false);
            }
            match self.queue.poll_expired(&mut cx) {
                Poll::Ready(Some(expired)) => {
                    let deadline = self.tick_of(expired.deadline());
                    let (index, value) = expired.into_inner();
                    let Some(handle) = self.slots.handle(index) else {
                        continue;
                    };
                    self.slots.remove(index);
                    meter.fired();
                    on_expire(self, Expired::one_shot(handle, deadline, value));
                }
                Poll::Ready(None) | Poll::Pending => break,
            }
        }
        meter.finish(true)
    }

    fn check_invariants(&self) -> Result<(), &'static str> {
        self.slots.check()?;
        if self.slots.len() != self.queue.len() {
            return Err("slot table and queue disagree");
        }
        Ok(())
    }
}

// A peer takes no tolerance.
impl TolerantStart for DelayQueuePeer {}
