//! W1, set/cancel: its rows, its table and the compact matrix (schemes by N).

use super::outcome::{summary_cells, Outcome, Summary};
use super::table::{format_ns, Align, Table};
use crate::structure::SchemeInfo;

/// One row of the W1 table.
#[derive(Clone, Debug)]
pub struct W1Row {
    /// The scheme.
    pub scheme: &'static SchemeInfo,
    /// Outstanding timers.
    pub n: u64,
    /// Timed pairs per repetition actually used (`None` when skipped).
    pub iters: Option<u64>,
    /// The result.
    pub outcome: Outcome,
}

/// The W1 table: `scheme | N | I | ns/pair median | min | max | bytes/timer`.
pub fn w1_table(rows: &[W1Row]) -> String {
    let mut table = Table::new(&[
        ("scheme", Align::Left),
        ("N", Align::Right),
        ("I", Align::Right),
        ("ns/pair median", Align::Right),
        ("min", Align::Right),
        ("max", Align::Right),
        ("bytes/timer", Align::Right),
    ]);
    for row in rows {
        let [median, min, max] = summary_cells(&row.outcome);
        let bytes = match &row.outcome {
            Outcome::Done(r) => match r.bytes_per_timer {
                Some(_) if !row.scheme.caps.memory => "n/a".into(),
                Some(b) => format!("{b:.1}"),
                None => "-".into(),
            },
            _ => String::new(),
        };
        let iters = row.iters.map_or_else(|| "-".into(), |i| i.to_string());
        table.push(vec![
            row.scheme.row_name(),
            row.n.to_string(),
            iters,
            median,
            min,
            max,
            bytes,
        ]);
    }
    table.render()
}

/// The compact W1 matrix: one row per scheme, one column per N, median ns per pair in the cells.
pub fn w1_matrix(rows: &[W1Row], sizes: &[u64]) -> String {
    let headings: Vec<String> = sizes.iter().map(|n| format!("N={n}")).collect();
    let mut columns: Vec<(&str, Align)> = vec![("scheme", Align::Left)];
    columns.extend(headings.iter().map(|h| (h.as_str(), Align::Right)));
    let mut table = Table::new(&columns);

    let mut schemes: Vec<&'static SchemeInfo> = Vec::new();
    for row in rows {
        if !schemes.iter().any(|s| s.name == row.scheme.name) {
            schemes.push(row.scheme);
        }
    }
    for scheme in schemes {
        let mut cells = vec![format!("{} {}", scheme.label, scheme.name)];
        for &n in sizes {
            let row = rows
                .iter()
                .find(|r| r.scheme.name == scheme.name && r.n == n);
            cells.push(match row.map(|r| &r.outcome) {
                Some(Outcome::Done(report)) => {
                    Summary::of(&report.samples).map_or_else(String::new, |s| format_ns(s.median))
                }
                Some(Outcome::Skipped(_)) => "skipped".into(),
                Some(Outcome::Failed(_)) => "error".into(),
                None => String::new(),
            });
        }
        table.push(cells);
    }
    table.render()
}
