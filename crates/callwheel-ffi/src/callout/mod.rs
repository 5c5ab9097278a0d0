//! The BSD and FreeBSD callout interfaces for C (`cw_callouts`), written once for a table of
//! any number of CPUs (one: the single table): Costello and Varghese's `timeout` /
//! `untimeout` and `setcallout` / `unsetcallout` (`bsd.rs`), FreeBSD's `struct callout` calls
//! and calloutng's `callout_reset_sbt_on` (`freebsd.rs`), and each CPU's clock (`clock.rs`),
//! on one of three backing schemes. This module makes and frees tables.

mod bsd;
mod clock;
mod freebsd;

pub use bsd::*;
pub use clock::*;
pub use freebsd::*;

use core::ffi::{c_int, c_void};
use core::hash::{Hash, Hasher};

use callwheel::time::Sbt;
use callwheel::Wheel;
use callwheel_callout::{flags, AsyncDrain, Backing, Callouts, Config, Error, SharedCallouts};
use callwheel_schemes::differential_list::DifferentialList;
use callwheel_schemes::hashed_wheel::HashedWheel;

use crate::{
    cw_func, guard, need, CW_EBUSY, CW_EDEADLK, CW_EINVAL, CW_ENOMEM, CW_ERANGE, CW_ESTALE, CW_OK,
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

/// The most CPUs cw_callouts_new_percpu accepts.
pub const CW_NCPU_MAX: c_int = 1024;

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
    /// A table of `ncpu` CPUs' queues on `backing`, each made with `config`.
    fn new(backing: c_int, ncpu: usize, config: Config) -> Result<Table, c_int> {
        fn shared<S: Backing>(
            ncpu: usize,
            config: Config,
            scheme: impl Fn() -> Result<S, Error>,
        ) -> Result<SharedCallouts<S, CCall>, c_int> {
            let mut tables = Vec::new();
            tables.try_reserve_exact(ncpu).map_err(|_| CW_ENOMEM)?;
            for _ in 0..ncpu {
                let table = scheme().and_then(|s| Callouts::with_config(s, config));
                tables.push(table.map_err(error_code)?);
            }
            SharedCallouts::new(tables).map_err(error_code)
        }
        Ok(match backing {
            CW_BACKING_LIST => Table::List(shared(ncpu, config, || Ok(DifferentialList::new()))?),
            CW_BACKING_HASHED => Table::Hashed(shared(ncpu, config, || {
                HashedWheel::new(hashed_bits(config.calloutsize)).map_err(Error::Scheme)
            })?),
            CW_BACKING_WHEEL => Table::Wheel(shared(ncpu, config, || Ok(Wheel::new()))?),
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

/// A callout table, shareable between threads: one callout queue per CPU, each processed on
/// its own (one CPU: the single table). Opaque: made by cw_callouts_new or
/// cw_callouts_new_percpu, destroyed by cw_callouts_free.
#[derive(Debug)]
pub struct cw_callouts {
    table: Table,
}

/// For Rust code (tests, fuzzing) holding a pointer from [`cw_callouts_new`].
impl cw_callouts {
    /// Verifies, by brute force, that each CPU's pool, hash chains, queues and backing scheme
    /// agree, and that the directory of callouts agrees with them
    /// (`SharedCallouts::check_invariants`). For tests and fuzzing; `Err` names what is
    /// broken.
    pub fn check_invariants(&self) -> Result<(), &'static str> {
        dispatch!(&self.table, s => s.check_invariants())
    }

    /// Callouts armed and not yet handed to a handler, on every CPU.
    pub fn pending(&self) -> usize {
        dispatch!(&self.table, s => (0..s.ncpu()).filter_map(|cpu| s.pending(cpu).ok()).sum())
    }

    /// Callout records in use on every CPU (armed one-shot callouts and every
    /// cw_callout_init record).
    pub fn records_in_use(&self) -> usize {
        dispatch!(&self.table, s => (0..s.ncpu())
            .filter_map(|cpu| s.with(cpu, |t| t.records_in_use()).ok())
            .sum())
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
/// `cw` is NULL or points to a table from [`cw_callouts_new`] or [`cw_callouts_new_percpu`]
/// that is not freed during `'a`.
pub(crate) unsafe fn table<'a>(cw: *const cw_callouts) -> Result<&'a Table, c_int> {
    // SAFETY: by this function's contract, a non-NULL `cw` points to a live table; the
    // reference is shared, and every mutation inside goes through the table's lock.
    let cw = unsafe { cw.as_ref() };
    cw.map(|cw| &cw.table).ok_or(CW_EINVAL)
}

/// A call's `cpu` as an index: a negative one is CW_EINVAL (one past the table's CPUs is
/// refused by the table itself).
pub(crate) fn cpu_index(cpu: c_int) -> Result<usize, c_int> {
    usize::try_from(cpu).map_err(|_| CW_EINVAL)
}

/// The C result of a `callout_async_drain`.
pub(crate) fn drain_code(done: AsyncDrain) -> c_int {
    match done {
        AsyncDrain::Pending => CW_ASYNC_DRAIN_PENDING,
        AsyncDrain::Stopped(true) => CW_ASYNC_DRAIN_CANCELLED,
        AsyncDrain::Stopped(false) => CW_ASYNC_DRAIN_IDLE,
    }
}

/// Creates a callout table of one CPU (cw_callouts_new_percpu with `ncpu` 1): the clock calls
/// are given `cpu` 0, and the calls that name a callout's CPU 0 or -1 ("its own").
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
    // SAFETY: the same contract.
    unsafe { cw_callouts_new_percpu(backing, 1, calloutsize, fixed, hz, out) }
}

/// Creates a callout table of `ncpu` CPUs: FreeBSD's per-CPU callwheels, one queue per CPU
/// with its own lock, each processed on its own by whoever drives that CPU (cw_hardclock,
/// cw_softclock, cw_callout_process with its number), and cw_callout_reset_sbt_on's `cpu`
/// choosing the queue a callout runs on.
///
/// - `backing`: CW_BACKING_LIST, CW_BACKING_HASHED or CW_BACKING_WHEEL, for every CPU.
/// - `ncpu`: 1 to CW_NCPU_MAX (for example the number of online CPUs, or of the threads that
///   will drive the queues).
/// - `calloutsize`, `fixed`, `hz`: as for cw_callouts_new, for each CPU's queue (a callout's
///   record lives in its CPU's queue; a fixed pool bounds the callouts of each CPU).
/// - `out`: receives the table, or NULL on failure.
///
/// Returns 0; CW_EINVAL (NULL `out`, unknown backing, ncpu outside 1 to CW_NCPU_MAX, hz of 0,
/// fixed pool of 0 records, calloutsize above CW_CALLOUTSIZE_MAX); CW_ENOMEM when the records
/// cannot be reserved.
///
/// # Safety
///
/// `out` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn cw_callouts_new_percpu(
    backing: c_int,
    ncpu: c_int,
    calloutsize: usize,
    fixed: c_int,
    hz: u32,
    out: *mut *mut cw_callouts,
) -> c_int {
    guard(|| {
        need(out)?;
        // SAFETY: `out` is non-NULL and, by this function's contract, valid for writes.
        unsafe { out.write(core::ptr::null_mut()) };
        if !(1..=CW_NCPU_MAX).contains(&ncpu) {
            return Err(CW_EINVAL);
        }
        let config = Config {
            calloutsize,
            fixed: fixed != 0,
            hz,
            // Exact until cw_callouts_set_deviation asks for calloutng's default precision.
            deviation_percent: 0,
            ..Config::default()
        };
        let table = Table::new(backing, ncpu as usize, config)?;
        let cw = Box::into_raw(Box::new(cw_callouts { table }));
        // SAFETY: as above.
        unsafe { out.write(cw) };
        Ok(CW_OK)
    })
}

/// How many CPUs the table has (1 for cw_callouts_new's); CW_EINVAL for NULL.
///
/// # Safety
///
/// `cw` is NULL or a live table.
#[no_mangle]
pub unsafe extern "C" fn cw_callouts_ncpu(cw: *const cw_callouts) -> c_int {
    guard(|| {
        // SAFETY: `cw` is NULL or live, by this function's contract.
        let t = unsafe { table(cw) }?;
        // At most CW_NCPU_MAX: fits.
        Ok(dispatch!(t, s => s.ncpu()) as c_int)
    })
}

/// Sets the default deviation of every CPU's queue, FreeBSD's `kern.timecounter.alldeviation`: a callout
/// armed from now on by a relative time without a precision (cw_timeout, cw_setcallout,
/// cw_callout_reset, and cw_callout_reset_sbt_on without CW_C_PREL or CW_C_ABSOLUTE) may run
/// about `percent` % of its interval late: 1 / 2^s of it, s the highest bit of t + t/2 for
/// t = (99 + `percent`) / `percent`, as FreeBSD derives `tc_precexp` (1 allows 1/128, 5 a
/// sixteenth, 13 an eighth, 99 a half, 100 the whole interval), at its window's firing
/// instant, which callouts with overlapping
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
        dispatch!(t, s => s.set_deviation_percent(percent));
        Ok(CW_OK)
    })
}

/// Destroys a table and every callout in it, on every CPU (pending handlers never run). NULL
/// is ignored.
///
/// # Safety
///
/// `cw` is NULL or a table from cw_callouts_new or cw_callouts_new_percpu, not yet freed, on
/// which no other call is in progress (on any thread, including from a handler); it must not
/// be used afterwards.
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

#[cfg(test)]
mod percpu_tests;
#[cfg(test)]
mod tests;
