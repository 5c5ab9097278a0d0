//! `callout_async_drain` on a single table and on a shared one: with the handler running, the
//! drain call is handed out once, right after the handler returns, and resets are ignored
//! until then; with it not running, the callout is stopped and the drain never happens.
#![cfg(not(callwheel_loom))]

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;

use callwheel_callout::flags::C_DIRECT_EXEC;
use callwheel_callout::{AsyncDrain, Callouts, Error, SharedCallouts};
use callwheel_schemes::hashed_wheel::HashedWheel;

type Table = Callouts<HashedWheel<u32>, u32>;

fn table() -> Table {
    Callouts::new(HashedWheel::new(4).unwrap())
}

/// A drain call is the callout's call plus this.
const DRAINED: u32 = 1000;

#[test]
fn async_drain_from_the_running_handler_hands_out_the_drain_once_after_it_returns() {
    let mut t = table();
    let c = t.callout_init().unwrap();
    t.callout_reset(c, 1, 7).unwrap();
    t.hardclock();
    let mut log = Vec::new();
    let ran = t.softclock(|t, call| {
        log.push(call);
        if call == 7 {
            assert_eq!(
                t.callout_async_drain(c, |call| call + DRAINED),
                Ok(AsyncDrain::Pending)
            );
            // Until the handler returns, a reset is ignored and a second drain refused.
            assert_eq!(t.callout_reset(c, 1, 8), Ok(false));
            assert_eq!(t.callout_pending(c), Ok(false));
            assert_eq!(t.callout_active(c), Ok(false));
            assert_eq!(
                t.callout_async_drain(c, |_| unreachable!()),
                Err(Error::Busy)
            );
            assert_eq!(t.callout_free(c), Err(Error::Busy));
        } else {
            // The drain call: the handler has returned, so the callout can be freed here.
            assert_eq!(call, 7 + DRAINED);
            t.callout_free(c).unwrap();
        }
        t.check_invariants().unwrap();
    });
    assert_eq!(ran, 2);
    assert_eq!(log, [7, 7 + DRAINED]);
    for _ in 0..5 {
        t.hardclock();
        t.softclock(|_, call| log.push(call));
    }
    assert_eq!(log, [7, 7 + DRAINED], "drained once, and nothing re-armed");
    assert_eq!(t.stats().fired, 1, "a drain call is not a firing");
    t.check_invariants().unwrap();
}

/// At the last ticks, a reset to a time the table cannot hold is ignored while a drain waits,
/// as any reset is then, instead of refused.
#[test]
fn a_reset_past_the_end_of_time_is_ignored_while_a_drain_waits() {
    let mut t = table();
    assert!(!t.callout_process(u64::MAX - 100));
    let c = t.callout_init().unwrap();
    t.callout_reset(c, 1, 7).unwrap();
    assert_eq!(t.callout_reset(c, i64::MAX, 7), Err(Error::PastEndOfTime));
    t.hardclock();
    let ran = t.softclock(|t, call| {
        if call == 7 {
            assert_eq!(
                t.callout_async_drain(c, |call| call + DRAINED),
                Ok(AsyncDrain::Pending)
            );
            assert_eq!(t.callout_reset(c, i64::MAX, 8), Ok(false));
        }
    });
    assert_eq!(ran, 2, "the handler, then its drain");
}

#[test]
fn async_drain_of_a_callout_not_running_stops_it_and_never_drains() {
    let mut t = table();
    let c = t.callout_init().unwrap();
    // Idle.
    assert_eq!(
        t.callout_async_drain(c, |_| panic!("never called")),
        Ok(AsyncDrain::Stopped(false))
    );
    // Pending: cancelled, inactive.
    t.callout_reset(c, 2, 7).unwrap();
    assert_eq!(
        t.callout_async_drain(c, |_| panic!("never called")),
        Ok(AsyncDrain::Stopped(true))
    );
    assert_eq!(t.callout_pending(c), Ok(false));
    assert_eq!(t.callout_active(c), Ok(false));
    let mut log = Vec::new();
    for _ in 0..4 {
        t.hardclock();
        t.softclock(|_, call| log.push(call));
    }
    assert!(log.is_empty(), "{log:?}");
    // A reset afterwards is honoured: no drain waits.
    assert_eq!(t.callout_reset(c, 1, 8), Ok(false));
    t.hardclock();
    t.softclock(|_, call| log.push(call));
    assert_eq!(log, [8]);
    // Bad handles.
    let one_shot = t.setcallout(9, 3).unwrap();
    assert_eq!(
        t.callout_async_drain(one_shot, |x| x),
        Err(Error::WrongKind)
    );
    t.callout_free(c).unwrap();
    assert_eq!(t.callout_async_drain(c, |x| x), Err(Error::StaleHandle));
    let other = table().callout_init().unwrap();
    assert_eq!(t.callout_async_drain(other, |x| x), Err(Error::StaleHandle));
    t.check_invariants().unwrap();
}

#[test]
fn a_direct_handler_s_drain_runs_from_the_same_interrupt() {
    let mut t = table();
    let c = t.callout_init().unwrap();
    t.callout_reset_sbt_on(
        c,
        callwheel::time::Sbt::MILLISECOND,
        callwheel::time::Sbt::ZERO,
        3,
        -1,
        C_DIRECT_EXEC,
    )
    .unwrap();
    let mut log = Vec::new();
    t.hardclock_with(|t, call| {
        log.push(call);
        if call == 3 {
            assert_eq!(
                t.callout_async_drain(c, |call| call + DRAINED),
                Ok(AsyncDrain::Pending)
            );
        }
    });
    assert_eq!(log, [3, 3 + DRAINED]);
}

#[test]
fn a_handler_that_panics_still_gets_its_drain_at_the_next_softclock() {
    let mut t = table();
    let c = t.callout_init().unwrap();
    t.callout_reset(c, 1, 4).unwrap();
    t.hardclock();
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        t.softclock(|t, _| {
            t.callout_async_drain(c, |call| call + DRAINED).unwrap();
            panic!("handler fails");
        })
    }));
    assert!(result.is_err());
    t.check_invariants().unwrap();
    // The table asks for a softclock (the drain is due now) and hands it out first.
    assert_eq!(t.next_event(), Some((t.ticks(), t.ticks())));
    let mut log = Vec::new();
    assert_eq!(t.softclock(|_, call| log.push(call)), 1);
    assert_eq!(log, [4 + DRAINED]);
    t.callout_free(c).unwrap();
}

/// The handler runs on another thread: `callout_async_drain` returns at once (the handler
/// still running), and that thread runs the drain call right after the handler.
#[test]
fn async_drain_of_a_handler_running_elsewhere_does_not_wait() {
    let table = Arc::new(SharedCallouts::single(table()));
    let c = table.callout_init().unwrap();
    table.callout_reset(c, 1, 7).unwrap();
    table.hardclock(0).unwrap();
    let finished = Arc::new(AtomicBool::new(false));
    let (started_tx, started_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let runner = {
        let (table, finished) = (Arc::clone(&table), Arc::clone(&finished));
        thread::spawn(move || {
            let mut log = Vec::new();
            let t = Arc::clone(&table);
            let ran = table
                .softclock(0, |call| {
                    log.push((call, finished.load(Ordering::SeqCst)));
                    if call == 7 {
                        started_tx.send(()).unwrap();
                        go_rx.recv().unwrap();
                        finished.store(true, Ordering::SeqCst);
                    } else {
                        // Drained: the record is free to go.
                        t.callout_free(c).unwrap();
                    }
                })
                .unwrap();
            (ran, log)
        })
    };
    started_rx.recv().unwrap();
    assert_eq!(
        table.callout_async_drain(c, |call| call + DRAINED),
        Ok(AsyncDrain::Pending)
    );
    assert!(!finished.load(Ordering::SeqCst), "returned without waiting");
    assert_eq!(
        table.callout_reset(c, 1, 8),
        Ok(false),
        "ignored while draining"
    );
    go_tx.send(()).unwrap();
    let (ran, log) = runner.join().unwrap();
    assert_eq!(ran, 2);
    // The drain call ran after the handler had finished, on the handler's thread.
    assert_eq!(log, [(7, false), (7 + DRAINED, true)]);
    assert_eq!(table.callout_pending(c), Err(Error::StaleHandle));
    table.with(0, |t| t.check_invariants()).unwrap().unwrap();
}
