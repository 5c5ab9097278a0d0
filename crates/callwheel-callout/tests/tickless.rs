//! The tickless mode (calloutng's `callout_process` and event window): callouts armed with
//! `callout_reset_sbt_on` and a precision, driven only by interrupts at the end of the event
//! window [`Callouts::next_event`] names, run each inside its window, never early, within 5 % of
//! the fewest instants that stab every window (on the production wheel); with no precision they
//! need one interrupt per distinct deadline. The tick-driven mode is not used at all.

use callwheel::time::Sbt;
use callwheel::{stabbing_optimum, Tick, Wheel};
use callwheel_callout::flags::{c_prel, C_DIRECT_EXEC};
use callwheel_callout::{Callouts, Config};

mod events;
use events::run_by_events;

/// A nanosecond tick: the table's time is the caller's clock in nanoseconds.
const HZ: u32 = 1_000_000_000;

/// A nanosecond table whose callouts get no default precision: the windows here are the ones
/// each test asks for (the default deviation has its own tests in `precision.rs`).
fn table() -> Callouts<Wheel<u32>, usize> {
    let config = Config {
        hz: HZ,
        deviation_percent: 0,
        ..Config::default()
    };
    Callouts::with_config(Wheel::new(), config).unwrap()
}

/// SplitMix64, so each run is the same.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// What one run did: interrupts taken, and each callout's window and the tick it ran at.
struct Run {
    interrupts: u64,
    windows: Vec<(Tick, Tick)>,
    ran_at: Vec<Option<Tick>>,
}

/// Arms `n` callouts at random relative times up to 100 ms, each with the precision
/// `precision(sbt)` (and the flags `flags(i)`), then drives the table by its event window
/// alone, taking each interrupt at the window's end.
fn run(n: usize, precision: impl Fn(Sbt) -> (Sbt, u32), flags: impl Fn(usize) -> u32) -> Run {
    let mut t = table();
    let mut rng = Rng(7);
    let start: Tick = 5_000_000_000; // the clock need not start at 0
    assert!(!t.callout_process(start));
    let mut windows = Vec::with_capacity(n);
    for i in 0..n {
        let h = t.callout_init().unwrap();
        let sbt = Sbt::from_nanos(1 + (rng.next() % 100_000_000) as i64);
        let (explicit, prel) = precision(sbt);
        let flags = flags(i) | prel;
        assert!(!t
            .callout_reset_sbt_on(h, sbt, explicit, i, -1, flags)
            .unwrap());
        // The window the documentation promises: the deadline rounded up to a tick (the exact
        // ceiling of sbt * hz / 2^32), the precision (or interval / 2^n for C_PREL(n), if
        // larger) rounded down.
        let deadline = start + sbt.to_ticks_ceil(HZ).unwrap().max(1);
        let mut asked = explicit;
        if let Some(n) = callwheel_callout::flags::c_prelget(flags) {
            asked = asked.max(Sbt::from_raw(sbt.as_raw() >> n));
        }
        let tolerance = if flags & C_DIRECT_EXEC != 0 {
            0
        } else {
            ((asked.as_raw() as u128 * u128::from(HZ)) >> 32) as Tick
        };
        windows.push((deadline, deadline + tolerance));
    }
    let (ran_at, interrupts) = run_by_events(&mut t, n, 2 * n);
    assert_eq!(t.pending(), 0);
    assert_eq!(
        t.stats().hardclocks,
        0,
        "the tickless run took a clock tick"
    );
    Run {
        interrupts: interrupts as u64,
        windows,
        ran_at,
    }
}

fn every_callout_ran_inside_its_window(r: &Run) {
    for (i, (&(d, e), at)) in r.windows.iter().zip(&r.ran_at).enumerate() {
        let at = at.unwrap_or_else(|| panic!("callout {i} never ran"));
        assert!(at >= d, "callout {i} ran at {at}, before its deadline {d}");
        assert!(
            at <= e,
            "callout {i} ran at {at}, after its window [{d}, {e}]"
        );
    }
}

/// The interrupts a run took: at least the fewest instants that stab every window, and within
/// 5 % of them (a tolerant callout runs at the wheel's firing instant for its window, so an
/// interrupt serves the windows whose instant has come, not all that contain it).
fn near_the_optimum(r: &Run) {
    let optimum = stabbing_optimum(&r.windows);
    assert!(
        r.interrupts >= optimum && r.interrupts * 100 <= optimum * 105,
        "{} interrupts, optimum {optimum}",
        r.interrupts
    );
}

#[test]
fn precision_coalesces_near_the_optimum_and_keeps_every_window() {
    let n = 5_000;
    // 5 % of each interval as an explicit precision.
    let r = run(n, |sbt| (Sbt::from_raw(sbt.as_raw() / 20), 0), |_| 0);
    every_callout_ran_inside_its_window(&r);
    near_the_optimum(&r);
    // The same callouts without precision need an interrupt per distinct deadline: the
    // precision is what removed the others.
    let exact = run(n, |_| (Sbt::ZERO, 0), |_| 0);
    every_callout_ran_inside_its_window(&exact);
    let mut deadlines: Vec<Tick> = exact.windows.iter().map(|w| w.0).collect();
    deadlines.sort_unstable();
    deadlines.dedup();
    assert_eq!(exact.interrupts, deadlines.len() as u64);
    assert!(
        r.interrupts * 10 < exact.interrupts,
        "5 % precision took {} interrupts, no precision {}",
        r.interrupts,
        exact.interrupts
    );
}

#[test]
fn c_prel_precision_coalesces_too() {
    // C_PREL(4): a sixteenth of each interval.
    let r = run(3_000, |_| (Sbt::ZERO, c_prel(4)), |_| 0);
    every_callout_ran_inside_its_window(&r);
    near_the_optimum(&r);
    assert!(r.interrupts < 300, "{} interrupts", r.interrupts);
}

#[test]
fn direct_callouts_run_from_the_interrupt_inside_their_windows() {
    // Every third callout runs from the interrupt itself (C_DIRECT_EXEC); all coalesce.
    let r = run(
        2_000,
        |sbt| (Sbt::from_raw(sbt.as_raw() / 10), 0),
        |i| if i % 3 == 0 { C_DIRECT_EXEC } else { 0 },
    );
    every_callout_ran_inside_its_window(&r);
    near_the_optimum(&r);
}

#[test]
fn an_interrupt_with_nothing_due_moves_the_clock_and_asks_for_no_softclock() {
    let mut t = table();
    let h = t.callout_init().unwrap();
    // 10 us is no whole number of 2^-32 s: `from_micros` rounds it up, to a time a fraction
    // of a nanosecond past tick 10,000, so the callout is due at tick 10,001.
    t.callout_reset_sbt_on(h, Sbt::from_micros(10), Sbt::ZERO, 1, 0, 0)
        .unwrap();
    assert_eq!(t.next_event(), Some((10_001, 10_001)));
    assert!(!t.callout_process(10_000));
    assert_eq!((t.ticks(), t.softticks()), (10_000, 10_000));
    // Time never goes back.
    assert!(!t.callout_process(5));
    assert_eq!(t.ticks(), 10_000);
    assert!(t.callout_process(10_001));
    let mut ran = Vec::new();
    assert_eq!(t.softclock(|_, c| ran.push(c)), 1);
    assert_eq!(ran, [1]);
    assert_eq!(t.next_event(), None);
    assert_eq!(t.stats().events, 3);
}

/// A callout whose tick came by `hardclock` while its `softclock` has not run yet is due now:
/// the event window names the current tick, never the tick already passed.
#[test]
fn work_left_by_an_interrupt_is_due_now_not_in_the_past() {
    let mut t = table();
    let h = t.callout_init().unwrap();
    t.callout_reset(h, 2, 1).unwrap();
    for _ in 0..5 {
        t.hardclock();
    }
    assert_eq!(t.next_event(), Some((5, 5)));
}
