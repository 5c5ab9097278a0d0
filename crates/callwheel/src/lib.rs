//! callwheel: timer data structures for user space — the core.
//!
//! The crate holds the production timing wheel, [`Wheel`], and what every timer structure of
//! the project shares: the timer-module model of Varghese & Lauck as two traits, the handle,
//! error, budget and expiry types, the time types, the missed-period rule of periodic timers,
//! the stabbing optimum that coalesced wake-ups are measured against, generation-checked
//! storage ([`slab::Slab`]) and the state of an interruptible advance ([`advance`]). The scheme family of
//! the papers (Schemes 1 to 7, the BSD `calltodo` list, Brown's calendar queue) lives in the
//! `callwheel-schemes` crate, behind the same traits.
//!
//! | paper                 | here                                   |
//! |-----------------------|----------------------------------------|
//! | `STARTTIMER`          | [`Timers::start`] (and [`Timers::start_with`] for a window) |
//! | `STOPTIMER`           | [`Timers::stop`]                       |
//! | `PERTICKBOOKKEEPING`  | [`Scheme::advance`] (moving the clock) |
//! | `EXPIRYPROCESSING`    | the `on_expire` callback of `advance`  |
//!
//! The crate is `no_std` (with `alloc`), has no dependencies, keeps its `unsafe` code to the
//! production wheel's list links (neighbours read and written without bounds checks, under an
//! invariant the links type keeps) and a cache prefetch hint, never reads a clock and never
//! spawns a thread: who runs the callbacks, and when, is the caller's business.
//!
//! # Time and the cursor
//!
//! A scheme counts time in [`Tick`]s and starts at tick 0. It keeps a *cursor*, the last tick whose
//! timers it has processed (Costello's `softticks`), and a *target*, the latest `now` it was asked
//! to reach (Costello's `ticks`). [`Timers::now`] returns the cursor; outside `advance`, after an
//! advance that completed, the cursor equals the target.
//!
//! A deadline at or before the cursor is *overdue* (for a timer with a window on the production
//! wheel, its firing instant): such a timer is queued in start order and fires in the next
//! *drain* of that queue, before the cursor moves on. Drains run at the start of each `advance`
//! call and after each tick: a timer started between calls fires at the start of the next call
//! (after what remains of a tick a budget interrupted); one a callback starts while a tick is processed fires right after that tick, at
//! the same tick. A drain fires only the timers queued before it began, so a callback that keeps
//! re-arming itself in the past fires once per drain instead of live-locking `advance`; a budget
//! that interrupts a drain resumes it, not a new one.
//!
//! # Budgets
//!
//! `advance` takes a [`Budget`] of steps (Costello's `MAX_SOFTCLOCK_STEPS`). A step is one tick
//! moved over (on the production wheel, one jump over any run of empty ticks) or one timer
//! examined, moved or fired. When the budget runs out, `advance` returns
//! with [`Progress::complete`] false and the exact position saved; the next call resumes there,
//! losing and repeating nothing.
//!
//! # Example
//!
//! ```
//! use callwheel::{Budget, Scheme, Timers, Wheel};
//!
//! let mut wheel = Wheel::new();
//! let retransmit = wheel.start(200, "retransmit segment 7")?;
//! wheel.start(30, "delayed ack")?;
//! assert_eq!(wheel.stop(retransmit), Some("retransmit segment 7"));
//!
//! let mut fired = Vec::new();
//! let progress = wheel.advance(100, Budget::UNLIMITED, |timers, expired| {
//!     fired.push((timers.now(), expired.value));
//! });
//! assert!(progress.complete);
//! assert_eq!(fired, [(30, "delayed ack")]);
//! assert_eq!(wheel.stop(retransmit), None); // stale: already stopped
//! # Ok::<(), callwheel::Error>(())
//! ```
#![no_std]
#![deny(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod advance;
mod handle;
pub mod slab;
mod stabbing;
pub mod time;
mod timers;
mod wheel;

pub use handle::{Handle, Owner};
pub use stabbing::stabbing_optimum;
pub use time::{Sbt, Tick};
pub use timers::{Budget, Error, Expired, Meter, Progress, Scheme, Timers};
pub use wheel::{firing_instant, window_end, Missed, Wheel, WheelStats};
