//! Scheme 3, second form: a balanced search tree keyed by (deadline, sequence) — the structure
//! Linux hrtimers keep (a red-black tree, section "hrtimers" of Gleixner's slides).
//!
//! The tree here is the standard library's B-tree (`alloc::collections::BTreeMap`), a balanced
//! search tree whose nodes hold several keys each; like a red-black tree it gives O(log n)
//! insert, delete and minimum, with fewer cache misses per operation.
//!
//! | operation | cost |
//! |---|---|
//! | start | O(log n) |
//! | stop | O(log n): the slot keeps its key, so no search by value |
//! | per tick | O(1) amortized: look at the first key; tickless |
//! | range | any deadline |
//!
//! The slab's growth is fallible (`Error::NoMemory`) as in every scheme, but a B-tree insert
//! that needs a new node allocates infallibly (the standard map offers no fallible insert): under
//! memory exhaustion this scheme can abort where the wheel and the hashed schemes return the
//! error. It is a research baseline; the production wheel is the structure for bounded memory.

use alloc::collections::BTreeMap;

use crate::clock::{tick_driven_scheme, Core, Step, TickDriven};
use callwheel::Error;
use callwheel::Tick;

/// Scheme 3: a balanced search tree.
#[derive(Debug)]
pub struct BalancedTree<T> {
    core: Core<T>,
    tree: BTreeMap<(Tick, u64), u32>,
    seq: u64,
}

impl<T> BalancedTree<T> {
    /// An empty tree whose slab grows on demand.
    pub fn new() -> BalancedTree<T> {
        BalancedTree {
            core: Core::growing(0),
            tree: BTreeMap::new(),
            seq: 0,
        }
    }

    /// An empty tree holding at most `capacity` timers.
    pub fn with_capacity(capacity: usize) -> Result<BalancedTree<T>, Error> {
        Ok(BalancedTree {
            core: Core::new(0, Some(capacity))?,
            tree: BTreeMap::new(),
            seq: 0,
        })
    }
}

impl<T> Default for BalancedTree<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// B-tree leaf capacity in the standard library, and the fill a random insertion order leaves
/// on average (about 2/3): the basis of the memory estimate.
const NODE_KEYS: usize = 11;
const NODE_BYTES: usize = NODE_KEYS * (16 + 4) + 16;

impl<T> TickDriven<T> for BalancedTree<T> {
    fn core(&self) -> &Core<T> {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core<T> {
        &mut self.core
    }

    fn place(&mut self, idx: u32) {
        self.seq += 1;
        self.core.arena.node_mut(idx).aux = self.seq;
        self.tree
            .insert((self.core.arena.node(idx).expiry, self.seq), idx);
    }

    fn detach(&mut self, idx: u32) {
        let node = self.core.arena.node(idx);
        self.tree.remove(&(node.expiry, node.aux));
    }

    fn next_work(&self) -> Option<Tick> {
        self.tree.first_key_value().map(|(k, _)| k.0)
    }

    fn begin_tick(&mut self, _tick: Tick) {}

    fn step_tick(&mut self, tick: Tick) -> Step {
        match self.tree.first_key_value() {
            Some((&(expiry, _), &idx)) if expiry <= tick => {
                self.tree.pop_first();
                Step::Fire(idx)
            }
            _ => Step::TickDone,
        }
    }

    /// An estimate: the standard B-tree does not report its allocation. Nodes of 11 keys filled
    /// to about two thirds.
    fn extra_bytes(&self) -> usize {
        self.tree.len().div_ceil(NODE_KEYS * 2 / 3) * NODE_BYTES
    }

    fn check_structure(&self) -> Result<(), &'static str> {
        if self.tree.len() != self.core.structure_len() {
            return Err("tree size disagrees with the number of timers");
        }
        for (&(expiry, seq), &idx) in &self.tree {
            let node = self.core.arena.node(idx);
            if node.expiry != expiry || node.aux != seq {
                return Err("tree key disagrees with the slot");
            }
        }
        Ok(())
    }
}

tick_driven_scheme!(BalancedTree);
