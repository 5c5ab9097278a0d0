//! Async timers on callwheel's production wheel, for any executor: [`sleep`],
//! [`sleep_until`], [`timeout`], [`timeout_at`], [`interval`], [`interval_at`] and a
//! [`DelayQueue`], with the shapes tokio users know, nanosecond deadlines and per-timer
//! tolerance.
//!
//! ```
//! # futures::executor::block_on(async {
//! use std::time::Duration;
//! use callwheel_async::{sleep, timeout};
//!
//! sleep(Duration::from_micros(50)).await;             // not rounded to a millisecond
//! let slow = sleep(Duration::from_secs(60));
//! assert!(timeout(Duration::from_millis(1), slow).await.is_err());
//! // Many sleeps that may each end up to 1 ms late share the driver's wake-ups.
//! sleep(Duration::from_millis(2)).tolerance(Duration::from_millis(1)).await;
//! # });
//! ```
//!
//! # How it works, and what precision to expect
//!
//! A [`Driver`] is one or more wheels whose values are the wakers of the futures waiting on
//! them. A future registers at its first pending poll (one that completes first — a
//! [`timeout`] whose future is ready — never registers), its waker goes into a slab slot of the
//! wheel (no allocation per sleep once the slab has grown), and dropping it cancels in O(1).
//! The driver wakes at the earliest window end among its timers (`[deadline, deadline +
//! tolerance]`) and wakes every waker whose timer is due: its deadline has passed, or with a
//! tolerance its firing instant, a coarse slot boundary in the window's first eighth
//! ([`callwheel::firing_instant`]: the wheel places it there so that it never cascades). A
//! sleep therefore ends inside its window, plus the kernel's wake-up latency — where tokio's
//! timer rounds every sleep up to the next millisecond. The futures only need `Waker::wake`,
//! so they run on tokio, smol, `futures::executor` or a hand-written loop.
//!
//! Who wakes the driver:
//!
//! - With the cargo feature `tokio`, a timer made by the free functions inside a tokio runtime
//!   registers on a wheel of its thread for that runtime, fired by the runtime itself: a
//!   timerfd in tokio's own I/O driver and a task on the runtime. No thread of callwheel's, no
//!   hand-off, and no lock shared between workers on the registration path. The runtime needs
//!   its I/O driver (`enable_all`, as `#[tokio::main]` does); without it its timers are
//!   served as outside a runtime.
//! - With the feature `async-io`, a timer made outside a tokio runtime registers on a wheel of
//!   the thread it is polled on, fired by async-io's reactor (the thread in smol's or
//!   async-std's `block_on`, or async-io's own), as async-io's `Timer` is; a thread that ends
//!   hands its timers back (they register again where they are polled next).
//! - Otherwise the process-wide driver ([`Driver::global`], started by the first timer) is
//!   threads of its own, with the kernel's timer slack at its minimum, which wake the task's
//!   thread (one hand-off more).
//!
//! [`Driver::builder`] makes drivers with threads of their own (another clock, shards, default
//! tolerance), and [`Driver::manual`] one on a simulated clock that moves only when a test
//! moves it (by hand, or to the driver's next wake-up whenever it is idle), for tests.
//!
//! # Edges
//!
//! `Duration::MAX` never completes; a deadline already passed (an `Instant` from before the
//! process started included) completes at the first poll; a zero interval period is taken as
//! one nanosecond; polling a completed [`Sleep`] returns `Ready` again. When no driver thread
//! can be started, or the wheel cannot grow, a sleep falls back to polling itself until its
//! deadline (it still completes, at a CPU cost); a sleep on a [`Driver`] that was shut down
//! completes at once (a [`DelayQueue`] on it hands out its values at once, in order), and one
//! made by the free functions whose tokio runtime shut down registers again where it is polled
//! next. In a child forked since a driver was made, that driver is a copy with no thread: the
//! child never touches its wheel's locks or its alarm, its sleeps made by the free functions
//! register again on a process-wide driver of the child's own (threads, not async-io's
//! reactor, whose `epoll` instance the parent shares; the forking thread's too while it is
//! inside the parent's tokio runtime), and one on a [`Driver`] of the caller's completes at once
//! (`docs/async.md` says what stays unsafe: the parent's runtimes themselves). Nothing here
//! panics on any input.
// One block: the registration of a driver's timerfd with tokio's I/O driver (tokio_reactor.rs).
#![deny(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "async-io")]
mod async_io_reactor;
mod delay_queue;
mod driver;
mod due;
mod interval;
#[cfg(all(test, callwheel_loom))]
mod loom_tests;
#[cfg(feature = "test-util")]
mod paused;
// Used by the executors' drivers (the `tokio` and `async-io` features).
#[cfg_attr(not(any(feature = "tokio", feature = "async-io")), allow(dead_code))]
mod reactor;
mod sleep;
mod sync;
mod timeout;
#[cfg(feature = "tokio")]
mod tokio_reactor;

pub use callwheel::Missed;
pub use callwheel_rt::{Clock, ManualClock, Tolerance, Waiter, Wake};
pub use delay_queue::{DelayQueue, Expired, Key};
pub use driver::{Builder, Driver, DriverStats, MAX_SHARDS};
pub use interval::{interval, interval_at, Interval};
#[cfg(feature = "test-util")]
pub use paused::{advance, is_paused, pause, resume};
pub use sleep::{sleep, sleep_until, Sleep};
pub use timeout::{timeout, timeout_at, Elapsed, Timeout};

/// tokio's name for [`Missed`]: what an [`Interval`] does about ticks it was late for.
pub type MissedTickBehavior = Missed;
