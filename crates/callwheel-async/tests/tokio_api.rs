//! What a tokio user reaches for, with tokio's semantics or the documented difference: a
//! timeout counted from its call, `?` on an elapsed timeout in an `io::Result`, the interval
//! resets, the delay queue's capacity calls, `peek`, `try_remove` and `Stream` for any value,
//! and bad input (`Duration::MAX`, instants long past, a zero period) with its documented
//! result.

use std::future::{pending, Future};
use std::marker::PhantomPinned;
use std::pin::{pin, Pin};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use callwheel_async::{
    interval, sleep, sleep_until, timeout, Clock, DelayQueue, Driver, ManualClock, Waiter, Wake,
};

const MS: u64 = 1_000_000;

fn poll_once<F: Future + ?Sized>(f: Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(Waker::noop()))
}

/// Moves the clock and waits for the driver to have fired everything due by then.
fn advance(clock: &ManualClock, ns: u64) {
    clock.advance(ns);
    clock.wait_idle(1);
}

/// The free `timeout` counts from its call, never before it: polled at once, it counts from
/// within that first poll; first polled late, from no later than the coarse clock's reading at
/// that poll. Never early: a timeout polled at once is pending until its duration has passed.
#[test]
fn a_timeout_counts_from_its_call_and_is_never_early() {
    let call = Instant::now();
    let mut t = pin!(timeout(Duration::from_millis(30), pending::<()>()));
    assert!(poll_once(t.as_mut()).is_pending());
    std::thread::sleep(Duration::from_millis(31));
    assert!(matches!(poll_once(t.as_mut()), Poll::Ready(Err(_))));
    // First polled 60 ms after its call: due at most 30 ms after that poll.
    let mut late = pin!(timeout(Duration::from_millis(30), pending::<()>()));
    std::thread::sleep(Duration::from_millis(60));
    let _ = poll_once(late.as_mut());
    std::thread::sleep(Duration::from_millis(31));
    assert!(matches!(poll_once(late.as_mut()), Poll::Ready(Err(_))));
    let mut early = pin!(timeout(Duration::from_secs(3600), pending::<()>()));
    assert!(poll_once(early.as_mut()).is_pending());
    assert!(call.elapsed() >= Duration::from_millis(120));
}

/// On a driver's clock the deadline is read at the call, exactly: a simulated clock moved
/// before the first poll counts.
#[test]
fn a_drivers_timeout_counts_from_its_call_on_its_clock() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut t = pin!(driver.timeout(Duration::from_nanos(10 * MS), pending::<()>()));
    advance(&clock, 7 * MS);
    assert!(poll_once(t.as_mut()).is_pending(), "7 ms of 10");
    advance(&clock, 3 * MS);
    assert!(poll_once(t.as_mut()).is_ready(), "10 ms from the call");
}

/// `?` turns an elapsed timeout into an `io::Error` of kind `TimedOut`.
#[test]
fn an_elapsed_timeout_is_an_io_error_of_kind_timed_out() {
    fn read() -> std::io::Result<u32> {
        let value = futures::executor::block_on(timeout(Duration::ZERO, pending::<u32>()))?;
        Ok(value)
    }
    let e = read().unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
    assert_eq!(e.to_string(), "deadline has elapsed");
}

/// `reset_immediately`, `reset_after` and `reset_at` move the next tick; the ones after it
/// follow one period apart.
#[test]
fn interval_resets_move_the_next_tick() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut every = driver.interval(Duration::from_nanos(10 * MS));
    let ticks = |every: &mut callwheel_async::Interval| {
        let mut f = pin!(every.tick());
        poll_once(f.as_mut()).is_ready()
    };
    assert!(ticks(&mut every), "the first tick is at once");
    assert!(!ticks(&mut every));
    every.reset_immediately();
    assert!(ticks(&mut every), "reset_immediately: due now");
    every.reset_after(Duration::from_nanos(3 * MS));
    advance(&clock, 2 * MS);
    assert!(!ticks(&mut every), "2 ms of 3");
    advance(&clock, MS);
    assert!(ticks(&mut every), "reset_after(3 ms)");
    advance(&clock, 9 * MS);
    assert!(
        !ticks(&mut every),
        "one period after the reset tick: 9 ms of 10"
    );
    advance(&clock, MS);
    assert!(ticks(&mut every));
    // An instant already passed: at once.
    every.reset_at(Instant::now() - Duration::from_secs(5));
    assert!(ticks(&mut every), "reset_at a past instant");
    // Duration::MAX: no tick comes.
    every.reset_after(Duration::MAX);
    advance(&clock, 1_000 * MS);
    assert!(!ticks(&mut every));
}

/// The capacity calls: room reserved is kept, what was never used goes back, and keys stay
/// valid through `shrink_to_fit` and `compact` (a value never moves).
#[test]
fn delay_queue_capacity_calls_keep_keys_valid() {
    let mut q: DelayQueue<u32> = DelayQueue::with_capacity(100);
    assert!(q.capacity() >= 100);
    let held = q.capacity();
    let keys: Vec<_> = (0..100)
        .map(|i| q.insert(i, Duration::from_secs(60 + u64::from(i))))
        .collect();
    assert_eq!(q.capacity(), held, "no allocation within the reserved room");
    for k in &keys[..90] {
        assert!(q.remove(k).is_some());
    }
    q.shrink_to_fit();
    q.compact();
    for (i, k) in keys.iter().enumerate().skip(90) {
        assert_eq!(q.try_remove(k).map(|e| *e.get_ref()), Some(i as u32));
    }
    assert!(
        q.try_remove(&keys[0]).is_none(),
        "a stale key names nothing"
    );
    q.reserve(10);
    assert!(q.capacity() >= 10);
    assert!(
        q.try_reserve(usize::MAX).is_err(),
        "more than a queue indexes"
    );
}

/// `peek` names the value `poll_expired` returns next, without taking it.
#[test]
fn peek_names_the_next_value() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut q = driver.delay_queue();
    assert_eq!(q.peek(), None);
    let _late = q.insert("late", Duration::from_nanos(30 * MS));
    let soon = q.insert("soon", Duration::from_nanos(10 * MS));
    assert_eq!(q.peek(), Some(soon));
    assert_eq!(q.len(), 2, "peek takes nothing");
    advance(&clock, 10 * MS);
    let mut cx = Context::from_waker(Waker::noop());
    match q.poll_expired(&mut cx) {
        Poll::Ready(Some(e)) => assert_eq!((e.key(), *e.get_ref()), (soon, "soon")),
        other => panic!("{other:?}"),
    }
    // A deadline already passed comes back at the next poll.
    let past = q.insert_at("past", Instant::now() - Duration::from_secs(100));
    assert_eq!(q.peek(), Some(past));
    match q.poll_expired(&mut cx) {
        Poll::Ready(Some(e)) => assert_eq!(*e.get_ref(), "past"),
        other => panic!("{other:?}"),
    }
}

/// A queue of values that are not `Unpin` is still a `Stream`.
#[test]
fn a_delay_queue_of_values_that_are_not_unpin_is_a_stream() {
    fn is_stream<S: futures_core::Stream>(_: &S) {}
    let q: DelayQueue<PhantomPinned> = DelayQueue::new();
    is_stream(&q);
}

/// A custom clock can be written against this crate alone: the `Waiter` and `Wake` it needs
/// are re-exported.
#[test]
fn a_custom_clocks_types_are_reexported() {
    fn takes(_: Option<&dyn Waiter>, _: Option<Wake>, _: Option<&dyn Clock>) {}
    takes(None, Some(Wake::Early), None);
}

/// `Duration::MAX` never elapses (a sleep, a timeout), an `Instant` long past completes at
/// the first poll, and a zero interval period is taken as 1 ns (tokio panics).
#[test]
fn bad_input_has_its_documented_result() {
    let mut forever = pin!(sleep(Duration::MAX));
    assert!(poll_once(forever.as_mut()).is_pending());
    let mut never = pin!(timeout(Duration::MAX, pending::<()>()));
    assert!(poll_once(never.as_mut()).is_pending());
    let long_ago = Instant::now()
        .checked_sub(Duration::from_secs(365 * 86_400))
        .unwrap_or_else(Instant::now);
    let mut past = pin!(sleep_until(long_ago));
    assert!(poll_once(past.as_mut()).is_ready());
    let mut zero = interval(Duration::ZERO);
    assert_eq!(zero.period(), Duration::from_nanos(1));
    futures::executor::block_on(async {
        let a = zero.tick().await;
        let b = zero.tick().await;
        assert_eq!(b - a, Duration::from_nanos(1));
    });
}

/// The same calls on smol, on the real clock: a timeout counted from its call, the interval
/// resets, the delay queue's `peek` and `try_remove`, and `?` on an elapsed timeout.
#[test]
fn the_tokio_shaped_calls_work_on_smol() {
    smol::block_on(async {
        // Made, then first polled after its duration: elapsed at that first poll.
        let t = timeout(Duration::from_millis(20), pending::<()>());
        std::thread::sleep(Duration::from_millis(50));
        assert!(t.await.is_err());

        let mut every = interval(Duration::from_secs(3600));
        every.tick().await;
        every.reset_immediately();
        let start = Instant::now();
        every.tick().await;
        every.reset_after(Duration::from_millis(5));
        every.tick().await;
        assert!(start.elapsed() >= Duration::from_millis(5));

        let mut q = DelayQueue::new();
        let slow = q.insert("slow", Duration::from_secs(3600));
        let fast = q.insert("fast", Duration::from_millis(2));
        assert_eq!(q.peek(), Some(fast));
        assert_eq!(q.try_remove(&slow).map(|e| *e.get_ref()), Some("slow"));
        let e = std::future::poll_fn(|cx| q.poll_expired(cx)).await.unwrap();
        assert_eq!((e.key(), e.into_inner()), (fast, "fast"));

        async fn read() -> std::io::Result<()> {
            timeout(Duration::ZERO, pending::<()>()).await?;
            Ok(())
        }
        assert_eq!(
            read().await.unwrap_err().kind(),
            std::io::ErrorKind::TimedOut
        );
    });
}

/// The documented difference on a simulated clock: an `Instant` converts by its distance from
/// the real `Instant::now()`, so an instant taken before the simulated clock moved still lies
/// that far ahead of the simulated now; a duration counts on the simulated clock.
#[test]
fn on_a_simulated_clock_an_instant_counts_from_the_real_now() {
    let (driver, clock) = Driver::manual().unwrap();
    let mut q = driver.delay_queue();
    let real_now = Instant::now();
    advance(&clock, 50 * MS);
    // 200 ms after an instant taken before the 50 ms move: still about 200 ms ahead (less the
    // real time the test took since).
    let by_instant = q.insert_at("by instant", real_now + Duration::from_nanos(200 * MS));
    let by_duration = q.insert("by duration", Duration::from_nanos(5 * MS));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(q.poll_expired(&mut cx).is_pending());
    advance(&clock, 5 * MS);
    match q.poll_expired(&mut cx) {
        Poll::Ready(Some(e)) => assert_eq!(e.key(), by_duration),
        other => panic!("{other:?}"),
    }
    advance(&clock, 200 * MS);
    match q.poll_expired(&mut cx) {
        Poll::Ready(Some(e)) => assert_eq!(e.key(), by_instant),
        other => panic!("{other:?}"),
    }
}
