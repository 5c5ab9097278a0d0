//! Periodic timers at the end of the clock's range: the last firing reports every period it
//! missed, and then the timer is gone (no re-arm past `u64::MAX`, no endless refiring).
#![cfg(not(miri))]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use callwheel_rt::{Deadline, Exec, ManualClock, Missed, Runtime, Stop, TimerSet, TimerSetConfig};

/// A deadline in the runtime clock's own nanoseconds.
fn at(ns: u64) -> Deadline {
    Deadline::from_clock_ns(ns)
}

/// A period or tolerance of `n` nanoseconds.
fn ns(n: u64) -> Duration {
    Duration::from_nanos(n)
}

const PATIENCE: Duration = Duration::from_secs(30);

#[test]
fn a_skip_timer_with_period_one_at_the_end_of_time_fires_once() {
    for exec in [Exec::Direct, Exec::Deferred] {
        let clock = ManualClock::new(u64::MAX);
        let rt = Runtime::builder()
            .clock(clock.clone())
            .shards(1)
            .build()
            .unwrap();
        let fired = Arc::new(AtomicU64::new(0));
        let (tx, rx) = mpsc::channel();
        let tx = Mutex::new(tx);
        let count = Arc::clone(&fired);
        let t = rt
            .timer(exec, move |_, f| {
                count.fetch_add(1, Ordering::SeqCst);
                let _ = tx.lock().unwrap().send(f.overruns);
            })
            .unwrap();
        t.start_periodic(at(0), ns(1), Missed::Skip).unwrap();
        assert_eq!(rx.recv_timeout(PATIENCE).unwrap(), u64::MAX);
        clock.wait_idle(1);
        assert_eq!(t.drain(), Stop::NotPending);
        assert!(!t.is_pending());
        assert_eq!(t.stop(), Stop::NotPending);
        assert_eq!(fired.load(Ordering::SeqCst), 1, "{exec:?}");
        assert_eq!(t.fired(), 1);
        assert_eq!(t.overruns(), u64::MAX);
        assert_eq!(rt.stats()[0].pending, 0);
    }
}

#[test]
fn every_policy_ends_at_the_end_of_time() {
    for missed in [Missed::Burst, Missed::Delay, Missed::Skip] {
        let clock = ManualClock::new(u64::MAX);
        let rt = Runtime::builder()
            .clock(clock.clone())
            .shards(1)
            .build()
            .unwrap();
        let fired = Arc::new(AtomicU64::new(0));
        let count = Arc::clone(&fired);
        let t = rt
            .timer(Exec::Direct, move |_, _| {
                count.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap();
        t.start_periodic(at(u64::MAX - 3), ns(1), missed).unwrap();
        let deadline = std::time::Instant::now() + PATIENCE;
        while t.is_pending() {
            assert!(
                std::time::Instant::now() < deadline,
                "{missed:?} never ended"
            );
            std::thread::yield_now();
        }
        clock.wait_idle(1);
        t.drain();
        // Burst replays each period (4 firings); the others fire once for the missed ones.
        let expect = if missed == Missed::Burst { 4 } else { 1 };
        assert_eq!(fired.load(Ordering::SeqCst), expect, "{missed:?}");
        assert_eq!(t.stop(), Stop::NotPending);
    }
}

#[test]
fn a_set_timer_with_period_one_at_the_end_of_time_is_reaped_once() {
    let clock = ManualClock::new(0);
    let rt = Runtime::builder()
        .clock(clock.clone())
        .shards(1)
        .build()
        .unwrap();
    let set =
        TimerSet::with_config(&rt, TimerSetConfig::default().with_missed(Missed::Skip)).unwrap();
    let h = set
        .create(Duration::from_nanos(1), Duration::from_nanos(1), 9)
        .unwrap();
    clock.set(u64::MAX);
    let r = set.reap_info().unwrap();
    assert_eq!((r.handle, r.label, r.deadline), (h, 9, 1));
    assert_eq!(r.overruns, u64::MAX - 1);
    assert!(!r.restarted);
    assert!(set.get(h).is_err());
    assert_eq!(set.reap_info(), None);
    assert!(set.is_empty());
    set.check_invariants().unwrap();
}
