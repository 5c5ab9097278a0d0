//! Per-CPU tables: a callout fires only on its CPU's table; `cpu` -1 keeps its CPU; a CPU
//! outside the table is refused; moving an idle or pending callout is immediate, moving one
//! whose handler runs waits for the handler to return; handles stay valid across moves and
//! other tables' and made-up handles act on nothing; `callout_async_drain` on a table of
//! several CPUs.
#![cfg(not(callwheel_loom))]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use callwheel::time::Sbt;
use callwheel::Wheel;
use callwheel_callout::{AsyncDrain, Callouts, Config, Error, Handle, SharedCallouts};
use callwheel_schemes::hashed_wheel::HashedWheel;

type Set = SharedCallouts<HashedWheel<u32>, u32>;

fn set(ncpu: usize) -> Set {
    let tables = (0..ncpu)
        .map(|_| Callouts::with_config(HashedWheel::new(4).unwrap(), Config::default()).unwrap())
        .collect();
    SharedCallouts::new(tables).unwrap()
}

/// `n` milliseconds as FreeBSD writes them, `n * SBT_1MS` (truncated): exactly `n` ticks at
/// 1000 Hz, where `Sbt::from_millis(n)`, rounded up past the tick, would take one more.
fn ms(n: i64) -> Sbt {
    Sbt::MILLISECOND.saturating_mul(n)
}

/// `n` ticks of CPU `cpu` (hardclock, then softclock), logging (cpu, tick, call) per call.
fn run(set: &Set, cpu: usize, n: u64, log: &mut Vec<(usize, u64, u32)>) {
    for _ in 0..n {
        set.hardclock(cpu).unwrap();
        let tick = set.ticks(cpu).unwrap();
        set.softclock(cpu, |call| log.push((cpu, tick, call)))
            .unwrap();
        set.check_invariants().unwrap();
    }
}

#[test]
fn a_callout_armed_on_cpu_k_fires_only_when_cpu_k_is_processed() {
    for k in 0..3 {
        let set = set(3);
        let c = set.callout_init_on(0).unwrap();
        assert_eq!(
            set.callout_reset_sbt_on(c, ms(2), Sbt::ZERO, 7, k as i32, 0),
            Ok(false)
        );
        assert_eq!(set.callout_cpu(c), Ok(k));
        let mut log = Vec::new();
        for other in (0..3).filter(|&o| o != k) {
            run(&set, other, 10, &mut log);
        }
        assert!(log.is_empty(), "ran on another CPU: {log:?}");
        assert_eq!(set.callout_pending(c), Ok(true));
        run(&set, k, 10, &mut log);
        assert_eq!(log, [(k, 2, 7)]);
        assert_eq!(set.callout_pending(c), Ok(false));
    }
}

#[test]
fn the_tickless_interrupt_of_a_cpu_runs_only_its_callouts() {
    // The production wheel: exact deadlines, so the event windows are exact too.
    let tables = (0..2).map(|_| Callouts::new(Wheel::new())).collect();
    let set: SharedCallouts<Wheel<u32>, u32> = SharedCallouts::new(tables).unwrap();
    let a = set.callout_init_on(0).unwrap();
    let b = set.callout_init_on(1).unwrap();
    set.callout_reset_sbt_on(a, ms(5), Sbt::ZERO, 1, -1, 0)
        .unwrap();
    set.callout_reset_sbt_on(b, ms(3), Sbt::ZERO, 2, -1, 0)
        .unwrap();
    assert_eq!(set.next_event(0), Ok(Some((5, 5))));
    assert_eq!(set.next_event(1), Ok(Some((3, 3))));
    let mut ran = Vec::new();
    assert_eq!(set.process_with(0, 4, |c| ran.push(c)), Ok(false));
    assert_eq!(set.process_with(0, 5, |c| ran.push(c)), Ok(true));
    set.softclock(0, |c| ran.push(c)).unwrap();
    assert_eq!(ran, [1]);
    assert_eq!(set.next_event(0), Ok(None));
    assert_eq!(
        set.next_event(1),
        Ok(Some((3, 3))),
        "CPU 1 was not processed"
    );
    set.process_with(1, 100, |c| ran.push(c)).unwrap();
    set.softclock(1, |c| ran.push(c)).unwrap();
    assert_eq!(ran, [1, 2]);
}

#[test]
fn cpu_minus_one_keeps_the_callout_on_its_cpu() {
    let set = set(3);
    let c = set.callout_init_on(2).unwrap();
    assert_eq!(set.callout_cpu(c), Ok(2));
    set.callout_reset(c, 1, 1).unwrap();
    assert_eq!(set.callout_cpu(c), Ok(2));
    set.callout_reset_on(c, 1, 2, 1).unwrap();
    assert_eq!(set.callout_cpu(c), Ok(1));
    set.callout_reset_sbt_on(c, ms(1), Sbt::ZERO, 3, -1, 0)
        .unwrap();
    assert_eq!(set.callout_cpu(c), Ok(1));
    let d = set.callout_init_on(-1).unwrap();
    assert_eq!(set.callout_cpu(d), Ok(0), "callout_init(-1) is CPU 0");
    let mut log = Vec::new();
    run(&set, 1, 1, &mut log);
    assert_eq!(log, [(1, 1, 3)]);
}

#[test]
fn a_cpu_outside_the_set_is_invalid_and_changes_nothing() {
    let set = set(3);
    let c = set.callout_init_on(1).unwrap();
    set.callout_reset_sbt_on(c, ms(4), Sbt::ZERO, 1, -1, 0)
        .unwrap();
    for cpu in [3, 4, -2, i32::MAX, i32::MIN] {
        assert_eq!(
            set.callout_reset_sbt_on(c, ms(1), Sbt::ZERO, 9, cpu, 0),
            Err(Error::InvalidCpu(cpu))
        );
        assert_eq!(
            set.callout_reset_on(c, 1, 9, cpu),
            Err(Error::InvalidCpu(cpu))
        );
        assert_eq!(set.callout_init_on(cpu), Err(Error::InvalidCpu(cpu)));
    }
    // Flags are checked first, as on a single table.
    assert_eq!(
        set.callout_reset_sbt_on(c, ms(1), Sbt::ZERO, 9, 3, 0x8000),
        Err(Error::InvalidFlags(0x8000))
    );
    assert_eq!(set.hardclock(3), Err(Error::InvalidCpu(3)));
    assert_eq!(set.softclock(3, |_| panic!()), Err(Error::InvalidCpu(3)));
    assert_eq!(
        set.hardclock_with(3, |_| panic!()),
        Err(Error::InvalidCpu(3))
    );
    assert_eq!(
        set.process_with(3, 9, |_| panic!()),
        Err(Error::InvalidCpu(3))
    );
    assert_eq!(set.next_event(usize::MAX), Err(Error::InvalidCpu(i32::MAX)));
    assert_eq!(set.ticks(3), Err(Error::InvalidCpu(3)));
    assert_eq!(set.stats(3), Err(Error::InvalidCpu(3)));
    assert_eq!(set.pending(3), Err(Error::InvalidCpu(3)));
    // Still on CPU 1, armed as before: tick 4.
    assert_eq!(set.callout_cpu(c), Ok(1));
    let mut log = Vec::new();
    for cpu in 0..3 {
        run(&set, cpu, 6, &mut log);
    }
    assert_eq!(log, [(1, 4, 1)]);
    assert!(matches!(
        SharedCallouts::<HashedWheel<u32>, u32>::new(Vec::new()),
        Err(Error::Config { .. })
    ));
}

#[test]
fn moving_a_pending_callout_cancels_it_on_the_old_cpu_and_arms_it_on_the_new() {
    let set = set(2);
    let c = set.callout_init_on(0).unwrap();
    set.callout_reset(c, 5, 1).unwrap();
    assert_eq!(set.pending(0), Ok(1));
    assert_eq!(
        set.callout_reset_sbt_on(c, ms(3), Sbt::ZERO, 2, 1, 0),
        Ok(true),
        "it was pending"
    );
    assert_eq!(set.callout_cpu(c), Ok(1));
    assert_eq!((set.pending(0), set.pending(1)), (Ok(0), Ok(1)));
    let mut log = Vec::new();
    run(&set, 0, 10, &mut log);
    run(&set, 1, 10, &mut log);
    assert_eq!(log, [(1, 3, 2)]);
    // An idle callout moves too, and keeps its active flag as a reset sets it.
    set.callout_stop(c).unwrap();
    assert_eq!(set.callout_reset_on(c, 1, 3, 0), Ok(false));
    assert_eq!(set.callout_active(c), Ok(true));
    assert_eq!(set.callout_cpu(c), Ok(0));
}

#[test]
fn the_handle_stays_valid_across_moves() {
    let set = set(3);
    let c = set.callout_init_on(0).unwrap();
    for (n, cpu) in [1, 2, 0, 2, 1].into_iter().enumerate() {
        set.callout_reset_on(c, 2, n as u32, cpu).unwrap();
        assert_eq!(set.callout_cpu(c), Ok(cpu as usize));
        assert_eq!(set.callout_pending(c), Ok(true));
        assert_eq!(set.callout_active(c), Ok(true));
        set.check_invariants().unwrap();
    }
    set.callout_deactivate(c).unwrap();
    assert_eq!(set.callout_active(c), Ok(false));
    assert_eq!(set.callout_stop(c), Ok(true));
    assert_eq!(set.callout_drain(c), Ok(false));
    set.callout_free(c).unwrap();
    assert_eq!(set.callout_pending(c), Err(Error::StaleHandle));
    assert_eq!(set.callout_free(c), Err(Error::StaleHandle));
    // Every CPU's record went with it.
    for cpu in 0..3 {
        assert_eq!(set.pending(cpu), Ok(0));
    }
}

#[test]
fn other_sets_tables_stale_and_made_up_handles_act_on_nothing() {
    let set = set(2);
    let other = self::set(2);
    let mut table: Callouts<HashedWheel<u32>, u32> = Callouts::new(HashedWheel::new(4).unwrap());
    let victim = set.callout_init_on(1).unwrap();
    set.callout_reset(victim, 3, 1).unwrap();
    let foreign = other.callout_init_on(1).unwrap();
    let from_table = table.callout_init().unwrap();
    let freed = set.callout_init_on(0).unwrap();
    set.callout_free(freed).unwrap();
    // Same index and generation as the victim, another owner; the victim's owner with
    // another generation, an index never issued, and every bit set.
    assert_eq!(foreign.to_parts().0, victim.to_parts().0);
    let (id, owner) = victim.to_parts();
    let forged = [
        Handle::from_parts(id ^ (1 << 40), owner),
        Handle::from_parts(1000, owner),
        Handle::from_parts(u64::MAX, owner),
        Handle::from_parts(id, 0),
        Handle::from_parts(id, owner + 1),
    ];
    let bad = [foreign, from_table, freed]
        .into_iter()
        .chain(forged)
        .collect::<Vec<_>>();
    for h in bad {
        let stale = Err(Error::StaleHandle);
        assert_eq!(set.callout_reset(h, 1, 9), stale, "{h:?}");
        assert_eq!(set.callout_reset_on(h, 1, 9, 0), stale);
        assert_eq!(
            set.callout_reset_sbt_on(h, ms(1), Sbt::ZERO, 9, -1, 0),
            stale
        );
        assert_eq!(set.callout_stop(h), stale);
        assert_eq!(set.callout_drain(h), stale);
        assert_eq!(set.callout_pending(h), stale);
        assert_eq!(set.callout_active(h), stale);
        assert_eq!(set.callout_cpu(h), Err(Error::StaleHandle));
        assert_eq!(set.callout_deactivate(h), Err(Error::StaleHandle));
        assert_eq!(set.callout_free(h), Err(Error::StaleHandle));
        assert_eq!(
            set.callout_async_drain(h, |_| panic!("never called")),
            Err(Error::StaleHandle)
        );
    }
    // The set's handles name nothing in a single table or another set either.
    assert_eq!(table.callout_stop(victim), Err(Error::StaleHandle));
    assert_eq!(other.callout_stop(victim), Err(Error::StaleHandle));
    assert_eq!(other.callout_pending(foreign), Ok(false));
    // The victim is untouched: active, pending on CPU 1, due at tick 3.
    assert_eq!(set.callout_active(victim), Ok(true));
    let mut log = Vec::new();
    run(&set, 0, 5, &mut log);
    run(&set, 1, 5, &mut log);
    assert_eq!(log, [(1, 3, 1)]);
}

/// The handler of the callout on CPU 0 blocks until told to return; meanwhile another thread
/// moves the callout to CPU 1. The move waits for the handler: until it returns the callout
/// is on CPU 0 (pending, and CPU 1 cannot run it); then it is on CPU 1, armed as asked.
#[test]
fn a_move_while_the_handler_runs_waits_until_it_returns() {
    let set = Arc::new(set(2));
    let c = set.callout_init_on(0).unwrap();
    set.callout_reset(c, 1, 1).unwrap();
    set.hardclock(0).unwrap();
    let (started_tx, started_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let runner = {
        let set = Arc::clone(&set);
        thread::spawn(move || {
            let mut ran = Vec::new();
            set.softclock(0, |call| {
                ran.push(call);
                if call == 1 {
                    started_tx.send(()).unwrap();
                    go_rx.recv().unwrap();
                }
            })
            .unwrap();
            ran
        })
    };
    started_rx.recv().unwrap();
    assert_eq!(
        set.callout_reset_sbt_on(c, ms(2), Sbt::ZERO, 2, 1, 0),
        Ok(false),
        "it ran, it was not pending"
    );
    assert_eq!(set.callout_cpu(c), Ok(0), "moved while its handler ran");
    assert_eq!(set.callout_pending(c), Ok(true));
    assert_eq!((set.pending(0), set.pending(1)), (Ok(1), Ok(0)));
    let mut log = Vec::new();
    run(&set, 1, 5, &mut log);
    assert!(log.is_empty(), "CPU 1 ran it before the handler returned");
    go_tx.send(()).unwrap();
    assert_eq!(runner.join().unwrap(), [1]);
    assert_eq!(set.callout_cpu(c), Ok(1));
    assert_eq!((set.pending(0), set.pending(1)), (Ok(0), Ok(1)));
    set.check_invariants().unwrap();
    // 2 ms counted on CPU 1's clock at the reset, as FreeBSD converts the time then: tick 2,
    // which CPU 1 passed before the handler returned, so it runs at CPU 1's next tick, 6.
    run(&set, 0, 10, &mut log);
    run(&set, 1, 3, &mut log);
    assert_eq!(log, [(1, 6, 2)]);
}

#[test]
fn a_handler_moving_its_own_callout_moves_after_it_returns() {
    let set = Arc::new(set(3));
    let c = set.callout_init_on(0).unwrap();
    set.callout_reset(c, 1, 1).unwrap();
    set.hardclock(0).unwrap();
    let mut seen = Vec::new();
    let s = Arc::clone(&set);
    let ran = set
        .softclock(0, |call| {
            assert_eq!(call, 1);
            seen.push(s.callout_reset_sbt_on(c, ms(1), Sbt::ZERO, 2, 2, 0));
            seen.push(s.callout_cpu(c).map(|k| k == 0));
            seen.push(s.callout_pending(c));
            // Its own handler cannot wait for itself.
            seen.push(s.callout_drain(c));
        })
        .unwrap();
    assert_eq!(ran, 1);
    assert_eq!(
        seen,
        [Ok(false), Ok(true), Ok(true), Err(Error::WouldDeadlock)]
    );
    assert_eq!(set.callout_cpu(c), Ok(2));
    let mut log = Vec::new();
    run(&set, 0, 5, &mut log);
    run(&set, 1, 5, &mut log);
    run(&set, 2, 1, &mut log);
    assert_eq!(log, [(2, 1, 2)]);
}

#[test]
fn a_reset_while_a_move_waits_replaces_it() {
    let set = Arc::new(set(3));
    let s = Arc::clone(&set);
    // Moved to CPU 1, then reset with -1: the waiting move's CPU, the new time and call.
    let c = set.callout_init_on(0).unwrap();
    set.callout_reset(c, 1, 1).unwrap();
    // Moved to CPU 2, then reset to its own CPU 0: it stays.
    let d = set.callout_init_on(0).unwrap();
    set.callout_reset(d, 1, 10).unwrap();
    set.hardclock(0).unwrap();
    let mut seen = Vec::new();
    set.softclock(0, |call| match call {
        1 => {
            seen.push(s.callout_reset_on(c, 5, 2, 1));
            seen.push(s.callout_reset_sbt_on(c, ms(2), Sbt::ZERO, 3, -1, 0));
        }
        10 => {
            seen.push(s.callout_reset_on(d, 5, 11, 2));
            seen.push(s.callout_reset_on(d, 3, 12, 0));
        }
        other => panic!("{other}"),
    })
    .unwrap();
    assert_eq!(seen, [Ok(false), Ok(true), Ok(false), Ok(true)]);
    assert_eq!(set.callout_cpu(c), Ok(1));
    assert_eq!(set.callout_cpu(d), Ok(0));
    let mut log = Vec::new();
    for cpu in 0..3 {
        run(&set, cpu, 6, &mut log);
    }
    // d: 3 ticks from tick 1 on CPU 0; c: 2 ms from tick 0 on CPU 1.
    assert_eq!(log, [(0, 4, 12), (1, 2, 3)]);
}

#[test]
fn stop_drain_and_free_cancel_a_waiting_move() {
    let set = Arc::new(set(2));
    let s = Arc::clone(&set);
    let c = set.callout_init_on(0).unwrap();
    let d = set.callout_init_on(0).unwrap();
    let f = set.callout_init_on(0).unwrap();
    for (h, call) in [(c, 1), (d, 2), (f, 3)] {
        set.callout_reset(h, 1, call).unwrap();
    }
    set.hardclock(0).unwrap();
    let mut seen = Vec::new();
    let mut drained = Vec::new();
    set.softclock(0, |call| {
        if call > 100 {
            drained.push(call);
            return;
        }
        let h = [c, d, f][call as usize - 1];
        seen.push(s.callout_reset_on(h, 1, 9, 1));
        seen.push(match call {
            1 => s.callout_stop(h),
            2 => s
                .callout_async_drain(h, |x| x + 100)
                .map(|r| r == AsyncDrain::Pending),
            _ => s.callout_pending(h),
        });
    })
    .unwrap();
    // f's move waits; c's was stopped; d's was cancelled by the drain arranged from its
    // handler, whose drain call ran right after it.
    assert_eq!(
        seen,
        [
            Ok(false),
            Ok(true),
            Ok(false),
            Ok(true),
            Ok(false),
            Ok(true)
        ]
    );
    // The drain is made of the call d was last armed with (9, by the reset its handler made).
    assert_eq!(drained, [109]);
    assert_eq!(set.callout_cpu(c), Ok(0));
    assert_eq!(set.callout_cpu(d), Ok(0));
    assert_eq!(set.callout_pending(c), Ok(false));
    assert_eq!(set.callout_pending(d), Ok(false));
    assert_eq!(set.callout_active(c), Ok(false));
    assert_eq!(set.callout_cpu(f), Ok(1));
    set.callout_free(f).unwrap();
    let mut log = Vec::new();
    run(&set, 0, 3, &mut log);
    run(&set, 1, 3, &mut log);
    assert!(log.is_empty(), "{log:?}");
}

#[test]
fn async_drain_on_a_set_hands_the_drain_to_the_cpu_that_ran_the_handler() {
    let set = Arc::new(set(2));
    let c = set.callout_init_on(1).unwrap();
    set.callout_reset(c, 1, 5).unwrap();
    set.hardclock(1).unwrap();
    let (started_tx, started_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let runner = {
        let set = Arc::clone(&set);
        thread::spawn(move || {
            let mut ran = Vec::new();
            set.softclock(1, |call| {
                ran.push(call);
                if call == 5 {
                    started_tx.send(()).unwrap();
                    go_rx.recv().unwrap();
                } else {
                    // The drain call: the handler has returned; the callout may be freed.
                    set.callout_free(c).unwrap();
                }
            })
            .unwrap();
            ran
        })
    };
    started_rx.recv().unwrap();
    assert_eq!(
        set.callout_async_drain(c, |call| call + 100),
        Ok(AsyncDrain::Pending)
    );
    assert_eq!(
        set.callout_async_drain(c, |call| call + 200),
        Err(Error::Busy),
        "one drain per run"
    );
    // Resets are ignored until the handler returns.
    assert_eq!(set.callout_reset_on(c, 1, 6, 0), Ok(false));
    assert_eq!(set.callout_pending(c), Ok(false));
    go_tx.send(()).unwrap();
    assert_eq!(runner.join().unwrap(), [5, 105]);
    assert_eq!(set.callout_pending(c), Err(Error::StaleHandle));
    // Not running: stopped, never drained.
    let d = set.callout_init_on(0).unwrap();
    set.callout_reset(d, 3, 1).unwrap();
    assert_eq!(
        set.callout_async_drain(d, |_| panic!("never called")),
        Ok(AsyncDrain::Stopped(true))
    );
    assert_eq!(
        set.callout_async_drain(d, |_| panic!("never called")),
        Ok(AsyncDrain::Stopped(false))
    );
    set.check_invariants().unwrap();
}

/// Two threads drive CPU 0 and CPU 1 while every callout's handler moves its callout to the
/// other CPU: each handler runs on the CPU its previous run asked for, never twice at once, so
/// each callout's runs alternate between the CPUs; the directory and the tables agree at the
/// end.
#[test]
fn callouts_moving_between_two_driven_cpus_always_run_where_they_were_sent() {
    const CALLOUTS: usize = 16;
    const FIRINGS: usize = 4000;
    let set = Arc::new(set(2));
    let handles: Vec<Handle> = (0..CALLOUTS)
        .map(|i| {
            let h = set.callout_init_on((i % 2) as i32).unwrap();
            set.callout_reset(h, 1 + (i % 3) as i64, i as u32).unwrap();
            h
        })
        .collect();
    let handles = Arc::new(handles);
    let expected: Arc<Vec<AtomicUsize>> =
        Arc::new((0..CALLOUTS).map(|i| AtomicUsize::new(i % 2)).collect());
    let running: Arc<Vec<AtomicBool>> =
        Arc::new((0..CALLOUTS).map(|_| AtomicBool::new(false)).collect());
    let fired = Arc::new(Mutex::new([0usize; 2]));
    let total = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let drivers: Vec<_> = (0..2)
        .map(|cpu| {
            let (set, handles, expected, running, fired, total) = (
                Arc::clone(&set),
                Arc::clone(&handles),
                Arc::clone(&expected),
                Arc::clone(&running),
                Arc::clone(&fired),
                Arc::clone(&total),
            );
            thread::spawn(move || {
                // Both CPUs keep ticking until enough callouts have run: each needs the other.
                while total.load(Ordering::SeqCst) < FIRINGS {
                    assert!(start.elapsed() < Duration::from_secs(60), "stalled");
                    set.hardclock(cpu).unwrap();
                    set.softclock(cpu, |call| {
                        let i = call as usize;
                        assert!(
                            !running[i].swap(true, Ordering::SeqCst),
                            "ran twice at once"
                        );
                        assert_eq!(expected[i].load(Ordering::SeqCst), cpu, "callout {i}");
                        fired.lock().unwrap()[cpu] += 1;
                        total.fetch_add(1, Ordering::SeqCst);
                        let other = 1 - cpu;
                        expected[i].store(other, Ordering::SeqCst);
                        set.callout_reset_on(handles[i], 1 + (i % 3) as i64, call, other as i32)
                            .unwrap();
                        assert_eq!(set.callout_cpu(handles[i]), Ok(cpu));
                        running[i].store(false, Ordering::SeqCst);
                    })
                    .unwrap();
                    thread::yield_now();
                }
            })
        })
        .collect();
    for d in drivers {
        d.join().unwrap();
    }
    let fired = *fired.lock().unwrap();
    // Each callout's runs alternate, so the CPUs' counts differ by at most one per callout.
    assert!(fired[0] + fired[1] >= FIRINGS, "{fired:?}");
    assert!(fired[0].abs_diff(fired[1]) <= CALLOUTS, "{fired:?}");
    set.check_invariants().unwrap();
    for (i, &h) in handles.iter().enumerate() {
        assert_eq!(set.callout_pending(h), Ok(true));
        assert_eq!(set.callout_cpu(h), Ok(expected[i].load(Ordering::SeqCst)));
        set.callout_free(h).unwrap();
    }
    set.check_invariants().unwrap();
}

/// A move made while the handler runs converts its time on the new CPU's clock at the reset,
/// as FreeBSD does: a time that clock cannot hold is refused there and then, not lost when the
/// handler returns; one it can hold is made, and runs.
#[test]
fn a_deferred_move_is_refused_at_the_reset_when_the_new_clock_cannot_hold_it() {
    let set = set(2);
    // CPU 0 near the end of time, CPU 1 at its start.
    assert_eq!(set.process_with(0, u64::MAX - 10, |_| {}), Ok(false));
    let c = set.callout_init_on(1).unwrap();
    set.callout_reset_on(c, 1, 1, 1).unwrap();
    set.hardclock(1).unwrap();
    let mut results = Vec::new();
    set.softclock(1, |call| {
        if call == 1 {
            results.push(set.callout_reset_on(c, 100, 2, 0));
            results.push(set.callout_pending(c));
            results.push(set.callout_reset_on(c, 5, 3, 0));
        }
    })
    .unwrap();
    assert_eq!(results, [Err(Error::PastEndOfTime), Ok(false), Ok(false)]);
    set.check_invariants().unwrap();
    // The second reset was taken: the callout moved to CPU 0 and runs there, 5 ticks on.
    assert_eq!(set.callout_cpu(c), Ok(0));
    assert_eq!(set.callout_pending(c), Ok(true));
    let mut log = Vec::new();
    run(&set, 0, 5, &mut log);
    assert_eq!(log, [(0, u64::MAX - 5, 3)]);
}
