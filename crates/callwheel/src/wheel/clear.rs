//! [`Wheel::clear`]: every pending timer dropped at once, the wheel kept consistent when a
//! value's drop panics.

use super::geometry::NIL;
use super::storage::Entry;
use super::Wheel;

impl<T> Wheel<T> {
    /// Drops every pending timer (their values with them): every handle goes stale, as after a
    /// stop, and the dropped timers count as stopped in [`WheelStats`](super::WheelStats). The
    /// wheel's time, its counters and its slab's memory are kept; an `advance` left unfinished
    /// by a budget resumes with nothing left to fire. O(slab size).
    ///
    /// A value whose drop panics does not leave the wheel half cleared: the lists are emptied
    /// before any value is dropped, and when a drop panics the remaining timers are freed all
    /// the same (their values leaked, not dropped) before the panic goes on.
    pub fn clear(&mut self) {
        self.storage.links.reset_sentinels();
        self.levels.clear();
        self.periodic.clear();
        self.processing = NIL;
        self.walk_next = NIL;
        let mut rest = Clearing {
            wheel: self,
            next: 0,
        };
        while let Some(value) = rest.free_next() {
            drop(value);
        }
    }
}

/// What is left of a [`Wheel::clear`]: the slots from `next` on. Its drop runs only when a
/// value's drop panicked (otherwise nothing is left): it frees the rest, leaking their values,
/// so that the wheel stays consistent while the panic unwinds.
struct Clearing<'a, T> {
    wheel: &'a mut Wheel<T>,
    next: u32,
}

impl<T> Clearing<'_, T> {
    /// Frees the next live timer and hands back its value, or `None` when none is left.
    fn free_next(&mut self) -> Option<T> {
        while let Some(entry) = self.wheel.storage.entry(self.next as usize) {
            let idx = self.next;
            self.next += 1;
            if matches!(entry, Entry::Live(_)) {
                self.wheel.stats.stopped += 1;
                return Some(self.wheel.storage.release(idx));
            }
        }
        None
    }
}

impl<T> Drop for Clearing<'_, T> {
    fn drop(&mut self) {
        while let Some(value) = self.free_next() {
            core::mem::forget(value);
        }
    }
}
