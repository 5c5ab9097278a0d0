//! `callwheel sweep` at a tiny size: every source gets every sample, every batch timer fires
//! exactly once and never before its deadline, the tables and the JSON are complete, and bad
//! input is refused. Never timing.

use std::process::{Command, Output};

use callwheel_cli::sweep::{self, Source, SweepArgs, BATCH_TOLERANCES};
use indicatif::ProgressBar;

fn callwheel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_callwheel"))
        .args(args)
        .output()
        .expect("the callwheel binary runs")
}

fn tiny() -> SweepArgs {
    SweepArgs {
        tiny: true,
        ..SweepArgs::default()
    }
}

#[test]
fn every_source_sleeps_every_request_and_every_batch_timer_fires_once() {
    let plan = tiny().plan();
    assert_eq!(plan.requests_us, [1, 100, 1_000]);
    let report = sweep::measure(&plan, &ProgressBar::hidden()).unwrap();
    assert_eq!(
        report.cells.len(),
        plan.requests_us.len() * Source::ALL.len()
    );
    for &r in &plan.requests_us {
        for s in Source::ALL {
            let c = report
                .cell(s, r)
                .unwrap_or_else(|| panic!("{s:?} at {r} us"));
            assert_eq!(c.actual.samples as u64, plan.samples, "{s:?} at {r} us");
            assert_eq!(c.actual.sorted.len() as u64, plan.samples);
            // No source wakes before its request: every clock is monotonic.
            assert!(c.actual.min >= r * 1_000, "{s:?} at {r} us woke early");
        }
    }
    assert_eq!(report.batches.len(), BATCH_TOLERANCES.len());
    for b in &report.batches {
        assert_eq!(b.fired, b.timers, "{b:?}");
        assert_eq!((b.never, b.twice, b.before_deadline), (0, 0, 0), "{b:?}");
        assert!(b.optimum >= 1 && b.optimum <= b.timers, "{b:?}");
        assert!(b.wakeups >= 1, "{b:?}");
    }
    assert!(report.counts_ok());
    let text = sweep::render(&report);
    assert_eq!(
        text.matches("| request µs | callwheel-rt, exact |").count(),
        2
    );
    for r in ["| 1 |", "| 100 |", "| 1000 |"] {
        assert_eq!(text.matches(r).count(), 3, "{r} rows in\n{text}");
    }
    assert!(text.contains("| 0 % |") && text.contains("| 5 % |"));
    assert!(text.contains("exact: callwheel p50 - raw p50 per request (target <= +5 us)"));
    assert!(text.contains("wake-ups / optimum (target <= 1.05)"));
    assert!(text.contains("idle runtime (one timer 1 h away)"));
}

#[test]
fn plans_resolve_defaults_and_explicit_sizes() {
    let default = SweepArgs::default().plan();
    assert_eq!(default.requests_us, sweep::REQUESTS_US);
    assert_eq!((default.samples, default.batch_timers), (100, 1_000));
    let custom = SweepArgs {
        samples: Some(7),
        requests_us: vec![500, 5, 500],
        quick: true,
        ..SweepArgs::default()
    }
    .plan();
    assert_eq!(custom.requests_us, [5, 500]);
    assert_eq!(custom.samples, 7);
}

#[test]
fn the_command_prints_json_and_rejects_bad_input() {
    let out = callwheel(&["sweep", "--tiny", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["cells"].as_array().unwrap().len(), 15);
    assert_eq!(json["batches"].as_array().unwrap().len(), 2);
    assert_eq!(json["cells"][0]["actual"]["samples"], 3);
    assert!(json["idle"]["wakeups"].is_u64());
    let dir = std::env::temp_dir().join(format!("callwheel-sweep-plot-{}", std::process::id()));
    let out = callwheel(&["sweep", "--tiny", "--plot", dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for ext in ["svg", "png"] {
        let bytes = std::fs::read(dir.join(format!("sweep.{ext}"))).unwrap();
        assert!(bytes.len() > 1000, "sweep.{ext} is nearly empty");
    }
    let _ = std::fs::remove_dir_all(&dir);
    for bad in [
        &["sweep", "--samples", "0"][..],
        &["sweep", "--requests-us", "0"],
        &["sweep", "--requests-us", "10,x"],
        &["sweep", "--tiny", "--quick"],
        &["sweep", "--span-ms", "0"],
    ] {
        let out = callwheel(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with("error: "), "{bad:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{bad:?}: {stderr}");
    }
}
