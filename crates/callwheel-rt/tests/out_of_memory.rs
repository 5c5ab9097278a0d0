//! A runtime whose timers' allocations the allocator refuses, and a timer set whose growth it
//! refuses, return `Error::Wheel(NoMemory)` and keep every timer they hold: driven to failure
//! under a small address-space limit (`RLIMIT_AS`) in a child process, so the limit never
//! touches the test runner.
#![cfg(not(miri))]

use std::process::Command;
use std::time::Duration;

use callwheel_rt::{Error, Exec, Runtime, Timer, TimerSet, TimerSetConfig, MAX_QUOTA};
use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// The variable that tells the re-executed test binary to be the child.
const CHILD: &str = "CALLWHEEL_RT_OOM_CHILD";

/// Address space the child may use beyond what it has mapped when the limit is set: far less
/// than a set of `MAX_QUOTA` timers needs, so the allocator refuses before the quota does.
const HEADROOM: u64 = 16 << 20;

fn limit_memory() {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().next().unwrap().parse().unwrap();
    let mapped = pages * rustix::param::page_size() as u64;
    let old = getrlimit(Resource::As);
    setrlimit(
        Resource::As,
        Rlimit {
            current: Some(mapped + HEADROOM),
            maximum: old.maximum,
        },
    )
    .unwrap();
}

/// Waits until every thread of `rt` has started: a thread sets up its signal stack as it
/// starts, which a memory limit set before that would refuse (the child would then die of the
/// limit, not fail the test's way). A timer fired on the driver, then one on the worker, shows
/// each running.
fn threads_started(rt: &Runtime) {
    for exec in [Exec::Direct, Exec::Deferred] {
        let (tx, rx) = std::sync::mpsc::channel();
        let t = rt
            .timer(exec, move |_, _| {
                let _ = tx.send(());
            })
            .unwrap();
        t.start_after(Duration::ZERO).unwrap();
        rx.recv().unwrap();
    }
}

/// Creates hour-long timers (the driver never fires them) until `create` refuses, then checks
/// the refusal and that every timer created before is still there and answers.
fn exhaust_a_set() {
    let rt = Runtime::builder().shards(1).workers(1).build().unwrap();
    let set = TimerSet::with_config(&rt, TimerSetConfig::default().with_quota(MAX_QUOTA)).unwrap();
    let hour = Duration::from_secs(3600);
    let mut first = Vec::with_capacity(256);
    threads_started(&rt);
    limit_memory();
    let mut n = 0usize;
    let err = loop {
        match set.create(hour, Duration::ZERO, n as u64) {
            Ok(h) => {
                if first.len() < first.capacity() {
                    first.push(h);
                }
                n += 1;
            }
            Err(e) => break e,
        }
    };
    assert!(
        matches!(err, Error::Wheel(callwheel::Error::NoMemory)),
        "refused with {err:?} after {n} timers (the quota is {MAX_QUOTA})"
    );
    assert_eq!(
        set.len(),
        n,
        "every timer created before the refusal is there"
    );
    for h in &first {
        assert!(set.get(*h).unwrap().remaining > Duration::ZERO);
        set.cancel(*h).unwrap();
    }
    println!("refused after {n} timers");
}

/// Creates runtime timers, each with 64 KiB of captures (so that the timers, not the wheel's
/// slots, exhaust the memory), and arms each an hour ahead, until making a timer is refused;
/// checks the refusal and that every timer made before is still pending and can be stopped.
fn exhaust_a_runtime() {
    let rt = Runtime::builder().shards(1).workers(1).build().unwrap();
    let hour = std::time::Duration::from_secs(3600);
    let mut timers: Vec<Timer> = Vec::with_capacity(1 << 16);
    threads_started(&rt);
    limit_memory();
    let err = loop {
        let ballast = [timers.len() as u8; 64 << 10];
        let t = match rt.timer(Exec::Direct, move |_, _| {
            std::hint::black_box(&ballast);
        }) {
            Ok(t) => t,
            Err(e) => break e,
        };
        t.start_after(hour).unwrap();
        assert!(timers.len() < timers.capacity(), "no refusal");
        timers.push(t);
    };
    assert!(
        matches!(err, Error::Wheel(callwheel::Error::NoMemory)),
        "refused with {err:?} after {} timers",
        timers.len()
    );
    assert!(
        timers.len() > 16,
        "refused only after some timers were made"
    );
    assert!(
        timers.iter().all(Timer::is_pending),
        "every timer made before is pending"
    );
    for t in &timers {
        assert_eq!(t.stop(), callwheel_rt::Stop::Cancelled);
    }
    println!("refused after {} timers", timers.len());
}

/// Runs the test `name` again in a child process that is the child (`CHILD` set), and checks
/// that it finished and printed its refusal.
fn in_child(name: &str) {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("refused after"),
        "the child failed ({}): {}{}",
        out.status,
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_timer_set_returns_no_memory_and_keeps_its_timers() {
    if std::env::var_os(CHILD).is_some() {
        exhaust_a_set();
    } else {
        in_child("a_timer_set_returns_no_memory_and_keeps_its_timers");
    }
}

#[test]
fn a_runtime_refuses_a_timer_when_memory_runs_out_and_keeps_the_others() {
    if std::env::var_os(CHILD).is_some() {
        exhaust_a_runtime();
    } else {
        in_child("a_runtime_refuses_a_timer_when_memory_runs_out_and_keeps_the_others");
    }
}
