//! The driver's plan and wake decisions, without threads.

use super::*;
use callwheel_rt::ManualClock;

fn state(late: u64, windows: &[(u64, u64)]) -> State {
    let lead = Lead::ZERO.after(late, Margin::Lean);
    let mut wheel = Wheel::new();
    for &(deadline, end) in windows {
        wheel
            .start_with(deadline, end - deadline, Waker::noop().clone())
            .unwrap();
    }
    State {
        wheel,
        plan: Plan::Awake,
        lead,
    }
}

#[test]
fn a_simulated_clock_never_trains_the_lead() {
    let clocks: [(Arc<dyn Clock>, u64); 2] = [
        (Arc::new(ManualClock::new(0)), 0),
        // A real clock's lead follows a late delivery with an eighth more.
        (Arc::new(SystemClock::new(ClockId::Boottime)), 562_500),
    ];
    for (clock, expected) in clocks {
        let inner = Inner::new(clock, false, 1, Tolerance::EXACT).unwrap();
        assert_eq!(
            inner.turn(0, &mut Vec::new(), Some(500_000)),
            (Next::Sleep(None), None)
        );
        assert_eq!(inner.shards[0].lock().lead.ns(), expected);
    }
}

#[test]
fn a_registration_wakes_the_thread_only_when_its_own_aim_comes_first() {
    // One delivery 27 ns late: a lead of 27 + 27 / 8 = 30.
    let mut st = state(27, &[]);
    assert_eq!(st.lead.ns(), 30);
    st.plan = Plan::Asleep(Some(1_170));
    // Aim max(1_150 - 30, 1_000) = 1_120 < 1_170: wake.
    assert!(st.plan.wake_for(st.lead, 1_000, 1_150));
    assert_eq!(st.plan, Plan::Awake);
    // Awake: nothing to wake.
    assert!(!st.plan.wake_for(st.lead, 0, 0));
    st.plan = Plan::Asleep(Some(1_170));
    // Aim max(1_190 - 30, 1_000) = 1_160 < 1_170: wake; 1_210 - 30 = 1_180: not.
    assert!(st.plan.wake_for(st.lead, 1_000, 1_190));
    st.plan = Plan::Asleep(Some(1_170));
    assert!(!st.plan.wake_for(st.lead, 1_000, 1_210));
    assert_eq!(st.plan, Plan::Asleep(Some(1_170)));
    st.plan = Plan::Asleep(None);
    assert!(st.plan.wake_for(st.lead, u64::MAX, u64::MAX));
}

// On the real clock, through a driver thread: a long exact sleep wakes the thread twice (the
// warm-up, then the deadline, unless a late warm-up already reached it), a tolerant one whose
// window the lead serves once, and a simulated clock never warms up.
#[test]
#[cfg_attr(miri, ignore)]
fn only_a_long_exact_sleep_on_a_real_clock_is_warmed_up() {
    let long = Duration::from_millis(50);
    let exact = Driver::builder().shards(1).build().unwrap();
    let start = std::time::Instant::now();
    futures::executor::block_on(exact.sleep(long));
    assert!(start.elapsed() >= long);
    let s = exact.stats();
    assert_eq!(s.warm_ups, 1, "{s:?}");
    // The deadline's own wake-up follows unless the warm-up came after the deadline and fired
    // the sleep itself (usual after a long idle); the loop's tests check the second wait.
    assert!(s.wakeups <= 1 && s.fired == 1, "{s:?}");

    let tolerant = Driver::builder().shards(1).build().unwrap();
    futures::executor::block_on(tolerant.sleep(long).tolerance(Duration::from_millis(10)));
    let s = tolerant.stats();
    assert_eq!((s.warm_ups, s.wakeups), (0, 1), "{s:?}");

    let inner = Inner::new(Arc::new(ManualClock::new(0)), false, 1, Tolerance::EXACT).unwrap();
    inner.register(50_000_000, 0, Waker::noop()).unwrap();
    assert_eq!(
        inner.turn(0, &mut Vec::new(), None),
        (Next::Sleep(Some(50_000_000)), None)
    );
}

// A deadline at the end of the clock's range plans no wake-up (the driver sleeps until woken,
// so a simulated clock never jumps there), yet the plan keeps it: another such registration
// does not wake the driver, and an earlier one does.
#[test]
fn the_end_of_time_plans_no_wake_up_and_wakes_no_driver() {
    let inner = Inner::new(Arc::new(ManualClock::new(0)), false, 1, Tolerance::EXACT).unwrap();
    inner.register(u64::MAX, 0, Waker::noop()).unwrap();
    assert_eq!(
        inner.turn(0, &mut Vec::new(), None),
        (Next::Sleep(None), None)
    );
    let mut st = inner.shards[0].lock();
    assert_eq!(st.plan, Plan::Asleep(Some(u64::MAX)));
    let lead = st.lead;
    assert!(!st.plan.wake_for(lead, u64::MAX, u64::MAX));
    assert!(st.plan.wake_for(lead, 1_000, 1_000));
}
