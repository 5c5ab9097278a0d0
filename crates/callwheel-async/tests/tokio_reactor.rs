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
    let current = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    current.block_on(timers());
    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
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
}

/// (Run by the test above, after it: it starts the process-wide driver.)
fn a_sleep_outliving_its_runtime_ends_at_its_deadline_elsewhere() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
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
    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
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
                let other = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
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
