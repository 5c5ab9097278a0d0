//! The stabbing optimum: the yardstick for coalesced wake-ups.
//!
//! A timer with a tolerance may fire anywhere in its window `[deadline, deadline + tolerance]`.
//! A driver that wakes at instant `t` and fires every timer whose window contains `t` *stabs*
//! those windows; the fewest wake-ups that serve every timer is the minimum number of instants
//! stabbing all the windows. For intervals the greedy rule is optimal: sort the windows by
//! their end, wake at the end of the first one, drop every window that instant stabs, repeat.
//! Driving the [`Wheel`](crate::Wheel) by `next_wakeup` runs that greedy rule online on the
//! windows as the wheel fires them (from each timer's firing instant to its end), so its
//! wake-up count can be checked against this number: equal with exact timers, within 5 %
//! pooled over many windows with tolerances.

use alloc::vec::Vec;

use crate::time::Tick;

/// The minimum number of instants that stab every window `[start, end]` (both ends included):
/// sort by end, and take the end of each window the last chosen instant does not stab. With
/// zero-width windows it is the number of distinct deadlines; with none, 0. A window whose end
/// is before its start is taken as stabbed by its end alone (it never happens with windows
/// built as `deadline + tolerance`). O(n log n) time, O(n) memory.
///
/// ```
/// use callwheel::stabbing_optimum;
///
/// // [1, 4] and [3, 6] share 3..=4; [5, 8] needs a second instant.
/// assert_eq!(stabbing_optimum(&[(1, 4), (3, 6), (5, 8)]), 2);
/// assert_eq!(stabbing_optimum(&[(5, 5), (5, 5), (7, 7)]), 2);
/// ```
pub fn stabbing_optimum(windows: &[(Tick, Tick)]) -> u64 {
    let mut by_end: Vec<(Tick, Tick)> = windows.to_vec();
    by_end.sort_unstable_by_key(|&(start, end)| (end, start));
    let mut last: Option<Tick> = None;
    let mut count = 0u64;
    for (start, end) in by_end {
        // An inverted window counts as its end alone.
        let start = start.min(end);
        if last.is_none_or(|t| start > t) {
            last = Some(end);
            count += 1;
        }
    }
    count
}
