//! `callwheel async`: the tiny run prints every precision cell, churn cell and storm as JSON,
//! the tables with their verdicts and the figure; the verdicts judge made-up figures as their
//! targets say; bad options are refused with a one-line error.

use std::process::{Command, Output};

use callwheel_cli::async_precision::{self, Cell, Precision, Source};
use callwheel_cli::latency::Row;

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
    // The tables go to stdout, the figures to DIR/results.json.
    assert!(String::from_utf8_lossy(&out.stdout).contains("| verdict | result |"));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
    // Eight sources by the tiny run's two requests, each with its three samples.
    let cells = json["precision"]["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 16);
    for c in cells {
        assert_eq!(c["actual"]["samples"], 3);
        let request_ns = c["request_us"].as_u64().unwrap() * 1_000;
        // No source may end a sleep early.
        assert!(c["actual"]["min"].as_u64().unwrap() >= request_ns, "{c}");
    }
    // Exact and tolerant intervals, none early (the counts against the optimum are checked
    // exactly on the simulated clock, in callwheel-async's tests).
    let coalescing = json["coalescing"].as_array().unwrap();
    assert_eq!(coalescing.len(), 2);
    for c in coalescing {
        assert!(c["ticks"].as_u64().unwrap() > 0, "{c}");
        assert_eq!(c["early"], 0, "{c}");
        assert!(c["optimum"].as_u64().unwrap() > 0, "{c}");
    }
    // Two variants by three task counts by three timers.
    let churn = json["churn"].as_array().unwrap();
    assert_eq!(churn.len(), 18);
    assert!(churn
        .iter()
        .all(|c| c["ops_per_sec"].as_f64().unwrap() > 0.0));
    // Four timers and the two executors' no-timer floors.
    let storms = json["storms"].as_array().unwrap();
    assert_eq!(storms.len(), 6);
    for s in storms {
        assert_eq!(s["sleepers"], 1000);
        assert!(s["register_s"].as_f64().unwrap() > 0.0);
        let floor = s["case"].as_str().unwrap().ends_with("None");
        assert_eq!(s["last_wake_after_ms"].is_null(), floor, "{s}");
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
        actual: Row::of(source.name(), vec![p50_ns]).unwrap(),
    }
}

/// Figures made up so that callwheel on smol is 10 µs over the raw sleep at one request (on
/// the target) and 10.001 µs over at the other (past it), and 5 µs later than async-io at the
/// first.
#[test]
fn the_precision_verdicts_hold_callwheel_to_raw_plus_10_us_and_to_async_io() {
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
    // The other executors' callwheel rows lie 1 µs over the raw sleep: within.
    let multi = find("callwheel sleep, tokio multi-thread: p50 <= clock_nanosleep p50 + 10 us");
    assert!(multi.ends_with("met"), "{multi}");
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
