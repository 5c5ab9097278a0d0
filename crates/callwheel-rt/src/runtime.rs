//! The runtime: the owner that starts and stops the threads (one driver per shard, the worker
//! pool) and makes timers. The state its timers and drivers share is in `shared`, the
//! operations on one timer in `placement`, the driver's loop and step in `driver`, the
//! configuration in `config`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::thread::JoinHandle;

use callwheel::Wheel;

use crate::config::{Builder, Config};
use crate::fire::Fire;
use crate::shared::{Deferred, Shared, Timer};
use crate::stats::ShardStats;
use crate::sync::Ordering;
use crate::timer::Exec;
use crate::timer_core::UNLISTED;
use crate::workers::{self, Workers};
use crate::Error;

/// Drops a caught panic's payload, which is user data and may panic in its own `Drop`: that
/// second payload is leaked rather than dropped, so no unwinding escapes.
pub(crate) fn drop_payload(payload: Box<dyn std::any::Any + Send>) {
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
}

/// A running timer runtime: one driver thread per shard and a pool of workers for deferred
/// callbacks. Dropping it stops the threads (after queued deferred callbacks have run) and
/// cancels every pending timer: from then on its [`Timer`]s are not pending, their `stop` and
/// `drain` report [`Stop::NotPending`](crate::Stop::NotPending) (or
/// [`Stop::Running`](crate::Stop::Running) for a callback still running, when the runtime was
/// dropped from a callback), and every call that can fail returns
/// [`Error::ShutDown`]; its [`TimerSet`](crate::TimerSet)s likewise (see the set's
/// documentation).
///
/// After a `fork`, the child's copy of a runtime has none of its threads: there it arms
/// nothing ([`Error::ShutDown`]), and dropping it lets the copy go without joining threads
/// that do not exist in the child ([`fork_generation`](crate::fork_generation)). Build a
/// runtime in the child.
///
/// ```
/// use std::sync::mpsc;
/// use std::time::Duration;
/// use callwheel_rt::{Exec, Runtime};
///
/// let rt = Runtime::builder().shards(1).build()?;
/// let (tx, rx) = mpsc::channel();
/// let tx = std::sync::Mutex::new(tx);
/// let t = rt.timer(Exec::Direct, move |_timer, fire| {
///     let _ = tx.lock().unwrap().send(fire.lateness());
/// })?;
/// t.start_after(Duration::from_millis(1))?;
/// let lateness = rx.recv_timeout(Duration::from_secs(10))?;
/// println!("fired {lateness:?} late");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Runtime {
    pub(crate) shared: Arc<Shared>,
    pool: Option<Arc<Workers<Deferred>>>,
    threads: Vec<JoinHandle<()>>,
}

impl Runtime {
    /// A [`Builder`] on the default configuration: set the fields, then
    /// [`build`](Builder::build).
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// Builds the runtime and starts its threads.
    ///
    /// # Errors
    ///
    /// [`Error::Config`], naming the field and its range, for a field outside the range
    /// [`Config`] documents (checked before anything is built); [`Error::Io`] when a waiter or
    /// a thread cannot be created; [`Error::Wheel`] with [`callwheel::Error::NoMemory`] when a
    /// driver's buffers (room for `max_expiries_per_lock` expiries, reserved here so that a
    /// driver never allocates for them) are refused.
    pub fn new(config: Config) -> Result<Runtime, Error> {
        let shards = config.validate()?;
        let pool = Arc::new(Workers::default());
        let shared = Shared::new(
            config.clock,
            shards,
            config.max_expiries_per_lock,
            config.tolerance,
            Some(Arc::clone(&pool)),
        )?;
        let mut rt = Runtime {
            shared,
            pool: Some(Arc::clone(&pool)),
            threads: Vec::new(),
        };
        // On an error below, dropping `rt` stops whatever already started.
        let shared = Arc::clone(&rt.shared);
        rt.threads = workers::spawn(&pool, config.workers, move |job| shared.run_deferred(job))?;
        for i in 0..shards {
            let driver = rt
                .shared
                .start_driver(i, config.max_expiries_per_lock, config.spin)?;
            rt.threads.push(driver);
        }
        Ok(rt)
    }

    /// A new timer that runs `callback` (given the timer itself, so it can re-arm or stop
    /// itself, and the firing) as `exec` says. It belongs to the calling thread's shard.
    ///
    /// The timer, its callback included, is one allocation, made fallibly: creating timers
    /// when memory runs out returns an error, never aborts the process.
    ///
    /// # Errors
    ///
    /// [`Error::Wheel`] with [`callwheel::Error::NoMemory`] when the allocation is refused.
    pub fn timer<F>(&self, exec: Exec, callback: F) -> Result<Timer, Error>
    where
        F: Fn(&Timer, &Fire) + Send + Sync + 'static,
    {
        self.timer_on(self.current_shard(), exec, callback)
    }

    /// A new timer belonging to `shard` (see [`Runtime::timer`]).
    ///
    /// # Errors
    ///
    /// [`Error::NoSuchShard`], and as [`Runtime::timer`].
    pub fn timer_on<F>(&self, shard: usize, exec: Exec, callback: F) -> Result<Timer, Error>
    where
        F: Fn(&Timer, &Fire) + Send + Sync + 'static,
    {
        self.shared.check_shard(shard)?;
        Ok(Timer::owned(
            self.shared.new_timer(shard, exec, callback)?,
            Arc::<Shared>::clone(&self.shared),
        ))
    }

    /// The shard of the CPU the calling thread runs on.
    pub fn current_shard(&self) -> usize {
        #[cfg(not(miri))]
        let cpu = crate::sys::current_cpu().unwrap_or(0);
        #[cfg(miri)]
        let cpu = 0;
        cpu % self.shared.shards.len()
    }

    /// The number of shards.
    pub fn shards(&self) -> usize {
        self.shared.shards.len()
    }

    /// The clock's reading in nanoseconds since its epoch: the unit of
    /// [`Deadline::from_clock_ns`](crate::Deadline::from_clock_ns) and of [`Fire`]'s fields
    /// for timers armed with it. Never below an earlier reading, except on a runtime given
    /// the wall clock, whose readings go back when the wall clock is set back (its shards run
    /// on the monotonic clock, and its readings are wall-clock deadlines).
    pub fn now_ns(&self) -> u64 {
        match self.shared.own_base {
            Some(own) if self.shared.clock.base() != Some(own) => self
                .shared
                .clock
                .base_now(own)
                .unwrap_or_else(|| self.shared.now()),
            _ => self.shared.now(),
        }
    }

    /// The shards' clock's reading at `at` ([`Clock::ns_at`](crate::Clock::ns_at)): exact on the
    /// monotonic clock (which a runtime given the wall clock runs on), by distance from now on
    /// the others.
    /// For comparing an `Instant` with [`Fire`]'s fields of a timer armed with one.
    pub fn ns_at(&self, at: std::time::Instant) -> u64 {
        self.shared.clock.ns_at(at)
    }

    /// A snapshot of shard `shard`'s counters and lateness histogram.
    ///
    /// # Errors
    ///
    /// [`Error::NoSuchShard`].
    pub fn shard_stats(&self, shard: usize) -> Result<ShardStats, Error> {
        self.shared.check_shard(shard)?;
        Ok(self.shared.stats(shard))
    }

    /// Snapshots of every shard.
    pub fn stats(&self) -> Vec<ShardStats> {
        (0..self.shards()).map(|i| self.shared.stats(i)).collect()
    }
}

impl Builder {
    /// Checks the configuration and starts the runtime ([`Runtime::new`]).
    ///
    /// # Errors
    ///
    /// As [`Runtime::new`]: [`Error::Config`] naming the field out of range, checked before
    /// anything is built; [`Error::Io`].
    pub fn build(self) -> Result<Runtime, Error> {
        Runtime::new(self.into_config())
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if self.shared.shutdown.forked() {
            // A copy in a forked child: its threads are the parent's. Their handles and the
            // pool are let go of untouched; the shared state goes with its last reference.
            for t in self.threads.drain(..) {
                std::mem::forget(t);
            }
            std::mem::forget(self.pool.take());
            return;
        }
        self.shared.begin_shutdown();
        if let Some(pool) = &self.pool {
            pool.shutdown();
        }
        let me = std::thread::current().id();
        for t in self.threads.drain(..) {
            // Dropped from one of its own callbacks: that thread cannot wait for itself; it
            // leaves its loop on its own once the callback returns (the flag is up).
            if t.thread().id() == me {
                continue;
            }
            // A driver or worker that panicked has nothing left to clean up.
            let _ = t.join();
        }
        // The clock-set watcher, if one was started, leaves its loop when woken after the
        // shutdown flag went up.
        self.shared.clock_sets.stop_watcher();
        // Drop every pending timer: their callbacks may hold timers, which hold the shared
        // state, and would otherwise keep it alive in a cycle. A closed shard takes no new
        // arming, and its timers forget theirs when next asked (they hold the shard's lock
        // then, as the wheel was emptied under it).
        for i in 0..self.shared.shards.len() {
            let old = {
                let mut st = self.shared.lock_shard(i);
                st.closed = true;
                for core in &st.based {
                    core.based_at.store(UNLISTED, Ordering::Relaxed);
                }
                let based = std::mem::take(&mut st.based);
                (std::mem::replace(&mut st.wheel, Wheel::new()), based)
            };
            // Outside the lock: dropping the timers' callbacks runs user code (`Drop`), which
            // may use a timer of this shard, or panic.
            if let Err(payload) = catch_unwind(AssertUnwindSafe(move || drop(old))) {
                drop_payload(payload);
            }
        }
        self.shared.shutdown.tell_listeners();
    }
}
