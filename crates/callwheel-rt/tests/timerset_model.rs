//! Timer sets against an oracle: random sequences of create, reset, cancel, get, reap, policy
//! changes and clock moves on two sets sharing the manual clock, each call compared with a plain
//! model of the timers, the expired queue and the clock (a map, a deque and a number), with both
//! sets' invariants and counts checked after every step. Handles are drawn from both sets and
//! from forgeries, so the test also checks isolation: a handle of the other set is rejected and
//! changes nothing.
#![cfg(not(miri))]

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::time::Duration;

use callwheel_rt::{
    Error, ManualClock, Missed, Runtime, TimerHandle, TimerSet, TimerSetConfig, TimerValue,
    Tolerance,
};
use proptest::prelude::*;

/// Model time unit: 1 µs keeps the numbers small and the equal deadlines frequent.
const UNIT: u64 = 1_000;
const START: u64 = 1_000_000_000;
const QUOTA: usize = 6;

#[derive(Clone, Debug)]
enum Op {
    Create {
        value: u64,
        interval: u64,
        label: u64,
    },
    Reset {
        which: usize,
        value: u64,
        interval: u64,
        label: u64,
    },
    Cancel {
        which: usize,
    },
    Get {
        which: usize,
    },
    SetMissed {
        which: usize,
        policy: Missed,
    },
    Reap,
    Advance {
        by: u64,
    },
}

fn policy() -> impl Strategy<Value = Missed> {
    prop_oneof![Just(Missed::Burst), Just(Missed::Delay), Just(Missed::Skip)]
}

fn op() -> impl Strategy<Value = Op> {
    // Values from 0 (an error) to 40 units; intervals 0 (one-shot) or up to 15.
    let value = 0u64..40;
    let interval = prop_oneof![Just(0u64), 1u64..15];
    prop_oneof![
        3 => (value.clone(), interval.clone(), 0u64..1_000)
            .prop_map(|(value, interval, label)| Op::Create { value, interval, label }),
        2 => (any::<usize>(), value, interval, 0u64..1_000).prop_map(
            |(which, value, interval, label)| Op::Reset { which, value, interval, label }
        ),
        1 => any::<usize>().prop_map(|which| Op::Cancel { which }),
        1 => any::<usize>().prop_map(|which| Op::Get { which }),
        1 => (any::<usize>(), policy()).prop_map(|(which, policy)| Op::SetMissed { which, policy }),
        3 => Just(Op::Reap),
        3 => (0u64..30).prop_map(|by| Op::Advance { by }),
    ]
}

#[derive(Clone, Debug)]
struct Timer {
    deadline: u64,
    interval: u64,
    label: u64,
    policy: Missed,
    queued: bool,
    /// Start order, for equal deadlines.
    seq: u64,
}

#[derive(Debug)]
struct Model {
    now: u64,
    timers: BTreeMap<u64, Timer>,
    queue: VecDeque<u64>,
    seq: u64,
    policy: Missed,
}

impl Model {
    /// Queues every running timer that is due, by deadline then start order.
    fn catch_up(&mut self) {
        let mut due: Vec<(u64, u64, u64)> = self
            .timers
            .iter()
            .filter(|(_, t)| !t.queued && t.deadline <= self.now)
            .map(|(&h, t)| (t.deadline, t.seq, h))
            .collect();
        due.sort_unstable();
        for (_, _, h) in due {
            self.timers.get_mut(&h).unwrap().queued = true;
            self.queue.push_back(h);
        }
    }

    fn value(&self, h: u64) -> TimerValue {
        let t = &self.timers[&h];
        let remaining = if t.queued { 0 } else { t.deadline - self.now };
        TimerValue {
            remaining: Duration::from_nanos(remaining),
            interval: Duration::from_nanos(t.interval),
        }
    }

    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    fn unqueue(&mut self, h: u64) {
        if self.timers[&h].queued {
            self.queue.retain(|&q| q != h);
        }
    }
}

fn invalid<T: std::fmt::Debug>(r: &Result<T, Error>) -> bool {
    matches!(r, Err(Error::InvalidHandle))
}

/// Runs `ops` on two sets sharing one clock; each op names its set, and handles are drawn from
/// a pool holding both sets' handles, so half the handles presented belong to the other set.
fn run(ops: Vec<(usize, Op)>, default_policy: Missed) -> Result<(), TestCaseError> {
    let clock = ManualClock::new(START);
    let rt = Runtime::builder()
        .clock(clock.clone())
        .shards(1)
        .workers(1)
        .build()
        .unwrap();
    // The second set coalesces its wake-ups; tolerance changes when the set's runtime timer
    // fires, never what a call sees.
    let sets: Vec<TimerSet> = [None, Some(Tolerance::percent(50))]
        .into_iter()
        .map(|tolerance| {
            TimerSet::with_config(
                &rt,
                TimerSetConfig::default()
                    .with_quota(QUOTA)
                    .with_tolerance(tolerance)
                    .with_missed(default_policy),
            )
            .unwrap()
        })
        .collect();
    let mut models: Vec<Model> = (0..2)
        .map(|_| Model {
            now: START,
            timers: BTreeMap::new(),
            queue: VecDeque::new(),
            seq: 0,
            policy: default_policy,
        })
        .collect();
    // Every handle ever issued, plus forgeries; ops pick from it.
    let mut known: Vec<u64> = vec![0, u64::MAX, 1, 1 << 40];
    let mut issued = HashSet::new();
    let mut advances = 0u64;
    for (which_set, op) in ops {
        for m in &mut models {
            m.catch_up();
        }
        let set = &sets[which_set];
        let m = &mut models[which_set];
        match op {
            Op::Create {
                value,
                interval,
                label,
            } => {
                let got = set.create(
                    Duration::from_nanos(value * UNIT),
                    Duration::from_nanos(interval * UNIT),
                    label,
                );
                if value == 0 {
                    prop_assert!(matches!(got, Err(Error::ZeroValue)), "{got:?}");
                } else if m.timers.len() >= QUOTA {
                    prop_assert!(matches!(got, Err(Error::QuotaExceeded { .. })), "{got:?}");
                } else {
                    let h = got.unwrap().to_bits();
                    prop_assert!(issued.insert(h), "handle {h:#x} issued twice");
                    known.push(h);
                    let seq = m.next_seq();
                    m.timers.insert(
                        h,
                        Timer {
                            deadline: m.now + value * UNIT,
                            interval: interval * UNIT,
                            label,
                            policy: m.policy,
                            queued: false,
                            seq,
                        },
                    );
                }
            }
            Op::Reset {
                which,
                value,
                interval,
                label,
            } => {
                let h = known[which % known.len()];
                let got = set.reset(
                    TimerHandle::from_bits(h),
                    Duration::from_nanos(value * UNIT),
                    Duration::from_nanos(interval * UNIT),
                    label,
                );
                if !m.timers.contains_key(&h) {
                    prop_assert!(invalid(&got), "{got:?}");
                } else if value == 0 {
                    prop_assert!(matches!(got, Err(Error::ZeroValue)), "{got:?}");
                } else {
                    prop_assert_eq!(got.unwrap(), m.value(h));
                    m.unqueue(h);
                    let (now, seq) = (m.now, m.next_seq());
                    let t = m.timers.get_mut(&h).unwrap();
                    t.deadline = now + value * UNIT;
                    t.interval = interval * UNIT;
                    t.label = label;
                    t.queued = false;
                    t.seq = seq;
                }
            }
            Op::Cancel { which } => {
                let h = known[which % known.len()];
                let got = set.cancel(TimerHandle::from_bits(h));
                if m.timers.contains_key(&h) {
                    prop_assert_eq!(got.unwrap(), m.value(h));
                    m.unqueue(h);
                    m.timers.remove(&h);
                } else {
                    prop_assert!(invalid(&got), "{got:?}");
                }
            }
            Op::Get { which } => {
                let h = known[which % known.len()];
                let got = set.get(TimerHandle::from_bits(h));
                if m.timers.contains_key(&h) {
                    prop_assert_eq!(got.unwrap(), m.value(h));
                } else {
                    prop_assert!(invalid(&got), "{got:?}");
                }
            }
            Op::SetMissed { which, policy } => {
                let h = known[which % known.len()];
                let got = set.set_missed(TimerHandle::from_bits(h), policy);
                match m.timers.get_mut(&h) {
                    Some(t) => {
                        prop_assert!(got.is_ok());
                        t.policy = policy;
                    }
                    None => prop_assert!(invalid(&got), "{got:?}"),
                }
            }
            Op::Reap => {
                let got = set.reap_info();
                match m.queue.pop_front() {
                    None => prop_assert_eq!(got, None),
                    Some(h) => {
                        let got = got.expect("the model has a queued timer");
                        let now = m.now;
                        let seq = m.next_seq();
                        let t = m.timers.get_mut(&h).unwrap();
                        prop_assert_eq!(got.handle.to_bits(), h);
                        prop_assert_eq!(got.label, t.label);
                        prop_assert_eq!(got.deadline, t.deadline);
                        if t.interval == 0 {
                            prop_assert_eq!(got.overruns, 0);
                            m.timers.remove(&h);
                        } else {
                            let (d, p) = (t.deadline, t.interval);
                            let k = (now - d) / p;
                            prop_assert_eq!(got.overruns, k);
                            t.deadline = match (k, t.policy) {
                                (0, _) | (_, Missed::Burst) => d + p,
                                (_, Missed::Delay) => now + p,
                                (_, Missed::Skip) => d + (k + 1) * p,
                            };
                            t.queued = false;
                            t.seq = seq;
                            if t.deadline <= now {
                                t.queued = true;
                                m.queue.push_back(h);
                            }
                        }
                    }
                }
            }
            Op::Advance { by } => {
                clock.advance(by * UNIT);
                advances += u64::from(by > 0);
                for m in &mut models {
                    m.now += by * UNIT;
                }
            }
        }
        // Both sets, not only the one called: a call on one never changes the other.
        for (set, m) in sets.iter().zip(&mut models) {
            m.catch_up();
            let stats = set.stats();
            prop_assert_eq!(stats.queued, m.queue.len());
            prop_assert_eq!(stats.running + stats.queued, m.timers.len());
            prop_assert_eq!(set.check_invariants(), Ok(()));
        }
    }
    // Each set arms its runtime timer after the clock and re-arms it after the clock once it
    // fires, so it fires at most once per clock move: more means a driver spinning on a set.
    let fired = rt.stats()[0].fired;
    prop_assert!(
        fired <= 2 * advances,
        "{fired} runtime firings for {advances} clock moves"
    );
    // Drain: every queued timer comes out in the model's order.
    for (set, m) in sets.iter().zip(&mut models) {
        m.catch_up();
        while let Some(h) = m.queue.pop_front() {
            let got = set.reap_info().expect("queued in the model");
            prop_assert_eq!(got.handle.to_bits(), h);
            if m.timers[&h].interval == 0 {
                m.timers.remove(&h);
            } else {
                // Restarted; taken out of the comparison.
                prop_assert!(set.cancel(got.handle).is_ok());
                m.timers.remove(&h);
            }
        }
        prop_assert_eq!(set.reap(), None);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn two_timer_sets_behave_like_their_models_and_never_touch_each_other(
        ops in proptest::collection::vec((0usize..2, op()), 1..100),
        default_policy in policy(),
    ) {
        run(ops, default_policy)?;
    }
}
