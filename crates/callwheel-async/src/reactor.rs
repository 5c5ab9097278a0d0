//! Drivers with no thread of their own: a shard whose wake-ups are an [`Alarm`] (a timerfd)
//! that the executor's own reactor watches, and whose firing is a task of that executor.
//!
//! The task loops on the shard exactly as a driver thread does ([`Inner::turn`]: fire what is
//! due, with the lock released, and plan the next wake-up), but where a thread would sleep it
//! sets the alarm to the planned instant and awaits its readiness. A registration that needs
//! an earlier wake-up does not touch the task: it marks the alarm woken and sets it to a time
//! already passed, so the reactor wakes the task at once.
//!
//! The one race — a registration between the task's plan and its setting the alarm, whose
//! early setting the task's would overwrite — is closed by the mark: the task sets the alarm
//! first, then looks at the mark, and a registration marks first, then sets the alarm. Either
//! the task sees the mark (and plans again) or the registration's setting comes after the
//! task's (and stands).

use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Waker;

use callwheel_rt::Alarm;

use crate::driver::{Inner, Next, BUDGET};

/// A reactor-driven shard's alarm, and the mark of an early wake-up.
#[derive(Debug)]
pub(crate) struct ReactorAlarm {
    pub(crate) alarm: Alarm,
    woken: AtomicBool,
}

impl ReactorAlarm {
    pub(crate) fn new() -> io::Result<ReactorAlarm> {
        Ok(ReactorAlarm {
            alarm: Alarm::new()?,
            woken: AtomicBool::new(false),
        })
    }

    /// Makes the task look at its wheel again, at once.
    pub(crate) fn wake_now(&self) {
        self.woken.store(true, Ordering::SeqCst);
        // A reading long past: readable at once. Should setting it fail (it cannot, for a
        // valid timerfd), the mark still makes the task's next look plan again.
        let _ = self.alarm.set(Some(1));
    }

    /// Takes the mark of an early wake-up.
    fn take_woken(&self) -> bool {
        self.woken.swap(false, Ordering::SeqCst)
    }
}

/// What a reactor offers the driving task: waiting for the alarm's readiness, and yielding.
pub(crate) trait Reactor {
    /// Waits until the alarm is readable (and forgets that readiness once it has been used).
    fn readable(&mut self) -> impl Future<Output = io::Result<()>> + Send;

    /// Lets the executor run other tasks before the driver goes on (after a budget of
    /// expiries).
    fn yield_now(&mut self) -> impl Future<Output = ()> + Send;
}

/// Shuts the driver down when its task ends or is dropped (the runtime shut down): every
/// future still registered is woken and, polled again, registers elsewhere or completes.
struct ShutDownOnDrop(Arc<Inner>);

impl Drop for ShutDownOnDrop {
    fn drop(&mut self) {
        self.0.shut_down();
    }
}

/// The driving task of a reactor-driven driver (one shard).
pub(crate) async fn drive<R: Reactor>(inner: Arc<Inner>, alarm: Arc<ReactorAlarm>, mut reactor: R) {
    let _shut_down = ShutDownOnDrop(Arc::clone(&inner));
    let mut due: Vec<Waker> = Vec::with_capacity(BUDGET as usize);
    // As a driver thread: the instant the wait that just ended was planned for, and how late
    // after it the turn it served woke its futures (it trains the lead).
    let mut planned: Option<u64> = None;
    let mut late: Option<u64> = None;
    loop {
        let next = inner.turn(0, &mut due, late.take());
        if let Some(at) = planned.take() {
            late = Some(inner.clock_now().saturating_sub(at));
        }
        match next {
            Next::Exit => return,
            Next::Again => reactor.yield_now().await,
            Next::Sleep(until) => {
                if alarm.alarm.set(until).is_err() {
                    // Never expected of a valid timerfd; look again after yielding rather
                    // than sleep through a deadline.
                    reactor.yield_now().await;
                    continue;
                }
                if alarm.take_woken() {
                    continue;
                }
                loop {
                    if reactor.readable().await.is_err() {
                        // The reactor refused the descriptor: nothing will wake this task
                        // again, so hand every registration back (they complete or move).
                        return;
                    }
                    let early = alarm.take_woken();
                    match alarm.alarm.clear() {
                        Ok(true) => {
                            if !early {
                                inner.woke_as_planned(0);
                                planned = until;
                            }
                            break;
                        }
                        // Readiness already used, or the setting moved later: wait on, unless
                        // a registration asked for a look.
                        Ok(false) if !early => {}
                        _ => break,
                    }
                }
            }
        }
    }
}
