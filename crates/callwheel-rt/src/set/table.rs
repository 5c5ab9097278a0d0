//! The timers of one set: a slab of records, the set's own wheel and the expired queue. No
//! clock and no lock: every operation is given `now` by the set, which holds its lock.
//!
//! # Records
//!
//! A record is in one of four phases:
//!
//! | phase | where | leaves by |
//! |---|---|---|
//! | free | on the free list (LIFO, through `next`) | create |
//! | running | on the wheel, keyed by its deadline, valued by its slot index | expiry (to queued), reset, cancel |
//! | queued | on the expired queue (FIFO, doubly linked through `prev`/`next`) | reap, reset (to running), cancel |
//! | retired | nowhere (its handles are used up, see [`handle`](super::handle)) | never |
//!
//! A queued timer keeps the deadline it expired for: a periodic one restarts from it when it is
//! reaped. The slab holds at most `quota` records and the wheel at most `quota` timers, so a set
//! whose owner never reaps holds a bounded amount of memory.
//!
//! The slab is the set's own rather than the core's generation-checked `Slab`: a set's handles
//! are single 64-bit words in the layout the C interface fixes (key, generation and index in
//! widths that depend on the quota, and a slot whose generations run out is re-keyed rather
//! than retired; see [`handle`](super::handle)), where the core's handles are an index,
//! a 32-bit generation and a 64-bit owner.
//!
//! # Invariants ([`Table::check`])
//!
//! `running` equals the wheel's length and the running records; `queued` equals the queue's
//! length and the queued records; `running + queued <= quota`; the free list holds exactly the
//! free records; every live record answers to a handle whose slot bits are its index.

use callwheel::{Budget, Handle, Scheme, Timers};
use callwheel::{Missed, Wheel};

use super::handle::{give_back, low_bits, take_key, Layout};
use super::types::Reaped;
use crate::{Error, Tolerance};

const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Free,
    Running(Handle),
    Queued,
    Retired,
}

#[derive(Debug)]
struct Record {
    /// While live: the handle it answers to. While free: the handle it will be issued with.
    bits: u64,
    phase: Phase,
    label: u64,
    /// Running: the deadline it is due at. Queued: the deadline it expired for.
    deadline: u64,
    /// The period in nanoseconds; 0 for a one-shot timer.
    interval: u64,
    policy: Missed,
    /// Periods missed, as counted by the latest reap (see [`Reaped::overruns`]).
    overruns: u64,
    prev: u32,
    next: u32,
}

/// A timer's value in nanoseconds: (remaining, interval).
pub(crate) type Value = (u64, u64);

#[derive(Debug)]
pub(crate) struct Table {
    layout: Layout,
    quota: usize,
    /// The newest key the set owns (see the handle module on re-keying).
    key: u64,
    /// The generation slots start from under `key` (above the handles of its earlier owners).
    base: u64,
    /// A slot has used up its generations under `key`: the key is not given back when the set
    /// is dropped. (Older keys were all used up by some slot: that is why the set moved on.)
    key_used_up: bool,
    records: Vec<Record>,
    free: u32,
    head: u32,
    tail: u32,
    running: usize,
    queued: usize,
    wheel: Wheel<u32>,
    /// Slot indices expired by one `advance`, kept to avoid allocating on every expiry.
    scratch: Vec<u32>,
    tolerance: Tolerance,
    policy: Missed,
    expired: u64,
    reaped: u64,
}

impl Table {
    /// A table for `quota` timers (already checked by the caller) whose wheel starts at `now`.
    pub(crate) fn new(
        quota: usize,
        tolerance: Tolerance,
        policy: Missed,
        now: u64,
    ) -> Result<Table, Error> {
        let layout = Layout::for_quota(quota);
        let (key, base) = take_key(layout).ok_or(Error::HandlesExhausted)?;
        // Keyed by deadline: a call reports every timer due by then, whatever its window (a
        // window only lets the set's runtime timer wake later).
        let mut wheel = Wheel::at_deadlines();
        // Move the empty wheel to the clock's time, so timers are placed relative to it.
        let _ = wheel.advance(now, Budget::UNLIMITED, |_, _| {});
        Ok(Table {
            layout,
            quota,
            key,
            base,
            key_used_up: false,
            records: Vec::new(),
            free: NIL,
            head: NIL,
            tail: NIL,
            running: 0,
            queued: 0,
            wheel,
            scratch: Vec::new(),
            tolerance,
            policy,
            expired: 0,
            reaped: 0,
        })
    }

    #[cfg(test)]
    pub(crate) fn key(&self) -> u64 {
        self.key
    }

    pub(crate) fn quota(&self) -> usize {
        self.quota
    }

    pub(crate) fn running(&self) -> usize {
        self.running
    }

    pub(crate) fn queued(&self) -> usize {
        self.queued
    }

    /// Timers expired and timers reaped, since the set was made.
    pub(crate) fn totals(&self) -> (u64, u64) {
        (self.expired, self.reaped)
    }

    /// When the set's runtime timer should next fire: the wheel's earliest window end.
    pub(crate) fn next_wakeup(&self) -> Option<u64> {
        self.wheel.next_wakeup()
    }

    /// Moves the running timers whose deadline is at or before `now` to the tail of the queue,
    /// in deadline order (start order among equal deadlines), for at most `budget` steps of
    /// the wheel (each moved timer is one). Returns whether it caught up with `now`; a call
    /// that did not resumes where this one stopped.
    pub(crate) fn expire(&mut self, now: u64, budget: Budget) -> bool {
        let mut due = std::mem::take(&mut self.scratch);
        due.clear();
        let progress = self.wheel.advance(now, budget, |_, e| due.push(e.value));
        for &idx in &due {
            let r = &mut self.records[idx as usize];
            debug_assert!(matches!(r.phase, Phase::Running(_)), "{:?}", r.phase);
            r.phase = Phase::Queued;
            self.running -= 1;
            self.push_back(idx);
        }
        self.expired += due.len() as u64;
        self.scratch = due;
        progress.complete
    }

    /// Creates a timer due `value` ns after `now`, then every `interval` ns (0: once).
    pub(crate) fn create(
        &mut self,
        now: u64,
        value: u64,
        interval: u64,
        label: u64,
    ) -> Result<u64, Error> {
        let deadline = checked_deadline(now, value, interval)?;
        if self.running + self.queued >= self.quota {
            return Err(Error::QuotaExceeded { quota: self.quota });
        }
        let idx = self.alloc()?;
        let policy = self.policy;
        let r = &mut self.records[idx as usize];
        r.label = label;
        r.interval = interval;
        r.policy = policy;
        r.overruns = 0;
        let bits = r.bits;
        let tolerance = self.tolerance.for_interval(value);
        if let Err(e) = self.start(idx, deadline, tolerance) {
            self.release(idx);
            return Err(e);
        }
        Ok(bits)
    }

    /// Gives the timer `bits` a new value and label, taking it off the queue if it was there;
    /// returns its former value.
    pub(crate) fn reset(
        &mut self,
        now: u64,
        bits: u64,
        value: u64,
        interval: u64,
        label: u64,
    ) -> Result<Value, Error> {
        let idx = self.resolve(bits)?;
        let deadline = checked_deadline(now, value, interval)?;
        let old = self.value_of(idx, now);
        let tolerance = self.tolerance.for_interval(value);
        match self.records[idx as usize].phase {
            Phase::Running(h) => {
                let moved = self.wheel.reset(h, deadline, tolerance).is_some();
                debug_assert!(moved, "a running record's wheel handle is live");
                self.records[idx as usize].deadline = deadline;
            }
            _ => {
                self.unlink(idx);
                if let Err(e) = self.start(idx, deadline, tolerance) {
                    // Not reachable (see `start`); the timer would be lost, so say so.
                    self.release(idx);
                    return Err(e);
                }
            }
        }
        let r = &mut self.records[idx as usize];
        r.label = label;
        r.interval = interval;
        r.overruns = 0;
        Ok(old)
    }

    /// Destroys the timer `bits`, running or queued; returns its final value.
    pub(crate) fn cancel(&mut self, now: u64, bits: u64) -> Result<Value, Error> {
        let idx = self.resolve(bits)?;
        let old = self.value_of(idx, now);
        match self.records[idx as usize].phase {
            Phase::Running(h) => {
                let stopped = self.wheel.stop(h);
                debug_assert!(stopped.is_some(), "a running record's wheel handle is live");
                self.running -= 1;
            }
            _ => self.unlink(idx),
        }
        self.release(idx);
        Ok(old)
    }

    /// The value of the timer `bits` at `now`.
    pub(crate) fn get(&self, now: u64, bits: u64) -> Result<Value, Error> {
        let idx = self.resolve(bits)?;
        Ok(self.value_of(idx, now))
    }

    /// Sets the missed-period policy of the timer `bits` (used at its next reap).
    pub(crate) fn set_policy(&mut self, bits: u64, policy: Missed) -> Result<(), Error> {
        let idx = self.resolve(bits)?;
        self.records[idx as usize].policy = policy;
        Ok(())
    }

    /// The overruns counted at the latest reap of the timer `bits`.
    pub(crate) fn overruns(&self, bits: u64) -> Result<u64, Error> {
        let idx = self.resolve(bits)?;
        Ok(self.records[idx as usize].overruns)
    }

    /// Whether the timer `bits` is on the expired queue.
    pub(crate) fn is_queued(&self, bits: u64) -> Result<bool, Error> {
        let idx = self.resolve(bits)?;
        Ok(self.records[idx as usize].phase == Phase::Queued)
    }

    /// Pops the head of the queue. A one-shot timer is destroyed; a periodic one runs again
    /// from the deadline it expired for, as its policy says when periods were missed.
    pub(crate) fn reap(&mut self, now: u64) -> Option<Reaped> {
        let idx = self.head;
        if idx == NIL {
            return None;
        }
        self.unlink(idx);
        self.reaped += 1;
        let r = &mut self.records[idx as usize];
        let (bits, label, deadline, period, policy) =
            (r.bits, r.label, r.deadline, r.interval, r.policy);
        if period == 0 {
            self.release(idx);
            return Some(Reaped {
                handle: super::TimerHandle::from_bits(bits),
                label,
                deadline,
                overruns: 0,
                restarted: false,
            });
        }
        // The project's one missed-period rule (the core's), with the reap as `now`: the
        // periods missed (grid points deadline + k * period at or before now, k >= 1) and the
        // next deadline, `None` past the end of the clock.
        let (next, overruns) = policy.next(deadline, period, now);
        r.overruns = overruns;
        let tolerance = self.tolerance.for_interval(period);
        let restarted = match next.map(|next| (next, self.start(idx, next, tolerance))) {
            Some((next, Ok(()))) => {
                // Burst behind schedule: the next period is already due and goes to the tail
                // of the queue now, so the queue stays up to date with the clock. The reap
                // came after a complete catch-up to `now`, so this moves this timer alone.
                if next <= now {
                    self.expire(now, Budget::UNLIMITED);
                }
                true
            }
            // Its next period lies past the end of the clock: this was its last expiry.
            None | Some((_, Err(_))) => {
                self.release(idx);
                false
            }
        };
        Some(Reaped {
            handle: super::TimerHandle::from_bits(bits),
            label,
            deadline,
            overruns,
            restarted,
        })
    }

    // ----- records -------------------------------------------------------------------------

    /// The index of the live record answering to `bits`.
    fn resolve(&self, bits: u64) -> Result<u32, Error> {
        let idx = self.layout.slot(bits);
        match self.records.get(idx) {
            Some(r) if r.bits == bits && matches!(r.phase, Phase::Running(_) | Phase::Queued) => {
                Ok(idx as u32)
            }
            _ => Err(Error::InvalidHandle),
        }
    }

    fn value_of(&self, idx: u32, now: u64) -> Value {
        let r = &self.records[idx as usize];
        match r.phase {
            Phase::Running(_) => (r.deadline.saturating_sub(now), r.interval),
            _ => (0, r.interval),
        }
    }

    /// A free record: from the free list, or a new one while the slab is below the quota.
    /// Growth the allocator refuses is [`callwheel::Error::NoMemory`], with nothing changed.
    fn alloc(&mut self) -> Result<u32, Error> {
        if self.free != NIL {
            let idx = self.free;
            self.free = self.records[idx as usize].next;
            return Ok(idx);
        }
        if self.records.len() >= self.quota {
            // Every record is live or retired: the retired ones have used up their handles.
            return Err(Error::HandlesExhausted);
        }
        // The slab grows with the owner's input (up to the quota): a refusal is an error, not
        // an abort. The expiry scratch grows with it, so `expire`, which cannot fail, never
        // allocates.
        let no_memory = |_| Error::Wheel(callwheel::Error::NoMemory);
        self.records.try_reserve(1).map_err(no_memory)?;
        let want = self.records.len() + 1;
        if self.scratch.capacity() < want {
            self.scratch
                .try_reserve(want - self.scratch.len())
                .map_err(no_memory)?;
        }
        let idx = self.records.len() as u32;
        self.records.push(Record {
            bits: self.layout.compose(self.key, self.base, idx),
            phase: Phase::Free,
            label: 0,
            deadline: 0,
            interval: 0,
            policy: self.policy,
            overruns: 0,
            prev: NIL,
            next: NIL,
        });
        Ok(idx)
    }

    /// Frees a record that is on no list, giving it its next never-issued handle.
    fn release(&mut self, idx: u32) {
        let layout = self.layout;
        let bits = self.records[idx as usize].bits;
        let (key, generation) = (layout.key(bits), layout.generation(bits));
        let next = if generation < layout.max_generation() {
            Some(layout.compose(key, generation + 1, idx))
        } else if key != self.key {
            // Slots only move to newer keys: this one has never used the set's newest.
            Some(layout.compose(self.key, self.base, idx))
        } else {
            self.key_used_up = true;
            take_key(layout).map(|(k, base)| {
                self.key = k;
                self.base = base;
                self.key_used_up = false;
                layout.compose(k, base, idx)
            })
        };
        let r = &mut self.records[idx as usize];
        match next {
            Some(bits) => {
                r.bits = bits;
                r.phase = Phase::Free;
                r.next = self.free;
                self.free = idx;
            }
            None => r.phase = Phase::Retired,
        }
    }

    /// Destroys every timer, running or queued (the runtime is gone: the set's timers are
    /// cancelled as the runtime's are). Their handles are no longer valid.
    pub(crate) fn clear(&mut self) {
        for idx in 0..self.records.len() as u32 {
            match self.records[idx as usize].phase {
                Phase::Running(h) => {
                    let _ = self.wheel.stop(h);
                    self.running -= 1;
                }
                Phase::Queued => self.unlink(idx),
                Phase::Free | Phase::Retired => continue,
            }
            self.release(idx);
        }
    }

    /// Puts a record on the wheel. The wheel has no capacity limit and covers every u64
    /// deadline, so it does not refuse; its error is passed on all the same.
    fn start(&mut self, idx: u32, deadline: u64, tolerance: u64) -> Result<(), Error> {
        let h = self.wheel.start_with(deadline, tolerance, idx)?;
        let r = &mut self.records[idx as usize];
        r.phase = Phase::Running(h);
        r.deadline = deadline;
        self.running += 1;
        Ok(())
    }

    fn push_back(&mut self, idx: u32) {
        let tail = self.tail;
        {
            let r = &mut self.records[idx as usize];
            r.prev = tail;
            r.next = NIL;
        }
        if tail == NIL {
            self.head = idx;
        } else {
            self.records[tail as usize].next = idx;
        }
        self.tail = idx;
        self.queued += 1;
    }

    /// Takes a queued record off the queue (it is then on no list).
    fn unlink(&mut self, idx: u32) {
        let (prev, next) = {
            let r = &self.records[idx as usize];
            debug_assert_eq!(r.phase, Phase::Queued);
            (r.prev, r.next)
        };
        if prev == NIL {
            self.head = next;
        } else {
            self.records[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.records[next as usize].prev = prev;
        }
        self.queued -= 1;
    }

    /// Verifies every invariant by brute force (see the [module documentation](self)).
    pub(crate) fn check(&self) -> Result<(), &'static str> {
        let count = |p: fn(&Phase) -> bool| self.records.iter().filter(|r| p(&r.phase)).count();
        if count(|p| matches!(p, Phase::Running(_))) != self.running
            || self.wheel.len() != self.running
        {
            return Err("running count");
        }
        if count(|p| *p == Phase::Queued) != self.queued {
            return Err("queued count");
        }
        if self.running + self.queued > self.quota || self.records.len() > self.quota {
            return Err("over quota");
        }
        let (mut n, mut prev, mut at) = (0, NIL, self.head);
        while at != NIL {
            let r = &self.records[at as usize];
            if r.phase != Phase::Queued || r.prev != prev {
                return Err("queue links");
            }
            n += 1;
            if n > self.queued {
                return Err("queue cycle");
            }
            prev = at;
            at = r.next;
        }
        if n != self.queued || self.tail != prev {
            return Err("queue length or tail");
        }
        let (mut n, mut at) = (0, self.free);
        while at != NIL {
            if self.records[at as usize].phase != Phase::Free {
                return Err("free list holds a live record");
            }
            n += 1;
            if n > self.records.len() {
                return Err("free list cycle");
            }
            at = self.records[at as usize].next;
        }
        if n != count(|p| *p == Phase::Free) {
            return Err("free list length");
        }
        for (i, r) in self.records.iter().enumerate() {
            if self.layout.slot(r.bits) != i || r.bits == 0 || r.bits == u64::MAX {
                return Err("record handle");
            }
        }
        Ok(())
    }
}

impl Drop for Table {
    /// Gives the set's newest key back for later sets (unless a slot used it up), with a floor
    /// above every handle issued under it (see the handle module).
    fn drop(&mut self) {
        if self.key_used_up {
            return;
        }
        // Each record holds the newest handle of its slot (issued, or to be issued next).
        let floor = self
            .records
            .iter()
            .filter(|r| self.layout.key(r.bits) == self.key)
            .map(|r| low_bits(r.bits) + 1)
            .fold(self.base << self.layout.slot_bits, u64::max);
        give_back(self.key, floor);
    }
}

/// The deadline of a timer due `value` ns after `now`, checking that it and the first
/// restart of a periodic timer fit in the clock's range.
fn checked_deadline(now: u64, value: u64, interval: u64) -> Result<u64, Error> {
    if value == 0 {
        return Err(Error::ZeroValue);
    }
    let deadline = now.checked_add(value).ok_or(Error::ValueOutOfRange)?;
    deadline
        .checked_add(interval)
        .ok_or(Error::IntervalOutOfRange)?;
    Ok(deadline)
}

#[cfg(test)]
#[path = "table_tests.rs"]
mod tests;
