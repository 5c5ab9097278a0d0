//! Structures that grow with the caller's input return `Error::NoMemory` when the allocator
//! refuses, and keep every timer already started: driven to failure under a small address-space
//! limit (`RLIMIT_AS`) in a child process, so the limit never touches the test runner.
#![cfg(target_os = "linux")]

use std::process::Command;

use callwheel::Wheel;
use callwheel::{Error, Handle, Scheme, Timers};
use callwheel_schemes::balanced_tree::BalancedTree;
use callwheel_schemes::binary_heap::BinaryHeap;
use callwheel_schemes::calendar_queue::CalendarQueue;
use callwheel_schemes::hashed_wheel::HashedWheel;
use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// The variable that tells a re-executed test binary which structure to exhaust.
const CHILD: &str = "CALLWHEEL_OOM_CHILD";

/// Address space the child may use beyond what it has mapped already.
const HEADROOM: u64 = 256 << 20;

/// Runs this test binary again, only `test`, as the child that exhausts memory; the child's
/// checks are assertions, so a failure or an abort shows as a non-zero exit or a signal.
fn in_child(test: &str, which: &str) {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, which)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the child exhausting {which} failed ({}): {}{}",
        out.status,
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("refused after"),
        "the child never reached the limit: {stdout}"
    );
}

/// Limits the address space to what is mapped now plus `headroom`.
fn limit_memory(headroom: u64) {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().next().unwrap().parse().unwrap();
    let mapped = pages * rustix::param::page_size() as u64;
    let old = getrlimit(Resource::As);
    let limit = mapped + headroom;
    setrlimit(
        Resource::As,
        Rlimit {
            current: Some(limit),
            maximum: old.maximum,
        },
    )
    .unwrap();
}

/// Starts timers until `start` refuses; then checks the refusal is `NoMemory`, that every
/// timer started before is still pending, and that stopping works and frees room again.
fn exhaust<S: Scheme<u64>>(s: S) {
    exhaust_within(s, HEADROOM);
}

/// [`exhaust`] with `headroom` bytes of address space beyond what is mapped when it begins.
fn exhaust_within<S: Scheme<u64>>(mut s: S, headroom: u64) {
    limit_memory(headroom);
    let mut first: Vec<Handle> = Vec::with_capacity(1024);
    let mut n = 0u64;
    let err = loop {
        match s.start(1 + n % 1_000_000, n) {
            Ok(h) => {
                if first.len() < first.capacity() {
                    first.push(h);
                }
                n += 1;
            }
            Err(e) => break e,
        }
        assert!(n < 1 << 34, "the limit was never reached");
    };
    assert_eq!(err, Error::NoMemory);
    assert_eq!(
        s.len() as u64,
        n,
        "every timer started before the refusal is pending"
    );
    for (i, h) in first.iter().enumerate() {
        assert_eq!(s.stop(*h), Some(i as u64));
    }
    // The stopped timers' slots are free again: starts succeed without growing.
    for _ in 0..first.len() {
        s.start(5, 0).unwrap();
    }
    println!("refused after {n} timers");
}

#[test]
fn the_wheel_returns_no_memory_and_keeps_its_timers() {
    match std::env::var(CHILD).as_deref() {
        Ok("wheel") => exhaust(Wheel::<u64>::new()),
        Ok(_) => {}
        Err(_) => in_child("the_wheel_returns_no_memory_and_keeps_its_timers", "wheel"),
    }
}

#[test]
fn a_scheme_slab_returns_no_memory_and_keeps_its_timers() {
    match std::env::var(CHILD).as_deref() {
        Ok("hashed") => exhaust(HashedWheel::<u64>::new(8).unwrap()),
        Ok("heap") => exhaust(BinaryHeap::<u64>::new()),
        Ok("calendar") => exhaust(CalendarQueue::<u64>::new()),
        Ok(_) => {}
        Err(_) => {
            let test = "a_scheme_slab_returns_no_memory_and_keeps_its_timers";
            in_child(test, "hashed");
            // The heap's array grows beside the slab: reserved before the timer is taken.
            in_child(test, "heap");
            // The calendar queue: its slab refuses first here (its resize buffers, reserved
            // before any timer moves, are smaller than the slab's doubling).
            in_child(test, "calendar");
        }
    }
}

/// Slots the balanced tree's slab is grown to before its limit is set.
const TREE_SLAB: u64 = 1 << 22;

/// Address space the balanced tree's child may use beyond its grown slab: less than the 192 MiB
/// the slab's next doubling needs, and far less than any per-timer allocation would need for
/// `TREE_SLAB` timers.
const TREE_HEADROOM: u64 = 16 << 20;

/// The red-black tree lives in the slab's nodes, so the slab's refusal is the only one a start
/// can meet. Under the plain [`exhaust`] a tree that allocated per insert (a standard B-tree)
/// can still pass: its slab happens to hit the limit first. So nothing
/// else is allowed to grow here: the slab is first grown to `TREE_SLAB` slots with overdue
/// timers (which never enter the tree) and emptied, then the address space is limited to
/// `TREE_HEADROOM` beyond it. The `TREE_SLAB` starts that reuse those slots must allocate
/// nothing (a B-tree would need at least 21 bytes a timer, 84 MiB, more than the headroom and
/// what the allocator's arena keeps in reserve, and abort); the next start needs the slab to
/// double and gets `NoMemory`.
#[test]
fn the_balanced_tree_returns_no_memory_and_keeps_its_timers() {
    match std::env::var(CHILD).as_deref() {
        Ok("tree") => {
            let mut tree = BalancedTree::<u64>::new();
            let handles: Vec<Handle> = (0..TREE_SLAB).map(|v| tree.start(0, v).unwrap()).collect();
            for (v, h) in handles.into_iter().enumerate() {
                assert_eq!(tree.stop(h), Some(v as u64));
            }
            assert_eq!(tree.len(), 0);
            exhaust_within(tree, TREE_HEADROOM);
        }
        Ok(_) => {}
        Err(_) => in_child(
            "the_balanced_tree_returns_no_memory_and_keeps_its_timers",
            "tree",
        ),
    }
}
