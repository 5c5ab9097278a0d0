//! Why a callout call failed.

use core::fmt;

/// Why a callout call failed. Every failure leaves the table exactly as it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The pool was given a fixed size (`calloutsize`) and every record is in use. The 1995
    /// kernel panicked here; callwheel reports it and changes nothing.
    PoolExhausted {
        /// The fixed number of records.
        calloutsize: usize,
    },
    /// The table had to grow (its pool of records, or the backing scheme's storage) and the
    /// allocator refused the memory. Every callout set before is still there.
    NoMemory,
    /// The handle names no live record: its callout already fired (one-shot), was freed, or
    /// the handle was never issued by this table (another table's handles name nothing here).
    StaleHandle,
    /// The handle names a one-shot record (from `setcallout`) where a callout initialised by
    /// `callout_init` is required, or the other way round.
    WrongKind,
    /// The backing scheme refused the deadline (for example it is beyond a bounded wheel's
    /// range).
    Scheme(callwheel::Error),
    /// A CPU that is not there: a single table is one CPU's queue (pass 0 or -1 for "this
    /// one"); a [`SharedCallouts`](crate::SharedCallouts) has CPUs `0..ncpu` (and -1
    /// for "the callout's own" where a callout is named).
    InvalidCpu(i32),
    /// Unknown bits in a flags argument.
    InvalidFlags(u32),
    /// The handler of this callout is running on the calling thread: waiting for it to finish
    /// (`callout_drain`, freeing it) would never return.
    WouldDeadlock,
    /// The callout's handler is running, so its record cannot be freed yet (drain it first).
    Busy,
    /// `softclock` is already running on another thread; one thread processes a table at a
    /// time, as one software-interrupt thread did per CPU.
    SoftclockBusy,
    /// The deadline would come after the last tick (`u64::MAX`): a table's tick never wraps,
    /// so nothing can be set to run past it. Nothing changed.
    PastEndOfTime,
    /// A construction parameter is out of range (the reason says which).
    Config {
        /// What is wrong.
        reason: &'static str,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::PoolExhausted { calloutsize } => {
                write!(f, "all {calloutsize} callout records are in use")
            }
            Error::NoMemory => f.write_str("out of memory: the callout table could not grow"),
            Error::StaleHandle => f.write_str("stale or unknown callout handle"),
            Error::WrongKind => f.write_str("handle is of the wrong kind for this call"),
            Error::Scheme(e) => write!(f, "timer scheme refused the callout: {e}"),
            Error::InvalidCpu(cpu) => write!(f, "no CPU {cpu} in this callout table or set"),
            Error::InvalidFlags(bits) => write!(f, "unknown callout flag bits {bits:#x}"),
            Error::WouldDeadlock => f.write_str(
                "the callout's handler is running on this thread; waiting would deadlock",
            ),
            Error::Busy => f.write_str("the callout's handler is running"),
            Error::SoftclockBusy => f.write_str("softclock is already running on another thread"),
            Error::PastEndOfTime => f.write_str("the deadline is after the table's last tick"),
            Error::Config { reason } => write!(f, "invalid callout configuration: {reason}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<callwheel::Error> for Error {
    fn from(e: callwheel::Error) -> Error {
        match e {
            callwheel::Error::Full { capacity } => Error::PoolExhausted {
                calloutsize: capacity,
            },
            callwheel::Error::NoMemory => Error::NoMemory,
            other => Error::Scheme(other),
        }
    }
}
