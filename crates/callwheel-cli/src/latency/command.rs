//! `callwheel latency`: its options, and the latency experiment run alone on the plan they ask
//! for.

use std::process::ExitCode;

use clap::Args;

use super::experiment::{Latency, Plan};
use super::LatencyArgs;

/// The longest `--spin-us`: the runtime's own bound.
const MAX_SPIN_US: u64 = callwheel_rt::MAX_SPIN.as_micros() as u64;

/// The options of `callwheel latency`.
#[derive(Clone, Debug, Default, Args)]
pub struct LatencyCommand {
    /// Samples per source (the hrtimers table used 10000) [default: 500; --quick: 200; --tiny: 20].
    #[arg(long, alias = "loops", value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub samples: Option<u64>,
    /// Period between timers, in µs [default: 10000; --tiny: 1000].
    #[arg(long = "period-us", value_name = "US", value_parser = clap::value_parser!(u64).range(100..=10_000_000))]
    pub period_us: Option<u64>,
    /// Keep every CPU busy with a spinning thread during the run.
    #[arg(long)]
    pub load: bool,
    /// Let the runtime's driver spin this long before each wake-up (the runtime's opt-in
    /// `spin`, at most its MAX_SPIN, 1000 µs); the report gives the CPU time it cost
    /// [default: 0, off].
    #[arg(long = "spin-us", value_name = "US", value_parser = clap::value_parser!(u64).range(0..=MAX_SPIN_US))]
    pub spin_us: Option<u64>,
    /// --quick and --tiny.
    #[command(flatten)]
    pub sizes: crate::flags::Sizes,
    /// --out DIR (the lateness histogram, `latency_histogram.svg` and `.png`) and --json.
    #[command(flatten)]
    pub output: crate::flags::Output,
}

impl LatencyCommand {
    /// The plan these options ask for: one run, idle or loaded.
    pub fn plan(&self) -> Plan {
        Plan {
            runs: vec![self.settings()],
        }
    }

    /// The run these options ask for.
    fn settings(&self) -> LatencyArgs {
        let (samples, period_us) = if self.sizes.tiny {
            (20, 1_000)
        } else if self.sizes.quick {
            (200, 10_000)
        } else {
            (500, 10_000)
        };
        LatencyArgs {
            samples: self.samples.unwrap_or(samples),
            period_us: self.period_us.unwrap_or(period_us),
            load: self.load,
            spin_us: self.spin_us.unwrap_or(0),
        }
    }
}

/// `callwheel latency`: the experiment run alone on the plan the options ask for.
pub fn command(args: &LatencyCommand) -> ExitCode {
    crate::experiment::alone(&Latency, &args.plan(), &args.output)
}
