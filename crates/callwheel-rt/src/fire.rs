//! What a callback is told about its firing ([`Fire`]).

use std::time::Duration;

/// What a callback is told about its firing. Its instants are readings of the clock the timer
/// was armed on, in nanoseconds since that clock's epoch, not `Instant`s: a manual clock, the
/// wall clock and the boot-time clock have no `Instant` to give (compare them with
/// [`Runtime::now_ns`](crate::Runtime::now_ns) or [`Runtime::ns_at`](crate::Runtime::ns_at)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fire {
    /// The deadline it fired for, in nanoseconds of the clock it was armed on: the runtime's
    /// clock, or the clock base of a [`Deadline::on`](crate::Deadline::on) (and, on a runtime
    /// given the wall clock, of [`Deadline::from_clock_ns`](crate::Deadline::from_clock_ns)).
    pub deadline: u64,
    /// That clock's reading at the wake-up that fired it (the runtime clock's clamped).
    pub now: u64,
    /// For a periodic timer, the whole periods this firing missed; 0 otherwise.
    pub overruns: u64,
    /// The shard that fired it.
    pub shard: usize,
}

impl Fire {
    /// How late the timer fired: `now - deadline` (zero when on time).
    pub fn lateness(&self) -> Duration {
        Duration::from_nanos(self.now.saturating_sub(self.deadline))
    }
}
