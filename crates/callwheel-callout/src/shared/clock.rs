//! Each CPU's clock in a shared table: its interrupt (tick-driven and tickless), its software
//! interrupt, its event window, and what it reports. A table of one CPU passes 0.

use core::hash::Hash;

use callwheel::Tick;

use super::SharedCallouts;
use crate::backing::Backing;
use crate::{Callouts, Error, Stats};

impl<S: Backing, C: Copy + Eq + Hash> SharedCallouts<S, C> {
    /// [`Callouts::hardclock`] on CPU `cpu`'s table: its tick advances by one. Returns `true`
    /// when that CPU's `softclock` may have work.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCpu`].
    pub fn hardclock(&self, cpu: usize) -> Result<bool, Error> {
        Ok(self.cpu(cpu)?.with(Callouts::hardclock))
    }

    /// [`Callouts::hardclock_with`] on CPU `cpu`'s table: the due direct-execution handlers
    /// (and ready drain calls) run on this thread, with the table's lock released while each
    /// runs.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCpu`]; [`Error::SoftclockBusy`] (after advancing the clock) when another
    /// thread is running that CPU's handlers: the direct handlers then run at the start of its
    /// next `softclock`.
    pub fn hardclock_with(&self, cpu: usize, run: impl FnMut(C)) -> Result<bool, Error> {
        let table = self.cpu(cpu)?;
        table.interrupt(Callouts::hardclock, run, &|local| {
            self.make_move(cpu, local)
        })
    }

    /// [`Callouts::softclock`] on CPU `cpu`'s table: runs that table's due callouts (and no
    /// other CPU's) through `run`, releasing the lock while each handler runs and whenever the
    /// step budget is used up, then makes each move that waited for a handler. Returns how
    /// many calls `run` got (handlers, and the drain calls of
    /// [`SharedCallouts::callout_async_drain`]).
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
        Ok(self.cpu(cpu)?.with(|t| t.next_event()))
    }

    /// [`Callouts::process_with`] on CPU `cpu`'s table: the tickless interrupt at `now` (that
    /// table's ticks); due direct-execution handlers run on this thread, as for
    /// [`SharedCallouts::hardclock_with`].
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCpu`]; [`Error::SoftclockBusy`] (after moving the clock) as for
    /// [`SharedCallouts::hardclock_with`].
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
        Ok(self.cpu(cpu)?.with(|t| t.ticks()))
    }

    /// `softticks` of CPU `cpu`'s table: the last tick its `softclock` caught up with.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCpu`].
    pub fn softticks(&self, cpu: usize) -> Result<Tick, Error> {
        Ok(self.cpu(cpu)?.with(|t| t.softticks()))
    }

    /// The counters of CPU `cpu`'s table.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCpu`].
    pub fn stats(&self, cpu: usize) -> Result<Stats, Error> {
        Ok(self.cpu(cpu)?.with(|t| t.stats()))
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

    /// Runs `f` on CPU `cpu`'s [`Callouts`] under its lock, for what the shared table does
    /// not offer itself (its statistics' details, its records, its invariants). `f` must not
    /// call into this shared table.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCpu`].
    pub fn with<R>(
        &self,
        cpu: usize,
        f: impl FnOnce(&mut Callouts<S, C>) -> R,
    ) -> Result<R, Error> {
        Ok(self.cpu(cpu)?.with(f))
    }
}
