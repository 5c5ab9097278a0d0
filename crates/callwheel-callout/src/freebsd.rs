//! FreeBSD's `struct callout` interface on the callout table: `callout_init`,
//! `callout_reset`, calloutng's `callout_reset_sbt_on`, `callout_stop`, `callout_drain`,
//! `callout_async_drain` and the `CALLOUT_PENDING` / `CALLOUT_ACTIVE` flags.
//!
//! A FreeBSD caller owns the `struct callout`; here the table owns the record and the caller
//! holds a [`Handle`] from [`Callouts::callout_init`] until [`Callouts::callout_free`].

use core::hash::Hash;

use callwheel::time::Sbt;
use callwheel::{Handle, Tick};

use crate::backing::Backing;
use crate::flags::{tolerance_with_deviation, C_ABSOLUTE, C_DIRECT_EXEC, KNOWN};
use crate::moves::{Moving, When};
use crate::pool::{Kind, Sched};
use crate::{Callouts, Error};

/// What [`Callouts::callout_async_drain`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsyncDrain {
    /// The callout's handler is running: the drain call will be handed to the runner once,
    /// right after the handler returns (FreeBSD's return value 0, "drain pending"). The
    /// callout was stopped as well; resets are ignored until the handler has returned.
    Pending,
    /// The handler was not running: the callout is stopped and the drain call is never handed
    /// out (FreeBSD's non-zero return). `true` if this cancelled a pending firing.
    Stopped(bool),
}

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
        if self.pool.records[idx].running {
            return Err(Error::Busy);
        }
        self.disarm(idx);
        self.pool.release(idx);
        Ok(())
    }

    /// `callout_reset(c, ticks, func, arg)`: (re)arms the callout to run `call` `ticks` ticks
    /// from now (`ticks <= 0` counts as 1) and marks it active. Like FreeBSD's, it may run up
    /// to the table's default deviation of `ticks` late ([`Config::deviation_percent`](crate::Config::deviation_percent), a
    /// sixteenth; whole ticks, at the window's firing instant). Returns `Ok(true)` if it was
    /// pending (that arming is cancelled). Ignored (`Ok(false)`) while a
    /// [`Callouts::callout_async_drain`] waits for the handler.
    ///
    /// # Errors
    ///
    /// [`Error::StaleHandle`], [`Error::WrongKind`], [`Error::Scheme`]. On error the callout
    /// keeps its previous arming.
    pub fn callout_reset(&mut self, handle: Handle, ticks: i64, call: C) -> Result<bool, Error> {
        let idx = self.resolve(handle, Kind::Persistent)?;
        self.arm_at(idx, When::Ticks(ticks), call)
    }

    /// calloutng's `callout_reset_sbt_on(c, sbt, precision, func, arg, cpu, flags)`.
    ///
    /// - `sbt` is relative to the current tick's time, or absolute (time since tick 0) with
    ///   [`C_ABSOLUTE`]. It is rounded up to a tick (the exact ceiling of `sbt * hz / 2^32`);
    ///   a relative time of 0 or less, or an absolute time already passed, means the next tick
    ///   (as `ticks <= 0` does for `callout_reset`). A deadline after the last tick is
    ///   [`Error::PastEndOfTime`].
    /// - The callout may run up to `precision` late, or `interval / 2^n` with `C_PREL(n)`
    ///   ([`c_prel`](crate::flags::c_prel)) if that is larger; for a relative time without
    ///   `C_PREL`, at least the
    ///   table's default deviation of the interval ([`Config::deviation_percent`](crate::Config::deviation_percent): a sixteenth),
    ///   as calloutng's `callout_when` allows. Rounded down to whole ticks, the window goes to
    ///   the backing, which runs the callout at the window's firing instant
    ///   ([`Backing::start_within`](crate::Backing::start_within)).
    /// - [`C_DIRECT_EXEC`]: run from [`Callouts::hardclock_with`].
    /// - `cpu` must be 0 or -1: a table is one CPU's callout queue (a
    ///   [`SharedCallouts`](crate::SharedCallouts) takes any of its CPUs).
    ///
    /// While a [`Callouts::callout_async_drain`] waits for the handler to return, the reset is
    /// ignored (`Ok(false)`), as FreeBSD ignores resets of a callout being drained.
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
        check_flags(flags)?;
        if cpu != 0 && cpu != -1 {
            return Err(Error::InvalidCpu(cpu));
        }
        let idx = self.resolve(handle, Kind::Persistent)?;
        let when = When::Sbt {
            sbt,
            precision,
            flags,
        };
        self.arm_at(idx, when, call)
    }

    /// The deadline, tolerance and direct-execution flag `when` means on this table now.
    ///
    /// A time is converted to the first tick at or after it: the exact ceiling of
    /// `sbt * hz / 2^32` (a relative time counted from the current tick), and at least the
    /// next tick (an absolute time already passed runs at the next tick, as FreeBSD's runs at
    /// the next interrupt).
    ///
    /// # Errors
    ///
    /// [`Error::PastEndOfTime`] for a deadline after the last tick, `u64::MAX` (at the last
    /// tick there is no next one).
    pub(crate) fn arming(&self, when: When) -> Result<(Tick, Tick, bool), Error> {
        let (sbt, precision, flags) = match when {
            When::At {
                deadline,
                tolerance,
                direct,
            } => {
                // Converted when the reset was made: a time this table has passed since runs
                // at its next tick, as an absolute time already passed does.
                let next = self.ticks().checked_add(1).ok_or(Error::PastEndOfTime)?;
                return Ok((deadline.max(next), tolerance, direct));
            }
            When::Ticks(n) => {
                // callout_reset: the default precision, a share of the ticks ahead.
                let deadline = self.deadline_in(n)?;
                return Ok((deadline, self.default_tolerance(deadline), false));
            }
            When::Sbt {
                sbt,
                precision,
                flags,
            } => (sbt, precision, flags),
        };
        let (deadline, interval) = if flags & C_ABSOLUTE != 0 {
            // The table's time as an sbt; a table past 2^31 s has every absolute time behind it.
            let now = Sbt::from_ticks(self.ticks(), self.hz).unwrap_or(Sbt::MAX);
            let next = self.ticks().checked_add(1).ok_or(Error::PastEndOfTime)?;
            (self.ticks_ceil(sbt).max(next), sbt.saturating_sub(now))
        } else {
            let ahead = self.ticks_ceil(sbt).max(1);
            let deadline = self
                .ticks()
                .checked_add(ahead)
                .ok_or(Error::PastEndOfTime)?;
            (deadline, sbt)
        };
        Ok((
            deadline,
            // FreeBSD's callout_when gives an absolute time only the caller's precision.
            self.ticks_floor(if flags & C_ABSOLUTE != 0 {
                tolerance_with_deviation(interval, precision, flags, None)
            } else {
                tolerance_with_deviation(interval, precision, flags, self.deviation)
            }),
            flags & C_DIRECT_EXEC != 0,
        ))
    }

    /// (Re)arms persistent record `idx` here for `when` (see [`Callouts::arming`]).
    pub(crate) fn arm_at(&mut self, idx: u32, when: When, call: C) -> Result<bool, Error> {
        if self.is_draining(idx) {
            // Ignored before anything is read from `when`: a time the table cannot hold is
            // not an error for a reset that would be ignored anyway.
            return Ok(false);
        }
        let (deadline, tolerance, direct) = self.arming(when)?;
        self.rearm(idx, deadline, tolerance, direct, call)
    }

    /// A new persistent record armed for `when` with `call` (a callout moved here from another
    /// CPU); nothing is left behind on error.
    pub(crate) fn arm_fresh(&mut self, when: When, call: C) -> Result<Handle, Error> {
        let local = self.callout_init()?;
        let idx = self.resolve(local, Kind::Persistent)?;
        match self.arm_at(idx, when, call) {
            Ok(_) => Ok(local),
            Err(e) => {
                let _ = self.callout_free(local);
                Err(e)
            }
        }
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
        self.pool.records[idx].active = false;
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
        if self.pool.records[idx].running {
            return Err(Error::WouldDeadlock);
        }
        self.callout_stop(handle)
    }

    /// `callout_async_drain(c, drain)`: stops the callout without waiting. If its handler is
    /// running (on another thread of a [`SharedCallouts`](crate::SharedCallouts), or this is
    /// called from the handler itself), `drain` is given the call the callout was last armed
    /// with (the running handler's own, unless the handler re-armed it with another), and what
    /// it returns is handed to the runner once, right after the handler returns:
    /// [`AsyncDrain::Pending`]. Until then resets are ignored, so once the drain call runs the
    /// callout is neither pending nor running, and may be freed from there. Otherwise the
    /// callout is stopped as by `callout_stop` and `drain` is never called:
    /// [`AsyncDrain::Stopped`], with whether a pending firing was cancelled.
    ///
    /// In C the drain is `drain_fn(arg)`, with the callout's argument.
    ///
    /// # Errors
    ///
    /// [`Error::Busy`] when a drain already waits for the running handler;
    /// [`Error::NoMemory`] when the room for the drain call cannot be reserved;
    /// [`Error::StaleHandle`], [`Error::WrongKind`]. Nothing changes on error.
    pub fn callout_async_drain(
        &mut self,
        handle: Handle,
        drain: impl FnOnce(C) -> C,
    ) -> Result<AsyncDrain, Error> {
        let idx = self.resolve(handle, Kind::Persistent)?;
        self.async_drain_at(idx, drain)
    }

    /// [`Callouts::callout_async_drain`] on live persistent record `idx`.
    pub(crate) fn async_drain_at(
        &mut self,
        idx: u32,
        drain: impl FnOnce(C) -> C,
    ) -> Result<AsyncDrain, Error> {
        let r = &self.pool.records[idx];
        if !r.running {
            let was = self.disarm(idx);
            self.pool.records[idx].active = false;
            return Ok(AsyncDrain::Stopped(was));
        }
        if self.is_draining(idx) {
            return Err(Error::Busy);
        }
        let call = r.call.expect("a running callout carries its call");
        self.arrange_drain(idx, drain(call))?;
        self.disarm(idx);
        self.pool.records[idx].active = false;
        Ok(AsyncDrain::Pending)
    }

    /// `callout_pending`: whether the callout is armed and has not yet been handed out (a
    /// move to another CPU's table waiting for the handler to return counts as armed).
    ///
    /// # Errors
    ///
    /// [`Error::StaleHandle`], [`Error::WrongKind`].
    pub fn callout_pending(&self, handle: Handle) -> Result<bool, Error> {
        let idx = self.resolve(handle, Kind::Persistent)?;
        Ok(self.pool.records[idx].sched != Sched::Idle || self.move_of(idx).is_some())
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
        Ok(self.pool.records[idx].active)
    }

    /// `callout_deactivate`: clears the active flag (a handler does this first).
    ///
    /// # Errors
    ///
    /// [`Error::StaleHandle`], [`Error::WrongKind`].
    pub fn callout_deactivate(&mut self, handle: Handle) -> Result<(), Error> {
        let idx = self.resolve(handle, Kind::Persistent)?;
        self.pool.records[idx].active = false;
        Ok(())
    }

    /// Records that persistent record `idx`, whose handler runs now (or whose move is already
    /// recorded), goes to table `cpu` with `when` (converted on that table's clock; `asked`,
    /// as the reset gave it, if it stays here) and `call` once the handler returns: the
    /// arming here (and any move recorded before) is cancelled, the callout is active. Returns
    /// whether it was pending. A reset while a drain waits is ignored (`Ok(false)`).
    ///
    /// # Errors
    ///
    /// [`Error::NoMemory`] when the move cannot be recorded; nothing changes.
    pub(crate) fn defer_move(
        &mut self,
        idx: u32,
        cpu: usize,
        entry: u32,
        (when, asked): (When, When),
        call: C,
    ) -> Result<bool, Error> {
        if self.is_draining(idx) {
            return Ok(false);
        }
        if self.move_of(idx).is_none() {
            self.moves.try_reserve(1).map_err(|_| Error::NoMemory)?;
        }
        let was = self.disarm(idx);
        let generation = self.pool.generation(idx).expect("moving a live callout");
        let r = &mut self.pool.records[idx];
        r.active = true;
        r.call = Some(call);
        self.moves.push(Moving {
            idx,
            generation,
            cpu,
            entry,
            when,
            asked,
            call,
        });
        Ok(was)
    }

    /// The table a recorded move of record `idx` goes to.
    pub(crate) fn move_target(&self, idx: u32) -> Option<usize> {
        self.move_of(idx).map(|at| self.moves[at].cpu)
    }

    /// Takes the move recorded for record `idx` (its handler has returned).
    pub(crate) fn take_move(&mut self, idx: u32) -> Option<Moving<C>> {
        self.move_of(idx).map(|at| self.moves.swap_remove(at))
    }

    /// Whether record `idx`'s handler is running.
    pub(crate) fn running_at(&self, idx: u32) -> bool {
        self.pool.records[idx].running
    }

    fn rearm(
        &mut self,
        idx: u32,
        deadline: Tick,
        tolerance: Tick,
        direct: bool,
        call: C,
    ) -> Result<bool, Error> {
        if self.is_draining(idx) {
            // FreeBSD: a callout being drained is not rescheduled.
            return Ok(false);
        }
        // Queue the new arming first: if the scheme refuses it, the old one still stands.
        let sched = self.schedule(idx, deadline, tolerance, direct)?;
        let was = self.disarm(idx);
        let r = &mut self.pool.records[idx];
        r.sched = sched;
        r.call = Some(call);
        r.active = true;
        self.after_arm();
        Ok(was)
    }

    /// The ticks `t` takes at this table's `hz`, rounded up exactly: the smallest `n` with
    /// `n / hz >= t` (a negative `t` takes none). FreeBSD's `SBT_1MS` and its multiples are
    /// truncated, so `2 * SBT_1MS` takes 2 ticks at 1000 Hz, while `Sbt::from_millis(2)`,
    /// rounded up to the next 2^-32 s, takes 3.
    fn ticks_ceil(&self, t: Sbt) -> Tick {
        // `hz` is never 0 here (the configuration refuses it), and a non-negative time fits.
        t.max(Sbt::ZERO).to_ticks_ceil(self.hz).unwrap_or(Tick::MAX)
    }

    /// Whole ticks in `t`, rounded down (a tolerance never widens past what was asked).
    fn ticks_floor(&self, t: Sbt) -> Tick {
        let raw = t.max(Sbt::ZERO).as_raw() as u128;
        ((raw * u128::from(self.hz)) >> 32) as Tick
    }
}

/// [`Error::InvalidFlags`] for bits outside [`KNOWN`].
pub(crate) fn check_flags(flags: u32) -> Result<(), Error> {
    if flags & !KNOWN != 0 {
        Err(Error::InvalidFlags(flags & !KNOWN))
    } else {
        Ok(())
    }
}
