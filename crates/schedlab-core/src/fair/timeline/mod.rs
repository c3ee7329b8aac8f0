//! The timeline of one cfs_rq (the kernel's `tasks_timeline` rb-tree):
//! the entities waiting to run, ordered by (key, id), with the minimum
//! vruntime and the minimum slice of every subtree.
//!
//! Kernel reference: fair.c `__enqueue_entity` / `__dequeue_entity`, the
//! augmented callbacks of the rb-tree (`min_vruntime_cb`,
//! `min_vruntime_update`: every node caches the minimum vruntime and the
//! minimum slice of its subtree), `cfs_rq_min_slice` (the root's cache,
//! O(1)) and `__pick_eevdf`'s heap search (go left while the left
//! subtree's minimum vruntime is eligible, else take the node if it is
//! eligible, else go right), which finds the leftmost eligible entity in
//! O(log n).
//!
//! Representation: an AVL tree over the slots of a `Vec` (an arena, one
//! per cfs_rq), children as slot indices, freed slots on a free list
//! threaded through `left`; slot 0 is a sentinel standing for "no node"
//! (height 0, minima at their type's maximum), so the augmented update
//! reads both children without a branch. In steady state no operation
//! allocates: the arena grows to the largest number of entities the
//! queue has held and stays. The leftmost slot is cached (the kernel's
//! `rb_root_cached`). The key is the virtual deadline under EEVDF, the
//! vruntime under CFS (see fair/cfs); ties by entity id.
//!
//! Short queues (the usual case: a few to a dozen waiting entities per
//! CPU) are kept as a sorted run of slots 1..=len of the same arena
//! instead, searched and shifted in place: the tree is built from the run
//! when a 17th entity joins (`RUN_MAX`), and flattened back into a run
//! when a removal leaves 8 (`RUN_AGAIN`). Measured, not tuned to match
//! an output (outputs do not depend on it): on periodic-8-dense, whose
//! queues often hold more than 8, the tree alone cost ~310 instructions
//! per insertion and ~270 per removal in callgrind, more than the
//! `BTreeSet`'s 145 and 207; with runs of up to 16 it is 139 and 118
//! (runs of up to 32 gave nearly the same total). A run's pick is the
//! in-order walk the heap search replaces, over at most 16 entries.
//!
//! The tree's shape (AVL instead of red-black) is invisible: order,
//! leftmost, the leftmost entry passing a monotone test, and the minima
//! are properties of the set, not of the shape. So the model's results
//! are the same as with the `BTreeSet` this replaced, which test builds
//! keep as the reference (`reference`): every insertion and removal is
//! mirrored into one, and the proptests here and in fair/eevdf compare
//! every answer with it.
//!
//! The cached vruntime and slice are the entity's at insertion; the model
//! changes neither while an entity waits (curr is never in the timeline;
//! a reweight or a re-placement takes the entity out first), and
//! `--check` compares them with the entities (check.rs).

use crate::ids::EntityId;
use crate::time::Nanos;
use std::cmp::Ordering;

#[cfg(test)]
pub(crate) mod reference;
#[cfg(test)]
mod tests;

/// One entry of the timeline: (key, entity).
pub type TimelineKey = (i64, EntityId);

/// Slot index; 0 is the sentinel ("no node").
type Slot = u32;
const NIL: Slot = 0;

/// A run (no tree) holds at most this many entries; the next insertion
/// builds the tree (see the module doc for the measurement behind it).
const RUN_MAX: usize = 16;
/// A removal that leaves this many entries in the tree flattens it into
/// a run (below `RUN_MAX`, so that a queue moving around one size does
/// not rebuild on every operation).
const RUN_AGAIN: usize = 8;

/// The height bound of an AVL tree of fewer than 2^32 nodes
/// (1.4405 · log2(n + 2) < 47), for the iterator's stack.
const MAX_HEIGHT: usize = 48;

/// A key packed into one integer with the same order: the key's bits
/// with the sign flipped (so unsigned order is signed order), then the
/// id. One 128-bit comparison per level instead of two.
type Packed = u128;

#[inline]
fn pack((k, id): TimelineKey) -> Packed {
    (((k as u64) ^ (1 << 63)) as u128) << 32 | id.0 as u128
}

#[inline]
fn unpack(p: Packed) -> TimelineKey {
    ((((p >> 32) as u64) ^ (1 << 63)) as i64, EntityId(p as u32))
}

#[derive(Copy, Clone, Debug)]
struct Node {
    /// The entry's key, packed.
    key: Packed,
    /// The entity's vruntime (eligibility is a test on it).
    vruntime: i64,
    /// The entity's slice.
    slice: Nanos,
    /// Least vruntime in the subtree (the kernel's `se->min_vruntime`).
    min_vruntime: i64,
    /// Least slice in the subtree (the kernel's `se->min_slice`).
    min_slice: Nanos,
    left: Slot,
    right: Slot,
    /// Height of the subtree (a leaf is 1, the sentinel 0).
    height: u32,
}

impl Node {
    /// A node without children.
    #[inline]
    fn leaf(key: Packed, vruntime: i64, slice: Nanos) -> Node {
        Node {
            key,
            vruntime,
            slice,
            min_vruntime: vruntime,
            min_slice: slice,
            left: NIL,
            right: NIL,
            height: 1,
        }
    }

    const SENTINEL: Node = Node {
        key: Packed::MAX,
        vruntime: i64::MAX,
        slice: Nanos::MAX,
        min_vruntime: i64::MAX,
        min_slice: Nanos::MAX,
        left: NIL,
        right: NIL,
        height: 0,
    };
}

/// The entities waiting on one cfs_rq, in (key, id) order, with the
/// shortest slice among them (`cfs_rq_min_slice` without curr).
#[derive(Clone, Debug)]
pub struct Timeline {
    /// Slot 0 is the sentinel; the others are nodes or free (tree), or
    /// the run in slots 1..=len and spare slots (run).
    nodes: Vec<Node>,
    /// The tree's root (NIL while a run).
    root: Slot,
    /// The leftmost node (NIL when empty; slot 1 for a run).
    first: Slot,
    /// Head of the free slots (linked through `left`; tree only).
    free: Slot,
    len: u32,
    /// The entries are a tree (else a run).
    tree: bool,
    /// Test builds: the `BTreeSet` timeline this replaced, fed the same
    /// insertions and removals (the slow reference model).
    #[cfg(test)]
    shadow: reference::Timeline,
}

impl Default for Timeline {
    fn default() -> Self {
        Timeline {
            nodes: vec![Node::SENTINEL],
            root: NIL,
            first: NIL,
            free: NIL,
            len: 0,
            tree: false,
            #[cfg(test)]
            shadow: reference::Timeline::default(),
        }
    }
}

impl Timeline {
    /// Inserts `key` for an entity of vruntime `vruntime` and slice
    /// `slice`; false (and no change) if it was already there.
    pub fn insert(&mut self, key: TimelineKey, vruntime: i64, slice: Nanos) -> bool {
        let key = pack(key);
        let fresh = if self.tree {
            self.insert_node(key, vruntime, slice)
        } else if self.len as usize == RUN_MAX {
            self.build_tree();
            self.insert_node(key, vruntime, slice)
        } else {
            self.run_insert(key, vruntime, slice)
        };
        #[cfg(test)]
        {
            let key = unpack(key);
            assert_eq!(
                self.shadow.insert(key, slice),
                fresh,
                "shadow insert {key:?}"
            );
        }
        fresh
    }

    /// Removes `key`; false if it was not there.
    pub fn remove(&mut self, key: &TimelineKey) -> bool {
        let gone = if self.tree {
            let gone = self.remove_node(pack(*key));
            if self.len as usize == RUN_AGAIN {
                self.flatten();
            }
            gone
        } else {
            self.run_remove(pack(*key))
        };
        #[cfg(test)]
        assert_eq!(
            self.shadow.remove(key, gone.unwrap_or(0)),
            gone.is_some(),
            "shadow remove {key:?}"
        );
        gone.is_some()
    }

    /// The shortest slice of the waiting entities (None when empty).
    #[inline]
    pub fn min_slice(&self) -> Option<Nanos> {
        if self.tree {
            return Some(self.nodes[self.root as usize].min_slice);
        }
        self.run().iter().map(|n| n.slice).min()
    }

    /// The leftmost entry (earliest key).
    #[inline]
    pub fn first(&self) -> Option<TimelineKey> {
        (self.first != NIL).then(|| unpack(self.nodes[self.first as usize].key))
    }

    /// The leftmost entity whose vruntime passes `eligible`, a test that,
    /// true for a vruntime, is true for every smaller one (the kernel's
    /// `vruntime_eligible`); None when no entity passes. This is the
    /// heap search of `__pick_eevdf`: it descends left while the left
    /// subtree's least vruntime passes, so it visits one path, O(log n).
    #[inline]
    pub fn first_eligible(&self, eligible: impl Fn(i64) -> bool) -> Option<EntityId> {
        if !self.tree {
            // A run: the walk in order (at most RUN_MAX entries).
            return self
                .run()
                .iter()
                .find(|n| eligible(n.vruntime))
                .map(|n| EntityId(n.key as u32));
        }
        let mut n = self.root;
        while n != NIL {
            let node = &self.nodes[n as usize];
            let l = node.left;
            if l != NIL && eligible(self.nodes[l as usize].min_vruntime) {
                n = l;
                continue;
            }
            if eligible(node.vruntime) {
                return Some(EntityId(node.key as u32));
            }
            n = node.right;
        }
        None
    }

    /// Entries in (key, id) order.
    #[inline]
    pub fn iter(&self) -> Iter<'_> {
        let mut it = Iter {
            nodes: &self.nodes,
            stack: [NIL; MAX_HEIGHT],
            top: 0,
            run: if self.tree { 0..0 } else { 1..1 + self.len },
        };
        it.push_left(self.root);
        it
    }

    /// Entries in (key, id) order with the vruntime and slice stored for
    /// them (for `--check`).
    pub fn entries(&self) -> impl Iterator<Item = (TimelineKey, i64, Nanos)> + '_ {
        let mut it = self.iter();
        std::iter::from_fn(move || {
            let n = it.next_slot()?;
            let node = &self.nodes[n as usize];
            Some((unpack(node.key), node.vruntime, node.slice))
        })
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True when no entity waits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Checks the tree's own invariants (order, AVL balance, heights,
    /// subtree minima, the cached leftmost, the count, the free list):
    /// an error naming the first broken one. For `--check` and tests.
    pub fn validate(&self) -> Result<(), String> {
        if !self.tree {
            let run = self.nodes.get(1..1 + self.len as usize).ok_or_else(|| {
                format!(
                    "timeline: run of {} in {} slots",
                    self.len,
                    self.nodes.len()
                )
            })?;
            if run.len() > RUN_MAX || self.root != NIL {
                return Err(format!(
                    "timeline: run of {} (root {})",
                    run.len(),
                    self.root
                ));
            }
            if let Some(w) = run.windows(2).find(|w| w[0].key >= w[1].key) {
                return Err(format!(
                    "timeline: run entry {:?} out of order",
                    unpack(w[1].key)
                ));
            }
            let first = if run.is_empty() { NIL } else { 1 };
            if self.first != first {
                return Err(format!(
                    "timeline: run's first slot {} (not {first})",
                    self.first
                ));
            }
            return Ok(());
        }
        if (self.len as usize) <= RUN_AGAIN {
            return Err(format!("timeline: a tree of {} entries", self.len));
        }
        let (n, _) = self.validate_at(self.root, None, None)?;
        if n != self.len as usize {
            return Err(format!("timeline: {n} nodes reachable, len {}", self.len));
        }
        if self.first != self.leftmost(self.root) {
            return Err(format!(
                "timeline: cached leftmost slot {} is not the leftmost {}",
                self.first,
                self.leftmost(self.root)
            ));
        }
        let mut free = 0usize;
        let mut f = self.free;
        while f != NIL {
            free += 1;
            if free > self.nodes.len() {
                return Err("timeline: the free list loops".into());
            }
            f = self.nodes[f as usize].left;
        }
        if 1 + n + free != self.nodes.len() {
            return Err(format!(
                "timeline: {n} nodes + {free} free + sentinel but {} slots",
                self.nodes.len()
            ));
        }
        Ok(())
    }

    /// The reference model this tree shadows (test builds).
    #[cfg(test)]
    pub(crate) fn reference(&self) -> &reference::Timeline {
        &self.shadow
    }

    // ------------------------------------------------------------ internals

    /// The run's entries (slots 1..=len; a run only).
    #[inline]
    fn run(&self) -> &[Node] {
        &self.nodes[1..1 + self.len as usize]
    }

    /// A new entry in the run (a run of fewer than RUN_MAX): its place
    /// found from the end (a new deadline is most often the latest), the
    /// later entries shifted up one slot.
    fn run_insert(&mut self, key: Packed, vruntime: i64, slice: Nanos) -> bool {
        let len = self.len as usize;
        let mut i = len + 1;
        while i > 1 {
            let k = self.nodes[i - 1].key;
            if k < key {
                break;
            }
            if k == key {
                return false;
            }
            i -= 1;
        }
        if self.nodes.len() <= len + 1 {
            self.nodes.push(Node::SENTINEL);
        }
        self.nodes.copy_within(i..len + 1, i + 1);
        self.nodes[i] = Node::leaf(key, vruntime, slice);
        self.len += 1;
        self.first = 1;
        true
    }

    /// Removes an entry of the run, the later ones shifted down; its
    /// slice, None if absent.
    fn run_remove(&mut self, key: Packed) -> Option<Nanos> {
        let len = self.len as usize;
        let i = 1 + self.run().iter().position(|n| n.key >= key)?;
        if self.nodes[i].key != key {
            return None;
        }
        let slice = self.nodes[i].slice;
        self.nodes.copy_within(i + 1..len + 1, i);
        self.len -= 1;
        if self.len == 0 {
            self.first = NIL;
        }
        Some(slice)
    }

    /// The run becomes a balanced tree over the same slots (the run's
    /// order is the tree's in-order); the arena's spare slots become the
    /// free list.
    fn build_tree(&mut self) {
        let len = self.len as Slot;
        self.root = self.build(1, len);
        self.first = if len > 0 { 1 } else { NIL };
        self.free = NIL;
        for x in (len as usize + 1..self.nodes.len()).rev() {
            self.release(x as Slot);
        }
        self.tree = true;
    }

    /// Links slots lo..=hi (in order) as a balanced subtree; its root.
    fn build(&mut self, lo: Slot, hi: Slot) -> Slot {
        if lo > hi {
            return NIL;
        }
        let mid = lo + (hi - lo) / 2;
        let l = self.build(lo, mid - 1);
        let r = self.build(mid + 1, hi);
        let node = &mut self.nodes[mid as usize];
        node.left = l;
        node.right = r;
        self.update(mid);
        mid
    }

    /// The tree (of RUN_AGAIN entries) becomes a run in slots 1..=len.
    fn flatten(&mut self) {
        let mut run = [Node::SENTINEL; RUN_AGAIN];
        let mut it = Iter {
            nodes: &self.nodes,
            stack: [NIL; MAX_HEIGHT],
            top: 0,
            run: 0..0,
        };
        it.push_left(self.root);
        let mut len = 0;
        while let Some(n) = it.next_slot() {
            run[len] = self.nodes[n as usize];
            len += 1;
        }
        debug_assert_eq!(len, self.len as usize);
        self.nodes[1..1 + len].copy_from_slice(&run[..len]);
        self.root = NIL;
        self.free = NIL;
        self.first = if len > 0 { 1 } else { NIL };
        self.tree = false;
    }

    /// A slot for a new node (from the free list, else a new one).
    fn alloc(&mut self, key: Packed, vruntime: i64, slice: Nanos) -> Slot {
        let node = Node::leaf(key, vruntime, slice);
        if self.free != NIL {
            let x = self.free;
            self.free = self.nodes[x as usize].left;
            self.nodes[x as usize] = node;
            x
        } else {
            let x = self.nodes.len() as Slot;
            assert!(x != NIL, "timeline: more than 2^32 - 1 entries");
            self.nodes.push(node);
            x
        }
    }

    /// Returns slot `x` to the free list.
    fn release(&mut self, x: Slot) {
        let node = &mut self.nodes[x as usize];
        node.left = self.free;
        node.right = NIL;
        node.height = 0;
        self.free = x;
    }

    fn leftmost(&self, mut n: Slot) -> Slot {
        if n == NIL {
            return NIL;
        }
        loop {
            let l = self.nodes[n as usize].left;
            if l == NIL {
                return n;
            }
            n = l;
        }
    }

    #[inline]
    fn height(&self, n: Slot) -> i64 {
        self.nodes[n as usize].height as i64
    }

    /// Recomputes `n`'s height and subtree minima from its children (the
    /// augmented callback).
    #[inline]
    fn update(&mut self, n: Slot) {
        let (l, r) = {
            let node = &self.nodes[n as usize];
            (node.left as usize, node.right as usize)
        };
        let (ln, rn) = (&self.nodes[l], &self.nodes[r]);
        let height = 1 + ln.height.max(rn.height);
        let min_v = ln.min_vruntime.min(rn.min_vruntime);
        let min_s = ln.min_slice.min(rn.min_slice);
        let node = &mut self.nodes[n as usize];
        node.height = height;
        node.min_vruntime = node.vruntime.min(min_v);
        node.min_slice = node.slice.min(min_s);
    }

    fn rotate_right(&mut self, n: Slot) -> Slot {
        let l = self.nodes[n as usize].left;
        self.nodes[n as usize].left = self.nodes[l as usize].right;
        self.nodes[l as usize].right = n;
        self.update(n);
        self.update(l);
        l
    }

    fn rotate_left(&mut self, n: Slot) -> Slot {
        let r = self.nodes[n as usize].right;
        self.nodes[n as usize].right = self.nodes[r as usize].left;
        self.nodes[r as usize].left = n;
        self.update(n);
        self.update(r);
        r
    }

    /// Restores the AVL balance at `n` (children balanced, heights
    /// differing by at most 2) and its augmented fields; the subtree's
    /// new root.
    fn rebalance(&mut self, n: Slot) -> Slot {
        let (l, r) = {
            let node = &self.nodes[n as usize];
            (node.left, node.right)
        };
        let bf = self.height(l) - self.height(r);
        if bf > 1 {
            let ln = &self.nodes[l as usize];
            if self.height(ln.left) < self.height(ln.right) {
                let nl = self.rotate_left(l);
                self.nodes[n as usize].left = nl;
            }
            return self.rotate_right(n);
        }
        if bf < -1 {
            let rn = &self.nodes[r as usize];
            if self.height(rn.right) < self.height(rn.left) {
                let nr = self.rotate_right(r);
                self.nodes[n as usize].right = nr;
            }
            return self.rotate_left(n);
        }
        self.update(n);
        n
    }

    /// Links `sub` where `path` left off at depth `d`: as the root, or
    /// as the child of `path`'s node `d - 1` on the side taken there.
    #[inline]
    fn set_child(&mut self, path: &Path, d: usize, sub: Slot) {
        if d == 0 {
            self.root = sub;
        } else {
            let p = &mut self.nodes[path.slot[d - 1] as usize];
            if path.went_right(d - 1) {
                p.right = sub;
            } else {
                p.left = sub;
            }
        }
    }

    /// The insertion: down to a free leaf position, then back up while
    /// something changes (a subtree's height, or its minima lowered by
    /// the new entry), with at most one rebalancing (after which the
    /// subtree has its old height again).
    fn insert_node(&mut self, key: Packed, vruntime: i64, slice: Nanos) -> bool {
        let mut path = Path::new();
        let mut n = self.root;
        while n != NIL {
            let node = &self.nodes[n as usize];
            let right = match key.cmp(&node.key) {
                Ordering::Less => false,
                Ordering::Greater => true,
                Ordering::Equal => return false,
            };
            path.push(n, right);
            n = if right { node.right } else { node.left };
        }
        let x = self.alloc(key, vruntime, slice);
        self.len += 1;
        if self.first == NIL || key < self.nodes[self.first as usize].key {
            self.first = x;
        }
        self.set_child(&path, path.len, x);
        let mut grew = true;
        let mut d = path.len;
        while d > 0 {
            d -= 1;
            let p = path.slot[d];
            let node = &mut self.nodes[p as usize];
            let lowered = vruntime < node.min_vruntime || slice < node.min_slice;
            node.min_vruntime = node.min_vruntime.min(vruntime);
            node.min_slice = node.min_slice.min(slice);
            if grew {
                let (l, r, old) = (node.left, node.right, node.height);
                let (hl, hr) = (self.nodes[l as usize].height, self.nodes[r as usize].height);
                if hl.abs_diff(hr) > 1 {
                    let top = self.rebalance(p);
                    self.set_child(&path, d, top);
                    grew = false;
                } else {
                    let h = 1 + hl.max(hr);
                    self.nodes[p as usize].height = h;
                    grew = h != old;
                }
            }
            if !grew && !lowered {
                break;
            }
        }
        true
    }

    /// The removal: the node leaves, its successor takes its place if it
    /// had two children, then back up recomputing heights and minima
    /// (rebalancing where needed) until a subtree is as it was. The other
    /// nodes keep their slots. The removed entry's slice, None if absent.
    fn remove_node(&mut self, key: Packed) -> Option<Nanos> {
        let mut path = Path::new();
        let mut z = self.root;
        loop {
            if z == NIL {
                return None;
            }
            let node = &self.nodes[z as usize];
            match key.cmp(&node.key) {
                Ordering::Less => {
                    path.push(z, false);
                    z = node.left;
                }
                Ordering::Greater => {
                    path.push(z, true);
                    z = node.right;
                }
                Ordering::Equal => break,
            }
        }
        let zn = &self.nodes[z as usize];
        let (zl, zr, slice) = (zn.left, zn.right, zn.slice);
        if z == self.first {
            // The leftmost has no left child; its successor is the least
            // of its right subtree, else its parent.
            self.first = if zr != NIL {
                self.leftmost(zr)
            } else if path.len > 0 {
                path.slot[path.len - 1]
            } else {
                NIL
            };
        }
        // Nodes deeper than `floor` may be left as they are only once the
        // walk up has passed it (the successor's old stats are z's).
        let floor;
        if zl == NIL || zr == NIL {
            self.set_child(&path, path.len, if zl == NIL { zr } else { zl });
            floor = path.len;
        } else {
            // The successor y (least of the right subtree) is unlinked
            // and takes z's place, z's height and minima.
            floor = path.len;
            path.push(z, true);
            let mut y = zr;
            loop {
                let l = self.nodes[y as usize].left;
                if l == NIL {
                    break;
                }
                path.push(y, false);
                y = l;
            }
            let yr = self.nodes[y as usize].right;
            self.set_child(&path, path.len, yr);
            let zn = &self.nodes[z as usize];
            let (l, r, h, mv, ms) = (zn.left, zn.right, zn.height, zn.min_vruntime, zn.min_slice);
            let yn = &mut self.nodes[y as usize];
            yn.left = l;
            yn.right = r;
            yn.height = h;
            yn.min_vruntime = mv;
            yn.min_slice = ms;
            path.slot[floor] = y;
            self.set_child(&path, floor, y);
        }
        let mut d = path.len;
        while d > 0 {
            d -= 1;
            let p = path.slot[d];
            let pn = &self.nodes[p as usize];
            let old = (pn.height, pn.min_vruntime, pn.min_slice);
            let top = self.rebalance(p);
            if top != p {
                self.set_child(&path, d, top);
            }
            let tn = &self.nodes[top as usize];
            if d <= floor && (tn.height, tn.min_vruntime, tn.min_slice) == old {
                break;
            }
        }
        self.len -= 1;
        self.release(z);
        Some(slice)
    }

    /// Checks the subtree at `n`, all of whose keys must lie strictly
    /// between `lo` and `hi`; (its node count, its height).
    fn validate_at(
        &self,
        n: Slot,
        lo: Option<Packed>,
        hi: Option<Packed>,
    ) -> Result<(usize, u32), String> {
        if n == NIL {
            return Ok((0, 0));
        }
        let node = self
            .nodes
            .get(n as usize)
            .ok_or_else(|| format!("timeline: slot {n} out of the arena"))?;
        if lo.is_some_and(|lo| node.key <= lo) || hi.is_some_and(|hi| node.key >= hi) {
            return Err(format!(
                "timeline: entry {:?} out of order",
                unpack(node.key)
            ));
        }
        let (nl, hl) = self.validate_at(node.left, lo, Some(node.key))?;
        let (nr, hr) = self.validate_at(node.right, Some(node.key), hi)?;
        let (ln, rn) = (
            &self.nodes[node.left as usize],
            &self.nodes[node.right as usize],
        );
        let height = 1 + hl.max(hr);
        if node.height != height || hl.abs_diff(hr) > 1 {
            return Err(format!(
                "timeline: entry {:?} has height {} (children {hl}, {hr})",
                unpack(node.key),
                node.height
            ));
        }
        let min_v = node.vruntime.min(ln.min_vruntime).min(rn.min_vruntime);
        let min_s = node.slice.min(ln.min_slice).min(rn.min_slice);
        if (node.min_vruntime, node.min_slice) != (min_v, min_s) {
            return Err(format!(
                "timeline: entry {:?} caches minima ({}, {}) of a subtree with ({min_v}, {min_s})",
                unpack(node.key),
                node.min_vruntime,
                node.min_slice
            ));
        }
        Ok((1 + nl + nr, height))
    }
}

/// The nodes from the root down to where an operation works, and the
/// side taken at each.
struct Path {
    slot: [Slot; MAX_HEIGHT],
    /// Bit d: went right at depth d.
    right: u64,
    len: usize,
}

impl Path {
    #[inline]
    fn new() -> Self {
        Path {
            slot: [NIL; MAX_HEIGHT],
            right: 0,
            len: 0,
        }
    }

    #[inline]
    fn push(&mut self, n: Slot, right: bool) {
        self.slot[self.len] = n;
        self.right |= (right as u64) << self.len;
        self.len += 1;
    }

    #[inline]
    fn went_right(&self, d: usize) -> bool {
        self.right >> d & 1 != 0
    }
}

/// In-order iterator over a [`Timeline`].
pub struct Iter<'a> {
    nodes: &'a [Node],
    /// The nodes whose left subtree is being visited, innermost last.
    stack: [Slot; MAX_HEIGHT],
    top: usize,
    /// A run's slots still to visit (empty for a tree).
    run: std::ops::Range<Slot>,
}

impl Iter<'_> {
    #[inline]
    fn push_left(&mut self, mut n: Slot) {
        while n != NIL {
            self.stack[self.top] = n;
            self.top += 1;
            n = self.nodes[n as usize].left;
        }
    }

    #[inline]
    fn next_slot(&mut self) -> Option<Slot> {
        if let Some(n) = self.run.next() {
            return Some(n);
        }
        if self.top == 0 {
            return None;
        }
        self.top -= 1;
        let n = self.stack[self.top];
        self.push_left(self.nodes[n as usize].right);
        Some(n)
    }
}

impl Iterator for Iter<'_> {
    type Item = TimelineKey;
    #[inline]
    fn next(&mut self) -> Option<TimelineKey> {
        let n = self.next_slot()?;
        Some(unpack(self.nodes[n as usize].key))
    }
}

impl<'a> IntoIterator for &'a Timeline {
    type Item = TimelineKey;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}
