//! W1–W4 on the production wheel from a C driver (`c/workloads.c`): the workloads' loops
//! written in C call the C API (`cw_wheel_*`) directly, with the pull loop of the C examples,
//! so a figure is what a C program pays per operation, with nothing of Rust between the loop
//! and the library. This module repeats the C functions (one repetition each), checks their
//! counts with the Rust workloads' rules and builds the same outcomes, so the tool's
//! `c-wheel` rows run through it beside the Rust wheel's. The C file also holds the two probes
//! `callwheel instructions` counts for the C API (reached through
//! [`CWheel::start_from_c`](crate::c_wheel::CWheel::start_from_c) and `stop_from_c`). (W5, whose verdicts are counts of
//! wake-ups, goes through the [`CWheel`](crate::c_wheel::CWheel) adapter, and so does its time
//! per timer.)
#![allow(unsafe_code)]

use crate::workload::{
    same_each_repetition, w1_counts, w2_cancels, w3_report, W1Outcome, W1Params, W2Outcome,
    W2Params, W3Outcome, W3Params, W4Outcome, W4Params, MAX_WAKEUPS, SEED,
};

// The C driver, compiled by the build script from c/workloads.c and linked with the C API of
// the callwheel-ffi dependency.
extern "C" {
    fn cwb_w1(
        n: u64,
        iters: u64,
        seed: u64,
        elapsed_ns: *mut u64,
        bytes: *mut u64,
        missed: *mut u64,
        pending: *mut u64,
    ) -> i32;
    fn cwb_w2(
        n: u64,
        steps: u64,
        seed: u64,
        elapsed_ns: *mut u64,
        expiries: *mut u64,
        missed: *mut u64,
    ) -> i32;
    fn cwb_w3(
        timers: u64,
        ticks: u64,
        seed: u64,
        elapsed_ns: *mut u64,
        fired: *mut u64,
        late: *mut u64,
    ) -> i32;
    /// `cw_wheel_add(w, deadline, 0, value, out)` from C, as `callwheel instructions` counts it.
    // `cw_wheel` is not `repr(C)` (C sees it only through pointers), so the pointer is
    // declared untyped here, as Rust's FFI lint asks.
    pub(crate) fn instructions_probe_start_c_wheel(
        w: *mut core::ffi::c_void,
        deadline: u64,
        value: u64,
        out: *mut callwheel_ffi::cw_handle,
    ) -> i32;
    /// `cw_wheel_del(w, h, NULL)` from C, as `callwheel instructions` counts it.
    pub(crate) fn instructions_probe_stop_c_wheel(
        w: *mut core::ffi::c_void,
        h: callwheel_ffi::cw_handle,
    ) -> i32;
    fn cwb_w4(
        timers: u64,
        ticks: u64,
        seed: u64,
        max_jumps: u64,
        elapsed_ns: *mut u64,
        fired: *mut u64,
        jumps: *mut u64,
    ) -> i32;
}

/// What a C driver's return code means (the `CWB_*` codes of `c/workloads.c`).
fn failed(rc: i32) -> String {
    match rc {
        -1 => "cw_wheel_new refused to make a wheel".into(),
        -2 => "cw_wheel_add refused a timer".into(),
        -3 => "cw_wheel_advance refused the time or the batch".into(),
        -4 => "no memory for W2's queue of handles".into(),
        -5 => "cw_wheel_counts refused".into(),
        -6 => format!("gave up after {MAX_WAKEUPS} jumps"),
        -7 => "cw_wheel_get_many or cw_wheel_next_wakeup refused".into(),
        other => format!("the C driver failed with code {other}"),
    }
}

fn per(elapsed_ns: u64, ops: u64) -> f64 {
    elapsed_ns as f64 / ops as f64
}

/// W1 from the C driver: as [`workload::w1`](crate::workload::w1).
pub fn w1(p: &W1Params) -> Result<W1Outcome, String> {
    p.check()?;
    let mut ns_per_pair = Vec::with_capacity(p.reps as usize);
    let mut bytes_per_timer = None;
    for rep in 0..p.reps {
        let (mut elapsed, mut bytes, mut missed, mut pending) = (0, 0, 0, 0);
        // SAFETY: every pointer is a live local, valid for writing a u64.
        let rc = unsafe {
            cwb_w1(
                p.n,
                p.iters,
                SEED,
                &mut elapsed,
                &mut bytes,
                &mut missed,
                &mut pending,
            )
        };
        if rc != 0 {
            return Err(failed(rc));
        }
        w1_counts(missed, pending, p.n)?;
        if rep == 0 && p.n >= 1000 {
            bytes_per_timer = Some(bytes as f64 / p.n as f64);
        }
        ns_per_pair.push(per(elapsed, p.iters));
    }
    Ok(W1Outcome {
        ns_per_pair,
        bytes_per_timer,
    })
}

/// W2 from the C driver: as [`workload::w2`](crate::workload::w2).
pub fn w2(p: &W2Params) -> Result<W2Outcome, String> {
    p.check()?;
    exact_only(p.tolerance_percent)?;
    let mut ns_per_step = Vec::with_capacity(p.reps as usize);
    let mut count = None;
    for _ in 0..p.reps {
        let (mut elapsed, mut expiries, mut missed) = (0, 0, 0);
        // SAFETY: every pointer is a live local, valid for writing a u64.
        let rc = unsafe { cwb_w2(p.n, p.steps, SEED, &mut elapsed, &mut expiries, &mut missed) };
        if rc != 0 {
            return Err(failed(rc));
        }
        w2_cancels(missed)?;
        same_each_repetition(&mut count, expiries, "the expiry counts")?;
        ns_per_step.push(per(elapsed, p.steps));
    }
    Ok(W2Outcome {
        ns_per_step,
        expiries: count.unwrap_or(0),
        // Not counted by the C driver's loops.
        outside: None,
        cascades_per_timer: None,
    })
}

/// W3 from the C driver: as [`workload::w3`](crate::workload::w3).
pub fn w3(p: &W3Params) -> Result<W3Outcome, String> {
    p.check()?;
    exact_only(p.tolerance_percent)?;
    let mut ns_per_timer = Vec::with_capacity(p.reps as usize);
    let mut report = None;
    for _ in 0..p.reps {
        let (mut elapsed, mut fired, mut late) = (0, 0, 0);
        // SAFETY: every pointer is a live local, valid for writing a u64.
        let rc = unsafe { cwb_w3(p.timers, p.ticks, SEED, &mut elapsed, &mut fired, &mut late) };
        if rc != 0 {
            return Err(failed(rc));
        }
        w3_report(&mut report, fired, late, p.timers);
        ns_per_timer.push(per(elapsed, p.timers));
    }
    let (fired, late) = report.unwrap_or((0, 0));
    Ok(W3Outcome {
        ns_per_timer,
        fired,
        late,
        outside: None,
        cascades_per_timer: None,
    })
}

/// W4 from the C driver: as [`workload::w4`](crate::workload::w4).
pub fn w4(p: &W4Params) -> Result<W4Outcome, String> {
    p.check()?;
    exact_only(p.tolerance_percent)?;
    let mut ns_per_timer = Vec::with_capacity(p.reps as usize);
    let mut counts = None;
    for _ in 0..p.reps {
        let (mut elapsed, mut fired, mut jumps) = (0, 0, 0);
        // SAFETY: every pointer is a live local, valid for writing a u64.
        let rc = unsafe {
            cwb_w4(
                p.timers,
                p.ticks,
                SEED,
                MAX_WAKEUPS,
                &mut elapsed,
                &mut fired,
                &mut jumps,
            )
        };
        if rc != 0 {
            return Err(failed(rc));
        }
        same_each_repetition(&mut counts, (fired, jumps), "fired/jumps")?;
        ns_per_timer.push(per(elapsed, p.timers));
    }
    let (fired, jumps) = counts.unwrap_or((0, 0));
    Ok(W4Outcome {
        ns_per_timer,
        fired,
        jumps,
        outside: None,
        cascades_per_timer: None,
    })
}

/// The C driver runs the exact workloads only (its loops start with a tolerance of 0).
fn exact_only(tolerance_percent: u64) -> Result<(), String> {
    if tolerance_percent != 0 {
        return Err("the C driver runs the exact workloads only (tolerance 0)".into());
    }
    Ok(())
}
