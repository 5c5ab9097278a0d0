//! What the two hashed wheels (Schemes 5 and 6) share: a power-of-two table of buckets indexed
//! by the deadline's low bits, and busy marks over it (Varghese & Lauck, Appendix A).
//!
//! A bucket holds every rotation's timers, so a busy mark alone cannot tell a timer due this
//! rotation from one due thousands of rotations later. Walked tick by tick (the papers' use, a
//! few hundred ticks a second), that costs one wasted visit per busy bucket per rotation. A
//! clock of nanosecond ticks moved to "now" in one step would instead visit every busy bucket
//! once per rotation of the jump: a cost growing with the tick's value. The table therefore
//! keeps a floor, a tick no timer is due before, and starts every search for work there.
//!
//! The floor is exact (the earliest deadline) after a start that lowers it, and stays so
//! until the timer at it leaves. When a walk finds its next busy bucket more than a rotation
//! after the last firing and the floor is not exact, the table makes it exact by a pass over
//! every timer, a few timers per step of the walk ([`PASS_STEP`]), so that no step of
//! `advance` costs more than a constant whatever the number of timers or the tick's value.
//! The walk goes on meanwhile, and at the pass's end jumps to the earliest deadline the pass
//! saw (a lower bound only, when a timer it saw has left since: then a later rotation without
//! a firing begins another). A pass costs O(n) once per rotation that fires nothing, so a
//! jump of any length costs O(n) steps per timer it fires or stops at most, whatever the
//! tick. [`Table::earliest`], a query rather than a step, makes a whole pass at once when the
//! next busy bucket holds no timer due at its tick.

use crate::arena::NIL;
use crate::busy::BusyMarks;
use crate::clock::Core;
use callwheel::Error;
use callwheel::Tick;

/// The largest table: 2^26 buckets.
pub(crate) const MAX_BITS: u32 = 26;

/// Timers (and buckets entered) a pass looks at per step of `advance`.
pub(crate) const PASS_STEP: usize = 32;

/// The bucket table of a hashed wheel; bucket `b` is the core's list `b + 1`.
#[derive(Debug)]
pub(crate) struct Table {
    mask: u64,
    busy: BusyMarks,
    /// No timer in the buckets is due before this tick.
    floor: Tick,
    /// Whether some timer is due at the floor (it is then the earliest deadline).
    exact: bool,
    /// The tick at which a timer last fired or a pass last ended: a search that finds work
    /// more than a rotation after it starts a pass.
    quiet_since: Tick,
    /// The pass under way, if any.
    pass: Option<Pass>,
    /// Timers and buckets looked at by passes, in all (the cost the budget bounds per step).
    #[cfg(test)]
    looked_at: u64,
}

/// A pass over every timer in the buckets, in bucket order, finding the earliest deadline.
#[derive(Debug)]
struct Pass {
    /// The next timer to look at, or [`NIL`] to enter the next busy bucket from `bucket`.
    next: u32,
    /// The next bucket to enter.
    bucket: usize,
    /// The earliest deadline seen, and of every timer started since the pass began.
    least: Tick,
    /// Whether a timer due at `least` is still in the buckets, as far as the pass knows.
    exact: bool,
}

impl Table {
    pub(crate) fn new(bits: u32) -> Result<Table, Error> {
        if bits > MAX_BITS {
            return Err(Error::Config {
                reason: "a hashed wheel has at most 2^26 buckets",
            });
        }
        let size = 1usize << bits;
        Ok(Table {
            mask: size as u64 - 1,
            busy: BusyMarks::try_new(size)?,
            floor: 0,
            exact: false,
            quiet_since: 0,
            pass: None,
            #[cfg(test)]
            looked_at: 0,
        })
    }

    pub(crate) fn size(&self) -> usize {
        self.mask as usize + 1
    }

    /// The list of the bucket `tick` hashes to: `tick mod size`, by masking.
    #[inline]
    pub(crate) fn list_of(&self, tick: Tick) -> u32 {
        (tick & self.mask) as u32 + 1
    }

    /// Marks `list` busy for a timer just placed there, due at `expiry`. When it is the only
    /// timer in the buckets, or due at or before the floor, the floor is its deadline, exactly.
    #[inline]
    pub(crate) fn mark<T>(&mut self, core: &Core<T>, list: u32, expiry: Tick) {
        self.busy.set(list as usize - 1);
        if core.structure_len() == 1 {
            self.floor = expiry;
            self.exact = true;
            self.pass = None;
            return;
        }
        if expiry <= self.floor {
            self.floor = expiry;
            self.exact = true;
        }
        if let Some(pass) = &mut self.pass {
            if expiry <= pass.least {
                pass.least = expiry;
                pass.exact = true;
            }
        }
    }

    /// Timer `idx`, due at `expiry` and followed in its bucket by `next`, is about to leave
    /// the bucket (stopped, reset or fired): the floor is no longer known exact if it was this
    /// timer's deadline, and a pass about to look at it looks at `next` instead.
    #[inline]
    pub(crate) fn leaving(&mut self, idx: u32, expiry: Tick, next: u32) {
        if expiry == self.floor {
            self.exact = false;
        }
        if let Some(pass) = &mut self.pass {
            if pass.next == idx {
                pass.next = next;
            }
            if expiry == pass.least {
                pass.exact = false;
            }
        }
    }

    /// A timer fired at `tick`.
    #[inline]
    pub(crate) fn fired_at(&mut self, tick: Tick) {
        self.quiet_since = tick;
    }

    /// Whether `tick`'s bucket holds any timer (of this rotation or a later one).
    #[inline]
    pub(crate) fn busy_at(&self, tick: Tick) -> bool {
        self.busy.get((tick & self.mask) as usize)
    }

    /// Whether a timer may have its deadline at `t`: `t`'s busy mark (one bit, as 4.4BSD's
    /// `hardclock` looks at one bucket), `true` also for a bucket of later rotations only.
    pub(crate) fn work_at<T>(&self, core: &Core<T>, t: Tick) -> bool {
        core.structure_len() > 0 && self.busy_at(t)
    }

    /// Clears the busy mark of `list` if it has become empty.
    #[inline(always)]
    pub(crate) fn unmark_if_empty<T>(&mut self, core: &Core<T>, list: u32) {
        if core.arena.is_list_empty(list) {
            self.busy.clear(list as usize - 1);
        }
    }

    /// The tick of the next busy bucket at or after the floor (and after the cursor): a
    /// conservative next expiry, exact unless the bucket's timers all belong to later
    /// rotations.
    pub(crate) fn next_busy<T>(&self, core: &Core<T>) -> Option<Tick> {
        if core.structure_len() == 0 {
            return None;
        }
        let from = core.cursor.saturating_add(1).max(self.floor);
        let d = self.busy.next_from((from & self.mask) as usize)?;
        Some(from.saturating_add(d as u64))
    }

    /// [`Table::next_busy`] for a walk up to `target`, and one step of a pass: one goes on if
    /// under way, and one begins when the next busy bucket lies within the walk, more than a
    /// rotation past the last firing (or the last pass), and the floor is not exact.
    #[inline]
    pub(crate) fn next_work_until<T>(&mut self, core: &Core<T>, target: Tick) -> Option<Tick> {
        let t = self.next_busy(core)?;
        if self.pass.is_none()
            && (self.exact || t > target || t - self.quiet_since.min(t) <= self.mask)
        {
            return Some(t);
        }
        self.pass_on(core)
    }

    /// One step of the pass under way, begun if none is; then the next busy bucket.
    #[inline(never)]
    fn pass_on<T>(&mut self, core: &Core<T>) -> Option<Tick> {
        if self.pass.is_none() {
            self.begin_pass();
        }
        self.pass_step(core, PASS_STEP);
        self.next_busy(core)
    }

    /// The earliest deadline in the buckets, exactly: the floor when it is known exact, or
    /// the next busy bucket when it holds a timer due at its tick (`first_due` says whether
    /// it does); otherwise found by a whole pass, done now. A pass under way is begun again:
    /// timers it saw may have left since, and one made in a single call sees every timer
    /// once with none leaving, so its floor is exact.
    pub(crate) fn earliest<T>(
        &mut self,
        core: &Core<T>,
        first_due: impl Fn(u32, Tick) -> bool,
    ) -> Option<Tick> {
        let t = self.next_busy(core)?;
        if self.exact || first_due(self.list_of(t), t) {
            return Some(t);
        }
        self.begin_pass();
        self.pass_step(core, usize::MAX);
        self.next_busy(core)
    }

    fn begin_pass(&mut self) {
        self.pass = Some(Pass {
            next: NIL,
            bucket: 0,
            least: Tick::MAX,
            exact: false,
        });
    }

    /// Looks at up to `quota` timers and buckets of the pass under way; at its end, the floor
    /// is the earliest deadline it found.
    fn pass_step<T>(&mut self, core: &Core<T>, quota: usize) {
        let Some(pass) = &mut self.pass else {
            return;
        };
        let mut looked = 0;
        while looked < quota {
            looked += 1;
            if pass.next == NIL {
                let Some(b) = self.busy.first_from(pass.bucket) else {
                    // Every bucket has been looked at.
                    self.floor = pass.least;
                    self.exact = pass.exact;
                    self.quiet_since = core.cursor;
                    self.pass = None;
                    break;
                };
                pass.next = core.arena.first(b as u32 + 1);
                pass.bucket = b + 1;
                continue;
            }
            let node = core.arena.node(pass.next);
            if node.expiry <= pass.least {
                pass.least = node.expiry;
                pass.exact = true;
            }
            pass.next = node.next;
        }
        #[cfg(test)]
        {
            self.looked_at += looked as u64;
        }
    }

    /// Whether a pass is under way.
    #[cfg(test)]
    pub(crate) fn pass_under_way(&self) -> bool {
        self.pass.is_some()
    }

    /// Whether the floor is known to be the earliest deadline.
    #[cfg(test)]
    pub(crate) fn floor_is_exact(&self) -> bool {
        self.exact
    }

    /// Timers and buckets looked at by passes so far.
    #[cfg(test)]
    pub(crate) fn looked_at(&self) -> u64 {
        self.looked_at
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        self.busy.memory_bytes()
    }

    /// Every timer hashes to the bucket it is in, is due at or after the floor (at it, for
    /// one, when the floor is exact), and the busy marks agree with the buckets.
    pub(crate) fn check<T>(&self, core: &Core<T>) -> Result<(), &'static str> {
        let mut at_floor = false;
        for b in 0..self.size() {
            let list = b as u32 + 1;
            if self.busy.get(b) == core.arena.is_list_empty(list) {
                return Err("busy mark disagrees with its bucket");
            }
            let mut i = core.arena.first(list);
            while i != NIL {
                let node = core.arena.node(i);
                if self.list_of(node.expiry) != list {
                    return Err("timer in the wrong bucket");
                }
                if node.expiry < self.floor {
                    return Err("timer due before the floor");
                }
                at_floor |= node.expiry == self.floor;
                i = node.next;
            }
        }
        if self.exact && core.structure_len() > 0 && !at_floor {
            return Err("the floor is called exact but no timer is due at it");
        }
        Ok(())
    }
}
