//! A clock for tests that never moves and never sleeps, with no clock bases: what the step
//! tests and the loom models use where a `ManualClock` would do too much.

use std::io;

use crate::clock::{Clock, Waiter, Wake};

/// A clock stuck at its reading: a timer due then is due at every step.
#[derive(Debug)]
pub(crate) struct Fixed(pub(crate) u64);

/// A waiter that returns at once, as if its deadline had come.
#[derive(Debug)]
pub(crate) struct NoSleep;

impl Waiter for NoSleep {
    fn wait(&self, _: Option<u64>) -> io::Result<Wake> {
        Ok(Wake::Deadline)
    }
    fn wake(&self) {}
}

impl Clock for Fixed {
    fn now(&self) -> u64 {
        self.0
    }
    fn waiter(&self) -> io::Result<Box<dyn Waiter>> {
        Ok(Box::new(NoSleep))
    }
}
