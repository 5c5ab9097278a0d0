//! Scheme 6: a hashed timing wheel with an unsorted list per bucket — the NetBSD `callwheel` of
//! Costello & Varghese, with Gibbs's fix from the FreeBSD port.
//!
//! ```text
//!   size = 2^bits buckets          bucket of a timer = deadline & (size - 1)
//!   ┌───┬───┬───┬───┬───┬───┐
//!   │ 0 │ 1 │ 2 │ … │   │   │      each bucket: doubly-linked list, insertion at the tail
//!   └─┬─┴───┴─┬─┴───┴───┴───┘      (equal deadlines fire in start order)
//!     ▼       ▼
//!   [t=0] [t=2+size] …             a node stores its absolute deadline, so a bucket visit
//!   [t=size]                       fires `deadline == tick` and keeps the rest
//! ```
//!
//! | operation | cost |
//! |---|---|
//! | start | O(1): hash by masking, append |
//! | stop | O(1): unlink by handle |
//! | per tick | O(1) + the length of one bucket (n / size on average) |
//! | range | any deadline: later rotations simply stay in their bucket |
//!
//! Storing the absolute deadline instead of Costello's `c_time = t / callwheelsize` is Gibbs's
//! fix (the paper's footnote): a node can always find its bucket, which is what insertion at
//! the tail needs. The busy marks of Varghese & Lauck's Appendix A let a sparse wheel skip empty
//! buckets with a bit scan, so [`Timers::next_expiry`](callwheel::Timers::next_expiry) is the next non-empty bucket's tick: a
//! conservative answer (that bucket's timers may belong to a later rotation).

use crate::arena::NIL;
use crate::clock::{tick_driven_scheme, Core, Step, TickDriven};
use crate::hashed::{self, Table};
use callwheel::Error;
use callwheel::Tick;

/// Scheme 6: hashed wheel, unsorted buckets.
#[derive(Debug)]
pub struct HashedWheel<T> {
    core: Core<T>,
    table: Table,
}

impl<T> HashedWheel<T> {
    /// The largest `bits` accepted: 2^26 buckets.
    pub const MAX_BITS: u32 = hashed::MAX_BITS;

    /// A wheel of `2^bits` buckets whose slab grows on demand.
    pub fn new(bits: u32) -> Result<HashedWheel<T>, Error> {
        Self::build(bits, None)
    }

    /// A wheel of `2^bits` buckets holding at most `capacity` timers; `start` fails with
    /// [`Error::Full`] beyond that (Costello's `calloutsize`).
    pub fn with_capacity(bits: u32, capacity: usize) -> Result<HashedWheel<T>, Error> {
        Self::build(bits, Some(capacity))
    }

    fn build(bits: u32, capacity: Option<usize>) -> Result<HashedWheel<T>, Error> {
        let table = Table::new(bits)?;
        Ok(HashedWheel {
            core: Core::new(table.size(), capacity)?,
            table,
        })
    }

    /// The number of buckets.
    pub fn size(&self) -> usize {
        self.table.size()
    }

    /// The earliest deadline among the pending timers, exactly (or the wheel's own time when
    /// `advance` has work at it), where [`Timers::next_expiry`](callwheel::Timers::next_expiry)
    /// may answer a bucket whose timers belong to a later rotation. O(1) expected when the
    /// next busy bucket holds a timer due this rotation; otherwise one look at every timer,
    /// which also makes later answers O(1) until the earliest one fires. `None` when nothing
    /// is pending.
    pub fn earliest(&mut self) -> Option<Tick> {
        if self.core.arena.len() == 0 {
            return None;
        }
        if self.core.pending_now() {
            return Some(self.core.cursor);
        }
        self.table.earliest(&self.core, |list, t| {
            let mut i = self.core.arena.first(list);
            while i != NIL {
                if self.core.arena.node(i).expiry == t {
                    return true;
                }
                i = self.core.arena.node(i).next;
            }
            false
        })
    }
}

impl<T> TickDriven<T> for HashedWheel<T> {
    fn core(&self) -> &Core<T> {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core<T> {
        &mut self.core
    }

    #[inline]
    fn place(&mut self, idx: u32) {
        let expiry = self.core.arena.node(idx).expiry;
        let list = self.table.list_of(expiry);
        self.core.arena.push_back(list, idx);
        self.table.mark(&self.core, list, expiry);
    }

    // Always inlined: a stop is this and the slot's release, and a call here measured 30
    // instructions more per stop (Table II's unsetcallout).
    #[inline(always)]
    fn detach(&mut self, idx: u32) {
        let node = self.core.arena.node(idx);
        let list = node.list;
        self.table.leaving(idx, node.expiry, node.next);
        self.core.arena.unlink(idx);
        self.table.unmark_if_empty(&self.core, list);
    }

    fn next_work(&self) -> Option<Tick> {
        self.table.next_busy(&self.core)
    }

    fn next_work_until(&mut self, target: Tick) -> Option<Tick> {
        self.table.next_work_until(&self.core, target)
    }

    fn work_at(&self, t: Tick) -> bool {
        self.table.work_at(&self.core, t)
    }

    fn extra_bytes(&self) -> usize {
        self.table.memory_bytes()
    }

    fn check_structure(&self) -> Result<(), &'static str> {
        self.table.check(&self.core)
    }

    fn begin_tick(&mut self, tick: Tick) {
        let list = self.table.list_of(tick);
        self.core.arena.walk_begin(list);
    }

    #[inline(always)]
    fn step_tick(&mut self, tick: Tick) -> Step {
        // Visit every timer of the bucket: fire the ones due now, keep later rotations.
        let idx = self.core.arena.walk_take();
        if idx == NIL {
            return Step::TickDone;
        }
        if self.core.arena.node(idx).expiry == tick {
            self.detach(idx);
            self.table.fired_at(tick);
            Step::Fire(idx)
        } else {
            Step::Worked
        }
    }
}

tick_driven_scheme!(HashedWheel);

#[cfg(test)]
mod tests {
    extern crate std;
    use super::HashedWheel;
    use crate::hashed::PASS_STEP;
    use callwheel::{Budget, Scheme, Timers};
    use std::vec::Vec;

    /// A jump over many rotations while the floor is not exact makes it exact by a pass; the
    /// pass looks at no more than [`PASS_STEP`] timers in any one step of `advance`, however
    /// many are pending, and the timers still fire in deadline order.
    #[test]
    fn a_pass_over_many_timers_is_spread_over_steps() {
        let mut s = HashedWheel::new(10).unwrap();
        let n = 5_000u64;
        let first = s.start(10, u64::MAX).unwrap();
        for i in 0..n {
            // Deadlines a thousand rotations of 1,024 ticks away, started in no bucket order,
            // about five in each bucket.
            s.start(1_000_000 + (i * 7_919) % n, i).unwrap();
        }
        // The earliest timer leaves: the floor is no longer known exact.
        assert_eq!(s.stop(first), Some(u64::MAX));
        let mut fired = Vec::new();
        let mut worst = 0;
        let mut calls = 0;
        loop {
            let before = s.table.looked_at();
            let p = s.advance(2_000_000_000, Budget::steps(1), |_, e| {
                fired.push(e.deadline)
            });
            worst = worst.max(s.table.looked_at() - before);
            calls += 1;
            if p.complete {
                break;
            }
        }
        assert!(s.table.looked_at() >= n, "no pass was made");
        assert!(
            worst <= PASS_STEP as u64,
            "one step looked at {worst} timers"
        );
        assert_eq!(fired.len() as u64, n);
        assert!(fired.windows(2).all(|w| w[0] <= w[1]));
        // The pass took about n / PASS_STEP steps, after which the walk went from tick to tick
        // (each tick's bucket holds about five timers) instead of visiting a thousand
        // rotations' buckets.
        assert!(calls < 10 * n, "{calls} steps");
        s.check_invariants().unwrap();
    }

    /// Starting a timer at or before the floor makes the floor exact again, and stopping the
    /// timer at it makes it a lower bound; `earliest` stays exact throughout.
    #[test]
    fn the_floor_is_exact_after_a_start_below_it_and_a_bound_after_a_stop() {
        let mut s = HashedWheel::new(4).unwrap();
        let a = s.start(1_000, 'a').unwrap();
        s.start(5_000, 'b').unwrap();
        assert!(s.table.floor_is_exact());
        s.stop(a);
        assert!(!s.table.floor_is_exact());
        assert_eq!(s.earliest(), Some(5_000));
        assert!(s.table.floor_is_exact(), "the pass made the floor exact");
        s.start(4_001, 'c').unwrap();
        assert!(s.table.floor_is_exact());
        assert_eq!(s.earliest(), Some(4_001));
        s.check_invariants().unwrap();
    }

    /// `earliest` stays exact when a pass left unfinished by `advance` saw a timer that has
    /// been stopped since (its deadline would otherwise be taken for the earliest).
    #[test]
    fn earliest_is_exact_after_a_pass_saw_a_timer_that_left() {
        let mut s = HashedWheel::new(4).unwrap();
        let x = s.start(5, 0).unwrap();
        let a = s.start(500_000, 1).unwrap();
        for k in 0..2_000 {
            s.start(1_000_000 + k, 2).unwrap();
        }
        s.stop(x);
        // A rotation without a firing: a pass begins, and is left unfinished.
        let _ = s.advance(30, Budget::UNLIMITED, |_, _| panic!("nothing is due"));
        assert!(s.table.pass_under_way());
        s.stop(a);
        assert_eq!(s.earliest(), Some(1_000_000));
        s.check_invariants().unwrap();
    }
}
