//! The host under the measurements: the CPU time its hypervisor steals (the noise every figure
//! of a run shares) and the calling thread's timer slack (the kernel's own tolerance).

use std::num::NonZeroU64;

use callwheel_rt::ClockId;

use crate::failure::{fail, Failure};

/// The machine's CPU time so far from /proc/stat, in ticks: (stolen by the hypervisor, all).
/// `None` where there is no /proc/stat.
pub fn cpu_ticks() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal [guest guest_nice, counted in user]
    let all: u64 = v.iter().take(8).sum();
    Some((v.get(7).copied().unwrap_or(0), all))
}

/// The share of CPU time the hypervisor stole between two [`cpu_ticks`] readings, in per
/// cent: the host noise every figure of the run shares.
pub fn steal_percent(before: Option<(u64, u64)>, after: Option<(u64, u64)>) -> Option<f64> {
    let ((s0, a0), (s1, a1)) = (before?, after?);
    let all = a1.checked_sub(a0).filter(|&a| a > 0)?;
    Some(100.0 * s1.saturating_sub(s0) as f64 / all as f64)
}

/// Sets the calling thread's timer slack (`PR_SET_TIMERSLACK`), at least 1 ns.
pub(super) fn set_slack(ns: u64) -> Result<(), Failure> {
    rustix::thread::set_current_timer_slack(NonZeroU64::new(ns.max(1)))
        .map_err(|e| fail("setting the timer slack", e))
}

/// Runs `f` with the calling thread's timer slack at its smallest (1 ns), then puts the slack
/// back as it was: the measuring thread's own sleeps then carry no slack of the kernel's.
///
/// # Errors
///
/// When the slack cannot be set (nothing has run then).
pub fn with_least_slack<R>(f: impl FnOnce() -> R) -> std::io::Result<R> {
    let before = rustix::thread::current_timer_slack().ok();
    ClockId::minimise_timer_slack()?;
    let result = f();
    if let Some(ns) = before {
        let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(ns.max(1)));
    }
    Ok(result)
}

/// "; the hypervisor stole X % of the CPU time meanwhile", or nothing when unknown.
pub fn steal_note(steal: Option<f64>) -> String {
    steal.map_or(String::new(), |s| {
        format!("; the hypervisor stole {s:.1} % of the machine's CPU time meanwhile")
    })
}
