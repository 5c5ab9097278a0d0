//! The `callwheel` command: the experiments and the commands that run them. The workloads, the
//! structures, the peers, the child-process runner, the tables, the plots and `results.json`
//! are the benchmark library's ([`callwheel_bench`]); this crate holds what is measured with
//! them and how each command presents it.
//!
//! | module | what it is |
//! |---|---|
//! | [`cli`] | argument parsing and dispatch to the command's module |
//! | [`bench`](mod@bench) | `callwheel bench` and its per-measurement child `bench-one` |
//! | [`flags`] | the flags the commands share: `--quick`/`--tiny`, `--out`/`--json` |
//! | [`tables`] | `callwheel table1` and `table2`, with their children |
//! | [`async_timers`] | `callwheel async`: callwheel-async against tokio's and async-io's timers (timeout churn, sleep storm) |
//! | [`experiment`] | the `Experiment` trait every experiment of `repro` implements, and the section it produces |
//! | [`repro`] | `callwheel repro`: every experiment, the report, the plots and the JSON |
//! | [`compare`] | `callwheel compare`: ratios between two `results.json` |
//! | [`table1`] | Costello & Varghese's Table I / Figure 8 through the callout interfaces |
//! | [`table2`] | Costello & Varghese's Table II: instructions per timer function, counted by callgrind |
//! | [`latency`] | `callwheel latency`: callwheel-rt timer lateness against a raw `clock_nanosleep` loop |
//! | [`stress`] | `callwheel stress`: `start` latency while a mass expiry runs, and the count check |
//! | [`sweep`] | `callwheel sweep`: requested against actual sleep (calloutng Figures 4–7) and the runtime's wake-up counts |
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod async_coalescing;
pub mod async_precision;
pub mod async_timers;
pub mod bench;
pub mod cli;
pub mod compare;
pub mod experiment;
pub mod flags;
pub mod latency;
pub mod repro;
pub mod smol_pool;
pub mod stress;
pub mod sweep;
pub mod table1;
pub mod table2;
pub mod tables;
