//! The sweep's figure: requested against actual sleep, log-log.

use super::plan::Source;
use super::report::SweepReport;
use callwheel_bench::percentile::Summary;
use callwheel_bench::plots::{Chart, Series};

/// The title of the sweep's figure.
pub const CHART_TITLE: &str =
    "Requested against actual sleep (calloutng Figures 4-5), sources interleaved in one run";

/// The sweep's figure as two log-log panels, median and p99: one line per source and the
/// ideal `actual = requested`.
pub fn charts(report: &SweepReport) -> Vec<Chart> {
    let sources: Vec<(&str, Vec<(u64, &Summary)>)> = Source::ALL
        .iter()
        .map(|&s| {
            let cells = report.cells.iter().filter(|c| c.source == s);
            (s.name(), cells.map(|c| (c.request_us, &c.actual)).collect())
        })
        .collect();
    sleep_panels(report.plan.samples, &report.plan.requests_us, &sources)
}

/// Requested against actual sleep as two log-log panels, median and p99: one line per source
/// (its name and its (request µs, actual sleeps) points) and the ideal `actual = requested`.
/// The sweep's figure and the async timers' are both drawn this way.
pub fn sleep_panels(
    samples: u64,
    requests_us: &[u64],
    sources: &[(&str, Vec<(u64, &Summary)>)],
) -> Vec<Chart> {
    type Pick = fn(&Summary) -> u64;
    let picks: [(&str, Pick); 2] = [("median", |r| r.p50), ("99th percentile", |r| r.p99)];
    picks
        .into_iter()
        .map(|(what, pick)| {
            let mut series: Vec<Series> = sources
                .iter()
                .map(|(label, points)| Series {
                    label: label.to_string(),
                    points: points
                        .iter()
                        .map(|&(r, row)| (r as f64, pick(row) as f64 / 1_000.0))
                        .collect(),
                    reference: false,
                })
                .collect();
            series.push(Series {
                label: "ideal: actual = requested".into(),
                points: requests_us.iter().map(|&r| (r as f64, r as f64)).collect(),
                reference: true,
            });
            Chart {
                title: format!("{what} of {samples} samples per point"),
                x_desc: "requested sleep, µs".into(),
                y_desc: format!("actual sleep, µs ({what})"),
                log_x: true,
                log_y: true,
                series,
                legend_right: true,
                legend_bottom: true,
            }
        })
        .collect()
}
