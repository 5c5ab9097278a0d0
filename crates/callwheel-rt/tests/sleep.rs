//! Sleeping with precision and the condition variable's timed waits: never early, coalesced
//! to the optimum number of wake-ups, a notification before the timeout, and every documented
//! error.

use std::sync::{Arc, Mutex, Weak};
use std::thread;
use std::time::{Duration, Instant};

use callwheel_rt::{
    Condvar, Deadline, Error, Exec, ManualClock, Runtime, Tolerance, WaitLimit, Woken,
};

fn manual_runtime(clock: &ManualClock) -> Runtime {
    Runtime::builder()
        .clock(clock.clone())
        .shards(1)
        .build()
        .unwrap()
}

/// The driver wake-ups `rt` has made so far.
fn wakeups(rt: &Runtime) -> u64 {
    rt.stats().iter().map(|s| s.wakeups).sum()
}

/// Blocks until `rt` has `n` timers pending (a liveness wait, bounded generously).
fn wait_pending(rt: &Runtime, n: usize) {
    let give_up = Instant::now() + Duration::from_secs(30);
    while rt.stats().iter().map(|s| s.pending).sum::<usize>() != n {
        assert!(Instant::now() < give_up, "{n} timers never became pending");
        thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_sleep_never_returns_early() {
    let rt = Runtime::builder().shards(1).build().unwrap();
    for ms in [1, 3] {
        let start = Instant::now();
        rt.sleep(Duration::from_millis(ms), Tolerance::percent(5))
            .unwrap();
        assert!(start.elapsed() >= Duration::from_millis(ms));
        let until = Instant::now() + Duration::from_millis(ms);
        rt.sleep_until(until, Duration::from_micros(100)).unwrap();
        assert!(Instant::now() >= until);
    }
    // A deadline already passed returns at once; so does a zero sleep.
    rt.sleep_until(Instant::now() - Duration::from_millis(5), Duration::ZERO)
        .unwrap();
    rt.sleep(Duration::ZERO, Tolerance::EXACT).unwrap();
    // Nothing is left armed.
    wait_pending(&rt, 0);
}

/// Sleeps of `threads` threads due 1 ms apart with windows `precision` wide, on a manual clock:
/// how many wake-ups the driver made, and each sleeper's deadline and the time it woke at.
fn sleep_together(threads: u64, precision: Duration) -> (u64, Vec<(u64, u64)>) {
    let clock = ManualClock::new(0);
    let rt = Arc::new(manual_runtime(&clock));
    clock.wait_idle(1);
    let sleepers: Vec<_> = (0..threads)
        .map(|i| {
            let rt = Arc::clone(&rt);
            let deadline = 10_000_000 + i * 1_000_000;
            thread::spawn(move || {
                rt.sleep_until(Deadline::from_clock_ns(deadline), precision)
                    .unwrap();
                (deadline, rt.now_ns())
            })
        })
        .collect();
    wait_pending(&rt, threads as usize);
    clock.wait_idle(1);
    let before = wakeups(&rt);
    clock.set_auto_advance(true);
    let woke: Vec<(u64, u64)> = sleepers.into_iter().map(|s| s.join().unwrap()).collect();
    (wakeups(&rt) - before, woke)
}

#[test]
fn sleeps_with_precision_share_wakeups() {
    let windows = |precision: u64| -> Vec<(u64, u64)> {
        (0..8)
            .map(|i| {
                let d = 10_000_000 + i * 1_000_000;
                (d, d + precision)
            })
            .collect()
    };
    // 8 ms windows over deadlines 1 ms apart: one instant is in all of them.
    let (wide, woke) = sleep_together(8, Duration::from_millis(8));
    assert_eq!(wide, callwheel::stabbing_optimum(&windows(8_000_000)));
    assert_eq!(wide, 1);
    for (deadline, at) in woke {
        assert!(
            at >= deadline,
            "woke at {at}, before its deadline {deadline}"
        );
    }
    // Exact sleeps cannot share: one wake-up each.
    let (exact, woke) = sleep_together(8, Duration::ZERO);
    assert_eq!(exact, callwheel::stabbing_optimum(&windows(0)));
    assert_eq!(exact, 8);
    for (deadline, at) in woke {
        assert!(at >= deadline);
    }
}

#[test]
fn a_relative_precision_widens_the_window() {
    // 50 % of a 10 ms sleep: any wake-up from 10 to 15 ms. A timer of the runtime due at 14 ms
    // (exact) and the sleep share one wake-up.
    let clock = ManualClock::new(0);
    let rt = Arc::new(manual_runtime(&clock));
    clock.wait_idle(1);
    let t = rt.timer(Exec::Direct, |_, _| {}).unwrap();
    t.start_with(Deadline::from_clock_ns(14_000_000), Duration::ZERO, None)
        .unwrap();
    let sleeper = {
        let rt = Arc::clone(&rt);
        thread::spawn(move || {
            rt.sleep(Duration::from_millis(10), Tolerance::percent(50))
                .unwrap();
            rt.now_ns()
        })
    };
    wait_pending(&rt, 2);
    clock.wait_idle(1);
    let before = wakeups(&rt);
    clock.set_auto_advance(true);
    let woke = sleeper.join().unwrap();
    assert!(woke >= 10_000_000);
    wait_pending(&rt, 0);
    assert_eq!(wakeups(&rt) - before, 1);
    assert_eq!(t.fired(), 1);
}

#[test]
fn a_notification_ends_a_timed_wait_and_cancels_its_timer() {
    let rt = Arc::new(Runtime::builder().shards(1).build().unwrap());
    let state = Arc::new((Mutex::new(false), Condvar::new()));
    let handle = {
        let state = Arc::clone(&state);
        let rt = Arc::clone(&rt);
        thread::spawn(move || {
            let (m, cv) = &*state;
            let mut g = m.lock().unwrap();
            let mut results = Vec::new();
            while !*g {
                let (next, woken) =
                    cv.wait_timeout(&rt, m, g, Duration::from_secs(60), Tolerance::EXACT);
                g = next;
                results.push(woken.unwrap());
            }
            results
        })
    };
    let (m, cv) = &*state;
    while cv.waiters() == 0 {
        thread::yield_now();
    }
    wait_pending(&rt, 1);
    *m.lock().unwrap() = true;
    assert!(cv.notify_one());
    let results = handle.join().unwrap();
    assert_eq!(results, [Woken::Notified]);
    // The 60 s timer went with the wait.
    wait_pending(&rt, 0);
    assert_eq!(cv.waiters(), 0);
    assert!(!cv.notify_one());
}

#[test]
fn a_timed_wait_times_out_no_earlier_than_its_timeout() {
    let rt = Runtime::builder().shards(1).build().unwrap();
    let (m, cv) = (Mutex::new(0u32), Condvar::new());
    let start = Instant::now();
    let g = m.lock().unwrap();
    let (g, woken) = cv.wait_timeout(&rt, &m, g, Duration::from_millis(3), Tolerance::percent(5));
    assert_eq!(woken.unwrap(), Woken::TimedOut);
    assert!(start.elapsed() >= Duration::from_millis(3));
    // The guard is the mutex's, locked again.
    assert!(m.try_lock().is_err());
    drop(g);
    assert_eq!(cv.waiters(), 0);
    // An absolute deadline, already passed.
    let g = m.lock().unwrap();
    let (_g, woken) = cv.wait_until(&rt, &m, g, Instant::now(), Duration::ZERO);
    assert_eq!(woken.unwrap(), Woken::TimedOut);
}

#[test]
fn notify_all_wakes_every_waiter_and_notify_one_one() {
    let state = Arc::new((Mutex::new(0u32), Condvar::new()));
    let spawn = |state: &Arc<(Mutex<u32>, Condvar)>, want: u32| {
        let state = Arc::clone(state);
        thread::spawn(move || {
            let (m, cv) = &*state;
            let mut g = m.lock().unwrap();
            while *g < want {
                let (next, r) = cv.wait(m, g);
                g = next;
                r.unwrap();
            }
        })
    };
    let (m, cv) = &*state;
    let waiters: Vec<_> = (0..3).map(|_| spawn(&state, 1)).collect();
    while cv.waiters() < 3 {
        thread::yield_now();
    }
    *m.lock().unwrap() = 1;
    assert_eq!(cv.notify_all(), 3);
    for w in waiters {
        w.join().unwrap();
    }
    let a = spawn(&state, 2);
    let b = spawn(&state, 2);
    while cv.waiters() < 2 {
        thread::yield_now();
    }
    *m.lock().unwrap() = 2;
    assert!(cv.notify_one());
    // One left the queue; the other still waits for its own notification.
    while cv.waiters() != 1 {
        thread::yield_now();
    }
    assert!(cv.notify_one());
    a.join().unwrap();
    b.join().unwrap();
    assert_eq!(cv.waiters(), 0);
}

#[test]
fn a_guard_of_another_mutex_is_refused_and_handed_back() {
    let rt = Runtime::builder().shards(1).build().unwrap();
    let cv = Condvar::new();
    // Values of non-zero size, and zero-sized ones (where only the lock state can tell).
    let (a, b) = (Mutex::new(1u64), Mutex::new(2u64));
    let g = a.lock().unwrap();
    let (g, r) = cv.wait(&b, g);
    assert!(matches!(r, Err(Error::WrongMutex)));
    assert!(a.try_lock().is_err(), "the guard comes back still locked");
    assert!(b.try_lock().is_ok(), "the other mutex was never taken");
    drop(g);
    let (c, d) = (Mutex::new(()), Mutex::new(()));
    let g = c.lock().unwrap();
    let (g, r) = cv.wait_timeout(&rt, &d, g, Duration::from_millis(1), Tolerance::EXACT);
    assert!(matches!(r, Err(Error::WrongMutex)));
    assert!(c.try_lock().is_err());
    drop(g);
    assert_eq!(cv.waiters(), 0);
    wait_pending(&rt, 0);
}

#[test]
fn a_sleep_on_a_driver_is_refused_and_on_a_worker_allowed() {
    let rt = Arc::new(Runtime::builder().shards(1).workers(1).build().unwrap());
    let results = Arc::new(Mutex::new(Vec::new()));
    let make = |exec: Exec| {
        let weak: Weak<Runtime> = Arc::downgrade(&rt);
        let results = Arc::clone(&results);
        rt.timer(exec, move |_, _| {
            let rt = weak
                .upgrade()
                .expect("the runtime outlives its timers' firings");
            let slept = rt.sleep(Duration::from_micros(200), Tolerance::EXACT);
            let cv = Condvar::new();
            let m = Mutex::new(());
            let (_g, waited) = cv.wait_timeout(
                &rt,
                &m,
                m.lock().unwrap(),
                Duration::from_micros(200),
                Tolerance::EXACT,
            );
            results.lock().unwrap().push((exec, slept, waited));
        })
        .unwrap()
    };
    let direct = make(Exec::Direct);
    let deferred = make(Exec::Deferred);
    direct.start_after(Duration::from_micros(100)).unwrap();
    deferred.start_after(Duration::from_micros(100)).unwrap();
    let give_up = Instant::now() + Duration::from_secs(30);
    while results.lock().unwrap().len() < 2 {
        assert!(Instant::now() < give_up, "the callbacks never finished");
        thread::sleep(Duration::from_millis(1));
    }
    for (exec, slept, waited) in results.lock().unwrap().drain(..) {
        match exec {
            Exec::Direct => {
                assert!(matches!(slept, Err(Error::OnDriver)));
                assert!(matches!(waited, Err(Error::OnDriver)));
            }
            _ => {
                slept.unwrap();
                assert_eq!(waited.unwrap(), Woken::TimedOut);
            }
        }
    }
    assert_eq!(
        Error::OnDriver.errno(),
        rustix::io::Errno::DEADLK.raw_os_error()
    );
    drop((direct, deferred));
}

#[test]
fn sleep_for_takes_either_timeout() {
    let rt = Runtime::builder().shards(1).build().unwrap();
    let start = Instant::now();
    rt.sleep_for(WaitLimit::After(Duration::from_millis(1), Tolerance::EXACT))
        .unwrap();
    rt.sleep_for(WaitLimit::At(
        (start + Duration::from_millis(2)).into(),
        Duration::ZERO,
    ))
    .unwrap();
    assert!(start.elapsed() >= Duration::from_millis(2));
}

/// The coarse clock the async timeouts stamp their call with: never ahead of
/// `CLOCK_MONOTONIC`, behind it by less than its resolution (plus the time between the two
/// reads), and with a resolution of at least 1 ns.
#[test]
fn the_coarse_clock_trails_the_monotonic_one_by_less_than_its_resolution() {
    for _ in 0..1_000 {
        let (coarse, resolution) = callwheel_rt::coarse_monotonic();
        let precise = callwheel_rt::ClockId::Monotonic.read().unwrap();
        assert!(resolution >= 1);
        assert!(
            coarse <= precise,
            "coarse {coarse} ahead of monotonic {precise}"
        );
        // A generous allowance for a thread descheduled between the two reads.
        assert!(
            precise - coarse < resolution + 50_000_000,
            "coarse {coarse}, monotonic {precise}, resolution {resolution}"
        );
    }
}
