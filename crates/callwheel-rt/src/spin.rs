//! The driver's optional spin before a wake-up ([`Config::spin`](crate::Config::spin)): the
//! last stretch of a sleep spent awake, stepping the wheel and reading the clock in between,
//! so the thread is running and its step warm when the deadline comes — the kernel's own
//! wake-up is tens of microseconds late on a loaded or virtual machine. This is the wait
//! between two of those steps.

use std::time::{Duration, Instant};

use crate::clock::{Clock, Waiter};

/// How a spin ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Spun {
    /// The clock reached the deadline.
    Deadline,
    /// The waiter was woken (a timer due sooner, or the shutdown), or the runtime is shutting
    /// down, or the clock did not reach the deadline within the spin's length: the caller
    /// waits as usual, which returns at once for a pending wake-up.
    Stopped,
}

/// Reads `clock` in a loop until it reaches `deadline`, for at most `length` of real time
/// (a clock slower than real time, or one that does not move, ends the spin rather than holding
/// the CPU), ending early when `waiter` has a wake-up pending or `stopping` says the driver is
/// shutting down. Returns how it ended and the real time spent.
pub(crate) fn spin_until(
    clock: &dyn Clock,
    waiter: &dyn Waiter,
    stopping: impl Fn() -> bool,
    deadline: u64,
    length: Duration,
) -> (Spun, Duration) {
    let began = Instant::now();
    loop {
        if clock.now() >= deadline {
            return (Spun::Deadline, began.elapsed());
        }
        if waiter.woken() || stopping() {
            return (Spun::Stopped, began.elapsed());
        }
        let spent = began.elapsed();
        if spent >= length {
            return (Spun::Stopped, spent);
        }
        std::hint::spin_loop();
    }
}

#[cfg(all(test, not(callwheel_loom)))]
mod tests {
    use std::io;

    use super::*;
    use crate::clock::Wake;
    use crate::test_clock::Fixed;
    use crate::ManualClock;

    /// A waiter whose `woken` answers what the test says.
    #[derive(Debug, Default)]
    struct Flag(std::sync::atomic::AtomicBool);

    impl Waiter for Flag {
        fn wait(&self, _: Option<u64>) -> io::Result<Wake> {
            Ok(Wake::Early)
        }
        fn wake(&self) {
            self.0.store(true, std::sync::atomic::Ordering::Release);
        }
        fn woken(&self) -> bool {
            self.0.load(std::sync::atomic::Ordering::Acquire)
        }
    }

    /// Longer than any test waits: a spin that runs this long has missed what should end it.
    const LONG: Duration = Duration::from_secs(5);

    #[test]
    #[cfg_attr(miri, ignore)]
    fn a_spin_ends_when_the_clock_reaches_the_deadline() {
        let clock = ManualClock::new(0);
        let mover = {
            let clock = clock.clone();
            std::thread::spawn(move || {
                for _ in 0..100 {
                    std::thread::sleep(Duration::from_micros(100));
                    clock.advance(10);
                }
            })
        };
        let (spun, _) = spin_until(&clock, &Flag::default(), || false, 500, LONG);
        assert_eq!(spun, Spun::Deadline);
        assert!(clock.now() >= 500);
        mover.join().unwrap();
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn a_wake_up_or_the_shutdown_ends_a_spin_at_once() {
        let woken = Flag::default();
        woken.wake();
        let (spun, spent) = spin_until(&Fixed(0), &woken, || false, 1, LONG);
        assert_eq!(spun, Spun::Stopped);
        assert!(spent < LONG / 5, "the wake-up went unnoticed for {spent:?}");
        let (spun, spent) = spin_until(&Fixed(0), &Flag::default(), || true, 1, LONG);
        assert_eq!(spun, Spun::Stopped);
        assert!(
            spent < LONG / 5,
            "the shutdown went unnoticed for {spent:?}"
        );
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn a_clock_that_does_not_move_ends_the_spin_after_its_length() {
        let length = Duration::from_millis(2);
        let (spun, spent) = spin_until(&Fixed(0), &Flag::default(), || false, 1, length);
        assert_eq!(spun, Spun::Stopped);
        assert!(spent >= length);
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn the_monotonic_waiter_reports_a_pending_wake_up_until_a_wait_takes_it() {
        let w = crate::SystemClock::new(crate::ClockId::Monotonic)
            .waiter()
            .unwrap();
        assert!(!w.woken());
        w.wake();
        assert!(w.woken());
        assert!(w.woken(), "asking does not take the wake-up");
        assert_eq!(w.wait(Some(0)).unwrap(), Wake::Early);
        assert!(!w.woken());
    }
}
