//! What a stress run asks for: the options of `callwheel stress`, the sizes they resolve to
//! and the target the run is judged against.

use clap::Args;

/// The `start` latency target during a mass expiry, ns (the runtime's target): p99 under this.
pub const START_P99_TARGET_NS: u64 = 50_000;

/// The size of the mass expiry the target is set for (the runtime's target: 1e6 timers).
pub const TARGET_TIMERS: u64 = 1_000_000;

/// The options of `callwheel stress`.
#[derive(Clone, Debug, Default, Args)]
pub struct StressArgs {
    /// Threads starting and stopping timers during the mass expiry.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=64))]
    pub threads: u64,
    /// Timers in the mass expiry [default: 1000000; --quick: 100000; --tiny: 2000].
    #[arg(long, value_name = "M", value_parser = clap::value_parser!(u64).range(1..=20_000_000))]
    pub timers: Option<u64>,
    /// The least time the churn threads run, ms; they always run until the mass expiry is over
    /// [default: 1000; --tiny: 20].
    #[arg(long = "duration-ms", value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub duration_ms: Option<u64>,
    /// --quick (a tenth of the timers) and --tiny.
    #[command(flatten)]
    pub sizes: crate::flags::Sizes,
    /// --out DIR and --json.
    #[command(flatten)]
    pub output: crate::flags::Output,
}

/// The sizes of one run, defaults resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Churn threads.
    pub threads: u64,
    /// Mass-expiry timers.
    pub timers: u64,
    /// The least churn time, ms.
    pub duration_ms: u64,
    /// Timers per thread in the throughput runs.
    pub scaling_timers: u64,
    /// How long each throughput run calls, ms.
    pub scaling_ms: u64,
}

impl StressArgs {
    /// The plan these options ask for.
    pub fn plan(&self) -> Plan {
        let (timers, duration_ms, scaling_ms) = if self.sizes.tiny {
            (2_000, 20, 20)
        } else if self.sizes.quick {
            (100_000, 1_000, 300)
        } else {
            (1_000_000, 1_000, 1_000)
        };
        Plan {
            threads: self.threads,
            timers: self.timers.unwrap_or(timers),
            duration_ms: self.duration_ms.unwrap_or(duration_ms),
            scaling_timers: if self.sizes.tiny { 1_000 } else { 10_000 },
            scaling_ms,
        }
    }
}
