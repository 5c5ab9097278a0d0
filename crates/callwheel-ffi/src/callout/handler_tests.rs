//! The extern functions called from handlers and from several threads, as C would: handlers
//! that cancel, re-arm and drain, the FreeBSD flags, every error's code and text, panics at
//! the boundary, and tables shared by threads. The fixtures are the parent module's.

use super::*;

// The handlers of this module as function pointers, made once (see the parent's statics).
static CANCEL_NEXT: Func = cancel_next;
static REARM: Func = rearm;
static COUNT: Func = count;
static SLOW: Func = slow;

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
            cw_softclock(cw, 0),
            cw_hardclock(cw, 0),
            cw_ticks(cw, 0, &mut ticks),
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
