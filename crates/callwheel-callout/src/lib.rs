//! The BSD kernel's callout interfaces on any callwheel timer scheme.
//!
//! Costello & Varghese rebuilt the 4.4BSD callout facility on a hashed timing wheel and kept its
//! interfaces; FreeBSD's calloutng added fixed-point time and precision. This crate provides
//! those interfaces over any [`Backing`] scheme, so the comparison the paper's Table I makes is
//! literally `Callouts<DifferentialList>` against `Callouts<HashedWheel>`:
//!
//! | call | what it does | cost on a hashed wheel |
//! |---|---|---|
//! | [`Callouts::hardclock`] | `ticks += 1`; if nothing is due, `softticks` follows (fast path) | O(1) |
//! | [`Callouts::softclock`] | catches up, at most `MAX_SOFTCLOCK_STEPS` steps at a stretch | O(1) per callout |
//! | [`Callouts::timeout`] / [`Callouts::untimeout`] | by (function, argument), through a chained hash (on the old `calltodo`: `untimeout` walks the list from its head, as 4.4BSD's did) | O(1) expected |
//! | [`Callouts::setcallout`] / [`Callouts::unsetcallout`] | by [`Handle`] (index + generation + the table's identity) | O(1) |
//! | `callout_init`, `callout_reset`, [`Callouts::callout_reset_sbt_on`], `callout_stop`, `callout_drain`, `callout_pending`, `callout_active`, `callout_deactivate` | FreeBSD's `struct callout` | O(1) |
//! | [`Callouts::callout_async_drain`] | stop without waiting; a drain call after a running handler returns | O(1) |
//! | [`SharedCallouts`]: `callout_reset_sbt_on(.., cpu, ..)`, `softclock(cpu, ..)` | one queue per CPU (one CPU: a single table) behind locks; moving a running callout waits for its handler | O(1) (a move: two queues) |
//!
//! The records come from a pool of `calloutsize` entries reserved up front ([`Config`]), which
//! grows on demand or, when fixed, makes the call fail with [`Error::PoolExhausted`]. Growth
//! that the allocator refuses is [`Error::NoMemory`], never an abort. A handle is the core's
//! [`Handle`]: it carries the identity of the table that issued it, so another table's
//! handle is [`Error::StaleHandle`] and changes nothing.
//!
//! [`Callouts`] is one queue for one thread (handlers get `&mut` to the table).
//! [`SharedCallouts`] is the table for threads, and its CPU count is a parameter: one queue
//! per CPU behind its own lock, each processed on its own (FreeBSD's per-CPU callwheels,
//! `callout_reset_sbt_on`'s `cpu` choosing the queue), handlers run with the lock released,
//! `callout_drain` waits for a handler running elsewhere, and a move of a callout whose
//! handler runs is deferred until the handler returns. One CPU
//! ([`SharedCallouts::single`]) is the single table of 4.4BSD and of Costello & Varghese.
//! `callout_async_drain` ([`AsyncDrain`]) stops a callout without waiting and hands a drain
//! call to the runner after a running handler returns.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod backing;
mod callouts;
mod cpu_table;
mod error;
pub mod flags;
mod freebsd;
mod moves;
mod pool;
mod shared;

pub use backing::Backing;
pub use callouts::{Callouts, Config, Stats, MAX_SOFTCLOCK_STEPS};
/// The handles `setcallout` and `callout_init` return: the core's handle, which names a record,
/// its generation and the table that issued it.
pub use callwheel::Handle;
pub use error::Error;
pub use freebsd::AsyncDrain;
pub use pool::MAX_CALLOUTSIZE;
pub use shared::SharedCallouts;
