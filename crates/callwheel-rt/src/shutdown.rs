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
pub(crate) struct Shutdown {
    /// Raised once, when the runtime is dropped.
    begun: AtomicBool,
    /// The process's fork generation when the runtime was built ([`crate::fork_generation`]):
    /// in a child forked since, the runtime is a copy whose drivers and workers stay with the
    /// parent, shut down from the child's first look.
    generation: u64,
    /// Timer sets to tell of the shutdown (held weakly: a set does not outlive its owner).
    /// A plain std mutex also under loom: it is not part of any model.
    listeners: std::sync::Mutex<Vec<Weak<dyn OnShutdown>>>,
}

impl Default for Shutdown {
    fn default() -> Shutdown {
        Shutdown {
            begun: AtomicBool::new(false),
            generation: crate::fork_generation(),
            listeners: std::sync::Mutex::new(Vec::new()),
        }
    }
}

impl Shutdown {
    /// Whether the runtime has begun shutting down (its drivers stop at their next look), or
    /// is a copy in a child forked since it was built.
    pub(crate) fn begun(&self) -> bool {
        self.begun.load(Ordering::Acquire) || self.forked()
    }

    /// Whether this is a copy in a child forked since the runtime was built: no thread of the
    /// child runs its drivers or workers, so it arms nothing there, and its drop neither
    /// joins those threads (they do not exist in the child: a join would wait for ever) nor
    /// takes their locks (a parent thread may have held one at the fork).
    pub(crate) fn forked(&self) -> bool {
        self.generation != crate::fork_generation()
    }

    /// Raises the flag.
    pub(crate) fn begin(&self) {
        self.begun.store(true, Ordering::Release);
    }

    /// Registers `w` to hear of the shutdown. Refused memory is [`callwheel::Error::NoMemory`];
    /// after the shutdown began, [`Error::ShutDown`].
    pub(crate) fn listen(&self, w: Weak<dyn OnShutdown>) -> Result<(), Error> {
        if self.forked() {
            return Err(Error::ShutDown);
        }
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
