//! `callwheel repro` at tiny sizes: the report's structure and counts (never timing), the
//! plots, the JSON round trip through `compare`, and bad input.

use std::path::PathBuf;
use std::process::{Command, Output};

use callwheel_bench::results::{Figure, Results};
use callwheel_cli::compare;

fn callwheel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_callwheel"))
        .args(args)
        .output()
        .expect("the callwheel binary runs")
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("callwheel-repro-{name}-{}", std::process::id()))
}

#[test]
fn tiny_run_writes_the_report_the_plots_and_the_json() {
    let dir = temp("run");
    let out = callwheel(&["repro", "--tiny", "--json", "--out", dir.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The summary names every experiment.
    for name in [
        "| family |",
        "| table1 |",
        "| peers |",
        "| coalescing |",
        "| latency | idle: callwheel p50",
        "| sweep | exact: callwheel p50 - raw p50 per request",
        "| sweep | 50 timers at 5 % tolerance: wake-ups / optimum",
        "| sweep | idle runtime",
        "| stress | start p99 during a mass expiry",
        "| stress | every timer fired exactly once or was stopped |",
        "| async | precision: callwheel sleep, smol: p50 <= clock_nanosleep p50 + 10 us |",
        // Counts, not times: the model accounts for every step of Scheme 6, and Scheme 7's
        // stay within the levels crossed.
        "| cost-model | Scheme 6 steps = one visit per revolution from the floor + the ticks with work, counted offline | largest difference",
        "| cost-model | Scheme 7 steps per timer <= m + a constant, whatever T and M (the model's c7 · m) | steps - m at most",
        "| async | churn B, 1024 tasks, on tokio: >= 2x tokio's timer and >= 1.5x pingora's, or within 10 % of the floor |",
        "| async | churn B, 1024 tasks, on smol: >= 2x async-io's timer, or within 10 % of the floor |",
        "| async | storm on tokio: registration >= 1.5x faster than the executor's own timer |",
        "| async | storm on smol: bytes per task <= 0.9x the executor's own timer's |",
        "| direct | calloutng: direct execution cuts latency (p50 of direct below deferred's) |",
        "| insertion-cost | Little's law: the mean population the insertions found = λT within 5 % |",
        "| callout-memory | new table, sized at boot: bytes per callout against the paper's",
    ] {
        assert!(stdout.contains(name), "summary lacks {name}:\n{stdout}");
    }
    // Table II: counted under callgrind where valgrind is installed, skipped (and said so)
    // where it is not.
    let valgrind = callwheel_cli::callgrind::valgrind().is_some();
    if valgrind {
        assert!(
            stdout.contains("| table2 | untimeout (original) against t"),
            "{stdout}"
        );
        assert!(
            stdout.contains("| instructions | `Wheel<()>` instructions per cancel + start pair (the library's and the probe's call) at most 100"),
            "{stdout}"
        );
    } else {
        for experiment in ["table2", "instructions"] {
            let line = format!(
                "| {experiment} | instruction counts by callgrind | skipped: valgrind is not on PATH |"
            );
            assert!(stdout.contains(&line), "{stdout}");
        }
    }
    let report = std::fs::read_to_string(dir.join("REPORT.md")).unwrap();
    assert!(report.contains("## Table II"), "report lacks Table II");
    for part in [
        "| CPU |",
        "| clocksource |",
        "## Summary",
        "## The scheme family",
        "## Table I",
        "## W2 churn",
        "## W5 coalescing",
        "## Coalescing: the wheel's wake-ups",
        "## Latency: callwheel-rt timers",
        "## Sweep: requested against actual sleep",
        "| request µs | callwheel-rt, exact |",
        "## Stress: `start` latency",
        "| start, during the mass expiry |",
        "# Async timers: callwheel-async against tokio and async-io",
        "| requested µs | clock_nanosleep | clock_nanosleep + hand-off |",
        "| direct (C_DIRECT_EXEC) | 20 |",
        "| deferred (softclock thread) | 20 |",
    ] {
        assert!(report.contains(part), "report lacks {part:?}");
    }
    assert!(!report.contains("## Not run"), "every experiment runs");
    // The stress count check passed: nothing lost, nothing fired twice.
    assert!(
        stdout.contains("0 lost, 0 wrong;") && stdout.contains("0 timers wrong: ok"),
        "{stdout}"
    );
    for stem in [
        "family_w1",
        "table1",
        "coalescing",
        "sweep",
        "latency_histogram",
        "async-precision",
        "cost_model",
    ] {
        for ext in ["svg", "png"] {
            let path = dir.join(format!("{stem}.{ext}"));
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(bytes.len() > 1000, "{} is nearly empty", path.display());
        }
        assert!(
            report.contains(&format!("({stem}.png)")),
            "report does not show {stem}"
        );
    }
    let results = compare::load(&dir.join("results.json")).unwrap();
    let has = |exp: &str, structure: &str, metric: &str| {
        results
            .figures
            .iter()
            .any(|f| f.experiment == exp && f.structure == structure && f.metric == metric)
    };
    assert!(has("family", "ordered-list", "median_ns"));
    assert!(has("table1", "old", "median_ns"));
    assert!(has("table1", "old", "traversed_per_pair"));
    if valgrind {
        assert!(has("table2", "untimeout original", "instructions"));
        for structure in ["wheel-unit", "wheel-u64", "c-wheel"] {
            assert!(has("instructions", structure, "pair"), "{structure}");
        }
        assert!(dir.join("table2.png").exists() && report.contains("(table2.png)"));
    }
    assert!(has("peers", "delayqueue", "median_ns"));
    assert!(has("coalescing", "wheel", "optimum"));
    assert!(has("latency", "callwheel-rt", "wakeups"));
    for source in callwheel_cli::sweep::Source::ALL {
        assert!(has("sweep", source.name(), "p50_ns"), "{source:?}");
        assert!(has("sweep", source.name(), "p99_ns"), "{source:?}");
    }
    assert!(has("sweep", "callwheel-rt", "optimum"));
    assert!(has("stress", "callwheel-rt", "p99_ns"));
    assert!(has("stress", "callwheel-rt", "expiry_ns"));
    // Every sweep batch timer fired, none before its deadline; no stress timer was lost.
    for f in &results.figures {
        match (f.experiment.as_str(), f.metric.as_str()) {
            ("sweep", "before_deadline")
            | ("stress", "mass_lost" | "mass_wrong" | "churn_wrong") => {
                assert_eq!(f.value, 0.0, "{f:?}")
            }
            ("sweep", "fired") => {
                assert!(f.case.starts_with(&format!("batch {} ", f.value)), "{f:?}")
            }
            _ => {}
        }
    }
    // Every timer fired in W3 for the exact structures, and W5 kept every window.
    for f in &results.figures {
        if f.experiment == "peers" && f.metric.ends_with("violations") {
            assert_eq!(f.value, 0.0, "{f:?}");
        }
    }
    // compare A A: every figure shared, every ratio 1.
    let table = compare::table(&results, &results);
    assert!(table.contains(&format!(
        "{} figures in both runs (0 only in A, 0 only in B)",
        results.figures.len()
    )));
    let cli = callwheel(&[
        "compare",
        dir.join("results.json").to_str().unwrap(),
        dir.join("results.json").to_str().unwrap(),
    ]);
    assert!(cli.status.success());
    let text = String::from_utf8_lossy(&cli.stdout);
    let ratios: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| experiment"))
        .map(|l| l.trim_end_matches(" |").rsplit(" | ").next().unwrap())
        .collect();
    assert_eq!(ratios.len(), results.figures.len());
    assert!(ratios.iter().all(|r| *r == "1.000"), "{text}");
    // A stand-alone command is the same experiment: at repro's tiny plan it records exactly the
    // figures repro's section does.
    for (command, args) in [
        ("stress", &["stress", "--tiny", "--threads", "2"][..]),
        ("sweep", &["sweep", "--tiny"]),
    ] {
        let alone = temp(command);
        let mut all = args.to_vec();
        all.extend(["--json", "--out", alone.to_str().unwrap()]);
        let out = callwheel(&all);
        assert!(
            out.status.success(),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let names = |r: &Results| {
            let mut v: Vec<(String, String, String)> = r
                .figures
                .iter()
                .filter(|f| f.experiment == command)
                .map(|f| (f.structure.clone(), f.case.clone(), f.metric.clone()))
                .collect();
            v.sort();
            v
        };
        let own = compare::load(&alone.join("results.json")).unwrap();
        assert_eq!(
            own.figures.len(),
            names(&own).len(),
            "{command}: only its own"
        );
        assert!(!names(&own).is_empty());
        assert_eq!(names(&own), names(&results), "{command} alone and in repro");
        let _ = std::fs::remove_dir_all(&alone);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn results_round_trip_through_json() {
    let results = Results {
        version: "0.1.0".into(),
        machine: callwheel_bench::machine::Machine::read(),
        full: false,
        figures: vec![Figure {
            experiment: "peers".into(),
            structure: "wheel".into(),
            case: "w1 N=1000".into(),
            metric: "median_ns".into(),
            value: 12.5,
        }],
    };
    let text = serde_json::to_string(&results).unwrap();
    assert_eq!(serde_json::from_str::<Results>(&text).unwrap(), results);
    let mut faster = results.clone();
    faster.figures[0].value = 25.0;
    assert!(compare::table(&results, &faster).contains("| 12.5 | 25 | 2.000 |"));
}

#[test]
fn bad_input_is_a_one_line_error() {
    let file = temp("file");
    std::fs::write(&file, b"not a directory").unwrap();
    let cases: Vec<Vec<String>> = vec![
        vec!["repro".into(), "--only".into(), "nosuch".into()],
        vec!["repro".into(), "--only".into(), "sweep,nosuch".into()],
        vec![
            "repro".into(),
            "--tiny".into(),
            "--out".into(),
            file.join("sub").to_string_lossy().into(),
        ],
        vec![
            "compare".into(),
            "/nonexistent/a.json".into(),
            "/nonexistent/b.json".into(),
        ],
        vec![
            "compare".into(),
            file.to_string_lossy().into(),
            file.to_string_lossy().into(),
        ],
    ];
    for args in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = callwheel(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
    }
    let _ = std::fs::remove_file(&file);
}

#[test]
fn civil_dates_are_right() {
    use callwheel_bench::machine::civil_from_days;
    assert_eq!(civil_from_days(0), (1970, 1, 1));
    assert_eq!(civil_from_days(59), (1970, 3, 1));
    assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    assert_eq!(civil_from_days(20_414), (2025, 11, 22));
    assert_eq!(civil_from_days(-1), (1969, 12, 31));
}
