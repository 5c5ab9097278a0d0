//! The directory of a shared table: which CPU's table holds each callout, so that a handle
//! names the callout wherever it moves.

use callwheel::slab::Slab;
use callwheel::Handle;

use crate::Error;

/// Which CPU's table holds each callout: for each callout, the CPU whose table holds its
/// record and that record's handle, in the core's generation-checked slab, whose handles carry
/// the shared table's own owner.
#[derive(Debug)]
pub(super) struct Directory {
    pub(super) entries: Slab<(usize, Handle)>,
}

impl Directory {
    pub(super) fn new() -> Directory {
        Directory {
            entries: Slab::new(),
        }
    }

    /// The entry `handle` names, if it is live.
    pub(super) fn index(&self, handle: Handle) -> Result<u32, Error> {
        self.entries.resolve(handle).ok_or(Error::StaleHandle)
    }

    /// Where the callout `handle` names is now.
    pub(super) fn home(&self, handle: Handle) -> Result<(usize, Handle), Error> {
        let index = self.index(handle)?;
        self.entries.get(index).copied().ok_or(Error::StaleHandle)
    }

    /// Makes sure [`Directory::insert`] will not need to allocate.
    pub(super) fn reserve(&mut self) -> Result<(), Error> {
        Ok(self.entries.reserve()?)
    }

    /// A new entry for a callout at `home`, after [`Directory::reserve`] (which makes it
    /// succeed).
    pub(super) fn insert(&mut self, home: (usize, Handle)) -> Result<Handle, Error> {
        let index = self.entries.insert(home)?;
        self.entries.handle(index).ok_or(Error::StaleHandle)
    }

    /// Frees entry `index`; its handles go stale.
    pub(super) fn release(&mut self, index: u32) {
        let _ = self.entries.remove(index);
    }
}
