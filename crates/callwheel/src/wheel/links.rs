//! The lists' links: one (prev, next) pair per list sentinel (the 704 slots, the overdue queue,
//! the deferred list), then one per timer, all in one array of circular doubly linked lists.
//! Starting with the sentinels means unlinking never branches on a list's ends and needs no
//! record of which list a timer is on.
//!
//! Every start appends here and every stop unlinks, so these few loads and stores are most of
//! the wheel's hot path. [`Links`] keeps one invariant of its own: **every index it stores
//! names one of its entries, and it never shrinks**. New entries start linked to themselves,
//! the sentinels are never removed, and each write stores either an index it has just checked
//! or one it read from itself. So the neighbours a link names are read and written without
//! bounds checks, and only the indices the wheel passes in are checked (a list's sentinel,
//! a constant or a digit the compiler can bound, costs nothing). Counted by callgrind on W1
//! cancel + start pairs (`Wheel<()>`, 1,000 timers): 11 instructions fewer per pair than with
//! every access checked.

use alloc::collections::TryReserveError;
use alloc::vec::Vec;

use super::geometry::BASE;

/// A timer's (or a sentinel's) neighbours on its circular list, as links indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Link {
    pub(super) prev: u32,
    pub(super) next: u32,
}

/// The links of every list, sentinels first (`0..BASE`).
#[derive(Debug)]
pub(super) struct Links {
    /// Invariant: every `prev` and `next` stored is below `v.len()`, and `v.len() >= BASE`
    /// never decreases.
    v: Vec<Link>,
}

impl Links {
    /// The sentinels, every list empty.
    pub(super) fn new() -> Links {
        Links {
            v: (0..BASE).map(|s| Link { prev: s, next: s }).collect(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.v.len()
    }

    pub(super) fn capacity(&self) -> usize {
        self.v.capacity()
    }

    pub(super) fn try_reserve_exact(&mut self, additional: usize) -> Result<(), TryReserveError> {
        self.v.try_reserve_exact(additional)
    }

    /// Gives back the spare capacity; the entries (and so the invariant) are untouched.
    pub(super) fn shrink_to_fit(&mut self) {
        self.v.shrink_to_fit();
    }

    /// Adds an entry on no list (linked to itself) and returns its index.
    pub(super) fn push_unlinked(&mut self) -> u32 {
        let li = self.v.len() as u32;
        self.v.push(Link { prev: li, next: li });
        li
    }

    /// Empties every list (the timers' entries keep whatever they held).
    pub(super) fn reset_sentinels(&mut self) {
        for (s, link) in self.v[..BASE as usize].iter_mut().enumerate() {
            *link = Link {
                prev: s as u32,
                next: s as u32,
            };
        }
    }

    /// Entry `li`'s links.
    #[inline(always)]
    pub(super) fn get(&self, li: u32) -> Link {
        self.v[li as usize]
    }

    /// The entry after `li` on its list (the first of a list when `li` is its sentinel).
    #[inline(always)]
    pub(super) fn next(&self, li: u32) -> u32 {
        self.v[li as usize].next
    }

    /// Appends entry `li` (on no list) at the tail of list `list` (FIFO: Costello's footnote).
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(super) fn push_back(&mut self, list: u32, li: u32) {
        assert!(list < BASE, "not a list's sentinel");
        assert!((li as usize) < self.v.len(), "no such links entry");
        // SAFETY: `list < BASE <= v.len()` (the sentinels are never removed) and `li` was
        // checked above; `tail` is read from the links, so it is below the length by the
        // invariant. Every index written (`tail`, `list`, `li`) is below the length, so the
        // invariant holds after.
        unsafe {
            let tail = self.v.get_unchecked(list as usize).prev;
            *self.v.get_unchecked_mut(li as usize) = Link {
                prev: tail,
                next: list,
            };
            self.v.get_unchecked_mut(tail as usize).next = li;
            self.v.get_unchecked_mut(list as usize).prev = li;
        }
    }

    /// Takes entry `li` off its list and returns its former neighbours (both `li`'s sentinel
    /// when the list is now empty). `li` keeps its stale links.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(super) fn unlink(&mut self, li: u32) -> Link {
        let Link { prev, next } = self.v[li as usize];
        // SAFETY: `prev` and `next` were read from the links, so both are below the length by
        // the invariant; each write stores one of them, so the invariant holds after.
        unsafe {
            self.v.get_unchecked_mut(prev as usize).next = next;
            self.v.get_unchecked_mut(next as usize).prev = prev;
        }
        Link { prev, next }
    }

    /// Takes `li`, the first entry of list `list`, off it; returns the new first (`list`
    /// itself when the list is now empty).
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(super) fn pop_front(&mut self, list: u32, li: u32) -> u32 {
        assert!(list < BASE, "not a list's sentinel");
        let next = self.v[li as usize].next;
        // SAFETY: `list < BASE <= v.len()` (checked above) and `next` was read from the links,
        // so both are below the length; each write stores one of them, so the invariant holds
        // after.
        unsafe {
            self.v.get_unchecked_mut(list as usize).next = next;
            self.v.get_unchecked_mut(next as usize).prev = list;
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(links: &Links, list: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut li = links.next(list);
        while li != list {
            assert_eq!(links.get(links.next(li)).prev, li, "prev and next disagree");
            out.push(li);
            li = links.next(li);
        }
        out
    }

    #[test]
    fn lists_append_unlink_and_pop_in_order() {
        let mut links = Links::new();
        let a = links.push_unlinked();
        let b = links.push_unlinked();
        let c = links.push_unlinked();
        assert_eq!(a, BASE);
        links.push_back(3, a);
        links.push_back(3, b);
        links.push_back(3, c);
        assert_eq!(members(&links, 3), [a, b, c]);
        assert_eq!(links.unlink(b), Link { prev: a, next: c });
        assert_eq!(members(&links, 3), [a, c]);
        assert_eq!(links.pop_front(3, a), c);
        assert_eq!(links.unlink(c), Link { prev: 3, next: 3 });
        assert!(members(&links, 3).is_empty());
        // A reused entry joins another list; an entry that was never linked unlinks to itself.
        links.push_back(7, b);
        assert_eq!(members(&links, 7), [b]);
        let d = links.push_unlinked();
        assert_eq!(links.unlink(d), Link { prev: d, next: d });
        links.reset_sentinels();
        assert!(members(&links, 7).is_empty());
    }

    #[test]
    #[should_panic(expected = "not a list's sentinel")]
    fn a_timer_is_not_a_list() {
        let mut links = Links::new();
        let a = links.push_unlinked();
        let b = links.push_unlinked();
        links.push_back(a, b);
    }

    #[test]
    #[should_panic(expected = "no such links entry")]
    fn an_index_past_the_end_is_refused() {
        let mut links = Links::new();
        links.push_back(0, BASE + 5);
    }
}
