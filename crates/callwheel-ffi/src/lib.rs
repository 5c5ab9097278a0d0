//! callwheel's C library: timers for C programs, on callwheel's production wheel.
//!
//! - The caller-driven wheel (cw_wheel_*): timers in nanoseconds on your own clock, driven by
//!   your event loop, with no thread, no lock and no global state (wahern/timeout's and
//!   libuv's use). Start here.
//! - Timer sets (cw_timerset_*, cw_timer_*): many real-time timers owned by one set, reaped
//!   through an eventfd, a callback or a signal; with the setitimer-shaped ITIMER_MULTIREAL
//!   surface of Costello and Varghese.
//! - Sleeping with precision (cw_sleep_sbt, cw_cv_*): calloutng's pause_sbt and
//!   cv_timedwait_sbt.
//! - Callout tables (cw_callouts, of one CPU or one queue per CPU): the BSD and FreeBSD
//!   kernels' callout interfaces, for code ported from a kernel or reproducing its behaviour.
//!
//! Conventions, for every interface:
//!
//! - Every function returns int: 0, or a non-negative result (1/0 for a yes/no answer, a
//!   count), on success; a negative CW_E* code on failure, and then nothing changed (the
//!   exceptions are documented where they are: cw_hardclock's clock still moves).
//!   cw_strerror describes a code; cw_wheel_strerror, cw_timerset_strerror,
//!   cw_sleep_strerror and cw_callout_strerror describe it in the words of one interface.
//! - Pointer arguments are checked for NULL (CW_EINVAL), and so are function pointers. Any
//!   other pointer must be valid: an object from its _new function not yet freed,
//!   out-pointers to writable, aligned storage.
//! - Handles (cw_handle, two uint64_t: id and owner) name one timer or callout, its
//!   generation and the object that issued it: a handle kept after its timer fired or was
//!   deleted, or given to another object, gets CW_ESTALE and changes nothing. Copy them by
//!   value; their fields are opaque numbers (compare both to tell two handles apart).
//! - An object that needs memory the allocator refuses returns CW_ENOMEM; everything set
//!   before stays pending.
//! - No Rust panic crosses this boundary: should one happen inside the library, the call
//!   returns CW_EPANIC. A callback must return normally: a C++ exception or a longjmp out of
//!   a callback crosses Rust frames, which is undefined behaviour.
//! - CW_VERSION_MAJOR, CW_VERSION_MINOR and CW_VERSION_PATCH are the header's version;
//!   cw_version() (CW_VERSION's packing) and cw_version_string() are the library's.
//!
//! The caller-driven wheel (cw_wheel): callwheel's production wheel in nanoseconds on the
//! caller's clock; one thread at a time per wheel, safe across fork. cw_wheel_new (growing,
//! or a fixed capacity) and cw_wheel_reserve (exact room); cw_wheel_add / cw_wheel_add_in
//! (absolute or relative deadline, a tolerance, a uint64_t value), cw_wheel_add_periodic,
//! cw_wheel_del, cw_wheel_reset / cw_wheel_reset_in, cw_wheel_pending; cw_wheel_update(w, now)
//! or cw_wheel_step(w, delta), then cw_wheel_get (one expired timer), cw_wheel_get_many (a
//! batch) or cw_wheel_expire (a callback per timer), or cw_wheel_advance (the update and a
//! batch in one call); cw_wheel_expired (is one due and not pulled?); cw_wheel_next_wakeup
//! (absolute) and cw_wheel_timeout (relative): the earliest window end, to sleep until;
//! cw_wheel_period / cw_wheel_set_period (a periodic timer's period); cw_wheel_next_pending
//! or CW_WHEEL_FOREACH (every pending timer); cw_wheel_counts; cw_wheel_check (the
//! invariants).
//!
//! ```c
//! cw_wheel *w;
//! cw_wheel_new(0, now_ns(), &w);
//! cw_handle h;
//! cw_wheel_add_in(w, 250000000, 5000000, (uint64_t)(uintptr_t)conn, &h);  // 250 ms, 5 ms tolerance
//! for (;;) {
//!     uint64_t ns;
//!     int ms = cw_wheel_timeout(w, &ns) == 1 ? (int)((ns + 999999) / 1000000) : -1;
//!     int n = epoll_wait(ep, events, 64, ms);
//!     handle(events, n);
//!     cw_wheel_update(w, now_ns());
//!     cw_expiry e;
//!     while (cw_wheel_get(w, &e) == 1)
//!         expire((struct conn *)(uintptr_t)e.value);
//! }
//! ```
//!
//! Timer sets (Costello and Varghese's "multiple user-level timers", ITIMER_MULTIREAL): a
//! cw_timerset owns many real-time timers, each with a set-chosen 64-bit handle and a
//! caller-chosen 64-bit label. An expired timer joins the set's expired queue and still exists
//! there until it is reaped (its handle and label popped: a one-shot timer is destroyed, a
//! periodic one runs again from the expiry it was reaped for), reset or cancelled. The set's
//! eventfd is readable exactly while the queue is non-empty. Two layers:
//!
//! - Clean names, times in uint64_t nanoseconds: cw_timerset_new / cw_timerset_free,
//!   cw_timer_create, cw_timer_reset, cw_timer_cancel, cw_timer_get, cw_timer_reap (1, or 0
//!   when the queue is empty), cw_timer_set_missed, cw_timer_overruns, cw_timerset_fd,
//!   cw_timerset_wait, cw_timerset_set_callback, cw_timerset_set_signal, cw_timerset_counts.
//!   CW_EINVAL for NULL, bad arguments and any handle that names none of the set's timers
//!   (another set's, a destroyed timer's, a made-up number: nothing changes); CW_ENOSPC past
//!   the set's quota.
//! - The paper's exact surface: cw_setitimer / cw_getitimer with CW_ITIMER_MULTIREAL and the
//!   libc struct itimerval (other `which` values go to libc), on a process-wide set
//!   (cw_multireal_set, cw_multireal_fd, cw_multireal_signal), or on any set with the _on
//!   variants. These return 0, or -1 with errno set: EINVAL for a bad handle or argument (a
//!   NULL ovalue included), EAGAIN for an empty queue (reap) or a full quota (create). A
//!   handle or label travels in a struct timeval as { (time_t)bits, 0 } (64-bit time_t), never
//!   {0, 0} nor {-1, -1}.
//!
//! Every set made by cw_timerset_new, and the process-wide set, runs on one process-wide
//! runtime on CLOCK_MONOTONIC, started by the first call that needs one: one driver thread
//! (named callwheel-rt-driver-0), which finds expiries and runs set callbacks, and one idle
//! worker. It lives until the process exits. A child forked since has a runtime of its own,
//! started by its first call that needs one, and a process-wide set of its own (setitimer's
//! timers are not inherited either): the sets made before the fork are copies there whose
//! calls that would arm, reap or wait fail with CW_ESHUTDOWN (or reap nothing, or return at
//! once), leaving the parent's sets, descriptors included, as they are.
//!
//! ```c
//! cw_timerset *set;
//! cw_timerset_new(0, CW_MISSED_BURST, &set);
//! uint64_t poll_h, h, label;
//! cw_timer_create(set, 10000000, 10000000, 7, &poll_h);   // every 10 ms, label 7
//! struct pollfd p = { .fd = cw_timerset_fd(set), .events = POLLIN };
//! while (poll(&p, 1, -1) > 0)
//!     while (cw_timer_reap(set, &h, &label) == 1)
//!         handle(label);
//! ```
//!
//! Sleeping with precision (calloutng's pause_sbt and cv_timedwait_sbt), on the same
//! process-wide runtime: cw_sleep_sbt(sbt, precision, flags) blocks the calling thread until
//! sbt has passed (relative, or CLOCK_MONOTONIC with CW_C_ABSOLUTE), never earlier and up to
//! the precision later (an absolute precision, or CW_C_PREL(n)), so the wake-up is shared with
//! every timer whose window overlaps. cw_cv (cw_cv_new, cw_cv_free, cw_cv_signal,
//! cw_cv_broadcast, cw_cv_wait) is a condition variable for a pthread_mutex_t whose
//! cw_cv_timedwait_sbt(cv, m, sbt, precision, flags) times out the same way (CW_ETIMEDOUT).
//!
//! ```c
//! cw_sleep_sbt(10 * CW_SBT_1MS, 0, CW_C_PREL(4));   // 10 ms, up to 1/16 later
//! pthread_mutex_lock(&m);
//! while (!ready && cw_cv_timedwait_sbt(cv, &m, CW_SBT_1S, CW_SBT_1MS, 0) == 0)
//!     ;
//! pthread_mutex_unlock(&m);
//! ```
//!
//! Callout tables: the BSD kernel's callout interfaces (timeout/untimeout,
//! setcallout/unsetcallout and FreeBSD's callout_reset_sbt_on family). A table (cw_callouts)
//! has one callout queue per CPU (cw_callouts_new: one CPU, the single table of BSD;
//! cw_callouts_new_percpu: FreeBSD's per-CPU callwheels), each on one of three timer
//! schemes: CW_BACKING_LIST, the old BSD
//! callout (a differential list: O(n) to set a callout, and cw_untimeout searches it from its
//! head, O(n)); CW_BACKING_HASHED, Costello and Varghese's callwheel (Scheme 6, a hashed wheel
//! of 2^bits buckets, bits sized from calloutsize between 8 and 20, and rebuilt with one
//! bucket per pending callout whenever they outnumber the buckets twice); and
//! CW_BACKING_WHEEL, callwheel's production hierarchical wheel, which also uses the precision
//! of callout_reset_sbt_on to coalesce callouts. Every backing keeps one contract:
//!
//! - Time is each CPU's tick, 0 to UINT64_MAX, moved by cw_hardclock (one tick per call) or,
//!   tickless, by cw_callout_process(cw, cpu, now) to any later tick in one step, at a time inside
//!   the window cw_callout_next_event names. Every clock call names its CPU (0 on a table of one),
//!   and only the callouts bound to that CPU run there. A tick, a jump and a softclock step each
//!   cost at most a constant, whatever the tick's value (a nanosecond clock's reading works as a
//!   tick) and however many callouts are pending. A hashed table does O(1) expected work per
//!   callout fired while deadlines lie within one turn of its buckets (2^bits ticks); when the
//!   earliest lies further out, finding it takes a pass over every pending callout, spread over
//!   softclock steps of constant cost, or made at once by cw_callout_next_event, which then costs
//!   O(n) for that call. CW_BACKING_WHEEL answers both in O(1) at any distance.
//! - cw_callout_next_event's first value is the earliest deadline in ticks, never a tick
//!   already passed (the current tick when work is due now); on CW_BACKING_WHEEL, after
//!   callouts were stopped or re-armed it may be earlier than that deadline, never later.
//! - A callout set for n ticks at tick t runs in the first cw_softclock after the interrupt
//!   that reaches tick t + n; n <= 0 counts as 1, as in BSD. Equal expiries run in the order
//!   they were set. An sbt time is rounded up to a tick exactly (the ceiling of
//!   sbt * hz / 2^32); an absolute time already passed runs at the next tick.
//! - A deadline after the last tick (UINT64_MAX) is CW_ERANGE on every call that sets one,
//!   with nothing changed; so is an absolute time already passed at the last tick.
//! - Handlers run on the thread calling cw_softclock (or cw_hardclock, for CW_C_DIRECT_EXEC
//!   callouts) for their CPU, with the table unlocked, so a handler may call any function on
//!   its own table except cw_callouts_free. Several threads may share a table; one at a time
//!   runs a CPU's cw_softclock (another gets CW_EBUSY). func(arg) must be safe to call on
//!   that thread.
//!
//! ```c
//! static void retransmit(void *arg) { printf("retransmit %s\n", (const char *)arg); }
//!
//! cw_callouts *cw;
//! int rc = cw_callouts_new(CW_BACKING_HASHED, 1024, 0, 1000, &cw);
//! if (rc < 0) { fprintf(stderr, "%s\n", cw_callout_strerror(rc)); return 1; }
//! cw_timeout(cw, retransmit, "segment 7", 3);         // by (func, arg)
//! cw_handle keepalive;
//! cw_callout_init(cw, -1, &keepalive);                // FreeBSD's struct callout
//! cw_callout_reset_sbt_on(cw, keepalive, 2 * CW_SBT_1S, 0, retransmit, "keepalive",
//!                         -1, CW_C_PREL(3));
//! for (int i = 0; i < 3000; i++)
//!     if (cw_hardclock(cw, 0) > 0)                     // the clock interrupt
//!         cw_softclock(cw, 0);                         // runs due handlers
//! cw_callout_drain(cw, keepalive);
//! cw_callout_free(cw, keepalive);
//! cw_callouts_free(cw);
//! ```
//!
//! cw_callout_async_drain(cw, h, drain) is FreeBSD's callout_async_drain: it stops a callout
//! without waiting; if its handler is running, drain(arg) is called once, on the handler's
//! thread, right after the handler returns (CW_ASYNC_DRAIN_PENDING), and resets are ignored
//! until then, so drain may free the callout and whatever arg points to.
//!
//! Per-CPU callouts (FreeBSD's per-CPU callwheels): cw_callouts_new_percpu makes a table with
//! one queue per CPU, each with its own lock, processed on its own by whoever drives that CPU
//! (cw_hardclock / cw_softclock, or cw_callout_next_event / cw_callout_process, each for one
//! cpu), under the same contract and through the same calls. A callout is bound to one CPU's
//! queue (cw_callout_init's cpu) and runs only when that CPU is processed;
//! cw_callout_reset_sbt_on(cw, h, sbt, precision, func, arg, cpu, flags) and
//! cw_callout_reset_on arm it on CPU cpu (0 to ncpu - 1; -1 keeps its CPU). Moving a callout
//! whose handler is running is deferred until the handler returns (FreeBSD's deferred
//! migration); cw_callout_cpu says where a callout is. Its handle stays valid across moves.
//! The BSD calls (cw_timeout, cw_setcallout and their cancels) use CPU 0's queue. A CPU
//! outside the table is CW_EINVAL; a handle of another table, a freed or made-up one,
//! CW_ESTALE.
//!
//! ```c
//! cw_callouts *cw;
//! cw_callouts_new_percpu(CW_BACKING_WHEEL, ncpu, 1024, 0, 1000, &cw);
//! cw_handle h;
//! cw_callout_init(cw, 0, &h);
//! cw_callout_reset_sbt_on(cw, h, 10 * CW_SBT_1MS, 0, flush, queue, 3, 0); // CPU 3
//! // on the thread driving CPU 3, once per tick:
//! if (cw_hardclock(cw, 3) > 0)
//!     cw_softclock(cw, 3);
//! ```
//!
//! Linking (after `make install`): the shared library, `cc app.c $(pkg-config --cflags --libs
//! callwheel)`; the static library linked in, with what it needs from the system,
//! `cc app.c $(pkg-config --cflags --libs callwheel-static)`; a program with nothing shared,
//! `cc -static app.c $(pkg-config --static --cflags --libs callwheel)`. The files installed:
//! callwheel.h, libcallwheel.so (with its versioned soname), libcallwheel.a, callwheel.pc and
//! callwheel-static.pc.
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]
// The exported names are C's.
#![allow(non_camel_case_types)]

use core::ffi::{c_char, c_int, c_void};
use std::panic::{self, AssertUnwindSafe};

use callwheel::Handle;

/// The major version of the header: a program can test it at compile time (cw_version()
/// gives the library's at run time).
pub const CW_VERSION_MAJOR: c_int = 0;
/// The minor version of the header. Before 1.0, a new minor version may change the ABI (the
/// shared library's soname carries it).
pub const CW_VERSION_MINOR: c_int = 1;
/// The patch version of the header.
pub const CW_VERSION_PATCH: c_int = 0;
/// The header's version as one number, `MAJOR * 65536 + MINOR * 256 + PATCH`, to compare
/// with cw_version().
pub const CW_VERSION: c_int = CW_VERSION_MAJOR << 16 | CW_VERSION_MINOR << 8 | CW_VERSION_PATCH;

/// A decimal number, at compile time.
const fn decimal(digits: &str) -> c_int {
    let bytes = digits.as_bytes();
    let mut n = 0;
    let mut i = 0;
    while i < bytes.len() {
        n = n * 10 + (bytes[i] - b'0') as c_int;
        i += 1;
    }
    n
}

// The header's literals are the crate's version.
const _: () = {
    assert!(CW_VERSION_MAJOR == decimal(env!("CARGO_PKG_VERSION_MAJOR")));
    assert!(CW_VERSION_MINOR == decimal(env!("CARGO_PKG_VERSION_MINOR")));
    assert!(CW_VERSION_PATCH == decimal(env!("CARGO_PKG_VERSION_PATCH")));
};

/// The version of the library linked, as CW_VERSION packs it: compare with CW_VERSION to
/// detect a program built against another header.
#[no_mangle]
pub extern "C" fn cw_version() -> c_int {
    CW_VERSION
}

/// The version of the library linked, as a static NUL-terminated string ("0.1.0").
#[no_mangle]
pub extern "C" fn cw_version_string() -> *const c_char {
    const TEXT: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    TEXT.as_ptr().cast()
}

/// Names one callout of one table, or one timer of one cw_wheel: what cw_setcallout,
/// cw_callout_init and cw_wheel_add store, and what every function acting on a callout or a
/// wheel's timer takes. Pass it by value; both fields are opaque.
///
/// `id` holds the record's index and generation, `owner` an identity of the table or wheel
/// that issued it (never 0 for an issued handle; a table of several CPUs has one for
/// cw_setcallout's handles and another for cw_callout_init's, which name a callout wherever it
/// moves). A table or wheel accepts a handle only when
/// both name one of its live callouts or timers: a stale handle, another's handle or a
/// made-up one gets CW_ESTALE and changes nothing.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct cw_handle {
    /// The record's index (low 32 bits) and generation (high 32 bits).
    pub id: u64,
    /// An identity of the table or wheel that issued the handle.
    pub owner: u64,
}

impl From<Handle> for cw_handle {
    fn from(h: Handle) -> cw_handle {
        let (id, owner) = h.to_parts();
        cw_handle { id, owner }
    }
}

impl From<cw_handle> for Handle {
    fn from(h: cw_handle) -> Handle {
        Handle::from_parts(h.id, h.owner)
    }
}

/// A callout handler: called once with the argument it was set with.
pub type cw_func = Option<unsafe extern "C" fn(arg: *mut c_void)>;

/// Runs an entry point's body: its `Err` and any panic become the returned code.
fn guard(body: impl FnOnce() -> Result<c_int, c_int>) -> c_int {
    match panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v) | Err(v)) => v,
        Err(_) => CW_EPANIC,
    }
}

/// CW_EINVAL for a NULL out-pointer (checked before anything is changed).
fn need<T>(out: *mut T) -> Result<(), c_int> {
    if out.is_null() {
        Err(CW_EINVAL)
    } else {
        Ok(())
    }
}

/// 1 for `true`, 0 for `false`.
fn flag(b: bool) -> c_int {
    c_int::from(b)
}

// The header lists the items in this order (cbindgen follows the declarations): the codes and
// their texts, the caller-driven wheel, timer sets, sleeping, then the callout tables. One
// declaration per group, so that rustfmt keeps the order.
mod errors;

mod wheel;

mod wheel_pulls;

mod wheel_timers;

mod timerset;

mod timerset_notify;

mod itimer;

mod sleep;

mod callout;

pub use callout::*;
pub use errors::*;
pub use itimer::*;
pub use sleep::*;
pub use timerset::*;
pub use timerset_notify::*;
pub use wheel::*;
pub use wheel_pulls::*;
pub use wheel_timers::*;

#[cfg(test)]
mod itimer_tests;
#[cfg(test)]
mod sleep_tests;
#[cfg(test)]
mod timerset_tests;
#[cfg(test)]
mod wheel_tests;
