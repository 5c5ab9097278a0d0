//! Dropping a timer's last handle, step by step on a manual clock (no threads, so the tests
//! run under Miri): the pending arming is cancelled, a firing already taken is dropped unrun,
//! the callback's own `&Timer` is no handle, and a detached timer keeps firing.

use std::sync::atomic::{AtomicU64, Ordering as StdOrdering};
use std::sync::{Arc, Mutex as StdMutex};

use callwheel::Missed;

use crate::shared::Shared;
use crate::step_tests::{at, ns, shared};
use crate::timer::{Exec, Stop, Timer};
use crate::ManualClock;

/// A timer (not detached) that counts its runs in `runs` and then runs `then`.
fn counting_timer(
    s: &Arc<Shared>,
    exec: Exec,
    runs: &Arc<AtomicU64>,
    then: impl Fn(&Timer) + Send + Sync + 'static,
) -> Timer {
    let runs = Arc::clone(runs);
    Timer::owned(
        s.new_timer(0, exec, move |t, _| {
            runs.fetch_add(1, StdOrdering::SeqCst);
            then(t);
        })
        .unwrap(),
        Arc::<Shared>::clone(s),
    )
}

/// A place for a timer's handle that its own (or another timer's) callback can take.
type Slot = Arc<StdMutex<Option<Timer>>>;

fn take(slot: &Slot) -> Option<Timer> {
    slot.lock().unwrap().take()
}

#[test]
fn dropping_the_last_handle_cancels_the_timer() {
    for exec in [Exec::Direct, Exec::Deferred] {
        let clock = ManualClock::new(0);
        let s = shared(&clock, 1, 64);
        let runs = Arc::new(AtomicU64::new(0));
        let once = counting_timer(&s, exec, &runs, |_| {});
        once.start_at(at(10)).unwrap();
        let periodic = counting_timer(&s, exec, &runs, |_| {});
        periodic
            .start_periodic(at(10), ns(10), Missed::Skip)
            .unwrap();
        // A clone is a handle too: the timer lives until the last one goes.
        let clone = once.clone();
        drop(once);
        assert!(clone.is_pending());
        drop(clone);
        drop(periodic);
        assert_eq!(s.stats(0).pending, 0, "{exec:?}");
        for _ in 0..5 {
            clock.advance(10);
            let _ = s.step(0);
        }
        assert_eq!(runs.load(StdOrdering::SeqCst), 0, "{exec:?}");
    }
}

#[test]
fn dropping_the_last_handle_inside_its_own_callback_stops_a_periodic_timer() {
    let clock = ManualClock::new(0);
    let s = shared(&clock, 1, 64);
    let runs = Arc::new(AtomicU64::new(0));
    let slot = Slot::default();
    let mine = Arc::clone(&slot);
    // The handle is dropped while the callback runs: no lock is held, so it cannot deadlock.
    let t = counting_timer(&s, Exec::Direct, &runs, move |_| drop(take(&mine)));
    t.start_periodic(at(10), ns(10), Missed::Skip).unwrap();
    *slot.lock().unwrap() = Some(t);
    for _ in 0..5 {
        clock.advance(10);
        let _ = s.step(0);
    }
    assert_eq!(runs.load(StdOrdering::SeqCst), 1);
    assert_eq!(s.stats(0).pending, 0);
}

#[test]
fn a_firing_already_taken_is_dropped_unrun_when_its_last_handle_goes() {
    for exec in [Exec::Direct, Exec::Deferred] {
        let clock = ManualClock::new(0);
        let s = shared(&clock, 1, 64);
        let (first_runs, second_runs) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let slot = Slot::default();
        let other = Arc::clone(&slot);
        // Both are due in one step; the first one's callback drops the second's last handle
        // after the step has taken the second for running.
        let first = counting_timer(&s, exec, &first_runs, move |_| drop(take(&other)));
        let second = counting_timer(&s, exec, &second_runs, |_| {});
        first.start_at(at(10)).unwrap();
        second.start_at(at(10)).unwrap();
        *slot.lock().unwrap() = Some(second);
        clock.advance(10);
        assert_eq!(s.step(0).fired, 2);
        assert_eq!(first_runs.load(StdOrdering::SeqCst), 1, "{exec:?}");
        assert_eq!(second_runs.load(StdOrdering::SeqCst), 0, "{exec:?}");
        assert_eq!(first.drain(), Stop::NotPending);
    }
}

#[test]
fn a_detached_timer_keeps_firing_without_a_handle() {
    let clock = ManualClock::new(0);
    let s = shared(&clock, 1, 64);
    let runs = Arc::new(AtomicU64::new(0));
    let t = counting_timer(&s, Exec::Direct, &runs, |_| {});
    t.start_periodic(at(10), ns(10), Missed::Skip).unwrap();
    t.detach();
    for _ in 0..3 {
        clock.advance(10);
        let _ = s.step(0);
    }
    assert_eq!(runs.load(StdOrdering::SeqCst), 3);
    assert_eq!(s.stats(0).pending, 1);
}

#[test]
fn a_clone_made_in_the_callback_is_a_handle_that_keeps_the_timer() {
    let clock = ManualClock::new(0);
    let s = shared(&clock, 1, 64);
    let runs = Arc::new(AtomicU64::new(0));
    let slot = Slot::default();
    let kept = Arc::clone(&slot);
    let t = counting_timer(&s, Exec::Direct, &runs, move |me| {
        kept.lock().unwrap().get_or_insert_with(|| me.clone());
    });
    t.start_periodic(at(10), ns(10), Missed::Skip).unwrap();
    clock.advance(10);
    let _ = s.step(0);
    // The callback's `&Timer` is not a handle, but its clone is: the owner may let go.
    drop(t);
    for _ in 0..2 {
        clock.advance(10);
        let _ = s.step(0);
    }
    assert_eq!(runs.load(StdOrdering::SeqCst), 3);
    // The last handle goes: cancelled.
    drop(take(&slot));
    clock.advance(10);
    let _ = s.step(0);
    assert_eq!(runs.load(StdOrdering::SeqCst), 3);
}

#[test]
fn a_callback_cannot_rearm_its_timer_after_the_last_handle_went() {
    let clock = ManualClock::new(0);
    let s = shared(&clock, 1, 64);
    let runs = Arc::new(AtomicU64::new(0));
    let slot = Slot::default();
    let mine = Arc::clone(&slot);
    let t = counting_timer(&s, Exec::Direct, &runs, move |me| {
        drop(take(&mine));
        assert!(!me.start_at(at(100)).unwrap());
    });
    t.start_at(at(10)).unwrap();
    *slot.lock().unwrap() = Some(t);
    clock.advance(10);
    assert_eq!(s.step(0).fired, 1);
    assert_eq!(s.stats(0).pending, 0);
    clock.advance(100);
    assert_eq!(s.step(0).fired, 0);
    assert_eq!(runs.load(StdOrdering::SeqCst), 1);
}
