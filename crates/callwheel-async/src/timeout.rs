//! [`Timeout`]: a future with a deadline.
//!
//! The inner future is polled first, and the deadline's sleep is made only at the first poll
//! where the inner future is pending: a timeout whose future is ready at its first poll reads
//! no clock, takes no lock and registers nothing — the common case of a timeout around an
//! operation that usually completes at once.

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

/// When a timeout's deadline is, before its sleep exists.
#[derive(Clone, Copy, Debug)]
enum When {
    /// This long after the first poll at which the future is pending.
    After(Duration),
    /// At this instant.
    At(Instant),
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
/// otherwise (the future is then dropped with the `Timeout`). On the process-wide driver.
///
/// The duration counts from the first poll at which `future` is pending (a `Timeout` does
/// nothing before it is polled); a future that is ready at its first poll costs no clock
/// read and no timer.
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
    Timeout::new(None, When::After(duration), future)
}

/// [`timeout`] with a deadline instead of a duration.
pub fn timeout_at<F: Future>(deadline: Instant, future: F) -> Timeout<F> {
    Timeout::new(None, When::At(deadline), future)
}

impl Driver {
    /// [`timeout`] on this driver.
    pub fn timeout<F: Future>(&self, duration: Duration, future: F) -> Timeout<F> {
        Timeout::new(Some(self.link()), When::After(duration), future)
    }

    /// [`timeout_at`] on this driver.
    pub fn timeout_at<F: Future>(&self, deadline: Instant, future: F) -> Timeout<F> {
        Timeout::new(Some(self.link()), When::At(deadline), future)
    }
}

/// The deadline's sleep, made now.
fn make_sleep(driver: &Option<Link>, when: When, tolerance: Option<Duration>) -> Sleep {
    let sleep = match when {
        When::After(d) => Sleep::after(driver.clone(), d),
        When::At(at) => Sleep::at(driver.clone(), at),
    };
    match tolerance {
        Some(t) => sleep.tolerance(t),
        None => sleep,
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
    /// it, so a duration then counts from this call).
    pub fn sleep(&mut self) -> &mut Sleep {
        let (driver, when, tolerance) = (&self.driver, self.when, self.tolerance);
        self.sleep
            .get_or_insert_with(|| make_sleep(driver, when, tolerance))
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
                let sleep = this.sleep.insert(make_sleep(driver, when, tolerance));
                match when {
                    // Made from the clock just now, for a positive duration: not yet due.
                    When::After(d) if !d.is_zero() => sleep.poll_fresh(cx),
                    _ => sleep.poll_sleep(cx),
                }
            }
        };
        match polled {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed(()))),
            Poll::Pending => Poll::Pending,
        }
    }
}
