//! The BSD and FreeBSD callout interfaces for C on one table (`cw_callouts`): Costello and
//! Varghese's `timeout` / `untimeout` and `setcallout` / `unsetcallout`, FreeBSD's
//! `struct callout` calls and calloutng's `callout_reset_sbt_on`, each on one of three backing
//! schemes. The per-CPU form (`cw_percpu`) is in `percpu.rs`.

use core::ffi::{c_int, c_void};
use core::hash::{Hash, Hasher};

use callwheel::time::Sbt;
use callwheel::Wheel;
use callwheel_callout::{flags, AsyncDrain, Callouts, Config, Error, SharedCallouts};
use callwheel_schemes::differential_list::DifferentialList;
use callwheel_schemes::hashed_wheel::HashedWheel;

use crate::{
    cw_func, cw_handle, flag, guard, need, CW_EBUSY, CW_EDEADLK, CW_EINVAL, CW_ENOMEM, CW_ERANGE,
    CW_ESTALE, CW_OK,
};

/// Backing scheme: the old BSD callout, a differential list (setting a callout is O(n), and
/// cw_untimeout searches the list from its head, O(n), as 4.4BSD's untimeout did).
pub const CW_BACKING_LIST: c_int = 0;
/// Backing scheme: Costello and Varghese's callwheel, Scheme 6 (a hashed wheel of 2^bits
/// unsorted buckets, with bits = ceil(log2(calloutsize)) kept between 8 and 20).
pub const CW_BACKING_HASHED: c_int = 1;
/// Backing scheme: callwheel's production hierarchical wheel (coalesces callouts within the
/// precision given to cw_callout_reset_sbt_on).
pub const CW_BACKING_WHEEL: c_int = 2;

/// Flag for cw_callout_reset_sbt_on: run the handler from cw_hardclock itself (the clock
/// interrupt) instead of from cw_softclock.
pub const CW_C_DIRECT_EXEC: c_int = 0x0001;
/// Flag for cw_callout_reset_sbt_on, accepted for compatibility: times are already rounded
/// to the table's ticks.
pub const CW_C_HARDCLOCK: c_int = 0x0100;
/// Flag for cw_callout_reset_sbt_on: the time is absolute (since tick 0), not relative to
/// the current tick. A time already passed runs at the next tick.
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

/// The smallest and largest bucket counts (as powers of two) of a CW_BACKING_HASHED table.
const HASHED_MIN_BITS: u32 = 8;
const HASHED_MAX_BITS: u32 = 20;

/// What a C callout runs: `func(arg)`. Compared and hashed by the two addresses, as BSD's
/// `untimeout(func, arg)` compares them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CCall {
    func: unsafe extern "C" fn(*mut c_void),
    arg: *mut c_void,
}

// SAFETY: the table never dereferences `arg`; it only hands it back to `func` on the thread
// that runs cw_softclock or cw_hardclock. That this is allowed is part of the C API's
// contract (the crate documentation: "func(arg) must be safe to call on that thread").
unsafe impl Send for CCall {}

impl CCall {
    /// The callout `func(arg)`, or CW_EINVAL for a NULL `func`.
    pub(crate) fn new(func: cw_func, arg: *mut c_void) -> Result<CCall, c_int> {
        func.map(|func| CCall { func, arg }).ok_or(CW_EINVAL)
    }

    /// The drain call of this callout: `drain(arg)`.
    pub(crate) fn drained_by(self, drain: unsafe extern "C" fn(*mut c_void)) -> CCall {
        CCall {
            func: drain,
            arg: self.arg,
        }
    }

    /// Runs the handler.
    pub(crate) fn run(self) {
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
pub(crate) enum Table {
    List(SharedCallouts<DifferentialList<u32>, CCall>),
    Hashed(SharedCallouts<HashedWheel<u32>, CCall>),
    Wheel(SharedCallouts<Wheel<u32>, CCall>),
}

/// Evaluates `$body` with `$s` bound to the table's `SharedCallouts`, whatever its backing.
macro_rules! dispatch {
    ($table:expr, $s:ident => $body:expr) => {
        match $table {
            $crate::callout::Table::List($s) => $body,
            $crate::callout::Table::Hashed($s) => $body,
            $crate::callout::Table::Wheel($s) => $body,
        }
    };
}
pub(crate) use dispatch;

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
pub(crate) fn hashed_bits(calloutsize: usize) -> u32 {
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
pub(crate) fn error_code(e: Error) -> c_int {
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

/// The table behind `cw`, or CW_EINVAL for NULL.
///
/// # Safety
///
/// `cw` is NULL or points to a table from [`cw_callouts_new`] that is not freed during `'a`.
pub(crate) unsafe fn table<'a>(cw: *const cw_callouts) -> Result<&'a Table, c_int> {
    // SAFETY: by this function's contract, a non-NULL `cw` points to a live table; the
    // reference is shared, and every mutation inside goes through the table's lock.
    let cw = unsafe { cw.as_ref() };
    cw.map(|cw| &cw.table).ok_or(CW_EINVAL)
}

/// The C result of a `callout_async_drain`.
pub(crate) fn drain_code(done: AsyncDrain) -> c_int {
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
            // Exact until cw_callouts_set_deviation asks for calloutng's default precision.
            deviation_percent: 0,
            ..Config::default()
        };
        let table = Table::new(backing, config)?;
        let cw = Box::into_raw(Box::new(cw_callouts { table }));
        // SAFETY: as above.
        unsafe { out.write(cw) };
        Ok(CW_OK)
    })
}

/// Sets the table's default deviation, FreeBSD's `kern.timecounter.alldeviation`: a callout
/// armed from now on by a relative time without a precision (cw_timeout, cw_setcallout,
/// cw_callout_reset, and cw_callout_reset_sbt_on without CW_C_PREL or CW_C_ABSOLUTE) may run
/// up to `percent` % of its interval late (rounded down to a power of two as FreeBSD does: 5
/// allows a sixteenth), at its window's firing instant, which callouts with overlapping
/// windows share. A new table has 0: every such callout exact. Callouts already pending keep
/// their windows.
///
/// Returns 0; CW_EINVAL for NULL or a `percent` above 100.
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_callouts_set_deviation(cw: *mut cw_callouts, percent: u32) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        if percent > 100 {
            return Err(CW_EINVAL);
        }
        dispatch!(t, s => s.with(|t| t.set_deviation_percent(percent)));
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
/// Returns 1 if cw_softclock may have work (always when a callout is due; on CW_BACKING_HASHED also
/// when the next busy bucket holds only later turns' callouts, and cw_softclock then runs none), 0
/// if not (when nothing is due, the tick is processed right here: the paper's fast path); CW_EBUSY
/// if another thread (or this one, from a handler) is running handlers — the tick still advanced,
/// and the direct handlers run at that thread's next cw_softclock; CW_EINVAL for NULL.
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
/// Returns 1 if cw_softclock may have work (always when a callout is due; on CW_BACKING_HASHED also
/// when the next busy bucket holds only later turns' callouts, and cw_softclock then runs none), 0
/// if not; CW_EBUSY if another thread (or this one, from a handler) is running handlers (the clock
/// still moved); CW_EINVAL for NULL.
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
/// it): `first` is the earliest tick a pending callout runs at (its deadline, or for a callout
/// with a window its firing instant, which callouts with overlapping windows share), `last`
/// the earliest end of a window on CW_BACKING_WHEEL and `first` on the other backings; an
/// interrupt anywhere in [first, last] runs each callout inside its window, and one at `last`
/// coalesces the most. Both in ticks; (current tick, current tick) when work is due now.
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

#[cfg(test)]
#[path = "callout_tests.rs"]
mod tests;
