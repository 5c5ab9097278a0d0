//! Brown's calendar queue (CACM 31(10), 1988; reference \[5\] of Varghese & Lauck): a hashed
//! wheel that resizes itself so that each bucket holds about one timer.
//!
//! ```text
//!   buckets ("days") of width δ; a "year" is buckets · δ ticks
//!   bucket of a timer = ⌊deadline / δ⌋ mod buckets, each bucket sorted by deadline
//!   the earliest timer: from the cursor's day, the first bucket whose head falls in this year
//! ```
//!
//! | operation | cost |
//! |---|---|
//! | start | O(1) on average: sorted insert into a bucket of ~1 timer; O(n) when it resizes |
//! | stop | O(1), O(n) when it resizes |
//! | per tick | O(1) on average: tickless, the earliest timer is found directly |
//! | range | any deadline |
//!
//! The slab's growth is fallible (`Error::NoMemory`), and so is a resize: its buffers are
//! reserved before any timer moves, and when memory is refused the calendar keeps its bucket
//! count (correct, with longer buckets) and tries again at the next start.
//!
//! The number of buckets doubles when timers outnumber twice the buckets and halves when they
//! fall below half; each resize re-estimates δ as three times the mean gap between the 25
//! earliest deadlines (Brown's rule), so the calendar follows the distribution it holds. Resizing
//! is O(n) but happens after Θ(n) operations, so its amortized cost is O(1).

use alloc::vec::Vec;

use crate::arena::NIL;
use crate::clock::{tick_driven_scheme, Core, Step, TickDriven};
use callwheel::Error;
use callwheel::Tick;

const MIN_BUCKETS: u64 = 2;
const SAMPLE: usize = 25;

/// Brown's calendar queue.
#[derive(Debug)]
pub struct CalendarQueue<T> {
    core: Core<T>,
    buckets: u64,
    width: u64,
    /// Resizing is suspended while the timers are being re-placed.
    resizing: bool,
}

impl<T> CalendarQueue<T> {
    /// An empty calendar of 2 buckets one tick wide; it adapts as timers arrive.
    pub fn new() -> CalendarQueue<T> {
        Self::build(Core::growing(MIN_BUCKETS as usize))
    }

    /// The same, holding at most `capacity` timers.
    pub fn with_capacity(capacity: usize) -> Result<CalendarQueue<T>, Error> {
        Ok(Self::build(Core::new(
            MIN_BUCKETS as usize,
            Some(capacity),
        )?))
    }

    fn build(core: Core<T>) -> CalendarQueue<T> {
        CalendarQueue {
            core,
            buckets: MIN_BUCKETS,
            width: 1,
            resizing: false,
        }
    }

    /// The current number of buckets and their width in ticks.
    pub fn shape(&self) -> (u64, u64) {
        (self.buckets, self.width)
    }

    #[inline]
    fn list_of(&self, tick: Tick) -> u32 {
        ((tick / self.width) % self.buckets) as u32 + 1
    }

    fn insert_sorted(&mut self, idx: u32) {
        let list = self.list_of(self.core.arena.node(idx).expiry);
        self.core.arena.insert_sorted(list, idx);
    }

    /// The earliest timer: scan the days of this year from the cursor's day, then, if a whole
    /// year is empty, take the smallest head directly (Brown's "direct search").
    fn earliest(&self) -> Option<u32> {
        if self.core.structure_len() == 0 {
            return None;
        }
        let arena = &self.core.arena;
        let day = self.core.cursor / self.width;
        for k in 0..self.buckets {
            let d = day.saturating_add(k);
            let head = arena.first(self.list_of(d.saturating_mul(self.width)));
            let top = d.saturating_add(1).saturating_mul(self.width);
            if head != NIL && arena.node(head).expiry < top {
                return Some(head);
            }
        }
        (1..=self.buckets as u32)
            .map(|l| arena.first(l))
            .filter(|&h| h != NIL)
            .min_by_key(|&h| arena.node(h).expiry)
    }

    /// Doubles or halves the calendar when the population calls for it.
    fn maybe_resize(&mut self) {
        if self.resizing {
            return;
        }
        let n = self.core.structure_len() as u64;
        let buckets = if n > 2 * self.buckets {
            self.buckets * 2
        } else if n < self.buckets / 2 && self.buckets > MIN_BUCKETS {
            self.buckets / 2
        } else {
            return;
        };
        self.resize(buckets);
    }

    fn resize(&mut self, buckets: u64) {
        // Every buffer the rebuild needs is reserved before any timer moves: when memory is
        // refused the calendar keeps its bucket count (still correct, its buckets just longer)
        // and tries again at the next start, instead of aborting.
        let n = self.core.structure_len();
        let (mut all, mut sample) = (Vec::new(), Vec::new());
        if all.try_reserve_exact(n).is_err()
            || sample.try_reserve_exact(n).is_err()
            || self.core.arena.reserve_lists(buckets as usize + 1).is_err()
        {
            return;
        }
        self.resizing = true;
        // Take every timer out, bucket by bucket: equal deadlines share a bucket and keep
        // their order, so re-inserting in this order keeps start order among them.
        for list in 1..=self.buckets as u32 {
            while let Some(idx) = self.core.arena.pop_front(list) {
                all.push(idx);
            }
        }
        sample.extend(all.iter().map(|&i| self.core.arena.node(i).expiry));
        if sample.len() > SAMPLE {
            sample.select_nth_unstable(SAMPLE);
            sample.truncate(SAMPLE);
        }
        sample.sort_unstable();
        if sample.len() >= 2 {
            let spread = sample[sample.len() - 1] - sample[0];
            self.width = (spread / (sample.len() as u64 - 1))
                .saturating_mul(3)
                .max(1);
        }
        self.buckets = buckets;
        self.core.arena.set_lists(buckets as usize + 1);
        for idx in all {
            self.insert_sorted(idx);
        }
        self.resizing = false;
    }
}

impl<T> Default for CalendarQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> TickDriven<T> for CalendarQueue<T> {
    fn core(&self) -> &Core<T> {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core<T> {
        &mut self.core
    }

    fn place(&mut self, idx: u32) {
        self.insert_sorted(idx);
        self.maybe_resize();
    }

    fn detach(&mut self, idx: u32) {
        self.core.arena.unlink(idx);
        self.maybe_resize();
    }

    fn next_work(&self) -> Option<Tick> {
        self.earliest().map(|h| self.core.arena.node(h).expiry)
    }

    fn begin_tick(&mut self, _tick: Tick) {}

    fn step_tick(&mut self, tick: Tick) -> Step {
        match self.earliest() {
            Some(h) if self.core.arena.node(h).expiry <= tick => {
                self.detach(h);
                Step::Fire(h)
            }
            _ => Step::TickDone,
        }
    }

    fn check_structure(&self) -> Result<(), &'static str> {
        for list in 1..=self.buckets as u32 {
            let mut i = self.core.arena.first(list);
            let mut last = 0;
            while i != NIL {
                let node = self.core.arena.node(i);
                if self.list_of(node.expiry) != list {
                    return Err("timer in the wrong bucket");
                }
                if node.expiry < last {
                    return Err("bucket out of order");
                }
                last = node.expiry;
                i = node.next;
            }
        }
        let n = self.core.structure_len() as u64;
        if n > 2 * self.buckets + 1 {
            return Err("calendar too small for its population");
        }
        Ok(())
    }
}

tick_driven_scheme!(CalendarQueue);
