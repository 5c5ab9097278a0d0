//! The insertion-cost experiment's tests: the counts, the simulation and the verdicts.

use super::*;

#[test]
fn head_and_rear_passes_add_up_to_the_population_seen() {
    // Same seed, same arrivals and intervals: each insertion passes the entries due at or
    // before it from the head and the others from the rear.
    for intervals in Intervals::ALL {
        let head = simulate(intervals, Search::FromHead, 32.0, 4, 7).unwrap();
        let rear = simulate(intervals, Search::FromRear, 32.0, 4, 7).unwrap();
        assert_eq!(head.insertions, rear.insertions);
        assert_eq!(head.mean_seen, rear.mean_seen);
        let sum = head.mean_passed + rear.mean_passed;
        assert!(
            (sum - head.mean_seen).abs() < 1e-9,
            "{intervals:?}: {sum} passed against {} seen",
            head.mean_seen
        );
    }
}

#[test]
fn the_mean_population_is_little_s_lambda_t() {
    for intervals in Intervals::ALL {
        let m = simulate(intervals, Search::FromRear, 64.0, 300, 11).unwrap();
        let off = (m.mean_seen - 64.0).abs() / 64.0;
        assert!(
            off < 0.05,
            "{intervals:?}: {} seen for λT = 64",
            m.mean_seen
        );
    }
}

#[test]
fn the_rear_is_cheaper_on_uniform_intervals_and_not_on_exponential_ones() {
    let m = |intervals, search| simulate(intervals, search, 64.0, 30, 3).unwrap();
    let uniform = m(Intervals::Uniform, Search::FromRear).cost()
        / m(Intervals::Uniform, Search::FromHead).cost();
    let exponential = m(Intervals::Exponential, Search::FromRear).cost()
        / m(Intervals::Exponential, Search::FromHead).cost();
    assert!(uniform < 0.65, "uniform rear / head = {uniform}");
    assert!(
        (0.85..1.15).contains(&exponential),
        "exponential rear / head = {exponential}"
    );
}

#[test]
fn measured_slopes_follow_the_residual_life() {
    for intervals in Intervals::ALL {
        for search in [Search::FromHead, Search::FromRear] {
            let m = simulate(intervals, search, 64.0, 30, 5).unwrap();
            let want = derived_slope(intervals, search);
            assert!(
                (m.slope() - want).abs() < 0.06,
                "{intervals:?} {search:?}: slope {} against {want}",
                m.slope()
            );
        }
    }
}

#[test]
fn formulas_print_as_the_paper_writes_them() {
    assert_eq!(formula_text(2.0 / 3.0), "2 + 2n/3");
    assert_eq!(formula_text(1.0 / 3.0), "2 + n/3");
    assert_eq!(formula_text(0.5), "2 + n/2");
    assert_eq!(paper_slope(Intervals::Uniform, Search::FromRear), None);
}

#[test]
fn the_tiny_run_judges_every_formula() {
    let section = InsertionCost.run(&InsertionCost.plan(Size::Tiny), Path::new("."));
    assert_eq!(section.failures, 0, "{}", section.markdown);
    assert_eq!(section.findings.len(), 7);
    let find = |what: &str| {
        section
            .findings
            .iter()
            .find(|f| f.what.starts_with(what))
            .unwrap_or_else(|| panic!("no finding {what}"))
    };
    assert!(find("every distribution and end")
        .verdict
        .ends_with(": met"));
    assert!(find("Little's law").verdict.ends_with(": met"));
    assert!(find("the paper's formulas with the two")
        .verdict
        .ends_with(": met"));
    assert!(section.markdown.contains("| uniform | rear | 64 |"));
    assert!(section.markdown.contains("not given"));
}
