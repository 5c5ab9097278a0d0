//! The firing instant the wheel documents (`callwheel::firing_instant`), written out here by
//! a search over the levels rather than taken from the crate, and checked against it.

use callwheel::{firing_instant, window_end, Tick};

/// The instant a timer due at `deadline` with `tolerance` fires: the first multiple of the
/// coarsest 64^l (l ≥ 1) in the first eighth of the window kept, else the deadline.
pub fn fires_at(deadline: Tick, tolerance: Tick) -> Tick {
    let end = window_end(deadline, tolerance);
    let reach = deadline + (end - deadline) / 8;
    let mut at = deadline;
    for level in (1..11).rev() {
        let width = 1u128 << (6 * level);
        let first = u128::from(deadline).div_ceil(width) * width;
        if first <= u128::from(reach) {
            at = first as Tick;
            break;
        }
    }
    assert_eq!(
        at,
        firing_instant(deadline, tolerance),
        "[{deadline}, {end}]"
    );
    at
}
