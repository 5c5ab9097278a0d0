//! `callwheel async`: the tiny run prints every precision cell, churn cell and storm as JSON,
//! the tables with their verdicts and the figure; the verdicts judge made-up figures as their
//! targets say; bad options are refused with a one-line error.

use std::process::{Command, Output};

use callwheel_bench::percentile::Summary;
use callwheel_bench::results::{Figure, Results};
use callwheel_cli::async_precision::{self, Cell, Precision, Source};

fn callwheel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_callwheel"))
        .args(args)
        .output()
        .expect("the callwheel binary runs")
}

#[test]
fn the_tiny_run_reports_every_cell_and_storm() {
    let dir = std::env::temp_dir().join(format!("callwheel-async-{}", std::process::id()));
    let out = callwheel(&["async", "--tiny", "--json", "--out", dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The tables go to stdout, the figures to DIR/results.json in repro's format.
    assert!(String::from_utf8_lossy(&out.stdout).contains("| verdict | result |"));
    let json: Results =
        serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
    // Eight sources by the tiny run's two requests.
    let mins: Vec<&Figure> = json.metric("async", "min_ns").collect();
    assert_eq!(mins.len(), 16);
    assert_eq!(json.metric("async", "p99_ns").count(), 16);
    let samples: Vec<&Figure> = json.metric("async", "samples").collect();
    assert_eq!(samples.len(), 16);
    assert!(samples.iter().all(|f| f.value == 3.0), "{samples:?}");
    for f in mins {
        let request_us: f64 = f.case["sleep ".len()..]
            .trim_end_matches(" us")
            .parse()
            .unwrap();
        // No source may end a sleep early.
        assert!(f.value >= request_us * 1_000.0, "{f:?}");
    }
    // Exact and tolerant intervals, none early (the counts against the optimum are checked
    // exactly on the simulated clock, in callwheel-async's tests).
    let early: Vec<&Figure> = json.metric("async", "early").collect();
    assert_eq!(early.len(), 2);
    for f in early {
        assert_eq!(f.value, 0.0, "{f:?}");
        for metric in ["ticks", "optimum"] {
            let v = json.value("async", &f.structure, &f.case, metric);
            assert!(v.unwrap() > 0.0, "{metric} of {f:?}");
        }
    }
    // Two variants by three task counts by eight cases: on tokio no timer, tokio's, pingora's,
    // async-io's and callwheel's; on smol no timer, async-io's and callwheel's.
    let churn: Vec<&Figure> = json.metric("async", "ops_per_sec").collect();
    assert_eq!(churn.len(), 48);
    for structure in [
        "no timer (the floor) on tokio (2 workers)",
        "pingora fast_timeout on tokio (2 workers)",
        "callwheel_async::timeout on smol (2 threads)",
    ] {
        assert_eq!(
            churn.iter().filter(|f| f.structure == structure).count(),
            6,
            "{structure}"
        );
    }
    assert!(churn.iter().all(|f| f.value > 0.0));
    // Start + cancel from 1 and 2 workers, on tokio's timer and callwheel's.
    let scaling: Vec<&Figure> = json.metric("async", "start_cancel_per_sec").collect();
    assert_eq!(scaling.len(), 4);
    assert!(scaling.iter().all(|f| f.value > 0.0));
    // Four timers and the two executors' no-timer floors; only the timers wake.
    let storms: Vec<&Figure> = json.metric("async", "register_s").collect();
    assert_eq!(storms.len(), 6);
    for f in storms {
        assert_eq!(f.case, "storm of 1000");
        assert!(f.value > 0.0);
        let floor = f.structure.starts_with("no timer");
        let woke = json.value("async", &f.structure, &f.case, "last_wake_after_ms");
        assert_eq!(woke.is_none(), floor, "{f:?}");
    }
    for ext in ["svg", "png"] {
        let bytes = std::fs::read(dir.join(format!("async-precision.{ext}"))).unwrap();
        assert!(bytes.len() > 1000, "async-precision.{ext} is nearly empty");
    }
    let _ = std::fs::remove_dir_all(&dir);
    let text = callwheel(&["async", "--tiny", "--tasks", "2"]);
    assert!(text.status.success());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("| verdict | result |"), "{text}");
    assert!(text.contains("churn B, 2 tasks"), "{text}");
    assert!(
        text.contains("precision: callwheel sleep, tokio multi-thread: p50 <= clock_nanosleep"),
        "{text}"
    );
    assert!(
        text.contains("| tokio (2 workers) | no timer (the floor) |"),
        "{text}"
    );
}

fn cell(source: Source, request_us: u64, p50_ns: u64) -> Cell {
    Cell {
        source,
        request_us,
        actual: Summary::of(source.name(), vec![p50_ns]).unwrap(),
    }
}

/// Figures made up so that callwheel on smol is 10 µs over the raw sleep at one request (on
/// the target) and 10.001 µs over at the other (past it), and 5 µs later than async-io at the
/// first; and callwheel on both tokio runtimes 15 µs over at 1 ms: past the current-thread
/// target (10 µs), within the multi-thread one (20 µs).
#[test]
fn the_precision_verdicts_hold_callwheel_to_raw_plus_10_or_20_us_and_to_async_io() {
    let mut cells = Vec::new();
    for (r, raw, io, cw) in [
        (100, 150_000, 155_000, 160_000),
        (1_000, 1_050_000, 1_070_000, 1_060_001),
    ] {
        for source in Source::ALL {
            let v = match source {
                Source::Raw => raw,
                Source::AsyncIoSmol => io,
                Source::CallwheelSmol => cw,
                Source::CallwheelCurrent | Source::CallwheelMulti if r == 1_000 => raw + 15_000,
                _ => raw + 1_000,
            };
            cells.push(cell(source, r, v));
        }
    }
    let p = Precision {
        samples: 1,
        requests_us: vec![100, 1_000],
        cells,
    };
    let v = async_precision::verdicts(&p);
    let find = |what: &str| {
        v.iter()
            .find(|v| v.what == what)
            .unwrap_or_else(|| panic!("no verdict {what}"))
            .result
            .clone()
    };
    let smol_raw = find("callwheel sleep, smol: p50 <= clock_nanosleep p50 + 10 us");
    assert!(smol_raw.starts_with("1 of 2 requests within"), "{smol_raw}");
    assert!(
        smol_raw.contains("over at 1000 us (+10.0 us)"),
        "{smol_raw}"
    );
    assert!(smol_raw.ends_with("missed"), "{smol_raw}");
    let smol_io = find("callwheel sleep, smol: p50 <= async-io Timer's p50 (on smol)");
    assert!(smol_io.starts_with("1 of 2 requests within"), "{smol_io}");
    assert!(smol_io.contains("over at 100 us (+5.0 us)"), "{smol_io}");
    assert!(smol_io.ends_with("missed"), "{smol_io}");
    // 15 µs over at 1 ms: within the multi-thread runtime's 20 µs, past the current-thread's 10.
    let multi = find("callwheel sleep, tokio multi-thread: p50 <= clock_nanosleep p50 + 20 us");
    assert!(multi.starts_with("2 of 2 requests within"), "{multi}");
    assert!(multi.ends_with("met"), "{multi}");
    let current = find("callwheel sleep, tokio current-thread: p50 <= clock_nanosleep p50 + 10 us");
    assert!(current.contains("over at 1000 us (+15.0 us)"), "{current}");
    assert!(current.ends_with("missed"), "{current}");
    let multi_io =
        find("callwheel sleep, tokio multi-thread: p50 <= async-io Timer's p50 (on smol)");
    assert!(multi_io.starts_with("2 of 2 requests within"), "{multi_io}");
    assert!(multi_io.ends_with("met"), "{multi_io}");
}

#[test]
fn bad_options_are_refused() {
    let file = std::env::temp_dir().join(format!("callwheel-async-file-{}", std::process::id()));
    std::fs::write(&file, b"not a directory").unwrap();
    let below = file.join("figures");
    for args in [
        &["async", "--tasks", "0"][..],
        &["async", "--ops", "0"],
        &["async", "--samples", "0"],
        &["async", "--sleepers", "100000000"],
        &["async", "--quick", "--tiny"],
        &["async", "--storm-child", "no-such-case"],
        &["async", "--tiny", "--out", below.to_str().unwrap()],
    ] {
        let out = callwheel(args);
        assert!(!out.status.success(), "{args:?} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("error"), "{args:?}: {err}");
    }
    let _ = std::fs::remove_file(&file);
}
