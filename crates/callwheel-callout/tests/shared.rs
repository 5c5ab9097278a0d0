//! The shared table across threads: drain waits for a handler running elsewhere, handlers
//! re-enter the table, one softclock at a time, a panicking handler leaves the table usable,
//! and a stress run where every callout either runs once or is cancelled once; the BSD calls
//! on CPU 0 of a table of several, and handles of the wrong kind refused as one table refuses
//! them.
#![cfg(not(callwheel_loom))]

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Barrier, Mutex};
use std::thread;
use std::time::Duration;

use callwheel_callout::{Callouts, Config, Error, SharedCallouts};
use callwheel_schemes::hashed_wheel::HashedWheel;

type Table = SharedCallouts<HashedWheel<u32>, u32>;

/// A shared table of `ncpu` CPUs whose tests drive CPU 0: one CPU goes straight to its queue,
/// several through the directory, and both must keep the same promises.
fn shared(config: Config, ncpu: usize) -> Arc<Table> {
    let tables = (0..ncpu)
        .map(|_| Callouts::with_config(HashedWheel::new(6).unwrap(), config).unwrap())
        .collect();
    Arc::new(SharedCallouts::new(tables).unwrap())
}

/// A table of three CPUs: `timeout` and `setcallout` go to CPU 0's queue, and run only when
/// CPU 0 is processed.
#[test]
fn the_bsd_calls_of_a_table_of_several_cpus_run_on_cpu_0() {
    let tables = (0..3)
        .map(|_| Callouts::new(HashedWheel::new(6).unwrap()))
        .collect();
    let table: Table = SharedCallouts::new(tables).unwrap();
    table.timeout(1, 1).unwrap();
    let h = table.setcallout(2, 1).unwrap();
    let b = table.setcallout(3, 1).unwrap();
    assert_eq!(table.unsetcallout(b), Ok(true));
    assert!(table.untimeout(1));
    table.timeout(4, 1).unwrap();
    let mut ran = Vec::new();
    for cpu in [1, 2, 0] {
        table.hardclock(cpu).unwrap();
        table.softclock(cpu, |call| ran.push((cpu, call))).unwrap();
    }
    assert_eq!(ran, [(0, 2), (0, 4)]);
    assert_eq!(table.unsetcallout(h), Err(Error::StaleHandle), "it fired");
    table.check_invariants().unwrap();
}

/// A `setcallout` handle given to a FreeBSD call, and a `callout_init` handle given to
/// `unsetcallout`, are the wrong kind, as on one [`Callouts`] table; another table's handle
/// and a made-up one are stale. Nothing changes.
#[test]
fn handles_of_the_wrong_kind_are_refused_as_one_table_refuses_them() {
    for ncpu in [1, 2] {
        handles_of_the_wrong_kind_are_refused_as_one_table_refuses_them_on(ncpu);
    }
}

fn handles_of_the_wrong_kind_are_refused_as_one_table_refuses_them_on(ncpu: usize) {
    let table = shared(Config::default(), ncpu);
    let other = shared(Config::default(), ncpu);
    let one_shot = table.setcallout(1, 5).unwrap();
    let persistent = table.callout_init().unwrap();
    assert_eq!(table.callout_stop(one_shot), Err(Error::WrongKind));
    assert_eq!(table.callout_reset(one_shot, 1, 2), Err(Error::WrongKind));
    assert_eq!(table.callout_free(one_shot), Err(Error::WrongKind));
    assert_eq!(table.unsetcallout(persistent), Err(Error::WrongKind));
    let foreign = other.callout_init().unwrap();
    assert_eq!(table.callout_stop(foreign), Err(Error::StaleHandle));
    assert_eq!(
        table.unsetcallout(other.setcallout(1, 5).unwrap()),
        Err(Error::StaleHandle)
    );
    assert_eq!(table.callout_pending(persistent), Ok(false));
    assert_eq!(table.unsetcallout(one_shot), Ok(true));
    table.check_invariants().unwrap();

    // The same on a table of three CPUs, with the callout on CPU 2.
    let tables = (0..3)
        .map(|_| Callouts::new(HashedWheel::new(6).unwrap()))
        .collect();
    let table: Table = SharedCallouts::new(tables).unwrap();
    let one_shot = table.setcallout(1, 5).unwrap();
    let persistent = table.callout_init_on(2).unwrap();
    assert_eq!(table.unsetcallout(persistent), Err(Error::WrongKind));
    assert_eq!(table.callout_cpu(one_shot), Err(Error::WrongKind));
    assert_eq!(
        table.callout_reset_on(one_shot, 1, 2, 1),
        Err(Error::WrongKind)
    );
    assert_eq!(table.callout_cpu(persistent), Ok(2));
    assert_eq!(table.unsetcallout(one_shot), Ok(true));
    table.check_invariants().unwrap();
}

#[test]
fn drain_waits_for_a_handler_running_on_another_thread() {
    for ncpu in [1, 2] {
        drain_waits_for_a_handler_running_on_another_thread_on(ncpu);
    }
}

fn drain_waits_for_a_handler_running_on_another_thread_on(ncpu: usize) {
    let table = shared(Config::default(), ncpu);
    let c = table.callout_init().unwrap();
    table.callout_reset(c, 1, 7).unwrap();
    table.hardclock(0).unwrap();
    let finished = Arc::new(AtomicBool::new(false));
    let (started_tx, started_rx) = mpsc::channel();
    let runner = {
        let table = Arc::clone(&table);
        let finished = Arc::clone(&finished);
        thread::spawn(move || {
            table
                .softclock(0, |_| {
                    started_tx.send(()).unwrap();
                    // Long enough that a drain that does not wait returns first.
                    thread::sleep(Duration::from_millis(100));
                    finished.store(true, Ordering::SeqCst);
                })
                .unwrap()
        })
    };
    started_rx.recv().unwrap();
    assert_eq!(
        table.callout_drain(c),
        Ok(false),
        "it was running, not pending"
    );
    assert!(
        finished.load(Ordering::SeqCst),
        "callout_drain returned while the handler was still running"
    );
    assert_eq!(runner.join().unwrap(), 1);
    table.callout_free(c).unwrap();
}

#[test]
fn drain_from_the_running_thread_is_refused() {
    for ncpu in [1, 2] {
        drain_from_the_running_thread_is_refused_on(ncpu);
    }
}

fn drain_from_the_running_thread_is_refused_on(ncpu: usize) {
    let table = shared(Config::default(), ncpu);
    let c = table.callout_init().unwrap();
    table.callout_reset(c, 1, 7).unwrap();
    table.hardclock(0).unwrap();
    let mut seen = Vec::new();
    let t = Arc::clone(&table);
    table
        .softclock(0, |_| {
            seen.push(t.callout_drain(c));
            seen.push(t.callout_free(c).map(|()| false));
            // Re-entering to re-arm itself works: the lock is not held.
            seen.push(t.callout_reset(c, 1, 8));
        })
        .unwrap();
    assert_eq!(
        seen,
        [
            Err(Error::WouldDeadlock),
            Err(Error::WouldDeadlock),
            Ok(false)
        ]
    );
    assert_eq!(table.callout_drain(c), Ok(true));
}

#[test]
fn one_softclock_at_a_time() {
    for ncpu in [1, 2] {
        one_softclock_at_a_time_on(ncpu);
    }
}

fn one_softclock_at_a_time_on(ncpu: usize) {
    let table = shared(Config::default(), ncpu);
    table.timeout(1, 1).unwrap();
    table.hardclock(0).unwrap();
    let t = Arc::clone(&table);
    let mut inner = None;
    table
        .softclock(0, |_| {
            let t2 = Arc::clone(&t);
            inner = Some(
                thread::spawn(move || t2.softclock(0, |_| {}))
                    .join()
                    .unwrap(),
            );
        })
        .unwrap();
    assert_eq!(inner, Some(Err(Error::SoftclockBusy)));
    // Free again afterwards.
    assert_eq!(table.softclock(0, |_| {}), Ok(0));
}

#[test]
fn a_panicking_handler_leaves_the_table_usable() {
    for ncpu in [1, 2] {
        a_panicking_handler_leaves_the_table_usable_on(ncpu);
    }
}

fn a_panicking_handler_leaves_the_table_usable_on(ncpu: usize) {
    let table = shared(Config::default(), ncpu);
    let c = table.callout_init().unwrap();
    table.callout_reset(c, 1, 1).unwrap();
    table.timeout(2, 1).unwrap();
    table.hardclock(0).unwrap();
    let t = Arc::clone(&table);
    let result = thread::spawn(move || {
        t.softclock(0, |call| {
            if call == 1 {
                panic!("handler failure");
            }
        })
    })
    .join();
    assert!(result.is_err());
    // The runner role and the running flag were released on unwind.
    assert_eq!(table.callout_drain(c), Ok(false));
    let mut ran = Vec::new();
    assert_eq!(table.softclock(0, |call| ran.push(call)), Ok(1));
    assert_eq!(ran, [2], "the callout after the panicking one still runs");
    table.with(0, |t| t.check_invariants()).unwrap().unwrap();
}

#[test]
fn direct_handlers_run_in_hardclock_without_the_lock() {
    for ncpu in [1, 2] {
        direct_handlers_run_in_hardclock_without_the_lock_on(ncpu);
    }
}

fn direct_handlers_run_in_hardclock_without_the_lock_on(ncpu: usize) {
    let table = shared(Config::default(), ncpu);
    let c = table.callout_init().unwrap();
    table
        .callout_reset_sbt_on(
            c,
            callwheel::time::Sbt::MILLISECOND,
            callwheel::time::Sbt::ZERO,
            5,
            0,
            callwheel_callout::flags::C_DIRECT_EXEC,
        )
        .unwrap();
    let t = Arc::clone(&table);
    let mut ran = Vec::new();
    table
        .hardclock_with(0, |call| {
            ran.push(call);
            // Re-entering proves the lock is released while it runs.
            t.callout_reset(c, 5, 6).unwrap();
        })
        .unwrap();
    assert_eq!(ran, [5]);
    assert_eq!(table.callout_pending(c), Ok(true));
    assert_eq!(table.stats(0).unwrap().direct, 1);
}

/// Four threads set and cancel callouts while a driver ticks and runs softclock with a
/// one-step budget: every callout must run exactly once or be cancelled exactly once.
#[test]
fn stress_every_callout_runs_or_is_cancelled_exactly_once() {
    for ncpu in [1, 2] {
        stress_every_callout_runs_or_is_cancelled_exactly_once_on(ncpu);
    }
}

fn stress_every_callout_runs_or_is_cancelled_exactly_once_on(ncpu: usize) {
    const THREADS: u32 = 4;
    const PER_THREAD: u32 = 2_000;
    let table = shared(
        Config {
            max_softclock_steps: 1,
            calloutsize: 16,
            ..Config::default()
        },
        ncpu,
    );
    let ran = Arc::new(Mutex::new(Vec::new()));
    let done = Arc::new(AtomicBool::new(false));
    let ticks = Arc::new(AtomicU64::new(0));
    let start = Arc::new(Barrier::new(THREADS as usize + 1));
    let driver = {
        let (table, ran, done, ticks, start) = (
            Arc::clone(&table),
            Arc::clone(&ran),
            Arc::clone(&done),
            Arc::clone(&ticks),
            Arc::clone(&start),
        );
        thread::spawn(move || {
            start.wait();
            let mut idle_rounds = 0;
            loop {
                table.hardclock(0).unwrap();
                ticks.fetch_add(1, Ordering::Relaxed);
                table
                    .softclock(0, |call| ran.lock().unwrap().push(call))
                    .unwrap();
                if done.load(Ordering::SeqCst) {
                    // Everything is set at most 50 ticks ahead: 60 more ticks drain it all.
                    idle_rounds += 1;
                    if idle_rounds > 60 {
                        return;
                    }
                }
            }
        })
    };
    let workers: Vec<_> = (0..THREADS)
        .map(|w| {
            let (table, start) = (Arc::clone(&table), Arc::clone(&start));
            thread::spawn(move || {
                start.wait();
                let mut cancelled = Vec::new();
                let mut handles = Vec::new();
                for i in 0..PER_THREAD {
                    let id = w * PER_THREAD + i;
                    let ahead = i64::from(id % 50);
                    if id.is_multiple_of(2) {
                        table.timeout(id, ahead).unwrap();
                        if id.is_multiple_of(6) && table.untimeout(id) {
                            cancelled.push(id);
                        }
                    } else {
                        let h = table.setcallout(id, ahead).unwrap();
                        handles.push((id, h));
                    }
                    if i % 3 == 0 {
                        if let Some((id, h)) = handles.pop() {
                            if table.unsetcallout(h) == Ok(true) {
                                cancelled.push(id);
                            }
                        }
                    }
                }
                cancelled
            })
        })
        .collect();
    let mut cancelled = Vec::new();
    for w in workers {
        cancelled.extend(w.join().unwrap());
    }
    done.store(true, Ordering::SeqCst);
    driver.join().unwrap();
    let ran = ran.lock().unwrap();
    let ran_set: HashSet<u32> = ran.iter().copied().collect();
    let cancelled_set: HashSet<u32> = cancelled.iter().copied().collect();
    assert_eq!(ran_set.len(), ran.len(), "a callout ran twice");
    assert_eq!(
        cancelled_set.len(),
        cancelled.len(),
        "a callout was cancelled twice"
    );
    assert!(
        ran_set.is_disjoint(&cancelled_set),
        "a cancelled callout ran"
    );
    assert_eq!(
        ran.len() + cancelled.len(),
        (THREADS * PER_THREAD) as usize,
        "a callout was lost"
    );
    assert!(ticks.load(Ordering::Relaxed) > 60);
    table
        .with(0, |t| {
            assert_eq!(t.pending(), 0);
            assert_eq!(t.records_in_use(), 0);
            t.check_invariants()
        })
        .unwrap()
        .unwrap();
}
