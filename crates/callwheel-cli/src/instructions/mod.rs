//! Instructions per start and stop, counted by callgrind: W1's cancel + start pair on the
//! production wheel (`Wheel<()>` and `Wheel<u64>`) and through the C API (`cw_wheel_add` and
//! `cw_wheel_del`, called from C code as a C program calls them), at each number of outstanding
//! timers.
//!
//! Time per pair on a shared machine moves by tens of percent from run to run; the instructions
//! a pair executes do not. The wheel's target is at most 100 library instructions per pair for
//! `Wheel<()>`, the same at every N. The counts come from a child (`callwheel
//! instructions-driver`, see [`driver`]) run under callgrind, collecting only inside probes that
//! call the library and nothing else, so the workload's generator is not in them; each includes
//! the few instructions of the call into its probe. Without `valgrind` on `PATH` the
//! experiment is skipped, and says so.

pub mod command;
pub mod driver;
pub mod experiment;

use std::collections::HashMap;

use driver::{Point, PAIRS, POINT_TAG};

use crate::callgrind;

/// What the pairs run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Structure {
    /// The production wheel with no value per timer.
    WheelUnit,
    /// The production wheel with a `u64` per timer (what `bench` measures as `wheel`).
    WheelU64,
    /// The C API's caller-driven wheel, `u64` values, called from C.
    CWheel,
}

impl Structure {
    /// Every structure, in the order the driver runs them.
    pub const ALL: [Structure; 3] = [Structure::WheelUnit, Structure::WheelU64, Structure::CWheel];

    /// The name on the point lines and in `results.json`.
    pub fn name(self) -> &'static str {
        match self {
            Structure::WheelUnit => "wheel-unit",
            Structure::WheelU64 => "wheel-u64",
            Structure::CWheel => "c-wheel",
        }
    }

    /// How the report names it.
    pub fn label(self) -> &'static str {
        match self {
            Structure::WheelUnit => "`Wheel<()>`",
            Structure::WheelU64 => "`Wheel<u64>`",
            Structure::CWheel => "C API (`cw_wheel_add` + `cw_wheel_del`)",
        }
    }

    /// The structure a point line names.
    pub fn from_name(name: &str) -> Option<Structure> {
        Structure::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// Instructions per call at one point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Counts {
    /// The structure.
    pub structure: Structure,
    /// Timers outstanding besides the churned one.
    pub n: u64,
    /// Per `start`.
    pub start: f64,
    /// Per `stop`.
    pub stop: f64,
}

impl Counts {
    /// Per cancel + start pair.
    pub fn pair(&self) -> f64 {
        self.start + self.stop
    }
}

/// What a run gave.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Every point's counts, in the driver's order.
    Measured(Vec<Counts>),
    /// Not run, and why (no `valgrind` on `PATH`).
    Skipped(String),
}

/// The marker of the probes' names.
const PROBE_MARKER: &str = "instructions_probe_";

/// Runs the driver under callgrind at every `n` and reads the counts. `Err` says what failed.
pub fn run(ns: &[u64]) -> Result<Outcome, String> {
    let list = ns.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
    let args = ["instructions-driver", "--n", list.as_str()];
    let Some(profile) = callgrind::profile(&args, PROBE_MARKER)? else {
        return Ok(Outcome::Skipped("valgrind is not on PATH".into()));
    };
    counts(&profile).map(Outcome::Measured)
}

/// Each point's counts from the driver's point lines and callgrind's dumps (one per point, in
/// the same order).
fn counts(profile: &callgrind::Profile) -> Result<Vec<Counts>, String> {
    let points = parse_points(&profile.stdout)?;
    let dumps = profile.dumps_of(points.len())?;
    let mut names = callgrind::Names::default();
    let mut out = Vec::with_capacity(points.len());
    for (&(structure, n), text) in points.iter().zip(dumps) {
        let calls = callgrind::calls_to(text, PROBE_MARKER, &mut names)?;
        out.push(Counts {
            structure,
            n,
            start: per_call(&calls, "start", structure, n)?,
            stop: per_call(&calls, "stop", structure, n)?,
        });
    }
    Ok(out)
}

/// Instructions per call of `op`'s probe for `structure`, checking callgrind saw every call.
fn per_call(
    calls: &HashMap<String, callgrind::Calls>,
    op: &str,
    structure: Structure,
    n: u64,
) -> Result<f64, String> {
    // The probes are named after the structure: `instructions_probe_{op}_{name, with _}`.
    let probe = format!("{op}_{}", structure.name().replace('-', "_"));
    let c = calls.get(&probe).copied().unwrap_or_default();
    if c.count != PAIRS {
        return Err(format!(
            "callgrind saw {} calls of {probe} at N = {n}, the driver made {PAIRS}",
            c.count
        ));
    }
    Ok(c.instructions as f64 / c.count as f64)
}

/// The driver's point lines: (structure, n) in order.
fn parse_points(stdout: &str) -> Result<Vec<(Structure, u64)>, String> {
    callgrind::driver_points(stdout, POINT_TAG, |p: Point| {
        Structure::from_name(&p.structure).map(|s| (s, p.n))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dump as callgrind writes it for one point: both probes called `PAIRS` times.
    fn dump(start: u64, stop: u64) -> String {
        format!(
            "positions: line\nevents: Ir\nfn=(1) main\n\
             cfn=(2) callwheel_cli::instructions::driver::instructions_probe_start_wheel_unit\n\
             calls={PAIRS} 0\n1 {}\n\
             cfn=(3) callwheel_cli::instructions::driver::instructions_probe_stop_wheel_unit\n\
             calls={PAIRS} 0\n2 {}\n",
            start * PAIRS,
            stop * PAIRS
        )
    }

    #[test]
    fn counts_pair_each_point_line_with_its_dump() {
        let profile = callgrind::Profile {
            stdout: format!(
                "{POINT_TAG} {{\"structure\":\"wheel-unit\",\"n\":0}}\n\
                 noise\n{POINT_TAG} {{\"structure\":\"wheel-unit\",\"n\":1000}}\n"
            ),
            dumps: vec![dump(80, 45), dump(82, 44)],
        };
        let counts = counts(&profile).unwrap();
        assert_eq!(counts.len(), 2);
        assert_eq!(
            (counts[0].n, counts[0].start, counts[0].stop),
            (0, 80.0, 45.0)
        );
        assert_eq!((counts[1].n, counts[1].pair()), (1000, 126.0));
    }

    #[test]
    fn a_missing_call_or_dump_or_point_is_an_error() {
        let line = format!("{POINT_TAG} {{\"structure\":\"wheel-unit\",\"n\":0}}\n");
        let short = callgrind::Profile {
            stdout: line.clone(),
            dumps: vec![],
        };
        assert!(counts(&short).unwrap_err().contains("dumps"));
        let other = callgrind::Profile {
            stdout: line.replace("wheel-unit", "wheel-u64"),
            dumps: vec![dump(80, 45)],
        };
        assert!(counts(&other)
            .unwrap_err()
            .contains("calls of start_wheel_u64"));
        assert!(parse_points("").is_err());
        assert!(parse_points(&line.replace("wheel-unit", "nosuch")).is_err());
    }
}
