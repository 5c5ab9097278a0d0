//! Loom models of a sleep racing its driver's thread: registration, firing, cancellation by
//! drop, a re-poll that brings a new waker, a reset, and shutdown. Each runs the crate's own
//! code (the shard lock and flags come from `loom` under `--cfg callwheel_loom`) over every
//! interleaving loom explores, on a clock the model sets by hand.
//!
//! What they check: a wake-up is never lost (the last waker a pending poll stored is woken
//! once the deadline has passed, and a registration the driver did not see when it planned
//! its sleep wakes it), never doubled (one firing, at most one wake), and never leaked (when
//! the models end, no clone of a waker is left in the wheel).
//!
//! Run with `RUSTFLAGS="--cfg callwheel_loom" cargo test -p callwheel-async --lib --release loom`.

use std::fmt;
use std::io;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use callwheel_rt::drive_loop::Next;
use callwheel_rt::{Clock, Tolerance, Waiter};
use loom::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::driver::{Inner, Link};
use crate::sleep::Sleep;

/// The model's clock: a reading the model sets; its waiters only count `wake` calls.
struct ModelClock {
    now: Arc<AtomicU64>,
    wakes: Arc<AtomicUsize>,
}

impl fmt::Debug for ModelClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ModelClock")
    }
}

impl Clock for ModelClock {
    fn now(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }

    fn waiter(&self) -> io::Result<Box<dyn Waiter>> {
        Ok(Box::new(ModelWaiter {
            wakes: Arc::clone(&self.wakes),
        }))
    }
}

/// A waiter whose `wake` calls are counted (the models never sleep: they call
/// [`Inner::turn`] themselves and read the plan it returns).
struct ModelWaiter {
    wakes: Arc<AtomicUsize>,
}

impl fmt::Debug for ModelWaiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ModelWaiter")
    }
}

impl Waiter for ModelWaiter {
    fn wait(&self, _until: Option<u64>) -> io::Result<callwheel_rt::Wake> {
        Err(io::Error::other("the models never sleep"))
    }

    fn wake(&self) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
    }
}

/// A task's waker: counts its wakes.
struct Flag {
    woken: AtomicUsize,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.woken.fetch_add(1, Ordering::SeqCst);
    }
}

impl Flag {
    fn new() -> (Arc<Flag>, Waker) {
        let flag = Arc::new(Flag {
            woken: AtomicUsize::new(0),
        });
        let waker = Waker::from(Arc::clone(&flag));
        (flag, waker)
    }

    fn woken(&self) -> usize {
        self.woken.load(Ordering::SeqCst)
    }
}

/// A one-shard driver on a model clock reading 0, with the clock's reading and the count of
/// the shard thread's early wake-ups.
fn driver() -> (Arc<Inner>, Arc<AtomicU64>, Arc<AtomicUsize>) {
    let now = Arc::new(AtomicU64::new(0));
    let wakes = Arc::new(AtomicUsize::new(0));
    let clock = ModelClock {
        now: Arc::clone(&now),
        wakes: Arc::clone(&wakes),
    };
    let inner = Inner::new(Arc::new(clock), false, 1, Tolerance::EXACT).expect("model driver");
    (Arc::new(inner), now, wakes)
}

fn sleep_on(inner: &Arc<Inner>, ns: u64) -> Sleep {
    Sleep::after(Some(Link::Own(Arc::clone(inner))), Duration::from_nanos(ns))
}

fn poll(sleep: &mut Sleep, waker: &Waker) -> Poll<()> {
    sleep.poll_sleep(&mut Context::from_waker(waker))
}

/// The shard thread's look at its wheel, on another thread: what it does next, a sleep until
/// the first instant it wakes (its warm-up's, if it plans one).
fn turn_on_thread(inner: &Arc<Inner>) -> loom::thread::JoinHandle<Next> {
    let inner = Arc::clone(inner);
    loom::thread::spawn(move || match inner.turn(0, &mut Vec::new(), None) {
        (Next::Sleep(_), Some(warm)) => Next::Sleep(Some(warm)),
        (next, _) => next,
    })
}

/// A sleep at 10 registered with task `a`'s waker, the clock (`now`) at 10, and a driver turn firing
/// it on another thread: the start every race with the firing shares.
struct Firing {
    inner: Arc<Inner>,
    now: Arc<AtomicU64>,
    a: Arc<Flag>,
    wa: Waker,
    sleep: Sleep,
    t: loom::thread::JoinHandle<Next>,
}

fn registered_and_firing() -> Firing {
    let (inner, now, _) = driver();
    let (a, wa) = Flag::new();
    let mut sleep = sleep_on(&inner, 10);
    assert!(poll(&mut sleep, &wa).is_pending());
    now.store(10, Ordering::SeqCst);
    let t = turn_on_thread(&inner);
    Firing {
        inner,
        now,
        a,
        wa,
        sleep,
        t,
    }
}

/// A registered sleep moves to another task (its next poll brings a new waker) while the
/// driver fires it: whichever waker the sleep held when it fired is woken, once; a re-poll
/// that stored the new waker is answered by a wake of that waker, not the old one.
#[test]
fn loom_repoll_with_a_new_waker_races_the_firing() {
    loom::model(|| {
        let Firing {
            inner,
            a,
            wa,
            mut sleep,
            t,
            ..
        } = registered_and_firing();
        let (b, wb) = Flag::new();
        let second = poll(&mut sleep, &wb);
        t.join().unwrap();
        assert_eq!(a.woken() + b.woken(), 1, "one firing, one wake");
        if second.is_pending() {
            assert_eq!(b.woken(), 1, "the waker stored last is the one woken");
        } else {
            assert_eq!(
                a.woken(),
                1,
                "fired before the re-poll: the first waker was woken"
            );
        }
        assert!(poll(&mut sleep, &wb).is_ready());
        assert_eq!(inner.counts().0, 0);
        drop((sleep, wa, wb));
        assert_eq!(Arc::strong_count(&a), 1, "no clone of a waker left behind");
        assert_eq!(Arc::strong_count(&b), 1, "no clone of a waker left behind");
    });
}

/// A re-poll by the same task races the firing, with no lock taken when it finds the shard's
/// firing count unchanged: one firing, one wake of that task, a sleep that completes when
/// polled after it, and no waker left behind, whichever of the two came first.
#[test]
fn loom_repoll_with_the_same_waker_races_the_firing() {
    loom::model(|| {
        let Firing {
            inner,
            a,
            wa,
            mut sleep,
            t,
            ..
        } = registered_and_firing();
        let second = poll(&mut sleep, &wa);
        t.join().unwrap();
        assert_eq!(a.woken(), 1, "one firing, one wake");
        if second.is_pending() {
            assert!(poll(&mut sleep, &wa).is_ready(), "woken, it completes");
        }
        assert_eq!(inner.counts().0, 0);
        drop((sleep, wa));
        assert_eq!(Arc::strong_count(&a), 1, "no clone of a waker left behind");
    });
}

/// A registered sleep is dropped while the driver fires it: the timer is gone either way,
/// woken at most once, and no clone of its waker stays in the wheel.
#[test]
fn loom_drop_races_the_firing() {
    loom::model(|| {
        let Firing {
            inner,
            a,
            wa,
            sleep,
            t,
            ..
        } = registered_and_firing();
        drop(sleep);
        t.join().unwrap();
        assert!(a.woken() <= 1);
        assert_eq!(inner.counts().0, 0);
        drop(wa);
        assert_eq!(
            Arc::strong_count(&a),
            1,
            "no clone of the waker left behind"
        );
    });
}

/// A sleep is reset to a later deadline while the driver fires its first one, then polled
/// again: it is pending on the new deadline whichever came first, and when the clock reaches
/// that deadline it is woken and completes.
#[test]
fn loom_reset_races_the_firing() {
    loom::model(|| {
        let Firing {
            inner,
            now,
            a,
            wa,
            mut sleep,
            t,
        } = registered_and_firing();
        sleep.reset_ns(20);
        assert!(
            poll(&mut sleep, &wa).is_pending(),
            "pending on the new deadline"
        );
        t.join().unwrap();
        let before = a.woken();
        assert!(before <= 1, "the old deadline fires at most once");
        now.store(20, Ordering::SeqCst);
        inner.turn(0, &mut Vec::new(), None);
        assert_eq!(a.woken(), before + 1, "the new deadline wakes the task");
        assert!(poll(&mut sleep, &wa).is_ready());
        assert_eq!(inner.counts().0, 0);
    });
}

/// A registration races the driver thread's decision to sleep (with an earlier timer at 100
/// already registered): when the plan the thread returns would sleep past the new deadline,
/// the registration must have woken it.
#[test]
fn loom_registration_races_the_driver_going_to_sleep() {
    loom::model(|| {
        let (inner, _, wakes) = driver();
        let (_far_flag, far_waker) = Flag::new();
        let mut far = sleep_on(&inner, 100);
        assert!(poll(&mut far, &far_waker).is_pending());
        register_racing_a_turn(&inner, sleep_on(&inner, 10), 10, 0, &wakes);
    });
}

/// Registers `near` (whose aim is `aim`) while another thread takes a turn of the driver, and
/// checks the turn's plan: asleep no later than `aim`, or woken since the count was `before`.
fn register_racing_a_turn(
    inner: &Arc<Inner>,
    mut near: Sleep,
    aim: u64,
    before: usize,
    wakes: &AtomicUsize,
) {
    let (_a, wa) = Flag::new();
    let t = turn_on_thread(inner);
    assert!(poll(&mut near, &wa).is_pending());
    match t.join().unwrap() {
        Next::Sleep(Some(until)) if until <= aim => {}
        Next::Sleep(planned) => assert!(
            wakes.load(Ordering::SeqCst) > before,
            "the driver planned {planned:?} and was not woken for {aim}"
        ),
        other => panic!("an idle driver returned {other:?}"),
    }
}

/// The same race with a lead: the thread aims a tolerant far timer (window [100, 200]) 30
/// before its end, at 170, while a timer with window [150, 180] registers, whose own aim (150)
/// comes first: the plan the thread returns must not pass 150 unless the registration woke it.
#[test]
fn loom_registration_races_a_driver_aiming_early() {
    loom::model(|| {
        let (inner, _, wakes) = driver();
        let (_far_flag, far_waker) = Flag::new();
        let mut far = sleep_on(&inner, 100).tolerance(Duration::from_nanos(100));
        assert!(poll(&mut far, &far_waker).is_pending());
        // A delivery 27 late trains a lead of 30 (27 and an eighth); the thread now plans 170.
        assert_eq!(
            inner.turn(0, &mut Vec::new(), Some(27)),
            (Next::Sleep(Some(170)), None)
        );
        let before = wakes.load(Ordering::SeqCst);
        let near = sleep_on(&inner, 150).tolerance(Duration::from_nanos(30));
        register_racing_a_turn(&inner, near, 150, before, &wakes);
    });
}

/// A registration races the driver's shutdown: the sleep either completes at its poll or is
/// woken by the shutting-down thread; nothing waits for a driver that is gone.
#[test]
fn loom_registration_races_shutdown() {
    loom::model(|| {
        let (inner, _, _) = driver();
        let (a, wa) = Flag::new();
        let mut sleep = sleep_on(&inner, 10);
        let d = Arc::clone(&inner);
        let t = loom::thread::spawn(move || {
            d.shut_down();
            d.turn(0, &mut Vec::new(), None).0
        });
        let first = poll(&mut sleep, &wa);
        assert_eq!(t.join().unwrap(), Next::Exit);
        if first.is_pending() {
            assert_eq!(a.woken(), 1, "registered before the shutdown: woken by it");
        }
        assert!(poll(&mut sleep, &wa).is_ready());
    });
}

/// A driver with no thread (a reactor's) sets its alarm for its plan while a registration asks
/// for an earlier look (`ReactorAlarm`'s mark): the early look is never lost. Either the driver
/// sees the mark and turns its wheel again, or the registration's setting (a time already
/// passed) is the one that stands.
#[test]
fn loom_a_reactor_drivers_plan_never_overwrites_an_early_wake_up() {
    use crate::reactor::{Armed, ReactorAlarm, SetAlarm};

    /// The alarm's last setting (0 for disarmed). A timerfd's settings are made under the
    /// timer's lock in the kernel, so they are totally ordered and each one sees what was
    /// written before the one it replaces: a read-modify-write (acquire and release), not a
    /// plain store, models that.
    #[derive(Default)]
    struct ModelAlarm(AtomicU64);

    impl SetAlarm for ModelAlarm {
        fn set(&self, at: Option<u64>) -> io::Result<()> {
            self.0.swap(at.unwrap_or(0), Ordering::AcqRel);
            Ok(())
        }
    }

    // Twice: from a new alarm, and when the driver's plan is the setting it made last, which
    // it does not make again: the registration's early setting, or its mark, still reaches it.
    for made_before in [false, true] {
        loom::model(move || {
            let alarm = Arc::new(ReactorAlarm::with(ModelAlarm::default()));
            if made_before {
                assert_eq!(alarm.arm(Some(100)), Armed::Wait);
            }
            let registrar = {
                let alarm = Arc::clone(&alarm);
                loom::thread::spawn(move || alarm.wake_now())
            };
            let armed = alarm.arm(Some(100));
            registrar.join().unwrap();
            let last = alarm.alarm.0.load(Ordering::SeqCst);
            assert!(
                armed == Armed::Look || last == 1,
                "the driver waits for its plan ({last}) and missed the early wake-up"
            );
        });
    }
}

/// Two threads ask a reactor driver to turn its wheel at once (the reactor's thread for its
/// alarm, a registering thread looking here), each after registering: one of them turns, and
/// a turn begins after both registrations, so neither is left unseen. The preemptions are
/// bounded: without a bound loom follows the two threads taking the turning from each other
/// for ever, a schedule that needs a preemption at every round.
#[test]
fn loom_a_look_asked_while_another_thread_turns_is_not_lost() {
    use crate::reactor::OneTurner;

    struct Shared {
        turner: OneTurner,
        registered: AtomicUsize,
        seen: AtomicUsize,
    }

    fn ask(shared: &Shared) {
        shared.registered.fetch_add(1, Ordering::SeqCst);
        shared.turner.run(|| {
            let now = shared.registered.load(Ordering::SeqCst);
            shared.seen.store(now, Ordering::SeqCst);
            true
        });
    }

    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(3);
    model.check(|| {
        let shared = Arc::new(Shared {
            turner: OneTurner::default(),
            registered: AtomicUsize::new(0),
            seen: AtomicUsize::new(0),
        });
        let other = {
            let shared = Arc::clone(&shared);
            loom::thread::spawn(move || ask(&shared))
        };
        ask(&shared);
        other.join().unwrap();
        let seen = shared.seen.load(Ordering::SeqCst);
        assert_eq!(seen, 2, "the last turn missed a registration");
    });
}
