//! The loop every driver runs, whatever a firing does and whatever wakes it.
//!
//! A driver turns its wheel until nothing is due, waits until its planned wake-up (or an
//! earlier one a registration asks for), and learns from how late each planned wake-up was
//! served: that delay trains its [`Lead`](crate::Lead). What differs between drivers is kept
//! out of the loop:
//! - **what a firing does** is the driver's [`Turn`]: the runtime's drivers run callbacks and
//!   queue deferred ones; `callwheel-async`'s wake wakers;
//! - **what wakes it** is how the loop is run: [`DriveLoop::on_thread`] where a thread of its
//!   own sleeps on a [`Waiter`] (with the runtime's optional spin), [`DriveLoop::on_task`]
//!   where a task awaits an executor's reactor or a test clock ([`Wait`]), and
//!   [`DriveLoop::turn`] with [`DriveLoop::woke`] where the reactor calls the driver back
//!   itself (a waker, with no task).
//!
//! Before a long sleep until an exact deadline a driver may ask for a warm-up
//! ([`Turn::warm_up`], [`Lead::warm_up`](crate::Lead::warm_up)): the loop then waits until that
//! earlier instant first and turns again, and that wait trains nothing (its delay is the deep
//! idle's, which the warm-up exists to take off the deadline).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::clock::{Clock, Waiter, Wake};
use crate::spin::{spin_until, Spun};

/// How often a spinning driver turns its wheel while it waits for its deadline
/// ([`Config::spin`](crate::Config::spin)): often enough to keep the turn's code and data in
/// the caches, at a small cost next to the spin itself (a turn that fires nothing takes well
/// under a microsecond when warm).
const SPIN_STEP: Duration = Duration::from_micros(10);

/// What a driver does after one turn of its wheel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Turn again at once: the turn fired something, or its budget ran out.
    Again,
    /// Nothing is due: wait until the clock reads this (`None`: until woken).
    Sleep(Option<u64>),
    /// The driver has shut down.
    Exit,
}

/// How a driver's wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Waited {
    /// At the planned instant: how late the turn after it delivers trains the lead.
    Planned,
    /// Before it: a registration needed an earlier wake-up, or the driver is shutting down.
    Early,
    /// A clock was set: the next turn reads the clock again.
    ClockSet,
    /// The wait failed; a thread then sleeps a millisecond rather than spin on it.
    Failed,
    /// Nothing can wake the driver any more (an executor's reactor refused its alarm): the
    /// loop ends, as at a shutdown.
    Gone,
}

impl From<std::io::Result<Wake>> for Waited {
    fn from(waited: std::io::Result<Wake>) -> Waited {
        match waited {
            Ok(Wake::Deadline) => Waited::Planned,
            Ok(Wake::Early) => Waited::Early,
            Ok(Wake::ClockSet) => Waited::ClockSet,
            Err(_) => Waited::Failed,
        }
    }
}

/// What the loop tells a driver for its statistics ([`Turn::count`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A wait ended.
    Waited(Waited),
    /// A spin before a wake-up ended: whether it reached the deadline, and the real time it
    /// held the CPU.
    Spun {
        /// The clock reached the deadline during the spin.
        reached: bool,
        /// How long the spin ran.
        spent: Duration,
    },
    /// A warm-up's wait ended ([`Turn::warm_up`]): not a planned wake-up.
    WarmedUp(Waited),
}

/// A driver's wheel as its loop sees it: what differs between drivers in what a firing does.
pub trait Turn {
    /// One look at the wheel: fire what is due (within the driver's budget per hold of its
    /// lock), plan the next wake-up and say what the loop does next. `late`, when given, is how
    /// long after a planned wake-up's instant the turn it served had delivered its firings:
    /// the driver trains its lead with it.
    fn turn(&mut self, late: Option<u64>) -> Next;

    /// The clock the driver's deadlines are readings of.
    fn clock(&self) -> &dyn Clock;

    /// Whether the driver is shutting down (a spin ends at once).
    fn stopping(&self) -> bool;

    /// Counts what the loop did (nothing by default).
    fn count(&mut self, _event: Event) {}

    /// Where to wake first before the sleep until `until` the last turn planned: a warm-up
    /// before a long sleep's exact deadline ([`Lead::warm_up`](crate::Lead::warm_up)), after
    /// which the loop turns again. `None` (the default): sleep through.
    fn warm_up(&mut self, _until: u64) -> Option<u64> {
        None
    }
}

/// How a task waits between turns: an executor's reactor, or a test clock's timer.
pub trait Wait {
    /// Waits until the clock reads `until` (`None`: until woken) or until a registration asks
    /// for an earlier look, and says which.
    fn wait(&mut self, until: Option<u64>) -> impl Future<Output = Waited>;

    /// Lets the executor run its other tasks between two turns that fire (by default, one
    /// pending poll with the task woken again at once).
    fn yield_now(&mut self) -> impl Future<Output = ()> {
        YieldNow(false)
    }
}

/// One pending poll, the task woken again at once.
struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// The loop's memory from one turn to the next: the instant the wait that just ended was
/// planned for, and how late after it the turn it served delivered.
#[derive(Clone, Copy, Debug, Default)]
pub struct DriveLoop {
    planned: Option<u64>,
    late: Option<u64>,
}

impl DriveLoop {
    /// A loop that has not turned yet.
    pub fn new() -> DriveLoop {
        DriveLoop::default()
    }

    /// One turn of `driver`'s wheel, given how late the last planned wake-up was served; after
    /// the turn that serves a planned wake-up, how late it delivered is kept for the next.
    pub fn turn<T: Turn + ?Sized>(&mut self, driver: &mut T) -> Next {
        let next = driver.turn(self.late.take());
        if let Some(at) = self.planned.take() {
            self.late = Some(driver.clock().now().saturating_sub(at));
        }
        next
    }

    /// A wait for `until` ended, as `how` says: counted, and remembered when it ended at the
    /// planned instant.
    pub fn woke<T: Turn + ?Sized>(&mut self, driver: &mut T, until: Option<u64>, how: Waited) {
        driver.count(Event::Waited(how));
        if how == Waited::Planned {
            self.planned = until;
        }
    }

    /// The loop on a thread of the driver's own, which sleeps on `waiter` (woken early through
    /// it) until the driver shuts down. With a `spin`, the last `spin` before each planned
    /// wake-up is spent awake, turning the wheel every few microseconds and reading the clock
    /// in between, so that the turn is warm when the deadline comes
    /// ([`Config::spin`](crate::Config::spin)); none on a simulated clock.
    pub fn on_thread<T: Turn + ?Sized>(
        mut self,
        driver: &mut T,
        waiter: &dyn Waiter,
        spin: Duration,
    ) {
        // Tolerance is the driver's to apply: ask the kernel for no slack of its own. A kernel
        // that refuses leaves its default 50 µs, which only makes wake-ups later. Miri cannot
        // run prctl; the slack only changes real kernel sleeps.
        #[cfg(not(miri))]
        let _ = crate::clock::ClockId::minimise_timer_slack();
        let spin_ns = if driver.clock().simulated() {
            0
        } else {
            crate::saturating_ns(spin)
        };
        // The deadline the running spin waits for, and when that spin began.
        let mut spinning: Option<(u64, Instant)> = None;
        // The deadline a sleep that ends where its spin begins is for.
        let mut spin_for: Option<u64> = None;
        loop {
            let mut until = match self.turn(driver) {
                Next::Exit => return,
                Next::Again => continue,
                Next::Sleep(until) => until,
            };
            // A long exact sleep may warm up first: the driver's plan is that instant, so a
            // registration whose aim comes after it does not wake the thread (a spin, if any,
            // follows as for any other sleep).
            if let Some(first) = until.and_then(|t| driver.warm_up(t)) {
                let how = Waited::from(waiter.wait(Some(first)));
                driver.count(Event::WarmedUp(how));
                if how == Waited::Failed {
                    std::thread::sleep(Duration::from_millis(1));
                }
                continue;
            }
            if let Some(t) = until.filter(|_| spin_ns > 0) {
                if driver.clock().now().saturating_add(spin_ns) < t {
                    // Asleep until the spin begins.
                    spinning = None;
                    spin_for = Some(t);
                    until = Some(t - spin_ns);
                } else if spin_began(&mut spinning, t).elapsed() < spin + SPIN_STEP {
                    // Within the spin of the planned wake-up: stay awake and turn again at the
                    // deadline, or after a short stretch, so that the turn's code and data are
                    // in the caches when it fires (after a long sleep they are not, and the
                    // first turn spends microseconds loading them).
                    let stop = || driver.stopping();
                    let (spun, spent) = spin_until(driver.clock(), waiter, stop, t, SPIN_STEP);
                    let reached = spun == Spun::Deadline;
                    driver.count(Event::Spun { reached, spent });
                    match spun {
                        Spun::Deadline => {
                            // Reached awake: how late the next turn delivers trains the lead,
                            // as after a sleep that ended on time.
                            spinning = None;
                            self.planned = Some(t);
                            continue;
                        }
                        Spun::Stopped if !waiter.woken() => continue,
                        // A timer due sooner, or the shutdown: take the wake-up (the waiter
                        // returns at once), which the next sleep would otherwise end on.
                        Spun::Stopped => until = Some(0),
                    }
                } else {
                    // The clock did not reach the deadline within the spin's length (a clock
                    // slower than real time): sleep as without a spin.
                    spinning = None;
                }
            }
            let slept_for = spin_for.take();
            let how = Waited::from(waiter.wait(until));
            driver.count(Event::Waited(how));
            match how {
                Waited::Planned if spin_ns == 0 => self.planned = until,
                Waited::Planned => {
                    // A sleep meant to end where its spin begins that the kernel ended past
                    // the deadline: the turn after it delivers late, and the lead learns it as
                    // without a spin. One that ended in time is followed by the spin, which
                    // trains the lead when it reaches the deadline.
                    if let Some(t) = slept_for.filter(|&t| driver.clock().now() >= t) {
                        self.planned = Some(t);
                    }
                }
                // Do not spin on a failing sleep: fall back to a coarse one.
                Waited::Failed => std::thread::sleep(Duration::from_millis(1)),
                Waited::Early | Waited::ClockSet | Waited::Gone => {}
            }
        }
    }

    /// The loop on a task of an executor, which waits through `wait` (an alarm its reactor
    /// watches, or a test clock's timer) and yields between turns that fire, until the driver
    /// shuts down or nothing can wake it any more.
    pub async fn on_task<T: Turn + ?Sized, W: Wait + ?Sized>(
        mut self,
        driver: &mut T,
        wait: &mut W,
    ) {
        loop {
            match self.turn(driver) {
                Next::Exit => return,
                Next::Again => wait.yield_now().await,
                Next::Sleep(until) => {
                    if let Some(first) = until.and_then(|t| driver.warm_up(t)) {
                        let how = wait.wait(Some(first)).await;
                        if how == Waited::Gone {
                            return;
                        }
                        driver.count(Event::WarmedUp(how));
                        continue;
                    }
                    let how = wait.wait(until).await;
                    if how == Waited::Gone {
                        return;
                    }
                    self.woke(driver, until, how);
                }
            }
        }
    }
}

/// When the spin for deadline `t` began: the running spin's start if it waits for `t`, else
/// now, recorded as the start of a new one.
fn spin_began(spinning: &mut Option<(u64, Instant)>, t: u64) -> Instant {
    match *spinning {
        Some((spun_for, began)) if spun_for == t => began,
        _ => spinning.insert((t, Instant::now())).1,
    }
}

#[cfg(all(test, not(callwheel_loom)))]
#[path = "drive_loop_tests.rs"]
mod tests;
