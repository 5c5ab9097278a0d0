//! Clocks and the way a driver sleeps on them.
//!
//! A [`Clock`] gives readings in nanoseconds (the wheel's ticks) and makes one [`Waiter`] per
//! shard. A waiter sleeps until an absolute reading or until another thread wakes it early, and
//! says which happened — or that the clock was set, so absolute timers must be re-evaluated.
//!
//! [`SystemClock`] is the kernel's: `CLOCK_MONOTONIC`, `CLOCK_BOOTTIME` (counts suspend) or
//! `CLOCK_REALTIME` (a runtime given it sleeps on its monotonic base: the `steady` module; a
//! realtime waiter then only hears clock sets, for timers on other clock bases). Its waiters:
//!
//! | clock | sleep | early wake-up | clock set |
//! |---|---|---|---|
//! | monotonic | `FUTEX_WAIT_BITSET` with an absolute `CLOCK_MONOTONIC` timeout | bump the word + `FUTEX_WAKE` | cannot happen |
//! | boottime, realtime | timerfd with `TFD_TIMER_ABSTIME` in `poll` | eventfd in the same `poll` | realtime: `TFD_TIMER_CANCEL_ON_SET`, the read fails with `ECANCELED` |
//!
//! Why not `clock_nanosleep(TIMER_ABSTIME)` for the driver, as the raw reference loop uses:
//! nothing but a signal interrupts it, and a signal sent between the driver's last look at its
//! wheel and its entering the sleep is lost (there is no `pselect`-style atomic mask for it), so
//! a new, earlier timer would wait for the old wake-up. The futex wait sleeps on the same
//! kernel hrtimer sleeper as `clock_nanosleep` (absolute, the thread's 1 ns slack, the expiry
//! wakes the thread directly), in one system call, and cannot lose a wake-up: the kernel checks
//! the word before sleeping. It has no boottime timeout and cannot report a realtime clock
//! change, so those clocks use a timerfd (zero-slack hrtimer) and an eventfd, both
//! level-triggered, in one `poll`. Measured with `callwheel latency` on a loaded 2-CPU VM, the
//! futex waiter's median wake-up matched the raw loop's within about ±3 µs, where the
//! timerfd waiter's was 4–6 µs later.
//!
//! [`ManualClock`](crate::ManualClock) is the simulated clock for tests.

use std::fmt::Debug;
use std::io;

use crate::sys;

/// A kernel clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClockId {
    /// `CLOCK_MONOTONIC`: never set, stops during suspend.
    Monotonic,
    /// `CLOCK_BOOTTIME`: like monotonic, but counts time spent suspended.
    Boottime,
    /// `CLOCK_REALTIME`: the wall clock, which an administrator or NTP may set.
    Realtime,
}

impl ClockId {
    fn raw(self) -> rustix::time::ClockId {
        match self {
            ClockId::Monotonic => rustix::time::ClockId::Monotonic,
            ClockId::Boottime => rustix::time::ClockId::Boottime,
            ClockId::Realtime => rustix::time::ClockId::Realtime,
        }
    }

    fn timerfd_raw(self) -> rustix::time::TimerfdClockId {
        match self {
            ClockId::Monotonic => rustix::time::TimerfdClockId::Monotonic,
            ClockId::Boottime => rustix::time::TimerfdClockId::Boottime,
            ClockId::Realtime => rustix::time::TimerfdClockId::Realtime,
        }
    }

    /// Reads the clock, in nanoseconds since its epoch.
    ///
    /// # Errors
    ///
    /// The `clock_gettime` error (none is expected for these clocks).
    pub fn read(self) -> io::Result<u64> {
        sys::clock_gettime(self.raw())
    }

    /// Sleeps until the clock reads `deadline` with `clock_nanosleep(TIMER_ABSTIME)`: the raw
    /// kernel reference the latency experiments compare the runtime with.
    ///
    /// # Errors
    ///
    /// The `clock_nanosleep` error (signals are retried, not errors).
    pub fn sleep_until(self, deadline: u64) -> io::Result<()> {
        sys::clock_nanosleep_abs(self.raw(), deadline)
    }

    /// Sets the calling thread's timer slack to its minimum (1 ns), as the drivers do, so that
    /// the kernel adds no lateness of its own to a sleep.
    ///
    /// # Errors
    ///
    /// The `prctl` error.
    pub fn minimise_timer_slack() -> io::Result<()> {
        sys::set_timer_slack(1)
    }
}

/// `CLOCK_MONOTONIC_COARSE` and its resolution, in nanoseconds: the monotonic clock as of the
/// kernel's latest timekeeping update, read through the vDSO without touching the hardware
/// counter (a few nanoseconds, against some twenty for `CLOCK_MONOTONIC`), and the length of
/// a tick (4 ms at `HZ = 250`). It is never ahead of `CLOCK_MONOTONIC`, but it is not bounded
/// behind it by one tick: right after an idle CPU wakes it lagged by up to 7 ms at a 4 ms
/// resolution on this project's machine. For a caller that needs a lower bound on the time on
/// a hot path and can spend the precise read later, when it is needed at all (an async
/// timeout whose future is usually ready at once).
pub fn coarse_monotonic() -> (u64, u64) {
    static RESOLUTION: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let resolution = *RESOLUTION.get_or_init(sys::coarse_resolution);
    (sys::clock_gettime_coarse(), resolution)
}

/// Why a [`Waiter::wait`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// The clock reached the requested reading.
    Deadline,
    /// [`Waiter::wake`] was called.
    Early,
    /// The clock was set (the realtime clock's `ECANCELED`): re-read it and re-plan.
    ClockSet,
}

/// A time source for the runtime.
pub trait Clock: Send + Sync + Debug + 'static {
    /// The current reading in nanoseconds. It may go backwards (the runtime clamps it); it
    /// must not panic.
    fn now(&self) -> u64;

    /// A new waiter, one per shard.
    ///
    /// # Errors
    ///
    /// Whatever creating the waiter's resources failed with.
    fn waiter(&self) -> io::Result<Box<dyn Waiter>>;

    /// The reading this clock will show at `at` (saturating at 0 and `u64::MAX`): how an
    /// `Instant` deadline ([`Deadline`](crate::Deadline)) becomes this clock's nanoseconds.
    ///
    /// By default, by distance from now: the current reading plus how far `at` lies ahead of
    /// `Instant::now()` (or minus how far behind). That is the right meaning for a clock that
    /// runs at the monotonic clock's rate with another epoch (boottime, realtime); for a
    /// simulated clock it mixes real and simulated time, so simulations arm with
    /// [`Deadline::from_clock_ns`](crate::Deadline::from_clock_ns) instead. The monotonic
    /// [`SystemClock`] converts exactly (see the `instant` module).
    fn ns_at(&self, at: std::time::Instant) -> u64 {
        let anchor = std::time::Instant::now();
        crate::instant::by_distance(at, anchor, self.now())
    }

    /// Work outside any driver started (`true`) or finished (`false`): a deferred callback.
    /// A simulated clock must not jump while such work runs; real clocks ignore it.
    fn busy(&self, _started: bool) {}

    /// Whether time moves only when someone moves it (a test's clock): a driver then learns
    /// nothing about its own wake-up latency from how late it woke, and keeps no
    /// [`Lead`](crate::Lead). `false` by default.
    fn simulated(&self) -> bool {
        false
    }

    /// The kernel clock this clock's own readings are, if any: a deadline given on that base
    /// ([`Deadline::on`](crate::Deadline::on)) is one of this clock's readings. `None` by
    /// default.
    fn base(&self) -> Option<ClockId> {
        None
    }

    /// The present reading of clock base `base`, read as close as possible to a reading of
    /// this clock, or `None` when this clock cannot tell it. A timer armed on another base
    /// than [`Clock::base`] (hrtimers' clock bases: an absolute wall-clock deadline on a
    /// monotonic runtime) waits on this clock for the distance between the two readings, and
    /// is re-evaluated whenever a base is set ([`Clock::sets`], [`Clock::set_watcher`]).
    /// `None` by default: such deadlines are [`Error::NoClockBase`](crate::Error::NoClockBase).
    fn base_now(&self, _base: ClockId) -> Option<u64> {
        None
    }

    /// How many times one of this clock's bases has been set, for a clock that knows (a
    /// simulated one); 0 by default. A change makes every shard re-evaluate its timers armed
    /// on other bases.
    fn sets(&self) -> u64 {
        0
    }

    /// A waiter whose deadlines are readings of clock base `base` rather than of this clock,
    /// or `None` when this clock cannot make one (the default). A runtime on the wall clock
    /// sleeps on its monotonic base ([`Config::clock`](crate::Config::clock)).
    fn waiter_on(&self, _base: ClockId) -> Option<io::Result<Box<dyn Waiter>>> {
        None
    }

    /// A waiter whose `wait` returns [`Wake::ClockSet`] when a kernel clock base is set, for a
    /// clock whose own waiters cannot tell (the monotonic and boottime clocks'): the runtime
    /// runs it on a thread of its own, started when a timer is first armed on another base.
    /// `None` by default.
    ///
    /// # Errors
    ///
    /// Whatever creating the waiter's resources failed with.
    fn set_watcher(&self) -> io::Result<Option<Box<dyn Waiter>>> {
        Ok(None)
    }
}

/// One shard's way of sleeping.
pub trait Waiter: Send + Sync + Debug {
    /// Sleeps until the clock reads `until` (or past it; `None`: until woken), or until
    /// [`Waiter::wake`] is called — including a call made before this one started, since the
    /// last `wait` returned.
    ///
    /// # Errors
    ///
    /// A failing system call.
    fn wait(&self, until: Option<u64>) -> io::Result<Wake>;

    /// Ends the current (or the next) `wait` early. Callable from any thread.
    fn wake(&self);

    /// Whether a [`Waiter::wake`] made since the last `wait` returned is pending, without
    /// sleeping and without taking it (the next `wait` still returns [`Wake::Early`]). A driver
    /// that spins before its deadline ([`Config::spin`](crate::Config::spin)) asks it to notice
    /// a new timer due sooner, or the shutdown. The default answers `false`: the spin then
    /// ends only at its deadline or after its length.
    fn woken(&self) -> bool {
        false
    }
}

/// A kernel clock, with timerfd + eventfd waiters (see the [module documentation](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SystemClock {
    id: ClockId,
}

impl SystemClock {
    /// The kernel clock `id`.
    pub fn new(id: ClockId) -> SystemClock {
        SystemClock { id }
    }

    /// Which clock.
    pub fn id(self) -> ClockId {
        self.id
    }
}

impl Clock for SystemClock {
    fn now(&self) -> u64 {
        // These clocks cannot fail to read; were one to, 0 reads as "backwards" and is clamped
        // to the last good reading by the shard.
        self.id.read().unwrap_or(0)
    }

    fn ns_at(&self, at: std::time::Instant) -> u64 {
        match self.id {
            // `Instant` is a `CLOCK_MONOTONIC` reading on Linux: exact, no clock read.
            ClockId::Monotonic => crate::instant::monotonic_ns(at),
            ClockId::Boottime | ClockId::Realtime => {
                crate::instant::by_distance(at, std::time::Instant::now(), self.now())
            }
        }
    }

    fn base(&self) -> Option<ClockId> {
        Some(self.id)
    }

    fn base_now(&self, base: ClockId) -> Option<u64> {
        base.read().ok()
    }

    fn waiter_on(&self, base: ClockId) -> Option<io::Result<Box<dyn Waiter>>> {
        Some(SystemClock::new(base).waiter())
    }

    fn set_watcher(&self) -> io::Result<Option<Box<dyn Waiter>>> {
        // A realtime timerfd armed with `TFD_TIMER_CANCEL_ON_SET` hears every set of the wall
        // clock, and the kernel reports a resume from suspend (which moves the boottime and
        // realtime clocks against the monotonic one) the same way.
        SystemClock::new(ClockId::Realtime).waiter().map(Some)
    }

    fn waiter(&self) -> io::Result<Box<dyn Waiter>> {
        if self.id == ClockId::Monotonic {
            return Ok(Box::new(FutexWaiter::default()));
        }
        Ok(Box::new(SystemWaiter {
            timer: sys::TimerFd::new(self.id.timerfd_raw())?,
            event: sys::EventFd::new()?,
            cancel_on_set: self.id == ClockId::Realtime,
        }))
    }
}

#[derive(Debug)]
struct SystemWaiter {
    timer: sys::TimerFd,
    event: sys::EventFd,
    cancel_on_set: bool,
}

impl Waiter for SystemWaiter {
    fn wait(&self, until: Option<u64>) -> io::Result<Wake> {
        if let Some(t) = until {
            self.timer.arm_abs(t, self.cancel_on_set)?;
        }
        loop {
            let (timer, event) = sys::poll_two(until.map(|_| &self.timer), &self.event)?;
            if event {
                self.event.clear();
                return Ok(Wake::Early);
            }
            // Arming reset the expiry count, so readable means this arming expired. Only a
            // realtime timer must be read (to tell a clock change from an expiry); skipping
            // the read elsewhere saves a system call between wake-up and firing.
            if timer && !self.cancel_on_set {
                return Ok(Wake::Deadline);
            }
            if timer {
                match self.timer.read()? {
                    sys::TimerRead::Expired => return Ok(Wake::Deadline),
                    sys::TimerRead::ClockSet => return Ok(Wake::ClockSet),
                    sys::TimerRead::NotYet => {}
                }
            }
        }
    }

    fn wake(&self) {
        self.event.signal();
    }
}

/// The monotonic clock's waiter: a futex wait with an absolute `CLOCK_MONOTONIC` timeout.
/// Woken early by bumping the word and waking the futex; a wake-up posted before the wait
/// starts changed the word, which the wait sees (the kernel compares the word before it
/// sleeps), so none is lost. One system call per sleep, and the expiry wakes the thread
/// directly, as `clock_nanosleep`'s does.
#[derive(Debug, Default)]
struct FutexWaiter {
    word: std::sync::atomic::AtomicU32,
    /// The word's value when the last wait returned (only the waiting thread touches it).
    seen: std::sync::atomic::AtomicU32,
}

impl Waiter for FutexWaiter {
    fn wait(&self, until: Option<u64>) -> io::Result<Wake> {
        use std::sync::atomic::Ordering::{Acquire, Relaxed};
        loop {
            let v = self.word.load(Acquire);
            if v != self.seen.load(Relaxed) {
                self.seen.store(v, Relaxed);
                return Ok(Wake::Early);
            }
            if sys::futex_wait(&self.word, v, until)? == sys::FutexWait::TimedOut {
                return Ok(Wake::Deadline);
            }
        }
    }

    fn wake(&self) {
        self.word.fetch_add(1, std::sync::atomic::Ordering::Release);
        sys::futex_wake(&self.word);
    }

    fn woken(&self) -> bool {
        use std::sync::atomic::Ordering::{Acquire, Relaxed};
        self.word.load(Acquire) != self.seen.load(Relaxed)
    }
}

/// Keeps a clock's readings from going backwards: a reading below the last one is replaced by
/// the last one, and counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Clamp {
    last: u64,
    clamped: u64,
}

impl Clamp {
    /// The reading the facility sees for the raw reading `raw`.
    pub(crate) fn read(&mut self, raw: u64) -> u64 {
        if raw < self.last {
            self.clamped += 1;
        } else {
            self.last = raw;
        }
        self.last
    }

    /// How many readings were clamped.
    pub(crate) fn clamped(&self) -> u64 {
        self.clamped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backwards_readings_are_clamped_and_counted() {
        let mut c = Clamp::default();
        assert_eq!(c.read(100), 100);
        assert_eq!(c.read(40), 100);
        assert_eq!(c.read(100), 100);
        assert_eq!(c.read(0), 100);
        assert_eq!(c.read(u64::MAX), u64::MAX);
        assert_eq!(c.read(5), u64::MAX);
        assert_eq!(c.clamped(), 3);
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn system_clocks_read_and_wait() {
        for id in [ClockId::Monotonic, ClockId::Boottime, ClockId::Realtime] {
            let clock = SystemClock::new(id);
            let w = clock.waiter().unwrap();
            let t = clock.now();
            assert_eq!(w.wait(Some(t + 1_000)).unwrap(), Wake::Deadline);
            assert!(clock.now() >= t + 1_000);
            // A wake posted before the wait is not lost.
            w.wake();
            assert_eq!(w.wait(Some(t + 60_000_000_000)).unwrap(), Wake::Early);
            w.wake();
            assert_eq!(w.wait(None).unwrap(), Wake::Early);
        }
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn the_raw_reference_sleeps_until_its_deadline() {
        ClockId::minimise_timer_slack().unwrap();
        let t = ClockId::Monotonic.read().unwrap();
        ClockId::Monotonic.sleep_until(t + 100_000).unwrap();
        assert!(ClockId::Monotonic.read().unwrap() >= t + 100_000);
    }
}
