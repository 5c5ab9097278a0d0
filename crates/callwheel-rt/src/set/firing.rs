//! The set's runtime timer: its firing (a budget's worth of due timers to the queue), its
//! re-arming at the wheel's next wake-up, the notification (eventfd, condition variable,
//! callback) and the shutdown when the runtime goes.

use super::{lock, notify, Callback, Inner, State};
use crate::shutdown::OnShutdown;
use crate::Timer;

impl OnShutdown for Inner {
    fn shut_down(&self) {
        let mut st = lock(&self.state);
        self.shut(&mut st);
        drop(st);
        // Waiters re-check under the lock and return.
        self.ready.notify_all();
    }
}

impl Inner {
    /// Once the runtime is gone: destroys every timer (the runtime cancelled the set's own
    /// timer) and lowers the notification. Returns whether the set is shut down.
    pub(super) fn shut(&self, st: &mut State) -> bool {
        if st.dead {
            return true;
        }
        st.dead = true;
        st.table.clear();
        st.armed = None;
        if st.signalled {
            st.signalled = false;
            self.event.clear();
        }
        true
    }

    /// Whether the set's runtime is gone, shutting the set down on the first call that sees it.
    /// A copy in a child forked since the runtime was built counts as gone but is left as it
    /// is: its descriptor is the parent's too, and clearing it would hide the parent's queue.
    pub(super) fn is_shut_down(&self, st: &mut State, os: &Timer) -> bool {
        if os.shared.shutdown.forked() {
            return true;
        }
        st.dead || (os.shared.is_shut_down() && self.shut(st))
    }

    /// After an update under the lock: re-arms the runtime timer if the set's next wake-up
    /// moved (`force`: the arming was just spent), then raises or lowers the notification.
    /// Returns the callback to run, once the lock is released, when the queue became non-empty.
    pub(super) fn settle(&self, st: &mut State, os: &Timer, force: bool) -> Option<Callback> {
        let next = st.table.next_wakeup();
        if force || next != st.armed {
            st.armed = match next {
                // A runtime that is gone cannot arm: the queue then moves only when the set is
                // called (every call catches up with the clock).
                Some(at) => os.start_on_shards_clock(at).ok().map(|_| at),
                None => {
                    if st.armed.is_some() {
                        let _ = os.stop();
                    }
                    None
                }
            };
        }
        let non_empty = st.table.queued() > 0;
        if non_empty && !st.signalled {
            st.signalled = true;
            self.event.signal();
            self.ready.notify_all();
            return st.callback.clone();
        }
        if !non_empty && st.signalled {
            st.signalled = false;
            self.event.clear();
        }
        None
    }

    /// The runtime timer fired: move a budget's worth of due timers to the queue, re-arm
    /// (at once when some are left: the wheel's wake-up is then its own time), notify.
    pub(super) fn on_fire(&self, os: &Timer) {
        let mut st = lock(&self.state);
        if self.is_shut_down(&mut st, os) {
            return;
        }
        if self.callers_waiting() {
            // A user call waits for the lock: it catches up with the clock and settles (every
            // counted caller does), re-arming this timer. Re-arming it here at a time already
            // due would fire it again at the driver's next step, and again, for as long as
            // calls keep coming: a driver spinning on the set.
            st.armed = None;
            return;
        }
        let now = os.shared.now();
        self.expire_once(&mut st, now);
        // Re-armed at the wheel's wake-up: its own time (the next step) while due timers are
        // left.
        let callback = self.settle(&mut st, os, true);
        drop(st);
        if let Some(f) = callback {
            notify(f);
        }
    }
}
