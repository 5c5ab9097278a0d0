//! The process-wide runtime and ITIMER_MULTIREAL set from a fresh process (this test binary
//! is its own process, and nothing else in it touches them): threads racing to make them make
//! one runtime and one set; cw_multireal_init before first use sets the quota (and refuses one
//! above the maximum without making the set). Real threads and clocks: not for Miri.
#![cfg(not(miri))]

use std::ptr::null_mut;
use std::sync::Barrier;
use std::thread;

use callwheel_ffi::{
    cw_multireal_init, cw_multireal_set, cw_setitimer, cw_timerset, cw_timerset_free,
    cw_timerset_new, CW_EBUSY, CW_EINVAL, CW_ITIMER_MULTIREAL, CW_MISSED_BURST, CW_OK,
    CW_TIMERSET_MAX_QUOTA,
};
use libc::{itimerval, timeval};

const THREADS: usize = 8;

fn tv(sec: i64, usec: i64) -> timeval {
    timeval {
        tv_sec: sec,
        tv_usec: usec,
    }
}

/// Threads of this process whose name starts with `prefix`.
fn threads_named(prefix: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.unwrap().path().join("comm")).ok())
        .filter(|name| name.starts_with(prefix))
        .count()
}

/// The threads named `prefix` once they have all named themselves: a new thread takes its
/// name when it first runs, which a loaded machine may delay, so the count is read until it
/// has stayed the same for a while (at most ten seconds in all).
fn settled_threads_named(prefix: &str) -> usize {
    let give_up = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut last = threads_named(prefix);
    let mut same = 0;
    while same < 20 && std::time::Instant::now() < give_up {
        thread::sleep(std::time::Duration::from_millis(5));
        let now = threads_named(prefix);
        same = if now == last && now > 0 { same + 1 } else { 0 };
        last = now;
    }
    last
}

/// Runs `f` on THREADS threads released together; returns their results.
fn race<T: Send>(f: impl Fn() -> T + Sync) -> Vec<T> {
    let start = Barrier::new(THREADS);
    thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    start.wait();
                    f()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn first_calls_race_to_one_runtime_and_one_set_and_init_sets_the_quota() {
    // The runtime: sets made at once by several threads share one driver thread.
    assert_eq!(threads_named("callwheel-rt-dr"), 0, "a fresh process");
    let sets = race(|| {
        let mut set: *mut cw_timerset = null_mut();
        // SAFETY: `set` is a local.
        assert_eq!(
            unsafe { cw_timerset_new(4, CW_MISSED_BURST, &mut set) },
            CW_OK
        );
        set as usize
    });
    assert_eq!(settled_threads_named("callwheel-rt-dr"), 1, "one runtime");
    for set in sets {
        // SAFETY: made above, used by nobody else.
        assert_eq!(unsafe { cw_timerset_free(set as *mut cw_timerset) }, CW_OK);
    }

    // A quota above the maximum is refused, and the set is not made.
    assert_eq!(cw_multireal_init(CW_TIMERSET_MAX_QUOTA + 1), CW_EINVAL);

    // One of the racing inits makes the set; the others find it made.
    let codes = race(|| cw_multireal_init(2));
    assert_eq!(
        codes.iter().filter(|&&c| c == CW_OK).count(),
        1,
        "{codes:?}"
    );
    assert_eq!(
        codes.iter().filter(|&&c| c == CW_EBUSY).count(),
        THREADS - 1
    );
    let sets = race(|| cw_multireal_set() as usize);
    assert!(
        sets[0] != 0 && sets.iter().all(|&s| s == sets[0]),
        "one set"
    );
    assert_eq!(cw_multireal_init(0), CW_EBUSY);
    assert_eq!(
        settled_threads_named("callwheel-rt-dr"),
        1,
        "the set is on the same runtime"
    );

    // Its quota is the one given: two timers, and the third create is EAGAIN.
    let value = itimerval {
        it_value: tv(100, 0),
        it_interval: tv(0, 0),
    };
    for label in 1..=3 {
        let mut o = itimerval {
            it_value: tv(-1, -1),
            it_interval: tv(label, 0),
        };
        let before = (o.it_value.tv_sec, o.it_value.tv_usec);
        // SAFETY: the structures are locals.
        let rc = unsafe { cw_setitimer(CW_ITIMER_MULTIREAL, &value, &mut o) };
        if label <= 2 {
            assert_eq!(rc, 0);
        } else {
            assert_eq!(rc, -1);
            assert_eq!(
                std::io::Error::last_os_error().raw_os_error(),
                Some(libc::EAGAIN)
            );
            assert_eq!((o.it_value.tv_sec, o.it_value.tv_usec), before);
        }
    }
}
