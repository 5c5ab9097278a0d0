//! Handles: which timer, which use of its slot, and which structure issued it.
//!
//! Every structure of the project that hands out handles — the production wheel, the schemes,
//! the callout tables — stores its timers in a slab and names a timer by its slot index and the
//! slot's generation (Costello & Varghese's two-part ID, bumped whenever the slot is freed, so a
//! stale handle never acts on the slot's next timer). An index and a generation alone do not
//! say *which* slab: two fresh structures both issue index 0 of the same first generation, and
//! a handle kept from one would act on the other. So each structure also draws an [`Owner`]
//! when it is made, a number no other structure in the process gets, and every handle carries
//! it. A structure accepts a handle only when owner, index and generation all match a live
//! timer of its own.

use core::fmt;
use core::num::NonZeroU64;
use core::sync::atomic::{AtomicU64, Ordering};

/// Names one started timer of one structure: the owner's identity, the slot index and the
/// slot's generation.
///
/// A handle stays valid until its timer fires or is stopped. After that the slot may be reused
/// by another timer with a new generation, and the old handle is rejected: it never acts on
/// someone else's timer. A handle presented to a structure that did not issue it is rejected
/// the same way, as is any handle made up with [`Handle::from_parts`] that names no live timer.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Handle {
    /// The slot index (low 32 bits) and generation (high 32 bits).
    id: u64,
    /// The issuing structure's [`Owner`] (never 0 for an issued handle).
    owner: u64,
}

impl Handle {
    /// The slot index part of the handle.
    pub const fn index(self) -> u32 {
        self.id as u32
    }

    /// The generation part of the handle: which use of the slot it names (counted from 0, or
    /// from 1 in the production wheel, whose entries keep 0 for a free slot).
    pub const fn generation(self) -> u32 {
        (self.id >> 32) as u32
    }

    /// The identity of the structure that issued the handle ([`Owner::get`]).
    pub const fn owner(self) -> u64 {
        self.owner
    }

    /// The handle as two numbers, `(id, owner)`, for storing it in C structures or on the wire;
    /// `id` is the index in its low 32 bits and the generation in its high 32.
    pub const fn to_parts(self) -> (u64, u64) {
        (self.id, self.owner)
    }

    /// Rebuilds a handle from [`Handle::to_parts`]. Any pair is accepted; one that names no live
    /// timer of the structure it is presented to is rejected there, touching nothing.
    pub const fn from_parts(id: u64, owner: u64) -> Handle {
        Handle { id, owner }
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Handle({}#{}@{})",
            self.index(),
            self.generation(),
            self.owner
        )
    }
}

/// The identity of one structure that issues [`Handle`]s, unique in the process.
///
/// Drawn from a process-wide 64-bit counter, so no two structures made in one process share it
/// (a process would have to make 2^64 - 1 of them first). It is a plain number, not a
/// reference: a structure keeps its owner for life and compares it on every handle it is given.
///
/// ```
/// use callwheel::Owner;
///
/// let (a, b) = (Owner::new(), Owner::new());
/// let h = a.handle(7, 3);
/// assert_eq!(a.slot(h), Some((7, 3)));
/// assert_eq!(b.slot(h), None); // another structure's handle names nothing here
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Owner(NonZeroU64);

/// The next owner identity to hand out (0 is never one, so a made-up zero owner never matches).
static NEXT_OWNER: AtomicU64 = AtomicU64::new(1);

impl Owner {
    /// A new identity, different from every other one drawn in this process.
    pub fn new() -> Owner {
        // Relaxed: the counter only has to hand out distinct numbers; nothing is published
        // through it.
        let n = NEXT_OWNER.fetch_add(1, Ordering::Relaxed);
        // 0 comes back only after 2^64 draws; skip it rather than issue an owner that forged
        // zero-owner handles would match.
        Owner(NonZeroU64::new(n).unwrap_or(NonZeroU64::MIN))
    }

    /// The identity as a number (what [`Handle::owner`] returns for this owner's handles).
    pub const fn get(self) -> u64 {
        self.0.get()
    }

    /// The handle of slot `index` at `generation`, issued by this owner.
    #[inline(always)]
    pub const fn handle(self, index: u32, generation: u32) -> Handle {
        Handle {
            id: ((generation as u64) << 32) | index as u64,
            owner: self.0.get(),
        }
    }

    /// The `(index, generation)` that `handle` names when this owner issued it; `None` for
    /// another owner's handle. The caller still checks that the slot is live at that
    /// generation.
    #[inline(always)]
    pub fn slot(self, handle: Handle) -> Option<(u32, u32)> {
        (handle.owner == self.0.get()).then_some((handle.index(), handle.generation()))
    }
}

impl Default for Owner {
    fn default() -> Self {
        Owner::new()
    }
}
