//! Drivers with no thread of their own: a shard whose wake-ups are an [`Alarm`] (a timerfd)
//! that an executor's own reactor watches (`tokio_reactor.rs`, `async_io_reactor.rs`).
//!
//! Such a driver turns its shard as a driver thread does (`Inner::turn`: fire what is due,
//! with the lock released, and plan the next wake-up), but where a thread would sleep it sets
//! the alarm to the planned instant and waits for the reactor to report it readable. A
//! registration that needs an earlier wake-up does not touch the driver: it marks the alarm
//! woken and sets it to a time already passed, so the reactor reports it at once.
//!
//! The one race — a registration between the driver's plan and its setting the alarm, whose
//! early setting the driver's would overwrite — is closed by the mark: the driver sets the
//! alarm first, then looks at the mark, and a registration marks first, then sets the alarm.
//! Either the driver sees the mark (and plans again) or the registration's setting comes after
//! the driver's (and stands).

use std::io;

use callwheel_rt::Alarm;

use crate::sync::{AtomicBool, Ordering};

/// What a driver does after setting its alarm for a planned sleep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Armed {
    /// The setting stands: wait for the alarm.
    Wait,
    /// A registration asked for a look meanwhile: turn the wheel again.
    Look,
}

/// How the alarm is set: the timerfd (a model replaces it in the loom tests).
pub(crate) trait SetAlarm {
    /// Sets it for the reading `at`, or disarms it.
    fn set(&self, at: Option<u64>) -> io::Result<()>;
}

impl SetAlarm for Alarm {
    fn set(&self, at: Option<u64>) -> io::Result<()> {
        Alarm::set(self, at)
    }
}

/// A reactor-driven shard's alarm, and the mark of an early wake-up.
#[derive(Debug)]
pub(crate) struct ReactorAlarm<A = Alarm> {
    pub(crate) alarm: A,
    woken: AtomicBool,
}

impl ReactorAlarm {
    pub(crate) fn new() -> io::Result<ReactorAlarm> {
        Ok(ReactorAlarm::with(Alarm::new()?))
    }
}

impl<A: SetAlarm> ReactorAlarm<A> {
    pub(crate) fn with(alarm: A) -> ReactorAlarm<A> {
        ReactorAlarm {
            alarm,
            woken: AtomicBool::new(false),
        }
    }

    /// The registration's side: makes the driver look at its wheel again, at once.
    pub(crate) fn wake_now(&self) {
        self.woken.store(true, Ordering::SeqCst);
        // A reading long past: readable at once. Should setting it fail (it cannot, for a
        // valid timerfd), the mark still makes the task's next look plan again.
        let _ = self.alarm.set(Some(1));
    }

    /// The driver's side: sets the alarm for the planned instant, then looks at the mark.
    /// A failed setting (never expected of a valid timerfd) is a [`Armed::Look`] too, so that
    /// no deadline is slept through.
    pub(crate) fn arm(&self, until: Option<u64>) -> Armed {
        if self.alarm.set(until).is_err() || self.take_woken() {
            Armed::Look
        } else {
            Armed::Wait
        }
    }

    /// Whether an early wake-up is marked (without taking the mark).
    #[cfg(feature = "async-io")]
    pub(crate) fn is_woken(&self) -> bool {
        self.woken.load(Ordering::SeqCst)
    }

    /// Takes the mark of an early wake-up.
    pub(crate) fn take_woken(&self) -> bool {
        self.woken.swap(false, Ordering::SeqCst)
    }
}
