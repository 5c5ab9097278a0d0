//! Hostile use of the runtime's public API: every call after the runtime is gone, callbacks
//! that panic, configurations at and past their bounds, extreme values for every timer and
//! timer-set call, and handles of another owner. Each gets a clear error or a documented
//! result, never a panic, abort or hang. All on the manual clock; waits on threads have a
//! generous bound and assert no duration.
#![cfg(not(miri))]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use callwheel_rt::{
    Builder, Error, Exec, ManualClock, Missed, Runtime, Stop, TimerHandle, TimerSet,
    TimerSetConfig, Tolerance, MAX_EXPIRIES_PER_LOCK, MAX_QUOTA, MAX_SHARDS, MAX_SPIN,
    MAX_TOLERANCE_PPM, MAX_WORKERS,
};

mod hostile_support;
use hostile_support::{at, eventually, manual, ns, shut_down, PATIENCE};

// ----- after the runtime is gone ---------------------------------------------------------------

#[test]
fn every_timer_call_after_the_runtime_is_dropped_is_not_pending_or_shut_down() {
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 2);
    let fired = Arc::new(AtomicU64::new(0));
    let count = Arc::clone(&fired);
    let once = rt
        .timer_on(0, Exec::Direct, move |_, _| {
            count.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    let periodic = rt.timer_on(1, Exec::Deferred, |_, _| {}).unwrap();
    let idle = rt.timer(Exec::Direct, |_, _| {}).unwrap();
    once.start_at(at(10)).unwrap();
    clock.advance(10);
    eventually("the first firing", || fired.load(Ordering::SeqCst) == 1);
    once.start_at(at(1_000)).unwrap();
    periodic
        .start_periodic(at(500), ns(100), Missed::Skip)
        .unwrap();
    assert!(once.is_pending() && periodic.is_pending());
    drop(rt);

    for t in [&once, &periodic, &idle] {
        assert!(!t.is_pending(), "{t:?}");
        shut_down(t.start_at(at(5)));
        shut_down(t.start_after(Duration::from_secs(1)));
        shut_down(t.start_with(at(5), ns(5), None));
        shut_down(t.start_with(at(5), ns(5), Some(0)));
        shut_down(t.start_periodic(at(5), ns(5), Missed::Burst));
        shut_down(t.start_periodic_with(at(5), ns(5), ns(0), Missed::Delay, Some(1)));
        shut_down(t.move_to(0));
        shut_down(t.move_to(1));
        assert_eq!(t.stop(), Stop::NotPending);
        assert_eq!(t.drain(), Stop::NotPending);
        assert!(!t.is_pending());
        let _ = (t.shard(), t.exec(), t.overruns());
    }
    assert_eq!(once.fired(), 1, "counts survive the runtime");
    assert_eq!(periodic.fired(), 0);
    // Time moving on changes nothing: there is no driver and nothing pending.
    clock.advance(10_000);
    assert_eq!(fired.load(Ordering::SeqCst), 1);
}

#[test]
fn every_timer_set_call_after_the_runtime_is_dropped_is_empty_or_shut_down() {
    let clock = ManualClock::new(1_000);
    let rt = manual(&clock, 1);
    let set = TimerSet::new(&rt).unwrap();
    let queued = set
        .create(Duration::from_nanos(10), Duration::ZERO, 1)
        .unwrap();
    let running = set
        .create(Duration::from_secs(10), Duration::from_secs(1), 2)
        .unwrap();
    clock.advance(10);
    assert_eq!(set.refresh(), 1);
    drop(rt);

    for h in [queued, running, TimerHandle::from_bits(7)] {
        shut_down(set.get(h));
        shut_down(set.reset(h, Duration::from_secs(1), Duration::ZERO, 3));
        shut_down(set.cancel(h));
        shut_down(set.set_missed(h, Missed::Skip));
        shut_down(set.overruns(h));
        shut_down(set.is_queued(h));
    }
    shut_down(set.create(Duration::from_secs(1), Duration::ZERO, 4));
    assert_eq!(set.reap(), None);
    assert_eq!(set.reap_info(), None);
    assert_eq!(set.refresh(), 0);
    assert_eq!(set.len(), 0);
    assert!(set.is_empty());
    let stats = set.stats();
    assert_eq!((stats.running, stats.queued, stats.expired), (0, 0, 1));
    assert!(!set.wait(Some(Duration::ZERO)));
    assert!(!set.wait(Some(Duration::MAX)));
    assert!(!set.wait(None));
    set.set_callback(|| panic!("never runs: nothing can expire"));
    clock.advance(1 << 40);
    assert_eq!(set.refresh(), 0);
    set.clear_callback();
    let _ = set.now_ns();
    set.check_invariants().unwrap();
}

#[test]
fn a_thread_waiting_on_a_set_wakes_when_the_runtime_is_dropped() {
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 1);
    let set = Arc::new(TimerSet::new(&rt).unwrap());
    set.create(Duration::from_secs(3600), Duration::ZERO, 1)
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let waiter = {
        let set = Arc::clone(&set);
        std::thread::spawn(move || {
            tx.send(()).unwrap();
            set.wait(None)
        })
    };
    rx.recv_timeout(PATIENCE).unwrap();
    drop(rt);
    eventually("the waiter returns", || waiter.is_finished());
    assert!(!waiter.join().unwrap());
}

#[test]
fn a_runtime_dropped_from_a_deferred_callback_shuts_down() {
    let clock = ManualClock::new(0);
    let rt = Arc::new(Mutex::new(Some(manual(&clock, 1))));
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let owner = Arc::clone(&rt);
    let t = rt
        .lock()
        .unwrap()
        .as_ref()
        .unwrap()
        .timer(Exec::Deferred, move |_, _| {
            let taken = owner.lock().unwrap().take();
            drop(taken);
            tx.lock().unwrap().send(()).unwrap();
        })
        .unwrap();
    t.start_at(at(0)).unwrap();
    rx.recv_timeout(PATIENCE).unwrap();
    shut_down(t.start_at(at(0)));
    assert!(!t.is_pending());
    // The callback may still be finishing on its worker: drain waits for it.
    assert_ne!(t.drain(), Stop::Cancelled);
    assert_eq!(t.stop(), Stop::NotPending);
}

#[test]
fn a_deferred_firing_the_dropped_runtime_never_ran_does_not_block_drain() {
    let clock = ManualClock::new(0);
    let rt = Arc::new(Mutex::new(Some(manual(&clock, 1))));
    let ran = Arc::new(AtomicU64::new(0));
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let owner = Arc::clone(&rt);
    let (killer, deferred) = {
        let guard = rt.lock().unwrap();
        let rt = guard.as_ref().unwrap();
        let count = Arc::clone(&ran);
        (
            // Due first in the batch: drops the runtime on the driver, which then hands the
            // deferred timer below to a pool that has shut down.
            rt.timer(Exec::Direct, move |_, _| {
                let taken = owner.lock().unwrap().take();
                drop(taken);
                tx.lock().unwrap().send(()).unwrap();
            })
            .unwrap(),
            rt.timer(Exec::Deferred, move |_, _| {
                count.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap(),
        )
    };
    killer.start_at(at(1)).unwrap();
    deferred.start_at(at(2)).unwrap();
    clock.set(10);
    rx.recv_timeout(PATIENCE).unwrap();
    let drained = std::thread::spawn(move || deferred.drain());
    eventually("drain returns", || drained.is_finished());
    assert_ne!(drained.join().unwrap(), Stop::Cancelled);
    assert_eq!(ran.load(Ordering::SeqCst), 0, "the pool had shut down");
}

// ----- panicking callbacks ---------------------------------------------------------------------

/// A value whose `Drop` panics: user code the runtime runs when it lets go of a callback or a
/// panic's payload.
struct PanicOnDrop;

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("a hostile Drop");
        }
    }
}

/// Timers due at 100, 101 (its callback panics as `panic` says) and 102, then one at 2_000:
/// every other timer fires, on the same driver, and the panic is counted.
fn panic_scenario(exec: Exec, panic: fn()) {
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 1);
    let fired = Arc::new(Mutex::new(Vec::new()));
    let mut timers = Vec::new();
    for (deadline, hostile) in [(100, false), (101, true), (102, false), (103, false)] {
        let fired = Arc::clone(&fired);
        let t = rt
            .timer(exec, move |_, f| {
                if hostile {
                    panic();
                }
                fired.lock().unwrap().push(f.deadline);
            })
            .unwrap();
        t.start_at(at(deadline)).unwrap();
        timers.push(t);
    }
    clock.advance(1_000);
    eventually("the timers around the panic", || {
        fired.lock().unwrap().len() == 3
    });
    clock.wait_idle(1);
    assert_eq!(rt.stats()[0].panics, 1, "{exec:?}");
    // The panicking timer's bookkeeping is complete: not pending, not running, re-armable.
    assert_eq!(timers[1].drain(), Stop::NotPending);
    assert_eq!(timers[1].fired(), 1);
    // The driver (and the worker) still fire later timers.
    timers[0].start_at(at(2_000)).unwrap();
    clock.advance(1_000);
    eventually("a timer after the panic", || {
        fired.lock().unwrap().len() == 4
    });
    let mut got = fired.lock().unwrap().clone();
    got.sort_unstable();
    assert_eq!(got, [100, 102, 103, 2_000], "{exec:?}");
}

#[test]
fn a_panicking_callback_loses_no_other_timer_and_keeps_its_driver() {
    for exec in [Exec::Direct, Exec::Deferred] {
        panic_scenario(exec, || panic!("a hostile callback"));
    }
}

#[test]
fn a_panic_payload_that_panics_when_dropped_is_contained() {
    for exec in [Exec::Direct, Exec::Deferred] {
        panic_scenario(exec, || std::panic::panic_any(PanicOnDrop));
    }
}

#[test]
fn a_callback_whose_captures_panic_when_dropped_by_the_driver_is_contained() {
    for exec in [Exec::Direct, Exec::Deferred] {
        let clock = ManualClock::new(0);
        let rt = manual(&clock, 1);
        let fired = Arc::new(AtomicU64::new(0));
        // The owner detaches the timer while it is pending: the firing holds the last
        // reference, and dropping the callback runs the hostile `Drop` on the driver or worker.
        let hostile = PanicOnDrop;
        let count = Arc::clone(&fired);
        let t = rt
            .timer(exec, move |_, _| {
                let _ = &hostile;
                count.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap();
        t.start_at(at(100)).unwrap();
        t.detach();
        let count = Arc::clone(&fired);
        let later = rt
            .timer(exec, move |_, _| {
                count.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap();
        clock.advance(100);
        eventually("the hostile timer", || fired.load(Ordering::SeqCst) == 1);
        clock.wait_idle(1);
        later.start_at(at(200)).unwrap();
        clock.advance(100);
        eventually("the timer after it", || fired.load(Ordering::SeqCst) == 2);
        assert_eq!(rt.stats()[0].panics, 1, "{exec:?}");
    }
}

#[test]
fn a_periodic_timer_whose_callback_panics_keeps_its_schedule() {
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 1);
    let runs = Arc::new(AtomicU64::new(0));
    let count = Arc::clone(&runs);
    let t = rt
        .timer(Exec::Direct, move |_, _| {
            count.fetch_add(1, Ordering::SeqCst);
            panic!("every time");
        })
        .unwrap();
    t.start_periodic(at(100), ns(100), Missed::Skip).unwrap();
    for n in 1..=3 {
        clock.advance(100);
        eventually("the next period", || runs.load(Ordering::SeqCst) == n);
    }
    clock.wait_idle(1);
    assert!(t.is_pending());
    assert_eq!(t.drain(), Stop::Cancelled);
    assert_eq!(rt.stats()[0].panics, 3);
}

#[test]
fn a_panicking_set_callback_does_not_lose_the_callers_result() {
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 1);
    let set = TimerSet::new(&rt).unwrap();
    let runs = Arc::new(AtomicU64::new(0));
    let count = Arc::clone(&runs);
    set.set_callback(move || {
        count.fetch_add(1, Ordering::SeqCst);
        panic!("a hostile set callback");
    });
    // Hold the driver in a direct callback due just before the set's timer, so the expiry is
    // found by the caller's next call, which runs the callback on the calling thread.
    let (entered_tx, entered) = mpsc::channel();
    let (release, release_rx) = mpsc::channel::<()>();
    let (entered_tx, release_rx) = (Mutex::new(entered_tx), Mutex::new(release_rx));
    let blocker = rt
        .timer(Exec::Direct, move |_, _| {
            entered_tx.lock().unwrap().send(()).unwrap();
            let _ = release_rx.lock().unwrap().recv_timeout(PATIENCE);
        })
        .unwrap();
    blocker.start_at(at(1)).unwrap();
    let a = set
        .create(Duration::from_nanos(5), Duration::ZERO, 1)
        .unwrap();
    clock.set(10);
    entered.recv_timeout(PATIENCE).unwrap();
    let b = set
        .create(Duration::from_nanos(5), Duration::ZERO, 2)
        .unwrap();
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "ran on this thread, inside create"
    );
    release.send(()).unwrap();
    assert_eq!(set.reap(), Some((a, 1)));
    assert!(set.get(b).is_ok());
    set.check_invariants().unwrap();
    blocker.drain();
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

// ----- configuration bounds --------------------------------------------------------------------

fn config_error(builder: Builder, field: &str) {
    match builder.build() {
        Err(Error::Config { reason }) => assert!(reason.contains(field), "{reason}"),
        other => panic!("{field}: expected a configuration error, got {other:?}"),
    }
}

#[test]
fn every_runtime_configuration_field_is_bounded_up_front() {
    let clock = ManualClock::new(0);
    let base = || Runtime::builder().clock(clock.clone()).shards(1).workers(1);
    for workers in [0, MAX_WORKERS + 1, 100_000, usize::MAX] {
        config_error(base().workers(workers), "workers");
    }
    for shards in [MAX_SHARDS + 1, usize::MAX] {
        config_error(base().shards(shards), "shards");
    }
    for k in [0, MAX_EXPIRIES_PER_LOCK + 1, u64::MAX] {
        config_error(base().max_expiries_per_lock(k), "max_expiries_per_lock");
    }
    for ppm in [MAX_TOLERANCE_PPM + 1, u32::MAX] {
        config_error(
            base().tolerance(Tolerance { absolute: 0, ppm }),
            "tolerance.ppm",
        );
    }
    for spin in [
        MAX_SPIN + Duration::from_nanos(1),
        Duration::from_secs(1),
        Duration::MAX,
    ] {
        config_error(base().spin(spin), "spin");
    }
    // The edges themselves are accepted.
    for builder in [
        base().spin(Duration::ZERO),
        base().spin(MAX_SPIN),
        base().workers(1),
        base().shards(0),
        base().max_expiries_per_lock(1),
        base().max_expiries_per_lock(MAX_EXPIRIES_PER_LOCK),
        base().tolerance(Tolerance {
            absolute: u64::MAX,
            ppm: MAX_TOLERANCE_PPM,
        }),
    ] {
        drop(builder.build().unwrap());
    }
}

#[test]
fn the_largest_worker_and_shard_counts_are_accepted() {
    let clock = ManualClock::new(0);
    let rt = Runtime::builder()
        .clock(clock.clone())
        .shards(1)
        .workers(MAX_WORKERS)
        .build()
        .unwrap();
    drop(rt);
    let rt = Runtime::builder()
        .clock(clock.clone())
        .shards(MAX_SHARDS)
        .workers(1)
        .build()
        .unwrap();
    assert_eq!(rt.shards(), MAX_SHARDS);
}

#[test]
fn every_timer_set_configuration_field_is_bounded_up_front() {
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 1);
    for (config, field) in [
        (TimerSetConfig::default().with_quota(0), "quota"),
        (TimerSetConfig::default().with_quota(MAX_QUOTA + 1), "quota"),
        (TimerSetConfig::default().with_quota(usize::MAX), "quota"),
        (
            TimerSetConfig::default().with_tolerance(Some(Tolerance {
                absolute: 0,
                ppm: MAX_TOLERANCE_PPM + 1,
            })),
            "tolerance.ppm",
        ),
    ] {
        match TimerSet::with_config(&rt, config) {
            Err(Error::Config { reason }) => assert!(reason.contains(field), "{reason}"),
            other => panic!("{config:?}: {other:?}"),
        }
    }
    for quota in [1, MAX_QUOTA] {
        let set = TimerSet::with_config(
            &rt,
            TimerSetConfig::default()
                .with_quota(quota)
                .with_tolerance(Some(Tolerance {
                    absolute: u64::MAX,
                    ppm: MAX_TOLERANCE_PPM,
                })),
        )
        .unwrap();
        set.create(Duration::from_nanos(1), Duration::ZERO, 1)
            .unwrap();
    }
}

// ----- extreme values --------------------------------------------------------------------------

#[test]
fn timer_arming_calls_take_extreme_values() {
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 2);
    let t = rt.timer_on(0, Exec::Direct, |_, _| {}).unwrap();
    assert!(!t.start_at(at(u64::MAX)).unwrap());
    assert!(t.start_after(Duration::MAX).unwrap());
    assert!(t.start_after(Duration::ZERO).is_ok());
    assert!(t.start_with(at(u64::MAX), ns(u64::MAX), None).is_ok());
    assert!(t.start_with(at(0), ns(u64::MAX), Some(1)).is_ok());
    assert!(matches!(
        t.start_with(at(0), ns(0), Some(usize::MAX)),
        Err(Error::NoSuchShard { .. })
    ));
    for missed in [Missed::Burst, Missed::Delay, Missed::Skip] {
        assert!(t.start_periodic(at(u64::MAX), ns(u64::MAX), missed).is_ok());
        assert!(t
            .start_periodic_with(at(u64::MAX), ns(1), ns(u64::MAX), missed, Some(0))
            .is_ok());
        assert!(matches!(
            t.start_periodic(at(0), ns(0), missed),
            Err(Error::Wheel(callwheel::Error::ZeroPeriod))
        ));
        assert!(matches!(
            t.start_periodic_with(at(0), ns(0), ns(u64::MAX), missed, None),
            Err(Error::Wheel(callwheel::Error::ZeroPeriod))
        ));
    }
    assert!(matches!(
        t.move_to(usize::MAX),
        Err(Error::NoSuchShard { .. })
    ));
    assert!(t.move_to(1).unwrap());
    assert_eq!(t.shard(), 1);
    assert_eq!(t.stop(), Stop::Cancelled);
    assert!(matches!(
        rt.timer_on(usize::MAX, Exec::Direct, |_, _| {}),
        Err(Error::NoSuchShard { .. })
    ));
    assert!(rt.shard_stats(usize::MAX).is_err());
}

#[test]
fn timers_at_the_end_of_time_fire_once() {
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 1);
    let fired = Arc::new(AtomicU64::new(0));
    let mut timers = Vec::new();
    for arm in 0..4 {
        let count = Arc::clone(&fired);
        let t = rt
            .timer(Exec::Direct, move |_, _| {
                count.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap();
        match arm {
            0 => t.start_at(at(u64::MAX)),
            1 => t.start_after(Duration::MAX),
            2 => t.start_with(at(u64::MAX - 1), ns(u64::MAX), None),
            _ => t.start_periodic(at(u64::MAX), ns(u64::MAX), Missed::Burst),
        }
        .unwrap();
        timers.push(t);
    }
    clock.set(u64::MAX);
    eventually("every timer at the end of time", || {
        fired.load(Ordering::SeqCst) == 4
    });
    clock.wait_idle(1);
    for t in &timers {
        assert!(!t.is_pending());
        assert_eq!(t.drain(), Stop::NotPending);
    }
    assert_eq!(fired.load(Ordering::SeqCst), 4);
}

#[test]
fn timer_set_calls_take_extreme_values() {
    let clock = ManualClock::new(1_000);
    let rt = manual(&clock, 1);
    let set = TimerSet::new(&rt).unwrap();
    let h = set
        .create(Duration::from_secs(1), Duration::ZERO, 7)
        .unwrap();
    let before = set.get(h).unwrap();
    for (value, interval, expect) in [
        (Duration::ZERO, Duration::ZERO, "zero"),
        (Duration::MAX, Duration::ZERO, "value"),
        (Duration::from_nanos(u64::MAX), Duration::ZERO, "value"),
        (Duration::from_nanos(1), Duration::MAX, "interval"),
        (
            Duration::from_nanos(1),
            Duration::from_nanos(u64::MAX),
            "interval",
        ),
    ] {
        let check = |r: Result<_, Error>| match (expect, r) {
            ("zero", Err(Error::ZeroValue))
            | ("value", Err(Error::ValueOutOfRange))
            | ("interval", Err(Error::IntervalOutOfRange)) => {}
            (_, other) => panic!("{value:?}/{interval:?}: {other:?}"),
        };
        check(set.create(value, interval, 1).map(|_| ()));
        check(set.reset(h, value, interval, 1).map(|_| ()));
    }
    // Refused resets changed nothing.
    assert_eq!(set.get(h).unwrap(), before);
    assert_eq!(set.len(), 1);
    for bits in [0, u64::MAX, 1, h.to_bits() ^ 1] {
        let bad = TimerHandle::from_bits(bits);
        assert!(matches!(set.get(bad), Err(Error::InvalidHandle)));
        assert!(matches!(set.cancel(bad), Err(Error::InvalidHandle)));
        assert!(matches!(
            set.set_missed(bad, Missed::Skip),
            Err(Error::InvalidHandle)
        ));
        assert!(matches!(set.overruns(bad), Err(Error::InvalidHandle)));
        assert!(matches!(set.is_queued(bad), Err(Error::InvalidHandle)));
    }
    // The largest value and interval that fit the clock.
    let room = u64::MAX - set.now_ns();
    let far = set
        .create(Duration::from_nanos(room), Duration::ZERO, 8)
        .unwrap();
    let periodic = set
        .create(Duration::from_nanos(1), Duration::from_nanos(room - 1), 9)
        .unwrap();
    assert!(!set.wait(Some(Duration::ZERO)));
    clock.set(u64::MAX);
    assert!(set.wait(Some(Duration::MAX)), "queued: returns at once");
    let mut reaped = Vec::new();
    while let Some(r) = set.reap_info() {
        reaped.push((r.handle, r.restarted));
    }
    assert!(reaped.contains(&(far, false)));
    assert!(
        reaped.contains(&(periodic, false)),
        "its next period is past the clock"
    );
    assert!(reaped.contains(&(h, false)));
    assert!(set.is_empty());
    set.check_invariants().unwrap();
}

// ----- owners ----------------------------------------------------------------------------------

#[test]
fn a_handle_of_a_set_on_another_runtime_is_rejected_and_changes_nothing() {
    let clock = ManualClock::new(0);
    let (rt_a, rt_b) = (manual(&clock, 1), manual(&clock, 1));
    let config = TimerSetConfig::default().with_quota(4);
    let a = TimerSet::with_config(&rt_a, config).unwrap();
    let b = TimerSet::with_config(&rt_b, config).unwrap();
    // The same slot and generation in both sets: only the key tells them apart.
    let ha = a.create(Duration::from_secs(1), Duration::ZERO, 1).unwrap();
    let hb = b.create(Duration::from_secs(2), Duration::ZERO, 2).unwrap();
    assert_ne!(ha, hb);
    assert!(matches!(b.get(ha), Err(Error::InvalidHandle)));
    assert!(matches!(b.cancel(ha), Err(Error::InvalidHandle)));
    assert!(matches!(
        b.reset(ha, Duration::from_secs(5), Duration::ZERO, 3),
        Err(Error::InvalidHandle)
    ));
    assert!(matches!(
        b.set_missed(ha, Missed::Skip),
        Err(Error::InvalidHandle)
    ));
    assert_eq!(b.len(), 1);
    assert_eq!(b.get(hb).unwrap().remaining, Duration::from_secs(2));
    assert_eq!(a.get(ha).unwrap().remaining, Duration::from_secs(1));
    a.check_invariants().unwrap();
    b.check_invariants().unwrap();
}
