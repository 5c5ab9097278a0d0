//! Clock bases, step by step on a manual clock: timers on the monotonic, realtime and boottime
//! bases share a shard, the next wake-up is the earliest over the bases, setting a base moves
//! only the absolute deadlines on it, and the shard's list of such timers follows every
//! arming, stop, move and firing.

use std::sync::Arc;

use callwheel::Missed;

use crate::clock::{Clock, ClockId};
use crate::shared::Shared;
use crate::step_tests::{at, logging_timer, ns, shared, tags, Log};
use crate::sync::{self, Ordering};
use crate::test_clock::Fixed;
use crate::timer_core::UNLISTED;
use crate::{Deadline, Error, ManualClock, Tolerance};

const WALL: u64 = 1_700_000_000_000_000_000;

fn listed(s: &Shared, shard: usize) -> usize {
    let st = sync::lock(&s.shards[shard].state);
    for (i, core) in st.based.iter().enumerate() {
        assert_eq!(
            core.based_at.load(Ordering::Relaxed),
            i,
            "a listed timer knows its place"
        );
    }
    st.based.len()
}

#[test]
fn timers_on_three_bases_share_a_shard_and_fire_by_their_own_clocks() {
    let clock = ManualClock::new(1_000);
    clock.set_base(ClockId::Realtime, WALL);
    clock.set_base(ClockId::Boottime, 2_000);
    let s = shared(&clock, 1, 64);
    let log = Log::default();
    let mono = logging_timer(&s, 0, 1, &log);
    let wall = logging_timer(&s, 0, 2, &log);
    let boot = logging_timer(&s, 0, 3, &log);
    mono.start_at(Deadline::on(ClockId::Monotonic, 1_300))
        .unwrap();
    wall.start_at(Deadline::on(ClockId::Realtime, WALL + 200))
        .unwrap();
    boot.start_at(Deadline::on(ClockId::Boottime, 2_250))
        .unwrap();
    assert_eq!(listed(&s, 0), 2, "the realtime and boottime timers");
    // The next event is the earliest over the bases, on the runtime's clock.
    assert_eq!(s.step(0).sleep, Some(Some(1_200)));
    clock.advance(200);
    assert_eq!(s.step(0).fired, 1);
    assert_eq!(s.step(0).sleep, Some(Some(1_250)));
    clock.advance(50);
    assert_eq!(s.step(0).fired, 1);
    clock.advance(50);
    assert_eq!(s.step(0).fired, 1);
    assert_eq!(tags(&log), [2, 3, 1]);
    assert_eq!(listed(&s, 0), 0, "fired one-shot timers leave the list");
}

#[test]
fn setting_the_wall_clock_moves_absolute_wall_deadlines_and_nothing_else() {
    let clock = ManualClock::new(1_000);
    clock.set_base(ClockId::Realtime, WALL);
    let s = shared(&clock, 1, 64);
    let log = Log::default();
    let relative = logging_timer(&s, 0, 1, &log);
    let absolute = logging_timer(&s, 0, 2, &log);
    relative.start_at(at(1_500)).unwrap();
    absolute
        .start_at(Deadline::on(ClockId::Realtime, WALL + 500))
        .unwrap();
    assert_eq!(s.step(0).sleep, Some(Some(1_500)));
    // Forward past the wall deadline: it fires at once; the relative timer stays.
    clock.set_base(ClockId::Realtime, WALL + 10_000);
    assert_eq!(s.step(0).fired, 1);
    assert_eq!(tags(&log), [2]);
    assert!(relative.is_pending());
    // Back: a new wall deadline 500 ns ahead of the old wall time is now 10,500 ns away.
    absolute
        .start_at(Deadline::on(ClockId::Realtime, WALL + 10_500))
        .unwrap();
    clock.set_base(ClockId::Realtime, WALL);
    assert_eq!(s.step(0).sleep, Some(Some(1_500)));
    clock.advance(500);
    assert_eq!(s.step(0).fired, 1);
    assert_eq!(tags(&log), [2, 1], "the relative timer fired on time");
    assert_eq!(s.step(0).sleep, Some(Some(11_500)));
    clock.advance(9_999);
    assert_eq!(s.step(0).fired, 0);
    clock.advance(1);
    assert_eq!(s.step(0).fired, 1);
    assert_eq!(tags(&log), [2, 1, 2]);
}

#[test]
fn setting_the_runtime_clock_itself_moves_the_timers_on_other_bases_against_it() {
    // The runtime clock is set (forward by 10,000); the wall clock is not: a wall deadline
    // 500 ns ahead is still 500 ns ahead.
    let clock = ManualClock::new(1_000);
    clock.set_base(ClockId::Realtime, WALL);
    let s = shared(&clock, 1, 64);
    let log = Log::default();
    let wall = logging_timer(&s, 0, 1, &log);
    wall.start_at(Deadline::on(ClockId::Realtime, WALL + 500))
        .unwrap();
    assert_eq!(s.step(0).sleep, Some(Some(1_500)));
    clock.set(11_000);
    assert_eq!(clock.base_now(ClockId::Realtime), Some(WALL));
    assert_eq!(s.step(0).sleep, Some(Some(11_500)));
    clock.advance(500);
    assert_eq!(s.step(0).fired, 1);
}

#[test]
fn a_periodic_wall_timer_keeps_its_wall_deadlines_across_a_set() {
    let clock = ManualClock::new(1_000);
    clock.set_base(ClockId::Realtime, WALL);
    let s = shared(&clock, 1, 64);
    let log = Log::default();
    let t = logging_timer(&s, 0, 1, &log);
    t.start_periodic_with(
        Deadline::on(ClockId::Realtime, WALL + 100),
        ns(100),
        ns(0),
        Missed::Skip,
        None,
    )
    .unwrap();
    clock.advance(100);
    assert_eq!(s.step(0).fired, 1);
    assert_eq!(s.step(0).sleep, Some(Some(1_200)));
    // The wall clock (at WALL + 100) goes back 1,000: its next deadline, WALL + 200, is
    // 1,100 away.
    clock.set_base(ClockId::Realtime, WALL - 900);
    assert_eq!(s.step(0).sleep, Some(Some(2_200)));
    clock.advance(1_100);
    assert_eq!(s.step(0).fired, 1);
    // Its firing speaks of the wall clock it was armed on.
    let fires = log.lock().unwrap().clone();
    assert_eq!(
        (fires[1].1.deadline, fires[1].1.now),
        (WALL + 200, WALL + 200)
    );
    assert_eq!(s.step(0).sleep, Some(Some(2_300)));
    assert_eq!(listed(&s, 0), 1, "a periodic timer stays listed");
}

#[test]
fn the_list_follows_stops_moves_rearms_and_shutdown() {
    let clock = ManualClock::new(1_000);
    let s = shared(&clock, 2, 64);
    let log = Log::default();
    let timers: Vec<_> = (0..3).map(|i| logging_timer(&s, 0, i, &log)).collect();
    for t in &timers {
        t.start_at(Deadline::on(ClockId::Realtime, 5_000)).unwrap();
    }
    assert_eq!(listed(&s, 0), 3);
    timers[0].stop();
    assert_eq!(listed(&s, 0), 2);
    assert_eq!(timers[0].core.based_at.load(Ordering::Relaxed), UNLISTED);
    timers[1].move_to(1).unwrap();
    assert_eq!((listed(&s, 0), listed(&s, 1)), (1, 1));
    // Re-armed on the runtime's own clock: off the list.
    timers[2].start_at(at(2_000)).unwrap();
    assert_eq!(listed(&s, 0), 0);
    // Re-armed on another base across shards: onto the new shard's list only.
    timers[2]
        .start_with(Deadline::on(ClockId::Boottime, 9_000), ns(0), Some(1))
        .unwrap();
    assert_eq!((listed(&s, 0), listed(&s, 1)), (0, 2));
    // Moving an armed own-clock timer leaves the lists alone.
    timers[0].start_at(at(3_000)).unwrap();
    timers[0].move_to(1).unwrap();
    assert_eq!((listed(&s, 0), listed(&s, 1)), (0, 2));
}

#[test]
fn a_clock_without_bases_refuses_another_base_and_takes_its_own() {
    let s = Shared::new(Arc::new(Fixed(100)), 1, 64, Tolerance::EXACT, None).unwrap();
    let log = Log::default();
    let t = logging_timer(&s, 0, 1, &log);
    assert!(matches!(
        t.start_at(Deadline::on(ClockId::Realtime, 500)),
        Err(Error::NoClockBase(ClockId::Realtime))
    ));
    assert!(!t.is_pending(), "a refused arming changes nothing");
    // A deadline on the runtime clock's own base is one of its readings.
    let clock = ManualClock::new(1_000);
    let s = shared(&clock, 1, 64);
    let t = logging_timer(&s, 0, 1, &log);
    t.start_at(Deadline::on(ClockId::Monotonic, 1_005)).unwrap();
    assert_eq!(listed(&s, 0), 0);
    assert_eq!(s.step(0).sleep, Some(Some(1_005)));
}

#[test]
fn on_a_wall_clock_runtime_relative_timers_run_on_the_monotonic_clock() {
    // The shards run on the wall clock's monotonic base (reading WALL too, at first): the
    // runtime clock's own readings are wall deadlines, on the realtime base.
    let clock = ManualClock::on_base(ClockId::Realtime, WALL);
    let s = shared(&clock, 1, 64);
    assert_eq!(s.clock.base(), Some(ClockId::Monotonic));
    let log = Log::default();
    let relative = logging_timer(&s, 0, 1, &log);
    let absolute = logging_timer(&s, 0, 2, &log);
    relative.start_after(ns(500)).unwrap();
    absolute.start_at(at(WALL + 500)).unwrap();
    assert_eq!(
        listed(&s, 0),
        1,
        "the wall deadline is on the realtime base"
    );
    assert_eq!(s.step(0).sleep, Some(Some(WALL + 500)));
    // The wall clock jumps 10,000 ahead: the wall deadline has passed, the relative one is
    // still 500 of elapsed time away.
    clock.set(WALL + 10_000);
    assert_eq!(s.step(0).fired, 1);
    assert_eq!(tags(&log), [2]);
    assert_eq!(s.step(0).sleep, Some(Some(WALL + 500)));
    // Now back 20,000: a wall deadline 500 ahead of the wall clock waits 500; the relative
    // timer fires on time, unmoved.
    absolute.start_at(at(WALL + 10_500)).unwrap();
    clock.set(WALL - 10_000);
    assert_eq!(s.step(0).sleep, Some(Some(WALL + 500)));
    clock.advance(500);
    assert_eq!(s.step(0).fired, 1);
    assert_eq!(tags(&log), [2, 1]);
    assert_eq!(s.step(0).sleep, Some(Some(WALL + 20_500)));
    clock.advance(20_000);
    assert_eq!(s.step(0).fired, 1);
    assert_eq!(tags(&log), [2, 1, 2]);
}
