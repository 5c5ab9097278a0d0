//! `callwheel instructions`: W1's start and stop counted under callgrind (when valgrind is on
//! PATH), the driver on its own, and a clean skip without valgrind. Counts, never times.

use std::process::{Command, Output};

use callwheel_bench::results::Results;
use callwheel_cli::compare;
use callwheel_cli::instructions::driver::Point;
use callwheel_cli::instructions::Structure;

fn callwheel(args: &[&str], path: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_callwheel"));
    command.args(args);
    if let Some(path) = path {
        command.env("PATH", path);
    }
    command.output().expect("the callwheel binary runs")
}

fn temp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "callwheel-instructions-{name}-{}",
        std::process::id()
    ))
}

#[test]
fn the_driver_prints_one_line_per_structure_and_n() {
    let out = callwheel(&["instructions-driver", "--n", "0,50"], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("callwheel-instructions "))
        .collect();
    let mut expected = Vec::new();
    for structure in Structure::ALL {
        for n in [0, 50] {
            let point = Point {
                structure: structure.name().to_string(),
                n,
            };
            expected.push(callwheel_bench::child_line::write(
                "callwheel-instructions",
                &point,
            ));
        }
    }
    assert_eq!(lines, expected, "{text}");
}

#[test]
fn the_driver_refuses_a_missing_or_bad_list() {
    for args in [
        vec!["instructions-driver"],
        vec!["instructions-driver", "--n", "ten"],
        vec!["instructions-driver", "--n", "-1"],
    ] {
        let out = callwheel(&args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn without_valgrind_the_experiment_is_skipped_and_says_so() {
    let dir = temp("skip");
    let out = callwheel(
        &["instructions", "--tiny", "--out", dir.to_str().unwrap()],
        Some("/nonexistent"),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("Skipped: valgrind is not on PATH"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn under_callgrind_every_structure_is_counted_and_judged() {
    if callwheel_cli::callgrind::valgrind().is_none() {
        eprintln!("valgrind is not on PATH: nothing to count");
        return;
    }
    let dir = temp("run");
    let out = callwheel(
        &[
            "instructions",
            "--tiny",
            "--json",
            "--out",
            dir.to_str().unwrap(),
        ],
        None,
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for line in [
        "| structure | N | start | stop | pair |",
        "- `Wheel<()>` instructions per cancel + start pair (the library's and the probe's call) at most 100, N = 0 to 1000: largest",
        "- `Wheel<()>` pair flat over N (largest / smallest at most 1.1):",
        "- C API pair within 1.2× of `Wheel<u64>`'s, in instructions",
    ] {
        assert!(text.contains(line), "no {line:?} in:\n{text}");
    }
    let results: Results = compare::load(&dir.join("results.json")).unwrap();
    for structure in Structure::ALL {
        for n in [0, 1000] {
            let case = format!("N={n}");
            let get = |metric: &str| {
                results
                    .value("instructions", structure.name(), &case, metric)
                    .unwrap_or_else(|| panic!("no {metric} for {structure:?} at {case}"))
            };
            let (start, stop, pair) = (get("start"), get("stop"), get("pair"));
            // Counts, not times (and of this test's unoptimised build): a start or a stop is
            // tens of instructions, never zero (a probe callgrind did not see), and never
            // tens of thousands (the filling or the generator counted).
            for count in [start, stop] {
                assert!(
                    (10.0..10_000.0).contains(&count),
                    "{structure:?} {case}: {count}"
                );
            }
            assert!(
                (pair - (start + stop)).abs() < 1e-6,
                "{pair} != {start} + {stop}"
            );
        }
    }
    // The C API does what the wheel does and more: it can only cost more.
    let pair = |s: Structure| {
        results
            .value("instructions", s.name(), "N=1000", "pair")
            .unwrap()
    };
    assert!(pair(Structure::CWheel) > pair(Structure::WheelU64));
    let _ = std::fs::remove_dir_all(&dir);
}
