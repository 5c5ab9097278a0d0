//! Set keys are given back when a set is dropped and reused by later sets, above every handle
//! their earlier owners issued: a process that makes and drops sets without end never runs out
//! of keys, and a stale handle of a dropped set names nothing in a set that reuses its key. One
//! test in its own process, so no other test takes the keys it gives back.
#![cfg(not(miri))]

use std::collections::HashSet;
use std::time::Duration;

use callwheel_rt::{Error, ManualClock, Runtime, TimerHandle, TimerSet, TimerSetConfig};

fn set(rt: &Runtime, quota: usize) -> TimerSet {
    TimerSet::with_config(rt, TimerSetConfig::default().with_quota(quota)).unwrap()
}

fn key(h: TimerHandle) -> u64 {
    h.to_bits() >> 40
}

/// Creates `n` timers, cancelling every other one; returns every handle issued.
fn churn(s: &TimerSet, n: u64) -> Vec<TimerHandle> {
    (0..n)
        .map(|i| {
            let h = s.create(Duration::from_secs(1), Duration::ZERO, i).unwrap();
            if i % 2 == 0 {
                s.cancel(h).unwrap();
            }
            h
        })
        .collect()
}

#[test]
fn dropped_sets_give_their_keys_back_and_stale_handles_stay_stale() {
    let clock = ManualClock::new(1_000);
    let rt = Runtime::builder().clock(clock).shards(1).build().unwrap();
    let mut issued: HashSet<TimerHandle> = HashSet::new();
    let mut keys = HashSet::new();
    let mut stale: Vec<TimerHandle> = Vec::new();
    // Sets of different quotas (so different splits of the low 40 bits) reuse one key.
    for round in 0..20_000usize {
        let quota = [1, 2, 3, 64, 1 << 20][round % 5];
        let s = set(&rt, quota);
        let n = quota.min(6) as u64;
        let mine = churn(&s, n);
        // The handles of the key's earlier owners name none of this set's live timers.
        let live = s.len();
        for &h in stale.iter().rev().take(16) {
            assert!(matches!(s.cancel(h), Err(Error::InvalidHandle)), "{h:?}");
        }
        assert_eq!(s.len(), live);
        for h in mine {
            assert!(
                issued.insert(h),
                "handle {h:?} issued twice (round {round})"
            );
            keys.insert(key(h));
            stale.push(h);
        }
        drop(s);
    }
    // Without giving keys back, each set would have drawn its own: 2^24 - 2 sets would use up
    // the process's keys for good.
    assert!(keys.len() <= 2, "{} keys for 20 000 sets", keys.len());
}
