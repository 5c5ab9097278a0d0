//! The table's invariants, checked by brute force for tests and fuzzing.

use core::cmp::Reverse;
use core::hash::Hash;

use crate::backing::Backing;
use crate::pool::{Kind, Sched};

use super::Callouts;

impl<S: Backing, C: Copy + Eq + Hash> Callouts<S, C> {
    /// Verifies, by brute force, that the pool, the hash chains, the queues and the backing
    /// scheme agree. For tests; `Err` names what is broken.
    pub fn check_invariants(&self) -> Result<(), &'static str> {
        self.pool.check()?;
        self.scheme.check_invariants()?;
        if self.softticks > self.ticks {
            return Err("softticks is ahead of ticks");
        }
        let (mut pending, mut direct, mut due) = (0, 0, 0);
        for (_, r) in self.pool.records.iter() {
            match r.sched {
                Sched::Idle => {}
                Sched::Pending { .. } => pending += 1,
                Sched::Direct(..) => direct += 1,
                Sched::Due => due += 1,
            }
            if r.hashed && r.kind != Kind::OneShot {
                return Err("a persistent record is hashed");
            }
            if r.by_timeout && r.kind != Kind::OneShot {
                return Err("a record not made by timeout is marked so");
            }
            if r.hashed != (r.by_timeout && !S::SEARCHED_BY_UNTIMEOUT) {
                return Err("a timeout record's hashing disagrees with the backing");
            }
        }
        if pending != self.scheme.len() {
            return Err("scheme holds a different number of timers than records pending");
        }
        // Sequence numbers are unique, so each matching entry is a different record's.
        let queued = self
            .direct
            .iter()
            .filter(|&&Reverse((d, s, i))| {
                self.pool
                    .records
                    .get(i)
                    .is_some_and(|r| r.sched == Sched::Direct(d, s))
            })
            .count();
        if direct != self.direct_live || queued != direct {
            return Err("a direct callout is missing from its queue");
        }
        if due != self.due_in_batch() {
            return Err("a due record is missing from the batch");
        }
        for (n, &(idx, generation, _)) in self.drains.iter().enumerate() {
            let r = self
                .pool
                .records
                .get(idx)
                .ok_or("a drain names no record")?;
            if r.kind != Kind::Persistent
                || self.pool.generation(idx) != Some(generation)
                || !r.running
            {
                return Err("a drain waits for a callout that is not running");
            }
            if self.drains[..n].iter().any(|&(i, _, _)| i == idx) {
                return Err("two drains wait for one callout");
            }
        }
        if self.drains_ready.capacity() < self.drains_ready.len() + self.drains.len() {
            return Err("no room reserved for the arranged drains");
        }
        for (n, m) in self.moves.iter().enumerate() {
            let r = self
                .pool
                .records
                .get(m.idx)
                .ok_or("a move names no record")?;
            if r.kind != Kind::Persistent || self.pool.generation(m.idx) != Some(m.generation) {
                return Err("a move names a record that is not its callout's");
            }
            if r.sched != Sched::Idle {
                return Err("a callout waiting to move is also armed here");
            }
            if self.moves[..n].iter().any(|o| o.idx == m.idx) {
                return Err("two moves recorded for one callout");
            }
        }
        Ok(())
    }
}
