//! A cache prefetch hint, the one `unsafe` call of the crate.
//!
//! Processing a slot walks its linked list; each timer's slab entry is a cache miss once a
//! slot's timers no longer fit the cache (W3, a million timers). The next timer's index is
//! known as soon as the current one is unlinked, so the wheel asks for its entry then, and the
//! miss overlaps the work on the current timer instead of following it. Measured with `perf` on
//! W3 before the hint: about two thirds of the advance time stalled on that one load; with it,
//! advancing through a million timers went from about 278 to 195 ns per timer.

/// Asks the processor to start loading the cache line holding `value`. Only a hint: it changes
/// nothing the program can observe but time.
#[inline(always)]
pub(super) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: `_mm_prefetch` is unsafe only because it needs SSE, which is part of the x86_64
    // baseline (every x86_64 target enables it); a prefetch never faults and never writes, and
    // the pointer comes from a live reference anyway.
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
