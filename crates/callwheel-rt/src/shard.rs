//! One shard: a production wheel behind a lock, the driver's plan, its waiter and counters.

use callwheel::Wheel;
use hdrhistogram::Histogram;

use crate::clock::{Clamp, Waiter};
use crate::counted::Counted;
use crate::lead::{Lead, Plan};
use crate::stats::Counters;
use crate::sync::Mutex;
use crate::timer::Core;

/// The state behind a shard's lock.
#[derive(Debug)]
pub(crate) struct ShardState {
    pub(crate) wheel: Wheel<Counted<Core>>,
    pub(crate) plan: Plan,
    /// How far before a window's end the driver aims (see the `lead` module).
    pub(crate) lead: Lead,
    pub(crate) clamp: Clamp,
    /// The runtime has been dropped and the wheel emptied: no arming is taken any more.
    pub(crate) closed: bool,
    /// The timers pending here on another clock base than the runtime clock's (the `bases`
    /// module), each knowing its place (`TimerCore::based_at`).
    pub(crate) based: Vec<Counted<Core>>,
    /// The count of clock sets (the clock's own and the runtime's watcher's) at the last
    /// re-evaluation of `based`.
    pub(crate) sets_seen: u64,
}

/// One shard.
#[derive(Debug)]
pub(crate) struct Shard {
    pub(crate) state: Mutex<ShardState>,
    pub(crate) waiter: Box<dyn Waiter>,
    pub(crate) counters: Counters,
    pub(crate) lateness: Mutex<Histogram<u64>>,
}

impl Shard {
    pub(crate) fn new(waiter: Box<dyn Waiter>, lateness: Histogram<u64>) -> Shard {
        Shard {
            state: Mutex::new(ShardState {
                wheel: Wheel::new(),
                // A new driver looks at its (empty) wheel before its first sleep.
                plan: Plan::Awake,
                lead: Lead::ZERO,
                clamp: Clamp::default(),
                closed: false,
                based: Vec::new(),
                sets_seen: 0,
            }),
            waiter,
            counters: Counters::default(),
            lateness: Mutex::new(lateness),
        }
    }
}
