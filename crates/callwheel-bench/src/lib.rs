//! The benchmark workloads of callwheel, as a library: W1 (cancel and restart with N others
//! outstanding), W2 (churn), W3 (mass expiry), W4 (sparse advance) and W5 (coalescing), with the
//! SplitMix64 generator and seed they draw from, on any structure behind the core's
//! [`Timers`](callwheel::Timers) / [`Scheme`](callwheel::Scheme) traits.
//!
//! The `callwheel` command runs them on every structure and peer; the examples use the same
//! generator to reproduce a workload exactly. `docs/workloads.md` in the source tree describes
//! each workload.

#![warn(missing_docs)]

pub mod workload;
