//! The system calls the runtime makes, each wrapped once with its error handling so the rest of
//! the crate is safe code: `clock_gettime`, `clock_nanosleep(TIMER_ABSTIME)`, `timerfd`,
//! `eventfd`, `poll`, `futex`, `prctl(PR_SET_TIMERSLACK)`, `sched_getcpu` and `pthread_atfork`.
//!
//! All but the last two go through `rustix`, whose wrappers are safe; `sched_getcpu` stays on
//! `libc` (see [`current_cpu`]), and `pthread_atfork` is the C library's own (rustix has none).

use std::io;
use std::num::{NonZeroU32, NonZeroU64};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::AtomicU32;

use rustix::event::{EventfdFlags, PollFd, PollFlags};
use rustix::io::Errno;
use rustix::thread::futex;
use rustix::time::{
    ClockId, Itimerspec, TimerfdClockId, TimerfdFlags, TimerfdTimerFlags, Timespec,
};

/// Nanoseconds in a second, for `timespec` conversions.
const NS: u64 = 1_000_000_000;

fn timespec(ns: u64) -> Timespec {
    Timespec {
        // u64 seconds / 1e9 fit in i64 (at most 1.8e10); nanoseconds are below 1e9.
        tv_sec: (ns / NS) as i64,
        tv_nsec: (ns % NS) as _,
    }
}

/// Reads `clock`, in nanoseconds since its epoch (negative readings, which no Linux clock
/// gives, read as 0). The static clocks used here cannot fail, so this is always `Ok`.
pub(crate) fn clock_gettime(clock: ClockId) -> io::Result<u64> {
    let ts = rustix::time::clock_gettime(clock);
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(ts.tv_nsec).unwrap_or(0);
    Ok(secs.saturating_mul(NS).saturating_add(nanos))
}

/// `CLOCK_MONOTONIC_COARSE` in nanoseconds.
pub(crate) fn clock_gettime_coarse() -> u64 {
    let ts = rustix::time::clock_gettime(ClockId::MonotonicCoarse);
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(ts.tv_nsec).unwrap_or(0);
    secs.saturating_mul(NS).saturating_add(nanos)
}

/// `CLOCK_MONOTONIC_COARSE`'s resolution in nanoseconds (a kernel tick), at least 1; 10 ms
/// (the coarsest tick Linux has, `HZ = 100`) should the kernel not say.
pub(crate) fn coarse_resolution() -> u64 {
    let ts = rustix::time::clock_getres(ClockId::MonotonicCoarse);
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(ts.tv_nsec).unwrap_or(0);
    match secs.saturating_mul(NS).saturating_add(nanos) {
        0 => 10_000_000,
        r => r,
    }
}

/// Sleeps until `clock` reads `deadline` (absolute), restarting after signals.
pub(crate) fn clock_nanosleep_abs(clock: ClockId, deadline: u64) -> io::Result<()> {
    let ts = timespec(deadline);
    loop {
        match rustix::thread::clock_nanosleep_absolute(clock, &ts) {
            Ok(()) => return Ok(()),
            Err(Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Sets the calling thread's timer slack to `ns` (1 is the minimum; 0 would restore the
/// thread's default).
pub(crate) fn set_timer_slack(ns: u64) -> io::Result<()> {
    // Clamped to what an `unsigned long` holds, as before, rather than refused.
    let ns = ns.clamp(1, u64::try_from(usize::MAX).unwrap_or(u64::MAX));
    rustix::thread::set_current_timer_slack(NonZeroU64::new(ns))?;
    Ok(())
}

/// The CPU the calling thread runs on, if the kernel says (Miri cannot ask).
///
/// This one stays on `libc`: rustix's `sched_getcpu` (linux_raw backend) is a `getcpu` system
/// call, while glibc answers from the rseq area or the vDSO without entering the kernel, and
/// this runs on every timer creation ([`crate::Runtime::current_shard`]).
#[cfg_attr(miri, allow(dead_code))]
pub(crate) fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu takes no arguments and only returns a number.
    let cpu = unsafe { libc::sched_getcpu() };
    usize::try_from(cpu).ok()
}

/// Has the C library call `prepare` in the parent just before every later `fork`, on the
/// thread that calls it, and `child` in the child before `fork` returns there. Not under Miri,
/// which cannot register them (and runs no child).
pub(crate) fn on_fork(prepare: extern "C" fn(), child: extern "C" fn()) -> io::Result<()> {
    #[cfg(not(miri))]
    {
        // SAFETY: both are plain `extern "C" fn()`s with static lifetime, as pthread_atfork
        // requires; the parent's handler is none.
        let err = unsafe { libc::pthread_atfork(Some(prepare), None, Some(child)) };
        if err != 0 {
            return Err(io::Error::from_raw_os_error(err));
        }
    }
    #[cfg(miri)]
    let _ = (prepare, child);
    Ok(())
}

/// An eventfd: a counter another thread bumps to wake a `poll` on it.
#[derive(Debug)]
pub(crate) struct EventFd(OwnedFd);

impl EventFd {
    pub(crate) fn new() -> io::Result<EventFd> {
        let fd = rustix::event::eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
        Ok(EventFd(fd))
    }

    /// Makes the counter non-zero (readable). Never blocks: a full counter is already readable.
    pub(crate) fn signal(&self) {
        let _ = rustix::io::write(&self.0, &1u64.to_ne_bytes());
    }

    /// The descriptor, for callers that poll it themselves (a timer set's owner).
    pub(crate) fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }

    /// Resets the counter to zero.
    pub(crate) fn clear(&self) {
        let mut v = [0u8; 8];
        // EAGAIN (already zero) is fine.
        let _ = rustix::io::read(&self.0, &mut v);
    }
}

/// What reading a timerfd said.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum TimerRead {
    /// It expired.
    Expired,
    /// Nothing yet (a spurious poll wake-up).
    NotYet,
    /// The realtime clock was set while it was armed with `TFD_TIMER_CANCEL_ON_SET`.
    ClockSet,
}

/// A timerfd on one clock.
#[derive(Debug)]
pub(crate) struct TimerFd(OwnedFd);

impl TimerFd {
    pub(crate) fn new(clock: TimerfdClockId) -> io::Result<TimerFd> {
        let fd =
            rustix::time::timerfd_create(clock, TimerfdFlags::CLOEXEC | TimerfdFlags::NONBLOCK)?;
        Ok(TimerFd(fd))
    }

    /// Arms it for the absolute time `deadline` (`cancel_on_set` for a realtime timer that must
    /// hear about clock changes). A deadline of 0 would disarm, so it is raised to 1 (long past).
    pub(crate) fn arm_abs(&self, deadline: u64, cancel_on_set: bool) -> io::Result<()> {
        let spec = Itimerspec {
            it_interval: timespec(0),
            it_value: timespec(deadline.max(1)),
        };
        let mut flags = TimerfdTimerFlags::ABSTIME;
        if cancel_on_set {
            flags |= TimerfdTimerFlags::CANCEL_ON_SET;
        }
        rustix::time::timerfd_settime(&self.0, flags, &spec)?;
        Ok(())
    }

    /// Disarms it: it fires no more until armed again.
    pub(crate) fn disarm(&self) -> io::Result<()> {
        let spec = Itimerspec {
            it_interval: timespec(0),
            it_value: timespec(0),
        };
        rustix::time::timerfd_settime(&self.0, TimerfdTimerFlags::empty(), &spec)?;
        Ok(())
    }

    /// The file descriptor, for a reactor to poll.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }

    /// Consumes an expiry, if any.
    pub(crate) fn read(&self) -> io::Result<TimerRead> {
        let mut v = [0u8; 8];
        match rustix::io::read(&self.0, &mut v) {
            Ok(_) => Ok(TimerRead::Expired),
            Err(Errno::AGAIN) => Ok(TimerRead::NotYet),
            Err(Errno::CANCELED) => Ok(TimerRead::ClockSet),
            Err(e) => Err(e.into()),
        }
    }
}

/// Waits until `timer` (when given) or `event` is readable; returns which (timer, event).
/// Restarts after signals.
pub(crate) fn poll_two(timer: Option<&TimerFd>, event: &EventFd) -> io::Result<(bool, bool)> {
    let mut fds = [
        PollFd::new(&event.0, PollFlags::IN),
        // Without a timer, only the first entry is passed (as a negative fd was before).
        PollFd::new(timer.map_or(&event.0, |t| &t.0), PollFlags::IN),
    ];
    let n = if timer.is_some() { 2 } else { 1 };
    loop {
        match rustix::event::poll(&mut fds[..n], None) {
            Ok(_) => {
                let timer_ready = n == 2 && !fds[1].revents().is_empty();
                return Ok((timer_ready, !fds[0].revents().is_empty()));
            }
            Err(Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// What a futex wait ended with.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FutexWait {
    /// The absolute `CLOCK_MONOTONIC` timeout passed.
    TimedOut,
    /// Woken, the word had already changed, or a signal: look at the word again.
    Retry,
}

/// Sleeps while `word` holds `expected`, until `CLOCK_MONOTONIC` reads `deadline` (absolute;
/// `None`: no timeout) or a [`futex_wake`] on the word. The timeout is an hrtimer sleeper with
/// the thread's slack, the same one `clock_nanosleep` uses.
pub(crate) fn futex_wait(
    word: &AtomicU32,
    expected: u32,
    deadline: Option<u64>,
) -> io::Result<FutexWait> {
    let ts = deadline.map(timespec);
    // FUTEX_WAIT_BITSET with FUTEX_BITSET_MATCH_ANY (all bits): an absolute timeout on
    // CLOCK_MONOTONIC, woken by a plain FUTEX_WAKE.
    match futex::wait_bitset(
        word,
        futex::Flags::PRIVATE,
        expected,
        ts.as_ref(),
        NonZeroU32::MAX,
    ) {
        Ok(()) => Ok(FutexWait::Retry),
        Err(Errno::TIMEDOUT) => Ok(FutexWait::TimedOut),
        Err(Errno::AGAIN) | Err(Errno::INTR) => Ok(FutexWait::Retry),
        Err(e) => Err(e.into()),
    }
}

/// Wakes one thread sleeping in [`futex_wait`] on `word`.
pub(crate) fn futex_wake(word: &AtomicU32) {
    let _ = futex::wake(word, futex::Flags::PRIVATE, 1);
}
