//! What several of the runtime's integration tests share. Each test binary uses a part of it,
//! so the parts it does not use are allowed to go unused there.
#![allow(dead_code)]

use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::mpsc;
use std::time::Duration;

use callwheel_rt::ManualClock;

/// How long [`settle`] waits before it fails the test.
const SETTLE_PATIENCE: Duration = Duration::from_secs(30);

/// [`ManualClock::wait_idle`] with a bound: a runtime that never settles fails the test
/// instead of hanging it.
pub fn settle(clock: &ManualClock, waiters: usize) {
    let clock = clock.clone();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        clock.wait_idle(waiters);
        let _ = tx.send(());
    });
    rx.recv_timeout(SETTLE_PATIENCE)
        .expect("the runtime never became idle");
}

/// Whether `fd` is readable within `timeout_ms` (0: right now).
pub fn readable(fd: BorrowedFd<'_>, timeout_ms: i32) -> bool {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `p` is one live pollfd for the duration of the call.
    let r = unsafe { libc::poll(&mut p, 1, timeout_ms) };
    assert!(r >= 0, "poll failed");
    r == 1 && p.revents & libc::POLLIN != 0
}

/// A deterministic spread of values (a linear congruential generator): the tests need
/// reproducible variety, not statistical quality.
pub struct Lcg(pub u64);

impl Lcg {
    /// A value in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}
