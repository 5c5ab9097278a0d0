//! The runtime's configuration, its documented ranges, and the builder that checks them.

use std::sync::Arc;
use std::time::Duration;

use crate::clock::{Clock, ClockId, SystemClock};
use crate::{Error, Tolerance};

/// The most shards a runtime accepts ([`Config::shards`]).
pub const MAX_SHARDS: usize = 1024;

/// The most deferred-callback workers a runtime accepts ([`Config::workers`]): far more
/// threads than any machine has CPUs, and few enough that asking for them is not a mistake
/// found only when the system refuses a thread.
pub const MAX_WORKERS: usize = 1024;

/// The largest K a runtime accepts ([`Config::max_expiries_per_lock`]): the driver buffers
/// a step's expiries, so K bounds both that buffer and how long the shard's lock is held.
pub const MAX_EXPIRIES_PER_LOCK: u64 = 1 << 16;

/// The largest relative tolerance a configuration accepts ([`Tolerance::ppm`]): 100 % of
/// the interval, as [`Tolerance::percent`] caps it.
pub const MAX_TOLERANCE_PPM: u32 = 1_000_000;

/// The longest spin before a wake-up a runtime accepts ([`Config::spin`]): a millisecond,
/// far more than the kernel's wake-up latency it is meant to hide.
pub const MAX_SPIN: Duration = Duration::from_millis(1);

/// How a [`Runtime`](crate::Runtime) is built: [`Runtime::builder`](crate::Runtime::builder) sets each field, [`Runtime::new`](crate::Runtime::new) takes a
/// whole configuration (start from [`Config::default`] or [`Config::with_clock`] and assign
/// fields; new fields may be added, so it cannot be written as a struct literal).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Config {
    /// The time source ([`SystemClock`] on `CLOCK_MONOTONIC` by default).
    pub clock: Arc<dyn Clock>,
    /// Number of shards, each with its own driver thread: `0 ..= MAX_SHARDS`; 0 (the default)
    /// means one per CPU (at most [`MAX_SHARDS`]).
    pub shards: usize,
    /// Worker threads for deferred callbacks: `1 ..= MAX_WORKERS` (default 2).
    pub workers: usize,
    /// K: the most timers a driver fires before releasing its shard's lock:
    /// `1 ..= MAX_EXPIRIES_PER_LOCK` (default 64). The bound on how long a `start` from
    /// another thread can wait.
    pub max_expiries_per_lock: u64,
    /// The default tolerance of timers armed without one (default exact): any absolute part,
    /// a relative part of `0 ..= MAX_TOLERANCE_PPM`.
    pub tolerance: Tolerance,
    /// How long before each planned wake-up a driver stops sleeping and stays awake instead,
    /// stepping its wheel every few microseconds and reading the clock in between:
    /// `0 ..= MAX_SPIN`, default zero (never). A sleeping thread is woken tens of microseconds
    /// late on a busy or virtual machine, and its first step after a long sleep runs on cold
    /// caches (microseconds more); a spinning driver is running, its step warm, when the
    /// deadline comes. The price is a CPU kept busy for up to this long per wake-up
    /// ([`ShardStats::spin_ns`](crate::ShardStats::spin_ns) counts it), and a shard lock taken
    /// briefly at every step of the spin. Where the shards sleep on the monotonic clock (the
    /// default, and a wall-clock runtime) a new timer due sooner ends the wait at once;
    /// elsewhere it is seen at the next step, within 10 µs. A spin that finds the clock has not
    /// reached the deadline after this long (a clock slower than real time) gives up and
    /// sleeps. Timers that come due during a spin fire at the step that finds them due, inside
    /// their windows, rather than held for the planned wake-up (the driver is awake anyway). A
    /// test's clock ([`Clock::simulated`]) never spins.
    pub spin: Duration,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            clock: Arc::new(SystemClock::new(ClockId::Monotonic)),
            shards: 0,
            workers: 2,
            max_expiries_per_lock: 64,
            tolerance: Tolerance::EXACT,
            spin: Duration::ZERO,
        }
    }
}

impl Config {
    /// The default configuration on `clock`.
    pub fn with_clock(clock: impl Clock) -> Config {
        Config {
            clock: Arc::new(clock),
            ..Config::default()
        }
    }

    /// Checks every numeric field against its documented range, before the runtime does any
    /// work; returns the number of shards to build.
    pub(crate) fn validate(&self) -> Result<usize, Error> {
        if self.shards > MAX_SHARDS {
            return Err(Error::Config {
                reason: "shards must be between 0 (one per CPU) and MAX_SHARDS (1024)",
            });
        }
        if !(1..=MAX_WORKERS).contains(&self.workers) {
            return Err(Error::Config {
                reason: "workers must be between 1 and MAX_WORKERS (1024)",
            });
        }
        if !(1..=MAX_EXPIRIES_PER_LOCK).contains(&self.max_expiries_per_lock) {
            return Err(Error::Config {
                reason: "max_expiries_per_lock must be between 1 and MAX_EXPIRIES_PER_LOCK (65536)",
            });
        }
        check_tolerance(self.tolerance)?;
        if self.spin > MAX_SPIN {
            return Err(Error::Config {
                reason: "spin must be between 0 and MAX_SPIN (1 ms)",
            });
        }
        Ok(match self.shards {
            0 => std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(MAX_SHARDS),
            n => n,
        })
    }
}

/// Checks a configured tolerance: its relative part must be at most [`MAX_TOLERANCE_PPM`].
pub(crate) fn check_tolerance(tolerance: Tolerance) -> Result<(), Error> {
    if tolerance.ppm > MAX_TOLERANCE_PPM {
        return Err(Error::Config {
            reason: "tolerance.ppm must be between 0 and MAX_TOLERANCE_PPM (1000000, 100 %)",
        });
    }
    Ok(())
}

/// Builds a [`Runtime`](crate::Runtime) field by field ([`Runtime::builder`](crate::Runtime::builder)); [`Builder::build`] checks every
/// field against its documented range before anything starts.
///
/// ```
/// use callwheel_rt::{ManualClock, Runtime, Tolerance};
///
/// let rt = Runtime::builder()
///     .clock(ManualClock::new(0))
///     .shards(2)
///     .workers(1)
///     .max_expiries_per_lock(32)
///     .tolerance(Tolerance::percent(1))
///     .build()?;
/// assert_eq!(rt.shards(), 2);
/// assert!(Runtime::builder().workers(0).build().is_err());
/// # Ok::<(), callwheel_rt::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct Builder {
    config: Config,
}

impl Builder {
    /// Starts from `config`.
    pub fn from_config(config: Config) -> Builder {
        Builder { config }
    }

    /// The time source ([`Config::clock`]).
    pub fn clock(self, clock: impl Clock) -> Builder {
        self.shared_clock(Arc::new(clock))
    }

    /// The time source, already shared ([`Config::clock`]).
    pub fn shared_clock(mut self, clock: Arc<dyn Clock>) -> Builder {
        self.config.clock = clock;
        self
    }

    /// The number of shards ([`Config::shards`]; 0: one per CPU).
    pub fn shards(mut self, shards: usize) -> Builder {
        self.config.shards = shards;
        self
    }

    /// The deferred-callback workers ([`Config::workers`]).
    pub fn workers(mut self, workers: usize) -> Builder {
        self.config.workers = workers;
        self
    }

    /// The most expiries per hold of a shard's lock ([`Config::max_expiries_per_lock`]).
    pub fn max_expiries_per_lock(mut self, k: u64) -> Builder {
        self.config.max_expiries_per_lock = k;
        self
    }

    /// The default tolerance ([`Config::tolerance`]).
    pub fn tolerance(mut self, tolerance: Tolerance) -> Builder {
        self.config.tolerance = tolerance;
        self
    }

    /// How long a driver spins before each wake-up ([`Config::spin`]; off by default).
    pub fn spin(mut self, spin: Duration) -> Builder {
        self.config.spin = spin;
        self
    }

    /// The configuration built so far.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The configuration, for [`Builder::build`](Builder::build) (kept with the runtime, so
    /// that this module does not depend on it).
    pub(crate) fn into_config(self) -> Config {
        self.config
    }
}
