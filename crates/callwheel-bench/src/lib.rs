//! The benchmark library of callwheel: what the `callwheel` tool measures with, usable on its
//! own.
//!
//! | module | what it is |
//! |---|---|
//! | [`workload`] | W1 (cancel and restart with N others outstanding), W2 (churn), W3 (mass expiry), W4 (sparse advance), W5 (coalescing), with their SplitMix64 generator and seed, on any structure behind the core's [`Timers`](callwheel::Timers) / [`Scheme`](callwheel::Scheme) traits |
//! | [`structure`] | what the benchmarks know of a structure ([`SchemeInfo`](structure::SchemeInfo), built by [`scheme!`]) and the workload selector; the list of structures is the `callwheel` tool's |
//! | [`peers`] | adapters for `BinaryHeap`, `BTreeMap` and tokio-util's `DelayQueue` |
//! | [`async_queue`] | callwheel-async's `DelayQueue` behind the benchmark traits |
//! | [`c_driver`] | W1–W4 from a C driver calling the C API (`cw_wheel_*`) directly, and the C API's instruction probes |
//! | [`c_wheel`] | the production wheel through its C API behind the benchmark traits (W5, tests) |
//! | [`plan`] | the sizes, and the reductions, skips and n/a rows |
//! | [`runner`] | one child process per measurement, and its report |
//! | [`child_line`] | a child's result line: a tag and a JSON object |
//! | [`sections`] | each workload's measurements and its Markdown section (running them, under a progress bar and in rounds: `measure.rs`) |
//! | [`tolerant`] | W2–W4 with tolerances beside the exact ones, and the targets for tolerant timers |
//! | [`report`] | the tables |
//! | [`verdict`] | an experiment's verdict lines (what was checked, met or missed) |
//! | [`percentile`] | percentiles by nearest rank, the one rule of every table |
//! | [`results`] | `results.json`: a run's figures, flat, with the machine |
//! | [`machine`] | the host facts a report names |
//! | [`plots`] | line charts as SVG and PNG, with an embedded font |
//!
//! The stabbing optimum and the other facts about structures come from the core crate.
//! `docs/workloads.md` in the source tree describes each workload.

// Two modules call C (the C API, the C driver), which is unsafe by nature; every other module
// is safe code.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod async_queue;
pub mod c_driver;
pub mod c_wheel;
pub mod child_line;
pub mod machine;
mod measure;
pub mod peers;
pub mod percentile;
pub mod plan;
pub mod plots;
pub mod report;
pub mod results;
pub mod runner;
pub mod sections;
pub mod structure;
pub mod tolerant;
pub mod verdict;
pub mod workload;
