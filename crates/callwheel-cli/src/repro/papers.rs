//! The papers' experiments on the structures alone: the scheme family of Varghese & Lauck on W1
//! (Table I's shape) and W3, Costello & Varghese's Table I / Figure 8 through the callout
//! interfaces, and their Table II by callgrind.

use std::path::Path;

use crate::table1;
use crate::table2;
use callwheel_bench::plan::Settings;
use callwheel_bench::registry::{Role, SchemeInfo, SCHEMES};
use callwheel_bench::report;
use callwheel_bench::sections;

use crate::experiment::{Experiment, Section, Size};
use callwheel_bench::plots::{Chart, Series};

/// `family`: The scheme family on W1 and W3.
pub(super) struct Family;

impl Experiment for Family {
    fn name(&self) -> &'static str {
        "family"
    }

    fn about(&self) -> &'static str {
        "The scheme family on W1 and W3"
    }

    fn run(&self, size: Size, out: &Path) -> Section {
        family(size, out)
    }
}

/// `table1`: Table I / Figure 8 through the callout interfaces.
pub(super) struct Table1;

impl Experiment for Table1 {
    fn name(&self) -> &'static str {
        "table1"
    }

    fn about(&self) -> &'static str {
        "Table I / Figure 8 through the callout interfaces"
    }

    fn run(&self, size: Size, out: &Path) -> Section {
        table1_experiment(size, out)
    }
}

/// `table2`: Table II: instructions per timer function, by callgrind.
pub(super) struct Table2;

impl Experiment for Table2 {
    fn name(&self) -> &'static str {
        "table2"
    }

    fn about(&self) -> &'static str {
        "Table II: instructions per timer function, by callgrind"
    }

    fn run(&self, size: Size, out: &Path) -> Section {
        table2_experiment(size, out)
    }
}

pub(super) fn family(size: Size, out: &Path) -> Section {
    let mut done = Section::default();
    let mut settings = Settings::standard();
    match size {
        Size::Tiny => {
            settings = Settings::tiny();
            settings.w1_sizes = vec![0, 100, 1_000];
        }
        Size::Default => {
            settings.w1_sizes = vec![0, 1_000, 10_000, 100_000];
            settings.w1_iters = 50_000;
            settings.w3_timers = 100_000;
            settings.w3_ticks = 10_000;
            settings.set_reps(3);
        }
        Size::Full => {}
    }
    let schemes: Vec<&'static SchemeInfo> =
        SCHEMES.iter().filter(|s| s.role != Role::Peer).collect();
    let bar = sections::progress_bar(sections::jobs(&settings, &schemes, &["w1", "w3"]));
    let mut failures = 0;
    let (w1, md1) = sections::w1(&settings, &schemes, &bar, &mut failures);
    let (w3, md3) = sections::w3(&settings, &schemes, &bar, &mut failures);
    bar.finish_and_clear();
    done.failures = failures;
    done.markdown
        .push_str("## The scheme family (Varghese & Lauck), W1 and W3\n");
    done.markdown.push_str(&md1);
    for r in &w1 {
        done.figures.outcome(
            "family",
            r.scheme.name,
            &format!("w1 N={}", r.n),
            &r.outcome,
        );
    }
    let series: Vec<Series> = schemes
        .iter()
        .map(|s| Series {
            label: s.name.to_string(),
            points: w1
                .iter()
                .filter(|r| r.scheme.name == s.name && r.n > 0)
                .filter_map(|r| report::median_of(&r.outcome).map(|m| (r.n as f64, m)))
                .collect(),
            reference: false,
        })
        .collect();
    done.plot(
        &Chart {
            title: "W1: cancel + start with N timers outstanding (Figure 8, extended)".into(),
            x_desc: "N, timers outstanding".into(),
            y_desc: "ns per cancel + start pair (median)".into(),
            log_x: true,
            log_y: true,
            series,
            legend_right: true,
            legend_bottom: false,
        },
        out,
        "family_w1",
    );
    done.markdown.push_str(&md3);
    for r in &w3 {
        done.figures
            .outcome("family", r.scheme.name, "w3", &r.outcome);
    }
    let at = |name: &str, n: u64| {
        w1.iter()
            .find(|r| r.scheme.name == name && r.n == n)
            .and_then(|r| report::median_of(&r.outcome))
    };
    let sizes: Vec<u64> = settings
        .w1_sizes
        .iter()
        .copied()
        .filter(|&n| n > 0)
        .collect();
    if let (Some(&lo), Some(&hi)) = (sizes.first(), sizes.iter().rfind(|&&n| n <= 10_000)) {
        if hi > lo {
            if let (Some(a), Some(b)) = (at("ordered-list", lo), at("ordered-list", hi)) {
                done.find(
                    "family",
                    format!("Scheme 2 (ordered list), W1 at N = {hi} vs N = {lo}"),
                    format!(
                        "{:.1}x: {}",
                        b / a,
                        if b > 2.0 * a {
                            "grows with N, as Table I"
                        } else {
                            "does not grow"
                        }
                    ),
                );
            }
        }
    }
    for name in ["hashed-wheel", "hierarchical-full", "wheel"] {
        let ms: Vec<f64> = sizes.iter().filter_map(|&n| at(name, n)).collect();
        if ms.len() >= 2 {
            let (lo, hi) = (
                ms.iter().copied().fold(f64::INFINITY, f64::min),
                ms.iter().copied().fold(0.0, f64::max),
            );
            done.find(
                "family",
                format!("{name}, W1 max / min over N"),
                format!(
                    "{:.2}x ({})",
                    hi / lo,
                    if hi / lo <= 1.3 {
                        "flat"
                    } else {
                        "rises with N: cache misses"
                    }
                ),
            );
        }
    }
    done
}

pub(super) fn table1_experiment(size: Size, out: &Path) -> Section {
    let mut done = Section::default();
    let (sizes, reps): (Vec<u64>, u32) = match size {
        Size::Tiny => (table1::TINY_SIZES.to_vec(), 1),
        Size::Default => (vec![0, 200, 400, 600, 800, 1000, 10_000, 100_000], 3),
        Size::Full => (table1::SIZES.to_vec(), 5),
    };
    let mut failures = 0;
    let (rows, md) = table1::section(&sizes, reps, out, &mut failures);
    done.failures = failures;
    done.markdown.push_str(&md);
    table1::figures(&rows, &mut done.figures);
    for line in table1::verdicts(&rows) {
        let (what, verdict) = line.split_once(": ").unwrap_or((line.as_str(), ""));
        done.find("table1", what.to_string(), verdict.to_string());
    }
    done
}

pub(super) fn table2_experiment(size: Size, out: &Path) -> Section {
    let mut done = Section::default();
    let mut failures = 0;
    let (outcome, md) = table2::section(matches!(size, Size::Tiny), out, &mut failures);
    done.failures = failures;
    done.markdown.push_str(&md);
    let measured = match outcome {
        table2::Outcome::Measured(m) => m,
        table2::Outcome::Skipped(why) => {
            done.find(
                "table2",
                "instruction counts by callgrind".into(),
                format!("skipped: {why}"),
            );
            return done;
        }
    };
    table2::figures(&measured, &mut done.figures);
    for (what, verdict) in table2::verdicts(&measured) {
        done.find("table2", what, verdict);
    }
    done
}
