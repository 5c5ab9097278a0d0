//! Loom models of the shared table: every interleaving of `callout_drain` against a
//! `softclock` running the callout's handler, and of a stop racing the handler's re-arm.
//!
//! Run with `RUSTFLAGS="--cfg callwheel_loom" cargo test -p callwheel-callout --test loom --release`.
#![cfg(callwheel_loom)]

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::Arc;
use loom::thread;

use callwheel_callout::{Callouts, Config, SharedCallouts};
use callwheel_schemes::hashed_wheel::HashedWheel;

type Table = SharedCallouts<HashedWheel<u32>, u32>;

fn table() -> Arc<Table> {
    let config = Config {
        calloutsize: 2,
        ..Config::default()
    };
    Arc::new(SharedCallouts::new(
        Callouts::with_config(HashedWheel::new(2).unwrap(), config).unwrap(),
    ))
}

/// When `callout_drain` returns, the handler has either finished or will never run.
#[test]
fn drain_never_returns_while_the_handler_runs() {
    loom::model(|| {
        let table = table();
        let c = table.callout_init().unwrap();
        table.callout_reset(c, 1, 1).unwrap();
        table.hardclock();
        let finished = Arc::new(AtomicBool::new(false));
        let runner = {
            let (table, finished) = (Arc::clone(&table), Arc::clone(&finished));
            thread::spawn(move || {
                table
                    .softclock(|_| finished.store(true, Ordering::SeqCst))
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
        table.hardclock();
        let runner = {
            let table = Arc::clone(&table);
            thread::spawn(move || {
                let t = Arc::clone(&table);
                table
                    .softclock(move |_| {
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
        table.with(|t| t.check_invariants()).unwrap();
    });
}
