//! The set's bounded lock hold, by counting: while a set's timers expire all at once, other
//! threads' calls each wait for at most one budget's worth of them every time they ask for
//! the set's lock.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

use crate::{ManualClock, Runtime, TimerSet, TimerSetConfig, MAX_QUOTA};

thread_local! {
    /// While recording: the set's expired count at each of this thread's requests for the
    /// lock, and when it got it.
    static WAITS: RefCell<Option<Vec<(u64, u64)>>> = const { RefCell::new(None) };
}

/// Records a user call's wait for the lock (called by the lock itself).
pub(super) fn note_wait(before: u64, after: u64) {
    WAITS.with(|w| {
        if let Some(v) = w.borrow_mut().as_mut() {
            v.push((before, after));
        }
    });
}

/// The budget: timers moved to the queue per hold of the set's lock.
const K: u64 = 256;
/// Timers of the set: 2^20 less room for the callers' own.
const N: u64 = MAX_QUOTA as u64 - 4 * K;

/// One round: N timers due at once, two threads calling `create` (and `cancel`) meanwhile.
/// Returns every wait the callers recorded.
fn round() -> Vec<(u64, u64)> {
    let clock = ManualClock::new(0);
    let rt = Runtime::builder()
        .clock(clock.clone())
        .shards(1)
        .workers(1)
        .max_expiries_per_lock(K)
        .build()
        .unwrap();
    let set = TimerSet::with_config(&rt, TimerSetConfig::default().with_quota(MAX_QUOTA)).unwrap();
    for label in 0..N {
        set.create(Duration::from_millis(1), Duration::ZERO, label)
            .unwrap();
    }
    let set = Arc::new(set);
    let callers: Vec<_> = (0..2)
        .map(|_| {
            let set = Arc::clone(&set);
            std::thread::spawn(move || {
                WAITS.with(|w| *w.borrow_mut() = Some(Vec::new()));
                loop {
                    let h = set
                        .create(Duration::from_secs(3_600), Duration::ZERO, u64::MAX)
                        .unwrap();
                    set.cancel(h).unwrap();
                    if set.stats().expired >= N {
                        return WAITS.with(|w| w.borrow_mut().take().unwrap_or_default());
                    }
                }
            })
        })
        .collect();
    // Every timer is due at once: the driver moves them a budget at a time, and so does each
    // call's own catch-up with the clock.
    clock.advance(1_000_000);
    let waits = callers
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();
    assert_eq!(set.stats().expired, N);
    set.check_invariants().unwrap();
    waits
}

#[test]
#[cfg_attr(miri, ignore)]
fn a_call_waits_for_at_most_one_budget_while_a_million_timers_expire() {
    // A round in which no request came while the expiry was under way shows nothing (the
    // callers were descheduled throughout): try again, a few times at most.
    for _ in 0..3 {
        let waits = round();
        for &(before, after) in &waits {
            assert!(
                after - before <= K,
                "a call waited while {} timers expired (budget {K})",
                after - before
            );
        }
        if waits.iter().any(|&(before, _)| before > 0 && before < N) {
            return;
        }
    }
    panic!("in three rounds no call asked for the lock while the expiry was under way");
}
