//! `callwheel async`: the tiny run prints every churn cell and storm as JSON and the tables
//! with their verdicts; bad options are refused with a one-line error.

use std::process::{Command, Output};

fn callwheel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_callwheel"))
        .args(args)
        .output()
        .expect("the callwheel binary runs")
}

#[test]
fn the_tiny_run_reports_every_cell_and_storm() {
    let out = callwheel(&["async", "--tiny", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Two variants by three task counts by three timers.
    let churn = json["churn"].as_array().unwrap();
    assert_eq!(churn.len(), 18);
    assert!(churn
        .iter()
        .all(|c| c["ops_per_sec"].as_f64().unwrap() > 0.0));
    let storms = json["storms"].as_array().unwrap();
    assert_eq!(storms.len(), 4);
    for s in storms {
        assert_eq!(s["sleepers"], 1000);
        assert!(s["register_s"].as_f64().unwrap() > 0.0);
    }
    let text = callwheel(&["async", "--tiny", "--tasks", "2"]);
    assert!(text.status.success());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("| verdict | result |"), "{text}");
    assert!(text.contains("churn B, 2 tasks"), "{text}");
}

#[test]
fn bad_options_are_refused() {
    for args in [
        &["async", "--tasks", "0"][..],
        &["async", "--ops", "0"],
        &["async", "--sleepers", "100000000"],
        &["async", "--quick", "--tiny"],
        &["async", "--storm-child", "no-such-case"],
    ] {
        let out = callwheel(args);
        assert!(!out.status.success(), "{args:?} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("error"), "{args:?}: {err}");
    }
}
