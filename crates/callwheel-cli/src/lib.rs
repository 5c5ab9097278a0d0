//! The `callwheel` command: the experiments and the commands that run them. The workloads, the
//! peers' adapters, the child-process runner, the tables, the plots and `results.json` are the
//! benchmark library's ([`callwheel_bench`]); this crate chooses the structures they run on
//! ([`registry`]), and holds what is measured with them and how each command presents it.
//!
//! Every measurement is an [`experiment::Experiment`]: a plan (what its command's options, or
//! each of `repro`'s sizes, resolve to) and a run that produces one section of Markdown,
//! figures and verdicts. `callwheel repro` runs the registered ones in turn; each stand-alone
//! command is one experiment run alone ([`experiment::alone`]).
//!
//! | module | what it is | command |
//! |---|---|---|
//! | [`cli`] | argument parsing and dispatch to the command's module | |
//! | [`flags`] | the flags the commands share: `--quick`/`--tiny`, `--out`/`--json` | |
//! | [`failure`] | why a measurement failed: one error type for every experiment | |
//! | [`registry`] | the one list of structures the benchmarks run: the schemes, the production wheel (from Rust, through the C API, as callwheel-async's queue), the peers | |
//! | [`experiment`] | the `Experiment` trait, the section it produces, a command as one experiment run alone | |
//! | [`repro`] | the loop over the registered experiments, the report and the JSON | `repro` |
//! | [`compare`] | ratios between two `results.json` | `compare` |
//! | [`bench`](mod@bench) | the workloads W1–W5 and their tolerant variants on the chosen structures, and the per-measurement child | `bench`, `bench-one` |
//! | [`family`] | the scheme family of Varghese & Lauck on W1 and W3 | (repro) |
//! | [`table1`] | Costello & Varghese's Table I / Figure 8 through the callout interfaces, and its child | `table1`, `table1-one` |
//! | [`table2`] | Costello & Varghese's Table II: instructions per timer function, counted by callgrind | `table2`, `table2-driver` |
//! | [`instructions`] | the wheel's start and stop, and the C API's add and del, in instructions per call (W1), by callgrind | `instructions`, `instructions-driver` |
//! | [`callgrind`] | running a driver under callgrind and reading its dumps (for `table2` and `instructions`) | |
//! | [`cost_model`] | Varghese & Lauck's cost model: Scheme 6 against Scheme 7 as M and T vary | (repro) |
//! | [`insertion_cost`] | Scheme 2's insertion from the head and the rear on a simulated timer queue, against the paper's averages | (repro) |
//! | [`callout_memory`] | bytes per callout of the new and the original callout tables, against Costello & Varghese's longwords | (repro) |
//! | [`peers`] | the production wheel against today's timer libraries on W1–W5 | (repro) |
//! | [`tolerant`] | W2–W4 with tolerances beside the exact ones: the wheel against Linux's non-cascading wheel | (repro) |
//! | [`coalescing`] | the wheel's wake-ups against the optimum as tolerance grows | (repro) |
//! | [`latency`] | callwheel-rt timer lateness against a raw `clock_nanosleep` loop | `latency` |
//! | [`sweep`] | requested against actual sleep (calloutng Figures 4–7) and the runtime's wake-up counts | `sweep` |
//! | [`stress`] | `start` latency while a mass expiry runs, the count check, throughput from 1 and 2 threads | `stress` |
//! | [`async_timers`] | callwheel-async against tokio's and async-io's timers; its parts [`async_precision`] and [`async_coalescing`] | `async` |
//! | [`smol_pool`] | a multi-threaded smol executor for the async experiment | |
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod async_coalescing;
pub mod async_precision;
pub mod async_timers;
pub mod bench;
pub mod callgrind;
pub mod callout_memory;
pub mod cli;
pub mod coalescing;
pub mod compare;
pub mod cost_model;
pub mod direct_exec;
pub mod experiment;
pub mod failure;
pub mod family;
pub mod flags;
pub mod insertion_cost;
pub mod instructions;
pub mod latency;
pub mod peers;
pub mod registry;
pub mod repro;
pub mod smol_pool;
pub mod stress;
pub mod sweep;
pub mod table1;
pub mod table2;
pub mod tolerant;
