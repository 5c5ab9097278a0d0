//! callwheel-rt: a tickless timer runtime on real clocks.
//!
//! **Linux only**: the drivers sleep in an absolute `FUTEX_WAIT_BITSET` on `CLOCK_MONOTONIC`
//! or on timerfds, timer sets signal through eventfds, and the drivers set their timer slack
//! with `prctl`; other targets fail to compile with a message saying so.
//!
//! The runtime is the half of a timer facility that wakes up (hrtimers' clock bases and
//! next-event programming; calloutng's per-CPU callwheels, coalescing and direct execution),
//! built on the production wheel [`callwheel::Wheel`], whose ticks are nanoseconds of
//! the chosen [`Clock`].
//!
//! # Shape
//!
//! | piece | what it is | module |
//! |---|---|---|
//! | clock | `CLOCK_MONOTONIC`, `CLOCK_BOOTTIME`, `CLOCK_REALTIME` ([`SystemClock`]) or simulated ([`ManualClock`]); readings that go backwards are clamped and counted | [`clock`], [`manual`] |
//! | shard | one wheel behind a lock; one per CPU by default | `shard` |
//! | driver | one thread per shard: fire what is due, sleep until the wheel's next wake-up (the earliest window end), woken early only by a timer whose window ends before that; the loop is the one every driver runs, `callwheel-async`'s too | `driver`, [`drive_loop`] |
//! | execution | per timer: [`Exec::Direct`] on the driver, [`Exec::Deferred`] on a worker pool | `workers` |
//! | timer | a reusable [`Timer`]: start / reset / periodic / stop / drain / move between shards | [`timer`] |
//! | observability | per-shard counters and a lateness histogram ([`ShardStats`]) | `stats` |
//! | timer set | many labelled user-level timers per owner with an expired queue to reap, on one runtime timer; eventfd, wait and callback notification (`ITIMER_MULTIREAL`, [`TimerSet`]) | [`set`] |
//! | sleeping | [`Runtime::sleep`] and a [`Condvar`] whose timed waits are the runtime's timers, with a precision window: the blocked thread wakes at a coalesced wake-up (calloutng's `pause_sbt`, `cv_timedwait_sbt`) | `sleep`, `condvar`, `sleeper` |
//! | clock bases | monotonic, realtime and boottime deadlines ([`Deadline::on`], [`Deadline::wall`]) on the same shards, re-evaluated when a clock is set; a runtime given the wall clock runs on the monotonic one | `bases`, `clock_sets`, `steady` |
//!
//! There are no periodic wake-ups: a driver with nothing pending sleeps until woken; with
//! timers, it wakes once per coalesced window — at the earliest window end `[deadline,
//! deadline + tolerance]`, firing every timer that is due by then: one whose deadline has
//! passed, or with a tolerance whose firing instant has ([`callwheel::firing_instant`], a
//! coarse slot boundary in the window's first eighth, where the wheel places it so that it
//! never cascades). That is within a few per cent of the minimum number of wake-ups (exactly
//! the minimum without tolerances). A driver holds its shard's
//! lock for at most [`Config::max_expiries_per_lock`] expiries at a time (the papers' bounded
//! interrupt lock-out) and runs no callback under it.
//!
//! # Time: `Instant`, `Duration`, and the clock's own nanoseconds
//!
//! Deadlines are [`Deadline`]s, which every arming call takes as `impl Into<Deadline>`: pass a
//! `std::time::Instant` as is. Periods, tolerances and delays are `Duration`s. An `Instant`
//! becomes the clock's nanoseconds through [`Clock::ns_at`]: exactly on `CLOCK_MONOTONIC`
//! (on Linux, std's `Instant` *is* a `CLOCK_MONOTONIC` reading; the runtime relies on that and
//! its tests check it; a runtime given the wall clock runs on the monotonic clock too), by
//! distance from now on boottime. Raw nanoseconds remain only where a clock other than the
//! monotonic one needs them: [`Deadline::from_clock_ns`] (a reading of the runtime's own
//! clock: a [`ManualClock`]'s simulated time, a wall-clock deadline on a wall-clock runtime),
//! [`Deadline::on`] (a reading of another kernel clock), [`Runtime::now_ns`] and the readings
//! a callback is given ([`Fire`]). Conversions saturate: an `Instant` before the
//! clock's epoch is 0, one beyond its 64-bit range and `Duration::MAX` are `u64::MAX`.
//!
//! # Handles
//!
//! A [`Timer`] is a handle: clones share the timer, and dropping the last one cancels it (as
//! dropping a future does); [`Timer::detach`] keeps a fire-and-forget timer firing instead.
//!
//! # Dependencies in the API
//!
//! One, by intent: [`ShardStats::lateness`] is an `hdrhistogram` histogram, re-exported as
//! [`hdrhistogram`] so that callers use the runtime's version.
//!
//! # Example
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use std::sync::Arc;
//! use std::time::{Duration, Instant};
//! use callwheel_rt::{Exec, Runtime, Stop, Tolerance};
//!
//! let rt = Runtime::builder()
//!     .shards(1)
//!     .tolerance(Tolerance::percent(5))
//!     .build()?;
//! let fired = Arc::new(AtomicU64::new(0));
//! let count = Arc::clone(&fired);
//! let t = rt.timer(Exec::Deferred, move |_, _| {
//!     count.fetch_add(1, Ordering::SeqCst);
//! })?;
//! t.start_at(Instant::now() + Duration::from_secs(3600))?;
//! assert_eq!(t.stop(), Stop::Cancelled); // never fires
//! t.start_after(Duration::from_micros(100))?;
//! while fired.load(Ordering::SeqCst) == 0 {
//!     std::thread::yield_now();
//! }
//! // The callback may still be returning: drain waits for it either way.
//! assert!(matches!(t.drain(), Stop::NotPending | Stop::Running));
//! // Dropping the last handle cancels: this one never fires.
//! let quiet = rt.timer(Exec::Direct, |_, _| unreachable!())?;
//! quiet.start_after(Duration::from_secs(3600))?;
//! drop(quiet);
//! # Ok::<(), callwheel_rt::Error>(())
//! ```
#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

// The drivers use Linux's futex, timerfd, eventfd and timer slack: there is no portable driver yet,
// so other targets get a clear message instead of a wall of missing-symbol errors.
#[cfg(not(target_os = "linux"))]
compile_error!(
    "callwheel-rt runs on Linux only (futex, timerfd, eventfd and timer slack drive it); the \
     core crate `callwheel` is portable"
);

mod alarm;
mod bases;
pub mod clock;
mod clock_sets;
mod condvar;
mod config;
mod counted;
mod deadline;
pub mod drive_loop;
mod driver;
mod error;
mod fire;
mod fork;
mod instant;
mod lead;
pub mod manual;
mod placement;
mod runs;
mod runtime;
pub mod set;
mod shard;
mod shared;
mod shutdown;
mod sleep;
mod sleeper;
mod spin;
mod stats;
mod steady;
mod sync;
mod sys;
pub mod timer;
mod timer_core;
mod tolerance;
mod workers;

#[cfg(all(test, not(callwheel_loom)))]
mod bases_tests;
#[cfg(all(test, not(callwheel_loom)))]
mod drop_tests;
#[cfg(all(test, callwheel_loom))]
mod loom_tests;
#[cfg(all(test, not(callwheel_loom)))]
mod step_tests;
#[cfg(test)]
mod test_clock;

pub use alarm::Alarm;
pub use callwheel::Missed;
pub use clock::{coarse_monotonic, Clock, ClockId, SystemClock, Waiter, Wake};
pub use condvar::Condvar;
pub use config::{
    Builder, Config, MAX_EXPIRIES_PER_LOCK, MAX_SHARDS, MAX_SPIN, MAX_TOLERANCE_PPM, MAX_WORKERS,
};
pub use deadline::Deadline;
pub use error::Error;
pub use fork::{before_fork, fork_generation, is_forking_thread, PerFork};
/// The histogram crate of [`ShardStats::lateness`], re-exported so callers use the same
/// version the runtime records with.
pub use hdrhistogram;
pub use instant::{monotonic_instant, saturating_ns};
pub use lead::{Lead, Margin, Plan, MAX_LEAD, WARM_UP, WARM_UP_AFTER};
pub use manual::ManualClock;
pub use runtime::Runtime;
pub use set::{
    Reaped, SetStats, TimerHandle, TimerSet, TimerSetConfig, TimerValue, DEFAULT_QUOTA, MAX_QUOTA,
};
pub use sleep::WaitLimit;
pub use sleeper::Woken;
pub use stats::ShardStats;
pub use timer::{Exec, Fire, Stop, Timer};
pub use tolerance::Tolerance;

/// Fails to compile unless `T` can be sent to and shared between threads: every handle of the
/// runtime is used from drivers, workers and the caller's threads at once.
const fn assert_send_sync<T: Send + Sync>() {}

// Checked at compile time, so a field that is not `Send + Sync` is caught where it is added.
const _: () = {
    assert_send_sync::<Runtime>();
    assert_send_sync::<Timer>();
    assert_send_sync::<TimerSet>();
    assert_send_sync::<TimerHandle>();
    assert_send_sync::<Error>();
    assert_send_sync::<Builder>();
    assert_send_sync::<Config>();
    assert_send_sync::<Deadline>();
    assert_send_sync::<Condvar>();
};
