//! Scheme 7: hierarchical timing wheels (Varghese & Lauck, section 6.2, Figures 7 and 8), with
//! the three ways the paper allows timers to move between levels.
//!
//! Level 0 has one slot per tick; a slot of level L spans `w(L) = slots(0) · … · slots(L−1)`
//! ticks. The paper's example and the binary layout:
//!
//! | level | paper: slots × width | range   | 64-slot levels: width | range      |
//! |-------|----------------------|---------|-----------------------|------------|
//! | 0     | 60 × 1 s             | 1 min   | 1                     | 64         |
//! | 1     | 60 × 1 min           | 1 h     | 64                    | 4 096      |
//! | 2     | 24 × 1 h             | 1 day   | 4 096                 | 262 144    |
//! | 3     | 100 × 1 day          | 100 days| 262 144               | 16 777 216 |
//!
//! A slot is processed when the cursor enters it (at a multiple of its width); the levels are
//! processed from the top down, then level 0.
//!
//! | mode ([`Migration`]) | placement | at the slot | lateness |
//! |---|---|---|---|
//! | `Full` (exact) | the highest digit in which deadline and cursor differ | re-placed one or more levels down, fired at level 0 | 0 |
//! | `One` | the lowest level whose slots reach the deadline | moved once, to the level below, rounded up | < width of the level below |
//! | `None` (Nichols) | the lowest level that reaches the deadline rounded up to its width | fired | < width of that level |
//!
//! Placing by digit (`Full`) is what keeps equal deadlines in start order: a timer placed later
//! lands on a level whose slot is processed after every earlier one has cascaded into it.
//! The lossy modes place by distance instead, as Linux does, so that a short timer never lands
//! on a coarse level just because it crosses a boundary; they do not promise start order among
//! equal deadlines. Rounding is always up, so no mode ever fires a timer early — the paper's
//! "round off to the nearest hour" would.
//!
//! | operation | cost |
//! |---|---|
//! | start | O(levels) |
//! | stop | O(1) |
//! | per tick | O(1) amortized: each timer moves at most levels − 1 times (`Full`), once (`One`), never (`None`) |
//! | range | up to the top level's span ahead ([`HierarchicalWheel::range`]); further is [`Error::BeyondRange`] |
//!
//! Each level has busy marks, so `advance` jumps straight to the next non-empty slot.

use alloc::vec::Vec;

use crate::arena::NIL;
use crate::busy::BusyMarks;
use crate::clock::{tick_driven_scheme, Core, Step, TickDriven};
use callwheel::Error;
use callwheel::Tick;

/// How timers move between the levels of a [`HierarchicalWheel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Migration {
    /// Every timer cascades down to level 0 and fires exactly at its deadline.
    Full,
    /// A timer moves at most once, to the level below the one it was placed on.
    One,
    /// A timer never moves: it fires when its slot comes up (Wick Nichols's variant).
    None,
}

/// What a timer's `aux` says: the tick at which its slot is processed (its *visit*) and whether
/// it fires there instead of moving on. Level 0 timers always fire, so their `aux` is the visit
/// itself; above level 0 it is the absolute slot number (visit / width, which fits in 63 bits
/// because the width is at least 2) shifted left, with the flag in bit 0.
fn encode(level: &Level, l: usize, visit: Tick, last: bool) -> u64 {
    if l == 0 {
        visit
    } else {
        (level.slot_number(visit) << 1) | u64::from(last)
    }
}

/// The inverse of [`encode`]: (visit, fires there).
fn decode(level: &Level, l: usize, aux: u64) -> (Tick, bool) {
    if l == 0 {
        (aux, true)
    } else {
        ((aux >> 1) * level.width, aux & 1 != 0)
    }
}

#[derive(Debug)]
struct Level {
    slots: u64,
    width: u64,
    /// `log2(width)` when the width is a power of two: division becomes a shift.
    shift: Option<u32>,
    /// `slots - 1` when the slot count is a power of two: remainder becomes a mask.
    mask: Option<u64>,
    /// Index of this level's slot 0 among the core's lists.
    first_list: u32,
    busy: BusyMarks,
}

impl Level {
    /// `t / width`: the absolute number of the level slot holding tick `t`.
    #[inline]
    fn slot_number(&self, t: Tick) -> u64 {
        match self.shift {
            Some(s) => t >> s,
            None => t / self.width,
        }
    }

    /// `n mod slots`: where absolute slot `n` sits in this level's array.
    #[inline]
    fn index(&self, n: u64) -> u64 {
        match self.mask {
            Some(m) => n & m,
            None => n % self.slots,
        }
    }

    /// Whether tick `t` is the first tick of one of this level's slots.
    #[inline]
    fn is_boundary(&self, t: Tick) -> bool {
        match self.shift {
            Some(s) => t & ((1 << s) - 1) == 0,
            None => t.is_multiple_of(self.width),
        }
    }
}

/// Scheme 7: hierarchical wheels.
#[derive(Debug)]
pub struct HierarchicalWheel<T> {
    core: Core<T>,
    levels: Vec<Level>,
    mode: Migration,
    /// The level being processed at the current tick (processing runs top-down).
    stage: usize,
    /// A tick's slots are being processed (an `advance` may have stopped part-way).
    in_tick: bool,
    /// The list holding timers started while `in_tick`.
    deferred: u32,
}

impl<T> HierarchicalWheel<T> {
    /// A wheel with `slots[L]` slots at level L (level 0 finest), moving timers per `mode`.
    ///
    /// Every level needs at least 2 slots, at most 8 levels, and the whole span (the product)
    /// must stay below 2^62 ticks.
    pub fn new(slots: &[u32], mode: Migration) -> Result<HierarchicalWheel<T>, Error> {
        Self::build(slots, mode, None)
    }

    /// The same, holding at most `capacity` timers.
    pub fn with_capacity(
        slots: &[u32],
        mode: Migration,
        capacity: usize,
    ) -> Result<HierarchicalWheel<T>, Error> {
        Self::build(slots, mode, Some(capacity))
    }

    /// The paper's example: 60 seconds, 60 minutes, 24 hours, 100 days, at one tick a second.
    pub fn paper(mode: Migration) -> HierarchicalWheel<T> {
        Self::build(&[60, 60, 24, 100], mode, None).expect("the paper's layout is valid")
    }

    /// `levels` levels of 64 slots (the layout of the production wheel).
    pub fn binary(levels: usize, mode: Migration) -> Result<HierarchicalWheel<T>, Error> {
        if levels > 8 {
            return Err(Error::Config {
                reason: "a hierarchy has 1 to 8 levels",
            });
        }
        Self::build(&alloc::vec![64; levels], mode, None)
    }

    fn build(
        slots: &[u32],
        mode: Migration,
        capacity: Option<usize>,
    ) -> Result<HierarchicalWheel<T>, Error> {
        if slots.is_empty() || slots.len() > 8 {
            return Err(Error::Config {
                reason: "a hierarchy has 1 to 8 levels",
            });
        }
        if slots.iter().any(|&s| s < 2) {
            return Err(Error::Config {
                reason: "every level needs at least 2 slots",
            });
        }
        if slots.iter().map(|&s| s as u64).sum::<u64>() > 1 << 26 {
            return Err(Error::Config {
                reason: "a hierarchy has at most 2^26 slots in all",
            });
        }
        let mut levels = Vec::with_capacity(slots.len());
        let mut width = 1u64;
        let mut lists = 0u32;
        for &s in slots {
            let s64 = s as u64;
            levels.push(Level {
                slots: s64,
                width,
                shift: width.is_power_of_two().then(|| width.trailing_zeros()),
                mask: s64.is_power_of_two().then_some(s64 - 1),
                first_list: 1 + lists,
                busy: BusyMarks::try_new(s as usize)?,
            });
            lists += s;
            width = width
                .checked_mul(s as u64)
                .filter(|&w| w < 1 << 62)
                .ok_or(Error::Config {
                    reason: "the hierarchy spans 2^62 ticks or more",
                })?;
        }
        Ok(HierarchicalWheel {
            core: Core::new(lists as usize + 1, capacity)?,
            levels,
            mode,
            stage: 0,
            in_tick: false,
            deferred: lists + 1,
        })
    }

    /// How timers move between levels.
    pub fn mode(&self) -> Migration {
        self.mode
    }

    /// How far ahead of the cursor a deadline may be, at most (it may be up to one top-level
    /// slot more, depending on where the cursor is in its top-level slot).
    pub fn range(&self) -> Tick {
        let top = self.levels.last().expect("at least one level");
        (top.slots - 1) * top.width
    }

    /// The slot widths, level 0 first.
    pub fn widths(&self) -> impl Iterator<Item = Tick> + '_ {
        self.levels.iter().map(|l| l.width)
    }

    /// Links node `idx` at level `l` so that its slot is processed at tick `visit`.
    fn link(&mut self, idx: u32, l: usize, visit: Tick, last: bool) {
        let level = &mut self.levels[l];
        let slot = level.index(level.slot_number(visit));
        level.busy.set(slot as usize);
        let list = level.first_list + slot as u32;
        self.core.arena.node_mut(idx).aux = encode(&self.levels[l], l, visit, last);
        self.core.arena.push_back(list, idx);
    }

    /// Places a timer whose deadline is after `now`; returns `false` (placing nothing) when the
    /// deadline is due at `now` itself, which only a cascade can ask.
    fn place_from(&mut self, idx: u32, now: Tick) -> bool {
        let e = self.core.arena.node(idx).expiry;
        if e <= now {
            return false;
        }
        match self.mode {
            Migration::Full => {
                // The highest level in which the deadline's digit differs from now's.
                let l = self
                    .levels
                    .iter()
                    .rposition(|lv| lv.slot_number(e) != lv.slot_number(now))
                    .unwrap_or(0);
                let level = &self.levels[l];
                let visit = level.slot_number(e) * level.width;
                self.link(idx, l, visit, l == 0);
            }
            Migration::One | Migration::None => {
                let round_up = self.mode == Migration::None;
                for l in 0..self.levels.len() {
                    let level = &self.levels[l];
                    let (w, n) = (level.width, level.slots);
                    let slot = if round_up {
                        e.div_ceil(w)
                    } else {
                        level.slot_number(e)
                    };
                    let ahead = slot.saturating_sub(level.slot_number(now));
                    if ahead >= 1 && ahead <= n || l + 1 == self.levels.len() {
                        self.link(idx, l, slot * w, l == 0 || round_up);
                        break;
                    }
                }
            }
        }
        true
    }

    fn level_list(&self, l: usize, tick: Tick) -> u32 {
        let level = &self.levels[l];
        level.first_list + level.index(level.slot_number(tick)) as u32
    }

    /// The next level, below `from` (exclusive), whose slot boundary `tick` is.
    fn next_stage(&self, from: usize, tick: Tick) -> Option<usize> {
        (0..from).rev().find(|&l| self.levels[l].is_boundary(tick))
    }

    fn unmark_if_empty(&mut self, list: u32) {
        if self.core.arena.is_list_empty(list) {
            let l = self.levels.partition_point(|lv| lv.first_list <= list) - 1;
            let slot = list - self.levels[l].first_list;
            self.levels[l].busy.clear(slot as usize);
        }
    }
}

impl<T> TickDriven<T> for HierarchicalWheel<T> {
    fn core(&self) -> &Core<T> {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core<T> {
        &mut self.core
    }

    fn max_expiry(&self) -> Tick {
        // The top level reaches `slots` slots past the cursor's own top-level slot; rounding a
        // deadline up to a slot boundary must not pass the end of time either.
        let top = self.levels.last().expect("at least one level");
        let reach = (self.core.cursor / top.width)
            .saturating_add(top.slots)
            .saturating_mul(top.width);
        reach.min(u64::MAX - (top.width - 1))
    }

    fn place(&mut self, idx: u32) {
        if self.in_tick {
            // Placing it now could put it ahead of older timers with the same deadline that
            // are still waiting to cascade at this tick; place it once the tick is done.
            self.core.arena.push_back(self.deferred, idx);
        } else {
            let now = self.core.cursor;
            self.place_from(idx, now);
        }
    }

    fn detach(&mut self, idx: u32) {
        let list = self.core.arena.node(idx).list;
        self.core.arena.unlink(idx);
        if list != self.deferred {
            self.unmark_if_empty(list);
        }
    }

    fn next_work(&self) -> Option<Tick> {
        if self.core.structure_len() == 0 {
            return None;
        }
        let c = self.core.cursor;
        self.levels
            .iter()
            .filter_map(|level| {
                let number = level.slot_number(c);
                let d = level.busy.next_from((level.index(number) + 1) as usize)? as u64 + 1;
                Some(number.saturating_add(d).saturating_mul(level.width))
            })
            .min()
    }

    fn begin_tick(&mut self, tick: Tick) {
        let top = self.levels.len();
        self.in_tick = true;
        // Level 0's width is 1, so there is always a stage.
        self.stage = self.next_stage(top, tick).unwrap_or(0);
        let list = self.level_list(self.stage, tick);
        self.core.arena.walk_begin(list);
    }

    fn step_tick(&mut self, tick: Tick) -> Step {
        let idx = self.core.arena.walk_take();
        if idx == NIL {
            return match self.next_stage(self.stage, tick) {
                Some(l) => {
                    self.stage = l;
                    let list = self.level_list(l, tick);
                    self.core.arena.walk_begin(list);
                    Step::Worked
                }
                None => match self.core.arena.pop_front(self.deferred) {
                    Some(idx) => {
                        self.place_from(idx, tick);
                        Step::Worked
                    }
                    None => {
                        self.in_tick = false;
                        Step::TickDone
                    }
                },
            };
        }
        let aux = self.core.arena.node(idx).aux;
        let (visit, last) = decode(&self.levels[self.stage], self.stage, aux);
        if visit != tick {
            // A later rotation of this slot (placed a full level span ahead): keep it.
            return Step::Worked;
        }
        self.detach(idx);
        if last {
            return Step::Fire(idx);
        }
        match self.mode {
            Migration::Full => {
                if self.place_from(idx, tick) {
                    Step::Worked
                } else {
                    Step::Fire(idx)
                }
            }
            Migration::One | Migration::None => {
                // One migration: to the level below, rounded up, and final there.
                let e = self.core.arena.node(idx).expiry;
                let below = self.stage.saturating_sub(1);
                let w = self.levels[below].width;
                let visit = e.div_ceil(w) * w;
                if visit == tick {
                    Step::Fire(idx)
                } else {
                    self.link(idx, below, visit, true);
                    Step::Worked
                }
            }
        }
    }

    fn extra_bytes(&self) -> usize {
        self.levels
            .iter()
            .map(|l| l.busy.memory_bytes())
            .sum::<usize>()
            + self.levels.capacity() * core::mem::size_of::<Level>()
    }

    fn check_structure(&self) -> Result<(), &'static str> {
        if !self.in_tick && !self.core.arena.is_list_empty(self.deferred) {
            return Err("timers left deferred outside a tick");
        }
        for (l, level) in self.levels.iter().enumerate() {
            for slot in 0..level.slots {
                let list = level.first_list + slot as u32;
                if level.busy.get(slot as usize) == self.core.arena.is_list_empty(list) {
                    return Err("busy mark disagrees with its slot");
                }
                let mut i = self.core.arena.first(list);
                while i != NIL {
                    let node = self.core.arena.node(i);
                    let (visit, last) = decode(level, l, node.aux);
                    if (visit / level.width) % level.slots != slot || visit % level.width != 0 {
                        return Err("timer in the wrong slot");
                    }
                    if visit < self.core.cursor {
                        return Err("a slot's visit was missed");
                    }
                    if last && visit < node.expiry {
                        return Err("a timer would fire before its deadline");
                    }
                    if self.mode == Migration::Full && visit > node.expiry {
                        return Err("an exact timer would fire late");
                    }
                    i = node.next;
                }
            }
        }
        Ok(())
    }
}

tick_driven_scheme!(HierarchicalWheel);
