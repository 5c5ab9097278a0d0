//! A callout's move between the CPUs of a shared table: when a reset asks it to run, and the
//! move a CPU's table records while the callout's handler runs, made when the handler
//! returns.

use callwheel::time::Sbt;

/// When a reset asks a callout to run: as the caller gave it, converted to a table's ticks by
/// the table that takes the callout, or already converted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum When {
    /// Converted on the clock of the table that takes the callout, when the reset was made (a
    /// deferred move: FreeBSD converts the time when `callout_reset` is called, whenever the
    /// migration happens): the deadline, the tolerance and whether it runs directly.
    At {
        deadline: callwheel::Tick,
        tolerance: callwheel::Tick,
        direct: bool,
    },
    /// `callout_reset`'s tick count (`<= 0` counts as 1).
    Ticks(i64),
    /// `callout_reset_sbt_on`'s time, precision and flags (already checked).
    Sbt {
        sbt: Sbt,
        precision: Sbt,
        flags: u32,
    },
}

/// A move of a persistent callout to another table, recorded while its handler runs and made
/// when the handler returns (FreeBSD's `CALLOUT_DFRMIGRATION`). Only a
/// [`SharedCallouts`](crate::SharedCallouts) records these; the table keeps them so that
/// every call on the callout (stop, drain, free, pending) sees them under the table's lock.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Moving<C> {
    /// The record and its generation.
    pub(crate) idx: u32,
    pub(crate) generation: u32,
    /// The table (CPU) it goes to; may be this one, when a later reset asked for it.
    pub(crate) cpu: usize,
    /// The set's directory entry of the callout.
    pub(crate) entry: u32,
    /// The arming to make there, converted on that table's clock when the reset was made.
    pub(crate) when: When,
    /// The arming as the reset gave it: made on this table instead, on its own clock, when
    /// the other cannot take the callout.
    pub(crate) asked: When,
    pub(crate) call: C,
}
