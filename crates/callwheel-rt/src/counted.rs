//! A counted shared pointer whose allocation can fail: [`Counted`], the runtime's `Arc`.
//!
//! A runtime timer's state and callback are shared by its handles, the wheel slot of its
//! pending arming and its queued firings. The standard library's `Arc` and `Box` have no
//! fallible constructor on stable Rust, so making a timer when memory runs out would abort the
//! process; `Counted` is the same counted pointer with a constructor that returns `None`
//! instead. It holds a possibly unsized value (a struct ending in a `dyn Fn` callback), built
//! sized and coerced, so the value and its callback are one allocation.

use std::alloc::{alloc, dealloc, Layout};
use std::fmt;
use std::ops::Deref;
use std::ptr::NonNull;

use crate::sync::{fence, AtomicUsize, Ordering};

/// The allocation: the count, then the value (last, so that it may be unsized).
pub(crate) struct Block<T: ?Sized> {
    refs: AtomicUsize,
    value: T,
}

/// A counted reference to a shared `T`: cloned and dropped on any thread like an `Arc<T>`;
/// the last one drops the value and frees it.
pub(crate) struct Counted<T: ?Sized> {
    ptr: NonNull<Block<T>>,
}

// SAFETY: a `Counted<T>` only hands out `&T` (on any thread, so `T: Sync`) and may drop the
// `T` on any thread (so `T: Send`), exactly as `Arc<T>`; the count is atomic.
unsafe impl<T: ?Sized + Send + Sync> Send for Counted<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: ?Sized + Send + Sync> Sync for Counted<T> {}

impl<T: ?Sized> Counted<T> {
    /// Allocates `value` with a count of one, or `None` when the allocator refuses. `unsize`
    /// turns the sized pointer into the stored type's: `|p| p`, which for an unsized `T` is
    /// the coercion (stable Rust cannot name that bound in a generic function).
    pub(crate) fn try_new<U>(
        value: U,
        unsize: fn(NonNull<Block<U>>) -> NonNull<Block<T>>,
    ) -> Option<Counted<T>> {
        let layout = Layout::new::<Block<U>>();
        // SAFETY: the layout is not zero-sized: it holds the count.
        let raw = unsafe { alloc(layout) }.cast::<Block<U>>();
        let sized = NonNull::new(raw)?;
        let block = Block {
            refs: AtomicUsize::new(1),
            value,
        };
        // SAFETY: `sized` was just allocated for exactly this type: aligned and unused.
        unsafe { sized.as_ptr().write(block) };
        Some(Counted { ptr: unsize(sized) })
    }

    fn block(&self) -> &Block<T> {
        // SAFETY: this reference keeps the count above zero, so the allocation is alive and
        // initialised.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T: ?Sized> Deref for Counted<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.block().value
    }
}

impl<T: ?Sized> Clone for Counted<T> {
    fn clone(&self) -> Counted<T> {
        // Relaxed, as for `Arc`: a new reference is made from a live one, which already
        // orders everything before it.
        let old = self.block().refs.fetch_add(1, Ordering::Relaxed);
        // A count that large means references are leaked without end; letting it wrap would
        // free a value still in use.
        if old > isize::MAX as usize {
            std::process::abort();
        }
        Counted { ptr: self.ptr }
    }
}

impl<T: ?Sized> Drop for Counted<T> {
    fn drop(&mut self) {
        // Release here and Acquire below, as for `Arc`: every use through other references
        // happens before the value is dropped.
        if self.block().refs.fetch_sub(1, Ordering::Release) != 1 {
            return;
        }
        fence(Ordering::Acquire);
        /// Frees the allocation even when dropping the value panics (a callback's captures
        /// are user code).
        struct Free(*mut u8, Layout);
        impl Drop for Free {
            fn drop(&mut self) {
                // SAFETY: allocated with this layout by `try_new`, freed once, here, after
                // the value was dropped.
                unsafe { dealloc(self.0, self.1) }
            }
        }
        let _free = Free(
            self.ptr.as_ptr().cast::<u8>(),
            Layout::for_value(self.block()),
        );
        // SAFETY: the count reached zero, so this was the last reference and nothing else
        // can reach the value, initialised by `try_new` and dropped once, here.
        unsafe { std::ptr::drop_in_place(self.ptr.as_ptr()) };
    }
}

impl<T: ?Sized + fmt::Debug> fmt::Debug for Counted<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

#[cfg(all(test, not(callwheel_loom)))]
mod tests {
    use std::panic::{catch_unwind, AssertUnwindSafe};
    use std::sync::atomic::{AtomicUsize as StdAtomic, Ordering as StdOrdering};
    use std::sync::Arc;

    use super::*;

    /// Counts its drops, and panics in it when asked.
    struct Capture {
        drops: Arc<StdAtomic>,
        panic: bool,
    }

    impl Drop for Capture {
        fn drop(&mut self) {
            self.drops.fetch_add(1, StdOrdering::SeqCst);
            if self.panic {
                panic!("a value that panics when dropped");
            }
        }
    }

    type Call = dyn Fn() -> usize + Send + Sync;

    fn counted_call(drops: &Arc<StdAtomic>, panic: bool) -> Counted<Call> {
        let capture = Capture {
            drops: Arc::clone(drops),
            panic,
        };
        Counted::<Call>::try_new(move || capture.drops.load(StdOrdering::SeqCst), |p| p).unwrap()
    }

    #[test]
    fn the_last_reference_drops_the_value_once() {
        let drops = Arc::new(StdAtomic::new(0));
        let a = counted_call(&drops, false);
        assert_eq!(a(), 0);
        let b = a.clone();
        let c = std::thread::spawn(move || {
            let c = b.clone();
            drop(b);
            c
        })
        .join()
        .unwrap();
        drop(a);
        assert_eq!(drops.load(StdOrdering::SeqCst), 0, "a reference is left");
        assert_eq!(c(), 0);
        drop(c);
        assert_eq!(drops.load(StdOrdering::SeqCst), 1);
    }

    #[test]
    fn a_value_that_panics_when_dropped_is_still_freed() {
        // Miri reports a leak if the allocation is not freed on this path.
        let drops = Arc::new(StdAtomic::new(0));
        let a = counted_call(&drops, true);
        let unwound = catch_unwind(AssertUnwindSafe(move || drop(a)));
        assert!(unwound.is_err());
        assert_eq!(drops.load(StdOrdering::SeqCst), 1);
    }

    #[test]
    fn values_of_any_size_and_alignment_are_stored_in_place() {
        #[repr(align(64))]
        struct Wide([u8; 200]);
        impl Wide {
            fn last(&self) -> u8 {
                self.0[199]
            }
        }
        let wide = Wide([7; 200]);
        let f = Counted::<Call>::try_new(move || usize::from(wide.last()), |p| p).unwrap();
        assert_eq!(f(), 7);
        assert_eq!((&*f as *const Call).cast::<u8>() as usize % 64, 0);
        let zero_sized = Counted::<Call>::try_new(|| 1, |p| p).unwrap();
        assert_eq!(zero_sized(), 1);
        let sized = Counted::try_new(5u8, |p| p).unwrap();
        assert_eq!(*sized.clone(), 5);
    }
}
