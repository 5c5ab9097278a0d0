//! The production wheel against a model written from its documentation.
//!
//! The model knows nothing of levels, slots, cascades or step accounting: it holds the pending
//! timers, the cursor and the target, and the overdue queue with its drains, as `scheme`'s module
//! documentation describes them, and `wheel`'s own promises on top (tolerance windows, reset,
//! periodic schedules and their `Missed` policies, `next_expiry` / `next_wakeup`, `deadline` /
//! `contains`, `clear`, `poll_expired` and `advance_to` beside `advance`, resets from callbacks,
//! statistics).
//! Two wheels run side by side so that each is fed the other's handles.
//!
//! The wheel drives the comparison: every callback it makes is checked against the one firing
//! the model expects next (timer, deadline, overruns, the cursor at that moment), then the model
//! applies it and the callback goes on to start or stop timers on both. Where the documentation
//! leaves a choice that a caller can observe but cannot control (see `Model::enqueue_between`),
//! the model keeps both readings open until the wheel's next firing or its next cursor settles
//! which one held.
//!
//! Sizes: `CALLWHEEL_MODEL_OPS` operations (default below), from seed `CALLWHEEL_MODEL_SEED`;
//! `CALLWHEEL_MODEL_TRACE=1` prints every operation and firing (for reproducing a failure).

use std::cell::Cell;
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;
use std::time::Instant;

use callwheel::{window_end, Missed, Wheel};

mod oracle;
use callwheel::{Budget, Error, Expired, Handle, Progress, Scheme, Tick, Timers};
use oracle::fires_at;

const MAX: Tick = Tick::MAX;

/// Enough for the debug build to finish in seconds; the CI step asks for 10^7 in release.
const DEFAULT_OPS: u64 = 300_000;
const DEFAULT_SEED: u64 = 0x5EED_CA11_3E1E_0001;

/// A wheel's population stays around this, so that operations meet crowded slots and equal
/// deadlines without the model's O(log n) bookkeeping dominating the run.
const CROWD: usize = 300;

/// A Burst timer replays every period it missed, at its own time: one with period 1 and an
/// advance of 2^40 would fire 2^40 times. The driver keeps Burst deadlines at most `BURST_LAG`
/// periods behind the target when they are set, and advance targets at most `BURST_REACH`
/// periods past every Burst deadline, so replays stay bounded (they are still exercised).
const BURST_LAG: u64 = 16;
const BURST_REACH: u64 = 63;

// ---------------------------------------------------------------------------------------------
// Plumbing: a seeded generator, a cheap hasher, failure reports that say how to reproduce.

struct Rng(u64);

impl Rng {
    /// SplitMix64: tiny, and every seed gives a full-quality stream.
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    fn pow2(&mut self) -> u64 {
        1 << self.below(64)
    }
}

/// The model's maps are keyed by timer ids and handles; SipHash would cost more than the wheel.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 31)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(23) ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type Fast = BuildHasherDefault<IdHasher>;

thread_local! {
    /// (seed, operation index) of the running check, for failure messages.
    static WHERE: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

#[track_caller]
fn fail(msg: String) -> ! {
    let (seed, op) = WHERE.with(Cell::get);
    panic!(
        "{msg}\n  at operation {op}; reproduce with CALLWHEEL_MODEL_SEED={seed:#x} \
         CALLWHEEL_MODEL_OPS={} (add CALLWHEEL_MODEL_TRACE=1 to print every step)",
        op + 1
    );
}

macro_rules! ensure {
    ($cond:expr, $($arg:tt)+) => {
        if !$cond {
            fail(format!($($arg)+))
        }
    };
}

/// The payload of the callbacks that panic on purpose (the hook keeps them quiet).
struct Deliberate;

fn quiet_deliberate_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !info.payload().is::<Deliberate>() {
                previous(info);
            }
        }));
    });
}

// ---------------------------------------------------------------------------------------------
// The model.

#[derive(Clone, Copy, Debug)]
struct Schedule {
    period: Tick,
    tolerance: Tick,
    policy: Missed,
    /// What `Wheel::overruns` reports: the periods the latest firing missed.
    overruns: u64,
}

#[derive(Debug)]
struct Timer {
    handle: Handle,
    deadline: Tick,
    /// The window's end the wheel keeps (`kept_end`: `deadline + tolerance` saturated, a
    /// tolerance of 2^30 or more rounded down to 25 significant bits).
    end: Tick,
    /// The instant it fires (`firing_instant`): its deadline, or for a window the first
    /// multiple of the coarsest slot width in the window's first eighth.
    at: Tick,
    /// Start order: bumped by start, reset and every re-arm of a periodic timer.
    seq: u64,
    /// On the overdue queue (firing instant at or before the cursor when armed) rather than
    /// waiting for its tick.
    queued: bool,
    schedule: Option<Schedule>,
    /// Index in `Model::live`.
    pos: usize,
}

/// Where the model stands in the documented loop of one `advance`: a drain of the overdue queue
/// at the cursor, the processing of the tick at the cursor (its timers, then the drain after it),
/// or between the two (about to move the cursor to the next tick).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// The last call completed: the next one starts with a drain.
    Done,
    Drain,
    AtTick,
    Idle,
}

/// The wheel's `Stats` as the documentation defines them. `clamped` counts calls asking for a
/// time earlier than "the wheel's": between an interrupted call's cursor and its target it is
/// not said which one that is, so the model keeps both counts.
#[derive(Clone, Copy, Debug, Default)]
struct Expect {
    started: u64,
    stopped: u64,
    reset: u64,
    fired: u64,
    clamped_below_cursor: u64,
    clamped_below_target: u64,
    max_lateness: Tick,
}

type Entry = (u64, u64); // (timer id, seq when queued): stale once the timer leaves or re-arms

struct Model {
    name: &'static str,
    capacity: Option<usize>,
    /// How far from the cursor this episode's ordinary deadlines reach.
    span: Tick,
    timers: HashMap<u64, Timer, Fast>,
    by_handle: HashMap<Handle, u64, Fast>,
    live: Vec<u64>,
    /// Timers waiting for their tick (and those of the tick in progress): (firing instant,
    /// seq, id).
    wheel: BTreeSet<(Tick, u64, u64)>,
    /// (window end, id) of the same timers.
    ends: BTreeSet<(Tick, u64)>,
    /// (deadline + BURST_REACH periods, id) of the Burst timers, to bound advance targets.
    bursts: BTreeSet<(Tick, u64)>,
    /// Overdue timers for the next drain, in queue order.
    queue: VecDeque<Entry>,
    /// The drain in progress.
    batch: VecDeque<Entry>,
    /// Queued between calls where the drain they join is not determined yet.
    limbo: VecDeque<Entry>,
    queued: usize,
    cursor: Tick,
    target: Tick,
    phase: Phase,
    seq: u64,
    /// A timer was stopped or reset since the wheel was last empty: `next_expiry` and
    /// `next_wakeup` may then answer early.
    dirty: bool,
    expect: Expect,
    stale: Vec<Handle>,
    stale_at: usize,
}

/// The id at the front of `q` that still names a queued timer, dropping stale entries.
fn live_front(timers: &HashMap<u64, Timer, Fast>, q: &mut VecDeque<Entry>) -> Option<u64> {
    while let Some(&(id, seq)) = q.front() {
        if timers.get(&id).is_some_and(|t| t.queued && t.seq == seq) {
            return Some(id);
        }
        q.pop_front();
    }
    None
}

fn burst_limit(deadline: Tick, period: Tick) -> Tick {
    deadline.saturating_add(period.saturating_mul(BURST_REACH))
}

/// The documented rule, computed here independently: overruns are the whole periods between the
/// deadline and the caller's `now`; the next deadline depends on the policy, and one past
/// `u64::MAX` makes this firing the last.
fn next_period(policy: Missed, deadline: Tick, period: Tick, now: Tick) -> (Option<Tick>, u64) {
    let missed = (now - deadline) / period;
    let next = match policy {
        Missed::Burst => u128::from(deadline) + u128::from(period),
        Missed::Delay if missed > 0 => u128::from(now) + u128::from(period),
        Missed::Delay => u128::from(deadline) + u128::from(period),
        Missed::Skip => u128::from(deadline) + (u128::from(missed) + 1) * u128::from(period),
    };
    (u64::try_from(next).ok(), missed)
}

struct Fired {
    id: u64,
    from_drain: bool,
    periodic: bool,
}

impl Model {
    fn new(name: &'static str, capacity: Option<usize>, span: Tick) -> Model {
        Model {
            name,
            capacity,
            span,
            timers: HashMap::default(),
            by_handle: HashMap::default(),
            live: Vec::new(),
            wheel: BTreeSet::new(),
            ends: BTreeSet::new(),
            bursts: BTreeSet::new(),
            queue: VecDeque::new(),
            batch: VecDeque::new(),
            limbo: VecDeque::new(),
            queued: 0,
            cursor: 0,
            target: 0,
            phase: Phase::Done,
            seq: 0,
            dirty: false,
            expect: Expect::default(),
            stale: Vec::new(),
            stale_at: 0,
        }
    }

    fn len(&self) -> usize {
        self.live.len()
    }

    fn full(&self) -> bool {
        self.capacity.is_some_and(|c| self.len() >= c)
    }

    fn describe(&self, id: u64) -> String {
        match self.timers.get(&id) {
            Some(t) => format!(
                "timer {id} (deadline {}, end {}, seq {}, {}, {:?})",
                t.deadline,
                t.end,
                t.seq,
                if t.queued {
                    "overdue queue"
                } else {
                    "waiting for its tick"
                },
                t.schedule
            ),
            None => format!("timer {id} (not pending in the model)"),
        }
    }

    fn state(&self) -> String {
        format!(
            "wheel {}: cursor {}, target {}, phase {:?}, {} pending ({} queued)",
            self.name,
            self.cursor,
            self.target,
            self.phase,
            self.len(),
            self.queued
        )
    }

    fn retire(&mut self, h: Handle) {
        if self.stale.len() < 64 {
            self.stale.push(h);
        } else {
            self.stale[self.stale_at] = h;
            self.stale_at = (self.stale_at + 1) % 64;
        }
    }

    fn insert(
        &mut self,
        id: u64,
        handle: Handle,
        deadline: Tick,
        tolerance: Tick,
        schedule: Option<Schedule>,
        between_calls: bool,
    ) {
        self.seq += 1;
        let t = Timer {
            handle,
            deadline,
            end: kept_end(deadline, tolerance),
            at: fires_at(deadline, tolerance),
            seq: self.seq,
            queued: false,
            schedule,
            pos: self.live.len(),
        };
        self.timers.insert(id, t);
        self.live.push(id);
        self.by_handle.insert(handle, id);
        self.expect.started += 1;
        self.attach(id, between_calls);
    }

    /// Arms timer `id` where its firing instant says: overdue (at or before the cursor) or
    /// waiting.
    fn attach(&mut self, id: u64, between_calls: bool) {
        let t = self.timers.get_mut(&id).unwrap();
        if let Some(s) = t.schedule {
            if s.policy == Missed::Burst {
                self.bursts.insert((burst_limit(t.deadline, s.period), id));
            }
        }
        if t.at <= self.cursor {
            t.queued = true;
            let entry = (id, t.seq);
            self.queued += 1;
            if between_calls {
                self.enqueue_between(entry);
            } else {
                // From a callback: the next drain, never the one running (that is what keeps a
                // callback re-arming itself in the past from live-locking `advance`).
                self.queue.push_back(entry);
            }
        } else {
            self.wheel.insert((t.at, t.seq, id));
            self.ends.insert((t.end, id));
        }
    }

    fn detach(&mut self, id: u64) {
        let t = self.timers.get_mut(&id).unwrap();
        if let Some(s) = t.schedule {
            if s.policy == Missed::Burst {
                self.bursts.remove(&(burst_limit(t.deadline, s.period), id));
            }
        }
        if t.queued {
            t.queued = false;
            self.queued -= 1;
        } else {
            self.wheel.remove(&(t.at, t.seq, id));
            self.ends.remove(&(t.end, id));
        }
    }

    /// Drops a detached timer; its handle goes stale.
    fn forget(&mut self, id: u64) {
        let t = self.timers.remove(&id).unwrap();
        let last = self.live.pop().unwrap();
        if last != id {
            self.live[t.pos] = last;
            self.timers.get_mut(&last).unwrap().pos = t.pos;
        }
        self.by_handle.remove(&t.handle);
        self.retire(t.handle);
        if self.live.is_empty() {
            // Every slot has emptied: the wheel's per-slot minimums are exact again.
            self.dirty = false;
        }
    }

    fn stop(&mut self, id: u64) {
        self.detach(id);
        self.dirty = true;
        self.expect.stopped += 1;
        self.forget(id);
    }

    fn reset(&mut self, id: u64, deadline: Tick, tolerance: Tick, between_calls: bool) {
        self.detach(id);
        self.seq += 1;
        let t = self.timers.get_mut(&id).unwrap();
        t.deadline = deadline;
        t.end = kept_end(deadline, tolerance);
        t.at = fires_at(deadline, tolerance);
        t.seq = self.seq;
        // The docs say only that reset moves the timer to a new window; the model takes the new
        // window's width as the schedule's from then on.
        if let Some(s) = t.schedule.as_mut() {
            s.tolerance = tolerance;
        }
        self.dirty = true;
        self.expect.reset += 1;
        self.attach(id, between_calls);
    }

    /// `Wheel::clear`: every pending timer is dropped as by a stop.
    fn clear(&mut self) {
        while let Some(&id) = self.live.last() {
            self.stop(id);
        }
    }

    fn tick_pending(&self) -> bool {
        self.phase == Phase::AtTick
            && self
                .wheel
                .first()
                .is_some_and(|&(d, _, _)| d == self.cursor)
    }

    /// A timer queued between two calls (started or reset with a deadline at or before the
    /// cursor) fires in the first drain the next call runs at the cursor: the one a completed
    /// call's successor starts with ("a timer started between calls fires at the start of the
    /// next call"), the one a budget interrupted ("resumes it, not a new one"), or the one after
    /// the tick a budget interrupted. When an interrupted call had nothing left to do at the
    /// cursor, its drain there may or may not have ended yet (the call being about to move the
    /// cursor on), depending on where its step budget ran out: neither the documentation nor the
    /// caller can tell, so the entry waits in `limbo` until the wheel's next firing or cursor
    /// shows which.
    fn enqueue_between(&mut self, entry: Entry) {
        let undecided = live_front(&self.timers, &mut self.limbo).is_some()
            || (self.cursor < self.target
                && match self.phase {
                    Phase::Drain => live_front(&self.timers, &mut self.batch).is_none(),
                    Phase::AtTick => {
                        !self.tick_pending() && live_front(&self.timers, &mut self.queue).is_none()
                    }
                    Phase::Done | Phase::Idle => false,
                });
        if undecided {
            self.limbo.push_back(entry);
        } else if self.phase == Phase::Drain {
            self.batch.push_back(entry);
        } else {
            self.queue.push_back(entry);
        }
    }

    /// The entries in limbo joined the drain at the cursor (`in_place`) or wait for the drain
    /// after the next tick.
    fn settle_limbo(&mut self, in_place: bool) {
        let entries: Vec<Entry> = self.limbo.drain(..).collect();
        if in_place && self.phase == Phase::Drain {
            self.batch.extend(entries);
        } else {
            self.queue.extend(entries);
            if !in_place {
                self.phase = Phase::Idle;
            }
        }
    }

    /// The next tick the loop moves to from `Idle`: the earliest deadline (a tickless wheel
    /// jumps the empty ticks), else the target; but the one right after the cursor while
    /// overdue timers wait for the next drain. Drains run after each tick, and the wheel keeps
    /// "the same semantics" as the per-tick loop of the scheme family, which drains them after
    /// tick cursor + 1; the docs do not spell this case out for the wheel.
    fn next_tick(&mut self) -> Tick {
        if live_front(&self.timers, &mut self.queue).is_some() {
            return self.cursor + 1;
        }
        match self.wheel.first() {
            Some(&(d, _, _)) if d <= self.target => d,
            _ => self.target,
        }
    }

    /// Steps the documented loop to the next firing of the running call; `None` when the call
    /// has nothing left to do.
    fn next_due(&mut self) -> Option<u64> {
        loop {
            match self.phase {
                Phase::Done => return None,
                Phase::Drain => {
                    if let Some(id) = live_front(&self.timers, &mut self.batch) {
                        return Some(id);
                    }
                    self.phase = Phase::Idle;
                }
                Phase::AtTick => {
                    if let Some(&(d, _, id)) = self.wheel.first() {
                        assert!(
                            d >= self.cursor,
                            "model: a waiting timer is behind the cursor"
                        );
                        if d == self.cursor {
                            return Some(id);
                        }
                    }
                    // The drain after the tick: everything queued so far.
                    assert!(live_front(&self.timers, &mut self.batch).is_none());
                    self.batch = std::mem::take(&mut self.queue);
                    self.phase = Phase::Drain;
                }
                Phase::Idle => {
                    if self.cursor == self.target {
                        return None;
                    }
                    self.cursor = self.next_tick();
                    self.phase = Phase::AtTick;
                }
            }
        }
    }

    fn begin_call(&mut self, now: Tick) {
        if now < self.target {
            self.expect.clamped_below_target += 1;
            if now < self.cursor {
                self.expect.clamped_below_cursor += 1;
            }
        } else {
            self.target = now;
        }
        if self.phase == Phase::Done {
            assert!(live_front(&self.timers, &mut self.batch).is_none());
            self.batch = std::mem::take(&mut self.queue);
            self.phase = Phase::Drain;
        }
    }

    /// Checks one callback of the wheel against the firing the model expects, and applies it.
    fn observe(&mut self, now: Tick, e: &Expired<u64>) -> Fired {
        if let Some(first) = live_front(&self.timers, &mut self.limbo) {
            self.settle_limbo(now == self.cursor && e.value == first);
        }
        let Some(id) = self.next_due() else {
            fail(format!(
                "{}: the wheel fired value {} (deadline {}, now {}) but nothing is due; {}",
                self.state(),
                e.value,
                e.deadline,
                now,
                self.describe(e.value)
            ))
        };
        if e.value != id || now != self.cursor {
            fail(format!(
                "{}: the wheel fired value {} with deadline {} at now {};\n  expected {} at now {}\n  \
                 (the fired one: {})",
                self.state(),
                e.value,
                e.deadline,
                now,
                self.describe(id),
                self.cursor,
                self.describe(e.value)
            ));
        }
        let t = &self.timers[&id];
        let (handle, deadline, schedule) = (t.handle, t.deadline, t.schedule);
        ensure!(
            e.handle == handle,
            "{}: {} fired with handle {:?}, started as {handle:?}",
            self.state(),
            self.describe(id),
            e.handle
        );
        ensure!(
            e.deadline == deadline,
            "{}: {} fired reporting deadline {}",
            self.state(),
            self.describe(id),
            e.deadline
        );
        let from_drain = self.phase == Phase::Drain;
        let overruns = self.fire(id);
        ensure!(
            e.overruns == overruns,
            "{}: timer {id} (deadline {deadline}, {schedule:?}) fired reporting {} overruns, \
             expected {overruns}",
            self.state(),
            e.overruns
        );
        Fired {
            id,
            from_drain,
            periodic: schedule.is_some(),
        }
    }

    /// Applies the firing of `id` at the cursor; returns its overruns.
    fn fire(&mut self, id: u64) -> u64 {
        self.detach(id);
        let t = &self.timers[&id];
        let (deadline, schedule) = (t.deadline, t.schedule);
        self.expect.fired += 1;
        self.expect.max_lateness = self.expect.max_lateness.max(self.cursor - deadline);
        let Some(mut s) = schedule else {
            self.forget(id);
            return 0;
        };
        let (next, missed) = next_period(s.policy, deadline, s.period, self.target);
        ensure!(
            s.policy.next(deadline, s.period, self.target) == (next, missed),
            "Missed::{:?}.next({deadline}, {}, {}) = {:?}, the documented rule gives {:?}",
            s.policy,
            s.period,
            self.target,
            s.policy.next(deadline, s.period, self.target),
            (next, missed)
        );
        match next {
            None => self.forget(id),
            Some(n) => {
                s.overruns = missed;
                self.seq += 1;
                let t = self.timers.get_mut(&id).unwrap();
                t.deadline = n;
                t.end = kept_end(n, s.tolerance);
                t.at = fires_at(n, s.tolerance);
                t.seq = self.seq;
                t.schedule = Some(s);
                // Re-armed before its callback runs (the callback may stop it), so a timer the
                // callback starts counts as started after it.
                self.attach(id, false);
            }
        }
        missed
    }

    /// The call returned `complete` with the wheel's cursor at `now`.
    fn end_call(&mut self, complete: bool, now: Tick) {
        if complete {
            if live_front(&self.timers, &mut self.limbo).is_some() {
                self.settle_limbo(false);
            }
            if let Some(id) = self.next_due() {
                fail(format!(
                    "{}: advance reported complete, but {} was due at {}",
                    self.state(),
                    self.describe(id),
                    self.cursor
                ));
            }
            ensure!(
                now == self.target,
                "{}: advance completed with the cursor at {now}",
                self.state()
            );
            self.phase = Phase::Done;
        } else {
            self.sync(now);
        }
    }

    /// An interrupted call left the wheel's cursor at `now`. It may have moved on from the
    /// model's cursor (to a tick the model does not see: a cascade boundary) only if nothing was
    /// left to do at the model's cursor, and no further than the next tick with a firing.
    fn sync(&mut self, now: Tick) {
        ensure!(
            now >= self.cursor,
            "{}: the cursor went back to {now}",
            self.state()
        );
        if now == self.cursor {
            return;
        }
        if live_front(&self.timers, &mut self.limbo).is_some() {
            self.settle_limbo(false);
        }
        loop {
            match self.phase {
                Phase::Drain => {
                    if let Some(id) = live_front(&self.timers, &mut self.batch) {
                        fail(format!(
                            "{}: the cursor moved to {now} with {} still to drain",
                            self.state(),
                            self.describe(id)
                        ));
                    }
                    self.phase = Phase::Idle;
                }
                Phase::AtTick => {
                    ensure!(
                        !self.tick_pending(),
                        "{}: the cursor moved to {now} before the tick's timers fired",
                        self.state()
                    );
                    if let Some(id) = live_front(&self.timers, &mut self.queue) {
                        fail(format!(
                            "{}: the cursor moved to {now} without the drain after the tick \
                             ({} was queued)",
                            self.state(),
                            self.describe(id)
                        ));
                    }
                    self.phase = Phase::Idle;
                }
                Phase::Idle => {
                    ensure!(
                        self.cursor < self.target,
                        "{}: the cursor moved past the target to {now}",
                        self.state()
                    );
                    let next = self.next_tick();
                    ensure!(
                        now <= next,
                        "{}: the cursor moved to {now}, past the next tick with work, {next}",
                        self.state()
                    );
                    self.cursor = now;
                    self.phase = Phase::AtTick;
                    return;
                }
                Phase::Done => fail(format!(
                    "{}: an interrupted call after completion",
                    self.state()
                )),
            }
        }
    }

    /// True earliest firing instant, as `next_expiry` defines it: the cursor when a timer is
    /// due.
    fn earliest(&self) -> Option<(Tick, Tick)> {
        if self.live.is_empty() {
            return None;
        }
        let due = self.queued > 0
            || self
                .wheel
                .first()
                .is_some_and(|&(d, _, _)| d <= self.cursor);
        if due {
            return Some((self.cursor, self.cursor));
        }
        Some((self.wheel.first().unwrap().0, self.ends.first().unwrap().0))
    }

    fn pick_live(&self, rng: &mut Rng) -> Option<Handle> {
        if self.live.is_empty() {
            return None;
        }
        let id = self.live[rng.below(self.live.len() as u64) as usize];
        Some(self.timers[&id].handle)
    }

    /// The handle of the timer the model would fire next (or one of the next few).
    fn pick_next_due(&mut self) -> Option<Handle> {
        let id = live_front(&self.timers, &mut self.batch)
            .or_else(|| self.wheel.first().map(|&(_, _, id)| id))
            .or_else(|| live_front(&self.timers, &mut self.queue))?;
        Some(self.timers[&id].handle)
    }

    fn pick_stale(&self, rng: &mut Rng) -> Option<Handle> {
        if self.stale.is_empty() {
            return None;
        }
        Some(self.stale[rng.below(self.stale.len() as u64) as usize])
    }
}

// ---------------------------------------------------------------------------------------------
// What the driver draws.

/// Deadlines across the whole range, most of them where the wheel's structure has edges: at and
/// just behind the cursor, level boundaries, equal to pending deadlines, next to `u64::MAX`;
/// the rest within the episode's `span` of the cursor, so that timers pile up over a few levels.
fn pick_deadline(rng: &mut Rng, m: &Model) -> Tick {
    let c = m.cursor;
    match rng.below(50) {
        0 => c,
        1 => c.saturating_sub(rng.below(3)),
        2 | 3 => c.saturating_sub(rng.below(m.span)),
        4..=9 => c.saturating_add(rng.below(64)),
        10..=24 => c.saturating_add(rng.below(m.span)),
        25..=29 => m
            .pick_live(rng)
            .map_or(c, |h| m.timers[&m.by_handle[&h]].deadline),
        30 | 31 => m.wheel.first().map_or(c.saturating_add(1), |&(d, _, _)| d),
        32..=34 => c.saturating_add(rng.below(MAX - c)),
        35 => rng.next(),
        36 | 37 => MAX - rng.below(100),
        38 => MAX,
        39..=42 => {
            // Just around the start of the next window of some level above the cursor.
            let shift = 6 * (1 + rng.below(10));
            let boundary = ((c >> shift) + 1).checked_shl(shift as u32).unwrap_or(MAX);
            boundary.saturating_add(rng.below(3)).saturating_sub(1)
        }
        43 | 44 => m.target.saturating_add(rng.below(8)).saturating_sub(4),
        _ => c
            .saturating_add(rng.pow2())
            .saturating_add(rng.below(3))
            .saturating_sub(1),
    }
}

/// The window end the wheel documents keeping, written out here rather than taken from the
/// crate: `deadline + tolerance`, saturating at `MAX`; below that, a tolerance of 2^30 or more
/// keeps its 25 leading bits. Checked against the crate's `window_end` on every use.
fn kept_end(deadline: Tick, tolerance: Tick) -> Tick {
    let asked = deadline.saturating_add(tolerance);
    let kept = if asked == MAX || tolerance < 1 << 30 {
        asked
    } else {
        let low = tolerance.ilog2() - 24;
        deadline + (tolerance >> low << low)
    };
    assert_eq!(
        kept,
        window_end(deadline, tolerance),
        "{deadline} + {tolerance}"
    );
    kept
}

fn pick_tolerance(rng: &mut Rng) -> Tick {
    match rng.below(11) {
        0..=4 => 0,
        5 => rng.below(4),
        6 => rng.below(1000),
        7 => rng.pow2(),
        8 => rng.next(),
        // Around the widest window an entry of the wheel keeps exactly (wider ones are rounded).
        9 => (1 << 30) - 2 + rng.below(4),
        _ => MAX,
    }
}

fn pick_period(rng: &mut Rng) -> Tick {
    match rng.below(12) {
        0 => 1,
        1 => 2 + rng.below(6),
        2 => 64,
        3 => 1 + rng.below(100),
        4 => rng.pow2(),
        5 => rng.pow2().saturating_add(rng.below(64)),
        6 => rng.next().max(1),
        7 => MAX,
        8 => MAX - rng.below(10),
        9 => 4096 + rng.below(4096),
        10 => {
            if rng.chance(1, 4) {
                0
            } else {
                3
            }
        }
        _ => 1000 + rng.below(100_000),
    }
}

fn pick_policy(rng: &mut Rng) -> Missed {
    match rng.below(3) {
        0 => Missed::Burst,
        1 => Missed::Delay,
        _ => Missed::Skip,
    }
}

/// Targets for `advance`: mostly short steps (against the episode's `span`) so that a wheel
/// fills up; also the same as before, earlier (ignored), exactly at or next to pending
/// deadlines, level boundaries, long jumps, the end of time.
fn pick_target(rng: &mut Rng, m: &Model) -> Tick {
    let n = m.target;
    let step = rng.below(m.span / 32 + 1);
    // Pending deadlines far ahead (near the end of time, say) are jumped to only now and then:
    // a wheel whose cursor reached the end of time has nothing but overdue timers left.
    let near = |rng: &mut Rng, d: Tick| {
        if d - n.min(d) <= m.span.saturating_mul(4) || rng.chance(1, 200) {
            d
        } else {
            n.saturating_add(step)
        }
    };
    match rng.below(1000) {
        0..=349 => n.saturating_add(step),
        350..=499 => n.saturating_add(rng.below(m.span / 4 + 1)),
        500..=649 => {
            let d = m.wheel.first().map_or(n, |&(d, _, _)| d);
            near(rng, d).saturating_add(rng.below(3)).saturating_sub(1)
        }
        650..=689 => n,
        690..=719 => m.cursor.saturating_sub(rng.below(100)),
        720..=729 => rng.below(n.max(1)),
        730..=789 => {
            let d = m
                .pick_live(rng)
                .map_or(n, |h| m.timers[&m.by_handle[&h]].deadline);
            near(rng, d)
        }
        790..=839 => {
            let shift = 6 * (1 + rng.below(10));
            let boundary = ((n >> shift) + 1).checked_shl(shift as u32).unwrap_or(MAX);
            near(rng, boundary)
        }
        // Long jumps, rare: after a few the cursor sits near the end of time for the rest of the
        // episode.
        840..=849 => n.saturating_add(1 << rng.below(48)),
        _ => match rng.below(5000) {
            0 | 1 => n.saturating_add(rng.pow2()),
            2 => n.saturating_add(rng.below(MAX - n)),
            3 => MAX - rng.below(1000),
            4 => MAX,
            _ => n.saturating_add(rng.below(8)),
        },
    }
}

fn pick_budget(rng: &mut Rng) -> Budget {
    match rng.below(10) {
        0..=3 => Budget::UNLIMITED,
        4..=6 => Budget::steps(rng.below(4)),
        _ => Budget::steps(4 + rng.below(60)),
    }
}

/// Any handle a caller could hold: this wheel's live and stale ones, the next to fire, the other
/// wheel's, those of wheels dropped earlier, and made-up ones near real ones.
fn pick_handle(rng: &mut Rng, m: &mut Model, other: &Model, old: &[Handle]) -> Handle {
    let h = match rng.below(20) {
        0..=8 => m.pick_live(rng),
        9 | 10 => m.pick_next_due(),
        11..=13 => m.pick_stale(rng),
        14 | 15 => other.pick_live(rng),
        16 => other.pick_stale(rng),
        17 => {
            if old.is_empty() {
                None
            } else {
                Some(old[rng.below(old.len() as u64) as usize])
            }
        }
        _ => {
            let base = m.pick_live(rng).or_else(|| m.pick_stale(rng));
            let (id, owner) = base.map_or((rng.next(), rng.next()), Handle::to_parts);
            Some(match rng.below(5) {
                0 => Handle::from_parts(id ^ (1 << (32 + rng.below(32))), owner),
                1 => Handle::from_parts(id ^ 1, owner),
                2 => Handle::from_parts(id, owner ^ (1 << rng.below(64))),
                3 => Handle::from_parts(id, 0),
                _ => Handle::from_parts(rng.next(), rng.next()),
            })
        }
    };
    h.or_else(|| m.pick_live(rng))
        .unwrap_or_else(|| Handle::from_parts(rng.next(), rng.next()))
}

// ---------------------------------------------------------------------------------------------
// The driver.

#[derive(Default, Debug)]
struct Counts {
    ops: u64,
    episodes: u64,
    calls: u64,
    incomplete: u64,
    panics: u64,
    firings: u64,
    periodic_firings: u64,
    drained: u64,
    callback_starts: u64,
    callback_stops: u64,
    callback_resets: u64,
    polls: u64,
    clears: u64,
    rejected_handles: u64,
    full: u64,
    zero_period: u64,
    most_pending: usize,
}

/// What a callback needs besides the wheel it runs in and the model of that wheel.
struct Cx<'a> {
    rng: &'a mut Rng,
    issued: &'a mut HashSet<Handle, Fast>,
    next_id: &'a mut u64,
    counts: &'a mut Counts,
    old: &'a [Handle],
    /// Callback actions left for this advance (bounds chains of timers started by callbacks).
    actions: &'a mut u32,
    trace: bool,
}

fn check_inside(t: &mut dyn Timers<u64>, m: &Model) {
    ensure!(
        t.len() == m.len() && t.is_empty() == (m.len() == 0),
        "{}: len() is {} inside a callback",
        m.state(),
        t.len()
    );
    ensure!(
        t.now() == m.cursor,
        "{}: now() is {} inside a callback",
        m.state(),
        t.now()
    );
    check_next(
        t.next_expiry(),
        m.earliest().map(|e| e.0),
        m,
        "next_expiry (in a callback)",
    );
    let _ = t.memory_bytes();
}

/// `next_wakeup` / `next_expiry`: `None` exactly when nothing is pending; never
/// later than the true value (the cursor when a timer is due), never before the cursor; exact
/// while no timer was stopped or reset since the wheel was last empty. While a call is running
/// or unfinished (inside a callback, or between the calls of a budgeted advance) the wheel
/// answers the cursor itself, and that is taken as exact too: `advance` has work right there
/// (the rest of the call), which is what `Timers::next_expiry` asks for.
fn check_next(got: Option<Tick>, truth: Option<Tick>, m: &Model, what: &str) {
    let unfinished = m.phase != Phase::Done;
    let ok = match (got, truth) {
        (None, None) => true,
        (Some(g), Some(t)) => {
            m.cursor <= g && g <= t && (m.dirty || g == t || (unfinished && g == m.cursor))
        }
        _ => false,
    };
    ensure!(
        ok,
        "{}: {what} is {got:?}, expected {}{truth:?}",
        m.state(),
        if m.dirty { "at most " } else { "" }
    );
}

fn on_fire(t: &mut dyn Timers<u64>, e: Expired<u64>, m: &mut Model, other: &Model, cx: &mut Cx) {
    let now = t.now();
    if cx.trace {
        eprintln!(
            "    {} fires {} (deadline {}, overruns {}) at {now}",
            m.name, e.value, e.deadline, e.overruns
        );
    }
    let fired = m.observe(now, &e);
    cx.counts.firings += 1;
    cx.counts.periodic_firings += u64::from(fired.periodic);
    cx.counts.drained += u64::from(fired.from_drain);
    check_inside(t, m);
    for _ in 0..cx.rng.below(3) {
        if *cx.actions == 0 {
            break;
        }
        *cx.actions -= 1;
        match cx.rng.below(10) {
            8 | 9 => {
                // A reset from the callback: the firing timer (a periodic one is pending again),
                // the next one due, or any other handle, stale and foreign ones included.
                let h = match cx.rng.below(3) {
                    0 => Some(e.handle),
                    1 => m.pick_next_due(),
                    _ => None,
                };
                let h = h.unwrap_or_else(|| pick_handle(cx.rng, m, other, cx.old));
                let expect = m.by_handle.get(&h).copied();
                let mut deadline = pick_deadline(cx.rng, m);
                let tolerance = pick_tolerance(cx.rng);
                if let Some(s) = expect.and_then(|id| m.timers[&id].schedule) {
                    if s.policy == Missed::Burst {
                        deadline = deadline
                            .max(m.target.saturating_sub(s.period.saturating_mul(BURST_LAG)));
                    }
                }
                let before = expect.map(|id| m.timers[&id].deadline);
                let got = t.reset(h, deadline, tolerance);
                if cx.trace {
                    eprintln!("      reset {h:?} to {deadline} tolerance {tolerance} -> {got:?}");
                }
                ensure!(
                    got == before,
                    "{}: reset({h:?}, {deadline}) from the callback of {} returned {got:?}, \
                     expected {before:?}",
                    m.state(),
                    fired.id
                );
                match expect {
                    Some(id) => {
                        m.reset(id, deadline, tolerance, false);
                        cx.counts.callback_resets += 1;
                    }
                    None => cx.counts.rejected_handles += 1,
                }
            }
            0..=3 => {
                let id = *cx.next_id;
                *cx.next_id += 1;
                let deadline = pick_deadline(cx.rng, m);
                let r = t.start(deadline, id);
                if cx.trace {
                    eprintln!("      start {id} at {deadline} -> {r:?}");
                }
                match r {
                    Ok(h) => {
                        ensure!(!m.full(), "{}: start succeeded beyond capacity", m.state());
                        ensure!(cx.issued.insert(h), "{}: start reissued {h:?}", m.state());
                        m.insert(id, h, deadline, 0, None, false);
                        cx.counts.callback_starts += 1;
                    }
                    Err(err) => {
                        ensure!(
                            m.full()
                                && err
                                    == Error::Full {
                                        capacity: m.capacity.unwrap()
                                    },
                            "{}: start({deadline}) from a callback failed: {err:?}",
                            m.state()
                        );
                        cx.counts.full += 1;
                    }
                }
            }
            choice => {
                let h = match choice {
                    4 => m.pick_next_due(),
                    5 => Some(e.handle),
                    _ => None,
                };
                let h = h.unwrap_or_else(|| pick_handle(cx.rng, m, other, cx.old));
                let expect = m.by_handle.get(&h).copied();
                let got = t.stop(h);
                if cx.trace {
                    eprintln!("      stop {h:?} -> {got:?}");
                }
                ensure!(
                    got == expect,
                    "{}: stop({h:?}) from the callback of {} returned {got:?}, expected {expect:?}",
                    m.state(),
                    fired.id
                );
                match expect {
                    Some(id) => {
                        m.stop(id);
                        cx.counts.callback_stops += 1;
                    }
                    None => cx.counts.rejected_handles += 1,
                }
            }
        }
        check_inside(t, m);
    }
    // Now and then the callback panics (the caller catches it): the next call must go on as if
    // a budget had run out right after this firing.
    if cx.rng.chance(1, 128) {
        if cx.trace {
            eprintln!("      (the callback panics)");
        }
        panic::panic_any(Deliberate);
    }
}

/// This wheel, its model, and the other wheel's model, borrowed apart from the world's other
/// fields.
macro_rules! split {
    ($world:expr, $k:expr) => {{
        let [w0, w1] = &mut $world.wheels;
        let [m0, m1] = &mut $world.models;
        if $k == 0 {
            (w0, m0, &*m1)
        } else {
            (w1, m1, &*m0)
        }
    }};
}

struct World {
    rng: Rng,
    wheels: [Wheel<u64>; 2],
    models: [Model; 2],
    issued: HashSet<Handle, Fast>,
    /// Handles of wheels dropped at the end of earlier episodes.
    old: Vec<Handle>,
    next_id: u64,
    counts: Counts,
    episode_left: u64,
    trace: bool,
}

fn make_wheel(capacity: Option<usize>) -> Wheel<u64> {
    match capacity {
        None => Wheel::new(),
        Some(c) => Wheel::with_capacity(c).expect("a small capacity is accepted"),
    }
}

impl World {
    fn new(seed: u64) -> World {
        World {
            rng: Rng(seed),
            wheels: [Wheel::new(), Wheel::new()],
            models: [
                Model::new("A", None, 1 << 12),
                Model::new("B", None, 1 << 12),
            ],
            issued: HashSet::default(),
            old: Vec::new(),
            next_id: 0,
            counts: Counts::default(),
            episode_left: 0,
            trace: false,
        }
    }

    /// Fresh wheels (sometimes with a fixed capacity), sometimes moved to a base time first, so
    /// that every region of the range gets its turn at being "near the cursor".
    fn new_episode(&mut self) {
        for k in 0..2 {
            for _ in 0..4 {
                let h = if self.rng.chance(1, 2) {
                    self.models[k].pick_live(&mut self.rng)
                } else {
                    self.models[k].pick_stale(&mut self.rng)
                };
                if let Some(h) = h {
                    if self.old.len() < 64 {
                        self.old.push(h);
                    } else {
                        let i = self.rng.below(64) as usize;
                        self.old[i] = h;
                    }
                }
            }
        }
        for (k, name) in ["A", "B"].into_iter().enumerate() {
            let capacity = if self.rng.chance(1, 6) {
                Some([0, 1, 2, 3, 8, 32, 100][self.rng.below(7) as usize])
            } else {
                None
            };
            self.wheels[k] = make_wheel(capacity);
            // From one tick to 2^49, so every level gets crowded sometimes; the rest of the range
            // comes from far deadlines and the rarer long jumps (wider spans would carry most
            // episodes to the end of time within a few hundred advances).
            let span = 1u64 << self.rng.below(50);
            self.models[k] = Model::new(name, capacity, span);
        }
        self.issued.clear();
        self.counts.episodes += 1;
        self.episode_left = 100 + self.rng.below(3000);
        if self.trace {
            eprintln!(
                "episode {}: capacities {:?} {:?}",
                self.counts.episodes, self.models[0].capacity, self.models[1].capacity
            );
        }
        if self.rng.chance(1, 2) {
            let base = match self.rng.below(4) {
                0 => self.rng.next() >> self.rng.below(64),
                1 => self.rng.pow2().wrapping_sub(self.rng.below(64)),
                2 => MAX - self.rng.below(1 << 16),
                _ => self.rng.below(1 << 20),
            };
            for k in 0..2 {
                let mut actions = 0;
                let done = self.call(k, base, Budget::UNLIMITED, &mut actions);
                ensure!(done, "an empty wheel's unlimited advance did not complete");
            }
        }
    }

    fn step(&mut self) {
        if self.episode_left == 0 {
            self.new_episode();
        }
        self.episode_left -= 1;
        self.counts.ops += 1;
        let k = usize::from(self.rng.chance(1, 3));
        let crowded = self.models[k].len() >= CROWD;
        let r = self.rng.below(100);
        match r {
            _ if r < 30 && !crowded => self.start(k),
            _ if r < 38 && !crowded => self.start_periodic(k),
            _ if r < 50 => self.stop(k, None),
            _ if r < 60 => self.reset(k),
            _ if r < 63 => self.query(k),
            63 if self.rng.chance(1, 4) => self.clear(k),
            63 => self.query(k),
            _ => self.advance(k),
        }
        self.check(k);
        self.counts.most_pending = self.counts.most_pending.max(self.models[k].len());
    }

    fn start(&mut self, k: usize) {
        let id = self.next_id;
        self.next_id += 1;
        let (trace, with_tolerance) = (self.trace, self.rng.chance(1, 2));
        let deadline = pick_deadline(&mut self.rng, &self.models[k]);
        let tolerance = if with_tolerance {
            pick_tolerance(&mut self.rng)
        } else {
            0
        };
        let (w, m, _) = split!(self, k);
        let r = if with_tolerance {
            w.start_with(deadline, tolerance, id)
        } else {
            w.start(deadline, id)
        };
        if trace {
            eprintln!(
                "{}: start {id} at {deadline} tolerance {tolerance} -> {r:?}",
                m.name
            );
        }
        match r {
            Ok(h) => {
                ensure!(!m.full(), "{}: start succeeded beyond capacity", m.state());
                ensure!(self.issued.insert(h), "{}: start reissued {h:?}", m.state());
                m.insert(id, h, deadline, tolerance, None, true);
            }
            Err(err) => {
                ensure!(
                    m.full()
                        && err
                            == Error::Full {
                                capacity: m.capacity.unwrap()
                            },
                    "{}: start({deadline}) failed: {err:?}",
                    m.state()
                );
                self.counts.full += 1;
            }
        }
    }

    fn start_periodic(&mut self, k: usize) {
        let id = self.next_id;
        self.next_id += 1;
        let trace = self.trace;
        let mut first = pick_deadline(&mut self.rng, &self.models[k]);
        let period = pick_period(&mut self.rng);
        let tolerance = if self.rng.chance(1, 2) {
            0
        } else {
            pick_tolerance(&mut self.rng)
        };
        let policy = pick_policy(&mut self.rng);
        let (w, m, _) = split!(self, k);
        if policy == Missed::Burst {
            first = first.max(m.target.saturating_sub(period.saturating_mul(BURST_LAG)));
        }
        let r = w.start_periodic(first, period, tolerance, policy, id);
        if trace {
            eprintln!(
                "{}: start_periodic {id} first {first} period {period} tolerance {tolerance} \
                 {policy:?} -> {r:?}",
                m.name
            );
        }
        match r {
            Ok(h) => {
                ensure!(period > 0, "{}: a zero period was accepted", m.state());
                ensure!(!m.full(), "{}: start succeeded beyond capacity", m.state());
                ensure!(self.issued.insert(h), "{}: start reissued {h:?}", m.state());
                let schedule = Schedule {
                    period,
                    tolerance,
                    policy,
                    overruns: 0,
                };
                m.insert(id, h, first, tolerance, Some(schedule), true);
            }
            // With both a zero period and a full wheel, either error is right.
            Err(Error::ZeroPeriod) if period == 0 => self.counts.zero_period += 1,
            Err(err) => {
                ensure!(
                    m.full()
                        && err
                            == Error::Full {
                                capacity: m.capacity.unwrap()
                            },
                    "{}: start_periodic({first}, {period}) failed: {err:?}",
                    m.state()
                );
                self.counts.full += 1;
            }
        }
    }

    fn stop(&mut self, k: usize, handle: Option<Handle>) {
        let trace = self.trace;
        let (rng, old) = (&mut self.rng, &self.old[..]);
        let (w, m, other) = split!(self, k);
        let h = handle.unwrap_or_else(|| pick_handle(rng, m, other, old));
        let expect = m.by_handle.get(&h).copied();
        let got = w.stop(h);
        if trace {
            eprintln!("{}: stop {h:?} -> {got:?}", m.name);
        }
        ensure!(
            got == expect,
            "{}: stop({h:?}) returned {got:?}, expected {expect:?}",
            m.state()
        );
        match expect {
            Some(id) => m.stop(id),
            None => self.counts.rejected_handles += 1,
        }
    }

    fn reset(&mut self, k: usize) {
        let trace = self.trace;
        let (rng, old) = (&mut self.rng, &self.old[..]);
        let (w, m, other) = split!(self, k);
        let h = pick_handle(rng, m, other, old);
        let mut deadline = pick_deadline(rng, m);
        let tolerance = pick_tolerance(rng);
        let expect = m.by_handle.get(&h).copied();
        if let Some(s) = expect.and_then(|id| m.timers[&id].schedule) {
            if s.policy == Missed::Burst {
                deadline =
                    deadline.max(m.target.saturating_sub(s.period.saturating_mul(BURST_LAG)));
            }
        }
        let before = expect.map(|id| m.timers[&id].deadline);
        let got = w.reset(h, deadline, tolerance);
        if trace {
            eprintln!(
                "{}: reset {h:?} to {deadline} tolerance {tolerance} -> {got:?}",
                m.name
            );
        }
        ensure!(
            got == before,
            "{}: reset({h:?}, {deadline}) returned {got:?}, expected {before:?}",
            m.state()
        );
        match expect {
            Some(id) => m.reset(id, deadline, tolerance, true),
            None => self.counts.rejected_handles += 1,
        }
    }

    fn query(&mut self, k: usize) {
        let (rng, old) = (&mut self.rng, &self.old[..]);
        let (w, m, other) = split!(self, k);
        let h = pick_handle(rng, m, other, old);
        let expect = m
            .by_handle
            .get(&h)
            .and_then(|id| m.timers[id].schedule)
            .map(|s| s.overruns);
        ensure!(
            w.overruns(h) == expect,
            "{}: overruns({h:?}) is {:?}, expected {expect:?}",
            m.state(),
            w.overruns(h)
        );
        let deadline = m.by_handle.get(&h).map(|id| m.timers[id].deadline);
        ensure!(
            w.deadline(h) == deadline && w.contains(h) == deadline.is_some(),
            "{}: deadline({h:?}) is {:?} and contains() {}, expected {deadline:?}",
            m.state(),
            w.deadline(h),
            w.contains(h)
        );
        let _ = w.memory_bytes();
    }

    /// `Wheel::clear`, between calls or between the calls of an unfinished advance.
    fn clear(&mut self, k: usize) {
        let trace = self.trace;
        let (w, m, _) = split!(self, k);
        if trace {
            eprintln!("{}: clear; {}", m.name, m.state());
        }
        let cursor = w.now();
        w.clear();
        ensure!(
            w.is_empty() && w.now() == cursor,
            "{}: after clear, {} timers and the time at {}",
            m.state(),
            w.len(),
            w.now()
        );
        self.counts.clears += 1;
        m.clear();
    }

    fn advance(&mut self, k: usize) {
        let mut now = pick_target(&mut self.rng, &self.models[k]);
        if self.models[k]
            .bursts
            .first()
            .is_some_and(|&(limit, _)| limit < now)
        {
            if self.rng.chance(1, 3) {
                // Let time run far again: stop the Burst timers that hold it back.
                while let Some(&(limit, id)) = self.models[k].bursts.first() {
                    if limit >= now {
                        break;
                    }
                    let h = self.models[k].timers[&id].handle;
                    self.stop(k, Some(h));
                }
            }
            if let Some(&(limit, _)) = self.models[k].bursts.first() {
                now = now.min(limit);
            }
        }
        let budget = pick_budget(&mut self.rng);
        let mut actions = 2 + self.rng.below(14) as u32;
        if self.call(k, now, budget, &mut actions) || !self.rng.chance(1, 3) {
            // An unfinished call stays unfinished: the operations that follow run between its
            // calls, and a later advance resumes it.
            return;
        }
        let mut calls = 0u64;
        let fired_before = self.counts.firings;
        loop {
            self.check(k);
            if self.call(k, now, budget, &mut actions) {
                break;
            }
            calls += 1;
            let work = self.models[k].len() as u64 + self.counts.firings - fired_before;
            ensure!(
                calls <= 2_000 + 64 * work,
                "{}: {calls} calls with {budget:?} and still not complete",
                self.models[k].state()
            );
        }
    }

    /// One call of `advance`, checked firing by firing.
    fn call(&mut self, k: usize, now: Tick, budget: Budget, actions: &mut u32) -> bool {
        let trace = self.trace;
        let (w, m, other) = split!(self, k);
        if trace {
            eprintln!("{}: advance({now}, {budget:?}); {}", m.name, m.state());
        }
        m.begin_call(now);
        let mut callbacks = 0usize;
        let mut cx = Cx {
            rng: &mut self.rng,
            issued: &mut self.issued,
            next_id: &mut self.next_id,
            counts: &mut self.counts,
            old: &self.old,
            actions,
            trace,
        };
        // Now and then the pull-style expiry instead: one `poll_expired` is a call whose budget
        // runs out right after its first firing.
        if cx.rng.chance(1, 6) {
            let got = w.poll_expired(now);
            cx.counts.calls += 1;
            cx.counts.polls += 1;
            if trace {
                eprintln!("  poll_expired -> {got:?}, cursor {}", w.now());
            }
            let complete = match got {
                Some(e) => {
                    let fired = m.observe(w.now(), &e);
                    cx.counts.firings += 1;
                    cx.counts.periodic_firings += u64::from(fired.periodic);
                    cx.counts.drained += u64::from(fired.from_drain);
                    false
                }
                None => true,
            };
            cx.counts.incomplete += u64::from(!complete);
            m.end_call(complete, w.now());
            return complete;
        }
        let unlimited = budget == Budget::UNLIMITED && cx.rng.chance(1, 2);
        let result = panic::catch_unwind(AssertUnwindSafe(|| {
            let mut on_expire = |t: &mut dyn Timers<u64>, e: Expired<u64>| {
                callbacks += 1;
                on_fire(t, e, m, other, &mut cx);
            };
            if unlimited {
                // `advance_to` is `advance` without a budget: it completes (a panicking callback
                // aside), reporting how many fired.
                let fired = w.advance_to(now, &mut on_expire);
                Progress {
                    fired,
                    steps: 0,
                    complete: true,
                }
            } else {
                w.advance(now, budget, on_expire)
            }
        }));
        self.counts.calls += 1;
        let complete = match result {
            Ok(p) => {
                ensure!(
                    p.fired == callbacks,
                    "{}: Progress::fired is {}, the callback ran {callbacks} times",
                    m.state(),
                    p.fired
                );
                ensure!(
                    unlimited || p.steps <= budget.get() && (p.complete || p.steps == budget.get()),
                    "{}: {p:?} under {budget:?}",
                    m.state()
                );
                if trace {
                    eprintln!("  -> {p:?}, cursor {}", w.now());
                }
                p.complete
            }
            Err(payload) => {
                if !payload.is::<Deliberate>() {
                    panic::resume_unwind(payload);
                }
                // The documented outcome: as if a budget had run out right after that firing.
                self.counts.panics += 1;
                if trace {
                    eprintln!("  -> panicked, cursor {}", w.now());
                }
                false
            }
        };
        self.counts.incomplete += u64::from(!complete);
        m.end_call(complete, w.now());
        complete
    }

    /// Everything observable from outside a call, against the model.
    fn check(&mut self, k: usize) {
        let (w, m, _) = split!(self, k);
        ensure!(
            w.len() == m.len() && w.is_empty() == (m.len() == 0),
            "{}: len() is {}",
            m.state(),
            w.len()
        );
        ensure!(w.now() == m.cursor, "{}: now() is {}", m.state(), w.now());
        let truth = m.earliest();
        check_next(w.next_expiry(), truth.map(|t| t.0), m, "next_expiry");
        check_next(w.next_wakeup(), truth.map(|t| t.1), m, "next_wakeup");
        // `may_expire_at`: `true` whenever a timer is due by `t` (or overdue); at or before the
        // cursor, outside a call, exactly then.
        for t in [
            0,
            m.cursor.saturating_sub(1),
            m.cursor,
            m.cursor.saturating_add(1),
        ] {
            let due = truth.is_some_and(|e| e.0 <= t.max(m.cursor));
            let got = w.may_expire_at(t);
            ensure!(
                got || !due,
                "{}: may_expire_at({t}) is false with a timer due",
                m.state()
            );
            ensure!(
                t > m.cursor || m.phase != Phase::Done || got == due,
                "{}: may_expire_at({t}) is {got} at or before the cursor, expected {due}",
                m.state()
            );
        }
        let s = w.stats();
        let x = m.expect;
        ensure!(
            s.started == x.started
                && s.stopped == x.stopped
                && s.reset == x.reset
                && s.fired == x.fired
                && s.max_lateness == x.max_lateness
                && x.clamped_below_cursor <= s.clamped
                && s.clamped <= x.clamped_below_target,
            "{}: stats {s:?}, expected {x:?}",
            m.state()
        );
        if let Err(e) = w.check_invariants() {
            fail(format!("{}: check_invariants: {e}", m.state()));
        }
    }
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim().replace('_', "");
    let parsed = match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => v.parse(),
    };
    Some(parsed.unwrap_or_else(|_| panic!("{name}={v} is not a number")))
}

#[test]
fn the_wheel_does_what_its_documentation_says() {
    quiet_deliberate_panics();
    let ops = env_u64("CALLWHEEL_MODEL_OPS").unwrap_or(DEFAULT_OPS);
    let seed = env_u64("CALLWHEEL_MODEL_SEED").unwrap_or(DEFAULT_SEED);
    // A capacity the slab cannot index is a configuration error, not an allocation attempt.
    assert!(matches!(
        Wheel::<u64>::with_capacity(usize::MAX),
        Err(Error::Config { .. })
    ));
    let mut world = World::new(seed);
    world.trace = env_u64("CALLWHEEL_MODEL_TRACE").is_some_and(|t| t != 0);
    let started = Instant::now();
    for op in 0..ops {
        WHERE.with(|w| w.set((seed, op)));
        world.step();
    }
    let c = &world.counts;
    eprintln!(
        "wheel_model: seed {seed:#x}: {} operations in {} episodes, {} advance calls ({} left \
         unfinished by a budget or a panicking callback, {} panics), {} firings checked ({} \
         periodic, {} from the overdue queue), {} starts, {} stops and {} resets from callbacks, \
         {} poll_expired calls, {} clears, {} handles rejected, {} starts refused (full), {} zero periods, up to {} timers pending; {:.1} s",
        c.ops,
        c.episodes,
        c.calls,
        c.incomplete,
        c.panics,
        c.firings,
        c.periodic_firings,
        c.drained,
        c.callback_starts,
        c.callback_stops,
        c.callback_resets,
        c.polls,
        c.clears,
        c.rejected_handles,
        c.full,
        c.zero_period,
        c.most_pending,
        started.elapsed().as_secs_f64()
    );
}
