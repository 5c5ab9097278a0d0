//! callwheel-rt: a tickless timer runtime on real clocks.
//!
//! **Linux only**: the drivers sleep in `clock_nanosleep(TIMER_ABSTIME)` or on timerfds, wake
//! each other through eventfds, and set their timer slack with `prctl`; other targets fail to
//! compile with a message saying so.
//!
//! The runtime is the half of a timer facility that wakes up (hrtimers' clock bases and
//! next-event programming; calloutng's per-CPU callwheels, coalescing and direct execution),
//! built on the production wheel [`callwheel::wheel::Wheel`], whose ticks are nanoseconds of
//! the chosen [`Clock`].
//!
//! # Shape
//!
//! | piece | what it is | module |
//! |---|---|---|
//! | clock | `CLOCK_MONOTONIC`, `CLOCK_BOOTTIME`, `CLOCK_REALTIME` ([`SystemClock`]) or simulated ([`ManualClock`]); readings that go backwards are clamped and counted | [`clock`], [`manual`] |
//! | shard | one wheel behind a lock; one per CPU by default | `shard` |
//! | driver | one thread per shard: fire what is due, sleep until the wheel's next wake-up (the earliest window end), woken early only by a timer whose window ends before that | `runtime` |
//! | execution | per timer: [`Exec::Direct`] on the driver, [`Exec::Deferred`] on a worker pool | `pool` |
//! | timer | a reusable [`Timer`]: start / reset / periodic / stop / drain / move between shards | [`timer`] |
//! | observability | per-shard counters and a lateness histogram ([`ShardStats`]) | `stats` |
//! | timer set | many labelled user-level timers per owner with an expired queue to reap, on one runtime timer; eventfd, wait and callback notification (`ITIMER_MULTIREAL`, [`TimerSet`]) | [`set`] |
//!
//! There are no periodic wake-ups: a driver with nothing pending sleeps until woken; with
//! timers, it wakes once per coalesced window — firing, at each wake-up, every timer whose
//! window `[deadline, deadline + tolerance]` contains the wake-up time, which is the minimum
//! number of wake-ups (the wheel's greedy stabbing of the windows). A driver holds its shard's
//! lock for at most [`Config::max_expiries_per_lock`] expiries at a time (the papers' bounded
//! interrupt lock-out) and runs no callback under it.
//!
//! # Example
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use std::sync::Arc;
//! use std::time::Duration;
//! use callwheel_rt::{Config, Exec, Runtime, Stop, Tolerance};
//!
//! let rt = Runtime::new(Config {
//!     shards: 1,
//!     tolerance: Tolerance::percent(5),
//!     ..Config::default()
//! })?;
//! let fired = Arc::new(AtomicU64::new(0));
//! let count = Arc::clone(&fired);
//! let t = rt.timer(Exec::Deferred, move |_, _| {
//!     count.fetch_add(1, Ordering::SeqCst);
//! });
//! t.start_after(Duration::from_secs(3600))?;
//! assert_eq!(t.stop(), Stop::Cancelled); // never fires
//! t.start_after(Duration::from_micros(100))?;
//! while fired.load(Ordering::SeqCst) == 0 {
//!     std::thread::yield_now();
//! }
//! assert_eq!(t.drain(), Stop::NotPending);
//! # Ok::<(), callwheel_rt::Error>(())
//! ```
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

// The drivers use Linux's timerfd, eventfd and timer slack: there is no portable driver yet,
// so other targets get a clear message instead of a wall of missing-symbol errors.
#[cfg(not(target_os = "linux"))]
compile_error!(
    "callwheel-rt runs on Linux only (timerfd, eventfd and timer slack drive it); the core \
     crate `callwheel` is portable"
);

pub mod clock;
mod error;
pub mod manual;
mod pool;
mod runtime;
pub mod set;
mod shard;
mod stats;
mod sync;
mod sys;
pub mod timer;
mod tolerance;

#[cfg(all(test, loom))]
mod loom_tests;
#[cfg(all(test, not(loom)))]
mod step_tests;

pub use callwheel::wheel::Missed;
pub use clock::{Clock, ClockId, SystemClock, Waiter, Wake};
pub use error::Error;
pub use hdrhistogram;
pub use manual::ManualClock;
pub use runtime::{
    Config, Runtime, MAX_EXPIRIES_PER_LOCK, MAX_SHARDS, MAX_TOLERANCE_PPM, MAX_WORKERS,
};
pub use set::{
    Reaped, SetStats, TimerHandle, TimerSet, TimerSetConfig, TimerValue, DEFAULT_QUOTA, MAX_QUOTA,
};
pub use stats::ShardStats;
pub use timer::{Exec, Fire, Stop, Timer};
pub use tolerance::Tolerance;
