//! What the two hashed wheels (Schemes 5 and 6) share: a power-of-two table of buckets indexed
//! by the deadline's low bits, and busy marks over it (Varghese & Lauck, Appendix A).

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

    #[inline]
    pub(crate) fn mark(&mut self, list: u32) {
        self.busy.set(list as usize - 1);
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

    /// The tick of the next busy bucket after the cursor: a conservative next expiry (the
    /// bucket's timers may belong to a later rotation).
    pub(crate) fn next_busy<T>(&self, core: &Core<T>) -> Option<Tick> {
        if core.structure_len() == 0 {
            return None;
        }
        let from = core.cursor.wrapping_add(1);
        let d = self.busy.next_from((from & self.mask) as usize)?;
        Some(from.saturating_add(d as u64))
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        self.busy.memory_bytes()
    }

    /// Every timer hashes to the bucket it is in, and the busy marks agree with the buckets.
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
                i = node.next;
            }
        }
        Ok(())
    }
}
