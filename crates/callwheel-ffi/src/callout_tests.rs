//! The extern functions called directly, as C would (and as Miri can check).

use super::*;
use crate::*;
use core::cell::{Cell, RefCell};
use core::ptr::{null, null_mut, without_provenance_mut};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

const BACKINGS: [c_int; 3] = [CW_BACKING_LIST, CW_BACKING_HASHED, CW_BACKING_WHEEL];

/// A handler type, as C passes it.
type Func = unsafe extern "C" fn(*mut c_void);

thread_local! {
    /// Tags of the `record` handlers run on this thread, in order.
    static LOG: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// The handler most tests use: logs its argument's address (a tag, never dereferenced).
unsafe extern "C" fn record(arg: *mut c_void) {
    LOG.with(|log| log.borrow_mut().push(arg.addr()));
}

/// A second handler, so (func, arg) pairs can differ by function only.
unsafe extern "C" fn record_other(arg: *mut c_void) {
    LOG.with(|log| log.borrow_mut().push(arg.addr() + 1000));
}

// The handlers as function pointers, made once. (func, arg) matching compares addresses: C
// guarantees one address per function, Rust does not promise that each use of a function
// item gives the same pointer (and Miri deliberately varies it), so the tests name each
// handler through one static, as a C program names one function.
static RECORD: Func = record;
static RECORD_OTHER: Func = record_other;
static CANCEL_NEXT: Func = cancel_next;
static REARM: Func = rearm;
static COUNT: Func = count;
static SLOW: Func = slow;

fn take_log() -> Vec<usize> {
    LOG.with(|log| log.take())
}

/// An argument that is only a number.
fn tag(n: usize) -> *mut c_void {
    without_provenance_mut(n)
}

fn f(func: Func) -> cw_func {
    Some(func)
}

/// A table owned by a test, freed when dropped. Its methods are the extern functions.
struct T(*mut cw_callouts);

// SAFETY (for every method below): `self.0` came from cw_callouts_new and is freed only by
// `Drop`, so it is live; out-pointers are references to locals.
impl T {
    fn new(backing: c_int, calloutsize: usize, fixed: bool) -> T {
        let mut cw = null_mut();
        // SAFETY: `&mut cw` is valid for writing a pointer.
        let rc =
            unsafe { cw_callouts_new(backing, calloutsize, c_int::from(fixed), 1000, &mut cw) };
        assert_eq!(rc, CW_OK);
        assert!(!cw.is_null());
        T(cw)
    }

    fn table(&self) -> &cw_callouts {
        // SAFETY: see the impl.
        unsafe { &*self.0 }
    }

    fn check(&self) {
        self.table().check_invariants().unwrap();
    }

    fn hardclock(&self) -> c_int {
        // SAFETY: see the impl.
        unsafe { cw_hardclock(self.0) }
    }

    fn softclock(&self) -> c_int {
        // SAFETY: see the impl.
        unsafe { cw_softclock(self.0) }
    }

    /// `n` clock ticks, each followed by softclock when it has work; returns handlers run.
    fn run(&self, n: usize) -> c_int {
        let mut ran = 0;
        for _ in 0..n {
            let rc = self.hardclock();
            assert!(rc == 0 || rc == 1, "hardclock: {rc}");
            if rc == 1 {
                let r = self.softclock();
                assert!(r >= 0, "softclock: {r}");
                ran += r;
            }
            self.check();
        }
        ran
    }

    fn ticks(&self) -> (u64, u64) {
        let (mut t, mut s) = (u64::MAX, u64::MAX);
        // SAFETY: see the impl.
        assert_eq!(unsafe { cw_ticks(self.0, &mut t) }, CW_OK);
        // SAFETY: see the impl.
        assert_eq!(unsafe { cw_softticks(self.0, &mut s) }, CW_OK);
        (t, s)
    }

    fn timeout(&self, func: Func, arg: *mut c_void, ticks: i64) -> c_int {
        // SAFETY: see the impl; the handlers accept any argument.
        unsafe { cw_timeout(self.0, f(func), arg, ticks) }
    }

    fn untimeout(&self, func: Func, arg: *mut c_void) -> c_int {
        // SAFETY: see the impl.
        unsafe { cw_untimeout(self.0, f(func), arg) }
    }

    fn setcallout(&self, func: Func, arg: *mut c_void, ticks: i64) -> Result<cw_handle, c_int> {
        let mut h = cw_handle::default();
        // SAFETY: see the impl; the handlers accept any argument.
        let rc = unsafe { cw_setcallout(self.0, f(func), arg, ticks, &mut h) };
        if rc == CW_OK {
            Ok(h)
        } else {
            Err(rc)
        }
    }

    fn unsetcallout(&self, h: cw_handle) -> c_int {
        // SAFETY: see the impl.
        unsafe { cw_unsetcallout(self.0, h) }
    }

    fn init(&self) -> Result<cw_handle, c_int> {
        let mut h = cw_handle::default();
        // SAFETY: see the impl.
        let rc = unsafe { cw_callout_init(self.0, &mut h) };
        if rc == CW_OK {
            Ok(h)
        } else {
            Err(rc)
        }
    }

    fn free(&self, h: cw_handle) -> c_int {
        // SAFETY: see the impl.
        unsafe { cw_callout_free(self.0, h) }
    }

    fn reset(&self, h: cw_handle, ticks: i64, func: Func, arg: *mut c_void) -> c_int {
        // SAFETY: see the impl; the handlers accept any argument.
        unsafe { cw_callout_reset(self.0, h, ticks, f(func), arg) }
    }

    fn reset_sbt(
        &self,
        h: cw_handle,
        sbt: i64,
        prec: i64,
        arg: *mut c_void,
        cpu: c_int,
        flags: c_int,
    ) -> c_int {
        // SAFETY: see the impl; `record` accepts any argument.
        unsafe { cw_callout_reset_sbt_on(self.0, h, sbt, prec, f(RECORD), arg, cpu, flags) }
    }

    fn stop(&self, h: cw_handle) -> c_int {
        // SAFETY: see the impl.
        unsafe { cw_callout_stop(self.0, h) }
    }

    fn drain(&self, h: cw_handle) -> c_int {
        // SAFETY: see the impl.
        unsafe { cw_callout_drain(self.0, h) }
    }

    fn pending(&self, h: cw_handle) -> c_int {
        // SAFETY: see the impl.
        unsafe { cw_callout_pending(self.0, h) }
    }

    fn active(&self, h: cw_handle) -> c_int {
        // SAFETY: see the impl.
        unsafe { cw_callout_active(self.0, h) }
    }

    fn deactivate(&self, h: cw_handle) -> c_int {
        // SAFETY: see the impl.
        unsafe { cw_callout_deactivate(self.0, h) }
    }
}

// SAFETY: a `cw_callouts` is `Send + Sync` (asserted in lib.rs); `T` is only its pointer.
unsafe impl Send for T {}
// SAFETY: as above.
unsafe impl Sync for T {}

impl Drop for T {
    fn drop(&mut self) {
        // SAFETY: the table is live and nothing else uses it any more.
        unsafe { cw_callouts_free(self.0) }
    }
}

#[test]
fn null_table_and_null_pointers_are_einval() {
    let n: *mut cw_callouts = null_mut();
    let mut out = 0u64;
    let mut hout = cw_handle::default();
    let h0 = cw_handle::default();
    // SAFETY: every function accepts a NULL table (and NULL out-pointers) and then touches
    // nothing; the out-pointers that are not NULL are references to locals.
    unsafe {
        assert_eq!(cw_hardclock(n), CW_EINVAL);
        assert_eq!(cw_softclock(n), CW_EINVAL);
        assert_eq!(cw_ticks(n, &mut out), CW_EINVAL);
        assert_eq!(cw_softticks(null(), &mut out), CW_EINVAL);
        assert_eq!(cw_timeout(n, f(RECORD), null_mut(), 1), CW_EINVAL);
        assert_eq!(cw_untimeout(n, f(RECORD), null_mut()), CW_EINVAL);
        assert_eq!(
            cw_setcallout(n, f(RECORD), null_mut(), 1, &mut hout),
            CW_EINVAL
        );
        assert_eq!(cw_unsetcallout(n, h0), CW_EINVAL);
        assert_eq!(cw_callout_init(n, &mut hout), CW_EINVAL);
        assert_eq!(cw_callout_free(n, h0), CW_EINVAL);
        assert_eq!(cw_callout_reset(n, h0, 1, f(RECORD), null_mut()), CW_EINVAL);
        assert_eq!(
            cw_callout_reset_sbt_on(n, h0, 1, 0, f(RECORD), null_mut(), 0, 0),
            CW_EINVAL
        );
        assert_eq!(cw_callout_stop(n, h0), CW_EINVAL);
        assert_eq!(cw_callout_drain(n, h0), CW_EINVAL);
        assert_eq!(cw_callout_pending(n, h0), CW_EINVAL);
        assert_eq!(cw_callout_active(n, h0), CW_EINVAL);
        assert_eq!(cw_callout_deactivate(n, h0), CW_EINVAL);
        cw_callouts_free(n);
    }
    assert_eq!(out, 0, "no out-pointer was written");
    assert_eq!(hout, h0, "no handle was written");

    for backing in BACKINGS {
        let t = T::new(backing, 4, false);
        let h = t.init().unwrap();
        // SAFETY: `t.0` is live; NULL functions and out-pointers are checked before use.
        unsafe {
            assert_eq!(cw_ticks(t.0, null_mut()), CW_EINVAL);
            assert_eq!(cw_softticks(t.0, null_mut()), CW_EINVAL);
            assert_eq!(cw_timeout(t.0, None, null_mut(), 1), CW_EINVAL);
            assert_eq!(cw_untimeout(t.0, None, null_mut()), CW_EINVAL);
            assert_eq!(
                cw_setcallout(t.0, None, null_mut(), 1, &mut hout),
                CW_EINVAL
            );
            assert_eq!(
                cw_setcallout(t.0, f(RECORD), null_mut(), 1, null_mut()),
                CW_EINVAL
            );
            assert_eq!(cw_callout_init(t.0, null_mut()), CW_EINVAL);
            assert_eq!(cw_callout_reset(t.0, h, 1, None, null_mut()), CW_EINVAL);
            assert_eq!(
                cw_callout_reset_sbt_on(t.0, h, 1, 0, None, null_mut(), 0, 0),
                CW_EINVAL
            );
        }
        // None of the refused calls armed anything.
        assert_eq!(t.table().pending(), 0);
        assert_eq!(t.table().records_in_use(), 1);
        assert_eq!(t.pending(h), 0);
        assert_eq!(t.run(3), 0);
    }
}

#[test]
fn bad_configurations_are_einval_and_clear_out() {
    let mut cw: *mut cw_callouts = without_provenance_mut(8);
    for (backing, size, fixed, hz) in [
        (3, 16, 0, 1000),
        (-1, 16, 0, 1000),
        (CW_BACKING_HASHED, 16, 0, 0),
        (CW_BACKING_WHEEL, 0, 1, 1000),
        (CW_BACKING_LIST, CW_CALLOUTSIZE_MAX + 1, 0, 1000),
        (CW_BACKING_HASHED, CW_CALLOUTSIZE_MAX + 1, 1, 1000),
        (CW_BACKING_LIST, u32::MAX as usize, 0, 1000),
        (CW_BACKING_LIST, usize::MAX, 1, 1000),
    ] {
        // SAFETY: `&mut cw` is valid for writing a pointer.
        let rc = unsafe { cw_callouts_new(backing, size, fixed, hz, &mut cw) };
        assert_eq!(rc, CW_EINVAL, "{backing} {size} {fixed} {hz}");
        assert!(cw.is_null());
    }
    // SAFETY: NULL `out` is checked.
    let rc = unsafe { cw_callouts_new(CW_BACKING_LIST, 1, 0, 1, null_mut()) };
    assert_eq!(rc, CW_EINVAL);
    // A growing pool of 0 records is fine: it grows.
    let t = T::new(CW_BACKING_LIST, 0, false);
    assert_eq!(t.timeout(RECORD, tag(1), 1), CW_OK);
    assert_eq!(t.run(1), 1);
    assert_eq!(take_log(), [1]);
}

#[test]
#[cfg_attr(miri, ignore = "reserves 2^26 records")]
fn the_largest_calloutsize_is_taken() {
    // The top of the documented range is accepted: it reserves address space, and only the
    // allocator may refuse it (CW_ENOMEM), never the range check (CW_EINVAL).
    for backing in BACKINGS {
        for fixed in [0, 1] {
            let mut cw = null_mut();
            // SAFETY: `&mut cw` is valid for writing a pointer.
            let rc = unsafe { cw_callouts_new(backing, CW_CALLOUTSIZE_MAX, fixed, 1000, &mut cw) };
            assert!(rc == CW_OK || rc == CW_ENOMEM, "{backing}: {rc}");
            if rc == CW_OK {
                let t = T(cw);
                assert_eq!(t.timeout(RECORD, tag(1), 1), CW_OK);
                assert_eq!(t.run(1), 1);
                assert_eq!(take_log(), [1]);
            } else {
                assert!(cw.is_null());
            }
        }
    }
}

#[test]
fn handles_of_another_table_are_stale_for_every_call() {
    for (ba, bb) in [
        (CW_BACKING_HASHED, CW_BACKING_HASHED),
        (CW_BACKING_LIST, CW_BACKING_WHEEL),
    ] {
        let (a, b) = (T::new(ba, 8, false), T::new(bb, 8, false));
        // Fresh tables: the same record index and generation, told apart by the owner.
        let (oa, ob) = (
            a.setcallout(RECORD, tag(1), 2).unwrap(),
            b.setcallout(RECORD, tag(2), 2).unwrap(),
        );
        let (pa, pb) = (a.init().unwrap(), b.init().unwrap());
        assert_eq!((oa.id, pa.id), (ob.id, pb.id));
        assert_ne!(oa.owner, ob.owner);
        assert_eq!(a.reset(pa, 3, RECORD, tag(3)), 0);
        for (t, one_shot, persistent) in [(&a, ob, pb), (&b, oa, pa)] {
            for rc in [
                t.unsetcallout(one_shot),
                t.unsetcallout(persistent),
                t.free(persistent),
                t.reset(persistent, 1, RECORD, tag(9)),
                t.reset_sbt(persistent, CW_SBT_1MS, 0, tag(9), 0, 0),
                t.stop(persistent),
                t.drain(persistent),
                t.pending(persistent),
                t.active(persistent),
                t.deactivate(persistent),
                t.stop(one_shot),
            ] {
                assert_eq!(rc, CW_ESTALE);
            }
            t.check();
        }
        // Nothing changed: each table runs its own callouts, a's persistent one still armed.
        assert_eq!((a.pending(pa), a.active(pa)), (1, 1));
        assert_eq!((b.pending(pb), b.active(pb)), (0, 0));
        assert_eq!(a.run(3), 2);
        assert_eq!(take_log(), [1, 3]);
        assert_eq!(b.run(3), 1);
        assert_eq!(take_log(), [2]);
        assert_eq!(a.free(pa), CW_OK);
        assert_eq!(b.free(pb), CW_OK);
    }
}

#[test]
fn hashed_wheel_bits_follow_calloutsize() {
    assert_eq!(hashed_bits(0), 8);
    assert_eq!(hashed_bits(256), 8);
    assert_eq!(hashed_bits(257), 9);
    assert_eq!(hashed_bits(1 << 20), 20);
    assert_eq!(hashed_bits((1 << 20) + 1), 20);
    assert_eq!(hashed_bits(usize::MAX), 20);
}

#[test]
fn timeouts_fire_in_order_and_untimeout_cancels() {
    for backing in BACKINGS {
        let t = T::new(backing, 8, false);
        assert_eq!(t.ticks(), (0, 0));
        // <= 0 ticks count as one.
        for (i, ticks) in [(1, 0), (2, -5), (3, i64::MIN), (4, 1)] {
            assert_eq!(t.timeout(RECORD, tag(i), ticks), CW_OK);
        }
        assert_eq!(t.timeout(RECORD, tag(5), 3), CW_OK);
        assert_eq!(t.timeout(RECORD, tag(6), 3), CW_OK);
        assert_eq!(t.timeout(RECORD_OTHER, tag(6), 3), CW_OK);
        // Cancelling what does not exist is 0, and changes nothing.
        assert_eq!(t.untimeout(RECORD, tag(77)), 0);
        assert_eq!(t.untimeout(RECORD, tag(6)), 1);
        assert_eq!(t.untimeout(RECORD, tag(6)), 0);

        assert_eq!(t.hardclock(), 1);
        assert_eq!(t.softclock(), 4);
        assert_eq!(take_log(), [1, 2, 3, 4]);
        // Nothing due at tick 2: the fast path.
        assert_eq!(t.hardclock(), 0);
        assert_eq!(t.ticks(), (2, 2));
        assert_eq!(t.hardclock(), 1);
        assert_eq!(t.ticks(), (3, 2));
        assert_eq!(t.softclock(), 2);
        assert_eq!(t.ticks(), (3, 3));
        assert_eq!(take_log(), [5, 1006]);
        assert_eq!(t.softclock(), 0);
        // Already ran: nothing to cancel.
        assert_eq!(t.untimeout(RECORD, tag(5)), 0);
        t.check();
    }
}

#[test]
fn untimeout_cancels_exactly_its_own_among_many() {
    // More timeouts than a small table's hash buckets: chains are shared, and each untimeout
    // must still find its own (func, arg) and no other.
    const N: usize = 48;
    for backing in BACKINGS {
        let t = T::new(backing, 8, false);
        for i in 0..N {
            let func = if i % 3 == 0 { RECORD_OTHER } else { RECORD };
            assert_eq!(t.timeout(func, tag(i * 4096 + 1), 2), CW_OK);
        }
        let mut expected = Vec::new();
        for i in 0..N {
            let (func, bias) = if i % 3 == 0 {
                (RECORD_OTHER, 1000)
            } else {
                (RECORD, 0)
            };
            // The other function with the same argument is not this callout.
            let other = if i % 3 == 0 { RECORD } else { RECORD_OTHER };
            assert_eq!(t.untimeout(other, tag(i * 4096 + 1)), 0, "{i}");
            if i % 2 == 0 {
                assert_eq!(t.untimeout(func, tag(i * 4096 + 1)), 1, "{i}");
            } else {
                expected.push(i * 4096 + 1 + bias);
            }
        }
        t.check();
        assert_eq!(t.run(2), expected.len() as c_int);
        let mut log = take_log();
        log.sort_unstable();
        expected.sort_unstable();
        assert_eq!(log, expected);
    }
}

#[test]
fn setcallout_handles_go_stale_and_forgeries_are_refused() {
    for backing in BACKINGS {
        let t = T::new(backing, 4, false);
        let a = t.setcallout(RECORD, tag(1), 2).unwrap();
        let b = t.setcallout(RECORD, tag(2), 2).unwrap();
        assert_ne!(a, b);
        assert_eq!(t.unsetcallout(a), 1);
        assert_eq!(t.unsetcallout(a), CW_ESTALE);
        // The record is reused with a new generation: the old handle cannot touch it.
        let c = t.setcallout(RECORD, tag(3), 2).unwrap();
        assert_eq!(c.id as u32, a.id as u32, "same record");
        assert_ne!(c, a);
        assert_eq!(t.unsetcallout(a), CW_ESTALE);
        // Forgeries with this table's owner: another generation, an index never allocated,
        // all ones; and b's id under owners that are not this table's.
        let owner = b.owner;
        for id in [b.id ^ (1 << 40), 1_000_000, u64::MAX] {
            assert_eq!(t.unsetcallout(cw_handle { id, owner }), CW_ESTALE);
        }
        for owner in [0, owner + 1, u64::MAX] {
            assert_eq!(t.unsetcallout(cw_handle { id: b.id, owner }), CW_ESTALE);
        }
        // A one-shot handle is the wrong kind for callout_* calls, and the other way round.
        let p = t.init().unwrap();
        assert_eq!(t.unsetcallout(p), CW_EINVAL);
        assert_eq!(t.stop(b), CW_EINVAL);
        assert_eq!(t.free(b), CW_EINVAL);
        assert_eq!(t.pending(c), CW_EINVAL);
        t.check();

        assert_eq!(t.run(2), 2);
        assert_eq!(take_log(), [2, 3]);
        // Fired: stale, handled before the handler ran.
        assert_eq!(t.unsetcallout(b), CW_ESTALE);
        assert_eq!(t.unsetcallout(c), CW_ESTALE);
        // A freed callout_init handle is stale for every call.
        assert_eq!(t.free(p), CW_OK);
        for rc in [
            t.free(p),
            t.stop(p),
            t.drain(p),
            t.pending(p),
            t.active(p),
            t.deactivate(p),
            t.reset(p, 1, RECORD, tag(9)),
            t.reset_sbt(p, CW_SBT_1MS, 0, tag(9), 0, 0),
        ] {
            assert_eq!(rc, CW_ESTALE);
        }
        assert_eq!(t.run(3), 0);
        assert!(take_log().is_empty());
    }
}

#[test]
fn a_fixed_pool_runs_out_and_recovers() {
    for backing in BACKINGS {
        let t = T::new(backing, 3, true);
        assert_eq!(t.timeout(RECORD, tag(1), 5), CW_OK);
        let h = t.setcallout(RECORD, tag(2), 5).unwrap();
        let p = t.init().unwrap();
        assert_eq!(t.timeout(RECORD, tag(3), 5), CW_ENOMEM);
        assert_eq!(t.setcallout(RECORD, tag(3), 5), Err(CW_ENOMEM));
        assert_eq!(t.init(), Err(CW_ENOMEM));
        // Arming a callout_init record needs no new record.
        assert_eq!(t.reset(p, 5, RECORD, tag(4)), 0);
        t.check();
        assert_eq!(t.table().records_in_use(), 3);
        assert_eq!(t.unsetcallout(h), 1);
        assert_eq!(t.timeout(RECORD, tag(5), 5), CW_OK);
        assert_eq!(t.run(5), 3);
        let mut log = take_log();
        log.sort_unstable();
        assert_eq!(log, [1, 4, 5]);
        // The two one-shot records came back when they fired.
        assert!(t.setcallout(RECORD, tag(6), 1).is_ok());
        assert!(t.init().is_ok());
        assert_eq!(t.init(), Err(CW_ENOMEM));
    }
}

#[test]
fn huge_tick_counts_are_taken_or_refused_cleanly() {
    for backing in BACKINGS {
        let t = T::new(backing, 4, false);
        let rc = t.timeout(RECORD, tag(1), i64::MAX);
        assert!(rc == CW_OK || rc == CW_ERANGE, "{rc}");
        t.check();
        assert_eq!(t.run(5), 0);
        assert_eq!(t.untimeout(RECORD, tag(1)), c_int::from(rc == CW_OK));
    }
}

/// Shared with the reentrant handlers through their `arg`.
struct Reentrant {
    cw: *mut cw_callouts,
    handle: Cell<cw_handle>,
    runs: Cell<u32>,
    results: RefCell<Vec<c_int>>,
}

impl Reentrant {
    fn new(t: &T) -> Reentrant {
        Reentrant {
            cw: t.0,
            handle: Cell::new(cw_handle::default()),
            runs: Cell::new(0),
            results: RefCell::new(Vec::new()),
        }
    }

    fn arg(&self) -> *mut c_void {
        (self as *const Reentrant).cast_mut().cast()
    }
}

/// Cancels the timeout of `record(tag(1))`, which is due at the same tick, right after it.
unsafe extern "C" fn cancel_next(arg: *mut c_void) {
    // SAFETY: the tests pass a `Reentrant` that outlives the table's handlers.
    let ctx = unsafe { &*arg.cast::<Reentrant>() };
    // SAFETY: the table is live while its handlers run.
    let rc = unsafe { cw_untimeout(ctx.cw, f(RECORD), tag(1)) };
    ctx.results.borrow_mut().push(rc);
    ctx.runs.set(ctx.runs.get() + 1);
}

#[test]
fn a_handler_cancels_the_next_due_callout() {
    for backing in BACKINGS {
        let t = T::new(backing, 8, false);
        let ctx = Reentrant::new(&t);
        assert_eq!(t.timeout(CANCEL_NEXT, ctx.arg(), 2), CW_OK);
        assert_eq!(t.timeout(RECORD, tag(1), 2), CW_OK);
        assert_eq!(t.timeout(RECORD, tag(2), 2), CW_OK);
        assert_eq!(t.run(3), 2);
        assert_eq!(take_log(), [2]);
        assert_eq!(*ctx.results.borrow(), [1]);
    }
}

/// Re-arms its own callout twice, and checks what a handler may and may not do.
unsafe extern "C" fn rearm(arg: *mut c_void) {
    // SAFETY: the tests pass a `Reentrant` that outlives the table's handlers.
    let ctx = unsafe { &*arg.cast::<Reentrant>() };
    let (cw, h) = (ctx.cw, ctx.handle.get());
    ctx.runs.set(ctx.runs.get() + 1);
    // SAFETY: the table is live while its handlers run; out-pointers are locals.
    let results = unsafe {
        let mut ticks = 0;
        [
            cw_callout_pending(cw, h),
            cw_callout_active(cw, h),
            cw_callout_drain(cw, h),
            cw_callout_free(cw, h),
            cw_softclock(cw),
            cw_hardclock(cw),
            cw_ticks(cw, &mut ticks),
            if ctx.runs.get() < 3 {
                cw_callout_reset(cw, h, 2, f(REARM), arg)
            } else {
                cw_callout_deactivate(cw, h)
            },
        ]
    };
    ctx.results.borrow_mut().extend(results);
}

#[test]
fn a_handler_rearms_itself_and_cannot_drain_itself() {
    for backing in BACKINGS {
        let t = T::new(backing, 8, false);
        let ctx = Reentrant::new(&t);
        let h = t.init().unwrap();
        ctx.handle.set(h);
        assert_eq!(t.active(h), 0);
        assert_eq!(t.reset(h, 2, REARM, ctx.arg()), 0);
        assert_eq!((t.pending(h), t.active(h)), (1, 1));
        // Each run advances the clock once more from inside (EBUSY, clock still moves).
        t.run(12);
        assert_eq!(ctx.runs.get(), 3);
        let expect_first = [0, 1, CW_EDEADLK, CW_EDEADLK, CW_EBUSY, CW_EBUSY, CW_OK, 0];
        let expect_last = [
            0, 1, CW_EDEADLK, CW_EDEADLK, CW_EBUSY, CW_EBUSY, CW_OK, CW_OK,
        ];
        let results = ctx.results.borrow();
        assert_eq!(results[..8], expect_first);
        assert_eq!(results[8..16], expect_first);
        assert_eq!(results[16..], expect_last);
        assert_eq!((t.pending(h), t.active(h)), (0, 0));
        assert_eq!(t.drain(h), 0);
        assert_eq!(t.free(h), CW_OK);
        t.check();
    }
}

#[test]
fn freebsd_flags_direct_exec_absolute_and_prel() {
    for backing in BACKINGS {
        let t = T::new(backing, 8, false);
        let h = t.init().unwrap();
        let d = t.init().unwrap();
        assert_eq!(
            t.reset_sbt(h, 3 * CW_SBT_1MS, 0, tag(1), 0, 0x4000),
            CW_EINVAL
        );
        assert_eq!(t.reset_sbt(h, 3 * CW_SBT_1MS, 0, tag(1), 0, -1), CW_EINVAL);
        assert_eq!(t.reset_sbt(h, 3 * CW_SBT_1MS, 0, tag(1), 1, 0), CW_EINVAL);
        assert_eq!(t.reset_sbt(h, 3 * CW_SBT_1MS, 0, tag(1), -2, 0), CW_EINVAL);
        assert_eq!(
            t.reset_sbt(h, 3 * CW_SBT_1MS, 0, tag(1), 0, cw_c_prel(200)),
            CW_EINVAL
        );
        assert_eq!(t.pending(h), 0, "refused calls change nothing");

        // Absolute: 5 ms since tick 0 is tick 5 at 1000 Hz.
        assert_eq!(
            t.reset_sbt(h, 5 * CW_SBT_1MS, 0, tag(1), -1, CW_C_ABSOLUTE),
            0
        );
        // Direct: runs from hardclock two ticks from now, without softclock.
        let direct = CW_C_DIRECT_EXEC | CW_C_HARDCLOCK | cw_c_prel(2);
        assert_eq!(
            t.reset_sbt(d, 2 * CW_SBT_1MS, CW_SBT_1US, tag(2), 0, direct),
            0
        );
        assert_eq!(t.hardclock(), 0);
        assert!(take_log().is_empty());
        t.hardclock();
        assert_eq!(take_log(), [2], "direct handler ran in hardclock");
        assert_eq!((t.pending(d), t.active(d)), (0, 1));
        assert_eq!(t.run(2), 0);
        assert!(take_log().is_empty());
        assert_eq!(t.run(1), 1);
        assert_eq!(take_log(), [1]);
        assert_eq!(t.ticks(), (5, 5));

        // An absolute time already passed runs at the next tick.
        assert_eq!(t.reset_sbt(h, CW_SBT_1MS, 0, tag(3), 0, CW_C_ABSOLUTE), 0);
        assert_eq!(t.run(1), 1);
        assert_eq!(take_log(), [3]);
        // Relative 0 or negative: the next tick. Re-arming a pending callout returns 1.
        assert_eq!(t.reset_sbt(h, -CW_SBT_1S, 0, tag(4), 0, 0), 0);
        assert_eq!(t.reset_sbt(h, 0, 0, tag(5), 0, cw_c_prel(0)), 1);
        assert_eq!(t.run(1), 1);
        assert_eq!(take_log(), [5]);
        // Stop, deactivate.
        assert_eq!(t.reset(h, 3, RECORD, tag(6)), 0);
        assert_eq!(t.stop(h), 1);
        assert_eq!(t.stop(h), 0);
        assert_eq!(t.active(h), 0);
        assert_eq!(t.reset(h, 1, RECORD, tag(7)), 0);
        assert_eq!(t.deactivate(h), CW_OK);
        assert_eq!((t.pending(h), t.active(h)), (1, 0));
        assert_eq!(t.drain(h), 1);
        assert_eq!(t.run(3), 0);
        assert!(take_log().is_empty());
        t.check();
    }
}

#[test]
fn c_prel_matches_the_header_macro() {
    for n in 0..=CW_C_PREL_MAX {
        let expected = ((((n as u32) + 1) & 0x7f) << 1) as c_int;
        assert_eq!(cw_c_prel(n), expected);
        assert_eq!(flags::c_prelget(expected as u32), Some(n as u32));
    }
    for n in [-1, CW_C_PREL_MAX + 1, c_int::MIN, c_int::MAX] {
        assert_eq!(cw_c_prel(n), CW_EINVAL);
    }
}

#[test]
fn every_error_has_a_code_and_every_code_a_text() {
    let cases = [
        (Error::PoolExhausted { calloutsize: 3 }, CW_ENOMEM),
        (Error::NoMemory, CW_ENOMEM),
        (Error::Scheme(callwheel::Error::NoMemory), CW_ENOMEM),
        (Error::StaleHandle, CW_ESTALE),
        (Error::WrongKind, CW_EINVAL),
        (
            Error::Scheme(callwheel::Error::BeyondRange { expiry: 9, max: 1 }),
            CW_ERANGE,
        ),
        (
            Error::Scheme(callwheel::Error::Full { capacity: 1 }),
            CW_ENOMEM,
        ),
        (
            Error::Scheme(callwheel::Error::Config { reason: "x" }),
            CW_EINVAL,
        ),
        (Error::Scheme(callwheel::Error::ZeroPeriod), CW_EINVAL),
        (Error::InvalidCpu(3), CW_EINVAL),
        (Error::InvalidFlags(0x4000), CW_EINVAL),
        (Error::WouldDeadlock, CW_EDEADLK),
        (Error::Busy, CW_EBUSY),
        (Error::SoftclockBusy, CW_EBUSY),
        (Error::Config { reason: "x" }, CW_EINVAL),
    ];
    for (e, code) in cases {
        assert_eq!(error_code(e), code, "{e:?}");
    }

    let codes = [
        CW_EINVAL, CW_ENOMEM, CW_ESTALE, CW_EDEADLK, CW_EBUSY, CW_ERANGE, CW_EPANIC, CW_ENOSPC,
    ];
    let mut texts = Vec::new();
    for code in codes {
        let p = cw_strerror(code);
        assert!(!p.is_null());
        // SAFETY: cw_strerror returns a static NUL-terminated string.
        let text = unsafe { core::ffi::CStr::from_ptr(p) }.to_str().unwrap();
        assert!(
            !text.is_empty() && text != "unknown callwheel error code",
            "{code}: {text}"
        );
        texts.push(text);
    }
    texts.sort_unstable();
    texts.dedup();
    assert_eq!(texts.len(), codes.len(), "each code has its own text");
    // SAFETY: as above.
    let unknown = unsafe { core::ffi::CStr::from_ptr(cw_strerror(-5000)) };
    assert_eq!(unknown, c"unknown callwheel error code");
    // A negated errno from a failed system call (timer sets: eventfd, threads).
    // SAFETY: as above.
    let system = unsafe { core::ffi::CStr::from_ptr(cw_strerror(-libc::EMFILE)) };
    assert_eq!(
        system,
        c"a system call failed (the code is the negated errno)"
    );
    // SAFETY: as above.
    let success = unsafe { core::ffi::CStr::from_ptr(cw_strerror(7)) };
    assert_eq!(success, c"success");
}

#[test]
fn panics_are_caught_at_the_boundary() {
    // The default hook prints this deliberate panic's message; the code is what matters.
    let rc = guard(|| panic!("deliberate"));
    assert_eq!(rc, CW_EPANIC);
    assert_eq!(guard(|| Ok(5)), 5);
    assert_eq!(guard(|| Err(CW_EBUSY)), CW_EBUSY);
}

/// Counts its runs (tests with threads cannot use the thread-local log).
unsafe extern "C" fn count(arg: *mut c_void) {
    // SAFETY: the tests pass a live `AtomicUsize`.
    let n = unsafe { &*arg.cast::<AtomicUsize>() };
    n.fetch_add(1, Ordering::Relaxed);
}

#[test]
fn threads_share_one_table() {
    const THREADS: usize = 3;
    const EACH: usize = if cfg!(miri) { 6 } else { 200 };
    let t = T::new(CW_BACKING_HASHED, 4, false);
    let fired = AtomicUsize::new(0);
    let (kept, stale) = std::thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|i| {
                let (t, fired) = (&t, &fired);
                s.spawn(move || {
                    let arg: *mut c_void = (fired as *const AtomicUsize).cast_mut().cast();
                    let (mut kept, mut stale) = (0, 0);
                    for j in 0..EACH {
                        // Timeouts with one shared argument would cancel each other's; handles
                        // cancel exactly their own callout.
                        let h = t.setcallout(COUNT, arg, (j % 7) as i64 + 1).unwrap();
                        if (i + j) % 3 == 0 {
                            match t.unsetcallout(h) {
                                1 => {}
                                CW_ESTALE => stale += 1,
                                rc => panic!("unsetcallout: {rc}"),
                            }
                        } else {
                            kept += 1;
                        }
                    }
                    (kept, stale)
                })
            })
            .collect();
        // Meanwhile this thread is the clock.
        for _ in 0..EACH {
            if t.hardclock() == 1 {
                assert!(t.softclock() >= 0);
            }
        }
        workers
            .into_iter()
            .map(|w| w.join().unwrap())
            .fold((0, 0), |(k, s), (k2, s2)| (k + k2, s + s2))
    });
    t.run(10);
    t.check();
    // Every callout not cancelled in time ran exactly once; no cancelled one ran.
    assert_eq!(fired.load(Ordering::Relaxed), kept + stale);
    assert_eq!(t.table().pending(), 0);
    assert_eq!(t.table().records_in_use(), 0);
}

/// Runs until told to go on, then long enough for a drain that does not wait to be caught.
struct Slow {
    started: AtomicBool,
    go: AtomicBool,
    finished: AtomicBool,
}

unsafe extern "C" fn slow(arg: *mut c_void) {
    // SAFETY: the test passes a live `Slow`.
    let s = unsafe { &*arg.cast::<Slow>() };
    s.started.store(true, Ordering::SeqCst);
    while !s.go.load(Ordering::SeqCst) {
        std::thread::yield_now();
    }
    std::thread::sleep(std::time::Duration::from_millis(20));
    s.finished.store(true, Ordering::SeqCst);
}

#[test]
fn drain_waits_for_a_handler_on_another_thread() {
    let t = T::new(CW_BACKING_WHEEL, 4, false);
    let s = Slow {
        started: AtomicBool::new(false),
        go: AtomicBool::new(false),
        finished: AtomicBool::new(false),
    };
    let h = t.init().unwrap();
    let arg: *mut c_void = (&s as *const Slow).cast_mut().cast();
    assert_eq!(t.reset(h, 1, SLOW, arg), 0);
    assert_eq!(t.hardclock(), 1);
    let table = &t;
    std::thread::scope(|scope| {
        let runner = scope.spawn(move || table.softclock());
        while !s.started.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        // The handler is running on the other thread: the clock calls are refused (the tick
        // still advances), and the callout is active but no longer pending.
        assert_eq!(table.softclock(), CW_EBUSY);
        assert_eq!(table.hardclock(), CW_EBUSY);
        assert_eq!(table.ticks().0, 2);
        assert_eq!((table.pending(h), table.active(h)), (0, 1));
        s.go.store(true, Ordering::SeqCst);
        assert_eq!(table.drain(h), 0);
        assert!(
            s.finished.load(Ordering::SeqCst),
            "drain returned before the handler did"
        );
        assert_eq!(table.free(h), CW_OK);
        assert_eq!(runner.join().unwrap(), 1);
    });
    t.check();
}
