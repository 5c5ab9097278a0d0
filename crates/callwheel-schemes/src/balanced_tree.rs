//! Scheme 3, second form: a balanced search tree ordered by deadline — the red-black tree Linux
//! hrtimers keep (section "hrtimers" of Gleixner's slides), with its leftmost node cached as
//! hrtimers cache `rb_leftmost`, so the earliest deadline is read without a descent.
//!
//! The tree is intrusive, as a kernel `rb_node` is embedded in its `hrtimer`: it is threaded
//! through the slab's own nodes. A node in the tree is on no list (`list == NIL`), so the arena
//! leaves its link fields to the scheme, and the tree uses them as
//!
//! - `prev`: the left child (NIL for none),
//! - `next`: the right child (NIL for none),
//! - `aux`: the parent's index in the low 32 bits (NIL at the root) and the colour in bit 32
//!   (set for red).
//!
//! The tree therefore never allocates. Its only growth is the slab's, which is fallible: when
//! the allocator refuses, `start` returns `Error::NoMemory` and keeps every timer already
//! started, as the wheels and the heap do.
//!
//! Equal deadlines fire in start order without a sequence number: a new node goes to the right
//! of every node with the same deadline, so the in-order walk, and with it the leftmost node, is
//! first started, first fired. A reset timer is placed again, so it counts as started last.
//!
//! | operation | cost |
//! |---|---|
//! | start | O(log n): one descent, then recolourings up the path and at most two rotations |
//! | stop | O(log n): the slot is the tree node, so no search; at most three rotations |
//! | per tick | O(1): look at the cached leftmost; tickless |
//! | range | any deadline |
//!
//! Every walk (the descent, both fix-ups, the successor, the check) is a loop, so no tree can be
//! deep enough to overflow the stack; a red-black tree of n nodes is at most 2·log2(n + 1) deep
//! anyway.

use crate::arena::NIL;
use crate::clock::{tick_driven_scheme, Core, Step, TickDriven};
use callwheel::Error;
use callwheel::Tick;

/// The colour bit of a tree node's `aux` word: set for a red node, clear for a black one.
const RED: u64 = 1 << 32;

/// The bits of a tree node's `aux` word that hold its parent's index.
const PARENT: u64 = u32::MAX as u64;

/// A child's side under its parent. The fix-ups are written once for a parent on either side of
/// its own parent: the mirror case is the same code with the sides swapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Left,
    Right,
}

impl Side {
    #[inline]
    fn other(self) -> Side {
        match self {
            Side::Left => Side::Right,
            Side::Right => Side::Left,
        }
    }
}

/// Scheme 3: a red-black tree threaded through the slab's nodes, with the leftmost node cached.
#[derive(Debug)]
pub struct BalancedTree<T> {
    core: Core<T>,
    /// The root node, NIL when the tree is empty.
    root: u32,
    /// The node with the earliest deadline (the first started among equals), NIL when empty:
    /// hrtimers' `rb_leftmost`, so that the per-tick look and `next_work` need no descent.
    leftmost: u32,
}

impl<T> BalancedTree<T> {
    /// An empty tree whose slab grows on demand.
    pub fn new() -> BalancedTree<T> {
        BalancedTree {
            core: Core::growing(0),
            root: NIL,
            leftmost: NIL,
        }
    }

    /// An empty tree holding at most `capacity` timers.
    pub fn with_capacity(capacity: usize) -> Result<BalancedTree<T>, Error> {
        Ok(BalancedTree {
            core: Core::new(0, Some(capacity))?,
            root: NIL,
            leftmost: NIL,
        })
    }

    // ----- the node fields, read as tree links ---------------------------------------------

    #[inline]
    fn child(&self, i: u32, side: Side) -> u32 {
        let node = self.core.arena.node(i);
        match side {
            Side::Left => node.prev,
            Side::Right => node.next,
        }
    }

    #[inline]
    fn left(&self, i: u32) -> u32 {
        self.child(i, Side::Left)
    }

    #[inline]
    fn right(&self, i: u32) -> u32 {
        self.child(i, Side::Right)
    }

    #[inline]
    fn parent(&self, i: u32) -> u32 {
        (self.core.arena.node(i).aux & PARENT) as u32
    }

    /// Whether `i` is red. NIL, the empty leaf, counts as black, which is what every caller
    /// needs: a missing child or a missing parent never breaks the red rule.
    #[inline]
    fn is_red(&self, i: u32) -> bool {
        i != NIL && self.core.arena.node(i).aux & RED != 0
    }

    #[inline]
    fn set_child(&mut self, i: u32, side: Side, c: u32) {
        let node = self.core.arena.node_mut(i);
        match side {
            Side::Left => node.prev = c,
            Side::Right => node.next = c,
        }
    }

    /// Sets `i`'s parent, keeping its colour.
    #[inline]
    fn set_parent(&mut self, i: u32, p: u32) {
        let node = self.core.arena.node_mut(i);
        node.aux = (node.aux & RED) | u64::from(p);
    }

    /// Sets `i`'s colour, keeping its parent.
    #[inline]
    fn set_red(&mut self, i: u32, red: bool) {
        let node = self.core.arena.node_mut(i);
        if red {
            node.aux |= RED;
        } else {
            node.aux &= !RED;
        }
    }

    /// The side of `p` on which its child `c` hangs. `c` may be NIL (the hole an erase left):
    /// then it is the side whose child is NIL, left first, which is the hole's side whenever the
    /// fix-up asks (the other side, holding a black height of at least one, is never empty).
    #[inline]
    fn side_of(&self, p: u32, c: u32) -> Side {
        if self.left(p) == c {
            Side::Left
        } else {
            Side::Right
        }
    }

    /// Makes `new` take `old`'s place under `parent` (or as the root when `parent` is NIL). The
    /// caller sets `new`'s own parent link.
    #[inline]
    fn replace_child(&mut self, parent: u32, old: u32, new: u32) {
        if parent == NIL {
            self.root = new;
        } else {
            let side = self.side_of(parent, old);
            self.set_child(parent, side, new);
        }
    }

    /// Rotates `x` down to its `side`: its child on the other side takes its place and `x`
    /// becomes that child's `side` child. In-order sequence, and so deadline order and start
    /// order among equal deadlines, is unchanged.
    fn rotate(&mut self, x: u32, side: Side) {
        let other = side.other();
        let y = self.child(x, other);
        let inner = self.child(y, side);
        self.set_child(x, other, inner);
        if inner != NIL {
            self.set_parent(inner, x);
        }
        let p = self.parent(x);
        self.set_parent(y, p);
        self.replace_child(p, x, y);
        self.set_child(y, side, x);
        self.set_parent(x, y);
    }

    /// The node after `i` in order (NIL after the last).
    fn successor(&self, i: u32) -> u32 {
        let mut at = self.right(i);
        if at != NIL {
            while self.left(at) != NIL {
                at = self.left(at);
            }
            return at;
        }
        let mut child = i;
        at = self.parent(i);
        while at != NIL && self.right(at) == child {
            child = at;
            at = self.parent(at);
        }
        at
    }

    // ----- insert ----------------------------------------------------------------------------

    /// Links the unlinked node `idx` into the tree by its deadline, after every node with the
    /// same deadline, and rebalances.
    fn insert(&mut self, idx: u32) {
        let expiry = self.core.arena.node(idx).expiry;
        let mut parent = NIL;
        let mut side = Side::Left;
        let mut at = self.root;
        // Whether the descent went left at every step: then nothing is earlier than the newcomer.
        let mut leftmost = true;
        while at != NIL {
            parent = at;
            // Ties go right, behind the timers already waiting for the same tick: start order.
            side = if expiry < self.core.arena.node(at).expiry {
                Side::Left
            } else {
                leftmost = false;
                Side::Right
            };
            at = self.child(at, side);
        }
        {
            let node = self.core.arena.node_mut(idx);
            node.prev = NIL;
            node.next = NIL;
            node.aux = u64::from(parent) | RED;
        }
        if parent == NIL {
            self.root = idx;
        } else {
            self.set_child(parent, side, idx);
        }
        if leftmost {
            self.leftmost = idx;
        }
        self.insert_fixup(idx);
    }

    /// Restores the red rule after `z` was linked red: a red parent is the only thing that can
    /// be wrong, and each round either fixes it with rotations or moves it two levels up.
    fn insert_fixup(&mut self, mut z: u32) {
        loop {
            let mut p = self.parent(z);
            if !self.is_red(p) {
                break;
            }
            // A red parent is not the root (the root is black), so the grandparent exists.
            let g = self.parent(p);
            let side = self.side_of(g, p);
            let uncle = self.child(g, side.other());
            if self.is_red(uncle) {
                // Both children of g red: move g's black down to them. Black heights are
                // unchanged; g, now red, may clash with its own parent, so go on from there.
                self.set_red(p, false);
                self.set_red(uncle, false);
                self.set_red(g, true);
                z = g;
                continue;
            }
            if self.side_of(p, z) != side {
                // z is the inner grandchild: rotate it up into p's place so that the red pair
                // lies on the outer line, where one rotation at g resolves it.
                self.rotate(p, side);
                core::mem::swap(&mut z, &mut p);
            }
            // p takes g's place and g's black; g, now red, goes down on the uncle's side.
            self.set_red(p, false);
            self.set_red(g, true);
            self.rotate(g, side.other());
            break;
        }
        let root = self.root;
        self.set_red(root, false);
    }

    // ----- erase -----------------------------------------------------------------------------

    /// Unlinks `z` from the tree and rebalances; `z` leaves with no links.
    fn erase(&mut self, z: u32) {
        if z == self.leftmost {
            // The leftmost has no left child, so its successor is its right child (a red leaf,
            // if any) or else its parent: found in O(1). hrtimers update `rb_leftmost` the
            // same way.
            self.leftmost = self.successor(z);
        }
        let (l, r) = (self.left(z), self.right(z));
        let p = self.parent(z);
        // `x` takes the place of the node that actually leaves its position, and `x_parent` is
        // where that happens (`x` may be NIL, which has no parent link of its own).
        let (x, x_parent, removed_red);
        if l == NIL || r == NIL {
            // At most one child: it moves up into z's place.
            x = if l == NIL { r } else { l };
            x_parent = p;
            removed_red = self.is_red(z);
            self.replace_child(p, z, x);
            if x != NIL {
                self.set_parent(x, p);
            }
        } else {
            // Two children: z's successor y (the leftmost of z's right subtree, so it has no
            // left child) moves into z's place and takes z's colour; the colour that leaves the
            // tree is y's, from y's old position, which y's right child x fills.
            let mut y = r;
            while self.left(y) != NIL {
                y = self.left(y);
            }
            removed_red = self.is_red(y);
            x = self.right(y);
            if y == r {
                x_parent = y;
            } else {
                x_parent = self.parent(y);
                self.set_child(x_parent, Side::Left, x);
                if x != NIL {
                    self.set_parent(x, x_parent);
                }
                self.set_child(y, Side::Right, r);
                self.set_parent(r, y);
            }
            self.replace_child(p, z, y);
            self.set_parent(y, p);
            self.set_child(y, Side::Left, l);
            self.set_parent(l, y);
            let red = self.is_red(z);
            self.set_red(y, red);
        }
        if !removed_red {
            self.erase_fixup(x, x_parent);
        }
        let node = self.core.arena.node_mut(z);
        node.prev = NIL;
        node.next = NIL;
        node.aux = u64::from(NIL);
    }

    /// Restores equal black heights after a black node left the position `x` now fills, under
    /// `x_parent`: every path through `x` is one black short. A red `x` absorbs the shortage by
    /// turning black; otherwise the sibling's side lends a black by rotation, or, when it has no
    /// red to lend, gives up one of its own and the shortage moves one level up.
    fn erase_fixup(&mut self, mut x: u32, mut x_parent: u32) {
        while x != self.root && !self.is_red(x) {
            let side = self.side_of(x_parent, x);
            let other = side.other();
            // The sibling exists: its side has a black height of at least one more than x's.
            let mut w = self.child(x_parent, other);
            if self.is_red(w) {
                // A red sibling: rotate it above the parent, so x's new sibling is black.
                self.set_red(w, false);
                self.set_red(x_parent, true);
                self.rotate(x_parent, side);
                w = self.child(x_parent, other);
            }
            let near = self.child(w, side);
            let far = self.child(w, other);
            if !self.is_red(near) && !self.is_red(far) {
                // Nothing red to lend: w turns red, both sides are short, go up one level.
                self.set_red(w, true);
                x = x_parent;
                x_parent = self.parent(x);
                continue;
            }
            if !self.is_red(far) {
                // Only the near nephew is red: rotate it into w's place so the far one is red.
                self.set_red(near, false);
                self.set_red(w, true);
                self.rotate(w, other);
                w = self.child(x_parent, other);
            }
            // w takes the parent's place and colour; the parent and the far nephew turn black,
            // which adds the missing black to x's side and keeps the other side's.
            let parent_red = self.is_red(x_parent);
            self.set_red(w, parent_red);
            self.set_red(x_parent, false);
            let far = self.child(w, other);
            self.set_red(far, false);
            self.rotate(x_parent, side);
            x = self.root;
            break;
        }
        if x != NIL {
            self.set_red(x, false);
        }
    }
}

impl<T> Default for BalancedTree<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> TickDriven<T> for BalancedTree<T> {
    fn core(&self) -> &Core<T> {
        &self.core
    }

    fn core_mut(&mut self) -> &mut Core<T> {
        &mut self.core
    }

    fn place(&mut self, idx: u32) {
        self.insert(idx);
    }

    fn detach(&mut self, idx: u32) {
        self.erase(idx);
    }

    fn next_work(&self) -> Option<Tick> {
        (self.leftmost != NIL).then(|| self.core.arena.node(self.leftmost).expiry)
    }

    fn begin_tick(&mut self, _tick: Tick) {}

    fn step_tick(&mut self, tick: Tick) -> Step {
        let first = self.leftmost;
        if first != NIL && self.core.arena.node(first).expiry <= tick {
            self.erase(first);
            Step::Fire(first)
        } else {
            Step::TickDone
        }
    }

    /// Zero: the tree lives in the slab's nodes (their link fields and `aux` word), so every byte
    /// it uses is already counted in the slab's.
    fn extra_bytes(&self) -> usize {
        0
    }

    /// Walks the whole tree without recursion (down by child links, up by parent links) and
    /// checks every red-black and ordering invariant, the links and the cached leftmost.
    fn check_structure(&self) -> Result<(), &'static str> {
        let expected = self.core.structure_len();
        if self.root == NIL {
            if expected != 0 {
                return Err("tree is empty but timers are outside the overdue queue");
            }
            if self.leftmost != NIL {
                return Err("cached leftmost set in an empty tree");
            }
            return Ok(());
        }
        if self.parent(self.root) != NIL {
            return Err("root has a parent");
        }
        if self.is_red(self.root) {
            return Err("root is red");
        }
        let mut count = 0usize;
        let mut first = NIL;
        let mut last_expiry: Tick = 0;
        // Black nodes on the path from the root to `at`, `at` included.
        let mut blacks = 1usize;
        // The black count every path to an empty leaf must have, once one was seen.
        let mut leaf_blacks: Option<usize> = None;
        let mut at = self.root;
        // Where the walk came from: `at`'s parent (first arrival) or one of its children.
        let mut from = NIL;
        while at != NIL {
            let (l, r, p) = (self.left(at), self.right(at), self.parent(at));
            // Which way to leave `at`: into a child (None: back up to the parent).
            let next;
            if from == p {
                // First arrival at `at`, from its parent.
                count += 1;
                if count > expected {
                    return Err("tree holds more nodes than there are timers (or a cycle)");
                }
                let Some(node) = self.core.arena.get(at) else {
                    return Err("tree holds a free slot");
                };
                if node.list != NIL {
                    return Err("tree node is also on a list");
                }
                if l != NIL && l == r {
                    return Err("both children are the same node");
                }
                if self.is_red(at) && (self.is_red(l) || self.is_red(r)) {
                    return Err("red node has a red child");
                }
                if l == NIL || r == NIL {
                    match leaf_blacks {
                        None => leaf_blacks = Some(blacks),
                        Some(b) if b != blacks => {
                            return Err("paths from the root have different black heights")
                        }
                        Some(_) => {}
                    }
                }
                if l != NIL {
                    next = Some(l);
                } else {
                    self.visit(at, &mut first, &mut last_expiry)?;
                    next = (r != NIL).then_some(r);
                }
            } else if from == l {
                // Back from the left subtree: `at` is next in order.
                self.visit(at, &mut first, &mut last_expiry)?;
                next = (r != NIL).then_some(r);
            } else {
                // Back from the right subtree: done here.
                next = None;
            }
            match next {
                Some(c) => {
                    if self.parent(c) != at {
                        return Err("child's parent link does not name its parent");
                    }
                    blacks += usize::from(!self.is_red(c));
                }
                None => blacks -= usize::from(!self.is_red(at)),
            }
            from = at;
            at = next.unwrap_or(p);
        }
        if count != expected {
            return Err("tree node count disagrees with the number of timers");
        }
        if self.leftmost != first {
            return Err("cached leftmost is not the tree's minimum");
        }
        Ok(())
    }
}

impl<T> BalancedTree<T> {
    /// One in-order step of [`TickDriven::check_structure`]: deadlines never decrease along the
    /// in-order walk, and the first node visited is the minimum.
    fn visit(&self, at: u32, first: &mut u32, last_expiry: &mut Tick) -> Result<(), &'static str> {
        let expiry = self.core.arena.node(at).expiry;
        if *first == NIL {
            *first = at;
        } else if expiry < *last_expiry {
            return Err("in-order walk is not sorted by deadline");
        }
        *last_expiry = expiry;
        Ok(())
    }
}

tick_driven_scheme!(BalancedTree);

#[cfg(test)]
mod tests;
