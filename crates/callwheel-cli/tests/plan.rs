//! The plan's reduction rules, the summary statistics and the child's result line, tested
//! through the library without running any workload.

use callwheel_cli::plan::{Settings, SKIPPED_LINEAR_START};
use callwheel_cli::registry::{self, Complexity, SchemeInfo, SCHEMES};
use callwheel_cli::report::{Outcome, Summary, W3Row};
use callwheel_cli::runner::Report;

fn with(complexity: Complexity) -> &'static SchemeInfo {
    SCHEMES
        .iter()
        .find(|s| s.complexity == complexity)
        .expect("the registry has a scheme of this class")
}

#[test]
fn registry_names_and_labels_are_unique() {
    for (i, a) in SCHEMES.iter().enumerate() {
        for b in &SCHEMES[i + 1..] {
            assert_ne!(a.name, b.name);
            assert_ne!(a.label, b.label);
        }
        assert_eq!(registry::find(a.name).map(|s| s.name), Some(a.name));
        assert_eq!(registry::find(a.label).map(|s| s.name), Some(a.name));
    }
    assert!(registry::find("no-such-scheme").is_none());
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
    let q = Settings::quick();
    assert_eq!(q.w3(with(Complexity::CONSTANT)).timers, 20_000);
    assert_eq!(q.w3(with(Complexity::CONSTANT)).ticks, 2_000);
}

#[test]
fn summary_median_min_max() {
    let s = Summary::of(&[5.0, 1.0, 3.0]).unwrap();
    assert_eq!((s.median, s.min, s.max), (3.0, 1.0, 5.0));
    let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
    assert_eq!((s.median, s.min, s.max), (2.5, 1.0, 4.0));
    assert!(Summary::of(&[]).is_none());
}

#[test]
fn result_line_round_trips() {
    let report = Report {
        samples: vec![12.5, 0.1 + 0.2, 1e-3],
        bytes_per_timer: Some(48.25),
        fired: None,
        late: None,
    };
    assert_eq!(Report::parse_line(&report.to_line()), Ok(report));
    let report = Report {
        samples: vec![7.0],
        bytes_per_timer: None,
        fired: Some(982_987),
        late: Some(17_013),
    };
    assert_eq!(Report::parse_line(&report.to_line()), Ok(report));
    assert!(Report::parse_line("something else").is_err());
    assert!(Report::parse_line("callwheel-result samples= bytes=- fired=-").is_err());
    assert!(Report::parse_line("callwheel-result bytes=- fired=-").is_err());
}

#[test]
fn a_wrong_fired_count_is_flagged() {
    let row = |fired, late| W3Row {
        scheme: &SCHEMES[0],
        timers: 100,
        ticks: 10,
        outcome: Outcome::Done(Report {
            samples: vec![1.0],
            bytes_per_timer: None,
            fired,
            late,
        }),
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
