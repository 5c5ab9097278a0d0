//! The tables `callwheel bench` prints: one table per workload, the compact W1 matrix (rows =
//! schemes, columns = N, the shape of Costello & Varghese's Table I), the median/min/max summary
//! they show, and the ratio tables (each peer's median over the facility's). Tables are Markdown
//! with padded, aligned columns, readable as they are in a terminal and pastable into a document.

use serde::Serialize;

use crate::registry::{Role, SchemeInfo};
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
                bytes_per_timer: Some(_),
                ..
            }) if !row.scheme.caps.memory => "n/a".into(),
            Outcome::Done(Report {
                bytes_per_timer: Some(b),
                ..
            }) => format!("{b:.1}"),
            Outcome::Done(_) => "-".into(),
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
            row.scheme.row_name(),
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

/// One row of the W2 table.
#[derive(Clone, Debug)]
pub struct W2Row {
    /// The structure.
    pub scheme: &'static SchemeInfo,
    /// Timers in flight actually used (`None` when skipped).
    pub n: Option<u64>,
    /// Timed steps.
    pub steps: u64,
    /// The expiry count every exact structure must report at this `N` ([`w2_expected`]).
    ///
    /// [`w2_expected`]: crate::workload::w2_expected
    pub expected: u64,
    /// The result.
    pub outcome: Outcome,
}

impl W2Row {
    /// `false` when an exact structure reported an expiry count other than the expected one (a
    /// lossy structure's count is reported, not judged).
    pub fn count_ok(&self) -> bool {
        match &self.outcome {
            Outcome::Done(report) => self.scheme.caps.lossy || report.fired == Some(self.expected),
            Outcome::Skipped(_) | Outcome::Failed(_) => true,
        }
    }
}

/// One row of the W4 table.
#[derive(Clone, Debug)]
pub struct W4Row {
    /// The structure.
    pub scheme: &'static SchemeInfo,
    /// Timers started.
    pub timers: u64,
    /// The result.
    pub outcome: Outcome,
}

impl W4Row {
    /// `false` when the loop fired other than every timer.
    pub fn fired_ok(&self) -> bool {
        match &self.outcome {
            Outcome::Done(report) => report.fired == Some(self.timers),
            Outcome::Skipped(_) | Outcome::Failed(_) => true,
        }
    }
}

/// One structure's W5 result (it prints as two rows: the tolerant case and tolerance 0).
#[derive(Clone, Debug)]
pub struct W5Row {
    /// The structure.
    pub scheme: &'static SchemeInfo,
    /// Timers started.
    pub timers: u64,
    /// The tolerant case's tolerance, in percent.
    pub tolerance_percent: u64,
    /// The result.
    pub outcome: Outcome,
}

impl W5Row {
    /// What is wrong with the counts of an exact structure: a timer fired outside its window,
    /// fewer wake-ups than the optimum (impossible without a violation), or a missing case.
    /// `None` when they are right, for a lossy structure (reported, not judged), and for a skip
    /// or failure.
    pub fn problem(&self) -> Option<String> {
        let Outcome::Done(report) = &self.outcome else {
            return None;
        };
        if self.scheme.caps.lossy {
            return None;
        }
        let (Some(wakeups), Some(optimum), Some(violations)) =
            (report.wakeups, report.optimum, report.violations)
        else {
            return Some("the result has no tolerance-0 counts".into());
        };
        let mut cases = vec![("0", wakeups, optimum, violations)];
        if let Some(t) = &report.tolerant {
            cases.insert(0, ("tolerant", t.wakeups, t.optimum, t.violations));
        }
        for (case, wakeups, optimum, violations) in cases {
            if violations > 0 {
                return Some(format!(
                    "{violations} timers fired outside their window (tolerance {case})"
                ));
            }
            if wakeups < optimum {
                return Some(format!(
                    "{wakeups} wake-ups, below the optimum {optimum} (tolerance {case})"
                ));
            }
        }
        None
    }
}

/// The W2 table: `scheme | N | steps | ns/step median | min | max | expiries`.
pub fn w2_table(rows: &[W2Row]) -> String {
    let mut table = Table::new(&[
        ("scheme", Align::Left),
        ("N", Align::Right),
        ("steps", Align::Right),
        ("ns/step median", Align::Right),
        ("min", Align::Right),
        ("max", Align::Right),
        ("expiries", Align::Right),
    ]);
    for row in rows {
        let [median, min, max] = summary_cells(&row.outcome);
        let expiries = match &row.outcome {
            Outcome::Done(report) => match report.fired {
                Some(f) if row.scheme.caps.lossy => format!("{f} (lossy)"),
                Some(f) if row.count_ok() => f.to_string(),
                Some(f) => format!("{f} MISMATCH (expected {})", row.expected),
                None => "missing".into(),
            },
            _ => String::new(),
        };
        table.push(vec![
            row.scheme.row_name(),
            row.n.map_or_else(|| "-".into(), |n| n.to_string()),
            row.steps.to_string(),
            median,
            min,
            max,
            expiries,
        ]);
    }
    table.render()
}

/// The W4 table: `scheme | timers | ns/timer median | min | max | fired | jumps`.
pub fn w4_table(rows: &[W4Row]) -> String {
    let mut table = Table::new(&[
        ("scheme", Align::Left),
        ("timers", Align::Right),
        ("ns/timer median", Align::Right),
        ("min", Align::Right),
        ("max", Align::Right),
        ("fired", Align::Right),
        ("jumps", Align::Right),
    ]);
    for row in rows {
        let [median, min, max] = summary_cells(&row.outcome);
        let (fired, jumps) = match &row.outcome {
            Outcome::Done(report) => {
                let fired = match report.fired {
                    Some(f) if row.fired_ok() => f.to_string(),
                    Some(f) => format!("{f} MISMATCH"),
                    None => "missing".into(),
                };
                (
                    fired,
                    report.jumps.map_or("missing".into(), |j| j.to_string()),
                )
            }
            _ => (String::new(), String::new()),
        };
        table.push(vec![
            row.scheme.row_name(),
            row.timers.to_string(),
            median,
            min,
            max,
            fired,
            jumps,
        ]);
    }
    table.render()
}

/// The cells `wake-ups | optimum | ratio | violations` of one W5 case.
fn w5_counts(wakeups: u64, optimum: u64, violations: u64, lossy: bool) -> [String; 4] {
    let ratio = if optimum == 0 {
        "-".into()
    } else {
        format!("{:.3}", wakeups as f64 / optimum as f64)
    };
    let violations = if lossy && violations > 0 {
        format!("{violations} (lossy)")
    } else {
        violations.to_string()
    };
    [wakeups.to_string(), optimum.to_string(), ratio, violations]
}

/// The W5 table, two rows per structure (the tolerant case, then tolerance 0): `scheme |
/// tolerance | timers | wake-ups | optimum | ratio | violations | ns/timer median | min | max`.
pub fn w5_table(rows: &[W5Row]) -> String {
    let mut table = Table::new(&[
        ("scheme", Align::Left),
        ("tolerance", Align::Right),
        ("timers", Align::Right),
        ("wake-ups", Align::Right),
        ("optimum", Align::Right),
        ("ratio", Align::Right),
        ("violations", Align::Right),
        ("ns/timer median", Align::Right),
        ("min", Align::Right),
        ("max", Align::Right),
    ]);
    for row in rows {
        let name = row.scheme.row_name();
        let lossy = row.scheme.caps.lossy;
        let tolerant = format!("{} %", row.tolerance_percent);
        let lead = |tol: &str| vec![name.clone(), tol.to_string(), row.timers.to_string()];
        match &row.outcome {
            Outcome::Done(report) => {
                let mut first = lead(&tolerant);
                match &report.tolerant {
                    Some(t) => {
                        first.extend(w5_counts(t.wakeups, t.optimum, t.violations, lossy));
                        first.extend(summary_cells(&Outcome::Done(Report {
                            samples: t.samples.clone(),
                            ..Report::default()
                        })));
                    }
                    None => first.push("n/a: takes no tolerance".into()),
                }
                table.push(first);
                let mut second = lead("0");
                match (report.wakeups, report.optimum, report.violations) {
                    (Some(w), Some(o), Some(v)) => second.extend(w5_counts(w, o, v, lossy)),
                    _ => second.extend([
                        "missing".to_string(),
                        String::new(),
                        String::new(),
                        String::new(),
                    ]),
                }
                second.extend(summary_cells(&row.outcome));
                table.push(second);
            }
            Outcome::Skipped(reason) => {
                for tol in [tolerant.as_str(), "0"] {
                    let mut cells = lead(tol);
                    cells.push(reason.to_string());
                    table.push(cells);
                }
            }
            Outcome::Failed(_) => {
                for tol in [tolerant.as_str(), "0"] {
                    let mut cells = lead(tol);
                    cells.push("error".into());
                    table.push(cells);
                }
            }
        }
    }
    table.render()
}

/// The median of an outcome, when it has one.
pub fn median_of(outcome: &Outcome) -> Option<f64> {
    match outcome {
        Outcome::Done(report) => Summary::of(&report.samples).map(|s| s.median),
        Outcome::Skipped(_) | Outcome::Failed(_) => None,
    }
}

/// One measurement as the ratio table sees it: the structure, the column it belongs to (`N=…`
/// for W1, one column otherwise) and its median.
pub type RatioEntry = (&'static SchemeInfo, String, Option<f64>);

/// The ratio table: one row per peer, one column per entry column, each cell the peer's median
/// divided by the facility's median in the same column ("peer / wheel": above 1, the facility
/// is faster). `None` when the entries hold no facility or no peer.
pub fn ratio_table(entries: &[RatioEntry], columns: &[String]) -> Option<String> {
    let facility = entries.iter().find(|e| e.0.role == Role::Facility)?.0;
    let mut peers: Vec<&'static SchemeInfo> = Vec::new();
    for (scheme, _, _) in entries {
        if scheme.role == Role::Peer && !peers.iter().any(|p| p.name == scheme.name) {
            peers.push(scheme);
        }
    }
    if peers.is_empty() {
        return None;
    }
    let median = |scheme: &SchemeInfo, column: &str| {
        entries
            .iter()
            .find(|e| e.0.name == scheme.name && e.1 == column)
            .and_then(|e| e.2)
    };
    let heading = format!("peer / {}", facility.name);
    let mut header: Vec<(&str, Align)> = vec![(heading.as_str(), Align::Left)];
    header.extend(columns.iter().map(|c| (c.as_str(), Align::Right)));
    let mut table = Table::new(&header);
    for peer in peers {
        let mut cells = vec![peer.row_name()];
        for column in columns {
            cells.push(match (median(peer, column), median(facility, column)) {
                (Some(p), Some(f)) if f > 0.0 => format!("{:.2}", p / f),
                _ => "-".into(),
            });
        }
        table.push(cells);
    }
    Some(table.render())
}

/// One line of an experiment's verdicts: what was checked and the outcome.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Verdict {
    /// What was compared, with its target.
    pub what: String,
    /// The figure and `met` / `missed` (or a plain observation).
    pub result: String,
}

/// A verdict word: `met` or `missed`.
pub fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "missed"
    }
}
