//! Each thread's record of the timer callbacks it has taken on and not yet finished, and of
//! the runtime whose driver it is.
//!
//! `drain` waits until no callback of its timer runs on *another* thread: it cannot wait for
//! runs the calling thread holds itself (its own callback, or a direct callback later in the
//! driver's batch). Which runs are the caller's is the caller's own knowledge, so it lives in
//! a thread-local list of timer identities rather than in every timer: a timer needs no list
//! of threads (which would grow while firing, where no error can be returned), and a runtime
//! thread's list is reserved before the thread starts — a driver's for its whole batch, a
//! worker's for its one job — so recording a run never allocates.

use std::cell::{Cell, RefCell};

use crate::Error;

// Loom's thread-locals are per model thread; its macro takes no `const` initialiser.
#[cfg(not(callwheel_loom))]
std::thread_local! {
    static RUNS: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}
#[cfg(callwheel_loom)]
loom::thread_local! {
    static RUNS: RefCell<Vec<usize>> = RefCell::new(Vec::new());
}

// The runtime a driver thread serves, by the address of its shared state; 0 on every other
// thread. A call that blocks until a timer of that runtime fires (a sleep, a timed wait)
// would wait for its own thread there.
#[cfg(not(callwheel_loom))]
std::thread_local! {
    static DRIVES: Cell<usize> = const { Cell::new(0) };
}
#[cfg(callwheel_loom)]
loom::thread_local! {
    static DRIVES: Cell<usize> = Cell::new(0);
}

/// The calling thread is a driver of the runtime whose shared state is at `owner`.
pub(crate) fn mark_driver(owner: usize) {
    DRIVES.with(|d| d.set(owner));
}

/// Whether the calling thread is a driver of the runtime whose shared state is at `owner`.
pub(crate) fn drives(owner: usize) -> bool {
    owner != 0 && DRIVES.with(Cell::get) == owner
}

/// A list with room for `n` runs, for a thread about to start ([`adopt`]).
///
/// # Errors
///
/// [`Error::Wheel`] with [`callwheel::Error::NoMemory`] when the allocator refuses.
pub(crate) fn reserved(n: usize) -> Result<Vec<usize>, Error> {
    let mut list = Vec::new();
    list.try_reserve_exact(n)
        .map_err(|_| Error::Wheel(callwheel::Error::NoMemory))?;
    Ok(list)
}

/// Makes `list` (empty, with its reserved room) the calling thread's record.
pub(crate) fn adopt(list: Vec<usize>) {
    RUNS.with(|runs| {
        let mut runs = runs.borrow_mut();
        debug_assert!(runs.is_empty(), "a thread adopts its record before any run");
        *runs = list;
    });
}

/// The calling thread has taken on a run of timer `id`'s callback.
pub(crate) fn begin(id: usize) {
    RUNS.with(|runs| runs.borrow_mut().push(id));
}

/// The calling thread has finished (or dropped unrun) a run of timer `id`'s callback; no-op
/// when it holds none.
pub(crate) fn end(id: usize) {
    RUNS.with(|runs| {
        let mut runs = runs.borrow_mut();
        if let Some(pos) = runs.iter().position(|&r| r == id) {
            runs.swap_remove(pos);
        }
    });
}

/// How many runs of timer `id`'s callback the calling thread holds.
pub(crate) fn mine(id: usize) -> usize {
    RUNS.with(|runs| runs.borrow().iter().filter(|&&r| r == id).count())
}

#[cfg(all(test, not(callwheel_loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_thread_counts_only_its_own_runs() {
        adopt(reserved(4).unwrap());
        begin(7);
        begin(7);
        begin(9);
        assert_eq!(mine(7), 2);
        std::thread::spawn(|| assert_eq!(mine(7), 0))
            .join()
            .unwrap();
        end(7);
        end(11);
        assert_eq!((mine(7), mine(9), mine(11)), (1, 1, 0));
        end(7);
        end(9);
        assert_eq!(mine(7) + mine(9), 0);
        RUNS.with(|r| assert_eq!(r.borrow().capacity(), 4, "no run grew the list"));
    }
}
