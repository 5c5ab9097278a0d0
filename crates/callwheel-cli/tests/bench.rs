//! Runs the built `callwheel` binary and checks the structure of what it prints: a row for every
//! scheme and size, W3's fired counts, the skip rule, and the errors for bad input. Nothing here
//! looks at a timing figure beyond checking that it is a number.

use std::process::{Command, Output};

use callwheel_cli::registry::SCHEMES;

fn callwheel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_callwheel"))
        .args(args)
        .output()
        .expect("the callwheel binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8")
}

/// The body rows of the first Markdown table after the line starting with `heading`, as
/// trimmed cells (the header and the separator line are left out).
fn table(text: &str, heading: &str) -> Vec<Vec<String>> {
    let mut lines = text.lines().skip_while(|l| !l.starts_with(heading));
    assert!(lines.next().is_some(), "no {heading:?} in:\n{text}");
    lines
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| {
            l.trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

fn is_number(cell: &str) -> bool {
    cell.parse::<f64>().is_ok_and(|x| x.is_finite() && x >= 0.0)
}

const W1: &str = "## W1";
const W1_MATRIX: &str = "W1 matrix";
const W3: &str = "## W3";

#[test]
fn quick_bench_has_a_row_for_every_scheme_and_size() {
    let out = callwheel(&["bench", "--quick"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));

    let w1 = table(&text, W1);
    assert_eq!(w1.len(), SCHEMES.len() * 2, "{text}");
    for scheme in SCHEMES {
        for n in ["0", "1000"] {
            let row = w1
                .iter()
                .find(|r| r[0] == scheme.name && r[1] == n)
                .unwrap_or_else(|| panic!("no W1 row for {} N={n}:\n{text}", scheme.name));
            assert_eq!(row[2], "2000", "I of {} N={n}", scheme.name);
            for cell in &row[3..6] {
                assert!(is_number(cell), "{cell:?} in {row:?}");
            }
            if n == "1000" {
                assert!(is_number(&row[6]), "bytes/timer in {row:?}");
            } else {
                assert_eq!(row[6], "-");
            }
        }
    }

    let matrix = table(&text, W1_MATRIX);
    assert_eq!(matrix.len(), SCHEMES.len());
    for (row, scheme) in matrix.iter().zip(SCHEMES) {
        assert_eq!(row[0], format!("{} {}", scheme.label, scheme.name));
        assert_eq!(row.len(), 3);
        assert!(row[1..].iter().all(|c| is_number(c)), "{row:?}");
    }

    let w3 = table(&text, W3);
    assert_eq!(w3.len(), SCHEMES.len());
    for (row, scheme) in w3.iter().zip(SCHEMES) {
        assert_eq!(row[0], scheme.name);
        let expected = if scheme.complexity.any_linear() {
            "10000"
        } else {
            "20000"
        };
        assert_eq!(row[1], expected, "W3 timers of {}", scheme.name);
        assert_eq!(row[2], "2000");
        // "N" for an exact scheme, "N + L late" for a lossy one: either way they add up.
        let total: u64 = row[6]
            .trim_end_matches(" late")
            .split(" + ")
            .map(|n| n.parse::<u64>().expect("fired counts are numbers"))
            .sum();
        assert_eq!(
            total.to_string(),
            row[1],
            "W3 fired == started for {}",
            scheme.name
        );
        if !scheme.name.ends_with("-one") && !scheme.name.ends_with("-none") {
            assert!(
                !row[6].contains("late"),
                "{} is exact: {row:?}",
                scheme.name
            );
        }
        assert!(row[3..6].iter().all(|c| is_number(c)), "{row:?}");
    }
}

#[test]
fn scheme_filter_keeps_registry_order_and_workload_filter_works() {
    let out = callwheel(&[
        "bench",
        "--quick",
        "--workload",
        "w3",
        "--scheme",
        "hashed-wheel,straightforward",
        "--scheme",
        "S2",
    ]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    assert!(
        !text.contains(W1),
        "W1 ran although only w3 was asked for:\n{text}"
    );
    let names: Vec<String> = table(&text, W3)
        .into_iter()
        .map(|mut r| r.swap_remove(0))
        .collect();
    assert_eq!(names, ["straightforward", "ordered-list", "hashed-wheel"]);
}

#[test]
fn linear_start_schemes_are_skipped_above_the_limit_unless_full() {
    let args = [
        "bench",
        "--quick",
        "--workload",
        "w1",
        "--n",
        "0,10001",
        "--scheme",
        "ordered-list,hashed-wheel",
    ];
    let out = callwheel(&args);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    let w1 = table(&text, W1);
    assert_eq!(w1.len(), 4, "{text}");
    let skipped = &w1[1];
    assert_eq!(
        (skipped[0].as_str(), skipped[1].as_str()),
        ("ordered-list", "10001")
    );
    assert_eq!(skipped[2], "-");
    assert_eq!(skipped[3], "skipped: O(n) start");
    assert!(
        is_number(&w1[3][3]),
        "hashed-wheel ran at 10001: {:?}",
        w1[3]
    );
    let matrix = table(&text, W1_MATRIX);
    assert_eq!(matrix[0][2], "skipped");

    let mut full = args.to_vec();
    full.push("--full");
    let out = callwheel(&full);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}\n{}", stderr(&out));
    let row = &table(&text, W1)[1];
    assert_eq!(row[1], "10001");
    assert_eq!(row[2], "2000", "I = min(quick I, clamp(20M / N, ..))");
    assert!(is_number(&row[3]), "{row:?}");
}

#[test]
fn unknown_scheme_is_a_one_line_error() {
    let out = callwheel(&[
        "bench",
        "--quick",
        "--scheme",
        "hashed-wheel,no-such-scheme",
    ]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: unknown scheme `no-such-scheme`"),
        "{err}"
    );
    assert!(stdout(&out).is_empty());
}

#[test]
fn bad_options_exit_non_zero() {
    for args in [
        &["bench", "--reps", "0"][..],
        &["bench", "--workload", "w9"],
        &["bench", "--n", "ten"],
        &["bench-one", "--scheme", "nope", "--workload", "w3"],
        &["bench-one", "--scheme", "hashed-wheel", "--workload", "w1"],
    ] {
        let out = callwheel(args);
        assert!(!out.status.success(), "{args:?} succeeded");
        let err = stderr(&out);
        assert!(err.starts_with("error:"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn bench_one_prints_one_result_line() {
    let out = callwheel(&[
        "bench-one",
        "--scheme",
        "hashed-wheel",
        "--workload",
        "w1",
        "--n",
        "1000",
        "--iters",
        "100",
        "--reps",
        "2",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "{text}");
    let report = callwheel_cli::runner::Report::parse_line(text.trim()).expect("a result line");
    assert_eq!(report.samples.len(), 2);
    assert!(report.bytes_per_timer.is_some());
    assert_eq!(report.fired, None);

    let out = callwheel(&[
        "bench-one",
        "--scheme",
        "straightforward",
        "--workload",
        "w3",
        "--timers",
        "500",
        "--ticks",
        "100",
        "--reps",
        "1",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = callwheel_cli::runner::Report::parse_line(stdout(&out).trim()).unwrap();
    assert_eq!(report.fired, Some(500));
}
