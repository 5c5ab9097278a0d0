//! Drives the production wheel with arbitrary starts (with tolerance), periodic starts, resets,
//! stops (of live, fired and made-up handles) and budgeted advances, and checks every firing
//! against a simple oracle: nothing fires early, twice, or after being stopped; an exact wheel
//! fires each one-shot timer at its deadline; a complete advance leaves nothing due behind; the
//! invariants hold after every operation.
#![no_main]

use std::collections::BTreeMap;

use callwheel::wheel::{Missed, Wheel};
use callwheel::{Budget, Handle, Scheme, Tick, Timers};
use libfuzzer_sys::fuzz_target;

struct Pending {
    deadline: Tick,
    periodic: bool,
}

fuzz_target!(|data: &[u8]| {
    let mut w: Wheel<u64> = Wheel::new();
    let mut pending: BTreeMap<u64, Pending> = BTreeMap::new();
    let mut issued: Vec<Handle> = Vec::new();
    let mut target: Tick = 0;
    let mut next_value = 0u64;
    let mut bytes = data.chunks_exact(9);
    for chunk in bytes.by_ref() {
        let op = chunk[0];
        let arg = u64::from_le_bytes(chunk[1..9].try_into().unwrap());
        let now = w.now();
        // Deadlines mostly near, sometimes anywhere in u64.
        let deadline = if op & 0x80 != 0 { arg } else { now.saturating_add(arg % 5_000) };
        let tolerance = (arg >> 40) % 3_000;
        match op % 6 {
            0 | 1 => {
                next_value += 1;
                let h = w.start_with(deadline, tolerance, next_value).unwrap();
                issued.push(h);
                pending.insert(h.to_bits(), Pending { deadline, periodic: false });
            }
            2 => {
                next_value += 1;
                let period = 1 + (arg >> 20) % 2_000;
                let policy = [Missed::Burst, Missed::Delay, Missed::Skip][(arg % 3) as usize];
                let first = now.saturating_add(arg % 3_000);
                let h = w.start_periodic(first, period, tolerance, policy, next_value).unwrap();
                issued.push(h);
                pending.insert(h.to_bits(), Pending { deadline: first, periodic: true });
            }
            3 => {
                let h = pick(&issued, arg);
                let live = pending.contains_key(&h.to_bits());
                assert_eq!(w.stop(h).is_some(), live, "stop of {h:?}");
                pending.remove(&h.to_bits());
            }
            4 => {
                let h = pick(&issued, arg);
                let live = pending.contains_key(&h.to_bits());
                assert_eq!(w.reset(h, deadline, tolerance), live, "reset of {h:?}");
                if let Some(p) = pending.get_mut(&h.to_bits()) {
                    p.deadline = deadline;
                }
            }
            _ => {
                target = target.saturating_add(arg % 10_000);
                let budget = if arg & 1 == 0 { Budget::UNLIMITED } else { Budget::steps(arg >> 50) };
                let mut fired = Vec::new();
                let progress = w.advance(target, budget, |t: &mut dyn Timers<u64>, e| {
                    fired.push((e.handle, e.deadline, t.now()));
                });
                assert_eq!(progress.fired, fired.len());
                for (h, deadline, at) in fired {
                    let p = pending.get_mut(&h.to_bits()).expect("fired but not pending");
                    assert!(at >= deadline, "fired at {at} before {deadline}");
                    if p.deadline > now && !p.periodic {
                        assert_eq!(at, deadline.max(now), "exact timer fired late");
                    }
                    if p.periodic {
                        p.deadline = Tick::MAX; // its next deadline is the wheel's to choose
                    } else {
                        pending.remove(&h.to_bits());
                    }
                }
                if progress.complete {
                    for p in pending.values() {
                        assert!(p.periodic || p.deadline > target, "a due timer did not fire");
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
        Handle::from_bits(arg) // made up
    } else {
        issued[(arg as usize) % issued.len()]
    }
}
