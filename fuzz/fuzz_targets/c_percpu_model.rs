//! The per-CPU half of the `c_api` target: two callout tables of one to four CPUs each
//! (cw_callouts_new_percpu) and one of one CPU (cw_callouts_new) beside them, driven as a C
//! program would, with `cw_callout_async_drain`, against a model of each callout.
//!
//! The three are *owners* 0 and 1 (the sets) and 2 (the table of one CPU, driven through CPU
//! 0 and -1). The model of a callout holds what the documentation promises:
//!
//! - an arming fires at most once, only if it was not stopped, drained, freed or replaced,
//!   with the argument of the latest accepted arming, never before its deadline (ticks or sbt
//!   counted on the clock of the CPU that runs it, from the arming; kept a tick loose for the
//!   sbt rounding), and only on the CPU it was armed on — or, for a move asked while its
//!   handler runs, on the CPU it goes to or (if that CPU cannot take it) the old one;
//! - `cw_callout_cpu` names the CPU the callout was armed on or moved to, the old CPU
//!   while a move waits, and after the handler returns the new CPU or the old one;
//! - pending is exactly "armed and not yet run" (a waiting move counts), active follows
//!   arm/stop/deactivate; a CPU outside the table is CW_EINVAL, a full fixed pool CW_ENOMEM;
//! - async drain: CW_ASYNC_DRAIN_CANCELLED / _IDLE when the handler does not run (and the drain
//!   is never called), _PENDING when it does, then resets are ignored (0) and a second drain
//!   is CW_EBUSY until `drain(arg)` runs, exactly once, with the latest arming's argument,
//!   after the handler returned and before the processing call that ran it returns, with the
//!   callout neither pending nor running (the drain sometimes frees it);
//! - draining or freeing a callout from its own handler is CW_EDEADLK; processing a CPU whose
//!   handlers run (further up the stack) is CW_EBUSY; a CPU's ticks never go back;
//! - a handle of another set, of the table, of a set given to the table, or a forged one is
//!   CW_ESTALE from every call and changes nothing: the owner's own view of that callout
//!   (pending, active, CPU), every CPU's event window and the table's counts are as before, and
//!   the model goes on checking that the callout fires as it was armed.
//!
//! Where the documentation leaves a result open (the active flag after a drain of a running
//! handler, the CPU after a waiting move is cancelled, the order of two errors) the model
//! forgets what it knew and asks the library next time instead of checking.

use core::cell::{Cell, RefCell};
use core::ffi::{c_int, c_void};
use core::ptr::{null, null_mut, without_provenance_mut};

use callwheel_ffi::{
    cw_c_prel, cw_callout_active, cw_callout_async_drain, cw_callout_cpu, cw_callout_deactivate,
    cw_callout_drain, cw_callout_free, cw_callout_init, cw_callout_next_event, cw_callout_pending,
    cw_callout_process, cw_callout_reset, cw_callout_reset_on, cw_callout_reset_sbt_on,
    cw_callout_stop, cw_callouts, cw_callouts_free, cw_callouts_ncpu, cw_callouts_new,
    cw_callouts_new_percpu, cw_func, cw_handle, cw_hardclock, cw_softclock, cw_softticks, cw_ticks,
    CW_ASYNC_DRAIN_CANCELLED, CW_ASYNC_DRAIN_IDLE, CW_ASYNC_DRAIN_PENDING, CW_BACKING_HASHED,
    CW_BACKING_LIST, CW_BACKING_WHEEL, CW_C_ABSOLUTE, CW_C_DIRECT_EXEC, CW_EBUSY, CW_EDEADLK,
    CW_EINVAL, CW_ENOMEM, CW_ERANGE, CW_ESTALE, CW_NCPU_MAX, CW_OK, CW_SBT_1MS,
};

use super::{Bytes, KNOWN_FLAGS};

/// Owners 0 and 1 are the tables of several CPUs ("sets"), owner 2 the table of one.
const TABLE: usize = 2;
const OWNERS: usize = 3;
/// The most CPUs a set of this target has.
const MAX_CPU: usize = 4;

struct Callout {
    owner: usize,
    handle: cw_handle,
    freed: bool,
    /// Armed and not yet run, stopped or replaced (a move waiting for the handler counts).
    armed: bool,
    /// None where the documentation leaves the flag open.
    active: Option<bool>,
    /// Its handler is on the stack.
    running: bool,
    /// The CPU its handler runs (or last ran) on.
    runs_on: usize,
    /// Accepted armings so far; the low byte travels in the handler's argument.
    serial: u32,
    /// The CPU whose table holds it; None when the model cannot tell (it then asks).
    cpu: Option<usize>,
    /// The CPUs the current arming may run on.
    fire_cpus: [usize; 2],
    /// The earliest tick, per CPU, at which the current arming may run.
    not_before: [u64; MAX_CPU],
    /// The CPU a move asked while the handler runs goes to.
    moving: Option<usize>,
    /// An async drain answered CW_ASYNC_DRAIN_PENDING and its drain has not run yet.
    draining: bool,
    /// The processing call whose return ends the handler's deferred work (move, drain).
    due_at: Option<u32>,
}

/// A processing call (hardclock, softclock, process) in progress.
#[derive(Clone, Copy)]
struct Frame {
    owner: usize,
    cpu: usize,
    serial: u32,
}

struct State<'a> {
    bytes: &'a Bytes<'a>,
    sets: [*mut cw_callouts; 2],
    table: *mut cw_callouts,
    ncpu: [usize; OWNERS],
    fixed: [bool; OWNERS],
    hz: [u32; OWNERS],
    callouts: RefCell<Vec<Callout>>,
    frames: RefCell<Vec<Frame>>,
    next_frame: Cell<u32>,
    /// Callouts whose handlers are on the stack, innermost last.
    handlers: RefCell<Vec<usize>>,
    /// The callout the next `pick` of its own owner returns (a handler acting on itself).
    prefer: Cell<Option<usize>>,
    depth: Cell<u32>,
    last_ticks: [[Cell<u64>; MAX_CPU]; OWNERS],
    owners: [Cell<u64>; OWNERS],
}

thread_local! {
    static STATE: Cell<*const State<'static>> = const { Cell::new(null()) };
}

fn state() -> &'static State<'static> {
    let p = STATE.with(Cell::get);
    assert!(!p.is_null());
    // SAFETY: `run` stores a pointer to its `State` before any handler can run and clears it
    // only after the sets and the table are freed, so it is live whenever a handler or a
    // drain runs; the state is only read through shared references (its fields are cells).
    unsafe { &*p }
}

/// A handler's argument: the owner, the callout's index and its arming's low byte.
fn arg(owner: usize, index: usize, serial: u32) -> *mut c_void {
    without_provenance_mut(((index << 8 | (serial & 0xff) as usize) << 2) | owner)
}

fn unarg(arg: *mut c_void) -> (usize, usize, u32) {
    let a = arg.addr();
    (a & 3, a >> 10, (a >> 2 & 0xff) as u32)
}

fn handler() -> cw_func {
    Some(fired as unsafe extern "C" fn(*mut c_void))
}

fn drain_fn() -> cw_func {
    Some(drained as unsafe extern "C" fn(*mut c_void))
}

unsafe extern "C" fn fired(arg: *mut c_void) {
    let s = state();
    let (owner, i, serial) = unarg(arg);
    let frame = *s
        .frames
        .borrow()
        .last()
        .expect("a handler ran outside processing");
    assert_eq!(
        frame.owner, owner,
        "a handler ran from another owner's processing"
    );
    let tick = ticks(s, owner, frame.cpu);
    {
        let mut callouts = s.callouts.borrow_mut();
        let c = &mut callouts[i];
        assert_eq!(c.owner, owner);
        assert!(!c.freed, "a freed callout ran");
        assert!(c.armed, "a stopped callout ran, or one arming ran twice");
        assert!(!c.running, "a callout's handler ran inside itself");
        assert_eq!(
            c.serial & 0xff,
            serial,
            "a handler ran with a replaced arming's argument"
        );
        assert!(
            c.fire_cpus.contains(&frame.cpu),
            "armed for CPU {:?}, ran on CPU {}",
            c.fire_cpus,
            frame.cpu
        );
        assert!(
            tick >= c.not_before[frame.cpu],
            "ran at tick {tick}, before its deadline {}",
            c.not_before[frame.cpu]
        );
        c.armed = false;
        c.running = true;
        c.runs_on = frame.cpu;
        c.moving = None;
        c.cpu = Some(frame.cpu);
    }
    s.handlers.borrow_mut().push(i);
    // Often act on itself first: move or re-arm, async drain, drain or free, stop.
    s.prefer.set(Some(i));
    match s.bytes.below(6) {
        0 | 1 => arm(s, owner),
        2 => async_drain_op(s, owner),
        3 => wait_op(s, owner),
        4 => stop_op(s, owner),
        _ => {}
    }
    s.prefer.set(None);
    reenter(s);
    assert_eq!(s.handlers.borrow_mut().pop(), Some(i));
    let mut callouts = s.callouts.borrow_mut();
    let c = &mut callouts[i];
    c.running = false;
    if c.moving.is_some() || c.draining {
        c.due_at = Some(frame.serial);
    }
}

unsafe extern "C" fn drained(arg: *mut c_void) {
    let s = state();
    let (owner, i, serial) = unarg(arg);
    let frame = *s
        .frames
        .borrow()
        .last()
        .expect("a drain ran outside processing");
    assert_eq!(
        frame.owner, owner,
        "a drain ran from another owner's processing"
    );
    let h = {
        let mut callouts = s.callouts.borrow_mut();
        let c = &mut callouts[i];
        assert!(c.draining, "a drain ran that was not asked for, or twice");
        assert!(!c.running, "a drain ran before its handler returned");
        assert_eq!(
            c.serial & 0xff,
            serial,
            "a drain ran without the latest arming's argument"
        );
        c.draining = false;
        c.due_at = None;
        c.handle
    };
    assert_eq!(pending(s, owner, h), 0, "a drained callout is not pending");
    if s.bytes.below(2) == 0 {
        // The drain may free the callout.
        assert_eq!(free(s, owner, h), CW_OK);
        s.callouts.borrow_mut()[i].freed = true;
    }
    check(s, owner);
}

fn reenter(s: &State<'_>) {
    for o in 0..OWNERS {
        check(s, o);
    }
    if s.depth.get() >= 3 {
        return;
    }
    s.depth.set(s.depth.get() + 1);
    for _ in 0..s.bytes.below(3) {
        op(s);
    }
    s.depth.set(s.depth.get() - 1);
}

/// CPU `cpu`'s tick, never going back.
fn ticks(s: &State<'_>, owner: usize, cpu: usize) -> u64 {
    let mut t = 0;
    // SAFETY: the sets and the table are live for the whole run; `t` is a local.
    let rc = unsafe {
        if owner == TABLE {
            cw_ticks(s.table, 0, &mut t)
        } else {
            cw_ticks(s.sets[owner], cpu as c_int, &mut t)
        }
    };
    assert_eq!(rc, CW_OK);
    let last = &s.last_ticks[owner][cpu];
    assert!(t >= last.get(), "time went back on owner {owner} CPU {cpu}");
    last.set(t);
    t
}

fn check(s: &State<'_>, owner: usize) {
    // SAFETY: as in `ticks`.
    let broken = unsafe {
        if owner == TABLE {
            (*s.table).check_invariants()
        } else {
            (*s.sets[owner]).check_invariants()
        }
    };
    if let Err(e) = broken {
        panic!("owner {owner}: {e}");
    }
    for cpu in 0..s.ncpu[owner] {
        ticks(s, owner, cpu);
    }
}

// The calls on one callout, for either kind of owner. SAFETY (for each): the sets and the
// table are live for the whole run, and the handler and drain accept any argument `arg` built.

fn pending(s: &State<'_>, owner: usize, h: cw_handle) -> c_int {
    // SAFETY: see above.
    unsafe {
        if owner == TABLE {
            cw_callout_pending(s.table, h)
        } else {
            cw_callout_pending(s.sets[owner], h)
        }
    }
}

fn active(s: &State<'_>, owner: usize, h: cw_handle) -> c_int {
    // SAFETY: see above.
    unsafe {
        if owner == TABLE {
            cw_callout_active(s.table, h)
        } else {
            cw_callout_active(s.sets[owner], h)
        }
    }
}

fn cpu_of(s: &State<'_>, owner: usize, h: cw_handle) -> c_int {
    if owner == TABLE {
        // A table is one CPU's queue; its liveness answers for the handle.
        return match pending(s, owner, h) {
            0 | 1 => 0,
            rc => rc,
        };
    }
    // SAFETY: see above.
    unsafe { cw_callout_cpu(s.sets[owner], h) }
}

fn stop(s: &State<'_>, owner: usize, h: cw_handle) -> c_int {
    // SAFETY: see above.
    unsafe {
        if owner == TABLE {
            cw_callout_stop(s.table, h)
        } else {
            cw_callout_stop(s.sets[owner], h)
        }
    }
}

fn drain(s: &State<'_>, owner: usize, h: cw_handle) -> c_int {
    // SAFETY: see above.
    unsafe {
        if owner == TABLE {
            cw_callout_drain(s.table, h)
        } else {
            cw_callout_drain(s.sets[owner], h)
        }
    }
}

fn free(s: &State<'_>, owner: usize, h: cw_handle) -> c_int {
    // SAFETY: see above.
    unsafe {
        if owner == TABLE {
            cw_callout_free(s.table, h)
        } else {
            cw_callout_free(s.sets[owner], h)
        }
    }
}

fn async_drain(s: &State<'_>, owner: usize, h: cw_handle, f: cw_func) -> c_int {
    // SAFETY: see above.
    unsafe {
        if owner == TABLE {
            cw_callout_async_drain(s.table, h, f)
        } else {
            cw_callout_async_drain(s.sets[owner], h, f)
        }
    }
}

fn deactivate(s: &State<'_>, owner: usize, h: cw_handle) -> c_int {
    // SAFETY: see above.
    unsafe {
        if owner == TABLE {
            cw_callout_deactivate(s.table, h)
        } else {
            cw_callout_deactivate(s.sets[owner], h)
        }
    }
}

/// An arming as the input chose it.
#[derive(Clone, Copy, Debug)]
enum Arm {
    Ticks(i64),
    Sbt {
        sbt: i64,
        precision: i64,
        flags: u32,
    },
}

fn reset(s: &State<'_>, owner: usize, h: cw_handle, arm: Arm, a: *mut c_void, cpu: c_int) -> c_int {
    // SAFETY: see above.
    unsafe {
        match (owner == TABLE, arm) {
            (true, Arm::Ticks(t)) => cw_callout_reset(s.table, h, t, handler(), a),
            (false, Arm::Ticks(t)) => cw_callout_reset_on(s.sets[owner], h, t, handler(), a, cpu),
            (
                true,
                Arm::Sbt {
                    sbt,
                    precision,
                    flags,
                },
            ) => cw_callout_reset_sbt_on(
                s.table,
                h,
                sbt,
                precision,
                handler(),
                a,
                cpu,
                flags as c_int,
            ),
            (
                false,
                Arm::Sbt {
                    sbt,
                    precision,
                    flags,
                },
            ) => cw_callout_reset_sbt_on(
                s.sets[owner],
                h,
                sbt,
                precision,
                handler(),
                a,
                cpu,
                flags as c_int,
            ),
        }
    }
}

/// The earliest tick an arming made at tick `now` may run at: sbt times are rounded up to
/// the exact ceiling of `sbt * hz / 2^32` (relative ones at least a tick ahead; an absolute
/// time already passed is due now).
fn not_before(arm: Arm, now: u64, hz: u32) -> u64 {
    match arm {
        Arm::Ticks(t) => now.saturating_add(t.max(1) as u64),
        Arm::Sbt { sbt, flags, .. } => {
            let ceil = |sbt: i64| {
                let t = (sbt.max(0) as u128 * u128::from(hz)).div_ceil(1 << 32);
                u64::try_from(t).unwrap_or(u64::MAX)
            };
            if flags & CW_C_ABSOLUTE as u32 != 0 {
                ceil(sbt).max(now)
            } else {
                now.saturating_add(ceil(sbt).max(1))
            }
        }
    }
}

/// Where callout `i` is: the model's CPU, or the library's answer (in range) if the model
/// lost track.
fn located(s: &State<'_>, i: usize) -> usize {
    let (owner, h, known) = {
        let c = &s.callouts.borrow()[i];
        (c.owner, c.handle, c.cpu)
    };
    let rc = cpu_of(s, owner, h);
    assert!(
        (0..s.ncpu[owner] as c_int).contains(&rc),
        "callout_cpu: {rc} for a live callout"
    );
    if let Some(cpu) = known {
        assert_eq!(
            rc, cpu as c_int,
            "callout_cpu names where it was armed or moved"
        );
    }
    s.callouts.borrow_mut()[i].cpu = Some(rc as usize);
    rc as usize
}

/// A CPU argument: mostly one of the owner's, sometimes -1, sometimes outside.
fn cpu_arg(s: &State<'_>, owner: usize) -> c_int {
    let n = s.ncpu[owner] as c_int;
    match s.bytes.below(8) {
        0 => -1,
        1 => [-2, n, c_int::MIN, c_int::MAX, CW_NCPU_MAX][s.bytes.below(5) as usize],
        _ => c_int::from(s.bytes.u8()) % n,
    }
}

/// A handle that names no callout of `owner`: an index in range, a generation no short run
/// reaches, and mostly the owner's own identity.
fn forged(s: &State<'_>, owner: usize) -> cw_handle {
    let index = u64::from(s.bytes.below(32));
    let generation = u64::from(s.bytes.u8()) << 24 | 1 << 31;
    let id = index | generation << 32;
    let who = if s.bytes.below(4) == 0 {
        s.bytes.u64()
    } else {
        s.owners[owner].get()
    };
    cw_handle { id, owner: who }
}

fn issued(s: &State<'_>, owner: usize, h: cw_handle) {
    assert_ne!(h.owner, 0, "an issued handle has an owner");
    match s.owners[owner].get() {
        0 => s.owners[owner].set(h.owner),
        o => assert_eq!(o, h.owner, "one set, one owner"),
    }
    for other in (0..OWNERS).filter(|&o| o != owner) {
        assert_ne!(s.owners[other].get(), h.owner, "two owners, two identities");
    }
}

/// An index of a callout of `owner` (or of any other owner, with `foreign`), chosen by the
/// input; None sometimes, and when there is none.
fn pick(s: &State<'_>, owner: usize, foreign: bool) -> Option<usize> {
    if let Some(i) = s.prefer.take().filter(|_| !foreign) {
        return Some(i);
    }
    let callouts = s.callouts.borrow();
    let candidates: Vec<usize> = (0..callouts.len())
        .filter(|&i| {
            let c = &callouts[i];
            // Between a handler's return and the end of the processing call that ran it (the
            // drain or move the library makes there) the documentation promises nothing.
            if foreign {
                c.owner != owner
            } else {
                c.owner == owner && c.due_at.is_none()
            }
        })
        .collect();
    if candidates.is_empty() || s.bytes.below(8) == 0 {
        return None;
    }
    Some(candidates[usize::from(s.bytes.u8()) % candidates.len()])
}

/// One call, chosen by the input, checked against the model.
fn op(s: &State<'_>) {
    let owner = usize::from(s.bytes.below(OWNERS as u8));
    match s.bytes.below(16) {
        0 | 1 => process(s, owner),
        2 | 3 => init(s, owner),
        4..=6 => arm(s, owner),
        7 => stop_op(s, owner),
        8 => wait_op(s, owner),
        9 => async_drain_op(s, owner),
        10 => query_op(s, owner),
        11 => foreign(s, owner),
        12 => match s.bytes.below(2) {
            0 => null_calls(s),
            _ => next_event(s, owner),
        },
        _ => {
            // Some ticks of every CPU of the owner, each softclock right after its hardclock.
            for _ in 0..s.bytes.below(16) {
                for cpu in 0..s.ncpu[owner] {
                    for kind in [0, 1] {
                        process_cpu(s, owner, cpu as c_int, kind, 0);
                    }
                }
            }
        }
    }
    check(s, owner);
}

/// A clock interrupt, softclock or tickless interrupt on one CPU (sometimes one outside the
/// set), then what must be done once it returns: drains called and waiting moves made.
fn process(s: &State<'_>, owner: usize) {
    let kind = s.bytes.below(3);
    let cpu = if owner == TABLE { 0 } else { cpu_arg(s, owner) };
    let valid = (0..s.ncpu[owner] as c_int).contains(&cpu);
    let now = if valid {
        let t = ticks(s, owner, cpu as usize);
        // Mostly a few ticks either way; sometimes anywhere, or the last ticks.
        match s.bytes.below(8) {
            0 => t.saturating_sub(u64::from(s.bytes.u8())),
            1 => s.bytes.u64(),
            2 => u64::MAX - u64::from(s.bytes.u8()),
            _ => t.saturating_add(u64::from(s.bytes.u8())),
        }
    } else {
        0
    };
    process_cpu(s, owner, cpu, kind, now);
}

/// Processing call `kind` (hardclock, softclock, process to `now`) on one CPU.
fn process_cpu(s: &State<'_>, owner: usize, cpu: c_int, kind: u8, now: u64) {
    let valid = (0..s.ncpu[owner] as c_int).contains(&cpu);
    let busy = s
        .frames
        .borrow()
        .iter()
        .any(|f| f.owner == owner && f.cpu as c_int == cpu);
    let serial = s.next_frame.get();
    s.next_frame.set(serial + 1);
    if valid {
        s.frames.borrow_mut().push(Frame {
            owner,
            cpu: cpu as usize,
            serial,
        });
    }
    // SAFETY: the sets and the table are live; the handlers and drains armed on them accept
    // the arguments `arg` built.
    let rc = unsafe {
        match (owner == TABLE, kind) {
            (true, 0) => cw_hardclock(s.table, 0),
            (true, 1) => cw_softclock(s.table, 0),
            (true, _) => cw_callout_process(s.table, 0, now),
            (false, 0) => cw_hardclock(s.sets[owner], cpu),
            (false, 1) => cw_softclock(s.sets[owner], cpu),
            (false, _) => cw_callout_process(s.sets[owner], cpu, now),
        }
    };
    if valid {
        s.frames.borrow_mut().pop();
    }
    if !valid {
        assert_eq!(
            rc, CW_EINVAL,
            "processing CPU {cpu} of a set of {}",
            s.ncpu[owner]
        );
        return;
    }
    if busy {
        assert_eq!(rc, CW_EBUSY, "one caller runs a CPU's handlers at a time");
    } else if kind == 1 {
        assert!(rc >= 0, "softclock: {rc}");
    } else {
        assert!(rc == 0 || rc == 1, "hardclock or process: {rc}");
    }
    // What the handlers this call ran left to do after returning is done by now.
    let due: Vec<usize> = s
        .callouts
        .borrow()
        .iter()
        .enumerate()
        .filter(|(_, c)| c.due_at == Some(serial))
        .map(|(i, _)| i)
        .collect();
    for i in due {
        let (draining, moving, old, freed) = {
            let c = &s.callouts.borrow()[i];
            (c.draining, c.moving, c.cpu, c.freed)
        };
        assert!(
            !draining,
            "a drain was not called after its handler returned"
        );
        if let (Some(target), false) = (moving, freed) {
            let mut c = s.callouts.borrow_mut();
            c[i].cpu = None;
            c[i].moving = None;
            drop(c);
            let now = located(s, i);
            assert!(
                Some(now) == old || now == target,
                "a waiting move to {target} left the callout on {now} (was {old:?})"
            );
        }
        s.callouts.borrow_mut()[i].due_at = None;
    }
}

fn init(s: &State<'_>, owner: usize) {
    let cpu = if owner == TABLE { 0 } else { cpu_arg(s, owner) };
    let mut h = cw_handle::default();
    // SAFETY: the sets and the table are live; `h` is a local.
    let rc = unsafe {
        if owner == TABLE {
            cw_callout_init(s.table, -1, &mut h)
        } else {
            cw_callout_init(s.sets[owner], cpu, &mut h)
        }
    };
    if !(-1..s.ncpu[owner] as c_int).contains(&cpu) {
        assert_eq!(rc, CW_EINVAL, "init on CPU {cpu}");
        assert_eq!(h, cw_handle::default(), "nothing written on failure");
        return;
    }
    if rc == CW_ENOMEM && s.fixed[owner] {
        assert_eq!(h, cw_handle::default(), "nothing written on failure");
        return;
    }
    assert_eq!(rc, CW_OK, "init");
    issued(s, owner, h);
    s.callouts.borrow_mut().push(Callout {
        owner,
        handle: h,
        freed: false,
        armed: false,
        active: Some(false),
        running: false,
        runs_on: 0,
        serial: 0,
        cpu: Some(cpu.max(0) as usize),
        fire_cpus: [0; 2],
        not_before: [0; MAX_CPU],
        moving: None,
        draining: false,
        due_at: None,
    });
}

/// An arming: mostly due within a few ticks (so that runs see it fire), sometimes any time.
fn arm_choice(s: &State<'_>) -> Arm {
    let near = s.bytes.below(4) != 0;
    if s.bytes.below(2) == 0 {
        return Arm::Ticks(if near {
            i64::from(s.bytes.below(8)) - 1
        } else {
            s.bytes.ticks()
        });
    }
    let sbt = if near {
        (i64::from(s.bytes.below(16)) - 2) * CW_SBT_1MS
    } else {
        s.bytes.sbt()
    };
    let precision = if near { 0 } else { s.bytes.sbt() };
    let mut flags = match s.bytes.below(5) {
        0 => s.bytes.u64() as u32,
        1 => CW_C_ABSOLUTE as u32,
        2 => CW_C_DIRECT_EXEC as u32,
        _ => 0,
    };
    if s.bytes.below(2) == 0 {
        flags |= cw_c_prel(c_int::from(s.bytes.below(130))) as u32;
    }
    Arm::Sbt {
        sbt,
        precision,
        flags,
    }
}

/// reset_on / reset_sbt_on (reset / reset_sbt_on on the table), possibly a move, possibly of a
/// callout whose handler runs (a deferred move), with valid and invalid CPUs and flags.
fn arm(s: &State<'_>, owner: usize) {
    let chosen = pick(s, owner, false);
    let arming = arm_choice(s);
    let cpu = cpu_arg(s, owner);
    let Some(i) = chosen else {
        let rc = reset(s, owner, forged(s, owner), arming, arg(owner, 0, 0), cpu);
        assert!(rc == CW_ESTALE || rc == CW_EINVAL, "a forged handle: {rc}");
        return;
    };
    let bad_flags = matches!(arming, Arm::Sbt { flags, .. } if flags & !KNOWN_FLAGS != 0);
    // The table's tick form takes no CPU; its sbt form takes 0 or -1.
    let bad_cpu = match (owner == TABLE, arming) {
        (true, Arm::Ticks(_)) => false,
        (true, Arm::Sbt { .. }) => !(cpu == 0 || cpu == -1),
        (false, _) => !(-1..s.ncpu[owner] as c_int).contains(&cpu),
    };
    let (h, freed, armed, running, draining, moving, serial) = {
        let c = &s.callouts.borrow()[i];
        (
            c.handle, c.freed, c.armed, c.running, c.draining, c.moving, c.serial,
        )
    };
    // Where it is before the call, and every CPU's tick then (the deadline counts from a
    // tick at or after it).
    let old = if freed || draining || bad_flags || bad_cpu {
        0
    } else if running {
        s.callouts.borrow()[i].runs_on
    } else {
        located(s, i)
    };
    let now: Vec<u64> = (0..s.ncpu[owner]).map(|c| ticks(s, owner, c)).collect();
    let rc = reset(
        s,
        owner,
        h,
        arming,
        arg(owner, i, serial.wrapping_add(1)),
        cpu,
    );
    if bad_flags || bad_cpu {
        if freed {
            assert!(
                rc == CW_EINVAL || rc == CW_ESTALE,
                "bad arguments and a freed handle: {rc}"
            );
        } else {
            assert_eq!(rc, CW_EINVAL, "cpu {cpu} of {}, {arming:?}", s.ncpu[owner]);
        }
        return;
    }
    if freed {
        assert_eq!(rc, CW_ESTALE, "a freed handle");
        return;
    }
    if draining {
        assert_eq!(rc, 0, "a reset while an async drain waits is ignored");
        return;
    }
    let target = match cpu {
        _ if owner == TABLE => 0,
        -1 => moving.unwrap_or(old),
        c => c as usize,
    };
    if rc == CW_ERANGE {
        return;
    }
    if rc == CW_ENOMEM {
        assert!(
            s.fixed[owner] && target != old,
            "ENOMEM only for a move into a full pool"
        );
        return;
    }
    expect(rc, armed, "reset reports whether it was pending");
    let hz = s.hz[owner];
    let mut callouts = s.callouts.borrow_mut();
    let c = &mut callouts[i];
    c.serial = serial.wrapping_add(1);
    c.armed = true;
    c.active = Some(true);
    for (cpu, &t) in now.iter().enumerate() {
        c.not_before[cpu] = not_before(arming, t, hz);
    }
    if running {
        // Deferred: it stays where it runs until the handler returns.
        c.moving = Some(target);
        c.fire_cpus = [target, old];
    } else {
        c.cpu = Some(target);
        c.moving = None;
        c.fire_cpus = [target, target];
    }
}

fn expect(rc: c_int, expected: bool, what: &str) {
    assert_eq!(rc, c_int::from(expected), "{what}");
}

/// The chosen callout, or a forged handle.
fn target(s: &State<'_>, owner: usize) -> (Option<usize>, cw_handle) {
    match pick(s, owner, false) {
        Some(i) => (Some(i), s.callouts.borrow()[i].handle),
        None => (None, forged(s, owner)),
    }
}

/// Forgets the CPU of a callout whose waiting move a stop, drain or free cancelled.
fn cancel(c: &mut Callout) {
    if c.moving.take().is_some() {
        c.cpu = None;
    }
    c.armed = false;
}

fn stop_op(s: &State<'_>, owner: usize) {
    let (chosen, h) = target(s, owner);
    let rc = stop(s, owner, h);
    let Some(i) = chosen.filter(|&i| !s.callouts.borrow()[i].freed) else {
        assert_eq!(rc, CW_ESTALE, "stop of a freed or forged handle");
        return;
    };
    let mut callouts = s.callouts.borrow_mut();
    let c = &mut callouts[i];
    expect(rc, c.armed, "stop reports whether it was pending");
    cancel(c);
    c.active = Some(false);
}

/// drain or free: refused from the callout's own handler; skipped when its handler runs
/// further up the stack (it would wait for itself).
fn wait_op(s: &State<'_>, owner: usize) {
    let freeing = s.bytes.below(2) == 0;
    let (chosen, h) = target(s, owner);
    let innermost = s.handlers.borrow().last().copied();
    if let Some(i) = chosen {
        if s.callouts.borrow()[i].running && innermost != Some(i) {
            return;
        }
    }
    let rc = if freeing {
        free(s, owner, h)
    } else {
        drain(s, owner, h)
    };
    let Some(i) = chosen.filter(|&i| !s.callouts.borrow()[i].freed) else {
        assert_eq!(rc, CW_ESTALE, "drain or free of a freed or forged handle");
        return;
    };
    let mut callouts = s.callouts.borrow_mut();
    let c = &mut callouts[i];
    if c.running {
        assert_eq!(rc, CW_EDEADLK, "draining or freeing from its own handler");
        return;
    }
    if freeing {
        assert_eq!(rc, CW_OK, "free");
        c.freed = true;
        c.armed = false;
    } else {
        expect(rc, c.armed, "drain reports whether it was pending");
        cancel(c);
        c.active = Some(false);
    }
}

fn async_drain_op(s: &State<'_>, owner: usize) {
    let (chosen, h) = target(s, owner);
    if s.bytes.below(16) == 0 {
        assert_eq!(
            async_drain(s, owner, h, None),
            CW_EINVAL,
            "async drain without a drain"
        );
        return;
    }
    let rc = async_drain(s, owner, h, drain_fn());
    let Some(i) = chosen.filter(|&i| !s.callouts.borrow()[i].freed) else {
        assert_eq!(rc, CW_ESTALE, "async drain of a freed or forged handle");
        return;
    };
    let mut callouts = s.callouts.borrow_mut();
    let c = &mut callouts[i];
    if rc == CW_ENOMEM {
        return;
    }
    if c.draining {
        assert_eq!(rc, CW_EBUSY, "a second async drain while one waits");
    } else if c.running {
        assert_eq!(
            rc, CW_ASYNC_DRAIN_PENDING,
            "async drain of a running handler"
        );
        c.draining = true;
        cancel(c);
        c.active = None;
    } else {
        let expected = if c.armed {
            CW_ASYNC_DRAIN_CANCELLED
        } else {
            CW_ASYNC_DRAIN_IDLE
        };
        assert_eq!(
            rc, expected,
            "async drain of a callout whose handler is not running"
        );
        c.armed = false;
        c.active = Some(false);
    }
}

/// pending, active, deactivate and the CPU.
fn query_op(s: &State<'_>, owner: usize) {
    let what = s.bytes.below(4);
    let (chosen, h) = target(s, owner);
    let live = chosen.filter(|&i| !s.callouts.borrow()[i].freed);
    if what == 3 {
        match live {
            Some(i) if !s.callouts.borrow()[i].running => {
                located(s, i);
            }
            Some(i) => {
                let cpu = s.callouts.borrow()[i].runs_on;
                assert_eq!(
                    cpu_of(s, owner, h),
                    cpu as c_int,
                    "a running callout is where it runs"
                );
            }
            None => assert_eq!(cpu_of(s, owner, h), CW_ESTALE, "the CPU of a stale handle"),
        }
        return;
    }
    let rc = match what {
        0 => pending(s, owner, h),
        1 => active(s, owner, h),
        _ => deactivate(s, owner, h),
    };
    let Some(i) = live else {
        assert_eq!(rc, CW_ESTALE, "a freed or forged handle");
        return;
    };
    let mut callouts = s.callouts.borrow_mut();
    let c = &mut callouts[i];
    match what {
        0 => expect(rc, c.armed, "pending: armed and not yet run"),
        1 => {
            if let Some(a) = c.active {
                expect(rc, a, "active");
            }
        }
        _ => {
            assert_eq!(rc, CW_OK, "deactivate");
            c.active = Some(false);
        }
    }
}

/// A CPU's event window: there is one whenever a callout is armed there for sure.
fn next_event(s: &State<'_>, owner: usize) {
    if owner == TABLE {
        return;
    }
    let cpu = cpu_arg(s, owner);
    let (mut first, mut last) = (0, 0);
    // SAFETY: the set is live; the out-pointers are locals.
    let rc = unsafe { cw_callout_next_event(s.sets[owner], cpu, &mut first, &mut last) };
    if !(0..s.ncpu[owner] as c_int).contains(&cpu) {
        assert_eq!(rc, CW_EINVAL, "next_event on CPU {cpu}");
        return;
    }
    assert!(rc == 0 || rc == 1, "next_event: {rc}");
    if rc == 1 {
        assert!(first <= last, "an event window ends after it starts");
    }
    let surely_armed = s.callouts.borrow().iter().any(|c| {
        c.owner == owner
            && c.armed
            && !c.running
            && c.moving.is_none()
            && c.fire_cpus == [cpu as usize; 2]
    });
    if surely_armed {
        assert_eq!(rc, 1, "a callout is pending on CPU {cpu}");
    }
}

/// What a refused handle must leave alone: every CPU's event window of both sets, the
/// table's counts, and the owner's own view of the callout.
fn snapshot(s: &State<'_>, of: Option<(usize, cw_handle)>) -> Vec<u64> {
    let mut v = Vec::new();
    for (set, &p) in s.sets.iter().enumerate() {
        for cpu in 0..s.ncpu[set] {
            let (mut first, mut last) = (0, 0);
            // SAFETY: the set is live; the out-pointers are locals.
            let rc = unsafe { cw_callout_next_event(p, cpu as c_int, &mut first, &mut last) };
            v.extend([rc as u64, first, last]);
        }
    }
    // SAFETY: the table is live.
    let table = unsafe { &*s.table };
    v.extend([table.pending() as u64, table.records_in_use() as u64]);
    if let Some((owner, h)) = of {
        v.extend(
            [
                pending(s, owner, h),
                active(s, owner, h),
                cpu_of(s, owner, h),
            ]
            .map(|r| r as u64),
        );
    }
    v
}

/// A handle of another owner (either set, or the table), or a forged one, presented to
/// `owner` through a call chosen by the input: CW_ESTALE, nothing changes.
fn foreign(s: &State<'_>, owner: usize) {
    let (of, h) = match pick(s, owner, true) {
        Some(i) => {
            let c = &s.callouts.borrow()[i];
            (Some((c.owner, c.handle)), c.handle)
        }
        None => (None, forged(s, owner)),
    };
    let before = snapshot(s, of);
    let cpu = if owner == TABLE {
        0
    } else {
        c_int::from(s.bytes.u8()) % s.ncpu[owner] as c_int
    };
    let arming = match s.bytes.below(2) {
        0 => Arm::Ticks(i64::from(s.bytes.u8())),
        _ => Arm::Sbt {
            sbt: s.bytes.sbt(),
            precision: 0,
            flags: 0,
        },
    };
    let rc = match s.bytes.below(8) {
        0 => reset(s, owner, h, arming, arg(owner, 0, 0), cpu),
        1 => stop(s, owner, h),
        2 => drain(s, owner, h),
        3 => free(s, owner, h),
        4 => async_drain(s, owner, h, drain_fn()),
        5 => pending(s, owner, h),
        6 => active(s, owner, h),
        _ if owner == TABLE => deactivate(s, owner, h),
        _ => match s.bytes.below(2) {
            0 => deactivate(s, owner, h),
            // SAFETY: the set is live.
            _ => unsafe { cw_callout_cpu(s.sets[owner], h) },
        },
    };
    assert_eq!(
        rc, CW_ESTALE,
        "another owner's or a forged handle names nothing here"
    );
    assert_eq!(
        snapshot(s, of),
        before,
        "a refused handle changed something"
    );
}

/// NULL sets, tables, functions and out-pointers: CW_EINVAL, nothing written.
fn null_calls(s: &State<'_>) {
    let h = cw_handle {
        id: s.bytes.u64(),
        owner: s.bytes.u64(),
    };
    let set = s.sets[usize::from(s.bytes.below(2))];
    let mut hout = cw_handle::default();
    let (mut a, mut b) = (0u64, 0u64);
    // SAFETY: every function accepts NULL for the set, table, functions and out-pointers;
    // `set` and the table are live; the out-pointers are locals.
    let rcs = unsafe {
        match s.bytes.below(3) {
            0 => [
                cw_callouts_ncpu(null()),
                cw_callout_init(null_mut(), 0, &mut hout),
                cw_callout_init(set, 0, null_mut()),
                cw_hardclock(null_mut(), 0),
                cw_softclock(null_mut(), 0),
                cw_ticks(set, 0, null_mut()),
            ],
            1 => [
                cw_callout_reset_on(set, h, 1, None, null_mut(), 0),
                cw_callout_reset_sbt_on(set, h, 1, 0, None, null_mut(), 0, 0),
                cw_callout_async_drain(null_mut(), h, drain_fn()),
                cw_softticks(null_mut(), 0, &mut b),
                cw_callout_stop(null_mut(), h),
                cw_callout_next_event(set, 0, null_mut(), &mut b),
            ],
            _ => [
                cw_callout_pending(null(), h),
                cw_callout_active(null(), h),
                cw_callout_cpu(null(), h),
                cw_callout_free(null_mut(), h),
                cw_callout_process(null_mut(), 0, 0),
                cw_callout_next_event(set, 0, &mut a, null_mut()),
            ],
        }
    };
    assert_eq!(rcs, [CW_EINVAL; 6]);
    assert_eq!(
        hout,
        cw_handle::default(),
        "no handle written by a refused call"
    );
    assert_eq!((a, b), (0, 0), "nothing written by a refused call");
}

fn settings(bytes: &Bytes<'_>) -> (c_int, usize, bool, u32) {
    let backing = [CW_BACKING_LIST, CW_BACKING_HASHED, CW_BACKING_WHEEL][bytes.below(3) as usize];
    let calloutsize = usize::from(bytes.below(8)) + 1;
    let fixed = bytes.below(2) == 0;
    let hz = match bytes.below(6) {
        4 | 5 => (bytes.u64() as u32).max(1),
        k => [1, 100, 1000, 1_000_000_000][k as usize],
    };
    (backing, calloutsize, fixed, hz)
}

fn new_set(bytes: &Bytes<'_>) -> (*mut cw_callouts, usize, bool, u32) {
    let (backing, calloutsize, fixed, hz) = settings(bytes);
    let ncpu = 1 + usize::from(bytes.below(MAX_CPU as u8));
    let mut set = null_mut();
    // Out-of-range CPU counts first: refused, nothing made.
    let bad = [0, -1, CW_NCPU_MAX + 1][bytes.below(3) as usize];
    // SAFETY: `&mut set` is valid for writing a pointer.
    let rc = unsafe {
        cw_callouts_new_percpu(backing, bad, calloutsize, c_int::from(fixed), hz, &mut set)
    };
    assert_eq!(rc, CW_EINVAL, "a set of {bad} CPUs");
    assert!(set.is_null());
    // SAFETY: as above.
    let rc = unsafe {
        cw_callouts_new_percpu(
            backing,
            ncpu as c_int,
            calloutsize,
            c_int::from(fixed),
            hz,
            &mut set,
        )
    };
    assert_eq!(rc, CW_OK);
    assert!(!set.is_null());
    // SAFETY: `set` was just made.
    assert_eq!(unsafe { cw_callouts_ncpu(set) }, ncpu as c_int);
    (set, ncpu, fixed, hz)
}

pub fn run(data: &[u8]) {
    let bytes = Bytes {
        data,
        pos: Cell::new(0),
    };
    let (set0, n0, fixed0, hz0) = new_set(&bytes);
    let (set1, n1, fixed1, hz1) = new_set(&bytes);
    let (backing, calloutsize, fixed, hz) = settings(&bytes);
    let mut table = null_mut();
    // SAFETY: `&mut table` is valid for writing a pointer.
    let rc = unsafe { cw_callouts_new(backing, calloutsize, c_int::from(fixed), hz, &mut table) };
    assert_eq!(rc, CW_OK);
    let state = State {
        bytes: &bytes,
        sets: [set0, set1],
        table,
        ncpu: [n0, n1, 1],
        fixed: [fixed0, fixed1, fixed],
        hz: [hz0, hz1, hz],
        callouts: RefCell::new(Vec::new()),
        frames: RefCell::new(Vec::new()),
        next_frame: Cell::new(0),
        handlers: RefCell::new(Vec::new()),
        prefer: Cell::new(None),
        depth: Cell::new(0),
        last_ticks: Default::default(),
        owners: Default::default(),
    };
    // The handlers find the state here; it is cleared before `state` goes away.
    STATE.with(|p| p.set((&state as *const State<'_>).cast()));
    let mut ops = 0;
    while !state.bytes.done() && ops < 2000 {
        op(&state);
        ops += 1;
    }
    for o in 0..OWNERS {
        check(&state, o);
    }
    // SAFETY: made above, freed once, nothing else uses them now.
    unsafe {
        cw_callouts_free(set0);
        cw_callouts_free(set1);
        cw_callouts_free(table);
    }
    STATE.with(|p| p.set(null()));
}
