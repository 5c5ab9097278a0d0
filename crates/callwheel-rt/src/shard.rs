//! One shard: a production wheel behind a lock, the driver's plan, its waiter and counters.
//! Generic over the timers' callback (`F`, the callback's type, which names the timer's
//! handle): the runtime's shared state fixes it, so this module needs nothing from it.

use callwheel::Wheel;
use hdrhistogram::Histogram;

use crate::clock::{Clamp, Waiter};
use crate::counted::Counted;
use crate::lead::{Lead, Plan};
use crate::stats::Counters;
use crate::sync::Mutex;
use crate::timer_core::TimerCore;

/// The state behind a shard's lock.
pub(crate) struct ShardState<F: ?Sized> {
    pub(crate) wheel: Wheel<Counted<TimerCore<F>>>,
    pub(crate) plan: Plan,
    /// How far before a window's end the driver aims (see the `lead` module).
    pub(crate) lead: Lead,
    pub(crate) clamp: Clamp,
    /// The runtime has been dropped and the wheel emptied: no arming is taken any more.
    pub(crate) closed: bool,
    /// The timers pending here on another clock base than the runtime clock's (the `bases`
    /// module), each knowing its place (`TimerCore::based_at`).
    pub(crate) based: Vec<Counted<TimerCore<F>>>,
    /// The count of clock sets (the clock's own and the runtime's watcher's) at the last
    /// re-evaluation of `based`.
    pub(crate) sets_seen: u64,
}

/// One shard.
pub(crate) struct Shard<F: ?Sized> {
    pub(crate) state: Mutex<ShardState<F>>,
    pub(crate) waiter: Box<dyn Waiter>,
    pub(crate) counters: Counters,
    pub(crate) lateness: Mutex<Histogram<u64>>,
}

// By hand: a derive would ask the callback's type to be `Debug` too.
impl<F: ?Sized> std::fmt::Debug for ShardState<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardState")
            .field("pending", &callwheel::Timers::len(&self.wheel))
            .field("plan", &self.plan)
            .field("closed", &self.closed)
            .finish_non_exhaustive()
    }
}

impl<F: ?Sized> std::fmt::Debug for Shard<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shard")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl<F: ?Sized> Shard<F> {
    pub(crate) fn new(waiter: Box<dyn Waiter>, lateness: Histogram<u64>) -> Shard<F> {
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
