//! The tables `callwheel bench` prints: the W1 and W3 tables, the compact W1 matrix (rows =
//! schemes, columns = N, the shape of Costello & Varghese's Table I), and the median/min/max
//! summary they show. Tables are Markdown with padded, aligned columns, readable as they are in
//! a terminal and pastable into a document.

use crate::registry::SchemeInfo;
use crate::runner::Report;

/// Median, minimum and maximum of a measurement's repetitions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// The median (the mean of the middle two for an even count).
    pub median: f64,
    /// The smallest figure.
    pub min: f64,
    /// The largest figure.
    pub max: f64,
}

impl Summary {
    /// Summarizes `samples`; `None` when there are none.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mid = sorted.len() / 2;
        let median = if sorted.len() % 2 == 1 {
            sorted[mid]
        } else {
            (sorted[mid - 1] + sorted[mid]) / 2.0
        };
        Some(Summary {
            median,
            min: sorted[0],
            max: sorted[sorted.len() - 1],
        })
    }
}

/// How a measurement ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The child reported figures.
    Done(Report),
    /// The plan left it out, for the reason given.
    Skipped(&'static str),
    /// The child failed; the message says why.
    Failed(String),
}

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

/// One row of the W3 table.
#[derive(Clone, Debug)]
pub struct W3Row {
    /// The scheme.
    pub scheme: &'static SchemeInfo,
    /// Timers started.
    pub timers: u64,
    /// Ticks advanced over.
    pub ticks: u64,
    /// The result.
    pub outcome: Outcome,
}

impl W3Row {
    /// `true` unless the child reported fired counts (in time plus late) that do not add up to
    /// the timers started.
    pub fn fired_ok(&self) -> bool {
        match &self.outcome {
            Outcome::Done(report) => {
                report.fired.map(|f| f + report.late.unwrap_or(0)) == Some(self.timers)
            }
            Outcome::Skipped(_) | Outcome::Failed(_) => true,
        }
    }
}

/// Column alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text, flush left.
    Left,
    /// Numbers, flush right.
    Right,
}

/// A Markdown table whose columns are padded to a common width.
#[derive(Clone, Debug)]
pub struct Table {
    header: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these column headings and alignments.
    pub fn new(columns: &[(&str, Align)]) -> Table {
        Table {
            header: columns.iter().map(|(h, _)| h.to_string()).collect(),
            align: columns.iter().map(|&(_, a)| a).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row; missing cells are left empty, extra cells are dropped.
    pub fn push(&mut self, mut row: Vec<String>) {
        row.resize(self.header.len(), String::new());
        self.rows.push(row);
    }

    /// The table as text, one line per row, each ending in a newline.
    pub fn render(&self) -> String {
        let width = |s: &str| s.chars().count();
        let mut widths: Vec<usize> = self.header.iter().map(|h| width(h).max(3)).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(width(cell));
            }
        }
        let line = |cells: &[String]| {
            let mut out = String::from("|");
            for ((cell, &w), &align) in cells.iter().zip(&widths).zip(&self.align) {
                let pad = " ".repeat(w - width(cell));
                match align {
                    Align::Left => out.push_str(&format!(" {cell}{pad} |")),
                    Align::Right => out.push_str(&format!(" {pad}{cell} |")),
                }
            }
            out.push('\n');
            out
        };
        let mut out = line(&self.header);
        out.push('|');
        for (&w, &align) in widths.iter().zip(&self.align) {
            match align {
                Align::Left => out.push_str(&format!(" {} |", "-".repeat(w))),
                Align::Right => out.push_str(&format!(" {}: |", "-".repeat(w - 1))),
            }
        }
        out.push('\n');
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }
}

/// Formats nanoseconds with a precision that suits their size.
pub fn format_ns(ns: f64) -> String {
    if ns < 10.0 {
        format!("{ns:.2}")
    } else if ns < 1000.0 {
        format!("{ns:.1}")
    } else {
        format!("{ns:.0}")
    }
}

/// The cells `median | min | max` of an outcome (a skip or failure fills the median cell).
fn summary_cells(outcome: &Outcome) -> [String; 3] {
    match outcome {
        Outcome::Done(report) => match Summary::of(&report.samples) {
            Some(s) => [format_ns(s.median), format_ns(s.min), format_ns(s.max)],
            None => ["no samples".into(), String::new(), String::new()],
        },
        Outcome::Skipped(reason) => [reason.to_string(), String::new(), String::new()],
        Outcome::Failed(_) => ["error".into(), String::new(), String::new()],
    }
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
            Outcome::Done(Report {
                bytes_per_timer: Some(b),
                ..
            }) => format!("{b:.1}"),
            Outcome::Done(_) => "-".into(),
            _ => String::new(),
        };
        let iters = row.iters.map_or_else(|| "-".into(), |i| i.to_string());
        table.push(vec![
            row.scheme.name.into(),
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

/// The W3 table: `scheme | timers | ticks | ns/timer median | min | max | fired`.
pub fn w3_table(rows: &[W3Row]) -> String {
    let mut table = Table::new(&[
        ("scheme", Align::Left),
        ("timers", Align::Right),
        ("ticks", Align::Right),
        ("ns/timer median", Align::Right),
        ("min", Align::Right),
        ("max", Align::Right),
        ("fired", Align::Right),
    ]);
    for row in rows {
        let [median, min, max] = summary_cells(&row.outcome);
        let fired = match &row.outcome {
            Outcome::Done(report) => match (report.fired, report.late.unwrap_or(0)) {
                (Some(f), 0) if row.fired_ok() => f.to_string(),
                (Some(f), late) if row.fired_ok() => format!("{f} + {late} late"),
                (Some(f), late) => format!("{f} + {late} late MISMATCH"),
                (None, _) => "missing".into(),
            },
            _ => String::new(),
        };
        table.push(vec![
            row.scheme.name.into(),
            row.timers.to_string(),
            row.ticks.to_string(),
            median,
            min,
            max,
            fired,
        ]);
    }
    table.render()
}
