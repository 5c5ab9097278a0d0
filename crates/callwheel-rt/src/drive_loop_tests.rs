//! The loop's bookkeeping on a scripted driver: what each turn is told of the last planned
//! wake-up, what it counts, and how each form of the loop ends.

use std::collections::VecDeque;
use std::io;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

use super::*;
use crate::ManualClock;

/// A driver whose turns answer from a script, moving a manual clock as they go, and which
/// records what it is told.
struct Scripted {
    clock: ManualClock,
    /// Per turn: the clock's reading when the turn ends, and what it answers.
    turns: VecDeque<(u64, Next)>,
    lates: Vec<Option<u64>>,
    events: Vec<Event>,
    /// A warm-up this long before any sleep at least 1,000 away, if any.
    warm: Option<u64>,
}

impl Scripted {
    fn new(turns: &[(u64, Next)]) -> Scripted {
        Scripted {
            clock: ManualClock::new(0),
            turns: turns.iter().copied().collect(),
            lates: Vec::new(),
            events: Vec::new(),
            warm: None,
        }
    }
}

impl Turn for Scripted {
    fn turn(&mut self, late: Option<u64>) -> Next {
        self.lates.push(late);
        let (at, next) = self.turns.pop_front().unwrap_or((0, Next::Exit));
        self.clock.set(at.max(self.clock.now()));
        next
    }

    fn clock(&self) -> &dyn Clock {
        &self.clock
    }

    fn stopping(&self) -> bool {
        false
    }

    fn count(&mut self, event: Event) {
        self.events.push(event);
    }

    fn warm_up(&mut self, until: u64) -> Option<u64> {
        let warm = self.warm?;
        (until.saturating_sub(self.clock.now()) >= 1_000).then(|| until - warm)
    }
}

/// A waiter whose waits end as a script says, and which records what each was until.
#[derive(Debug)]
struct ScriptedWaiter(Mutex<VecDeque<io::Result<Wake>>>, Mutex<Vec<Option<u64>>>);

impl ScriptedWaiter {
    fn new(waits: Vec<io::Result<Wake>>) -> ScriptedWaiter {
        ScriptedWaiter(Mutex::new(waits.into()), Mutex::new(Vec::new()))
    }
}

impl Waiter for ScriptedWaiter {
    fn wait(&self, until: Option<u64>) -> io::Result<Wake> {
        self.1.lock().unwrap().push(until);
        self.0
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or(Ok(Wake::Early))
    }
    fn wake(&self) {}
    fn woken(&self) -> bool {
        false
    }
}

#[test]
fn the_turn_after_a_planned_wake_up_is_told_how_late_the_one_it_served_delivered() {
    // Asleep until 100; woken there; the turn that serves it ends at 130 and fires; the next
    // turn learns 30. An early wake-up, or one for a clock set, teaches nothing.
    let mut d = Scripted::new(&[
        (0, Next::Sleep(Some(100))),
        (130, Next::Again),
        (130, Next::Sleep(Some(200))),
        (250, Next::Sleep(Some(300))),
        (350, Next::Sleep(Some(400))),
        (350, Next::Exit),
    ]);
    let mut l = DriveLoop::new();
    assert_eq!(l.turn(&mut d), Next::Sleep(Some(100)));
    l.woke(&mut d, Some(100), Waited::Planned);
    assert_eq!(l.turn(&mut d), Next::Again);
    assert_eq!(l.turn(&mut d), Next::Sleep(Some(200)));
    l.woke(&mut d, Some(200), Waited::Early);
    assert_eq!(l.turn(&mut d), Next::Sleep(Some(300)));
    l.woke(&mut d, Some(300), Waited::ClockSet);
    assert_eq!(l.turn(&mut d), Next::Sleep(Some(400)));
    assert_eq!(l.turn(&mut d), Next::Exit);
    assert_eq!(d.lates, [None, None, Some(30), None, None, None]);
    assert_eq!(
        d.events,
        [
            Event::Waited(Waited::Planned),
            Event::Waited(Waited::Early),
            Event::Waited(Waited::ClockSet)
        ]
    );
}

#[test]
fn a_thread_turns_until_the_driver_exits_and_counts_every_wait() {
    let mut d = Scripted::new(&[
        (0, Next::Sleep(Some(100))),
        (110, Next::Sleep(Some(300))),
        (310, Next::Sleep(None)),
        (310, Next::Again),
        (310, Next::Sleep(Some(400))),
        (450, Next::Sleep(Some(500))),
        (450, Next::Exit),
    ]);
    let waiter = ScriptedWaiter::new(vec![
        Ok(Wake::Deadline),
        Ok(Wake::Early),
        Err(io::Error::other("refused")),
        Ok(Wake::ClockSet),
    ]);
    DriveLoop::new().on_thread(&mut d, &waiter, Duration::from_millis(1));
    // The simulated clock takes no spin; the planned wake-up at 100 was served by 110; the
    // early, failed and clock-set wake-ups teach nothing.
    assert_eq!(d.lates, [None, None, Some(10), None, None, None, None]);
    assert_eq!(
        d.events,
        [
            Event::Waited(Waited::Planned),
            Event::Waited(Waited::Early),
            Event::Waited(Waited::Failed),
            Event::Waited(Waited::ClockSet),
            Event::Waited(Waited::Early),
        ]
    );
    assert!(
        d.turns.is_empty(),
        "the loop stopped before the driver exited"
    );
}

/// A wait that answers from a script, and records what each wait was until.
#[derive(Default)]
struct ScriptedWait {
    waits: VecDeque<Waited>,
    asked: Vec<Option<u64>>,
}

impl Wait for ScriptedWait {
    async fn wait(&mut self, until: Option<u64>) -> Waited {
        self.asked.push(until);
        self.waits.pop_front().unwrap_or(Waited::Gone)
    }
}

/// The script both warm-up tests run: a sleep until 10,000 planned from 0 (long: warmed up at
/// 9,800), the turn after the warm-up at 9,850 planning the same deadline (now short), that
/// wake-up served by 10,030, and one more short sleep served by 10,600.
fn warmed_up() -> Scripted {
    let mut d = Scripted::new(&[
        (0, Next::Sleep(Some(10_000))),
        (9_850, Next::Sleep(Some(10_000))),
        (10_030, Next::Sleep(Some(10_500))),
        (10_600, Next::Sleep(None)),
    ]);
    d.warm = Some(200);
    d
}

/// What both warm-up tests expect: the warm-up's wait trains nothing (the turn after the
/// deadline's wake-up learns 30, the deadline's lateness, and nothing learns the warm-up's
/// 50) and is counted as a warm-up, not a planned wake-up.
fn assert_warmed_up(d: &Scripted, asked: &[Option<u64>]) {
    assert_eq!(&asked[..3], [Some(9_800), Some(10_000), Some(10_500)]);
    assert_eq!(&d.lates[..4], [None, None, None, Some(30)]);
    assert_eq!(
        &d.events[..3],
        [
            Event::WarmedUp(Waited::Planned),
            Event::Waited(Waited::Planned),
            Event::Waited(Waited::Planned),
        ]
    );
}

#[test]
fn a_task_warms_up_before_a_long_sleep_and_learns_nothing_from_it() {
    let mut d = warmed_up();
    let mut wait = ScriptedWait {
        waits: [Waited::Planned; 3].into(),
        ..ScriptedWait::default()
    };
    block_on(DriveLoop::new().on_task(&mut d, &mut wait));
    assert_warmed_up(&d, &wait.asked);
}

#[test]
fn a_thread_warms_up_before_a_long_sleep() {
    let mut d = warmed_up();
    let waiter = ScriptedWaiter::new(vec![
        Ok(Wake::Deadline),
        Ok(Wake::Deadline),
        Ok(Wake::Deadline),
    ]);
    DriveLoop::new().on_thread(&mut d, &waiter, Duration::ZERO);
    assert_warmed_up(&d, &waiter.1.lock().unwrap());
}

/// Polls `fut` to completion on this thread (every pending poll has already woken itself).
fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
    }
}

#[test]
fn a_task_yields_between_turns_that_fire_and_ends_when_nothing_can_wake_it() {
    let mut d = Scripted::new(&[
        (0, Next::Again),
        (0, Next::Sleep(Some(50))),
        (60, Next::Sleep(Some(80))),
        (60, Next::Sleep(Some(90))),
    ]);
    let mut wait = ScriptedWait {
        waits: [Waited::Planned, Waited::Early].into(),
        ..ScriptedWait::default()
    };
    block_on(DriveLoop::new().on_task(&mut d, &mut wait));
    // Four turns; the third learns that the wake-up planned for 50 was served by 60; after the
    // fourth the wait is gone and the loop ends without counting it.
    assert_eq!(d.lates, [None, None, None, Some(10)]);
    assert_eq!(
        d.events,
        [Event::Waited(Waited::Planned), Event::Waited(Waited::Early)]
    );
}

#[test]
fn the_default_yield_is_one_pending_poll() {
    let mut y = std::pin::pin!(YieldNow(false));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(y.as_mut().poll(&mut cx).is_pending());
    assert!(y.as_mut().poll(&mut cx).is_ready());
}
