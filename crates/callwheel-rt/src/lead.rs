//! The lead: how long before a tolerant window's end a driver aims its sleep.
//!
//! A driver asked to wake at instant `t` has woken, and fired what was due at `t`, some time
//! later: the kernel's wake-up latency (tens of microseconds on a virtual machine), then the
//! advance and the hand-off of what fired. Aimed at the earliest window end, the timer whose
//! window ends first would therefore fire that long after its window. A driver keeps a running
//! estimate of that delay and aims that much earlier — never before the earliest deadline
//! (nothing would be due), so an exact timer's aim is its deadline. The estimate follows a
//! later delivery at once and forgets it slowly, so that it covers most recent delays rather
//! than their mean, by one of two rules ([`Margin`]): the runtime's drivers add a quarter for
//! the spread of the next delays and forget a thirty-second per planned wake-up (in
//! `callwheel sweep --quick`, 1 to 3 of 1,000 timers at 5 % tolerance fired after their window,
//! against 6 to 13 with the other rule; wake-ups 54–55 against an optimum of 55 with either);
//! the async drivers add an eighth and forget an eighth (in seven `callwheel async --quick`
//! runs, 1.028–1.047× the optimum's wake-ups with 49–172 of 26,270 ticks after their window;
//! in three runs each, following the delay as it is gave 1.028–1.042× and 164–266, forgetting
//! a sixteenth instead 1.041–1.060× and 110–120, both an eighth more and a sixteenth
//! 1.038–1.055× and 46–123). It is capped at [`MAX_LEAD`], and never
//! trained on a simulated clock ([`Clock::simulated`](crate::Clock::simulated)), whose jumps
//! are not wake-up latency.
//!
//! The price: when another timer's deadline falls inside the lead before the earliest window
//! end, the early wake-up fires only the first and the driver wakes again for the other.
//!
//! # The warm-up before a long exact sleep
//!
//! The lead cannot serve an exact timer (nothing would be due before its deadline), and the
//! delay it would absorb grows with the sleep: a CPU idle for 10 ms sits in a deeper state,
//! and on a virtual machine its vCPU may have left the host's CPU. Measured here (tokio's
//! current-thread runtime, timer slack 1 ns, 60 samples): a raw `clock_nanosleep` overshoots
//! by 23–26 µs at 100 µs and 1 ms but 103–112 µs at 10 ms, and a sleep woken through the
//! executor's reactor by 30–40 µs more than that, its cold path (the reactor, the driver's turn,
//! the task's poll) slow after the long idle. So a driver whose sleep until an exact deadline
//! is at least [`WARM_UP_AFTER`] long wakes first [`WARM_UP`] before it ([`Lead::warm_up`]).
//! That wake-up, late by the deep idle's delay, often comes at or after the deadline, and the
//! turn fires the timer then; when it comes sooner, the turn fires nothing and the driver
//! sleeps the rest, a shallow idle with its path warm. With 150 samples per request, the
//! median over the raw sleep's at 2, 5 and 10 ms went from +1.6, +8.8 and +26.7 µs without a
//! warm-up to −0.5, −28.5 and −30.7 µs on tokio's current-thread runtime, and from +9.4,
//! +27.9 and +56.2 µs to +6.8, +5.9 and −5.0 µs on smol with two runners. One more wake-up per
//! such sleep is the price, when the first comes early. A tolerant timer whose window is wider
//! than the lead (the lead serves it) keeps a single wake-up, fewer wake-ups being what it
//! asked for; one narrower than the lead aims at its firing instant, as an exact timer does,
//! and is warmed up the same way.

use callwheel::{Timers, Wheel};

/// The most a driver aims early, ns: a kernel that wakes later than this is not compensated.
pub const MAX_LEAD: u64 = 1_000_000;

/// How long before a long sleep's exact deadline a driver wakes first, ns. Measured against
/// 200 µs (150 samples per request of 2, 5 and 10 ms): on smol the medians were 7, 6 and −5
/// µs over the raw sleep's against 15, 13 and −14 (two runners), −27 to −32 against 11 to 15
/// (one), and on tokio as good or better at 2 and 5 ms (10 ms: −31 against −51). After a
/// second idle of 200 µs this VM wakes about 15 µs slower than after 50.
pub const WARM_UP: u64 = 50_000;

/// The shortest sleep a warm-up splits, ns: after shorter idles the wake-up path was measured
/// within 3 µs of a raw sleep's.
pub const WARM_UP_AFTER: u64 = 1_000_000;

/// What a driver is doing, as seen by a thread that arms a timer: whether the driver must be
/// woken for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Between wake-up and sleep: it will look at the wheel again before sleeping, so a new
    /// timer needs no wake-up.
    Awake,
    /// Asleep (or about to be) until this reading (`None`: until woken). A new timer whose
    /// aim ([`Lead::aim_for`]) comes earlier must wake it.
    Asleep(Option<u64>),
}

impl Plan {
    /// Whether a new timer the driver would aim at `aim` needs the driver woken.
    pub fn must_wake_for(self, aim: u64) -> bool {
        match self {
            Plan::Awake => false,
            Plan::Asleep(None) => true,
            Plan::Asleep(Some(planned)) => aim < planned,
        }
    }

    /// For a new timer with the window `[deadline, end]` on a driver with `lead`: whether the
    /// driver must be woken, in which case the plan becomes [`Plan::Awake`] (one wake-up
    /// serves every registration until the driver plans again).
    pub fn wake_for(&mut self, lead: Lead, deadline: u64, end: u64) -> bool {
        let wake = self.must_wake_for(lead.aim_for(deadline, end));
        if wake {
            *self = Plan::Awake;
        }
        wake
    }
}

/// How a driver's lead follows its deliveries: which of two costs the driver would rather pay,
/// timers late or wake-ups spent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Margin {
    /// Timers inside their windows: follow a late delivery with a quarter more, and forget it
    /// by a thirty-second per planned wake-up (the runtime's drivers).
    Inside,
    /// Fewer wake-ups: follow a late delivery with an eighth more, and forget it by an eighth
    /// per planned wake-up (the async drivers, whose many periodic timers it splits less
    /// often).
    Lean,
}

/// A driver's running estimate of how late its planned wake-ups deliver, in ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lead(u64);

impl Lead {
    /// No lead: aim at the window's end.
    pub const ZERO: Lead = Lead(0);

    /// The estimate, ns.
    pub const fn ns(self) -> u64 {
        self.0
    }

    /// The estimate after a planned wake-up whose firings were delivered `late` ns after the
    /// planned instant, by `rule` (at most [`MAX_LEAD`]).
    #[must_use]
    pub fn after(self, late: u64, rule: Margin) -> Lead {
        let (follow, forget) = match rule {
            Margin::Inside => (late.saturating_add(late / 4), self.0.div_ceil(32)),
            Margin::Lean => (late.saturating_add(late / 8), self.0.div_ceil(8)),
        };
        Lead(follow.min(MAX_LEAD).max(self.0 - forget))
    }

    /// The instant to aim at for one window `[deadline, end]`.
    pub fn aim_for(self, deadline: u64, end: u64) -> u64 {
        end.saturating_sub(self.0).max(deadline).min(end)
    }

    /// The instant a driver at `now` should sleep until for `wheel`: the lead before its
    /// earliest window end, not before the earliest instant it fires a timer
    /// ([`Timers::next_expiry`]: waking earlier fires nothing), and the window end itself when
    /// that aim has already passed (that bound is stale after cancellations).
    /// `None` when nothing is pending.
    pub fn aim<T>(self, wheel: &Wheel<T>, now: u64) -> Option<u64> {
        let end = wheel.next_wakeup()?;
        let earliest = wheel.next_expiry().unwrap_or(end);
        let aim = self.aim_for(earliest, end);
        Some(if aim <= now { end } else { aim })
    }

    /// Where a driver at `now` planning to sleep until `aim` (its [`Lead::aim`] for `wheel`)
    /// wakes first: [`WARM_UP`] before an aim that is the earliest instant the wheel fires a
    /// timer (an exact deadline, which no lead moves) at least [`WARM_UP_AFTER`] away; `None`
    /// for any other sleep. Why: after a long idle a CPU wakes slowly (on this project's VM
    /// about 110 µs after 10 ms against 25 µs after 100 µs) and the path that fires the timer
    /// is cold; a first wake-up shortly before the deadline leaves only a shallow idle before
    /// it. A tolerant timer whose window is wider than the lead keeps one wake-up.
    pub fn warm_up<T>(wheel: &Wheel<T>, aim: u64, now: u64) -> Option<u64> {
        let exact = wheel.next_expiry() == Some(aim);
        (exact && aim.saturating_sub(now) >= WARM_UP_AFTER).then(|| aim - WARM_UP)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wheel(windows: &[(u64, u64)]) -> Wheel<()> {
        let mut w = Wheel::new();
        for &(deadline, end) in windows {
            w.start_with(deadline, end - deadline, ()).unwrap();
        }
        w
    }

    #[test]
    fn the_aim_is_the_lead_before_the_earliest_window_end_but_never_before_a_deadline() {
        assert_eq!(Lead(30).aim(&wheel(&[]), 0), None);
        // Exact timers: the deadline, whatever the lead.
        assert_eq!(Lead(50).aim(&wheel(&[(1_000, 1_000)]), 0), Some(1_000));
        // A window of 200: 30 before its end.
        assert_eq!(Lead(30).aim(&wheel(&[(1_000, 1_200)]), 0), Some(1_170));
        // A lead longer than the window: the instant the wheel fires the timer (1_024, the
        // first multiple of 64 in the window's first eighth), not before.
        assert_eq!(Lead(500).aim(&wheel(&[(1_000, 1_200)]), 0), Some(1_024));
        assert_eq!(Lead(500).aim(&wheel(&[(1_000, 1_007)]), 0), Some(1_000));
        // The earliest end among several, bounded by the earliest deadline.
        let two = wheel(&[(1_000, 1_500), (1_100, 1_150)]);
        assert_eq!(Lead(100).aim(&two, 0), Some(1_050));
        // An aim already passed (a stale bound): the window end itself.
        assert_eq!(Lead(30).aim(&wheel(&[(1_000, 1_200)]), 1_180), Some(1_200));
        // One window, at the edges of the range.
        assert_eq!(Lead(30).aim_for(u64::MAX, u64::MAX), u64::MAX);
        assert_eq!(Lead(30).aim_for(0, 10), 0);
    }

    #[test]
    fn only_a_long_sleep_until_an_exact_deadline_is_warmed_up() {
        let ms = 1_000_000;
        // Exact, 10 ms away: first WARM_UP before.
        let exact = wheel(&[(10 * ms, 10 * ms)]);
        let aim = Lead(30_000).aim(&exact, 0).unwrap();
        assert_eq!(Lead::warm_up(&exact, aim, 0), Some(10 * ms - WARM_UP));
        // The same deadline from 999 µs before it: too short to split.
        assert_eq!(
            Lead::warm_up(&exact, aim, 10 * ms - WARM_UP_AFTER + 1),
            None
        );
        assert_eq!(
            Lead::warm_up(&exact, aim, 10 * ms - WARM_UP_AFTER),
            Some(10 * ms - WARM_UP)
        );
        // A window wider than the lead: the lead serves it, one wake-up.
        let tolerant = wheel(&[(10 * ms, 10 * ms + 500_000)]);
        let aim = Lead(30_000).aim(&tolerant, 0).unwrap();
        assert_eq!(aim, 10 * ms + 470_000);
        assert_eq!(Lead::warm_up(&tolerant, aim, 0), None);
        // A window narrower than the lead: the aim is the deadline, as an exact timer's.
        let narrow = wheel(&[(10 * ms, 10 * ms + 10_000)]);
        let aim = Lead(30_000).aim(&narrow, 0).unwrap();
        assert_eq!(Lead::warm_up(&narrow, aim, 0), Some(10 * ms - WARM_UP));
    }

    #[test]
    fn only_an_earlier_aim_wakes_a_sleeping_driver() {
        assert!(!Plan::Awake.must_wake_for(0));
        assert!(Plan::Asleep(None).must_wake_for(u64::MAX));
        assert!(Plan::Asleep(Some(100)).must_wake_for(99));
        assert!(!Plan::Asleep(Some(100)).must_wake_for(100));
        assert!(!Plan::Asleep(Some(100)).must_wake_for(101));
        // With a lead of 30, a window [50, 120] aims at 90, before a plan of 100: woken once.
        let mut plan = Plan::Asleep(Some(100));
        assert!(plan.wake_for(Lead(30), 50, 120));
        assert_eq!(plan, Plan::Awake);
        assert!(!plan.wake_for(Lead(30), 50, 120));
        // Without the lead the same window (its end 120) would not wake it.
        assert!(!Plan::Asleep(Some(100)).wake_for(Lead::ZERO, 50, 120));
    }

    #[test]
    fn the_lead_follows_a_late_delivery_at_once_and_forgets_it_slowly() {
        use Margin::{Inside, Lean};
        // Inside: a late delivery and a quarter more, forgotten by a thirty-second.
        assert_eq!(Lead::ZERO.after(40_000, Inside), Lead(50_000));
        assert_eq!(Lead(40_000).after(0, Inside), Lead(38_750));
        assert_eq!(Lead(40_000).after(30_000, Inside), Lead(38_750));
        assert_eq!(Lead(40_000).after(50_000, Inside), Lead(62_500));
        // Lean: the delivery and an eighth more, forgotten by an eighth.
        assert_eq!(Lead::ZERO.after(40_000, Lean), Lead(45_000));
        assert_eq!(Lead(40_000).after(0, Lean), Lead(35_000));
        assert_eq!(Lead(40_000).after(30_000, Lean), Lead(35_000));
        assert_eq!(Lead(40_000).after(50_000, Lean), Lead(56_250));
        for rule in [Inside, Lean] {
            assert_eq!(Lead::ZERO.after(u64::MAX, rule), Lead(MAX_LEAD));
            let mut lead = Lead(MAX_LEAD);
            for _ in 0..1_000 {
                lead = lead.after(0, rule);
            }
            assert_eq!(lead, Lead::ZERO, "{rule:?}");
        }
        let mut lead = Lead(MAX_LEAD);
        for _ in 0..100 {
            lead = lead.after(0, Inside);
        }
        assert!(lead.ns() > 0 && lead.ns() < MAX_LEAD / 10, "{lead:?}");
    }
}
