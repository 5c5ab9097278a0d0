//! The child of `callwheel table2`: runs under callgrind (`callwheel table2-driver`) and calls
//! each measured function a known number of times at each point of each scenario.
//!
//! Every measured call goes through a probe, a function of this module that the compiler may
//! not inline (`table2_probe_<function>_<version>`), which calls the library's function and
//! nothing else: callgrind collects only inside the probes (`--toggle-collect`), so a probe's
//! inclusive count is the library function's plus the few instructions of the call itself.
//! The library's own functions are untouched. After each point the driver calls
//! [`point_done`](crate::callgrind::point_done), after which callgrind writes a dump
//! (`--dump-after`): dump `i` holds
//! point `i`'s counts alone. The driver prints one line per point, in the same order, the tag
//! and a [`Point`] as JSON ([`child_line`](callwheel_bench::child_line)):
//!
//! ```text
//! callwheel-table2 {"scenario":"old-list","x":128.0}
//! ```
//!
//! where `x` is the point's value of the scenario's variable; for `t` and `h` it is counted by
//! the table itself (`Stats::traversed`), not assumed.

use std::hash::{Hash, Hasher};
use std::hint::black_box;

use callwheel_callout::{Backing, Callouts, Config, Handle};
use callwheel_schemes::differential_list::DifferentialList;
use callwheel_schemes::hashed_wheel::HashedWheel;
use serde::{Deserialize, Serialize};

/// The word that starts each point's line.
pub const POINT_TAG: &str = "callwheel-table2";

/// One point as the driver reports it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Point {
    /// The scenario's name ([`Scenario::name`]).
    pub scenario: String,
    /// The point's value of the scenario's variable.
    pub x: f64,
}

/// Calls of each measured function at each point.
pub const CALLS: u64 = 32;

/// Outstanding callouts are due from this many ticks on; the measured ones after them all.
const FAR: i64 = 1 << 30;

/// A callout's (function, argument). Its hash is the function's alone, so callouts of one
/// function with other arguments share a hash chain without matching: that is how the driver
/// puts Table II's `h` callouts in the measured callout's bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call {
    func: u32,
    arg: u64,
}

impl Hash for Call {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.func.hash(state);
    }
}

/// The old callout: 4.4BSD's `calltodo`.
type Old = Callouts<DifferentialList<u32>, Call>;
/// The new callout: Costello & Varghese's callwheel (Scheme 6).
type New = Callouts<HashedWheel<u32>, Call>;

/// Defines the probes of one table type: `#[inline(never)]` wrappers that only call the
/// library.
macro_rules! probes {
    ($table:ty, $hardclock:ident, $softclock:ident, $timeout:ident, $untimeout:ident) => {
        #[inline(never)]
        fn $hardclock(t: &mut $table) -> bool {
            t.hardclock()
        }

        #[inline(never)]
        fn $softclock(t: &mut $table) -> usize {
            t.softclock(|_, call| {
                black_box(call);
            })
        }

        #[inline(never)]
        fn $timeout(t: &mut $table, call: Call, ticks: i64) -> Result<(), String> {
            t.timeout(call, ticks).map_err(|e| e.to_string())
        }

        #[inline(never)]
        fn $untimeout(t: &mut $table, call: Call) -> bool {
            t.untimeout(call)
        }
    };
}

probes!(
    Old,
    table2_probe_hardclock_old,
    table2_probe_softclock_old,
    table2_probe_timeout_old,
    table2_probe_untimeout_old
);
probes!(
    New,
    table2_probe_hardclock_new,
    table2_probe_softclock_new,
    table2_probe_timeout_new,
    table2_probe_untimeout_new
);

#[inline(never)]
fn table2_probe_setcallout_new(t: &mut New, call: Call, ticks: i64) -> Result<Handle, String> {
    t.setcallout(call, ticks).map_err(|e| e.to_string())
}

#[inline(never)]
fn table2_probe_unsetcallout_new(t: &mut New, handle: Handle) -> Result<bool, String> {
    t.unsetcallout(handle).map_err(|e| e.to_string())
}

/// How a point is set up, and which functions it measures against which variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// The new callout with N callouts outstanding far ahead: `timeout` + `untimeout`,
    /// `setcallout` + `unsetcallout` pairs of one more, and `hardclock` ticks (x = N).
    NewOutstanding,
    /// The new callout with `h` callouts in the measured one's hash chain: `timeout` +
    /// `untimeout` pairs (x = h, counted).
    NewChain,
    /// The old callout with `t` callouts due before the measured one: `timeout` + `untimeout`
    /// pairs, each walking past all of them (x = t, counted).
    OldList,
    /// The old callout with `v` callouts overdue at the head of `calltodo` (`softclock` has
    /// not run): `hardclock` ticks (x = v).
    OldOverdue,
    /// The old callout: `softclock` after a tick at which `e` callouts expire (x = e).
    OldExpire,
    /// The new callout: `softclock` after a tick at which `m` timeouts expire (x = m).
    NewExpireTimeouts,
    /// The new callout: `softclock` after a tick at which `n` setcallouts expire (x = n).
    NewExpireHandles,
    /// The new callout: `softclock` after a tick at which one timeout expires and `k` later
    /// ones share its bucket (x = k).
    NewBucket,
}

impl Scenario {
    /// Every scenario, in the order the driver runs them.
    pub const ALL: [Scenario; 8] = [
        Scenario::NewOutstanding,
        Scenario::NewChain,
        Scenario::OldList,
        Scenario::OldOverdue,
        Scenario::OldExpire,
        Scenario::NewExpireTimeouts,
        Scenario::NewExpireHandles,
        Scenario::NewBucket,
    ];

    /// The name on the point lines.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::NewOutstanding => "new-outstanding",
            Scenario::NewChain => "new-chain",
            Scenario::OldList => "old-list",
            Scenario::OldOverdue => "old-overdue",
            Scenario::OldExpire => "old-expire",
            Scenario::NewExpireTimeouts => "new-expire-timeouts",
            Scenario::NewExpireHandles => "new-expire-handles",
            Scenario::NewBucket => "new-bucket",
        }
    }

    /// The scenario a point line names.
    pub fn from_name(name: &str) -> Option<Scenario> {
        Scenario::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The values of the variable, the first four with `quick`: enough that one odd point
    /// cannot make a line look flat or a constant look like a line.
    pub fn xs(self, quick: bool) -> &'static [u64] {
        let all: &'static [u64] = match self {
            // From 1: with no callout at all, hardclock's query answers at once.
            Scenario::NewOutstanding => &[1, 16, 256, 1024, 4096, 16384],
            Scenario::NewChain | Scenario::NewBucket => &[0, 1, 2, 4, 6, 8],
            Scenario::OldList => &[0, 8, 32, 64, 128, 256],
            Scenario::OldOverdue
            | Scenario::OldExpire
            | Scenario::NewExpireTimeouts
            | Scenario::NewExpireHandles => &[1, 2, 4, 8, 12, 16],
        };
        if quick {
            &all[..4]
        } else {
            all
        }
    }
}

/// A table with room for `n` more callouts; a hashed wheel sized as Costello & Varghese size
/// the callwheel to the callout table (a power of two at least as large, here at least 1024
/// buckets, so no scenario rebuilds it), arming every callout exactly, as their kernels did.
fn config(n: u64) -> Config {
    Config {
        calloutsize: n as usize + 64,
        deviation_percent: 0,
        ..Config::default()
    }
}

fn old_table(n: u64) -> Result<Old, String> {
    Callouts::with_config(DifferentialList::new(), config(n)).map_err(|e| e.to_string())
}

fn new_table(n: u64) -> Result<New, String> {
    let bits = n.max(1024).next_power_of_two().trailing_zeros();
    let wheel = HashedWheel::new(bits).map_err(|e| e.to_string())?;
    Callouts::with_config(wheel, config(n)).map_err(|e| e.to_string())
}

/// Sets `n` timeouts due far ahead, latest first (so the old list's inserts land at its head
/// and the setup stays O(n)); `func(i)` names the i-th one's function.
fn fill<S: Backing>(
    t: &mut Callouts<S, Call>,
    n: u64,
    func: impl Fn(u64) -> u32,
) -> Result<(), String> {
    for i in 0..n {
        let call = Call {
            func: func(i),
            arg: i,
        };
        t.timeout(call, FAR + 3 * (n - i) as i64)
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Sets `n` timeouts due far ahead in the new table, spread over every bucket but the first
/// [`OUT_OF_THE_WAY`]: the measured calls and ticks use those, so each of them takes the same
/// path at every N (a tick whose bucket holds a later rotation's callout asks for `softclock`,
/// a shorter path than an idle tick's: mixing the two made the count vary with how many
/// measured ticks met one).
fn spread(t: &mut New, n: u64) -> Result<(), String> {
    let buckets = t.scheme().size() as u64;
    let span = buckets - OUT_OF_THE_WAY;
    for i in 0..n {
        let call = Call {
            func: 1000 + i as u32,
            arg: i,
        };
        let deadline = FAR as u64 + buckets * (1 + i / span) + OUT_OF_THE_WAY + i % span;
        t.timeout(call, deadline as i64)
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The buckets the outstanding callouts of [`spread`] leave empty: more than the measured
/// calls use.
const OUT_OF_THE_WAY: u64 = 2 * CALLS;

fn check(ok: bool, what: &str) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(format!("table2 driver: {what}"))
    }
}

/// The measured callout: function 1 (2 in the hash-chain scenario, where the others are 2's).
const EXTRA: Call = Call {
    func: 1,
    arg: u64::MAX,
};

/// One `timeout` + `untimeout` pair of the measured callout before the measured ones, so
/// that a growth of the hash the last outstanding callout made due (the hash doubles its
/// buckets when its callouts reach their number: O(N), once) is not in the counts.
fn warm_up<S: Backing>(t: &mut Callouts<S, Call>) -> Result<(), String> {
    t.timeout(EXTRA, 3 * FAR).map_err(|e| e.to_string())?;
    check(t.untimeout(EXTRA), "untimeout missed")
}

/// Runs one point; returns the value of its variable.
fn point(scenario: Scenario, x: u64) -> Result<f64, String> {
    let base = 3 * FAR;
    match scenario {
        Scenario::NewOutstanding => {
            let mut t = new_table(x)?;
            spread(&mut t, x)?;
            warm_up(&mut t)?;
            let h = t.setcallout(EXTRA, base).map_err(|e| e.to_string())?;
            check(t.unsetcallout(h) == Ok(true), "unset missed")?;
            for i in 0..CALLS as i64 {
                table2_probe_timeout_new(&mut t, EXTRA, base + i)?;
                check(
                    table2_probe_untimeout_new(&mut t, EXTRA),
                    "untimeout missed",
                )?;
            }
            for i in 0..CALLS as i64 {
                let h = table2_probe_setcallout_new(&mut t, EXTRA, base + i)?;
                check(table2_probe_unsetcallout_new(&mut t, h)?, "unset missed")?;
            }
            for _ in 0..CALLS {
                check(
                    !table2_probe_hardclock_new(&mut t),
                    "a tick's bucket was busy",
                )?;
            }
            check(t.pending() as u64 == x, "a callout was lost")?;
            Ok(x as f64)
        }
        Scenario::NewChain => {
            let mut t = new_table(x)?;
            fill(&mut t, x, |_| 2)?;
            let extra = Call { func: 2, ..EXTRA };
            t.timeout(extra, base).map_err(|e| e.to_string())?;
            check(t.untimeout(extra), "untimeout missed")?;
            let mut compared = 0;
            for i in 0..CALLS as i64 {
                table2_probe_timeout_new(&mut t, extra, base + i)?;
                let before = t.stats().traversed;
                check(
                    table2_probe_untimeout_new(&mut t, extra),
                    "untimeout missed",
                )?;
                compared += t.stats().traversed - before;
            }
            // The chain's entries compared, less the match: Table II's h.
            Ok(compared as f64 / CALLS as f64 - 1.0)
        }
        Scenario::OldList => {
            let mut t = old_table(x)?;
            fill(&mut t, x, |i| 1000 + i as u32)?;
            warm_up(&mut t)?;
            let before = t.stats().traversed;
            for i in 0..CALLS as i64 {
                table2_probe_timeout_old(&mut t, EXTRA, base + i)?;
                check(
                    table2_probe_untimeout_old(&mut t, EXTRA),
                    "untimeout missed",
                )?;
            }
            // Entries skipped per call, the insert's and the search's alike: Table II's t.
            Ok((t.stats().traversed - before) as f64 / (2 * CALLS) as f64)
        }
        Scenario::OldOverdue => {
            let mut t = old_table(x)?;
            for i in 0..x {
                t.timeout(Call { func: 3, arg: i }, 1)
                    .map_err(|e| e.to_string())?;
            }
            t.hardclock();
            for _ in 0..CALLS {
                check(table2_probe_hardclock_old(&mut t), "nothing was due")?;
            }
            check(t.pending() as u64 == x, "a callout ran")?;
            Ok(x as f64)
        }
        Scenario::OldExpire => {
            let mut t = old_table(x)?;
            for _ in 0..CALLS {
                for i in 0..x {
                    t.timeout(Call { func: 3, arg: i }, 1)
                        .map_err(|e| e.to_string())?;
                }
                t.hardclock();
                check(
                    table2_probe_softclock_old(&mut t) as u64 == x,
                    "wrong count",
                )?;
            }
            Ok(x as f64)
        }
        Scenario::NewExpireTimeouts | Scenario::NewExpireHandles => {
            let mut t = new_table(x)?;
            for _ in 0..CALLS {
                for i in 0..x {
                    let call = Call { func: 3, arg: i };
                    if scenario == Scenario::NewExpireTimeouts {
                        t.timeout(call, 1).map_err(|e| e.to_string())?;
                    } else {
                        t.setcallout(call, 1).map_err(|e| e.to_string())?;
                    }
                }
                check(t.hardclock(), "nothing was due")?;
                check(
                    table2_probe_softclock_new(&mut t) as u64 == x,
                    "wrong count",
                )?;
            }
            Ok(x as f64)
        }
        Scenario::NewBucket => {
            let mut t = new_table(CALLS * (x + 1))?;
            let buckets = t.scheme().size() as i64;
            for _ in 0..CALLS {
                t.timeout(Call { func: 3, arg: 0 }, 1)
                    .map_err(|e| e.to_string())?;
                for i in 0..x {
                    // One rotation later: the same bucket, not due.
                    t.timeout(Call { func: 4, arg: i }, 1 + buckets)
                        .map_err(|e| e.to_string())?;
                }
                check(t.hardclock(), "nothing was due")?;
                check(table2_probe_softclock_new(&mut t) == 1, "wrong count")?;
            }
            Ok(x as f64)
        }
    }
}

/// Runs every point of every scenario, printing one line per point. `Err` says what failed.
pub fn run(quick: bool) -> Result<(), String> {
    let mut index = 0;
    for scenario in Scenario::ALL {
        for &x in scenario.xs(quick) {
            let measured = point(scenario, x)?;
            let point = Point {
                scenario: scenario.name().to_string(),
                x: measured,
            };
            println!("{}", callwheel_bench::child_line::write(POINT_TAG, &point));
            crate::callgrind::point_done(index);
            index += 1;
        }
    }
    Ok(())
}
