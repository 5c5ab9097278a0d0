//! `callwheel repro`: the papers' experiments and the peer comparison in one run, with a
//! Markdown report, plots (SVG and PNG) and, with `--json`, every figure in machine-readable
//! form for `callwheel compare`.
//!
//! | experiment | what it shows |
//! |---|---|
//! | `family` | every scheme of Varghese & Lauck on W1 (cost vs N, the paper's Table I shape) and W3 |
//! | `table1` | Costello & Varghese's Table I / Figure 8 through the callout interfaces |
//! | `peers` | the production wheel against BinaryHeap, BTreeMap and tokio-util's DelayQueue on W1–W5 |
//! | `coalescing` | the wheel's wake-ups against the optimal stabbing number as tolerance grows |
//! | `latency` | callwheel-rt timers' lateness against a bare `clock_nanosleep(TIMER_ABSTIME)` loop, idle and loaded |
//! | `sweep` | requested against actual sleep from 1 µs to 10 ms (calloutng Figures 4–7) for callwheel-rt, raw `clock_nanosleep` and tokio, and the runtime's wake-ups at 0 % and 5 % tolerance |
//! | `stress` | `start` latency while a mass expiry runs, and the count check (every timer fired once or was stopped) |

pub mod machine;
pub mod plots;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};

use crate::plan::Settings;
use crate::registry::{Role, SchemeInfo, SCHEMES};
use crate::report::{self, Outcome};
use crate::runner::Task;
use crate::sections;
use crate::table1;
use crate::workload::W5Params;
use machine::Machine;
use plots::{Chart, Series};

/// The experiments, in report order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Experiment {
    /// The scheme family on W1 and W3.
    Family,
    /// Table I / Figure 8 through the callout interfaces.
    Table1,
    /// The production wheel against the in-process peers on W1–W5.
    Peers,
    /// Wake-ups against the optimum as tolerance grows.
    Coalescing,
    /// Timer lateness on real clocks: callwheel-rt against a bare `clock_nanosleep` loop.
    Latency,
    /// Requested against actual sleep, and the runtime's wake-ups with and without tolerance.
    Sweep,
    /// `start` latency during a mass expiry, and the count check.
    Stress,
}

impl Experiment {
    /// Every experiment, in report order.
    pub const ALL: [Experiment; 7] = [
        Experiment::Family,
        Experiment::Table1,
        Experiment::Peers,
        Experiment::Coalescing,
        Experiment::Latency,
        Experiment::Sweep,
        Experiment::Stress,
    ];

    /// The name on the command line and in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Experiment::Family => "family",
            Experiment::Table1 => "table1",
            Experiment::Peers => "peers",
            Experiment::Coalescing => "coalescing",
            Experiment::Latency => "latency",
            Experiment::Sweep => "sweep",
            Experiment::Stress => "stress",
        }
    }

    /// Why the experiment cannot run in this build, if it cannot (every experiment runs in
    /// this one; the report's "Not run" section stays for experiments still to come).
    pub fn unavailable(self) -> Option<&'static str> {
        let _ = self;
        None
    }
}

/// The options of `callwheel repro`.
#[derive(Debug, Args)]
pub struct ReproArgs {
    /// Run only this experiment (repeatable or comma-separated).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub only: Vec<Experiment>,
    /// The papers' sizes (W1 to N = 1e6 and beyond, 5 repetitions): many minutes.
    #[arg(long)]
    pub full: bool,
    /// Tiny sizes that check the plumbing in seconds (for tests); the figures mean little.
    #[arg(long, hide = true)]
    pub tiny: bool,
    /// Where the report goes.
    #[arg(long, value_name = "DIR", default_value = "report")]
    pub out: PathBuf,
    /// Also write every figure to `DIR/results.json`.
    #[arg(long)]
    pub json: bool,
}

/// One figure of a run, as `results.json` holds it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// The experiment.
    pub experiment: String,
    /// The structure or interface measured.
    pub structure: String,
    /// The case: workload and size.
    pub case: String,
    /// What the value is (`median_ns`, `wakeups`, ...).
    pub metric: String,
    /// The value.
    pub value: f64,
}

/// `results.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// The tool's version.
    pub version: String,
    /// The machine and date.
    pub machine: Machine,
    /// Whether the papers' sizes were used.
    pub full: bool,
    /// Every figure.
    pub figures: Vec<Figure>,
}

/// One line of the final summary.
#[derive(Clone, Debug)]
struct Finding {
    experiment: &'static str,
    what: String,
    verdict: String,
}

/// What one experiment produced.
#[derive(Default)]
struct Done {
    markdown: String,
    figures: Vec<Figure>,
    findings: Vec<Finding>,
    failures: usize,
}

impl Done {
    fn figure(&mut self, experiment: &str, structure: &str, case: &str, metric: &str, value: f64) {
        self.figures.push(Figure {
            experiment: experiment.into(),
            structure: structure.into(),
            case: case.into(),
            metric: metric.into(),
            value,
        });
    }

    /// Records the median and every count an outcome carries.
    fn outcome(&mut self, experiment: &str, structure: &str, case: &str, outcome: &Outcome) {
        let Outcome::Done(r) = outcome else { return };
        if let Some(m) = report::median_of(outcome) {
            self.figure(experiment, structure, case, "median_ns", m);
        }
        let counts = [
            ("bytes_per_timer", r.bytes_per_timer),
            ("fired", r.fired.map(|v| v as f64)),
            ("jumps", r.jumps.map(|v| v as f64)),
            ("wakeups", r.wakeups.map(|v| v as f64)),
            ("optimum", r.optimum.map(|v| v as f64)),
            ("violations", r.violations.map(|v| v as f64)),
        ];
        for (metric, value) in counts {
            if let Some(v) = value {
                self.figure(experiment, structure, case, metric, v);
            }
        }
        if let Some(t) = &r.tolerant {
            if let Some(s) = report::Summary::of(&t.samples) {
                self.figure(experiment, structure, case, "tolerant_median_ns", s.median);
            }
            self.figure(
                experiment,
                structure,
                case,
                "tolerant_wakeups",
                t.wakeups as f64,
            );
            self.figure(
                experiment,
                structure,
                case,
                "tolerant_optimum",
                t.optimum as f64,
            );
            self.figure(
                experiment,
                structure,
                case,
                "tolerant_violations",
                t.violations as f64,
            );
        }
    }

    /// Draws `charts` as panels of one figure and links it from the report.
    fn plot_panels(&mut self, title: &str, charts: &[Chart], out: &Path, stem: &str) {
        match plots::write_panels(title, charts, out, stem) {
            Ok(_) => {
                let _ = write!(
                    self.markdown,
                    "\n![{title}]({stem}.png)\n\n[SVG]({stem}.svg)\n"
                );
            }
            Err(e) => {
                let _ = writeln!(self.markdown, "\n(plot not drawn: {e})");
            }
        }
    }

    fn find(&mut self, experiment: &'static str, what: String, verdict: String) {
        self.findings.push(Finding {
            experiment,
            what,
            verdict,
        });
    }

    fn plot(&mut self, chart: &Chart, out: &Path, stem: &str) {
        match plots::write(chart, out, stem) {
            Ok(_) => {
                let _ = write!(
                    self.markdown,
                    "\n![{}]({stem}.png)\n\n[SVG]({stem}.svg)\n",
                    chart.title
                );
            }
            Err(e) => {
                let _ = writeln!(self.markdown, "\n(plot not drawn: {e})");
            }
        }
    }
}

/// The sizes of a run.
#[derive(Clone, Copy, Debug)]
enum Size {
    Tiny,
    Default,
    Full,
}

fn scheme(name: &str) -> Option<&'static SchemeInfo> {
    SCHEMES.iter().find(|s| s.name == name)
}

fn family(size: Size, out: &Path) -> Done {
    let mut done = Done::default();
    let mut settings = Settings::standard();
    match size {
        Size::Tiny => {
            settings = Settings::quick();
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
        done.outcome(
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
        done.outcome("family", r.scheme.name, "w3", &r.outcome);
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

fn table1_experiment(size: Size, out: &Path) -> Done {
    let mut done = Done::default();
    let (sizes, reps): (Vec<u64>, u32) = match size {
        Size::Tiny => (table1::QUICK_SIZES.to_vec(), 1),
        Size::Default => (vec![0, 200, 400, 600, 800, 1000, 10_000, 100_000], 3),
        Size::Full => (table1::SIZES.to_vec(), 5),
    };
    let mut failures = 0;
    let (rows, md) = table1::section(&sizes, reps, out, &mut failures);
    done.failures = failures;
    done.markdown.push_str(&md);
    for row in &rows {
        for (iface, cell) in table1::Interface::ALL.iter().zip(&row.cells) {
            if let Ok(m) = cell {
                if let Some(s) = report::Summary::of(&m.samples) {
                    done.figure(
                        "table1",
                        iface.name(),
                        &format!("N={}", row.n),
                        "median_ns",
                        s.median,
                    );
                }
            }
        }
    }
    for line in table1::verdicts(&rows) {
        let (what, verdict) = line.split_once(": ").unwrap_or((line.as_str(), ""));
        done.find("table1", what.to_string(), verdict.to_string());
    }
    done
}

fn peers(size: Size) -> Done {
    let mut done = Done::default();
    let mut settings = Settings::standard();
    match size {
        Size::Tiny => settings = Settings::quick(),
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
    let names = [
        "wheel",
        "hashed-wheel",
        "hierarchical-full",
        "heap-lazy",
        "btreemap",
        "delayqueue",
    ];
    let schemes: Vec<&'static SchemeInfo> = names.iter().filter_map(|n| scheme(n)).collect();
    let bar = sections::progress_bar(sections::jobs(
        &settings,
        &schemes,
        &["w1", "w2", "w3", "w4", "w5"],
    ));
    let mut failures = 0;
    let (w1, md1) = sections::w1(&settings, &schemes, &bar, &mut failures);
    let (w2, md2) = sections::w2(&settings, &schemes, &bar, &mut failures);
    let (w3, md3) = sections::w3(&settings, &schemes, &bar, &mut failures);
    let (w4, md4) = sections::w4(&settings, &schemes, &bar, &mut failures);
    let (w5, md5) = sections::w5(&settings, &schemes, &bar, &mut failures);
    bar.finish_and_clear();
    done.failures = failures;
    done.markdown
        .push_str("## The production wheel against today's timer libraries, W1–W5\n");
    for md in [&md1, &md2, &md3, &md4, &md5] {
        done.markdown.push_str(md);
    }
    for r in &w1 {
        done.outcome("peers", r.scheme.name, &format!("w1 N={}", r.n), &r.outcome);
    }
    for r in &w2 {
        done.outcome("peers", r.scheme.name, "w2", &r.outcome);
    }
    for r in &w3 {
        done.outcome("peers", r.scheme.name, "w3", &r.outcome);
    }
    for r in &w4 {
        done.outcome("peers", r.scheme.name, "w4", &r.outcome);
    }
    for r in &w5 {
        done.outcome("peers", r.scheme.name, "w5", &r.outcome);
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
                "memory: wheel bytes per timer at N = {} (target <= 48)",
                b.0
            ),
            format!("{:.1}: {}", b.1, if b.1 <= 48.0 { "met" } else { "missed" }),
        );
    }
    done
}

fn coalescing(size: Size, out: &Path) -> Done {
    let mut done = Done::default();
    let Some(wheel) = scheme("wheel") else {
        done.failures = 1;
        return done;
    };
    let (timers, tolerances): (u64, Vec<u64>) = match size {
        Size::Tiny => (2_000, vec![1, 5]),
        Size::Default => (100_000, vec![1, 2, 5, 10, 20, 50]),
        Size::Full => (100_000, vec![1, 2, 5, 10, 20, 50, 100]),
    };
    let bar = sections::progress_bar(tolerances.len());
    let mut rows = Vec::new();
    for &pct in &tolerances {
        let task = Task::W5 {
            scheme: wheel,
            params: W5Params {
                timers,
                ticks: crate::plan::W5_TICKS,
                tolerance_percent: pct,
                reps: 1,
            },
        };
        let outcome = sections::measure(&bar, &task, &mut done.failures);
        if let Outcome::Done(r) = &outcome {
            if let Some(t) = &r.tolerant {
                rows.push((
                    pct,
                    t.wakeups,
                    t.optimum,
                    t.violations,
                    r.wakeups,
                    r.optimum,
                ));
            }
        }
    }
    bar.finish_and_clear();
    let md = &mut done.markdown;
    let _ = writeln!(
        md,
        "\n## Coalescing: the wheel's wake-ups against the optimum\n"
    );
    let _ = writeln!(
        md,
        "{timers} timers with deadlines d in [1, {}), window [d, d + d * tolerance / 100]; the driver wakes at `next_wakeup()` and advances there until the wheel is empty. Optimum: the fewest instants stabbing every window (greedy by window end).\n",
        crate::plan::W5_TICKS
    );
    let _ = writeln!(
        md,
        "| tolerance | wake-ups | optimum | ratio | outside window |"
    );
    let _ = writeln!(md, "|---:|---:|---:|---:|---:|");
    if let Some(&(_, _, _, _, Some(w0), Some(o0))) = rows.first() {
        let _ = writeln!(
            md,
            "| 0 % | {w0} | {o0} | {:.3} | 0 |",
            w0 as f64 / o0.max(1) as f64
        );
    }
    for &(pct, w, o, v, _, _) in &rows {
        let _ = writeln!(
            md,
            "| {pct} % | {w} | {o} | {:.3} | {v} |",
            w as f64 / o.max(1) as f64
        );
    }
    let mut wake = Vec::new();
    let mut opt = Vec::new();
    for &(pct, w, o, _, _, _) in &rows {
        wake.push((pct as f64, w as f64));
        opt.push((pct as f64, o as f64));
        done.figure(
            "coalescing",
            "wheel",
            &format!("tolerance {pct}%"),
            "wakeups",
            w as f64,
        );
        done.figure(
            "coalescing",
            "wheel",
            &format!("tolerance {pct}%"),
            "optimum",
            o as f64,
        );
    }
    if let Some(&(pct, w, o, v, _, _)) = rows.iter().find(|r| r.0 == 5) {
        let ratio = w as f64 / o.max(1) as f64;
        done.find(
            "coalescing",
            format!("wake-ups / optimum at {pct} % tolerance"),
            format!(
                "{w} / {o} = {ratio:.3}, {v} outside their window: {}",
                if ratio <= 1.05 && v == 0 {
                    "met (<= 1.05)"
                } else {
                    "missed"
                }
            ),
        );
    }
    done.plot(
        &Chart {
            title: "Coalescing: wake-ups against tolerance".into(),
            x_desc: "tolerance, % of the timer's interval".into(),
            y_desc: "wake-ups (advance calls)".into(),
            log_x: true,
            log_y: true,
            series: vec![
                Series {
                    label: "wheel, driven by next_wakeup()".into(),
                    points: wake,
                    reference: false,
                },
                Series {
                    label: "optimum (minimum stabbing)".into(),
                    points: opt,
                    reference: true,
                },
            ],
            legend_right: true,
            legend_bottom: false,
        },
        out,
        "coalescing",
    );
    done
}

fn latency(size: Size, out: &Path) -> Done {
    let mut done = Done::default();
    let mut panels = Vec::new();
    let (loops, period_us) = match size {
        Size::Tiny => (20, 1_000),
        Size::Default => (200, 10_000),
        Size::Full => (10_000, 10_000),
    };
    let _ = writeln!(
        done.markdown,
        "\n## Latency: callwheel-rt timers against a bare clock_nanosleep(TIMER_ABSTIME) loop\n"
    );
    for load in [false, true] {
        let args = crate::latency::LatencyArgs {
            loops,
            period_us,
            load,
        };
        let case = if load { "loaded" } else { "idle" };
        eprintln!("repro: latency, {case}, {loops} samples per source every {period_us} us ...");
        match crate::latency::measure(&args) {
            Ok(report) => {
                let _ = writeln!(done.markdown, "### {case}\n");
                done.markdown.push_str(&crate::latency::render(&report));
                panels.push(lateness_chart(case, &report));
                for r in &report.rows {
                    for (metric, v) in [
                        ("min_ns", r.min),
                        ("p50_ns", r.p50),
                        ("p99_ns", r.p99),
                        ("p999_ns", r.p999),
                        ("max_ns", r.max),
                    ] {
                        done.figure("latency", r.source, case, metric, v as f64);
                    }
                }
                done.figure(
                    "latency",
                    "callwheel-rt",
                    case,
                    "wakeups",
                    report.wakeups as f64,
                );
                let raw = report
                    .rows
                    .iter()
                    .find(|r| r.source.starts_with("clock_nanosleep"));
                if let (Some(cb), Some(raw)) = (report.rows.first(), raw) {
                    let p50 = (cb.p50 as f64 - raw.p50 as f64) / 1_000.0;
                    let p99 = cb.p99 as f64 / raw.p99.max(1) as f64;
                    done.find(
                        "latency",
                        format!("{case}: callwheel p50 - raw p50 (target <= +5 us)"),
                        format!(
                            "{p50:+.2} us: {}",
                            if p50 <= 5.0 { "met" } else { "missed" }
                        ),
                    );
                    done.find(
                        "latency",
                        format!("{case}: callwheel p99 / raw p99 (target <= 1.2)"),
                        format!("{p99:.2}: {}", if p99 <= 1.2 { "met" } else { "missed" }),
                    );
                }
            }
            Err(e) => {
                eprintln!("error: latency ({case}): {e}");
                let _ = writeln!(done.markdown, "latency ({case}) failed: {e}\n");
                done.failures += 1;
            }
        }
    }
    if !panels.is_empty() {
        done.plot_panels(
            "Lateness of timers due every period: callwheel-rt against clock_nanosleep (hrtimers table)",
            &panels,
            out,
            "latency_histogram",
        );
    }
    done
}

/// Histogram bins for lateness: 5 per decade from 1 µs to 100 ms (edges in µs).
fn lateness_edges() -> Vec<f64> {
    (0..=25).map(|i| 10f64.powf(f64::from(i) / 5.0)).collect()
}

/// A lateness histogram as a line: the share of `sorted_ns` in each bin of `edges` (µs),
/// plotted at the bin's geometric centre; values beyond the last edge count in the last bin,
/// below the first in the first.
fn histogram_series(label: String, sorted_ns: &[u64], edges: &[f64]) -> Series {
    let bins = edges.len() - 1;
    let mut counts = vec![0u64; bins];
    for &ns in sorted_ns {
        let us = ns as f64 / 1_000.0;
        let i = edges[1..]
            .iter()
            .position(|&hi| us < hi)
            .unwrap_or(bins - 1);
        counts[i] += 1;
    }
    let n = sorted_ns.len().max(1) as f64;
    Series {
        label,
        points: (0..bins)
            .map(|i| {
                (
                    (edges[i] * edges[i + 1]).sqrt(),
                    100.0 * counts[i] as f64 / n,
                )
            })
            .collect(),
        reference: false,
    }
}

/// One panel of the lateness figure: the callback row and the raw row of one latency run,
/// trimmed to the bins either of them reaches.
fn lateness_chart(case: &str, report: &crate::latency::Report) -> Chart {
    let edges = lateness_edges();
    let mut series: Vec<Series> = report
        .rows
        .iter()
        .filter(|r| r.source != "callwheel-rt (wake-up)")
        .map(|r| {
            histogram_series(
                format!("{} ({} samples)", r.source, r.samples),
                &r.sorted,
                &edges,
            )
        })
        .collect();
    let used = |i: usize| series.iter().any(|s| s.points[i].1 > 0.0);
    let bins = edges.len() - 1;
    let first = (0..bins).find(|&i| used(i)).unwrap_or(0).saturating_sub(1);
    let last = (0..bins).rfind(|&i| used(i)).unwrap_or(bins - 1);
    let last = (last + 1).min(bins - 1);
    for s in &mut series {
        s.points = s.points[first..=last].to_vec();
    }
    Chart {
        title: format!("{case}: {} µs period", report.args.period_us),
        x_desc: "lateness, µs (clock reading minus deadline; bins of 1/5 decade)".into(),
        y_desc: "% of samples in the bin".into(),
        log_x: true,
        log_y: false,
        series,
        legend_right: true,
        legend_bottom: false,
    }
}

fn sweep(size: Size, out: &Path) -> Done {
    use crate::sweep::{self as sw, SweepArgs};
    let mut done = Done::default();
    let mut plan = SweepArgs {
        tiny: matches!(size, Size::Tiny),
        quick: matches!(size, Size::Default),
        ..SweepArgs::default()
    }
    .plan();
    if let Size::Default = size {
        // 100 samples: the nearest-rank p99 of fewer is the maximum.
        plan.samples = 100;
    }
    if let Size::Full = size {
        // Issue #5's idle runtime: 1,000 timers spread over 10 s.
        plan.samples = 200;
        plan.span_ms = 10_000;
        plan.idle_ms = 1_000;
    }
    let _ = writeln!(
        done.markdown,
        "\n## Sweep: requested against actual sleep (calloutng Figures 4–7), and the runtime's wake-ups\n"
    );
    let bar = sections::progress_bar(0);
    let measured = sw::measure(&plan, &bar);
    bar.finish_and_clear();
    let report = match measured {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: sweep: {e}");
            let _ = writeln!(done.markdown, "sweep failed: {e}\n");
            done.failures += 1;
            return done;
        }
    };
    done.markdown.push_str(&sw::render(&report));
    if !report.counts_ok() {
        eprintln!("error: sweep: a batch timer did not fire exactly once inside its window");
        done.failures += 1;
    }
    for c in &report.cells {
        let case = format!("request {} us", c.request_us);
        for (metric, v) in [
            ("min_ns", c.actual.min),
            ("avg_ns", c.actual.avg),
            ("p50_ns", c.actual.p50),
            ("p99_ns", c.actual.p99),
        ] {
            done.figure("sweep", c.source.name(), &case, metric, v as f64);
        }
    }
    for b in &report.batches {
        let case = format!(
            "batch {} timers, tolerance {}%",
            b.timers, b.tolerance_percent
        );
        for (metric, v) in [
            ("wakeups", b.wakeups),
            ("optimum", b.optimum),
            ("early_wakeups", b.early_wakeups),
            ("fired", b.fired),
            ("before_deadline", b.before_deadline),
            ("after_window", b.after_window),
            ("excess_p50_ns", b.excess_p50_ns),
        ] {
            done.figure("sweep", "callwheel-rt", &case, metric, v as f64);
        }
    }
    done.figure(
        "sweep",
        "callwheel-rt",
        &format!("idle {} ms", report.idle.ms),
        "wakeups",
        report.idle.wakeups as f64,
    );
    for v in sw::verdicts(&report) {
        done.find("sweep", v.what, v.result);
    }
    let panels = sw::charts(&report);
    done.plot_panels(sw::CHART_TITLE, &panels, out, "sweep");
    done
}

fn stress(size: Size) -> Done {
    use crate::stress::{self as st, StressArgs};
    let mut done = Done::default();
    let mut plan = StressArgs {
        threads: 2,
        tiny: matches!(size, Size::Tiny),
        quick: matches!(size, Size::Default),
        ..StressArgs::default()
    }
    .plan();
    if let Size::Default = size {
        plan.duration_ms = 300;
    }
    let _ = writeln!(
        done.markdown,
        "\n## Stress: `start` latency while a mass expiry runs\n"
    );
    let bar = sections::progress_bar(0);
    let measured = st::measure(&plan, &bar);
    bar.finish_and_clear();
    let report = match measured {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: stress: {e}");
            let _ = writeln!(done.markdown, "stress failed: {e}\n");
            done.failures += 1;
            return done;
        }
    };
    done.markdown.push_str(&st::render(&report));
    if !report.counts.ok() {
        eprintln!(
            "error: stress: count check failed: {}",
            st::count_verdict(&report)
        );
        done.failures += 1;
    }
    for (case, l) in [
        ("start during mass expiry", &report.start_during),
        ("start whole run", &report.start_all),
        ("stop whole run", &report.stop_all),
    ] {
        for (metric, v) in [
            ("calls", l.calls),
            ("p50_ns", l.p50),
            ("p99_ns", l.p99),
            ("p999_ns", l.p999),
            ("max_ns", l.max),
        ] {
            done.figure("stress", "callwheel-rt", case, metric, v as f64);
        }
    }
    let mass = format!("mass expiry of {} timers", report.plan.timers);
    let c = &report.counts;
    for (metric, v) in [
        ("expiry_ns", report.expiry_ns as f64),
        ("first_late_ns", report.first_late_ns as f64),
        ("budget_yields", report.budget_yields as f64),
        ("bytes_per_timer", report.bytes_per_timer()),
        ("rss_peak_kib", report.rss_peak_kib as f64),
        ("mass_fired", c.mass_fired as f64),
        ("mass_cancelled", c.mass_cancelled as f64),
        ("mass_lost", c.mass_lost as f64),
        ("mass_wrong", c.mass_wrong as f64),
        ("churn_armings", c.churn_armings as f64),
        ("churn_wrong", c.churn_wrong as f64),
    ] {
        done.figure("stress", "callwheel-rt", &mass, metric, v);
    }
    done.find(
        "stress",
        format!(
            "start p99 during a mass expiry of {} timers, {} threads (target < 50 us at 1e6)",
            report.plan.timers, report.plan.threads
        ),
        st::start_verdict(&report),
    );
    done.find(
        "stress",
        "every timer fired exactly once or was stopped".into(),
        st::count_verdict(&report),
    );
    done.find(
        "stress",
        format!("mass expiry of {} timers", report.plan.timers),
        format!(
            "{:.1} ms, first callback {:.1} us late; {:.0} bytes resident per timer",
            report.expiry_ns as f64 / 1e6,
            report.first_late_ns as f64 / 1e3,
            report.bytes_per_timer()
        ),
    );
    done
}

/// Runs `callwheel repro`. Returns the process exit code: 0, 1 when a measurement failed,
/// 2 for bad input (an unavailable experiment, an unwritable output directory).
pub fn run(args: &ReproArgs) -> u8 {
    let selected: Vec<Experiment> = if args.only.is_empty() {
        Experiment::ALL.to_vec()
    } else {
        let mut v = Vec::new();
        for &e in &args.only {
            if let Some(why) = e.unavailable() {
                eprintln!("error: experiment {} {why}", e.name());
                return 2;
            }
            if !v.contains(&e) {
                v.push(e);
            }
        }
        v
    };
    if let Err(e) = std::fs::create_dir_all(&args.out).and_then(|()| {
        let probe = args.out.join(".write-test");
        std::fs::write(&probe, b"")?;
        std::fs::remove_file(probe)
    }) {
        eprintln!(
            "error: cannot write the report to {}: {e}",
            args.out.display()
        );
        return 2;
    }
    if cfg!(debug_assertions) {
        eprintln!(
            "warning: this is a debug build; its figures are not representative (use --release)"
        );
    }
    let size = if args.tiny {
        Size::Tiny
    } else if args.full {
        Size::Full
    } else {
        Size::Default
    };
    let machine = Machine::read();
    let started = std::time::Instant::now();
    let mut all = Done::default();
    let mut pending = Vec::new();
    for e in Experiment::ALL.into_iter().filter(|e| selected.contains(e)) {
        if let Some(why) = e.unavailable() {
            pending.push((e, why));
            continue;
        }
        eprintln!("repro: {} ...", e.name());
        let done = match e {
            Experiment::Family => family(size, &args.out),
            Experiment::Table1 => table1_experiment(size, &args.out),
            Experiment::Peers => peers(size),
            Experiment::Coalescing => coalescing(size, &args.out),
            Experiment::Latency => latency(size, &args.out),
            Experiment::Sweep => sweep(size, &args.out),
            Experiment::Stress => stress(size),
        };
        all.markdown.push_str(&done.markdown);
        all.markdown.push('\n');
        all.figures.extend(done.figures);
        all.findings.extend(done.findings);
        all.failures += done.failures;
    }
    let elapsed = started.elapsed().as_secs_f64();

    let mut summary = String::from("| experiment | finding | result |\n|---|---|---|\n");
    for f in &all.findings {
        let _ = writeln!(summary, "| {} | {} | {} |", f.experiment, f.what, f.verdict);
    }
    for (e, why) in &pending {
        let _ = writeln!(summary, "| {} | not run | {why} |", e.name());
    }

    let mut report = String::new();
    let _ = writeln!(report, "# callwheel repro\n");
    let _ = writeln!(
        report,
        "Run on {} UTC in {elapsed:.0} s ({} sizes), callwheel {}.\n",
        machine.date,
        match size {
            Size::Tiny => "tiny",
            Size::Default => "default",
            Size::Full => "full (the papers')",
        },
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(report, "| machine | |\n|---|---|");
    let _ = writeln!(report, "| CPU | {} |", machine.cpu);
    let _ = writeln!(report, "| cores | {} |", machine.cores);
    let _ = writeln!(report, "| kernel | {} |", machine.kernel);
    let _ = writeln!(report, "| clocksource | {} |", machine.clocksource);
    let _ = writeln!(report, "| timer slack | {} ns |", machine.timer_slack_ns);
    let _ = writeln!(report, "\n## Summary\n\n{summary}");
    let _ = writeln!(
        report,
        "Figures are medians over repetitions, each measurement in its own process; compare within this run (ratios), not across machines or runs.\n"
    );
    report.push_str(&all.markdown);
    if !pending.is_empty() {
        let _ = writeln!(report, "\n## Not run\n");
        for (e, why) in &pending {
            let _ = writeln!(report, "- `{}`: {why}.", e.name());
        }
    }
    let report_path = args.out.join("REPORT.md");
    if let Err(e) = std::fs::write(&report_path, report) {
        eprintln!("error: cannot write {}: {e}", report_path.display());
        return 2;
    }
    if args.json {
        let results = Results {
            version: env!("CARGO_PKG_VERSION").to_string(),
            machine: machine.clone(),
            full: args.full,
            figures: all.figures.clone(),
        };
        let path = args.out.join("results.json");
        let text = match serde_json::to_string_pretty(&results) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: cannot encode the results: {e}");
                return 1;
            }
        };
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return 2;
        }
    }
    println!("# callwheel repro: summary ({elapsed:.0} s)\n");
    print!("{summary}");
    println!("\nReport: {}", report_path.display());
    if all.failures > 0 {
        eprintln!("error: {} measurement(s) failed", all.failures);
        1
    } else {
        0
    }
}
