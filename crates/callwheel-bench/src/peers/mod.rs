//! The peers: timer structures from outside callwheel, behind the same
//! [`Scheme<u64>`](callwheel::Scheme) trait, so the same monomorphized workload code runs them.
//!
//! | adapter | what it wraps | cancel | `memory_bytes` |
//! |---|---|---|---|
//! | [`HeapLazy`] | `std::collections::BinaryHeap` of `(deadline, seq, id)` | lazy: a tombstone, skipped at the top | heap capacity × entry + the slot table |
//! | [`BTreeMapPeer`] | `std::collections::BTreeMap<(deadline, seq), value>` | eager: `remove` | 0 (printed n/a) |
//! | [`DelayQueuePeer`] | `tokio_util::time::DelayQueue` on a paused tokio clock | eager: `try_remove` | 0 (printed n/a) |
//!
//! Each adapter keeps the firing rule of `docs/workloads.md`: `advance(t)` moves the clock to `t` and
//! fires every pending timer whose expiry is at or before `t`, and no other. What the adapters
//! do *not* copy from callwheel's structures: a timer started from inside an expiry callback with
//! a deadline at or before the clock fires in the same `advance` call rather than the next one
//! (no workload does that), `DelayQueue` fires equal deadlines in reverse start order, and
//! `check_invariants` checks only the adapter's own bookkeeping.

// One file per adapter; each keeps its timers in the core's generation-checked `Slab` (a
// slot whose generations run out is retired, never reused) and they share nothing else.
mod btree;
mod delay_queue;
mod heap;

pub use btree::BTreeMapPeer;
pub use delay_queue::DelayQueuePeer;
pub use heap::HeapLazy;
