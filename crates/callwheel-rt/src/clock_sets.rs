//! Hearing clock sets: the runtime's watcher thread, and the count of sets each shard
//! compares with the one it last re-evaluated its timers on other clock bases at (the
//! `bases` module).

use std::sync::Arc;

use crate::bases::key_on;
use crate::clock::{ClockId, Waiter, Wake};
use crate::deadline::{Deadline, Resolved};
use crate::shared::{ClockSets, Shared};
use crate::stats::Counters;
use crate::sync::Ordering;
use crate::Error;

impl ClockSets {
    /// A set was heard (by a driver's waiter or the watcher).
    pub(crate) fn heard_one(&self) {
        self.heard.fetch_add(1, Ordering::AcqRel);
    }

    /// Stops the watcher, if one was started (the shutdown flag is up: it leaves its loop
    /// when woken).
    pub(crate) fn stop_watcher(&self) {
        let watcher = self
            .watcher
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some((waiter, thread)) = watcher {
            waiter.wake();
            let _ = thread.join();
        }
    }
}

impl Shared {
    /// The deadline on the shards' clock, and the base reading it stands for when it is on
    /// another clock base.
    pub(crate) fn resolve(
        &self,
        deadline: Deadline,
    ) -> Result<(u64, Option<(ClockId, u64)>), Error> {
        match deadline.resolve(&*self.clock, self.own_base) {
            Resolved::Own(ns) => Ok((ns, None)),
            Resolved::Base(base, ns) => Ok((self.key_for(base, ns)?, Some((base, ns)))),
        }
    }

    /// The key for reading `ns` of `base`, by the runtime clock's present reading; starts the
    /// set watcher first if the clock has one and it is not running.
    ///
    /// # Errors
    ///
    /// [`Error::NoClockBase`]; [`Error::Io`] when the watcher cannot be started.
    pub(crate) fn key_for(&self, base: ClockId, ns: u64) -> Result<u64, Error> {
        self.watch_sets()?;
        key_on(&*self.clock, base, ns, self.now())
    }

    /// Starts the thread that hears clock sets for a clock whose drivers' waiters cannot (see
    /// [`Clock::set_watcher`]), unless it runs or the clock needs none. It counts each set in
    /// `sets` and every shard's `clock_sets`, and wakes every driver to re-evaluate its timers
    /// on other bases. (A set landing between the watcher's wake-up and its next arming is
    /// seen by the drivers it wakes when it comes before their clock readings; one after them
    /// waits for the next set or arming on another base.)
    fn watch_sets(&self) -> Result<(), Error> {
        let mut slot = self
            .clock_sets
            .watcher
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if slot.is_some() || self.shutdown.begun() {
            return Ok(());
        }
        // Gone only while the runtime is being dropped, which needs no watcher.
        let Some(shared) = self.me.upgrade() else {
            return Ok(());
        };
        let Some(waiter) = self.clock.set_watcher()? else {
            return Ok(());
        };
        let waiter: Arc<dyn Waiter> = Arc::from(waiter);
        let w = Arc::clone(&waiter);
        let thread = std::thread::Builder::new()
            .name("callwheel-rt-clock-sets".into())
            .spawn(move || loop {
                // The far future: only a set (or the shutdown's wake) ends this wait.
                match w.wait(Some(u64::MAX)) {
                    Ok(Wake::ClockSet) => {
                        shared.clock_sets.heard_one();
                        for shard in &shared.shards {
                            Counters::bump(&shard.counters.clock_sets);
                            shard.waiter.wake();
                        }
                    }
                    Ok(Wake::Early) if shared.shutdown.begun() => return,
                    Ok(_) => {}
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(1)),
                }
            })?;
        *slot = Some((waiter, thread));
        Ok(())
    }

    /// The count of clock sets a shard compares with the one it last re-evaluated at.
    pub(crate) fn set_count(&self) -> u64 {
        self.clock
            .sets()
            .wrapping_add(self.clock_sets.heard.load(Ordering::Acquire))
    }
}
