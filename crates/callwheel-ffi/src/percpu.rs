//! Per-CPU callout sets for C (`cw_percpu_*`): FreeBSD's per-CPU callwheels, one callout table
//! per CPU with its own lock, processed on its own, and `callout_reset_sbt_on`'s `cpu`
//! argument choosing the table (a move of a running callout deferred until its handler
//! returns). The Rust side is `callwheel_callout::PerCpuCallouts`.

use core::ffi::{c_int, c_void};

use callwheel::time::Sbt;
use callwheel::Wheel;
use callwheel_callout::{Backing, Callouts, Config, Error, PerCpuCallouts};
use callwheel_schemes::differential_list::DifferentialList;
use callwheel_schemes::hashed_wheel::HashedWheel;

use crate::callout::{drain_code, error_code, hashed_bits, CCall};
use crate::{
    cw_func, cw_handle, flag, guard, need, CW_BACKING_HASHED, CW_BACKING_LIST, CW_BACKING_WHEEL,
    CW_EINVAL, CW_ENOMEM, CW_OK,
};

/// The most CPUs cw_percpu_new accepts.
pub const CW_PERCPU_MAX: c_int = 1024;

/// The three backings a set's tables can have (all its tables have the same).
#[derive(Debug)]
pub(crate) enum Set {
    List(PerCpuCallouts<DifferentialList<u32>, CCall>),
    Hashed(PerCpuCallouts<HashedWheel<u32>, CCall>),
    Wheel(PerCpuCallouts<Wheel<u32>, CCall>),
}

/// Evaluates `$body` with `$s` bound to the set's `PerCpuCallouts`, whatever its backing.
macro_rules! each {
    ($set:expr, $s:ident => $body:expr) => {
        match $set {
            $crate::percpu::Set::List($s) => $body,
            $crate::percpu::Set::Hashed($s) => $body,
            $crate::percpu::Set::Wheel($s) => $body,
        }
    };
}
pub(crate) use each;

impl Set {
    fn new(backing: c_int, ncpu: usize, config: Config) -> Result<Set, c_int> {
        fn tables<S: Backing>(
            ncpu: usize,
            config: Config,
            scheme: impl Fn() -> Result<S, Error>,
        ) -> Result<PerCpuCallouts<S, CCall>, c_int> {
            let mut tables = Vec::new();
            tables.try_reserve_exact(ncpu).map_err(|_| CW_ENOMEM)?;
            for _ in 0..ncpu {
                let table = scheme().and_then(|s| Callouts::with_config(s, config));
                tables.push(table.map_err(error_code)?);
            }
            PerCpuCallouts::new(tables).map_err(error_code)
        }
        Ok(match backing {
            CW_BACKING_LIST => Set::List(tables(ncpu, config, || Ok(DifferentialList::new()))?),
            CW_BACKING_HASHED => Set::Hashed(tables(ncpu, config, || {
                HashedWheel::new(hashed_bits(config.calloutsize)).map_err(Error::Scheme)
            })?),
            CW_BACKING_WHEEL => Set::Wheel(tables(ncpu, config, || Ok(Wheel::new()))?),
            _ => return Err(CW_EINVAL),
        })
    }
}

/// A per-CPU callout set: one callout table per CPU, shareable between threads. Opaque: made
/// by cw_percpu_new, destroyed by cw_percpu_free.
#[derive(Debug)]
pub struct cw_percpu {
    set: Set,
}

/// For Rust code (tests, fuzzing) holding a pointer from [`cw_percpu_new`].
impl cw_percpu {
    /// Verifies, by brute force, every table of the set and that its directory agrees with
    /// them (`PerCpuCallouts::check_invariants`). `Err` names what is broken.
    pub fn check_invariants(&self) -> Result<(), &'static str> {
        each!(&self.set, s => s.check_invariants())
    }
}

// Several C threads share one set.
const _: fn() = || {
    fn shareable<T: Send + Sync>() {}
    shareable::<cw_percpu>();
};

/// The set behind `set`, or CW_EINVAL for NULL.
///
/// # Safety
///
/// `set` is NULL or points to a set from [`cw_percpu_new`] that is not freed during `'a`.
pub(crate) unsafe fn set_of<'a>(set: *const cw_percpu) -> Result<&'a Set, c_int> {
    // SAFETY: by this function's contract, a non-NULL `set` points to a live set; the
    // reference is shared, and every mutation inside goes through the set's locks.
    let set = unsafe { set.as_ref() };
    set.map(|s| &s.set).ok_or(CW_EINVAL)
}

/// A processing call's `cpu` as an index: a negative one is CW_EINVAL (one past the set's
/// CPUs is refused by the set itself).
pub(crate) fn cpu_index(cpu: c_int) -> Result<usize, c_int> {
    usize::try_from(cpu).map_err(|_| CW_EINVAL)
}

/// Creates a per-CPU set of `ncpu` callout tables.
///
/// - `backing`: CW_BACKING_LIST, CW_BACKING_HASHED or CW_BACKING_WHEEL, for every table.
/// - `ncpu`: 1 to CW_PERCPU_MAX (for example the number of online CPUs, or of the threads
///   that will drive the tables).
/// - `calloutsize`, `fixed`, `hz`: as for cw_callouts_new, for each table (a callout's
///   record lives in its CPU's table; a fixed pool bounds the callouts of each CPU).
/// - `out`: receives the set, or NULL on failure.
///
/// Returns 0; CW_EINVAL (NULL `out`, unknown backing, ncpu outside 1 to CW_PERCPU_MAX, hz
/// of 0, fixed pool of 0 records, calloutsize above CW_CALLOUTSIZE_MAX); CW_ENOMEM when the
/// records cannot be reserved.
///
/// # Safety
///
/// `out` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn cw_percpu_new(
    backing: c_int,
    ncpu: c_int,
    calloutsize: usize,
    fixed: c_int,
    hz: u32,
    out: *mut *mut cw_percpu,
) -> c_int {
    guard(|| {
        need(out)?;
        // SAFETY: `out` is non-NULL and, by this function's contract, valid for writes.
        unsafe { out.write(core::ptr::null_mut()) };
        if !(1..=CW_PERCPU_MAX).contains(&ncpu) {
            return Err(CW_EINVAL);
        }
        let config = Config {
            calloutsize,
            fixed: fixed != 0,
            hz,
            // Exact until cw_percpu_set_deviation asks for calloutng's default precision.
            deviation_percent: 0,
            ..Config::default()
        };
        let set = Set::new(backing, ncpu as usize, config)?;
        let set = Box::into_raw(Box::new(cw_percpu { set }));
        // SAFETY: as above.
        unsafe { out.write(set) };
        Ok(CW_OK)
    })
}

/// Destroys a set, its tables and every callout in them (pending handlers never run). NULL is
/// ignored.
///
/// # Safety
///
/// `set` is NULL or a set from cw_percpu_new, not yet freed, on which no other call is in
/// progress (on any thread, including from a handler); it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn cw_percpu_free(set: *mut cw_percpu) {
    guard(|| {
        if !set.is_null() {
            // SAFETY: by this function's contract `set` came from `Box::into_raw` in
            // cw_percpu_new, is freed only here, and nothing else is using it.
            drop(unsafe { Box::from_raw(set) });
        }
        Ok(CW_OK)
    });
}

/// cw_callouts_set_deviation on every CPU's table of the set.
///
/// Returns 0; CW_EINVAL for NULL or a `percent` above 100.
///
/// # Safety
///
/// `set` is NULL or a live set.
#[no_mangle]
pub unsafe extern "C" fn cw_percpu_set_deviation(set: *mut cw_percpu, percent: u32) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_of(set) }?;
        if percent > 100 {
            return Err(CW_EINVAL);
        }
        each!(s, p => p.set_deviation_percent(percent));
        Ok(CW_OK)
    })
}

/// The number of CPUs (tables) of the set; CW_EINVAL for NULL.
///
/// # Safety
///
/// `set` is NULL or a live set.
#[no_mangle]
pub unsafe extern "C" fn cw_percpu_ncpu(set: *const cw_percpu) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_of(set) }?;
        // At most CW_PERCPU_MAX: fits.
        Ok(each!(s, s => s.ncpu()) as c_int)
    })
}

/// FreeBSD's `callout_init`, bound to CPU `cpu` (0 to ncpu - 1; -1 for CPU 0): a callout,
/// idle and inactive, whose handle is stored in `*handle_out`. The handle names the callout
/// wherever it moves, until cw_percpu_callout_free.
///
/// Returns 0; CW_ENOMEM when that CPU's fixed pool is exhausted or memory is refused;
/// CW_EINVAL (NULL argument, a CPU outside the set). Nothing is written on failure.
///
/// # Safety
///
/// `set` is NULL or a live set; `handle_out` is NULL or valid for writing a cw_handle.
#[no_mangle]
pub unsafe extern "C" fn cw_percpu_callout_init(
    set: *mut cw_percpu,
    cpu: c_int,
    handle_out: *mut cw_handle,
) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_of(set) }?;
        need(handle_out)?;
        let h = each!(s, s => s.callout_init(cpu)).map_err(error_code)?;
        // SAFETY: `handle_out` is non-NULL and valid for writes, by this function's contract.
        unsafe { handle_out.write(h.into()) };
        Ok(CW_OK)
    })
}

/// Frees a callout of the set, cancelling it if pending (or waiting to move); if its handler
/// is running on another thread, waits for it to return first. The handle goes stale.
///
/// Returns 0; CW_EDEADLK from the callout's own handler (nothing changes); CW_ESTALE (a
/// handle this set did not issue, or already freed); CW_EINVAL (NULL set).
///
/// # Safety
///
/// `set` is NULL or a live set.
#[no_mangle]
pub unsafe extern "C" fn cw_percpu_callout_free(set: *mut cw_percpu, handle: cw_handle) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_of(set) }?;
        each!(s, s => s.callout_free(handle.into())).map_err(error_code)?;
        Ok(CW_OK)
    })
}

/// FreeBSD's `callout_reset_on(c, ticks, func, arg, cpu)`: (re)arms the callout to run
/// `func(arg)` `ticks` ticks of CPU `cpu`'s clock from now (`ticks` <= 0 counts as 1), on
/// that CPU's table (-1: the callout's own CPU), moving it as cw_percpu_callout_reset_sbt_on
/// does.
///
/// Returns 1 if the callout was pending, 0 if not; CW_ESTALE; CW_ENOMEM (the new CPU's table
/// is full); CW_ERANGE; CW_EINVAL (NULL set or `func`, a CPU outside the set). On failure
/// nothing changes.
///
/// # Safety
///
/// `set` is NULL or a live set; `func(arg)` is safe to call from the thread that drives the
/// callout's CPU.
#[no_mangle]
pub unsafe extern "C" fn cw_percpu_callout_reset_on(
    set: *mut cw_percpu,
    handle: cw_handle,
    ticks: i64,
    func: cw_func,
    arg: *mut c_void,
    cpu: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_of(set) }?;
        let call = CCall::new(func, arg)?;
        let was = each!(s, s => s.callout_reset_on(handle.into(), ticks, call, cpu))
            .map_err(error_code)?;
        Ok(flag(was))
    })
}

/// calloutng's `callout_reset_sbt_on(c, sbt, precision, func, arg, cpu, flags)` on a per-CPU
/// set: as cw_callout_reset_sbt_on (times, precision and flags alike), with the callout
/// armed on CPU `cpu`'s table (0 to ncpu - 1), or on its own CPU for -1 (while a move waits,
/// the CPU it goes to). Times count on the clock of the table that takes the callout, from
/// when it takes it (for a deferred move, when the handler returns).
///
/// A callout that is idle or pending moves at once: it is cancelled on its old CPU and armed
/// on the new one, and only the new CPU's processing runs it. If its handler is running, the
/// move is deferred until the handler returns (a handler may move its own callout): until
/// then cw_percpu_callout_cpu still names the old CPU and cw_percpu_callout_pending says 1;
/// a later reset replaces the arming the move makes, cw_percpu_callout_stop cancels it. If
/// the new CPU's table cannot take the callout when the handler returns (full, or out of
/// range), it is armed on its old CPU instead. A reset while a cw_percpu_callout_async_drain
/// waits is ignored and returns 0.
///
/// Returns 1 if the callout was pending (a waiting move counts), 0 if not; CW_ESTALE (a
/// handle this set did not issue, or freed); CW_ENOMEM (the new CPU's table is full);
/// CW_ERANGE; CW_EINVAL (NULL set or `func`, bad flags, a CPU outside the set). On failure
/// nothing changes.
///
/// # Safety
///
/// `set` is NULL or a live set; `func(arg)` is safe to call from the thread that drives the
/// callout's CPU.
#[no_mangle]
#[allow(clippy::too_many_arguments)] // FreeBSD's signature, plus the set.
pub unsafe extern "C" fn cw_percpu_callout_reset_sbt_on(
    set: *mut cw_percpu,
    handle: cw_handle,
    sbt: i64,
    precision: i64,
    func: cw_func,
    arg: *mut c_void,
    cpu: c_int,
    flags: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_of(set) }?;
        let call = CCall::new(func, arg)?;
        let (sbt, precision) = (Sbt::from_raw(sbt), Sbt::from_raw(precision));
        // A negative int has bits no flag uses, so it is refused as unknown flags.
        let flags = flags as u32;
        let was = each!(s, s => s.callout_reset_sbt_on(
            handle.into(), sbt, precision, call, cpu, flags
        ))
        .map_err(error_code)?;
        Ok(flag(was))
    })
}

/// FreeBSD's `callout_stop` on a per-CPU set: cancels the callout if pending (or waiting to
/// move) and clears its active flag; does not wait for a running handler.
///
/// Returns 1 if it was pending, 0 if not; CW_ESTALE; CW_EINVAL (NULL set).
///
/// # Safety
///
/// `set` is NULL or a live set.
#[no_mangle]
pub unsafe extern "C" fn cw_percpu_callout_stop(set: *mut cw_percpu, handle: cw_handle) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_of(set) }?;
        let was = each!(s, s => s.callout_stop(handle.into())).map_err(error_code)?;
        Ok(flag(was))
    })
}

/// FreeBSD's `callout_drain` on a per-CPU set: cw_percpu_callout_stop, then waits until the
/// handler is not running on any CPU.
///
/// Returns 1 if the callout was pending, 0 if not; CW_EDEADLK from the callout's own handler
/// (nothing changes); CW_ESTALE; CW_EINVAL (NULL set).
///
/// # Safety
///
/// `set` is NULL or a live set.
#[no_mangle]
pub unsafe extern "C" fn cw_percpu_callout_drain(set: *mut cw_percpu, handle: cw_handle) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_of(set) }?;
        let was = each!(s, s => s.callout_drain(handle.into())).map_err(error_code)?;
        Ok(flag(was))
    })
}

/// FreeBSD's `callout_async_drain(c, drain)` on a per-CPU set: as cw_callout_async_drain,
/// `drain(arg)` running on the thread that drives the CPU whose table ran the handler. A
/// waiting move is cancelled.
///
/// Returns CW_ASYNC_DRAIN_PENDING (0), CW_ASYNC_DRAIN_CANCELLED (1) or CW_ASYNC_DRAIN_IDLE
/// (2); CW_EBUSY when a drain already waits for the running handler; CW_ENOMEM; CW_ESTALE;
/// CW_EINVAL (NULL set or `drain`). On error nothing changes.
///
/// # Safety
///
/// `set` is NULL or a live set; `drain(arg)` is safe to call from the thread that drives the
/// callout's CPU.
#[no_mangle]
pub unsafe extern "C" fn cw_percpu_callout_async_drain(
    set: *mut cw_percpu,
    handle: cw_handle,
    drain: cw_func,
) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_of(set) }?;
        let drain = drain.ok_or(CW_EINVAL)?;
        let done = each!(s, s => s.callout_async_drain(handle.into(), |c| c.drained_by(drain)))
            .map_err(error_code)?;
        Ok(drain_code(done))
    })
}

/// FreeBSD's `callout_pending` on a per-CPU set: 1 if the callout is armed and its handler
/// not yet started (a move waiting for the handler counts), 0 if not; CW_ESTALE; CW_EINVAL
/// (NULL set).
///
/// # Safety
///
/// `set` is NULL or a live set.
#[no_mangle]
pub unsafe extern "C" fn cw_percpu_callout_pending(
    set: *const cw_percpu,
    handle: cw_handle,
) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_of(set) }?;
        let pending = each!(s, s => s.callout_pending(handle.into())).map_err(error_code)?;
        Ok(flag(pending))
    })
}

/// FreeBSD's `callout_active` on a per-CPU set: 1 if the callout was armed and not since
/// stopped or deactivated, 0 if not; CW_ESTALE; CW_EINVAL (NULL set).
///
/// # Safety
///
/// `set` is NULL or a live set.
#[no_mangle]
pub unsafe extern "C" fn cw_percpu_callout_active(
    set: *const cw_percpu,
    handle: cw_handle,
) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_of(set) }?;
        let active = each!(s, s => s.callout_active(handle.into())).map_err(error_code)?;
        Ok(flag(active))
    })
}

/// FreeBSD's `callout_deactivate` on a per-CPU set: clears the active flag.
///
/// Returns 0; CW_ESTALE; CW_EINVAL (NULL set).
///
/// # Safety
///
/// `set` is NULL or a live set.
#[no_mangle]
pub unsafe extern "C" fn cw_percpu_callout_deactivate(
    set: *mut cw_percpu,
    handle: cw_handle,
) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_of(set) }?;
        each!(s, s => s.callout_deactivate(handle.into())).map_err(error_code)?;
        Ok(CW_OK)
    })
}

/// The CPU whose table holds the callout now (the only one whose processing can run it):
/// 0 to ncpu - 1. While a move waits for the handler to return, the old CPU.
///
/// Returns the CPU; CW_ESTALE; CW_EINVAL (NULL set).
///
/// # Safety
///
/// `set` is NULL or a live set.
#[no_mangle]
pub unsafe extern "C" fn cw_percpu_callout_cpu(set: *const cw_percpu, handle: cw_handle) -> c_int {
    guard(|| {
        // SAFETY: `set` is NULL or live, by this function's contract.
        let s = unsafe { set_of(set) }?;
        let cpu = each!(s, s => s.callout_cpu(handle.into())).map_err(error_code)?;
        // Below CW_PERCPU_MAX: fits.
        Ok(cpu as c_int)
    })
}
