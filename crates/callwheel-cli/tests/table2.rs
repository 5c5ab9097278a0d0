//! `callwheel table2`: instruction counts under callgrind (when valgrind is on PATH), the
//! driver on its own, and a clean skip without valgrind. Counts, never times.

use std::process::{Command, Output};

use callwheel_cli::table2::driver::{Point, Scenario};
use callwheel_cli::table2::LINES;

fn callwheel(args: &[&str], path: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_callwheel"));
    command.args(args);
    if let Some(path) = path {
        command.env("PATH", path);
    }
    command.output().expect("the callwheel binary runs")
}

fn temp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("callwheel-table2-{name}-{}", std::process::id()))
}

#[test]
fn the_driver_prints_one_line_per_point_and_counts_t_and_h() {
    let out = callwheel(&["table2-driver", "--tiny"], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let points: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("callwheel-table2 "))
        .collect();
    let expected: usize = Scenario::ALL.iter().map(|s| s.xs(true).len()).sum();
    assert_eq!(points.len(), expected, "{text}");
    // t and h are what the table counted: every entry before the callout, and the chain's
    // other entries.
    for (scenario, xs) in [
        (Scenario::OldList, [0, 8, 32]),
        (Scenario::NewChain, [0, 1, 2]),
    ] {
        for x in xs {
            let point = Point {
                scenario: scenario.name().to_string(),
                x: f64::from(x),
            };
            let line = callwheel_bench::child_line::write("callwheel-table2", &point);
            assert!(points.contains(&line.as_str()), "{line} missing:\n{text}");
        }
    }
}

#[test]
fn without_valgrind_the_experiment_is_skipped_and_says_so() {
    let dir = temp("skip");
    let out = callwheel(
        &["table2", "--tiny", "--out", dir.to_str().unwrap()],
        Some("/nonexistent"),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("Skipped: valgrind is not on PATH"), "{text}");
    assert!(!dir.join("table2.png").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn under_callgrind_the_forms_match_the_papers() {
    if callwheel_cli::callgrind::valgrind().is_none() {
        eprintln!("valgrind is not on PATH: nothing to count");
        return;
    }
    let dir = temp("run");
    let out = callwheel(&["table2", "--tiny", "--out", dir.to_str().unwrap()], None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("| function | new version: paper | new version: ours |"),
        "{text}"
    );
    // Every line of the paper's table, judged: the original's set, cancel, interrupt and
    // softclock grow by a cost per entry they traverse, the new softclock by the callouts it
    // meets, the new untimeout with its hash chain; the new calls by handle and the new
    // interrupt do not grow with the callouts outstanding.
    for line in &LINES {
        let what = format!(
            "- {} ({}) against {}",
            line.function.name(),
            line.version.name(),
            line.var
        );
        let paper = if line.paper_fit.1 == 0.0 {
            "constant, the paper's constant: match".to_string()
        } else {
            format!(
                "linear in {v}, the paper's linear in {v}: match",
                v = line.var
            )
        };
        let found: Vec<&str> = text.lines().filter(|l| l.starts_with(&what)).collect();
        assert!(!found.is_empty(), "no {what:?} line:\n{text}");
        for l in found {
            assert!(l.contains(&paper), "{l}");
        }
    }
    assert_eq!(
        text.matches(": match").count(),
        LINES.len(),
        "one verdict per line:\n{text}"
    );
    for ext in ["svg", "png"] {
        let bytes = std::fs::read(dir.join(format!("table2.{ext}"))).unwrap();
        assert!(bytes.len() > 1000, "table2.{ext} is nearly empty");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
