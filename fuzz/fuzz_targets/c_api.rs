//! Drives callwheel-ffi's C API — the extern functions, called as a C program would — with
//! random sequences of calls on two tables: random backings and pool sizes, tick counts and
//! sbt times up to the i64 edges, random flags and CPUs, live, stale, wrong-kind and forged
//! handles, handles of the other table (both tables issue the same record numbers: only the
//! owner tells them apart), NULL tables, out-pointers and functions, and handlers that call
//! back into their own table (and into the other one) from inside cw_softclock and
//! cw_hardclock.
//!
//! A model follows what must happen and checks every return code against it: untimeout finds
//! exactly the pending timeouts; a cancelled callout never runs and a one-shot runs at most
//! once; a handle goes stale exactly when its callout ran, was cancelled or was freed; the
//! pending and active flags of callout_init callouts; CW_EBUSY while the table's handlers run
//! and CW_EDEADLK when a handler drains or frees its own callout; a handle given to the table
//! that did not issue it is CW_ESTALE and changes nothing there; ticks never go back; and
//! nothing armed is lost: moved to the last tick at the end of the run, each table runs every
//! callout still armed. The table's own invariants are checked after every call, inside
//! handlers too. Any panic in the
//! library (caught at the boundary or not) aborts the run: libfuzzer's hook sees it first.
//!
//! The same input then drives the caller-driven wheel (`cw_wheel_*`, in `c_wheel_model.rs`) on
//! two wheels, growing or of a small fixed capacity, whose time starts anywhere up to u64::MAX,
//! against a model of each (its time and its pending timers by handle: deadline, window end,
//! value, periodic schedule). It checks: cw_wheel_get, cw_wheel_get_many's and
//! cw_wheel_advance's batches and cw_wheel_expire's callbacks fire only pending timers that are
//! due, with their value and handle, in the documented order where the documentation pins it
//! down (timers not overdue by (deadline, arm order), overdue ones first in, first out: see
//! `c_wheel_model.rs` for what is left open), and nothing only when nothing is due; a
//! periodic timer is re-armed and reports its overruns as `callwheel::Missed::next` says at
//! the wheel's time; expire returns the number of callbacks, which call back into the wheel
//! (add, delete, reset, pull, expire again); del, reset and pending see exactly the
//! pending timers, and a fired, deleted, forged or other wheel's handle is CW_ESTALE; relative
//! times past the end of time and updates back in time are CW_ERANGE, zero periods, unknown
//! policies, capacities of 2^32 - 707 or more and NULL arguments CW_EINVAL, a full fixed
//! capacity CW_ENOMEM, each changing nothing; the wake-up is the wheel's time when a timer is
//! due, otherwise between the wheel's time and the earliest window end (that end exactly while
//! nothing was deleted or reset and no round of pulls is unfinished); the counts follow the
//! model, and cw_wheel_check passes after every call.
//!
//! Last, the same input drives callout tables of several CPUs (`c_percpu_model.rs`): two tables
//! of one to four CPUs from cw_callouts_new_percpu and one from cw_callouts_new beside them,
//! callouts armed on valid, -1 and outside CPUs, moved at once or, from a running handler, when
//! it returns, stopped, drained, freed and async-drained (`cw_callout_async_drain`), each CPU
//! processed on its own (hardclock, softclock, tickless process), handlers calling back into
//! all three. Each arming fires at most once, never before its deadline, on the CPU it was
//! armed on or moved to; a stopped one never; a drain runs exactly once, after its handler; and
//! a handle of another table or a forged one is CW_ESTALE everywhere and changes nothing.
#![no_main]

use core::cell::{Cell, RefCell};
use core::ffi::{c_int, c_void, CStr};
use core::ptr::{null, null_mut, without_provenance_mut};
use std::collections::HashMap;

use callwheel_ffi::{
    cw_c_prel, cw_callout_active, cw_callout_deactivate, cw_callout_drain, cw_callout_free,
    cw_callout_init, cw_callout_next_event, cw_callout_pending, cw_callout_process,
    cw_callout_reset, cw_callout_reset_sbt_on, cw_callout_stop, cw_callouts, cw_callouts_free,
    cw_callouts_new, cw_callouts_set_deviation, cw_func, cw_handle, cw_hardclock, cw_setcallout,
    cw_softclock, cw_softticks, cw_strerror, cw_ticks, cw_timeout, cw_unsetcallout, cw_untimeout,
    CW_BACKING_HASHED, CW_BACKING_LIST, CW_BACKING_WHEEL, CW_C_ABSOLUTE, CW_C_DIRECT_EXEC,
    CW_C_HARDCLOCK, CW_EBUSY, CW_EDEADLK, CW_EINVAL, CW_ENOMEM, CW_ERANGE, CW_ESTALE, CW_OK,
    CW_SBT_1MS, CW_SBT_1S,
};
use libfuzzer_sys::fuzz_target;

#[path = "c_wheel_model.rs"]
mod c_wheel_model;

#[path = "c_percpu_model.rs"]
mod c_percpu_model;

/// The flag bits the API accepts (C_PREL's field is bits 1 to 7).
const KNOWN_FLAGS: u32 = (CW_C_DIRECT_EXEC | CW_C_ABSOLUTE | CW_C_HARDCLOCK) as u32 | 0xfe;

/// The input as a stream of choices; zeros once it runs out.
struct Bytes<'a> {
    data: &'a [u8],
    pos: Cell<usize>,
}

impl Bytes<'_> {
    fn done(&self) -> bool {
        self.pos.get() >= self.data.len()
    }

    fn u8(&self) -> u8 {
        let b = self.data.get(self.pos.get()).copied().unwrap_or(0);
        self.pos.set(self.pos.get() + 1);
        b
    }

    fn below(&self, n: u8) -> u8 {
        self.u8() % n
    }

    fn u64(&self) -> u64 {
        (0..8).fold(0, |v, _| v << 8 | u64::from(self.u8()))
    }

    /// A tick count: mostly small (zero and negative included), sometimes anything.
    fn ticks(&self) -> i64 {
        match self.below(8) {
            0 => self.u64() as i64,
            1 => [i64::MIN, i64::MAX, -1, 0][self.below(4) as usize],
            _ => i64::from(self.u8()) - 8,
        }
    }

    /// A timeout's argument key: a few small ones, or one of many sharing their low bits (so
    /// that (func, arg) hash chains are shared).
    fn key(&self) -> usize {
        if self.below(2) == 0 {
            usize::from(self.below(4))
        } else {
            usize::from(self.u8()) << 6
        }
    }

    /// An sbt time: mostly a few milliseconds, sometimes anything.
    fn sbt(&self) -> i64 {
        match self.below(6) {
            0 => self.u64() as i64,
            1 => [i64::MIN, i64::MAX, -CW_SBT_1S, 0][self.below(4) as usize],
            _ => (i64::from(self.u8()) - 8) * CW_SBT_1MS,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum OneShot {
    Live,
    Cancelled,
    Ran,
}

struct OneShotCallout {
    table: usize,
    handle: cw_handle,
    state: OneShot,
}

struct Persistent {
    table: usize,
    handle: cw_handle,
    freed: bool,
    armed: bool,
    active: bool,
    /// Its handler is running now (so draining or freeing it from there would deadlock).
    running: bool,
}

struct State<'a> {
    bytes: Bytes<'a>,
    tables: [*mut cw_callouts; 2],
    /// Handler-running calls (cw_softclock, cw_hardclock) in progress, per table.
    running: [Cell<u32>; 2],
    /// Nesting of handlers.
    depth: Cell<u32>,
    /// Pending cw_timeout callouts by (table, function, argument).
    timeouts: RefCell<HashMap<(usize, usize, usize), u32>>,
    oneshots: RefCell<Vec<OneShotCallout>>,
    persistents: RefCell<Vec<Persistent>>,
    last_ticks: [Cell<u64>; 2],
    /// Each table's owners, once a handle of that kind has been seen (0 before): one for
    /// cw_setcallout's handles ([`ONE_SHOT`]), one for cw_callout_init's ([`PERSISTENT`]); the
    /// same on these tables of one CPU, different on a table of several.
    owners: [[Cell<u64>; 2]; 2],
}

thread_local! {
    static STATE: Cell<*const State<'static>> = const { Cell::new(null()) };
}

/// The state of the run in progress, for the handlers.
fn state() -> &'static State<'static> {
    let p = STATE.with(Cell::get);
    assert!(!p.is_null());
    // SAFETY: `run` stores a pointer to its `State` before any handler can run and clears it
    // only after both tables are freed, so the pointer is live whenever a handler runs; the
    // state is only read through shared references (its fields are cells).
    unsafe { &*p }
}

/// Argument of a handler: an index (timeout key, one-shot or persistent) and a table.
fn arg(index: usize, table: usize) -> *mut c_void {
    without_provenance_mut(index << 1 | table)
}

fn unarg(arg: *mut c_void) -> (usize, usize) {
    (arg.addr() >> 1, arg.addr() & 1)
}

unsafe extern "C" fn timeout_a(arg: *mut c_void) {
    timeout_ran(0, arg);
}

unsafe extern "C" fn timeout_b(arg: *mut c_void) {
    timeout_ran(1, arg);
}

// A static, so each function has one address: untimeout compares them.
static TIMEOUT_FUNCS: [unsafe extern "C" fn(*mut c_void); 2] = [timeout_a, timeout_b];

fn timeout_ran(func: usize, arg: *mut c_void) {
    let s = state();
    let (key, table) = unarg(arg);
    {
        let mut timeouts = s.timeouts.borrow_mut();
        let n = timeouts
            .get_mut(&(table, func, key))
            .expect("a timeout ran that was never set");
        assert!(*n > 0, "a cancelled timeout ran");
        *n -= 1;
    }
    reenter(s, table);
}

unsafe extern "C" fn oneshot_ran(arg: *mut c_void) {
    let s = state();
    let (i, table) = unarg(arg);
    {
        let mut oneshots = s.oneshots.borrow_mut();
        let o = &mut oneshots[i];
        assert_eq!(o.table, table);
        assert_eq!(
            o.state,
            OneShot::Live,
            "a setcallout callout ran after being cancelled or twice"
        );
        o.state = OneShot::Ran;
    }
    reenter(s, table);
}

unsafe extern "C" fn persistent_ran(arg: *mut c_void) {
    let s = state();
    let (i, table) = unarg(arg);
    {
        let mut persistents = s.persistents.borrow_mut();
        let p = &mut persistents[i];
        assert_eq!(p.table, table);
        assert!(!p.freed, "a freed callout ran");
        assert!(p.armed, "a stopped callout ran");
        assert!(!p.running);
        p.armed = false;
        p.running = true;
    }
    reenter(s, table);
    s.persistents.borrow_mut()[i].running = false;
}

/// A handler's calls back into the tables.
fn reenter(s: &State<'_>, table: usize) {
    check(s, table);
    if s.depth.get() >= 3 {
        return;
    }
    s.depth.set(s.depth.get() + 1);
    for _ in 0..s.bytes.below(3) {
        op(s);
    }
    s.depth.set(s.depth.get() - 1);
}

fn check(s: &State<'_>, table: usize) {
    // SAFETY: the tables are live from `run`'s creation to its end.
    let t = unsafe { &*s.tables[table] };
    if let Err(e) = t.check_invariants() {
        panic!("table {table}: {e}");
    }
    let (mut ticks, mut soft) = (0, 0);
    // SAFETY: as above; the out-pointers are locals.
    unsafe {
        assert_eq!(cw_ticks(s.tables[table], 0, &mut ticks), CW_OK);
        assert_eq!(cw_softticks(s.tables[table], 0, &mut soft), CW_OK);
    }
    assert!(soft <= ticks);
    assert!(ticks >= s.last_ticks[table].get(), "time went back");
    s.last_ticks[table].set(ticks);
    let (mut first, mut last) = (0, 0);
    // SAFETY: as above.
    if unsafe { cw_callout_next_event(s.tables[table], 0, &mut first, &mut last) } == 1 {
        assert!(first >= ticks, "the next event is a tick already passed");
        assert!(last >= first, "the event window ends before it starts");
    }
}

fn expect_bool(rc: c_int, expected: bool, what: &str) {
    assert_eq!(rc, c_int::from(expected), "{what}");
}

/// A handle that names no callout of table `t`: an index possibly in range, a generation no
/// short run reaches, and mostly the table's own owner (so only the generation rejects it),
/// sometimes any owner.
fn forged(s: &State<'_>, t: usize, kind: usize) -> cw_handle {
    let index = u64::from(s.bytes.u8() % 32);
    let generation = u64::from(s.bytes.u8()) << 24 | 1 << 31;
    let owner = match s.bytes.below(8) {
        0 | 1 => s.bytes.u64(),
        // The table's other kind of handle.
        2 => s.owners[t][1 - kind].get(),
        _ => s.owners[t][kind].get(),
    };
    cw_handle {
        id: index | generation << 32,
        owner,
    }
}

/// The kinds of handle a table issues, each with its owner.
const ONE_SHOT: usize = 0;
const PERSISTENT: usize = 1;

/// Notes the owner of a handle of kind `kind` table `t` issued: every handle of one kind of one
/// table has the same one, and no owner of the other table is it.
fn issued(s: &State<'_>, t: usize, kind: usize, h: cw_handle) {
    assert_ne!(h.owner, 0, "an issued handle has an owner");
    match s.owners[t][kind].get() {
        0 => s.owners[t][kind].set(h.owner),
        o => assert_eq!(o, h.owner, "one table's handles of one kind, one owner"),
    }
    for other in &s.owners[1 - t] {
        assert_ne!(other.get(), h.owner, "two tables, two identities");
    }
}

/// What a handle presented to the wrong table must not change: its counts.
fn counts(s: &State<'_>, t: usize) -> (usize, usize) {
    // SAFETY: the tables are live from `run`'s creation to its end.
    let table = unsafe { &*s.tables[t] };
    (table.pending(), table.records_in_use())
}

/// A handle of the other table, presented to table `t` through a function chosen by the
/// input: CW_ESTALE, and nothing changes on either table.
fn cross_table(s: &State<'_>, t: usize) {
    let other = 1 - t;
    let one_shot =
        pick(s, &s.oneshots.borrow(), |o| o.table == other).map(|i| s.oneshots.borrow()[i].handle);
    let persistent = pick(s, &s.persistents.borrow(), |p| p.table == other)
        .map(|i| s.persistents.borrow()[i].handle);
    let Some(h) = (if s.bytes.below(2) == 0 {
        one_shot.or(persistent)
    } else {
        persistent.or(one_shot)
    }) else {
        return;
    };
    let before = [counts(s, 0), counts(s, 1)];
    let cw = s.tables[t];
    let f = Some(persistent_ran as unsafe extern "C" fn(*mut c_void));
    // SAFETY: `cw` is a live table; the handler is never armed (the calls are refused).
    let rc = unsafe {
        match s.bytes.below(10) {
            0 => cw_unsetcallout(cw, h),
            1 => cw_callout_free(cw, h),
            2 => cw_callout_reset(cw, h, s.bytes.ticks(), f, null_mut()),
            3 => cw_callout_reset_sbt_on(cw, h, s.bytes.sbt(), 0, f, null_mut(), 0, 0),
            4 => cw_callout_stop(cw, h),
            5 => cw_callout_drain(cw, h),
            6 => cw_callout_pending(cw, h),
            7 => cw_callout_active(cw, h),
            8 => cw_callout_deactivate(cw, h),
            _ => cw_unsetcallout(cw, h),
        }
    };
    assert_eq!(rc, CW_ESTALE, "another table's handle names nothing here");
    assert_eq!(
        [counts(s, 0), counts(s, 1)],
        before,
        "a refused handle changed something"
    );
}

/// One call, chosen by the input, with its result checked against the model.
fn op(s: &State<'_>) {
    let t = usize::from(s.bytes.below(2));
    let cw = s.tables[t];
    let code = s.bytes.below(21);
    // SAFETY (for every extern call below): `cw` is one of the two live tables, out-pointers
    // are locals, and the handlers passed accept any argument built by `arg`.
    match code {
        0 | 1 => {
            // A clock tick or a tickless interrupt; run what it found due right away, or let
            // it pile up for a later softclock.
            let rc = if s.bytes.below(4) == 0 {
                process(s, t)
            } else {
                hardclock(s, t)
            };
            if rc == 1 && s.bytes.below(2) == 0 {
                softclock(s, t);
            }
        }
        2 => softclock(s, t),
        3 => {
            let (f, key, ticks) = (
                usize::from(s.bytes.below(2)),
                s.bytes.key(),
                s.bytes.ticks(),
            );
            let rc = unsafe { cw_timeout(cw, Some(TIMEOUT_FUNCS[f]), arg(key, t), ticks) };
            match rc {
                CW_OK => *s.timeouts.borrow_mut().entry((t, f, key)).or_default() += 1,
                CW_ENOMEM | CW_ERANGE => {}
                _ => panic!("timeout: {rc}"),
            }
        }
        4 => {
            let (f, key) = (usize::from(s.bytes.below(2)), s.bytes.key());
            let rc = unsafe { cw_untimeout(cw, Some(TIMEOUT_FUNCS[f]), arg(key, t)) };
            let mut timeouts = s.timeouts.borrow_mut();
            let n = timeouts.entry((t, f, key)).or_default();
            expect_bool(rc, *n > 0, "untimeout finds exactly the pending timeouts");
            *n = n.saturating_sub(1);
        }
        5 => {
            let i = s.oneshots.borrow().len();
            let mut h = cw_handle::default();
            let rc =
                unsafe { cw_setcallout(cw, Some(oneshot_ran), arg(i, t), s.bytes.ticks(), &mut h) };
            match rc {
                CW_OK => {
                    issued(s, t, ONE_SHOT, h);
                    s.oneshots.borrow_mut().push(OneShotCallout {
                        table: t,
                        handle: h,
                        state: OneShot::Live,
                    })
                }
                CW_ENOMEM | CW_ERANGE => {}
                _ => panic!("setcallout: {rc}"),
            }
        }
        6 => {
            let chosen = pick(s, &s.oneshots.borrow(), |o| o.table == t)
                .map(|i| (i, s.oneshots.borrow()[i].handle));
            match chosen {
                Some((i, h)) => {
                    let rc = unsafe { cw_unsetcallout(cw, h) };
                    let mut oneshots = s.oneshots.borrow_mut();
                    match oneshots[i].state {
                        OneShot::Live => {
                            assert_eq!(rc, 1, "a live handle cancels");
                            oneshots[i].state = OneShot::Cancelled;
                        }
                        _ => assert_eq!(
                            rc, CW_ESTALE,
                            "a handle goes stale when its callout ran or was cancelled"
                        ),
                    }
                }
                None => assert_eq!(
                    unsafe { cw_unsetcallout(cw, forged(s, t, ONE_SHOT)) },
                    CW_ESTALE
                ),
            }
        }
        7 => {
            let mut h = cw_handle::default();
            let rc = unsafe { cw_callout_init(cw, -1, &mut h) };
            match rc {
                CW_OK => {
                    issued(s, t, PERSISTENT, h);
                    s.persistents.borrow_mut().push(Persistent {
                        table: t,
                        handle: h,
                        freed: false,
                        armed: false,
                        active: false,
                        running: false,
                    })
                }
                CW_ENOMEM => {}
                _ => panic!("callout_init: {rc}"),
            }
        }
        8..=15 => persistent_op(s, t, code),
        16 => {
            // A handle of the wrong kind.
            if let Some(i) = pick(s, &s.persistents.borrow(), |p| p.table == t) {
                let p = &s.persistents.borrow()[i];
                let rc = unsafe { cw_unsetcallout(cw, p.handle) };
                assert_eq!(rc, if p.freed { CW_ESTALE } else { CW_EINVAL });
            }
            if let Some(i) = pick(s, &s.oneshots.borrow(), |o| o.table == t) {
                let o = &s.oneshots.borrow()[i];
                let rc = unsafe { cw_callout_stop(cw, o.handle) };
                assert_eq!(
                    rc,
                    if o.state == OneShot::Live {
                        CW_EINVAL
                    } else {
                        CW_ESTALE
                    }
                );
            }
        }
        17 => null_calls(s, cw),
        20 => cross_table(s, t),
        18 => {
            let code = s.bytes.u64() as c_int;
            let text = cw_strerror(code);
            assert!(!text.is_null());
            // SAFETY: cw_strerror returns a static NUL-terminated string.
            assert!(!unsafe { CStr::from_ptr(text) }.is_empty());
            let n = c_int::from(s.bytes.u8()) - 1;
            let prel = cw_c_prel(n);
            assert!(if (0..=126).contains(&n) {
                prel > 0
            } else {
                prel == CW_EINVAL
            });
            // The default deviation: any percent up to 100 taken, above refused; the callouts
            // armed afterwards may run later, and every check of the model holds all the same.
            let percent = u32::from(s.bytes.u8());
            // SAFETY: `cw` is a live table.
            let rc = unsafe { cw_callouts_set_deviation(cw, percent) };
            assert_eq!(rc, if percent <= 100 { CW_OK } else { CW_EINVAL });
            // SAFETY: NULL is refused.
            assert_eq!(
                unsafe { cw_callouts_set_deviation(null_mut(), 5) },
                CW_EINVAL
            );
        }
        _ => {
            for _ in 0..s.bytes.below(64) {
                if hardclock(s, t) == 1 {
                    softclock(s, t);
                }
            }
        }
    }
    check(s, t);
}

/// cw_hardclock: CW_EBUSY while this table's handlers run (the tick still advances), else
/// whether softclock has work.
fn hardclock(s: &State<'_>, t: usize) -> c_int {
    let busy = s.running[t].get() > 0;
    s.running[t].set(s.running[t].get() + 1);
    // SAFETY: `t` names a live table.
    let rc = unsafe { cw_hardclock(s.tables[t], 0) };
    s.running[t].set(s.running[t].get() - 1);
    if busy {
        assert_eq!(rc, CW_EBUSY, "one thread runs a table's handlers at a time");
    } else {
        assert!(rc == 0 || rc == 1, "hardclock: {rc}");
    }
    rc
}

/// cw_callout_process to a tick drawn across the whole range (a step ahead, anywhere, the last
/// ticks, or now): CW_EBUSY while this table's handlers run (the clock still moves), else
/// whether softclock has work.
fn process(s: &State<'_>, t: usize) -> c_int {
    let now = s.last_ticks[t].get();
    let to = match s.bytes.below(4) {
        0 => now.saturating_add(u64::from(s.bytes.u8())),
        1 => s.bytes.u64(),
        2 => u64::MAX - u64::from(s.bytes.u8()),
        _ => now,
    };
    let busy = s.running[t].get() > 0;
    s.running[t].set(s.running[t].get() + 1);
    // SAFETY: `t` names a live table.
    let rc = unsafe { cw_callout_process(s.tables[t], 0, to) };
    s.running[t].set(s.running[t].get() - 1);
    if busy {
        assert_eq!(rc, CW_EBUSY, "one thread runs a table's handlers at a time");
    } else {
        assert!(rc == 0 || rc == 1, "callout_process: {rc}");
    }
    rc
}

fn softclock(s: &State<'_>, t: usize) {
    let busy = s.running[t].get() > 0;
    s.running[t].set(s.running[t].get() + 1);
    // SAFETY: `t` names a live table.
    let rc = unsafe { cw_softclock(s.tables[t], 0) };
    s.running[t].set(s.running[t].get() - 1);
    if busy {
        assert_eq!(rc, CW_EBUSY, "one thread runs a table's handlers at a time");
    } else {
        assert!(rc >= 0, "softclock: {rc}");
    }
}

/// Nothing armed is lost: moved to the last tick, with its softclock run until it runs
/// nothing more, table `t` has run every callout still armed (a `timeout`, a `setcallout`, a
/// `callout_init` callout). Handlers may still act on the leftover input, within the rules: at
/// the last tick no new arming is accepted.
fn run_to_the_end(s: &State<'_>, t: usize) {
    // SAFETY: `t` names a live table; no handler of it is running (depth 0).
    let rc = unsafe { cw_callout_process(s.tables[t], 0, u64::MAX) };
    assert!(rc == 0 || rc == 1, "callout_process: {rc}");
    loop {
        // SAFETY: as above.
        let ran = unsafe { cw_softclock(s.tables[t], 0) };
        assert!(ran >= 0, "softclock: {ran}");
        if ran == 0 {
            break;
        }
    }
    check(s, t);
    for o in s.oneshots.borrow().iter().filter(|o| o.table == t) {
        assert_ne!(o.state, OneShot::Live, "a setcallout callout never ran");
    }
    for p in s.persistents.borrow().iter().filter(|p| p.table == t) {
        assert!(
            !p.armed || p.freed,
            "an armed callout_init callout never ran"
        );
    }
    for (&(table, ..), &n) in s.timeouts.borrow().iter() {
        assert!(table != t || n == 0, "a timeout never ran");
    }
}

/// An index of `items` matching `keep`, chosen by the input, if any.
fn pick<T>(s: &State<'_>, items: &[T], keep: impl Fn(&T) -> bool) -> Option<usize> {
    let candidates: Vec<usize> = (0..items.len()).filter(|&i| keep(&items[i])).collect();
    if candidates.is_empty() || s.bytes.below(8) == 0 {
        return None; // sometimes a forged handle instead
    }
    Some(candidates[usize::from(s.bytes.u8()) % candidates.len()])
}

/// The callout_* calls on a callout_init callout (or a forged handle).
fn persistent_op(s: &State<'_>, t: usize, code: u8) {
    let cw = s.tables[t];
    let chosen = pick(s, &s.persistents.borrow(), |p| p.table == t);
    let (h, freed, armed, running) = match chosen {
        Some(i) => {
            let p = &s.persistents.borrow()[i];
            (p.handle, p.freed, p.armed, p.running)
        }
        None => (forged(s, t, PERSISTENT), true, false, false),
    };
    let update = |f: &dyn Fn(&mut Persistent)| {
        if let Some(i) = chosen {
            f(&mut s.persistents.borrow_mut()[i]);
        }
    };
    let index = chosen.unwrap_or(0);
    // SAFETY (for every extern call below): `cw` is a live table; the handler accepts the
    // argument built by `arg` for this callout's index.
    match code {
        8 => {
            let ticks = s.bytes.ticks();
            let rc = unsafe { cw_callout_reset(cw, h, ticks, Some(persistent_ran), arg(index, t)) };
            if freed {
                assert_eq!(rc, CW_ESTALE);
            } else if rc != CW_ERANGE {
                expect_bool(rc, armed, "reset reports whether it was pending");
                update(&|p| {
                    p.armed = true;
                    p.active = true;
                });
            }
        }
        9 => {
            let (sbt, precision) = (s.bytes.sbt(), s.bytes.sbt());
            let cpu = c_int::from(s.bytes.below(4)) - 2;
            let mut flags = match s.bytes.below(4) {
                0 => s.bytes.u64() as u32,
                1 => CW_C_ABSOLUTE as u32,
                2 => CW_C_DIRECT_EXEC as u32,
                _ => 0,
            };
            if s.bytes.below(2) == 0 {
                flags |= cw_c_prel(c_int::from(s.bytes.below(130))) as u32;
            }
            let rc = unsafe {
                cw_callout_reset_sbt_on(
                    cw,
                    h,
                    sbt,
                    precision,
                    Some(persistent_ran),
                    arg(index, t),
                    cpu,
                    flags as c_int,
                )
            };
            if flags & !KNOWN_FLAGS != 0 || !(cpu == 0 || cpu == -1) {
                assert_eq!(rc, CW_EINVAL, "flags {flags:#x} cpu {cpu}");
            } else if freed {
                assert_eq!(rc, CW_ESTALE);
            } else if rc != CW_ERANGE {
                expect_bool(rc, armed, "reset_sbt_on reports whether it was pending");
                update(&|p| {
                    p.armed = true;
                    p.active = true;
                });
            }
        }
        10 => {
            let rc = unsafe { cw_callout_stop(cw, h) };
            if freed {
                assert_eq!(rc, CW_ESTALE);
            } else {
                expect_bool(rc, armed, "stop reports whether it was pending");
                update(&|p| {
                    p.armed = false;
                    p.active = false;
                });
            }
        }
        11 => {
            let rc = unsafe { cw_callout_drain(cw, h) };
            if freed {
                assert_eq!(rc, CW_ESTALE);
            } else if running {
                assert_eq!(rc, CW_EDEADLK, "draining from its own handler");
            } else {
                expect_bool(rc, armed, "drain reports whether it was pending");
                update(&|p| {
                    p.armed = false;
                    p.active = false;
                });
            }
        }
        12 => {
            let rc = unsafe { cw_callout_free(cw, h) };
            if freed {
                assert_eq!(rc, CW_ESTALE);
            } else if running {
                assert_eq!(rc, CW_EDEADLK, "freeing from its own handler");
            } else {
                assert_eq!(rc, CW_OK);
                update(&|p| {
                    p.freed = true;
                    p.armed = false;
                });
            }
        }
        13 => {
            let rc = unsafe { cw_callout_pending(cw, h) };
            if freed {
                assert_eq!(rc, CW_ESTALE);
            } else {
                expect_bool(rc, armed, "pending");
            }
        }
        14 => {
            let rc = unsafe { cw_callout_active(cw, h) };
            if freed {
                assert_eq!(rc, CW_ESTALE);
            } else {
                let active = s.persistents.borrow()[index].active;
                expect_bool(rc, active, "active");
            }
        }
        _ => {
            let rc = unsafe { cw_callout_deactivate(cw, h) };
            if freed {
                assert_eq!(rc, CW_ESTALE);
            } else {
                assert_eq!(rc, CW_OK);
                update(&|p| p.active = false);
            }
        }
    }
}

/// NULL tables, out-pointers and functions: refused, nothing changes.
fn null_calls(s: &State<'_>, cw: *mut cw_callouts) {
    let none: cw_func = None;
    let h = cw_handle {
        id: s.bytes.u64(),
        owner: s.bytes.u64(),
    };
    let mut out = 0u64;
    let mut hout = cw_handle::default();
    // SAFETY: every function accepts NULL for the table, out-pointers and functions; `cw` is
    // a live table; `out` is a local.
    let rcs = unsafe {
        match s.bytes.below(4) {
            0 => [
                cw_hardclock(null_mut(), 0),
                cw_softclock(null_mut(), 0),
                cw_ticks(null(), 0, &mut out),
                cw_timeout(null_mut(), Some(timeout_a), null_mut(), 1),
                cw_setcallout(null_mut(), Some(oneshot_ran), null_mut(), 1, &mut hout),
                cw_callout_init(null_mut(), -1, &mut hout),
            ],
            1 => [
                cw_unsetcallout(null_mut(), h),
                cw_callout_free(null_mut(), h),
                cw_callout_stop(null_mut(), h),
                cw_callout_drain(null_mut(), h),
                cw_callout_pending(null(), h),
                cw_callout_deactivate(null_mut(), h),
            ],
            2 => [
                cw_timeout(cw, none, null_mut(), 1),
                cw_untimeout(cw, none, null_mut()),
                cw_setcallout(cw, none, null_mut(), 1, &mut hout),
                cw_setcallout(cw, Some(oneshot_ran), null_mut(), 1, null_mut()),
                cw_callout_reset(cw, h, 1, none, null_mut()),
                cw_callout_reset_sbt_on(cw, h, 1, 0, none, null_mut(), 0, 0),
            ],
            _ => [
                cw_ticks(cw, 0, null_mut()),
                cw_softticks(cw, 0, null_mut()),
                cw_callout_init(cw, -1, null_mut()),
                cw_callout_active(null(), h),
                cw_untimeout(null_mut(), Some(timeout_a), null_mut()),
                cw_callout_reset(null_mut(), h, 1, Some(persistent_ran), null_mut()),
            ],
        }
    };
    assert_eq!(rcs, [CW_EINVAL; 6]);
    assert_eq!(out, 0, "nothing written through a refused call");
    assert_eq!(
        hout,
        cw_handle::default(),
        "no handle written by a refused call"
    );
}

fn new_table(bytes: &Bytes<'_>) -> *mut cw_callouts {
    let backing =
        [CW_BACKING_LIST, CW_BACKING_HASHED, CW_BACKING_WHEEL, 3][bytes.below(4) as usize];
    let calloutsize = usize::from(bytes.below(16));
    let fixed = c_int::from(bytes.below(2));
    // Rates across the whole range: the usual ones, the edges, or any.
    let hz = match bytes.below(8) {
        6 | 7 => (bytes.u64() as u32).max(1),
        k => [1, 100, 1000, 1_000_000_000, u32::MAX, 0][k as usize],
    };
    let mut cw = null_mut();
    // SAFETY: `&mut cw` is valid for writing a pointer.
    let rc = unsafe { cw_callouts_new(backing, calloutsize, fixed, hz, &mut cw) };
    if backing == 3 || hz == 0 || (fixed != 0 && calloutsize == 0) {
        assert_eq!(rc, CW_EINVAL);
        assert!(cw.is_null());
        // SAFETY: as above.
        let rc =
            unsafe { cw_callouts_new(CW_BACKING_WHEEL, calloutsize.max(1), fixed, 1000, &mut cw) };
        assert_eq!(rc, CW_OK);
    } else {
        assert_eq!(rc, CW_OK);
    }
    assert!(!cw.is_null());
    // The table's clock starts anywhere: near 0, 2^32, 2^40, 2^63, the last tick, or any tick
    // (a nanosecond clock's reading is such a value).
    let start = match bytes.below(6) {
        5 => bytes.u64(),
        k => [0, 1 << 32, 1 << 40, 1 << 63, u64::MAX][k as usize]
            .wrapping_sub(u64::from(bytes.below(4))),
    };
    // SAFETY: `cw` is a live table with nothing armed: no handler can run.
    assert_eq!(unsafe { cw_callout_process(cw, 0, start) }, 0);
    cw
}

fn run(data: &[u8]) {
    let bytes = Bytes {
        data,
        pos: Cell::new(0),
    };
    let tables = [new_table(&bytes), new_table(&bytes)];
    let state = State {
        bytes,
        tables,
        running: [Cell::new(0), Cell::new(0)],
        depth: Cell::new(0),
        timeouts: RefCell::new(HashMap::new()),
        oneshots: RefCell::new(Vec::new()),
        persistents: RefCell::new(Vec::new()),
        last_ticks: [Cell::new(0), Cell::new(0)],
        owners: Default::default(),
    };
    // The handlers find the state here; it is cleared before `state` goes away.
    STATE.with(|p| p.set((&state as *const State<'_>).cast()));
    for t in 0..2 {
        check(&state, t);
    }
    let mut ops = 0;
    while !state.bytes.done() && ops < 2000 {
        op(&state);
        ops += 1;
    }
    for t in 0..2 {
        run_to_the_end(&state, t);
    }
    for t in 0..2 {
        check(&state, t);
        // SAFETY: created above, freed once, nothing else uses it now.
        unsafe { cw_callouts_free(state.tables[t]) };
    }
    STATE.with(|p| p.set(null()));
}

fuzz_target!(|data: &[u8]| {
    run(data);
    c_wheel_model::run(data);
    c_percpu_model::run(data);
});
