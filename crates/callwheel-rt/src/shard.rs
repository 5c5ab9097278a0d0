//! One shard: a production wheel behind a lock, the driver's plan, its waiter and counters.

use std::sync::Arc;

use callwheel::Wheel;
use hdrhistogram::Histogram;

use crate::clock::{Clamp, Waiter};
use crate::lead::Lead;
use crate::stats::Counters;
use crate::sync::Mutex;
use crate::timer::TimerCore;

/// What the driver is doing, as seen by a thread that arms a timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Between wake-up and sleep: it will look at the wheel again before sleeping, so a new
    /// timer needs no wake-up.
    Awake,
    /// Asleep (or about to be) until this reading (`None`: until woken). A new timer whose
    /// aim ([`Lead::aim_for`]) comes earlier must wake it.
    Asleep(Option<u64>),
}

impl Plan {
    /// Whether a new timer the driver would aim at `aim` needs the driver woken.
    pub(crate) fn must_wake_for(self, aim: u64) -> bool {
        match self {
            Plan::Awake => false,
            Plan::Asleep(None) => true,
            Plan::Asleep(Some(planned)) => aim < planned,
        }
    }
}

/// The state behind a shard's lock.
#[derive(Debug)]
pub(crate) struct ShardState {
    pub(crate) wheel: Wheel<Arc<TimerCore>>,
    pub(crate) plan: Plan,
    /// How far before a window's end the driver aims (see the `lead` module).
    pub(crate) lead: Lead,
    pub(crate) clamp: Clamp,
    /// The runtime has been dropped and the wheel emptied: no arming is taken any more.
    pub(crate) closed: bool,
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
            }),
            waiter,
            counters: Counters::default(),
            lateness: Mutex::new(lateness),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_earlier_window_end_wakes_a_sleeping_driver() {
        assert!(!Plan::Awake.must_wake_for(0));
        assert!(Plan::Asleep(None).must_wake_for(u64::MAX));
        assert!(Plan::Asleep(Some(100)).must_wake_for(99));
        assert!(!Plan::Asleep(Some(100)).must_wake_for(100));
        assert!(!Plan::Asleep(Some(100)).must_wake_for(101));
    }
}
