//! Drivers on async-io's reactor (the cargo feature `async-io`): the wheel's alarm is a source
//! of async-io's poller, and the alarm's readiness wakes a waker that fires the wheel right
//! there, on the thread that runs the reactor (smol's and async-std's runner threads in their
//! `block_on`, or async-io's own fallback thread) — as async-io fires its own `Timer`s. No
//! thread of callwheel's runs.
//!
//! Each thread that registers a timer outside a tokio runtime has a wheel of its own
//! ([`thread_link`]): the runner threads of smol's executor register without contending with
//! each other. A wheel's lock is shared only with the thread that turns it (whichever runs the
//! reactor when its alarm fires) and with a drop, reset or re-poll of one of its timers from
//! another thread (a task stolen by another runner). A thread that ends shuts its wheel down:
//! its futures are woken and register again on the thread that polls them next. The
//! process-wide driver is one more such wheel, for a thread whose alarm cannot be made.
//!
//! There is no task: the driver is the waker. A wake-up runs turns of the wheel (the loop
//! every driver runs, [`DriveLoop`], called back here rather than waiting) until it is
//! asleep, sets the alarm to the planned instant, and hands the same waker
//! back to the reactor for the alarm's next readiness. One thread turns the wheel at a time; a
//! wake-up that finds another turning asks it to go round once more.
//!
//! A plan nearer than [`NEAR`] is set on a second alarm, one of async-io's own `Timer`s, and a
//! registration whose aim is that near turns the wheel on its own thread instead of asking the
//! reactor for a look. async-io fires its timers from whichever thread next runs its reactor,
//! where the timerfd's readiness waits for a thread in `epoll_wait`, and after a long idle
//! that thread is slow to come: a look through the reactor lands 25–36 µs after the
//! registration here, too late for a sleep of 10 µs. Farther aims keep the look, whose early
//! wake-up leaves the reactor's thread ready for the deadline.

use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Wake, Waker};

use async_io::{Async, Timer};
use callwheel_rt::drive_loop::{DriveLoop, Event, Next, Turn, Waited};
use callwheel_rt::ClockId;

use crate::driver::{Inner, Link, Turning};
use crate::reactor::{Armed, LookHere, OneTurner, ReactorAlarm};

/// How near a plan must be, ns, to go on async-io's `Timer` rather than the timerfd (and a
/// registration's aim, to be looked at on the registering thread): under the 25–36 µs a look
/// through the reactor took after a long idle on the machine the figures come from, and above
/// the few µs a look here costs. Measured on smol's two runners after a 10 ms idle, against
/// the look alone: a 10 µs sleep ended +1 and +14 µs after the raw sleep against +19 and +26,
/// 20 µs +8 against +12. Taken for every distance, it lost at 50 µs (+32 to +35 against +13):
/// the look stays for anything farther.
const NEAR: u64 = 20_000;

/// Whether the monotonic reading `at` is nearer than [`NEAR`].
fn is_near(at: u64) -> bool {
    let now = ClockId::Monotonic.read().unwrap_or(0);
    at.saturating_sub(now) < NEAR
}

/// The alarm as async-io wants it: something with a descriptor.
struct Fd(Arc<ReactorAlarm>);

impl AsFd for Fd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.alarm.as_fd()
    }
}

/// A thread's wheel on async-io's reactor, shut down when the thread ends.
struct ThreadWheel(Arc<Inner>);

impl Drop for ThreadWheel {
    fn drop(&mut self) {
        self.0.shut_down_and_hand_back();
    }
}

/// A thread's wheel on async-io's reactor, or why it has none.
enum ThreadState {
    /// Not needed yet.
    Unmade,
    /// Made at the thread's first timer.
    Made(ThreadWheel),
    /// Its alarm could not be made (no descriptor left, say): the thread's timers use the
    /// process-wide driver, and it does not try again at every registration.
    Failed,
}

thread_local! {
    static THREAD_WHEEL: RefCell<ThreadState> = const { RefCell::new(ThreadState::Unmade) };
}

/// The calling thread's wheel on async-io's reactor, made at its first timer; `None` when the
/// thread is ending, the wheel's alarm could not be made, or the process is a child forked
/// since callwheel's first driver (the process-wide driver, on threads of its own, serves
/// then).
pub(crate) fn thread_link() -> Option<Link> {
    // After a fork, async-io's reactor polls the parent's `epoll` instance: an alarm added
    // there may wake a parent thread instead of this one (and a wheel made before the fork
    // has its alarm there already).
    if callwheel_rt::fork_generation() != 0 {
        return None;
    }
    THREAD_WHEEL
        .try_with(|state| {
            let mut state = state.borrow_mut();
            match &*state {
                ThreadState::Made(ThreadWheel(inner)) if !inner.is_shut_down() => {
                    return Some(Link::Own(Arc::clone(inner)));
                }
                ThreadState::Failed => return None,
                _ => {}
            }
            match AsyncIoDriver::start() {
                Ok(inner) => {
                    *state = ThreadState::Made(ThreadWheel(Arc::clone(&inner)));
                    Some(Link::Own(inner))
                }
                Err(_) => {
                    *state = ThreadState::Failed;
                    None
                }
            }
        })
        .ok()
        .flatten()
}

/// What the thread turning the wheel holds: the loop, the wheel as it turns it, the alarm as
/// async-io's source and the near alarm (both dropped when the driver shuts down, which lets
/// async-io drop this driver's waker and the driver with it), and what the alarm was last set
/// for.
struct Driving {
    drive: DriveLoop,
    turning: Turning,
    source: Option<Async<Fd>>,
    /// The alarm for a near plan; [`Timer::never`] when the plan is on the timerfd.
    near: Timer,
    /// The instant `near` is set to, if any.
    near_at: Option<u64>,
    /// The instant the alarm was last set to, if any: a wake-up there, rather than early for
    /// a registration, trains the wheel's lead through its serving turn's lateness, as a
    /// driver thread's does.
    planned: Option<u64>,
    /// That setting is a warm-up ([`Turn::warm_up`]): its wake-up trains nothing.
    warming: bool,
}

/// The driver: the wheel, its alarm in async-io's reactor, and who is turning it.
pub(crate) struct AsyncIoDriver {
    inner: Arc<Inner>,
    alarm: Arc<ReactorAlarm>,
    turner: OneTurner,
    /// Held by whichever thread `turner` lets turn.
    driving: Mutex<Driving>,
}

impl AsyncIoDriver {
    /// A driver on async-io's reactor, its first look at the wheel taken (which registers the
    /// alarm's readiness).
    pub(crate) fn start() -> io::Result<Arc<Inner>> {
        let alarm = Arc::new(ReactorAlarm::new()?);
        let inner = Arc::new(Inner::reactor(Arc::clone(&alarm)));
        let driver = Arc::new(AsyncIoDriver {
            inner: Arc::clone(&inner),
            driving: Mutex::new(Driving {
                drive: DriveLoop::new(),
                turning: Turning::new(Arc::clone(&inner), 0),
                source: Some(Async::new(Fd(Arc::clone(&alarm)))?),
                near: Timer::never(),
                near_at: None,
                planned: None,
                warming: false,
            }),
            alarm,
            turner: OneTurner::default(),
        });
        let weak = Arc::downgrade(&driver);
        let here: Weak<dyn LookHere> = weak;
        driver.alarm.look_here_with(here);
        driver.run();
        Ok(inner)
    }

    /// Turns the wheel until it is asleep and the alarm's readiness is registered again; or
    /// leaves that to the thread already doing it.
    fn run(self: &Arc<Self>) {
        if self.inner.forked() {
            // A copy in a forked child: its alarm stays registered for the parent, which
            // dropping the source here would undo (`epoll` instances are shared across a
            // fork), and a parent thread may have held the lock below at the fork.
            return;
        }
        self.turner.run(|| self.turn_and_register());
    }

    /// One round: the wheel's turns until it plans a sleep, then the alarm set and its
    /// readiness registered with this driver's waker. `false` once the driver has shut down
    /// (or the reactor refused the alarm, which would leave nothing to wake it: it then shuts
    /// down, handing every registration back).
    fn turn_and_register(self: &Arc<Self>) -> bool {
        // Only the thread `turner` lets turn gets here: the lock is never contended.
        let mut driving = self.driving.lock().unwrap_or_else(|p| p.into_inner());
        let Driving {
            drive,
            turning,
            source,
            near,
            near_at,
            planned,
            warming,
        } = &mut *driving;
        let Some(fd) = source.as_ref() else {
            return false;
        };
        let waker = Waker::from(Arc::clone(self));
        let mut cx = Context::from_waker(&waker);
        // async-io reports the readiness that woke this driver once more, at the next poll:
        // it is taken here, with the alarm's expiry, rather than after the turns below (a
        // read of the alarm finding nothing and one more turn, at every wake-up). When the
        // driver was not woken by the reactor this registers the waker, as the poll after
        // the turns would.
        // The near alarm going off is the setting the driver made.
        let near_fired = near_at.is_some() && Pin::new(&mut *near).poll(&mut cx).is_ready();
        if near_fired {
            *near_at = None;
        }
        let (mut looking, fd_fired) = match fd.poll_readable(&mut cx) {
            // An expiry with no early look marked is the setting the driver made.
            Poll::Ready(Ok(())) => (
                true,
                matches!(self.alarm.clear(), Ok(true)) && !self.alarm.is_woken(),
            ),
            Poll::Pending => (true, false),
            // The reactor refused the alarm (async-io keeps the waker regardless, so a later
            // poll would answer `Pending` with nothing watching): shut down, as below.
            Poll::Ready(Err(_)) => {
                self.inner.shut_down_and_hand_back();
                (false, false)
            }
        };
        if let (true, Some(at)) = (near_fired || fd_fired, planned.take()) {
            if *warming {
                turning.count(Event::WarmedUp(Waited::Planned));
            } else {
                drive.woke(turning, Some(at), Waited::Planned);
            }
        }
        // A registration that asked for an early look marked the alarm after its timer was in
        // the wheel: the turns below see that timer, so the mark is spent here rather than
        // found when the alarm is set (one more turn and one more setting).
        self.alarm.take_woken();
        while looking {
            match drive.turn(turning) {
                Next::Exit => looking = false,
                Next::Again => continue,
                Next::Sleep(until) => {
                    // A warm-up first, before a long sleep until an exact deadline.
                    let first = until.and_then(|t| turning.warm_up(t));
                    let at = first.or(until);
                    match at.filter(|&t| is_near(t)) {
                        Some(t) => {
                            if *near_at != Some(t) {
                                near.set_at(callwheel_rt::monotonic_instant(t));
                                *near_at = Some(t);
                            }
                            if Pin::new(&mut *near).poll(&mut cx).is_ready() {
                                // Already passed: turn again.
                                *near_at = None;
                                continue;
                            }
                            // The timerfd holds no plan of the driver's meanwhile (its expiry
                            // would be taken for this plan's); a registration's look stands.
                            if self.alarm.arm(None) == Armed::Look {
                                continue;
                            }
                        }
                        None => {
                            if near_at.take().is_some() {
                                *near = Timer::never();
                            }
                            if self.alarm.arm(at) == Armed::Look {
                                continue;
                            }
                        }
                    }
                    match fd.poll_readable(&mut cx) {
                        Poll::Pending => {
                            *warming = first.is_some();
                            *planned = at;
                            return true;
                        }
                        Poll::Ready(Ok(())) => {
                            // Already readable: take the expiry (if it is one) and look again.
                            let _ = self.alarm.clear();
                        }
                        Poll::Ready(Err(_)) => {
                            self.inner.shut_down_and_hand_back();
                            looking = false;
                        }
                    }
                }
            }
        }
        // Shut down: the alarms leave the reactor, which drops the wakers it kept (and with
        // the last one, this driver).
        *source = None;
        *near = Timer::never();
        *near_at = None;
        false
    }
}

impl LookHere for AsyncIoDriver {
    fn look_here(self: Arc<Self>, aim: u64) -> bool {
        if !is_near(aim) {
            return false;
        }
        #[cfg(test)]
        tests::LOOKS_HERE.with(|n| n.set(n.get() + 1));
        self.run();
        true
    }
}

impl std::fmt::Debug for AsyncIoDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncIoDriver").finish_non_exhaustive()
    }
}

impl Wake for AsyncIoDriver {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // The alarm fired (or a registration set it to fire): the turning thread takes its
        // expiry, so that the reactor does not report it again.
        self.run();
    }
}

#[cfg(all(test, not(callwheel_loom)))]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::time::{Duration, Instant};

    thread_local! {
        /// Looks a registration on this thread made itself ([`LookHere`]).
        pub(super) static LOOKS_HERE: Cell<u64> = const { Cell::new(0) };
    }

    /// The planned wake-ups and warm-ups of the calling thread's wheel.
    fn counted() -> (u64, u64) {
        let stats = thread_link().expect("the thread's wheel").stats();
        (stats.wakeups, stats.warm_ups)
    }

    // A registration whose aim is nearer than a look through the reactor would come turns the
    // wheel itself, within its first poll; a farther one leaves the look to the reactor. Both
    // sleeps still end, and never early. (A registration asks for nothing while the driver is
    // awake, turning on another thread: not every near sleep looks here.)
    #[test]
    fn a_near_aim_is_looked_at_by_the_registering_thread() {
        std::thread::spawn(|| {
            let looks = || LOOKS_HERE.with(Cell::get);
            let mut cx = Context::from_waker(Waker::noop());
            // The thread's wheel made first: a sleep that makes it is long over by its poll.
            async_io::block_on(crate::sleep(Duration::from_micros(1)));
            let mut near_looks = 0;
            for d in [Duration::from_micros(10); 50]
                .into_iter()
                .chain([Duration::from_millis(20)])
            {
                let start = Instant::now();
                let mut sleep = std::pin::pin!(crate::sleep(d));
                let before = looks();
                // A poll that comes after the deadline (a preempted thread) registers nothing.
                if sleep.as_mut().poll(&mut cx).is_pending() {
                    let here = looks() - before;
                    if d < Duration::from_micros(20) {
                        near_looks += here;
                    } else {
                        assert_eq!(here, 0, "a sleep of {d:?} looked here");
                    }
                }
                async_io::block_on(sleep);
                assert!(start.elapsed() >= d);
            }
            assert!(near_looks > 0, "no near sleep looked here");
        })
        .join()
        .unwrap();
    }

    // On async-io's reactor a wake-up at the alarm's setting is counted as a driver thread's
    // is: a long exact sleep is warmed up (its deadline's own wake-up follows unless the late
    // warm-up fired it), and a tolerant one whose window the lead serves wakes once, as
    // planned. A registration's early look is neither.
    #[test]
    fn a_wake_up_at_the_setting_is_counted_as_planned() {
        std::thread::spawn(|| {
            let long = Duration::from_millis(50);
            let start = Instant::now();
            async_io::block_on(crate::sleep(long));
            assert!(start.elapsed() >= long);
            let (wakeups, warm_ups) = counted();
            assert_eq!(warm_ups, 1, "the warm-up");
            assert!(wakeups <= 1, "{wakeups} planned wake-ups");
            async_io::block_on(crate::sleep(long).tolerance(Duration::from_millis(10)));
            assert_eq!(
                counted(),
                (wakeups + 1, 1),
                "one planned wake-up, no warm-up"
            );
        })
        .join()
        .unwrap();
    }
}
