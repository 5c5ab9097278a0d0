//! Loom models of one shard: `stop`, `drain` and re-arming racing the driver's expiry step,
//! and a set of the wall clock racing the step and an arming on it. The shard code is the real
//! one, built on loom's locks and atomics (`--cfg callwheel_loom`); the clock is a constant
//! (with a settable wall clock for the last two) and there is no worker pool, so the driver
//! step runs every callback itself.
//!
//! Run with `RUSTFLAGS="--cfg callwheel_loom" cargo test -p callwheel-rt --lib --release loom`.

use std::sync::atomic::{AtomicBool, Ordering as StdOrdering};
use std::sync::Arc;

use loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use loom::thread;

use callwheel::Timers;

use crate::clock::{Clock, ClockId, Waiter};
use crate::shared::Shared;
use crate::test_clock::{Fixed, NoSleep};
use crate::timer::{Exec, Stop, Timer};
use crate::{Deadline, Tolerance};

fn at(ns: u64) -> Deadline {
    Deadline::from_clock_ns(ns)
}

fn setup(rearm: bool) -> (Arc<Shared>, Timer, Arc<AtomicUsize>) {
    let s = Shared::new(Arc::new(Fixed(10)), 1, 64, Tolerance::EXACT, None).unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&ran);
    let t = Timer::owned(
        s.new_timer(0, Exec::Direct, move |t, _| {
            if rearm {
                t.start_at(at(30)).unwrap();
            }
            r.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap(),
        Arc::<Shared>::clone(&s),
    );
    t.start_at(at(10)).unwrap();
    (s, t, ran)
}

fn pending_on_wheel(s: &Shared) -> usize {
    crate::sync::lock(&s.shards[0].state).wheel.len()
}

/// `stop` against the expiry step: Cancelled means the callback never runs, NotPending that
/// it has finished, Running that it was taken; every outcome occurs in some interleaving.
#[test]
fn loom_stop_racing_expiry_reports_one_of_three_outcomes() {
    static SEEN: [AtomicBool; 3] = [
        AtomicBool::new(false),
        AtomicBool::new(false),
        AtomicBool::new(false),
    ];
    loom::model(|| {
        let (s, t, ran) = setup(false);
        let driver = {
            let s = Arc::clone(&s);
            thread::spawn(move || s.step(0).fired)
        };
        let outcome = t.stop();
        let ran_at_stop = ran.load(Ordering::SeqCst);
        let fired = driver.join().unwrap();
        match outcome {
            Stop::Cancelled => {
                assert_eq!(fired, 0);
                assert_eq!(ran.load(Ordering::SeqCst), 0);
            }
            Stop::Running => assert_eq!(fired, 1),
            Stop::NotPending => {
                assert_eq!(fired, 1);
                assert_eq!(ran_at_stop, 1, "NotPending before the callback finished");
            }
        }
        assert_eq!(ran.load(Ordering::SeqCst), fired);
        assert_eq!(pending_on_wheel(&s), 0);
        let i = match outcome {
            Stop::Cancelled => 0,
            Stop::Running => 1,
            Stop::NotPending => 2,
        };
        SEEN[i].store(true, StdOrdering::SeqCst);
    });
    for (i, seen) in SEEN.iter().enumerate() {
        assert!(seen.load(StdOrdering::SeqCst), "outcome {i} never occurred");
    }
}

/// `drain` against the expiry step: when it returns, the callback has either finished or
/// will never run.
#[test]
fn loom_drain_never_returns_while_the_callback_runs() {
    loom::model(|| {
        let (s, t, ran) = setup(false);
        let driver = {
            let s = Arc::clone(&s);
            thread::spawn(move || s.step(0).fired)
        };
        let outcome = t.drain();
        let ran_at_drain = ran.load(Ordering::SeqCst);
        let fired = driver.join().unwrap();
        if outcome == Stop::Cancelled {
            assert_eq!(fired, 0);
        } else {
            assert_eq!(fired, 1);
            assert_eq!(
                ran_at_drain, 1,
                "drain returned before the callback finished"
            );
        }
        assert!(!t.is_pending());
    });
}

/// Re-arming from another thread against the expiry step: either the re-arm came first (it
/// was pending, nothing fires) or the firing did (it was not pending); pending afterwards
/// either way, and the wheel holds exactly that one arming.
#[test]
fn loom_rearm_racing_expiry_leaves_one_arming() {
    loom::model(|| {
        let (s, t, ran) = setup(false);
        let driver = {
            let s = Arc::clone(&s);
            thread::spawn(move || s.step(0).fired)
        };
        let was_pending = t.start_at(at(20)).unwrap();
        let fired = driver.join().unwrap();
        assert_eq!(was_pending, fired == 0);
        assert_eq!(ran.load(Ordering::SeqCst), fired);
        assert!(t.is_pending());
        assert_eq!(pending_on_wheel(&s), 1);
    });
}

/// A callback that re-arms itself, drained from another thread: when `drain` returns no
/// callback runs and the re-arm (if it happened) has been cancelled.
#[test]
fn loom_drain_against_a_self_rearming_callback_leaves_nothing_pending() {
    loom::model(|| {
        let (s, t, _ran) = setup(true);
        let driver = {
            let s = Arc::clone(&s);
            thread::spawn(move || s.step(0).fired)
        };
        let _ = t.drain();
        assert!(!t.is_pending());
        assert_eq!(pending_on_wheel(&s), 0);
        driver.join().unwrap();
    });
}

/// Dropping the last handle against the expiry step of a self-re-arming timer: afterwards
/// nothing is pending (the drop's `stop` cancelled any re-arm, or the re-arm saw the timer
/// abandoned), and the callback ran at most once.
#[test]
fn loom_dropping_the_last_handle_racing_expiry_leaves_nothing_pending() {
    loom::model(|| {
        let (s, t, ran) = setup(true);
        let driver = {
            let s = Arc::clone(&s);
            thread::spawn(move || s.step(0).fired)
        };
        drop(t);
        let fired = driver.join().unwrap();
        assert!(ran.load(Ordering::SeqCst) <= fired);
        assert_eq!(pending_on_wheel(&s), 0);
    });
}

/// A clock stuck at 10 whose wall clock reads `1_000 + offset`, settable from any thread:
/// the offset is written before the set is counted, as the kernel sets a clock before the
/// runtime's watcher counts the set.
#[derive(Debug, Default)]
struct SettableWall {
    offset: AtomicU64,
    sets: AtomicU64,
}

impl SettableWall {
    fn set_wall(&self, offset: u64) {
        self.offset.store(offset, Ordering::Release);
        self.sets.fetch_add(1, Ordering::AcqRel);
    }
}

impl Clock for SettableWall {
    fn now(&self) -> u64 {
        10
    }
    fn waiter(&self) -> std::io::Result<Box<dyn Waiter>> {
        Ok(Box::new(NoSleep))
    }
    fn base(&self) -> Option<ClockId> {
        Some(ClockId::Monotonic)
    }
    fn base_now(&self, base: ClockId) -> Option<u64> {
        (base == ClockId::Realtime).then(|| 1_000 + self.offset.load(Ordering::Acquire))
    }
    fn sets(&self) -> u64 {
        self.sets.load(Ordering::Acquire)
    }
}

/// A runtime on a settable wall clock and a counting timer (not yet armed).
fn wall_setup() -> (Arc<SettableWall>, Arc<Shared>, Timer, Arc<AtomicUsize>) {
    let clock = Arc::new(SettableWall::default());
    let dyn_clock: Arc<dyn Clock> = Arc::clone(&clock) as Arc<dyn Clock>;
    let s = Shared::new(dyn_clock, 1, 64, Tolerance::EXACT, None).unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&ran);
    let t = Timer::owned(
        s.new_timer(0, Exec::Direct, move |_, _| {
            r.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap(),
        Arc::<Shared>::clone(&s),
    );
    (clock, s, t, ran)
}

/// A wall deadline 50 ns ahead (key 60, not due), the wall clock set 100 ns forward while the
/// driver steps: after the step the watcher's wake-up brings, it has fired exactly once,
/// whichever saw the set first (seen to fail with the re-keying turned off).
#[test]
fn loom_a_wall_clock_set_racing_a_step_fires_the_passed_deadline_once() {
    loom::model(|| {
        let (clock, s, t, ran) = wall_setup();
        t.start_at(Deadline::on(ClockId::Realtime, 1_050)).unwrap();
        let setter = {
            let clock = Arc::clone(&clock);
            thread::spawn(move || clock.set_wall(100))
        };
        let driver = {
            let s = Arc::clone(&s);
            thread::spawn(move || s.step(0).fired)
        };
        setter.join().unwrap();
        let first = driver.join().unwrap();
        let second = s.step(0).fired;
        assert_eq!(first + second, 1);
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        assert!(!t.is_pending());
    });
}

/// An arming on the wall clock racing a set of it and a driver step: the key is computed
/// under the shard's lock, so a set the step has already re-evaluated cannot leave the new
/// arming with a stale key; after the watcher's step it has fired once (seen to fail with
/// the key computed only before the lock).
#[test]
fn loom_a_wall_arming_racing_a_set_and_a_step_is_never_left_stale() {
    loom::model(|| {
        let (clock, s, t, ran) = wall_setup();
        let setter = {
            let clock = Arc::clone(&clock);
            thread::spawn(move || clock.set_wall(100))
        };
        let driver = {
            let s = Arc::clone(&s);
            thread::spawn(move || s.step(0).fired)
        };
        t.start_at(Deadline::on(ClockId::Realtime, 1_050)).unwrap();
        setter.join().unwrap();
        let first = driver.join().unwrap();
        let second = s.step(0).fired;
        assert_eq!(first + second, 1);
        assert_eq!(ran.load(Ordering::SeqCst), 1);
    });
}

#[test]
fn loom_a_notification_and_an_alarm_wake_a_sleeper_once() {
    use crate::sleeper::{Sleeper, Woken};
    loom::model(|| {
        let me = Arc::new(Sleeper::current());
        let wakers: Vec<_> = [Woken::Notified, Woken::TimedOut]
            .into_iter()
            .map(|how| {
                let me = Arc::clone(&me);
                thread::spawn(move || me.wake(how).then_some(how))
            })
            .collect();
        let woken = me.park();
        let winners: Vec<Woken> = wakers
            .into_iter()
            .filter_map(|w| w.join().unwrap())
            .collect();
        assert_eq!(
            winners,
            [woken],
            "exactly one waker wins, and it is the one seen"
        );
    });
}

#[test]
fn loom_a_condvar_loses_no_notification() {
    use crate::condvar::Condvar;
    loom::model(|| {
        let state = Arc::new((loom::sync::Mutex::new(false), Condvar::new()));
        let notifier = {
            let state = Arc::clone(&state);
            thread::spawn(move || {
                let (m, cv) = &*state;
                *m.lock().unwrap() = true;
                cv.notify_one();
            })
        };
        let (m, cv) = &*state;
        let mut g = m.lock().unwrap();
        while !*g {
            // No timeout: a lost notification would leave this thread parked for ever, which
            // loom reports as a deadlock.
            cv.wait_releasing(g, drop, None).unwrap();
            g = m.lock().unwrap();
        }
        drop(g);
        notifier.join().unwrap();
        assert_eq!(cv.waiters(), 0);
    });
}
