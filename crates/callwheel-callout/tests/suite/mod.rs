//! The callout suite: every test here runs on every backing scheme (see `backings.rs`).
//!
//! Each test is a generic function over a constructor; `callout_suite!` instantiates them all
//! for one scheme.

pub mod oracle;

use callwheel::time::Sbt;
use callwheel_callout::flags::{c_prel, C_ABSOLUTE, C_DIRECT_EXEC};
use callwheel_callout::{Backing, Callouts, Config, Error, Handle};
use oracle::{action, Action, Model, Op};
use proptest::prelude::*;
use proptest::test_runner::{Config as PropConfig, TestRunner};

pub type Make<S> = fn() -> S;

fn table<S: Backing>(make: Make<S>, config: Config) -> Callouts<S, u8> {
    Callouts::with_config(make(), config).unwrap()
}

fn plain<S: Backing>(make: Make<S>) -> Callouts<S, u8> {
    table(make, Config::default())
}

/// Runs `hardclock` then `softclock` `n` times, logging (tick, key) of every handler.
fn run_ticks<S: Backing>(t: &mut Callouts<S, u8>, n: u64, log: &mut Vec<(u64, u8)>) {
    for _ in 0..n {
        t.hardclock();
        t.softclock(|t, k| log.push((t.ticks(), k)));
        t.check_invariants().unwrap();
    }
}

pub fn fires_at_its_tick_in_set_order<S: Backing>(make: Make<S>) {
    let mut t = plain(make);
    t.timeout(1, 5).unwrap();
    t.timeout(2, 3).unwrap();
    t.setcallout(3, 5).unwrap();
    t.timeout(4, 5).unwrap();
    t.timeout(5, 1).unwrap();
    let mut log = Vec::new();
    run_ticks(&mut t, 6, &mut log);
    assert_eq!(log, [(1, 5), (3, 2), (5, 1), (5, 3), (5, 4)]);
    assert_eq!(t.pending(), 0);
    assert_eq!(t.records_in_use(), 0);
}

pub fn zero_and_negative_ticks_mean_one<S: Backing>(make: Make<S>) {
    let mut t = plain(make);
    run_ticks(&mut t, 3, &mut Vec::new());
    t.timeout(1, 0).unwrap();
    t.timeout(2, -5).unwrap();
    t.setcallout(3, i64::MIN).unwrap();
    let mut log = Vec::new();
    t.softclock(|t, k| log.push((t.ticks(), k)));
    assert!(log.is_empty(), "nothing may run before the next tick");
    run_ticks(&mut t, 1, &mut log);
    assert_eq!(log, [(4, 1), (4, 2), (4, 3)]);
}

/// Through the hash, `untimeout` cancels the match set first; on the old `calltodo` it is
/// 4.4BSD's walk from the head, which stops at the match due first.
pub fn untimeout_cancels_the_oldest_match_or_the_first_on_calltodo<S: Backing>(make: Make<S>) {
    let mut t = plain(make);
    t.timeout(7, 10).unwrap();
    t.timeout(7, 2).unwrap();
    t.timeout(8, 4).unwrap();
    assert!(!t.untimeout(9), "never set");
    assert!(t.untimeout(7));
    let mut log = Vec::new();
    run_ticks(&mut t, 12, &mut log);
    if S::SEARCHED_BY_UNTIMEOUT {
        assert_eq!(log, [(4, 8), (10, 7)], "cancelled the one due first (at 2)");
    } else {
        assert_eq!(
            log,
            [(2, 7), (4, 8)],
            "cancelled the one set first (due at 10)"
        );
    }
    assert!(!t.untimeout(7), "already ran");
    t.check_invariants().unwrap();
}

pub fn handles_cancel_exactly_their_callout<S: Backing>(make: Make<S>) {
    let mut t = plain(make);
    let a = t.setcallout(1, 3).unwrap();
    let b = t.setcallout(1, 3).unwrap();
    assert_ne!(a, b);
    assert_eq!(t.unsetcallout(a), Ok(true));
    assert_eq!(
        t.unsetcallout(a),
        Err(Error::StaleHandle),
        "cancelled twice"
    );
    // The freed record is reused by the next callout; the old handle must not reach it.
    let c = t.setcallout(2, 3).unwrap();
    assert_eq!(
        c.index(),
        a.index(),
        "the pool reuses the freed record first"
    );
    assert_ne!(c.generation(), a.generation());
    assert_eq!(t.unsetcallout(a), Err(Error::StaleHandle));
    let mut log = Vec::new();
    run_ticks(&mut t, 3, &mut log);
    assert_eq!(log, [(3, 1), (3, 2)]);
    assert_eq!(t.unsetcallout(b), Err(Error::StaleHandle), "already ran");
    assert_eq!(
        // Forged with this table's identity: only the index and generation can reject them.
        t.unsetcallout(Handle::from_parts(u64::MAX, a.owner())),
        Err(Error::StaleHandle)
    );
    assert_eq!(
        t.unsetcallout(Handle::from_parts(5 | 9 << 32, a.owner())),
        Err(Error::StaleHandle)
    );
    let p = t.callout_init().unwrap();
    assert_eq!(t.unsetcallout(p), Err(Error::WrongKind));
    assert_eq!(t.callout_stop(c), Err(Error::StaleHandle));
    let d = t.setcallout(3, 3).unwrap();
    assert_eq!(t.callout_stop(d), Err(Error::WrongKind));
    assert_eq!(
        t.callout_pending(p),
        Ok(false),
        "wrong-kind calls changed nothing"
    );
    assert_eq!(t.unsetcallout(d), Ok(true));
    t.check_invariants().unwrap();
}

pub fn fixed_pool_exhausts_cleanly<S: Backing>(make: Make<S>) {
    let config = Config {
        calloutsize: 3,
        fixed: true,
        ..Config::default()
    };
    let mut t = table(make, config);
    t.timeout(1, 5).unwrap();
    let h = t.setcallout(2, 5).unwrap();
    let p = t.callout_init().unwrap();
    let full = Error::PoolExhausted { calloutsize: 3 };
    assert_eq!(t.timeout(4, 5), Err(full));
    assert_eq!(t.setcallout(4, 5), Err(full));
    assert_eq!(t.callout_init(), Err(full));
    assert_eq!(t.records_allocated(), 3);
    t.check_invariants().unwrap();
    // A persistent record is already allocated: arming it needs no new record.
    assert_eq!(t.callout_reset(p, 2, 3), Ok(false));
    assert_eq!(t.unsetcallout(h), Ok(true));
    t.timeout(5, 1).unwrap();
    let mut log = Vec::new();
    run_ticks(&mut t, 5, &mut log);
    assert_eq!(log, [(1, 5), (2, 3), (5, 1)]);
    assert_eq!(t.records_in_use(), 1, "the persistent record stays");
}

pub fn growing_pool_grows<S: Backing>(make: Make<S>) {
    let config = Config {
        calloutsize: 2,
        ..Config::default()
    };
    let mut t = table(make, config);
    for k in 0..100u8 {
        t.timeout(k, 1 + i64::from(k % 7)).unwrap();
    }
    assert!(t.records_allocated() >= 100);
    t.check_invariants().unwrap();
    let mut log = Vec::new();
    run_ticks(&mut t, 7, &mut log);
    assert_eq!(log.len(), 100);
}

pub fn handler_cancels_the_next_due<S: Backing>(make: Make<S>) {
    let mut t = plain(make);
    // Four callouts due at tick 2; the first cancels the second by hash, the third cancels
    // the fourth by handle: neither may run, though both were due in the same tick.
    t.timeout(10, 2).unwrap();
    t.timeout(11, 2).unwrap();
    t.timeout(12, 2).unwrap();
    let fourth = t.setcallout(13, 2).unwrap();
    let mut log = Vec::new();
    for _ in 0..3 {
        t.hardclock();
        t.softclock(|t, k| {
            log.push(k);
            match k {
                10 => assert!(t.untimeout(11)),
                12 => assert_eq!(t.unsetcallout(fourth), Ok(true)),
                _ => {}
            }
        });
        t.check_invariants().unwrap();
    }
    assert_eq!(log, [10, 12]);
}

pub fn handler_rearming_runs_next_tick<S: Backing>(make: Make<S>) {
    let mut t = plain(make);
    t.timeout(1, 1).unwrap();
    let mut log = Vec::new();
    for _ in 0..4 {
        t.hardclock();
        t.softclock(|t, k| {
            log.push((t.ticks(), k));
            t.timeout(k, 0).unwrap();
        });
    }
    assert_eq!(log, [(1, 1), (2, 1), (3, 1), (4, 1)]);
}

pub fn hardclock_fast_path_never_hides_work<S: Backing>(make: Make<S>) {
    let mut t = plain(make);
    let mut log = Vec::new();
    // Idle: every hardclock takes the fast path.
    for _ in 0..10 {
        assert!(!t.hardclock());
        assert_eq!(t.softticks(), t.ticks());
    }
    assert_eq!(t.stats().fast_path, 10);
    t.timeout(1, 5).unwrap();
    for _ in 0..5 {
        if t.hardclock() {
            t.softclock(|t, k| log.push((t.ticks(), k)));
        } else {
            assert!(log.is_empty());
        }
    }
    assert_eq!(log, [(15, 1)]);
    // A softclock that fell behind is caught up in one call.
    t.timeout(2, 1).unwrap();
    t.timeout(3, 3).unwrap();
    for _ in 0..4 {
        t.hardclock();
    }
    assert!(t.softticks() < t.ticks());
    t.softclock(|t, k| log.push((t.ticks(), k)));
    assert_eq!(t.softticks(), t.ticks());
    assert_eq!(log, [(15, 1), (19, 2), (19, 3)]);
}

pub fn tiny_softclock_budget_yields_and_finishes<S: Backing>(make: Make<S>) {
    let config = Config {
        max_softclock_steps: 1,
        ..Config::default()
    };
    let mut t = table(make, config);
    for k in 0..50u8 {
        t.timeout(k, 1 + i64::from(k % 10) * 50).unwrap();
    }
    for _ in 0..500 {
        t.hardclock();
    }
    let mut log = Vec::new();
    let ran = t.softclock(|_, k| log.push(k));
    assert_eq!(ran, 50);
    assert!(
        t.stats().yields > 0,
        "a one-step budget over 500 ticks must yield"
    );
    let mut expected: Vec<u8> = (0..50).collect();
    expected.sort_by_key(|k| (k % 10, *k));
    assert_eq!(log, expected);
    t.check_invariants().unwrap();
}

pub fn freebsd_flags_and_reset<S: Backing>(make: Make<S>) {
    let mut t = plain(make);
    let c = t.callout_init().unwrap();
    assert_eq!(t.callout_pending(c), Ok(false));
    assert_eq!(t.callout_active(c), Ok(false));
    assert_eq!(t.callout_reset(c, 5, 1), Ok(false));
    assert_eq!(
        (t.callout_pending(c), t.callout_active(c)),
        (Ok(true), Ok(true))
    );
    assert_eq!(t.callout_reset(c, 3, 2), Ok(true), "was pending");
    let mut log = Vec::new();
    let mut seen = Vec::new();
    for _ in 0..6 {
        t.hardclock();
        t.softclock(|t, k| {
            log.push((t.ticks(), k));
            // Inside the handler: no longer pending, still active until deactivated.
            seen.push((t.callout_pending(c), t.callout_active(c)));
            t.callout_deactivate(c).unwrap();
        });
    }
    assert_eq!(log, [(3, 2)], "the reset replaced the first arming");
    assert_eq!(seen, [(Ok(false), Ok(true))]);
    assert_eq!(t.callout_active(c), Ok(false));
    // The handle outlives its firings.
    assert_eq!(t.callout_reset(c, 1, 3), Ok(false));
    assert_eq!(t.callout_stop(c), Ok(true));
    assert_eq!(
        (t.callout_pending(c), t.callout_active(c)),
        (Ok(false), Ok(false))
    );
    assert_eq!(t.callout_stop(c), Ok(false), "stopping an idle callout");
    assert_eq!(t.callout_drain(c), Ok(false));
    t.callout_free(c).unwrap();
    assert_eq!(t.callout_reset(c, 1, 3), Err(Error::StaleHandle));
    assert_eq!(t.callout_free(c), Err(Error::StaleHandle));
    t.check_invariants().unwrap();
}

pub fn drain_and_free_from_own_handler_are_refused<S: Backing>(make: Make<S>) {
    let mut t = plain(make);
    let c = t.callout_init().unwrap();
    t.callout_reset(c, 1, 1).unwrap();
    let mut results = Vec::new();
    t.hardclock();
    t.softclock(|t, _| {
        results.push(t.callout_drain(c));
        results.push(t.callout_free(c).map(|()| false));
        // Re-arming itself from its handler is allowed.
        results.push(t.callout_reset(c, 1, 2));
    });
    assert_eq!(
        results,
        [Err(Error::WouldDeadlock), Err(Error::Busy), Ok(false)]
    );
    assert_eq!(t.callout_pending(c), Ok(true));
    assert_eq!(
        t.callout_drain(c),
        Ok(true),
        "outside the handler drain stops it"
    );
    t.callout_free(c).unwrap();
    t.check_invariants().unwrap();
}

pub fn reset_sbt_converts_time_and_flags<S: Backing>(make: Make<S>) {
    // 1000 Hz: a tick is a millisecond.
    let mut t = plain(make);
    let c = t.callout_init().unwrap();
    let ms = Sbt::MILLISECOND;
    run_ticks(&mut t, 10, &mut Vec::new());
    // Relative 2.5 ms rounds up to 3 ticks.
    let rel = ms.saturating_mul(5).checked_div(2).unwrap();
    assert_eq!(
        t.callout_reset_sbt_on(c, rel, Sbt::ZERO, 1, -1, 0),
        Ok(false)
    );
    let mut log = Vec::new();
    run_ticks(&mut t, 5, &mut log);
    assert_eq!(log, [(13, 1)]);
    // Absolute 20 ms: tick 20. With C_PREL(1) the tolerance is half the interval, which only
    // a coalescing scheme uses; the callout still never runs early.
    t.callout_reset_sbt_on(
        c,
        ms.saturating_mul(20),
        Sbt::ZERO,
        2,
        0,
        C_ABSOLUTE | c_prel(1),
    )
    .unwrap();
    // An absolute time already passed means the next tick.
    let d = t.callout_init().unwrap();
    t.callout_reset_sbt_on(d, ms, Sbt::ZERO, 3, 0, C_ABSOLUTE)
        .unwrap();
    run_ticks(&mut t, 1, &mut log);
    assert_eq!(log, [(13, 1), (16, 3)]);
    run_ticks(&mut t, 10, &mut log);
    assert!(log[2].0 >= 20 && log[2].1 == 2, "{log:?}");
    // Bad arguments change nothing.
    assert_eq!(
        t.callout_reset_sbt_on(c, ms, Sbt::ZERO, 4, 1, 0),
        Err(Error::InvalidCpu(1))
    );
    assert_eq!(
        t.callout_reset_sbt_on(c, ms, Sbt::ZERO, 4, 0, 0x8000_0000),
        Err(Error::InvalidFlags(0x8000_0000))
    );
    assert_eq!(t.callout_pending(c), Ok(false));
    // Negative relative times mean the next tick.
    t.callout_reset_sbt_on(c, Sbt::from_secs(-3), Sbt::from_secs(-1), 5, 0, 0)
        .unwrap();
    let before = log.len();
    run_ticks(&mut t, 1, &mut log);
    assert_eq!(&log[before..], [(t.ticks(), 5)]);
    t.check_invariants().unwrap();
}

pub fn direct_exec_runs_from_hardclock<S: Backing>(make: Make<S>) {
    let mut t = plain(make);
    let c = t.callout_init().unwrap();
    let d = t.callout_init().unwrap();
    t.callout_reset(d, 2, 20).unwrap();
    t.callout_reset_sbt_on(
        c,
        Sbt::MILLISECOND.saturating_mul(2),
        Sbt::ZERO,
        10,
        0,
        C_DIRECT_EXEC,
    )
    .unwrap();
    let mut direct = Vec::new();
    let mut soft = Vec::new();
    for _ in 0..3 {
        t.hardclock_with(|t, k| direct.push((t.ticks(), k)));
        t.softclock(|t, k| soft.push((t.ticks(), k)));
    }
    assert_eq!(direct, [(2, 10)]);
    assert_eq!(soft, [(2, 20)]);
    assert_eq!(t.stats().direct, 1);
    // Without hardclock_with, a direct callout runs first thing in softclock.
    t.callout_reset_sbt_on(c, Sbt::MILLISECOND, Sbt::ZERO, 11, 0, C_DIRECT_EXEC)
        .unwrap();
    t.callout_reset(d, 1, 21).unwrap();
    t.hardclock();
    t.softclock(|t, k| soft.push((t.ticks(), k)));
    assert_eq!(soft, [(2, 20), (4, 11), (4, 21)]);
    // Stopping a direct callout removes it from the direct queue.
    t.callout_reset_sbt_on(c, Sbt::MILLISECOND, Sbt::ZERO, 12, 0, C_DIRECT_EXEC)
        .unwrap();
    assert_eq!(t.callout_stop(c), Ok(true));
    t.hardclock_with(|_, k| direct.push((0, k)));
    assert_eq!(direct.len(), 1);
    t.check_invariants().unwrap();
}

pub fn bad_config_is_refused<S: Backing>(make: Make<S>) {
    let bad = [
        Config {
            hz: 0,
            ..Config::default()
        },
        Config {
            max_softclock_steps: 0,
            ..Config::default()
        },
        Config {
            calloutsize: 0,
            fixed: true,
            ..Config::default()
        },
    ];
    for config in bad {
        assert!(matches!(
            Callouts::<S, u8>::with_config(make(), config),
            Err(Error::Config { .. })
        ));
    }
}

/// Random operations, handlers that cancel and set callouts, and a softclock budget of
/// `steps`: the table must do exactly what the model does.
pub fn matches_the_model<S: Backing>(make: Make<S>, steps: u64) {
    let cases = std::env::var("CALLWHEEL_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64);
    let mut runner = TestRunner::new(PropConfig {
        cases,
        failure_persistence: None,
        ..PropConfig::default()
    });
    runner
        .run(&proptest::collection::vec(oracle::op(), 1..120), |ops| {
            let config = Config {
                max_softclock_steps: steps,
                calloutsize: 4,
                ..Config::default()
            };
            let mut t = table(make, config);
            let mut m = Model::default();
            m.first_due = S::SEARCHED_BY_UNTIMEOUT;
            let mut handles: Vec<Handle> = Vec::new();
            let (mut log, mut want) = (Vec::new(), Vec::new());
            for op in ops {
                match op {
                    Op::Timeout(k, n) => {
                        t.timeout(k, n).unwrap();
                        m.timeout(k, n);
                    }
                    Op::Untimeout(k) => prop_assert_eq!(t.untimeout(k), m.untimeout(k)),
                    Op::Set(k, n) => {
                        handles.push(t.setcallout(k, n).unwrap());
                        m.set(k, n);
                    }
                    Op::Unset(back) => {
                        prop_assert_eq!(t.unsetcallout(oracle::pick(&handles, back)), m.unset(back))
                    }
                    Op::Hardclock(n) => {
                        for _ in 0..n {
                            let needed = t.hardclock();
                            m.ticks += 1;
                            prop_assert!(needed || !m.due(), "hardclock hid due work");
                        }
                    }
                    Op::Softclock => {
                        t.softclock(|t, k| {
                            log.push((t.ticks(), k));
                            match action(k) {
                                Action::CancelNext => {
                                    t.untimeout(k.wrapping_add(1));
                                }
                                Action::Rearm => t.timeout(k, 1 + i64::from(k % 3)).unwrap(),
                                Action::UnsetNewest => {
                                    let _ = t.unsetcallout(oracle::pick(&handles, 0));
                                }
                                Action::SetNext => {
                                    handles.push(t.setcallout(k.wrapping_add(1), 0).unwrap())
                                }
                                Action::Nothing => {}
                            }
                        });
                        m.softclock(&mut want);
                        prop_assert_eq!(&log, &want);
                    }
                }
                prop_assert_eq!(t.pending(), m.len());
                prop_assert_eq!(t.check_invariants(), Ok(()));
            }
            Ok(())
        })
        .unwrap();
}

/// Instantiates the suite for one backing scheme.
#[macro_export]
macro_rules! callout_suite {
    ($name:ident, $make:expr) => {
        mod $name {
            use super::*;

            #[test]
            fn fires_at_its_tick_in_set_order() {
                suite::fires_at_its_tick_in_set_order($make);
            }
            #[test]
            fn zero_and_negative_ticks_mean_one() {
                suite::zero_and_negative_ticks_mean_one($make);
            }
            #[test]
            fn untimeout_cancels_the_oldest_match_or_the_first_on_calltodo() {
                suite::untimeout_cancels_the_oldest_match_or_the_first_on_calltodo($make);
            }
            #[test]
            fn handles_cancel_exactly_their_callout() {
                suite::handles_cancel_exactly_their_callout($make);
            }
            #[test]
            fn fixed_pool_exhausts_cleanly() {
                suite::fixed_pool_exhausts_cleanly($make);
            }
            #[test]
            fn growing_pool_grows() {
                suite::growing_pool_grows($make);
            }
            #[test]
            fn handler_cancels_the_next_due() {
                suite::handler_cancels_the_next_due($make);
            }
            #[test]
            fn handler_rearming_runs_next_tick() {
                suite::handler_rearming_runs_next_tick($make);
            }
            #[test]
            fn hardclock_fast_path_never_hides_work() {
                suite::hardclock_fast_path_never_hides_work($make);
            }
            #[test]
            fn tiny_softclock_budget_yields_and_finishes() {
                suite::tiny_softclock_budget_yields_and_finishes($make);
            }
            #[test]
            fn freebsd_flags_and_reset() {
                suite::freebsd_flags_and_reset($make);
            }
            #[test]
            fn drain_and_free_from_own_handler_are_refused() {
                suite::drain_and_free_from_own_handler_are_refused($make);
            }
            #[test]
            fn reset_sbt_converts_time_and_flags() {
                suite::reset_sbt_converts_time_and_flags($make);
            }
            #[test]
            fn direct_exec_runs_from_hardclock() {
                suite::direct_exec_runs_from_hardclock($make);
            }
            #[test]
            fn bad_config_is_refused() {
                suite::bad_config_is_refused($make);
            }
            #[test]
            fn matches_the_model_unbudgeted() {
                suite::matches_the_model($make, u64::MAX);
            }
            #[test]
            fn matches_the_model_with_one_step_softclock() {
                suite::matches_the_model($make, 1);
            }
            #[test]
            fn matches_the_model_with_three_step_softclock() {
                suite::matches_the_model($make, 3);
            }
        }
    };
}
