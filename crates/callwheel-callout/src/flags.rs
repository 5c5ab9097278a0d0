//! calloutng's flags for `callout_reset_sbt_on`, with FreeBSD's bit values, and the precision
//! rule they take part in.

use callwheel::time::Sbt;

/// Run the handler from `hardclock` itself (the interrupt context) instead of queueing it for
/// `softclock`: see [`Callouts::hardclock_with`](crate::Callouts::hardclock_with).
pub const C_DIRECT_EXEC: u32 = 0x0001;
/// The time is absolute (since tick 0), not relative to the current tick.
pub const C_ABSOLUTE: u32 = 0x0200;
/// Accepted for compatibility: the time is already in ticks' resolution.
pub const C_HARDCLOCK: u32 = 0x0100;

const C_PRELBITS: u32 = 7;
const C_PRELRANGE: u32 = (1 << C_PRELBITS) - 1;
const C_PRELMASK: u32 = C_PRELRANGE << 1;

/// Relative precision: the callout may fire up to `time / 2^n` late (calloutng's `C_PREL(n)`),
/// or by the absolute `precision` argument if that is larger. `n` is at most 126.
pub const fn c_prel(n: u32) -> u32 {
    ((n + 1) & C_PRELRANGE) << 1
}

/// The `n` of a `C_PREL(n)` in `flags`, if one is set.
pub const fn c_prelget(flags: u32) -> Option<u32> {
    let field = (flags & C_PRELMASK) >> 1;
    if field == 0 {
        None
    } else {
        Some(field - 1)
    }
}

/// How late a callout (or a sleep) due `interval` from now may run: the absolute `precision`,
/// or `interval / 2^n` with `C_PREL(n)` set in `flags`, whichever is larger; negative values
/// count as zero (calloutng's rule in `callout_reset_sbt_on`).
///
/// ```
/// use callwheel::time::Sbt;
/// use callwheel_callout::flags::{c_prel, tolerance};
///
/// let ten_s = Sbt::from_secs(10);
/// assert_eq!(tolerance(ten_s, Sbt::ZERO, c_prel(1)), Sbt::from_secs(5));
/// assert_eq!(tolerance(ten_s, Sbt::from_secs(7), c_prel(1)), Sbt::from_secs(7));
/// assert_eq!(tolerance(ten_s, Sbt::from_secs(-7), 0), Sbt::ZERO);
/// ```
pub fn tolerance(interval: Sbt, precision: Sbt, flags: u32) -> Sbt {
    let mut tolerance = precision.max(Sbt::ZERO);
    if let Some(n) = c_prelget(flags) {
        let relative = Sbt::from_raw(interval.max(Sbt::ZERO).as_raw() >> n.min(63));
        tolerance = tolerance.max(relative);
    }
    tolerance
}

/// FreeBSD's default allowed deviation of a callout's time, in percent
/// (`kern.timecounter.alldeviation`): see [`deviation_shift`].
pub const DEFAULT_DEVIATION_PERCENT: u32 = 5;

/// calloutng's default precision for a callout armed without `C_PREL`: `interval >> shift`,
/// the shift derived from an allowed deviation of `percent` % as FreeBSD derives its
/// `tc_precexp` (the highest bit of `t + t/2` for `t = (99 + percent) / percent`): 5 % gives
/// 4, one sixteenth of the interval; 10 % gives 3, 1 % gives 7. `None` for 0 %: exact.
///
/// ```
/// use callwheel_callout::flags::deviation_shift;
///
/// assert_eq!(deviation_shift(5), Some(4));
/// assert_eq!(deviation_shift(10), Some(3));
/// assert_eq!(deviation_shift(100), Some(0));
/// assert_eq!(deviation_shift(0), None);
/// ```
pub fn deviation_shift(percent: u32) -> Option<u32> {
    if percent == 0 {
        return None;
    }
    let t = (99 + percent.min(100)) / percent.min(100);
    Some((t + t / 2).ilog2())
}

/// How late a callout due `interval` from now may run when armed through FreeBSD's calls
/// (`callout_when`'s rule): [`tolerance`], or without `C_PREL` at least `interval >> shift`, the
/// table's default deviation ([`deviation_shift`]; `None`: none).
///
/// ```
/// use callwheel::time::Sbt;
/// use callwheel_callout::flags::{c_prel, tolerance_with_deviation};
///
/// let sixteen_s = Sbt::from_secs(16);
/// assert_eq!(tolerance_with_deviation(sixteen_s, Sbt::ZERO, 0, Some(4)), Sbt::from_secs(1));
/// assert_eq!(tolerance_with_deviation(sixteen_s, Sbt::from_secs(2), 0, Some(4)), Sbt::from_secs(2));
/// assert_eq!(tolerance_with_deviation(sixteen_s, Sbt::ZERO, c_prel(3), Some(4)), Sbt::from_secs(2));
/// assert_eq!(tolerance_with_deviation(sixteen_s, Sbt::ZERO, 0, None), Sbt::ZERO);
/// ```
pub fn tolerance_with_deviation(
    interval: Sbt,
    precision: Sbt,
    flags: u32,
    shift: Option<u32>,
) -> Sbt {
    let asked = tolerance(interval, precision, flags);
    match shift {
        Some(s) if c_prelget(flags).is_none() => {
            asked.max(Sbt::from_raw(interval.max(Sbt::ZERO).as_raw() >> s.min(63)))
        }
        _ => asked,
    }
}

/// Every bit this implementation understands.
pub const KNOWN: u32 = C_DIRECT_EXEC | C_ABSOLUTE | C_HARDCLOCK | C_PRELMASK;
