//! Each CPU's clock in a per-CPU set: its interrupt (tick-driven and tickless), its software
//! interrupt, its event window, and what it reports.

use core::hash::Hash;

use callwheel::Tick;

use super::PerCpuCallouts;
use crate::backing::Backing;
use crate::{Callouts, Error, Stats};

impl<S: Backing, C: Copy + Eq + Hash> PerCpuCallouts<S, C> {
    /// [`Callouts::hardclock`] on CPU `cpu`'s table.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCpu`].
    pub fn hardclock(&self, cpu: usize) -> Result<bool, Error> {
        Ok(self.cpu(cpu)?.hardclock())
    }

    /// [`SharedCallouts::hardclock_with`](crate::SharedCallouts::hardclock_with) on CPU `cpu`'s table.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCpu`]; [`Error::SoftclockBusy`] as for [`SharedCallouts`](crate::SharedCallouts).
    pub fn hardclock_with(&self, cpu: usize, run: impl FnMut(C)) -> Result<bool, Error> {
        let table = self.cpu(cpu)?;
        table.interrupt(Callouts::hardclock, run, &|local| {
            self.make_move(cpu, local)
        })
    }

    /// [`SharedCallouts::softclock`](crate::SharedCallouts::softclock) on CPU `cpu`'s table: runs that table's due callouts (and
    /// no other CPU's) through `run`, then makes each move that waited for a handler. Returns
    /// how many calls `run` got.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCpu`]; [`Error::SoftclockBusy`] when another thread runs this CPU's
    /// handlers.
    pub fn softclock(&self, cpu: usize, run: impl FnMut(C)) -> Result<usize, Error> {
        let table = self.cpu(cpu)?;
        table.softclock_moving(run, &|local| self.make_move(cpu, local))
    }

    /// [`Callouts::next_event`] of CPU `cpu`'s table: its event window, in its ticks.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCpu`].
    pub fn next_event(&self, cpu: usize) -> Result<Option<(Tick, Tick)>, Error> {
        Ok(self.cpu(cpu)?.next_event())
    }

    /// [`SharedCallouts::process_with`](crate::SharedCallouts::process_with) on CPU `cpu`'s table: the tickless interrupt at `now`
    /// (that table's ticks).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCpu`]; [`Error::SoftclockBusy`] as for [`SharedCallouts`](crate::SharedCallouts).
    pub fn process_with(&self, cpu: usize, now: Tick, run: impl FnMut(C)) -> Result<bool, Error> {
        let table = self.cpu(cpu)?;
        table.interrupt(|t| t.callout_process(now), run, &|local| {
            self.make_move(cpu, local)
        })
    }

    /// `ticks` of CPU `cpu`'s table.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCpu`].
    pub fn ticks(&self, cpu: usize) -> Result<Tick, Error> {
        Ok(self.cpu(cpu)?.ticks())
    }

    /// The counters of CPU `cpu`'s table.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCpu`].
    pub fn stats(&self, cpu: usize) -> Result<Stats, Error> {
        Ok(self.cpu(cpu)?.stats())
    }

    /// Callouts armed on CPU `cpu`'s table and not yet handed out (moves waiting there
    /// counted).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCpu`].
    pub fn pending(&self, cpu: usize) -> Result<usize, Error> {
        Ok(self.cpu(cpu)?.with(|t| t.pending()))
    }
}
