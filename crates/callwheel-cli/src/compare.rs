//! `callwheel compare A.json B.json`: the ratio B / A of every figure the two runs share.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use callwheel_bench::results::{Figure, Results};

/// Reads a `results.json`.
pub fn load(path: &Path) -> Result<Results, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a results file: {e}", path.display()))
}

fn key(f: &Figure) -> (String, String, String, String) {
    (
        f.experiment.clone(),
        f.structure.clone(),
        f.case.clone(),
        f.metric.clone(),
    )
}

/// The comparison table: one row per figure present in both runs, with B / A.
pub fn table(a: &Results, b: &Results) -> String {
    let before: BTreeMap<_, f64> = a.figures.iter().map(|f| (key(f), f.value)).collect();
    let mut out = String::from(
        "| experiment | structure | case | metric | A | B | B / A |\n|---|---|---|---|---:|---:|---:|\n",
    );
    let mut shared = 0;
    for f in &b.figures {
        if let Some(&va) = before.get(&key(f)) {
            shared += 1;
            let ratio = if va != 0.0 {
                format!("{:.3}", f.value / va)
            } else if f.value == 0.0 {
                "1.000".to_string()
            } else {
                "-".to_string()
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {ratio} |",
                f.experiment, f.structure, f.case, f.metric, va, f.value
            );
        }
    }
    let _ = writeln!(
        out,
        "\n{shared} figures in both runs ({} only in A, {} only in B).",
        a.figures.len() - shared.min(a.figures.len()),
        b.figures.len() - shared
    );
    out
}
