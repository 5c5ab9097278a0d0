//! The scheme family of Varghese & Lauck on W1 (Table I's shape) and W3: every scheme of the
//! paper and the production wheel, with the plot of cost against N and the verdicts on growth.

use std::path::Path;

use callwheel_bench::plan::Settings;
use callwheel_bench::structure::{Role, SchemeInfo};

use crate::registry::SCHEMES;
use callwheel_bench::report;
use callwheel_bench::sections;

use crate::experiment::{Experiment, Section, Size};
use callwheel_bench::plots::{Chart, Series};

/// `family`: The scheme family on W1 and W3.
pub struct Family;

impl Experiment for Family {
    type Plan = Settings;

    fn name(&self) -> &'static str {
        "family"
    }

    fn about(&self) -> &'static str {
        "The scheme family on W1 and W3"
    }

    fn plan(&self, size: Size) -> Settings {
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
        settings
    }

    fn run(&self, settings: &Settings, out: &Path) -> Section {
        family(settings, out)
    }
}

fn family(settings: &Settings, out: &Path) -> Section {
    let mut done = Section::default();
    let schemes: Vec<&'static SchemeInfo> =
        SCHEMES.iter().filter(|s| s.role != Role::Peer).collect();
    let bar = sections::progress_bar(sections::jobs(settings, &schemes, &["w1", "w3"]));
    let mut failures = 0;
    let (w1, md1) = sections::w1(settings, &schemes, &bar, &mut failures);
    let (w3, md3) = sections::w3(settings, &schemes, &bar, &mut failures);
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
