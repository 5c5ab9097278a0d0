//! calloutng's precision on every backing: a callout armed with a window runs inside it, at
//! the window's firing instant, so callouts whose windows overlap share interrupts whatever
//! scheme holds them; and a callout armed by a relative time without a precision gets the
//! table's default deviation (a sixteenth of its interval at 5 %), or none at 0 %.

use callwheel::time::Sbt;
use callwheel::{Tick, Wheel};
use callwheel_callout::flags::c_prel;
use callwheel_callout::{Backing, Callouts, Config};
use callwheel_schemes::balanced_tree::BalancedTree;
use callwheel_schemes::binary_heap::BinaryHeap;
use callwheel_schemes::calendar_queue::CalendarQueue;
use callwheel_schemes::differential_list::DifferentialList;
use callwheel_schemes::hashed_wheel::HashedWheel;
use callwheel_schemes::hashed_wheel_sorted::HashedWheelSorted;
use callwheel_schemes::hierarchical_wheel::{HierarchicalWheel, Migration};
use callwheel_schemes::ordered_list::OrderedList;

mod events;
use events::run_by_events;

/// A nanosecond tick.
const HZ: u32 = 1_000_000_000;

/// Where the table's clock starts.
const START: Tick = 3_000_000_000;

/// How a run arms its callouts.
#[derive(Clone, Copy)]
enum Arming {
    /// `callout_reset_sbt_on` with a tenth of the interval as precision.
    Tenth,
    /// `callout_reset_sbt_on` with no precision and no flags.
    Plain,
    /// `callout_reset` in ticks.
    Ticks,
    /// The BSD `timeout` in ticks.
    Timeout,
}

/// What a run saw: each callout's deadline, the tick it ran at, and the interrupts taken.
struct Run {
    deadlines: Vec<Tick>,
    ran_at: Vec<Option<Tick>>,
    interrupts: usize,
}

/// Arms `n` callouts at random times up to 20 ms on a nanosecond table over `scheme`, then
/// drives it by its event window alone, each interrupt at the window's end.
fn run<S: Backing>(scheme: S, deviation_percent: u32, arming: Arming, n: usize) -> Run {
    let config = Config {
        hz: HZ,
        deviation_percent,
        ..Config::default()
    };
    let mut t: Callouts<S, usize> = Callouts::with_config(scheme, config).unwrap();
    assert!(!t.callout_process(START));
    let mut rng = 0x2545_f491_4f6c_dd1d_u64;
    let mut deadlines = Vec::with_capacity(n);
    for i in 0..n {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let ns = 1 + (rng % 20_000_000) as i64;
        let h = t.callout_init().unwrap();
        match arming {
            Arming::Tenth | Arming::Plain => {
                let sbt = Sbt::from_nanos(ns);
                let precision = match arming {
                    Arming::Tenth => Sbt::from_raw(sbt.as_raw() / 10),
                    _ => Sbt::ZERO,
                };
                t.callout_reset_sbt_on(h, sbt, precision, i, -1, 0).unwrap();
                deadlines.push(START + sbt.to_ticks_ceil(HZ).unwrap());
            }
            Arming::Ticks => {
                t.callout_reset(h, ns, i).unwrap();
                deadlines.push(START + ns as Tick);
            }
            Arming::Timeout => {
                t.callout_free(h).unwrap();
                t.timeout(i, ns).unwrap();
                deadlines.push(START + ns as Tick);
            }
        }
    }
    // A hierarchy names its slot boundaries as events too (earlier than needed, never later):
    // a few interrupts per level a callout cascades through.
    let (ran_at, interrupts) = run_by_events(&mut t, n, 8 * n);
    assert_eq!(t.pending(), 0);
    Run {
        deadlines,
        ran_at,
        interrupts,
    }
}

/// Every callout ran, never before its deadline and never after `d + tolerance(d)`.
fn inside(r: &Run, tolerance: impl Fn(Tick) -> Tick) {
    for (i, (&d, at)) in r.deadlines.iter().zip(&r.ran_at).enumerate() {
        let at = at.unwrap_or_else(|| panic!("callout {i} never ran"));
        let end = d + tolerance(d - START);
        assert!(
            (d..=end).contains(&at),
            "callout {i} ran at {at}, outside [{d}, {end}]"
        );
    }
}

fn distinct(deadlines: &[Tick]) -> usize {
    let mut d = deadlines.to_vec();
    d.sort_unstable();
    d.dedup();
    d.len()
}

/// On `make`'s scheme: with a window of a tenth, every callout runs inside it and the windows
/// share interrupts: fewer than half the exact run's. (The production wheel wakes at the
/// earliest window's end and comes near the fewest instants that stab every window; the other
/// backings wake at each distinct firing instant: 940 interrupts for 2,000 callouts here.)
fn precision_is_honoured<S: Backing>(make: impl Fn() -> S) {
    let n = 2_000;
    let tolerant = run(make(), 0, Arming::Tenth, n);
    inside(&tolerant, |ahead| ahead / 10);
    let exact = run(make(), 0, Arming::Plain, n);
    inside(&exact, |_| 0);
    assert!(exact.interrupts >= distinct(&exact.deadlines));
    assert!(
        tolerant.interrupts * 2 < exact.interrupts,
        "{} interrupts with windows of a tenth, {} exact",
        tolerant.interrupts,
        exact.interrupts
    );
}

macro_rules! on_every_backing {
    ($($name:ident: $make:expr,)*) => {$(
        #[test]
        fn $name() {
            precision_is_honoured($make);
        }
    )*};
}

on_every_backing! {
    production_wheel: Wheel::new,
    ordered_list: OrderedList::new,
    calltodo: DifferentialList::new,
    binary_heap: BinaryHeap::new,
    balanced_tree: BalancedTree::new,
    hashed_wheel: || HashedWheel::new(8).unwrap(),
    hashed_wheel_sorted: || HashedWheelSorted::new(8).unwrap(),
    hierarchical_wheel: || HierarchicalWheel::binary(6, Migration::Full).unwrap(),
    calendar_queue: CalendarQueue::new,
}

#[test]
fn calls_without_a_precision_get_the_default_deviation() {
    for arming in [Arming::Plain, Arming::Ticks, Arming::Timeout] {
        let n = 2_000;
        // 5 %: up to a sixteenth of the interval late, and the windows share interrupts.
        let default = run(HashedWheel::new(8).unwrap(), 5, arming, n);
        inside(&default, |ahead| ahead / 16);
        // 0 %: exact, one interrupt per distinct deadline.
        let exact = run(HashedWheel::new(8).unwrap(), 0, arming, n);
        inside(&exact, |_| 0);
        assert_eq!(exact.interrupts, distinct(&exact.deadlines));
        assert!(
            default.interrupts * 4 < exact.interrupts * 3,
            "{} interrupts at the default deviation, {} exact",
            default.interrupts,
            exact.interrupts
        );
    }
    // The default itself: 5 %.
    assert_eq!(Config::default().deviation_percent, 5);
}

#[test]
fn c_prel_replaces_the_default_deviation() {
    let config = Config {
        hz: HZ,
        ..Config::default()
    };
    let mut t: Callouts<OrderedList<u32>, u32> =
        Callouts::with_config(OrderedList::new(), config).unwrap();
    assert!(!t.callout_process(START));
    let h = t.callout_init().unwrap();
    // C_PREL(20): a millionth of 1 s, under a tick's worth of the window's first eighth: exact.
    t.callout_reset_sbt_on(h, Sbt::from_secs(1), Sbt::ZERO, 1, -1, c_prel(20))
        .unwrap();
    let due = START + 1_000_000_000;
    assert_eq!(t.next_event(), Some((due, due)));
    // Without it, the default sixteenth lets it run at a coarse instant inside the window.
    t.callout_reset_sbt_on(h, Sbt::from_secs(1), Sbt::ZERO, 1, -1, 0)
        .unwrap();
    let (first, last) = t.next_event().unwrap();
    assert_eq!(first, last);
    assert!(
        first > due && first <= due + due / 16 - START / 16,
        "{first}"
    );
}
