//! Test time on tokio's paused clock (the feature `test-util`): a program with sleeps of hours
//! finishes at once, in deadline order, whether the test starts paused or pauses itself;
//! `advance` moves time by exactly what it is given; and the calls tokio panics on (pausing
//! twice, resuming or advancing when not paused, pausing outside a current-thread runtime) do
//! nothing here.

use std::future::{pending, Future};
use std::pin::{pin, Pin};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use callwheel_async::{advance, is_paused, pause, resume, sleep, timeout, DelayQueue};

const HOUR: Duration = Duration::from_secs(3_600);

fn poll_once<F: Future + ?Sized>(f: Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(Waker::noop()))
}

/// Tasks sleeping for hours, spawned out of order: each finishes at its deadline on the
/// paused clock, in deadline order, and the whole test in well under a real second's worth
/// of waiting per simulated hour.
async fn hours_of_sleeps() {
    let real = std::time::Instant::now();
    let start = tokio::time::Instant::now();
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for hours in [3u64, 1, 5, 2, 4] {
        let order = Arc::clone(&order);
        tasks.push(tokio::spawn(async move {
            sleep(HOUR * hours as u32).await;
            let at = tokio::time::Instant::now() - start;
            order.lock().unwrap().push((hours, at));
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let order = order.lock().unwrap().clone();
    let hours: Vec<u64> = order.iter().map(|&(h, _)| h).collect();
    assert_eq!(hours, [1, 2, 3, 4, 5], "deadline order");
    for (h, at) in order {
        assert!(
            at >= HOUR * h as u32,
            "{h} h finished at {at:?}, before its deadline"
        );
        assert!(
            at < HOUR * h as u32 + Duration::from_secs(1),
            "{h} h finished at {at:?}"
        );
    }
    // Five hours of sleeps, on a clock that did not wait for them.
    assert!(
        real.elapsed() < Duration::from_secs(60),
        "took {:?}",
        real.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn a_test_started_paused_runs_hours_of_sleeps_at_once_in_deadline_order() {
    hours_of_sleeps().await;
    assert!(is_paused());
}

#[tokio::test]
async fn pause_makes_hours_of_sleeps_finish_at_once_in_deadline_order() {
    assert!(!is_paused());
    pause();
    assert!(is_paused());
    hours_of_sleeps().await;
    // A timeout of an hour around a future that never completes elapses, at once.
    assert!(timeout(HOUR, pending::<()>()).await.is_err());
}

#[tokio::test(start_paused = true)]
async fn advance_moves_paused_time_by_exactly_what_it_is_given() {
    let mut s = pin!(sleep(HOUR));
    assert!(poll_once(s.as_mut()).is_pending());
    advance(HOUR - Duration::from_nanos(1)).await;
    assert!(
        poll_once(s.as_mut()).is_pending(),
        "1 ns short of its deadline"
    );
    advance(Duration::from_nanos(1)).await;
    let mut done = false;
    for _ in 0..10 {
        if poll_once(s.as_mut()).is_ready() {
            done = true;
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(done, "due once paused time reached its deadline");
}

#[tokio::test(start_paused = true)]
async fn a_delay_queue_on_paused_time_returns_values_hours_apart_in_order() {
    let mut q = DelayQueue::new();
    q.insert("c", HOUR * 3);
    q.insert("a", HOUR);
    q.insert("b", HOUR * 2);
    let mut got = Vec::new();
    while let Some(e) = std::future::poll_fn(|cx| q.poll_expired(cx)).await {
        got.push(e.into_inner());
    }
    assert_eq!(got, ["a", "b", "c"]);
}

#[tokio::test]
async fn calls_tokio_panics_on_do_nothing_here() {
    // Not paused: advance and resume do nothing.
    resume();
    let before = tokio::time::Instant::now();
    advance(HOUR).await;
    assert!(
        tokio::time::Instant::now() - before < HOUR,
        "advance moved real time"
    );
    assert!(!is_paused());
    // Pausing twice is pausing once.
    pause();
    pause();
    assert!(is_paused());
    resume();
    assert!(!is_paused());
    // Resumed: a new sleep counts on the real clock again (a short one completes for real).
    sleep(Duration::from_millis(1)).await;
}

#[test]
fn pause_outside_a_current_thread_runtime_does_nothing() {
    pause();
    assert!(!is_paused());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        pause();
        assert!(!is_paused(), "tokio pauses current-thread runtimes only");
    });
}
