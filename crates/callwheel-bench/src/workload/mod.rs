//! The benchmark workloads of `docs/workloads.md`: the SplitMix64 generator, W1 (set/cancel), W2
//! (churn), W3 (expire), W4 (sparse advance) and W5 (coalescing), plus the small trait W5 needs
//! ([`TolerantStart`]; W4 and W5, in `wakeups`, wake at [`Timers::next_wakeup`](callwheel::Timers::next_wakeup)) and the input-only reference figures the
//! results are checked against ([`w2_expected`], [`callwheel::stabbing_optimum`]).
//!
//! Each workload function runs every repetition of one measurement in the current process and
//! returns the per-operation figure of each repetition. The functions are generic over the scheme,
//! so every scheme gets its own monomorphized timed loop: nothing in a timed region goes through
//! `dyn`. Only the region the workload marks *timed* is inside the [`Instant`] pair; building the
//! structure, the untimed setup and dropping the structure are outside it.

use std::collections::VecDeque;
use std::hint::black_box;
use std::time::Instant;

use callwheel::{Budget, Error, Handle, Scheme, Tick};

/// The seed the generator is given at the start of every repetition.
pub const SEED: u64 = 42;

/// W1: the interval the `N` outstanding timers' expiries are drawn from.
pub const W1_OUTSTANDING: (Tick, Tick) = (1_000_000, 2_000_000);

/// W1: the interval the cancelled-and-restarted timer's expiries are drawn from.
pub const W1_CHURN: (Tick, Tick) = (2_000_000, 3_000_000);

/// The SplitMix64 generator of `docs/workloads.md` (Steele, Lea & Flood), 64 bits of state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose state is `seed`.
    pub const fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64-bit output: advance the state by the golden-ratio increment, then mix it.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// `lo + next() % (hi - lo)`: a value in `[lo, hi)`, exactly as `docs/workloads.md` defines it
    /// (the slight modulo bias is part of the definition). `hi` must be greater than `lo`.
    #[inline]
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        debug_assert!(lo < hi, "empty range {lo}..{hi}");
        lo + self.next_u64() % (hi - lo)
    }

    /// Shuffles `items` in place (Fisher–Yates): how the measurements interleave their sources
    /// in a fresh order every round, so that each follows every other equally often.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for k in (1..items.len()).rev() {
            items.swap(k, self.range(0, k as u64 + 1) as usize);
        }
    }
}

/// The sizes of one W1 measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct W1Params {
    /// Outstanding timers started before the timed loop.
    pub n: u64,
    /// Timed (cancel + start) pairs per repetition.
    pub iters: u64,
    /// Repetitions, each with a fresh structure and a re-seeded generator.
    pub reps: u32,
}

/// What a W1 measurement produced.
#[derive(Clone, Debug, PartialEq)]
pub struct W1Outcome {
    /// Nanoseconds per (cancel + start) pair, one figure per repetition.
    pub ns_per_pair: Vec<f64>,
    /// `memory_bytes()` after the setup divided by `N`, for `N >= 1000` (first repetition).
    pub bytes_per_timer: Option<f64>,
}

/// The sizes of one W3 measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct W3Params {
    /// Timers started (1 000 000 in the full workload).
    pub timers: u64,
    /// Expiries are drawn from `[1, ticks)` and the clock advances over `1..=ticks` (and on to
    /// the last window's end with a tolerance).
    pub ticks: Tick,
    /// Each timer's tolerance in percent of its distance from its start (0: exact, W3 itself;
    /// 1 and 5: the tolerant variants of `docs/workloads.md`).
    pub tolerance_percent: u64,
    /// Repetitions, each with a fresh structure and a re-seeded generator.
    pub reps: u32,
}

/// What a W3 measurement produced.
#[derive(Clone, Debug, PartialEq)]
pub struct W3Outcome {
    /// Nanoseconds per timer (the whole timed region divided by the timers started), one figure
    /// per repetition.
    pub ns_per_timer: Vec<f64>,
    /// Timers fired within the ticks: the common count when every repetition agrees, otherwise
    /// the first repetition's count that differs from the number started.
    pub fired: u64,
    /// Timers that fired only after the last tick (a lossy scheme rounds deadlines up), found by
    /// an untimed drain after the timed region; always 0 for an exact scheme.
    pub late: u64,
    /// Firings after the timer's window ended (its deadline, with no tolerance), the drained
    /// late ones included; first repetition (`None`: not counted).
    pub outside: Option<u64>,
    /// Moves of a timer down a level per timer started ([`TolerantStart::cascades`]), for a
    /// structure that counts them; first repetition.
    pub cascades_per_timer: Option<f64>,
}

pub(crate) fn build<S>(make: &impl Fn() -> Result<S, Error>) -> Result<S, String> {
    make().map_err(|e| format!("cannot build the structure: {e}"))
}

pub(crate) fn start_failed(e: Error) -> String {
    format!("start failed: {e}")
}

/// W1, set/cancel: `N` outstanding timers, then `iters` timed (cancel + start) pairs on one more.
///
/// `make` builds a fresh structure for each repetition. Fails if the structure cannot be built,
/// a start is refused, a cancel misses its timer, or the timer count is wrong afterwards.
pub fn w1<S, F>(p: &W1Params, make: F) -> Result<W1Outcome, String>
where
    S: Scheme<u64>,
    F: Fn() -> Result<S, Error>,
{
    p.check()?;
    let mut ns_per_pair = Vec::with_capacity(p.reps as usize);
    let mut bytes_per_timer = None;
    for rep in 0..p.reps {
        let mut rng = SplitMix64::new(SEED);
        let mut s = build(&make)?;
        for i in 0..p.n {
            s.start(rng.range(W1_OUTSTANDING.0, W1_OUTSTANDING.1), i)
                .map_err(start_failed)?;
        }
        let mut h = s
            .start(rng.range(W1_CHURN.0, W1_CHURN.1), p.n)
            .map_err(start_failed)?;
        if rep == 0 && p.n >= 1000 {
            bytes_per_timer = Some(s.memory_bytes() as f64 / p.n as f64);
        }

        let mut missed = 0u64;
        let begin = Instant::now();
        for i in 0..p.iters {
            let e = rng.range(W1_CHURN.0, W1_CHURN.1);
            missed += u64::from(black_box(s.stop(h)).is_none());
            h = match s.start(e, i) {
                Ok(h) => h,
                Err(e) => return Err(start_failed(e)),
            };
        }
        let elapsed = begin.elapsed();
        black_box(h);
        black_box(&mut s);

        w1_counts(missed, s.len() as u64, p.n)?;
        ns_per_pair.push(elapsed.as_nanos() as f64 / p.iters as f64);
        drop(s);
    }
    Ok(W1Outcome {
        ns_per_pair,
        bytes_per_timer,
    })
}

impl W1Params {
    /// `Err` for sizes W1 cannot run (no iteration or no repetition).
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.iters == 0 || self.reps == 0 {
            return Err("W1 needs at least one iteration and one repetition".into());
        }
        Ok(())
    }
}

impl W2Params {
    /// `Err` for sizes W2 cannot run (no step or no repetition, a tolerance above 100 %).
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.steps == 0 || self.reps == 0 {
            return Err("W2 needs at least one step and one repetition".into());
        }
        tolerance_in_range(self.tolerance_percent)
    }
}

impl W3Params {
    /// `Err` for sizes W3 cannot run (no timer, fewer than two ticks, no repetition, a
    /// tolerance above 100 %).
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.timers == 0 || self.ticks < 2 || self.reps == 0 {
            return Err("W3 needs at least one timer, two ticks and one repetition".into());
        }
        tolerance_in_range(self.tolerance_percent)
    }

    /// The last tick the timed loop advances to: `ticks`, or the latest window end.
    fn last_tick(&self) -> Tick {
        self.ticks + tolerance(self.ticks, self.tolerance_percent)
    }
}

/// `Err` for a tolerance above 100 % of a timer's distance.
pub(crate) fn tolerance_in_range(percent: u64) -> Result<(), String> {
    if percent > 100 {
        return Err(format!("a tolerance of {percent} %: at most 100"));
    }
    Ok(())
}

/// The tolerance of a timer `distance` ticks from its start: `percent` of it, rounded down.
#[inline]
pub fn tolerance(distance: Tick, percent: u64) -> Tick {
    distance.saturating_mul(percent) / 100
}

/// Whether a timer due at `deadline`, `distance` ticks from its start, fired outside its
/// window when it fired at `at` (its window is `[deadline, deadline + tolerance]`).
#[inline]
pub(crate) fn outside(at: Tick, deadline: Tick, distance: Tick, percent: u64) -> bool {
    // No division in the timed loop: for whole ticks, at - deadline > ⌊distance · percent /
    // 100⌋ exactly when 100 · (at - deadline) > distance · percent.
    at > deadline && (at - deadline).saturating_mul(100) > distance.saturating_mul(percent)
}

/// W2's check after the timed loop: a popped timer is always pending, so every cancel found it.
pub(crate) fn w2_cancels(missed: u64) -> Result<(), String> {
    if missed != 0 {
        return Err(format!(
            "{missed} cancels did not find their timer (a popped timer is always pending)"
        ));
    }
    Ok(())
}

/// W1's check after the timed loop: every cancel found its timer, and the `n` outstanding
/// timers and the churned one are pending.
pub(crate) fn w1_counts(missed: u64, pending: u64, n: u64) -> Result<(), String> {
    if missed != 0 {
        return Err(format!("{missed} cancels did not find their timer"));
    }
    let expected = n + 1;
    if pending != expected {
        return Err(format!(
            "{pending} timers pending after the loop, expected {expected}"
        ));
    }
    Ok(())
}

/// W3's fired count over the repetitions: the first repetition's `(fired, late)`, replaced by
/// the first one whose total differs from the timers started, so that a wrong count shows.
pub(crate) fn w3_report(report: &mut Option<(u64, u64)>, fired: u64, late: u64, timers: u64) {
    match *report {
        None => *report = Some((fired, late)),
        Some((f, l)) if f + l == timers && fired + late != timers => *report = Some((fired, late)),
        Some(_) => {}
    }
}

/// W3, expire: `timers` starts at `range(1, ticks)`, then `advance(now)` for every `now` in
/// `1..=ticks`, all timed.
///
/// `make` builds a fresh structure for each repetition. Fails if the structure cannot be built,
/// a start is refused or an unlimited `advance` reports itself incomplete; a wrong fired count
/// is not an error here but is reported in [`W3Outcome::fired`] for the caller to judge.
pub fn w3<S, F>(p: &W3Params, make: F) -> Result<W3Outcome, String>
where
    S: Scheme<u64> + TolerantStart,
    F: Fn() -> Result<S, Error>,
{
    p.check()?;
    let pct = p.tolerance_percent;
    let mut ns_per_timer = Vec::with_capacity(p.reps as usize);
    let mut fired_report = None;
    let mut first = None;
    for _ in 0..p.reps {
        let mut rng = SplitMix64::new(SEED);
        let mut s = build(&make)?;
        let mut fired = 0u64;
        let mut outside_window = 0u64;
        let mut incomplete = false;

        let begin = Instant::now();
        for i in 0..p.timers {
            // Started at 0: a timer's distance is its deadline.
            let d = rng.range(1, p.ticks);
            if let Err(e) = s.start_with(d, tolerance(d, pct), i) {
                return Err(start_failed(e));
            }
        }
        for now in 1..=p.last_tick() {
            let progress = s.advance(now, Budget::UNLIMITED, |_, expired| {
                outside_window += u64::from(outside(now, expired.deadline, expired.deadline, pct));
                black_box(expired);
            });
            fired += progress.fired as u64;
            incomplete |= !progress.complete;
        }
        let elapsed = begin.elapsed();
        black_box(&mut s);

        // Untimed: whatever a lossy scheme still holds fires at its rounded-up slot.
        let mut late = 0u64;
        while let Some(t) = s.next_expiry() {
            let progress = s.advance(t, Budget::UNLIMITED, |_, expired| {
                outside_window += u64::from(outside(t, expired.deadline, expired.deadline, pct));
                black_box(expired);
            });
            late += progress.fired as u64;
            incomplete |= !progress.complete;
        }

        if incomplete {
            return Err("an advance with an unlimited budget did not complete".into());
        }
        ns_per_timer.push(elapsed.as_nanos() as f64 / p.timers as f64);
        w3_report(&mut fired_report, fired, late, p.timers);
        first.get_or_insert((outside_window, s.cascades()));
        drop(s);
    }
    let (fired, late) = fired_report.unwrap_or((0, 0));
    let (outside, cascades) = first.unwrap_or((0, None));
    Ok(W3Outcome {
        ns_per_timer,
        fired,
        late,
        outside: Some(outside),
        cascades_per_timer: cascades.map(|c| c as f64 / p.timers as f64),
    })
}

/// W2: the interval each timer's delay is drawn from (`200 + range(0, 50)`).
pub const W2_DELAY: (Tick, Tick) = (200, 250);
/// W2: steps per tick of the clock.
pub const W2_STEPS_PER_TICK: u64 = 1_000;
/// W2: a popped timer is cancelled when `range(0, 100)` is below this ("ACK arrived").
pub const W2_CANCEL_PERCENT: u64 = 95;

/// The sizes of one W2 measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct W2Params {
    /// Timers in flight (started in the untimed warm-up, then kept at that count).
    pub n: u64,
    /// Timed steps (start one, pop the oldest, cancel it 95 % of the time).
    pub steps: u64,
    /// Each retransmission timeout's tolerance in percent of its delay (0: exact, W2 itself; 5:
    /// the tolerant variant).
    pub tolerance_percent: u64,
    /// Repetitions, each with a fresh structure and a re-seeded generator.
    pub reps: u32,
}

/// What a W2 measurement produced.
#[derive(Clone, Debug, PartialEq)]
pub struct W2Outcome {
    /// Nanoseconds per timed step, one figure per repetition.
    pub ns_per_step: Vec<f64>,
    /// Timers fired by the timed advances (the same in every repetition, or an error).
    pub expiries: u64,
    /// Of those, the ones fired after their window ended (`None`: not counted).
    pub outside: Option<u64>,
    /// Moves of a timer down a level per timer started, where counted; first repetition.
    pub cascades_per_timer: Option<f64>,
}

/// W2's expiry count computed from the draws alone, without any timer structure: the timers
/// whose expiry falls in `(warm-up's last tick, last tick]` and that were not cancelled before
/// their expiry. Every exact structure must fire exactly this many timers in the timed region
/// (93 769 for `N = 100 000`, 2 000 000 steps).
pub fn w2_expected(n: u64, steps: u64) -> u64 {
    let mut rng = SplitMix64::new(SEED);
    let mut now: Tick = 0;
    let mut fifo: VecDeque<Tick> = VecDeque::with_capacity(n as usize + 1);
    for s in 0..n {
        fifo.push_back(now + rng.range(W2_DELAY.0, W2_DELAY.1));
        if (s + 1) % W2_STEPS_PER_TICK == 0 {
            now += 1;
        }
    }
    let warm_now = now;
    // Expiries of timers that will never be cancelled (left to expire, or still queued at the
    // end), and of cancels that came too late (the timer had already fired).
    let mut kept: Vec<Tick> = Vec::new();
    for s in 0..steps {
        fifo.push_back(now + rng.range(W2_DELAY.0, W2_DELAY.1));
        let oldest = fifo.pop_front().expect("just pushed");
        if rng.range(0, 100) < W2_CANCEL_PERCENT {
            if oldest <= now {
                kept.push(oldest); // fired before the cancel reached it
            }
        } else {
            kept.push(oldest);
        }
        if (s + 1) % W2_STEPS_PER_TICK == 0 {
            now += 1;
        }
    }
    kept.extend(fifo);
    kept.iter().filter(|&&e| e > warm_now && e <= now).count() as u64
}

/// W2, churn: `n` timers in flight, then `steps` timed steps of start / pop the oldest / cancel
/// it 95 % of the time, the clock moving one tick every 1 000 steps.
///
/// Fails if the structure cannot be built, a start is refused, a cancel misses its timer (a
/// popped timer is always still pending), an unlimited advance is incomplete, or the expiry
/// count differs between repetitions. Whether the count is right is the caller's judgement
/// (against [`w2_expected`]).
pub fn w2<S, F>(p: &W2Params, make: F) -> Result<W2Outcome, String>
where
    S: Scheme<u64> + TolerantStart,
    F: Fn() -> Result<S, Error>,
{
    p.check()?;
    let pct = p.tolerance_percent;
    // A timer's value carries its delay in the low byte (every delay is below 256), so the
    // callback can tell its window.
    let value = |i: u64, delay: Tick| i << 8 | delay;
    let mut ns_per_step = Vec::with_capacity(p.reps as usize);
    let mut count = None;
    let mut first = None;
    for _ in 0..p.reps {
        let mut rng = SplitMix64::new(SEED);
        let mut s = build(&make)?;
        let mut fifo: VecDeque<Handle> = VecDeque::with_capacity(p.n as usize + 1);
        let mut now: Tick = 0;
        let mut incomplete = false;
        for i in 0..p.n {
            let delay = rng.range(W2_DELAY.0, W2_DELAY.1);
            let h = s
                .start_with(now + delay, tolerance(delay, pct), value(i, delay))
                .map_err(start_failed)?;
            fifo.push_back(h);
            if (i + 1) % W2_STEPS_PER_TICK == 0 {
                now += 1;
                let progress = s.advance(now, Budget::UNLIMITED, |_, e| {
                    black_box(e);
                });
                incomplete |= !progress.complete;
            }
        }

        let mut expiries = 0u64;
        let mut outside_window = 0u64;
        let mut missed = 0u64;
        let begin = Instant::now();
        for i in 0..p.steps {
            let delay = rng.range(W2_DELAY.0, W2_DELAY.1);
            let started = s.start_with(now + delay, tolerance(delay, pct), value(p.n + i, delay));
            let h = match started {
                Ok(h) => h,
                Err(e) => return Err(start_failed(e)),
            };
            fifo.push_back(h);
            let oldest = fifo.pop_front().unwrap_or(h);
            if rng.range(0, 100) < W2_CANCEL_PERCENT {
                missed += u64::from(black_box(s.stop(oldest)).is_none());
            }
            if (i + 1) % W2_STEPS_PER_TICK == 0 {
                now += 1;
                let progress = s.advance(now, Budget::UNLIMITED, |_, e| {
                    let delay = e.value & 0xff;
                    outside_window += u64::from(outside(now, e.deadline, delay, pct));
                    black_box(e);
                });
                expiries += progress.fired as u64;
                incomplete |= !progress.complete;
            }
        }
        let elapsed = begin.elapsed();
        black_box(&mut s);

        if incomplete {
            return Err("an advance with an unlimited budget did not complete".into());
        }
        w2_cancels(missed)?;
        same_each_repetition(&mut count, expiries, "the expiry counts")?;
        ns_per_step.push(elapsed.as_nanos() as f64 / p.steps as f64);
        let started = p.n + p.steps;
        first.get_or_insert((
            outside_window,
            s.cascades().map(|c| c as f64 / started as f64),
        ));
        drop(s);
    }
    let (outside, cascades_per_timer) = first.unwrap_or((0, None));
    Ok(W2Outcome {
        ns_per_step,
        expiries: count.unwrap_or(0),
        outside: Some(outside),
        cascades_per_timer,
    })
}

mod wakeups;

pub(crate) use wakeups::same_each_repetition;
pub use wakeups::{
    w4, w5, w5_windows, TolerantStart, W4Outcome, W4Params, W5Case, W5Outcome, W5Params,
    MAX_WAKEUPS,
};
