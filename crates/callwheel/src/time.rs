//! Time values: the abstract [`Tick`] and the 32.32 fixed-point [`Sbt`].
//!
//! Every timer scheme in this crate counts in [`Tick`]s, a bare `u64` with no unit attached. The
//! callout layer maps real time onto ticks, and for that it needs a time type that is cheap to
//! compute with and exact to convert. This module provides it.
//!
//! # Representation
//!
//! [`Sbt`] is FreeBSD calloutng's `sbintime_t`: a signed 64-bit integer read as 32.32 fixed
//! point. The high 32 bits hold whole seconds and the low 32 bits a binary fraction of a second,
//! so the raw value is the time in units of 2^-32 s.
//!
//! | property   | value                                          |
//! |------------|------------------------------------------------|
//! | unit       | 2^-32 s, about 233 ps                          |
//! | range      | -2^31 s to 2^31 s - 2^-32 s, about ±68 years   |
//! | seconds    | `raw >> 32` (an arithmetic shift: the floor)   |
//! | arithmetic | plain integer addition, subtraction, comparison |
//!
//! calloutng chose this over `struct timespec` (seconds plus nanoseconds, two fields and a carry
//! on every addition) and over `struct bintime` (64.64, 128 bits wide, more precision than any
//! timer needs): one machine word, ordered and added as an integer, converted to seconds by a
//! shift, fine enough for any hardware timer and wide enough for any timeout. Linux's `ktime_t`
//! makes the same one-word choice with nanoseconds as the unit instead.
//!
//! # Rounding
//!
//! A nanosecond is about 4.29 units, so conversions between the two are inexact. Each one rounds
//! in a fixed, documented direction, chosen so that a timer never fires early and so that
//! converting there and back is exact:
//!
//! | conversion                                             | rounds                        | out of range |
//! |--------------------------------------------------------|-------------------------------|--------------|
//! | [`Sbt::from_duration`], `TryFrom<Duration>`              | up (ceiling)                  | `Overflow`   |
//! | [`Sbt::from_duration_saturating`]                      | up (ceiling)                  | saturates    |
//! | [`Sbt::from_secs_nanos`], [`Sbt::try_from_nanos`]      | up (toward +∞)                | `Overflow`   |
//! | [`Sbt::from_nanos`], [`Sbt::from_micros`], [`Sbt::from_millis`] | up (toward +∞)       | saturates    |
//! | [`Sbt::from_secs`]                                     | exact                         | saturates    |
//! | [`Sbt::to_nanos`], [`Sbt::to_secs_nanos`], [`Sbt::to_duration`], `Display` | down (toward -∞) | never out of range |
//! | [`Sbt::to_ticks_ceil`]                                 | up (ceiling)                  | never out of range |
//! | [`Sbt::from_ticks`]                                    | down (floor)                  | `Overflow`   |
//! | [`Sbt::as_secs_f64`]                                   | to nearest `f64`              | never out of range |
//!
//! Rounding up on the way in and down on the way out makes each pair an exact round trip: for
//! every `n` in range, `Sbt::from_nanos(n).to_nanos() == n`, and the same for
//! [`Duration`]s and `(seconds, nanoseconds)` pairs. (It works because one nanosecond is more
//! than one unit: rounding up adds less than one unit, which is less than one nanosecond, and
//! the floor on the way back removes it again.) In fact `from_nanos` and `to_nanos` are
//! adjoint: `Sbt::from_nanos(n) <= s` exactly when `n <= s.to_nanos()`. The tick conversions
//! are adjoint the other way round: `s <= Sbt::from_ticks(t, hz)` exactly when
//! `s.to_ticks_ceil(hz) <= t`.
//!
//! The exact conversions are computed in `i128`, never by multiplying with [`SBT_1NS`]: FreeBSD
//! truncates that constant to 4, so 10^9 of them add up to only 0.93 s.
//!
//! # Arithmetic
//!
//! The `checked_*` methods return `None` on overflow. The `saturating_*` methods, and the
//! operators `+`, `-` (binary and unary), `+=` and `-=`, clamp to [`Sbt::MIN`] and
//! [`Sbt::MAX`]: they never wrap silently and never panic.
//!
//! # Example
//!
//! ```
//! use callwheel::time::{Sbt, SBT_1S};
//! use core::time::Duration;
//!
//! let t = Sbt::from_duration(Duration::from_millis(1500)).unwrap();
//! assert_eq!(t, SBT_1S + Sbt::from_millis(500));
//! assert_eq!(t.to_secs_nanos(), (1, 500_000_000));
//! assert_eq!(t.to_ticks_ceil(1000), Ok(1500));
//! ```

use core::fmt;
use core::ops::{Add, AddAssign, Neg, Sub, SubAssign};
use core::time::Duration;

/// An abstract tick count, the unit every timer scheme in the crate counts in.
///
/// A tick has no fixed length: the caller decides how much real time one tick stands for
/// (see [`Sbt::to_ticks_ceil`] and [`Sbt::from_ticks`] for a clock running at `hz` ticks per
/// second). Schemes start at tick 0 and only ever count forward.
pub type Tick = u64;

/// Number of fractional bits of an [`Sbt`].
const FRAC_BITS: u32 = 32;
/// The raw value of one second.
const ONE_SECOND_RAW: i64 = 1 << FRAC_BITS;
/// The raw value of one second, in `i128` for the exact conversions.
const ONE_SECOND_WIDE: i128 = 1 << FRAC_BITS;
/// Nanoseconds per second.
const NANOS_PER_SEC: i128 = 1_000_000_000;

/// A signed time in 32.32 fixed point: FreeBSD calloutng's `sbintime_t`.
///
/// The raw value counts units of 2^-32 s (about 233 ps); the high 32 bits are whole seconds and
/// the low 32 bits a binary fraction of a second. The range is about ±68 years. See the
/// [module documentation](self) for the rounding rule of each conversion.
///
/// Values compare and hash as their raw integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(transparent)]
pub struct Sbt(i64);

/// One second, `1 << 32` (FreeBSD `SBT_1S`).
pub const SBT_1S: Sbt = Sbt::SECOND;
/// One minute, `SBT_1S * 60` (FreeBSD `SBT_1M`).
pub const SBT_1M: Sbt = Sbt::MINUTE;
/// One millisecond as FreeBSD defines it, `SBT_1S / 1000` truncated to 4 294 967 (`SBT_1MS`).
pub const SBT_1MS: Sbt = Sbt::MILLISECOND;
/// One microsecond as FreeBSD defines it, `SBT_1S / 1000000` truncated to 4 294 (`SBT_1US`).
pub const SBT_1US: Sbt = Sbt::MICROSECOND;
/// One nanosecond as FreeBSD defines it, `SBT_1S / 1000000000` truncated to 4 (`SBT_1NS`).
///
/// This is 7% short of a real nanosecond; use [`Sbt::from_nanos`] for exact conversions.
pub const SBT_1NS: Sbt = Sbt::NANOSECOND;
/// The largest representable time (FreeBSD `SBT_MAX`), just under 2^31 s.
pub const SBT_MAX: Sbt = Sbt::MAX;
/// The smallest representable time, exactly -2^31 s.
pub const SBT_MIN: Sbt = Sbt::MIN;

/// Ceiling of `a / b` for `b > 0`.
const fn div_ceil(a: i128, b: i128) -> i128 {
    let q = a.div_euclid(b);
    if a.rem_euclid(b) == 0 {
        q
    } else {
        q + 1
    }
}

/// Clamps a wide raw value into the range of [`Sbt`].
const fn clamp_raw(raw: i128) -> Sbt {
    if raw > i64::MAX as i128 {
        Sbt::MAX
    } else if raw < i64::MIN as i128 {
        Sbt::MIN
    } else {
        Sbt(raw as i64)
    }
}

/// Converts a wide raw value into an [`Sbt`], or [`TimeError::Overflow`] if it is out of range.
const fn checked_raw(raw: i128) -> Result<Sbt, TimeError> {
    if raw > i64::MAX as i128 || raw < i64::MIN as i128 {
        Err(TimeError::Overflow)
    } else {
        Ok(Sbt(raw as i64))
    }
}

/// The exact raw value of `count / per_sec` seconds, rounded toward positive infinity.
const fn scaled_ceil(count: i128, per_sec: i128) -> i128 {
    div_ceil(count * ONE_SECOND_WIDE, per_sec)
}

/// The exact raw value of a [`Duration`], rounded up.
const fn duration_raw(d: Duration) -> i128 {
    // as_secs() < 2^64, so the shifted value stays below 2^96.
    ((d.as_secs() as i128) << FRAC_BITS) + scaled_ceil(d.subsec_nanos() as i128, NANOS_PER_SEC)
}

impl Sbt {
    /// Zero seconds.
    pub const ZERO: Sbt = Sbt(0);
    /// The largest representable time, `i64::MAX` units: 2^31 s minus one unit.
    pub const MAX: Sbt = Sbt(i64::MAX);
    /// The smallest representable time, `i64::MIN` units: exactly -2^31 s.
    pub const MIN: Sbt = Sbt(i64::MIN);
    /// One second, `1 << 32` units (the same value as [`SBT_1S`]).
    pub const SECOND: Sbt = Sbt(ONE_SECOND_RAW);
    /// One minute, 60 seconds (the same value as [`SBT_1M`]).
    pub const MINUTE: Sbt = Sbt(ONE_SECOND_RAW * 60);
    /// FreeBSD's millisecond, `SECOND / 1000` truncated (the same value as [`SBT_1MS`]).
    pub const MILLISECOND: Sbt = Sbt(ONE_SECOND_RAW / 1_000);
    /// FreeBSD's microsecond, `SECOND / 1_000_000` truncated (the same value as [`SBT_1US`]).
    pub const MICROSECOND: Sbt = Sbt(ONE_SECOND_RAW / 1_000_000);
    /// FreeBSD's nanosecond, `SECOND / 1_000_000_000` truncated to 4 units (the same value as
    /// [`SBT_1NS`]); use [`Sbt::from_nanos`] for exact conversions.
    pub const NANOSECOND: Sbt = Sbt(ONE_SECOND_RAW / 1_000_000_000);

    /// Wraps a raw value counted in units of 2^-32 s.
    #[must_use]
    pub const fn from_raw(raw: i64) -> Sbt {
        Sbt(raw)
    }

    /// Returns the raw value, counted in units of 2^-32 s.
    #[must_use]
    pub const fn as_raw(self) -> i64 {
        self.0
    }

    /// Returns `true` if the time is below zero.
    #[must_use]
    pub const fn is_negative(self) -> bool {
        self.0 < 0
    }

    /// The absolute value, saturating: `Sbt::MIN.abs()` is [`Sbt::MAX`], one unit short.
    #[must_use]
    pub const fn abs(self) -> Sbt {
        Sbt(self.0.saturating_abs())
    }

    /// The negation, or `None` for [`Sbt::MIN`], whose negation is out of range.
    #[must_use]
    pub const fn checked_neg(self) -> Option<Sbt> {
        match self.0.checked_neg() {
            Some(raw) => Some(Sbt(raw)),
            None => None,
        }
    }

    /// The negation, saturating: `-Sbt::MIN` is [`Sbt::MAX`].
    #[must_use]
    pub const fn saturating_neg(self) -> Sbt {
        Sbt(self.0.saturating_neg())
    }

    /// `self + rhs`, or `None` on overflow.
    #[must_use]
    pub const fn checked_add(self, rhs: Sbt) -> Option<Sbt> {
        match self.0.checked_add(rhs.0) {
            Some(raw) => Some(Sbt(raw)),
            None => None,
        }
    }

    /// `self - rhs`, or `None` on overflow.
    #[must_use]
    pub const fn checked_sub(self, rhs: Sbt) -> Option<Sbt> {
        match self.0.checked_sub(rhs.0) {
            Some(raw) => Some(Sbt(raw)),
            None => None,
        }
    }

    /// `self + rhs`, clamped to [`Sbt::MIN`]..=[`Sbt::MAX`].
    #[must_use]
    pub const fn saturating_add(self, rhs: Sbt) -> Sbt {
        Sbt(self.0.saturating_add(rhs.0))
    }

    /// `self - rhs`, clamped to [`Sbt::MIN`]..=[`Sbt::MAX`].
    #[must_use]
    pub const fn saturating_sub(self, rhs: Sbt) -> Sbt {
        Sbt(self.0.saturating_sub(rhs.0))
    }

    /// `self * rhs`, exact, or `None` on overflow.
    #[must_use]
    pub const fn checked_mul(self, rhs: i64) -> Option<Sbt> {
        match self.0.checked_mul(rhs) {
            Some(raw) => Some(Sbt(raw)),
            None => None,
        }
    }

    /// `self * rhs`, exact, clamped to [`Sbt::MIN`]..=[`Sbt::MAX`].
    #[must_use]
    pub const fn saturating_mul(self, rhs: i64) -> Sbt {
        Sbt(self.0.saturating_mul(rhs))
    }

    /// `self / rhs`, truncated toward zero like integer division, or `None` if `rhs` is zero or
    /// the quotient is out of range (only `Sbt::MIN / -1`).
    #[must_use]
    pub const fn checked_div(self, rhs: i64) -> Option<Sbt> {
        match self.0.checked_div(rhs) {
            Some(raw) => Some(Sbt(raw)),
            None => None,
        }
    }

    /// Converts nanoseconds, rounding toward positive infinity and saturating at
    /// [`Sbt::MIN`]/[`Sbt::MAX`] beyond about ±2^31 s.
    ///
    /// The result is the smallest `Sbt` not below `nanos` nanoseconds, so for every `nanos` in
    /// range `Sbt::from_nanos(nanos).to_nanos() == nanos`. See [`Sbt::try_from_nanos`] for the
    /// variant that reports overflow.
    #[must_use]
    pub const fn from_nanos(nanos: i64) -> Sbt {
        clamp_raw(scaled_ceil(nanos as i128, NANOS_PER_SEC))
    }

    /// Converts nanoseconds like [`Sbt::from_nanos`], rounding toward positive infinity, but
    /// reports overflow instead of saturating.
    ///
    /// # Errors
    ///
    /// [`TimeError::Overflow`] if `nanos` is beyond the range of `Sbt` (about ±2^31 s).
    pub const fn try_from_nanos(nanos: i64) -> Result<Sbt, TimeError> {
        checked_raw(scaled_ceil(nanos as i128, NANOS_PER_SEC))
    }

    /// Converts microseconds, rounding toward positive infinity and saturating at
    /// [`Sbt::MIN`]/[`Sbt::MAX`].
    ///
    /// Equal to `Sbt::from_nanos(micros * 1000)` whenever that product fits in an `i64`.
    #[must_use]
    pub const fn from_micros(micros: i64) -> Sbt {
        clamp_raw(scaled_ceil(micros as i128, 1_000_000))
    }

    /// Converts milliseconds, rounding toward positive infinity and saturating at
    /// [`Sbt::MIN`]/[`Sbt::MAX`].
    ///
    /// Equal to `Sbt::from_nanos(millis * 1_000_000)` whenever that product fits in an `i64`.
    #[must_use]
    pub const fn from_millis(millis: i64) -> Sbt {
        clamp_raw(scaled_ceil(millis as i128, 1_000))
    }

    /// Converts whole seconds, exactly within range and saturating at [`Sbt::MIN`]/[`Sbt::MAX`]
    /// outside `i32::MIN..=i32::MAX`.
    #[must_use]
    pub const fn from_secs(secs: i64) -> Sbt {
        clamp_raw((secs as i128) << FRAC_BITS)
    }

    /// Converts a timespec-like pair of whole seconds and nanoseconds, rounding the nanoseconds
    /// toward positive infinity.
    ///
    /// The value is `secs + nanos / 10^9` seconds, also for negative `secs`: `(-1, 500_000_000)`
    /// is -0.5 s. This is the inverse of [`Sbt::to_secs_nanos`].
    ///
    /// # Errors
    ///
    /// [`TimeError::InvalidNanos`] if `nanos >= 1_000_000_000`; [`TimeError::Overflow`] if the
    /// value is out of range (roughly, `secs` outside `i32::MIN..=i32::MAX`).
    pub const fn from_secs_nanos(secs: i64, nanos: u32) -> Result<Sbt, TimeError> {
        if nanos as i128 >= NANOS_PER_SEC {
            return Err(TimeError::InvalidNanos);
        }
        checked_raw(((secs as i128) << FRAC_BITS) + scaled_ceil(nanos as i128, NANOS_PER_SEC))
    }

    /// Converts a [`Duration`], rounding up to the next representable value, so that a timer set
    /// from a `Duration` never fires early.
    ///
    /// The conversion is exact `i128` arithmetic. Converting back with [`Sbt::to_duration`]
    /// gives the original `Duration`.
    ///
    /// # Errors
    ///
    /// [`TimeError::Overflow`] if the duration is 2^31 s (about 68 years) or longer.
    pub const fn from_duration(d: Duration) -> Result<Sbt, TimeError> {
        checked_raw(duration_raw(d))
    }

    /// Converts a [`Duration`] like [`Sbt::from_duration`], rounding up, but saturating at
    /// [`Sbt::MAX`] instead of failing.
    #[must_use]
    pub const fn from_duration_saturating(d: Duration) -> Sbt {
        clamp_raw(duration_raw(d))
    }

    /// Converts to nanoseconds, rounding toward negative infinity.
    ///
    /// Every `Sbt` fits (the range is about ±2.1 × 10^18 ns). The result is the largest `n` with
    /// `Sbt::from_nanos(n) <= self`, so nanoseconds convert to `Sbt` and back exactly.
    #[must_use]
    pub const fn to_nanos(self) -> i64 {
        // An arithmetic shift right is a floor division by 2^32.
        ((self.0 as i128 * NANOS_PER_SEC) >> FRAC_BITS) as i64
    }

    /// Splits into whole seconds and nanoseconds like a `timespec`, rounding toward negative
    /// infinity.
    ///
    /// The nanoseconds are always in `0..1_000_000_000`, also for negative values: -0.5 s is
    /// `(-1, 500_000_000)`. The pair denotes exactly `self.to_nanos()` nanoseconds.
    #[must_use]
    pub const fn to_secs_nanos(self) -> (i64, u32) {
        let secs = self.0 >> FRAC_BITS;
        let frac = (self.0 as u64) & (u32::MAX as u64);
        // frac < 2^32 and 10^9 < 2^30, so the product fits in a u64.
        let nanos = (frac * NANOS_PER_SEC as u64) >> FRAC_BITS;
        (secs, nanos as u32)
    }

    /// Converts to a [`Duration`], rounding down to whole nanoseconds.
    ///
    /// # Errors
    ///
    /// [`TimeError::Negative`] if the value is below zero.
    pub const fn to_duration(self) -> Result<Duration, TimeError> {
        if self.0 < 0 {
            return Err(TimeError::Negative);
        }
        let (secs, nanos) = self.to_secs_nanos();
        Ok(Duration::new(secs as u64, nanos))
    }

    /// Returns the value in seconds as the `f64` nearest to it (the raw value is rounded to 53
    /// significant bits; the scaling by 2^-32 is exact).
    #[must_use]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / ONE_SECOND_RAW as f64
    }

    /// How many ticks of a clock running at `hz` ticks per second it takes to cover this much
    /// time, rounded up: the smallest `t` with `self <= Sbt::from_ticks(t, hz)`.
    ///
    /// Zero takes zero ticks; any positive value takes at least one. The result always fits.
    ///
    /// # Errors
    ///
    /// [`TimeError::ZeroRate`] if `hz` is zero (checked first); [`TimeError::Negative`] if the
    /// value is below zero.
    pub const fn to_ticks_ceil(self, hz: u32) -> Result<Tick, TimeError> {
        if hz == 0 {
            return Err(TimeError::ZeroRate);
        }
        if self.0 < 0 {
            return Err(TimeError::Negative);
        }
        // Below 2^63 * 2^32 / 2^32, so it fits in a u64.
        Ok(div_ceil(self.0 as i128 * hz as i128, ONE_SECOND_WIDE) as Tick)
    }

    /// The time `ticks` ticks of a clock at `hz` ticks per second take, rounded down: the
    /// largest `s` with `s.to_ticks_ceil(hz) <= ticks`.
    ///
    /// Rounding down makes the round trip exact, `Sbt::from_ticks(t, hz)?.to_ticks_ceil(hz)` is
    /// `t`, so a deadline computed from ticks maps back onto the same tick. For one tick it is
    /// FreeBSD's `tick_sbt`, `SBT_1S / hz` truncated.
    ///
    /// # Errors
    ///
    /// [`TimeError::ZeroRate`] if `hz` is zero; [`TimeError::Overflow`] if the time is 2^31 s or
    /// longer.
    pub const fn from_ticks(ticks: Tick, hz: u32) -> Result<Sbt, TimeError> {
        if hz == 0 {
            return Err(TimeError::ZeroRate);
        }
        // ticks < 2^64, so the shifted value stays below 2^96.
        checked_raw(((ticks as i128) << FRAC_BITS) / hz as i128)
    }
}

/// Saturating addition: clamps to [`Sbt::MIN`]/[`Sbt::MAX`], never wraps and never panics.
impl Add for Sbt {
    type Output = Sbt;

    fn add(self, rhs: Sbt) -> Sbt {
        self.saturating_add(rhs)
    }
}

/// Saturating subtraction: clamps to [`Sbt::MIN`]/[`Sbt::MAX`], never wraps and never panics.
impl Sub for Sbt {
    type Output = Sbt;

    fn sub(self, rhs: Sbt) -> Sbt {
        self.saturating_sub(rhs)
    }
}

/// Saturating negation: `-Sbt::MIN` is [`Sbt::MAX`]; never wraps and never panics.
impl Neg for Sbt {
    type Output = Sbt;

    fn neg(self) -> Sbt {
        self.saturating_neg()
    }
}

/// Saturating `+=`, like [`Add`].
impl AddAssign for Sbt {
    fn add_assign(&mut self, rhs: Sbt) {
        *self = self.saturating_add(rhs);
    }
}

/// Saturating `-=`, like [`Sub`].
impl SubAssign for Sbt {
    fn sub_assign(&mut self, rhs: Sbt) {
        *self = self.saturating_sub(rhs);
    }
}

/// Rounds up, like [`Sbt::from_duration`].
impl TryFrom<Duration> for Sbt {
    type Error = TimeError;

    fn try_from(d: Duration) -> Result<Sbt, TimeError> {
        Sbt::from_duration(d)
    }
}

/// Rounds down, like [`Sbt::to_duration`].
impl TryFrom<Sbt> for Duration {
    type Error = TimeError;

    fn try_from(t: Sbt) -> Result<Duration, TimeError> {
        t.to_duration()
    }
}

/// Prints seconds with nine decimals, rounded toward negative infinity like
/// [`Sbt::to_secs_nanos`]: `1.500000000s`, `-0.000000001s`.
impl fmt::Display for Sbt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (secs, nanos) = self.to_secs_nanos();
        if secs >= 0 {
            write!(f, "{secs}.{nanos:09}s")
        } else if nanos == 0 {
            write!(f, "-{}.000000000s", secs.unsigned_abs())
        } else {
            // secs + nanos / 10^9 = -((-secs - 1) + (10^9 - nanos) / 10^9)
            let whole = (secs + 1).unsigned_abs();
            let frac = 1_000_000_000 - nanos;
            write!(f, "-{whole}.{frac:09}s")
        }
    }
}

/// Why a time conversion failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TimeError {
    /// The value does not fit: beyond about ±68 years (2^31 s) for an [`Sbt`].
    Overflow,
    /// The value is negative where only non-negative values make sense (a [`Duration`], a tick
    /// count).
    Negative,
    /// A nanoseconds field is 1 000 000 000 or more.
    InvalidNanos,
    /// A clock rate of zero ticks per second.
    ZeroRate,
}

impl fmt::Display for TimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimeError::Overflow => "time value out of range (about ±68 years)",
            TimeError::Negative => "negative time value where a non-negative one is required",
            TimeError::InvalidNanos => "nanoseconds field is 1000000000 or more",
            TimeError::ZeroRate => "clock rate of zero ticks per second",
        })
    }
}

impl core::error::Error for TimeError {}
