//! The C driver of W1–W4 runs the same workloads as the Rust one: the same draws give the same
//! counts, and sizes the Rust workloads refuse are refused alike.

use callwheel::Wheel;
use callwheel_bench::c_driver;
use callwheel_bench::c_wheel::CWheel;
use callwheel_bench::workload::{self, w2_expected, W1Params, W2Params, W3Params, W4Params};

#[test]
fn w1_from_c_keeps_every_timer_and_reports_memory() {
    let p = W1Params {
        n: 2_000,
        iters: 20_000,
        reps: 2,
    };
    let c = c_driver::w1(&p).unwrap();
    assert_eq!(c.ns_per_pair.len(), 2);
    assert!(c.ns_per_pair.iter().all(|&ns| ns > 0.0));
    let rust = workload::w1(&p, CWheel::new).unwrap();
    assert_eq!(
        c.bytes_per_timer, rust.bytes_per_timer,
        "the same wheel after the same starts"
    );
}

#[test]
fn w2_from_c_fires_what_the_draws_say() {
    // 600 ticks of the clock: the timers of the first 350 or so expire (delays are 200 to 250
    // ticks), the 5 % never cancelled among them.
    let p = W2Params {
        tolerance_percent: 0,
        n: 10_000,
        steps: 600_000,
        reps: 2,
    };
    let c = c_driver::w2(&p).unwrap();
    assert_eq!(c.ns_per_step.len(), 2);
    let expected = w2_expected(p.n, p.steps);
    assert!(expected > 1_000, "the run fires timers: {expected}");
    assert_eq!(c.expiries, expected);
}

#[test]
fn w3_from_c_fires_every_timer_within_the_ticks() {
    let p = W3Params {
        tolerance_percent: 0,
        timers: 50_000,
        ticks: 5_000,
        reps: 2,
    };
    let c = c_driver::w3(&p).unwrap();
    assert_eq!((c.fired, c.late), (p.timers, 0));
    assert_eq!(c.ns_per_timer.len(), 2);
}

#[test]
fn w4_from_c_jumps_as_the_rust_wheel_does() {
    let p = W4Params {
        tolerance_percent: 0,
        timers: 1_000,
        ticks: 1_000_000_000,
        reps: 3,
    };
    let c = c_driver::w4(&p).unwrap();
    let rust = workload::w4(&p, || Ok(Wheel::new())).unwrap();
    assert_eq!((c.fired, c.jumps), (rust.fired, rust.jumps));
    assert_eq!(c.fired, p.timers);
    // Deadlines drawn from a billion ticks are all distinct: one jump per timer.
    assert_eq!(c.jumps, p.timers);
}

#[test]
fn empty_sizes_are_refused_as_the_rust_workloads_refuse_them() {
    let w1 = W1Params {
        n: 10,
        iters: 0,
        reps: 1,
    };
    assert_eq!(c_driver::w1(&w1), workload::w1(&w1, || Ok(Wheel::new())));
    let w2 = W2Params {
        tolerance_percent: 0,
        n: 10,
        steps: 0,
        reps: 1,
    };
    assert_eq!(c_driver::w2(&w2), workload::w2(&w2, || Ok(Wheel::new())));
    let w3 = W3Params {
        tolerance_percent: 0,
        timers: 10,
        ticks: 1,
        reps: 1,
    };
    assert_eq!(c_driver::w3(&w3), workload::w3(&w3, || Ok(Wheel::new())));
    let w4 = W4Params {
        tolerance_percent: 0,
        timers: 0,
        ticks: 100,
        reps: 1,
    };
    assert_eq!(c_driver::w4(&w4), workload::w4(&w4, || Ok(Wheel::new())));
}
