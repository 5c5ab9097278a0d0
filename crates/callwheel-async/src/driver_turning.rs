//! A shard of a driver as the one driver loop turns it ([`DriveLoop`]): what a turn fires
//! (the wakers due), what it counts, and the loop of a driver thread of the driver's own.

use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;

use callwheel_rt::drive_loop::{DriveLoop, Event, Next, Turn, Waited};
use callwheel_rt::Clock;

use super::{Inner, BUDGET};
use crate::sync::Ordering;

/// A shard as its driver's loop turns it ([`DriveLoop`]), whatever waits between the turns
/// (a thread of the driver's own, a task on an executor's reactor, tokio's paused clock, or
/// async-io's reactor calling back): a turn wakes the wakers due, gathered in `due`.
#[derive(Debug)]
pub(crate) struct Turning {
    inner: Arc<Inner>,
    shard: usize,
    due: Vec<Waker>,
    /// The warm-up the last turn planned, for the loop to take.
    warm: Option<u64>,
}

impl Turning {
    pub(crate) fn new(inner: Arc<Inner>, shard: usize) -> Turning {
        Turning {
            inner,
            shard,
            due: Vec::with_capacity(BUDGET as usize),
            warm: None,
        }
    }
}

impl Turn for Turning {
    fn turn(&mut self, late: Option<u64>) -> Next {
        let (next, warm) = self.inner.turn(self.shard, &mut self.due, late);
        self.warm = warm;
        next
    }

    fn warm_up(&mut self, until: u64) -> Option<u64> {
        self.warm.take().filter(|&w| w < until)
    }

    fn clock(&self) -> &dyn Clock {
        &*self.inner.clock
    }

    fn stopping(&self) -> bool {
        self.inner.is_shut_down()
    }

    fn count(&mut self, event: Event) {
        let shard = &self.inner.shards[self.shard];
        match event {
            Event::Waited(Waited::Planned) => shard.wakeups.fetch_add(1, Ordering::Relaxed),
            Event::WarmedUp(Waited::Planned) => shard.warm_ups.fetch_add(1, Ordering::Relaxed),
            _ => 0,
        };
    }
}

/// The loop of shard `i`'s thread, until the driver shuts down.
pub(crate) fn drive_thread(inner: Arc<Inner>, i: usize) {
    let mut turning = Turning::new(Arc::clone(&inner), i);
    DriveLoop::new().on_thread(&mut turning, inner.thread_waiter(i), Duration::ZERO);
}
