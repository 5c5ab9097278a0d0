//! Hostile values for the public functions of callwheel-rt that no other test gives them: one
//! test per function, or per small group of closely related ones, named after them. Each
//! asserts the documented result (a clear error or a documented value), never a panic, abort
//! or hang. Time is a `ManualClock` wherever a runtime runs, so every outcome is
//! deterministic; a wait on another thread has a bound of seconds and no test asserts a
//! duration.
//!
//! Every public function is accounted for: tested here, or already given hostile values by
//! the tests named below, which get no test of their own here (a test of another function may
//! still call them). One hostile caller rather than hostile value is added for functions
//! covered in hostile.rs: the timer's own callback stopping, draining, moving and re-arming
//! it on running drivers (`timer_stop_drain_move_to_and_start_from_its_own_callback`), which
//! src/step_tests.rs covers only for `stop`, `drain` and a re-arm, stepped by hand, and no
//! test covered for `move_to`.
//!
//! - covered in hostile.rs: `Runtime::builder`, `Runtime::timer`, `Runtime::timer_on`,
//!   `Runtime::shard_stats`, dropping a `Runtime` with timers pending or from a callback;
//!   `Builder::shards`, `Builder::workers`, `Builder::max_expiries_per_lock`,
//!   `Builder::tolerance`, `Builder::build`; `Timer::start_at`, `Timer::start_after`,
//!   `Timer::start_with`, `Timer::start_periodic`, `Timer::start_periodic_with`, `Timer::stop`,
//!   `Timer::drain`, `Timer::move_to`, `Timer::is_pending`, `Timer::fired`; `TimerSet::new`,
//!   `TimerSet::with_config`, `TimerSet::create`, `TimerSet::reset`, `TimerSet::cancel`,
//!   `TimerSet::get`, `TimerSet::reap`, `TimerSet::reap_info`, `TimerSet::set_missed`,
//!   `TimerSet::overruns`, `TimerSet::is_queued`, `TimerSet::refresh`, `TimerSet::len`,
//!   `TimerSet::is_empty`, `TimerSet::stats`, `TimerSet::check_invariants`, `TimerSet::wait`,
//!   `TimerSet::set_callback`, `TimerSet::clear_callback`; `TimerSetConfig::default`,
//!   `TimerSetConfig::with_quota`, `TimerSetConfig::with_tolerance`; `TimerHandle::from_bits`,
//!   `TimerHandle::to_bits`; `Deadline::from_clock_ns`; `ManualClock::new`,
//!   `ManualClock::set`, `ManualClock::wait_idle`.
//! - covered in runtime.rs: `Runtime::ns_at` for an `Instant` past the clock's range
//!   (`an_instant_deadline_is_the_monotonic_reading_it_names`; the far past is tested here).
//! - covered in periodic_end.rs: `Timer::overruns` at `u64::MAX`
//!   (`a_skip_timer_with_period_one_at_the_end_of_time_fires_once`), and
//!   `TimerSetConfig::with_missed(Missed::Skip)` at the end of time
//!   (`a_set_timer_with_period_one_at_the_end_of_time_is_reaped_once`; the other policies are
//!   tested here).
//! - covered in timerset.rs: dropping a `TimerSet` from its own callback or while its
//!   callback runs (`a_set_dropped_from_its_own_callback_on_the_driver_does_not_deadlock`,
//!   `dropping_the_set_waits_for_its_callback_running_on_the_driver`).
//! - covered in src/tolerance.rs: `Tolerance::absolute(Duration::MAX)`,
//!   `Tolerance::with_absolute`, `Tolerance::for_interval` with `ppm = u32::MAX`
//!   (`durations_become_saturated_nanoseconds`,
//!   `a_relative_part_above_the_interval_saturates_instead_of_wrapping`; `Tolerance::percent`
//!   at `u32::MAX` and both extremes as configured tolerances are tested here).
//! - covered in src/instant.rs: `saturating_ns` (`far_instants_and_durations_saturate`).
//! - covered in src/lead.rs: `Lead::after(u64::MAX)`, `Lead::aim_for(u64::MAX, u64::MAX)`,
//!   `Plan::must_wake_for(0 / u64::MAX)` (`the_lead_follows_a_late_delivery_at_once_and_forgets_it_slowly`,
//!   `the_aim_is_the_lead_before_the_earliest_window_end_but_never_before_a_deadline`,
//!   `only_an_earlier_aim_wakes_a_sleeping_driver`; `Lead::ns`, `Lead::aim`, `Plan::wake_for`
//!   and inverted windows are tested here).
//! - covered in src/bases_tests.rs: `Deadline::on` on a clock without bases
//!   (`a_clock_without_bases_refuses_another_base_and_takes_its_own`).
//! - covered in src/clock.rs: `ClockId::minimise_timer_slack`
//!   (`the_raw_reference_sleeps_until_its_deadline`).
//!
//! Not called: `ClockId::sleep_until(u64::MAX)` and `ManualClock::wait_idle` with more waiters
//! than exist, which block as documented (for about 584 years, and until the waiters exist).
#![cfg(not(miri))]

use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use callwheel::{Timers, Wheel};
use callwheel_rt::{
    Builder, Clock, ClockId, Config, Deadline, Error, Exec, Fire, Lead, ManualClock, Margin,
    Missed, Plan, Runtime, Stop, SystemClock, Timer, TimerSet, TimerSetConfig, Tolerance, Waiter,
    Wake, MAX_EXPIRIES_PER_LOCK, MAX_LEAD, MAX_SHARDS, MAX_TOLERANCE_PPM,
};

mod common;
mod hostile_support;
use common::{readable, settle};
use hostile_support::{at, eventually, manual, ns, shut_down, PATIENCE};

fn no_such_shard<T: std::fmt::Debug>(r: Result<T, Error>, asked: usize, have: usize) {
    assert!(
        matches!(r, Err(Error::NoSuchShard { shard, shards }) if shard == asked && shards == have),
        "expected NoSuchShard {{ {asked}, {have} }}, got {r:?}"
    );
}

/// Drops `rt` on another thread, failing the test if the drop does not return.
fn drop_bounded(rt: Runtime) {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        drop(rt);
        let _ = tx.send(());
    });
    rx.recv_timeout(PATIENCE)
        .expect("dropping the runtime never returned");
}

/// A timer that sends each firing to `tx`.
fn sending(rt: &Runtime, shard: usize, exec: Exec, tx: &mpsc::Sender<Fire>) -> Timer {
    let tx = tx.clone();
    rt.timer_on(shard, exec, move |_, f| {
        let _ = tx.send(*f);
    })
    .unwrap()
}

/// An `Instant` about 35,000 years ago (representable: Linux keeps an `i64` of seconds).
fn far_past() -> Instant {
    Instant::now()
        .checked_sub(Duration::from_secs(1 << 40))
        .expect("an Instant 2^40 s back")
}

/// An `Instant` about 35,000 years ahead, past every clock's 64-bit nanoseconds.
fn far_future() -> Instant {
    Instant::now()
        .checked_add(Duration::from_secs(1 << 40))
        .expect("an Instant 2^40 s ahead")
}

/// A clock that cannot make a waiter, counting how often it was asked.
#[derive(Clone, Debug, Default)]
struct RefusingClock {
    asked: Arc<AtomicUsize>,
}

impl Clock for RefusingClock {
    fn now(&self) -> u64 {
        0
    }

    fn waiter(&self) -> io::Result<Box<dyn Waiter>> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Err(io::Error::other("a hostile clock makes no waiter"))
    }
}

/// A manual clock whose every sleep fails.
#[derive(Clone, Debug)]
struct FailingSleeps(ManualClock);

#[derive(Debug)]
struct FailingWaiter;

impl Waiter for FailingWaiter {
    fn wait(&self, _until: Option<u64>) -> io::Result<Wake> {
        Err(io::Error::other("a hostile sleep"))
    }

    fn wake(&self) {}
}

impl Clock for FailingSleeps {
    fn now(&self) -> u64 {
        self.0.now()
    }

    fn waiter(&self) -> io::Result<Box<dyn Waiter>> {
        Ok(Box::new(FailingWaiter))
    }
}

// ----- Runtime, Config, Builder ----------------------------------------------------------------

/// Puts one field of a configuration out of its documented range.
type Breaks = fn(&mut Config);

#[test]
fn runtime_new_config_default_and_config_with_clock() {
    let d = Config::default();
    assert_eq!(
        (d.shards, d.workers, d.max_expiries_per_lock, d.tolerance),
        (0, 2, 64, Tolerance::EXACT)
    );
    // Every field out of range is refused by name, before anything is built: the clock is
    // never asked for a waiter.
    let refusing = RefusingClock::default();
    let hostile: [(Breaks, &str); 8] = [
        (|c| c.shards = MAX_SHARDS + 1, "shards"),
        (|c| c.shards = usize::MAX, "shards"),
        (|c| c.workers = 0, "workers"),
        (|c| c.workers = usize::MAX, "workers"),
        (|c| c.max_expiries_per_lock = 0, "max_expiries_per_lock"),
        (
            |c| c.max_expiries_per_lock = u64::MAX,
            "max_expiries_per_lock",
        ),
        (
            |c| {
                c.tolerance = Tolerance {
                    absolute: u64::MAX,
                    ppm: MAX_TOLERANCE_PPM + 1,
                }
            },
            "tolerance.ppm",
        ),
        (
            |c| {
                c.tolerance = Tolerance {
                    absolute: 0,
                    ppm: u32::MAX,
                }
            },
            "tolerance.ppm",
        ),
    ];
    for (break_it, field) in hostile {
        let mut config = Config::with_clock(refusing.clone());
        break_it(&mut config);
        match Runtime::new(config) {
            Err(Error::Config { reason }) => assert!(reason.contains(field), "{reason}"),
            other => panic!("{field}: expected a configuration error, got {other:?}"),
        }
    }
    assert_eq!(refusing.asked.load(Ordering::SeqCst), 0);
    // A valid configuration on a clock that makes no waiter: the system error, not a panic.
    let mut config = Config::with_clock(refusing.clone());
    config.shards = 1;
    match Runtime::new(config) {
        Err(Error::Io(e)) => assert!(e.to_string().contains("hostile"), "{e}"),
        other => panic!("expected Error::Io, got {other:?}"),
    }
    assert!(refusing.asked.load(Ordering::SeqCst) >= 1);
    // The edges of every range, through `Runtime::new` directly.
    let clock = ManualClock::new(0);
    let mut config = Config::with_clock(clock.clone());
    config.shards = 1;
    config.workers = 1;
    config.max_expiries_per_lock = MAX_EXPIRIES_PER_LOCK;
    config.tolerance = Tolerance {
        absolute: u64::MAX,
        ppm: MAX_TOLERANCE_PPM,
    };
    let rt = Runtime::new(config).unwrap();
    assert_eq!(rt.shards(), 1);
}

#[test]
fn builder_from_config_config_clock_and_shared_clock() {
    // The builder keeps hostile values as given; `build` refuses them.
    let mut bad = Config::with_clock(ManualClock::new(0));
    bad.workers = 0;
    let b = Builder::from_config(bad);
    assert_eq!(b.config().workers, 0);
    match b.build() {
        Err(Error::Config { reason }) => assert!(reason.contains("workers"), "{reason}"),
        other => panic!("expected a configuration error, got {other:?}"),
    }
    let b = Runtime::builder()
        .shards(usize::MAX)
        .workers(usize::MAX)
        .max_expiries_per_lock(u64::MAX)
        .tolerance(Tolerance::percent(u32::MAX));
    let c = b.config();
    assert_eq!(
        (
            c.shards,
            c.workers,
            c.max_expiries_per_lock,
            c.tolerance.ppm
        ),
        (usize::MAX, usize::MAX, u64::MAX, MAX_TOLERANCE_PPM)
    );
    match b.build() {
        Err(Error::Config { reason }) => assert!(
            ["shards", "workers", "max_expiries_per_lock"]
                .iter()
                .any(|f| reason.contains(f)),
            "{reason}"
        ),
        other => panic!("expected a configuration error, got {other:?}"),
    }

    // A clock that starts at the end of time: a relative deadline saturates there and is due.
    let end = ManualClock::new(u64::MAX);
    let rt = Runtime::builder()
        .clock(end.clone())
        .shards(1)
        .workers(1)
        .build()
        .unwrap();
    assert_eq!(rt.now_ns(), u64::MAX);
    let (tx, rx) = mpsc::channel();
    let t = sending(&rt, 0, Exec::Direct, &tx);
    assert!(!t.start_after(Duration::from_secs(1)).unwrap());
    let f = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!(
        (f.deadline, f.now, f.lateness()),
        (u64::MAX, u64::MAX, Duration::ZERO)
    );

    // One clock shared by two runtimes: one advance fires a timer on each.
    let clock = ManualClock::new(0);
    let shared: Arc<dyn Clock> = Arc::new(clock.clone());
    let builder = Runtime::builder()
        .shared_clock(Arc::clone(&shared))
        .shards(1)
        .workers(1);
    assert!(Arc::ptr_eq(&builder.config().clock, &shared));
    let (a, b) = (builder.clone().build().unwrap(), builder.build().unwrap());
    let (ta, tb) = (
        sending(&a, 0, Exec::Direct, &tx),
        sending(&b, 0, Exec::Deferred, &tx),
    );
    ta.start_at(at(10)).unwrap();
    tb.start_at(at(10)).unwrap();
    clock.advance(10);
    for _ in 0..2 {
        assert_eq!(rx.recv_timeout(PATIENCE).unwrap().deadline, 10);
    }
    assert_eq!((a.now_ns(), b.now_ns()), (10, 10));
}

#[test]
fn runtime_current_shard_and_shards() {
    let clock = ManualClock::new(0);
    let rt = Arc::new(manual(&clock, 3));
    let n = rt.shards();
    assert_eq!(n, 3);
    // From any thread, the caller's shard is one of the runtime's.
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let rt = Arc::clone(&rt);
            std::thread::spawn(move || (0..1_000).all(|_| rt.current_shard() < rt.shards()))
        })
        .collect();
    for t in threads {
        assert!(t.join().unwrap());
    }
    // `shards()` itself is the first index out of range, for every call that takes one.
    no_such_shard(rt.timer_on(n, Exec::Direct, |_, _| {}), n, n);
    no_such_shard(rt.shard_stats(n), n, n);
    assert!(rt.shard_stats(n - 1).is_ok());
    let t = rt.timer_on(n - 1, Exec::Direct, |_, _| {}).unwrap();
    no_such_shard(t.move_to(n), n, n);
    no_such_shard(t.start_with(at(5), ns(0), Some(n)), n, n);
    no_such_shard(
        t.start_periodic_with(at(5), ns(5), ns(0), Missed::Skip, Some(n)),
        n,
        n,
    );
    assert_eq!(t.shard(), n - 1);
    assert!(!t.is_pending());
    assert!(rt.timer(Exec::Direct, |_, _| {}).unwrap().shard() < n);
    // Zero shards means one per CPU, at most MAX_SHARDS.
    let per_cpu = manual(&clock, 0);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(per_cpu.shards(), cpus.min(MAX_SHARDS));
    assert!(per_cpu.current_shard() < per_cpu.shards());
}

#[test]
fn runtime_now_ns_and_ns_at() {
    let clock = ManualClock::new(1_000);
    let rt = manual(&clock, 1);
    assert_eq!(rt.now_ns(), 1_000);
    // Never below an earlier reading, whatever the clock does.
    clock.set(10);
    assert_eq!(rt.now_ns(), 1_000);
    clock.advance(u64::MAX);
    assert_eq!(rt.now_ns(), u64::MAX);
    clock.set(0);
    assert_eq!(rt.now_ns(), u64::MAX);
    // Instants outside the clock's range saturate at both ends.
    assert_eq!(rt.ns_at(far_past()), 0);
    assert_eq!(rt.ns_at(far_future()), u64::MAX);
    let real = Runtime::builder().shards(1).workers(1).build().unwrap();
    assert_eq!(real.ns_at(far_past()), 0);

    // The documented exception: a runtime given the wall clock reads it, set back or not.
    let wall = ManualClock::on_base(ClockId::Realtime, 1_000);
    let rt = manual(&wall, 1);
    assert_eq!(rt.now_ns(), 1_000);
    wall.set(10);
    assert_eq!(rt.now_ns(), 10);
    wall.set(u64::MAX);
    assert_eq!(rt.now_ns(), u64::MAX);
    wall.set(0);
    assert_eq!(rt.now_ns(), 0);
}

#[test]
fn runtime_stats_with_a_backwards_clock_and_a_firing_at_the_end_of_time() {
    let clock = ManualClock::new(1_000);
    let rt = manual(&clock, 2);
    let (tx, rx) = mpsc::channel();
    let t = sending(&rt, 0, Exec::Direct, &tx);
    t.start_at(at(5_000)).unwrap();
    settle(&clock, 2);
    // Set back: each driver wakes for the set, reads the clock below its last reading,
    // clamps it and counts it; nothing fires early.
    clock.set(10);
    eventually("both drivers clamp the backwards reading", || {
        rt.stats()
            .iter()
            .all(|s| s.clamped == 1 && s.clock_sets == 1)
    });
    settle(&clock, 2);
    let s = rt.stats();
    assert_eq!(s.len(), 2);
    assert_eq!(
        (s[0].started, s[0].pending, s[0].fired, s[0].clamped),
        (1, 1, 0, 1)
    );
    assert_eq!((s[1].started, s[1].pending, s[1].fired), (0, 0, 0));
    assert!(rx.try_recv().is_err());
    // Forward to the end of time: the timer fires there, 584 years late.
    clock.set(u64::MAX);
    let f = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((f.deadline, f.now, f.shard), (5_000, u64::MAX, 0));
    settle(&clock, 2);
    let s = rt.stats();
    assert_eq!((s[0].fired, s[0].pending, s[0].clock_sets), (1, 0, 2));
    assert_eq!((s[1].fired, s[1].clock_sets, s[1].clamped), (0, 2, 1));
}

#[test]
fn runtime_shard_stats_lateness_of_late_firings() {
    // "Lateness of each firing (wake-up reading minus deadline), in nanoseconds, to two
    // significant digits; a firing more than an hour late is recorded as an hour late": one
    // timer fired 1 ms late, one 584 years late.
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 1);
    let (tx, rx) = mpsc::channel();
    let t = sending(&rt, 0, Exec::Direct, &tx);
    t.start_at(at(1_000)).unwrap();
    settle(&clock, 1);
    clock.advance(1_001_000);
    assert_eq!(rx.recv_timeout(PATIENCE).unwrap().lateness(), ns(1_000_000));
    settle(&clock, 1);
    let h = rt.shard_stats(0).unwrap().lateness;
    assert_eq!(h.len(), 1);
    assert!(h.equivalent(h.max(), 1_000_000), "max lateness {}", h.max());
    t.start_at(at(5_000_000)).unwrap();
    settle(&clock, 1);
    clock.set(u64::MAX);
    assert_eq!(rx.recv_timeout(PATIENCE).unwrap().deadline, 5_000_000);
    settle(&clock, 1);
    let h = rt.shard_stats(0).unwrap().lateness;
    assert_eq!(h.len(), 2);
    let hour = 3_600 * 1_000_000_000;
    assert!(h.equivalent(h.max(), hour), "max lateness {}", h.max());
}

#[test]
fn runtime_stats_with_a_clock_whose_every_sleep_fails() {
    let inner = ManualClock::new(0);
    let rt = Runtime::builder()
        .clock(FailingSleeps(inner.clone()))
        .shards(1)
        .workers(1)
        .build()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let t = sending(&rt, 0, Exec::Direct, &tx);
    t.start_at(at(10)).unwrap();
    eventually("a failed sleep is counted", || {
        rt.stats()[0].wait_errors > 0
    });
    // The driver does not give up: it falls back to short sleeps and still fires.
    inner.advance(10);
    assert_eq!(rx.recv_timeout(PATIENCE).unwrap().deadline, 10);
    eventually("the firing is counted", || rt.stats()[0].fired == 1);
    assert_eq!(rt.stats()[0].pending, 0);
    drop_bounded(rt);
}

// ----- Timer -----------------------------------------------------------------------------------

/// What a callback saw of its own timer's calls, as `Debug` text (`Error` has no `PartialEq`).
fn seen(results: &[&dyn std::fmt::Debug]) -> Vec<String> {
    results.iter().map(|r| format!("{r:?}")).collect()
}

/// The `Debug` text [`seen`] is expected to produce.
fn texts(expected: &[&str]) -> Vec<String> {
    expected.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn timer_stop_drain_move_to_and_start_from_its_own_callback() {
    for exec in [Exec::Direct, Exec::Deferred] {
        let clock = ManualClock::new(0);
        let rt = manual(&clock, 2);
        let (tx, rx) = mpsc::channel();
        let t = rt
            .timer_on(0, exec, move |t, f| {
                let got = match f.deadline {
                    // A one-shot firing: stop and drain find it running (and must not wait for
                    // themselves); it moves and re-arms itself as a periodic timer.
                    100 => seen(&[
                        &t.stop(),
                        &t.drain(),
                        &t.move_to(1),
                        &t.shard(),
                        &t.start_periodic(at(200), ns(100), Missed::Skip),
                    ]),
                    // Its first period, on shard 1 (the next one pending): moved back and
                    // reset to a one-shot arming.
                    200 => seen(&[
                        &t.move_to(0),
                        &t.shard(),
                        &t.start_with(at(1_000), Duration::ZERO, None),
                    ]),
                    // Armed for the end of time, then drained: the drain cancels that arming
                    // and reports it (`Stop::Cancelled`: it was pending), without waiting for
                    // this very callback; only with nothing pending does it report `Running`.
                    1_000 => seen(&[
                        &t.start_after(Duration::MAX),
                        &t.drain(),
                        &t.stop(),
                        &t.is_pending(),
                    ]),
                    other => vec![format!("unexpected firing for {other}")],
                };
                let _ = tx.send((f.shard, f.deadline, got));
            })
            .unwrap();
        t.start_at(at(100)).unwrap();
        clock.advance(100);
        assert_eq!(
            rx.recv_timeout(PATIENCE).unwrap(),
            (
                0,
                100,
                texts(&["Running", "Running", "Ok(false)", "1", "Ok(false)"])
            ),
            "{exec:?}"
        );
        clock.advance(100);
        assert_eq!(
            rx.recv_timeout(PATIENCE).unwrap(),
            (1, 200, texts(&["Ok(true)", "0", "Ok(true)"])),
            "{exec:?}"
        );
        clock.advance(800);
        assert_eq!(
            rx.recv_timeout(PATIENCE).unwrap(),
            (
                0,
                1_000,
                texts(&["Ok(false)", "Cancelled", "Running", "false"])
            ),
            "{exec:?}"
        );
        // Nothing is left: not even the end of time fires it again.
        clock.advance(u64::MAX);
        settle(&clock, 2);
        assert!(rx.try_recv().is_err(), "{exec:?}");
        assert_eq!(t.drain(), Stop::NotPending);
        assert_eq!(t.stop(), Stop::NotPending);
        assert_eq!((t.fired(), t.shard(), t.is_pending()), (3, 0, false));
    }
}

#[test]
fn timer_detach() {
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 1);
    let (stopper, rx) = mpsc::channel();
    let count = Arc::new(AtomicU64::new(0));
    let n = Arc::clone(&count);
    // Detached periodic timer: no handle is left, but its callback's `&Timer` still stops it.
    let t = rt
        .timer(Exec::Direct, move |t, f| {
            let k = n.fetch_add(1, Ordering::SeqCst) + 1;
            let stopped = (k == 3).then(|| t.stop());
            let _ = stopper.send((f.deadline, stopped));
        })
        .unwrap();
    t.start_periodic(at(100), ns(100), Missed::Skip).unwrap();
    t.detach();
    for k in 1..=3 {
        clock.advance(100);
        assert_eq!(
            rx.recv_timeout(PATIENCE).unwrap(),
            (100 * k, (k == 3).then_some(Stop::Cancelled))
        );
    }
    clock.advance(1_000);
    settle(&clock, 1);
    assert!(rx.try_recv().is_err());
    assert_eq!(count.load(Ordering::SeqCst), 3);
    assert_eq!(rt.stats()[0].pending, 0);
    // Detaching a timer never armed changes nothing.
    rt.timer(Exec::Direct, |_, _| unreachable!())
        .unwrap()
        .detach();
    assert_eq!(rt.stats()[0].pending, 0);
    // A detached periodic timer fires until the runtime is dropped, which does not wait for it.
    let (ftx, frx) = mpsc::channel();
    let keeps = sending(&rt, 0, Exec::Deferred, &ftx);
    keeps
        .start_periodic(at(2_000), ns(100), Missed::Skip)
        .unwrap();
    keeps.detach();
    clock.advance(700);
    assert_eq!(frx.recv_timeout(PATIENCE).unwrap().deadline, 2_000);
    settle(&clock, 1);
    assert_eq!(rt.stats()[0].pending, 1);
    let late = rt.timer(Exec::Direct, |_, _| {}).unwrap();
    drop_bounded(rt);
    late.detach();
    clock.advance(10_000);
    assert!(frx.try_recv().is_err());
    assert_eq!(count.load(Ordering::SeqCst), 3);
}

#[test]
fn timer_clone_and_drop() {
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 1);
    let fired = Arc::new(AtomicU64::new(0));
    let count = Arc::clone(&fired);
    let t = rt
        .timer(Exec::Deferred, move |_, _| {
            count.fetch_add(1, Ordering::SeqCst);
        })
        .unwrap();
    t.start_at(at(100)).unwrap();
    // Clones dropped on many threads: whichever drop is last cancels the timer.
    let clones: Vec<Timer> = (0..8).map(|_| t.clone()).collect();
    drop(t);
    let threads: Vec<_> = clones
        .into_iter()
        .map(|c| {
            std::thread::spawn(move || {
                let again = c.clone();
                let pending = again.is_pending();
                drop(c);
                drop(again);
                pending
            })
        })
        .collect();
    eventually("the dropping threads finish", || {
        threads.iter().all(|t| t.is_finished())
    });
    for t in threads {
        assert!(t.join().unwrap(), "pending while a handle was alive");
    }
    assert_eq!(rt.stats()[0].pending, 0);
    clock.advance(100);
    settle(&clock, 1);
    assert_eq!(fired.load(Ordering::SeqCst), 0);

    // The last handle dropped from its own deferred callback stops a periodic timer.
    let slot: Arc<Mutex<Option<Timer>>> = Arc::default();
    let (tx, rx) = mpsc::channel();
    let (own, runs) = (Arc::clone(&slot), Arc::new(AtomicU64::new(0)));
    let ran = Arc::clone(&runs);
    let p = rt
        .timer(Exec::Deferred, move |_, _| {
            ran.fetch_add(1, Ordering::SeqCst);
            let last = own.lock().unwrap().take();
            drop(last);
            let _ = tx.send(());
        })
        .unwrap();
    p.start_periodic(at(200), ns(100), Missed::Skip).unwrap();
    *slot.lock().unwrap() = Some(p);
    clock.advance(100);
    rx.recv_timeout(PATIENCE).unwrap();
    clock.advance(1_000);
    settle(&clock, 1);
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert_eq!(rt.stats()[0].pending, 0);

    // Clones of a timer whose runtime is gone: refused, not pending, dropped quietly.
    let orphan = rt.timer(Exec::Direct, |_, _| {}).unwrap();
    orphan.start_at(at(u64::MAX)).unwrap();
    drop_bounded(rt);
    let c = orphan.clone();
    shut_down(c.start_after(Duration::ZERO));
    assert!(!c.is_pending());
    assert_eq!(c.stop(), Stop::NotPending);
    drop(c);
    drop(orphan);
}

#[test]
fn timer_exec_and_shard() {
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 3);
    let t = rt.timer_on(2, Exec::Deferred, |_, _| {}).unwrap();
    let d = rt.timer_on(0, Exec::Direct, |_, _| {}).unwrap();
    assert_eq!((t.exec(), t.shard()), (Exec::Deferred, 2));
    assert_eq!((d.exec(), d.shard()), (Exec::Direct, 0));
    // Refused moves and armings leave the shard as it was.
    no_such_shard(t.move_to(usize::MAX), usize::MAX, 3);
    no_such_shard(t.start_with(at(10), ns(0), Some(usize::MAX)), usize::MAX, 3);
    assert_eq!(t.shard(), 2);
    t.start_with(at(10), ns(0), Some(1)).unwrap();
    assert_eq!(t.shard(), 1);
    drop_bounded(rt);
    // After the runtime: the same mode and shard, and a move is refused without moving it.
    shut_down(t.move_to(0));
    assert_eq!((t.exec(), t.shard()), (Exec::Deferred, 1));
    assert_eq!((t.fired(), t.overruns()), (0, 0));
}

#[test]
fn fire_lateness() {
    let fire = |deadline, now| Fire {
        deadline,
        now,
        overruns: u64::MAX,
        shard: usize::MAX,
    };
    // Fired "before" its deadline (a clock set back): zero, never negative.
    assert_eq!(fire(u64::MAX, 0).lateness(), Duration::ZERO);
    assert_eq!(fire(u64::MAX, u64::MAX).lateness(), Duration::ZERO);
    assert_eq!(fire(0, 0).lateness(), Duration::ZERO);
    assert_eq!(fire(0, u64::MAX).lateness(), Duration::from_nanos(u64::MAX));
    assert_eq!(
        fire(1, u64::MAX).lateness(),
        Duration::from_nanos(u64::MAX - 1)
    );
}

// ----- Deadline, Tolerance ---------------------------------------------------------------------

#[test]
fn deadline_from_instant() {
    // On a manual clock an Instant is converted by its distance from now, saturating.
    let clock = ManualClock::new(1_000);
    let rt = manual(&clock, 1);
    let (tx, rx) = mpsc::channel();
    let past = sending(&rt, 0, Exec::Direct, &tx);
    let future = sending(&rt, 0, Exec::Direct, &tx);
    assert!(!future.start_at(far_future()).unwrap());
    // Long past: fires at once, for reading 0.
    assert!(!past.start_at(far_past()).unwrap());
    let f = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((f.deadline, f.now), (0, 1_000));
    assert_eq!(f.lateness(), ns(1_000));
    settle(&clock, 1);
    assert!(future.is_pending());
    assert_eq!(future.stop(), Stop::Cancelled);
    // On the monotonic clock, exactly: reading 0 as well.
    let real = Runtime::builder().shards(1).workers(1).build().unwrap();
    let t = sending(&real, 0, Exec::Deferred, &tx);
    assert!(!t.start_at(far_past()).unwrap());
    assert_eq!(rx.recv_timeout(PATIENCE).unwrap().deadline, 0);
}

#[test]
fn deadline_on_and_wall() {
    let epoch = SystemTime::UNIX_EPOCH;
    assert_eq!(
        Deadline::wall(epoch.checked_sub(Duration::from_secs(1)).unwrap()),
        Deadline::on(ClockId::Realtime, 0)
    );
    assert_eq!(Deadline::wall(epoch), Deadline::on(ClockId::Realtime, 0));
    assert_eq!(
        Deadline::wall(epoch.checked_add(Duration::from_secs(1 << 40)).unwrap()),
        Deadline::on(ClockId::Realtime, u64::MAX)
    );
    assert_ne!(
        Deadline::on(ClockId::Realtime, u64::MAX),
        Deadline::from_clock_ns(u64::MAX)
    );

    // A manual clock reads every base (all as 1_000 here).
    let clock = ManualClock::new(1_000);
    let rt = manual(&clock, 1);
    let (tx, rx) = mpsc::channel();
    let wall_end = sending(&rt, 0, Exec::Direct, &tx);
    let mono_end = sending(&rt, 0, Exec::Direct, &tx);
    let wall_zero = sending(&rt, 0, Exec::Direct, &tx);
    let boot_zero = sending(&rt, 0, Exec::Direct, &tx);
    assert!(!wall_end
        .start_at(Deadline::on(ClockId::Realtime, u64::MAX))
        .unwrap());
    assert!(!mono_end
        .start_at(Deadline::on(ClockId::Monotonic, u64::MAX))
        .unwrap());
    // Reading 0 of a base is long past: both fire at once, in their base's readings.
    wall_zero
        .start_at(Deadline::on(ClockId::Realtime, 0))
        .unwrap();
    boot_zero
        .start_at(Deadline::on(ClockId::Boottime, 0))
        .unwrap();
    for _ in 0..2 {
        let f = rx.recv_timeout(PATIENCE).unwrap();
        assert_eq!((f.deadline, f.now), (0, 1_000));
    }
    settle(&clock, 1);
    assert!(wall_end.is_pending() && mono_end.is_pending());
    // Setting the wall clock to the end of time fires the wall deadline at once; the
    // monotonic one waits.
    clock.set_base(ClockId::Realtime, u64::MAX);
    let f = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((f.deadline, f.now), (u64::MAX, u64::MAX));
    settle(&clock, 1);
    assert!(rx.try_recv().is_err());
    assert!(!wall_end.is_pending());
    assert!(mono_end.is_pending());
    // The Unix epoch, with the wall clock at the end of time: due at once.
    wall_zero.start_at(Deadline::wall(epoch)).unwrap();
    let f = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((f.deadline, f.now), (0, u64::MAX));
}

#[test]
fn tolerance_percent_and_absolute_as_configured_tolerances() {
    let widest_share = Tolerance::percent(u32::MAX);
    assert_eq!(widest_share, Tolerance::percent(100));
    assert_eq!(widest_share.ppm, MAX_TOLERANCE_PPM);
    assert_eq!(widest_share.for_interval(u64::MAX), u64::MAX);
    assert_eq!(widest_share.for_interval(0), 0);
    let widest = widest_share.with_absolute(Duration::MAX);
    assert_eq!((widest.absolute, widest.ppm), (u64::MAX, MAX_TOLERANCE_PPM));
    assert_eq!(Tolerance::absolute(Duration::MAX).for_interval(0), u64::MAX);

    // 100 % of the interval as the runtime's default: a timer due in 1 µs may wait 1 µs more.
    let clock = ManualClock::new(0);
    let rt = Runtime::builder()
        .clock(clock.clone())
        .shards(1)
        .workers(1)
        .tolerance(Tolerance::percent(u32::MAX))
        .build()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let t = sending(&rt, 0, Exec::Direct, &tx);
    t.start_after(ns(1_000)).unwrap();
    settle(&clock, 1);
    clock.advance(999);
    settle(&clock, 1);
    assert!(rx.try_recv().is_err(), "before its deadline");
    clock.advance(1_001);
    let f = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!(f.deadline, 1_000);
    assert!(f.lateness() <= ns(1_000), "{f:?}");

    // An absolute tolerance of `Duration::MAX`: the window reaches the end of time.
    let clock = ManualClock::new(0);
    let rt = Runtime::builder()
        .clock(clock.clone())
        .shards(1)
        .workers(1)
        .tolerance(Tolerance::absolute(Duration::MAX))
        .build()
        .unwrap();
    let t = sending(&rt, 0, Exec::Direct, &tx);
    t.start_after(ns(10)).unwrap();
    settle(&clock, 1);
    clock.advance(1 << 40);
    settle(&clock, 1);
    assert!(t.is_pending(), "its window ends at the end of time");
    assert!(rx.try_recv().is_err());
    // A set with that tolerance still never reaps before the deadline, and any call after it
    // queues the timer.
    let set = TimerSet::with_config(
        &rt,
        TimerSetConfig::default().with_tolerance(Some(Tolerance::absolute(Duration::MAX))),
    )
    .unwrap();
    let h = set.create(ns(10), Duration::ZERO, 7).unwrap();
    clock.advance(9);
    assert_eq!((set.refresh(), set.reap()), (0, None));
    clock.advance(1);
    assert_eq!(set.refresh(), 1);
    assert_eq!(set.reap(), Some((h, 7)));
    clock.set(u64::MAX);
    let f = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((f.deadline, f.now), (10, u64::MAX));
    settle(&clock, 1);
    assert!(rx.try_recv().is_err(), "fired once");
}

// ----- TimerSet --------------------------------------------------------------------------------

#[test]
fn timer_set_config_with_missed_burst_and_delay_at_the_end_of_time() {
    for missed in [Missed::Burst, Missed::Delay] {
        let clock = ManualClock::new(0);
        let rt = manual(&clock, 1);
        let set =
            TimerSet::with_config(&rt, TimerSetConfig::default().with_missed(missed)).unwrap();
        let h = set.create(ns(1), ns(1), 9).unwrap();
        clock.set(u64::MAX);
        let r = set.reap_info().unwrap();
        assert_eq!((r.handle, r.label, r.deadline), (h, 9, 1), "{missed:?}");
        assert_eq!(r.overruns, u64::MAX - 1, "{missed:?}");
        if missed == Missed::Burst {
            // The next period (2) is long due: queued again at once, delivered by the next reap.
            assert!(r.restarted);
            assert!(set.is_queued(h).unwrap());
            let r = set.reap_info().unwrap();
            assert_eq!(
                (r.deadline, r.overruns, r.restarted),
                (2, u64::MAX - 2, true)
            );
            // Switched to Delay, its next period (now + 1) is past the end of time: the last.
            set.set_missed(h, Missed::Delay).unwrap();
            let r = set.reap_info().unwrap();
            assert_eq!(
                (r.deadline, r.overruns, r.restarted),
                (3, u64::MAX - 3, false)
            );
        } else {
            assert!(!r.restarted, "now + interval is past the end of time");
        }
        assert!(matches!(set.get(h), Err(Error::InvalidHandle)));
        assert_eq!(set.reap_info(), None);
        assert!(set.is_empty());
        set.check_invariants().unwrap();
    }
}

#[test]
fn timer_set_now_ns() {
    let clock = ManualClock::new(1_000);
    let rt = manual(&clock, 1);
    let set = TimerSet::new(&rt).unwrap();
    assert_eq!(set.now_ns(), 1_000);
    // The runtime's clock, which never reads below an earlier reading.
    clock.set(10);
    assert_eq!((set.now_ns(), rt.now_ns()), (1_000, 1_000));
    clock.advance(u64::MAX);
    assert_eq!(set.now_ns(), u64::MAX);
    // At the end of time no value fits.
    assert!(matches!(
        set.create(ns(1), Duration::ZERO, 1),
        Err(Error::ValueOutOfRange)
    ));

    // On a wall-clock runtime the set counts on the monotonic base: setting the wall clock,
    // even to either end of its range, does not move it.
    let wall = ManualClock::on_base(ClockId::Realtime, 5_000);
    let rt = manual(&wall, 1);
    let set = TimerSet::new(&rt).unwrap();
    assert_eq!(set.now_ns(), 5_000);
    wall.set(0);
    assert_eq!((rt.now_ns(), set.now_ns()), (0, 5_000));
    wall.set(u64::MAX);
    assert_eq!((rt.now_ns(), set.now_ns()), (u64::MAX, 5_000));
}

#[test]
fn timer_set_fd_as_fd_and_as_raw_fd() {
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 1);
    let set = TimerSet::new(&rt).unwrap();
    assert!(!readable(set.fd(), 0));
    set.create(ns(1), Duration::ZERO, 1).unwrap();
    clock.advance(u64::MAX);
    assert_eq!(set.refresh(), 1);
    assert!(readable(set.fd(), 0));
    assert!(readable(set.as_fd(), 0));
    let raw = set.fd().as_raw_fd();
    assert_eq!(set.as_raw_fd(), raw);
    // The runtime goes with a timer queued: the set holds nothing, the descriptor is not
    // readable, and it stays the set's own.
    drop_bounded(rt);
    assert!(!readable(set.fd(), 0));
    assert_eq!((set.as_raw_fd(), set.as_fd().as_raw_fd()), (raw, raw));
    assert_eq!(set.refresh(), 0);
}

// ----- ManualClock -----------------------------------------------------------------------------

#[test]
fn manual_clock_advance_and_its_clock_methods() {
    let c = ManualClock::new(0);
    assert!(c.simulated());
    assert_eq!(c.base(), Some(ClockId::Monotonic));
    let w = c.waiter().unwrap();
    assert_eq!(w.wait(Some(0)).unwrap(), Wake::Deadline);
    // Advancing saturates at the end of time.
    c.advance(u64::MAX);
    assert_eq!(c.now(), u64::MAX);
    c.advance(u64::MAX);
    assert_eq!(c.now(), u64::MAX);
    assert_eq!(c.base_now(ClockId::Boottime), Some(u64::MAX));
    assert_eq!(w.wait(Some(u64::MAX)).unwrap(), Wake::Deadline);
    // Two wakes before a wait end one wait, early.
    w.wake();
    w.wake();
    assert_eq!(w.wait(None).unwrap(), Wake::Early);
    assert_eq!(w.wait(Some(0)).unwrap(), Wake::Deadline);
    // Set back to 0: counted, and the next wait reports it.
    let sets = c.sets();
    c.set(0);
    assert_eq!((c.now(), c.sets()), (0, sets + 1));
    assert_eq!(w.wait(Some(u64::MAX)).unwrap(), Wake::ClockSet);
    // Instants outside the range saturate.
    assert_eq!(c.ns_at(far_past()), 0);
    assert_eq!(c.ns_at(far_future()), u64::MAX);
    // A waiter on another base at the ends of that base's range.
    c.set_base(ClockId::Realtime, u64::MAX);
    let wr = c.waiter_on(ClockId::Realtime).unwrap().unwrap();
    assert_eq!(wr.wait(Some(u64::MAX)).unwrap(), Wake::Deadline);
    assert_eq!(wr.wait(Some(0)).unwrap(), Wake::Deadline);
    // Unmatched `busy(false)` does not wrap the count of busy work.
    let quiet = ManualClock::new(0);
    quiet.busy(false);
    assert!(quiet.idle());
    quiet.busy(true);
    assert!(!quiet.idle());
    quiet.busy(false);
    quiet.busy(false);
    assert!(quiet.idle());
    quiet.busy(true);
    assert!(!quiet.idle(), "the count did not wrap");
}

#[test]
fn manual_clock_on_base_set_base_and_base_now() {
    let c = ManualClock::on_base(ClockId::Realtime, u64::MAX);
    assert_eq!(c.base(), Some(ClockId::Realtime));
    assert_eq!(c.now(), u64::MAX);
    for base in [ClockId::Monotonic, ClockId::Boottime, ClockId::Realtime] {
        assert_eq!(c.base_now(base), Some(u64::MAX), "{base:?}");
    }
    // Another base moves alone; this clock's own base is `set`.
    c.set_base(ClockId::Monotonic, 0);
    assert_eq!(c.base_now(ClockId::Monotonic), Some(0));
    assert_eq!(c.now(), u64::MAX);
    c.set_base(ClockId::Realtime, 5);
    assert_eq!(c.now(), 5);
    assert_eq!(c.base_now(ClockId::Realtime), Some(5));
    assert_eq!(c.base_now(ClockId::Monotonic), Some(0), "kept its reading");
    assert_eq!(
        c.base_now(ClockId::Boottime),
        Some(u64::MAX),
        "kept its reading"
    );
    // Advancing moves every base, saturating.
    c.advance(10);
    assert_eq!(c.base_now(ClockId::Monotonic), Some(10));
    assert_eq!(c.base_now(ClockId::Boottime), Some(u64::MAX));
    assert_eq!(c.now(), 15);
    // Each base set is a set every waiter hears.
    let w = c.waiter().unwrap();
    c.set_base(ClockId::Boottime, 0);
    assert_eq!(w.wait(Some(u64::MAX)).unwrap(), Wake::ClockSet);
}

#[test]
fn manual_clock_set_auto_advance_jumps_idle_and_wait_idle() {
    // A clock with no waiters is idle, and waiting for none returns at once.
    let lone = ManualClock::new(0);
    assert!(lone.idle());
    settle(&lone, 0);
    lone.set_auto_advance(true);
    assert_eq!(
        (lone.now(), lone.jumps()),
        (0, 0),
        "nothing asked for a wake-up"
    );

    // Auto-advance with one timer at the end of time: one jump there, then nothing to jump to.
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 1);
    let (tx, rx) = mpsc::channel();
    let t = sending(&rt, 0, Exec::Deferred, &tx);
    t.start_at(at(u64::MAX)).unwrap();
    settle(&clock, 1);
    assert_eq!(clock.jumps(), 0);
    clock.set_auto_advance(true);
    let f = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((f.deadline, f.now), (u64::MAX, u64::MAX));
    settle(&clock, 1);
    assert!(clock.idle());
    assert_eq!((clock.now(), clock.jumps()), (u64::MAX, 1));
    // Off again, and set back: the runtime's time stays at the end of time (clamped), so a
    // deadline of 10 is long past and fires at once; the clock itself jumps no more.
    clock.set_auto_advance(false);
    clock.set(0);
    t.start_at(at(10)).unwrap();
    let f = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((f.deadline, f.now), (10, u64::MAX));
    settle(&clock, 1);
    assert_eq!((clock.now(), clock.jumps()), (0, 1));
    assert!(!t.is_pending());
}

// ----- SystemClock, ClockId --------------------------------------------------------------------

#[test]
fn system_clock_and_clock_id() {
    let all = [ClockId::Monotonic, ClockId::Boottime, ClockId::Realtime];
    for id in all {
        let c = SystemClock::new(id);
        assert_eq!((c.id(), c.base()), (id, Some(id)));
        assert!(!c.simulated());
        assert!(id.read().is_ok());
        for other in all {
            assert!(c.base_now(other).is_some(), "{id:?} reads {other:?}");
            assert!(c.waiter_on(other).unwrap().is_ok());
        }
        assert!(c.set_watcher().unwrap().is_some());
        assert_eq!(c.ns_at(far_past()), 0, "{id:?}");
        assert_eq!(c.ns_at(far_future()), u64::MAX, "{id:?}");
        // Reading 0 is long past: sleeping until it returns at once.
        id.sleep_until(0).unwrap();
        let w: Arc<dyn Waiter> = Arc::from(c.waiter().unwrap());
        assert_eq!(w.wait(Some(0)).unwrap(), Wake::Deadline, "{id:?}");
        // The end of time reaches the kernel as a valid absolute timeout: only a wake ends it.
        let (tx, rx) = mpsc::channel();
        let sleeper = Arc::clone(&w);
        std::thread::spawn(move || {
            let _ = tx.send(sleeper.wait(Some(u64::MAX)).map_err(|e| e.to_string()));
        });
        // Let the wait start first, so the kernel sees the timeout (not asserted: a wake that
        // comes earlier is reported the same way).
        std::thread::sleep(Duration::from_millis(20));
        let until = Instant::now() + PATIENCE;
        let woke = loop {
            w.wake();
            match rx.recv_timeout(Duration::from_millis(10)) {
                Ok(r) => break r,
                Err(_) => assert!(Instant::now() < until, "{id:?}: the wait never ended"),
            }
        };
        assert_eq!(woke, Ok(Wake::Early), "{id:?}");
    }
}

// ----- Lead, Plan ------------------------------------------------------------------------------

#[test]
fn lead_ns_aim_and_plan_wake_for() {
    let big = Lead::ZERO.after(u64::MAX, Margin::Inside);
    assert_eq!((Lead::ZERO.ns(), big.ns()), (0, MAX_LEAD));
    assert_eq!(Lead::ZERO.after(u64::MAX, Margin::Lean), big);
    // An inverted window (deadline after its end): the aim never passes the end.
    assert_eq!(big.aim_for(u64::MAX, 0), 0);
    assert_eq!(Lead::ZERO.aim_for(10, 5), 5);
    assert_eq!(big.aim_for(0, 0), 0);
    // A wheel whose only window is the end of time, seen from either end.
    let mut end = Wheel::new();
    end.start_with(u64::MAX, u64::MAX, ()).unwrap();
    assert_eq!(big.aim(&end, 0), Some(u64::MAX));
    assert_eq!(big.aim(&end, u64::MAX), Some(u64::MAX));
    // The widest window not yet due (one at the wheel's own time is due now, and aimed at
    // now): the lead before its end; once that has passed, the end itself.
    let mut wide = Wheel::new();
    wide.start_with(1, u64::MAX, ()).unwrap();
    assert_eq!(big.aim(&wide, 0), Some(u64::MAX - MAX_LEAD));
    assert_eq!(big.aim(&wide, u64::MAX), Some(u64::MAX));
    assert_eq!(big.aim(&Wheel::<()>::new(), u64::MAX), None);
    // Plans: an aim at or after the planned wake-up does not wake; an earlier one does, once.
    let mut plan = Plan::Asleep(Some(0));
    assert!(!plan.wake_for(big, u64::MAX, u64::MAX));
    assert_eq!(plan, Plan::Asleep(Some(0)));
    let mut plan = Plan::Asleep(Some(u64::MAX));
    assert!(plan.wake_for(big, 0, 0));
    assert_eq!(plan, Plan::Awake);
    assert!(!plan.wake_for(big, 0, 0));
    let mut plan = Plan::Asleep(None);
    assert!(plan.wake_for(Lead::ZERO, u64::MAX, 0));
    assert_eq!(plan, Plan::Awake);
}

// ----- Error -----------------------------------------------------------------------------------

#[test]
fn error_errno_display_source_and_from() {
    let cases: Vec<(Error, i32, bool)> = vec![
        (Error::Wheel(callwheel::Error::NoMemory), libc::ENOMEM, true),
        (
            Error::from(callwheel::Error::ZeroPeriod),
            libc::ENOMEM,
            true,
        ),
        (
            Error::NoSuchShard {
                shard: usize::MAX,
                shards: 0,
            },
            libc::EINVAL,
            false,
        ),
        (Error::Config { reason: "" }, libc::EINVAL, false),
        (Error::Io(io::Error::other("no errno")), libc::EIO, true),
        (
            Error::from(io::Error::from_raw_os_error(libc::EPERM)),
            libc::EPERM,
            true,
        ),
        (Error::ShutDown, libc::ESHUTDOWN, false),
        (Error::InvalidHandle, libc::EINVAL, false),
        (Error::ZeroValue, libc::EINVAL, false),
        (
            Error::QuotaExceeded { quota: usize::MAX },
            libc::EAGAIN,
            false,
        ),
        (Error::ValueOutOfRange, libc::EINVAL, false),
        (Error::IntervalOutOfRange, libc::EINVAL, false),
        (Error::HandlesExhausted, libc::EAGAIN, false),
        (Error::NoClockBase(ClockId::Boottime), libc::EINVAL, false),
    ];
    for (e, errno, has_source) in &cases {
        assert_eq!(e.errno(), *errno, "{e:?}");
        assert!(!e.to_string().is_empty(), "{e:?}");
        assert_eq!(std::error::Error::source(e).is_some(), *has_source, "{e:?}");
    }
    assert!(cases[2].0.to_string().contains(&usize::MAX.to_string()));
    assert!(cases[9].0.to_string().contains(&usize::MAX.to_string()));
}
