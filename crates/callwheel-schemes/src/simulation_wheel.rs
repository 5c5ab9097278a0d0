//! The timing wheel of digital-logic simulators, with a single overflow list (Varghese & Lauck,
//! section 4.2, Figure 4; TEGAS-2's time-flow mechanism).
//!
//! ```text
//!   time = S · N + i          S: cycles completed, i: the time pointer
//!   ┌───┬───┬───┬───┬───┬───┐
//!   │   │ ● │   │ ● │   │   │   N lists, one per tick of the current cycle:
//!   └───┴───┴─▲─┴───┴───┴───┘   a timer due at S · N + j waits in list j
//!             i
//!   overflow → [●] → [●] → …    every timer due in a later cycle, unsorted
//!
//!   the pointer steps i = 0, 1, …, N - 1, firing each list it reaches; when it wraps to 0,
//!   S += 1 and the overflow list is scanned: the timers due in cycle S move to their lists
//! ```
//!
//! | operation | cost |
//! |---|---|
//! | start | O(1): append to list `j`, or to the overflow list |
//! | stop | O(1): unlink by handle |
//! | per tick | O(1) plus the timers that fire (empty lists skipped by busy marks) |
//! | per wrap (every N ticks) | O(overflow): every timer of the overflow list is examined once |
//! | range | any deadline |
//!
//! Simulators use it because most events they schedule fall within a short distance of the
//! present, so the overflow list stays short and the array does all the work. A timer module
//! sees the opposite: within a cycle, the further the pointer has travelled, the more of a
//! fixed interval lands beyond the cycle's end, and a timer `d` ticks ahead waits on the
//! overflow list through about `d / N` scans, so a population of long timers costs the whole
//! overflow list every N ticks. Varghese & Lauck take this as their point of departure: Scheme 4
//! drops the overflow list by limiting the range, Scheme 6 keeps later rotations in the array
//! itself (hashing), Scheme 7 replaces the overflow list by coarser wheels.
//!
//! The overflow list keeps start order and its scan moves timers in that order, and a scan
//! finishes before the tick fires anything, so equal deadlines fire in start order. The scan
//! is interruptible like every tick's work (one step per timer examined); a timer started while
//! a scan is under way joins the overflow list behind the ones not yet examined, whatever its
//! deadline, so it cannot overtake them. Between wraps the clock jumps from one busy list to the
//! next (Appendix A's busy marks; the simulator "increments the current time until it finds a
//! non-empty list"), and stops at each wrap while the overflow list holds a timer.

use crate::arena::NIL;
use crate::busy::BusyMarks;
use crate::clock::{tick_driven_scheme, Core, Step, TickDriven};
use callwheel::Error;
use callwheel::Tick;

/// The simulation wheel: N lists for the current cycle and one overflow list.
#[derive(Debug)]
pub struct SimulationWheel<T> {
    core: Core<T>,
    /// N, the ticks of a cycle.
    slots: u64,
    /// S: the cycle of the cursor (`cursor / N`), moved by the wrap.
    cycle: u64,
    /// Set while the wrap's scan of the overflow list is under way.
    scanning: bool,
    /// Whether each of the N lists holds a timer.
    busy: BusyMarks,
}

impl<T> SimulationWheel<T> {
    /// The largest N accepted: 2^26 lists.
    pub const MAX_SLOTS: u64 = 1 << 26;

    /// A wheel whose cycle is `slots` ticks long (N), its slab growing on demand.
    pub fn new(slots: u64) -> Result<SimulationWheel<T>, Error> {
        Self::build(slots, None)
    }

    /// The same, holding at most `capacity` timers.
    pub fn with_capacity(slots: u64, capacity: usize) -> Result<SimulationWheel<T>, Error> {
        Self::build(slots, Some(capacity))
    }

    fn build(slots: u64, capacity: Option<usize>) -> Result<SimulationWheel<T>, Error> {
        if slots == 0 || slots > Self::MAX_SLOTS {
            return Err(Error::Config {
                reason: "a simulation wheel's cycle must be between 1 and 2^26 ticks",
            });
        }
        Ok(SimulationWheel {
            core: Core::new(slots as usize + 1, capacity)?,
            slots,
            cycle: 0,
            scanning: false,
            busy: BusyMarks::try_new(slots as usize)?,
        })
    }

    /// N: the ticks of one cycle, the lists of the array.
    pub fn slots(&self) -> u64 {
        self.slots
    }

    /// S: the cycles completed, the wheel's time being `S · N + i`.
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// How many timers wait on the overflow list (O(overflow): the list is walked).
    pub fn overflow_len(&self) -> usize {
        let mut count = 0;
        let mut i = self.core.arena.first(self.overflow());
        while i != NIL {
            count += 1;
            i = self.core.arena.node(i).next;
        }
        count
    }

    /// The list of array element `j` (`0 <= j < N`).
    #[inline]
    fn slot_list(j: u64) -> u32 {
        j as u32 + 1
    }

    /// The overflow list, after the N lists of the array.
    #[inline]
    fn overflow(&self) -> u32 {
        self.slots as u32 + 1
    }

    /// Links a node into array element `deadline mod N`.
    fn link_in_array(&mut self, idx: u32) {
        let j = self.core.arena.node(idx).expiry % self.slots;
        self.core.arena.push_back(Self::slot_list(j), idx);
        self.busy.set(j as usize);
    }

    /// The first tick of the next cycle, if time has one.
    fn next_wrap(&self) -> Option<Tick> {
        self.cycle.checked_add(1)?.checked_mul(self.slots)
    }
}

impl<T> TickDriven<T> for SimulationWheel<T> {
    fn core(&self) -> &Core<T> {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core<T> {
        &mut self.core
    }

    fn place(&mut self, idx: u32) {
        let expiry = self.core.arena.node(idx).expiry;
        if expiry / self.slots == self.cycle && !self.scanning {
            self.link_in_array(idx);
        } else {
            let overflow = self.overflow();
            self.core.arena.push_back(overflow, idx);
        }
    }

    fn detach(&mut self, idx: u32) {
        let list = self.core.arena.node(idx).list;
        self.core.arena.unlink(idx);
        if list != self.overflow() && self.core.arena.is_list_empty(list) {
            self.busy.clear((list - 1) as usize);
        }
    }

    fn next_work(&self) -> Option<Tick> {
        if self.core.structure_len() == 0 {
            return None;
        }
        // The next busy list after the pointer within this cycle, else the wrap (where the
        // overflow list is scanned).
        let base = self.cycle * self.slots;
        let i = self.core.cursor - base;
        if i + 1 < self.slots {
            if let Some(d) = self.busy.next_from(i as usize + 1) {
                let j = i + 1 + d as u64;
                if j < self.slots {
                    return Some(base + j);
                }
            }
        }
        // Nothing left in this cycle's lists: the timers wait on the overflow list. The last
        // cycle of time has no wrap, but nothing can be beyond it either.
        Some(self.next_wrap().unwrap_or(Tick::MAX))
    }

    fn begin_tick(&mut self, tick: Tick) {
        let cycle = tick / self.slots;
        if cycle != self.cycle {
            // The pointer wrapped (or the clock jumped over cycles with nothing pending).
            self.cycle = cycle;
            let overflow = self.overflow();
            if !self.core.arena.is_list_empty(overflow) {
                self.scanning = true;
                self.core.arena.walk_begin(overflow);
            }
        }
    }

    fn step_tick(&mut self, tick: Tick) -> Step {
        if self.scanning {
            let idx = self.core.arena.walk_take();
            if idx != NIL {
                let expiry = self.core.arena.node(idx).expiry;
                debug_assert!(expiry >= tick, "a wrap was skipped");
                if expiry / self.slots <= self.cycle {
                    self.core.arena.unlink(idx);
                    self.link_in_array(idx);
                }
                return Step::Worked;
            }
            self.scanning = false;
            self.core.arena.walk_end();
        }
        let list = Self::slot_list(tick % self.slots);
        let head = self.core.arena.first(list);
        if head != NIL && self.core.arena.node(head).expiry == tick {
            self.detach(head);
            Step::Fire(head)
        } else {
            Step::TickDone
        }
    }

    fn extra_bytes(&self) -> usize {
        self.busy.memory_bytes()
    }

    fn check_structure(&self) -> Result<(), &'static str> {
        let arena = &self.core.arena;
        if self.cycle != self.core.cursor / self.slots {
            return Err("the cycle count disagrees with the time");
        }
        let pending = self.core.pending_now();
        if self.scanning && !pending {
            return Err("a scan outlived its tick");
        }
        for j in 0..self.slots {
            let list = Self::slot_list(j);
            if self.busy.get(j as usize) == arena.is_list_empty(list) {
                return Err("a busy mark disagrees with its list");
            }
            let mut i = arena.first(list);
            while i != NIL {
                let node = arena.node(i);
                if node.expiry / self.slots != self.cycle || node.expiry % self.slots != j {
                    return Err("a timer in the array is not due in its list's tick of this cycle");
                }
                if node.expiry <= self.core.cursor && !pending {
                    return Err("a due timer was left in its list");
                }
                i = node.next;
            }
        }
        let mut i = arena.first(self.overflow());
        while i != NIL {
            let node = arena.node(i);
            // Only a scan under way may leave (or receive) timers of the current cycle there.
            if node.expiry / self.slots <= self.cycle && !self.scanning {
                return Err("a timer of the current cycle is on the overflow list");
            }
            i = node.next;
        }
        Ok(())
    }
}

tick_driven_scheme!(SimulationWheel);

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;
    use callwheel::{Budget, Scheme, Timers};

    #[test]
    fn far_timers_wait_on_the_overflow_list_until_their_cycle() {
        let mut wheel = SimulationWheel::new(8).unwrap();
        wheel.start(5, 'a').unwrap();
        wheel.start(8, 'b').unwrap();
        wheel.start(30, 'c').unwrap();
        assert_eq!(wheel.overflow_len(), 2, "8 and 30 are beyond cycle 0");
        let mut fired = Vec::new();
        wheel.advance_to(8, |t, e| fired.push((e.value, t.now())));
        assert_eq!(fired, [('a', 5), ('b', 8)]);
        assert_eq!((wheel.cycle(), wheel.overflow_len()), (1, 1));
        // At the wrap to cycle 3 (tick 24) the scan moves 30 into list 6.
        wheel.advance_to(24, |_, _| {});
        assert_eq!((wheel.cycle(), wheel.overflow_len()), (3, 0));
        wheel.advance_to(40, |t, e| fired.push((e.value, t.now())));
        assert_eq!(fired[2], ('c', 30));
        wheel.check_invariants().unwrap();
    }

    #[test]
    fn each_wrap_scans_the_whole_overflow_list() {
        // Ten timers 100 cycles ahead: every wrap examines all ten (one step each), plus the
        // wrap's own steps, and nothing fires until cycle 100.
        let mut wheel = SimulationWheel::new(16).unwrap();
        for v in 0..10u64 {
            wheel.start(1_600 + v, v).unwrap();
        }
        let p = wheel.advance(1_599, Budget::UNLIMITED, |_, _| {});
        assert_eq!(p.fired, 0);
        assert!(
            p.steps >= 99 * 10,
            "99 wraps of 10 examinations: {} steps",
            p.steps
        );
        let mut fired = Vec::new();
        wheel.advance_to(2_000, |_, e| fired.push(e.value));
        assert_eq!(fired, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn a_start_during_an_interrupted_scan_waits_behind_the_scanned_timers() {
        let mut wheel = SimulationWheel::new(4).unwrap();
        for v in 0..5u64 {
            wheel.start(9, v).unwrap();
        }
        // Stop in the middle of the scan at the wrap to cycle 2 (tick 8).
        let mut fired = Vec::new();
        while wheel.now() < 8 || wheel.overflow_len() == 5 {
            let p = wheel.advance(9, Budget::steps(1), |_, e| fired.push(e.value));
            wheel.check_invariants().unwrap();
            assert!(!p.complete || wheel.now() >= 9);
        }
        assert!(fired.is_empty());
        wheel.start(9, 99).unwrap();
        wheel.check_invariants().unwrap();
        wheel.advance_to(9, |_, e| fired.push(e.value));
        assert_eq!(fired, [0, 1, 2, 3, 4, 99]);
    }

    #[test]
    fn the_cycle_must_be_one_tick_at_least() {
        assert!(SimulationWheel::<()>::new(0).is_err());
        assert!(SimulationWheel::<()>::new(SimulationWheel::<()>::MAX_SLOTS + 1).is_err());
        assert_eq!(SimulationWheel::<()>::new(1).unwrap().slots(), 1);
    }
}
