//! Runnable examples of the callwheel crates. The library itself is empty; the examples are:
//!
//! | example | what it shows |
//! |---|---|
//! | `poller` | thousands of labelled periodic timers in one [`callwheel_rt::TimerSet`], an epoll loop on the set's descriptor, and a summary of reaps per period class, wake-ups and lateness |
//!
//! Run one with `cargo run --release -p callwheel-examples --example poller -- --help`.
