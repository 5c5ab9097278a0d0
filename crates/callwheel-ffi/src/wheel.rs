//! The caller-driven wheel for C (`cw_wheel_*`): callwheel's production wheel in nanoseconds,
//! driven by the caller's own event loop, with no thread, no lock and no global state.
//!
//! The loop reads its clock, hands the time to the wheel ([`cw_wheel_update`]), pulls what is
//! due ([`cw_wheel_get`], a batch at a time with [`cw_wheel_get_many`], or [`cw_wheel_expire`]
//! with a callback; [`cw_wheel_advance`] hands the time and pulls a batch in one call), and
//! sleeps until [`cw_wheel_next_wakeup`] (an absolute time) or for
//! [`cw_wheel_timeout`] (a relative one, for `epoll_wait`, `poll` or a timerfd). Every timer
//! has a window `[deadline, deadline + tolerance]`: the wake-up asked for is the earliest
//! window end, so timers whose windows overlap share one wake-up, and none fires before its
//! deadline.

use core::ffi::{c_char, c_int, c_void};

use callwheel::{Error, Handle, Scheme, Timers, Wheel};

use crate::timerset::missed;
use crate::{cw_handle, guard, need, CW_EINVAL, CW_ENOMEM, CW_ERANGE, CW_ESTALE, CW_OK};

/// An internal invariant of a wheel does not hold (cw_wheel_check found it): a defect in
/// callwheel, or memory of the wheel overwritten by the program.
pub const CW_EINVARIANT: c_int = 0 - 1001;

/// A caller-driven timer wheel (opaque). One thread at a time may call into a wheel (it has
/// no lock); different wheels are independent, on any threads.
pub struct cw_wheel {
    pub(crate) wheel: Wheel<u64>,
    /// The time of the latest cw_wheel_update, cw_wheel_advance or cw_wheel_expire (or
    /// creation): what relative times count from and what cw_wheel_get fires up to.
    pub(crate) now: u64,
    /// A pull found nothing (else) due at `now`, and nothing has been armed since: the wake-up
    /// query need not ask again whether a timer is due (an event loop's every turn ends so).
    pub(crate) dry: bool,
}

/// One expired timer, as cw_wheel_get returns it and cw_wheel_expire passes it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct cw_expiry {
    /// The timer's handle. A one-shot timer's is already stale; a periodic timer's stays valid
    /// (it has been re-armed for its next period), so cw_wheel_del can stop it.
    pub handle: cw_handle,
    /// The value the timer was added with.
    pub value: u64,
    /// The deadline it fired for, in the caller's nanoseconds.
    pub deadline: u64,
    /// For a periodic timer, the whole periods this firing missed; 0 otherwise.
    pub overruns: u64,
}

/// What cw_wheel_counts reports about a wheel.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct cw_wheel_info {
    /// Timers pending now.
    pub pending: usize,
    /// Bytes the wheel holds (its slab at capacity, links, slot summaries, schedules).
    pub bytes: usize,
    /// The wheel's time: the latest cw_wheel_update.
    pub now: u64,
    /// Timers added, ever.
    pub added: u64,
    /// Timers deleted while pending, ever.
    pub deleted: u64,
    /// Resets of pending timers, ever.
    pub reset: u64,
    /// Timers fired (periodic ones once per firing), ever.
    pub fired: u64,
}

/// A callback for cw_wheel_expire: called with the caller's `arg` and one expired timer.
pub type cw_wheel_fn = Option<unsafe extern "C" fn(arg: *mut c_void, expiry: *const cw_expiry)>;

/// The C code of a refusal by the wheel. Cold: an add then tests one tag for success and
/// leaves the mapping of refusals out of its path.
#[cold]
#[inline(never)]
fn wheel_code(e: Error) -> c_int {
    match e {
        Error::Full { .. } | Error::NoMemory => CW_ENOMEM,
        // A zero period, an impossible configuration, and any refusal added later.
        _ => CW_EINVAL,
    }
}

/// The wheel behind `w`, or CW_EINVAL for NULL.
///
/// # Safety
///
/// `w` is NULL or a wheel from [`cw_wheel_new`], not freed, with no other call on it in
/// progress during `'a`.
pub(crate) unsafe fn wheel_mut<'a>(w: *mut cw_wheel) -> Result<&'a mut cw_wheel, c_int> {
    // SAFETY: by this function's contract, a non-NULL `w` is a live wheel used by this call
    // alone, so a unique reference to it is sound for `'a`.
    unsafe { w.as_mut() }.ok_or(CW_EINVAL)
}

/// [`wheel_mut`], shared.
///
/// # Safety
///
/// As for [`wheel_mut`].
pub(crate) unsafe fn wheel_ref<'a>(w: *const cw_wheel) -> Result<&'a cw_wheel, c_int> {
    // SAFETY: as in `wheel_mut`; the reference is shared and nothing mutates the wheel while
    // it lives.
    unsafe { w.as_ref() }.ok_or(CW_EINVAL)
}

/// Writes `v` through `out` when `out` is not NULL.
///
/// # Safety
///
/// `out` is NULL or valid for writes of a `T`.
pub(crate) unsafe fn write_opt<T>(out: *mut T, v: T) {
    if !out.is_null() {
        // SAFETY: non-NULL and, by this function's contract, valid for writes.
        unsafe { out.write(v) };
    }
}

impl cw_wheel {
    /// The absolute deadline `delay` after the wheel's time, or CW_ERANGE past the end of time.
    pub(crate) fn after(&self, delay: u64) -> Result<u64, c_int> {
        self.now.checked_add(delay).ok_or(CW_ERANGE)
    }

    // Each entry point has its own guard around its own closure, so the guard is inlined into
    // it: a C caller pays one call (a helper shared by two entry points was a second).
    #[inline(always)]
    fn add(&mut self, deadline: u64, tolerance: u64, value: u64) -> Result<cw_handle, c_int> {
        // An exact timer (the common case) takes the core's start with its tolerance known to
        // be 0, which keeps the window with no arithmetic.
        let h = if tolerance == 0 {
            self.wheel.start(deadline, value)
        } else {
            self.start_tolerant(deadline, tolerance, value)
        }
        .map_err(wheel_code)?;
        self.dry = false;
        Ok(h.into())
    }

    /// A start with a tolerance, for `add`. Out of line: inlined beside the exact start, its
    /// window arithmetic took registers that every add then saved and restored (8
    /// instructions per exact add through C).
    #[inline(never)]
    fn start_tolerant(
        &mut self,
        deadline: u64,
        tolerance: u64,
        value: u64,
    ) -> Result<Handle, Error> {
        self.wheel.start_with(deadline, tolerance, value)
    }

    #[inline(always)]
    fn reset(&mut self, handle: cw_handle, deadline: u64, tolerance: u64) -> Result<c_int, c_int> {
        self.dry = false;
        match self.wheel.reset(Handle::from(handle), deadline, tolerance) {
            Some(_) => Ok(CW_OK),
            None => Err(CW_ESTALE),
        }
    }

    /// Moves the wheel's time to `now`; CW_ERANGE (nothing changed) when it would go back.
    #[inline(always)]
    pub(crate) fn set_now(&mut self, now: u64) -> Result<(), c_int> {
        if now < self.now {
            return Err(CW_ERANGE);
        }
        if now != self.now {
            self.now = now;
            self.dry = false;
        }
        Ok(())
    }

    /// Whether a timer may be due at the wheel's time: exact, and a few instructions, once the
    /// pulls have brought the core there; before that, from the core's earliest deadline
    /// (early after deletes and resets, never late).
    pub(crate) fn due_now(&self) -> bool {
        self.wheel.may_expire_at(self.now)
    }

    /// The instant to wake at: the wheel's time when a timer is due, else the earliest window
    /// end. Inlined, as the core's query is into it: a C caller's wake-up query is then one
    /// call (two calls cost 9 instructions more per query).
    #[inline(always)]
    pub(crate) fn wakeup(&self) -> Option<u64> {
        if !self.dry && self.due_now() {
            return Some(self.now);
        }
        self.wheel.next_wakeup().map(|d| d.max(self.now))
    }
}

/// Creates a wheel whose time starts at `now` (nanoseconds on any clock the caller chooses,
/// CLOCK_MONOTONIC for an event loop).
///
/// - `capacity`: 0 for a wheel that grows as timers are added (a refused allocation is
///   CW_ENOMEM with nothing changed); otherwise the most timers it holds, reserved now (adding
///   more is CW_ENOMEM), below 2^32 - 707 (the wheel's index space).
/// - `out`: receives the wheel, or NULL on failure.
///
/// Returns 0; CW_EINVAL (NULL `out`, capacity too large); CW_ENOMEM when a fixed capacity
/// cannot be reserved.
///
/// # Safety
///
/// `out` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_new(capacity: usize, now: u64, out: *mut *mut cw_wheel) -> c_int {
    guard(|| {
        need(out)?;
        // SAFETY: `out` is non-NULL and, by this function's contract, valid for writes.
        unsafe { out.write(core::ptr::null_mut()) };
        let mut wheel = if capacity == 0 {
            Wheel::new()
        } else {
            Wheel::with_capacity(capacity).map_err(wheel_code)?
        };
        // An empty wheel moves to `now` at once (nothing to fire).
        let _ = wheel.advance(now, callwheel::Budget::UNLIMITED, |_, _| {});
        let w = Box::into_raw(Box::new(cw_wheel {
            wheel,
            now,
            dry: false,
        }));
        // SAFETY: as above.
        unsafe { out.write(w) };
        Ok(CW_OK)
    })
}

/// Makes room for `additional` more timers than are pending, so that adding that many
/// allocates nothing. Exact: an add that finds no free slot grows the wheel by doubling, which
/// can leave half of it spare; this grows it to what is asked (32 bytes per timer and 17 KiB
/// for the wheel's slots). On a wheel of fixed capacity it checks that they fit.
///
/// Returns 0; CW_EINVAL for NULL `w`; CW_ENOMEM when they would not fit (the fixed capacity,
/// the wheel's index space of 2^32 - 707 timers) or the allocator refuses, with no timer
/// changed.
///
/// # Safety
///
/// `w` is NULL or a live wheel on which no other call is in progress.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_reserve(w: *mut cw_wheel, additional: usize) -> c_int {
    guard(|| {
        // SAFETY: by this function's contract.
        let w = unsafe { wheel_mut(w) }?;
        w.wheel.reserve(additional).map_err(wheel_code)?;
        Ok(CW_OK)
    })
}

/// Destroys a wheel and every timer in it. NULL is ignored.
///
/// # Safety
///
/// `w` is NULL or a wheel from cw_wheel_new, not yet freed, with no call on it in progress
/// (not even the cw_wheel_expire whose callback is running); it must not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_free(w: *mut cw_wheel) {
    if !w.is_null() {
        // SAFETY: by this function's contract `w` came from Box::into_raw in cw_wheel_new and
        // is freed once, here.
        let w = unsafe { Box::from_raw(w) };
        // Dropping a wheel of integers runs no user code; a panic cannot cross into C.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(w)));
    }
}

/// Adds a timer due at the absolute time `deadline`, in the window [deadline, deadline +
/// tolerance] (the end saturates at UINT64_MAX; a tolerance of 2^30 ns or more is kept to 25
/// significant bits, rounded down, so the end is earlier by less than 2^-24 of it, never
/// later), carrying `value` (a `(uint64_t)(uintptr_t)` pointer, an index, anything). It is
/// due at its firing instant (see cw_wheel_get: the deadline, or with a window a coarse slot
/// boundary in its first eighth); one at or before the wheel's time fires at the next
/// cw_wheel_get. `out` receives its handle: point it where the handle is kept
/// (`&conn->timer`), the fastest way to keep it.
///
/// Returns 0; CW_EINVAL (NULL `w` or `out`); CW_ENOMEM (a fixed capacity is full, or the
/// allocator refused to grow the wheel: nothing changed).
///
/// # Safety
///
/// `w` is NULL or a live wheel on which no other call is in progress; `out` is NULL or valid
/// for writing a cw_handle.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_add(
    w: *mut cw_wheel,
    deadline: u64,
    tolerance: u64,
    value: u64,
    out: *mut cw_handle,
) -> c_int {
    guard(|| {
        need(out)?;
        // SAFETY: by this function's contract.
        let w = unsafe { wheel_mut(w) }?;
        let h = w.add(deadline, tolerance, value)?;
        // SAFETY: `out` is non-NULL and valid for writes by this function's contract.
        unsafe { out.write(h) };
        Ok(CW_OK)
    })
}

/// Adds a timer due `delay` nanoseconds after the wheel's time (the latest cw_wheel_update),
/// otherwise as cw_wheel_add.
///
/// Returns as cw_wheel_add, and CW_ERANGE when the deadline would pass UINT64_MAX.
///
/// # Safety
///
/// As for cw_wheel_add.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_add_in(
    w: *mut cw_wheel,
    delay: u64,
    tolerance: u64,
    value: u64,
    out: *mut cw_handle,
) -> c_int {
    guard(|| {
        need(out)?;
        // SAFETY: by this function's contract.
        let w = unsafe { wheel_mut(w) }?;
        let h = w.add(w.after(delay)?, tolerance, value)?;
        // SAFETY: `out` is non-NULL and valid for writes by this function's contract.
        unsafe { out.write(h) };
        Ok(CW_OK)
    })
}

/// Adds a periodic timer: first due at the absolute time `first`, then every `period`
/// nanoseconds after its previous deadline (never drifting with late pulls), each window
/// `tolerance` wide (its end kept as for cw_wheel_add), until deleted. `missed`
/// (CW_MISSED_BURST, CW_MISSED_DELAY or CW_MISSED_SKIP) decides what a pull made a period or
/// more late does; each expiry reports the periods it missed. A timer whose next deadline would pass UINT64_MAX fires its last
/// time and is gone. Its handle stays valid across firings.
///
/// Returns 0; CW_EINVAL (NULL `w` or `out`, a zero period, an unknown `missed`); CW_ENOMEM.
///
/// # Safety
///
/// As for cw_wheel_add.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_add_periodic(
    w: *mut cw_wheel,
    first: u64,
    period: u64,
    tolerance: u64,
    missed_policy: c_int,
    value: u64,
    out: *mut cw_handle,
) -> c_int {
    guard(|| {
        need(out)?;
        let policy = missed(missed_policy)?;
        // SAFETY: by this function's contract.
        let w = unsafe { wheel_mut(w) }?;
        let h = w
            .wheel
            .start_periodic(first, period, tolerance, policy, value)
            .map_err(wheel_code)?;
        w.dry = false;
        // SAFETY: `out` is non-NULL and valid for writes by this function's contract.
        unsafe { out.write(h.into()) };
        Ok(CW_OK)
    })
}

/// Deletes a pending timer; `value` (may be NULL) receives the value it carried.
///
/// Returns 0; CW_ESTALE when `handle` names no pending timer of this wheel (it fired, was
/// deleted, belongs to another wheel or was made up: nothing changes); CW_EINVAL for NULL `w`.
///
/// # Safety
///
/// `w` is NULL or a live wheel on which no other call is in progress; `value` is NULL or valid
/// for writing a uint64_t.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_del(
    w: *mut cw_wheel,
    handle: cw_handle,
    value: *mut u64,
) -> c_int {
    guard(|| {
        // SAFETY: by this function's contract.
        let w = unsafe { wheel_mut(w) }?;
        let v = w.wheel.stop(Handle::from(handle)).ok_or(CW_ESTALE)?;
        // SAFETY: NULL or valid for writes by this function's contract.
        unsafe { write_opt(value, v) };
        Ok(CW_OK)
    })
}

/// Moves a pending timer to the window [deadline, deadline + tolerance] (absolute; its end kept
/// as for cw_wheel_add). It keeps its handle and value; a periodic timer keeps its period and
/// takes the new tolerance.
///
/// Returns 0; CW_ESTALE (as for cw_wheel_del); CW_EINVAL for NULL `w`.
///
/// # Safety
///
/// `w` is NULL or a live wheel on which no other call is in progress.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_reset(
    w: *mut cw_wheel,
    handle: cw_handle,
    deadline: u64,
    tolerance: u64,
) -> c_int {
    guard(|| {
        // SAFETY: by this function's contract.
        let w = unsafe { wheel_mut(w) }?;
        w.reset(handle, deadline, tolerance)
    })
}

/// cw_wheel_reset to `delay` nanoseconds after the wheel's time.
///
/// Returns as cw_wheel_reset, and CW_ERANGE when the deadline would pass UINT64_MAX.
///
/// # Safety
///
/// As for cw_wheel_reset.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_reset_in(
    w: *mut cw_wheel,
    handle: cw_handle,
    delay: u64,
    tolerance: u64,
) -> c_int {
    guard(|| {
        // SAFETY: by this function's contract.
        let w = unsafe { wheel_mut(w) }?;
        w.reset(handle, w.after(delay)?, tolerance)
    })
}

/// Whether `handle` names a pending timer of this wheel: 1 (and its deadline in `deadline`,
/// which may be NULL) or 0.
///
/// Returns 1 or 0; CW_EINVAL for NULL `w`.
///
/// # Safety
///
/// `w` is NULL or a live wheel on which no call that changes it is in progress; `deadline` is
/// NULL or valid for writing a uint64_t.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_pending(
    w: *const cw_wheel,
    handle: cw_handle,
    deadline: *mut u64,
) -> c_int {
    guard(|| {
        // SAFETY: by this function's contract.
        let w = unsafe { wheel_ref(w) }?;
        match w.wheel.deadline(Handle::from(handle)) {
            Some(d) => {
                // SAFETY: NULL or valid for writes by this function's contract.
                unsafe { write_opt(deadline, d) };
                Ok(1)
            }
            None => Ok(0),
        }
    })
}

/// Sets the wheel's time to `now`, the caller's clock reading. Nothing fires here: the timers
/// due by `now` are then pulled with cw_wheel_get.
///
/// Returns 0; CW_ERANGE when `now` is earlier than the wheel's time (time never goes back:
/// nothing changes); CW_EINVAL for NULL `w`.
///
/// # Safety
///
/// `w` is NULL or a live wheel on which no other call is in progress.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_update(w: *mut cw_wheel, now: u64) -> c_int {
    guard(|| {
        // SAFETY: by this function's contract.
        let w = unsafe { wheel_mut(w) }?;
        w.set_now(now)?;
        Ok(CW_OK)
    })
}

/// The wheel's counts: pending timers, bytes held, its time and what happened since it was
/// created.
///
/// Returns 0; CW_EINVAL for NULL `w` or `out`.
///
/// # Safety
///
/// `w` is NULL or a live wheel on which no call that changes it is in progress; `out` is NULL
/// or valid for writing a cw_wheel_info.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_counts(w: *const cw_wheel, out: *mut cw_wheel_info) -> c_int {
    guard(|| {
        need(out)?;
        // SAFETY: by this function's contract.
        let w = unsafe { wheel_ref(w) }?;
        let s = w.wheel.stats();
        let counts = cw_wheel_info {
            pending: w.wheel.len(),
            bytes: w.wheel.memory_bytes() + core::mem::size_of::<cw_wheel>(),
            now: w.now,
            added: s.started,
            deleted: s.stopped,
            reset: s.reset,
            fired: s.fired,
        };
        // SAFETY: non-NULL and valid for writes by this function's contract.
        unsafe { out.write(counts) };
        Ok(CW_OK)
    })
}

/// Verifies every internal invariant of the wheel by brute force (O(timers + slots): for
/// tests and debugging, as wahern/timeout's timeouts_check). When one is broken and `buf` is
/// not NULL, the text naming it is copied into `buf` (at most `len` bytes, always
/// NUL-terminated when `len` > 0).
///
/// Returns 0 when every invariant holds; CW_EINVARIANT otherwise; CW_EINVAL for NULL `w`.
///
/// # Safety
///
/// `w` is NULL or a live wheel on which no call that changes it is in progress; `buf` is NULL
/// or valid for writing `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn cw_wheel_check(w: *const cw_wheel, buf: *mut c_char, len: usize) -> c_int {
    guard(|| {
        // SAFETY: by this function's contract.
        let w = unsafe { wheel_ref(w) }?;
        let Err(broken) = w.wheel.check_invariants() else {
            return Ok(CW_OK);
        };
        if !buf.is_null() && len > 0 {
            let n = broken.len().min(len - 1);
            // SAFETY: `buf` is valid for `len` bytes by this function's contract and `n + 1`
            // is at most `len`; the message is Rust memory, which cannot overlap the
            // caller's buffer.
            unsafe {
                core::ptr::copy_nonoverlapping(broken.as_ptr().cast::<c_char>(), buf, n);
                buf.add(n).write(0);
            }
        }
        Err(CW_EINVARIANT)
    })
}
