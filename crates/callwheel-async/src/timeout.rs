//! [`Timeout`]: a future with a deadline.
//!
//! The deadline counts from the call that makes the timeout, as tokio's does. The inner future
//! is polled first, and the deadline's sleep is made only at the first poll where the inner
//! future is pending: a timeout whose future is ready at its first poll takes no lock and
//! registers nothing, and the call reads only `CLOCK_MONOTONIC_COARSE` (a few nanoseconds:
//! [`callwheel_rt::coarse_monotonic`]) — the common case of a timeout around an operation that
//! usually completes at once. The precise clock is read when the sleep is made. The deadline
//! is never before the call plus the duration: it is that reading plus the duration when the
//! coarse clock has not moved since the call, and the coarse clock's reading plus the duration
//! when it has (a tick came after the call, so the call was before that reading). A timeout
//! polled at once, the common case, counts from within microseconds of its call; one first
//! polled later counts from at most the coarse time of that poll. (Capping at the call's coarse
//! reading plus one resolution, as tokio's exactness would suggest, fired early here: after an
//! idle CPU wakes, the coarse clock can lag by more than its resolution.)

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::driver::{Driver, Link};
use crate::due::Due;
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
    /// `duration` after the call, which read `CLOCK_MONOTONIC_COARSE` (`called`): a timeout made by the free functions, whose sleep counts in
    /// `CLOCK_MONOTONIC` nanoseconds whichever driver takes it.
    After { duration: Duration, called: u64 },
    /// This deadline, read from the driver's clock at the call: a driver's timeout.
    Fixed(Due),
    /// At this instant.
    At(Instant),
}

impl When {
    /// `duration` after now, for the process-wide or the context's driver.
    fn after(duration: Duration) -> When {
        let (called, _) = callwheel_rt::coarse_monotonic();
        When::After { duration, called }
    }
}

/// A timeout's sleep: what to make it from until the first poll that needs it makes it (one
/// or the other, so that a `Timeout` holds no more than its future and a [`Sleep`] and a tag).
#[derive(Debug)]
enum LazySleep {
    /// Not made yet: when its deadline is, on which driver, with what tolerance.
    Unmade {
        when: When,
        driver: Option<Link>,
        tolerance: Option<Duration>,
    },
    /// Made.
    Made(Sleep),
}

impl LazySleep {
    /// The sleep, made now if it was not, and whether it was made just now for a positive
    /// duration read from the clock at once (its first poll need not read the clock again).
    fn made(&mut self) -> (&mut Sleep, bool) {
        let fresh = match self {
            LazySleep::Made(_) => false,
            LazySleep::Unmade {
                when,
                driver,
                tolerance,
            } => {
                let (sleep, fresh) = make_sleep(driver, *when, *tolerance);
                *self = LazySleep::Made(sleep);
                fresh
            }
        };
        match self {
            LazySleep::Made(sleep) => (sleep, fresh),
            // Made just above.
            LazySleep::Unmade { .. } => unreachable!("the sleep was just made"),
        }
    }
}

// A timeout around a future of no size is its sleep, the tag, and nothing more (tokio's is
// 120 bytes); a field added here must find its room.
const _: () = assert!(std::mem::size_of::<Timeout<std::future::Ready<()>>>() <= 80);

pin_project_lite::pin_project! {
    /// A future that completes with its inner future's output, or with [`Elapsed`] once its
    /// deadline passes first: see [`timeout`].
    #[derive(Debug)]
    #[must_use = "a timeout does nothing unless polled"]
    pub struct Timeout<F> {
        #[pin]
        future: F,
        sleep: LazySleep,
    }
}

/// Runs `future` for at most `duration`: `Ok(output)` if it completes first, `Err(Elapsed)`
/// otherwise (the future is then dropped with the `Timeout`). On the executor's driver or the
/// process-wide one.
///
/// The duration counts from this call, as `tokio::time::timeout`'s does, never early: for a
/// timeout polled at once (the usual case) to within microseconds, and for one first polled
/// later from no later than the coarse clock's reading at that poll (see the module's
/// documentation). A future that is ready at its first poll costs one coarse clock read and
/// no timer. `Duration::MAX` never elapses.
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
            let due = link.deadline_after(duration);
            Timeout::new(Some(link), When::Fixed(due), future)
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
        let due = link.deadline_after(duration);
        Timeout::new(Some(link), When::Fixed(due), future)
    }

    /// [`timeout_at`] on this driver.
    pub fn timeout_at<F: Future>(&self, deadline: Instant, future: F) -> Timeout<F> {
        Timeout::new(Some(self.link()), When::At(deadline), future)
    }
}

/// A reading no earlier than the call of a timeout whose call read the coarse clock at
/// `called`, when the coarse clock now reads `coarse_now` (read before the precise clock):
/// where the coarse clock moved since the call, a tick came after the call, and that tick's
/// time, at most `coarse_now`, bounds the call. `None` where it did not move: the call is then
/// known only to lie between `called` and now (the coarse clock may lag by more than its
/// resolution after an idle CPU wakes: 7 ms at a 4 ms resolution was measured on this
/// project's machine), and the deadline counts from the precise reading.
fn call_bound(called: u64, coarse_now: u64) -> Option<u64> {
    (coarse_now > called).then_some(coarse_now)
}

/// The deadline's sleep, made now, and whether it was read from the clock just now for a
/// positive duration (so it cannot be due yet, and its first poll need not read the clock).
fn make_sleep(driver: &Option<Link>, when: When, tolerance: Option<Duration>) -> (Sleep, bool) {
    let (sleep, fresh) = match when {
        When::After { duration, called } => {
            // Read before the precise clock, so that it is not ahead of it.
            let (now_coarse, _) = callwheel_rt::coarse_monotonic();
            let mut sleep = Sleep::after(driver.clone(), duration);
            let bound = call_bound(called, now_coarse);
            if let Some(bound) = bound {
                let latest = bound.saturating_add(callwheel_rt::saturating_ns(duration));
                let due = sleep.due();
                if due.clock > latest {
                    sleep.set_deadline(Due {
                        instant: due.instant.saturating_sub(due.clock - latest),
                        clock: latest,
                    });
                }
            }
            (sleep, bound.is_none() && !duration.is_zero())
        }
        When::Fixed(due) => (Sleep::fixed(driver.clone(), due), false),
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
            sleep: LazySleep::Unmade {
                when,
                driver,
                tolerance: None,
            },
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
    /// it, its deadline counted as at a first pending poll: see [`timeout`]).
    pub fn sleep(&mut self) -> &mut Sleep {
        self.sleep.made().0
    }

    /// This timeout may fire up to `tolerance` after its deadline (see
    /// [`Sleep::tolerance`]).
    pub fn tolerance(self, tolerance: Duration) -> Timeout<F> {
        let sleep = match self.sleep {
            LazySleep::Unmade { when, driver, .. } => LazySleep::Unmade {
                when,
                driver,
                tolerance: Some(tolerance),
            },
            LazySleep::Made(sleep) => LazySleep::Made(sleep.tolerance(tolerance)),
        };
        Timeout {
            future: self.future,
            sleep,
        }
    }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(v) = this.future.poll(cx) {
            return Poll::Ready(Ok(v));
        }
        let polled = match this.sleep.made() {
            (sleep, true) => sleep.poll_fresh(cx),
            (sleep, false) => sleep.poll_sleep(cx),
        };
        match polled {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed(()))),
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::call_bound;

    // A stale coarse clock (no tick since the call) bounds nothing: the call may lie anywhere
    // up to now, however far the coarse reading lags. Adding its resolution instead fired
    // timeouts early when it lagged by more.
    #[test]
    fn a_coarse_clock_that_has_not_moved_bounds_nothing() {
        assert_eq!(call_bound(1_000_000, 1_000_000), None);
    }

    // A tick after the call: its reading, the latest the call can have been, bounds it.
    #[test]
    fn a_coarse_clock_that_moved_bounds_the_call_by_its_reading() {
        assert_eq!(call_bound(1_000_000, 5_000_000), Some(5_000_000));
    }
}
