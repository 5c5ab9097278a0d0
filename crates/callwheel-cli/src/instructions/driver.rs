//! The child of `callwheel instructions`: runs under callgrind (`callwheel instructions-driver`)
//! and makes W1's cancel + start pairs through probes, at each number of outstanding timers.
//!
//! A probe (`instructions_probe_<op>_<structure>`) is a function the compiler may not inline
//! that calls the library's `start` or `stop` and nothing else; callgrind collects only inside
//! the probes, so a probe's inclusive count is the library's plus the few instructions of the
//! call itself. The C API's probes are C functions of the benchmark library's C driver, which
//! call `cw_wheel_add` and `cw_wheel_del` as a C program does. The workload's generator, the
//! loop and the setup run outside them. After each
//! point the driver calls [`point_done`](crate::callgrind::point_done), after which callgrind
//! writes a dump, and
//! prints the point's line:
//!
//! ```text
//! callwheel-instructions {"structure":"wheel-unit","n":1000}
//! ```

use callwheel::{Error, Handle, Tick, Timers, Wheel};
use callwheel_bench::c_wheel::CWheel;
use callwheel_bench::workload::{SplitMix64, SEED, W1_CHURN, W1_OUTSTANDING};
use serde::{Deserialize, Serialize};

use super::Structure;

/// The word that starts each point's line.
pub const POINT_TAG: &str = "callwheel-instructions";

/// Cancel + start pairs measured at each point.
pub const PAIRS: u64 = 10_000;

/// Pairs made before the measured ones (outside the probes), so the slab's free list and the
/// caches of the measured slot are in the state W1's timed loop sees.
const WARM_UP: u64 = 100;

/// One point as the driver reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Point {
    /// The structure's name ([`Structure::name`]).
    pub structure: String,
    /// Timers outstanding besides the churned one.
    pub n: u64,
}

/// Defines the probes of one structure: `#[inline(never)]` wrappers that only call the library.
macro_rules! probes {
    ($t:ty, $value:expr, $start:ident, $stop:ident) => {
        #[inline(never)]
        fn $start(s: &mut $t, deadline: Tick, i: u64) -> Result<Handle, Error> {
            s.start(deadline, $value(i))
        }

        #[inline(never)]
        fn $stop(s: &mut $t, handle: Handle) -> bool {
            s.stop(handle).is_some()
        }
    };
}

probes!(
    Wheel<()>,
    |_| (),
    instructions_probe_start_wheel_unit,
    instructions_probe_stop_wheel_unit
);
probes!(
    Wheel<u64>,
    |i| i,
    instructions_probe_start_wheel_u64,
    instructions_probe_stop_wheel_u64
);

/// The probes of one structure.
struct Probes<S> {
    start: fn(&mut S, Tick, u64) -> Result<Handle, Error>,
    stop: fn(&mut S, Handle) -> bool,
}

/// W1 at `n` outstanding timers (as `docs/workloads.md` draws them, seeded as every W1 run),
/// then [`PAIRS`] probed pairs on one more timer. `Err` if a start is refused, a stop misses
/// or the count is wrong after.
fn point<S: Timers<V>, V>(
    mut s: S,
    n: u64,
    value: fn(u64) -> V,
    probes: &Probes<S>,
) -> Result<(), String> {
    let mut rng = SplitMix64::new(SEED);
    for i in 0..n {
        s.start(rng.range(W1_OUTSTANDING.0, W1_OUTSTANDING.1), value(i))
            .map_err(|e| format!("start refused while filling: {e}"))?;
    }
    let mut h = s
        .start(rng.range(W1_CHURN.0, W1_CHURN.1), value(n))
        .map_err(|e| format!("start refused: {e}"))?;
    let mut missed = 0u64;
    for i in 0..WARM_UP {
        missed += u64::from(s.stop(h).is_none());
        h = s
            .start(rng.range(W1_CHURN.0, W1_CHURN.1), value(i))
            .map_err(|e| format!("start refused: {e}"))?;
    }
    for i in 0..PAIRS {
        let deadline = rng.range(W1_CHURN.0, W1_CHURN.1);
        missed += u64::from(!(probes.stop)(&mut s, h));
        h = (probes.start)(&mut s, deadline, i).map_err(|e| format!("start refused: {e}"))?;
    }
    if missed != 0 {
        return Err(format!("{missed} stops did not find their timer"));
    }
    if s.len() as u64 != n + 1 {
        return Err(format!("{} timers pending, expected {}", s.len(), n + 1));
    }
    Ok(())
}

/// Runs one point of `structure`.
fn run_point(structure: Structure, n: u64) -> Result<(), String> {
    match structure {
        Structure::WheelUnit => point(
            Wheel::<()>::new(),
            n,
            |_| (),
            &Probes {
                start: instructions_probe_start_wheel_unit,
                stop: instructions_probe_stop_wheel_unit,
            },
        ),
        Structure::WheelU64 => point(
            Wheel::<u64>::new(),
            n,
            |i| i,
            &Probes {
                start: instructions_probe_start_wheel_u64,
                stop: instructions_probe_stop_wheel_u64,
            },
        ),
        Structure::CWheel => point(
            CWheel::new().map_err(|e| format!("cw_wheel_new failed: {e}"))?,
            n,
            |i| i,
            // The C API's probes are C code (the C driver's), calling the exported functions
            // as a C program does; these closures only reach them and are not counted.
            &Probes {
                start: |s, deadline, i| s.start_from_c(deadline, i),
                stop: CWheel::stop_from_c,
            },
        ),
    }
}

/// Runs every structure at every `n`, printing one line per point. `Err` says what failed.
pub fn run(ns: &[u64]) -> Result<(), String> {
    let mut index = 0;
    for structure in Structure::ALL {
        for &n in ns {
            run_point(structure, n).map_err(|e| format!("{} at N = {n}: {e}", structure.name()))?;
            let point = Point {
                structure: structure.name().to_string(),
                n,
            };
            println!("{}", callwheel_bench::child_line::write(POINT_TAG, &point));
            crate::callgrind::point_done(index);
            index += 1;
        }
    }
    Ok(())
}
