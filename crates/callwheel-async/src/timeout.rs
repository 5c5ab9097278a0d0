//! [`Timeout`]: a future with a deadline.
//!
//! The inner future is polled first, so one that is ready at once (or before the deadline's
//! first pending poll) completes without its timer ever being registered: no shard lock is
//! taken, no wheel slot used.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::driver::Driver;
use crate::sleep::{sleep, sleep_until, Sleep};

/// The error of a [`Timeout`] whose deadline passed before its future completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Elapsed(());

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

impl std::error::Error for Elapsed {}

pin_project_lite::pin_project! {
    /// A future that completes with its inner future's output, or with [`Elapsed`] once its
    /// deadline passes first: see [`timeout`].
    #[derive(Debug)]
    #[must_use = "a timeout does nothing unless polled"]
    pub struct Timeout<F> {
        #[pin]
        future: F,
        sleep: Sleep,
    }
}

/// Runs `future` for at most `duration`: `Ok(output)` if it completes first, `Err(Elapsed)`
/// otherwise (the future is then dropped with the `Timeout`). On the process-wide driver.
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
    Timeout {
        future,
        sleep: sleep(duration),
    }
}

/// [`timeout`] with a deadline instead of a duration.
pub fn timeout_at<F: Future>(deadline: Instant, future: F) -> Timeout<F> {
    Timeout {
        future,
        sleep: sleep_until(deadline),
    }
}

impl Driver {
    /// [`timeout`] on this driver.
    pub fn timeout<F: Future>(&self, duration: Duration, future: F) -> Timeout<F> {
        Timeout {
            future,
            sleep: self.sleep(duration),
        }
    }

    /// [`timeout_at`] on this driver.
    pub fn timeout_at<F: Future>(&self, deadline: Instant, future: F) -> Timeout<F> {
        Timeout {
            future,
            sleep: self.sleep_until(deadline),
        }
    }
}

impl<F> Timeout<F> {
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

    /// The deadline's sleep, to read or reset.
    pub fn sleep(&mut self) -> &mut Sleep {
        &mut self.sleep
    }

    /// This timeout may fire up to `tolerance` after its deadline (see
    /// [`Sleep::tolerance`]).
    pub fn tolerance(mut self, tolerance: Duration) -> Timeout<F> {
        self.sleep = self.sleep.tolerance(tolerance);
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
        match this.sleep.poll_sleep(cx) {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed(()))),
            Poll::Pending => Poll::Pending,
        }
    }
}
