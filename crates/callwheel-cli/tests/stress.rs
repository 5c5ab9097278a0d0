//! `callwheel stress` at a tiny size: the count check holds (every timer fired exactly once or
//! was stopped), the table is complete, the JSON parses, bad input is refused. Never timing.

use std::process::{Command, Output};

use callwheel_bench::results::Results;

use callwheel_cli::stress::{self, StressArgs};
use indicatif::ProgressBar;

fn callwheel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_callwheel"))
        .args(args)
        .output()
        .expect("the callwheel binary runs")
}

#[test]
fn every_timer_fires_exactly_once_or_is_stopped() {
    let plan = StressArgs {
        sizes: callwheel_cli::flags::Sizes {
            tiny: true,
            quick: false,
        },
        threads: 3,
        ..StressArgs::default()
    }
    .plan();
    assert_eq!((plan.threads, plan.timers), (3, 2_000));
    let report = stress::measure(&plan, &ProgressBar::hidden()).unwrap();
    let c = &report.counts;
    assert!(c.ok(), "{c:?}");
    assert_eq!(c.mass_fired + c.mass_cancelled, plan.timers, "{c:?}");
    assert_eq!((c.mass_lost, c.mass_wrong, c.churn_wrong), (0, 0, 0));
    assert_eq!(c.churn_fired + c.churn_cancelled, c.churn_armings);
    assert!(report.start_all.calls > 0 && report.stop_all.calls > 0);
    assert!(report.start_during.calls <= report.start_all.calls);
    // The throughput runs: one thread then two, every call counted as one kind.
    let sc = &report.scaling;
    assert_eq!(
        sc.runs.iter().map(|r| r.threads).collect::<Vec<_>>(),
        [1, 2]
    );
    for r in &sc.runs {
        assert!(
            r.starts > 0 && r.ops == r.starts + r.stops + r.resets,
            "{r:?}"
        );
        // A timer is stopped or re-armed only while pending, which only a start makes it.
        assert!(r.stops <= r.starts, "{r:?}");
    }
    assert!(sc.speedup > 0.0 && sc.speedup.is_finite());
    let text = stress::render(&report);
    for row in [
        "| start, during the mass expiry |",
        "| start, whole run |",
        "| stop, whole run |",
        "| threads |",
        "| Mcalls/s |",
        "scaling from 1 to 2 threads",
    ] {
        assert!(text.contains(row), "{row} missing in\n{text}");
    }
    assert!(text.contains(": ok\n"), "{text}");
    assert!(
        !text.contains("starts: met"),
        "2 000 timers judged the 1e6 target:\n{text}"
    );
    assert!(text.contains("target: start p99 during the mass expiry < 50 µs"));
}

#[test]
fn the_command_prints_json_and_rejects_bad_input() {
    let dir = std::env::temp_dir().join(format!("callwheel-stress-{}", std::process::id()));
    let out = callwheel(&[
        "stress",
        "--tiny",
        "--json",
        "--threads",
        "2",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The table goes to stdout, the figures to DIR/results.json in repro's format.
    assert!(String::from_utf8_lossy(&out.stdout).contains("| start, whole run |"));
    let json: Results =
        serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let mass = |metric| {
        json.value(
            "stress",
            "callwheel-rt",
            "mass expiry of 2000 timers",
            metric,
        )
        .unwrap_or_else(|| panic!("no {metric}"))
    };
    assert_eq!(mass("mass_fired") + mass("mass_cancelled"), 2_000.0);
    assert_eq!(mass("mass_lost"), 0.0);
    assert_eq!(mass("mass_wrong"), 0.0);
    for metric in ["p50_ns", "p99_ns", "max_ns"] {
        let v = json.value("stress", "callwheel-rt", "start during mass expiry", metric);
        assert!(v.is_some(), "{metric}");
    }
    for bad in [
        &["stress", "--threads", "0"][..],
        &["stress", "--timers", "0"],
        &["stress", "--duration-ms", "-1"],
        &["stress", "--tiny", "--quick"],
    ] {
        let out = callwheel(bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with("error: "), "{bad:?}: {stderr}");
    }
}

#[test]
fn the_start_target_is_judged_only_at_its_size() {
    use stress::{Counts, Latency, Plan, Scaling, StressReport};
    let report = |timers: u64, p99: u64| StressReport {
        plan: Plan {
            threads: 2,
            timers,
            duration_ms: 1,
            scaling_timers: 1,
            scaling_ms: 1,
        },
        shards: 2,
        cpus: 2,
        max_expiries_per_lock: 64,
        arm_ns: 0,
        began_during_arming: false,
        first_late_ns: 0,
        expiry_ns: 0,
        start_all: Latency::default(),
        start_during: Latency {
            calls: 1_000,
            p50: 1_000,
            p99,
            p999: p99,
            max: p99,
        },
        stop_all: Latency::default(),
        counts: Counts::default(),
        budget_yields: 0,
        rss_before_kib: 0,
        rss_armed_kib: 0,
        rss_peak_kib: 0,
        steal_percent: None,
        scaling: Scaling {
            timers: 1,
            duration_ms: 1,
            runs: Vec::new(),
            speedup: 1.0,
        },
    };
    assert!(stress::start_verdict(&report(1_000_000, 49_999)).ends_with(": met"));
    // "Under 50 µs": 50 µs itself is not.
    assert!(stress::start_verdict(&report(1_000_000, 50_000)).contains("missed"));
    // 2 000 timers are not the target's 1e6: never "met"; a miss is still a miss.
    let small = stress::start_verdict(&report(2_000, 10_000));
    assert!(
        !small.ends_with(": met") && small.contains("not judged"),
        "{small}"
    );
    assert!(stress::start_verdict(&report(2_000, 60_000)).contains("missed"));
}
