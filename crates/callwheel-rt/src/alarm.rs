//! [`Alarm`]: a one-shot `CLOCK_MONOTONIC` timer as a file descriptor, for a driver that an
//! executor's own reactor wakes (epoll in tokio's or async-io's poller) instead of a thread of
//! its own.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};

use crate::sys::{TimerFd, TimerRead};

/// A non-blocking `CLOCK_MONOTONIC` timerfd armed with absolute deadlines: readable once the
/// clock has reached the deadline it was last set to, until [`Alarm::clear`]. Setting it is
/// safe from any thread (the kernel serialises it), so a registration that needs an earlier
/// wake-up can move it forward itself. The kernel fires it on a zero-slack hrtimer.
#[derive(Debug)]
pub struct Alarm {
    timer: TimerFd,
}

impl Alarm {
    /// A new, disarmed alarm.
    ///
    /// # Errors
    ///
    /// The `timerfd_create` error (out of file descriptors, for one).
    pub fn new() -> io::Result<Alarm> {
        Ok(Alarm {
            timer: TimerFd::new(rustix::time::TimerfdClockId::Monotonic)?,
        })
    }

    /// Arms it for the `CLOCK_MONOTONIC` reading `at` in nanoseconds (a reading already passed
    /// makes it readable at once), or disarms it (`None`). Replaces the previous setting.
    ///
    /// # Errors
    ///
    /// The `timerfd_settime` error.
    pub fn set(&self, at: Option<u64>) -> io::Result<()> {
        match at {
            Some(t) => self.timer.arm_abs(t, false),
            None => self.timer.disarm(),
        }
    }

    /// Takes the expiry, if it has fired: `true` then, `false` when it has not (a readiness
    /// that was already consumed, or a setting moved later since).
    ///
    /// # Errors
    ///
    /// The `read` error.
    pub fn clear(&self) -> io::Result<bool> {
        Ok(self.timer.read()? == TimerRead::Expired)
    }
}

impl AsFd for Alarm {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.timer.fd()
    }
}

impl AsRawFd for Alarm {
    fn as_raw_fd(&self) -> RawFd {
        self.timer.fd().as_raw_fd()
    }
}

// System calls: not under Miri, which cannot make them.
#[cfg(all(test, not(callwheel_loom), not(miri)))]
mod tests {
    use super::*;
    use crate::ClockId;

    #[test]
    fn fires_once_its_deadline_has_passed_and_clears() {
        let a = Alarm::new().unwrap();
        assert!(!a.clear().unwrap(), "a new alarm is disarmed");
        let now = ClockId::Monotonic.read().unwrap();
        a.set(Some(now + 10_000_000_000)).unwrap();
        assert!(!a.clear().unwrap(), "not before its deadline");
        a.set(Some(1)).unwrap();
        assert!(a.clear().unwrap(), "a reading already passed fires at once");
        assert!(!a.clear().unwrap(), "one expiry, taken once");
        // Setting it again forgets an expiry not yet taken, and a disarmed alarm never fires.
        a.set(Some(now + 1_000_000)).unwrap();
        a.set(None).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(3));
        assert!(!a.clear().unwrap(), "disarmed");
    }
}
