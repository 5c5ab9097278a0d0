//! The BSD calls on a shared table: Costello & Varghese's `timeout` / `untimeout` and
//! `setcallout` / `unsetcallout`, on CPU 0's queue (BSD had one callwheel). Their callouts
//! never move, so they need no directory entry: `setcallout`'s handle is CPU 0's record's.

use core::hash::Hash;

use super::SharedCallouts;
use crate::backing::Backing;
use crate::{Error, Handle};

impl<S: Backing, C: Copy + Eq + Hash> SharedCallouts<S, C> {
    /// [`Callouts::timeout`](crate::Callouts::timeout) on CPU 0: runs `call` `ticks` ticks from now (`ticks <= 0`
    /// counts as 1), found again by `call` alone.
    ///
    /// # Errors
    ///
    /// As [`Callouts::timeout`](crate::Callouts::timeout).
    pub fn timeout(&self, call: C, ticks: i64) -> Result<(), Error> {
        self.cpus[0].with(|t| t.timeout(call, ticks))
    }

    /// [`Callouts::untimeout`](crate::Callouts::untimeout) on CPU 0: cancels the earliest pending `timeout` of `call`;
    /// whether there was one.
    pub fn untimeout(&self, call: C) -> bool {
        self.cpus[0].with(|t| t.untimeout(call))
    }

    /// [`Callouts::setcallout`](crate::Callouts::setcallout) on CPU 0: as `timeout`, named by the handle it returns.
    ///
    /// # Errors
    ///
    /// As [`Callouts::setcallout`](crate::Callouts::setcallout).
    pub fn setcallout(&self, call: C, ticks: i64) -> Result<Handle, Error> {
        self.cpus[0].with(|t| t.setcallout(call, ticks))
    }

    /// [`Callouts::unsetcallout`](crate::Callouts::unsetcallout) on CPU 0: cancels the callout `handle` names if it is still
    /// pending; whether it was.
    ///
    /// # Errors
    ///
    /// As [`Callouts::unsetcallout`](crate::Callouts::unsetcallout).
    pub fn unsetcallout(&self, handle: Handle) -> Result<bool, Error> {
        match self.cpus[0].with(|t| t.unsetcallout(handle)) {
            // On a table of several CPUs, a `callout_init` handle names a directory entry, not
            // CPU 0's record: the wrong kind, as a single [`Callouts`](crate::Callouts) table
            // says (on one CPU, CPU 0's table has said so itself).
            Err(Error::StaleHandle) if self.lock_directory().index(handle).is_ok() => {
                Err(Error::WrongKind)
            }
            other => other,
        }
    }
}
