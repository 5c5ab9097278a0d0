//! callwheel-schemes: every timer scheme of Varghese & Lauck, behind the core's traits.
//!
//! Varghese & Lauck (section 2) reduce any timer facility to four routines:
//!
//! | paper                 | here                                   |
//! |-----------------------|----------------------------------------|
//! | `STARTTIMER`          | [`Timers::start`](callwheel::Timers::start)                      |
//! | `STOPTIMER`           | [`Timers::stop`](callwheel::Timers::stop)                       |
//! | `PERTICKBOOKKEEPING`  | [`Scheme::advance`](callwheel::Scheme::advance) (moving the clock) |
//! | `EXPIRYPROCESSING`    | the `on_expire` callback of `advance`  |
//!
//! Every structure in this crate implements the same two traits of the `callwheel` core, so the conformance suite, the
//! benchmarks and the callout layer run unchanged on any of them:
//!
//! | scheme | module | start | stop | per tick | exact |
//! |---|---|---|---|---|---|
//! | 1 straightforward | [`straightforward`] | O(1) | O(1) | O(n) | yes |
//! | 2 ordered list | [`ordered_list`] | O(n) | O(1) | O(1) | yes |
//! | 2 BSD `calltodo` | [`differential_list`] | O(n) | O(1) | O(1)+overdue | yes |
//! | 3 binary heap | [`binary_heap`] | O(log n) | O(log n) | O(1) | yes |
//! | 3 balanced tree | [`balanced_tree`] | O(log n) | O(log n) | O(1) | yes |
//! | 4 basic wheel | [`basic_wheel`] | O(1) | O(1) | O(1) | yes |
//! | 5 hashed, sorted | [`hashed_wheel_sorted`] | O(1) avg | O(1) | O(1) | yes |
//! | 6 hashed, unsorted | [`hashed_wheel`] | O(1) | O(1) | O(n/size) avg | yes |
//! | 7 hierarchical | [`hierarchical_wheel`] | O(levels) | O(1) | O(1) amortized | by mode |
//! | Brown's calendar queue | [`calendar_queue`] | O(1) avg | O(1) avg | O(1) avg | yes |
//! | Linux's wheel (4.8 on) | [`linux_wheel`] | O(1) | O(1) | O(levels) per jump, no cascades | up to one bucket late |
//! | simulation wheel (TEGAS-2) | [`simulation_wheel`] | O(1) | O(1) | O(1), O(overflow) per wrap | yes |
//!
//!
//! The production facility, `callwheel::Wheel`, is not one of them: it lives in the core and
//! runs the same conformance suite (this crate's `tests/schemes.rs`). Time, the cursor, the
//! overdue queue and budgets work as the core's documentation describes; every scheme here
//! shares one implementation of them (`clock.rs`), and implements [`Timers::reset`](callwheel::Timers::reset) as a stop and a start that keep the timer's slot and handle.
//!
//! ```
//! use callwheel::{Budget, Scheme, Timers};
//! use callwheel_schemes::hashed_wheel::HashedWheel;
//!
//! // Scheme 6, the NetBSD callwheel, with 256 buckets.
//! let mut wheel = HashedWheel::new(8)?;
//! let retransmit = wheel.start(200, "retransmit segment 7")?;
//! wheel.start(30, "delayed ack")?;
//! assert_eq!(wheel.stop(retransmit), Some("retransmit segment 7"));
//! let mut fired = Vec::new();
//! let _ = wheel.advance(100, Budget::UNLIMITED, |_, e| fired.push(e.value));
//! assert_eq!(fired, ["delayed ack"]);
//! # Ok::<(), callwheel::Error>(())
//! ```
#![no_std]
#![deny(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

mod arena;
pub mod balanced_tree;
pub mod basic_wheel;
pub mod binary_heap;
mod busy;
pub mod calendar_queue;
mod clock;
pub mod differential_list;
mod hashed;
pub mod hashed_wheel;
pub mod hashed_wheel_sorted;
pub mod hierarchical_wheel;
pub mod linux_wheel;
pub mod ordered_list;
pub mod simulation_wheel;
pub mod straightforward;
