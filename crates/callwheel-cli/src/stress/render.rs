//! The stress run's verdicts and its Markdown table.

use super::plan::{START_P99_TARGET_NS, TARGET_TIMERS};
use super::report::StressReport;
use callwheel_bench::report::{Align, Table};

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1_000.0)
}

/// The `start` p99 verdict during the mass expiry: the figure, the target and met / missed.
/// A mass expiry smaller than the target's 1e6 timers is not judged met: it is not the
/// target's test (a miss there still counts).
pub fn start_verdict(report: &StressReport) -> String {
    let l = &report.start_during;
    if l.calls == 0 {
        return "no start landed during the mass expiry".into();
    }
    format!(
        "{} us over {} starts: {}",
        us(l.p99),
        l.calls,
        if l.p99 < START_P99_TARGET_NS && report.plan.timers < TARGET_TIMERS {
            format!(
                "under the target, but with {} timers, not the target's 1e6: not judged",
                report.plan.timers
            )
        } else if l.p99 < START_P99_TARGET_NS {
            "met".to_string()
        } else {
            format!(
                "missed by {} us",
                us(l.p99.saturating_sub(START_P99_TARGET_NS))
            )
        }
    )
}

/// The count check's one-line result.
pub fn count_verdict(report: &StressReport) -> String {
    let c = &report.counts;
    format!(
        "mass: {} fired once, {} stopped, {} lost, {} wrong; churn: {} armings, {} stopped, {} fired, {} timers wrong: {}",
        c.mass_fired,
        c.mass_cancelled,
        c.mass_lost,
        c.mass_wrong,
        c.churn_armings,
        c.churn_cancelled,
        c.churn_fired,
        c.churn_wrong,
        if c.ok() { "ok" } else { "FAILED" }
    )
}

/// The report as Markdown: the latency table, the mass expiry, the counts and memory.
pub fn render(report: &StressReport) -> String {
    use std::fmt::Write;
    let p = &report.plan;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "callwheel stress: {} timers due at once on {} shards (K = {} expiries per lock hold), {} churn threads starting and stopping timers, {} CPUs{}\n",
        p.timers,
        report.shards,
        report.max_expiries_per_lock,
        p.threads,
        report.cpus,
        crate::sweep::steal_note(report.steal_percent)
    );
    let _ = writeln!(
        out,
        "| call | calls | p50 µs | p99 µs | p99.9 µs | max µs |\n|---|---:|---:|---:|---:|---:|"
    );
    for (name, l) in [
        ("start, during the mass expiry", &report.start_during),
        ("start, whole run", &report.start_all),
        ("stop, whole run", &report.stop_all),
    ] {
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} | {} | {} |",
            l.calls,
            us(l.p50),
            us(l.p99),
            us(l.p999),
            us(l.max)
        );
    }
    let _ = writeln!(
        out,
        "\nmass expiry: {} timers in {:.1} ms (first callback {} µs after the deadline){}; {} lock releases on the expiry budget; creating and arming took {:.1} ms",
        p.timers,
        report.expiry_ns as f64 / 1e6,
        us(report.first_late_ns),
        if report.began_during_arming {
            " — it began before arming was over"
        } else {
            ""
        },
        report.budget_yields,
        report.arm_ns as f64 / 1e6
    );
    let _ = writeln!(
        out,
        "memory: resident {:.0} MiB before, {:.0} MiB armed ({:.0} bytes per timer), peak {:.0} MiB",
        report.rss_before_kib as f64 / 1024.0,
        report.rss_armed_kib as f64 / 1024.0,
        report.bytes_per_timer(),
        report.rss_peak_kib as f64 / 1024.0
    );
    let _ = writeln!(out, "counts: {}", count_verdict(report));
    let sc = &report.scaling;
    let _ = writeln!(
        out,
        "\nthroughput of start, stop and re-arm calls on random timers ({} per thread, each thread on its own shard of {}, nothing firing, {} ms per run):\n",
        sc.timers,
        super::scaling::SCALING_SHARDS,
        sc.duration_ms
    );
    let mut table = Table::new(&[
        ("threads", Align::Right),
        ("calls", Align::Right),
        ("starts", Align::Right),
        ("stops", Align::Right),
        ("re-arms", Align::Right),
        ("Mcalls/s", Align::Right),
    ]);
    for r in &sc.runs {
        table.push(vec![
            r.threads.to_string(),
            r.ops.to_string(),
            r.starts.to_string(),
            r.stops.to_string(),
            r.resets.to_string(),
            format!("{:.2}", r.ops_per_sec() / 1e6),
        ]);
    }
    out.push_str(&table.render());
    let _ = writeln!(
        out,
        "\nscaling from 1 to 2 threads: {:.2}x ({} CPUs)",
        sc.speedup, report.cpus
    );
    let _ = writeln!(
        out,
        "target: start p99 during the mass expiry < {} µs: {}",
        START_P99_TARGET_NS / 1_000,
        start_verdict(report)
    );
    out
}
