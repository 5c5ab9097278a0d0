//! The entry points on a table of several CPUs and `cw_callout_async_drain` from Rust (also
//! under Miri): NULL arguments, CPUs outside the table, other tables' handles, a callout firing
//! only on its CPU, a handler moving its own callout, and both outcomes of an async drain.

use core::ffi::c_void;
use core::ptr;
use std::cell::RefCell;

use crate::*;

thread_local! {
    /// The tags the handlers of this test thread ran with (drains add 1000).
    static LOG: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

unsafe extern "C" fn record(arg: *mut c_void) {
    LOG.with(|l| l.borrow_mut().push(arg as usize));
}

unsafe extern "C" fn drained(arg: *mut c_void) {
    LOG.with(|l| l.borrow_mut().push(1000 + arg as usize));
}

fn take_log() -> Vec<usize> {
    LOG.with(|l| std::mem::take(&mut *l.borrow_mut()))
}

fn tag(n: usize) -> *mut c_void {
    n as *mut c_void
}

/// A set of `ncpu` hashed tables at 1000 Hz.
fn new_set(ncpu: c_int) -> *mut cw_callouts {
    let mut set = ptr::null_mut();
    // SAFETY: `set` is a valid out-pointer.
    let rc = unsafe { cw_callouts_new_percpu(CW_BACKING_HASHED, ncpu, 8, 0, 1000, &mut set) };
    assert_eq!(rc, CW_OK);
    set
}

/// One tick of CPU `cpu`: hardclock, then softclock.
fn tick(set: *mut cw_callouts, cpu: c_int) {
    // SAFETY: `set` is live.
    let rc = unsafe { cw_hardclock(set, cpu) };
    assert!(rc == 0 || rc == 1, "{rc}");
    // SAFETY: as above.
    assert!(unsafe { cw_softclock(set, cpu) } >= 0);
}

#[test]
fn percpu_null_and_bad_arguments_are_refused() {
    let h = cw_handle::default();
    let mut out = 7u64;
    let mut hout = cw_handle { id: 9, owner: 9 };
    let mut set = ptr::null_mut();
    // SAFETY: NULL pointers are allowed by every entry point; `set` and the out-pointers are
    // valid.
    unsafe {
        assert_eq!(
            cw_callouts_new_percpu(CW_BACKING_LIST, 2, 8, 0, 1000, ptr::null_mut()),
            CW_EINVAL
        );
        for ncpu in [0, -1, CW_NCPU_MAX + 1] {
            assert_eq!(
                cw_callouts_new_percpu(CW_BACKING_LIST, ncpu, 8, 0, 1000, &mut set),
                CW_EINVAL
            );
            assert!(set.is_null());
        }
        assert_eq!(
            cw_callouts_new_percpu(7, 2, 8, 0, 1000, &mut set),
            CW_EINVAL
        );
        assert_eq!(
            cw_callouts_new_percpu(CW_BACKING_WHEEL, 2, 8, 0, 0, &mut set),
            CW_EINVAL
        );
        cw_callouts_free(ptr::null_mut());
        assert_eq!(cw_callouts_ncpu(ptr::null()), CW_EINVAL);
        assert_eq!(cw_callout_init(ptr::null_mut(), 0, &mut hout), CW_EINVAL);
        assert_eq!(cw_callout_free(ptr::null_mut(), h), CW_EINVAL);
        let f: cw_func = Some(record);
        assert_eq!(
            cw_callout_reset_on(ptr::null_mut(), h, 1, f, tag(1), 0),
            CW_EINVAL
        );
        assert_eq!(
            cw_callout_reset_sbt_on(ptr::null_mut(), h, 1, 0, f, tag(1), 0, 0),
            CW_EINVAL
        );
        assert_eq!(cw_callout_stop(ptr::null_mut(), h), CW_EINVAL);
        assert_eq!(cw_callout_drain(ptr::null_mut(), h), CW_EINVAL);
        assert_eq!(cw_callout_async_drain(ptr::null_mut(), h, f), CW_EINVAL);
        assert_eq!(cw_callout_pending(ptr::null(), h), CW_EINVAL);
        assert_eq!(cw_callout_active(ptr::null(), h), CW_EINVAL);
        assert_eq!(cw_callout_deactivate(ptr::null_mut(), h), CW_EINVAL);
        assert_eq!(cw_callout_cpu(ptr::null(), h), CW_EINVAL);
        assert_eq!(cw_hardclock(ptr::null_mut(), 0), CW_EINVAL);
        assert_eq!(cw_softclock(ptr::null_mut(), 0), CW_EINVAL);
        assert_eq!(cw_callout_process(ptr::null_mut(), 0, 1), CW_EINVAL);
        assert_eq!(
            cw_callout_next_event(ptr::null(), 0, &mut out, &mut out),
            CW_EINVAL
        );
        assert_eq!(cw_ticks(ptr::null(), 0, &mut out), CW_EINVAL);
        assert_eq!(cw_softticks(ptr::null(), 0, &mut out), CW_EINVAL);

        let set = new_set(2);
        assert_eq!(cw_callouts_ncpu(set), 2);
        assert_eq!(cw_callout_init(set, 0, ptr::null_mut()), CW_EINVAL);
        for cpu in [2, -2, c_int::MAX, c_int::MIN] {
            assert_eq!(cw_callout_init(set, cpu, &mut hout), CW_EINVAL);
            assert_eq!(cw_hardclock(set, cpu), CW_EINVAL);
            assert_eq!(cw_softclock(set, cpu), CW_EINVAL);
            assert_eq!(cw_callout_process(set, cpu, 5), CW_EINVAL);
            assert_eq!(
                cw_callout_next_event(set, cpu, &mut out, &mut out),
                CW_EINVAL
            );
            assert_eq!(cw_ticks(set, cpu, &mut out), CW_EINVAL);
            assert_eq!(cw_softticks(set, cpu, &mut out), CW_EINVAL);
        }
        assert_eq!((hout.id, hout.owner, out), (9, 9, 7));
        let mut c = cw_handle::default();
        assert_eq!(cw_callout_init(set, 1, &mut c), CW_OK);
        assert_eq!(cw_callout_reset_on(set, c, 1, None, tag(1), 0), CW_EINVAL);
        assert_eq!(cw_callout_async_drain(set, c, None), CW_EINVAL);
        assert_eq!(cw_callout_reset_on(set, c, 1, f, tag(1), 2), CW_EINVAL);
        assert_eq!(
            cw_callout_reset_sbt_on(set, c, 1, 0, f, tag(1), -2, 0),
            CW_EINVAL
        );
        assert_eq!(
            cw_callout_reset_sbt_on(set, c, 1, 0, f, tag(1), 0, 0x4000),
            CW_EINVAL
        );
        assert_eq!(cw_callout_pending(set, c), 0);
        assert_eq!(cw_callout_cpu(set, c), 1);
        assert_eq!(cw_ticks(set, 0, ptr::null_mut()), CW_EINVAL);
        assert_eq!(
            cw_callout_next_event(set, 0, ptr::null_mut(), &mut out),
            CW_EINVAL
        );
        assert_eq!(cw_callout_free(set, c), CW_OK);
        (*set).check_invariants().unwrap();
        cw_callouts_free(set);
    }
}

#[test]
fn percpu_callouts_fire_on_their_cpu_and_move_after_their_handler() {
    let set = new_set(3);
    let other = new_set(3);
    let mut c = cw_handle::default();
    let mut foreign = cw_handle::default();
    // SAFETY: the sets are live; out-pointers valid; `record` is safe on this thread.
    unsafe {
        assert_eq!(cw_callout_init(set, -1, &mut c), CW_OK);
        assert_eq!(cw_callout_init(other, 0, &mut foreign), CW_OK);
        assert_eq!(
            cw_callout_reset_sbt_on(set, c, 2 * CW_SBT_1MS, 0, Some(record), tag(5), 2, 0),
            0
        );
        assert_eq!(cw_callout_cpu(set, c), 2);
        for _ in 0..4 {
            tick(set, 0);
            tick(set, 1);
        }
        assert_eq!(take_log(), []);
        tick(set, 2);
        tick(set, 2);
        assert_eq!(take_log(), [5]);
        // Another set's handle, and this set's handle elsewhere, name nothing.
        assert_eq!(cw_callout_stop(set, foreign), CW_ESTALE);
        assert_eq!(cw_callout_cpu(set, foreign), CW_ESTALE);
        assert_eq!(cw_callout_pending(other, c), CW_ESTALE);
        assert_eq!(cw_callout_free(set, foreign), CW_ESTALE);
        assert_eq!(cw_callout_pending(other, foreign), 0);
        assert_eq!(cw_callout_free(set, c), CW_OK);
        assert_eq!(cw_callout_stop(set, c), CW_ESTALE);
        (*set).check_invariants().unwrap();
        cw_callouts_free(set);
        cw_callouts_free(other);
    }
}

thread_local! {
    static MOVER: RefCell<Option<(*mut cw_callouts, cw_handle)>> = const { RefCell::new(None) };
}

/// Moves its own callout to CPU 1 and checks the move waits.
unsafe extern "C" fn move_self(arg: *mut c_void) {
    let (set, c) = MOVER.with(|m| m.borrow().expect("set by the test"));
    // SAFETY: the test keeps the set live while its handlers run.
    unsafe {
        assert_eq!(cw_callout_reset_on(set, c, 1, Some(record), tag(6), 1), 0);
        assert_eq!(cw_callout_cpu(set, c), 0);
        assert_eq!(cw_callout_pending(set, c), 1);
        assert_eq!(cw_callout_drain(set, c), CW_EDEADLK);
        assert_eq!(cw_callout_free(set, c), CW_EDEADLK);
        record(arg);
    }
}

/// Drains its own callout.
unsafe extern "C" fn drain_self(arg: *mut c_void) {
    let (set, c) = MOVER.with(|m| m.borrow().expect("set by the test"));
    // SAFETY: as above.
    unsafe {
        assert_eq!(
            cw_callout_async_drain(set, c, Some(drained)),
            CW_ASYNC_DRAIN_PENDING
        );
        assert_eq!(cw_callout_async_drain(set, c, Some(drained)), CW_EBUSY);
        assert_eq!(cw_callout_reset_on(set, c, 1, Some(record), tag(9), 0), 0);
        record(arg);
    }
}

#[test]
fn percpu_moves_wait_for_the_handler_and_async_drain_follows_it() {
    let set = new_set(2);
    let mut c = cw_handle::default();
    // SAFETY: the set is live; the handlers are safe on this thread.
    unsafe {
        assert_eq!(cw_callout_init(set, 0, &mut c), CW_OK);
        MOVER.with(|m| *m.borrow_mut() = Some((set, c)));
        assert_eq!(
            cw_callout_reset_on(set, c, 1, Some(move_self), tag(1), -1),
            0
        );
        tick(set, 0);
        assert_eq!(take_log(), [1]);
        assert_eq!(cw_callout_cpu(set, c), 1);
        tick(set, 0);
        tick(set, 1);
        assert_eq!(take_log(), [6]);
        // The drain follows its handler on CPU 1; the reset made meanwhile was ignored.
        assert_eq!(
            cw_callout_reset_on(set, c, 1, Some(drain_self), tag(2), -1),
            0
        );
        tick(set, 1);
        assert_eq!(take_log(), [2, 1002]);
        assert_eq!(cw_callout_pending(set, c), 0);
        assert_eq!(cw_callout_active(set, c), 0);
        // Not running: pending gives CANCELLED, idle gives IDLE; drain never runs.
        assert_eq!(cw_callout_reset_on(set, c, 3, Some(record), tag(3), 0), 0);
        assert_eq!(
            cw_callout_async_drain(set, c, Some(drained)),
            CW_ASYNC_DRAIN_CANCELLED
        );
        assert_eq!(
            cw_callout_async_drain(set, c, Some(drained)),
            CW_ASYNC_DRAIN_IDLE
        );
        for _ in 0..4 {
            tick(set, 0);
            tick(set, 1);
        }
        assert_eq!(take_log(), []);
        assert_eq!(cw_callout_deactivate(set, c), CW_OK);
        assert_eq!(cw_callout_stop(set, c), 0);
        assert_eq!(cw_callout_drain(set, c), 0);
        assert_eq!(cw_callout_free(set, c), CW_OK);
        assert_eq!(cw_callout_async_drain(set, c, Some(drained)), CW_ESTALE);
        (*set).check_invariants().unwrap();
        MOVER.with(|m| *m.borrow_mut() = None);
        cw_callouts_free(set);
    }
}
