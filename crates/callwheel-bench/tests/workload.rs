//! The workloads' reference figures (W2's replayed expiry count, W5's greedy optimum) and the
//! workloads themselves at tiny sizes on the facility and the peers, through the library.

use callwheel::{stabbing_optimum, Wheel};
use callwheel_bench::peers::{BTreeMapPeer, DelayQueuePeer, HeapLazy};
use callwheel_bench::workload::{
    w2, w2_expected, w4, w5, w5_windows, W2Params, W4Params, W5Params,
};

#[test]
fn w2_replay_gives_the_documented_count() {
    // docs/workloads.md: 93 769 expiries for every exact structure with this seed.
    assert_eq!(w2_expected(100_000, 2_000_000), 93_769);
    // Nothing can expire before tick 200.
    assert_eq!(w2_expected(1_000, 20_000), 0);
}

#[test]
fn w5_tolerance_never_needs_more_wakeups_than_the_deadlines_alone() {
    let exact = stabbing_optimum(&w5_windows(2_000, 1_000_000, 0));
    let tolerant = stabbing_optimum(&w5_windows(2_000, 1_000_000, 5));
    assert!(tolerant <= exact && tolerant > 0, "{tolerant} {exact}");
}

#[test]
fn w2_on_the_peers_and_the_wheel_fires_the_replayed_count() {
    let p = W2Params {
        tolerance_percent: 0,
        n: 1_000,
        steps: 210_000,
        reps: 1,
    };
    let want = w2_expected(p.n, p.steps);
    assert!(want > 0);
    assert_eq!(w2(&p, || Ok(Wheel::new())).unwrap().expiries, want);
    assert_eq!(w2(&p, || Ok(HeapLazy::new())).unwrap().expiries, want);
    assert_eq!(w2(&p, || Ok(BTreeMapPeer::new())).unwrap().expiries, want);
}

#[test]
fn w4_fires_every_timer_on_the_peers() {
    let p = W4Params {
        tolerance_percent: 0,
        timers: 50,
        ticks: 1_000_000_000,
        reps: 2,
    };
    for out in [
        w4(&p, || Ok(Wheel::new())).unwrap(),
        w4(&p, || Ok(HeapLazy::new())).unwrap(),
        w4(&p, || Ok(BTreeMapPeer::new())).unwrap(),
        w4(&p, DelayQueuePeer::new).unwrap(),
    ] {
        assert_eq!(out.fired, 50);
        assert_eq!(
            out.jumps, 50,
            "exact queries: one jump per distinct deadline"
        );
        assert_eq!(out.ns_per_timer.len(), 2);
    }
}

#[test]
fn w5_counts() {
    let p = W5Params {
        timers: 300,
        ticks: 1_000_000,
        tolerance_percent: 5,
        reps: 1,
    };
    let distinct = stabbing_optimum(&w5_windows(300, 1_000_000, 0));
    let wheel = w5(&p, || Ok(Wheel::new())).unwrap();
    let tolerant = wheel.tolerant.expect("the wheel takes a tolerance");
    assert_eq!(tolerant.violations, 0);
    assert!(tolerant.wakeups >= tolerant.optimum);
    assert_eq!(wheel.exact.optimum, distinct);
    assert_eq!(wheel.exact.violations, 0);
    for exact in [
        w5(&p, || Ok(HeapLazy::new())).unwrap(),
        w5(&p, || Ok(BTreeMapPeer::new())).unwrap(),
        w5(&p, DelayQueuePeer::new).unwrap(),
    ] {
        assert!(exact.tolerant.is_none(), "peers take no tolerance");
        assert_eq!(exact.exact.violations, 0);
        assert_eq!(exact.exact.wakeups, distinct);
        assert_eq!(exact.exact.optimum, distinct);
    }
}
