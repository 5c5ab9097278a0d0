//! The Table I / Figure 8 reproduction of Costello & Varghese: the cost of cancelling one
//! callout and setting it again farther in the future, with N other callouts outstanding,
//! through the old and the new callout interfaces.
//!
//! Each (interface, N) runs in its own child process (`callwheel table1-one`), which creates
//! N callouts at random times far in the future — in descending order, so the old list's
//! build is O(N) rather than the O(N^2) of random order, without changing what is timed —
//! then times `pairs` rounds of "cancel the extra callout, set it again one tick farther than
//! before", and prints one line (a tag and a [`Measurement`] as JSON) with the times, the
//! bytes per callout and the entries each pair traversed (the table's `Stats::traversed`,
//! counted, not timed):
//!
//! ```text
//! callwheel-table1 {"samples":[41.2,40.9,41.5],"bytes_per_callout":72.0,"traversed":2000.0}
//! ```
//!
//! The old callout is 4.4BSD's on the `calltodo` list: `untimeout(func, arg)` searches the
//! list from its head and `timeout` walks it to the new callout's place. Farther than every
//! other callout is the paper's experiment and both walks' worst case: each pair traverses 2N
//! entries. The new callout finds the callout through the (function, argument) hash (one
//! chain) or its handle, and its insert walks nothing; for the hashed wheel and the production
//! wheel the time does not matter.

// The submodules use this file's measurement: the experiment (figures, verdicts) and the
// commands (`table1`, `table1-one`).
pub mod command;
pub mod experiment;

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use callwheel::Wheel;
use callwheel_callout::{Backing, Callouts, Config};
use callwheel_schemes::differential_list::DifferentialList;
use callwheel_schemes::hashed_wheel::HashedWheel;
use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use callwheel_bench::report::Summary;
use callwheel_bench::results::Figures;
use callwheel_bench::workload::{SplitMix64, SEED};

/// The paper's points, then the extension.
pub const SIZES: [u64; 9] = [0, 200, 400, 600, 800, 1000, 10_000, 100_000, 1_000_000];
/// Sizes for `--tiny`.
pub const TINY_SIZES: [u64; 3] = [0, 200, 1000];
/// The largest N accepted (the hashed wheel's table and the records must fit in memory).
pub const MAX_N: u64 = 50_000_000;
/// Timed pairs per repetition (the paper's 10,000).
pub const PAIRS: u64 = 10_000;
/// The old list's timed pairs are capped so that pairs * 2N (each pair walks the list twice:
/// the search of `untimeout`, the insert of `timeout`) stays near this many list steps.
pub const OLD_WORK: u64 = 200_000_000;
/// The fewest timed pairs for the old list.
pub const OLD_MIN_PAIRS: u64 = 200;
/// The outstanding callouts are due in [FAR, 2 FAR) ticks; the timed one from 3 FAR on.
pub const FAR: u64 = 1 << 30;
/// The word that starts the child's result line.
pub const RESULT_TAG: &str = "callwheel-table1";

/// The interfaces compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Interface {
    /// 4.4BSD's callout: `timeout`/`untimeout` on the differential `calltodo` list.
    Old,
    /// Costello & Varghese's callwheel (Scheme 6), `timeout`/`untimeout` through the hash.
    Hash,
    /// The same callwheel through `setcallout`/`unsetcallout` handles.
    Handle,
    /// callwheel's production wheel through `setcallout`/`unsetcallout` handles.
    Wheel,
}

impl Interface {
    /// Every interface, in table order.
    pub const ALL: [Interface; 4] = [
        Interface::Old,
        Interface::Hash,
        Interface::Handle,
        Interface::Wheel,
    ];

    /// The column heading.
    pub fn label(self) -> &'static str {
        match self {
            Interface::Old => "old callout (list)",
            Interface::Hash => "new callout, hash",
            Interface::Handle => "new callout, handle",
            Interface::Wheel => "production wheel, handle",
        }
    }

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Interface::Old => "old",
            Interface::Hash => "hash",
            Interface::Handle => "handle",
            Interface::Wheel => "wheel",
        }
    }

    /// The timed pairs for `n` outstanding callouts: the paper's 10,000, fewer for the O(N)
    /// list at large N.
    pub fn pairs(self, n: u64) -> u64 {
        match self {
            Interface::Old => (OLD_WORK / n.max(1).saturating_mul(2)).clamp(OLD_MIN_PAIRS, PAIRS),
            _ => PAIRS,
        }
    }
}

/// The (function, argument) pair a callout carries.
type Call = (u32, u64);

/// What one measurement reports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measurement {
    /// Nanoseconds per (cancel + set) pair, one figure per repetition.
    pub samples: Vec<f64>,
    /// Bytes the table holds per outstanding callout (N > 0).
    pub bytes_per_callout: Option<f64>,
    /// Entries traversed per (cancel + set) pair, counted (`Stats::traversed`): the old
    /// list's walks, the hash chain's compared entries; the same in every repetition.
    pub traversed: f64,
}

impl Measurement {
    /// The child's result line (see [`child_line`](callwheel_bench::child_line)).
    pub fn to_line(&self) -> String {
        callwheel_bench::child_line::write(RESULT_TAG, self)
    }

    /// Parses a result line; `Err` says what is wrong (also a measurement without samples).
    pub fn from_line(line: &str) -> Result<Measurement, String> {
        let m: Measurement = callwheel_bench::child_line::read(RESULT_TAG, line.trim())?;
        if m.samples.is_empty() {
            return Err(format!("incomplete result line {line:?}"));
        }
        Ok(m)
    }
}

/// Runs one (interface, N) measurement in this process.
pub fn measure(interface: Interface, n: u64, pairs: u64, reps: u32) -> Result<Measurement, String> {
    let mut samples = Vec::new();
    let (mut bytes, mut traversed) = (None, 0.0);
    for _ in 0..reps {
        let (ns, b, t) = match interface {
            Interface::Old => one_rep(DifferentialList::new(), false, n, pairs)?,
            Interface::Hash | Interface::Handle => {
                // Costello & Varghese size the callwheel to the callout table: a power of two
                // at least as large.
                let bits = n.max(256).next_power_of_two().trailing_zeros().min(20);
                let wheel = HashedWheel::new(bits).map_err(|e| e.to_string())?;
                one_rep(wheel, interface == Interface::Handle, n, pairs)?
            }
            Interface::Wheel => one_rep(Wheel::new(), true, n, pairs)?,
        };
        samples.push(ns);
        bytes = b;
        traversed = t;
    }
    Ok(Measurement {
        samples,
        bytes_per_callout: bytes,
        traversed,
    })
}

/// One repetition on a fresh table: returns ns per pair, bytes per outstanding callout and
/// entries traversed per pair.
fn one_rep<S: Backing>(
    scheme: S,
    handles: bool,
    n: u64,
    pairs: u64,
) -> Result<(f64, Option<f64>, f64), String> {
    let config = Config {
        calloutsize: usize::try_from(n + 1).map_err(|_| "N does not fit in memory")?,
        // Costello & Varghese's kernels armed every callout exactly.
        deviation_percent: 0,
        ..Config::default()
    };
    let mut table: Callouts<S, Call> =
        Callouts::with_config(scheme, config).map_err(|e| e.to_string())?;
    let mut rng = SplitMix64::new(SEED);
    let mut times: Vec<u64> = (0..n).map(|_| rng.range(FAR, 2 * FAR)).collect();
    times.sort_unstable_by(|a, b| b.cmp(a));
    for (i, &t) in times.iter().enumerate() {
        let ticks = i64::try_from(t).map_err(|e| e.to_string())?;
        let call = (1, i as u64);
        if handles {
            table.setcallout(call, ticks).map_err(|e| e.to_string())?;
        } else {
            table.timeout(call, ticks).map_err(|e| e.to_string())?;
        }
    }
    let extra: Call = (2, u64::MAX);
    let base = 3 * FAR as i64;
    let mut handle = if handles {
        Some(table.setcallout(extra, base).map_err(|e| e.to_string())?)
    } else {
        table.timeout(extra, base).map_err(|e| e.to_string())?;
        None
    };
    let traversed_before = table.stats().traversed;
    let start = Instant::now();
    for i in 1..=pairs as i64 {
        match handle {
            Some(h) => {
                let cancelled = table.unsetcallout(black_box(h));
                debug_assert_eq!(cancelled, Ok(true));
                handle = Some(
                    table
                        .setcallout(black_box(extra), base + i)
                        .map_err(|e| e.to_string())?,
                );
            }
            None => {
                let cancelled = table.untimeout(black_box(extra));
                debug_assert!(cancelled);
                table
                    .timeout(black_box(extra), base + i)
                    .map_err(|e| e.to_string())?;
            }
        }
    }
    let elapsed = start.elapsed();
    let traversed = (table.stats().traversed - traversed_before) as f64 / pairs as f64;
    if table.pending() as u64 != n + 1 {
        return Err(format!(
            "{} callouts pending after the run, expected {}",
            table.pending(),
            n + 1
        ));
    }
    let bytes = (n > 0).then(|| table.memory_bytes() as f64 / n as f64);
    black_box(&table);
    Ok((elapsed.as_nanos() as f64 / pairs as f64, bytes, traversed))
}

/// Runs one measurement in a child process of this binary.
pub fn run_in_child(interface: Interface, n: u64, reps: u32) -> Result<Measurement, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this binary: {e}"))?;
    let output = Command::new(exe)
        .args([
            "table1-one",
            "--interface",
            interface.name(),
            "--n",
            &n.to_string(),
            "--pairs",
            &interface.pairs(n).to_string(),
            "--reps",
            &reps.to_string(),
        ])
        .output()
        .map_err(|e| format!("cannot run the child: {e}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!(
            "child failed ({}): {}",
            output.status,
            stderr.trim()
        ));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with(RESULT_TAG))
        .ok_or_else(|| format!("child printed no {RESULT_TAG} line"))?;
    Measurement::from_line(line)
}

/// One row of the table: N and each interface's outcome.
#[derive(Clone, Debug)]
pub struct Row {
    /// Outstanding callouts.
    pub n: u64,
    /// Per interface, in [`Interface::ALL`] order: the measurement or why it failed.
    pub cells: Vec<Result<Measurement, String>>,
}

fn median(cell: &Result<Measurement, String>) -> Option<f64> {
    cell.as_ref()
        .ok()
        .and_then(|m| Summary::of(&m.samples))
        .map(|s| s.median)
}

/// The table in the paper's layout (N down, interfaces across), in ns per pair.
pub fn table(rows: &[Row]) -> String {
    let mut out = String::new();
    let mut header = String::from("| N |");
    let mut rule = String::from("|---:|");
    for i in Interface::ALL {
        let _ = write!(header, " {} |", i.label());
        rule.push_str("---:|");
    }
    header.push_str(" old / handle |");
    rule.push_str("---:|");
    let _ = writeln!(out, "{header}");
    let _ = writeln!(out, "{rule}");
    for row in rows {
        let _ = write!(out, "| {} |", row.n);
        for cell in &row.cells {
            match (cell, median(cell)) {
                (_, Some(m)) => {
                    let _ = write!(out, " {m:.1} |");
                }
                (Err(e), None) => {
                    let _ = write!(out, " failed: {e} |");
                }
                (Ok(_), None) => out.push_str(" - |"),
            }
        }
        let ratio = match (median(&row.cells[0]), median(&row.cells[2])) {
            (Some(old), Some(handle)) if handle > 0.0 => format!("{:.1}x", old / handle),
            _ => "-".to_string(),
        };
        let _ = writeln!(out, " {ratio} |");
    }
    out
}

/// The entries each (cancel + set) pair traversed, counted (N down, interfaces across).
pub fn counts_table(rows: &[Row]) -> String {
    let mut out = format!(
        "| N |{}\n|---:|",
        Interface::ALL.map(|i| format!(" {} |", i.label())).concat()
    );
    out.push_str(&"---:|".repeat(Interface::ALL.len()));
    for row in rows {
        let _ = write!(out, "\n| {} |", row.n);
        for cell in &row.cells {
            let _ = write!(
                out,
                " {} |",
                cell.as_ref()
                    .map_or("-".into(), |m| m.traversed.to_string())
            );
        }
    }
    out.push('\n');
    out
}

/// The counted shape, one line per interface: the old callout's pairs traverse 2N entries
/// (the insert walks to the tail, `untimeout`'s search to the match, which is last), the new
/// interfaces' a number bounded whatever N.
fn count_verdicts(rows: &[Row]) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, iface) in Interface::ALL.iter().enumerate() {
        let counted: Vec<(u64, f64)> = rows
            .iter()
            .filter_map(|r| r.cells[i].as_ref().ok().map(|m| (r.n, m.traversed)))
            .collect();
        let Some(&(n, t)) = counted.last() else {
            continue;
        };
        let worst = counted.iter().map(|p| p.1).fold(0.0, f64::max);
        let verdict = match (iface, counted.iter().all(|&(n, t)| t == 2.0 * n as f64)) {
            (Interface::Old, true) => "2N at every N (timeout walks to its place, untimeout searches from the head), linear as in the paper".to_string(),
            (Interface::Old, false) => "NOT 2N at every N".to_string(),
            _ if worst <= 8.0 => format!("at most {worst} over every N, bounded as in the paper"),
            _ => format!("up to {worst}: NOT bounded by a small constant"),
        };
        lines.push(format!(
            "{}, entries traversed per pair: {t} at N = {n}: {verdict}",
            iface.label()
        ));
    }
    lines
}

/// The figures of `rows` for `results.json`: each interface's median ns per pair and entries
/// traversed per pair, by N.
pub fn figures(rows: &[Row], figures: &mut Figures) {
    for row in rows {
        for (iface, cell) in Interface::ALL.iter().zip(&row.cells) {
            if let Ok(m) = cell {
                let case = format!("N={}", row.n);
                if let Some(s) = Summary::of(&m.samples) {
                    figures.figure("table1", iface.name(), &case, "median_ns", s.median);
                }
                figures.figure(
                    "table1",
                    iface.name(),
                    &case,
                    "traversed_per_pair",
                    m.traversed,
                );
            }
        }
    }
}

/// What the table shows against the paper's claims, one line each.
pub fn verdicts(rows: &[Row]) -> Vec<String> {
    let column = |i: usize| -> Vec<(u64, f64)> {
        rows.iter()
            .filter_map(|r| median(&r.cells[i]).map(|m| (r.n, m)))
            .collect()
    };
    let spread = |points: &[(u64, f64)]| -> Option<f64> {
        let min = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let max = points.iter().map(|p| p.1).fold(0.0, f64::max);
        (points.len() >= 2 && min > 0.0).then(|| max / min)
    };
    let mut lines = Vec::new();
    let old = column(0);
    if let (Some(first), Some(last)) = (old.first(), old.last()) {
        if old.len() >= 2 {
            lines.push(format!(
                "old callout: {:.1} ns at N = {} to {:.1} ns at N = {} ({:.1}x): {}",
                first.1,
                first.0,
                last.1,
                last.0,
                last.1 / first.1,
                if last.1 > 2.0 * first.1 {
                    "grows with N, as in the paper (insert and search both walk the list)"
                } else {
                    "does NOT grow with N"
                }
            ));
        }
    }
    for (i, name) in [
        (1, "new callout, hash"),
        (2, "new callout, handle"),
        (3, "production wheel, handle"),
    ] {
        let all = column(i);
        let paper: Vec<(u64, f64)> = all.iter().copied().filter(|p| p.0 <= 1000).collect();
        let verdict = |s: f64| if s <= 1.5 { "flat" } else { "NOT flat" };
        match (spread(&paper), spread(&all)) {
            (Some(p), Some(a)) if all.len() > paper.len() => lines.push(format!(
                "{name}: max / min = {p:.2} over the paper's N <= 1000 ({}), {a:.2} over every N ({}{})",
                verdict(p),
                verdict(a),
                if a > 1.5 { ": past the caches, each operation misses" } else { "" }
            )),
            (Some(p), _) => lines.push(format!(
                "{name}: max / min = {p:.2} over N <= 1000 ({})",
                verdict(p)
            )),
            (None, Some(a)) => lines.push(format!(
                "{name}: max / min = {a:.2} over every N ({})",
                verdict(a)
            )),
            (None, None) => {}
        }
    }
    let (hash, handle) = (column(1), column(2));
    let ratios: Vec<f64> = hash
        .iter()
        .filter_map(|&(n, h)| handle.iter().find(|p| p.0 == n).map(|p| p.1 / h))
        .collect();
    if !ratios.is_empty() {
        let worst = ratios.iter().copied().fold(0.0, f64::max);
        lines.push(format!(
            "handle / hash: at most {worst:.2} across N ({})",
            if worst <= 1.05 {
                "the handle interface is no slower"
            } else {
                "the handle interface is SLOWER somewhere"
            }
        ));
    }
    lines.extend(count_verdicts(rows));
    lines
}

/// The Figure 8 charts: the paper's range (N <= 1000) on linear axes, and every N on log axes.
pub fn charts(rows: &[Row]) -> [callwheel_bench::plots::Chart; 2] {
    use callwheel_bench::plots::{Chart, Series};
    let series = |keep: &dyn Fn(u64) -> bool| -> Vec<Series> {
        Interface::ALL
            .iter()
            .enumerate()
            .map(|(i, iface)| Series {
                label: iface.label().to_string(),
                points: rows
                    .iter()
                    .filter(|r| keep(r.n))
                    .filter_map(|r| median(&r.cells[i]).map(|m| (r.n as f64, m)))
                    .collect(),
                reference: false,
            })
            .collect()
    };
    [
        Chart {
            title: "Figure 8: cancel + set one callout, the paper's range".into(),
            x_desc: "N, callouts outstanding".into(),
            y_desc: "ns per cancel + set (median)".into(),
            log_x: false,
            log_y: false,
            series: series(&|n| n <= 1000),
            legend_right: false,
            legend_bottom: false,
        },
        Chart {
            title: "Table I extended: cancel + set one callout, N others outstanding".into(),
            x_desc: "N, callouts outstanding".into(),
            y_desc: "ns per cancel + set (median)".into(),
            log_x: true,
            log_y: true,
            series: series(&|n| n > 0),
            legend_right: false,
            legend_bottom: false,
        },
    ]
}

/// Runs every interface at every size (one child process each) under a progress bar and
/// returns the rows and the Markdown section: the table, its verdicts and the plot written to
/// `out/table1.svg`. Failures are counted in `failures` and reported on stderr.
pub fn section(sizes: &[u64], reps: u32, out: &Path, failures: &mut usize) -> (Vec<Row>, String) {
    let bar = callwheel_bench::sections::progress_bar(sizes.len() * Interface::ALL.len());
    let rows: Vec<Row> = sizes
        .iter()
        .map(|&n| Row {
            n,
            cells: Interface::ALL
                .iter()
                .map(|&iface| {
                    bar.set_message(format!("table1 {} N={n}", iface.name()));
                    let cell = run_in_child(iface, n, reps);
                    if let Err(e) = &cell {
                        *failures += 1;
                        bar.suspend(|| eprintln!("error: table1 {} N={n}: {e}", iface.name()));
                    }
                    bar.inc(1);
                    cell
                })
                .collect(),
        })
        .collect();
    bar.finish_and_clear();
    let mut md = String::new();
    callwheel_bench::sections::heading(
        &mut md,
        &format!(
            "## Table I (Costello & Varghese): ns per (cancel + set) of one callout, N others outstanding; median of {reps} repetition{}, each table in its own process",
            if reps == 1 { "" } else { "s" }
        ),
    );
    md.push_str(&table(&rows));
    let _ = write!(
        md,
        "\nTimed pairs: {PAIRS} per repetition; the old list {OLD_WORK} / 2N, clamped to [{OLD_MIN_PAIRS}, {PAIRS}] (its insert and 4.4BSD's untimeout, a search from the list's head, each walk all N). Outstanding callouts are due in [2^30, 2^31) ticks, the timed one after all of them.\n\nEntries traversed per cancel + set, counted (the old list's walks, the hash chain's compared entries):\n\n"
    );
    md.push_str(&counts_table(&rows));
    md.push('\n');
    for line in verdicts(&rows) {
        let _ = writeln!(md, "- {line}");
    }
    let written = std::fs::create_dir_all(out)
        .map_err(|e| format!("cannot create {}: {e}", out.display()))
        .and_then(|()| {
            let [paper, extended] = charts(&rows);
            callwheel_bench::plots::write(&paper, out, "table1_paper")?;
            callwheel_bench::plots::write(&extended, out, "table1")
        });
    match written {
        Ok(_) => {
            let _ = writeln!(
                md,
                "\n![Figure 8, the paper's range](table1_paper.png)\n![Table I extended](table1.png)\n\nFigure 8: {} and {} (and .svg)",
                out.join("table1_paper.png").display(),
                out.join("table1.png").display()
            );
        }
        Err(e) => {
            eprintln!("error: {e}");
            *failures += 1;
        }
    }
    (rows, md)
}
