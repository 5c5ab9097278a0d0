//! Timers made inside a tokio runtime are fired by that runtime (the `tokio` feature): no
//! thread of callwheel's is started, sleeps end at their deadlines, a runtime without an I/O
//! driver falls back to the process-wide driver, and a sleep whose runtime shut down completes
//! at its deadline where it is polled next, never earlier.
//!
//! Its own test binary: the process must not have started the process-wide driver before.

use std::time::{Duration, Instant};

use callwheel_async::{sleep, timeout, DelayQueue};
use futures::StreamExt;

mod common;

use common::driver_threads;

const MS: Duration = Duration::from_millis(1);

/// A current-thread runtime with its I/O driver (which fires the timers made in it).
fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A multi-thread runtime with two workers and its I/O driver.
fn multi_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

async fn timers() {
    let start = Instant::now();
    sleep(2 * MS).await;
    assert!(start.elapsed() >= 2 * MS, "a sleep ended early");
    assert!(timeout(MS, sleep(Duration::from_secs(60))).await.is_err());
    let mut q = DelayQueue::new();
    q.insert(2, 2 * MS);
    q.insert(1, MS);
    let made = Instant::now();
    let first = q.next().await.unwrap();
    assert!(Instant::now() >= first.deadline());
    assert_eq!(first.into_inner(), 1);
    assert_eq!(q.next().await.unwrap().into_inner(), 2);
    assert!(made.elapsed() >= MS);
}

#[test]
fn a_runtime_fires_its_own_timers_and_one_without_io_falls_back_and_one_shut_down_hands_over() {
    // Both flavours with I/O: the runtime's own drivers, no thread of callwheel's.
    let current = current_thread();
    current.block_on(timers());
    let multi = multi_thread();
    multi.block_on(async {
        let tasks: Vec<_> = (0..8).map(|_| tokio::spawn(timers())).collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    assert_eq!(
        driver_threads(),
        Vec::<String>::new(),
        "a callwheel thread ran"
    );
    // Without an I/O driver there is no reactor to wake: the process-wide driver serves.
    let no_io = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    no_io.block_on(timers());
    // (With the `async-io` feature the process-wide driver has no thread either.)
    #[cfg(not(feature = "async-io"))]
    assert!(!driver_threads().is_empty(), "no fallback driver");
    a_sleep_outliving_its_runtime_ends_at_its_deadline_elsewhere();
    a_runtime_shut_down_wakes_a_sleep_another_executor_polls();
}

/// A waker that counts its wakes.
#[derive(Default)]
struct Count(std::sync::atomic::AtomicUsize);

impl std::task::Wake for Count {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// (Run by the first test, after it: it may start the process-wide driver.) A sleep made in a
/// runtime's context but polled by another executor registers on the runtime's wheel; when the
/// runtime shuts down before the deadline, the wheel's last turn wakes it (nothing else would:
/// the runtime's driving task is gone), and polled again it registers elsewhere and completes at
/// its deadline.
fn a_runtime_shut_down_wakes_a_sleep_another_executor_polls() {
    use std::future::Future;
    use std::sync::atomic::Ordering;
    use std::sync::Arc;
    use std::task::{Context, Waker};
    let rt = current_thread();
    let count = Arc::new(Count::default());
    let waker = Waker::from(Arc::clone(&count));
    let mut cx = Context::from_waker(&waker);
    let start = Instant::now();
    let mut s = Box::pin(sleep(30 * MS));
    {
        let _inside = rt.enter();
        assert!(s.as_mut().poll(&mut cx).is_pending());
    }
    drop(rt);
    assert_eq!(
        count.0.load(Ordering::SeqCst),
        1,
        "the shutdown did not wake the sleep"
    );
    while s.as_mut().poll(&mut cx).is_pending() {
        std::thread::sleep(MS / 4);
        assert!(start.elapsed() < 10 * 30 * MS, "never completed");
    }
    assert!(start.elapsed() >= 30 * MS, "completed before its deadline");
}

/// (Run by the test above, after it: it starts the process-wide driver.)
fn a_sleep_outliving_its_runtime_ends_at_its_deadline_elsewhere() {
    let rt = current_thread();
    let start = Instant::now();
    let mut s = Box::pin(sleep(30 * MS));
    // Registered on the runtime's driver, then the runtime goes away with it.
    rt.block_on(async {
        tokio::select! {
            _ = &mut s => panic!("ended early"),
            _ = tokio::task::yield_now() => {}
        }
    });
    drop(rt);
    futures::executor::block_on(s);
    assert!(start.elapsed() >= 30 * MS, "completed before its deadline");
}

/// A worker thread knows its runtime's wheel without a lookup. A task of another runtime
/// polled on that thread (`block_on` inside `block_in_place`) registers there and still ends
/// at its deadline; so do many tasks interleaving on the workers.
#[test]
fn a_task_of_another_runtime_on_a_worker_thread_still_ends_at_its_deadline() {
    let multi = multi_thread();
    multi.block_on(async {
        let many: Vec<_> = (0..200)
            .map(|i| {
                tokio::spawn(async move {
                    let start = Instant::now();
                    sleep(MS * (i % 5)).await;
                    assert!(start.elapsed() >= MS * (i % 5), "a sleep ended early");
                })
            })
            .collect();
        for t in many {
            t.await.unwrap();
        }
        tokio::spawn(async {
            // This worker has registered on its runtime's wheel before.
            sleep(MS).await;
            tokio::task::block_in_place(|| {
                let other = current_thread();
                other.block_on(async {
                    let t = tokio::spawn(async {
                        let start = Instant::now();
                        sleep(20 * MS).await;
                        start.elapsed()
                    });
                    assert!(t.await.unwrap() >= 20 * MS, "ended early");
                });
            });
        })
        .await
        .unwrap();
    });
}
