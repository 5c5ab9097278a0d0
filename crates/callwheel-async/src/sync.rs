//! The synchronisation the driver and its futures share, from `loom` when the crate is
//! model-checked (`--cfg callwheel_loom`) and from `std` otherwise, so that the model runs the same
//! registration, firing and cancellation code as every executor does.

#[cfg(callwheel_loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
#[cfg(callwheel_loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};

#[cfg(not(callwheel_loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(callwheel_loom))]
pub(crate) use std::sync::{Mutex, MutexGuard};
