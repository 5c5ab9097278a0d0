//! A runtime built before a fork, in the child: it arms nothing (`Error::ShutDown`), its timer
//! sets take no timer and find none queued, even with their lock held for ever by a parent
//! thread that the child lacks, and dropping the runtime returns (it does not join the
//! parent's threads); a runtime built in the child fires its timers; the parent's timer fires.
//!
//! Its own test binary: a fork copies only the forking thread, and other tests' threads would
//! be copied mid-way.

use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::mpsc;
use std::time::Duration;

use callwheel_rt::{Error, Exec, Runtime, TimerSet};

const PATIENCE: Duration = Duration::from_secs(5);

/// A writer whose first write says so and then blocks until released: a `Debug` of a timer
/// set, which formats under the set's lock, holds that lock meanwhile.
struct Blocking {
    entered: mpsc::Sender<()>,
    released: mpsc::Receiver<()>,
}

impl std::fmt::Write for Blocking {
    fn write_str(&mut self, _: &str) -> std::fmt::Result {
        let _ = self.entered.send(());
        let _ = self.released.recv_timeout(PATIENCE);
        Ok(())
    }
}

#[test]
fn a_runtime_from_before_a_fork_arms_nothing_in_the_child_and_drops() {
    let rt = Runtime::builder().shards(1).build().expect("a runtime");
    let (tx, fired) = mpsc::channel();
    let timer = rt
        .timer(Exec::Direct, move |_, _| {
            let _ = tx.send(());
        })
        .expect("a timer");
    timer
        .start_after(Duration::from_millis(100))
        .expect("armed");
    let set = TimerSet::new(&rt).expect("a set");
    // One timer queued before the fork: the copy's `wait` and `reap` would find it, were the
    // copy live.
    set.create(Duration::from_millis(1), Duration::ZERO, 1)
        .expect("created");
    assert!(set.wait(Some(PATIENCE)));
    let parent_generation = callwheel_rt::fork_generation();
    // Moved into the child's side only (the parent keeps them).
    let mut owned = Some((timer, rt));

    let pid = std::thread::scope(|scope| {
        // A parent thread holds the set's lock across the fork: in the child that lock stays
        // held, and no call on the set's copy may take it.
        let (entered, in_lock) = mpsc::channel();
        let (release, released) = mpsc::channel();
        let set = &set;
        scope.spawn(move || {
            let _ = write!(Blocking { entered, released }, "{set:?}");
        });
        in_lock.recv_timeout(PATIENCE).expect("the lock is held");
        // SAFETY: the child only runs Rust code of this test and ends with `_exit`.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            if let Some((timer, rt)) = owned.take() {
                in_child(set, timer, rt, parent_generation);
            }
        }
        let _ = release.send(());
        pid
    });
    fired
        .recv_timeout(PATIENCE)
        .expect("the parent's timer fired");
    let mut status = 0;
    // SAFETY: `pid` is this process's child; `status` is a valid place for its status.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the child failed (status {status:#x}; signal 14 is its 10 s alarm: a hang)"
    );
    assert!(set.reap().is_some(), "the parent's queued timer");
    assert!(set
        .create(Duration::from_secs(60), Duration::ZERO, 1)
        .is_ok());
}

/// The child's side: never returns.
fn in_child(set: &TimerSet, timer: callwheel_rt::Timer, rt: Runtime, parent_generation: u64) -> ! {
    // SAFETY: `alarm` only sets a timer: a hang ends the child with SIGALRM.
    unsafe { libc::alarm(10) };
    // Straight to the descriptor: the harness's capture of the output dies with the child.
    std::panic::set_hook(Box::new(|info| {
        let _ = writeln!(std::io::stderr(), "in the forked child: {info}");
    }));
    let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        assert_eq!(callwheel_rt::fork_generation(), parent_generation + 1);
        assert!(callwheel_rt::is_forking_thread());
        assert!(matches!(
            timer.start_after(Duration::from_millis(1)),
            Err(Error::ShutDown)
        ));
        assert!(matches!(
            set.create(Duration::from_millis(1), Duration::ZERO, 1),
            Err(Error::ShutDown)
        ));
        assert!(!set.wait(Some(Duration::ZERO)));
        assert!(set.reap().is_none());
        assert_eq!(set.len(), 0);
        assert_eq!(set.stats().queued, 0);
        set.set_callback(|| {});
        set.clear_callback();
        assert_eq!(set.check_invariants(), Ok(()));
        assert!(format!("{set:?}").contains("forked_copy"));
        drop(timer);
        drop(rt); // returns: the parent's threads are not joined
        let mine = Runtime::builder()
            .shards(1)
            .build()
            .expect("the child's runtime");
        let (tx, fired) = mpsc::channel();
        let t = mine
            .timer(Exec::Direct, move |_, _| {
                let _ = tx.send(());
            })
            .expect("a timer");
        t.start_after(Duration::from_millis(2)).expect("armed");
        fired
            .recv_timeout(PATIENCE)
            .expect("the child's timer fired");
    }));
    // SAFETY: ends the child without running the parent's destructors or the harness.
    unsafe { libc::_exit(if ok.is_ok() { 0 } else { 1 }) }
}
