//! A cache prefetch hint, one of the crate's two places with `unsafe` code (the other is the
//! lists' links).
//!
//! Processing a slot walks its linked list; each timer's slab entry is a cache miss once a
//! slot's timers no longer fit the cache (W3, a million timers). The next timer's index is
//! known as soon as the current one is unlinked, so the wheel asks for its entry then, and the
//! miss overlaps the work on the current timer instead of following it. Measured with `perf` on
//! W3 before the hint: about two thirds of the advance time stalled on that one load; with it,
//! advancing through a million timers went from 280–307 to 210–247 ns per timer
//! (`examples/w3_phases.rs`, the two builds run alternately).

/// Asks the processor to start loading the cache line holding `value`. Only a hint: it changes
/// nothing the program can observe but time.
#[inline(always)]
pub(super) fn prefetch<T>(value: &T) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    #[allow(unsafe_code)]
    // SAFETY: `_mm_prefetch` requires SSE, which the `cfg` above says this target enables at
    // compile time; it takes a raw pointer, but a prefetch never reads into the program, never
    // writes and never faults, whatever the address; and this one comes from a live `&T`.
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast());
    }
    // Elsewhere (other architectures, or x86_64 targets built without SSE) it is no hint at all.
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    let _ = value;
}
