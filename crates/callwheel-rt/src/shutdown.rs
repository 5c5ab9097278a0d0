//! A runtime's shutdown: the flag its drivers, timers and clock-set watcher read, and the
//! timer sets that must hear of it.

use std::sync::Weak;

use crate::sync::{AtomicBool, Ordering};
use crate::Error;

/// Something that must hear when its runtime goes away: a timer set, whose waiters would
/// otherwise sleep on a queue that can no longer change.
pub(crate) trait OnShutdown: Send + Sync {
    /// The runtime has been dropped (its drivers and workers have stopped).
    fn shut_down(&self);
}

/// Whether the runtime is shutting down, and who must hear of it.
#[derive(Default)]
pub(crate) struct Shutdown {
    /// Raised once, when the runtime is dropped.
    begun: AtomicBool,
    /// Timer sets to tell of the shutdown (held weakly: a set does not outlive its owner).
    /// A plain std mutex also under loom: it is not part of any model.
    listeners: std::sync::Mutex<Vec<Weak<dyn OnShutdown>>>,
}

impl Shutdown {
    /// Whether the runtime has begun shutting down (its drivers stop at their next look).
    pub(crate) fn begun(&self) -> bool {
        self.begun.load(Ordering::Acquire)
    }

    /// Raises the flag.
    pub(crate) fn begin(&self) {
        self.begun.store(true, Ordering::Release);
    }

    /// Registers `w` to hear of the shutdown. Refused memory is [`callwheel::Error::NoMemory`];
    /// after the shutdown began, [`Error::ShutDown`].
    pub(crate) fn listen(&self, w: Weak<dyn OnShutdown>) -> Result<(), Error> {
        let mut list = self.listeners.lock().unwrap_or_else(|p| p.into_inner());
        if self.begun() {
            return Err(Error::ShutDown);
        }
        if list.len() == list.capacity() {
            // Forget dropped sets before growing, so making and dropping sets without end
            // keeps the list as long as the sets alive (amortised: at most once per doubling).
            list.retain(|w| w.strong_count() > 0);
        }
        list.try_reserve(1)
            .map_err(|_| Error::Wheel(callwheel::Error::NoMemory))?;
        list.push(w);
        Ok(())
    }

    /// Tells every listener still alive that the runtime is gone (once its drivers and
    /// workers have stopped), so a thread waiting on a timer set does not wait for ever.
    pub(crate) fn tell_listeners(&self) {
        let listeners =
            std::mem::take(&mut *self.listeners.lock().unwrap_or_else(|p| p.into_inner()));
        for w in listeners {
            if let Some(w) = w.upgrade() {
                w.shut_down();
            }
        }
    }
}

impl std::fmt::Debug for Shutdown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shutdown")
            .field("begun", &self.begun())
            .finish_non_exhaustive()
    }
}
