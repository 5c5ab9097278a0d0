//! The runtime's errors.

use std::fmt;
use std::io;

use rustix::io::Errno;

/// Why a runtime call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The shard's wheel refused the timer (a full fixed capacity, a zero period), or memory
    /// for something that grows with the caller's input was refused: a wheel's slab, a timer
    /// set's slab, the runtime's list of timer sets, a driver's buffers reserved when the
    /// runtime is built ([`callwheel::Error::NoMemory`]). Nothing was changed; every timer
    /// already started is still there.
    Wheel(callwheel::Error),
    /// A shard index out of range.
    NoSuchShard {
        /// The index asked for.
        shard: usize,
        /// How many shards the runtime has.
        shards: usize,
    },
    /// A configuration the runtime cannot run with: the reason names the field and its range.
    Config {
        /// What is wrong.
        reason: &'static str,
    },
    /// A system call failed while building the runtime.
    Io(io::Error),
    /// The runtime has been dropped: it cancelled every pending timer, and its timers and
    /// timer sets refuse every operation that can fail with this error.
    ShutDown,
    /// A timer set was given a handle that names none of its live timers: a handle of another
    /// set, of a timer already destroyed, or a made-up number (the paper's `EINVAL`). Nothing
    /// was changed.
    InvalidHandle,
    /// A timer set was asked to create or reset a timer with a zero value (Figure 6: a zero
    /// value means cancel, which is [`TimerSet::cancel`](crate::TimerSet::cancel)).
    ZeroValue,
    /// A timer set already holds its quota of timers, running plus queued.
    QuotaExceeded {
        /// The set's quota.
        quota: usize,
    },
    /// A value whose deadline (now + value) does not fit the clock's 64-bit nanoseconds.
    ValueOutOfRange,
    /// An interval too large: the first restart (deadline + interval) does not fit the clock's
    /// 64-bit nanoseconds.
    IntervalOutOfRange,
    /// No never-used handle is left (the process-wide supply of set keys is exhausted).
    HandlesExhausted,
    /// A deadline on a clock base the runtime's clock cannot read (a custom [`Clock`]
    /// without bases; see [`Clock::base_now`]).
    ///
    /// [`Clock`]: crate::Clock
    /// [`Clock::base_now`]: crate::Clock::base_now
    NoClockBase(crate::ClockId),
    /// A call that blocks until one of the runtime's timers fires (a sleep, a timed
    /// condition-variable wait) was made on one of the runtime's driver threads, from a
    /// direct callback: the driver would wait for itself. Nothing was armed.
    OnDriver,
    /// A condition-variable wait was given a guard that does not lock the mutex it was given
    /// with it. Nothing was changed; the guard is handed back still locked. (Detected when the
    /// guard's value lies outside the mutex, or the mutex is not locked; for a zero-sized
    /// value, a guard of a neighbouring mutex while the one given is locked elsewhere cannot be
    /// told apart.)
    WrongMutex,
}

impl Error {
    /// The `errno` a C caller should see for this error: `EINVAL` for bad input (handle, value,
    /// interval, configuration, a foreign mutex), `EAGAIN` for exhausted resources (quota,
    /// handles), `ESHUTDOWN` after shutdown, `EDEADLK` for a blocking wait on a driver, the
    /// system error for [`Error::Io`], `ENOMEM` for a refusing wheel.
    pub fn errno(&self) -> i32 {
        match self {
            Error::InvalidHandle
            | Error::ZeroValue
            | Error::ValueOutOfRange
            | Error::IntervalOutOfRange
            | Error::NoSuchShard { .. }
            | Error::NoClockBase(_)
            | Error::Config { .. }
            | Error::WrongMutex => Errno::INVAL.raw_os_error(),
            Error::OnDriver => Errno::DEADLK.raw_os_error(),
            Error::QuotaExceeded { .. } | Error::HandlesExhausted => Errno::AGAIN.raw_os_error(),
            Error::ShutDown => Errno::SHUTDOWN.raw_os_error(),
            Error::Io(e) => e.raw_os_error().unwrap_or(Errno::IO.raw_os_error()),
            Error::Wheel(_) => Errno::NOMEM.raw_os_error(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Wheel(e) => write!(f, "the wheel refused the timer: {e}"),
            Error::NoSuchShard { shard, shards } => {
                write!(f, "no shard {shard}: the runtime has {shards}")
            }
            Error::Config { reason } => write!(f, "bad runtime configuration: {reason}"),
            Error::Io(e) => write!(f, "system call failed: {e}"),
            Error::ShutDown => write!(f, "the runtime has shut down"),
            Error::InvalidHandle => write!(f, "the handle names no live timer of this set"),
            Error::ZeroValue => write!(f, "a timer's value must not be zero"),
            Error::QuotaExceeded { quota } => {
                write!(f, "the timer set is full: its quota is {quota} timers")
            }
            Error::ValueOutOfRange => {
                write!(f, "the value puts the deadline past the clock's range")
            }
            Error::IntervalOutOfRange => {
                write!(
                    f,
                    "the interval puts the next deadline past the clock's range"
                )
            }
            Error::HandlesExhausted => write!(f, "no unused timer handle is left"),
            Error::NoClockBase(base) => {
                write!(f, "the runtime's clock cannot read the {base:?} clock base")
            }
            Error::OnDriver => write!(
                f,
                "a blocking wait on a driver thread of the runtime would wait for itself"
            ),
            Error::WrongMutex => write!(f, "the guard does not lock the mutex given with it"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Wheel(e) => Some(e),
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<callwheel::Error> for Error {
    fn from(e: callwheel::Error) -> Error {
        Error::Wheel(e)
    }
}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error::Io(e)
    }
}
