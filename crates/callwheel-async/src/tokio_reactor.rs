//! Timers fired by a tokio runtime itself (the cargo feature `tokio`): a timer made inside a
//! runtime registers on a wheel of the thread it is made on, for that runtime, whose alarm
//! tokio's own I/O driver watches (`AsyncFd`) and whose firing is a task on that runtime. No
//! thread of callwheel's runs, and a sleep ends with no hand-off from another thread.
//!
//! One wheel per (thread, runtime): the workers of a multi-thread runtime each register on a
//! wheel of their own, so registrations on different workers share no lock; a drop or reset
//! from another thread takes that wheel's lock, which only its own driving task shares
//! otherwise. A thread keeps its wheels in a thread-local list, looked up by the runtime's id;
//! a runtime that shut down has shut its drivers down (waking every future still registered,
//! which registers again where it is polled next), and the list and the caches below let go
//! of them.
//!
//! The runtime must have its I/O driver enabled (`enable_io` or `enable_all`, as
//! `#[tokio::main]` and `#[tokio::test]` do). Without it tokio refuses the alarm with a panic,
//! which is caught here once per runtime; that runtime's timers then use the thread's wheel on
//! async-io's reactor with the `async-io` feature, else the process-wide driver.

use std::cell::{Cell, RefCell};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, Once};

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::runtime::{Handle, Id, RuntimeFlavor};

use callwheel_rt::drive_loop::{DriveLoop, Wait, Waited};

use crate::driver::{Inner, Link, Turning};
use crate::reactor::{Armed, ReactorAlarm};

/// The alarm as tokio's `AsyncFd` wants it: something with a descriptor.
struct Fd(Arc<ReactorAlarm>);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0.alarm.as_raw_fd()
    }
}

/// What a thread knows of the runtimes it has made timers in.
enum Known {
    /// This runtime's wheel for this thread.
    Driver(Arc<Inner>),
    /// This runtime has no I/O driver: its timers use the process-wide driver.
    NoIo,
}

/// Whether this thread has made a timer in runtime `id` already (a wheel of its own there, or
/// the runtime found to have no I/O driver): its next timer there does not look again at how
/// the runtime runs, a paused clock included.
#[cfg(feature = "test-util")]
pub(crate) fn seen(id: Id) -> bool {
    DRIVERS
        .try_with(|drivers| {
            drivers.borrow().iter().any(|(i, k)| {
                *i == id && !matches!(k, Known::Driver(inner) if inner.is_shut_down())
            })
        })
        .unwrap_or(false)
}

/// How many wheels a thread remembers by the task that found them.
const FOUND_SLOTS: usize = 64;

/// A wheel found by a task on this thread (see [`context_link`]).
type Found = Option<(tokio::task::Id, Arc<Inner>)>;

thread_local! {
    static DRIVERS: RefCell<Vec<(Id, Known)>> = const { RefCell::new(Vec::new()) };
    /// The wheels tasks found on this thread, by task id: a direct-mapped cache, so that a
    /// registration finds its wheel with a thread-local read however many tasks interleave on
    /// the thread. An entry keeps its wheel (and its timerfd) until another task's takes its
    /// place, a look finds it shut down, or the thread ends: at most [`FOUND_SLOTS`] wheels
    /// per thread.
    static FOUND: RefCell<[Found; FOUND_SLOTS]> = const { RefCell::new([const { None }; FOUND_SLOTS]) };
    /// The wheel of the multi-thread runtime whose task last registered here with no wheel
    /// found: on one of that runtime's workers, every task polled is one of its own, and the
    /// wheel needs no lookup at all. Where another runtime's tasks are polled on the same
    /// thread (`block_on` inside `block_in_place`, a `LocalSet` run by the `block_on` thread
    /// of a multi-thread runtime and then another runtime's `block_on` there), their timers
    /// register on this wheel: they fire on time while its runtime runs, and are woken when it
    /// shuts down, registering again where they are polled next.
    static WORKER: RefCell<Option<Arc<Inner>>> = const { RefCell::new(None) };
}

/// A task id's slot in [`FOUND`]: its number spread by a multiplication (tokio's ids count up
/// from one, so the top bits of the product differ between neighbours).
fn found_slot(task: tokio::task::Id) -> usize {
    use std::hash::{Hash, Hasher};
    /// Keeps what the id writes, multiplied by the golden ratio's 64-bit fraction.
    struct Spread(u64);
    impl Hasher for Spread {
        fn finish(&self) -> u64 {
            self.0
        }
        fn write(&mut self, bytes: &[u8]) {
            for &b in bytes {
                self.write_u64(self.0 ^ u64::from(b));
            }
        }
        fn write_u64(&mut self, n: u64) {
            self.0 = n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    let mut h = Spread(0);
    task.hash(&mut h);
    (h.finish() >> (64 - FOUND_SLOTS.trailing_zeros())) as usize
}

/// The driver for a timer registered now: this thread's wheel for the tokio runtime it runs
/// in, made on first use; `None` outside a runtime (or on a runtime without I/O, or when the
/// alarm cannot be made), for the process-wide driver.
pub(crate) fn context_link() -> Option<Link> {
    // The thread that forked this process may still be inside the parent's runtime, whose
    // workers are not here and whose `epoll` instance the parent shares: nothing of it is used
    // (tokio's rule for a child), so its timers go to the process-wide driver. A runtime the
    // child builds, on this thread too, serves them as usual.
    if callwheel_rt::is_forking_thread() && in_the_runtime_forked_from() {
        return None;
    }
    // A runtime whose time is paused has a driver on its paused clock.
    #[cfg(feature = "test-util")]
    if let Some(link) = crate::paused::paused_link() {
        return Some(link);
    }
    // The task being polled answers first: a task never leaves its runtime, so the wheel it
    // found on this thread before is the one (tokio's `task::try_id` reads a thread-local;
    // `Handle::try_current` clones the runtime's handle, an atomic operation on a cache line
    // every worker shares, which would cap registration however many workers there are).
    let task = tokio::task::try_id();
    if let Some(task) = task {
        let known = WORKER
            .try_with(|worker| live(&mut worker.borrow_mut()))
            .ok()
            .flatten()
            .or_else(|| {
                FOUND
                    .try_with(|found| {
                        let slot = &mut found.borrow_mut()[found_slot(task)];
                        match slot {
                            Some((t, inner)) if *t == task && !inner.is_shut_down() => {
                                Some(Link::Own(Arc::clone(inner)))
                            }
                            Some((t, _)) if *t == task => {
                                // Shut down: let go of the wheel and its timerfd.
                                *slot = None;
                                None
                            }
                            _ => None,
                        }
                    })
                    .ok()
                    .flatten()
            });
        if known.is_some() {
            return known;
        }
    }
    let (link, multi_thread) = lookup()?;
    if let (Some(task), Link::Own(inner)) = (task, &link) {
        if multi_thread {
            let _ = WORKER.try_with(|worker| *worker.borrow_mut() = Some(Arc::clone(inner)));
        } else {
            let _ = FOUND.try_with(|found| {
                found.borrow_mut()[found_slot(task)] = Some((task, Arc::clone(inner)));
            });
        }
    }
    Some(link)
}

/// The wheel `held` keeps, unless it has shut down: then it is let go (with its timerfd).
fn live(held: &mut Option<Arc<Inner>>) -> Option<Link> {
    match held {
        Some(inner) if !inner.is_shut_down() => Some(Link::Own(Arc::clone(inner))),
        _ => {
            *held = None;
            None
        }
    }
}

thread_local! {
    /// The runtime this thread was inside when it last called `fork` (noted in the parent just
    /// before, read in the child).
    static FORKED_FROM: Cell<Option<Id>> = const { Cell::new(None) };
}

/// Has every later `fork` note, on the forking thread, the runtime it is inside: called when a
/// driver is made, so before any fork that leaves one behind.
pub(crate) fn note_runtimes_at_fork() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Four places; this is the only user in the process.
        let _ = callwheel_rt::before_fork(|| {
            let id = Handle::try_current().ok().map(|h| h.id());
            let _ = FORKED_FROM.try_with(|f| f.set(id));
        });
    });
}

/// Whether this thread is inside the runtime it was inside when it forked this process.
fn in_the_runtime_forked_from() -> bool {
    match FORKED_FROM.try_with(Cell::get) {
        Ok(Some(id)) => Handle::try_current().is_ok_and(|h| h.id() == id),
        _ => false,
    }
}

/// [`context_link`] through the runtime's handle, and whether that runtime is a multi-thread
/// one.
fn lookup() -> Option<(Link, bool)> {
    let handle = Handle::try_current().ok()?;
    let id = handle.id();
    let multi_thread = handle.runtime_flavor() == RuntimeFlavor::MultiThread;
    DRIVERS
        .try_with(|drivers| {
            let mut drivers = drivers.borrow_mut();
            drivers.retain(|(_, k)| !matches!(k, Known::Driver(inner) if inner.is_shut_down()));
            match drivers.iter().find(|(i, _)| *i == id) {
                Some((_, Known::Driver(inner))) => return Some(Link::Own(Arc::clone(inner))),
                Some((_, Known::NoIo)) => return None,
                None => {}
            }
            #[cfg(feature = "test-util")]
            if let Some(link) = crate::paused::found_paused(&handle) {
                return Some(link);
            }
            match start(&handle) {
                Ok(inner) => {
                    drivers.push((id, Known::Driver(Arc::clone(&inner))));
                    Some(Link::Own(inner))
                }
                Err(Start::NoIo) => {
                    drivers.push((id, Known::NoIo));
                    None
                }
                Err(Start::Failed) => None,
            }
        })
        .ok()
        .flatten()
        .map(|link| (link, multi_thread))
}

/// The alarm registered with the current runtime's I/O driver, for readiness to read.
#[allow(unsafe_code)]
fn register(fd: Fd) -> io::Result<AsyncFd<Fd>> {
    // SAFETY: tokio asks that the descriptor stay open, and be the same one, for as long as
    // the `AsyncFd` lives. `Fd` holds the alarm by an `Arc` whose timerfd is closed only when
    // the alarm is dropped, which the `AsyncFd` (owning this `Arc`) prevents; and
    // `as_raw_fd` always returns that one timerfd.
    unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }.map_err(io::Error::from)
}

enum Start {
    NoIo,
    Failed,
}

/// A driver for this thread on `handle`'s runtime: its alarm registered with the runtime's
/// I/O driver, its task spawned there.
fn start(handle: &Handle) -> Result<Arc<Inner>, Start> {
    let alarm = Arc::new(ReactorAlarm::new().map_err(|_| Start::Failed)?);
    // tokio panics when the runtime has no I/O driver; nothing else in the registration does,
    // and a panic there leaves the new alarm as it was (unregistered, then dropped).
    let registered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        register(Fd(Arc::clone(&alarm)))
    }));
    let fd = match registered {
        Ok(Ok(fd)) => fd,
        Ok(Err(_)) => return Err(Start::Failed),
        Err(_) => return Err(Start::NoIo),
    };
    let inner = Arc::new(Inner::reactor(Arc::clone(&alarm)));
    // The guard is the task's from its creation: a runtime dropped before it ever polls the
    // task still shuts the wheel down.
    handle.spawn(drive(ShutDownOnDrop(Arc::clone(&inner)), alarm, fd));
    Ok(inner)
}

/// Shuts the driver down when its task ends or is dropped (the runtime shut down): every
/// future still registered is woken and, polled again, registers elsewhere or completes.
struct ShutDownOnDrop(Arc<Inner>);

impl Drop for ShutDownOnDrop {
    fn drop(&mut self) {
        self.0.shut_down_and_hand_back();
    }
}

/// How the driving task waits: for the alarm's readiness in tokio's reactor.
struct ReactorWait {
    alarm: Arc<ReactorAlarm>,
    fd: Registered,
}

/// The alarm's registration with the runtime's I/O driver, let go of without deregistering in
/// a child forked since the driver was made: the `epoll` instance is the parent's too, and
/// removing the alarm there would remove the parent's.
struct Registered {
    fd: Option<AsyncFd<Fd>>,
    inner: Arc<Inner>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        if self.inner.forked() {
            std::mem::forget(self.fd.take());
        }
    }
}

impl Wait for ReactorWait {
    async fn wait(&mut self, until: Option<u64>) -> Waited {
        // In a child forked since (the parent's runtime driven there), the timerfd is the
        // parent's too: neither set nor read.
        if self.fd.inner.forked() {
            return Waited::Gone;
        }
        if self.alarm.arm(until) == Armed::Look {
            // Let the executor run the registering task before looking again.
            tokio::task::yield_now().await;
            return Waited::Early;
        }
        let Some(fd) = self.fd.fd.as_ref() else {
            return Waited::Gone;
        };
        loop {
            match fd.readable().await {
                // The driver reads the alarm itself; tokio keeps a readiness flag.
                Ok(mut guard) => guard.clear_ready(),
                // The reactor refused the descriptor: nothing will wake this task again, so
                // the loop ends and every registration is handed back (they complete or move).
                Err(_) => return Waited::Gone,
            }
            if self.fd.inner.forked() {
                return Waited::Gone;
            }
            let early = self.alarm.take_woken();
            match self.alarm.clear() {
                Ok(true) if !early => return Waited::Planned,
                // Readiness already used, or the setting moved later: wait on, unless a
                // registration asked for a look.
                Ok(false) if !early => {}
                _ => return Waited::Early,
            }
        }
    }

    async fn yield_now(&mut self) {
        tokio::task::yield_now().await;
    }
}

/// The driving task of a reactor-driven driver (one shard): the loop every driver runs, on
/// this runtime.
async fn drive(shut_down: ShutDownOnDrop, alarm: Arc<ReactorAlarm>, fd: AsyncFd<Fd>) {
    let inner = Arc::clone(&shut_down.0);
    let mut turning = Turning::new(Arc::clone(&inner), 0);
    let fd = Registered {
        fd: Some(fd),
        inner,
    };
    DriveLoop::new()
        .on_task(&mut turning, &mut ReactorWait { alarm, fd })
        .await;
}
