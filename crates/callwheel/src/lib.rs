//! callwheel: timer data structures for user space.
//!
//! The crate rebuilds the timer structures operating-system kernels use — the timing wheels of
//! Varghese & Lauck, the BSD callout lists and callwheel of Costello & Varghese, the ordered
//! trees of Linux hrtimers — behind one interface, the paper's timer-module model:
//!
//! - [`Timers::start`] (STARTTIMER) arms a timer for a deadline in [`Tick`]s and returns a
//!   [`Handle`];
//! - [`Timers::stop`] (STOPTIMER) cancels it by handle; a stale handle is rejected;
//! - [`Scheme::advance`] (PERTICKBOOKKEEPING and EXPIRYPROCESSING) moves the clock and fires
//!   what is due, within an optional step [`Budget`], resuming exactly where it stopped.
//!
//! [`scheme`] holds every structure of the papers, one module each, with its costs; [`time`]
//! holds the time types ([`Tick`], and calloutng's 32.32 fixed point [`time::Sbt`]).
//!
//! The crate is `no_std` (with `alloc`), has no dependencies and one `unsafe` call (a cache
//! prefetch hint in the production wheel's slot processing), never reads a clock and never spawns a thread: who runs the callbacks, and when, is the caller's business.
//!
//! # Example
//!
//! ```
//! use callwheel::scheme::hashed_wheel::HashedWheel;
//! use callwheel::{Budget, Scheme, Timers};
//!
//! // Scheme 6, the NetBSD callwheel, with 256 buckets.
//! let mut wheel = HashedWheel::new(8)?;
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

pub mod handle;
pub mod scheme;
pub mod time;
pub mod wheel;

pub use handle::{Handle, Owner};
pub use scheme::{Budget, Error, Expired, Progress, Scheme, Timers};
pub use time::Tick;
