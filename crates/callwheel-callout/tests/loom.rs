//! Loom models of the shared table: every interleaving of `callout_drain` against a
//! `softclock` running the callout's handler, of a stop racing the handler's re-arm, of
//! `callout_async_drain` racing the handler, of a shared table's move to another CPU racing
//! the handler on the old one, and of a call naming a callout while it moves.
//!
//! Run with `RUSTFLAGS="--cfg callwheel_loom" cargo test -p callwheel-callout --test loom --release`.
#![cfg(callwheel_loom)]

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;

use callwheel_callout::{AsyncDrain, Callouts, Config, SharedCallouts};
use callwheel_schemes::hashed_wheel::HashedWheel;

type Table = SharedCallouts<HashedWheel<u32>, u32>;

fn table() -> Arc<Table> {
    table_of(1)
}

/// A table of `ncpu` CPUs, its callouts on CPU 0: one CPU goes straight to its queue, several
/// through the directory.
fn table_of(ncpu: usize) -> Arc<Table> {
    let config = Config {
        calloutsize: 2,
        ..Config::default()
    };
    let tables = (0..ncpu)
        .map(|_| Callouts::with_config(HashedWheel::new(2).unwrap(), config).unwrap())
        .collect();
    Arc::new(SharedCallouts::new(tables).unwrap())
}

/// When `callout_drain` returns, the handler has either finished or will never run; on a
/// table of one CPU and, through the directory, of two.
#[test]
fn drain_never_returns_while_the_handler_runs() {
    for ncpu in [1, 2] {
        drain_never_returns_while_the_handler_runs_on(ncpu);
    }
}

fn drain_never_returns_while_the_handler_runs_on(ncpu: usize) {
    loom::model(move || {
        let table = table_of(ncpu);
        let c = table.callout_init().unwrap();
        table.callout_reset(c, 1, 1).unwrap();
        table.hardclock(0).unwrap();
        let finished = Arc::new(AtomicBool::new(false));
        let runner = {
            let (table, finished) = (Arc::clone(&table), Arc::clone(&finished));
            thread::spawn(move || {
                table
                    .softclock(0, |_| finished.store(true, Ordering::SeqCst))
                    .unwrap()
            })
        };
        let was_pending = table.callout_drain(c).unwrap();
        let finished_at_drain = finished.load(Ordering::SeqCst);
        let ran = runner.join().unwrap();
        if was_pending {
            // Cancelled before softclock took it: it never runs.
            assert_eq!(ran, 0);
            assert!(!finished.load(Ordering::SeqCst));
        } else {
            // Taken by softclock first: drain waited for it.
            assert_eq!(ran, 1);
            assert!(finished_at_drain);
        }
        assert_eq!(table.callout_pending(c), Ok(false));
    });
}

/// A handler re-arming itself while another thread stops it: afterwards the callout is
/// either pending (the re-arm came last) or not, and the table is consistent either way.
#[test]
fn stop_racing_a_self_rearming_handler_stays_consistent() {
    loom::model(|| {
        let table = table();
        let c = table.callout_init().unwrap();
        table.callout_reset(c, 1, 1).unwrap();
        table.hardclock(0).unwrap();
        let runner = {
            let table = Arc::clone(&table);
            thread::spawn(move || {
                let t = Arc::clone(&table);
                table
                    .softclock(0, move |_| {
                        t.callout_reset(c, 1, 2).unwrap();
                    })
                    .unwrap()
            })
        };
        let stopped = table.callout_stop(c).unwrap();
        let ran = runner.join().unwrap();
        let pending = table.callout_pending(c).unwrap();
        match (stopped, ran) {
            // Stopped while first armed: the handler never ran, nothing is pending.
            (true, 0) => assert!(!pending),
            // Stopped the re-arm, or stopped before it: consistent either way.
            (_, 1) => {}
            other => panic!("impossible outcome {other:?}"),
        }
        table.with(0, |t| t.check_invariants()).unwrap().unwrap();
    });
}

/// `callout_async_drain` racing a `softclock` that takes the callout: the drain call is
/// handed out once, after the handler, exactly when the handler was running; otherwise never.
#[test]
fn async_drain_racing_the_handler_drains_once_after_it_or_never() {
    loom::model(|| {
        let table = table();
        let c = table.callout_init().unwrap();
        table.callout_reset(c, 1, 1).unwrap();
        table.hardclock(0).unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let runner = {
            let (table, log) = (Arc::clone(&table), Arc::clone(&log));
            thread::spawn(move || {
                table
                    .softclock(0, |call| log.lock().unwrap().push(call))
                    .unwrap()
            })
        };
        let drained = table.callout_async_drain(c, |call| call + 10).unwrap();
        let ran = runner.join().unwrap();
        let log = log.lock().unwrap().clone();
        match drained {
            // Cancelled before softclock took it.
            AsyncDrain::Stopped(true) => assert!(ran == 0 && log.is_empty(), "{log:?}"),
            // Arranged while the handler ran: the drain came right after it.
            AsyncDrain::Pending => assert_eq!((ran, log), (2, vec![1, 11])),
            // The handler had returned already: no drain.
            AsyncDrain::Stopped(false) => assert_eq!((ran, log), (1, vec![1])),
        }
        assert_eq!(table.callout_pending(c), Ok(false));
        table.with(0, |t| t.check_invariants()).unwrap().unwrap();
    });
}

type Set = SharedCallouts<HashedWheel<u32>, u32>;

fn set() -> Arc<Set> {
    let config = Config {
        calloutsize: 2,
        ..Config::default()
    };
    let tables = (0..2)
        .map(|_| Callouts::with_config(HashedWheel::new(2).unwrap(), config).unwrap())
        .collect();
    Arc::new(SharedCallouts::new(tables).unwrap())
}

/// A move to CPU 1 racing CPU 0's `softclock`, which runs the callout's handler: made at once
/// when the handler had not been taken, deferred to its return when it ran, and either way
/// the callout ends pending on CPU 1 only, with the new call.
#[test]
fn a_move_racing_the_running_handler_lands_on_the_new_cpu() {
    loom::model(|| {
        let set = set();
        let c = set.callout_init_on(0).unwrap();
        set.callout_reset(c, 1, 1).unwrap();
        set.hardclock(0).unwrap();
        let runner = {
            let set = Arc::clone(&set);
            thread::spawn(move || set.softclock(0, |call| assert_eq!(call, 1)).unwrap())
        };
        let was_pending = set.callout_reset_on(c, 1, 2, 1).unwrap();
        let ran = runner.join().unwrap();
        // Pending when moved: it never ran on CPU 0. Taken first: it ran once, there.
        assert_eq!(ran, if was_pending { 0 } else { 1 });
        assert_eq!(set.callout_cpu(c), Ok(1));
        assert_eq!(set.callout_pending(c), Ok(true));
        assert_eq!((set.pending(0), set.pending(1)), (Ok(0), Ok(1)));
        set.check_invariants().unwrap();
        set.hardclock(1).unwrap();
        let mut got = Vec::new();
        set.softclock(1, |call| got.push(call)).unwrap();
        assert_eq!(got, [2]);
    });
}

/// A call naming a callout while it moves (its handler on CPU 0 moves it to CPU 1, and the
/// move is made as the handler returns) finds it, on one CPU or the other: never stale.
#[test]
fn a_callout_named_while_it_moves_is_never_stale() {
    loom::model(|| {
        let set = set();
        let c = set.callout_init_on(0).unwrap();
        set.callout_reset(c, 1, 1).unwrap();
        set.hardclock(0).unwrap();
        let runner = {
            let set = Arc::clone(&set);
            thread::spawn(move || {
                let s = Arc::clone(&set);
                set.softclock(0, move |_| {
                    assert_eq!(s.callout_reset_on(c, 1, 2, 1), Ok(false));
                })
                .unwrap()
            })
        };
        // Pending or not (not between the handler's start and its reset), but found.
        assert!(set.callout_pending(c).is_ok());
        assert_eq!(set.callout_active(c), Ok(true));
        assert!(set.callout_cpu(c).is_ok());
        assert_eq!(runner.join().unwrap(), 1);
        assert_eq!(set.callout_cpu(c), Ok(1));
        set.check_invariants().unwrap();
    });
}
