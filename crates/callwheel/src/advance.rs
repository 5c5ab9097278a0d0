//! Where an `advance` stands between its steps: the part of the call in progress and the
//! epochs of the overdue queue's drains (see the crate documentation on drains). The
//! production wheel and the scheme family keep their position in one [`AdvanceState`], so the
//! rule that makes a drain finish — it fires only the timers queued before it began — is
//! written once.
//!
//! For implementers of [`Timers`](crate::Timers) and [`Scheme`](crate::Scheme) that want the
//! same semantics:
//!
//! ```
//! use callwheel::advance::{AdvanceState, Phase};
//!
//! let mut s = AdvanceState::new();
//! let queued_between_calls = s.overdue_stamp();
//! s.set_in_advance(true);
//! s.begin_drain();
//! assert_eq!(s.phase, Phase::Drain);
//! let queued_by_a_callback = s.overdue_stamp();
//! assert!(s.fires_in_this_drain(queued_between_calls));
//! assert!(!s.fires_in_this_drain(queued_by_a_callback)); // waits for the next drain
//! ```

/// The part of an `advance` in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Phase {
    /// No advance in progress (or the last one completed).
    #[default]
    Idle,
    /// Firing the overdue timers queued before the current drain began.
    Drain,
    /// Processing the work of the tick (or slot) at the cursor.
    Tick,
}

/// An advance's phase and drain epoch, and whether a call is running (a timer queued then
/// comes from a callback).
#[derive(Clone, Copy, Debug, Default)]
pub struct AdvanceState {
    /// The part of the call in progress; a budget or a panicking callback may leave it
    /// mid-way, and the next call resumes it.
    pub phase: Phase,
    epoch: u64,
    in_advance: bool,
}

impl AdvanceState {
    /// Idle, no drain begun.
    pub const fn new() -> AdvanceState {
        AdvanceState {
            phase: Phase::Idle,
            epoch: 0,
            in_advance: false,
        }
    }

    /// Begins a drain of the overdue queue: a new epoch, phase [`Phase::Drain`].
    #[inline]
    pub fn begin_drain(&mut self) {
        self.epoch += 1;
        self.phase = Phase::Drain;
    }

    /// The stamp a timer queued as overdue now carries. Queued from a callback, it carries the
    /// current drain's epoch, so that drain leaves it for the next one (a callback re-arming
    /// itself in the past cannot keep a drain going); queued between calls, an older one, so
    /// the next call's drain fires it, also when that call resumes a drain a budget
    /// interrupted.
    #[inline]
    pub fn overdue_stamp(&self) -> u64 {
        if self.in_advance {
            self.epoch
        } else {
            self.epoch.saturating_sub(1)
        }
    }

    /// Whether the drain in progress fires a timer queued with `stamp`.
    #[inline]
    pub fn fires_in_this_drain(&self, stamp: u64) -> bool {
        stamp < self.epoch
    }

    /// Marks a call to `advance` as running (`true`) or ended (`false`). A call that a
    /// callback's panic may end must clear the mark while unwinding (a drop guard), or the
    /// next starts would be stamped as if queued from a callback and wait one call too long.
    #[inline]
    pub fn set_in_advance(&mut self, running: bool) {
        self.in_advance = running;
    }

    /// Whether a call to `advance` is running.
    #[inline]
    pub fn in_advance(&self) -> bool {
        self.in_advance
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drain_fires_what_was_queued_before_it_and_only_that() {
        let mut s = AdvanceState::new();
        let early = s.overdue_stamp();
        s.set_in_advance(true);
        s.begin_drain();
        assert!(s.fires_in_this_drain(early));
        let from_callback = s.overdue_stamp();
        assert!(!s.fires_in_this_drain(from_callback));
        s.set_in_advance(false);
        let between = s.overdue_stamp();
        s.set_in_advance(true);
        s.begin_drain();
        assert!(s.fires_in_this_drain(from_callback));
        assert!(s.fires_in_this_drain(between));
    }
}
