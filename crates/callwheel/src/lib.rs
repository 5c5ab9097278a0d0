//! callwheel: timer data structures for user space.
#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod scheme;
pub mod time;

pub use scheme::{Budget, Error, Expired, Handle, Progress, Scheme, Timers};
pub use time::Tick;
