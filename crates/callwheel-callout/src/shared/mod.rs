//! The callout table shared between threads, with one queue per CPU (one CPU: the single
//! table of 4.4BSD and of Costello & Varghese): calloutng's `callout_reset_sbt_on(c, sbt,
//! precision, func, arg, cpu, flags)` with a real `cpu`, and FreeBSD's deferred migration.
//!
//! FreeBSD replaced the single callwheel with one per CPU (calloutng, §2): each CPU's wheel
//! has its own lock and its own softclock, and a callout is bound to one of them. Here the
//! table holds one [`CpuTable`] per CPU (a shard, in the project's words) and, with more than
//! one CPU, a directory that says which CPU's table holds each callout (a table of one CPU
//! needs none: its callouts never move, and a handle is its queue's record's):
//!
//! ```text
//!   user handle (table's owner, index, generation)
//!        │  directory (one short lock): entry → (cpu, handle of that cpu's record)
//!        ▼
//!   cpu 0 table ─ lock ─ softclock/callout_process by whoever drives cpu 0
//!   cpu 1 table ─ lock ─ softclock/callout_process by whoever drives cpu 1
//!   …
//! ```
//!
//! - A callout's record lives in its CPU's table; only that table fires it, and only when
//!   that CPU's table is processed.
//! - Moving a callout that is idle or pending is immediate: a record is taken on the new
//!   table and armed there, the old one is freed, and the directory entry names the new one.
//!   The user's handle names the directory entry, so it stays valid across moves.
//! - Moving a callout whose handler runs is deferred until the handler returns (FreeBSD's
//!   `CALLOUT_DFRMIGRATION`): the old table records the arming, its time converted at the
//!   reset on the new table's clock (a time that clock cannot hold is refused then), and the
//!   thread that ran the handler makes the move as soon as the handler returns. Until then the callout counts
//!   as pending and is reported on its old CPU; a later reset replaces the recorded arming,
//!   a stop or drain cancels it.
//!
//! Locks: the directory, then CPU tables. A thread holds two tables' locks only while it
//! holds the directory's, so the tables' order does not matter. Calls that name a callout
//! and keep it on its CPU take the directory lock only to read the entry, then work under
//! that one table's lock; processing a CPU's table never takes the directory lock, except to
//! make a deferred move.

use core::hash::Hash;

mod bsd;
mod check;
mod clock;
mod directory;

#[cfg(callwheel_loom)]
use loom::sync::{Mutex, MutexGuard};
#[cfg(not(callwheel_loom))]
use std::sync::{Mutex, MutexGuard};

use callwheel::time::Sbt;
use callwheel::Handle;

use crate::backing::Backing;
use crate::cpu_table::CpuTable;
use crate::freebsd::check_flags;
use crate::moves::When;
use crate::pool::Kind;
use crate::{AsyncDrain, Callouts, Error};
use directory::Directory;

/// A callout table shared between threads: one queue per CPU, each with its own lock and
/// processed on its own (FreeBSD's per-CPU callwheels, with `callout_reset_sbt_on`'s `cpu`
/// argument and deferred migration); one CPU is the single table
/// ([`SharedCallouts::single`]). Handlers run with no lock held, so they may call back into
/// the table from any thread; `callout_drain` waits for a handler running on another thread.
/// The BSD calls (`timeout`, `setcallout` and their cancels) work on CPU 0's queue.
///
/// The table has no threads and reads no clock: whoever drives CPU `k` calls
/// [`SharedCallouts::softclock`] (after [`SharedCallouts::hardclock`]) or
/// [`SharedCallouts::process_with`] for `k`, and only callouts bound to `k` run there. Each
/// table keeps its own `ticks`. Calls that name a callout may come from any thread,
/// handlers included.
///
/// A handle from [`SharedCallouts::callout_init`] names the callout, not its record in one
/// CPU's table: it stays valid when the callout moves to another CPU, and goes stale only
/// with [`SharedCallouts::callout_free`]. It carries the table's identity: a handle of
/// another table, or a made-up one, is [`Error::StaleHandle`] and changes nothing; a
/// `setcallout` handle (CPU 0's own record) is [`Error::WrongKind`], as on one [`Callouts`].
/// On a table of several CPUs only these handles name the table's callouts: a record made on a
/// [`Callouts`] before it was shared, or through [`SharedCallouts::with`], is that CPU's own
/// and none of the table's. A table of one CPU needs no directory (its callouts never move):
/// its handles are its queue's records', whoever made them.
///
/// One CPU, driven from another thread:
///
/// ```
/// use std::sync::Arc;
/// use callwheel_schemes::hashed_wheel::HashedWheel;
/// use callwheel_callout::{Callouts, SharedCallouts};
///
/// let table = Arc::new(SharedCallouts::single(Callouts::new(HashedWheel::new(8)?)));
/// table.timeout(1u32, 1)?;
/// let t = Arc::clone(&table);
/// std::thread::spawn(move || {
///     t.hardclock(0).unwrap();
///     let ran = t.softclock(0, |call| assert_eq!(call, 1)).unwrap();
///     assert_eq!(ran, 1);
/// })
/// .join()
/// .unwrap();
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// One table per CPU, a callout armed on CPU 1:
///
/// ```
/// use callwheel_callout::{Callouts, Config, SharedCallouts};
/// use callwheel::time::Sbt;
/// use callwheel_schemes::hashed_wheel::HashedWheel;
///
/// let ncpu = std::thread::available_parallelism().map_or(1, |n| n.get()).max(2);
/// let tables = (0..ncpu)
///     .map(|_| Callouts::with_config(HashedWheel::new(8)?, Config::default()))
///     .collect::<Result<Vec<_>, _>>()?;
/// let set = SharedCallouts::new(tables)?;
///
/// let c = set.callout_init()?;
/// // 2 ms as FreeBSD writes it (2 * SBT_1MS, truncated): exactly 2 ticks at 1000 Hz.
/// set.callout_reset_sbt_on(c, Sbt::MILLISECOND.saturating_mul(2), Sbt::ZERO, "flush", 1, 0)?;
/// let mut ran = Vec::new();
/// for _ in 0..2 {
///     for cpu in 0..ncpu {
///         set.hardclock(cpu)?;
///         set.softclock(cpu, |call| ran.push((cpu, call)))?;
///     }
/// }
/// assert_eq!(ran, [(1, "flush")]); // on CPU 1's table, and only there
/// set.callout_free(c)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct SharedCallouts<S, C> {
    cpus: Box<[CpuTable<S, C>]>,
    directory: Mutex<Directory>,
}

impl<S: Backing, C: Copy + Eq + Hash> SharedCallouts<S, C> {
    /// A table with one queue per CPU, CPU `k` being `tables[k]` (choose their number from
    /// [`std::thread::available_parallelism`], or as many as the threads that will drive
    /// them). The queues should be new: the table's callouts are its own, made by
    /// [`SharedCallouts::callout_init`].
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for no table, or more than `i32::MAX` of them.
    pub fn new(tables: Vec<Callouts<S, C>>) -> Result<SharedCallouts<S, C>, Error> {
        if tables.is_empty() {
            return Err(Error::Config {
                reason: "a shared callout table needs at least one CPU's table",
            });
        }
        if tables.len() > i32::MAX as usize {
            return Err(Error::Config {
                reason: "a shared callout table has at most i32::MAX CPUs",
            });
        }
        Ok(SharedCallouts {
            cpus: tables.into_iter().map(CpuTable::new).collect(),
            directory: Mutex::new(Directory::new()),
        })
    }

    /// The single table of one CPU: `table` shared between threads. Its callouts never move,
    /// so a handle is its records' own (one made on `table` before it was shared names the
    /// same callout), and every call takes one lock.
    pub fn single(table: Callouts<S, C>) -> SharedCallouts<S, C> {
        SharedCallouts {
            cpus: Box::new([CpuTable::new(table)]),
            directory: Mutex::new(Directory::new()),
        }
    }

    /// How many CPUs (queues) the table has.
    pub fn ncpu(&self) -> usize {
        self.cpus.len()
    }

    /// [`Callouts::set_deviation_percent`] on every CPU's table.
    pub fn set_deviation_percent(&self, percent: u32) {
        for cpu in &self.cpus {
            cpu.with(|t| t.set_deviation_percent(percent));
        }
    }

    fn lock_directory(&self) -> MutexGuard<'_, Directory> {
        // Every change to the directory is complete before anything that can panic runs.
        self.directory
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// CPU `cpu`'s table, or [`Error::InvalidCpu`].
    fn cpu(&self, cpu: usize) -> Result<&CpuTable<S, C>, Error> {
        self.cpus
            .get(cpu)
            .ok_or(Error::InvalidCpu(i32::try_from(cpu).unwrap_or(i32::MAX)))
    }

    /// `cpu` as a table index: `None` for -1 ("the callout's CPU").
    fn target(&self, cpu: i32) -> Result<Option<usize>, Error> {
        match usize::try_from(cpu) {
            Ok(k) if k < self.cpus.len() => Ok(Some(k)),
            _ if cpu == -1 => Ok(None),
            _ => Err(Error::InvalidCpu(cpu)),
        }
    }

    /// Runs `f` with the CPU and the table that hold the callout `handle` names, and the
    /// handle of its record there. Should the callout move meanwhile (`f` then finds that
    /// record stale), `f` runs again where it went.
    fn on_callout<R>(
        &self,
        handle: Handle,
        mut f: impl FnMut(usize, &CpuTable<S, C>, Handle) -> Result<R, Error>,
    ) -> Result<R, Error> {
        if self.is_single() {
            // One CPU: its callouts never move, and their handles are its records'.
            return f(0, &self.cpus[0], handle);
        }
        let mut home = {
            let directory = self.lock_directory();
            directory
                .home(handle)
                .map_err(|e| self.not_a_callout(handle, e))?
        };
        loop {
            let (cpu, local) = home;
            match f(cpu, &self.cpus[cpu], local) {
                Err(Error::StaleHandle) => {
                    // A move or a free changes the entry and the record under the directory
                    // lock together: an unchanged entry means the callout is gone.
                    let now = self.lock_directory().home(handle)?;
                    if now == home {
                        return Err(Error::StaleHandle);
                    }
                    home = now;
                }
                other => return other,
            }
        }
    }

    /// Whether the table has one CPU. Its callouts then never move, so they need no
    /// directory: a handle is the CPU's record's, and every call goes straight to its queue
    /// (one lock, as the single table of 4.4BSD and Costello & Varghese).
    fn is_single(&self) -> bool {
        self.cpus.len() == 1
    }

    /// The error for `handle`, which names no callout of the directory (`e`, as the directory
    /// said): [`Error::WrongKind`] for a `setcallout` handle (CPU 0's own record), as a
    /// single [`Callouts`] table says, otherwise `e`.
    fn not_a_callout(&self, handle: Handle, e: Error) -> Error {
        match self.cpus[0].with(|t| t.resolve(handle, Kind::Persistent)) {
            Err(Error::WrongKind) => Error::WrongKind,
            _ => e,
        }
    }

    /// `callout_init`: a callout, idle and inactive, bound to CPU 0 (where FreeBSD's
    /// `callout_init` puts it).
    ///
    /// # Errors
    ///
    /// [`Error::PoolExhausted`] or [`Error::NoMemory`] from CPU 0's pool, or when the
    /// directory cannot grow. Nothing changes on error.
    pub fn callout_init(&self) -> Result<Handle, Error> {
        self.callout_init_on(0)
    }

    /// [`SharedCallouts::callout_init`] bound to CPU `cpu` (-1: CPU 0).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidCpu`]; as [`SharedCallouts::callout_init`] for that CPU's table.
    pub fn callout_init_on(&self, cpu: i32) -> Result<Handle, Error> {
        let cpu = self.target(cpu)?.unwrap_or(0);
        if self.is_single() {
            return self.cpus[0].with(|t| t.callout_init());
        }
        let mut directory = self.lock_directory();
        directory.reserve()?;
        let local = self.cpus[cpu].with(|t| t.callout_init())?;
        directory.insert((cpu, local))
    }

    /// Frees the callout, cancelling it if armed (or waiting to move); if its handler is
    /// running on another thread, waits for it to return first. Every copy of the handle
    /// goes stale.
    ///
    /// # Errors
    ///
    /// [`Error::WouldDeadlock`] from the thread running its handler; [`Error::StaleHandle`];
    /// [`Error::WrongKind`] for a `setcallout` handle.
    /// Nothing changes on error.
    pub fn callout_free(&self, handle: Handle) -> Result<(), Error> {
        if self.is_single() {
            return self.cpus[0].callout_free(handle);
        }
        loop {
            self.on_callout(handle, |_, table, local| table.wait_not_running(local))?;
            let mut directory = self.lock_directory();
            let index = directory.index(handle)?;
            let (cpu, local) = directory.home(handle)?;
            match self.cpus[cpu].with(|t| t.callout_free(local)) {
                // It ran again since the wait: wait again.
                Err(Error::Busy) => continue,
                Err(e) => return Err(e),
                Ok(()) => {
                    directory.release(index);
                    return Ok(());
                }
            }
        }
    }

    /// calloutng's `callout_reset_sbt_on(c, sbt, precision, func, arg, cpu, flags)`:
    /// (re)arms the callout as [`Callouts::callout_reset_sbt_on`] does, on CPU `cpu`'s table
    /// (`0..ncpu`), or on its own CPU for -1 (if a move is waiting, the CPU it goes to). The
    /// time is counted on the clock of the table that takes the callout, read at this call
    /// (for a deferred move too: converted now on the new CPU's clock, as FreeBSD does, and
    /// armed there when the handler returns; should the new CPU's table then have no room, the
    /// callout stays on the old CPU, armed as asked, its time counted then on that CPU's clock).
    ///
    /// Moving to another CPU is immediate unless the handler is running: then the arming is
    /// recorded and made on the new CPU as soon as the handler returns (FreeBSD's deferred
    /// migration), the callout counting as pending meanwhile; a handler may so move its own
    /// callout. A reset while a move waits replaces the arming it will make (whatever its
    /// `cpu`); a reset while a [`SharedCallouts::callout_async_drain`] waits is ignored
    /// (`Ok(false)`). If, when the handler returns, the new CPU's table cannot take the
    /// callout (its pool is full or out of memory, or its scheme refuses the time), the
    /// callout is armed on its old CPU instead.
    ///
    /// Returns `Ok(true)` if the callout was pending (a waiting move counts).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidFlags`], [`Error::InvalidCpu`] (not -1 nor one of the table's CPUs),
    /// [`Error::StaleHandle`], [`Error::WrongKind`] (a `setcallout` handle), [`Error::Scheme`],
    /// [`Error::PoolExhausted`] and [`Error::NoMemory`] (the new CPU's table could not take
    /// it). Nothing changes on error.
    #[allow(clippy::too_many_arguments)] // The historical signature.
    pub fn callout_reset_sbt_on(
        &self,
        handle: Handle,
        sbt: Sbt,
        precision: Sbt,
        call: C,
        cpu: i32,
        flags: u32,
    ) -> Result<bool, Error> {
        check_flags(flags)?;
        let when = When::Sbt {
            sbt,
            precision,
            flags,
        };
        self.reset(handle, cpu, when, call)
    }

    /// FreeBSD's `callout_reset_on(c, ticks, func, arg, cpu)`: runs `call` `ticks` ticks of
    /// the new table's clock after this call (`ticks <= 0` counts as 1), on CPU `cpu` as
    /// [`SharedCallouts::callout_reset_sbt_on`] moves it.
    ///
    /// # Errors
    ///
    /// As [`SharedCallouts::callout_reset_sbt_on`].
    pub fn callout_reset_on(
        &self,
        handle: Handle,
        ticks: i64,
        call: C,
        cpu: i32,
    ) -> Result<bool, Error> {
        self.reset(handle, cpu, When::Ticks(ticks), call)
    }

    /// `callout_reset(c, ticks, func, arg)`: [`SharedCallouts::callout_reset_on`] keeping the
    /// callout's CPU.
    ///
    /// # Errors
    ///
    /// As [`SharedCallouts::callout_reset_sbt_on`].
    pub fn callout_reset(&self, handle: Handle, ticks: i64, call: C) -> Result<bool, Error> {
        self.reset(handle, -1, When::Ticks(ticks), call)
    }

    fn reset(&self, handle: Handle, cpu: i32, when: When, call: C) -> Result<bool, Error> {
        let target = self.target(cpu)?;
        if self.is_single() {
            // Nowhere to move: the arming alone, as on one table.
            return self.cpus[0].with(|t| {
                let idx = t.resolve(handle, Kind::Persistent)?;
                t.arm_at(idx, when, call)
            });
        }
        // Staying on its CPU with no move waiting: that table's lock alone.
        let stayed = self.on_callout(handle, |home, table, local| {
            table.with(|t| {
                let idx = t.resolve(local, Kind::Persistent)?;
                if t.move_target(idx).is_some() || target.is_some_and(|k| k != home) {
                    return Ok(None);
                }
                t.arm_at(idx, when, call).map(Some)
            })
        })?;
        if let Some(was) = stayed {
            return Ok(was);
        }
        // A move: under the directory lock, which no one holds while waiting for a handler.
        let mut directory = self.lock_directory();
        let entry = directory.index(handle)?;
        let (home, local) = directory.home(handle)?;
        self.cpus[home].with(|t| {
            let idx = t.resolve(local, Kind::Persistent)?;
            let waiting = t.move_target(idx);
            let to = target.or(waiting).unwrap_or(home);
            if waiting.is_some() || (t.running_at(idx) && to != home) {
                if t.is_draining(idx) {
                    return Ok(false);
                }
                // Converted now on the clock of the table that takes it, as FreeBSD converts
                // the time at the reset: a time that table cannot hold is refused here, not
                // lost when the handler returns.
                let (deadline, tolerance, direct) = if to == home {
                    t.arming(when)?
                } else {
                    self.cpus[to].with(|new| new.arming(when))?
                };
                let at = When::At {
                    deadline,
                    tolerance,
                    direct,
                };
                return t.defer_move(idx, to, entry, (at, when), call);
            }
            if to == home {
                return t.arm_at(idx, when, call);
            }
            let fresh = self.cpus[to].with(|new| new.arm_fresh(when, call))?;
            let moved = t
                .callout_stop(local)
                .and_then(|was| t.callout_free(local).map(|()| was));
            match moved {
                Ok(was) => {
                    directory.entries[entry] = (to, fresh);
                    Ok(was)
                }
                Err(e) => {
                    // Not expected (the record is live and not running): undo.
                    let _ = self.cpus[to].with(|new| new.callout_free(fresh));
                    Err(e)
                }
            }
        })
    }

    /// Makes the move recorded for `local` (a record of CPU `home`'s table) now that its
    /// handler has returned: the hook the CPU tables call with no lock held.
    fn make_move(&self, home: usize, local: Handle) {
        let mut directory = self.lock_directory();
        self.cpus[home].with(|t| {
            let Ok(idx) = t.resolve(local, Kind::Persistent) else {
                return; // freed meanwhile
            };
            if t.running_at(idx) {
                return; // its next return makes it
            }
            let Some(m) = t.take_move(idx) else {
                return; // stopped, drained or freed meanwhile
            };
            let entry = directory.entries.get_mut(m.entry);
            let entry = entry.filter(|e| **e == (home, local));
            if let (Some(entry), true) = (entry, m.cpu != home) {
                if let Ok(fresh) = self.cpus[m.cpu].with(|new| new.arm_fresh(m.when, m.call)) {
                    if t.callout_free(local).is_ok() {
                        *entry = (m.cpu, fresh);
                        return;
                    }
                    let _ = self.cpus[m.cpu].with(|new| new.callout_free(fresh));
                }
            }
            // Its own CPU after all (the arming converted here), or the new table could not
            // take it: it stays here, its time counted on this table's clock (and it stays
            // idle if this table refuses the time too).
            let when = if m.cpu == home { m.when } else { m.asked };
            let _ = t.arm_at(idx, when, m.call);
        });
    }

    /// `callout_stop`: cancels the callout if pending (or waiting to move) and clears its
    /// active flag; does not wait for a running handler. Returns `Ok(true)` if it was pending.
    ///
    /// # Errors
    ///
    /// [`Error::StaleHandle`]; [`Error::WrongKind`] for a `setcallout` handle.
    pub fn callout_stop(&self, handle: Handle) -> Result<bool, Error> {
        self.on_callout(handle, |_, table, local| {
            table.with(|t| t.callout_stop(local))
        })
    }

    /// `callout_drain`: `callout_stop`, then waits until the handler is not running (on any
    /// CPU). Returns `Ok(true)` if the callout was pending.
    ///
    /// # Errors
    ///
    /// [`Error::WouldDeadlock`] from the thread running its handler (nothing changes);
    /// [`Error::StaleHandle`]; [`Error::WrongKind`] for a `setcallout` handle.
    pub fn callout_drain(&self, handle: Handle) -> Result<bool, Error> {
        self.on_callout(handle, |_, table, local| table.callout_drain(local))
    }

    /// `callout_async_drain(c, drain)`, as [`Callouts::callout_async_drain`]: if the handler
    /// is running, the call `drain` makes of the callout's call goes to the runner of that
    /// CPU right after the handler returns ([`AsyncDrain::Pending`]; a waiting move is
    /// cancelled); otherwise the callout is stopped and `drain` is never called. `drain`
    /// itself is called at once with a table locked: it only makes the call, and must not
    /// call into the table.
    ///
    /// # Errors
    ///
    /// [`Error::Busy`] when a drain already waits for the handler; [`Error::NoMemory`];
    /// [`Error::StaleHandle`]; [`Error::WrongKind`] for a `setcallout` handle. Nothing changes
    /// on error.
    pub fn callout_async_drain(
        &self,
        handle: Handle,
        drain: impl FnOnce(C) -> C,
    ) -> Result<AsyncDrain, Error> {
        let mut drain = Some(drain);
        self.on_callout(handle, |_, table, local| {
            table.with(|t| {
                let idx = t.resolve(local, Kind::Persistent)?;
                // Taken only here, after the record resolved: there is no second attempt.
                let drain = drain.take().ok_or(Error::StaleHandle)?;
                t.async_drain_at(idx, drain)
            })
        })
    }

    /// `callout_pending`: whether the callout is armed and not yet handed out (a move waiting
    /// for the handler to return counts).
    ///
    /// # Errors
    ///
    /// [`Error::StaleHandle`]; [`Error::WrongKind`] for a `setcallout` handle.
    pub fn callout_pending(&self, handle: Handle) -> Result<bool, Error> {
        self.on_callout(handle, |_, table, local| {
            table.with(|t| t.callout_pending(local))
        })
    }

    /// `callout_active`, as [`Callouts::callout_active`].
    ///
    /// # Errors
    ///
    /// [`Error::StaleHandle`]; [`Error::WrongKind`] for a `setcallout` handle.
    pub fn callout_active(&self, handle: Handle) -> Result<bool, Error> {
        self.on_callout(handle, |_, table, local| {
            table.with(|t| t.callout_active(local))
        })
    }

    /// `callout_deactivate`: clears the active flag.
    ///
    /// # Errors
    ///
    /// [`Error::StaleHandle`]; [`Error::WrongKind`] for a `setcallout` handle.
    pub fn callout_deactivate(&self, handle: Handle) -> Result<(), Error> {
        self.on_callout(handle, |_, table, local| {
            table.with(|t| t.callout_deactivate(local))
        })
    }

    /// The CPU whose table holds the callout now: the only one that can run it. While a move
    /// waits for the handler to return, the old CPU.
    ///
    /// # Errors
    ///
    /// [`Error::StaleHandle`]; [`Error::WrongKind`] for a `setcallout` handle.
    pub fn callout_cpu(&self, handle: Handle) -> Result<usize, Error> {
        self.on_callout(handle, |cpu, table, local| {
            table.with(|t| t.callout_pending(local)).map(|_| cpu)
        })
    }
}
