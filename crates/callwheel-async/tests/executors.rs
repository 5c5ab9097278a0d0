//! One suite of timer behaviour, run unchanged on every executor the crate supports: tokio's
//! current-thread and multi-thread runtimes, smol, `futures::executor::block_on` and
//! `LocalPool`, and a minimal hand-written executor. The futures need nothing from the
//! executor but a waker, so each run must give the same results. With the `tokio` and
//! `async-io` features (on in the workspace's test run) the free functions' timers are fired by
//! tokio's runtimes and by async-io's reactor; without them, by the driver's threads.

use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use callwheel_async::{interval, sleep, sleep_until, timeout, DelayQueue, Driver, Missed};
use futures::StreamExt;

const MS: Duration = Duration::from_millis(1);

/// The suite: sleeps, timeouts, ordering, intervals, a delay queue and cancellation on drop.
async fn suite(name: &str) {
    // A sleep never ends early.
    let start = Instant::now();
    sleep(2 * MS).await;
    assert!(start.elapsed() >= 2 * MS, "{name}: sleep ended early");
    // Past deadlines, and an Instant from long before, complete at once.
    sleep_until(start).await;
    sleep(Duration::ZERO).await;
    // A timeout whose future is ready returns it; one that is not runs out.
    assert_eq!(timeout(MS, async { 5 }).await, Ok(5), "{name}");
    let slow = timeout(2 * MS, sleep(Duration::from_secs(60))).await;
    assert!(slow.is_err(), "{name}: the timeout did not fire");
    // Sleeps created in any order each complete, none before its deadline. (Their order is
    // checked on the manual clock: here a loaded machine may resume the task late enough for
    // two to be seen in one poll.)
    let done = Arc::new(Mutex::new(Vec::new()));
    let sleeps = [5u64, 1, 3, 2, 4].map(|i| {
        let done = Arc::clone(&done);
        async move {
            let s = sleep(Duration::from_millis(2 * i));
            let deadline = s.deadline();
            s.await;
            assert!(Instant::now() >= deadline, "sleep {i} ended early");
            done.lock().unwrap().push(i);
        }
    });
    futures::future::join_all(sleeps).await;
    assert_eq!(done.lock().unwrap().len(), 5, "{name}");
    // An interval ticks on its grid.
    let mut every = interval(2 * MS);
    let first = every.tick().await;
    let second = every.tick().await;
    let third = every.tick().await;
    assert_eq!((second - first, third - second), (2 * MS, 2 * MS), "{name}");
    assert!(Instant::now() >= third, "{name}: a tick came early");
    assert_eq!(every.missed_tick_behavior(), Missed::Burst);
    // A delay queue returns its values in deadline order, never early.
    let mut queue = DelayQueue::new();
    let made = Instant::now();
    queue.insert("c", 6 * MS);
    queue.insert("a", 2 * MS);
    let b = queue.insert("b", 4 * MS);
    let gone = queue.insert("gone", 3 * MS);
    assert_eq!(queue.remove(&gone), Some("gone"));
    assert_eq!(queue.remove(&gone), None);
    assert!(queue.reset(&b, 5 * MS));
    let mut got = Vec::new();
    while let Some(e) = queue.next().await {
        assert!(
            Instant::now() >= e.deadline(),
            "{name}: a value came back early"
        );
        got.push(e.into_inner());
    }
    assert_eq!(got, ["a", "b", "c"], "{name}");
    assert!(made.elapsed() >= 6 * MS);
}

/// Registration and cancellation on an explicit driver: a polled sleep is registered, and
/// dropping it (or a timeout whose future finished) leaves nothing behind.
async fn drop_cancels(driver: &Driver, name: &str) {
    let before = driver.pending();
    {
        let mut s = pin!(driver.sleep(Duration::from_secs(3600)));
        let polled = s.as_mut().poll(&mut Context::from_waker(Waker::noop()));
        assert!(polled.is_pending(), "{name}");
        assert_eq!(driver.pending(), before + 1, "{name}: not registered");
    }
    assert_eq!(driver.pending(), before, "{name}: dropping did not cancel");
    // Dropped on another thread than the one that registered it: reclaimed at the drop as
    // well, nothing left for the wheel's own thread to collect.
    let mut s = Box::pin(driver.sleep(Duration::from_secs(3600)));
    assert!(s
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
        .is_pending());
    assert_eq!(driver.pending(), before + 1, "{name}: not registered");
    std::thread::spawn(move || drop(s)).join().unwrap();
    assert_eq!(
        driver.pending(),
        before,
        "{name}: a drop on another thread left its entry"
    );
    // A timeout whose future is ready never registers its timer.
    assert_eq!(
        driver.timeout(Duration::from_secs(3600), async { 1 }).await,
        Ok(1)
    );
    assert_eq!(
        driver.pending(),
        before,
        "{name}: a ready timeout registered"
    );
}

fn run_both(
    name: &str,
    mut block_on: impl FnMut(std::pin::Pin<Box<dyn Future<Output = ()> + '_>>),
) {
    let driver = Driver::builder().shards(2).build().unwrap();
    block_on(Box::pin(suite(name)));
    block_on(Box::pin(drop_cancels(&driver, name)));
}

#[test]
fn on_tokio_current_thread() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    run_both("tokio current-thread", |f| rt.block_on(f));
}

#[test]
fn on_tokio_multi_thread() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    run_both("tokio multi-thread", |f| rt.block_on(f));
    // And from tasks spawned on the workers, moved between threads as tokio sees fit.
    rt.block_on(async {
        let tasks: Vec<_> = (0..8)
            .map(|i| tokio::spawn(async move { suite(&format!("tokio task {i}")).await }))
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
}

#[test]
fn on_smol() {
    run_both("smol", |f| smol::block_on(f));
    let ex = smol::Executor::new();
    let tasks: Vec<_> = (0..4)
        .map(|i| ex.spawn(async move { suite(&format!("smol task {i}")).await }))
        .collect();
    smol::block_on(ex.run(futures::future::join_all(tasks)));
}

#[test]
fn on_futures_block_on() {
    run_both("futures block_on", |f| futures::executor::block_on(f));
}

#[test]
fn on_futures_local_pool() {
    let mut pool = futures::executor::LocalPool::new();
    run_both("futures LocalPool", |f| pool.run_until(f));
}

/// The smallest executor there is: poll, and park the thread until the waker unparks it.
fn hand_block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
        thread::park();
    }
}

#[test]
fn on_a_hand_written_executor() {
    run_both("hand-written", |f| hand_block_on(f));
}

/// A sleep polled on one thread and completed on another (a task that migrated): the waker
/// of the latest poll is the one woken.
#[test]
fn a_sleep_moved_between_threads_wakes_its_latest_task() {
    let driver = Driver::builder().build().unwrap();
    let mut s = Box::pin(driver.sleep(5 * MS));
    let noop = Waker::noop();
    assert!(s.as_mut().poll(&mut Context::from_waker(noop)).is_pending());
    let done = thread::spawn(move || hand_block_on(s)).join();
    assert!(done.is_ok());
}
