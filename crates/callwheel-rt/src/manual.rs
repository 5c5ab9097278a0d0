//! A clock that moves only when told: for deterministic tests and simulations.
//!
//! Time moves by [`ManualClock::advance`] and [`ManualClock::set`] (which, like setting the
//! wall clock, may go backwards and makes every waiter report [`Wake::ClockSet`] — the path the
//! realtime clock's `ECANCELED` takes). With auto-advance on, the clock jumps to the earliest
//! wake-up any driver asked for as soon as every driver is asleep and no deferred callback
//! runs: a discrete-event simulation whose time moves only through the timers.
//!
//! It has clock bases, as the kernel's clocks do: it is one base itself (monotonic unless
//! made with [`ManualClock::on_base`]) and reads the others at fixed distances from its own
//! reading, which [`ManualClock::set_base`] changes as setting the wall clock changes the
//! realtime clock's distance from the monotonic one.
//!
//! The clock always uses `std`'s primitives (never loom's): it is for tests of the runtime,
//! not part of the model-checked shard code.

use std::io;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::clock::{Clock, ClockId, Waiter, Wake};

#[derive(Debug, Default)]
struct Slot {
    /// Its waiter was dropped: it neither waits nor keeps the clock from being idle.
    gone: bool,
    waiting: bool,
    until: Option<u64>,
    woken: bool,
    /// The clock's `sets` this waiter has reported.
    sets_seen: u64,
}

#[derive(Debug, Default)]
struct State {
    now: u64,
    auto: bool,
    /// Deferred callbacks running (see [`Clock::busy`]).
    busy: usize,
    sets: u64,
    jumps: u64,
    /// Times a waiter's thread came back from the condition variable.
    woke: u64,
    slots: Vec<Slot>,
    /// The base this clock's own readings are (`None`: monotonic).
    base: Option<ClockId>,
    /// How far each base reads from this clock's own reading, by `ClockId as usize`.
    offsets: [i128; 3],
}

impl State {
    /// Every waiter is asleep and will stay so until the clock moves: none has been woken,
    /// none has a clock set to report, none has a deadline the clock has reached (a waiter
    /// whose deadline `advance` just passed has not yet run, but is about to), and no
    /// deferred callback runs.
    fn quiescent(&self) -> bool {
        self.busy == 0
            && self.live().all(|w| {
                w.waiting
                    && !w.woken
                    && w.sets_seen == self.sets
                    && w.until.is_none_or(|t| t > self.now)
            })
    }

    /// The slots of waiters not dropped.
    fn live(&self) -> impl Iterator<Item = &Slot> {
        self.slots.iter().filter(|w| !w.gone)
    }

    /// Jumps to the earliest requested wake-up when nothing can happen before it.
    fn auto_advance(&mut self) -> bool {
        if !self.auto || self.busy > 0 || self.live().next().is_none() {
            return false;
        }
        if self.live().any(|s| !s.waiting || s.woken) {
            return false;
        }
        match self.live().filter_map(|s| s.until).min() {
            Some(t) if t > self.now => {
                self.now = t;
                self.jumps += 1;
                true
            }
            _ => false,
        }
    }
}

/// What a manual clock's handles and its waiters share: the simulated time and what they
/// wait on.
#[derive(Debug, Default)]
struct Simulated {
    state: Mutex<State>,
    /// What the waiters sleep on: the clock moved or was set, a wake-up was posted.
    changed: Condvar,
    /// What [`ManualClock::wait_idle`] sleeps on: a waiter went to sleep, or a deferred
    /// callback ended. Apart from `changed`, so that a waiter going to sleep wakes no other
    /// waiter (two idle waiters would otherwise wake each other without end).
    settled: Condvar,
}

impl Simulated {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A simulated clock (see the [module documentation](self)). Clones share one time.
///
/// ```
/// use callwheel_rt::{Clock, ManualClock};
///
/// let clock = ManualClock::new(1_000);
/// clock.advance(500);
/// assert_eq!(clock.now(), 1_500);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ManualClock {
    shared: Arc<Simulated>,
}

impl ManualClock {
    /// A clock reading `start`, with auto-advance off. It is the monotonic base, and reads
    /// the other bases as `start` too until [`ManualClock::set_base`] moves them.
    pub fn new(start: u64) -> ManualClock {
        let c = ManualClock::default();
        c.shared.lock().now = start;
        c
    }

    /// [`ManualClock::new`] as clock base `base` (a simulated wall clock, for a runtime on
    /// the realtime clock).
    pub fn on_base(base: ClockId, start: u64) -> ManualClock {
        let c = ManualClock::new(start);
        c.shared.lock().base = Some(base);
        c
    }

    /// Sets clock base `base` to read `t`, as an administrator sets the wall clock: the
    /// other bases keep their readings, and every waiter reports [`Wake::ClockSet`]. Setting
    /// this clock's own base is [`ManualClock::set`].
    pub fn set_base(&self, base: ClockId, t: u64) {
        let mut s = self.shared.lock();
        if s.base.unwrap_or(ClockId::Monotonic) == base {
            drop(s);
            return self.set(t);
        }
        s.offsets[base as usize] = i128::from(t) - i128::from(s.now);
        s.sets += 1;
        self.shared.changed.notify_all();
    }

    /// Moves time forward by `ns` (saturating at `u64::MAX`). Only a waiter whose deadline the
    /// clock reaches is woken: one asleep with nothing to wait for, or with a later deadline,
    /// stays asleep, so a test that moves time while nothing is registered wakes no thread.
    /// (Moving time cannot make the clock idle, so [`ManualClock::wait_idle`] needs no wake-up
    /// from it either.)
    pub fn advance(&self, ns: u64) {
        let mut s = self.shared.lock();
        s.now = s.now.saturating_add(ns);
        let now = s.now;
        if s.slots
            .iter()
            .any(|w| w.waiting && w.until.is_some_and(|t| t <= now))
        {
            self.shared.changed.notify_all();
        }
    }

    /// Sets the time to `t`, forwards or backwards, as an administrator sets the wall clock:
    /// the other clock bases keep their readings, and every waiter reports
    /// [`Wake::ClockSet`].
    pub fn set(&self, t: u64) {
        let mut s = self.shared.lock();
        let moved = i128::from(t) - i128::from(s.now);
        let own = s.base.unwrap_or(ClockId::Monotonic) as usize;
        for (b, offset) in s.offsets.iter_mut().enumerate() {
            if b != own {
                *offset -= moved;
            }
        }
        s.now = t;
        s.sets += 1;
        self.shared.changed.notify_all();
    }

    /// Turns auto-advance on or off (see the [module documentation](self)). Start the timers
    /// of a test before turning it on: an idle runtime jumps at once.
    pub fn set_auto_advance(&self, on: bool) {
        let mut s = self.shared.lock();
        s.auto = on;
        if s.auto_advance() {
            self.shared.changed.notify_all();
        }
    }

    /// How many times auto-advance has moved the clock.
    pub fn jumps(&self) -> u64 {
        self.shared.lock().jumps
    }

    /// How many times a thread waiting on this clock has woken (to look at the clock, its
    /// deadline or an early wake-up), whether or not its wait then ended: a test can check
    /// that moving time wakes no thread that has nothing to do.
    pub fn thread_wakeups(&self) -> u64 {
        self.shared.lock().woke
    }

    /// Whether every waiter is asleep with no early wake-up pending and no deferred callback
    /// runs: the runtime is quiescent until the clock moves.
    pub fn idle(&self) -> bool {
        self.shared.lock().quiescent()
    }

    /// Blocks until [`ManualClock::idle`] holds (with at least `waiters` waiters created and
    /// not dropped).
    pub fn wait_idle(&self, waiters: usize) {
        let mut s = self.shared.lock();
        while !(s.live().count() >= waiters && s.quiescent()) {
            s = self
                .shared
                .settled
                .wait(s)
                .unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl ManualClock {
    /// A waiter whose deadlines are readings of `base` (`None`: of this clock).
    fn new_waiter(&self, base: Option<ClockId>) -> Box<dyn Waiter> {
        let mut s = self.shared.lock();
        let sets_seen = s.sets;
        s.slots.push(Slot {
            sets_seen,
            ..Slot::default()
        });
        Box::new(ManualWaiter {
            shared: Arc::clone(&self.shared),
            index: s.slots.len() - 1,
            base,
        })
    }
}

impl Clock for ManualClock {
    fn now(&self) -> u64 {
        self.shared.lock().now
    }

    fn waiter(&self) -> io::Result<Box<dyn Waiter>> {
        Ok(self.new_waiter(None))
    }

    fn waiter_on(&self, base: ClockId) -> Option<io::Result<Box<dyn Waiter>>> {
        Some(Ok(self.new_waiter(Some(base))))
    }

    fn simulated(&self) -> bool {
        true
    }

    fn base(&self) -> Option<ClockId> {
        Some(self.shared.lock().base.unwrap_or(ClockId::Monotonic))
    }

    fn base_now(&self, base: ClockId) -> Option<u64> {
        let s = self.shared.lock();
        let reading = i128::from(s.now) + s.offsets[base as usize];
        Some(u64::try_from(reading.max(0)).unwrap_or(u64::MAX))
    }

    fn sets(&self) -> u64 {
        self.shared.lock().sets
    }

    fn busy(&self, started: bool) {
        let mut s = self.shared.lock();
        if started {
            s.busy += 1;
        } else {
            s.busy = s.busy.saturating_sub(1);
            if s.auto_advance() {
                self.shared.changed.notify_all();
            }
        }
        // wait_idle may be waiting for this.
        self.shared.settled.notify_all();
    }
}

#[derive(Debug)]
struct ManualWaiter {
    shared: Arc<Simulated>,
    index: usize,
    /// The clock base its deadlines are readings of (`None`: the clock's own).
    base: Option<ClockId>,
}

impl Waiter for ManualWaiter {
    fn wait(&self, until: Option<u64>) -> io::Result<Wake> {
        let mut s = self.shared.lock();
        // A deadline on another base, as this clock's reading: exact until the next set, which
        // ends the wait (`Wake::ClockSet`) before the two can disagree.
        let until = match self.base {
            Some(b) => until.map(|t| {
                let own = i128::from(t) - s.offsets[b as usize];
                u64::try_from(own.max(0)).unwrap_or(u64::MAX)
            }),
            None => until,
        };
        s.slots[self.index].waiting = true;
        s.slots[self.index].until = until;
        let wake = loop {
            let sets = s.sets;
            let now = s.now;
            let slot = &mut s.slots[self.index];
            if slot.woken {
                slot.woken = false;
                break Wake::Early;
            }
            if slot.sets_seen != sets {
                slot.sets_seen = sets;
                break Wake::ClockSet;
            }
            if until.is_some_and(|t| now >= t) {
                break Wake::Deadline;
            }
            if s.auto_advance() {
                // The other waiters may have reached their deadlines too.
                self.shared.changed.notify_all();
                continue;
            }
            // Tell wait_idle that this waiter is asleep.
            self.shared.settled.notify_all();
            s = self
                .shared
                .changed
                .wait(s)
                .unwrap_or_else(|p| p.into_inner());
            s.woke += 1;
        };
        s.slots[self.index].waiting = false;
        s.slots[self.index].until = None;
        Ok(wake)
    }

    fn wake(&self) {
        let mut s = self.shared.lock();
        s.slots[self.index].woken = true;
        self.shared.changed.notify_all();
    }
}

/// A dropped waiter leaves the clock: one made only to learn that a base can be waited on
/// must not keep the clock from being idle, or auto-advance from moving it.
impl Drop for ManualWaiter {
    fn drop(&mut self) {
        let mut s = self.shared.lock();
        s.slots[self.index] = Slot {
            gone: true,
            ..Slot::default()
        };
        if s.auto_advance() {
            self.shared.changed.notify_all();
        }
        self.shared.settled.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiter_returns_at_its_deadline_when_time_is_advanced() {
        let c = ManualClock::new(0);
        let w = c.waiter().unwrap();
        c.advance(10);
        assert_eq!(w.wait(Some(10)).unwrap(), Wake::Deadline);
        w.wake();
        assert_eq!(w.wait(Some(100)).unwrap(), Wake::Early);
        c.set(5);
        assert_eq!(w.wait(Some(100)).unwrap(), Wake::ClockSet);
        assert_eq!(c.now(), 5);
    }

    #[test]
    fn moving_time_wakes_only_a_waiter_whose_deadline_it_reaches() {
        let c = ManualClock::new(0);
        let idle = c.waiter().unwrap();
        let timed = c.waiter().unwrap();
        let (c1, c2) = (c.clone(), c.clone());
        let idle = std::thread::spawn(move || {
            let w = idle.wait(None).unwrap();
            (w, c1.now())
        });
        let timed = std::thread::spawn(move || {
            let w = timed.wait(Some(1_000)).unwrap();
            (w, c2.now())
        });
        c.wait_idle(2);
        let woke = c.thread_wakeups();
        // Two idle waiters leave each other asleep (they once woke each other without end).
        std::thread::yield_now();
        for _ in 0..10 {
            c.advance(50); // to 500: before the timed waiter's deadline
        }
        c.wait_idle(2);
        assert_eq!(c.thread_wakeups(), woke, "a thread woke with nothing to do");
        c.advance(500);
        assert_eq!(timed.join().unwrap(), (Wake::Deadline, 1_000));
        c.set(1_000); // a clock set is reported to every waiter, the idle one included
        assert_eq!(idle.join().unwrap().0, Wake::ClockSet);
    }

    #[test]
    fn auto_advance_jumps_to_the_earliest_wakeup() {
        let c = ManualClock::new(0);
        c.set_auto_advance(true);
        let w = c.waiter().unwrap();
        assert_eq!(w.wait(Some(70)).unwrap(), Wake::Deadline);
        assert_eq!(c.now(), 70);
        assert_eq!(c.jumps(), 1);
    }

    // A waiter made and dropped (as a runtime does to learn that a base can be waited on)
    // neither keeps the clock from being idle nor counts as created.
    #[test]
    fn a_dropped_waiter_leaves_the_clock() {
        let c = ManualClock::new(0);
        drop(c.waiter_on(ClockId::Monotonic).unwrap().unwrap());
        assert!(c.idle());
        c.set_auto_advance(true);
        let w = c.waiter().unwrap();
        assert_eq!(w.wait(Some(70)).unwrap(), Wake::Deadline);
        assert_eq!((c.now(), c.jumps()), (70, 1));
    }
}
