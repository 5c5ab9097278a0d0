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

    /// [`AdvanceState::overdue_stamp`] in 31 bits (the top bit of the `u32` is 0), for
    /// structures that keep it in a narrower field beside a flag. Compared by
    /// [`AdvanceState::fires_in_this_drain_short`], which is exact as long as a stamp is less
    /// than 2^30 drains old: an overdue timer fires in the first drain that began after it was
    /// queued, so the stamps on a queue are at most two drains old.
    #[inline]
    pub fn short_overdue_stamp(&self) -> u32 {
        self.overdue_stamp() as u32 & (u32::MAX >> 1)
    }

    /// [`AdvanceState::fires_in_this_drain`] for a stamp from
    /// [`AdvanceState::short_overdue_stamp`] (its top bit is ignored): the epochs are compared
    /// by wrapping in 31 bits, so the answer stays right when the short epoch wraps.
    #[inline]
    pub fn fires_in_this_drain_short(&self, stamp: u32) -> bool {
        ((self.epoch as u32).wrapping_sub(stamp) << 1) as i32 > 0
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

    /// The 31-bit stamps give the same answers as the full ones, also across the short epoch's
    /// wrap at 2^31 (a long-lived wheel gets there after 2^31 drains).
    #[test]
    fn short_stamps_agree_with_full_ones_across_the_wrap() {
        for start in [0, 5, (1u64 << 31) - 3, (1u64 << 32) - 2, (1u64 << 33) - 1] {
            let mut s = AdvanceState::new();
            s.epoch = start;
            let mut queued: alloc::vec::Vec<(u64, u32)> = alloc::vec::Vec::new();
            for round in 0..8 {
                s.set_in_advance(round % 3 != 0);
                queued.push((s.overdue_stamp(), s.short_overdue_stamp()));
                s.set_in_advance(true);
                s.begin_drain();
                // Queued from a callback of this drain: both say it waits for the next one.
                let from_callback = (s.overdue_stamp(), s.short_overdue_stamp());
                assert!(!s.fires_in_this_drain(from_callback.0));
                assert!(
                    !s.fires_in_this_drain_short(from_callback.1),
                    "epoch {}",
                    s.epoch
                );
                queued.push(from_callback);
                // Stamps at most two drains old, as on a wheel's overdue queue.
                queued.retain(|&(full, _)| full + 2 >= s.epoch);
                for &(full, short) in &queued {
                    assert_eq!(
                        s.fires_in_this_drain(full),
                        s.fires_in_this_drain_short(short),
                        "epoch {} stamp {full}",
                        s.epoch
                    );
                }
            }
        }
    }
}
