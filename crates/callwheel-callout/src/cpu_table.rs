//! One CPU's table in a [`SharedCallouts`](crate::SharedCallouts): a [`Callouts`] behind a
//! lock. Every call takes the lock, and the software interrupt and the clock interrupt's
//! direct handlers release it while a handler runs and after every `max_softclock_steps`
//! steps — the threaded form of the paper's bounded interrupt lock-out. `callout_drain` waits
//! here for a handler running on another thread, and one thread at a time runs the handlers
//! (the kernel's one software-interrupt thread per CPU).

use core::hash::Hash;

#[cfg(callwheel_loom)]
use loom::sync::{Condvar, Mutex, MutexGuard};
#[cfg(callwheel_loom)]
use loom::thread::{self, ThreadId};
#[cfg(not(callwheel_loom))]
use std::sync::{Condvar, Mutex, MutexGuard};
#[cfg(not(callwheel_loom))]
use std::thread::{self, ThreadId};

use crate::backing::Backing;
use crate::callouts::{Next, Ready};
use crate::{Callouts, Error, Handle};

/// Called, with no lock held, with a callout's handle (of the table that ran it) when its
/// handler has returned and a move to another CPU's table waits for that: the shared table
/// makes the move there.
pub(crate) type Moved<'a> = &'a dyn Fn(Handle);

#[derive(Debug)]
struct Inner<S, C> {
    table: Callouts<S, C>,
    /// The thread inside `softclock` or `hardclock_with`, if any.
    runner: Option<ThreadId>,
}

/// A [`Callouts`] table behind a lock, callable from any thread; handlers run without the
/// lock held, so they may call back into the table (from the same thread or others).
#[derive(Debug)]
pub(crate) struct CpuTable<S, C> {
    inner: Mutex<Inner<S, C>>,
    /// Signalled whenever a handler finishes.
    finished: Condvar,
}

impl<S: Backing, C: Copy + Eq + Hash> CpuTable<S, C> {
    /// Shares `table`.
    pub(crate) fn new(table: Callouts<S, C>) -> CpuTable<S, C> {
        CpuTable {
            inner: Mutex::new(Inner {
                table,
                runner: None,
            }),
            finished: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner<S, C>> {
        // A panic in another caller cannot leave the table half-updated: every mutation is
        // complete before user code runs, so a poisoned lock is safe to take over.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `f` on the table under the lock: every call that neither waits for a handler nor
    /// runs handlers goes through here.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut Callouts<S, C>) -> R) -> R {
        f(&mut self.lock().table)
    }

    /// A clock interrupt (`clock` moves the table's time and says whether `softclock` has
    /// work), then the ready drain calls and the due direct-execution handlers.
    pub(crate) fn interrupt(
        &self,
        clock: impl FnOnce(&mut Callouts<S, C>) -> bool,
        mut run: impl FnMut(C),
        moved: Moved<'_>,
    ) -> Result<bool, Error> {
        let mut guard = self.lock();
        let needed = clock(&mut guard.table);
        if guard.runner.is_some() {
            return Err(Error::SoftclockBusy);
        }
        guard.runner = Some(thread::current().id());
        drop(guard);
        let _runner = RunnerGuard(self);
        loop {
            let ready = self.lock().table.pop_immediate();
            let Some(ready) = ready else { break };
            self.run_one(ready, &mut run, moved);
        }
        Ok(needed)
    }

    /// The software interrupt ([`Callouts::softclock`] with the lock released while each handler
    /// runs and whenever the step budget is used up), calling `moved` after each handler whose
    /// callout waits to move to another CPU's table; see
    /// [`SharedCallouts::softclock`](crate::SharedCallouts::softclock).
    pub(crate) fn softclock_moving(
        &self,
        mut run: impl FnMut(C),
        moved: Moved<'_>,
    ) -> Result<usize, Error> {
        {
            let mut guard = self.lock();
            if guard.runner.is_some() {
                return Err(Error::SoftclockBusy);
            }
            guard.runner = Some(thread::current().id());
        }
        let _runner = RunnerGuard(self);
        let mut ran = 0;
        loop {
            let next = self.lock().table.next_due();
            match next {
                Next::Run(ready) => {
                    self.run_one(ready, &mut run, moved);
                    ran += 1;
                }
                // The lock was dropped at the end of the statement above: other threads got
                // their chance.
                Next::Yield => thread::yield_now(),
                Next::Idle => return Ok(ran),
            }
        }
    }

    fn run_one(&self, ready: Ready<C>, run: &mut impl FnMut(C), moved: Moved<'_>) {
        let call = ready.call;
        // Clears the running flag even if the handler unwinds.
        let done = FinishGuard {
            shared: self,
            ready: Some(ready),
            moved,
        };
        run(call);
        drop(done);
    }

    /// `callout_drain`: stops the callout and, if its handler is running on another thread,
    /// waits until it returns. Returns `Ok(true)` if the callout was pending.
    ///
    /// # Errors
    ///
    /// [`Error::WouldDeadlock`] when called from the thread running its handler (nothing
    /// changes); [`Error::StaleHandle`], [`Error::WrongKind`].
    pub(crate) fn callout_drain(&self, handle: Handle) -> Result<bool, Error> {
        let mut guard = self.wait_idle(handle)?;
        guard.table.callout_stop(handle)
    }

    /// [`Callouts::callout_free`], after waiting for a handler running on another thread (the
    /// lock is held from the wait to the free).
    pub(crate) fn callout_free(&self, handle: Handle) -> Result<(), Error> {
        let mut guard = self.wait_idle(handle)?;
        guard.table.callout_free(handle)
    }

    /// Returns once `handle`'s handler is not running (at that instant).
    pub(crate) fn wait_not_running(&self, handle: Handle) -> Result<(), Error> {
        self.wait_idle(handle).map(drop)
    }

    /// Locks the table once `handle`'s handler is not running.
    fn wait_idle(&self, handle: Handle) -> Result<MutexGuard<'_, Inner<S, C>>, Error> {
        let mut guard = self.lock();
        // Validates the handle and its kind before any waiting.
        guard.table.callout_pending(handle)?;
        while guard.table.is_running(handle) {
            if guard.runner == Some(thread::current().id()) {
                return Err(Error::WouldDeadlock);
            }
            guard = self
                .finished
                .wait(guard)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        Ok(guard)
    }
}

/// Marks a handed-out handler finished and wakes drainers, on return or unwind; then, with
/// the lock released, lets a waiting move be made.
struct FinishGuard<'a, S: Backing, C: Copy + Eq + Hash> {
    shared: &'a CpuTable<S, C>,
    ready: Option<Ready<C>>,
    moved: Moved<'a>,
}

impl<S: Backing, C: Copy + Eq + Hash> Drop for FinishGuard<'_, S, C> {
    fn drop(&mut self) {
        if let Some(ready) = self.ready.take() {
            let moving = self.shared.lock().table.finish(ready);
            self.shared.finished.notify_all();
            if let Some(handle) = moving {
                (self.moved)(handle);
            }
        }
    }
}

/// Gives up the runner role on return or unwind.
struct RunnerGuard<'a, S: Backing, C: Copy + Eq + Hash>(&'a CpuTable<S, C>);

impl<S: Backing, C: Copy + Eq + Hash> Drop for RunnerGuard<'_, S, C> {
    fn drop(&mut self) {
        self.0.lock().runner = None;
        self.0.finished.notify_all();
    }
}
