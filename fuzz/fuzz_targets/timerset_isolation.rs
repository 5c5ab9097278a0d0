//! Isolation of timer sets, through callwheel-ffi's C entry points: random calls on
//! two sets, A and B, with random handles — their own (live and stale), stolen from the other
//! set, from sets already freed, made up, or one bit away from a real one — through both the
//! clean API (`cw_timer_*`) and the paper's `setitimer`/`getitimer` surface
//! (`cw_setitimer_on` / `cw_getitimer_on`), with well-formed and malformed `struct itimerval`s,
//! while a manual clock moves; sometimes a set is freed and made anew.
//!
//! The oracle is a shadow: each C set has a twin `TimerSet` on the same clock that receives
//! exactly the calls meant for its set and nothing else — a call on A whose handle A issued
//! (live or not) is replayed on A's twin with the twin's handle; a call with any other handle
//! must fail with EINVAL and is not replayed. Every call's result must equal the twin's
//! (codes, values rounded as the C layer rounds them, reaped handles and labels). After every
//! call both sets must match their twins in full: the running and queued counts, the
//! descriptor's readiness, the value and overruns of every handle the set ever issued, and the
//! sets' own invariants. So whatever is done to B, A behaves exactly as if B did not exist.
//! Any panic (caught at the C boundary or not) aborts the run.
#![no_main]

use core::ffi::c_int;
use core::ptr::null_mut;
use std::cell::Cell;
use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::sync::OnceLock;
use std::time::Duration;

use callwheel_ffi::{
    cw_getitimer_on, cw_setitimer_on, cw_timer_cancel, cw_timer_create, cw_timer_get,
    cw_timer_overruns, cw_timer_reap, cw_timer_reset, cw_timer_set_missed, cw_timer_value,
    cw_timerset, cw_timerset_counts, cw_timerset_fd, cw_timerset_free, cw_timerset_wait, CW_EINVAL,
    CW_ENOSPC, CW_MISSED_BURST, CW_MISSED_DELAY, CW_MISSED_SKIP, CW_OK,
};
use callwheel_rt::{
    Error, ManualClock, Missed, Runtime, TimerHandle, TimerSet, TimerSetConfig, TimerValue,
};
use libc::{itimerval, timeval};
use libfuzzer_sys::fuzz_target;

/// Calls per input, at most.
const MAX_CALLS: usize = 200;
/// Handles whose values are compared after every call (the most recently issued).
const MAX_COMPARED: usize = 48;

/// One runtime on one manual clock for the whole fuzzing process (a runtime per input would
/// start threads per input). Time only moves forward; every set is made and dropped within its
/// input, so inputs do not see each other's timers.
struct Env {
    clock: ManualClock,
    rt: Runtime,
}

fn env() -> &'static Env {
    static ENV: OnceLock<Env> = OnceLock::new();
    ENV.get_or_init(|| {
        let clock = ManualClock::new(1_000_000_000);
        let rt = Runtime::builder()
            .clock(clock.clone())
            .shards(1)
            .workers(1)
            .build()
            .expect("the runtime starts");
        Env { clock, rt }
    })
}

/// The input as a stream of choices; zeros once it runs out.
struct Bytes<'a> {
    data: &'a [u8],
    at: Cell<usize>,
}

impl Bytes<'_> {
    fn exhausted(&self) -> bool {
        self.at.get() >= self.data.len()
    }

    fn byte(&self) -> u8 {
        let b = self.data.get(self.at.get()).copied().unwrap_or(0);
        self.at.set(self.at.get() + 1);
        b
    }

    fn below(&self, n: u8) -> u8 {
        self.byte() % n
    }

    fn bits(&self) -> u64 {
        (0..8).fold(0, |v, _| v << 8 | u64::from(self.byte()))
    }

    /// Nanoseconds for a value: mostly up to ~25 ms, sometimes zero or absurd.
    fn value_ns(&self) -> u64 {
        match self.below(10) {
            0 => 0,
            1 => [u64::MAX, u64::MAX / 2, 1][usize::from(self.below(3))],
            _ => u64::from(self.byte()) * 100_000 + 1,
        }
    }

    /// Nanoseconds for an interval: often zero (one-shot).
    fn interval_ns(&self) -> u64 {
        match self.below(4) {
            0 | 1 => 0,
            2 => u64::from(self.byte()) * 50_000 + 1,
            _ => [u64::MAX, 1_000, 7_000_000][usize::from(self.below(3))],
        }
    }

    /// A `struct timeval` time: mostly valid microseconds, sometimes malformed.
    fn time(&self) -> timeval {
        match self.below(12) {
            0 => tv(0, 0),
            1 => tv(-1, -1),
            2 => tv(-1, 0),
            3 => tv(0, 1_000_000),
            4 => tv(self.bits() as i64, self.bits() as i64),
            _ => {
                let us = i64::from(self.byte()) * 100 + i64::from(self.below(100));
                tv(us / 1_000_000, us % 1_000_000)
            }
        }
    }
}

fn tv(sec: i64, usec: i64) -> timeval {
    timeval {
        tv_sec: sec,
        tv_usec: usec,
    }
}

fn itv(value: timeval, interval: timeval) -> itimerval {
    itimerval {
        it_interval: interval,
        it_value: value,
    }
}

/// The C layer's encoding of 64 bits in a timeval (64-bit time_t: `{bits, 0}`).
fn enc(bits: u64) -> timeval {
    tv(bits as i64, 0)
}

fn dec(t: &timeval) -> Option<u64> {
    (t.tv_usec == 0).then_some(t.tv_sec as u64)
}

fn same_tv(a: &timeval, b: &timeval) -> bool {
    a.tv_sec == b.tv_sec && a.tv_usec == b.tv_usec
}

fn same(a: &itimerval, b: &itimerval) -> bool {
    same_tv(&a.it_value, &b.it_value) && same_tv(&a.it_interval, &b.it_interval)
}

/// A duration read back through the C layer: rounded up to the microsecond.
fn up_to_us(d: Duration) -> timeval {
    let us = d.as_nanos().div_ceil(1000);
    tv((us / 1_000_000) as i64, (us % 1_000_000) as i64)
}

fn value_tv(v: TimerValue) -> itimerval {
    itv(up_to_us(v.remaining), up_to_us(v.interval))
}

/// A caller's time as a duration, if the C layer accepts it.
fn duration(t: &timeval) -> Option<Duration> {
    let sec = u64::try_from(t.tv_sec).ok()?;
    let usec = u32::try_from(t.tv_usec).ok().filter(|&u| u < 1_000_000)?;
    Some(Duration::new(sec, usec * 1000))
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap()
}

fn c_value(v: TimerValue) -> cw_timer_value {
    cw_timer_value {
        value_ns: ns(v.remaining),
        interval_ns: ns(v.interval),
    }
}

/// The clean API's code for a twin's error.
fn code(e: &Error) -> c_int {
    match e {
        Error::QuotaExceeded { .. } | Error::HandlesExhausted => CW_ENOSPC,
        Error::InvalidHandle
        | Error::ZeroValue
        | Error::ValueOutOfRange
        | Error::IntervalOutOfRange => CW_EINVAL,
        other => panic!("a twin failed unexpectedly: {other:?}"),
    }
}

fn errno() -> c_int {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// One C set and its twin.
struct Pair {
    c: *mut cw_timerset,
    twin: TimerSet,
    /// Every handle the C set issued, to the twin's handle for the same timer.
    map: HashMap<u64, u64>,
    /// The same handles, in the order they were issued.
    issued: Vec<u64>,
}

impl Pair {
    /// Both sets with the same configuration, at the same time; `None` when the process has
    /// run out of set keys (after about 2^24 sets: a very long run).
    fn new(quota: usize, missed: Missed) -> Option<Pair> {
        let env = env();
        let config = TimerSetConfig::default()
            .with_quota(quota)
            .with_missed(missed);
        let c = TimerSet::with_config(&env.rt, config).ok()?;
        let twin = TimerSet::with_config(&env.rt, config).ok()?;
        Some(Pair {
            c: cw_timerset::into_raw(c),
            twin,
            map: HashMap::new(),
            issued: Vec::new(),
        })
    }

    fn c_set(&self) -> &TimerSet {
        // SAFETY: `self.c` came from `into_raw` and is freed only in Drop.
        unsafe { &*self.c }.timer_set()
    }

    fn twin_of(&self, h: u64) -> Option<TimerHandle> {
        self.map.get(&h).map(|&t| TimerHandle::from_bits(t))
    }

    fn issue(&mut self, h: u64, t: TimerHandle) {
        assert!(h != 0 && h != u64::MAX, "handles are never 0 or all ones");
        let old = self.map.insert(h, t.to_bits());
        assert!(old.is_none(), "handle {h:#x} issued twice");
        self.issued.push(h);
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        // SAFETY: `self.c` is live and nothing uses it after this.
        assert_eq!(unsafe { cw_timerset_free(self.c) }, CW_OK);
    }
}

struct Run<'a> {
    bytes: Bytes<'a>,
    pairs: [Pair; 2],
    /// Handles of sets freed during the run.
    retired: Vec<u64>,
}

impl Run<'_> {
    /// A handle to present to set `p`: its own, the other set's, a freed set's, made up, or
    /// one bit away from a real one.
    fn handle(&self, p: usize) -> u64 {
        let pick = |v: &[u64]| {
            if v.is_empty() {
                0x0123_4567_89ab_cdef
            } else {
                let i = usize::from(self.bytes.byte()) | usize::from(self.bytes.byte()) << 8;
                v[i % v.len()]
            }
        };
        match self.bytes.below(12) {
            0..=4 => pick(&self.pairs[p].issued),
            5 | 6 => pick(&self.pairs[1 - p].issued),
            7 => pick(&self.retired),
            8 => self.bytes.bits(),
            9 => [0, u64::MAX, 1][usize::from(self.bytes.below(3))],
            _ => pick(&self.pairs[p].issued) ^ 1 << self.bytes.below(64),
        }
    }

    fn step(&mut self) {
        let p = usize::from(self.bytes.below(2));
        match self.bytes.below(14) {
            0 | 1 => self.create(p),
            2 => self.reset(p),
            3 => self.cancel(p),
            4 => self.get(p),
            5 | 6 => self.reap(p),
            7 => self.set_missed(p),
            8 => self.itimer_set(p),
            9 => self.itimer_get(p),
            10 | 11 => {
                let ns = u64::from(self.bytes.byte()) * 200_000;
                env().clock.advance(ns);
            }
            12 => {
                let pair = &self.pairs[p];
                // SAFETY: the set is live.
                let waited = unsafe { cw_timerset_wait(pair.c, 0) };
                assert_eq!(waited, c_int::from(pair.twin.wait(Some(Duration::ZERO))));
            }
            _ => self.renew(p),
        }
        self.compare();
    }

    fn create(&mut self, p: usize) {
        let (value, interval, label) = (
            self.bytes.value_ns(),
            self.bytes.interval_ns(),
            self.bytes.bits(),
        );
        let pair = &mut self.pairs[p];
        let mut h = 0;
        // SAFETY: the set is live; `h` is a local.
        let rc = unsafe { cw_timer_create(pair.c, value, interval, label, &mut h) };
        let twin = pair.twin.create(
            Duration::from_nanos(value),
            Duration::from_nanos(interval),
            label,
        );
        match twin {
            Ok(t) => {
                assert_eq!(rc, CW_OK);
                pair.issue(h, t);
            }
            Err(e) => assert_eq!(rc, code(&e)),
        }
    }

    fn reset(&mut self, p: usize) {
        let h = self.handle(p);
        let (value, interval, label) = (
            self.bytes.value_ns(),
            self.bytes.interval_ns(),
            self.bytes.bits(),
        );
        let pair = &self.pairs[p];
        let mut old = cw_timer_value {
            value_ns: 1,
            interval_ns: 2,
        };
        // SAFETY: the set is live; `old` is a local.
        let rc = unsafe { cw_timer_reset(pair.c, h, value, interval, label, &mut old) };
        let Some(t) = pair.twin_of(h) else {
            assert_eq!(rc, CW_EINVAL, "reset of {h:#x}, no handle of this set");
            return;
        };
        let twin = pair.twin.reset(
            t,
            Duration::from_nanos(value),
            Duration::from_nanos(interval),
            label,
        );
        match twin {
            Ok(v) => {
                assert_eq!(rc, CW_OK);
                assert_eq!(old, c_value(v));
            }
            Err(e) => assert_eq!(rc, code(&e)),
        }
    }

    fn cancel(&mut self, p: usize) {
        let h = self.handle(p);
        let pair = &self.pairs[p];
        let mut last = cw_timer_value::default();
        // SAFETY: the set is live; `last` is a local.
        let rc = unsafe { cw_timer_cancel(pair.c, h, &mut last) };
        match pair.twin_of(h).map(|t| pair.twin.cancel(t)) {
            None => assert_eq!(rc, CW_EINVAL),
            Some(Ok(v)) => {
                assert_eq!(rc, CW_OK);
                assert_eq!(last, c_value(v));
            }
            Some(Err(e)) => assert_eq!(rc, code(&e)),
        }
    }

    fn get(&mut self, p: usize) {
        let h = self.handle(p);
        let pair = &self.pairs[p];
        let mut overruns = 0;
        // SAFETY: the set is live; `overruns` is a local.
        let rc = unsafe { cw_timer_overruns(pair.c, h, &mut overruns) };
        match pair.twin_of(h).map(|t| pair.twin.overruns(t)) {
            None => assert_eq!(rc, CW_EINVAL),
            Some(Ok(n)) => assert_eq!((rc, overruns), (CW_OK, n)),
            Some(Err(e)) => assert_eq!(rc, code(&e)),
        }
        let got = c_get(pair.c, h);
        match pair.twin_of(h).map(|t| pair.twin.get(t)) {
            None => assert_eq!(got, Err(CW_EINVAL)),
            Some(twin) => assert_eq!(got, twin.map(c_value).map_err(|e| code(&e))),
        }
    }

    fn reap(&mut self, p: usize) {
        let pair = &self.pairs[p];
        let (mut h, mut label) = (0, 0);
        // SAFETY: the set is live; the outputs are locals.
        let rc = unsafe { cw_timer_reap(pair.c, &mut h, &mut label) };
        match pair.twin.reap() {
            None => assert_eq!(rc, 0),
            Some((t, l)) => {
                assert_eq!(rc, 1);
                assert_eq!(
                    pair.twin_of(h),
                    Some(t),
                    "reaped {h:#x}, a timer of its own set"
                );
                assert_eq!(label, l);
            }
        }
    }

    fn set_missed(&mut self, p: usize) {
        let h = self.handle(p);
        let policy = c_int::from(self.bytes.below(4));
        let pair = &self.pairs[p];
        // SAFETY: the set is live.
        let rc = unsafe { cw_timer_set_missed(pair.c, h, policy) };
        let missed = match policy {
            CW_MISSED_BURST => Missed::Burst,
            CW_MISSED_DELAY => Missed::Delay,
            CW_MISSED_SKIP => Missed::Skip,
            _ => return assert_eq!(rc, CW_EINVAL),
        };
        match pair.twin_of(h).map(|t| pair.twin.set_missed(t, missed)) {
            None => assert_eq!(rc, CW_EINVAL),
            Some(r) => assert_eq!(rc, r.map_or_else(|e| code(&e), |()| CW_OK)),
        }
    }

    /// Figure 6 through cw_setitimer_on: create, reset or cancel, by the structures' contents.
    fn itimer_set(&mut self, p: usize) {
        let value = itv(self.bytes.time(), self.bytes.time());
        let target = match self.bytes.below(4) {
            0 => tv(-1, -1),
            1 => self.bytes.time(),
            _ => enc(self.handle(p)),
        };
        let label = if self.bytes.below(8) == 0 {
            self.bytes.time()
        } else {
            enc(self.bytes.bits())
        };
        let mut ovalue = itv(target, label);
        let before = ovalue;
        let pair = &mut self.pairs[p];
        // SAFETY: the set is live; the structures are locals.
        let rc = unsafe { cw_setitimer_on(pair.c, &value, &mut ovalue) };
        let err = errno();
        let failed = |e: c_int, ovalue: &itimerval| {
            assert_eq!((rc, err), (-1, e));
            assert!(same(ovalue, &before), "ovalue is untouched on failure");
        };
        let zero = value.it_value.tv_sec == 0 && value.it_value.tv_usec == 0;
        if zero {
            // Cancel.
            let Some(t) = dec(&target).and_then(|h| pair.twin_of(h)) else {
                return failed(libc::EINVAL, &ovalue);
            };
            match pair.twin.cancel(t) {
                Ok(v) => {
                    assert_eq!(rc, 0);
                    assert!(same(&ovalue, &value_tv(v)));
                }
                Err(e) => failed(e.errno(), &ovalue),
            }
            return;
        }
        let (Some(first), Some(interval), Some(label_bits)) = (
            duration(&value.it_value),
            duration(&value.it_interval),
            dec(&label),
        ) else {
            return failed(libc::EINVAL, &ovalue);
        };
        if target.tv_sec == -1 && target.tv_usec == -1 {
            match pair.twin.create(first, interval, label_bits) {
                Ok(t) => {
                    assert_eq!(rc, 0);
                    assert!(same_tv(&ovalue.it_interval, &label), "the label stays");
                    let h = dec(&ovalue.it_value).expect("a handle is {bits, 0}");
                    pair.issue(h, t);
                }
                Err(e) => failed(e.errno(), &ovalue),
            }
            return;
        }
        let Some(t) = dec(&target).and_then(|h| pair.twin_of(h)) else {
            return failed(libc::EINVAL, &ovalue);
        };
        match pair.twin.reset(t, first, interval, label_bits) {
            Ok(v) => {
                assert_eq!(rc, 0);
                assert!(same(&ovalue, &value_tv(v)), "ovalue holds the former value");
            }
            Err(e) => failed(e.errno(), &ovalue),
        }
    }

    /// Figure 7 through cw_getitimer_on: reap, or read a handle's value.
    fn itimer_get(&mut self, p: usize) {
        let target = match self.bytes.below(3) {
            0 => tv(-1, -1),
            1 => self.bytes.time(),
            _ => enc(self.handle(p)),
        };
        let mut value = itv(target, self.bytes.time());
        let before = value;
        let pair = &self.pairs[p];
        // SAFETY: the set is live; `value` is a local.
        let rc = unsafe { cw_getitimer_on(pair.c, &mut value) };
        let err = errno();
        let failed = |e: c_int, value: &itimerval| {
            assert_eq!((rc, err), (-1, e));
            assert!(same(value, &before), "value is untouched on failure");
        };
        if target.tv_sec == -1 && target.tv_usec == -1 {
            match pair.twin.reap() {
                None => failed(libc::EAGAIN, &value),
                Some((t, l)) => {
                    assert_eq!(rc, 0);
                    let h = dec(&value.it_value).expect("a handle is {bits, 0}");
                    assert_eq!(pair.twin_of(h), Some(t), "reaped a timer of its own set");
                    assert!(same_tv(&value.it_interval, &enc(l)));
                }
            }
            return;
        }
        let Some(t) = dec(&target).and_then(|h| pair.twin_of(h)) else {
            return failed(libc::EINVAL, &value);
        };
        match pair.twin.get(t) {
            Ok(v) => {
                assert_eq!(rc, 0);
                assert!(same(&value, &value_tv(v)));
            }
            Err(e) => failed(e.errno(), &value),
        }
    }

    /// Frees set `p` and makes it anew (its twin too); its handles retire.
    fn renew(&mut self, p: usize) {
        let quota = usize::from(self.bytes.below(8)) + 1;
        let Some(fresh) = Pair::new(quota, Missed::Burst) else {
            return;
        };
        let old = std::mem::replace(&mut self.pairs[p], fresh);
        self.retired.extend_from_slice(&old.issued);
        drop(old);
    }

    /// Both sets against their twins, in full.
    fn compare(&self) {
        for pair in &self.pairs {
            let (mut running, mut queued) = (usize::MAX, usize::MAX);
            // SAFETY: the set is live; the outputs are locals.
            let rc = unsafe { cw_timerset_counts(pair.c, &mut running, &mut queued) };
            assert_eq!(rc, CW_OK);
            let stats = pair.twin.stats();
            assert_eq!((running, queued), (stats.running, stats.queued));
            // Both are up to date with the clock: their descriptors agree.
            // SAFETY: the set is live.
            let fd = unsafe { cw_timerset_fd(pair.c) };
            assert!(fd >= 0);
            assert_eq!(readable(fd), readable(pair.twin.fd().as_raw_fd()));
            assert_eq!(readable(fd), queued > 0);
            for &h in pair.issued.iter().rev().take(MAX_COMPARED) {
                let t = pair.twin_of(h).unwrap();
                let got = c_get(pair.c, h);
                assert_eq!(got, pair.twin.get(t).map(c_value).map_err(|e| code(&e)));
                let c_over = pair.c_set().overruns(TimerHandle::from_bits(h)).ok();
                assert_eq!(c_over, pair.twin.overruns(t).ok());
            }
            pair.c_set().check_invariants().unwrap();
            pair.twin.check_invariants().unwrap();
        }
    }
}

fn c_get(set: *mut cw_timerset, h: u64) -> Result<cw_timer_value, c_int> {
    let mut v = cw_timer_value::default();
    // SAFETY: callers pass a live set; `v` is a local.
    match unsafe { cw_timer_get(set, h, &mut v) } {
        CW_OK => Ok(v),
        e => Err(e),
    }
}

fn readable(fd: c_int) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, no waiting.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n == 1 && p.revents & libc::POLLIN != 0
}

fuzz_target!(|data: &[u8]| {
    let bytes = Bytes {
        data,
        at: Cell::new(0),
    };
    let policies = [Missed::Burst, Missed::Delay, Missed::Skip];
    let quota_a = usize::from(bytes.below(8)) + 1;
    let quota_b = usize::from(bytes.below(8)) + 1;
    let missed = policies[usize::from(bytes.below(3))];
    let (Some(a), Some(b)) = (
        Pair::new(quota_a, missed),
        Pair::new(quota_b, Missed::Burst),
    ) else {
        return;
    };
    let mut run = Run {
        bytes,
        pairs: [a, b],
        retired: Vec::new(),
    };
    for _ in 0..MAX_CALLS {
        if run.bytes.exhausted() {
            break;
        }
        run.step();
    }
    // A NULL set is refused by every entry point, whatever else happened.
    // SAFETY: NULL is checked before anything is read.
    assert_eq!(
        unsafe { cw_timerset_counts(null_mut(), null_mut(), null_mut()) },
        CW_EINVAL
    );
});
