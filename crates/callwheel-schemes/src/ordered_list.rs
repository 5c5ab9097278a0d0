//! Scheme 2: an ordered list of absolute deadlines (Varghese & Lauck, section 3.2; the VMS and
//! UNIX timer queues).
//!
//! ```text
//!   head → [10] ⇄ [10] ⇄ [17] ⇄ [40] ⇄ [40] → NIL      sorted by deadline, start order
//!                                                       among equals (insert after them)
//! ```
//!
//! | operation | cost |
//! |---|---|
//! | start | O(n): search from the head (or the rear) for the insertion point |
//! | stop | O(1): unlink by handle |
//! | per tick | O(1): compare the head; tickless, since the head *is* the next expiry |
//! | range | any deadline |
//!
//! The search starts at the head, as in the paper; this is what makes Table I's old callout
//! grow linearly with the number of outstanding timers. The paper also notes that searching
//! from the rear can be cheaper: which end is nearer depends on how a new timer's interval
//! compares with the time the pending ones have left, that is on the interval distribution.
//! [`Search::FromRear`] chooses that end; both find the same place (after every timer with
//! the same deadline), so equal deadlines fire in start order either way.
//! [`OrderedList::entries_skipped`] counts what the searches pass over, for the `insertion-cost`
//! experiment of `callwheel repro`, which measures both ends against the paper's averages.

use crate::arena::NIL;
use crate::clock::{tick_driven_scheme, Core, Step, TickDriven};
use callwheel::Error;
use callwheel::Tick;

const QUEUE: u32 = 1;

/// Where a start's search for its place in the list begins.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Search {
    /// At the head, the earliest deadline, walking towards later ones (the paper's Scheme 2).
    #[default]
    FromHead,
    /// At the rear, the latest deadline, walking towards earlier ones.
    FromRear,
}

/// Scheme 2: one list sorted by absolute deadline.
#[derive(Debug)]
pub struct OrderedList<T> {
    core: Core<T>,
    search: Search,
    /// Entries the starts' searches have passed over, in all.
    skipped: u64,
}

impl<T> OrderedList<T> {
    /// An empty list whose slab grows on demand, searched from the head.
    pub fn new() -> OrderedList<T> {
        OrderedList {
            core: Core::growing(1),
            search: Search::FromHead,
            skipped: 0,
        }
    }

    /// An empty list holding at most `capacity` timers, searched from the head.
    pub fn with_capacity(capacity: usize) -> Result<OrderedList<T>, Error> {
        Ok(OrderedList {
            core: Core::new(1, Some(capacity))?,
            search: Search::FromHead,
            skipped: 0,
        })
    }

    /// The same list, its later starts searching from `search`'s end. The order of the list
    /// does not depend on it, so this may be changed at any time.
    pub fn searching(mut self, search: Search) -> OrderedList<T> {
        self.search = search;
        self
    }

    /// The end the starts search from.
    pub fn search(&self) -> Search {
        self.search
    }

    /// Entries that every start so far has passed over in its search before finding its place
    /// (a count, never a time): from the head, the entries due at or before the new timer;
    /// from the rear, those due after it. The entry at which a search stops is not counted,
    /// as [`DifferentialList::entries_skipped`](crate::differential_list::DifferentialList::entries_skipped)
    /// does not count it. A reset searches as a start does and counts the same way; a start
    /// whose deadline has already passed is queued as overdue, searches nothing and counts 0.
    pub fn entries_skipped(&self) -> u64 {
        self.skipped
    }
}

impl<T> Default for OrderedList<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> TickDriven<T> for OrderedList<T> {
    fn core(&self) -> &Core<T> {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core<T> {
        &mut self.core
    }

    fn place(&mut self, idx: u32) {
        let from_rear = self.search == Search::FromRear;
        self.skipped += self.core.arena.insert_sorted_from(QUEUE, idx, from_rear);
    }

    fn detach(&mut self, idx: u32) {
        self.core.arena.unlink(idx);
    }

    fn next_work(&self) -> Option<Tick> {
        let head = self.core.arena.first(QUEUE);
        (head != NIL).then(|| self.core.arena.node(head).expiry)
    }

    fn begin_tick(&mut self, _tick: Tick) {}

    fn step_tick(&mut self, tick: Tick) -> Step {
        let head = self.core.arena.first(QUEUE);
        if head != NIL && self.core.arena.node(head).expiry <= tick {
            self.detach(head);
            Step::Fire(head)
        } else {
            Step::TickDone
        }
    }

    fn check_structure(&self) -> Result<(), &'static str> {
        let arena = &self.core.arena;
        let mut i = arena.first(QUEUE);
        let mut last = 0;
        while i != NIL {
            let node = arena.node(i);
            if node.expiry < last {
                return Err("queue out of order");
            }
            if node.expiry <= self.core.cursor && !self.core.pending_now() {
                return Err("a due timer is still queued");
            }
            last = node.expiry;
            i = node.next;
        }
        Ok(())
    }
}

tick_driven_scheme!(OrderedList);

#[cfg(test)]
mod tests {
    use super::*;
    use callwheel::{Scheme, Timers};

    /// Starts `deadlines` in order on a list searching from `search`; returns the firing order
    /// (by value) and the entries skipped.
    fn run(search: Search, deadlines: &[u64]) -> (alloc::vec::Vec<usize>, u64) {
        let mut list = OrderedList::new().searching(search);
        for (i, &d) in deadlines.iter().enumerate() {
            list.start(d, i).unwrap();
        }
        list.check_invariants().unwrap();
        let skipped = list.entries_skipped();
        let mut fired = alloc::vec::Vec::new();
        list.advance_to(u64::MAX, |_, e| fired.push(e.value));
        (fired, skipped)
    }

    #[test]
    fn both_ends_count_what_they_pass_by_hand() {
        // Into [] [10] [10 30] [10 20 30] [10 20 20 30] [10 20 20 30 40] [10 10 20 20 30 40]:
        // from the head the new timer passes the entries due at or before it (0, 1, 1, 2, 4, 1),
        // from the rear the entries due after it (0, 0, 1, 1, 0, 4).
        let deadlines = [10, 30, 20, 20, 40, 10];
        let (head_order, head) = run(Search::FromHead, &deadlines);
        let (rear_order, rear) = run(Search::FromRear, &deadlines);
        assert_eq!(head, 1 + 1 + 2 + 4 + 1);
        assert_eq!(rear, 1 + 1 + 4);
        // The same place either way: equal deadlines in start order.
        assert_eq!(head_order, [0, 5, 2, 3, 1, 4]);
        assert_eq!(rear_order, head_order);
    }

    #[test]
    fn ascending_starts_cost_nothing_from_the_rear_and_everything_from_the_head() {
        // Equal intervals: every timer goes to the rear, the paper's O(1) case.
        let deadlines: alloc::vec::Vec<u64> = (1..=100).collect();
        let (_, head) = run(Search::FromHead, &deadlines);
        let (_, rear) = run(Search::FromRear, &deadlines);
        assert_eq!(head, (0..100).sum::<u64>());
        assert_eq!(rear, 0);
    }

    #[test]
    fn reset_searches_from_the_chosen_end_and_overdue_starts_count_nothing() {
        let mut list = OrderedList::new().searching(Search::FromRear);
        assert_eq!(list.search(), Search::FromRear);
        let a = list.start(50, 'a').unwrap();
        list.start(60, 'b').unwrap();
        list.start(70, 'c').unwrap();
        assert_eq!(list.entries_skipped(), 0);
        // Moved to 55: from the rear it passes 70 and 60.
        assert_eq!(list.reset(a, 55, 0), Some(50));
        assert_eq!(list.entries_skipped(), 2);
        list.advance_to(10, |_, _| {});
        list.start(5, 'o').unwrap();
        assert_eq!(list.entries_skipped(), 2);
        list.check_invariants().unwrap();
    }
}
