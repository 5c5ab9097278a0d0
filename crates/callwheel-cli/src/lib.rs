//! The `callwheel` command: benchmarks of the callwheel timer schemes on the workloads of
//! `docs/workloads.md`.
//!
//! | module | what it is |
//! |---|---|
//! | [`cli`] | argument parsing and dispatch to the command's module |
//! | [`bench`] | `callwheel bench` and its per-measurement child `bench-one` |
//! | [`tables`] | `callwheel table1` and `table2`, with their children |
//! | [`async_timers`] | `callwheel async`: callwheel-async against tokio's and async-io's timers (timeout churn, sleep storm) |
//! | [`async_queue`] | callwheel-async's `DelayQueue` behind the benchmark traits, beside tokio-util's |
//! | [`c_wheel`] | the production wheel through its C API (`cw_wheel_*`), for the C path's figures |
//! | [`experiment`] | the `Experiment` trait every experiment of `repro` implements, and the section it produces |
//! | [`repro`] | `callwheel repro`: every experiment, the report, the plots and the JSON |
//! | [`compare`] | `callwheel compare`: ratios between two `results.json` |
//! | [`results`] | the figures of a run as `results.json` holds them, for `repro` and every command's `--json` |
//! | [`machine`] | the machine facts a report and `results.json` name |
//! | [`registry`] | the one list of structures: schemes, the facility, the peers |
//! | [`plan`] | the sizes, and the reductions, skips and n/a rows |
//! | [`workload`] | SplitMix64, W1–W5 (the timed loops), their reference figures, the wake-up and tolerance traits |
//! | [`peers`] | adapters for `BinaryHeap`, `BTreeMap` and tokio-util's `DelayQueue` |
//! | [`runner`] | one child process per measurement, and its result line |
//! | [`child_line`] | a child's result line: a tag and a JSON object |
//! | [`report`] | the tables |
//! | [`plots`] | line charts as SVG and PNG, with the embedded font |
//! | [`percentile`] | percentiles by nearest rank, the one definition every table uses |
//! | [`verdict`] | an experiment's verdict lines (what was checked, met or missed) |
//! | [`sections`] | each workload's measurements and Markdown section, shared by `bench` and `repro` |
//! | [`table1`] | Costello & Varghese's Table I / Figure 8 through the callout interfaces |
//! | [`table2`] | Costello & Varghese's Table II: instructions per timer function, counted by callgrind |
//! | [`latency`] | `callwheel latency`: callwheel-rt timer lateness against a raw `clock_nanosleep` loop |
//! | [`stress`] | `callwheel stress`: `start` latency while a mass expiry runs, and the count check |
//! | [`sweep`] | `callwheel sweep`: requested against actual sleep (calloutng Figures 4–7) and the runtime's wake-up counts |
// One module calls the C API, which is unsafe by nature; every other module is safe code.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod async_coalescing;
pub mod async_precision;
pub mod async_queue;
pub mod async_timers;
pub mod bench;
pub mod c_wheel;
pub mod child_line;
pub mod cli;
pub mod compare;
pub mod experiment;
pub mod latency;
pub mod machine;
pub mod peers;
pub mod percentile;
pub mod plan;
pub mod plots;
pub mod registry;
pub mod report;
pub mod repro;
pub mod results;
pub mod runner;
pub mod sections;
pub mod smol_pool;
pub mod stress;
pub mod sweep;
pub mod table1;
pub mod table2;
pub mod tables;
pub mod verdict;
/// The workloads, from the benchmark library (kept at this path for the tool's modules).
pub use callwheel_bench::workload;
