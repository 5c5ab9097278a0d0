//! A condition variable whose timed waits are runtime timers with a precision window
//! (calloutng's `cv_timedwait_sbt`): a timed-out waiter wakes at one of the runtime's
//! coalesced wake-ups instead of on a kernel timer of its own.
//!
//! Waiters queue in arrival order; a notification wakes the first one still waiting. Each
//! waiter is a [`Sleeper`], which a notification and its alarm race to wake once: a timed-out
//! waiter never swallows a `notify_one` meant for a waiter still blocked. The queue is the
//! condition variable's own, so no user lock is ever taken by the runtime's driver: a waiter
//! joins the queue while it still holds its mutex, and a notifier changes the condition under
//! that mutex before notifying, so a notification cannot fall between the check and the
//! block (the lost wake-up).

use std::collections::VecDeque;
use std::mem::size_of_val;
use std::sync::{Arc, MutexGuard, TryLockError};

use crate::sleep::WaitLimit;
use crate::sleeper::{Sleeper, Woken};
use crate::sync::{self, Mutex};
use crate::{Error, Runtime};

/// A condition variable for `std::sync::Mutex`, with timeouts on a [`Runtime`].
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use std::time::Duration;
/// use callwheel_rt::{Condvar, Runtime, Tolerance, Woken};
///
/// let rt = Runtime::builder().shards(1).build()?;
/// let pair = Arc::new((Mutex::new(false), Condvar::new()));
/// let other = Arc::clone(&pair);
/// std::thread::spawn(move || {
///     let (ready, cv) = &*other;
///     *ready.lock().unwrap() = true;
///     cv.notify_one();
/// });
/// let (ready, cv) = &*pair;
/// let mut guard = ready.lock().unwrap();
/// while !*guard {
///     let (g, woken) =
///         cv.wait_timeout(&rt, ready, guard, Duration::from_secs(10), Tolerance::percent(5));
///     guard = g;
///     assert_eq!(woken?, Woken::Notified);
/// }
/// # Ok::<(), callwheel_rt::Error>(())
/// ```
#[derive(Debug)]
pub struct Condvar {
    waiters: Mutex<VecDeque<Arc<Sleeper>>>,
}

impl Default for Condvar {
    fn default() -> Condvar {
        Condvar::new()
    }
}

impl Condvar {
    /// A condition variable with no waiters.
    pub fn new() -> Condvar {
        Condvar {
            waiters: Mutex::new(VecDeque::new()),
        }
    }

    /// Wakes the longest-waiting thread still blocked; whether there was one.
    pub fn notify_one(&self) -> bool {
        let mut waiters = sync::lock(&self.waiters);
        // A waiter whose alarm won, or that gave up its place, is leaving on its own: the
        // notification goes on.
        while let Some(w) = waiters.pop_front() {
            if w.wake(Woken::Notified) {
                return true;
            }
        }
        false
    }

    /// Wakes every thread blocked now; how many there were.
    pub fn notify_all(&self) -> usize {
        let waiters = std::mem::take(&mut *sync::lock(&self.waiters));
        waiters.iter().filter(|w| w.wake(Woken::Notified)).count()
    }

    /// How many threads are blocked now.
    pub fn waiters(&self) -> usize {
        sync::lock(&self.waiters).len()
    }

    /// Releases the lock `guard` holds on `mutex`, blocks until notified, and takes the lock
    /// again. As with any condition variable, check the condition in a loop: another thread
    /// may change it between the notification and the return.
    ///
    /// The guard comes back in every case; the result is [`Error::WrongMutex`] (nothing done,
    /// the lock never released) when `guard` does not lock `mutex`, or [`Error::Wheel`] when
    /// memory for the queue is refused.
    pub fn wait<'a, T>(
        &self,
        mutex: &'a std::sync::Mutex<T>,
        guard: MutexGuard<'a, T>,
    ) -> (MutexGuard<'a, T>, Result<(), Error>) {
        let (guard, woken) = self.wait_std(mutex, guard, None);
        (guard, woken.map(|_| ()))
    }

    /// [`Condvar::wait`] that also gives up after `timeout`, woken then by a timer of `rt`
    /// with the window `[now + timeout, now + timeout + precision.for_interval(timeout)]`.
    /// The result says which came first.
    ///
    /// The guard comes back in every case; the result is an error, with the lock never
    /// released, for a `guard` that does not lock `mutex` ([`Error::WrongMutex`]), a call on a
    /// driver thread of `rt` ([`Error::OnDriver`]), a runtime shut down, or refused memory.
    pub fn wait_timeout<'a, T>(
        &self,
        rt: &Runtime,
        mutex: &'a std::sync::Mutex<T>,
        guard: MutexGuard<'a, T>,
        timeout: std::time::Duration,
        precision: crate::Tolerance,
    ) -> (MutexGuard<'a, T>, Result<Woken, Error>) {
        self.wait_std(
            mutex,
            guard,
            Some((rt, WaitLimit::After(timeout, precision))),
        )
    }

    /// [`Condvar::wait_timeout`] with an absolute deadline and a window `precision` wide.
    pub fn wait_until<'a, T>(
        &self,
        rt: &Runtime,
        mutex: &'a std::sync::Mutex<T>,
        guard: MutexGuard<'a, T>,
        deadline: impl Into<crate::Deadline>,
        precision: std::time::Duration,
    ) -> (MutexGuard<'a, T>, Result<Woken, Error>) {
        self.wait_std(
            mutex,
            guard,
            Some((rt, WaitLimit::At(deadline.into(), precision))),
        )
    }

    /// The wait for any lock: arms the alarm when there is a timeout, queues the calling
    /// thread, then hands `guard` to `release` (which must unlock the caller's lock) and blocks.
    /// The caller takes its lock again after the return. On an error nothing is queued or left
    /// armed and `release` was not called: the guard comes back, still held.
    ///
    /// This is how a lock other than `std::sync::Mutex` (a `pthread_mutex_t` from C, say)
    /// waits: the condition must be changed under that lock before a notification.
    ///
    /// # Errors
    ///
    /// [`Error::OnDriver`], [`Error::ShutDown`], [`Error::NoClockBase`], and [`Error::Wheel`]
    /// when memory is refused.
    pub fn wait_releasing<G>(
        &self,
        guard: G,
        release: impl FnOnce(G),
        timeout: Option<(&Runtime, WaitLimit)>,
    ) -> Result<Woken, (G, Error)> {
        let me = Arc::new(Sleeper::current());
        // Armed before the thread joins the queue: every failure comes before a notifier can
        // pick this waiter, so none is spent on a wait that then fails. An alarm that fires at
        // once only marks the sleeper timed out, which the park below reads.
        let alarm = match timeout {
            Some((rt, timeout)) => match rt.alarm(&me, timeout) {
                Ok(timer) => Some(timer),
                Err(e) => return Err((guard, e)),
            },
            None => None,
        };
        {
            let mut waiters = sync::lock(&self.waiters);
            if waiters.try_reserve(1).is_err() {
                return Err((guard, Error::Wheel(callwheel::Error::NoMemory)));
            }
            waiters.push_back(Arc::clone(&me));
        }
        let mut leave = Leave {
            cv: self,
            me: &me,
            returned: false,
        };
        release(guard);
        let woken = me.park();
        leave.returned = true;
        drop(leave);
        // Cancels the alarm when the notification came first.
        drop(alarm);
        Ok(woken)
    }

    /// [`Condvar::wait_releasing`] for a `std::sync::Mutex`, its guard checked first.
    fn wait_std<'a, T>(
        &self,
        mutex: &'a std::sync::Mutex<T>,
        guard: MutexGuard<'a, T>,
        timeout: Option<(&Runtime, WaitLimit)>,
    ) -> (MutexGuard<'a, T>, Result<Woken, Error>) {
        if !locks(mutex, &guard) {
            return (guard, Err(Error::WrongMutex));
        }
        match self.wait_releasing(guard, drop, timeout) {
            Ok(woken) => (relock(mutex), Ok(woken)),
            Err((guard, e)) => (guard, Err(e)),
        }
    }
}

/// A waiter's way out of the queue, taken on every exit once it is queued. A notified waiter
/// was taken out by its notifier; a timed-out one takes itself out. One that leaves without
/// returning a result (`release` panicked) gives up its place under the queue's lock, and a
/// notification that picked it meanwhile goes on to the next waiter: a notification is never
/// spent on a thread that no longer waits.
struct Leave<'a> {
    cv: &'a Condvar,
    me: &'a Arc<Sleeper>,
    /// The wait returns what woke it (the notification, if one did, is consumed).
    returned: bool,
}

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        // The common way out: its notifier already took it out of the queue.
        if self.returned && self.me.woken() == Some(Woken::Notified) {
            return;
        }
        let mut waiters = sync::lock(&self.cv.waiters);
        let woken = if self.returned {
            self.me.woken()
        } else {
            self.me.abandon()
        };
        match woken {
            Some(Woken::Notified) => {
                while let Some(w) = waiters.pop_front() {
                    if w.wake(Woken::Notified) {
                        break;
                    }
                }
            }
            _ => waiters.retain(|w| !Arc::ptr_eq(w, self.me)),
        }
    }
}

/// Whether `guard` holds the lock of `mutex`: its value lies inside the mutex, and the mutex
/// is locked. A `Mutex<T>` cannot contain another `Mutex<T>` (the type would be infinite), so
/// for a value of non-zero size the first test is exact; a zero-sized value may sit at the end
/// of its mutex, where the next object begins, so the second test catches an unlocked mutex.
fn locks<T>(mutex: &std::sync::Mutex<T>, guard: &MutexGuard<'_, T>) -> bool {
    let start = core::ptr::from_ref(mutex) as usize;
    let end = start + size_of_val(mutex);
    let value = core::ptr::from_ref::<T>(guard) as usize;
    let inside = value >= start && value + size_of_val::<T>(guard) <= end;
    inside && matches!(mutex.try_lock(), Err(TryLockError::WouldBlock))
}

/// Takes the lock again after a wait, taking over a poisoned one: the guard the caller handed
/// in was not poisoned, and a panic of another thread while this one waited is the caller's
/// to notice through the mutex itself ([`std::sync::Mutex::is_poisoned`]).
fn relock<T>(mutex: &std::sync::Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(all(test, not(callwheel_loom)))]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_notification_skips_a_waiter_whose_alarm_won() {
        let cv = Condvar::new();
        // A waiter whose alarm fired and who has not yet left the queue.
        let gone = Arc::new(Sleeper::current());
        assert!(gone.wake(Woken::TimedOut));
        let waiting = Arc::new(Sleeper::current());
        sync::lock(&cv.waiters).extend([Arc::clone(&gone), Arc::clone(&waiting)]);
        assert!(cv.notify_one());
        assert_eq!(
            waiting.woken(),
            Some(Woken::Notified),
            "the notification went on"
        );
        assert_eq!(gone.woken(), Some(Woken::TimedOut));
        assert_eq!(cv.waiters(), 0);
        assert!(!cv.notify_one());
    }

    #[test]
    fn a_waiter_that_leaves_without_returning_passes_its_notification_on() {
        let cv = Condvar::new();
        let leaving = Arc::new(Sleeper::current());
        let next = Arc::new(Sleeper::current());
        sync::lock(&cv.waiters).extend([Arc::clone(&leaving), Arc::clone(&next)]);
        // A notification picks the first waiter, which then leaves on a panic of its lock's
        // release, before it could return the notification to its caller.
        assert!(cv.notify_one());
        drop(Leave {
            cv: &cv,
            me: &leaving,
            returned: false,
        });
        assert_eq!(next.woken(), Some(Woken::Notified), "passed on");
        assert_eq!(cv.waiters(), 0);
        // A waiter that leaves unwoken gives up its place: nothing can wake it afterwards.
        let quiet = Arc::new(Sleeper::current());
        sync::lock(&cv.waiters).push_back(Arc::clone(&quiet));
        drop(Leave {
            cv: &cv,
            me: &quiet,
            returned: false,
        });
        assert_eq!(cv.waiters(), 0);
        assert!(!quiet.wake(Woken::Notified));
        assert_eq!(quiet.woken(), None);
    }

    #[test]
    #[cfg_attr(miri, ignore)] // a runtime's driver thread
    fn a_waiter_that_leaves_on_an_error_leaves_the_queue_and_keeps_its_guard() {
        let cv = Condvar::new();
        // A clock without bases: a deadline on the wall clock is refused once queued.
        let rt = Runtime::builder()
            .clock(crate::test_clock::Fixed(10))
            .shards(1)
            .build()
            .unwrap();
        let refused = cv.wait_releasing(
            7u32,
            |_| unreachable!("nothing is released on an error"),
            Some((
                &rt,
                WaitLimit::At(
                    crate::Deadline::on(crate::ClockId::Realtime, 5),
                    Duration::ZERO,
                ),
            )),
        );
        assert!(matches!(
            refused,
            Err((7, Error::NoClockBase(crate::ClockId::Realtime)))
        ));
        assert_eq!(cv.waiters(), 0);
    }
}
