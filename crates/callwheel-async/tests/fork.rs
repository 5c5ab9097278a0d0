//! A forked child: the drivers made before the fork are copies there, with no thread turning
//! them and alarms the parent still uses. Sleeps made in the child complete at their deadlines
//! on a process-wide driver of the child's own; a sleep that follows its context and was
//! registered before the fork registers again in the child and completes not before its
//! deadline; one on a driver of the caller's completes at once (as on a driver shut down); and
//! the parent's timers keep firing whatever the child does.
//!
//! Its own test binary: a fork copies only the forking thread, and other tests' threads would
//! be copied mid-way.

use std::future::Future;
use std::io::Write;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use callwheel_async::{sleep, timeout, DelayQueue, Driver, Sleep};

#[cfg(feature = "tokio")]
mod common;

const MS: Duration = Duration::from_millis(1);

/// Forks: the child runs `child` and exits, 0 when it returned (it is killed by `SIGALRM`
/// after 10 s, so a lost wake-up fails rather than hangs); the parent gets the child's pid.
fn fork_child(child: impl FnOnce()) -> libc::pid_t {
    // SAFETY: the child only runs Rust code of this test and ends with `_exit`; the C
    // library's fork handlers (callwheel's among them) keep its allocator usable there.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: `alarm` only sets a timer.
        unsafe { libc::alarm(10) };
        // Straight to the descriptor: the harness's capture of the output dies with the child.
        std::panic::set_hook(Box::new(|info| {
            let _ = writeln!(std::io::stderr(), "in the forked child: {info}");
        }));
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).is_ok();
        // SAFETY: `_exit` ends the child without running the parent's destructors or the
        // test harness.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    pid
}

/// Waits for the child `pid` and asserts that it exited 0.
fn child_passed(what: &str, pid: libc::pid_t) {
    let mut status = 0;
    // SAFETY: `pid` is this process's child; `status` is a valid place for its status.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(waited, pid, "{what}: waitpid");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{what}: the child failed (status {status:#x}; signal 14 is the 10 s alarm: a lost wake-up)"
    );
}

/// Polls `s` once with a waker that does nothing: the sleep registers on its driver.
fn register(s: &mut Sleep) {
    let mut cx = Context::from_waker(std::task::Waker::noop());
    assert_eq!(std::pin::Pin::new(s).poll(&mut cx), Poll::Pending);
}

/// A sleep of `d` on the calling thread, outside any runtime: it must last at least `d`.
fn sleep_here(d: Duration) {
    let start = Instant::now();
    futures::executor::block_on(sleep(d));
    assert!(start.elapsed() >= d, "a sleep ended early");
}

/// One test, so that no other test's thread runs at a fork.
#[test]
fn timers_work_on_both_sides_of_a_fork() {
    outside_any_runtime();
    #[cfg(feature = "tokio")]
    in_tokio_runtimes();
    #[cfg(feature = "tokio")]
    inside_a_tokio_runtime();
    in_a_grandchild();
}

fn outside_any_runtime() {
    // Before the fork: the process-wide driver (or this thread's wheel on async-io's reactor)
    // is in use, with a sleep registered on it, and a driver of the caller's with another.
    sleep_here(2 * MS);
    let first = std::ptr::from_ref(Driver::global().expect("the process-wide driver"));
    let mut pending = sleep(Duration::from_millis(500));
    register(&mut pending);
    let deadline = pending.deadline();
    // A delay queue whose value is registered, polled again in the child with the same waker
    // (`futures::executor::block_on`'s, one per thread): its quick path must not take the
    // parent's copy of the registration for a live one.
    let mut queue = DelayQueue::new();
    // Read before the insert: the value's deadline is no earlier.
    let queued_until = Instant::now() + Duration::from_millis(300);
    queue.insert(7u32, Duration::from_millis(300));
    futures::executor::block_on(std::future::poll_fn(|cx| {
        assert!(queue.poll_expired(cx).is_pending());
        Poll::Ready(())
    }));
    let own = Driver::builder().build().expect("a driver");
    let mut on_own = own.sleep(Duration::from_secs(3600));
    register(&mut on_own);
    assert_eq!(own.pending(), 1);

    let child = fork_child(|| {
        // Registered before the fork, and polled again here before they are due: each
        // registers again here and keeps its deadline.
        let expired =
            futures::executor::block_on(std::future::poll_fn(|cx| queue.poll_expired(cx)));
        assert_eq!(expired.map(|e| e.into_inner()), Some(7));
        assert!(Instant::now() >= queued_until);
        futures::executor::block_on(&mut pending);
        assert!(
            Instant::now() >= deadline,
            "a sleep from before the fork ended early"
        );
        // The child's own process-wide driver, not the parent's copy.
        let global = Driver::global().expect("the child's process-wide driver");
        assert!(!std::ptr::eq(global, first), "the parent's driver was kept");
        sleep_here(20 * MS);
        let start = Instant::now();
        futures::executor::block_on(global.sleep(20 * MS));
        assert!(start.elapsed() >= 20 * MS);
        let start = Instant::now();
        let never = std::future::pending::<()>();
        assert!(futures::executor::block_on(timeout(10 * MS, never)).is_err());
        assert!(start.elapsed() >= 10 * MS);
        // On a driver of the caller's: its copy is shut down here, the sleep completes.
        futures::executor::block_on(&mut on_own);
    });
    // The parent's timers fire while the child sets its own.
    for _ in 0..3 {
        sleep_here(15 * MS);
    }
    futures::executor::block_on(&mut pending);
    assert!(Instant::now() >= deadline);
    let expired = futures::executor::block_on(std::future::poll_fn(|cx| queue.poll_expired(cx)));
    assert_eq!(expired.map(|e| e.into_inner()), Some(7));
    assert_eq!(own.pending(), 1, "the parent's driver lost a timer");
    child_passed("outside any runtime", child);
    assert!(std::ptr::eq(Driver::global().expect("the driver"), first));
    drop(on_own);
    assert_eq!(own.pending(), 0);
}

/// Forked from inside a tokio runtime (its `block_on`): in the child, that thread is still in
/// the parent's runtime, which no thread of the child runs; a sleep polled there must not
/// start a driver on it, and goes to the child's process-wide driver.
#[cfg(feature = "tokio")]
fn inside_a_tokio_runtime() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(async {
        sleep(2 * MS).await;
        let child = fork_child(|| sleep_here(20 * MS));
        // The parent's runtime goes on.
        for _ in 0..3 {
            let start = Instant::now();
            sleep(15 * MS).await;
            assert!(start.elapsed() >= 15 * MS);
        }
        child_passed("inside a tokio runtime", child);
    });
}

#[cfg(feature = "tokio")]
fn in_tokio_runtimes() {
    let rt = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    };
    let parent_rt = rt();
    // Registered on the parent runtime's wheel for this thread, from a task of that runtime.
    let mut pending = sleep(Duration::from_millis(150));
    parent_rt.block_on(async {
        sleep(2 * MS).await;
        std::future::poll_fn(|cx| {
            assert!(std::pin::Pin::new(&mut pending).poll(cx).is_pending());
            Poll::Ready(())
        })
        .await;
    });
    let deadline = pending.deadline();
    let child = fork_child(|| {
        // The parent's runtime is not usable here (tokio's rule): a new one is.
        let child_rt = rt();
        child_rt.block_on(async {
            let start = Instant::now();
            sleep(20 * MS).await;
            assert!(start.elapsed() >= 20 * MS);
            // Registered on the parent's runtime before the fork: registers again here.
            (&mut pending).await;
            assert!(
                Instant::now() >= deadline,
                "a sleep from before the fork ended early"
            );
        });
        // Served by the child's runtime itself, on the thread that forked: no driver thread.
        assert_eq!(common::driver_threads(), Vec::<String>::new());
        // The parent's runtime is left alone (the child ends with `_exit`): dropping it
        // here would deregister the parent's descriptors from the `epoll` instance both
        // processes share.
    });
    parent_rt.block_on(async {
        for _ in 0..3 {
            let start = Instant::now();
            sleep(15 * MS).await;
            assert!(start.elapsed() >= 15 * MS);
        }
        (&mut pending).await;
        assert!(Instant::now() >= deadline);
    });
    child_passed("a tokio runtime", child);
}

/// A child forked from a child gets a driver of its own too (the generation counts each fork).
fn in_a_grandchild() {
    sleep_here(MS);
    let child = fork_child(|| {
        sleep_here(5 * MS);
        let mine = std::ptr::from_ref(Driver::global().expect("the child's driver"));
        let grandchild = fork_child(|| {
            let global = Driver::global().expect("the grandchild's driver");
            assert!(!std::ptr::eq(global, mine));
            sleep_here(5 * MS);
        });
        sleep_here(5 * MS);
        child_passed("a grandchild", grandchild);
    });
    sleep_here(5 * MS);
    child_passed("a child", child);
}
