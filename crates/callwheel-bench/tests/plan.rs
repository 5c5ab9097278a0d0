//! The plan's reduction rules, the summary statistics and the child's result line, tested
//! through the library without running any workload, on structures described here with the
//! flags the rules read (the tool's own list is tested with the tool).

use callwheel::Wheel;
use callwheel_bench::peers::{BTreeMapPeer, DelayQueuePeer, HeapLazy};
use callwheel_bench::plan::{Settings, NA_NO_QUERY, NA_RANGE, SKIPPED_LINEAR_START};
use callwheel_bench::scheme;
use callwheel_bench::structure::{Caps, Complexity, Role, SchemeInfo};
use callwheel_schemes::basic_wheel::BasicWheel;
use callwheel_schemes::hierarchical_wheel::{HierarchicalWheel, Migration};
use callwheel_schemes::ordered_list::OrderedList;
use callwheel_schemes::straightforward::Straightforward;

/// The structures the rules are checked on: one of each complexity class and capability.
#[rustfmt::skip]
static SCHEMES: &[SchemeInfo] = &[
    scheme!("straightforward", "S1", Role::Scheme, Complexity::LINEAR_TICK, Caps::TICKING, Straightforward::new()),
    scheme!("ordered-list", "S2", Role::Scheme, Complexity::LINEAR_START, Caps::EXACT, OrderedList::new()),
    scheme!("basic-wheel", "S4", Role::Scheme, Complexity::CONSTANT, Caps::TICKING, BasicWheel::new(100_000)?),
    scheme!("hierarchical-full", "S7-full", Role::Scheme, Complexity::CONSTANT, Caps::EXACT, HierarchicalWheel::binary(5, Migration::Full)?),
    scheme!("hierarchical-one", "S7-one", Role::Scheme, Complexity::CONSTANT, Caps::LOSSY, HierarchicalWheel::binary(5, Migration::One)?),
    scheme!("hierarchical-none", "S7-none", Role::Scheme, Complexity::CONSTANT, Caps::LOSSY, HierarchicalWheel::binary(5, Migration::None)?),
    scheme!("hierarchical-paper", "S7-paper", Role::Scheme, Complexity::CONSTANT, Caps { max_ahead: 99 * 86_400, ..Caps::EXACT }, HierarchicalWheel::paper(Migration::Full)),
    scheme!("wheel", "facility", Role::Facility, Complexity::CONSTANT, Caps::EXACT, Wheel::new()),
    // The ratio rules know the C API's row by its name; nothing here runs it.
    scheme!("c-wheel", "facility-C", Role::Facility, Complexity::CONSTANT, Caps::EXACT, Wheel::new()),
    scheme!("heap-lazy", "peer-heap", Role::Peer, Complexity::LOGARITHMIC, Caps { note: "tombstones", ..Caps::EXACT }, HeapLazy::new()),
    scheme!("btreemap", "peer-btree", Role::Peer, Complexity::LOGARITHMIC, Caps { memory: false, max_ahead: BTreeMapPeer::MAX_DEADLINE, ..Caps::EXACT }, BTreeMapPeer::new()),
    scheme!("delayqueue", "peer-tokio", Role::Peer, Complexity::CONSTANT, Caps { memory: false, max_ahead: DelayQueuePeer::MAX_DEADLINE, ..Caps::EXACT }, DelayQueuePeer::new()?),
];
use callwheel_bench::report::{
    largest_ratio, outcome_ratio, ratio_table, Outcome, RatioEntry, Summary, W2Row, W3Row, W4Row,
    W5Row,
};
use callwheel_bench::runner::{Report, TolerantReport};

fn with(complexity: Complexity) -> &'static SchemeInfo {
    SCHEMES
        .iter()
        .find(|s| s.complexity == complexity)
        .expect("a structure of this class")
}

#[test]
fn linear_start_w1_iterations_and_skips() {
    let s = Settings::standard();
    let list = with(Complexity::LINEAR_START);
    let iters = |n| s.w1(list, n).map(|p| p.iters);
    assert_eq!(iters(0), Ok(200_000));
    assert_eq!(iters(1_000), Ok(20_000));
    assert_eq!(iters(10_000), Ok(2_000));
    assert_eq!(iters(100_000), Err(SKIPPED_LINEAR_START));
    assert_eq!(iters(1_000_000), Err(SKIPPED_LINEAR_START));

    let full = Settings {
        full: true,
        ..Settings::standard()
    };
    assert_eq!(full.w1(list, 100_000).map(|p| p.iters), Ok(2_000));
    assert!(full.w1(list, 100_001).is_err());

    let wheel = with(Complexity::CONSTANT);
    for n in [0, 1_000_000, 10_000_000] {
        assert_eq!(s.w1(wheel, n).map(|p| p.iters), Ok(200_000));
    }
    let tick = with(Complexity::LINEAR_TICK);
    assert_eq!(s.w1(tick, 1_000_000).map(|p| p.iters), Ok(200_000));
}

#[test]
fn w3_timer_counts() {
    let s = Settings::standard();
    assert_eq!(s.w3(with(Complexity::CONSTANT)).timers, 1_000_000);
    assert_eq!(s.w3(with(Complexity::LINEAR_START)).timers, 10_000);
    assert_eq!(s.w3(with(Complexity::LINEAR_TICK)).timers, 10_000);
    assert_eq!(s.w3(with(Complexity::CONSTANT)).ticks, 100_000);
    let q = Settings::tiny();
    assert_eq!(q.w3(with(Complexity::CONSTANT)).timers, 20_000);
    assert_eq!(q.w3(with(Complexity::CONSTANT)).ticks, 2_000);
}

#[test]
fn summary_median_min_max() {
    let s = Summary::of(&[5.0, 1.0, 3.0]).unwrap();
    assert_eq!((s.median, s.min, s.max), (3.0, 1.0, 5.0));
    // Nearest rank: the lower of the middle two, a figure that was measured.
    let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
    assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 4.0));
    assert!(Summary::of(&[]).is_none());
}

#[test]
fn result_line_round_trips() {
    let report = Report {
        samples: vec![12.5, 0.1 + 0.2, 1e-3],
        bytes_per_timer: Some(48.25),
        ..Report::default()
    };
    assert_eq!(Report::parse_line(&report.to_line()), Ok(report));
    let report = Report {
        samples: vec![7.0],
        fired: Some(982_987),
        late: Some(17_013),
        ..Report::default()
    };
    assert_eq!(Report::parse_line(&report.to_line()), Ok(report));
    let report = Report {
        samples: vec![900.5],
        fired: Some(1_000),
        jumps: Some(7_682_500),
        ..Report::default()
    };
    assert_eq!(Report::parse_line(&report.to_line()), Ok(report));
    let report = Report {
        samples: vec![61.0, 60.5],
        wakeups: Some(95_000),
        optimum: Some(95_000),
        violations: Some(0),
        tolerant: Some(TolerantReport {
            samples: vec![40.25, 41.0],
            wakeups: 3_100,
            optimum: 3_100,
            violations: 0,
        }),
        ..Report::default()
    };
    assert_eq!(Report::parse_line(&report.to_line()), Ok(report));
    for bad in [
        // The tolerant case without its optimum.
        r#"callwheel-result {"samples":[1],"tolerant":{"samples":[2],"wakeups":3,"violations":0}}"#,
        "something else",
        r#"callwheel-result {"samples":[]}"#,
        r#"callwheel-result {"bytes_per_timer":1.0}"#,
        r#"callwheel-result {"samples":[1],"extra":3}"#,
        r#"callwheel-result {"samples":["x"]}"#,
        r#"callwheel-table1 {"samples":[1]}"#,
        "callwheel-result samples=1 bytes=-",
    ] {
        assert!(Report::parse_line(bad).is_err(), "{bad:?} parsed");
    }
}

#[test]
fn a_wrong_fired_count_is_flagged() {
    let row = |fired, late| W3Row {
        scheme: &SCHEMES[0],
        timers: 100,
        ticks: 10,
        outcome: Outcome::Done(Box::new(Report {
            samples: vec![1.0],
            fired,
            late,
            ..Report::default()
        })),
    };
    assert!(row(Some(100), Some(0)).fired_ok());
    assert!(
        row(Some(97), Some(3)).fired_ok(),
        "late timers of a lossy scheme count"
    );
    assert!(!row(Some(99), Some(0)).fired_ok());
    assert!(
        !row(Some(97), Some(4)).fired_ok(),
        "too many is as wrong as too few"
    );
    assert!(!row(None, None).fired_ok());
}

fn find(name: &str) -> &'static SchemeInfo {
    SCHEMES
        .iter()
        .find(|s| s.name == name || s.label == name)
        .unwrap_or_else(|| panic!("{name} is a structure of these tests"))
}

/// W1's ratio entries hold one entry per structure and N, so every peer comes once per column;
/// the table still has one row per peer, each with a figure in every column.
#[test]
fn ratio_table_lists_each_peer_once() {
    let columns: Vec<String> = ["N=0", "N=1000"].iter().map(|c| c.to_string()).collect();
    let names = ["wheel", "heap-lazy", "btreemap", "delayqueue"];
    let outcomes: Vec<Outcome> = (1..=names.len())
        .map(|i| {
            Outcome::Done(Box::new(Report {
                samples: vec![10.0 * i as f64],
                ..Report::default()
            }))
        })
        .collect();
    let entries: Vec<RatioEntry> = names
        .iter()
        .zip(&outcomes)
        .flat_map(|(&name, outcome)| {
            columns
                .iter()
                .map(move |c| (find(name), c.clone(), outcome))
        })
        .collect();
    let table = ratio_table(&entries, &columns, Role::Peer).expect("a facility and peers");
    let rows: Vec<&str> = table
        .lines()
        .skip(2)
        .map(|l| l.split('|').nth(1).unwrap().trim())
        .collect();
    assert_eq!(
        rows,
        ["heap-lazy (tombstones)", "btreemap", "delayqueue"],
        "{table}"
    );
    assert!(!table.contains(" - "), "every cell has a ratio: {table}");
}

/// With rounds on both sides, a ratio is the median of the rounds' ratios, not the ratio of
/// the pooled medians; without (or with different counts of rounds), the ratio of the medians.
#[test]
fn ratios_pair_the_rounds() {
    let done = |samples: &[f64], rounds: &[f64]| {
        Outcome::Done(Box::new(Report {
            samples: samples.to_vec(),
            rounds: rounds.to_vec(),
            ..Report::default()
        }))
    };
    let c = done(&[30.0, 30.0, 30.0], &[10.0, 40.0, 12.0]);
    let rust = done(&[10.0, 10.0, 10.0], &[5.0, 20.0, 6.0]);
    assert_eq!(outcome_ratio(&c, &rust), Some(2.0));
    let unpaired = done(&[10.0, 10.0, 10.0], &[]);
    assert_eq!(outcome_ratio(&c, &unpaired), Some(3.0));
    assert_eq!(outcome_ratio(&c, &Outcome::Failed("x".into())), None);
    assert_eq!(outcome_ratio(&c, &done(&[0.0], &[])), None);
}

/// The facility's other interfaces get their own table against the Rust wheel; the peers' table
/// leaves them out.
#[test]
fn the_c_api_is_compared_with_the_rust_wheel() {
    let column = vec!["ns/timer".to_string()];
    let outcomes: Vec<Outcome> = [10.0, 12.0, 30.0]
        .iter()
        .map(|&x| {
            Outcome::Done(Box::new(Report {
                samples: vec![x],
                ..Report::default()
            }))
        })
        .collect();
    let entries: Vec<RatioEntry> = ["wheel", "c-wheel", "heap-lazy"]
        .iter()
        .zip(&outcomes)
        .map(|(&name, outcome)| (find(name), column[0].clone(), outcome))
        .collect();
    let facility = ratio_table(&entries, &column, Role::Facility).expect("the C API's row");
    assert!(
        facility.contains("c-wheel") && facility.contains("1.20"),
        "{facility}"
    );
    assert!(!facility.contains("heap-lazy"), "{facility}");
    assert_eq!(
        largest_ratio(&entries, &column, "c-wheel"),
        Some((1.2, "ns/timer"))
    );
    let peers = ratio_table(&entries, &column, Role::Peer).expect("the peer's row");
    assert!(
        peers.contains("3.00") && !peers.contains("c-wheel"),
        "{peers}"
    );
    // Without the Rust wheel the C API is the reference: it is not compared with itself.
    assert_eq!(largest_ratio(&entries[1..], &column, "c-wheel"), None);
}

#[test]
fn w2_sizes_and_skips() {
    let s = Settings::standard();
    let wheel = find("wheel");
    assert_eq!(
        s.w2(wheel).map(|p| (p.n, p.steps, p.reps)),
        Ok((100_000, 2_000_000, 5))
    );
    let tick = with(Complexity::LINEAR_TICK);
    assert_eq!(s.w2(tick).map(|p| p.n), Ok(1_000), "O(n) tick: N reduced");
    let list = with(Complexity::LINEAR_START);
    assert_eq!(s.w2(list).map(|p| p.n), Err(SKIPPED_LINEAR_START));
    let q = Settings::tiny();
    assert_eq!(q.w2(list).map(|p| (p.n, p.steps)), Ok((1_000, 20_000)));
    assert_eq!(q.w2(wheel).map(|p| (p.n, p.steps)), Ok((1_000, 20_000)));
}

#[test]
fn w4_and_w5_sizes_and_na_rows() {
    let mut s = Settings::standard();
    let wheel = find("wheel");
    assert_eq!(
        s.w4(wheel).map(|p| (p.timers, p.ticks, p.reps)),
        Ok((1_000, 1_000_000_000, 15))
    );
    assert_eq!(
        s.w4(find("straightforward")).map(|p| p.timers),
        Err(NA_NO_QUERY)
    );
    assert_eq!(
        s.w4(find("basic-wheel")).map(|p| p.timers),
        Err(NA_NO_QUERY)
    );
    assert_eq!(
        s.w4(find("hierarchical-paper")).map(|p| p.timers),
        Err(NA_RANGE)
    );
    assert!(s.w4(find("hierarchical-full")).is_ok());
    assert_eq!(
        s.w5(wheel)
            .map(|p| (p.timers, p.ticks, p.tolerance_percent, p.reps)),
        Ok((100_000, 1_000_000, 5, 5))
    );
    assert_eq!(
        s.w5(find("straightforward")).map(|p| p.timers),
        Err(NA_NO_QUERY)
    );
    let list = with(Complexity::LINEAR_START);
    assert_eq!(
        s.w5(list).map(|p| p.timers),
        Ok(10_000),
        "O(n) start: fewer timers"
    );
    assert!(s.w5(find("hierarchical-paper")).is_ok());
    s.set_reps(3);
    assert_eq!(
        s.w4(wheel).map(|p| p.reps),
        Ok(3),
        "--reps overrides W4's 15"
    );
    assert_eq!(s.w5(wheel).map(|p| p.reps), Ok(3));
    let q = Settings::tiny();
    assert_eq!(q.w4(wheel).map(|p| (p.timers, p.reps)), Ok((100, 1)));
    assert_eq!(q.w5(wheel).map(|p| p.timers), Ok(2_000));
}

fn done(report: Report) -> Outcome {
    Outcome::Done(Box::new(Report {
        samples: vec![1.0],
        ..report
    }))
}

#[test]
fn wrong_counts_are_flagged_for_exact_structures_only() {
    let w2 = |scheme: &'static SchemeInfo, fired| W2Row {
        scheme,
        n: Some(1_000),
        steps: 10,
        expected: 42,
        outcome: done(Report {
            fired: Some(fired),
            ..Report::default()
        }),
    };
    assert!(w2(find("wheel"), 42).count_ok());
    assert!(!w2(find("wheel"), 41).count_ok());
    assert!(!w2(find("delayqueue"), 43).count_ok());
    assert!(
        w2(find("hierarchical-none"), 40).count_ok(),
        "lossy: reported"
    );

    let w4 = |fired| W4Row {
        scheme: find("btreemap"),
        timers: 100,
        outcome: done(Report {
            fired: Some(fired),
            jumps: Some(100),
            ..Report::default()
        }),
    };
    assert!(w4(100).fired_ok());
    assert!(!w4(99).fired_ok());

    let w5 = |scheme: &'static SchemeInfo, wakeups, optimum, violations| W5Row {
        scheme,
        timers: 10,
        tolerance_percent: 5,
        outcome: done(Report {
            wakeups: Some(wakeups),
            optimum: Some(optimum),
            violations: Some(violations),
            ..Report::default()
        }),
    };
    assert_eq!(w5(find("wheel"), 10, 10, 0).problem(), None);
    assert!(w5(find("wheel"), 10, 10, 1).problem().is_some());
    assert!(w5(find("btreemap"), 9, 10, 0).problem().is_some());
    assert_eq!(
        w5(find("hierarchical-one"), 3, 10, 7).problem(),
        None,
        "lossy: reported"
    );
}
