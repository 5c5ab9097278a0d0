//! Drives the production wheel with arbitrary starts (with tolerance), periodic starts, resets,
//! stops (of live, fired and made-up handles, and of another wheel's), callbacks that stop timers, and advances — budgeted,
//! to arbitrary times (up to the end of u64), or to `next_wakeup()` as a tickless driver would —
//! and checks every firing against a simple oracle: nothing fires early, twice, or after being
//! stopped; a one-shot timer fires at its firing instant; driven by `next_wakeup`, nothing fires
//! after its window closes; a complete advance leaves nothing due behind; `next_wakeup` is never
//! later than a pending window's end; the invariants hold after every operation.
#![no_main]

use std::collections::BTreeMap;

use callwheel::{firing_instant, window_end, Missed, Wheel};
use callwheel::{Budget, Handle, Scheme, Tick, Timers};
use libfuzzer_sys::fuzz_target;

struct Pending {
    deadline: Tick,
    /// When it is due (`firing_instant`: the deadline, or with a window a coarse slot boundary
    /// in its first eighth); one-shot timers only.
    at: Tick,
    end: Tick,
    periodic: bool,
    /// Its firing instant had already passed when it was started or reset.
    overdue: bool,
    /// A periodic timer with the Burst policy: it replays every missed period, so the time may
    /// only move in small steps while one is pending.
    burst: bool,
    /// A periodic timer's period and policy.
    schedule: Option<(Tick, Missed)>,
}

/// The next deadline of a periodic timer that fired for `deadline` when the caller's time was
/// `now`, derived here independently of the wheel; `None` past the end of time.
fn next_deadline(deadline: Tick, now: Tick, period: Tick, policy: Missed) -> Option<Tick> {
    let missed = match deadline.checked_add(period) {
        Some(d) if now >= d => (now - deadline) / period,
        _ => 0,
    };
    match policy {
        _ if missed == 0 => deadline.checked_add(period),
        Missed::Burst => deadline.checked_add(period),
        Missed::Delay => now.checked_add(period),
        Missed::Skip => missed
            .checked_add(1)?
            .checked_mul(period)
            .and_then(|x| deadline.checked_add(x)),
    }
}

enum Event {
    Fired(Handle, Tick, Tick),
    Stopped(Handle, bool),
}

fuzz_target!(|data: &[u8]| {
    let mut w: Wheel<u64> = Wheel::new();
    // A second wheel whose handles (same slots and generations as the first's) are presented
    // to the first: they must name nothing there.
    let mut other: Wheel<u64> = Wheel::new();
    let mut foreign: Vec<Handle> = Vec::new();
    let mut pending: BTreeMap<Handle, Pending> = BTreeMap::new();
    let mut issued: Vec<Handle> = Vec::new();
    let mut target: Tick = 0;
    let mut next_value = 0u64;
    for chunk in data.chunks_exact(9) {
        let op = chunk[0];
        let arg = u64::from_le_bytes(chunk[1..9].try_into().unwrap());
        let now = w.now();
        // Deadlines mostly near, sometimes anywhere in u64.
        let deadline = if op & 0x80 != 0 {
            arg
        } else {
            now.saturating_add(arg % 5_000)
        };
        let tolerance = if op & 0x40 != 0 {
            arg.rotate_left(17)
        } else {
            (arg >> 40) % 3_000
        };
        match op % 7 {
            0 | 1 => {
                next_value += 1;
                let h = w.start_with(deadline, tolerance, next_value).unwrap();
                issued.push(h);
                if let Ok(f) = other.start_with(deadline, tolerance, next_value) {
                    foreign.push(f);
                }
                let at = firing_instant(deadline, tolerance);
                let p = Pending {
                    deadline,
                    at,
                    end: window_end(deadline, tolerance),
                    periodic: false,
                    overdue: at <= now,
                    burst: false,
                    schedule: None,
                };
                pending.insert(h, p);
            }
            2 => {
                next_value += 1;
                let period = if op & 0x20 != 0 {
                    arg
                } else {
                    1 + (arg >> 20) % 2_000
                };
                let mut policy = [Missed::Burst, Missed::Delay, Missed::Skip][(arg % 3) as usize];
                if policy == Missed::Burst && now < target {
                    // The wheel is still catching up with an interrupted advance to a far
                    // target: a Burst timer would replay every period up to it.
                    policy = Missed::Skip;
                }
                // A Burst timer replays every period due by the time it is woken: a window much
                // wider than the period, or a tiny period under a long step, would make one
                // advance replay millions (correct, but it stalls the fuzzer).
                let period = if policy == Missed::Burst {
                    period.max(100)
                } else {
                    period
                };
                let tolerance = if policy == Missed::Burst {
                    tolerance.min(period)
                } else {
                    tolerance
                };
                match w.start_periodic(deadline, period, tolerance, policy, next_value) {
                    Ok(h) => {
                        issued.push(h);
                        let burst = policy == Missed::Burst;
                        let p = Pending {
                            deadline,
                            at: deadline,
                            end: Tick::MAX,
                            periodic: true,
                            overdue: true,
                            burst,
                            schedule: Some((period, policy)),
                        };
                        pending.insert(h, p);
                    }
                    Err(e) => assert_eq!((e, period), (callwheel::Error::ZeroPeriod, 0)),
                }
            }
            3 if op & 0x08 != 0 && !foreign.is_empty() => {
                let h = foreign[(arg as usize) % foreign.len()];
                let len = w.len();
                assert!(w.stop(h).is_none(), "another wheel's handle stopped {h:?}");
                assert!(
                    w.reset(h, deadline, tolerance).is_none(),
                    "another wheel's handle reset {h:?}"
                );
                assert!(
                    !w.contains(h) && w.deadline(h).is_none(),
                    "another wheel's handle found {h:?}"
                );
                assert_eq!(w.len(), len);
            }
            3 => {
                let h = pick(&issued, arg);
                let live = pending.remove(&h).is_some();
                assert_eq!(w.stop(h).is_some(), live, "stop of {h:?}");
            }
            4 => {
                let h = pick(&issued, arg);
                let live = pending.contains_key(&h);
                // As at start: a Burst timer's window stays within its period.
                let tolerance = match pending.get(&h).and_then(|p| p.schedule) {
                    Some((period, Missed::Burst)) => tolerance.min(period),
                    _ => tolerance,
                };
                let before = w.deadline(h);
                assert_eq!(before.is_some(), live, "deadline of {h:?}");
                assert_eq!(w.reset(h, deadline, tolerance), before, "reset of {h:?}");
                if let Some(p) = pending.get_mut(&h) {
                    p.deadline = deadline;
                    p.at = firing_instant(deadline, tolerance);
                    p.overdue = p.periodic || p.at <= now;
                    p.burst = p.burst && p.periodic;
                    p.end = if p.periodic {
                        Tick::MAX
                    } else {
                        window_end(deadline, tolerance)
                    };
                }
            }
            _ => {
                // Advance: to next_wakeup (a tickless driver), or by an arbitrary step.
                let driven = op % 7 == 5;
                if driven {
                    let Some(t) = w.next_wakeup() else { continue };
                    let earliest_end = pending.values().filter(|p| !p.overdue).map(|p| p.end).min();
                    if let Some(end) = earliest_end {
                        assert!(
                            t <= end.max(now),
                            "next_wakeup {t} after a window's end {end}"
                        );
                    }
                    target = target.max(t);
                } else if op & 0x10 != 0 && !pending.values().any(|p| p.burst) {
                    target = target.saturating_add(arg >> 4);
                } else {
                    target = target.saturating_add(arg % 10_000);
                }
                let budget = if arg & 1 == 0 {
                    Budget::UNLIMITED
                } else {
                    Budget::steps(arg >> 50)
                };
                let snapshot = issued.clone();
                let mut events = Vec::new();
                let progress = w.advance(target, budget, |t: &mut dyn Timers<u64>, e| {
                    events.push(Event::Fired(e.handle, e.deadline, t.now()));
                    if e.value % 4 == 0 && !snapshot.is_empty() {
                        let h = snapshot[(e.value as usize)
                            .wrapping_mul(31)
                            .wrapping_add(arg as usize)
                            % snapshot.len()];
                        events.push(Event::Stopped(h, t.stop(h).is_some()));
                    }
                });
                let mut fired = 0;
                for event in events {
                    match event {
                        Event::Stopped(h, stopped) => {
                            let live = pending.remove(&h).is_some();
                            assert_eq!(stopped, live, "stop from a callback of {h:?}");
                        }
                        Event::Fired(h, deadline, at) => {
                            fired += 1;
                            let p = pending.get_mut(&h).expect("fired but not pending");
                            assert!(at >= deadline, "fired at {at} before {deadline}");
                            if !p.periodic && !p.overdue {
                                assert_eq!(at, p.at, "a one-shot timer fired off its instant");
                                if driven {
                                    assert!(at <= p.end, "fired at {at} after its window");
                                }
                            }
                            match p.schedule {
                                Some((period, policy)) => {
                                    match next_deadline(deadline, target, period, policy) {
                                        Some(next) => p.deadline = next,
                                        // Past the end of time: that was its last firing.
                                        None => {
                                            pending.remove(&h);
                                        }
                                    }
                                }
                                None => {
                                    pending.remove(&h);
                                }
                            }
                        }
                    }
                }
                assert_eq!(progress.fired, fired);
                if progress.complete {
                    for p in pending.values() {
                        assert!(p.periodic || p.at > target, "a due timer did not fire");
                    }
                }
            }
        }
        w.check_invariants().unwrap();
        assert_eq!(w.len(), pending.len());
    }
});

fn pick(issued: &[Handle], arg: u64) -> Handle {
    if issued.is_empty() || arg % 7 == 0 {
        Handle::from_parts(arg, arg.rotate_left(29)) // made up
    } else {
        issued[(arg as usize) % issued.len()]
    }
}
