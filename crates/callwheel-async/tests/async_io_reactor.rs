//! With the `async-io` feature timers are fired by async-io's reactor, each thread registering
//! on a wheel of its own: timers on smol, on `futures::executor` and on a plain thread's
//! `async_io::block_on` all complete at their deadlines, in order, no thread of callwheel's is
//! started, and a sleep whose thread ended completes at its deadline where it is polled next.
//!
//! Its own test binary: the process must not have started a driver thread before.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use callwheel_async::{interval, sleep, timeout, Driver};

mod common;

use common::driver_threads;

const MS: Duration = Duration::from_millis(1);

async fn timers() {
    let start = Instant::now();
    sleep(2 * MS).await;
    assert!(start.elapsed() >= 2 * MS, "a sleep ended early");
    assert!(timeout(MS, sleep(Duration::from_secs(60))).await.is_err());
    let done = Arc::new(Mutex::new(Vec::new()));
    let sleeps = [4u64, 1, 3, 2].map(|i| {
        let done = Arc::clone(&done);
        async move {
            let s = sleep(Duration::from_millis(3 * i));
            let deadline = s.deadline();
            s.await;
            assert!(Instant::now() >= deadline, "sleep {i} ended early");
            done.lock().unwrap().push(i);
        }
    });
    futures::future::join_all(sleeps).await;
    assert_eq!(done.lock().unwrap().len(), 4);
    let mut every = interval(MS);
    let first = every.tick().await;
    let second = every.tick().await;
    assert_eq!(second - first, MS);
}

#[test]
fn async_io_fires_each_threads_wheel_on_every_executor() {
    smol::block_on(timers());
    let ex = smol::Executor::new();
    let tasks: Vec<_> = (0..8).map(|_| ex.spawn(timers())).collect();
    smol::block_on(ex.run(futures::future::join_all(tasks)));
    // Executors that do not drive async-io's reactor: its own thread does.
    futures::executor::block_on(timers());
    std::thread::spawn(|| futures::executor::block_on(timers()))
        .join()
        .unwrap();
    assert_eq!(
        driver_threads(),
        Vec::<String>::new(),
        "a callwheel thread ran"
    );
    // Every timer registered on its thread's wheel: the process-wide driver fired none.
    let stats = Driver::global().unwrap().stats();
    assert_eq!(stats.fired, 0, "{stats:?}");
    a_sleep_whose_thread_ended_completes_at_its_deadline_elsewhere();
}

/// (Run by the test above: no thread of callwheel's may run before its check.)
fn a_sleep_whose_thread_ended_completes_at_its_deadline_elsewhere() {
    let registered = std::thread::spawn(|| {
        let mut s = Box::pin(sleep(30 * MS));
        // One poll registers it on this thread's wheel.
        futures::executor::block_on(futures::future::poll_fn(|cx| {
            assert!(s.as_mut().poll(cx).is_pending());
            std::task::Poll::Ready(())
        }));
        s
    })
    .join()
    .unwrap();
    let deadline = registered.deadline();
    futures::executor::block_on(registered);
    assert!(Instant::now() >= deadline, "completed before its deadline");
}
