//! A record's life in the table: armed (in the scheme, or on the direct-execution heap),
//! handed out and running, drained, disarmed; and the scheme rebuilt larger as the callouts
//! grow.

use core::cmp::Reverse;
use core::hash::Hash;

use callwheel::{Budget, Handle, Tick};

use crate::backing::Backing;
use crate::pool::{Kind, Sched};
use crate::Error;

use super::Callouts;
use super::Ready;

impl<S: Backing, C: Copy + Eq + Hash> Callouts<S, C> {
    /// Marks a handed-out persistent callout as no longer running, and queues the drain call a
    /// `callout_async_drain` arranged for it (handed out next). Returns the callout's handle
    /// when a move to another table waits for this moment (a shared table then makes it).
    pub(crate) fn finish<X>(&mut self, ready: Ready<X>) -> Option<Handle> {
        let (idx, generation) = ready.persistent?;
        if self.pool.generation(idx) != Some(generation) {
            return None;
        }
        self.pool.records[idx].running = false;
        if let Some(at) = self
            .drains
            .iter()
            .position(|&(i, g, _)| i == idx && g == generation)
        {
            let (_, _, call) = self.drains.swap_remove(at);
            // Reserved when the drain was arranged: no allocation here.
            self.drains_ready.push_back(call);
        }
        self.move_of(idx).map(|_| self.pool.handle(idx))
    }

    /// Where in `moves` the move of record `idx` is, if one is recorded.
    pub(crate) fn move_of(&self, idx: u32) -> Option<usize> {
        self.moves.iter().position(|m| m.idx == idx)
    }

    /// Whether a `callout_async_drain` waits for record `idx`'s running handler.
    pub(crate) fn is_draining(&self, idx: u32) -> bool {
        self.drains.iter().any(|&(i, _, _)| i == idx)
    }

    /// Arranges `drain` to be handed out once the running handler of record `idx` returns.
    ///
    /// # Errors
    ///
    /// [`Error::NoMemory`] when the room for it cannot be reserved; nothing changes.
    pub(crate) fn arrange_drain(&mut self, idx: u32, drain: C) -> Result<(), Error> {
        self.drains.try_reserve(1).map_err(|_| Error::NoMemory)?;
        // Room for every arranged drain to become ready without allocating.
        self.drains_ready
            .try_reserve(self.drains.len() + 1)
            .map_err(|_| Error::NoMemory)?;
        let generation = self
            .pool
            .generation(idx)
            .expect("a drain for a live callout");
        self.drains.push((idx, generation, drain));
        Ok(())
    }

    /// Whether the persistent callout `handle` names is running its handler now.
    pub(crate) fn is_running(&self, handle: Handle) -> bool {
        self.pool
            .resolve(handle)
            .is_some_and(|idx| self.pool.records[idx].running)
    }

    /// What an interrupt runs at once: a ready drain call, or a due direct-execution callout
    /// (counted as run from `hardclock`).
    pub(crate) fn pop_immediate(&mut self) -> Option<Ready<C>> {
        if let Some(call) = self.drains_ready.pop_front() {
            return Some(Ready {
                call,
                persistent: None,
            });
        }
        let ready = self.pop_direct()?;
        self.stats.direct += 1;
        Some(ready)
    }

    pub(super) fn pop_direct(&mut self) -> Option<Ready<C>> {
        let (deadline, idx) = self.direct_front()?;
        if deadline > self.ticks {
            return None;
        }
        self.direct.pop();
        self.direct_live -= 1;
        Some(self.take_ready(idx))
    }

    /// The earliest armed direct callout, (deadline, record), dropping cancelled entries
    /// from the top of the heap on the way.
    pub(super) fn direct_front(&mut self) -> Option<(Tick, u32)> {
        while let Some(&Reverse((deadline, seq, idx))) = self.direct.peek() {
            if (self.pool.records.get(idx)).is_some_and(|r| r.sched == Sched::Direct(deadline, seq))
            {
                return Some((deadline, idx));
            }
            self.direct.pop();
        }
        None
    }

    /// Takes a due record out for running: one-shot records are freed (their handle goes stale
    /// before the handler runs, as in BSD), persistent ones are marked running.
    pub(super) fn take_ready(&mut self, idx: u32) -> Ready<C> {
        self.stats.fired += 1;
        let generation = self.pool.generation(idx);
        let r = &mut self.pool.records[idx];
        r.sched = Sched::Idle;
        let call = r.call.expect("armed records carry a call");
        match r.kind {
            Kind::Persistent => {
                r.running = true;
                Ready {
                    call,
                    persistent: generation.map(|g| (idx, g)),
                }
            }
            Kind::OneShot => {
                if r.hashed {
                    self.pool.hash_remove(idx);
                }
                self.pool.release(idx);
                Ready {
                    call,
                    persistent: None,
                }
            }
        }
    }

    /// The tick `n` ticks from now, `n <= 0` counting as 1.
    ///
    /// # Errors
    ///
    /// [`Error::PastEndOfTime`] when that tick would come after `u64::MAX`.
    pub(crate) fn deadline_in(&self, n: i64) -> Result<Tick, Error> {
        self.ticks
            .checked_add(n.max(1) as u64)
            .ok_or(Error::PastEndOfTime)
    }

    /// The window calloutng's default precision gives a callout armed by a relative time in
    /// ticks, due at `deadline`: the ticks ahead shifted right by the table's deviation shift
    /// ([`Config::deviation_percent`](crate::Config::deviation_percent); none at 0 %).
    pub(crate) fn default_tolerance(&self, deadline: Tick) -> Tick {
        self.deviation
            .map_or(0, |s| deadline.saturating_sub(self.ticks()) >> s.min(63))
    }

    /// Queues record `idx` for `deadline` without touching the record, so a refusal changes
    /// nothing.
    pub(crate) fn schedule(
        &mut self,
        idx: u32,
        deadline: Tick,
        tolerance: Tick,
        direct: bool,
    ) -> Result<Sched, Error> {
        let seq = self.seq;
        if direct {
            if self.direct.len() >= 2 * self.direct_live + 16 {
                // More cancelled entries than armed ones: drop them (in place), so the heap
                // stays proportional to the direct callouts armed.
                let records = &self.pool.records;
                self.direct.retain(|&Reverse((deadline, seq, idx))| {
                    records
                        .get(idx)
                        .is_some_and(|r| r.sched == Sched::Direct(deadline, seq))
                });
            }
            self.direct.try_reserve(1).map_err(|_| Error::NoMemory)?;
            self.direct.push(Reverse((deadline, seq, idx)));
            self.direct_live += 1;
            self.seq += 1;
            Ok(Sched::Direct(deadline, seq))
        } else {
            let handle = self.scheme.start_within(deadline, tolerance, idx)?;
            self.seq += 1;
            Ok(Sched::Pending {
                handle,
                deadline,
                seq,
            })
        }
    }

    /// After a callout was armed in the scheme: rebuilds the scheme larger when the pending
    /// callouts outgrew it, so its per-tick work stays bounded however far the pool grows.
    pub(crate) fn after_arm(&mut self) {
        if self.scheme.len() > self.resize_at {
            self.resize_scheme();
        }
    }

    /// Moves every pending callout to a larger scheme from [`Backing::resized`].
    ///
    /// All or nothing: the new scheme is filled completely before anything in the table
    /// changes, so a refusal (no memory) leaves the old scheme and every callout in place
    /// (the table then asks again when the callouts have doubled). The new scheme is first
    /// brought to the old one's cursor; callouts are started in (deadline, arming) order, so
    /// equal deadlines keep their order, and any whose deadline is at or before the cursor
    /// (an interrupted `softclock` left them in the cursor's bucket) fire at the start of the
    /// next scheme advance, as they would have.
    pub(super) fn resize_scheme(&mut self) {
        struct Move {
            deadline: Tick,
            seq: u64,
            idx: u32,
            handle: Handle,
        }
        let pending = self.scheme.len();
        // The walks the old scheme took stay counted when it is replaced.
        let skipped = self.scheme.entries_skipped();
        // Whatever happens, do not try again before the callouts have doubled.
        self.resize_at = pending.saturating_mul(2);
        let mut fresh = match self.scheme.resized(pending) {
            Some(Ok(fresh)) => fresh,
            Some(Err(_)) => return,
            None => {
                self.resize_at = self.scheme.load_limit();
                return;
            }
        };
        let mut moves: Vec<Move> = Vec::new();
        if moves.try_reserve_exact(pending).is_err() {
            return;
        }
        for (idx, r) in self.pool.records.iter() {
            if let Sched::Pending {
                handle,
                deadline,
                seq,
            } = r.sched
            {
                // Where the scheme holds it: a callout with a window at its firing instant.
                let deadline = self.scheme.deadline(handle).unwrap_or(deadline);
                moves.push(Move {
                    deadline,
                    seq,
                    idx,
                    handle,
                });
            }
        }
        moves.sort_unstable_by_key(|m| (m.deadline, m.seq));
        let progress = fresh.advance(self.scheme.now(), Budget::UNLIMITED, |_, _| {
            unreachable!("a new scheme is empty")
        });
        debug_assert!(progress.complete && progress.fired == 0);
        for m in &mut moves {
            match fresh.start_with(m.deadline, 0, m.idx) {
                Ok(handle) => m.handle = handle,
                Err(_) => return,
            }
        }
        for m in &moves {
            if let Sched::Pending { handle, .. } = &mut self.pool.records[m.idx].sched {
                *handle = m.handle;
            }
        }
        self.scheme = fresh;
        self.stats.traversed += skipped;
        self.resize_at = self.scheme.load_limit();
        self.stats.resizes += 1;
    }

    /// Takes record `idx` out of whatever queue holds it, and drops a move recorded for it;
    /// `true` if it was armed (a recorded move counts).
    pub(crate) fn disarm(&mut self, idx: u32) -> bool {
        let moved = match self.move_of(idx) {
            Some(at) => {
                self.moves.swap_remove(at);
                true
            }
            None => false,
        };
        let r = &mut self.pool.records[idx];
        let was = core::mem::replace(&mut r.sched, Sched::Idle);
        let armed = match was {
            Sched::Idle => false,
            Sched::Pending { handle, .. } => {
                let stopped = self.scheme.stop(handle);
                debug_assert_eq!(stopped, Some(idx));
                true
            }
            Sched::Direct(..) => {
                // Its heap entry no longer matches the record: skipped when reached.
                self.direct_live -= 1;
                true
            }
            // Its batch entry is skipped when reached.
            Sched::Due => true,
        };
        armed || moved
    }
}
