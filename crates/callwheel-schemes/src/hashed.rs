//! What the two hashed wheels (Schemes 5 and 6) share: a power-of-two table of buckets indexed
//! by the deadline's low bits, and busy marks over it (Varghese & Lauck, Appendix A).
//!
//! A bucket holds every rotation's timers, so a busy mark alone cannot tell a timer due this
//! rotation from one due thousands of rotations later. Walked tick by tick (the papers' use, a
//! few hundred ticks a second), that costs one wasted visit per busy bucket per rotation. A
//! clock of nanosecond ticks moved to "now" in one step would instead visit every busy bucket
//! once per rotation of the jump: a cost growing with the tick's value. The table therefore
//! keeps a floor, a tick no timer is due before, and starts every search for work there;
//! whenever a whole rotation has passed without a timer firing, it makes the floor exact by
//! one look at every timer (O(n + size / 64)), after which the next busy bucket is the
//! earliest deadline itself. That look is paid at most once per rotation that fires nothing,
//! so a jump of any length costs O(n + size / 64) per timer it fires, whatever the tick.

use crate::arena::NIL;
use crate::busy::BusyMarks;
use crate::clock::Core;
use callwheel::Error;
use callwheel::Tick;

/// The largest table: 2^26 buckets.
pub(crate) const MAX_BITS: u32 = 26;

/// The bucket table of a hashed wheel; bucket `b` is the core's list `b + 1`.
#[derive(Debug)]
pub(crate) struct Table {
    mask: u64,
    busy: BusyMarks,
    /// No timer in the buckets is due before this tick (exact right after [`Table::refresh`],
    /// a lower bound otherwise).
    floor: Tick,
    /// The tick at which a timer last fired or the floor was last made exact: a search that
    /// finds work more than a rotation after it makes the floor exact first.
    quiet_since: Tick,
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
            quiet_since: 0,
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
    /// timer in the buckets the floor is its deadline; otherwise the floor comes down to it.
    #[inline]
    pub(crate) fn mark<T>(&mut self, core: &Core<T>, list: u32, expiry: Tick) {
        self.busy.set(list as usize - 1);
        self.floor = if core.structure_len() == 1 {
            expiry
        } else {
            self.floor.min(expiry)
        };
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
    #[inline]
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

    /// [`Table::next_busy`] for a walk up to `target`: when the next busy bucket lies more
    /// than a rotation past the last firing (or the last refresh), and within the walk, the
    /// floor is made exact first, so the walk goes straight to the earliest deadline.
    pub(crate) fn next_work_until<T>(&mut self, core: &Core<T>, target: Tick) -> Option<Tick> {
        let t = self.next_busy(core)?;
        if t <= target && t - self.quiet_since.min(t) > self.mask {
            self.refresh(core);
            return self.next_busy(core);
        }
        Some(t)
    }

    /// The earliest deadline in the buckets, exactly: the next busy bucket when it holds a
    /// timer due at its tick (`first_due` says whether it does), otherwise found by making the
    /// floor exact.
    pub(crate) fn earliest<T>(
        &mut self,
        core: &Core<T>,
        first_due: impl Fn(u32, Tick) -> bool,
    ) -> Option<Tick> {
        let t = self.next_busy(core)?;
        if first_due(self.list_of(t), t) {
            return Some(t);
        }
        self.refresh(core);
        self.next_busy(core)
    }

    /// Makes the floor exact: the earliest deadline of every timer in the buckets.
    fn refresh<T>(&mut self, core: &Core<T>) {
        let mut floor = Tick::MAX;
        let mut b = 0;
        while b < self.size() {
            let Some(d) = self.busy.next_from(b) else {
                break;
            };
            let bucket = b + d;
            if bucket < b || bucket >= self.size() {
                // Wrapped around: every bucket has been looked at.
                break;
            }
            let mut i = core.arena.first(bucket as u32 + 1);
            while i != NIL {
                let node = core.arena.node(i);
                floor = floor.min(node.expiry);
                i = node.next;
            }
            b = bucket + 1;
        }
        self.floor = floor;
        self.quiet_since = core.cursor;
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        self.busy.memory_bytes()
    }

    /// Every timer hashes to the bucket it is in, is due at or after the floor, and the busy
    /// marks agree with the buckets.
    pub(crate) fn check<T>(&self, core: &Core<T>) -> Result<(), &'static str> {
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
                i = node.next;
            }
        }
        Ok(())
    }
}
