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
        unsafe { cw_hardclock(self.0, 0) }
    }

    fn softclock(&self) -> c_int {
        // SAFETY: see the impl.
        unsafe { cw_softclock(self.0, 0) }
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
        assert_eq!(unsafe { cw_ticks(self.0, 0, &mut t) }, CW_OK);
        // SAFETY: see the impl.
        assert_eq!(unsafe { cw_softticks(self.0, 0, &mut s) }, CW_OK);
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
        let rc = unsafe { cw_callout_init(self.0, -1, &mut h) };
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
        assert_eq!(cw_hardclock(n, 0), CW_EINVAL);
        assert_eq!(cw_softclock(n, 0), CW_EINVAL);
        assert_eq!(cw_ticks(n, 0, &mut out), CW_EINVAL);
        assert_eq!(cw_softticks(null(), 0, &mut out), CW_EINVAL);
        assert_eq!(cw_timeout(n, f(RECORD), null_mut(), 1), CW_EINVAL);
        assert_eq!(cw_untimeout(n, f(RECORD), null_mut()), CW_EINVAL);
        assert_eq!(
            cw_setcallout(n, f(RECORD), null_mut(), 1, &mut hout),
            CW_EINVAL
        );
        assert_eq!(cw_unsetcallout(n, h0), CW_EINVAL);
        assert_eq!(cw_callout_init(n, -1, &mut hout), CW_EINVAL);
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
            assert_eq!(cw_ticks(t.0, 0, null_mut()), CW_EINVAL);
            assert_eq!(cw_softticks(t.0, 0, null_mut()), CW_EINVAL);
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
            assert_eq!(cw_callout_init(t.0, -1, null_mut()), CW_EINVAL);
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

/// A table of one CPU is CPU 0 of a table of several: its clock calls refuse any other CPU
/// (-1 included, which only the calls naming a callout's CPU accept), and so do the calls
/// that bind or move a callout, with CW_EINVAL and nothing changed.
#[test]
fn a_table_of_one_cpu_refuses_every_other_cpu() {
    for backing in BACKINGS {
        let t = T::new(backing, 8, false);
        let h = t.init().unwrap();
        let (mut out, mut hout) = (7u64, cw_handle { id: 9, owner: 9 });
        // SAFETY: `t.0` is live; the out-pointers are locals.
        unsafe {
            assert_eq!(cw_callouts_ncpu(t.0), 1);
            for cpu in [1, -1, -2, c_int::MAX, c_int::MIN] {
                assert_eq!(cw_hardclock(t.0, cpu), CW_EINVAL);
                assert_eq!(cw_softclock(t.0, cpu), CW_EINVAL);
                assert_eq!(cw_callout_process(t.0, cpu, 5), CW_EINVAL);
                assert_eq!(
                    cw_callout_next_event(t.0, cpu, &mut out, &mut out),
                    CW_EINVAL
                );
                assert_eq!(cw_ticks(t.0, cpu, &mut out), CW_EINVAL);
                assert_eq!(cw_softticks(t.0, cpu, &mut out), CW_EINVAL);
            }
            for cpu in [1, -2, c_int::MAX] {
                assert_eq!(cw_callout_init(t.0, cpu, &mut hout), CW_EINVAL);
                assert_eq!(
                    cw_callout_reset_on(t.0, h, 1, f(RECORD), null_mut(), cpu),
                    CW_EINVAL
                );
                assert_eq!(
                    cw_callout_reset_sbt_on(t.0, h, 1, 0, f(RECORD), null_mut(), cpu, 0),
                    CW_EINVAL
                );
            }
            assert_eq!(cw_callout_cpu(t.0, h), 0);
        }
        assert_eq!((out, hout.id, hout.owner), (7, 9, 9));
        assert_eq!(t.pending(h), 0);
        assert_eq!(t.ticks(), (0, 0));
        assert_eq!(t.table().records_in_use(), 1);
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

#[path = "handler_tests.rs"]
mod handlers;
