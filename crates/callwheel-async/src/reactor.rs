//! Drivers with no thread of their own: a shard whose wake-ups are an [`Alarm`] (a timerfd)
//! that an executor's own reactor watches (`tokio_reactor.rs`, `async_io_reactor.rs`).
//!
//! Such a driver turns its shard as a driver thread does (`Inner::turn`: fire what is due,
//! with the lock released, and plan the next wake-up), but where a thread would sleep it sets
//! the alarm to the planned instant and waits for the reactor to report it readable. A
//! registration that needs an earlier wake-up does not turn the wheel itself: it marks the
//! alarm woken and sets it to a time already passed, so the reactor reports it at once.
//!
//! The one race — a registration between the driver's plan and its setting the alarm, whose
//! early setting the driver's would overwrite — is closed by the mark: the driver sets the
//! alarm first, then looks at the mark, and a registration marks first, then sets the alarm.
//! Either the driver sees the mark (and plans again) or the registration's setting comes after
//! the driver's (and stands).
//!
//! A driver may also offer to look on the registering thread itself ([`LookHere`]), for an aim
//! too near for a trip through the reactor to serve: async-io's driver does (its near alarm is
//! a timer of async-io's own, which any thread may set).

use std::io;
use std::sync::{Arc, OnceLock, Weak};

use callwheel_rt::Alarm;

use crate::sync::{AtomicBool, AtomicU64, Ordering};

/// What a driver does after setting its alarm for a planned sleep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Armed {
    /// The setting stands: wait for the alarm.
    Wait,
    /// A registration asked for a look meanwhile: turn the wheel again.
    Look,
}

/// A reactor-driven driver that a registration can ask to look at its wheel on the registering
/// thread, at once.
pub(crate) trait LookHere: Send + Sync + std::fmt::Debug {
    /// Turns the wheel here and sets the alarm for its plan when `aim` (a monotonic reading) is
    /// nearer than a look through the reactor would come; `false`, doing nothing, otherwise.
    fn look_here(self: Arc<Self>, aim: u64) -> bool;
}

/// One thread turns a reactor driver's wheel at a time, whichever asks (the reactor's thread
/// when the alarm goes off, a registering thread looking here): a request that finds another
/// thread turning asks it to go round once more, so a turn begins after every request.
///
/// Every access is a read-modify-write: whichever of a request and the turning thread's last
/// look at `again` comes first, the second reads what the first wrote, so a turning that ended
/// before the request is seen ended there (plain accesses would lean on the sequentially
/// consistent order, which loom does not model).
#[derive(Debug, Default)]
#[cfg_attr(not(feature = "async-io"), allow(dead_code))]
pub(crate) struct OneTurner {
    turning: AtomicBool,
    again: AtomicBool,
}

/// Lets go of the turning, also when a turn panics: a flag left set would turn the wheel
/// never again.
struct Turned<'a>(&'a AtomicBool);

impl Drop for Turned<'_> {
    fn drop(&mut self) {
        self.0.swap(false, Ordering::SeqCst);
    }
}

#[cfg_attr(not(feature = "async-io"), allow(dead_code))]
impl OneTurner {
    /// Runs `turn` here, again for every request that comes meanwhile, or leaves that to the
    /// thread already turning. `turn` answers `false` once the driver is done. A registering
    /// thread that looks here goes round again only for the requests that come while it turns
    /// (handing them to the reactor instead was measured: it put a 10 µs sleep on smol back at
    /// +15 to +23 µs after the raw sleep, against −4 to +10).
    pub(crate) fn run(&self, mut turn: impl FnMut() -> bool) {
        loop {
            if self.turning.swap(true, Ordering::SeqCst) {
                // Another thread turns: it goes round once more after this.
                self.again.swap(true, Ordering::SeqCst);
                if self.turning.fetch_or(false, Ordering::SeqCst) {
                    return;
                }
                // It let go between the two looks: take over.
                continue;
            }
            // A request this clears is ordered before the turn, which sees its registration.
            self.again.swap(false, Ordering::SeqCst);
            let going = {
                let _turned = Turned(&self.turning);
                turn()
            };
            if !going || !self.again.swap(false, Ordering::SeqCst) {
                return;
            }
        }
    }
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
    /// The driver's own last setting of the alarm ([`ReactorAlarm::arm`]: 0 for disarmed,
    /// which a one-shot timerfd also is once its expiry is taken; [`UNKNOWN`] after a failed
    /// setting). A registration's setting (a time passed) is not recorded: the reactor
    /// reports it whatever the driver does next, and its mark is looked at after every arming.
    setting: AtomicU64,
    /// The driver, when it looks on a registering thread for a near aim ([`LookHere`]). Weak:
    /// the reactor keeps the driver (its waker) while the alarm is registered there.
    here: OnceLock<Weak<dyn LookHere>>,
}

/// [`ReactorAlarm`]'s record of a setting it does not know.
const UNKNOWN: u64 = u64::MAX;

/// How a setting is recorded: the reading it fires at (at least 1, as the timerfd takes it),
/// or 0 for none.
fn recorded(at: Option<u64>) -> u64 {
    at.map_or(0, |t| t.clamp(1, UNKNOWN - 1))
}

impl ReactorAlarm {
    pub(crate) fn new() -> io::Result<ReactorAlarm> {
        Ok(ReactorAlarm::with(Alarm::new()?))
    }

    /// The driver's side: takes the alarm's expiry, if it has fired ([`Alarm::clear`]).
    pub(crate) fn clear(&self) -> io::Result<bool> {
        let fired = self.alarm.clear()?;
        if fired {
            self.expired();
        }
        Ok(fired)
    }
}

impl<A: SetAlarm> ReactorAlarm<A> {
    pub(crate) fn with(alarm: A) -> ReactorAlarm<A> {
        ReactorAlarm {
            alarm,
            woken: AtomicBool::new(false),
            // A new alarm is disarmed.
            setting: AtomicU64::new(0),
            here: OnceLock::new(),
        }
    }

    /// Offers `driver` for looks on a registering thread ([`ReactorAlarm::wake_for`]).
    #[cfg(feature = "async-io")]
    pub(crate) fn look_here_with(&self, driver: Weak<dyn LookHere>) {
        let _ = self.here.set(driver);
    }

    /// The registration's side, for a timer the driver must serve at `aim`: a look on this
    /// thread when the driver offers one and the aim is near, else [`ReactorAlarm::wake_now`].
    pub(crate) fn wake_for(&self, aim: u64) {
        let here = self.here.get().and_then(Weak::upgrade);
        if !here.is_some_and(|d| d.look_here(aim)) {
            self.wake_now();
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
    /// no deadline is slept through. The setting the driver made last (or saw expire) is not
    /// made again: the kernel still holds it, or it has fired and the reactor reports that.
    /// Only the driver arms, one look at a time, so the record is never raced by another arm.
    pub(crate) fn arm(&self, until: Option<u64>) -> Armed {
        let want = recorded(until);
        let set = self.setting.load(Ordering::SeqCst) == want || {
            let ok = self.alarm.set(until).is_ok();
            self.setting
                .store(if ok { want } else { UNKNOWN }, Ordering::SeqCst);
            ok
        };
        if !set || self.take_woken() {
            Armed::Look
        } else {
            Armed::Wait
        }
    }

    /// The driver's side, after taking an expiry from the alarm: a one-shot timerfd that has
    /// fired is disarmed, so disarming it again is not needed.
    pub(crate) fn expired(&self) {
        self.setting.store(0, Ordering::SeqCst);
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

#[cfg(all(test, not(callwheel_loom)))]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// An alarm that records its settings.
    #[derive(Default)]
    struct Recorded(Mutex<Vec<Option<u64>>>);

    impl SetAlarm for Recorded {
        fn set(&self, at: Option<u64>) -> io::Result<()> {
            self.0.lock().unwrap().push(at);
            Ok(())
        }
    }

    // A turn that panics (a waker's panic is caught inside it; async-io's own calls may still
    // panic) lets go of the turning: the next request turns.
    #[test]
    fn a_panicking_turn_lets_go_of_the_turning() {
        let turner = OneTurner::default();
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            turner.run(|| panic!("a turn that panics"))
        }));
        assert!(panicked.is_err());
        let mut turned = 0;
        turner.run(|| {
            turned += 1;
            true
        });
        assert_eq!(turned, 1);
    }

    // The driver's setting is made once however often it arms the same plan; a new plan, an
    // expiry it took (a one-shot timer is then disarmed) and a registration's early look each
    // change what it must do.
    #[test]
    fn the_driver_does_not_make_the_same_setting_twice() {
        let a = ReactorAlarm::with(Recorded::default());
        assert_eq!(a.arm(Some(100)), Armed::Wait);
        assert_eq!(a.arm(Some(100)), Armed::Wait);
        assert_eq!(a.arm(Some(200)), Armed::Wait);
        a.expired();
        // Disarmed by its expiry: nothing to disarm, but the same plan is set again.
        assert_eq!(a.arm(None), Armed::Wait);
        assert_eq!(a.arm(Some(200)), Armed::Wait);
        a.wake_now();
        assert_eq!(a.arm(Some(200)), Armed::Look, "the mark is seen");
        assert_eq!(a.arm(None), Armed::Wait);
        assert_eq!(
            *a.alarm.0.lock().unwrap(),
            [Some(100), Some(200), Some(200), Some(1), None]
        );
    }
}
