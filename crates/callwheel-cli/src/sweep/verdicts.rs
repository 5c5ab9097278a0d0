//! The sweep's verdicts against the runtime's targets.

use super::plan::Source;
use super::report::SweepReport;
use crate::latency::P50_TARGETS_NS;
use callwheel_bench::verdict::{verdict, Verdict};

/// The share of a tolerant batch's timers that must fire inside their window, per cent.
pub const INSIDE_TARGET_PERCENT: f64 = 99.5;

pub(super) fn us(ns: u64) -> String {
    let v = ns as f64 / 1_000.0;
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The verdicts against the runtime's targets, from the same run's figures.
pub fn verdicts(report: &SweepReport) -> Vec<Verdict> {
    let mut out = Vec::new();
    let requests = &report.plan.requests_us;
    // Exact: callwheel against the raw loop, per request.
    let mut gaps = Vec::new();
    let mut ratios = Vec::new();
    for &r in requests {
        if let (Some(cw), Some(raw)) = (
            report.cell(Source::CallwheelExact, r),
            report.cell(Source::RawExact, r),
        ) {
            gaps.push((r, cw.actual.p50 as i64 - raw.actual.p50 as i64));
            ratios.push((r, cw.actual.p99 as f64 / raw.actual.p99.max(1) as f64));
        }
    }
    if let Some(&(wr, worst)) = gaps.iter().max_by_key(|g| g.1) {
        for target in P50_TARGETS_NS {
            // Judged on the medians in ns, printed to the ns: 5.004 us is not within 5 us.
            let met = gaps.iter().filter(|g| g.1 <= target as i64).count();
            out.push(Verdict {
                what: format!(
                    "exact: callwheel p50 - raw p50 per request (target <= +{} us)",
                    target as f64 / 1_000.0
                ),
                result: format!(
                    "{met} of {} requests; worst {:+.3} us at {wr} us: {}",
                    gaps.len(),
                    worst as f64 / 1_000.0,
                    verdict(met == gaps.len())
                ),
            });
        }
    }
    if let Some(&(wr, worst)) = ratios.iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
        let met = ratios.iter().filter(|g| g.1 <= 1.2).count();
        out.push(Verdict {
            what: "exact: callwheel p99 / raw p99 per request (target <= 1.2)".into(),
            result: format!(
                "{met} of {} requests; worst {worst:.2}x at {wr} us: {}",
                ratios.len(),
                verdict(met == ratios.len())
            ),
        });
    }
    // 5 %: callwheel's tolerance against the kernel's slack of the same size.
    let mut tol_gaps = Vec::new();
    for &r in requests {
        if let (Some(cw), Some(raw)) = (
            report.cell(Source::CallwheelTolerant, r),
            report.cell(Source::RawSlack, r),
        ) {
            tol_gaps.push((r, (cw.actual.p50 as f64 - raw.actual.p50 as f64) / 1_000.0));
        }
    }
    if let (Some(lo), Some(hi)) = (
        tol_gaps.iter().min_by(|a, b| a.1.total_cmp(&b.1)),
        tol_gaps.iter().max_by(|a, b| a.1.total_cmp(&b.1)),
    ) {
        out.push(Verdict {
            what: "5 %: callwheel p50 - clock_nanosleep with 5 % slack p50 (no target)".into(),
            result: format!(
                "from {:+.2} us (at {} us) to {:+.2} us (at {} us)",
                lo.1, lo.0, hi.1, hi.0
            ),
        });
    }
    // tokio's 1 ms granularity.
    let short: Vec<u64> = requests
        .iter()
        .filter(|&&r| r < 1_000)
        .filter_map(|&r| report.cell(Source::Tokio, r).map(|c| c.actual.p50))
        .collect();
    if let (Some(lo), Some(hi)) = (short.iter().min(), short.iter().max()) {
        out.push(Verdict {
            what: "tokio::time::sleep p50 for requests under 1 ms (peer, no target)".into(),
            result: format!("{} to {} us", us(*lo), us(*hi)),
        });
    }
    let overshoot_of = if report.plan.requests_us.iter().any(|&r| r >= 1_000) {
        "at sleeps >= 1 ms"
    } else {
        "at this run's sleeps, all under 1 ms"
    };
    for b in &report.batches {
        let ratio = b.wakeups as f64 / b.optimum.max(1) as f64;
        // Like with like, against the raw loop's overshoot (its sleeps of 1 ms and more): the
        // batch's median lateness past the window's end (0 inside) against the raw median, and
        // the late timers' 99th percentile against the raw 99th; what the runtime may add
        // beyond the kernel's own overshoot is the latency target's +5 µs. (The late timers'
        // median alone would set one hiccup among 1,000 timers against the kernel's median.)
        let within = !b.began_during_arming
            && b.before_deadline == 0
            && b.lateness_p50_ns <= report.raw_overshoot_p50_ns + 5_000
            && b.excess_p99_ns <= report.raw_overshoot_p99_ns + 5_000;
        let window_ok = within && b.fired == b.timers && b.never == 0 && b.twice == 0;
        let inside_share = b.inside() as f64 * 100.0 / b.timers.max(1) as f64;
        let inside_ok = !b.began_during_arming && inside_share >= INSIDE_TARGET_PERCENT;
        let (what, judged) = if b.tolerance_percent > 0 {
            // The 5 % target: fewer wake-ups *while the timers still fire inside their
            // windows* (the share the inside verdict below judges).
            (
                format!(
                    "{} timers at {} % tolerance: wake-ups / optimum (target <= 1.05)",
                    b.timers, b.tolerance_percent
                ),
                if ratio <= 1.05 && !inside_ok {
                    format!(": missed (under {INSIDE_TARGET_PERCENT} % inside their window)")
                } else {
                    format!(": {}", verdict(ratio <= 1.05))
                },
            )
        } else {
            (
                format!(
                    "{} timers at 0 % tolerance: wake-ups / optimum (no target)",
                    b.timers
                ),
                String::new(),
            )
        };
        let below = if b.began_during_arming {
            " (timers fired before arming was over: the batch measured arming, not coalescing)"
        } else if ratio < 1.0 {
            " (below the optimum only because late wake-ups fired windows that had ended: see the window checks)"
        } else {
            ""
        };
        out.push(Verdict {
            what,
            result: format!("{} / {} = {ratio:.3}{judged}{below}", b.wakeups, b.optimum),
        });
        if b.tolerance_percent > 0 {
            // The target a user of a window expects: the timer inside it. (The next verdict
            // allows a late timer the kernel's overshoot past the window's end.)
            let inside = b.inside();
            out.push(Verdict {
                what: format!(
                    "{} % tolerance: timers fired once, inside their window (target >= {INSIDE_TARGET_PERCENT} %)",
                    b.tolerance_percent
                ),
                result: format!(
                    "{inside} of {} ({inside_share:.2} %): {}",
                    b.timers,
                    if b.began_during_arming {
                        "missed (timers fired before arming was over)"
                    } else {
                        verdict(inside_ok)
                    }
                ),
            });
        }
        out.push(Verdict {
            what: format!(
                "{} % tolerance: every timer fired once, never before its deadline, after its window's end by at most the kernel's overshoot (lateness past the window's end, 0 inside: p50 <= raw overshoot p50 {} us {overshoot_of}, + 5 us; the late timers' p99 <= raw p99 + 5 us)",
                b.tolerance_percent,
                us(report.raw_overshoot_p50_ns)
            ),
            result: format!(
                "{} of {} fired, {} twice, {} before the deadline, lateness p50 {} us; {} after the window's end by p50 {} / p99 {} / max {} us (raw overshoot p99 {} us): {}",
                b.fired,
                b.timers,
                b.twice,
                b.before_deadline,
                us(b.lateness_p50_ns),
                b.after_window,
                us(b.excess_p50_ns),
                us(b.excess_p99_ns),
                us(b.excess_max_ns),
                us(report.raw_overshoot_p99_ns),
                if b.began_during_arming {
                    "missed (timers fired before arming was over)"
                } else {
                    verdict(window_ok)
                }
            ),
        });
    }
    out.push(Verdict {
        what: format!(
            "idle runtime (one timer 1 h away) for {} ms: wake-ups (target 0)",
            report.idle.ms
        ),
        result: format!(
            "{}: {}",
            report.idle.wakeups,
            verdict(report.idle.wakeups == 0)
        ),
    });
    out
}
