//! callwheel's C API: the BSD kernel's callout interfaces (timeout/untimeout,
//! setcallout/unsetcallout and FreeBSD's callout_reset_sbt_on family) for C programs.
//!
//! A table (cw_callouts) is one CPU's callout queue on one of three timer schemes:
//! CW_BACKING_LIST, the old BSD callout (a differential list: O(n) to set a callout, and
//! cw_untimeout searches it from its head, O(n));
//! CW_BACKING_HASHED, Costello and Varghese's callwheel (Scheme 6, a hashed wheel of 2^bits
//! buckets, bits sized from calloutsize between 8 and 20, and rebuilt with one bucket per
//! pending callout whenever they outnumber the buckets twice, so a tick costs O(1) however far
//! the pool grows); and CW_BACKING_WHEEL, callwheel's production hierarchical wheel, which
//! also uses the precision of callout_reset_sbt_on to coalesce callouts.
//!
//! Conventions:
//!
//! - Every function returns int: 0, or a non-negative result (1/0 for "was it pending", a
//!   count), on success; a negative CW_E* code on failure. cw_strerror describes a code.
//!   A failed call changes nothing, except that cw_hardclock advances the clock even when it
//!   reports CW_EBUSY.
//! - Pointer arguments are checked for NULL (CW_EINVAL), and so are function pointers. Any
//!   other pointer must be valid: a table from cw_callouts_new not yet freed, out-pointers
//!   to writable, aligned storage.
//! - Time moves by cw_hardclock, one tick per call, or (the tickless mode) by
//!   cw_callout_process(cw, now) to any later tick, at a time inside the window
//!   cw_callout_next_event names. A callout set for n ticks at tick t runs in the first
//!   cw_softclock after the interrupt that reaches tick t + n; n <= 0 counts as 1, as in BSD.
//!   Equal expiries run in the order they were set.
//! - Handlers run on the thread calling cw_softclock (or cw_hardclock, for CW_C_DIRECT_EXEC
//!   callouts) with the table unlocked, so a handler may call any function on its own table
//!   except cw_callouts_free. Several threads may share a table; one runs cw_softclock at a
//!   time (another gets CW_EBUSY). func(arg) must be safe to call on that thread.
//! - Handles (cw_handle, two uint64_t: id and owner) name a callout record, its generation
//!   and the table that issued it: a handle kept after its callout fired or was freed, or
//!   given to another table, gets CW_ESTALE and changes nothing. Copy them by value; their
//!   fields are opaque numbers (compare both to tell two handles apart).
//! - A growing table that needs memory the allocator refuses returns CW_ENOMEM, as a full
//!   fixed pool does; every callout set before stays pending.
//! - No Rust panic crosses this boundary: should one happen inside the library, the call
//!   returns CW_EPANIC. A handler must return normally: a C++ exception or a longjmp out of
//!   a handler crosses Rust frames, which is undefined behaviour.
//!
//! Example:
//!
//! ```c
//! #include <stdio.h>
//! #include "callwheel.h"
//!
//! static void retransmit(void *arg) { printf("retransmit %s\n", (const char *)arg); }
//!
//! int main(void) {
//!     cw_callouts *cw;
//!     int rc = cw_callouts_new(CW_BACKING_HASHED, 1024, 0, 1000, &cw);
//!     if (rc < 0) { fprintf(stderr, "%s\n", cw_strerror(rc)); return 1; }
//!
//!     cw_timeout(cw, retransmit, "segment 7", 3);         // by (func, arg)
//!     cw_handle keepalive;
//!     cw_callout_init(cw, &keepalive);                    // FreeBSD's struct callout
//!     cw_callout_reset_sbt_on(cw, keepalive, 2 * CW_SBT_1S, 0, retransmit, "keepalive",
//!                             -1, CW_C_PREL(3));
//!
//!     for (int i = 0; i < 3000; i++)
//!         if (cw_hardclock(cw) > 0)                        // the clock interrupt
//!             cw_softclock(cw);                            // runs due handlers
//!
//!     cw_callout_drain(cw, keepalive);
//!     cw_callout_free(cw, keepalive);
//!     cw_callouts_free(cw);
//!     return 0;
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
//!   Same conventions as above: CW_EINVAL for NULL, bad arguments and any handle that names
//!   none of the set's timers (another set's, a destroyed timer's, a made-up number: nothing
//!   changes); CW_ENOSPC past the set's quota.
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
//! worker. It lives until the process exits (do not fork and use timer sets in the child).
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
//! The caller-driven wheel (cw_wheel, wahern/timeout's use): callwheel's production wheel
//! in nanoseconds on the caller's clock, with no thread, no lock and no global state (safe
//! across fork; one thread at a time per wheel). cw_wheel_new (growing, or a fixed capacity)
//! and cw_wheel_reserve (exact room), cw_wheel_add / cw_wheel_add_in (absolute or relative
//! deadline, a tolerance, a uint64_t value), cw_wheel_add_periodic, cw_wheel_del,
//! cw_wheel_reset / cw_wheel_reset_in, cw_wheel_pending; cw_wheel_update(w, now) then
//! cw_wheel_get (pull one expired timer), cw_wheel_get_many (pull a batch) or
//! cw_wheel_expire (a callback per timer), or cw_wheel_advance (the update and a batch in one
//! call);
//! cw_wheel_next_wakeup (absolute) and cw_wheel_timeout (relative): the earliest window end,
//! to sleep until; cw_wheel_counts;
//! cw_wheel_check (the invariants). Handles are cw_handle, checked as for callouts.
//!
//! ```c
//! cw_wheel *w;
//! cw_wheel_new(0, now_ns(), &w);
//! cw_handle h;
//! cw_wheel_add_in(w, 250000000, 5000000, (uint64_t)(uintptr_t)conn, &h);  // 250 ms, 5 ms slack
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
//! cw_callout_async_drain(cw, h, drain) is FreeBSD's callout_async_drain: it stops a callout
//! without waiting; if its handler is running, drain(arg) is called once, on the handler's
//! thread, right after the handler returns (CW_ASYNC_DRAIN_PENDING), and resets are ignored
//! until then, so drain may free the callout and whatever arg points to.
//!
//! Per-CPU callouts (cw_percpu, FreeBSD's per-CPU callwheels): cw_percpu_new makes one table
//! per CPU, each with its own lock, processed on its own by whoever drives that CPU
//! (cw_percpu_hardclock / cw_percpu_softclock, or cw_percpu_callout_next_event /
//! cw_percpu_callout_process, each for one cpu). A callout from cw_percpu_callout_init is
//! bound to one CPU's table and runs only when that table is processed;
//! cw_percpu_callout_reset_sbt_on(set, h, sbt, precision, func, arg, cpu, flags) arms it on
//! CPU cpu (0 to ncpu - 1; -1 keeps its CPU). Moving a callout whose handler is running is
//! deferred until the handler returns (FreeBSD's deferred migration); cw_percpu_callout_cpu
//! says where a callout is. Its handle stays valid across moves. A CPU outside the set is
//! CW_EINVAL; a handle of another set or table, a freed or made-up one, CW_ESTALE.
//!
//! ```c
//! cw_percpu *set;
//! cw_percpu_new(CW_BACKING_WHEEL, ncpu, 1024, 0, 1000, &set);
//! cw_handle h;
//! cw_percpu_callout_init(set, 0, &h);
//! cw_percpu_callout_reset_sbt_on(set, h, 10 * CW_SBT_1MS, 0, flush, queue, 3, 0); // CPU 3
//! // on the thread driving CPU 3, once per tick:
//! if (cw_percpu_hardclock(set, 3) > 0)
//!     cw_percpu_softclock(set, 3);
//! ```
//!
//! Linking: the static library libcallwheel_ffi.a needs -lpthread -ldl -lm (glibc); the
//! shared library libcallwheel_ffi.so needs nothing more.
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(clippy::undocumented_unsafe_blocks)]
// The exported names are C's.
#![allow(non_camel_case_types)]

use core::ffi::{c_char, c_int, c_void};
use core::hash::{Hash, Hasher};
use std::panic::{self, AssertUnwindSafe};

use callwheel::time::Sbt;
use callwheel::Wheel;
use callwheel_callout::{flags, AsyncDrain, Callouts, Config, Error, Handle, SharedCallouts};
use callwheel_schemes::differential_list::DifferentialList;
use callwheel_schemes::hashed_wheel::HashedWheel;

/// Backing scheme: the old BSD callout, a differential list (setting a callout is O(n), and
/// cw_untimeout searches the list from its head, O(n), as 4.4BSD's untimeout did).
pub const CW_BACKING_LIST: c_int = 0;
/// Backing scheme: Costello and Varghese's callwheel, Scheme 6 (a hashed wheel of 2^bits
/// unsorted buckets, with bits = ceil(log2(calloutsize)) kept between 8 and 20).
pub const CW_BACKING_HASHED: c_int = 1;
/// Backing scheme: callwheel's production hierarchical wheel (coalesces callouts within the
/// precision given to cw_callout_reset_sbt_on).
pub const CW_BACKING_WHEEL: c_int = 2;

// The codes are written `0 - n` so that the header's #defines are parenthesised:
// `x-CW_EINVAL` must not read as `x--22`.

/// Success.
pub const CW_OK: c_int = 0;
/// Invalid argument: a NULL table, set, out-pointer or function; an unknown backing; unknown
/// flag bits; a cpu other than 0 or -1 for a table, or outside 0 to ncpu - 1 (and -1 where
/// a callout is named) for a per-CPU set; a handle of the wrong kind (a cw_setcallout handle
/// given to a cw_callout_* function or the other way round); hz of 0, a fixed pool of 0
/// records, or an ncpu outside 1 to CW_PERCPU_MAX. Equal to -EINVAL on Linux.
pub const CW_EINVAL: c_int = 0 - 22;
/// Out of callout records: a fixed pool is exhausted (the 1995 kernel panicked here), or a
/// growing table needed memory and the allocator refused it (also when cw_callouts_new
/// cannot reserve calloutsize records). Nothing changed: every callout set before is still
/// pending. Equal to -ENOMEM on Linux.
pub const CW_ENOMEM: c_int = 0 - 12;
/// The handle names no live callout: it already fired (cw_setcallout), was cancelled or
/// freed, or was never issued by this table (another table's handle included). Equal to
/// -ESTALE on Linux.
pub const CW_ESTALE: c_int = 0 - 116;
/// cw_callout_drain or cw_callout_free (or their cw_percpu_ forms) from the callout's own
/// handler: waiting for the handler would never return; or a cw_sleep_sbt or
/// cw_cv_timedwait_sbt on the process-wide runtime's driver thread, which would wait for its
/// own timer. Nothing changed.
/// Equal to -EDEADLK on Linux.
pub const CW_EDEADLK: c_int = 0 - 35;
/// cw_softclock or cw_hardclock while another thread (or the caller, from a handler) is
/// already running handlers of this table (or of this CPU of a per-CPU set); a callout's
/// record is in use by its running handler; or a cw_callout_async_drain already waits for
/// the running handler. Equal to -EBUSY on Linux.
pub const CW_EBUSY: c_int = 0 - 16;
/// The backing scheme refused the deadline (it is beyond the range the scheme can hold).
/// Equal to -ERANGE on Linux.
pub const CW_ERANGE: c_int = 0 - 34;
/// A bug inside callwheel: a Rust panic was caught at the boundary. The table is still
/// usable (every change is complete before any code that can panic runs), but the failing
/// call's effect is unknown. Not an errno value.
pub const CW_EPANIC: c_int = 0 - 1000;

/// Flag for cw_callout_reset_sbt_on: run the handler from cw_hardclock itself (the clock
/// interrupt) instead of from cw_softclock.
pub const CW_C_DIRECT_EXEC: c_int = 0x0001;
/// Flag for cw_callout_reset_sbt_on, accepted for compatibility: times are already rounded
/// to the table's ticks.
pub const CW_C_HARDCLOCK: c_int = 0x0100;
/// Flag for cw_callout_reset_sbt_on: the time is absolute (since tick 0), not relative to
/// the current tick. A time already passed runs at the next cw_softclock.
pub const CW_C_ABSOLUTE: c_int = 0x0200;
/// The largest n accepted by cw_c_prel and CW_C_PREL.
pub const CW_C_PREL_MAX: c_int = 126;

/// cw_callout_async_drain's result when the handler is running: drain(arg) will be called
/// once, right after it returns (FreeBSD's 0, "drain pending").
pub const CW_ASYNC_DRAIN_PENDING: c_int = 0;
/// cw_callout_async_drain's result when the handler was not running and the callout was
/// pending: the firing is cancelled; drain is never called.
pub const CW_ASYNC_DRAIN_CANCELLED: c_int = 1;
/// cw_callout_async_drain's result when the handler was not running and nothing was pending:
/// the callout is stopped (inactive); drain is never called.
pub const CW_ASYNC_DRAIN_IDLE: c_int = 2;

/// One second in sbintime_t units (32.32 fixed point, as FreeBSD's SBT_1S).
pub const CW_SBT_1S: i64 = 4_294_967_296;
/// One millisecond in sbintime_t units (SBT_1S / 1000, truncated, as FreeBSD's SBT_1MS).
pub const CW_SBT_1MS: i64 = 4_294_967;
/// One microsecond in sbintime_t units (SBT_1S / 1000000, truncated, as FreeBSD's SBT_1US).
pub const CW_SBT_1US: i64 = 4_294;
/// One nanosecond in sbintime_t units (SBT_1S / 1000000000, truncated, as FreeBSD's SBT_1NS).
pub const CW_SBT_1NS: i64 = 4;

// The header's values are literals (cbindgen copies them); they must be the Rust crates'.
const _: () = {
    assert!(CW_C_DIRECT_EXEC as u32 == flags::C_DIRECT_EXEC);
    assert!(CW_C_ABSOLUTE as u32 == flags::C_ABSOLUTE);
    assert!(CW_C_HARDCLOCK as u32 == flags::C_HARDCLOCK);
    assert!(flags::c_prelget(flags::c_prel(CW_C_PREL_MAX as u32)).is_some());
    assert!(CW_SBT_1S == Sbt::SECOND.as_raw());
    assert!(CW_SBT_1MS == Sbt::MILLISECOND.as_raw());
    assert!(CW_SBT_1US == Sbt::MICROSECOND.as_raw());
    assert!(CW_SBT_1NS == Sbt::NANOSECOND.as_raw());
};

/// The largest calloutsize cw_callouts_new accepts: 2^26 records reserved up front. A larger
/// value is CW_EINVAL, so that a mistyped size (a negative number converted to size_t, a
/// byte count) fails at once instead of reserving tens of gigabytes; a growing table still
/// grows past it on demand (up to 2^32 - 2 records).
pub const CW_CALLOUTSIZE_MAX: usize = 1 << 26;

const _: () = assert!(CW_CALLOUTSIZE_MAX == callwheel_callout::MAX_CALLOUTSIZE);

/// Names one callout of one table, or one timer of one cw_wheel: what cw_setcallout,
/// cw_callout_init and cw_wheel_add store, and what every function acting on a callout or a
/// wheel's timer takes. Pass it by value; both fields are opaque.
///
/// `id` holds the record's index and generation, `owner` the identity of the table or wheel
/// that issued it (never 0 for an issued handle). A table or wheel accepts a handle only when
/// both name one of its live callouts or timers: a stale handle, another's handle or a
/// made-up one gets CW_ESTALE and changes nothing.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct cw_handle {
    /// The record's index (low 32 bits) and generation (high 32 bits).
    pub id: u64,
    /// The identity of the table that issued the handle.
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

/// The smallest and largest bucket counts (as powers of two) of a CW_BACKING_HASHED table.
const HASHED_MIN_BITS: u32 = 8;
const HASHED_MAX_BITS: u32 = 20;

/// A callout handler: called once with the argument it was set with.
pub type cw_func = Option<unsafe extern "C" fn(arg: *mut c_void)>;

/// What a C callout runs: `func(arg)`. Compared and hashed by the two addresses, as BSD's
/// `untimeout(func, arg)` compares them.
#[derive(Clone, Copy, Debug)]
struct CCall {
    func: unsafe extern "C" fn(*mut c_void),
    arg: *mut c_void,
}

// SAFETY: the table never dereferences `arg`; it only hands it back to `func` on the thread
// that runs cw_softclock or cw_hardclock. That this is allowed is part of the C API's
// contract (the crate documentation: "func(arg) must be safe to call on that thread").
unsafe impl Send for CCall {}

impl CCall {
    /// The callout `func(arg)`, or CW_EINVAL for a NULL `func`.
    fn new(func: cw_func, arg: *mut c_void) -> Result<CCall, c_int> {
        func.map(|func| CCall { func, arg }).ok_or(CW_EINVAL)
    }

    /// The drain call of this callout: `drain(arg)`.
    fn drained_by(self, drain: unsafe extern "C" fn(*mut c_void)) -> CCall {
        CCall {
            func: drain,
            arg: self.arg,
        }
    }

    /// Runs the handler.
    fn run(self) {
        // SAFETY: the C caller handed us `func` and `arg` to be called as `func(arg)` from
        // the thread running the table's handlers (the API's contract); both were non-NULL
        // checked where that matters (`func`), and `arg` is passed through untouched.
        unsafe { (self.func)(self.arg) }
    }
}

impl PartialEq for CCall {
    fn eq(&self, other: &CCall) -> bool {
        self.func as usize == other.func as usize && self.arg.addr() == other.arg.addr()
    }
}

impl Eq for CCall {}

impl Hash for CCall {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (self.func as usize).hash(state);
        self.arg.addr().hash(state);
    }
}

/// The three backings a C table can have.
#[derive(Debug)]
enum Table {
    List(SharedCallouts<DifferentialList<u32>, CCall>),
    Hashed(SharedCallouts<HashedWheel<u32>, CCall>),
    Wheel(SharedCallouts<Wheel<u32>, CCall>),
}

/// Evaluates `$body` with `$s` bound to the table's `SharedCallouts`, whatever its backing.
macro_rules! dispatch {
    ($table:expr, $s:ident => $body:expr) => {
        match $table {
            Table::List($s) => $body,
            Table::Hashed($s) => $body,
            Table::Wheel($s) => $body,
        }
    };
}

impl Table {
    fn new(backing: c_int, config: Config) -> Result<Table, c_int> {
        fn shared<S: callwheel_callout::Backing>(
            scheme: S,
            config: Config,
        ) -> Result<SharedCallouts<S, CCall>, c_int> {
            let table = Callouts::with_config(scheme, config).map_err(error_code)?;
            Ok(SharedCallouts::new(table))
        }
        Ok(match backing {
            CW_BACKING_LIST => Table::List(shared(DifferentialList::new(), config)?),
            CW_BACKING_HASHED => {
                let wheel = HashedWheel::new(hashed_bits(config.calloutsize))
                    .map_err(|e| error_code(Error::Scheme(e)))?;
                Table::Hashed(shared(wheel, config)?)
            }
            CW_BACKING_WHEEL => Table::Wheel(shared(Wheel::new(), config)?),
            _ => return Err(CW_EINVAL),
        })
    }
}

/// `ceil(log2(calloutsize))`, kept within the hashed wheel's bounds.
fn hashed_bits(calloutsize: usize) -> u32 {
    calloutsize
        .checked_next_power_of_two()
        .map_or(HASHED_MAX_BITS, usize::trailing_zeros)
        .clamp(HASHED_MIN_BITS, HASHED_MAX_BITS)
}

/// A callout table: one CPU's callout queue, shareable between threads. Opaque: made by
/// cw_callouts_new, destroyed by cw_callouts_free.
#[derive(Debug)]
pub struct cw_callouts {
    table: Table,
}

/// For Rust code (tests, fuzzing) holding a pointer from [`cw_callouts_new`].
impl cw_callouts {
    /// Verifies, by brute force, that the table's pool, hash chains, queues and backing scheme
    /// agree (`Callouts::check_invariants` under the table's lock). For tests and fuzzing;
    /// `Err` names what is broken.
    pub fn check_invariants(&self) -> Result<(), &'static str> {
        dispatch!(&self.table, s => s.with(|t| t.check_invariants()))
    }

    /// Callouts armed and not yet handed to a handler.
    pub fn pending(&self) -> usize {
        dispatch!(&self.table, s => s.with(|t| t.pending()))
    }

    /// Callout records in use (armed one-shot callouts and every cw_callout_init record).
    pub fn records_in_use(&self) -> usize {
        dispatch!(&self.table, s => s.with(|t| t.records_in_use()))
    }
}

// Several C threads share one table.
const _: fn() = || {
    fn shareable<T: Send + Sync>() {}
    shareable::<cw_callouts>();
};

/// The C code of `e`.
fn error_code(e: Error) -> c_int {
    match e {
        Error::PoolExhausted { .. } | Error::NoMemory => CW_ENOMEM,
        Error::StaleHandle => CW_ESTALE,
        Error::WrongKind => CW_EINVAL,
        Error::Scheme(callwheel::Error::Full { .. } | callwheel::Error::NoMemory) => CW_ENOMEM,
        Error::Scheme(callwheel::Error::Config { .. } | callwheel::Error::ZeroPeriod) => CW_EINVAL,
        // BeyondRange, and any refusal added later: the deadline was not accepted.
        Error::Scheme(_) => CW_ERANGE,
        Error::InvalidCpu(_) | Error::InvalidFlags(_) | Error::Config { .. } => CW_EINVAL,
        Error::WouldDeadlock => CW_EDEADLK,
        Error::PastEndOfTime => CW_ERANGE,
        Error::Busy | Error::SoftclockBusy => CW_EBUSY,
        _ => CW_EINVAL,
    }
}

/// Runs an entry point's body: its `Err` and any panic become the returned code.
fn guard(body: impl FnOnce() -> Result<c_int, c_int>) -> c_int {
    match panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v) | Err(v)) => v,
        Err(_) => CW_EPANIC,
    }
}

/// The table behind `cw`, or CW_EINVAL for NULL.
///
/// # Safety
///
/// `cw` is NULL or points to a table from [`cw_callouts_new`] that is not freed during `'a`.
unsafe fn table<'a>(cw: *const cw_callouts) -> Result<&'a Table, c_int> {
    // SAFETY: by this function's contract, a non-NULL `cw` points to a live table; the
    // reference is shared, and every mutation inside goes through the table's lock.
    let cw = unsafe { cw.as_ref() };
    cw.map(|cw| &cw.table).ok_or(CW_EINVAL)
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

/// The C result of a `callout_async_drain`.
fn drain_code(done: AsyncDrain) -> c_int {
    match done {
        AsyncDrain::Pending => CW_ASYNC_DRAIN_PENDING,
        AsyncDrain::Stopped(true) => CW_ASYNC_DRAIN_CANCELLED,
        AsyncDrain::Stopped(false) => CW_ASYNC_DRAIN_IDLE,
    }
}

/// Creates a callout table.
///
/// - `backing`: CW_BACKING_LIST, CW_BACKING_HASHED or CW_BACKING_WHEEL.
/// - `calloutsize`: callout records reserved now (the kernel's calloutsize), 0 to
///   CW_CALLOUTSIZE_MAX (2^26). The reservation is address space, touched as records are
///   first used.
/// - `fixed`: non-zero to never allocate more (calls needing another record then fail with
///   CW_ENOMEM); zero to let the pool double when it runs out.
/// - `hz`: ticks per second, to convert cw_callout_reset_sbt_on's times (at least 1).
/// - `out`: receives the table, or NULL on failure.
///
/// Returns 0; CW_EINVAL (NULL `out`, unknown backing, hz of 0, fixed pool of 0 records,
/// calloutsize above CW_CALLOUTSIZE_MAX); CW_ENOMEM when the records cannot be reserved.
///
/// # Safety
///
/// `out` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn cw_callouts_new(
    backing: c_int,
    calloutsize: usize,
    fixed: c_int,
    hz: u32,
    out: *mut *mut cw_callouts,
) -> c_int {
    guard(|| {
        need(out)?;
        // SAFETY: `out` is non-NULL and, by this function's contract, valid for writes.
        unsafe { out.write(core::ptr::null_mut()) };
        let config = Config {
            calloutsize,
            fixed: fixed != 0,
            hz,
            ..Config::default()
        };
        let table = Table::new(backing, config)?;
        let cw = Box::into_raw(Box::new(cw_callouts { table }));
        // SAFETY: as above.
        unsafe { out.write(cw) };
        Ok(CW_OK)
    })
}

/// Destroys a table and every callout in it (pending handlers never run). NULL is ignored.
///
/// # Safety
///
/// `cw` is NULL or a table from cw_callouts_new, not yet freed, on which no other call is in
/// progress (on any thread, including from a handler); it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn cw_callouts_free(cw: *mut cw_callouts) {
    guard(|| {
        if !cw.is_null() {
            // SAFETY: by this function's contract `cw` came from `Box::into_raw` in
            // cw_callouts_new, is freed only here, and nothing else is using it.
            drop(unsafe { Box::from_raw(cw) });
        }
        Ok(CW_OK)
    });
}

/// The clock interrupt: advances the table's tick by one, then runs the due
/// CW_C_DIRECT_EXEC handlers on this thread.
///
/// Returns 1 if cw_softclock has work, 0 if not (when nothing is due, the tick is processed
/// right here: the paper's fast path); CW_EBUSY if another thread (or this one, from a
/// handler) is running handlers — the tick still advanced, and the direct handlers run at
/// that thread's next cw_softclock; CW_EINVAL for NULL.
///
/// # Safety
///
/// `cw` is NULL or a live table (see the crate documentation).
#[no_mangle]
pub unsafe extern "C" fn cw_hardclock(cw: *mut cw_callouts) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let needed = dispatch!(t, s => s.hardclock_with(CCall::run)).map_err(error_code)?;
        Ok(flag(needed))
    })
}

/// The tickless mode's interrupt (calloutng's callout_process): moves the table's tick to
/// `now` in one step (a `now` at or before the current tick moves nothing), as the one-shot
/// event timer armed from cw_callout_next_event fires, then runs the due CW_C_DIRECT_EXEC
/// handlers on this thread. With hz = 1000000000 a tick is a nanosecond, and the precision
/// given to cw_callout_reset_sbt_on decides, on a CW_BACKING_WHEEL table, which callouts share
/// an interrupt.
///
/// Returns 1 if cw_softclock has work, 0 if not; CW_EBUSY if another thread (or this one,
/// from a handler) is running handlers (the clock still moved); CW_EINVAL for NULL.
///
/// # Safety
///
/// `cw` is NULL or a live table (see the crate documentation).
#[no_mangle]
pub unsafe extern "C" fn cw_callout_process(cw: *mut cw_callouts, now: u64) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let needed = dispatch!(t, s => s.process_with(now, CCall::run)).map_err(error_code)?;
        Ok(flag(needed))
    })
}

/// The event window of the pending callouts (calloutng arms its one-shot event timer inside
/// it): `first` is the earliest deadline, `last` the earliest end of a window (deadline plus
/// precision); an interrupt anywhere in [first, last] runs each callout inside its window, and
/// one at `last` coalesces the most. Both in ticks; (current tick, current tick) when work is
/// due now. Only CW_BACKING_WHEEL honours precision; the other backings answer their next
/// deadline for both.
///
/// Returns 1 with `first` and `last` filled; 0 when nothing is pending; CW_EINVAL for NULL.
///
/// # Safety
///
/// `cw` is NULL or a live table; `first` and `last` are NULL or valid for writing a uint64_t.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_next_event(
    cw: *const cw_callouts,
    first: *mut u64,
    last: *mut u64,
) -> c_int {
    guard(|| {
        need(first)?;
        need(last)?;
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        match dispatch!(t, s => s.next_event()) {
            Some((a, b)) => {
                // SAFETY: both non-NULL and valid for writes by this function's contract.
                unsafe {
                    first.write(a);
                    last.write(b);
                }
                Ok(1)
            }
            None => Ok(0),
        }
    })
}

/// The software interrupt: runs every due handler, in expiry order (set order among equal
/// expiries), until the table has caught up with cw_hardclock.
///
/// Handlers run with the table unlocked and may set or cancel any callout, the next due one
/// included (a cancelled callout that has not started never runs).
///
/// Returns the number of handlers run (at most INT_MAX is reported); CW_EBUSY if another
/// thread (or this one, from a handler) is already running handlers; CW_EINVAL for NULL.
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_softclock(cw: *mut cw_callouts) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let ran = dispatch!(t, s => s.softclock(CCall::run)).map_err(error_code)?;
        Ok(c_int::try_from(ran).unwrap_or(c_int::MAX))
    })
}

/// Stores the current tick (the kernel's `ticks`, advanced by cw_hardclock) in `*out`.
///
/// Returns 0, or CW_EINVAL for a NULL argument.
///
/// # Safety
///
/// `cw` is NULL or a live table; `out` is NULL or valid for writing a uint64_t.
#[no_mangle]
pub unsafe extern "C" fn cw_ticks(cw: *const cw_callouts, out: *mut u64) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        need(out)?;
        let ticks = dispatch!(t, s => s.ticks());
        // SAFETY: `out` is non-NULL and valid for writes, by this function's contract.
        unsafe { out.write(ticks) };
        Ok(CW_OK)
    })
}

/// Stores the tick cw_softclock has processed up to (the kernel's `softticks`; equal to
/// cw_ticks when caught up) in `*out`.
///
/// Returns 0, or CW_EINVAL for a NULL argument.
///
/// # Safety
///
/// `cw` is NULL or a live table; `out` is NULL or valid for writing a uint64_t.
#[no_mangle]
pub unsafe extern "C" fn cw_softticks(cw: *const cw_callouts, out: *mut u64) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        need(out)?;
        let softticks = dispatch!(t, s => s.softticks());
        // SAFETY: `out` is non-NULL and valid for writes, by this function's contract.
        unsafe { out.write(softticks) };
        Ok(CW_OK)
    })
}

/// BSD's `timeout(func, arg, ticks)`: runs `func(arg)` `ticks` ticks from now (`ticks` <= 0
/// counts as 1). Only cw_untimeout with the same (func, arg) cancels it.
///
/// Returns 0; CW_ENOMEM when a fixed pool is exhausted or the table cannot grow; CW_ERANGE if
/// the scheme refuses the deadline; CW_EINVAL for a NULL table or `func`.
///
/// # Safety
///
/// `cw` is NULL or a live table; `func(arg)` is safe to call from the thread that will run
/// cw_softclock.
#[no_mangle]
pub unsafe extern "C" fn cw_timeout(
    cw: *mut cw_callouts,
    func: cw_func,
    arg: *mut c_void,
    ticks: i64,
) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let call = CCall::new(func, arg)?;
        dispatch!(t, s => s.timeout(call, ticks)).map_err(error_code)?;
        Ok(CW_OK)
    })
}

/// BSD's `untimeout(func, arg)`: cancels one pending cw_timeout of (func, arg). On
/// CW_BACKING_HASHED and CW_BACKING_WHEEL it is found through a hash of (func, arg), and it is
/// the oldest (set first); cancelling one that does not exist costs the same as one that
/// does. On CW_BACKING_LIST it is 4.4BSD's search of the list from its head, which stops at
/// the first match: the one due first (set first among equal deadlines).
///
/// Returns 1 if one was cancelled (it will not run), 0 if none was pending; CW_EINVAL for a
/// NULL table or `func`.
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_untimeout(
    cw: *mut cw_callouts,
    func: cw_func,
    arg: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let call = CCall::new(func, arg)?;
        Ok(flag(dispatch!(t, s => s.untimeout(call))))
    })
}

/// Costello and Varghese's `setcallout(func, arg, ticks)`: like cw_timeout, and stores in
/// `*handle_out` a handle that cancels this callout and no other (cw_unsetcallout).
///
/// The handle goes stale when the callout fires (before its handler runs) or is cancelled.
///
/// Returns 0; CW_ENOMEM when a fixed pool is exhausted or the table cannot grow; CW_ERANGE if
/// the scheme refuses the deadline; CW_EINVAL for a NULL table, `func` or `handle_out`
/// (nothing is set).
///
/// # Safety
///
/// `cw` is NULL or a live table; `handle_out` is NULL or valid for writing a cw_handle;
/// `func(arg)` is safe to call from the thread that will run cw_softclock.
#[no_mangle]
pub unsafe extern "C" fn cw_setcallout(
    cw: *mut cw_callouts,
    func: cw_func,
    arg: *mut c_void,
    ticks: i64,
    handle_out: *mut cw_handle,
) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let call = CCall::new(func, arg)?;
        need(handle_out)?;
        let h = dispatch!(t, s => s.setcallout(call, ticks)).map_err(error_code)?;
        // SAFETY: `handle_out` is non-NULL and valid for writes, by this function's contract.
        unsafe { handle_out.write(h.into()) };
        Ok(CW_OK)
    })
}

/// Costello and Varghese's `unsetcallout(handle)`: cancels the callout cw_setcallout
/// returned `handle` for.
///
/// Returns 1 if it was pending (it will not run); CW_ESTALE if it already fired or was
/// cancelled, or the handle was never issued by this table; CW_EINVAL for a NULL table or a
/// cw_callout_init handle.
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_unsetcallout(cw: *mut cw_callouts, handle: cw_handle) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let was = dispatch!(t, s => s.unsetcallout(handle.into())).map_err(error_code)?;
        Ok(flag(was))
    })
}

/// FreeBSD's `callout_init`: a persistent callout record, idle and inactive, whose handle is
/// stored in `*handle_out`. It lives until cw_callout_free, and may be armed again and again
/// (cw_callout_reset, cw_callout_reset_sbt_on).
///
/// Returns 0; CW_ENOMEM when a fixed pool is exhausted or the table cannot grow; CW_EINVAL
/// for a NULL argument.
///
/// # Safety
///
/// `cw` is NULL or a live table; `handle_out` is NULL or valid for writing a cw_handle.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_init(
    cw: *mut cw_callouts,
    handle_out: *mut cw_handle,
) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        need(handle_out)?;
        let h = dispatch!(t, s => s.callout_init()).map_err(error_code)?;
        // SAFETY: `handle_out` is non-NULL and valid for writes, by this function's contract.
        unsafe { handle_out.write(h.into()) };
        Ok(CW_OK)
    })
}

/// Returns a cw_callout_init record to the pool, cancelling it if pending; if its handler is
/// running on another thread, waits for it to return first. The handle goes stale.
///
/// Returns 0; CW_EDEADLK from the callout's own handler (nothing changes); CW_ESTALE,
/// CW_EINVAL (NULL table, cw_setcallout handle).
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_free(cw: *mut cw_callouts, handle: cw_handle) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        dispatch!(t, s => s.callout_free(handle.into())).map_err(error_code)?;
        Ok(CW_OK)
    })
}

/// FreeBSD's `callout_reset(c, ticks, func, arg)`: (re)arms the callout to run `func(arg)`
/// `ticks` ticks from now (`ticks` <= 0 counts as 1) and marks it active. A handler may
/// re-arm its own callout. While a cw_callout_async_drain waits for the handler, the reset is
/// ignored and returns 0 (as FreeBSD ignores resets of a callout being drained); so is
/// cw_callout_reset_sbt_on.
///
/// Returns 1 if the callout was pending (that arming is cancelled), 0 if not; CW_ESTALE;
/// CW_ERANGE; CW_EINVAL (NULL table or `func`, cw_setcallout handle). On failure the
/// callout keeps its previous arming.
///
/// # Safety
///
/// `cw` is NULL or a live table; `func(arg)` is safe to call from the thread that will run
/// cw_softclock.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_reset(
    cw: *mut cw_callouts,
    handle: cw_handle,
    ticks: i64,
    func: cw_func,
    arg: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let call = CCall::new(func, arg)?;
        let was =
            dispatch!(t, s => s.callout_reset(handle.into(), ticks, call)).map_err(error_code)?;
        Ok(flag(was))
    })
}

/// FreeBSD calloutng's `callout_reset_sbt_on(c, sbt, precision, func, arg, cpu, flags)`.
///
/// - `sbt` (32.32 fixed-point seconds, see CW_SBT_1S) is relative to the current tick's
///   time, or absolute (since tick 0) with CW_C_ABSOLUTE. It is rounded up to a tick at the
///   table's hz; a relative time of 0 or less means the next tick, an absolute time already
///   passed runs at the next cw_softclock.
/// - The callout may run up to `precision` late, or the interval divided by 2^n with
///   CW_C_PREL(n) if that is larger (rounded down to whole ticks; only CW_BACKING_WHEEL
///   uses it).
/// - `flags`: CW_C_DIRECT_EXEC (run from cw_hardclock), CW_C_ABSOLUTE, CW_C_HARDCLOCK
///   (accepted, no effect), CW_C_PREL(n); any other bit is CW_EINVAL.
/// - `cpu` must be 0 or -1 (a table is one CPU's queue; cw_percpu_callout_reset_sbt_on takes
///   any CPU of a per-CPU set).
///
/// Returns 1 if the callout was pending, 0 if not; CW_ESTALE; CW_ERANGE; CW_EINVAL (NULL
/// table or `func`, bad flags or cpu, cw_setcallout handle). On failure nothing changes.
///
/// # Safety
///
/// `cw` is NULL or a live table; `func(arg)` is safe to call from the thread that will run
/// cw_softclock (or cw_hardclock, with CW_C_DIRECT_EXEC).
#[no_mangle]
#[allow(clippy::too_many_arguments)] // FreeBSD's signature, plus the table.
pub unsafe extern "C" fn cw_callout_reset_sbt_on(
    cw: *mut cw_callouts,
    handle: cw_handle,
    sbt: i64,
    precision: i64,
    func: cw_func,
    arg: *mut c_void,
    cpu: c_int,
    flags: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let call = CCall::new(func, arg)?;
        let (sbt, precision) = (Sbt::from_raw(sbt), Sbt::from_raw(precision));
        // A negative int has bits no flag uses, so it is refused as unknown flags.
        let flags = flags as u32;
        let was = dispatch!(t, s => s.callout_reset_sbt_on(
            handle.into(), sbt, precision, call, cpu, flags
        ))
        .map_err(error_code)?;
        Ok(flag(was))
    })
}

/// FreeBSD's `callout_stop`: cancels the callout if pending and clears its active flag. Does
/// not wait for a running handler (see cw_callout_drain).
///
/// Returns 1 if it was pending, 0 if not; CW_ESTALE; CW_EINVAL (NULL table, cw_setcallout
/// handle).
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_stop(cw: *mut cw_callouts, handle: cw_handle) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let was = dispatch!(t, s => s.callout_stop(handle.into())).map_err(error_code)?;
        Ok(flag(was))
    })
}

/// FreeBSD's `callout_drain`: cw_callout_stop, and if the handler is running on another
/// thread, waits until it returns.
///
/// Returns 1 if the callout was pending, 0 if not; CW_EDEADLK from the callout's own handler
/// (nothing changes); CW_ESTALE; CW_EINVAL (NULL table, cw_setcallout handle).
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_drain(cw: *mut cw_callouts, handle: cw_handle) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let was = dispatch!(t, s => s.callout_drain(handle.into())).map_err(error_code)?;
        Ok(flag(was))
    })
}

/// FreeBSD's `callout_async_drain(c, drain)`: stops the callout without waiting for its
/// handler.
///
/// - If the handler is running (on another thread, or this is called from the handler
///   itself), `drain(arg)` is called once, with the argument the callout was last armed
///   with, on the thread that ran the handler, right after the handler returns (from that
///   cw_softclock or cw_hardclock call). Any pending arming is cancelled, and resets are
///   ignored until the handler has returned, so when `drain` runs the callout is neither
///   pending nor running: `drain` may cw_callout_free it.
/// - Otherwise the callout is stopped as by cw_callout_stop and `drain` is never called.
///
/// Returns CW_ASYNC_DRAIN_PENDING (0) when `drain` will be called; CW_ASYNC_DRAIN_CANCELLED
/// (1) when it will not and a pending firing was cancelled; CW_ASYNC_DRAIN_IDLE (2) when it
/// will not and nothing was pending. Errors: CW_EBUSY when a drain already waits for the
/// running handler; CW_ENOMEM; CW_ESTALE; CW_EINVAL (NULL table or `drain`, cw_setcallout
/// handle). On error nothing changes.
///
/// # Safety
///
/// `cw` is NULL or a live table; `drain(arg)` is safe to call from the thread running the
/// table's handlers.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_async_drain(
    cw: *mut cw_callouts,
    handle: cw_handle,
    drain: cw_func,
) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let drain = drain.ok_or(CW_EINVAL)?;
        let done = dispatch!(t, s => s.callout_async_drain(handle.into(), |c| c.drained_by(drain)))
            .map_err(error_code)?;
        Ok(drain_code(done))
    })
}

/// FreeBSD's `callout_pending`: 1 if the callout is armed and its handler has not been
/// started, 0 if not; CW_ESTALE; CW_EINVAL (NULL table, cw_setcallout handle).
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_pending(cw: *const cw_callouts, handle: cw_handle) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let pending = dispatch!(t, s => s.callout_pending(handle.into())).map_err(error_code)?;
        Ok(flag(pending))
    })
}

/// FreeBSD's `callout_active`: 1 if the callout was armed and not since stopped or
/// deactivated, 0 if not (running does not clear it, so a handler can tell whether it was
/// stopped after it was started); CW_ESTALE; CW_EINVAL (NULL table, cw_setcallout handle).
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_active(cw: *const cw_callouts, handle: cw_handle) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        let active = dispatch!(t, s => s.callout_active(handle.into())).map_err(error_code)?;
        Ok(flag(active))
    })
}

/// FreeBSD's `callout_deactivate`: clears the active flag (a handler does this first).
///
/// Returns 0; CW_ESTALE; CW_EINVAL (NULL table, cw_setcallout handle).
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_callout_deactivate(cw: *mut cw_callouts, handle: cw_handle) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        dispatch!(t, s => s.callout_deactivate(handle.into())).map_err(error_code)?;
        Ok(CW_OK)
    })
}

/// calloutng's `C_PREL(n)` for cw_callout_reset_sbt_on's flags: the callout may run up to
/// its interval / 2^n late. `n` is 0 to CW_C_PREL_MAX; any other `n` gives CW_EINVAL, which
/// cw_callout_reset_sbt_on refuses as a flag. The macro CW_C_PREL(n) is the same for valid n.
#[no_mangle]
pub extern "C" fn cw_c_prel(n: c_int) -> c_int {
    guard(|| {
        let n = u32::try_from(n)
            .ok()
            .filter(|&n| n <= CW_C_PREL_MAX as u32)
            .ok_or(CW_EINVAL)?;
        // At most 0xfe: fits.
        Ok(flags::c_prel(n) as c_int)
    })
}

/// A static, NUL-terminated description of a code returned by this library (any
/// non-negative value is a success). Never NULL; unknown codes get a generic text.
#[no_mangle]
pub extern "C" fn cw_strerror(code: c_int) -> *const c_char {
    let text = panic::catch_unwind(|| describe(code)).unwrap_or(c"callwheel: internal error");
    text.as_ptr()
}

fn describe(code: c_int) -> &'static core::ffi::CStr {
    match code {
        0.. => c"success",
        CW_EINVAL => c"invalid argument (NULL pointer or function, unknown backing, bad flags or cpu, handle of the wrong kind, or bad configuration)",
        CW_ENOMEM => c"out of callout records: the fixed pool is full, or the table could not get memory to grow",
        CW_ESTALE => c"stale or unknown callout handle",
        CW_EDEADLK => c"waiting would deadlock: the callout's own handler runs on this thread, or the runtime's driver would wait for itself",
        CW_EBUSY => c"busy: handlers are running on another thread (or this one), or the callout's handler is running",
        CW_ERANGE => c"the timer scheme cannot hold this deadline",
        CW_EPANIC => c"internal error: a panic was caught inside callwheel",
        CW_ENOSPC => c"the timer set holds its quota of timers (or the process has no handle left)",
        CW_EINVARIANT => c"an internal invariant of the wheel does not hold (cw_wheel_check)",
        CW_ETIMEDOUT => c"the wait's timeout came first",
        -4095..0 => c"a system call failed (the code is the negated errno)",
        _ => c"unknown callwheel error code",
    }
}

mod itimer;
mod percpu;
mod sleep;
mod timerset;
mod wheel;

pub use itimer::*;
pub use percpu::*;
pub use sleep::*;
pub use timerset::*;
pub use wheel::*;

#[cfg(test)]
mod itimer_tests;
#[cfg(test)]
mod percpu_tests;
#[cfg(test)]
mod sleep_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod timerset_tests;
#[cfg(test)]
mod wheel_tests;
