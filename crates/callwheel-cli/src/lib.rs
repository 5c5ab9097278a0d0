//! The `callwheel` command: benchmarks of the callwheel timer schemes on the workloads of
//! `WORKLOADS.md`.
//!
//! | module | what it is |
//! |---|---|
//! | [`cli`] | argument parsing and the `bench` driver |
//! | [`registry`] | the one list of schemes |
//! | [`plan`] | the sizes, and the reductions for O(n) schemes |
//! | [`workload`] | SplitMix64, W1 and W3 (the timed loops) |
//! | [`runner`] | one child process per measurement, and its result line |
//! | [`report`] | the tables |
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cli;
pub mod plan;
pub mod registry;
pub mod report;
pub mod runner;
pub mod workload;
