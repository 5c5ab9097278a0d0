//! The Table II reproduction of Costello & Varghese: instructions executed by each timer
//! function, counted by valgrind's callgrind, fitted to the paper's forms.
//!
//! The paper counts the instructions of the longest paths of `hardclock`, `softclock`,
//! `timeout`, `untimeout`, `setcallout` and `unsetcallout` in the new kernel and the original,
//! as a constant or a constant plus a cost per entry traversed (`t` entries of `calltodo`
//! skipped, `h` non-matching entries of a hash chain, ...). Here each function of the callout
//! table runs under callgrind in a child process (`callwheel table2-driver`, see [`driver`]) at
//! several values of its variable, [`driver::CALLS`] calls per point; the inclusive
//! count per call is fitted to `a + b·x` by least squares, and its shape (constant or linear
//! in x) is set beside the paper's:
//!
//! | function | new version (paper) | original (paper) | variable here |
//! |---|---|---|---|
//! | `hardclock` | 37 | 34 + 11v | N outstanding (new); v overdue at the head of `calltodo` (original) |
//! | `softclock` | 27 + 20i + 15j + 12k + 54m + 37n | 27 + 28e | m, n, k with i = 1, j = 0 (new); e (original) |
//! | `timeout` | 81 | 46 + 11t | N (new); t skipped in the walk of `calltodo` (original) |
//! | `untimeout` | 80 + 11h | 45 + 11t | h non-matching in the hash chain (new); t skipped in the search of `calltodo` (original) |
//! | `setcallout` | 60 | | N |
//! | `unsetcallout` | 55 | | N |
//!
//! Counts, not times: they do not depend on the machine's load. The counts include the few
//! instructions of the call into the probe. Without `valgrind` on `PATH` the experiment is
//! skipped, and says so.

pub mod command;
pub mod driver;

pub mod experiment;
pub mod report;

use driver::{Point, Scenario, CALLS, POINT_TAG};

use crate::callgrind;
use callwheel_bench::results::Figures;

/// The functions of Table II.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Function {
    /// The clock interrupt.
    Hardclock,
    /// The software interrupt that runs due callouts.
    Softclock,
    /// Set a callout by (function, argument).
    Timeout,
    /// Cancel a callout by (function, argument).
    Untimeout,
    /// Set a callout, returning a handle.
    Setcallout,
    /// Cancel a callout by handle.
    Unsetcallout,
}

impl Function {
    /// Every function, in the paper's order.
    pub const ALL: [Function; 6] = [
        Function::Hardclock,
        Function::Softclock,
        Function::Timeout,
        Function::Untimeout,
        Function::Setcallout,
        Function::Unsetcallout,
    ];

    /// The function's name.
    pub fn name(self) -> &'static str {
        match self {
            Function::Hardclock => "hardclock",
            Function::Softclock => "softclock",
            Function::Timeout => "timeout",
            Function::Untimeout => "untimeout",
            Function::Setcallout => "setcallout",
            Function::Unsetcallout => "unsetcallout",
        }
    }
}

/// The paper's two columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// Costello & Varghese's callwheel: here `Callouts<HashedWheel>`.
    New,
    /// 4.4BSD's `calltodo`: here `Callouts<DifferentialList>`.
    Original,
}

impl Version {
    /// The column's name.
    pub fn name(self) -> &'static str {
        match self {
            Version::New => "new",
            Version::Original => "original",
        }
    }
}

/// One measured line: a function of one version against one variable.
#[derive(Clone, Copy, Debug)]
pub struct Line {
    /// The function.
    pub function: Function,
    /// Which column.
    pub version: Version,
    /// The variable's letter (the paper's, or `N` for the callouts outstanding).
    pub var: &'static str,
    /// What the variable counts.
    pub var_desc: &'static str,
    /// The paper's count, as printed.
    pub paper: &'static str,
    /// The paper's count as `a + b·var` at this line's settings (`i` = 1, `j` = 0, the other
    /// variables 0 but `m` = 1 for `k`).
    pub paper_fit: (f64, f64),
    /// The probe's name in the driver, after `table2_probe_`.
    pub probe: &'static str,
    /// The scenario that measures it.
    pub scenario: Scenario,
    /// Why our count is larger than the paper's (its kernel's C, gcc 2.4.5 `-O2` on SPARC):
    /// what the instructions beyond it buy in checked Rust, from a callgrind profile of the
    /// driver.
    pub why: &'static str,
}

/// A [`Line`] from (function, version), (variable, what it counts), (paper's count, as
/// `a + b·var`), (the probe, the scenario) and why ours differs.
const fn line(
    (function, version): (Function, Version),
    (var, var_desc): (&'static str, &'static str),
    (paper, paper_fit): (&'static str, (f64, f64)),
    (probe, scenario): (&'static str, Scenario),
    why: &'static str,
) -> Line {
    Line {
        function,
        version,
        var,
        var_desc,
        paper,
        paper_fit,
        probe,
        scenario,
        why,
    }
}

const SOFTCLOCK_NEW: &str = "27 + 20i + 15j + 12k + 54m + 37n";

/// Every line measured, in the paper's order.
pub const LINES: [Line; 12] = {
    use Function::*;
    use Scenario::*;
    use Version::*;
    [
        line(
            (Hardclock, New),
            ("N", "callouts outstanding"),
            ("37", (37.0, 0.0)),
            ("hardclock_new", NewOutstanding),
            "the table's interrupt also looks at the three queues the paper's kernel has no equivalent of (callouts handed to a batch, asynchronous drains, the direct-execution heap), guards `ticks` against the end of time and counts the interrupt; the bucket test itself is one busy-mark word",
        ),
        line(
            (Hardclock, Original),
            ("v", "callouts overdue at the head of calltodo"),
            ("34 + 11v", (34.0, 11.0)),
            ("hardclock_old", OldOverdue),
            "per overdue entry: the arena node is reached by a bounds-checked index, not a pointer, `c_time` is read, decremented with saturation and written back, and the next link read; the constant adds the queues and guards of the new hardclock",
        ),
        line(
            (Softclock, New),
            ("m", "timeouts expiring (i = 1)"),
            (SOFTCLOCK_NEW, (47.0, 54.0)),
            ("softclock_new", NewExpireTimeouts),
            "per callout: a step of the shared tick loop (phase, budget, resumption point), the arena node freed with its generation bumped, the record taken from the callout hash, its state (pending, running, drain) changed for callout_stop's answers, the handler called through a closure under a panic guard, statistics",
        ),
        line(
            (Softclock, New),
            ("n", "setcallouts expiring (i = 1)"),
            (SOFTCLOCK_NEW, (47.0, 37.0)),
            ("softclock_new", NewExpireHandles),
            "the same per-callout path as a timeout's but no hash removal (the difference between the two slopes)",
        ),
        line(
            (Softclock, New),
            ("k", "later callouts in the bucket (i = m = 1)"),
            (SOFTCLOCK_NEW, (101.0, 12.0)),
            ("softclock_new", NewBucket),
            "per later callout in the bucket: a step of the tick loop, budget counted and position kept (Costello's nextsoftcheck), and the node's deadline compared through an indexed load",
        ),
        line(
            (Softclock, Original),
            ("e", "callouts expiring"),
            ("27 + 28e", (27.0, 28.0)),
            ("softclock_old", OldExpire),
            "the per-callout path of the new softclock, less the hash (calltodo has none), plus the c_time fold into the successor",
        ),
        line(
            (Timeout, New),
            ("N", "callouts outstanding"),
            ("81", (81.0, 0.0)),
            ("timeout_new", NewOutstanding),
            "the (function, argument) hash and its chain, a record from the pool with a generation, range and end-of-time checks that return an error where the kernel trusted its caller, the hashed wheel's start (arena slot, bucket link, busy mark), the load check by which the wheel grows with the table, statistics",
        ),
        line(
            (Timeout, Original),
            ("t", "calltodo entries skipped"),
            ("46 + 11t", (46.0, 11.0)),
            ("timeout_old", OldList),
            "per entry skipped: `c_time` through a bounds-checked index, the comparison, the subtraction, the next link, and the count of skipped entries the table keeps (Table II's t itself)",
        ),
        line(
            (Untimeout, New),
            ("h", "non-matching entries in the hash chain"),
            ("80 + 11h", (80.0, 11.0)),
            ("untimeout_new", NewChain),
            "per chain entry: the link through a bounds-checked index and both words of (function, argument) compared; the constant adds the record's state change, the scheme's stop (handle and generation check, unlink, busy mark) and the record's release",
        ),
        line(
            (Untimeout, Original),
            ("t", "calltodo entries skipped"),
            ("45 + 11t", (45.0, 11.0)),
            ("untimeout_old", OldList),
            "per entry: the search's closure resolves the arena node to its record and compares (function, argument) through the pool, two bounds-checked loads, and counts the entry",
        ),
        line(
            (Setcallout, New),
            ("N", "callouts outstanding"),
            ("60", (60.0, 0.0)),
            ("setcallout_new", NewOutstanding),
            "the timeout's path without the hash, plus the handle's generation",
        ),
        line(
            (Unsetcallout, New),
            ("N", "callouts outstanding"),
            ("55", (55.0, 0.0)),
            ("unsetcallout_new", NewOutstanding),
            "the handle's index and generation checked, the record's state changed so that a cancel during its handler reports what callout_stop must, the scheme's stop (unlink, busy mark cleared when the bucket empties, slot freed)",
        ),
    ]
};

/// The marker of the probes' names.
const PROBE_MARKER: &str = "table2_probe_";

/// A least-squares line `a + b·x` and how well it fits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    /// The constant.
    pub a: f64,
    /// The cost per unit of the variable.
    pub b: f64,
    /// The coefficient of determination (1 when every point is on the line, or all are equal).
    pub r2: f64,
}

impl Fit {
    /// The least-squares line through `points` (x, y).
    pub fn of(points: &[(f64, f64)]) -> Fit {
        let n = points.len().max(1) as f64;
        let (mx, my) = points
            .iter()
            .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x / n, b + y / n));
        let (sxy, sxx, syy) = points
            .iter()
            .fold((0.0, 0.0, 0.0), |(sxy, sxx, syy), &(x, y)| {
                (
                    sxy + (x - mx) * (y - my),
                    sxx + (x - mx) * (x - mx),
                    syy + (y - my) * (y - my),
                )
            });
        let b = if sxx > 0.0 { sxy / sxx } else { 0.0 };
        let residual: f64 = points
            .iter()
            .map(|&(x, y)| (y - my - b * (x - mx)).powi(2))
            .sum();
        let r2 = if syy > 0.0 { 1.0 - residual / syy } else { 1.0 };
        Fit {
            a: my - b * mx,
            b,
            r2,
        }
    }
}

/// How far a constant's counts may stray from their mean: a tenth of it, or
/// [`CONSTANT_SLACK`] instructions when that is more (a branch taken at one point and not at
/// another).
pub const CONSTANT_SHARE: f64 = 0.1;

/// See [`CONSTANT_SHARE`].
pub const CONSTANT_SLACK: f64 = 4.0;

/// The R² a line's fit needs to be called linear.
pub const LINEAR_R2: f64 = 0.98;

/// What a line's counts look like against its variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Every point within [`CONSTANT_SHARE`] of the mean (or [`CONSTANT_SLACK`] instructions).
    Constant,
    /// Grows, on a line (R² at least [`LINEAR_R2`]).
    Linear,
    /// Neither.
    Other,
}

impl Shape {
    /// The shape of the counts `points` fitted by `fit`.
    pub fn of(points: &[(f64, f64)], fit: &Fit) -> Shape {
        let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len().max(1) as f64;
        let slack = (CONSTANT_SHARE * mean.abs()).max(CONSTANT_SLACK);
        if points.iter().all(|p| (p.1 - mean).abs() <= slack) {
            Shape::Constant
        } else if fit.b > 0.0 && fit.r2 >= LINEAR_R2 {
            Shape::Linear
        } else {
            Shape::Other
        }
    }

    /// The paper's: linear when it has a cost per unit of the variable.
    pub fn of_paper(line: &Line) -> Shape {
        if line.paper_fit.1 == 0.0 {
            Shape::Constant
        } else {
            Shape::Linear
        }
    }
}

/// One line's counts.
#[derive(Clone, Debug)]
pub struct Measured {
    /// The line.
    pub line: Line,
    /// (variable, instructions per call), in the variable's order.
    pub points: Vec<(f64, f64)>,
    /// The fitted line.
    pub fit: Fit,
    /// Its shape.
    pub shape: Shape,
}

/// What a run gave.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Every line's counts.
    Measured(Vec<Measured>),
    /// Not run, and why (no `valgrind` on `PATH`).
    Skipped(String),
}

/// Runs the driver under callgrind (every point of every scenario, in one process) and reads
/// the counts. `Err` says what failed.
pub fn run(quick: bool) -> Result<Outcome, String> {
    let args: &[&str] = if quick {
        &["table2-driver", "--tiny"]
    } else {
        &["table2-driver"]
    };
    let Some(profile) = callgrind::profile(args, PROBE_MARKER)? else {
        return Ok(Outcome::Skipped("valgrind is not on PATH".into()));
    };
    measure(&profile).map(Outcome::Measured)
}

/// Each line's counts from the driver's points and callgrind's dumps.
fn measure(profile: &callgrind::Profile) -> Result<Vec<Measured>, String> {
    let points = parse_points(&profile.stdout)?;
    let dumps = profile.dumps_of(points.len())?;
    let mut names = callgrind::Names::default();
    let mut measured: Vec<Measured> = LINES
        .iter()
        .map(|&line| Measured {
            line,
            points: Vec::new(),
            fit: Fit::of(&[]),
            shape: Shape::Constant,
        })
        .collect();
    for ((scenario, x), text) in points.iter().zip(dumps) {
        let calls = callgrind::calls_to(text, PROBE_MARKER, &mut names)?;
        for m in measured.iter_mut().filter(|m| m.line.scenario == *scenario) {
            let c = calls.get(m.line.probe).copied().unwrap_or_default();
            if c.count != CALLS {
                return Err(format!(
                    "callgrind saw {} calls of {} at {} = {x}, the driver made {CALLS}",
                    c.count, m.line.probe, m.line.var
                ));
            }
            m.points.push((*x, c.instructions as f64 / c.count as f64));
        }
    }
    for m in &mut measured {
        m.fit = Fit::of(&m.points);
        m.shape = Shape::of(&m.points, &m.fit);
    }
    Ok(measured)
}

/// The driver's point lines: (scenario, x) in order.
fn parse_points(stdout: &str) -> Result<Vec<(Scenario, f64)>, String> {
    callgrind::driver_points(stdout, POINT_TAG, |p: Point| {
        Scenario::from_name(&p.scenario).map(|s| (s, p.x))
    })
}

/// The figures of `measured` for `results.json`: instructions per call at each point of each
/// line, and the fitted line's `a` and `b`.
pub fn figures(measured: &[Measured], figures: &mut Figures) {
    for m in measured {
        let structure = format!("{} {}", m.line.function.name(), m.line.version.name());
        for &(x, y) in &m.points {
            let case = format!("{}={x}", m.line.var);
            figures.figure("table2", &structure, &case, "instructions", y);
        }
        let case = format!("fit in {}", m.line.var);
        figures.figure("table2", &structure, &case, "a", m.fit.a);
        figures.figure("table2", &structure, &case, "b", m.fit.b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_fits_exactly_and_a_flat_one_is_constant() {
        let line: Vec<(f64, f64)> = (0..5).map(|x| (x as f64, 45.0 + 11.0 * x as f64)).collect();
        let fit = Fit::of(&line);
        assert!(
            (fit.a - 45.0).abs() < 1e-9 && (fit.b - 11.0).abs() < 1e-9,
            "{fit:?}"
        );
        assert!((fit.r2 - 1.0).abs() < 1e-9);
        assert_eq!(Shape::of(&line, &fit), Shape::Linear);
        let flat = [(0.0, 81.0), (64.0, 82.0), (4096.0, 81.0)];
        assert_eq!(Shape::of(&flat, &Fit::of(&flat)), Shape::Constant);
        let step = [(0.0, 10.0), (1.0, 100.0), (2.0, 10.0), (3.0, 100.0)];
        assert_eq!(Shape::of(&step, &Fit::of(&step)), Shape::Other);
        // A small count within the slack is constant; one that falls by a fifth is not.
        let small = [(1.0, 40.0), (16.0, 43.0), (256.0, 40.0)];
        assert_eq!(Shape::of(&small, &Fit::of(&small)), Shape::Constant);
        let falling = [(1.0, 59.0), (64.0, 56.0), (1024.0, 48.0), (4096.0, 48.0)];
        assert_eq!(Shape::of(&falling, &Fit::of(&falling)), Shape::Other);
        // A line with one point far off it is not linear.
        let bent = [(0.0, 10.0), (1.0, 20.0), (2.0, 30.0), (3.0, 100.0)];
        assert_eq!(Shape::of(&bent, &Fit::of(&bent)), Shape::Other);
    }

    #[test]
    fn every_line_has_the_papers_shape_and_a_probe() {
        for l in &LINES {
            assert!(!l.probe.is_empty() && !l.paper.is_empty());
            let linear = l.paper.contains(l.var) && l.var != "N";
            assert_eq!(Shape::of_paper(l) == Shape::Linear, linear, "{l:?}");
        }
    }

    #[test]
    fn point_lines_parse() {
        let line = r#"callwheel-table2 {"scenario":"old-list","x":128.0}"#;
        let points = parse_points(&format!("noise\n{line}\n")).unwrap();
        assert_eq!(points, [(Scenario::OldList, 128.0)]);
        assert!(parse_points("").is_err());
        assert!(parse_points(r#"callwheel-table2 {"scenario":"nosuch","x":1.0}"#).is_err());
        assert!(parse_points(r#"callwheel-table2 {"scenario":"old-list","x":"z"}"#).is_err());
        assert!(parse_points("callwheel-table2 scenario=old-list x=128").is_err());
    }
}
