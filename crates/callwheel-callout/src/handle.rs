//! Callout handles: Costello & Varghese's two-part ID.

use core::fmt;

/// A callout record's identity: the record's index in the pool (the paper's low half) and its
/// generation (the high half). A record's generation changes whenever it is freed, so a handle
/// kept past its callout's expiry can never cancel the record's next user.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CalloutHandle(u64);

impl CalloutHandle {
    pub(crate) const fn new(index: u32, generation: u32) -> CalloutHandle {
        CalloutHandle(index as u64 | (generation as u64) << 32)
    }

    /// The record's index in the pool.
    pub const fn index(self) -> u32 {
        self.0 as u32
    }

    /// The record's generation when the handle was issued.
    pub const fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }

    /// The handle as one integer, for storage or for C.
    pub const fn to_bits(self) -> u64 {
        self.0
    }

    /// Rebuilds a handle from [`CalloutHandle::to_bits`]. Any value is accepted; one that was
    /// never issued is rejected by the table, never misused.
    pub const fn from_bits(bits: u64) -> CalloutHandle {
        CalloutHandle(bits)
    }
}

impl fmt::Debug for CalloutHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CalloutHandle({}#{})", self.index(), self.generation())
    }
}
