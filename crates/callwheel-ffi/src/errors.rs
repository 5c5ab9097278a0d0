//! The codes every function returns, and their texts: one that fits any call
//! (cw_strerror), and one per interface that says what the code means for that interface's
//! calls (cw_wheel_strerror, cw_callout_strerror, cw_timerset_strerror, cw_sleep_strerror).

use core::ffi::{c_char, c_int, CStr};
use std::panic;

use crate::{CW_EINVARIANT, CW_ENOSPC, CW_ESHUTDOWN, CW_ETIMEDOUT};

// The codes are written `0 - n` so that the header's #defines are parenthesised:
// `x-CW_EINVAL` must not read as `x--22`.

/// Success.
pub const CW_OK: c_int = 0;
/// Invalid argument: a NULL object, out-pointer or function, or a value the call does not
/// accept (each function says which). Equal to -EINVAL on Linux.
pub const CW_EINVAL: c_int = 0 - 22;
/// Out of room: a fixed capacity (a wheel's, a callout table's pool) is full, or the object
/// needed memory and the allocator refused it. Nothing changed: every timer or callout set
/// before is still pending. Equal to -ENOMEM on Linux.
pub const CW_ENOMEM: c_int = 0 - 12;
/// The handle names nothing live here: its timer or callout already fired (one-shot),
/// was deleted, cancelled or freed, or it was issued by another wheel or table, or made up.
/// Nothing changed. Equal to -ESTALE on Linux.
pub const CW_ESTALE: c_int = 0 - 116;
/// cw_callout_drain or cw_callout_free from the callout's own handler: waiting for the
/// handler would never return; or a cw_sleep_sbt or cw_cv_timedwait_sbt on the process-wide
/// runtime's driver thread, which would wait for its own timer. Nothing changed.
/// Equal to -EDEADLK on Linux.
pub const CW_EDEADLK: c_int = 0 - 35;
/// cw_softclock or cw_hardclock while another thread (or the caller, from a handler) is
/// already running the handlers of that CPU of the table; a callout's
/// record is in use by its running handler; or a cw_callout_async_drain already waits for
/// the running handler. Equal to -EBUSY on Linux.
pub const CW_EBUSY: c_int = 0 - 16;
/// A time out of range: before a wheel's time, after the last tick (UINT64_MAX) of a wheel or
/// callout table, or beyond what a callout table's backing can hold. Nothing changed. Equal
/// to -ERANGE on Linux.
pub const CW_ERANGE: c_int = 0 - 34;
/// A bug inside callwheel: a Rust panic was caught at the boundary. The object is still
/// usable (every change is complete before any code that can panic runs), but the failing
/// call's effect is unknown. Not an errno value.
pub const CW_EPANIC: c_int = 0 - 1000;

/// Which interface's words a code is described in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Interface {
    Any,
    Wheel,
    Callout,
    TimerSet,
    Sleep,
}

/// The text of `code` for `interface`; the general text where the interface has no word of its
/// own for it (a code its calls do not return).
fn describe(interface: Interface, code: c_int) -> &'static CStr {
    use Interface::{Callout, Sleep, TimerSet, Wheel};
    match (interface, code) {
        (_, 0..) => c"success",
        (Wheel, CW_EINVAL) => c"invalid argument: a NULL wheel or pointer, a zero period, an unknown missed-period policy, a capacity too large, or a one-shot timer where a periodic one is needed",
        (Wheel, CW_ENOMEM) => c"the wheel is full: its fixed capacity is reached, or it could not get memory to grow",
        (Wheel, CW_ESTALE) => c"the handle names no pending timer of this wheel: it fired, was deleted, or belongs to another wheel",
        (Wheel, CW_ERANGE) => c"time out of range: before the wheel's time (time never goes back), or a relative time past the end of time",
        (Wheel, CW_EINVARIANT) => c"an internal invariant of the wheel does not hold (cw_wheel_check)",
        (Callout, CW_EINVAL) => c"invalid argument: a NULL table, pointer or function, an unknown backing, bad flags or cpu, a handle of the wrong kind, or a bad configuration",
        (Callout, CW_ENOMEM) => c"out of callout records: the fixed pool is full, or the table could not get memory to grow",
        (Callout, CW_ESTALE) => c"stale or unknown callout handle: its callout ran, was cancelled or freed, or belongs to another table",
        (Callout, CW_EDEADLK) => c"waiting would deadlock: the callout's own handler runs on this thread",
        (Callout, CW_EBUSY) => c"busy: handlers of this table run on another thread (or this one), or the callout's handler is running",
        (Callout, CW_ERANGE) => c"the deadline is after the table's last tick, or beyond what its backing scheme holds",
        (TimerSet, CW_EINVAL) => c"invalid argument: a NULL set or pointer, a handle that names none of the set's timers, a zero or out-of-range time, or an unknown policy",
        (TimerSet, CW_ENOMEM) => c"out of memory: the timer set or its runtime could not get memory",
        (TimerSet, CW_ENOSPC) => c"the timer set holds its quota of timers (or the process has no handle left)",
        (TimerSet, CW_EDEADLK) => c"the call would wait for itself: it runs on the runtime's driver thread",
        (TimerSet, CW_EBUSY) => c"busy: the process-wide set already exists",
        (TimerSet, CW_ESHUTDOWN) => c"the set's runtime has shut down: it was dropped, or the set is a forked child's copy of the parent's (make sets in the child)",
        (Sleep, CW_EINVAL) => c"invalid argument: a NULL condition variable or mutex, a negative or out-of-range time, or unknown flags",
        (Sleep, CW_EDEADLK) => c"the wait would deadlock: it runs on the runtime's driver thread, which would wait for its own timer",
        (Sleep, CW_EBUSY) => c"busy: a thread still waits on the condition variable",
        (Sleep, CW_ENOMEM) => c"out of memory: the sleep's timer or the runtime could not get memory",
        (Sleep, CW_ETIMEDOUT) => c"the wait's timeout came before a signal of the condition variable",
        (_, CW_EINVAL) => c"invalid argument: a NULL pointer or function, or a value the call does not accept",
        (_, CW_ENOMEM) => c"out of room: a fixed capacity is full, or memory to grow was refused",
        (_, CW_ESTALE) => c"stale or unknown handle: it names nothing live in the object given",
        (_, CW_EDEADLK) => c"waiting would deadlock",
        (_, CW_EBUSY) => c"busy: another thread (or this one) is using the object",
        (_, CW_ERANGE) => c"time out of range",
        (_, CW_EPANIC) => c"internal error: a panic was caught inside callwheel",
        (_, CW_ENOSPC) => c"a quota is full",
        (_, CW_EINVARIANT) => c"an internal invariant does not hold",
        (_, CW_ETIMEDOUT) => c"timed out",
        (_, CW_ESHUTDOWN) => c"the object's runtime has shut down (or is the parent's, in a forked child)",
        (_, -4095..0) => c"a system call failed (the code is the negated errno)",
        _ => c"unknown callwheel error code",
    }
}

/// The text, as a C string that lives for the program; never NULL.
fn text(interface: Interface, code: c_int) -> *const c_char {
    panic::catch_unwind(|| describe(interface, code))
        .unwrap_or(c"callwheel: internal error")
        .as_ptr()
}

/// A static, NUL-terminated description of a code returned by any function of this library,
/// in words that fit every interface (any non-negative value is a success). Never NULL;
/// unknown codes get a generic text. The interface's own function (cw_wheel_strerror, ...)
/// says more.
#[no_mangle]
pub extern "C" fn cw_strerror(code: c_int) -> *const c_char {
    text(Interface::Any, code)
}

/// cw_strerror in the caller-driven wheel's words (cw_wheel_*), for the codes its calls
/// return.
#[no_mangle]
pub extern "C" fn cw_wheel_strerror(code: c_int) -> *const c_char {
    text(Interface::Wheel, code)
}

/// cw_strerror in the callout tables' words (cw_callout*, cw_timeout, cw_setcallout,
/// cw_hardclock, cw_softclock), for the codes their calls return.
#[no_mangle]
pub extern "C" fn cw_callout_strerror(code: c_int) -> *const c_char {
    text(Interface::Callout, code)
}

/// cw_strerror in the timer sets' words (cw_timerset_*, cw_timer_*, cw_multireal_*), for the
/// codes their calls return (the setitimer-shaped calls report errno instead).
#[no_mangle]
pub extern "C" fn cw_timerset_strerror(code: c_int) -> *const c_char {
    text(Interface::TimerSet, code)
}

/// cw_strerror in the words of sleeping with precision (cw_sleep_sbt, cw_cv_*), for the codes
/// their calls return.
#[no_mangle]
pub extern "C" fn cw_sleep_strerror(code: c_int) -> *const c_char {
    text(Interface::Sleep, code)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The codes each interface's calls return (from their documentation).
    const RETURNED: [(Interface, &[c_int]); 4] = [
        (
            Interface::Wheel,
            &[CW_EINVAL, CW_ENOMEM, CW_ESTALE, CW_ERANGE, CW_EINVARIANT],
        ),
        (
            Interface::Callout,
            &[
                CW_EINVAL, CW_ENOMEM, CW_ESTALE, CW_EDEADLK, CW_EBUSY, CW_ERANGE,
            ],
        ),
        (
            Interface::TimerSet,
            &[
                CW_EINVAL,
                CW_ENOMEM,
                CW_ENOSPC,
                CW_EDEADLK,
                CW_EBUSY,
                CW_ESHUTDOWN,
            ],
        ),
        (
            Interface::Sleep,
            &[CW_EINVAL, CW_ENOMEM, CW_EDEADLK, CW_EBUSY, CW_ETIMEDOUT],
        ),
    ];

    #[test]
    fn each_interface_has_its_own_words_for_the_codes_it_returns() {
        for (interface, codes) in RETURNED {
            for &code in codes {
                let own = describe(interface, code);
                assert_ne!(
                    own,
                    describe(Interface::Any, code),
                    "{interface:?} has no text of its own for {code}"
                );
                let own = own.to_str().unwrap();
                let foreign = match interface {
                    Interface::Wheel => ["callout", "timer set", "condition"],
                    Interface::Callout => ["wheel", "timer set", "condition"],
                    Interface::TimerSet => ["wheel", "callout", "condition"],
                    _ => ["wheel", "callout", "timer set"],
                };
                for word in foreign {
                    assert!(!own.contains(word), "{interface:?} {code}: {own}");
                }
            }
        }
    }

    #[test]
    fn the_general_texts_name_no_interface() {
        for code in [
            CW_EINVAL, CW_ENOMEM, CW_ESTALE, CW_EDEADLK, CW_EBUSY, CW_ERANGE,
        ] {
            let t = describe(Interface::Any, code).to_str().unwrap();
            for word in ["wheel", "callout", "table", "timer set", "condition"] {
                assert!(!t.contains(word), "{code}: {t}");
            }
        }
    }

    #[test]
    fn every_text_is_a_c_string_and_never_null() {
        for f in [
            cw_strerror,
            cw_wheel_strerror,
            cw_callout_strerror,
            cw_timerset_strerror,
            cw_sleep_strerror,
        ] {
            for code in [0, 5, CW_EINVAL, CW_EPANIC, -5, -5000, c_int::MIN] {
                assert!(!f(code).is_null());
            }
        }
        assert_eq!(
            describe(Interface::Wheel, -5000),
            c"unknown callwheel error code"
        );
    }
}
