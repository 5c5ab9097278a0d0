//! What a program holds of a driver: [`Driver`] (clones share one; the last one dropped shuts
//! it down), how one is built ([`Builder`]), the process-wide one, and what it has done
//! ([`DriverStats`]). The shared state and the loops are the parent module's.

use std::io;
use std::sync::Arc;

use callwheel_rt::{Clock, ClockId, ManualClock, PerFork, SystemClock, Tolerance};

use super::{Inner, Link, MAX_SHARDS};
use crate::sync::Ordering;

/// A set of driver threads that wake the futures of this crate (its [`Sleep`](crate::Sleep),
/// [`Timeout`](crate::Timeout), [`Interval`](crate::Interval) and
/// [`DelayQueue`](crate::DelayQueue)), on any executor.
///
/// The free functions ([`sleep`](crate::sleep), …) use the executor's own drivers with the
/// features `tokio` and `async-io` (see the crate's documentation), and otherwise the
/// process-wide driver ([`Driver::global`]), started at first use. Build your own for another clock (a
/// [`ManualClock`] in tests), another default tolerance or another number of shards; clones
/// share it, and when the last clone is dropped its threads end and every future still
/// registered on it completes at once.
#[derive(Debug)]
pub struct Driver {
    inner: Arc<Inner>,
}

impl Clone for Driver {
    fn clone(&self) -> Driver {
        self.inner.handles.fetch_add(1, Ordering::Relaxed);
        Driver {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if self.inner.handles.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.inner.shut_down();
        }
    }
}

/// What a [`Driver`] has done since it started ([`Driver::stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DriverStats {
    /// Wake-ups of the driver's threads at a planned instant: sleeps that ended at the instant
    /// they were planned for, which is what tolerance coalesces. Not counted: a sleep a new
    /// registration ended early (its future's window ended before the plan). Counted, though
    /// it may fire nothing: a sleep planned at a bound made stale by cancellations.
    pub wakeups: u64,
    /// Warm-up wake-ups: the first of two before a long sleep whose aim is an exact deadline
    /// (an exact timer's, or a tolerant one's whose window is narrower than the lead:
    /// [`Lead::warm_up`](callwheel_rt::Lead::warm_up)), not counted in `wakeups`.
    pub warm_ups: u64,
    /// Futures woken because their deadline passed.
    pub fired: u64,
}

/// How a [`Driver`] is built.
#[derive(Debug)]
pub struct Builder {
    clock: Arc<dyn Clock>,
    monotonic: bool,
    shards: usize,
    tolerance: Tolerance,
}

impl Builder {
    /// The clock deadlines are read on: the monotonic clock by default, or a [`ManualClock`]
    /// (whose auto-advance jumps to the next wake-up whenever every driver thread is idle, as
    /// tokio's paused clock does).
    pub fn clock(mut self, clock: impl Clock) -> Builder {
        self.clock = Arc::new(clock);
        self.monotonic = false;
        self
    }

    /// Shards, each a wheel with its own thread (1 to [`MAX_SHARDS`]; default 1). Threads
    /// are spread over the shards; one shard is enough unless many threads register at once.
    pub fn shards(mut self, shards: usize) -> Builder {
        self.shards = shards;
        self
    }

    /// The tolerance of every future that sets none of its own (default: exact). A sleep of
    /// `d` may then end anywhere in `[d, d + tolerance(d)]`, which lets sleeps whose windows
    /// overlap share one wake-up.
    pub fn tolerance(mut self, tolerance: Tolerance) -> Builder {
        self.tolerance = tolerance;
        self
    }

    /// Starts the driver's threads.
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a shard count outside 1 to [`MAX_SHARDS`]; the error of creating a
    /// waiter or a thread.
    pub fn build(self) -> io::Result<Driver> {
        if !(1..=MAX_SHARDS).contains(&self.shards) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a driver needs between 1 and MAX_SHARDS (256) shards",
            ));
        }
        let inner = Arc::new(Inner::new(
            self.clock,
            self.monotonic,
            self.shards,
            self.tolerance,
        )?);
        // From here on, dropping `driver` on an error stops the threads already started.
        let driver = Driver { inner };
        for i in 0..driver.inner.shards.len() {
            let inner = Arc::clone(&driver.inner);
            std::thread::Builder::new()
                .name(format!("callwheel-async-{i}"))
                .spawn(move || super::drive_thread(inner, i))?;
        }
        Ok(driver)
    }
}

impl Driver {
    /// A builder: monotonic clock, one shard, exact timers.
    pub fn builder() -> Builder {
        Builder {
            clock: Arc::new(SystemClock::new(ClockId::Monotonic)),
            monotonic: true,
            shards: 1,
            tolerance: Tolerance::EXACT,
        }
    }

    /// The process-wide driver, started by the first call (one shard per CPU, at most 8, on
    /// the monotonic clock; exact timers). It lives until the process exits.
    ///
    /// In a child forked since it started, whose copy of it has no thread running, the first
    /// call there starts the child's own (with threads of its own: async-io's reactor is the
    /// parent's too after a fork), and every later call there returns that one.
    ///
    /// # Errors
    ///
    /// The error of starting it (a thread or a waiter the system refused); a later call tries
    /// again.
    pub fn global() -> io::Result<&'static Driver> {
        GLOBAL
            .get_or_try_make(Driver::start_global)
            .map(|(driver, _)| driver)
    }

    /// The process-wide driver's start: on async-io's reactor with the `async-io` feature
    /// (not in a child forked since callwheel's first driver, where that reactor's `epoll`
    /// instance is the parent's too), else threads of its own.
    fn start_global() -> io::Result<Driver> {
        #[cfg(feature = "async-io")]
        if callwheel_rt::fork_generation() == 0 {
            let inner = crate::async_io_reactor::AsyncIoDriver::start()?;
            return Ok(Driver { inner });
        }
        Driver::start_threads()
    }

    /// A process-wide driver with threads of its own: one shard per CPU (at most 8), so that
    /// threads registering at once rarely share a lock.
    fn start_threads() -> io::Result<Driver> {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        Driver::builder().shards(cpus.min(8)).build()
    }

    /// A one-shard driver on a [`ManualClock`] starting at 0, for tests: time moves only when
    /// the test moves it. Register the futures (poll them once), then either move the clock
    /// by hand ([`ManualClock::advance`], then [`ManualClock::wait_idle`]`(1)` for the driver
    /// to have fired what is due) or turn on [`ManualClock::set_auto_advance`], which jumps
    /// the clock to the driver's next wake-up whenever it is idle (tokio's `pause`): timers
    /// then fire in order with no real waiting.
    ///
    /// # Errors
    ///
    /// As for [`Builder::build`].
    pub fn manual() -> io::Result<(Driver, ManualClock)> {
        let clock = ManualClock::new(0);
        let driver = Driver::builder().clock(clock.clone()).build()?;
        Ok((driver, clock))
    }

    /// The clock's reading, in nanoseconds.
    pub fn now_ns(&self) -> u64 {
        self.inner.now()
    }

    /// Futures registered and waiting now, over every shard.
    pub fn pending(&self) -> usize {
        self.inner.counts().0
    }

    /// Bytes the shards' wheels hold (slabs at capacity, links, summaries).
    pub fn memory_bytes(&self) -> usize {
        self.inner.counts().1
    }

    /// What the driver has done since it started, over every shard.
    pub fn stats(&self) -> DriverStats {
        self.inner.stats()
    }

    /// The shared state.
    pub(crate) fn inner(&self) -> &Inner {
        &self.inner
    }

    /// How a future refers to this driver.
    pub(crate) fn link(&self) -> Link {
        Link::Own(Arc::clone(&self.inner))
    }

    /// How a future refers to the process-wide driver (none when it cannot be started): the
    /// first one by a plain reference; a forked child's by a counted one, as any other driver
    /// (a future then knows which one it registered on).
    pub(crate) fn global_link() -> Option<Link> {
        let d: &'static Driver = Driver::global().ok()?;
        Some(match GLOBAL.first() {
            Some(first) if std::ptr::eq(first, d) => Link::Global(&d.inner),
            _ => Link::Own(Arc::clone(&d.inner)),
        })
    }

    /// The first process-wide driver, which a future's plain reference names.
    pub(crate) fn first_global() -> Option<&'static Driver> {
        GLOBAL.first()
    }
}

/// The process-wide driver: the first one started, and a forked child's own.
static GLOBAL: PerFork<Driver> = PerFork::new();

impl Inner {
    /// What the driver has done since it started, over every shard (a reactor driver's
    /// too, which no [`Driver`] names).
    pub(crate) fn stats(&self) -> DriverStats {
        self.shards
            .iter()
            .fold(DriverStats::default(), |t, s| DriverStats {
                wakeups: t.wakeups + s.wakeups.load(Ordering::Relaxed),
                warm_ups: t.warm_ups + s.warm_ups.load(Ordering::Relaxed),
                fired: t.fired + s.fired.load(Ordering::Relaxed),
            })
    }
}
