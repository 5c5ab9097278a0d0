//! Many concurrent sleeps on the real clock: each is woken exactly once, none before its
//! deadline, and every one completes. `cargo test` runs 100,000; CI runs 1,000,000 in a
//! release build (`CALLWHEEL_ASYNC_SLEEPS=1000000`).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::task::{Context, Wake, Waker};
use std::time::{Duration, Instant};

use callwheel_async::Driver;

struct Count(AtomicU32);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn every_sleep_is_woken_exactly_once() {
    let n: usize = std::env::var("CALLWHEEL_ASYNC_SLEEPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let driver = Driver::builder().shards(2).build().unwrap();
    let start = Instant::now();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut sleeps = Vec::with_capacity(n);
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let d = Duration::from_nanos(x % 300_000_000);
        let mut s = driver.sleep(d);
        let count = Arc::new(Count(AtomicU32::new(0)));
        let waker = Waker::from(Arc::clone(&count));
        // A deadline already passed completes at once without registering.
        if Pin::new(&mut s)
            .poll(&mut Context::from_waker(&waker))
            .is_ready()
        {
            count.0.fetch_add(1, Ordering::Relaxed);
        }
        sleeps.push((s, count, waker));
    }
    let registered = start.elapsed();
    while driver.pending() > 0 {
        std::thread::sleep(Duration::from_millis(5));
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "sleeps still pending"
        );
    }
    let all_fired = start.elapsed();
    for (s, count, waker) in &mut sleeps {
        assert_eq!(count.0.load(Ordering::Relaxed), 1, "woken other than once");
        assert!(Instant::now() >= s.deadline());
        assert!(Pin::new(s).poll(&mut Context::from_waker(waker)).is_ready());
    }
    println!(
        "{n} sleeps: registered in {registered:?}, all fired {all_fired:?} after the first, \
         {} bytes held by the driver",
        driver.memory_bytes()
    );
}
