//! The runtime checked against what its documentation promises (the rustdoc of the public
//! items and docs/runtime.md), aimed at promises the other suites leave unchecked: windows on a
//! clock stepped one small move at a time, what `start` returns, the Burst tolerance cap, the
//! missed-period policies as a callback sees them, `drain` against a callback that re-arms,
//! stop/fire accounting against the real drivers, deferred callbacks queued at shutdown, clock
//! bases seen from the driver threads (periodic wall timers, boottime, a wall-clock runtime's
//! firings), auto-advance with deferred re-arming, and a timer set's tolerance and ordering.
//!
//! Time is a `ManualClock` wherever a test can; the one test on the real clock asserts only
//! an ordering (every arming accounted for). Every wait is bounded.
#![cfg(not(miri))]

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use callwheel_rt::{
    Clock, ClockId, Deadline, Exec, Fire, ManualClock, Missed, Runtime, Stop, Timer, TimerSet,
    TimerSetConfig, Tolerance,
};
use common::{readable, settle, Lcg};

/// A deadline in the runtime clock's own nanoseconds.
fn at(ns: u64) -> Deadline {
    Deadline::from_clock_ns(ns)
}

/// A duration of `n` nanoseconds.
fn ns(n: u64) -> Duration {
    Duration::from_nanos(n)
}

/// Bound on every wait for another thread (a liveness bound, never a latency assertion).
const PATIENCE: Duration = Duration::from_secs(20);

/// A runtime on `clock` with `shards` shards, one worker and the default tolerance `tolerance`.
fn manual(clock: &ManualClock, shards: usize, tolerance: Tolerance) -> Runtime {
    Runtime::builder()
        .clock(clock.clone())
        .shards(shards)
        .workers(1)
        .tolerance(tolerance)
        .build()
        .unwrap()
}

/// Polls `done` until it holds, failing after [`PATIENCE`].
fn eventually(what: &str, done: impl Fn() -> bool) {
    let until = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < until, "never: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A timer on `shard` that sends each firing, tagged with `tag`, to `tx`.
fn sending(
    rt: &Runtime,
    shard: usize,
    exec: Exec,
    tag: u64,
    tx: &mpsc::Sender<(u64, Fire)>,
) -> Timer {
    let tx = Mutex::new(tx.clone());
    rt.timer_on(shard, exec, move |_, f| {
        let _ = tx.lock().unwrap().send((tag, *f));
    })
    .unwrap()
}

/// Everything received on `rx` so far.
fn drain_channel<T>(rx: &mpsc::Receiver<T>) -> Vec<T> {
    std::iter::from_fn(|| rx.try_recv().ok()).collect()
}

// ----- windows ---------------------------------------------------------------------------------

// `Timer::start_with`: "Arms the timer with window `[deadline, deadline + tolerance]`", and the
// crate docs: a driver "wakes once per coalesced window — at the earliest window end". On a
// manual clock moved in small steps that never jump over an unfired window's end, every
// firing's reading lies inside its window, and once the clock reaches a window's end its timer
// has fired.
#[test]
fn tolerant_timers_fire_inside_their_windows_on_a_stepped_clock() {
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 1, Tolerance::EXACT);
    let (tx, rx) = mpsc::channel();
    let mut rng = Lcg(7);
    let mut windows = BTreeMap::new();
    let mut timers = Vec::new();
    for tag in 0..60u64 {
        let deadline = 1_000 + rng.below(200_000);
        let tolerance = match tag % 3 {
            0 => 0,
            1 => rng.below(2_000),
            _ => rng.below(40_000),
        };
        let t = sending(&rt, 0, Exec::Direct, tag, &tx);
        t.start_with(at(deadline), ns(tolerance), None).unwrap();
        windows.insert(tag, (deadline, deadline + tolerance));
        timers.push(t);
    }
    settle(&clock, 1);
    let mut fired = BTreeMap::new();
    while fired.len() < windows.len() {
        let now = clock.now();
        // The next step: a random move, but never past the end of a window not yet fired.
        let earliest_end = windows
            .iter()
            .filter(|(tag, _)| !fired.contains_key(*tag))
            .map(|(_, &(_, end))| end)
            .min()
            .unwrap();
        let target = (now + 1 + rng.below(3_000)).min(earliest_end).max(now + 1);
        clock.advance(target - now);
        settle(&clock, 1);
        for (tag, f) in drain_channel(&rx) {
            assert!(fired.insert(tag, f).is_none(), "timer {tag} fired twice");
        }
        let now = clock.now();
        for (tag, &(deadline, end)) in &windows {
            match fired.get(tag) {
                Some(f) => {
                    assert_eq!(f.deadline, deadline, "timer {tag}");
                    assert!(
                        f.now >= deadline && f.now <= end,
                        "timer {tag} fired at {} outside [{deadline}, {end}]",
                        f.now
                    );
                }
                None => assert!(
                    end > now,
                    "timer {tag}: the clock reached its window's end {end} (now {now}) unfired"
                ),
            }
        }
        assert!(now < 1_000_000, "the timers never all fired");
    }
}

// `Config::tolerance` (an absolute part of any size) and `Tolerance::absolute` ("saturating at
// `u64::MAX` nanoseconds"): the window's end overflows, but the deadline is still the earliest
// instant, and the end of time still fires it.
#[test]
fn a_window_whose_end_overflows_still_never_fires_early() {
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 1, Tolerance::absolute(Duration::MAX));
    let (tx, rx) = mpsc::channel();
    let by_default = sending(&rt, 0, Exec::Direct, 1, &tx);
    let explicit = sending(&rt, 0, Exec::Direct, 2, &tx);
    by_default.start_after(ns(1_000)).unwrap();
    explicit.start_with(at(2_000), Duration::MAX, None).unwrap();
    clock.advance(999);
    settle(&clock, 1);
    assert!(drain_channel(&rx).is_empty(), "fired before its deadline");
    clock.set(u64::MAX);
    let mut got: Vec<u64> = (0..2)
        .map(|_| rx.recv_timeout(PATIENCE).unwrap().0)
        .collect();
    got.sort_unstable();
    assert_eq!(got, [1, 2]);
    settle(&clock, 1);
    assert!(drain_channel(&rx).is_empty(), "fired twice");
}

// `Timer::start_periodic`: "with the runtime's default tolerance for the period (for
// [`Missed::Burst`], capped below the period: a wider window would replay periods at once)",
// and `start_periodic_with` caps an explicit one the same way. A full period of tolerance
// becomes `period - 1`: the driver's wake-up, at the window's end, comes one nanosecond before
// the next period.
#[test]
fn a_burst_timers_tolerance_is_capped_below_its_period() {
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 1, Tolerance::percent(100));
    let (tx, rx) = mpsc::channel();
    let by_default = sending(&rt, 0, Exec::Direct, 1, &tx);
    let explicit = sending(&rt, 0, Exec::Direct, 2, &tx);
    by_default
        .start_periodic(at(1_000), ns(1_000), Missed::Burst)
        .unwrap();
    explicit
        .start_periodic_with(at(1_000), ns(1_000), ns(50_000), Missed::Burst, None)
        .unwrap();
    clock.advance(999);
    settle(&clock, 1);
    assert!(drain_channel(&rx).is_empty(), "fired before its deadline");
    clock.advance(999); // 1_998: inside both windows, before their (capped) ends
    settle(&clock, 1);
    clock.advance(1); // 1_999: the capped windows' end
    settle(&clock, 1);
    let mut fires = drain_channel(&rx);
    fires.sort_by_key(|(tag, _)| *tag);
    let seen: Vec<(u64, u64)> = fires.iter().map(|(t, f)| (*t, f.deadline)).collect();
    assert_eq!(
        seen,
        [(1, 1_000), (2, 1_000)],
        "both fired once for 1_000 by 1_999"
    );
    for (_, f) in &fires {
        assert!(f.now <= 1_999 && f.overruns == 0, "{f:?}");
    }
}

// `Timer::start_at` ("A deadline already past fires at once") and `Fire::lateness` (`now -
// deadline`): nothing has to move the clock.
#[test]
fn a_deadline_already_past_fires_at_once() {
    let clock = ManualClock::new(10_000);
    let rt = manual(&clock, 1, Tolerance::percent(50));
    let (tx, rx) = mpsc::channel();
    let t = sending(&rt, 0, Exec::Deferred, 1, &tx);
    assert!(!t.start_at(at(5)).unwrap());
    let (_, f) = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((f.deadline, f.now), (5, 10_000));
    assert_eq!(f.lateness(), ns(9_995));
    assert_eq!(clock.now(), 10_000, "the clock was not moved");
    eventually("the firing is counted", || t.fired() == 1);
    assert!(!t.is_pending());
}

// ----- start and stop --------------------------------------------------------------------------

// `Timer` ("every `start` returns whether the timer was pending"), `Timer::move_to` ("Returns
// whether it was pending"), `Stop::Cancelled` / `Stop::NotPending`, and `Timer::start_periodic`
// (a periodic timer stays pending after it fires).
#[test]
fn every_start_reports_whether_the_timer_was_pending() {
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 2, Tolerance::EXACT);
    let (tx, rx) = mpsc::channel();
    let t = sending(&rt, 0, Exec::Direct, 1, &tx);
    assert!(!t.is_pending());
    assert!(!t.start_at(at(100)).unwrap(), "fresh: not pending");
    assert!(t.start_after(ns(200)).unwrap(), "pending: reset");
    assert!(
        t.start_with(at(300), ns(5), Some(1)).unwrap(),
        "moved while pending"
    );
    assert_eq!(t.shard(), 1);
    assert!(t.move_to(0).unwrap());
    assert!(t.start_periodic(at(400), ns(100), Missed::Skip).unwrap());
    assert!(t
        .start_periodic_with(at(400), ns(100), ns(0), Missed::Delay, None)
        .unwrap());
    clock.advance(400);
    assert_eq!(rx.recv_timeout(PATIENCE).unwrap().1.deadline, 400);
    settle(&clock, 2);
    assert!(
        t.is_pending(),
        "a periodic timer stays pending after firing"
    );
    assert!(t.start_at(at(600)).unwrap(), "the next period was pending");
    assert_eq!(t.stop(), Stop::Cancelled);
    assert_eq!(t.stop(), Stop::NotPending);
    assert!(!t.move_to(1).unwrap(), "moving an idle timer: not pending");
    assert!(!t.start_at(at(700)).unwrap(), "stopped: not pending");
    clock.advance(300);
    assert_eq!(rx.recv_timeout(PATIENCE).unwrap().1.shard, 1);
    settle(&clock, 2);
    assert!(!t.start_at(at(800)).unwrap(), "fired one-shot: not pending");
    assert_eq!(t.stop(), Stop::Cancelled);
    assert!(drain_channel(&rx).is_empty());
}

// `Stop::Cancelled`: "The timer was pending and will not fire for that arming";
// `Stop::NotPending`: "neither pending nor running". On the real clock, with `stop` racing the
// driver: every arming either was cancelled or fired exactly once, and a `NotPending` answer
// means its callback has already finished.
#[test]
fn every_arming_is_either_cancelled_or_fired_once() {
    for exec in [Exec::Direct, Exec::Deferred] {
        let rt = Runtime::builder().shards(1).workers(1).build().unwrap();
        let ran = Arc::new(AtomicU64::new(0));
        let count = Arc::clone(&ran);
        let t = rt
            .timer(exec, move |_, _| {
                count.fetch_add(1, Ordering::SeqCst);
            })
            .unwrap();
        let mut rng = Lcg(11);
        let (mut cancelled, mut fired) = (0u64, 0u64);
        for _ in 0..300 {
            t.start_after(Duration::from_micros(rng.below(40))).unwrap();
            let spin = Duration::from_micros(rng.below(40));
            let from = Instant::now();
            while from.elapsed() < spin {
                std::hint::spin_loop();
            }
            match t.stop() {
                Stop::Cancelled => cancelled += 1,
                Stop::Running => fired += 1,
                Stop::NotPending => {
                    fired += 1;
                    assert_eq!(
                        ran.load(Ordering::SeqCst),
                        fired,
                        "{exec:?}: NotPending before its callback finished"
                    );
                }
            }
            assert_ne!(t.drain(), Stop::Cancelled, "{exec:?}: nothing was armed");
            assert_eq!(ran.load(Ordering::SeqCst), fired, "{exec:?}");
        }
        assert_eq!(cancelled + fired, 300);
        assert_eq!(t.fired(), fired, "{exec:?}: Timer::fired");
    }
}

// `Timer::drain`: "Cancels the pending arming and waits until no callback of this timer runs on
// another thread. ... A callback that re-arms the timer while `drain` waits has that arming
// cancelled too." The drain comes from another thread while the deferred callback runs; the
// callback re-arms after being released.
#[test]
fn drain_cancels_an_arming_made_by_the_callback_it_waits_for() {
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 1, Tolerance::EXACT);
    let (started_tx, started) = mpsc::channel();
    let (release, release_rx) = mpsc::channel::<()>();
    let (started_tx, release_rx) = (Mutex::new(started_tx), Mutex::new(release_rx));
    let runs = Arc::new(AtomicU64::new(0));
    let count = Arc::clone(&runs);
    let t = rt
        .timer(Exec::Deferred, move |t, f| {
            count.fetch_add(1, Ordering::SeqCst);
            if f.deadline == 100 {
                let _ = started_tx.lock().unwrap().send(());
                let _ = release_rx.lock().unwrap().recv_timeout(PATIENCE);
                let _ = t.start_at(at(500));
            }
        })
        .unwrap();
    t.start_at(at(100)).unwrap();
    clock.advance(100);
    started.recv_timeout(PATIENCE).unwrap();
    // Another thread's stop finds the callback running.
    assert_eq!(t.stop(), Stop::Running);
    let drainer = {
        let t = t.clone();
        std::thread::spawn(move || t.drain())
    };
    std::thread::sleep(Duration::from_millis(20));
    release.send(()).unwrap();
    eventually("drain returns", || drainer.is_finished());
    let stop = drainer.join().unwrap();
    assert!(
        matches!(stop, Stop::Running | Stop::Cancelled),
        "drain found {stop:?}"
    );
    assert!(
        !t.is_pending(),
        "the callback's re-arming survived the drain"
    );
    clock.advance(1_000);
    settle(&clock, 1);
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the re-arming fired");
}

// ----- periodic timers -------------------------------------------------------------------------

// `Timer::start_periodic`: "then every `period` after the previous deadline (no drift) ...
// `missed` decides what happens to periods missed by a late wake-up; each firing's
// [`Fire::overruns`] counts them"; `Missed` (Burst: "Fire once for every period"; Delay:
// "Restart the period from the caller's time of the late firing"; Skip: "the next deadline is
// the first point of the grid after now"); `Timer::overruns`: "The overruns of the latest
// firing".
#[test]
fn periodic_firings_follow_their_grid_and_missed_policy() {
    // (policy, deadlines and overruns fired by a late wake-up at 450, the next deadline)
    let cases = [
        (Missed::Burst, vec![(200, 2), (300, 1), (400, 0)], 500),
        (Missed::Delay, vec![(200, 2)], 550),
        (Missed::Skip, vec![(200, 2)], 500),
    ];
    for (missed, late, next) in cases {
        let clock = ManualClock::new(0);
        let rt = manual(&clock, 1, Tolerance::EXACT);
        let (tx, rx) = mpsc::channel();
        let t = sending(&rt, 0, Exec::Direct, 1, &tx);
        t.start_periodic(at(100), ns(100), missed).unwrap();
        // On time, then a little late: the grid does not drift with the lateness.
        clock.advance(100);
        settle(&clock, 1);
        clock.advance(37); // 137
        settle(&clock, 1);
        let on_time: Vec<_> = drain_channel(&rx)
            .into_iter()
            .map(|(_, f)| (f.deadline, f.overruns))
            .collect();
        assert_eq!(on_time, [(100, 0)], "{missed:?}");
        // 450: the periods at 200, 300 and 400 are due.
        clock.advance(313);
        settle(&clock, 1);
        let fires: Vec<_> = drain_channel(&rx).into_iter().map(|(_, f)| f).collect();
        let got: Vec<_> = fires.iter().map(|f| (f.deadline, f.overruns)).collect();
        assert_eq!(got, late, "{missed:?}");
        assert!(fires.iter().all(|f| f.now == 450), "{missed:?}");
        assert_eq!(t.overruns(), late.last().unwrap().1, "{missed:?}");
        assert_eq!(t.fired(), 1 + late.len() as u64, "{missed:?}");
        clock.advance(next - 451);
        settle(&clock, 1);
        assert!(drain_channel(&rx).is_empty(), "{missed:?}: early");
        clock.advance(1);
        let (_, f) = rx.recv_timeout(PATIENCE).unwrap();
        assert_eq!((f.deadline, f.overruns), (next, 0), "{missed:?}");
        assert_eq!(t.overruns(), 0, "{missed:?}");
    }
}

// ----- clock bases -----------------------------------------------------------------------------

const WALL: u64 = 1_700_000_000_000_000_000;

// docs/runtime.md: "a wall deadline the clock was set past fires at once", and the tests show
// "a periodic wall timer keeps its wall deadlines"; `Timer::start_periodic`: "every `period`
// after the previous deadline"; `Missed::Skip`: "the next deadline is the first point of the
// grid after now"; `Fire::deadline`: "in nanoseconds of the clock it was armed on". A periodic
// wall timer whose wall clock is set forward past several periods: its next firings stand on
// its wall grid, after the wall clock's new reading.
#[test]
fn a_periodic_wall_timer_set_forward_rejoins_its_wall_grid() {
    // (policy, firings at the set, next firing's deadline after it)
    let cases = [
        (Missed::Skip, vec![(WALL + 2_000, 8)], WALL + 11_000),
        (Missed::Delay, vec![(WALL + 2_000, 8)], WALL + 11_500),
        (
            Missed::Burst,
            (2..=10).map(|k| (WALL + k * 1_000, 10 - k)).collect(),
            WALL + 11_000,
        ),
    ];
    for (missed, at_set, next) in cases {
        let clock = ManualClock::new(1_000_000);
        clock.set_base(ClockId::Realtime, WALL);
        let rt = manual(&clock, 1, Tolerance::EXACT);
        let (tx, rx) = mpsc::channel();
        let t = sending(&rt, 0, Exec::Direct, 1, &tx);
        t.start_periodic_with(
            Deadline::on(ClockId::Realtime, WALL + 1_000),
            ns(1_000),
            ns(0),
            missed,
            None,
        )
        .unwrap();
        clock.advance(1_000);
        let (_, f) = rx.recv_timeout(PATIENCE).unwrap();
        assert_eq!((f.deadline, f.now), (WALL + 1_000, WALL + 1_000));
        settle(&clock, 1);
        // The wall clock jumps from WALL + 1_000 to WALL + 10_500: the periods at WALL + 2_000
        // .. WALL + 10_000 have passed.
        clock.set_base(ClockId::Realtime, WALL + 10_500);
        eventually("the wall timer fires at the set", || t.fired() >= 2);
        settle(&clock, 1);
        clock.advance(next - (WALL + 10_500) - 1);
        settle(&clock, 1);
        clock.advance(1);
        let until = Instant::now() + PATIENCE;
        let mut fires = Vec::new();
        while fires.len() < at_set.len() + 1 && Instant::now() < until {
            if let Ok((_, f)) = rx.recv_timeout(Duration::from_millis(200)) {
                fires.push(f);
            } else {
                break;
            }
        }
        let got: Vec<_> = fires.iter().map(|f| (f.deadline, f.overruns)).collect();
        let mut want = at_set.clone();
        want.push((next, 0));
        assert_eq!(got, want, "{missed:?}");
    }
}

// `Deadline::on`: "The reading `ns` of kernel clock `base` ... re-evaluated whenever a clock is
// set"; the crate docs: clock bases are "re-evaluated when a clock is set"; `Fire`: "Its
// instants are readings of the clock the timer was armed on". On a monotonic manual runtime,
// with its drivers running: a boottime deadline fires by the boottime clock, at once when
// boottime is set past it (a resume from suspend), later when set back, and its firing speaks
// of boottime.
#[test]
fn a_boottime_deadline_follows_its_own_clock_on_a_monotonic_runtime() {
    let clock = ManualClock::new(1_000);
    clock.set_base(ClockId::Boottime, 50_000);
    let rt = manual(&clock, 1, Tolerance::EXACT);
    let (tx, rx) = mpsc::channel();
    let boot = sending(&rt, 0, Exec::Direct, 1, &tx);
    let mono = sending(&rt, 0, Exec::Direct, 2, &tx);
    boot.start_at(Deadline::on(ClockId::Boottime, 50_300))
        .unwrap();
    mono.start_at(at(1_400)).unwrap();
    clock.advance(299);
    settle(&clock, 1);
    assert!(drain_channel(&rx).is_empty());
    clock.advance(1);
    let (tag, f) = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((tag, f.deadline, f.now), (1, 50_300, 50_300));
    // A resume: boottime jumps 1_000_000 ahead, past the next boottime deadline.
    boot.start_at(Deadline::on(ClockId::Boottime, 60_000))
        .unwrap();
    clock.set_base(ClockId::Boottime, 1_050_300);
    let (tag, f) = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((tag, f.deadline, f.now), (1, 60_000, 1_050_300));
    assert_eq!(clock.now(), 1_300, "the monotonic clock did not move");
    // Set back: a boottime deadline 500 ahead of the old reading is now 10_500 away.
    boot.start_at(Deadline::on(ClockId::Boottime, 1_050_800))
        .unwrap();
    clock.set_base(ClockId::Boottime, 1_040_300);
    clock.advance(100); // 1_400: the monotonic timer, unmoved by either set
    let (tag, f) = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((tag, f.deadline, f.now), (2, 1_400, 1_400));
    clock.advance(10_399);
    settle(&clock, 1);
    assert!(
        drain_channel(&rx).is_empty(),
        "fired before its boottime deadline"
    );
    clock.advance(1);
    let (tag, f) = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((tag, f.deadline, f.now), (1, 1_050_800, 1_050_800));
}

// docs/runtime.md: on a runtime given the wall clock, "its own readings
// (`Deadline::from_clock_ns`, `Runtime::now_ns`) are wall deadlines on the realtime base, its
// relative timers are monotonic ... and each `Fire` speaks of the clock its timer was armed
// on"; `Fire::deadline`: "(and, on a runtime given the wall clock, of
// [`Deadline::from_clock_ns`])". A manual wall clock whose monotonic base reads apart from it.
#[test]
fn a_wall_clock_runtimes_firings_speak_of_the_clock_each_timer_was_armed_on() {
    let clock = ManualClock::on_base(ClockId::Realtime, WALL);
    clock.set_base(ClockId::Monotonic, 5_000);
    let rt = manual(&clock, 1, Tolerance::EXACT);
    assert_eq!(rt.now_ns(), WALL);
    let (tx, rx) = mpsc::channel();
    let wall = sending(&rt, 0, Exec::Direct, 1, &tx);
    let relative = sending(&rt, 0, Exec::Deferred, 2, &tx);
    let mono = sending(&rt, 0, Exec::Direct, 3, &tx);
    wall.start_at(at(WALL + 100)).unwrap();
    relative.start_after(ns(200)).unwrap();
    mono.start_at(Deadline::on(ClockId::Monotonic, 5_300))
        .unwrap();
    clock.advance(100);
    let (tag, f) = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((tag, f.deadline, f.now), (1, WALL + 100, WALL + 100));
    // The wall clock is set a second ahead: neither the relative nor the monotonic timer moves
    // (had one moved with it, it would have fired at the set, before the firings below).
    wall.start_at(at(WALL + 500_000)).unwrap();
    clock.set(WALL + 1_000_000_000);
    let (tag, f) = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!(
        (tag, f.deadline, f.now),
        (1, WALL + 500_000, WALL + 1_000_000_000)
    );
    assert_eq!(rt.now_ns(), WALL + 1_000_000_000);
    clock.advance(100);
    let (tag, f) = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((tag, f.deadline, f.now), (2, 5_200, 5_200));
    clock.advance(100);
    let (tag, f) = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((tag, f.deadline, f.now), (3, 5_300, 5_300));
}

// ----- manual clock ----------------------------------------------------------------------------

// `ManualClock` (module docs): "With auto-advance on, the clock jumps to the earliest wake-up
// any driver asked for as soon as every driver is asleep and no deferred callback runs: a
// discrete-event simulation whose time moves only through the timers." A deferred callback that
// re-arms its timer sooner than another pending timer is never overtaken by a jump: every
// firing is on time.
#[test]
fn auto_advance_never_jumps_past_a_deferred_callbacks_rearming() {
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 2, Tolerance::EXACT);
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let chain = rt
        .timer_on(0, Exec::Deferred, move |t, f| {
            let _ = tx.lock().unwrap().send((1, *f));
            if f.deadline < 1_000 {
                // Some work before re-arming on the other shard, while the clock must wait.
                std::thread::sleep(Duration::from_millis(2));
                let _ = t.start_with(at(f.deadline + 100), Duration::ZERO, Some(1 - f.shard));
            }
        })
        .unwrap();
    let (ftx, frx) = mpsc::channel();
    let far = sending(&rt, 1, Exec::Direct, 2, &ftx);
    chain.start_at(at(100)).unwrap();
    far.start_at(at(5_000)).unwrap();
    clock.set_auto_advance(true);
    let mut fires = Vec::new();
    for _ in 0..10 {
        fires.push(rx.recv_timeout(PATIENCE).unwrap().1);
    }
    let (_, f) = frx.recv_timeout(PATIENCE).unwrap();
    assert_eq!((f.deadline, f.now), (5_000, 5_000));
    for (k, f) in fires.iter().enumerate() {
        let deadline = 100 * (k as u64 + 1);
        assert_eq!(
            (f.deadline, f.now),
            (deadline, deadline),
            "firing {k} of the chain"
        );
    }
}

// ----- shutdown --------------------------------------------------------------------------------

// `Runtime`: "Dropping it stops the threads (after queued deferred callbacks have run) and
// cancels every pending timer". A deferred firing queued behind a slow callback still runs
// during the drop; a pending one never does; afterwards the timers are not pending.
#[test]
fn dropping_the_runtime_runs_the_deferred_callbacks_already_queued() {
    let clock = ManualClock::new(0);
    let rt = manual(&clock, 1, Tolerance::EXACT);
    let (started_tx, started) = mpsc::channel();
    let (release, release_rx) = mpsc::channel::<()>();
    let (started_tx, release_rx) = (Mutex::new(started_tx), Mutex::new(release_rx));
    let slow = rt
        .timer(Exec::Deferred, move |_, _| {
            let _ = started_tx.lock().unwrap().send(());
            let _ = release_rx.lock().unwrap().recv_timeout(PATIENCE);
        })
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let queued = sending(&rt, 0, Exec::Deferred, 1, &tx);
    let marker = sending(&rt, 0, Exec::Direct, 2, &tx);
    let pending = sending(&rt, 0, Exec::Deferred, 3, &tx);
    slow.start_at(at(10)).unwrap();
    queued.start_at(at(20)).unwrap();
    marker.start_at(at(30)).unwrap();
    pending.start_at(at(1_000)).unwrap();
    clock.advance(10);
    started.recv_timeout(PATIENCE).unwrap();
    clock.advance(20);
    // The direct marker fired after the step that queued `queued` behind the busy worker.
    let (tag, _) = rx.recv_timeout(PATIENCE).unwrap();
    assert_eq!(tag, 2);
    let (dropped_tx, dropped) = mpsc::channel();
    std::thread::spawn(move || {
        drop(rt);
        let _ = dropped_tx.send(());
    });
    std::thread::sleep(Duration::from_millis(20));
    release.send(()).unwrap();
    dropped
        .recv_timeout(PATIENCE)
        .expect("dropping the runtime never returned");
    let tags: Vec<u64> = drain_channel(&rx).into_iter().map(|(t, _)| t).collect();
    assert_eq!(
        tags,
        [1],
        "the queued deferred callback ran, the pending one did not"
    );
    for t in [&slow, &queued, &marker, &pending] {
        assert!(!t.is_pending());
        assert_eq!(t.drain(), Stop::NotPending);
    }
    clock.advance(10_000);
    std::thread::sleep(Duration::from_millis(5));
    assert!(drain_channel(&rx).is_empty());
}

// ----- timer sets ------------------------------------------------------------------------------

const MS: u64 = 1_000_000;

// `TimerSetConfig::tolerance`: "How late the set may wake up for a timer ... Reaping never
// returns a timer before its deadline"; `Reaped::deadline`: "The deadline it expired for";
// `TimerSet::fd`: "readable exactly while the expired queue is non-empty" — the set's runtime
// timer, with the window's tolerance, still raises it by the window's end with no call made.
#[test]
fn a_tolerant_set_never_reaps_early_and_notifies_by_the_windows_end() {
    let clock = ManualClock::new(1_000 * MS);
    let rt = manual(&clock, 1, Tolerance::EXACT);
    let config = TimerSetConfig::default().with_tolerance(Some(Tolerance::percent(50)));
    let set = TimerSet::with_config(&rt, config).unwrap();
    let h = set
        .create(Duration::from_millis(10), Duration::ZERO, 1)
        .unwrap();
    clock.advance(10 * MS - 1);
    assert_eq!(set.reap(), None, "reaped before its deadline");
    assert_eq!(set.refresh(), 0);
    assert_eq!(set.get(h).unwrap().remaining, ns(1));
    clock.advance(1);
    let r = set.reap_info().unwrap();
    assert_eq!((r.handle, r.deadline, r.overruns), (h, 1_010 * MS, 0));
    // No call between the clock's move and the poll: only the set's runtime timer can raise it.
    let g = set
        .create(Duration::from_millis(10), Duration::ZERO, 2)
        .unwrap();
    clock.advance(15 * MS);
    assert!(
        readable(set.fd(), PATIENCE.as_millis() as i32),
        "not readable at the window's end"
    );
    assert_eq!(set.reap(), Some((g, 2)));
    assert!(!readable(set.fd(), 0));
}

// `TimerSet` (module docs): "Timers that expire together are queued in deadline order, and
// equal deadlines in the order they were started (created, reset or restarted)". A reset to
// the same deadline makes the timer the last started.
#[test]
fn a_reset_timer_queues_after_timers_started_before_the_reset() {
    let clock = ManualClock::new(1_000 * MS);
    let rt = manual(&clock, 1, Tolerance::EXACT);
    let set = TimerSet::new(&rt).unwrap();
    let ten = Duration::from_millis(10);
    let a = set.create(ten, Duration::ZERO, 1).unwrap();
    let b = set.create(ten, Duration::ZERO, 2).unwrap();
    let c = set.create(ten, Duration::ZERO, 3).unwrap();
    // a: reset to the same deadline, after b and c were created.
    assert_eq!(
        set.reset(a, ten, Duration::ZERO, 11).unwrap().remaining,
        ten
    );
    // A periodic timer restarted at a reap for the same deadline, after the others.
    let p = set
        .create(Duration::from_millis(5), Duration::from_millis(5), 4)
        .unwrap();
    clock.advance(5 * MS);
    assert_eq!(set.reap(), Some((p, 4)));
    clock.advance(5 * MS);
    let order: Vec<_> = std::iter::from_fn(|| set.reap()).collect();
    assert_eq!(order, [(b, 2), (c, 3), (a, 11), (p, 4)]);
}

// `ManualClock::on_base`: "a simulated wall clock, for a runtime on the realtime clock"; the
// module docs: "With auto-advance on, the clock jumps to the earliest wake-up any driver asked
// for as soon as every driver is asleep and no deferred callback runs"; `ManualClock::idle`:
// "Whether every waiter is asleep with no early wake-up pending". A wall-clock runtime whose
// one driver sleeps must make the clock idle, and auto-advance must carry it to its timer.
#[test]
fn auto_advance_and_idle_work_on_a_wall_clock_runtime() {
    let clock = ManualClock::on_base(ClockId::Realtime, WALL);
    let rt = manual(&clock, 1, Tolerance::EXACT);
    let (tx, rx) = mpsc::channel();
    let t = sending(&rt, 0, Exec::Direct, 1, &tx);
    t.start_after(ns(1_000)).unwrap();
    clock.set_auto_advance(true);
    let fired = rx.recv_timeout(Duration::from_secs(3));
    assert!(
        fired.is_ok(),
        "auto-advance never moved the wall clock's runtime to its timer (clock at {}, idle: {})",
        clock.now(),
        clock.idle()
    );
    let until = Instant::now() + Duration::from_secs(3);
    while !clock.idle() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(
        clock.idle(),
        "a wall-clock runtime with its driver asleep is never idle"
    );
    drop(rt);
}

// `Runtime::sleep_until`: "A deadline already passed returns at once (after one firing of the
// timer)"; `Runtime::sleep`: "never earlier than `duration`" — a zero sleep needs no clock
// move either. On a manual clock nothing moves time, so returning proves no wait.
#[test]
fn exact_sleeps_whose_deadline_has_passed_return_without_the_clock_moving() {
    let clock = ManualClock::new(1_000);
    let rt = Arc::new(manual(&clock, 1, Tolerance::EXACT));
    let (tx, rx) = mpsc::channel();
    let sleeper = Arc::clone(&rt);
    std::thread::spawn(move || {
        let a = sleeper.sleep_until(at(5), Duration::ZERO);
        let b = sleeper.sleep(Duration::ZERO, Tolerance::percent(10));
        let _ = tx.send((a.is_ok(), b.is_ok()));
    });
    let got = rx.recv_timeout(PATIENCE);
    clock.set(u64::MAX); // frees the sleeper whatever happened
    assert_eq!(got.expect("a sleep waited for the clock"), (true, true));
    assert_eq!(rt.stats()[0].pending, 0, "a sleep left its timer armed");
}

// `Runtime::sleep_until`: "Blocks the calling thread until `deadline` ... A deadline already
// passed returns at once (after one firing of the timer)" — whatever the precision, which only
// lets the wake-up come later than the deadline. The deadline lies in the past, inside its
// window; nothing moves the manual clock. (Alone on a fresh runtime, or with the clock at
// 10_000 and a 1 ms precision, the same sleep returns at once.)
#[test]
fn a_sleep_until_a_passed_deadline_returns_at_once_whatever_its_precision() {
    let clock = ManualClock::new(1_000);
    let rt = Arc::new(manual(&clock, 1, Tolerance::EXACT));
    let (tx, rx) = mpsc::channel();
    let sleeper = Arc::clone(&rt);
    std::thread::spawn(move || {
        // Two sleeps first, each returning at once (an exact one, then a zero one).
        let first = sleeper.sleep_until(at(5), Duration::ZERO).is_ok()
            && sleeper
                .sleep(Duration::ZERO, Tolerance::percent(10))
                .is_ok();
        let _ = tx.send(first && sleeper.sleep_until(at(5), Duration::from_secs(1)).is_ok());
    });
    let got = rx.recv_timeout(Duration::from_secs(3));
    let now = clock.now();
    clock.set(u64::MAX); // frees the sleeper whatever happened
    assert_eq!(
        got.ok(),
        Some(true),
        "sleep_until(5 ns, 1 s precision) at {now} ns did not return at once"
    );
}

// `Timer::start_at`: "Arms the timer for `deadline`, with the runtime's default tolerance ...
// A deadline already past fires at once." With a default tolerance that has an absolute part,
// the window of a passed deadline still reaches past now; the firing must not wait for it.
#[test]
fn a_passed_deadline_fires_at_once_under_an_absolute_default_tolerance() {
    let clock = ManualClock::new(10_000);
    let rt = manual(&clock, 1, Tolerance::absolute(Duration::from_millis(1)));
    let (tx, rx) = mpsc::channel();
    let t = sending(&rt, 0, Exec::Direct, 1, &tx);
    // A first firing at the present reading (exact: a window of zero).
    t.start_with(at(10_000), Duration::ZERO, None).unwrap();
    assert_eq!(rx.recv_timeout(PATIENCE).unwrap().1.deadline, 10_000);
    settle(&clock, 1);
    assert!(!t.start_at(at(5)).unwrap());
    let got = rx.recv_timeout(Duration::from_secs(3));
    assert!(
        got.is_ok(),
        "a deadline 9_995 ns past did not fire at once (clock still at {})",
        clock.now()
    );
    assert_eq!(got.unwrap().1.deadline, 5);
}

// docs/runtime.md: each `Condvar` waiter is "woken once by whichever of a notification and its
// timer wins ... and a timed-out waiter never swallows a `notify_one`"; `Condvar::notify_one`:
// "Wakes the longest-waiting thread still blocked; whether there was one". The first waiter
// times out on the manual clock; the notification that follows goes to the second.
#[test]
fn a_timed_out_waiter_does_not_take_the_next_notification() {
    use callwheel_rt::{Condvar, Woken};
    let clock = ManualClock::new(0);
    let rt = Arc::new(manual(&clock, 1, Tolerance::EXACT));
    let state = Arc::new((Mutex::new(0u32), Condvar::new()));
    let (tx, rx) = mpsc::channel();
    let timed = {
        let (state, rt, tx) = (Arc::clone(&state), Arc::clone(&rt), tx.clone());
        std::thread::spawn(move || {
            let (m, cv) = &*state;
            let g = m.lock().unwrap();
            let (_g, woken) = cv.wait_timeout(&rt, m, g, ns(100), Tolerance::EXACT);
            let _ = tx.send(("timed", woken.ok()));
        })
    };
    eventually("the timed waiter blocks", || state.1.waiters() == 1);
    let plain = {
        let (state, tx) = (Arc::clone(&state), tx.clone());
        std::thread::spawn(move || {
            let (m, cv) = &*state;
            let g = m.lock().unwrap();
            let (_g, woken) = cv.wait(m, g);
            let _ = tx.send(("plain", woken.ok().map(|()| Woken::Notified)));
        })
    };
    eventually("both waiters block", || state.1.waiters() == 2);
    clock.advance(100);
    assert_eq!(
        rx.recv_timeout(PATIENCE).unwrap(),
        ("timed", Some(Woken::TimedOut))
    );
    timed.join().unwrap();
    assert_eq!(state.1.waiters(), 1);
    assert!(state.1.notify_one(), "no waiter took the notification");
    assert_eq!(
        rx.recv_timeout(PATIENCE).unwrap(),
        ("plain", Some(Woken::Notified))
    );
    plain.join().unwrap();
    assert!(!state.1.notify_one());
}

// `Timer::start_at` ("A deadline already past fires at once") for `start_after` of zero and a
// zero `Runtime::sleep` under a default tolerance with an absolute part: nothing to wait for,
// so nothing waits for the window's firing instant; the manual clock never moves.
#[test]
fn a_zero_delay_fires_at_once_under_an_absolute_default_tolerance() {
    let clock = ManualClock::new(1_000);
    let rt = Arc::new(manual(
        &clock,
        1,
        Tolerance::absolute(Duration::from_secs(1)),
    ));
    let (tx, rx) = mpsc::channel();
    let t = sending(&rt, 0, Exec::Direct, 1, &tx);
    t.start_after(Duration::ZERO).unwrap();
    let got = rx.recv_timeout(Duration::from_secs(3));
    assert_eq!(
        got.map(|(_, f)| f.deadline).ok(),
        Some(1_000),
        "did not fire at once"
    );
    let (done, finished) = mpsc::channel();
    let sleeper = Arc::clone(&rt);
    std::thread::spawn(move || {
        let _ = done.send(
            sleeper
                .sleep(Duration::ZERO, Tolerance::absolute(Duration::from_secs(1)))
                .is_ok(),
        );
    });
    let slept = finished.recv_timeout(Duration::from_secs(3));
    clock.set(u64::MAX); // frees the sleeper whatever happened
    assert_eq!(slept.ok(), Some(true), "a zero sleep waited for the clock");
}
