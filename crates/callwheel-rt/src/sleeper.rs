//! One blocked thread and what woke it: the part of a sleep and of a condition-variable wait
//! that parks the caller until a notification or its alarm (a runtime timer) wakes it.
//!
//! Who wakes the sleeper is decided by one compare-and-swap on its state, so a notification
//! and an alarm racing each other wake it once, and the loser knows it lost (a notification
//! that loses goes to the next waiter). The state is set before the thread is unparked and
//! the park loop re-reads it, so neither an unpark that comes before the park nor a stray one
//! (left over from an earlier sleep of the same thread) loses or invents a wake-up.

use crate::sync::{self, AtomicUsize, Ordering, Thread};

/// Why a wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Woken {
    /// A notification woke it ([`Condvar::notify_one`](crate::Condvar::notify_one) or
    /// [`Condvar::notify_all`](crate::Condvar::notify_all)).
    Notified,
    /// Its timeout's timer fired: the deadline has passed.
    TimedOut,
}

const WAITING: usize = 0;
const NOTIFIED: usize = 1;
const TIMED_OUT: usize = 2;
/// It stopped waiting without being woken (it left on a panic): nothing can wake it now.
const LEFT: usize = 3;

/// A thread blocked in a sleep or a wait.
#[derive(Debug)]
pub(crate) struct Sleeper {
    thread: Thread,
    state: AtomicUsize,
}

impl Sleeper {
    /// The calling thread, about to block.
    pub(crate) fn current() -> Sleeper {
        Sleeper {
            thread: sync::current(),
            state: AtomicUsize::new(WAITING),
        }
    }

    /// Wakes the sleeper as `how` unless something woke it already; whether this call did.
    pub(crate) fn wake(&self, how: Woken) -> bool {
        let to = match how {
            Woken::Notified => NOTIFIED,
            Woken::TimedOut => TIMED_OUT,
        };
        // AcqRel: the sleeper that reads the new state sees everything its waker did first.
        let won = self
            .state
            .compare_exchange(WAITING, to, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if won {
            self.thread.unpark();
        }
        won
    }

    /// What woke it, if anything did.
    pub(crate) fn woken(&self) -> Option<Woken> {
        match self.state.load(Ordering::Acquire) {
            NOTIFIED => Some(Woken::Notified),
            TIMED_OUT => Some(Woken::TimedOut),
            _ => None,
        }
    }

    /// Stops waiting: from now on nothing wakes it. Returns what woke it first, if anything
    /// did (its waker's work is then the caller's to pass on).
    pub(crate) fn abandon(&self) -> Option<Woken> {
        match self
            .state
            .compare_exchange(WAITING, LEFT, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => None,
            Err(_) => self.woken(),
        }
    }

    /// Blocks the calling thread (the sleeper's own) until [`Sleeper::wake`] has been called.
    pub(crate) fn park(&self) -> Woken {
        loop {
            match self.state.load(Ordering::Acquire) {
                NOTIFIED => return Woken::Notified,
                TIMED_OUT => return Woken::TimedOut,
                _ => sync::park(),
            }
        }
    }
}
