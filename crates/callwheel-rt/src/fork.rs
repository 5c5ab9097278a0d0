//! Which side of a `fork` this process is on: a number that differs in a child forked since a
//! driver was made, where that driver's threads do not run and its descriptors' registrations
//! are shared with the parent.
//!
//! `fork` copies only the calling thread: a driver made before it is, in the child, memory that
//! looks alive but has no thread turning it, locks that a parent thread may have held at the
//! fork, and alarms whose descriptors (and the executor's `epoll` instance they are in) the
//! parent still uses. A driver records [`fork_generation`] when it is made and compares it
//! where it would lock or wait: a different number means the copy, which it then treats as
//! shut down without touching its locks or descriptors.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Once, OnceLock};

/// Forks since the handler was installed, counted in each child (a child's child counts two).
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// The handler's installation, once per process (a child inherits it).
static WATCH: Once = Once::new();

thread_local! {
    /// Whether this thread is the one a fork copied into this process (the thread that called
    /// `fork`), rather than one started in it. A constant initialiser and no destructor: a
    /// plain thread-local word, which the handler may write.
    static FORKING_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// What [`before_fork`] registered, run in order.
static BEFORE_FORK: [OnceLock<fn()>; 4] = [const { OnceLock::new() }; 4];

/// Run by the C library in the parent just before a fork, on the thread that calls it.
extern "C" fn before() {
    for hook in BEFORE_FORK.iter().map_while(OnceLock::get) {
        hook();
    }
}

/// Run by the C library in the child, before `fork` returns there, on the thread that called
/// it: an atomic addition and a thread-local store, safe in a child of a multi-threaded
/// process (where only async-signal-safe calls are).
extern "C" fn in_child() {
    GENERATION.fetch_add(1, Ordering::Relaxed);
    FORKING_THREAD.set(true);
}

/// Has `hook` run in the parent just before every later `fork`, on the thread that calls it,
/// so that it can note what that thread is inside of (an executor's context, say) for the child
/// to read with [`is_forking_thread`]. Call it once per hook; it must not panic (it runs inside
/// `fork`). At most four hooks: `false` when all are taken.
pub fn before_fork(hook: fn()) -> bool {
    fork_generation();
    BEFORE_FORK.iter().any(|slot| slot.set(hook).is_ok())
}

/// Whether the calling thread is the one that called `fork` to make this process (a child's
/// only thread at first), rather than one started in it; `false` in a process not forked
/// since [`fork_generation`]'s first call. That thread may still be inside contexts of the
/// parent's (an executor's `block_on`, a runtime's worker loop) whose threads and descriptors
/// are the parent's: a driver started from there would register with them.
pub fn is_forking_thread() -> bool {
    fork_generation() != 0 && FORKING_THREAD.get()
}

/// This process's fork generation: 0 in the process that first called this function, one more
/// in each child forked after that (counted by a `pthread_atfork` handler installed at the first
/// call). A structure that starts threads or registers descriptors records it when it is made;
/// a different value later means it was copied into a forked child.
///
/// When the C library refuses the handler (no memory), forks go uncounted and the value stays
/// 0. Costs one atomic load after the first call.
///
/// ```
/// let here = callwheel_rt::fork_generation();
/// assert_eq!(callwheel_rt::fork_generation(), here); // no fork in between
/// ```
#[inline]
pub fn fork_generation() -> u64 {
    WATCH.call_once(|| {
        // Refused only without memory: forks then go uncounted, as documented.
        let _ = crate::sys::on_fork(before, in_child);
    });
    GENERATION.load(Ordering::Relaxed)
}

/// A process-wide value made at its first use, and made again at the first use in a child
/// forked since, where the one made before is a copy whose threads stay with the parent: the
/// `static` behind a library's process-wide driver or runtime.
///
/// ```
/// use callwheel_rt::{PerFork, Runtime};
///
/// static RUNTIME: PerFork<Runtime> = PerFork::new();
///
/// let (rt, made) = RUNTIME.get_or_try_make(|| Runtime::builder().shards(1).build())?;
/// assert!(made);
/// let (again, made) = RUNTIME.get_or_try_make(|| Runtime::builder().shards(1).build())?;
/// assert!(std::ptr::eq(rt, again) && !made);
/// # Ok::<(), callwheel_rt::Error>(())
/// ```
pub struct PerFork<T> {
    first: OnceLock<Box<Made<T>>>,
    /// Who is making a value: 0 for no one, else one more than the maker's fork generation. A
    /// mark left by a thread of an earlier generation (it was making when the process forked,
    /// and does not exist in the child) is no one's.
    making: AtomicU64,
}

/// One value of a [`PerFork`], the fork generation it was made in, and the value made after it
/// in a child forked since.
struct Made<T> {
    value: T,
    generation: u64,
    next: OnceLock<Box<Made<T>>>,
}

impl<T> PerFork<T> {
    /// None made yet.
    pub const fn new() -> PerFork<T> {
        PerFork {
            first: OnceLock::new(),
            making: AtomicU64::new(0),
        }
    }

    /// This process's value, made by `make` when this process has none yet, and whether this
    /// call made it. One thread makes it while others wait (no lock is held: a thread that was
    /// making one when the process forked does not hold up the child); `make` must not ask this
    /// same value, which would wait for itself.
    ///
    /// # Errors
    ///
    /// `make`'s error; a later call tries again.
    pub fn get_or_try_make<E>(
        &self,
        mut make: impl FnMut() -> Result<T, E>,
    ) -> Result<(&T, bool), E> {
        let here = fork_generation();
        let mut slot = &self.first;
        let mut made_here = false;
        loop {
            match slot.get() {
                Some(m) if m.generation == here => return Ok((&m.value, made_here)),
                // Made before a fork: this process's value comes after it.
                Some(m) => slot = &m.next,
                None => {
                    let mark = self.making.load(Ordering::Acquire);
                    if mark == here + 1 {
                        // Another thread of this process is making it.
                        std::thread::yield_now();
                        continue;
                    }
                    if self
                        .making
                        .compare_exchange(mark, here + 1, Ordering::AcqRel, Ordering::Acquire)
                        .is_err()
                    {
                        continue;
                    }
                    // Cleared however this ends: made, refused, or `make` panicking.
                    let _mark = Unmark(&self.making);
                    if slot.get().is_none() {
                        made_here = slot
                            .set(Box::new(Made {
                                value: make()?,
                                generation: here,
                                next: OnceLock::new(),
                            }))
                            .is_ok();
                    }
                }
            }
        }
    }

    /// The value made first (in this process or an ancestor), if any: in a child forked since,
    /// the parent's copy.
    pub fn first(&self) -> Option<&T> {
        self.first.get().map(|m| &m.value)
    }
}

/// Clears a [`PerFork`]'s making mark when dropped.
struct Unmark<'a>(&'a AtomicU64);

impl Drop for Unmark<'_> {
    fn drop(&mut self) {
        self.0.store(0, Ordering::Release);
    }
}

impl<T> Default for PerFork<T> {
    fn default() -> PerFork<T> {
        PerFork::new()
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for PerFork<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PerFork")
            .field("first", &self.first())
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(miri), not(callwheel_loom)))]
mod tests {
    use super::*;

    // The value made at first use is kept, and a failed making is tried again. (A fork's
    // effect is tested where a driver forks: callwheel-async's tests/fork.rs.)
    #[test]
    fn the_first_value_made_is_kept_and_a_failure_is_tried_again() {
        let v: PerFork<u32> = PerFork::new();
        assert!(v.first().is_none());
        assert_eq!(v.get_or_try_make(|| Err::<u32, _>("no")).err(), Some("no"));
        assert_eq!(v.get_or_try_make(|| Ok::<_, ()>(7)), Ok((&7, true)));
        assert_eq!(v.get_or_try_make(|| Ok::<_, ()>(8)), Ok((&7, false)));
        assert_eq!(v.first(), Some(&7));
    }

    #[test]
    fn a_making_that_panics_leaves_the_next_call_free_to_make() {
        static V: PerFork<u32> = PerFork::new();
        let panicked = std::panic::catch_unwind(|| {
            V.get_or_try_make(|| -> Result<u32, ()> { panic!("made nothing") })
        });
        assert!(panicked.is_err());
        // On another thread, bounded: a mark left behind would make it wait for ever.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(V.get_or_try_make(|| Ok::<_, ()>(3)).is_ok()));
        let made = rx.recv_timeout(std::time::Duration::from_secs(10));
        assert_eq!(
            made,
            Ok(true),
            "the mark of the panicked making was left behind"
        );
    }

    // Threads asking at once: one makes the value, every one gets it.
    #[test]
    fn one_thread_makes_the_value_while_the_others_wait() {
        let v: PerFork<u32> = PerFork::new();
        let makings = AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    let (value, _) = v
                        .get_or_try_make(|| {
                            makings.fetch_add(1, Ordering::Relaxed);
                            std::thread::sleep(std::time::Duration::from_millis(5));
                            Ok::<_, ()>(11)
                        })
                        .expect("made");
                    assert_eq!(*value, 11);
                });
            }
        });
        assert_eq!(makings.load(Ordering::Relaxed), 1);
    }
}
