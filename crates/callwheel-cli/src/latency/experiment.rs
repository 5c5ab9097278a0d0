//! The latency runs as an experiment: the hrtimers table (callwheel-rt's lateness against a
//! bare `clock_nanosleep` loop, idle and loaded), its figures, verdicts and lateness histogram.

use std::fmt::Write as _;
use std::path::Path;

use super::{figures, measure, render, LatencyArgs, Report, P50_TARGETS_NS};
use crate::experiment::{Experiment, Section, Size};
use callwheel_bench::plots::{Chart, Series};

/// What a latency experiment runs: one run per case (idle, loaded), one after another.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The runs.
    pub runs: Vec<LatencyArgs>,
}

/// `latency`: Timer lateness on real clocks: callwheel-rt against a bare `clock_nanosleep` loop.
pub struct Latency;

impl Experiment for Latency {
    type Plan = Plan;

    fn name(&self) -> &'static str {
        "latency"
    }

    fn about(&self) -> &'static str {
        "Timer lateness on real clocks: callwheel-rt against a bare `clock_nanosleep` loop"
    }

    fn plan(&self, size: Size) -> Plan {
        let (samples, period_us) = match size {
            Size::Tiny => (20, 1_000),
            Size::Default => (200, 10_000),
            Size::Full => (10_000, 10_000),
        };
        Plan {
            runs: [false, true]
                .into_iter()
                .map(|load| LatencyArgs {
                    samples,
                    period_us,
                    load,
                    spin_us: 0,
                })
                .collect(),
        }
    }

    fn run(&self, plan: &Plan, out: &Path) -> Section {
        latency(plan, out)
    }
}

fn latency(plan: &Plan, out: &Path) -> Section {
    let mut done = Section::default();
    let mut panels = Vec::new();
    let _ = writeln!(
        done.markdown,
        "\n## Latency: callwheel-rt timers against a bare clock_nanosleep(TIMER_ABSTIME) loop\n"
    );
    for args in &plan.runs {
        let case = if args.load { "loaded" } else { "idle" };
        eprintln!(
            "latency: {case}, {} samples per source every {} us ...",
            args.samples, args.period_us
        );
        match measure(args) {
            Ok(report) => {
                let _ = writeln!(done.markdown, "### {case}\n");
                done.markdown.push_str(&render(&report));
                panels.push(lateness_chart(case, &report));
                figures(&report, case, &mut done.figures);
                let raw = report
                    .rows
                    .iter()
                    .find(|r| r.source.starts_with("clock_nanosleep"));
                if let (Some(cb), Some(raw)) = (report.rows.first(), raw) {
                    let p50 = (cb.p50 as f64 - raw.p50 as f64) / 1_000.0;
                    let p99 = cb.p99 as f64 / raw.p99.max(1) as f64;
                    for target in P50_TARGETS_NS {
                        let t = target as f64 / 1_000.0;
                        done.find(
                            "latency",
                            format!("{case}: callwheel p50 - raw p50 (target <= +{t} us)"),
                            format!("{p50:+.2} us: {}", if p50 <= t { "met" } else { "missed" }),
                        );
                    }
                    done.find(
                        "latency",
                        format!("{case}: callwheel p99 / raw p99 (target <= 1.2)"),
                        format!("{p99:.2}: {}", if p99 <= 1.2 { "met" } else { "missed" }),
                    );
                }
            }
            Err(e) => done.failed(&format!("latency ({case})"), e),
        }
    }
    if !panels.is_empty() {
        done.plot_panels(
            "Lateness of timers due every period: callwheel-rt against clock_nanosleep (hrtimers table)",
            &panels,
            out,
            "latency_histogram",
        );
    }
    done
}

/// Histogram bins for lateness: 5 per decade from 1 µs to 100 ms (edges in µs).
fn lateness_edges() -> Vec<f64> {
    (0..=25).map(|i| 10f64.powf(f64::from(i) / 5.0)).collect()
}

/// A lateness histogram as a line: the share of `sorted_ns` in each bin of `edges` (µs),
/// plotted at the bin's geometric centre; values beyond the last edge count in the last bin,
/// below the first in the first.
fn histogram_series(label: String, sorted_ns: &[u64], edges: &[f64]) -> Series {
    let bins = edges.len() - 1;
    let mut counts = vec![0u64; bins];
    for &ns in sorted_ns {
        let us = ns as f64 / 1_000.0;
        let i = edges[1..]
            .iter()
            .position(|&hi| us < hi)
            .unwrap_or(bins - 1);
        counts[i] += 1;
    }
    let n = sorted_ns.len().max(1) as f64;
    Series {
        label,
        points: (0..bins)
            .map(|i| {
                (
                    (edges[i] * edges[i + 1]).sqrt(),
                    100.0 * counts[i] as f64 / n,
                )
            })
            .collect(),
        reference: false,
    }
}

/// One panel of the lateness figure: the callback row and the raw row of one latency run,
/// trimmed to the bins either of them reaches.
fn lateness_chart(case: &str, report: &Report) -> Chart {
    let edges = lateness_edges();
    let mut series: Vec<Series> = report
        .rows
        .iter()
        .filter(|r| r.source != "callwheel-rt (wake-up)")
        .map(|r| {
            histogram_series(
                format!("{} ({} samples)", r.source, r.samples),
                &r.sorted,
                &edges,
            )
        })
        .collect();
    let used = |i: usize| series.iter().any(|s| s.points[i].1 > 0.0);
    let bins = edges.len() - 1;
    let first = (0..bins).find(|&i| used(i)).unwrap_or(0).saturating_sub(1);
    let last = (0..bins).rfind(|&i| used(i)).unwrap_or(bins - 1);
    let last = (last + 1).min(bins - 1);
    for s in &mut series {
        s.points = s.points[first..=last].to_vec();
    }
    Chart {
        title: format!("{case}: {} µs period", report.args.period_us),
        x_desc: "lateness, µs (clock reading minus deadline; bins of 1/5 decade)".into(),
        y_desc: "% of samples in the bin".into(),
        log_x: true,
        log_y: false,
        series,
        legend_right: true,
        legend_bottom: false,
    }
}
