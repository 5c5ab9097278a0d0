//! The synchronisation primitives, from `loom` when the crate is model-checked (`--cfg callwheel_loom`)
//! and from `std` otherwise, so the same shard code runs under both.

#[cfg(callwheel_loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
#[cfg(callwheel_loom)]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};
#[cfg(callwheel_loom)]
pub(crate) use loom::thread::{current, park, Thread};

#[cfg(not(callwheel_loom))]
pub(crate) use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};
#[cfg(not(callwheel_loom))]
pub(crate) use std::sync::{Condvar, Mutex, MutexGuard};
#[cfg(not(callwheel_loom))]
pub(crate) use std::thread::{current, park, Thread};

/// Takes a lock, taking over a poisoned one: every structure behind the runtime's locks is
/// complete before user code runs (callbacks run with no lock held), so a panic elsewhere
/// cannot have left it half-updated.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Waits on `cv`, taking over a poisoned lock for the same reason as [`lock`].
pub(crate) fn wait<'a, T>(cv: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    cv.wait(guard)
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
