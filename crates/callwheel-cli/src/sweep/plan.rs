//! What a sweep runs: the requested sleeps, the sources that sleep them, the options of
//! `callwheel sweep` and the sizes they resolve to.

use clap::Args;

/// The requested sleeps of the default sweep, in µs: 1-2-5 steps per decade, 1 µs to 10 ms.
pub const REQUESTS_US: [u64; 13] = [
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000,
];

/// The tolerance of the tolerant sources, in per cent of the requested sleep (calloutng's
/// Figure 5).
pub const TOLERANCE_PERCENT: u64 = 5;

/// The tolerances of the wake-up batches, in per cent.
pub const BATCH_TOLERANCES: [u64; 2] = [0, TOLERANCE_PERCENT];

/// A source of sleeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// A callwheel-rt timer with no tolerance.
    CallwheelExact,
    /// A callwheel-rt timer with 5 % tolerance.
    CallwheelTolerant,
    /// `clock_nanosleep(TIMER_ABSTIME)` with 1 ns timer slack.
    RawExact,
    /// `clock_nanosleep(TIMER_ABSTIME)` with 5 % of the request as timer slack.
    RawSlack,
    /// `tokio::time::sleep` on a current-thread runtime.
    Tokio,
    /// `Runtime::sleep` with 5 % precision: the sleeping thread itself woken by a runtime
    /// timer (calloutng's `pause_sbt`).
    SleepTolerant,
    /// A timed-out wait on the runtime's `Condvar` with 5 % precision (`cv_timedwait_sbt`).
    CondvarTolerant,
}

impl Source {
    /// Every source, in table order.
    pub const ALL: [Source; 7] = [
        Source::CallwheelExact,
        Source::CallwheelTolerant,
        Source::RawExact,
        Source::RawSlack,
        Source::Tokio,
        Source::SleepTolerant,
        Source::CondvarTolerant,
    ];

    /// The name in tables, legends and the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Source::CallwheelExact => "callwheel-rt, exact",
            Source::CallwheelTolerant => "callwheel-rt, 5 %",
            Source::RawExact => "clock_nanosleep, 1 ns slack",
            Source::RawSlack => "clock_nanosleep, 5 % slack",
            Source::Tokio => "tokio::time::sleep",
            Source::SleepTolerant => "callwheel-rt sleep, 5 %",
            Source::CondvarTolerant => "callwheel-rt condvar wait, 5 %",
        }
    }
}

/// The options of `callwheel sweep`.
#[derive(Clone, Debug, Default, Args)]
pub struct SweepArgs {
    /// Samples per source and requested sleep [default: 100; --quick: 20; --tiny: 3].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub samples: Option<u64>,
    /// Requested sleeps in µs, comma-separated [default: 1,2,5,10,20,50,100,200,500,1000,2000,5000,10000; --tiny: 1,100,1000].
    #[arg(long = "requests-us", value_name = "LIST", value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub requests_us: Vec<u64>,
    /// Timers in each wake-up batch [default: 1000; --tiny: 50].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub timers: Option<u64>,
    /// The span the batch deadlines are drawn over, in ms [default: 2000; --quick: 1000; --tiny: 20].
    #[arg(long = "span-ms", value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=600_000))]
    pub span_ms: Option<u64>,
    /// --quick (20 samples, batches over 1 s: about 4 s in all) and --tiny.
    #[command(flatten)]
    pub sizes: crate::flags::Sizes,
    /// --out DIR (the log-log figure, requested against actual sleep, as DIR/sweep.svg and
    /// DIR/sweep.png) and --json.
    #[command(flatten)]
    pub output: crate::flags::Output,
}

/// The sizes of one sweep, defaults resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Requested sleeps, µs, ascending without repeats.
    pub requests_us: Vec<u64>,
    /// Samples per source and request.
    pub samples: u64,
    /// Timers per wake-up batch.
    pub batch_timers: u64,
    /// The span of the batch deadlines, ms.
    pub span_ms: u64,
    /// How long the idle check watches a runtime with nothing due, ms.
    pub idle_ms: u64,
}

impl SweepArgs {
    /// The plan these options ask for.
    pub fn plan(&self) -> Plan {
        let (samples, requests, timers, span_ms, idle_ms) = if self.sizes.tiny {
            (3, vec![1, 100, 1_000], 50, 20, 20)
        } else if self.sizes.quick {
            (20, REQUESTS_US.to_vec(), 1_000, 1_000, 200)
        } else {
            (100, REQUESTS_US.to_vec(), 1_000, 2_000, 500)
        };
        let mut requests_us = if self.requests_us.is_empty() {
            requests
        } else {
            self.requests_us.clone()
        };
        requests_us.sort_unstable();
        requests_us.dedup();
        Plan {
            requests_us,
            samples: self.samples.unwrap_or(samples),
            batch_timers: self.timers.unwrap_or(timers),
            span_ms: self.span_ms.unwrap_or(span_ms),
            idle_ms,
        }
    }
}
