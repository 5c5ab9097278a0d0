//! Many threads arming, re-arming, moving and stopping timers on the real clock while the
//! drivers fire them: nothing is lost, nothing fires twice, and the shards' counters agree.
#![cfg(not(miri))]

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use callwheel_rt::{Deadline, Exec, Runtime, Stop, Tolerance};
use common::Lcg;

/// A deadline in the runtime clock's own nanoseconds.
fn at(ns: u64) -> Deadline {
    Deadline::from_clock_ns(ns)
}

const THREADS: usize = 4;
const TIMERS_PER_THREAD: usize = 2_000;

#[test]
fn concurrent_starts_stops_and_moves_lose_nothing_and_fire_nothing_twice() {
    let rt = Arc::new(
        Runtime::builder()
            .shards(3)
            .workers(2)
            .max_expiries_per_lock(16)
            .tolerance(Tolerance::percent(1))
            .build()
            .unwrap(),
    );
    let shards = rt.shards() as u64;
    let workers: Vec<_> = (0..THREADS)
        .map(|w| {
            let rt = Arc::clone(&rt);
            std::thread::spawn(move || {
                let mut rng = Lcg(w as u64 + 1);
                let mut timers = Vec::new();
                let mut moves = 0u64;
                for i in 0..TIMERS_PER_THREAD {
                    let count = Arc::new(AtomicU32::new(0));
                    let c = Arc::clone(&count);
                    let exec = if i % 2 == 0 {
                        Exec::Direct
                    } else {
                        Exec::Deferred
                    };
                    let t = rt
                        .timer_on(rng.below(shards) as usize, exec, move |_, _| {
                            c.fetch_add(1, Ordering::SeqCst);
                        })
                        .unwrap();
                    let now = rt.now_ns();
                    t.start_at(at(now + rng.below(3_000_000))).unwrap();
                    let mut armings = 1;
                    if rng.below(4) == 0 {
                        // Re-arm: a reset in place when still pending, or a second arming when
                        // the first has already fired.
                        if !t.start_at(at(rt.now_ns() + rng.below(2_000_000))).unwrap() {
                            armings += 1;
                        }
                    }
                    if rng.below(4) == 0 && t.move_to(rng.below(shards) as usize).unwrap() {
                        moves += 1;
                    }
                    // Each arming fires exactly once unless a stop cancels it.
                    let expect = if rng.below(2) == 0 && t.stop() == Stop::Cancelled {
                        armings - 1
                    } else {
                        armings
                    };
                    timers.push((t, count, expect));
                }
                (timers, moves)
            })
        })
        .collect();
    let mut timers = Vec::new();
    for w in workers {
        let (t, _) = w.join().unwrap();
        timers.extend(t);
    }
    let expected: u32 = timers.iter().map(|(_, _, e)| e).sum();
    let fired = || -> u32 {
        timers
            .iter()
            .map(|(_, c, _)| c.load(Ordering::SeqCst))
            .sum()
    };
    let give_up = Instant::now() + Duration::from_secs(60);
    while fired() < expected && Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(5));
    }
    // Anything still to fire twice would have done so by now: every deadline has passed.
    std::thread::sleep(Duration::from_millis(20));
    for (t, _, _) in &timers {
        t.drain();
    }
    for (i, (t, count, expect)) in timers.iter().enumerate() {
        assert_eq!(count.load(Ordering::SeqCst), *expect, "timer {i}");
        assert_eq!(t.fired(), u64::from(*expect), "timer {i}");
        assert!(!t.is_pending());
    }
    let stats = rt.stats();
    let sum = |f: fn(&callwheel_rt::ShardStats) -> u64| stats.iter().map(f).sum::<u64>();
    assert_eq!(sum(|s| s.fired), u64::from(expected));
    assert_eq!(stats.iter().map(|s| s.pending).sum::<usize>(), 0);
    // Every arming either fired or was stopped (moves count once on each side).
    assert_eq!(sum(|s| s.started), sum(|s| s.fired) + sum(|s| s.stopped));
    eprintln!(
        "{} timers, {} fired, {} wake-ups, {} early, {} budget yields",
        timers.len(),
        expected,
        sum(|s| s.wakeups),
        sum(|s| s.early_wakeups),
        sum(|s| s.budget_yields)
    );
}
