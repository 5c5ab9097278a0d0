//! Table I's shape (Costello & Varghese, Figure 8), by counting, never timing.
//!
//! The paper's experiment: N callouts outstanding, due far ahead; one more is cancelled and set
//! again, each time farther in the future than all the others. [`Stats::traversed`] counts the
//! entries each call walks to find its place or its callout (Table II's `t` and `h`), so the
//! shape is checked on counts that do not depend on the machine:
//!
//! | interface | insert | cancel |
//! |---|---|---|
//! | old callout (`calltodo`) | walks to the tail: grows with N | 4.4BSD's `untimeout` walks from the head: grows with N |
//! | new callout, hash | O(1) | one hash chain: bounded |
//! | new callout, handle | O(1) | O(1) |
//!
//! Run with `--nocapture` to see the counts.

use callwheel::Wheel;
use callwheel_callout::{Backing, Callouts, Config, Stats};
use callwheel_schemes::differential_list::DifferentialList;
use callwheel_schemes::hashed_wheel::HashedWheel;

/// The outstanding callouts: the paper's range and beyond.
const SIZES: [u64; 4] = [10, 100, 1_000, 10_000];
/// Cancel + set pairs counted at each size.
const PAIRS: u64 = 50;
/// The outstanding callouts are due from this many ticks on; the extra one after them all.
const FAR: i64 = 1 << 30;
/// The most entries a call through the hash or a handle may traverse, whatever N.
const CONSTANT: f64 = 8.0;
/// How far from proportional to N the old callout's counts may be (a fraction).
const TOLERANCE: f64 = 0.1;

/// A (function, argument) pair, as the kernel's callouts carry.
type Call = (u32, u64);

/// How the extra callout is cancelled and set again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Interface {
    /// `untimeout` / `timeout`.
    ByCall,
    /// `unsetcallout` / `setcallout`.
    ByHandle,
}

/// Mean entries traversed per call over the pairs.
#[derive(Clone, Copy, Debug)]
struct Counts {
    insert: f64,
    cancel: f64,
}

fn traversed<S: Backing>(t: &Callouts<S, Call>) -> u64 {
    let Stats { traversed, .. } = t.stats();
    traversed
}

/// Table I's experiment on a fresh table with `n` callouts outstanding: entries traversed per
/// insert and per cancel of the extra callout.
fn counts<S: Backing>(scheme: S, interface: Interface, n: u64) -> Counts {
    let config = Config {
        calloutsize: n as usize + 1,
        ..Config::default()
    };
    let mut t: Callouts<S, Call> = Callouts::with_config(scheme, config).unwrap();
    // Set in descending order of deadline, so that every insert into the old list lands at
    // its head and the setup stays O(N); the pairs below are what is counted.
    for i in 0..n {
        let ticks = FAR + 3 * (n - i) as i64;
        match interface {
            Interface::ByCall => t.timeout((1, i), ticks).unwrap(),
            Interface::ByHandle => drop(t.setcallout((1, i), ticks).unwrap()),
        }
    }
    let extra: Call = (2, u64::MAX);
    let base = 3 * FAR;
    let mut handle = match interface {
        Interface::ByCall => {
            t.timeout(extra, base).unwrap();
            None
        }
        Interface::ByHandle => Some(t.setcallout(extra, base).unwrap()),
    };
    let (mut insert, mut cancel) = (0, 0);
    for i in 1..=PAIRS as i64 {
        let before = traversed(&t);
        match handle {
            Some(h) => assert_eq!(t.unsetcallout(h), Ok(true)),
            None => assert!(t.untimeout(extra)),
        }
        let between = traversed(&t);
        match interface {
            Interface::ByCall => t.timeout(extra, base + i).unwrap(),
            Interface::ByHandle => handle = Some(t.setcallout(extra, base + i).unwrap()),
        }
        cancel += between - before;
        insert += traversed(&t) - between;
    }
    assert_eq!(t.pending() as u64, n + 1, "every callout is still pending");
    t.check_invariants().unwrap();
    Counts {
        insert: insert as f64 / PAIRS as f64,
        cancel: cancel as f64 / PAIRS as f64,
    }
}

/// Counts at every size, printed as a table.
fn at_every_size<S: Backing>(
    name: &str,
    make: impl Fn(u64) -> S,
    interface: Interface,
) -> Vec<(u64, Counts)> {
    let rows: Vec<(u64, Counts)> = SIZES
        .iter()
        .map(|&n| (n, counts(make(n), interface, n)))
        .collect();
    for (n, c) in &rows {
        println!(
            "{name}: N = {n}: {:.2} entries per insert, {:.2} per cancel",
            c.insert, c.cancel
        );
    }
    rows
}

/// Costello & Varghese size the callwheel to the callout table: a power of two at least as
/// large.
fn callwheel(n: u64) -> HashedWheel<u32> {
    HashedWheel::new(n.max(256).next_power_of_two().trailing_zeros()).unwrap()
}

/// `counts(N) / N` is the same at every N, within [`TOLERANCE`], and not zero: linear in N.
fn assert_linear(what: &str, rows: &[(u64, f64)]) {
    let (n0, c0) = rows[0];
    let slope = c0 / n0 as f64;
    assert!(slope > 0.0, "{what}: nothing traversed at N = {n0}");
    for &(n, c) in rows {
        let per = c / n as f64;
        assert!(
            (per - slope).abs() <= TOLERANCE * slope,
            "{what}: {c:.2} entries at N = {n} ({per:.3} per outstanding callout) against {slope:.3} at N = {n0}: not proportional to N"
        );
    }
}

/// Every count is at most [`CONSTANT`], at every N.
fn assert_bounded(what: &str, rows: &[(u64, f64)]) {
    for &(n, c) in rows {
        assert!(
            c <= CONSTANT,
            "{what}: {c:.2} entries at N = {n}, above the constant {CONSTANT}"
        );
    }
}

fn column(rows: &[(u64, Counts)], pick: fn(&Counts) -> f64) -> Vec<(u64, f64)> {
    rows.iter().map(|(n, c)| (*n, pick(c))).collect()
}

#[test]
fn old_callout_insert_and_cancel_traverse_entries_in_proportion_to_n() {
    let rows = at_every_size(
        "old callout",
        |_| DifferentialList::new(),
        Interface::ByCall,
    );
    assert_linear("old timeout", &column(&rows, |c| c.insert));
    assert_linear("old untimeout", &column(&rows, |c| c.cancel));
}

#[test]
fn new_callout_through_the_hash_traverses_a_bounded_number_of_entries() {
    let rows = at_every_size("new callout, hash", callwheel, Interface::ByCall);
    assert_bounded("new timeout", &column(&rows, |c| c.insert));
    assert_bounded("new untimeout", &column(&rows, |c| c.cancel));
}

#[test]
fn new_callout_by_handle_traverses_a_bounded_number_of_entries() {
    let rows = at_every_size("new callout, handle", callwheel, Interface::ByHandle);
    assert_bounded("setcallout", &column(&rows, |c| c.insert));
    assert_bounded("unsetcallout", &column(&rows, |c| c.cancel));
    let rows = at_every_size(
        "production wheel, handle",
        |_| Wheel::new(),
        Interface::ByHandle,
    );
    assert_bounded("setcallout, production wheel", &column(&rows, |c| c.insert));
    assert_bounded(
        "unsetcallout, production wheel",
        &column(&rows, |c| c.cancel),
    );
}

#[test]
fn old_untimeout_of_a_callout_never_set_walks_the_whole_list() {
    let n = 1_000;
    let mut t: Callouts<DifferentialList<u32>, Call> = Callouts::new(DifferentialList::new());
    for i in 0..n {
        t.timeout((1, i), FAR + 3 * (n - i) as i64).unwrap();
    }
    let before = traversed(&t);
    assert!(!t.untimeout((9, 9)));
    assert_eq!(traversed(&t) - before, n, "a miss skips every entry");
    // A callout set by handle is on the list, but untimeout never matches it.
    let h = t.setcallout((3, 3), 1).unwrap();
    let before = traversed(&t);
    assert!(!t.untimeout((3, 3)));
    assert_eq!(traversed(&t) - before, n + 1);
    assert_eq!(t.unsetcallout(h), Ok(true));
    t.check_invariants().unwrap();
}
