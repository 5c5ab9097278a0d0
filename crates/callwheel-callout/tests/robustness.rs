//! What a hostile caller can do to a callout table, and what it must not achieve: a handle of
//! one table acting on another, a growing pool aborting the process when memory runs out, a
//! hashed table whose per-tick work grows with its pool, and a panicking handler leaving the
//! table stuck.
#![cfg(all(not(callwheel_loom), target_os = "linux"))]

use std::panic::{self, AssertUnwindSafe};

use callwheel::time::Sbt;
use callwheel_callout::{Backing, Callouts, Config, Error, Handle, SharedCallouts};
use callwheel_schemes::hashed_wheel::HashedWheel;

fn hashed(bits: u32) -> Callouts<HashedWheel<u32>, u32> {
    Callouts::new(HashedWheel::new(bits).unwrap())
}

// ---- handles belong to their table ----

#[test]
fn a_handle_of_another_table_is_stale_there() {
    let mut a = hashed(4);
    let mut b = hashed(4);
    // Fresh tables hand out the same record index and generation first.
    let ha = a.setcallout(1, 5).unwrap();
    let hb = b.setcallout(2, 5).unwrap();
    assert_eq!((ha.index(), ha.generation()), (hb.index(), hb.generation()));
    assert_ne!(ha, hb, "the handles carry their table's identity");
    assert_eq!(a.unsetcallout(hb), Err(Error::StaleHandle));
    assert_eq!(b.unsetcallout(ha), Err(Error::StaleHandle));

    let pa = a.callout_init().unwrap();
    let pb = b.callout_init().unwrap();
    assert_eq!(b.callout_reset(pa, 1, 9), Err(Error::StaleHandle));
    assert_eq!(a.callout_reset(pb, 1, 9), Err(Error::StaleHandle));
    assert_eq!(b.callout_pending(pa), Err(Error::StaleHandle));
    assert_eq!(b.callout_active(pa), Err(Error::StaleHandle));
    assert_eq!(b.callout_stop(pa), Err(Error::StaleHandle));
    assert_eq!(b.callout_drain(pa), Err(Error::StaleHandle));
    assert_eq!(b.callout_deactivate(pa), Err(Error::StaleHandle));
    assert_eq!(b.callout_free(pa), Err(Error::StaleHandle));
    assert_eq!(
        b.callout_reset_sbt_on(
            pa,
            callwheel::time::Sbt::SECOND,
            callwheel::time::Sbt::ZERO,
            9,
            0,
            0
        ),
        Err(Error::StaleHandle)
    );

    // Nothing changed on either side: both one-shots still run, the persistent ones are idle.
    assert_eq!((a.pending(), b.pending()), (1, 1));
    assert_eq!(a.callout_pending(pa), Ok(false));
    assert_eq!(b.callout_pending(pb), Ok(false));
    for t in [&mut a, &mut b] {
        let mut ran = Vec::new();
        for _ in 0..5 {
            t.hardclock();
            t.softclock(|_, c| ran.push(c));
        }
        assert_eq!(ran.len(), 1);
        t.check_invariants().unwrap();
    }
    assert_eq!(a.callout_free(pa), Ok(()));
    assert_eq!(b.callout_free(pb), Ok(()));
}

// ---- a handler that panics ----

/// Sets up three callouts due at tick 1 — a one-shot, a persistent one whose handler panics,
/// another one-shot — and runs `softclock` with the panic caught.
fn panic_in_the_middle<S: Backing>(t: &mut Callouts<S, u32>) -> Handle {
    t.timeout(1, 1).unwrap();
    let p = t.callout_init().unwrap();
    t.callout_reset(p, 1, 2).unwrap();
    t.timeout(3, 1).unwrap();
    assert!(t.hardclock());
    let mut ran = Vec::new();
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        t.softclock(|_, call| {
            ran.push(call);
            if call == 2 {
                panic!("handler failure");
            }
        })
    }));
    assert!(result.is_err());
    assert_eq!(ran, [1, 2]);
    p
}

#[test]
fn a_panicking_handler_leaves_callouts_consistent_and_usable() {
    let mut t = hashed(4);
    let p = panic_in_the_middle(&mut t);
    t.check_invariants().unwrap();
    // The handler is not running any more: its callout can be drained, re-armed and freed.
    assert_eq!(t.callout_active(p), Ok(true));
    assert_eq!(t.callout_drain(p), Ok(false));
    // The callout due after the panicking one was not lost: the next softclock runs it.
    let mut ran = Vec::new();
    assert_eq!(t.softclock(|_, call| ran.push(call)), 1);
    assert_eq!(ran, [3]);
    assert_eq!(t.callout_reset(p, 1, 4), Ok(false));
    t.hardclock();
    assert_eq!(t.softclock(|_, call| ran.push(call)), 1);
    assert_eq!(ran, [3, 4]);
    assert_eq!(t.callout_free(p), Ok(()));
    t.check_invariants().unwrap();
    assert_eq!(t.records_in_use(), 0);
}

#[test]
fn a_panicking_direct_handler_leaves_callouts_usable() {
    let mut t = hashed(4);
    let p = t.callout_init().unwrap();
    let direct = callwheel_callout::flags::C_DIRECT_EXEC;
    t.callout_reset_sbt_on(p, Sbt::MILLISECOND, Sbt::ZERO, 1, 0, direct)
        .unwrap();
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        t.hardclock_with(|_, _| panic!("direct handler failure"))
    }));
    assert!(result.is_err());
    t.check_invariants().unwrap();
    assert_eq!(t.callout_free(p), Ok(()));
}

#[test]
fn a_panicking_handler_leaves_shared_callouts_usable() {
    let table = SharedCallouts::single(hashed(4));
    let p = table.with(0, panic_in_the_middle).unwrap();
    table.with(0, |t| t.check_invariants()).unwrap().unwrap();
    // Not stuck "running handlers", not poisoned, nothing lost.
    let mut ran = Vec::new();
    assert_eq!(table.softclock(0, |call| ran.push(call)), Ok(1));
    assert_eq!(ran, [3]);
    // A table of one CPU has no directory: `p`, made on CPU 0's table through `with`, is one
    // of its callouts, and its handler is no longer running.
    assert_eq!(table.callout_drain(p), Ok(false));

    // The same through the shared softclock itself (the lock is released while handlers run).
    table.callout_reset(p, 1, 2).unwrap();
    table.timeout(5, 1).unwrap();
    table.hardclock(0).unwrap();
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        table.softclock(0, |call| {
            if call == 2 {
                panic!("handler failure");
            }
        })
    }));
    assert!(result.is_err());
    table.with(0, |t| t.check_invariants()).unwrap().unwrap();
    let mut ran = Vec::new();
    assert_eq!(table.softclock(0, |call| ran.push(call)), Ok(1));
    assert_eq!(ran, [5]);
    // The panicking handler is not left running: the drain returns at once.
    assert_eq!(table.callout_drain(p), Ok(false));
    assert_eq!(table.callout_free(p), Ok(()));
    assert_eq!(table.hardclock_with(0, |_| {}), Ok(false));
    table.with(0, |t| t.check_invariants()).unwrap().unwrap();
}

// ---- per-tick work of a hashed table that grew ----

#[test]
fn a_hashed_table_that_grew_examines_a_bounded_number_of_entries_per_tick() {
    const N: u64 = 200_000;
    let config = Config {
        calloutsize: 64,
        // Exact, so that the count of callouts run by a tick is known.
        deviation_percent: 0,
        ..Config::default()
    };
    // Sized for 64 callouts: 64 buckets.
    let mut t = Callouts::with_config(HashedWheel::new(6).unwrap(), config).unwrap();
    // Deadlines 1, 4, 7, ...: one callout every third tick, spread over 600,000 ticks.
    for i in 0..N {
        t.setcallout(i as u32, (i * 3 + 1) as i64).unwrap();
    }
    assert_eq!(t.pending(), N as usize);
    let mut worst = 0;
    let mut fired = 0;
    for _ in 0..3_000 {
        // The scheme's steps: one to move to the tick, one per entry of its bucket examined
        // (the due ones included).
        let before = t.stats().steps;
        t.hardclock();
        let ran = t.softclock(|_, _| {}) as u64;
        fired += ran;
        let examined = t.stats().steps - before - ran;
        worst = worst.max(examined);
    }
    assert_eq!(fired, 1_000);
    // The buckets grew with the pool: one per pending callout.
    assert!(
        t.scheme().size() >= 1 << 17,
        "{} buckets",
        t.scheme().size()
    );
    assert!(t.stats().resizes > 0);
    assert!(
        worst <= 8,
        "a tick examined {worst} entries beyond the callouts due (bounded by a constant)"
    );
    t.check_invariants().unwrap();
}

// ---- out of memory ----

/// Set in the child process of [`a_growing_pool_reports_out_of_memory_instead_of_aborting`].
const OOM_CHILD: &str = "CALLWHEEL_CALLOUT_OOM_CHILD";

/// Bytes of address space the process uses now (from /proc/self/statm).
fn address_space_in_use() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("Linux /proc");
    let pages: u64 = statm.split_whitespace().next().unwrap().parse().unwrap();
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    pages * page
}

/// The child's work: cap the address space a little above what is in use, set callouts on a
/// growing hashed table until it reports running out, then check nothing was lost.
fn oom_child() {
    let mut t = hashed(6);
    let mut handles = Vec::with_capacity(1 << 16);
    let limit = address_space_in_use() + (96 << 20);
    let rlimit = libc::rlimit {
        rlim_cur: limit,
        rlim_max: limit,
    };
    // SAFETY: `rlimit` is a valid, initialised struct for the duration of the call.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &rlimit) }, 0);
    let mut set = 0u64;
    let error = loop {
        match t.setcallout(set as u32, (set % 1000 + 1) as i64) {
            Ok(h) => {
                // Keep a sample of the handles (keeping all would need memory of its own).
                if set.is_multiple_of(1024) && handles.len() < handles.capacity() {
                    handles.push(h);
                }
                set += 1;
            }
            Err(e) => break e,
        }
    };
    assert_eq!(error, Error::NoMemory);
    assert!(set > 10_000, "only {set} callouts before running out");
    t.check_invariants().unwrap();
    assert_eq!(
        t.pending(),
        set as usize,
        "every callout set before is still pending"
    );
    for &h in &handles {
        assert_eq!(t.unsetcallout(h), Ok(true));
    }
    // Every other callout runs, exactly once.
    let mut ran = 0u64;
    for _ in 0..1000 {
        t.hardclock();
        ran += t.softclock(|_, _| {}) as u64;
    }
    assert_eq!(ran, set - handles.len() as u64);
    t.check_invariants().unwrap();
    assert_eq!(t.records_in_use(), 0);
}

#[test]
fn a_growing_pool_reports_out_of_memory_instead_of_aborting() {
    if std::env::var_os(OOM_CHILD).is_some() {
        oom_child();
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args([
            "a_growing_pool_reports_out_of_memory_instead_of_aborting",
            "--exact",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(OOM_CHILD, "1")
        .output()
        .expect("the test binary runs again");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        None,
        "the child was killed by a signal:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "the child failed: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_resize_inside_an_interrupted_softclock_loses_and_reorders_nothing() {
    // Four buckets and a budget of 3 steps: the scheme stops inside the tick's bucket, and a
    // handler then sets enough callouts to make the table rebuild the wheel right there.
    let config = Config {
        max_softclock_steps: 3,
        ..Config::default()
    };
    let mut t = Callouts::with_config(HashedWheel::new(2).unwrap(), config).unwrap();
    for k in 0..10 {
        t.timeout(k, 5).unwrap();
    }
    t.timeout(100, 9).unwrap(); // same bucket as tick 5, a later rotation
    let mut log = Vec::new();
    for _ in 0..12 {
        t.hardclock();
        t.softclock(|t, k| {
            log.push((t.ticks(), k));
            if k == 0 {
                for j in 0..40 {
                    t.timeout(200 + j, 2).unwrap();
                }
            }
        });
        t.check_invariants().unwrap();
    }
    assert!(t.stats().resizes > 0, "the wheel was rebuilt");
    let mut expected: Vec<(u64, u32)> = (0..10).map(|k| (5, k)).collect();
    expected.extend((0..40).map(|j| (7, 200 + j)));
    expected.push((9, 100));
    assert_eq!(log, expected);
}

// ---- the old list when the table jumps toward the end of time ----

/// 4.4BSD's `calltodo` counts each entry's time in a signed 64-bit `c_time`. A table moved by
/// `callout_process` to the last ticks with its softclock behind, then ticked by `hardclock`,
/// asks the list to move further than that count reaches: the list takes the jump in parts,
/// and its invariants (every entry's count adding up to its deadline) hold after every call,
/// whatever the calls in between.
#[test]
fn the_old_list_holds_when_the_table_jumps_toward_the_end_of_time() {
    use callwheel_schemes::differential_list::DifferentialList;
    for seed in 1..=2_000u64 {
        let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        let config = Config {
            max_softclock_steps: 1 + next(4),
            ..Config::default()
        };
        let mut t: Callouts<DifferentialList<u32>, u32> =
            Callouts::with_config(DifferentialList::new(), config).unwrap();
        let mut calls = Vec::new();
        for _ in 0..60 {
            match next(8) {
                0 | 1 => {
                    let ticks = [1, 2, 5, 40, i64::MAX / 2, i64::MAX][next(6) as usize];
                    let call = next(5) as u32;
                    let got = t.timeout(call, ticks);
                    calls.push(format!("timeout({call}, {ticks}): {got:?}"));
                }
                2 => {
                    let call = next(5) as u32;
                    calls.push(format!("untimeout({call}): {}", t.untimeout(call)));
                }
                3 => calls.push(format!("hardclock: {}", t.hardclock())),
                4 => {
                    let to = match next(4) {
                        0 => t.ticks().saturating_add(next(50)),
                        1 => u64::MAX - next(5),
                        2 => next(u64::MAX),
                        _ => t.ticks().saturating_add(1 << 62),
                    };
                    calls.push(format!("callout_process({to}): {}", t.callout_process(to)));
                }
                5 | 6 => calls.push(format!("softclock: {}", t.softclock(|_, _| {}))),
                _ => {
                    let got = t.setcallout(9, 1 + next(30) as i64).is_ok();
                    calls.push(format!("setcallout: {got}"));
                }
            }
            if let Err(e) = t.check_invariants() {
                panic!("seed {seed}: {e} after\n{}", calls.join("\n"));
            }
        }
    }
}
