//! The system calls the runtime makes, each wrapped once with its error handling so the rest of
//! the crate is safe code: `clock_gettime`, `clock_nanosleep(TIMER_ABSTIME)`, `timerfd`,
//! `eventfd`, `poll`, `prctl(PR_SET_TIMERSLACK)` and `sched_getcpu`.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Nanoseconds in a second, for `timespec` conversions.
const NS: u64 = 1_000_000_000;

fn timespec(ns: u64) -> libc::timespec {
    libc::timespec {
        // u64 seconds / 1e9 fit in i64 (at most 1.8e10).
        tv_sec: (ns / NS) as libc::time_t,
        tv_nsec: (ns % NS) as libc::c_long,
    }
}

/// Reads `clock`, in nanoseconds since its epoch (negative readings, which no Linux clock
/// gives, read as 0).
pub(crate) fn clock_gettime(clock: libc::clockid_t) -> io::Result<u64> {
    let mut ts = timespec(0);
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let r = unsafe { libc::clock_gettime(clock, &mut ts) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
    let nanos = u64::try_from(ts.tv_nsec).unwrap_or(0);
    Ok(secs.saturating_mul(NS).saturating_add(nanos))
}

/// Sleeps until `clock` reads `deadline` (absolute), restarting after signals.
pub(crate) fn clock_nanosleep_abs(clock: libc::clockid_t, deadline: u64) -> io::Result<()> {
    let ts = timespec(deadline);
    loop {
        // SAFETY: `ts` is a valid timespec; the remainder pointer may be null with
        // TIMER_ABSTIME.
        let r =
            unsafe { libc::clock_nanosleep(clock, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
        match r {
            0 => return Ok(()),
            libc::EINTR => continue,
            e => return Err(io::Error::from_raw_os_error(e)),
        }
    }
}

/// Sets the calling thread's timer slack to `ns` (1 is the minimum; 0 would restore the
/// thread's default).
pub(crate) fn set_timer_slack(ns: u64) -> io::Result<()> {
    let ns = libc::c_ulong::try_from(ns.max(1)).unwrap_or(libc::c_ulong::MAX);
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and touches no memory of ours.
    let r = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns, 0, 0, 0) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The CPU the calling thread runs on, if the kernel says (Miri cannot ask).
#[cfg_attr(miri, allow(dead_code))]
pub(crate) fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu takes no arguments and only returns a number.
    let cpu = unsafe { libc::sched_getcpu() };
    usize::try_from(cpu).ok()
}

fn check_fd(fd: libc::c_int) -> io::Result<OwnedFd> {
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by the kernel, is open, and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// An eventfd: a counter another thread bumps to wake a `poll` on it.
#[derive(Debug)]
pub(crate) struct EventFd(OwnedFd);

impl EventFd {
    pub(crate) fn new() -> io::Result<EventFd> {
        // SAFETY: eventfd takes two integers and returns a new descriptor or -1.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        check_fd(fd).map(EventFd)
    }

    /// Makes the counter non-zero (readable). Never blocks: a full counter is already readable.
    pub(crate) fn signal(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our own descriptor.
        let _ = unsafe {
            libc::write(
                self.0.as_raw_fd(),
                (&one as *const u64).cast(),
                std::mem::size_of::<u64>(),
            )
        };
    }

    /// The descriptor, for callers that poll it themselves (a timer set's owner).
    pub(crate) fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.0.as_fd()
    }

    /// Resets the counter to zero.
    pub(crate) fn clear(&self) {
        let mut v: u64 = 0;
        // SAFETY: reads at most 8 bytes into a live u64 from our own descriptor; EAGAIN (already
        // zero) is fine.
        let _ = unsafe {
            libc::read(
                self.0.as_raw_fd(),
                (&mut v as *mut u64).cast(),
                std::mem::size_of::<u64>(),
            )
        };
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
    pub(crate) fn new(clock: libc::clockid_t) -> io::Result<TimerFd> {
        // SAFETY: timerfd_create takes two integers and returns a new descriptor or -1.
        let fd = unsafe { libc::timerfd_create(clock, libc::TFD_CLOEXEC | libc::TFD_NONBLOCK) };
        check_fd(fd).map(TimerFd)
    }

    /// Arms it for the absolute time `deadline` (`cancel_on_set` for a realtime timer that must
    /// hear about clock changes). A deadline of 0 would disarm, so it is raised to 1 (long past).
    pub(crate) fn arm_abs(&self, deadline: u64, cancel_on_set: bool) -> io::Result<()> {
        let spec = libc::itimerspec {
            it_interval: timespec(0),
            it_value: timespec(deadline.max(1)),
        };
        let mut flags = libc::TFD_TIMER_ABSTIME;
        if cancel_on_set {
            flags |= libc::TFD_TIMER_CANCEL_ON_SET;
        }
        // SAFETY: `spec` is a valid itimerspec; the old-value pointer may be null.
        let r = unsafe {
            libc::timerfd_settime(self.0.as_raw_fd(), flags, &spec, std::ptr::null_mut())
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Consumes an expiry, if any.
    pub(crate) fn read(&self) -> io::Result<TimerRead> {
        let mut v: u64 = 0;
        // SAFETY: reads at most 8 bytes into a live u64 from our own descriptor.
        let r = unsafe {
            libc::read(
                self.0.as_raw_fd(),
                (&mut v as *mut u64).cast(),
                std::mem::size_of::<u64>(),
            )
        };
        if r >= 0 {
            return Ok(TimerRead::Expired);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EAGAIN) => Ok(TimerRead::NotYet),
            Some(libc::ECANCELED) => Ok(TimerRead::ClockSet),
            _ => Err(e),
        }
    }
}

/// Waits until `timer` (when given) or `event` is readable; returns which (timer, event).
/// Restarts after signals.
pub(crate) fn poll_two(timer: Option<&TimerFd>, event: &EventFd) -> io::Result<(bool, bool)> {
    let mut fds = [
        libc::pollfd {
            fd: event.0.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: timer.map_or(-1, |t| t.0.as_raw_fd()),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    loop {
        // SAFETY: `fds` is a live array of two pollfd (a negative fd is ignored by poll).
        let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if r >= 0 {
            return Ok((fds[1].revents != 0, fds[0].revents != 0));
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
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
    word: &std::sync::atomic::AtomicU32,
    expected: u32,
    deadline: Option<u64>,
) -> io::Result<FutexWait> {
    let ts = deadline.map(timespec);
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a live, aligned 32-bit atomic for the duration of the call; `ts_ptr` is
    // null or points at a live timespec; FUTEX_WAIT_BITSET ignores the second address.
    let r = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT_BITSET | libc::FUTEX_PRIVATE_FLAG,
            expected,
            ts_ptr,
            std::ptr::null::<u32>(),
            libc::FUTEX_BITSET_MATCH_ANY,
        )
    };
    if r == 0 {
        return Ok(FutexWait::Retry);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::ETIMEDOUT) => Ok(FutexWait::TimedOut),
        Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(FutexWait::Retry),
        _ => Err(e),
    }
}

/// Wakes one thread sleeping in [`futex_wait`] on `word`.
pub(crate) fn futex_wake(word: &std::sync::atomic::AtomicU32) {
    // SAFETY: `word` is a live, aligned 32-bit atomic; FUTEX_WAKE reads no other memory.
    let _ = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            1,
        )
    };
}
