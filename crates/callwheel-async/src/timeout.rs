//! [`Timeout`]: a future with a deadline.
//!
//! The deadline counts from the call that makes the timeout, as tokio's does. The inner future
//! is polled first, and the deadline's sleep is made only at the first poll where the inner
//! future is pending: a timeout whose future is ready at its first poll takes no lock and
//! registers nothing, and the call reads only `CLOCK_MONOTONIC_COARSE` (a few nanoseconds:
//! [`callwheel_rt::coarse_monotonic`]) — the common case of a timeout around an operation that
//! usually completes at once. The precise clock is read when the sleep is made; the deadline is
//! the earlier of that reading plus the duration and the coarse reading plus its resolution
//! plus the duration: never before the call plus the duration, and at most one kernel tick
//! (the coarse clock's resolution, 4 ms at `HZ = 250`) after it, which only a timeout first
//! polled more than a tick after its call can see.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::driver::{Driver, Link};
use crate::sleep::Sleep;

/// The error of a [`Timeout`] whose deadline passed before its future completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Elapsed(());

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

impl std::error::Error for Elapsed {}

/// An elapsed timeout as an I/O error of kind [`TimedOut`](std::io::ErrorKind::TimedOut), so
/// that `?` works on a timeout inside a function returning `std::io::Result`, as with tokio's.
impl From<Elapsed> for std::io::Error {
    fn from(elapsed: Elapsed) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::TimedOut, elapsed)
    }
}

/// When a timeout's deadline is, before its sleep exists.
#[derive(Clone, Copy, Debug)]
enum When {
    /// `duration` after the call, which read `CLOCK_MONOTONIC_COARSE` (`called`, with the
    /// clock's `resolution`): a timeout made by the free functions, whose sleep counts in
    /// `CLOCK_MONOTONIC` nanoseconds whichever driver takes it.
    After {
        duration: Duration,
        called: u64,
        resolution: u64,
    },
    /// This deadline, read from the driver's clock at the call: a driver's timeout.
    Fixed(Instant, u64),
    /// At this instant.
    At(Instant),
}

impl When {
    /// `duration` after now, for the process-wide or the context's driver.
    fn after(duration: Duration) -> When {
        let (called, resolution) = callwheel_rt::coarse_monotonic();
        When::After {
            duration,
            called,
            resolution,
        }
    }
}

pin_project_lite::pin_project! {
    /// A future that completes with its inner future's output, or with [`Elapsed`] once its
    /// deadline passes first: see [`timeout`].
    #[derive(Debug)]
    #[must_use = "a timeout does nothing unless polled"]
    pub struct Timeout<F> {
        #[pin]
        future: F,
        when: When,
        driver: Option<Link>,
        tolerance: Option<Duration>,
        sleep: Option<Sleep>,
    }
}

/// Runs `future` for at most `duration`: `Ok(output)` if it completes first, `Err(Elapsed)`
/// otherwise (the future is then dropped with the `Timeout`). On the executor's driver or the
/// process-wide one.
///
/// The duration counts from this call, as `tokio::time::timeout`'s does (to within one
/// kernel tick late, never early: see the module's documentation); a future that is ready at
/// its first poll costs one coarse clock read and no timer. `Duration::MAX` never elapses.
///
/// ```
/// # futures::executor::block_on(async {
/// use std::time::Duration;
/// use callwheel_async::{sleep, timeout};
/// assert_eq!(timeout(Duration::from_secs(1), async { 7 }).await, Ok(7));
/// assert!(timeout(Duration::from_millis(1), sleep(Duration::from_secs(60))).await.is_err());
/// # });
/// ```
pub fn timeout<F: Future>(duration: Duration, future: F) -> Timeout<F> {
    match crate::sleep::made_on() {
        Some(link) => {
            let (at, ns) = link.deadline_after(duration);
            Timeout::new(Some(link), When::Fixed(at, ns), future)
        }
        None => Timeout::new(None, When::after(duration), future),
    }
}

/// [`timeout`] with a deadline instead of a duration.
pub fn timeout_at<F: Future>(deadline: Instant, future: F) -> Timeout<F> {
    Timeout::new(crate::sleep::made_on(), When::At(deadline), future)
}

impl Driver {
    /// [`timeout`] on this driver: the duration counts from this call on the driver's clock
    /// (one reading of it here, exact on a [`ManualClock`]).
    ///
    /// [`ManualClock`]: callwheel_rt::ManualClock
    pub fn timeout<F: Future>(&self, duration: Duration, future: F) -> Timeout<F> {
        let link = self.link();
        let (at, ns) = link.deadline_after(duration);
        Timeout::new(Some(link), When::Fixed(at, ns), future)
    }

    /// [`timeout_at`] on this driver.
    pub fn timeout_at<F: Future>(&self, deadline: Instant, future: F) -> Timeout<F> {
        Timeout::new(Some(self.link()), When::At(deadline), future)
    }
}

/// The deadline's sleep, made now, and whether it was read from the clock just now for a
/// positive duration (so it cannot be due yet, and its first poll need not read the clock).
fn make_sleep(driver: &Option<Link>, when: When, tolerance: Option<Duration>) -> (Sleep, bool) {
    let (sleep, fresh) = match when {
        When::After {
            duration,
            called,
            resolution,
        } => {
            let mut sleep = Sleep::after(driver.clone(), duration);
            // The call was at most one resolution after its coarse reading: no deadline need
            // be later than that bound plus the duration (none is earlier than the call plus
            // the duration either way).
            let latest = called
                .saturating_add(resolution)
                .saturating_add(callwheel_rt::saturating_ns(duration));
            let ns = sleep.deadline_ns();
            let capped = ns > latest;
            if capped {
                let at = sleep.deadline();
                let at = at
                    .checked_sub(Duration::from_nanos(ns - latest))
                    .unwrap_or(at);
                sleep.set_deadline(at, latest);
            }
            (sleep, !capped && !duration.is_zero())
        }
        When::Fixed(at, ns) => (Sleep::fixed(driver.clone(), at, ns), false),
        When::At(at) => (Sleep::at(driver.clone(), at), false),
    };
    match tolerance {
        Some(t) => (sleep.tolerance(t), fresh),
        None => (sleep, fresh),
    }
}

impl<F> Timeout<F> {
    fn new(driver: Option<Link>, when: When, future: F) -> Timeout<F> {
        Timeout {
            future,
            when,
            driver,
            tolerance: None,
            sleep: None,
        }
    }

    /// The inner future.
    pub fn get_ref(&self) -> &F {
        &self.future
    }

    /// The inner future, to poll or change by hand.
    pub fn get_mut(&mut self) -> &mut F {
        &mut self.future
    }

    /// The inner future, dropping the deadline (and cancelling its timer).
    pub fn into_inner(self) -> F {
        self.future
    }

    /// The deadline's sleep, to read or reset (made now if the timeout has not yet needed
    /// it; its deadline still counts from the call that made the timeout).
    pub fn sleep(&mut self) -> &mut Sleep {
        let (driver, when, tolerance) = (&self.driver, self.when, self.tolerance);
        self.sleep
            .get_or_insert_with(|| make_sleep(driver, when, tolerance).0)
    }

    /// This timeout may fire up to `tolerance` after its deadline (see
    /// [`Sleep::tolerance`]).
    pub fn tolerance(mut self, tolerance: Duration) -> Timeout<F> {
        self.tolerance = Some(tolerance);
        self.sleep = self.sleep.map(|s| s.tolerance(tolerance));
        self
    }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(v) = this.future.poll(cx) {
            return Poll::Ready(Ok(v));
        }
        let (driver, when, tolerance) = (&*this.driver, *this.when, *this.tolerance);
        let polled = match this.sleep {
            Some(sleep) => sleep.poll_sleep(cx),
            None => {
                let (sleep, fresh) = make_sleep(driver, when, tolerance);
                let sleep = this.sleep.insert(sleep);
                if fresh {
                    sleep.poll_fresh(cx)
                } else {
                    sleep.poll_sleep(cx)
                }
            }
        };
        match polled {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed(()))),
            Poll::Pending => Poll::Pending,
        }
    }
}
