//! Windows: how a timer's window end is kept in 31 bits of its entry. A width (end minus
//! deadline) below 2^30 ticks (about 1.07 s of nanoseconds) is kept exactly, and so is an end at
//! the end of time (a tolerance that saturates there: "any time after the deadline"); any other
//! width as a binary floating-point number with 25 significant bits, rounded down, so the end
//! kept is never later than the end asked for and earlier by less than 2^-24 of the width (at
//! most 0.2 ms for an hour of tolerance). The 32nd bit is the periodic flag. While a timer is
//! on the overdue list the 31 bits hold its drain stamp instead: its window no longer matters,
//! the wheel asks to be woken now.
//!
//! Kept in the entry rather than beside it, a wide window costs no allocation, no lookup and
//! no failure: every start, reset and re-arm stays O(1) whatever the tolerance.

use super::Wheel;
use crate::time::Tick;

/// Widths below this are kept exactly.
const EXACT: u64 = 1 << 30;
/// Significant bits kept of a wider width, the leading one implied: 24 stored.
const MANTISSA: u32 = 24;
/// The smallest exponent: a width of 2^30 is 2^24 shifted by 6.
const MIN_SHIFT: u32 = 30 - MANTISSA;
/// The field of a window that ends at the end of time: its exponent bits (63) are past any a
/// width needs (at most 33).
const END_OF_TIME: u32 = u32::MAX >> 1;

/// A timer's window field (see the module's documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Window(u32);

impl Window {
    const PERIODIC: u32 = 1 << 31;

    /// The field for the window `[deadline, deadline + tolerance]` (saturated), not periodic,
    /// and the end it keeps.
    #[inline(always)]
    pub(super) fn keep(deadline: Tick, tolerance: Tick) -> (Window, Tick) {
        let (end, past) = deadline.overflowing_add(tolerance);
        if tolerance < EXACT && !past {
            return (Window(tolerance as u32), end);
        }
        Self::keep_wide(deadline, tolerance)
    }

    #[inline(never)]
    fn keep_wide(deadline: Tick, tolerance: Tick) -> (Window, Tick) {
        if tolerance >= Tick::MAX - deadline {
            return (Window(END_OF_TIME), Tick::MAX);
        }
        // 2^30 <= tolerance < 2^64 - 1: its top bit is 30 to 63, so the shift is 6 to 39.
        let shift = tolerance.ilog2() - MANTISSA;
        let mantissa = (tolerance >> shift) as u32 & ((1 << MANTISSA) - 1);
        let field = EXACT as u32 | (shift - MIN_SHIFT) << MANTISSA | mantissa;
        (Window(field), deadline + Window(field).width().unwrap_or(0))
    }

    /// The width kept, or `None` for an end at the end of time. Only meaningful while the
    /// timer is not on the overdue list.
    #[inline(always)]
    fn width(self) -> Option<Tick> {
        let field = self.payload();
        if u64::from(field) < EXACT {
            return Some(u64::from(field));
        }
        if field == END_OF_TIME {
            return None;
        }
        let shift = (field >> MANTISSA & 0x3f) + MIN_SHIFT;
        Some((u64::from(field & ((1 << MANTISSA) - 1)) | 1 << MANTISSA) << shift)
    }

    /// The end kept for a timer due at `deadline`, or `None` for a field no start makes (a
    /// stored exponent past 33, that is a shift past 39, or an end past the end of time). For
    /// the checker: only meaningful while the timer is not on the overdue list.
    pub(super) fn checked_end(self, deadline: Tick) -> Option<Tick> {
        let field = self.payload();
        let largest = (63 - MANTISSA - MIN_SHIFT) << MANTISSA | ((1 << MANTISSA) - 1);
        let wide = u64::from(field) >= EXACT && field != END_OF_TIME;
        if wide && field & !(EXACT as u32) > largest {
            return None;
        }
        match self.width() {
            Some(width) => deadline.checked_add(width),
            None => Some(Tick::MAX),
        }
    }

    /// [`Window::checked_end`] for a field that [`Window::keep`] made for `deadline`.
    #[inline(always)]
    pub(super) fn end(self, deadline: Tick) -> Tick {
        match self.width() {
            Some(width) => deadline + width,
            None => Tick::MAX,
        }
    }

    /// The 31 bits: a kept width, or the drain stamp.
    #[inline(always)]
    pub(super) fn payload(self) -> u32 {
        self.0 & !Self::PERIODIC
    }

    /// Whether the timer has a schedule in `Wheel::periodic`.
    #[inline(always)]
    pub(super) fn periodic(self) -> bool {
        self.0 & Self::PERIODIC != 0
    }

    /// The same flag with another payload (a field from [`Window::keep`], a 31-bit stamp).
    #[inline(always)]
    pub(super) fn with_payload(self, payload: u32) -> Window {
        Window(self.0 & Self::PERIODIC | payload & !Self::PERIODIC)
    }

    /// The same payload with the periodic flag set or cleared.
    #[inline(always)]
    pub(super) fn with_periodic(self, periodic: bool) -> Window {
        Window(self.payload() | if periodic { Self::PERIODIC } else { 0 })
    }
}

/// The end of the window a [`Wheel`] keeps for a timer due at `deadline` with `tolerance`:
/// `deadline + tolerance` when the tolerance is below 2^30 ticks, `u64::MAX` when the sum
/// reaches it, otherwise that end with the window's width rounded down to 25 significant bits.
/// Never later than the end asked for, earlier by less than 2^-24 of the tolerance.
/// [`Wheel::next_wakeup`] reports this end, and [`Wheel::window`] until the wheel's time reaches
/// the deadline.
///
/// ```
/// use callwheel::window_end;
///
/// assert_eq!(window_end(1_000, 5_000), 6_000);
/// let hour = 3_600_000_000_000u64;
/// let end = window_end(hour, hour / 10);
/// assert!(end <= hour + hour / 10 && end > hour + hour / 10 - hour / 10 / (1 << 24));
/// assert_eq!(window_end(5, u64::MAX), u64::MAX);
/// ```
pub fn window_end(deadline: Tick, tolerance: Tick) -> Tick {
    Window::keep(deadline, tolerance).1
}

/// The instant a [`Wheel`] fires a timer due at `deadline` with `tolerance` (driven past it):
/// the deadline for an exact timer, and for a window the first multiple of the coarsest slot
/// width (64^l ticks, l ≥ 1) that lies in the first eighth of the window kept
/// ([`window_end`]), or the deadline when that part holds no multiple of 64. Always within
/// `[deadline, window_end(deadline, tolerance)]`.
///
/// The wheel places a tolerant timer by this instant instead of its deadline, so it lands in
/// a slot that starts exactly there and fires without cascading down the levels (at most one
/// move, when the instant is beyond its level's current rotation at the start). `advance`
/// fires timers in the order of these instants, `next_expiry` reports the earliest of them,
/// `next_wakeup` still the earliest window end.
///
/// ```
/// use callwheel::firing_instant;
///
/// assert_eq!(firing_instant(1_000, 0), 1_000); // exact
/// assert_eq!(firing_instant(1_000, 7), 1_000); // the first eighth holds no multiple of 64
/// // [1_000, 2_000]: its first eighth [1_000, 1_125] holds 1_024, a multiple of 64.
/// assert_eq!(firing_instant(1_000, 1_000), 1_024);
/// // [100_000, 200_000]: the first eighth [100_000, 112_500] holds 102_400 = 25 × 4_096.
/// assert_eq!(firing_instant(100_000, 100_000), 102_400);
/// ```
pub fn firing_instant(deadline: Tick, tolerance: Tick) -> Tick {
    super::geometry::fire_at(deadline, window_end(deadline, tolerance))
}

impl<T> Wheel<T> {
    /// The window end of the live timer at `idx`, which must not be on the overdue list (its
    /// field holds a drain stamp there).
    #[inline(always)]
    pub(super) fn end_of(&self, idx: u32) -> Tick {
        let t = self.storage.timer(idx);
        t.window.end(t.deadline)
    }

    /// Gives the live timer at `idx` the window `[deadline, deadline + tolerance]` (its
    /// deadline field is the caller's); returns the end kept.
    #[inline(always)]
    pub(super) fn set_window(&mut self, idx: u32, deadline: Tick, tolerance: Tick) -> Tick {
        let (field, end) = Window::keep(deadline, tolerance);
        let t = self.storage.timer_mut(idx);
        t.window = t.window.with_payload(field.payload());
        end
    }

    /// Gives the live timer at `idx` the deadline `deadline` and the window field `window`
    /// (from [`Window::keep`] for that deadline), keeping its periodic flag.
    #[inline(always)]
    pub(super) fn retarget(&mut self, idx: u32, deadline: Tick, window: Window) {
        let t = self.storage.timer_mut(idx);
        t.deadline = deadline;
        t.window = t.window.with_payload(window.payload());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kept ends: exact below a tolerance of 2^30 and at the end of time, never later than
    /// asked, within 2^-24 of the tolerance, and in the same order as the tolerances (a wider
    /// window never keeps an earlier end), whatever the deadline.
    #[test]
    fn ends_are_exact_below_2_30_and_rounded_down_by_less_than_2_to_the_minus_24_above() {
        let mut tolerances = alloc::vec![0, 1, 2, EXACT - 1, EXACT, EXACT + 1, u64::MAX];
        for bit in 0..64 {
            for delta in [-2i64, -1, 0, 1, 2] {
                tolerances.push((1u64 << bit).wrapping_add_signed(delta));
            }
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            tolerances.push(x >> (x % 64));
        }
        tolerances.sort_unstable();
        for deadline in [0, 1, 1 << 40, u64::MAX - (1 << 35), u64::MAX - 3, u64::MAX] {
            let mut last = deadline;
            for &tolerance in &tolerances {
                let asked = deadline.saturating_add(tolerance);
                let (field, end) = Window::keep(deadline, tolerance);
                let case = alloc::format!("deadline {deadline} tolerance {tolerance}");
                assert_eq!(field.checked_end(deadline), Some(end), "{case}: decodes");
                assert_eq!(field.end(deadline), end, "{case}: decodes");
                assert!(!field.periodic(), "{case}: the flag stays clear");
                assert!(end <= asked && end >= deadline, "{case}: kept {end}");
                if tolerance < EXACT || asked == u64::MAX {
                    assert_eq!(end, asked, "{case}");
                } else {
                    assert!(asked - end < tolerance >> MANTISSA, "{case}: kept {end}");
                }
                assert!(
                    end >= last,
                    "{case}: kept {end} before a narrower window's {last}"
                );
                last = end;
            }
        }
    }

    /// Fields no start makes are reported by the checker rather than decoded into a wrong end
    /// (or a shift past 63).
    #[test]
    fn fields_no_start_makes_have_no_end() {
        let (widest, _) = Window::keep(0, u64::MAX - 1);
        assert!(widest.checked_end(0).is_some());
        for exponent in 34..63 {
            let field = Window(EXACT as u32 | exponent << MANTISSA);
            assert_eq!(field.checked_end(0), None, "exponent {exponent}");
        }
        assert_eq!(Window(END_OF_TIME).checked_end(7), Some(u64::MAX));
        let (field, _) = Window::keep(0, 1 << 62);
        assert_eq!(
            field.checked_end(u64::MAX - 1),
            None,
            "past the end of time"
        );
    }

    #[test]
    fn the_flag_and_the_payload_do_not_disturb_each_other() {
        let (field, end) = Window::keep(7, 1 << 45);
        let flagged = field.with_periodic(true);
        assert!(flagged.periodic());
        assert_eq!(flagged.end(7), end);
        let stamped = flagged.with_payload(u32::MAX);
        assert!(stamped.periodic());
        assert_eq!(stamped.payload(), u32::MAX >> 1);
        assert!(!stamped.with_periodic(false).periodic());
        assert_eq!(stamped.with_periodic(false).payload(), u32::MAX >> 1);
    }
}
