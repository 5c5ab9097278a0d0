//! The production wheel through its C API (`cw_wheel_*`), behind the benchmark traits: every
//! operation crosses the C ABI into the library's `extern "C"` functions, with their argument
//! checks, handle conversion and panic guard. W5 runs through it, and `callwheel instructions`
//! makes its pairs on it through the C driver's probes ([`CWheel::start_from_c`]); W1–W4 run
//! from the C driver ([`c_driver`](crate::c_driver)), which has no adapter between its loops
//! and the library.
//!
//! Calling the C API is unsafe by nature (raw pointers). The wheel pointer is created here,
//! owned by [`CWheel`] and freed once in `Drop`, and every out-pointer is a live local.
#![allow(unsafe_code)]

use callwheel::{Budget, Error, Expired, Handle, Meter, Progress, Scheme, Tick, Timers};
use callwheel_ffi::{
    cw_expiry, cw_handle, cw_wheel, cw_wheel_add, cw_wheel_check, cw_wheel_counts, cw_wheel_del,
    cw_wheel_free, cw_wheel_get, cw_wheel_info, cw_wheel_new, cw_wheel_next_wakeup,
    cw_wheel_pending, cw_wheel_reset, cw_wheel_update, CW_ENOMEM, CW_OK,
};

use crate::workload::TolerantStart;

/// A `cw_wheel` owned from Rust.
#[derive(Debug)]
pub struct CWheel {
    w: *mut cw_wheel,
    /// The wheel's time, kept here so that `now` costs no call (the C wheel has it too).
    now: Tick,
    /// Pending timers, kept here for `len` for the same reason.
    len: usize,
}

impl CWheel {
    /// A growing wheel at time 0.
    pub fn new() -> Result<CWheel, Error> {
        CWheel::with_capacity(0)
    }

    /// A wheel at time 0 that holds at most `capacity` timers, reserved now (0: growing).
    pub fn with_capacity(capacity: usize) -> Result<CWheel, Error> {
        let mut w = core::ptr::null_mut();
        // SAFETY: `w` is a live local, valid for writing a pointer.
        let rc = unsafe { cw_wheel_new(capacity, 0, &mut w) };
        if rc != CW_OK || w.is_null() {
            return Err(refusal(rc));
        }
        Ok(CWheel { w, now: 0, len: 0 })
    }

    /// [`Timers::start`] made by C code (a probe of the C driver that calls `cw_wheel_add`
    /// and nothing else): what `callwheel instructions` counts as the C API's start.
    pub fn start_from_c(&mut self, deadline: Tick, value: u64) -> Result<Handle, Error> {
        let mut h = cw_handle::default();
        // SAFETY: `self.w` is live; `h` is a live local.
        let rc = unsafe {
            crate::c_driver::instructions_probe_start_c_wheel(
                self.w.cast(),
                deadline,
                value,
                &mut h,
            )
        };
        if rc != CW_OK {
            return Err(refusal(rc));
        }
        self.len += 1;
        Ok(h.into())
    }

    /// [`Timers::stop`] made by C code (the probe that calls `cw_wheel_del`), without the
    /// value: whether the timer was pending.
    pub fn stop_from_c(&mut self, handle: Handle) -> bool {
        // SAFETY: `self.w` is live.
        let rc = unsafe {
            crate::c_driver::instructions_probe_stop_c_wheel(self.w.cast(), handle.into())
        };
        if rc == CW_OK {
            self.len -= 1;
        }
        rc == CW_OK
    }

    fn info(&self) -> cw_wheel_info {
        let mut info = cw_wheel_info::default();
        // SAFETY: `self.w` is live (owned, freed only in Drop); `info` is a live local.
        let rc = unsafe { cw_wheel_counts(self.w, &mut info) };
        debug_assert_eq!(rc, CW_OK);
        info
    }
}

impl Drop for CWheel {
    fn drop(&mut self) {
        // SAFETY: created in `new`, freed once, here.
        unsafe { cw_wheel_free(self.w) };
    }
}

fn refusal(rc: i32) -> Error {
    if rc == CW_ENOMEM {
        Error::NoMemory
    } else {
        Error::Config {
            reason: "the C wheel refused the call",
        }
    }
}

impl Timers<u64> for CWheel {
    fn start(&mut self, expiry: Tick, value: u64) -> Result<Handle, Error> {
        self.start_with(expiry, 0, value)
    }

    fn start_with(&mut self, deadline: Tick, tolerance: Tick, value: u64) -> Result<Handle, Error> {
        let mut h = cw_handle::default();
        // SAFETY: `self.w` is live; `h` is a live local.
        let rc = unsafe { cw_wheel_add(self.w, deadline, tolerance, value, &mut h) };
        if rc != CW_OK {
            return Err(refusal(rc));
        }
        self.len += 1;
        Ok(h.into())
    }

    fn stop(&mut self, handle: Handle) -> Option<u64> {
        let mut value = 0;
        // SAFETY: `self.w` is live; `value` is a live local.
        let rc = unsafe { cw_wheel_del(self.w, handle.into(), &mut value) };
        (rc == CW_OK).then(|| {
            self.len -= 1;
            value
        })
    }

    fn reset(&mut self, handle: Handle, deadline: Tick, tolerance: Tick) -> Option<Tick> {
        let previous = self.deadline(handle)?;
        // SAFETY: `self.w` is live.
        let rc = unsafe { cw_wheel_reset(self.w, handle.into(), deadline, tolerance) };
        (rc == CW_OK).then_some(previous)
    }

    fn deadline(&self, handle: Handle) -> Option<Tick> {
        let mut deadline = 0;
        // SAFETY: `self.w` is live; `deadline` is a live local.
        let rc = unsafe { cw_wheel_pending(self.w, handle.into(), &mut deadline) };
        (rc == 1).then_some(deadline)
    }

    fn now(&self) -> Tick {
        self.now
    }

    fn len(&self) -> usize {
        self.len
    }

    /// The C API has no earliest-deadline query, only the wake-up: this answers
    /// [`Timers::next_wakeup`], which for tolerant timers may be later than a deadline (the
    /// workloads drive every structure by its wake-up query, never by this).
    fn next_expiry(&self) -> Option<Tick> {
        self.next_wakeup()
    }

    fn next_wakeup(&self) -> Option<Tick> {
        let mut at = 0;
        // SAFETY: `self.w` is live; `at` is a live local.
        let rc = unsafe { cw_wheel_next_wakeup(self.w, &mut at) };
        (rc == 1).then_some(at)
    }

    fn memory_bytes(&self) -> usize {
        self.info().bytes
    }
}

impl Scheme<u64> for CWheel {
    fn advance<F>(&mut self, now: Tick, budget: Budget, mut on_expire: F) -> Progress
    where
        F: FnMut(&mut dyn Timers<u64>, Expired<u64>),
    {
        // Time never goes back (the C wheel refuses it; the trait ignores it).
        self.now = self.now.max(now);
        // SAFETY: `self.w` is live.
        let rc = unsafe { cw_wheel_update(self.w, self.now) };
        debug_assert_eq!(rc, CW_OK);
        let mut meter = Meter::new(budget);
        loop {
            if !meter.step() {
                return meter.finish(false);
            }
            let mut e = cw_expiry::default();
            // SAFETY: `self.w` is live; `e` is a live local.
            if unsafe { cw_wheel_get(self.w, &mut e) } != 1 {
                return meter.finish(true);
            }
            self.len -= 1;
            meter.fired();
            on_expire(
                self,
                Expired {
                    handle: e.handle.into(),
                    deadline: e.deadline,
                    value: e.value,
                    overruns: e.overruns,
                },
            );
        }
    }

    fn check_invariants(&self) -> Result<(), &'static str> {
        // SAFETY: `self.w` is live; a NULL buffer asks for no message.
        let rc = unsafe { cw_wheel_check(self.w, core::ptr::null_mut(), 0) };
        if rc != CW_OK {
            return Err("cw_wheel_check found a broken invariant");
        }
        if self.info().pending != self.len {
            return Err("the C wheel's pending count disagrees with the adapter's");
        }
        Ok(())
    }
}

impl TolerantStart for CWheel {
    const TAKES_TOLERANCE: bool = true;
}
