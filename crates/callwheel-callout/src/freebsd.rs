//! FreeBSD's `struct callout` interface on the callout table: `callout_init`,
//! `callout_reset`, calloutng's `callout_reset_sbt_on`, `callout_stop`, `callout_drain` and
//! the `CALLOUT_PENDING` / `CALLOUT_ACTIVE` flags.
//!
//! A FreeBSD caller owns the `struct callout`; here the table owns the record and the caller
//! holds a [`Handle`] from [`Callouts::callout_init`] until [`Callouts::callout_free`].

use core::hash::Hash;

use callwheel::time::Sbt;
use callwheel::{Handle, Tick};

use crate::backing::Backing;
use crate::flags::{c_prelget, C_ABSOLUTE, C_DIRECT_EXEC, KNOWN};
use crate::pool::{Kind, Sched};
use crate::{Callouts, Error};

impl<S: Backing, C: Copy + Eq + Hash> Callouts<S, C> {
    /// `callout_init`: a persistent callout record, idle and inactive.
    ///
    /// # Errors
    ///
    /// [`Error::PoolExhausted`] when a fixed pool is full; [`Error::NoMemory`] when the pool
    /// needed to grow and the allocator refused.
    pub fn callout_init(&mut self) -> Result<Handle, Error> {
        let idx = self.pool.alloc(Kind::Persistent, None)?;
        Ok(self.pool.handle(idx))
    }

    /// Returns a `callout_init` record to the pool, cancelling it if armed. Its handle (and
    /// every copy) goes stale.
    ///
    /// # Errors
    ///
    /// [`Error::StaleHandle`], [`Error::WrongKind`]; [`Error::Busy`] while its handler runs
    /// (`callout_drain` it first).
    pub fn callout_free(&mut self, handle: Handle) -> Result<(), Error> {
        let idx = self.resolve(handle, Kind::Persistent)?;
        if self.pool.records[idx as usize].running {
            return Err(Error::Busy);
        }
        self.disarm(idx);
        self.pool.release(idx);
        Ok(())
    }

    /// `callout_reset(c, ticks, func, arg)`: (re)arms the callout to run `call` `ticks` ticks
    /// from now (`ticks <= 0` counts as 1) and marks it active. Returns `Ok(true)` if it was
    /// pending (that arming is cancelled).
    ///
    /// # Errors
    ///
    /// [`Error::StaleHandle`], [`Error::WrongKind`], [`Error::Scheme`]. On error the callout
    /// keeps its previous arming.
    pub fn callout_reset(&mut self, handle: Handle, ticks: i64, call: C) -> Result<bool, Error> {
        let idx = self.resolve(handle, Kind::Persistent)?;
        let deadline = self.deadline_in(ticks);
        self.rearm(idx, deadline, 0, false, call)
    }

    /// calloutng's `callout_reset_sbt_on(c, sbt, precision, func, arg, cpu, flags)`.
    ///
    /// - `sbt` is relative to the current tick's time, or absolute (time since tick 0) with
    ///   [`C_ABSOLUTE`]. It is rounded up to a tick; a relative time of 0 or less, or an
    ///   absolute time already passed, means the next tick (as `ticks <= 0` does for
    ///   `callout_reset`).
    /// - The callout may run up to `precision` late, or `interval / 2^n` with `C_PREL(n)`
    ///   ([`c_prel`](crate::flags::c_prel)) if that is larger; the tolerance goes to schemes
    ///   that coalesce (the production wheel), rounded down to whole ticks.
    /// - [`C_DIRECT_EXEC`]: run from [`Callouts::hardclock_with`].
    /// - `cpu` must be 0 or -1: a table is one CPU's callout queue.
    ///
    /// Returns `Ok(true)` if the callout was pending.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidFlags`], [`Error::InvalidCpu`], [`Error::StaleHandle`],
    /// [`Error::WrongKind`], [`Error::Scheme`]. On error nothing changes.
    #[allow(clippy::too_many_arguments)] // The historical signature.
    pub fn callout_reset_sbt_on(
        &mut self,
        handle: Handle,
        sbt: Sbt,
        precision: Sbt,
        call: C,
        cpu: i32,
        flags: u32,
    ) -> Result<bool, Error> {
        if flags & !KNOWN != 0 {
            return Err(Error::InvalidFlags(flags & !KNOWN));
        }
        if cpu != 0 && cpu != -1 {
            return Err(Error::InvalidCpu(cpu));
        }
        let idx = self.resolve(handle, Kind::Persistent)?;
        let now = Sbt::from_ticks(self.ticks(), self.hz).unwrap_or(Sbt::MAX);
        let (deadline, interval) = if flags & C_ABSOLUTE != 0 {
            let next = self.ticks().saturating_add(1);
            (self.ticks_ceil(sbt).max(next), sbt.saturating_sub(now))
        } else {
            let ahead = self.ticks_ceil(sbt).max(1);
            (self.ticks().saturating_add(ahead), sbt)
        };
        let mut slack = precision.max(Sbt::ZERO);
        if let Some(n) = c_prelget(flags) {
            let relative = Sbt::from_raw(interval.max(Sbt::ZERO).as_raw() >> n.min(63));
            slack = slack.max(relative);
        }
        let tolerance = self.ticks_floor(slack);
        self.rearm(idx, deadline, tolerance, flags & C_DIRECT_EXEC != 0, call)
    }

    /// `callout_stop`: cancels the callout if it is pending and clears its active flag.
    /// Returns `Ok(true)` if it was pending. A running handler is not waited for (see
    /// [`Callouts::callout_drain`]).
    ///
    /// # Errors
    ///
    /// [`Error::StaleHandle`], [`Error::WrongKind`].
    pub fn callout_stop(&mut self, handle: Handle) -> Result<bool, Error> {
        let idx = self.resolve(handle, Kind::Persistent)?;
        let was = self.disarm(idx);
        self.pool.records[idx as usize].active = false;
        Ok(was)
    }

    /// `callout_drain`: `callout_stop`, and the guarantee that the handler is not running when
    /// the call returns. In this single-threaded table a running handler can only be the
    /// caller's own, so that case is refused; [`SharedCallouts`](crate::SharedCallouts)
    /// waits for handlers on other threads.
    ///
    /// # Errors
    ///
    /// [`Error::WouldDeadlock`] from the callout's own handler (nothing changes);
    /// [`Error::StaleHandle`], [`Error::WrongKind`].
    pub fn callout_drain(&mut self, handle: Handle) -> Result<bool, Error> {
        let idx = self.resolve(handle, Kind::Persistent)?;
        if self.pool.records[idx as usize].running {
            return Err(Error::WouldDeadlock);
        }
        self.callout_stop(handle)
    }

    /// `callout_pending`: whether the callout is armed and has not yet been handed out.
    ///
    /// # Errors
    ///
    /// [`Error::StaleHandle`], [`Error::WrongKind`].
    pub fn callout_pending(&self, handle: Handle) -> Result<bool, Error> {
        let idx = self.resolve(handle, Kind::Persistent)?;
        Ok(self.pool.records[idx as usize].sched != Sched::Idle)
    }

    /// `callout_active`: set by every reset, cleared by `callout_stop` and
    /// `callout_deactivate` — not by running, so a handler can tell whether it was stopped
    /// after it had been handed out.
    ///
    /// # Errors
    ///
    /// [`Error::StaleHandle`], [`Error::WrongKind`].
    pub fn callout_active(&self, handle: Handle) -> Result<bool, Error> {
        let idx = self.resolve(handle, Kind::Persistent)?;
        Ok(self.pool.records[idx as usize].active)
    }

    /// `callout_deactivate`: clears the active flag (a handler does this first).
    ///
    /// # Errors
    ///
    /// [`Error::StaleHandle`], [`Error::WrongKind`].
    pub fn callout_deactivate(&mut self, handle: Handle) -> Result<(), Error> {
        let idx = self.resolve(handle, Kind::Persistent)?;
        self.pool.records[idx as usize].active = false;
        Ok(())
    }

    fn rearm(
        &mut self,
        idx: u32,
        deadline: Tick,
        tolerance: Tick,
        direct: bool,
        call: C,
    ) -> Result<bool, Error> {
        // Queue the new arming first: if the scheme refuses it, the old one still stands.
        let sched = self.schedule(idx, deadline, tolerance, direct)?;
        let was = self.disarm(idx);
        let r = &mut self.pool.records[idx as usize];
        r.sched = sched;
        r.call = Some(call);
        r.active = true;
        self.after_arm();
        Ok(was)
    }

    /// Ticks in `t`, rounded up, counted in whole nanoseconds: `Sbt::from_millis(2)` and
    /// `2 * SBT_1MS` (which differ by a fraction of a nanosecond) both take 2 ticks at 1000 Hz.
    fn ticks_ceil(&self, t: Sbt) -> Tick {
        let ns = t.max(Sbt::ZERO).to_nanos() as u128;
        (ns * self.hz as u128).div_ceil(1_000_000_000) as Tick
    }

    /// Whole ticks in `t`, rounded down (a tolerance never widens past what was asked).
    fn ticks_floor(&self, t: Sbt) -> Tick {
        let ns = t.max(Sbt::ZERO).to_nanos() as u128;
        (ns * self.hz as u128 / 1_000_000_000) as Tick
    }
}
