//! Table II's report: the table in the paper's layout with our fitted counts beside the
//! paper's, one verdict per line, and the figure.

use std::fmt::Write as _;
use std::path::Path;

use callwheel_bench::plots::{Chart, Series};

use super::{Function, Line, Measured, Outcome, Shape, Version};

/// A fitted count in the paper's notation: `142` for a constant, `61 + 9.5t` for a line.
fn form(m: &Measured) -> String {
    let b = |b: f64| {
        if b.abs() >= 10.0 {
            format!("{b:.0}")
        } else {
            format!("{b:.1}")
        }
    };
    match m.shape {
        Shape::Constant => {
            let mean = m.points.iter().map(|p| p.1).sum::<f64>() / m.points.len().max(1) as f64;
            format!("{mean:.0}")
        }
        Shape::Linear => format!("{:.0} + {}{}", m.fit.a, b(m.fit.b), m.line.var),
        Shape::Other => format!(
            "{:.0} {} {:.3}{} (R² {:.2})",
            m.fit.a,
            if m.fit.b < 0.0 { "−" } else { "+" },
            m.fit.b.abs(),
            m.line.var,
            m.fit.r2
        ),
    }
}

fn max_x(m: &Measured) -> f64 {
    m.points.iter().map(|p| p.0).fold(0.0, f64::max)
}

/// The table in the paper's layout: a row per function, the paper's count and ours (fitted)
/// for the new version and the original.
pub fn table(measured: &[Measured]) -> String {
    let mut out = String::from(
        "| function | new version: paper | new version: ours | original: paper | original: ours |\n|---|---:|---:|---:|---:|\n",
    );
    for f in Function::ALL {
        let cell = |v: Version| -> (String, String) {
            let lines: Vec<&Measured> = measured
                .iter()
                .filter(|m| m.line.function == f && m.line.version == v)
                .collect();
            match lines.first() {
                None => (String::new(), String::new()),
                Some(first) => (
                    first.line.paper.to_string(),
                    lines.iter().map(|m| form(m)).collect::<Vec<_>>().join("; "),
                ),
            }
        };
        let (new_paper, new_ours) = cell(Version::New);
        let (old_paper, old_ours) = cell(Version::Original);
        let _ = writeln!(
            out,
            "| {} | {new_paper} | {new_ours} | {old_paper} | {old_ours} |",
            f.name()
        );
    }
    out
}

fn shape_name(shape: Shape, var: &str) -> String {
    match shape {
        Shape::Constant => "constant".into(),
        Shape::Linear => format!("linear in {var}"),
        Shape::Other => format!("neither constant nor linear in {var}"),
    }
}

/// One (what, verdict) per line: the shapes side by side and whether they match.
pub fn verdicts(measured: &[Measured]) -> Vec<(String, String)> {
    measured
        .iter()
        .map(|m| {
            let paper = Shape::of_paper(&m.line);
            let matched = paper == m.shape;
            let mut verdict = format!(
                "ours {}: {}, the paper's {}: {}",
                form(m),
                shape_name(m.shape, m.line.var),
                shape_name(paper, m.line.var),
                match (paper, m.shape) {
                    _ if matched => "match",
                    (Shape::Linear, Shape::Constant) => "differs, ours flatter",
                    _ => "DIFFERS",
                }
            );
            if matched && paper == Shape::Linear {
                let _ = write!(
                    verdict,
                    " ({:.1} instructions per entry, the paper's {:.0})",
                    m.fit.b, m.line.paper_fit.1
                );
            }
            if m.shape == Shape::Other {
                let (lo, hi) = m
                    .points
                    .iter()
                    .fold((f64::INFINITY, 0.0f64), |(lo, hi), p| {
                        (lo.min(p.1), hi.max(p.1))
                    });
                let points: Vec<String> = m
                    .points
                    .iter()
                    .map(|(x, y)| format!("{y:.0} at {x:.0}"))
                    .collect();
                let _ = write!(verdict, " (from {lo:.0} to {hi:.0}: {})", points.join(", "));
            }
            (
                format!(
                    "{} ({}) against {}, {} {}: paper {}",
                    m.line.function.name(),
                    m.line.version.name(),
                    m.line.var,
                    m.line.var_desc,
                    range(m),
                    m.line.paper
                ),
                verdict,
            )
        })
        .collect()
}

fn range(m: &Measured) -> String {
    let lo = m.points.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    format!("{lo:.0} to {:.0}", max_x(m))
}

/// The measured series of `lines` (function, version, variable), each with the paper's line
/// at the same points, dashed.
fn series(measured: &[Measured], keep: &dyn Fn(&Line) -> bool) -> Vec<Series> {
    let mut out = Vec::new();
    for m in measured.iter().filter(|m| keep(&m.line)) {
        let name = format!(
            "{} ({}) vs {}",
            m.line.function.name(),
            m.line.version.name(),
            m.line.var
        );
        let (a, b) = m.line.paper_fit;
        out.push(Series {
            label: name.clone(),
            points: m.points.clone(),
            reference: false,
        });
        out.push(Series {
            label: format!(
                "paper: {}",
                if b == 0.0 {
                    m.line.paper.to_string()
                } else {
                    format!("{a} + {b}{}", m.line.var)
                }
            ),
            points: m.points.iter().map(|&(x, _)| (x, a + b * x)).collect(),
            reference: true,
        });
    }
    out
}

/// The figure's panels: set and cancel against the entries they traverse; the new version
/// against the callouts outstanding; `softclock` and the original `hardclock` against their
/// variables.
pub fn charts(measured: &[Measured]) -> Vec<Chart> {
    let chart = |title: &str, x_desc: &str, series: Vec<Series>| Chart {
        title: title.into(),
        x_desc: x_desc.into(),
        y_desc: "instructions per call (callgrind)".into(),
        log_x: false,
        log_y: false,
        series,
        legend_right: false,
        legend_bottom: false,
    };
    vec![
        chart(
            "the original timeout and untimeout against t",
            "t, calltodo entries skipped",
            series(measured, &|l| l.var == "t"),
        ),
        chart(
            "the new version against the callouts outstanding",
            "N, callouts outstanding",
            series(measured, &|l| l.var == "N"),
        ),
        chart(
            "softclock against the callouts it meets",
            "e, m, n: callouts expiring; k: later ones in the bucket",
            series(measured, &|l| l.function == Function::Softclock),
        ),
        chart(
            "the new untimeout against h, the original hardclock against v",
            "h: hash chain entries not matching; v: callouts overdue",
            series(measured, &|l| matches!(l.var, "h" | "v")),
        ),
    ]
}

/// Runs the experiment (skipped without `valgrind`) and returns the lines and the Markdown
/// section: the table, the verdicts and the figure written to `out/table2.{svg,png}`.
/// Failures are counted in `failures` and reported on stderr.
pub fn section(quick: bool, out: &Path, failures: &mut usize) -> (Outcome, String) {
    let mut md = String::from(
        "## Table II (Costello & Varghese): instructions per call of each timer function, counted by callgrind\n\n",
    );
    let outcome = match super::run(quick) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: table2: {e}");
            *failures += 1;
            let _ = writeln!(md, "Failed: {e}");
            return (Outcome::Skipped(e), md);
        }
    };
    let measured = match &outcome {
        Outcome::Skipped(why) => {
            let _ = writeln!(
                md,
                "Skipped: {why}. Install valgrind (Debian: `apt-get install valgrind`) to count instructions."
            );
            return (outcome, md);
        }
        Outcome::Measured(m) => m,
    };
    let _ = writeln!(
        md,
        "New version: `Callouts<HashedWheel>`; original: `Callouts<DifferentialList>` (4.4BSD's `calltodo`, `untimeout` searching it from its head). Each function is called {} times at each point, from a probe that only calls it, after one unmeasured set and cancel; the counts are inclusive (the probe's call included), per call, fitted to a + b·x by least squares where x is the line's variable: t, h, v, e as in the paper, N the callouts outstanding (from 1) for the paper's constants. A line is constant when every point is within {:.0} % of the mean (or {:.0} instructions), linear when it rises with R² ≥ {}. The paper's new softclock is 27 + 20i + 15j + 12k + 54m + 37n; ours varies m, then n, then k (with one timeout expiring), with i = 1 and j = 0: the cell gives the three lines in that order.\n",
        super::CALLS,
        100.0 * super::CONSTANT_SHARE,
        super::CONSTANT_SLACK,
        super::LINEAR_R2
    );
    md.push_str(&table(measured));
    md.push('\n');
    for (what, verdict) in verdicts(measured) {
        let _ = writeln!(md, "- {what}: {verdict}");
    }
    let _ = writeln!(
        md,
        "\nWhat our counts buy beyond the paper's (its kernel's C by gcc 2.4.5 `-O2` on SPARC; ours checked Rust, every index bounds-checked, every handle generation-checked, errors returned instead of trusted), from a callgrind profile of the driver:\n"
    );
    for m in measured {
        let _ = writeln!(
            md,
            "- {} ({}), against {}: {}.",
            m.line.function.name(),
            m.line.version.name(),
            m.line.var,
            m.line.why
        );
    }
    let _ = writeln!(
        md,
        "\n| function | version | x | instructions per call |\n|---|---|---|---|"
    );
    for m in measured {
        let points: Vec<String> = m
            .points
            .iter()
            .map(|(x, y)| format!("{x:.0}: {y:.1}"))
            .collect();
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            m.line.function.name(),
            m.line.version.name(),
            m.line.var,
            points.join(", ")
        );
    }
    let written = std::fs::create_dir_all(out)
        .map_err(|e| format!("cannot create {}: {e}", out.display()))
        .and_then(|()| {
            callwheel_bench::plots::write_panels(
                "Table II: instructions per call against each function's variable (dashed: the paper's count)",
                &charts(measured),
                out,
                "table2",
            )
        });
    match written {
        Ok(_) => {
            let _ = writeln!(
                md,
                "\n![Table II](table2.png)\n\nTable II: {} (and .svg)",
                out.join("table2.png").display()
            );
        }
        Err(e) => {
            eprintln!("error: {e}");
            *failures += 1;
        }
    }
    (outcome, md)
}
