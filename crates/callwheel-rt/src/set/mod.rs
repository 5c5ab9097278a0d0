//! Timer sets: many labelled user-level timers per owner, with an expired queue to reap
//! (Costello & Varghese, "Multiple user-level timers", Figures 6 and 7: `ITIMER_MULTIREAL`).
//!
//! A [`TimerSet`] owns timers on a [`Runtime`]'s clock. The owner creates timers with a
//! value and a label of its choosing and gets a set-chosen [`TimerHandle`] back; when a timer
//! expires it joins the set's expired queue, and the owner reaps the queue head's handle and
//! label. The owner learns that the queue is non-empty from a file descriptor (epoll, mio), a
//! blocking [`TimerSet::wait`], or a callback.
//!
//! # Semantics
//!
//! A timer's *value* is a [`TimerValue`]: the time remaining until it expires and its interval
//! (zero for a one-shot timer), as in `struct itimerval`. Times are [`Duration`]s, converted to
//! the clock's 64-bit nanoseconds.
//!
//! | operation | result | errors |
//! |---|---|---|
//! | [`create(value, interval, label)`](TimerSet::create) | a new handle; the timer expires `value` from now, then (once reaped) every `interval` | [`ZeroValue`](Error::ZeroValue), [`QuotaExceeded`](Error::QuotaExceeded), [`ValueOutOfRange`](Error::ValueOutOfRange), [`IntervalOutOfRange`](Error::IntervalOutOfRange) |
//! | [`reset(handle, value, interval, label)`](TimerSet::reset) | the former value; the timer leaves the queue if it was on it, and runs with the new value, interval and label | [`InvalidHandle`](Error::InvalidHandle), and as `create` (but no quota) |
//! | [`cancel(handle)`](TimerSet::cancel) | the final value; the timer is destroyed, running or queued | [`InvalidHandle`](Error::InvalidHandle) |
//! | [`get(handle)`](TimerSet::get) | the current value | [`InvalidHandle`](Error::InvalidHandle) |
//! | [`reap()`](TimerSet::reap) | the queue head's handle and label (FIFO), or `None` when the queue is empty (the paper's `EAGAIN`); a one-shot timer is destroyed, a periodic one runs again | none |
//!
//! - A queued timer still exists (Figure 6): `get`, `reset` and `cancel` accept its handle. Its
//!   value reads as zero remaining and its interval: it has expired and does not run while it
//!   waits on the queue.
//! - A periodic timer, once reaped, runs again from the deadline it expired for, not from the
//!   reap (Figure 7). When the reap comes so late that more periods have come due, the
//!   timer's [`Missed`] policy decides (see [`Reaped::overruns`]): with `d` the deadline it
//!   expired for, `p` its interval, `now` the reap time and `k = ⌊(now − d) / p⌋ ≥ 1` the
//!   periods missed:
//!
//!   | policy | next deadline | the `k` missed periods |
//!   |---|---|---|
//!   | [`Missed::Burst`] (default: the paper's rule) | `d + p` (already due: the timer is queued again at once, at the tail) | each is delivered, one per reap |
//!   | [`Missed::Delay`] | `now + p` | dropped, counted in `overruns` |
//!   | [`Missed::Skip`] | `d + (k + 1) p`, the first point of the grid after `now` | dropped, counted in `overruns` |
//!
//! - Every call first brings the queue up to date with the clock: a timer whose deadline has
//!   passed is queued even if the set's runtime timer has not fired yet. Timers that expire
//!   together are queued in deadline order, and equal deadlines in the order they were started
//!   (created, reset or restarted).
//! - A bad handle is rejected with [`Error::InvalidHandle`] and changes nothing: a handle of
//!   another set, of a destroyed timer, or a made-up number. Handles are never reused (see
//!   [`TimerHandle`]).
//! - Dropping the set destroys every timer, running or queued; no callback runs after the drop
//!   returns.
//! - Dropping the set's [`Runtime`] destroys every timer of the set, running or queued, as it
//!   cancels every runtime timer. From then on the set holds nothing: the calls that can fail
//!   ([`create`](TimerSet::create), [`reset`](TimerSet::reset), [`cancel`](TimerSet::cancel),
//!   [`get`](TimerSet::get), [`set_missed`](TimerSet::set_missed),
//!   [`overruns`](TimerSet::overruns), [`is_queued`](TimerSet::is_queued)) return
//!   [`Error::ShutDown`], [`reap`](TimerSet::reap) returns `None`, [`len`](TimerSet::len) and
//!   [`refresh`](TimerSet::refresh) 0, the descriptor is not readable, and
//!   [`wait`](TimerSet::wait) returns `false` at once (a thread already waiting is woken).
//! - A panic in the set's callback ([`TimerSet::set_callback`]) is caught where the callback
//!   runs and its payload dropped (the panic hook has printed its message): the call that ran
//!   it completes as if the callback had returned, and so does the driver.
//!
//! # Design
//!
//! Each set keeps its timers in its own table (a slab of at most `quota` records, its own
//! [`Wheel`](callwheel::Wheel) of running timers, an intrusive FIFO of queued ones)
//! behind one lock, and arms one runtime [`Timer`] ([`Exec::Direct`]) at its wheel's next
//! wake-up: the set's single "OS timer", as the paper's timers sit on one kernel timer facility.
//! When it fires, the set advances its wheel to the clock, queues what expired, re-arms, and
//! notifies if the queue became non-empty. Every operation is O(1) (plus the expiries it
//! finds), and memory is bounded by the quota, however long the owner goes without reaping.
//!
//! # Notification
//!
//! When the queue goes from empty to non-empty the set (in this order, after releasing its
//! lock for the callback) makes its eventfd readable, wakes [`TimerSet::wait`]ers, and runs the
//! callback of [`TimerSet::set_callback`]. The descriptor ([`TimerSet::fd`]) stays readable
//! exactly while the queue is non-empty: reaping (or cancelling, or resetting) the last queued
//! timer makes it unreadable again. Its level is the state, so level-triggered epoll works
//! without reading it; with `EPOLLET`, reap until [`TimerSet::reap`] returns `None`.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use callwheel_rt::{ManualClock, Runtime, TimerSet};
//!
//! let clock = ManualClock::new(0);
//! let rt = Runtime::builder().clock(clock.clone()).shards(1).build()?;
//! let set = TimerSet::new(&rt)?;
//! let poll = set.create(Duration::from_millis(10), Duration::from_millis(10), 7)?;
//! let once = set.create(Duration::from_millis(15), Duration::ZERO, 8)?;
//! clock.advance(20_000_000); // 20 ms
//! assert_eq!(set.reap(), Some((poll, 7))); // expired at 10 ms; runs again for 20 ms
//! assert_eq!(set.reap(), Some((once, 8))); // destroyed
//! assert_eq!(set.reap(), Some((poll, 7))); // its 20 ms expiry
//! assert_eq!(set.reap(), None);
//! assert_eq!(set.get(poll)?.remaining, Duration::from_millis(10));
//! assert!(set.get(once).is_err());
//! # Ok::<(), callwheel_rt::Error>(())
//! ```

#[cfg(all(test, not(callwheel_loom)))]
mod budget_tests;
mod catch_up;
mod firing;
mod handle;
mod table;
mod types;

use std::fmt;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
#[cfg(all(test, not(callwheel_loom)))]
use std::sync::atomic::AtomicU64;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use callwheel::{Budget, Missed};

use crate::config::check_tolerance;
use crate::shutdown::OnShutdown;
use crate::sys::EventFd;
use crate::{Error, Exec, Runtime, Timer};

pub use handle::TimerHandle;
use table::Table;
pub use types::{Reaped, SetStats, TimerSetConfig, TimerValue, DEFAULT_QUOTA, MAX_QUOTA};

type Callback = Arc<dyn Fn() + Send + Sync>;

struct State {
    table: Table,
    /// The wake-up the runtime timer is armed for.
    armed: Option<u64>,
    /// The eventfd is readable (the queue is non-empty).
    signalled: bool,
    callback: Option<Callback>,
    /// The runtime is gone and the table has been emptied (see [`Inner::shut`]).
    dead: bool,
}

struct Inner {
    state: Mutex<State>,
    /// Signalled when the queue becomes non-empty.
    ready: Condvar,
    event: EventFd,
    /// The runtime's expiry budget: timers moved to the queue per hold of the lock.
    budget: Budget,
    /// User calls waiting for the lock (the `catch_up` module).
    waiting: AtomicUsize,
    /// The table's count of expired timers after the latest budget, for a test that counts
    /// how many a caller waited for.
    #[cfg(all(test, not(callwheel_loom)))]
    expired: AtomicU64,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    // Every update of the state is complete before user code runs (the callback runs with no
    // lock held), so a poisoned lock holds a consistent state.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs the set's callback, catching a panic so that the call or driver that found the expiry
/// completes (its result is not lost); the payload is dropped, the panic hook has printed it.
fn notify(f: Callback) {
    if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f())) {
        // The payload is user data too: a panic in its `Drop` is leaked, not propagated.
        if let Err(again) =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(payload)))
        {
            std::mem::forget(again);
        }
    }
}

/// A set of user-level timers with an expired queue (`ITIMER_MULTIREAL`); see the
/// [module documentation](self) for the semantics.
///
/// All methods take `&self` and may be called from any thread; one lock serialises them.
pub struct TimerSet {
    inner: Arc<Inner>,
    /// The set's one runtime timer, armed at its wheel's next wake-up.
    os: Timer,
}

impl fmt::Debug for TimerSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_forked_copy() {
            return f
                .debug_struct("TimerSet")
                .field("forked_copy", &true)
                .finish_non_exhaustive();
        }
        let st = lock(&self.inner.state);
        f.debug_struct("TimerSet")
            .field("running", &st.table.running())
            .field("queued", &st.table.queued())
            .field("quota", &st.table.quota())
            .finish_non_exhaustive()
    }
}

fn to_nanos(d: Duration, err: Error) -> Result<u64, Error> {
    u64::try_from(d.as_nanos()).map_err(|_| err)
}

fn to_value((remaining, interval): table::Value) -> TimerValue {
    TimerValue {
        remaining: Duration::from_nanos(remaining),
        interval: Duration::from_nanos(interval),
    }
}

impl TimerSet {
    /// A set on `rt`'s clock with the default configuration.
    ///
    /// # Errors
    ///
    /// As [`TimerSet::with_config`].
    pub fn new(rt: &Runtime) -> Result<TimerSet, Error> {
        TimerSet::with_config(rt, TimerSetConfig::default())
    }

    /// A set on `rt`'s clock.
    ///
    /// # Errors
    ///
    /// [`Error::Config`], naming the field and its range, for a quota outside `1 ..=
    /// MAX_QUOTA` or a tolerance whose `ppm` is above
    /// [`MAX_TOLERANCE_PPM`](crate::MAX_TOLERANCE_PPM) (checked before anything is made);
    /// [`Error::Io`] when the eventfd cannot be made; [`Error::HandlesExhausted`] when the
    /// process has used up its set keys; [`Error::Wheel`] with
    /// [`callwheel::Error::NoMemory`] when memory is refused.
    pub fn with_config(rt: &Runtime, config: TimerSetConfig) -> Result<TimerSet, Error> {
        if config.quota == 0 || config.quota > MAX_QUOTA {
            return Err(Error::Config {
                reason: "a timer set's quota must be between 1 and MAX_QUOTA (1048576)",
            });
        }
        if let Some(tolerance) = config.tolerance {
            check_tolerance(tolerance)?;
        }
        let tolerance = config.tolerance.unwrap_or(rt.shared.tolerance);
        let table = Table::new(config.quota, tolerance, config.missed, rt.shared.now())?;
        let inner = Arc::new(Inner {
            state: Mutex::new(State {
                table,
                armed: None,
                signalled: false,
                callback: None,
                dead: false,
            }),
            ready: Condvar::new(),
            event: EventFd::new()?,
            budget: rt.shared.budget,
            waiting: AtomicUsize::new(0),
            #[cfg(all(test, not(callwheel_loom)))]
            expired: AtomicU64::new(0),
        });
        // The runtime timer holds the set weakly: the set owns the timer, not the other way
        // round, so dropping the set frees everything.
        let weak: Weak<Inner> = Arc::downgrade(&inner);
        let watcher: Weak<dyn OnShutdown> = weak.clone();
        rt.shared.shutdown.listen(watcher)?;
        let os = rt.timer(Exec::Direct, move |timer, _fire| {
            if let Some(inner) = weak.upgrade() {
                inner.on_fire(timer);
            }
        })?;
        Ok(TimerSet { inner, os })
    }

    /// Runs `f` on the table under the lock, after catching up with the clock; then settles
    /// the runtime timer and the notification, and runs the callback without the lock.
    /// [`Error::ShutDown`], running nothing, once the runtime is gone.
    fn op<R>(&self, f: impl FnOnce(&mut Table, u64) -> R) -> Result<R, Error> {
        if self.is_forked_copy() {
            // Before the lock, which a parent thread may have held at the fork.
            return Err(Error::ShutDown);
        }
        let mut st = self.inner.call_lock();
        if self.inner.is_shut_down(&mut st, &self.os) {
            return Err(Error::ShutDown);
        }
        let now = self.os.shared.now();
        st = self.inner.catch_up(st, now);
        // The lock was let go between budgets: the runtime may have gone meanwhile.
        if self.inner.is_shut_down(&mut st, &self.os) {
            return Err(Error::ShutDown);
        }
        let r = f(&mut st.table, now);
        let callback = self.inner.settle(&mut st, &self.os, false);
        drop(st);
        if let Some(f) = callback {
            notify(f);
        }
        Ok(r)
    }

    /// Creates a timer that expires `value` from now and carries `label`; a non-zero
    /// `interval` makes it periodic (it runs again, `interval` after each expiry, once reaped).
    ///
    /// # Errors
    ///
    /// [`Error::ZeroValue`] for a zero `value`; [`Error::QuotaExceeded`] when the set holds its
    /// quota; [`Error::ValueOutOfRange`] / [`Error::IntervalOutOfRange`] when the deadline or
    /// the first restart would pass the clock's 64-bit nanoseconds;
    /// [`Error::HandlesExhausted`] when no never-used handle is left; [`Error::Wheel`] with
    /// [`callwheel::Error::NoMemory`] when the set's slab cannot grow; [`Error::ShutDown`]
    /// once the runtime is gone.
    pub fn create(
        &self,
        value: Duration,
        interval: Duration,
        label: u64,
    ) -> Result<TimerHandle, Error> {
        let value = to_nanos(value, Error::ValueOutOfRange)?;
        let interval = to_nanos(interval, Error::IntervalOutOfRange)?;
        self.op(|t, now| t.create(now, value, interval, label))
            .and_then(|r| r)
            .map(TimerHandle::from_bits)
    }

    /// Gives the timer `handle` a new value, interval and label (the label may differ from the
    /// old one); a queued timer leaves the queue first. Returns the former value (zero remaining
    /// for a queued timer). The timer keeps its handle.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidHandle`] (nothing is changed), and as [`TimerSet::create`] except the
    /// quota.
    pub fn reset(
        &self,
        handle: TimerHandle,
        value: Duration,
        interval: Duration,
        label: u64,
    ) -> Result<TimerValue, Error> {
        let value = to_nanos(value, Error::ValueOutOfRange)?;
        let interval = to_nanos(interval, Error::IntervalOutOfRange)?;
        self.op(|t, now| t.reset(now, handle.to_bits(), value, interval, label))
            .and_then(|r| r)
            .map(to_value)
    }

    /// Destroys the timer `handle`, running or queued, and returns its final value (zero
    /// remaining for a queued timer).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidHandle`] (nothing is changed); [`Error::ShutDown`] once the runtime is
    /// gone (the timer is gone too).
    pub fn cancel(&self, handle: TimerHandle) -> Result<TimerValue, Error> {
        self.op(|t, now| t.cancel(now, handle.to_bits()))
            .and_then(|r| r)
            .map(to_value)
    }

    /// The current value of the timer `handle` (zero remaining while it is queued).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidHandle`] (nothing is changed); [`Error::ShutDown`] once the runtime is
    /// gone.
    pub fn get(&self, handle: TimerHandle) -> Result<TimerValue, Error> {
        self.op(|t, now| t.get(now, handle.to_bits()))
            .and_then(|r| r)
            .map(to_value)
    }

    /// Pops the head of the expired queue: its handle and label, or `None` when the queue is
    /// empty. A one-shot timer is destroyed; a periodic one runs again from the deadline it
    /// expired for (see the [module documentation](self) for late reaps). Always `None` once
    /// the runtime is gone.
    pub fn reap(&self) -> Option<(TimerHandle, u64)> {
        self.reap_info().map(|r| (r.handle, r.label))
    }

    /// [`TimerSet::reap`] with the expiry's deadline and overrun count.
    pub fn reap_info(&self) -> Option<Reaped> {
        self.op(|t, now| t.reap(now)).ok().flatten()
    }

    /// Sets the missed-period policy of the timer `handle`, used from its next reap on.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidHandle`]; [`Error::ShutDown`] once the runtime is gone.
    pub fn set_missed(&self, handle: TimerHandle, missed: Missed) -> Result<(), Error> {
        self.op(|t, _| t.set_policy(handle.to_bits(), missed))
            .and_then(|r| r)
    }

    /// The overruns counted at the latest reap of the timer `handle` (see
    /// [`Reaped::overruns`]; 0 before its first reap and after a reset).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidHandle`]; [`Error::ShutDown`] once the runtime is gone.
    pub fn overruns(&self, handle: TimerHandle) -> Result<u64, Error> {
        self.op(|t, _| t.overruns(handle.to_bits())).and_then(|r| r)
    }

    /// Whether the timer `handle` waits on the expired queue.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidHandle`]; [`Error::ShutDown`] once the runtime is gone.
    pub fn is_queued(&self, handle: TimerHandle) -> Result<bool, Error> {
        self.op(|t, _| t.is_queued(handle.to_bits()))
            .and_then(|r| r)
    }

    /// Brings the expired queue up to date with the clock (what the set's runtime timer does
    /// when it fires) and returns the queue's length (0 once the runtime is gone).
    pub fn refresh(&self) -> usize {
        self.op(|t, _| t.queued()).unwrap_or(0)
    }

    /// The number of timers, running plus queued (0 once the runtime is gone).
    pub fn len(&self) -> usize {
        self.op(|t, _| t.running() + t.queued()).unwrap_or(0)
    }

    /// Whether the set holds no timer.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The set's counts, up to date with the clock (once the runtime is gone: nothing running
    /// or queued, and the totals as they were; a copy in a child forked since the runtime was
    /// built: all zero).
    pub fn stats(&self) -> SetStats {
        let stats = |t: &mut Table, _| {
            let (expired, reaped) = t.totals();
            SetStats {
                running: t.running(),
                queued: t.queued(),
                expired,
                reaped,
                quota: t.quota(),
            }
        };
        if self.is_forked_copy() {
            return SetStats::default();
        }
        self.op(stats)
            .unwrap_or_else(|_| stats(&mut lock(&self.inner.state).table, 0))
    }

    /// Verifies the set's internal invariants by brute force, in O(quota): the counts, the
    /// queue's and the free list's links, the handles. For tests; `Err` names what is broken.
    pub fn check_invariants(&self) -> Result<(), &'static str> {
        if self.is_forked_copy() {
            return Ok(());
        }
        // Uncounted: it neither catches up nor re-arms (see `catch_up.rs`).
        lock(&self.inner.state).table.check()
    }

    /// Whether this is a copy in a child forked since the set's runtime was built: it holds
    /// nothing there, and its lock may have been held by a parent thread at the fork, so no
    /// call takes it.
    fn is_forked_copy(&self) -> bool {
        self.os.shared.shutdown.forked()
    }

    /// The reading of the clock the set counts in, in nanoseconds since its epoch (the unit
    /// of [`Reaped::deadline`]): the runtime's clock, or its monotonic base on a runtime given
    /// the wall clock (a set's timers are relative and never move with a set of the wall
    /// clock).
    pub fn now_ns(&self) -> u64 {
        self.os.shared.now()
    }

    /// The eventfd that is readable exactly while the expired queue is non-empty (for epoll,
    /// mio or `poll`). Do not read from it or write to it: the set keeps its level.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.inner.event.as_fd()
    }

    /// Blocks until the expired queue is non-empty (`true`) or `timeout` has passed (`false`);
    /// `None` waits without a limit. The timeout is measured in real time, whatever the set's
    /// clock. Another thread may reap the timer between the return and the caller's reap. Once
    /// the runtime has been dropped, the queue can never fill again: it returns `false` at once,
    /// and a thread already waiting is woken to do so.
    pub fn wait(&self, timeout: Option<Duration>) -> bool {
        let until = timeout.map(|t| Instant::now().checked_add(t));
        if self.is_forked_copy() {
            return false;
        }
        let mut st = self.inner.call_lock();
        loop {
            if self.inner.is_shut_down(&mut st, &self.os) {
                return false;
            }
            let now = self.os.shared.now();
            st = self.inner.catch_up(st, now);
            if self.inner.is_shut_down(&mut st, &self.os) {
                return false;
            }
            if let Some(f) = self.inner.settle(&mut st, &self.os, false) {
                drop(st);
                notify(f);
                return true;
            }
            if st.table.queued() > 0 {
                return true;
            }
            st = match until {
                Some(Some(until)) => {
                    let left = until.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return false;
                    }
                    self.inner
                        .ready
                        .wait_timeout(st, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
                // No timeout, or one too far away to represent.
                _ => self.inner.ready.wait(st).unwrap_or_else(|p| p.into_inner()),
            };
        }
    }

    /// Installs `callback`, run each time the expired queue goes from empty to non-empty (not
    /// for a queue already non-empty now). It runs without the set's lock, so it may call the
    /// set (reap, create, ...), on the thread that found the expiry: usually the runtime's
    /// driver (keep it short: it delays the driver's other timers), or a caller whose call
    /// caught up with the clock. Replaces any earlier callback. The set owns the callback: to
    /// reach the set from it, capture a [`Weak`] reference, not an [`Arc`], or the set can never
    /// be dropped.
    pub fn set_callback<F>(&self, callback: F)
    where
        F: Fn() + Send + Sync + 'static,
    {
        if !self.is_forked_copy() {
            lock(&self.inner.state).callback = Some(Arc::new(callback));
        }
    }

    /// Removes the callback. A run already started may still finish.
    pub fn clear_callback(&self) {
        if !self.is_forked_copy() {
            lock(&self.inner.state).callback = None;
        }
    }
}

impl AsFd for TimerSet {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd()
    }
}

impl AsRawFd for TimerSet {
    fn as_raw_fd(&self) -> RawFd {
        self.fd().as_raw_fd()
    }
}

impl Drop for TimerSet {
    /// Cancels the set's runtime timer and waits for a firing in progress on another thread to
    /// finish, so no callback runs after the drop; the timers go with the table. Because it
    /// waits, do not drop a set while holding a lock its callback takes: that deadlocks.
    fn drop(&mut self) {
        if self.is_forked_copy() {
            // No callback of it runs here.
            return;
        }
        let _ = self.os.drain();
        lock(&self.inner.state).callback = None;
    }
}
