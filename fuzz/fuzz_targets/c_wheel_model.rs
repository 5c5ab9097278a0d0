//! The caller-driven wheel's half of the `c_api` target: the `cw_wheel_*` functions, called as a
//! C program would, on two wheels (each growing or of a small fixed capacity, starting at a
//! random time up to the end of `u64`), against a model of each.
//!
//! A wheel's model is its time (the latest update or advance) and its pending timers by handle: deadline,
//! window end (`callwheel::window_end`: the deadline plus the tolerance, saturating, a tolerance
//! of 2^30 or more rounded down to 25 significant bits), value and, for a periodic timer,
//! its period, tolerance and missed-period policy. Every return code, out-parameter and count is
//! checked against it; `cw_wheel_check` must pass after every call, inside callbacks too.
//!
//! The order of pulls is checked where cw_wheel_get's documentation pins it down. A timer is due
//! at its firing instant (`callwheel::firing_instant`: the deadline, or with a window a coarse
//! slot boundary in its first eighth), and *overdue* when it is added, reset or re-armed with an
//! instant at or before "the time of the wheel's latest pull". The wheel reads that as how far
//! its pulls have got (the instant of the latest timer pulled in order, or the wheel's time once a round is done), which the C
//! API does not show; so the model keeps a lower bound of it (`Model::reached`) and an upper
//! bound (`Model::pulled_at`, the wheel's time at the latest pull), and classifies each arm:
//! at or before the lower bound, overdue on any reading; after the upper bound, not overdue on
//! any reading; in between, unsure (see `Class`). Then:
//!
//! - every timer pulled is pending and due, with its deadline, value and overruns; a periodic
//!   one is re-armed as `Missed::next` says at the wheel's time;
//! - a timer not overdue comes out before every other pending one not overdue with a smaller
//!   (firing instant, arm order);
//! - an overdue timer comes out after every overdue one armed before it, except that one added
//!   or reset by the caller may overtake a CW_MISSED_BURST timer re-armed overdue by an earlier
//!   pull (the wheel lets it join the round of overdue timers in progress, which the re-armed
//!   timer waits out);
//! - cw_wheel_get returns 0, and cw_wheel_get_many, cw_wheel_advance and cw_wheel_expire stop
//!   short of their `max`, only when no timer is due; a batch is the gets' expiries in their
//!   order;
//! - the wake-up is the wheel's time whenever a timer is due, otherwise at or after the wheel's
//!   time and no later than the earliest window end, and exactly that end unless a timer was
//!   deleted or reset since the wheel was last empty, or a round of pulls is unfinished (the
//!   latest pull found a timer: the wheel then asks to be woken at once);
//! - a fixed capacity at or above 2^32 - 707 is refused with CW_EINVAL.
//!
//! Not checked: where overdue timers come out among the ones not overdue (the documentation's
//! "at the start of the next round" does not hold as written: the wheel fires them after the
//! timers of the deadline being pulled), and the order of unsure timers against any other.

use core::cell::{Cell, RefCell};
use core::ffi::{c_char, c_int, c_void, CStr};
use core::ptr::{null, null_mut, NonNull};
use std::collections::{BTreeMap, BTreeSet};

use callwheel::{firing_instant, window_end, Missed};
use callwheel_ffi::{
    cw_expiry, cw_handle, cw_wheel, cw_wheel_add, cw_wheel_add_in, cw_wheel_add_periodic,
    cw_wheel_advance, cw_wheel_check, cw_wheel_counts, cw_wheel_del, cw_wheel_expire,
    cw_wheel_free, cw_wheel_get, cw_wheel_get_many, cw_wheel_info, cw_wheel_new,
    cw_wheel_next_pending, cw_wheel_next_wakeup, cw_wheel_pending, cw_wheel_reserve,
    cw_wheel_reset, cw_wheel_reset_in, cw_wheel_timeout, cw_wheel_update, CW_EINVAL, CW_ENOMEM,
    CW_ERANGE, CW_ESTALE, CW_MISSED_BURST, CW_MISSED_DELAY, CW_MISSED_SKIP, CW_OK,
};

use super::Bytes;

/// Calls chosen at the top level of one run.
const TOP_OPS: u32 = 2000;
/// Calls in all, callbacks' included.
const ALL_OPS: u32 = 6000;
/// How deep callbacks call back in (an expire inside a callback of an expire, ...).
const DEPTH: u32 = 3;
/// A `max` above this counts as no limit.
const SMALL_MAX: u8 = 64;
/// An expire without a small limit is made only when at most this many firings are due: a burst
/// timer of period 1 that started long ago would otherwise replay for ever.
const UNLIMITED_FIRINGS: u64 = 256;

/// What a call that must not write through an out-pointer leaves there.
const UNTOUCHED: u64 = 0x5a5a_5a5a_5a5a_5a5a;
const UNTOUCHED_HANDLE: cw_handle = cw_handle {
    id: UNTOUCHED,
    owner: UNTOUCHED,
};
const UNTOUCHED_EXPIRY: cw_expiry = cw_expiry {
    handle: UNTOUCHED_HANDLE,
    value: UNTOUCHED,
    deadline: UNTOUCHED,
    overruns: UNTOUCHED,
};

type Key = (u64, u64);

fn key(h: cw_handle) -> Key {
    (h.id, h.owner)
}

#[derive(Clone, Copy, Debug)]
struct Schedule {
    period: u64,
    tolerance: u64,
    policy: Missed,
}

/// Where cw_wheel_get's documented order puts a timer, judged when it is armed (added, reset,
/// or re-armed by a pull).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    /// Its deadline is after the wheel's time at the latest pull: not overdue on any reading.
    /// It comes out in (deadline, arm order) among the timers of its class.
    Ordered,
    /// Its deadline is at or before how far the pulls have surely got: overdue on any reading.
    /// First in, first out; `rearmed` when a pull re-armed it (a Burst timer catching up).
    Overdue { rearmed: bool },
    /// In between: overdue or not as the wheel's hidden cursor says. Unordered.
    Unsure,
}

#[derive(Clone, Copy, Debug)]
struct Timer {
    deadline: u64,
    /// The instant it is due (`callwheel::firing_instant`): the deadline, or with a window the
    /// first multiple of the coarsest slot width in the window's first eighth.
    at: u64,
    end: u64,
    value: u64,
    schedule: Option<Schedule>,
    /// When it was last armed: adds, resets and re-arms count up together.
    seq: u64,
    class: Class,
}

impl Timer {
    /// A timer in the window [deadline, deadline + tolerance], not armed yet.
    fn new(deadline: u64, tolerance: u64, value: u64, schedule: Option<Schedule>) -> Timer {
        Timer {
            deadline,
            at: firing_instant(deadline, tolerance),
            end: window_end(deadline, tolerance),
            value,
            schedule,
            seq: 0,
            class: Class::Unsure,
        }
    }
}

/// What one wheel must hold.
struct Model {
    /// The latest cw_wheel_update (or advance, or expire, or creation).
    now: u64,
    /// 0 for a growing wheel.
    capacity: usize,
    timers: BTreeMap<Key, Timer>,
    /// The pending timers by firing instant and by window end.
    by_deadline: BTreeSet<(u64, Key)>,
    by_end: BTreeSet<(u64, Key)>,
    /// The pending timers of class `Ordered`, in the order they must come out.
    ordered: BTreeSet<(u64, u64, Key)>,
    /// The arm order of the pending overdue timers: added or reset by the caller, re-armed by a
    /// pull.
    overdue_armed: BTreeSet<u64>,
    overdue_rearmed: BTreeSet<u64>,
    /// Arms so far.
    seq: u64,
    /// How far the pulls have surely got (a lower bound of the wheel's hidden cursor): the
    /// wheel's time at its creation and at each pull that found nothing due, and every deadline
    /// pulled.
    reached: u64,
    /// The wheel's time at its latest pull (or creation): the cursor is at or before it.
    pulled_at: u64,
    /// The latest pull found a timer: the round of pulls it belongs to is unfinished.
    mid_round: bool,
    /// A timer was deleted or reset since the wheel was last empty: the wake-up may be early.
    dirty: bool,
    /// Every handle the wheel issued, pending or not.
    issued: Vec<cw_handle>,
    issued_keys: BTreeSet<Key>,
    /// The owner of its handles, once one is seen (0 before).
    owner: u64,
    added: u64,
    deleted: u64,
    reset: u64,
    fired: u64,
}

impl Model {
    fn new(capacity: usize, now: u64) -> Model {
        Model {
            now,
            capacity,
            timers: BTreeMap::new(),
            by_deadline: BTreeSet::new(),
            by_end: BTreeSet::new(),
            ordered: BTreeSet::new(),
            overdue_armed: BTreeSet::new(),
            overdue_rearmed: BTreeSet::new(),
            seq: 0,
            reached: now,
            pulled_at: now,
            mid_round: false,
            dirty: false,
            issued: Vec::new(),
            issued_keys: BTreeSet::new(),
            owner: 0,
            added: 0,
            deleted: 0,
            reset: 0,
            fired: 0,
        }
    }

    fn full(&self) -> bool {
        self.capacity != 0 && self.timers.len() >= self.capacity
    }

    /// Arms `t` as the latest of all, classified against how far the pulls have got;
    /// `rearmed` for a periodic timer's re-arm by a pull.
    fn insert(&mut self, k: Key, mut t: Timer, rearmed: bool) {
        assert!(
            self.reached <= self.pulled_at,
            "model: the cursor's bounds cross"
        );
        self.seq += 1;
        t.seq = self.seq;
        t.class = if t.at <= self.reached {
            Class::Overdue { rearmed }
        } else if t.at > self.pulled_at {
            Class::Ordered
        } else {
            Class::Unsure
        };
        match t.class {
            Class::Ordered => drop(self.ordered.insert((t.at, t.seq, k))),
            Class::Overdue { rearmed: false } => drop(self.overdue_armed.insert(t.seq)),
            Class::Overdue { rearmed: true } => drop(self.overdue_rearmed.insert(t.seq)),
            Class::Unsure => {}
        }
        self.by_deadline.insert((t.at, k));
        self.by_end.insert((t.end, k));
        self.timers.insert(k, t);
    }

    /// Takes a pending timer out; an empty wheel's wake-up is exact again.
    fn remove(&mut self, k: Key) -> Timer {
        let t = self.timers.remove(&k).expect("a model timer");
        self.by_deadline.remove(&(t.at, k));
        self.by_end.remove(&(t.end, k));
        let found = match t.class {
            Class::Ordered => self.ordered.remove(&(t.at, t.seq, k)),
            Class::Overdue { rearmed: false } => self.overdue_armed.remove(&t.seq),
            Class::Overdue { rearmed: true } => self.overdue_rearmed.remove(&t.seq),
            Class::Unsure => true,
        };
        assert!(found, "model: timer {t:?} missing from its class");
        if self.timers.is_empty() {
            self.dirty = false;
        }
        t
    }

    /// Moves a pending timer to the window [deadline, deadline + tolerance], armed anew.
    fn retime(&mut self, k: Key, deadline: u64, tolerance: u64, rearmed: bool) {
        let t = self.remove(k);
        let t = Timer::new(deadline, tolerance, t.value, t.schedule);
        self.insert(k, t, rearmed);
    }

    /// A pull (at the wheel's time) found a timer due at `at` (its firing instant).
    fn pulled(&mut self, at: u64) {
        self.pulled_at = self.now;
        self.reached = self.reached.max(at);
        self.mid_round = true;
    }

    /// A pull found nothing due: the round is done and the pulls reached the wheel's time.
    fn round_done(&mut self) {
        self.pulled_at = self.now;
        self.reached = self.now;
        self.mid_round = false;
    }

    /// The smallest firing instant, when it is due by the wheel's time.
    fn earliest_due(&self) -> Option<u64> {
        let &(d, _) = self.by_deadline.first()?;
        (d <= self.now).then_some(d)
    }

    fn earliest_deadline(&self) -> Option<u64> {
        self.by_deadline.first().map(|&(d, _)| d)
    }

    fn earliest_end(&self) -> Option<u64> {
        self.by_end.first().map(|&(e, _)| e)
    }

    /// How many firings pulling everything due at `now` makes at most (callbacks aside).
    fn firings_due(&self, now: u64) -> u64 {
        self.by_deadline
            .range(..=(now, (u64::MAX, u64::MAX)))
            .map(|(_, k)| match self.timers[k].schedule {
                Some(p) if p.policy == Missed::Burst => {
                    ((now - self.timers[k].deadline) / p.period).saturating_add(1)
                }
                _ => 1,
            })
            .fold(0, u64::saturating_add)
    }

    fn nth_live(&self, i: usize) -> Option<cw_handle> {
        if self.timers.is_empty() {
            return None;
        }
        let &(id, owner) = self.timers.keys().nth(i % self.timers.len())?;
        Some(cw_handle { id, owner })
    }
}

struct State<'a> {
    bytes: Bytes<'a>,
    wheels: [Cell<*mut cw_wheel>; 2],
    models: [RefCell<Model>; 2],
    /// Handles of the wheels freed so far.
    retired: RefCell<Vec<cw_handle>>,
    /// The owner of every wheel seen.
    owners: RefCell<Vec<u64>>,
    ops: Cell<u32>,
    /// Nesting of callbacks.
    depth: Cell<u32>,
    /// Expire calls without a small limit in progress: below them, no call makes a timer due
    /// for many firings (no update forward, no periodic timer or reset in the past).
    unlimited: Cell<u32>,
    values: Cell<u64>,
}

impl State<'_> {
    fn w(&self, t: usize) -> *mut cw_wheel {
        self.wheels[t].get()
    }

    fn now(&self, t: usize) -> u64 {
        self.models[t].borrow().now
    }

    /// A value for a new timer: mostly distinct, sometimes anything.
    fn value(&self) -> u64 {
        if self.bytes.below(8) == 0 {
            return self.bytes.u64();
        }
        self.values.set(self.values.get() + 1);
        self.values.get()
    }

    /// An absolute time for a timer of a wheel whose time is `now`: near it, far after it,
    /// before it, at the end of time or anywhere. `periodic` (a periodic timer, or a reset that
    /// may move one) keeps it at or after `now` under an unlimited expire.
    fn deadline(&self, now: u64, periodic: bool) -> u64 {
        let b = &self.bytes;
        let d = match b.below(12) {
            0 | 1 => now.saturating_add(u64::from(b.below(64))),
            2 => now,
            3 | 4 => now.saturating_add(shifted(b)),
            5 => now.saturating_sub(u64::from(b.u8()) + 1),
            6 => now.saturating_sub(shifted(b)),
            7 => u64::MAX - u64::from(b.below(4)),
            8 => b.u64(),
            9 => 0,
            _ => now.saturating_add(u64::from(b.u8())),
        };
        if periodic && self.unlimited.get() > 0 {
            d.max(now)
        } else {
            d
        }
    }

    /// A new time for wheel `t`: mostly forward (to its next deadline or window end too),
    /// sometimes back. Never forward under an unlimited expire.
    fn later(&self, t: usize) -> u64 {
        let b = &self.bytes;
        let (now, deadline, end) = {
            let m = self.models[t].borrow();
            (m.now, m.earliest_deadline(), m.earliest_end())
        };
        let to = match b.below(12) {
            0 => now,
            1 | 2 => now.saturating_add(u64::from(b.u8())),
            3 => now.saturating_add(shifted(b)),
            4 => u64::MAX,
            5 => deadline.unwrap_or(now),
            6 => deadline.unwrap_or(now).saturating_sub(1),
            7 => end.unwrap_or(now),
            8 => now.saturating_sub(1 + u64::from(b.u8())),
            9 => b.u64(),
            _ => now.saturating_add(u64::from(b.below(64))),
        };
        if to > now && self.unlimited.get() > 0 {
            now
        } else {
            to
        }
    }
}

/// A byte shifted to any of the wheel's levels.
fn shifted(b: &Bytes<'_>) -> u64 {
    u64::from(b.u8()) << b.below(57)
}

fn start_time(b: &Bytes<'_>) -> u64 {
    match b.below(6) {
        0 => 0,
        1 => u64::from(b.u8()),
        2 => b.u64(),
        3 => u64::MAX - u64::from(b.u8()),
        4 => u64::MAX,
        _ => shifted(b),
    }
}

fn tolerance(b: &Bytes<'_>) -> u64 {
    match b.below(8) {
        0..=2 => 0,
        3 | 4 => u64::from(b.u8()),
        5 => shifted(b),
        6 => u64::MAX,
        _ => b.u64(),
    }
}

/// A relative time from `now`, past the end of time included.
fn delay(b: &Bytes<'_>, now: u64) -> u64 {
    match b.below(10) {
        0 => 0,
        1..=3 => u64::from(b.u8()),
        4 | 5 => shifted(b),
        6 => u64::MAX,
        7 => u64::MAX - now,
        8 => (u64::MAX - now).saturating_add(1 + u64::from(b.below(4))),
        _ => b.u64(),
    }
}

fn period(b: &Bytes<'_>) -> u64 {
    match b.below(8) {
        0 => 0,
        1 | 2 => 1,
        3 | 4 => 1 + u64::from(b.u8()),
        5 => shifted(b),
        6 => u64::MAX,
        _ => b.u64(),
    }
}

fn policy(b: &Bytes<'_>) -> c_int {
    match b.below(8) {
        0 | 1 => CW_MISSED_BURST,
        2 | 3 => CW_MISSED_DELAY,
        4 | 5 => CW_MISSED_SKIP,
        6 => 3 + c_int::from(b.u8()),
        _ => [-1, c_int::MIN, c_int::MAX][usize::from(b.below(3))],
    }
}

fn missed(policy: c_int) -> Option<Missed> {
    match policy {
        CW_MISSED_BURST => Some(Missed::Burst),
        CW_MISSED_DELAY => Some(Missed::Delay),
        CW_MISSED_SKIP => Some(Missed::Skip),
        _ => None,
    }
}

fn info(s: &State<'_>, t: usize) -> cw_wheel_info {
    let mut i = cw_wheel_info::default();
    // SAFETY: the wheel is live; `i` is a local.
    assert_eq!(unsafe { cw_wheel_counts(s.w(t), &mut i) }, CW_OK);
    i
}

/// Both wheels' counts: what a refused call must leave as it was.
fn snapshot(s: &State<'_>) -> [cw_wheel_info; 2] {
    [info(s, 0), info(s, 1)]
}

/// The snapshot without the bytes held (a refused periodic add may have reserved room for its
/// schedule).
fn snapshot_but_bytes(s: &State<'_>) -> [cw_wheel_info; 2] {
    snapshot(s).map(|i| cw_wheel_info { bytes: 0, ..i })
}

/// The wheel's invariants, and its counts against the model.
fn check(s: &State<'_>, t: usize) {
    let mut buf = [0 as c_char; 160];
    // SAFETY: the wheel is live; `buf` is valid for its length.
    let rc = unsafe { cw_wheel_check(s.w(t), buf.as_mut_ptr(), buf.len()) };
    if rc != CW_OK {
        // SAFETY: cw_wheel_check NUL-terminates what it copies; `buf` started zeroed.
        let why = unsafe { CStr::from_ptr(buf.as_ptr()) };
        panic!("wheel {t}: cw_wheel_check returned {rc}: {why:?}");
    }
    let i = info(s, t);
    let m = s.models[t].borrow();
    assert_eq!(i.pending, m.timers.len(), "wheel {t}: pending timers");
    assert_eq!(i.now, m.now, "wheel {t}: its time");
    assert_eq!(
        [i.added, i.deleted, i.reset, i.fired],
        [m.added, m.deleted, m.reset, m.fired],
        "wheel {t}: added, deleted, reset, fired"
    );
    assert!(i.bytes > 0);
    // The walk sees exactly the pending timers, each once, with its deadline and value.
    let mut walked = BTreeMap::new();
    let mut cursor = 0usize;
    let mut e = cw_expiry::default();
    // SAFETY: the wheel is live; the cursor and `e` are locals.
    while unsafe { cw_wheel_next_pending(s.w(t), &mut cursor, &mut e) } == 1 {
        assert!(
            walked
                .insert(key(e.handle), (e.deadline, e.value))
                .is_none(),
            "wheel {t}: the walk saw a timer twice"
        );
    }
    let pending: BTreeMap<Key, (u64, u64)> = m
        .timers
        .iter()
        .map(|(&k, tm)| (k, (tm.deadline, tm.value)))
        .collect();
    assert_eq!(
        walked, pending,
        "wheel {t}: the walk and the pending timers"
    );
}

/// A timer the wheel accepted: its handle is new, carries the wheel's owner, and no other
/// wheel's.
fn started(s: &State<'_>, t: usize, h: cw_handle, timer: Timer) {
    assert_ne!(h.owner, 0, "an issued handle has an owner");
    let mut m = s.models[t].borrow_mut();
    if m.owner == 0 {
        let mut owners = s.owners.borrow_mut();
        assert!(
            !owners.contains(&h.owner),
            "every wheel has an owner of its own"
        );
        owners.push(h.owner);
        m.owner = h.owner;
    }
    assert_eq!(h.owner, m.owner, "one wheel, one owner");
    assert!(m.issued_keys.insert(key(h)), "handle {h:?} issued twice");
    m.issued.push(h);
    m.insert(key(h), timer, false);
    m.added += 1;
}

/// A refused add: the handle is not written and neither wheel changed.
fn refused(s: &State<'_>, before: [cw_wheel_info; 2], h: cw_handle) {
    assert_eq!(h, UNTOUCHED_HANDLE, "a refused add wrote a handle");
    assert_eq!(snapshot(s), before, "a refused add changed a wheel");
}

/// A handle for wheel `t`: a pending one, any it issued (stale ones too), one of the other
/// wheel, one of a freed wheel, or a forged one.
fn pick_handle(s: &State<'_>, t: usize) -> cw_handle {
    let b = &s.bytes;
    let i = usize::from(b.u8()) << 8 | usize::from(b.u8());
    let pick = |v: &[cw_handle]| (!v.is_empty()).then(|| v[i % v.len()]);
    let h = match b.below(8) {
        0..=3 => s.models[t].borrow().nth_live(i),
        4 => pick(&s.models[t].borrow().issued),
        5 => pick(&s.models[1 - t].borrow().issued),
        6 => pick(&s.retired.borrow()),
        _ => None,
    };
    h.unwrap_or_else(|| forged(s, t))
}

/// A handle no wheel issued: an index in range, a generation no run reaches, and an owner
/// (this wheel's, the other's, none, or anything).
fn forged(s: &State<'_>, t: usize) -> cw_handle {
    let b = &s.bytes;
    let index = u64::from(b.below(32));
    let generation = u64::from(b.u8()) << 24 | 1 << 31;
    let owner = match b.below(4) {
        0 => b.u64(),
        1 => s.models[1 - t].borrow().owner,
        2 => 0,
        _ => s.models[t].borrow().owner,
    };
    cw_handle {
        id: index | generation << 32,
        owner,
    }
}

/// One expiry of wheel `t` (from cw_wheel_get or a callback) against the model: a pending timer
/// that is due, with its deadline and value, in the documented order (see `order`); a one-shot
/// timer leaves the model, a periodic one is re-armed as `Missed::next` says at the wheel's
/// time, as the latest arm, overdue or not by its next deadline.
fn expect_expiry(s: &State<'_>, t: usize, e: &cw_expiry) {
    expiry_in_batch(s, t, e, true);
}

/// [`expect_expiry`] for one expiry of a batch: `last` when no later expiry of the batch names
/// the same timer, so that the wheel's state of its handle (checked only then) is the one this
/// expiry left (a periodic timer catching up comes out several times in one batch).
fn expiry_in_batch(s: &State<'_>, t: usize, e: &cw_expiry, last: bool) {
    {
        let mut m = s.models[t].borrow_mut();
        let now = m.now;
        let k = key(e.handle);
        let Some(&timer) = m.timers.get(&k) else {
            panic!("wheel {t} at {now} fired {e:?}, which names no pending timer");
        };
        assert_eq!(
            e.deadline, timer.deadline,
            "wheel {t}: {e:?} is not its timer's deadline {timer:?}"
        );
        assert!(
            timer.at <= now,
            "wheel {t} at {now} fired {e:?}, which is not due"
        );
        assert_eq!(
            e.value, timer.value,
            "wheel {t}: {e:?} is not its timer's value {timer:?}"
        );
        order(&m, t, k, &timer);
        m.fired += 1;
        m.pulled(timer.at);
        match timer.schedule {
            None => {
                assert_eq!(e.overruns, 0, "a one-shot timer has no overruns");
                m.remove(k);
            }
            Some(p) => {
                let (next, missed) = p.policy.next(timer.deadline, p.period, now);
                assert_eq!(
                    e.overruns, missed,
                    "wheel {t} at {now}: overruns of {e:?}, schedule {p:?}"
                );
                match next {
                    Some(n) => m.retime(k, n, p.tolerance, true),
                    None => drop(m.remove(k)),
                }
            }
        }
    }
    if !last {
        return;
    }
    // The handle: stale after a one-shot or a last firing; a re-armed periodic timer is pending
    // at its next deadline.
    let expected = s.models[t]
        .borrow()
        .timers
        .get(&key(e.handle))
        .map(|x| x.deadline);
    let mut d = UNTOUCHED;
    // SAFETY: the wheel is live; `d` is a local.
    let rc = unsafe { cw_wheel_pending(s.w(t), e.handle, &mut d) };
    match expected {
        Some(next) => {
            assert_eq!(rc, 1, "a re-armed periodic timer is pending");
            assert_eq!(d, next, "a re-armed periodic timer's next deadline");
        }
        None => {
            assert_eq!(rc, 0, "a fired one-shot timer is not pending");
            assert_eq!(d, UNTOUCHED);
        }
    }
}

/// The documented order, for timer `k` of wheel `t` coming out: after every pending timer not
/// overdue with a smaller (deadline, arm order) when it is not overdue itself; after every
/// overdue one armed before it when it is overdue, but for Burst timers re-armed by a pull,
/// which one added or reset by the caller may overtake. Unsure timers are not ordered.
fn order(m: &Model, t: usize, k: Key, x: &Timer) {
    let now = m.now;
    match x.class {
        Class::Ordered => {
            let first = m.ordered.first().copied();
            assert_eq!(
                first,
                Some((x.at, x.seq, k)),
                "wheel {t} at {now} fired {x:?} (not overdue) before the pending timer {:?}",
                first.map(|(_, _, f)| m.timers[&f])
            );
        }
        Class::Overdue { rearmed } => {
            let armed = m.overdue_armed.first().copied();
            let earlier = if rearmed {
                armed
                    .filter(|&a| a < x.seq)
                    .or_else(|| m.overdue_rearmed.first().copied().filter(|&r| r < x.seq))
            } else {
                armed.filter(|&a| a < x.seq)
            };
            if let Some(seq) = earlier {
                let y = m
                    .timers
                    .values()
                    .find(|y| y.seq == seq)
                    .expect("model: an overdue timer");
                panic!("wheel {t} at {now} fired {x:?} (overdue) before the overdue timer {y:?}");
            }
        }
        Class::Unsure => {}
    }
}

/// What a cw_wheel_expire callback finds behind its `arg`.
struct Frame<'s, 'a> {
    s: &'s State<'a>,
    t: usize,
    calls: Cell<u64>,
}

impl Frame<'_, '_> {
    fn arg(&self) -> *mut c_void {
        (self as *const Self).cast_mut().cast()
    }
}

unsafe extern "C" fn on_expire(arg: *mut c_void, e: *const cw_expiry) {
    // SAFETY: every expire call passes a `Frame` that outlives it as `arg`, and only reads it
    // (its counter is a cell).
    let f = unsafe { &*arg.cast::<Frame<'_, '_>>() };
    assert!(!e.is_null());
    // SAFETY: the wheel passes an expiry valid for the call.
    let e = unsafe { *e };
    f.calls.set(f.calls.get() + 1);
    expect_expiry(f.s, f.t, &e);
    check(f.s, f.t);
    reenter(f.s, f.t);
}

/// A callback's calls back in: mostly into its own wheel (add a due timer, delete, reset, pull,
/// expire again...), sometimes into the other.
fn reenter(s: &State<'_>, t: usize) {
    if s.depth.get() >= DEPTH || s.bytes.done() {
        return;
    }
    s.depth.set(s.depth.get() + 1);
    for _ in 0..s.bytes.below(4) {
        let target = if s.bytes.below(4) == 0 { 1 - t } else { t };
        op(s, target);
    }
    s.depth.set(s.depth.get() - 1);
}

fn add(s: &State<'_>, t: usize, deadline: u64, tolerance: u64) {
    let value = s.value();
    let full = s.models[t].borrow().full();
    let before = snapshot(s);
    let mut h = UNTOUCHED_HANDLE;
    // SAFETY: the wheel is live; `h` is a local.
    let rc = unsafe { cw_wheel_add(s.w(t), deadline, tolerance, value, &mut h) };
    if full {
        assert_eq!(rc, CW_ENOMEM, "add to a full wheel");
        refused(s, before, h);
    } else {
        assert_eq!(rc, CW_OK, "add");
        started(s, t, h, Timer::new(deadline, tolerance, value, None));
    }
}

fn add_in(s: &State<'_>, t: usize) {
    let (now, full) = {
        let m = s.models[t].borrow();
        (m.now, m.full())
    };
    let (delay, tolerance, value) = (delay(&s.bytes, now), tolerance(&s.bytes), s.value());
    let before = snapshot(s);
    let mut h = UNTOUCHED_HANDLE;
    // SAFETY: the wheel is live; `h` is a local.
    let rc = unsafe { cw_wheel_add_in(s.w(t), delay, tolerance, value, &mut h) };
    match now.checked_add(delay) {
        None => {
            // Past the end of time; the order against a full wheel is not specified.
            assert!(
                rc == CW_ERANGE || (full && rc == CW_ENOMEM),
                "add_in {now} + {delay}: {rc}"
            );
            refused(s, before, h);
        }
        Some(_) if full => {
            assert_eq!(rc, CW_ENOMEM, "add_in to a full wheel");
            refused(s, before, h);
        }
        Some(deadline) => {
            assert_eq!(rc, CW_OK, "add_in {now} + {delay}");
            started(s, t, h, Timer::new(deadline, tolerance, value, None));
        }
    }
}

fn add_periodic(s: &State<'_>, t: usize) {
    let (now, full) = {
        let m = s.models[t].borrow();
        (m.now, m.full())
    };
    let first = s.deadline(now, true);
    let (period, tolerance, raw) = (period(&s.bytes), tolerance(&s.bytes), policy(&s.bytes));
    let value = s.value();
    let before = snapshot_but_bytes(s);
    let mut h = UNTOUCHED_HANDLE;
    // SAFETY: the wheel is live; `h` is a local.
    let rc = unsafe { cw_wheel_add_periodic(s.w(t), first, period, tolerance, raw, value, &mut h) };
    let policy = missed(raw);
    if period == 0 || policy.is_none() {
        assert!(
            rc == CW_EINVAL || (full && rc == CW_ENOMEM),
            "add_periodic period {period} policy {raw}: {rc}"
        );
    } else if full {
        assert_eq!(rc, CW_ENOMEM, "add_periodic to a full wheel");
    } else {
        assert_eq!(rc, CW_OK, "add_periodic");
        let schedule = Some(Schedule {
            period,
            tolerance,
            policy: policy.expect("checked above"),
        });
        started(s, t, h, Timer::new(first, tolerance, value, schedule));
        return;
    }
    assert_eq!(h, UNTOUCHED_HANDLE, "a refused add wrote a handle");
    assert_eq!(
        snapshot_but_bytes(s),
        before,
        "a refused add changed a wheel"
    );
}

fn del(s: &State<'_>, t: usize) {
    let h = pick_handle(s, t);
    let live = s.models[t].borrow().timers.get(&key(h)).copied();
    let no_out = s.bytes.below(4) == 0;
    let mut v = UNTOUCHED;
    let out: *mut u64 = if no_out { null_mut() } else { &mut v };
    let before = snapshot(s);
    // SAFETY: the wheel is live; `out` is NULL or a local.
    let rc = unsafe { cw_wheel_del(s.w(t), h, out) };
    match live {
        Some(timer) => {
            assert_eq!(rc, CW_OK, "del of pending {h:?}");
            if !no_out {
                assert_eq!(v, timer.value, "del hands back the value");
            }
            let mut m = s.models[t].borrow_mut();
            m.dirty = true;
            m.remove(key(h));
            m.deleted += 1;
        }
        None => {
            assert_eq!(rc, CW_ESTALE, "del of {h:?}, pending nowhere here");
            assert_eq!(v, UNTOUCHED, "a refused del wrote a value");
            assert_eq!(snapshot(s), before, "a refused del changed a wheel");
        }
    }
}

/// A pending timer reset by the caller: its period kept, its tolerance taken, armed anew (the
/// latest among equal deadlines, overdue or not by its new deadline).
fn moved(s: &State<'_>, t: usize, h: cw_handle, deadline: u64, tolerance: u64) {
    let mut m = s.models[t].borrow_mut();
    let k = key(h);
    if let Some(p) = m.timers.get_mut(&k).and_then(|x| x.schedule.as_mut()) {
        p.tolerance = tolerance;
    }
    m.retime(k, deadline, tolerance, false);
    m.dirty = true;
    m.reset += 1;
}

fn reset(s: &State<'_>, t: usize) {
    let h = pick_handle(s, t);
    let now = s.now(t);
    let (deadline, tolerance) = (s.deadline(now, true), tolerance(&s.bytes));
    let live = s.models[t].borrow().timers.contains_key(&key(h));
    let before = snapshot(s);
    // SAFETY: the wheel is live.
    let rc = unsafe { cw_wheel_reset(s.w(t), h, deadline, tolerance) };
    if live {
        assert_eq!(rc, CW_OK, "reset of pending {h:?}");
        moved(s, t, h, deadline, tolerance);
    } else {
        assert_eq!(rc, CW_ESTALE, "reset of {h:?}, pending nowhere here");
        assert_eq!(snapshot(s), before, "a refused reset changed a wheel");
    }
}

fn reset_in(s: &State<'_>, t: usize) {
    let h = pick_handle(s, t);
    let now = s.now(t);
    let (delay, tolerance) = (delay(&s.bytes, now), tolerance(&s.bytes));
    let live = s.models[t].borrow().timers.contains_key(&key(h));
    let before = snapshot(s);
    // SAFETY: the wheel is live.
    let rc = unsafe { cw_wheel_reset_in(s.w(t), h, delay, tolerance) };
    match (live, now.checked_add(delay)) {
        (true, Some(deadline)) => {
            assert_eq!(rc, CW_OK, "reset_in of pending {h:?}");
            moved(s, t, h, deadline, tolerance);
            return;
        }
        // Past the end of time; the order against a stale handle is not specified.
        (_, None) => assert!(
            rc == CW_ERANGE || (!live && rc == CW_ESTALE),
            "reset_in {now} + {delay}: {rc}"
        ),
        (false, Some(_)) => assert_eq!(rc, CW_ESTALE, "reset_in of {h:?}, pending nowhere here"),
    }
    assert_eq!(snapshot(s), before, "a refused reset_in changed a wheel");
}

fn pending(s: &State<'_>, t: usize) {
    let h = pick_handle(s, t);
    let expected = s.models[t].borrow().timers.get(&key(h)).map(|x| x.deadline);
    let no_out = s.bytes.below(4) == 0;
    let mut d = UNTOUCHED;
    let out: *mut u64 = if no_out { null_mut() } else { &mut d };
    // SAFETY: the wheel is live; `out` is NULL or a local.
    let rc = unsafe { cw_wheel_pending(s.w(t), h, out) };
    match expected {
        Some(deadline) => {
            assert_eq!(rc, 1, "{h:?} is pending");
            if !no_out {
                assert_eq!(d, deadline, "the deadline of {h:?}");
            }
        }
        None => {
            assert_eq!(rc, 0, "{h:?} is not pending here");
            assert_eq!(d, UNTOUCHED);
        }
    }
}

/// Room for a few more timers (or for more than can fit): CW_OK exactly when they fit (in a
/// fixed capacity; on a growing wheel, in its index space), CW_ENOMEM otherwise; either way
/// only the bytes held may change. (That the room is exact is the C tests' and the crate's.)
fn reserve(s: &State<'_>, t: usize) {
    let n = match s.bytes.below(8) {
        0 => usize::MAX,
        1 => 1 << 40,
        _ => usize::from(s.bytes.below(16)),
    };
    let (capacity, pending) = {
        let m = s.models[t].borrow();
        (m.capacity, m.timers.len())
    };
    let fits = match capacity {
        // The wheel's index space: 2^32 - 707 timers in all.
        0 => pending.checked_add(n).is_some_and(|k| k <= (1 << 32) - 707),
        cap => pending.checked_add(n).is_some_and(|k| k <= cap),
    };
    let before = snapshot_but_bytes(s);
    // SAFETY: the wheel is live.
    let rc = unsafe { cw_wheel_reserve(s.w(t), n) };
    assert_eq!(
        rc,
        if fits { CW_OK } else { CW_ENOMEM },
        "reserve {n} with {pending} pending"
    );
    assert_eq!(
        snapshot_but_bytes(s),
        before,
        "reserve changed more than the bytes"
    );
}

fn update(s: &State<'_>, t: usize) {
    let now = s.now(t);
    let to = s.later(t);
    let before = snapshot(s);
    // SAFETY: the wheel is live.
    let rc = unsafe { cw_wheel_update(s.w(t), to) };
    if to < now {
        assert_eq!(rc, CW_ERANGE, "update from {now} back to {to}");
        assert_eq!(snapshot(s), before, "a refused update changed a wheel");
    } else {
        assert_eq!(rc, CW_OK, "update from {now} to {to}");
        s.models[t].borrow_mut().now = to;
    }
}

/// One cw_wheel_get; whether it found a timer.
fn get(s: &State<'_>, t: usize) -> bool {
    let mut e = UNTOUCHED_EXPIRY;
    // SAFETY: the wheel is live; `e` is a local.
    let rc = unsafe { cw_wheel_get(s.w(t), &mut e) };
    match rc {
        1 => {
            expect_expiry(s, t, &e);
            true
        }
        0 => {
            let mut m = s.models[t].borrow_mut();
            if let Some(d) = m.earliest_due() {
                panic!(
                    "wheel {t} at {}: get found nothing, but a timer is due at {d}",
                    m.now
                );
            }
            assert_eq!(e, UNTOUCHED_EXPIRY, "an empty get wrote an expiry");
            m.round_done();
            false
        }
        _ => panic!("get: {rc}"),
    }
}

/// One cw_wheel_get_many of a batch of 0 (refused) to SMALL_MAX: each expiry as a get's, in
/// the same order; a short batch only when nothing else is due.
fn get_many(s: &State<'_>, t: usize) {
    batch(s, t, None);
}

/// One cw_wheel_advance to a time drawn as update's (earlier ones refused with nothing
/// changed): an update and a get_many in one call.
fn advance(s: &State<'_>, t: usize) {
    let to = s.later(t);
    batch(s, t, Some(to));
}

/// A batch pulled by cw_wheel_get_many, or by cw_wheel_advance when `to` is given.
fn batch(s: &State<'_>, t: usize, to: Option<u64>) {
    let max = usize::from(s.bytes.below(SMALL_MAX + 1));
    let mut batch = [UNTOUCHED_EXPIRY; SMALL_MAX as usize];
    // SAFETY (both calls): the wheel is live or NULL; `out` is NULL or `batch`, which holds
    // at least `max` expiries.
    let call = |w: *mut cw_wheel, out: *mut cw_expiry, max: usize| match to {
        Some(to) => unsafe { cw_wheel_advance(w, to, out, max) },
        None => unsafe { cw_wheel_get_many(w, out, max) },
    };
    if max == 0 {
        let before = snapshot(s);
        let rcs = [
            call(s.w(t), batch.as_mut_ptr(), 0),
            call(null_mut(), batch.as_mut_ptr(), 1),
            call(s.w(t), null_mut(), 1),
        ];
        assert_eq!(
            rcs, [CW_EINVAL; 3],
            "a batch of 0 or a NULL argument is refused"
        );
        assert_eq!(snapshot(s), before, "a refused batch changed a wheel");
        assert_eq!(
            batch[0], UNTOUCHED_EXPIRY,
            "a refused batch wrote an expiry"
        );
        return;
    }
    if let Some(to) = to {
        let now = s.now(t);
        if to < now {
            let before = snapshot(s);
            let rc = call(s.w(t), batch.as_mut_ptr(), max);
            assert_eq!(rc, CW_ERANGE, "advance from {now} back to {to}");
            assert_eq!(snapshot(s), before, "a refused advance changed a wheel");
            assert_eq!(
                batch[0], UNTOUCHED_EXPIRY,
                "a refused advance wrote an expiry"
            );
            return;
        }
    }
    let rc = call(s.w(t), batch.as_mut_ptr(), max);
    let got = usize::try_from(rc).unwrap_or_else(|_| panic!("batch: {rc}"));
    if let Some(to) = to {
        s.models[t].borrow_mut().now = to;
    }
    assert!(got <= max, "a batch of {got} expiries for {max}");
    for (i, e) in batch[..got].iter().enumerate() {
        let last = batch[i + 1..got]
            .iter()
            .all(|later| later.handle != e.handle);
        expiry_in_batch(s, t, e, last);
    }
    assert_eq!(
        batch[got..],
        [UNTOUCHED_EXPIRY; SMALL_MAX as usize][got..],
        "a batch written past the expiries it returned"
    );
    if got < max {
        let mut m = s.models[t].borrow_mut();
        if let Some(d) = m.earliest_due() {
            panic!(
                "wheel {t} at {}: a batch of {got} for {max} with a timer due at {d}",
                m.now
            );
        }
        m.round_done();
    }
}

fn expire(s: &State<'_>, t: usize) {
    let now = s.now(t);
    let to = s.later(t);
    let mut max = match s.bytes.below(6) {
        0 | 1 => 0,
        2 => 1,
        3 => u64::MAX,
        _ => 1 + u64::from(s.bytes.below(SMALL_MAX)),
    };
    let unlimited = |max: u64| max == 0 || max > u64::from(SMALL_MAX);
    if to >= now && unlimited(max) && s.models[t].borrow().firings_due(to) > UNLIMITED_FIRINGS {
        max = 1 + u64::from(s.bytes.below(SMALL_MAX));
    }
    let frame = Frame {
        s,
        t,
        calls: Cell::new(0),
    };
    if to < now {
        let before = snapshot(s);
        // SAFETY: the wheel is live; the callback accepts `frame`, which outlives the call.
        let rc = unsafe { cw_wheel_expire(s.w(t), to, Some(on_expire), frame.arg(), max) };
        assert_eq!(rc, CW_ERANGE, "expire from {now} back to {to}");
        assert_eq!(frame.calls.get(), 0, "a refused expire called back");
        assert_eq!(snapshot(s), before, "a refused expire changed a wheel");
        return;
    }
    // The wheel takes its new time before the first callback, which checks against it.
    s.models[t].borrow_mut().now = to;
    let free = unlimited(max);
    if free {
        s.unlimited.set(s.unlimited.get() + 1);
    }
    // SAFETY: as above.
    let rc = unsafe { cw_wheel_expire(s.w(t), to, Some(on_expire), frame.arg(), max) };
    if free {
        s.unlimited.set(s.unlimited.get() - 1);
    }
    let calls = frame.calls.get();
    assert_eq!(
        rc,
        c_int::try_from(calls).unwrap_or(c_int::MAX),
        "expire returns the callbacks it made"
    );
    if max != 0 {
        assert!(
            calls <= max,
            "expire made {calls} callbacks, at most {max} asked"
        );
    }
    if max == 0 || calls < max {
        // Its last pull found nothing due.
        let mut m = s.models[t].borrow_mut();
        if let Some(d) = m.earliest_due() {
            panic!(
                "wheel {t} at {}: expire (max {max}) returned after {calls} callbacks with a \
                 timer due at {d}",
                m.now
            );
        }
        m.round_done();
    }
}

/// cw_wheel_next_wakeup and cw_wheel_timeout: nothing with no timer; the wheel's time when a
/// timer is due; otherwise a time not before the wheel's and not after the earliest window end,
/// that end itself unless a timer was deleted or reset since the wheel was last empty or a
/// round of pulls is unfinished; the timeout is the same instant relative to the wheel's time.
fn wakeup(s: &State<'_>, t: usize) {
    let (mut at, mut ns) = (UNTOUCHED, UNTOUCHED);
    // SAFETY: the wheel is live; the out-pointers are locals.
    let (rc, rc_ns) = unsafe {
        (
            cw_wheel_next_wakeup(s.w(t), &mut at),
            cw_wheel_timeout(s.w(t), &mut ns),
        )
    };
    let m = s.models[t].borrow();
    let Some(end) = m.earliest_end() else {
        assert_eq!((rc, rc_ns), (0, 0), "wheel {t} is empty: no wake-up");
        assert_eq!((at, ns), (UNTOUCHED, UNTOUCHED));
        return;
    };
    let now = m.now;
    assert_eq!((rc, rc_ns), (1, 1), "wheel {t} has timers: a wake-up");
    assert!(at >= now, "wheel {t} at {now}: wake-up {at} in the past");
    assert!(
        at <= now.max(end),
        "wheel {t} at {now}: wake-up {at} after the earliest window end {end}"
    );
    assert_eq!(
        ns,
        at - now,
        "wheel {t} at {now}: timeout against wake-up {at}"
    );
    if let Some(d) = m.earliest_due() {
        assert_eq!(
            at, now,
            "wheel {t} at {now}: a timer due at {d}, but wake-up {at}"
        );
    } else if !m.dirty && !m.mid_round {
        assert_eq!(
            at, end,
            "wheel {t} at {now}: nothing due, wake-up {at}, earliest end {end}"
        );
    }
}

/// NULL wheels, out-pointers and callbacks: CW_EINVAL, nothing written, nothing changed.
fn null_calls(s: &State<'_>, t: usize) {
    let w = s.w(t);
    let now = s.now(t);
    let h = pick_handle(s, t);
    let later = now.saturating_add(1 + u64::from(s.bytes.u8()));
    let before = snapshot(s);
    let mut out = UNTOUCHED_HANDLE;
    let mut v = UNTOUCHED;
    let mut e = UNTOUCHED_EXPIRY;
    let mut i = cw_wheel_info::default();
    let frame = Frame {
        s,
        t,
        calls: Cell::new(0),
    };
    let (nw, arg) = (null_mut::<cw_wheel>(), frame.arg());
    // SAFETY: every function accepts NULL for the wheel, the out-pointers and the callback;
    // `w` is live; the other pointers are locals.
    let rcs = unsafe {
        match s.bytes.below(4) {
            0 => [
                cw_wheel_add(nw, now, 0, 1, &mut out),
                cw_wheel_add(w, now, 0, 1, null_mut()),
                cw_wheel_add_in(nw, 1, 0, 1, &mut out),
                cw_wheel_add_in(w, 1, 0, 1, null_mut()),
                cw_wheel_add_periodic(nw, now, 1, 0, CW_MISSED_BURST, 1, &mut out),
                cw_wheel_add_periodic(w, now, 1, 0, CW_MISSED_SKIP, 1, null_mut()),
            ],
            1 => [
                cw_wheel_del(nw, h, &mut v),
                cw_wheel_reset(nw, h, later, 0),
                cw_wheel_reset_in(nw, h, 1, 0),
                cw_wheel_pending(null(), h, &mut v),
                cw_wheel_update(nw, later),
                cw_wheel_get(nw, &mut e),
            ],
            2 => [
                cw_wheel_get(w, null_mut()),
                cw_wheel_expire(nw, later, Some(on_expire), arg, 0),
                cw_wheel_expire(w, later, None, arg, 0),
                cw_wheel_next_wakeup(null(), &mut v),
                cw_wheel_next_wakeup(w, null_mut()),
                cw_wheel_timeout(null(), &mut v),
            ],
            _ => [
                cw_wheel_timeout(w, null_mut()),
                cw_wheel_counts(null(), &mut i),
                cw_wheel_counts(w, null_mut()),
                cw_wheel_check(null(), null_mut(), 0),
                cw_wheel_new(0, now, null_mut()),
                cw_wheel_add_periodic(w, now, 0, 0, CW_MISSED_DELAY, 1, null_mut()),
            ],
        }
    };
    // SAFETY: NULL is ignored.
    unsafe { cw_wheel_free(null_mut()) };
    assert_eq!(rcs, [CW_EINVAL; 6], "NULL arguments");
    assert_eq!(
        (out, v, e),
        (UNTOUCHED_HANDLE, UNTOUCHED, UNTOUCHED_EXPIRY),
        "a refused call wrote"
    );
    assert_eq!(i, cw_wheel_info::default(), "a refused call wrote counts");
    assert_eq!(frame.calls.get(), 0, "a refused expire called back");
    assert_eq!(snapshot(s), before, "a refused call changed a wheel");
}

/// Creates a wheel: growing or with room for 1 to 8 timers, its time anywhere. Sometimes first
/// the refusals: no out-pointer, a capacity of 2^32 - 707 or more (the wheel's index space;
/// the largest one allowed is not tried, as reserving it would trip the sanitizer's allocator).
fn create(b: &Bytes<'_>) -> (*mut cw_wheel, Model) {
    let capacity = if b.below(2) == 0 {
        0
    } else {
        1 + usize::from(b.below(8))
    };
    let now = start_time(b);
    if b.below(4) == 0 {
        let first_refused = (1usize << 32) - 707;
        let too_large = match b.below(6) {
            0 => first_refused,
            1 => first_refused + 1 + usize::from(b.u8()),
            2 => (1 << 32) - 1,
            3 => 1 << 32,
            4 => 1 << 40,
            _ => usize::MAX,
        };
        let mut out = NonNull::<cw_wheel>::dangling().as_ptr();
        // SAFETY: `out` is a local.
        let rc = unsafe { cw_wheel_new(too_large, now, &mut out) };
        assert_eq!(rc, CW_EINVAL, "capacity {too_large}");
        assert!(out.is_null(), "a refused cw_wheel_new leaves NULL");
        // SAFETY: NULL is refused.
        assert_eq!(
            unsafe { cw_wheel_new(capacity, now, null_mut()) },
            CW_EINVAL
        );
    }
    let mut w = null_mut();
    // SAFETY: `w` is a local.
    assert_eq!(unsafe { cw_wheel_new(capacity, now, &mut w) }, CW_OK);
    assert!(!w.is_null());
    (w, Model::new(capacity, now))
}

/// Frees wheel `t`: with its timers pending, or after deleting each (its value handed back).
fn finish(s: &State<'_>, t: usize) {
    check(s, t);
    if s.bytes.below(2) == 0 {
        let pending: Vec<(Key, u64)> = {
            let m = s.models[t].borrow();
            m.timers.iter().map(|(&k, x)| (k, x.value)).collect()
        };
        for ((id, owner), value) in pending {
            let mut v = UNTOUCHED;
            // SAFETY: the wheel is live; `v` is a local.
            let rc = unsafe { cw_wheel_del(s.w(t), cw_handle { id, owner }, &mut v) };
            assert_eq!(
                (rc, v),
                (CW_OK, value),
                "deleting every timer before the free"
            );
            let mut m = s.models[t].borrow_mut();
            m.remove((id, owner));
            m.deleted += 1;
        }
        check(s, t);
        let mut at = UNTOUCHED;
        // SAFETY: as above.
        assert_eq!(unsafe { cw_wheel_next_wakeup(s.w(t), &mut at) }, 0);
    }
    s.retired
        .borrow_mut()
        .extend_from_slice(&s.models[t].borrow().issued);
    // SAFETY: created by `create`, freed once; no call on it is in progress (never from a
    // callback).
    unsafe { cw_wheel_free(s.w(t)) };
    s.wheels[t].set(null_mut());
}

/// Frees wheel `t` and puts a new one in its place: its old handles are foreign everywhere.
fn replace(s: &State<'_>, t: usize) {
    finish(s, t);
    let (w, m) = create(&s.bytes);
    s.wheels[t].set(w);
    *s.models[t].borrow_mut() = m;
}

/// One call on wheel `t`, chosen by the input, checked against the model.
fn op(s: &State<'_>, t: usize) {
    if s.ops.get() >= ALL_OPS {
        return;
    }
    s.ops.set(s.ops.get() + 1);
    match s.bytes.below(27) {
        0..=2 => {
            let now = s.now(t);
            let (deadline, tolerance) = (s.deadline(now, false), tolerance(&s.bytes));
            add(s, t, deadline, tolerance);
        }
        3 | 4 => add_in(s, t),
        5 | 6 => add_periodic(s, t),
        7 | 8 => del(s, t),
        9 | 10 => reset(s, t),
        11 => reset_in(s, t),
        12 => pending(s, t),
        13 | 14 => update(s, t),
        15 | 16 => drop(get(s, t)),
        17 => {
            for _ in 0..64 {
                if !get(s, t) {
                    break;
                }
            }
        }
        18 | 19 => expire(s, t),
        20 => wakeup(s, t),
        21 => null_calls(s, t),
        24 => reserve(s, t),
        25 => get_many(s, t),
        26 => advance(s, t),
        // Not from a callback: a wheel is never freed under a call in progress.
        22 if s.depth.get() == 0 => replace(s, t),
        _ => {
            // A timer due now (or just before): from a callback, it fires within the same
            // expire.
            let now = s.now(t);
            let deadline = now.saturating_sub(u64::from(s.bytes.below(4)));
            add(s, t, deadline, tolerance(&s.bytes));
        }
    }
    check(s, t);
}

pub(crate) fn run(data: &[u8]) {
    let bytes = Bytes {
        data,
        pos: Cell::new(0),
    };
    let (w0, m0) = create(&bytes);
    let (w1, m1) = create(&bytes);
    let s = State {
        bytes,
        wheels: [Cell::new(w0), Cell::new(w1)],
        models: [RefCell::new(m0), RefCell::new(m1)],
        retired: RefCell::new(Vec::new()),
        owners: RefCell::new(Vec::new()),
        ops: Cell::new(0),
        depth: Cell::new(0),
        unlimited: Cell::new(0),
        values: Cell::new(0),
    };
    check(&s, 0);
    check(&s, 1);
    let mut ops = 0;
    while !s.bytes.done() && ops < TOP_OPS {
        let t = usize::from(s.bytes.below(2));
        op(&s, t);
        ops += 1;
    }
    for t in 0..2 {
        finish(&s, t);
    }
}
