//! The runtime's errors.

use std::fmt;
use std::io;

/// Why a runtime call failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The shard's wheel refused the timer (a full fixed capacity, a zero period).
    Wheel(callwheel::Error),
    /// A shard index out of range.
    NoSuchShard {
        /// The index asked for.
        shard: usize,
        /// How many shards the runtime has.
        shards: usize,
    },
    /// A configuration the runtime cannot run with (the reason says which).
    Config {
        /// What is wrong.
        reason: &'static str,
    },
    /// A system call failed while building the runtime.
    Io(io::Error),
    /// The runtime has been dropped; its timers can no longer be armed.
    ShutDown,
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
