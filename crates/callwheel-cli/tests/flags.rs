//! The flags every command shares: `--tiny` names the same sizes everywhere, and `--json`
//! writes `DIR/results.json` (DIR: `--out`) in `repro`'s format, which `callwheel compare`
//! reads — checked for the commands that gained them (`bench`, `table1`, `table2`, `latency`;
//! `sweep`, `stress` and `async` have their own tests).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use callwheel_bench::results::Results;

fn callwheel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_callwheel"))
        .args(args)
        .output()
        .expect("the callwheel binary runs")
}

/// A fresh directory for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("callwheel-flags-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Runs `args` with `--json --out DIR` and returns the results it wrote.
fn results_of(args: &[&str], dir: &Path) -> Results {
    let mut all = args.to_vec();
    all.extend(["--json", "--out", dir.to_str().unwrap()]);
    let out = callwheel(&all);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.join("results.json")).expect("results.json written");
    serde_json::from_str(&text).expect("results.json parses as repro's format")
}

#[test]
fn bench_writes_every_figure_it_prints() {
    let dir = scratch("bench");
    let r = results_of(
        &[
            "bench",
            "--tiny",
            "--workload",
            "w1,w4,table1",
            "--scheme",
            "wheel,heap-lazy",
        ],
        &dir,
    );
    for scheme in ["wheel", "heap-lazy"] {
        for case in ["w1 N=0", "w1 N=1000", "w4"] {
            assert!(
                r.figures.iter().any(|f| f.experiment == "bench"
                    && f.structure == scheme
                    && f.case == case
                    && f.metric == "median_ns"
                    && f.value > 0.0),
                "no median for {scheme} {case}"
            );
        }
    }
    assert!(r.figures.iter().any(|f| f.experiment == "table1"));
    assert!(
        dir.join("table1.svg").is_file(),
        "the table1 plot goes to --out too"
    );
    // Two runs compare, figure by figure.
    let again = scratch("bench-again");
    results_of(
        &["bench", "--tiny", "--workload", "w4", "--scheme", "wheel"],
        &again,
    );
    let out = callwheel(&[
        "compare",
        dir.join("results.json").to_str().unwrap(),
        again.join("results.json").to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("w4"));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&again);
}

#[test]
fn table1_and_latency_write_their_figures() {
    let dir = scratch("table1");
    let r = results_of(&["table1", "--tiny", "--n", "0,200"], &dir);
    for n in ["N=0", "N=200"] {
        assert!(r
            .figures
            .iter()
            .any(|f| f.experiment == "table1" && f.case == n && f.metric == "median_ns"));
    }
    let _ = std::fs::remove_dir_all(&dir);
    let dir = scratch("latency");
    let r = results_of(&["latency", "--tiny"], &dir);
    let p50s = r
        .figures
        .iter()
        .filter(|f| f.experiment == "latency" && f.case == "idle" && f.metric == "p50_ns")
        .count();
    assert_eq!(p50s, 3, "callback, wake-up and raw rows");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_old_size_flag_is_gone_and_tiny_conflicts_with_quick() {
    for args in [
        &["bench", "--quick"][..],
        &["table1", "--quick"],
        &["table2", "--quick"],
        &["latency", "--tiny", "--quick"],
    ] {
        let out = callwheel(args);
        assert_eq!(out.status.code(), Some(2), "{args:?} is a usage error");
    }
}
