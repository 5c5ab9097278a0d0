//! `callwheel table1`: the table's structure and counts at tiny sizes (never timing), the
//! result line's round trip, and bad input.

use std::process::{Command, Output};

use callwheel_cli::table1::{self, Interface, Measurement};

fn callwheel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_callwheel"))
        .args(args)
        .output()
        .expect("the callwheel binary runs")
}

#[test]
fn every_interface_measures_and_keeps_every_callout() {
    for iface in Interface::ALL {
        for n in [0, 1, 300] {
            // measure() checks that all N + 1 callouts are still pending after the pairs.
            let m = table1::measure(iface, n, 50, 2).unwrap();
            assert_eq!(m.samples.len(), 2);
            assert!(m.samples.iter().all(|s| s.is_finite() && *s > 0.0));
            assert_eq!(m.bytes_per_callout.is_some(), n > 0);
            // Counted, not timed: the old list's pairs walk it twice, handles walk nothing.
            match iface {
                Interface::Old => assert_eq!(m.traversed, 2.0 * n as f64, "N = {n}"),
                Interface::Handle | Interface::Wheel => assert_eq!(m.traversed, 0.0),
                Interface::Hash => assert!(m.traversed <= 8.0, "N = {n}: {}", m.traversed),
            }
        }
    }
}

#[test]
fn result_line_round_trips() {
    let m = Measurement {
        samples: vec![1.5, 2.25],
        bytes_per_callout: Some(48.0),
        traversed: 2000.0,
    };
    assert_eq!(Measurement::from_line(&m.to_line()), Ok(m));
    let none = Measurement {
        samples: vec![3.0],
        bytes_per_callout: None,
        traversed: 1.5,
    };
    assert_eq!(Measurement::from_line(&none.to_line()), Ok(none));
    for bad in [
        "",
        r#"callwheel-result {"samples":[1],"bytes_per_callout":null,"traversed":1.0}"#,
        r#"callwheel-table1 {"samples":[],"bytes_per_callout":null,"traversed":1.0}"#,
        r#"callwheel-table1 {"samples":[1]}"#,
        r#"callwheel-table1 {"samples":["x"],"bytes_per_callout":null,"traversed":1.0}"#,
        r#"callwheel-table1 {"samples":[1],"bytes_per_callout":null,"traversed":1.0,"extra":3}"#,
        r#"callwheel-table1 {"samples":[1],"bytes_per_callout":null,"traversed":"x"}"#,
        "callwheel-table1 samples=1 bytes=- traversed=1",
    ] {
        assert!(Measurement::from_line(bad).is_err(), "{bad:?} parsed");
    }
}

#[test]
fn old_list_pairs_shrink_with_n_within_bounds() {
    assert_eq!(Interface::Old.pairs(0), table1::PAIRS);
    assert_eq!(Interface::Old.pairs(1000), table1::PAIRS);
    assert_eq!(
        Interface::Old.pairs(100_000),
        table1::OLD_WORK / 200_000,
        "each pair walks the list twice"
    );
    assert_eq!(Interface::Old.pairs(u64::MAX), table1::OLD_MIN_PAIRS);
    assert_eq!(Interface::Handle.pairs(1_000_000), table1::PAIRS);
}

#[test]
fn table1_command_prints_the_table_and_writes_the_plot() {
    let dir = std::env::temp_dir().join(format!("callwheel-table1-{}", std::process::id()));
    let out = callwheel(&[
        "table1",
        "--n",
        "0,50,200",
        "--reps",
        "1",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| N"))
        .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
        .collect();
    assert_eq!(rows.len(), 6, "the times, then the counts: {text}");
    for (row, n) in rows.iter().zip(["0", "50", "200"]) {
        assert_eq!(row[0], n);
        assert_eq!(row.len(), 6, "N + four interfaces + ratio: {row:?}");
        for cell in &row[1..5] {
            assert!(cell.parse::<f64>().is_ok(), "cell {cell:?} in {row:?}");
        }
    }
    for (row, n) in rows[3..].iter().zip([0, 50, 200]) {
        assert_eq!(row.len(), 5, "N + four interfaces: {row:?}");
        assert_eq!(row[1], (2 * n).to_string(), "old: 2N entries per pair");
        assert_eq!(&row[3..], ["0", "0"], "handles traverse nothing");
    }
    assert!(text.contains("old callout:"), "{text}");
    assert!(text.contains("2N at every N"), "{text}");
    assert!(text.contains("handle / hash:"), "{text}");
    let svg = std::fs::read_to_string(dir.join("table1.svg")).unwrap();
    assert!(svg.starts_with("<svg"));
    for file in ["table1.png", "table1_paper.svg", "table1_paper.png"] {
        assert!(dir.join(file).exists(), "{file} not written");
    }
    for label in [
        "old callout (list)",
        "new callout, hash",
        "new callout, handle",
        "ns per cancel + set",
    ] {
        assert!(svg.contains(label), "plot lacks {label:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_is_a_one_line_error() {
    for args in [
        &["table1", "--n", "100000000"][..],
        &["table1", "--reps", "0"],
        &["table1-one", "--interface", "nosuch", "--n", "1"],
        &["table1-one", "--interface", "old", "--n", "100000000"],
    ] {
        let out = callwheel(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    let dir = std::env::temp_dir().join(format!("callwheel-table1-file-{}", std::process::id()));
    std::fs::write(&dir, b"not a directory").unwrap();
    let out = callwheel(&[
        "table1",
        "--n",
        "0",
        "--reps",
        "1",
        "--out",
        dir.to_str().unwrap(),
    ]);
    // Refused as bad input before anything is measured, as every command refuses it.
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "it measured first");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot create"), "{stderr}");
    let _ = std::fs::remove_file(&dir);
}
