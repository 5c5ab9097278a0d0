//! A second suite, written from the documentation alone (the rustdoc of the public items and
//! `docs/callouts.md`): each test names the item whose promise it checks and quotes it.
//!
//! Everything is driven by explicit `hardclock` / `softclock` / `callout_process` calls, so the
//! tests are deterministic; the few that use a second thread wait on channels with a timeout,
//! so a failure fails rather than hangs.
#![cfg(not(callwheel_loom))]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use callwheel::time::Sbt;
use callwheel::{Tick, Wheel};
use callwheel_callout::flags::{
    c_prel, c_prelget, deviation_shift, tolerance, tolerance_with_deviation, C_ABSOLUTE,
    C_DIRECT_EXEC, C_HARDCLOCK, KNOWN,
};
use callwheel_callout::{
    AsyncDrain, Backing, Callouts, Config, Error, Handle, SharedCallouts, MAX_CALLOUTSIZE,
};
use callwheel_schemes::balanced_tree::BalancedTree;
use callwheel_schemes::binary_heap::BinaryHeap;
use callwheel_schemes::calendar_queue::CalendarQueue;
use callwheel_schemes::differential_list::DifferentialList;
use callwheel_schemes::hashed_wheel::HashedWheel;
use callwheel_schemes::hashed_wheel_sorted::HashedWheelSorted;
use callwheel_schemes::hierarchical_wheel::{HierarchicalWheel, Migration};
use callwheel_schemes::ordered_list::OrderedList;

/// How long any wait on another thread may take before the test fails.
const PATIENCE: Duration = Duration::from_secs(20);

/// A backing under test: its constructor, and whether its `next_event` is documented as exact
/// (the production wheel may answer early after stops, a hierarchy at a slot boundary).
struct Kind<S> {
    make: fn() -> S,
    exact_next: bool,
    /// A bounded hierarchy cannot place a deadline within its top slot width of `u64::MAX`:
    /// there it answers `Error::Scheme`, the error `Error::Scheme` documents for "a bounded
    /// wheel's range", as docs/callouts.md says of Scheme 7's strict hierarchy.
    refuses_the_last_ticks: bool,
}

/// For a backing that refuses deadlines near `u64::MAX`: the refusal is `Error::Scheme` and
/// changes nothing (`Error`: "Every failure leaves the table exactly as it was").
fn refused_near_the_end<S: Backing>(t: &mut Callouts<S, u32>) {
    let c = t.callout_init().unwrap();
    let before = snapshot(t, &[c]);
    assert!(matches!(t.timeout(1, 1), Err(Error::Scheme(_))));
    assert!(matches!(t.setcallout(1, 1), Err(Error::Scheme(_))));
    assert!(matches!(t.callout_reset(c, 1, 1), Err(Error::Scheme(_))));
    assert_eq!(snapshot(t, &[c]), before);
    t.callout_free(c).unwrap();
    t.check_invariants().unwrap();
}

/// A table on `make()` whose callouts without a precision are exact (0 % deviation).
fn exact<S: Backing>(make: fn() -> S) -> Callouts<S, u32> {
    Callouts::with_config(
        make(),
        Config {
            deviation_percent: 0,
            ..Config::default()
        },
    )
    .unwrap()
}

/// `n` milliseconds as FreeBSD writes them (`n * SBT_1MS`, truncated): `n` ticks at 1000 Hz.
fn ms(n: i64) -> Sbt {
    Sbt::MILLISECOND.saturating_mul(n)
}

/// One clock tick the way the kernel drives it: `hardclock_with` (direct handlers), and
/// `softclock` only when the interrupt asked for it. Logs (tick, call) of every handler.
fn kernel_tick<S: Backing>(t: &mut Callouts<S, u32>, log: &mut Vec<(Tick, u32)>) {
    let needed = t.hardclock_with(|t, c| log.push((t.ticks(), c)));
    if needed {
        t.softclock(|t, c| log.push((t.ticks(), c)));
    }
    assert_eq!(
        t.softticks(),
        t.ticks(),
        "after the interrupt and its softclock the table is caught up"
    );
    t.check_invariants().unwrap();
}

/// Everything an error must leave as it was, as far as the public interface shows it.
#[derive(Debug, PartialEq)]
struct Snapshot {
    pending: usize,
    in_use: usize,
    allocated: usize,
    ticks: Tick,
    softticks: Tick,
    next: Option<(Tick, Tick)>,
    flags: Vec<(Result<bool, Error>, Result<bool, Error>)>,
}

fn snapshot<S: Backing>(t: &mut Callouts<S, u32>, handles: &[Handle]) -> Snapshot {
    Snapshot {
        pending: t.pending(),
        in_use: t.records_in_use(),
        allocated: t.records_allocated(),
        ticks: t.ticks(),
        softticks: t.softticks(),
        next: t.next_event(),
        flags: handles
            .iter()
            .map(|&h| (t.callout_pending(h), t.callout_active(h)))
            .collect(),
    }
}

// ---------------------------------------------------------------------------------------------
// The same contract on every backing, at any tick.
// ---------------------------------------------------------------------------------------------

/// docs/callouts.md, "One contract at any tick": "Every backing ... keeps the same contract
/// there ... at ticks near 0, 2^32, 2^40, 2^63 and UINT64_MAX". `Callouts` (type docs): "A
/// timeout of `n` ticks set at tick `t` runs in the first `softclock` after the `hardclock`
/// that reaches tick `t + n`"; `Callouts::softclock`: "in expiry order (set order among equal
/// expiries)"; `Callouts::hardclock`: returns `false` only when nothing is due;
/// `Callouts::next_event`: "`first` is the earliest tick at which a pending callout runs";
/// `Callouts::callout_process`: "a `now` at or before `ticks` moves nothing".
fn far_ticks_keep_the_contract<S: Backing>(kind: Kind<S>) {
    for base in [
        0,
        (1u64 << 32) - 3,
        1u64 << 40,
        (1u64 << 63) - 3,
        u64::MAX - 64,
    ] {
        let mut t = exact(kind.make);
        if base > 0 {
            assert!(!t.callout_process(base), "nothing pending at {base}");
            assert_eq!((t.ticks(), t.softticks()), (base, base));
            assert!(!t.callout_process(base - 1));
            assert!(!t.callout_process(0));
            assert_eq!(t.ticks(), base, "an earlier `now` moved the clock");
        }
        assert_eq!(t.next_event(), None, "nothing pending");
        if kind.refuses_the_last_ticks && base > u64::MAX - (1 << 20) {
            refused_near_the_end(&mut t);
            continue;
        }
        // Expected (tick, call), in the order the settings were made.
        let mut expected: Vec<(Tick, u32)> = Vec::new();
        t.timeout(1, 1).unwrap();
        expected.push((base + 1, 1));
        let h = t.setcallout(2, 3).unwrap();
        expected.push((base + 3, 2));
        t.timeout(3, 3).unwrap();
        expected.push((base + 3, 3));
        let c = t.callout_init().unwrap();
        assert_eq!(t.callout_reset(c, 2, 4), Ok(false));
        expected.push((base + 2, 4));
        let d = t.callout_init().unwrap();
        assert_eq!(
            t.callout_reset_sbt_on(d, ms(5), Sbt::ZERO, 5, -1, 0),
            Ok(false)
        );
        expected.push((base + 5, 5));
        let e = t.callout_init().unwrap();
        assert_eq!(
            t.callout_reset_sbt_on(e, ms(4), Sbt::ZERO, 6, 0, C_DIRECT_EXEC),
            Ok(false)
        );
        expected.push((base + 4, 6));
        t.timeout(7, 30).unwrap();
        expected.push((base + 30, 7));
        // Cancelled ones never run.
        let gone = t.setcallout(8, 7).unwrap();
        assert_eq!(t.unsetcallout(gone), Ok(true));
        // `untimeout` does not find a `setcallout` callout.
        t.setcallout(9, 6).unwrap();
        assert!(!t.untimeout(9), "untimeout found a setcallout callout");
        expected.push((base + 6, 9));
        // An absolute time: since tick 0; one the table has passed runs at the next tick.
        let f = t.callout_init().unwrap();
        let abs = Sbt::from_ticks(base + 9, 1000);
        let at = abs.map_or(base + 1, |_| base + 9);
        assert_eq!(
            t.callout_reset_sbt_on(f, abs.unwrap_or(Sbt::SECOND), Sbt::ZERO, 10, 0, C_ABSOLUTE),
            Ok(false)
        );
        expected.push((at, 10));
        assert_eq!(t.callout_pending(h), Err(Error::WrongKind));
        expected.sort_by_key(|&(tick, _)| tick);
        t.check_invariants().unwrap();

        let mut log = Vec::new();
        for _ in 0..31 {
            let due = expected
                .iter()
                .map(|&(tick, _)| tick)
                .filter(|&tick| tick > t.ticks())
                .min();
            let next = t.next_event();
            match (due, next) {
                (None, None) => {}
                (Some(due), Some((first, last))) => {
                    assert!(
                        first >= t.ticks() && first <= due && first <= last,
                        "base {base}: next_event {next:?} at tick {} with the next due at {due}",
                        t.ticks()
                    );
                    if kind.exact_next {
                        assert_eq!(first, due, "base {base}: next_event is not exact");
                    } else {
                        assert!(first >= t.ticks(), "base {base}: a tick already passed");
                    }
                }
                _ => panic!("base {base}: next_event {next:?}, next due {due:?}"),
            }
            kernel_tick(&mut t, &mut log);
        }
        assert_eq!(log, expected, "base {base}");
        assert_eq!(t.pending(), 0);
        assert_eq!(t.records_in_use(), 4, "the four callout_init records stay");
    }
}

/// `Error::PastEndOfTime`: "The deadline would come after the last tick (`u64::MAX`) ...
/// Nothing changed." docs/callouts.md: "a deadline at `UINT64_MAX` runs when the table gets
/// there", "at the last tick also an absolute time already passed"; `Callouts::callout_reset`:
/// "On error the callout keeps its previous arming"; `Callouts::hardclock` at the end of time:
/// the clock stops.
fn the_end_of_time<S: Backing>(kind: Kind<S>) {
    let mut t = exact(kind.make);
    let base = u64::MAX - 3;
    t.callout_process(base);
    if kind.refuses_the_last_ticks {
        return refused_near_the_end(&mut t);
    }
    t.timeout(1, 3).unwrap(); // due at u64::MAX itself
    let c = t.callout_init().unwrap();
    assert_eq!(t.callout_reset(c, 1, 2), Ok(false)); // due at u64::MAX - 2
    let idle = t.callout_init().unwrap();
    let before = snapshot(&mut t, &[c, idle]);
    assert_eq!(t.timeout(3, 4), Err(Error::PastEndOfTime));
    assert_eq!(t.setcallout(3, 4), Err(Error::PastEndOfTime));
    assert_eq!(t.timeout(3, i64::MAX), Err(Error::PastEndOfTime));
    assert_eq!(t.callout_reset(c, 4, 3), Err(Error::PastEndOfTime));
    assert_eq!(
        t.callout_reset(idle, i64::MAX, 3),
        Err(Error::PastEndOfTime)
    );
    assert_eq!(
        t.callout_reset_sbt_on(c, Sbt::SECOND, Sbt::ZERO, 3, 0, 0),
        Err(Error::PastEndOfTime)
    );
    assert_eq!(
        t.callout_reset_sbt_on(c, Sbt::MAX, Sbt::MAX, 3, -1, C_DIRECT_EXEC),
        Err(Error::PastEndOfTime)
    );
    assert_eq!(
        snapshot(&mut t, &[c, idle]),
        before,
        "an error changed the table"
    );
    t.check_invariants().unwrap();

    let mut log = Vec::new();
    for _ in 0..3 {
        kernel_tick(&mut t, &mut log);
    }
    assert_eq!(log, [(u64::MAX - 2, 2), (u64::MAX, 1)]);
    assert_eq!(t.ticks(), u64::MAX);

    // At the last tick: no next tick for anything, not even "the next tick".
    assert_eq!(t.timeout(4, 0), Err(Error::PastEndOfTime));
    assert_eq!(t.callout_reset(c, -5, 4), Err(Error::PastEndOfTime));
    assert_eq!(
        t.callout_reset_sbt_on(c, Sbt::ZERO, Sbt::ZERO, 4, 0, C_ABSOLUTE),
        Err(Error::PastEndOfTime),
        "an absolute time already passed, at the last tick"
    );
    assert!(!t.hardclock(), "the clock stops at the last tick");
    assert_eq!(t.ticks(), u64::MAX);
    assert_eq!(t.next_event(), None);
    assert_eq!(t.pending(), 0);
    t.check_invariants().unwrap();
}

/// `Callouts::callout_reset_sbt_on`: "rounded up to a tick (the exact ceiling of
/// `sbt * hz / 2^32`)", "a relative time of 0 or less ... means the next tick", "A deadline
/// after the last tick is `PastEndOfTime`", "On error nothing changes"; the precision
/// "Rounded down to whole ticks"; `flags::c_prel`: "`n` is at most 126". At the extremes of
/// `Sbt` and of `hz`.
fn sbt_extremes<S: Backing>(kind: Kind<S>) {
    let config = Config {
        hz: u32::MAX,
        deviation_percent: 0,
        ..Config::default()
    };
    let mut t: Callouts<S, u32> = Callouts::with_config((kind.make)(), config).unwrap();
    let c = t.callout_init().unwrap();
    let far = Sbt::MAX.to_ticks_ceil(u32::MAX).unwrap();
    match t.callout_reset_sbt_on(c, Sbt::MAX, Sbt::ZERO, 1, 0, c_prel(126)) {
        // A bounded scheme (a hierarchy) may refuse a deadline beyond its range.
        Err(Error::Scheme(_)) => {
            assert_eq!(t.callout_pending(c), Ok(false));
            assert_eq!(t.pending(), 0);
        }
        other => {
            assert_eq!(other, Ok(false));
            let (first, _) = t.next_event().unwrap();
            assert!(first <= far && first > 0, "{first} against {far}");
            if kind.exact_next {
                assert_eq!(first, far);
            }
            t.callout_process(far - 1);
            assert_eq!(t.softclock(|_, _| panic!("ran early")), 0);
            assert!(t.callout_process(far));
            let mut ran = Vec::new();
            t.softclock(|t, k| ran.push((t.ticks(), k)));
            assert_eq!(ran, [(far, 1)]);
        }
    }
    t.check_invariants().unwrap();

    // Near the end: Sbt::MAX at this rate is about 2^63 ticks, more than are left.
    let base = u64::MAX - (1 << 62);
    t.callout_process(base);
    assert_eq!(
        t.callout_reset_sbt_on(c, ms(1), Sbt::ZERO, 2, 0, 0),
        Ok(false)
    );
    let before = snapshot(&mut t, &[c]);
    assert_eq!(
        t.callout_reset_sbt_on(c, Sbt::MAX, Sbt::ZERO, 3, 0, 0),
        Err(Error::PastEndOfTime)
    );
    assert_eq!(snapshot(&mut t, &[c]), before);
    // The most negative times and precisions: the next tick, exactly.
    let d = t.callout_init().unwrap();
    let e = t.callout_init().unwrap();
    assert_eq!(
        t.callout_reset_sbt_on(d, Sbt::MIN, Sbt::MIN, 4, -1, 0),
        Ok(false)
    );
    assert_eq!(
        t.callout_reset_sbt_on(e, Sbt::MIN, Sbt::MIN, 5, 0, C_ABSOLUTE | c_prel(0)),
        Ok(false)
    );
    let one = ms(1).to_ticks_ceil(u32::MAX).unwrap();
    let mut log = Vec::new();
    assert!(t.hardclock());
    t.softclock(|t, k| log.push((t.ticks(), k)));
    assert_eq!(log, [(base + 1, 4), (base + 1, 5)]);
    t.callout_process(base + one - 1);
    t.softclock(|t, k| log.push((t.ticks(), k)));
    assert_eq!(log.len(), 2, "ran before its time: {log:?}");
    t.callout_process(base + one);
    t.softclock(|t, k| log.push((t.ticks(), k)));
    assert_eq!(log[2..], [(base + one, 2)]);
    t.check_invariants().unwrap();
}

/// `Callouts::callout_reset_sbt_on`: "The callout may run up to `precision` late" and never
/// before its time, near the end of time where the window `[deadline, deadline + precision]`
/// reaches past `u64::MAX`; `Callouts::next_event`: "Never later than any window's end".
fn a_window_past_the_last_tick<S: Backing>(kind: Kind<S>) {
    let mut t = exact(kind.make);
    let base = u64::MAX - 5_000;
    t.callout_process(base);
    if kind.refuses_the_last_ticks {
        return refused_near_the_end(&mut t);
    }
    let c = t.callout_init().unwrap();
    assert_eq!(
        t.callout_reset_sbt_on(c, ms(10), Sbt::MAX, 1, 0, 0),
        Ok(false)
    );
    let mut ran = Vec::new();
    for _ in 0..10 {
        let Some((first, last)) = t.next_event() else {
            break;
        };
        assert!(first >= base + 10 && first <= last, "{first}..{last}");
        t.callout_process(first);
        t.softclock(|t, k| ran.push((t.ticks(), k)));
        t.check_invariants().unwrap();
    }
    assert_eq!(ran.len(), 1, "{ran:?}");
    assert!(ran[0].0 >= base + 10, "ran early: {ran:?}");
}

/// `Callouts::callout_stop`: "Returns `Ok(true)` if it was pending"; `Callouts::softclock`: "a
/// cancelled callout that has not yet been handed out never runs";
/// `Callouts::callout_pending`: "armed and has not yet been handed out";
/// `Callouts::callout_active`: "set by every reset, cleared by `callout_stop` ... not by
/// running"; `Callouts::callout_reset`: "Returns `Ok(true)` if it was pending";
/// `Callouts::callout_async_drain`: "`drain` is never called: `AsyncDrain::Stopped`, with
/// whether a pending firing was cancelled"; `Callouts::pending`: "armed and not yet handed to
/// a runner"; `Error::StaleHandle`: "its callout already fired (one-shot)". All from inside a
/// handler, for callouts due in the same tick.
fn return_values_inside_a_handler<S: Backing>(kind: Kind<S>) {
    let mut t = exact(kind.make);
    let [a, b, c, d, e] = [(); 5].map(|_| t.callout_init().unwrap());
    for (h, call) in [(a, 1), (b, 2), (c, 3), (d, 4), (e, 5)] {
        assert_eq!(t.callout_reset(h, 2, call), Ok(false));
    }
    let one = t.setcallout(6, 2).unwrap();
    t.timeout(7, 2).unwrap();
    let mut seen = Vec::new();
    let mut log = Vec::new();
    for _ in 0..2 {
        t.hardclock();
        let ran = t.softclock(|t, k| {
            log.push((t.ticks(), k));
            match k {
                1 => {
                    seen.push(("pending(a)", t.callout_pending(a)));
                    seen.push(("active(a)", t.callout_active(a)));
                    seen.push(("pending(b)", t.callout_pending(b)));
                    let before = t.pending();
                    seen.push(("stop(b)", t.callout_stop(b)));
                    seen.push(("pending dropped", Ok(t.pending() + 1 == before)));
                    seen.push(("active(b)", t.callout_active(b)));
                    seen.push(("reset(c)", t.callout_reset(c, 5, 30)));
                    seen.push((
                        "async_drain(d)",
                        t.callout_async_drain(d, |_| panic!("drain called for a stopped callout"))
                            .map(|r| r == AsyncDrain::Stopped(true)),
                    ));
                    seen.push(("pending(d)", t.callout_pending(d)));
                }
                5 => {
                    seen.push(("stop(e)", t.callout_stop(e)));
                    seen.push(("active(e)", t.callout_active(e)));
                    seen.push(("reset(e)", t.callout_reset(e, 1, 50)));
                    seen.push(("stop(e) again", t.callout_stop(e)));
                }
                6 => {
                    seen.push(("unsetcallout(own)", t.unsetcallout(one).map(|_| true)));
                }
                7 => seen.push(("untimeout(own)", Ok(t.untimeout(7)))),
                _ => {}
            }
        });
        if t.ticks() == 2 {
            assert_eq!(ran, 4, "a, e, the one-shots");
        }
        t.check_invariants().unwrap();
    }
    assert_eq!(
        seen,
        [
            ("pending(a)", Ok(false)),
            ("active(a)", Ok(true)),
            ("pending(b)", Ok(true)),
            ("stop(b)", Ok(true)),
            ("pending dropped", Ok(true)),
            ("active(b)", Ok(false)),
            ("reset(c)", Ok(true)),
            ("async_drain(d)", Ok(true)),
            ("pending(d)", Ok(false)),
            ("stop(e)", Ok(false)),
            ("active(e)", Ok(false)),
            ("reset(e)", Ok(false)),
            ("stop(e) again", Ok(true)),
            ("unsetcallout(own)", Err(Error::StaleHandle)),
            ("untimeout(own)", Ok(false)),
        ]
    );
    assert_eq!(log, [(2, 1), (2, 5), (2, 6), (2, 7)]);
    for _ in 0..6 {
        kernel_tick(&mut t, &mut log);
    }
    assert_eq!(
        log[4..],
        [(7, 30)],
        "only c, re-armed from a's handler, ran"
    );
    assert_eq!(
        t.callout_active(c),
        Ok(true),
        "running does not clear active"
    );
}

/// `Error`: "Every failure leaves the table exactly as it was"; the `# Errors` sections of
/// `callout_reset`, `callout_reset_sbt_on` ("`InvalidFlags`, `InvalidCpu` ... On error
/// nothing changes"), `callout_stop`, `callout_drain`, `callout_async_drain`,
/// `callout_pending`, `callout_active`, `callout_deactivate`, `callout_free` and
/// `unsetcallout` ("`StaleHandle` when ... the handle was never issued by this table;
/// `WrongKind` for a `callout_init` handle. Nothing changes"); `Error::InvalidFlags`:
/// "Unknown bits in a flags argument"; `Error::InvalidCpu`: "pass 0 or -1".
fn errors_change_nothing<S: Backing>(kind: Kind<S>) {
    let mut t = exact(kind.make);
    let mut other = exact(kind.make);
    let p = t.callout_init().unwrap();
    assert_eq!(t.callout_reset(p, 4, 1), Ok(false));
    let q = t.callout_init().unwrap();
    let h = t.setcallout(2, 3).unwrap();
    t.timeout(3, 6).unwrap();
    let freed = t.callout_init().unwrap();
    t.callout_free(freed).unwrap();
    let spent = t.setcallout(4, 1).unwrap();
    assert_eq!(t.unsetcallout(spent), Ok(true));
    let foreign = other.callout_init().unwrap();
    let foreign_oneshot = other.setcallout(5, 1).unwrap();
    let forged = [
        Handle::from_parts(u64::MAX, p.owner()),
        Handle::from_parts(p.to_parts().0 ^ (1 << 32), p.owner()),
        Handle::from_parts(0, 0),
        Handle::from_parts(p.to_parts().0, p.owner() ^ 1),
    ];
    let before = snapshot(&mut t, &[p, q]);

    let mut stale: Vec<Handle> = vec![freed, spent, foreign, foreign_oneshot];
    stale.extend(forged);
    let mut failures = Vec::new();
    let mut check = |what: String, got: Result<bool, Error>, want: Error| {
        if got != Err(want) {
            failures.push(format!("{what}: {got:?}, expected {want:?}"));
        }
    };
    for flags in [0x400, 0x8000_0000, C_ABSOLUTE | 0x1000, u32::MAX] {
        let got = t.callout_reset_sbt_on(p, ms(1), Sbt::ZERO, 9, 0, flags);
        check(
            format!("flags {flags:#x}"),
            got,
            Error::InvalidFlags(flags & !KNOWN),
        );
    }
    for cpu in [1, 2, -2, i32::MIN, i32::MAX] {
        let got = t.callout_reset_sbt_on(p, ms(1), Sbt::ZERO, 9, cpu, 0);
        check(format!("cpu {cpu}"), got, Error::InvalidCpu(cpu));
    }
    for (n, &s) in stale.iter().enumerate() {
        // Whatever kind it was made as, a handle that names nothing here is stale.
        let want = Error::StaleHandle;
        check(format!("reset #{n}"), t.callout_reset(s, 1, 9), want);
        check(
            format!("reset_sbt #{n}"),
            t.callout_reset_sbt_on(s, ms(1), Sbt::ZERO, 9, -1, 0),
            want,
        );
        check(format!("stop #{n}"), t.callout_stop(s), want);
        check(format!("drain #{n}"), t.callout_drain(s), want);
        check(
            format!("async_drain #{n}"),
            t.callout_async_drain(s, |_| panic!("drain called on an error"))
                .map(|_| true),
            want,
        );
        check(format!("pending #{n}"), t.callout_pending(s), want);
        check(format!("active #{n}"), t.callout_active(s), want);
        check(
            format!("deactivate #{n}"),
            t.callout_deactivate(s).map(|()| true),
            want,
        );
        check(format!("free #{n}"), t.callout_free(s).map(|()| true), want);
        check(format!("unset #{n}"), t.unsetcallout(s), want);
    }
    // The wrong kind, both ways.
    let w = Error::WrongKind;
    check("reset(h)".into(), t.callout_reset(h, 1, 9), w);
    check(
        "reset_sbt(h)".into(),
        t.callout_reset_sbt_on(h, ms(1), Sbt::ZERO, 9, 0, 0),
        w,
    );
    check("stop(h)".into(), t.callout_stop(h), w);
    check("drain(h)".into(), t.callout_drain(h), w);
    check(
        "async_drain(h)".into(),
        t.callout_async_drain(h, |_| panic!("drain called on an error"))
            .map(|_| true),
        w,
    );
    check("pending(h)".into(), t.callout_pending(h), w);
    check("active(h)".into(), t.callout_active(h), w);
    check(
        "deactivate(h)".into(),
        t.callout_deactivate(h).map(|()| true),
        w,
    );
    check("free(h)".into(), t.callout_free(h).map(|()| true), w);
    check("unset(p)".into(), t.unsetcallout(p), w);
    check("unset(q)".into(), t.unsetcallout(q), w);
    assert!(failures.is_empty(), "{failures:#?}");
    assert_eq!(
        snapshot(&mut t, &[p, q]),
        before,
        "an error changed the table"
    );
    t.check_invariants().unwrap();

    let mut log = Vec::new();
    for _ in 0..7 {
        kernel_tick(&mut t, &mut log);
    }
    assert_eq!(log, [(3, 2), (4, 1), (6, 3)]);
    // The other table was not touched either.
    assert_eq!(other.callout_pending(foreign), Ok(false));
    assert_eq!(other.pending(), 1);
}

/// `Callouts::untimeout`: "through the (function, argument) hash ... it is the oldest: the
/// one set first. On the old `calltodo` ... the one due first"; "Callouts set by
/// `setcallout` are not found here". Checked while the hash grows under many timeouts
/// (docs/callouts.md: the pool "grows on demand").
fn untimeout_picks_the_documented_match_while_the_hash_grows<S: Backing>(kind: Kind<S>) {
    let config = Config {
        calloutsize: 1,
        deviation_percent: 0,
        ..Config::default()
    };
    let mut t: Callouts<S, u32> = Callouts::with_config((kind.make)(), config).unwrap();
    // Set first is due last: deadlines 100, 99, ..., 61.
    for k in 0..40 {
        t.timeout(7, 100 - k).unwrap();
        t.timeout(1_000 + k as u32, 50).unwrap();
    }
    let by_handle = t.setcallout(7, 5).unwrap();
    for _ in 0..10 {
        assert!(t.untimeout(7));
    }
    t.check_invariants().unwrap();
    let mut log = Vec::new();
    for _ in 0..100 {
        kernel_tick(&mut t, &mut log);
    }
    let sevens: Vec<Tick> = log
        .iter()
        .filter(|&&(_, k)| k == 7)
        .map(|&(tick, _)| tick)
        .collect();
    let mut want: Vec<Tick> = vec![5];
    if S::SEARCHED_BY_UNTIMEOUT {
        want.extend(71..=100); // the ten due first (61..=70) were cancelled
    } else {
        want.extend(61..=90); // the ten set first (due 91..=100) were cancelled
    }
    assert_eq!(sevens, want);
    assert_eq!(log.len(), 31 + 40);
    assert_eq!(t.unsetcallout(by_handle), Err(Error::StaleHandle));
}

/// `Callouts::softclock`: "handing every due callout to `run` in expiry order (set order among
/// equal expiries ...)" and "The scheme is advanced at most `max_softclock_steps` steps at a
/// time"; docs/callouts.md: a hashed table "rebuilds its wheel ... whenever the callouts
/// outnumber twice its buckets". Many equal expiries, far from tick 0, a one-step budget, a
/// softclock that fell behind, and a reset that sets a callout again.
fn equal_expiries_run_in_set_order<S: Backing>(kind: Kind<S>) {
    let config = Config {
        max_softclock_steps: 1,
        deviation_percent: 0,
        ..Config::default()
    };
    let mut t: Callouts<S, u32> = Callouts::with_config((kind.make)(), config).unwrap();
    let base = (1u64 << 63) + 100;
    t.callout_process(base);
    let c = t.callout_init().unwrap();
    t.callout_reset(c, 5, 0).unwrap();
    let mut order = Vec::new();
    for k in 1..=300u32 {
        match k % 4 {
            0 => t.timeout(k, 5).unwrap(),
            1 => {
                let _ = t.setcallout(k, 5).unwrap();
            }
            2 => {
                let h = t.callout_init().unwrap();
                t.callout_reset(h, 5, k).unwrap();
            }
            _ => {
                let h = t.callout_init().unwrap();
                t.callout_reset_sbt_on(h, ms(5), Sbt::ZERO, k, -1, 0)
                    .unwrap();
            }
        }
        order.push(k);
    }
    // Set again, with the same expiry: now the last one set.
    assert_eq!(t.callout_reset(c, 5, 0), Ok(true));
    order.push(0);
    for _ in 0..5 {
        t.hardclock();
    }
    let mut ran = Vec::new();
    t.softclock(|t, k| {
        assert_eq!(t.ticks(), base + 5);
        ran.push(k);
    });
    assert_eq!(ran, order);
    t.check_invariants().unwrap();
}

/// `Callouts::callout_reset_sbt_on`: "The callout may run up to `precision` late, or
/// `interval / 2^n` with `C_PREL(n)` if that is larger; for a relative time without `C_PREL`,
/// at least the table's default deviation"; `Callouts::timeout` / `callout_reset`: "up to the
/// table's default deviation of `ticks` later"; `Callouts::next_event` with
/// `Callouts::callout_process`: "runs every callout whose instant it reaches inside its
/// window"; docs/callouts.md: "a loop that follows it runs something at every interrupt".
/// Driven both by the clock and by the event window, at three bases.
fn precision_windows_hold<S: Backing>(kind: Kind<S>) {
    for base in [0u64, 1 << 40, (1 << 63) - 1_000] {
        for tickless in [false, true] {
            precision_windows_at(&kind, base, tickless);
        }
    }
}

fn precision_windows_at<S: Backing>(kind: &Kind<S>, base: Tick, tickless: bool) {
    let mut t: Callouts<S, u32> = Callouts::with_config((kind.make)(), Config::default()).unwrap();
    t.callout_process(base);
    let mut rng = base ^ 0x2545_f491_4f6c_dd1d;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    // (deadline, window end) per call.
    let mut windows: Vec<(Tick, Tick)> = Vec::new();
    let floor = |s: Sbt| ((s.as_raw().max(0) as u128 * 1000) >> 32) as Tick;
    for k in 0..150u32 {
        let n = 1 + next(1_500) as i64;
        let sbt = ms(n);
        match next(4) {
            0 => {
                t.timeout(k, n).unwrap();
                windows.push((base + n as u64, base + n as u64 + (n as u64 >> 4)));
            }
            1 => {
                let h = t.callout_init().unwrap();
                t.callout_reset(h, n, k).unwrap();
                windows.push((base + n as u64, base + n as u64 + (n as u64 >> 4)));
            }
            _ => {
                let precision = [Sbt::ZERO, ms(n / 3), ms(n), ms(2)][next(4) as usize];
                let flags = [0, c_prel(1), c_prel(3), c_prel(8)][next(4) as usize];
                let h = t.callout_init().unwrap();
                t.callout_reset_sbt_on(h, sbt, precision, k, 0, flags)
                    .unwrap();
                let tol = floor(tolerance_with_deviation(sbt, precision, flags, Some(4)));
                windows.push((base + n as u64, base + n as u64 + tol));
            }
        }
    }
    let mut ran: Vec<Option<Tick>> = vec![None; windows.len()];
    let mut record = |tick: Tick, k: u32| {
        assert!(ran[k as usize].is_none(), "callout {k} ran twice");
        ran[k as usize] = Some(tick);
    };
    if tickless {
        let mut interrupts = 0;
        while let Some((first, last)) = t.next_event() {
            interrupts += 1;
            assert!(interrupts <= 2_000, "the event loop does not converge");
            let now = if interrupts % 2 == 0 { first } else { last };
            assert!(first >= t.ticks() && last >= first);
            t.callout_process(now);
            let n = t.softclock(|t, k| record(t.ticks(), k));
            if kind.exact_next && now == first {
                assert!(n > 0, "an interrupt at `first` ({now}) ran nothing");
            }
            t.check_invariants().unwrap();
        }
    } else {
        for _ in 0..3_100 {
            if t.pending() == 0 {
                break;
            }
            if t.hardclock() {
                t.softclock(|t, k| record(t.ticks(), k));
            }
        }
    }
    let mut bad = Vec::new();
    for (k, (&(deadline, end), &at)) in windows.iter().zip(&ran).enumerate() {
        match at {
            Some(at) if at >= deadline && at <= end => {}
            _ => bad.push((k, deadline, end, at)),
        }
    }
    assert!(
        bad.is_empty(),
        "base {base}, tickless {tickless}: outside the window (k, deadline, end, ran): {bad:?}"
    );
}

/// `Callouts::set_deviation_percent`: "for the callouts armed from now on (those pending keep
/// their windows); above 100 counts as 100"; `Config::deviation_percent`: "0 arms them
/// exactly".
fn a_new_deviation_leaves_pending_callouts_alone<S: Backing>(kind: Kind<S>) {
    let mut t = exact(kind.make);
    t.timeout(1, 1_000).unwrap();
    let c = t.callout_init().unwrap();
    t.callout_reset(c, 1_000, 2).unwrap();
    t.set_deviation_percent(250);
    t.timeout(3, 640).unwrap(); // at 100 %: anywhere in [640, 1280]
    let mut log = Vec::new();
    for _ in 0..1_300 {
        kernel_tick(&mut t, &mut log);
    }
    let at = |k: u32| log.iter().find(|&&(_, c)| c == k).map(|&(tick, _)| tick);
    assert_eq!(at(1), Some(1_000), "{log:?}");
    assert_eq!(at(2), Some(1_000), "{log:?}");
    let three = at(3).expect("callout 3 ran");
    assert!((640..=1_280).contains(&three), "{three}");
}

/// `Callouts::records_in_use`: "armed one-shot callouts, and every initialised persistent
/// one"; `Config::fixed`: "a call that needs one more fails with `PoolExhausted`";
/// `Callouts::softclock`: "`run` gets the table, so a handler may set or cancel any
/// callout". A one-shot callout that is running is no longer armed, so its record is free
/// for its handler.
fn a_full_fixed_pool_and_running_one_shots<S: Backing>(kind: Kind<S>) {
    let config = Config {
        calloutsize: 2,
        fixed: true,
        deviation_percent: 0,
        ..Config::default()
    };
    let mut t: Callouts<S, u32> = Callouts::with_config((kind.make)(), config).unwrap();
    t.timeout(1, 1).unwrap();
    t.setcallout(2, 2).unwrap();
    let full = Error::PoolExhausted { calloutsize: 2 };
    let before = snapshot(&mut t, &[]);
    assert_eq!(t.timeout(3, 1), Err(full));
    assert_eq!(t.setcallout(3, 1), Err(full));
    assert_eq!(t.callout_init(), Err(full));
    assert_eq!(snapshot(&mut t, &[]), before);
    let mut seen = Vec::new();
    let mut log = Vec::new();
    for _ in 0..4 {
        t.hardclock();
        t.softclock(|t, k| {
            log.push((t.ticks(), k));
            if k == 1 {
                seen.push(t.records_in_use());
                seen.push(usize::from(t.setcallout(4, 2).is_ok()));
                seen.push(usize::from(t.timeout(5, 1) == Err(full)));
            }
        });
        t.check_invariants().unwrap();
    }
    assert_eq!(seen, [1, 1, 1]);
    assert_eq!(log, [(1, 1), (2, 2), (3, 4)]);
    assert_eq!(t.records_allocated(), 2);
}

/// `Callouts::next_event`: "`(ticks, ticks)` when work is due now" and "`None` when nothing is
/// pending"; `Callouts::callout_process`: "Returns `true` ... always when a callout is due"
/// and "a `now` at or before `ticks` moves nothing".
fn work_due_now_is_named_now<S: Backing>(kind: Kind<S>) {
    let mut t = exact(kind.make);
    t.timeout(1, 5).unwrap();
    let c = t.callout_init().unwrap();
    t.callout_reset_sbt_on(c, ms(7), ms(100), 2, 0, 0).unwrap();
    assert!(t.callout_process(1_000), "two callouts are due");
    assert!(t.callout_process(999));
    assert_eq!(t.ticks(), 1_000);
    assert_eq!(t.next_event(), Some((1_000, 1_000)));
    let mut log = Vec::new();
    t.softclock(|t, k| log.push((t.ticks(), k)));
    assert_eq!(log, [(1_000, 1), (1_000, 2)]);
    assert_eq!(t.next_event(), None);
    t.timeout(3, 1).unwrap();
    t.hardclock();
    assert_eq!(
        t.next_event(),
        Some((1_001, 1_001)),
        "due at the tick just reached"
    );
    t.check_invariants().unwrap();
}

fn hierarchy() -> HierarchicalWheel<u32> {
    HierarchicalWheel::binary(4, Migration::Full).unwrap()
}

macro_rules! every_backing {
    ($($test:ident),* $(,)?) => {
        mod old_callout_list {
            use super::*;
            $(#[test] fn $test() { super::$test(Kind { make: DifferentialList::new, exact_next: true, refuses_the_last_ticks: false }) })*
        }
        mod ordered_list {
            use super::*;
            $(#[test] fn $test() { super::$test(Kind { make: OrderedList::new, exact_next: true, refuses_the_last_ticks: false }) })*
        }
        mod hashed_wheel {
            use super::*;
            $(#[test] fn $test() { super::$test(Kind { make: || HashedWheel::new(2).unwrap(), exact_next: true, refuses_the_last_ticks: false }) })*
        }
        mod hashed_wheel_sorted {
            use super::*;
            $(#[test] fn $test() { super::$test(Kind { make: || HashedWheelSorted::new(2).unwrap(), exact_next: true, refuses_the_last_ticks: false }) })*
        }
        mod hierarchical_wheel {
            use super::*;
            $(#[test] fn $test() { super::$test(Kind { make: hierarchy, exact_next: false, refuses_the_last_ticks: true }) })*
        }
        mod binary_heap {
            use super::*;
            $(#[test] fn $test() { super::$test(Kind { make: BinaryHeap::new, exact_next: true, refuses_the_last_ticks: false }) })*
        }
        mod balanced_tree {
            use super::*;
            $(#[test] fn $test() { super::$test(Kind { make: BalancedTree::new, exact_next: true, refuses_the_last_ticks: false }) })*
        }
        mod calendar_queue {
            use super::*;
            $(#[test] fn $test() { super::$test(Kind { make: CalendarQueue::new, exact_next: true, refuses_the_last_ticks: false }) })*
        }
        mod production_wheel {
            use super::*;
            $(#[test] fn $test() { super::$test(Kind { make: Wheel::new, exact_next: false, refuses_the_last_ticks: false }) })*
        }
    };
}

every_backing!(
    far_ticks_keep_the_contract,
    the_end_of_time,
    sbt_extremes,
    a_window_past_the_last_tick,
    return_values_inside_a_handler,
    errors_change_nothing,
    untimeout_picks_the_documented_match_while_the_hash_grows,
    equal_expiries_run_in_set_order,
    precision_windows_hold,
    a_new_deviation_leaves_pending_callouts_alone,
    a_full_fixed_pool_and_running_one_shots,
    work_due_now_is_named_now,
);

// ---------------------------------------------------------------------------------------------
// Conversions and flags (the same code whatever the backing).
// ---------------------------------------------------------------------------------------------

fn hashed(config: Config) -> Callouts<HashedWheel<u32>, u32> {
    Callouts::with_config(HashedWheel::new(4).unwrap(), config).unwrap()
}

/// The tick `sbt` (relative, no precision) is armed for on an exact table at `hz`, found by
/// running it.
fn fires_at(hz: u32, base: Tick, sbt: Sbt, flags: u32) -> Tick {
    let mut t = hashed(Config {
        hz,
        deviation_percent: 0,
        ..Config::default()
    });
    t.callout_process(base);
    let c = t.callout_init().unwrap();
    t.callout_reset_sbt_on(c, sbt, Sbt::ZERO, 1, 0, flags)
        .unwrap();
    let (first, _) = t.next_event().unwrap();
    t.callout_process(first - 1);
    assert_eq!(t.softclock(|_, _| {}), 0, "ran before next_event's tick");
    t.callout_process(first);
    let mut at = None;
    t.softclock(|t, _| at = Some(t.ticks()));
    at.expect("ran at next_event's tick")
}

/// `Callouts::callout_reset_sbt_on`: "rounded up to a tick (the exact ceiling of
/// `sbt * hz / 2^32`)"; docs/callouts.md: "`2 * CW_SBT_1MS` is exactly 2 ticks at 1000 Hz;
/// `Sbt::from_millis(2)` ... takes 3"; an absolute time is "time since tick 0".
#[test]
fn sbt_times_round_up_to_the_exact_tick() {
    assert_eq!(fires_at(1000, 0, ms(2), 0), 2);
    assert_eq!(fires_at(1000, 0, Sbt::from_millis(2), 0), 3);
    // 2^20 Hz: 4096 units of 2^-32 s are exactly one tick.
    let hz = 1 << 20;
    assert_eq!(fires_at(hz, 7, Sbt::from_raw(4096), 0), 8);
    assert_eq!(fires_at(hz, 7, Sbt::from_raw(4097), 0), 9);
    assert_eq!(fires_at(hz, 7, Sbt::from_raw(1), 0), 8);
    assert_eq!(fires_at(hz, 7, Sbt::ZERO, 0), 8);
    // Absolute, far from tick 0 on a nanosecond clock: the round trip through from_ticks is
    // exact, and one unit more is the next tick.
    let ns = 1_000_000_000;
    let target = (1u64 << 40) + 7;
    let abs = Sbt::from_ticks(target, ns).unwrap();
    assert_eq!(fires_at(ns, 1 << 40, abs, C_ABSOLUTE), target);
    assert_eq!(
        fires_at(ns, 1 << 40, Sbt::from_raw(abs.as_raw() + 1), C_ABSOLUTE),
        target + 1
    );
    // At the exact tick the table is at, an absolute time is already passed: the next tick.
    let now = Sbt::from_ticks(1 << 40, ns).unwrap();
    assert_eq!(fires_at(ns, 1 << 40, now, C_ABSOLUTE), (1 << 40) + 1);
}

/// `Callouts::callout_reset_sbt_on`: the precision is "Rounded down to whole ticks": less than
/// a tick of precision leaves the callout exact on an exact backing.
#[test]
fn a_precision_below_one_tick_is_no_precision() {
    let hz = 1 << 20;
    let mut t = hashed(Config {
        hz,
        deviation_percent: 0,
        ..Config::default()
    });
    let c = t.callout_init().unwrap();
    t.callout_reset_sbt_on(c, Sbt::from_raw(4096 * 100), Sbt::from_raw(4095), 1, 0, 0)
        .unwrap();
    assert_eq!(t.next_event(), Some((100, 100)));
}

/// `flags::c_prel`: "`n` is at most 126"; `flags::c_prelget`: "The `n` of a `C_PREL(n)` in
/// `flags`, if one is set"; `flags::tolerance`: "whichever is larger; negative values count as
/// zero"; `flags::deviation_shift`: "5 % gives 4 ... 10 % gives 3, 1 % gives 7. `None` for
/// 0 %", and `set_deviation_percent`: "above 100 counts as 100"; `flags::C_HARDCLOCK`:
/// "Accepted for compatibility".
#[test]
fn the_flag_helpers_do_what_they_say() {
    for n in 0..=126 {
        assert_eq!(c_prelget(c_prel(n)), Some(n), "C_PREL({n})");
        assert_eq!(c_prel(n) & !KNOWN, 0);
        assert_eq!(c_prelget(c_prel(n) | C_ABSOLUTE | C_DIRECT_EXEC), Some(n));
    }
    assert_eq!(c_prelget(0), None);
    assert_eq!(c_prelget(C_ABSOLUTE | C_DIRECT_EXEC | C_HARDCLOCK), None);
    let ten = Sbt::from_secs(10);
    assert_eq!(tolerance(ten, Sbt::ZERO, 0), Sbt::ZERO);
    assert_eq!(tolerance(ten, Sbt::ZERO, c_prel(0)), ten);
    assert_eq!(
        tolerance(Sbt::from_secs(-10), Sbt::ZERO, c_prel(0)),
        Sbt::ZERO
    );
    assert_eq!(tolerance(Sbt::MAX, Sbt::ZERO, c_prel(126)), Sbt::ZERO);
    assert_eq!(tolerance(Sbt::MAX, Sbt::ZERO, c_prel(62)), Sbt::from_raw(1));
    assert_eq!(tolerance(ten, Sbt::MIN, 0), Sbt::ZERO);
    assert_eq!(
        tolerance_with_deviation(Sbt::from_secs(-16), Sbt::ZERO, 0, Some(0)),
        Sbt::ZERO
    );
    assert_eq!(deviation_shift(1), Some(7));
    assert_eq!(deviation_shift(5), Some(4));
    assert_eq!(deviation_shift(10), Some(3));
    assert_eq!(deviation_shift(0), None);
    assert_eq!(deviation_shift(250), deviation_shift(100));
    assert_eq!(deviation_shift(u32::MAX), deviation_shift(100));
    let mut previous = deviation_shift(1).unwrap();
    for p in 2..=100 {
        let s = deviation_shift(p).unwrap();
        assert!(
            s <= previous,
            "a larger deviation gave a narrower window at {p} %"
        );
        previous = s;
    }
    let mut t = hashed(Config::default());
    let c = t.callout_init().unwrap();
    assert_eq!(
        t.callout_reset_sbt_on(c, ms(3), Sbt::ZERO, 1, 0, C_HARDCLOCK),
        Ok(false)
    );
}

/// `Callouts::with_config`: "`Error::Config` for `hz == 0`, `max_softclock_steps == 0`, a fixed
/// pool of 0 records, a `calloutsize` above `MAX_CALLOUTSIZE`, or a non-empty scheme";
/// `SharedCallouts::new`: "`Error::Config` for no table".
#[test]
fn bad_configurations_are_refused() {
    for fixed in [false, true] {
        let got = Callouts::<HashedWheel<u32>, u32>::with_config(
            HashedWheel::new(2).unwrap(),
            Config {
                calloutsize: MAX_CALLOUTSIZE + 1,
                fixed,
                ..Config::default()
            },
        );
        assert!(matches!(got, Err(Error::Config { .. })), "{got:?}");
    }
    let mut busy: Wheel<u32> = Wheel::new();
    callwheel::Timers::start_with(&mut busy, 5, 0, 1).unwrap();
    let got = Callouts::<Wheel<u32>, u32>::with_config(busy, Config::default());
    assert!(matches!(got, Err(Error::Config { .. })), "{got:?}");
    let got = SharedCallouts::<Wheel<u32>, u32>::new(Vec::new());
    assert!(matches!(got, Err(Error::Config { .. })), "{got:?}");
}

/// `Stats::hardclocks` "Calls to `hardclock`", `Stats::fast_path` "found nothing due and
/// advanced `softticks` themselves", `Stats::events` "Calls to `Callouts::callout_process`"
/// (and `callout_process`: "a `hardclock` is a `callout_process(ticks + 1)` that is counted
/// apart"), `Stats::fired` "Handlers handed out to run", `Stats::direct` "direct-execution
/// handlers run from `hardclock_with`".
#[test]
fn the_counters_count_what_they_say() {
    let mut t = hashed(Config {
        deviation_percent: 0,
        ..Config::default()
    });
    t.timeout(1, 2).unwrap();
    let c = t.callout_init().unwrap();
    t.callout_reset_sbt_on(c, ms(3), Sbt::ZERO, 2, 0, C_DIRECT_EXEC)
        .unwrap();
    assert!(!t.hardclock());
    assert!(t.hardclock());
    t.softclock(|_, _| {});
    t.hardclock_with(|_, _| {});
    t.callout_process(10);
    t.callout_process(5);
    let s = t.stats();
    assert_eq!(s.hardclocks, 3);
    assert_eq!(s.fast_path, 1);
    assert_eq!(s.events, 2);
    assert_eq!(s.fired, 2);
    assert_eq!(s.direct, 1);
}

/// `Callouts::softclock`: "handing every due callout to `run` in expiry order ..., the
/// `C_DIRECT_EXEC` ones that `Callouts::hardclock` left for it first, as they would have run in
/// the interrupt". When the softclock has fallen behind, a direct callout due later than a
/// deferred one still waiting runs first; the deferred ones keep their order.
#[test]
fn a_lagging_softclock_runs_the_direct_callouts_it_was_left_first() {
    let mut t = hashed(Config {
        deviation_percent: 0,
        ..Config::default()
    });
    let normal = t.callout_init().unwrap();
    let direct = t.callout_init().unwrap();
    t.callout_reset(normal, 3, 1).unwrap();
    t.callout_reset_sbt_on(direct, ms(5), Sbt::ZERO, 2, 0, C_DIRECT_EXEC)
        .unwrap();
    for _ in 0..6 {
        t.hardclock();
    }
    let mut ran = Vec::new();
    t.softclock(|_, k| ran.push(k));
    assert_eq!(
        ran,
        [2, 1],
        "the direct one (due at 5), then the one due at 3"
    );
}

// ---------------------------------------------------------------------------------------------
// The shared, per-CPU table.
// ---------------------------------------------------------------------------------------------

type Set = SharedCallouts<HashedWheel<u32>, u32>;

fn cpu_table(config: Config) -> Callouts<HashedWheel<u32>, u32> {
    Callouts::with_config(HashedWheel::new(4).unwrap(), config).unwrap()
}

fn exact_config() -> Config {
    Config {
        deviation_percent: 0,
        ..Config::default()
    }
}

/// Two CPUs, CPU 1's pool fixed at one record.
fn set_with_small_cpu1() -> Arc<Set> {
    let small = Config {
        calloutsize: 1,
        fixed: true,
        ..exact_config()
    };
    Arc::new(SharedCallouts::new(vec![cpu_table(exact_config()), cpu_table(small)]).unwrap())
}

/// `SharedCallouts::callout_reset_sbt_on`: "`PoolExhausted` and `NoMemory` (the new CPU's
/// table could not take it). Nothing changes on error"; "`InvalidCpu` (not -1 nor one of the
/// table's CPUs)"; "`InvalidFlags`"; `SharedCallouts::callout_init_on` "`InvalidCpu`".
#[test]
fn shared_errors_on_reset_change_nothing() {
    let set = set_with_small_cpu1();
    let filler = set.callout_init_on(1).unwrap();
    let c = set.callout_init_on(0).unwrap();
    assert_eq!(set.callout_reset(c, 5, 1), Ok(false));
    let state = |set: &Set| {
        (
            set.callout_cpu(c),
            set.callout_pending(c),
            set.callout_active(c),
            set.pending(0),
            set.pending(1),
            set.with(1, |t| t.records_in_use()),
        )
    };
    let before = state(&set);
    assert_eq!(
        set.callout_reset_sbt_on(c, ms(2), Sbt::ZERO, 9, 1, 0),
        Err(Error::PoolExhausted { calloutsize: 1 })
    );
    assert_eq!(
        set.callout_reset_on(c, 2, 9, 1),
        Err(Error::PoolExhausted { calloutsize: 1 })
    );
    assert_eq!(
        set.callout_init_on(1),
        Err(Error::PoolExhausted { calloutsize: 1 })
    );
    for cpu in [2, -2, i32::MIN, i32::MAX] {
        assert_eq!(
            set.callout_reset_sbt_on(c, ms(2), Sbt::ZERO, 9, cpu, 0),
            Err(Error::InvalidCpu(cpu))
        );
        assert_eq!(
            set.callout_reset_on(c, 2, 9, cpu),
            Err(Error::InvalidCpu(cpu))
        );
        assert_eq!(set.callout_init_on(cpu), Err(Error::InvalidCpu(cpu)));
    }
    assert_eq!(
        set.callout_reset_sbt_on(c, ms(2), Sbt::ZERO, 9, 1, 0x400),
        Err(Error::InvalidFlags(0x400))
    );
    assert_eq!(state(&set), before);
    // -1: CPU 0.
    let own = set.callout_init_on(-1).unwrap();
    assert_eq!(set.callout_cpu(own), Ok(0));
    set.callout_free(own).unwrap();
    set.check_invariants().unwrap();
    let log = tick_both(&set, 6);
    assert_eq!(log, [(0, 5, 1)]);
    set.callout_free(filler).unwrap();
}

/// docs/callouts.md, per-CPU tables: "If the new table cannot take it then (a full pool) the
/// callout is armed on the old one, its time counted on that clock"; "until then the callout
/// counts as pending and `callout_cpu` names the old CPU"; `SharedCallouts::callout_reset_on`:
/// "Returns `Ok(true)` if the callout was pending".
#[test]
fn a_deferred_move_to_a_full_cpu_stays_on_the_old_one() {
    let set = set_with_small_cpu1();
    let _filler = set.callout_init_on(1).unwrap();
    // CPU 1's clock runs ahead, so a time counted there would show.
    set.process_with(1, 1_000, |_| {}).unwrap();
    let c = set.callout_init_on(0).unwrap();
    set.callout_reset(c, 1, 1).unwrap();
    set.hardclock(0).unwrap();
    let s = Arc::clone(&set);
    let mut seen = Vec::new();
    set.softclock(0, |k| {
        if k == 1 {
            seen.push(s.callout_reset_on(c, 3, 2, 1).map(usize::from));
            seen.push(s.callout_cpu(c));
            seen.push(s.callout_pending(c).map(usize::from));
        }
    })
    .unwrap();
    assert_eq!(seen, [Ok(0), Ok(0), Ok(1)]);
    assert_eq!(set.callout_cpu(c), Ok(0), "CPU 1 had no record for it");
    assert_eq!(set.callout_pending(c), Ok(true));
    set.check_invariants().unwrap();
    let log = tick_both(&set, 5);
    assert_eq!(
        log,
        [(0, 4, 2)],
        "three ticks of CPU 0's clock after the handler"
    );
}

/// `SharedCallouts` (type docs): "On a table of several CPUs only these handles name the
/// table's callouts: a record made on a `Callouts` before it was shared, or through
/// `SharedCallouts::with`, is that CPU's own and none of the table's. A table of one CPU ...
/// its handles are its queue's records', whoever made them"; "a handle of another table, or a
/// made-up one, is `Error::StaleHandle` and changes nothing".
#[test]
fn which_handles_name_a_shared_tables_callouts() {
    // One CPU: a handle made before sharing names the same callout.
    let mut alone = cpu_table(exact_config());
    let early = alone.callout_init().unwrap();
    alone.callout_reset(early, 2, 1).unwrap();
    let one_shot = alone.setcallout(2, 2).unwrap();
    let single = SharedCallouts::single(alone);
    assert_eq!(single.callout_pending(early), Ok(true));
    assert_eq!(single.unsetcallout(one_shot), Ok(true));
    assert_eq!(single.callout_stop(early), Ok(true));
    assert_eq!(single.callout_reset(early, 1, 3), Ok(false));
    assert_eq!(single.callout_init_on(1), Err(Error::InvalidCpu(1)));
    assert_eq!(
        single.callout_reset_sbt_on(early, ms(1), Sbt::ZERO, 3, 1, 0),
        Err(Error::InvalidCpu(1))
    );
    assert_eq!(single.hardclock(1), Err(Error::InvalidCpu(1)));

    // Several CPUs: a record made through `with` is not one of the table's callouts.
    let set =
        SharedCallouts::new(vec![cpu_table(exact_config()), cpu_table(exact_config())]).unwrap();
    let local = set
        .with(0, |t| {
            let h = t.callout_init().unwrap();
            t.callout_reset(h, 3, 4).unwrap();
            h
        })
        .unwrap();
    let theirs = single.callout_init().unwrap();
    for h in [local, theirs, early] {
        assert_eq!(set.callout_stop(h), Err(Error::StaleHandle), "{h:?}");
        assert_eq!(set.callout_pending(h), Err(Error::StaleHandle), "{h:?}");
        assert_eq!(set.callout_reset(h, 1, 9), Err(Error::StaleHandle), "{h:?}");
        assert_eq!(set.callout_cpu(h), Err(Error::StaleHandle), "{h:?}");
        assert_eq!(set.callout_free(h), Err(Error::StaleHandle), "{h:?}");
        assert_eq!(
            set.callout_async_drain(h, |_| panic!("drain called on an error")),
            Err(Error::StaleHandle),
            "{h:?}"
        );
    }
    // CPU 0's own record is untouched and still fires.
    assert_eq!(set.with(0, |t| t.callout_pending(local)), Ok(Ok(true)));
    assert_eq!(single.callout_pending(theirs), Ok(false));
    let mine = set.callout_init().unwrap();
    assert_eq!(single.callout_stop(mine), Err(Error::StaleHandle));
    set.check_invariants().unwrap();
}

/// `SharedCallouts::callout_free`: "`WouldDeadlock` from the thread running its handler ...
/// Nothing changes on error"; `SharedCallouts::callout_drain`: "`WouldDeadlock` from the
/// thread running its handler (nothing changes)". Also from a direct handler run by
/// `SharedCallouts::hardclock_with`, on one CPU and on two.
#[test]
fn free_and_drain_from_the_handlers_thread_would_deadlock() {
    for ncpu in [1, 2] {
        let set = Arc::new(
            SharedCallouts::new((0..ncpu).map(|_| cpu_table(exact_config())).collect()).unwrap(),
        );
        let c = set.callout_init().unwrap();
        let d = set.callout_init().unwrap();
        set.callout_reset(c, 1, 1).unwrap();
        set.callout_reset_sbt_on(d, ms(1), Sbt::ZERO, 2, 0, C_DIRECT_EXEC)
            .unwrap();
        let s = Arc::clone(&set);
        let mut seen = Vec::new();
        let mut handler = |k: u32| {
            let h = if k == 1 { c } else { d };
            seen.push((k, s.callout_reset(h, 2, k).map(usize::from)));
            seen.push((k, s.callout_free(h).map(|()| 9)));
            seen.push((k, s.callout_drain(h).map(usize::from)));
            seen.push((k, s.callout_pending(h).map(usize::from)));
        };
        set.hardclock_with(0, &mut handler).unwrap();
        set.softclock(0, &mut handler).unwrap();
        let want = |k| {
            [
                (k, Ok(0)),
                (k, Err(Error::WouldDeadlock)),
                (k, Err(Error::WouldDeadlock)),
                (k, Ok(1)),
            ]
        };
        let mut expected = want(2).to_vec();
        expected.extend(want(1));
        assert_eq!(seen, expected, "{ncpu} CPUs");
        assert_eq!(set.callout_pending(c), Ok(true));
        assert_eq!(set.callout_pending(d), Ok(true));
        assert_eq!(set.callout_drain(c), Ok(true));
        set.callout_free(c).unwrap();
        set.callout_free(d).unwrap();
        set.check_invariants().unwrap();
    }
}

/// `SharedCallouts::hardclock_with` and `SharedCallouts::process_with`: "`SoftclockBusy`
/// (after advancing the clock) when another thread is running that CPU's handlers: the
/// direct handlers then run at the start of its next `softclock`"; `SharedCallouts::softclock`:
/// "`SoftclockBusy` when another thread runs this CPU's handlers".
#[test]
fn an_interrupt_while_another_thread_runs_handlers_still_moves_the_clock() {
    let set = Arc::new(SharedCallouts::single(cpu_table(exact_config())));
    let c = set.callout_init().unwrap();
    let d = set.callout_init().unwrap();
    set.callout_reset(c, 1, 1).unwrap();
    set.callout_reset_sbt_on(d, ms(2), Sbt::ZERO, 2, 0, C_DIRECT_EXEC)
        .unwrap();
    set.hardclock(0).unwrap();
    let (started_tx, started_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let direct_runs = Arc::new(AtomicUsize::new(0));
    let runner = {
        let set = Arc::clone(&set);
        let direct_runs = Arc::clone(&direct_runs);
        thread::spawn(move || {
            set.softclock(0, |k| {
                if k == 1 {
                    started_tx.send(()).unwrap();
                    release_rx.recv_timeout(PATIENCE).expect("released in time");
                } else {
                    direct_runs.fetch_add(1, Ordering::SeqCst);
                }
            })
        })
    };
    started_rx
        .recv_timeout(PATIENCE)
        .expect("the handler started");
    let mut here = 0;
    assert_eq!(
        set.hardclock_with(0, |_| here += 1),
        Err(Error::SoftclockBusy)
    );
    assert_eq!(set.ticks(0), Ok(2), "the clock advanced anyway");
    assert_eq!(
        set.process_with(0, 10, |_| here += 1),
        Err(Error::SoftclockBusy)
    );
    assert_eq!(set.ticks(0), Ok(10), "the clock moved anyway");
    assert_eq!(set.softclock(0, |_| here += 1), Err(Error::SoftclockBusy));
    release_tx.send(()).unwrap();
    let ran = runner.join().expect("the runner did not panic");
    let later = set.softclock(0, |_| {
        direct_runs.fetch_add(1, Ordering::SeqCst);
    });
    assert_eq!(here, 0, "no handler ran on the interrupted thread");
    assert_eq!(
        direct_runs.load(Ordering::SeqCst),
        1,
        "the direct handler ran once ({ran:?}, then {later:?})"
    );
    set.check_invariants().unwrap();
}

/// `Callouts::callout_async_drain`: "If its handler is running ... `drain` is given the call
/// the callout was last armed with (the running handler's own, unless the handler re-armed it
/// with another) ... The callout was stopped as well" (`AsyncDrain::Pending`); "Until then
/// resets are ignored"; "`Error::Busy` when a drain already waits"; `Callouts::softclock`:
/// "Returns how many calls `run` got" (the drain call among them).
#[test]
fn an_async_drain_from_a_handler_that_re_armed_itself() {
    let mut t = hashed(exact_config());
    let c = t.callout_init().unwrap();
    t.callout_reset(c, 1, 1).unwrap();
    t.hardclock();
    let mut seen = Vec::new();
    let mut log = Vec::new();
    let ran = t.softclock(|t, k| {
        log.push(k);
        if k == 1 {
            seen.push(format!("{:?}", t.callout_reset(c, 1, 2)));
            seen.push(format!("{:?}", t.callout_async_drain(c, |call| call + 100)));
            seen.push(format!("{:?}", t.callout_pending(c)));
            seen.push(format!("{:?}", t.callout_active(c)));
            seen.push(format!("{:?}", t.callout_reset(c, 1, 3)));
            seen.push(format!(
                "{:?}",
                t.callout_reset_sbt_on(c, ms(1), Sbt::ZERO, 3, 0, 0)
            ));
            seen.push(format!("{:?}", t.callout_pending(c)));
            seen.push(format!(
                "{:?}",
                t.callout_async_drain(c, |_| panic!("second drain called"))
            ));
            seen.push(format!("{:?}", t.callout_stop(c)));
        }
    });
    assert_eq!(
        seen,
        [
            "Ok(false)",
            "Ok(Pending)",
            "Ok(false)",
            "Ok(false)",
            "Ok(false)",
            "Ok(false)",
            "Ok(false)",
            "Err(Busy)",
            "Ok(false)",
        ]
    );
    assert_eq!(log, [1, 102], "the drain call, made of the re-armed call");
    assert_eq!(ran, 2);
    // Once the drain ran the callout is idle and may be freed; nothing else runs.
    assert_eq!(t.callout_pending(c), Ok(false));
    for _ in 0..3 {
        kernel_tick(&mut t, &mut Vec::new());
    }
    assert_eq!(
        t.callout_async_drain(c, |_| panic!()),
        Ok(AsyncDrain::Stopped(false))
    );
    t.callout_free(c).unwrap();
    t.check_invariants().unwrap();
}

/// Ticks both CPUs of `set` `ticks` times, in turn; what ran: (CPU, its tick, the value).
fn tick_both(set: &Set, ticks: u64) -> Vec<(usize, u64, u32)> {
    let mut log = Vec::new();
    for _ in 0..ticks {
        for cpu in 0..2 {
            set.hardclock(cpu).unwrap();
            let tick = set.ticks(cpu).unwrap();
            set.softclock(cpu, |k| log.push((cpu, tick, k))).unwrap();
        }
    }
    log
}

/// Two exact CPUs, CPU 1's clock at `cpu1_at`, and a callout on CPU 0 due at its next
/// softclock (CPU 0's clock already moved to it), whose handler passes it `1`.
fn two_cpus_with_one_due(cpu1_at: u64) -> (Arc<Set>, Handle) {
    let set = Arc::new(
        SharedCallouts::new(vec![cpu_table(exact_config()), cpu_table(exact_config())]).unwrap(),
    );
    if cpu1_at > 0 {
        set.process_with(1, cpu1_at, |_| {}).unwrap();
    }
    let c = set.callout_init().unwrap();
    set.callout_reset(c, 1, 1).unwrap();
    set.hardclock(0).unwrap();
    (set, c)
}

/// `SharedCallouts::callout_reset_sbt_on`: "on its own CPU for -1 (if a move is waiting, the
/// CPU it goes to)"; "A reset while a move waits replaces the arming it will make (whatever
/// its `cpu`)"; "Returns `Ok(true)` if the callout was pending (a waiting move counts)";
/// docs/callouts.md: "its time converted at the reset on the new CPU's clock".
#[test]
fn a_waiting_move_counts_as_pending_and_keeps_its_target_for_minus_one() {
    let (set, c) = two_cpus_with_one_due(500);
    let s = Arc::clone(&set);
    let mut seen = Vec::new();
    set.softclock(0, |k| {
        if k == 1 {
            seen.push(s.callout_reset_on(c, 10, 2, 1));
            // Replaces the arming; -1 means the CPU the waiting move goes to.
            seen.push(s.callout_reset_sbt_on(c, ms(3), Sbt::ZERO, 3, -1, 0));
            seen.push(s.callout_pending(c));
            // `SharedCallouts::pending`: "moves waiting there counted".
            seen.push(s.pending(0).map(|n| n == 1));
            seen.push(s.pending(1).map(|n| n == 0));
        }
    })
    .unwrap();
    assert_eq!(seen, [Ok(false), Ok(true), Ok(true), Ok(true), Ok(true)]);
    assert_eq!(set.callout_cpu(c), Ok(1));
    let log = tick_both(&set, 12);
    assert_eq!(
        log,
        [(1, 503, 3)],
        "three ticks of CPU 1's clock after the reset"
    );
    set.check_invariants().unwrap();
}

/// `SharedCallouts::callout_drain`: "`callout_stop`, then waits until the handler is not
/// running (on any CPU). Returns `Ok(true)` if the callout was pending"; and the handle "stays
/// valid when the callout moves to another CPU". A drain from another thread while the
/// handler moves its own callout: when it returns, the handler has returned and the callout
/// runs nowhere.
#[test]
fn a_drain_racing_a_handler_that_moves_its_callout() {
    let (set, c) = two_cpus_with_one_due(0);
    let (started_tx, started_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let returned = Arc::new(AtomicUsize::new(0));
    let runner = {
        let set = Arc::clone(&set);
        let returned = Arc::clone(&returned);
        thread::spawn(move || {
            set.softclock(0, |_| {
                set.callout_reset_on(c, 1, 2, 1).unwrap();
                started_tx.send(()).unwrap();
                release_rx.recv_timeout(PATIENCE).expect("released in time");
                returned.store(1, Ordering::SeqCst);
            })
        })
    };
    started_rx
        .recv_timeout(PATIENCE)
        .expect("the handler started");
    let drainer = {
        let set = Arc::clone(&set);
        let returned = Arc::clone(&returned);
        thread::spawn(move || {
            let got = set.callout_drain(c);
            (got, returned.load(Ordering::SeqCst))
        })
    };
    thread::sleep(Duration::from_millis(50));
    release_tx.send(()).unwrap();
    let (got, seen_return) = drainer.join().expect("the drain did not panic");
    runner.join().expect("the runner did not panic").unwrap();
    assert_eq!(
        seen_return, 1,
        "callout_drain returned before the handler did"
    );
    assert_eq!(got, Ok(true), "the waiting move was pending");
    assert_eq!(set.callout_pending(c), Ok(false));
    let mut log = Vec::new();
    for _ in 0..3 {
        for cpu in 0..2 {
            set.hardclock(cpu).unwrap();
            set.softclock(cpu, |k| log.push((cpu, k))).unwrap();
        }
    }
    assert!(log.is_empty(), "a drained callout ran: {log:?}");
    set.callout_free(c).unwrap();
    set.check_invariants().unwrap();
}

/// `SharedCallouts::callout_reset_sbt_on`: "The time is counted on the clock of the table that
/// takes the callout, read at this call (for a deferred move too: converted now on the new
/// CPU's clock, as FreeBSD does, and armed there when the handler returns)";
/// `SharedCallouts::callout_reset_on`: "`ticks` ticks of the new table's clock after this
/// call". The new CPU's clock moves on while the handler still runs; the callout still runs
/// five ticks after the reset's reading of that clock.
#[test]
fn a_deferred_move_counts_its_time_from_the_reset_on_the_new_cpus_clock() {
    let (set, c) = two_cpus_with_one_due(100);
    let s = Arc::clone(&set);
    let mut log = Vec::new();
    set.softclock(0, |_| {
        s.callout_reset_on(c, 5, 2, 1).unwrap();
        // Handlers run with no lock held: CPU 1's clock moves three ticks meanwhile.
        for _ in 0..3 {
            s.hardclock(1).unwrap();
            let tick = s.ticks(1).unwrap();
            s.softclock(1, |k| log.push((tick, k))).unwrap();
        }
    })
    .unwrap();
    assert_eq!(set.callout_cpu(c), Ok(1));
    for _ in 0..10 {
        set.hardclock(1).unwrap();
        let tick = set.ticks(1).unwrap();
        set.softclock(1, |k| log.push((tick, k))).unwrap();
    }
    assert_eq!(
        log,
        [(105, 2)],
        "five ticks after CPU 1's tick 100, read at the reset"
    );
}
