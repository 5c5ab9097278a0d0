//! Driver-step logic without threads: each test calls the driver's step by hand on a manual
//! clock, so every outcome is deterministic (and the tests run under Miri).

use std::sync::atomic::{AtomicU64, Ordering as StdOrdering};
use std::sync::{Arc, Mutex as StdMutex};

use callwheel::Missed;

use crate::driver::Scratch;
use crate::shared::Shared;
use crate::timer::{Exec, Fire, Stop, Timer};
use crate::{Clock, Deadline, ManualClock, Tolerance};

/// A deadline in the manual clock's nanoseconds.
pub(crate) fn at(ns: u64) -> Deadline {
    Deadline::from_clock_ns(ns)
}

/// A period or tolerance in nanoseconds.
pub(crate) fn ns(ns: u64) -> std::time::Duration {
    std::time::Duration::from_nanos(ns)
}

pub(crate) fn shared(clock: &ManualClock, shards: usize, k: u64) -> Arc<Shared> {
    Shared::new(Arc::new(clock.clone()), shards, k, Tolerance::EXACT, None).unwrap()
}

pub(crate) type Log = Arc<StdMutex<Vec<(usize, Fire)>>>;

/// A timer on `shard` that logs its firings with `tag`. It is detached, so a test may drop
/// its handle (the step logic, not cancellation on drop, is under test here).
pub(crate) fn logging_timer(s: &Arc<Shared>, shard: usize, tag: usize, log: &Log) -> Timer {
    let log = Arc::clone(log);
    let t = Timer::owned(
        s.new_timer(shard, Exec::Direct, move |_, f| {
            log.lock().unwrap().push((tag, *f))
        })
        .unwrap(),
        Arc::<Shared>::clone(s),
    );
    t.core.detached.store(true, crate::sync::Ordering::Release);
    t
}

pub(crate) fn tags(log: &Log) -> Vec<usize> {
    log.lock().unwrap().iter().map(|(t, _)| *t).collect()
}

#[test]
fn timers_fire_at_the_first_step_at_or_after_their_deadline() {
    let clock = ManualClock::new(1_000);
    let s = shared(&clock, 1, 64);
    let log = Log::default();
    let a = logging_timer(&s, 0, 1, &log);
    let b = logging_timer(&s, 0, 2, &log);
    assert!(!a.start_at(at(1_300)).unwrap());
    assert!(!b.start_at(at(1_200)).unwrap());
    assert_eq!(s.step(0).sleep, Some(Some(1_200)));
    clock.advance(199);
    assert_eq!(s.step(0).fired, 0);
    clock.advance(1);
    assert_eq!(s.step(0).fired, 1);
    clock.advance(500);
    assert_eq!(s.step(0).fired, 1);
    assert_eq!(tags(&log), [2, 1]);
    let fires: Vec<Fire> = log.lock().unwrap().iter().map(|(_, f)| *f).collect();
    assert_eq!((fires[0].deadline, fires[0].lateness()), (1_200, ns(0)));
    assert_eq!((fires[1].deadline, fires[1].lateness()), (1_300, ns(400)));
    assert_eq!(s.step(0).sleep, Some(None));
}

/// The driver keeps its buffers from step to step: a step leaves them empty, and steps that
/// share them fire, yield to the budget and record lateness exactly as fresh ones do (a twin
/// shard stepped with fresh buffers is the reference).
#[test]
fn steps_sharing_the_drivers_buffers_fire_as_fresh_ones() {
    let clock = ManualClock::new(0);
    let (s, twin) = (shared(&clock, 1, 2), shared(&clock, 1, 2));
    let (log, twin_log) = (Log::default(), Log::default());
    let timers: Vec<Timer> = (0..5).map(|i| logging_timer(&s, 0, i, &log)).collect();
    let twins: Vec<Timer> = (0..5)
        .map(|i| logging_timer(&twin, 0, i, &twin_log))
        .collect();
    let mut scratch = Scratch::default();
    let mut run = |deadlines: &[u64], advance: u64| {
        for (i, &d) in deadlines.iter().enumerate() {
            timers[i].start_at(at(d)).unwrap();
            twins[i].start_at(at(d)).unwrap();
        }
        clock.advance(advance);
        // Step both until they plan a sleep; K = 2 makes five due timers take several steps.
        let mut steps = Vec::new();
        loop {
            let step = s.step_with(0, &mut scratch);
            assert!(scratch.is_empty());
            assert_eq!(step, twin.step(0));
            let done = step.sleep.is_some();
            steps.push(step.fired);
            if done {
                return steps;
            }
        }
    };
    let steps = run(&[100, 101, 102, 103, 104], 110);
    assert_eq!(steps.iter().sum::<usize>(), 5);
    assert!(steps.len() > 2, "{steps:?}");
    // Again, after the buffers have grown.
    assert_eq!(run(&[200], 90), [1, 0]);
    assert_eq!(tags(&log), [0, 1, 2, 3, 4, 0]);
    assert_eq!(tags(&log), tags(&twin_log));
    let (h, twin_h) = (s.stats(0).lateness, twin.stats(0).lateness);
    assert_eq!(h, twin_h);
    assert_eq!((h.len(), h.min(), h.max()), (6, 0, 10));
}

#[test]
fn the_driver_plans_the_earliest_window_end() {
    let clock = ManualClock::new(0);
    let s = shared(&clock, 1, 64);
    let log = Log::default();
    // Windows [100, 300] and [200, 250]: one wake-up at 250 serves both.
    logging_timer(&s, 0, 1, &log)
        .start_with(at(100), ns(200), None)
        .unwrap();
    logging_timer(&s, 0, 2, &log)
        .start_with(at(200), ns(50), None)
        .unwrap();
    assert_eq!(s.step(0).sleep, Some(Some(250)));
    clock.advance(250);
    assert_eq!(s.step(0).fired, 2);
    assert_eq!(tags(&log), [1, 2]);
}

/// The manual clock's time, on a clock that does not say it is simulated: a driver learns
/// its lead from it.
#[derive(Debug)]
struct Unsimulated(ManualClock);

impl Clock for Unsimulated {
    fn now(&self) -> u64 {
        self.0.now()
    }
    fn waiter(&self) -> std::io::Result<Box<dyn crate::Waiter>> {
        self.0.waiter()
    }
}

#[test]
fn a_driver_on_a_real_clock_aims_its_lead_before_the_window_end_and_a_simulated_one_never() {
    for (simulated, planned) in [(true, 250), (false, 213)] {
        let clock = ManualClock::new(0);
        let c: Arc<dyn Clock> = if simulated {
            Arc::new(clock.clone())
        } else {
            Arc::new(Unsimulated(clock.clone()))
        };
        let s = Shared::new(c, 1, 64, Tolerance::EXACT, None).unwrap();
        let log = Log::default();
        logging_timer(&s, 0, 1, &log)
            .start_with(at(100), ns(200), None)
            .unwrap();
        logging_timer(&s, 0, 2, &log)
            .start_with(at(200), ns(50), None)
            .unwrap();
        // The last planned wake-up delivered 30 ns late: aim that and a quarter (37) before
        // the earliest end (250), which both deadlines precede.
        let mut scratch = Scratch::default();
        scratch.late = Some(30);
        assert_eq!(s.step_with(0, &mut scratch).sleep, Some(Some(planned)));
        clock.advance(planned);
        assert_eq!(s.step(0).fired, 2, "one wake-up still serves both windows");
    }
}

#[test]
fn a_new_earlier_window_wakes_a_sleeping_driver_and_a_later_one_does_not() {
    let clock = ManualClock::new(0);
    let s = shared(&clock, 1, 64);
    let waiter = &s.shards[0].waiter;
    let log = Log::default();
    logging_timer(&s, 0, 1, &log).start_at(at(1_000)).unwrap();
    assert_eq!(s.step(0).sleep, Some(Some(1_000)));
    logging_timer(&s, 0, 2, &log).start_at(at(2_000)).unwrap();
    // No wake-up was posted: a wait on an already-due deadline returns Deadline, not Early.
    clock.advance(1_000);
    assert_eq!(waiter.wait(Some(1_000)).unwrap(), crate::Wake::Deadline);
    assert_eq!(s.step(0).fired, 1);
    assert_eq!(s.step(0).sleep, Some(Some(2_000)));
    logging_timer(&s, 0, 3, &log).start_at(at(1_500)).unwrap();
    assert_eq!(waiter.wait(Some(2_000)).unwrap(), crate::Wake::Early);
}

#[test]
fn stop_reports_cancelled_then_not_pending() {
    let clock = ManualClock::new(0);
    let s = shared(&clock, 1, 64);
    let log = Log::default();
    let t = logging_timer(&s, 0, 1, &log);
    assert_eq!(t.stop(), Stop::NotPending);
    t.start_at(at(10)).unwrap();
    assert!(t.is_pending());
    assert_eq!(t.stop(), Stop::Cancelled);
    assert_eq!(t.stop(), Stop::NotPending);
    clock.advance(10);
    assert_eq!(s.step(0).fired, 0);
    assert!(tags(&log).is_empty());
}

#[test]
fn stop_from_inside_the_callback_reports_running() {
    let clock = ManualClock::new(0);
    let s = shared(&clock, 1, 64);
    let seen = Arc::new(StdMutex::new(Vec::new()));
    let seen2 = Arc::clone(&seen);
    let t = Timer::owned(
        s.new_timer(0, Exec::Direct, move |t, _| {
            let mut v = seen2.lock().unwrap();
            v.push(t.stop());
            v.push(t.drain());
        })
        .unwrap(),
        Arc::<Shared>::clone(&s),
    );
    t.start_at(at(5)).unwrap();
    clock.advance(5);
    assert_eq!(s.step(0).fired, 1);
    assert_eq!(*seen.lock().unwrap(), [Stop::Running, Stop::Running]);
    assert_eq!(t.stop(), Stop::NotPending);
}

#[test]
fn a_direct_callback_draining_a_later_timer_of_its_batch_does_not_wait_for_itself() {
    let clock = ManualClock::new(0);
    let s = shared(&clock, 1, 64);
    let later: Arc<StdMutex<Option<Timer>>> = Arc::default();
    let seen = Arc::new(StdMutex::new(Vec::new()));
    let (l, v) = (Arc::clone(&later), Arc::clone(&seen));
    let first = Timer::owned(
        s.new_timer(0, Exec::Direct, move |_, _| {
            // The later timer's run is this driver's, still to come in the same batch.
            let drained = l.lock().unwrap().as_ref().map(Timer::drain);
            v.lock().unwrap().push(drained);
        })
        .unwrap(),
        Arc::<Shared>::clone(&s),
    );
    let v = Arc::clone(&seen);
    let second = Timer::owned(
        s.new_timer(0, Exec::Direct, move |_, _| v.lock().unwrap().push(None))
            .unwrap(),
        Arc::<Shared>::clone(&s),
    );
    first.start_at(at(5)).unwrap();
    second.start_at(at(6)).unwrap();
    *later.lock().unwrap() = Some(second.clone());
    clock.advance(10);
    // On another thread, so that a drain waiting for its own thread fails the test instead
    // of hanging it.
    let (tx, rx) = std::sync::mpsc::channel();
    let stepper = Arc::clone(&s);
    std::thread::spawn(move || tx.send(stepper.step(0).fired).unwrap());
    let fired = rx.recv_timeout(std::time::Duration::from_secs(10));
    assert_eq!(fired, Ok(2), "the step finished, both timers fired");
    assert_eq!(*seen.lock().unwrap(), [Some(Stop::Running), None]);
    later.lock().unwrap().take();
}

#[test]
fn a_callback_may_rearm_itself() {
    let clock = ManualClock::new(0);
    let s = shared(&clock, 1, 64);
    let count = Arc::new(AtomicU64::new(0));
    let c = Arc::clone(&count);
    let t = Timer::owned(
        s.new_timer(0, Exec::Direct, move |t, f| {
            if c.fetch_add(1, StdOrdering::SeqCst) < 2 {
                t.start_at(at(f.deadline + 100)).unwrap();
            }
        })
        .unwrap(),
        Arc::<Shared>::clone(&s),
    );
    t.start_at(at(100)).unwrap();
    for _ in 0..5 {
        clock.advance(100);
        let _ = s.step(0);
    }
    assert_eq!(count.load(StdOrdering::SeqCst), 3);
    assert_eq!(t.fired(), 3);
    assert!(!t.is_pending());
}

#[test]
fn rearming_a_pending_timer_moves_its_window() {
    let clock = ManualClock::new(0);
    let s = shared(&clock, 1, 64);
    let log = Log::default();
    let t = logging_timer(&s, 0, 1, &log);
    assert!(!t.start_at(at(100)).unwrap());
    assert!(t.start_at(at(300)).unwrap());
    clock.advance(200);
    assert_eq!(s.step(0).fired, 0);
    clock.advance(100);
    assert_eq!(s.step(0).fired, 1);
    assert_eq!(log.lock().unwrap()[0].1.deadline, 300);
}

#[test]
fn a_moved_timer_fires_on_its_new_shard_only() {
    let clock = ManualClock::new(0);
    let s = shared(&clock, 2, 64);
    let log = Log::default();
    let t = logging_timer(&s, 0, 1, &log);
    t.start_at(at(100)).unwrap();
    assert!(t.move_to(1).unwrap());
    assert_eq!(t.shard(), 1);
    clock.advance(100);
    assert_eq!(s.step(0).fired, 0);
    assert_eq!(s.step(1).fired, 1);
    assert_eq!(log.lock().unwrap()[0].1.shard, 1);
    // Not pending: moves the timer, returns false; a start on a chosen shard moves it too.
    assert!(!t.move_to(0).unwrap());
    t.start_with(at(150), ns(0), Some(1)).unwrap();
    assert_eq!(t.shard(), 1);
    assert!(matches!(
        t.move_to(2),
        Err(crate::Error::NoSuchShard {
            shard: 2,
            shards: 2
        })
    ));
}

#[test]
fn a_moved_periodic_timer_keeps_its_grid_and_window() {
    let clock = ManualClock::new(0);
    let s = shared(&clock, 2, 64);
    let log = Log::default();
    let t = logging_timer(&s, 0, 1, &log);
    t.start_periodic_with(at(100), ns(100), ns(30), Missed::Skip, None)
        .unwrap();
    clock.advance(100);
    assert_eq!(s.step(0).fired, 1);
    assert!(t.move_to(1).unwrap());
    // The destination plans for the same window and keeps the schedule.
    assert_eq!(s.step(1).sleep, Some(Some(230)));
    for _ in 0..2 {
        clock.advance(100);
        assert_eq!(s.step(0).fired, 0);
        assert_eq!(s.step(1).fired, 1);
    }
    let deadlines: Vec<u64> = log
        .lock()
        .unwrap()
        .iter()
        .map(|(_, f)| f.deadline)
        .collect();
    assert_eq!(deadlines, [100, 200, 300]);
    // A one-shot window moves whole too.
    t.start_with(at(1_000), ns(40), Some(0)).unwrap();
    assert!(t.move_to(1).unwrap());
    assert_eq!(s.step(1).sleep, Some(Some(1_040)));
}

#[test]
fn periodic_policies_handle_missed_periods() {
    for (missed, expect) in [
        // Late by 2.5 periods: Burst replays each period; Delay and Skip fire once.
        (Missed::Burst, vec![(100, 2), (200, 1), (300, 0)]),
        (Missed::Delay, vec![(100, 2)]),
        (Missed::Skip, vec![(100, 2)]),
    ] {
        let clock = ManualClock::new(0);
        let s = shared(&clock, 1, 64);
        let log = Log::default();
        let t = logging_timer(&s, 0, 1, &log);
        t.start_periodic(at(100), ns(100), missed).unwrap();
        clock.advance(350);
        while s.step(0).sleep.is_none() {}
        let got: Vec<(u64, u64)> = log
            .lock()
            .unwrap()
            .iter()
            .map(|(_, f)| (f.deadline, f.overruns))
            .collect();
        assert_eq!(got, expect, "{missed:?}");
        // The next deadline: Burst and Skip stay on the grid, Delay restarts from now.
        let next = match missed {
            Missed::Delay => 450,
            _ => 400,
        };
        assert_eq!(s.step(0).sleep, Some(Some(next)), "{missed:?}");
        assert_eq!(t.stop(), Stop::Cancelled);
    }
}

#[test]
fn a_driver_releases_its_lock_every_k_expiries() {
    let clock = ManualClock::new(0);
    let k = 8;
    let s = shared(&clock, 1, k);
    let log = Log::default();
    for i in 0..100 {
        logging_timer(&s, 0, i, &log).start_at(at(10)).unwrap();
    }
    clock.advance(10);
    let mut steps = 0;
    loop {
        let step = s.step(0);
        assert!(step.fired as u64 <= k);
        if step.sleep.is_some() {
            break;
        }
        steps += 1;
    }
    assert_eq!(tags(&log), (0..100).collect::<Vec<_>>());
    assert!(steps >= 100 / k, "{steps} steps");
    assert!(s.stats(0).budget_yields >= 100 / k - 1);
}

#[test]
fn a_backwards_clock_is_clamped_counted_and_fires_nothing_early() {
    let clock = ManualClock::new(1_000);
    let s = shared(&clock, 1, 64);
    let log = Log::default();
    logging_timer(&s, 0, 1, &log).start_at(at(1_500)).unwrap();
    let _ = s.step(0);
    clock.set(200);
    assert_eq!(s.step(0).sleep, Some(Some(1_500)));
    assert_eq!(s.stats(0).clamped, 1);
    clock.set(1_499);
    assert_eq!(s.step(0).fired, 0);
    clock.set(1_500);
    assert_eq!(s.step(0).fired, 1);
    assert_eq!(s.stats(0).clamped, 1);
    // Shared::now never goes backwards either.
    let before = s.now();
    clock.set(0);
    assert!(s.now() >= before);
    assert_eq!(clock.now(), 0);
}

#[test]
fn a_zero_period_is_an_error_not_a_panic() {
    let clock = ManualClock::new(0);
    let s = shared(&clock, 1, 64);
    let t = logging_timer(&s, 0, 1, &Log::default());
    assert!(matches!(
        t.start_periodic(at(0), ns(0), Missed::Skip),
        Err(crate::Error::Wheel(callwheel::Error::ZeroPeriod))
    ));
    assert!(matches!(
        t.start_with(at(0), ns(0), Some(7)),
        Err(crate::Error::NoSuchShard { shard: 7, .. })
    ));
}

#[test]
fn default_tolerance_is_a_share_of_the_interval() {
    let clock = ManualClock::new(0);
    let s = Shared::new(Arc::new(clock.clone()), 1, 64, Tolerance::percent(10), None).unwrap();
    let t = logging_timer(&s, 0, 1, &Log::default());
    t.start_at(at(1_000)).unwrap();
    assert_eq!(s.step(0).sleep, Some(Some(1_100)));
    t.start_periodic(at(2_000), ns(500), Missed::Skip).unwrap();
    assert_eq!(s.step(0).sleep, Some(Some(2_050)));
}

#[test]
fn a_panicking_callback_is_counted_and_the_shard_goes_on() {
    let clock = ManualClock::new(0);
    let s = shared(&clock, 1, 64);
    let log = Log::default();
    let bad = Timer::owned(
        s.new_timer(0, Exec::Direct, |_, _| panic!("callback failure"))
            .unwrap(),
        Arc::<Shared>::clone(&s),
    );
    bad.start_at(at(10)).unwrap();
    logging_timer(&s, 0, 2, &log).start_at(at(10)).unwrap();
    clock.advance(10);
    assert_eq!(s.step(0).fired, 2);
    assert_eq!(tags(&log), [2]);
    assert_eq!(s.stats(0).panics, 1);
    assert_eq!(bad.drain(), Stop::NotPending);
}

#[test]
fn stopped_timers_cost_a_bounded_number_of_spurious_wakeups() {
    // The wheel's plan may be early after stops (a slot keeps its minimum until it empties);
    // each such wake-up must make progress, so the driver ends asleep with nothing planned.
    let clock = ManualClock::new(0);
    let s = shared(&clock, 1, 64);
    let log = Log::default();
    let mut x = 12_345u64;
    let timers: Vec<Timer> = (0..200)
        .map(|i| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let t = logging_timer(&s, 0, i, &log);
            t.start_with(
                at((x >> 20) % 10_000_000_000),
                ns((x >> 40) % 1_000_000),
                None,
            )
            .unwrap();
            t
        })
        .collect();
    let _ = s.step(0);
    for t in &timers {
        assert_eq!(t.stop(), Stop::Cancelled);
    }
    let mut wakeups = 0;
    loop {
        match s.step(0).sleep {
            Some(None) => break,
            Some(Some(t)) => {
                wakeups += 1;
                assert!(wakeups <= 200, "the driver keeps waking for stopped timers");
                if t > clock.now() {
                    clock.advance(t - clock.now());
                }
            }
            None => {}
        }
    }
    assert!(tags(&log).is_empty());
}

/// When the worker pool's queue cannot grow (memory refused), a deferred callback runs on the
/// driver instead: none is lost, each runs once, in deadline order, and the shard counts them.
#[test]
fn deferred_callbacks_run_on_the_driver_when_the_queue_cannot_grow() {
    let clock = ManualClock::new(0);
    let pool = Arc::new(crate::workers::Workers::default());
    pool.refuse_growth();
    let s = Shared::new(
        Arc::new(clock.clone()),
        1,
        64,
        Tolerance::EXACT,
        Some(Arc::clone(&pool)),
    )
    .unwrap();
    let ran: Arc<StdMutex<Vec<(u64, std::thread::ThreadId)>>> = Arc::default();
    let timers: Vec<Timer> = (1..=3u64)
        .map(|i| {
            let ran = Arc::clone(&ran);
            let t = Timer::owned(
                s.new_timer(0, Exec::Deferred, move |_, f| {
                    ran.lock()
                        .unwrap()
                        .push((f.deadline, std::thread::current().id()))
                })
                .unwrap(),
                Arc::<Shared>::clone(&s),
            );
            t.start_at(at(10 * (4 - i))).unwrap();
            t
        })
        .collect();
    clock.advance(100);
    assert_eq!(s.step(0).fired, 3);
    let me = std::thread::current().id();
    assert_eq!(*ran.lock().unwrap(), vec![(10, me), (20, me), (30, me)]);
    assert_eq!(s.stats(0).deferred_inline, 3);
    for t in &timers {
        assert!(!t.is_pending());
    }
    pool.shutdown();
}
