//! A second suite, written from the documentation of the public items (the rustdoc comments
//! and `docs/async.md`) rather than from the code: each test names the item whose promise it
//! checks. Deterministic where it can be (a `ManualClock`, tokio's paused clock); where the
//! real clock is needed, only orderings that cannot flake are asserted.

use std::future::{pending, Future};
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use callwheel_async::{
    interval, interval_at, sleep, sleep_until, timeout, timeout_at, Clock, DelayQueue, Driver,
    Elapsed, Expired, Interval, ManualClock, Missed, MissedTickBehavior, Sleep, Timeout, Tolerance,
    MAX_SHARDS,
};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const SEC: u64 = 1_000_000_000;

fn ns(n: u64) -> Duration {
    Duration::from_nanos(n)
}

fn poll_pin<F: Future + ?Sized>(f: Pin<&mut F>, waker: &Waker) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(waker))
}

fn poll_noop<F: Future + Unpin + ?Sized>(f: &mut F) -> Poll<F::Output> {
    Pin::new(f).poll(&mut Context::from_waker(Waker::noop()))
}

/// Moves the simulated clock and waits for the driver's thread to have fired what is due.
fn step(clock: &ManualClock, by: u64) {
    clock.advance(by);
    clock.wait_idle(1);
}

/// A waker that counts its wakes.
#[derive(Default)]
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn counter() -> (Arc<Count>, Waker) {
    let c = Arc::new(Count::default());
    (Arc::clone(&c), Waker::from(c))
}

fn count(c: &Count) -> usize {
    c.0.load(Ordering::SeqCst)
}

/// A waker that records the simulated clock's reading at each wake.
struct Stamp {
    clock: ManualClock,
    at: Mutex<Vec<u64>>,
}

impl Wake for Stamp {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.at.lock().unwrap().push(self.clock.now());
    }
}

fn stamp(clock: &ManualClock) -> (Arc<Stamp>, Waker) {
    let s = Arc::new(Stamp {
        clock: clock.clone(),
        at: Mutex::new(Vec::new()),
    });
    (Arc::clone(&s), Waker::from(s))
}

/// Waits (on the real clock, bounded) until `done` holds; `false` if it never did.
fn eventually(mut done: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    done()
}

// ---------------------------------------------------------------------------------------------
// Sleep on a simulated clock
// ---------------------------------------------------------------------------------------------

// `Driver::sleep` ("the duration counts on its clock") and `Sleep` ("completes at its
// deadline"): pending one nanosecond short of the deadline, ready at it, woken exactly once.
#[test]
fn a_sleep_is_pending_until_its_deadline_and_ready_at_it() {
    let (driver, clock) = Driver::manual().unwrap();
    let (woken, waker) = counter();
    let mut s = driver.sleep(ns(10 * MS));
    assert!(poll_pin(Pin::new(&mut s), &waker).is_pending());
    step(&clock, 10 * MS - 1);
    assert_eq!(count(&woken), 0, "woken 1 ns before its deadline");
    assert!(poll_pin(Pin::new(&mut s), &waker).is_pending());
    assert!(!s.is_elapsed());
    step(&clock, 1);
    assert_eq!(count(&woken), 1, "woken once at its deadline");
    assert!(s.is_elapsed());
    assert!(poll_pin(Pin::new(&mut s), &waker).is_ready());
    // "polling a completed `Sleep` returns `Ready` again" (the crate's Edges).
    assert!(poll_noop(&mut s).is_ready());
    assert!(poll_noop(&mut s).is_ready());
    assert_eq!(driver.pending(), 0);
}

// `Sleep::is_elapsed`: "Whether the deadline has passed (on the driver's clock)", whether or
// not the sleep was ever polled.
#[test]
fn is_elapsed_follows_the_drivers_clock_without_a_poll() {
    let (driver, clock) = Driver::manual().unwrap();
    let s = driver.sleep(ns(5 * MS));
    assert!(!s.is_elapsed());
    clock.advance(5 * MS - 1);
    assert!(!s.is_elapsed());
    clock.advance(1);
    assert!(s.is_elapsed());
}

// `Sleep::tolerance` ("may complete up to `tolerance` after its deadline (never before)") and
// `Driver::manual`: sleeps with tolerances from none to wider than the sleep itself, and one
// past 2^48 ns ("counts as that"), are each woken inside `[deadline, deadline + tolerance]`.
#[test]
fn tolerant_sleeps_are_woken_inside_their_windows() {
    let (driver, clock) = Driver::manual().unwrap();
    let cap = (1u64 << 48) - 1;
    let cases: Vec<(u64, Option<u64>)> = vec![
        (3 * MS, None),
        (3 * MS, Some(0)),
        (3 * MS + 17, Some(1)),
        (5 * MS, Some(7)),
        (5 * MS + 3, Some(63)),
        (7 * MS, Some(64)),
        (7 * MS + 1, Some(1_000)),
        (11 * MS, Some(5 * MS)),
        (13 * MS, Some(13 * MS)),
        (17 * MS, Some(3 * 17 * MS)),
        (19 * MS, Some(SEC)),
        (23 * MS, Some(u64::MAX)),
    ];
    let mut held = Vec::new();
    for &(d, tol) in &cases {
        let mut s = driver.sleep(ns(d));
        if let Some(t) = tol {
            s = s.tolerance(ns(t));
        }
        let (st, waker) = stamp(&clock);
        assert!(poll_pin(Pin::new(&mut s), &waker).is_pending());
        held.push((s, st));
    }
    clock.set_auto_advance(true);
    assert!(
        eventually(|| driver.pending() == 0),
        "{} sleeps still pending at {}",
        driver.pending(),
        clock.now()
    );
    for ((s, st), &(d, tol)) in held.iter_mut().zip(&cases) {
        let at = st.at.lock().unwrap().clone();
        assert_eq!(at.len(), 1, "{d} ns woken {at:?}");
        let end = d.saturating_add(tol.unwrap_or(0).min(cap));
        assert!(
            at[0] >= d && at[0] <= end,
            "{d} ns with tolerance {tol:?} woken at {}, window [{d}, {end}]",
            at[0]
        );
        assert!(poll_noop(s).is_ready());
    }
}

// `Builder::tolerance`: "A sleep of `d` may then end anywhere in `[d, d + tolerance(d)]`", and a
// sleep's own tolerance overrides it (`Sleep::tolerance`: "Without it the driver's default
// applies").
#[test]
fn the_drivers_default_tolerance_bounds_every_sleep_without_its_own() {
    let clock = ManualClock::new(0);
    let driver = Driver::builder()
        .clock(clock.clone())
        .tolerance(Tolerance::percent(10))
        .build()
        .unwrap();
    let cases = [
        (10 * MS, 11 * MS),
        (40 * MS, 44 * MS),
        (100 * MS + 5, 110 * MS + 5),
    ];
    let mut held = Vec::new();
    for &(d, _) in &cases {
        let mut s = driver.sleep(ns(d));
        let (st, waker) = stamp(&clock);
        assert!(poll_pin(Pin::new(&mut s), &waker).is_pending());
        held.push((s, st));
    }
    // An exact one on the same driver.
    let mut exact = driver.sleep(ns(20 * MS)).tolerance(Duration::ZERO);
    let (exact_at, waker) = stamp(&clock);
    assert!(poll_pin(Pin::new(&mut exact), &waker).is_pending());
    clock.set_auto_advance(true);
    assert!(eventually(|| driver.pending() == 0));
    for ((_, st), &(d, end)) in held.iter().zip(&cases) {
        let at = st.at.lock().unwrap()[0];
        assert!(at >= d && at <= end, "woken at {at}, window [{d}, {end}]");
    }
    assert_eq!(exact_at.at.lock().unwrap().as_slice(), &[20 * MS]);
}

// `Builder::tolerance` and the crate's "Nothing here panics on any input": default tolerances
// at the limits of `Tolerance` (its fields are public) neither panic nor let a sleep end early.
#[test]
fn extreme_default_tolerances_neither_panic_nor_end_a_sleep_early() {
    for tol in [
        Tolerance::absolute(Duration::MAX),
        Tolerance {
            absolute: u64::MAX,
            ppm: u32::MAX,
        },
        Tolerance {
            absolute: 0,
            ppm: u32::MAX,
        },
        Tolerance::percent(1_000),
    ] {
        let clock = ManualClock::new(0);
        let driver = Driver::builder()
            .clock(clock.clone())
            .tolerance(tol)
            .build()
            .unwrap();
        let mut s = driver.sleep(ns(SEC));
        let mut far = driver.sleep(Duration::MAX);
        let (woken, waker) = counter();
        assert!(poll_pin(Pin::new(&mut s), &waker).is_pending());
        assert!(poll_pin(Pin::new(&mut far), &waker).is_pending());
        step(&clock, SEC - 1);
        assert!(poll_noop(&mut s).is_pending(), "{tol:?}: ended early");
        assert_eq!(count(&woken), 0, "{tol:?}: woken early");
        assert!(!s.is_elapsed());
        step(&clock, 1);
        assert!(s.is_elapsed(), "{tol:?}");
    }
}

// `Sleep::reset`: "a completed sleep becomes pending again, and one moved to a time already
// passed completes at its next poll"; a registered sleep moved later does not fire at its old
// deadline, and one moved earlier fires at its new one.
#[test]
fn reset_moves_a_sleep_both_ways_and_revives_a_completed_one() {
    let (driver, clock) = Driver::manual().unwrap();
    let (woken, waker) = counter();

    // Later: nothing at the old deadline.
    let mut s = driver.sleep(ns(10 * MS));
    assert!(poll_pin(Pin::new(&mut s), &waker).is_pending());
    s.reset(Instant::now() + ns(30 * MS));
    step(&clock, 10 * MS);
    assert!(poll_pin(Pin::new(&mut s), &waker).is_pending());
    assert_eq!(count(&woken), 0, "woken at the deadline it was moved from");
    // The Instant converts by its distance from the real now: due by 30 ms after the reset.
    step(&clock, 20 * MS);
    assert!(poll_pin(Pin::new(&mut s), &waker).is_ready());

    // Completed, then moved ahead: pending again.
    s.reset(Instant::now() + ns(5 * MS));
    assert!(poll_pin(Pin::new(&mut s), &waker).is_pending());
    step(&clock, 5 * MS);
    assert!(poll_pin(Pin::new(&mut s), &waker).is_ready());

    // Earlier: fires at the new deadline, well before the old.
    let mut e = driver.sleep(ns(SEC));
    let (early, ewaker) = counter();
    assert!(poll_pin(Pin::new(&mut e), &ewaker).is_pending());
    e.reset(Instant::now() + ns(2 * MS));
    step(&clock, 2 * MS);
    assert_eq!(count(&early), 1);
    assert!(poll_pin(Pin::new(&mut e), &ewaker).is_ready());

    // To a time already passed: ready at the next poll, with the clock not moved.
    let mut p = driver.sleep(ns(SEC));
    assert!(poll_noop(&mut p).is_pending());
    p.reset(Instant::now() - ns(MS));
    assert!(poll_noop(&mut p).is_ready());
    assert_eq!(driver.pending(), 0);
}

// `Sleep::deadline`: "The deadline: the `Instant` it was made with (or `now + duration`)",
// with the bounds it documents, never a panic (`Duration::MAX`, an Instant far ahead).
#[test]
fn deadline_gives_back_the_instant_and_never_panics() {
    let at = Instant::now() + Duration::from_secs(3) + ns(123);
    assert_eq!(sleep_until(at).deadline(), at);
    let (driver, _clock) = Driver::manual().unwrap();
    assert_eq!(driver.sleep_until(at).deadline(), at);

    let before = Instant::now();
    let d = sleep(ns(7 * MS)).deadline();
    let after = Instant::now();
    assert!(d >= before + ns(7 * MS) && d <= after + ns(7 * MS));

    let never = sleep(Duration::MAX);
    assert!(never.deadline() > Instant::now() + Duration::from_secs(100 * 365 * 86_400));
    assert!(!never.is_elapsed());
    if let Some(far) = Instant::now().checked_add(Duration::from_secs(400 * 365 * 86_400)) {
        let mut s = sleep_until(far);
        assert!(s.deadline() >= Instant::now());
        assert!(poll_noop(&mut s).is_pending());
    }
}

// The crate's Edges and `sleep_until`: "a deadline already passed (an `Instant` from before the
// process started included) completes at the first poll"; a zero duration has passed too.
#[test]
fn a_past_or_zero_deadline_completes_at_the_first_poll() {
    let (driver, _clock) = Driver::manual().unwrap();
    assert!(poll_noop(&mut driver.sleep(Duration::ZERO)).is_ready());
    assert!(poll_noop(&mut driver.sleep_until(Instant::now() - ns(1))).is_ready());
    assert!(poll_noop(&mut sleep(Duration::ZERO)).is_ready());
    let long_ago = Instant::now()
        .checked_sub(Duration::from_secs(10 * 365 * 86_400))
        .unwrap_or_else(Instant::now);
    assert!(poll_noop(&mut sleep_until(long_ago)).is_ready());
    assert!(poll_noop(&mut driver.sleep_until(long_ago)).is_ready());
    assert_eq!(driver.pending(), 0, "a sleep due at once registers nothing");
}

// The crate's Edges and `sleep`: "`Duration::MAX` never completes", even on a simulated
// clock that auto-advances to the driver's next wake-up.
#[test]
fn duration_max_never_completes_on_an_auto_advancing_clock() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut forever = driver.sleep(Duration::MAX);
    let (woken, waker) = counter();
    assert!(poll_pin(Pin::new(&mut forever), &waker).is_pending());
    let mut soon = driver.sleep(ns(MS));
    assert!(poll_noop(&mut soon).is_pending());
    clock.set_auto_advance(true);
    assert!(eventually(|| driver.pending() <= 1));
    std::thread::sleep(Duration::from_millis(20));
    clock.wait_idle(1);
    assert!(
        poll_pin(Pin::new(&mut forever), &waker).is_pending(),
        "completed with the clock at {}",
        clock.now()
    );
    assert!(!forever.is_elapsed(), "elapsed at {}", clock.now());
    assert_eq!(count(&woken), 0);
}

// `Sleep` ("moved between tasks and threads freely (a move takes effect at the next poll,
// whose waker replaces the registered one)"): the waker of the latest poll, on another
// thread, is the one woken, once.
#[test]
fn a_sleep_moved_to_another_thread_wakes_the_waker_of_its_latest_poll() {
    let (driver, clock) = Driver::manual().unwrap();
    let (first, first_waker) = counter();
    let mut s = driver.sleep(ns(4 * MS));
    assert!(poll_pin(Pin::new(&mut s), &first_waker).is_pending());
    let (second, second_waker) = counter();
    let mut s = std::thread::spawn(move || {
        assert!(poll_pin(Pin::new(&mut s), &second_waker).is_pending());
        s
    })
    .join()
    .unwrap();
    step(&clock, 4 * MS);
    assert_eq!((count(&first), count(&second)), (0, 1));
    assert!(poll_noop(&mut s).is_ready());
}

// `Sleep` ("Dropping a registered sleep cancels its timer") and `Driver::pending` ("Futures
// registered and waiting now"): registration at the first pending poll only, cancellation on
// drop, nothing woken for a dropped sleep.
#[test]
fn pending_counts_registrations_and_a_drop_cancels() {
    let (driver, clock) = Driver::manual().unwrap();
    let (woken, waker) = counter();
    let mut sleeps: Vec<Sleep> = (1..=5).map(|i| driver.sleep(ns(i * MS))).collect();
    assert_eq!(
        driver.pending(),
        0,
        "nothing registers before its first poll"
    );
    for s in &mut sleeps {
        assert!(poll_pin(Pin::new(s), &waker).is_pending());
    }
    // A re-poll registers nothing more.
    for s in &mut sleeps {
        assert!(poll_pin(Pin::new(s), &waker).is_pending());
    }
    assert_eq!(driver.pending(), 5);
    sleeps.truncate(2);
    assert_eq!(driver.pending(), 2);
    step(&clock, 10 * MS);
    assert_eq!(count(&woken), 2, "only the sleeps still held are woken");
    assert_eq!(driver.pending(), 0);
    assert_eq!(driver.stats().fired, 2);
}

// docs/async.md ("a waker that panics is caught"): the driver goes on and wakes the others.
#[test]
fn a_panicking_waker_does_not_stop_the_driver() {
    struct Bomb;
    impl Wake for Bomb {
        fn wake(self: Arc<Self>) {
            panic!("a waker that panics (expected by this test)");
        }
    }
    let (driver, clock) = Driver::manual().unwrap();
    let mut bad = driver.sleep(ns(MS));
    assert!(poll_pin(Pin::new(&mut bad), &Waker::from(Arc::new(Bomb))).is_pending());
    let mut good = driver.sleep(ns(MS));
    let mut later = driver.sleep(ns(2 * MS));
    let (woken, waker) = counter();
    assert!(poll_pin(Pin::new(&mut good), &waker).is_pending());
    assert!(poll_pin(Pin::new(&mut later), &waker).is_pending());
    step(&clock, MS);
    assert_eq!(count(&woken), 1);
    step(&clock, MS);
    assert_eq!(count(&woken), 2);
    assert!(poll_noop(&mut bad).is_ready());
}

// ---------------------------------------------------------------------------------------------
// Driver: builder, stats, memory, shutdown
// ---------------------------------------------------------------------------------------------

// `Builder::build`: "`InvalidInput` for a shard count outside 1 to [`MAX_SHARDS`]".
#[test]
fn a_shard_count_out_of_range_is_invalid_input() {
    for n in [0, MAX_SHARDS + 1, usize::MAX] {
        let err = Driver::builder().shards(n).build().unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "{n} shards");
    }
    assert!(Driver::builder().shards(3).build().is_ok());
    assert!(Driver::builder().shards(MAX_SHARDS).build().is_ok());
}

// The crate's "Nothing here panics on any input" and "a sleep on a [`Driver`] that was shut
// down completes at once": a reset of a sleep whose driver is gone, then its poll.
#[test]
fn a_sleep_whose_driver_is_gone_can_be_reset_and_completes() {
    let (driver, _clock) = Driver::manual().unwrap();
    let mut s = driver.sleep(ns(SEC));
    assert!(poll_noop(&mut s).is_pending());
    let mut i = driver.interval(ns(SEC));
    assert!(tick_now(&mut i, Waker::noop()).is_ready());
    assert!(tick_now(&mut i, Waker::noop()).is_pending());
    drop(driver);
    s.reset(Instant::now() + ns(SEC));
    assert!(poll_noop(&mut s).is_ready());
    i.reset();
    assert!(tick_now(&mut i, Waker::noop()).is_ready());
}

// `Driver::pending` ("over every shard") on a driver of several shards, registrations from
// several threads.
#[test]
fn pending_counts_over_every_shard() {
    let clock = ManualClock::new(0);
    let driver = Driver::builder()
        .clock(clock.clone())
        .shards(4)
        .build()
        .unwrap();
    let held: Vec<Sleep> = (0..8)
        .map(|i| {
            let d = driver.clone();
            std::thread::spawn(move || {
                let mut s = d.sleep(ns((i + 1) * MS));
                assert!(poll_noop(&mut s).is_pending());
                s
            })
            .join()
            .unwrap()
        })
        .collect();
    assert_eq!(driver.pending(), 8);
    clock.advance(4 * MS);
    clock.wait_idle(4);
    assert_eq!(driver.pending(), 4);
    assert_eq!(driver.stats().fired, 4);
    drop(held);
    assert_eq!(driver.pending(), 0);
}

// `DriverStats::wakeups` ("Wake-ups ... at a planned instant ... Not counted: a sleep a new
// registration ended early"), `DriverStats::fired`, and docs/async.md ("on a simulated clock
// ... the wake-ups there are the wheel's own: the optimum for exact timers"; the warm-up is
// for a CPU's idle, so `warm_ups` stays 0 there).
#[test]
fn stats_count_planned_wake_ups_and_fired_futures() {
    let (driver, clock) = Driver::manual().unwrap();
    assert_eq!(driver.stats(), Default::default());
    let mut late = driver.sleep(ns(10 * MS));
    assert!(poll_noop(&mut late).is_pending());
    clock.wait_idle(1);
    // Registered before the planned wake-up: wakes the thread early, not counted.
    let mut early = driver.sleep(ns(5 * MS));
    assert!(poll_noop(&mut early).is_pending());
    clock.wait_idle(1);
    assert_eq!(driver.stats().wakeups, 0);
    step(&clock, 5 * MS);
    assert_eq!((driver.stats().wakeups, driver.stats().fired), (1, 1));
    step(&clock, 5 * MS);
    let stats = driver.stats();
    assert_eq!((stats.wakeups, stats.fired, stats.warm_ups), (2, 2, 0));
    // Several sleeps at one deadline: one wake-up, each fired once.
    let mut same: Vec<Sleep> = (0..3).map(|_| driver.sleep(ns(3 * MS))).collect();
    for s in &mut same {
        assert!(poll_noop(s).is_pending());
    }
    // A cancelled sleep is not fired.
    let mut gone = driver.sleep(ns(3 * MS));
    assert!(poll_noop(&mut gone).is_pending());
    drop(gone);
    clock.wait_idle(1);
    step(&clock, 3 * MS);
    let stats = driver.stats();
    assert_eq!((stats.wakeups, stats.fired, stats.warm_ups), (3, 5, 0));
}

// docs/async.md ("No allocation per sleep in steady state: ... the wheel's slab (which grows
// fallibly and is reused)") through `Driver::memory_bytes`: the same number of registrations
// again takes no more memory.
#[test]
fn memory_bytes_stays_at_the_high_water_mark() {
    let (driver, clock) = Driver::manual().unwrap();
    let round = |n: u64| {
        let mut held: Vec<Sleep> = (0..n).map(|i| driver.sleep(ns((i + 1) * US))).collect();
        for s in &mut held {
            assert!(poll_noop(s).is_pending());
        }
        driver.memory_bytes()
    };
    let first = round(500);
    assert!(first > 0);
    assert_eq!(driver.pending(), 0);
    for _ in 0..5 {
        assert_eq!(
            round(500),
            first,
            "memory grew for the same number of sleeps"
        );
    }
    // And fired (rather than cancelled) sleeps give their slots back too.
    let mut held: Vec<Sleep> = (0..500).map(|i| driver.sleep(ns(i + 1))).collect();
    for s in &mut held {
        assert!(poll_noop(s).is_pending());
    }
    step(&clock, MS);
    assert_eq!(driver.pending(), 0);
    assert_eq!(round(500), first);
}

// `Driver` ("when the last clone is dropped its threads end and every future still registered
// on it completes at once"), and the crate's Edges ("a sleep on a [`Driver`] that was shut down
// completes at once"); a clone keeps the driver alive.
#[test]
fn dropping_the_last_handle_completes_every_registered_future() {
    let (driver, clock) = Driver::manual().unwrap();
    let keep = driver.clone();
    let mut a = driver.sleep(ns(3_600 * SEC));
    let (woken, waker) = counter();
    assert!(poll_pin(Pin::new(&mut a), &waker).is_pending());
    let mut unpolled = driver.sleep(ns(3_600 * SEC));
    drop(driver);
    // A clone still holds it: nothing ends.
    step(&clock, MS);
    assert_eq!(count(&woken), 0);
    assert!(poll_pin(Pin::new(&mut a), &waker).is_pending());
    let mut t = pin!(keep.timeout(ns(3_600 * SEC), pending::<()>()));
    assert!(poll_pin(t.as_mut(), &waker).is_pending());
    drop(keep);
    assert!(eventually(|| count(&woken) >= 2), "woken {}", count(&woken));
    assert!(poll_noop(&mut a).is_ready());
    assert!(poll_noop(&mut unpolled).is_ready());
    assert!(matches!(
        poll_pin(t.as_mut(), Waker::noop()),
        Poll::Ready(Err(Elapsed { .. }))
    ));
}

// `Driver::global`: "The process-wide driver, started by the first call ... It lives until the
// process exits": every call gives the same one.
#[test]
fn the_global_driver_is_one() {
    let a = Driver::global().unwrap();
    let b = Driver::global().unwrap();
    assert!(std::ptr::eq(a, b));
    let _ = a.stats();
}

// `Driver::now_ns` ("The clock's reading") and `Driver::manual` ("starting at 0").
#[test]
fn now_ns_reads_the_drivers_clock() {
    let (driver, clock) = Driver::manual().unwrap();
    assert_eq!(driver.now_ns(), 0);
    clock.advance(1_234);
    assert_eq!(driver.now_ns(), 1_234);
}

// `Sleep` ("It is 64 bytes"; "`Unpin`: ... moved between tasks and threads freely"), docs/
// async.md (a `Timeout` is "80 bytes around a future of no size"), and `DelayQueue` (`Unpin`
// for any value).
#[test]
fn the_documented_sizes_and_auto_traits_hold() {
    fn unpin<T: Unpin>() {}
    fn send<T: Send>() {}
    assert_eq!(std::mem::size_of::<Sleep>(), 64);
    assert_eq!(std::mem::size_of::<Timeout<std::future::Ready<()>>>(), 80);
    unpin::<Sleep>();
    send::<Sleep>();
    send::<Interval>();
    send::<Timeout<std::future::Ready<()>>>();
    unpin::<DelayQueue<std::marker::PhantomPinned>>();
    send::<DelayQueue<u32>>();
    let _: MissedTickBehavior = Missed::Skip;
}

// ---------------------------------------------------------------------------------------------
// Timeout
// ---------------------------------------------------------------------------------------------

// `timeout`: "`Ok(output)` if it completes first, `Err(Elapsed)` otherwise"; `Elapsed` is an
// I/O error of kind `TimedOut` (`From<Elapsed> for std::io::Error`).
#[test]
fn timeout_gives_the_output_or_elapsed() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut ready = pin!(driver.timeout(ns(MS), async { 7 }));
    assert_eq!(poll_pin(ready.as_mut(), Waker::noop()), Poll::Ready(Ok(7)));
    assert_eq!(driver.pending(), 0, "a ready future registers nothing");

    let mut slow = pin!(driver.timeout(ns(10 * MS), pending::<u8>()));
    let (woken, waker) = counter();
    assert!(poll_pin(slow.as_mut(), &waker).is_pending());
    step(&clock, 10 * MS - 1);
    assert!(
        poll_pin(slow.as_mut(), &waker).is_pending(),
        "elapsed early"
    );
    assert_eq!(count(&woken), 0);
    step(&clock, 1);
    assert_eq!(count(&woken), 1);
    let err = match poll_pin(slow.as_mut(), &waker) {
        Poll::Ready(Err(e)) => e,
        other => panic!("{other:?}"),
    };
    assert_eq!(err.to_string(), "deadline has elapsed");
    let io: std::io::Error = err.into();
    assert_eq!(io.kind(), std::io::ErrorKind::TimedOut);
}

// The timeout module ("The inner future is polled first"): a future ready at the poll that
// also finds the deadline passed gives its output, not `Elapsed`.
#[test]
fn a_future_ready_when_the_deadline_passes_wins() {
    let (driver, clock) = Driver::manual().unwrap();
    let flag = Arc::new(AtomicUsize::new(0));
    let f = Arc::clone(&flag);
    let inner = std::future::poll_fn(move |_| {
        if f.load(Ordering::SeqCst) == 1 {
            Poll::Ready("done")
        } else {
            Poll::Pending
        }
    });
    let mut t = pin!(driver.timeout(ns(MS), inner));
    assert!(poll_pin(t.as_mut(), Waker::noop()).is_pending());
    step(&clock, 2 * MS);
    flag.store(1, Ordering::SeqCst);
    assert_eq!(poll_pin(t.as_mut(), Waker::noop()), Poll::Ready(Ok("done")));
}

// `Driver::timeout` ("the duration counts from this call on the driver's clock") and
// `Timeout::sleep` ("made now if the timeout has not yet needed it; its deadline still counts
// from the call"): read or reset through it.
#[test]
fn a_timeouts_sleep_counts_from_the_call_and_resets() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut t = driver.timeout(ns(10 * MS), pending::<()>());
    step(&clock, 6 * MS);
    assert!(!t.sleep().is_elapsed());
    step(&clock, 4 * MS);
    assert!(t.sleep().is_elapsed(), "10 ms from the call");
    assert!(matches!(poll_noop(&mut t), Poll::Ready(Err(_))));

    // Reset through the sleep: extended.
    let mut t = pin!(driver.timeout(ns(5 * MS), pending::<()>()));
    assert!(poll_pin(t.as_mut(), Waker::noop()).is_pending());
    t.as_mut()
        .get_mut()
        .sleep()
        .reset(Instant::now() + ns(50 * MS));
    step(&clock, 10 * MS);
    assert!(poll_pin(t.as_mut(), Waker::noop()).is_pending());
    step(&clock, 40 * MS);
    assert!(poll_pin(t.as_mut(), Waker::noop()).is_ready());
}

// `Timeout::get_ref`, `get_mut` and `into_inner` ("dropping the deadline (and cancelling its
// timer)").
#[test]
fn a_timeout_gives_its_future_back_and_cancels() {
    let (driver, _clock) = Driver::manual().unwrap();
    let mut t = driver.timeout(ns(MS), driver.sleep(ns(SEC)));
    assert!(poll_noop(&mut t).is_pending());
    assert_eq!(driver.pending(), 2);
    assert!(!t.get_ref().is_elapsed());
    assert!(poll_noop(t.get_mut()).is_pending());
    let inner = t.into_inner();
    assert_eq!(driver.pending(), 1, "the deadline's timer is cancelled");
    drop(inner);
    assert_eq!(driver.pending(), 0);
}

// `Timeout::tolerance` ("may fire up to `tolerance` after its deadline"): never before the
// deadline, at the latest at its window's end.
#[test]
fn a_tolerant_timeout_elapses_inside_its_window() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut t = pin!(driver
        .timeout(ns(10 * MS), pending::<()>())
        .tolerance(ns(3 * MS)));
    let (st, waker) = stamp(&clock);
    assert!(poll_pin(t.as_mut(), &waker).is_pending());
    clock.set_auto_advance(true);
    assert!(eventually(|| !st.at.lock().unwrap().is_empty()));
    let at = st.at.lock().unwrap()[0];
    assert!((10 * MS..=13 * MS).contains(&at), "elapsed at {at}");
    assert!(poll_pin(t.as_mut(), &waker).is_ready());
}

// `timeout`: "`Duration::MAX` never elapses"; `timeout_at` with a passed deadline and a
// zero-duration timeout around a pending future elapse at the first poll; neither panics.
#[test]
fn timeouts_at_the_edges() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut never = pin!(driver.timeout(Duration::MAX, pending::<()>()));
    assert!(poll_pin(never.as_mut(), Waker::noop()).is_pending());
    step(&clock, 3_600 * SEC);
    assert!(poll_pin(never.as_mut(), Waker::noop()).is_pending());

    let mut zero = pin!(driver.timeout(Duration::ZERO, pending::<()>()));
    assert!(matches!(
        poll_pin(zero.as_mut(), Waker::noop()),
        Poll::Ready(Err(_))
    ));
    let mut free_zero = pin!(timeout(Duration::ZERO, pending::<()>()));
    assert!(matches!(
        poll_pin(free_zero.as_mut(), Waker::noop()),
        Poll::Ready(Err(_))
    ));
    let past = Instant::now() - ns(MS);
    let mut at = pin!(timeout_at(past, pending::<()>()));
    assert!(matches!(
        poll_pin(at.as_mut(), Waker::noop()),
        Poll::Ready(Err(_))
    ));
    let mut at = pin!(driver.timeout_at(past, pending::<()>()));
    assert!(matches!(
        poll_pin(at.as_mut(), Waker::noop()),
        Poll::Ready(Err(_))
    ));
    let mut free_never = pin!(timeout(Duration::MAX, pending::<()>()));
    assert!(poll_pin(free_never.as_mut(), Waker::noop()).is_pending());
}

// `timeout` on the real clock: never early (an elapsed timeout comes no sooner than its
// duration after the call).
#[test]
fn a_free_timeout_never_elapses_early() {
    let call = Instant::now();
    let r = futures::executor::block_on(timeout(ns(3 * MS), pending::<()>()));
    assert!(r.is_err());
    assert!(call.elapsed() >= ns(3 * MS));
}

// `timeout`: "The duration counts from this call ..., never early: ... for one first polled
// later from no later than the coarse clock's reading at that poll". A timeout first looked
// at 50 ms after its call.
#[test]
fn a_free_timeout_first_polled_late_counts_from_no_later_than_that_poll() {
    let before = Instant::now();
    let mut t = timeout(ns(100 * MS), pending::<()>());
    std::thread::sleep(Duration::from_millis(50));
    let deadline = t.sleep().deadline();
    let after = Instant::now();
    assert!(deadline >= before + ns(100 * MS), "early");
    assert!(
        deadline <= after + ns(100 * MS),
        "counted from after its first poll"
    );
}

// ---------------------------------------------------------------------------------------------
// Interval
// ---------------------------------------------------------------------------------------------

/// Polls an interval once with `waker`.
fn tick_now(i: &mut Interval, waker: &Waker) -> Poll<Instant> {
    i.poll_tick(&mut Context::from_waker(waker))
}

// `Driver::interval` ("first tick now on its clock"), `Interval::tick` ("returns its scheduled
// time"): ticks on the grid, exactly one period apart, none early.
#[test]
fn interval_ticks_now_then_every_period() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut i = driver.interval(ns(10 * MS));
    assert_eq!(i.period(), ns(10 * MS));
    assert_eq!(i.missed_tick_behavior(), Missed::Burst);
    let first = match tick_now(&mut i, Waker::noop()) {
        Poll::Ready(t) => t,
        Poll::Pending => panic!("the first tick is now"),
    };
    let mut last = first;
    for k in 1..=5u32 {
        assert!(tick_now(&mut i, Waker::noop()).is_pending());
        step(&clock, 10 * MS - 1);
        assert!(
            tick_now(&mut i, Waker::noop()).is_pending(),
            "tick {k} early"
        );
        step(&clock, 1);
        let t = match tick_now(&mut i, Waker::noop()) {
            Poll::Ready(t) => t,
            Poll::Pending => panic!("tick {k} not ready at its time"),
        };
        assert_eq!(t - last, ns(10 * MS));
        assert_eq!(t - first, ns(10 * MS) * k);
        assert_eq!(i.overruns(), 0);
        last = t;
    }
}

// `Missed` policies (`Interval::poll_tick`: "The next tick is then scheduled by the [`Missed`]
// policy against the time of this poll") and `Interval::overruns` ("The whole periods the
// latest tick missed"): late by 3.5 periods.
#[test]
fn each_missed_tick_policy_after_a_late_tick() {
    for policy in [Missed::Burst, Missed::Delay, Missed::Skip] {
        let (driver, clock) = Driver::manual().unwrap();
        let mut i = driver.interval(ns(10 * MS));
        i.set_missed_tick_behavior(policy);
        assert_eq!(i.missed_tick_behavior(), policy);
        let t0 = match tick_now(&mut i, Waker::noop()) {
            Poll::Ready(t) => t,
            Poll::Pending => panic!(),
        };
        step(&clock, 45 * MS);
        // The tick scheduled at 10 ms, taken at 45 ms: 3 whole periods missed.
        let t1 = match tick_now(&mut i, Waker::noop()) {
            Poll::Ready(t) => t,
            Poll::Pending => panic!("{policy:?}"),
        };
        assert_eq!(t1 - t0, ns(10 * MS), "{policy:?}");
        assert_eq!(i.overruns(), 3, "{policy:?}");
        let mut ticks = Vec::new();
        while let Poll::Ready(t) = tick_now(&mut i, Waker::noop()) {
            ticks.push(((t - t0).as_nanos() as u64, i.overruns()));
        }
        let (expected, next): (Vec<(u64, u64)>, u64) = match policy {
            // Replays 20, 30 and 40 at once, then 50 on time.
            Missed::Burst => (vec![(20 * MS, 2), (30 * MS, 1), (40 * MS, 0)], 50 * MS),
            // Restarts at 45: the next at 55.
            Missed::Delay => (vec![], 55 * MS),
            // The first grid point after 45: 50.
            Missed::Skip => (vec![], 50 * MS),
        };
        assert_eq!(ticks, expected, "{policy:?}");
        step(&clock, next - 45 * MS - 1);
        assert!(tick_now(&mut i, Waker::noop()).is_pending(), "{policy:?}");
        step(&clock, 1);
        match tick_now(&mut i, Waker::noop()) {
            Poll::Ready(t) => assert_eq!((t - t0).as_nanos() as u64, next, "{policy:?}"),
            Poll::Pending => panic!("{policy:?}: no tick at {next}"),
        }
    }
}

// `Interval::reset` ("The next tick one period from now (the grid moves)"),
// `reset_immediately`, `reset_after` ("`Duration::MAX`: no tick ever comes") and `reset_at`
// ("at once if it has passed").
#[test]
fn interval_resets_as_documented() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut i = driver.interval(ns(10 * MS));
    assert!(tick_now(&mut i, Waker::noop()).is_ready());
    step(&clock, 3 * MS);
    i.reset();
    step(&clock, 10 * MS - 1);
    assert!(tick_now(&mut i, Waker::noop()).is_pending(), "reset: early");
    step(&clock, 1);
    assert!(tick_now(&mut i, Waker::noop()).is_ready(), "reset: 13 ms");
    // The grid moved: the next at 23 ms.
    step(&clock, 10 * MS - 1);
    assert!(tick_now(&mut i, Waker::noop()).is_pending());
    step(&clock, 1);
    assert!(tick_now(&mut i, Waker::noop()).is_ready());

    i.reset_immediately();
    assert!(tick_now(&mut i, Waker::noop()).is_ready());
    assert!(tick_now(&mut i, Waker::noop()).is_pending());

    i.reset_after(ns(4 * MS));
    step(&clock, 4 * MS - 1);
    assert!(tick_now(&mut i, Waker::noop()).is_pending());
    step(&clock, 1);
    assert!(tick_now(&mut i, Waker::noop()).is_ready());

    i.reset_at(Instant::now() - ns(MS));
    assert!(tick_now(&mut i, Waker::noop()).is_ready());

    i.reset_after(Duration::MAX);
    assert!(tick_now(&mut i, Waker::noop()).is_pending());
    step(&clock, 100 * 365 * 86_400 * SEC);
    assert!(tick_now(&mut i, Waker::noop()).is_pending());
}

// `interval` ("a zero period is taken as 1 ns"), a period of `Duration::MAX` (one tick, then
// none; never a panic) and `interval_at` with a start long past.
#[test]
fn interval_periods_at_the_edges() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut z = driver.interval(Duration::ZERO);
    assert_eq!(z.period(), ns(1));
    let a = match tick_now(&mut z, Waker::noop()) {
        Poll::Ready(t) => t,
        Poll::Pending => panic!(),
    };
    assert!(tick_now(&mut z, Waker::noop()).is_pending());
    step(&clock, 1);
    match tick_now(&mut z, Waker::noop()) {
        Poll::Ready(b) => assert_eq!(b - a, ns(1)),
        Poll::Pending => panic!("no tick 1 ns later"),
    }
    assert_eq!(interval(Duration::ZERO).period(), ns(1));

    let mut m = driver.interval(Duration::MAX);
    assert!(tick_now(&mut m, Waker::noop()).is_ready());
    assert!(tick_now(&mut m, Waker::noop()).is_pending());
    step(&clock, 1_000 * SEC);
    assert!(tick_now(&mut m, Waker::noop()).is_pending());

    let long_ago = Instant::now()
        .checked_sub(Duration::from_secs(86_400))
        .unwrap_or_else(Instant::now);
    let mut p = interval_at(long_ago, Duration::from_secs(3_600));
    p.set_missed_tick_behavior(Missed::Skip);
    assert!(poll_noop(&mut pin!(p.tick())).is_ready());
    assert!(poll_noop(&mut pin!(p.tick())).is_pending());
}

// `Interval::tolerance` ("Ticks may come up to `tolerance` after their scheduled time"): each
// tick is woken inside its window and none is early.
#[test]
fn a_tolerant_interval_ticks_inside_each_window() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut i = driver.interval(ns(10 * MS)).tolerance(ns(2 * MS));
    let (st, waker) = stamp(&clock);
    assert!(tick_now(&mut i, &waker).is_ready());
    clock.set_auto_advance(true);
    for k in 1..=6u64 {
        assert!(tick_now(&mut i, &waker).is_pending());
        assert!(eventually(|| st.at.lock().unwrap().len() as u64 == k));
        let at = *st.at.lock().unwrap().last().unwrap();
        assert!(
            (k * 10 * MS..=k * 10 * MS + 2 * MS).contains(&at),
            "tick {k} woken at {at}"
        );
        assert!(tick_now(&mut i, &waker).is_ready());
    }
}

// `Interval` as a `Stream` and the doc example of `interval` ("assert_eq!(second - first,
// period)") on the real clock: the scheduled times are exact.
#[test]
fn a_free_interval_yields_exact_scheduled_times() {
    use futures::StreamExt;
    let start = Instant::now();
    let ticks: Vec<Instant> = futures::executor::block_on(interval(ns(500 * US)).take(4).collect());
    for w in ticks.windows(2) {
        assert_eq!(w[1] - w[0], ns(500 * US));
    }
    assert!(Instant::now() >= ticks[3], "a tick came before its time");
    assert!(ticks[0] >= start);
}

// ---------------------------------------------------------------------------------------------
// DelayQueue
// ---------------------------------------------------------------------------------------------

fn drain<T>(q: &mut DelayQueue<T>) -> Vec<T> {
    let mut out = Vec::new();
    let mut cx = Context::from_waker(Waker::noop());
    while let Poll::Ready(Some(e)) = q.poll_expired(&mut cx) {
        out.push(e.into_inner());
    }
    out
}

// `DelayQueue::poll_expired`: "deadline order, insertion order among equal deadlines";
// `Ready(None)` when empty; `Pending` until the next is due.
#[test]
fn a_delay_queue_returns_values_in_deadline_then_insertion_order() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut q = driver.delay_queue();
    let mut cx = Context::from_waker(Waker::noop());
    assert!(matches!(q.poll_expired(&mut cx), Poll::Ready(None)));
    let keys: Vec<_> = [(0, 5), (1, 3), (2, 5), (3, 1), (4, 3), (5, 5)]
        .into_iter()
        .map(|(v, d)| q.insert(v, ns(d * MS)))
        .collect();
    assert_eq!(q.len(), 6);
    // `peek`: the value returned next, the earliest deadline.
    assert_eq!(q.peek(), Some(keys[3]));
    assert!(q.poll_expired(&mut cx).is_pending());
    clock.advance(MS - 1);
    assert!(q.poll_expired(&mut cx).is_pending(), "early");
    clock.advance(1);
    assert_eq!(drain(&mut q), [3]);
    clock.advance(10 * MS);
    assert_eq!(drain(&mut q), [1, 4, 0, 2, 5]);
    assert!(q.is_empty());
    assert!(matches!(q.poll_expired(&mut cx), Poll::Ready(None)));
    // Poll again after an insert: it works again.
    q.insert(9, ns(MS));
    assert!(q.poll_expired(&mut cx).is_pending());
    clock.advance(MS);
    assert_eq!(drain(&mut q), [9]);
}

// `DelayQueue::poll_expired`: "`Pending` until the next one is due, with the task woken then
// (or when an insert or reset makes one due sooner)".
#[test]
fn a_delay_queue_wakes_its_task_when_due_and_when_made_due_sooner() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut q = driver.delay_queue();
    let (woken, waker) = counter();
    let mut cx = Context::from_waker(&waker);
    let far = q.insert("far", ns(100 * MS));
    assert!(q.poll_expired(&mut cx).is_pending());
    clock.wait_idle(1);
    q.insert("near", ns(10 * MS));
    assert_eq!(count(&woken), 1, "an insert due sooner wakes the task");
    assert!(q.poll_expired(&mut cx).is_pending());
    assert!(q.reset(&far, ns(MS)));
    assert_eq!(count(&woken), 2, "a reset due sooner wakes the task");
    assert!(q.poll_expired(&mut cx).is_pending());
    step(&clock, MS);
    assert_eq!(count(&woken), 3, "woken when due");
    match q.poll_expired(&mut cx) {
        Poll::Ready(Some(e)) => assert_eq!(*e.get_ref(), "far"),
        other => panic!("{other:?}"),
    }
    assert!(q.poll_expired(&mut cx).is_pending());
    step(&clock, 9 * MS);
    assert_eq!(count(&woken), 4);
    assert_eq!(drain(&mut q), ["near"]);
}

// `Key` ("A key whose value came back or was removed goes stale ..., and another queue's key
// names nothing here: either gets `None`/`false`, never another value"), `remove`,
// `try_remove`, `reset`, `reset_at`, `deadline` and `clear`.
#[test]
fn stale_and_foreign_keys_name_nothing() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut a = driver.delay_queue();
    let mut b = driver.delay_queue();
    let ka = a.insert("a", ns(MS));
    let kb = b.insert("b", ns(MS));
    // Foreign keys.
    assert_eq!(b.remove(&ka), None);
    assert!(b.try_remove(&ka).is_none());
    assert!(!b.reset(&ka, ns(5 * MS)));
    assert!(!b.reset_at(&ka, Instant::now()));
    assert_eq!(b.deadline(&ka), None);
    assert_eq!(a.remove(&kb), None);
    assert_eq!((a.len(), b.len()), (1, 1));

    // Removed: stale, and a later value in its slot is not named by it.
    assert_eq!(a.remove(&ka), Some("a"));
    assert_eq!(a.remove(&ka), None);
    let ka2 = a.insert("a2", ns(MS));
    assert_ne!(ka, ka2);
    assert_eq!(a.remove(&ka), None);
    assert!(!a.reset(&ka, ns(MS)));
    assert_eq!(a.deadline(&ka), None);
    assert_eq!(a.len(), 1);

    // Came back: stale.
    clock.advance(MS);
    let mut cx = Context::from_waker(Waker::noop());
    let e = match a.poll_expired(&mut cx) {
        Poll::Ready(Some(e)) => e,
        other => panic!("{other:?}"),
    };
    assert_eq!(e.key(), ka2);
    assert_eq!(a.remove(&ka2), None);
    assert!(!a.reset(&ka2, ns(MS)));

    // Cleared: stale.
    let kc = b.insert("c", ns(SEC));
    b.clear();
    assert!(b.is_empty());
    assert_eq!(b.remove(&kb), None);
    assert_eq!(b.deadline(&kc), None);
    assert!(!b.reset(&kc, ns(MS)));
    assert!(matches!(b.poll_expired(&mut cx), Poll::Ready(None)));
}

// `DelayQueue::deadline`, `try_remove` ("with its key and deadline") and `Expired::deadline`
// ("The deadline it was due at"), on a simulated clock where an `Instant` counts by its
// distance from the real now.
#[test]
fn delay_queue_deadlines_read_back() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut q = driver.delay_queue();
    let k = q.insert(1u8, ns(10 * MS));
    let before = Instant::now();
    let d = q.deadline(&k).unwrap();
    let after = Instant::now();
    assert!(d >= before + ns(10 * MS) && d <= after + ns(10 * MS));
    let before = Instant::now();
    let e = q.try_remove(&k).unwrap();
    let after = Instant::now();
    assert!(e.deadline() >= before + ns(10 * MS) && e.deadline() <= after + ns(10 * MS));
    assert_eq!((e.key(), e.into_inner()), (k, 1));

    q.insert(2u8, ns(4 * MS));
    clock.advance(6 * MS);
    let before = Instant::now();
    let mut cx = Context::from_waker(Waker::noop());
    let e = match q.poll_expired(&mut cx) {
        Poll::Ready(Some(e)) => e,
        other => panic!("{other:?}"),
    };
    let after = Instant::now();
    // Due 2 ms before the reading at which it was handed out.
    assert!(e.deadline() >= before - ns(2 * MS) && e.deadline() <= after - ns(2 * MS));
}

// `DelayQueue::insert_at` ("at once if it has passed"), `reset` to zero, `insert` of
// `Duration::MAX` (never due) and `try_insert`.
#[test]
fn delay_queue_edges() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut q = driver.delay_queue();
    let never = q.insert("never", Duration::MAX);
    let tried = q.try_insert("tried", Duration::MAX).unwrap();
    q.insert_at("past", Instant::now() - ns(SEC));
    assert_eq!(drain(&mut q), ["past"]);
    let k = q.insert("moved", ns(SEC));
    assert!(q.reset(&k, Duration::ZERO));
    assert_eq!(drain(&mut q), ["moved"]);
    let k = q.try_insert("later", ns(MS)).unwrap();
    assert!(q.deadline(&k).is_some());
    clock.advance(100 * 365 * 86_400 * SEC);
    assert_eq!(drain(&mut q), ["later"]);
    assert_eq!(q.len(), 2);
    assert!(q.deadline(&never).is_some());
    assert_eq!(q.remove(&tried), Some("tried"));
    assert!(q.reset_at(&never, Instant::now()));
    assert_eq!(drain(&mut q), ["never"]);
}

// `DelayQueue::try_reserve`: "returning [`Error::Full`] or [`Error::NoMemory`] (nothing
// changed) instead of aborting"; `with_capacity`, `capacity`, `shrink_to_fit`.
#[test]
fn delay_queue_capacity_and_a_refused_reservation() {
    let mut q: DelayQueue<u32> = DelayQueue::with_capacity(100);
    assert!(q.capacity() >= 100);
    let k = q.insert(1, Duration::from_secs(3_600));
    let cap = q.capacity();
    for n in [usize::MAX, 1 << 33, 1 << 32] {
        assert!(q.try_reserve(n).is_err(), "reserving {n}");
        assert_eq!(q.capacity(), cap, "changed by a refused reservation");
        assert_eq!(q.len(), 1);
    }
    assert!(matches!(
        q.try_reserve(usize::MAX),
        Err(callwheel::Error::Full { .. })
    ));
    q.shrink_to_fit();
    assert!(q.capacity() >= 1);
    assert_eq!(q.remove(&k), Some(1));
}

// `DelayQueue::with_tolerance` ("Values may come back up to `tolerance` after their deadline
// (never before)"): in the order of their firing instants (`callwheel::firing_instant`).
#[test]
fn a_tolerant_delay_queue_returns_values_inside_their_windows() {
    let (driver, clock) = Driver::manual().unwrap();
    let tol = 4 * MS;
    let mut q = driver.delay_queue().with_tolerance(ns(tol));
    let deadlines = [10 * MS, 10 * MS + 5, 11 * MS, 30 * MS];
    for (i, d) in deadlines.iter().enumerate() {
        q.insert(i, ns(*d));
    }
    let mut cx = Context::from_waker(Waker::noop());
    let mut got: Vec<(usize, u64)> = Vec::new();
    let mut now = 0;
    while got.len() < deadlines.len() && now <= 40 * MS {
        while let Poll::Ready(Some(e)) = q.poll_expired(&mut cx) {
            got.push((e.into_inner(), now));
        }
        clock.advance(10 * US);
        now += 10 * US;
    }
    assert_eq!(got.len(), deadlines.len(), "{got:?}");
    for &(i, at) in &got {
        let d = deadlines[i];
        assert!(
            at >= d && at <= d + tol,
            "value {i} at {at}, window [{d}, {}]",
            d + tol
        );
        assert!(
            at + 10 * US > callwheel::firing_instant(d, tol),
            "value {i} late"
        );
    }

    // A tolerance past every range: no panic, nothing early.
    let mut wide = driver.delay_queue().with_tolerance(Duration::MAX);
    wide.insert("x", ns(MS));
    assert!(wide.poll_expired(&mut cx).is_pending());
    clock.advance(MS - 1);
    assert!(wide.poll_expired(&mut cx).is_pending());
}

// `DelayQueue::peek` ("The key of the value [`DelayQueue::poll_expired`] returns next") on a
// queue with a tolerance, where values come back in the order of their firing instants: two
// values of different deadlines that share a firing instant, the later deadline inserted first.
#[test]
fn peek_names_the_next_value_of_a_tolerant_queue() {
    let tol = MS;
    let (d1, d2) = (10 * MS + 1, 10 * MS + 2);
    assert_eq!(
        callwheel::firing_instant(d1, tol),
        callwheel::firing_instant(d2, tol)
    );
    let (driver, clock) = Driver::manual().unwrap();
    let mut q = driver.delay_queue().with_tolerance(ns(tol));
    let k2 = q.insert("second deadline", ns(d2));
    let k1 = q.insert("first deadline", ns(d1));
    let peeked = q.peek();
    assert!(peeked == Some(k1) || peeked == Some(k2));
    clock.advance(SEC);
    let mut cx = Context::from_waker(Waker::noop());
    let e = match q.poll_expired(&mut cx) {
        Poll::Ready(Some(e)) => e,
        other => panic!("{other:?}"),
    };
    assert_eq!(peeked, Some(e.key()), "peek named another value");
    assert_eq!(q.peek().map(|k| k != e.key()), Some(true));
}

// `DelayQueue` ("the driver holds one registration per queue, not one per value").
#[test]
fn a_delay_queue_holds_one_registration() {
    let (driver, _clock) = Driver::manual().unwrap();
    let mut q = driver.delay_queue();
    for i in 0..50u64 {
        q.insert(i, ns((i + 1) * MS));
    }
    let mut cx = Context::from_waker(Waker::noop());
    assert!(q.poll_expired(&mut cx).is_pending());
    assert_eq!(driver.pending(), 1);
}

// `DelayQueue::poll_expired` with its driver gone ("every value is returned at once, in the
// same order", as a sleep on it completes at once), and the crate's "Nothing here panics on
// any input": each poll returns.
#[test]
fn a_delay_queue_whose_driver_was_dropped_hands_out_its_values_at_once() {
    let (driver, _clock) = Driver::manual().unwrap();
    let mut q = driver.delay_queue();
    q.insert("second", ns(2 * SEC));
    q.insert("first", ns(SEC));
    drop(driver);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut cx = Context::from_waker(Waker::noop());
        let mut out = Vec::new();
        for _ in 0..3 {
            out.push(q.poll_expired(&mut cx).map(|e| e.map(Expired::into_inner)));
        }
        let _ = tx.send(out);
    });
    let out = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("poll_expired returns");
    assert_eq!(
        out,
        [
            Poll::Ready(Some("first")),
            Poll::Ready(Some("second")),
            Poll::Ready(None)
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Executors' own drivers: runtimes shut down, futures moved between runtimes and threads
// ---------------------------------------------------------------------------------------------

#[cfg(feature = "tokio")]
mod on_tokio {
    use super::*;

    fn current_thread() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    // docs/async.md ("A runtime shut down with timers pending shuts their wheel down: every
    // registered waker is woken, and a sleep polled again afterwards ... registers where it is
    // polled then, keeping its deadline — it never completes early and never waits for ever").
    #[test]
    fn a_runtime_dropped_with_a_sleep_pending_hands_it_over() {
        let rt = current_thread();
        let mut s = sleep(ns(300 * MS));
        let deadline = s.deadline();
        let (woken, waker) = counter();
        rt.block_on(async {
            assert!(poll_pin(Pin::new(&mut s), &waker).is_pending());
        });
        assert_eq!(count(&woken), 0);
        drop(rt);
        assert!(count(&woken) >= 1, "the runtime's shutdown woke nothing");
        futures::executor::block_on(&mut s);
        assert!(Instant::now() >= deadline, "completed before its deadline");
    }

    // docs/async.md ("A sleep moved to another runtime while its own still runs stays on its
    // first wheel, fired by that runtime's driver"): awaited on a second runtime, it ends, not
    // before its deadline.
    #[test]
    fn a_sleep_moved_to_another_runtime_ends_at_its_deadline() {
        let first = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let (tx, rx) = mpsc::channel();
        first.spawn(async move {
            let mut s = sleep(ns(20 * MS));
            std::future::poll_fn(|cx| {
                assert!(s.poll_sleep(cx).is_pending());
                Poll::Ready(())
            })
            .await;
            tx.send(s).unwrap();
        });
        let s = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        let deadline = s.deadline();
        current_thread().block_on(s);
        assert!(Instant::now() >= deadline);
        drop(first);
    }

    // docs/async.md ("if that runtime is a current-thread one that nobody drives, it fires when
    // that runtime is driven again").
    #[test]
    fn a_sleep_on_an_idle_current_thread_runtime_fires_when_it_is_driven_again() {
        let rt = current_thread();
        let mut s = sleep(ns(10 * MS));
        let deadline = s.deadline();
        rt.block_on(async {
            assert!(poll_noop(&mut s).is_pending());
        });
        let (tx, rx) = mpsc::channel();
        let waiter = std::thread::spawn(move || {
            futures::executor::block_on(s);
            tx.send(Instant::now()).unwrap();
        });
        // Drive the runtime again for longer than the deadline.
        rt.block_on(sleep(ns(60 * MS)));
        let done = rx
            .recv_timeout(Duration::from_secs(5))
            .expect("fired once its runtime was driven");
        assert!(done >= deadline);
        waiter.join().unwrap();
    }

    // docs/async.md ("A runtime without an I/O driver ... its timers are served as outside a
    // runtime"), and "Nothing here panics".
    #[test]
    fn a_runtime_without_io_still_serves_its_timers() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let deadline = rt.block_on(async {
            let s = sleep(ns(2 * MS));
            let d = s.deadline();
            s.await;
            assert!(timeout(ns(MS), pending::<()>()).await.is_err());
            d
        });
        assert!(Instant::now() >= deadline);
    }

    // `sleep` on tokio's runtimes: never before the deadline; a timeout around a ready future
    // gives its output.
    #[test]
    fn free_timers_on_tokio_runtimes_are_never_early() {
        let multi = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        for rt in [current_thread(), multi] {
            rt.block_on(async {
                let tasks: Vec<_> = (1..=8u64)
                    .map(|i| {
                        tokio::spawn(async move {
                            let s = sleep(ns(i * 500 * US));
                            let d = s.deadline();
                            s.await;
                            assert!(Instant::now() >= d);
                        })
                    })
                    .collect();
                for t in tasks {
                    t.await.unwrap();
                }
                assert_eq!(timeout(ns(MS), async { 3 }).await, Ok(3));
            });
        }
    }
}

#[cfg(feature = "async-io")]
mod on_async_io {
    use super::*;

    // The crate's docs ("a thread that ends hands its timers back (they register again where
    // they are polled next)"): a sleep registered on a thread that ended completes at its
    // deadline on the thread that polls it next.
    #[test]
    fn a_sleep_whose_thread_ended_completes_at_its_deadline_elsewhere() {
        let s = std::thread::spawn(|| {
            let mut s = sleep(ns(30 * MS));
            assert!(poll_noop(&mut s).is_pending());
            s
        })
        .join()
        .unwrap();
        let deadline = s.deadline();
        smol::block_on(s);
        assert!(Instant::now() >= deadline);
    }
}

#[cfg(feature = "test-util")]
mod paused {
    use super::*;
    use callwheel_async::{advance, is_paused, pause, resume};

    const HOUR: Duration = Duration::from_secs(3_600);

    // `advance` ("firing every timer due by the new time in deadline order") and the paused
    // module ("[`advance`] fires every timer due by the new time exactly"): to the nanosecond.
    #[tokio::test(start_paused = true)]
    async fn advance_fires_exactly_what_is_due() {
        let mut a = pin!(sleep(HOUR));
        assert!(is_paused());
        let mut b = pin!(sleep(HOUR + ns(1)));
        let mut t = pin!(timeout(HOUR, pending::<()>()));
        assert!(poll_pin(a.as_mut(), Waker::noop()).is_pending());
        assert!(poll_pin(b.as_mut(), Waker::noop()).is_pending());
        assert!(poll_pin(t.as_mut(), Waker::noop()).is_pending());
        advance(HOUR - ns(1)).await;
        assert!(poll_pin(a.as_mut(), Waker::noop()).is_pending(), "early");
        assert!(poll_pin(t.as_mut(), Waker::noop()).is_pending(), "early");
        advance(ns(1)).await;
        assert!(poll_pin(a.as_mut(), Waker::noop()).is_ready());
        assert!(matches!(
            poll_pin(t.as_mut(), Waker::noop()),
            Poll::Ready(Err(_))
        ));
        assert!(poll_pin(b.as_mut(), Waker::noop()).is_pending(), "early");
        advance(ns(1)).await;
        assert!(poll_pin(b.as_mut(), Waker::noop()).is_ready());
    }

    // `interval` on paused time (the paused module: "the timers made in it count on that
    // clock"): auto-advance ticks hours apart at once, on the grid, never early.
    #[tokio::test(start_paused = true)]
    async fn an_interval_on_paused_time_ticks_on_its_grid() {
        let real = Instant::now();
        let start = tokio::time::Instant::now();
        let mut i = interval(HOUR);
        let first = i.tick().await;
        for k in 1..=3u32 {
            let t = i.tick().await;
            assert_eq!(t - first, HOUR * k);
            let paused = tokio::time::Instant::now() - start;
            assert!(paused >= HOUR * k, "tick {k} at {paused:?}");
        }
        assert!(real.elapsed() < Duration::from_secs(60));
    }

    // `DelayQueue::new` in a paused runtime: its delays count on the paused clock.
    #[tokio::test(start_paused = true)]
    async fn a_delay_queue_on_paused_time_honours_advance() {
        let mut q = DelayQueue::new();
        q.insert("b", HOUR * 2);
        q.insert("a", HOUR);
        let mut cx = Context::from_waker(Waker::noop());
        assert!(q.poll_expired(&mut cx).is_pending());
        advance(HOUR - ns(1)).await;
        assert!(q.poll_expired(&mut cx).is_pending());
        advance(ns(1)).await;
        match q.poll_expired(&mut cx) {
            Poll::Ready(Some(e)) => assert_eq!(e.into_inner(), "a"),
            other => panic!("{other:?}"),
        }
        assert!(q.poll_expired(&mut cx).is_pending());
    }

    // `is_paused` ("Whether time is paused for the timers made in the current runtime") in a
    // runtime started paused, asked before its first timer is made.
    // `is_paused` ("since its start ..., before any timer is made too") and `advance` in a
    // runtime started paused, before its first timer: time is paused, and advancing moves it.
    #[tokio::test(start_paused = true)]
    async fn is_paused_and_advance_in_a_runtime_started_paused_before_any_timer() {
        assert!(
            is_paused(),
            "time is paused, and a timer made now counts on the paused clock"
        );
        let start = tokio::time::Instant::now();
        advance(HOUR).await;
        assert_eq!(start.elapsed(), HOUR, "advance moved paused time");
        let mut s = pin!(sleep(HOUR));
        assert!(poll_pin(s.as_mut(), Waker::noop()).is_pending());
        assert!(is_paused());
    }

    // `is_paused`: "(Time paused by `tokio::time::pause` after this thread's first timer in
    // the runtime is tokio's alone)": the timers made next still count on the real clock.
    #[tokio::test]
    async fn tokios_own_pause_after_a_first_timer_is_not_callwheels() {
        sleep(Duration::from_micros(10)).await;
        tokio::time::pause();
        assert!(
            !is_paused(),
            "timers made now still count on the real clock"
        );
        tokio::time::resume();
    }

    // `resume` in a runtime started paused, before its first timer: real time moves again.
    #[tokio::test(start_paused = true)]
    async fn resume_before_any_timer_resumes_real_time() {
        resume();
        assert!(!is_paused());
        let start = tokio::time::Instant::now();
        std::thread::sleep(Duration::from_millis(2));
        assert!(
            start.elapsed() >= Duration::from_millis(2),
            "time is still paused"
        );
    }

    // `sleep` ("`Duration::MAX` never completes") on paused time, where the runtime
    // auto-advances to its next timer: a timeout of 500 years around it elapses, and the sleep
    // still has not completed after 1,000 years of paused time; nothing panics.
    #[tokio::test(start_paused = true)]
    async fn duration_max_never_completes_on_paused_time() {
        const YEAR: Duration = Duration::from_secs(365 * 86_400);
        let start = tokio::time::Instant::now();
        let r = timeout(YEAR * 500, sleep(Duration::MAX)).await;
        assert!(
            r.is_err(),
            "the sleep completed after {:?} of paused time",
            tokio::time::Instant::now() - start
        );
        let forever = tokio::spawn(sleep(Duration::MAX));
        tokio::time::sleep(YEAR * 1_000).await;
        assert!(
            !forever.is_finished(),
            "completed by {:?} of paused time",
            tokio::time::Instant::now() - start
        );
    }

    // `pause` ("with time already paused, it does nothing"), `resume` ("Without a pause it does
    // nothing"), `advance` ("When time is not paused it does nothing") and `is_paused`: none
    // panics, inside or outside a runtime.
    #[test]
    fn the_calls_tokio_panics_on_do_nothing() {
        pause();
        resume();
        assert!(!is_paused());
        futures::executor::block_on(advance(HOUR));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            resume();
            advance(HOUR).await;
            assert!(!is_paused());
            pause();
            pause();
            assert!(is_paused());
            let mut s = pin!(sleep(HOUR));
            assert!(poll_pin(s.as_mut(), Waker::noop()).is_pending());
            advance(HOUR).await;
            assert!(poll_pin(s.as_mut(), Waker::noop()).is_ready());
            resume();
            assert!(!is_paused());
        });
    }

    // `resume` ("those made while paused still fire, at their deadlines on tokio's clock"):
    // a sleep made paused, after resuming, still ends.
    #[tokio::test]
    async fn a_sleep_made_paused_still_fires_after_resume() {
        pause();
        let s = sleep(ns(2 * MS));
        let mut s = pin!(s);
        assert!(poll_pin(s.as_mut(), Waker::noop()).is_pending());
        resume();
        let r = tokio::time::timeout(Duration::from_secs(5), s).await;
        assert!(
            r.is_ok(),
            "a sleep made while paused never fired after resume"
        );
    }
}
