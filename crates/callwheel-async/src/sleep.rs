//! [`Sleep`]: a future that completes once its deadline has passed, no earlier, and within
//! its tolerance after it.
//!
//! A sleep registers with its driver at its first pending poll, not before: one that is
//! polled only after its deadline (a timeout whose future finished first, a deadline already
//! past) never takes a shard's lock. Dropping a registered sleep cancels its timer (O(1)).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::driver::{
    monotonic_deadline_after, monotonic_now, monotonic_ns, Driver, Entry, Inner, Link, Refused,
};

pub(crate) use callwheel_rt::saturating_ns as nanos;

/// `Instant::now() + d`, saturating far in the future (`Duration::MAX` never ends).
fn instant_after(d: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(d)
        .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 86_400))
}

/// Where a sleep stands with its driver.
#[derive(Debug)]
enum Registration {
    /// Not registered (not yet polled pending, or reset since it fired).
    Idle,
    /// Registered: its waker is in the wheel.
    Armed(Entry),
    /// It completed.
    Done,
}

/// A future that completes at its deadline: see [`sleep`] and [`sleep_until`].
///
/// `Unpin`: it can be polled through `&mut` and moved between tasks and threads freely (a
/// move takes effect at the next poll, whose waker replaces the registered one).
#[derive(Debug)]
#[must_use = "a sleep does nothing unless polled"]
pub struct Sleep {
    /// `None` before a sleep that follows its context is registered (its times are then
    /// `CLOCK_MONOTONIC` readings, which every driver it may go to reads), or when no driver
    /// could be started: the sleep then polls itself until its deadline (a degraded mode that
    /// never loses the wake-up).
    driver: Option<Link>,
    /// The deadline as the caller gave it (or as `now + duration`).
    deadline: Instant,
    /// The deadline in the driver's clock nanoseconds.
    deadline_ns: u64,
    /// The tolerance asked for, or `None` for the driver's default.
    tolerance: Option<Duration>,
    registration: Registration,
    /// Made by the free functions, for whichever driver serves the context it is registered
    /// in: the executor's own (a tokio runtime's, with the `tokio` feature) or the
    /// process-wide one, chosen at registration. Made on a [`Driver`] of the caller's, it
    /// stays there.
    follows_context: bool,
}

/// A future that completes `duration` from now, on the process-wide driver (see
/// [`Driver::global`]). `Duration::MAX` never completes.
///
/// ```
/// # futures::executor::block_on(async {
/// use std::time::{Duration, Instant};
/// let start = Instant::now();
/// callwheel_async::sleep(Duration::from_millis(2)).await;
/// assert!(start.elapsed() >= Duration::from_millis(2));
/// # });
/// ```
pub fn sleep(duration: Duration) -> Sleep {
    Sleep::after(made_on(), duration)
}

/// The driver a timer made by a free function is bound to at once: a paused runtime's (its
/// deadline counts on the paused clock), with the feature `test-util`; otherwise none, and the
/// timer follows the context it is first polled in.
#[inline]
pub(crate) fn made_on() -> Option<Link> {
    #[cfg(feature = "test-util")]
    {
        crate::paused::made_on()
    }
    #[cfg(not(feature = "test-util"))]
    {
        None
    }
}

/// A future that completes at `deadline` (at once when it has passed, including an `Instant`
/// from before the process started), on the process-wide driver.
pub fn sleep_until(deadline: Instant) -> Sleep {
    Sleep::at(made_on(), deadline)
}

impl Driver {
    /// [`sleep`] on this driver; the duration counts on its clock (a [`ManualClock`]'s
    /// simulated time included).
    ///
    /// [`ManualClock`]: callwheel_rt::ManualClock
    pub fn sleep(&self, duration: Duration) -> Sleep {
        Sleep::after(Some(self.link()), duration)
    }

    /// [`sleep_until`] on this driver (on a clock other than the monotonic one, `deadline`
    /// converts by its distance from now).
    pub fn sleep_until(&self, deadline: Instant) -> Sleep {
        Sleep::at(Some(self.link()), deadline)
    }
}

impl Sleep {
    /// A sleep for `duration` on `driver`, or (`None`) on the driver of the context it is
    /// registered in.
    pub(crate) fn after(driver: Option<Link>, duration: Duration) -> Sleep {
        let (deadline, deadline_ns) = match &driver {
            Some(d) => d.deadline_after(duration),
            None => monotonic_deadline_after(duration),
        };
        Sleep::fixed(driver, deadline, deadline_ns)
    }

    /// [`Sleep::after`] with a deadline.
    pub(crate) fn at(driver: Option<Link>, deadline: Instant) -> Sleep {
        let deadline_ns = driver
            .as_ref()
            .map_or(monotonic_ns(deadline), |d| d.ns_at(deadline));
        Sleep::fixed(driver, deadline, deadline_ns)
    }

    /// A sleep on `driver` (or following its context) with its deadline already read, in the
    /// clock's nanoseconds too.
    pub(crate) fn fixed(driver: Option<Link>, deadline: Instant, deadline_ns: u64) -> Sleep {
        Sleep {
            follows_context: driver.is_none(),
            driver,
            deadline,
            deadline_ns,
            tolerance: None,
            registration: Registration::Idle,
        }
    }

    /// The reading of the clock this sleep counts on: its driver's, or `CLOCK_MONOTONIC`
    /// before it is registered; `None` in the degraded mode (no driver at all).
    fn clock_now(&self) -> Option<u64> {
        match &self.driver {
            Some(d) => Some(d.now()),
            None if self.follows_context => Some(monotonic_now()),
            None => None,
        }
    }

    /// `at` on this sleep's clock.
    fn clock_ns_at(&self, at: Instant) -> u64 {
        self.driver
            .as_ref()
            .map_or_else(|| monotonic_ns(at), |d| d.ns_at(at))
    }

    /// This sleep may complete up to `tolerance` after its deadline (never before): sleeps
    /// whose windows overlap then share one wake-up of the driver. Without it the driver's
    /// default applies ([`Builder::tolerance`](crate::Builder::tolerance); exact for the
    /// process-wide driver). Takes effect at the next registration (the first poll, or
    /// after a reset).
    pub fn tolerance(mut self, tolerance: Duration) -> Sleep {
        self.tolerance = Some(tolerance);
        self
    }

    /// The deadline.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Whether the deadline has passed (on the driver's clock).
    pub fn is_elapsed(&self) -> bool {
        match (&self.registration, self.clock_now()) {
            (Registration::Done, _) => true,
            (_, Some(now)) => now >= self.deadline_ns,
            (_, None) => Instant::now() >= self.deadline,
        }
    }

    /// Moves the deadline to `deadline`, whether the sleep completed or not: a completed sleep
    /// becomes pending again, and one moved to a time already passed completes at its next
    /// poll. The timer keeps its place in the driver when it is still registered and its new
    /// deadline is ahead (no new registration).
    pub fn reset(&mut self, deadline: Instant) {
        let ns = self.clock_ns_at(deadline);
        self.set_deadline(deadline, ns);
    }

    /// [`Sleep::reset`] to `duration` after now on the driver's clock.
    pub(crate) fn reset_after(&mut self, duration: Duration) {
        let (at, ns) = match &self.driver {
            Some(d) => d.deadline_after(duration),
            None => monotonic_deadline_after(duration),
        };
        self.set_deadline(at, ns);
    }

    /// Whether the sleep is registered with its driver (polled pending, not since completed
    /// or reset past its firing).
    pub(crate) fn is_registered(&self) -> bool {
        matches!(self.registration, Registration::Armed(_))
    }

    /// The driver's clock now, if there is a driver.
    pub(crate) fn driver_now(&self) -> Option<u64> {
        self.clock_now()
    }

    /// The deadline in the driver's nanoseconds.
    pub(crate) fn deadline_ns(&self) -> u64 {
        self.deadline_ns
    }

    /// Resets to a deadline given in the driver's nanoseconds.
    pub(crate) fn reset_ns(&mut self, ns: u64) {
        let now = self.clock_now().unwrap_or(0);
        let ahead = Duration::from_nanos(ns.saturating_sub(now));
        self.set_deadline(instant_after(ahead), ns);
    }

    /// Resets to a deadline given both ways (an interval keeps its grid exact in both).
    pub(crate) fn set_deadline(&mut self, deadline: Instant, ns: u64) {
        self.deadline = deadline;
        self.deadline_ns = ns;
        match (&self.registration, &self.driver) {
            // Moved to a time already passed: due at the next poll, as tokio's is, rather than
            // at the driver's next turn.
            (Registration::Armed(entry), Some(d)) if ns <= d.now() => {
                d.cancel(*entry);
                self.registration = Registration::Idle;
            }
            (Registration::Armed(entry), Some(d)) => {
                let tolerance = self.tolerance_ns(d);
                if !d.reset(*entry, ns, tolerance) {
                    self.registration = Registration::Idle;
                }
            }
            _ => self.registration = Registration::Idle,
        }
    }

    fn tolerance_ns(&self, d: &Inner) -> u64 {
        match self.tolerance {
            Some(t) => nanos(t),
            None => d.default_tolerance(self.deadline_ns),
        }
    }

    /// Polls as a `Future` does, through `&mut` (a `Sleep` is `Unpin`).
    pub fn poll_sleep(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.poll_with(cx, true)
    }

    /// The first poll of a sleep made this instant for a positive duration (a timeout's, made
    /// at the first poll its future was pending): its deadline cannot have passed, so the
    /// clock is not read again.
    pub(crate) fn poll_fresh(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.poll_with(cx, false)
    }

    fn poll_with(&mut self, cx: &mut Context<'_>, check: bool) -> Poll<()> {
        if self.driver.is_none() && self.follows_context {
            // Not yet registered: the driver of the context it is polled in takes it.
            self.driver = context_link().or_else(Driver::global_link);
            self.follows_context = self.driver.is_some();
        }
        // Borrowed, not cloned: a clone would move the driver's reference count, an atomic
        // operation, at every poll.
        let Some(d) = self.driver.as_ref() else {
            // No driver: check the clock and ask to be polled again.
            if Instant::now() >= self.deadline {
                self.registration = Registration::Done;
                return Poll::Ready(());
            }
            cx.waker().wake_by_ref();
            return Poll::Pending;
        };
        match self.registration {
            Registration::Done => Poll::Ready(()),
            Registration::Armed(ref mut entry) => {
                if d.still_pending(entry, cx.waker()) {
                    return Poll::Pending;
                }
                if self.follows_context && d.is_shut_down() && d.now() < self.deadline_ns {
                    // Its driver went away with its executor (a runtime shut down), not due
                    // yet: it registers again where it is polled now.
                    self.registration = Registration::Idle;
                    self.driver = None;
                    return self.poll_with(cx, false);
                }
                self.registration = Registration::Done;
                Poll::Ready(())
            }
            Registration::Idle => self.register(cx, check),
        }
    }

    /// The first registration (or the first after a reset, or after its driver went away) on
    /// the sleep's driver: for a sleep that follows its context, the context's.
    fn register(&mut self, cx: &mut Context<'_>, check: bool) -> Poll<()> {
        let Some(d) = self.driver.as_ref() else {
            // Not reached: a sleep registers only once it has a driver.
            cx.waker().wake_by_ref();
            return Poll::Pending;
        };
        if check && d.now() >= self.deadline_ns {
            self.registration = Registration::Done;
            return Poll::Ready(());
        }
        let tolerance = self.tolerance_ns(d);
        match d.register(self.deadline_ns, tolerance, cx.waker()) {
            Ok(entry) => {
                self.registration = Registration::Armed(entry);
                Poll::Pending
            }
            Err(Refused::ShutDown) => match Driver::global_link() {
                // A context's driver shut down under it (its runtime is going away): the
                // process-wide one takes it.
                Some(global) if self.follows_context && !d.is_global() => {
                    self.driver = Some(global);
                    self.register(cx, false)
                }
                _ => {
                    self.registration = Registration::Done;
                    Poll::Ready(())
                }
            },
            Err(Refused::NoMemory) => {
                // The wheel could not grow: poll again until the deadline rather than lose
                // the wake-up.
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
    }
}

/// The driver a sleep that follows its context registers on, polled here: the wheel of this
/// thread for the tokio runtime it runs in (the `tokio` feature), else this thread's wheel on
/// async-io's reactor (the `async-io` feature); `None` for the process-wide driver.
fn context_link() -> Option<Link> {
    #[cfg(feature = "tokio")]
    if let Some(link) = crate::tokio_reactor::context_link() {
        return Some(link);
    }
    #[cfg(feature = "async-io")]
    if let Some(link) = crate::async_io_reactor::thread_link() {
        return Some(link);
    }
    None
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.get_mut().poll_sleep(cx)
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let (Registration::Armed(entry), Some(d)) = (&self.registration, &self.driver) {
            d.cancel(*entry);
        }
    }
}
