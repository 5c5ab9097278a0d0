//! A poller: thousands of labelled periodic timers in one timer set, an epoll loop on the set's
//! descriptor, and a summary of what was reaped.
//!
//! This is the program Costello & Varghese had in mind for `ITIMER_MULTIREAL` ("a daemon that
//! polls for various conditions at varying intervals"): it keeps one timer per condition, sleeps
//! in `epoll_wait` on the set's eventfd, and when woken reaps every expired timer, whose label
//! says which condition to poll. Periodic timers run again from their last expiry, so no
//! period drifts however late the loop reaps.
//!
//! ```text
//! cargo run --release -p callwheel-examples --example poller -- [--timers N] [--seconds S]
//!     [--tolerance-us U] [--policy burst|delay|skip]
//! ```
//!
//! At the end it prints, per period class, the timers, the expiries expected on the grid up to
//! the end of the run and those reaped, then the wake-ups of the loop and the lateness of the
//! reaps (reap time minus deadline).

use std::os::fd::AsRawFd;
use std::process::ExitCode;
use std::time::Duration;

use callwheel_rt::hdrhistogram::Histogram;
use callwheel_rt::{Missed, Reaped, Runtime, TimerSet, TimerSetConfig, Tolerance};

/// The period classes, in milliseconds; timer `i` belongs to class `i % CLASSES.len()`.
const CLASSES: [u64; 6] = [5, 10, 25, 50, 100, 250];

struct Args {
    timers: usize,
    seconds: f64,
    tolerance_us: u64,
    policy: Missed,
}

const USAGE: &str = "usage: poller [--timers N (default 5000)] [--seconds S (default 2)] \
                     [--tolerance-us U (default 200)] [--policy burst|delay|skip (default burst)]";

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        timers: 5_000,
        seconds: 2.0,
        tolerance_us: 200,
        policy: Missed::Burst,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--help" || flag == "-h" {
            return Err(USAGE.to_string());
        }
        let value = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {value}: {e}\n{USAGE}");
        match flag.as_str() {
            "--timers" => args.timers = value.parse().map_err(|e| bad(&e))?,
            "--seconds" => args.seconds = value.parse().map_err(|e| bad(&e))?,
            "--tolerance-us" => args.tolerance_us = value.parse().map_err(|e| bad(&e))?,
            "--policy" => {
                args.policy = match value.as_str() {
                    "burst" => Missed::Burst,
                    "delay" => Missed::Delay,
                    "skip" => Missed::Skip,
                    _ => return Err(bad(&"expected burst, delay or skip")),
                }
            }
            _ => return Err(format!("unknown flag {flag}\n{USAGE}")),
        }
    }
    if args.timers == 0 || !(args.seconds > 0.0 && args.seconds < 3_600.0) {
        return Err(format!(
            "need at least one timer and 0 < seconds < 3600\n{USAGE}"
        ));
    }
    Ok(args)
}

/// An epoll instance watching one descriptor for readability (level-triggered).
struct Epoll {
    fd: libc::c_int,
}

impl Epoll {
    fn watching(fd: libc::c_int) -> std::io::Result<Epoll> {
        // SAFETY: epoll_create1 takes a flag and returns a new descriptor or -1.
        let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if ep < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let epoll = Epoll { fd: ep };
        let mut event = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: 0,
        };
        // SAFETY: `ep` and `fd` are open descriptors; `event` is a live epoll_event.
        let r = unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut event) };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(epoll)
    }

    /// Waits up to `timeout_ms` for the descriptor; returns whether it is readable.
    fn wait(&self, timeout_ms: i32) -> std::io::Result<bool> {
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 1];
        loop {
            // SAFETY: `events` is a live array of one epoll_event, and we pass its length.
            let n = unsafe { libc::epoll_wait(self.fd, events.as_mut_ptr(), 1, timeout_ms) };
            if n >= 0 {
                return Ok(n > 0);
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

impl Drop for Epoll {
    fn drop(&mut self) {
        // SAFETY: `self.fd` is the epoll descriptor this value owns, closed only here.
        unsafe { libc::close(self.fd) };
    }
}

#[derive(Default, Clone, Copy)]
struct Class {
    timers: u64,
    /// Grid points (first deadline + k periods) at or before the end of the run.
    expected: u64,
    reaped: u64,
    /// Periods a late reap made the timer drop (Delay, Skip), on or before the end.
    dropped: u64,
    /// The most periods one reap found the timer behind.
    max_behind: u64,
}

impl Class {
    /// Counts one reap of a timer of period `period` in a run ending at `end`.
    fn count(&mut self, r: &Reaped, period: u64, end: u64, policy: Missed) {
        self.reaped += 1;
        self.max_behind = self.max_behind.max(r.overruns);
        if policy != Missed::Burst {
            // The skipped grid points d + p, ..., d + k p, those at or before the end.
            let by_end = end.saturating_sub(r.deadline) / period;
            self.dropped += r.overruns.min(by_end);
        }
    }
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(msg) if msg == USAGE => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(msg) => {
            eprintln!("{msg}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("poller: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let rt = Runtime::builder().shards(1).build()?;
    let set = TimerSet::with_config(
        &rt,
        TimerSetConfig::default()
            .with_quota(args.timers)
            .with_tolerance(Some(Tolerance::absolute(Duration::from_micros(
                args.tolerance_us,
            ))))
            .with_missed(args.policy),
    )?;
    let epoll = Epoll::watching(set.as_raw_fd())?;

    // Timer i: class i % 6, first expiry spread over its first period, label (class, i).
    let mut classes = [Class::default(); CLASSES.len()];
    let mut firsts = Vec::with_capacity(args.timers);
    for i in 0..args.timers {
        let class = i % CLASSES.len();
        let period = CLASSES[class] * 1_000_000;
        let offset = 1 + (i as u64 * 7_919_333) % period;
        let label = ((class as u64) << 32) | i as u64;
        let now = set.now_ns();
        set.create(
            Duration::from_nanos(offset),
            Duration::from_nanos(period),
            label,
        )?;
        firsts.push((class, now + offset, period));
        classes[class].timers += 1;
    }
    let start = set.now_ns();
    let end = start + (args.seconds * 1e9) as u64;
    for &(class, first, period) in &firsts {
        if first <= end {
            classes[class].expected += (end - first) / period + 1;
        }
    }

    let mut lateness = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)?;
    let (mut wakeups, mut empty_wakeups, mut late_after_end) = (0u64, 0u64, 0u64);
    let mut most_in_one_wakeup = 0u64;
    loop {
        let now = set.now_ns();
        if now >= end {
            break;
        }
        let timeout_ms = ((end - now) / 1_000_000).clamp(1, 1_000) as i32;
        if !epoll.wait(timeout_ms)? {
            continue;
        }
        wakeups += 1;
        let mut reaped_now = 0u64;
        // Reap until the queue is empty. A loop that cannot keep up (a debug build, too many
        // timers) would never see it empty under Burst, so it also looks at the clock.
        while let Some(r) = set.reap_info() {
            let t = set.now_ns();
            if r.deadline > end {
                late_after_end += 1;
                continue;
            }
            let class = ((r.label >> 32) as usize).min(CLASSES.len() - 1);
            classes[class].count(&r, CLASSES[class] * 1_000_000, end, args.policy);
            lateness.saturating_record(t.saturating_sub(r.deadline).max(1));
            reaped_now += 1;
            if t >= end {
                break;
            }
        }
        if reaped_now == 0 {
            empty_wakeups += 1;
        }
        most_in_one_wakeup = most_in_one_wakeup.max(reaped_now);
    }
    // Expiries due by the end that the loop had not reaped yet (every call catches the queue
    // up with the clock). A timer whose next period falls after the end is cancelled once
    // reaped, so this drain ends; one behind schedule comes round again until it is not.
    let give_up = set.now_ns() + 5_000_000_000;
    while let Some(r) = set.reap_info() {
        let class = ((r.label >> 32) as usize).min(CLASSES.len() - 1);
        let period = CLASSES[class] * 1_000_000;
        if r.deadline <= end {
            classes[class].count(&r, period, end, args.policy);
            lateness.saturating_record(set.now_ns().saturating_sub(r.deadline).max(1));
        } else {
            late_after_end += 1;
        }
        if r.deadline.saturating_add(period) > end || set.now_ns() > give_up {
            let _ = set.cancel(r.handle);
        }
    }
    let elapsed = (set.now_ns() - start) as f64 / 1e9;
    let stats = set.stats();
    let shard = rt
        .stats()
        .into_iter()
        .next()
        .map(|s| s.wakeups)
        .unwrap_or(0);
    drop(set);

    println!(
        "poller: {} periodic timers in one set, {:.2} s, policy {:?}, tolerance {} us",
        args.timers, elapsed, args.policy, args.tolerance_us
    );
    println!();
    println!("| period | timers | expected | reaped | dropped | missing | most behind |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    let mut total = Class::default();
    let row = |name: String, c: &Class| {
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} |",
            c.timers,
            c.expected,
            c.reaped,
            c.dropped,
            c.expected as i64 - (c.reaped + c.dropped) as i64,
            c.max_behind
        )
    };
    for (i, c) in classes.iter().enumerate() {
        row(format!("{} ms", CLASSES[i]), c);
        total.timers += c.timers;
        total.expected += c.expected;
        total.reaped += c.reaped;
        total.dropped += c.dropped;
        total.max_behind = total.max_behind.max(c.max_behind);
    }
    row("all".to_string(), &total);
    println!();
    println!(
        "epoll wake-ups: {wakeups} ({empty_wakeups} with nothing to reap), {:.1} reaps per \
         wake-up, at most {most_in_one_wakeup} in one; runtime driver wake-ups (the set's one runtime timer): {shard}",
        total.reaped as f64 / wakeups.max(1) as f64
    );
    let us = |v: u64| v as f64 / 1e3;
    println!(
        "lateness (reap time - deadline): p50 {:.0} us, p99 {:.0} us, max {:.0} us, mean {:.0} us",
        us(lateness.value_at_quantile(0.5)),
        us(lateness.value_at_quantile(0.99)),
        us(lateness.max()),
        lateness.mean() / 1e3
    );
    println!(
        "set: {} expiries, {} reaps ({} of them for deadlines after the end, not counted above)",
        stats.expired, stats.reaped, late_after_end
    );
    println!(
        "{}",
        match args.policy {
            Missed::Burst => "Burst: a late reap drops nothing; every period is delivered, late",
            Missed::Skip => "Skip: a late reap drops the missed periods and stays on the grid",
            Missed::Delay => {
                "Delay: a late reap drops the missed periods and moves the grid to the reap \
                 (so fewer than expected fall before the end)"
            }
        }
    );
    let missing = total.expected as i64 - (total.reaped + total.dropped) as i64;
    if missing != 0 && args.policy != Missed::Delay {
        println!(
            "note: {missing} expected expiries neither reaped nor dropped (a deadline within \
             microseconds of a timer's creation or of the end can fall on either side)"
        );
    }
    Ok(())
}
