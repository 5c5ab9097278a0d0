//! Threads creating, resetting, cancelling and reaping on several timer sets on the real
//! monotonic clock, with reaper threads waiting on each set: every one-shot arming ends exactly
//! once (reaped, or removed by a successful cancel or reset), nothing is lost, no set returns
//! another set's timer, and the sets' counters agree with what the threads saw.
#![cfg(not(miri))]

mod common;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use callwheel_rt::{Error, Runtime, TimerHandle, TimerSet, TimerSetConfig, Tolerance};
use common::Lcg;

const SETS: usize = 3;
const WORKERS: usize = 4;
const OPS_PER_WORKER: usize = 10_000;
const PERIODIC_PER_WORKER: usize = 4;
/// Label bits: the set index above, a unique arming number below.
const SET_SHIFT: u32 = 48;
const MAX_ARMINGS: usize = WORKERS * (OPS_PER_WORKER + PERIODIC_PER_WORKER) + 16;

/// What happened to every arming (label), shared by all threads.
struct Ledger {
    next: AtomicU64,
    /// One-shot armings: 1 once made.
    one_shot: Vec<AtomicU32>,
    /// Reaps seen per arming.
    reaped: Vec<AtomicU32>,
    /// Successful cancels or resets that removed the arming before it was reaped.
    removed: Vec<AtomicU32>,
    /// Reaps per set.
    reaps_per_set: Vec<AtomicU64>,
    /// A set returned a label of another set, or an unknown one.
    foreign: AtomicU64,
}

impl Ledger {
    fn new() -> Ledger {
        let v = || (0..MAX_ARMINGS).map(|_| AtomicU32::new(0)).collect();
        Ledger {
            next: AtomicU64::new(0),
            one_shot: v(),
            reaped: v(),
            removed: v(),
            reaps_per_set: (0..SETS).map(|_| AtomicU64::new(0)).collect(),
            foreign: AtomicU64::new(0),
        }
    }

    fn label(&self, set: usize, one_shot: bool) -> u64 {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        if one_shot {
            self.one_shot[n as usize].store(1, Ordering::Relaxed);
        }
        ((set as u64) << SET_SHIFT) | n
    }

    fn arming(label: u64) -> usize {
        (label & ((1 << SET_SHIFT) - 1)) as usize
    }

    fn record_reap(&self, set: usize, label: u64) {
        self.reaps_per_set[set].fetch_add(1, Ordering::Relaxed);
        let n = Ledger::arming(label);
        if (label >> SET_SHIFT) as usize != set || n >= self.next.load(Ordering::Relaxed) as usize {
            self.foreign.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.reaped[n].fetch_add(1, Ordering::Relaxed);
    }

    fn record_removed(&self, label: u64) {
        self.removed[Ledger::arming(label)].fetch_add(1, Ordering::Relaxed);
    }
}

fn reap_all(sets: &[TimerSet], s: usize, ledger: &Ledger) {
    while let Some((_, label)) = sets[s].reap() {
        ledger.record_reap(s, label);
    }
}

fn worker(w: usize, sets: &[TimerSet], ledger: &Ledger) {
    let mut rng = Lcg(w as u64 * 7 + 3);
    // (set, handle, label) of this worker's one-shot armings that may still be live.
    let mut mine: Vec<(usize, TimerHandle, u64)> = Vec::new();
    let mut periodic = Vec::new();
    for i in 0..PERIODIC_PER_WORKER {
        let s = i % SETS;
        let label = ledger.label(s, false);
        let period = Duration::from_micros(300 + rng.below(700));
        let h = sets[s].create(period, period, label).unwrap();
        periodic.push((s, h));
    }
    for _ in 0..OPS_PER_WORKER {
        let s = rng.below(SETS as u64) as usize;
        match rng.below(10) {
            0..=4 => {
                let label = ledger.label(s, true);
                let value = Duration::from_micros(1 + rng.below(2_000));
                match sets[s].create(value, Duration::ZERO, label) {
                    Ok(h) => mine.push((s, h, label)),
                    // Cannot happen with these quotas; count it as removed so the ledger holds.
                    Err(Error::QuotaExceeded { .. }) => ledger.record_removed(label),
                    Err(e) => panic!("create: {e}"),
                }
            }
            5 | 6 if !mine.is_empty() => {
                let (s, h, label) = mine.swap_remove(rng.below(mine.len() as u64) as usize);
                let new = ledger.label(s, true);
                let value = Duration::from_micros(1 + rng.below(2_000));
                match sets[s].reset(h, value, Duration::ZERO, new) {
                    Ok(_) => {
                        ledger.record_removed(label);
                        mine.push((s, h, new));
                    }
                    // Reaped (and destroyed) by someone first: the new label never armed.
                    Err(Error::InvalidHandle) => ledger.record_removed(new),
                    Err(e) => panic!("reset: {e}"),
                }
            }
            7 if !mine.is_empty() => {
                let (s, h, label) = mine.swap_remove(rng.below(mine.len() as u64) as usize);
                match sets[s].cancel(h) {
                    Ok(_) => ledger.record_removed(label),
                    Err(Error::InvalidHandle) => {}
                    Err(e) => panic!("cancel: {e}"),
                }
            }
            8 if !mine.is_empty() => {
                // A handle presented to another set is rejected there.
                let (s, h, _) = mine[rng.below(mine.len() as u64) as usize];
                let other = (s + 1 + rng.below(SETS as u64 - 1) as usize) % SETS;
                assert!(matches!(sets[other].get(h), Err(Error::InvalidHandle)));
                assert!(matches!(sets[other].cancel(h), Err(Error::InvalidHandle)));
            }
            _ => reap_all(sets, s, ledger),
        }
        if rng.below(64) == 0 {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    for (s, h) in periodic {
        // A periodic timer is never destroyed by a reap: the cancel must find it.
        sets[s]
            .cancel(h)
            .expect("periodic timers live until cancelled");
    }
}

#[test]
fn concurrent_sets_reap_every_expiry_exactly_once_and_only_their_own() {
    let start = Instant::now();
    let rt = Runtime::builder()
        .shards(2)
        .tolerance(Tolerance::percent(5))
        .build()
        .unwrap();
    let sets: Arc<Vec<TimerSet>> = Arc::new(
        (0..SETS)
            .map(|_| {
                TimerSet::with_config(&rt, TimerSetConfig::default().with_quota(MAX_ARMINGS))
                    .unwrap()
            })
            .collect(),
    );
    let ledger = Arc::new(Ledger::new());
    let stop = Arc::new(AtomicBool::new(false));
    let reapers: Vec<_> = (0..SETS)
        .map(|s| {
            let (sets, ledger, stop) = (Arc::clone(&sets), Arc::clone(&ledger), Arc::clone(&stop));
            std::thread::spawn(move || {
                while !stop.load(Ordering::Acquire) {
                    if sets[s].wait(Some(Duration::from_millis(5))) {
                        reap_all(&sets, s, &ledger);
                    }
                }
            })
        })
        .collect();
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let (sets, ledger) = (Arc::clone(&sets), Arc::clone(&ledger));
            std::thread::spawn(move || worker(w, &sets, &ledger))
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    // Every remaining one-shot timer expires within about 2 ms; the reapers collect them.
    let patience = Instant::now() + Duration::from_secs(20);
    while sets.iter().any(|s| !s.is_empty()) {
        assert!(
            Instant::now() < patience,
            "timers never expired or never reaped"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    stop.store(true, Ordering::Release);
    for r in reapers {
        r.join().unwrap();
    }

    assert_eq!(ledger.foreign.load(Ordering::Relaxed), 0, "a foreign label");
    let armings = ledger.next.load(Ordering::Relaxed) as usize;
    let (mut reaped, mut removed) = (0, 0);
    for n in 0..armings {
        let r = ledger.reaped[n].load(Ordering::Relaxed);
        let x = ledger.removed[n].load(Ordering::Relaxed);
        if ledger.one_shot[n].load(Ordering::Relaxed) == 1 {
            assert_eq!(r + x, 1, "arming {n}: reaped {r} times, removed {x} times");
            reaped += r;
            removed += x;
        } else {
            assert_eq!(x, 0, "periodic arming {n} removed");
        }
    }
    for (s, set) in sets.iter().enumerate() {
        let st = set.stats();
        assert_eq!((st.running, st.queued), (0, 0));
        assert_eq!(st.reaped, ledger.reaps_per_set[s].load(Ordering::Relaxed));
        set.check_invariants().unwrap();
    }
    assert!(
        reaped > 1_000,
        "only {reaped} one-shot reaps ({removed} removed)"
    );
    eprintln!(
        "{armings} armings: {reaped} one-shot reaps, {removed} removed, {} reaps in all, {:?}",
        ledger
            .reaps_per_set
            .iter()
            .map(|a| a.load(Ordering::Relaxed))
            .sum::<u64>(),
        start.elapsed()
    );
}
