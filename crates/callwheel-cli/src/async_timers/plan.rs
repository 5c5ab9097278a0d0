//! What `callwheel async` runs: its options and the sizes they resolve to.

use clap::Args;

/// The tolerance of the tolerant coalescing run, in per cent of each interval's period.
pub const COALESCING_PERCENT: u64 = 5;

/// The options of `callwheel async`.
#[derive(Clone, Debug, Default, Args)]
pub struct AsyncArgs {
    /// Task counts of the timeout churn, comma-separated [default: 1,64,1024].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub tasks: Vec<u64>,
    /// Timeouts per churn measurement, over all tasks [default: 2000000; --quick: 200000; --tiny: 2000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000_000))]
    pub ops: Option<u64>,
    /// Samples per source and requested sleep in the precision sweep [default: 100; --quick: 20; --tiny: 3].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub samples: Option<u64>,
    /// Sleeping tasks in each storm [default: 1000000; --quick: 100000; --tiny: 1000].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub sleepers: Option<u64>,
    /// --quick and --tiny.
    #[command(flatten)]
    pub sizes: crate::flags::Sizes,
    /// --out DIR (the precision sweep's log-log figure as DIR/async-precision.svg and .png)
    /// and --json.
    #[command(flatten)]
    pub output: crate::flags::Output,
    /// Run one storm case in this process and print its result line (the parent's child).
    #[arg(long, hide = true, value_name = "CASE")]
    pub storm_child: Option<String>,
}

/// The sizes of one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsyncPlan {
    /// Samples per source and request of the precision sweep.
    pub samples: u64,
    /// The precision sweep's requests, µs.
    pub requests_us: Vec<u64>,
    /// Intervals in the coalescing runs.
    pub intervals: u64,
    /// How long each coalescing run lasts, ms.
    pub coalescing_ms: u64,
    /// Task counts of the churn.
    pub tasks: Vec<u64>,
    /// Timeouts per churn measurement.
    pub ops: u64,
    /// Sleeping tasks per storm.
    pub sleepers: u64,
    /// The span the storm's deadlines are drawn over, in ms (they start a fifth of it, plus 3 µs
    /// per task, after the first spawn, so that registering does not run into them).
    pub span_ms: u64,
}

impl AsyncArgs {
    /// The sizes these options ask for.
    pub fn plan(&self) -> AsyncPlan {
        let (ops, sleepers, samples, intervals, coalescing_ms) = if self.sizes.tiny {
            (2_000, 1_000, 3, 50, 100)
        } else if self.sizes.quick {
            (200_000, 100_000, 20, 1_000, 1_000)
        } else {
            (2_000_000, 1_000_000, 100, 1_000, 2_000)
        };
        AsyncPlan {
            intervals,
            coalescing_ms,
            samples: self.samples.unwrap_or(samples),
            requests_us: if self.sizes.tiny {
                vec![10, 1_000]
            } else {
                crate::async_precision::REQUESTS_US.to_vec()
            },
            tasks: if self.tasks.is_empty() {
                vec![1, 64, 1_024]
            } else {
                self.tasks.clone()
            },
            ops: self.ops.unwrap_or(ops),
            sleepers: self.sleepers.unwrap_or(sleepers),
            span_ms: if self.sizes.tiny { 50 } else { 1_000 },
        }
    }
}
