//! `callwheel latency`: the table's structure and sample counts at a tiny size (never
//! timing), the percentile arithmetic, and bad input.

use std::process::{Command, Output};

use callwheel_bench::percentile::Summary;
use callwheel_cli::latency::{self, LatencyArgs};

fn callwheel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_callwheel"))
        .args(args)
        .output()
        .expect("the callwheel binary runs")
}

#[test]
fn every_source_gets_every_sample() {
    let args = LatencyArgs {
        samples: 20,
        period_us: 1_000,
        load: false,
        spin_us: 0,
    };
    let report = latency::measure(&args).unwrap();
    let sources: Vec<&str> = report.rows.iter().map(|r| r.source).collect();
    assert_eq!(
        sources,
        [
            "callwheel-rt (callback)",
            "callwheel-rt (wake-up)",
            "clock_nanosleep (raw)"
        ]
    );
    for r in &report.rows {
        assert_eq!(r.samples, 20, "{}", r.source);
        assert!(r.min <= r.p50 && r.p50 <= r.p99 && r.p99 <= r.p999 && r.p999 <= r.max);
        assert!(r.min <= r.avg && r.avg <= r.max);
    }
    // The driver woke. Not "once per firing": on a loaded machine a late wake-up can find the
    // next timer due as well and fire both, which is the point of coalescing.
    assert!(report.wakeups >= 1, "{} wake-ups", report.wakeups);
    let text = latency::render(&report);
    assert!(text
        .contains("| source | samples | min µs | avg µs | p50 µs | p99 µs | p99.9 µs | max µs |"));
    assert_eq!(text.matches("| ratio ").count(), 2);
    assert!(text.contains("targets (callback vs raw, same run)"));
}

/// With the runtime's spin on, the report counts the spins and prints their CPU cost; off,
/// it says nothing of them and the driver never spins.
#[test]
fn a_spin_is_counted_and_its_cost_reported() {
    let run = |spin_us| {
        latency::measure(&LatencyArgs {
            samples: 10,
            period_us: 1_000,
            load: false,
            spin_us,
        })
        .unwrap()
    };
    // The longest spin: it is reached unless every wake-up of the run is a millisecond late.
    let spinning = run(1_000);
    assert!(spinning.spins >= 1 && spinning.spin_ns > 0);
    assert!(spinning.elapsed_ns > spinning.spin_ns / spinning.spins);
    let text = latency::render(&spinning);
    assert!(text.contains("driver spin: 1000 µs"), "{text}");
    assert!(text.contains("of one CPU over the run"), "{text}");
    let plain = run(0);
    assert_eq!((plain.spins, plain.spin_ns), (0, 0));
    let text = latency::render(&plain);
    assert!(!text.contains("of one CPU"), "{text}");
}

#[test]
fn percentiles_are_nearest_rank() {
    let r = Summary::of("x", (1..=1000).rev().collect()).unwrap();
    assert_eq!(
        (r.samples, r.min, r.avg, r.p50, r.p99, r.p999, r.max),
        (1000, 1, 500, 500, 990, 999, 1000)
    );
    let one = Summary::of("y", vec![7]).unwrap();
    assert_eq!((one.p50, one.p99, one.p999), (7, 7, 7));
    assert!(Summary::of("z", Vec::new()).is_none());
}

#[test]
fn the_command_prints_the_table_and_rejects_bad_input() {
    let dir = std::env::temp_dir().join(format!("callwheel-latency-{}", std::process::id()));
    let out = callwheel(&[
        "latency",
        "--samples",
        "5",
        "--period-us",
        "1000",
        "--load",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The lateness histogram goes to --out.
    for ext in ["svg", "png"] {
        let path = dir.join(format!("latency_histogram.{ext}"));
        assert!(
            std::fs::metadata(&path).is_ok_and(|m| m.len() > 1000),
            "{path:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("load: one spinning thread per CPU"));
    assert_eq!(text.matches("| callwheel-rt (").count(), 2);
    assert_eq!(text.matches("| clock_nanosleep (raw) | 5 |").count(), 1);
    for bad in [
        &["latency", "--samples", "0"][..],
        &["latency", "--period-us", "5"],
        &["latency", "--spin-us", "1001"],
        // A directory that exists but takes no files (even for root) is refused before
        // anything is measured.
        &["latency", "--out", "/proc"],
    ] {
        let out = callwheel(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(out.stdout.is_empty(), "{bad:?} measured first");
    }
}
