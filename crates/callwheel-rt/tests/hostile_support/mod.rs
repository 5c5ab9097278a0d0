//! What the two hostile-value test files share: deadlines and durations in raw nanoseconds, a
//! runtime on a manual clock, the shut-down check and a bounded wait on real threads.

use std::time::{Duration, Instant};

use callwheel_rt::{Deadline, Error, ManualClock, Runtime};

/// A deadline in the runtime clock's own nanoseconds.
pub fn at(ns: u64) -> Deadline {
    Deadline::from_clock_ns(ns)
}

/// A period or tolerance of `n` nanoseconds.
pub fn ns(n: u64) -> Duration {
    Duration::from_nanos(n)
}

/// Generous liveness bound for waits on real threads (never a latency assertion).
pub const PATIENCE: Duration = Duration::from_secs(30);

/// A runtime of `shards` shards and one worker on `clock`.
pub fn manual(clock: &ManualClock, shards: usize) -> Runtime {
    Runtime::builder()
        .clock(clock.clone())
        .shards(shards)
        .workers(1)
        .build()
        .unwrap()
}

/// Asserts that `r` is [`Error::ShutDown`].
pub fn shut_down<T: std::fmt::Debug>(r: Result<T, Error>) {
    assert!(
        matches!(r, Err(Error::ShutDown)),
        "expected ShutDown, got {r:?}"
    );
}

/// Polls `done` until it holds, failing after [`PATIENCE`].
pub fn eventually(what: &str, done: impl Fn() -> bool) {
    let until = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < until, "never: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}
