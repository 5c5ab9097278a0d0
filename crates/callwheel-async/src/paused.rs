//! Test time (the cargo feature `test-util`): [`pause`], [`advance`], [`resume`], on tokio's
//! paused clock. While a tokio runtime's time is paused, the timers made in it count on that
//! clock and are driven by a task of the runtime that sleeps on tokio's own timer until the
//! wheel's next wake-up. tokio moves its paused clock straight to the next timer when the
//! runtime has nothing to run (its auto-advance), and the driving task's sleep is such a timer:
//! hours of sleeps finish at once, in deadline order, exactly as tokio's own do.
//!
//! The runtime's clock is found paused when a timer is first made on a thread (a test with
//! `#[tokio::test(start_paused = true)]` needs nothing more), or paused by [`pause`]. Time can
//! be paused on tokio's current-thread runtime only, as tokio's can. [`advance`] fires every
//! timer due by the new time exactly; auto-advance moves to the next wake-up by tokio's timer,
//! which counts whole milliseconds, so a timer it fires may be up to 1 ms of paused time late.

use std::cell::RefCell;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use callwheel_rt::drive_loop::{DriveLoop, Wait, Waited};
use callwheel_rt::{Clock, Waiter};
use tokio::runtime::{Handle, Id, RuntimeFlavor};
use tokio::sync::Notify;

use crate::driver::{Inner, Link, Turning};

/// Runtimes whose time is paused, over all threads: while none is, a timer's creation looks no
/// further than this count.
static PAUSED: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// The paused runtimes this thread has timers in, and their drivers.
    static DRIVERS: RefCell<Vec<(Id, Arc<Inner>)>> = const { RefCell::new(Vec::new()) };
}

/// tokio's clock, in nanoseconds since the driver was made, read in its runtime's context
/// (from any thread).
#[derive(Debug)]
struct TokioClock {
    handle: Handle,
    base: tokio::time::Instant,
}

impl TokioClock {
    fn read(&self) -> Duration {
        match Handle::try_current() {
            Ok(h) if h.id() == self.handle.id() => tokio::time::Instant::now() - self.base,
            _ => {
                let _context = self.handle.enter();
                tokio::time::Instant::now() - self.base
            }
        }
    }
}

impl Clock for TokioClock {
    fn now(&self) -> u64 {
        callwheel_rt::saturating_ns(self.read())
    }

    /// No thread waits on this clock: its driver is a task sleeping on tokio's timer.
    fn waiter(&self) -> io::Result<Box<dyn Waiter>> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "tokio's paused clock is waited on by a task",
        ))
    }

    fn simulated(&self) -> bool {
        true
    }
}

/// Whether tokio's clock in the current runtime is paused: a paused clock does not move
/// while real time does.
fn tokio_paused() -> bool {
    let before = tokio::time::Instant::now();
    let start = std::time::Instant::now();
    while start.elapsed() < Duration::from_micros(2) {
        std::hint::spin_loop();
    }
    tokio::time::Instant::now() == before
}

/// The current runtime, when it is a current-thread one (the only kind whose time pauses).
fn current_thread_runtime() -> Option<Handle> {
    let handle = Handle::try_current().ok()?;
    (handle.runtime_flavor() == RuntimeFlavor::CurrentThread).then_some(handle)
}

/// The driver of the paused runtime the caller runs in, if its time is paused (found paused
/// at this thread's first timer in it, or paused by [`pause`]); `None` otherwise, at the cost
/// of one atomic load while no runtime is paused.
pub(crate) fn paused_link() -> Option<Link> {
    if PAUSED.load(Ordering::Acquire) == 0 {
        return None;
    }
    let id = Handle::try_current().ok()?.id();
    DRIVERS
        .try_with(|d| {
            d.borrow()
                .iter()
                .find(|(i, inner)| *i == id && !inner.is_shut_down())
                .map(|(_, inner)| Link::Own(Arc::clone(inner)))
        })
        .ok()
        .flatten()
}

/// The driver a timer made now is bound to: the paused runtime's, found at this thread's
/// first timer in the runtime (`start_paused`) or made by [`pause`]; `None` otherwise.
pub(crate) fn made_on() -> Option<Link> {
    if let Some(link) = paused_link() {
        return Some(link);
    }
    // A thread's first timer in a runtime picks its driver now, so that a runtime started
    // paused is seen before this timer's deadline is read from the wrong clock.
    if let Some(Link::Own(inner)) = crate::tokio_reactor::context_link() {
        if inner.is_paused_clock() {
            return Some(Link::Own(inner));
        }
    }
    None
}

/// For a thread's first timer in a runtime: a driver on tokio's clock when that clock is
/// found paused (`#[tokio::test(start_paused = true)]`).
pub(crate) fn found_paused(handle: &Handle) -> Option<Link> {
    pausable(handle).then(|| Link::Own(start(handle)))
}

/// Whether `handle`'s runtime has its time paused (only a current-thread one can).
fn pausable(handle: &Handle) -> bool {
    handle.runtime_flavor() == RuntimeFlavor::CurrentThread && tokio_paused()
}

/// Starts a driver on `handle`'s paused clock for this thread and records it.
fn start(handle: &Handle) -> Arc<Inner> {
    let notify = Arc::new(Notify::new());
    let clock = TokioClock {
        handle: handle.clone(),
        base: tokio::time::Instant::now(),
    };
    let inner = Arc::new(Inner::paused(Arc::new(clock), Arc::clone(&notify)));
    // The guard is the task's from its creation: a runtime dropped before it ever polls the
    // task still shuts the wheel down.
    handle.spawn(drive(Stop(Arc::clone(&inner)), notify));
    let id = handle.id();
    let _ = DRIVERS.try_with(|d| {
        let mut d = d.borrow_mut();
        d.retain(|(_, inner)| !inner.is_shut_down());
        d.push((id, Arc::clone(&inner)));
    });
    PAUSED.fetch_add(1, Ordering::AcqRel);
    inner
}

/// Shuts the driver down when its task ends or is dropped (the runtime shut down, or time
/// resumed and the last timer fired): its futures are woken and register elsewhere.
struct Stop(Arc<Inner>);

impl Drop for Stop {
    fn drop(&mut self) {
        self.0.shut_down_and_hand_back();
        PAUSED.fetch_sub(1, Ordering::AcqRel);
    }
}

/// How the driving task waits: on tokio's timer until the next wake-up, or until a
/// registration needs an earlier one (`notify`, whose permit is kept when it comes before the
/// wait, so none is lost).
struct PausedWait {
    inner: Arc<Inner>,
    notify: Arc<Notify>,
}

impl Wait for PausedWait {
    async fn wait(&mut self, until: Option<u64>) -> Waited {
        let notified = self.notify.notified();
        let Some(at) = until else {
            notified.await;
            return Waited::Early;
        };
        let base = self.inner.now();
        let sleep = tokio::time::sleep(Duration::from_nanos(at.saturating_sub(base)));
        let mut sleep = std::pin::pin!(sleep);
        let mut notified = std::pin::pin!(notified);
        std::future::poll_fn(|cx| {
            if sleep.as_mut().poll(cx).is_ready() {
                std::task::Poll::Ready(Waited::Planned)
            } else if notified.as_mut().poll(cx).is_ready() {
                std::task::Poll::Ready(Waited::Early)
            } else {
                std::task::Poll::Pending
            }
        })
        .await
    }

    async fn yield_now(&mut self) {
        tokio::task::yield_now().await;
    }
}

/// The driving task: the loop every driver runs, on tokio's paused clock (which, being a
/// simulated clock, trains no lead).
async fn drive(stop: Stop, notify: Arc<Notify>) {
    let inner = Arc::clone(&stop.0);
    let mut wait = PausedWait {
        inner: Arc::clone(&inner),
        notify,
    };
    DriveLoop::new()
        .on_task(&mut Turning::new(inner, 0), &mut wait)
        .await;
}

use std::future::Future as _;

/// Pauses time for the timers of the current-thread tokio runtime the caller runs in, as
/// `tokio::time::pause` does (and pauses tokio's clock with it): every timer made in the
/// runtime from now on counts on the paused clock, which moves only by [`advance`] or, when
/// the runtime has nothing to run, straight to the next timer. Timers made before keep
/// counting on the real clock.
///
/// Outside a tokio runtime, on a multi-thread runtime, or with time already paused, it does
/// nothing (tokio's panics in those cases); [`is_paused`] tells which.
pub fn pause() {
    let Some(handle) = current_thread_runtime() else {
        return;
    };
    if paused_link().is_some() {
        return;
    }
    if !tokio_paused() {
        tokio::time::pause();
    }
    start(&handle);
}

/// Whether time is paused for the timers made in the current runtime: by [`pause`], or since
/// its start (`#[tokio::test(start_paused = true)]`), before any timer is made too. (Time
/// paused by `tokio::time::pause` after this thread's first timer in the runtime is tokio's
/// alone: see [`pause`].)
pub fn is_paused() -> bool {
    paused_link().is_some() || paused_unseen().is_some()
}

/// The runtime the caller runs in, when its clock is paused and this thread has made no timer
/// in it yet: the first one would count on the paused clock.
fn paused_unseen() -> Option<Handle> {
    let handle = Handle::try_current().ok()?;
    (!crate::tokio_reactor::seen(handle.id()) && pausable(&handle)).then_some(handle)
}

/// The driver of the paused runtime the caller runs in, started now for a runtime whose
/// clock was paused at its start and that has no timer of callwheel's yet.
fn paused_here() -> Option<Link> {
    paused_link().or_else(|| Some(Link::Own(start(&paused_unseen()?))))
}

/// Moves paused time forward by `duration`, firing every timer due by then in deadline order,
/// as `tokio::time::advance` does. When time is not paused it does nothing (tokio's panics).
pub async fn advance(duration: Duration) {
    let Some(Link::Own(inner)) = paused_here() else {
        return;
    };
    tokio::time::advance(duration).await;
    // tokio's timer counts whole milliseconds: rather than wait for it, the driving task
    // looks at the wheel now, and fires what is due at exactly the new time; then the tasks
    // it woke run.
    inner.nudge();
    for _ in 0..4 {
        tokio::task::yield_now().await;
    }
}

/// Resumes real time, as `tokio::time::resume` does: timers made from now on count on the real
/// clock; those made while paused still fire, at their deadlines on tokio's clock (which now
/// moves with real time). Without a pause it does nothing (tokio's panics).
pub fn resume() {
    let Some(handle) = current_thread_runtime() else {
        return;
    };
    let id = handle.id();
    let _ = DRIVERS.try_with(|d| d.borrow_mut().retain(|(i, _)| *i != id));
    // Paused by `pause`, or since the runtime's start with no timer made yet.
    if tokio_paused() {
        tokio::time::resume();
    }
}
