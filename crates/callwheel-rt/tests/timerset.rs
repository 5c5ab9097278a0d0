//! Timer sets (`ITIMER_MULTIREAL`): every rule of Costello & Varghese's Figures 6 and 7 as its
//! own test, then quota, isolation, missed periods, range errors and notification. All on the
//! manual clock: time moves only when a test moves it, and every call catches up with it.
#![cfg(not(miri))]

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use callwheel_rt::{
    Error, ManualClock, Missed, Runtime, TimerHandle, TimerSet, TimerSetConfig, TimerValue,
    Tolerance, MAX_QUOTA,
};

mod common;
use common::readable;

/// Generous liveness bound for waits on the driver thread (never a latency assertion).
const PATIENCE: Duration = Duration::from_secs(30);

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

const MS: u64 = 1_000_000;

fn runtime(clock: &ManualClock) -> Runtime {
    Runtime::builder()
        .clock(clock.clone())
        .shards(1)
        .build()
        .unwrap()
}

fn setup() -> (ManualClock, Runtime, TimerSet) {
    let clock = ManualClock::new(1_000 * MS);
    let rt = runtime(&clock);
    let set = TimerSet::new(&rt).unwrap();
    (clock, rt, set)
}

fn value(remaining: u64, interval: u64) -> TimerValue {
    TimerValue {
        remaining: ms(remaining),
        interval: ms(interval),
    }
}

fn assert_invalid<T: std::fmt::Debug>(r: Result<T, Error>) {
    assert!(
        matches!(r, Err(Error::InvalidHandle)),
        "expected InvalidHandle, got {r:?}"
    );
}

// ----- Figure 6: setitimer(ITIMER_MULTIREAL) ---------------------------------------------------

#[test]
fn create_returns_a_set_chosen_handle_and_keeps_the_user_chosen_label() {
    let (clock, _rt, set) = setup();
    let h = set.create(ms(10), Duration::ZERO, 0xfeed_beef).unwrap();
    assert_eq!(set.get(h).unwrap(), value(10, 0));
    clock.advance(10 * MS);
    assert_eq!(set.reap(), Some((h, 0xfeed_beef)));
    set.check_invariants().unwrap();
}

#[test]
fn create_with_a_zero_value_is_an_error_and_creates_nothing() {
    let (_clock, _rt, set) = setup();
    assert!(matches!(
        set.create(Duration::ZERO, ms(10), 1),
        Err(Error::ZeroValue)
    ));
    assert_eq!(set.len(), 0);
}

#[test]
fn reset_overwrites_value_and_label_and_returns_the_former_value() {
    let (clock, _rt, set) = setup();
    let h = set.create(ms(100), ms(50), 1).unwrap();
    clock.advance(30 * MS);
    assert_eq!(
        set.reset(h, ms(20), Duration::ZERO, 2).unwrap(),
        value(70, 50)
    );
    assert_eq!(set.get(h).unwrap(), value(20, 0));
    clock.advance(19 * MS);
    assert_eq!(set.reap(), None);
    clock.advance(MS);
    assert_eq!(set.reap(), Some((h, 2)));
    assert_invalid(set.get(h)); // now one-shot: destroyed by the reap
}

#[test]
fn reset_removes_a_queued_timer_from_the_expired_queue_and_changes_its_label() {
    let (clock, _rt, set) = setup();
    let h = set.create(ms(10), ms(10), 1).unwrap();
    let other = set.create(ms(10), Duration::ZERO, 9).unwrap();
    clock.advance(15 * MS);
    assert!(set.is_queued(h).unwrap());
    // A queued timer's former value: nothing remaining, its interval.
    assert_eq!(set.reset(h, ms(30), ms(5), 2).unwrap(), value(0, 10));
    assert!(!set.is_queued(h).unwrap());
    assert_eq!(set.reap(), Some((other, 9)));
    assert_eq!(set.reap(), None);
    clock.advance(30 * MS);
    assert_eq!(set.reap(), Some((h, 2)));
    set.check_invariants().unwrap();
}

#[test]
fn reset_of_a_bad_handle_is_invalid_and_changes_nothing() {
    let (clock, _rt, set) = setup();
    let h = set.create(ms(10), Duration::ZERO, 1).unwrap();
    for bad in [0, u64::MAX, h.to_bits() ^ 1, h.to_bits() + (1 << 40)] {
        assert_invalid(set.reset(TimerHandle::from_bits(bad), ms(99), ms(99), 99));
    }
    clock.advance(10 * MS);
    assert_eq!(set.reap(), Some((h, 1)));
    // The reaped one-shot timer's handle is stale now.
    assert_invalid(set.reset(h, ms(5), Duration::ZERO, 3));
    assert_eq!(set.len(), 0);
}

#[test]
fn cancel_destroys_the_timer_and_returns_its_final_value() {
    let (clock, _rt, set) = setup();
    let h = set.create(ms(100), ms(25), 1).unwrap();
    clock.advance(40 * MS);
    assert_eq!(set.cancel(h).unwrap(), value(60, 25));
    assert_invalid(set.get(h));
    clock.advance(100 * MS);
    assert_eq!(set.reap(), None);
    assert_eq!(set.len(), 0);
}

#[test]
fn cancel_of_a_queued_timer_works_because_queued_timers_still_exist() {
    let (clock, _rt, set) = setup();
    let h = set.create(ms(10), ms(10), 1).unwrap();
    clock.advance(10 * MS);
    assert_eq!(set.refresh(), 1);
    assert_eq!(set.cancel(h).unwrap(), value(0, 10));
    assert_eq!(set.reap(), None);
    assert_invalid(set.cancel(h));
    set.check_invariants().unwrap();
}

#[test]
fn cancel_of_a_bad_handle_is_invalid_and_changes_nothing() {
    let (_clock, _rt, set) = setup();
    let h = set.create(ms(10), Duration::ZERO, 1).unwrap();
    assert_invalid(set.cancel(TimerHandle::from_bits(h.to_bits() + 1)));
    assert_invalid(set.cancel(TimerHandle::from_bits(12345)));
    assert_eq!(set.get(h).unwrap(), value(10, 0));
    assert_eq!(set.len(), 1);
}

// ----- Figure 7: getitimer(ITIMER_MULTIREAL) ---------------------------------------------------

#[test]
fn reap_returns_handle_and_label_in_expiry_order() {
    let (clock, _rt, set) = setup();
    let c = set.create(ms(30), Duration::ZERO, 3).unwrap();
    let a = set.create(ms(10), Duration::ZERO, 1).unwrap();
    let b = set.create(ms(20), Duration::ZERO, 2).unwrap();
    let a2 = set.create(ms(10), Duration::ZERO, 11).unwrap(); // same deadline, started later
    clock.advance(25 * MS);
    assert_eq!(set.reap(), Some((a, 1)));
    clock.advance(25 * MS);
    // c expired after b and a2 were already queued: FIFO, whatever the reap times.
    assert_eq!(set.reap(), Some((a2, 11)));
    assert_eq!(set.reap(), Some((b, 2)));
    assert_eq!(set.reap(), Some((c, 3)));
    assert_eq!(set.reap(), None);
}

#[test]
fn reap_of_a_one_shot_timer_destroys_it() {
    let (clock, _rt, set) = setup();
    let h = set.create(ms(10), Duration::ZERO, 1).unwrap();
    clock.advance(10 * MS);
    assert_eq!(set.reap(), Some((h, 1)));
    assert_invalid(set.get(h));
    assert_invalid(set.cancel(h));
    assert_eq!(set.len(), 0);
    // Its slot is reused with a new handle; the old one stays stale.
    let h2 = set.create(ms(10), Duration::ZERO, 2).unwrap();
    assert_ne!(h, h2);
    assert_invalid(set.get(h));
}

#[test]
fn reap_of_a_periodic_timer_restarts_it_from_its_last_expiry_not_the_reap_time() {
    let (clock, _rt, set) = setup();
    let h = set.create(ms(10), ms(10), 5).unwrap();
    clock.advance(17 * MS); // expired at 10, reaped at 17
    let r = set.reap_info().unwrap();
    assert_eq!(
        (r.handle, r.label, r.overruns, r.restarted),
        (h, 5, 0, true)
    );
    assert_eq!(r.deadline, 1_010 * MS);
    // Next expiry at 20 (10 + 10), not 27 (17 + 10).
    assert_eq!(set.get(h).unwrap(), value(3, 10));
    clock.advance(3 * MS);
    assert_eq!(set.reap_info().unwrap().deadline, 1_020 * MS);
}

#[test]
fn a_periodic_timer_does_not_run_while_it_waits_on_the_queue() {
    let (clock, _rt, set) = setup();
    let h = set.create(ms(10), ms(10), 5).unwrap();
    clock.advance(100 * MS);
    assert_eq!(set.stats().expired, 1);
    assert_eq!(set.get(h).unwrap(), value(0, 10));
    assert_eq!(set.refresh(), 1);
}

#[test]
fn reap_of_an_empty_queue_returns_none() {
    let (clock, _rt, set) = setup();
    assert_eq!(set.reap(), None);
    set.create(ms(10), Duration::ZERO, 1).unwrap();
    clock.advance(9 * MS);
    assert_eq!(set.reap(), None);
    assert_eq!(set.reap_info(), None);
}

#[test]
fn get_returns_the_remaining_value_running_or_queued() {
    let (clock, _rt, set) = setup();
    let h = set.create(ms(50), ms(20), 1).unwrap();
    clock.advance(20 * MS);
    assert_eq!(set.get(h).unwrap(), value(30, 20));
    clock.advance(40 * MS);
    assert_eq!(set.get(h).unwrap(), value(0, 20)); // queued: expired, not yet reaped
    assert!(set.is_queued(h).unwrap());
}

#[test]
fn get_of_a_bad_handle_is_invalid_and_changes_nothing() {
    let (clock, _rt, set) = setup();
    let h = set.create(ms(10), Duration::ZERO, 1).unwrap();
    for bad in [0, u64::MAX, 1, h.to_bits().wrapping_sub(1)] {
        assert_invalid(set.get(TimerHandle::from_bits(bad)));
    }
    assert_eq!(set.get(h).unwrap(), value(10, 0));
    clock.advance(10 * MS);
    assert_eq!(set.reap(), Some((h, 1)));
}

#[test]
fn dropping_the_set_destroys_all_its_timers_running_or_queued() {
    let (clock, rt, set) = setup();
    let token = Arc::new(());
    let calls = Arc::new(AtomicUsize::new(0));
    {
        let token = Arc::clone(&token);
        let calls = Arc::clone(&calls);
        set.set_callback(move || {
            let _ = &token;
            calls.fetch_add(1, Ordering::SeqCst);
        });
    }
    for i in 0..100 {
        set.create(ms(10 + i), ms(i % 3), i).unwrap();
    }
    clock.advance(50 * MS);
    assert!(set.refresh() > 0);
    let calls_before = calls.load(Ordering::SeqCst);
    assert_eq!(calls_before, 1);
    drop(set);
    // The callback (and everything it holds) is gone, and the set's runtime timer with it.
    assert_eq!(Arc::strong_count(&token), 1);
    clock.advance(1_000 * MS);
    clock.wait_idle(1);
    assert_eq!(calls.load(Ordering::SeqCst), calls_before);
    assert_eq!(rt.stats()[0].pending, 0);
}

// ----- quota, isolation, handles ---------------------------------------------------------------

#[test]
fn creating_past_the_quota_is_an_error_and_queued_timers_count() {
    let (clock, rt, _set) = setup();
    let set = TimerSet::with_config(&rt, TimerSetConfig::default().with_quota(3)).unwrap();
    let a = set.create(ms(1), Duration::ZERO, 1).unwrap();
    set.create(ms(100), Duration::ZERO, 2).unwrap();
    set.create(ms(100), ms(1), 3).unwrap();
    assert!(matches!(
        set.create(ms(1), Duration::ZERO, 4),
        Err(Error::QuotaExceeded { quota: 3 })
    ));
    clock.advance(10 * MS);
    assert!(set.is_queued(a).unwrap());
    assert!(matches!(
        set.create(ms(1), Duration::ZERO, 4),
        Err(Error::QuotaExceeded { .. })
    ));
    assert_eq!(set.reap(), Some((a, 1)));
    let d = set.create(ms(1), Duration::ZERO, 4).unwrap();
    assert_eq!(set.len(), 3);
    // Reset needs no room: a full set still resets its timers, queued or running.
    clock.advance(MS);
    assert!(set.is_queued(d).unwrap());
    set.reset(d, ms(5), ms(5), 5).unwrap();
    set.reset(d, ms(6), ms(6), 6).unwrap();
    assert_eq!(set.get(d).unwrap(), value(6, 6));
    assert_eq!(set.len(), 3);
    set.check_invariants().unwrap();
}

#[test]
fn a_quota_of_zero_or_above_the_maximum_is_a_configuration_error() {
    let (_clock, rt, _set) = setup();
    for quota in [0, MAX_QUOTA + 1] {
        let r = TimerSet::with_config(&rt, TimerSetConfig::default().with_quota(quota));
        assert!(matches!(r, Err(Error::Config { .. })), "{quota}");
    }
    assert!(TimerSet::with_config(&rt, TimerSetConfig::default().with_quota(MAX_QUOTA)).is_ok());
}

#[test]
fn an_owner_that_never_reaps_cannot_grow_past_its_quota() {
    let (clock, rt, _set) = setup();
    let set = TimerSet::with_config(&rt, TimerSetConfig::default().with_quota(64)).unwrap();
    let mut created = 0;
    for round in 0..50u64 {
        while set.create(ms(1), ms(1), round).is_ok() {
            created += 1;
        }
        clock.advance(10 * MS);
    }
    assert_eq!(created, 64);
    assert_eq!(set.stats().queued, 64);
    assert_eq!(set.stats().expired, 64);
    set.check_invariants().unwrap();
}

#[test]
fn a_handle_of_another_set_is_rejected_and_touches_nothing() {
    let (clock, rt, a) = setup();
    let b = TimerSet::new(&rt).unwrap();
    let ha = a.create(ms(10), ms(10), 1).unwrap();
    let hb = b.create(ms(10), ms(10), 2).unwrap();
    // Same slot and generation in both sets; only the key differs.
    assert_eq!(
        ha.to_bits() & ((1 << 40) - 1),
        hb.to_bits() & ((1 << 40) - 1)
    );
    assert_ne!(ha, hb);
    assert_invalid(b.get(ha));
    assert_invalid(b.reset(ha, ms(1), Duration::ZERO, 3));
    assert_invalid(b.cancel(ha));
    assert_invalid(b.set_missed(ha, Missed::Skip));
    assert_invalid(b.overruns(ha));
    assert_invalid(b.is_queued(ha));
    assert_invalid(a.cancel(hb));
    clock.advance(10 * MS);
    assert_eq!(a.reap(), Some((ha, 1)));
    assert_eq!(b.reap(), Some((hb, 2)));
    assert_eq!(a.reap(), None);
    assert_eq!(b.reap(), None);
}

#[test]
fn handles_are_never_zero_nor_all_ones_and_round_trip_through_bits() {
    let (_clock, rt, _set) = setup();
    for quota in [1, 2, 1000, 4096] {
        let set = TimerSet::with_config(&rt, TimerSetConfig::default().with_quota(quota)).unwrap();
        let mut seen = std::collections::HashSet::new();
        for i in 0..200 {
            let h = set.create(ms(5), Duration::ZERO, i).unwrap();
            assert!(h.to_bits() != 0 && h.to_bits() != u64::MAX);
            assert_eq!(TimerHandle::from_bits(h.to_bits()), h);
            assert!(seen.insert(h), "handle reused: {h:?}");
            set.cancel(h).unwrap();
        }
    }
}

// ----- missed periods --------------------------------------------------------------------------

/// A timer due at 10 ms, every 10 ms, with `policy`, reaped first at 45 ms.
fn late_reap(policy: Missed) -> (ManualClock, Runtime, TimerSet, TimerHandle) {
    let (clock, rt, _set) = setup();
    let set = TimerSet::with_config(&rt, TimerSetConfig::default().with_missed(policy)).unwrap();
    let h = set.create(ms(10), ms(10), 7).unwrap();
    clock.advance(45 * MS);
    (clock, rt, set, h)
}

#[test]
fn burst_delivers_every_missed_period_one_reap_each() {
    let (_clock, _rt, set, h) = late_reap(Missed::Burst);
    let mut got = Vec::new();
    while let Some(r) = set.reap_info() {
        got.push((r.deadline / MS - 1_000, r.overruns));
    }
    assert_eq!(got, [(10, 3), (20, 2), (30, 1), (40, 0)]);
    assert_eq!(set.get(h).unwrap(), value(5, 10)); // back on the grid: 50
    assert_eq!(set.overruns(h).unwrap(), 0);
}

#[test]
fn delay_restarts_the_period_from_the_reap_and_counts_the_missed_ones() {
    let (clock, _rt, set, h) = late_reap(Missed::Delay);
    let r = set.reap_info().unwrap();
    assert_eq!((r.deadline / MS - 1_000, r.overruns), (10, 3));
    assert_eq!(set.overruns(h).unwrap(), 3);
    assert_eq!(set.reap(), None);
    assert_eq!(set.get(h).unwrap(), value(10, 10)); // 45 + 10
    clock.advance(10 * MS);
    let r = set.reap_info().unwrap();
    assert_eq!((r.deadline / MS - 1_000, r.overruns), (55, 0));
}

#[test]
fn skip_drops_the_missed_periods_and_stays_on_the_grid() {
    let (clock, _rt, set, h) = late_reap(Missed::Skip);
    let r = set.reap_info().unwrap();
    assert_eq!((r.deadline / MS - 1_000, r.overruns), (10, 3));
    assert_eq!(set.reap(), None);
    assert_eq!(set.get(h).unwrap(), value(5, 10)); // 50, the first grid point after 45
    clock.advance(5 * MS);
    let r = set.reap_info().unwrap();
    assert_eq!((r.deadline / MS - 1_000, r.overruns), (50, 0));
}

#[test]
fn the_policy_can_be_chosen_per_timer() {
    let (_clock, _rt, set, h) = late_reap(Missed::Burst);
    set.set_missed(h, Missed::Skip).unwrap();
    assert_eq!(set.reap_info().unwrap().overruns, 3);
    assert_eq!(set.reap(), None);
}

#[test]
fn an_on_time_reap_has_no_overruns_under_every_policy() {
    for policy in [Missed::Burst, Missed::Delay, Missed::Skip] {
        let (clock, rt, _set) = setup();
        let set =
            TimerSet::with_config(&rt, TimerSetConfig::default().with_missed(policy)).unwrap();
        let h = set.create(ms(10), ms(10), 7).unwrap();
        clock.advance(19 * MS);
        assert_eq!(set.reap_info().unwrap().overruns, 0, "{policy:?}");
        assert_eq!(set.get(h).unwrap(), value(1, 10), "{policy:?}");
    }
}

// ----- range errors ----------------------------------------------------------------------------

#[test]
fn values_and_intervals_beyond_the_clock_are_errors_not_panics() {
    let (_clock, _rt, set) = setup();
    let huge = Duration::from_nanos(u64::MAX);
    assert!(matches!(
        set.create(Duration::MAX, Duration::ZERO, 1),
        Err(Error::ValueOutOfRange)
    ));
    assert!(matches!(
        set.create(huge, Duration::ZERO, 1),
        Err(Error::ValueOutOfRange)
    ));
    assert!(matches!(
        set.create(ms(1), Duration::MAX, 1),
        Err(Error::IntervalOutOfRange)
    ));
    assert!(matches!(
        set.create(ms(1), huge, 1),
        Err(Error::IntervalOutOfRange)
    ));
    let h = set.create(ms(1), Duration::ZERO, 1).unwrap();
    assert!(matches!(
        set.reset(h, huge, Duration::ZERO, 2),
        Err(Error::ValueOutOfRange)
    ));
    assert!(matches!(
        set.reset(h, ms(1), huge, 2),
        Err(Error::IntervalOutOfRange)
    ));
    assert!(matches!(
        set.reset(h, Duration::ZERO, ms(1), 2),
        Err(Error::ZeroValue)
    ));
    assert_eq!(set.get(h).unwrap(), value(1, 0));
    assert_eq!(set.len(), 1);
    // The largest value that fits still works (and never expires in practice).
    let far = Duration::from_nanos(u64::MAX - set.now_ns() - 1);
    let f = set.create(far, Duration::ZERO, 3).unwrap();
    assert_eq!(set.get(f).unwrap().remaining, far);
}

#[test]
fn errors_map_to_the_papers_errno_values() {
    assert_eq!(Error::InvalidHandle.errno(), libc::EINVAL);
    assert_eq!(Error::ZeroValue.errno(), libc::EINVAL);
    assert_eq!(Error::QuotaExceeded { quota: 1 }.errno(), libc::EAGAIN);
}

// ----- notification ----------------------------------------------------------------------------

#[test]
fn the_fd_is_readable_exactly_while_the_queue_is_non_empty() {
    let (clock, _rt, set) = setup();
    assert!(!readable(set.fd(), 0));
    let h = set.create(ms(10), ms(10), 1).unwrap();
    assert!(!readable(set.fd(), 0));
    // The set's runtime timer fires on the driver thread and raises the fd.
    clock.advance(10 * MS);
    assert!(readable(set.fd(), PATIENCE.as_millis() as i32));
    assert!(readable(set.fd(), 0), "level-triggered: still readable");
    assert_eq!(set.reap(), Some((h, 1)));
    assert!(!readable(set.fd(), 0), "drained: no longer readable");
    clock.advance(10 * MS);
    assert!(
        readable(set.fd(), PATIENCE.as_millis() as i32),
        "readable again"
    );
    // Resetting the last queued timer (it leaves the queue) lowers it too...
    assert_eq!(set.reset(h, ms(10), ms(10), 1).unwrap(), value(0, 10));
    assert!(!readable(set.fd(), 0));
    clock.advance(10 * MS);
    assert!(readable(set.fd(), PATIENCE.as_millis() as i32));
    // ...and so does cancelling it.
    set.cancel(h).unwrap();
    assert!(!readable(set.fd(), 0));
    assert_eq!(set.as_raw_fd(), set.fd().as_raw_fd());
}

#[test]
fn wait_times_out_on_an_empty_queue() {
    let (_clock, _rt, set) = setup();
    set.create(ms(10), Duration::ZERO, 1).unwrap(); // never due: the clock does not move
    let start = Instant::now();
    assert!(!set.wait(Some(ms(50))));
    assert!(start.elapsed() >= ms(50));
    assert!(!set.wait(Some(Duration::ZERO)));
}

#[test]
fn wait_returns_when_a_timer_expires() {
    let (clock, _rt, set) = setup();
    let h = set.create(ms(10), Duration::ZERO, 1).unwrap();
    let mover = std::thread::spawn(move || {
        std::thread::sleep(ms(20));
        clock.advance(10 * MS);
        clock
    });
    assert!(set.wait(Some(PATIENCE)));
    assert_eq!(set.reap(), Some((h, 1)));
    let clock = mover.join().unwrap();
    // An empty queue with a zero timeout returns at once, empty-handed...
    assert!(!set.wait(Some(Duration::ZERO)));
    // ...and a non-empty one returns at once, even with a zero timeout or none.
    let h = set.create(ms(1), Duration::ZERO, 2).unwrap();
    clock.advance(MS);
    assert!(set.wait(Some(Duration::ZERO)));
    assert!(set.wait(None));
    assert_eq!(set.reap(), Some((h, 2)));
}

#[test]
fn the_callback_runs_when_the_queue_becomes_non_empty_and_may_call_the_set() {
    let (clock, _rt, set) = setup();
    let set = Arc::new(set);
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let weak = Arc::downgrade(&set);
    set.set_callback(move || {
        // Run without the set's lock: the set can be called from here.
        if let Some(set) = weak.upgrade() {
            let queued = set.stats().queued;
            let _ = tx.lock().unwrap().send(queued);
        }
    });
    let a = set.create(ms(10), Duration::ZERO, 1).unwrap();
    let b = set.create(ms(20), Duration::ZERO, 2).unwrap();
    clock.advance(10 * MS);
    assert_eq!(rx.recv_timeout(PATIENCE).unwrap(), 1);
    // b expires while a is still queued: the queue was not empty, no new notification.
    clock.advance(10 * MS);
    assert_eq!(set.refresh(), 2);
    assert!(rx.try_recv().is_err());
    assert_eq!(set.reap(), Some((a, 1)));
    assert_eq!(set.reap(), Some((b, 2)));
    let c = set.create(ms(5), Duration::ZERO, 3).unwrap();
    clock.advance(5 * MS);
    assert_eq!(rx.recv_timeout(PATIENCE).unwrap(), 1);
    assert_eq!(set.reap(), Some((c, 3)));
    set.clear_callback();
    set.create(ms(5), Duration::ZERO, 4).unwrap();
    clock.advance(5 * MS);
    assert_eq!(set.refresh(), 1);
    assert!(rx.try_recv().is_err());
}

#[test]
fn a_set_that_outlives_its_runtime_holds_nothing_and_drops_cleanly() {
    let (clock, rt, set) = setup();
    let a = set.create(ms(10), Duration::ZERO, 1).unwrap();
    clock.advance(10 * MS);
    assert_eq!(set.refresh(), 1);
    assert!(readable(set.fd(), 0));
    drop(rt);
    // The runtime's drop cancelled the set's timers, queued ones included.
    assert!(!readable(set.fd(), 0));
    assert_eq!(set.reap(), None);
    assert!(matches!(set.get(a), Err(Error::ShutDown)));
    assert!(matches!(
        set.create(ms(20), ms(20), 2),
        Err(Error::ShutDown)
    ));
    assert!(!set.wait(None), "the queue can never fill again");
    set.check_invariants().unwrap();
    drop(set);
}

#[test]
fn timers_of_many_sets_on_one_runtime_fire_independently() {
    let (clock, rt, first) = setup();
    let sets: Vec<TimerSet> = (0..8).map(|_| TimerSet::new(&rt).unwrap()).collect();
    let handles: Vec<TimerHandle> = sets
        .iter()
        .enumerate()
        .map(|(i, s)| {
            s.create(ms(1 + i as u64), Duration::ZERO, i as u64)
                .unwrap()
        })
        .collect();
    first.create(ms(100), Duration::ZERO, 99).unwrap();
    clock.advance(8 * MS);
    for (i, s) in sets.iter().enumerate() {
        assert!(readable(s.fd(), PATIENCE.as_millis() as i32));
        assert_eq!(s.reap(), Some((handles[i], i as u64)));
        assert_eq!(s.reap(), None);
    }
    assert!(!readable(first.fd(), 0));
    assert_eq!(first.reap(), None);
}

#[test]
fn the_sets_tolerance_lets_one_wakeup_serve_several_timers() {
    let (clock, rt, _set) = setup();
    let set = TimerSet::with_config(
        &rt,
        TimerSetConfig::default()
            .with_tolerance(Some(Tolerance::absolute(Duration::from_nanos(MS)))),
    )
    .unwrap();
    // Windows [10, 11] ms and [10.5, 11.5] ms: one wake-up at 11 ms serves both.
    let a = set.create(ms(10), Duration::ZERO, 1).unwrap();
    let b = set
        .create(Duration::from_micros(10_500), Duration::ZERO, 2)
        .unwrap();
    clock.advance(10_600_000);
    assert!(
        !readable(set.fd(), 50),
        "the set woke inside the first window"
    );
    clock.advance(400_000);
    assert!(readable(set.fd(), PATIENCE.as_millis() as i32));
    // Both were queued by that one wake-up, in deadline order.
    let st = set.stats();
    assert_eq!((st.queued, st.expired), (2, 2));
    assert_eq!(set.reap(), Some((a, 1)));
    assert_eq!(set.reap(), Some((b, 2)));
}

#[test]
fn a_set_dropped_from_its_own_callback_on_the_driver_does_not_deadlock() {
    let (clock, _rt, set) = setup();
    let token = Arc::new(());
    let slot: Arc<Mutex<Option<TimerSet>>> = Arc::new(Mutex::new(None));
    let (tx, rx) = mpsc::channel();
    {
        let (slot, token, tx) = (Arc::clone(&slot), Arc::clone(&token), Mutex::new(tx));
        set.set_callback(move || {
            let _ = &token;
            // The last owner of the set, taken and dropped on the driver thread.
            let taken = slot.lock().unwrap().take();
            let dropped = taken.is_some();
            drop(taken);
            let _ = tx.lock().unwrap().send(dropped);
        });
    }
    set.create(ms(10), Duration::ZERO, 1).unwrap();
    *slot.lock().unwrap() = Some(set);
    clock.advance(10 * MS);
    assert!(rx.recv_timeout(PATIENCE).unwrap());
    // Once the callback has returned, everything it held is gone.
    let deadline = Instant::now() + PATIENCE;
    while Arc::strong_count(&token) > 1 {
        assert!(Instant::now() < deadline, "the set's callback leaked");
        std::thread::sleep(ms(1));
    }
}

#[test]
fn a_clock_set_backwards_does_not_spin_the_driver_on_the_sets_timer() {
    // The driver's clamped reading stays at the highest time it saw; the set's reading
    // (Runtime::now) must not lag behind it, or the set's runtime timer fires at once for a
    // deadline the set does not yet see as due, re-arms, and fires again, forever.
    let clock = ManualClock::new(1_000 * MS);
    let rt = runtime(&clock);
    clock.wait_idle(1);
    clock.set(2_000 * MS); // the driver wakes (ClockSet) and reads 2 s
    clock.wait_idle(1);
    clock.set(1_000 * MS); // back: the driver's readings are clamped at 2 s
    clock.wait_idle(1);
    let set = TimerSet::new(&rt).unwrap();
    let h = set.create(ms(500), Duration::ZERO, 1).unwrap();
    std::thread::sleep(ms(200));
    let fired = rt.stats()[0].fired;
    assert!(fired <= 2, "the set's runtime timer fired {fired} times");
    // The set reads the clock as the driver does (clamped at 2 s): the timer is due at 2.5 s.
    assert_eq!(set.reap(), None);
    assert_eq!(set.get(h).unwrap(), value(500, 0));
    clock.set(2_499 * MS);
    assert!(!set.wait(Some(ms(50))));
    clock.set(2_500 * MS);
    assert!(set.wait(Some(PATIENCE)));
    assert_eq!(set.reap(), Some((h, 1)));
}

#[test]
fn dropping_the_set_waits_for_its_callback_running_on_the_driver() {
    // "No callback runs after the drop returns": a drop on another thread while the callback
    // runs on the driver waits for it to finish.
    let (clock, _rt, set) = setup();
    let state = Arc::new(AtomicUsize::new(0));
    let (tx, rx) = mpsc::channel();
    {
        let (state, tx) = (Arc::clone(&state), Mutex::new(tx));
        set.set_callback(move || {
            state.store(1, Ordering::SeqCst);
            let _ = tx.lock().unwrap().send(());
            std::thread::sleep(ms(100));
            state.store(2, Ordering::SeqCst);
        });
    }
    set.create(ms(1), Duration::ZERO, 1).unwrap();
    clock.advance(MS);
    rx.recv_timeout(PATIENCE).unwrap();
    drop(set);
    assert_eq!(
        state.load(Ordering::SeqCst),
        2,
        "the drop returned mid-callback"
    );
}

/// A set's timers are relative: on a runtime given a (simulated) wall clock they count elapsed
/// time, and setting the wall clock forward or back moves none of them.
#[test]
fn on_a_wall_clock_runtime_a_set_ignores_sets_of_the_wall_clock() {
    let clock = ManualClock::on_base(callwheel_rt::ClockId::Realtime, 1_000 * MS);
    let rt = runtime(&clock);
    let set = TimerSet::new(&rt).unwrap();
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    set.set_callback(move || {
        let _ = tx.lock().unwrap().send(());
    });
    let h = set.create(ms(10), Duration::ZERO, 1).unwrap();
    clock.set(5_000 * MS);
    // The runtime's own timer (which wakes the set) must not fire for a wall-clock move.
    assert!(
        rx.recv_timeout(Duration::from_millis(50)).is_err(),
        "woken by the set forward"
    );
    assert_eq!(set.get(h).unwrap().remaining, ms(10), "not moved forward");
    clock.set(10 * MS);
    assert_eq!(set.get(h).unwrap().remaining, ms(10), "not moved back");
    clock.advance(10 * MS);
    // Only the runtime's timer can tell the set now: no call of the set catches up here.
    assert_eq!(
        rx.recv_timeout(PATIENCE),
        Ok(()),
        "woken after 10 ms of elapsed time"
    );
    assert_eq!(set.reap().map(|(h2, _)| h2), Some(h));
    assert_eq!(
        rt.stats()[0].fired,
        1,
        "the runtime's timer fired once, at 10 ms"
    );
}
