//! The sweep as Markdown tables, with its verdicts.

use super::host::steal_note;
use super::plan::Source;
use super::report::SweepReport;
use super::verdicts::{us, verdicts};
use callwheel_bench::percentile::Summary;

/// The report as Markdown tables (median and p99 of the actual sleep per request and source),
/// the same-run comparison with the raw loop, the wake-up batches and the verdicts.
pub fn render(report: &SweepReport) -> String {
    use std::fmt::Write;
    let p = &report.plan;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "callwheel sweep: {} samples per source and request, interleaved sample by sample; actual sleep in µs (clock reading at the wake-up minus the reading before arming){}\n",
        p.samples,
        steal_note(report.steal_percent)
    );
    let header = {
        let mut h = String::from("| request µs |");
        for s in Source::ALL {
            let _ = write!(h, " {} |", s.name());
        }
        h.push_str("\n|---:|");
        for _ in Source::ALL {
            h.push_str("---:|");
        }
        h
    };
    type Pick = fn(&Summary) -> u64;
    let figures: [(&str, Pick); 2] = [("median", |r| r.p50), ("p99", |r| r.p99)];
    for (title, pick) in figures {
        let _ = writeln!(out, "{title} actual sleep, µs:\n\n{header}");
        for &r in &p.requests_us {
            let _ = write!(out, "| {r} |");
            for s in Source::ALL {
                match report.cell(s, r) {
                    Some(c) => {
                        let _ = write!(out, " {} |", us(pick(&c.actual)));
                    }
                    None => out.push_str(" - |"),
                }
            }
            out.push('\n');
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "callwheel-rt against clock_nanosleep, same run (exact: 1 ns slack; 5 %: slack = 5 % of the request):\n"
    );
    let _ = writeln!(
        out,
        "| request µs | exact p50 gap µs | exact p99 ratio | 5 % p50 gap µs | 5 % p99 ratio |"
    );
    let _ = writeln!(out, "|---:|---:|---:|---:|---:|");
    for &r in &p.requests_us {
        let pair = |a: Source, b: Source| match (report.cell(a, r), report.cell(b, r)) {
            (Some(x), Some(y)) => (
                format!(
                    "{:+.2}",
                    (x.actual.p50 as f64 - y.actual.p50 as f64) / 1_000.0
                ),
                format!("{:.2}", x.actual.p99 as f64 / y.actual.p99.max(1) as f64),
            ),
            _ => ("-".into(), "-".into()),
        };
        let (eg, er) = pair(Source::CallwheelExact, Source::RawExact);
        let (tg, tr) = pair(Source::CallwheelTolerant, Source::RawSlack);
        let _ = writeln!(out, "| {r} | {eg} | {er} | {tg} | {tr} |");
    }
    let _ = writeln!(
        out,
        "\nwake-up batches: {} direct timers, deadlines over {} ms, window [d, d + (d - now) × tolerance]; wake-ups from the shard's counters (early ones, caused by arming, left out); optimum by greedy stabbing:\n",
        p.batch_timers, p.span_ms
    );
    let _ = writeln!(
        out,
        "| tolerance | wake-ups | optimum | ratio | early wake-ups | fired | twice | before deadline | lateness p50 µs | after window end | excess p50 µs | excess max µs |"
    );
    let _ = writeln!(
        out,
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for b in &report.batches {
        let _ = writeln!(
            out,
            "| {} % | {} | {} | {:.3} | {} | {} | {} | {} | {} | {} | {} | {} |",
            b.tolerance_percent,
            b.wakeups,
            b.optimum,
            b.wakeups as f64 / b.optimum.max(1) as f64,
            b.early_wakeups,
            b.fired,
            b.twice,
            b.before_deadline,
            us(b.lateness_p50_ns),
            b.after_window,
            us(b.excess_p50_ns),
            us(b.excess_max_ns)
        );
    }
    let _ = writeln!(out, "\n| verdict | result |\n|---|---|");
    for v in verdicts(report) {
        let _ = writeln!(out, "| {} | {} |", v.what, v.result);
    }
    out
}
