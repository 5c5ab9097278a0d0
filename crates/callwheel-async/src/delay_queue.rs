//! [`DelayQueue`]: values that come back after their delay, in deadline order — tokio-util's
//! `DelayQueue` on the production wheel. The queue keeps its own wheel (in the driver's clock
//! nanoseconds) and one [`Sleep`] for its next wake-up, so the driver holds one registration
//! per queue, not one per value.

use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use callwheel::{Error, Handle, Timers, Wheel};

use crate::driver::{Driver, Link};
use crate::sleep::{nanos, Sleep};

/// Names one value in a [`DelayQueue`]: what `insert` returns and `remove`/`reset` take. A
/// key whose value came back or was removed goes stale (its slot's generation moves on), and
/// another queue's key names nothing here: either gets `None`/`false`, never another value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key(Handle);

/// A key is the wheel's handle: the conversions let a caller keep keys in a table of handles.
impl From<Key> for Handle {
    fn from(key: Key) -> Handle {
        key.0
    }
}

/// The key a handle from [`Key`]'s conversion names (any other handle names no value).
impl From<Handle> for Key {
    fn from(handle: Handle) -> Key {
        Key(handle)
    }
}

/// A value whose delay ran out, as [`DelayQueue::poll_expired`] returns it.
#[derive(Debug)]
pub struct Expired<T> {
    value: T,
    key: Key,
    deadline: Instant,
}

impl<T> Expired<T> {
    /// The value.
    pub fn get_ref(&self) -> &T {
        &self.value
    }

    /// The value, to change.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.value
    }

    /// The value, taken out.
    pub fn into_inner(self) -> T {
        self.value
    }

    /// The key it was inserted under (now stale).
    pub fn key(&self) -> Key {
        self.key
    }

    /// The deadline it was due at.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }
}

/// A queue of values, each returned once its delay has passed, in deadline order:
/// tokio-util's `DelayQueue` on the production wheel. The queue keeps its own wheel and one
/// [`Sleep`] for its next wake-up, so its driver holds one registration per queue, not one per
/// value. Insertion, removal and reset are O(1).
#[derive(Debug)]
pub struct DelayQueue<T> {
    wheel: Wheel<T>,
    /// The queue's next wake-up, on its driver.
    sleep: Sleep,
    /// The task waiting in `poll_expired`, woken when an insert or reset makes a value due
    /// before the wake-up it sleeps for.
    waiter: Option<Waker>,
    tolerance: u64,
    /// Where time counts from when no driver could be started.
    base: Instant,
    /// The driver's clock reading and the `Instant` taken with it, at the latest expiry
    /// handed out: expiries at the same reading convert their deadlines from the same pair,
    /// so a burst of them reads the system clock once, not once each.
    anchor: Option<(u64, Instant)>,
}

impl<T> Default for DelayQueue<T> {
    fn default() -> Self {
        DelayQueue::new()
    }
}

impl<T> DelayQueue<T> {
    /// An empty queue on the process-wide driver.
    pub fn new() -> DelayQueue<T> {
        DelayQueue::on(crate::sleep::made_on())
    }

    fn on(driver: Option<Link>) -> DelayQueue<T> {
        DelayQueue {
            wheel: Wheel::new(),
            sleep: Sleep::at(driver, Instant::now()),
            waiter: None,
            tolerance: 0,
            base: Instant::now(),
            anchor: None,
        }
    }

    /// An empty queue on the process-wide driver with room for `capacity` values before it
    /// allocates (tokio-util's `with_capacity`; memory refused here aborts, as `Vec` does).
    pub fn with_capacity(capacity: usize) -> DelayQueue<T> {
        let mut queue = DelayQueue::new();
        queue.reserve(capacity);
        queue
    }

    /// How many values the queue holds without allocating.
    pub fn capacity(&self) -> usize {
        self.wheel.capacity()
    }

    /// Makes room for `additional` more values than the queue holds. Aborts when memory runs
    /// out or the count passes what a queue indexes (2^32 − 707 values), as `Vec::reserve`
    /// panics on overflow; [`DelayQueue::try_reserve`] returns the error instead.
    pub fn reserve(&mut self, additional: usize) {
        if self.try_reserve(additional).is_err() {
            std::alloc::handle_alloc_error(std::alloc::Layout::new::<T>());
        }
    }

    /// [`DelayQueue::reserve`], returning [`Error::Full`] or [`Error::NoMemory`] (nothing
    /// changed) instead of aborting.
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), Error> {
        self.wheel.reserve(additional)
    }

    /// Gives back the room the queue never used. The slots of values that came back or were
    /// removed stay, free for the next inserts (each keeps the generation that keeps a stale
    /// key from naming a later value).
    pub fn shrink_to_fit(&mut self) {
        self.wheel.shrink_to_fit();
    }

    /// tokio-util's `compact`, which moves values to fill the slots of removed ones: here
    /// [`DelayQueue::shrink_to_fit`], as a value never moves (its key is its slot and that
    /// slot's generation, checked on every use); the memory a queue holds is bounded by its
    /// largest number of values at once.
    pub fn compact(&mut self) {
        self.shrink_to_fit();
    }

    /// The key of the value [`DelayQueue::poll_expired`] returns next (the one due soonest),
    /// without taking it or waiting for it; `None` when the queue is empty.
    pub fn peek(&self) -> Option<Key> {
        self.wheel.peek().map(Key)
    }

    /// Values may come back up to `tolerance` after their deadline (never before), so that
    /// values with overlapping windows share one wake-up.
    pub fn with_tolerance(mut self, tolerance: Duration) -> DelayQueue<T> {
        self.tolerance = nanos(tolerance);
        self
    }

    fn now(&self) -> u64 {
        // No driver: count in nanoseconds since the queue was made.
        self.sleep
            .driver_now()
            .unwrap_or_else(|| nanos(self.base.elapsed()))
    }

    /// Inserts `value`, due `timeout` from now. Aborts, as `Vec::push` does, when memory runs
    /// out ([`DelayQueue::try_insert`] returns the error instead).
    pub fn insert(&mut self, value: T, timeout: Duration) -> Key {
        let deadline = self.now().saturating_add(nanos(timeout));
        self.insert_ns(value, deadline)
    }

    /// Inserts `value`, due at `when` (at once if it has passed).
    pub fn insert_at(&mut self, value: T, when: Instant) -> Key {
        let deadline = self.deadline_of(when);
        self.insert_ns(value, deadline)
    }

    /// [`DelayQueue::insert`], returning [`Error::NoMemory`] (nothing changed) when the queue
    /// cannot grow.
    pub fn try_insert(&mut self, value: T, timeout: Duration) -> Result<Key, Error> {
        let deadline = self.now().saturating_add(nanos(timeout));
        self.try_insert_ns(value, deadline)
    }

    fn deadline_of(&self, when: Instant) -> u64 {
        let now = Instant::now();
        let ns = self.now();
        match when.checked_duration_since(now) {
            Some(ahead) => ns.saturating_add(nanos(ahead)),
            None => ns.saturating_sub(nanos(now - when)),
        }
    }

    fn insert_ns(&mut self, value: T, deadline: u64) -> Key {
        match self.try_insert_ns(value, deadline) {
            Ok(key) => key,
            Err(_) => std::alloc::handle_alloc_error(std::alloc::Layout::new::<T>()),
        }
    }

    fn try_insert_ns(&mut self, value: T, deadline: u64) -> Result<Key, Error> {
        let handle = self.wheel.start_with(deadline, self.tolerance, value)?;
        self.wake_if_sooner(deadline);
        Ok(Key(handle))
    }

    /// A value now due before the wake-up the waiting task sleeps for: wake it to re-plan.
    fn wake_if_sooner(&mut self, deadline: u64) {
        if deadline.saturating_add(self.tolerance) < self.sleep.deadline_ns()
            || self.sleep.is_elapsed()
        {
            if let Some(w) = self.waiter.take() {
                w.wake();
            }
        }
    }

    /// Removes the value `key` names and returns it; `None` for a stale or foreign key
    /// (tokio-util's `remove` panics there and returns an `Expired`: see
    /// [`DelayQueue::try_remove`]).
    pub fn remove(&mut self, key: &Key) -> Option<T> {
        self.wheel.stop(key.0)
    }

    /// Removes the value `key` names and returns it with its key and deadline, as
    /// tokio-util's `try_remove`; `None` for a stale or foreign key.
    pub fn try_remove(&mut self, key: &Key) -> Option<Expired<T>> {
        let deadline = self.deadline(key)?;
        let value = self.wheel.stop(key.0)?;
        Some(Expired {
            value,
            key: *key,
            deadline,
        })
    }

    /// Moves the value `key` names to `timeout` from now; `false` for a stale or foreign key.
    pub fn reset(&mut self, key: &Key, timeout: Duration) -> bool {
        let deadline = self.now().saturating_add(nanos(timeout));
        self.reset_ns(key, deadline)
    }

    /// Moves the value `key` names to `when`; `false` for a stale or foreign key.
    pub fn reset_at(&mut self, key: &Key, when: Instant) -> bool {
        let deadline = self.deadline_of(when);
        self.reset_ns(key, deadline)
    }

    fn reset_ns(&mut self, key: &Key, deadline: u64) -> bool {
        if self.wheel.reset(key.0, deadline, self.tolerance).is_none() {
            return false;
        }
        self.wake_if_sooner(deadline);
        true
    }

    /// The deadline of the value `key` names.
    pub fn deadline(&self, key: &Key) -> Option<Instant> {
        let ns = self.wheel.deadline(key.0)?;
        Some(self.instant_of(ns))
    }

    fn instant_of(&self, ns: u64) -> Instant {
        Self::convert(ns, self.now(), Instant::now())
    }

    /// [`DelayQueue::instant_of`] for an expiry handed out at clock reading `now`, through the
    /// anchor (refreshed when the reading has moved).
    fn expiry_instant(&mut self, ns: u64, now: u64) -> Instant {
        let base = match self.anchor {
            Some((at, base)) if at == now => base,
            _ => {
                let base = Instant::now();
                self.anchor = Some((now, base));
                base
            }
        };
        Self::convert(ns, now, base)
    }

    /// `ns` on the driver's clock as an `Instant`, by its distance from `now`, read with `base`.
    fn convert(ns: u64, now: u64, base: Instant) -> Instant {
        if ns >= now {
            base.checked_add(Duration::from_nanos(ns - now))
                .unwrap_or(base)
        } else {
            base.checked_sub(Duration::from_nanos(now - ns))
                .unwrap_or(base)
        }
    }

    /// Values in the queue.
    pub fn len(&self) -> usize {
        self.wheel.len()
    }

    /// Whether the queue is empty.
    pub fn is_empty(&self) -> bool {
        self.wheel.is_empty()
    }

    /// Drops every value (their keys go stale).
    pub fn clear(&mut self) {
        self.wheel.clear();
    }

    /// Bytes the queue's wheel holds.
    pub fn memory_bytes(&self) -> usize {
        self.wheel.memory_bytes()
    }

    /// A value the wheel returned, as the queue hands it out at `now`.
    fn handed_out(&mut self, e: callwheel::Expired<T>, now: u64) -> Expired<T> {
        Expired {
            deadline: self.expiry_instant(e.deadline, now),
            key: Key(e.handle),
            value: e.value,
        }
    }

    /// The next value whose delay has passed (deadline order, insertion order among equal
    /// deadlines; with a tolerance, the order of the instants within their windows at which
    /// the wheel returns them, [`callwheel::firing_instant`]): `Ready(Some(expired))`; `Ready(None)` when the queue is empty (poll again
    /// after an insert); `Pending` until the next one is due, with the task woken then (or
    /// when an insert or reset makes one due sooner). On a [`Driver`] that was shut down (its
    /// last handle dropped), where a sleep completes at once, every value is returned at once,
    /// in the same order.
    pub fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<Option<Expired<T>>> {
        loop {
            let now = self.now();
            if let Some(e) = self.wheel.poll_expired(now) {
                return Poll::Ready(Some(self.handed_out(e, now)));
            }
            let Some(next) = self.wheel.next_wakeup() else {
                self.waiter = None;
                return Poll::Ready(None);
            };
            // The common case, a task polling again before anything changed: the sleep is
            // registered for this very wake-up, with a waker of this task, and its time has
            // not come (had the driver fired it since `now` was read, the task has been woken
            // and polls again). Nothing to do, and no lock to take — unless the driver went
            // away meanwhile (shut down, or a copy in a child forked since), which fires
            // nothing more.
            if next == self.sleep.deadline_ns()
                && now < next
                && self.sleep.is_registered()
                && self
                    .waiter
                    .as_ref()
                    .is_some_and(|w| w.will_wake(cx.waker()))
                && !self.sleep.driver_gone()
            {
                return Poll::Pending;
            }
            if next != self.sleep.deadline_ns() || now >= self.sleep.deadline_ns() {
                self.sleep.reset_ns(next);
            }
            match self.sleep.poll_sleep(cx) {
                // The driver is gone and the sleep completed at once: so does the next value.
                Poll::Ready(()) if now < next && self.sleep.driver_gone() => {
                    let Some(e) = self.wheel.poll_expired(next) else {
                        // `next_wakeup` may come before any value after removals and resets:
                        // the wheel, moved there, is looked at again at once rather than
                        // waiting for a driver that is gone.
                        cx.waker().wake_by_ref();
                        return Poll::Pending;
                    };
                    return Poll::Ready(Some(self.handed_out(e, now)));
                }
                Poll::Ready(()) => continue,
                Poll::Pending => {
                    match &mut self.waiter {
                        Some(w) => w.clone_from(cx.waker()),
                        None => self.waiter = Some(cx.waker().clone()),
                    }
                    return Poll::Pending;
                }
            }
        }
    }
}

impl Driver {
    /// An empty [`DelayQueue`] on this driver (its delays count on the driver's clock).
    pub fn delay_queue<T>(&self) -> DelayQueue<T> {
        DelayQueue::on(Some(self.link()))
    }
}

/// A queue never pins its values: they move in and out by value and are reached through
/// `&mut self` only, so the queue itself may move whatever `T` is (a `Stream` of values that
/// are not `Unpin`, as tokio-util's queue is).
impl<T> Unpin for DelayQueue<T> {}

impl<T> futures_core::Stream for DelayQueue<T> {
    type Item = Expired<T>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Expired<T>>> {
        self.get_mut().poll_expired(cx)
    }
}
