//! The production wheel against the in-process peers (BinaryHeap with lazy cancel, BTreeMap,
//! tokio-util's DelayQueue) on W1–W5, with the wheel's targets.

use std::path::Path;

use callwheel::{Timers, Wheel};
use callwheel_bench::plan::Settings;
use callwheel_bench::structure::SchemeInfo;

use crate::registry;
use callwheel_bench::report::{self, Outcome};
use callwheel_bench::sections;

use crate::experiment::{Experiment, Section, Size};

/// `peers`: The production wheel against the in-process peers on W1–W5.
pub struct Peers;

impl Experiment for Peers {
    type Plan = Settings;

    fn name(&self) -> &'static str {
        "peers"
    }

    fn about(&self) -> &'static str {
        "The production wheel against the in-process peers on W1–W5"
    }

    fn plan(&self, size: Size) -> Settings {
        let mut settings = Settings::standard();
        match size {
            Size::Tiny => settings = Settings::tiny(),
            Size::Default => {
                settings.w1_sizes = vec![0, 1_000, 100_000, 1_000_000];
                settings.w1_iters = 100_000;
                settings.w2_steps = 500_000;
                settings.w3_timers = 1_000_000;
                settings.set_reps(3);
                settings.w4_reps = 7;
            }
            Size::Full => {}
        }
        settings
    }

    fn run(&self, settings: &Settings, _out: &Path) -> Section {
        peers(settings)
    }
}

fn peers(settings: &Settings) -> Section {
    let mut done = Section::default();
    let names = [
        "wheel",
        "hashed-wheel",
        "hierarchical-full",
        "heap-lazy",
        "btreemap",
        "delayqueue",
    ];
    let schemes: Vec<&'static SchemeInfo> =
        names.iter().filter_map(|n| registry::find(n)).collect();
    let bar = sections::progress_bar(sections::jobs(
        settings,
        &schemes,
        &["w1", "w2", "w3", "w4", "w5"],
    ));
    let mut failures = 0;
    let (w1, md1) = sections::w1(settings, &schemes, &bar, &mut failures);
    let (w2, md2) = sections::w2(settings, &schemes, &bar, &mut failures);
    let (w3, md3) = sections::w3(settings, &schemes, &bar, &mut failures);
    let (w4, md4) = sections::w4(settings, &schemes, &bar, &mut failures);
    let (w5, md5) = sections::w5(settings, &schemes, &bar, &mut failures);
    bar.finish_and_clear();
    done.failures = failures;
    done.markdown
        .push_str("## The production wheel against today's timer libraries, W1–W5\n");
    for md in [&md1, &md2, &md3, &md4, &md5] {
        done.markdown.push_str(md);
    }
    for r in &w1 {
        done.figures
            .outcome("peers", r.scheme.name, &format!("w1 N={}", r.n), &r.outcome);
    }
    for r in &w2 {
        done.figures
            .outcome("peers", r.scheme.name, "w2", &r.outcome);
    }
    for r in &w3 {
        done.figures
            .outcome("peers", r.scheme.name, "w3", &r.outcome);
    }
    for r in &w4 {
        done.figures
            .outcome("peers", r.scheme.name, "w4", &r.outcome);
    }
    for r in &w5 {
        done.figures
            .outcome("peers", r.scheme.name, "w5", &r.outcome);
    }
    let med = |rows: &[(&str, Option<f64>)], name: &str| {
        rows.iter().find(|r| r.0 == name).and_then(|r| r.1)
    };
    let peer_names = ["heap-lazy", "btreemap", "delayqueue"];
    let best_peer = |rows: &[(&str, Option<f64>)]| {
        peer_names
            .iter()
            .filter_map(|&p| med(rows, p).map(|m| (p, m)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    };
    let w1_wheel: Vec<f64> = w1
        .iter()
        .filter(|r| r.scheme.name == "wheel")
        .filter_map(|r| report::median_of(&r.outcome))
        .collect();
    if !w1_wheel.is_empty() {
        let hi = w1_wheel.iter().copied().fold(0.0, f64::max);
        let lo = w1_wheel.iter().copied().fold(f64::INFINITY, f64::min);
        done.find(
            "peers",
            "W1: wheel ns per pair, worst N (target <= 10, max/min <= 1.3)".into(),
            format!(
                "{hi:.1} ns, max/min {:.2}: {}",
                hi / lo,
                if hi <= 10.0 && hi / lo <= 1.3 {
                    "met"
                } else {
                    "missed"
                }
            ),
        );
    }
    let w2m: Vec<(&str, Option<f64>)> = w2
        .iter()
        .map(|r| (r.scheme.name, report::median_of(&r.outcome)))
        .collect();
    if let (Some(w), Some(d)) = (med(&w2m, "wheel"), med(&w2m, "delayqueue")) {
        done.find(
            "peers",
            "W2: DelayQueue / wheel per step (target >= 5x)".into(),
            format!(
                "{:.2}x: {}",
                d / w,
                if d / w >= 5.0 { "met" } else { "missed" }
            ),
        );
    }
    let w3m: Vec<(&str, Option<f64>)> = w3
        .iter()
        .map(|r| (r.scheme.name, report::median_of(&r.outcome)))
        .collect();
    if let (Some(w), Some((p, m))) = (med(&w3m, "wheel"), best_peer(&w3m)) {
        done.find(
            "peers",
            format!("W3: best peer ({p}) / wheel per timer (target >= 5x)"),
            format!(
                "{:.2}x: {}",
                m / w,
                if m / w >= 5.0 { "met" } else { "missed" }
            ),
        );
    }
    let w4m: Vec<(&str, Option<f64>)> = w4
        .iter()
        .map(|r| (r.scheme.name, report::median_of(&r.outcome)))
        .collect();
    if let (Some(w), Some(h)) = (med(&w4m, "wheel"), med(&w4m, "heap-lazy")) {
        done.find(
            "peers",
            "W4: wheel / lazy heap per timer (target <= 1.2x)".into(),
            format!(
                "{:.2}x: {}",
                w / h,
                if w / h <= 1.2 { "met" } else { "missed" }
            ),
        );
    }
    if let Some(r) = w5.iter().find(|r| r.scheme.name == "wheel") {
        if let Outcome::Done(rep) = &r.outcome {
            if let Some(t) = &rep.tolerant {
                let ratio = t.wakeups as f64 / t.optimum.max(1) as f64;
                done.find(
                    "peers",
                    format!(
                        "W5: wheel wake-ups at {} % tolerance / optimum (target <= 1.05)",
                        r.tolerance_percent
                    ),
                    format!(
                        "{} / {} = {ratio:.3}, {} outside their window: {}",
                        t.wakeups,
                        t.optimum,
                        t.violations,
                        if ratio <= 1.05 && t.violations == 0 {
                            "met"
                        } else {
                            "missed"
                        }
                    ),
                );
            }
        }
    }
    if let Some(b) = w1
        .iter()
        .filter(|r| r.scheme.name == "wheel")
        .max_by_key(|r| r.n)
        .and_then(|r| match &r.outcome {
            Outcome::Done(rep) => rep.bytes_per_timer.map(|b| (r.n, b)),
            _ => None,
        })
    {
        done.find(
            "peers",
            format!(
                "memory: wheel bytes per timer with u64 values at N = {}, growing from empty \
                 (target <= 32)",
                b.0
            ),
            format!("{:.1}: {}", b.1, if b.1 <= 32.0 { "met" } else { "missed" }),
        );
        // The same N on a wheel sized first (`Wheel::reserve`), with no value and with u64:
        // the entries and links alone, plus the slots' fixed 17 KiB.
        let n = b.0 as usize;
        let empty = Wheel::<()>::new().memory_bytes() as f64;
        let reserved = [
            ("no value", reserved_bytes_per_timer(n, |_| ()), 24.0),
            ("u64 values", reserved_bytes_per_timer(n, |i| i), 32.0),
        ];
        for (values, bytes, target) in reserved {
            if let Some(bytes) = bytes {
                done.figures.figure(
                    "peers",
                    "wheel",
                    &format!("reserved, {values}, N={n}"),
                    "bytes_per_timer",
                    bytes,
                );
                done.find(
                    "peers",
                    format!(
                        "memory: wheel bytes per timer with {values} at N = {n}, after \
                         Wheel::reserve(N) (target <= {target})"
                    ),
                    format!(
                        "{bytes:.3} ({:.3} beside the {:.0} bytes an empty wheel holds): {}",
                        bytes - empty / n.max(1) as f64,
                        empty,
                        if bytes <= target { "met" } else { "missed" }
                    ),
                );
            }
        }
    }
    done
}

/// Bytes a wheel holds per timer once `n` timers are pending in it, sized first with
/// `Wheel::reserve(n)`; `None` when a start or the reservation is refused.
fn reserved_bytes_per_timer<T>(n: usize, value: impl Fn(u64) -> T) -> Option<f64> {
    let mut wheel = Wheel::new();
    wheel.reserve(n).ok()?;
    for i in 0..n as u64 {
        // Deadlines spread as W1's outstanding timers are (they do not change the memory).
        wheel.start(2_000_000 + i % 1_000_000, value(i)).ok()?;
    }
    Some(wheel.memory_bytes() as f64 / n.max(1) as f64)
}
