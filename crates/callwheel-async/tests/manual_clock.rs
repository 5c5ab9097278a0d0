//! The futures on a simulated clock, where every outcome is exact: sleeps complete at their
//! deadline and in deadline order, tolerant sleeps share the fewest wake-ups with each inside
//! its window, intervals follow each missed-tick policy (against a model written from the
//! policies' documentation), and a delay queue agrees with a model under random inserts,
//! removals, resets and clock moves.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use callwheel::stabbing_optimum;
use callwheel_async::{Clock, Driver, ManualClock, Missed, Sleep};
use proptest::prelude::*;

const MS: u64 = 1_000_000;

fn poll_once<F: Future + Unpin>(f: &mut F, waker: &Waker) -> Poll<F::Output> {
    Pin::new(f).poll(&mut Context::from_waker(waker))
}

/// Moves the clock and waits for the driver to have fired everything due by then.
fn advance(clock: &ManualClock, ns: u64) {
    clock.advance(ns);
    clock.wait_idle(1);
}

#[test]
fn sleeps_complete_at_their_deadline_in_deadline_order() {
    let (driver, clock) = Driver::manual().unwrap();
    let deadlines = [7u64, 3, 9, 3, 1, 12, 5];
    let mut sleeps: Vec<Sleep> = deadlines
        .iter()
        .map(|&d| driver.sleep(Duration::from_nanos(d * MS)))
        .collect();
    let noop = Waker::noop();
    for s in &mut sleeps {
        assert!(poll_once(s, noop).is_pending());
    }
    assert_eq!(driver.pending(), deadlines.len());
    let mut done_at = vec![None; deadlines.len()];
    for step in 1..=12u64 {
        advance(&clock, MS);
        for (i, s) in sleeps.iter_mut().enumerate() {
            if done_at[i].is_none() && poll_once(s, noop).is_ready() {
                done_at[i] = Some(step);
            }
        }
    }
    let expected: Vec<Option<u64>> = deadlines.iter().map(|&d| Some(d)).collect();
    assert_eq!(done_at, expected);
    assert_eq!(driver.pending(), 0);
    // A completed sleep stays complete; a reset makes it pending again, on its new deadline.
    assert!(poll_once(&mut sleeps[0], noop).is_ready());
    sleeps[0].reset(std::time::Instant::now() + Duration::from_nanos(2 * MS));
    assert!(poll_once(&mut sleeps[0], noop).is_pending());
    advance(&clock, 2 * MS);
    assert!(poll_once(&mut sleeps[0], noop).is_ready());
}

// A timeout's tolerance reaches its sleep whether it is set before the sleep is made or after:
// at its deadline an exact timeout has elapsed, and one whose window is [10, 15] ms not yet
// (the wheel fires it at a slot boundary inside the window, after 10 ms), nor after it.
#[test]
fn a_timeouts_tolerance_reaches_its_sleep_made_or_not() {
    let (driver, clock) = Driver::manual().unwrap();
    let noop = Waker::noop();
    let deadline = Duration::from_nanos(10 * MS);
    let window = Duration::from_nanos(5 * MS);
    let mut exact = Box::pin(driver.timeout(deadline, std::future::pending::<()>()));
    let mut before = Box::pin(
        driver
            .timeout(deadline, std::future::pending::<()>())
            .tolerance(window),
    );
    let mut after = driver.timeout(deadline, std::future::pending::<()>());
    // Made (not polled) before the tolerance is set.
    assert!(!after.sleep().is_elapsed());
    let mut after = Box::pin(after.tolerance(window));
    for t in [&mut exact, &mut before, &mut after] {
        assert!(t.as_mut().poll(&mut Context::from_waker(noop)).is_pending());
    }
    advance(&clock, 10 * MS);
    let mut cx = Context::from_waker(noop);
    assert!(exact.as_mut().poll(&mut cx).is_ready());
    assert!(before.as_mut().poll(&mut cx).is_pending());
    assert!(after.as_mut().poll(&mut cx).is_pending());
    advance(&clock, 5 * MS);
    assert!(before.as_mut().poll(&mut cx).is_ready());
    assert!(after.as_mut().poll(&mut cx).is_ready());
}

/// A waker that records the clock's reading when it is woken.
struct Stamp {
    clock: ManualClock,
    at: Mutex<Option<u64>>,
}

impl Wake for Stamp {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        let mut at = self.at.lock().unwrap();
        assert!(at.is_none(), "woken twice");
        *at = Some(self.clock.now());
    }
}

#[test]
fn tolerant_sleeps_share_wake_ups_near_the_fewest_each_inside_its_window() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut windows = Vec::new();
    let mut held = Vec::new();
    for _ in 0..1_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let d = 1 + x % (1_000 * MS);
        let tol = d / 20;
        let mut s = driver
            .sleep(Duration::from_nanos(d))
            .tolerance(Duration::from_nanos(tol));
        let stamp = Arc::new(Stamp {
            clock: clock.clone(),
            at: Mutex::new(None),
        });
        assert!(poll_once(&mut s, &Waker::from(Arc::clone(&stamp))).is_pending());
        windows.push((d, d + tol));
        held.push((s, stamp));
    }
    let jumps_before = clock.jumps();
    clock.set_auto_advance(true);
    while driver.pending() > 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let wakeups = clock.jumps() - jumps_before;
    for ((_, stamp), &(d, end)) in held.iter().zip(&windows) {
        let at = stamp.at.lock().unwrap().expect("every sleep was woken");
        assert!(at >= d && at <= end, "woken at {at}, window [{d}, {end}]");
    }
    // At least the fewest, and within 5 % of them: a tolerant sleep fires at the wheel's
    // firing instant for its window, so a wake-up serves the windows whose instant has come.
    let optimum = stabbing_optimum(&windows);
    assert!(
        wakeups >= optimum && wakeups * 100 <= optimum * 105,
        "{wakeups} wake-ups, optimum {optimum}"
    );
    // The driver's own counts agree: every sleep fired once, one planned wake-up per jump.
    let give_up = std::time::Instant::now() + Duration::from_secs(10);
    while driver.stats().fired < 1_000 && std::time::Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(1));
    }
    let stats = driver.stats();
    assert_eq!(stats.fired, 1_000);
    assert_eq!(stats.wakeups, wakeups);
}

/// The next tick by the policies' documentation, not by the code: on time, one period after
/// the last; late by a period or more, Burst keeps the grid and replays, Delay restarts from
/// now, Skip moves to the first grid point after now.
fn model_next(policy: Missed, deadline: u64, period: u64, now: u64) -> u64 {
    if now < deadline + period {
        return deadline + period;
    }
    match policy {
        Missed::Burst => deadline + period,
        Missed::Delay => now + period,
        Missed::Skip => deadline + ((now - deadline) / period + 1) * period,
    }
}

#[test]
fn intervals_follow_each_missed_tick_policy() {
    for policy in [Missed::Burst, Missed::Delay, Missed::Skip] {
        let (driver, clock) = Driver::manual().unwrap();
        let period = 10 * MS;
        let mut every = driver.interval(Duration::from_nanos(period));
        every.set_missed_tick_behavior(policy);
        let noop = Waker::noop();
        let mut cx = Context::from_waker(noop);
        let mut x: u64 = 99;
        let mut expected = 0; // the first tick is at once, at 0
        let mut first = None;
        for _ in 0..300 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Mostly small steps, sometimes a stall of several periods.
            let step = if x.is_multiple_of(7) {
                x % (45 * MS)
            } else {
                x % (4 * MS)
            };
            advance(&clock, step);
            if let Poll::Ready(at) = every.poll_tick(&mut cx) {
                let now = clock.now();
                assert!(now >= expected, "{policy:?}: a tick before its time");
                let first = *first.get_or_insert(at);
                assert_eq!(
                    (at - first).as_nanos() as u64,
                    expected,
                    "{policy:?}: tick at the wrong grid point"
                );
                expected = model_next(policy, expected, period, now);
            }
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Insert(u64),
    Remove(usize),
    Reset(usize, u64),
    Advance(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..50u64).prop_map(Op::Insert),
        1 => any::<usize>().prop_map(Op::Remove),
        1 => (any::<usize>(), 0..50u64).prop_map(|(k, d)| Op::Reset(k, d)),
        2 => (0..30u64).prop_map(Op::Advance),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A delay queue against a model: pending values by key with (deadline, order); every
    /// drain returns exactly the values due, by deadline then order, with the keys issued.
    #[test]
    fn delay_queue_agrees_with_a_model(ops in proptest::collection::vec(op(), 1..200)) {
        let (driver, clock) = Driver::manual().unwrap();
        let mut queue = driver.delay_queue::<usize>();
        let mut keys = Vec::new();
        // key index -> (deadline, order)
        let mut model: BTreeMap<usize, (u64, u64)> = BTreeMap::new();
        let mut order = 0u64;
        let noop = Waker::noop();
        let mut cx = Context::from_waker(noop);
        for op in ops {
            match op {
                Op::Insert(d) => {
                    let k = queue.insert(keys.len(), Duration::from_nanos(d * MS));
                    model.insert(keys.len(), (clock.now() + d * MS, order));
                    keys.push(k);
                    order += 1;
                }
                Op::Remove(i) if !keys.is_empty() => {
                    let i = i % keys.len();
                    prop_assert_eq!(queue.remove(&keys[i]), model.remove(&i).map(|_| i));
                }
                Op::Reset(i, d) if !keys.is_empty() => {
                    let i = i % keys.len();
                    let live = model.contains_key(&i);
                    prop_assert_eq!(queue.reset(&keys[i], Duration::from_nanos(d * MS)), live);
                    if live {
                        model.insert(i, (clock.now() + d * MS, order));
                        order += 1;
                    }
                }
                Op::Advance(d) => clock.advance(d * MS),
                _ => {}
            }
            let now = clock.now();
            let mut due: Vec<(u64, u64, usize)> = model
                .iter()
                .filter(|(_, &(d, _))| d <= now)
                .map(|(&i, &(d, o))| (d, o, i))
                .collect();
            due.sort_unstable();
            let mut got = Vec::new();
            while let Poll::Ready(Some(e)) = queue.poll_expired(&mut cx) {
                prop_assert_eq!(e.key(), keys[*e.get_ref()]);
                got.push(e.into_inner());
            }
            let want: Vec<usize> = due.iter().map(|&(_, _, i)| i).collect();
            prop_assert_eq!(&got, &want);
            for i in want {
                model.remove(&i);
            }
            prop_assert_eq!(queue.len(), model.len());
        }
    }
}

/// Values that expire together at one reading of the clock report deadlines exactly as far
/// apart as they were inserted (one conversion anchor per reading, not a clock read each).
#[test]
fn a_burst_of_expiries_reports_deadlines_exactly_apart() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut queue = driver.delay_queue::<u32>();
    let delays = [1_000u64, 1_250, 4_000, 9_999];
    for (i, &d) in delays.iter().enumerate() {
        queue.insert(i as u32, Duration::from_nanos(d));
    }
    clock.advance(10_000);
    let waker = Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    let mut got = Vec::new();
    while let Poll::Ready(Some(e)) = queue.poll_expired(&mut cx) {
        got.push(e.deadline());
    }
    assert_eq!(got.len(), delays.len());
    for (pair, d) in got.windows(2).zip(delays.windows(2)) {
        assert_eq!(pair[1] - pair[0], Duration::from_nanos(d[1] - d[0]));
    }
}

/// A manual clock moved while nothing is registered on its driver wakes no thread; with a
/// sleep registered, moves short of its deadline wake none either, and the move past it fires
/// it.
#[test]
fn moving_the_manual_clock_wakes_the_driver_only_for_a_deadline() {
    let (driver, clock) = Driver::manual().unwrap();
    clock.wait_idle(1);
    let before = clock.thread_wakeups();
    for _ in 0..100 {
        clock.advance(MS);
    }
    clock.wait_idle(1);
    assert_eq!(
        clock.thread_wakeups(),
        before,
        "the driver woke with nothing registered"
    );
    let mut s = driver.sleep(Duration::from_millis(10));
    let waker = Waker::noop();
    assert!(poll_once(&mut s, waker).is_pending());
    clock.wait_idle(1);
    let registered = clock.thread_wakeups();
    for _ in 0..9 {
        clock.advance(MS);
    }
    clock.wait_idle(1);
    assert_eq!(
        clock.thread_wakeups(),
        registered,
        "woken before the deadline"
    );
    advance(&clock, MS);
    assert!(poll_once(&mut s, waker).is_ready());
}
