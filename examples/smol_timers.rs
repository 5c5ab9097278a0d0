//! callwheel-async's timers on smol: an interval whose ticks may come up to 1 ms late, plus the
//! wake-up's own latency (so the driver can serve several with one wake-up), a timeout around
//! a slow future, and a delay queue returning values in deadline order. Nothing here is
//! smol-specific: the futures only need a waker.
//!
//! `cargo run --release -p callwheel-examples --example smol_timers`

use std::time::{Duration, Instant};

use callwheel_async::{interval, sleep, timeout, DelayQueue};
use smol::stream::StreamExt;

fn main() {
    smol::block_on(async {
        let start = Instant::now();
        let mut every = interval(Duration::from_millis(5)).tolerance(Duration::from_millis(1));
        for _ in 0..5 {
            let scheduled = every.tick().await;
            let late = Instant::now().saturating_duration_since(scheduled);
            println!(
                "tick at {:>5.1} ms, {:>6.1} us after its time",
                (scheduled - start).as_secs_f64() * 1e3,
                late.as_secs_f64() * 1e6
            );
        }

        let slow = timeout(Duration::from_millis(10), sleep(Duration::from_secs(60))).await;
        match slow {
            Ok(()) => println!("a 60 s sleep finished under a 10 ms timeout?"),
            Err(elapsed) => println!("a 60 s sleep under a 10 ms timeout: {elapsed}"),
        }

        let mut queue = DelayQueue::new();
        let inserted = Instant::now();
        for (word, ms) in [("third", 30), ("first", 10), ("second", 20)] {
            queue.insert(word, Duration::from_millis(ms));
        }
        while let Some(expired) = queue.next().await {
            println!(
                "{:<6} back after {:.1} ms",
                expired.get_ref(),
                inserted.elapsed().as_secs_f64() * 1e3
            );
        }
    });
}
