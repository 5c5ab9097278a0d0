//! Runnable examples of the callwheel crates. The library itself is empty; the examples are:
//!
//! | example | what it shows |
//! |---|---|
//! | `poller` | thousands of labelled periodic timers in one [`callwheel_rt::TimerSet`], an epoll loop on the set's descriptor, and a summary of reaps per period class, wake-ups and lateness |
//! | `echo_timeouts` | a tokio TCP echo server whose connections have an idle timeout and a deadline per request from `callwheel-async`, exercised by its own clients |
//! | `smol_timers` | the same async timers on smol: an interval with a tolerance, a timeout, a delay queue |
//! | `w3_phases` | where the production wheel spends workload W3's time: the starts, then the advance split by the level of the slot each tick processes |
//!
//! Run one with `cargo run --release -p callwheel-examples --example poller -- --help`, or
//! `cargo run --release -p callwheel-examples --example w3_phases -- [REPS]`.

// The README's Rust quick starts compile and run as doc tests of this crate, so the README
// cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeQuickStarts;
