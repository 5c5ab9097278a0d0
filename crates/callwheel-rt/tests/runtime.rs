//! The runtime with its threads: driver behaviour on the manual clock (deterministic counts),
//! execution modes, drain, clock changes and configuration errors. No test asserts a latency.
#![cfg(not(miri))]

mod common;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use callwheel_rt::{
    ClockId, Config, Deadline, Error, Exec, Fire, ManualClock, Runtime, ShardStats, Stop,
    SystemClock, Tolerance, MAX_SHARDS, MAX_SPIN,
};
use common::Lcg;

/// A deadline in the runtime clock's own nanoseconds.
fn at(ns: u64) -> Deadline {
    Deadline::from_clock_ns(ns)
}

/// A period or tolerance of `n` nanoseconds.
fn ns(n: u64) -> Duration {
    Duration::from_nanos(n)
}

/// Generous liveness bound for waits on real threads (never a latency assertion).
const PATIENCE: Duration = Duration::from_secs(30);

fn manual_runtime(clock: &ManualClock, shards: usize, tolerance: Tolerance) -> Runtime {
    Runtime::builder()
        .clock(clock.clone())
        .shards(shards)
        .tolerance(tolerance)
        .build()
        .unwrap()
}

fn total(stats: &[ShardStats], f: impl Fn(&ShardStats) -> u64) -> u64 {
    stats.iter().map(f).sum()
}

#[test]
fn an_idle_runtime_makes_zero_wakeups() {
    let clock = ManualClock::new(0);
    let rt = manual_runtime(&clock, 3, Tolerance::EXACT);
    clock.wait_idle(3);
    clock.advance(10_000_000_000);
    clock.set_auto_advance(true);
    clock.wait_idle(3);
    assert_eq!(total(&rt.stats(), |s| s.wakeups), 0);

    // On the real clock too: nothing pending, nothing wakes.
    let rt = Runtime::builder().shards(2).build().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(total(&rt.stats(), |s| s.wakeups), 0);
}

fn coalescing_run(tolerance: Tolerance) -> (u64, u64, Vec<(u64, u64, Fire)>) {
    let clock = ManualClock::new(0);
    let rt = manual_runtime(&clock, 1, tolerance);
    clock.wait_idle(1);
    let fires = Arc::new(Mutex::new(Vec::new()));
    let mut rng = Lcg(7);
    let mut windows = Vec::new();
    // 1,000 timers spread over 10 s, each with an interval of 1 ms to 10 s from time 0.
    for _ in 0..1_000 {
        let deadline = 1_000_000 + rng.below(9_999_000_000);
        let tol = tolerance.for_interval(deadline);
        windows.push((deadline, deadline + tol));
        let fires = Arc::clone(&fires);
        let t = rt
            .timer(Exec::Direct, move |_, f| {
                fires.lock().unwrap().push((f.deadline, tol, *f));
            })
            .unwrap();
        t.start_at(at(deadline)).unwrap();
        // Fire-and-forget: the handle is not kept.
        t.detach();
    }
    clock.wait_idle(1);
    // Arming woke the sleeping driver early (each earlier window end does); count from here.
    let armed = &rt.stats()[0];
    let (before, early_before) = (armed.wakeups, armed.early_wakeups);
    clock.set_auto_advance(true);
    let deadline = std::time::Instant::now() + PATIENCE;
    while fires.lock().unwrap().len() < 1_000 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    clock.wait_idle(1);
    let s = &rt.stats()[0];
    assert_eq!(
        s.early_wakeups, early_before,
        "no early wake-ups once every timer is armed"
    );
    let fires = fires.lock().unwrap().clone();
    (
        s.wakeups - before,
        callwheel::stabbing_optimum(&windows),
        fires,
    )
}

#[test]
fn coalesced_wakeups_equal_the_optimal_stabbing_and_fire_inside_windows() {
    for tolerance in [Tolerance::EXACT, Tolerance::percent(5)] {
        let (wakeups, optimum, fires) = coalescing_run(tolerance);
        assert_eq!(fires.len(), 1_000);
        for (deadline, tol, f) in &fires {
            assert!(
                f.now >= *deadline && f.now <= deadline + tol,
                "{f:?} outside window"
            );
        }
        assert_eq!(wakeups, optimum, "{tolerance:?}");
        eprintln!("{tolerance:?}: {wakeups} wake-ups for 1000 timers (optimum {optimum})");
    }
    // Tolerance is what makes coalescing possible at all.
    let (exact, _, _) = coalescing_run(Tolerance::EXACT);
    let (tolerant, _, _) = coalescing_run(Tolerance::percent(5));
    assert!(tolerant < exact / 2, "{tolerant} vs {exact}");
}

#[test]
fn a_clock_set_wakes_the_driver_to_reevaluate_absolute_timers() {
    // The realtime clock's ECANCELED path, through the manual clock's `set` (this test cannot
    // set the machine's wall clock): the sleeping driver wakes with Wake::ClockSet, re-reads
    // the clock and fires what the new time has made due.
    let clock = ManualClock::new(1_000);
    let rt = manual_runtime(&clock, 1, Tolerance::EXACT);
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let t = rt
        .timer(Exec::Direct, move |_, f| {
            tx.lock().unwrap().send(*f).unwrap()
        })
        .unwrap();
    t.start_at(at(1_000_000)).unwrap();
    clock.wait_idle(1);
    clock.set(2_000_000);
    let f = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((f.deadline, f.now), (1_000_000, 2_000_000));
    clock.wait_idle(1);
    assert_eq!(rt.stats()[0].clock_sets, 1);

    // Set backwards: readings are clamped (and counted), an absolute timer waits for the clock
    // to reach it, and nothing fires early.
    t.start_at(at(3_000_000)).unwrap();
    clock.wait_idle(1);
    clock.set(500);
    clock.wait_idle(1);
    assert!(rx.try_recv().is_err());
    assert!(rt.stats()[0].clamped >= 1);
    clock.set(3_000_000);
    let f = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((f.deadline, f.now), (3_000_000, 3_000_000));
}

#[test]
fn realtime_and_boottime_runtimes_fire_absolute_timers() {
    for id in [ClockId::Realtime, ClockId::Boottime] {
        let rt = Runtime::builder()
            .clock(SystemClock::new(id))
            .shards(1)
            .build()
            .unwrap();
        let (tx, rx) = mpsc::channel();
        let tx = Mutex::new(tx);
        let t = rt
            .timer(Exec::Direct, move |_, f| {
                tx.lock().unwrap().send(*f).unwrap()
            })
            .unwrap();
        let deadline = id.read().unwrap() + 2_000_000;
        t.start_at(at(deadline)).unwrap();
        let f = rx.recv_timeout(PATIENCE).unwrap();
        assert_eq!(f.deadline, deadline);
        assert!(f.now >= deadline, "{id:?} fired early");
    }
}

#[test]
fn a_slow_deferred_callback_delays_no_other_timer() {
    let clock = ManualClock::new(0);
    let rt = manual_runtime(&clock, 1, Tolerance::EXACT);
    let (started_tx, started_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (done_tx, done_rx) = mpsc::channel();
    let (started_tx, release_rx) = (Mutex::new(started_tx), Mutex::new(release_rx));
    let finished = Arc::new(AtomicUsize::new(0));
    let finished_in_callback = Arc::clone(&finished);
    let slow = rt
        .timer(Exec::Deferred, move |_, _| {
            started_tx.lock().unwrap().send(()).unwrap();
            // Blocks its worker until the test lets it go.
            release_rx.lock().unwrap().recv().unwrap();
            finished_in_callback.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    let done = Mutex::new(done_tx.clone());
    let other_deferred = rt
        .timer(Exec::Deferred, move |_, _| {
            done.lock().unwrap().send("deferred").unwrap()
        })
        .unwrap();
    let done = Mutex::new(done_tx);
    let direct = rt
        .timer(Exec::Direct, move |_, _| {
            done.lock().unwrap().send("direct").unwrap()
        })
        .unwrap();
    slow.start_at(at(100)).unwrap();
    other_deferred.start_at(at(200)).unwrap();
    direct.start_at(at(300)).unwrap();
    clock.advance(100);
    started_rx.recv_timeout(PATIENCE).unwrap();
    clock.advance(200);
    let mut got = [
        done_rx.recv_timeout(PATIENCE).unwrap(),
        done_rx.recv_timeout(PATIENCE).unwrap(),
    ];
    got.sort();
    assert_eq!(got, ["deferred", "direct"]);
    // The slow one is still running: stop says so, and drain waits for it.
    assert_eq!(slow.stop(), Stop::Running);
    release_tx.send(()).unwrap();
    // Running if drain caught the callback still going (and waited), NotPending if it had
    // already returned: either way it has finished when drain returns.
    let drained = slow.drain();
    assert!(
        matches!(drained, Stop::Running | Stop::NotPending),
        "{drained:?}"
    );
    assert_eq!(
        finished.load(Ordering::SeqCst),
        1,
        "drain returned before the callback did"
    );
    assert_eq!(slow.stop(), Stop::NotPending);
}

/// A deferred timer whose callback says it started, spins until `release` is non-zero, then
/// adds one to `finished`: a callback that is running for as long as a test needs.
struct Blocking {
    timer: callwheel_rt::Timer,
    release: Arc<AtomicUsize>,
    finished: Arc<AtomicUsize>,
    started: mpsc::Receiver<()>,
}

fn blocking(rt: &Runtime) -> Blocking {
    let release = Arc::new(AtomicUsize::new(0));
    let finished = Arc::new(AtomicUsize::new(0));
    let (started_tx, started) = mpsc::channel();
    let started_tx = Mutex::new(started_tx);
    let (r, f) = (Arc::clone(&release), Arc::clone(&finished));
    let timer = rt
        .timer(Exec::Deferred, move |_, _| {
            started_tx.lock().unwrap().send(()).unwrap();
            while r.load(Ordering::SeqCst) == 0 {
                std::thread::yield_now();
            }
            f.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    Blocking {
        timer,
        release,
        finished,
        started,
    }
}

/// A driver that spins before its wake-ups (`Builder::spin`) fires every timer once, and
/// counts the deadlines it reached spinning and the time it spun; a runtime built without it
/// never spins.
#[test]
fn a_spinning_driver_fires_every_timer_once_and_counts_its_spins() {
    let fire_five = |rt: &Runtime| {
        let (tx, rx) = mpsc::channel();
        let t = rt
            .timer(Exec::Direct, move |_, _| {
                let _ = tx.send(());
            })
            .unwrap();
        for _ in 0..5 {
            t.start_after(Duration::from_millis(5)).unwrap();
            rx.recv_timeout(PATIENCE).unwrap();
        }
        assert!(
            rx.recv_timeout(Duration::from_millis(20)).is_err(),
            "a timer fired twice"
        );
        rt.shard_stats(0).unwrap()
    };
    let spinning = Runtime::builder()
        .shards(1)
        .workers(1)
        .spin(MAX_SPIN)
        .build()
        .unwrap();
    let s = fire_five(&spinning);
    // At least one of the five: a kernel that wakes the driver later than the spin's length
    // skips the spin of that wake-up.
    assert!(
        s.spins >= 1 && s.spin_ns > 0,
        "{} spins, {} ns",
        s.spins,
        s.spin_ns
    );
    let plain = Runtime::builder().shards(1).workers(1).build().unwrap();
    let s = fire_five(&plain);
    assert_eq!((s.spins, s.spin_ns), (0, 0));
}

/// A clock that is not a test's but never moves: its waiter sleeps a real millisecond per
/// wait.
#[derive(Debug)]
struct Stuck;

#[derive(Debug)]
struct MillisecondWaiter;

impl callwheel_rt::Waiter for MillisecondWaiter {
    fn wait(&self, _: Option<u64>) -> std::io::Result<callwheel_rt::Wake> {
        std::thread::sleep(Duration::from_millis(1));
        Ok(callwheel_rt::Wake::Deadline)
    }
    fn wake(&self) {}
}

impl callwheel_rt::Clock for Stuck {
    fn now(&self) -> u64 {
        1_000
    }
    fn waiter(&self) -> std::io::Result<Box<dyn callwheel_rt::Waiter>> {
        Ok(Box::new(MillisecondWaiter))
    }
}

/// A spin on a clock that does not reach the deadline gives up after the spin's length and
/// sleeps, rather than holding a CPU until the clock gets there.
#[test]
fn a_spin_on_a_clock_that_does_not_move_gives_up_and_sleeps() {
    let rt = Runtime::builder()
        .clock(Stuck)
        .shards(1)
        .workers(1)
        .spin(MAX_SPIN)
        .build()
        .unwrap();
    let t = rt.timer(Exec::Direct, |_, _| {}).unwrap();
    // Due 500 ns after the clock's only reading: within the spin, never reached.
    t.start_at(Deadline::from_clock_ns(1_500)).unwrap();
    let patience = std::time::Instant::now() + PATIENCE;
    let waiting = |what: &str| {
        assert!(std::time::Instant::now() < patience, "{what}");
        std::thread::sleep(Duration::from_millis(1));
    };
    // The waiter also returns every millisecond while the driver has nothing planned: count
    // the sleeps from the first spin on.
    while rt.shard_stats(0).unwrap().spin_ns == 0 {
        waiting("the driver never spun");
    }
    let first = rt.shard_stats(0).unwrap().wakeups;
    while rt.shard_stats(0).unwrap().wakeups < first + 2 {
        waiting("the driver stopped sleeping: it spins for ever");
    }
    assert_eq!(
        rt.shard_stats(0).unwrap().spins,
        0,
        "no deadline was reached"
    );
}

#[test]
fn drain_waits_for_a_running_callback() {
    let rt = Runtime::builder().shards(1).build().unwrap();
    let Blocking {
        timer: t,
        release,
        finished,
        started: started_rx,
    } = blocking(&rt);
    t.start_after(Duration::ZERO).unwrap();
    started_rx.recv_timeout(PATIENCE).unwrap();
    let drainer = {
        let t = t.clone();
        let finished = Arc::clone(&finished);
        std::thread::spawn(move || (t.drain(), finished.load(Ordering::SeqCst)))
    };
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        !drainer.is_finished(),
        "drain returned while the callback ran"
    );
    release.store(1, Ordering::SeqCst);
    assert_eq!(drainer.join().unwrap(), (Stop::Running, 1));
}

/// A finishing callback notifies only when a `drain` waits (it counts them): two drains
/// waiting at once both return, and so does one that comes to the next running callback after
/// they left.
#[test]
fn every_waiting_drain_is_woken_when_the_callback_finishes() {
    let rt = Runtime::builder().shards(1).build().unwrap();
    let Blocking {
        timer: t,
        release,
        finished,
        started: started_rx,
    } = blocking(&rt);
    let drainer = |t: &callwheel_rt::Timer| {
        let t = t.clone();
        let finished = Arc::clone(&finished);
        std::thread::spawn(move || (t.drain(), finished.load(Ordering::SeqCst)))
    };
    for round in 1..=2 {
        release.store(0, Ordering::SeqCst);
        t.start_after(Duration::ZERO).unwrap();
        started_rx.recv_timeout(PATIENCE).unwrap();
        let drainers = if round == 1 {
            vec![drainer(&t), drainer(&t)]
        } else {
            vec![drainer(&t)]
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            drainers.iter().all(|d| !d.is_finished()),
            "drain returned while the callback ran"
        );
        release.store(1, Ordering::SeqCst);
        for d in drainers {
            assert_eq!(d.join().unwrap(), (Stop::Running, round));
        }
    }
}

#[test]
fn timers_start_on_the_chosen_shard() {
    let clock = ManualClock::new(0);
    let rt = manual_runtime(&clock, 3, Tolerance::EXACT);
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let t = rt
        .timer_on(2, Exec::Direct, move |_, f| {
            tx.lock().unwrap().send(f.shard).unwrap()
        })
        .unwrap();
    t.start_at(at(10)).unwrap();
    clock.advance(10);
    assert_eq!(rx.recv_timeout(PATIENCE).unwrap(), 2);
    t.start_with(at(20), ns(0), Some(1)).unwrap();
    clock.advance(10);
    assert_eq!(rx.recv_timeout(PATIENCE).unwrap(), 1);
    assert!(rt.current_shard() < 3);
    assert!(matches!(
        rt.timer_on(3, Exec::Direct, |_, _| {}),
        Err(Error::NoSuchShard {
            shard: 3,
            shards: 3
        })
    ));
}

#[test]
fn bad_configurations_are_errors() {
    for builder in [
        Runtime::builder().workers(0),
        Runtime::builder().max_expiries_per_lock(0),
        Runtime::builder().shards(MAX_SHARDS + 1),
    ] {
        assert!(matches!(builder.build(), Err(Error::Config { .. })));
    }
    // A whole configuration, changed by assignment, is checked the same way.
    let mut config = Config::default();
    config.workers = 0;
    assert!(matches!(Runtime::new(config), Err(Error::Config { .. })));
}

#[test]
fn a_dropped_runtime_refuses_new_armings() {
    let rt = Runtime::builder().shards(1).build().unwrap();
    let t = rt.timer(Exec::Direct, |_, _| {}).unwrap();
    t.start_after(Duration::from_secs(60)).unwrap();
    drop(rt);
    assert!(matches!(
        t.start_after(Duration::ZERO),
        Err(Error::ShutDown)
    ));
}

#[test]
fn stats_count_fired_timers_and_their_lateness() {
    let clock = ManualClock::new(0);
    let rt = manual_runtime(&clock, 1, Tolerance::EXACT);
    let fired = Arc::new(AtomicU64::new(0));
    for i in 0..10u64 {
        let fired = Arc::clone(&fired);
        let t = rt
            .timer(Exec::Direct, move |_, _| {
                fired.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap();
        t.start_at(at(100 + i)).unwrap();
        t.detach();
    }
    clock.advance(1_000);
    while fired.load(Ordering::SeqCst) < 10 {
        std::thread::yield_now();
    }
    clock.wait_idle(1);
    let s = rt.shard_stats(0).unwrap();
    assert_eq!((s.started, s.fired, s.pending), (10, 10, 0));
    assert_eq!(s.lateness.len(), 10);
    // All ten fired at one wake-up at 1,000: lateness 900 down to 891 (the histogram keeps
    // two significant digits).
    assert!(
        s.lateness.equivalent(s.lateness.max(), 900),
        "{}",
        s.lateness.max()
    );
    assert!(
        s.lateness.equivalent(s.lateness.min(), 891),
        "{}",
        s.lateness.min()
    );
    assert!(rt.shard_stats(1).is_err());
}

#[test]
fn a_runtime_dropped_from_its_own_callback_shuts_down() {
    let rt = Arc::new(Mutex::new(Some(
        Runtime::builder().shards(1).build().unwrap(),
    )));
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let owner = Arc::clone(&rt);
    let t = rt
        .lock()
        .unwrap()
        .as_ref()
        .unwrap()
        .timer(Exec::Direct, move |_, _| {
            let taken = owner.lock().unwrap().take();
            drop(taken);
            tx.lock().unwrap().send(()).unwrap();
        })
        .unwrap();
    t.start_after(Duration::ZERO).unwrap();
    rx.recv_timeout(PATIENCE).unwrap();
    assert!(matches!(
        t.start_after(Duration::ZERO),
        Err(Error::ShutDown)
    ));
}

/// Sets the wall clock to its own reading (a jump of the few nanoseconds the call takes),
/// which the kernel reports to every timerfd armed with TFD_TIMER_CANCEL_ON_SET.
fn set_wall_clock_to_itself() -> std::io::Result<()> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of each call.
    let r = unsafe {
        libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts);
        libc::clock_settime(libc::CLOCK_REALTIME, &ts)
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Whether this process may set the wall clock: `CAP_SYS_TIME` (bit 25) in its effective
/// capabilities, read from `/proc/self/status`.
fn may_set_the_wall_clock() -> bool {
    const CAP_SYS_TIME: u32 = 25;
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|caps| caps >> CAP_SYS_TIME & 1 == 1)
}

/// The real ECANCELED path: the kernel reports a set of the wall clock only to a process
/// that sets it, which needs `CAP_SYS_TIME` in the initial user namespace (no namespace
/// offsets `CLOCK_REALTIME`). With the capability (CI runs as root) the test sets the wall
/// clock to its own reading, a jump of the few nanoseconds the two calls take; without it, it
/// says that it did not run.
#[test]
fn setting_the_wall_clock_reaches_a_wall_clock_runtime() {
    if !may_set_the_wall_clock() {
        eprintln!("not run: setting the wall clock needs CAP_SYS_TIME, which this process lacks");
        return;
    }
    let rt = Runtime::builder()
        .clock(SystemClock::new(ClockId::Realtime))
        .shards(1)
        .build()
        .unwrap();
    let fired = Arc::new(AtomicUsize::new(0));
    let timers: Vec<_> = (0..2)
        .map(|_| {
            let f = Arc::clone(&fired);
            rt.timer(Exec::Direct, move |_, _| {
                f.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap()
        })
        .collect();
    // A wall deadline (the runtime clock's own reading) and a relative timer.
    timers[0]
        .start_at(at(rt.now_ns() + 60_000_000_000))
        .unwrap();
    timers[1].start_after(Duration::from_secs(60)).unwrap();
    // Let the driver and the clock-set watcher go to sleep.
    std::thread::sleep(Duration::from_millis(100));
    set_wall_clock_to_itself().unwrap();
    let give_up = std::time::Instant::now() + PATIENCE;
    while rt.stats()[0].clock_sets == 0 && std::time::Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(1));
    }
    // At least this set (another test of this process may set the clock too).
    let s = &rt.stats()[0];
    assert!(s.clock_sets >= 1);
    assert_eq!(fired.load(Ordering::SeqCst), 0);
    for t in &timers {
        assert_eq!(t.stop(), Stop::Cancelled);
    }
}

/// Wall-clock deadlines on the default (monotonic) runtime: one a few milliseconds ahead
/// fires; with `CAP_SYS_TIME`, a set of the wall clock reaches the runtime through its
/// clock-set watcher (counted on every shard) and a far wall deadline stays pending.
#[test]
fn wall_clock_deadlines_on_a_monotonic_runtime() {
    let rt = Runtime::builder().shards(2).build().unwrap();
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let soon = rt
        .timer(Exec::Direct, move |_, _| {
            tx.lock()
                .unwrap()
                .send(std::time::SystemTime::now())
                .unwrap();
        })
        .unwrap();
    let at = std::time::SystemTime::now() + Duration::from_millis(20);
    soon.start_at(Deadline::wall(at)).unwrap();
    let fired = rx.recv_timeout(PATIENCE).unwrap();
    assert!(fired >= at, "not before its wall deadline");
    let far = rt.timer(Exec::Direct, |_, _| {}).unwrap();
    far.start_at(Deadline::wall(
        std::time::SystemTime::now() + Duration::from_secs(3_600),
    ))
    .unwrap();
    if !may_set_the_wall_clock() {
        eprintln!("not run: setting the wall clock needs CAP_SYS_TIME, which this process lacks");
        return;
    }
    set_wall_clock_to_itself().unwrap();
    let give_up = std::time::Instant::now() + PATIENCE;
    while rt.stats().iter().any(|s| s.clock_sets == 0) && std::time::Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(
        rt.stats().iter().all(|s| s.clock_sets >= 1),
        "{:?}",
        rt.stats()
    );
    assert!(far.is_pending());
}

#[test]
fn a_queued_deferred_firing_is_dropped_with_its_last_handle() {
    let clock = ManualClock::new(0);
    let rt = Runtime::builder()
        .clock(clock.clone())
        .shards(1)
        .workers(1)
        .build()
        .unwrap();
    // The only worker is kept busy, so the later firings wait in its queue, in start order.
    let Blocking {
        timer: blocker,
        release,
        started,
        ..
    } = blocking(&rt);
    let runs = Arc::new(AtomicUsize::new(0));
    let r = Arc::clone(&runs);
    let victim = rt
        .timer(Exec::Deferred, move |_, _| {
            r.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    let (done_tx, done_rx) = mpsc::channel();
    let done_tx = Mutex::new(done_tx);
    let marker = rt
        .timer(Exec::Deferred, move |_, _| {
            done_tx.lock().unwrap().send(()).unwrap();
        })
        .unwrap();
    for t in [&blocker, &victim, &marker] {
        t.start_at(at(100)).unwrap();
    }
    clock.advance(100);
    started.recv_timeout(PATIENCE).unwrap();
    // All three were taken for running at one wake-up: the victim is queued, not pending.
    assert!(!victim.is_pending() && !marker.is_pending());
    assert_eq!(victim.stop(), Stop::Running);
    drop(victim);
    release.store(1, Ordering::SeqCst);
    // The marker runs after the victim's turn on the one worker.
    done_rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    assert_eq!(rt.stats()[0].panics, 0);
}

#[test]
fn an_instant_deadline_is_the_monotonic_reading_it_names() {
    let rt = Runtime::builder().shards(1).build().unwrap();
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let t = rt
        .timer(Exec::Direct, move |_, f| {
            tx.lock().unwrap().send(*f).unwrap();
        })
        .unwrap();
    let when = std::time::Instant::now() + Duration::from_millis(1);
    t.start_at(when).unwrap();
    let f = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!(f.deadline, rt.ns_at(when));
    assert!(f.now >= f.deadline);
    // The clock read after the firing is past the deadline too: the same clock.
    assert!(rt.now_ns() >= f.deadline);
    // Instants beyond the clock's range saturate instead of panicking.
    let far = std::time::Instant::now() + Duration::from_secs(1 << 40);
    assert_eq!(rt.ns_at(far), u64::MAX);
    assert!(!t.start_at(far).unwrap());
    assert_eq!(t.stop(), Stop::Cancelled);
}
